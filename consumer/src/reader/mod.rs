//! The manually assigned consumer ([`Reader`]; Java's `KafkaConsumer` with
//! `assign()`): you name the partitions and where to start, it reads them,
//! read_committed-capable. Its parts, one file each:

mod committed;
mod error;
mod fetch;
mod filter;
mod offsets;
mod replica;
mod reset;
mod session;
mod validate;

pub use error::ReaderError;
pub use reset::AutoOffsetReset;
// The read_committed algorithm: public only through `internals`.
#[cfg_attr(not(feature = "internals"), allow(unused_imports))]
pub use filter::{
    AbortedTransactionFilter, BatchVerdict, NO_PRODUCER_ID, ProcessedRecords,
    process_partition_records,
};

use crate::metrics::{ConsumerMetrics, ConsumerMetricsSnapshot};
use bytes::Bytes;
use fetch::{Fetched, InFlight};
use kafka_client::Cluster;
use kafka_client::ClusterError;
use kafka_client::Connection;
use kafka_client::TopicPartition;
use kafka_proto::messages::FetchRequest;
use kafka_proto::record::{DecodeOptions, RecordHeader, TimestampType};
use kafka_proto::{ErrorCode, Message};
use session::FetchSession;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::task::JoinSet;

/// Which records a reader sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum IsolationLevel {
    /// Everything up to the high watermark, aborted transactions included.
    ReadUncommitted,
    /// Only non-transactional and committed transactional records, up to the
    /// last stable offset (LSO).
    #[default]
    ReadCommitted,
}

impl IsolationLevel {
    /// The wire value (`isolation_level`): 0 or 1.
    pub fn wire(self) -> i8 {
        match self {
            IsolationLevel::ReadUncommitted => 0,
            IsolationLevel::ReadCommitted => 1,
        }
    }
}

/// A position to seek to.
///
/// ```no_run
/// # async fn demo(reader: &mut kafka_consumer::Reader) -> Result<(), kafka_consumer::ReaderError> {
/// use kafka_consumer::Offset;
/// reader.seek("orders", 0, Offset::Earliest).await?;
/// reader.seek("orders", 1, Offset::At(42)).await?;
/// reader.seek("orders", 2, Offset::Timestamp(1_764_000_000_000)).await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Offset {
    /// The log start offset.
    Earliest,
    /// The end: the high watermark, or under read_committed the last stable offset.
    Latest,
    /// An explicit offset.
    At(i64),
    /// The first offset whose timestamp is at or after this (ms since the
    /// epoch); the end if there is none.
    Timestamp(i64),
}

impl Offset {
    /// The ListOffsets `timestamp` for this spec (`None` for [`Offset::At`]).
    pub fn list_offsets_timestamp(self) -> Option<i64> {
        match self {
            Offset::Earliest => Some(-2),
            Offset::Latest => Some(-1),
            Offset::Timestamp(ts) => Some(ts),
            Offset::At(_) => None,
        }
    }
}

/// One record returned by [`Reader::poll`].
///
/// ```no_run
/// # async fn demo(reader: &mut kafka_consumer::Reader) -> Result<(), kafka_consumer::ReaderError> {
/// for r in reader.poll(std::time::Duration::from_secs(1)).await? {
///     let key = r.key.as_deref().map(String::from_utf8_lossy);
///     println!("{}-{}@{} key={key:?} txn={}", r.topic, r.partition, r.offset, r.is_transactional);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerRecord {
    /// The topic.
    pub topic: Arc<str>,
    /// The partition.
    pub partition: i32,
    /// The offset.
    pub offset: i64,
    /// The timestamp: the batch's log-append time when `timestamp_type` is
    /// [`TimestampType::LogAppend`], else the producer's create time.
    pub timestamp: i64,
    /// What `timestamp` means.
    pub timestamp_type: TimestampType,
    /// The key.
    pub key: Option<Bytes>,
    /// The value (`None` for a tombstone).
    pub value: Option<Bytes>,
    /// The headers, in order.
    pub headers: Vec<RecordHeader>,
    /// The producer id of the batch (-1 if not idempotent).
    pub producer_id: i64,
    /// The producer epoch of the batch (-1 if not idempotent).
    pub producer_epoch: i16,
    /// True when written in a transaction.
    pub is_transactional: bool,
    /// The partition leader epoch stamped on the batch, if any.
    pub leader_epoch: Option<i32>,
}

