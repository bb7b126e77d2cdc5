//! The transaction coordinator driver ([`TxnDriver`]) and the resume path
//! ([`commit_prepared`]) against kafka-mock's coordinator: coordinator
//! moves, timeouts of each coordinator request, CONCURRENT_TRANSACTIONS
//! with escalating backoff, fencing, the transaction-timeout check and
//! every resume outcome.
//!
//! The prepared transaction is a real one: a transactional producer sends
//! a record to "t", prepares and is dropped (the crash); the mock's
//! coordinator holds it open, answers DescribeTransactions "Ongoing" and
//! bumps the epoch at EndTxn (transaction version 2). A coordinator move
//! is the mock's own: the EndTxn is held, the coordinator moved, and the
//! released request answered NOT_COORDINATOR by the old coordinator. A
//! timeout is a lost answer: the request is applied, the client never
//! hears. Fencing is a new producer of the same transactional id. Error
//! codes the broker gives only in a race (CONCURRENT_TRANSACTIONS, and
//! INVALID_TXN_STATE or PRODUCER_FENCED for a transaction DescribeTransactions
//! saw open) are queued error faults; one answer the broker would not give
//! at all is written by the test
//! (`end_txn_waits_for_a_batch_appended_while_the_driver_probes`).

use crate::txn::*;
use crate::{ProducerConfig, ProducerRecord, TransactionalProducer};
use kafka_client::{Cluster, ClusterConfig, ConnectionConfig};
use kafka_mock::{
    CoordinatorKind, Fault, FaultAction, HoldHandle, MockCluster, MockConfig, Response, TxnState,
};
use kafka_proto::messages::{EndTxnRequest, EndTxnResponse};
use kafka_proto::{ApiKey, ErrorCode as E};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// (broker, api, the producer epoch of an EndTxn or -1, arrival)
type Call = (i32, ApiKey, i16, Instant);

/// A two-broker mock, the requests the code under test sent, and a
/// cluster client for it.
struct Peer {
    mock: MockCluster,
    log: Arc<Mutex<Vec<Call>>>,
}

impl Peer {
    async fn start(config: MockConfig) -> Self {
        let mock = MockCluster::start(MockConfig {
            brokers: 2,
            ..config
        })
        .await
        .unwrap();
        mock.create_topic("t", 1).unwrap();
        Self {
            mock,
            log: Arc::default(),
        }
    }

    /// From now on, every request is listed (before any fault applies).
    fn record(&self) {
        let log = self.log.clone();
        self.mock.set_interceptor(Arc::new(move |r| {
            let epoch = r
                .decode::<EndTxnRequest>()
                .map_or(-1, |end| end.producer_epoch);
            log.lock()
                .unwrap()
                .push((r.broker, r.api, epoch, Instant::now()));
            None
        }));
    }

