//! The consumer's metrics: counters, gauges and latencies of a Reader
//! and of the group member around it.

use kafka_client::TopicPartition;
use kafka_client::metrics::{Latency, MetricsBase};
use kafka_proto::ErrorCode;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// Counters of one consumer (a [`crate::Reader`], or the Reader of a
/// [`crate::GroupConsumer`] with its group's counters), readable at any
/// time with [`crate::Reader::metrics`] and [`crate::GroupConsumer::metrics`].
/// Disabled metrics (`metrics.enabled=false`) cost one branch per update.
/// With the cargo feature `metrics`, every update also goes to the
/// `metrics` facade under the names of [`crate::metric_names`].
///
/// ```
/// use kafka_consumer::ConsumerMetrics;
/// use kafka_client::TopicPartition;
/// let m = ConsumerMetrics::new(true);
/// m.set_lag(&TopicPartition::new("orders", 0), 42);
/// assert_eq!(m.snapshot().lag[&TopicPartition::new("orders", 0)], 42);
/// ```
#[derive(Debug, Default)]
pub struct ConsumerMetrics {
    /// On or off (off: every update returns at once), the partition-level
    /// errors by code and the facade's `client_id` label.
    base: MetricsBase,
    /// Records returned to the application.
    records_consumed: AtomicU64,
    /// Record batch bytes fetched.
    bytes_consumed: AtomicU64,
    /// The round trips of the Fetch requests answered.
    fetch_latency: Latency,
    /// Positions moved by `auto.offset.reset`.
    offset_resets: AtomicU64,
    /// Positions moved back to a divergence point.
    log_truncations: AtomicU64,
    /// Assignments received.
    rebalances: AtomicU64,
    /// The durations of the offset commits that succeeded.
    commit_latency: Latency,
    /// Lag per partition, as last measured; a revoked partition is removed.
    lag: Mutex<BTreeMap<TopicPartition, i64>>,
}

