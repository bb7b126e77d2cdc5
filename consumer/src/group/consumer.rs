//! [`GroupConsumer`]: a member of a Kafka consumer group that reads the
//! partitions Kafka's group coordinator gives it, commits offsets, and
//! hands its group metadata to a transactional producer (KIP-447). Two
//! group protocols: KIP-848 (`group.protocol=consumer`, the default here:
//! the broker assigns, [`Membership`]) and the classic one
//! (`group.protocol=classic`, JoinGroup/SyncGroup with a client-side
//! assignor, [`ClassicMember`]; the only one before Kafka 4.0). Both give
//! the same [`ConsumerEvent`]s.
//!
//! Work is split between two places, as in Java's `AsyncKafkaConsumer`:
//!
//! - a background task sends the requests of the member's state machine
//!   (KIP-848 heartbeats; or JoinGroup, SyncGroup, Heartbeat and LeaveGroup,
//!   the group leader running the assignor), so a slow application does
//!   not miss its session; it also finds the coordinator and detects a
//!   missed `max.poll.interval.ms`;
//! - [`GroupConsumer::poll`], called by the application, turns the member's
//!   decisions into [`ConsumerEvent`]s and fetches records through a
//!   [`Reader`] (read_committed filtering, positions, offset resets).
//!
//! Rebalances are events, not callbacks: [`ConsumerEvent::Revoked`] means
//! the consumer stopped fetching those partitions; the application commits
//! what it consumed from them (or commits or aborts its transaction), and
//! the revocation is confirmed to the group by the **next** `poll` — only
//! then can another member get them. [`ConsumerEvent::Assigned`] partitions
//! are read from their committed offsets (OffsetFetch with `RequireStable`)
//! or `auto.offset.reset`. [`ConsumerEvent::Lost`] partitions were taken
//! away (the member was fenced or missed its poll interval): nothing may be
//! committed for them any more.
//!
//! Under the classic protocol an eager member (any assignor list that
//! includes `range`, such as Java's default) gets every partition
//! [`Revoked`](ConsumerEvent::Revoked) before each rebalance; a
//! cooperative one (`partition.assignment.strategy=cooperative-sticky`)
//! only the partitions that move, which reach their new owner in a
//! follow-up rebalance.

use crate::group::classic::assignor::Assignor;
use crate::group::classic::{ClassicAction, ClassicConfig, ClassicMember, ClassicState, Request};
use crate::group::commit::{CommitQueue, Committer, PendingCommit};
use crate::group::membership::{
    Heartbeat, HeartbeatAnswer, MemberAction, MemberError, MemberState, Membership,
    MembershipConfig, TopicPartitions,
};
use crate::reader::{ConsumerRecord, IsolationLevel, Offset, Reader, ReaderConfig, ReaderError};
use kafka_client::TopicPartition;
use kafka_client::cluster::Cluster;
use kafka_client::config::{ClientConfig, ConfigError};
use kafka_client::connection::Connection;
use kafka_client::{CoordinatorType, GroupMetadata, OffsetAndMetadata, find_coordinator};
use kafka_proto::messages::{
    ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatRequestTopicPartitions,
    ConsumerGroupHeartbeatResponse, HeartbeatRequest, JoinGroupRequest, LeaveGroupRequest,
    SyncGroupRequest,
};
use kafka_proto::{ApiKey, ErrorCode};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// Settings of a [`GroupConsumer`].
///
/// ```
/// use kafka_consumer::group::GroupConsumerConfig;
/// let c = GroupConsumerConfig::from_properties([
///     ("bootstrap.servers", "127.0.0.1:9092"),
///     ("group.id", "billing"),
///     ("isolation.level", "read_committed"),
///     ("auto.offset.reset", "earliest"),
/// ])
/// .unwrap();
/// assert_eq!(c.group_id, "billing");
/// assert_eq!(c.max_poll_interval.as_secs(), 300);
/// ```
#[derive(Debug, Clone)]
pub struct GroupConsumerConfig {
    /// `group.id`.
    pub group_id: String,
    /// `group.instance.id` (static membership).
    pub instance_id: Option<String>,
    /// `client.rack`.
    pub rack_id: Option<String>,
    /// `max.poll.interval.ms` (default 300 s): the most time between two
    /// [`GroupConsumer::poll`] calls before the member leaves the group.
    pub max_poll_interval: Duration,
    /// `group.remote.assignor`: the broker-side assignor to use (KIP-848
    /// only).
    pub server_assignor: Option<String>,
    /// `group.protocol`.
    pub protocol: GroupProtocol,
    /// `session.timeout.ms` (classic only, default 45 s): the coordinator
    /// removes a member whose heartbeats stop for this long.
    pub session_timeout: Duration,
    /// `heartbeat.interval.ms` (classic only, default 3 s).
    pub heartbeat_interval: Duration,
    /// `partition.assignment.strategy` (classic only, default Java's
    /// `[range, cooperative-sticky]`), in order of preference.
    pub assignors: Vec<Assignor>,
    /// `retry.backoff.ms` (default 100 ms).
    pub retry_backoff: Duration,
    /// `retry.backoff.max.ms` (default 1 s).
    pub retry_backoff_max: Duration,
    /// `default.api.timeout.ms` (default 60 s): bound on commits and
    /// offset lookups.
    pub api_timeout: Duration,
    /// `auto.commit.interval.ms` when `enable.auto.commit=true`; `None`
    /// (the default here, unlike Java's) when the application commits, as
    /// a transactional pipeline must. With auto-commit, [`GroupConsumer::poll`]
    /// commits the positions (what earlier polls returned) every interval,
    /// and the positions of revoked partitions before reporting the
    /// revocation, and [`GroupConsumer::close`] commits them: at least
    /// once, as in Java.
    pub auto_commit_interval: Option<Duration>,
    /// Fetching: `isolation.level`, `auto.offset.reset`, `fetch.*`.
    pub reader: ReaderConfig,
    /// Connections: `bootstrap.servers`, `client.id`, security settings.
    pub connection: ClientConfig,
}

/// `group.protocol`: who assigns the partitions.
///
/// ```
/// use kafka_consumer::group::{GroupConsumerConfig, GroupProtocol};
/// let c = GroupConsumerConfig::from_properties([
///     ("bootstrap.servers", "127.0.0.1:9092"),
///     ("group.id", "g"),
///     ("group.protocol", "classic"),
///     ("partition.assignment.strategy", "cooperative-sticky"),
/// ])
/// .unwrap();
/// assert_eq!(c.protocol, GroupProtocol::Classic);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum GroupProtocol {
    /// KIP-848 (`consumer`, the default of this client; Kafka 4.0+): the
    /// broker assigns, the member heartbeats and reconciles.
    #[default]
    Consumer,
    /// The classic protocol (`classic`): JoinGroup/SyncGroup, the group
    /// leader runs a client-side assignor.
    Classic,
}

pub use kafka_client::config::is_connection_property;

fn invalid(key: &str, value: &str, reason: &str) -> ConfigError {
    ConfigError::InvalidValue {
        key: key.into(),
        value: value.into(),
        reason: reason.into(),
    }
}

fn millis(key: &str, value: &str, min: u64) -> Result<Duration, ConfigError> {
    match value.parse::<u64>() {
        Ok(v) if v >= min && v <= i32::MAX as u64 => Ok(Duration::from_millis(v)),
        _ => Err(invalid(
            key,
            value,
            &format!("expected milliseconds >= {min}"),
        )),
    }
}

fn bytes(key: &str, value: &str) -> Result<i32, ConfigError> {
    match value.parse::<i32>() {
        Ok(v) if v >= 0 => Ok(v),
        _ => Err(invalid(key, value, "expected a non-negative byte count")),
    }
}

/// True for the properties [`GroupConsumerConfig::from_properties`] takes
/// that a producer does not (`group.id`, `isolation.level`, `fetch.*`, …):
/// a command line that passes one `-X` list to a consumer and a producer
/// splits it with this.
///
/// ```
/// use kafka_consumer::group::consumer::is_consumer_property;
/// assert!(is_consumer_property("isolation.level"));
/// assert!(!is_consumer_property("bootstrap.servers"));
/// assert!(!is_consumer_property("linger.ms"));
/// ```
pub fn is_consumer_property(key: &str) -> bool {
    matches!(
        key,
        "group.id"
            | "group.instance.id"
            | "group.protocol"
            | "group.remote.assignor"
            | "session.timeout.ms"
            | "heartbeat.interval.ms"
            | "partition.assignment.strategy"
            | "client.rack"
            | "enable.auto.commit"
            | "auto.commit.interval.ms"
            | "max.poll.interval.ms"
            | "retry.backoff.max.ms"
            | "default.api.timeout.ms"
            | "isolation.level"
            | "auto.offset.reset"
            | "fetch.max.bytes"
            | "max.partition.fetch.bytes"
            | "fetch.min.bytes"
            | "fetch.max.wait.ms"
    )
}