    fn calls(&self, api: ApiKey) -> Vec<(i32, i16, Instant)> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.1 == api)
            .map(|l| (l.0, l.2, l.3))
            .collect()
    }

    async fn cluster(&self) -> Arc<Cluster> {
        let mut cfg = ClusterConfig::new(&self.mock.bootstrap());
        cfg.connection = ConnectionConfig {
            request_timeout: Duration::from_secs(2),
            connect_timeout: Duration::from_secs(5),
            ..Default::default()
        };
        Cluster::connect(cfg).await.unwrap()
    }

    /// A transaction of "tx" with one record, prepared by a producer that
    /// then crashed; the coordinator holds it open. Requests are listed
    /// from here on.
    async fn prepared(&self) -> PreparedTransaction {
        let producer = TransactionalProducer::connect(
            ProducerConfig::from_properties([
                ("bootstrap.servers", self.mock.bootstrap().as_str()),
                ("transactional.id", "tx"),
                ("linger.ms", "0"),
            ])
            .unwrap(),
        )
        .await
        .unwrap();
        producer.init_transactions().await.unwrap();
        producer.begin_transaction().unwrap();
        producer
            .send(ProducerRecord::new("t").value("v"))
            .await
            .unwrap();
        let prepared = producer.prepare_transaction().await.unwrap();
        drop(producer);
        assert_eq!(self.mock.transaction_state("tx"), Some(TxnState::Ongoing));
        self.record();
        prepared
    }

    fn coordinator(&self) -> i32 {
        self.mock
            .coordinator(CoordinatorKind::Transaction, "tx")
            .unwrap()
    }

    /// Holds the next EndTxn; once held, moves the coordinator to the other
    /// broker and lets the old one answer it (NOT_COORDINATOR). Returns
    /// the old and the new coordinator.
    fn move_coordinator_at_next_end_txn(&self) -> (HoldHandle, i32) {
        let gate = HoldHandle::new();
        self.mock
            .inject(Fault::new(FaultAction::Hold(gate.clone())).api(ApiKey::EndTxn));
        (gate, self.coordinator())
    }

    async fn then_move(&self, gate: &HoldHandle, from: i32) -> i32 {
        bounded(gate.wait_held(1)).await;
        let to = 3 - from;
        self.mock
            .move_coordinator(CoordinatorKind::Transaction, "tx", to)
            .unwrap();
        gate.release_oldest();
        to
    }
}

async fn bounded<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
        .expect("the awaited condition within 30 s")
}

/// A driver with the prepared transaction resumed (started), ready to
/// commit.
fn resumed_driver(cluster: Arc<Cluster>, prepared: &PreparedTransaction) -> TxnDriver {
    let driver = TxnDriver::new(cluster, TxnConfig::new("tx"));
    driver.lock().set_jitter_factor(1.0);
    driver.lock().resume_prepared(prepared).unwrap();
    driver
}

#[tokio::test]
async fn coordinator_moves_and_an_end_txn_timeout_retries_the_same_end_txn() {
    // EndTxn at the first coordinator: NOT_COORDINATOR (it moved); at the
    // second the first EndTxn is applied but its answer lost (a timeout,
    // outcome unknown), and the retry is answered as the coordinator
    // answers a retry of a completed commit.
    let peer = Peer::start(MockConfig::default()).await;
    let prepared = peer.prepared().await;
    let epoch = prepared.producer_epoch;
    let driver = resumed_driver(peer.cluster().await, &prepared);
    let (gate, first) = peer.move_coordinator_at_next_end_txn();
    let commit = driver.commit_transaction(Duration::from_secs(10));
    let second = async {
        let second = peer.then_move(&gate, first).await;
        peer.mock
            .inject(Fault::new(FaultAction::DropResponse).api(ApiKey::EndTxn));
        second
    };
    let (committed, second) = tokio::join!(commit, second);
    committed.unwrap();
    let ends = peer.calls(ApiKey::EndTxn);
    assert_eq!(
        ends.iter().map(|e| (e.0, e.1)).collect::<Vec<_>>(),
        vec![(first, epoch), (second, epoch), (second, epoch)],
        "same EndTxn, new coordinator"
    );
    assert!(
        peer.calls(ApiKey::FindCoordinator).len() >= 3,
        "rediscovered after NOT_COORDINATOR and after the timeout"
    );
    assert!(
        peer.calls(ApiKey::InitProducerId).is_empty(),
        "a resumed transaction never calls InitProducerId"
    );
    assert_eq!(
        peer.mock.transaction_state("tx"),
        Some(TxnState::CompleteCommit)
    );
    let m = driver.lock();
    assert_eq!(m.state(), State::Ready);
    assert_eq!(
        m.producer_id_and_epoch(),
        ProducerIdAndEpoch {
            producer_id: prepared.producer_id,
            epoch: epoch + 1
        },
        "TV2: adopted from EndTxn v5"
    );
}

