//! The member of a consumer group under the classic protocol
//! (`group.protocol=classic`, the only one before Kafka 4.0): JoinGroup,
//! SyncGroup with a client-side [`assignor`] run by the group leader,
//! Heartbeat and LeaveGroup. A deterministic, sans-IO state machine, like
//! the KIP-848 [`Kip848Member`](crate::group::member::kip848::Kip848Member):
//! answers, application confirmations and time go in; requests to send and
//! [`ClassicAction`]s come out. The rules follow Java's
//! `AbstractCoordinator` and `ConsumerCoordinator`.
//!
//! ```text
//!                 subscribe            JoinGroup ok              SyncGroup ok
//!  Unsubscribed ───────────▶ Joining ──────────────▶ Syncing ──────────────▶ Reconciling
//!                            ▲  ▲  ▲ MEMBER_ID_REQUIRED: join again            │ revoke, then assign
//!      eager: owned revoked  │  │  └──────────────────────────┐                ▼
//!   PrepareJoin ◀── rejoin ──┼──┼──────────────────────────── Stable ◀──── (confirmed)
//!                            │  │ lost done                     │ ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID
//!                            │  └──────── Fenced ◀──────────────┘  (from any joined state)
//!                            └ rejoin ─── Stale ◀── max.poll.interval.ms passed (LeaveGroup sent)
//!  any state ── FENCED_INSTANCE_ID, fatal error ──▶ Fatal;   leave() ──▶ Leaving ──▶ Unsubscribed
//! ```
//!
//! - **Join**: a dynamic member joins with an empty member id, gets
//!   MEMBER_ID_REQUIRED with its id and joins again at once (KIP-394); a
//!   static member (`group.instance.id`, KIP-345) skips that step. Each
//!   configured assignor is offered with the member's subscription (topics,
//!   owned partitions, generation, rack: ConsumerProtocolSubscription v3).
//! - **Sync**: the leader runs the chosen assignor over the members'
//!   subscriptions and sends every assignment; followers send none.
//! - **Rebalance protocol**: cooperative (KIP-429) only when every
//!   configured assignor is, as Java decides; so Java's default list
//!   `[range, cooperative-sticky]` is eager. An eager member revokes
//!   everything before it joins; a cooperative member keeps its partitions,
//!   revokes after SyncGroup only what it lost, and then rejoins so the
//!   follow-up rebalance can hand those partitions to their new owner.
//! - **Heartbeat**: every `heartbeat.interval.ms` once joined; one request
//!   is in flight at a time (a JoinGroup answer can take up to the rebalance
//!   timeout). REBALANCE_IN_PROGRESS asks for a rejoin; ILLEGAL_GENERATION
//!   resets the generation, UNKNOWN_MEMBER_ID also the member id: the owned
//!   partitions are lost and the member rejoins. FENCED_INSTANCE_ID is fatal.
//! - **Leave**: a dynamic member sends LeaveGroup on close and on a missed
//!   `max.poll.interval.ms`; a static member does not (its partitions stay
//!   parked until `session.timeout.ms`, as in Java).
//!
//! ```
//! use kafka_consumer::internals::classic::{ClassicAction, ClassicConfig, ClassicMember, ClassicState, Request};
//! use kafka_proto::ErrorCode;
//! use kafka_proto::messages::{ConsumerProtocolAssignment, ConsumerProtocolAssignmentTopicPartition, JoinGroupResponse, SyncGroupResponse};
//! use std::time::Instant;
//!
//! let now = Instant::now();
//! let mut m = ClassicMember::new(ClassicConfig::new("orders-app"));
//! m.subscribe(["orders".to_string()]);
//! assert_eq!(m.poll_action(), Some(ClassicAction::FindCoordinator));
//! m.coordinator_found();
//! let Some(Request::Join(join)) = m.poll_request(now) else { panic!("join first") };
//! assert_eq!(join.member_id, "");
//! // The coordinator wants a member id first (KIP-394).
//! m.on_join_answer(now, JoinGroupResponse {
//!     error_code: ErrorCode::MemberIdRequired.code(),
//!     member_id: "m-1".into(),
//!     ..Default::default()
//! }, &|_| None);
//! let Some(Request::Join(join)) = m.poll_request(now) else { panic!("join again") };
//! assert_eq!(join.member_id, "m-1");
//! // A follower: generation 1, protocol range.
//! m.on_join_answer(now, JoinGroupResponse {
//!     generation_id: 1,
//!     protocol_name: Some("range".into()),
//!     leader: "m-0".into(),
//!     member_id: "m-1".into(),
//!     ..Default::default()
//! }, &|_| None);
//! let Some(Request::Sync(sync)) = m.poll_request(now) else { panic!("sync") };
//! assert!(sync.assignments.is_empty(), "followers send no assignment");
//! let mine = ConsumerProtocolAssignment {
//!     assigned_partitions: vec![ConsumerProtocolAssignmentTopicPartition { topic: "orders".into(), partitions: vec![1] }],
//!     ..Default::default()
//! };
//! m.on_sync_answer(now, SyncGroupResponse { assignment: mine.encode_prefixed(3).unwrap().into(), ..Default::default() });
//! assert!(matches!(m.poll_action(), Some(ClassicAction::Assign(p)) if p.len() == 1));
//! m.assignment_done();
//! assert_eq!(m.state(), ClassicState::Stable);
//! assert_eq!(m.generation(), 1);
//! ```

pub mod assignor;

