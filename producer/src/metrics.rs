//! In-process producer metrics, readable at any time with
//! [`crate::Producer::metrics`]. Disabled metrics cost one branch per update.
//!
//! # The `metrics` facade (cargo feature `metrics`)
//!
//! With the `metrics` feature of `kafka-producer` (forwarded by `kafka-sink`;
//! off by default), every update is also emitted through the `metrics`
//! facade crate to the recorder the application
//! installed (a Prometheus exporter, for example), in addition to the
//! snapshot. The names follow the Prometheus conventions (`_total` for
//! counters, base units), all carry a `client_id` label (`client.id`), and
//! nothing is emitted while the producer's metrics are off
//! (`metrics.enabled=false`, or the sink's `flink.disable-metrics`):
//!
//! | name | kind | meaning |
//! |---|---|---|
//! | [`kafka_producer_records_sent_total`](names::RECORDS_SENT) | counter | records acknowledged |
//! | [`kafka_producer_bytes_sent_total`](names::BYTES_SENT) | counter | encoded batch bytes acknowledged |
//! | [`kafka_producer_batches_sent_total`](names::BATCHES_SENT) | counter | batches acknowledged |
//! | [`kafka_producer_requests_total`](names::REQUESTS) | counter | Produce requests sent |
//! | [`kafka_producer_request_latency_seconds`](names::REQUEST_LATENCY) | histogram | Produce round trips |
//! | [`kafka_producer_retries_total`](names::RETRIES) | counter | batch retries |
//! | [`kafka_producer_errors_total`](names::ERRORS) | counter | errors, labels `error` (Kafka's name, e.g. `NOT_LEADER_OR_FOLLOWER`) and `code` |
//! | [`kafka_producer_epoch_bumps_total`](names::EPOCH_BUMPS) | counter | local epoch bumps (idempotence) |
//! | [`kafka_producer_batch_splits_total`](names::BATCH_SPLITS) | counter | batches the broker refused as too large, split and sent again |
//! | [`kafka_producer_transactions_committed_total`](names::TRANSACTIONS_COMMITTED) | counter | `commit_transaction` calls that succeeded |
//! | [`kafka_producer_transactions_aborted_total`](names::TRANSACTIONS_ABORTED) | counter | `abort_transaction` calls that succeeded |
//! | [`kafka_producer_transaction_commit_seconds`](names::TRANSACTION_COMMIT_LATENCY) | histogram | duration of successful `commit_transaction` calls (flush included) |
//!
//! Values go to the recorder installed when they are emitted (the facade
//! looks it up on each update), so install it at start-up; updates before
//! that are lost to it (the snapshot still has them).
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

use kafka_client::metrics::{Latency, MetricsBase};
use kafka_proto::ErrorCode;
use std::collections::BTreeMap;
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
    /// On or off, the errors by code and the facade's `client_id` label.
    base: MetricsBase,
    records_sent: AtomicU64,
    bytes_sent: AtomicU64,
    batches_sent: AtomicU64,
    requests: AtomicU64,
    retries: AtomicU64,
    in_flight: AtomicU64,
    buffer_used: AtomicU64,
    /// Produce round trips.
    request_latency: Latency,
    epoch_bumps: AtomicU64,
    batch_splits: AtomicU64,
    txn_aborts: AtomicU64,
    /// Successful `commit_transaction` calls (their count is the commits).
    commit_latency: Latency,
}

