//! A randomized exactly-once checker for the transactional producer against
//! real brokers: Kafka 4.4 with transaction version 2, 4.4 formatted with
//! transaction.version=1, and 3.9, the harness's shared single-node
//! clusters (every topic, transactional id and group is unique: other tests
//! use them too; no part restarts or kills a broker).
//!
//! Each schedule is generated from a seed (printed; `EOS_SEED=<seed>`
//! replays exactly that schedule, `EOS_SCHEDULES=<n>` runs `n` schedules per
//! broker variant, 4 by default). A schedule picks a producer configuration
//! (`buffer.memory` 16 KiB to the default, `max.in.flight` 1-5, `linger.ms`
//! 0-50, `batch.size`, `batch.max.size`, compression) and a sequence of operations: sends
//! (0 B to 64 KiB, explicit partitions, keys, null keys, two topics), each
//! future awaited at once, later or never; flush; commit; abort;
//! `send_offsets_to_transaction`; sends outside a transaction; dropping or
//! closing the producer in the middle of a transaction (its successor's
//! `init_transactions` aborts it). The history records what every call
//! returned. Then read_committed and read_uncommitted readers check:
//!
//! 1. every record of a transaction whose commit returned `Ok` is visible
//!    exactly once, and none of its futures failed;
//! 2. nothing of an aborted transaction, or sent outside one, is visible;
//! 3. a transaction whose outcome is unknown is visible entirely or not at
//!    all;
//! 4. per partition, visible records are in send order;
//! 5. every future that returned `Ok` with an offset names an offset that
//!    holds exactly that record (read_uncommitted);
//! 6. the group offsets are those of the last committed
//!    `send_offsets_to_transaction`.
//!
//! Besides the random schedules, each variant runs the backpressure case
//! that once lost records (4,000 records of 1,000 B sent into a 64 KiB
//! buffer without polling, commit, then the futures awaited inside the next
//! transaction) and a producing child process killed with SIGKILL at a
//! seeded moment (`src/bin/eos_checker_child.rs` of this package; its seed
//! is printed too and `EOS_SEED` replays it). One test per variant and
//! part: the schedules, the backpressure case, the killed child.

use crate::support::brokers::Brokers;
use crate::support::nemesis::ScheduleSetup as Setup;
use kafka_client::{Cluster, ClusterConfig};
use kafka_consumer::{ConsumerRecord, IsolationLevel, Reader, ReaderConfig};
use kafka_producer::txn::GroupMetadata;
use kafka_producer::txn::TransactionError;
use kafka_producer::{
    ProduceError, ProducerConfig, ProducerRecord, RecordMetadata, TopicPartition,
    TransactionalProducer,
};
use kafka_testcontainers::KafkaCluster;
use kafka_testcontainers::{SeededRng as Rng, schedule_seeds};
use kafka_testcontainers::{SharedKafka, unique_name};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, BufReader};

/// The seeded schedules hold the six invariants above (seeds printed;
/// `EOS_SEED` replays one).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seeded_schedules_exactly_once_kafka_4_4_tv2() {
    schedules(SharedKafka::Kafka44Tv2).await;
}

/// The seeded schedules hold the six invariants (TV1 on Kafka 4.4).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seeded_schedules_exactly_once_kafka_4_4_tv1() {
    schedules(SharedKafka::Kafka44Tv1).await;
}

/// The seeded schedules hold the six invariants (Kafka 3.9).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seeded_schedules_exactly_once_kafka_3_9() {
    schedules(SharedKafka::Kafka39).await;
}

/// 4,000 records sent into a 64 KiB buffer, committed before their futures
/// are polled: the commit returns `Ok` only with all of them visible
/// read_committed, in send order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backpressure_commit_then_await_kafka_4_4_tv2() {
    backpressure(SharedKafka::Kafka44Tv2).await;
}

/// Commit under backpressure, futures awaited later (TV1 on Kafka 4.4).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backpressure_commit_then_await_kafka_4_4_tv1() {
    backpressure(SharedKafka::Kafka44Tv1).await;
}

/// Commit under backpressure, futures awaited later (Kafka 3.9).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backpressure_commit_then_await_kafka_3_9() {
    backpressure(SharedKafka::Kafka39).await;
}

/// A producing child SIGKILLed at a seeded moment (seed printed; `EOS_SEED`
/// replays it): its reported commits are visible exactly once, the
/// transaction it was committing entirely or not at all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_child_exactly_once_kafka_4_4_tv2() {
    killed(SharedKafka::Kafka44Tv2).await;
}

/// A producing child SIGKILLed at a seeded moment (TV1 on Kafka 4.4).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_child_exactly_once_kafka_4_4_tv1() {
    killed(SharedKafka::Kafka44Tv1).await;
}

/// A producing child SIGKILLed at a seeded moment (Kafka 3.9).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_child_exactly_once_kafka_3_9() {
    killed(SharedKafka::Kafka39).await;
}