use crate::group::member::kip848::{MemberError, MemberState};
use assignor::{Assignor, MemberSubscription, Partitions};
use kafka_client::TopicPartition;
use kafka_proto::ErrorCode;
use kafka_proto::messages::{
    ConsumerProtocolAssignment, ConsumerProtocolAssignmentTopicPartition,
    ConsumerProtocolSubscription, ConsumerProtocolSubscriptionTopicPartition, HeartbeatRequest,
    HeartbeatResponse, JoinGroupRequest, JoinGroupRequestProtocol, JoinGroupResponse,
    LeaveGroupRequest, LeaveGroupRequestMemberIdentity, SyncGroupRequest,
    SyncGroupRequestAssignment, SyncGroupResponse,
};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::{Duration, Instant};

/// Where the classic member is (see the module's state diagram).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClassicState {
    /// Not in the group.
    Unsubscribed,
    /// An eager member revokes everything before it rejoins.
    PrepareJoin,
    /// JoinGroup to send or in flight.
    Joining,
    /// SyncGroup to send or in flight.
    Syncing,
    /// Revoking, then assigning, what SyncGroup gave.
    Reconciling,
    /// Joined, heartbeating.
    Stable,
    /// The generation was reset: partitions lost, rejoining next.
    Fenced,
    /// `max.poll.interval.ms` passed without a poll: out of the group until
    /// the application polls again.
    Stale,
    /// LeaveGroup to send.
    Leaving,
    /// Stopped by a fatal error.
    Fatal,
}

impl ClassicState {
    /// The closest KIP-848 [`MemberState`], for
    /// [`GroupConsumer::state`](crate::group::GroupConsumer::state).
    pub fn member_state(self) -> MemberState {
        match self {
            ClassicState::Unsubscribed => MemberState::Unsubscribed,
            ClassicState::Joining | ClassicState::Syncing => MemberState::Joining,
            ClassicState::PrepareJoin | ClassicState::Reconciling => MemberState::Reconciling,
            ClassicState::Stable => MemberState::Stable,
            ClassicState::Fenced => MemberState::Fenced,
            ClassicState::Stale => MemberState::Stale,
            ClassicState::Leaving => MemberState::Leaving,
            ClassicState::Fatal => MemberState::Fatal,
        }
    }
}

/// Why the state changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reason {
    /// The application subscribed.
    Subscribed,
    /// JoinGroup answered with a generation.
    Joined,
    /// SyncGroup answered with the assignment.
    Synced,
    /// Revocation and assignment confirmed.
    Reconciled,
    /// The coordinator asked for a rejoin (REBALANCE_IN_PROGRESS, or a
    /// cooperative member revoked partitions).
    RejoinRequested,
    /// The leader saw the partition count of a subscribed topic change
    /// since it assigned.
    MetadataChanged,
    /// The application changed the subscription since the last join.
    SubscriptionChanged,
    /// An eager member's revocation before the join was confirmed.
    RevokedForJoin,
    /// ILLEGAL_GENERATION or UNKNOWN_MEMBER_ID.
    GenerationReset,
    /// The lost partitions were given up.
    LostDone,
    /// `max.poll.interval.ms` passed without a poll.
    PollTimeout,
    /// The application polled again after a poll timeout.
    Rejoin,
    /// The application closed the consumer.
    LeaveRequested,
    /// The LeaveGroup request went out (or none was needed).
    LeaveSent,
    /// A JoinGroup or SyncGroup attempt failed; join again.
    JoinFailed,
    /// An error no retry can fix.
    FatalError,
}

impl Reason {
    /// The JoinGroup reason sent for a (re)join caused by this (KIP-800).
    pub fn join_reason(self) -> Option<&'static str> {
        Some(match self {
            Reason::RejoinRequested => "the group is rebalancing",
            Reason::MetadataChanged => "the partitions of a subscribed topic changed",
            Reason::SubscriptionChanged => "the subscription changed",
            Reason::GenerationReset | Reason::LostDone => "the member's generation was reset",
            Reason::Rejoin => "the application polled again after max.poll.interval.ms",
            Reason::JoinFailed => "the previous join or sync failed",
            _ => return None,
        })
    }
}

/// What the driver must do, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClassicAction {
    /// Stop fetching these partitions and let the application commit, then
    /// call [`ClassicMember::revocation_done`].
    Revoke(Vec<TopicPartition>),
    /// Start fetching these newly assigned partitions, then call
    /// [`ClassicMember::assignment_done`] (sent even when empty, as Java
    /// calls `onPartitionsAssigned`).
    Assign(Vec<TopicPartition>),
    /// These partitions were lost (generation reset, poll timeout): no
    /// commit is possible for them any more; then call
    /// [`ClassicMember::lost_done`].
    Lost(Vec<TopicPartition>),
    /// Look the group coordinator up, then call
    /// [`ClassicMember::coordinator_found`].
    FindCoordinator,
    /// An error for the application that does not stop the member.
    Error(MemberError),
    /// The member stopped for good.
    Fatal(MemberError),
}

/// A request the driver sends to the group coordinator, then hands the
/// answer (or the failure) back.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// JoinGroup: answer with [`ClassicMember::on_join_answer`]; give it
    /// the rebalance timeout plus 5 s to come back, as Java does.
    Join(JoinGroupRequest),
    /// SyncGroup: answer with [`ClassicMember::on_sync_answer`].
    Sync(SyncGroupRequest),
    /// Heartbeat: answer with [`ClassicMember::on_heartbeat_answer`].
    Heartbeat(HeartbeatRequest),
    /// LeaveGroup: no answer needed.
    Leave(LeaveGroupRequest),
}

