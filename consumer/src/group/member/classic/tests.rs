//! The classic member's transitions, one scenario per test. Its helpers
//! (a stable member, a heartbeat's answer, the JoinGroup to send) also
//! serve the commit queue's tests.

use super::*;
use kafka_proto::messages::JoinGroupResponseMember;

fn now() -> Instant {
    Instant::now()
}

fn config(assignors: &[Assignor]) -> ClassicConfig {
    let mut c = ClassicConfig::new("g");
    c.assignors = assignors.to_vec();
    c.heartbeat_interval = Duration::from_millis(0);
    c
}

fn joining(assignors: &[Assignor]) -> ClassicMember {
    let mut m = ClassicMember::new(config(assignors));
    m.subscribe(["t".to_string()]);
    assert_eq!(m.poll_action(), Some(ClassicAction::FindCoordinator));
    m.coordinator_found();
    m
}

/// A member of group "g" with the default configuration, subscribed to "t".
fn subscribed() -> ClassicMember {
    let mut m = ClassicMember::new(ClassicConfig::new("g"));
    m.subscribe(["t".to_string()]);
    m
}

pub(crate) fn join_req(m: &mut ClassicMember) -> JoinGroupRequest {
    match m.poll_request(now()) {
        Some(Request::Join(j)) => j,
        other => panic!("expected a JoinGroup, got {other:?}"),
    }
}

fn joined(m: &mut ClassicMember, generation: i32, protocol: &str, leader: &str) {
    join_req(m);
    m.on_join_answer(
        now(),
        JoinGroupResponse {
            generation_id: generation,
            protocol_name: Some(protocol.into()),
            leader: leader.into(),
            member_id: "me".into(),
            ..Default::default()
        },
        &|_| None,
    );
    assert_eq!(m.state(), ClassicState::Syncing);
}

fn assignment(parts: &[i32]) -> bytes::Bytes {
    ConsumerProtocolAssignment {
        assigned_partitions: vec![ConsumerProtocolAssignmentTopicPartition {
            topic: "t".into(),
            partitions: parts.to_vec(),
        }],
        ..Default::default()
    }
    .encode_prefixed(3)
    .unwrap()
    .into()
}

fn synced(m: &mut ClassicMember, parts: &[i32]) {
    assert!(matches!(m.poll_request(now()), Some(Request::Sync(_))));
    m.on_sync_answer(
        now(),
        SyncGroupResponse {
            assignment: assignment(parts),
            ..Default::default()
        },
    );
}

fn tps(parts: &[i32]) -> Vec<TopicPartition> {
    parts.iter().map(|p| TopicPartition::new("t", *p)).collect()
}

pub(crate) fn stable(assignors: &[Assignor], parts: &[i32]) -> ClassicMember {
    let mut m = joining(assignors);
    joined(&mut m, 1, assignors[0].name(), "other");
    synced(&mut m, parts);
    assert_eq!(m.poll_action(), Some(ClassicAction::Assign(tps(parts))));
    assert!(m.assignment_done());
    assert_eq!(m.state(), ClassicState::Stable);
    m
}

pub(crate) fn heartbeat(m: &mut ClassicMember, error: ErrorCode) {
    let Some(Request::Heartbeat(hb)) = m.poll_request(now()) else {
        panic!("expected a heartbeat")
    };
    m.on_heartbeat_answer(
        now(),
        &hb,
        HeartbeatResponse {
            error_code: error.code(),
            ..Default::default()
        },
    );
}

#[test]
fn a_dynamic_member_joins_twice_with_the_member_id_it_is_given() {
    let mut m = joining(&Assignor::DEFAULT);
    assert_eq!(join_req(&mut m).member_id, "");
    m.on_join_answer(
        now(),
        JoinGroupResponse {
            error_code: ErrorCode::MemberIdRequired.code(),
            member_id: "given".into(),
            ..Default::default()
        },
        &|_| None,
    );
    assert_eq!(m.state(), ClassicState::Joining);
    let j = join_req(&mut m);
    assert_eq!(j.member_id, "given");
    assert!(j.reason.is_some(), "KIP-800 reason");
}

#[test]
fn the_join_offers_every_assignor_with_the_subscription() {
    let mut m = joining(&Assignor::DEFAULT);
    let j = join_req(&mut m);
    let names: Vec<&str> = j.protocols.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["range", "cooperative-sticky"]);
    let (version, s) =
        ConsumerProtocolSubscription::decode_prefixed(&j.protocols[0].metadata).unwrap();
    assert_eq!(version, 3);
    assert_eq!(s.topics, ["t"]);
    assert_eq!(s.generation_id, -1);
}

