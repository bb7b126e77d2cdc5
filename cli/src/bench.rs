//! `bench`: producer benchmarks against one cluster in one run, printed as a
//! table: idempotent throughput, transactional throughput committing every
//! 100 ms and 1 s with commit latency p50/p99, optionally the Kafka sink by
//! semantic, and beside each (local cluster, Java available) Java's
//! `ProducerPerformance` with the same settings and the ratio ours/Java.
//!
//! Every measurement writes `--records` values of `--record-size` bytes to
//! its own topic; sends are issued as fast as a window of unacknowledged
//! records allows and awaited oldest first, and the time runs from the first
//! send to the last acknowledgement (transactional: the last commit). An
//! untimed warm-up run of ours (a quarter of `--records`, at most 100,000)
//! comes first so the broker's JIT is warm for every measurement.

use crate::common::{Globals, create_topic};
use crate::error::{CliError, CliResult, ExitCode};
use crate::output::{bar, note, status};
use bytes::Bytes;
use kafka_producer::{
    ProduceError, Producer, ProducerConfig, ProducerRecord, RecordMetadata, TransactionalProducer,
};
use kafka_sink::RecordContext;
use kafka_sink::kafka::{KafkaSink, KafkaSinkConfig, KafkaSinkRecord, Semantic};
use kafka_sink::{CheckpointCoordinator, CheckpointStorage, OperatorInfo};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The settings of both clients unless `-X` overrides them.
const DEFAULTS: [(&str, &str); 5] = [
    ("acks", "all"),
    ("enable.idempotence", "true"),
    ("linger.ms", "5"),
    ("batch.size", "16384"),
    ("compression.type", "none"),
];

/// One measurement of ours.
#[derive(Debug, Default)]
struct Run {
    records: u64,
    secs: f64,
    commits: Vec<Duration>,
}

impl Run {
    fn rate(&self) -> f64 {
        self.records as f64 / self.secs.max(1e-9)
    }

    fn commit_percentile(&self, p: f64) -> Option<Duration> {
        if self.commits.is_empty() {
            return None;
        }
        let mut c = self.commits.clone();
        c.sort_unstable();
        let i = ((c.len() as f64 * p).ceil() as usize).clamp(1, c.len()) - 1;
        Some(c[i])
    }
}

/// One table row.
#[derive(Debug)]
struct Row {
    name: String,
    ours: Run,
    java: Option<Result<f64, String>>,
}

type SendFuture = Pin<Box<dyn Future<Output = Result<RecordMetadata, ProduceError>> + Send>>;