impl GroupConsumerConfig {
    /// Settings from Java consumer property names. `group.id` and
    /// `bootstrap.servers` are required. `group.protocol` is `consumer`
    /// (KIP-848, the default) or `classic`; as in Java,
    /// `session.timeout.ms`, `heartbeat.interval.ms` and
    /// `partition.assignment.strategy` (short names or Java class names of
    /// `range` and `cooperative-sticky`) are refused under `consumer`, and
    /// `group.remote.assignor` under `classic`. `enable.auto.commit`
    /// defaults to false (Java's default is true): offsets are committed by
    /// the application ([`GroupConsumer::commit`]) or in its transaction;
    /// `true` commits every `auto.commit.interval.ms` (default 5 s). Any
    /// other key is refused, so that no setting is silently ignored.
    ///
    /// ```
    /// use kafka_consumer::group::GroupConsumerConfig;
    /// let err = GroupConsumerConfig::from_properties([
    ///     ("bootstrap.servers", "127.0.0.1:9092"),
    ///     ("group.id", "g"),
    ///     ("linger.ms", "5"),
    /// ])
    /// .unwrap_err();
    /// assert_eq!(err.key(), "linger.ms");
    /// // Classic-only settings under KIP-848 are refused, as in Java.
    /// let err = GroupConsumerConfig::from_properties([
    ///     ("bootstrap.servers", "127.0.0.1:9092"),
    ///     ("group.id", "g"),
    ///     ("session.timeout.ms", "10000"),
    /// ])
    /// .unwrap_err();
    /// assert_eq!(err.key(), "session.timeout.ms");
    /// ```
    pub fn from_properties<I, K, V>(props: I) -> Result<Self, ConfigError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut connection = Vec::new();
        let mut group_id = None;
        // (key, value) of the last setting that only one protocol accepts.
        let mut classic_only: Option<(String, String)> = None;
        let mut consumer_only: Option<(String, String)> = None;
        let mut auto_commit = false;
        let mut auto_commit_interval = Duration::from_secs(5);
        let mut c = Self {
            group_id: String::new(),
            instance_id: None,
            rack_id: None,
            max_poll_interval: Duration::from_secs(300),
            server_assignor: None,
            protocol: GroupProtocol::Consumer,
            session_timeout: Duration::from_secs(45),
            heartbeat_interval: Duration::from_secs(3),
            assignors: Assignor::DEFAULT.to_vec(),
            retry_backoff: Duration::from_millis(100),
            retry_backoff_max: Duration::from_secs(1),
            api_timeout: Duration::from_secs(60),
            auto_commit_interval: None,
            reader: ReaderConfig::default(),
            connection: ClientConfig::new(""),
        };
        for (k, v) in props {
            let (key, value) = (k.as_ref().trim(), v.as_ref().trim());
            match key {
                k if is_connection_property(k) => {
                    connection.push((k.to_string(), value.to_string()))
                }
                "group.id" if !value.is_empty() => group_id = Some(value.to_string()),
                "group.id" => return Err(invalid(key, value, "must not be empty")),
                "group.instance.id" if !value.is_empty() => c.instance_id = Some(value.into()),
                "group.instance.id" => return Err(invalid(key, value, "must not be empty")),
                "client.rack" => c.rack_id = Some(value.into()).filter(|r: &String| !r.is_empty()),
                "group.remote.assignor" => {
                    c.server_assignor = Some(value.into());
                    consumer_only = Some((key.into(), value.into()));
                }
                "group.protocol" => {
                    c.protocol = if value.eq_ignore_ascii_case("consumer") {
                        GroupProtocol::Consumer
                    } else if value.eq_ignore_ascii_case("classic") {
                        GroupProtocol::Classic
                    } else {
                        return Err(invalid(key, value, "expected consumer or classic"));
                    }
                }
                "session.timeout.ms" => {
                    c.session_timeout = millis(key, value, 1)?;
                    classic_only = Some((key.into(), value.into()));
                }
                "heartbeat.interval.ms" => {
                    c.heartbeat_interval = millis(key, value, 1)?;
                    classic_only = Some((key.into(), value.into()));
                }
                "partition.assignment.strategy" => {
                    let mut list = Vec::new();
                    for name in value.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                        match Assignor::from_config(name) {
                            Some(a) if !list.contains(&a) => list.push(a),
                            Some(_) => {}
                            None => {
                                return Err(invalid(
                                    key,
                                    value,
                                    "expected range or cooperative-sticky (or their Java class names)",
                                ));
                            }
                        }
                    }
                    if list.is_empty() {
                        return Err(invalid(key, value, "at least one assignor is needed"));
                    }
                    c.assignors = list;
                    classic_only = Some((key.into(), value.into()));
                }
                "enable.auto.commit" => {
                    auto_commit = match value {
                        "true" => true,
                        "false" => false,
                        _ => return Err(invalid(key, value, "expected true or false")),
                    }
                }
                "auto.commit.interval.ms" => auto_commit_interval = millis(key, value, 0)?,
                "max.poll.interval.ms" => c.max_poll_interval = millis(key, value, 1)?,
                "retry.backoff.ms" => c.retry_backoff = millis(key, value, 0)?,
                "retry.backoff.max.ms" => c.retry_backoff_max = millis(key, value, 0)?,
                "default.api.timeout.ms" => {
                    c.api_timeout = millis(key, value, 0)?;
                    c.reader.api_timeout = c.api_timeout;
                }
                "isolation.level" => {
                    c.reader.isolation = match value {
                        "read_committed" => IsolationLevel::ReadCommitted,
                        "read_uncommitted" => IsolationLevel::ReadUncommitted,
                        _ => {
                            return Err(invalid(
                                key,
                                value,
                                "expected read_committed or read_uncommitted",
                            ));
                        }
                    }
                }
                "auto.offset.reset" => {
                    c.reader.auto_offset_reset = match value {
                        "earliest" => Some(Offset::Earliest),
                        "latest" => Some(Offset::Latest),
                        "none" => None,
                        _ => return Err(invalid(key, value, "expected earliest, latest or none")),
                    }
                }
                "fetch.max.bytes" => c.reader.max_bytes = bytes(key, value)?,
                "max.partition.fetch.bytes" => c.reader.partition_max_bytes = bytes(key, value)?,
                "fetch.min.bytes" => c.reader.min_bytes = bytes(key, value)?,
                "fetch.max.wait.ms" => c.reader.max_wait = millis(key, value, 0)?,
                other => return Err(ConfigError::UnknownKey(other.to_string())),
            }
        }
        c.group_id = group_id.ok_or_else(|| ConfigError::Missing("group.id".into()))?;
        c.auto_commit_interval = auto_commit.then_some(auto_commit_interval);
        match (c.protocol, classic_only, consumer_only) {
            (GroupProtocol::Consumer, Some((k, v)), _) => {
                return Err(invalid(
                    &k,
                    &v,
                    "not supported with group.protocol=consumer (the broker sets it): remove it or set group.protocol=classic",
                ));
            }
            (GroupProtocol::Classic, _, Some((k, v))) => {
                return Err(invalid(
                    &k,
                    &v,
                    "only supported with group.protocol=consumer: use partition.assignment.strategy",
                ));
            }
            _ => {}
        }
        if c.protocol == GroupProtocol::Classic && c.heartbeat_interval >= c.session_timeout {
            return Err(invalid(
                "heartbeat.interval.ms",
                &c.heartbeat_interval.as_millis().to_string(),
                "must be lower than session.timeout.ms",
            ));
        }
        c.reader.retry_backoff = c.retry_backoff;
        c.connection = ClientConfig::from_properties(
            [("client.id", "kafka-eos-consumer")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .chain(connection),
        )?;
        Ok(c)
    }

    fn membership(&self, member_id: String) -> MembershipConfig {
        let mut m = MembershipConfig::new(self.group_id.clone(), member_id);
        m.instance_id = self.instance_id.clone();
        m.rack_id = self.rack_id.clone();
        m.rebalance_timeout = self.max_poll_interval;
        m.server_assignor = self.server_assignor.clone();
        m.retry_backoff = self.retry_backoff;
        m.retry_backoff_max = self.retry_backoff_max;
        m
    }

    fn classic(&self) -> ClassicConfig {
        let mut c = ClassicConfig::new(self.group_id.clone());
        c.instance_id = self.instance_id.clone();
        c.rack_id = self.rack_id.clone();
        c.session_timeout = self.session_timeout;
        c.rebalance_timeout = self.max_poll_interval;
        c.heartbeat_interval = self.heartbeat_interval;
        c.assignors = self.assignors.clone();
        c.retry_backoff = self.retry_backoff;
        c
    }
}

