//! The cluster's state as a deterministic, sans-IO machine: requests in,
//! responses out, time passed in. The tokio driver (`server`) owns it
//! behind one lock; nothing here does IO or reads a clock.
//!
//! - [`partition`]: one partition's log, offsets and transactions;
//! - [`producer_state`]: the idempotent producers' sequence checks;
//! - [`txn`]: the transaction coordinator (versions 1 and 2);
//! - [`groups`]: the group coordinator's committed and transactional offsets;
//! - [`membership`]: classic groups (JoinGroup, SyncGroup, Heartbeat);
//! - [`consumer_group`]: KIP-848 consumer groups (ConsumerGroupHeartbeat).

pub(crate) mod acls;
pub(crate) mod configs;
pub(crate) mod consumer_group;
pub(crate) mod fetch_sessions;
pub(crate) mod group_admin;
pub(crate) mod groups;
pub(crate) mod membership;
pub(crate) mod offset_delete;
pub(crate) mod partition;
pub(crate) mod producer_state;
pub(crate) mod topic_admin;
pub(crate) mod txn;

use crate::config::{MockConfig, TransactionVersion};
use consumer_group::ConsumerGroup;
use groups::{CommittedOffset, Groups};
use kafka_proto::ErrorCode;
use kafka_proto::primitives::Uuid;
use membership::ClassicGroup;
use partition::PartitionLog;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use txn::TxnMetadata;

/// Which coordinator a key is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CoordinatorKind {
    /// A consumer group's coordinator (FindCoordinator key type 0).
    Group,
    /// A transactional id's coordinator (key type 1).
    Transaction,
}

/// A broker of the cluster.
#[derive(Debug, Clone)]
pub(crate) struct Broker {
    /// Host it advertises in Metadata.
    pub host: String,
    /// Port it advertises in Metadata.
    pub port: i32,
    /// False while stopped: it leads nothing and coordinates nothing.
    pub alive: bool,
}

/// A topic.
#[derive(Debug, Clone)]
pub(crate) struct Topic {
    /// Topic id (Metadata, Fetch v13+, DeleteTopics by id).
    pub id: Uuid,
    /// Its partitions, by index.
    pub partitions: Vec<PartitionLog>,
}

/// Who is asking, and when.
#[derive(Debug, Clone)]
pub(crate) struct Ctx {
    /// The broker the request arrived at.
    pub broker: i32,
    /// Milliseconds since the Unix epoch, as the driver's clock says.
    pub now_ms: i64,
    /// The client's address as Kafka shows it (`/127.0.0.1`).
    pub client_host: Arc<str>,
    /// The request header's client id.
    pub client_id: Arc<str>,
}

/// The whole cluster.
#[derive(Debug)]
pub(crate) struct ClusterState {
    /// The settings the cluster started with.
    pub config: MockConfig,
    /// Every broker by node id, stopped ones included.
    pub brokers: BTreeMap<i32, Broker>,
    /// Every topic by name.
    pub topics: BTreeMap<String, Topic>,
    /// Topic names by topic id.
    pub topic_ids: HashMap<Uuid, String>,
    /// The transaction coordinator's state, by transactional id.
    pub txns: HashMap<String, TxnMetadata>,
    /// Committed and pending transactional offsets of every group.
    pub groups: Groups,
    /// Classic consumer groups' membership, by group id.
    pub classic: HashMap<String, ClassicGroup>,
    /// KIP-848 consumer groups, by group id.
    pub consumer: HashMap<String, ConsumerGroup>,
    /// The brokers' fetch sessions (KIP-227).
    pub fetch_sessions: fetch_sessions::FetchSessions,
    /// Counter behind the member ids handed out.
    next_member_id: u64,
    /// The next producer id InitProducerId allocates.
    next_producer_id: i64,
    /// Counter behind the topic ids (with the seed).
    next_topic_id: u64,
    /// Coordinators moved by the test, by kind and key (the others follow a hash of the key).
    coordinator_overrides: HashMap<(CoordinatorKind, String), i32>,
    /// Bumped whenever a coordinator moves (written into markers).
    pub coordinator_epoch: i32,
    /// Bumped at every append, so that parked fetches know to look again.
    pub appends: u64,
    /// Topic names Metadata and Produce refuse, with the error they answer
    /// (a principal without the ACL, a name the broker rejects).
    pub refused_topics: HashMap<String, ErrorCode>,
    /// Dynamic topic and broker configs (IncrementalAlterConfigs).
    pub configs: configs::Configs,
    /// ACL bindings (with `MockConfig::acl_authorizer`).
    pub acls: acls::Acls,
}

