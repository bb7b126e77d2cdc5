//! KIP-848 consumer groups (Kafka's `ConsumerGroup` with
//! `CurrentAssignmentBuilder`): membership by ConsumerGroupHeartbeat, the
//! assignment computed by the coordinator, and each member reconciled
//! towards it one step per heartbeat.
//!
//! ```text
//!   group epoch ──bumped by──► a member joins, leaves, is fenced or changes its
//!        │                     subscription; a subscribed topic's partitions change
//!        ▼
//!   target assignment (epoch = group epoch), computed by the server assignor
//!        │
//!        ▼  per member, at each of its heartbeats:
//!                 revoke needed                     revoked (owned ⊆ assigned)
//!   Stable ─────────────────────────► Unrevoked ──────────────────────────────┐
//!     ▲  ▲   (epoch unchanged, assignment            Partitions                 │
//!     │  │    shrinks to what it keeps)                                         ▼
//!     │  └──────────────── all released ◄──── Unreleased ◄── partitions still held
//!     │                                        Partitions      by another member
//!     └──────────────── nothing to revoke or wait for (epoch = target epoch) ◄──┘
//! ```
//!
//! - A partition is given to a member only once no other member holds it
//!   (assigned or pending revocation): two members never own a partition
//!   at once.
//! - Epoch checks (`FENCED_MEMBER_EPOCH`): a heartbeat with an epoch above
//!   the member's, or below it unless it is the previous epoch and the
//!   owned partitions are a subset of the assigned ones (the answer that
//!   bumped the epoch was lost).
//! - A member silent for the session timeout, or still holding partitions
//!   to revoke after its rebalance timeout, is removed (the group epoch is
//!   bumped). A static member (`instance_id`) that leaves with epoch -2
//!   keeps its assignment until its session times out; a new member with
//!   the same instance id takes its place and its partitions.
//! - Offset commits (KIP-447 for TxnOffsetCommit): the member's current
//!   epoch, or an older one for partitions it has held since that epoch.
//!
//! The server assignors are `uniform` (the default) and `range`. Both are
//! balanced and keep partitions where they are when they can; the exact
//! partitions chosen may differ from Kafka's `UniformAssignor` and
//! `RangeAssignor`.

use kafka_proto::ErrorCode;
use kafka_proto::primitives::Uuid;
use std::collections::{BTreeMap, BTreeSet};

/// Partitions by topic id.
pub(crate) type Partitions = BTreeMap<Uuid, BTreeSet<i32>>;

/// The epoch a member sends to leave the group.
pub(crate) const LEAVE_EPOCH: i32 = -1;
/// The epoch a static member sends to leave for a while (it will rejoin).
pub(crate) const STATIC_LEAVE_EPOCH: i32 = -2;

/// The assignors the coordinator knows (`group.consumer.assignors`).
pub(crate) const ASSIGNORS: [&str; 2] = ["uniform", "range"];

/// Where a member is in reconciling towards its target assignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReconcileState {
    /// Its assignment is the target of its epoch.
    Stable,
    /// It must give up `pending_revocation` before moving on.
    UnrevokedPartitions,
    /// Some partitions of its target are still held by other members.
    UnreleasedPartitions,
}

/// A member of a consumer group.
#[derive(Debug, Clone)]
pub(crate) struct ConsumerMember {
    /// Its member epoch (KIP-848); a stale one is FENCED_MEMBER_EPOCH.
    pub epoch: i32,
    /// Its epoch before the last bump: a heartbeat still carrying it (the
    /// answer was lost) is accepted if it owns no partition beyond its assignment.
    pub previous_epoch: i32,
    /// Where its reconciliation toward the target is.
    pub state: ReconcileState,
    /// Its `group.instance.id` (static member), if any.
    pub instance_id: Option<String>,
    /// Its rack, for rack-aware assignors.
    pub rack_id: Option<String>,
    /// Its client id, as ConsumerGroupDescribe shows it.
    pub client_id: String,
    /// Its address, as ConsumerGroupDescribe shows it.
    pub client_host: String,
    /// How long it has to revoke partitions before it is removed.
    pub rebalance_timeout_ms: i32,
    /// The topic names it subscribes to.
    pub subscribed: Vec<String>,
    /// The subscribed topic regex (KIP-848), if any.
    pub regex: Option<String>,
    /// The topics it consumes: the names, and the existing topics the
    /// regex matches, as of the group's last heartbeat (sorted).
    pub resolved: Vec<String>,
    /// The server assignor it asked for, if any.
    pub assignor: Option<String>,
    /// Assigned partitions, with the member epoch at which each was
    /// assigned (for the offset commit check).
    pub assigned: BTreeMap<(Uuid, i32), i32>,
    /// Partitions the member must revoke, with their assignment epoch.
    pub pending_revocation: BTreeMap<(Uuid, i32), i32>,
    /// When it was last heard from, for the session timeout.
    pub last_heartbeat_ms: i64,
    /// When the member entered `UnrevokedPartitions`.
    pub revoking_since_ms: Option<i64>,
}

