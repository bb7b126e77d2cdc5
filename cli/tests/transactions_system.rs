//! Kafka's transactions system test (its `transactions_test.py`), in Rust
//! against real brokers, with `kafka-eos copy` as the copier.
//!
//! A three-node cluster (replication factor 3, `min.insync.replicas` 2); an
//! input topic seeded by an idempotent producer; copier processes that abort
//! about one transaction in three at random; faults while they copy:
//!
//! - **copiers** bounced (each restarted after ≥ 20 % progress, once hard —
//!   SIGKILL — and once clean — SIGTERM — per round);
//! - **brokers** in a rolling restart (each node killed with SIGKILL —
//!   and kept dead until the copiers copied another 10 % of the input, so
//!   leaders and coordinators fail over under them — or stopped cleanly,
//!   then started again, waiting for no under-replicated partition before
//!   the next).
//!
//! Invariant: a read_committed reader running during the faults, and one
//! reading everything at the end, each see every input record exactly once
//! (no duplicate, nothing missing); with one input and one output partition
//! the output order is the input order.
//!
//! Runs on Kafka 4.4 with transaction version 2 and 1 (KIP-848 groups) and
//! on Kafka 3.9 (classic groups).
//!
//! The scenarios of one process run one at a time (the harness's
//! `slot::ClusterSlot`; CI runs each Kafka variant's scenarios as a process
//! of its own, the variants side by side). Those of one Kafka release and
//! transaction version share one cluster,
//! started by the first of them and handed on with every node running and
//! every partition in sync (a rolling restart ends so); each scenario has
//! topics, a group and transactional ids of its own.
//!
//! CI runs the reduced size (`SYSTEM_TEST_RECORDS`, default 10,000;
//! `SYSTEM_TEST_ROUNDS`, default 1). The copiers' random-abort seeds are
//! printed (`SYSTEM_TEST_SEED` replays them).

use kafka_client::{Cluster, ClusterConfig};
use kafka_consumer::{AutoOffsetReset, IsolationLevel, Reader, ReaderConfig};
use kafka_producer::{Producer, ProducerConfig, ProducerRecord};
use kafka_testcontainers::unique_name;
use kafka_testcontainers::{ClusterSlot, SlotGuard};
use kafka_testcontainers::{KafkaCluster, KafkaVersion};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The topics, the group and the transactional id prefix of one scenario
/// (its own: the cluster outlives it).
#[derive(Debug, Clone)]
struct Names {
    input: String,
    output: String,
    group: String,
    copier_prefix: String,
}

impl Names {
    fn new() -> Names {
        Names {
            input: unique_name("input-topic"),
            output: unique_name("output-topic"),
            group: unique_name("transactions-test-consumer-group"),
            copier_prefix: unique_name("copier"),
        }
    }
}

fn bin() -> String {
    std::env::var("KAFKA_EOS_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_kafka-eos").into())
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .map(|v| v.parse().unwrap_or_else(|_| panic!("{name} is a number")))
        .unwrap_or(default)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Copiers,
    Brokers,
}

#[derive(Debug, Clone)]
struct Scenario {
    version: KafkaVersion,
    transaction_version: Option<i16>,
    target: Target,
    input_partitions: i32,
    output_partitions: i32,
    /// `group.protocol` of the copiers (`consumer` is KIP-848).
    group_protocol: &'static str,
}

/// One copier process: its index, generation and log file.
struct Copier {
    child: Child,
    log: PathBuf,
}

/// A copier never outlives its test, even one that fails.
impl Drop for Copier {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn start_copier(
    bootstrap: &str,
    names: &Names,
    protocol: &str,
    index: usize,
    generation: usize,
    seed: u64,
    dir: &std::path::Path,
) -> Copier {
    let log = dir.join(format!("copier-{index}-{generation}.log"));
    let file = std::fs::File::create(&log).unwrap();
    let child = Command::new(bin())
        .args([
            "copy",
            "--bootstrap",
            bootstrap,
            "--from",
            &names.input,
            "--to",
            &names.output,
            "--group",
            &names.group,
            "--transactional-id-prefix",
            &format!("{}-{index}", names.copier_prefix),
            "--enable-random-aborts",
            "--seed",
            &(seed.wrapping_add(generation as u64 * 1000 + index as u64)).to_string(),
            "--transaction-timeout-ms",
            "10000",
            "-X",
            &format!("group.protocol={protocol}"),
            "-v",
        ])
        .stdin(Stdio::null())
        .stdout(file.try_clone().unwrap())
        .stderr(file)
        .spawn()
        .expect("start kafka-eos copy");
    Copier { child, log }
}

fn signal(child: &Child, sig: &str) {
    let status = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success(), "kill {sig} {}", child.id());
}

