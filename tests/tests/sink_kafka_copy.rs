//! Exactly-once Kafka → Kafka (`kafka_sink::pipeline::ConsumeTransformProduce`)
//! against a real Kafka 4.4 broker (the harness's shared cluster; the
//! topics, the group and the transactional ids are this test's own).
//!
//! The pipelines join a KIP-848 group; the shared cluster's 10 s group
//! session moves the crashed member's partitions within seconds (the
//! default is 45 s).
//!
//! Invariant: after two pipelines in one group copied an input topic — one
//! of them aborting about a third of its transactions at random, one
//! crashed (dropped mid-step, its transaction left open) and replaced by a
//! new process, partitions moving between members meanwhile — a
//! read_committed reader of the output sees every input record exactly
//! once. The seed is printed; `EOS_SEED=<seed>` replays its abort pattern.

use kafka_client::{Cluster, ClusterConfig};
use kafka_consumer::GroupConsumerConfig;
use kafka_consumer::{IsolationLevel, Reader, ReaderConfig};
use kafka_producer::{Producer, ProducerConfig, ProducerRecord};
use kafka_sink::pipeline::{ConsumeTransformProduce, PipelineConfig};
use kafka_testcontainers::KafkaCluster;
use kafka_testcontainers::schedule_seeds;
use kafka_testcontainers::{SharedKafka, unique_name};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

const RECORDS: u32 = 4_000;

type Transform = Box<dyn FnMut(&kafka_consumer::ConsumerRecord) -> Vec<ProducerRecord> + Send>;

/// The topics and the group of this test (names of its own: the cluster is
/// shared).
struct Names {
    input: String,
    output: String,
    group: String,
}

/// Copies a record's value to the output topic, as key and value.
fn copy(output: String) -> Transform {
    Box::new(move |r| {
        let v = r.value.clone().unwrap_or_default();
        vec![ProducerRecord::new(output.as_str()).key(v.clone()).value(v)]
    })
}

async fn start(
    kafka: &KafkaCluster,
    names: &Names,
    txn_id: &str,
    seed: Option<u64>,
) -> ConsumeTransformProduce<Transform> {
    let bootstrap = kafka.bootstrap();
    let consumer = GroupConsumerConfig::from_properties([
        ("bootstrap.servers", bootstrap.as_str()),
        ("group.id", names.group.as_str()),
        ("isolation.level", "read_committed"),
        ("auto.offset.reset", "earliest"),
    ])
    .unwrap();
    let producer = ProducerConfig::from_properties([
        ("bootstrap.servers", bootstrap.as_str()),
        ("transactional.id", txn_id),
        ("transaction.timeout.ms", "5000"),
    ])
    .unwrap();
    let config = PipelineConfig {
        commit_interval: Duration::from_millis(100),
        random_aborts: seed,
    };
    ConsumeTransformProduce::connect(
        consumer,
        &[names.input.as_str()],
        producer,
        copy(names.output.clone()),
        config,
    )
    .await
    .expect("pipeline")
}

/// Input records consumed and committed by one pipeline instance, its
/// aborted transactions and producer restarts, and the steps it finished
/// (a failing run tells a stalled instance from one that skipped input).
#[derive(Default)]
struct Counters {
    consumed: AtomicU64,
    committed: AtomicU64,
    aborted: AtomicU64,
    restarts: AtomicU64,
    steps: AtomicU64,
}

impl std::fmt::Display for Counters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} consumed, {} committed, {} aborted transactions, {} producer restarts, {} steps",
            self.consumed.load(Ordering::SeqCst),
            self.committed.load(Ordering::SeqCst),
            self.aborted.load(Ordering::SeqCst),
            self.restarts.load(Ordering::SeqCst),
            self.steps.load(Ordering::SeqCst),
        )
    }
}

/// Steps a pipeline until stopped, adding its progress to its own counters
/// and to `total` (input records committed by every instance).
fn run(
    mut p: ConsumeTransformProduce<Transform>,
    mine: Arc<Counters>,
    total: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
) -> tokio::task::JoinHandle<ConsumeTransformProduce<Transform>> {
    tokio::spawn(async move {
        let mut seen = 0;
        while !stop.load(Ordering::SeqCst) {
            p.step(Duration::from_millis(100))
                .await
                .expect("pipeline step");
            let stats = p.stats();
            total.fetch_add(stats.committed_records - seen, Ordering::SeqCst);
            seen = stats.committed_records;
            mine.consumed.store(stats.consumed, Ordering::SeqCst);
            mine.committed
                .store(stats.committed_records, Ordering::SeqCst);
            mine.aborted.store(stats.aborted, Ordering::SeqCst);
            mine.restarts
                .store(stats.producer_restarts, Ordering::SeqCst);
            mine.steps.fetch_add(1, Ordering::SeqCst);
        }
        p
    })
}

