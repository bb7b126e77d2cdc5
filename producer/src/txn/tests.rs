//! Table-driven tests of the transaction manager: every transition, every
//! error class on every API, and the flows around them.

use super::prepared::{ResumeStep, resume_step};
use super::*;
use kafka_client::TopicPartition;
use kafka_client::requests::describe_transactions::TransactionSnapshot;
use kafka_proto::ErrorCode as E;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

const PID: ProducerIdAndEpoch = ProducerIdAndEpoch {
    producer_id: 1000,
    epoch: 5,
};

fn tp(p: i32) -> TopicPartition {
    TopicPartition::new("t", p)
}

fn manager(tv2: bool) -> TransactionManager {
    let mut m = TransactionManager::new(TxnConfig::new("tx"));
    m.set_jitter_factor(1.0);
    m.set_coordinator_capabilities(true, tv2);
    m
}

fn ok_find(m: &mut TransactionManager, now: Instant, node: i32) {
    let r = m.poll_request(now, false).expect("FindCoordinator");
    assert!(
        matches!(r.body, RequestBody::FindCoordinator { .. }),
        "{r:?}"
    );
    m.handle_response(
        r.id,
        4,
        CoordinatorResponse::FindCoordinator {
            error: E::None,
            node_id: node,
        },
        now,
    );
}

/// Answers the KIP-360 bump the manager sends next (InitProducerId with
/// the current pid/epoch) with epoch + 1, and returns it.
fn answer_epoch_bump(m: &mut TransactionManager, now: Instant) -> ProducerIdAndEpoch {
    let bump = m.poll_request(now, false).unwrap();
    assert!(
        matches!(bump.body, RequestBody::InitProducerId { producer, .. } if producer == PID),
        "KIP-360 bump with the current pid/epoch: {bump:?}"
    );
    let next = ProducerIdAndEpoch {
        producer_id: PID.producer_id,
        epoch: PID.epoch + 1,
    };
    m.handle_response(
        bump.id,
        5,
        CoordinatorResponse::InitProducerId {
            error: E::None,
            producer: next,
        },
        now,
    );
    next
}

/// Answers EndTxn `id` (v4) with success.
fn answer_end_txn(m: &mut TransactionManager, id: u64, now: Instant) {
    answer_end_txn_with(m, id, 4, E::None, None, now);
}

/// Answers EndTxn `id` at `version` with `error` and, under TV2, the
/// `producer` id and epoch the coordinator moved to.
fn answer_end_txn_with(
    m: &mut TransactionManager,
    id: u64,
    version: i16,
    error: E,
    producer: Option<ProducerIdAndEpoch>,
    now: Instant,
) {
    m.handle_response(
        id,
        version,
        CoordinatorResponse::EndTxn { error, producer },
        now,
    );
}

fn ready(tv2: bool) -> (TransactionManager, Instant) {
    let now = Instant::now();
    let mut m = manager(tv2);
    let t = m.init_transactions().unwrap();
    ok_find(&mut m, now, 1);
    let r = m.poll_request(now, false).unwrap();
    assert_eq!(r.target, Target::Node(1));
    assert!(matches!(
        r.body,
        RequestBody::InitProducerId {
            producer: ProducerIdAndEpoch::NONE,
            ..
        }
    ));
    m.handle_response(
        r.id,
        5,
        CoordinatorResponse::InitProducerId {
            error: E::None,
            producer: PID,
        },
        now,
    );
    assert_eq!(m.poll_result(t), Some(Ok(())));
    assert_eq!(m.state(), State::Ready);
    assert_eq!(
        m.poll_event(),
        Some(TxnEvent::ProducerIdAndEpochChanged {
            producer: PID,
            reset_sequences: true
        })
    );
    (m, now)
}

/// Ready → InTransaction with tp(0) in the transaction.
fn in_txn(tv2: bool) -> (TransactionManager, Instant) {
    let (mut m, now) = ready(tv2);
    m.begin_transaction().unwrap();
    m.on_partition_used(&tp(0)).unwrap();
    if !tv2 {
        assert!(
            !m.may_drain(&tp(0)),
            "TV1: no drain before AddPartitionsToTxn"
        );
        let r = m.poll_request(now, false).unwrap();
        assert!(
            matches!(&r.body, RequestBody::AddPartitionsToTxn { partitions, producer, .. } if partitions == &vec![tp(0)] && *producer == PID)
        );
        m.handle_response(
            r.id,
            3,
            CoordinatorResponse::AddPartitionsToTxn {
                results: vec![(tp(0), E::None)],
            },
            now,
        );
    }
    assert!(m.may_drain(&tp(0)));
    assert!(m.transaction_started());
    (m, now)
}

fn end_txn_of(r: &CoordinatorRequest) -> (ProducerIdAndEpoch, bool, TransactionVersion) {
    match &r.body {
        RequestBody::EndTxn {
            producer,
            committed,
            transaction_version,
            ..
        } => (*producer, *committed, *transaction_version),
        other => panic!("expected EndTxn, got {other:?}"),
    }
}

// ------------------------------------------------------------- transitions

/// The legal transitions of Java's `TransactionManager.State.isTransitionValid`
/// (Kafka 4.x, with KIP-939's PREPARED_TRANSACTION), written out pair by pair
/// from the Java rules rather than from [`TransactionManager::is_transition_valid`].
/// Every other pair is illegal.
const JAVA_LEGAL_TRANSITIONS: &[(State, State)] = {
    use State::*;
    &[
        // initTransactions.
        (Uninitialized, Initializing),
        // Resuming a prepared transaction: no InitProducerId, straight to
        // PREPARED_TRANSACTION.
        (Initializing, PreparedTransaction),
        // InitProducerId answered.
        (Initializing, Ready),
        // InitProducerId authorization errors are abortable (then back to
        // UNINITIALIZED, below).
        (Initializing, AbortableError),
        // beginTransaction.
        (Ready, InTransaction),
        // A producer reset (Java: resetting an idempotent producer's id).
        (Ready, Uninitialized),
        // prepareTransaction (KIP-939).
        (InTransaction, PreparedTransaction),
        // commitTransaction / abortTransaction.
        (InTransaction, CommittingTransaction),
        (InTransaction, AbortingTransaction),
        (PreparedTransaction, CommittingTransaction),
        (PreparedTransaction, AbortingTransaction),
        // An abortable error while open or while committing.
        (InTransaction, AbortableError),
        (CommittingTransaction, AbortableError),
        // A second abortable error keeps the state.
        (AbortableError, AbortableError),
        // abortTransaction after an abortable error.
        (AbortableError, AbortingTransaction),
        // An InitProducerId authorization error: init may be called again.
        (AbortableError, Uninitialized),
        // EndTxn done.
        (CommittingTransaction, Ready),
        (AbortingTransaction, Ready),
        // EndTxn done, then the client bumps the epoch (KIP-360).
        (CommittingTransaction, Initializing),
        (AbortingTransaction, Initializing),
        // A fatal error is legal from every state, FATAL_ERROR included.
        (Uninitialized, FatalError),
        (Initializing, FatalError),
        (Ready, FatalError),
        (InTransaction, FatalError),
        (PreparedTransaction, FatalError),
        (CommittingTransaction, FatalError),
        (AbortingTransaction, FatalError),
        (AbortableError, FatalError),
        (FatalError, FatalError),
    ]
};

#[test]
fn transition_table_is_javas_is_transition_valid() {
    for from in State::ALL {
        for to in State::ALL {
            assert_eq!(
                TransactionManager::is_transition_valid(from, to),
                JAVA_LEGAL_TRANSITIONS.contains(&(from, to)),
                "{from:?} -> {to:?}"
            );
        }
    }
}

