//! The producer's sender and idempotence driver against kafka-mock, the
//! in-process cluster whose idempotence rules were checked against Kafka
//! 4.4 (per producer id and partition: a newer epoch must start at
//! sequence 0, the next batch must continue the last sequence, a repeat of
//! one of the last five batches is a duplicate answered with its first
//! offset, an older epoch is fenced).
//!
//! [`Broker`] wraps the cluster with an interceptor that decodes every
//! Produce batch the brokers receive, records it ([`SeenBatch`]) and asks a
//! per-test script what the broker does with it: serve it, answer an error,
//! write it and lose the answer, never serve it, or hold it until the test
//! releases it.
//!
//! The tests run on a current-thread runtime: every `send` of a test appends
//! before the sender task runs, so the drain pattern (several requests in
//! flight on one connection) is the same on every run.

use kafka_mock::{FaultAction, HoldHandle, MockCluster, MockConfig};
use kafka_producer::{Producer, ProducerConfig, ProducerRecord, RecordMetadata};
use kafka_proto::messages::ProduceRequest;
use kafka_proto::record::RecordBatch;
use kafka_proto::{ApiKey, ErrorCode};
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const TOPIC: &str = "scripted";

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

/// What the broker does with one Produce batch (and so with its request).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    /// Apply the broker's rules and answer.
    Pass,
    /// Answer this error without writing (with the partition's log start
    /// offset, as Kafka does).
    Error(ErrorCode),
    /// Write the batch, then close the connection without answering.
    Lost,
    /// Neither write nor answer the request (the client's request timeout
    /// fires and closes the connection).
    Silent,
    /// Keep the request until the test releases it from [`Broker::gate`],
    /// then serve it.
    Hold,
}

type Script = Box<dyn FnMut(&SeenBatch) -> Fault + Send>;

/// A script that answers `fault` to the first batch `hit` matches, and
/// passes every other batch.
fn once(mut hit: impl FnMut(&SeenBatch) -> bool + Send + 'static, fault: Fault) -> Script {
    let mut fault = Some(fault);
    Box::new(move |b| fault.take_if(|_| hit(b)).unwrap_or(Fault::Pass))
}

/// The scripted cluster: brokers 1..=n, every partition of [`TOPIC`] led
/// by broker 1.
struct Broker {
    cluster: MockCluster,
    seen: Arc<Mutex<Vec<SeenBatch>>>,
    /// Holds the requests of batches scripted [`Fault::Hold`].
    gate: HoldHandle,
}

impl Broker {
    async fn start(brokers: usize, partitions: i32, script: Script) -> Self {
        let cluster = MockCluster::start(MockConfig {
            brokers,
            ..MockConfig::default()
        })
        .await
        .unwrap();
        cluster.create_topic(TOPIC, partitions).unwrap();
        for p in 0..partitions {
            if cluster.leader(TOPIC, p) != Some(1) {
                cluster.move_leader(TOPIC, p, 1).unwrap();
            }
        }
        let seen = Arc::new(Mutex::new(Vec::new()));
        let gate = HoldHandle::new();
        // Never released: the connection's close drops the request.
        let never = HoldHandle::new();
        let script = Mutex::new(script);
        let (log, held) = (seen.clone(), gate.clone());
        cluster.set_interceptor(Arc::new(move |r| {
            let request = r.decode::<ProduceRequest>()?;
            let mut script = script.lock().unwrap();
            let mut strongest = Fault::Pass;
            for pd in request.topic_data.iter().flat_map(|t| &t.partition_data) {
                let batch = RecordBatch::decode(pd.records.as_deref()?).ok()?;
                let seen = SeenBatch {
                    node: r.broker,
                    partition: pd.index,
                    producer_id: batch.producer_id,
                    epoch: batch.producer_epoch,
                    base_sequence: batch.base_sequence,
                    count: batch.records.len() as i32,
                    first: value(&batch, 0),
                };
                log.lock().unwrap().push(seen.clone());
                let fault = script(&seen);
                if fault != Fault::Pass {
                    strongest = fault;
                }
            }
            match strongest {
                Fault::Pass => None,
                Fault::Error(code) => Some(FaultAction::Error(code)),
                Fault::Lost => Some(FaultAction::DisconnectAfter),
                Fault::Silent => Some(FaultAction::Hold(never.clone())),
                Fault::Hold => Some(FaultAction::Hold(held.clone())),
            }
        }));
        Self {
            cluster,
            seen,
            gate,
        }
    }