/// The names under which the cargo feature `metrics` of `kafka-consumer`
/// (off by default) emits the consumer metrics through the `metrics`
/// facade crate, to the recorder the application installed (a Prometheus
/// exporter, for example), in addition to the snapshots. The names follow
/// the Prometheus conventions (`_total` for counters, base units), and
/// every value carries a `client_id` label (`client.id`):
///
/// | name | kind | meaning |
/// |---|---|---|
/// | [`kafka_consumer_records_consumed_total`](names::RECORDS_CONSUMED) | counter | records returned to the application (or buffered by a group member for its next polls) |
/// | [`kafka_consumer_bytes_consumed_total`](names::BYTES_CONSUMED) | counter | record batch bytes fetched |
/// | [`kafka_consumer_fetch_requests_total`](names::FETCH_REQUESTS) | counter | Fetch requests answered |
/// | [`kafka_consumer_fetch_latency_seconds`](names::FETCH_LATENCY) | histogram | Fetch round trips |
/// | [`kafka_consumer_records_lag`](names::RECORDS_LAG) | gauge | per partition (labels `topic`, `partition`): the end offset the last fetch saw (the last stable offset under read_committed, as Java's `records-lag`) minus the position |
/// | [`kafka_consumer_offset_resets_total`](names::OFFSET_RESETS) | counter | positions moved by `auto.offset.reset` (out of range) |
/// | [`kafka_consumer_log_truncations_total`](names::LOG_TRUNCATIONS) | counter | positions moved back to a divergence point (KIP-320) |
/// | [`kafka_consumer_rebalances_total`](names::REBALANCES) | counter | assignments a group member received |
/// | [`kafka_consumer_commits_total`](names::COMMITS) | counter | offset commits that succeeded |
/// | [`kafka_consumer_commit_latency_seconds`](names::COMMIT_LATENCY) | histogram | successful offset commits |
/// | [`kafka_consumer_errors_total`](names::ERRORS) | counter | partition-level errors, labels `error` (Kafka's name) and `code` |
///
/// ```
/// use kafka_consumer::metric_names;
/// assert_eq!(metric_names::RECORDS_LAG, "kafka_consumer_records_lag");
/// ```
pub mod names {
    /// The label with the consumer's `client.id` on every value.
    pub const CLIENT_ID_LABEL: &str = kafka_client::metrics::CLIENT_ID_LABEL;
    /// Counter: records returned to the application.
    pub const RECORDS_CONSUMED: &str = "kafka_consumer_records_consumed_total";
    /// Counter: record batch bytes fetched.
    pub const BYTES_CONSUMED: &str = "kafka_consumer_bytes_consumed_total";
    /// Counter: Fetch requests answered.
    pub const FETCH_REQUESTS: &str = "kafka_consumer_fetch_requests_total";
    /// Histogram (seconds): Fetch round trips.
    pub const FETCH_LATENCY: &str = "kafka_consumer_fetch_latency_seconds";
    /// Gauge: records between the position and the end offset the last
    /// fetch saw, labelled [`TOPIC_LABEL`] and [`PARTITION_LABEL`].
    pub const RECORDS_LAG: &str = "kafka_consumer_records_lag";
    /// The topic label of [`RECORDS_LAG`].
    pub const TOPIC_LABEL: &str = "topic";
    /// The partition label of [`RECORDS_LAG`].
    pub const PARTITION_LABEL: &str = "partition";
    /// Counter: positions moved by `auto.offset.reset`.
    pub const OFFSET_RESETS: &str = "kafka_consumer_offset_resets_total";
    /// Counter: positions moved back to a divergence point (KIP-320).
    pub const LOG_TRUNCATIONS: &str = "kafka_consumer_log_truncations_total";
    /// Counter: assignments a group member received.
    pub const REBALANCES: &str = "kafka_consumer_rebalances_total";
    /// Counter: offset commits that succeeded.
    pub const COMMITS: &str = "kafka_consumer_commits_total";
    /// Histogram (seconds): successful offset commits.
    pub const COMMIT_LATENCY: &str = "kafka_consumer_commit_latency_seconds";
    /// Counter: partition-level errors, labelled [`ERROR_LABEL`] and
    /// [`CODE_LABEL`].
    pub const ERRORS: &str = "kafka_consumer_errors_total";
    /// The label of [`ERRORS`] with Kafka's name of the error code.
    pub const ERROR_LABEL: &str = kafka_client::metrics::ERROR_LABEL;
    /// The label of [`ERRORS`] with the numeric error code.
    pub const CODE_LABEL: &str = kafka_client::metrics::CODE_LABEL;
}

/// A point-in-time copy of [`ConsumerMetrics`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConsumerMetricsSnapshot {
    /// Records returned to the application.
    pub records_consumed: u64,
    /// Record batch bytes fetched.
    pub bytes_consumed: u64,
    /// Fetch requests answered.
    pub fetch_requests: u64,
    /// Mean Fetch round trip (µs).
    pub fetch_latency_avg_us: u64,
    /// Longest Fetch round trip (µs).
    pub fetch_latency_max_us: u64,
    /// Positions moved by `auto.offset.reset` (out of range).
    pub offset_resets: u64,
    /// Positions moved back to a divergence point (KIP-320).
    pub log_truncations: u64,
    /// Assignments a group member received.
    pub rebalances: u64,
    /// Offset commits that succeeded.
    pub commits: u64,
    /// Mean successful commit (µs).
    pub commit_latency_avg_us: u64,
    /// Longest successful commit (µs).
    pub commit_latency_max_us: u64,
    /// Lag per partition read now: the end offset the last fetch saw (the
    /// last stable offset under read_committed) minus the position.
    pub lag: BTreeMap<TopicPartition, i64>,
    /// Partition-level errors by Kafka error code.
    pub errors_by_code: BTreeMap<i16, u64>,
}

impl ConsumerMetrics {
    /// Metrics, on or off (`metrics.enabled`).
    ///
    /// ```
    /// use kafka_consumer::ConsumerMetrics;
    /// let off = ConsumerMetrics::new(false);
    /// off.consumed(10);
    /// assert_eq!(off.snapshot().records_consumed, 0);
    /// ```
    pub fn new(enabled: bool) -> Self {
        Self::with_client_id(enabled, "")
    }

    /// Metrics of the consumer `client_id` (the `client_id` label of the
    /// values the `metrics` feature emits).
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

