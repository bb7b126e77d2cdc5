//! The member of a consumer group under the KIP-848 protocol
//! (`group.protocol=consumer`): the broker computes the assignment, the
//! member heartbeats, reconciles what it owns with what it is given and
//! acknowledges. A deterministic, sans-IO state machine: answers, callback
//! completions and time go in; heartbeats to send and [`Kip848Action`]s come
//! out. The driver owns the sockets, the clock and the application's
//! callbacks.
//!
//! ```text
//!                 subscribe                epoch > 0
//!  Unsubscribed ───────────▶ Joining ─────────────────▶ Stable ◀──────────────┐
//!       ▲                      ▲  ▲                       │ target ≠ owned     │ ack answered
//!       │ leave sent           │  │ lost done             ▼                    │
//!    Leaving                   │  └────── Fenced    Reconciling ──────▶ Acknowledging
//!       ▲                      │            ▲        (revoke, then assign)  (ack heartbeat)
//!       │ revocation done      │ rejoin     │ FENCED_MEMBER_EPOCH / UNKNOWN_MEMBER_ID
//!  PrepareLeaving              Stale        │ from any joined state
//!       ▲ leave()              ▲ poll timeout (leave sent, partitions lost)
//!       └──────── any joined state ─────────┘           any state ── fatal error ──▶ Fatal
//! ```
//!
//! The rules follow Java's `AbstractMembershipManager` /
//! `ConsumerMembershipManager` and the group coordinator's
//! `CurrentAssignmentBuilder`:
//!
//! - A join heartbeat carries epoch 0, every field and an empty owned list.
//!   Later heartbeats send a field only when it changed (`None` = unchanged);
//!   after any error or transport failure the next heartbeat is full again.
//! - The epoch of every successful answer is adopted (a negative one is
//!   ignored), as is its heartbeat interval.
//! - One reconciliation at a time: the partitions the target no longer holds
//!   are revoked first (the application commits, then confirms), then the new
//!   ones are assigned (confirmed too, even when none were added); only then
//!   is the new owned set acknowledged, by a heartbeat sent at once. A
//!   partition thus reaches its new owner only after the old owner dropped it.
//! - FENCED_MEMBER_EPOCH and UNKNOWN_MEMBER_ID lose every partition (no
//!   commit is possible any more) and rejoin at epoch 0 with the same member
//!   id. A missed `max.poll.interval.ms` sends a leave heartbeat and loses
//!   every partition until the application polls again.
//! - Coordinator errors ask for the coordinator again; load-in-progress and
//!   transport failures back off exponentially; authorization of a topic is
//!   reported without leaving; every other error is fatal.
//!
//! ```
//! use kafka_consumer::internals::kip848::{
//!     HeartbeatAnswer, Kip848Action, MemberState, Kip848Member, Kip848Config,
//! };
//! use std::collections::{BTreeMap, BTreeSet};
//! use std::time::{Duration, Instant};
//!
//! let now = Instant::now();
//! let mut m = Kip848Member::new(Kip848Config::new("orders-app", "member-1"));
//! m.subscribe(["orders".to_string()]);
//! m.coordinator_found();
//! let join = m.poll_heartbeat(now).expect("join at once");
//! assert_eq!(join.member_epoch, 0);
//! // The broker assigns orders-0 (topic id [1; 16]) at epoch 3.
//! let orders = [1u8; 16];
//! let assignment = BTreeMap::from([(orders, BTreeSet::from([0]))]);
//! m.on_heartbeat_answer(now, HeartbeatAnswer::ok(3, Duration::from_secs(5), Some(assignment.clone())));
//! m.reconcile(&|_| true);
//! assert!(matches!(m.poll_action(), Some(Kip848Action::Assign { .. })));
//! m.assignment_done();
//! assert_eq!(m.state(), MemberState::Acknowledging);
//! let ack = m.poll_heartbeat(now).expect("acknowledged at once");
//! assert_eq!(ack.topic_partitions, Some(vec![(orders, vec![0])]));
//! m.on_heartbeat_answer(now, HeartbeatAnswer::ok(3, Duration::from_secs(5), None));
//! assert_eq!(m.state(), MemberState::Stable);
//! assert_eq!(m.owned(), &assignment);
//! ```

use kafka_proto::ErrorCode;
use kafka_proto::primitives::Uuid;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::{Duration, Instant};

/// Partitions by topic id.
pub type TopicPartitions = BTreeMap<Uuid, BTreeSet<i32>>;

