//! Classic consumer group membership (Kafka's `ClassicGroup`): JoinGroup,
//! SyncGroup, Heartbeat, LeaveGroup, session timeouts, generations.
//!
//! ```text
//!            JoinGroup (a new or changed member)       all members rejoined,
//!   Empty ───────────────────────────────► Preparing ──or the rebalance timeout──► Completing
//!     ▲                                    Rebalance                                Rebalance
//!     │ last member left                      ▲                                        │ the leader's
//!     │                                       │ join, leave, session expiry            │ SyncGroup
//!     └──────────────────────────── Stable ◄──┴────────────────────────────────────────┘
//! ```
//!
//! - A JoinGroup without a member id is answered MEMBER_ID_REQUIRED with
//!   one (KIP-394); the client joins again with it.
//! - Any join starts a rebalance; the JoinGroup answers wait until every
//!   member has rejoined (members learn of the rebalance from
//!   REBALANCE_IN_PROGRESS on Heartbeat) or the longest rebalance timeout
//!   passed (members that did not rejoin are removed). The generation then
//!   moves on; the leader (the old one if still a member, else the first
//!   to join) gets every member's metadata for the chosen protocol.
//! - SyncGroup: the leader's assignments make the group Stable; the
//!   followers' SyncGroup waits for them.
//! - A member whose heartbeats stop for its session timeout is removed.
//! - Static members (KIP-345, `group.instance.id`) join without
//!   MEMBER_ID_REQUIRED; one that joins again without a member id (a
//!   restarted process) replaces the member of its instance id: the new
//!   member id takes over its assignment, and while the group is Stable
//!   with the same protocol there is no rebalance (the leader is told to
//!   skip the assignment, JoinGroup v9). Requests naming an instance id
//!   with another member id are FENCED_INSTANCE_ID. A static member's
//!   JoinGroup parked in a rebalance and run again is taken for the same
//!   member, not a replacement.

use bytes::Bytes;
use kafka_proto::ErrorCode;
use std::collections::{BTreeMap, HashSet};

/// A classic group's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GroupState {
    Empty,
    PreparingRebalance,
    CompletingRebalance,
    Stable,
}

#[derive(Debug, Clone)]
pub(crate) struct Member {
    /// The assignment protocols it supports, with its metadata for each.
    pub protocols: Vec<(String, Bytes)>,
    /// How long it may go without a heartbeat before removal.
    pub session_timeout_ms: i32,
    /// How long it has to rejoin once a rebalance starts.
    pub rebalance_timeout_ms: i32,
    /// When it was last heard from, for the session timeout.
    pub last_heartbeat_ms: i64,
    /// Rejoined during the current rebalance.
    pub joined: bool,
    /// Its JoinGroup of the completed rebalance has not been answered yet.
    pub awaiting_join_answer: bool,
    /// Its assignment from the leader's SyncGroup.
    pub assignment: Bytes,
    /// Join order: the oldest member leads the group.
    pub order: u64,
    /// Its client id, as DescribeGroups shows it.
    pub client_id: String,
    /// The client's address as DescribeGroups shows it (set by JoinGroup).
    pub client_host: String,
    /// Its `group.instance.id` (KIP-345 static member), if any.
    pub instance_id: Option<String>,
}

/// A classic group.
#[derive(Debug, Clone)]
pub(crate) struct ClassicGroup {
    /// Where the group is in its rebalance.
    pub state: GroupState,
    /// The generation; bumped when a rebalance completes.
    pub generation: i32,
    /// The protocol type its members share (`consumer`).
    pub protocol_type: String,
    /// The assignment protocol chosen for this generation.
    pub protocol: Option<String>,
    /// Member id of the leader, which computes the assignment.
    pub leader: Option<String>,
    /// Members by member id.
    pub members: BTreeMap<String, Member>,
    /// When the rebalance completes anyway, removing the members not rejoined.
    pub rebalance_deadline_ms: i64,
    /// Member ids handed out with MEMBER_ID_REQUIRED, not yet joined.
    pending_ids: HashSet<String>,
    /// The join order the next member gets.
    next_order: u64,
}

