//! [`GroupConsumer`]: a member of a Kafka consumer group that reads the
//! partitions Kafka's group coordinator gives it, commits offsets, and
//! hands its group metadata to a transactional producer (KIP-447). Two
//! group protocols: KIP-848 (`group.protocol=consumer`: the broker
//! assigns, [`Kip848Member`]) and the classic one
//! (`group.protocol=classic`, JoinGroup/SyncGroup with a client-side
//! assignor, [`ClassicMember`]; the only one before Kafka 4.0). Not set,
//! the consumer uses KIP-848 when the brokers serve it and classic
//! otherwise. Both give the same [`ConsumerEvent`]s.
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
//! Rebalances are events, not callbacks:
//! - [`ConsumerEvent::Revoked`]: the consumer stopped fetching those
//!   partitions. The application
//!   1. commits what it consumed from them (or commits or aborts its
//!      transaction);
//!   2. calls `poll` again: the **next** `poll` confirms the revocation to
//!      the group, and only then can another member get them.
//! - [`ConsumerEvent::Assigned`]: the partitions are read from their
//!   committed offsets (OffsetFetch with `RequireStable`) or
//!   `auto.offset.reset`.
//! - [`ConsumerEvent::Lost`]: the partitions were taken away (the member was
//!   fenced or missed its poll interval): nothing may be committed for them
//!   any more.
//!
//! The application steers the partitions it owns as with Java's
//! `KafkaConsumer` (the `steering` module): [`GroupConsumer::seek`],
//! [`GroupConsumer::pause`] / [`GroupConsumer::resume`],
//! [`GroupConsumer::committed`] and [`GroupConsumer::resubscribe`]. A poll
//! returns at most `max.poll.records` records; what was fetched beyond
//! waits for the next poll, and [`GroupConsumer::positions`] (what a
//! commit sends) counts only what was returned.
//!
//! Under the classic protocol an eager member (any assignor list that
//! includes `range`, such as Java's default) gets every partition
//! [`Revoked`](ConsumerEvent::Revoked) before each rebalance; a
//! cooperative one (`partition.assignment.strategy=cooperative-sticky`)
//! only the partitions that move, which reach their new owner in a
//! follow-up rebalance.

mod steering;

use super::buffer::RecordBuffer;
use super::config::GroupConsumerConfig;
use super::config::GroupProtocol;
use super::driver::{GroupDriver, drive_classic, drive_kip848};
use super::subscription::{Subscription, TopicPattern};
use crate::group::commit::{CommitQueue, Committer, PendingCommit};
use crate::group::member::classic::{ClassicAction, ClassicMember};
use crate::group::member::kip848::{
    Kip848Action, Kip848Member, MemberError, MemberState, TopicPartitions,
};
use crate::reader::{ConsumerRecord, Offset, Reader, ReaderError};
use kafka_client::Cluster;
use kafka_client::Connection;
use kafka_client::TopicPartition;
use kafka_client::{GroupMetadata, OffsetAndMetadata};
use kafka_proto::ApiKey;
use kafka_proto::ErrorCode;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// What one [`GroupConsumer::poll`] returns.
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
    /// The partition is not assigned to this consumer (now): seek, pause
    /// and resume apply to the partitions of the last
    /// [`ConsumerEvent::Assigned`] not revoked or lost since.
    #[error("{topic}-{partition} is not assigned to this consumer")]
    NotAssigned {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
    },
    /// The regular expression of a [`Subscription::Pattern`] does not
    /// compile (classic protocol: this client matches it).
    #[error("invalid topic pattern {pattern:?}: {reason}")]
    InvalidPattern {
        /// The expression.
        pattern: String,
        /// What is wrong with it.
        reason: String,
    },
}

impl GroupError {
    /// True when the consumer cannot go on (the member stopped for good).
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
pub(super) enum Owed {
    Revocation,
    Lost,
}

/// The member of either protocol.
#[derive(Debug)]
pub(super) enum Member {
    Kip848(Kip848Member),
    Classic(ClassicMember),
}

impl Member {
    /// The KIP-848 member (only its own task calls this).
    pub(super) fn kip848(&mut self) -> &mut Kip848Member {
        match self {
            Member::Kip848(m) => m,
            Member::Classic(_) => unreachable!("the KIP-848 task drives a KIP-848 member"),
        }
    }