/// Where the member is (see the module's state diagram).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemberState {
    /// Not in the group (never subscribed, or left).
    Unsubscribed,
    /// Heartbeating at epoch 0 until the broker gives an epoch.
    Joining,
    /// In the group, owning what was last acknowledged.
    Stable,
    /// Revoking and assigning partitions (callbacks running).
    Reconciling,
    /// The reconciled assignment is to be acknowledged by a heartbeat.
    Acknowledging,
    /// Fenced by the coordinator: partitions lost, rejoining next.
    Fenced,
    /// `max.poll.interval.ms` passed without a poll: left the group until
    /// the application polls again.
    Stale,
    /// Revoking every partition before leaving.
    PrepareLeaving,
    /// The leave heartbeat is to be sent.
    Leaving,
    /// Stopped by a fatal error.
    Fatal,
}

impl MemberState {
    /// True in the states where the member holds an epoch from the broker.
    pub fn is_member(self) -> bool {
        matches!(self, Self::Stable | Self::Reconciling | Self::Acknowledging)
    }
}

/// Why the state changed: the input that caused it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transition {
    /// The application subscribed.
    Subscribed,
    /// The broker answered the join with an epoch.
    Joined,
    /// The target assignment differs from what is owned.
    TargetChanged,
    /// The callbacks of a reconciliation completed.
    Reconciled,
    /// The target was reached without a callback.
    NothingToReconcile,
    /// The broker answered the acknowledging heartbeat.
    Acknowledged,
    /// FENCED_MEMBER_EPOCH or UNKNOWN_MEMBER_ID.
    FencedByCoordinator,
    /// The partitions of a fenced or stale member were given up.
    LostDone,
    /// The application polled again after a poll timeout.
    Rejoin,
    /// `max.poll.interval.ms` passed without a poll.
    PollTimeout,
    /// The application unsubscribed or closed.
    LeaveRequested,
    /// The owned partitions were revoked before leaving.
    RevokedForLeave,
    /// The leave heartbeat was sent.
    LeaveSent,
    /// An error no retry can fix.
    FatalError,
}

/// A heartbeat answer's error that is not handled by a retry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("consumer group heartbeat failed: {error:?}{}{}", message.as_deref().map(|m| format!(": {m}")).unwrap_or_default(), hint(*error))]
pub struct MemberError {
    /// The broker's error code.
    pub error: ErrorCode,
    /// The broker's message, if any.
    pub message: Option<String>,
}

fn hint(e: ErrorCode) -> &'static str {
    match e {
        ErrorCode::UnsupportedVersion => {
            " (the broker does not serve the consumer group protocol of KIP-848: set group.protocol=classic)"
        }
        ErrorCode::UnreleasedInstanceId => {
            " (another member with this group.instance.id has not left the group yet)"
        }
        ErrorCode::FencedInstanceId => " (a newer member joined with this group.instance.id)",
        _ => "",
    }
}

/// What the driver must do next, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kip848Action {
    /// Stop fetching these partitions, let the application commit and run
    /// its revocation callback, then call [`Kip848Member::revocation_done`].
    Revoke(TopicPartitions),
    /// Start owning `added` (the whole new assignment is `assignment`): run
    /// the assignment callback, then call [`Kip848Member::assignment_done`].
    /// Sent even when nothing was added, as Java calls
    /// `onPartitionsAssigned` with an empty set.
    Assign {
        /// Newly assigned partitions.
        added: TopicPartitions,
        /// Everything owned once this completes.
        assignment: TopicPartitions,
    },
    /// These partitions were lost (fenced, stale or fatal): no commit is
    /// possible for them any more. Run the lost callback, then call
    /// [`Kip848Member::lost_done`].
    Lost(TopicPartitions),
    /// Look the group coordinator up again, then call
    /// [`Kip848Member::coordinator_found`].
    FindCoordinator,
    /// The target names topic ids the driver does not know: refresh
    /// metadata; reconciliation of those topics waits for them.
    ResolveTopics(Vec<Uuid>),
    /// An error for the application that does not stop the member
    /// (TOPIC_AUTHORIZATION_FAILED: it recovers when the ACLs are fixed).
    Error(MemberError),
    /// The member stopped for good.
    Fatal(MemberError),
}

/// Settings of a [`Kip848Member`].
#[derive(Debug, Clone)]
pub struct Kip848Config {
    /// `group.id`.
    pub group_id: String,
    /// The member id, generated once by the client (a UUID), kept for the
    /// life of the consumer (ConsumerGroupHeartbeat v1).
    pub member_id: String,
    /// `group.instance.id` (static membership).
    pub instance_id: Option<String>,
    /// `client.rack`.
    pub rack_id: Option<String>,
    /// `max.poll.interval.ms` (default 300 s), sent as the rebalance timeout.
    pub rebalance_timeout: Duration,
    /// `group.remote.assignor`.
    pub server_assignor: Option<String>,
    /// `retry.backoff.ms` (default 100 ms): first pause after an error.
    pub retry_backoff: Duration,
    /// `retry.backoff.max.ms` (default 1 s).
    pub retry_backoff_max: Duration,
}

