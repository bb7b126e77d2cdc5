//! Transactional producer throughput and commit latency: ours vs Java's
//! ProducerPerformance with `--transactional-id`/`--transaction-duration-ms`.
//!
//! ```text
//! cargo run --release -p kafka-eos-bench --bin txn_java_compare --all-features -- \
//!     [--records N] [--rounds R] [--overhead-only]
//! ```
//!
//! `--overhead-only` skips Java and alternates R pairs of (idempotent,
//! transactional with 1 s commits) runs of ours, for the overhead alone.
//!
//! Starts a one-node Kafka 4.4 harness cluster (TV2, the 4.x default) with
//! the full JIT (`fast_jvm(false)`), then per round, against the same broker
//! and each on its own 6-partition topic, N records of 100 B (default
//! 2,000,000):
//!
//! - ours, transactional, committing every 100 ms and every 1 s, time-based
//!   like ProducerPerformance: the send loop checks the clock after every
//!   send and, once the duration has elapsed since `begin_transaction`,
//!   calls `commit_transaction` (which flushes and waits for every record)
//!   **synchronously inside the loop**, then begins the next transaction.
//!   Commit latency = the duration of that call.
//! - ours, idempotent without transactions (same settings, same loop
//!   without commits): the baseline of the transactional overhead.
//! - Java `ProducerPerformance --throughput -1 --transactional-id ...
//!   --transaction-duration-ms 100|1000`, same properties.
//!
//! Common settings: acks=all, idempotence, linger.ms=5, batch.size=16384,
//! compression none, null keys (sticky partitioner), one shared value
//! `Bytes`; our sends are issued as fast as a window of unacknowledged
//! records (half of `buffer.memory`) allows. Throughput is records from the
//! first send to the last acknowledgement (ours) or the tool's summary line
//! (Java, excludes JVM start). A warm-up of 200,000 transactional records of
//! ours precedes the measurements.

use bytes::Bytes;
use kafka_producer::{
    Acks, Producer, ProducerConfig, ProducerRecord, RecordMetadata, TransactionalProducer,
};
use kafka_proto::record::Compression;
use kafka_testcontainers::{KafkaCluster, KafkaVersion, ProducerPerfArgs};
use std::collections::VecDeque;
use std::future::Future;
use std::time::{Duration, Instant};

const SIZE: usize = 100;

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "?".into())
}

/// One measurement.
#[derive(Debug, Clone, Default)]
struct Run {
    records: u64,
    secs: f64,
    /// Commit latencies (ours, transactional).
    commits: Vec<Duration>,
    /// Java's per-record latency p50/p99 (ms), for reference.
    java_latency: Option<(f64, f64)>,
}

impl Run {
    fn rate(&self) -> f64 {
        self.records as f64 / self.secs
    }

    fn commit_percentile(&self, p: f64) -> Option<Duration> {
        if self.commits.is_empty() {
            return None;
        }
        let mut c = self.commits.clone();
        c.sort();
        let i = ((c.len() as f64 * p).ceil() as usize).clamp(1, c.len()) - 1;
        Some(c[i])
    }
}

fn config(bootstrap: &str, transactional_id: Option<&str>) -> ProducerConfig {
    let mut b = ProducerConfig::builder(bootstrap)
        .acks(Acks::All)
        .enable_idempotence(true)
        .linger(Duration::from_millis(5))
        .batch_size(16384)
        .compression(Compression::None);
    if let Some(id) = transactional_id {
        b = b.transactional_id(id);
    }
    b.build().expect("config")
}

type SendFuture = std::pin::Pin<
    Box<dyn Future<Output = Result<RecordMetadata, kafka_producer::ProduceError>> + Send>,
>;

/// Ours, transactional, committing every `every`.
async fn run_ours_txn(bootstrap: &str, topic: &str, n: u64, every: Duration, id: &str) -> Run {
    let config = config(bootstrap, Some(id));
    let window = (config.buffer_memory / 2 / (SIZE + 16)).max(1);
    let p = TransactionalProducer::connect(config)
        .await
        .expect("connect");
    p.init_transactions().await.expect("init_transactions");
    // Metadata before the clock starts.
    p.begin_transaction().unwrap();
    p.send(ProducerRecord::new(topic).value(Bytes::from_static(b"w")))
        .await
        .expect("first send");
    p.commit_transaction().await.expect("commit");
    let value = Bytes::from(vec![b'x'; SIZE]);
    let mut pending: VecDeque<SendFuture> = VecDeque::with_capacity(window + 1);
    let mut commits = Vec::new();
    let t0 = Instant::now();
    p.begin_transaction().unwrap();
    let mut txn_start = Instant::now();
    for _ in 0..n {
        pending.push_back(Box::pin(
            p.send(ProducerRecord::new(topic).value(value.clone())),
        ));
        if pending.len() > window {
            let f = pending.pop_front().expect("non-empty");
            f.await.expect("send");
        }
        if txn_start.elapsed() >= every {
            let c = Instant::now();
            p.commit_transaction().await.expect("commit");
            commits.push(c.elapsed());
            for f in pending.drain(..) {
                f.await.expect("send");
            }
            p.begin_transaction().unwrap();
            txn_start = Instant::now();
        }
    }
    let c = Instant::now();
    p.commit_transaction().await.expect("commit");
    commits.push(c.elapsed());
    for f in pending {
        f.await.expect("send");
    }
    let secs = t0.elapsed().as_secs_f64();
    p.close(Duration::from_secs(10)).await.expect("close");
    Run {
        records: n,
        secs,
        commits,
        java_latency: None,
    }
}

