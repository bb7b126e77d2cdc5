//! The KIP-848 member against scripted answers. The expected behaviour is
//! taken from Java's `ConsumerMembershipManager` /
//! `AbstractHeartbeatRequestManager` and the group coordinator's rules, not
//! from this implementation's tables.

use super::*;
use proptest::prelude::*;

const A: Uuid = [1; 16];
const B: Uuid = [2; 16];
const INTERVAL: Duration = Duration::from_secs(5);

fn tp(entries: &[(Uuid, &[i32])]) -> TopicPartitions {
    entries
        .iter()
        .map(|(id, p)| (*id, p.iter().copied().collect()))
        .collect()
}

/// A member subscribed to "a" and "b" whose coordinator is known.
fn subscribed(config: Kip848Config) -> Kip848Member {
    let mut m = Kip848Member::new(config);
    m.subscribe(["a".to_string(), "b".to_string()]);
    m.coordinator_found();
    m
}

/// A member subscribed to `t` whose join heartbeat is in flight.
fn heartbeating() -> (Kip848Member, Instant) {
    let mut m = Kip848Member::new(Kip848Config::new("g", "m"));
    m.subscribe(["t".to_string()]);
    m.coordinator_found();
    let now = Instant::now();
    m.poll_heartbeat(now).expect("join");
    (m, now)
}

/// A member that joined at `epoch` and owns `owned` (acknowledged).
fn joined(owned: TopicPartitions, epoch: i32, now: Instant) -> Kip848Member {
    let mut m = subscribed(Kip848Config::new("g", "m-1"));
    m.poll_heartbeat(now).expect("join");
    m.on_heartbeat_answer(
        now,
        HeartbeatAnswer::ok(epoch, INTERVAL, Some(owned.clone())),
    );
    m.reconcile(&|_| true);
    if !owned.is_empty() {
        assert!(matches!(m.poll_action(), Some(Kip848Action::Assign { .. })));
        assert!(m.assignment_done());
        let ack = m.poll_heartbeat(now).expect("ack");
        assert_eq!(ack.topic_partitions, Some(flatten(&owned)));
        m.on_heartbeat_answer(now, HeartbeatAnswer::ok(epoch, INTERVAL, None));
    }
    assert_eq!(m.state(), MemberState::Stable);
    assert_eq!(m.poll_action(), None);
    m
}

/// Java's join heartbeat: epoch 0, every field set, owned partitions an
/// empty list; the next heartbeat sends only the epoch and ids.
#[test]
fn join_is_full_then_heartbeats_send_only_changes() {
    let now = Instant::now();
    let mut config = Kip848Config::new("g", "m-1").instance_id("i-1");
    config.rack_id = Some("r1".into());
    config.server_assignor = Some("uniform".into());
    let mut m = subscribed(config);
    let join = m.poll_heartbeat(now).unwrap();
    assert_eq!(
        join,
        Heartbeat {
            group_id: "g".into(),
            member_id: "m-1".into(),
            member_epoch: 0,
            instance_id: Some("i-1".into()),
            rack_id: Some("r1".into()),
            rebalance_timeout_ms: 300_000,
            subscribed_topic_names: Some(vec!["a".into(), "b".into()]),
            subscribed_topic_regex: None,
            server_assignor: Some("uniform".into()),
            topic_partitions: Some(vec![]),
        }
    );
    m.on_heartbeat_answer(now, HeartbeatAnswer::ok(1, INTERVAL, None));
    assert!(m.poll_heartbeat(now).is_none(), "not before the interval");
    let next = m.poll_heartbeat(now + INTERVAL).unwrap();
    assert_eq!(next.member_epoch, 1);
    assert_eq!(
        next.instance_id.as_deref(),
        Some("i-1"),
        "always when configured"
    );
    assert_eq!(next.rack_id, None);
    assert_eq!(next.rebalance_timeout_ms, -1);
    assert_eq!(next.subscribed_topic_names, None);
    assert_eq!(next.server_assignor, None);
    assert_eq!(next.topic_partitions, None);
}

/// A subscription change goes out at once, alone.
#[test]
fn a_new_subscription_is_sent_at_once() {
    let now = Instant::now();
    let mut m = joined(TopicPartitions::new(), 1, now);
    m.subscribe(["c".to_string()]);
    let hb = m.poll_heartbeat(now).expect("at once");
    assert_eq!(hb.subscribed_topic_names, Some(vec!["c".to_string()]));
    assert_eq!(hb.topic_partitions, None);
}

