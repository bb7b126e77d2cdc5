//! Error injection against the full [`TransactionalProducer`] (sender,
//! accumulator, coordinator driver and manager together) talking to
//! kafka-mock ([`Broker`]: one node that is leader and transaction
//! coordinator, with transaction version 1 or 2 finalized; no JVM,
//! deterministic), whose coordinator (InitProducerId with KIP-360 bumps,
//! AddPartitionsToTxn, EndTxn, v5 bumping the epoch) and idempotence rules
//! (a newer epoch starts at sequence 0, the same epoch continues the last
//! sequence, an older epoch is refused) were checked against Kafka 4.4.
//!
//! An interceptor writes every request other than ApiVersions/Metadata to
//! a trace such as `EndTxn(e0,abort,v4)`, with the fault the test scripted
//! for it (`=CODE` for an error, ` held` for a request never answered),
//! and the tests assert the exact sequence of requests the broker saw (an
//! error the broker's own rules answer is counted in the producer's
//! metrics):
//!
//! a. OUT_OF_ORDER_SEQUENCE_NUMBER on Produce in a transaction: abortable,
//!    no epoch bump of its own (librdkafka #3575); after the abort TV1 bumps
//!    with InitProducerId(pid, epoch), TV2 adopts EndTxn v5's epoch.
//! b. A topic that drops out of metadata (UNKNOWN_TOPIC_OR_PARTITION) and
//!    returns keeps its sequences.
//! c. A timeout of each coordinator RPC (FindCoordinator, InitProducerId,
//!    AddPartitionsToTxn, EndTxn) retries the same request; a user call that
//!    times out returns `Timeout` and repeating it completes it; after an
//!    EndTxn of unknown outcome (TV1) the epoch is bumped.
//! d. CONCURRENT_TRANSACTIONS on AddPartitionsToTxn and EndTxn is retried.
//! e. A Produce whose outcome is unknown (request timeouts until
//!    `delivery.timeout.ms`): abortable, and the epoch is bumped before the
//!    next transaction, so a late Produce of the aborted transaction can
//!    never join the next one.
//! f. Transaction version 2's race at the start of a transaction: the
//!    epoch's first batch of a partition refused with
//!    CONCURRENT_TRANSACTIONS (the broker adds the partition to the
//!    transaction while the previous transaction's markers are still being
//!    written), the batch pipelined behind it refused with
//!    OUT_OF_ORDER_SEQUENCE_NUMBER (the partition holds no state of the new
//!    epoch: "Expected sequence 0 for transactions v2 idempotent producer
//!    with no existing state"): both are retried, in order.

use kafka_mock::{FaultAction, HoldHandle, MockCluster, MockConfig, TransactionVersion};
use kafka_producer::internals::State;
use kafka_producer::txn::TransactionError;
use kafka_producer::{ProduceError, ProducerConfig, ProducerRecord, TransactionalProducer};
use kafka_proto::frame::{FrameDecoder, decode_response_frame, encode_request_frame};
use kafka_proto::messages::*;
use kafka_proto::record::RecordBatch;
use kafka_proto::{ApiKey, ErrorCode as E};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

const TOPIC: &str = "t";
/// The first producer id kafka-mock hands out.
const PID: i64 = 1000;

/// What the broker does with one request of an API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    /// Answer with this error (nothing is written or changed).
    Error(E),
    /// Never answer (the client's request timeout fires and closes the
    /// connection; the request is dropped unserved).
    Hold,
    /// Hold the request on [`Broker::gate`] until the test releases it
    /// with this error (an answer that must come after a later request).
    HoldThenError(E),
}

/// What the interceptor keeps.
#[derive(Debug, Default)]
struct St {
    tv2: bool,
    /// Metadata and Produce answer UNKNOWN_TOPIC_OR_PARTITION.
    topic_gone: bool,
    /// Every Produce is held (never answered).
    hold_produce: bool,
    faults: HashMap<ApiKey, VecDeque<Fault>>,
    trace: Vec<String>,
    /// (api, when) of every request served.
    times: Vec<(ApiKey, Instant)>,
    metadata_while_gone: usize,
    /// Requests of versions the transaction version does not allow.
    violations: Vec<String>,
    /// The last Produce request held without an answer, and its version.
    last_held_produce: Option<(ProduceRequest, i16)>,
}

impl St {
    fn fault(&mut self, api: ApiKey) -> Option<Fault> {
        self.faults.get_mut(&api).and_then(|q| q.pop_front())
    }
}