/// The names under which the cargo feature `metrics` emits the producer
/// metrics through the `metrics` facade (see the [module
/// documentation](self)). Every value carries a `client_id` label.
///
/// ```
/// use kafka_producer::metrics::names;
/// assert_eq!(names::RECORDS_SENT, "kafka_producer_records_sent_total");
/// assert_eq!(names::CLIENT_ID_LABEL, "client_id");
/// ```
pub mod names {
    /// The label with the producer's `client.id` on every value.
    pub const CLIENT_ID_LABEL: &str = kafka_client::metrics::CLIENT_ID_LABEL;
    /// Counter: records acknowledged (or written, with acks=0).
    pub const RECORDS_SENT: &str = "kafka_producer_records_sent_total";
    /// Counter: encoded batch bytes acknowledged.
    pub const BYTES_SENT: &str = "kafka_producer_bytes_sent_total";
    /// Counter: batches acknowledged.
    pub const BATCHES_SENT: &str = "kafka_producer_batches_sent_total";
    /// Counter: Produce requests sent.
    pub const REQUESTS: &str = "kafka_producer_requests_total";
    /// Histogram (seconds): Produce round trips.
    pub const REQUEST_LATENCY: &str = "kafka_producer_request_latency_seconds";
    /// Counter: batch retries.
    pub const RETRIES: &str = "kafka_producer_retries_total";
    /// Counter: partition-level and connection-level errors, labelled
    /// [`ERROR_LABEL`] (Kafka's name of the code) and [`CODE_LABEL`] (the
    /// number, which also tells unknown codes apart).
    pub const ERRORS: &str = "kafka_producer_errors_total";
    /// The label of [`ERRORS`] with Kafka's name of the error code.
    pub const ERROR_LABEL: &str = kafka_client::metrics::ERROR_LABEL;
    /// The label of [`ERRORS`] with the numeric error code.
    pub const CODE_LABEL: &str = kafka_client::metrics::CODE_LABEL;
    /// Counter: local epoch bumps (idempotence).
    pub const EPOCH_BUMPS: &str = "kafka_producer_epoch_bumps_total";
    /// Counter: batches the broker refused as too large (MESSAGE_TOO_LARGE),
    /// split and sent again.
    pub const BATCH_SPLITS: &str = "kafka_producer_batch_splits_total";
    /// Counter: transactions committed (`commit_transaction` succeeded).
    pub const TRANSACTIONS_COMMITTED: &str = "kafka_producer_transactions_committed_total";
    /// Counter: transactions aborted (`abort_transaction` succeeded).
    pub const TRANSACTIONS_ABORTED: &str = "kafka_producer_transactions_aborted_total";
    /// Histogram (seconds): successful `commit_transaction` calls, flush
    /// included.
    pub const TRANSACTION_COMMIT_LATENCY: &str = "kafka_producer_transaction_commit_seconds";
}