/// Invariant: a partition moves to its new owner only after the old one
/// dropped it — revoked partitions are released (callback confirmed) before
/// the new ones are assigned, and the new owned set is acknowledged only
/// after both callbacks.
#[test]
fn revocation_runs_before_assignment_and_the_ack_follows_both() {
    let now = Instant::now();
    let mut m = joined(tp(&[(A, &[0, 1])]), 3, now);
    let t1 = now + INTERVAL;
    m.poll_heartbeat(t1).unwrap();
    m.on_heartbeat_answer(
        t1,
        HeartbeatAnswer::ok(4, INTERVAL, Some(tp(&[(A, &[1]), (B, &[0])]))),
    );
    m.reconcile(&|_| true);
    assert_eq!(m.state(), MemberState::Reconciling);
    assert_eq!(
        m.poll_action(),
        Some(Kip848Action::Revoke(tp(&[(A, &[0])])))
    );
    assert_eq!(
        m.poll_action(),
        None,
        "nothing assigned before the revocation"
    );
    // A heartbeat while the application revokes still reports nothing new.
    let t2 = t1 + INTERVAL;
    let during = m.poll_heartbeat(t2).unwrap();
    assert_eq!(during.topic_partitions, None);
    m.on_heartbeat_answer(t2, HeartbeatAnswer::ok(4, INTERVAL, None));
    assert!(!m.assignment_done(), "the assignment step has not started");
    assert!(m.revocation_done());
    assert_eq!(
        m.poll_action(),
        Some(Kip848Action::Assign {
            added: tp(&[(B, &[0])]),
            assignment: tp(&[(A, &[1]), (B, &[0])]),
        })
    );
    assert!(m.assignment_done());
    assert_eq!(m.state(), MemberState::Acknowledging);
    let ack = m.poll_heartbeat(t2).expect("the ack goes out at once");
    assert_eq!(ack.topic_partitions, Some(vec![(A, vec![1]), (B, vec![0])]));
    assert_eq!(ack.member_epoch, 4);
    m.on_heartbeat_answer(t2, HeartbeatAnswer::ok(4, INTERVAL, None));
    assert_eq!(m.state(), MemberState::Stable);
}

/// Java calls `onPartitionsAssigned` even when nothing was added (only
/// revocations), and acknowledges after it.
#[test]
fn a_revocation_only_reconciliation_still_confirms_an_empty_assignment() {
    let now = Instant::now();
    let mut m = joined(tp(&[(A, &[0, 1])]), 3, now);
    m.poll_heartbeat(now + INTERVAL).unwrap();
    m.on_heartbeat_answer(
        now,
        HeartbeatAnswer::ok(4, INTERVAL, Some(tp(&[(A, &[1])]))),
    );
    m.reconcile(&|_| true);
    assert_eq!(
        m.poll_action(),
        Some(Kip848Action::Revoke(tp(&[(A, &[0])])))
    );
    assert!(m.revocation_done());
    assert_eq!(
        m.poll_action(),
        Some(Kip848Action::Assign {
            added: TopicPartitions::new(),
            assignment: tp(&[(A, &[1])]),
        })
    );
}

/// One reconciliation at a time: a newer target received meanwhile waits
/// for the acknowledgement of the current one.
#[test]
fn a_newer_target_waits_for_the_running_reconciliation() {
    let now = Instant::now();
    let mut m = joined(TopicPartitions::new(), 1, now);
    m.poll_heartbeat(now + INTERVAL).unwrap();
    m.on_heartbeat_answer(
        now,
        HeartbeatAnswer::ok(2, INTERVAL, Some(tp(&[(A, &[0])]))),
    );
    m.reconcile(&|_| true);
    assert!(matches!(m.poll_action(), Some(Kip848Action::Assign { .. })));
    // The next answer already moves the target on.
    m.poll_heartbeat(now + 2 * INTERVAL).unwrap();
    m.on_heartbeat_answer(
        now,
        HeartbeatAnswer::ok(3, INTERVAL, Some(tp(&[(A, &[0, 1])]))),
    );
    m.reconcile(&|_| true);
    assert_eq!(m.poll_action(), None, "no second reconciliation");
    assert!(m.assignment_done());
    assert_eq!(m.owned(), &tp(&[(A, &[0])]));
    let ack = m.poll_heartbeat(now).unwrap();
    assert_eq!(ack.topic_partitions, Some(vec![(A, vec![0])]));
    m.on_heartbeat_answer(now, HeartbeatAnswer::ok(3, INTERVAL, None));
    m.reconcile(&|_| true);
    assert_eq!(
        m.poll_action(),
        Some(Kip848Action::Assign {
            added: tp(&[(A, &[1])]),
            assignment: tp(&[(A, &[0, 1])]),
        })
    );
}

