//! The idempotent producer against a scripted broker that keeps Kafka's
//! per-partition producer state (`ProducerStateManager` /
//! `ProducerAppendInfo` before transaction version 2), under seeded
//! connection faults.
//!
//! Invariant: every send resolves Ok, and each partition's log holds every
//! record exactly once, in send order, at the offset its acknowledgement
//! named.
//!
//! The model broker appends a batch when its sequence follows the
//! partition's last sequence of the producer (or starts an epoch at 0), and
//! — as Kafka without transaction version 2 does — accepts **any** sequence
//! when it holds no state for the producer yet. It answers a retry of one of
//! the last five batches as a duplicate with the original offset. So a batch
//! that reaches the broker ahead of an earlier one of its partition is
//! either refused (the producer retries it) or, for the first batches of a
//! partition, appended out of order: the loss the producer must never
//! cause.
//!
//! Faults, drawn per Produce request from a seeded generator: the
//! connection closes before the request is read (it and every request
//! pipelined behind it are lost), the request is applied but the connection
//! closes before the answer, or the broker refuses every partition with
//! NOT_ENOUGH_REPLICAS without appending. The seed fixes the fault plan, not
//! the thread interleaving; a failure prints it. `ORDERING_RUNS` sets the
//! number of seeds (30), `ORDERING_REQUEST_TIMEOUT_MS` the producer's request
//! timeout (10 s; a few milliseconds time requests out while the broker still
//! holds them). Interleavings that expose reordering come with CPU
//! contention: loop it beside a busy machine.
//!
//! Also checked: on every connection, the first batch of a partition starts
//! at or below the sequence the broker expects next — a batch drained before
//! the producer saw a connection loss never overtakes the lost ones on the
//! next connection. With `connections.per.broker` 2, the same invariant
//! holds with the partitions spread over two connections, and no connection
//! carries partitions of both (partition p keeps to connection p mod 2).

use crate::{Producer, ProducerConfig, ProducerRecord};
use kafka_client::internals::scripted_peer::{
    Seen, Step, idempotent_api_versions_reply, metadata_reply_with, peer,
};
use kafka_proto::frame::{decode_request_frame, encode_response_frame};
use kafka_proto::messages::*;
use kafka_proto::record::RecordBatchView;
use kafka_proto::{ApiKey, ErrorCode};
use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const PARTITIONS: i32 = 4;
const TOPIC: &str = "ordered";
const TOPIC_ID: [u8; 16] = [7; 16];

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    None,
    /// The connection closes before the request is read.
    LostBeforeRead,
    /// The request is applied; the connection closes before the answer.
    AnswerLost,
    /// NOT_ENOUGH_REPLICAS for every partition, nothing appended.
    NotEnoughReplicas,
}

/// One producer's state in one partition, as the broker keeps it.
struct ProducerEntry {
    epoch: i16,
    last_sequence: i32,
    /// (first sequence, last sequence, base offset) of the last five batches.
    recent: VecDeque<(i32, i32, i64)>,
}

#[derive(Default)]
struct PartitionLog {
    /// Record values in offset order.
    records: Vec<Vec<u8>>,
    /// Keyed by producer id (one producer per test run).
    entry: Option<(i64, ProducerEntry)>,
}

struct Broker {
    partitions: Vec<PartitionLog>,
    /// Batches that overtook an earlier one of their partition by arriving
    /// first on a new connection.
    overtakes: Vec<String>,
    /// The producer's `connections.per.broker`.
    connections: i32,
    /// Connections that carried partitions of more than one lane.
    mixed_connections: Vec<String>,
    rng: Rng,
    next_producer_id: i64,
}

impl Broker {
    fn new(seed: u64, connections: i32) -> Self {
        Self {
            partitions: (0..PARTITIONS).map(|_| PartitionLog::default()).collect(),
            overtakes: Vec::new(),
            connections,
            mixed_connections: Vec::new(),
            rng: Rng(seed | 1),
            next_producer_id: 1000,
        }
    }

    fn fault(&mut self) -> Fault {
        match self.rng.below(100) {
            0..=5 => Fault::LostBeforeRead,
            6..=10 => Fault::AnswerLost,
            11..=15 => Fault::NotEnoughReplicas,
            _ => Fault::None,
        }
    }