/// The scripted broker (node 1 of kafka-mock).
struct Broker {
    cluster: MockCluster,
    st: Arc<Mutex<St>>,
    /// Holds the requests scripted [`Fault::HoldThenError`].
    gate: HoldHandle,
}

fn ep(e: i16) -> String {
    format!("e{e}")
}

/// The trace entry of one request, with the fault scripted for it.
fn note(s: String, fault: Option<Fault>) -> String {
    match fault {
        Some(Fault::Hold) => format!("{s} held"),
        Some(Fault::Error(e) | Fault::HoldThenError(e)) => format!("{s}={}", e.name()),
        None => s,
    }
}

impl Broker {
    async fn start(tv2: bool, partitions: i32) -> Self {
        let cluster = MockCluster::start(MockConfig {
            transaction_version: if tv2 {
                TransactionVersion::V2
            } else {
                TransactionVersion::V1
            },
            ..MockConfig::default()
        })
        .await
        .unwrap();
        cluster.create_topic(TOPIC, partitions).unwrap();
        let st = Arc::new(Mutex::new(St {
            tv2,
            ..Default::default()
        }));
        let gate = HoldHandle::new();
        let never = HoldHandle::new();
        let (shared, held) = (st.clone(), gate.clone());
        cluster.set_interceptor(Arc::new(move |r| {
            let mut st = shared.lock().unwrap_or_else(|p| p.into_inner());
            st.times.push((r.api, Instant::now()));
            let v = r.version;
            let fault = match r.api {
                // The transaction.max.timeout.ms check reads the broker's config.
                ApiKey::ApiVersions | ApiKey::DescribeConfigs => None,
                ApiKey::Metadata if st.topic_gone => {
                    st.metadata_while_gone += 1;
                    Some(Fault::Error(E::UnknownTopicOrPartition))
                }
                ApiKey::Metadata => None,
                ApiKey::Produce => {
                    let req = r.decode::<ProduceRequest>()?;
                    let fault = st.fault(ApiKey::Produce).or(if st.hold_produce {
                        Some(Fault::Hold)
                    } else if st.topic_gone {
                        Some(Fault::Error(E::UnknownTopicOrPartition))
                    } else {
                        None
                    });
                    if req.transactional_id.as_deref() != Some("tx") {
                        st.violations
                            .push("Produce without the transactional id".into());
                    }
                    if !st.tv2 && v > 11 {
                        st.violations
                            .push(format!("TV1 caps Produce at v11, got v{v}"));
                    }
                    for pd in req.topic_data.iter().flat_map(|t| &t.partition_data) {
                        let b = RecordBatch::decode(pd.records.as_deref()?).ok()?;
                        if !b.is_transactional || b.producer_id != PID {
                            st.violations.push(format!("{b:?} not of the transaction"));
                        }
                        let s = format!(
                            "Produce({},p{},s{},n{})",
                            ep(b.producer_epoch),
                            pd.index,
                            b.base_sequence,
                            b.records.len()
                        );
                        st.trace.push(note(s, fault));
                    }
                    if fault == Some(Fault::Hold) {
                        st.last_held_produce = Some((req, v));
                    }
                    fault
                }
                ApiKey::FindCoordinator => {
                    let fault = st.fault(r.api);
                    st.trace.push(note("FindCoordinator".into(), fault));
                    fault
                }
                ApiKey::InitProducerId => {
                    let req = r.decode::<InitProducerIdRequest>()?;
                    let fault = st.fault(r.api);
                    let s = format!("InitProducerId({},{})", req.producer_id, req.producer_epoch);
                    st.trace.push(note(s, fault));
                    fault
                }
                ApiKey::AddPartitionsToTxn => {
                    let req = r.decode::<AddPartitionsToTxnRequest>()?;
                    if st.tv2 || v > 3 {
                        st.violations.push(format!("AddPartitionsToTxn v{v}"));
                    }
                    let parts: Vec<i32> = req
                        .v3_and_below_topics
                        .iter()
                        .flat_map(|t| t.partitions.iter().copied())
                        .collect();
                    let fault = st.fault(r.api);
                    let s = format!(
                        "AddPartitions({},{parts:?})",
                        ep(req.v3_and_below_producer_epoch)
                    );
                    st.trace.push(note(s, fault));
                    fault
                }
                ApiKey::EndTxn => {
                    let req = r.decode::<EndTxnRequest>()?;
                    if (v >= 5) != st.tv2 {
                        st.violations.push(format!("EndTxn v{v}"));
                    }
                    let what = if req.committed { "commit" } else { "abort" };
                    let fault = st.fault(r.api);
                    let s = format!("EndTxn({},{what},v{v})", ep(req.producer_epoch));
                    st.trace.push(note(s, fault));
                    fault
                }
                other => {
                    st.violations.push(format!("unexpected request {other:?}"));
                    None
                }
            };
            fault.map(|f| match f {
                Fault::Error(e) => FaultAction::Error(e),
                Fault::Hold => FaultAction::Hold(never.clone()),
                Fault::HoldThenError(_) => FaultAction::Hold(held.clone()),
            })
        }));
        Self { cluster, st, gate }
    }

