//! Our side of `bench/compare.sh`: the workloads of `bench/peers/shared/args.rs`,
//! one JSON result line on stdout, exit 0 only when the run did all its work.
//!
//! - produce: `kafka_eos::producer::Producer` (idempotent) or
//!   `kafka_eos::producer::TransactionalProducer` (`--txn-ms`);
//! - consume: `kafka_eos::consumer::Reader` with every partition
//!   assigned, polled until the records were all received;
//! - copy: `kafka_eos::sink::pipeline::ConsumeTransformProduce` (what
//!   `kafka-eos copy` runs), stepped until the committed transactions cover
//!   every input record;
//! - e2e-produce: the fixed-rate producer of `bench/peers/shared/e2e.rs`,
//!   paced on the main thread (sends handed to the producer there, their
//!   futures awaited in order by a task of the runtime, at most `--window`
//!   outstanding); e2e-read: a `Reader` as in consume, read_committed.
//!
//! Settings (`--settings`): `equal`, the explicit settings every client of
//! the comparison gets; `defaults`, kafka-eos's defaults with only what the
//! workload needs to exist (copy: what `kafka-eos copy` sets by default).
//! [`producer_props`], [`copy_consumer_props`] and [`reader_config`] are
//! the whole of it; `--print-settings` prints them.
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
#[path = "../../shared/e2e.rs"]
mod e2e;

use args::{Isolation, Mode, Settings, Workload};
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

/// The producer settings of the workload (every mode that produces).
fn producer_props(w: &Workload) -> Result<Vec<(String, String)>, Error> {
    let kv = |k: &str, v: &str| (k.to_string(), v.to_string());
    let mut props = vec![kv("bootstrap.servers", &w.bootstrap)];
    match w.settings {
        Settings::Equal => props.extend([
            kv("acks", "all"),
            kv("enable.idempotence", "true"),
            kv("linger.ms", "5"),
            kv("batch.size", "16384"),
            kv("compression.type", &w.compression),
        ]),
        // What `kafka-eos copy` sets on its producer besides the id.
        Settings::Defaults if w.mode == Mode::Copy => {
            props.push(kv("transaction.timeout.ms", "10000"))
        }
        // The idempotent workloads are defined by idempotence (kafka-eos's
        // default, as acks=all).
        Settings::Defaults if w.txn_every.is_none() => {
            props.extend([kv("acks", "all"), kv("enable.idempotence", "true")])
        }
        Settings::Defaults => {}
    }
    if w.settings == Settings::Defaults && w.compression != "none" {
        props.push(kv("compression.type", &w.compression));
    }
    if w.txn_every.is_some() {
        props.push(kv("transactional.id", &w.txn_id));
    }
    // Extra producer settings for an A/B of a setting (compare.sh's
    // OURS_PROPS): "key=value,key=value", applied last.
    let extra = std::env::var("OURS_PROPS").unwrap_or_default();
    for kv in extra.split(',').filter(|kv| !kv.is_empty()) {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("OURS_PROPS: {kv:?} is not key=value"))?;
        props.push((k.to_string(), v.to_string()));
    }
    Ok(props)
}

fn config(w: &Workload) -> Result<ProducerConfig, Error> {
    let props = producer_props(w)?;
    Ok(ProducerConfig::from_properties(
        props.iter().map(|(k, v)| (k.as_str(), v.as_str())),
    )?)
}

fn record(w: &Workload, i: u64, value: Bytes) -> ProducerRecord {
    let r = ProducerRecord::new(w.topic.as_str()).value(value);
    if w.keyed { r.key(i.to_string()) } else { r }
}

/// The values of a produce run: one shared value of fixed text (what every
/// client sends in compare.sh's workloads), or, with `BENCH_VALUES=random`
/// (an A/B of ours on data that does not compress, say of a compression
/// default), a different `size`-byte slice per record of one 8 MiB buffer
/// of pseudo-random bytes.
enum Values {
    /// Every record carries this value.
    Same(Bytes),
    /// Record `i` carries a slice of `pool` at an offset drawn from `i`.
    Random { pool: Bytes, size: usize },
}