/// A cluster of brokers 1 to `brokers` with the default config, for the
/// unit tests of the state.
#[cfg(test)]
pub(crate) fn test_cluster(brokers: i32) -> ClusterState {
    let addrs: Vec<(i32, String, i32)> = (1..=brokers)
        .map(|id| (id, "127.0.0.1".to_string(), 9000 + id))
        .collect();
    ClusterState::new(MockConfig::default(), &addrs)
}

impl ClusterState {
    pub(crate) fn new(config: MockConfig, addrs: &[(i32, String, i32)]) -> Self {
        let brokers = addrs
            .iter()
            .map(|(id, host, port)| {
                (
                    *id,
                    Broker {
                        host: host.clone(),
                        port: *port,
                        alive: true,
                    },
                )
            })
            .collect();
        Self {
            config,
            brokers,
            topics: BTreeMap::new(),
            topic_ids: HashMap::new(),
            txns: HashMap::new(),
            groups: Groups::default(),
            classic: HashMap::new(),
            consumer: HashMap::new(),
            fetch_sessions: fetch_sessions::FetchSessions::default(),
            next_member_id: 1,
            next_producer_id: 1000,
            next_topic_id: 1,
            coordinator_overrides: HashMap::new(),
            coordinator_epoch: 0,
            appends: 0,
            refused_topics: HashMap::new(),
            configs: configs::Configs::default(),
            acls: acls::Acls::default(),
        }
    }

    /// Transaction version 2 is finalized on this cluster.
    pub(crate) fn tv2(&self) -> bool {
        self.config.effective_transaction_version() == TransactionVersion::V2
    }

    pub(crate) fn alive_brokers(&self) -> Vec<i32> {
        self.brokers
            .iter()
            .filter(|(_, b)| b.alive)
            .map(|(id, _)| *id)
            .collect()
    }

    /// A member id unique in this cluster.
    pub(crate) fn new_member_id(&mut self, client_id: &str) -> String {
        let n = self.next_member_id;
        self.next_member_id += 1;
        format!(
            "{client_id}-{:016x}",
            self.config.seed.wrapping_mul(0x9e37_79b9).wrapping_add(n)
        )
    }

    /// Advances time: due transaction markers, transaction timeouts,
    /// group session timeouts and rebalance deadlines.
    pub(crate) fn tick(&mut self, now_ms: i64) {
        self.tick_transactions(now_ms);
        let mut changed = false;
        for g in self.classic.values_mut() {
            changed |= g.tick(now_ms);
        }
        let session_ms = self.config.consumer_group_session_timeout.as_millis() as i64;
        for g in self.consumer.values_mut() {
            changed |= g.tick(now_ms, session_ms);
        }
        if changed {
            self.appends += 1;
        }
    }