/// What one [`GroupConsumer::poll`] returns.
///
/// ```
/// use kafka_consumer::group::ConsumerEvent;
/// let e = ConsumerEvent::Records(vec![]);
/// assert!(matches!(e, ConsumerEvent::Records(r) if r.is_empty()));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConsumerEvent {
    /// Records of the owned partitions, in offset order per partition
    /// (empty when the timeout passed first).
    Records(Vec<ConsumerRecord>),
    /// These partitions are now owned; they are read from their committed
    /// offsets (or `auto.offset.reset`).
    Assigned(Vec<TopicPartition>),
    /// These partitions are being taken away: no more records come from
    /// them. Commit what was consumed from them (or end the transaction that
    /// holds their offsets) before the next `poll`, which confirms the
    /// revocation to the group.
    Revoked(Vec<TopicPartition>),
    /// These partitions were taken away without a revocation (the member was
    /// fenced or missed `max.poll.interval.ms`): their offsets can no longer
    /// be committed; a transaction holding them must be aborted.
    Lost(Vec<TopicPartition>),
}

/// Why a [`GroupConsumer`] call failed.
///
/// ```
/// use kafka_consumer::group::GroupError;
/// use kafka_proto::ErrorCode;
/// let e = GroupError::Commit { error: ErrorCode::StaleMemberEpoch, message: None };
/// assert!(!e.is_fatal());
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GroupError {
    /// The group membership failed; see [`Self::is_fatal`].
    #[error(transparent)]
    Member(#[from] MemberError),
    /// Fetching or an offset lookup failed.
    #[error(transparent)]
    Reader(#[from] ReaderError),
    /// OffsetCommit was refused (e.g. STALE_MEMBER_EPOCH or
    /// UNKNOWN_MEMBER_ID after a rebalance: the partitions may belong to
    /// another member now). Nothing was committed for the failed partitions.
    #[error("offset commit failed: {error:?}{}", message.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    Commit {
        /// The broker's error.
        error: ErrorCode,
        /// Its message.
        message: Option<String>,
    },
    /// No answer within `default.api.timeout.ms`: the outcome is unknown.
    #[error("{what} timed out after {after:?}{}", last_error.as_deref().map(|e| format!(" (last error: {e})")).unwrap_or_default())]
    Timeout {
        /// The operation.
        what: String,
        /// The bound.
        after: Duration,
        /// The last retriable error.
        last_error: Option<String>,
    },
    /// The consumer is closed.
    #[error("the consumer is closed")]
    Closed,
}

impl GroupError {
    /// True when the consumer cannot go on (the member stopped for good).
    ///
    /// ```
    /// use kafka_consumer::group::GroupError;
    /// assert!(GroupError::Closed.is_fatal());
    /// ```
    pub fn is_fatal(&self) -> bool {
        match self {
            GroupError::Member(e) => e.error != ErrorCode::TopicAuthorizationFailed,
            GroupError::Closed => true,
            _ => false,
        }
    }
}

/// A confirmation the next poll owes the group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owed {
    Revocation,
    Lost,
}

/// The member of either protocol.
#[derive(Debug)]
pub(super) enum Member {
    Kip848(Membership),
    Classic(ClassicMember),
}

impl Member {
    /// The KIP-848 member (only its own task calls this).
    fn kip848(&mut self) -> &mut Membership {
        match self {
            Member::Kip848(m) => m,
            Member::Classic(_) => unreachable!("the KIP-848 task drives a KIP-848 member"),
        }
    }

    fn classic(&mut self) -> &mut ClassicMember {
        match self {
            Member::Classic(m) => m,
            Member::Kip848(_) => unreachable!("the classic task drives a classic member"),
        }
    }

    fn state(&self) -> MemberState {
        match self {
            Member::Kip848(m) => m.state(),
            Member::Classic(m) => m.state().member_state(),
        }
    }

    /// The member epoch or the generation.
    pub(super) fn generation(&self) -> i32 {
        match self {
            Member::Kip848(m) => m.epoch(),
            Member::Classic(m) => m.generation(),
        }
    }

    pub(super) fn member_id(&self) -> &str {
        match self {
            Member::Kip848(m) => m.member_id(),
            Member::Classic(m) => m.member_id(),
        }
    }

    fn rejoin(&mut self) -> bool {
        match self {
            Member::Kip848(m) => m.rejoin(),
            Member::Classic(m) => m.rejoin(),
        }
    }

    fn revocation_done(&mut self) -> bool {
        match self {
            Member::Kip848(m) => m.revocation_done(),
            Member::Classic(m) => m.revocation_done(),
        }
    }

    fn lost_done(&mut self) -> bool {
        match self {
            Member::Kip848(m) => m.lost_done(),
            Member::Classic(m) => m.lost_done(),
        }
    }

    fn assignment_done(&mut self) -> bool {
        match self {
            Member::Kip848(m) => m.assignment_done(),
            Member::Classic(m) => m.assignment_done(),
        }
    }
}

/// A member decision queued for [`GroupConsumer::poll`].
#[derive(Debug)]
enum Queued {
    Kip848(MemberAction),
    Classic(ClassicAction),
}

#[derive(Debug)]
pub(super) struct Shared {
    pub(super) member: Member,
    /// Decisions for the application, in order.
    events: std::collections::VecDeque<Queued>,
    pub(super) coordinator: Option<Arc<Connection>>,
    last_poll: Instant,
    fatal: Option<MemberError>,
    pub(super) closing: bool,
}

/// A consumer-group member (see the module docs).
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// use kafka_consumer::group::{ConsumerEvent, GroupConsumer, GroupConsumerConfig};
/// use std::time::Duration;
/// let config = GroupConsumerConfig::from_properties([
///     ("bootstrap.servers", "127.0.0.1:9092"),
///     ("group.id", "billing"),
/// ])?;
/// let mut consumer = GroupConsumer::subscribe(config, ["orders"]).await?;
/// loop {
///     match consumer.poll(Duration::from_secs(1)).await? {
///         ConsumerEvent::Records(records) => {
///             for r in &records {
///                 println!("{}-{}@{}", r.topic, r.partition, r.offset);
///             }
///             consumer.commit_positions().await?;
///         }
///         ConsumerEvent::Revoked(_) => consumer.commit_positions().await?,
///         ConsumerEvent::Assigned(_) | ConsumerEvent::Lost(_) => {}
///     }
/// }
/// # }
/// ```
#[derive(Debug)]
pub struct GroupConsumer {
    config: GroupConsumerConfig,
    cluster: Arc<Cluster>,
    reader: Reader,
    shared: Arc<Mutex<Shared>>,
    /// Wakes the heartbeat task.
    wake_task: Arc<Notify>,
    /// Wakes a waiting poll when an event arrives.
    wake_poll: Arc<Notify>,
    owed: Option<Owed>,
    /// Positions of the partitions being revoked, committable until the
    /// next poll confirms the revocation.
    revoking: Vec<(TopicPartition, i64)>,
    /// What the application was told it owns.
    owned: BTreeSet<TopicPartition>,
    /// The leader epoch of the last record returned per partition.
    epochs: BTreeMap<TopicPartition, i32>,
    /// Every offset commit, in order.
    commits: CommitQueue,
    /// When the next auto-commit is due (with `enable.auto.commit`).
    next_auto_commit: Option<Instant>,
    task: tokio::task::JoinHandle<()>,
}

impl Shared {
    pub(super) fn new(member: Member) -> Self {
        Self {
            member,
            events: Default::default(),
            coordinator: None,
            last_poll: Instant::now(),
            fatal: None,
            closing: false,
        }
    }
}

pub(super) fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(|p| p.into_inner())
}

fn random_member_id() -> String {
    let b: [u8; 16] = rand::random();
    let mut s = String::with_capacity(22);
    base64::Engine::encode_string(&base64::engine::general_purpose::URL_SAFE_NO_PAD, b, &mut s);
    s
}