#[test]
fn user_operations_in_every_state() {
    // (op, states where it is accepted) from a manager forced into each state.
    fn force(state: State) -> TransactionManager {
        let (mut m, now) = match state {
            State::Uninitialized => (manager(false), Instant::now()),
            State::Initializing => {
                let mut m = manager(false);
                m.init_transactions().unwrap();
                (m, Instant::now())
            }
            State::Ready => ready(false),
            State::InTransaction => in_txn(false),
            State::PreparedTransaction => {
                let (mut m, now) = in_txn(false);
                m.prepare_transaction().unwrap();
                (m, now)
            }
            State::CommittingTransaction => {
                let (mut m, now) = in_txn(false);
                m.commit_transaction().unwrap();
                (m, now)
            }
            State::AbortingTransaction => {
                let (mut m, now) = in_txn(false);
                m.abort_transaction().unwrap();
                (m, now)
            }
            State::AbortableError => {
                let (mut m, now) = in_txn(false);
                m.produce_batch_failed(&tp(0), Some(E::NotEnoughReplicas), false);
                (m, now)
            }
            State::FatalError => {
                let (mut m, now) = in_txn(false);
                m.produce_batch_failed(&tp(0), Some(E::ProducerFenced), false);
                (m, now)
            }
        };
        let _ = now;
        assert_eq!(m.state(), state);
        // Forget pending transitions so that each op sees only the state.
        m.forget_pending();
        m
    }
    use State::*;
    for s in State::ALL {
        let ok = |r: bool, allowed: &[State], op: &str| {
            assert_eq!(r, allowed.contains(&s), "{op} in {s:?}")
        };
        ok(
            force(s).init_transactions().is_ok(),
            &[Uninitialized],
            "init",
        );
        ok(force(s).begin_transaction().is_ok(), &[Ready], "begin");
        ok(
            force(s).on_partition_used(&tp(1)).is_ok(),
            &[InTransaction],
            "send",
        );
        ok(
            force(s)
                .send_offsets_to_transaction(BTreeMap::new(), GroupMetadata::new("g"))
                .is_ok(),
            &[InTransaction],
            "offsets",
        );
        ok(
            force(s).commit_transaction().is_ok(),
            &[InTransaction, PreparedTransaction],
            "commit",
        );
        ok(
            force(s).abort_transaction().is_ok(),
            &[InTransaction, PreparedTransaction, AbortableError],
            "abort",
        );
        ok(
            force(s).prepare_transaction().is_ok(),
            &[InTransaction],
            "prepare",
        );
        let p = super::PreparedTransaction {
            transactional_id: "tx".into(),
            producer_id: 1,
            producer_epoch: 1,
            transaction_version: TransactionVersion::V1,
        };
        ok(
            force(s).resume_prepared(&p).is_ok(),
            &[Uninitialized],
            "resume",
        );
    }
    let e = force(State::Ready).commit_transaction().unwrap_err();
    assert_eq!(
        e,
        TransactionError::InvalidState {
            from: State::Ready,
            op: TxnOp::CommitTransaction
        }
    );
    assert!(matches!(
        force(State::AbortableError).commit_transaction(),
        Err(TransactionError::Abortable { .. })
    ));
    assert!(matches!(
        force(State::FatalError).abort_transaction(),
        Err(TransactionError::Fenced { .. })
    ));
}

// ------------------------------------------------------- classification

/// The Java client's classification of every error code (retriable or not,
/// and how the transactional producer treats it), one line per code.
const JAVA_ERROR_CLASSIFICATION: &str = include_str!("fixtures/java-error-classification.tsv");

/// The coordinator requests of the transactional producer (FindCoordinator
/// aside).
const COORDINATOR_APIS: [TxnApi; 5] = [
    TxnApi::InitProducerId,
    TxnApi::AddPartitionsToTxn,
    TxnApi::AddOffsetsToTxn,
    TxnApi::TxnOffsetCommit,
    TxnApi::EndTxn,
];

/// How the producer core settles a batch failed with `error` before the
/// transaction manager hears of it (retry, success, or failure).
fn sender_decision(error: E) -> crate::idempotence::ErrorDecision {
    use crate::idempotence::Idempotence;
    let mut st = Idempotence::new_transactional();
    st.set_producer(PID, true);
    let tp = tp(0);
    st.assign(&tp, 1, 1);
    st.handle_error(&tp, 1, error, 0, false, false)
}

/// Invariant: for every Kafka error code, our view agrees with the Java
/// client's — the code is known by its name, it is retriable exactly when
/// Java's exception is, kafka-proto's per-code handling is Java's, and the
/// per-request classification ([`classify`]) and the producer core act as
/// that handling says where the code arises:
/// - retry: the producer core retries a batch, and no coordinator request
///   aborts or fails on it;
/// - refresh-coordinator-then-retry: every coordinator request looks the
///   coordinator up again (FindCoordinator itself retries);
/// - abortable: a batch failed with it aborts the transaction, and no request
///   retries it;
/// - fatal: no request retries it, and the requests whose unexpected errors
///   are fatal in Java (AddOffsetsToTxn, TxnOffsetCommit, EndTxn) fail the
///   producer;
/// - success(duplicate): the producer core completes the batch;
/// - empty (not expected on the producer path): Java's handling of any
///   other error — retriable codes are retried by every request; the others
///   abort on Produce and AddPartitionsToTxn (which collects unexpected
///   per-partition errors) and are fatal on every other request.
#[test]
fn classification_agrees_with_the_java_client_for_every_error_code() {
    use crate::idempotence::ErrorDecision;
    use ErrorClass::*;
    use kafka_proto::TxnHandling;
    let mut lines = JAVA_ERROR_CLASSIFICATION
        .lines()
        .filter(|l| !l.starts_with('#'));
    assert_eq!(
        lines.next(),
        Some("code\tname\tretriable\ttxn_producer_handling")
    );
    let mut seen = 0;
    for line in lines {
        let cols: Vec<&str> = line.split('\t').collect();
        assert_eq!(cols.len(), 4, "{line:?}");
        let code: i16 = cols[0].parse().unwrap();
        let (name, handling) = (cols[1], cols[3]);
        let retriable = match cols[2] {
            "yes" => true,
            "no" => false,
            other => panic!("{name}: retriable {other:?}"),
        };
        let error = E::from(code);
        let ctx = format!("{name} ({code})");
        assert!(
            !matches!(error, E::Unknown(_)),
            "{ctx}: unknown to kafka-proto"
        );
        assert_eq!(error.name(), name, "{ctx}");
        assert_eq!(error.is_retriable(), retriable, "{ctx}: retriable");
        let expected = match handling {
            "retry" => TxnHandling::Retry,
            "refresh-coordinator-then-retry" => TxnHandling::RefreshCoordinatorThenRetry,
            "abortable" => TxnHandling::Abortable,
            "fatal" => TxnHandling::Fatal,
            "success(duplicate)" => TxnHandling::DuplicateSuccess,
            "" => TxnHandling::Unspecified,
            other => panic!("{ctx}: handling {other:?}"),
        };
        assert_eq!(error.txn_handling(), expected, "{ctx}: handling");
        seen += 1;
        if error == E::None {
            for api in TxnApi::ALL {
                assert_eq!(classify(api, error, true), Success, "{ctx} on {api:?}");
            }
            continue;
        }
        let on = |api: TxnApi| classify(api, error, true);
        let retried_somewhere = || {
            TxnApi::ALL
                .into_iter()
                .filter(|a| matches!(on(*a), Retry | RefreshCoordinator))
                .collect::<Vec<_>>()
        };
        match expected {
            TxnHandling::Retry => {
                assert_eq!(sender_decision(error), ErrorDecision::Retry, "{ctx}");
                for api in COORDINATOR_APIS {
                    assert!(
                        matches!(on(api), Retry | RefreshCoordinator),
                        "{ctx} on {api:?}: {:?}",
                        on(api)
                    );
                }
            }
            TxnHandling::RefreshCoordinatorThenRetry => {
                assert_eq!(sender_decision(error), ErrorDecision::Retry, "{ctx}");
                assert_eq!(on(TxnApi::FindCoordinator), Retry, "{ctx}");
                for api in COORDINATOR_APIS {
                    assert_eq!(on(api), RefreshCoordinator, "{ctx} on {api:?}");
                }
            }
            TxnHandling::Abortable => {
                assert_eq!(on(TxnApi::Produce), Abortable, "{ctx} on Produce");
                assert_eq!(
                    sender_decision(error),
                    ErrorDecision::Fail { fatal: false },
                    "{ctx}"
                );
                assert_eq!(retried_somewhere(), [], "{ctx}");
            }
            TxnHandling::Fatal => {
                assert_eq!(retried_somewhere(), [], "{ctx}");
                for api in [
                    TxnApi::AddOffsetsToTxn,
                    TxnApi::TxnOffsetCommit,
                    TxnApi::EndTxn,
                ] {
                    assert!(
                        matches!(on(api), Fatal | Fenced),
                        "{ctx} on {api:?}: {:?}",
                        on(api)
                    );
                }
            }
            TxnHandling::DuplicateSuccess => {
                assert_eq!(
                    sender_decision(error),
                    ErrorDecision::SucceedWithoutOffset,
                    "{ctx}"
                );
            }
            TxnHandling::Unspecified if retriable => {
                assert_eq!(sender_decision(error), ErrorDecision::Retry, "{ctx}");
                for api in COORDINATOR_APIS
                    .into_iter()
                    .chain([TxnApi::FindCoordinator])
                {
                    assert_eq!(on(api), Retry, "{ctx} on {api:?}");
                }
            }
            TxnHandling::Unspecified => {
                for (api, class) in [
                    (TxnApi::FindCoordinator, Fatal),
                    (TxnApi::InitProducerId, Fatal),
                    (TxnApi::AddPartitionsToTxn, Abortable),
                    (TxnApi::AddOffsetsToTxn, Fatal),
                    (TxnApi::TxnOffsetCommit, Fatal),
                    (TxnApi::EndTxn, Fatal),
                    (TxnApi::Produce, Abortable),
                ] {
                    assert_eq!(on(api), class, "{ctx} on {api:?}");
                }
            }
        }
    }
    assert!(seen > 130, "only {seen} codes read");
}