impl ConsumerMember {
    fn new(now_ms: i64) -> Self {
        Self {
            epoch: 0,
            previous_epoch: 0,
            state: ReconcileState::Stable,
            instance_id: None,
            rack_id: None,
            client_id: String::new(),
            client_host: String::new(),
            rebalance_timeout_ms: 0,
            subscribed: Vec::new(),
            regex: None,
            resolved: Vec::new(),
            assignor: None,
            assigned: BTreeMap::new(),
            pending_revocation: BTreeMap::new(),
            last_heartbeat_ms: now_ms,
            revoking_since_ms: None,
        }
    }

    /// The assigned partitions by topic.
    pub(crate) fn assigned_partitions(&self) -> Partitions {
        group_by_topic(self.assigned.keys())
    }
}

fn group_by_topic<'a>(tps: impl Iterator<Item = &'a (Uuid, i32)>) -> Partitions {
    let mut out = Partitions::new();
    for (t, p) in tps {
        out.entry(*t).or_default().insert(*p);
    }
    out
}

/// A consumer group's state as ConsumerGroupDescribe names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConsumerGroupState {
    Empty,
    /// The target assignment is behind the group epoch.
    Assigning,
    /// Some member has not reached the target assignment.
    Reconciling,
    Stable,
}

impl ConsumerGroupState {
    /// The name Kafka gives the state.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Empty => "Empty",
            Self::Assigning => "Assigning",
            Self::Reconciling => "Reconciling",
            Self::Stable => "Stable",
        }
    }
}

/// A topic as the assignor sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TopicInfo {
    /// The topic id.
    pub id: Uuid,
    /// How many partitions it has.
    pub partitions: i32,
}

/// A ConsumerGroupHeartbeat's fields (null ones as `None`).
#[derive(Debug, Clone)]
pub(crate) struct Heartbeat<'a> {
    /// The member id ("" for a new member).
    pub member_id: &'a str,
    /// The member epoch (0 joins, -1 leaves, -2 a static member leaves).
    pub member_epoch: i32,
    /// `group.instance.id`, if static.
    pub instance_id: Option<&'a str>,
    /// The member's rack, if any.
    pub rack_id: Option<&'a str>,
    /// The rebalance timeout (-1: unchanged).
    pub rebalance_timeout_ms: i32,
    /// The subscribed topic names (`None`: unchanged).
    pub subscribed: Option<Vec<String>>,
    /// The subscribed topic regex (`None`: unchanged, empty: none).
    pub regex: Option<&'a str>,
    /// The server assignor asked for (`None`: unchanged).
    pub assignor: Option<&'a str>,
    /// The partitions the member owns (`None`: unchanged).
    pub owned: Option<Partitions>,
    /// The request header's client id.
    pub client_id: &'a str,
    /// The client's address.
    pub client_host: &'a str,
}

/// The coordinator's answer to a heartbeat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HeartbeatAnswer {
    /// The member id (assigned to a new member).
    pub member_id: String,
    /// The member's epoch after this heartbeat.
    pub member_epoch: i32,
    /// The member's assignment, when it changed or the request was full.
    pub assignment: Option<Partitions>,
}

/// A consumer group.
#[derive(Debug, Clone, Default)]
pub(crate) struct ConsumerGroup {
    /// Bumped whenever membership or subscriptions change; the target follows it.
    pub group_epoch: i32,
    /// The epoch of `target`.
    pub assignment_epoch: i32,
    /// Members by member id.
    pub members: BTreeMap<String, ConsumerMember>,
    /// The target assignment per member.
    pub target: BTreeMap<String, BTreeSet<(Uuid, i32)>>,
    /// The subscribed topics' metadata the target was computed from.
    subscribed_metadata: BTreeMap<String, TopicInfo>,
}

impl ConsumerGroup {
    pub(crate) fn state(&self) -> ConsumerGroupState {
        if self.members.is_empty() {
            ConsumerGroupState::Empty
        } else if self.group_epoch > self.assignment_epoch {
            ConsumerGroupState::Assigning
        } else if self
            .members
            .values()
            .any(|m| m.epoch != self.assignment_epoch || m.state != ReconcileState::Stable)
        {
            ConsumerGroupState::Reconciling
        } else {
            ConsumerGroupState::Stable
        }
    }