impl Kip848Config {
    /// Defaults for `group_id` and a member id.
    ///
    /// ```
    /// use kafka_consumer::internals::kip848::Kip848Config;
    /// // A static member (KIP-345): it keeps its partitions across restarts.
    /// let c = Kip848Config::new("orders-app", "3f1c...").instance_id("orders-1");
    /// assert_eq!(c.instance_id.as_deref(), Some("orders-1"));
    /// ```
    pub fn new(group_id: impl Into<String>, member_id: impl Into<String>) -> Self {
        Self {
            group_id: group_id.into(),
            member_id: member_id.into(),
            instance_id: None,
            rack_id: None,
            rebalance_timeout: Duration::from_secs(300),
            server_assignor: None,
            retry_backoff: Duration::from_millis(100),
            retry_backoff_max: Duration::from_secs(1),
        }
    }

    /// Sets `group.instance.id`.
    pub fn instance_id(mut self, id: impl Into<String>) -> Self {
        self.instance_id = Some(id.into());
        self
    }
}

/// The fields of one ConsumerGroupHeartbeat request; `None` means
/// "unchanged since the last heartbeat" (null on the wire).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heartbeat {
    /// `group.id`.
    pub group_id: String,
    /// The member id.
    pub member_id: String,
    /// 0 to join, -1 to leave, -2 for a static member leaving for a while.
    pub member_epoch: i32,
    /// `group.instance.id`, sent on every heartbeat when configured.
    pub instance_id: Option<String>,
    /// `client.rack`, sent when joining.
    pub rack_id: Option<String>,
    /// The rebalance timeout in ms, or -1 when unchanged.
    pub rebalance_timeout_ms: i32,
    /// The subscription, sorted (empty once a regular expression replaced
    /// the names).
    pub subscribed_topic_names: Option<Vec<String>>,
    /// The regular expression subscribed to (the broker's RE2/J dialect,
    /// v1+; empty once topic names replaced it).
    pub subscribed_topic_regex: Option<String>,
    /// The server-side assignor.
    pub server_assignor: Option<String>,
    /// The owned partitions (topic id, sorted partitions).
    pub topic_partitions: Option<Vec<(Uuid, Vec<i32>)>>,
}

/// A ConsumerGroupHeartbeat answer, as the member needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeartbeatAnswer {
    /// The error code.
    pub error: ErrorCode,
    /// The error message.
    pub message: Option<String>,
    /// The member id the broker knows the member by (v0 assigns it).
    pub member_id: Option<String>,
    /// The member epoch.
    pub member_epoch: i32,
    /// The heartbeat interval.
    pub heartbeat_interval: Duration,
    /// The new assignment; `None` when unchanged.
    pub assignment: Option<TopicPartitions>,
}

impl HeartbeatAnswer {
    /// A successful answer.
    pub fn ok(epoch: i32, interval: Duration, assignment: Option<TopicPartitions>) -> Self {
        Self {
            error: ErrorCode::None,
            message: None,
            member_id: None,
            member_epoch: epoch,
            heartbeat_interval: interval,
            assignment,
        }
    }

    /// An error answer.
    pub fn error(error: ErrorCode) -> Self {
        Self {
            error,
            message: None,
            member_id: None,
            member_epoch: -1,
            heartbeat_interval: Duration::ZERO,
            assignment: None,
        }
    }
}

/// The reconciliation in progress: its target and the callback awaited.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Reconciliation {
    /// The assignment this reconciliation moves the member to.
    target: TopicPartitions,
    /// The callback the driver was asked to run, and whose confirmation is awaited.
    step: Step,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// The partitions outside the target are being revoked.
    Revoking,
    /// The partitions new in the target are being assigned.
    Assigning,
}

/// What the last heartbeat sent, to send only changes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Sent {
    /// The subscribed topic names last sent; `None` sends them again.
    subscription: Option<Vec<String>>,
    /// The regular expression last sent; `None` sends it again.
    regex: Option<String>,
    /// The rebalance timeout last sent.
    rebalance_timeout_ms: Option<i32>,
    /// The server-side assignor last sent.
    server_assignor: Option<String>,
    /// The owned partitions last sent.
    owned: Option<TopicPartitions>,
}