/// A JoinGroup's answer, once the rebalance completed.
#[derive(Debug, Clone)]
pub(crate) struct Joined {
    /// The new generation.
    pub generation: i32,
    /// The protocol chosen for it.
    pub protocol: Option<String>,
    /// The leader's member id.
    pub leader: String,
    /// The joining member's id.
    pub member_id: String,
    /// Every member's metadata for the protocol (the leader's answer only).
    pub members: Vec<(String, Bytes, Option<String>)>,
    /// A static leader rejoined a Stable group: it keeps the assignment
    /// (JoinGroup v9's `skip_assignment`).
    pub skip_assignment: bool,
}

/// What a JoinGroup gets.
#[derive(Debug, Clone)]
pub(crate) enum JoinOutcome {
    /// Join again with this member id.
    MemberIdRequired(String),
    /// Wait for the rebalance to complete.
    Waiting {
        until_ms: i64,
    },
    /// The new generation.
    Joined(Joined),
    Refused(ErrorCode),
}

/// A JoinGroup's parameters.
#[derive(Debug, Clone)]
pub(crate) struct JoinRequest<'a> {
    /// The member id ("" for a new member).
    pub member_id: &'a str,
    /// The protocol type (`consumer`).
    pub protocol_type: &'a str,
    /// The protocols it supports, with its metadata for each.
    pub protocols: Vec<(String, Bytes)>,
    /// Its session timeout.
    pub session_timeout_ms: i32,
    /// Its rebalance timeout.
    pub rebalance_timeout_ms: i32,
    /// The request header's client id.
    pub client_id: &'a str,
    /// `group.instance.id`, if static.
    pub instance_id: Option<&'a str>,
}

impl ClassicGroup {
    /// What changes when the group does (parked requests are run again
    /// only after a change).
    pub(crate) fn fingerprint(&self) -> (GroupState, i32, usize, usize, usize) {
        (
            self.state,
            self.generation,
            self.members.len(),
            self.members.values().filter(|m| m.joined).count(),
            self.members
                .values()
                .filter(|m| m.awaiting_join_answer)
                .count(),
        )
    }

    pub(crate) fn new() -> Self {
        Self {
            state: GroupState::Empty,
            generation: 0,
            protocol_type: String::new(),
            protocol: None,
            leader: None,
            members: BTreeMap::new(),
            rebalance_deadline_ms: 0,
            pending_ids: HashSet::new(),
            next_order: 0,
        }
    }

    /// Starts a rebalance: every member must rejoin.
    fn prepare_rebalance(&mut self, now_ms: i64) {
        if self.state == GroupState::PreparingRebalance {
            return;
        }
        self.state = GroupState::PreparingRebalance;
        for m in self.members.values_mut() {
            m.joined = false;
            m.awaiting_join_answer = false;
        }
        let longest = self
            .members
            .values()
            .map(|m| m.rebalance_timeout_ms.max(m.session_timeout_ms))
            .max()
            .unwrap_or(0);
        self.rebalance_deadline_ms = now_ms + i64::from(longest);
    }

    /// Completes the rebalance when every member rejoined (or `force`: the
    /// deadline passed, and those that did not rejoin are removed).
    pub(crate) fn try_complete(&mut self, now_ms: i64, force: bool) -> bool {
        if self.state != GroupState::PreparingRebalance {
            return false;
        }
        let all = self.members.values().all(|m| m.joined);
        if !(all || force || now_ms >= self.rebalance_deadline_ms) {
            return false;
        }
        self.members.retain(|_, m| m.joined);
        self.generation += 1;
        if self.members.is_empty() {
            self.state = GroupState::Empty;
            self.leader = None;
            self.protocol = None;
            return true;
        }
        let leader = match &self.leader {
            Some(l) if self.members.contains_key(l) => l.clone(),
            _ => self
                .members
                .iter()
                .min_by_key(|(_, m)| m.order)
                .map(|(id, _)| id.clone())
                .expect("not empty"),
        };
        // The leader's first protocol every member supports.
        let protocol = self.select_protocol(&leader);
        self.leader = Some(leader);
        self.protocol = protocol;
        self.state = GroupState::CompletingRebalance;
        for m in self.members.values_mut() {
            m.awaiting_join_answer = true;
            m.assignment = Bytes::new();
            m.last_heartbeat_ms = now_ms;
        }
        true
    }

