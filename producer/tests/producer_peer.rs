//! The producer's sender and idempotence driver against a scripted
//! in-memory broker (deterministic, no JVM).
//!
//! [`Fake`] is a tiny multi-node Kafka: ApiVersions, Metadata, InitProducerId
//! and Produce, with one shared per-partition log that applies the broker's
//! idempotence rules (per producer id: a newer epoch must start at sequence
//! 0, the next batch must continue the last sequence, a repeat of one of the
//! last five batches is a duplicate, an older epoch is fenced; a producer id
//! without state starts at any sequence). Every Produce
//! batch the broker receives is decoded with `kafka_proto::record` and
//! recorded ([`SeenBatch`]); a per-test script decides per batch whether to
//! pass it, answer an error, write it and lose the response, swallow it, or
//! hold its response until the test releases it.
//!
//! The tests run on a current-thread runtime: every `send` of a test appends
//! before the sender task runs, so the drain pattern (several requests in
//! flight on one connection) is the same on every run.

use bytes::BytesMut;
use kafka_producer::{Producer, ProducerConfig, ProducerRecord, RecordMetadata};
use kafka_proto::frame::{
    FrameDecoder, RequestHeaderStart, decode_request_frame, encode_response_frame,
    peek_request_header,
};
use kafka_proto::messages::*;
use kafka_proto::record::RecordBatch;
use kafka_proto::{ApiKey, ErrorCode};
use std::collections::VecDeque;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

const TOPIC: &str = "scripted";
const TOPIC_ID: [u8; 16] = [7; 16];

/// One Produce batch as the broker received it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SeenBatch {
    node: i32,
    partition: i32,
    producer_id: i64,
    epoch: i16,
    base_sequence: i32,
    count: i32,
    /// Value of the first record (the record's index in its partition).
    first: u64,
}

impl SeenBatch {
    fn producer_state(&self) -> (i64, i16, i32, i32) {
        (self.producer_id, self.epoch, self.base_sequence, self.count)
    }
}

/// What the broker does with one Produce batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    /// Apply the broker's rules and answer.
    Pass,
    /// Answer this error (with this log start offset) without writing.
    Error(ErrorCode, i64),
    /// Write the batch, then close the connection without answering.
    Lost,
    /// Neither write nor answer the request (the client's request timeout fires).
    Silent,
    /// Write the batch; hold the response until the test releases it.
    Hold,
}

#[derive(Debug, Default)]
struct ProducerEntry {
    producer_id: i64,
    epoch: i16,
    last_sequence: i32,
    /// (base sequence, last sequence, base offset) of the last five batches.
    recent: VecDeque<(i32, i32, i64)>,
}

#[derive(Debug, Default)]
struct PartitionLog {
    values: Vec<u64>,
    producer: Option<ProducerEntry>,
}

enum Out {
    Frame(BytesMut),
    Close,
}

#[derive(Default)]
struct State {
    leaders: Vec<i32>,
    leader_epoch: i32,
    logs: Vec<PartitionLog>,
    next_producer_id: i64,
    /// Answer duplicates with DUPLICATE_SEQUENCE_NUMBER (brokers before 2.x)
    /// instead of success with the original offset.
    duplicate_as_error: bool,
    /// Topics (other than [`TOPIC`]) whose metadata is answered with this
    /// error when asked for.
    refused: Vec<(String, ErrorCode)>,
    seen: Vec<SeenBatch>,
    answered: Vec<ErrorCode>,
    metadata_requests: u64,
    held: VecDeque<(mpsc::UnboundedSender<Out>, BytesMut)>,
    max_held: usize,
}

impl State {
    fn count(&self, code: ErrorCode) -> usize {
        self.answered.iter().filter(|c| **c == code).count()
    }

