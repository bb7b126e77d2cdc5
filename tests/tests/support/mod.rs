//! Modules shared by the integration tests of this package (the modules of
//! the `integration` test binary).

pub mod brokers;
pub mod group_consumer;
pub mod mock_nemesis;
pub mod nemesis;
pub mod registry;
pub mod shared;
pub mod system_ca;