    fn st(&self) -> MutexGuard<'_, St> {
        self.st.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn inject(&self, api: ApiKey, faults: &[Fault]) {
        self.st()
            .faults
            .entry(api)
            .or_default()
            .extend(faults.iter().copied());
    }

    /// The trace without FindCoordinator (and no request the transaction
    /// version forbids).
    fn trace(&self) -> Vec<String> {
        let st = self.st();
        assert!(st.violations.is_empty(), "{:?}", st.violations);
        st.trace
            .iter()
            .filter(|t| !t.starts_with("FindCoordinator"))
            .cloned()
            .collect()
    }

    /// How many requests of `api` the broker received.
    fn count(&self, api: ApiKey) -> usize {
        self.cluster
            .requests()
            .iter()
            .filter(|r| r.api == api)
            .count()
    }

    fn times(&self, api: ApiKey) -> Vec<Instant> {
        self.st()
            .times
            .iter()
            .filter(|t| t.0 == api)
            .map(|t| t.1)
            .collect()
    }

    /// The records written to a partition (transaction markers not counted).
    fn records(&self, partition: i32) -> usize {
        let batches = self.cluster.batches(TOPIC, partition).unwrap();
        batches
            .iter()
            .filter(|b| !b.is_control)
            .map(|b| b.records.len())
            .sum()
    }

    fn config(&self, extra: &[(&str, &str)]) -> ProducerConfig {
        let bootstrap = self.cluster.bootstrap();
        let mut props: Vec<(&str, &str)> = vec![
            ("bootstrap.servers", &bootstrap),
            ("transactional.id", "tx"),
            ("request.timeout.ms", "400"),
            ("retry.backoff.ms", "20"),
            ("max.block.ms", "10000"),
            ("linger.ms", "0"),
        ];
        props.extend_from_slice(extra);
        ProducerConfig::from_properties(props).unwrap()
    }

    async fn producer(&self, extra: &[(&str, &str)]) -> TransactionalProducer {
        let p = TransactionalProducer::connect(self.config(extra))
            .await
            .unwrap();
        p.init_transactions().await.unwrap();
        p
    }

    /// Sends `request` again, as a late delivery from the network would,
    /// on a connection of its own; the broker's answer per partition.
    async fn deliver_late(&self, request: &ProduceRequest, version: i16) -> Vec<E> {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let addr = self.cluster.bootstrap();
        let mut sock = tokio::net::TcpStream::connect(addr.as_str()).await.unwrap();
        let frame = encode_request_frame(request, version, 1, Some("late")).unwrap();
        sock.write_all(&frame).await.unwrap();
        let mut dec = FrameDecoder::default();
        let mut buf = bytes::BytesMut::new();
        let body = loop {
            if let Some(body) = dec.decode(&mut buf).unwrap() {
                break body;
            }
            assert_ne!(sock.read_buf(&mut buf).await.unwrap(), 0, "answered");
        };
        let (_, resp) = decode_response_frame::<ProduceResponse>(&body, version).unwrap();
        resp.responses
            .iter()
            .flat_map(|t| &t.partition_responses)
            .map(|p| E::from(p.error_code))
            .collect()
    }
}

