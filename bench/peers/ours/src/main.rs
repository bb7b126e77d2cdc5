//! Our side of `bench/compare.sh`: the workloads of `bench/peers/shared/args.rs`,
//! one JSON result line on stdout, exit 0 only when the run did all its work.
//!
//! - produce: `kafka_eos::producer::Producer` (idempotent) or
//!   `kafka_eos::producer::TransactionalProducer` (`--txn-ms`);
//! - consume: `kafka_eos::consumer::Reader` with every partition
//!   assigned, polled until the records were all received;
//! - copy: `kafka_eos::sink::pipeline::ConsumeTransformProduce` (what
//!   `kafka-eos copy` runs), stepped until the committed transactions cover
//!   every input record.
//!
//! The produce loop, the same in `bench/peers/rdkafka` and `bench/peers/franz-go`: a
//! FIFO of send futures, the oldest awaited once more than `--window` are
//! outstanding; with `--txn-ms`, after each send, a commit once the
//! transaction is that old, its latency being the duration of
//! `commit_transaction` (which flushes and waits for every outstanding
//! record). The send futures are kept unboxed (one `ProducerRecord` per
//! record, the value a clone of one shared `Bytes`).

#[path = "../../shared/args.rs"]
mod args;

use args::{Isolation, Mode, Workload};
use bytes::Bytes;
use kafka_eos::client::{Cluster, ClusterConfig};
use kafka_eos::consumer::GroupConsumerConfig;
use kafka_eos::consumer::{AutoOffsetReset, ConsumerRecord, IsolationLevel, Reader, ReaderConfig};
use kafka_eos::producer::{
    ProduceError, Producer, ProducerConfig, ProducerRecord, RecordMetadata, TransactionalProducer,
};
use std::collections::VecDeque;
use std::future::Future;
use std::time::{Duration, Instant};

type Error = Box<dyn std::error::Error>;

fn config(w: &Workload) -> Result<ProducerConfig, Error> {
    let mut props = vec![
        ("bootstrap.servers", w.bootstrap.as_str()),
        ("acks", "all"),
        ("enable.idempotence", "true"),
        ("linger.ms", "5"),
        ("batch.size", "16384"),
        ("compression.type", w.compression.as_str()),
    ];
    if w.txn_every.is_some() {
        props.push(("transactional.id", w.txn_id.as_str()));
    }
    // Extra producer settings for an A/B of a setting (compare.sh's
    // OURS_PROPS): "key=value,key=value", applied last.
    let extra = std::env::var("OURS_PROPS").unwrap_or_default();
    for kv in extra.split(',').filter(|kv| !kv.is_empty()) {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("OURS_PROPS: {kv:?} is not key=value"))?;
        props.push((k, v));
    }
    Ok(ProducerConfig::from_properties(props)?)
}

fn record(w: &Workload, i: u64, value: &Bytes) -> ProducerRecord {
    let r = ProducerRecord::new(w.topic.as_str()).value(value.clone());
    if w.keyed { r.key(i.to_string()) } else { r }
}

/// The timed loop; `txn` is the producer to commit on and how often.
async fn timed<S, F>(
    w: &Workload,
    send: S,
    txn: Option<(&TransactionalProducer, Duration)>,
) -> Result<(f64, Vec<Duration>), Error>
where
    S: Fn(ProducerRecord) -> F,
    F: Future<Output = Result<RecordMetadata, ProduceError>>,
{
    let value = Bytes::from(w.value());
    let mut pending: VecDeque<F> = VecDeque::with_capacity(w.window + 1);
    let mut commits = Vec::new();
    // The part of each commit spent flushing (the rest is EndTxn).
    let mut flushes = Vec::new();
    let t0 = Instant::now();
    if let Some((p, _)) = txn {
        p.begin_transaction()?;
    }
    let mut txn_start = Instant::now();
    for i in 0..w.records {
        pending.push_back(send(record(w, i, &value)));
        if pending.len() > w.window {
            pending.pop_front().expect("non-empty").await?;
        }
        if let Some((p, every)) = txn
            && txn_start.elapsed() >= every
        {
            let c = Instant::now();
            p.flush().await;
            flushes.push(c.elapsed());
            p.commit_transaction().await?;
            commits.push(c.elapsed());
            for f in pending.drain(..) {
                f.await?;
            }
            p.begin_transaction()?;
            txn_start = Instant::now();
        }
    }
    if let Some((p, _)) = txn {
        let c = Instant::now();
        p.flush().await;
        flushes.push(c.elapsed());
        p.commit_transaction().await?;
        commits.push(c.elapsed());
    }
    for f in pending {
        f.await?;
    }
    if txn.is_some() {
        commit_stats(&flushes, &commits);
    }
    Ok((t0.elapsed().as_secs_f64(), commits))
}