/// Invariant: Java's `abortableErrorIfPossible` — UNKNOWN_PRODUCER_ID on
/// AddPartitionsToTxn, AddOffsetsToTxn and EndTxn aborts when the epoch can
/// be bumped (InitProducerId v3+ or TV2) and is fatal otherwise.
#[test]
fn unknown_producer_id_is_abortable_only_when_the_epoch_can_be_bumped() {
    for api in [
        TxnApi::AddPartitionsToTxn,
        TxnApi::AddOffsetsToTxn,
        TxnApi::EndTxn,
    ] {
        assert_eq!(
            classify(api, E::UnknownProducerId, true),
            ErrorClass::Abortable,
            "{api:?}"
        );
        assert_eq!(
            classify(api, E::UnknownProducerId, false),
            ErrorClass::Fatal,
            "{api:?}"
        );
    }
}

// ------------------------------------- every error class on every API, driven

#[derive(Debug, Clone, Copy, PartialEq)]
enum After {
    SameRequestLater,
    FindCoordinatorFirst,
    Abortable,
    Fatal,
    Fenced,
    /// InitProducerId authorization errors: back to Uninitialized.
    Uninitialized,
}

/// A manager with a request of `api` in flight (TV1 for AddPartitions /
/// AddOffsets, TV2 for a direct TxnOffsetCommit).
fn with_in_flight(
    api: TxnApi,
) -> (
    TransactionManager,
    Instant,
    CoordinatorRequest,
    Option<OpTicket>,
) {
    match api {
        TxnApi::FindCoordinator => {
            let now = Instant::now();
            let mut m = manager(false);
            let t = m.init_transactions().unwrap();
            let r = m.poll_request(now, false).unwrap();
            (m, now, r, Some(t))
        }
        TxnApi::InitProducerId => {
            let now = Instant::now();
            let mut m = manager(false);
            let t = m.init_transactions().unwrap();
            ok_find(&mut m, now, 1);
            let r = m.poll_request(now, false).unwrap();
            (m, now, r, Some(t))
        }
        TxnApi::AddPartitionsToTxn => {
            let (mut m, now) = in_txn(false);
            m.on_partition_used(&tp(1)).unwrap();
            let r = m.poll_request(now, false).unwrap();
            (m, now, r, None)
        }
        TxnApi::AddOffsetsToTxn => {
            let (mut m, now) = in_txn(false);
            let t = m
                .send_offsets_to_transaction(offsets(), GroupMetadata::new("g"))
                .unwrap();
            let r = m.poll_request(now, false).unwrap();
            (m, now, r, Some(t))
        }
        TxnApi::TxnOffsetCommit => {
            let (mut m, now) = in_txn(true);
            let t = m
                .send_offsets_to_transaction(offsets(), GroupMetadata::new("g"))
                .unwrap();
            let find = m.poll_request(now, false).unwrap();
            assert_eq!(
                find.body,
                RequestBody::FindCoordinator {
                    key_type: CoordinatorType::Group,
                    key: "g".into()
                }
            );
            m.handle_response(
                find.id,
                4,
                CoordinatorResponse::FindCoordinator {
                    error: E::None,
                    node_id: 3,
                },
                now,
            );
            let r = m.poll_request(now, false).unwrap();
            assert_eq!(r.target, Target::Node(3), "to the group coordinator");
            (m, now, r, Some(t))
        }
        TxnApi::EndTxn => {
            let (mut m, now) = in_txn(false);
            let t = m.commit_transaction().unwrap();
            let r = m.poll_request(now, false).unwrap();
            (m, now, r, Some(t))
        }
        TxnApi::Produce => unreachable!(),
    }
}

fn offsets() -> BTreeMap<TopicPartition, OffsetAndMetadata> {
    [(TopicPartition::new("in", 0), OffsetAndMetadata::new(42))]
        .into_iter()
        .collect()
}

fn response(api: TxnApi, error: E) -> CoordinatorResponse {
    match api {
        TxnApi::FindCoordinator => CoordinatorResponse::FindCoordinator { error, node_id: 1 },
        TxnApi::InitProducerId => CoordinatorResponse::InitProducerId {
            error,
            producer: PID,
        },
        TxnApi::AddPartitionsToTxn => CoordinatorResponse::AddPartitionsToTxn {
            results: vec![(tp(1), error)],
        },
        TxnApi::AddOffsetsToTxn => CoordinatorResponse::AddOffsetsToTxn { error },
        TxnApi::TxnOffsetCommit => CoordinatorResponse::TxnOffsetCommit {
            results: vec![(TopicPartition::new("in", 0), error)],
        },
        TxnApi::EndTxn => CoordinatorResponse::EndTxn {
            error,
            producer: None,
        },
        TxnApi::Produce => unreachable!(),
    }
}

