//! Seeded faults on a kafka-mock cluster, for the exactly-once checkers'
//! mock mode: faults at exact protocol moments that a real broker makes
//! only by chance, many per schedule, each chosen from the seed.
//!
//! | kind | what |
//! |---|---|
//! | `Error` | the next 1-3 requests of one API answered with a retriable error that API can get (NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, CONCURRENT_TRANSACTIONS, ...), changing nothing |
//! | `LostAnswer` | one request applied, its answer lost: the client times out with the outcome unknown |
//! | `DisconnectAfter` | one request applied, then its connection closed before the answer |
//! | `DisconnectBefore` | one request's connection closed before it is applied |
//! | `Delay` | one request held 50 ms to twice the client's request timeout, then applied (it may land after the client gave up); InitProducerId at most half the timeout (a late one aborts a transaction begun meanwhile: a loss the sink reports, tested on its own) |
//! | `StopBroker` | a broker stopped for 0.1-1.5 s (its partitions and coordinators fail over), then restarted |
//! | `Unreachable` | a broker unreachable for 0.1-1.5 s, without a failover |
//! | `MoveLeader` | the leader of one of the schedule's partitions moved |
//! | `MoveCoordinator` | the transactional id's or the group's coordinator moved |
//! | `CutConnections` | every connection of one broker closed |

use super::nemesis::Control;
use kafka_mock::{CoordinatorKind, Fault, FaultAction, MockCluster};
use kafka_proto::{ApiKey, ErrorCode};
use kafka_testcontainers::seeded::SeededRng as Rng;
use std::collections::BTreeMap;
use std::time::Duration;

/// A kind of mock fault (see the module table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MockFaultKind {
    Error,
    LostAnswer,
    DisconnectAfter,
    DisconnectBefore,
    Delay,
    StopBroker,
    Unreachable,
    MoveLeader,
    MoveCoordinator,
    CutConnections,
}

const KINDS: [MockFaultKind; 10] = [
    MockFaultKind::Error,
    MockFaultKind::LostAnswer,
    MockFaultKind::DisconnectAfter,
    MockFaultKind::DisconnectBefore,
    MockFaultKind::Delay,
    MockFaultKind::StopBroker,
    MockFaultKind::Unreachable,
    MockFaultKind::MoveLeader,
    MockFaultKind::MoveCoordinator,
    MockFaultKind::CutConnections,
];

/// The APIs a transactional producer and its readers send.
const APIS: [ApiKey; 11] = [
    ApiKey::Produce,
    ApiKey::InitProducerId,
    ApiKey::AddPartitionsToTxn,
    ApiKey::AddOffsetsToTxn,
    ApiKey::TxnOffsetCommit,
    ApiKey::EndTxn,
    ApiKey::FindCoordinator,
    ApiKey::Metadata,
    ApiKey::Fetch,
    ApiKey::ListOffsets,
    ApiKey::OffsetFetch,
];

/// Retriable errors Kafka answers `api` with.
fn errors_for(api: ApiKey) -> &'static [ErrorCode] {
    match api {
        ApiKey::Produce => &[
            ErrorCode::NotLeaderOrFollower,
            ErrorCode::NotEnoughReplicas,
            ErrorCode::RequestTimedOut,
        ],
        ApiKey::InitProducerId
        | ApiKey::AddPartitionsToTxn
        | ApiKey::AddOffsetsToTxn
        | ApiKey::EndTxn => &[
            ErrorCode::NotCoordinator,
            ErrorCode::CoordinatorNotAvailable,
            ErrorCode::CoordinatorLoadInProgress,
            ErrorCode::ConcurrentTransactions,
        ],
        ApiKey::TxnOffsetCommit | ApiKey::OffsetFetch => &[
            ErrorCode::NotCoordinator,
            ErrorCode::CoordinatorNotAvailable,
            ErrorCode::CoordinatorLoadInProgress,
        ],
        ApiKey::FindCoordinator => &[ErrorCode::CoordinatorNotAvailable],
        ApiKey::Metadata => &[ErrorCode::LeaderNotAvailable],
        _ => &[ErrorCode::NotLeaderOrFollower],
    }
}