/// How long a consumer may see nothing before the run fails.
const IDLE_LIMIT: Duration = Duration::from_secs(60);

/// The fetch settings every client of the comparison sets explicitly.
const FETCH_SETTINGS: [(&str, &str); 4] = [
    ("fetch.max.wait.ms", "500"),
    ("fetch.min.bytes", "1"),
    ("fetch.max.bytes", "52428800"),
    ("max.partition.fetch.bytes", "1048576"),
];

/// Consume mode: every partition assigned from the start, polled until
/// `records` records arrived (each value checked).
async fn consume(w: &Workload) -> Result<f64, Error> {
    let t0 = Instant::now();
    let cluster = Cluster::connect(ClusterConfig::new(&w.bootstrap)).await?;
    let config = ReaderConfig {
        isolation: match w.isolation {
            Isolation::Committed => IsolationLevel::ReadCommitted,
            Isolation::Uncommitted => IsolationLevel::ReadUncommitted,
        },
        max_wait: Duration::from_millis(500),
        min_bytes: 1,
        max_bytes: 50 << 20,
        partition_max_bytes: 1 << 20,
        auto_offset_reset: AutoOffsetReset::Earliest,
        ..ReaderConfig::default()
    };
    let mut reader = Reader::new(cluster, config);
    let partitions: Vec<i32> = (0..w.partitions).collect();
    reader.assign(&w.topic, &partitions);
    let mut received = 0u64;
    let mut last = Instant::now();
    while received < w.records {
        let records = reader.poll(Duration::from_secs(1)).await?;
        if records.is_empty() {
            if last.elapsed() > IDLE_LIMIT {
                return Err(format!("{received} of {} records, then nothing", w.records).into());
            }
            continue;
        }
        last = Instant::now();
        for r in &records {
            w.check_value(r.value.as_deref())?;
        }
        received += records.len() as u64;
    }
    Ok(t0.elapsed().as_secs_f64())
}

/// Copy mode: `ConsumeTransformProduce` from `topic` to `out`, each record
/// to the same partition, until committed transactions cover `records`
/// input records.
async fn copy(w: &Workload) -> Result<f64, Error> {
    use kafka_eos::sink::pipeline::{ConsumeTransformProduce, PipelineConfig};
    let mut consumer = vec![
        ("bootstrap.servers", w.bootstrap.as_str()),
        ("group.id", w.group.as_str()),
        ("group.protocol", "classic"),
        ("isolation.level", "read_committed"),
        ("auto.offset.reset", "earliest"),
    ];
    consumer.extend(FETCH_SETTINGS);
    let consumer = GroupConsumerConfig::from_properties(consumer)?;
    let producer = config(w)?;
    let every = w.txn_every.expect("copy mode has --txn-ms");
    let out: std::sync::Arc<str> = w.out.as_str().into();
    let bad = std::sync::Arc::new(std::sync::Mutex::new(None::<String>));
    let bad_in = bad.clone();
    // When the first input record reached the transform: the clock's start.
    let first = std::sync::Arc::new(std::sync::OnceLock::<Instant>::new());
    let first_in = first.clone();
    let check = w.clone();
    let transform = move |r: &ConsumerRecord| {
        first_in.get_or_init(Instant::now);
        if let Err(e) = check.check_value(r.value.as_deref()) {
            bad_in.lock().expect("not poisoned").get_or_insert(e);
        }
        let mut o = ProducerRecord::new(&*out).partition(r.partition);
        if let Some(k) = &r.key {
            o = o.key(k.clone());
        }
        if let Some(v) = &r.value {
            o = o.value(v.clone());
        }
        vec![o]
    };
    let config = PipelineConfig {
        commit_interval: every,
        ..PipelineConfig::default()
    };
    let mut pipeline = ConsumeTransformProduce::connect(
        consumer,
        &[w.topic.as_str()],
        producer,
        transform,
        config,
    )
    .await?;
    let mut last = (0u64, Instant::now());
    while pipeline.stats().committed_records < w.records {
        pipeline.step(Duration::from_millis(200)).await?;
        if pipeline.stats().consumed >= w.records {
            // The last input record is in the open transaction: commit it
            // now rather than at the interval (as the peers do).
            pipeline.commit_open_transaction().await?;
        }
        let stats = pipeline.stats();
        if stats.consumed != last.0 {
            last = (stats.consumed, Instant::now());
        } else if last.1.elapsed() > IDLE_LIMIT {
            return Err(format!(
                "{} of {} records copied, then nothing",
                stats.committed_records, w.records
            )
            .into());
        }
        if let Some(e) = bad.lock().expect("not poisoned").take() {
            return Err(e.into());
        }
    }
    let secs = first.get().map_or(0.0, |t| t.elapsed().as_secs_f64());
    let stats = pipeline.close(Duration::from_secs(30)).await?;
    if stats.committed_records != w.records {
        return Err(format!(
            "{} input records committed where {} were written",
            stats.committed_records, w.records
        )
        .into());
    }
    Ok(secs)
}

