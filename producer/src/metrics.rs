//! In-process producer metrics, readable at any time with
//! [`crate::Producer::metrics`]. Disabled metrics cost one branch per update.
//!
//! ```
//! use kafka_producer::metrics::Metrics;
//! let m = Metrics::new(true);
//! m.record_sent(10, 1000);
//! m.request_latency(std::time::Duration::from_millis(3));
//! let s = m.snapshot();
//! assert_eq!((s.records_sent, s.bytes_sent, s.batches_sent), (10, 1000, 1));
//! assert_eq!(s.request_latency_max_us, 3000);
//! ```

use kafka_proto::ErrorCode;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// Counters of one producer.
///
/// ```
/// use kafka_producer::metrics::Metrics;
/// let m = Metrics::new(true);
/// m.request_sent();
/// m.record_sent(500, 64 * 1024);
/// m.request_done();
/// let s = m.snapshot();
/// assert_eq!((s.requests, s.in_flight_requests, s.records_sent), (1, 0, 500));
/// ```
#[derive(Debug, Default)]
pub struct Metrics {
    enabled: bool,
    records_sent: AtomicU64,
    bytes_sent: AtomicU64,
    batches_sent: AtomicU64,
    requests: AtomicU64,
    retries: AtomicU64,
    in_flight: AtomicU64,
    buffer_used: AtomicU64,
    latency_sum_us: AtomicU64,
    latency_count: AtomicU64,
    latency_max_us: AtomicU64,
    epoch_bumps: AtomicU64,
    errors: Mutex<BTreeMap<i16, u64>>,
}

/// A point-in-time copy of [`Metrics`].
///
/// ```
/// use kafka_producer::metrics::Metrics;
/// use kafka_proto::ErrorCode;
/// let m = Metrics::new(true);
/// m.error(ErrorCode::NotLeaderOrFollower);
/// m.retry();
/// let s = m.snapshot();
/// assert_eq!(s.retries, 1);
/// assert_eq!(s.errors_by_code.get(&ErrorCode::NotLeaderOrFollower.code()), Some(&1));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetricsSnapshot {
    /// Records acknowledged (or written, with acks=0).
    pub records_sent: u64,
    /// Encoded batch bytes acknowledged.
    pub bytes_sent: u64,
    /// Batches acknowledged.
    pub batches_sent: u64,
    /// Produce requests sent.
    pub requests: u64,
    /// Batch retries.
    pub retries: u64,
    /// Produce requests awaiting a response now.
    pub in_flight_requests: u64,
    /// Bytes of `buffer.memory` in use now.
    pub buffer_bytes_used: u64,
    /// Average Produce round trip (µs).
    pub request_latency_avg_us: u64,
    /// Largest Produce round trip (µs).
    pub request_latency_max_us: u64,
    /// Local epoch bumps (idempotence).
    pub epoch_bumps: u64,
    /// Partition-level and connection-level errors, by Kafka error code
    /// (`ErrorCode::from(code)` names it; connection failures count as
    /// NETWORK_EXCEPTION, 13).
    pub errors_by_code: BTreeMap<i16, u64>,
}

impl Metrics {
    /// Metrics, on or off.
    ///
    /// ```
    /// use kafka_producer::metrics::Metrics;
    /// let off = Metrics::new(false); // `metrics.enabled=false`
    /// off.record_sent(10, 1000);
    /// assert_eq!(off.snapshot().records_sent, 0);
    /// ```
    pub fn new(enabled: bool) -> Self {
        Self {
            enabled,
            ..Default::default()
        }
    }

    /// True when recording.
    ///
    /// ```
    /// use kafka_producer::metrics::Metrics;
    /// assert!(Metrics::new(true).enabled());
    /// assert!(!Metrics::default().enabled());
    /// ```
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// A batch of `records` records, `bytes` bytes, was acknowledged.
    ///
    /// ```
    /// use kafka_producer::metrics::Metrics;
    /// let m = Metrics::new(true);
    /// m.record_sent(10, 1000);
    /// m.record_sent(5, 400);
    /// let s = m.snapshot();
    /// assert_eq!((s.records_sent, s.bytes_sent, s.batches_sent), (15, 1400, 2));
    /// ```
    pub fn record_sent(&self, records: u64, bytes: u64) {
        if self.enabled {
            self.records_sent.fetch_add(records, Relaxed);
            self.bytes_sent.fetch_add(bytes, Relaxed);
            self.batches_sent.fetch_add(1, Relaxed);
        }
    }

