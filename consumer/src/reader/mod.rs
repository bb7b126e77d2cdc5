//! The manually assigned consumer ([`Reader`]; Java's `KafkaConsumer` with
//! `assign()`): you name the partitions and where to start, it reads them,
//! read_committed-capable:
//! Fetch (v4+) to each partition's leader, ListOffsets for seeks, and
//! FindCoordinator + OffsetFetch for a group's committed offsets.
//!
//! Under [`IsolationLevel::ReadCommitted`] records of aborted transactions are
//! dropped with the Java consumer's algorithm (see
//! [`AbortedTransactionFilter`]); control records (transaction markers) are
//! never returned at either level, but the position moves past them.
//!
//! Fetching is pipelined: each broker leading assigned partitions has one
//! Fetch in flight while the application works on what the last one
//! returned (at most one answer per broker is held: `fetch.max.bytes`
//! each), over a KIP-227 incremental fetch session (see `session`). A
//! position moves only when [`Reader::poll`] hands the records out; an
//! answer for a partition that was sought or unassigned meanwhile is
//! dropped. Record keys and values are slices of the received frame.
//!
//! It has no consumer group membership (the group consumer adds it).

mod error;
mod filter;
mod session;

pub use error::ReaderError;
pub use filter::{
    AbortedTransactionFilter, BatchVerdict, NO_PRODUCER_ID, ProcessedRecords,
    process_partition_records,
};

use bytes::Bytes;
use kafka_client::cluster::Cluster;
use kafka_client::connection::Connection;
use kafka_client::error::{ClusterError, ConnError};
use kafka_client::{CoordinatorType, find_coordinator};
use kafka_proto::messages::{
    FetchRequest, FetchRequestForgottenTopic, FetchRequestPartition, FetchRequestTopic,
    FetchResponse, ListOffsetsRequest, ListOffsetsRequestPartition, ListOffsetsRequestTopic,
    OffsetFetchRequest, OffsetFetchRequestGroup, OffsetFetchRequestTopic, OffsetFetchRequestTopics,
};
use kafka_proto::primitives::Uuid;
use kafka_proto::record::{DecodeOptions, RecordHeader, TimestampType};
use kafka_proto::{ApiKey, ErrorCode, Message};
use session::{FetchSession, PartitionFetch};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::task::JoinSet;

/// Which records a reader sees.
///
/// ```
/// use kafka_consumer::reader::{IsolationLevel, ReaderConfig};
/// let verify = ReaderConfig { isolation: IsolationLevel::ReadUncommitted, ..Default::default() };
/// assert_ne!(verify.isolation, IsolationLevel::default()); // default: read_committed
/// ```
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
    ///
    /// ```
    /// use kafka_consumer::reader::IsolationLevel;
    /// assert_eq!(IsolationLevel::ReadUncommitted.wire(), 0);
    /// assert_eq!(IsolationLevel::ReadCommitted.wire(), 1);
    /// ```
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
/// # async fn demo(reader: &mut kafka_consumer::reader::Reader) -> Result<(), kafka_consumer::reader::ReaderError> {
/// use kafka_consumer::reader::Offset;
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
    ///
    /// ```
    /// use kafka_consumer::reader::Offset;
    /// assert_eq!(Offset::Earliest.list_offsets_timestamp(), Some(-2));
    /// assert_eq!(Offset::Latest.list_offsets_timestamp(), Some(-1));
    /// assert_eq!(Offset::Timestamp(1_764_000_000_000).list_offsets_timestamp(), Some(1_764_000_000_000));
    /// assert_eq!(Offset::At(42).list_offsets_timestamp(), None);
    /// ```
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
/// # async fn demo(reader: &mut kafka_consumer::reader::Reader) -> Result<(), kafka_consumer::reader::ReaderError> {
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
///
/// ```
/// use kafka_consumer::reader::{IsolationLevel, ReaderConfig};
/// let c = ReaderConfig::default();
/// assert_eq!(c.isolation, IsolationLevel::ReadCommitted);
/// assert_eq!(c.partition_max_bytes, 1 << 20);
/// ```
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
    /// Where a partition without a position starts (`auto.offset.reset`);
    /// `None` makes [`Reader::poll`] fail with [`ReaderError::NoPosition`].
    /// Default [`Offset::Earliest`].
    pub auto_offset_reset: Option<Offset>,
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
            auto_offset_reset: Some(Offset::Earliest),
            api_timeout: Duration::from_secs(60),
            retry_backoff: Duration::from_millis(100),
            read_to_end_timeout: Duration::from_secs(120),
            fetch_max_version: FetchRequest::VERSIONS.max,
            decode: DecodeOptions::default(),
        }
    }
}

/// An offset returned by [`Reader::list_offsets`].
///
/// ```no_run
/// # async fn demo(reader: &kafka_consumer::reader::Reader) -> Result<(), kafka_consumer::reader::ReaderError> {
/// use kafka_consumer::reader::Offset;
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
    position: Option<i64>,
    high_watermark: Option<i64>,
    last_stable_offset: Option<i64>,
    log_start_offset: Option<i64>,
}

/// A manually assigned partition reader.
///
/// ```no_run
/// # async fn demo() -> Result<(), kafka_consumer::reader::ReaderError> {
/// use kafka_consumer::reader::{IsolationLevel, Offset, Reader, ReaderConfig};
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
#[derive(Debug)]
pub struct Reader {
    cluster: Arc<Cluster>,
    config: ReaderConfig,
    assignment: BTreeMap<Arc<str>, BTreeMap<i32, PartitionState>>,
    pending_error: Option<ReaderError>,
    last_error: Option<String>,
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
}

/// A Fetch in flight: its broker and its `max_bytes`.
#[derive(Debug, Clone, Copy)]
struct InFlight {
    node: i32,
    max_bytes: i32,
}