/// Settings of a [`Reader`].
#[derive(Debug, Clone)]
pub struct ReaderConfig {
    /// `isolation.level` (default read_committed).
    pub isolation: IsolationLevel,
    /// `fetch.max.wait.ms`: how long a broker may hold a Fetch for
    /// `min_bytes` (default 500 ms; capped by the poll timeout).
    pub max_wait: Duration,
    /// `fetch.min.bytes` (default 1).
    pub min_bytes: i32,
    /// `fetch.max.bytes` (default 50 MiB). Sent as at most the connection's
    /// frame cap (`receive.message.max.bytes`) less 512 bytes of room for the
    /// response's own fields.
    pub max_bytes: i32,
    /// `max.partition.fetch.bytes` (default 1 MiB), kept below the frame cap
    /// in the same way.
    pub partition_max_bytes: i32,
    /// Bound on the bytes the reader holds ahead of the application
    /// (librdkafka's `queued.max.messages.kbytes`, default 64 MiB): the
    /// Fetches in flight together ask for at most this many bytes, shared
    /// out between the brokers a round fetches from (each still at most
    /// `max_bytes`). A broker's answer may exceed what was asked by one
    /// record batch (the first batch is always returned whole, KIP-74).
    pub max_buffered_bytes: i32,
    /// `auto.offset.reset`: where a partition without a position starts,
    /// and where a position that left the log goes (OFFSET_OUT_OF_RANGE,
    /// e.g. after retention or DeleteRecords passed it). Default
    /// [`AutoOffsetReset::Latest`], as in Java; under
    /// [`AutoOffsetReset::None`], [`Reader::poll`] fails with
    /// [`ReaderError::NoPosition`], [`ReaderError::OffsetOutOfRange`] or
    /// [`ReaderError::LogTruncation`] instead, and the application seeks.
    /// [`Reader::read_to_end`] goes on from the log's start instead.
    pub auto_offset_reset: AutoOffsetReset,
    /// `client.rack`: sent in every Fetch (v11+) so that a broker with a
    /// rack-aware `replica.selector.class` can name a replica in this rack
    /// to fetch from (KIP-392). Default none: always the leader.
    pub client_rack: Option<String>,
    /// Bound on the retries of [`Reader::seek`], [`Reader::list_offsets`] and
    /// [`Reader::committed_offsets`] (`default.api.timeout.ms`, 60 s).
    pub api_timeout: Duration,
    /// Pause between retries after retriable errors (`retry.backoff.ms`, 100 ms).
    pub retry_backoff: Duration,
    /// Bound on [`Reader::read_to_end`] (default 120 s).
    pub read_to_end_timeout: Duration,
    /// Highest Fetch version to use (default: the newest implemented).
    pub fetch_max_version: i16,
    /// Limits for decoding batches (decompression bound).
    pub decode: DecodeOptions,
    /// In-process metrics ([`Reader::metrics`]; `metrics.enabled`, a
    /// kafka-eos extension as for the producer; default on).
    pub metrics_enabled: bool,
}

impl Default for ReaderConfig {
    fn default() -> Self {
        Self {
            isolation: IsolationLevel::ReadCommitted,
            max_wait: Duration::from_millis(500),
            min_bytes: 1,
            max_bytes: 50 * 1024 * 1024,
            partition_max_bytes: 1024 * 1024,
            max_buffered_bytes: 64 * 1024 * 1024,
            auto_offset_reset: AutoOffsetReset::Latest,
            client_rack: None,
            api_timeout: Duration::from_secs(60),
            retry_backoff: Duration::from_millis(100),
            read_to_end_timeout: Duration::from_secs(120),
            fetch_max_version: FetchRequest::VERSIONS.max,
            decode: DecodeOptions::default(),
            metrics_enabled: true,
        }
    }
}

/// An offset returned by [`Reader::list_offsets`].
///
/// ```no_run
/// # async fn demo(reader: &kafka_consumer::Reader) -> Result<(), kafka_consumer::ReaderError> {
/// use kafka_consumer::Offset;
/// let listed = reader.list_offsets("orders", &[0], Offset::Timestamp(1_764_000_000_000)).await?;
/// match listed[&0].offset {
///     Some(o) => println!("first record at or after the timestamp: {o}"),
///     None => println!("no record that recent"),
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListedOffset {
    /// The offset; `None` when a timestamp lookup found no record at or after it.
    pub offset: Option<i64>,
    /// The timestamp of the record found (timestamp lookups), if any.
    pub timestamp: Option<i64>,
    /// The leader epoch of that offset, if known.
    pub leader_epoch: Option<i32>,
}