/// Settings of a [`ClassicMember`].
#[derive(Debug, Clone)]
pub struct ClassicConfig {
    /// `group.id`.
    pub group_id: String,
    /// `group.instance.id` (static membership).
    pub instance_id: Option<String>,
    /// `client.rack`, sent in the subscription.
    pub rack_id: Option<String>,
    /// `session.timeout.ms` (default 45 s).
    pub session_timeout: Duration,
    /// `max.poll.interval.ms` (default 300 s), the JoinGroup rebalance
    /// timeout.
    pub rebalance_timeout: Duration,
    /// `heartbeat.interval.ms` (default 3 s).
    pub heartbeat_interval: Duration,
    /// `partition.assignment.strategy`, in order of preference.
    pub assignors: Vec<Assignor>,
    /// `retry.backoff.ms` (default 100 ms).
    pub retry_backoff: Duration,
}

impl ClassicConfig {
    /// Java's defaults for `group_id`.
    ///
    /// ```
    /// use kafka_consumer::internals::classic::ClassicConfig;
    /// use kafka_consumer::internals::classic::assignor::Assignor;
    /// // Cooperative rebalancing only (KIP-429): just the moved partitions are revoked.
    /// let mut c = ClassicConfig::new("orders-app");
    /// c.assignors = vec![Assignor::CooperativeSticky];
    /// ```
    pub fn new(group_id: impl Into<String>) -> Self {
        Self {
            group_id: group_id.into(),
            instance_id: None,
            rack_id: None,
            session_timeout: Duration::from_secs(45),
            rebalance_timeout: Duration::from_secs(300),
            heartbeat_interval: Duration::from_secs(3),
            assignors: Assignor::DEFAULT.to_vec(),
            retry_backoff: Duration::from_millis(100),
        }
    }
}

/// The classic consumer-group member (see the module docs).
///
/// ```
/// use kafka_consumer::internals::classic::{ClassicConfig, ClassicMember, ClassicState};
/// let m = ClassicMember::new(ClassicConfig::new("g"));
/// assert_eq!(m.state(), ClassicState::Unsubscribed);
/// assert_eq!(m.generation(), -1);
/// ```
#[derive(Debug)]
pub struct ClassicMember {
    /// The group, timeouts and assignors the member was made with.
    config: ClassicConfig,
    /// Where the member is in the protocol (see the module docs).
    state: ClassicState,
    /// The topics subscribed to.
    topics: BTreeSet<String>,
    /// The topics of the last JoinGroup sent (Java's `joinedSubscription`):
    /// a subscription that differs from them needs a rejoin.
    joined_topics: BTreeSet<String>,
    /// The member id the coordinator gave; empty before the first JoinGroup.
    member_id: String,
    /// The generation joined; -1 when not in one.
    generation: i32,
    /// The assignor the coordinator chose.
    protocol: Option<Assignor>,
    /// The partitions the application owns (its callbacks confirmed them).
    owned: Partitions,
    /// Assignments the leader computed for its SyncGroup.
    leader_assignments: Vec<SyncGroupRequestAssignment>,
    /// The leader's partition counts of every member's topics when it
    /// assigned (Java's `assignmentSnapshot`); None for a follower.
    snapshot: Option<BTreeMap<String, Option<i32>>>,
    /// Reconciliation in progress: the partitions being revoked, then
    /// those to add (cooperative: revoked first, KIP-429).
    revoking: Option<Partitions>,
    /// The partitions the reconciliation adds once the revocation is done.
    adding: Option<Partitions>,
    /// The assignment of the last SyncGroup, which the reconciliation moves to.
    target: Partitions,
    /// A rejoin is due once the reconciliation completes.
    rejoin_after: bool,
    /// Why the member (re)joins: the JoinGroup reason (v8+, KIP-800).
    join_reason: Option<&'static str>,
    /// A lost callback was handed out and its confirmation has not come yet.
    awaiting_lost: bool,
    /// The coordinator is unknown or was lost: find it before any request.
    need_coordinator: bool,
    /// When the next Heartbeat is due; `None` outside a generation.
    next_heartbeat: Option<Instant>,
    /// No JoinGroup or SyncGroup before this (the retry backoff after a failure).
    not_before: Option<Instant>,
    /// What the driver must do next (requests, callbacks), in order.
    actions: VecDeque<ClassicAction>,
    /// Every state change, newest last (bounded), for tests and tracing.
    history: VecDeque<(ClassicState, Reason)>,
}

fn flatten(p: &Partitions) -> Vec<TopicPartition> {
    p.iter()
        .flat_map(|(t, ps)| ps.iter().map(move |p| TopicPartition::new(t.as_str(), *p)))
        .collect()
}

fn difference(a: &Partitions, b: &Partitions) -> Partitions {
    a.iter()
        .filter_map(|(t, ps)| {
            let rest: BTreeSet<i32> = match b.get(t) {
                Some(o) => ps.difference(o).copied().collect(),
                None => ps.clone(),
            };
            (!rest.is_empty()).then(|| (t.clone(), rest))
        })
        .collect()
}

/// Decodes the members' subscriptions of a leader's JoinGroup answer.
fn subscriptions(resp: &JoinGroupResponse) -> Result<Vec<MemberSubscription>, String> {
    resp.members
        .iter()
        .map(|m| {
            let (_, s) = ConsumerProtocolSubscription::decode_prefixed(&m.metadata)
                .map_err(|e| format!("member {}: subscription: {e}", m.member_id))?;
            Ok(MemberSubscription {
                member_id: m.member_id.clone(),
                instance_id: m.group_instance_id.clone(),
                topics: s.topics.into_iter().collect(),
                owned: s
                    .owned_partitions
                    .into_iter()
                    .map(|t| (t.topic, t.partitions.into_iter().collect()))
                    .collect(),
                generation: s.generation_id,
            })
        })
        .collect()
}

