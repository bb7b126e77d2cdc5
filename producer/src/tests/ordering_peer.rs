//! The idempotent producer against kafka-mock (a transaction version 1
//! cluster) under seeded connection faults; odd seeds with `batch.max.size`
//! above `batch.size` (batches waiting for an in-flight slot grow).
//!
//! Invariant: every send resolves Ok, and each partition's log holds every
//! record exactly once, in send order, at the offset its acknowledgement
//! named.
//!
//! The mock keeps Kafka's per-partition producer state
//! (`ProducerStateEntry` / `ProducerAppendInfo`): it appends a batch when
//! its sequence follows the partition's last sequence of the producer (or
//! starts an epoch at 0), and — as Kafka does for a producer that is not
//! transactional — accepts **any** sequence when it holds no state for the
//! producer yet. It answers a retry of one of the last five batches as a
//! duplicate with the original offset. So a batch that reaches the broker
//! ahead of an earlier one of its partition is either refused (the
//! producer retries it) or, for the first batches of a partition, appended
//! out of order: the loss the producer must never cause.
//!
//! Faults, drawn per Produce request from a seeded generator by the mock's
//! interceptor: the connection closes before the request is served (it and
//! every request pipelined behind it are lost), the request is applied but
//! the connection closes before the answer, or the broker refuses every
//! partition with NOT_ENOUGH_REPLICAS without appending. The seed fixes the
//! fault plan, not the thread interleaving; a failure prints it.
//! `ORDERING_RUNS` sets the number of seeds (30), `ORDERING_REQUEST_TIMEOUT_MS`
//! the producer's request timeout (10 s; a few milliseconds time requests out
//! while the broker still holds them). Interleavings that expose reordering
//! come with CPU contention: loop it beside a busy machine.
//!
//! Also checked, by the interceptor on the requests as the mock serves
//! them: on every connection, the first batch of a partition starts at or
//! below the sequence the broker expects next — a batch drained before the
//! producer saw a connection loss never overtakes the lost ones on the next
//! connection. With `connections.per.broker` 2, the same invariant holds
//! with the partitions spread over two connections, and no connection
//! carries partitions of both (partition p keeps to connection p mod 2).

use crate::{Producer, ProducerConfig, ProducerRecord};
use kafka_mock::{FaultAction, MockCluster, MockConfig, Request, TransactionVersion};
use kafka_proto::messages::ProduceRequest;
use kafka_proto::record::RecordBatchView;
use kafka_proto::{ApiKey, ErrorCode};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

const PARTITIONS: i32 = 4;
const TOPIC: &str = "ordered";

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

/// The fault plan and what the interceptor saw.
struct Plan {
    rng: Rng,
    /// The producer's `connections.per.broker`.
    connections: i32,
    /// Per connection, the partitions its Produce requests carried so far.
    seen: HashMap<u64, HashSet<i32>>,
    /// Batches that overtook an earlier one of their partition by arriving
    /// first on a new connection.
    overtakes: Vec<String>,
    /// Connections that carried partitions of more than one lane.
    mixed_connections: Vec<String>,
}

impl Plan {
    fn new(seed: u64, connections: i32) -> Self {
        Self {
            rng: Rng(seed | 1),
            connections,
            seen: HashMap::new(),
            overtakes: Vec::new(),
            mixed_connections: Vec::new(),
        }
    }

    /// This Produce request's fault, if any.
    fn fault(&mut self) -> Option<FaultAction> {
        match self.rng.below(100) {
            0..=5 => Some(FaultAction::DisconnectBefore),
            6..=10 => Some(FaultAction::DisconnectAfter),
            11..=15 => Some(FaultAction::Error(ErrorCode::NotEnoughReplicas)),
            _ => None,
        }
    }

    /// Draws the fault of a Produce request and, unless the connection
    /// closes before serving it, checks its first batches on the
    /// connection and the connection's lanes.
    fn produce(&mut self, r: &Request<'_>, cluster: &MockCluster) -> Option<FaultAction> {
        let req = r.decode::<ProduceRequest>()?;
        let fault = self.fault();
        if fault == Some(FaultAction::DisconnectBefore) {
            return fault;
        }
        let seen = self.seen.entry(r.connection).or_default();
        for t in &req.topic_data {
            for p in &t.partition_data {
                // The first batch of a partition on a connection is the head
                // of the producer's unacknowledged batches: it never starts
                // beyond what the broker expects next.
                if seen.insert(p.index)
                    && let Some(bytes) = p.records.as_deref()
                    && let Ok(view) = RecordBatchView::decode(bytes)
                {
                    let expected = expected_sequence(cluster, p.index);
                    if view.base_sequence > expected {
                        self.overtakes.push(format!(
                            "partition {}: sequence {} arrived first on connection {}; {expected} expected",
                            p.index, view.base_sequence, r.connection
                        ));
                    }
                }
            }
        }
        // Every partition of the request is in the set now: all of one lane.
        let lanes: HashSet<i32> = seen.iter().map(|p| p % self.connections).collect();
        if lanes.len() > 1 {
            self.mixed_connections.push(format!(
                "connection {} carried partitions {seen:?}",
                r.connection
            ));
        }
        fault
    }
}