    pub(super) fn classic(&mut self) -> &mut ClassicMember {
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
pub(super) enum Queued {
    Kip848(Kip848Action),
    Classic(ClassicAction),
}

#[derive(Debug)]
pub(super) struct Shared {
    /// The group member's state machine (KIP-848 or classic).
    pub(super) member: Member,
    /// Decisions for the application, in order.
    pub(super) events: std::collections::VecDeque<Queued>,
    /// The group coordinator's connection, once found.
    pub(super) coordinator: Option<Arc<Connection>>,
    /// When the application last polled (`max.poll.interval.ms` counts from it).
    pub(super) last_poll: Instant,
    /// The error that stopped the member for good; every later poll returns it.
    pub(super) fatal: Option<MemberError>,
    /// `close` was called: no new commits, the member leaves.
    pub(super) closing: bool,
    /// The classic member's pattern subscription, matched against every
    /// topic's metadata by the driver.
    pub(super) pattern: Option<TopicPattern>,
    /// When the driver matches the pattern next; `None` means now.
    pub(super) pattern_check_at: Option<Instant>,
}

/// A consumer-group member (see the module docs).
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// use kafka_consumer::{ConsumerEvent, GroupConsumer, GroupConsumerConfig};
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
///
/// - [`GroupConsumer`]: the async consumer on top of it: heartbeats in a
///   background task, rebalances as [`ConsumerEvent`]s, records through the
///   [`Reader`](crate::reader::Reader), offset commits, and the group
///   metadata a transactional producer needs (KIP-447).
#[derive(Debug)]
pub struct GroupConsumer {
    config: GroupConsumerConfig,
    cluster: Arc<Cluster>,
    reader: Reader,
    shared: Arc<Mutex<Shared>>,
    /// Wakes the group driver.
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
    /// Records fetched and not returned yet (`max.poll.records`, paused
    /// partitions): positions count from their first record.
    buffer: RecordBuffer,
    /// What the application subscribed to last.
    subscription: Subscription,
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
            pattern: None,
            pattern_check_at: None,
        }
    }
}

pub(super) fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(|p| p.into_inner())
}

/// The protocol of a consumer whose `group.protocol` is not set: KIP-848
/// when a broker's ApiVersions offer ConsumerGroupHeartbeat and the
/// cluster has finalized the `group.version` feature at level 1 or more
/// (Kafka 4.0+; Kafka 3.x lists the request too, as early access, and
/// answers it UNSUPPORTED_VERSION unless its new coordinator is enabled),
/// classic otherwise (every broker serves it); said at info level.
async fn choose_protocol(cluster: &Cluster, group_id: &str) -> Result<GroupProtocol, GroupError> {
    let connection = cluster.any_connection().await.map_err(ReaderError::from)?;
    let versions = connection.versions();
    let offered = versions
        .broker_range(ApiKey::ConsumerGroupHeartbeat)
        .is_some()
        && versions
            .finalized_feature("group.version")
            .is_some_and(|(_, max)| max >= 1);
    let protocol = if offered {
        GroupProtocol::Consumer
    } else {
        GroupProtocol::Classic
    };
    tracing::info!(
        group = group_id,
        ?protocol,
        "group.protocol not set: {} (the brokers {} the consumer group protocol of KIP-848)",
        if offered {
            "consumer (KIP-848)"
        } else {
            "classic"
        },
        if offered { "serve" } else { "do not serve" },
    );
    Ok(protocol)
}

fn random_member_id() -> String {
    let b: [u8; 16] = rand::random();
    let mut s = String::with_capacity(22);
    base64::Engine::encode_string(&base64::engine::general_purpose::URL_SAFE_NO_PAD, b, &mut s);
    s
}