/// The topics every member of a leader's JoinGroup answer subscribes to:
/// the driver makes sure the metadata knows their partition counts before
/// it calls [`ClassicMember::on_join_answer`].
pub fn leader_topics(resp: &JoinGroupResponse) -> BTreeSet<String> {
    subscriptions(resp)
        .map(|s| s.into_iter().flat_map(|m| m.topics).collect())
        .unwrap_or_default()
}

impl ClassicMember {
    /// A member that has not subscribed yet.
    ///
    /// ```
    /// use kafka_consumer::internals::classic::{ClassicConfig, ClassicMember};
    /// assert_eq!(ClassicMember::new(ClassicConfig::new("g")).member_id(), "");
    /// ```
    pub fn new(config: ClassicConfig) -> Self {
        Self {
            config,
            state: ClassicState::Unsubscribed,
            topics: BTreeSet::new(),
            joined_topics: BTreeSet::new(),
            member_id: String::new(),
            generation: -1,
            protocol: None,
            owned: Partitions::new(),
            leader_assignments: Vec::new(),
            snapshot: None,
            revoking: None,
            adding: None,
            target: Partitions::new(),
            rejoin_after: false,
            join_reason: None,
            awaiting_lost: false,
            need_coordinator: true,
            next_heartbeat: None,
            not_before: None,
            actions: VecDeque::new(),
            history: VecDeque::new(),
        }
    }

    /// The current state.
    pub fn state(&self) -> ClassicState {
        self.state
    }

    /// The generation (-1 when not joined): the `generation_id` of offset
    /// commits and of the group metadata (KIP-447).
    pub fn generation(&self) -> i32 {
        self.generation
    }

    /// The member id the coordinator gave ("" before the first join).
    pub fn member_id(&self) -> &str {
        &self.member_id
    }

    /// The assignor the coordinator chose in the last join.
    pub fn protocol(&self) -> Option<Assignor> {
        self.protocol
    }

    /// The partitions owned (confirmed by the application).
    pub fn owned(&self) -> &Partitions {
        &self.owned
    }

    /// The recent state changes with their reasons, oldest first.
    pub fn history(&self) -> Vec<(ClassicState, Reason)> {
        self.history.iter().copied().collect()
    }

    /// True when every configured assignor is cooperative (Java's
    /// `RebalanceProtocol.COOPERATIVE`); otherwise the member is eager.
    pub fn is_cooperative(&self) -> bool {
        self.config.assignors.iter().all(|a| a.is_cooperative())
    }

    /// The one transition function: every state change goes through here.
    fn transition(&mut self, to: ClassicState, why: Reason) {
        tracing::debug!(group = %self.config.group_id, from = ?self.state, ?to, ?why, "classic member");
        self.state = to;
        if self.history.len() == 64 {
            self.history.pop_front();
        }
        self.history.push_back((to, why));
        if matches!(to, ClassicState::Joining | ClassicState::PrepareJoin)
            && why != Reason::RevokedForJoin
        {
            self.join_reason = why.join_reason();
        }
        match to {
            ClassicState::Joining => {
                self.next_heartbeat = None;
                self.rejoin_after = false;
            }
            ClassicState::Stable => {
                self.next_heartbeat
                    .get_or_insert(Instant::now() + self.config.heartbeat_interval);
            }
            _ => {}
        }
    }

    /// The next decision for the driver.
    pub fn poll_action(&mut self) -> Option<ClassicAction> {
        self.actions.pop_front()
    }

    /// Subscribes to `topics` (replacing the subscription) and joins. A
    /// member in the group whose subscription changed rejoins, as Java's
    /// `ConsumerCoordinator` does: at once when stable, else once the
    /// rebalance under way completes (its assignment is kept to the
    /// topics still subscribed). Before the rejoin an eager member revokes
    /// everything; a cooperative one the partitions of the topics it no
    /// longer subscribes to.
    ///
    /// ```
    /// use kafka_consumer::internals::classic::{ClassicConfig, ClassicMember, ClassicState};
    /// let mut m = ClassicMember::new(ClassicConfig::new("g"));
    /// m.subscribe(["orders".to_string()]);
    /// assert_eq!(m.state(), ClassicState::Joining);
    /// m.subscribe(["orders".to_string(), "refunds".to_string()]);
    /// assert_eq!(m.state(), ClassicState::Joining, "the join to send carries both");
    /// ```
    pub fn subscribe(&mut self, topics: impl IntoIterator<Item = String>) {
        self.topics = topics.into_iter().collect();
        match self.state {
            ClassicState::Unsubscribed => {
                self.need_coordinator = true;
                self.actions.push_back(ClassicAction::FindCoordinator);
                self.transition(ClassicState::Joining, Reason::Subscribed);
            }
            ClassicState::Stable if self.topics != self.joined_topics => {
                self.rejoin_with(Reason::SubscriptionChanged)
            }
            // Joining: the next JoinGroup carries the new topics, or the
            // one in flight is followed by a rejoin (`assignment_done`).
            _ => {}
        }
    }

    /// The topics subscribed to.
    pub fn topics(&self) -> &BTreeSet<String> {
        &self.topics
    }