/// FENCED_MEMBER_EPOCH and UNKNOWN_MEMBER_ID: every partition is lost (no
/// commit possible), then the member rejoins at epoch 0 with the same id
/// and an empty owned list.
#[test]
fn a_fenced_member_loses_everything_and_rejoins_with_the_same_id() {
    for error in [ErrorCode::FencedMemberEpoch, ErrorCode::UnknownMemberId] {
        let now = Instant::now();
        let mut m = joined(tp(&[(A, &[0])]), 5, now);
        m.poll_heartbeat(now + INTERVAL).unwrap();
        m.on_heartbeat_answer(now, HeartbeatAnswer::error(error));
        assert_eq!(m.state(), MemberState::Fenced);
        assert_eq!(m.poll_action(), Some(Kip848Action::Lost(tp(&[(A, &[0])]))));
        assert!(
            m.poll_heartbeat(now + 10 * INTERVAL).is_none(),
            "no heartbeat until the lost callback ran"
        );
        assert!(m.lost_done());
        assert_eq!(m.state(), MemberState::Joining);
        let join = m.poll_heartbeat(now).expect("rejoin at once");
        assert_eq!((join.member_epoch, join.member_id.as_str()), (0, "m-1"));
        assert_eq!(join.topic_partitions, Some(vec![]));
        assert!(join.subscribed_topic_names.is_some() && join.rebalance_timeout_ms > 0);
    }
}

/// A fence during a revocation: the partitions being revoked are released
/// by that revocation, the rest are lost; each partition is released once,
/// and the revocation's late completion starts nothing.
#[test]
fn a_fence_during_reconciliation_abandons_it() {
    let now = Instant::now();
    let mut m = joined(tp(&[(A, &[0, 1])]), 3, now);
    m.poll_heartbeat(now + INTERVAL).unwrap();
    m.on_heartbeat_answer(
        now,
        HeartbeatAnswer::ok(4, INTERVAL, Some(tp(&[(A, &[1])]))),
    );
    m.reconcile(&|_| true);
    assert!(matches!(m.poll_action(), Some(Kip848Action::Revoke(_))));
    m.poll_heartbeat(now + 2 * INTERVAL).unwrap();
    m.on_heartbeat_answer(now, HeartbeatAnswer::error(ErrorCode::FencedMemberEpoch));
    assert_eq!(m.poll_action(), Some(Kip848Action::Lost(tp(&[(A, &[1])]))));
    assert!(
        !m.revocation_done(),
        "the abandoned revocation completes nothing"
    );
    assert_eq!(m.poll_action(), None, "no assignment step follows");
    assert!(m.lost_done());
    assert_eq!(m.state(), MemberState::Joining);
}

/// NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE: find the coordinator, send
/// nothing meanwhile, then a full heartbeat at once.
#[test]
fn coordinator_errors_find_the_coordinator_then_send_a_full_heartbeat() {
    for error in [
        ErrorCode::NotCoordinator,
        ErrorCode::CoordinatorNotAvailable,
    ] {
        let now = Instant::now();
        let mut m = joined(tp(&[(A, &[0])]), 2, now);
        m.poll_heartbeat(now + INTERVAL).unwrap();
        m.on_heartbeat_answer(now, HeartbeatAnswer::error(error));
        assert_eq!(m.poll_action(), Some(Kip848Action::FindCoordinator));
        assert!(m.poll_heartbeat(now + 10 * INTERVAL).is_none());
        m.coordinator_found();
        let full = m.poll_heartbeat(now).expect("at once");
        assert_eq!(full.member_epoch, 2);
        assert_eq!(full.topic_partitions, Some(vec![(A, vec![0])]));
        assert_eq!(full.rebalance_timeout_ms, 300_000);
        assert!(full.subscribed_topic_names.is_some());
        assert_eq!(m.state(), MemberState::Stable);
    }
}

/// COORDINATOR_LOAD_IN_PROGRESS and transport failures back off
/// exponentially (retry.backoff.ms doubling, capped at retry.backoff.max.ms).
#[test]
fn retriable_failures_back_off_exponentially() {
    let now = Instant::now();
    let mut m = subscribed(Kip848Config::new("g", "m"));
    let mut at = now;
    let mut pauses = Vec::new();
    for _ in 0..6 {
        m.poll_heartbeat(at).expect("due");
        m.on_heartbeat_answer(
            at,
            HeartbeatAnswer::error(ErrorCode::CoordinatorLoadInProgress),
        );
        let next = m.next_heartbeat_at().unwrap();
        pauses.push(next - at);
        assert!(m.poll_heartbeat(next - Duration::from_millis(1)).is_none());
        at = next;
    }
    let ms: Vec<u128> = pauses.iter().map(|p| p.as_millis()).collect();
    assert_eq!(ms, [100, 200, 400, 800, 1000, 1000]);
    m.poll_heartbeat(at).unwrap();
    m.on_heartbeat_failure(at);
    assert_eq!(m.poll_action(), Some(Kip848Action::FindCoordinator));
}