impl Values {
    fn new(w: &Workload) -> Self {
        if std::env::var("BENCH_VALUES").as_deref() != Ok("random") {
            return Values::Same(Bytes::from(w.value()));
        }
        let mut pool = vec![0u8; 8 << 20];
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for chunk in pool.chunks_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            chunk.copy_from_slice(&x.to_le_bytes()[..chunk.len()]);
        }
        Values::Random {
            pool: Bytes::from(pool),
            size: w.size,
        }
    }

    fn get(&self, i: u64) -> Bytes {
        match self {
            Values::Same(v) => v.clone(),
            Values::Random { pool, size } => {
                let span = (pool.len() - size) as u64;
                let at = (i.wrapping_mul(0x9e37_79b9) % span) as usize;
                pool.slice(at..at + size)
            }
        }
    }
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
    let values = Values::new(w);
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
        pending.push_back(send(record(w, i, values.get(i))));
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

/// The reader of consume and e2e-read, and what it was given (for
/// `--print-settings`). Every partition is read from its start
/// (auto.offset.reset=earliest on the assignment: the workload).
fn reader_config(w: &Workload) -> (ReaderConfig, String) {
    // e2e-read and consume-committed are defined by read_committed.
    let committed = w.mode == Mode::E2eRead || w.isolation == Isolation::Committed;
    let isolation = if committed {
        IsolationLevel::ReadCommitted
    } else {
        IsolationLevel::ReadUncommitted
    };
    match w.settings {
        Settings::Equal => (
            ReaderConfig {
                isolation,
                max_wait: Duration::from_millis(500),
                min_bytes: 1,
                max_bytes: 50 << 20,
                partition_max_bytes: 1 << 20,
                auto_offset_reset: AutoOffsetReset::Earliest,
                ..ReaderConfig::default()
            },
            format!(
                "Reader: isolation.level={}, fetch.max.wait.ms=500, fetch.min.bytes=1, \
                 fetch.max.bytes=52428800, max.partition.fetch.bytes=1048576, \
                 auto.offset.reset=earliest",
                if committed {
                    "read_committed"
                } else {
                    "read_uncommitted"
                }
            ),
        ),
        Settings::Defaults => {
            let mut c = ReaderConfig {
                auto_offset_reset: AutoOffsetReset::Earliest,
                ..ReaderConfig::default()
            };
            let mut given = "auto.offset.reset=earliest".to_string();
            if committed {
                c.isolation = isolation;
                given.push_str(", isolation.level=read_committed");
            }
            let d = ReaderConfig::default();
            (
                c,
                format!(
                    "Reader: ReaderConfig::default() with {given} (defaults: isolation {:?}, \
                     max wait {:?}, min bytes {}, max bytes {}, partition max bytes {})",
                    d.isolation, d.max_wait, d.min_bytes, d.max_bytes, d.partition_max_bytes
                ),
            )
        }
    }
}

/// The consumer settings of copy.
fn copy_consumer_props(w: &Workload) -> Vec<(String, String)> {
    let kv = |k: &str, v: &str| (k.to_string(), v.to_string());
    // What `kafka-eos copy` sets (the workload's too).
    let mut props = vec![
        kv("bootstrap.servers", &w.bootstrap),
        kv("group.id", &w.group),
        kv("isolation.level", "read_committed"),
        kv("auto.offset.reset", "earliest"),
    ];
    if w.settings == Settings::Equal {
        props.push(kv("group.protocol", "classic"));
        props.extend(FETCH_SETTINGS.iter().map(|(k, v)| kv(k, v)));
    }
    props
}