/// Faults injected, by kind.
pub type MockFaultCounts = BTreeMap<MockFaultKind, u64>;

async fn pause_unless_stopped(control: &Control, d: Duration) -> bool {
    let until = tokio::time::Instant::now() + d;
    while tokio::time::Instant::now() < until {
        if control.stop_requested() {
            return false;
        }
        tokio::time::sleep((until - tokio::time::Instant::now()).min(Duration::from_millis(20)))
            .await;
    }
    !control.stop_requested()
}

/// Runs seeded faults on `mock` until [`Control::heal`] is called, then
/// heals everything (queued faults dropped, brokers restarted and
/// reachable) and marks the control healed.
pub async fn run(
    mock: &MockCluster,
    control: &Control,
    seed: u64,
    request_timeout: Duration,
) -> MockFaultCounts {
    let mut rng = Rng::new(seed);
    let mut counts = MockFaultCounts::new();
    let brokers = mock.broker_ids();
    while pause_unless_stopped(control, Duration::from_millis(20 + rng.below(300))).await {
        let kind = rng.pick(&KINDS);
        let api = rng.pick(&APIS);
        let broker = rng.pick(&brokers);
        let outage = Duration::from_millis(100 + rng.below(1_400));
        let applied = match kind {
            MockFaultKind::Error => {
                let code = rng.pick(errors_for(api));
                mock.inject(
                    Fault::new(FaultAction::Error(code))
                        .api(api)
                        .times(1 + rng.below(3) as u32),
                );
                true
            }
            MockFaultKind::LostAnswer => {
                mock.inject(Fault::new(FaultAction::DropResponse).api(api));
                true
            }
            MockFaultKind::DisconnectAfter => {
                mock.inject(Fault::new(FaultAction::DisconnectAfter).api(api));
                true
            }
            MockFaultKind::DisconnectBefore => {
                mock.inject(Fault::new(FaultAction::DisconnectBefore).api(api));
                true
            }
            MockFaultKind::Delay => {
                // Past the client's timeout (a late request), except for
                // InitProducerId: a late InitProducerId fences and aborts
                // whatever transaction its id began meanwhile, a loss no
                // client can prevent; the sink reports it (its own test).
                let max = if api == ApiKey::InitProducerId {
                    request_timeout.as_millis() as u64 / 2
                } else {
                    request_timeout.as_millis() as u64 * 2
                };
                let d = Duration::from_millis(50 + rng.below(max));
                mock.inject(Fault::new(FaultAction::Delay(d)).api(api));
                true
            }
            MockFaultKind::StopBroker => {
                mock.stop_broker(broker).await.expect("stop");
                pause_unless_stopped(control, outage).await;
                mock.start_broker(broker).expect("restart");
                true
            }
            MockFaultKind::Unreachable => {
                mock.set_reachable(broker, false).expect("unreachable");
                pause_unless_stopped(control, outage).await;
                mock.set_reachable(broker, true).expect("reachable");
                true
            }
            MockFaultKind::MoveLeader => match control.targets() {
                Some(t) if !t.topics.is_empty() => {
                    let (topic, n) = &t.topics[rng.below(t.topics.len() as u64) as usize];
                    let p = rng.below((*n).max(1) as u64) as i32;
                    mock.move_leader(topic, p, broker).is_ok()
                }
                _ => false,
            },
            MockFaultKind::MoveCoordinator => match control.targets() {
                Some(t) => {
                    if rng.percent(50) || t.group.is_none() {
                        mock.move_coordinator(
                            CoordinatorKind::Transaction,
                            &t.transactional_id,
                            broker,
                        )
                        .is_ok()
                    } else {
                        mock.move_coordinator(
                            CoordinatorKind::Group,
                            t.group.as_deref().unwrap_or_default(),
                            broker,
                        )
                        .is_ok()
                    }
                }
                None => false,
            },
            MockFaultKind::CutConnections => mock.cut_connections(broker).is_ok(),
        };
        if applied {
            *counts.entry(kind).or_default() += 1;
        }
    }
    mock.clear_faults();
    for b in &brokers {
        let _ = mock.start_broker(*b);
        let _ = mock.set_reachable(*b, true);
    }
    control.mark_healed();
    counts
}