/// The errors Java's heartbeat manager treats as fatal (the reference table
/// of KIP-848 heartbeat errors): the member stops, its partitions are lost,
/// and it sends nothing more.
#[test]
fn fatal_heartbeat_errors_stop_the_member() {
    for error in [
        ErrorCode::GroupMaxSizeReached,
        ErrorCode::UnsupportedAssignor,
        ErrorCode::InvalidRequest,
        ErrorCode::InvalidRegularExpression,
        ErrorCode::GroupAuthorizationFailed,
        ErrorCode::UnreleasedInstanceId,
        ErrorCode::FencedInstanceId,
        ErrorCode::UnsupportedVersion,
        ErrorCode::GroupIdNotFound,
        ErrorCode::UnknownServerError,
    ] {
        let now = Instant::now();
        let mut m = joined(tp(&[(A, &[0])]), 2, now);
        m.poll_heartbeat(now + INTERVAL).unwrap();
        m.on_heartbeat_answer(now, HeartbeatAnswer::error(error));
        assert_eq!(m.state(), MemberState::Fatal, "{error:?}");
        assert_eq!(m.poll_action(), Some(Kip848Action::Lost(tp(&[(A, &[0])]))));
        assert!(matches!(m.poll_action(), Some(Kip848Action::Fatal(e)) if e.error == error));
        assert!(m.poll_heartbeat(now + 100 * INTERVAL).is_none());
        assert!(m.next_heartbeat_at().is_none());
    }
}

/// TOPIC_AUTHORIZATION_FAILED is reported but the member stays (it recovers
/// when the ACLs are fixed).
#[test]
fn topic_authorization_failure_is_reported_without_leaving() {
    let now = Instant::now();
    let mut m = joined(tp(&[(A, &[0])]), 2, now);
    m.poll_heartbeat(now + INTERVAL).unwrap();
    m.on_heartbeat_answer(
        now,
        HeartbeatAnswer::error(ErrorCode::TopicAuthorizationFailed),
    );
    assert!(
        matches!(m.poll_action(), Some(Kip848Action::Error(e)) if e.error == ErrorCode::TopicAuthorizationFailed)
    );
    assert_eq!(m.state(), MemberState::Stable);
    assert_eq!(m.owned(), &tp(&[(A, &[0])]));
    let retry = m.poll_heartbeat(now + INTERVAL).expect("heartbeats go on");
    assert!(
        retry.subscribed_topic_names.is_some(),
        "full after an error"
    );
}

/// A missed `max.poll.interval.ms`: leave (epoch -1; -2 for a static
/// member), lose everything, rejoin at epoch 0 when the application polls.
#[test]
fn poll_timeout_leaves_loses_and_rejoins_on_the_next_poll() {
    let now = Instant::now();
    let mut m = joined(tp(&[(A, &[0])]), 7, now);
    let leave = m.poll_timeout_expired().expect("leave heartbeat");
    assert_eq!((leave.member_epoch, leave.member_id.as_str()), (-1, "m-1"));
    assert_eq!(m.state(), MemberState::Stale);
    assert_eq!(m.poll_action(), Some(Kip848Action::Lost(tp(&[(A, &[0])]))));
    assert!(m.poll_heartbeat(now + 100 * INTERVAL).is_none());
    assert!(!m.rejoin(), "not before the lost callback ran");
    assert!(m.lost_done());
    assert!(m.rejoin());
    assert_eq!(m.poll_heartbeat(now).unwrap().member_epoch, 0);

    let mut s = subscribed(Kip848Config::new("g", "m-2").instance_id("static-1"));
    s.poll_heartbeat(now).unwrap();
    s.on_heartbeat_answer(now, HeartbeatAnswer::ok(1, INTERVAL, None));
    assert_eq!(s.poll_timeout_expired().unwrap().member_epoch, -2);
}

/// Unsubscribe/close while owning partitions: revoke (so the application
/// can commit), then one leave heartbeat; nothing after it.
#[test]
fn leave_revokes_then_sends_one_leave_heartbeat() {
    let now = Instant::now();
    let mut m = joined(tp(&[(A, &[0]), (B, &[3])]), 4, now);
    m.leave();
    assert_eq!(m.state(), MemberState::PrepareLeaving);
    assert_eq!(
        m.poll_action(),
        Some(Kip848Action::Revoke(tp(&[(A, &[0]), (B, &[3])])))
    );
    assert!(
        m.poll_heartbeat(now).is_none(),
        "the leave waits for the revocation"
    );
    assert!(m.revocation_done());
    let leave = m.poll_heartbeat(now).expect("leave at once");
    assert_eq!(leave.member_epoch, -1);
    assert_eq!(m.state(), MemberState::Unsubscribed);
    assert!(m.owned().is_empty());
    assert!(m.poll_heartbeat(now + 100 * INTERVAL).is_none());
}