fn rec(partition: i32, v: &str) -> ProducerRecord {
    ProducerRecord::new(TOPIC)
        .partition(partition)
        .value(v.to_string())
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

/// Waits (polling, bounded) until `cond` holds.
async fn until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

// ---------------------------------------------------------------- (a)

async fn out_of_order_sequence(tv2: bool) {
    let broker = Broker::start(tv2, 1).await;
    let p = broker.producer(&[]).await;
    p.begin_transaction().unwrap();
    p.send(rec(0, "a")).await.unwrap();
    broker.inject(
        ApiKey::Produce,
        &[Fault::Error(E::OutOfOrderSequenceNumber)],
    );
    let e = p.send(rec(0, "b")).await.unwrap_err();
    assert!(
        matches!(
            &e,
            ProduceError::Broker {
                error: E::OutOfOrderSequenceNumber,
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(p.state(), State::AbortableError);
    // No epoch bump of its own: no InitProducerId, the epoch unchanged.
    assert_eq!(p.producer_id_and_epoch().epoch, 0);
    assert_eq!(broker.count(ApiKey::InitProducerId), 1);
    let e = p.commit_transaction().await.unwrap_err();
    assert!(e.is_abortable(), "{e:?}");
    let e = p.send(rec(0, "refused")).await.unwrap_err();
    assert!(
        matches!(e, ProduceError::Transaction(ref t) if t.is_abortable()),
        "{e:?}"
    );
    p.abort_transaction().await.unwrap();
    assert_eq!(p.state(), State::Ready);
    assert_eq!(p.producer_id_and_epoch().epoch, 1);
    p.begin_transaction().unwrap();
    p.send(rec(0, "c")).await.unwrap();
    p.commit_transaction().await.unwrap();
    let want = if tv2 {
        s(&[
            "InitProducerId(-1,-1)",
            "Produce(e0,p0,s0,n1)",
            "Produce(e0,p0,s1,n1)=OUT_OF_ORDER_SEQUENCE_NUMBER",
            "EndTxn(e0,abort,v5)",
            // The epoch EndTxn v5 returned; sequences restart at 0.
            "Produce(e1,p0,s0,n1)",
            "EndTxn(e1,commit,v5)",
        ])
    } else {
        s(&[
            "InitProducerId(-1,-1)",
            "AddPartitions(e0,[0])",
            "Produce(e0,p0,s0,n1)",
            "Produce(e0,p0,s1,n1)=OUT_OF_ORDER_SEQUENCE_NUMBER",
            "EndTxn(e0,abort,v4)",
            // Java TV1 with bump support: the client bumps after the abort.
            "InitProducerId(1000,0)",
            "AddPartitions(e1,[0])",
            "Produce(e1,p0,s0,n1)",
            "EndTxn(e1,commit,v4)",
        ])
    };
    assert_eq!(broker.trace(), want);
    p.close(Duration::from_secs(5)).await.unwrap();
}

#[tokio::test]
async fn out_of_order_sequence_is_abortable_without_its_own_bump_tv1() {
    out_of_order_sequence(false).await;
}

#[tokio::test]
async fn out_of_order_sequence_is_abortable_without_its_own_bump_tv2() {
    out_of_order_sequence(true).await;
}

// ---------------------------------------------------------------- (b)

/// TV1 (one epoch across transactions): sequences of a partition continue
/// across a window in which the topic is unknown to metadata and Produce.
#[tokio::test]
async fn a_topic_leaving_metadata_and_returning_keeps_its_sequences() {
    let broker = Broker::start(false, 2).await;
    let p = broker.producer(&[("metadata.max.age.ms", "50")]).await;
    p.begin_transaction().unwrap();
    p.send(rec(0, "a")).await.unwrap();
    p.send(rec(1, "x")).await.unwrap();
    p.send(rec(0, "b")).await.unwrap();
    p.commit_transaction().await.unwrap();

    broker.st().topic_gone = true;
    until("metadata refreshes while the topic is gone", || {
        broker.st().metadata_while_gone >= 2
    })
    .await;
    p.begin_transaction().unwrap();
    let c = p.send(rec(0, "c"));
    until("a Produce refused or more metadata while gone", || {
        let st = broker.st();
        st.trace
            .iter()
            .any(|t| t.ends_with("UNKNOWN_TOPIC_OR_PARTITION"))
            || st.metadata_while_gone >= 6
    })
    .await;
    broker.st().topic_gone = false;
    c.await.unwrap();
    p.send(rec(1, "y")).await.unwrap();
    p.commit_transaction().await.unwrap();

    let produce: Vec<String> = broker
        .trace()
        .into_iter()
        .filter(|t| t.starts_with("Produce"))
        .collect();
    let accepted: Vec<&str> = produce
        .iter()
        .filter(|t| !t.contains('='))
        .map(String::as_str)
        .collect();
    assert_eq!(
        accepted,
        [
            "Produce(e0,p0,s0,n1)",
            "Produce(e0,p1,s0,n1)",
            "Produce(e0,p0,s1,n1)",
            "Produce(e0,p0,s2,n1)",
            "Produce(e0,p1,s1,n1)",
        ],
        "all: {produce:?}"
    );
    for refused in produce.iter().filter(|t| t.contains('=')) {
        assert_eq!(
            refused, "Produce(e0,p0,s2,n1)=UNKNOWN_TOPIC_OR_PARTITION",
            "a refused batch is retried with its sequence"
        );
    }
    eprintln!("trace: {:?}", broker.trace());
    p.close(Duration::from_secs(5)).await.unwrap();
}

// ---------------------------------------------------------------- (c)

/// TV1: a timeout of each coordinator RPC retries the same request.
#[tokio::test]
async fn a_timeout_of_each_coordinator_rpc_retries_the_same_request() {
    let broker = Broker::start(false, 1).await;
    // The first FindCoordinator is the transaction.max.timeout.ms check's.
    broker.inject(ApiKey::FindCoordinator, &[Fault::Hold, Fault::Hold]);
    broker.inject(ApiKey::InitProducerId, &[Fault::Hold]);
    broker.inject(ApiKey::AddPartitionsToTxn, &[Fault::Hold]);
    broker.inject(ApiKey::EndTxn, &[Fault::Hold]);
    let p = broker.producer(&[]).await;
    p.begin_transaction().unwrap();
    p.send(rec(0, "a")).await.unwrap();
    p.commit_transaction().await.unwrap();
    assert_eq!(
        broker.trace(),
        s(&[
            "InitProducerId(-1,-1) held",
            "InitProducerId(-1,-1)",
            "AddPartitions(e0,[0]) held",
            "AddPartitions(e0,[0])",
            "Produce(e0,p0,s0,n1)",
            "EndTxn(e0,commit,v4) held",
            "EndTxn(e0,commit,v4)",
            // The held EndTxn may still arrive: the epoch is bumped so that
            // it cannot end the next transaction (same epoch under TV1).
            "InitProducerId(1000,0)",
        ])
    );
    let finds = broker
        .st()
        .trace
        .iter()
        .filter(|t| t.starts_with("FindCoordinator"))
        .cloned()
        .collect::<Vec<_>>();
    assert!(
        finds.len() >= 5 && finds[..2] == s(&["FindCoordinator held"; 2]),
        "rediscovered after every timeout: {finds:?}"
    );
    assert_eq!(p.state(), State::Ready);
    p.close(Duration::from_secs(5)).await.unwrap();
}

/// Calls a timed-out operation again until it completes (at most 9 more
/// times): each call waits at most `max.block.ms`; any other error fails.
async fn until_complete<F, Fut>(mut call: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<(), TransactionError>>,
{
    for _ in 1..10 {
        match call().await {
            Ok(()) => return,
            Err(TransactionError::Timeout { .. }) => {}
            Err(e) => panic!("{e:?}"),
        }
    }
    call().await.unwrap();
}

/// TV2: `init_transactions` and `commit_transaction` bounded by
/// `max.block.ms` return `Timeout`; the operation stays pending (other
/// operations are refused) and calling it again completes it, with the same
/// InitProducerId / EndTxn on the wire.
#[tokio::test]
async fn timed_out_calls_complete_when_repeated() {
    let broker = Broker::start(true, 1).await;
    broker.inject(ApiKey::InitProducerId, &[Fault::Hold, Fault::Hold]);
    let p = TransactionalProducer::connect(broker.config(&[("max.block.ms", "600")]))
        .await
        .unwrap();
    let e = p.init_transactions().await.unwrap_err();
    assert!(
        matches!(
            e,
            TransactionError::Timeout {
                op: kafka_producer::txn::TxnOp::InitTransactions,
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(p.state(), State::Initializing);
    // Each held InitProducerId waits out the request timeout: on a loaded
    // machine the second call's `max.block.ms` can run out too.
    until_complete(|| p.init_transactions()).await;
    assert_eq!(p.state(), State::Ready);

    broker.inject(ApiKey::EndTxn, &[Fault::Hold, Fault::Hold]);
    p.begin_transaction().unwrap();
    p.send(rec(0, "a")).await.unwrap();
    let e = p.commit_transaction().await.unwrap_err();
    assert!(
        matches!(
            e,
            TransactionError::Timeout {
                op: kafka_producer::txn::TxnOp::CommitTransaction,
                outcome_unknown: true
            }
        ),
        "{e:?}"
    );
    assert_eq!(p.state(), State::CommittingTransaction);
    // Pending transition: nothing else is accepted.
    assert!(p.begin_transaction().is_err());
    assert!(p.abort_transaction().await.is_err());
    until_complete(|| p.commit_transaction()).await;
    assert_eq!(p.state(), State::Ready);
    assert_eq!(p.producer_id_and_epoch().epoch, 1, "adopted from EndTxn v5");
    assert_eq!(
        broker.trace(),
        s(&[
            "InitProducerId(-1,-1) held",
            "InitProducerId(-1,-1) held",
            "InitProducerId(-1,-1)",
            "Produce(e0,p0,s0,n1)",
            "EndTxn(e0,commit,v5) held",
            "EndTxn(e0,commit,v5) held",
            "EndTxn(e0,commit,v5)",
        ])
    );
    // The next transaction runs on the new epoch.
    p.begin_transaction().unwrap();
    p.send(rec(0, "b")).await.unwrap();
    p.commit_transaction().await.unwrap();
    assert_eq!(
        broker.trace()[7..],
        s(&["Produce(e1,p0,s0,n1)", "EndTxn(e1,commit,v5)"])
    );
    p.close(Duration::from_secs(5)).await.unwrap();
}

// ---------------------------------------------------------------- (d)

#[tokio::test]
async fn concurrent_transactions_is_retried_on_add_partitions_and_end_txn() {
    let broker = Broker::start(false, 2).await;
    let cc = Fault::Error(E::ConcurrentTransactions);
    broker.inject(ApiKey::AddPartitionsToTxn, &[cc, cc]);
    broker.inject(ApiKey::EndTxn, &[cc, cc, cc]);
    let p = broker.producer(&[("retry.backoff.ms", "50")]).await;
    p.begin_transaction().unwrap();
    let a = p.send(rec(0, "a"));
    let b = p.send(rec(1, "b"));
    a.await.unwrap();
    b.await.unwrap();
    p.commit_transaction().await.unwrap();
    let trace = broker.trace();
    let adds: Vec<&String> = trace
        .iter()
        .filter(|t| t.starts_with("AddPartitions"))
        .collect();
    // The first add may carry p0 alone (p1 appended after it was sent).
    assert!(
        adds.len() >= 3
            && adds[..2]
                .iter()
                .all(|a| a.ends_with("=CONCURRENT_TRANSACTIONS"))
            && adds[1] == adds[0]
            && !adds.last().unwrap().contains('='),
        "{trace:?}"
    );
    let ends: Vec<&String> = trace.iter().filter(|t| t.starts_with("EndTxn")).collect();
    assert_eq!(
        ends,
        [
            "EndTxn(e0,commit,v4)=CONCURRENT_TRANSACTIONS",
            "EndTxn(e0,commit,v4)=CONCURRENT_TRANSACTIONS",
            "EndTxn(e0,commit,v4)=CONCURRENT_TRANSACTIONS",
            "EndTxn(e0,commit,v4)",
        ]
    );
    // EndTxn retries back off (escalating from retry.backoff.ms).
    let t = broker.times(ApiKey::EndTxn);
    let gaps: Vec<Duration> = t.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(
        gaps.iter().all(|g| *g >= Duration::from_millis(40)) && gaps[2] > gaps[0],
        "{gaps:?}"
    );
    assert_eq!(p.state(), State::Ready);
    p.close(Duration::from_secs(5)).await.unwrap();
}

// ---------------------------------------------------------------- (e)

async fn unknown_produce_outcome(tv2: bool) {
    let broker = Broker::start(tv2, 1).await;
    let p = broker
        .producer(&[
            ("request.timeout.ms", "300"),
            ("delivery.timeout.ms", "1000"),
        ])
        .await;
    p.begin_transaction().unwrap();
    broker.st().hold_produce = true;
    let e = p.send(rec(0, "lost?")).await.unwrap_err();
    // The last attempt timed out (NETWORK_EXCEPTION, outcome unknown) when
    // delivery.timeout.ms ran out, or the batch expired in flight.
    assert!(
        matches!(
            e,
            ProduceError::DeliveryTimeout { .. }
                | ProduceError::Broker {
                    error: E::NetworkException,
                    ..
                }
        ),
        "the outcome is unknown: {e:?}"
    );
    broker.st().hold_produce = false;
    assert_eq!(p.state(), State::AbortableError);
    assert!(p.commit_transaction().await.unwrap_err().is_abortable());
    p.abort_transaction().await.unwrap();
    assert_eq!(
        p.producer_id_and_epoch().epoch,
        1,
        "bumped before the next transaction"
    );
    p.begin_transaction().unwrap();
    p.send(rec(0, "next")).await.unwrap();
    p.commit_transaction().await.unwrap();

    let trace = broker.trace();
    let end = trace
        .iter()
        .position(|t| t.starts_with("EndTxn(e0,abort"))
        .unwrap_or_else(|| panic!("{trace:?}"));
    // Before the abort: the held Produce (and its retries), all epoch 0.
    assert!(
        trace[..end]
            .iter()
            .filter(|t| t.starts_with("Produce"))
            .all(|t| t == "Produce(e0,p0,s0,n1) held"),
        "{trace:?}"
    );
    let want_after = if tv2 {
        s(&[
            "EndTxn(e0,abort,v5)",
            "Produce(e1,p0,s0,n1)",
            "EndTxn(e1,commit,v5)",
        ])
    } else {
        s(&[
            "EndTxn(e0,abort,v4)",
            "InitProducerId(1000,0)",
            "AddPartitions(e1,[0])",
            "Produce(e1,p0,s0,n1)",
            "EndTxn(e1,commit,v4)",
        ])
    };
    assert_eq!(trace[end..], want_after, "{trace:?}");
    // A late delivery of the aborted transaction's Produce (epoch 0) is now
    // refused by the partition: the next transaction wrote epoch 1.
    let (late, version) = broker
        .st()
        .last_held_produce
        .clone()
        .expect("a held Produce");
    assert_eq!(
        broker.deliver_late(&late, version).await,
        [E::InvalidProducerEpoch]
    );
    assert_eq!(broker.records(0), 1, "only the next transaction's record");
    p.close(Duration::from_secs(5)).await.unwrap();
}

#[tokio::test]
async fn an_unknown_produce_outcome_bumps_the_epoch_before_the_next_transaction_tv1() {
    unknown_produce_outcome(false).await;
}

#[tokio::test]
async fn an_unknown_produce_outcome_bumps_the_epoch_before_the_next_transaction_tv2() {
    unknown_produce_outcome(true).await;
}

// ---------------------------------------------------------------- (f)

/// Opens the next transaction (epoch 1 after a first committed one) and
/// sends its first batch ("b"), which the broker holds; returns that
/// batch's future once it is held.
async fn first_batch_meets_concurrent_transactions(
    broker: &Broker,
    p: &TransactionalProducer,
) -> impl std::future::Future<Output = Result<kafka_producer::RecordMetadata, ProduceError>> + use<>
{
    p.begin_transaction().unwrap();
    broker.inject(
        ApiKey::Produce,
        &[Fault::HoldThenError(E::ConcurrentTransactions)],
    );
    let first = p.send(rec(0, "b"));
    tokio::time::timeout(Duration::from_secs(10), broker.gate.wait_held(1))
        .await
        .expect("the first batch in flight");
    first
}

/// Answers the held first batch CONCURRENT_TRANSACTIONS (the broker adding
/// the partition while the previous transaction's markers are still being
/// written) once the next Produce arrived behind it.
async fn refuse_first_batch_once_the_next_arrived(broker: &Broker) {
    let before = broker.count(ApiKey::Produce);
    until("the next Produce pipelined behind the first", || {
        broker.count(ApiKey::Produce) > before
    })
    .await;
    let refuse = FaultAction::Error(E::ConcurrentTransactions);
    assert!(broker.gate.release_oldest_with(refuse).is_some());
}

/// How many times the producer was answered `code`.
fn answered(p: &TransactionalProducer, code: E) -> u64 {
    let m = p.metrics();
    m.errors_by_code.get(&code.code()).copied().unwrap_or(0)
}

/// Invariant: every record of the transaction is written once and in
/// order, and it commits, when its first batch meets CONCURRENT_TRANSACTIONS
/// and the batch pipelined behind it OUT_OF_ORDER_SEQUENCE_NUMBER. The
/// second batch is not next in line (sequence 0 is unacknowledged), so its
/// error says nothing about a gap: Java's `TransactionManager.canRetry`
/// retries it, and so do we. Seen on real 4.4 brokers under load.
#[tokio::test]
async fn first_batch_concurrent_transactions_and_the_next_out_of_order_are_retried_tv2() {
    let broker = Broker::start(true, 1).await;
    let p = broker.producer(&[]).await;
    // A first transaction: the partition holds epoch 0's state.
    p.begin_transaction().unwrap();
    p.send(rec(0, "a")).await.unwrap();
    p.commit_transaction().await.unwrap();
    assert_eq!(p.producer_id_and_epoch().epoch, 1);

    let first = first_batch_meets_concurrent_transactions(&broker, &p).await;
    let rest: Vec<_> = ["c", "d", "e"].iter().map(|v| p.send(rec(0, v))).collect();
    refuse_first_batch_once_the_next_arrived(&broker).await;
    first.await.expect("the first batch is retried");
    for r in rest {
        r.await.expect("the batch behind it is retried");
    }
    p.commit_transaction().await.unwrap();
    let trace = broker.trace();
    let produces: Vec<&String> = trace
        .iter()
        .filter(|t| t.starts_with("Produce(e1"))
        .collect();
    assert_eq!(
        produces,
        [
            "Produce(e1,p0,s0,n1)=CONCURRENT_TRANSACTIONS",
            // Answered OUT_OF_ORDER_SEQUENCE_NUMBER by the broker's rules.
            "Produce(e1,p0,s1,n3)",
            "Produce(e1,p0,s0,n1)",
            "Produce(e1,p0,s1,n3)",
        ],
        "{trace:?}"
    );
    assert_eq!(answered(&p, E::OutOfOrderSequenceNumber), 1);
    assert_eq!(answered(&p, E::ConcurrentTransactions), 1);
    assert_eq!(broker.records(0), 5, "a, then b..e once each");
    p.close(Duration::from_secs(5)).await.unwrap();
}

/// Invariant: batches already sent once keep their sequences through an
/// abort. The epoch's first batch waits for its retry (after
/// CONCURRENT_TRANSACTIONS) and the batch behind it for its own (after
/// OUT_OF_ORDER_SEQUENCE_NUMBER) when the application aborts: both are sent
/// again and answered before EndTxn, as Java's `abortUndrainedBatches`
/// (which aborts only batches without a sequence) does. Failing them
/// locally would leave the partition's sequence unresolved, fail the second
/// on OUT_OF_ORDER_SEQUENCE_NUMBER and send EndTxn before the broker's
/// answer to batches it may have written.
#[tokio::test]
async fn an_abort_keeps_batches_waiting_for_a_retry_tv2() {
    let broker = Broker::start(true, 1).await;
    let p = broker.producer(&[("retry.backoff.ms", "300")]).await;
    p.begin_transaction().unwrap();
    p.send(rec(0, "a")).await.unwrap();
    p.commit_transaction().await.unwrap();

    let first = first_batch_meets_concurrent_transactions(&broker, &p).await;
    let second = p.send(rec(0, "c"));
    refuse_first_batch_once_the_next_arrived(&broker).await;
    // Both answered and waiting for their retry (300 ms backoff).
    until("both batches refused", || p.metrics().retries >= 2).await;
    p.abort_transaction().await.unwrap();
    first
        .await
        .expect("the first batch is sent again, not failed");
    second
        .await
        .expect("the second batch is sent again, not failed");
    let trace = broker.trace();
    let tail: Vec<&String> = trace
        .iter()
        .skip_while(|t| !t.starts_with("Produce(e1"))
        .collect();
    assert_eq!(
        tail,
        [
            "Produce(e1,p0,s0,n1)=CONCURRENT_TRANSACTIONS",
            // Answered OUT_OF_ORDER_SEQUENCE_NUMBER by the broker's rules.
            "Produce(e1,p0,s1,n1)",
            "Produce(e1,p0,s0,n1)",
            "Produce(e1,p0,s1,n1)",
            "EndTxn(e1,abort,v5)",
        ],
        "{trace:?}"
    );
    assert_eq!(answered(&p, E::OutOfOrderSequenceNumber), 1);
    // The next transaction starts the new epoch at sequence 0.
    p.begin_transaction().unwrap();
    p.send(rec(0, "d")).await.unwrap();
    p.commit_transaction().await.unwrap();
    assert!(broker.trace().contains(&"Produce(e2,p0,s0,n1)".to_string()));
    p.close(Duration::from_secs(5)).await.unwrap();
}