#[test]
fn the_leader_assigns_every_members_partitions_and_followers_send_none() {
    let mut m = joining(&[Assignor::Range]);
    join_req(&mut m);
    let sub = ConsumerProtocolSubscription {
        topics: vec!["t".into()],
        ..Default::default()
    }
    .encode_prefixed(3)
    .unwrap();
    let member = |id: &str| JoinGroupResponseMember {
        member_id: id.into(),
        metadata: sub.clone().into(),
        ..Default::default()
    };
    m.on_join_answer(
        now(),
        JoinGroupResponse {
            generation_id: 4,
            protocol_name: Some("range".into()),
            leader: "a".into(),
            member_id: "a".into(),
            members: vec![member("a"), member("b")],
            ..Default::default()
        },
        &|t| (t == "t").then_some(3),
    );
    let Some(Request::Sync(sync)) = m.poll_request(now()) else {
        panic!("sync")
    };
    assert_eq!(sync.generation_id, 4);
    let got: BTreeMap<String, Vec<i32>> = sync
        .assignments
        .iter()
        .map(|a| {
            let (_, x) = ConsumerProtocolAssignment::decode_prefixed(&a.assignment).unwrap();
            (
                a.member_id.clone(),
                x.assigned_partitions[0].partitions.clone(),
            )
        })
        .collect();
    assert_eq!(got["a"], [0, 1]);
    assert_eq!(got["b"], [2]);
}

#[test]
fn an_unknown_assignor_chosen_by_the_coordinator_is_fatal() {
    let mut m = joining(&[Assignor::Range]);
    join_req(&mut m);
    m.on_join_answer(
        now(),
        JoinGroupResponse {
            generation_id: 1,
            protocol_name: Some("roundrobin".into()),
            member_id: "me".into(),
            ..Default::default()
        },
        &|_| None,
    );
    assert_eq!(m.state(), ClassicState::Fatal);
    assert!(
        matches!(m.poll_action(), Some(ClassicAction::Fatal(e)) if e.error == ErrorCode::InconsistentGroupProtocol)
    );
}

#[test]
fn an_eager_member_revokes_everything_before_it_rejoins() {
    let mut m = stable(&[Assignor::Range], &[0, 1]);
    heartbeat(&mut m, ErrorCode::RebalanceInProgress);
    assert_eq!(m.state(), ClassicState::PrepareJoin);
    assert_eq!(m.poll_action(), Some(ClassicAction::Revoke(tps(&[0, 1]))));
    // Heartbeats go on while the application commits.
    heartbeat(&mut m, ErrorCode::RebalanceInProgress);
    assert!(m.revocation_done());
    assert_eq!(m.state(), ClassicState::Joining);
    let (_, s) =
        ConsumerProtocolSubscription::decode_prefixed(&join_req(&mut m).protocols[0].metadata)
            .unwrap();
    assert!(s.owned_partitions.is_empty());
}

#[test]
fn a_cooperative_member_keeps_its_partitions_through_the_join_and_revokes_only_what_moves() {
    let coop = [Assignor::CooperativeSticky];
    let mut m = stable(&coop, &[0, 1, 2, 3]);
    heartbeat(&mut m, ErrorCode::RebalanceInProgress);
    assert_eq!(
        m.state(),
        ClassicState::Joining,
        "no revocation before the join"
    );
    let (_, s) =
        ConsumerProtocolSubscription::decode_prefixed(&join_req(&mut m).protocols[0].metadata)
            .unwrap();
    assert_eq!(s.owned_partitions[0].partitions, [0, 1, 2, 3]);
    assert_eq!(s.generation_id, 1);
    m.on_join_answer(
        now(),
        JoinGroupResponse {
            generation_id: 2,
            protocol_name: Some("cooperative-sticky".into()),
            leader: "other".into(),
            member_id: "me".into(),
            ..Default::default()
        },
        &|_| None,
    );
    synced(&mut m, &[0, 1]);
    assert_eq!(m.poll_action(), Some(ClassicAction::Revoke(tps(&[2, 3]))));
    assert_eq!(m.poll_action(), None, "assignment waits for the revocation");
    assert!(m.revocation_done());
    assert_eq!(m.poll_action(), Some(ClassicAction::Assign(vec![])));
    assert!(m.assignment_done());
    assert_eq!(m.state(), ClassicState::Joining, "follow-up rebalance");
    assert_eq!(m.owned()["t"].len(), 2);
}

#[test]
fn illegal_generation_loses_the_partitions_and_rejoins_with_the_same_member_id() {
    let mut m = stable(&[Assignor::Range], &[0]);
    heartbeat(&mut m, ErrorCode::IllegalGeneration);
    assert_eq!(m.state(), ClassicState::Fenced);
    assert_eq!(m.poll_action(), Some(ClassicAction::Lost(tps(&[0]))));
    assert!(m.lost_done());
    assert_eq!(m.generation(), -1);
    let j = join_req(&mut m);
    assert_eq!(j.member_id, "me");
    assert_eq!(j.reason.as_deref(), Reason::LostDone.join_reason());
}