/// The KIP-848 member state machine (see the module docs).
///
/// ```
/// use kafka_consumer::internals::kip848::{MemberState, Kip848Member, Kip848Config};
/// let mut m = Kip848Member::new(Kip848Config::new("g", "m"));
/// m.subscribe(["t".to_string()]);
/// assert_eq!(m.state(), MemberState::Joining);
/// // Nothing is sent before the coordinator is known.
/// assert!(m.poll_heartbeat(std::time::Instant::now()).is_none());
/// ```
#[derive(Debug)]
pub struct Kip848Member {
    /// The group, member id and timeouts the member was made with.
    config: Kip848Config,
    /// Where the member is in the protocol (see the module docs).
    state: MemberState,
    /// The member epoch the coordinator gave; 0 to join, -1 to leave.
    epoch: i32,
    /// The topics subscribed to (unused while `pattern` is set).
    subscription: BTreeSet<String>,
    /// The regular expression subscribed to, in place of topic names: the
    /// broker matches it against its topics (KIP-848).
    pattern: Option<String>,
    /// Topic names were subscribed to once: a regular expression replacing
    /// them is sent with an empty name list, which clears them.
    names_used: bool,
    /// A regular expression was subscribed to once: names replacing it are
    /// sent with an empty expression, which clears it.
    pattern_used: bool,
    /// The partitions the application owns (its callbacks confirmed them).
    owned: TopicPartitions,
    /// The latest assignment the coordinator sent, not yet reconciled.
    target: Option<TopicPartitions>,
    /// The revocation or assignment under way, if any.
    reconciliation: Option<Reconciliation>,
    /// A lost callback was handed out and [`Self::lost_done`] has not come yet.
    awaiting_lost: bool,
    /// Topic ids already asked to be resolved, so each is asked once.
    unresolved_asked: BTreeSet<Uuid>,
    /// The driver knows the group coordinator: heartbeats can go out.
    coordinator_known: bool,
    /// A heartbeat is awaiting its answer (one at a time).
    in_flight: bool,
    /// The next heartbeat goes out at once, not at `next_heartbeat`.
    heartbeat_now: bool,
    /// When the next regular heartbeat is due; `None` before the first answer.
    next_heartbeat: Option<Instant>,
    /// The heartbeat interval the coordinator asked for (5 s until it says).
    interval: Duration,
    /// Consecutive failed heartbeats: the retry backoff grows with them.
    failures: u32,
    /// What the last heartbeat sent, so the next one sends only changes.
    sent: Sent,
    /// What the driver must do next (callbacks, topic lookups), in order.
    actions: VecDeque<Kip848Action>,
}

impl Kip848Member {
    /// A member that has not subscribed yet.
    ///
    /// ```
    /// use kafka_consumer::internals::kip848::{Kip848Member, Kip848Config};
    /// let m = Kip848Member::new(Kip848Config::new("g", "m"));
    /// assert_eq!(m.epoch(), 0);
    /// ```
    pub fn new(config: Kip848Config) -> Self {
        Self {
            config,
            state: MemberState::Unsubscribed,
            epoch: 0,
            subscription: BTreeSet::new(),
            pattern: None,
            names_used: false,
            pattern_used: false,
            owned: TopicPartitions::new(),
            target: None,
            reconciliation: None,
            awaiting_lost: false,
            unresolved_asked: BTreeSet::new(),
            coordinator_known: false,
            in_flight: false,
            heartbeat_now: false,
            next_heartbeat: None,
            interval: Duration::from_secs(5),
            failures: 0,
            sent: Sent::default(),
            actions: VecDeque::new(),
        }
    }

    /// The state.
    pub fn state(&self) -> MemberState {
        self.state
    }

    /// The member epoch (0 before joining).
    pub fn epoch(&self) -> i32 {
        self.epoch
    }

    /// The member id.
    pub fn member_id(&self) -> &str {
        &self.config.member_id
    }

    /// The partitions the member owns (acknowledged or being acknowledged).
    pub fn owned(&self) -> &TopicPartitions {
        &self.owned
    }

    /// The next action for the driver, in order.
    pub fn poll_action(&mut self) -> Option<Kip848Action> {
        self.actions.pop_front()
    }

    /// The one place the state changes. Every change names its reason; a
    /// change the diagram does not have is a bug and is refused.
    fn transition(&mut self, to: MemberState, why: Transition) {
        use MemberState as S;
        use Transition as T;
        let from = self.state;
        let allowed = match (from, to, why) {
            (S::Unsubscribed, S::Joining, T::Subscribed) => true,
            (S::Joining, S::Stable, T::Joined) => true,
            (S::Stable, S::Reconciling, T::TargetChanged) => true,
            (S::Reconciling, S::Acknowledging, T::Reconciled) => true,
            (S::Reconciling, S::Stable, T::NothingToReconcile) => true,
            (S::Acknowledging, S::Stable, T::Acknowledged) => true,
            (S::Fenced, S::Joining, T::LostDone) => true,
            (S::Stale, S::Joining, T::Rejoin) => true,
            (S::PrepareLeaving, S::Leaving, T::RevokedForLeave) => true,
            (S::Leaving, S::Unsubscribed, T::LeaveSent) => true,
            (
                S::Joining | S::Stable | S::Reconciling | S::Acknowledging,
                S::Fenced,
                T::FencedByCoordinator,
            ) => true,
            (
                S::Joining | S::Stable | S::Reconciling | S::Acknowledging,
                S::Stale,
                T::PollTimeout,
            ) => true,
            (
                S::Joining | S::Stable | S::Reconciling | S::Acknowledging | S::Fenced | S::Stale,
                S::PrepareLeaving | S::Leaving | S::Unsubscribed,
                T::LeaveRequested,
            ) => true,
            (f, S::Fatal, T::FatalError) => f != S::Fatal,
            _ => false,
        };
        if !allowed {
            debug_assert!(
                false,
                "membership: no transition {from:?} -> {to:?} on {why:?}"
            );
            tracing::error!(?from, ?to, ?why, "membership: transition refused");
            return;
        }
        tracing::debug!(group = %self.config.group_id, ?from, ?to, ?why, epoch = self.epoch, "membership");
        self.state = to;
        match to {
            S::Joining => {
                self.epoch = 0;
                self.sent = Sent::default();
                self.heartbeat_now = true;
                self.target = None;
                self.reconciliation = None;
                self.unresolved_asked.clear();
            }
            S::Acknowledging | S::Leaving => self.heartbeat_now = true,
            S::Unsubscribed | S::Fatal => {
                self.heartbeat_now = false;
                self.next_heartbeat = None;
                self.target = None;
                self.reconciliation = None;
            }
            _ => {}
        }
    }