/// Topic ids the driver cannot name yet are asked for once; the known ones
/// are reconciled meanwhile, the rest when they become known.
#[test]
fn unknown_topic_ids_are_resolved_before_their_partitions_are_assigned() {
    let now = Instant::now();
    let mut m = joined(TopicPartitions::new(), 1, now);
    m.poll_heartbeat(now + INTERVAL).unwrap();
    m.on_heartbeat_answer(
        now,
        HeartbeatAnswer::ok(2, INTERVAL, Some(tp(&[(A, &[0]), (B, &[1])]))),
    );
    m.reconcile(&|id| *id == A);
    assert_eq!(m.poll_action(), Some(Kip848Action::ResolveTopics(vec![B])));
    assert_eq!(
        m.poll_action(),
        Some(Kip848Action::Assign {
            added: tp(&[(A, &[0])]),
            assignment: tp(&[(A, &[0])]),
        })
    );
    assert!(m.assignment_done());
    m.poll_heartbeat(now).unwrap();
    m.on_heartbeat_answer(now, HeartbeatAnswer::ok(2, INTERVAL, None));
    m.reconcile(&|id| *id == A);
    assert_eq!(m.poll_action(), None, "B is asked for once");
    m.reconcile(&|_| true);
    assert_eq!(
        m.poll_action(),
        Some(Kip848Action::Assign {
            added: tp(&[(B, &[1])]),
            assignment: tp(&[(A, &[0]), (B, &[1])]),
        })
    );
}

/// One step of a random schedule.
#[derive(Debug, Clone)]
enum Op {
    /// The broker answers the heartbeat in flight (if any) with this target
    /// (bit i = partition i of topic A or B) or with an error.
    Answer(Option<(u8, u8)>, Option<i16>),
    /// The application completes the oldest pending callback.
    Callback,
    /// Time passes by one interval.
    Tick,
    /// The heartbeat in flight fails in transport.
    TransportFailure,
    /// The coordinator is found again.
    CoordinatorFound,
    /// The application misses max.poll.interval.ms, or polls again.
    PollTimeout,
    Rejoin,
}

fn op() -> impl Strategy<Value = Op> {
    let errors = prop_oneof![
        Just(ErrorCode::FencedMemberEpoch.code()),
        Just(ErrorCode::UnknownMemberId.code()),
        Just(ErrorCode::NotCoordinator.code()),
        Just(ErrorCode::CoordinatorLoadInProgress.code()),
        Just(ErrorCode::TopicAuthorizationFailed.code()),
    ];
    prop_oneof![
        4 => (proptest::option::of((0u8..16, 0u8..16)), proptest::option::weighted(0.15, errors)).prop_map(|(t, e)| Op::Answer(t, e)),
        4 => Just(Op::Callback),
        3 => Just(Op::Tick),
        1 => Just(Op::TransportFailure),
        2 => Just(Op::CoordinatorFound),
        1 => Just(Op::PollTimeout),
        1 => Just(Op::Rejoin),
    ]
}

fn bits(mask: u8) -> BTreeSet<i32> {
    (0..4).filter(|i| mask & (1 << i) != 0).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Invariants over random schedules of answers, errors, callbacks and
    /// time (no fatal error):
    /// - the application never holds a partition twice: an Assign adds only
    ///   partitions it does not hold, a Revoke or Lost names only ones it holds;
    /// - every owned set a heartbeat reports is exactly what the application
    ///   holds (after its confirmed callbacks);
    /// - a joining heartbeat reports an empty owned list, at epoch 0.
    #[test]
    fn the_application_and_the_reported_assignment_agree(ops in proptest::collection::vec(op(), 1..120)) {
        let mut now = Instant::now();
        let mut m = subscribed(Kip848Config::new("g", "m"));
        let mut held = TopicPartitions::new();
        let mut pending: VecDeque<Kip848Action> = VecDeque::new();
        let mut in_flight = false;
        let mut epoch = 0;
        for op in ops {
            match op {
                Op::Answer(target, error) => {
                    if in_flight {
                        in_flight = false;
                        let answer = match error {
                            Some(code) => HeartbeatAnswer::error(ErrorCode::from(code)),
                            None => {
                                epoch += 1;
                                let t = target.map(|(a, b)| {
                                    let mut t = TopicPartitions::new();
                                    t.insert(A, bits(a));
                                    t.insert(B, bits(b));
                                    t.retain(|_, p| !p.is_empty());
                                    t
                                });
                                HeartbeatAnswer::ok(epoch, INTERVAL, t)
                            }
                        };
                        m.on_heartbeat_answer(now, answer);
                    }
                }
                Op::Callback => {
                    if let Some(a) = pending.pop_front() {
                        match a {
                            Kip848Action::Revoke(_) => { m.revocation_done(); }
                            Kip848Action::Assign { .. } => { m.assignment_done(); }
                            Kip848Action::Lost(_) => { m.lost_done(); }
                            _ => {}
                        }
                    }
                }
                Op::Tick => now += INTERVAL,
                Op::TransportFailure => {
                    if in_flight {
                        in_flight = false;
                        m.on_heartbeat_failure(now);
                    }
                }
                Op::CoordinatorFound => m.coordinator_found(),
                Op::PollTimeout => {
                    if m.poll_timeout_expired().is_some() || m.state() == MemberState::Stale {
                        in_flight = false;
                    }
                }
                Op::Rejoin => { m.rejoin(); }
            }
            m.reconcile(&|_| true);
            while let Some(a) = m.poll_action() {
                match &a {
                    Kip848Action::Assign { added, assignment } => {
                        for (id, parts) in added {
                            for p in parts {
                                prop_assert!(!held.get(id).is_some_and(|h| h.contains(p)), "assigned twice: {p}");
                            }
                        }
                        held = assignment.clone();
                        pending.push_back(a);
                    }
                    Kip848Action::Revoke(r) | Kip848Action::Lost(r) => {
                        for (id, parts) in r {
                            for p in parts {
                                prop_assert!(held.get(id).is_some_and(|h| h.contains(p)), "released a partition not held: {p}");
                            }
                        }
                        for (id, parts) in r {
                            if let Some(h) = held.get_mut(id) {
                                h.retain(|p| !parts.contains(p));
                            }
                        }
                        held.retain(|_, p| !p.is_empty());
                        pending.push_back(a);
                    }
                    Kip848Action::Fatal(e) => prop_assert!(false, "unexpected fatal {e}"),
                    _ => {}
                }
            }
            if pending.is_empty() {
                prop_assert_eq!(m.owned(), &held);
            }
            let sent = if in_flight { None } else { m.poll_heartbeat(now) };
            if let Some(hb) = sent {
                in_flight = hb.member_epoch >= 0;
                if hb.member_epoch == 0 {
                    prop_assert_eq!(hb.topic_partitions.clone(), Some(vec![]));
                }
                if let Some(reported) = hb.topic_partitions.as_ref().filter(|_| hb.member_epoch > 0 && pending.is_empty()) {
                    prop_assert_eq!(reported, &flatten(&held));
                }
            }
        }
    }
}