/// The variant's shared cluster and a client of it.
async fn setup(variant: SharedKafka) -> (&'static KafkaCluster, Arc<Cluster>) {
    let kafka = variant.cluster().await.expect("shared cluster");
    let cluster = Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
        .await
        .unwrap();
    (kafka, cluster)
}

/// `EOS_SCHEDULES` seeded schedules (4 by default), or the one `EOS_SEED`
/// names.
async fn schedules(variant: SharedKafka) {
    let (kafka, cluster) = setup(variant).await;
    let (seeds, _) = schedule_seeds(4);
    eprintln!("{variant}: schedule seeds {seeds:?}");
    let mut totals = Totals::default();
    for seed in seeds {
        let t = Instant::now();
        eprintln!("{variant}: schedule seed={seed} starting");
        // A schedule that stops making progress is a violation too.
        let stats = tokio::time::timeout(
            Duration::from_secs(240),
            schedule(kafka, &cluster, seed, &Setup::default()),
        )
        .await
        .unwrap_or_else(|_| {
            panic!("{variant}: seed {seed} made no progress for 240 s (replay: EOS_SEED={seed})")
        });
        eprintln!(
            "{variant}: schedule seed={seed} passed in {:?}: {stats:?}",
            t.elapsed()
        );
        totals.schedules += 1;
        totals.operations += stats.operations;
        totals.records += stats.sent;
    }
    eprintln!("{variant}: totals {totals:?}, 0 violations");
}

async fn backpressure(variant: SharedKafka) {
    let (kafka, cluster) = setup(variant).await;
    let t = Instant::now();
    backpressure_commit_then_await(kafka, &cluster).await;
    eprintln!("{variant}: backpressure case passed in {:?}", t.elapsed());
}

/// The child's kill point comes from a fresh seed, or from `EOS_SEED`.
async fn killed(variant: SharedKafka) {
    let (kafka, cluster) = setup(variant).await;
    let (seeds, _) = schedule_seeds(1);
    let seed = seeds[0];
    eprintln!("{variant}: killed child seed={seed} starting (replay: EOS_SEED={seed})");
    let t = Instant::now();
    killed_child(kafka, &cluster, seed).await;
    eprintln!(
        "{variant}: killed child seed={seed} passed in {:?}",
        t.elapsed()
    );
}

#[derive(Debug, Default)]
struct Totals {
    schedules: usize,
    operations: usize,
    records: usize,
}

/// What became of a transaction, as far as the caller can know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Open,
    /// `commit_transaction` returned `Ok`.
    Committed,
    /// Aborted (`abort_transaction` returned `Ok`, or never committed and
    /// its producer replaced).
    Aborted,
    /// A commit was requested and neither `Ok` nor an abortable failure
    /// followed by a successful abort came back.
    Unknown,
}

/// A transaction of the history (`None` = records sent outside one).
type TxnIndex = Option<usize>;

#[derive(Debug)]
struct Sent {
    txn: TxnIndex,
    topic: String,
    /// What the future returned (`None`: never polled).
    result: Option<Result<RecordMetadata, ProduceError>>,
}

#[derive(Debug, Default)]
struct History {
    txns: Vec<Outcome>,
    /// When `commit_transaction` was first called for each transaction.
    commit_called: Vec<Option<Instant>>,
    sent: Vec<Sent>,
    /// Offsets committed with `send_offsets_to_transaction`, by transaction.
    offsets: Vec<(usize, i64)>,
    /// Offsets of a `send_offsets_to_transaction` whose outcome is unknown
    /// (timed out while still pending), by transaction.
    maybe_offsets: Vec<(usize, i64)>,
}

type SendFuture = Pin<Box<dyn Future<Output = Result<RecordMetadata, ProduceError>> + Send>>;

#[derive(Debug)]
#[allow(dead_code)] // printed through Debug
pub(crate) struct Stats {
    pub(crate) operations: usize,
    pub(crate) sent: usize,
    committed: usize,
    aborted: usize,
    unknown: usize,
    config: String,
}

const TOPIC_A_PARTITIONS: i32 = 3;

/// The `batch.max.size` (a kafka-eos extension) of `seed`'s schedule:
/// `batch.size` (batches never grow, as Java's), 4 × `batch.size`, 64 KiB
/// or `max.request.size`, within `batch.size ..= max.request.size`. Drawn
/// from the seed itself, not the schedule's generator, so that the seeds
/// of earlier runs replay the rest of their schedule; `EOS_BATCH_MAX_SIZE`
/// sets it for every schedule of a run.
pub(crate) fn batch_max_size(seed: u64, batch_size: u64, max_request_size: u64) -> u64 {
    let forced = std::env::var("EOS_BATCH_MAX_SIZE").ok().map(|v| {
        v.parse::<u64>()
            .expect("EOS_BATCH_MAX_SIZE: a number of bytes")
    });
    // The top two bits of another multiplicative hash of the seed.
    let drawn = match seed.wrapping_mul(0xd1b5_4a32_d192_ed03) >> 62 {
        0 => batch_size,
        1 => batch_size * 4,
        2 => 65_536,
        _ => max_request_size,
    };
    forced.unwrap_or(drawn).clamp(batch_size, max_request_size)
}