async fn wait_until(what: &str, secs: u64, cond: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn committed_output(kafka: &KafkaCluster, output: &str) -> BTreeMap<u32, usize> {
    let cluster = Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
        .await
        .unwrap();
    let mut reader = Reader::new(
        cluster,
        ReaderConfig {
            isolation: IsolationLevel::ReadCommitted,
            ..Default::default()
        },
    );
    // A commit returns once the coordinator prepared it, before it wrote the
    // markers: wait until no transaction is open, or read_committed would
    // end below the last transactions (more likely on a loaded broker).
    reader
        .wait_until_stable(output, &[0, 1, 2], Duration::from_secs(60))
        .await
        .expect("no partition of the output holds an open transaction after every pipeline closed");
    let mut counts = BTreeMap::new();
    for r in reader.read_to_end(output, &[0, 1, 2]).await.unwrap() {
        let v: u32 = std::str::from_utf8(&r.value.unwrap())
            .unwrap()
            .parse()
            .unwrap();
        *counts.entry(v).or_insert(0) += 1;
    }
    counts
}

/// The invariant of the module documentation, with classic groups on
/// Kafka 4.4.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_is_exactly_once_across_aborts_rebalances_and_a_crash() {
    let (seeds, _) = schedule_seeds(1);
    let seed = seeds[0];
    println!("kafka_copy seed {seed} (replay with EOS_SEED={seed})");
    crate::support::trace_to_stderr_under_rust_log();
    let kafka = SharedKafka::Kafka44Tv2
        .cluster()
        .await
        .expect("shared Kafka 4.4");
    let names = Names {
        input: unique_name("copy-in"),
        output: unique_name("copy-out"),
        group: unique_name("copier"),
    };
    kafka.create_topic(&names.input, 4, 1).await.unwrap();
    kafka.create_topic(&names.output, 3, 1).await.unwrap();
    let total = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let produced = Arc::new(AtomicU64::new(0));
    // The input arrives while the pipelines run: a chunk whenever the
    // committed output is less than 300 records behind, so transactions are
    // open most of the time.
    let feeder = {
        let (bootstrap, total, produced) = (kafka.bootstrap(), total.clone(), produced.clone());
        let input = names.input.clone();
        tokio::spawn(async move {
            let producer = Producer::connect(
                ProducerConfig::from_properties([("bootstrap.servers", bootstrap.as_str())])
                    .unwrap(),
            )
            .await
            .unwrap();
            for chunk in 0..RECORDS / 100 {
                wait_until("the pipelines to catch up", 180, || {
                    total.load(Ordering::SeqCst) + 300 >= produced.load(Ordering::SeqCst)
                })
                .await;
                let sends: Vec<_> = (chunk * 100..(chunk + 1) * 100)
                    .map(|i| {
                        producer.send(
                            ProducerRecord::new(input.as_str())
                                .partition((i % 4) as i32)
                                .value(i.to_string()),
                        )
                    })
                    .collect();
                for s in sends {
                    s.await.unwrap();
                }
                produced.fetch_add(100, Ordering::SeqCst);
            }
            producer.close(Duration::from_secs(10)).await.unwrap();
        })
    };

    // A aborts about a third of its transactions at random.
    let a_counters = Arc::new(Counters::default());
    let a = run(
        start(kafka, &names, &unique_name("copier-a"), Some(seed)).await,
        a_counters.clone(),
        total.clone(),
        stop.clone(),
    );
    wait_until("the first 1,000 records", 120, || {
        produced.load(Ordering::SeqCst) >= 1_000
    })
    .await;
    let b_counters = Arc::new(Counters::default());
    let b = run(
        start(kafka, &names, &unique_name("copier-b"), None).await,
        b_counters.clone(),
        total.clone(),
        stop.clone(),
    );
    // Crash A mid-transaction once the partitions were split: its task dies
    // mid-step, its transaction stays open until the transaction timeout,
    // its member until the session timeout.
    wait_until(
        "A to hold uncommitted input after 2,000 records",
        120,
        || {
            produced.load(Ordering::SeqCst) >= 2_000
                && a_counters.consumed.load(Ordering::SeqCst)
                    > a_counters.committed.load(Ordering::SeqCst)
        },
    )
    .await;
    a.abort();
    let _ = a.await;
    println!(
        "crashed A with {} consumed, {} committed",
        a_counters.consumed.load(Ordering::SeqCst),
        a_counters.committed.load(Ordering::SeqCst)
    );
    let a2_counters = Arc::new(Counters::default());
    let a2 = run(
        start(kafka, &names, &unique_name("copier-a2"), Some(seed ^ 1)).await,
        a2_counters.clone(),
        total.clone(),
        stop.clone(),
    );

    feeder.await.unwrap();
    // Done when the group's committed input offsets cover the input. The
    // pipelines' counters alone can fall short for good: a commit that A
    // sent just before it was crashed completes at the coordinator, and
    // nobody counts its records (B and A2 go on after them).
    let cluster = Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
        .await
        .unwrap();
    let input_committed = || async {
        kafka_admin::committed_offsets(&cluster, &names.group)
            .await
            .map(|offsets| {
                offsets
                    .iter()
                    .filter(|(tp, _)| *tp.topic == *names.input)
                    .map(|(_, o)| *o as u64)
                    .sum::<u64>()
            })
            .unwrap_or(0)
    };
    let deadline = Instant::now() + Duration::from_secs(180);
    let mut checked = Instant::now();
    loop {
        if total.load(Ordering::SeqCst) >= RECORDS as u64 {
            break;
        }
        if checked.elapsed() >= Duration::from_secs(1) {
            checked = Instant::now();
            if input_committed().await >= RECORDS as u64 {
                println!(
                    "the group committed every input offset; the pipelines counted {} records",
                    total.load(Ordering::SeqCst)
                );
                break;
            }
        }
        if Instant::now() >= deadline {
            // Say whether input is missing from the output (lost) or only
            // not yet committed (stalled), and what each instance did.
            let counts = committed_output(kafka, &names.output).await;
            let missing: Vec<u32> = (0..RECORDS).filter(|v| !counts.contains_key(v)).collect();
            let twice = counts.values().filter(|n| **n > 1).count();
            panic!(
                "seed {seed}: timed out waiting for the output to hold every input record: \
                 {} of {RECORDS} committed by the pipelines, {} input offsets committed by \
                 the group; the committed output misses {} (e.g. {:?}) and holds {twice} \
                 twice; A: {a_counters}; B: {b_counters}; A2: {a2_counters}",
                total.load(Ordering::SeqCst),
                input_committed().await,
                missing.len(),
                &missing[..missing.len().min(10)],
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    stop.store(true, Ordering::SeqCst);
    for h in [b, a2] {
        let p = h.await.unwrap();
        p.close(Duration::from_secs(10)).await.unwrap();
    }

    let counts = committed_output(kafka, &names.output).await;
    let missing: Vec<u32> = (0..RECORDS).filter(|v| !counts.contains_key(v)).collect();
    let twice: Vec<(&u32, &usize)> = counts.iter().filter(|(_, n)| **n > 1).collect();
    assert!(
        missing.is_empty(),
        "seed {seed}: missing {} e.g. {:?}",
        missing.len(),
        &missing[..missing.len().min(10)]
    );
    assert!(
        twice.is_empty(),
        "seed {seed}: duplicated {} e.g. {:?}",
        twice.len(),
        &twice[..twice.len().min(10)]
    );
    assert_eq!(counts.len(), RECORDS as usize);
}

/// Invariant: a live pipeline whose open transaction the coordinator rolled
/// back after `transaction.timeout.ms` (what a coordinator failover longer
/// than the timeout does) replaces its fenced producer and goes on: every
/// input record — those of the rolled-back transaction included — is
/// visible exactly once to a read_committed reader of the output, and the
/// pipeline reports the producer restart.
/// Kafka 4.4, transaction version 2.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_goes_on_after_the_coordinator_rolls_its_transaction_back_tv2() {
    copy_goes_on_after_a_rollback(SharedKafka::Kafka44Tv2).await;
}

/// Kafka 4.4 formatted with transaction version 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_goes_on_after_the_coordinator_rolls_its_transaction_back_tv1() {
    copy_goes_on_after_a_rollback(SharedKafka::Kafka44Tv1).await;
}

/// Kafka 3.9.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_goes_on_after_the_coordinator_rolls_its_transaction_back_kafka39() {
    copy_goes_on_after_a_rollback(SharedKafka::Kafka39).await;
}

