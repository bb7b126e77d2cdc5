//! Kafka sink throughput by semantic: NONE, AT_LEAST_ONCE and EXACTLY_ONCE,
//! each with checkpoints every 100 ms and every 1 s, in one run against one
//! broker, reported as ratios to NONE at the same interval.
//!
//! ```text
//! cargo run --release -p kafka-eos-bench --bin sink_bench -- \
//!     [--records 400000] [--size 100] [--rounds 2] [--bootstrap host:port]
//! ```
//!
//! Without `--bootstrap` it starts a one-node Kafka 4.4 with the test
//! harness. Each measurement writes `--records` values of `--size` bytes
//! through [`KafkaSink::invoke`] with the checkpoint driver (durable
//! checkpoint files in a temp dir) triggered from the writing loop whenever
//! the interval has passed — synchronous barriers, as in Flink — and ends
//! with a last checkpoint, so the time includes making every record durable
//! (NONE / AT_LEAST_ONCE: flushed; EXACTLY_ONCE: committed). Rounds are
//! interleaved; the table shows the median records/s per configuration and,
//! more robust on a loaded machine, the median of the per-round ratios to
//! NONE (each run against the NONE run of its own round and interval).

use std::collections::HashMap;
use std::error::Error;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use kafka_sink::RecordContext;
use kafka_sink::kafka::{KafkaSink, KafkaSinkConfig, KafkaSinkRecord, Semantic};
use kafka_sink::{CheckpointCoordinator, CheckpointStorage, OperatorInfo};
use kafka_testcontainers::{KafkaCluster, KafkaVersion};
use tokio::sync::Mutex;

type BoxError = Box<dyn Error + Send + Sync>;

fn args() -> Result<HashMap<String, String>, BoxError> {
    let mut out = HashMap::new();
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        if k == "--bench" {
            continue; // passed by `cargo bench`-style runners
        }
        let key = k
            .strip_prefix("--")
            .ok_or_else(|| format!("expected --key value, got {k:?}"))?;
        let v = it.next().ok_or_else(|| format!("--{key} needs a value"))?;
        out.insert(key.to_string(), v);
    }
    Ok(out)
}

struct Run {
    records_per_sec: f64,
    checkpoints: u64,
}