/// One seeded schedule; panics with the seed and every violation found.
pub(crate) async fn schedule(
    kafka: &dyn Brokers,
    cluster: &Arc<Cluster>,
    seed: u64,
    setup: &Setup,
) -> Stats {
    let mut rng = Rng::new(seed);
    // Unique names: a replayed seed meets the topics of its first run on a
    // cluster that outlives test processes.
    let topic_a = unique_name(&format!("eos-{seed}-a"));
    let topic_b = unique_name(&format!("eos-{seed}-b"));
    let input = unique_name(&format!("eos-{seed}-in"));
    let group = unique_name(&format!("eos-{seed}-group"));
    let rf = setup.replication.max(1);
    kafka.create_topic(&topic_a, TOPIC_A_PARTITIONS, rf).await;
    kafka.create_topic(&topic_b, 1, rf).await;
    kafka.create_topic(&input, 1, rf).await;
    let watcher = setup.watch.then(|| {
        Watcher::start(
            cluster.clone(),
            seed,
            vec![(topic_a.clone(), TOPIC_A_PARTITIONS), (topic_b.clone(), 1)],
        )
    });

    let buffer_memory = rng.pick(&[16_384u64, 32_768, 131_072, 1_048_576, 33_554_432]);
    let txn_id = unique_name(&format!("eos-{seed}"));
    if let Some(control) = &setup.targets {
        control.set_targets(crate::support::nemesis::Targets {
            topics: vec![(topic_a.clone(), TOPIC_A_PARTITIONS), (topic_b.clone(), 1)],
            transactional_id: txn_id.clone(),
            group: Some(group.clone()),
        });
    }
    let batch_size = rng.pick(&[1_024u64, 4_096, 16_384]).min(buffer_memory);
    let in_flight = 1 + rng.below(5);
    let linger = rng.pick(&[0u64, 1, 5, 20, 50]);
    let compression = rng.pick(&compressions());
    // Drawn from the seed itself, not the generator, so that the seeds of
    // earlier runs replay the schedule they ran.
    // (The top bit of a multiplicative hash: it alternates irregularly over
    // consecutive seeds.)
    let connections = 1 + (seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 63);
    let batch_max = batch_max_size(seed, batch_size, 1_048_576);
    let mut props: Vec<(String, String)> = vec![
        ("bootstrap.servers".into(), kafka.bootstrap()),
        ("transactional.id".into(), txn_id.clone()),
        ("buffer.memory".into(), buffer_memory.to_string()),
        ("batch.size".into(), batch_size.to_string()),
        (
            "max.in.flight.requests.per.connection".into(),
            in_flight.to_string(),
        ),
        ("linger.ms".into(), linger.to_string()),
        ("compression.type".into(), compression.into()),
        ("max.block.ms".into(), "15000".into()),
        ("connections.per.broker".into(), connections.to_string()),
        ("batch.max.size".into(), batch_max.to_string()),
    ];
    for (k, v) in &setup.producer_props {
        props.retain(|(key, _)| key != k);
        props.push((k.clone(), v.clone()));
    }
    let config_text = format!(
        "buffer.memory={buffer_memory} batch.size={batch_size} batch.max.size={batch_max} \
         in.flight={in_flight} linger.ms={linger} compression={compression} \
         connections.per.broker={connections}"
    );
    eprintln!("seed {seed}: {config_text}");
    let config = ProducerConfig::from_properties(props.clone()).unwrap();

    let mut h = History::default();
    let mut producer = start(&config).await;
    let mut pending: Vec<(usize, SendFuture)> = Vec::new();
    let mut never: Vec<SendFuture> = Vec::new();
    let mut current: TxnIndex = None;
    let mut next_input_offset = 0i64;
    let operations = 20 + rng.below(60) as usize;
    let mut trace = Vec::new();
    let pause = setup.pause(operations);
    for _ in 0..operations {
        if !pause.is_zero() {
            tokio::time::sleep(pause).await;
        }
        let roll = rng.below(100);
        if current.is_none() && roll < 85 {
            producer.begin_transaction().unwrap();
            h.txns.push(Outcome::Open);
            h.commit_called.push(None);
            current = Some(h.txns.len() - 1);
            trace.push("begin".to_string());
            continue;
        }
        match roll {
            0..=59 => {
                let topic = if rng.percent(70) { &topic_a } else { &topic_b };
                let size = match rng.below(100) {
                    0..=9 => 0,
                    10..=69 => rng.below(200) as usize,
                    70..=89 => 1_000,
                    90..=97 => 16_384,
                    _ => 65_536,
                };
                let index = h.sent.len();
                let mut r = ProducerRecord::new(topic.as_str())
                    .header("id", Some(format!("s{seed}:{index}")));
                if size > 0 || rng.percent(50) {
                    r = r.value(vec![b'x'; size]);
                }
                match rng.below(3) {
                    0 if topic == &topic_a => {
                        r = r.partition(rng.below(TOPIC_A_PARTITIONS as u64) as i32)
                    }
                    1 => r = r.key(format!("k{}", rng.below(7))),
                    _ => {}
                }
                let fut: SendFuture = Box::pin(producer.send(r));
                h.sent.push(Sent {
                    txn: current,
                    topic: topic.clone(),
                    result: None,
                });
                match rng.below(10) {
                    0..=1 => {
                        let res = fut.await;
                        trace.push(format!("send#{index} {size}B now: {}", brief(&res)));
                        h.sent[index].result = Some(res);
                    }
                    2..=8 => {
                        trace.push(format!("send#{index} {size}B later"));
                        pending.push((index, fut));
                    }
                    _ => {
                        trace.push(format!("send#{index} {size}B never"));
                        never.push(fut);
                    }
                }
            }
            60..=67 => {
                // Await the oldest few (or all) pending futures.
                let n = if rng.percent(30) {
                    pending.len()
                } else {
                    (1 + rng.below(8) as usize).min(pending.len())
                };
                for (index, fut) in pending.drain(..n) {
                    h.sent[index].result = Some(fut.await);
                }
                trace.push(format!("await {n}"));
            }
            68..=71 => {
                producer.flush().await;
                trace.push("flush".into());
            }
            72..=79 => {
                if let Some(t) = current.take() {
                    h.commit_called[t] = Some(Instant::now());
                    let outcome = commit(&mut producer, &config).await;
                    trace.push(format!("commit txn{t}: {outcome:?}"));
                    h.txns[t] = outcome;
                }
            }
            80..=83 => {
                if let Some(t) = current.take() {
                    let outcome = abort(&mut producer, &config).await;
                    trace.push(format!("abort txn{t}: {outcome:?}"));
                    h.txns[t] = outcome;
                }
            }
            84..=87 => {
                if let Some(t) = current {
                    next_input_offset += 1 + rng.below(10) as i64;
                    let offsets = [(
                        TopicPartition::new(input.as_str(), 0),
                        next_input_offset,
                        None,
                    )];
                    let r = producer
                        .send_offsets_to_transaction(&offsets, &GroupMetadata::new(&group))
                        .await;
                    trace.push(format!("send_offsets {next_input_offset}: {r:?}"));
                    match &r {
                        Ok(()) => h.offsets.push((t, next_input_offset)),
                        // Still pending: may be committed with the
                        // transaction.
                        Err(TransactionError::Timeout {
                            outcome_unknown: true,
                            ..
                        }) => h.maybe_offsets.push((t, next_input_offset)),
                        Err(_) => {}
                    }
                }
            }
            88..=92 => {
                // A send outside a transaction must fail.
                if current.is_none() {
                    let index = h.sent.len();
                    let r = ProducerRecord::new(topic_a.as_str())
                        .header("id", Some(format!("s{seed}:{index}")))
                        .value("outside");
                    let res = producer.send(r).await;
                    trace.push(format!("send#{index} outside: {}", brief(&res)));
                    h.sent.push(Sent {
                        txn: None,
                        topic: topic_a.clone(),
                        result: Some(res),
                    });
                }
            }
            93..=96 => {
                // Drop the producer mid-transaction; its successor fences it
                // and aborts the open transaction.
                if let Some(t) = current.take() {
                    h.txns[t] = Outcome::Aborted;
                }
                if rng.percent(50) {
                    let _ = producer.close(Duration::from_millis(rng.below(200))).await;
                    trace.push("close".into());
                } else {
                    trace.push("drop".into());
                }
                drop(producer);
                producer = start(&config).await;
            }
            _ => {
                trace.push("idle".into());
            }
        }
    }
    if let Some(t) = current.take() {
        h.txns[t] = if rng.percent(50) {
            h.commit_called[t] = Some(Instant::now());
            commit(&mut producer, &config).await
        } else {
            abort(&mut producer, &config).await
        };
        trace.push(format!("final txn{t}: {:?}", h.txns[t]));
    }
    for (index, fut) in pending.drain(..) {
        match tokio::time::timeout(Duration::from_secs(60), fut).await {
            Ok(r) => h.sent[index].result = Some(r),
            Err(_) => panic!(
                "seed {seed} ({config_text}): the future of record #{index} (txn {:?}) never resolved \
                 after its transaction finished (replay: EOS_SEED={seed})\ntrace:\n{}",
                h.sent[index].txn,
                trace.join("\n")
            ),
        }
    }
    drop(never);
    let slow = |what: &str, t: Instant| {
        if t.elapsed() > Duration::from_secs(5) {
            eprintln!("seed {seed}: {what} took {:?}", t.elapsed());
        }
    };
    if let Some(quiesce) = &setup.quiesce {
        let t = Instant::now();
        quiesce().await;
        slow("healing the faults", t);
    }
    let t = Instant::now();
    let _ = producer.close(Duration::from_secs(10)).await;
    slow("close", t);
    // A successor resolves anything still open.
    let t = Instant::now();
    let last = start(&config).await;
    let _ = last.close(Duration::from_secs(5)).await;
    slow("the successor's init_transactions", t);
    let t = Instant::now();

    let first_seen = match watcher {
        Some(w) => w.stop().await,
        None => HashMap::new(),
    };
    let violations = check(
        cluster,
        seed,
        &h,
        &[(&topic_a, TOPIC_A_PARTITIONS), (&topic_b, 1)],
        &input,
        &group,
        &first_seen,
    )
    .await;
    slow("the check", t);
    if !violations.is_empty() {
        panic!(
            "seed {seed} ({config_text}): {} violations (replay: EOS_SEED={seed} cargo test -p kafka-eos-tests --all-features --test integration producer_eos_checker::seeded_schedules):\n{}\ntrace:\n{}",
            violations.len(),
            violations.join("\n"),
            trace.join("\n")
        );
    }
    let count = |o| h.txns.iter().filter(|t| **t == o).count();
    Stats {
        operations,
        sent: h.sent.len(),
        committed: count(Outcome::Committed),
        aborted: count(Outcome::Aborted),
        unknown: count(Outcome::Unknown),
        config: config_text,
    }
}