#[derive(Debug, Clone, Default)]
struct PartitionState {
    /// The next offset to fetch; `None` until a seek or `auto_offset_reset`.
    position: Option<i64>,
    /// The leader epoch of the last batch fetched before `position` (Java's
    /// `FetchPosition.offsetEpoch`, KIP-320): sent as Fetch's
    /// `last_fetched_epoch` and checked with OffsetForLeaderEpoch after a
    /// leader change. `None` after a seek or a reset.
    offset_epoch: Option<i32>,
    /// The partition leader's epoch the position was last checked against
    /// (Java's `FetchPosition.currentLeader`); `None` until first fetched.
    leader_epoch: Option<i32>,
    /// What must happen before the position is fetched from again.
    hold: Option<validate::Hold>,
    /// The replica the leader named to fetch from instead of itself
    /// (KIP-392), until when.
    preferred_replica: Option<replica::Preferred>,
    /// The high watermark of the partition's last Fetch answer.
    high_watermark: Option<i64>,
    /// The last stable offset of the partition's last Fetch answer.
    last_stable_offset: Option<i64>,
    /// The log start offset of the partition's last Fetch answer.
    log_start_offset: Option<i64>,
}

/// A manually assigned partition reader.
///
/// ```no_run
/// # async fn demo() -> Result<(), kafka_consumer::ReaderError> {
/// use kafka_consumer::{IsolationLevel, Offset, Reader, ReaderConfig};
/// use kafka_client::{Cluster, ClusterConfig};
/// use std::time::Duration;
///
/// let cluster = Cluster::connect(ClusterConfig::new("127.0.0.1:9092")).await?;
/// let config = ReaderConfig { isolation: IsolationLevel::ReadCommitted, ..Default::default() };
/// let mut reader = Reader::new(cluster, config);
/// reader.assign("orders", &[0, 1, 2]);
/// reader.seek("orders", 0, Offset::Earliest).await?;
/// for r in reader.poll(Duration::from_secs(1)).await? {
///     println!("{}-{}@{}: {:?}", r.topic, r.partition, r.offset, r.value);
/// }
/// println!("orders-0 at {:?}", reader.position("orders", 0));
///
/// // Everything committed so far, from the beginning (exactly-once checks):
/// let all = reader.read_to_end("orders", &[0, 1, 2]).await?;
/// let committed = reader.committed_offsets("billing", "orders", &[0, 1, 2]).await?;
/// # let _ = (all, committed);
/// # Ok(()) }
/// ```
///
/// - fetching: Fetch (v4+) to each partition's leader (`fetch.rs`), over a
///   KIP-227 incremental fetch session per broker (`session.rs`);
/// - positions: seeks and ListOffsets (`offsets.rs`), `auto.offset.reset`
///   for partitions without a position or whose position left the log
///   (`reset.rs`), KIP-320 truncation detection (`validate.rs`);
/// - KIP-392 fetching from the replica the leader prefers for
///   `client_rack` (`replica.rs`);
/// - a group's committed offsets: FindCoordinator + OffsetFetch
///   (`committed.rs`);
/// - the read_committed filter (`filter.rs`).
///
/// Under [`IsolationLevel::ReadCommitted`] records of aborted transactions are
/// dropped with the Java consumer's algorithm; control records (transaction
/// markers) are never returned at either level, but the position moves past
/// them.
///
/// Fetching is pipelined: each broker leading assigned partitions has one
/// Fetch in flight while the application works on what the last one
/// returned (at most one answer per broker is held: `fetch.max.bytes`
/// each). A position moves only when [`Reader::poll`] hands the records
/// out; an answer for a partition that was sought or unassigned meanwhile
/// is dropped. Record keys and values are slices of the received frame.
///
/// It has no consumer group membership (the group consumer adds it).
#[derive(Debug)]
pub struct Reader {
    /// The connections and metadata the Fetches and ListOffsets go through.
    cluster: Arc<Cluster>,
    /// The settings the reader was made with.
    config: ReaderConfig,
    /// The assigned partitions, by topic, with each one's position and offsets.
    assignment: BTreeMap<Arc<str>, BTreeMap<i32, PartitionState>>,
    /// A fatal error met while records were returned: the next poll returns it.
    pending_error: Option<ReaderError>,
    /// The last retriable failure, named in a `read_to_end` timeout.
    last_error: Option<String>,
    /// The fetch rounds so far: rotates which partitions go first.
    rounds: usize,
    /// The fetch session with each broker.
    sessions: HashMap<i32, FetchSession>,
    /// The Fetches in flight, at most one per broker.
    in_flight: JoinSet<Fetched>,
    /// The Fetches in flight, by task: their broker and the bytes they
    /// asked for.
    busy: BTreeMap<tokio::task::Id, InFlight>,
    /// Records whose positions already moved, not yet handed out: a poll
    /// cancelled while it sends the next Fetches leaves them here for the
    /// next one (never dropped: that would skip them).
    ready: Vec<ConsumerRecord>,
    /// Assigned partitions not fetched until resumed (Java's `pause`):
    /// their positions stay where they are.
    paused: BTreeSet<Key>,
    /// Fetches, records, lag, resets and truncations (shared with the
    /// group consumer that owns this reader).
    metrics: Arc<ConsumerMetrics>,
}