    /// The broker's append path for a batch led by `node`.
    fn append(&mut self, node: i32, partition: i32, b: &RecordBatch) -> (ErrorCode, i64) {
        if self.leaders[partition as usize] != node {
            return (ErrorCode::NotLeaderOrFollower, -1);
        }
        let count = b.records.len() as i32;
        let last = b.base_sequence + count - 1;
        let log = &mut self.logs[partition as usize];
        match &log.producer {
            Some(p) if p.producer_id == b.producer_id => {
                if b.producer_epoch < p.epoch {
                    return (ErrorCode::InvalidProducerEpoch, -1);
                }
                if b.producer_epoch == p.epoch {
                    if let Some(&(_, _, offset)) = p
                        .recent
                        .iter()
                        .find(|(s, l, _)| *s == b.base_sequence && *l == last)
                    {
                        return if self.duplicate_as_error {
                            (ErrorCode::DuplicateSequenceNumber, -1)
                        } else {
                            (ErrorCode::None, offset)
                        };
                    }
                    if b.base_sequence != p.last_sequence + 1 {
                        return (ErrorCode::OutOfOrderSequenceNumber, -1);
                    }
                } else if b.base_sequence != 0 {
                    return (ErrorCode::OutOfOrderSequenceNumber, -1);
                }
            }
            // No state for this producer id: any sequence starts it (as
            // Kafka 2.5+ brokers do).
            _ => {}
        }
        let offset = log.values.len() as i64;
        for r in &b.records {
            let v = std::str::from_utf8(r.value.as_deref().expect("value"))
                .expect("utf-8")
                .parse()
                .expect("a number");
            log.values.push(v);
        }
        let p = log.producer.get_or_insert_with(Default::default);
        if p.producer_id != b.producer_id || p.epoch != b.producer_epoch {
            p.recent.clear();
        }
        p.producer_id = b.producer_id;
        p.epoch = b.producer_epoch;
        p.last_sequence = last;
        p.recent.push_back((b.base_sequence, last, offset));
        if p.recent.len() > 5 {
            p.recent.pop_front();
        }
        (ErrorCode::None, offset)
    }
}

type Script = Box<dyn FnMut(&SeenBatch, &mut State) -> Fault + Send>;

struct Shared {
    state: Mutex<State>,
    script: Mutex<Script>,
    addrs: Vec<String>,
}

/// The scripted cluster: nodes 1..=n on loopback ports.
struct Fake {
    shared: Arc<Shared>,
}

impl Fake {
    async fn start(nodes: usize, partitions: usize, script: Script) -> Self {
        let mut listeners = Vec::new();
        let mut addrs = Vec::new();
        for _ in 0..nodes {
            let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
            addrs.push(l.local_addr().unwrap().to_string());
            listeners.push(l);
        }
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                leaders: vec![1; partitions],
                leader_epoch: 1,
                logs: (0..partitions).map(|_| PartitionLog::default()).collect(),
                next_producer_id: 1000,
                ..Default::default()
            }),
            script: Mutex::new(script),
            addrs,
        });
        for (i, l) in listeners.into_iter().enumerate() {
            let shared = shared.clone();
            tokio::spawn(async move {
                while let Ok((sock, _)) = l.accept().await {
                    tokio::spawn(serve(shared.clone(), i as i32 + 1, sock));
                }
            });
        }
        Self { shared }
    }

    fn bootstrap(&self) -> String {
        self.shared.addrs.join(",")
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.shared.state.lock().unwrap()
    }

    /// Sends the oldest held response; false if none was held.
    fn release_oldest(&self) -> bool {
        let next = self.state().held.pop_front();
        match next {
            Some((tx, frame)) => {
                let _ = tx.send(Out::Frame(frame));
                true
            }
            None => false,
        }
    }
}