    /// A Produce request went out.
    ///
    /// ```
    /// use kafka_producer::metrics::Metrics;
    /// let m = Metrics::new(true);
    /// m.request_sent();
    /// assert_eq!((m.snapshot().requests, m.snapshot().in_flight_requests), (1, 1));
    /// ```
    pub fn request_sent(&self) {
        if self.enabled {
            self.requests.fetch_add(1, Relaxed);
            self.in_flight.fetch_add(1, Relaxed);
        }
    }

    /// A Produce request finished (any outcome).
    ///
    /// ```
    /// use kafka_producer::metrics::Metrics;
    /// let m = Metrics::new(true);
    /// m.request_sent();
    /// m.request_done();
    /// assert_eq!(m.snapshot().in_flight_requests, 0);
    /// ```
    pub fn request_done(&self) {
        if self.enabled {
            self.in_flight.fetch_sub(1, Relaxed);
        }
    }

    /// One Produce round trip took `d`.
    ///
    /// ```
    /// use kafka_producer::metrics::Metrics;
    /// use std::time::Duration;
    /// let m = Metrics::new(true);
    /// m.request_latency(Duration::from_millis(2));
    /// m.request_latency(Duration::from_millis(4));
    /// let s = m.snapshot();
    /// assert_eq!((s.request_latency_avg_us, s.request_latency_max_us), (3000, 4000));
    /// ```
    pub fn request_latency(&self, d: Duration) {
        if self.enabled {
            let us = d.as_micros() as u64;
            self.latency_sum_us.fetch_add(us, Relaxed);
            self.latency_count.fetch_add(1, Relaxed);
            self.latency_max_us.fetch_max(us, Relaxed);
        }
    }

    /// A batch is retried.
    ///
    /// ```
    /// use kafka_producer::metrics::Metrics;
    /// let m = Metrics::new(true);
    /// m.retry();
    /// assert_eq!(m.snapshot().retries, 1);
    /// ```
    pub fn retry(&self) {
        if self.enabled {
            self.retries.fetch_add(1, Relaxed);
        }
    }

    /// A local epoch bump happened.
    ///
    /// ```
    /// use kafka_producer::metrics::Metrics;
    /// let m = Metrics::new(true);
    /// m.epoch_bump();
    /// assert_eq!(m.snapshot().epoch_bumps, 1);
    /// ```
    pub fn epoch_bump(&self) {
        if self.enabled {
            self.epoch_bumps.fetch_add(1, Relaxed);
        }
    }

    /// A partition answered `code`.
    ///
    /// ```
    /// use kafka_producer::metrics::Metrics;
    /// use kafka_proto::ErrorCode;
    /// let m = Metrics::new(true);
    /// m.error(ErrorCode::NetworkException);
    /// m.error(ErrorCode::NetworkException);
    /// assert_eq!(m.snapshot().errors_by_code[&13], 2);
    /// ```
    pub fn error(&self, code: ErrorCode) {
        if self.enabled {
            *self
                .errors
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .entry(code.code())
                .or_default() += 1;
        }
    }

    /// Buffer bytes in use.
    ///
    /// ```
    /// use kafka_producer::metrics::Metrics;
    /// let m = Metrics::new(true);
    /// m.set_buffer_used(16_384);
    /// assert_eq!(m.snapshot().buffer_bytes_used, 16_384);
    /// ```
    pub fn set_buffer_used(&self, bytes: usize) {
        if self.enabled {
            self.buffer_used.store(bytes as u64, Relaxed);
        }
    }

    /// A copy of every counter.
    ///
    /// ```
    /// use kafka_producer::metrics::{Metrics, MetricsSnapshot};
    /// assert_eq!(Metrics::new(true).snapshot(), MetricsSnapshot::default());
    /// ```
    pub fn snapshot(&self) -> MetricsSnapshot {
        let n = self.latency_count.load(Relaxed);
        MetricsSnapshot {
            records_sent: self.records_sent.load(Relaxed),
            bytes_sent: self.bytes_sent.load(Relaxed),
            batches_sent: self.batches_sent.load(Relaxed),
            requests: self.requests.load(Relaxed),
            retries: self.retries.load(Relaxed),
            in_flight_requests: self.in_flight.load(Relaxed),
            buffer_bytes_used: self.buffer_used.load(Relaxed),
            request_latency_avg_us: self
                .latency_sum_us
                .load(Relaxed)
                .checked_div(n)
                .unwrap_or(0),
            request_latency_max_us: self.latency_max_us.load(Relaxed),
            epoch_bumps: self.epoch_bumps.load(Relaxed),
            errors_by_code: self
                .errors
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
        }
    }
}
