//! The producer end to end against brokers a test scripts (quinn's
//! `src/tests/`): each file one concern, each test one scenario. Tests of
//! one module stay beside it (`mod tests`); the tests in `producer/tests/`
//! use only the public interface.

mod growth_peer;
mod ordering_peer;
mod saturation_peer;
mod txn_coordinator_peer;