    fn joined_answer(&mut self, member_id: &str) -> Joined {
        if let Some(m) = self.members.get_mut(member_id) {
            m.awaiting_join_answer = false;
        }
        let leader = self.leader.clone().unwrap_or_default();
        let members = if leader == member_id {
            let protocol = self.protocol.clone().unwrap_or_default();
            self.members
                .iter()
                .map(|(id, m)| {
                    let meta = m
                        .protocols
                        .iter()
                        .find(|(n, _)| *n == protocol)
                        .map(|(_, b)| b.clone())
                        .unwrap_or_default();
                    (id.clone(), meta, m.instance_id.clone())
                })
                .collect()
        } else {
            Vec::new()
        };
        Joined {
            generation: self.generation,
            protocol: self.protocol.clone(),
            leader,
            member_id: member_id.to_string(),
            members,
            skip_assignment: false,
        }
    }

    /// The member id registered for a static instance id.
    pub(crate) fn static_member(&self, instance_id: &str) -> Option<String> {
        self.members
            .iter()
            .find(|(_, m)| m.instance_id.as_deref() == Some(instance_id))
            .map(|(id, _)| id.clone())
    }

    /// Kafka's `ClassicGroup.validateMember`: a static member's instance
    /// id must map to its member id.
    pub(crate) fn validate_member(
        &self,
        member_id: &str,
        instance_id: Option<&str>,
    ) -> Result<(), ErrorCode> {
        match instance_id {
            Some(instance) => match self.static_member(instance) {
                None => Err(ErrorCode::UnknownMemberId),
                Some(id) if id != member_id => Err(ErrorCode::FencedInstanceId),
                Some(_) => Ok(()),
            },
            None if self.members.contains_key(member_id) => Ok(()),
            None => Err(ErrorCode::UnknownMemberId),
        }
    }

    /// The protocol the group would choose now: the leader's first one
    /// every member supports.
    fn select_protocol(&self, leader: &str) -> Option<String> {
        self.members
            .get(leader)?
            .protocols
            .iter()
            .map(|(n, _)| n.clone())
            .find(|n| {
                self.members
                    .values()
                    .all(|m| m.protocols.iter().any(|(p, _)| p == n))
            })
    }

    /// A static member joins again without a member id (a restarted
    /// process): `new_id` takes over `old_id`'s place and assignment.
    fn replace_static(
        &mut self,
        req: &JoinRequest<'_>,
        old_id: &str,
        new_id: String,
        now_ms: i64,
        final_attempt: bool,
    ) -> JoinOutcome {
        let mut m = self.members.remove(old_id).expect("a static member");
        m.protocols = req.protocols.clone();
        m.session_timeout_ms = req.session_timeout_ms;
        m.rebalance_timeout_ms = req.rebalance_timeout_ms;
        m.last_heartbeat_ms = now_ms;
        m.client_id = req.client_id.to_string();
        self.members.insert(new_id.clone(), m);
        if self.leader.as_deref() == Some(old_id) {
            self.leader = Some(new_id.clone());
        }
        match self.state {
            GroupState::Stable => {
                let leader = self.leader.clone().unwrap_or_default();
                if self.select_protocol(&leader) == self.protocol {
                    let is_leader = leader == new_id;
                    let mut answer = self.joined_answer(&new_id);
                    answer.skip_assignment = is_leader;
                    return JoinOutcome::Joined(answer);
                }
                self.prepare_rebalance(now_ms);
            }
            GroupState::CompletingRebalance => self.prepare_rebalance(now_ms),
            GroupState::PreparingRebalance | GroupState::Empty => {}
        }
        if let Some(m) = self.members.get_mut(&new_id) {
            m.joined = true;
        }
        if self.try_complete(now_ms, final_attempt) && self.members.contains_key(&new_id) {
            return JoinOutcome::Joined(self.joined_answer(&new_id));
        }
        JoinOutcome::Waiting {
            until_ms: self.rebalance_deadline_ms,
        }
    }