impl PartitionState {
    /// A new position set by the application (or `read_to_end`): nothing
    /// about the old one holds any more.
    fn seek_to(&mut self, offset: i64) {
        self.position = Some(offset);
        self.offset_epoch = None;
        self.hold = None;
    }
}

type Key = (Arc<str>, i32);

/// Fetch partition errors saying the asked replica no longer serves the
/// partition as the client knows it (leadership moved, epoch fenced, log
/// storage lost, topic deleted or recreated): the client's metadata for it
/// is stale.
fn replica_out_of_date(e: ErrorCode) -> bool {
    matches!(
        e,
        ErrorCode::NotLeaderOrFollower
            | ErrorCode::ReplicaNotAvailable
            | ErrorCode::KafkaStorageError
            | ErrorCode::FencedLeaderEpoch
            | ErrorCode::OffsetNotAvailable
            | ErrorCode::UnknownTopicOrPartition
            | ErrorCode::UnknownTopicId
            | ErrorCode::InconsistentTopicId
    )
}

/// Fetch partition errors after which the Java consumer refreshes metadata.
fn needs_metadata(e: ErrorCode) -> bool {
    replica_out_of_date(e) || matches!(e, ErrorCode::LeaderNotAvailable)
}

impl Reader {
    /// A reader on `cluster` (share the cluster with producers if you like).
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), kafka_consumer::ReaderError> {
    /// use kafka_consumer::{Reader, ReaderConfig};
    /// use kafka_client::{Cluster, ClusterConfig};
    /// let cluster = Cluster::connect(ClusterConfig::new("127.0.0.1:9092")).await?;
    /// let mut reader = Reader::new(cluster.clone(), ReaderConfig::default());
    /// reader.assign("orders", &[0]);
    /// # Ok(()) }
    /// ```
    pub fn new(cluster: Arc<Cluster>, config: ReaderConfig) -> Self {
        Self {
            assignment: BTreeMap::new(),
            pending_error: None,
            last_error: None,
            rounds: 0,
            sessions: HashMap::new(),
            in_flight: JoinSet::new(),
            busy: BTreeMap::new(),
            ready: Vec::new(),
            paused: BTreeSet::new(),
            metrics: Arc::new(ConsumerMetrics::with_client_id(
                config.metrics_enabled,
                cluster
                    .config()
                    .connection
                    .client_id
                    .as_deref()
                    .unwrap_or(""),
            )),
            cluster,
            config,
        }
    }

    /// The reader's metrics so far: records and bytes fetched, Fetch
    /// latency, lag per partition, positions moved by `auto.offset.reset`
    /// (each also logged at warn with the partition and both offsets) and
    /// by truncation detection (KIP-320). All zero with
    /// `metrics_enabled` off.
    ///
    /// ```no_run
    /// # fn demo(reader: &kafka_consumer::Reader) {
    /// let m = reader.metrics();
    /// println!("{} resets, {} truncations", m.offset_resets, m.log_truncations);
    /// # }
    /// ```
    pub fn metrics(&self) -> ConsumerMetricsSnapshot {
        self.metrics.snapshot()
    }

    /// The metrics the group consumer adds its own counters to.
    pub(crate) fn metrics_handle(&self) -> &Arc<ConsumerMetrics> {
        &self.metrics
    }

    /// The cluster.
    pub fn cluster(&self) -> &Arc<Cluster> {
        &self.cluster
    }

    /// The configuration.
    pub fn config(&self) -> &ReaderConfig {
        &self.config
    }

    /// Adds partitions of `topic` to the assignment (existing positions are
    /// kept); new partitions have no position until [`Self::seek`] or the
    /// first [`Self::poll`] (`auto_offset_reset`).
    pub fn assign(&mut self, topic: &str, partitions: &[i32]) {
        self.cluster.track_topics(&[topic]);
        if self.cluster.metadata().topic(topic).is_none() {
            self.cluster.invalidate();
        }
        let parts = self.assignment.entry(Arc::from(topic)).or_default();
        for p in partitions {
            parts.entry(*p).or_default();
        }
    }

    /// Removes partitions from the assignment (a pause of theirs is
    /// forgotten; records fetched for them and not yet returned are
    /// dropped).
    pub fn unassign(&mut self, topic: &str, partitions: &[i32]) {
        self.forget_ready(topic, partitions);
        if let Some(parts) = self.assignment.get_mut(topic) {
            for p in partitions {
                parts.remove(p);
                self.paused.remove(&(Arc::from(topic), *p));
                if self.metrics.enabled() {
                    self.metrics.forget(&TopicPartition::new(topic, *p));
                }
            }
            if parts.is_empty() {
                self.assignment.remove(topic);
            }
        }
    }

    /// Stops fetching `partitions` of `topic` (Java's `pause`) until
    /// [`Self::resume`]: their positions stay, a Fetch already in flight
    /// for them may still return records. Partitions not assigned are
    /// ignored.
    ///
    /// ```no_run
    /// # async fn demo(reader: &mut kafka_consumer::Reader) -> Result<(), kafka_consumer::ReaderError> {
    /// reader.assign("orders", &[0, 1]);
    /// reader.pause("orders", &[1]); // only orders-0 is fetched
    /// let records = reader.poll(std::time::Duration::from_secs(1)).await?;
    /// reader.resume("orders", &[1]);
    /// # let _ = records;
    /// # Ok(()) }
    /// ```
    pub fn pause(&mut self, topic: &str, partitions: &[i32]) {
        for p in partitions {
            if self.state(topic, *p).is_some() {
                self.paused.insert((Arc::from(topic), *p));
            }
        }
    }

    /// Fetches `partitions` of `topic` again from their positions.
    pub fn resume(&mut self, topic: &str, partitions: &[i32]) {
        for p in partitions {
            self.paused.remove(&(Arc::from(topic), *p));
        }
    }

    /// The paused partitions.
    pub fn paused(&self) -> Vec<(String, i32)> {
        self.paused
            .iter()
            .map(|(t, p)| (t.to_string(), *p))
            .collect()
    }

    /// True when the partition is paused.
    pub fn is_paused(&self, topic: &str, partition: i32) -> bool {
        self.paused.contains(&(Arc::from(topic), partition))
    }

    /// The offset of the partition's first record fetched and not yet
    /// returned (a cancelled [`Self::poll`] leaves them for the next one),
    /// if any: where a position the application may commit stands.
    pub fn first_unreturned(&self, topic: &str, partition: i32) -> Option<i64> {
        self.ready
            .iter()
            .find(|r| &*r.topic == topic && r.partition == partition)
            .map(|r| r.offset)
    }

    /// Drops the records of `partitions` of `topic` fetched and not yet
    /// returned (a seek or an unassignment makes them stale).
    fn forget_ready(&mut self, topic: &str, partitions: &[i32]) {
        self.ready
            .retain(|r| &*r.topic != topic || !partitions.contains(&r.partition));
    }

    /// The assigned partitions.
    pub fn assignment(&self) -> Vec<(String, i32)> {
        self.assignment
            .iter()
            .flat_map(|(t, ps)| ps.keys().map(move |p| (t.to_string(), *p)))
            .collect()
    }

    fn state(&self, topic: &str, partition: i32) -> Option<&PartitionState> {
        self.assignment.get(topic)?.get(&partition)
    }

    fn state_mut(
        &mut self,
        topic: &str,
        partition: i32,
    ) -> Result<&mut PartitionState, ReaderError> {
        self.assignment
            .get_mut(topic)
            .and_then(|ps| ps.get_mut(&partition))
            .ok_or_else(|| ReaderError::NotAssigned {
                topic: topic.to_string(),
                partition,
            })
    }

    /// The next offset [`Self::poll`] will fetch, if positioned.
    pub fn position(&self, topic: &str, partition: i32) -> Option<i64> {
        self.state(topic, partition)?.position
    }

    /// The high watermark reported by the last Fetch of the partition.
    ///
    /// ```no_run
    /// # async fn demo(reader: &mut kafka_consumer::Reader) -> Result<(), kafka_consumer::ReaderError> {
    /// reader.poll(std::time::Duration::from_secs(1)).await?;
    /// if let (Some(pos), Some(hw)) = (reader.position("orders", 0), reader.high_watermark("orders", 0)) {
    ///     println!("orders-0 lag: {}", hw - pos);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn high_watermark(&self, topic: &str, partition: i32) -> Option<i64> {
        self.state(topic, partition)?.high_watermark
    }

    /// The last stable offset reported by the last Fetch (read_committed only).
    pub fn last_stable_offset(&self, topic: &str, partition: i32) -> Option<i64> {
        self.state(topic, partition)?.last_stable_offset
    }

    /// The replica the partition is fetched from instead of its leader
    /// (KIP-392: named by the leader for this reader's `client.rack`), while
    /// that choice holds; `None`: the leader.
    pub fn preferred_read_replica(&self, topic: &str, partition: i32) -> Option<i32> {
        let st = self.state(topic, partition)?;
        st.preferred_replica
            .filter(|r| r.until > Instant::now())
            .map(|r| r.node)
    }

    /// The log start offset reported by the last Fetch.
    pub fn log_start_offset(&self, topic: &str, partition: i32) -> Option<i64> {
        self.state(topic, partition)?.log_start_offset
    }

    /// Refreshes metadata when it is stale or lacks one of `topics`.
    async fn ensure_metadata(&self, topics: &[&str]) -> Result<(), ClusterError> {
        let missing = {
            let md = self.cluster.metadata();
            topics.iter().any(|t| md.topic(t).is_none())
        };
        if missing {
            self.cluster.refresh_topics(topics).await?;
        } else {
            self.cluster.maybe_refresh().await?;
        }
        Ok(())
    }

    async fn connection(&self, node: i32) -> Result<Arc<Connection>, ReaderError> {
        match self.cluster.connection(node).await {
            Ok(c) => Ok(c),
            Err(e) => {
                self.cluster.invalidate();
                Err(e.into())
            }
        }
    }

    /// Fetches once from every assigned partition's leader (one request per
    /// leader, concurrently) and returns what arrived, waiting up to `timeout`
    /// for records. Retriable errors (leadership changes, disconnects) refresh
    /// the metadata and are retried within `timeout`; an empty vector means
    /// nothing arrived in time. Partitions without a position start at
    /// `auto_offset_reset`.
    ///
    /// ```no_run
    /// # async fn demo(reader: &mut kafka_consumer::Reader) -> Result<(), kafka_consumer::ReaderError> {
    /// reader.assign("orders", &[0]);
    /// loop {
    ///     let records = reader.poll(std::time::Duration::from_millis(500)).await?;
    ///     if records.is_empty() {
    ///         break;
    ///     }
    ///     println!("{} records", records.len());
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn poll(&mut self, timeout: Duration) -> Result<Vec<ConsumerRecord>, ReaderError> {
        if let Some(e) = self.pending_error.take() {
            return Err(e);
        }
        let records = self.poll_inner(None, timeout).await?;
        self.metrics.consumed(records.len() as u64);
        Ok(records)
    }

    /// Reads `partitions` of `topic` from the earliest offset until each
    /// position reaches the end (high watermark, or under read_committed the
    /// last stable offset) as listed when the call started, and returns the
    /// records below those ends in fetch order. The partitions are added to
    /// the assignment and stay positioned at their ends. Bounded by
    /// `read_to_end_timeout`. A position the log's start passes during the
    /// read (retention or DeleteRecords) goes on from the new start,
    /// whatever `auto_offset_reset` says: the records still in the log are
    /// all returned.
    ///
    /// ```no_run
    /// # async fn demo(reader: &mut kafka_consumer::Reader) -> Result<(), kafka_consumer::ReaderError> {
    /// let committed = reader.read_to_end("orders", &[0, 1, 2]).await?;
    /// let unique: std::collections::HashSet<_> = committed.iter().map(|r| (r.partition, r.offset)).collect();
    /// assert_eq!(unique.len(), committed.len(), "no record twice");
    /// # Ok(()) }
    /// ```
    pub async fn read_to_end(
        &mut self,
        topic: &str,
        partitions: &[i32],
    ) -> Result<Vec<ConsumerRecord>, ReaderError> {
        if let Some(e) = self.pending_error.take() {
            return Err(e);
        }
        self.assign(topic, partitions);
        let ends: BTreeMap<i32, i64> = self
            .list_offsets(topic, partitions, Offset::Latest)
            .await?
            .into_iter()
            .map(|(p, l)| (p, l.offset.unwrap_or(0)))
            .collect();
        let starts = self.resolve(topic, partitions, Offset::Earliest).await?;
        for (p, o) in &starts {
            self.state_mut(topic, *p)?.seek_to(*o);
        }
        let key: Arc<str> = self
            .assignment
            .keys()
            .find(|t| &***t == topic)
            .cloned()
            .unwrap_or_else(|| Arc::from(topic));
        let deadline = Instant::now() + self.config.read_to_end_timeout;
        let mut out = Vec::new();
        loop {
            let open: BTreeSet<Key> = ends
                .iter()
                .filter(|(p, end)| self.position(topic, **p).is_none_or(|pos| pos < **end))
                .map(|(p, _)| (key.clone(), *p))
                .collect();
            if open.is_empty() {
                self.metrics.consumed(out.len() as u64);
                return Ok(out);
            }
            let now = Instant::now();
            if now >= deadline {
                let at: Vec<String> = open
                    .iter()
                    .map(|(_, p)| {
                        format!(
                            "{topic}-{p} at {:?} of {}",
                            self.position(topic, *p),
                            ends[p]
                        )
                    })
                    .collect();
                return Err(ReaderError::Timeout {
                    what: format!("read_to_end ({})", at.join(", ")),
                    after: self.config.read_to_end_timeout,
                    last_error: self.last_error.clone(),
                });
            }
            // One fetch round at a time: a round can move a position to the
            // end without returning a record (only aborted data or control
            // batches), and the ends are checked again before waiting more.
            let round = self.config.max_wait.min(deadline - now);
            let batch = self.poll_inner(Some(&open), round).await?;
            if let Some(e) = self.pending_error.take() {
                return Err(e);
            }
            out.extend(
                batch
                    .into_iter()
                    .filter(|r| ends.get(&r.partition).is_some_and(|end| r.offset < *end)),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Fetch and ListOffsets `isolation_level` field: 0 for
    /// read_uncommitted, 1 for read_committed.
    #[test]
    fn isolation_level_wire_values() {
        assert_eq!(IsolationLevel::ReadUncommitted.wire(), 0);
        assert_eq!(IsolationLevel::ReadCommitted.wire(), 1);
    }

    /// A reader left at its defaults reads committed records only, at most
    /// 1 MiB per partition per Fetch.
    #[test]
    fn reader_config_defaults_to_read_committed_and_one_mib_per_partition() {
        let c = ReaderConfig::default();
        assert_eq!(c.isolation, IsolationLevel::ReadCommitted);
        assert_eq!(IsolationLevel::default(), IsolationLevel::ReadCommitted);
        assert_eq!(c.partition_max_bytes, 1 << 20);
    }

    /// Earliest and Latest map to ListOffsets' sentinel timestamps (-2, -1),
    /// a timestamp is sent as is, and an explicit offset needs no lookup.
    #[test]
    fn offset_list_offsets_timestamps() {
        assert_eq!(Offset::Earliest.list_offsets_timestamp(), Some(-2));
        assert_eq!(Offset::Latest.list_offsets_timestamp(), Some(-1));
        assert_eq!(
            Offset::Timestamp(1_764_000_000_000).list_offsets_timestamp(),
            Some(1_764_000_000_000)
        );
        assert_eq!(Offset::At(42).list_offsets_timestamp(), None);
    }
}