    /// The topics among `topics` some member subscribes to.
    pub(crate) fn subscribed_topics<'a>(
        &self,
        topics: impl Iterator<Item = &'a String>,
    ) -> BTreeSet<String> {
        let names: BTreeSet<&String> = self
            .members
            .values()
            .flat_map(|m| m.resolved.iter())
            .collect();
        topics.filter(|t| names.contains(t)).cloned().collect()
    }

    /// What changes when the group does (parked requests run again only
    /// after a change).
    pub(crate) fn fingerprint(&self) -> (i32, i32, usize) {
        (self.group_epoch, self.assignment_epoch, self.members.len())
    }

    /// The assignor in use: the one named by the most members, else
    /// `uniform`.
    pub(crate) fn assignor(&self) -> &'static str {
        let range = self
            .members
            .values()
            .filter(|m| m.assignor.as_deref() == Some("range"))
            .count();
        let uniform = self
            .members
            .values()
            .filter(|m| m.assignor.as_deref() == Some("uniform"))
            .count();
        if range > uniform { "range" } else { "uniform" }
    }

    fn static_member(&self, instance_id: &str) -> Option<String> {
        self.members
            .iter()
            .find(|(_, m)| m.instance_id.as_deref() == Some(instance_id))
            .map(|(id, _)| id.clone())
    }

    /// Validates a heartbeat as Kafka's `GroupMetadataManager` does
    /// before touching the group.
    pub(crate) fn validate(hb: &Heartbeat<'_>) -> Result<(), ErrorCode> {
        let empty = |s: Option<&str>| s.is_some_and(str::is_empty);
        if empty(hb.instance_id) || empty(hb.rack_id) {
            return Err(ErrorCode::InvalidRequest);
        }
        if let Some(r) = hb.regex.filter(|r| !r.is_empty())
            && full_match(r).is_none()
        {
            return Err(ErrorCode::InvalidRegularExpression);
        }
        match hb.member_epoch {
            0 => {
                if hb.rebalance_timeout_ms == -1
                    || hb.owned.as_ref().is_none_or(|o| !o.is_empty())
                    || (hb.subscribed.as_ref().is_none_or(Vec::is_empty)
                        && hb.regex.is_none_or(str::is_empty))
                {
                    return Err(ErrorCode::InvalidRequest);
                }
            }
            e if e > 0 || e == LEAVE_EPOCH => {
                if hb.member_id.is_empty() {
                    return Err(ErrorCode::InvalidRequest);
                }
            }
            STATIC_LEAVE_EPOCH => {
                if hb.member_id.is_empty() || hb.instance_id.is_none() {
                    return Err(ErrorCode::InvalidRequest);
                }
            }
            _ => return Err(ErrorCode::InvalidRequest),
        }
        if let Some(a) = hb.assignor
            && !ASSIGNORS.contains(&a)
        {
            return Err(ErrorCode::UnsupportedAssignor);
        }
        Ok(())
    }

    /// A leave (epoch -1 or -2). The group must exist.
    pub(crate) fn leave(&mut self, hb: &Heartbeat<'_>) -> Result<HeartbeatAnswer, ErrorCode> {
        let id = match hb.instance_id {
            None => {
                if !self.members.contains_key(hb.member_id) {
                    return Err(ErrorCode::UnknownMemberId);
                }
                hb.member_id.to_string()
            }
            Some(instance) => {
                let id = self
                    .static_member(instance)
                    .ok_or(ErrorCode::UnknownMemberId)?;
                if id != hb.member_id {
                    return Err(ErrorCode::FencedInstanceId);
                }
                id
            }
        };
        if hb.member_epoch == STATIC_LEAVE_EPOCH {
            let m = self.members.get_mut(&id).expect("found above");
            m.epoch = STATIC_LEAVE_EPOCH;
            m.pending_revocation.clear();
            m.revoking_since_ms = None;
        } else {
            self.remove_member(&id);
        }
        Ok(HeartbeatAnswer {
            member_id: hb.member_id.to_string(),
            member_epoch: hb.member_epoch,
            assignment: None,
        })
    }

    /// Removes a member (left, fenced or expired) and bumps the group epoch.
    pub(crate) fn remove_member(&mut self, id: &str) {
        if self.members.remove(id).is_some() {
            self.target.remove(id);
            self.group_epoch += 1;
        }
    }

    /// A heartbeat with epoch 0 or above. `topics` is the cluster's
    /// topics by name; `new_member_id` names a joining member that sent
    /// none (ConsumerGroupHeartbeat v0).
    pub(crate) fn heartbeat(
        &mut self,
        hb: &Heartbeat<'_>,
        topics: &BTreeMap<String, TopicInfo>,
        now_ms: i64,
        new_member_id: impl FnOnce() -> String,
    ) -> Result<HeartbeatAnswer, ErrorCode> {
        let joining = hb.member_epoch == 0;
        let member_id = if hb.member_id.is_empty() {
            new_member_id()
        } else {
            hb.member_id.to_string()
        };
        let (old, is_new) = self.member_for(hb, &member_id, now_ms)?;
        let mut member = old.clone();
        if let Some(i) = hb.instance_id {
            member.instance_id = Some(i.to_string());
        }
        if let Some(r) = hb.rack_id {
            member.rack_id = Some(r.to_string());
        }
        if hb.rebalance_timeout_ms != -1 {
            member.rebalance_timeout_ms = hb.rebalance_timeout_ms;
        }
        if let Some(a) = hb.assignor {
            member.assignor = Some(a.to_string());
        }
        if let Some(s) = &hb.subscribed {
            let mut s = s.clone();
            s.sort();
            s.dedup();
            member.subscribed = s;
        }
        if let Some(r) = hb.regex {
            member.regex = (!r.is_empty()).then(|| r.to_string());
        }
        member.client_id = hb.client_id.to_string();
        member.client_host = hb.client_host.to_string();
        member.last_heartbeat_ms = now_ms;

        let mut bump = is_new || member.subscribed != old.subscribed || member.regex != old.regex;
        self.members.insert(member_id.clone(), member);
        // Regexes are matched against the topics as they are now: a topic
        // created since is picked up at the next heartbeat.
        for m in self.members.values_mut() {
            m.resolved = resolve(&m.subscribed, m.regex.as_deref(), topics.keys());
        }

        // The subscribed topics' metadata: a change (a topic created or
        // grown) bumps the group epoch.
        let metadata: BTreeMap<String, TopicInfo> = self
            .members
            .values()
            .flat_map(|m| m.resolved.iter())
            .filter_map(|t| topics.get(t).map(|i| (t.clone(), *i)))
            .collect();
        if metadata != self.subscribed_metadata {
            self.subscribed_metadata = metadata;
            bump = true;
        }
        if bump {
            self.group_epoch += 1;
        }
        if self.group_epoch > self.assignment_epoch {
            self.target = self.compute_target();
            self.assignment_epoch = self.group_epoch;
        }

        let before = self.members[&member_id].assigned.clone();
        self.reconcile(&member_id, hb.owned.as_ref(), now_ms);
        let member = &self.members[&member_id];
        let full = joining
            || (hb.rebalance_timeout_ms != -1 && hb.subscribed.is_some() && hb.owned.is_some());
        Ok(HeartbeatAnswer {
            member_id,
            member_epoch: member.epoch,
            assignment: (full || member.assigned != before).then(|| member.assigned_partitions()),
        })
    }

    /// The member a heartbeat speaks for, and whether it is new: found,
    /// created (joining) or taking a static member's place (not new: no
    /// rebalance); errors as Kafka fences.
    fn member_for(
        &mut self,
        hb: &Heartbeat<'_>,
        member_id: &str,
        now_ms: i64,
    ) -> Result<(ConsumerMember, bool), ErrorCode> {
        let joining = hb.member_epoch == 0;
        let found_or_new = |m: Option<&ConsumerMember>| match m {
            Some(m) => (m.clone(), false),
            None => (ConsumerMember::new(now_ms), true),
        };
        match hb.instance_id {
            None => match self.members.get(member_id) {
                Some(m) if !joining => {
                    check_epoch(m, hb.member_epoch, hb.owned.as_ref())?;
                    Ok((m.clone(), false))
                }
                None if !joining => Err(ErrorCode::UnknownMemberId),
                m => Ok(found_or_new(m)),
            },
            Some(instance) => {
                let existing = self.static_member(instance);
                if joining {
                    match existing {
                        None => Ok(found_or_new(self.members.get(member_id))),
                        Some(old_id) => {
                            let old = &self.members[&old_id];
                            if old.epoch != STATIC_LEAVE_EPOCH {
                                return Err(ErrorCode::UnreleasedInstanceId);
                            }
                            // The new member takes the old one's place and
                            // partitions, without a rebalance.
                            let mut m = old.clone();
                            m.epoch = 0;
                            m.previous_epoch = 0;
                            let target = self.target.remove(&old_id);
                            self.members.remove(&old_id);
                            if let Some(t) = target {
                                self.target.insert(member_id.to_string(), t);
                            }
                            Ok((m, false))
                        }
                    }
                } else {
                    let id = existing.ok_or(ErrorCode::UnknownMemberId)?;
                    if id != member_id {
                        return Err(ErrorCode::FencedInstanceId);
                    }
                    let m = &self.members[&id];
                    check_epoch(m, hb.member_epoch, hb.owned.as_ref())?;
                    Ok((m.clone(), false))
                }
            }
        }
    }

    /// The partitions other members hold (assigned or pending revocation).
    fn held_by_others(&self, member_id: &str) -> BTreeSet<(Uuid, i32)> {
        self.members
            .iter()
            .filter(|(id, _)| id.as_str() != member_id)
            .flat_map(|(_, m)| m.assigned.keys().chain(m.pending_revocation.keys()))
            .copied()
            .collect()
    }

    /// One step of `CurrentAssignmentBuilder` for `member_id`.
    fn reconcile(&mut self, member_id: &str, owned: Option<&Partitions>, now_ms: i64) {
        let target_epoch = self.assignment_epoch;
        let target = self.target.get(member_id).cloned().unwrap_or_default();
        let held = self.held_by_others(member_id);
        let m = self.members.get_mut(member_id).expect("inserted");
        let owns_any = |set: &BTreeMap<(Uuid, i32), i32>| match owned {
            None => true,
            Some(o) => o
                .iter()
                .any(|(t, ps)| ps.iter().any(|p| set.contains_key(&(*t, *p)))),
        };
        let next_epoch = match m.state {
            ReconcileState::Stable if m.epoch == target_epoch => return,
            ReconcileState::Stable | ReconcileState::UnreleasedPartitions => m.epoch,
            ReconcileState::UnrevokedPartitions => {
                if owns_any(&m.pending_revocation) {
                    return;
                }
                m.epoch + 1
            }
        };
        // Keep what is still in the target; revoke the rest; add what
        // nobody else holds.
        let kept: BTreeMap<(Uuid, i32), i32> = m
            .assigned
            .iter()
            .filter(|(tp, _)| target.contains(tp))
            .map(|(tp, e)| (*tp, *e))
            .collect();
        let revoke: BTreeMap<(Uuid, i32), i32> = m
            .assigned
            .iter()
            .filter(|(tp, _)| !target.contains(tp))
            .map(|(tp, e)| (*tp, *e))
            .collect();
        let missing: Vec<(Uuid, i32)> = target
            .iter()
            .filter(|tp| !kept.contains_key(tp))
            .copied()
            .collect();
        let unreleased = missing.iter().any(|tp| held.contains(tp));
        let addable: Vec<(Uuid, i32)> = missing
            .into_iter()
            .filter(|tp| !held.contains(tp))
            .collect();
        if !revoke.is_empty() && owns_any(&revoke) {
            m.state = ReconcileState::UnrevokedPartitions;
            set_epoch(m, next_epoch);
            m.assigned = kept;
            m.pending_revocation = revoke;
            if m.revoking_since_ms.is_none() {
                m.revoking_since_ms = Some(now_ms);
            }
        } else {
            set_epoch(m, target_epoch);
            m.assigned = kept;
            for tp in addable {
                m.assigned.insert(tp, target_epoch);
            }
            m.pending_revocation.clear();
            m.revoking_since_ms = None;
            m.state = if unreleased {
                ReconcileState::UnreleasedPartitions
            } else {
                ReconcileState::Stable
            };
        }
    }

    /// The target assignment of every member by the group's assignor.
    fn compute_target(&self) -> BTreeMap<String, BTreeSet<(Uuid, i32)>> {
        // Static members that left for a while keep their share.
        let subs: BTreeMap<&str, &[String]> = self
            .members
            .iter()
            .map(|(id, m)| (id.as_str(), m.resolved.as_slice()))
            .collect();
        let previous: BTreeMap<&str, BTreeSet<(Uuid, i32)>> = self
            .target
            .iter()
            .map(|(id, t)| (id.as_str(), t.clone()))
            .collect();
        let out = match self.assignor() {
            "range" => assign_range(&subs, &self.subscribed_metadata),
            _ => assign_uniform(&subs, &self.subscribed_metadata, &previous),
        };
        out.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
    }

    /// Removes members whose session expired and members that kept
    /// partitions to revoke past their rebalance timeout. True when
    /// anything changed.
    pub(crate) fn tick(&mut self, now_ms: i64, session_timeout_ms: i64) -> bool {
        let expired: Vec<String> = self
            .members
            .iter()
            .filter(|(_, m)| {
                now_ms - m.last_heartbeat_ms > session_timeout_ms
                    || m.revoking_since_ms
                        .is_some_and(|s| now_ms - s > i64::from(m.rebalance_timeout_ms))
            })
            .map(|(id, _)| id.clone())
            .collect();
        for id in &expired {
            self.remove_member(id);
        }
        !expired.is_empty()
    }

    /// Checks an offset commit of `member_id` at `epoch` (Kafka 4.4's
    /// `ConsumerGroup.validateOffsetCommit`): for the whole request when
    /// `tp` is `None` (an older epoch passes, to be checked per
    /// partition), for partition `tp` otherwise.
    pub(crate) fn check_commit(
        &self,
        member_id: &str,
        epoch: i32,
        transactional: bool,
        version: i16,
        tp: Option<(Uuid, i32)>,
    ) -> Result<(), ErrorCode> {
        if epoch < 0 && self.members.is_empty() {
            return Ok(());
        }
        if transactional && epoch == -1 && member_id.is_empty() {
            return Ok(());
        }
        let m = self
            .members
            .get(member_id)
            .ok_or(ErrorCode::UnknownMemberId)?;
        if !transactional && version < 9 {
            return Err(ErrorCode::UnsupportedVersion);
        }
        if epoch == m.epoch {
            return Ok(());
        }
        if epoch > m.epoch {
            return Err(ErrorCode::StaleMemberEpoch);
        }
        // An older epoch: only for a partition held since then.
        let Some(tp) = tp else {
            return Ok(());
        };
        match m
            .assigned
            .get(&tp)
            .or_else(|| m.pending_revocation.get(&tp))
        {
            Some(since) if *since <= epoch => Ok(()),
            _ => Err(ErrorCode::StaleMemberEpoch),
        }
    }
}