/// A Fetch that came back (or failed).
#[derive(Debug)]
struct Fetched {
    node: i32,
    version: i16,
    /// Every partition the broker's session fetches, at the offsets sent.
    targets: Vec<Target>,
    ids: Arc<HashMap<Arc<str>, Uuid>>,
    resp: Result<FetchResponse, ConnError>,
}

/// One partition of a planned Fetch.
#[derive(Debug, Clone)]
struct Target {
    topic: Arc<str>,
    partition: i32,
    offset: i64,
}

type Key = (Arc<str>, i32);

/// The forgotten partitions of a session request, by name (before v13)
/// or topic id.
fn forgotten(
    version: i16,
    keys: &[session::Key],
    ids: &HashMap<Arc<str>, Uuid>,
) -> Vec<FetchRequestForgottenTopic> {
    let mut out: Vec<FetchRequestForgottenTopic> = Vec::new();
    for (topic, p) in keys {
        let (name, id) = if version >= 13 {
            (String::new(), ids.get(topic).copied().unwrap_or_default())
        } else {
            (topic.to_string(), Uuid::default())
        };
        match out.iter_mut().find(|f| f.topic == name && f.topic_id == id) {
            Some(f) => f.partitions.push(*p),
            None => out.push(FetchRequestForgottenTopic {
                topic: name,
                topic_id: id,
                partitions: vec![*p],
                ..Default::default()
            }),
        }
    }
    out
}

/// What one round of fetches produced.
#[derive(Debug, Default)]
struct Round {
    records: Vec<ConsumerRecord>,
    fatal: Option<ReaderError>,
    retriable: Option<String>,
}

impl Round {
    fn retry(&mut self, why: impl Into<String>) {
        let why = why.into();
        tracing::debug!(%why, "reader: retriable error");
        self.retriable = Some(why);
    }

    fn fail(&mut self, e: ReaderError) {
        if self.fatal.is_none() {
            self.fatal = Some(e);
        }
    }
}

/// Fetch partition errors after which the Java consumer refreshes metadata.
fn needs_metadata(e: ErrorCode) -> bool {
    matches!(
        e,
        ErrorCode::NotLeaderOrFollower
            | ErrorCode::ReplicaNotAvailable
            | ErrorCode::KafkaStorageError
            | ErrorCode::FencedLeaderEpoch
            | ErrorCode::OffsetNotAvailable
            | ErrorCode::LeaderNotAvailable
            | ErrorCode::UnknownTopicOrPartition
            | ErrorCode::UnknownTopicId
            | ErrorCode::InconsistentTopicId
    )
}

/// Errors retried without a metadata refresh.
fn retry_in_place(e: ErrorCode) -> bool {
    matches!(
        e,
        ErrorCode::UnknownLeaderEpoch | ErrorCode::UnknownServerError
    ) || e.is_retriable()
}

/// Room a Fetch response frame needs beyond its record data (librdkafka's
/// margin between `fetch.max.bytes` and `receive.message.max.bytes`).
const FETCH_RESPONSE_MARGIN: usize = 512;

impl Reader {
    /// `fetch.max.bytes` and `max.partition.fetch.bytes` as sent: each kept
    /// below the connection's largest accepted frame
    /// (`receive.message.max.bytes`) less [`FETCH_RESPONSE_MARGIN`], so that a
    /// response the broker sizes by them fits the frame cap.
    fn fetch_limits(&self) -> (i32, i32) {
        let frame = self.cluster.config().connection.max_frame_size;
        let room = i32::try_from(frame.saturating_sub(FETCH_RESPONSE_MARGIN))
            .unwrap_or(i32::MAX)
            .max(1);
        (
            self.config.max_bytes.min(room),
            self.config.partition_max_bytes.min(room),
        )
    }