    /// The coordinator is known (again).
    pub fn coordinator_found(&mut self) {
        self.need_coordinator = false;
    }

    /// True while the coordinator is to be looked up.
    pub fn needs_coordinator(&self) -> bool {
        self.need_coordinator
    }

    fn coordinator_lost(&mut self) {
        if !self.need_coordinator {
            self.need_coordinator = true;
            self.actions.push_back(ClassicAction::FindCoordinator);
        }
    }

    /// When [`Self::poll_request`] has something next (None: on an event).
    pub fn next_request_at(&self) -> Option<Instant> {
        match self.state {
            ClassicState::Joining | ClassicState::Syncing | ClassicState::Leaving => {
                Some(self.not_before.unwrap_or_else(Instant::now))
            }
            ClassicState::Stable | ClassicState::Reconciling | ClassicState::PrepareJoin => {
                self.next_heartbeat
            }
            _ => None,
        }
    }

    fn subscription(&self) -> ConsumerProtocolSubscription {
        let owned = if self.is_cooperative() {
            self.owned
                .iter()
                .map(|(t, ps)| ConsumerProtocolSubscriptionTopicPartition {
                    topic: t.clone(),
                    partitions: ps.iter().copied().collect(),
                })
                .collect()
        } else {
            Vec::new()
        };
        ConsumerProtocolSubscription {
            topics: self.topics.iter().cloned().collect(),
            user_data: None,
            owned_partitions: owned,
            generation_id: self.generation,
            rack_id: self.config.rack_id.clone(),
        }
    }

    /// The request to send now, if any (one at a time: the driver answers
    /// it before asking again).
    pub fn poll_request(&mut self, now: Instant) -> Option<Request> {
        if self.state == ClassicState::Leaving {
            let leave = self.leave_request();
            self.transition(ClassicState::Unsubscribed, Reason::LeaveSent);
            return leave.map(Request::Leave);
        }
        if self.need_coordinator || self.not_before.is_some_and(|t| now < t) {
            return None;
        }
        self.not_before = None;
        match self.state {
            ClassicState::Joining => {
                self.joined_topics = self.topics.clone();
                let meta = self.subscription().encode_prefixed(3).unwrap_or_default();
                Some(Request::Join(JoinGroupRequest {
                    group_id: self.config.group_id.clone(),
                    session_timeout_ms: millis(self.config.session_timeout),
                    rebalance_timeout_ms: millis(self.config.rebalance_timeout),
                    member_id: self.member_id.clone(),
                    group_instance_id: self.config.instance_id.clone(),
                    protocol_type: "consumer".into(),
                    protocols: self
                        .config
                        .assignors
                        .iter()
                        .map(|a| JoinGroupRequestProtocol {
                            name: a.name().into(),
                            metadata: meta.clone().into(),
                            ..Default::default()
                        })
                        .collect(),
                    reason: self.join_reason.map(String::from),
                    ..Default::default()
                }))
            }
            ClassicState::Syncing => Some(Request::Sync(SyncGroupRequest {
                group_id: self.config.group_id.clone(),
                generation_id: self.generation,
                member_id: self.member_id.clone(),
                group_instance_id: self.config.instance_id.clone(),
                protocol_type: Some("consumer".into()),
                protocol_name: self.protocol.map(|p| p.name().to_string()),
                assignments: std::mem::take(&mut self.leader_assignments),
                ..Default::default()
            })),
            ClassicState::Stable | ClassicState::Reconciling | ClassicState::PrepareJoin => {
                let due = self.next_heartbeat.is_some_and(|t| now >= t);
                if !due || self.generation < 0 {
                    return None;
                }
                self.next_heartbeat = Some(now + self.config.heartbeat_interval);
                Some(Request::Heartbeat(HeartbeatRequest {
                    group_id: self.config.group_id.clone(),
                    generation_id: self.generation,
                    member_id: self.member_id.clone(),
                    group_instance_id: self.config.instance_id.clone(),
                    ..Default::default()
                }))
            }
            _ => None,
        }
    }

    fn leave_request(&self) -> Option<LeaveGroupRequest> {
        if self.config.instance_id.is_some() || self.member_id.is_empty() {
            return None;
        }
        Some(LeaveGroupRequest {
            group_id: self.config.group_id.clone(),
            members: vec![LeaveGroupRequestMemberIdentity {
                member_id: self.member_id.clone(),
                group_instance_id: None,
                reason: Some("the consumer is leaving the group".into()),
                ..Default::default()
            }],
            ..Default::default()
        })
    }

    /// The LeaveGroup `request` (built with the v3+ batch of members) in
    /// the shape `version` carries: before v3 one top-level member id;
    /// before v5 no reason.
    pub fn leave_request_at(request: &LeaveGroupRequest, version: i16) -> LeaveGroupRequest {
        let mut r = request.clone();
        if version < 3 {
            r.member_id = r
                .members
                .first()
                .map(|m| m.member_id.clone())
                .unwrap_or_default();
            r.members.clear();
        } else if version < 5 {
            for m in &mut r.members {
                m.reason = None;
            }
        }
        r
    }

    fn fatal(&mut self, error: ErrorCode, message: Option<String>) {
        let e = MemberError { error, message };
        self.owned.clear();
        self.transition(ClassicState::Fatal, Reason::FatalError);
        self.actions.push_back(ClassicAction::Fatal(e));
    }