    /// JoinGroup. `new_id` makes a member id when one is required.
    pub(crate) fn join(
        &mut self,
        req: &JoinRequest<'_>,
        now_ms: i64,
        final_attempt: bool,
        new_id: impl FnOnce() -> String,
    ) -> JoinOutcome {
        if req.protocols.is_empty()
            || (!self.members.is_empty() && self.protocol_type != req.protocol_type)
        {
            return JoinOutcome::Refused(ErrorCode::InconsistentGroupProtocol);
        }
        if req.member_id.is_empty()
            && let Some(instance) = req.instance_id
        {
            if let Some(existing) = self.static_member(instance) {
                let m = &self.members[&existing];
                if m.awaiting_join_answer
                    || (self.state == GroupState::PreparingRebalance && m.joined)
                {
                    // This very JoinGroup, parked and run again.
                    let again = JoinRequest {
                        member_id: &existing,
                        ..req.clone()
                    };
                    return self.join(&again, now_ms, final_attempt, String::new);
                }
                return self.replace_static(req, &existing, new_id(), now_ms, final_attempt);
            }
            // A new static member joins at once with a new id.
            let id = new_id();
            self.pending_ids.insert(id.clone());
            let first = JoinRequest {
                member_id: &id,
                ..req.clone()
            };
            return self.join(&first, now_ms, final_attempt, String::new);
        }
        if req.member_id.is_empty() {
            let id = new_id();
            self.pending_ids.insert(id.clone());
            return JoinOutcome::MemberIdRequired(id);
        }
        if let Some(instance) = req.instance_id
            && let Some(existing) = self.static_member(instance)
            && existing != req.member_id
        {
            return JoinOutcome::Refused(ErrorCode::FencedInstanceId);
        }
        let known = self.members.contains_key(req.member_id);
        if !known && !self.pending_ids.remove(req.member_id) {
            return JoinOutcome::Refused(ErrorCode::UnknownMemberId);
        }
        if let Some(m) = self.members.get(req.member_id)
            && m.awaiting_join_answer
        {
            // The answer to a join parked before the rebalance completed.
            return JoinOutcome::Joined(self.joined_answer(req.member_id));
        }
        let rejoined_already = self.state == GroupState::PreparingRebalance
            && self.members.get(req.member_id).is_some_and(|m| m.joined);
        if !rejoined_already {
            self.prepare_rebalance(now_ms);
            self.protocol_type = req.protocol_type.to_string();
            let order = self.next_order;
            self.next_order += 1;
            let m = self
                .members
                .entry(req.member_id.to_string())
                .or_insert_with(|| Member {
                    protocols: Vec::new(),
                    session_timeout_ms: 0,
                    rebalance_timeout_ms: 0,
                    last_heartbeat_ms: now_ms,
                    joined: false,
                    awaiting_join_answer: false,
                    assignment: Bytes::new(),
                    order,
                    client_id: String::new(),
                    client_host: String::new(),
                    instance_id: None,
                });
            m.protocols = req.protocols.clone();
            m.session_timeout_ms = req.session_timeout_ms;
            m.rebalance_timeout_ms = req.rebalance_timeout_ms;
            m.last_heartbeat_ms = now_ms;
            m.joined = true;
            m.client_id = req.client_id.to_string();
            m.instance_id = req.instance_id.map(str::to_string);
            let deadline = now_ms + i64::from(req.rebalance_timeout_ms.max(req.session_timeout_ms));
            self.rebalance_deadline_ms = self.rebalance_deadline_ms.max(deadline);
        }
        if self.try_complete(now_ms, final_attempt) && self.members.contains_key(req.member_id) {
            return JoinOutcome::Joined(self.joined_answer(req.member_id));
        }
        if !self.members.contains_key(req.member_id) {
            return JoinOutcome::Refused(ErrorCode::UnknownMemberId);
        }
        JoinOutcome::Waiting {
            until_ms: self.rebalance_deadline_ms,
        }
    }

    /// Checks a member (and its instance id) and generation (Heartbeat,
    /// SyncGroup, OffsetCommit, TxnOffsetCommit).
    pub(crate) fn check_member(
        &self,
        member_id: &str,
        instance_id: Option<&str>,
        generation: i32,
    ) -> Result<(), ErrorCode> {
        self.validate_member(member_id, instance_id)?;
        if generation != self.generation {
            return Err(ErrorCode::IllegalGeneration);
        }
        Ok(())
    }