/// A point-in-time copy of [`Metrics`].
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
    /// Batches the broker refused as too large, split and sent again.
    pub batch_splits: u64,
    /// Transactions committed (`commit_transaction` succeeded).
    pub transactions_committed: u64,
    /// Transactions aborted (`abort_transaction` succeeded).
    pub transactions_aborted: u64,
    /// Average successful `commit_transaction` call (µs, flush included).
    pub commit_latency_avg_us: u64,
    /// Longest successful `commit_transaction` call (µs).
    pub commit_latency_max_us: u64,
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
        Self::with_client_id(enabled, "")
    }

    /// Metrics of the producer `client_id` (the `client_id` label of the
    /// values the `metrics` feature emits; [`Metrics::new`] leaves it empty).
    ///
    /// ```
    /// use kafka_producer::metrics::Metrics;
    /// let m = Metrics::with_client_id(true, "orders-app");
    /// m.record_sent(3, 300);
    /// assert_eq!(m.snapshot().records_sent, 3);
    /// ```
    pub fn with_client_id(enabled: bool, client_id: &str) -> Self {
        Self {
            base: MetricsBase::new(enabled, client_id, cfg!(feature = "metrics")),
            ..Default::default()
        }
    }

    /// True when recording.
    pub fn enabled(&self) -> bool {
        self.base.enabled()
    }

    /// A batch of `records` records, `bytes` bytes, was acknowledged.
    pub fn record_sent(&self, records: u64, bytes: u64) {
        self.base
            .add(&self.records_sent, names::RECORDS_SENT, records);
        self.base.add(&self.bytes_sent, names::BYTES_SENT, bytes);
        self.base.add(&self.batches_sent, names::BATCHES_SENT, 1);
    }

    /// A Produce request went out.
    pub fn request_sent(&self) {
        if self.enabled() {
            self.base.add(&self.requests, names::REQUESTS, 1);
            self.in_flight.fetch_add(1, Relaxed);
        }
    }

    /// A Produce request finished (any outcome).
    pub fn request_done(&self) {
        if self.enabled() {
            self.in_flight.fetch_sub(1, Relaxed);
        }
    }

    /// One Produce round trip took `d`.
    pub fn request_latency(&self, d: Duration) {
        if self.enabled() {
            self.request_latency.record(d);
            self.base.histogram(names::REQUEST_LATENCY, d);
        }
    }

    /// A batch is retried.
    pub fn retry(&self) {
        self.base.add(&self.retries, names::RETRIES, 1);
    }

    /// A batch refused as too large was split.
    pub fn batch_split(&self) {
        self.base.add(&self.batch_splits, names::BATCH_SPLITS, 1);
    }

    /// A local epoch bump happened.
    pub fn epoch_bump(&self) {
        self.base.add(&self.epoch_bumps, names::EPOCH_BUMPS, 1);
    }

    /// A `commit_transaction` call succeeded after `d`.
    pub fn transaction_committed(&self, d: Duration) {
        if self.enabled() {
            self.commit_latency.record(d);
            self.base.counter(names::TRANSACTIONS_COMMITTED, 1);
            self.base.histogram(names::TRANSACTION_COMMIT_LATENCY, d);
        }
    }

    /// An `abort_transaction` call succeeded.
    pub fn transaction_aborted(&self) {
        self.base
            .add(&self.txn_aborts, names::TRANSACTIONS_ABORTED, 1);
    }

    /// A partition answered `code`.
    pub fn error(&self, code: ErrorCode) {
        self.base.error(names::ERRORS, code);
    }

    /// Buffer bytes in use.
    pub fn set_buffer_used(&self, bytes: usize) {
        if self.enabled() {
            self.buffer_used.store(bytes as u64, Relaxed);
        }
    }

    /// A copy of every counter.
    pub fn snapshot(&self) -> MetricsSnapshot {
        MetricsSnapshot {
            records_sent: self.records_sent.load(Relaxed),
            bytes_sent: self.bytes_sent.load(Relaxed),
            batches_sent: self.batches_sent.load(Relaxed),
            requests: self.requests.load(Relaxed),
            retries: self.retries.load(Relaxed),
            in_flight_requests: self.in_flight.load(Relaxed),
            buffer_bytes_used: self.buffer_used.load(Relaxed),
            request_latency_avg_us: self.request_latency.avg_us(),
            request_latency_max_us: self.request_latency.max_us(),
            epoch_bumps: self.epoch_bumps.load(Relaxed),
            batch_splits: self.batch_splits.load(Relaxed),
            transactions_committed: self.commit_latency.count(),
            transactions_aborted: self.txn_aborts.load(Relaxed),
            commit_latency_avg_us: self.commit_latency.avg_us(),
            commit_latency_max_us: self.commit_latency.max_us(),
            errors_by_code: self.base.errors_by_code(),
        }
    }
}

#[cfg(all(test, feature = "metrics"))]
mod facade_tests {
    use super::*;
    use metrics_util::MetricKind;
    use metrics_util::debugging::{DebugValue, DebuggingRecorder};

    /// One emitted value: kind, name, labels, value.
    type Value = (MetricKind, String, Vec<(String, String)>, DebugValue);

    /// Every value `f` emitted, by name.
    fn emitted(f: impl FnOnce()) -> Vec<Value> {
        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        ::metrics::with_local_recorder(&recorder, f);
        let mut out: Vec<_> = snapshotter
            .snapshot()
            .into_vec()
            .into_iter()
            .map(|(key, _, _, value)| {
                let (kind, key) = key.into_parts();
                let labels = key
                    .labels()
                    .map(|l| (l.key().to_string(), l.value().to_string()))
                    .collect();
                (kind, key.name().to_string(), labels, value)
            })
            .collect();
        out.sort_by(|a, b| a.1.cmp(&b.1));
        out
    }