/// Waits until a copier logged that it runs (its signal handlers are in
/// place and it joined the group).
async fn wait_started(c: &Copier) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let log = std::fs::read_to_string(&c.log).unwrap_or_default();
        if log.contains("copy: started") {
            return;
        }
        assert!(Instant::now() < deadline, "copier never started:\n{log}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits for a copier to exit (after SIGTERM or SIGKILL).
async fn reap(mut c: Copier, limit: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(s) = c.child.try_wait().unwrap() {
            return s;
        }
        if Instant::now() >= deadline {
            let _ = c.child.kill();
            let log = std::fs::read_to_string(&c.log).unwrap_or_default();
            panic!("copier did not exit in {limit:?}; its log:\n{log}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// What the read_committed reader running during the faults saw.
#[derive(Default)]
struct Seen {
    /// value -> times seen.
    counts: BTreeMap<u64, u32>,
    /// Output partition -> values in offset order.
    order: BTreeMap<i32, Vec<u64>>,
    duplicates: u64,
}

/// Reads the output with read_committed until stopped.
fn concurrent_reader(
    bootstrap: String,
    output: String,
    partitions: i32,
    seen: Arc<Mutex<Seen>>,
    progress: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let cluster = Cluster::connect(ClusterConfig::new(&bootstrap))
            .await
            .unwrap();
        let mut reader = Reader::new(
            cluster,
            ReaderConfig {
                isolation: IsolationLevel::ReadCommitted,
                auto_offset_reset: AutoOffsetReset::Earliest,
                ..Default::default()
            },
        );
        reader.assign(&output, &(0..partitions).collect::<Vec<_>>());
        while !stop.load(Ordering::SeqCst) {
            // Brokers restart under it: errors are retried.
            let records = match reader.poll(Duration::from_millis(500)).await {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("concurrent reader: {e}");
                    continue;
                }
            };
            let mut s = seen.lock().unwrap();
            for r in records {
                let v: u64 = std::str::from_utf8(r.value.as_deref().unwrap())
                    .unwrap()
                    .parse()
                    .unwrap();
                let n = s.counts.entry(v).or_insert(0);
                *n += 1;
                if *n > 1 {
                    s.duplicates += 1;
                }
                s.order.entry(r.partition).or_default().push(v);
            }
            progress.store(s.counts.len() as u64, Ordering::SeqCst);
        }
    })
}

/// Waits for `at_least` records seen; on a timeout, panics with the tail of
/// every copier log in `dir`.
async fn wait_progress(
    what: &str,
    progress: &AtomicU64,
    at_least: u64,
    limit: Duration,
    dir: &std::path::Path,
) {
    let deadline = Instant::now() + limit;
    while progress.load(Ordering::SeqCst) < at_least {
        if Instant::now() >= deadline {
            let mut logs = String::new();
            for entry in std::fs::read_dir(dir).unwrap().flatten() {
                let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
                let tail: Vec<&str> = text.lines().rev().take(30).collect();
                logs.push_str(&format!("--- {}\n", entry.path().display()));
                for l in tail.into_iter().rev() {
                    logs.push_str(l);
                    logs.push('\n');
                }
            }
            panic!(
                "timed out waiting for {what} ({} of {at_least}); copier logs:\n{logs}",
                progress.load(Ordering::SeqCst)
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits until every partition of the cluster has all its replicas in sync.
async fn wait_no_under_replicated(bootstrap: &str) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let ok = async {
            let cluster = Cluster::connect(ClusterConfig::new(bootstrap)).await.ok()?;
            cluster.refresh_all().await.ok()?;
            let md = cluster.metadata();
            let all_in_sync = md.topics().values().all(|t| {
                t.partitions
                    .values()
                    .all(|p| p.leader.is_some() && p.isr.len() == p.replicas.len())
            });
            Some(all_in_sync && !md.topics().is_empty())
        }
        .await
        .unwrap_or(false);
        if ok {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "partitions stayed under-replicated"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn seed_input(bootstrap: &str, input: &str, n: u64, partitions: i32) {
    let producer = Producer::connect(
        ProducerConfig::from_properties([("bootstrap.servers", bootstrap), ("acks", "all")])
            .unwrap(),
    )
    .await
    .unwrap();
    let mut pending = std::collections::VecDeque::new();
    for i in 0..n {
        let r = ProducerRecord::new(input)
            .partition((i % partitions as u64) as i32)
            .key(i.to_string())
            .value(i.to_string());
        pending.push_back(producer.send(r));
        if pending.len() >= 10_000 {
            pending.pop_front().unwrap().await.expect("seeded");
        }
    }
    for s in pending {
        s.await.expect("seeded");
    }
    producer.close(Duration::from_secs(30)).await.unwrap();
}

/// The scenarios' cluster: one at a time, handed on while every node runs
/// to the next scenario of the same release and transaction version.
static SLOT: ClusterSlot = ClusterSlot::new();

/// A three-node cluster of `s`'s release and transaction version: the last
/// scenario's if it is of the same kind and every node still runs (a
/// scenario that failed mid-restart leaves one that does not), else a new
/// one. A handed-on cluster is waited for until ready with every partition
/// in sync.
async fn cluster_for(s: &Scenario) -> SlotGuard<'static> {
    let key = format!("{} tv {:?}", s.version, s.transaction_version);
    let kafka = SLOT
        .lock(&key, || {
            let builder = KafkaCluster::builder()
                .version(s.version.clone())
                .nodes(3)
                .broker_config("min.insync.replicas", "2")
                .broker_config("default.replication.factor", "3")
                .broker_config("group.consumer.min.heartbeat.interval.ms", "500")
                .broker_config("group.consumer.heartbeat.interval.ms", "500")
                .broker_config("group.consumer.min.session.timeout.ms", "6000")
                .broker_config("group.consumer.session.timeout.ms", "10000");
            match s.transaction_version {
                Some(tv) => builder.transaction_version(tv),
                None => builder,
            }
        })
        .await
        .expect("start a 3-node cluster");
    if kafka.reused() {
        kafka
            .wait_until_ready()
            .await
            .expect("the kept cluster is ready");
        wait_no_under_replicated(&kafka.bootstrap()).await;
    }
    kafka
}

async fn run(s: Scenario) {
    let records = env_u64("SYSTEM_TEST_RECORDS", 10_000);
    let rounds = env_u64("SYSTEM_TEST_ROUNDS", 1) as usize;
    let seed = env_u64("SYSTEM_TEST_SEED", kafka_testcontainers::fresh_seed());
    println!(
        "transactions system test {s:?}: {records} records, {rounds} round(s), seed {seed} (replay with SYSTEM_TEST_SEED={seed})"
    );
    let kafka = cluster_for(&s).await;
    let names = Names::new();
    let bootstrap = kafka.bootstrap();
    kafka
        .create_topic(&names.input, s.input_partitions, 3)
        .await
        .unwrap();
    kafka
        .create_topic(&names.output, s.output_partitions, 3)
        .await
        .unwrap();
    seed_input(&bootstrap, &names.input, records, s.input_partitions).await;

    let dir = tempfile::tempdir().unwrap();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let progress = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let reader = concurrent_reader(
        bootstrap.clone(),
        names.output.clone(),
        s.output_partitions,
        seen.clone(),
        progress.clone(),
        stop.clone(),
    );
    let mut copiers: Vec<Option<Copier>> = (0..2)
        .map(|i| {
            Some(start_copier(
                &bootstrap,
                &names,
                s.group_protocol,
                i,
                0,
                seed,
                dir.path(),
            ))
        })
        .collect();
    let mut generation = 1;

    let limit = Duration::from_secs(240);
    for round in 0..rounds {
        // Each round starts after another 20 % (at most 80 %) of the input.
        let at = records * (20 + (60 * round as u64) / rounds.max(1) as u64) / 100;
        wait_progress(
            "progress before a bounce",
            &progress,
            at.max(1),
            limit,
            dir.path(),
        )
        .await;
        match s.target {
            Target::Copiers => {
                for (i, slot) in copiers.iter_mut().enumerate() {
                    let c = slot.take().unwrap();
                    // Copier 0 is killed (hard bounce), copier 1 stopped
                    // (clean bounce); the other way round in odd rounds.
                    let hard = (i + round) % 2 == 0;
                    if !hard {
                        // A clean stop needs a copier that is running.
                        wait_started(&c).await;
                    }
                    signal(&c.child, if hard { "-KILL" } else { "-TERM" });
                    let status = reap(c, Duration::from_secs(60)).await;
                    if !hard {
                        assert!(status.success(), "copier {i} after SIGTERM: {status}");
                    }
                    *slot = Some(start_copier(
                        &bootstrap,
                        &names,
                        s.group_protocol,
                        i,
                        generation,
                        seed,
                        dir.path(),
                    ));
                    generation += 1;
                }
            }
            Target::Brokers => {
                for node in 0..kafka.node_count() {
                    let hard = (node + round) % 2 == 0;
                    if hard {
                        kafka.kill(node).unwrap();
                        // The copiers go on while the node is dead: its
                        // partitions' leaders and the coordinators it held
                        // move to the other two (a transaction coordinator's
                        // failover may outlast the copiers' transaction
                        // timeout: they must replace their fenced producers).
                        let now = progress.load(Ordering::SeqCst);
                        if now < records {
                            wait_progress(
                                "progress with a node killed",
                                &progress,
                                (now + records / 10).min(records),
                                limit,
                                dir.path(),
                            )
                            .await;
                        }
                    } else {
                        kafka.stop(node).await.unwrap();
                    }
                    kafka.start_node(node).unwrap();
                    kafka.wait_until_ready().await.unwrap();
                    wait_no_under_replicated(&bootstrap).await;
                }
            }
        }
    }
    wait_progress("every record copied", &progress, records, limit, dir.path()).await;
    for (i, slot) in copiers.iter_mut().enumerate() {
        let c = slot.take().unwrap();
        wait_started(&c).await;
        signal(&c.child, "-TERM");
        let log = c.log.clone();
        let status = reap(c, Duration::from_secs(60)).await;
        assert!(
            status.success(),
            "copier {i}: {status}\n{}",
            std::fs::read_to_string(log).unwrap_or_default()
        );
    }
    stop.store(true, Ordering::SeqCst);
    reader.await.unwrap();

    // The reader that ran during the faults.
    {
        let seen = seen.lock().unwrap();
        assert_eq!(
            seen.duplicates, 0,
            "seed {seed}: duplicates seen during the faults"
        );
        assert_eq!(
            seen.counts.len() as u64,
            records,
            "seed {seed}: records seen during the faults"
        );
    }
    // A reader of everything, at the end.
    let cluster = Cluster::connect(ClusterConfig::new(&bootstrap))
        .await
        .unwrap();
    let mut verifier = Reader::new(
        cluster,
        ReaderConfig {
            isolation: IsolationLevel::ReadCommitted,
            ..Default::default()
        },
    );
    let all = verifier
        .read_to_end(&names.output, &(0..s.output_partitions).collect::<Vec<_>>())
        .await
        .unwrap();
    let mut counts: BTreeMap<u64, u32> = BTreeMap::new();
    let mut order: Vec<u64> = Vec::new();
    for r in &all {
        let v: u64 = std::str::from_utf8(r.value.as_deref().unwrap())
            .unwrap()
            .parse()
            .unwrap();
        *counts.entry(v).or_insert(0) += 1;
        order.push(v);
    }
    let dups = counts.values().filter(|n| **n > 1).count();
    let missing = (0..records).filter(|v| !counts.contains_key(v)).count();
    assert_eq!(
        (dups, missing),
        (0, 0),
        "seed {seed}: duplicated and missing records"
    );
    assert_eq!(all.len() as u64, records);
    if s.input_partitions == 1 && s.output_partitions == 1 {
        assert_eq!(
            order,
            (0..records).collect::<Vec<_>>(),
            "seed {seed}: output order"
        );
    }
}

fn v44(tv: i16, target: Target) -> Scenario {
    Scenario {
        version: KafkaVersion::V4_4,
        transaction_version: Some(tv),
        target,
        input_partitions: 2,
        output_partitions: 3,
        group_protocol: "consumer",
    }
}

fn v39_classic(target: Target) -> Scenario {
    Scenario {
        version: KafkaVersion::V3_9,
        transaction_version: None,
        target,
        input_partitions: 2,
        output_partitions: 3,
        group_protocol: "classic",
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tv2_copiers_bounced_hard_and_clean() {
    run(v44(2, Target::Copiers)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tv2_brokers_rolling_restart_hard_and_clean() {
    run(v44(2, Target::Brokers)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tv1_copiers_bounced_hard_and_clean() {
    run(v44(1, Target::Copiers)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tv1_brokers_rolling_restart_hard_and_clean() {
    run(v44(1, Target::Brokers)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tv2_one_partition_keeps_the_input_order_across_copier_bounces() {
    run(Scenario {
        input_partitions: 1,
        output_partitions: 1,
        ..v44(2, Target::Copiers)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_3_9_classic_copiers_bounced_hard_and_clean() {
    run(v39_classic(Target::Copiers)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_3_9_classic_brokers_rolling_restart_hard_and_clean() {
    run(v39_classic(Target::Brokers)).await;
}
