//! Producer throughput and client CPU: ours vs Java's ProducerPerformance.
//!
//! ```text
//! cargo run --release -p kafka-eos-bench --bin java_compare --all-features -- \
//!     [--records N] [--records-1k M] [--rounds R]
//! ```
//!
//! Starts a one-node Kafka 4.4 harness cluster with the full JIT
//! (`fast_jvm(false)`), then for 100 B and 1 KiB values (N and M records,
//! default 1,000,000 and 200,000) runs, in this invocation and against the
//! same broker, each on its own 6-partition topic:
//!
//! - ours: acks=all, idempotent, linger.ms=5, batch.size=16384, compression
//!   none, null keys (sticky partitioner), one shared value `Bytes`; sends
//!   are issued as fast as the window of unacknowledged records allows (half
//!   of `buffer.memory`, so back-pressure rarely engages) and awaited oldest
//!   first. Throughput is records from the first send to the last
//!   acknowledgement; CPU is this process's utime+stime (`/proc/self/stat`)
//!   over the same span.
//! - Java: `ProducerPerformance --throughput -1` with the same properties
//!   (acks=all, enable.idempotence=true, linger.ms=5, batch.size=16384,
//!   compression.type=none). Throughput is the tool's own summary line
//!   (excludes JVM start); CPU is the change of this process's cutime+cstime
//!   around the child's run (a child's CPU accrues when it is waited for), so
//!   it includes JVM start-up and JIT. The start-up share is measured with a
//!   1-record run and reported separately.
//!
//! A warm-up run of ours (100,000 records) precedes the measurements so the
//! broker's JIT is warm for both clients.

use bytes::Bytes;
use kafka_producer::{Acks, Producer, ProducerConfig, ProducerRecord};
use kafka_proto::record::Compression;
use kafka_testcontainers::{KafkaCluster, KafkaVersion, ProducerPerfArgs};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// CPU seconds from `/proc/self/stat`: (self utime+stime, waited-for
/// children's cutime+cstime).
fn cpu_seconds() -> (f64, f64) {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    // Fields after the command name (which is in parentheses).
    let rest = &stat[stat.rfind(')').expect("comm") + 2..];
    let f: Vec<u64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    // rest[0] is field 3 (state): utime = field 14 → index 11.
    let tick = 100.0; // CLK_TCK on Linux
    ((f[11] + f[12]) as f64 / tick, (f[13] + f[14]) as f64 / tick)
}

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

/// One client's measurement.
#[derive(Debug, Clone, Copy)]
struct Run {
    records: u64,
    secs: f64,
    cpu: f64,
    mib_per_sec: f64,
}

impl Run {
    fn rate(&self) -> f64 {
        self.records as f64 / self.secs
    }
    fn cpu_per_million(&self) -> f64 {
        self.cpu / (self.records as f64 / 1e6)
    }
}

async fn run_ours(bootstrap: &str, topic: &str, n: u64, size: usize) -> Run {
    let config = ProducerConfig::builder(bootstrap)
        .acks(Acks::All)
        .enable_idempotence(true)
        .linger(Duration::from_millis(5))
        .batch_size(16384)
        .compression(Compression::None)
        .build()
        .expect("config");
    let window = (config.buffer_memory / 2 / (size + 16)).max(1);
    let producer = Producer::connect(config).await.expect("connect");
    // Metadata and producer id before the clock starts (Java's tool also
    // fetches metadata on its first send, inside its timing; it is a few ms).
    producer
        .send(ProducerRecord::new(topic).value(Bytes::from(vec![b'w'; size])))
        .await
        .expect("first send");
    let value = Bytes::from(vec![b'x'; size]);
    let probe = producer.send(ProducerRecord::new(topic).value(value.clone()));
    eprintln!(
        "size of a send future: {} bytes",
        std::mem::size_of_val(&probe)
    );
    probe.await.expect("send");
    let mut pending = VecDeque::with_capacity(window + 1);
    let (cpu0, _) = cpu_seconds();
    let t0 = Instant::now();
    for _ in 0..n {
        pending.push_back(producer.send(ProducerRecord::new(topic).value(value.clone())));
        if pending.len() > window {
            let f = pending.pop_front().expect("non-empty");
            f.await.expect("send");
        }
    }
    for f in pending {
        f.await.expect("send");
    }
    let secs = t0.elapsed().as_secs_f64();
    let (cpu1, _) = cpu_seconds();
    producer
        .close(Duration::from_secs(10))
        .await
        .expect("close");
    Run {
        records: n,
        secs,
        cpu: cpu1 - cpu0,
        mib_per_sec: n as f64 * size as f64 / 1048576.0 / secs,
    }
}

