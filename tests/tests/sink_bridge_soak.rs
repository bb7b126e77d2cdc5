//! The exactly-once RabbitMQ → Kafka bridge against a real RabbitMQ broker
//! (one per test) and a real Kafka broker (the harness's shared Kafka 4.4
//! cluster, with topics and transactional ids of each test's own; neither
//! test stops it). Needs `--features rabbitmq`.
//!
//! 1. `sigkill_soak`: the `rabbitmq_bridge` program of this package
//!    (`src/bin/rabbitmq_bridge.rs`) runs as a child process and is
//!    SIGKILLed at random points (seeded; `BRIDGE_SOAK_SEED` replays a
//!    run) at least [`KILLS`] times, some of them right after a checkpoint
//!    became durable (before its Kafka commit and RabbitMQ acknowledgement),
//!    then runs until idle. The topic read with read_committed (the Java
//!    console consumer and our `Reader`) holds every message exactly once,
//!    messages published twice once, and the queue is empty. Redelivered
//!    copies of checkpointed messages were seen and rejected.
//! 2. `broker_restart`: a RabbitMQ restart under a running (in-process)
//!    bridge loses nothing and duplicates nothing.
#![cfg(feature = "rabbitmq")]

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use kafka_client::{Cluster, ClusterConfig};
use kafka_consumer::{IsolationLevel as ReaderIsolation, Reader, ReaderConfig};
use kafka_sink::kafka::KafkaSinkRecord;
use kafka_sink::pipeline::StopReason;
use kafka_sink::pipeline::{Bridge, BridgeConfig, BridgeEvent};
use kafka_testcontainers::{IsolationLevel, KafkaCluster, RabbitMq};
use kafka_testcontainers::{SharedKafka, unique_name};
use lapin::options::BasicGetOptions;
use lapin::options::QueueDeclareOptions;
use lapin::types::FieldTable;
use lapin::{Connection, ConnectionProperties};

/// SIGKILLs of the soak (at least).
const KILLS: usize = 20;
/// Messages of the soak.
const N: usize = 2000;
/// Ids published a second time, after all the others.
const REPUBLISHED: usize = 10;

/// Each test starts a RabbitMQ broker of its own; on two cores one at a
/// time.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn id(i: usize) -> String {
    format!("msg-{i:05}")
}

fn body(id: &str) -> String {
    format!("payload of {id}")
}

/// Publishes `body(id)` for each correlation id, confirmed by RabbitMQ.
async fn publish(mq: &RabbitMq, queue: &str, ids: &[String]) {
    let messages = ids.iter().map(|id| (id.clone(), body(id).into_bytes()));
    mq.publish_persistent(queue, messages)
        .await
        .expect("publish to RabbitMQ");
}

/// Waits until the queue has no consumer (so nothing is unacknowledged:
/// a closing consumer's messages are requeued before it disappears), then
/// checks that it holds no message, also with a `basic.get`.
async fn assert_queue_empty(url: &str, queue: &str) {
    let conn = Connection::connect(url, ConnectionProperties::default())
        .await
        .unwrap();
    let ch = conn.create_channel().await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let (messages, consumers) = loop {
        let q = ch
            .queue_declare(
                queue,
                QueueDeclareOptions {
                    passive: true,
                    ..QueueDeclareOptions::default()
                },
                FieldTable::default(),
            )
            .await
            .unwrap();
        if q.consumer_count() == 0 || Instant::now() >= deadline {
            break (q.message_count(), q.consumer_count());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(consumers, 0, "queue {queue} still has consumers");
    assert_eq!(messages, 0, "queue {queue} holds {messages} messages");
    let got = ch
        .basic_get(queue, BasicGetOptions { no_ack: false })
        .await
        .unwrap();
    assert!(got.is_none(), "queue {queue} handed out a message: {got:?}");
    let _ = conn.close(200, "checked").await;
}

/// Reads the topic with read_committed twice (Java console consumer, our
/// reader) and checks every id exactly once with its body.
async fn assert_topic_exactly_once(kafka: &KafkaCluster, topic: &str, expected: &BTreeSet<String>) {
    let java = kafka
        .console_consume(
            topic,
            IsolationLevel::ReadCommitted,
            expected.len() + 100,
            Duration::from_secs(8),
        )
        .await
        .expect("console consumer");
    let java: Vec<(String, String)> = java
        .iter()
        .map(|r| {
            (
                String::from_utf8(r.key.clone().expect("key")).unwrap(),
                String::from_utf8(r.value.clone().expect("value")).unwrap(),
            )
        })
        .collect();

    let cluster = Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
        .await
        .unwrap();
    let mut reader = Reader::new(
        cluster,
        ReaderConfig {
            isolation: ReaderIsolation::ReadCommitted,
            ..Default::default()
        },
    );
    let ours: Vec<(String, String)> = reader
        .read_to_end(topic, &[0])
        .await
        .expect("read_to_end")
        .iter()
        .map(|r| {
            (
                String::from_utf8(r.key.as_deref().expect("key").to_vec()).unwrap(),
                String::from_utf8(r.value.as_deref().expect("value").to_vec()).unwrap(),
            )
        })
        .collect();

    for (who, records) in [("console consumer", &java), ("Reader", &ours)] {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for (k, v) in records.iter() {
            assert_eq!(v, &body(k), "{who}: wrong value for {k}");
            *counts.entry(k.as_str()).or_default() += 1;
        }
        let twice: Vec<_> = counts.iter().filter(|(_, n)| **n > 1).collect();
        assert!(twice.is_empty(), "{who}: duplicates {twice:?}");
        let got: BTreeSet<String> = counts.keys().map(|k| k.to_string()).collect();
        let missing: Vec<_> = expected.difference(&got).take(10).collect();
        let extra: Vec<_> = got.difference(expected).take(10).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{who}: missing {missing:?}, unexpected {extra:?}"
        );
        assert_eq!(records.len(), expected.len(), "{who}: record count");
        eprintln!(
            "{who}: {} records, {} distinct ids, read_committed",
            records.len(),
            got.len()
        );
    }
}

/// splitmix64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
}