#[tokio::test]
async fn timeouts_of_find_coordinator_and_init_producer_id_are_retried() {
    let peer = Peer::start(MockConfig::default()).await;
    peer.record();
    peer.mock
        .inject(Fault::new(FaultAction::DropResponse).api(ApiKey::FindCoordinator));
    peer.mock
        .inject(Fault::new(FaultAction::DropResponse).api(ApiKey::InitProducerId));
    let driver = TxnDriver::new(peer.cluster().await, TxnConfig::new("tx"));
    driver
        .init_transactions(Duration::from_secs(10))
        .await
        .unwrap();
    assert!(peer.calls(ApiKey::FindCoordinator).len() >= 2);
    assert_eq!(peer.calls(ApiKey::InitProducerId).len(), 2);
    let m = driver.lock();
    assert_eq!(m.state(), State::Ready);
    assert_eq!(m.transaction_version(), TransactionVersion::V2);
}

#[tokio::test]
async fn concurrent_transactions_is_retried_with_escalating_backoff() {
    let peer = Peer::start(MockConfig::default()).await;
    let prepared = peer.prepared().await;
    peer.mock.inject(
        Fault::new(FaultAction::Error(E::ConcurrentTransactions))
            .api(ApiKey::EndTxn)
            .times(3),
    );
    let driver = resumed_driver(peer.cluster().await, &prepared);
    driver
        .commit_transaction(Duration::from_secs(10))
        .await
        .unwrap();
    let ends = peer.calls(ApiKey::EndTxn);
    assert_eq!(ends.len(), 4);
    let gaps: Vec<u128> = ends
        .windows(2)
        .map(|w| (w[1].2 - w[0].2).as_millis())
        .collect();
    // The waits escalate: each at least its backoff (a sleep is never
    // shorter). The upper bound catches backoffs ten times too long, with
    // room for a loaded machine; the exact backoffs are the unit test's.
    for (gap, min) in gaps.iter().zip([100, 200, 400]) {
        assert!(*gap >= min && *gap < 2 * min + 1000, "gaps {gaps:?}");
    }
    assert_eq!(
        peer.mock.transaction_state("tx"),
        Some(TxnState::CompleteCommit)
    );
}

#[tokio::test]
async fn producer_fenced_is_fatal() {
    let peer = Peer::start(MockConfig::default()).await;
    let prepared = peer.prepared().await;
    // A new producer of "tx" fences the prepared one: its InitProducerId
    // aborts the open transaction and bumps the epoch.
    let successor = TxnDriver::new(peer.cluster().await, TxnConfig::new("tx"));
    successor
        .init_transactions(Duration::from_secs(10))
        .await
        .unwrap();
    assert!(successor.lock().producer_id_and_epoch().epoch > prepared.producer_epoch);
    let driver = resumed_driver(peer.cluster().await, &prepared);
    let e = driver
        .commit_transaction(Duration::from_secs(10))
        .await
        .unwrap_err();
    assert_eq!(
        e,
        TransactionError::Fenced {
            api: TxnApi::EndTxn,
            version: 5,
            error: E::ProducerFenced
        }
    );
    assert_eq!(driver.lock().state(), State::FatalError);
    assert!(driver.begin_transaction().is_err());
    assert_eq!(peer.calls(ApiKey::EndTxn).len(), 1, "never retried");
    assert_ne!(
        peer.mock.transaction_state("tx"),
        Some(TxnState::CompleteCommit),
        "the fenced commit committed nothing"
    );
}

#[tokio::test]
async fn transaction_timeout_is_checked_against_the_broker_maximum() {
    let peer = Peer::start(MockConfig {
        max_transaction_timeout_ms: 1000,
        ..MockConfig::default()
    })
    .await;
    peer.mock
        .move_coordinator(CoordinatorKind::Transaction, "tx", 2)
        .unwrap();
    peer.record();
    let driver = TxnDriver::new(peer.cluster().await, TxnConfig::new("tx"));
    let e = driver
        .init_transactions(Duration::from_secs(10))
        .await
        .unwrap_err();
    assert_eq!(
        e,
        TransactionError::TransactionTimeoutTooLarge {
            requested_ms: 60_000,
            broker_max_ms: 1000
        }
    );
    assert!(
        e.to_string().contains("60000") && e.to_string().contains("1000"),
        "{e}"
    );
    assert!(peer.calls(ApiKey::InitProducerId).is_empty());
    assert_eq!(
        peer.calls(ApiKey::DescribeConfigs)[0].0,
        2,
        "asked the coordinator"
    );
}