/// What the client is given for the workload, one line per role.
fn print_settings(w: &Workload) -> Result<(), Error> {
    let join = |props: Vec<(String, String)>| {
        props
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    // The producer's effective settings that were not given.
    let effective = || -> Result<String, Error> {
        let c = config(w)?;
        Ok(format!(
            "  not set, kafka-eos's defaults: linger.ms {:?}, batch.size {}, compression {:?}, \
             buffer.memory {}, max.in.flight {}, connections.per.broker {}, partitioner {:?}, \
             acks {:?}, idempotence {}",
            c.linger,
            c.batch_size,
            c.compression,
            c.buffer_memory,
            c.max_in_flight,
            c.connections_per_broker,
            c.partitioner,
            c.acks,
            c.idempotence(),
        ))
    };
    let defaults = w.settings == Settings::Defaults;
    match w.mode {
        Mode::Produce | Mode::E2eProduce => {
            println!("producer: {}", join(producer_props(w)?));
            if defaults {
                println!("{}", effective()?);
            }
        }
        Mode::Consume | Mode::E2eRead => println!("{}", reader_config(w).1),
        Mode::Copy => {
            println!("consumer: {}", join(copy_consumer_props(w)));
            println!("producer: {}", join(producer_props(w)?));
            if defaults {
                println!("{}", effective()?);
                println!(
                    "  consumer not set: the group consumer's defaults (group.protocol unset: \
                     KIP-848 where the broker serves it, fetch settings as Java's)"
                );
            }
            println!(
                "pipeline: ConsumeTransformProduce, commit_interval {:?}",
                w.txn_every.unwrap_or_default()
            );
        }
    }
    Ok(())
}

/// Consume mode: every partition assigned from the start, polled until
/// `records` records arrived (each value checked).
async fn consume(w: &Workload) -> Result<f64, Error> {
    let t0 = Instant::now();
    let cluster = Cluster::connect(ClusterConfig::new(&w.bootstrap)).await?;
    let mut reader = Reader::new(cluster, reader_config(w).0);
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
    let consumer = copy_consumer_props(w);
    let consumer = GroupConsumerConfig::from_properties(
        consumer.iter().map(|(k, v)| (k.as_str(), v.as_str())),
    )?;
    let producer = config(w)?;
    let every = w.txn_every.expect("copy mode has --txn-ms");
    let out: std::sync::Arc<str> = w.out.as_str().into();
    let bad = std::sync::Arc::new(std::sync::Mutex::new(None::<String>));
    let bad_in = bad.clone();
    // When the first input record reached the transform: the clock's start.
    let first = std::sync::Arc::new(std::sync::OnceLock::<Instant>::new());
    let first_in = first.clone();
    let check = w.clone();
    // copy --e2e: the input partitions whose `ready` record went through.
    let ready = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let ready_in = ready.clone();
    let transform = move |r: &ConsumerRecord| {
        if check.e2e && r.value.as_deref() == Some(b"ready".as_slice()) {
            ready_in.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        } else {
            first_in.get_or_init(Instant::now);
        }
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
    let mut signalled = !w.e2e;
    while pipeline.stats().committed_records < w.records {
        pipeline.step(Duration::from_millis(200)).await?;
        if !signalled && ready.load(std::sync::atomic::Ordering::Relaxed) >= w.partitions as usize {
            e2e::signal_ready(&w.ready_file)?;
            signalled = true;
        }
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
        Mode::E2eProduce | Mode::E2eRead => unreachable!("e2e modes run from main"),
    }
    let c = config(w)?;
    // The connections the topic's partitions take (partition p the
    // connection p mod connections.per.broker; compare.sh's topics have 6).
    let connections = c.connections_per_broker;
    let in_flight = c.max_in_flight;
    let warm = || ProducerRecord::new(w.topic.as_str()).value(Bytes::from_static(b"w"));
    // Metadata and the producer id before the clock starts.
    match w.txn_every {
        None => {
            let p = Producer::connect(c).await?;
            p.send(warm()).await?;
            let r = timed(w, |r| p.send(r), None).await?;
            wire_stats(&p.metrics(), r.0, connections, in_flight);
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
            wire_stats(&p.metrics(), r.0, connections, in_flight);
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
/// `in_flight` (`max.in.flight.requests.per.connection`) requests of `bytes_per_request`
/// outstanding per round trip on each of `connections` connections, at most
/// `connections * in_flight * bytes_per_request / round_trip` bytes per
/// second reach one broker.
fn wire_stats(
    m: &kafka_eos::producer::metrics::MetricsSnapshot,
    secs: f64,
    connections: usize,
    in_flight: usize,
) {
    let requests = m.requests.max(1) as f64;
    let bytes_per_request = m.bytes_sent as f64 / requests;
    let rtt = m.request_latency_avg_us as f64 / 1e6;
    let slots = (in_flight * connections) as f64;
    let bound = if rtt > 0.0 {
        slots * bytes_per_request / rtt
    } else {
        0.0
    };
    eprintln!(
        "bench-ours wire: {} requests, {:.1} batches and {:.0} B each, round trip avg {} us \
         max {} us; {connections} connection(s) x {in_flight} in flight allow {:.1} MB/s; moved {:.1} MB/s; \
         {} batch retries, errors by code {:?}",
        m.requests,
        m.batches_sent as f64 / requests,
        bytes_per_request,
        m.request_latency_avg_us,
        m.request_latency_max_us,
        bound / 1e6,
        m.bytes_sent as f64 / secs.max(1e-9) / 1e6,
        m.retries,
        m.errors_by_code,
    );
}

/// How long an e2e reader waits for the next record before it reports the
/// missing ones as lost.
const E2E_IDLE: Duration = Duration::from_secs(30);

/// How long an e2e reader keeps reading once every record arrived (to
/// count late duplicates).
const E2E_LINGER: Duration = Duration::from_millis(500);

/// e2e-produce: the fixed-rate loop on this thread; `send` hands a record
/// to the producer, whose futures a task of `rt` awaits in order.
fn paced<S, F>(
    w: &Workload,
    rt: &tokio::runtime::Runtime,
    send: S,
    txn: Option<(&TransactionalProducer, Duration)>,
) -> Result<String, Error>
where
    S: Fn(ProducerRecord) -> F,
    F: Future<Output = Result<RecordMetadata, ProduceError>> + Send + 'static,
{
    let (tx, mut rx) = tokio::sync::mpsc::channel::<F>(w.window);
    let acker = rt.spawn(async move {
        while let Some(f) = rx.recv().await {
            f.await?;
        }
        Ok::<(), ProduceError>(())
    });
    let mut commits = Vec::new();
    let t0 = Instant::now();
    let mut pacer = e2e::Pacer::start(w.rate, w.records);
    if let Some((p, _)) = txn {
        p.begin_transaction()?;
    }
    let mut txn_start = Instant::now();
    'paced: loop {
        let due = pacer.due();
        if due.is_empty() {
            break;
        }
        for i in due {
            let value = e2e::encode(i, pacer.scheduled_ns(i), w.size);
            let r = ProducerRecord::new(w.topic.as_str()).value(Bytes::from(value));
            if tx.blocking_send(send(r)).is_err() {
                break 'paced; // the acker stopped: a record failed
            }
        }
        if let Some((p, every)) = txn
            && txn_start.elapsed() >= every
        {
            let c = Instant::now();
            rt.block_on(p.commit_transaction())?;
            commits.push(c.elapsed());
            p.begin_transaction()?;
            txn_start = Instant::now();
        }
    }
    if let Some((p, _)) = txn {
        let c = Instant::now();
        rt.block_on(p.commit_transaction())?;
        commits.push(c.elapsed());
    }
    drop(tx);
    rt.block_on(acker)??;
    let secs = t0.elapsed().as_secs_f64();
    Ok(e2e::producer_line(
        "ours",
        w.settings.name(),
        w.records,
        secs,
        pacer.lag_max_ns,
        &commits,
    ))
}

/// e2e-produce: connect and warm up (metadata, producer id), then [`paced`].
fn e2e_produce(w: &Workload, rt: &tokio::runtime::Runtime) -> Result<String, Error> {
    let c = config(w)?;
    let warm = || ProducerRecord::new(w.topic.as_str()).value(Bytes::from_static(b"w"));
    match w.txn_every {
        None => {
            let p = rt.block_on(async {
                let p = Producer::connect(c).await?;
                p.send(warm()).await?;
                Ok::<_, Error>(p)
            })?;
            let line = paced(w, rt, |r| p.send(r), None)?;
            rt.block_on(p.close(Duration::from_secs(60)))?;
            Ok(line)
        }
        Some(every) => {
            let p = rt.block_on(async {
                let p = TransactionalProducer::connect(c).await?;
                p.init_transactions().await?;
                p.begin_transaction()?;
                p.send(warm()).await?;
                p.commit_transaction().await?;
                Ok::<_, Error>(p)
            })?;
            let line = paced(w, rt, |r| p.send(r), Some((&p, every)))?;
            rt.block_on(p.close(Duration::from_secs(60)))?;
            Ok(line)
        }
    }
}

/// e2e-read: every partition from its start, read_committed, until every
/// record arrived (then [`E2E_LINGER`] more) or none came for [`E2E_IDLE`].
/// The result line, and whether nothing was lost or duplicated.
async fn e2e_read(w: &Workload) -> Result<(String, bool), Error> {
    let t0 = Instant::now();
    let cluster = Cluster::connect(ClusterConfig::new(&w.bootstrap)).await?;
    let mut reader = Reader::new(cluster, reader_config(w).0);
    let partitions: Vec<i32> = (0..w.partitions).collect();
    reader.assign(&w.topic, &partitions);
    let mut rec = e2e::Recorder::new(w.records);
    let mut signalled = false;
    let mut last = Instant::now();
    let mut complete_at = None;
    loop {
        let records = reader.poll(Duration::from_millis(100)).await?;
        let now = e2e::now_ns();
        for r in &records {
            rec.record(r.partition, r.value.as_deref(), w.size, now)?;
        }
        if !records.is_empty() {
            last = Instant::now();
        }
        if !signalled && rec.ready_partitions() >= w.partitions as usize {
            e2e::signal_ready(&w.ready_file)?;
            signalled = true;
        }
        if rec.complete() {
            if complete_at.get_or_insert_with(Instant::now).elapsed() >= E2E_LINGER {
                break;
            }
        } else if last.elapsed() > E2E_IDLE {
            break;
        }
    }
    let ok = rec.complete() && rec.duplicates == 0;
    let line = rec.result_line("ours", w.settings.name(), t0.elapsed().as_secs_f64());
    Ok((line, ok))
}

fn main() {
    let w = Workload::from_args();
    if w.print_settings {
        if let Err(e) = print_settings(&w) {
            eprintln!("bench-ours: {e}");
            std::process::exit(1);
        }
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let result = match w.mode {
        Mode::E2eProduce => e2e_produce(&w, &rt).map(|line| (line, true)),
        Mode::E2eRead => rt.block_on(e2e_read(&w)),
        _ => rt.block_on(run(&w)).map(|(secs, commits)| {
            w.print_result("ours", secs, &commits);
            (String::new(), true)
        }),
    };
    match result {
        Ok((line, ok)) => {
            if !line.is_empty() {
                println!("{line}");
            }
            if !ok {
                eprintln!("bench-ours: records lost or duplicated");
                std::process::exit(1);
            }
        }
        Err(e) => {
            eprintln!("bench-ours: {e}");
            std::process::exit(1);
        }
    }
}