    fn client(id: &str) -> Vec<(String, String)> {
        vec![(names::CLIENT_ID_LABEL.to_string(), id.to_string())]
    }

    #[test]
    fn every_update_is_emitted_under_its_name_with_the_client_id() {
        let got = emitted(|| {
            let m = Metrics::with_client_id(true, "app-1");
            m.record_sent(10, 1000);
            m.record_sent(5, 500);
            m.request_sent();
            m.retry();
            m.epoch_bump();
            m.transaction_committed(Duration::from_millis(250));
            m.transaction_aborted();
        });
        let counters: Vec<(String, u64)> = got
            .iter()
            .filter_map(|(kind, name, labels, v)| {
                assert_eq!(labels, &client("app-1"), "{name}");
                match (kind, v) {
                    (MetricKind::Counter, DebugValue::Counter(c)) => Some((name.clone(), *c)),
                    _ => None,
                }
            })
            .collect();
        let want = [
            (names::BATCHES_SENT, 2),
            (names::BYTES_SENT, 1500),
            (names::EPOCH_BUMPS, 1),
            (names::RECORDS_SENT, 15),
            (names::REQUESTS, 1),
            (names::RETRIES, 1),
            (names::TRANSACTIONS_ABORTED, 1),
            (names::TRANSACTIONS_COMMITTED, 1),
        ];
        let want: Vec<(String, u64)> = want.iter().map(|(n, c)| (n.to_string(), *c)).collect();
        assert_eq!(counters, want);
        let commit = got
            .iter()
            .find(|(_, name, _, _)| name == names::TRANSACTION_COMMIT_LATENCY)
            .expect("commit latency histogram");
        match &commit.3 {
            DebugValue::Histogram(h) => {
                let secs: Vec<f64> = h.iter().map(|x| x.into_inner()).collect();
                assert_eq!(secs, [0.25]);
            }
            other => panic!("not a histogram: {other:?}"),
        }
    }

    #[test]
    fn errors_carry_the_kafka_name_and_the_code_even_unknown() {
        let got = emitted(|| {
            let m = Metrics::with_client_id(true, "app-2");
            m.error(ErrorCode::NotLeaderOrFollower);
            m.error(ErrorCode::from(-999));
        });
        let errors: Vec<&Vec<(String, String)>> = got
            .iter()
            .filter(|(_, name, _, v)| name == names::ERRORS && *v == DebugValue::Counter(1))
            .map(|(_, _, labels, _)| labels)
            .collect();
        let label = |error: &str, code: &str| {
            let mut l = client("app-2");
            l.push((names::ERROR_LABEL.into(), error.into()));
            l.push((names::CODE_LABEL.into(), code.into()));
            l
        };
        assert_eq!(errors.len(), 2, "{got:?}");
        assert!(
            errors.contains(&&label("NOT_LEADER_OR_FOLLOWER", "6")),
            "{got:?}"
        );
        assert!(errors.contains(&&label("UNKNOWN_CODE", "-999")), "{got:?}");
    }

    #[test]
    fn disabled_metrics_emit_nothing() {
        let got = emitted(|| {
            let m = Metrics::with_client_id(false, "off");
            m.record_sent(10, 1000);
            m.request_latency(Duration::from_millis(1));
            m.error(ErrorCode::NetworkException);
            m.transaction_committed(Duration::from_millis(1));
        });
        assert!(got.is_empty(), "{got:?}");
    }
}

#[cfg(test)]
mod tests {

    /// Errors are counted by their code, beside the retries.
    #[test]
    fn errors_are_counted_by_code() {
        use crate::metrics::Metrics;
        use kafka_proto::ErrorCode;
        let m = Metrics::new(true);
        m.error(ErrorCode::NotLeaderOrFollower);
        m.retry();
        let s = m.snapshot();
        assert_eq!(s.retries, 1);
        assert_eq!(
            s.errors_by_code.get(&ErrorCode::NotLeaderOrFollower.code()),
            Some(&1)
        );
    }