#[test]
fn every_error_class_on_every_coordinator_api() {
    use After::*;
    let cases: &[(TxnApi, E, After)] = &[
        (
            TxnApi::FindCoordinator,
            E::CoordinatorNotAvailable,
            SameRequestLater,
        ),
        (
            TxnApi::FindCoordinator,
            E::CoordinatorLoadInProgress,
            SameRequestLater,
        ),
        (
            TxnApi::FindCoordinator,
            E::TransactionalIdAuthorizationFailed,
            Fatal,
        ),
        (TxnApi::FindCoordinator, E::UnknownServerError, Fatal),
        (
            TxnApi::InitProducerId,
            E::NotCoordinator,
            FindCoordinatorFirst,
        ),
        (
            TxnApi::InitProducerId,
            E::ConcurrentTransactions,
            SameRequestLater,
        ),
        (
            TxnApi::InitProducerId,
            E::CoordinatorLoadInProgress,
            SameRequestLater,
        ),
        (TxnApi::InitProducerId, E::ProducerFenced, Fenced),
        (TxnApi::InitProducerId, E::InvalidProducerEpoch, Fenced),
        (
            TxnApi::InitProducerId,
            E::TransactionalIdAuthorizationFailed,
            Uninitialized,
        ),
        (
            TxnApi::InitProducerId,
            E::ClusterAuthorizationFailed,
            Uninitialized,
        ),
        (TxnApi::InitProducerId, E::InvalidTxnState, Fatal),
        (TxnApi::InitProducerId, E::UnsupportedVersion, Fatal),
        (
            TxnApi::AddPartitionsToTxn,
            E::NotCoordinator,
            FindCoordinatorFirst,
        ),
        (
            TxnApi::AddPartitionsToTxn,
            E::ConcurrentTransactions,
            SameRequestLater,
        ),
        (TxnApi::AddPartitionsToTxn, E::ProducerFenced, Fenced),
        (TxnApi::AddPartitionsToTxn, E::UnknownProducerId, Abortable),
        (
            TxnApi::AddPartitionsToTxn,
            E::TopicAuthorizationFailed,
            Abortable,
        ),
        (
            TxnApi::AddPartitionsToTxn,
            E::OperationNotAttempted,
            Abortable,
        ),
        (
            TxnApi::AddPartitionsToTxn,
            E::TransactionAbortable,
            Abortable,
        ),
        (TxnApi::AddPartitionsToTxn, E::UnknownServerError, Abortable),
        (TxnApi::AddPartitionsToTxn, E::InvalidTxnState, Fatal),
        (
            TxnApi::AddPartitionsToTxn,
            E::InvalidProducerIdMapping,
            Fatal,
        ),
        (
            TxnApi::AddPartitionsToTxn,
            E::TransactionalIdAuthorizationFailed,
            Fatal,
        ),
        (
            TxnApi::AddOffsetsToTxn,
            E::CoordinatorNotAvailable,
            FindCoordinatorFirst,
        ),
        (
            TxnApi::AddOffsetsToTxn,
            E::ConcurrentTransactions,
            SameRequestLater,
        ),
        (TxnApi::AddOffsetsToTxn, E::InvalidProducerEpoch, Fenced),
        (TxnApi::AddOffsetsToTxn, E::UnknownProducerId, Abortable),
        (
            TxnApi::AddOffsetsToTxn,
            E::GroupAuthorizationFailed,
            Abortable,
        ),
        (TxnApi::AddOffsetsToTxn, E::TransactionAbortable, Abortable),
        (TxnApi::AddOffsetsToTxn, E::InvalidTxnState, Fatal),
        (
            TxnApi::TxnOffsetCommit,
            E::NotCoordinator,
            FindCoordinatorFirst,
        ),
        (
            TxnApi::TxnOffsetCommit,
            E::RequestTimedOut,
            FindCoordinatorFirst,
        ),
        (
            TxnApi::TxnOffsetCommit,
            E::CoordinatorLoadInProgress,
            SameRequestLater,
        ),
        (
            TxnApi::TxnOffsetCommit,
            E::UnknownTopicOrPartition,
            SameRequestLater,
        ),
        (TxnApi::TxnOffsetCommit, E::ProducerFenced, Fenced),
        (TxnApi::TxnOffsetCommit, E::UnknownMemberId, Abortable),
        (TxnApi::TxnOffsetCommit, E::IllegalGeneration, Abortable),
        (TxnApi::TxnOffsetCommit, E::FencedInstanceId, Abortable),
        (TxnApi::TxnOffsetCommit, E::GroupIdNotFound, Abortable),
        (TxnApi::TxnOffsetCommit, E::StaleMemberEpoch, Abortable),
        (
            TxnApi::TxnOffsetCommit,
            E::GroupAuthorizationFailed,
            Abortable,
        ),
        (TxnApi::TxnOffsetCommit, E::UnknownProducerId, Fatal),
        (
            TxnApi::TxnOffsetCommit,
            E::UnsupportedForMessageFormat,
            Fatal,
        ),
        (TxnApi::EndTxn, E::NotCoordinator, FindCoordinatorFirst),
        (TxnApi::EndTxn, E::ConcurrentTransactions, SameRequestLater),
        (TxnApi::EndTxn, E::RequestTimedOut, SameRequestLater),
        (TxnApi::EndTxn, E::ProducerFenced, Fenced),
        (TxnApi::EndTxn, E::InvalidProducerEpoch, Fenced),
        (TxnApi::EndTxn, E::UnknownProducerId, Abortable),
        (TxnApi::EndTxn, E::TransactionAbortable, Abortable),
        (TxnApi::EndTxn, E::InvalidTxnState, Fatal),
        (TxnApi::EndTxn, E::InvalidProducerIdMapping, Fatal),
        (TxnApi::EndTxn, E::ClusterAuthorizationFailed, Fatal),
    ];
    for &(api, error, after) in cases {
        let (mut m, now, req, ticket) = with_in_flight(api);
        assert_eq!(req.body.api(), api);
        assert!(
            m.poll_request(now, false).is_none(),
            "one request in flight at a time"
        );
        m.handle_response(req.id, 3, response(api, error), now);
        let ctx = format!("{error:?} on {api:?}");
        match after {
            SameRequestLater => {
                assert!(m.poll_request(now, false).is_none(), "{ctx}: backoff first");
                let again = m
                    .poll_request(now + Duration::from_secs(2), false)
                    .expect(&ctx);
                assert_eq!(again.body, req.body, "{ctx}");
                assert_eq!(again.attempt, 1, "{ctx}");
            }
            FindCoordinatorFirst => {
                let next = m.poll_request(now, false).expect(&ctx);
                assert!(
                    matches!(next.body, RequestBody::FindCoordinator { .. }),
                    "{ctx}: {next:?}"
                );
                assert_eq!(next.target, Target::AnyBroker);
                m.handle_response(
                    next.id,
                    4,
                    CoordinatorResponse::FindCoordinator {
                        error: E::None,
                        node_id: 9,
                    },
                    now,
                );
                let again = m
                    .poll_request(now + Duration::from_secs(2), false)
                    .expect(&ctx);
                assert_eq!(again.body, req.body, "{ctx}: the same request");
                assert_eq!(
                    again.target,
                    Target::Node(9),
                    "{ctx}: to the new coordinator"
                );
            }
            Abortable => {
                assert_eq!(m.state(), State::AbortableError, "{ctx}");
                assert!(
                    matches!(m.last_error(), Some(TransactionError::Abortable { error: Some(e), .. }) if *e == error),
                    "{ctx}: {:?}",
                    m.last_error()
                );
                if let Some(t) = ticket {
                    assert!(
                        matches!(
                            m.poll_result(t),
                            Some(Err(TransactionError::Abortable { .. }))
                        ),
                        "{ctx}"
                    );
                }
                // The application aborts and continues.
                let abort = m.abort_transaction().expect(&ctx);
                let mut t = now;
                for _ in 0..5 {
                    let Some(r) = m.poll_request(t, false) else {
                        break;
                    };
                    let resp = match r.body.api() {
                        TxnApi::EndTxn => CoordinatorResponse::EndTxn {
                            error: E::None,
                            producer: None,
                        },
                        TxnApi::InitProducerId => CoordinatorResponse::InitProducerId {
                            error: E::None,
                            producer: ProducerIdAndEpoch {
                                producer_id: PID.producer_id,
                                epoch: PID.epoch + 1,
                            },
                        },
                        TxnApi::FindCoordinator => CoordinatorResponse::FindCoordinator {
                            error: E::None,
                            node_id: 1,
                        },
                        other => panic!("{ctx}: unexpected {other:?} while aborting"),
                    };
                    m.handle_response(r.id, 3, resp, t);
                    t += Duration::from_millis(1);
                }
                assert_eq!(m.poll_result(abort), Some(Ok(())), "{ctx}");
                assert_eq!(m.state(), State::Ready, "{ctx}");
            }
            Fatal => {
                assert_eq!(m.state(), State::FatalError, "{ctx}");
                assert!(
                    matches!(m.last_error(), Some(TransactionError::Fatal { .. })),
                    "{ctx}"
                );
                if let Some(t) = ticket {
                    assert!(
                        matches!(m.poll_result(t), Some(Err(TransactionError::Fatal { .. }))),
                        "{ctx}"
                    );
                }
                assert!(m.begin_transaction().is_err());
            }
            Fenced => {
                assert_eq!(m.state(), State::FatalError, "{ctx}");
                assert_eq!(
                    m.last_error(),
                    Some(&TransactionError::Fenced {
                        api,
                        version: 3,
                        error
                    }),
                    "{ctx}"
                );
            }
            Uninitialized => {
                assert_eq!(m.state(), State::Uninitialized, "{ctx}");
                assert!(matches!(
                    m.poll_result(ticket.unwrap()),
                    Some(Err(TransactionError::Abortable { .. }))
                ));
                assert!(
                    m.init_transactions().is_ok(),
                    "{ctx}: init may be called again"
                );
            }
        }
    }
}

#[test]
fn produce_path_fatal_set_and_abortable_rest() {
    for (error, fatal) in [
        (E::ClusterAuthorizationFailed, true),
        (E::TransactionalIdAuthorizationFailed, true),
        (E::ProducerFenced, true),
        (E::UnsupportedVersion, true),
        (E::InvalidProducerIdMapping, true),
        (E::InvalidProducerEpoch, false),
        (E::OutOfOrderSequenceNumber, false),
        (E::UnknownProducerId, false),
        (E::InvalidTxnState, false),
        (E::MessageTooLarge, false),
        (E::NotEnoughReplicas, false),
    ] {
        let (mut m, _) = in_txn(false);
        m.produce_batch_failed(&tp(0), Some(error), false);
        let want = if fatal {
            State::FatalError
        } else {
            State::AbortableError
        };
        assert_eq!(m.state(), want, "{error:?}");
        assert!(m.undrained_batch_error().is_some());
        assert_eq!(m.may_drain(&tp(0)), !fatal, "{error:?}");
    }
}

// ------------------------------------------------------------------ flows

#[test]
fn empty_transactions_complete_locally() {
    for commit in [true, false] {
        let (mut m, now) = ready(false);
        m.begin_transaction().unwrap();
        let t = if commit {
            m.commit_transaction()
        } else {
            m.abort_transaction()
        }
        .unwrap();
        assert!(
            m.poll_request(now, false).is_none(),
            "no EndTxn for an empty transaction"
        );
        assert_eq!(m.poll_result(t), Some(Ok(())));
        assert_eq!(m.state(), State::Ready);
        assert_eq!(
            m.poll_event(),
            Some(TxnEvent::TransactionCompleted { committed: commit })
        );
    }
}