#[test]
fn unknown_member_id_also_resets_the_member_id() {
    let mut m = stable(&[Assignor::Range], &[0]);
    heartbeat(&mut m, ErrorCode::UnknownMemberId);
    assert_eq!(m.poll_action(), Some(ClassicAction::Lost(tps(&[0]))));
    assert!(m.lost_done());
    assert_eq!(join_req(&mut m).member_id, "");
}

#[test]
fn fenced_instance_id_is_fatal() {
    let mut m = stable(&[Assignor::Range], &[0]);
    heartbeat(&mut m, ErrorCode::FencedInstanceId);
    assert_eq!(m.state(), ClassicState::Fatal);
    assert!(
        matches!(m.poll_action(), Some(ClassicAction::Fatal(e)) if e.error == ErrorCode::FencedInstanceId)
    );
}

#[test]
fn a_heartbeat_answer_of_an_older_generation_is_ignored() {
    let mut m = stable(&[Assignor::Range], &[0]);
    let Some(Request::Heartbeat(mut hb)) = m.poll_request(now()) else {
        panic!()
    };
    hb.generation_id -= 1;
    m.on_heartbeat_answer(
        now(),
        &hb,
        HeartbeatResponse {
            error_code: ErrorCode::IllegalGeneration.code(),
            ..Default::default()
        },
    );
    assert_eq!(m.state(), ClassicState::Stable);
}

#[test]
fn a_coordinator_error_looks_the_coordinator_up_again() {
    let mut m = stable(&[Assignor::Range], &[0]);
    heartbeat(&mut m, ErrorCode::NotCoordinator);
    assert_eq!(m.poll_action(), Some(ClassicAction::FindCoordinator));
    assert!(m.poll_request(now()).is_none());
    m.coordinator_found();
    assert!(matches!(m.poll_request(now()), Some(Request::Heartbeat(_))));
    assert_eq!(m.state(), ClassicState::Stable);
}

#[test]
fn a_dynamic_member_sends_leave_group_on_close() {
    let mut m = stable(&[Assignor::Range], &[0]);
    m.leave();
    let Some(Request::Leave(l)) = m.poll_request(now()) else {
        panic!("LeaveGroup")
    };
    assert_eq!(l.members[0].member_id, "me");
    assert_eq!(m.state(), ClassicState::Unsubscribed);
}

/// Invariant: the LeaveGroup request encodes at every version a broker may
/// choose, naming the member (a request that cannot be encoded is never
/// sent, and the group waits a whole session timeout for the member).
#[test]
fn the_leave_request_encodes_at_every_version() {
    use kafka_proto::Message;
    let mut m = stable(&[Assignor::Range], &[0]);
    m.leave();
    let Some(Request::Leave(l)) = m.poll_request(now()) else {
        panic!("LeaveGroup")
    };
    let range = LeaveGroupRequest::VERSIONS;
    for v in range.min..=range.max {
        let at = ClassicMember::leave_request_at(&l, v);
        let bytes = at
            .encode_to_vec(v)
            .unwrap_or_else(|e| panic!("LeaveGroup v{v}: {e}"));
        let back = LeaveGroupRequest::decode(&bytes, v).unwrap();
        let named = if v < 3 {
            back.member_id
        } else {
            back.members[0].member_id.clone()
        };
        assert_eq!(named, "me", "v{v}");
    }
}

#[test]
fn a_static_member_does_not_leave_on_close() {
    let mut c = config(&[Assignor::Range]);
    c.instance_id = Some("i".into());
    let mut m = ClassicMember::new(c);
    m.subscribe(["t".to_string()]);
    m.coordinator_found();
    assert_eq!(join_req(&mut m).group_instance_id.as_deref(), Some("i"));
    m.leave();
    assert!(m.poll_request(now()).is_none());
    assert_eq!(m.state(), ClassicState::Unsubscribed);
}

#[test]
fn a_poll_timeout_leaves_loses_the_partitions_and_rejoins_on_the_next_poll() {
    let mut m = stable(&[Assignor::Range], &[0]);
    let leave = m.poll_timeout_expired().expect("a dynamic member leaves");
    assert_eq!(leave.members[0].member_id, "me");
    assert_eq!(m.state(), ClassicState::Stale);
    assert_eq!(m.poll_action(), Some(ClassicAction::Lost(tps(&[0]))));
    assert!(!m.rejoin(), "the loss is confirmed first");
    assert!(m.lost_done());
    assert!(m.rejoin());
    assert_eq!(join_req(&mut m).member_id, "");
}