    fn bootstrap(&self) -> String {
        self.cluster.bootstrap()
    }

    /// Every Produce batch received so far, in arrival order.
    fn seen(&self) -> Vec<SeenBatch> {
        self.seen.lock().unwrap().clone()
    }

    /// How many requests of `api` the brokers received.
    fn received(&self, api: ApiKey) -> usize {
        self.cluster
            .requests()
            .iter()
            .filter(|r| r.api == api)
            .count()
    }

    /// The values written to a partition, in offset order.
    fn log(&self, partition: i32) -> Vec<u64> {
        let batches = self.cluster.batches(TOPIC, partition).unwrap();
        batches
            .iter()
            .filter(|b| !b.is_control)
            .flat_map(|b| (0..b.records.len()).map(move |i| value(b, i)))
            .collect()
    }

    /// The (producer id, epoch) of the last batch written to a partition.
    fn last_writer(&self, partition: i32) -> Option<(i64, i16)> {
        let batches = self.cluster.batches(TOPIC, partition).unwrap();
        batches.last().map(|b| (b.producer_id, b.producer_epoch))
    }
}

/// The `i`-th record's value, a number.
fn value(batch: &RecordBatch, i: usize) -> u64 {
    let v = batch.records[i].value.as_deref().expect("a value");
    std::str::from_utf8(v).unwrap().parse().unwrap()
}

/// How many times the producer was answered `code`.
fn answered(producer: &Producer, code: ErrorCode) -> u64 {
    let m = producer.metrics();
    m.errors_by_code.get(&code.code()).copied().unwrap_or(0)
}