// The walkthroughs of the public methods, once their doc examples: each
// drives the machine through the documented behaviour of one item.

// `MemberState`: Where the member is (see the module's state diagram).
#[test]
fn member_state() {
    let m = Kip848Member::new(Kip848Config::new("g", "m"));
    assert_eq!(m.state(), MemberState::Unsubscribed);
    assert!(!MemberState::Unsubscribed.is_member());
    assert!(MemberState::Stable.is_member());
}

// `MemberState::is_member`: True in the states where the member holds an epoch from the broker.
#[test]
fn member_state_is_member() {
    assert!(MemberState::Reconciling.is_member());
    assert!(!MemberState::Joining.is_member());
}

// `Transition`: Why the state changed: the input that caused it.
#[test]
fn transition() {
    assert_ne!(Transition::Subscribed, Transition::Joined);
}

// `Kip848Action`: What the driver must do next, in order.
#[test]
fn kip848_action() {
    let a = Kip848Action::FindCoordinator;
    assert!(matches!(a, Kip848Action::FindCoordinator));
}

// `Kip848Config::instance_id`: Sets `group.instance.id`.
#[test]
fn membership_config_instance_id() {
    assert!(
        Kip848Config::new("g", "m")
            .instance_id("i")
            .instance_id
            .is_some()
    );
}

// `HeartbeatAnswer::ok`: A successful answer.
#[test]
fn heartbeat_answer_ok() {
    let a = HeartbeatAnswer::ok(4, std::time::Duration::from_secs(5), None);
    assert!(a.error.is_ok());
}

// `HeartbeatAnswer::error`: An error answer.
#[test]
fn heartbeat_answer_error() {
    use kafka_proto::ErrorCode;
    assert_eq!(
        HeartbeatAnswer::error(ErrorCode::NotCoordinator).error,
        ErrorCode::NotCoordinator
    );
}

// `Kip848Member::state`: The state.
#[test]
fn kip848_member_state() {
    assert_eq!(
        Kip848Member::new(Kip848Config::new("g", "m")).state(),
        MemberState::Unsubscribed
    );
}

// `Kip848Member::epoch`: The member epoch (0 before joining).
#[test]
fn kip848_member_epoch() {
    assert_eq!(Kip848Member::new(Kip848Config::new("g", "m")).epoch(), 0);
}

// `Kip848Member::member_id`: The member id.
#[test]
fn kip848_member_member_id() {
    assert_eq!(
        Kip848Member::new(Kip848Config::new("g", "m-1")).member_id(),
        "m-1"
    );
}

// `Kip848Member::owned`: The partitions the member owns (acknowledged or being acknowledged).
#[test]
fn kip848_member_owned() {
    assert!(
        Kip848Member::new(Kip848Config::new("g", "m"))
            .owned()
            .is_empty()
    );
}

// `Kip848Member::poll_action`: The next action for the driver, in order.
#[test]
fn kip848_member_poll_action() {
    assert!(
        Kip848Member::new(Kip848Config::new("g", "m"))
            .poll_action()
            .is_none()
    );
}

// `Kip848Member::subscribe`: Subscribes to `topics` (replacing the subscription): joins when not a
// member; a member sends the new subscription at once.
#[test]
fn kip848_member_subscribe() {
    let mut m = Kip848Member::new(Kip848Config::new("g", "m"));
    m.subscribe(["t".to_string()]);
    assert_eq!(m.state(), MemberState::Joining);
}