fn config(g: &Globals, transactional_id: Option<&str>) -> CliResult<ProducerConfig> {
    let mut props: Vec<(&str, &str)> = vec![("bootstrap.servers", g.bootstrap.as_str())];
    props.extend_from_slice(&DEFAULTS);
    props.extend(g.props.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    if let Some(id) = transactional_id {
        props.push(("transactional.id", id));
    }
    crate::common::producer_config(props)
}

fn window(c: &ProducerConfig, size: usize) -> usize {
    (c.buffer_memory / 2 / (size + 16)).max(1)
}

async fn ours_idempotent(g: &Globals, topic: &str, a: &BenchArgs) -> CliResult<Run> {
    let c = config(g, None)?;
    let window = window(&c, a.record_size);
    let p = Producer::connect(c).await?;
    // Metadata and the producer id before the clock starts.
    p.send(ProducerRecord::new(topic).value(Bytes::from_static(b"w")))
        .await?;
    let value = Bytes::from(vec![b'x'; a.record_size]);
    let mut pending: VecDeque<SendFuture> = VecDeque::with_capacity(window + 1);
    let t0 = Instant::now();
    for _ in 0..a.records {
        pending.push_back(Box::pin(
            p.send(ProducerRecord::new(topic).value(value.clone())),
        ));
        if pending.len() > window {
            pending.pop_front().expect("non-empty").await?;
        }
    }
    for f in pending {
        f.await?;
    }
    let secs = t0.elapsed().as_secs_f64();
    p.close(Duration::from_secs(10)).await?;
    Ok(Run {
        records: a.records,
        secs,
        commits: Vec::new(),
    })
}

async fn ours_transactional(
    g: &Globals,
    topic: &str,
    a: &BenchArgs,
    every: Duration,
    id: &str,
) -> CliResult<Run> {
    let c = config(g, Some(id))?;
    let window = window(&c, a.record_size);
    let p = TransactionalProducer::connect(c).await?;
    p.init_transactions().await?;
    p.begin_transaction()?;
    p.send(ProducerRecord::new(topic).value(Bytes::from_static(b"w")))
        .await?;
    p.commit_transaction().await?;
    let value = Bytes::from(vec![b'x'; a.record_size]);
    let mut pending: VecDeque<SendFuture> = VecDeque::with_capacity(window + 1);
    let mut commits = Vec::new();
    let t0 = Instant::now();
    p.begin_transaction()?;
    let mut txn_start = Instant::now();
    for _ in 0..a.records {
        pending.push_back(Box::pin(
            p.send(ProducerRecord::new(topic).value(value.clone())),
        ));
        if pending.len() > window {
            pending.pop_front().expect("non-empty").await?;
        }
        if txn_start.elapsed() >= every {
            let c = Instant::now();
            p.commit_transaction().await?;
            commits.push(c.elapsed());
            for f in pending.drain(..) {
                f.await?;
            }
            p.begin_transaction()?;
            txn_start = Instant::now();
        }
    }
    let c = Instant::now();
    p.commit_transaction().await?;
    commits.push(c.elapsed());
    for f in pending {
        f.await?;
    }
    let secs = t0.elapsed().as_secs_f64();
    p.close(Duration::from_secs(10)).await?;
    Ok(Run {
        records: a.records,
        secs,
        commits,
    })
}

/// The Kafka sink under the checkpoint driver, a checkpoint every second.
async fn ours_sink(
    g: &Globals,
    topic: &str,
    a: &BenchArgs,
    semantic: Semantic,
    prefix: &str,
    dir: &std::path::Path,
) -> CliResult<Run> {
    let sink_error = |e: &dyn std::fmt::Display| CliError::failure(format!("Kafka sink: {e}"));
    let mut c = KafkaSinkConfig::new(config(g, None)?, topic);
    c.semantic = semantic;
    c.transactional_id_prefix = Some(prefix.to_string());
    c.transaction_timeout = Duration::from_secs(300);
    let value = Bytes::from(vec![b'x'; a.record_size]);
    let sink = KafkaSink::connect(c, move |_: &u64| KafkaSinkRecord::value(value.clone()))
        .await
        .map_err(|e| sink_error(&e))?;
    let sink = Arc::new(tokio::sync::Mutex::new(sink));
    let storage = CheckpointStorage::open(dir, 3).map_err(|e| sink_error(&e))?;
    let mut driver = CheckpointCoordinator::new(storage);
    driver
        .register(OperatorInfo::new("sink", 0, 1), sink.clone())
        .map_err(|e| sink_error(&e))?;
    driver.restore().await.map_err(|e| sink_error(&e))?;
    let ctx = RecordContext::default();
    let t0 = Instant::now();
    let mut last = t0;
    let mut commits = Vec::new();
    let mut i = 0;
    while i < a.records {
        {
            let mut s = sink.lock().await;
            let end = (i + 1000).min(a.records);
            while i < end {
                s.invoke(i, &ctx).await.map_err(|e| sink_error(&e))?;
                i += 1;
            }
        }
        if last.elapsed() >= Duration::from_secs(1) {
            let c = Instant::now();
            driver
                .trigger_checkpoint()
                .await
                .map_err(|e| sink_error(&e))?;
            commits.push(c.elapsed());
            last = Instant::now();
        }
    }
    let c = Instant::now();
    driver
        .trigger_checkpoint()
        .await
        .map_err(|e| sink_error(&e))?;
    commits.push(c.elapsed());
    let secs = t0.elapsed().as_secs_f64();
    sink.lock()
        .await
        .close()
        .await
        .map_err(|e| sink_error(&e))?;
    Ok(Run {
        records: a.records,
        secs,
        commits,
    })
}

#[cfg(feature = "local-kafka")]
async fn java(
    local: Option<&crate::local::LocalKafka>,
    g: &Globals,
    topic: &str,
    a: &BenchArgs,
    txn: Option<(Duration, String)>,
) -> Option<Result<f64, String>> {
    let cluster = local?.cluster();
    let mut props: Vec<(String, String)> = DEFAULTS
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    props.extend(g.props.iter().cloned());
    let (transaction_duration_ms, transactional_id) = match txn {
        Some((every, id)) => (Some(every.as_millis() as u64), Some(id)),
        None => (None, None),
    };
    let args = kafka_testcontainers::ProducerPerfArgs {
        topic: topic.into(),
        num_records: a.records,
        record_size: a.record_size,
        throughput: -1,
        transactional_id,
        transaction_duration_ms,
        props,
    };
    Some(
        cluster
            .producer_performance(&args)
            .await
            .map(|s| s.records_per_sec)
            .map_err(|e| e.to_string().lines().next().unwrap_or_default().to_string()),
    )
}

#[cfg(not(feature = "local-kafka"))]
async fn java(
    _local: Option<&crate::local::LocalKafka>,
    _g: &Globals,
    _topic: &str,
    _a: &BenchArgs,
    _txn: Option<(Duration, String)>,
) -> Option<Result<f64, String>> {
    None
}

fn ms(d: Option<Duration>) -> String {
    d.map_or("-".into(), |d| format!("{:.1}", d.as_secs_f64() * 1e3))
}

fn table(rows: &[Row], a: &BenchArgs, java_note: &str) -> String {
    let mut out = format!(
        "kafka-eos bench: {} records of {} B per run, {} partitions\n\n",
        a.records, a.record_size, a.partitions
    );
    let header = [
        "benchmark",
        "ours records/s",
        "ours MiB/s",
        "commits",
        "commit p50 ms",
        "commit p99 ms",
        "Java records/s",
        "ours/Java",
    ];
    let mut cells: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
    for r in rows {
        let (java, ratio) = match &r.java {
            Some(Ok(j)) => (format!("{j:.0}"), format!("{:.2}x", r.ours.rate() / j)),
            Some(Err(_)) => ("failed".into(), "-".into()),
            None => ("-".into(), "-".into()),
        };
        cells.push(vec![
            r.name.clone(),
            format!("{:.0}", r.ours.rate()),
            format!(
                "{:.1}",
                r.ours.rate() * a.record_size as f64 / (1024.0 * 1024.0)
            ),
            if r.ours.commits.is_empty() {
                "-".into()
            } else {
                r.ours.commits.len().to_string()
            },
            ms(r.ours.commit_percentile(0.5)),
            ms(r.ours.commit_percentile(0.99)),
            java,
            ratio,
        ]);
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|c| cells.iter().map(|r| r[c].len()).max().unwrap_or(0))
        .collect();
    for (i, row) in cells.iter().enumerate() {
        let line: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(c, v)| {
                if c == 0 {
                    format!("{v:<w$}", w = widths[c])
                } else {
                    format!("{v:>w$}", w = widths[c])
                }
            })
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
        if i == 0 {
            out.push_str(&"-".repeat(widths.iter().sum::<usize>() + 2 * (widths.len() - 1)));
            out.push('\n');
        }
    }
    for r in rows {
        if let Some(Err(e)) = &r.java {
            out.push_str(&format!("Java {}: {e}\n", r.name));
        }
    }
    out.push_str(java_note);
    out
}