#[test]
fn tv1_commit_adds_pending_partitions_first_and_holds_end_txn_for_batches() {
    let (mut m, now) = in_txn(false);
    m.on_partition_used(&tp(1)).unwrap();
    let t = m.commit_transaction().unwrap();
    let add = m.poll_request(now, true).unwrap();
    assert!(
        matches!(&add.body, RequestBody::AddPartitionsToTxn { partitions, .. } if partitions == &vec![tp(1)])
    );
    m.handle_response(
        add.id,
        3,
        CoordinatorResponse::AddPartitionsToTxn {
            results: vec![(tp(1), E::None)],
        },
        now,
    );
    assert!(m.may_drain(&tp(1)));
    assert!(
        m.poll_request(now, true).is_none(),
        "EndTxn waits for incomplete batches"
    );
    let end = m.poll_request(now, false).unwrap();
    assert_eq!(end_txn_of(&end), (PID, true, TransactionVersion::V1));
    answer_end_txn(&mut m, end.id, now);
    assert_eq!(m.poll_result(t), Some(Ok(())));
    assert_eq!(m.state(), State::Ready);
    assert!(m.partitions_in_transaction().is_empty());
    assert_eq!(
        m.producer_id_and_epoch(),
        PID,
        "TV1: EndTxn keeps the epoch"
    );
}

#[test]
fn add_partitions_concurrent_transactions_uses_20ms_while_nothing_added() {
    let (mut m, now) = ready(false);
    m.begin_transaction().unwrap();
    m.on_partition_used(&tp(0)).unwrap();
    let r = m.poll_request(now, false).unwrap();
    m.handle_response(
        r.id,
        3,
        CoordinatorResponse::AddPartitionsToTxn {
            results: vec![(tp(0), E::ConcurrentTransactions)],
        },
        now,
    );
    assert_eq!(m.poll_timeout(), Some(now + ADD_PARTITIONS_RETRY_BACKOFF));
    let r = m
        .poll_request(now + ADD_PARTITIONS_RETRY_BACKOFF, false)
        .unwrap();
    m.handle_response(
        r.id,
        3,
        CoordinatorResponse::AddPartitionsToTxn {
            results: vec![(tp(0), E::None)],
        },
        now,
    );
    // Once a partition is in, the normal backoff applies.
    m.on_partition_used(&tp(1)).unwrap();
    let r = m.poll_request(now, false).unwrap();
    m.handle_response(
        r.id,
        3,
        CoordinatorResponse::AddPartitionsToTxn {
            results: vec![(tp(1), E::ConcurrentTransactions)],
        },
        now,
    );
    assert_eq!(m.poll_timeout(), Some(now + Duration::from_millis(100)));
}

#[test]
fn concurrent_transactions_backoff_escalates() {
    let (mut m, now) = in_txn(false);
    m.commit_transaction().unwrap();
    let mut t = now;
    let mut delays = Vec::new();
    for _ in 0..6 {
        let r = m.poll_request(t, false).unwrap();
        answer_end_txn_with(&mut m, r.id, 4, E::ConcurrentTransactions, None, t);
        let next = m.poll_timeout().unwrap();
        delays.push((next - t).as_millis());
        assert!(
            m.poll_request(next - Duration::from_millis(1), false)
                .is_none()
        );
        t = next;
    }
    assert_eq!(delays, vec![100, 200, 400, 800, 1000, 1000]);
}

/// Invariant (TV1): an EndTxn whose outcome is unknown (its connection was
/// lost) is retried as the same request, and the epoch is bumped before the
/// commit completes, so that the lost request, if it still reaches the
/// coordinator, is fenced instead of ending the next transaction.
#[test]
fn end_txn_disconnect_retries_the_same_end_txn_after_rediscovery() {
    let (mut m, now) = in_txn(false);
    let t = m.commit_transaction().unwrap();
    let end = m.poll_request(now, false).unwrap();
    m.handle_disconnect(end.id, now);
    assert_eq!(m.transaction_coordinator(), None);
    let find = m.poll_request(now, false).unwrap();
    assert!(matches!(
        find.body,
        RequestBody::FindCoordinator {
            key_type: CoordinatorType::Transaction,
            ..
        }
    ));
    m.handle_response(
        find.id,
        4,
        CoordinatorResponse::FindCoordinator {
            error: E::None,
            node_id: 2,
        },
        now,
    );
    let retry = m.poll_request(now + Duration::from_secs(1), false).unwrap();
    assert_eq!(retry.body, end.body, "same pid/epoch/decision/version");
    assert_eq!(retry.target, Target::Node(2));
    answer_end_txn(&mut m, retry.id, now);
    assert_eq!(m.poll_result(t), None, "not before the epoch bump");
    let bumped = answer_epoch_bump(&mut m, now);
    assert_eq!(m.poll_result(t), Some(Ok(())));
    assert_eq!(m.producer_id_and_epoch(), bumped);
    assert_eq!(m.state(), State::Ready);
}

#[test]
fn pending_transition_after_a_timed_out_commit() {
    let (mut m, now) = in_txn(false);
    let t = m.commit_transaction().unwrap();
    let end = m.poll_request(now, false).unwrap();
    // The caller's wait timed out here; the same call returns the same ticket.
    assert_eq!(m.commit_transaction().unwrap(), t);
    assert_eq!(
        m.abort_transaction().unwrap_err(),
        TransactionError::PendingTransition {
            pending: TxnOp::CommitTransaction,
            attempted: TxnOp::AbortTransaction
        }
    );
    assert!(matches!(
        m.begin_transaction(),
        Err(TransactionError::PendingTransition { .. })
    ));
    answer_end_txn(&mut m, end.id, now);
    // Completed but not yet observed: the retried call gets the result.
    assert_eq!(m.commit_transaction().unwrap(), t);
    assert_eq!(m.poll_result(t), Some(Ok(())));
    m.begin_transaction().unwrap();
}

#[test]
fn tv1_produce_failure_aborts_then_bumps_the_epoch() {
    let (mut m, now) = in_txn(false);
    m.produce_batch_failed(&tp(0), None, true); // expired in flight: outcome unknown
    assert_eq!(m.state(), State::AbortableError);
    assert!(m.epoch_bump_required());
    assert!(matches!(
        m.commit_transaction(),
        Err(TransactionError::Abortable { .. })
    ));
    let t = m.abort_transaction().unwrap();
    let end = m.poll_request(now, false).unwrap();
    assert_eq!(end_txn_of(&end), (PID, false, TransactionVersion::V1));
    answer_end_txn(&mut m, end.id, now);
    assert_eq!(m.state(), State::Initializing);
    assert!(m.poll_result(t).is_none(), "abort completes after the bump");
    let next = answer_epoch_bump(&mut m, now);
    assert_eq!(m.poll_result(t), Some(Ok(())));
    assert_eq!(m.state(), State::Ready);
    assert_eq!(m.producer_id_and_epoch(), next);
    assert!(!m.epoch_bump_required());
    let events: Vec<_> = std::iter::from_fn(|| m.poll_event()).collect();
    assert!(events.contains(&TxnEvent::ProducerIdAndEpochChanged {
        producer: next,
        reset_sequences: true
    }));
}

#[test]
fn tv2_end_txn_adopts_the_next_epoch_and_a_new_pid_on_exhaustion() {
    let (mut m, now) = in_txn(true);
    m.produce_batch_failed(&tp(0), Some(E::NotEnoughReplicas), false);
    assert!(!m.epoch_bump_required(), "TV2: the broker bumps at EndTxn");
    let t = m.abort_transaction().unwrap();
    let end = m.poll_request(now, false).unwrap();
    assert_eq!(end_txn_of(&end), (PID, false, TransactionVersion::V2));
    let next = ProducerIdAndEpoch {
        producer_id: PID.producer_id,
        epoch: PID.epoch + 1,
    };
    answer_end_txn_with(&mut m, end.id, 5, E::None, Some(next), now);
    assert_eq!(m.poll_result(t), Some(Ok(())));
    assert!(
        m.poll_request(now, false).is_none(),
        "no InitProducerId under TV2"
    );
    assert_eq!(m.producer_id_and_epoch(), next);
    // Epoch exhaustion: a new producer id with epoch 0, sequences reset.
    m.begin_transaction().unwrap();
    m.on_partition_used(&tp(0)).unwrap();
    let t = m.commit_transaction().unwrap();
    let end = m.poll_request(now, false).unwrap();
    let fresh = ProducerIdAndEpoch {
        producer_id: 2000,
        epoch: 0,
    };
    answer_end_txn_with(&mut m, end.id, 5, E::None, Some(fresh), now);
    assert_eq!(m.poll_result(t), Some(Ok(())));
    assert_eq!(m.producer_id_and_epoch(), fresh);
    let events: Vec<_> = std::iter::from_fn(|| m.poll_event()).collect();
    assert!(events.contains(&TxnEvent::ProducerIdAndEpochChanged {
        producer: fresh,
        reset_sequences: true
    }));
}