#[test]
fn a_sync_rebalance_in_progress_joins_again() {
    let mut m = joining(&[Assignor::Range]);
    joined(&mut m, 1, "range", "other");
    assert!(matches!(m.poll_request(now()), Some(Request::Sync(_))));
    m.on_sync_answer(
        now(),
        SyncGroupResponse {
            error_code: ErrorCode::RebalanceInProgress.code(),
            ..Default::default()
        },
    );
    assert_eq!(m.state(), ClassicState::Joining);
}

#[test]
fn an_unreadable_assignment_is_reported_and_the_member_rejoins() {
    let mut m = joining(&[Assignor::Range]);
    joined(&mut m, 1, "range", "other");
    assert!(matches!(m.poll_request(now()), Some(Request::Sync(_))));
    m.on_sync_answer(
        now(),
        SyncGroupResponse {
            assignment: bytes::Bytes::from_static(&[0]),
            ..Default::default()
        },
    );
    assert!(matches!(m.poll_action(), Some(ClassicAction::Error(_))));
    assert_eq!(m.state(), ClassicState::Joining);
}

fn leader(assignors: &[Assignor], count: i32) -> ClassicMember {
    let mut m = joining(assignors);
    join_req(&mut m);
    let sub = ConsumerProtocolSubscription {
        topics: vec!["t".into()],
        ..Default::default()
    }
    .encode_prefixed(3)
    .unwrap();
    m.on_join_answer(
        now(),
        JoinGroupResponse {
            generation_id: 1,
            protocol_name: Some(assignors[0].name().into()),
            leader: "me".into(),
            member_id: "me".into(),
            members: vec![JoinGroupResponseMember {
                member_id: "me".into(),
                metadata: sub.into(),
                ..Default::default()
            }],
            ..Default::default()
        },
        &|_| Some(count),
    );
    let parts: Vec<i32> = (0..count).collect();
    synced(&mut m, &parts);
    assert_eq!(m.poll_action(), Some(ClassicAction::Assign(tps(&parts))));
    assert!(m.assignment_done());
    m
}

#[test]
fn the_leader_rejoins_when_a_subscribed_topic_gains_partitions() {
    let mut m = leader(&[Assignor::Range], 2);
    assert!(m.is_leader());
    assert!(!m.check_metadata(&|_| Some(2)), "unchanged");
    assert!(m.check_metadata(&|_| Some(4)));
    assert_eq!(
        m.history().last(),
        Some(&(ClassicState::PrepareJoin, Reason::MetadataChanged))
    );
    assert_eq!(m.poll_action(), Some(ClassicAction::Revoke(tps(&[0, 1]))));
}

#[test]
fn a_follower_leaves_metadata_changes_to_the_leader() {
    let mut m = stable(&[Assignor::Range], &[0]);
    assert!(!m.is_leader());
    assert!(!m.check_metadata(&|_| Some(9)));
    assert_eq!(m.state(), ClassicState::Stable);
}

/// Invariant: a commit refused because it raced the member's own rejoin
/// (ILLEGAL_GENERATION: the JoinGroup reached the coordinator first) is
/// reported as REBALANCE_IN_PROGRESS and leaves the member as it is: a
/// cooperative member keeps its partitions through the join.
#[test]
fn a_commit_refused_while_the_member_rejoins_is_a_rebalance_in_progress() {
    let coop = [Assignor::CooperativeSticky];
    let mut m = stable(&coop, &[0, 1]);
    heartbeat(&mut m, ErrorCode::RebalanceInProgress);
    assert_eq!(m.state(), ClassicState::Joining);
    assert!(m.rebalance_in_progress());
    join_req(&mut m);
    for error in [
        ErrorCode::IllegalGeneration,
        ErrorCode::UnknownMemberId,
        ErrorCode::RebalanceInProgress,
    ] {
        assert_eq!(
            m.on_commit_refused(now(), 1, "me", error),
            ErrorCode::RebalanceInProgress
        );
    }
    assert_eq!(m.state(), ClassicState::Joining);
    assert_eq!((m.generation(), m.member_id()), (1, "me"));
    assert_eq!(m.owned()["t"].len(), 2, "nothing lost");
    assert_eq!(m.poll_action(), None);
}

/// Invariant: a commit of a generation that a completed rebalance replaced
/// while it was in flight is a REBALANCE_IN_PROGRESS too; the member stays
/// in its new generation.
#[test]
fn a_commit_refused_for_a_replaced_generation_leaves_the_new_one_alone() {
    let coop = [Assignor::CooperativeSticky];
    let mut m = stable(&coop, &[0, 1]);
    heartbeat(&mut m, ErrorCode::RebalanceInProgress);
    joined(&mut m, 2, "cooperative-sticky", "other");
    assert_eq!(
        m.on_commit_refused(now(), 1, "me", ErrorCode::IllegalGeneration),
        ErrorCode::RebalanceInProgress,
        "syncing"
    );
    synced(&mut m, &[0, 1]);
    assert_eq!(m.poll_action(), Some(ClassicAction::Assign(vec![])));
    assert!(m.assignment_done());
    assert_eq!(m.state(), ClassicState::Stable);
    assert_eq!(
        m.on_commit_refused(now(), 1, "me", ErrorCode::IllegalGeneration),
        ErrorCode::RebalanceInProgress,
        "stable in generation 2"
    );
    assert_eq!((m.state(), m.generation()), (ClassicState::Stable, 2));
    assert_eq!(m.poll_action(), None);
}