async fn measure(
    bootstrap: &str,
    semantic: Semantic,
    interval: Duration,
    records: u64,
    size: usize,
    prefix: &str,
) -> Result<Run, BoxError> {
    let mut config = KafkaSinkConfig::from_properties(
        [
            ("bootstrap.servers", bootstrap),
            ("linger.ms", "5"),
            ("batch.size", "65536"),
        ],
        "bench",
    )?;
    config.semantic = semantic;
    config.transactional_id_prefix = Some(prefix.to_string());
    config.transaction_timeout = Duration::from_secs(300);
    let value = Bytes::from(vec![b'x'; size]);
    let sink =
        KafkaSink::connect(config, move |_: &u64| KafkaSinkRecord::value(value.clone())).await?;
    let sink = Arc::new(Mutex::new(sink));
    let dir = tempfile::tempdir()?;
    let mut driver = CheckpointCoordinator::new(CheckpointStorage::open(dir.path(), 3)?);
    driver.register(OperatorInfo::new("sink", 0, 1), sink.clone())?;
    driver.restore().await?;

    let ctx = RecordContext::default();
    let started = Instant::now();
    let mut last_checkpoint = started;
    let mut checkpoints = 0;
    let mut i = 0;
    while i < records {
        {
            let mut s = sink.lock().await;
            let end = (i + 1000).min(records);
            while i < end {
                s.invoke(i, &ctx).await?;
                i += 1;
            }
        }
        if last_checkpoint.elapsed() >= interval {
            driver.trigger_checkpoint().await?;
            checkpoints += 1;
            last_checkpoint = Instant::now();
        }
    }
    driver.trigger_checkpoint().await?;
    checkpoints += 1;
    let elapsed = started.elapsed();
    sink.lock().await.close().await?;
    Ok(Run {
        records_per_sec: records as f64 / elapsed.as_secs_f64(),
        checkpoints,
    })
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" / "))
        .unwrap_or_else(|_| "unknown".into())
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), BoxError> {
    let a = args()?;
    let records: u64 = a.get("records").map_or(Ok(400_000), |v| v.parse())?;
    let size: usize = a.get("size").map_or(Ok(100), |v| v.parse())?;
    let rounds: usize = a.get("rounds").map_or(Ok(2), |v| v.parse())?;
    eprintln!("load at start: {}", load());
    let mut _cluster = None;
    let bootstrap = match a.get("bootstrap") {
        Some(b) => b.clone(),
        None => {
            let k = KafkaCluster::builder()
                .version(KafkaVersion::V4_4)
                .nodes(1)
                .start()
                .await?;
            k.create_topic("bench", 1, 1).await?;
            let b = k.bootstrap();
            _cluster = Some(k);
            b
        }
    };
    let configs = [
        (Semantic::None, Duration::from_millis(100)),
        (Semantic::AtLeastOnce, Duration::from_millis(100)),
        (Semantic::ExactlyOnce, Duration::from_millis(100)),
        (Semantic::None, Duration::from_secs(1)),
        (Semantic::AtLeastOnce, Duration::from_secs(1)),
        (Semantic::ExactlyOnce, Duration::from_secs(1)),
    ];
    // Warm-up: connections, topic metadata, JIT of the broker.
    measure(
        &bootstrap,
        Semantic::ExactlyOnce,
        Duration::from_millis(100),
        records / 4,
        size,
        "warmup",
    )
    .await?;
    let mut results: Vec<Vec<Run>> = configs.iter().map(|_| Vec::new()).collect();
    for round in 0..rounds {
        for (n, (semantic, interval)) in configs.iter().enumerate() {
            let prefix = format!("bench-{n}-{round}");
            let r = measure(&bootstrap, *semantic, *interval, records, size, &prefix).await?;
            eprintln!(
                "round {round}: {semantic:?} @ {interval:?}: {:.0} records/s, {} checkpoints",
                r.records_per_sec, r.checkpoints
            );
            results[n].push(r);
        }
    }
    // Paired ratios: each run against NONE at the same interval in the same
    // round (adjacent in time, so drift in machine load mostly cancels).
    let paired: Vec<Vec<f64>> = configs
        .iter()
        .enumerate()
        .map(|(n, _)| {
            let base = if n < 3 { 0 } else { 3 };
            (0..rounds)
                .map(|r| results[n][r].records_per_sec / results[base][r].records_per_sec)
                .collect()
        })
        .collect();
    let median = |mut v: Vec<f64>| -> f64 {
        v.sort_by(f64::total_cmp);
        v[(v.len() - 1) / 2]
    };
    println!(
        "records: {records} × {size} B per run, {rounds} rounds; load at end: {}",
        load()
    );
    println!();
    println!(
        "| semantic | checkpoint interval | records/s, median (MiB/s) | checkpoints per run | ratio to NONE, median of per-round ratios | per-round ratios |"
    );
    println!("|---|---|---|---|---|---|");
    for (n, (semantic, interval)) in configs.iter().enumerate() {
        let rps = median(results[n].iter().map(|r| r.records_per_sec).collect());
        let cps: Vec<String> = results[n]
            .iter()
            .map(|r| r.checkpoints.to_string())
            .collect();
        let ratios: Vec<String> = paired[n].iter().map(|r| format!("{r:.2}")).collect();
        println!(
            "| {} | {:?} | {:.0} ({:.1}) | {} | **{:.2}×** | {} |",
            match semantic {
                Semantic::None => "NONE",
                Semantic::AtLeastOnce => "AT_LEAST_ONCE",
                Semantic::ExactlyOnce => "EXACTLY_ONCE",
            },
            interval,
            rps,
            rps * size as f64 / (1024.0 * 1024.0),
            cps.join(", "),
            median(paired[n].clone()),
            ratios.join(", ")
        );
    }
    Ok(())
}