/// Small batches (about 10 records of 6 bytes), short linger and backoff.
fn config(broker: &Broker) -> ProducerConfig {
    ProducerConfig::builder(&broker.bootstrap())
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
fn assert_logs_exact(broker: &Broker, partitions: i32, n: u64) {
    for p in 0..partitions {
        let want: Vec<u64> = (0..n).collect();
        assert_eq!(
            broker.log(p),
            want,
            "partition {p}: order, duplicates or gaps"
        );
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

/// Starts one broker with one partition faulted by `script`, sends 200
/// records through a producer of [`config`] and checks that, whatever the
/// faults, every send succeeded at its index and the log holds each record
/// once, in order.
async fn send_200_exactly_once(script: Script) -> (Broker, Producer) {
    let broker = Broker::start(1, 1, script).await;
    let producer = Producer::connect(config(&broker)).await.unwrap();
    let results = bounded(send_all(&producer, 1, 200)).await;
    assert_all_ok_at_index(&results);
    assert_logs_exact(&broker, 1, 200);
    (broker, producer)
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
    let (_broker, producer) = send_200_exactly_once(once(
        |b| b.base_sequence >= 20,
        Fault::Error(ErrorCode::NotEnoughReplicas),
    ))
    .await;
    assert!(
        answered(&producer, ErrorCode::OutOfOrderSequenceNumber) >= 1,
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
    let (broker, producer) = send_200_exactly_once(once(
        |b| b.first > 0 && b.base_sequence > 0,
        Fault::Error(ErrorCode::OutOfOrderSequenceNumber),
    ))
    .await;
    assert_eq!(producer.metrics().epoch_bumps, 1);
    let seen = broker.seen();
    let pid = seen[0].producer_id;
    let bumped: Vec<&SeenBatch> = seen.iter().filter(|b| b.epoch == 1).collect();
    assert!(!bumped.is_empty());
    assert!(bumped.iter().all(|b| b.producer_id == pid));
    assert_eq!(bumped[0].base_sequence, 0, "sequences restart at 0");
    assert_eq!(broker.last_writer(0), Some((pid, 1)));
}

/// The broker lost the producer's state (UNKNOWN_PRODUCER_ID with a known
/// log start offset): epoch bump, resend from sequence 0, nothing lost or
/// duplicated.
#[tokio::test]
async fn unknown_producer_id_bumps_the_epoch_and_resends_from_zero() {
    let mut injected = false;
    let (broker, producer) = send_200_exactly_once(Box::new(move |b| {
        if b.base_sequence >= 20 {
            injected = true;
        }
        if injected && b.epoch == 0 {
            // Every batch of the lost epoch from now on.
            return Fault::Error(ErrorCode::UnknownProducerId);
        }
        Fault::Pass
    }))
    .await;
    assert_eq!(producer.metrics().epoch_bumps, 1);
    assert!(answered(&producer, ErrorCode::UnknownProducerId) >= 1);
    let seen = broker.seen();
    let first_bumped = seen.iter().find(|b| b.epoch == 1).unwrap();
    assert_eq!(first_bumped.base_sequence, 0);
}

/// A batch written but whose response was lost (connection closed) is
/// retried with the same sequence; a broker answering
/// DUPLICATE_SEQUENCE_NUMBER (as brokers before 2.x did for a retry of a
/// written batch; kafka-mock, as Kafka now, answers the first offset) makes
/// it a success without an offset.
#[tokio::test]
async fn duplicate_sequence_number_is_success_without_offset() {
    let mut lost: Option<SeenBatch> = None;
    let broker = Broker::start(
        1,
        1,
        Box::new(move |b| match &lost {
            None if b.first > 0 => {
                lost = Some(b.clone());
                Fault::Lost
            }
            Some(l) if l.producer_state() == b.producer_state() => {
                Fault::Error(ErrorCode::DuplicateSequenceNumber)
            }
            _ => Fault::Pass,
        }),
    )
    .await;
    let producer = Producer::connect(config(&broker)).await.unwrap();
    let results = bounded(send_all(&producer, 1, 200)).await;
    assert_logs_exact(&broker, 1, 200);
    assert_eq!(answered(&producer, ErrorCode::DuplicateSequenceNumber), 1);
    let seen = broker.seen();
    let lost = seen.iter().find(|b| b.first > 0).unwrap().clone();
    let lost_range = lost.first..lost.first + lost.count as u64;
    let attempts: Vec<_> = seen.iter().filter(|b| b.first == lost.first).collect();
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
    let broker = Broker::start(
        2,
        2,
        Box::new(move |b| {
            if b.partition == 0 {
                batches += 1;
                if batches == 3 {
                    // The test moves the leader while this batch waits.
                    return Fault::Hold;
                }
            }
            Fault::Pass
        }),
    )
    .await;
    let producer = Producer::connect(config(&broker)).await.unwrap();
    let metadata_before = broker.received(ApiKey::Metadata);
    let sends = tokio::spawn({
        let producer = producer.clone();
        async move { send_all(&producer, 2, 200).await }
    });
    bounded(broker.gate.wait_held(1)).await;
    broker.cluster.move_leader(TOPIC, 0, 2).unwrap();
    assert!(broker.gate.release_oldest().is_some());
    let results = bounded(sends).await.unwrap();
    assert_all_ok_at_index(&results);
    assert_logs_exact(&broker, 2, 200);
    assert!(answered(&producer, ErrorCode::NotLeaderOrFollower) >= 1);
    assert!(
        broker.received(ApiKey::Metadata) > metadata_before,
        "metadata refreshed after NOT_LEADER_OR_FOLLOWER"
    );
    let seen = broker.seen();
    assert!(seen.iter().any(|b| b.partition == 0 && b.node == 2));
    assert!(
        seen.iter().all(|b| b.partition != 1 || b.node == 1),
        "partition 1 stayed on node 1"
    );
    assert_eq!(producer.metrics().epoch_bumps, 0);
}

/// A request the broker never answers times out (`request.timeout.ms`);
/// the retry carries the same producer id, epoch and base sequence.
#[tokio::test]
async fn request_timeout_retry_keeps_producer_id_epoch_and_sequence() {
    let broker = Broker::start(1, 1, once(|b| b.first > 0, Fault::Silent)).await;
    let cfg = ProducerConfig::builder(&broker.bootstrap())
        .batch_size(200)
        .linger(Duration::from_millis(1))
        .retry_backoff(Duration::from_millis(10))
        .request_timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let producer = Producer::connect(cfg).await.unwrap();
    let results = bounded(send_all(&producer, 1, 200)).await;
    assert_all_ok_at_index(&results);
    assert_logs_exact(&broker, 1, 200);
    let seen = broker.seen();
    let first = seen.iter().find(|b| b.first > 0).unwrap().clone();
    let attempts: Vec<_> = seen.iter().filter(|b| b.first == first.first).collect();
    assert!(attempts.len() >= 2, "{attempts:?}");
    for a in &attempts {
        assert_eq!(
            a.producer_state(),
            first.producer_state(),
            "a retry after a request timeout must keep producer id, epoch and sequence"
        );
    }
    assert!(answered(&producer, ErrorCode::NetworkException) >= 1);
    assert_eq!(producer.metrics().epoch_bumps, 0);
}

/// With every request held, the producer keeps the partition's first
/// batch alone in flight until it is acknowledged (the broker may hold no
/// state for the producer yet and would append a later batch first), then at
/// most `max.in.flight.requests.per.connection` = 5 requests (and so at most
/// 5 batches of the partition) in flight; releasing one lets exactly one
/// more in. (The broker serves a connection's requests in order, so the
/// oldest is held and the others wait behind it, read and counted.)
#[tokio::test]
async fn at_most_five_batches_in_flight_per_partition() {
    let broker = Broker::start(1, 1, Box::new(|_| Fault::Hold)).await;
    let producer = Producer::connect(config(&broker)).await.unwrap();
    const N: u64 = 300;
    let sends = tokio::spawn({
        let producer = producer.clone();
        async move { send_all(&producer, 1, N).await }
    });
    let mut released = 0;
    let in_flight = |released: usize| broker.received(ApiKey::Produce) - released;
    let first = bounded(broker.gate.wait_held(1)).await;
    // Negative check: give the sender time to (wrongly) send a second batch
    // while many full batches are ready.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(in_flight(released), 1, "the first batch travels alone");
    // Every batch is full (all records were appended before the sender
    // ran), so the stream is this many requests.
    let per_batch = broker.seen()[0].count as u64;
    let requests = N.div_ceil(per_batch) as usize;
    assert_eq!(broker.gate.release_oldest(), Some(first[0]));
    released += 1;
    wait_until("5 requests in flight", || in_flight(released) == 5).await;
    // Only a release lowers the count: a sixth request sent at any time
    // shows at the check before the next release.
    let mut slides = 0;
    while released < requests {
        wait_until("the window to refill or the stream to end", || {
            let n = in_flight(released);
            n >= 5 || released + n == requests
        })
        .await;
        let n = in_flight(released);
        assert!(n <= 5, "{n} requests in flight");
        if n == 5 && released + n < requests {
            slides += 1;
        }
        bounded(broker.gate.wait_held(1)).await;
        assert!(broker.gate.release_oldest().is_some());
        released += 1;
    }
    let results = bounded(sends).await.unwrap();
    assert_all_ok_at_index(&results);
    assert_logs_exact(&broker, 1, N);
    assert_eq!(broker.received(ApiKey::Produce), requests, "no retries");
    assert!(slides >= 10, "the window slid {slides} times");
    // Every batch was sent once: no retries, sequences contiguous.
    let mut next = 0;
    for b in &broker.seen() {
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
    let broker = Broker::start(1, 1, Box::new(|_| Fault::Pass)).await;
    broker.cluster.refuse_topic("refused", error);
    let cfg = ProducerConfig::builder(&broker.bootstrap())
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
    assert_logs_exact(&broker, 1, 1);
    assert_eq!(broker.cluster.offsets("refused", 0), None, "never created");
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