#[test]
fn tv_switches_only_between_transactions() {
    let (mut m, now) = in_txn(false);
    m.set_coordinator_capabilities(true, true); // TV2 finalized mid-transaction
    assert_eq!(m.transaction_version(), TransactionVersion::V1);
    let t = m.commit_transaction().unwrap();
    let end = m.poll_request(now, false).unwrap();
    assert_eq!(
        end_txn_of(&end).2,
        TransactionVersion::V1,
        "the transaction ends on TV1"
    );
    answer_end_txn(&mut m, end.id, now);
    answer_epoch_bump(&mut m, now);
    assert_eq!(m.poll_result(t), Some(Ok(())));
    assert_eq!(m.transaction_version(), TransactionVersion::V2);
    // Downgrade: EndTxn v5 bumps; the next transaction uses TV1.
    m.set_coordinator_capabilities(true, false);
    m.begin_transaction().unwrap();
    m.on_partition_used(&tp(0)).unwrap();
    assert_eq!(m.transaction_version(), TransactionVersion::V2);
    let t = m.commit_transaction().unwrap();
    let end = m.poll_request(now, false).unwrap();
    assert_eq!(end_txn_of(&end).2, TransactionVersion::V2);
    m.handle_response(
        end.id,
        5,
        CoordinatorResponse::EndTxn {
            error: E::None,
            producer: Some(ProducerIdAndEpoch {
                producer_id: PID.producer_id,
                epoch: PID.epoch + 2,
            }),
        },
        now,
    );
    assert_eq!(m.poll_result(t), Some(Ok(())));
    assert_eq!(m.transaction_version(), TransactionVersion::V1);
}

#[test]
fn transaction_abortable_on_end_txn_is_fatal_while_aborting() {
    let (mut m, now) = in_txn(false);
    m.abort_transaction().unwrap();
    let end = m.poll_request(now, false).unwrap();
    answer_end_txn_with(&mut m, end.id, 4, E::TransactionAbortable, None, now);
    assert_eq!(m.state(), State::FatalError);
}

#[test]
fn unknown_producer_id_on_end_txn_abort_recovers_with_a_bump() {
    let (mut m, now) = in_txn(false);
    let t = m.abort_transaction().unwrap();
    let end = m.poll_request(now, false).unwrap();
    answer_end_txn_with(&mut m, end.id, 4, E::UnknownProducerId, None, now);
    answer_epoch_bump(&mut m, now);
    assert_eq!(m.poll_result(t), Some(Ok(())));
    assert_eq!(m.state(), State::Ready);
}

#[test]
fn send_offsets_tv1_adds_offsets_then_commits_to_the_group_coordinator() {
    let (mut m, now) = in_txn(false);
    let t = m
        .send_offsets_to_transaction(offsets(), GroupMetadata::new("g"))
        .unwrap();
    let add = m.poll_request(now, false).unwrap();
    assert!(matches!(&add.body, RequestBody::AddOffsetsToTxn { group_id, .. } if group_id == "g"));
    assert_eq!(add.target, Target::Node(1));
    m.handle_response(
        add.id,
        4,
        CoordinatorResponse::AddOffsetsToTxn { error: E::None },
        now,
    );
    assert!(
        m.poll_result(t).is_none(),
        "done only after TxnOffsetCommit"
    );
    let find = m.poll_request(now, false).unwrap();
    assert_eq!(
        find.body,
        RequestBody::FindCoordinator {
            key_type: CoordinatorType::Group,
            key: "g".into()
        }
    );
    m.handle_response(
        find.id,
        4,
        CoordinatorResponse::FindCoordinator {
            error: E::None,
            node_id: 3,
        },
        now,
    );
    let commit = m.poll_request(now, false).unwrap();
    assert_eq!(commit.target, Target::Node(3));
    assert!(matches!(
        &commit.body,
        RequestBody::TxnOffsetCommit {
            transaction_version: TransactionVersion::V1,
            ..
        }
    ));
    m.handle_response(
        commit.id,
        4,
        CoordinatorResponse::TxnOffsetCommit {
            results: vec![(TopicPartition::new("in", 0), E::None)],
        },
        now,
    );
    assert_eq!(m.poll_result(t), Some(Ok(())));
}

#[test]
fn prepare_and_resume() {
    let (mut m, now) = in_txn(false);
    m.on_partition_used(&tp(1)).unwrap();
    assert!(
        matches!(
            m.prepare_transaction(),
            Err(TransactionError::NotPreparable {
                reason: NotPreparableReason::PartitionsPending
            })
        ),
        "adds pending"
    );
    let add = m.poll_request(now, false).unwrap();
    m.handle_response(
        add.id,
        3,
        CoordinatorResponse::AddPartitionsToTxn {
            results: vec![(tp(1), E::None)],
        },
        now,
    );
    let p = m.prepare_transaction().unwrap();
    assert_eq!(
        p,
        PreparedTransaction {
            transactional_id: "tx".into(),
            producer_id: PID.producer_id,
            producer_epoch: PID.epoch,
            transaction_version: TransactionVersion::V1
        }
    );
    assert_eq!(m.state(), State::PreparedTransaction);

    // Another process: resume (no InitProducerId) and commit.
    let mut n = manager(false);
    n.resume_prepared(&p).unwrap();
    assert_eq!(n.state(), State::PreparedTransaction);
    let t = n.commit_transaction().unwrap();
    ok_find(&mut n, now, 1);
    let end = n.poll_request(now, false).unwrap();
    assert_eq!(end_txn_of(&end), (PID, true, TransactionVersion::V1));
    n.handle_response(
        end.id,
        4,
        CoordinatorResponse::EndTxn {
            error: E::None,
            producer: None,
        },
        now,
    );
    assert_eq!(n.poll_result(t), Some(Ok(())));
    assert_eq!(n.state(), State::Ready);

    let mut other = TransactionManager::new(TxnConfig::new("other"));
    assert!(
        other.resume_prepared(&p).is_err(),
        "another transactional id"
    );
    // Empty transactions cannot be prepared.
    let (mut e, _) = ready(true);
    e.begin_transaction().unwrap();
    assert!(matches!(
        e.prepare_transaction(),
        Err(TransactionError::NotPreparable {
            reason: NotPreparableReason::Empty
        })
    ));
}

// --------------------------------------------------------------- prepared

#[test]
fn prepared_encoding_v1_fixture() {
    // Written by format v1; must decode forever.
    const FIXTURE: &[u8] = &[
        b'K', b'T', b'X', b'P', 1, 2, 0, 0, 0, 0, 0, 0, 0x10, 0x92, 0, 7, 0, 11, b'f', b'i', b'x',
        b't', b'u', b'r', b'e', b'-', b't', b'x', b'n',
    ];
    let p = PreparedTransaction::decode(FIXTURE).unwrap();
    assert_eq!(
        p,
        PreparedTransaction {
            transactional_id: "fixture-txn".into(),
            producer_id: 4242,
            producer_epoch: 7,
            transaction_version: TransactionVersion::V2
        }
    );
    assert_eq!(p.encode(), FIXTURE);
    let mut v = FIXTURE.to_vec();
    v[4] = 2;
    assert_eq!(
        PreparedTransaction::decode(&v),
        Err(PreparedDecodeError::UnknownVersion(2))
    );
    let mut v = FIXTURE.to_vec();
    v.push(0);
    assert_eq!(
        PreparedTransaction::decode(&v),
        Err(PreparedDecodeError::TrailingBytes(1))
    );
    assert_eq!(
        PreparedTransaction::decode(&FIXTURE[..20]),
        Err(PreparedDecodeError::Truncated(20))
    );
    assert_eq!(
        PreparedTransaction::decode(b"NOPE\x01"),
        Err(PreparedDecodeError::BadMagic)
    );
    let mut v = FIXTURE.to_vec();
    v[5] = 3;
    assert_eq!(
        PreparedTransaction::decode(&v),
        Err(PreparedDecodeError::InvalidTransactionVersion(3))
    );
}

