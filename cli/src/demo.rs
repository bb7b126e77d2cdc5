//! `demo`: an exactly-once pipeline that is SIGKILLed part-way and restarted,
//! then verified with a read_committed read.
//!
//! The pipeline is this binary re-executed as the hidden `demo-worker`
//! subcommand: a numbered source (its position is checkpointed state) → the
//! Kafka sink in EXACTLY_ONCE under the checkpoint driver. Record `i` has key
//! `i % 8` and value `i`; keys are hashed like the Java client, so every
//! partition's values must come out increasing. The worker reports on
//! stdout, one line per event (`restored`, `emitted`, `checkpoint`,
//! `finished`), which the parent reads to draw its progress line and to
//! time its kills.

use crate::common::{Globals, create_topic, partitions};
use crate::error::{CliError, CliResult, ExitCode};
use crate::output::{bar, note, status};
use kafka_consumer::{IsolationLevel, Offset, Reader, ReaderConfig};
use kafka_producer::ProducerConfig;
use kafka_sink::RecordContext;
use kafka_sink::kafka::{KafkaSink, KafkaSinkConfig, KafkaSinkRecord, Semantic, SinkPartitioner};
use kafka_sink::{
    CheckpointCoordinator, CheckpointError, CheckpointStorage, OperatorInfo, SourcePosition,
};
use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::Mutex;

/// Records moved per lock of the operators (a checkpoint never falls
/// between reading a record and writing it).
const BATCH: u64 = 10;
/// The worker reports its position every this many records.
const REPORT_EVERY: u64 = 200;
/// Unexpected worker exits tolerated before the demo gives up.
const MAX_CRASHES: u32 = 5;

fn checkpoint_error(e: CheckpointError) -> CliError {
    CliError::failure(format!("checkpoint: {e}"))
}

fn sink_error(e: impl std::fmt::Display) -> CliError {
    CliError::failure(format!("Kafka sink: {e}"))
}