    /// Resets the generation (and the member id on UNKNOWN_MEMBER_ID):
    /// owned partitions are lost, then the member rejoins.
    fn reset_generation(&mut self, reset_member_id: bool) {
        self.generation = -1;
        if reset_member_id {
            self.member_id.clear();
        }
        // What the application was already told is being revoked is not
        // lost again.
        if let Some(r) = self.revoking.take() {
            self.owned = difference(&self.owned, &r);
        }
        self.adding = None;
        if self.owned.is_empty() {
            self.transition(ClassicState::Joining, Reason::GenerationReset);
        } else {
            self.awaiting_lost = true;
            self.actions
                .push_back(ClassicAction::Lost(flatten(&self.owned)));
            self.transition(ClassicState::Fenced, Reason::GenerationReset);
        }
    }

    /// Starts a rejoin: an eager member revokes what it owns first.
    fn rejoin_now(&mut self) {
        self.rejoin_with(Reason::RejoinRequested);
    }

    fn rejoin_with(&mut self, why: Reason) {
        // Eager: everything; cooperative: the partitions of topics no
        // longer subscribed (Java's `onJoinPrepare`).
        let revoke: Partitions = if self.is_cooperative() {
            self.owned
                .iter()
                .filter(|(t, _)| !self.topics.contains(*t))
                .map(|(t, ps)| (t.clone(), ps.clone()))
                .collect()
        } else {
            self.owned.clone()
        };
        if !revoke.is_empty() {
            self.actions
                .push_back(ClassicAction::Revoke(flatten(&revoke)));
            self.revoking = Some(revoke);
            self.transition(ClassicState::PrepareJoin, why);
        } else {
            self.transition(ClassicState::Joining, why);
        }
    }

    /// Errors every request may get.
    fn common_error(&mut self, now: Instant, error: ErrorCode, message: Option<String>) {
        match error {
            ErrorCode::CoordinatorNotAvailable | ErrorCode::NotCoordinator => {
                self.coordinator_lost()
            }
            ErrorCode::CoordinatorLoadInProgress => {
                self.not_before = Some(now + self.config.retry_backoff)
            }
            ErrorCode::IllegalGeneration => self.reset_generation(false),
            ErrorCode::UnknownMemberId => self.reset_generation(true),
            e if e.is_retriable() => self.not_before = Some(now + self.config.retry_backoff),
            e => self.fatal(e, message),
        }
    }

    /// JoinGroup answered. For the leader, `partitions` gives the partition
    /// count of a subscribed topic (see [`leader_topics`]); topics it does
    /// not know are left out of the assignment, as Java does.
    pub fn on_join_answer(
        &mut self,
        now: Instant,
        resp: JoinGroupResponse,
        partitions: &dyn Fn(&str) -> Option<i32>,
    ) {
        if self.state != ClassicState::Joining {
            return;
        }
        let error = ErrorCode::from(resp.error_code);
        match error {
            ErrorCode::None => {}
            ErrorCode::MemberIdRequired => {
                self.member_id = resp.member_id;
                self.join_reason = Some("rejoining with the member id the coordinator gave");
                return;
            }
            ErrorCode::UnknownMemberId => {
                self.member_id.clear();
                self.generation = -1;
                return;
            }
            ErrorCode::IllegalGeneration | ErrorCode::RebalanceInProgress => {
                self.generation = -1;
                return;
            }
            e => return self.common_error(now, e, None),
        }
        if resp
            .protocol_type
            .as_deref()
            .is_some_and(|t| t != "consumer")
        {
            return self.fatal(
                ErrorCode::InconsistentGroupProtocol,
                Some(format!("JoinGroup: protocol type {:?}", resp.protocol_type)),
            );
        }
        let name = resp.protocol_name.clone().unwrap_or_default();
        let Some(protocol) =
            Assignor::from_name(&name).filter(|a| self.config.assignors.contains(a))
        else {
            return self.fatal(
                ErrorCode::InconsistentGroupProtocol,
                Some(format!(
                    "JoinGroup: the coordinator chose assignor {name:?}"
                )),
            );
        };
        self.protocol = Some(protocol);
        self.member_id = resp.member_id.clone();
        self.generation = resp.generation_id;
        self.leader_assignments.clear();
        self.snapshot = None;
        if resp.leader == resp.member_id && !resp.skip_assignment {
            let members = match subscriptions(&resp) {
                Ok(m) => m,
                Err(e) => return self.fatal(ErrorCode::InconsistentGroupProtocol, Some(e)),
            };
            let topics: BTreeSet<&String> = members.iter().flat_map(|m| &m.topics).collect();
            let snapshot: BTreeMap<String, Option<i32>> = topics
                .into_iter()
                .map(|t| (t.clone(), partitions(t)))
                .collect();
            let counts: BTreeMap<String, i32> = snapshot
                .iter()
                .filter_map(|(t, c)| Some((t.clone(), (*c)?)))
                .collect();
            self.snapshot = Some(snapshot);
            let result = protocol.assign(&members, &counts);
            for (member_id, parts) in result {
                let a = ConsumerProtocolAssignment {
                    assigned_partitions: parts
                        .into_iter()
                        .map(|(topic, ps)| ConsumerProtocolAssignmentTopicPartition {
                            topic,
                            partitions: ps.into_iter().collect(),
                        })
                        .collect(),
                    user_data: None,
                };
                self.leader_assignments.push(SyncGroupRequestAssignment {
                    member_id,
                    assignment: a.encode_prefixed(3).unwrap_or_default().into(),
                    ..Default::default()
                });
            }
        }
        self.transition(ClassicState::Syncing, Reason::Joined);
    }