impl GroupConsumer {
    /// Connects, subscribes to `topics` and starts heartbeating; the first
    /// [`Self::poll`]s return the assignment.
    ///
    /// ```no_run
    /// # async fn demo(config: kafka_consumer::group::GroupConsumerConfig) -> Result<(), kafka_consumer::group::GroupError> {
    /// let consumer = kafka_consumer::group::GroupConsumer::subscribe(config, ["orders", "refunds"]).await?;
    /// println!("member {}", consumer.member_id());
    /// # Ok(()) }
    /// ```
    pub async fn subscribe<S: AsRef<str>>(
        config: GroupConsumerConfig,
        topics: impl IntoIterator<Item = S>,
    ) -> Result<Self, GroupError> {
        let topics: Vec<String> = topics.into_iter().map(|t| t.as_ref().to_string()).collect();
        let cluster = Cluster::connect(config.connection.cluster_config())
            .await
            .map_err(ReaderError::from)?;
        cluster.track_topics(&topics);
        if let Err(e) = cluster.refresh().await {
            tracing::debug!(error = %e, "group consumer: first metadata refresh failed");
        }
        let member = match config.protocol {
            GroupProtocol::Consumer => {
                let mut m = Membership::new(config.membership(random_member_id()));
                m.subscribe(topics);
                Member::Kip848(m)
            }
            GroupProtocol::Classic => {
                let mut m = ClassicMember::new(config.classic());
                m.subscribe(topics);
                Member::Classic(m)
            }
        };
        let shared = Arc::new(Mutex::new(Shared::new(member)));
        let wake_task = Arc::new(Notify::new());
        let wake_poll = Arc::new(Notify::new());
        let t = HeartbeatTask {
            shared: shared.clone(),
            cluster: cluster.clone(),
            wake_task: wake_task.clone(),
            wake_poll: wake_poll.clone(),
            group_id: config.group_id.clone(),
            max_poll_interval: config.max_poll_interval,
            retry_backoff: config.retry_backoff,
            request_timeout: config.connection.request_timeout,
        };
        let task = match config.protocol {
            GroupProtocol::Consumer => tokio::spawn(heartbeat_task(t)),
            GroupProtocol::Classic => tokio::spawn(classic_task(t, config.max_poll_interval)),
        };
        let reader = Reader::new(cluster.clone(), config.reader.clone());
        let commits = CommitQueue::start(Committer {
            shared: shared.clone(),
            wake_task: wake_task.clone(),
            group_id: config.group_id.clone(),
            instance_id: config.instance_id.clone(),
            retry_backoff: config.retry_backoff,
            api_timeout: config.api_timeout,
        });
        let next_auto_commit = config.auto_commit_interval.map(|i| Instant::now() + i);
        Ok(Self {
            config,
            cluster,
            reader,
            shared,
            wake_task,
            wake_poll,
            owed: None,
            revoking: Vec::new(),
            owned: BTreeSet::new(),
            epochs: BTreeMap::new(),
            commits,
            next_auto_commit,
            task,
        })
    }

    /// The member id (KIP-848: generated once, kept for the consumer's
    /// life; classic: given by the coordinator, "" until the first join).
    ///
    /// ```no_run
    /// # fn demo(c: &kafka_consumer::group::GroupConsumer) {
    /// println!("{}", c.member_id());
    /// # }
    /// ```
    pub fn member_id(&self) -> String {
        lock(&self.shared).member.member_id().to_string()
    }

    /// The member's state.
    ///
    /// ```no_run
    /// # fn demo(c: &kafka_consumer::group::GroupConsumer) {
    /// println!("{:?}", c.state());
    /// # }
    /// ```
    pub fn state(&self) -> MemberState {
        lock(&self.shared).member.state()
    }

    /// The partitions this consumer owns (as last reported by events).
    ///
    /// ```no_run
    /// # fn demo(c: &kafka_consumer::group::GroupConsumer) {
    /// for tp in c.assignment() { println!("{tp}"); }
    /// # }
    /// ```
    pub fn assignment(&self) -> Vec<TopicPartition> {
        self.owned.iter().cloned().collect()
    }

    /// The group metadata for
    /// [`TransactionalProducer::send_offsets_to_transaction`](crate::TransactionalProducer::send_offsets_to_transaction)
    /// (Java's `groupMetadata()`): the member id, the member epoch (KIP-848)
    /// or the generation (classic) and the instance id, so that the group coordinator fences
    /// the offsets of a member that lost its partitions (KIP-447).
    ///
    /// ```no_run
    /// # fn demo(c: &kafka_consumer::group::GroupConsumer) {
    /// let g = c.group_metadata();
    /// assert!(g.generation_id >= 0);
    /// # }
    /// ```
    pub fn group_metadata(&self) -> GroupMetadata {
        let s = lock(&self.shared);
        GroupMetadata {
            group_id: self.config.group_id.clone(),
            generation_id: s.member.generation(),
            member_id: s.member.member_id().to_string(),
            group_instance_id: self.config.instance_id.clone(),
        }
    }

    /// The next offset to read of every owned partition that has one, and
    /// of the partitions just revoked (until the next poll): what to commit
    /// for the records returned so far.
    ///
    /// ```no_run
    /// # fn demo(c: &kafka_consumer::group::GroupConsumer) {
    /// for (tp, next) in c.positions() { println!("{tp} resumes at {next}"); }
    /// # }
    /// ```
    pub fn positions(&self) -> Vec<(TopicPartition, i64)> {
        let mut out = self.positions_of(self.owned.iter());
        out.extend(self.revoking.iter().cloned());
        out
    }