    /// Checks the member of an offset commit (KIP-447 for
    /// TxnOffsetCommit). In a classic group a member id or generation
    /// names a member of the group's current generation; a commit without
    /// them (generation −1, no member id) is a standalone consumer's. In a
    /// KIP-848 consumer group the member's epoch is checked, per partition
    /// when older (see [`CommitValidator`]).
    pub(crate) fn check_commit_member(
        &self,
        member: CommitMember<'_>,
        transactional: bool,
        version: i16,
    ) -> Result<CommitValidator, ErrorCode> {
        let CommitMember {
            group,
            member_id,
            generation,
            ..
        } = member;
        if let Some(g) = self.consumer.get(group)
            && !g.members.is_empty()
        {
            // The group-wide checks now; an older epoch per partition.
            g.check_commit(member_id, generation, transactional, version, None)?;
            return Ok(CommitValidator::ConsumerMember {
                group: group.to_string(),
                member_id: member_id.to_string(),
                epoch: generation,
                transactional,
                version,
            });
        }
        let exists = self.classic.contains_key(group)
            || self.consumer.contains_key(group)
            || self.groups.has_offsets(group);
        if !exists {
            if generation < 0 {
                // A standalone consumer's commit creates the group.
                return Ok(CommitValidator::Any);
            }
            // `OffsetMetadataManager`: a member of a group that does not
            // exist; GROUP_ID_NOT_FOUND from the versions that know it.
            let knows_group_id_not_found = if transactional {
                version >= 6
            } else {
                version >= 9
            };
            return Err(if knows_group_id_not_found {
                ErrorCode::GroupIdNotFound
            } else {
                ErrorCode::IllegalGeneration
            });
        }
        self.check_classic_member(member, transactional)?;
        Ok(CommitValidator::Any)
    }

    /// Kafka's `ClassicGroup.validateOffsetCommit`. A group with offsets
    /// only (or a KIP-848 group without members) is an empty classic group.
    fn check_classic_member(
        &self,
        member: CommitMember<'_>,
        transactional: bool,
    ) -> Result<(), ErrorCode> {
        let CommitMember {
            group,
            member_id,
            instance_id,
            generation,
        } = member;
        let Some(g) = self.classic.get(group) else {
            return if generation < 0 && member_id.is_empty() && instance_id.is_none() {
                Ok(())
            } else {
                Err(ErrorCode::UnknownMemberId)
            };
        };
        let empty = g.state == membership::GroupState::Empty;
        if generation < 0 && empty {
            return Ok(());
        }
        if generation >= 0 || !member_id.is_empty() || instance_id.is_some() {
            g.check_member(member_id, instance_id, generation)?;
        } else if !transactional && !empty {
            // A standalone commit to a group in use.
            return Err(ErrorCode::UnknownMemberId);
        }
        if !transactional && g.state == membership::GroupState::CompletingRebalance {
            return Err(ErrorCode::RebalanceInProgress);
        }
        Ok(())
    }

    /// Stores one partition's committed offset (in producer `txn`'s open
    /// transaction when given) if its topic is known (`None`: an unknown
    /// topic id), the partition exists and `validator` lets the member
    /// commit it; the partition's error code.
    pub(crate) fn commit_offset(
        &mut self,
        validator: &CommitValidator,
        group: &str,
        txn: Option<i64>,
        topic: Option<&str>,
        partition: i32,
        offset: CommittedOffset,
    ) -> ErrorCode {
        let Some(topic) = topic else {
            return ErrorCode::UnknownTopicId;
        };
        if self.partition(topic, partition).is_none() {
            return ErrorCode::UnknownTopicOrPartition;
        }
        let refused = validator.check(self, topic, partition);
        if refused != ErrorCode::None {
            return refused;
        }
        let tp = (topic.to_string(), partition);
        match txn {
            Some(pid) => self.groups.txn_commit(group, pid, tp, offset),
            None => self.groups.commit(group, tp, offset),
        }
        ErrorCode::None
    }

    pub(crate) fn allocate_producer_id(&mut self) -> i64 {
        let id = self.next_producer_id;
        self.next_producer_id += 1;
        id
    }

    /// A topic id unique in this cluster, derived from the seed.
    fn new_topic_id(&mut self) -> Uuid {
        let n = self.next_topic_id;
        self.next_topic_id += 1;
        let mut id = [0u8; 16];
        id[..8].copy_from_slice(&self.config.seed.to_be_bytes());
        id[8..].copy_from_slice(&n.to_be_bytes());
        id[0] |= 0x40; // never the zero (unset) id
        id
    }