// `Kip848Member::coordinator_found`: The group coordinator is known (again): a join,
// acknowledgement or leave waiting for it goes out at once.
#[test]
fn kip848_member_coordinator_found() {
    let mut m = Kip848Member::new(Kip848Config::new("g", "m"));
    m.subscribe(["t".to_string()]);
    m.coordinator_found();
    assert!(m.poll_heartbeat(std::time::Instant::now()).is_some());
}

// `Kip848Member::next_heartbeat_at`: When the driver should call `poll_heartbeat` next, if a
// heartbeat is scheduled; `Some(past)` means now.
#[test]
fn kip848_member_next_heartbeat_at() {
    let m = Kip848Member::new(Kip848Config::new("g", "m"));
    assert!(m.next_heartbeat_at().is_none());
}

// `Kip848Member::poll_heartbeat`: The heartbeat to send now, if one is due. The driver sends it
// and reports the answer with `on_heartbeat_answer` or the failure with `on_heartbeat_failure` (a
// leave heartbeat's answer is not needed).
#[test]
fn kip848_member_poll_heartbeat() {
    let mut m = Kip848Member::new(Kip848Config::new("g", "m"));
    m.subscribe(["t".to_string()]);
    m.coordinator_found();
    let now = std::time::Instant::now();
    assert!(m.poll_heartbeat(now).is_some());
    assert!(m.poll_heartbeat(now).is_none(), "one heartbeat in flight");
}

// `Kip848Member::on_heartbeat_failure`: The heartbeat could not be sent or its answer was lost
// (the outcome is unknown): the next one is full, after a backoff, and the coordinator is looked
// up again.
#[test]
fn kip848_member_on_heartbeat_failure() {
    let (mut m, now) = heartbeating();
    m.on_heartbeat_failure(now);
    assert_eq!(m.poll_action(), Some(Kip848Action::FindCoordinator));
}

// `Kip848Member::on_heartbeat_answer`: Applies a heartbeat answer.
#[test]
fn kip848_member_on_heartbeat_answer() {
    let (mut m, now) = heartbeating();
    m.on_heartbeat_answer(
        now,
        HeartbeatAnswer::ok(1, std::time::Duration::from_secs(5), None),
    );
    assert_eq!((m.state(), m.epoch()), (MemberState::Stable, 1));
}

// `Kip848Member::lost_done`: The driver ran the lost callback: a fenced member rejoins.
#[test]
fn kip848_member_lost_done() {
    let mut m = Kip848Member::new(Kip848Config::new("g", "m"));
    assert!(!m.lost_done(), "nothing was lost");
}

// `Kip848Member::reconcile`: Starts the next reconciliation when the target differs from what is
// owned and none is running. `known` tells which topic ids the driver can name; the others wait (a
// `Kip848Action::ResolveTopics` asks for them once).
#[test]
fn kip848_member_reconcile() {
    use std::collections::{BTreeMap, BTreeSet};
    let (mut m, now) = heartbeating();
    let target = BTreeMap::from([([9u8; 16], BTreeSet::from([0, 1]))]);
    m.on_heartbeat_answer(
        now,
        HeartbeatAnswer::ok(1, std::time::Duration::from_secs(5), Some(target)),
    );
    m.reconcile(&|_| false);
    assert_eq!(
        m.poll_action(),
        Some(Kip848Action::ResolveTopics(vec![[9u8; 16]]))
    );
}

// `Kip848Member::revocation_done`: The driver ran the revocation of the last
// `Kip848Action::Revoke` (the application committed what it wanted to): the partitions are
// dropped, and the assignment step (or the leave) follows. Returns false when no revocation was
// awaited (e.g. fenced meanwhile).
#[test]
fn kip848_member_revocation_done() {
    let mut m = Kip848Member::new(Kip848Config::new("g", "m"));
    assert!(!m.revocation_done());
}

// `Kip848Member::assignment_done`: The driver ran the assignment of the last
// `Kip848Action::Assign`: the new set is owned and acknowledged by a heartbeat sent at once.
// Returns false when no assignment was awaited.
#[test]
fn kip848_member_assignment_done() {
    let mut m = Kip848Member::new(Kip848Config::new("g", "m"));
    assert!(!m.assignment_done());
}

// `Kip848Member::poll_timeout_expired`: `max.poll.interval.ms` passed without a poll: the member
// leaves (the leave heartbeat goes out at once), loses its partitions and waits for `rejoin`.
#[test]
fn kip848_member_poll_timeout_expired() {
    let (mut m, now) = heartbeating();
    m.on_heartbeat_answer(
        now,
        HeartbeatAnswer::ok(2, std::time::Duration::from_secs(5), None),
    );
    let leave = m.poll_timeout_expired().expect("a leave heartbeat");
    assert_eq!(leave.member_epoch, -1);
    assert_eq!(m.state(), MemberState::Stale);
}