fn set_epoch(m: &mut ConsumerMember, epoch: i32) {
    if m.epoch != epoch {
        m.previous_epoch = m.epoch;
        m.epoch = epoch;
    }
}

/// Kafka's `throwIfConsumerGroupMemberEpochIsInvalid`.
fn check_epoch(
    m: &ConsumerMember,
    received: i32,
    owned: Option<&Partitions>,
) -> Result<(), ErrorCode> {
    if received > m.epoch {
        return Err(ErrorCode::FencedMemberEpoch);
    }
    if received < m.epoch {
        let subset = owned.is_some_and(|o| {
            o.iter()
                .all(|(t, ps)| ps.iter().all(|p| m.assigned.contains_key(&(*t, *p))))
        });
        if received != m.previous_epoch || !subset {
            return Err(ErrorCode::FencedMemberEpoch);
        }
    }
    Ok(())
}

/// `regex` as a pattern matching whole topic names, as Kafka matches a
/// subscription regex (RE2 syntax); `None` when it does not compile.
fn full_match(regex: &str) -> Option<regex::Regex> {
    regex::Regex::new(&format!("^(?:{regex})$")).ok()
}

/// The topics a member consumes: its names and the topics among `topics`
/// its regex matches, sorted, each once.
fn resolve<'a>(
    names: &[String],
    regex: Option<&str>,
    topics: impl Iterator<Item = &'a String>,
) -> Vec<String> {
    let mut out: Vec<String> = names.to_vec();
    if let Some(re) = regex.and_then(full_match) {
        out.extend(topics.filter(|t| re.is_match(t)).cloned());
    }
    out.sort();
    out.dedup();
    out
}