/// Runs `bench` against `g.bootstrap`; `local` is the local cluster, if
/// one was started (Java's tool runs against it).
pub async fn run(
    g: &Globals,
    a: BenchArgs,
    local: Option<&crate::local::LocalKafka>,
) -> CliResult<()> {
    let started = Instant::now();
    if a.records == 0 || a.record_size == 0 || a.partitions < 1 {
        return Err(CliError::usage(
            "--records, --record-size and --partitions must be at least 1",
        ));
    }
    config(g, None)?;
    let cluster = g.cluster().await?;
    let id = format!(
        "{:x}-{:x}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis()),
        std::process::id()
    );
    let java_available = local.is_some()
        && !a.no_java
        && std::env::var_os("PATH")
            .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("java").is_file()));
    let java_note = if a.no_java {
        "Java: skipped (--no-java)\n"
    } else if !cfg!(feature = "local-kafka") {
        "Java: not in this build (feature local-kafka)\n"
    } else if local.is_none() {
        "Java: only against the local cluster (run without --bootstrap)\n"
    } else if !java_available {
        "Java: not found on PATH\n"
    } else {
        "Java: ProducerPerformance --throughput -1, same settings, same broker\n"
    };
    let java_local = if java_available { local } else { None };

    let mut plan: Vec<(&str, Option<Duration>, Option<Semantic>)> = vec![
        ("idempotent", None, None),
        (
            "transactional, commit every 100 ms",
            Some(Duration::from_millis(100)),
            None,
        ),
        (
            "transactional, commit every 1 s",
            Some(Duration::from_secs(1)),
            None,
        ),
    ];
    if a.sink {
        plan.push((
            "sink NONE, checkpoint every 1 s",
            None,
            Some(Semantic::None),
        ));
        plan.push((
            "sink AT_LEAST_ONCE, checkpoint every 1 s",
            None,
            Some(Semantic::AtLeastOnce),
        ));
        plan.push((
            "sink EXACTLY_ONCE, checkpoint every 1 s",
            None,
            Some(Semantic::ExactlyOnce),
        ));
    }
    // A short untimed run of ours first, so the broker's JIT is warm for
    // every measurement.
    let warm_topic = format!("kafka-eos-bench-{id}-warmup");
    create_topic(&cluster, &warm_topic, a.partitions).await?;
    status("warming up the broker ...");
    let warm = BenchArgs {
        records: (a.records / 4).clamp(1, 100_000),
        ..a.clone()
    };
    ours_idempotent(g, &warm_topic, &warm).await?;
    let steps = plan.len() * if java_local.is_some() { 2 } else { 1 };
    let mut done = 0usize;
    let mut rows = Vec::new();
    let dir = std::env::temp_dir().join(format!("kafka-eos-bench-{id}"));
    for (i, (name, every, semantic)) in plan.into_iter().enumerate() {
        let topic = format!("kafka-eos-bench-{id}-{i}");
        create_topic(&cluster, &topic, a.partitions).await?;
        status(&format!(
            "{} {done}/{steps} ours: {name} ({:.0} s)",
            bar(done as f64 / steps as f64, 20),
            started.elapsed().as_secs_f64()
        ));
        let txn_id = format!("kafka-eos-bench-{id}-{i}");
        let ours = match (every, semantic) {
            (_, Some(s)) => {
                let d = dir.join(i.to_string());
                std::fs::create_dir_all(&d)?;
                let r = ours_sink(g, &topic, &a, s, &txn_id, &d).await;
                let _ = std::fs::remove_dir_all(&d);
                r?
            }
            (Some(every), None) => ours_transactional(g, &topic, &a, every, &txn_id).await?,
            (None, None) => ours_idempotent(g, &topic, &a).await?,
        };
        done += 1;
        let java = if semantic.is_none() && java_local.is_some() {
            status(&format!(
                "{} {done}/{steps} Java: {name} ({:.0} s)",
                bar(done as f64 / steps as f64, 20),
                started.elapsed().as_secs_f64()
            ));
            let jtopic = format!("{topic}-java");
            create_topic(&cluster, &jtopic, a.partitions).await?;
            let r = java(
                java_local,
                g,
                &jtopic,
                &a,
                every.map(|e| (e, format!("{txn_id}-java"))),
            )
            .await;
            done += 1;
            r
        } else {
            None
        };
        rows.push(Row {
            name: name.to_string(),
            ours,
            java,
        });
    }
    let _ = std::fs::remove_dir_all(&dir);
    status("");
    print!("{}", table(&rows, &a, java_note));
    note(&format!(
        "bench finished in {:.1} s",
        started.elapsed().as_secs_f64()
    ));
    if rows.iter().any(|r| matches!(r.java, Some(Err(_)))) {
        return Err(CliError::new(
            ExitCode::Failure,
            "Java's ProducerPerformance failed (see the table); ours completed",
        ));
    }
    Ok(())
}