    /// A Fetch answer came after `latency`, with `batches_bytes` bytes of
    /// record batches (`records` of them decoded).
    pub fn fetched(&self, records: u64, batches_bytes: u64, latency: Duration) {
        if !self.enabled() {
            return;
        }
        let _ = records;
        self.fetch_latency.record(latency);
        self.base.counter(names::FETCH_REQUESTS, 1);
        self.base
            .add(&self.bytes_consumed, names::BYTES_CONSUMED, batches_bytes);
        self.base.histogram(names::FETCH_LATENCY, latency);
    }

    /// `records` records were returned to the application.
    pub fn consumed(&self, records: u64) {
        if records > 0 {
            self.base
                .add(&self.records_consumed, names::RECORDS_CONSUMED, records);
        }
    }

    /// The lag of `tp` is now `lag` records.
    pub fn set_lag(&self, tp: &TopicPartition, lag: i64) {
        if !self.enabled() {
            return;
        }
        let lag = lag.max(0);
        self.lag
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(tp.clone(), lag);
        #[cfg(feature = "metrics")]
        if let Some(label) = self.base.facade_label() {
            ::metrics::gauge!(
                names::RECORDS_LAG,
                names::CLIENT_ID_LABEL => label,
                names::TOPIC_LABEL => tp.topic.to_string(),
                names::PARTITION_LABEL => tp.partition.to_string(),
            )
            .set(lag as f64);
        }
    }

    /// `tp` is no longer read: its lag is forgotten.
    pub fn forget(&self, tp: &TopicPartition) {
        if self.enabled() {
            self.lag
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(tp);
        }
    }

    /// `auto.offset.reset` moved a position (out of range).
    pub fn offset_reset(&self) {
        self.base.add(&self.offset_resets, names::OFFSET_RESETS, 1);
    }

    /// A position moved back to a divergence point (KIP-320).
    pub fn log_truncation(&self) {
        self.base
            .add(&self.log_truncations, names::LOG_TRUNCATIONS, 1);
    }

    /// A group member received an assignment.
    pub fn rebalance(&self) {
        self.base.add(&self.rebalances, names::REBALANCES, 1);
    }

    /// An offset commit succeeded after `d`.
    pub fn committed(&self, d: Duration) {
        if self.enabled() {
            self.commit_latency.record(d);
            self.base.counter(names::COMMITS, 1);
            self.base.histogram(names::COMMIT_LATENCY, d);
        }
    }

    /// A partition answered `code`.
    pub fn error(&self, code: ErrorCode) {
        self.base.error(names::ERRORS, code);
    }