/// The members subscribed to topic `name`, in member id order.
fn subscribers<'a>(subs: &BTreeMap<&'a str, &[String]>, name: &str) -> Vec<&'a str> {
    subs.iter()
        .filter(|(_, s)| s.iter().any(|t| t == name))
        .map(|(id, _)| *id)
        .collect()
}

/// Every partition of the subscribed topics, in (topic name, partition)
/// order, with the members that may take it.
fn candidates<'a>(
    subs: &BTreeMap<&'a str, &[String]>,
    topics: &BTreeMap<String, TopicInfo>,
) -> Vec<((Uuid, i32), Vec<&'a str>)> {
    let mut out = Vec::new();
    for (name, info) in topics {
        let members = subscribers(subs, name);
        if members.is_empty() {
            continue;
        }
        for p in 0..info.partitions {
            out.push(((info.id, p), members.clone()));
        }
    }
    out
}

/// Balanced and sticky: each member keeps its previous partitions up to
/// its share; the rest go to the least loaded eligible member.
fn assign_uniform<'a>(
    subs: &BTreeMap<&'a str, &[String]>,
    topics: &BTreeMap<String, TopicInfo>,
    previous: &BTreeMap<&str, BTreeSet<(Uuid, i32)>>,
) -> BTreeMap<&'a str, BTreeSet<(Uuid, i32)>> {
    let parts = candidates(subs, topics);
    let mut out: BTreeMap<&str, BTreeSet<(Uuid, i32)>> =
        subs.keys().map(|id| (*id, BTreeSet::new())).collect();
    let eligible_members = parts
        .iter()
        .flat_map(|(_, ms)| ms.iter().copied())
        .collect::<BTreeSet<_>>()
        .len()
        .max(1);
    let share = parts.len().div_ceil(eligible_members);
    let mut rest = Vec::new();
    for (tp, members) in &parts {
        let keeper = members
            .iter()
            .find(|m| previous.get(**m).is_some_and(|p| p.contains(tp)) && out[**m].len() < share);
        match keeper {
            Some(m) => {
                out.get_mut(*m).expect("a member").insert(*tp);
            }
            None => rest.push((*tp, members)),
        }
    }
    for (tp, members) in rest {
        let m = members
            .iter()
            .min_by_key(|m| (out[**m].len(), **m))
            .expect("at least one member");
        out.get_mut(*m).expect("a member").insert(tp);
    }
    out
}