    /// Creates `name` with `partitions` partitions, leaders spread over the
    /// live brokers.
    pub(crate) fn create_topic(&mut self, name: &str, partitions: i32) -> Result<Uuid, ErrorCode> {
        if self.topics.contains_key(name) {
            return Err(ErrorCode::TopicAlreadyExists);
        }
        if kafka_proto::topic::validate(name).is_err() {
            return Err(ErrorCode::InvalidTopicException);
        }
        if partitions <= 0 {
            return Err(ErrorCode::InvalidPartitions);
        }
        let alive = self.alive_brokers();
        if alive.is_empty() {
            return Err(ErrorCode::BrokerNotAvailable);
        }
        let offset = self.topics.len();
        let logs = (0..partitions as usize)
            .map(|p| PartitionLog::new(alive[(p + offset) % alive.len()]))
            .collect();
        let id = self.new_topic_id();
        self.topics.insert(
            name.to_string(),
            Topic {
                id,
                partitions: logs,
            },
        );
        self.topic_ids.insert(id, name.to_string());
        Ok(id)
    }

    /// The topic a request names: by `name`, or by `id` from the version
    /// that names topics by id (`by_id`); `None` for an unknown id.
    pub(crate) fn request_topic(&self, by_id: bool, name: &str, id: &Uuid) -> Option<String> {
        if by_id {
            self.topic_ids.get(id).cloned()
        } else {
            Some(name.to_string())
        }
    }

    pub(crate) fn partition(&self, topic: &str, p: i32) -> Option<&PartitionLog> {
        self.topics
            .get(topic)
            .and_then(|t| t.partitions.get(usize::try_from(p).ok()?))
    }

    pub(crate) fn partition_mut(&mut self, topic: &str, p: i32) -> Option<&mut PartitionLog> {
        self.topics
            .get_mut(topic)
            .and_then(|t| t.partitions.get_mut(usize::try_from(p).ok()?))
    }

    /// The broker coordinating `key`: the override if set and alive, else
    /// a hash of the key over the live brokers (as Kafka hashes a key to a
    /// partition of its internal topic).
    pub(crate) fn coordinator(&self, kind: CoordinatorKind, key: &str) -> Option<i32> {
        let alive = self.alive_brokers();
        if let Some(b) = self.coordinator_overrides.get(&(kind, key.to_string()))
            && alive.contains(b)
        {
            return Some(*b);
        }
        if alive.is_empty() {
            return None;
        }
        let h = key
            .bytes()
            .fold(0i32, |h, b| h.wrapping_mul(31).wrapping_add(b as i8 as i32));
        let slot = (h & 0x7fff_ffff) as usize % self.brokers.len();
        let ids: Vec<i32> = self.brokers.keys().copied().collect();
        // The hashed broker, or the next live one.
        (0..ids.len())
            .map(|i| ids[(slot + i) % ids.len()])
            .find(|id| alive.contains(id))
    }

    /// `Ok` when `ctx`'s broker coordinates `key`.
    pub(crate) fn check_coordinator(
        &self,
        ctx: &Ctx,
        kind: CoordinatorKind,
        key: &str,
    ) -> Result<(), ErrorCode> {
        match self.coordinator(kind, key) {
            Some(b) if b == ctx.broker => Ok(()),
            Some(_) => Err(ErrorCode::NotCoordinator),
            None => Err(ErrorCode::CoordinatorNotAvailable),
        }
    }