    /// A copy of every counter.
    pub fn snapshot(&self) -> ConsumerMetricsSnapshot {
        ConsumerMetricsSnapshot {
            records_consumed: self.records_consumed.load(Relaxed),
            bytes_consumed: self.bytes_consumed.load(Relaxed),
            fetch_requests: self.fetch_latency.count(),
            fetch_latency_avg_us: self.fetch_latency.avg_us(),
            fetch_latency_max_us: self.fetch_latency.max_us(),
            offset_resets: self.offset_resets.load(Relaxed),
            log_truncations: self.log_truncations.load(Relaxed),
            rebalances: self.rebalances.load(Relaxed),
            commits: self.commit_latency.count(),
            commit_latency_avg_us: self.commit_latency.avg_us(),
            commit_latency_max_us: self.commit_latency.max_us(),
            lag: self.lag.lock().unwrap_or_else(|p| p.into_inner()).clone(),
            errors_by_code: self.base.errors_by_code(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fetch answers add up their requests and bytes and keep the mean and
    /// the longest round trip; records count when returned.
    #[test]
    fn fetches_add_up_with_their_latency() {
        let m = ConsumerMetrics::new(true);
        m.fetched(10, 1_000, Duration::from_millis(2));
        m.fetched(0, 0, Duration::from_millis(6));
        m.consumed(10);
        let s = m.snapshot();
        assert_eq!(
            (s.fetch_requests, s.bytes_consumed, s.records_consumed),
            (2, 1_000, 10)
        );
        assert_eq!(
            (s.fetch_latency_avg_us, s.fetch_latency_max_us),
            (4_000, 6_000)
        );
    }

    /// Lag is a gauge per partition, never negative, forgotten on revoke.
    #[test]
    fn lag_is_a_gauge_per_partition() {
        let m = ConsumerMetrics::new(true);
        let (a, b) = (TopicPartition::new("t", 0), TopicPartition::new("t", 1));
        m.set_lag(&a, 5);
        m.set_lag(&a, 3);
        m.set_lag(&b, -2);
        assert_eq!(
            m.snapshot().lag,
            BTreeMap::from([(a.clone(), 3), (b.clone(), 0)])
        );
        m.forget(&a);
        assert_eq!(m.snapshot().lag, BTreeMap::from([(b, 0)]));
    }

    /// Resets, truncations, rebalances, commits and errors are counted.
    #[test]
    fn events_are_counted() {
        let m = ConsumerMetrics::new(true);
        m.offset_reset();
        m.log_truncation();
        m.rebalance();
        m.committed(Duration::from_millis(10));
        m.committed(Duration::from_millis(30));
        m.error(ErrorCode::OffsetOutOfRange);
        let s = m.snapshot();
        assert_eq!(
            (s.offset_resets, s.log_truncations, s.rebalances),
            (1, 1, 1)
        );
        assert_eq!(
            (s.commits, s.commit_latency_avg_us, s.commit_latency_max_us),
            (2, 20_000, 30_000)
        );
        assert_eq!(s.errors_by_code[&ErrorCode::OffsetOutOfRange.code()], 1);
    }

    /// Disabled metrics record nothing.
    #[test]
    fn disabled_metrics_record_nothing() {
        let m = ConsumerMetrics::new(false);
        m.fetched(1, 10, Duration::from_millis(1));
        m.consumed(1);
        m.set_lag(&TopicPartition::new("t", 0), 1);
        m.offset_reset();
        m.committed(Duration::from_millis(1));
        assert_eq!(m.snapshot(), ConsumerMetricsSnapshot::default());
    }
}

#[cfg(all(test, feature = "metrics"))]
mod facade_tests {
    use super::*;
    use metrics_util::MetricKind;
    use metrics_util::debugging::{DebugValue, DebuggingRecorder};

    /// An emitted value by name: its kind, labels and value.
    type Emitted = BTreeMap<String, (MetricKind, Vec<(String, String)>, DebugValue)>;

    /// Every update is emitted under its name with the client id, and the
    /// lag gauge with its topic and partition.
    #[test]
    fn every_update_is_emitted_under_its_name() {
        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        ::metrics::with_local_recorder(&recorder, || {
            let m = ConsumerMetrics::with_client_id(true, "app");
            m.fetched(3, 300, Duration::from_millis(1));
            m.consumed(3);
            m.set_lag(&TopicPartition::new("orders", 2), 7);
            m.offset_reset();
            m.rebalance();
            m.committed(Duration::from_millis(5));
        });
        let got: Emitted = snapshotter
            .snapshot()
            .into_vec()
            .into_iter()
            .map(|(key, _, _, value)| {
                let (kind, key) = key.into_parts();
                let labels = key
                    .labels()
                    .map(|l| (l.key().to_string(), l.value().to_string()))
                    .collect();
                (key.name().to_string(), (kind, labels, value))
            })
            .collect();
        let counter = |name: &str| match &got[name].2 {
            DebugValue::Counter(c) => *c,
            other => panic!("{name}: {other:?}"),
        };
        assert_eq!(counter(names::RECORDS_CONSUMED), 3);
        assert_eq!(counter(names::BYTES_CONSUMED), 300);
        assert_eq!(counter(names::FETCH_REQUESTS), 1);
        assert_eq!(counter(names::OFFSET_RESETS), 1);
        assert_eq!(counter(names::REBALANCES), 1);
        assert_eq!(counter(names::COMMITS), 1);
        let (kind, labels, value) = &got[names::RECORDS_LAG];
        assert_eq!(*kind, MetricKind::Gauge);
        assert!(labels.contains(&(names::TOPIC_LABEL.into(), "orders".into())));
        assert!(labels.contains(&(names::PARTITION_LABEL.into(), "2".into())));
        assert!(labels.contains(&(names::CLIENT_ID_LABEL.into(), "app".into())));
        assert_eq!(*value, DebugValue::Gauge(7.0.into()));
    }
}