/// How the EndTxn of a resumed commit goes wrong.
#[derive(Debug, Clone, Copy)]
enum Trouble {
    /// The first EndTxns are answered with these errors.
    Errors(&'static [E]),
    /// The first EndTxn is applied and its answer lost.
    AnswerLost,
    /// The coordinator moves while the first EndTxn is on its way.
    CoordinatorMoved,
}

impl Trouble {
    /// EndTxns that go wrong.
    fn count(self) -> usize {
        match self {
            Trouble::Errors(errors) => errors.len(),
            Trouble::AnswerLost | Trouble::CoordinatorMoved => 1,
        }
    }
}

#[tokio::test]
async fn resume_outcomes_against_the_peer() {
    let cases: Vec<(Trouble, ResumeOutcome)> = vec![
        (Trouble::Errors(&[]), ResumeOutcome::Committed),
        (
            Trouble::Errors(&[E::InvalidTxnState]),
            ResumeOutcome::AbortedByBroker {
                error: E::InvalidTxnState,
                state: Some(TransactionState::Ongoing),
            },
        ),
        (
            Trouble::Errors(&[E::ProducerFenced]),
            ResumeOutcome::Fenced {
                error: E::ProducerFenced,
                state: Some(TransactionState::Ongoing),
            },
        ),
        (
            Trouble::Errors(&[E::ConcurrentTransactions, E::ConcurrentTransactions]),
            ResumeOutcome::Committed,
        ),
        (Trouble::AnswerLost, ResumeOutcome::Committed),
        (Trouble::CoordinatorMoved, ResumeOutcome::Committed),
    ];
    for (trouble, want) in cases {
        let peer = Peer::start(MockConfig::default()).await;
        let prepared = peer.prepared().await;
        let cluster = peer.cluster().await;
        let options = ResumeOptions::default();
        let resume = commit_prepared(&cluster, &prepared, &options);
        let got = match trouble {
            Trouble::Errors(errors) => {
                for error in errors {
                    peer.mock
                        .inject(Fault::new(FaultAction::Error(*error)).api(ApiKey::EndTxn));
                }
                resume.await
            }
            Trouble::AnswerLost => {
                peer.mock
                    .inject(Fault::new(FaultAction::DropResponse).api(ApiKey::EndTxn));
                resume.await
            }
            Trouble::CoordinatorMoved => {
                let (gate, first) = peer.move_coordinator_at_next_end_txn();
                tokio::join!(resume, peer.then_move(&gate, first)).0
            }
        }
        .unwrap();
        assert_eq!(got, want, "{trouble:?}");
        let finished = !matches!(
            want,
            ResumeOutcome::AbortedByBroker { .. } | ResumeOutcome::Fenced { .. }
        );
        let ends = peer.calls(ApiKey::EndTxn);
        assert_eq!(
            ends.len(),
            trouble.count() + usize::from(finished),
            "{trouble:?}"
        );
        assert!(
            ends.iter().all(|e| e.1 == prepared.producer_epoch),
            "always the prepared epoch"
        );
        assert!(
            peer.calls(ApiKey::InitProducerId).is_empty(),
            "never InitProducerId"
        );
        let state = peer.mock.transaction_state("tx");
        if finished {
            assert_eq!(state, Some(TxnState::CompleteCommit), "{trouble:?}");
        } else {
            assert_eq!(state, Some(TxnState::Ongoing), "{trouble:?}");
        }
    }
}

/// EndTxn never overtakes a batch: a record appended (and the commit begun)
/// between the driver's look at the producer's incomplete batches and its
/// pick of the next request must hold the EndTxn until that batch is done.
#[tokio::test]
async fn end_txn_waits_for_a_batch_appended_while_the_driver_probes() {
    use std::sync::atomic::{AtomicU8, Ordering};
    let peer = Peer::start(MockConfig::default()).await;
    peer.record();
    let mut driver = TxnDriver::new(peer.cluster().await, TxnConfig::new("tx"));
    let manager = driver.manager().clone();
    // 0: the user has not appended yet; 1: appended, batch incomplete;
    // 2: batch acknowledged.
    let batch = Arc::new(AtomicU8::new(0));
    let probe_batch = batch.clone();
    driver.set_incomplete_batches_probe(Arc::new(move || {
        let b = probe_batch.load(Ordering::SeqCst);
        let mut m = manager.lock().unwrap();
        if b == 0 && m.state() == State::InTransaction {
            // The probe read "nothing incomplete"; before the driver picks
            // its request, the user appends a record and commits.
            m.on_partition_used(&crate::TopicPartition::new("t", 0))
                .unwrap();
            m.commit_transaction().unwrap();
            probe_batch.store(1, Ordering::SeqCst);
        }
        b == 1
    }));
    driver
        .init_transactions(Duration::from_secs(10))
        .await
        .unwrap();
    // The batch exists only in the probe: it never reaches the mock, whose
    // coordinator would refuse to commit a transaction with no partition
    // (INVALID_TXN_STATE). The test answers the EndTxn as a coordinator
    // that had the batch would: the commit done, the epoch bumped.
    let ProducerIdAndEpoch { producer_id, epoch } = driver.lock().producer_id_and_epoch();
    peer.mock.inject(
        Fault::new(FaultAction::Respond(Response::new(EndTxnResponse {
            producer_id,
            producer_epoch: epoch + 1,
            ..Default::default()
        })))
        .api(ApiKey::EndTxn),
    );
    driver.begin_transaction().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    assert!(!driver.run_once(deadline).await, "EndTxn held");
    assert_eq!(driver.lock().state(), State::CommittingTransaction);
    assert!(
        !driver.run_once(deadline).await,
        "still held: batch incomplete"
    );
    assert!(peer.calls(ApiKey::EndTxn).is_empty());
    batch.store(2, Ordering::SeqCst);
    assert!(driver.run_once(deadline).await, "EndTxn sent");
    assert_eq!(peer.calls(ApiKey::EndTxn).len(), 1);
    assert_eq!(driver.lock().state(), State::Ready);
}

/// A caller that gives up on `init_transactions` while its InitProducerId is
/// in flight (dropping the future) leaves no request stuck "in flight": the
/// request is put back, and calling `init_transactions` again completes.
#[tokio::test]
async fn an_abandoned_request_is_retried_not_left_in_flight() {
    let peer = Peer::start(MockConfig::default()).await;
    peer.record();
    let gate = HoldHandle::new();
    peer.mock
        .inject(Fault::new(FaultAction::Hold(gate.clone())).api(ApiKey::InitProducerId));
    let driver = TxnDriver::new(peer.cluster().await, TxnConfig::new("tx"));
    {
        let init = driver.init_transactions(Duration::from_secs(10));
        tokio::pin!(init);
        tokio::select! {
            r = &mut init => panic!("the held InitProducerId cannot complete: {r:?}"),
            _ = gate.wait_held(1) => {} // in flight: the caller gives up (drops `init`)
        }
    }
    assert!(
        !driver.lock().has_in_flight_request(),
        "the abandoned request was put back"
    );
    // The abandoned request is never answered: its connection closes.
    gate.release_oldest_with(FaultAction::DisconnectBefore);
    driver
        .init_transactions(Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!(driver.lock().state(), State::Ready);
    assert_eq!(peer.calls(ApiKey::InitProducerId).len(), 2, "sent again");
    assert_eq!(peer.mock.transaction_state("tx"), Some(TxnState::Empty));
}