/// Invariant: a commit of the member's current generation refused with
/// ILLEGAL_GENERATION or UNKNOWN_MEMBER_ID means the member is out of the
/// group (Java's `CommitFailedException`): the error is reported and the
/// member resets as after a heartbeat's (partitions lost, rejoin); once it
/// is out, a further refusal changes nothing.
#[test]
fn a_commit_refused_for_the_current_generation_fences_the_member() {
    let mut m = stable(&[Assignor::Range], &[0]);
    assert!(!m.rebalance_in_progress());
    assert_eq!(
        m.on_commit_refused(now(), 1, "me", ErrorCode::IllegalGeneration),
        ErrorCode::IllegalGeneration
    );
    assert_eq!((m.state(), m.generation()), (ClassicState::Fenced, -1));
    assert_eq!(m.poll_action(), Some(ClassicAction::Lost(tps(&[0]))));
    assert_eq!(
        m.on_commit_refused(now(), 1, "me", ErrorCode::IllegalGeneration),
        ErrorCode::IllegalGeneration,
        "already out"
    );
    assert_eq!(m.poll_action(), None, "not lost twice");
    assert!(m.lost_done());
    assert_eq!(join_req(&mut m).member_id, "me");

    let mut m = stable(&[Assignor::Range], &[0]);
    assert_eq!(
        m.on_commit_refused(now(), 1, "me", ErrorCode::UnknownMemberId),
        ErrorCode::UnknownMemberId
    );
    assert_eq!(m.poll_action(), Some(ClassicAction::Lost(tps(&[0]))));
    assert!(m.lost_done());
    assert_eq!(join_req(&mut m).member_id, "", "the member id is reset");
}

/// Invariant: REBALANCE_IN_PROGRESS for a commit of the current generation
/// (the coordinator is between JoinGroup and SyncGroup) is reported and
/// asks for a rejoin, as a heartbeat's does; other errors pass unchanged.
#[test]
fn a_commit_refused_with_rebalance_in_progress_rejoins() {
    let mut m = stable(&[Assignor::Range], &[0]);
    assert_eq!(
        m.on_commit_refused(now(), 1, "me", ErrorCode::RebalanceInProgress),
        ErrorCode::RebalanceInProgress
    );
    assert_eq!(m.state(), ClassicState::PrepareJoin);
    assert_eq!(m.poll_action(), Some(ClassicAction::Revoke(tps(&[0]))));
    assert_eq!(
        m.on_commit_refused(now(), 1, "me", ErrorCode::OffsetMetadataTooLarge),
        ErrorCode::OffsetMetadataTooLarge
    );
    assert_eq!(m.state(), ClassicState::PrepareJoin);
}

// The walkthroughs of the public methods, once their doc examples: each
// drives the machine through the documented behaviour of one item.

// `ClassicState`: Where the classic member is (see the module's state diagram).
#[test]
fn classic_state() {
    use crate::group::member::kip848::MemberState;
    assert_eq!(ClassicState::Syncing.member_state(), MemberState::Joining);
}

// `ClassicState::member_state`: The closest KIP-848 `MemberState`, for `GroupConsumer::state`.
#[test]
fn classic_state_member_state() {
    assert!(ClassicState::Stable.member_state().is_member());
}

// `Reason`: Why the state changed.
#[test]
fn reason() {
    assert_ne!(Reason::Joined, Reason::Synced);
}

// `Reason::join_reason`: The JoinGroup reason sent for a (re)join caused by this (KIP-800).
#[test]
fn reason_join_reason() {
    assert_eq!(Reason::Subscribed.join_reason(), None);
    assert!(Reason::MetadataChanged.join_reason().is_some());
}

// `ClassicAction`: What the driver must do, in order.
#[test]
fn classic_action() {
    assert!(matches!(
        ClassicAction::FindCoordinator,
        ClassicAction::FindCoordinator
    ));
}

// `Request`: A request the driver sends to the group coordinator, then hands the answer (or the
// failure) back.
#[test]
fn request() {
    use kafka_proto::messages::HeartbeatRequest;
    let r = Request::Heartbeat(HeartbeatRequest::default());
    assert!(!matches!(r, Request::Join(_)));
}

