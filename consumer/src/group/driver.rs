//! The group driver: the background task of a
//! [`GroupConsumer`](super::GroupConsumer) that runs the member state machine
//! of the group protocol in use against the group coordinator — the KIP-848
//! member ([`drive_kip848`]: ConsumerGroupHeartbeat) or the classic one
//! ([`drive_classic`]: JoinGroup, SyncGroup, Heartbeat, LeaveGroup).
//!
//! Each turn of its loop:
//! 1. looks at the member (and `max.poll.interval.ms`) and takes its actions
//!    into the consumer's shared state: assignments, revocations, losses,
//!    fencing;
//! 2. finds the coordinator when the member needs one;
//! 3. sends the member's next request and hands the answer back;
//! 4. or waits for the member's next deadline or a wake-up from the
//!    consumer.

use super::consumer::{Queued, Shared, lock};
use crate::group::member::classic::{ClassicAction, ClassicMember, ClassicState, Request};
use crate::group::member::kip848::{
    Heartbeat, HeartbeatAnswer, Kip848Action, MemberError, MemberState,
};
use kafka_client::Cluster;
use kafka_client::Connection;
use kafka_client::{CoordinatorType, find_coordinator};
use kafka_proto::messages::{
    ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatRequestTopicPartitions,
    ConsumerGroupHeartbeatResponse, HeartbeatRequest, JoinGroupRequest, LeaveGroupRequest,
    SyncGroupRequest,
};
use kafka_proto::primitives::Uuid;
use kafka_proto::{ApiKey, ErrorCode};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// What the driver works with: the consumer's shared state (which holds the
/// member) and the cluster it sends through.
pub(super) struct GroupDriver {
    /// The state shared with the consumer: the member, its events, the coordinator.
    pub(super) shared: Arc<Mutex<Shared>>,
    /// The connections to the brokers.
    pub(super) cluster: Arc<Cluster>,
    /// Notified by the consumer when the member has something to do now.
    pub(super) wake_task: Arc<Notify>,
    /// Notified by the driver when an event for a waiting poll arrived.
    pub(super) wake_poll: Arc<Notify>,
    /// `group.id`.
    pub(super) group_id: String,
    /// `max.poll.interval.ms`: the member leaves when polls stop for longer.
    pub(super) max_poll_interval: Duration,
    /// `retry.backoff.ms`: the wait before looking for the coordinator again.
    pub(super) retry_backoff: Duration,
    /// `request.timeout.ms` of each request.
    pub(super) request_timeout: Duration,
}

/// What the task does after looking at the member.
enum Step {
    Find,
    Send(Heartbeat, Option<Arc<Connection>>),
    Wait(Option<Instant>),
    /// Look up the names of these topic ids (every topic's metadata when
    /// the member subscribes by regular expression).
    Resolve(Vec<Uuid>, bool),
    Stop,
}

/// The driver of a [`Kip848Member`](crate::group::member::kip848::Kip848Member): finds the coordinator, sends its
/// heartbeats, hands the answers back, and watches `max.poll.interval.ms`.
pub(super) async fn drive_kip848(t: GroupDriver) {
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
            Step::Resolve(ids, all) => t.resolve_topics(&ids, all).await,
        }
    }
}

impl GroupDriver {
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
        let mut resolve = Vec::new();
        while let Some(a) = s.member.kip848().poll_action() {
            match a {
                Kip848Action::FindCoordinator => s.coordinator = None,
                Kip848Action::ResolveTopics(ids) => {
                    tracing::debug!(
                        ?ids,
                        "group consumer: unknown topic ids; refreshing metadata"
                    );
                    self.cluster.invalidate();
                    resolve.extend(ids);
                }
                Kip848Action::Fatal(e) => {
                    s.fatal = Some(e.clone());
                    s.events.push_back(Queued::Kip848(Kip848Action::Fatal(e)));
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
        if !resolve.is_empty() {
            let all = s.member.kip848().pattern().is_some();
            return Step::Resolve(resolve, all);
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
            subscribed_topic_regex: hb.subscribed_topic_regex,
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
pub(super) async fn drive_classic(t: GroupDriver, rebalance_timeout: Duration) {
    loop {
        t.refresh_pattern_if_due().await;
        match t.classic_step() {
            ClassicStep::Stop => return,
            ClassicStep::Find => {
                if t.find_coordinator().await {
                    lock(&t.shared).member.classic().coordinator_found();
                }
            }
            ClassicStep::Send(req, conn) => t.send_classic(req, conn, rebalance_timeout).await,
            ClassicStep::Wait(at) => {
                // No later than the next pattern match.
                let check = {
                    let s = lock(&t.shared);
                    s.pattern_check_at.filter(|_| !s.closing)
                };
                let at = match (at, check) {
                    (Some(a), Some(c)) => Some(a.min(c)),
                    (a, c) => a.or(c),
                };
                t.wait(at).await
            }
        }
    }
}

impl GroupDriver {
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
                    let topics: Vec<String> = crate::group::member::classic::leader_topics(&resp)
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
                let l = ClassicMember::leave_request_at(l, v);
                if let Err(e) = conn.send_with_timeout(&l, v, self.request_timeout).await {
                    tracing::debug!(error = %e, "group consumer: LeaveGroup not answered");
                }
            }
        }
    }
}