impl GroupConsumer {
    /// Connects (waiting up to `bootstrap.timeout.ms`, by default
    /// `default.api.timeout.ms`, for a bootstrap address to answer),
    /// subscribes to `topics` and starts heartbeating; the first
    /// [`Self::poll`]s return the assignment.
    ///
    /// ```no_run
    /// # async fn demo(config: kafka_consumer::GroupConsumerConfig) -> Result<(), kafka_consumer::GroupError> {
    /// let consumer = kafka_consumer::GroupConsumer::subscribe(config, ["orders", "refunds"]).await?;
    /// println!("member {}", consumer.member_id());
    /// # Ok(()) }
    /// ```
    pub async fn subscribe<S: AsRef<str>>(
        config: GroupConsumerConfig,
        topics: impl IntoIterator<Item = S>,
    ) -> Result<Self, GroupError> {
        Self::subscribe_to(config, Subscription::topics(topics)).await
    }

    /// [`Self::subscribe`] to topic names or to a regular expression over
    /// them (see [`Subscription::Pattern`]): under KIP-848 the broker
    /// matches it (topics created later included); under the classic
    /// protocol the member matches it against every topic's metadata,
    /// refreshed every `metadata.max.age.ms`, as Java's pattern
    /// subscription does.
    ///
    /// ```no_run
    /// # async fn demo(config: kafka_consumer::GroupConsumerConfig) -> Result<(), kafka_consumer::GroupError> {
    /// use kafka_consumer::{GroupConsumer, Subscription};
    /// let consumer = GroupConsumer::subscribe_to(config, Subscription::pattern("orders-.*")).await?;
    /// # let _ = consumer;
    /// # Ok(()) }
    /// ```
    pub async fn subscribe_to(
        mut config: GroupConsumerConfig,
        subscription: Subscription,
    ) -> Result<Self, GroupError> {
        if let (Subscription::Pattern(p), Some(GroupProtocol::Classic)) =
            (&subscription, config.protocol)
        {
            // A pattern the classic member cannot compile fails before
            // connecting.
            TopicPattern::new(p)?;
        }
        let cluster = Cluster::connect(config.cluster_config())
            .await
            .map_err(ReaderError::from)?;
        let protocol = match config.protocol {
            Some(p) => p,
            None => choose_protocol(&cluster, &config.group_id).await?,
        };
        config.protocol = Some(protocol);
        let pattern = match (&subscription, protocol) {
            (Subscription::Pattern(p), GroupProtocol::Classic) => Some(TopicPattern::new(p)?),
            _ => None,
        };
        let mut topics: Vec<String> = match &subscription {
            Subscription::Topics(t) => t.iter().cloned().collect(),
            Subscription::Pattern(_) => Vec::new(),
        };
        if let Some(p) = &pattern {
            // The first match, before the first join.
            match cluster.refresh_all().await {
                Ok(_) => topics = p.matching(&cluster.metadata()).into_iter().collect(),
                Err(e) => {
                    tracing::debug!(error = %e, "group consumer: first metadata of every topic failed")
                }
            }
        }
        cluster.track_topics(&topics);
        if let Err(e) = cluster.refresh().await {
            tracing::debug!(error = %e, "group consumer: first metadata refresh failed");
        }
        let member = match protocol {
            GroupProtocol::Consumer => {
                let mut m = Kip848Member::new(config.membership(random_member_id()));
                match &subscription {
                    Subscription::Pattern(p) => m.subscribe_pattern(p.clone()),
                    Subscription::Topics(_) => m.subscribe(topics),
                }
                Member::Kip848(m)
            }
            GroupProtocol::Classic => {
                let mut m = ClassicMember::new(config.classic());
                m.subscribe(topics);
                Member::Classic(m)
            }
        };
        let mut shared = Shared::new(member);
        if pattern.is_some() {
            shared.pattern_check_at = Some(Instant::now() + cluster.config().metadata_max_age);
        }
        shared.pattern = pattern;
        let shared = Arc::new(Mutex::new(shared));
        let wake_task = Arc::new(Notify::new());
        let wake_poll = Arc::new(Notify::new());
        let t = GroupDriver {
            shared: shared.clone(),
            cluster: cluster.clone(),
            wake_task: wake_task.clone(),
            wake_poll: wake_poll.clone(),
            group_id: config.group_id.clone(),
            max_poll_interval: config.max_poll_interval,
            retry_backoff: config.retry_backoff,
            request_timeout: config.connection.request_timeout,
        };
        let task = match protocol {
            GroupProtocol::Consumer => tokio::spawn(drive_kip848(t)),
            GroupProtocol::Classic => tokio::spawn(drive_classic(t, config.max_poll_interval)),
        };
        let reader = Reader::new(cluster.clone(), config.reader.clone());
        let commits = CommitQueue::start(Committer {
            shared: shared.clone(),
            wake_task: wake_task.clone(),
            group_id: config.group_id.clone(),
            instance_id: config.instance_id.clone(),
            retry_backoff: config.retry_backoff,
            api_timeout: config.api_timeout,
            metrics: reader.metrics_handle().clone(),
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
            buffer: RecordBuffer::default(),
            subscription,
            task,
        })
    }

