//! Wall-clock time as a trait, so transaction-age checks are deterministic in
//! tests.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A source of wall-clock time in milliseconds since the Unix epoch.
///
/// ```
/// use kafka_sink::{Clock, ManualClock};
/// fn age_ms(clock: &dyn Clock, started_ms: u64) -> u64 {
///     clock.now_millis().saturating_sub(started_ms)
/// }
/// assert_eq!(age_ms(&ManualClock::new(5_000), 1_000), 4_000);
/// ```
///
/// Transaction start times are persisted in checkpoints and compared after a
/// restart (possibly in another process), so the clock is wall-clock
/// milliseconds since the Unix epoch, as in Flink's `TransactionHolder`.
///
/// ```
/// use kafka_sink::{Clock, ManualClock};
/// use std::time::Duration;
/// let clock = ManualClock::new(1_000);
/// clock.advance(Duration::from_millis(250));
/// assert_eq!(clock.now_millis(), 1_250);
/// ```
pub trait Clock: Send + Sync + fmt::Debug {
    /// The current time, in milliseconds since the Unix epoch.
    fn now_millis(&self) -> u64;
}

/// The system clock ([`SystemTime::now`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_millis(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
            .unwrap_or(0)
    }
}

/// A clock that only moves when told to; clones share the same time.
///
/// ```
/// use kafka_sink::{Clock, ManualClock};
/// let clock = ManualClock::new(0);
/// let shared = clock.clone();
/// clock.set_millis(42);
/// assert_eq!(shared.now_millis(), 42);
/// ```
#[derive(Debug, Clone, Default)]
pub struct ManualClock {
    /// The time in ms since the Unix epoch, shared by every clone.
    now: Arc<AtomicU64>,
}

impl ManualClock {
    /// A clock reading `start_millis`.
    ///
    /// ```
    /// use kafka_sink::{Clock, ManualClock};
    /// assert_eq!(ManualClock::new(1_700_000_000_000).now_millis(), 1_700_000_000_000);
    /// ```
    pub fn new(start_millis: u64) -> Self {
        ManualClock {
            now: Arc::new(AtomicU64::new(start_millis)),
        }
    }

    /// Moves the clock forward by `by` (saturating).
    pub fn advance(&self, by: Duration) {
        let by = u64::try_from(by.as_millis()).unwrap_or(u64::MAX);
        let _ = self
            .now
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |now| {
                Some(now.saturating_add(by))
            });
    }

    /// Sets the clock to `millis`.
    pub fn set_millis(&self, millis: u64) {
        self.now.store(millis, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_millis(&self) -> u64 {
        self.now.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_clock_is_after_2020() {
        assert!(SystemClock.now_millis() > 1_577_836_800_000);
    }

    #[test]
    fn manual_clock_saturates() {
        let c = ManualClock::new(u64::MAX - 1);
        c.advance(Duration::from_millis(5));
        assert_eq!(c.now_millis(), u64::MAX);
    }

    /// Invariant: `advance` moves the clock forward by the duration.
    #[test]
    fn manual_clock_advances_by_the_duration() {
        let c = ManualClock::new(1_000);
        c.advance(Duration::from_secs(2));
        assert_eq!(c.now_millis(), 3_000);
    }

    /// Invariant: `set_millis` may move the clock back.
    #[test]
    fn manual_clock_can_be_set_back() {
        let c = ManualClock::new(5_000);
        c.set_millis(100);
        assert_eq!(c.now_millis(), 100);
    }
}