    /// Subscribes to `topics` (replacing the subscription): joins when not
    /// a member; a member sends the new subscription at once.
    pub fn subscribe(&mut self, topics: impl IntoIterator<Item = String>) {
        self.subscription = topics.into_iter().collect();
        self.pattern = None;
        self.names_used = true;
        self.joined_or_heartbeat_now();
    }

    /// Subscribes to the topics matching `regex` (the broker's RE2/J
    /// dialect, matched against whole topic names by the broker; replacing
    /// the subscription): joins when not a member; a member sends it at
    /// once. The broker checks the expression: an invalid one is
    /// INVALID_REGULAR_EXPRESSION, fatal.
    ///
    /// ```
    /// use kafka_consumer::internals::kip848::{Kip848Config, Kip848Member};
    /// let mut m = Kip848Member::new(Kip848Config::new("g", "m"));
    /// m.subscribe_pattern("orders-.*");
    /// m.coordinator_found();
    /// let join = m.poll_heartbeat(std::time::Instant::now()).unwrap();
    /// assert_eq!(join.subscribed_topic_regex.as_deref(), Some("orders-.*"));
    /// assert_eq!(join.subscribed_topic_names, None);
    /// ```
    pub fn subscribe_pattern(&mut self, regex: impl Into<String>) {
        self.pattern = Some(regex.into());
        self.pattern_used = true;
        self.joined_or_heartbeat_now();
    }

    /// The regular expression subscribed to, if any.
    pub fn pattern(&self) -> Option<&str> {
        self.pattern.as_deref()
    }

    /// A new subscription: a member not in the group joins, one in it
    /// sends the subscription with its next heartbeat, at once.
    fn joined_or_heartbeat_now(&mut self) {
        match self.state {
            MemberState::Unsubscribed => {
                self.transition(MemberState::Joining, Transition::Subscribed)
            }
            MemberState::Fatal => {}
            _ => self.heartbeat_now = true,
        }
    }

    /// The group coordinator is known (again): a join, acknowledgement or
    /// leave waiting for it goes out at once.
    pub fn coordinator_found(&mut self) {
        self.coordinator_known = true;
        if self.state != MemberState::Unsubscribed {
            self.heartbeat_now = true;
        }
    }

    /// When the driver should call [`Self::poll_heartbeat`] next, if a
    /// heartbeat is scheduled; `Some(past)` means now.
    pub fn next_heartbeat_at(&self) -> Option<Instant> {
        if !self.heartbeat_due_state() || self.in_flight || !self.coordinator_known {
            return None;
        }
        if self.heartbeat_now {
            return Some(Instant::now());
        }
        self.next_heartbeat
    }

    fn heartbeat_due_state(&self) -> bool {
        matches!(
            self.state,
            MemberState::Joining
                | MemberState::Stable
                | MemberState::Reconciling
                | MemberState::Acknowledging
                | MemberState::Leaving
        )
    }