/// Per topic, consecutive ranges of partitions to its subscribers in
/// member id order.
fn assign_range<'a>(
    subs: &BTreeMap<&'a str, &[String]>,
    topics: &BTreeMap<String, TopicInfo>,
) -> BTreeMap<&'a str, BTreeSet<(Uuid, i32)>> {
    let mut out: BTreeMap<&str, BTreeSet<(Uuid, i32)>> =
        subs.keys().map(|id| (*id, BTreeSet::new())).collect();
    for (name, info) in topics {
        let members = subscribers(subs, name);
        if members.is_empty() {
            continue;
        }
        let n = info.partitions as usize;
        let (each, extra) = (n / members.len(), n % members.len());
        let mut next = 0;
        for (i, m) in members.iter().enumerate() {
            let count = each + usize::from(i < extra);
            for p in next..next + count {
                out.get_mut(m)
                    .expect("a member")
                    .insert((info.id, p as i32));
            }
            next += count;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Uuid = [7; 16];

    fn topics(n: i32) -> BTreeMap<String, TopicInfo> {
        BTreeMap::from([(
            "t".to_string(),
            TopicInfo {
                id: T,
                partitions: n,
            },
        )])
    }

    fn join(id: &str) -> Heartbeat<'_> {
        Heartbeat {
            member_id: id,
            member_epoch: 0,
            instance_id: None,
            rack_id: None,
            rebalance_timeout_ms: 30_000,
            subscribed: Some(vec!["t".into()]),
            regex: None,
            assignor: None,
            owned: Some(Partitions::new()),
            client_id: "c",
            client_host: "h",
        }
    }

    fn beat<'a>(id: &'a str, epoch: i32, owned: &[i32]) -> Heartbeat<'a> {
        Heartbeat {
            member_epoch: epoch,
            rebalance_timeout_ms: -1,
            subscribed: None,
            owned: Some(parts(owned)),
            ..join(id)
        }
    }

    fn parts(ps: &[i32]) -> Partitions {
        if ps.is_empty() {
            return Partitions::new();
        }
        BTreeMap::from([(T, ps.iter().copied().collect())])
    }

    fn assigned(a: &HeartbeatAnswer) -> Vec<i32> {
        a.assignment
            .as_ref()
            .and_then(|p| p.get(&T))
            .map(|s| s.iter().copied().collect())
            .unwrap_or_default()
    }

    /// Invariant: a regex subscription covers exactly the topics whose
    /// whole name matches, including one created after the member joined
    /// (picked up at its next heartbeat); a regex that does not compile is
    /// INVALID_REGULAR_EXPRESSION.
    #[test]
    fn a_regex_subscription_follows_the_topics_that_match() {
        let info = |id: u8, partitions: i32| TopicInfo {
            id: [id; 16],
            partitions,
        };
        let mut t = BTreeMap::from([
            ("orders-eu".to_string(), info(1, 2)),
            ("audit".to_string(), info(2, 1)),
            ("orders-eu-archive.x".to_string(), info(3, 1)),
        ]);
        let mut g = ConsumerGroup::default();
        let first = Heartbeat {
            subscribed: None,
            regex: Some("orders-[a-z]+"),
            ..join("a")
        };
        let a = g.heartbeat(&first, &t, 0, String::new).unwrap();
        let topics_of = |a: &HeartbeatAnswer| -> Vec<u8> {
            a.assignment
                .as_ref()
                .map(|p| p.keys().map(|id| id[0]).collect())
                .unwrap_or_default()
        };
        assert_eq!(topics_of(&a), [1], "only whole names match");
        t.insert("orders-us".to_string(), info(4, 1));
        let owned: Partitions = BTreeMap::from([([1; 16], BTreeSet::from([0, 1]))]);
        let next = g
            .heartbeat(
                &Heartbeat {
                    member_epoch: a.member_epoch,
                    rebalance_timeout_ms: -1,
                    regex: None,
                    owned: Some(owned),
                    ..first.clone()
                },
                &t,
                1,
                String::new,
            )
            .unwrap();
        assert_eq!(topics_of(&next), [1, 4], "the new topic is picked up");
        assert!(next.member_epoch > a.member_epoch);
        let bad = Heartbeat {
            regex: Some("orders-("),
            ..join("b")
        };
        assert_eq!(
            ConsumerGroup::validate(&bad),
            Err(ErrorCode::InvalidRegularExpression)
        );
    }

    /// Invariant: a partition moves to a new member only after its previous
    /// owner reported it revoked; the epochs follow.
    #[test]
    fn a_second_member_gets_partitions_only_after_the_first_revokes_them() {
        let mut g = ConsumerGroup::default();
        let t = topics(4);
        let a = g.heartbeat(&join("a"), &t, 0, String::new).unwrap();
        assert_eq!((a.member_epoch, assigned(&a)), (1, vec![0, 1, 2, 3]));
        let b = g.heartbeat(&join("b"), &t, 1, String::new).unwrap();
        assert_eq!(b.member_epoch, 2);
        assert_eq!(assigned(&b), Vec::<i32>::new(), "held by a until revoked");
        // a is told to keep two: epoch unchanged while it revokes.
        let a = g
            .heartbeat(&beat("a", 1, &[0, 1, 2, 3]), &t, 2, String::new)
            .unwrap();
        assert_eq!(a.member_epoch, 1);
        let kept = assigned(&a);
        assert_eq!(kept.len(), 2);
        // Still owning the revoked ones: no progress.
        let again = g
            .heartbeat(&beat("a", 1, &[0, 1, 2, 3]), &t, 3, String::new)
            .unwrap();
        assert_eq!((again.member_epoch, again.assignment), (1, None));
        let a = g
            .heartbeat(&beat("a", 1, &kept), &t, 4, String::new)
            .unwrap();
        assert_eq!(a.member_epoch, 2);
        let b = g.heartbeat(&beat("b", 2, &[]), &t, 5, String::new).unwrap();
        let mut all = kept.clone();
        all.extend(assigned(&b));
        all.sort();
        assert_eq!(all, vec![0, 1, 2, 3]);
        assert_eq!(g.state(), ConsumerGroupState::Stable);
    }

    /// Invariant: an epoch above the member's, or an old one that is not
    /// the previous epoch with a subset of the assignment, is fenced.
    #[test]
    fn stale_and_future_epochs_are_fenced() {
        let mut g = ConsumerGroup::default();
        let t = topics(2);
        g.heartbeat(&join("a"), &t, 0, String::new).unwrap();
        assert_eq!(
            g.heartbeat(&beat("a", 5, &[]), &t, 1, String::new),
            Err(ErrorCode::FencedMemberEpoch)
        );
        g.heartbeat(&join("b"), &t, 1, String::new).unwrap();
        let a = g
            .heartbeat(&beat("a", 1, &[0, 1]), &t, 2, String::new)
            .unwrap();
        let kept = assigned(&a);
        let a = g
            .heartbeat(&beat("a", 1, &kept), &t, 3, String::new)
            .unwrap();
        assert_eq!(a.member_epoch, 2);
        // The answer that moved a to epoch 2 was lost: epoch 1 with a
        // subset is accepted.
        assert!(
            g.heartbeat(&beat("a", 1, &kept), &t, 4, String::new)
                .is_ok()
        );
        assert_eq!(
            g.heartbeat(&beat("a", 1, &[0, 1]), &t, 5, String::new),
            Err(ErrorCode::FencedMemberEpoch),
            "owning partitions it no longer has"
        );
        assert_eq!(
            g.heartbeat(&beat("zz", 1, &[]), &t, 6, String::new),
            Err(ErrorCode::UnknownMemberId)
        );
    }

    /// Invariant: a silent member is removed after the session timeout and
    /// its partitions go to the others.
    #[test]
    fn an_expired_member_is_removed_and_its_partitions_reassigned() {
        let mut g = ConsumerGroup::default();
        let t = topics(2);
        g.heartbeat(&join("a"), &t, 0, String::new).unwrap();
        g.heartbeat(&join("b"), &t, 0, String::new).unwrap();
        let a = g
            .heartbeat(&beat("a", 1, &[0, 1]), &t, 1, String::new)
            .unwrap();
        let kept = assigned(&a);
        g.heartbeat(&beat("a", 1, &kept), &t, 2, String::new)
            .unwrap();
        assert!(!g.tick(40_000, 45_000));
        g.heartbeat(&beat("a", 2, &kept), &t, 40_000, String::new)
            .unwrap();
        assert!(g.tick(45_002, 45_000), "b never heartbeat since 0");
        let a = g
            .heartbeat(&beat("a", 2, &kept), &t, 45_003, String::new)
            .unwrap();
        assert_eq!(assigned(&a), vec![0, 1]);
    }

    /// Invariant: a static member that left with epoch -2 is replaced by a
    /// new member with its instance id, which gets its partitions without
    /// a rebalance; while it is still there, the id is refused.
    #[test]
    fn a_static_member_is_replaced_by_its_successor() {
        let mut g = ConsumerGroup::default();
        let t = topics(2);
        let stat = |id: &'static str| Heartbeat {
            instance_id: Some("i-1"),
            ..join(id)
        };
        let a = g.heartbeat(&stat("a"), &t, 0, String::new).unwrap();
        let epoch = g.group_epoch;
        assert_eq!(
            g.heartbeat(&stat("a2"), &t, 1, String::new),
            Err(ErrorCode::UnreleasedInstanceId)
        );
        g.leave(&Heartbeat {
            member_epoch: STATIC_LEAVE_EPOCH,
            ..stat("a")
        })
        .unwrap();
        let a2 = g.heartbeat(&stat("a2"), &t, 2, String::new).unwrap();
        assert_eq!(assigned(&a2), assigned(&a));
        assert_eq!(g.group_epoch, epoch, "no rebalance");
        assert!(!g.members.contains_key("a"));
    }

    /// Invariant: a commit at an older epoch is accepted only for
    /// partitions the member has held since that epoch.
    #[test]
    fn commits_check_the_member_epoch_per_partition() {
        let mut g = ConsumerGroup::default();
        let t = topics(2);
        g.heartbeat(&join("a"), &t, 0, String::new).unwrap();
        assert_eq!(g.check_commit("a", 1, false, 9, Some((T, 0))), Ok(()));
        assert_eq!(
            g.check_commit("a", 2, false, 9, Some((T, 0))),
            Err(ErrorCode::StaleMemberEpoch)
        );
        assert_eq!(
            g.check_commit("a", 1, false, 8, Some((T, 0))),
            Err(ErrorCode::UnsupportedVersion)
        );
        assert_eq!(
            g.check_commit("b", 1, true, 5, Some((T, 0))),
            Err(ErrorCode::UnknownMemberId)
        );
        assert_eq!(g.check_commit("", -1, true, 5, Some((T, 0))), Ok(()));
    }

    #[test]
    fn range_splits_each_topic_in_member_order() {
        let t = ["t".to_string()];
        let subs: BTreeMap<&str, &[String]> = BTreeMap::from([("a", &t[..]), ("b", &t[..])]);
        let out = assign_range(&subs, &topics(5));
        assert_eq!(out["a"].iter().map(|x| x.1).collect::<Vec<_>>(), [0, 1, 2]);
        assert_eq!(out["b"].iter().map(|x| x.1).collect::<Vec<_>>(), [3, 4]);
    }
}