    /// SyncGroup: `Ok(Some(assignment))`, or `Ok(None)` to wait for the
    /// leader's assignments.
    pub(crate) fn sync(
        &mut self,
        member_id: &str,
        instance_id: Option<&str>,
        generation: i32,
        assignments: &[(String, Bytes)],
        now_ms: i64,
    ) -> Result<Option<Bytes>, ErrorCode> {
        self.check_member(member_id, instance_id, generation)?;
        match self.state {
            GroupState::PreparingRebalance => Err(ErrorCode::RebalanceInProgress),
            GroupState::Empty => Err(ErrorCode::UnknownMemberId),
            GroupState::Stable => Ok(Some(self.members[member_id].assignment.clone())),
            GroupState::CompletingRebalance => {
                if self.leader.as_deref() == Some(member_id) {
                    for m in self.members.values_mut() {
                        m.assignment = Bytes::new();
                    }
                    for (id, a) in assignments {
                        if let Some(m) = self.members.get_mut(id) {
                            m.assignment = a.clone();
                        }
                    }
                    self.state = GroupState::Stable;
                    for m in self.members.values_mut() {
                        m.last_heartbeat_ms = now_ms;
                    }
                    Ok(Some(self.members[member_id].assignment.clone()))
                } else {
                    Ok(None)
                }
            }
        }
    }

    /// Heartbeat.
    pub(crate) fn heartbeat(
        &mut self,
        member_id: &str,
        instance_id: Option<&str>,
        generation: i32,
        now_ms: i64,
    ) -> Result<(), ErrorCode> {
        self.check_member(member_id, instance_id, generation)?;
        if let Some(m) = self.members.get_mut(member_id) {
            m.last_heartbeat_ms = now_ms;
        }
        match self.state {
            GroupState::PreparingRebalance => Err(ErrorCode::RebalanceInProgress),
            _ => Ok(()),
        }
    }

    /// LeaveGroup of one member.
    pub(crate) fn leave(&mut self, member_id: &str, now_ms: i64) -> Result<(), ErrorCode> {
        if self.members.remove(member_id).is_none() {
            return Err(ErrorCode::UnknownMemberId);
        }
        if self.members.is_empty() {
            self.state = GroupState::Empty;
            self.generation += 1;
            self.leader = None;
            self.protocol = None;
        } else {
            self.prepare_rebalance(now_ms);
            self.try_complete(now_ms, false);
        }
        Ok(())
    }

    /// Removes members whose session expired (in a rebalance, those that
    /// did not rejoin); completes a rebalance whose
    /// deadline passed. True when anything changed.
    pub(crate) fn tick(&mut self, now_ms: i64) -> bool {
        let mut changed = false;
        // A member's session runs in every state, except while its
        // JoinGroup waits for the rebalance to complete or its SyncGroup
        // for the leader (Kafka's `ClassicGroupMember.hasSatisfiedHeartbeat`).
        let waiting = |m: &Member| match self.state {
            GroupState::PreparingRebalance => m.joined,
            GroupState::CompletingRebalance => true,
            GroupState::Stable | GroupState::Empty => false,
        };
        let expired: Vec<String> = self
            .members
            .iter()
            .filter(|(_, m)| {
                !waiting(m) && now_ms - m.last_heartbeat_ms > i64::from(m.session_timeout_ms)
            })
            .map(|(id, _)| id.clone())
            .collect();
        for id in expired {
            let _ = self.leave(&id, now_ms);
            changed = true;
        }
        if self.state == GroupState::PreparingRebalance && now_ms >= self.rebalance_deadline_ms {
            changed |= self.try_complete(now_ms, true);
        }
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(id: &str) -> JoinRequest<'_> {
        JoinRequest {
            member_id: id,
            protocol_type: "consumer",
            protocols: vec![("range".into(), Bytes::from_static(b"m"))],
            session_timeout_ms: 10_000,
            rebalance_timeout_ms: 30_000,
            client_id: "c",
            instance_id: None,
        }
    }