    /// The heartbeat to send now, if one is due. The driver sends it and
    /// reports the answer with [`Self::on_heartbeat_answer`] or the failure
    /// with [`Self::on_heartbeat_failure`] (a leave heartbeat's answer is not
    /// needed).
    pub fn poll_heartbeat(&mut self, now: Instant) -> Option<Heartbeat> {
        if !self.heartbeat_due_state() || self.in_flight || !self.coordinator_known {
            return None;
        }
        let due = self.heartbeat_now || self.next_heartbeat.is_some_and(|t| now >= t);
        if !due {
            return None;
        }
        self.heartbeat_now = false;
        if self.state == MemberState::Leaving {
            let hb = self.leave_heartbeat();
            self.owned.clear();
            self.transition(MemberState::Unsubscribed, Transition::LeaveSent);
            return Some(hb);
        }
        self.in_flight = true;
        let joining = self.state == MemberState::Joining;
        // What the broker must hold of the subscription: names, or a
        // regular expression, the other cleared when it was used before.
        let (subscription, regex): (Option<Vec<String>>, Option<String>) = match &self.pattern {
            None => (
                Some(self.subscription.iter().cloned().collect()),
                self.pattern_used.then(String::new),
            ),
            Some(p) => (self.names_used.then(Vec::new), Some(p.clone())),
        };
        let timeout_ms =
            i32::try_from(self.config.rebalance_timeout.as_millis()).unwrap_or(i32::MAX);
        let owned = if joining {
            TopicPartitions::new()
        } else {
            self.owned.clone()
        };
        let hb = Heartbeat {
            group_id: self.config.group_id.clone(),
            member_id: self.config.member_id.clone(),
            member_epoch: self.epoch,
            instance_id: self.config.instance_id.clone(),
            rack_id: if joining {
                self.config.rack_id.clone()
            } else {
                None
            },
            rebalance_timeout_ms: if self.sent.rebalance_timeout_ms != Some(timeout_ms) {
                timeout_ms
            } else {
                -1
            },
            subscribed_topic_names: subscription
                .clone()
                .filter(|s| self.sent.subscription.as_ref() != Some(s)),
            subscribed_topic_regex: regex
                .clone()
                .filter(|r| self.sent.regex.as_ref() != Some(r)),
            server_assignor: self
                .config
                .server_assignor
                .clone()
                .filter(|a| self.sent.server_assignor.as_ref() != Some(a)),
            topic_partitions: (self.sent.owned.as_ref() != Some(&owned)).then(|| flatten(&owned)),
        };
        self.sent = Sent {
            subscription,
            regex,
            rebalance_timeout_ms: Some(timeout_ms),
            server_assignor: self.config.server_assignor.clone(),
            owned: Some(owned),
        };
        Some(hb)
    }

    fn leave_heartbeat(&self) -> Heartbeat {
        Heartbeat {
            group_id: self.config.group_id.clone(),
            member_id: self.config.member_id.clone(),
            member_epoch: if self.config.instance_id.is_some() {
                -2
            } else {
                -1
            },
            instance_id: self.config.instance_id.clone(),
            rack_id: None,
            rebalance_timeout_ms: -1,
            subscribed_topic_names: None,
            subscribed_topic_regex: None,
            server_assignor: None,
            topic_partitions: None,
        }
    }

    fn backoff(&mut self, now: Instant) {
        let factor = 2u32.saturating_pow(self.failures.min(16));
        let pause = self
            .config
            .retry_backoff
            .saturating_mul(factor)
            .min(self.config.retry_backoff_max.max(self.config.retry_backoff));
        self.failures = self.failures.saturating_add(1);
        self.next_heartbeat = Some(now + pause);
    }

    /// The heartbeat could not be sent or its answer was lost (the outcome
    /// is unknown): the next one is full, after a backoff, and the
    /// coordinator is looked up again.
    pub fn on_heartbeat_failure(&mut self, now: Instant) {
        self.in_flight = false;
        self.sent = Sent::default();
        self.coordinator_lost();
        self.backoff(now);
    }

    fn coordinator_lost(&mut self) {
        if self.coordinator_known {
            self.coordinator_known = false;
            self.actions.push_back(Kip848Action::FindCoordinator);
        }
    }

    /// Applies a heartbeat answer.
    pub fn on_heartbeat_answer(&mut self, now: Instant, answer: HeartbeatAnswer) {
        self.in_flight = false;
        if !answer.error.is_ok() {
            self.on_error(now, answer);
            return;
        }
        self.failures = 0;
        if let Some(id) = answer.member_id.filter(|id| !id.is_empty()) {
            self.config.member_id = id;
        }
        if answer.member_epoch >= 0 {
            self.epoch = answer.member_epoch;
        }
        self.interval = answer
            .heartbeat_interval
            .max(self.config.retry_backoff)
            .max(Duration::from_millis(1));
        self.next_heartbeat = Some(now + self.interval);
        if let Some(a) = answer.assignment {
            self.target = Some(a);
        }
        match self.state {
            MemberState::Joining if self.epoch > 0 => {
                self.transition(MemberState::Stable, Transition::Joined);
                if self.target.is_none() {
                    // Joined without an assignment: owns nothing yet.
                    self.target = Some(TopicPartitions::new());
                }
            }
            MemberState::Acknowledging => {
                // This answer may be for the acknowledgement or for a
                // heartbeat sent before it; the acknowledgement goes out
                // until a heartbeat carrying the owned set was answered.
                if self.sent.owned.as_ref() == Some(&self.owned) {
                    self.transition(MemberState::Stable, Transition::Acknowledged);
                } else {
                    self.heartbeat_now = true;
                }
            }
            _ => {}
        }
    }