async fn run_java(kafka: &KafkaCluster, topic: &str, n: u64, size: usize) -> Run {
    let args = ProducerPerfArgs {
        topic: topic.into(),
        num_records: n,
        record_size: size,
        throughput: -1,
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
        ..Default::default()
    };
    let (_, c0) = cpu_seconds();
    let s = kafka
        .producer_performance(&args)
        .await
        .expect("ProducerPerformance");
    let (_, c1) = cpu_seconds();
    assert_eq!(s.records, n, "Java sent every record");
    Run {
        records: n,
        secs: n as f64 / s.records_per_sec,
        cpu: c1 - c0,
        mib_per_sec: s.mb_per_sec,
    }
}

fn arg(args: &[String], name: &str) -> Option<u64> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| v.replace('_', "").parse().expect("a number"))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n100 = arg(&args, "--records").unwrap_or(1_000_000);
    let n1k = arg(&args, "--records-1k").unwrap_or(n100 / 5);
    let rounds = arg(&args, "--rounds").unwrap_or(1);
    // Profiling aid: only our client (no Java runs, no table).
    let ours_only = args.iter().any(|a| a == "--ours-only");
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
    let mut topics = vec!["warmup".to_string()];
    for r in 0..rounds {
        for s in ["100", "1k"] {
            topics.push(format!("ours-{s}-{r}"));
            topics.push(format!("java-{s}-{r}"));
        }
    }
    for t in &topics {
        kafka.create_topic(t, 6, 1).await.expect("create topic");
    }
    let warm = run_ours(&kafka.bootstrap(), "warmup", 100_000, 100).await;
    println!(
        "warm-up (ours, 100 B): {:.0} records/s",
        warm.records as f64 / warm.secs
    );

    if ours_only {
        for (label, size, n) in [("100", 100usize, n100), ("1k", 1024, n1k)] {
            let ours = run_ours(&kafka.bootstrap(), &format!("ours-{label}-0"), n, size).await;
            println!(
                "{size} B: ours {ours:?}, {:.2} CPU s per 1M",
                ours.cpu_per_million()
            );
        }
        return;
    }
    // JVM start-up + JIT share of Java's CPU: a 1-record run.
    kafka
        .create_topic("java-startup", 6, 1)
        .await
        .expect("create topic");
    let startup = run_java(&kafka, "java-startup", 1, 100).await.cpu;
    println!("Java ProducerPerformance CPU for 1 record (JVM start-up): {startup:.2} s");
    let mut rows = Vec::new();
    for r in 0..rounds {
        for (label, size, n) in [("100", 100usize, n100), ("1k", 1024, n1k)] {
            let ours = run_ours(&kafka.bootstrap(), &format!("ours-{label}-{r}"), n, size).await;
            let java = run_java(&kafka, &format!("java-{label}-{r}"), n, size).await;
            println!("round {r} {size} B: ours {ours:?}; java {java:?}");
            rows.push((size, ours, java));
        }
    }
    println!("load average at end {}", load_average());
    println!();
    println!(
        "| record | N | ours records/s (MiB/s) | Java records/s (MiB/s) | throughput ours/Java | ours CPU s (per 1M) | Java CPU s (per 1M) | CPU ours/Java | CPU ours/Java, Java start-up excluded |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for (size, ours, java) in &rows {
        let java_steady = Run {
            cpu: (java.cpu - startup).max(0.01),
            ..*java
        };
        println!(
            "| {size} B | {} | {:.0} ({:.1}) | {:.0} ({:.1}) | **{:.2}×** | {:.2} ({:.2}) | {:.2} ({:.2}) | **{:.2}×** | {:.2}× |",
            ours.records,
            ours.rate(),
            ours.mib_per_sec,
            java.rate(),
            java.mib_per_sec,
            ours.rate() / java.rate(),
            ours.cpu,
            ours.cpu_per_million(),
            java.cpu,
            java.cpu_per_million(),
            ours.cpu_per_million() / java.cpu_per_million(),
            ours.cpu_per_million() / java_steady.cpu_per_million(),
        );
    }
}