/// Ours, idempotent, no transactions.
async fn run_ours_idempotent(bootstrap: &str, topic: &str, n: u64) -> Run {
    let config = config(bootstrap, None);
    let window = (config.buffer_memory / 2 / (SIZE + 16)).max(1);
    let p = Producer::connect(config).await.expect("connect");
    p.send(ProducerRecord::new(topic).value(Bytes::from_static(b"w")))
        .await
        .expect("first send");
    let value = Bytes::from(vec![b'x'; SIZE]);
    let mut pending = VecDeque::with_capacity(window + 1);
    let t0 = Instant::now();
    for _ in 0..n {
        pending.push_back(p.send(ProducerRecord::new(topic).value(value.clone())));
        if pending.len() > window {
            let f = pending.pop_front().expect("non-empty");
            f.await.expect("send");
        }
    }
    for f in pending {
        f.await.expect("send");
    }
    let secs = t0.elapsed().as_secs_f64();
    p.close(Duration::from_secs(10)).await.expect("close");
    Run {
        records: n,
        secs,
        ..Default::default()
    }
}

async fn run_java(kafka: &KafkaCluster, topic: &str, n: u64, every: Duration, id: &str) -> Run {
    let args = ProducerPerfArgs {
        topic: topic.into(),
        num_records: n,
        record_size: SIZE,
        throughput: -1,
        transactional_id: Some(id.into()),
        transaction_duration_ms: Some(every.as_millis() as u64),
        props: [
            ("acks", "all"),
            ("enable.idempotence", "true"),
            ("linger.ms", "5"),
            ("batch.size", "16384"),
            ("compression.type", "none"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect(),
    };
    let s = kafka
        .producer_performance(&args)
        .await
        .expect("ProducerPerformance");
    assert_eq!(s.records, n, "Java sent every record");
    Run {
        records: n,
        secs: n as f64 / s.records_per_sec,
        commits: Vec::new(),
        java_latency: Some((s.p50, s.p99)),
    }
}

/// `--overhead-only`: ours only, idempotent and transactional (1 s commits)
/// alternated `rounds` times, each pair's overhead and the median.
async fn overhead_only(kafka: &KafkaCluster, bootstrap: &str, n: u64, rounds: u64) {
    let every = Duration::from_secs(1);
    let mut overheads = Vec::new();
    println!(
        "| pair | idempotent records/s | transactional (1 s) records/s | commits | commit p50 / p99 (ms) | overhead |"
    );
    println!("|---|---|---|---|---|---|");
    for r in 0..rounds {
        let i = idempotent(kafka, bootstrap, n, 100 + r, 0).await;
        let topic = format!("ours-oh-{r}");
        kafka.create_topic(&topic, 6, 1).await.expect("topic");
        let t = run_ours_txn(bootstrap, &topic, n, every, &format!("oh-{r}")).await;
        let o = (1.0 - t.rate() / i.rate()) * 100.0;
        overheads.push(o);
        println!(
            "| {r} | {:.0} | {:.0} | {} | {} / {} | {o:+.1} % |",
            i.rate(),
            t.rate(),
            t.commits.len(),
            ms(t.commit_percentile(0.5)),
            ms(t.commit_percentile(0.99)),
        );
    }
    overheads.sort_by(|a, b| a.total_cmp(b));
    println!(
        "median overhead {:+.1} % (min {:+.1} %, max {:+.1} %); load average at end {}",
        overheads[overheads.len() / 2],
        overheads[0],
        overheads[overheads.len() - 1],
        load_average()
    );
}

async fn idempotent(kafka: &KafkaCluster, bootstrap: &str, n: u64, round: u64, k: u32) -> Run {
    let topic = format!("ours-idem-{round}-{k}");
    kafka.create_topic(&topic, 6, 1).await.expect("topic");
    let i = run_ours_idempotent(bootstrap, &topic, n).await;
    println!(
        "round {round} ours idempotent ({k}): {:.0} records/s",
        i.rate()
    );
    i
}

fn arg(args: &[String], name: &str) -> Option<u64> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| v.replace('_', "").parse().expect("a number"))
}