/// The sequence a partition's next batch must start at: after the last
/// batch written, 0 before the first.
fn expected_sequence(cluster: &MockCluster, partition: i32) -> i32 {
    let batches = cluster.batches(TOPIC, partition).unwrap_or_default();
    batches
        .iter()
        .rfind(|b| !b.is_control)
        .map_or(0, |b| b.base_sequence + b.last_offset_delta + 1)
}

/// Starts a transaction version 1 cluster whose interceptor applies the
/// seed's fault plan to every Produce request.
async fn start_cluster(seed: u64, connections: i32) -> (Arc<MockCluster>, Arc<Mutex<Plan>>) {
    let cluster = Arc::new(
        MockCluster::start(MockConfig {
            transaction_version: TransactionVersion::V1,
            ..MockConfig::default()
        })
        .await
        .unwrap(),
    );
    cluster.create_topic(TOPIC, PARTITIONS).unwrap();
    let plan = Arc::new(Mutex::new(Plan::new(seed, connections)));
    // Weak: the cluster holds its interceptor.
    let (p, c): (_, Weak<MockCluster>) = (plan.clone(), Arc::downgrade(&cluster));
    cluster.set_interceptor(Arc::new(move |r| {
        if r.api != ApiKey::Produce {
            return None;
        }
        let cluster = c.upgrade()?;
        p.lock().unwrap().produce(r, &cluster)
    }));
    (cluster, plan)
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
    let (cluster, plan) = start_cluster(seed, connections as i32).await;
    let config = ProducerConfig::builder(&cluster.bootstrap())
        .connections_per_broker(connections)
        .linger(Duration::from_millis(1))
        .batch_size(600)
        // Odd seeds: batches waiting for an in-flight slot grow to 4 × 600.
        .batch_max_size((seed % 2 == 1).then_some(2_400usize))
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
    let plan = plan.lock().unwrap();
    for p in 0..PARTITIONS {
        let want: Vec<Vec<u8>> = acked
            .iter()
            .filter(|(q, _, _)| *q == p)
            .map(|(_, v, _)| v.clone().into_bytes())
            .collect();
        let log = partition_log(&cluster, p);
        let got: Vec<&Vec<u8>> = log.iter().map(|(_, v)| v).collect();
        if got.iter().copied().ne(want.iter()) {
            let first_diff = got.iter().zip(&want).position(|(a, b)| *a != b);
            panic!(
                "seed {seed}: partition {p} holds {} records, {} sent; first difference at \
                 offset {first_diff:?} ({:?})",
                got.len(),
                want.len(),
                first_diff.map(|i| String::from_utf8_lossy(got[i]).into_owned()),
            );
        }
    }
    assert!(
        plan.overtakes.is_empty(),
        "seed {seed}: batches overtook earlier ones: {:?}",
        plan.overtakes
    );
    assert!(
        plan.mixed_connections.is_empty(),
        "seed {seed}: partitions of two lanes on one of {connections} connections: {:?}",
        plan.mixed_connections
    );
    let logs: Vec<_> = (0..PARTITIONS)
        .map(|p| partition_log(&cluster, p))
        .collect();
    for (p, value, offset) in &acked {
        if let Some(o) = offset {
            assert_eq!(
                logs[*p as usize]
                    .iter()
                    .find(|(at, _)| at == o)
                    .map(|(_, v)| v),
                Some(&value.clone().into_bytes()),
                "seed {seed}: partition {p}: acknowledged offset {o}"
            );
        }
    }
}

/// A partition's records as (offset, value), in offset order.
fn partition_log(cluster: &MockCluster, partition: i32) -> Vec<(i64, Vec<u8>)> {
    let batches = cluster.batches(TOPIC, partition).unwrap();
    batches
        .iter()
        .filter(|b| !b.is_control)
        .flat_map(|b| &b.records)
        .map(|r| (r.offset, r.value.as_deref().unwrap_or_default().to_vec()))
        .collect()
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
