//! Error injection against the full [`TransactionalProducer`] (sender,
//! accumulator, coordinator driver and manager together) talking to a
//! scripted in-memory broker ([`Fake`]: one node that is leader and
//! transaction coordinator; no JVM, deterministic).
//!
//! The fake answers ApiVersions (TV1 or TV2 finalized), Metadata,
//! FindCoordinator, InitProducerId (first init and KIP-360 bumps),
//! AddPartitionsToTxn v≤3, EndTxn (v5 bumps the epoch) and Produce with the
//! broker's idempotence rules (a newer epoch starts at sequence 0, the same
//! epoch continues the last sequence, an older epoch is refused). Every
//! request other than ApiVersions/Metadata is written to a trace such as
//! `EndTxn(e0,abort,v4)`, and the tests assert the exact sequence of
//! requests the broker saw:
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

use bytes::BytesMut;
use kafka_producer::txn::State;
use kafka_producer::{
    ProduceError, ProducerConfig, ProducerRecord, TransactionError, TransactionalProducer,
};
use kafka_proto::frame::{
    FrameDecoder, RequestHeaderStart, decode_request_frame, encode_response_frame,
    peek_request_header,
};
use kafka_proto::messages::*;
use kafka_proto::record::RecordBatch;
use kafka_proto::{ApiKey, ErrorCode as E};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const TOPIC: &str = "t";
const TOPIC_ID: [u8; 16] = [5; 16];
const PID: i64 = 1000;

/// What the fake does with one request of an API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    /// Answer with this error (nothing is written or changed).
    Error(E),
    /// Never answer (the client's request timeout fires).
    Hold,
}

#[derive(Debug, Default)]
struct PartitionState {
    /// (epoch, last sequence) of our producer id.
    producer: Option<(i16, i32)>,
    records: usize,
}

#[derive(Debug, Default)]
struct St {
    tv2: bool,
    partitions: i32,
    /// Metadata and Produce answer UNKNOWN_TOPIC_OR_PARTITION for the topic.
    topic_gone: bool,
    /// Every Produce is held (never answered).
    hold_produce: bool,
    /// The next Produce is answered only after the one behind it arrived
    /// (the broker still verifying its partition with the coordinator).
    defer_next_produce: bool,
    /// Set by [`respond`] for the response [`serve`] must hold back.
    defer_this: bool,
    /// The coordinator's (epoch, previous epoch) of [`PID`]; None before the
    /// first InitProducerId.
    epoch: Option<(i16, i16)>,
    faults: HashMap<ApiKey, VecDeque<Fault>>,
    logs: Vec<PartitionState>,
    trace: Vec<String>,
    /// (api, when) of every request.
    times: Vec<(ApiKey, Instant)>,
    metadata_while_gone: usize,
}

impl St {
    fn fault(&mut self, api: ApiKey) -> Option<Fault> {
        self.faults.get_mut(&api).and_then(|q| q.pop_front())
    }

    /// The broker's append path (idempotence rules for one producer id).
    fn append(&mut self, partition: i32, epoch: i16, base_sequence: i32, count: i32) -> E {
        let log = &mut self.logs[partition as usize];
        match log.producer {
            Some((e, _)) if epoch < e => return E::InvalidProducerEpoch,
            Some((e, last)) if epoch == e => {
                if base_sequence != last + 1 {
                    return E::OutOfOrderSequenceNumber;
                }
            }
            _ => {
                if base_sequence != 0 {
                    return E::OutOfOrderSequenceNumber;
                }
            }
        }
        log.producer = Some((epoch, base_sequence + count - 1));
        log.records += count as usize;
        E::None
    }
}

/// The scripted broker (node 1).
#[derive(Clone)]
struct Fake {
    st: Arc<Mutex<St>>,
    addr: String,
}