    /// The next offset to read of each of `parts` that has one.
    fn positions_of<'a>(
        &self,
        parts: impl Iterator<Item = &'a TopicPartition>,
    ) -> Vec<(TopicPartition, i64)> {
        parts
            .filter_map(|tp| {
                self.reader
                    .position(&tp.topic, tp.partition)
                    .map(|p| (tp.clone(), p))
            })
            .collect()
    }

    /// Waits up to `timeout` for the next event: a rebalance step, or
    /// records. Confirms the revocation or loss returned by the previous
    /// call first (see [`ConsumerEvent::Revoked`]).
    ///
    /// ```no_run
    /// # async fn demo(c: &mut kafka_consumer::group::GroupConsumer) -> Result<(), kafka_consumer::group::GroupError> {
    /// use kafka_consumer::group::ConsumerEvent;
    /// if let ConsumerEvent::Records(r) = c.poll(std::time::Duration::from_millis(500)).await? {
    ///     println!("{} records", r.len());
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn poll(&mut self, timeout: Duration) -> Result<ConsumerEvent, GroupError> {
        let deadline = Instant::now() + timeout;
        self.confirm_owed();
        self.maybe_auto_commit();
        {
            let mut s = lock(&self.shared);
            if s.closing {
                return Err(GroupError::Closed);
            }
            s.last_poll = Instant::now();
            if s.member.rejoin() {
                tracing::info!(group = %self.config.group_id, "group consumer: rejoining after a poll timeout");
            }
        }
        self.wake_task.notify_one();
        loop {
            let next = {
                let mut s = lock(&self.shared);
                if let Some(e) = &s.fatal {
                    return Err(GroupError::Member(e.clone()));
                }
                s.events.pop_front()
            };
            if let Some(action) = next {
                if let Some(event) = self.apply(action).await? {
                    return Ok(event);
                }
                continue;
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(ConsumerEvent::Records(Vec::new()));
            }
            let slice = (deadline - now).min(Duration::from_millis(200));
            if self.owned.is_empty() {
                let notified = self.wake_poll.notified();
                let _ = tokio::time::timeout(slice, notified).await;
                continue;
            }
            let records = self.reader.poll(slice).await?;
            if !records.is_empty() {
                self.note_epochs(&records);
                return Ok(ConsumerEvent::Records(records));
            }
        }
    }

    /// Remembers the leader epoch of each partition's last record.
    fn note_epochs(&mut self, records: &[ConsumerRecord]) {
        for (i, r) in records.iter().enumerate() {
            let last_of_run = records
                .get(i + 1)
                .is_none_or(|n| n.partition != r.partition || n.topic != r.topic);
            if let (true, Some(epoch)) = (last_of_run, r.leader_epoch) {
                let tp = TopicPartition {
                    topic: r.topic.clone(),
                    partition: r.partition,
                };
                self.epochs.insert(tp, epoch);
            }
        }
    }

    /// [`Self::positions`] with the leader epoch of each partition's last
    /// returned record: the offsets to hand to
    /// [`TransactionalProducer::send_offsets_and_metadata_to_transaction`](crate::TransactionalProducer::send_offsets_and_metadata_to_transaction).
    ///
    /// ```no_run
    /// # fn demo(c: &kafka_consumer::group::GroupConsumer) {
    /// for (tp, o) in c.transaction_offsets() {
    ///     println!("{tp}: next {} (leader epoch {:?})", o.offset, o.leader_epoch);
    /// }
    /// # }
    /// ```
    pub fn transaction_offsets(&self) -> Vec<(TopicPartition, OffsetAndMetadata)> {
        self.positions()
            .into_iter()
            .map(|(tp, offset)| {
                let leader_epoch = self.epochs.get(&tp).copied();
                (
                    tp,
                    OffsetAndMetadata {
                        offset,
                        leader_epoch,
                        metadata: None,
                    },
                )
            })
            .collect()
    }

    fn confirm_owed(&mut self) {
        self.revoking.clear();
        let Some(owed) = self.owed.take() else {
            return;
        };
        let mut s = lock(&self.shared);
        match owed {
            Owed::Revocation => s.member.revocation_done(),
            Owed::Lost => s.member.lost_done(),
        };
        drop(s);
        self.wake_task.notify_one();
    }

    fn names(&self, tp: &TopicPartitions) -> Vec<TopicPartition> {
        let md = self.cluster.metadata();
        let mut out = Vec::new();
        for (id, parts) in tp {
            let Some(name) = md.topic_name(id) else {
                tracing::warn!(topic_id = ?id, "group consumer: topic id without a name");
                continue;
            };
            out.extend(parts.iter().map(|p| TopicPartition::new(name, *p)));
        }
        out
    }

    fn release(&mut self, parts: &[TopicPartition]) {
        for tp in parts {
            self.reader.unassign(&tp.topic, &[tp.partition]);
            self.owned.remove(tp);
            self.epochs.remove(tp);
        }
    }

    /// Turns a member decision into an event (or handles it silently).
    async fn apply(&mut self, action: Queued) -> Result<Option<ConsumerEvent>, GroupError> {
        let action = match action {
            Queued::Kip848(a) => a,
            Queued::Classic(a) => return self.apply_classic(a).await,
        };
        match action {
            MemberAction::Revoke(tp) => {
                let parts = self.names(&tp);
                self.revoking = self.positions_of(parts.iter());
                self.release(&parts);
                self.auto_commit_revoked().await;
                self.owed = Some(Owed::Revocation);
                Ok(Some(ConsumerEvent::Revoked(parts)))
            }
            MemberAction::Lost(tp) => {
                let parts = self.names(&tp);
                self.release(&parts);
                self.owed = Some(Owed::Lost);
                Ok(Some(ConsumerEvent::Lost(parts)))
            }
            MemberAction::Assign { added, .. } => {
                let parts = self.names(&added);
                self.start_reading(&parts).await?;
                lock(&self.shared).member.assignment_done();
                self.wake_task.notify_one();
                Ok(Some(ConsumerEvent::Assigned(parts)))
            }
            MemberAction::Error(e) => Err(GroupError::Member(e)),
            MemberAction::Fatal(e) => {
                lock(&self.shared).fatal = Some(e.clone());
                Err(GroupError::Member(e))
            }
            MemberAction::FindCoordinator | MemberAction::ResolveTopics(_) => Ok(None),
        }
    }

    async fn apply_classic(
        &mut self,
        action: ClassicAction,
    ) -> Result<Option<ConsumerEvent>, GroupError> {
        match action {
            ClassicAction::Revoke(parts) => {
                self.revoking = self.positions_of(parts.iter());
                self.release(&parts);
                self.auto_commit_revoked().await;
                self.owed = Some(Owed::Revocation);
                Ok(Some(ConsumerEvent::Revoked(parts)))
            }
            ClassicAction::Lost(parts) => {
                self.release(&parts);
                self.owed = Some(Owed::Lost);
                Ok(Some(ConsumerEvent::Lost(parts)))
            }
            ClassicAction::Assign(parts) => {
                self.start_reading(&parts).await?;
                lock(&self.shared).member.assignment_done();
                self.wake_task.notify_one();
                Ok(Some(ConsumerEvent::Assigned(parts)))
            }
            ClassicAction::Error(e) => Err(GroupError::Member(e)),
            ClassicAction::Fatal(e) => {
                lock(&self.shared).fatal = Some(e.clone());
                Err(GroupError::Member(e))
            }
            ClassicAction::FindCoordinator => Ok(None),
        }
    }

    /// Positions new partitions at their committed offsets; the others are
    /// left to `auto.offset.reset` at the first fetch.
    async fn start_reading(&mut self, parts: &[TopicPartition]) -> Result<(), GroupError> {
        let mut by_topic: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
        for tp in parts {
            by_topic.entry(&tp.topic).or_default().push(tp.partition);
        }
        for (topic, partitions) in by_topic {
            self.reader.assign(topic, &partitions);
            let committed = self
                .reader
                .committed_offsets(&self.config.group_id, topic, &partitions)
                .await?;
            for (p, offset) in committed {
                if let Some(o) = offset {
                    self.reader.seek(topic, p, Offset::At(o)).await?;
                }
            }
        }
        self.owned.extend(parts.iter().cloned());
        Ok(())
    }

    /// Moves every owned partition back to its committed offset (or to
    /// `auto.offset.reset` where the group has none): after an aborted
    /// transaction, the records consumed since the last commit are read
    /// again. Offsets of pending transactions are waited for
    /// (`RequireStable`).
    ///
    /// ```no_run
    /// # async fn demo(c: &mut kafka_consumer::group::GroupConsumer) -> Result<(), kafka_consumer::group::GroupError> {
    /// c.rewind_to_committed().await?;
    /// # Ok(()) }
    /// ```
    pub async fn rewind_to_committed(&mut self) -> Result<(), GroupError> {
        let mut by_topic: BTreeMap<Arc<str>, Vec<i32>> = BTreeMap::new();
        for tp in &self.owned {
            by_topic
                .entry(tp.topic.clone())
                .or_default()
                .push(tp.partition);
        }
        for (topic, partitions) in by_topic {
            let committed = self
                .reader
                .committed_offsets(&self.config.group_id, &topic, &partitions)
                .await?;
            for (p, offset) in committed {
                match offset {
                    Some(o) => {
                        self.reader.seek(&topic, p, Offset::At(o)).await?;
                    }
                    None => {
                        // No committed offset: start over as a new owner would.
                        self.reader.unassign(&topic, &[p]);
                        self.reader.assign(&topic, &[p]);
                    }
                }
            }
        }
        Ok(())
    }

    /// Commits the positions of every owned partition
    /// ([`Self::positions`]) and waits for the answer: Java's
    /// `commitSync()`.
    ///
    /// ```no_run
    /// # async fn demo(c: &kafka_consumer::group::GroupConsumer) -> Result<(), kafka_consumer::group::GroupError> {
    /// c.commit_positions().await?;
    /// # Ok(()) }
    /// ```
    pub async fn commit_positions(&self) -> Result<(), GroupError> {
        self.commit_positions_async().await
    }

    /// Commits `offsets` (the next offset to read, per partition) with the
    /// member's id and epoch (KIP-848, OffsetCommit v9+) or generation
    /// (classic) and waits for the answer: Java's `commitSync(offsets)`.
    /// Retriable errors are retried for up to `default.api.timeout.ms`,
    /// counted from this call; commits made before it with
    /// [`Self::commit_async`] complete first (see the [`commit`](super::commit)
    /// module). A member that lost the partitions gets
    /// [`GroupError::Commit`] (STALE_MEMBER_EPOCH, ILLEGAL_GENERATION,
    /// UNKNOWN_MEMBER_ID; REBALANCE_IN_PROGRESS for a classic member in
    /// the middle of a rebalance: poll, then commit again).
    ///
    /// ```no_run
    /// # async fn demo(c: &kafka_consumer::group::GroupConsumer) -> Result<(), kafka_consumer::group::GroupError> {
    /// use kafka_client::TopicPartition;
    /// c.commit(&[(TopicPartition::new("orders", 0), 42)]).await?;
    /// # Ok(()) }
    /// ```
    pub async fn commit(&self, offsets: &[(TopicPartition, i64)]) -> Result<(), GroupError> {
        self.commit_async(offsets).await
    }

    /// Queues a commit of `offsets` and returns at once: Java's
    /// `commitAsync(offsets, callback)`, the callback being the returned
    /// [`PendingCommit`]. Commits reach the group coordinator one at a time
    /// in the order they were made, and their results complete in that
    /// order, so an earlier commit never overwrites a later one. The
    /// commit goes out whether or not the `PendingCommit` is awaited.
    ///
    /// ```no_run
    /// # async fn demo(c: &kafka_consumer::group::GroupConsumer) {
    /// use kafka_client::TopicPartition;
    /// let pending = c.commit_async(&[(TopicPartition::new("orders", 0), 42)]);
    /// // ... go on polling; later:
    /// if let Err(e) = pending.await { eprintln!("commit failed: {e}"); }
    /// # }
    /// ```
    pub fn commit_async(&self, offsets: &[(TopicPartition, i64)]) -> PendingCommit {
        self.commits.push(offsets.to_vec())
    }

    /// [`Self::commit_async`] of the positions of every owned partition
    /// ([`Self::positions`]): Java's `commitAsync()`.
    ///
    /// ```no_run
    /// # async fn demo(c: &kafka_consumer::group::GroupConsumer) {
    /// drop(c.commit_positions_async()); // fire and forget; failures are logged
    /// # }
    /// ```
    pub fn commit_positions_async(&self) -> PendingCommit {
        self.commits.push(self.positions())
    }

    /// With `enable.auto.commit`: queues a commit of the positions when
    /// `auto.commit.interval.ms` has passed since the last one (Java
    /// commits in `poll`, so what the previous polls returned counts as
    /// consumed).
    fn maybe_auto_commit(&mut self) {
        let (Some(interval), Some(due)) = (self.config.auto_commit_interval, self.next_auto_commit)
        else {
            return;
        };
        let now = Instant::now();
        if now < due {
            return;
        }
        self.next_auto_commit = Some(now + interval);
        let offsets = self.positions();
        if !offsets.is_empty() {
            drop(self.commits.push(offsets));
        }
    }

    /// With `enable.auto.commit`: commits the positions of partitions being
    /// revoked before the revocation is reported (Java commits
    /// synchronously before a rebalance). A failure is logged: the next
    /// owner may read those records again (at least once).
    async fn auto_commit_revoked(&self) {
        if self.config.auto_commit_interval.is_none() || self.revoking.is_empty() {
            return;
        }
        if let Err(e) = self.commits.push(self.revoking.clone()).await {
            tracing::warn!(group = %self.config.group_id, error = %e, "group consumer: auto-commit before a revocation failed");
        }
    }

    /// Leaves the group and stops. Partitions still owned are given up
    /// without a revocation event: commit before closing (with
    /// `enable.auto.commit`, close commits the positions, as Java's
    /// `close` does). Commits still queued are waited for, then the leave
    /// heartbeat; all within `timeout`.
    ///
    /// ```no_run
    /// # async fn demo(c: kafka_consumer::group::GroupConsumer) {
    /// c.close(std::time::Duration::from_secs(5)).await;
    /// # }
    /// ```
    pub async fn close(mut self, timeout: Duration) {
        let deadline = tokio::time::Instant::now() + timeout;
        let last = match self.config.auto_commit_interval {
            Some(_) => self.commit_positions_async(),
            // An empty commit completes after every commit queued before it.
            None => self.commit_async(&[]),
        };
        match tokio::time::timeout_at(deadline, last).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::warn!(group = %self.config.group_id, error = %e, "group consumer: a commit failed while closing")
            }
            Err(_) => {
                tracing::warn!(group = %self.config.group_id, "group consumer: commits still pending at close: their outcome is unknown")
            }
        }
        self.confirm_owed();
        {
            let mut s = lock(&self.shared);
            s.closing = true;
            match &mut s.member {
                Member::Kip848(m) => {
                    m.leave();
                    // The application commits before close: confirm at once.
                    if m.state() == MemberState::PrepareLeaving {
                        m.revocation_done();
                    }
                }
                Member::Classic(m) => m.leave(),
            }
        }
        self.wake_task.notify_one();
        let _ = tokio::time::timeout_at(deadline, &mut self.task).await;
        self.task.abort();
    }
}