fn compressions() -> Vec<&'static str> {
    let mut c = vec!["none", "none"];
    if cfg!(feature = "lz4") {
        c.push("lz4");
    }
    if cfg!(feature = "zstd") {
        c.push("zstd");
    }
    c
}

fn brief(r: &Result<RecordMetadata, ProduceError>) -> String {
    match r {
        Ok(m) => format!("ok {}-{}@{:?}", m.topic, m.partition, m.offset),
        Err(e) => format!("err {e}"),
    }
}

async fn start(config: &ProducerConfig) -> TransactionalProducer {
    // As an application restarts its producer: bootstrap may fail while
    // every broker is faulted.
    let mut attempts = 0;
    let p = loop {
        match TransactionalProducer::connect(config.clone()).await {
            Ok(p) => break p,
            Err(e) if attempts < 20 => {
                attempts += 1;
                eprintln!("connect failed ({e}); retrying");
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            Err(e) => panic!("connect failed 20 times: {e}"),
        }
    };
    for _ in 0..5 {
        match p.init_transactions().await {
            Ok(()) => return p,
            Err(TransactionError::Timeout { .. }) => continue,
            Err(e) => panic!("init_transactions: {e}"),
        }
    }
    panic!("init_transactions kept timing out");
}

/// Commits; on an abortable failure aborts. Replaces the producer when it
/// cannot go on.
async fn commit(producer: &mut TransactionalProducer, config: &ProducerConfig) -> Outcome {
    for _ in 0..3 {
        match producer.commit_transaction().await {
            Ok(()) => return Outcome::Committed,
            Err(TransactionError::Timeout { .. }) => continue,
            Err(e) if e.is_abortable() => {
                return match abort(producer, config).await {
                    Outcome::Aborted => Outcome::Aborted,
                    _ => Outcome::Unknown,
                };
            }
            Err(_) => break,
        }
    }
    *producer = start(config).await;
    Outcome::Unknown
}

async fn abort(producer: &mut TransactionalProducer, config: &ProducerConfig) -> Outcome {
    for _ in 0..3 {
        match producer.abort_transaction().await {
            Ok(()) => return Outcome::Aborted,
            Err(TransactionError::Timeout { .. }) => continue,
            Err(_) => break,
        }
    }
    // Never committed: the successor's init_transactions aborts it.
    *producer = start(config).await;
    Outcome::Aborted
}

/// The record's history index, from its `id` header (`s<seed>:<index>`).
fn record_index(r: &ConsumerRecord, seed: u64) -> Option<usize> {
    let h = r.headers.iter().find(|h| h.key == "id")?;
    let v = std::str::from_utf8(h.value.as_deref()?).ok()?;
    v.strip_prefix(&format!("s{seed}:"))?.parse().ok()
}

async fn read_all(
    cluster: &Arc<Cluster>,
    topics: &[(&String, i32)],
    isolation: IsolationLevel,
) -> Vec<ConsumerRecord> {
    let mut out = Vec::new();
    for (topic, n) in topics {
        let mut r = Reader::new(
            cluster.clone(),
            ReaderConfig {
                isolation,
                ..Default::default()
            },
        );
        let partitions: Vec<i32> = (0..*n).collect();
        out.extend(r.read_to_end(topic, &partitions).await.expect("read"));
    }
    out
}

async fn check(
    cluster: &Arc<Cluster>,
    seed: u64,
    h: &History,
    topics: &[(&String, i32)],
    input: &str,
    group: &str,
    first_seen: &HashMap<usize, Instant>,
) -> Vec<String> {
    let mut v = Vec::new();
    let must_see: HashSet<usize> = h
        .sent
        .iter()
        .enumerate()
        .filter(|(_, s)| s.txn.is_some_and(|t| h.txns[t] == Outcome::Committed))
        .map(|(i, _)| i)
        .collect();
    // The commit returns before the markers are written: read until every
    // committed record is visible (or 30 s passed, then report).
    let deadline = Instant::now() + Duration::from_secs(30);
    let committed = loop {
        let records = read_all(cluster, topics, IsolationLevel::ReadCommitted).await;
        let seen: HashSet<usize> = records
            .iter()
            .filter_map(|r| record_index(r, seed))
            .collect();
        if must_see.is_subset(&seen) || Instant::now() >= deadline {
            break records;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let mut seen: HashMap<usize, usize> = HashMap::new();
    let mut last_in_partition: HashMap<(Arc<str>, i32), (usize, i64)> = HashMap::new();
    for r in &committed {
        let Some(i) = record_index(r, seed) else {
            v.push(format!(
                "record without a known id at {}-{}@{}",
                r.topic, r.partition, r.offset
            ));
            continue;
        };
        *seen.entry(i).or_default() += 1;
        let Some(s) = h.sent.get(i) else {
            v.push(format!("record #{i} was never sent"));
            continue;
        };
        if s.topic != *r.topic {
            v.push(format!(
                "record #{i} sent to {} found in {}",
                s.topic, r.topic
            ));
        }
        match s.txn.map(|t| h.txns[t]) {
            None => v.push(format!(
                "record #{i}, sent outside a transaction, is visible"
            )),
            Some(Outcome::Aborted) => v.push(format!(
                "record #{i} of aborted txn{} is visible read_committed at {}-{}@{}",
                s.txn.unwrap(),
                r.topic,
                r.partition,
                r.offset
            )),
            Some(Outcome::Open) => v.push(format!("record #{i} of an open transaction is visible")),
            Some(Outcome::Committed | Outcome::Unknown) => {}
        }
        let key = (r.topic.clone(), r.partition);
        if let Some((prev, prev_offset)) = last_in_partition.get(&key)
            && *prev > i
        {
            v.push(format!(
                "order: record #{i} at {}-{}@{} after record #{prev} at offset {prev_offset}",
                r.topic, r.partition, r.offset
            ));
        }
        last_in_partition.insert(key, (i, r.offset));
    }
    for (i, n) in &seen {
        if *n > 1 {
            v.push(format!("record #{i} visible {n} times"));
        }
    }
    for (i, s) in h.sent.iter().enumerate() {
        let Some(t) = s.txn else { continue };
        if h.txns[t] == Outcome::Committed {
            if !seen.contains_key(&i) {
                v.push(format!("record #{i} of committed txn{t} is missing"));
            }
            if let Some(Err(e)) = &s.result {
                v.push(format!(
                    "record #{i} of committed txn{t} reported failure: {e}"
                ));
            }
        }
    }
    for (t, o) in h.txns.iter().enumerate() {
        if *o != Outcome::Unknown {
            continue;
        }
        let members: Vec<usize> = (0..h.sent.len())
            .filter(|i| h.sent[*i].txn == Some(t))
            .collect();
        let visible = members.iter().filter(|i| seen.contains_key(i)).count();
        if visible != 0 && visible != members.len() {
            v.push(format!(
                "txn{t} (outcome unknown) is partly visible: {visible} of {}",
                members.len()
            ));
        }
    }
    for (i, s) in h.sent.iter().enumerate() {
        if s.txn.is_none() && matches!(s.result, Some(Ok(_))) {
            v.push(format!(
                "record #{i} sent outside a transaction reported Ok"
            ));
        }
    }
    // 5. Every Ok names the offset that holds that record.
    let uncommitted = read_all(cluster, topics, IsolationLevel::ReadUncommitted).await;
    let at: HashMap<(Arc<str>, i32, i64), Option<usize>> = uncommitted
        .iter()
        .map(|r| {
            (
                (r.topic.clone(), r.partition, r.offset),
                record_index(r, seed),
            )
        })
        .collect();
    // Inconsistent offsets: a read_committed record and the
    // read_uncommitted one at its offset are the same record.
    for r in &committed {
        let key = (r.topic.clone(), r.partition, r.offset);
        if let Some(other) = at.get(&key)
            && *other != record_index(r, seed)
        {
            v.push(format!(
                "two values at {}-{}@{}: {:?} read_committed, {other:?} read_uncommitted",
                r.topic,
                r.partition,
                r.offset,
                record_index(r, seed)
            ));
        }
    }
    // Precommitted read: visible before its commit was called.
    for (i, seen_at) in first_seen {
        let Some(t) = h.sent.get(*i).and_then(|s| s.txn) else {
            continue; // reported above (outside a transaction / unknown id)
        };
        if h.txns[t] == Outcome::Aborted {
            v.push(format!(
                "record #{i} of aborted txn{t} was visible read_committed during the schedule"
            ));
            continue;
        }
        match h.commit_called.get(t).copied().flatten() {
            Some(called) if *seen_at >= called => {}
            Some(called) => v.push(format!(
                "record #{i} of txn{t} was visible read_committed {:?} before its commit was called",
                called - *seen_at
            )),
            None => v.push(format!(
                "record #{i} of txn{t}, never committed, was visible read_committed during the schedule"
            )),
        }
    }
    for (i, s) in h.sent.iter().enumerate() {
        if let Some(Ok(m)) = &s.result
            && let Some(offset) = m.offset
        {
            match at.get(&(m.topic.clone(), m.partition, offset)) {
                Some(Some(j)) if *j == i => {}
                other => v.push(format!(
                    "record #{i} reported Ok at {}-{}@{offset}, which holds {other:?}",
                    m.topic, m.partition
                )),
            }
        }
    }
    // 6. Group offsets: those of the last committed send_offsets.
    let last_committed = h
        .offsets
        .iter()
        .rev()
        .find(|(t, _)| h.txns[*t] == Outcome::Committed)
        .map(|(_, o)| *o);
    let after_unknown: Vec<i64> = h
        .offsets
        .iter()
        .filter(|(t, o)| h.txns[*t] == Outcome::Unknown && last_committed.is_none_or(|l| *o > l))
        .chain(h.maybe_offsets.iter().filter(|(t, o)| {
            matches!(h.txns[*t], Outcome::Committed | Outcome::Unknown)
                && last_committed.is_none_or(|l| *o > l)
        }))
        .map(|(_, o)| *o)
        .collect();
    let reader = Reader::new(
        cluster.clone(),
        ReaderConfig {
            isolation: IsolationLevel::ReadCommitted,
            ..Default::default()
        },
    );
    let t = Instant::now();
    let fetched = reader.committed_offsets(group, input, &[0]).await;
    if t.elapsed() > Duration::from_secs(5) {
        eprintln!(
            "seed {seed}: OffsetFetch took {:?}: {fetched:?}",
            t.elapsed()
        );
    }
    let got = fetched.expect("OffsetFetch").get(&0).copied().flatten();
    if got != last_committed && !got.is_some_and(|g| after_unknown.contains(&g)) {
        v.push(format!(
            "group offset is {got:?}, expected {last_committed:?} (or one of {after_unknown:?})"
        ));
    }
    v
}

/// A read_committed reader that polls the schedule's topics while it runs
/// and notes when each record was first visible (errors while brokers are
/// faulted are skipped: it reads again).
struct Watcher {
    stop: Arc<std::sync::atomic::AtomicBool>,
    task: tokio::task::JoinHandle<HashMap<usize, Instant>>,
}

impl Watcher {
    fn start(cluster: Arc<Cluster>, seed: u64, topics: Vec<(String, i32)>) -> Watcher {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let task = tokio::spawn(async move {
            let mut first: HashMap<usize, Instant> = HashMap::new();
            while !flag.load(std::sync::atomic::Ordering::SeqCst) {
                for (topic, n) in &topics {
                    let mut r = Reader::new(
                        cluster.clone(),
                        ReaderConfig {
                            isolation: IsolationLevel::ReadCommitted,
                            ..Default::default()
                        },
                    );
                    let partitions: Vec<i32> = (0..*n).collect();
                    let read = tokio::time::timeout(
                        Duration::from_secs(5),
                        r.read_to_end(topic, &partitions),
                    )
                    .await;
                    let now = Instant::now();
                    if let Ok(Ok(records)) = read {
                        for rec in &records {
                            if let Some(i) = record_index(rec, seed) {
                                first.entry(i).or_insert(now);
                            }
                        }
                    }
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            first
        });
        Watcher { stop, task }
    }

    /// First-seen times, by record index.
    async fn stop(self) -> HashMap<usize, Instant> {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        self.task.await.unwrap_or_default()
    }
}

/// The case that once lost 3,936 of 4,000 records: a 64 KiB buffer, the
/// futures of transaction 1 collected but not polled, `commit_transaction`,
/// `begin_transaction`, then every future awaited, then transaction 2
/// aborted. Invariant: the commit returned `Ok` only if all 4,000 records
/// are visible read_committed, in send order; none is carried into
/// transaction 2.
async fn backpressure_commit_then_await(kafka: &KafkaCluster, cluster: &Arc<Cluster>) {
    let topic = unique_name("eos-backpressure");
    kafka.create_topic(&topic, 1, 1).await.unwrap();
    let txn_id = unique_name("eos-backpressure");
    // `batch.size` 16 KiB; batches grow only when EOS_BATCH_MAX_SIZE says
    // so (seed 0 draws no growth).
    let batch_max = batch_max_size(0, 16_384, 1_048_576).to_string();
    let config = ProducerConfig::from_properties([
        ("bootstrap.servers", kafka.bootstrap().as_str()),
        ("transactional.id", txn_id.as_str()),
        ("buffer.memory", "65536"),
        ("max.block.ms", "60000"),
        ("batch.max.size", batch_max.as_str()),
    ])
    .unwrap();
    let p = start(&config).await;
    p.begin_transaction().unwrap();
    let sends: Vec<_> = (0..4_000)
        .map(|i| {
            p.send(
                ProducerRecord::new(topic.as_str())
                    .header("id", Some(format!("s0:{i}")))
                    .value(vec![b'v'; 1_000]),
            )
        })
        .collect();
    p.commit_transaction()
        .await
        .expect("commit of transaction 1");
    p.begin_transaction().unwrap();
    for s in sends {
        s.await.expect("every record of the committed transaction");
    }
    p.send(ProducerRecord::new(topic.as_str()).value("txn 2"))
        .await
        .unwrap();
    p.abort_transaction().await.unwrap();
    p.close(Duration::from_secs(10)).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let ids: Vec<usize> = loop {
        let records = read_all(cluster, &[(&topic, 1)], IsolationLevel::ReadCommitted).await;
        let ids: Vec<usize> = records.iter().filter_map(|r| record_index(r, 0)).collect();
        if ids.len() >= 4_000 || Instant::now() >= deadline {
            break ids;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(
        ids,
        (0..4_000).collect::<Vec<_>>(),
        "all 4,000, in send order"
    );
}

/// A child producing transactions is SIGKILLed at a seeded moment; its
/// successor fences it. Reported commits are visible exactly once; the
/// transaction in progress is visible entirely or not at all; one whose
/// commit was never started is not visible.
async fn killed_child(kafka: &KafkaCluster, cluster: &Arc<Cluster>, seed: u64) {
    let mut rng = Rng::new(seed);
    let topic = unique_name(&format!("eos-child-{seed}"));
    kafka.create_topic(&topic, 2, 1).await.unwrap();
    let txn_id = unique_name(&format!("eos-child-{seed}"));
    let mut child = tokio::process::Command::new(child_binary())
        .args([
            kafka.bootstrap(),
            topic.clone(),
            "2".into(),
            txn_id.clone(),
            seed.to_string(),
        ])
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn eos_checker_child");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let kill_after = 1 + rng.below(6);
    let mut sent: BTreeMap<u64, u64> = BTreeMap::new();
    let mut committed: HashSet<u64> = HashSet::new();
    let reached = tokio::time::timeout(Duration::from_secs(120), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            let parts: Vec<&str> = line.split_whitespace().collect();
            match parts.as_slice() {
                ["T", t, n] => {
                    sent.insert(t.parse().unwrap(), n.parse().unwrap());
                    if sent.len() as u64 >= kill_after {
                        return true;
                    }
                }
                ["C", t] => {
                    committed.insert(t.parse().unwrap());
                }
                _ => {}
            }
        }
        false
    })
    .await;
    assert_eq!(
        reached,
        Ok(true),
        "the child never reached transaction {kill_after}"
    );
    // Kill during the commit of the last transaction, a little later or at once.
    let delay = rng.below(30);
    if delay > 0 {
        tokio::time::sleep(Duration::from_millis(delay)).await;
    }
    child.start_kill().expect("SIGKILL");
    child.wait().await.expect("reap");
    // Lines the child wrote before it died.
    while let Ok(Some(line)) = lines.next_line().await {
        match line.split_whitespace().collect::<Vec<_>>().as_slice() {
            ["T", t, n] => {
                sent.insert(t.parse().unwrap(), n.parse().unwrap());
            }
            ["C", t] => {
                committed.insert(t.parse().unwrap());
            }
            _ => {}
        }
    }
    let config = ProducerConfig::from_properties([
        ("bootstrap.servers", kafka.bootstrap().as_str()),
        ("transactional.id", txn_id.as_str()),
    ])
    .unwrap();
    let successor = start(&config).await;
    successor.close(Duration::from_secs(5)).await.unwrap();

    let deadline = Instant::now() + Duration::from_secs(30);
    let must: u64 = committed.iter().map(|t| sent[t]).sum();
    let records = loop {
        let records = read_all(cluster, &[(&topic, 2)], IsolationLevel::ReadCommitted).await;
        if records.len() as u64 >= must || Instant::now() >= deadline {
            break records;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let mut per_txn: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for r in &records {
        let id = r
            .headers
            .iter()
            .find(|h| h.key == "id")
            .and_then(|h| h.value.as_deref())
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .unwrap_or_default();
        let parts: Vec<&str> = id.split(':').collect();
        let [_, t, i] = parts.as_slice() else {
            panic!("seed {seed}: unexpected record id {id:?}");
        };
        per_txn
            .entry(t.parse().unwrap())
            .or_default()
            .push(i.parse().unwrap());
    }
    let last = *sent.keys().last().unwrap();
    for (t, n) in &sent {
        let mut got = per_txn.remove(t).unwrap_or_default();
        got.sort_unstable();
        let all: Vec<u64> = (0..*n).collect();
        if committed.contains(t) {
            assert_eq!(
                got, all,
                "seed {seed}: committed txn {t} must be visible exactly once"
            );
        } else {
            assert_eq!(
                *t, last,
                "seed {seed}: only the last transaction can be unreported"
            );
            assert!(
                got.is_empty() || got == all,
                "seed {seed}: txn {t} (killed in commit) partly visible: {} of {n}",
                got.len()
            );
        }
    }
    assert!(
        per_txn.is_empty(),
        "seed {seed}: records of transactions whose commit never started are visible: {:?}",
        per_txn.keys().collect::<Vec<_>>()
    );
}

/// The `eos_checker_child` program of this package (cargo builds a
/// package's binaries before its integration tests).
fn child_binary() -> &'static str {
    env!("CARGO_BIN_EXE_eos_checker_child")
}