async fn serve(shared: Arc<Shared>, node: i32, sock: tokio::net::TcpStream) {
    let (mut rd, mut wr) = sock.into_split();
    let (tx, mut rx) = mpsc::unbounded_channel::<Out>();
    tokio::spawn(async move {
        while let Some(out) = rx.recv().await {
            match out {
                Out::Frame(f) => {
                    if wr.write_all(&f).await.is_err() {
                        return;
                    }
                }
                Out::Close => return,
            }
        }
    });
    let mut dec = FrameDecoder::default();
    let mut buf = BytesMut::new();
    loop {
        while let Some(frame) = dec.decode(&mut buf).unwrap() {
            let RequestHeaderStart {
                api_key: api,
                api_version: version,
                correlation_id: cid,
            } = peek_request_header(&frame).expect("a request header");
            match api {
                ApiKey::ApiVersions => {
                    let f = encode_response_frame(&api_versions(), version, cid).unwrap();
                    let _ = tx.send(Out::Frame(f));
                }
                ApiKey::Metadata => {
                    let (_, req) = decode_request_frame::<MetadataRequest>(&frame).unwrap();
                    let asked: Vec<String> = req
                        .topics
                        .iter()
                        .flatten()
                        .filter_map(|t| t.name.clone())
                        .collect();
                    let resp = {
                        let mut st = shared.state.lock().unwrap();
                        st.metadata_requests += 1;
                        let mut resp = metadata(&st, &shared.addrs);
                        for (name, error) in &st.refused {
                            if asked.contains(name) {
                                resp.topics.push(MetadataResponseTopic {
                                    name: Some(name.clone()),
                                    error_code: error.code(),
                                    ..Default::default()
                                });
                            }
                        }
                        resp
                    };
                    let f = encode_response_frame(&resp, version, cid).unwrap();
                    let _ = tx.send(Out::Frame(f));
                }
                ApiKey::InitProducerId => {
                    let producer_id = {
                        let mut st = shared.state.lock().unwrap();
                        st.next_producer_id += 1;
                        st.next_producer_id
                    };
                    let resp = InitProducerIdResponse {
                        producer_id,
                        producer_epoch: 0,
                        ..Default::default()
                    };
                    let f = encode_response_frame(&resp, version, cid).unwrap();
                    let _ = tx.send(Out::Frame(f));
                }
                ApiKey::Produce => {
                    let (fault, resp) = produce(&shared, node, &frame);
                    let f = encode_response_frame(&resp, version, cid).unwrap();
                    match fault {
                        Fault::Lost => {
                            let _ = tx.send(Out::Close);
                            return;
                        }
                        Fault::Silent => {}
                        Fault::Hold => {
                            let mut st = shared.state.lock().unwrap();
                            st.held.push_back((tx.clone(), f));
                            st.max_held = st.max_held.max(st.held.len());
                        }
                        _ => {
                            let _ = tx.send(Out::Frame(f));
                        }
                    }
                }
                other => panic!("unexpected request {other:?}"),
            }
        }
        match rd.read_buf(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

/// Applies the script to every batch of a Produce request; returns the
/// request-level fault (the strongest of its batches) and the response.
fn produce(shared: &Shared, node: i32, frame: &[u8]) -> (Fault, ProduceResponse) {
    let (_, req) = decode_request_frame::<ProduceRequest>(frame).unwrap();
    let mut script = shared.script.lock().unwrap();
    let mut st = shared.state.lock().unwrap();
    let mut request_fault = Fault::Pass;
    let mut resp = ProduceResponse::default();
    for t in req.topic_data {
        assert!(t.name == TOPIC || t.topic_id == TOPIC_ID, "unknown topic");
        let mut tr = ProduceResponseTopicProduceResponse {
            name: t.name.clone(),
            topic_id: t.topic_id,
            ..Default::default()
        };
        for pd in t.partition_data {
            let batch = RecordBatch::decode(pd.records.as_deref().expect("records")).unwrap();
            let first = batch.records[0].value.as_deref().unwrap();
            let seen = SeenBatch {
                node,
                partition: pd.index,
                producer_id: batch.producer_id,
                epoch: batch.producer_epoch,
                base_sequence: batch.base_sequence,
                count: batch.records.len() as i32,
                first: std::str::from_utf8(first).unwrap().parse().unwrap(),
            };
            st.seen.push(seen.clone());
            let fault = script(&seen, &mut st);
            let (code, base_offset, log_start) = match fault {
                Fault::Error(c, lso) => (c, -1, lso),
                Fault::Silent => (ErrorCode::None, -1, -1),
                Fault::Pass | Fault::Lost | Fault::Hold => {
                    let (c, o) = st.append(node, pd.index, &batch);
                    (c, o, 0)
                }
            };
            st.answered.push(code);
            if fault != Fault::Pass && !matches!(fault, Fault::Error(..)) {
                request_fault = fault;
            }
            tr.partition_responses
                .push(ProduceResponsePartitionProduceResponse {
                    index: pd.index,
                    error_code: code.code(),
                    base_offset,
                    log_append_time_ms: -1,
                    log_start_offset: log_start,
                    ..Default::default()
                });
        }
        resp.responses.push(tr);
    }
    (request_fault, resp)
}

fn api_versions() -> ApiVersionsResponse {
    let keys = [
        (ApiKey::Produce, 3, 13),
        (ApiKey::Metadata, 0, 13),
        (ApiKey::ApiVersions, 0, 4),
        (ApiKey::InitProducerId, 0, 6),
    ];
    ApiVersionsResponse::listing(&keys)
}

fn metadata(st: &State, addrs: &[String]) -> MetadataResponse {
    MetadataResponse {
        brokers: addrs
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let (host, port) = a.rsplit_once(':').unwrap();
                MetadataResponseBroker {
                    node_id: i as i32 + 1,
                    host: host.into(),
                    port: port.parse().unwrap(),
                    ..Default::default()
                }
            })
            .collect(),
        cluster_id: Some("scripted".into()),
        controller_id: 1,
        topics: vec![MetadataResponseTopic {
            name: Some(TOPIC.into()),
            topic_id: TOPIC_ID,
            partitions: st
                .leaders
                .iter()
                .enumerate()
                .map(|(p, &leader)| MetadataResponsePartition {
                    partition_index: p as i32,
                    leader_id: leader,
                    leader_epoch: st.leader_epoch,
                    replica_nodes: (1..=addrs.len() as i32).collect(),
                    isr_nodes: (1..=addrs.len() as i32).collect(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// Small batches (about 10 records of 6 bytes), short linger and backoff.
fn config(fake: &Fake) -> ProducerConfig {
    ProducerConfig::builder(&fake.bootstrap())
        .batch_size(200)
        .linger(Duration::from_millis(1))
        .retry_backoff(Duration::from_millis(10))
        .request_timeout(Duration::from_secs(5))
        .build()
        .unwrap()
}

/// Sends `n` records to each of `partitions` (value = the record's index in
/// its partition, zero-padded) without awaiting, then awaits them all.
async fn send_all(
    producer: &Producer,
    partitions: i32,
    n: u64,
) -> Vec<(
    i32,
    u64,
    Result<RecordMetadata, kafka_producer::ProduceError>,
)> {
    let mut pending = Vec::new();
    for i in 0..n {
        for p in 0..partitions {
            let r = ProducerRecord::new(TOPIC)
                .partition(p)
                .value(format!("{i:06}"));
            pending.push((p, i, producer.send(r)));
        }
    }
    let mut out = Vec::new();
    for (p, i, f) in pending {
        out.push((p, i, f.await));
    }
    out
}

/// Every partition's log holds exactly `0..n`, in order.
fn assert_logs_exact(fake: &Fake, n: u64) {
    let st = fake.state();
    for (p, log) in st.logs.iter().enumerate() {
        let want: Vec<u64> = (0..n).collect();
        assert_eq!(log.values, want, "partition {p}: order, duplicates or gaps");
    }
}

/// Every send resolved Ok at offset = index (the log is exact).
fn assert_all_ok_at_index(
    results: &[(
        i32,
        u64,
        Result<RecordMetadata, kafka_producer::ProduceError>,
    )],
) {
    for (p, i, r) in results {
        let m = r.as_ref().unwrap_or_else(|e| panic!("{p}/{i}: {e}"));
        assert_eq!((m.partition, m.offset), (*p, Some(*i as i64)));
    }
}

async fn bounded<F: Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
        .expect("test took longer than 30 s")
}

async fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !cond() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// Fails the first attempt of a batch with a retriable error while later
/// batches of the partition are already in flight: the broker answers those
/// OUT_OF_ORDER_SEQUENCE_NUMBER (a sequence is missing), the client retries
/// them behind the head batch — no epoch bump, order kept.
#[tokio::test]
async fn out_of_order_behind_a_failed_head_batch_is_retried_in_order() {
    let mut failed = false;
    let fake = Fake::start(
        1,
        1,
        Box::new(move |b, _| {
            if b.base_sequence >= 20 && !failed {
                failed = true;
                return Fault::Error(ErrorCode::NotEnoughReplicas, 0);
            }
            Fault::Pass
        }),
    )
    .await;
    let producer = Producer::connect(config(&fake)).await.unwrap();
    let results = bounded(send_all(&producer, 1, 200)).await;
    assert_all_ok_at_index(&results);
    assert_logs_exact(&fake, 200);
    let st = fake.state();
    assert!(
        st.count(ErrorCode::OutOfOrderSequenceNumber) >= 1,
        "later batches were in flight when the head failed"
    );
    let m = producer.metrics();
    assert_eq!(m.epoch_bumps, 0, "{m:?}");
    assert!(m.retries >= 2, "{m:?}");
}

/// OUT_OF_ORDER_SEQUENCE_NUMBER for the batch right after the last
/// acknowledged one is a real gap: the idempotent producer bumps its epoch
/// (KIP-360), rewrites the in-flight batches from sequence 0 and resends.
#[tokio::test]
async fn out_of_order_for_the_next_batch_bumps_the_epoch() {
    let mut injected = false;
    let fake = Fake::start(
        1,
        1,
        Box::new(move |b, _| {
            if b.first > 0 && b.base_sequence > 0 && !injected {
                injected = true;
                return Fault::Error(ErrorCode::OutOfOrderSequenceNumber, 0);
            }
            Fault::Pass
        }),
    )
    .await;
    let producer = Producer::connect(config(&fake)).await.unwrap();
    let results = bounded(send_all(&producer, 1, 200)).await;
    assert_all_ok_at_index(&results);
    assert_logs_exact(&fake, 200);
    assert_eq!(producer.metrics().epoch_bumps, 1);
    let st = fake.state();
    let pid = st.seen[0].producer_id;
    let bumped: Vec<&SeenBatch> = st.seen.iter().filter(|b| b.epoch == 1).collect();
    assert!(!bumped.is_empty());
    assert!(bumped.iter().all(|b| b.producer_id == pid));
    assert_eq!(bumped[0].base_sequence, 0, "sequences restart at 0");
    let p = st.logs[0].producer.as_ref().unwrap();
    assert_eq!((p.producer_id, p.epoch), (pid, 1));
}

/// The broker lost the producer's state (UNKNOWN_PRODUCER_ID with a known
/// log start offset): epoch bump, resend from sequence 0, nothing lost or
/// duplicated.
#[tokio::test]
async fn unknown_producer_id_bumps_the_epoch_and_resends_from_zero() {
    let mut injected = false;
    let fake = Fake::start(
        1,
        1,
        Box::new(move |b, st| {
            if b.base_sequence >= 20 && !injected {
                injected = true;
                st.logs[0].producer = None;
            }
            if injected && b.epoch == 0 {
                // Every batch of the lost epoch from now on.
                return Fault::Error(ErrorCode::UnknownProducerId, 0);
            }
            Fault::Pass
        }),
    )
    .await;
    let producer = Producer::connect(config(&fake)).await.unwrap();
    let results = bounded(send_all(&producer, 1, 200)).await;
    assert_all_ok_at_index(&results);
    assert_logs_exact(&fake, 200);
    assert_eq!(producer.metrics().epoch_bumps, 1);
    let st = fake.state();
    assert!(st.count(ErrorCode::UnknownProducerId) >= 1);
    let first_bumped = st.seen.iter().find(|b| b.epoch == 1).unwrap();
    assert_eq!(first_bumped.base_sequence, 0);
}

/// A batch written but whose response was lost (connection closed) is
/// retried with the same sequence; a broker answering
/// DUPLICATE_SEQUENCE_NUMBER makes it a success without an offset.
#[tokio::test]
async fn duplicate_sequence_number_is_success_without_offset() {
    let mut lost = false;
    let fake = Fake::start(
        1,
        1,
        Box::new(move |b, _| {
            if b.first > 0 && !lost {
                lost = true;
                return Fault::Lost;
            }
            Fault::Pass
        }),
    )
    .await;
    fake.state().duplicate_as_error = true;
    let producer = Producer::connect(config(&fake)).await.unwrap();
    let results = bounded(send_all(&producer, 1, 200)).await;
    assert_logs_exact(&fake, 200);
    let st = fake.state();
    assert_eq!(st.count(ErrorCode::DuplicateSequenceNumber), 1);
    let lost = st.seen.iter().find(|b| b.first > 0).unwrap().clone();
    let lost_range = lost.first..lost.first + lost.count as u64;
    let attempts: Vec<_> = st.seen.iter().filter(|b| b.first == lost.first).collect();
    assert!(attempts.len() >= 2);
    assert!(
        attempts
            .iter()
            .all(|b| b.producer_state() == lost.producer_state())
    );
    for (_, i, r) in &results {
        let m = r.as_ref().unwrap();
        if lost_range.contains(i) {
            assert_eq!(m.offset, None, "record {i}: duplicate → no offset");
        } else {
            assert_eq!(m.offset, Some(*i as i64));
        }
    }
    assert_eq!(producer.metrics().epoch_bumps, 0);
}

/// NOT_LEADER_OR_FOLLOWER: leadership of partition 0 moves from node 1 to
/// node 2 mid-stream; the producer refreshes metadata and continues on node
/// 2 in order.
#[tokio::test]
async fn not_leader_refreshes_metadata_and_keeps_order() {
    let mut batches = 0;
    let fake = Fake::start(
        2,
        2,
        Box::new(move |b, st| {
            if b.partition == 0 {
                batches += 1;
                if batches == 3 {
                    st.leaders[0] = 2;
                    st.leader_epoch += 1;
                }
            }
            Fault::Pass
        }),
    )
    .await;
    let producer = Producer::connect(config(&fake)).await.unwrap();
    let metadata_before = fake.state().metadata_requests;
    let results = bounded(send_all(&producer, 2, 200)).await;
    assert_all_ok_at_index(&results);
    assert_logs_exact(&fake, 200);
    let st = fake.state();
    assert!(st.count(ErrorCode::NotLeaderOrFollower) >= 1);
    assert!(
        st.metadata_requests > metadata_before,
        "metadata refreshed after NOT_LEADER_OR_FOLLOWER"
    );
    assert!(st.seen.iter().any(|b| b.partition == 0 && b.node == 2));
    assert!(
        st.seen.iter().all(|b| b.partition != 1 || b.node == 1),
        "partition 1 stayed on node 1"
    );
    assert_eq!(producer.metrics().epoch_bumps, 0);
}

/// A request the broker never answers times out (`request.timeout.ms`);
/// the retry carries the same producer id, epoch and base sequence.
#[tokio::test]
async fn request_timeout_retry_keeps_producer_id_epoch_and_sequence() {
    let mut swallowed = false;
    let fake = Fake::start(
        1,
        1,
        Box::new(move |b, _| {
            if b.first > 0 && !swallowed {
                swallowed = true;
                return Fault::Silent;
            }
            Fault::Pass
        }),
    )
    .await;
    let cfg = ProducerConfig::builder(&fake.bootstrap())
        .batch_size(200)
        .linger(Duration::from_millis(1))
        .retry_backoff(Duration::from_millis(10))
        .request_timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let producer = Producer::connect(cfg).await.unwrap();
    let results = bounded(send_all(&producer, 1, 200)).await;
    assert_all_ok_at_index(&results);
    assert_logs_exact(&fake, 200);
    let st = fake.state();
    let first = st.seen.iter().find(|b| b.first > 0).unwrap().clone();
    let attempts: Vec<_> = st.seen.iter().filter(|b| b.first == first.first).collect();
    assert!(attempts.len() >= 2, "{attempts:?}");
    for a in &attempts {
        assert_eq!(
            a.producer_state(),
            first.producer_state(),
            "a retry after a request timeout must keep producer id, epoch and sequence"
        );
    }
    assert!(
        producer
            .metrics()
            .errors_by_code
            .contains_key(&ErrorCode::NetworkException.code())
    );
    assert_eq!(producer.metrics().epoch_bumps, 0);
}

/// With every response held, the producer keeps the partition's first
/// batch alone in flight until it is acknowledged (the broker may hold no
/// state for the producer yet and would append a later batch first), then at
/// most `max.in.flight.requests.per.connection` = 5 requests (and so at most
/// 5 batches of the partition) in flight; releasing one lets exactly one
/// more in.
#[tokio::test]
async fn at_most_five_batches_in_flight_per_partition() {
    let fake = Fake::start(1, 1, Box::new(|_, _| Fault::Hold)).await;
    let producer = Producer::connect(config(&fake)).await.unwrap();
    const N: u64 = 300;
    let sends = tokio::spawn({
        let producer = producer.clone();
        async move { send_all(&producer, 1, N).await }
    });
    let records_seen = |st: &State| st.seen.iter().map(|b| b.count as u64).sum::<u64>();
    wait_until("the first batch in flight", || fake.state().held.len() == 1).await;
    // Negative check: give the sender time to (wrongly) send a second batch
    // while many full batches are ready.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(fake.state().max_held, 1, "the first batch travels alone");
    assert!(fake.release_oldest());
    wait_until("5 requests in flight", || fake.state().held.len() == 5).await;
    // Negative check: give the sender time to (wrongly) send a sixth while
    // many full batches are ready.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(fake.state().max_held, 5);
    let mut releases = 0;
    loop {
        wait_until("the window to refill or the stream to end", || {
            let st = fake.state();
            st.held.len() == 5 || records_seen(&st) == N
        })
        .await;
        if records_seen(&fake.state()) == N {
            while fake.release_oldest() {}
            break;
        }
        assert!(fake.release_oldest());
        releases += 1;
    }
    let results = bounded(sends).await.unwrap();
    assert_all_ok_at_index(&results);
    assert_logs_exact(&fake, N);
    let st = fake.state();
    assert_eq!(st.max_held, 5, "never more than 5 in flight");
    assert!(releases >= 10, "the window slid {releases} times");
    // Every batch was sent once: no retries, sequences contiguous.
    let mut next = 0;
    for b in &st.seen {
        assert_eq!(b.base_sequence, next);
        next += b.count;
    }
}

/// A topic the broker refuses in its metadata answer (INVALID_TOPIC_EXCEPTION
/// for a name it rejects, TOPIC_AUTHORIZATION_FAILED for a principal without
/// WRITE): the records waiting for that metadata fail at once with the
/// broker's code — not after `max.block.ms` — and were never written; sends
/// to the other topic are unaffected.
async fn refused_topic_fails_waiting_records(error: ErrorCode) {
    let fake = Fake::start(1, 1, Box::new(|_: &SeenBatch, _: &mut State| Fault::Pass)).await;
    fake.state().refused.push(("refused".into(), error));
    let cfg = ProducerConfig::builder(&fake.bootstrap())
        .linger(Duration::from_millis(1))
        .max_block(Duration::from_secs(600))
        .build()
        .unwrap();
    let producer = Producer::connect(cfg).await.unwrap();
    let waiting: Vec<_> = (0..3)
        .map(|i| producer.send(ProducerRecord::new("refused").value(format!("{i}"))))
        .collect();
    let fine = producer.send(ProducerRecord::new(TOPIC).partition(0).value("000000"));
    for f in waiting {
        let e = bounded(f)
            .await
            .expect_err("a refused topic cannot be written");
        assert!(
            matches!(&e, kafka_producer::ProduceError::TopicRefused { topic, error: got } if &**topic == "refused" && *got == error),
            "{e:?}"
        );
        assert_eq!(e.error_code(), Some(error));
    }
    assert_eq!(bounded(fine).await.unwrap().offset, Some(0));
    // A later send asks the broker again, and fails again.
    let again = producer.send(ProducerRecord::new("refused").value("x"));
    assert_eq!(bounded(again).await.unwrap_err().error_code(), Some(error));
    assert_logs_exact(&fake, 1);
    producer.close(Duration::from_secs(5)).await.unwrap();
}

#[tokio::test]
async fn invalid_topic_in_metadata_fails_the_waiting_records() {
    refused_topic_fails_waiting_records(ErrorCode::InvalidTopicException).await;
}

#[tokio::test]
async fn unauthorized_topic_in_metadata_fails_the_waiting_records() {
    refused_topic_fails_waiting_records(ErrorCode::TopicAuthorizationFailed).await;
}