/// The `rabbitmq_bridge` program of this package (cargo builds a package's
/// binaries before its integration tests).
fn bridge_binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_rabbitmq_bridge"))
}

/// A child killed (SIGKILL) and reaped on drop.
struct ChildGuard(Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Counters parsed from a run's progress lines (the highest seen: they are
/// cumulative per process).
#[derive(Debug, Default, Clone)]
struct RunCounters(BTreeMap<String, u64>);

impl RunCounters {
    fn absorb(&mut self, line: &str) {
        if !(line.starts_with("checkpoint=") || line.starts_with("done ")) {
            return;
        }
        for kv in line.split_whitespace() {
            if let Some((k, v)) = kv.split_once('=')
                && let Ok(v) = v.parse::<u64>()
            {
                let e = self.0.entry(k.to_string()).or_default();
                *e = (*e).max(v);
            }
        }
    }

    fn get(&self, k: &str) -> u64 {
        self.0.get(k).copied().unwrap_or(0)
    }
}

/// How a run of the child ended.
#[derive(Debug)]
enum RunEnd {
    Killed,
    Exited(std::process::ExitStatus),
}

struct Soak {
    bin: PathBuf,
    args: Vec<String>,
    stderr_dir: PathBuf,
}

impl Soak {
    /// Starts the child; its stdout lines arrive on the receiver.
    fn spawn(&self, run: usize) -> (ChildGuard, mpsc::Receiver<String>) {
        let stderr = std::fs::File::create(self.stderr_dir.join(format!("run-{run}.stderr")))
            .expect("stderr file");
        let mut child = Command::new(&self.bin)
            .args(&self.args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("spawn rabbitmq_bridge");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        (ChildGuard(child), rx)
    }

    fn stderr_tail(&self, run: usize) -> String {
        let text = std::fs::read_to_string(self.stderr_dir.join(format!("run-{run}.stderr")))
            .unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }
}

/// Receives lines until `stop` says so (returns true), the child's stdout
/// closes (false) or `deadline` passes (panics).
fn read_until(
    rx: &mpsc::Receiver<String>,
    counters: &mut RunCounters,
    deadline: Instant,
    what: &str,
    mut stop: impl FnMut(&str) -> bool,
) -> bool {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => {
                counters.absorb(&line);
                if stop(&line) {
                    return true;
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => return false,
            Err(mpsc::RecvTimeoutError::Timeout) => panic!("timed out waiting for {what}"),
        }
    }
}

/// Receives lines for `delay` (or until the child's stdout closes).
fn read_for(rx: &mpsc::Receiver<String>, counters: &mut RunCounters, delay: Duration) -> bool {
    let until = Instant::now() + delay;
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return true;
        }
        match rx.recv_timeout(left) {
            Ok(line) => counters.absorb(&line),
            Err(mpsc::RecvTimeoutError::Timeout) => return true,
            Err(mpsc::RecvTimeoutError::Disconnected) => return false,
        }
    }
}

