//! Modules shared by the integration tests of this package. Each test
//! binary that declares `mod support;` compiles all of them and uses some:
//! what one binary leaves unused is not dead code.
#![allow(dead_code)]

pub mod group_consumer;
pub mod shared;