// `leader_topics`: The topics every member of a leader's JoinGroup answer subscribes to: the
// driver makes sure the metadata knows their partition counts before it calls
// `ClassicMember::on_join_answer`.
#[test]
fn leader_topics() {
    use crate::group::member::classic::leader_topics;
    use kafka_proto::messages::JoinGroupResponse;
    assert!(leader_topics(&JoinGroupResponse::default()).is_empty());
}

// `ClassicMember::state`: The current state.
#[test]
fn classic_member_state() {
    assert_eq!(
        ClassicMember::new(ClassicConfig::new("g")).state(),
        ClassicState::Unsubscribed
    );
}

// `ClassicMember::generation`: The generation (-1 when not joined): the `generation_id` of offset
// commits and of the group metadata (KIP-447).
#[test]
fn classic_member_generation() {
    assert_eq!(ClassicMember::new(ClassicConfig::new("g")).generation(), -1);
}

// `ClassicMember::member_id`: The member id the coordinator gave ("" before the first join).
#[test]
fn classic_member_member_id() {
    assert!(
        ClassicMember::new(ClassicConfig::new("g"))
            .member_id()
            .is_empty()
    );
}

// `ClassicMember::protocol`: The assignor the coordinator chose in the last join.
#[test]
fn classic_member_protocol() {
    assert_eq!(ClassicMember::new(ClassicConfig::new("g")).protocol(), None);
}

// `ClassicMember::owned`: The partitions owned (confirmed by the application).
#[test]
fn classic_member_owned() {
    assert!(
        ClassicMember::new(ClassicConfig::new("g"))
            .owned()
            .is_empty()
    );
}

// `ClassicMember::history`: The recent state changes with their reasons, oldest first.
#[test]
fn classic_member_history() {
    let m = subscribed();
    assert_eq!(
        m.history().last(),
        Some(&(ClassicState::Joining, Reason::Subscribed))
    );
}

// `ClassicMember::is_cooperative`: True when every configured assignor is cooperative (Java's
// `RebalanceProtocol.COOPERATIVE`); otherwise the member is eager.
#[test]
fn classic_member_is_cooperative() {
    assert!(
        !ClassicMember::new(ClassicConfig::new("g")).is_cooperative(),
        "Java's default list is eager"
    );
}

// `ClassicMember::poll_action`: The next decision for the driver.
#[test]
fn classic_member_poll_action() {
    let mut m = subscribed();
    assert_eq!(m.poll_action(), Some(ClassicAction::FindCoordinator));
}

// `ClassicMember::subscribe`: Subscribes to `topics` and joins.
#[test]
fn classic_member_subscribe() {
    let m = subscribed();
    assert_eq!(m.state(), ClassicState::Joining);
}

// `ClassicMember::coordinator_found`: The coordinator is known (again).
#[test]
fn classic_member_coordinator_found() {
    let mut m = subscribed();
    assert!(
        m.poll_request(std::time::Instant::now()).is_none(),
        "no coordinator yet"
    );
    m.coordinator_found();
    assert!(matches!(
        m.poll_request(std::time::Instant::now()),
        Some(Request::Join(_))
    ));
}

// `ClassicMember::needs_coordinator`: True while the coordinator is to be looked up.
#[test]
fn classic_member_needs_coordinator() {
    assert!(ClassicMember::new(ClassicConfig::new("g")).needs_coordinator());
}

// `ClassicMember::next_request_at`: When `poll_request` has something next (None: on an event).
#[test]
fn classic_member_next_request_at() {
    assert_eq!(
        ClassicMember::new(ClassicConfig::new("g")).next_request_at(),
        None
    );
}

// `ClassicMember::poll_request`: The request to send now, if any (one at a time: the driver
// answers it before asking again).
#[test]
fn classic_member_poll_request() {
    let mut c = ClassicConfig::new("g");
    c.instance_id = Some("i-1".into());
    let mut m = ClassicMember::new(c);
    m.subscribe(["t".to_string()]);
    m.coordinator_found();
    let Some(Request::Join(j)) = m.poll_request(std::time::Instant::now()) else {
        panic!()
    };
    assert_eq!(j.group_instance_id.as_deref(), Some("i-1"));
    assert_eq!(j.protocol_type, "consumer");
    assert_eq!(j.protocols[0].name, "range");
}

// `ClassicMember::leave_request_at`: The LeaveGroup `request` (built with the v3+ batch of
// members) in the shape `version` carries: before v3 one top-level member id; before v5 no reason.
#[test]
fn classic_member_leave_request_at() {
    use kafka_proto::messages::{LeaveGroupRequest, LeaveGroupRequestMemberIdentity};
    let req = LeaveGroupRequest {
        group_id: "g".into(),
        members: vec![LeaveGroupRequestMemberIdentity {
            member_id: "m".into(),
            reason: Some("closing".into()),
            ..Default::default()
        }],
        ..Default::default()
    };
    let v2 = ClassicMember::leave_request_at(&req, 2);
    assert_eq!((v2.member_id.as_str(), v2.members.len()), ("m", 0));
}