    /// The group protocol in use: `group.protocol`, or the one chosen at
    /// start when it was not set.
    pub fn protocol(&self) -> GroupProtocol {
        self.config.protocol.unwrap_or(GroupProtocol::Classic)
    }

    /// The member id (KIP-848: generated once, kept for the consumer's
    /// life; classic: given by the coordinator, "" until the first join).
    pub fn member_id(&self) -> String {
        lock(&self.shared).member.member_id().to_string()
    }

    /// The member's state.
    pub fn state(&self) -> MemberState {
        lock(&self.shared).member.state()
    }

    /// The partitions this consumer owns (as last reported by events).
    pub fn assignment(&self) -> Vec<TopicPartition> {
        self.owned.iter().cloned().collect()
    }

    /// The group metadata for
    /// `TransactionalProducer::send_offsets_to_transaction` (`kafka-producer`)
    /// (Java's `groupMetadata()`): the member id, the member epoch (KIP-848)
    /// or the generation (classic) and the instance id, so that the group coordinator fences
    /// the offsets of a member that lost its partitions (KIP-447).
    pub fn group_metadata(&self) -> GroupMetadata {
        let s = lock(&self.shared);
        GroupMetadata {
            group_id: self.config.group_id.clone(),
            generation_id: s.member.generation(),
            member_id: s.member.member_id().to_string(),
            group_instance_id: self.config.instance_id.clone(),
        }
    }

    /// The consumer's metrics so far ([`Reader::metrics`], and the group's
    /// own: assignments received, offset commits and their latency).
    ///
    /// ```no_run
    /// # fn demo(consumer: &kafka_consumer::GroupConsumer) {
    /// let m = consumer.metrics();
    /// let lag: i64 = m.lag.values().sum();
    /// println!("{} records consumed, lag {lag}, {} rebalances", m.records_consumed, m.rebalances);
    /// # }
    /// ```
    pub fn metrics(&self) -> crate::ConsumerMetricsSnapshot {
        self.reader.metrics()
    }

    /// The next offset to read of every owned partition that has one, and
    /// of the partitions just revoked (until the next poll): what to commit
    /// for the records returned so far.
    pub fn positions(&self) -> Vec<(TopicPartition, i64)> {
        let mut out = self.positions_of(self.owned.iter());
        out.extend(self.revoking.iter().cloned());
        out
    }