pub const BENCH_HELP: &str = "\
Measures, against one broker in one run: idempotent producer throughput;
transactional throughput committing every 100 ms and every 1 s, with commit
latency p50/p99; optionally (--sink) the Kafka sink by semantic. Beside each,
when Java is available and the cluster is the local one, Java's
ProducerPerformance with the same settings, and the ratio ours/Java. Without
--bootstrap a local one-node Kafka is started. -X settings apply to our
producers and to Java's.

Examples:
  kafka-eos bench
  kafka-eos bench --records 1000000 --record-size 1024
  kafka-eos --bootstrap localhost:9092 bench --records 100000 --sink
  kafka-eos bench --records 2000 --no-java";

/// `bench` options.
#[derive(Debug, Clone, clap::Args)]
pub struct BenchArgs {
    /// Records per measurement.
    #[arg(long, default_value_t = 200_000, value_name = "N")]
    pub records: u64,
    /// Value size in bytes.
    #[arg(long, default_value_t = 100, value_name = "BYTES")]
    pub record_size: usize,
    /// Partitions of each benchmark topic.
    #[arg(long, default_value_t = 6, value_name = "N")]
    pub partitions: i32,
    /// Skip Java's ProducerPerformance.
    #[arg(long)]
    pub no_java: bool,
    /// Also measure the Kafka sink (none, at-least-once, exactly-once).
    #[arg(long)]
    pub sink: bool,
    /// Kafka version of the local cluster (without --bootstrap).
    #[arg(long, default_value = "4.4", value_name = "VERSION")]
    pub kafka_version: String,
}