// `ClassicMember::on_join_answer`: JoinGroup answered. For the leader, `partitions` gives the
// partition count of a subscribed topic (see `leader_topics`); topics it does not know are left
// out of the assignment, as Java does.
#[test]
fn classic_member_on_join_answer() {
    use kafka_proto::{ErrorCode, messages::JoinGroupResponse};
    let mut m = subscribed();
    m.coordinator_found();
    let now = std::time::Instant::now();
    m.poll_request(now);
    m.on_join_answer(
        now,
        JoinGroupResponse {
            error_code: ErrorCode::InconsistentGroupProtocol.code(),
            ..Default::default()
        },
        &|_| None,
    );
    assert_eq!(m.state(), ClassicState::Fatal);
}

// `ClassicMember::on_sync_answer`: SyncGroup answered: reconcile the assignment.
#[test]
fn classic_member_on_sync_answer() {
    use kafka_proto::messages::SyncGroupResponse;
    let mut m = ClassicMember::new(ClassicConfig::new("g"));
    m.on_sync_answer(std::time::Instant::now(), SyncGroupResponse::default());
    assert_eq!(
        m.state(),
        ClassicState::Unsubscribed,
        "not syncing: ignored"
    );
}

// `ClassicMember::on_heartbeat_answer`: Heartbeat answered (`sent` is the request it answers).
#[test]
fn classic_member_on_heartbeat_answer() {
    use kafka_proto::messages::{HeartbeatRequest, HeartbeatResponse};
    let mut m = ClassicMember::new(ClassicConfig::new("g"));
    m.on_heartbeat_answer(
        std::time::Instant::now(),
        &HeartbeatRequest::default(),
        HeartbeatResponse::default(),
    );
    assert_eq!(m.state(), ClassicState::Unsubscribed);
}

// `ClassicMember::rebalance_in_progress`: True while a JoinGroup or SyncGroup is to be sent or
// awaited (Java's `rebalanceInProgress`). The generation is then about to be replaced: an offset
// commit made now fails at once without being sent (Java's `generationIfStable` is null), since
// the coordinator would refuse it (ILLEGAL_GENERATION once the join completed — and a JoinGroup
// parked for the other members holds back every later request on its connection until then — or
// REBALANCE_IN_PROGRESS before the SyncGroup).
#[test]
fn classic_member_rebalance_in_progress() {
    let mut m = ClassicMember::new(ClassicConfig::new("g"));
    assert!(!m.rebalance_in_progress());
    m.subscribe(["t".to_string()]);
    assert!(m.rebalance_in_progress(), "joining");
}

// `ClassicMember::on_commit_refused`: An OffsetCommit sent with `generation` and `member_id` was
// refused with `error`; returns the error to report to the application, as Java's
// `OffsetCommitResponseHandler` decides:
#[test]
fn classic_member_on_commit_refused() {
    use kafka_proto::ErrorCode;
    let mut m = subscribed();
    let now = std::time::Instant::now();
    assert_eq!(
        m.on_commit_refused(now, 3, "m-1", ErrorCode::IllegalGeneration),
        ErrorCode::RebalanceInProgress,
        "a commit racing the member's own rejoin"
    );
}

// `ClassicMember::on_request_failure`: The request got no answer (transport failure or timeout):
// the coordinator is looked up again; a join or sync starts over.
#[test]
fn classic_member_on_request_failure() {
    let mut m = subscribed();
    m.coordinator_found();
    let now = std::time::Instant::now();
    let join = m.poll_request(now).unwrap();
    m.on_request_failure(now, &join);
    assert!(m.needs_coordinator());
    assert_eq!(m.state(), ClassicState::Joining);
}

// `ClassicMember::is_leader`: True when this member assigned the partitions of the current
// generation.
#[test]
fn classic_member_is_leader() {
    assert!(!ClassicMember::new(ClassicConfig::new("g")).is_leader());
}

// `ClassicMember::check_metadata`: The leader compares the partition counts of the members' topics
// with those it assigned from, and rejoins when one changed (partitions added, a topic created or
// deleted), as Java's `ConsumerCoordinator` does; a follower ignores this. Returns true when a
// rejoin started.
#[test]
fn classic_member_check_metadata() {
    let mut m = ClassicMember::new(ClassicConfig::new("g"));
    assert!(!m.check_metadata(&|_| Some(4)), "not the leader");
}

// `ClassicMember::revocation_done`: The application confirmed the last `ClassicAction::Revoke`.
// Returns false when no revocation was pending.
#[test]
fn classic_member_revocation_done() {
    assert!(!ClassicMember::new(ClassicConfig::new("g")).revocation_done());
}