    fn on_error(&mut self, now: Instant, answer: HeartbeatAnswer) {
        let error = answer.error;
        self.sent = Sent::default();
        match error {
            ErrorCode::NotCoordinator | ErrorCode::CoordinatorNotAvailable => {
                // Sent again as soon as the coordinator is found.
                self.coordinator_lost();
                self.heartbeat_now = true;
            }
            ErrorCode::CoordinatorLoadInProgress => self.backoff(now),
            ErrorCode::FencedMemberEpoch | ErrorCode::UnknownMemberId => {
                if matches!(
                    self.state,
                    MemberState::PrepareLeaving | MemberState::Leaving
                ) {
                    // Already leaving: the leave goes on (its answer is not read).
                    return;
                }
                if self.state == MemberState::Joining && self.owned.is_empty() {
                    // Fenced before joining: join again from scratch.
                    self.epoch = 0;
                    self.heartbeat_now = true;
                    return;
                }
                self.transition(MemberState::Fenced, Transition::FencedByCoordinator);
                self.give_up_partitions();
            }
            ErrorCode::TopicAuthorizationFailed => {
                self.actions.push_back(Kip848Action::Error(MemberError {
                    error,
                    message: answer.message,
                }));
                self.backoff(now);
            }
            _ => {
                let leaving = matches!(
                    self.state,
                    MemberState::Leaving | MemberState::PrepareLeaving
                );
                let lost = self.take_held();
                self.transition(MemberState::Fatal, Transition::FatalError);
                if !leaving && !lost.is_empty() {
                    self.actions.push_back(Kip848Action::Lost(lost));
                }
                self.actions.push_back(Kip848Action::Fatal(MemberError {
                    error,
                    message: answer.message,
                }));
            }
        }
    }

    /// Fenced or stale: every owned partition is lost; the member rejoins
    /// once the driver confirms with [`Self::lost_done`] (at once when it
    /// owned nothing).
    fn give_up_partitions(&mut self) {
        let held = self.take_held();
        self.target = None;
        if held.is_empty() {
            self.finish_lost();
        } else {
            self.awaiting_lost = true;
            self.actions.push_back(Kip848Action::Lost(held));
        }
    }

    /// What the application holds once it has run every action handed out:
    /// the owned set less a revocation in progress, or the assignment in
    /// progress. Clears it: a reconciliation's late confirmation completes
    /// nothing.
    fn take_held(&mut self) -> TopicPartitions {
        let owned = std::mem::take(&mut self.owned);
        match self.reconciliation.take() {
            None => owned,
            Some(Reconciliation {
                target,
                step: Step::Assigning,
            }) => target,
            Some(Reconciliation {
                target,
                step: Step::Revoking,
            }) => intersection(&owned, &target),
        }
    }

    fn finish_lost(&mut self) {
        self.awaiting_lost = false;
        if self.state == MemberState::Fenced {
            self.transition(MemberState::Joining, Transition::LostDone);
        }
    }

    /// The driver ran the lost callback: a fenced member rejoins.
    pub fn lost_done(&mut self) -> bool {
        if !self.awaiting_lost {
            return false;
        }
        self.finish_lost();
        true
    }

    /// Starts the next reconciliation when the target differs from what is
    /// owned and none is running. `known` tells which topic ids the driver
    /// can name; the others wait (a [`Kip848Action::ResolveTopics`] asks for
    /// them once).
    pub fn reconcile(&mut self, known: &dyn Fn(&Uuid) -> bool) {
        if self.reconciliation.is_some()
            || !matches!(self.state, MemberState::Stable | MemberState::Reconciling)
        {
            return;
        }
        let Some(target) = &self.target else {
            return;
        };
        let unresolved: Vec<Uuid> = target
            .keys()
            .filter(|id| !known(id) && !self.unresolved_asked.contains(*id))
            .copied()
            .collect();
        if !unresolved.is_empty() {
            self.unresolved_asked.extend(unresolved.iter().copied());
            self.actions
                .push_back(Kip848Action::ResolveTopics(unresolved));
        }
        let resolved: TopicPartitions = target
            .iter()
            .filter(|(id, _)| known(id))
            .map(|(id, p)| (*id, p.clone()))
            .filter(|(_, p)| !p.is_empty())
            .collect();
        if resolved == self.owned {
            if self.state == MemberState::Reconciling {
                self.transition(MemberState::Stable, Transition::NothingToReconcile);
            }
            return;
        }
        if self.state == MemberState::Stable {
            self.transition(MemberState::Reconciling, Transition::TargetChanged);
        }
        let revoked = difference(&self.owned, &resolved);
        if revoked.is_empty() {
            self.start_assign(resolved);
        } else {
            self.reconciliation = Some(Reconciliation {
                target: resolved,
                step: Step::Revoking,
            });
            self.actions.push_back(Kip848Action::Revoke(revoked));
        }
    }

