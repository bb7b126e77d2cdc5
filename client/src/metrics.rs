//! What the producer's and the consumer's metrics are built from: the
//! switch, the errors counted by code and the `client_id` label of
//! [`MetricsBase`], and round trips kept as a count, a mean and a maximum
//! ([`Latency`]). With the cargo feature `metrics`, a [`MetricsBase`] made to
//! emit also sends its values to the `metrics` facade crate, labelled with
//! the client's `client.id`; without it, or when metrics are off, nothing is
//! emitted.
//!
//! ```
//! use kafka_client::metrics::{Latency, MetricsBase};
//! use kafka_proto::ErrorCode;
//! use std::time::Duration;
//! let base = MetricsBase::new(true, "orders-app", false);
//! base.error("kafka_producer_errors_total", ErrorCode::NotLeaderOrFollower);
//! assert_eq!(base.errors_by_code()[&ErrorCode::NotLeaderOrFollower.code()], 1);
//! let round_trips = Latency::default();
//! round_trips.record(Duration::from_millis(2));
//! round_trips.record(Duration::from_millis(6));
//! assert_eq!(round_trips.count(), 2);
//! assert_eq!((round_trips.avg_us(), round_trips.max_us()), (4_000, 6_000));
//! ```

use kafka_proto::ErrorCode;
use std::collections::BTreeMap;
#[cfg(feature = "metrics")]
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// The label with the client's `client.id` on every emitted value.
pub const CLIENT_ID_LABEL: &str = "client_id";
/// The label of an error counter with Kafka's name of the error code.
pub const ERROR_LABEL: &str = "error";
/// The label of an error counter with the numeric error code.
pub const CODE_LABEL: &str = "code";

/// The part every client's metrics share: whether they record, the errors
/// by code, and where the facade's values go.
///
/// ```
/// use kafka_client::metrics::MetricsBase;
/// use kafka_proto::ErrorCode;
/// let off = MetricsBase::new(false, "orders-app", true);
/// off.error("kafka_consumer_errors_total", ErrorCode::OffsetOutOfRange);
/// assert!(!off.enabled());
/// assert!(off.errors_by_code().is_empty());
/// ```
#[derive(Debug, Default)]
pub struct MetricsBase {
    /// Off: nothing is counted nor emitted.
    enabled: bool,
    /// Errors by Kafka error code.
    errors: Mutex<BTreeMap<i16, u64>>,
    /// The `client_id` label of the facade's values; `None`: none are
    /// emitted.
    #[cfg(feature = "metrics")]
    facade: Option<Arc<str>>,
}

impl MetricsBase {
    /// Metrics on or off (`metrics.enabled`) of the client `client_id`,
    /// emitting to the `metrics` facade when `emit` (the calling crate's own
    /// `metrics` feature) and this crate's `metrics` feature are on.
    ///
    /// ```
    /// use kafka_client::metrics::MetricsBase;
    /// let m = MetricsBase::new(true, "billing", cfg!(feature = "metrics"));
    /// assert!(m.enabled());
    /// ```
    pub fn new(enabled: bool, client_id: &str, emit: bool) -> Self {
        #[cfg(not(feature = "metrics"))]
        let _ = (client_id, emit);
        Self {
            enabled,
            errors: Mutex::default(),
            #[cfg(feature = "metrics")]
            facade: (enabled && emit).then(|| Arc::from(client_id)),
        }
    }

    /// True when recording.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The `client_id` label, when values go to the facade.
    #[cfg(feature = "metrics")]
    pub fn facade_label(&self) -> Option<::metrics::SharedString> {
        self.facade.clone().map(::metrics::SharedString::from)
    }

    /// Adds `n` to `count` and to the facade's counter `name`, when
    /// recording.
    pub fn add(&self, count: &AtomicU64, name: &'static str, n: u64) {
        if self.enabled {
            count.fetch_add(n, Relaxed);
            self.counter(name, n);
        }
    }

    /// Adds `n` to the facade's counter `name`.
    pub fn counter(&self, name: &'static str, n: u64) {
        #[cfg(feature = "metrics")]
        if let Some(label) = self.facade_label() {
            ::metrics::counter!(name, CLIENT_ID_LABEL => label).increment(n);
        }
        #[cfg(not(feature = "metrics"))]
        let _ = (name, n);
    }

    /// Records `d` (in seconds) in the facade's histogram `name`.
    pub fn histogram(&self, name: &'static str, d: Duration) {
        #[cfg(feature = "metrics")]
        if let Some(label) = self.facade_label() {
            ::metrics::histogram!(name, CLIENT_ID_LABEL => label).record(d.as_secs_f64());
        }
        #[cfg(not(feature = "metrics"))]
        let _ = (name, d);
    }

    /// Counts an answer of `code`, and adds one to the facade's counter
    /// `name` labelled with the code's name ([`ERROR_LABEL`]) and number
    /// ([`CODE_LABEL`]).
    pub fn error(&self, name: &'static str, code: ErrorCode) {
        if !self.enabled {
            return;
        }
        *self
            .errors
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(code.code())
            .or_default() += 1;
        #[cfg(feature = "metrics")]
        if let Some(label) = self.facade_label() {
            ::metrics::counter!(
                name,
                CLIENT_ID_LABEL => label,
                ERROR_LABEL => code.name(),
                CODE_LABEL => code.code().to_string(),
            )
            .increment(1);
        }
        #[cfg(not(feature = "metrics"))]
        let _ = name;
    }

    /// The errors counted so far, by Kafka error code.
    pub fn errors_by_code(&self) -> BTreeMap<i16, u64> {
        self.errors
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// Round trips (or other durations): how many, their sum and the longest,
/// in microseconds.
///
/// ```
/// use kafka_client::metrics::Latency;
/// use std::time::Duration;
/// let commits = Latency::default();
/// assert_eq!((commits.count(), commits.avg_us()), (0, 0));
/// commits.record(Duration::from_millis(20));
/// commits.record(Duration::from_millis(40));
/// assert_eq!((commits.avg_us(), commits.max_us()), (30_000, 40_000));
/// ```
#[derive(Debug, Default)]
pub struct Latency {
    /// Durations recorded.
    count: AtomicU64,
    /// Their sum (µs), for the mean.
    sum_us: AtomicU64,
    /// The longest (µs).
    max_us: AtomicU64,
}

impl Latency {
    /// Records one duration.
    pub fn record(&self, d: Duration) {
        let us = d.as_micros() as u64;
        self.count.fetch_add(1, Relaxed);
        self.sum_us.fetch_add(us, Relaxed);
        self.max_us.fetch_max(us, Relaxed);
    }

    /// How many durations were recorded.
    pub fn count(&self) -> u64 {
        self.count.load(Relaxed)
    }

    /// Their mean (µs); 0 before the first.
    pub fn avg_us(&self) -> u64 {
        self.sum_us
            .load(Relaxed)
            .checked_div(self.count())
            .unwrap_or(0)
    }

    /// The longest (µs).
    pub fn max_us(&self) -> u64 {
        self.max_us.load(Relaxed)
    }
}