impl Fake {
    async fn start(tv2: bool, partitions: i32) -> Self {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let fake = Fake {
            st: Arc::new(Mutex::new(St {
                tv2,
                partitions,
                logs: (0..partitions).map(|_| PartitionState::default()).collect(),
                ..Default::default()
            })),
            addr: l.local_addr().unwrap().to_string(),
        };
        let f = fake.clone();
        tokio::spawn(async move {
            while let Ok((sock, _)) = l.accept().await {
                tokio::spawn(serve(f.clone(), sock));
            }
        });
        fake
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

    /// The trace without FindCoordinator.
    fn trace(&self) -> Vec<String> {
        self.st()
            .trace
            .iter()
            .filter(|t| !t.starts_with("FindCoordinator"))
            .cloned()
            .collect()
    }

    fn count(&self, api: ApiKey) -> usize {
        self.st().times.iter().filter(|t| t.0 == api).count()
    }

    fn times(&self, api: ApiKey) -> Vec<Instant> {
        self.st()
            .times
            .iter()
            .filter(|t| t.0 == api)
            .map(|t| t.1)
            .collect()
    }

    fn config(&self, extra: &[(&str, &str)]) -> ProducerConfig {
        let mut props: Vec<(&str, &str)> = vec![
            ("bootstrap.servers", &self.addr),
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
}

async fn serve(fake: Fake, mut sock: tokio::net::TcpStream) {
    let mut dec = FrameDecoder::default();
    let mut buf = BytesMut::new();
    // A response held back until the next request's (answers stay in order).
    let mut deferred: Option<BytesMut> = None;
    loop {
        while let Some(frame) = dec.decode(&mut buf).unwrap() {
            let out = respond(&fake, &frame);
            if std::mem::take(&mut fake.st().defer_this) {
                deferred = out;
                continue;
            }
            for out in deferred.take().into_iter().chain(out) {
                if sock.write_all(&out).await.is_err() {
                    return;
                }
            }
        }
        match sock.read_buf(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

fn api_versions(tv2: bool) -> ApiVersionsResponse {
    let keys = [
        (ApiKey::Produce, 3, 13),
        (ApiKey::Metadata, 0, 13),
        (ApiKey::ApiVersions, 0, 4),
        (ApiKey::FindCoordinator, 0, 6),
        (ApiKey::InitProducerId, 0, 5),
        (ApiKey::AddPartitionsToTxn, 0, 5),
        (ApiKey::AddOffsetsToTxn, 0, 4),
        (ApiKey::EndTxn, 0, 5),
        (ApiKey::TxnOffsetCommit, 0, 5),
    ];
    let level = if tv2 { 2 } else { 1 };
    ApiVersionsResponse {
        finalized_features_epoch: 1,
        finalized_features: vec![FinalizedFeatureKey {
            name: "transaction.version".into(),
            max_version_level: level,
            min_version_level: level,
            ..Default::default()
        }],
        ..ApiVersionsResponse::listing(&keys)
    }
}

fn ep(e: i16) -> String {
    format!("e{e}")
}

fn respond(fake: &Fake, frame: &[u8]) -> Option<BytesMut> {
    let RequestHeaderStart {
        api_key: api,
        api_version: v,
        correlation_id: cid,
    } = peek_request_header(frame).expect("a request header");
    let mut st = fake.st();
    st.times.push((api, Instant::now()));
    let (host, port) = fake.addr.rsplit_once(':').unwrap();
    let port: i32 = port.parse().unwrap();
    let fault = match api {
        ApiKey::ApiVersions | ApiKey::Metadata | ApiKey::Produce => None,
        _ => st.fault(api),
    };
    let err = match fault {
        Some(Fault::Error(e)) => e,
        _ => E::None,
    };
    let hold = fault == Some(Fault::Hold);
    let note = |st: &mut St, s: String| {
        let fault = match fault {
            Some(Fault::Hold) => " held".to_string(),
            Some(Fault::Error(e)) => format!("={}", e.name()),
            None => String::new(),
        };
        st.trace.push(format!("{s}{fault}"));
    };
    let out = match api {
        ApiKey::ApiVersions => encode_response_frame(&api_versions(st.tv2), v, cid),
        ApiKey::Metadata => {
            let gone = st.topic_gone;
            if gone {
                st.metadata_while_gone += 1;
            }
            let resp = MetadataResponse {
                brokers: vec![MetadataResponseBroker {
                    node_id: 1,
                    host: host.into(),
                    port,
                    ..Default::default()
                }],
                cluster_id: Some("fake".into()),
                controller_id: 1,
                topics: vec![MetadataResponseTopic {
                    name: Some(TOPIC.into()),
                    topic_id: TOPIC_ID,
                    error_code: if gone {
                        E::UnknownTopicOrPartition.code()
                    } else {
                        0
                    },
                    partitions: if gone {
                        vec![]
                    } else {
                        (0..st.partitions)
                            .map(|p| MetadataResponsePartition {
                                partition_index: p,
                                leader_id: 1,
                                leader_epoch: 1,
                                replica_nodes: vec![1],
                                isr_nodes: vec![1],
                                ..Default::default()
                            })
                            .collect()
                    },
                    ..Default::default()
                }],
                ..Default::default()
            };
            encode_response_frame(&resp, v, cid)
        }
        ApiKey::FindCoordinator => {
            let req = decode_request_frame::<FindCoordinatorRequest>(frame)
                .unwrap()
                .1;
            note(&mut st, "FindCoordinator".into());
            let resp = if v >= 4 {
                FindCoordinatorResponse {
                    coordinators: vec![FindCoordinatorResponseCoordinator {
                        key: req.coordinator_keys.first().cloned().unwrap_or_default(),
                        node_id: 1,
                        host: host.into(),
                        port,
                        error_code: err.code(),
                        ..Default::default()
                    }],
                    ..Default::default()
                }
            } else {
                FindCoordinatorResponse {
                    error_code: err.code(),
                    node_id: 1,
                    host: host.into(),
                    port,
                    ..Default::default()
                }
            };
            encode_response_frame(&resp, v, cid)
        }
        ApiKey::InitProducerId => {
            let req = decode_request_frame::<InitProducerIdRequest>(frame)
                .unwrap()
                .1;
            note(
                &mut st,
                format!("InitProducerId({},{})", req.producer_id, req.producer_epoch),
            );
            if err.is_ok() && !hold {
                st.epoch = Some(match st.epoch {
                    None => (0, -1),
                    // A retry of the last bump: unchanged.
                    Some((cur, prev)) if req.producer_id == PID && req.producer_epoch == prev => {
                        (cur, prev)
                    }
                    Some((cur, _)) => (cur + 1, cur),
                });
            }
            let epoch = st.epoch.map_or(-1, |e| e.0);
            encode_response_frame(
                &InitProducerIdResponse {
                    error_code: err.code(),
                    producer_id: PID,
                    producer_epoch: epoch,
                    ..Default::default()
                },
                v,
                cid,
            )
        }
        ApiKey::AddPartitionsToTxn => {
            assert!(!st.tv2, "TV2 registers partitions through Produce");
            assert!(v <= 3, "AddPartitionsToTxn v{v}");
            let req = decode_request_frame::<AddPartitionsToTxnRequest>(frame)
                .unwrap()
                .1;
            let parts: Vec<i32> = req
                .v3_and_below_topics
                .iter()
                .flat_map(|t| t.partitions.iter().copied())
                .collect();
            note(
                &mut st,
                format!(
                    "AddPartitions({},{parts:?})",
                    ep(req.v3_and_below_producer_epoch)
                ),
            );
            let resp = AddPartitionsToTxnResponse {
                results_by_topic_v3_and_below: req
                    .v3_and_below_topics
                    .iter()
                    .map(|t| AddPartitionsToTxnResponseTopicResult {
                        name: t.name.clone(),
                        results_by_partition: t
                            .partitions
                            .iter()
                            .map(|&p| AddPartitionsToTxnResponsePartitionResult {
                                partition_index: p,
                                partition_error_code: err.code(),
                                ..Default::default()
                            })
                            .collect(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            };
            encode_response_frame(&resp, v, cid)
        }
        ApiKey::EndTxn => {
            let req = decode_request_frame::<EndTxnRequest>(frame).unwrap().1;
            let what = if req.committed { "commit" } else { "abort" };
            note(
                &mut st,
                format!("EndTxn({},{what},v{v})", ep(req.producer_epoch)),
            );
            assert_eq!(v >= 5, st.tv2, "EndTxn v{v}");
            if err.is_ok() && !hold && v >= 5 {
                // TV2: every EndTxn bumps; a retry (epoch = current - 1)
                // returns the current epoch.
                let (cur, prev) = st.epoch.unwrap();
                if req.producer_epoch == cur {
                    st.epoch = Some((cur + 1, cur));
                } else {
                    assert_eq!(req.producer_epoch, prev, "neither current nor retry");
                }
            }
            encode_response_frame(
                &if v >= 5 {
                    EndTxnResponse {
                        error_code: err.code(),
                        producer_id: PID,
                        producer_epoch: st.epoch.map_or(-1, |e| e.0),
                        ..Default::default()
                    }
                } else {
                    EndTxnResponse {
                        error_code: err.code(),
                        ..Default::default()
                    }
                },
                v,
                cid,
            )
        }
        ApiKey::Produce => {
            let (_, req) = decode_request_frame::<ProduceRequest>(frame).unwrap();
            assert_eq!(req.transactional_id.as_deref(), Some("tx"));
            assert!(st.tv2 || v <= 11, "TV1 caps Produce at v11, got v{v}");
            let produce_fault = st.fault(ApiKey::Produce);
            let held = st.hold_produce || produce_fault == Some(Fault::Hold);
            let mut resp = ProduceResponse::default();
            for t in req.topic_data {
                let mut tr = ProduceResponseTopicProduceResponse {
                    name: t.name.clone(),
                    topic_id: t.topic_id,
                    ..Default::default()
                };
                for pd in t.partition_data {
                    let b = RecordBatch::decode(pd.records.as_deref().unwrap()).unwrap();
                    assert!(b.is_transactional);
                    assert_eq!(b.producer_id, PID);
                    let code = if held {
                        None
                    } else if let Some(Fault::Error(e)) = produce_fault {
                        Some(e)
                    } else if st.topic_gone {
                        Some(E::UnknownTopicOrPartition)
                    } else {
                        Some(st.append(
                            pd.index,
                            b.producer_epoch,
                            b.base_sequence,
                            b.records.len() as i32,
                        ))
                    };
                    st.trace.push(format!(
                        "Produce({},p{},s{},n{}){}",
                        ep(b.producer_epoch),
                        pd.index,
                        b.base_sequence,
                        b.records.len(),
                        match code {
                            None => " held".to_string(),
                            Some(E::None) => String::new(),
                            Some(c) => format!("={}", c.name()),
                        }
                    ));
                    tr.partition_responses
                        .push(ProduceResponsePartitionProduceResponse {
                            index: pd.index,
                            error_code: code.unwrap_or(E::None).code(),
                            base_offset: 0,
                            log_append_time_ms: -1,
                            log_start_offset: 0,
                            ..Default::default()
                        });
                }
                resp.responses.push(tr);
            }
            if held {
                return None;
            }
            st.defer_this = std::mem::take(&mut st.defer_next_produce);
            encode_response_frame(&resp, v, cid)
        }
        other => panic!("unexpected request {other:?}"),
    };
    (!hold).then(|| out.unwrap())
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
    let fake = Fake::start(tv2, 1).await;
    let p = fake.producer(&[]).await;
    p.begin_transaction().unwrap();
    p.send(rec(0, "a")).await.unwrap();
    fake.inject(
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
    assert_eq!(fake.count(ApiKey::InitProducerId), 1);
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
    assert_eq!(fake.trace(), want);
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
    let fake = Fake::start(false, 2).await;
    let p = fake.producer(&[("metadata.max.age.ms", "50")]).await;
    p.begin_transaction().unwrap();
    p.send(rec(0, "a")).await.unwrap();
    p.send(rec(1, "x")).await.unwrap();
    p.send(rec(0, "b")).await.unwrap();
    p.commit_transaction().await.unwrap();

    fake.st().topic_gone = true;
    until("metadata refreshes while the topic is gone", || {
        fake.st().metadata_while_gone >= 2
    })
    .await;
    p.begin_transaction().unwrap();
    let c = p.send(rec(0, "c"));
    until("a Produce refused or more metadata while gone", || {
        let st = fake.st();
        st.trace
            .iter()
            .any(|t| t.ends_with("UNKNOWN_TOPIC_OR_PARTITION"))
            || st.metadata_while_gone >= 6
    })
    .await;
    fake.st().topic_gone = false;
    c.await.unwrap();
    p.send(rec(1, "y")).await.unwrap();
    p.commit_transaction().await.unwrap();

    let produce: Vec<String> = fake
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
    eprintln!("trace: {:?}", fake.trace());
    p.close(Duration::from_secs(5)).await.unwrap();
}

// ---------------------------------------------------------------- (c)

/// TV1: a timeout of each coordinator RPC retries the same request.
#[tokio::test]
async fn a_timeout_of_each_coordinator_rpc_retries_the_same_request() {
    let fake = Fake::start(false, 1).await;
    // The first FindCoordinator is the transaction.max.timeout.ms check's.
    fake.inject(ApiKey::FindCoordinator, &[Fault::Hold, Fault::Hold]);
    fake.inject(ApiKey::InitProducerId, &[Fault::Hold]);
    fake.inject(ApiKey::AddPartitionsToTxn, &[Fault::Hold]);
    fake.inject(ApiKey::EndTxn, &[Fault::Hold]);
    let p = fake.producer(&[]).await;
    p.begin_transaction().unwrap();
    p.send(rec(0, "a")).await.unwrap();
    p.commit_transaction().await.unwrap();
    assert_eq!(
        fake.trace(),
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
    let finds = fake
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

/// TV2: `init_transactions` and `commit_transaction` bounded by
/// `max.block.ms` return `Timeout`; the operation stays pending (other
/// operations are refused) and calling it again completes it, with the same
/// InitProducerId / EndTxn on the wire.
#[tokio::test]
async fn timed_out_calls_complete_when_repeated() {
    let fake = Fake::start(true, 1).await;
    fake.inject(ApiKey::InitProducerId, &[Fault::Hold, Fault::Hold]);
    let p = TransactionalProducer::connect(fake.config(&[("max.block.ms", "600")]))
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
    p.init_transactions().await.unwrap();
    assert_eq!(p.state(), State::Ready);

    fake.inject(ApiKey::EndTxn, &[Fault::Hold, Fault::Hold]);
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
    let mut attempts = 1;
    loop {
        attempts += 1;
        match p.commit_transaction().await {
            Ok(()) => break,
            Err(TransactionError::Timeout { .. }) if attempts < 10 => {}
            Err(e) => panic!("{e:?}"),
        }
    }
    assert_eq!(p.state(), State::Ready);
    assert_eq!(p.producer_id_and_epoch().epoch, 1, "adopted from EndTxn v5");
    assert_eq!(
        fake.trace(),
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
        fake.trace()[7..],
        s(&["Produce(e1,p0,s0,n1)", "EndTxn(e1,commit,v5)"])
    );
    p.close(Duration::from_secs(5)).await.unwrap();
}

// ---------------------------------------------------------------- (d)

#[tokio::test]
async fn concurrent_transactions_is_retried_on_add_partitions_and_end_txn() {
    let fake = Fake::start(false, 2).await;
    let cc = Fault::Error(E::ConcurrentTransactions);
    fake.inject(ApiKey::AddPartitionsToTxn, &[cc, cc]);
    fake.inject(ApiKey::EndTxn, &[cc, cc, cc]);
    let p = fake.producer(&[("retry.backoff.ms", "50")]).await;
    p.begin_transaction().unwrap();
    let a = p.send(rec(0, "a"));
    let b = p.send(rec(1, "b"));
    a.await.unwrap();
    b.await.unwrap();
    p.commit_transaction().await.unwrap();
    let trace = fake.trace();
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
    let t = fake.times(ApiKey::EndTxn);
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
    let fake = Fake::start(tv2, 1).await;
    let p = fake
        .producer(&[
            ("request.timeout.ms", "300"),
            ("delivery.timeout.ms", "1000"),
        ])
        .await;
    p.begin_transaction().unwrap();
    fake.st().hold_produce = true;
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
    fake.st().hold_produce = false;
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

    let trace = fake.trace();
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
    assert_eq!(fake.st().append(0, 0, 0, 1), E::InvalidProducerEpoch);
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
/// sends its first batch ("b"), which the fake refuses with
/// CONCURRENT_TRANSACTIONS and answers only once the next Produce arrived;
/// returns that batch's future once it is in flight.
async fn first_batch_meets_concurrent_transactions(
    fake: &Fake,
    p: &TransactionalProducer,
) -> impl std::future::Future<Output = Result<kafka_producer::RecordMetadata, ProduceError>> + use<>
{
    p.begin_transaction().unwrap();
    fake.inject(ApiKey::Produce, &[Fault::Error(E::ConcurrentTransactions)]);
    fake.st().defer_next_produce = true;
    let first = p.send(rec(0, "b"));
    let before = fake.count(ApiKey::Produce);
    until("the first batch in flight", || {
        fake.count(ApiKey::Produce) > before
    })
    .await;
    first
}

/// Invariant: every record of the transaction is written once and in
/// order, and it commits, when its first batch meets CONCURRENT_TRANSACTIONS
/// and the batch pipelined behind it OUT_OF_ORDER_SEQUENCE_NUMBER. The
/// second batch is not next in line (sequence 0 is unacknowledged), so its
/// error says nothing about a gap: Java's `TransactionManager.canRetry`
/// retries it, and so do we. Seen on real 4.4 brokers under load.
#[tokio::test]
async fn first_batch_concurrent_transactions_and_the_next_out_of_order_are_retried_tv2() {
    let fake = Fake::start(true, 1).await;
    let p = fake.producer(&[]).await;
    // A first transaction: the partition holds epoch 0's state.
    p.begin_transaction().unwrap();
    p.send(rec(0, "a")).await.unwrap();
    p.commit_transaction().await.unwrap();
    assert_eq!(p.producer_id_and_epoch().epoch, 1);

    let first = first_batch_meets_concurrent_transactions(&fake, &p).await;
    let rest: Vec<_> = ["c", "d", "e"].iter().map(|v| p.send(rec(0, v))).collect();
    first.await.expect("the first batch is retried");
    for r in rest {
        r.await.expect("the batch behind it is retried");
    }
    p.commit_transaction().await.unwrap();
    let trace = fake.trace();
    let produces: Vec<&String> = trace
        .iter()
        .filter(|t| t.starts_with("Produce(e1"))
        .collect();
    assert_eq!(
        produces,
        [
            "Produce(e1,p0,s0,n1)=CONCURRENT_TRANSACTIONS",
            "Produce(e1,p0,s1,n3)=OUT_OF_ORDER_SEQUENCE_NUMBER",
            "Produce(e1,p0,s0,n1)",
            "Produce(e1,p0,s1,n3)",
        ],
        "{trace:?}"
    );
    assert_eq!(fake.st().logs[0].records, 5, "a, then b..e once each");
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
    let fake = Fake::start(true, 1).await;
    let p = fake.producer(&[("retry.backoff.ms", "300")]).await;
    p.begin_transaction().unwrap();
    p.send(rec(0, "a")).await.unwrap();
    p.commit_transaction().await.unwrap();

    let first = first_batch_meets_concurrent_transactions(&fake, &p).await;
    let second = p.send(rec(0, "c"));
    // Both answered and waiting for their retry (300 ms backoff).
    until("both batches refused", || p.metrics().retries >= 2).await;
    p.abort_transaction().await.unwrap();
    first
        .await
        .expect("the first batch is sent again, not failed");
    second
        .await
        .expect("the second batch is sent again, not failed");
    let trace = fake.trace();
    let tail: Vec<&String> = trace
        .iter()
        .skip_while(|t| !t.starts_with("Produce(e1"))
        .collect();
    assert_eq!(
        tail,
        [
            "Produce(e1,p0,s0,n1)=CONCURRENT_TRANSACTIONS",
            "Produce(e1,p0,s1,n1)=OUT_OF_ORDER_SEQUENCE_NUMBER",
            "Produce(e1,p0,s0,n1)",
            "Produce(e1,p0,s1,n1)",
            "EndTxn(e1,abort,v5)",
        ],
        "{trace:?}"
    );
    // The next transaction starts the new epoch at sequence 0.
    p.begin_transaction().unwrap();
    p.send(rec(0, "d")).await.unwrap();
    p.commit_transaction().await.unwrap();
    assert!(fake.trace().contains(&"Produce(e2,p0,s0,n1)".to_string()));
    p.close(Duration::from_secs(5)).await.unwrap();
}