    fn start_assign(&mut self, target: TopicPartitions) {
        let added = difference(&target, &self.owned);
        self.actions.push_back(Kip848Action::Assign {
            added,
            assignment: target.clone(),
        });
        self.reconciliation = Some(Reconciliation {
            target,
            step: Step::Assigning,
        });
    }

    /// The driver ran the revocation of the last [`Kip848Action::Revoke`]
    /// (the application committed what it wanted to): the partitions are
    /// dropped, and the assignment step (or the leave) follows. Returns false
    /// when no revocation was awaited (e.g. fenced meanwhile).
    pub fn revocation_done(&mut self) -> bool {
        if self.state == MemberState::PrepareLeaving {
            self.owned.clear();
            self.transition(MemberState::Leaving, Transition::RevokedForLeave);
            return true;
        }
        match self.reconciliation.take() {
            Some(Reconciliation {
                target,
                step: Step::Revoking,
            }) => {
                self.owned.retain(|id, parts| {
                    if let Some(keep) = target.get(id) {
                        parts.retain(|p| keep.contains(p));
                    } else {
                        parts.clear();
                    }
                    !parts.is_empty()
                });
                self.start_assign(target);
                true
            }
            other => {
                self.reconciliation = other;
                false
            }
        }
    }

    /// The driver ran the assignment of the last [`Kip848Action::Assign`]:
    /// the new set is owned and acknowledged by a heartbeat sent at once.
    /// Returns false when no assignment was awaited.
    pub fn assignment_done(&mut self) -> bool {
        match self.reconciliation.take() {
            Some(Reconciliation {
                target,
                step: Step::Assigning,
            }) => {
                self.owned = target;
                self.transition(MemberState::Acknowledging, Transition::Reconciled);
                true
            }
            other => {
                self.reconciliation = other;
                false
            }
        }
    }

    /// `max.poll.interval.ms` passed without a poll: the member leaves (the
    /// leave heartbeat goes out at once), loses its partitions and waits for
    /// [`Self::rejoin`].
    pub fn poll_timeout_expired(&mut self) -> Option<Heartbeat> {
        if !(self.state.is_member() || self.state == MemberState::Joining) {
            return None;
        }
        let leave = (self.epoch > 0).then(|| self.leave_heartbeat());
        self.transition(MemberState::Stale, Transition::PollTimeout);
        self.in_flight = false;
        self.give_up_partitions();
        leave
    }

    /// The application polled again after a poll timeout: join anew.
    pub fn rejoin(&mut self) -> bool {
        if self.state != MemberState::Stale || self.awaiting_lost {
            return false;
        }
        self.transition(MemberState::Joining, Transition::Rejoin);
        true
    }

    /// Unsubscribe or close: a member revokes what it owns (so the
    /// application can commit), then sends the leave heartbeat; a member not
    /// yet joined leaves at once.
    pub fn leave(&mut self) {
        match self.state {
            MemberState::Unsubscribed
            | MemberState::Fatal
            | MemberState::PrepareLeaving
            | MemberState::Leaving => {}
            MemberState::Joining | MemberState::Fenced | MemberState::Stale => {
                self.reconciliation = None;
                self.owned.clear();
                self.transition(MemberState::Unsubscribed, Transition::LeaveRequested);
            }
            MemberState::Stable | MemberState::Reconciling | MemberState::Acknowledging => {
                self.reconciliation = None;
                if self.owned.is_empty() {
                    self.transition(MemberState::Leaving, Transition::LeaveRequested);
                } else {
                    self.transition(MemberState::PrepareLeaving, Transition::LeaveRequested);
                    self.actions
                        .push_back(Kip848Action::Revoke(self.owned.clone()));
                }
            }
        }
    }
}

fn flatten(tp: &TopicPartitions) -> Vec<(Uuid, Vec<i32>)> {
    tp.iter()
        .map(|(id, p)| (*id, p.iter().copied().collect()))
        .collect()
}

/// `a ∩ b`, per topic, without empty topics.
fn intersection(a: &TopicPartitions, b: &TopicPartitions) -> TopicPartitions {
    a.iter()
        .filter_map(|(id, parts)| {
            let both: BTreeSet<i32> = parts.intersection(b.get(id)?).copied().collect();
            (!both.is_empty()).then_some((*id, both))
        })
        .collect()
}

/// `a − b`, per topic, without empty topics.
fn difference(a: &TopicPartitions, b: &TopicPartitions) -> TopicPartitions {
    a.iter()
        .filter_map(|(id, parts)| {
            let rest: BTreeSet<i32> = match b.get(id) {
                Some(other) => parts.difference(other).copied().collect(),
                None => parts.clone(),
            };
            (!rest.is_empty()).then_some((*id, rest))
        })
        .collect()
}

#[cfg(test)]
mod tests;