async fn copy_goes_on_after_a_rollback(variant: SharedKafka) {
    const HALF: u32 = 100;
    let kafka = variant.cluster().await.expect("shared Kafka");
    let names = Names {
        input: unique_name("rollback-in"),
        output: unique_name("rollback-out"),
        group: unique_name("rollback-copier"),
    };
    kafka.create_topic(&names.input, 2, 1).await.unwrap();
    kafka.create_topic(&names.output, 3, 1).await.unwrap();
    let bootstrap = kafka.bootstrap();
    let feeder = Producer::connect(
        ProducerConfig::from_properties([("bootstrap.servers", bootstrap.as_str())]).unwrap(),
    )
    .await
    .unwrap();
    let feed = |from: u32| {
        let sends: Vec<_> = (from..from + HALF)
            .map(|i| {
                feeder.send(
                    ProducerRecord::new(names.input.as_str())
                        .partition((i % 2) as i32)
                        .value(i.to_string()),
                )
            })
            .collect();
        async move {
            for s in sends {
                s.await.unwrap();
            }
        }
    };
    feed(0).await;

    let txn_id = unique_name("rollback-txn");
    // Kafka 3.9 has no KIP-848 groups for consumers by default.
    let protocol = if variant == SharedKafka::Kafka39 {
        "classic"
    } else {
        "consumer"
    };
    let consumer = GroupConsumerConfig::from_properties([
        ("bootstrap.servers", bootstrap.as_str()),
        ("group.id", names.group.as_str()),
        ("group.protocol", protocol),
        ("isolation.level", "read_committed"),
        ("auto.offset.reset", "earliest"),
    ])
    .unwrap();
    // A two-second transaction timeout: the first transaction is rolled
    // back because the pipeline is not stepped (so does not commit) until
    // the coordinator did; the next ones commit every 200 ms.
    let producer = ProducerConfig::from_properties([
        ("bootstrap.servers", bootstrap.as_str()),
        ("transactional.id", txn_id.as_str()),
        ("transaction.timeout.ms", "2000"),
    ])
    .unwrap();
    let mut p: ConsumeTransformProduce<Transform> = ConsumeTransformProduce::connect(
        consumer,
        &[names.input.as_str()],
        producer,
        copy(names.output.clone()),
        PipelineConfig {
            commit_interval: Duration::from_millis(200),
            random_aborts: None,
        },
    )
    .await
    .expect("pipeline");
    let deadline = Instant::now() + Duration::from_secs(60);
    while p.stats().consumed == 0 {
        assert!(Instant::now() < deadline, "nothing consumed");
        p.step(Duration::from_millis(100)).await.expect("step");
    }
    assert_eq!(p.stats().committed, 0, "committed before the rollback");

    // The pipeline is not stepped until the coordinator rolled back its
    // transaction: the producer's sender adds the output partitions (the
    // transaction becomes Ongoing), then the timeout ends it under a
    // bumped epoch.
    let cluster = Cluster::connect(ClusterConfig::new(&bootstrap))
        .await
        .unwrap();
    let describe = || async {
        let d = kafka_admin::describe_transactions(&cluster, &[txn_id.as_str()])
            .await
            .expect("describe");
        (d[0].snapshot.state.clone(), d[0].snapshot.producer_epoch)
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    let open_epoch = loop {
        let (state, epoch) = describe().await;
        if state == kafka_client::TransactionState::Ongoing {
            break epoch;
        }
        assert!(
            Instant::now() < deadline,
            "the transaction never opened: {state:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    loop {
        let (state, epoch) = describe().await;
        if state != kafka_client::TransactionState::Ongoing && epoch > open_epoch {
            println!("rolled back: {state:?}, epoch {open_epoch} -> {epoch}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the coordinator never rolled back"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    feed(HALF).await;
    let deadline = Instant::now() + Duration::from_secs(120);
    while p.stats().committed_records < u64::from(2 * HALF) {
        assert!(Instant::now() < deadline, "stuck at {:?}", p.stats());
        p.step(Duration::from_millis(100))
            .await
            .expect("a fenced producer is replaced, not an error");
    }
    let stats = p.close(Duration::from_secs(10)).await.expect("close");
    println!("stats {stats:?}");
    // One restart for the rolled-back transaction (a loaded machine may
    // let a later one time out too: each is another restart, never a loss).
    assert!(stats.producer_restarts >= 1, "{stats:?}");
    assert_eq!(stats.committed_records, u64::from(2 * HALF), "{stats:?}");
    // Each committed transaction's commit is timed.
    assert!(stats.committed >= 1, "{stats:?}");
    assert!(!stats.commit_time_max.is_zero(), "{stats:?}");
    assert!(
        stats.commit_time_total >= stats.commit_time_max,
        "{stats:?}"
    );

    let counts = committed_output(kafka, &names.output).await;
    let expected: BTreeMap<u32, usize> = (0..2 * HALF).map(|v| (v, 1)).collect();
    assert_eq!(counts, expected, "each input record once in the output");
}