async fn run(w: &Workload) -> Result<(f64, Vec<Duration>), Error> {
    match w.mode {
        Mode::Produce => {}
        Mode::Consume => return Ok((consume(w).await?, Vec::new())),
        Mode::Copy => return Ok((copy(w).await?, Vec::new())),
    }
    let c = config(w)?;
    // The connections the topic's partitions take (partition p the
    // connection p mod connections.per.broker; compare.sh's topics have 6).
    let connections = c.connections_per_broker;
    let warm = || ProducerRecord::new(w.topic.as_str()).value(Bytes::from_static(b"w"));
    // Metadata and the producer id before the clock starts.
    match w.txn_every {
        None => {
            let p = Producer::connect(c).await?;
            p.send(warm()).await?;
            let r = timed(w, |r| p.send(r), None).await?;
            wire_stats(&p.metrics(), r.0, connections);
            p.close(Duration::from_secs(60)).await?;
            Ok(r)
        }
        Some(every) => {
            let p = TransactionalProducer::connect(c).await?;
            p.init_transactions().await?;
            p.begin_transaction()?;
            p.send(warm()).await?;
            p.commit_transaction().await?;
            let r = timed(w, |r| p.send(r), Some((&p, every))).await?;
            wire_stats(&p.metrics(), r.0, connections);
            p.close(Duration::from_secs(60)).await?;
            Ok(r)
        }
    }
}

/// Prints (to stderr) how the commits split between the flush of the
/// transaction's records and the EndTxn round trips after it.
fn commit_stats(flushes: &[Duration], commits: &[Duration]) {
    let p50 = |mut v: Vec<Duration>| {
        v.sort_unstable();
        v.get(v.len().saturating_sub(1) / 2)
            .map_or(0.0, |d| d.as_secs_f64() * 1e3)
    };
    let ends: Vec<Duration> = commits.iter().zip(flushes).map(|(c, f)| *c - *f).collect();
    eprintln!(
        "bench-ours commits: {}; p50 {:.1} ms = flush p50 {:.1} ms + EndTxn p50 {:.1} ms",
        commits.len(),
        p50(commits.to_vec()),
        p50(flushes.to_vec()),
        p50(ends),
    );
}

/// Prints (to stderr) what the Produce requests of the run carried and how
/// long their round trips took, and the throughput those allow: with
/// `max.in.flight.requests.per.connection` requests of `bytes_per_request`
/// outstanding per round trip on each of `connections` connections, at most
/// `connections * in_flight * bytes_per_request / round_trip` bytes per
/// second reach one broker.
fn wire_stats(m: &kafka_eos::producer::metrics::MetricsSnapshot, secs: f64, connections: usize) {
    let requests = m.requests.max(1) as f64;
    let bytes_per_request = m.bytes_sent as f64 / requests;
    let rtt = m.request_latency_avg_us as f64 / 1e6;
    let slots = 5.0 * connections as f64;
    let bound = if rtt > 0.0 {
        slots * bytes_per_request / rtt
    } else {
        0.0
    };
    eprintln!(
        "bench-ours wire: {} requests, {:.1} batches and {:.0} B each, round trip avg {} us \
         max {} us; {connections} connection(s) x 5 in flight allow {:.1} MB/s; moved {:.1} MB/s",
        m.requests,
        m.batches_sent as f64 / requests,
        bytes_per_request,
        m.request_latency_avg_us,
        m.request_latency_max_us,
        bound / 1e6,
        m.bytes_sent as f64 / secs.max(1e-9) / 1e6,
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let w = Workload::from_args();
    match run(&w).await {
        Ok((secs, commits)) => w.print_result("ours", secs, &commits),
        Err(e) => {
            eprintln!("bench-ours: {e}");
            std::process::exit(1);
        }
    }
}