    /// The whole state as text: topics with their batches, transactions,
    /// groups.
    pub(crate) fn describe(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        for (name, t) in &self.topics {
            for (i, log) in t.partitions.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "{name}-{i} (leader {}, epoch {}):",
                    log.leader, log.leader_epoch
                );
                out.push_str(&log.describe());
            }
        }
        let mut txns: Vec<_> = self.txns.iter().collect();
        txns.sort_by(|a, b| a.0.cmp(b.0));
        for (tid, m) in txns {
            let _ = writeln!(
                out,
                "transaction {tid}: {:?} pid={} epoch={} last_epoch={} tv2={} partitions={:?} groups={:?} pending={:?}",
                m.state,
                m.producer_id,
                m.epoch,
                m.last_epoch,
                m.tv2,
                m.partitions,
                m.groups,
                m.pending
            );
        }
        for (g, group) in &self.classic {
            let _ = writeln!(
                out,
                "group {g}: {:?} generation={} members={:?}",
                group.state,
                group.generation,
                group.members.keys().collect::<Vec<_>>()
            );
        }
        let sessions = self.fetch_sessions.count();
        if !sessions.is_empty() {
            let _ = writeln!(out, "fetch sessions by broker: {sessions:?}");
        }
        for (g, group) in &self.consumer {
            let _ = writeln!(
                out,
                "consumer group {g}: {} epoch={} assignment epoch={} members={:?}",
                group.state().name(),
                group.group_epoch,
                group.assignment_epoch,
                group
                    .members
                    .iter()
                    .map(|(id, m)| (id, m.epoch, m.state, m.assigned.len()))
                    .collect::<Vec<_>>()
            );
        }
        out
    }

    /// Moves the coordinator of `key` to broker `to`.
    pub(crate) fn move_coordinator(&mut self, kind: CoordinatorKind, key: &str, to: i32) {
        self.coordinator_overrides
            .insert((kind, key.to_string()), to);
        self.coordinator_epoch += 1;
    }

    /// Moves the leadership of a partition to `to`, bumping its leader epoch.
    pub(crate) fn move_leader(&mut self, topic: &str, p: i32, to: i32) -> bool {
        match self.partition_mut(topic, p) {
            Some(log) => {
                log.elect(to);
                true
            }
            None => false,
        }
    }

    /// Marks a broker stopped or started. A stopped broker's partitions
    /// move to the next live broker (a clean failover: nothing is lost,
    /// the mock keeps one copy of the data).
    pub(crate) fn set_alive(&mut self, id: i32, alive: bool) {
        if let Some(b) = self.brokers.get_mut(&id) {
            b.alive = alive;
        }
        if alive {
            return;
        }
        self.fetch_sessions.broker_stopped(id);
        let live = self.alive_brokers();
        if live.is_empty() {
            return;
        }
        for t in self.topics.values_mut() {
            for (i, log) in t.partitions.iter_mut().enumerate() {
                if log.leader == id {
                    log.elect(live[i % live.len()]);
                }
            }
        }
        self.coordinator_epoch += 1;
    }
}

/// Who an offset commit (OffsetCommit, TxnOffsetCommit) says commits.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CommitMember<'a> {
    /// The group the offsets are for.
    pub group: &'a str,
    /// The member id (empty for a standalone consumer).
    pub member_id: &'a str,
    /// The static member's instance id.
    pub instance_id: Option<&'a str>,
    /// The classic group's generation, or the KIP-848 member's epoch (−1
    /// for a standalone consumer).
    pub generation: i32,
}

/// The per-partition check of an offset commit that passed the group-wide
/// one.
#[derive(Debug, Clone)]
pub(crate) enum CommitValidator {
    /// Every partition may be committed.
    Any,
    /// A KIP-848 member: an older epoch only for partitions held since.
    ConsumerMember {
        group: String,
        member_id: String,
        epoch: i32,
        transactional: bool,
        version: i16,
    },
}

impl CommitValidator {
    /// The error for committing `topic`'s `partition`, NONE when allowed.
    pub(crate) fn check(&self, state: &ClusterState, topic: &str, partition: i32) -> ErrorCode {
        match self {
            Self::Any => ErrorCode::None,
            Self::ConsumerMember {
                group,
                member_id,
                epoch,
                transactional,
                version,
            } => {
                let (Some(g), Some(t)) = (state.consumer.get(group), state.topics.get(topic))
                else {
                    return ErrorCode::None;
                };
                g.check_commit(
                    member_id,
                    *epoch,
                    *transactional,
                    *version,
                    Some((t.id, partition)),
                )
                .err()
                .unwrap_or(ErrorCode::None)
            }
        }
    }
}