/// Kills or lets finish one run of the child.
fn one_run(
    soak: &Soak,
    run: usize,
    rng: &mut Rng,
    kill: Option<bool>,
    counters: &mut RunCounters,
) -> RunEnd {
    let (mut child, rx) = soak.spawn(run);
    let started_by = Instant::now() + Duration::from_secs(90);
    let alive = read_until(&rx, counters, started_by, "the bridge to start", |l| {
        l.starts_with("started ")
    });
    let alive = alive
        && match kill {
            // Right after a checkpoint became durable, before the Kafka
            // commit and the RabbitMQ acknowledgements: its messages come
            // back and must be rejected as duplicates.
            Some(true) => {
                let mut durable = 0;
                read_until(
                    &rx,
                    counters,
                    Instant::now() + Duration::from_secs(60),
                    "a durable checkpoint",
                    |l| {
                        if l.starts_with("durable ") {
                            durable += 1;
                        }
                        durable == 2
                    },
                )
            }
            Some(false) => read_for(&rx, counters, Duration::from_millis(rng.range(300, 1500))),
            None => false,
        };
    if kill.is_some() && alive && child.0.try_wait().unwrap().is_none() {
        child.0.kill().unwrap();
        child.0.wait().unwrap();
        // Drain what it printed before dying.
        while let Ok(line) = rx.recv_timeout(Duration::from_secs(5)) {
            counters.absorb(&line);
        }
        return RunEnd::Killed;
    }
    // Let it finish (idle exit).
    let deadline = Instant::now() + Duration::from_secs(180);
    read_until(&rx, counters, deadline, "the bridge to exit", |_| false);
    loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            return RunEnd::Exited(status);
        }
        assert!(Instant::now() < deadline, "the bridge did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Invariant 1 (module documentation): after at least [`KILLS`] SIGKILLs
/// of the bridge process, every message is in the topic exactly once, the
/// queue is empty, and redelivered copies were rejected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_soak() {
    let _serial = SERIAL.lock().await;
    let started = Instant::now();
    let bin = bridge_binary();
    let (mq, kafka) = tokio::join!(RabbitMq::start(), SharedKafka::Kafka44Tv2.cluster());
    let (mq, kafka) = (
        mq.expect("start RabbitMQ"),
        kafka.expect("shared Kafka 4.4"),
    );
    // The queue lives on this test's own RabbitMQ; the topic and the
    // transactional ids on the shared Kafka.
    let (topic, queue) = (unique_name("bridge-soak-out"), "bridge-soak");
    let topic = topic.as_str();
    kafka.create_topic(topic, 1, 1).await.unwrap();
    let prefix = unique_name("soak-bridge");
    let url = mq.amqp_url();
    let ids: Vec<String> = (0..N).map(id).collect();
    // A few publisher retries: the same correlation id again, long after the
    // first copy was acknowledged.
    let republished: Vec<String> = (0..REPUBLISHED)
        .map(|i| id(i * (N / REPUBLISHED)))
        .collect();
    let mut all = ids.clone();
    all.extend(republished.iter().cloned());
    publish(&mq, queue, &all).await;
    eprintln!(
        "published {} messages ({} ids twice) in {:?}",
        all.len(),
        REPUBLISHED,
        started.elapsed()
    );

    let seed = std::env::var("BRIDGE_SOAK_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    eprintln!("BRIDGE_SOAK_SEED={seed}");

    let work = tempfile::tempdir().unwrap();
    let soak = Soak {
        bin,
        args: [
            "--amqp",
            &url,
            "--queue",
            queue,
            "--bootstrap",
            &kafka.bootstrap(),
            "--topic",
            topic,
            "--checkpoint-dir",
            &work.path().join("checkpoints").display().to_string(),
            "--interval-ms",
            "200",
            "--idle-exit-ms",
            "2500",
            "--prefetch",
            "20",
            "--transactional-id-prefix",
            &prefix,
            "--transaction-timeout-ms",
            "120000",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        stderr_dir: work.path().to_path_buf(),
    };
    let soak = Arc::new(soak);

    let kill_phase = Instant::now();
    let runner = soak.clone();
    let (kills, targeted, runs, totals) = tokio::task::spawn_blocking(move || {
        let soak = runner;
        let mut rng = Rng(seed);
        let (mut kills, mut targeted, mut failures) = (0, 0, 0);
        let mut totals: BTreeMap<String, u64> = BTreeMap::new();
        let mut run = 0;
        loop {
            let kill = (kills < KILLS).then_some(kills % 3 == 2);
            let mut counters = RunCounters::default();
            let end = one_run(&soak, run, &mut rng, kill, &mut counters);
            for (k, v) in &counters.0 {
                *totals.entry(k.clone()).or_default() += v;
            }
            eprintln!(
                "run {run}: {end:?} (kill plan {kill:?}) messages={} duplicates={} published_duplicates={} redelivered={}",
                counters.get("messages"),
                counters.get("duplicates"),
                counters.get("published_duplicates"),
                counters.get("redelivered")
            );
            match end {
                RunEnd::Killed => {
                    kills += 1;
                    if kill == Some(true) {
                        targeted += 1;
                    }
                }
                RunEnd::Exited(status) if status.success() => {
                    if kills >= KILLS {
                        break;
                    }
                }
                RunEnd::Exited(status) => {
                    failures += 1;
                    eprintln!("run {run} failed ({status}):\n{}", soak.stderr_tail(run));
                    assert!(failures <= 3, "the bridge failed {failures} times");
                }
            }
            run += 1;
        }
        (kills, targeted, run + 1, totals)
    })
    .await
    .unwrap();
    let kill_runtime = kill_phase.elapsed();
    eprintln!(
        "{kills} SIGKILLs ({targeted} right after a durable checkpoint) over {runs} runs in {kill_runtime:?}; totals {totals:?}"
    );

    assert_queue_empty(&url, queue).await;
    let expected: BTreeSet<String> = ids.iter().cloned().collect();
    assert_topic_exactly_once(kafka, topic, &expected).await;
    assert!(kills >= KILLS);
    // Redelivered copies of checkpointed messages were seen and rejected.
    assert!(
        totals.get("duplicates").copied().unwrap_or(0) > 0,
        "no redelivered duplicate was rejected: {totals:?}"
    );
    // Messages processed again after a crash (uncheckpointed) were seen.
    assert!(
        totals.get("redelivered").copied().unwrap_or(0) > 0,
        "{totals:?}"
    );
    assert!(
        totals.get("published_duplicates").copied().unwrap_or(0) >= 1,
        "{totals:?}"
    );
    eprintln!(
        "soak verified: {N} messages exactly once in {topic} (read_committed, console consumer and Reader), \
         queue empty, {kills} crashes; total {:?}",
        started.elapsed()
    );
    mq.stop().await.unwrap();
}

/// Invariant 2 (module documentation): a RabbitMQ restart under a running
/// bridge loses nothing and duplicates nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broker_restart() {
    let _serial = SERIAL.lock().await;
    let started = Instant::now();
    let (mq, kafka) = tokio::join!(RabbitMq::start(), SharedKafka::Kafka44Tv2.cluster());
    let (mq, kafka) = (
        mq.expect("start RabbitMQ"),
        kafka.expect("shared Kafka 4.4"),
    );
    let (topic, queue) = (unique_name("bridge-restart-out"), "bridge-restart");
    let topic = topic.as_str();
    kafka.create_topic(topic, 1, 1).await.unwrap();
    let url = mq.amqp_url();
    const M: usize = 600;
    let ids: Vec<String> = (0..M).map(id).collect();
    publish(&mq, queue, &ids).await;

    let dir = tempfile::tempdir().unwrap();
    let mut config = BridgeConfig::new(url.clone(), queue, &kafka.bootstrap(), topic, dir.path());
    config.checkpoint_interval = Duration::from_millis(200);
    config.idle_timeout = Some(Duration::from_secs(3));
    config.source.prefetch_count = 20;
    config.sink.transaction_timeout = Duration::from_secs(120);
    config.sink.transactional_id_prefix = Some(unique_name("rabbitmq-bridge-restart"));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let bridge = Bridge::new(config, |m| {
        let key = m.correlation_id.unwrap_or_default();
        vec![KafkaSinkRecord::keyed(key, m.body)]
    })
    .on_event(move |e| {
        if let BridgeEvent::CheckpointComplete { stats, .. } = e {
            let _ = tx.send(stats.messages);
        }
    });
    let task = tokio::spawn(bridge.run(std::future::pending()));

    // Restart the broker once a third of the messages went through.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    loop {
        let n = tokio::time::timeout_at(deadline, rx.recv())
            .await
            .expect("progress")
            .expect("bridge running");
        if n >= (M / 3) as u64 {
            break;
        }
    }
    eprintln!("restarting RabbitMQ ({:?})", started.elapsed());
    mq.restart().await.expect("restart RabbitMQ");
    let report = tokio::time::timeout(Duration::from_secs(180), task)
        .await
        .expect("bridge finished")
        .unwrap()
        .expect("bridge run");
    eprintln!("broker restart: {report:?} ({:?})", started.elapsed());
    assert_eq!(report.reason, StopReason::Idle);
    assert!(report.stats.source.reconnects >= 1, "{report:?}");
    assert_queue_empty(&url, queue).await;
    let expected: BTreeSet<String> = ids.iter().cloned().collect();
    assert_topic_exactly_once(kafka, topic, &expected).await;
    eprintln!("broker restart verified in {:?}", started.elapsed());
    mq.stop().await.unwrap();
}
