//! Modules shared by the integration tests of this package (the modules of
//! the `integration` test binary).

pub mod group_consumer;
pub mod nemesis;
pub mod shared;