    /// Metrics record only when enabled; the default is off.
    #[test]
    fn metrics_are_off_by_default() {
        use crate::metrics::Metrics;
        assert!(Metrics::new(true).enabled());
        assert!(!Metrics::default().enabled());
    }

    /// Acknowledged batches add up their records, bytes and count.
    #[test]
    fn acknowledged_batches_add_up() {
        use crate::metrics::Metrics;
        let m = Metrics::new(true);
        m.record_sent(10, 1000);
        m.record_sent(5, 400);
        let s = m.snapshot();
        assert_eq!(
            (s.records_sent, s.bytes_sent, s.batches_sent),
            (15, 1400, 2)
        );
    }

    /// A request sent is counted and in flight.
    #[test]
    fn a_sent_request_is_in_flight() {
        use crate::metrics::Metrics;
        let m = Metrics::new(true);
        m.request_sent();
        assert_eq!(
            (m.snapshot().requests, m.snapshot().in_flight_requests),
            (1, 1)
        );
    }

    /// A finished request is no longer in flight.
    #[test]
    fn a_finished_request_leaves_the_in_flight_count() {
        use crate::metrics::Metrics;
        let m = Metrics::new(true);
        m.request_sent();
        m.request_done();
        assert_eq!(m.snapshot().in_flight_requests, 0);
    }

    /// Request latency keeps the mean and the maximum.
    #[test]
    fn request_latency_keeps_the_mean_and_the_max() {
        use crate::metrics::Metrics;
        use std::time::Duration;
        let m = Metrics::new(true);
        m.request_latency(Duration::from_millis(2));
        m.request_latency(Duration::from_millis(4));
        let s = m.snapshot();
        assert_eq!(
            (s.request_latency_avg_us, s.request_latency_max_us),
            (3000, 4000)
        );
    }

    /// Each retry is counted.
    #[test]
    fn retries_are_counted() {
        use crate::metrics::Metrics;
        let m = Metrics::new(true);
        m.retry();
        assert_eq!(m.snapshot().retries, 1);
    }

    /// Each local epoch bump is counted.
    #[test]
    fn epoch_bumps_are_counted() {
        use crate::metrics::Metrics;
        let m = Metrics::new(true);
        m.epoch_bump();
        assert_eq!(m.snapshot().epoch_bumps, 1);
    }

    /// Commits are counted, with their mean and maximum latency.
    #[test]
    fn commits_are_counted_with_their_latency() {
        use crate::metrics::Metrics;
        use std::time::Duration;
        let m = Metrics::new(true);
        m.transaction_committed(Duration::from_millis(20));
        m.transaction_committed(Duration::from_millis(40));
        let s = m.snapshot();
        assert_eq!(s.transactions_committed, 2);
        assert_eq!(
            (s.commit_latency_avg_us, s.commit_latency_max_us),
            (30_000, 40_000)
        );
    }

    /// Each abort is counted.
    #[test]
    fn aborts_are_counted() {
        use crate::metrics::Metrics;
        let m = Metrics::new(true);
        m.transaction_aborted();
        assert_eq!(m.snapshot().transactions_aborted, 1);
    }

    /// The same error twice counts twice under its code.
    #[test]
    fn repeated_errors_add_up_per_code() {
        use crate::metrics::Metrics;
        use kafka_proto::ErrorCode;
        let m = Metrics::new(true);
        m.error(ErrorCode::NetworkException);
        m.error(ErrorCode::NetworkException);
        assert_eq!(m.snapshot().errors_by_code[&13], 2);
    }

    /// Buffer use is a gauge: the last value set.
    #[test]
    fn buffer_use_is_a_gauge() {
        use crate::metrics::Metrics;
        let m = Metrics::new(true);
        m.set_buffer_used(16_384);
        assert_eq!(m.snapshot().buffer_bytes_used, 16_384);
    }

    /// A fresh producer's snapshot is all zero.
    #[test]
    fn a_fresh_snapshot_is_all_zero() {
        use crate::metrics::{Metrics, MetricsSnapshot};
        assert_eq!(Metrics::new(true).snapshot(), MetricsSnapshot::default());
    }
}