impl Drop for GroupConsumer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

struct HeartbeatTask {
    shared: Arc<Mutex<Shared>>,
    cluster: Arc<Cluster>,
    wake_task: Arc<Notify>,
    wake_poll: Arc<Notify>,
    group_id: String,
    max_poll_interval: Duration,
    retry_backoff: Duration,
    request_timeout: Duration,
}

/// What the task does after looking at the member.
enum Step {
    Find,
    Send(Heartbeat, Option<Arc<Connection>>),
    Wait(Option<Instant>),
    Stop,
}

async fn heartbeat_task(t: HeartbeatTask) {
    loop {
        let step = t.next_step();
        match step {
            Step::Stop => return,
            Step::Find => {
                if t.find_coordinator().await {
                    lock(&t.shared).member.kip848().coordinator_found();
                }
            }
            Step::Send(hb, conn) => t.send(hb, conn).await,
            Step::Wait(at) => t.wait(at).await,
        }
    }
}

impl HeartbeatTask {
    /// FindCoordinator(GROUP); stores the connection and returns true when
    /// found, else waits `retry.backoff.ms`.
    async fn find_coordinator(&self) -> bool {
        match find_coordinator(&self.cluster, CoordinatorType::Group, &self.group_id).await {
            Ok(c) => {
                lock(&self.shared).coordinator = Some(c.connection);
                true
            }
            Err(e) => {
                tracing::debug!(error = %e, group = %self.group_id, "group consumer: FindCoordinator failed");
                tokio::time::sleep(self.retry_backoff).await;
                false
            }
        }
    }

    /// Sleeps until `at` (at most 1 s when nothing is scheduled) or a wake-up.
    async fn wait(&self, at: Option<Instant>) {
        let until = at.unwrap_or_else(|| Instant::now() + Duration::from_secs(1));
        tokio::select! {
            _ = self.wake_task.notified() => {}
            _ = tokio::time::sleep_until(until.into()) => {}
        }
    }

    fn next_step(&self) -> Step {
        let mut s = lock(&self.shared);
        let now = Instant::now();
        let mut leave = None;
        if !s.closing
            && (s.member.kip848().state().is_member()
                || s.member.kip848().state() == MemberState::Joining)
            && now.duration_since(s.last_poll) > self.max_poll_interval
        {
            tracing::warn!(group = %self.group_id, "group consumer: max.poll.interval.ms passed without a poll; leaving the group");
            leave = s.member.kip848().poll_timeout_expired();
        }
        {
            let md = self.cluster.metadata();
            s.member
                .kip848()
                .reconcile(&|id| md.topic_name(id).is_some());
        }
        let mut woke = false;
        while let Some(a) = s.member.kip848().poll_action() {
            match a {
                MemberAction::FindCoordinator => s.coordinator = None,
                MemberAction::ResolveTopics(ids) => {
                    tracing::debug!(
                        ?ids,
                        "group consumer: unknown topic ids; refreshing metadata"
                    );
                    self.cluster.invalidate();
                }
                MemberAction::Fatal(e) => {
                    s.fatal = Some(e.clone());
                    s.events.push_back(Queued::Kip848(MemberAction::Fatal(e)));
                    woke = true;
                }
                other => {
                    s.events.push_back(Queued::Kip848(other));
                    woke = true;
                }
            }
        }
        if woke {
            self.wake_poll.notify_one();
        }
        if let Some(hb) = leave {
            return Step::Send(hb, s.coordinator.clone());
        }
        match s.member.kip848().state() {
            MemberState::Fatal => return Step::Stop,
            MemberState::Unsubscribed if s.closing => return Step::Stop,
            MemberState::Unsubscribed => {}
            _ if s.coordinator.is_none() => return Step::Find,
            _ => {}
        }
        if let Some(hb) = s.member.kip848().poll_heartbeat(now) {
            return Step::Send(hb, s.coordinator.clone());
        }
        Step::Wait(s.member.kip848().next_heartbeat_at())
    }

    async fn send(&self, hb: Heartbeat, conn: Option<Arc<Connection>>) {
        let leaving = hb.member_epoch < 0;
        let Some(conn) = conn else {
            if !leaving {
                lock(&self.shared)
                    .member
                    .kip848()
                    .on_heartbeat_failure(Instant::now());
            }
            return;
        };
        let req = ConsumerGroupHeartbeatRequest {
            group_id: hb.group_id,
            member_id: hb.member_id,
            member_epoch: hb.member_epoch,
            instance_id: hb.instance_id,
            rack_id: hb.rack_id,
            rebalance_timeout_ms: hb.rebalance_timeout_ms,
            subscribed_topic_names: hb.subscribed_topic_names,
            server_assignor: hb.server_assignor,
            topic_partitions: hb.topic_partitions.map(|tps| {
                tps.into_iter()
                    .map(
                        |(topic_id, partitions)| ConsumerGroupHeartbeatRequestTopicPartitions {
                            topic_id,
                            partitions,
                            ..Default::default()
                        },
                    )
                    .collect()
            }),
            ..Default::default()
        };
        let version = match conn
            .versions()
            .version_for::<ConsumerGroupHeartbeatRequest>()
        {
            Ok(v) => v,
            Err(_) => {
                let mut s = lock(&self.shared);
                s.member.kip848().on_heartbeat_answer(
                    Instant::now(),
                    HeartbeatAnswer {
                        message: Some(format!(
                            "the broker does not serve {:?}",
                            ApiKey::ConsumerGroupHeartbeat
                        )),
                        ..HeartbeatAnswer::error(ErrorCode::UnsupportedVersion)
                    },
                );
                return;
            }
        };
        let result = conn
            .send_with_timeout(&req, version, self.request_timeout)
            .await;
        if leaving {
            if let Err(e) = &result {
                tracing::debug!(error = %e, "group consumer: leave heartbeat not answered");
            }
            return;
        }
        let now = Instant::now();
        let mut s = lock(&self.shared);
        match result {
            Ok(resp) => {
                let answer = answer_of(resp);
                if !answer.error.is_ok() {
                    tracing::debug!(error = ?answer.error, message = ?answer.message, "group consumer: heartbeat error");
                }
                s.member.kip848().on_heartbeat_answer(now, answer);
            }
            Err(e) => {
                tracing::debug!(error = %e, "group consumer: heartbeat failed");
                s.coordinator = None;
                s.member.kip848().on_heartbeat_failure(now);
            }
        }
    }
}