    /// `ProducerAppendInfo.checkSequence` + the duplicate check, without
    /// transaction version 2: the error, or the base offset (new or
    /// duplicate).
    fn append(&mut self, partition: i32, batch: &[u8]) -> Result<i64, ErrorCode> {
        let view = RecordBatchView::decode(batch).map_err(|_| ErrorCode::CorruptMessage)?;
        let log = &mut self.partitions[partition as usize];
        let first = view.base_sequence;
        let last = first + view.last_offset_delta;
        if let Some((pid, e)) = &log.entry
            && *pid == view.producer_id
        {
            if view.producer_epoch < e.epoch {
                return Err(ErrorCode::InvalidProducerEpoch);
            }
            if view.producer_epoch == e.epoch
                && let Some(&(_, _, offset)) =
                    e.recent.iter().find(|(f, l, _)| *f == first && *l == last)
            {
                return Ok(offset);
            }
            let in_order = if view.producer_epoch != e.epoch {
                first == 0
            } else {
                first == e.last_sequence + 1
            };
            if !in_order {
                return Err(ErrorCode::OutOfOrderSequenceNumber);
            }
        }
        // No state for this producer: any sequence is accepted.
        let base = log.records.len() as i64;
        for r in view.records() {
            let r = r.map_err(|_| ErrorCode::CorruptMessage)?;
            log.records
                .push(r.value.map(|v| v.to_vec()).unwrap_or_default());
        }
        let entry = match &mut log.entry {
            Some((pid, e)) if *pid == view.producer_id && e.epoch == view.producer_epoch => e,
            slot => {
                *slot = Some((
                    view.producer_id,
                    ProducerEntry {
                        epoch: view.producer_epoch,
                        last_sequence: -1,
                        recent: VecDeque::new(),
                    },
                ));
                &mut slot.as_mut().expect("just set").1
            }
        };
        entry.last_sequence = last;
        entry.recent.push_back((first, last, base));
        if entry.recent.len() > 5 {
            entry.recent.pop_front();
        }
        Ok(base)
    }

    /// The sequence the partition's next batch must start at: 0 without
    /// state (the first batch of the producer).
    fn expected_sequence(&self, partition: i32) -> i32 {
        match &self.partitions[partition as usize].entry {
            Some((_, e)) => e.last_sequence + 1,
            None => 0,
        }
    }

    /// `first_on_connection`: partitions already seen on this connection.
    fn produce(&mut self, s: &Seen, first_on_connection: &mut HashSet<i32>) -> Step {
        let (_, req) = decode_request_frame::<ProduceRequest>(&s.body).expect("Produce");
        let fault = self.fault();
        if fault == Fault::LostBeforeRead {
            return Step::ReplyAndClose(Vec::new());
        }
        let mut responses = Vec::new();
        for t in &req.topic_data {
            let mut parts = Vec::new();
            for p in &t.partition_data {
                // The first batch of a partition on a connection is the head
                // of the producer's unacknowledged batches: it never starts
                // beyond what the broker expects next.
                if first_on_connection.insert(p.index)
                    && let Some(bytes) = p.records.as_deref()
                    && let Ok(view) = RecordBatchView::decode(bytes)
                    && view.base_sequence > self.expected_sequence(p.index)
                {
                    self.overtakes.push(format!(
                        "partition {}: sequence {} arrived first on a new connection; {} expected",
                        p.index,
                        view.base_sequence,
                        self.expected_sequence(p.index)
                    ));
                }
                let result = if fault == Fault::NotEnoughReplicas {
                    Err(ErrorCode::NotEnoughReplicas)
                } else {
                    self.append(p.index, p.records.as_deref().unwrap_or_default())
                };
                parts.push(ProduceResponsePartitionProduceResponse {
                    index: p.index,
                    error_code: result.err().unwrap_or(ErrorCode::None).code(),
                    base_offset: result.unwrap_or(-1),
                    log_start_offset: 0,
                    ..Default::default()
                });
            }
            responses.push(ProduceResponseTopicProduceResponse {
                name: t.name.clone(),
                topic_id: t.topic_id,
                partition_responses: parts,
                ..Default::default()
            });
        }
        // Every partition of the request is in the set now: all of one lane.
        let lanes: HashSet<i32> = first_on_connection
            .iter()
            .map(|p| p % self.connections)
            .collect();
        if lanes.len() > 1 {
            self.mixed_connections.push(format!(
                "one connection carried partitions {first_on_connection:?}"
            ));
        }
        if fault == Fault::AnswerLost {
            return Step::ReplyAndClose(Vec::new());
        }
        let resp = ProduceResponse {
            responses,
            ..Default::default()
        };
        Step::Reply(vec![
            encode_response_frame(&resp, s.version, s.correlation_id).unwrap(),
        ])
    }
}

/// Starts the model broker; returns its address and state.
async fn start_broker(seed: u64, connections: i32) -> (String, Arc<Mutex<Broker>>) {
    let broker = Arc::new(Mutex::new(Broker::new(seed, connections)));
    let addr_cell: Arc<Mutex<String>> = Arc::default();
    let (b, a) = (broker.clone(), addr_cell.clone());
    let (addr, _log) = peer(move || {
        let (broker, addr) = (b.clone(), a.clone());
        let mut seen_partitions = HashSet::new();
        move |s: Seen| match s.api {
            ApiKey::ApiVersions => Step::Reply(vec![idempotent_api_versions_reply(&s)]),
            ApiKey::Metadata => Step::Reply(vec![metadata_reply_with(
                &s,
                TOPIC,
                TOPIC_ID,
                PARTITIONS,
                &addr.lock().unwrap(),
            )]),
            ApiKey::InitProducerId => {
                let mut b = broker.lock().unwrap();
                b.next_producer_id += 1;
                let resp = InitProducerIdResponse {
                    producer_id: b.next_producer_id,
                    producer_epoch: 0,
                    ..Default::default()
                };
                Step::Reply(vec![
                    encode_response_frame(&resp, s.version, s.correlation_id).unwrap(),
                ])
            }
            ApiKey::Produce => broker.lock().unwrap().produce(&s, &mut seen_partitions),
            other => panic!("unexpected request {other:?}"),
        }
    })
    .await;
    *addr_cell.lock().unwrap() = addr.clone();
    (addr, broker)
}