// `ClassicMember::assignment_done`: The application confirmed the last `ClassicAction::Assign`.
// Returns false when no assignment was pending.
#[test]
fn classic_member_assignment_done() {
    assert!(!ClassicMember::new(ClassicConfig::new("g")).assignment_done());
}

// `ClassicMember::lost_done`: The application confirmed the last `ClassicAction::Lost`; the member
// rejoins (a stale one waits for `rejoin`).
#[test]
fn classic_member_lost_done() {
    assert!(!ClassicMember::new(ClassicConfig::new("g")).lost_done());
}

// `ClassicMember::poll_timeout_expired`: `max.poll.interval.ms` passed without a poll: the owned
// partitions are lost and a dynamic member leaves (the LeaveGroup to send is returned); the member
// rejoins at the next `rejoin`.
#[test]
fn classic_member_poll_timeout_expired() {
    let mut m = subscribed();
    assert!(
        m.poll_timeout_expired().is_none(),
        "no member id yet: nothing to leave"
    );
    assert_eq!(m.state(), ClassicState::Stale);
}

// `ClassicMember::rejoin`: The application polled again after a poll timeout: join anew.
#[test]
fn classic_member_rejoin() {
    assert!(
        !ClassicMember::new(ClassicConfig::new("g")).rejoin(),
        "not stale"
    );
}

// `ClassicMember::leave`: Close: a dynamic member sends LeaveGroup next; a static one just stops
// (Java's `maybeLeaveGroup`).
#[test]
fn classic_member_leave() {
    let mut m = subscribed();
    m.leave();
    assert!(
        m.poll_request(std::time::Instant::now()).is_none(),
        "no member id: nothing to send"
    );
    assert_eq!(m.state(), ClassicState::Unsubscribed);
}

/// Java's defaults: a 45 s session, a heartbeat every 3 s, range then
/// cooperative-sticky.
#[test]
fn classic_config_defaults_are_javas() {
    let c = ClassicConfig::new("orders-app");
    assert_eq!(c.session_timeout, Duration::from_secs(45));
    assert_eq!(c.heartbeat_interval, Duration::from_secs(3));
    assert_eq!(c.assignors, Assignor::DEFAULT);
}

/// A stable cooperative member whose subscription drops its topic revokes
/// that topic's partitions before it rejoins, and the JoinGroup carries
/// the new topics (Java's `onJoinPrepare` for COOPERATIVE).
#[test]
fn a_cooperative_member_revokes_unsubscribed_topics_then_rejoins() {
    let mut m = stable(&[Assignor::CooperativeSticky], &[0, 1]);
    m.subscribe(["u".to_string()]);
    assert_eq!(m.poll_action(), Some(ClassicAction::Revoke(tps(&[0, 1]))));
    assert_eq!(m.state(), ClassicState::PrepareJoin);
    assert!(m.revocation_done());
    assert_eq!(m.state(), ClassicState::Joining);
    let join = join_req(&mut m);
    let (_, sub) =
        ConsumerProtocolSubscription::decode_prefixed(&join.protocols[0].metadata).unwrap();
    assert_eq!(sub.topics, ["u"]);
    assert_eq!(join.reason.as_deref(), Some("the subscription changed"));
}

/// A cooperative member that adds a topic keeps what it owns and rejoins
/// at once; an unchanged subscription does not rejoin.
#[test]
fn a_cooperative_member_adding_a_topic_keeps_its_partitions() {
    let mut m = stable(&[Assignor::CooperativeSticky], &[0, 1]);
    m.subscribe(["t".to_string()]);
    assert_eq!(m.state(), ClassicState::Stable, "same subscription");
    m.subscribe(["t".to_string(), "u".to_string()]);
    assert_eq!(m.poll_action(), None, "nothing revoked");
    assert_eq!(m.state(), ClassicState::Joining);
    assert_eq!(m.owned().len(), 1);
}

/// A subscription changed while a JoinGroup with the old one is in flight
/// makes the member rejoin once that rebalance completes, and the
/// assignment it completes keeps only the topics still subscribed.
#[test]
fn a_subscription_changed_during_a_join_rejoins_after_it() {
    let mut m = joining(&[Assignor::CooperativeSticky]);
    join_req(&mut m);
    m.subscribe(["t".to_string(), "u".to_string()]);
    m.on_join_answer(
        now(),
        JoinGroupResponse {
            generation_id: 1,
            protocol_name: Some("cooperative-sticky".into()),
            leader: "other".into(),
            member_id: "me".into(),
            ..Default::default()
        },
        &|_| None,
    );
    synced(&mut m, &[0]);
    assert_eq!(m.poll_action(), Some(ClassicAction::Assign(tps(&[0]))));
    assert!(m.assignment_done());
    assert_eq!(
        m.state(),
        ClassicState::Joining,
        "rejoined for the new topic"
    );
}