fn answer_of(resp: ConsumerGroupHeartbeatResponse) -> HeartbeatAnswer {
    HeartbeatAnswer {
        error: ErrorCode::from(resp.error_code),
        message: resp.error_message,
        member_id: resp.member_id,
        member_epoch: resp.member_epoch,
        heartbeat_interval: Duration::from_millis(resp.heartbeat_interval_ms.max(0) as u64),
        assignment: resp.assignment.map(|a| {
            a.topic_partitions
                .into_iter()
                .map(|t| (t.topic_id, t.partitions.into_iter().collect()))
                .collect()
        }),
    }
}

/// What the classic task does after looking at the member.
enum ClassicStep {
    Find,
    Send(Request, Option<Arc<Connection>>),
    Wait(Option<Instant>),
    Stop,
}

/// The driver of a [`ClassicMember`]: finds the coordinator, sends the
/// member's requests one at a time, hands the answers back, and watches
/// `max.poll.interval.ms`.
async fn classic_task(t: HeartbeatTask, rebalance_timeout: Duration) {
    loop {
        match t.classic_step() {
            ClassicStep::Stop => return,
            ClassicStep::Find => {
                if t.find_coordinator().await {
                    lock(&t.shared).member.classic().coordinator_found();
                }
            }
            ClassicStep::Send(req, conn) => t.send_classic(req, conn, rebalance_timeout).await,
            ClassicStep::Wait(at) => t.wait(at).await,
        }
    }
}

impl HeartbeatTask {
    fn classic_step(&self) -> ClassicStep {
        let mut s = lock(&self.shared);
        let now = Instant::now();
        let mut leave = None;
        let state = s.member.classic().state();
        if !s.closing
            && !matches!(
                state,
                ClassicState::Unsubscribed
                    | ClassicState::Stale
                    | ClassicState::Leaving
                    | ClassicState::Fatal
            )
            && now.duration_since(s.last_poll) > self.max_poll_interval
        {
            tracing::warn!(group = %self.group_id, "group consumer: max.poll.interval.ms passed without a poll; leaving the group");
            leave = s.member.classic().poll_timeout_expired();
        }
        {
            let md = self.cluster.metadata();
            let count = |t: &str| md.topic(t).map(|m| m.partition_count() as i32);
            if s.member.classic().check_metadata(&count) {
                tracing::info!(group = %self.group_id, "group consumer: partitions changed since the assignment; rejoining");
            }
        }
        let mut woke = false;
        while let Some(a) = s.member.classic().poll_action() {
            match a {
                ClassicAction::FindCoordinator => s.coordinator = None,
                ClassicAction::Fatal(e) => {
                    s.fatal = Some(e.clone());
                    s.events.push_back(Queued::Classic(ClassicAction::Fatal(e)));
                    woke = true;
                }
                other => {
                    s.events.push_back(Queued::Classic(other));
                    woke = true;
                }
            }
        }
        if woke {
            self.wake_poll.notify_one();
        }
        if let Some(l) = leave {
            return ClassicStep::Send(Request::Leave(l), s.coordinator.clone());
        }
        let closing = s.closing;
        let no_coordinator = s.coordinator.is_none();
        let member = s.member.classic();
        match member.state() {
            ClassicState::Fatal => return ClassicStep::Stop,
            ClassicState::Unsubscribed if closing => return ClassicStep::Stop,
            ClassicState::Leaving => {
                let conn = s.coordinator.clone();
                return match s.member.classic().poll_request(now) {
                    Some(req) => ClassicStep::Send(req, conn),
                    None => ClassicStep::Wait(Some(now)),
                };
            }
            ClassicState::Unsubscribed | ClassicState::Stale => {}
            _ if member.needs_coordinator() || no_coordinator => {
                return ClassicStep::Find;
            }
            _ => {}
        }
        let conn = s.coordinator.clone();
        let member = s.member.classic();
        if let Some(req) = member.poll_request(now) {
            return ClassicStep::Send(req, conn);
        }
        ClassicStep::Wait(member.next_request_at())
    }

    async fn send_classic(
        &self,
        req: Request,
        conn: Option<Arc<Connection>>,
        rebalance_timeout: Duration,
    ) {
        let Some(conn) = conn else {
            if !matches!(req, Request::Leave(_)) {
                lock(&self.shared)
                    .member
                    .classic()
                    .on_request_failure(Instant::now(), &req);
            }
            return;
        };
        let failed = |e: &dyn std::fmt::Display| {
            tracing::debug!(error = %e, "group consumer: classic group request failed");
            let mut s = lock(&self.shared);
            s.coordinator = None;
            s.member.classic().on_request_failure(Instant::now(), &req);
        };
        let unsupported = |what: &str| {
            let mut s = lock(&self.shared);
            let e = MemberError {
                error: ErrorCode::UnsupportedVersion,
                message: Some(format!("the broker does not serve {what}")),
            };
            s.fatal = Some(e.clone());
            s.events.push_back(Queued::Classic(ClassicAction::Fatal(e)));
            self.wake_poll.notify_one();
        };
        match &req {
            Request::Join(j) => {
                let Ok(v) = conn.versions().version_for::<JoinGroupRequest>() else {
                    return unsupported("JoinGroup");
                };
                // Java waits for the rebalance timeout plus 5 s.
                let timeout = self
                    .request_timeout
                    .max(rebalance_timeout + Duration::from_secs(5));
                let resp = match conn.send_with_timeout(j, v, timeout).await {
                    Ok(r) => r,
                    Err(e) => return failed(&e),
                };
                let mut counts = BTreeMap::new();
                if resp.error_code == 0 && resp.leader == resp.member_id {
                    // The leader assigns: it needs every subscribed topic's
                    // partition count.
                    let topics: Vec<String> = crate::group::classic::leader_topics(&resp)
                        .into_iter()
                        .collect();
                    if let Err(e) = self.cluster.refresh_topics(&topics).await {
                        tracing::debug!(error = %e, "group consumer: metadata for the assignment");
                    }
                    let md = self.cluster.metadata();
                    for t in topics {
                        if let Some(m) = md.topic(&t) {
                            counts.insert(t, m.partition_count() as i32);
                        }
                    }
                }
                let count = |t: &str| counts.get(t).copied();
                let mut s = lock(&self.shared);
                let error = ErrorCode::from(resp.error_code);
                if !error.is_ok() {
                    tracing::debug!(?error, "group consumer: JoinGroup error");
                }
                s.member
                    .classic()
                    .on_join_answer(Instant::now(), resp, &count);
            }
            Request::Sync(r) => {
                let Ok(v) = conn.versions().version_for::<SyncGroupRequest>() else {
                    return unsupported("SyncGroup");
                };
                match conn.send_with_timeout(r, v, self.request_timeout).await {
                    Ok(resp) => {
                        let error = ErrorCode::from(resp.error_code);
                        if !error.is_ok() {
                            tracing::debug!(?error, "group consumer: SyncGroup error");
                        }
                        lock(&self.shared)
                            .member
                            .classic()
                            .on_sync_answer(Instant::now(), resp)
                    }
                    Err(e) => failed(&e),
                }
            }
            Request::Heartbeat(h) => {
                let Ok(v) = conn.versions().version_for::<HeartbeatRequest>() else {
                    return unsupported("Heartbeat");
                };
                match conn.send_with_timeout(h, v, self.request_timeout).await {
                    Ok(resp) => {
                        let error = ErrorCode::from(resp.error_code);
                        if !error.is_ok() {
                            tracing::debug!(?error, "group consumer: Heartbeat error");
                        }
                        let leader = {
                            let mut s = lock(&self.shared);
                            let m = s.member.classic();
                            m.on_heartbeat_answer(Instant::now(), h, resp);
                            m.is_leader()
                        };
                        // The leader watches the partition counts it
                        // assigned from (`metadata.max.age.ms`).
                        if leader && let Err(e) = self.cluster.maybe_refresh().await {
                            tracing::debug!(error = %e, "group consumer: metadata refresh");
                        }
                    }
                    Err(e) => failed(&e),
                }
            }
            Request::Leave(l) => {
                let Ok(v) = conn.versions().version_for::<LeaveGroupRequest>() else {
                    return;
                };
                if let Err(e) = conn.send_with_timeout(l, v, self.request_timeout).await {
                    tracing::debug!(error = %e, "group consumer: LeaveGroup not answered");
                }
            }
        }
    }
}