#[test]
fn resume_outcomes() {
    let p = PreparedTransaction {
        transactional_id: "t".into(),
        producer_id: 9,
        producer_epoch: 4,
        transaction_version: TransactionVersion::V1,
    };
    let snap = |state: &str, epoch: i16| TransactionSnapshot {
        transactional_id: "t".into(),
        state: TransactionState::parse(state),
        timeout_ms: 60_000,
        start_time_ms: -1,
        producer_id: 9,
        producer_epoch: epoch,
        partitions: Vec::new(),
    };
    let done = ResumeStep::Done;
    let cases: Vec<(bool, Option<TransactionSnapshot>, E, ResumeStep)> = vec![
        (
            true,
            Some(snap("Ongoing", 4)),
            E::None,
            done(ResumeOutcome::Committed),
        ),
        (true, None, E::None, done(ResumeOutcome::Committed)),
        (
            true,
            Some(snap("CompleteCommit", 4)),
            E::None,
            done(ResumeOutcome::AlreadyCommitted),
        ),
        (
            true,
            Some(snap("CompleteCommit", 5)),
            E::None,
            done(ResumeOutcome::AlreadyCommitted),
        ),
        (
            true,
            Some(snap("PrepareCommit", 4)),
            E::None,
            done(ResumeOutcome::AlreadyCommitted),
        ),
        (
            false,
            Some(snap("Ongoing", 4)),
            E::None,
            done(ResumeOutcome::Aborted),
        ),
        (
            false,
            Some(snap("CompleteAbort", 4)),
            E::None,
            done(ResumeOutcome::AlreadyAborted),
        ),
        (
            true,
            Some(snap("CompleteAbort", 5)),
            E::InvalidTxnState,
            done(ResumeOutcome::AbortedByBroker {
                error: E::InvalidTxnState,
                state: Some(TransactionState::CompleteAbort),
            }),
        ),
        (
            true,
            None,
            E::InvalidTxnState,
            done(ResumeOutcome::AbortedByBroker {
                error: E::InvalidTxnState,
                state: None,
            }),
        ),
        // TV1 timeout: the coordinator fenced (bumped) the epoch, then aborted.
        (
            true,
            Some(snap("CompleteAbort", 5)),
            E::ProducerFenced,
            done(ResumeOutcome::AbortedByBroker {
                error: E::ProducerFenced,
                state: Some(TransactionState::CompleteAbort),
            }),
        ),
        (
            false,
            Some(snap("CompleteAbort", 5)),
            E::ProducerFenced,
            done(ResumeOutcome::AlreadyAborted),
        ),
        (
            false,
            Some(snap("CompleteCommit", 4)),
            E::InvalidTxnState,
            done(ResumeOutcome::AlreadyCommitted),
        ),
        (
            true,
            Some(snap("Ongoing", 7)),
            E::ProducerFenced,
            done(ResumeOutcome::Fenced {
                error: E::ProducerFenced,
                state: Some(TransactionState::Ongoing),
            }),
        ),
        (
            true,
            None,
            E::InvalidProducerIdMapping,
            done(ResumeOutcome::Fenced {
                error: E::InvalidProducerIdMapping,
                state: None,
            }),
        ),
        (true, None, E::ConcurrentTransactions, ResumeStep::Retry),
        (true, None, E::CoordinatorLoadInProgress, ResumeStep::Retry),
        (true, None, E::NotCoordinator, ResumeStep::Rediscover),
        (
            true,
            None,
            E::CoordinatorNotAvailable,
            ResumeStep::Rediscover,
        ),
        (
            true,
            None,
            E::TransactionalIdAuthorizationFailed,
            ResumeStep::Fail(E::TransactionalIdAuthorizationFailed),
        ),
    ];
    for (commit, before, error, want) in cases {
        assert_eq!(
            resume_step(&p, commit, before.as_ref(), error),
            want,
            "commit={commit} {before:?} {error:?}"
        );
    }
}

/// Regression: a record parked for its topic's metadata is placed by the
/// sender after the abort of the (still empty) transaction completed
/// locally but before the user's waiter looked. The late `on_partition_used`
/// is refused, and the abort's result stays for its ticket (it used to be
/// consumed by the hook, and `abort_transaction` then timed out after
/// `max.block.ms`).
#[test]
fn a_late_append_never_consumes_the_result_of_a_completed_operation() {
    for tv2 in [false, true] {
        let (mut m, now) = ready(tv2);
        m.begin_transaction().unwrap();
        let abort = m.abort_transaction().unwrap();
        assert!(
            m.poll_request(now, false).is_none(),
            "empty: no EndTxn (tv2={tv2})"
        );
        assert_eq!(m.state(), State::Ready);
        assert!(matches!(
            m.on_partition_used(&tp(0)),
            Err(TransactionError::InvalidState {
                from: State::Ready,
                op: TxnOp::Send
            })
        ));
        assert_eq!(m.poll_result(abort), Some(Ok(())), "tv2={tv2}");
        // The producer goes on with the next transaction.
        m.begin_transaction().unwrap();
        m.on_partition_used(&tp(0)).unwrap();
    }
}