fn ms(d: Option<Duration>) -> String {
    d.map_or("–".into(), |d| format!("{:.1}", d.as_secs_f64() * 1000.0))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n = arg(&args, "--records").unwrap_or(2_000_000);
    let rounds = arg(&args, "--rounds").unwrap_or(1);
    println!(
        "machine: nproc {}, CPU {:?}; load average at start {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        cpu_model(),
        load_average()
    );
    let kafka = KafkaCluster::builder()
        .version(KafkaVersion::V4_4)
        .nodes(1)
        .fast_jvm(false)
        .quiet_idle(false)
        .start()
        .await
        .expect("start Kafka");
    let tv = kafka
        .finalized_feature(0, "transaction.version")
        .await
        .expect("ApiVersions")
        .unwrap_or(0);
    println!("transaction.version {tv}");
    let bootstrap = kafka.bootstrap();
    let intervals = [Duration::from_millis(100), Duration::from_secs(1)];
    kafka
        .create_topic("warmup", 6, 1)
        .await
        .expect("create topic");
    let warm = run_ours_txn(
        &bootstrap,
        "warmup",
        200_000,
        Duration::from_millis(100),
        "warm",
    )
    .await;
    println!(
        "warm-up (ours, transactional): {:.0} records/s",
        warm.rate()
    );
    let warm = run_ours_idempotent(&bootstrap, "warmup", 1_000_000).await;
    println!("warm-up (ours, idempotent): {:.0} records/s", warm.rate());

    if args.iter().any(|a| a == "--overhead-only") {
        overhead_only(&kafka, &bootstrap, n, rounds).await;
        return;
    }
    // (round, label, run)
    let mut rows: Vec<(u64, String, Run, Run)> = Vec::new();
    let mut idem: Vec<Run> = Vec::new();
    for r in 0..rounds {
        // The idempotent baseline runs before and after the transactional
        // runs of the round (the broker's speed drifts on a shared machine);
        // the overhead is against their mean.
        let mut base = vec![idempotent(&kafka, &bootstrap, n, r, 0).await];
        for &every in intervals.iter().rev() {
            let label = format!("{}ms", every.as_millis());
            let (ot, jt) = (format!("ours-{label}-{r}"), format!("java-{label}-{r}"));
            kafka.create_topic(&ot, 6, 1).await.expect("topic");
            kafka.create_topic(&jt, 6, 1).await.expect("topic");
            let ours = run_ours_txn(&bootstrap, &ot, n, every, &format!("ours-{label}-{r}")).await;
            println!(
                "round {r} ours txn {label}: {:.0} records/s, {} commits, p50 {} ms, p99 {} ms",
                ours.rate(),
                ours.commits.len(),
                ms(ours.commit_percentile(0.5)),
                ms(ours.commit_percentile(0.99)),
            );
            let java = run_java(&kafka, &jt, n, every, &format!("java-{label}-{r}")).await;
            println!("round {r} java txn {label}: {:.0} records/s", java.rate());
            rows.push((r, label, ours, java));
        }
        base.push(idempotent(&kafka, &bootstrap, n, r, 1).await);
        let secs = base.iter().map(|b| b.secs).sum::<f64>() / 2.0;
        println!(
            "round {r} ours idempotent: {:.0} / {:.0} records/s",
            base[0].rate(),
            base[1].rate()
        );
        idem.push(Run {
            records: n,
            secs,
            ..Default::default()
        });
    }
    println!("load average at end {}", load_average());
    println!();
    println!(
        "| round | commit every | N | ours records/s | Java records/s | ours/Java | ours commits | ours commit p50 / p99 (ms) | Java record latency p50 / p99 (ms) | ours idempotent records/s (mean of before/after) | overhead vs idempotent |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for (r, label, ours, java) in &rows {
        let base = &idem[*r as usize];
        let (jp50, jp99) = java.java_latency.unwrap_or_default();
        println!(
            "| {r} | {label} | {} | {:.0} | {:.0} | **{:.2}×** | {} | {} / {} | {jp50:.0} / {jp99:.0} | {:.0} | **{:+.1} %** |",
            ours.records,
            ours.rate(),
            java.rate(),
            ours.rate() / java.rate(),
            ours.commits.len(),
            ms(ours.commit_percentile(0.5)),
            ms(ours.commit_percentile(0.99)),
            base.rate(),
            (1.0 - ours.rate() / base.rate()) * 100.0,
        );
    }
}
