//! Exponential backoff with jitter, as Java's `ExponentialBackoff`
//! (`reconnect.backoff.ms` 50, `reconnect.backoff.max.ms` 1000, multiplier 2,
//! jitter 0.2).

use std::time::Duration;

/// An exponential backoff policy.
///
/// `backoff(attempts)` = `min(initial * multiplier^attempts, max)` scaled by a
/// random factor in `[1 - jitter, 1 + jitter)`, then capped at `max`.
///
/// ```
/// use kafka_client::ExponentialBackoff;
/// use std::time::Duration;
/// let b = ExponentialBackoff::reconnect_default();
/// assert_eq!(b.backoff_with_factor(0, 1.0), Duration::from_millis(50));
/// assert_eq!(b.backoff_with_factor(3, 1.0), Duration::from_millis(400));
/// assert_eq!(b.backoff_with_factor(30, 1.2), Duration::from_millis(1000));
/// let d = b.backoff(1);
/// assert!(d >= Duration::from_millis(80) && d <= Duration::from_millis(120));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExponentialBackoff {
    /// First backoff.
    pub initial: Duration,
    /// Growth factor per failed attempt.
    pub multiplier: f64,
    /// Upper bound.
    pub max: Duration,
    /// Relative jitter, 0.0 for none.
    pub jitter: f64,
}

impl ExponentialBackoff {
    /// Java's reconnect defaults: 50 ms, ×2, max 1 s, jitter 0.2.
    ///
    /// ```
    /// use kafka_client::ExponentialBackoff;
    /// use std::time::Duration;
    /// let b = ExponentialBackoff::reconnect_default();
    /// assert_eq!((b.initial, b.max), (Duration::from_millis(50), Duration::from_secs(1)));
    /// assert_eq!(b, ExponentialBackoff::default());
    /// ```
    pub fn reconnect_default() -> Self {
        Self {
            initial: Duration::from_millis(50),
            multiplier: 2.0,
            max: Duration::from_millis(1000),
            jitter: 0.2,
        }
    }

    /// The delay before attempt number `attempts + 1` (after `attempts`
    /// consecutive failures), with a fresh random jitter.
    ///
    /// ```
    /// use kafka_client::ExponentialBackoff;
    /// use std::time::Duration;
    /// let b = ExponentialBackoff { jitter: 0.0, ..ExponentialBackoff::reconnect_default() };
    /// assert_eq!(b.backoff(2), Duration::from_millis(200)); // 50 ms × 2²
    /// let jittered = ExponentialBackoff::reconnect_default().backoff(2);
    /// assert!(jittered >= Duration::from_millis(160) && jittered <= Duration::from_millis(240));
    /// ```
    pub fn backoff(&self, attempts: u32) -> Duration {
        let factor = if self.jitter > 0.0 {
            1.0 - self.jitter + rand::random::<f64>() * 2.0 * self.jitter
        } else {
            1.0
        };
        self.backoff_with_factor(attempts, factor)
    }

    /// Deterministic form of [`Self::backoff`] with the random factor given.
    ///
    /// ```
    /// use kafka_client::ExponentialBackoff;
    /// use std::time::Duration;
    /// let b = ExponentialBackoff::reconnect_default();
    /// assert_eq!(b.backoff_with_factor(2, 0.8), Duration::from_millis(160)); // lowest jitter
    /// assert_eq!(b.backoff_with_factor(10, 1.2), Duration::from_secs(1)); // capped at max
    /// ```
    pub fn backoff_with_factor(&self, attempts: u32, factor: f64) -> Duration {
        let initial = self.initial.as_secs_f64();
        let max = self.max.as_secs_f64();
        if initial <= 0.0 {
            return Duration::ZERO;
        }
        let exp_max = if self.multiplier > 1.0 && max > initial {
            (max / initial).ln() / self.multiplier.ln()
        } else {
            0.0
        };
        let exp = f64::from(attempts).min(exp_max);
        let term = initial * self.multiplier.powf(exp);
        let v = (term * factor).min(max).max(0.0);
        Duration::from_nanos((v * 1e9).round() as u64)
    }
}

impl Default for ExponentialBackoff {
    fn default() -> Self {
        Self::reconnect_default()
    }
}