/// The producer settings of the demo: its defaults, overridden by `-X`.
fn producer_config(g: &Globals, defaults: &[(&str, &str)]) -> CliResult<ProducerConfig> {
    let mut props: Vec<(&str, &str)> = vec![("bootstrap.servers", g.bootstrap.as_str())];
    props.extend_from_slice(defaults);
    props.extend(g.props.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    crate::common::producer_config(props)
}

fn say(line: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// Runs the hidden `demo-worker`: the pipeline process.
pub async fn run_worker(g: &Globals, a: DemoWorkerArgs) -> CliResult<()> {
    let mut config = KafkaSinkConfig::new(
        producer_config(g, &[("linger.ms", "5"), ("max.block.ms", "30000")])?,
        &a.topic,
    );
    config.semantic = Semantic::ExactlyOnce;
    config.transactional_id_prefix = Some(a.transactional_id_prefix.clone());
    config.transaction_timeout = Duration::from_secs(60);
    config.recovery_timeout = Duration::from_secs(30);
    config.set_partitioner(SinkPartitioner::None);
    let sink = KafkaSink::connect(config, |i: &u64| {
        KafkaSinkRecord::keyed((i % 8).to_string(), i.to_string())
    })
    .await
    .map_err(sink_error)?;
    let sink = Arc::new(Mutex::new(sink));
    let source = Arc::new(Mutex::new(SourcePosition::default()));
    let storage = CheckpointStorage::open(&a.checkpoint_dir, 3).map_err(checkpoint_error)?;
    let mut coordinator = CheckpointCoordinator::new(storage);
    coordinator
        .register(OperatorInfo::new("source", 0, 1), source.clone())
        .map_err(checkpoint_error)?;
    coordinator
        .register(OperatorInfo::new("sink", 0, 1), sink.clone())
        .map_err(checkpoint_error)?;
    let restored = coordinator.restore().await.map_err(checkpoint_error)?;
    let from = source.lock().await.next;
    say(format_args!(
        "restored {} {from}",
        restored.map_or("none".into(), |id| id.to_string())
    ));

    let interval = Duration::from_millis(a.checkpoint_interval_ms.max(1));
    let pause = (a.rate > 0).then(|| Duration::from_micros(BATCH * 1_000_000 / a.rate));
    let mut last_checkpoint = Instant::now();
    let mut last_report = from;
    loop {
        if last_checkpoint.elapsed() >= interval {
            let id = coordinator
                .trigger_checkpoint()
                .await
                .map_err(checkpoint_error)?;
            last_checkpoint = Instant::now();
            let at = source.lock().await.next;
            say(format_args!("checkpoint {id} {at}"));
        }
        let next = {
            let mut src = source.lock().await;
            let mut snk = sink.lock().await;
            let end = (src.next + BATCH).min(a.records);
            while src.next < end {
                snk.invoke(src.next, &RecordContext::default())
                    .await
                    .map_err(sink_error)?;
                src.next += 1;
            }
            src.next
        };
        if next >= last_report + REPORT_EVERY || next >= a.records {
            say(format_args!("emitted {next}"));
            last_report = next;
        }
        if next >= a.records {
            break;
        }
        if let Some(p) = pause {
            tokio::time::sleep(p).await;
        }
    }
    // A last checkpoint commits the tail.
    let last = coordinator
        .trigger_checkpoint()
        .await
        .map_err(checkpoint_error)?;
    say(format_args!("checkpoint {last} {}", a.records));
    sink.lock().await.close().await.map_err(sink_error)?;
    say(format_args!("finished {} {last}", a.records));
    Ok(())
}

/// A unique id for this run's topic and transactional ids.
fn run_id() -> String {
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    format!("{ms:x}-{:x}", std::process::id())
}

/// Removes the temporary checkpoint directory on drop.
struct TempDir(Option<PathBuf>);

impl Drop for TempDir {
    fn drop(&mut self) {
        if let Some(d) = self.0.take() {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// What the parent learned from the worker runs.
#[derive(Debug, Default)]
struct Tally {
    runs: u32,
    kills: u32,
    crashes: u32,
    checkpoints: u64,
    emitted: u64,
    committed: u64,
}

/// The outcome of the read_committed check.
#[derive(Debug, Default)]
struct Verdict {
    read: u64,
    distinct: u64,
    duplicates: u64,
    missing: u64,
    unexpected: u64,
    out_of_order: u64,
    bad_keys: u64,
    per_partition: BTreeMap<i32, u64>,
}

impl Verdict {
    fn exactly_once(&self) -> bool {
        self.duplicates == 0
            && self.missing == 0
            && self.unexpected == 0
            && self.out_of_order == 0
            && self.bad_keys == 0
    }
}

fn check(records: &[kafka_consumer::ConsumerRecord], total: u64) -> Verdict {
    let mut v = Verdict::default();
    let mut seen = vec![false; total as usize];
    let mut last: BTreeMap<i32, u64> = BTreeMap::new();
    for r in records {
        v.read += 1;
        *v.per_partition.entry(r.partition).or_default() += 1;
        let value = r
            .value
            .as_deref()
            .and_then(|b| std::str::from_utf8(b).ok())
            .and_then(|s| s.parse::<u64>().ok());
        let Some(n) = value.filter(|n| *n < total) else {
            v.unexpected += 1;
            continue;
        };
        let key_ok = r
            .key
            .as_deref()
            .is_some_and(|k| k == (n % 8).to_string().as_bytes());
        if !key_ok {
            v.bad_keys += 1;
        }
        if std::mem::replace(&mut seen[n as usize], true) {
            v.duplicates += 1;
        } else {
            v.distinct += 1;
        }
        if let Some(prev) = last.insert(r.partition, n)
            && prev >= n
        {
            v.out_of_order += 1;
        }
    }
    v.missing = total - v.distinct;
    v
}

/// The worker's command line (this binary, same globals).
fn worker_command(
    g: &Globals,
    a: &DemoArgs,
    topic: &str,
    dir: &std::path::Path,
    prefix: &str,
) -> CliResult<tokio::process::Command> {
    let exe = std::env::current_exe()
        .map_err(|e| CliError::failure(format!("cannot find this executable: {e}")))?;
    let mut c = tokio::process::Command::new(exe);
    c.arg("--bootstrap").arg(&g.bootstrap);
    for (k, v) in &g.props {
        c.arg("-X").arg(format!("{k}={v}"));
    }
    c.arg("demo-worker")
        .arg("--topic")
        .arg(topic)
        .arg("--checkpoint-dir")
        .arg(dir)
        .arg("--records")
        .arg(a.records.to_string())
        .arg("--checkpoint-interval-ms")
        .arg(a.checkpoint_interval_ms.to_string())
        .arg("--rate")
        .arg(a.rate.to_string())
        .arg("--transactional-id-prefix")
        .arg(prefix)
        .env_remove("KAFKA_EOS_BOOTSTRAP")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    Ok(c)
}

fn progress_line(t: &Tally, a: &DemoArgs, started: Instant) -> String {
    format!(
        "{} committed {}/{} | emitted {} | checkpoints {} | kills {}/{} | run {} | {:.1} s",
        bar(t.committed as f64 / a.records.max(1) as f64, 24),
        t.committed,
        a.records,
        t.emitted,
        t.checkpoints,
        t.kills,
        a.kills,
        t.runs,
        started.elapsed().as_secs_f64()
    )
}

/// How long the verification waits for the transaction markers: the
/// worker's transaction timeout (past it the coordinator has aborted any
/// transaction a killed worker left open).
const MARKER_WAIT: Duration = Duration::from_secs(60);

/// Waits until every partition's last stable offset (`committed`) reached
/// its high watermark (`uncommitted`), at most [`MARKER_WAIT`]. A commit
/// returns once the coordinator prepared it, before it wrote the commit
/// markers; until then the last stable offset stays below the transaction
/// and a read_committed read ending at it would miss its records (the more
/// likely, the more loaded the broker).
async fn wait_for_stable_offsets(
    committed: &Reader,
    uncommitted: &Reader,
    topic: &str,
    parts: &[i32],
) -> CliResult<()> {
    let deadline = Instant::now() + MARKER_WAIT;
    loop {
        let high = uncommitted
            .list_offsets(topic, parts, Offset::Latest)
            .await?;
        let stable = committed.list_offsets(topic, parts, Offset::Latest).await?;
        let open = parts
            .iter()
            .filter(|p| high.get(p).and_then(|l| l.offset) != stable.get(p).and_then(|l| l.offset))
            .count();
        if open == 0 {
            return Ok(());
        }
        if Instant::now() >= deadline {
            note(&format!(
                "{open} partitions still have an open transaction after {MARKER_WAIT:?}; \
                 verifying up to their last stable offsets"
            ));
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Runs the pipeline, killing it at the planned points, until it finishes.
async fn drive(
    g: &Globals,
    a: &DemoArgs,
    topic: &str,
    dir: &std::path::Path,
    prefix: &str,
) -> CliResult<Tally> {
    let started = Instant::now();
    // Kill i once the pipeline has emitted records * i / (kills + 1).
    let thresholds: Vec<u64> = (1..=a.kills as u64)
        .map(|i| a.records * i / (a.kills as u64 + 1))
        .collect();
    let mut t = Tally::default();
    let mut ctrl_c = std::pin::pin!(tokio::signal::ctrl_c());
    loop {
        t.runs += 1;
        let mut child = worker_command(g, a, topic, dir, prefix)?
            .spawn()
            .map_err(|e| CliError::failure(format!("cannot start the pipeline process: {e}")))?;
        let pid = child.id().unwrap_or(0);
        let mut lines = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
        let stderr = child.stderr.take().expect("piped stderr");
        let errors = tokio::spawn(async move {
            let mut tail = VecDeque::new();
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(l)) = lines.next_line().await {
                if tail.len() == 20 {
                    tail.pop_front();
                }
                tail.push_back(l);
            }
            tail.into_iter().collect::<Vec<_>>().join("\n")
        });
        let mut finished = false;
        let mut killed = false;
        let mut tick = tokio::time::interval(Duration::from_millis(250));
        loop {
            tokio::select! {
                _ = &mut ctrl_c => {
                    let _ = child.start_kill();
                    let _ = child.wait().await;
                    return Err(CliError::new(ExitCode::Interrupted, "interrupted"));
                }
                _ = tick.tick() => status(&progress_line(&t, a, started)),
                line = lines.next_line() => {
                    let Ok(Some(line)) = line else { break };
                    let mut f = line.split_whitespace();
                    match (f.next(), f.next(), f.next()) {
                        (Some("emitted"), Some(n), _) => {
                            t.emitted = n.parse().unwrap_or(t.emitted);
                        }
                        (Some("checkpoint"), Some(_), Some(at)) => {
                            t.checkpoints += 1;
                            t.committed = at.parse().unwrap_or(t.committed);
                        }
                        (Some("finished"), _, _) => finished = true,
                        _ => {}
                    }
                    let due = thresholds.get(t.kills as usize);
                    if !finished && due.is_some_and(|d| t.emitted >= *d) {
                        // SIGKILL: no chance to commit, abort or flush.
                        let _ = child.start_kill();
                        t.kills += 1;
                        killed = true;
                        note(&format!(
                            "kill -9 {pid} at record {} (last checkpoint committed {})",
                            t.emitted, t.committed
                        ));
                        break;
                    }
                }
            }
        }
        let exit = child
            .wait()
            .await
            .map_err(|e| CliError::failure(format!("waiting for the pipeline process: {e}")))?;
        let stderr_tail = errors.await.unwrap_or_default();
        if killed {
            continue;
        }
        if exit.success() && finished {
            return Ok(t);
        }
        t.crashes += 1;
        note(&format!(
            "pipeline process {pid} exited with {exit} (restarting):\n{stderr_tail}"
        ));
        if t.crashes > MAX_CRASHES {
            return Err(CliError::failure(format!(
                "the pipeline process failed {} times; last error:\n{stderr_tail}",
                t.crashes
            )));
        }
    }
}

/// Runs `demo` against `g.bootstrap`; `startup` is the local cluster's
/// start time, if one was started.
pub async fn run(g: &Globals, a: DemoArgs, startup: Option<Duration>) -> CliResult<()> {
    let started = Instant::now();
    if a.records == 0 {
        return Err(CliError::usage("--records must be at least 1"));
    }
    if a.partitions < 1 {
        return Err(CliError::usage("--partitions must be at least 1"));
    }
    if a.checkpoint_interval_ms == 0 {
        return Err(CliError::usage(
            "--checkpoint-interval-ms must be at least 1",
        ));
    }
    // Settings are checked before anything starts.
    producer_config(g, &[])?;
    let cluster = g.cluster().await?;
    let id = run_id();
    let topic = a
        .topic
        .clone()
        .unwrap_or_else(|| format!("kafka-eos-demo-{id}"));
    let prefix = format!("kafka-eos-demo-{id}");
    let created = create_topic(&cluster, &topic, a.partitions)
        .await
        .map_err(|e| e.with_bootstrap(&g.bootstrap))?;
    let parts = partitions(&cluster, &topic, &[]).await?;
    let mut reader = Reader::new(
        cluster.clone(),
        ReaderConfig {
            isolation: IsolationLevel::ReadCommitted,
            ..ReaderConfig::default()
        },
    );
    let uncommitted = Reader::new(
        cluster.clone(),
        ReaderConfig {
            isolation: IsolationLevel::ReadUncommitted,
            ..ReaderConfig::default()
        },
    );
    if !created {
        let ends = reader.list_offsets(&topic, &parts, Offset::Latest).await?;
        let starts = reader
            .list_offsets(&topic, &parts, Offset::Earliest)
            .await?;
        let nonempty = ends
            .iter()
            .zip(&starts)
            .any(|((_, e), (_, s))| e.offset != s.offset);
        if nonempty {
            return Err(CliError::usage(format!(
                "topic {topic:?} already has records; the demo needs an empty topic \
                 (omit --topic for a new one)"
            )));
        }
    }
    note(&format!(
        "demo: {} records into {topic} ({} partitions), checkpoint every {} ms, {} kill -9",
        a.records,
        parts.len(),
        a.checkpoint_interval_ms,
        a.kills
    ));

    let (dir, _cleanup) = match &a.checkpoint_dir {
        Some(d) => (d.clone(), TempDir(None)),
        None => {
            let d = std::env::temp_dir().join(format!("kafka-eos-demo-{id}"));
            (d.clone(), TempDir(Some(d)))
        }
    };
    std::fs::create_dir_all(&dir).map_err(|e| {
        CliError::failure(format!(
            "cannot create the checkpoint directory {}: {e}",
            dir.display()
        ))
    })?;

    let pipeline_started = Instant::now();
    let tally = drive(g, &a, &topic, &dir, &prefix).await?;
    let pipeline = pipeline_started.elapsed();
    status("verifying with a read_committed read ...");

    let verify_started = Instant::now();
    wait_for_stable_offsets(&reader, &uncommitted, &topic, &parts).await?;
    let records = reader.read_to_end(&topic, &parts).await?;
    let verdict = check(&records, a.records);
    let verify = verify_started.elapsed();
    status("");

    let ok = verdict.exactly_once();
    let order = if verdict.out_of_order == 0 {
        format!("increasing in each of {} partitions", parts.len())
    } else {
        format!("{} records out of order", verdict.out_of_order)
    };
    let spread: Vec<String> = verdict
        .per_partition
        .iter()
        .map(|(p, n)| format!("p{p}={n}"))
        .collect();
    let mut report = format!(
        "kafka-eos demo: {}\n\
         \x20 records      {} written, {} read with read_committed ({})\n\
         \x20 duplicates   {}\n\
         \x20 missing      {}\n\
         \x20 order        {order}\n\
         \x20 checkpoints  {} (every {} ms)\n\
         \x20 kills        {} (SIGKILL), {} runs, {} crashes\n\
         \x20 topic        {topic} on {}\n",
        if ok {
            "exactly once: OK"
        } else {
            "NOT exactly once"
        },
        a.records,
        verdict.read,
        spread.join(" "),
        verdict.duplicates,
        verdict.missing,
        tally.checkpoints,
        a.checkpoint_interval_ms,
        tally.kills,
        tally.runs,
        tally.crashes,
        g.bootstrap,
    );
    if verdict.unexpected + verdict.bad_keys > 0 {
        report.push_str(&format!(
            "  unexpected   {} values outside 0..{}, {} wrong keys\n",
            verdict.unexpected, a.records, verdict.bad_keys
        ));
    }
    let kafka_start = startup.map_or(String::new(), |s| {
        format!("local Kafka ready {:.1} s, ", s.as_secs_f64())
    });
    report.push_str(&format!(
        "  time         {:.1} s ({kafka_start}pipeline {:.1} s, verify {:.1} s)",
        started.elapsed().as_secs_f64() + startup.map_or(0.0, |s| s.as_secs_f64()),
        pipeline.as_secs_f64(),
        verify.as_secs_f64()
    ));
    println!("{report}");
    if ok {
        Ok(())
    } else {
        Err(CliError::failure(
            "the topic does not hold every record exactly once (see the report)",
        ))
    }
}

pub const DEMO_HELP: &str = "\
Without --bootstrap a local one-node Kafka is started (kafka-testcontainers:
Maven jars and Java; the first run downloads about 55 MB; builds without the
default cargo feature local-kafka need --bootstrap). With --bootstrap
the demo runs against that cluster and creates its topic (a unique name per
run unless --topic is given; an existing topic must be empty).

The pipeline (a numbered source -> the EXACTLY_ONCE Kafka sink under the
checkpoint driver) runs as a child process (this binary re-executed), is
SIGKILLed --kills times part-way and restarted from its last checkpoint. A
read_committed read then checks the count, the set and the per-partition
order. Exit 0 when every record is there exactly once, 1 otherwise.

Examples:
  kafka-eos demo
  kafka-eos demo --records 50000 --kills 5 --checkpoint-interval-ms 100
  kafka-eos --bootstrap localhost:9092 demo --partitions 6
  kafka-eos --bootstrap localhost:9092 -X acks=all -X linger.ms=10 demo --topic eos-demo";

/// `demo` options.
#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Records the pipeline writes.
    #[arg(long, default_value_t = 20_000, value_name = "N")]
    pub records: u64,
    /// Partitions of the demo topic.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub partitions: i32,
    /// SIGKILLs of the pipeline process before it may finish.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub kills: u32,
    /// Checkpoint (and transaction commit) interval.
    #[arg(long, default_value_t = 200, value_name = "MS")]
    pub checkpoint_interval_ms: u64,
    /// Source rate in records per second (0: unthrottled).
    #[arg(long, default_value_t = 4_000, value_name = "N")]
    pub rate: u64,
    /// The topic (default: kafka-eos-demo-RUNID, unique per run).
    #[arg(long, short = 't')]
    pub topic: Option<String>,
    /// Checkpoint directory (default: a temporary one, removed afterwards).
    #[arg(long, value_name = "DIR")]
    pub checkpoint_dir: Option<std::path::PathBuf>,
    /// Kafka version of the local cluster (without --bootstrap).
    #[arg(long, default_value = "4.4", value_name = "VERSION")]
    pub kafka_version: String,
}

/// The hidden `demo-worker` (the pipeline process).
#[derive(Debug, clap::Args)]
pub struct DemoWorkerArgs {
    /// Topic.
    #[arg(long)]
    pub topic: String,
    /// Checkpoint directory.
    #[arg(long)]
    pub checkpoint_dir: std::path::PathBuf,
    /// Records to write in total.
    #[arg(long)]
    pub records: u64,
    /// Checkpoint interval.
    #[arg(long)]
    pub checkpoint_interval_ms: u64,
    /// Records per second (0: unthrottled).
    #[arg(long)]
    pub rate: u64,
    /// Transactional id prefix.
    #[arg(long)]
    pub transactional_id_prefix: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use kafka_consumer::ConsumerRecord;

    fn rec(partition: i32, offset: i64, n: u64) -> ConsumerRecord {
        ConsumerRecord {
            topic: "t".into(),
            partition,
            offset,
            timestamp: 0,
            timestamp_type: Default::default(),
            key: Some(Bytes::from((n % 8).to_string())),
            value: Some(Bytes::from(n.to_string())),
            headers: Vec::new(),
            producer_id: -1,
            producer_epoch: -1,
            is_transactional: true,
            leader_epoch: None,
        }
    }

    /// The check counts duplicates, gaps and reordering separately.
    #[test]
    fn check_finds_duplicates_missing_and_order() {
        let good = [rec(0, 0, 0), rec(0, 1, 2), rec(1, 0, 1)];
        let v = check(&good, 3);
        assert!(v.exactly_once(), "{v:?}");
        let bad = [rec(0, 0, 2), rec(0, 1, 0), rec(1, 0, 2)];
        let v = check(&bad, 4);
        assert_eq!((v.duplicates, v.missing, v.out_of_order), (1, 2, 1));
        assert!(!v.exactly_once());
    }
}
