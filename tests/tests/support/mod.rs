//! Modules shared by the integration tests of this package (each test
//! binary that declares `mod support;` compiles all of them).

pub mod group_consumer;