/// Sends `offsets()` for group "g" in the open TV1 transaction up to the
/// TxnOffsetCommit, which gets no answer (disconnect), then answers its
/// retry; returns the operation's ticket.
fn tv1_offsets_with_an_unanswered_commit(m: &mut TransactionManager, now: Instant) -> OpTicket {
    let t = m
        .send_offsets_to_transaction(offsets(), GroupMetadata::new("g"))
        .unwrap();
    let add = m.poll_request(now, false).unwrap();
    m.handle_response(
        add.id,
        4,
        CoordinatorResponse::AddOffsetsToTxn { error: E::None },
        now,
    );
    let mut later = now;
    let mut unanswered = false;
    for _ in 0..10 {
        later += Duration::from_secs(1);
        let r = m.poll_request(later, false).unwrap();
        match &r.body {
            RequestBody::FindCoordinator { .. } => m.handle_response(
                r.id,
                4,
                CoordinatorResponse::FindCoordinator {
                    error: E::None,
                    node_id: 3,
                },
                later,
            ),
            RequestBody::TxnOffsetCommit { .. } => {
                if !unanswered {
                    // The first attempt: no answer.
                    unanswered = true;
                    m.handle_disconnect(r.id, later);
                } else {
                    m.handle_response(
                        r.id,
                        4,
                        CoordinatorResponse::TxnOffsetCommit {
                            results: vec![(TopicPartition::new("in", 0), E::None)],
                        },
                        later,
                    );
                    return t;
                }
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    panic!("the TxnOffsetCommit was not retried");
}

/// Invariant: a TxnOffsetCommit that got no answer may still be applied,
/// late, under the same epoch: after a later TxnOffsetCommit of the same
/// transaction for the same group (overwriting its offsets: found by the
/// producer checker on kafka-mock, seed 296520703957), so that later one is
/// refused and the transaction must abort; and the epoch is bumped at the
/// end of the transaction (TV1), fencing the late request from the next one.
#[test]
fn offsets_after_an_unanswered_txn_offset_commit_abort_the_transaction() {
    let (mut m, now) = in_txn(false);
    let t = tv1_offsets_with_an_unanswered_commit(&mut m, now);
    assert_eq!(m.poll_result(t), Some(Ok(())), "the retry was answered");
    assert!(m.epoch_bump_required(), "the late request must be fenced");
    let again = m.send_offsets_to_transaction(offsets(), GroupMetadata::new("g"));
    assert!(
        matches!(again, Err(TransactionError::Abortable { .. })),
        "{again:?}"
    );
    assert_eq!(m.state(), State::AbortableError);
    let abort = m.abort_transaction().unwrap();
    let end = m.poll_request(now, false).unwrap();
    assert_eq!(end_txn_of(&end), (PID, false, TransactionVersion::V1));
    answer_end_txn(&mut m, end.id, now);
    let bumped = answer_epoch_bump(&mut m, now);
    assert_eq!(m.poll_result(abort), Some(Ok(())));
    assert_eq!(m.producer_id_and_epoch(), bumped);
    // The next transaction may send offsets for the group again.
    m.begin_transaction().unwrap();
    assert!(
        m.send_offsets_to_transaction(offsets(), GroupMetadata::new("g"))
            .is_ok()
    );
}

/// Invariant: with one TxnOffsetCommit per transaction, an unanswered one
/// answered on retry still commits (a late copy of it carries the same
/// offsets), and the epoch is bumped after the commit (TV1).
#[test]
fn an_answered_retry_of_an_unanswered_txn_offset_commit_commits_then_bumps() {
    let (mut m, now) = in_txn(false);
    let t = tv1_offsets_with_an_unanswered_commit(&mut m, now);
    assert_eq!(m.poll_result(t), Some(Ok(())));
    let commit = m.commit_transaction().unwrap();
    let end = m.poll_request(now, false).unwrap();
    assert_eq!(end_txn_of(&end), (PID, true, TransactionVersion::V1));
    answer_end_txn(&mut m, end.id, now);
    assert_eq!(m.poll_result(commit), None, "not before the epoch bump");
    let bumped = answer_epoch_bump(&mut m, now);
    assert_eq!(m.poll_result(commit), Some(Ok(())));
    assert_eq!(m.producer_id_and_epoch(), bumped);
}

/// Invariant: a batch's memo saves re-adding its partition within one
/// transaction only. Every record is still checked (an abortable error
/// refuses the next record of a batch that already added its partition),
/// and in the next transaction the batch adds its partition again.
#[test]
fn a_batch_adds_its_partition_once_per_transaction_and_every_record_is_checked() {
    for tv2 in [true, false] {
        let (mut m, now) = ready(tv2);
        let mut memo = 0;
        m.begin_transaction().unwrap();
        assert!(
            m.on_batch_partition_used(&tp(1), &mut memo).unwrap(),
            "added"
        );
        assert!(
            !m.on_batch_partition_used(&tp(1), &mut memo).unwrap(),
            "once"
        );
        assert_eq!(memo, m.transaction_serial());
        if !tv2 {
            let r = m.poll_request(now, false).unwrap();
            assert!(
                matches!(&r.body, RequestBody::AddPartitionsToTxn { partitions, .. } if partitions == &vec![tp(1)])
            );
            m.handle_response(
                r.id,
                3,
                CoordinatorResponse::AddPartitionsToTxn {
                    results: vec![(tp(1), E::None)],
                },
                now,
            );
        }
        assert!(m.partitions_in_transaction().contains(&tp(1)));
        // The transaction ends (commit with nothing in flight).
        let t = m.commit_transaction().unwrap();
        let end = m.poll_request(now, false).unwrap();
        m.handle_response(
            end.id,
            if tv2 { 5 } else { 4 },
            CoordinatorResponse::EndTxn {
                error: E::None,
                producer: tv2.then_some(ProducerIdAndEpoch {
                    producer_id: PID.producer_id,
                    epoch: PID.epoch + 1,
                }),
            },
            now,
        );
        assert_eq!(m.poll_result(t), Some(Ok(())));
        assert_eq!(m.state(), State::Ready);
        assert!(m.partitions_in_transaction().is_empty());
        // Between transactions: refused, memo kept.
        let before = memo;
        assert!(m.on_batch_partition_used(&tp(1), &mut memo).is_err());
        assert_eq!(memo, before);
        // The next transaction: the same batch adds its partition again.
        m.begin_transaction().unwrap();
        assert!(
            m.on_batch_partition_used(&tp(1), &mut memo).unwrap(),
            "tv2={tv2}"
        );
        if tv2 {
            assert!(m.partitions_in_transaction().contains(&tp(1)));
        } else {
            let r = m.poll_request(now, false).unwrap();
            assert!(
                matches!(&r.body, RequestBody::AddPartitionsToTxn { partitions, .. } if partitions == &vec![tp(1)]),
                "TV1: added again, so AddPartitionsToTxn again: {r:?}"
            );
        }
        // An abortable error: the next record is refused despite the memo.
        m.produce_batch_failed(&tp(1), None, false);
        assert_eq!(m.state(), State::AbortableError);
        assert!(matches!(
            m.on_batch_partition_used(&tp(1), &mut memo),
            Err(TransactionError::Abortable { .. })
        ));
    }
}

/// From Ready a transaction may begin, not commit (Java's `isTransitionValid`).
#[test]
fn ready_may_begin_but_not_commit() {
    use crate::txn::{State, TransactionManager};
    assert!(TransactionManager::is_transition_valid(
        State::Ready,
        State::InTransaction
    ));
    assert!(!TransactionManager::is_transition_valid(
        State::Ready,
        State::CommittingTransaction
    ));
}

/// A new manager's transaction serial is 0: none begun yet.
#[test]
fn no_transaction_has_begun_at_serial_zero() {
    use crate::txn::{TransactionManager, TxnConfig};
    let m = TransactionManager::new(TxnConfig::new("tx"));
    assert_eq!(m.transaction_serial(), 0, "no transaction begun yet");
}

/// A record queued outside a transaction is refused.
#[test]
fn a_record_queued_outside_a_transaction_is_refused() {
    use crate::txn::{TransactionManager, TxnConfig};
    let mut m = TransactionManager::new(TxnConfig::new("tx"));
    assert!(m.on_record_queued().is_err(), "no transaction");
}

/// A batch's partition outside a transaction is refused, and the memo is left unset.
#[test]
fn a_batch_outside_a_transaction_is_refused_and_not_remembered() {
    use crate::txn::{TransactionManager, TxnConfig};
    use kafka_client::TopicPartition;
    let mut m = TransactionManager::new(TxnConfig::new("tx"));
    let mut memo = 0;
    // Not in a transaction: refused, nothing remembered.
    assert!(
        m.on_batch_partition_used(&TopicPartition::new("t", 0), &mut memo)
            .is_err()
    );
    assert_eq!(memo, 0);
}

/// A queued record of another transaction than the current one is refused as abortable.
#[test]
fn a_record_of_an_earlier_transaction_is_abortable() {
    use crate::txn::{TransactionManager, TxnConfig};
    use kafka_client::TopicPartition;
    let mut m = TransactionManager::new(TxnConfig::new("tx"));
    // Sent in transaction 7, which is not the current one (0).
    let e = m
        .on_queued_partition_used(&TopicPartition::new("t", 0), 7)
        .unwrap_err();
    assert!(e.is_abortable());
}

/// A record failing outside a transaction leaves the state as it was.
#[test]
fn a_record_failing_outside_a_transaction_changes_nothing() {
    use crate::txn::{State, TransactionManager, TxnConfig};
    let mut m = TransactionManager::new(TxnConfig::new("tx"));
    // Outside a transaction nothing changes.
    m.record_failed(None, "record too large".into());
    assert_eq!(m.state(), State::Uninitialized);
}

/// `init_transactions` moves to Initializing until InitProducerId answers; no transaction begins then.
#[test]
fn init_transactions_waits_in_initializing_and_refuses_begin() {
    use crate::txn::{State, TransactionManager, TxnConfig};
    let mut m = TransactionManager::new(TxnConfig::new("tx"));
    assert_eq!(m.state(), State::Uninitialized);
    m.init_transactions().unwrap();
    assert_eq!(
        m.state(),
        State::Initializing,
        "until InitProducerId answers"
    );
    assert!(m.begin_transaction().is_err(), "not Ready yet");
}

/// Transaction version 2 ends transactions with EndTxn v5; feature level 1 is version 1.
#[test]
fn transaction_version_2_ends_with_end_txn_v5() {
    use crate::txn::TransactionVersion;
    assert_eq!(TransactionVersion::V2.end_txn_max_version(), 5);
    assert_eq!(TransactionVersion::from_level(1), TransactionVersion::V1);
}

/// Feature levels 0 and 1 are transaction version 1, level 2 is version 2.
#[test]
fn feature_levels_map_to_transaction_versions() {
    use crate::txn::TransactionVersion;
    assert_eq!(TransactionVersion::from_level(0), TransactionVersion::V1);
    assert_eq!(TransactionVersion::from_level(2), TransactionVersion::V2);
}

/// EndTxn goes up to v4 under transaction version 1, v5 under version 2.
#[test]
fn end_txn_versions_follow_the_transaction_version() {
    use crate::txn::TransactionVersion;
    assert_eq!(TransactionVersion::V1.end_txn_max_version(), 4);
    assert_eq!(TransactionVersion::V2.end_txn_max_version(), 5);
}

/// Each transactional API names its request's API key.
#[test]
fn each_txn_api_names_its_api_key() {
    use crate::txn::TxnApi;
    assert_eq!(TxnApi::EndTxn.api_key(), kafka_proto::ApiKey::EndTxn);
}

/// Errors are classified as the Java client does: retry, fenced, abortable, fatal.
#[test]
fn classify_sorts_errors_into_retry_fenced_abortable_fatal() {
    use crate::txn::{ErrorClass as C, TxnApi as Api, classify};
    use kafka_proto::ErrorCode as E;
    // (api, error, can the epoch be bumped, class)
    let cases = [
        (Api::EndTxn, E::ConcurrentTransactions, true, C::Retry),
        (Api::EndTxn, E::ProducerFenced, true, C::Fenced),
        (Api::Produce, E::InvalidProducerEpoch, true, C::Abortable),
        (Api::EndTxn, E::UnknownProducerId, false, C::Fatal),
    ];
    for (api, code, can_bump_epoch, class) in cases {
        assert_eq!(
            classify(api, code, can_bump_epoch),
            class,
            "{api:?} {code:?} can_bump_epoch={can_bump_epoch}"
        );
    }
}

/// A reason a transaction cannot be prepared reads as a sentence.
#[test]
fn not_preparable_reasons_read_as_sentences() {
    use crate::txn::NotPreparableReason;
    assert_eq!(
        NotPreparableReason::PartitionsPending.to_string(),
        "partitions or offsets are still being added to the transaction"
    );
}