    #[test]
    fn two_members_join_sync_and_the_leader_assigns() {
        let mut g = ClassicGroup::new();
        let JoinOutcome::MemberIdRequired(a) = g.join(&req(""), 0, false, || "a".into()) else {
            panic!()
        };
        let JoinOutcome::MemberIdRequired(b) = g.join(&req(""), 0, false, || "b".into()) else {
            panic!()
        };
        // a alone completes generation 1.
        let JoinOutcome::Joined(j) = g.join(&req(&a), 0, false, String::new) else {
            panic!()
        };
        assert_eq!(
            (j.generation, j.leader.as_str(), j.members.len()),
            (1, "a", 1)
        );
        assert_eq!(
            g.sync(&a, None, 1, &[(a.clone(), Bytes::from_static(b"p0"))], 0),
            Ok(Some(Bytes::from_static(b"p0")))
        );
        // b joins: a rebalance; a learns from its heartbeat and rejoins.
        assert!(matches!(
            g.join(&req(&b), 1, false, String::new),
            JoinOutcome::Waiting { .. }
        ));
        assert_eq!(
            g.heartbeat(&a, None, 1, 1),
            Err(ErrorCode::RebalanceInProgress)
        );
        let JoinOutcome::Joined(ja) = g.join(&req(&a), 2, false, String::new) else {
            panic!()
        };
        assert_eq!((ja.generation, ja.members.len()), (2, 2));
        // b's parked join, run again, gets the same generation as a follower.
        let JoinOutcome::Joined(jb) = g.join(&req(&b), 3, false, String::new) else {
            panic!()
        };
        assert_eq!((jb.generation, jb.members.len()), (2, 0));
        assert_eq!(
            g.sync(&b, None, 2, &[], 3),
            Ok(None),
            "waits for the leader"
        );
        let assign = [
            (a.clone(), Bytes::from_static(b"pa")),
            (b.clone(), Bytes::from_static(b"pb")),
        ];
        assert_eq!(
            g.sync(&a, None, 2, &assign, 4),
            Ok(Some(Bytes::from_static(b"pa")))
        );
        assert_eq!(
            g.sync(&b, None, 2, &[], 5),
            Ok(Some(Bytes::from_static(b"pb")))
        );
        assert_eq!(
            g.check_member(&a, None, 1),
            Err(ErrorCode::IllegalGeneration)
        );
    }

    /// Invariant: a restarted static member (same instance id, no member
    /// id) takes its predecessor's place and assignment without a
    /// rebalance; the predecessor's id is fenced from then on.
    #[test]
    fn a_static_member_is_replaced_without_a_rebalance() {
        let mut g = ClassicGroup::new();
        let stat = |id: &'static str| JoinRequest {
            instance_id: Some("i-1"),
            ..req(id)
        };
        let JoinOutcome::Joined(j) = g.join(&stat(""), 0, false, || "a".into()) else {
            panic!("a static member joins without MEMBER_ID_REQUIRED")
        };
        assert_eq!((j.member_id.as_str(), j.generation), ("a", 1));
        g.sync(
            "a",
            Some("i-1"),
            1,
            &[("a".into(), Bytes::from_static(b"p0"))],
            0,
        )
        .unwrap();
        let JoinOutcome::Joined(j) = g.join(&stat(""), 1, false, || "a2".into()) else {
            panic!("the replacement joins at once")
        };
        assert_eq!(
            (j.member_id.as_str(), j.generation),
            ("a2", 1),
            "no rebalance"
        );
        assert!(j.skip_assignment, "the leader keeps the assignment");
        assert_eq!(
            g.sync("a2", Some("i-1"), 1, &[], 2),
            Ok(Some(Bytes::from_static(b"p0")))
        );
        assert_eq!(
            g.heartbeat("a", Some("i-1"), 1, 3),
            Err(ErrorCode::FencedInstanceId)
        );
        assert!(matches!(
            g.join(&stat("a"), 4, false, String::new),
            JoinOutcome::Refused(ErrorCode::FencedInstanceId)
        ));
    }

    #[test]
    fn a_silent_member_is_removed_after_its_session_timeout() {
        let mut g = ClassicGroup::new();
        let JoinOutcome::MemberIdRequired(a) = g.join(&req(""), 0, false, || "a".into()) else {
            panic!()
        };
        g.join(&req(&a), 0, false, String::new);
        g.sync(&a, None, 1, &[], 0).unwrap();
        assert!(!g.tick(10_000));
        assert!(g.tick(10_001));
        assert_eq!(g.state, GroupState::Empty);
        assert_eq!(
            g.heartbeat(&a, None, 1, 10_002),
            Err(ErrorCode::UnknownMemberId)
        );
    }
}
