//! Exponential backoff with jitter, as Java's `ExponentialBackoff`
//! (`reconnect.backoff.ms` 50, `reconnect.backoff.max.ms` 1000, multiplier 2,
//! jitter 0.2).

use std::time::Duration;

/// An exponential backoff policy.
///
/// `backoff(attempts)` = `min(initial * multiplier^attempts, max)` scaled by a
/// random factor in `[1 - jitter, 1 + jitter)`, then capped at `max`.
///
/// A retry loop sleeps `backoff(failures)` between attempts:
///
/// ```
/// use kafka_client::ExponentialBackoff;
/// use std::time::Duration;
///
/// let policy = ExponentialBackoff {
///     initial: Duration::from_millis(100),
///     max: Duration::from_secs(10),
///     ..ExponentialBackoff::default()
/// };
/// let mut failures = 0;
/// let answer = loop {
///     match try_once(failures) {
///         Ok(v) => break v,
///         Err(_) => {
///             let delay = policy.backoff(failures); // 100 ms, 200 ms, ... ±20%
///             assert!(delay <= policy.max);
///             // tokio::time::sleep(delay).await;
///             failures += 1;
///         }
///     }
/// };
/// assert_eq!(answer, 2);
/// # fn try_once(n: u32) -> Result<u32, ()> { if n < 2 { Err(()) } else { Ok(n) } }
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
    pub fn backoff(&self, attempts: u32) -> Duration {
        let factor = if self.jitter > 0.0 {
            1.0 - self.jitter + rand::random::<f64>() * 2.0 * self.jitter
        } else {
            1.0
        };
        self.backoff_with_factor(attempts, factor)
    }

    /// Deterministic form of [`Self::backoff`] with the random factor given.
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn reconnect_default_is_javas_and_the_default() {
        let b = ExponentialBackoff::reconnect_default();
        assert_eq!((b.initial, b.max), (ms(50), Duration::from_secs(1)));
        assert_eq!((b.multiplier, b.jitter), (2.0, 0.2));
        assert_eq!(b, ExponentialBackoff::default());
    }

    #[test]
    fn delay_doubles_per_failure_from_initial() {
        let b = ExponentialBackoff::reconnect_default();
        assert_eq!(b.backoff_with_factor(0, 1.0), ms(50));
        assert_eq!(b.backoff_with_factor(3, 1.0), ms(400));
    }

    #[test]
    fn delay_is_capped_at_max_even_with_the_highest_jitter() {
        let b = ExponentialBackoff::reconnect_default();
        assert_eq!(b.backoff_with_factor(10, 1.2), ms(1000));
        assert_eq!(b.backoff_with_factor(30, 1.2), ms(1000));
    }

    #[test]
    fn jitter_factor_scales_the_delay() {
        let b = ExponentialBackoff::reconnect_default();
        assert_eq!(b.backoff_with_factor(2, 0.8), ms(160));
    }

    #[test]
    fn without_jitter_backoff_is_exact() {
        let b = ExponentialBackoff {
            jitter: 0.0,
            ..ExponentialBackoff::reconnect_default()
        };
        assert_eq!(b.backoff(2), ms(200));
    }

    #[test]
    fn jittered_backoff_stays_within_the_jitter_band() {
        let b = ExponentialBackoff::reconnect_default();
        for _ in 0..100 {
            let d = b.backoff(1);
            assert!(d >= ms(80) && d <= ms(120), "{d:?}");
            let d = b.backoff(2);
            assert!(d >= ms(160) && d <= ms(240), "{d:?}");
        }
    }
}