/// The producer's request timeout: 10 s, or `ORDERING_REQUEST_TIMEOUT_MS`
/// (a few milliseconds make requests time out while the broker still holds
/// them: the timeout path under the same invariant).
fn request_timeout() -> Duration {
    std::env::var("ORDERING_REQUEST_TIMEOUT_MS")
        .ok()
        .and_then(|s| s.parse().ok())
        .map(Duration::from_millis)
        .unwrap_or(Duration::from_secs(10))
}

/// One run: `n` records over the partitions through the faults, on
/// `connections` connections to the broker; panics with the seed when the
/// invariant breaks.
async fn run(seed: u64, n: usize, connections: usize) {
    let (addr, broker) = start_broker(seed, connections as i32).await;
    let config = ProducerConfig::builder(&addr)
        .connections_per_broker(connections)
        .linger(Duration::from_millis(1))
        .batch_size(600)
        .retry_backoff(Duration::from_millis(1))
        .request_timeout(request_timeout())
        .delivery_timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    // With a request timeout of a few milliseconds the bootstrap round
    // trip itself may time out: connect again.
    let mut attempts = 0;
    let producer = loop {
        match Producer::connect(config.clone()).await {
            Ok(p) => break p,
            Err(e) if attempts < 100 => {
                attempts += 1;
                tracing::debug!(error = %e, "connect failed; again");
            }
            Err(e) => panic!("seed {seed}: connect: {e}"),
        }
    };
    let sends: Vec<_> = (0..n)
        .map(|i| {
            let p = (i as i32) % PARTITIONS;
            let seq = i / PARTITIONS as usize;
            let value = format!("{p}:{seq:06}:{}", "x".repeat(20));
            (
                p,
                value.clone(),
                producer.send(ProducerRecord::new(TOPIC).partition(p).value(value)),
            )
        })
        .collect();
    let mut acked = Vec::new();
    for (p, value, f) in sends {
        let md = f
            .await
            .unwrap_or_else(|e| panic!("seed {seed}: a send failed: {e}"));
        acked.push((p, value, md.offset));
    }
    producer.close(Duration::from_secs(10)).await.unwrap();
    let b = broker.lock().unwrap();
    for p in 0..PARTITIONS {
        let want: Vec<Vec<u8>> = acked
            .iter()
            .filter(|(q, _, _)| *q == p)
            .map(|(_, v, _)| v.clone().into_bytes())
            .collect();
        let got = &b.partitions[p as usize].records;
        if *got != want {
            let first_diff = got.iter().zip(&want).position(|(a, b)| a != b);
            panic!(
                "seed {seed}: partition {p} holds {} records, {} sent; first difference at \
                 offset {first_diff:?} ({:?})",
                got.len(),
                want.len(),
                first_diff.map(|i| String::from_utf8_lossy(&got[i]).into_owned()),
            );
        }
    }
    assert!(
        b.overtakes.is_empty(),
        "seed {seed}: batches overtook earlier ones: {:?}",
        b.overtakes
    );
    assert!(
        b.mixed_connections.is_empty(),
        "seed {seed}: partitions of two lanes on one of {connections} connections: {:?}",
        b.mixed_connections
    );
    for (p, value, offset) in &acked {
        if let Some(o) = offset {
            assert_eq!(
                b.partitions[*p as usize].records.get(*o as usize),
                Some(&value.clone().into_bytes()),
                "seed {seed}: partition {p}: acknowledged offset {o}"
            );
        }
    }
}

/// The seeds of a test: `ORDERING_SEED..` (default: from the clock), as many
/// as `ORDERING_RUNS` (default 30); printed for a replay.
fn seeds() -> std::ops::Range<u64> {
    let base: u64 = std::env::var("ORDERING_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    let runs: u64 = std::env::var("ORDERING_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    eprintln!(
        "ordering: seeds {base}..{} (ORDERING_SEED to replay)",
        base + runs
    );
    base..base + runs
}

/// Every seed's run on `connections` connections, each within 120 s.
async fn run_all(connections: usize) {
    for seed in seeds() {
        tokio::time::timeout(Duration::from_secs(120), run(seed, 400, connections))
            .await
            .unwrap_or_else(|_| panic!("seed {seed}: the run did not finish within 120 s"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idempotent_sends_stay_ordered_and_exactly_once_through_connection_faults() {
    run_all(1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idempotent_sends_stay_ordered_and_exactly_once_on_two_connections_through_faults() {
    run_all(2).await;
}