type PollFuture = std::pin::Pin<
    Box<
        dyn std::future::Future<Output = (GroupConsumer, Result<ConsumerEvent, GroupError>)> + Send,
    >,
>;

/// [`GroupConsumer`] as a [`futures_core::Stream`] of events
/// ([`GroupConsumer::into_stream`]). Backpressure is the stream's own: the
/// consumer polls Kafka only when the next item is asked for, so a slow
/// reader of the stream holds at most one poll's records. Between items the
/// consumer is available ([`Self::consumer`]) to commit — a
/// [`ConsumerEvent::Revoked`] is confirmed when the next item is asked for,
/// as with [`GroupConsumer::poll`]. Timeouts without records yield nothing.
///
/// ```no_run
/// # async fn demo(consumer: kafka_consumer::group::GroupConsumer) {
/// let events = consumer.into_stream(std::time::Duration::from_millis(500));
/// assert!(events.consumer().is_some(), "no poll runs until an item is asked for");
/// # }
/// ```
pub struct EventStream {
    consumer: Option<GroupConsumer>,
    pending: Option<PollFuture>,
    poll_timeout: Duration,
}

impl std::fmt::Debug for EventStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventStream")
            .field("polling", &self.pending.is_some())
            .field("poll_timeout", &self.poll_timeout)
            .finish()
    }
}

impl EventStream {
    /// The consumer between two items (`None` while a poll is running).
    ///
    /// ```no_run
    /// # async fn demo(stream: &kafka_consumer::group::consumer::EventStream) -> Result<(), kafka_consumer::group::GroupError> {
    /// if let Some(c) = stream.consumer() {
    ///     c.commit_positions().await?;
    /// }
    /// # Ok(()) }
    /// ```
    pub fn consumer(&self) -> Option<&GroupConsumer> {
        self.consumer.as_ref()
    }

    /// Takes the consumer back (e.g. to close it) between two items.
    ///
    /// ```no_run
    /// # async fn demo(stream: kafka_consumer::group::consumer::EventStream) {
    /// if let Some(c) = stream.into_consumer() {
    ///     c.close(std::time::Duration::from_secs(5)).await;
    /// }
    /// # }
    /// ```
    pub fn into_consumer(self) -> Option<GroupConsumer> {
        self.consumer
    }
}

impl futures_core::Stream for EventStream {
    type Item = Result<ConsumerEvent, GroupError>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        use std::task::Poll;
        loop {
            if let Some(fut) = self.pending.as_mut() {
                let (consumer, result) = match fut.as_mut().poll(cx) {
                    Poll::Ready(r) => r,
                    Poll::Pending => return Poll::Pending,
                };
                self.pending = None;
                self.consumer = Some(consumer);
                match result {
                    Ok(ConsumerEvent::Records(r)) if r.is_empty() => continue,
                    Err(GroupError::Closed) => return Poll::Ready(None),
                    other => return Poll::Ready(Some(other)),
                }
            }
            let Some(mut consumer) = self.consumer.take() else {
                return Poll::Ready(None);
            };
            let timeout = self.poll_timeout;
            self.pending = Some(Box::pin(async move {
                let r = consumer.poll(timeout).await;
                (consumer, r)
            }));
        }
    }
}

impl GroupConsumer {
    /// This consumer as a [`futures_core::Stream`] of events (see
    /// [`EventStream`]); each poll waits up to `poll_timeout`.
    ///
    /// ```no_run
    /// # async fn demo(consumer: kafka_consumer::group::GroupConsumer) -> Result<(), kafka_consumer::group::GroupError> {
    /// use kafka_consumer::group::ConsumerEvent;
    /// use std::future::poll_fn;
    /// use std::pin::Pin;
    /// let mut events = consumer.into_stream(std::time::Duration::from_millis(500));
    /// while let Some(event) = poll_fn(|cx| futures_core::Stream::poll_next(Pin::new(&mut events), cx)).await {
    ///     if let ConsumerEvent::Records(records) = event? {
    ///         println!("{} records", records.len());
    ///         events.consumer().expect("between items").commit_positions().await?;
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub fn into_stream(self, poll_timeout: Duration) -> EventStream {
        EventStream {
            consumer: Some(self),
            pending: None,
            poll_timeout,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(extra: &[(&str, &str)]) -> Result<GroupConsumerConfig, ConfigError> {
        let mut props = vec![("bootstrap.servers", "127.0.0.1:9092"), ("group.id", "g")];
        props.extend_from_slice(extra);
        GroupConsumerConfig::from_properties(props)
    }

    #[test]
    fn classic_settings_are_parsed_with_java_names() {
        let c = parse(&[
            ("group.protocol", "classic"),
            ("session.timeout.ms", "10000"),
            ("heartbeat.interval.ms", "1000"),
            (
                "partition.assignment.strategy",
                "org.apache.kafka.clients.consumer.CooperativeStickyAssignor, range",
            ),
        ])
        .unwrap();
        assert_eq!(c.protocol, GroupProtocol::Classic);
        assert_eq!(c.session_timeout, Duration::from_secs(10));
        assert_eq!(c.heartbeat_interval, Duration::from_secs(1));
        assert_eq!(c.assignors, [Assignor::CooperativeSticky, Assignor::Range]);
    }

    #[test]
    fn classic_defaults_are_javas() {
        let c = parse(&[("group.protocol", "CLASSIC")]).unwrap();
        assert_eq!(c.session_timeout, Duration::from_secs(45));
        assert_eq!(c.heartbeat_interval, Duration::from_secs(3));
        assert_eq!(c.assignors, Assignor::DEFAULT);
    }

    #[test]
    fn classic_only_settings_are_refused_under_the_consumer_protocol_whatever_the_order() {
        for key in [
            "session.timeout.ms",
            "heartbeat.interval.ms",
            "partition.assignment.strategy",
        ] {
            let value = if key.ends_with("strategy") {
                "range"
            } else {
                "1000"
            };
            let err = parse(&[(key, value), ("group.protocol", "consumer")]).unwrap_err();
            assert_eq!(err.key(), key);
            assert_eq!(
                parse(&[(key, value)]).unwrap_err().key(),
                key,
                "default protocol"
            );
        }
    }

    #[test]
    fn the_remote_assignor_is_refused_under_classic() {
        let err = parse(&[
            ("group.remote.assignor", "uniform"),
            ("group.protocol", "classic"),
        ])
        .unwrap_err();
        assert_eq!(err.key(), "group.remote.assignor");
    }

    #[test]
    fn unknown_assignors_and_protocols_are_refused() {
        let err = parse(&[
            ("group.protocol", "classic"),
            ("partition.assignment.strategy", "roundrobin"),
        ])
        .unwrap_err();
        assert_eq!(err.key(), "partition.assignment.strategy");
        assert_eq!(
            parse(&[("group.protocol", "streams")]).unwrap_err().key(),
            "group.protocol"
        );
    }

    #[test]
    fn the_heartbeat_must_be_shorter_than_the_session() {
        let err = parse(&[
            ("group.protocol", "classic"),
            ("session.timeout.ms", "6000"),
            ("heartbeat.interval.ms", "6000"),
        ])
        .unwrap_err();
        assert_eq!(err.key(), "heartbeat.interval.ms");
    }

    #[test]
    fn auto_commit_is_off_by_default_and_on_with_javas_interval() {
        assert_eq!(parse(&[]).unwrap().auto_commit_interval, None);
        assert_eq!(
            parse(&[("enable.auto.commit", "false")])
                .unwrap()
                .auto_commit_interval,
            None
        );
        assert_eq!(
            parse(&[("enable.auto.commit", "true")])
                .unwrap()
                .auto_commit_interval,
            Some(Duration::from_secs(5))
        );
        // The interval applies whatever the order of the keys.
        let c = parse(&[
            ("auto.commit.interval.ms", "250"),
            ("enable.auto.commit", "true"),
        ])
        .unwrap();
        assert_eq!(c.auto_commit_interval, Some(Duration::from_millis(250)));
        let err = parse(&[("enable.auto.commit", "yes")]).unwrap_err();
        assert_eq!(err.key(), "enable.auto.commit");
    }
}
