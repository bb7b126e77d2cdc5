//! The producer end to end against brokers a test scripts (quinn's
//! `src/tests/`): each file one concern, each test one scenario. Tests of
//! one module stay beside it (`mod tests`); the tests in `producer/tests/`
//! use only the public interface.

mod ordering_peer;
mod growth_peer;
mod saturation_peer;
mod txn_coordinator_peer;
