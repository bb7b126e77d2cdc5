//! The transaction-timeout policy of a
//! [`TwoPhaseCommitSink`](super::TwoPhaseCommitSink):
//!
//! 1. warn when a transaction has been open for more than a share of the
//!    timeout ([`DEFAULT_TIMEOUT_WARNING_RATIO`] unless set);
//! 2. optionally, log instead of return the commit failures of
//!    transactions older than the timeout.

use std::fmt;
use std::time::Duration;

/// The default ratio of the transaction timeout after which a warning is
/// logged (Flink's Kafka producer uses 0.8).
pub const DEFAULT_TIMEOUT_WARNING_RATIO: f64 = 0.8;

/// The timeout settings of one sink.
#[derive(Debug, Clone, Copy)]
pub(super) struct TimeoutPolicy {
    /// The transaction timeout, if one is set.
    pub(super) timeout: Option<Duration>,
    /// The share of the timeout after which a warning is logged, if warnings are on.
    pub(super) warning_ratio: Option<f64>,
    /// Whether commit failures of transactions past the timeout are logged, not returned.
    pub(super) ignore_failures_after_timeout: bool,
}

impl TimeoutPolicy {
    pub(super) fn timeout_ms(&self) -> Option<u64> {
        self.timeout
            .map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX))
    }

    /// Logs and returns true when `elapsed` passed ratio × timeout.
    pub(super) fn warn_if_close(
        &self,
        txn: &dyn fmt::Debug,
        elapsed_ms: u64,
        during: &str,
    ) -> bool {
        let (Some(timeout), Some(ratio)) = (self.timeout_ms(), self.warning_ratio) else {
            return false;
        };
        let threshold = (timeout as f64 * ratio) as u64;
        if elapsed_ms > threshold {
            tracing::warn!(
                transaction = ?txn,
                elapsed_ms,
                timeout_ms = timeout,
                during,
                "transaction has been open for {elapsed_ms} ms; this is close to or even \
                 exceeding the transaction timeout of {timeout} ms"
            );
            true
        } else {
            false
        }
    }

    pub(super) fn past_timeout(&self, elapsed_ms: u64) -> bool {
        self.timeout_ms().is_some_and(|t| elapsed_ms > t)
    }
}
