//! The producer end to end against brokers a test scripts (quinn's
//! `src/tests/`): each file one concern, each test one scenario. Tests of
//! one module stay beside it (`mod tests`); the tests in `producer/tests/`
//! use only the public interface.

mod growth_peer;
mod ordering_peer;
mod saturation_peer;
mod txn_coordinator_peer;

use std::time::Duration;

/// Waits for a condition the producer's tasks make true.
pub(super) async fn until(what: &str, mut cond: impl FnMut() -> bool) {
    tokio::time::timeout(Duration::from_secs(10), async {
        while !cond() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("timed out waiting until {what}"));
}