    /// The next offset to read of each of `parts` that has one: the first
    /// record fetched and not returned yet (here, or in the reader after a
    /// cancelled poll), else the reader's position.
    fn positions_of<'a>(
        &self,
        parts: impl Iterator<Item = &'a TopicPartition>,
    ) -> Vec<(TopicPartition, i64)> {
        parts
            .filter_map(|tp| {
                self.buffer
                    .first_offset(tp)
                    .or_else(|| self.reader.first_unreturned(&tp.topic, tp.partition))
                    .or_else(|| self.reader.position(&tp.topic, tp.partition))
                    .map(|p| (tp.clone(), p))
            })
            .collect()
    }

    /// Waits up to `timeout` for the next event: a rebalance step, or
    /// records. Confirms the revocation or loss returned by the previous
    /// call first (see [`ConsumerEvent::Revoked`]).
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
            // Records already fetched first, at most `max.poll.records`,
            // none of a paused partition.
            let reader = &self.reader;
            let records = self.buffer.take(self.config.max_poll_records, |tp| {
                reader.is_paused(&tp.topic, tp.partition)
            });
            if !records.is_empty() {
                self.note_epochs(&records);
                return Ok(ConsumerEvent::Records(records));
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
            let fetched = self.reader.poll(slice).await?;
            self.buffer.push(fetched);
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
    /// `TransactionalProducer::send_offsets_and_metadata_to_transaction` (`kafka-producer`).
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
            self.buffer.drop_partition(tp);
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
            Kip848Action::Revoke(tp) => {
                let parts = self.names(&tp);
                self.revoking = self.positions_of(parts.iter());
                self.release(&parts);
                self.auto_commit_revoked().await;
                self.owed = Some(Owed::Revocation);
                Ok(Some(ConsumerEvent::Revoked(parts)))
            }
            Kip848Action::Lost(tp) => {
                let parts = self.names(&tp);
                self.release(&parts);
                self.owed = Some(Owed::Lost);
                Ok(Some(ConsumerEvent::Lost(parts)))
            }
            Kip848Action::Assign { added, .. } => {
                let parts = self.names(&added);
                self.start_reading(&parts).await?;
                self.reader.metrics_handle().rebalance();
                lock(&self.shared).member.assignment_done();
                self.wake_task.notify_one();
                Ok(Some(ConsumerEvent::Assigned(parts)))
            }
            Kip848Action::Error(e) => Err(GroupError::Member(e)),
            Kip848Action::Fatal(e) => {
                lock(&self.shared).fatal = Some(e.clone());
                Err(GroupError::Member(e))
            }
            Kip848Action::FindCoordinator | Kip848Action::ResolveTopics(_) => Ok(None),
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
                self.reader.metrics_handle().rebalance();
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
                self.buffer.drop_partition(&TopicPartition {
                    topic: topic.clone(),
                    partition: p,
                });
                match offset {
                    Some(o) => {
                        self.reader.seek(&topic, p, Offset::At(o)).await?;
                    }
                    None => {
                        // No committed offset: start over as a new owner
                        // would (a pause stays).
                        let paused = self.reader.is_paused(&topic, p);
                        self.reader.unassign(&topic, &[p]);
                        self.reader.assign(&topic, &[p]);
                        if paused {
                            self.reader.pause(&topic, &[p]);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Commits the positions of every owned partition
    /// ([`Self::positions`]) and waits for the answer: Java's
    /// `commitSync()`.
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
    /// UNKNOWN_MEMBER_ID). A classic member gets REBALANCE_IN_PROGRESS
    /// (Java's `RebalanceInProgressException`) for a commit made while it
    /// rejoins the group — a cooperative member keeps reading its partitions
    /// meanwhile, so this happens to a commit after each batch — or one the
    /// rebalance overtook: poll to complete the rebalance, then commit
    /// again what is still owned (see
    /// [`ClassicMember::on_commit_refused`](crate::group::member::classic::ClassicMember::on_commit_refused)).
    ///
    /// ```no_run
    /// # async fn demo(c: &kafka_consumer::GroupConsumer) -> Result<(), kafka_consumer::GroupError> {
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
    /// # async fn demo(c: &kafka_consumer::GroupConsumer) {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A refused commit (the member's epoch moved on) is not fatal: the
    /// consumer goes on polling.
    #[test]
    fn a_refused_commit_is_not_fatal() {
        let e = GroupError::Commit {
            error: ErrorCode::StaleMemberEpoch,
            message: None,
        };
        assert!(!e.is_fatal());
    }

    /// Every call on a closed consumer fails for good.
    #[test]
    fn closed_is_fatal() {
        assert!(GroupError::Closed.is_fatal());
    }
}