    /// SyncGroup answered: reconcile the assignment.
    pub fn on_sync_answer(&mut self, now: Instant, resp: SyncGroupResponse) {
        if self.state != ClassicState::Syncing {
            return;
        }
        match ErrorCode::from(resp.error_code) {
            ErrorCode::None => {}
            ErrorCode::RebalanceInProgress => {
                return self.transition(ClassicState::Joining, Reason::JoinFailed);
            }
            e @ (ErrorCode::CoordinatorNotAvailable | ErrorCode::NotCoordinator) => {
                self.common_error(now, e, None);
                return self.transition(ClassicState::Joining, Reason::JoinFailed);
            }
            e => return self.common_error(now, e, None),
        }
        let assigned: Partitions =
            match ConsumerProtocolAssignment::decode_prefixed(&resp.assignment) {
                Ok((_, a)) => a
                    .assigned_partitions
                    .into_iter()
                    .filter(|t| self.topics.contains(&t.topic))
                    .map(|t| (t.topic, t.partitions.into_iter().collect::<BTreeSet<_>>()))
                    .filter(|(_, p)| !p.is_empty())
                    .collect(),
                Err(e) => {
                    // Java treats an unreadable assignment as a broken leader
                    // and rejoins.
                    self.actions.push_back(ClassicAction::Error(MemberError {
                        error: ErrorCode::InconsistentGroupProtocol,
                        message: Some(format!("SyncGroup assignment: {e}")),
                    }));
                    self.not_before = Some(now + self.config.retry_backoff);
                    return self.transition(ClassicState::Joining, Reason::JoinFailed);
                }
            };
        let revoked = difference(&self.owned, &assigned);
        let added = difference(&assigned, &self.owned);
        self.target = assigned;
        self.next_heartbeat = Some(now + self.config.heartbeat_interval);
        self.transition(ClassicState::Reconciling, Reason::Synced);
        if revoked.is_empty() {
            self.actions
                .push_back(ClassicAction::Assign(flatten(&added)));
            self.adding = Some(added);
        } else {
            self.actions
                .push_back(ClassicAction::Revoke(flatten(&revoked)));
            self.revoking = Some(revoked);
            self.adding = Some(added);
            // The revoked partitions go to their new owner in a follow-up
            // rebalance (KIP-429).
            self.rejoin_after = true;
        }
    }

    /// Heartbeat answered (`sent` is the request it answers).
    pub fn on_heartbeat_answer(
        &mut self,
        now: Instant,
        sent: &HeartbeatRequest,
        resp: HeartbeatResponse,
    ) {
        let joined = matches!(
            self.state,
            ClassicState::Stable | ClassicState::Reconciling | ClassicState::PrepareJoin
        );
        // An answer for an older generation is ignored (Java's
        // `generationUnchanged`).
        if !joined || sent.generation_id != self.generation || sent.member_id != self.member_id {
            return;
        }
        match ErrorCode::from(resp.error_code) {
            ErrorCode::None => {}
            ErrorCode::RebalanceInProgress => self.rejoin_requested(),
            e => self.common_error(now, e, None),
        }
    }

    /// The coordinator asked for a rejoin: at once when Stable, after the
    /// reconciliation when Reconciling (an eager member preparing its join
    /// is rejoining already).
    fn rejoin_requested(&mut self) {
        match self.state {
            ClassicState::Stable => self.rejoin_now(),
            ClassicState::Reconciling => self.rejoin_after = true,
            _ => {}
        }
    }

    /// True while a JoinGroup or SyncGroup is to be sent or awaited (Java's
    /// `rebalanceInProgress`). The generation is then about to be replaced:
    /// an offset commit made now fails at once without being sent (Java's
    /// `generationIfStable` is null), since the coordinator would refuse it
    /// (ILLEGAL_GENERATION once the join completed — and a JoinGroup parked
    /// for the other members holds back every later request on its
    /// connection until then — or REBALANCE_IN_PROGRESS before the
    /// SyncGroup).
    pub fn rebalance_in_progress(&self) -> bool {
        matches!(self.state, ClassicState::Joining | ClassicState::Syncing)
    }

    /// An OffsetCommit sent with `generation` and `member_id` was refused
    /// with `error`; returns the error to report to the application, as
    /// Java's `OffsetCommitResponseHandler` decides:
    ///
    /// - REBALANCE_IN_PROGRESS (Java's `RebalanceInProgressException`:
    ///   poll to complete the rebalance, then commit again the partitions
    ///   still owned) when the member is rejoining or its generation moved
    ///   on since the commit was sent: the commit raced a rebalance of the
    ///   member's own (the JoinGroup reached the coordinator first), and
    ///   the refusal says nothing about the current generation;
    /// - otherwise the error itself (Java's `CommitFailedException`), and
    ///   the member acts on it as on a heartbeat's: ILLEGAL_GENERATION
    ///   resets the generation, UNKNOWN_MEMBER_ID the member id too (the
    ///   partitions are lost, the member rejoins); REBALANCE_IN_PROGRESS
    ///   asks for a rejoin. A member already out of the group (fenced,
    ///   stale) does not act again.
    ///
    /// Other errors are returned as they are.
    pub fn on_commit_refused(
        &mut self,
        now: Instant,
        generation: i32,
        member_id: &str,
        error: ErrorCode,
    ) -> ErrorCode {
        if !matches!(
            error,
            ErrorCode::IllegalGeneration
                | ErrorCode::UnknownMemberId
                | ErrorCode::RebalanceInProgress
        ) {
            return error;
        }
        let joined = matches!(
            self.state,
            ClassicState::Stable | ClassicState::Reconciling | ClassicState::PrepareJoin
        );
        let moved_on = generation != self.generation || member_id != self.member_id;
        if self.rebalance_in_progress() || (joined && moved_on) {
            return ErrorCode::RebalanceInProgress;
        }
        if !joined {
            return error;
        }
        match error {
            ErrorCode::RebalanceInProgress => self.rejoin_requested(),
            e => self.common_error(now, e, None),
        }
        error
    }