// `Kip848Member::rejoin`: The application polled again after a poll timeout: join anew.
#[test]
fn kip848_member_rejoin() {
    let mut m = Kip848Member::new(Kip848Config::new("g", "m"));
    assert!(!m.rejoin(), "not stale");
}

// `Kip848Member::leave`: Unsubscribe or close: a member revokes what it owns (so the application
// can commit), then sends the leave heartbeat; a member not yet joined leaves at once.
#[test]
fn kip848_member_leave() {
    let mut m = Kip848Member::new(Kip848Config::new("g", "m"));
    m.subscribe(["t".to_string()]);
    m.leave();
    assert_eq!(
        m.state(),
        MemberState::Unsubscribed,
        "never joined: nothing to send"
    );
}

/// Java's defaults: a 300 s rebalance timeout (`max.poll.interval.ms`), no
/// static membership.
#[test]
fn kip848_config_defaults_are_javas() {
    let c = Kip848Config::new("g", "m");
    assert_eq!(c.rebalance_timeout, Duration::from_secs(300));
    assert!(c.instance_id.is_none());
}

/// A broker without KIP-848 tells the user to switch to the classic protocol.
#[test]
fn unsupported_version_hints_at_the_classic_protocol() {
    let e = MemberError {
        error: ErrorCode::UnsupportedVersion,
        message: None,
    };
    assert!(e.to_string().contains("group.protocol=classic"));
}

/// An error answer carries no epoch (-1).
#[test]
fn an_error_answer_has_no_epoch() {
    assert_eq!(
        HeartbeatAnswer::error(ErrorCode::FencedMemberEpoch).member_epoch,
        -1
    );
}

/// The subscription is sent sorted, and a joining member owns nothing.
#[test]
fn the_join_heartbeat_sends_the_subscription_sorted_and_owns_nothing() {
    let mut m = Kip848Member::new(Kip848Config::new("g", "m"));
    m.subscribe(["b".to_string(), "a".to_string()]);
    m.coordinator_found();
    let hb = m.poll_heartbeat(Instant::now()).unwrap();
    assert_eq!(
        hb.subscribed_topic_names,
        Some(vec!["a".to_string(), "b".to_string()])
    );
    assert_eq!(hb.topic_partitions, Some(vec![]));
}

/// A member subscribing by regular expression joins with the expression
/// and no names (as Java does); a later switch to names sends the names
/// with an empty expression, which clears it at the broker, and a switch
/// back sends the expression with an empty name list. Each goes out at
/// once, and only once.
#[test]
fn a_pattern_subscription_is_sent_and_switching_clears_the_other_kind() {
    let now = Instant::now();
    let mut m = Kip848Member::new(Kip848Config::new("g", "m"));
    m.subscribe_pattern("orders-.*");
    m.coordinator_found();
    let join = m.poll_heartbeat(now).expect("join");
    assert_eq!(join.subscribed_topic_regex.as_deref(), Some("orders-.*"));
    assert_eq!(join.subscribed_topic_names, None);
    m.on_heartbeat_answer(now, HeartbeatAnswer::ok(1, INTERVAL, Some(tp(&[]))));
    m.reconcile(&|_| true);
    let steady = m.poll_heartbeat(now + INTERVAL).expect("heartbeat");
    assert_eq!(steady.subscribed_topic_regex, None, "unchanged");
    m.on_heartbeat_answer(now, HeartbeatAnswer::ok(1, INTERVAL, None));

    m.subscribe(["a".to_string()]);
    let names = m.poll_heartbeat(now + INTERVAL).expect("at once");
    assert_eq!(names.subscribed_topic_names, Some(vec!["a".to_string()]));
    assert_eq!(names.subscribed_topic_regex.as_deref(), Some(""));
    m.on_heartbeat_answer(now, HeartbeatAnswer::ok(1, INTERVAL, None));

    m.subscribe_pattern("refunds-.*");
    let back = m.poll_heartbeat(now + INTERVAL).expect("at once");
    assert_eq!(back.subscribed_topic_regex.as_deref(), Some("refunds-.*"));
    assert_eq!(back.subscribed_topic_names, Some(vec![]));
    assert_eq!(m.pattern(), Some("refunds-.*"));
}

/// A member that never subscribed by expression sends none, not even an
/// empty one (brokers before v1 know no such field).
#[test]
fn a_names_only_member_never_sends_an_expression() {
    let (mut m, now) = heartbeating();
    m.on_heartbeat_answer(now, HeartbeatAnswer::ok(1, INTERVAL, Some(tp(&[]))));
    m.subscribe(["t".to_string(), "u".to_string()]);
    let hb = m.poll_heartbeat(now).expect("at once");
    assert_eq!(
        hb.subscribed_topic_names,
        Some(vec!["t".to_string(), "u".to_string()])
    );
    assert_eq!(hb.subscribed_topic_regex, None);
}