    /// A reader on `cluster` (share the cluster with producers if you like).
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), kafka_consumer::reader::ReaderError> {
    /// use kafka_consumer::reader::{Reader, ReaderConfig};
    /// use kafka_client::{Cluster, ClusterConfig};
    /// let cluster = Cluster::connect(ClusterConfig::new("127.0.0.1:9092")).await?;
    /// let mut reader = Reader::new(cluster.clone(), ReaderConfig::default());
    /// reader.assign("orders", &[0]);
    /// # Ok(()) }
    /// ```
    pub fn new(cluster: Arc<Cluster>, config: ReaderConfig) -> Self {
        Self {
            cluster,
            config,
            assignment: BTreeMap::new(),
            pending_error: None,
            last_error: None,
            rounds: 0,
            sessions: HashMap::new(),
            in_flight: JoinSet::new(),
            busy: BTreeMap::new(),
            ready: Vec::new(),
        }
    }

    /// The cluster.
    ///
    /// ```no_run
    /// # fn demo(reader: &kafka_consumer::reader::Reader) {
    /// println!("{} brokers known", reader.cluster().metadata().brokers().len());
    /// # }
    /// ```
    pub fn cluster(&self) -> &Arc<Cluster> {
        &self.cluster
    }

    /// The configuration.
    ///
    /// ```no_run
    /// # fn demo(reader: &kafka_consumer::reader::Reader) {
    /// use kafka_consumer::reader::IsolationLevel;
    /// assert_eq!(reader.config().isolation, IsolationLevel::ReadCommitted);
    /// # }
    /// ```
    pub fn config(&self) -> &ReaderConfig {
        &self.config
    }

    /// Adds partitions of `topic` to the assignment (existing positions are
    /// kept); new partitions have no position until [`Self::seek`] or the
    /// first [`Self::poll`] (`auto_offset_reset`).
    ///
    /// ```no_run
    /// # fn demo(reader: &mut kafka_consumer::reader::Reader) {
    /// reader.assign("orders", &[0, 1, 2]);
    /// assert_eq!(reader.position("orders", 0), None); // until seek or poll
    /// # }
    /// ```
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

    /// Removes partitions from the assignment.
    ///
    /// ```no_run
    /// # fn demo(reader: &mut kafka_consumer::reader::Reader) {
    /// reader.assign("orders", &[0, 1, 2]);
    /// reader.unassign("orders", &[2]);
    /// assert_eq!(reader.assignment(), [("orders".to_string(), 0), ("orders".to_string(), 1)]);
    /// # }
    /// ```
    pub fn unassign(&mut self, topic: &str, partitions: &[i32]) {
        if let Some(parts) = self.assignment.get_mut(topic) {
            for p in partitions {
                parts.remove(p);
            }
            if parts.is_empty() {
                self.assignment.remove(topic);
            }
        }
    }

    /// The assigned partitions.
    ///
    /// ```no_run
    /// # fn demo(reader: &mut kafka_consumer::reader::Reader) {
    /// reader.assign("orders", &[1, 0]);
    /// assert_eq!(reader.assignment(), [("orders".to_string(), 0), ("orders".to_string(), 1)]);
    /// # }
    /// ```
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
    ///
    /// ```no_run
    /// # async fn demo(reader: &mut kafka_consumer::reader::Reader) -> Result<(), kafka_consumer::reader::ReaderError> {
    /// use kafka_consumer::reader::Offset;
    /// reader.seek("orders", 0, Offset::At(100)).await?;
    /// assert_eq!(reader.position("orders", 0), Some(100));
    /// # Ok(()) }
    /// ```
    pub fn position(&self, topic: &str, partition: i32) -> Option<i64> {
        self.state(topic, partition)?.position
    }

    /// The high watermark reported by the last Fetch of the partition.
    ///
    /// ```no_run
    /// # async fn demo(reader: &mut kafka_consumer::reader::Reader) -> Result<(), kafka_consumer::reader::ReaderError> {
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
    ///
    /// ```no_run
    /// # async fn demo(reader: &mut kafka_consumer::reader::Reader) -> Result<(), kafka_consumer::reader::ReaderError> {
    /// reader.poll(std::time::Duration::from_secs(1)).await?;
    /// let (lso, hw) = (reader.last_stable_offset("orders", 0), reader.high_watermark("orders", 0));
    /// println!("open transaction pending: {}", lso < hw);
    /// # Ok(()) }
    /// ```
    pub fn last_stable_offset(&self, topic: &str, partition: i32) -> Option<i64> {
        self.state(topic, partition)?.last_stable_offset
    }

    /// The log start offset reported by the last Fetch.
    ///
    /// ```no_run
    /// # async fn demo(reader: &mut kafka_consumer::reader::Reader) -> Result<(), kafka_consumer::reader::ReaderError> {
    /// reader.poll(std::time::Duration::from_secs(1)).await?;
    /// println!("orders-0 starts at {:?}", reader.log_start_offset("orders", 0));
    /// # Ok(()) }
    /// ```
    pub fn log_start_offset(&self, topic: &str, partition: i32) -> Option<i64> {
        self.state(topic, partition)?.log_start_offset
    }

    /// Moves an assigned partition's position; [`Offset::Earliest`],
    /// [`Offset::Latest`] and [`Offset::Timestamp`] are resolved with
    /// ListOffsets at the reader's isolation level (read_committed: Latest is
    /// the last stable offset). Returns the new position.
    ///
    /// ```no_run
    /// # async fn demo(reader: &mut kafka_consumer::reader::Reader) -> Result<(), kafka_consumer::reader::ReaderError> {
    /// use kafka_consumer::reader::Offset;
    /// reader.assign("orders", &[0]);
    /// let end = reader.seek("orders", 0, Offset::Latest).await?; // the LSO under read_committed
    /// println!("only records after {end} will be read");
    /// # Ok(()) }
    /// ```
    pub async fn seek(
        &mut self,
        topic: &str,
        partition: i32,
        offset: Offset,
    ) -> Result<i64, ReaderError> {
        self.state_mut(topic, partition)?;
        let resolved = self.resolve(topic, &[partition], offset).await?;
        let at = resolved[&partition];
        self.state_mut(topic, partition)?.position = Some(at);
        Ok(at)
    }

    /// Resolves `offset` for each partition; timestamp lookups with no match
    /// fall back to the end.
    async fn resolve(
        &self,
        topic: &str,
        partitions: &[i32],
        offset: Offset,
    ) -> Result<BTreeMap<i32, i64>, ReaderError> {
        if let Offset::At(o) = offset {
            return Ok(partitions.iter().map(|p| (*p, o)).collect());
        }
        let listed = self.list_offsets(topic, partitions, offset).await?;
        let mut out = BTreeMap::new();
        let mut missing = Vec::new();
        for (p, l) in &listed {
            match l.offset {
                Some(o) => {
                    out.insert(*p, o);
                }
                None => missing.push(*p),
            }
        }
        if !missing.is_empty() {
            for (p, l) in self.list_offsets(topic, &missing, Offset::Latest).await? {
                out.insert(p, l.offset.unwrap_or(0));
            }
        }
        Ok(out)
    }

    /// ListOffsets for `partitions` of `topic` at the reader's isolation
    /// level, retried on retriable errors for up to `api_timeout`.
    /// [`Offset::At`] is returned as is.
    ///
    /// ```no_run
    /// # async fn demo(reader: &kafka_consumer::reader::Reader) -> Result<(), kafka_consumer::reader::ReaderError> {
    /// use kafka_consumer::reader::Offset;
    /// let ends = reader.list_offsets("orders", &[0, 1, 2], Offset::Latest).await?;
    /// for (partition, listed) in &ends {
    ///     println!("orders-{partition} ends at {:?}", listed.offset);
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn list_offsets(
        &self,
        topic: &str,
        partitions: &[i32],
        offset: Offset,
    ) -> Result<BTreeMap<i32, ListedOffset>, ReaderError> {
        self.list_offsets_isolated(topic, partitions, offset, self.config.isolation)
            .await
    }

    /// Waits until no transaction is open on `partitions` of `topic`: on
    /// each, the last stable offset (the latest offset read_committed) has
    /// reached the high watermark (read_uncommitted), whatever the reader's
    /// own isolation level. A commit or abort returns once the transaction
    /// coordinator has logged the decision; the markers that end the
    /// transaction in each partition, and so move its last stable offset,
    /// are written after. A check that reads what a closed producer
    /// committed waits here first. [`ReaderError::Timeout`] after `timeout`,
    /// naming the partitions still open.
    ///
    /// ```no_run
    /// # async fn demo(reader: &kafka_consumer::reader::Reader) -> Result<(), kafka_consumer::reader::ReaderError> {
    /// use std::time::Duration;
    /// // After the transactional producer writing to orders-0..2 committed and closed:
    /// reader.wait_until_stable("orders", &[0, 1, 2], Duration::from_secs(30)).await?;
    /// # Ok(()) }
    /// ```
    pub async fn wait_until_stable(
        &self,
        topic: &str,
        partitions: &[i32],
        timeout: Duration,
    ) -> Result<(), ReaderError> {
        let deadline = Instant::now() + timeout;
        let mut backoff = Duration::from_millis(10);
        loop {
            let high = self
                .list_offsets_isolated(
                    topic,
                    partitions,
                    Offset::Latest,
                    IsolationLevel::ReadUncommitted,
                )
                .await?;
            let stable = self
                .list_offsets_isolated(
                    topic,
                    partitions,
                    Offset::Latest,
                    IsolationLevel::ReadCommitted,
                )
                .await?;
            let open: Vec<String> = partitions
                .iter()
                .filter_map(|p| {
                    let hw = high.get(p).and_then(|l| l.offset);
                    let lso = stable.get(p).and_then(|l| l.offset);
                    (lso != hw)
                        .then(|| format!("{topic}-{p} stable at {lso:?}, high watermark {hw:?}"))
                })
                .collect();
            if open.is_empty() {
                return Ok(());
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(ReaderError::Timeout {
                    what: format!("open transactions ending ({})", open.join(", ")),
                    after: timeout,
                    last_error: None,
                });
            }
            tokio::time::sleep(backoff.min(deadline - now)).await;
            backoff = (backoff * 2).min(Duration::from_millis(200));
        }
    }

    /// [`Reader::list_offsets`] at isolation level `isolation`.
    async fn list_offsets_isolated(
        &self,
        topic: &str,
        partitions: &[i32],
        offset: Offset,
        isolation: IsolationLevel,
    ) -> Result<BTreeMap<i32, ListedOffset>, ReaderError> {
        let Some(timestamp) = offset.list_offsets_timestamp() else {
            let Offset::At(o) = offset else {
                unreachable!("only At has no ListOffsets timestamp")
            };
            return Ok(partitions
                .iter()
                .map(|p| {
                    let l = ListedOffset {
                        offset: Some(o),
                        timestamp: None,
                        leader_epoch: None,
                    };
                    (*p, l)
                })
                .collect());
        };
        let deadline = Instant::now() + self.config.api_timeout;
        let mut out = BTreeMap::new();
        let mut todo: BTreeSet<i32> = partitions.iter().copied().collect();
        let mut last_error: Option<String> = None;
        loop {
            if let Err(e) = self.ensure_metadata(&[topic]).await {
                if !e.is_retriable() {
                    return Err(e.into());
                }
                last_error = Some(e.to_string());
            }
            let mut by_leader: BTreeMap<i32, Vec<(i32, i32)>> = BTreeMap::new();
            {
                let md = self.cluster.metadata();
                for p in &todo {
                    match md.partition(topic, *p) {
                        Some(pm) if pm.leader.is_some() => by_leader
                            .entry(pm.leader.unwrap_or_default())
                            .or_default()
                            .push((*p, pm.leader_epoch)),
                        _ => last_error = Some(format!("no leader known for {topic}-{p}")),
                    }
                }
            }
            if by_leader.is_empty() && !todo.is_empty() {
                self.cluster.invalidate();
            }
            for (node, parts) in by_leader {
                match self
                    .list_offsets_on(node, topic, &parts, timestamp, isolation, &mut out)
                    .await
                {
                    Ok(()) => {}
                    Err(e) if e.is_retriable() => {
                        last_error = Some(e.to_string());
                    }
                    Err(e) => return Err(e),
                }
            }
            todo.retain(|p| !out.contains_key(p));
            if todo.is_empty() {
                return Ok(out);
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(ReaderError::Timeout {
                    what: format!("ListOffsets {topic} {todo:?}"),
                    after: self.config.api_timeout,
                    last_error,
                });
            }
            tokio::time::sleep(self.config.retry_backoff.min(deadline - now)).await;
        }
    }

    /// One ListOffsets request to `node`; fills `out` with the partitions
    /// answered without error; retriable partition errors invalidate the
    /// metadata and are reported as a retriable error.
    async fn list_offsets_on(
        &self,
        node: i32,
        topic: &str,
        parts: &[(i32, i32)],
        timestamp: i64,
        isolation: IsolationLevel,
        out: &mut BTreeMap<i32, ListedOffset>,
    ) -> Result<(), ReaderError> {
        let conn = self.connection(node).await?;
        let version = conn.versions().version_for::<ListOffsetsRequest>()?;
        let req = ListOffsetsRequest {
            replica_id: -1,
            isolation_level: if version >= 2 { isolation.wire() } else { 0 },
            topics: vec![ListOffsetsRequestTopic {
                name: topic.to_string(),
                partitions: parts
                    .iter()
                    .map(|(p, epoch)| ListOffsetsRequestPartition {
                        partition_index: *p,
                        current_leader_epoch: if version >= 4 { *epoch } else { -1 },
                        timestamp,
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }],
            timeout_ms: if version >= 10 {
                i32::try_from(self.cluster.config().connection.request_timeout.as_millis())
                    .unwrap_or(i32::MAX)
            } else {
                0
            },
            ..Default::default()
        };
        let resp = match conn.send(&req, version).await {
            Ok(r) => r,
            Err(e) => {
                self.cluster.invalidate();
                return Err(e.into());
            }
        };
        let mut retry: Option<ReaderError> = None;
        for t in resp.topics.iter().filter(|t| t.name == topic) {
            for p in &t.partitions {
                let error = ErrorCode::from(p.error_code);
                if error.is_ok() {
                    out.insert(
                        p.partition_index,
                        ListedOffset {
                            offset: (p.offset >= 0).then_some(p.offset),
                            timestamp: (p.timestamp >= 0).then_some(p.timestamp),
                            leader_epoch: (p.leader_epoch >= 0).then_some(p.leader_epoch),
                        },
                    );
                    continue;
                }
                let e = ReaderError::Partition {
                    api: ApiKey::ListOffsets,
                    version,
                    topic: topic.to_string(),
                    partition: p.partition_index,
                    error,
                };
                if needs_metadata(error) {
                    self.cluster.invalidate();
                }
                if !e.is_retriable() {
                    return Err(e);
                }
                retry = Some(e);
            }
        }
        retry.map_or(Ok(()), Err)
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
    /// # async fn demo(reader: &mut kafka_consumer::reader::Reader) -> Result<(), kafka_consumer::reader::ReaderError> {
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
        self.poll_inner(None, timeout).await
    }

    async fn poll_inner(
        &mut self,
        only: Option<&BTreeSet<Key>>,
        timeout: Duration,
    ) -> Result<Vec<ConsumerRecord>, ReaderError> {
        if self.assignment.is_empty() {
            return Err(ReaderError::NoAssignment);
        }
        if only.is_some() {
            // A read of some partitions (read_to_end): answers prefetched
            // for the whole assignment are dropped unread (no position
            // moved), their sessions reopened.
            self.abandon_in_flight();
        } else if !self.ready.is_empty() {
            return Ok(std::mem::take(&mut self.ready));
        }
        let deadline = Instant::now() + timeout;
        loop {
            self.ensure_positions().await?;
            let mut round = Round::default();
            self.send_fetches(only, &mut round).await;
            if self.in_flight.is_empty() {
                if let Some(e) = round.fatal {
                    return Err(e);
                }
                // Nothing to fetch from (no leader known): back off.
                let now = Instant::now();
                if now >= deadline {
                    return Ok(Vec::new());
                }
                if let Some(why) = &round.retriable {
                    self.last_error = Some(why.clone());
                }
                tokio::time::sleep(self.config.retry_backoff.min(deadline - now)).await;
                continue;
            }
            let first =
                tokio::time::timeout_at(deadline.into(), self.in_flight.join_next_with_id()).await;
            let Ok(Some(joined)) = first else {
                // The poll's time is up; the Fetches stay in flight.
                return Ok(Vec::new());
            };
            self.finish(joined, &mut round);
            // Whatever else already came back.
            while let Some(joined) = self.in_flight.try_join_next_with_id() {
                self.finish(joined, &mut round);
            }
            if let Some(why) = &round.retriable {
                self.last_error = Some(why.clone());
            }
            let failed_only = round.retriable.is_some() && round.records.is_empty();
            if only.is_none() && round.fatal.is_none() && !failed_only {
                // Prefetch: the next Fetch to each idle broker goes out
                // now, from the positions after these records, which wait
                // in `ready` across the await. (After a failure with
                // nothing to return, the retry waits for the backoff.)
                self.ready.append(&mut round.records);
                let mut ahead = Round::default();
                self.send_fetches(None, &mut ahead).await;
                round.records = std::mem::take(&mut self.ready);
                round.fatal = ahead.fatal;
            }
            match (round.fatal, round.records.is_empty()) {
                (Some(e), true) => return Err(e),
                (Some(e), false) => {
                    self.pending_error = Some(e);
                    return Ok(round.records);
                }
                (None, false) => return Ok(round.records),
                (None, true) => {}
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(Vec::new());
            }
            if round.retriable.is_some() {
                tokio::time::sleep(self.config.retry_backoff.min(deadline - now)).await;
            }
        }
    }

    /// Drops every Fetch in flight unread; their sessions start again.
    fn abandon_in_flight(&mut self) {
        self.in_flight.abort_all();
        for InFlight { node, .. } in std::mem::take(&mut self.busy).into_values() {
            if let Some(s) = self.sessions.get_mut(&node) {
                s.on_failure();
            }
        }
    }

    /// Hands a finished Fetch to its session and its records to `round`.
    fn finish(
        &mut self,
        joined: Result<(tokio::task::Id, Fetched), tokio::task::JoinError>,
        round: &mut Round,
    ) {
        let f = match joined {
            Ok((id, f)) => {
                self.busy.remove(&id);
                f
            }
            Err(e) => {
                // Aborted (abandoned: already let go) or panicked: the
                // broker's session starts again.
                if let Some(f) = self.busy.remove(&e.id())
                    && let Some(s) = self.sessions.get_mut(&f.node)
                {
                    s.on_failure();
                }
                if !e.is_cancelled() {
                    round.fail(ReaderError::Broker {
                        api: ApiKey::Fetch,
                        version: -1,
                        error: ErrorCode::UnknownServerError,
                        message: Some(format!("fetch task failed: {e}")),
                    });
                }
                return;
            }
        };
        let session = self.sessions.entry(f.node).or_default();
        match f.resp {
            Ok(resp) => {
                let top = ErrorCode::from(resp.error_code);
                if f.version >= 7 && session.on_answer(top, resp.session_id).is_err() {
                    round.retry(format!(
                        "fetch session {} with broker {}: {top:?}; fetching in full",
                        session.id(),
                        f.node
                    ));
                    return;
                }
                self.handle_fetch_response(f.version, &f.targets, &f.ids, resp, round);
            }
            Err(e) => {
                session.on_failure();
                if e.is_retriable() {
                    self.cluster.invalidate();
                    round.retry(e.to_string());
                } else {
                    round.fail(e.into());
                }
            }
        }
    }

    /// Gives every partition without a position one from `auto_offset_reset`.
    async fn ensure_positions(&mut self) -> Result<(), ReaderError> {
        let mut need: BTreeMap<Arc<str>, Vec<i32>> = BTreeMap::new();
        for (t, ps) in &self.assignment {
            for (p, st) in ps {
                if st.position.is_none() {
                    need.entry(t.clone()).or_default().push(*p);
                }
            }
        }
        for (topic, parts) in need {
            let Some(reset) = self.config.auto_offset_reset else {
                return Err(ReaderError::NoPosition {
                    topic: topic.to_string(),
                    partition: parts[0],
                });
            };
            let resolved = self.resolve(&topic, &parts, reset).await?;
            for (p, o) in resolved {
                self.state_mut(&topic, p)?.position = Some(o);
            }
        }
        Ok(())
    }

    /// Sends a Fetch to every broker that leads partitions to fetch and
    /// has none in flight.
    async fn send_fetches(&mut self, only: Option<&BTreeSet<Key>>, round: &mut Round) {
        let topics: Vec<Arc<str>> = self.assignment.keys().cloned().collect();
        let topic_refs: Vec<&str> = topics.iter().map(|t| &**t).collect();
        if let Err(e) = self.ensure_metadata(&topic_refs).await {
            if e.is_retriable() {
                round.retry(e.to_string());
            } else {
                round.fail(e.into());
                return;
            }
        }
        // Plan: partitions grouped by leader, for the idle brokers.
        let mut plan: BTreeMap<i32, Vec<(Target, i32)>> = BTreeMap::new();
        let mut ids: HashMap<Arc<str>, Uuid> = HashMap::new();
        {
            let md = self.cluster.metadata();
            for (t, ps) in &self.assignment {
                if let Some(id) = md.topic_id(t) {
                    ids.insert(t.clone(), id);
                }
                for (p, st) in ps {
                    if only.is_some_and(|o| !o.contains(&(t.clone(), *p))) {
                        continue;
                    }
                    let Some(offset) = st.position else { continue };
                    match md.partition(t, *p) {
                        Some(pm) if pm.leader.is_some() => {
                            let leader = pm.leader.unwrap_or_default();
                            if self.busy.values().any(|b| b.node == leader) {
                                continue;
                            }
                            plan.entry(leader).or_default().push((
                                Target {
                                    topic: t.clone(),
                                    partition: *p,
                                    offset,
                                },
                                pm.leader_epoch,
                            ));
                        }
                        _ => {
                            round.retry(format!("no leader known for {t}-{p}"));
                        }
                    }
                }
            }
        }
        if round.retriable.is_some() {
            self.cluster.invalidate();
        }
        let ids = Arc::new(ids);
        // The buffered-bytes bound: what the Fetches in flight asked for is
        // taken; the rest is shared out between this round's brokers.
        let asked: i64 = self.busy.values().map(|b| i64::from(b.max_bytes)).sum();
        let budget = i64::from(self.config.max_buffered_bytes.max(1)) - asked;
        if budget <= 0 || plan.is_empty() {
            return;
        }
        let max_bytes = {
            let share = budget / plan.len() as i64;
            let (limit, _) = self.fetch_limits();
            i32::try_from(share).unwrap_or(i32::MAX).clamp(1, limit)
        };
        let request_timeout = self.cluster.config().connection.request_timeout;
        let max_wait = self.config.max_wait;
        self.rounds = self.rounds.wrapping_add(1);
        for (node, mut targets) in plan {
            let conn = match self.connection(node).await {
                Ok(c) => c,
                Err(e) if e.is_retriable() => {
                    round.retry(e.to_string());
                    continue;
                }
                Err(e) => {
                    round.fail(e);
                    continue;
                }
            };
            let version = match conn.versions().version_for::<FetchRequest>() {
                Ok(v) => v.min(self.config.fetch_max_version),
                Err(e) => {
                    round.fail(e.into());
                    continue;
                }
            };
            let by_id = version >= 13 && targets.iter().all(|(t, _)| ids.contains_key(&t.topic));
            let version = if version >= 13 && !by_id { 12 } else { version };
            let (_, partition_max_bytes) = self.fetch_limits();
            let req = if version >= 7 {
                // A session's request carries what changed; a full one
                // rotates the partition order (only the first partition
                // of an answer is sure to get a whole batch, KIP-74).
                let wanted: BTreeMap<session::Key, PartitionFetch> = targets
                    .iter()
                    .map(|(t, epoch)| {
                        (
                            (t.topic.clone(), t.partition),
                            PartitionFetch {
                                offset: t.offset,
                                leader_epoch: if version >= 9 { *epoch } else { -1 },
                                max_bytes: partition_max_bytes,
                            },
                        )
                    })
                    .collect();
                let plan = self.sessions.entry(node).or_default().build(&wanted);
                let mut sent: Vec<(Target, i32)> = plan
                    .partitions
                    .iter()
                    .map(|(k, f)| {
                        (
                            Target {
                                topic: k.0.clone(),
                                partition: k.1,
                                offset: f.offset,
                            },
                            f.leader_epoch,
                        )
                    })
                    .collect();
                if plan.is_full() && !sent.is_empty() {
                    let n = sent.len();
                    sent.rotate_left(self.rounds % n);
                }
                let mut req = self.fetch_request(version, &sent, &ids, max_wait, max_bytes);
                req.session_id = plan.session_id;
                req.session_epoch = plan.session_epoch;
                req.forgotten_topics_data = forgotten(version, &plan.forgotten, &ids);
                req
            } else {
                let n = targets.len();
                targets.rotate_left(self.rounds % n);
                self.fetch_request(version, &targets, &ids, max_wait, max_bytes)
            };
            let targets: Vec<Target> = targets.into_iter().map(|(t, _)| t).collect();
            let wait = request_timeout + max_wait;
            let ids = Arc::clone(&ids);
            let task = self.in_flight.spawn(async move {
                let resp = conn.send_with_timeout(&req, version, wait).await;
                Fetched {
                    node,
                    version,
                    targets,
                    ids,
                    resp,
                }
            });
            self.busy.insert(task.id(), InFlight { node, max_bytes });
        }
    }

    fn fetch_request(
        &self,
        version: i16,
        targets: &[(Target, i32)],
        ids: &HashMap<Arc<str>, Uuid>,
        max_wait: Duration,
        max_bytes: i32,
    ) -> FetchRequest {
        let (_, partition_max_bytes) = self.fetch_limits();
        let mut topics: Vec<FetchRequestTopic> = Vec::new();
        for (t, epoch) in targets {
            let part = FetchRequestPartition {
                partition: t.partition,
                current_leader_epoch: if version >= 9 { *epoch } else { -1 },
                fetch_offset: t.offset,
                partition_max_bytes,
                ..Default::default()
            };
            let (name, id) = if version >= 13 {
                (
                    String::new(),
                    ids.get(&t.topic).copied().unwrap_or_default(),
                )
            } else {
                (t.topic.to_string(), Uuid::default())
            };
            match topics
                .iter_mut()
                .find(|x| x.topic == name && x.topic_id == id)
            {
                Some(x) => x.partitions.push(part),
                None => topics.push(FetchRequestTopic {
                    topic: name,
                    topic_id: id,
                    partitions: vec![part],
                    ..Default::default()
                }),
            }
        }
        FetchRequest {
            max_wait_ms: i32::try_from(max_wait.as_millis()).unwrap_or(i32::MAX),
            min_bytes: self.config.min_bytes,
            max_bytes,
            isolation_level: self.config.isolation.wire(),
            topics,
            ..Default::default()
        }
    }

    fn handle_fetch_response(
        &mut self,
        version: i16,
        targets: &[Target],
        ids: &HashMap<Arc<str>, Uuid>,
        resp: FetchResponse,
        round: &mut Round,
    ) {
        let top = ErrorCode::from(resp.error_code);
        if !top.is_ok() {
            let e = ReaderError::Broker {
                api: ApiKey::Fetch,
                version,
                error: top,
                message: None,
            };
            if top.is_retriable() || top == ErrorCode::FetchSessionIdNotFound {
                round.retry(e.to_string());
            } else {
                round.fail(e);
            }
            return;
        }
        let isolation = self.config.isolation;
        let decode = self.config.decode;
        let mut first_in_answer = true;
        for rt in resp.responses {
            let topic: Option<Arc<str>> = if version >= 13 {
                ids.iter()
                    .find(|(_, id)| **id == rt.topic_id)
                    .map(|(t, _)| t.clone())
            } else {
                targets
                    .iter()
                    .find(|t| *t.topic == *rt.topic)
                    .map(|t| t.topic.clone())
            };
            let Some(topic) = topic else { continue };
            for pd in rt.partitions {
                let is_first = std::mem::replace(&mut first_in_answer, false);
                let Some(target) = targets
                    .iter()
                    .find(|t| t.topic == topic && t.partition == pd.partition_index)
                else {
                    continue;
                };
                let error = ErrorCode::from(pd.error_code);
                let partition = pd.partition_index;
                if !error.is_ok() {
                    if error == ErrorCode::OffsetOutOfRange {
                        round.fail(ReaderError::OffsetOutOfRange {
                            version,
                            topic: topic.to_string(),
                            partition,
                            offset: target.offset,
                        });
                        continue;
                    }
                    let e = ReaderError::Partition {
                        api: ApiKey::Fetch,
                        version,
                        topic: topic.to_string(),
                        partition,
                        error,
                    };
                    if needs_metadata(error) {
                        self.cluster.invalidate();
                        round.retry(e.to_string());
                    } else if retry_in_place(error) {
                        round.retry(e.to_string());
                    } else {
                        round.fail(e);
                    }
                    continue;
                }
                let Ok(state) = self.state_mut(&topic, partition) else {
                    continue;
                };
                if state.position != Some(target.offset) {
                    continue; // moved by a seek meanwhile
                }
                if pd.high_watermark >= 0 {
                    state.high_watermark = Some(pd.high_watermark);
                }
                if pd.last_stable_offset >= 0 {
                    state.last_stable_offset = Some(pd.last_stable_offset);
                }
                if pd.log_start_offset >= 0 {
                    state.log_start_offset = Some(pd.log_start_offset);
                }
                let Some(records) = pd.records.filter(|r| !r.is_empty()) else {
                    continue;
                };
                let bytes = records.len();
                let aborted = pd
                    .aborted_transactions
                    .unwrap_or_default()
                    .into_iter()
                    .map(|a| (a.producer_id, a.first_offset));
                match process_partition_records(
                    &topic,
                    partition,
                    isolation,
                    target.offset,
                    aborted,
                    records,
                    &decode,
                ) {
                    Ok(done) => {
                        if done.batches == 0 {
                            // Only part of a batch: the response's byte budget
                            // ran out. Fatal only for the answer's first
                            // partition, which brokers always give a whole
                            // batch (KIP-74).
                            if is_first {
                                round.fail(ReaderError::RecordTooLarge {
                                    topic: topic.to_string(),
                                    partition,
                                    offset: target.offset,
                                    bytes,
                                });
                            }
                            continue;
                        }
                        state.position = Some(done.next_offset);
                        round.records.extend(done.records);
                    }
                    Err((offset, source)) => round.fail(ReaderError::Corrupt {
                        topic: topic.to_string(),
                        partition,
                        offset,
                        source,
                    }),
                }
            }
        }
    }

    /// Reads `partitions` of `topic` from the earliest offset until each
    /// position reaches the end (high watermark, or under read_committed the
    /// last stable offset) as listed when the call started, and returns the
    /// records below those ends in fetch order. The partitions are added to
    /// the assignment and stay positioned at their ends. Bounded by
    /// `read_to_end_timeout`.
    ///
    /// ```no_run
    /// # async fn demo(reader: &mut kafka_consumer::reader::Reader) -> Result<(), kafka_consumer::reader::ReaderError> {
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
            self.state_mut(topic, *p)?.position = Some(*o);
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

    /// The committed offsets of `group_id` for `partitions` of `topic`
    /// (FindCoordinator(GROUP) then OffsetFetch; under read_committed with
    /// `require_stable`, so offsets of pending transactions are waited for).
    /// `None` where the group has no offset. Retried for up to `api_timeout`.
    ///
    /// ```no_run
    /// # async fn demo(reader: &kafka_consumer::reader::Reader) -> Result<(), kafka_consumer::reader::ReaderError> {
    /// let committed = reader.committed_offsets("billing", "orders", &[0, 1]).await?;
    /// println!("billing resumes orders-0 at {:?}", committed[&0]);
    /// # Ok(()) }
    /// ```
    pub async fn committed_offsets(
        &self,
        group_id: &str,
        topic: &str,
        partitions: &[i32],
    ) -> Result<BTreeMap<i32, Option<i64>>, ReaderError> {
        let deadline = Instant::now() + self.config.api_timeout;
        loop {
            let e = match self.committed_once(group_id, topic, partitions).await {
                Ok(r) => return Ok(r),
                Err(e) if e.is_retriable() => e,
                Err(e) => return Err(e),
            };
            tracing::debug!(error = %e, "reader: OffsetFetch retry");
            let now = Instant::now();
            if now >= deadline {
                return Err(ReaderError::Timeout {
                    what: format!("OffsetFetch {group_id} {topic} {partitions:?}"),
                    after: self.config.api_timeout,
                    last_error: Some(e.to_string()),
                });
            }
            tokio::time::sleep(self.config.retry_backoff.min(deadline - now)).await;
        }
    }

    /// The connection to `group_id`'s coordinator: FindCoordinator(GROUP)
    /// through [`kafka_client::find_coordinator`], once
    /// (a retriable error says so in [`ReaderError::is_retriable`]).
    ///
    /// ```no_run
    /// # async fn demo(reader: &kafka_consumer::reader::Reader) -> Result<(), kafka_consumer::reader::ReaderError> {
    /// let conn = reader.group_coordinator("billing").await?;
    /// println!("group billing is coordinated by {}", conn.addr());
    /// # Ok(()) }
    /// ```
    pub async fn group_coordinator(&self, group_id: &str) -> Result<Arc<Connection>, ReaderError> {
        let found = find_coordinator(&self.cluster, CoordinatorType::Group, group_id).await?;
        Ok(found.connection)
    }

    async fn committed_once(
        &self,
        group_id: &str,
        topic: &str,
        partitions: &[i32],
    ) -> Result<BTreeMap<i32, Option<i64>>, ReaderError> {
        let conn = self.group_coordinator(group_id).await?;
        let mut version = conn.versions().version_for::<OffsetFetchRequest>()?;
        let topic_id = if version >= 10 {
            self.ensure_metadata(&[topic]).await?;
            self.cluster.metadata().topic_id(topic)
        } else {
            None
        };
        if version >= 10 && topic_id.is_none() {
            version = 9;
        }
        let require_stable = version >= 7 && self.config.isolation == IsolationLevel::ReadCommitted;
        let req = if version >= 8 {
            OffsetFetchRequest {
                groups: vec![OffsetFetchRequestGroup {
                    group_id: group_id.to_string(),
                    topics: Some(vec![OffsetFetchRequestTopics {
                        name: if version >= 10 {
                            String::new()
                        } else {
                            topic.to_string()
                        },
                        topic_id: topic_id.unwrap_or_default(),
                        partition_indexes: partitions.to_vec(),
                        ..Default::default()
                    }]),
                    ..Default::default()
                }],
                require_stable,
                ..Default::default()
            }
        } else {
            OffsetFetchRequest {
                group_id: group_id.to_string(),
                topics: Some(vec![OffsetFetchRequestTopic {
                    name: topic.to_string(),
                    partition_indexes: partitions.to_vec(),
                    ..Default::default()
                }]),
                require_stable,
                ..Default::default()
            }
        };
        let resp = conn.send(&req, version).await?;
        // Flatten both shapes to (group error, [(partition, offset, error)]).
        let (group_error, parts): (i16, Vec<(i32, i64, i16)>) = if version >= 8 {
            let g = resp.groups.into_iter().find(|g| g.group_id == group_id);
            match g {
                Some(g) => (
                    g.error_code,
                    g.topics
                        .into_iter()
                        .filter(|t| {
                            if version >= 10 {
                                Some(t.topic_id) == topic_id
                            } else {
                                t.name == topic
                            }
                        })
                        .flat_map(|t| t.partitions)
                        .map(|p| (p.partition_index, p.committed_offset, p.error_code))
                        .collect(),
                ),
                None => (ErrorCode::CoordinatorNotAvailable.code(), Vec::new()),
            }
        } else {
            (
                resp.error_code,
                resp.topics
                    .into_iter()
                    .filter(|t| t.name == topic)
                    .flat_map(|t| t.partitions)
                    .map(|p| (p.partition_index, p.committed_offset, p.error_code))
                    .collect(),
            )
        };
        let group_error = ErrorCode::from(group_error);
        if !group_error.is_ok() {
            return Err(ReaderError::Broker {
                api: ApiKey::OffsetFetch,
                version,
                error: group_error,
                message: Some(format!("group {group_id}")),
            });
        }
        let mut out: BTreeMap<i32, Option<i64>> = partitions.iter().map(|p| (*p, None)).collect();
        for (p, offset, error) in parts {
            let error = ErrorCode::from(error);
            match error {
                ErrorCode::None => {
                    out.insert(p, (offset >= 0).then_some(offset));
                }
                // Java logs and leaves the partition without an offset.
                ErrorCode::UnknownTopicOrPartition => {}
                _ => {
                    return Err(ReaderError::Partition {
                        api: ApiKey::OffsetFetch,
                        version,
                        topic: topic.to_string(),
                        partition: p,
                        error,
                    });
                }
            }
        }
        Ok(out)
    }
}