    /// The request got no answer (transport failure or timeout): the
    /// coordinator is looked up again; a join or sync starts over.
    pub fn on_request_failure(&mut self, now: Instant, sent: &Request) {
        self.coordinator_lost();
        self.not_before = Some(now + self.config.retry_backoff);
        if matches!(sent, Request::Sync(_)) && self.state == ClassicState::Syncing {
            self.transition(ClassicState::Joining, Reason::JoinFailed);
        }
    }

    /// True when this member assigned the partitions of the current
    /// generation.
    pub fn is_leader(&self) -> bool {
        self.snapshot.is_some()
    }

    /// The leader compares the partition counts of the members' topics with
    /// those it assigned from, and rejoins when one changed (partitions
    /// added, a topic created or deleted), as Java's `ConsumerCoordinator`
    /// does; a follower ignores this. Returns true when a rejoin started.
    pub fn check_metadata(&mut self, partitions: &dyn Fn(&str) -> Option<i32>) -> bool {
        let changed = self.state == ClassicState::Stable
            && self
                .snapshot
                .as_ref()
                .is_some_and(|snap| snap.iter().any(|(t, c)| partitions(t) != *c));
        if changed {
            self.snapshot = None;
            self.rejoin_with(Reason::MetadataChanged);
        }
        changed
    }

    /// The application confirmed the last [`ClassicAction::Revoke`].
    /// Returns false when no revocation was pending.
    pub fn revocation_done(&mut self) -> bool {
        let Some(revoked) = self.revoking.take() else {
            return false;
        };
        self.owned = difference(&self.owned, &revoked);
        match self.state {
            ClassicState::PrepareJoin => {
                self.transition(ClassicState::Joining, Reason::RevokedForJoin)
            }
            ClassicState::Reconciling => {
                let added = self.adding.clone().unwrap_or_default();
                self.actions
                    .push_back(ClassicAction::Assign(flatten(&added)));
            }
            _ => {}
        }
        true
    }

    /// The application confirmed the last [`ClassicAction::Assign`].
    /// Returns false when no assignment was pending.
    pub fn assignment_done(&mut self) -> bool {
        if self.state != ClassicState::Reconciling || self.revoking.is_some() {
            return false;
        }
        let Some(added) = self.adding.take() else {
            return false;
        };
        for (t, ps) in added {
            self.owned.entry(t).or_default().extend(ps);
        }
        self.transition(ClassicState::Stable, Reason::Reconciled);
        if self.rejoin_after {
            self.rejoin_now();
        } else if self.joined_topics != self.topics {
            self.rejoin_with(Reason::SubscriptionChanged);
        }
        true
    }

    /// The application confirmed the last [`ClassicAction::Lost`]; the
    /// member rejoins (a stale one waits for [`Self::rejoin`]).
    pub fn lost_done(&mut self) -> bool {
        if !self.awaiting_lost {
            return false;
        }
        self.awaiting_lost = false;
        self.owned.clear();
        if self.state == ClassicState::Fenced {
            self.transition(ClassicState::Joining, Reason::LostDone);
        }
        true
    }

    /// `max.poll.interval.ms` passed without a poll: the owned partitions
    /// are lost and a dynamic member leaves (the LeaveGroup to send is
    /// returned); the member rejoins at the next [`Self::rejoin`].
    pub fn poll_timeout_expired(&mut self) -> Option<LeaveGroupRequest> {
        if matches!(
            self.state,
            ClassicState::Unsubscribed
                | ClassicState::Stale
                | ClassicState::Leaving
                | ClassicState::Fatal
        ) {
            return None;
        }
        let leave = self.leave_request();
        if let Some(r) = self.revoking.take() {
            self.owned = difference(&self.owned, &r);
        }
        self.adding = None;
        if !self.owned.is_empty() {
            self.awaiting_lost = true;
            self.actions
                .push_back(ClassicAction::Lost(flatten(&self.owned)));
        }
        self.generation = -1;
        if leave.is_some() {
            self.member_id.clear();
        }
        self.transition(ClassicState::Stale, Reason::PollTimeout);
        leave
    }

    /// The application polled again after a poll timeout: join anew.
    pub fn rejoin(&mut self) -> bool {
        if self.state != ClassicState::Stale || self.awaiting_lost {
            return false;
        }
        self.transition(ClassicState::Joining, Reason::Rejoin);
        true
    }

    /// Close: a dynamic member sends LeaveGroup next; a static one just
    /// stops (Java's `maybeLeaveGroup`).
    pub fn leave(&mut self) {
        if matches!(
            self.state,
            ClassicState::Unsubscribed | ClassicState::Leaving | ClassicState::Fatal
        ) {
            return;
        }
        self.revoking = None;
        self.adding = None;
        self.awaiting_lost = false;
        self.owned.clear();
        self.transition(ClassicState::Leaving, Reason::LeaveRequested);
    }
}

fn millis(d: Duration) -> i32 {
    d.as_millis().min(i32::MAX as u128) as i32
}

#[cfg(test)]
pub(crate) mod tests;
