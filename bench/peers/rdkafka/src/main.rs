//! librdkafka's side of `bench/compare.sh`: the workloads of
//! `bench/peers/shared/args.rs` through the `rdkafka` crate, one JSON result
//! line on stdout, exit 0 only when the run did all its work (1 on a failed
//! run, 2 on a bad command line). `--mode` selects one of three loops:
//!
//! - **produce** (the default): a `FutureProducer` and a FIFO of delivery
//!   futures, the oldest awaited once more than `--window` are outstanding
//!   (the loop of `bench/peers/ours`); with `--txn-ms`, after each send, a
//!   commit once the transaction is that old, its latency being the duration
//!   of the commit call (librdkafka's `commit_transaction` flushes and waits
//!   for every outstanding record). Success: every record acknowledged.
//! - **consume**: a `BaseConsumer` with every partition 0..`--partitions` of
//!   `--topic` assigned at `Offset::Beginning` (no group: the `group.id` is a
//!   dummy that librdkafka needs for `assign`, nothing is committed), polled
//!   record by record (`BaseConsumer::poll`) until `--records` records
//!   arrived, with the fetch settings of every client ([`FETCH`]) and
//!   librdkafka's defaults otherwise; the topic's metadata is fetched before
//!   the assignment. The clock runs from just before the consumer is
//!   created to the N-th record.
//! - **copy**: the classic librdkafka exactly-once loop (librdkafka's
//!   `examples/transactions.c`): a `BaseConsumer` in group `--group`
//!   subscribed to `--topic` (read_committed, no auto commit, from the
//!   earliest offset, [`FETCH`]) and a transactional `ThreadedProducer` (the
//!   produce mode's settings, `transactional.id` `--txn-id`); each input
//!   record is produced to the same partition of `--out` with its key and
//!   value. After each poll, once the open transaction is `--txn-ms` old
//!   (counted from its first record: `begin_transaction` is local) or holds
//!   the records that reach N: `send_offsets_to_transaction(position,
//!   group_metadata)` then `commit_transaction` (once the delivery reports
//!   of the records in flight were served: see [`commit`]), the two together
//!   being one commit latency, then `begin_transaction`. The output topic's
//!   metadata is fetched before the clock starts. A transaction open when
//!   partitions are revoked is aborted and not counted (its records are
//!   consumed again). The clock runs from the first input record to the
//!   commit that brings the input records of committed transactions to N.
//!
//! - **e2e-produce**: the fixed-rate producer of `bench/peers/shared/e2e.rs`
//!   on the main thread, a `FutureProducer` as in produce; the delivery
//!   futures are awaited in order by a task (at most `--window`
//!   outstanding); a full librdkafka queue (`QueueFull`) is retried after
//!   100 µs, the scheduled times unchanged. With `--txn-ms`: a commit once
//!   the transaction is that old, checked after each batch of due records
//!   (waiting first for the records in flight, as copy does: see
//!   [`commit`]).
//!   **e2e-read**: a `BaseConsumer` as in consume, read_committed, every
//!   record's latency taken as `poll` returns it.
//!
//! Settings (`--settings`): `equal`, the explicit settings every client of
//! the comparison gets; `defaults`, librdkafka's defaults with only what
//! the workload needs to exist. [`producer_config`] and [`consumer_config`]
//! are the whole of it; `--print-settings` prints them.
//!
//! consume and copy check every record they receive
//! ([`Workload::check_value`]) and fail once nothing arrived for a minute
//! ([`IDLE_LIMIT`]) or on any error the consumer reports.

#[path = "../../shared/args.rs"]
mod args;
#[path = "../../shared/e2e.rs"]
mod e2e;

use args::{Isolation, Mode, Settings, Workload};
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext, Rebalance};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::producer::{
    BaseRecord, DefaultProducerContext, DeliveryFuture, FutureProducer, FutureRecord, Producer,
    ThreadedProducer,
};
use rdkafka::{ClientConfig, ClientContext, Message, Offset, TopicPartitionList};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

type Error = Box<dyn std::error::Error>;

const TIMEOUT: Duration = Duration::from_secs(60);

/// consume and copy fail once no record arrived for this long.
const IDLE_LIMIT: Duration = Duration::from_secs(60);

/// The fetch settings every client uses in the consume and copy modes
/// (librdkafka checks no CRCs by default; the other clients do).
const FETCH: [(&str, &str); 5] = [
    ("fetch.wait.max.ms", "500"),
    ("fetch.min.bytes", "1"),
    ("fetch.max.bytes", "52428800"),
    ("max.partition.fetch.bytes", "1048576"),
    ("check.crcs", "true"),
];

/// The producer settings of the produce, copy and e2e-produce modes.
fn producer_config(w: &Workload) -> ClientConfig {
    let mut c = ClientConfig::new();
    c.set("bootstrap.servers", &w.bootstrap);
    match w.settings {
        Settings::Equal => {
            c.set("acks", "all")
                .set("enable.idempotence", "true")
                .set("linger.ms", "5")
                .set("batch.size", "16384")
                .set("compression.type", &w.compression)
                // Java's key hash, as ours and franz-go use (librdkafka's
                // default hashes keys with CRC32); null keys stay sticky
                // (sticky.partitioning.linger.ms).
                .set("partitioner", "murmur2_random")
                // The default (100,000 messages) must not be what limits
                // the window.
                .set(
                    "queue.buffering.max.messages",
                    (2 * w.window).max(100_000).to_string(),
                );
        }
        Settings::Defaults => {
            // The idempotent workloads are defined by idempotence (off by
            // default in librdkafka; it implies acks=all, the default).
            if w.txn_every.is_none() {
                c.set("enable.idempotence", "true");
            }
            if w.compression != "none" {
                c.set("compression.type", &w.compression);
            }
        }
    }
    if w.txn_every.is_some() {
        c.set("transactional.id", &w.txn_id);
    }
    c
}

/// Sends one record; when librdkafka's queue is full
/// (`queue.buffering.max.messages`, reached only with its default in
/// `--settings defaults`), awaits the oldest outstanding record first.
async fn send(
    p: &FutureProducer,
    w: &Workload,
    key: Option<&str>,
    value: &[u8],
    pending: &mut VecDeque<DeliveryFuture>,
) -> Result<DeliveryFuture, Error> {
    let mut r = FutureRecord::<str, [u8]>::to(&w.topic).payload(value);
    if let Some(k) = key {
        r = r.key(k);
    }
    loop {
        match p.send_result(r) {
            Ok(f) => return Ok(f),
            Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), back)) => {
                r = back;
                match pending.pop_front() {
                    Some(f) => acked(f).await?,
                    None => tokio::time::sleep(Duration::from_millis(1)).await,
                }
            }
            Err((e, _)) => return Err(format!("send refused: {e}").into()),
        }
    }
}

async fn acked(f: DeliveryFuture) -> Result<(), Error> {
    match f.await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err((e, _))) => Err(format!("record failed: {e}").into()),
        Err(_) => Err("delivery future cancelled".into()),
    }
}

/// Produce mode.
async fn produce(w: &Workload) -> Result<(f64, Vec<Duration>), Error> {
    let p: FutureProducer = producer_config(w).create()?;
    let value = w.value();
    // Metadata and the producer id before the clock starts.
    if w.txn_every.is_some() {
        p.init_transactions(TIMEOUT)?;
        p.begin_transaction()?;
    }
    let mut pending: VecDeque<DeliveryFuture> = VecDeque::with_capacity(w.window + 1);
    acked(send(&p, w, None, b"w", &mut pending).await?).await?;
    if w.txn_every.is_some() {
        p.commit_transaction(TIMEOUT)?;
    }
    let mut commits = Vec::new();
    let t0 = Instant::now();
    if w.txn_every.is_some() {
        p.begin_transaction()?;
    }
    let mut txn_start = Instant::now();
    for i in 0..w.records {
        let key = w.keyed.then(|| i.to_string());
        let f = send(&p, w, key.as_deref(), &value, &mut pending).await?;
        pending.push_back(f);
        if pending.len() > w.window {
            acked(pending.pop_front().expect("non-empty")).await?;
        }
        if let Some(every) = w.txn_every
            && txn_start.elapsed() >= every
        {
            let c = Instant::now();
            p.commit_transaction(TIMEOUT)?;
            commits.push(c.elapsed());
            for f in pending.drain(..) {
                acked(f).await?;
            }
            p.begin_transaction()?;
            txn_start = Instant::now();
        }
    }
    if w.txn_every.is_some() {
        let c = Instant::now();
        p.commit_transaction(TIMEOUT)?;
        commits.push(c.elapsed());
    }
    for f in pending {
        acked(f).await?;
    }
    let secs = t0.elapsed().as_secs_f64();
    p.flush(TIMEOUT)?;
    Ok((secs, commits))
}

/// The consumer settings of the consume, copy and e2e-read modes. `group`
/// is the copy's group, or for the others a dummy that librdkafka needs
/// for `assign` (nothing is committed to it in `equal`; in `defaults`
/// librdkafka's auto commit stays on, as shipped).
fn consumer_config(w: &Workload, group: &str, isolation: Isolation) -> ClientConfig {
    let level = match isolation {
        Isolation::Committed => "read_committed",
        Isolation::Uncommitted => "read_uncommitted",
    };
    let mut c = ClientConfig::new();
    c.set("bootstrap.servers", &w.bootstrap)
        .set("group.id", group);
    match w.settings {
        Settings::Equal => {
            c.set("enable.auto.commit", "false")
                .set("isolation.level", level);
            for (k, v) in FETCH {
                c.set(k, v);
            }
            if w.mode == Mode::Consume {
                c.set("enable.auto.offset.store", "false");
            }
        }
        Settings::Defaults => {
            // copy, e2e-read and consume-committed are defined by
            // read_committed (librdkafka's default, given explicitly);
            // copy by its offsets going into the transaction only.
            if isolation == Isolation::Committed {
                c.set("isolation.level", level);
            }
            if w.mode == Mode::Copy {
                c.set("enable.auto.commit", "false");
            }
        }
    }
    if w.mode == Mode::Copy {
        c.set("auto.offset.reset", "earliest");
    }
    c
}

/// What the client is given for the workload, one line per role.
fn print_settings(w: &Workload) {
    let show = |c: &ClientConfig| {
        let mut kv: Vec<String> = c
            .config_map()
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        kv.sort();
        kv.join(", ")
    };
    match w.mode {
        Mode::Produce | Mode::E2eProduce => println!("producer: {}", show(&producer_config(w))),
        Mode::Consume => println!(
            "consumer: {}",
            show(&consumer_config(w, "bench-rdkafka-unused", w.isolation))
        ),
        Mode::E2eRead => println!(
            "consumer: {}",
            show(&consumer_config(
                w,
                "bench-rdkafka-unused",
                Isolation::Committed
            ))
        ),
        Mode::Copy => {
            println!(
                "consumer: {}",
                show(&consumer_config(w, &w.group, Isolation::Committed))
            );
            println!("producer: {}", show(&producer_config(w)));
        }
    }
    if w.settings == Settings::Defaults {
        println!(
            "  not set, librdkafka 2.10.0's defaults: linger.ms=5, batch.size=1000000, \
             batch.num.messages=10000, compression.type=none, acks=all, \
             enable.idempotence=false, queue.buffering.max.messages=100000, \
             partitioner=consistent_random (sticky.partitioning.linger.ms=10), \
             fetch.wait.max.ms=500, fetch.min.bytes=1, fetch.max.bytes=52428800, \
             max.partition.fetch.bytes=1048576, check.crcs=false, isolation.level=read_committed, \
             enable.auto.commit=true, group.protocol=classic"
        );
    }
}

/// Consume mode: the time from just before the consumer's creation to the
/// N-th record.
fn consume(w: &Workload) -> Result<f64, Error> {
    let config = consumer_config(w, "bench-rdkafka-unused", w.isolation);
    let mut assignment = TopicPartitionList::new();
    for p in 0..w.partitions {
        assignment.add_partition_offset(&w.topic, p, Offset::Beginning)?;
    }

    let t0 = Instant::now();
    let consumer: BaseConsumer = config.create()?;
    // The topic's metadata first (inside the clock): a partition assigned
    // before librdkafka knows its leader waits for the retry of its offset
    // query, 500 ms later.
    consumer.fetch_metadata(Some(&w.topic), TIMEOUT)?;
    consumer.assign(&assignment)?;
    let mut received = 0u64;
    let mut last = Instant::now();
    while received < w.records {
        match consumer.poll(Duration::from_secs(1)) {
            None if last.elapsed() > IDLE_LIMIT => {
                return Err(format!("{received} of {} records, then nothing", w.records).into());
            }
            None => {}
            Some(Err(e)) => return Err(format!("consuming: {e}").into()),
            Some(Ok(m)) => {
                w.check_value(m.payload()).map_err(|e| {
                    format!("partition {} offset {}: {e}", m.partition(), m.offset())
                })?;
                received += 1;
                last = Instant::now();
            }
        }
    }
    Ok(last.duration_since(t0).as_secs_f64())
}

/// The copy consumer's context: notes a revocation, which ends the open
/// transaction (its input records will be consumed again).
#[derive(Default)]
struct CopyContext {
    revoked: AtomicBool,
}

impl ClientContext for CopyContext {}

impl ConsumerContext for CopyContext {
    fn pre_rebalance(&self, _: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        if let Rebalance::Revoke(partitions) = rebalance
            && partitions.count() > 0
        {
            self.revoked.store(true, Ordering::SeqCst);
        }
    }
}

/// Sends the consumer's positions to the transaction and commits it.
/// Before the commit, waits (100 µs sleeps) until the producer's thread has
/// served the delivery reports of every record in flight: the crate's
/// `commit_transaction` first flushes with `BaseProducer::poll` in blocking
/// steps of 100 ms, which would add up to 100 ms to each commit that
/// librdkafka itself (its flush waits on the message count) does not take.
fn commit(
    consumer: &BaseConsumer<CopyContext>,
    producer: &ThreadedProducer<DefaultProducerContext>,
) -> Result<(), Error> {
    let positions = consumer.position()?;
    let group = consumer
        .group_metadata()
        .ok_or("the consumer has no group metadata")?;
    producer.send_offsets_to_transaction(&positions, &group, TIMEOUT)?;
    let deadline = Instant::now() + TIMEOUT;
    while producer.in_flight_count() > 0 {
        if Instant::now() > deadline {
            return Err(format!("records unacknowledged after {TIMEOUT:?}").into());
        }
        std::thread::sleep(Duration::from_micros(100));
    }
    // Fails if a record of the transaction failed (librdkafka puts the
    // transaction in an abortable error state).
    producer.commit_transaction(TIMEOUT)?;
    Ok(())
}

/// Produces one record, waiting for room in librdkafka's queue if needed.
fn forward(
    producer: &ThreadedProducer<DefaultProducerContext>,
    mut r: BaseRecord<'_, [u8], [u8]>,
) -> Result<(), Error> {
    loop {
        match producer.send(r) {
            Ok(()) => return Ok(()),
            Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), back)) => {
                r = back;
                std::thread::sleep(Duration::from_millis(1));
            }
            Err((e, _)) => return Err(format!("send refused: {e}").into()),
        }
    }
}

/// Copy mode: the time from the first input record to the commit that
/// covers N, and every commit's latency.
fn copy(w: &Workload) -> Result<(f64, Vec<Duration>), Error> {
    let every = w.txn_every.expect("copy mode has --txn-ms");
    // Its thread serves the delivery reports as they come.
    let producer: ThreadedProducer<DefaultProducerContext> = producer_config(w).create()?;
    producer.init_transactions(TIMEOUT)?;
    // The output topic's metadata before the clock starts (as the produce
    // mode's untimed first record): librdkafka looks up a topic it meets
    // in a send only at its next topic scan, up to a second later.
    producer.client().fetch_metadata(Some(&w.out), TIMEOUT)?;
    let config = consumer_config(w, &w.group, Isolation::Committed);
    let consumer: BaseConsumer<CopyContext> = config.create_with_context(CopyContext::default())?;
    consumer.subscribe(&[&w.topic])?;
    producer.begin_transaction()?;

    let mut commits = Vec::new();
    let mut t0 = None; // the first input record's arrival
    let mut last = Instant::now();
    let mut committed = 0u64; // input records in committed transactions
    let mut pending = 0u64; // input records in the open transaction
    let mut txn_start: Option<Instant> = None; // the open transaction's first record
    let mut ready = 0; // copy --e2e: `ready` records copied
    let mut signalled = !w.e2e;
    loop {
        if !signalled && ready >= w.partitions {
            e2e::signal_ready(&w.ready_file)?;
            signalled = true;
        }
        let wait = match txn_start {
            Some(s) => every.saturating_sub(s.elapsed()),
            None => Duration::from_secs(1),
        };
        let polled = consumer.poll(wait);
        if consumer.context().revoked.swap(false, Ordering::SeqCst) {
            producer.abort_transaction(TIMEOUT)?;
            producer.begin_transaction()?;
            if pending > 0 {
                eprintln!(
                    "bench-rdkafka: partitions revoked: a transaction of {pending} records \
                     aborted; they are copied again"
                );
            }
            (pending, txn_start) = (0, None);
        }
        match polled {
            None if last.elapsed() > IDLE_LIMIT => {
                return Err(
                    format!("{committed} of {} records copied, then nothing", w.records).into(),
                );
            }
            None => {}
            Some(Err(e)) => return Err(format!("consuming: {e}").into()),
            Some(Ok(m)) => {
                w.check_value(m.payload()).map_err(|e| {
                    format!("partition {} offset {}: {e}", m.partition(), m.offset())
                })?;
                let mut r = BaseRecord::to(&w.out).partition(m.partition());
                if let Some(v) = m.payload() {
                    r = r.payload(v);
                }
                if let Some(k) = m.key() {
                    r = r.key(k);
                }
                forward(&producer, r)?;
                last = Instant::now();
                if w.e2e && m.payload() == Some(b"ready".as_slice()) {
                    ready += 1;
                } else {
                    t0.get_or_insert(last);
                }
                txn_start.get_or_insert(last);
                pending += 1;
            }
        }
        let due = txn_start.is_some_and(|s| s.elapsed() >= every);
        if pending > 0 && (due || committed + pending >= w.records) {
            let c = Instant::now();
            commit(&consumer, &producer)?;
            let end = Instant::now();
            commits.push(end - c);
            committed += pending;
            (pending, txn_start) = (0, None);
            if committed >= w.records {
                let secs = end.duration_since(t0.expect("a record arrived"));
                return Ok((secs.as_secs_f64(), commits));
            }
            producer.begin_transaction()?;
        }
    }
}

/// How long an e2e reader waits for the next record before it reports the
/// missing ones as lost.
const E2E_IDLE: Duration = Duration::from_secs(30);

/// How long an e2e reader keeps reading once every record arrived.
const E2E_LINGER: Duration = Duration::from_millis(500);

/// Commits the transaction once every record in flight was acknowledged
/// (100 µs sleeps), as [`commit`] does and for the same reason: the crate's
/// `commit_transaction` flushes in blocking steps of 100 ms first.
fn drain_then_commit(p: &FutureProducer) -> Result<(), Error> {
    let deadline = Instant::now() + TIMEOUT;
    while p.in_flight_count() > 0 {
        if Instant::now() > deadline {
            return Err(format!("records unacknowledged after {TIMEOUT:?}").into());
        }
        std::thread::sleep(Duration::from_micros(100));
    }
    p.commit_transaction(TIMEOUT)?;
    Ok(())
}

/// e2e-produce: warm up (metadata, producer id), then the fixed-rate loop
/// on this thread, the delivery futures awaited by a task of `rt`.
fn e2e_produce(w: &Workload, rt: &tokio::runtime::Runtime) -> Result<String, Error> {
    let p: FutureProducer = producer_config(w).create()?;
    let txn = w.txn_every;
    if txn.is_some() {
        p.init_transactions(TIMEOUT)?;
        p.begin_transaction()?;
    }
    rt.block_on(async {
        let mut none = VecDeque::new();
        acked(send(&p, w, None, b"w", &mut none).await?).await
    })?;
    if txn.is_some() {
        p.commit_transaction(TIMEOUT)?;
    }
    let (tx, mut rx) = tokio::sync::mpsc::channel::<DeliveryFuture>(w.window);
    let acker = rt.spawn(async move {
        while let Some(f) = rx.recv().await {
            acked(f).await.map_err(|e| e.to_string())?;
        }
        Ok::<(), String>(())
    });
    let mut commits = Vec::new();
    let t0 = Instant::now();
    let mut pacer = e2e::Pacer::start(w.rate, w.records);
    if txn.is_some() {
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
            let mut r = FutureRecord::<str, [u8]>::to(&w.topic).payload(&value);
            let f = loop {
                match p.send_result(r) {
                    Ok(f) => break f,
                    Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), back)) => {
                        r = back;
                        std::thread::sleep(Duration::from_micros(100));
                    }
                    Err((e, _)) => return Err(format!("send refused: {e}").into()),
                }
            };
            if tx.blocking_send(f).is_err() {
                break 'paced; // the acker stopped: a record failed
            }
        }
        if let Some(every) = txn
            && txn_start.elapsed() >= every
        {
            let c = Instant::now();
            drain_then_commit(&p)?;
            commits.push(c.elapsed());
            p.begin_transaction()?;
            txn_start = Instant::now();
        }
    }
    if txn.is_some() {
        let c = Instant::now();
        drain_then_commit(&p)?;
        commits.push(c.elapsed());
    }
    drop(tx);
    rt.block_on(acker)??;
    let secs = t0.elapsed().as_secs_f64();
    p.flush(TIMEOUT)?;
    Ok(e2e::producer_line(
        "rdkafka",
        w.settings.name(),
        w.records,
        secs,
        pacer.lag_max_ns,
        &commits,
    ))
}

/// e2e-read: every partition from its start, read_committed, until every
/// record arrived (then [`E2E_LINGER`] more) or none came for [`E2E_IDLE`].
/// The result line, and whether nothing was lost or duplicated.
fn e2e_read(w: &Workload) -> Result<(String, bool), Error> {
    let config = consumer_config(w, "bench-rdkafka-unused", Isolation::Committed);
    let mut assignment = TopicPartitionList::new();
    for p in 0..w.partitions {
        assignment.add_partition_offset(&w.topic, p, Offset::Beginning)?;
    }
    let t0 = Instant::now();
    let consumer: BaseConsumer = config.create()?;
    consumer.fetch_metadata(Some(&w.topic), TIMEOUT)?;
    consumer.assign(&assignment)?;
    let mut rec = e2e::Recorder::new(w.records);
    let mut signalled = false;
    let mut last = Instant::now();
    let mut complete_at: Option<Instant> = None;
    loop {
        match consumer.poll(Duration::from_millis(100)) {
            None => {}
            Some(Err(e)) => return Err(format!("consuming: {e}").into()),
            Some(Ok(m)) => {
                rec.record(m.partition(), m.payload(), w.size, e2e::now_ns())?;
                last = Instant::now();
            }
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
    let line = rec.result_line("rdkafka", w.settings.name(), t0.elapsed().as_secs_f64());
    Ok((line, ok))
}

fn main() {
    let w = Workload::from_args();
    if w.print_settings {
        print_settings(&w);
        return;
    }
    let rt = || {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a tokio runtime")
    };
    let printed = |r: Result<(f64, Vec<Duration>), Error>| {
        r.map(|(secs, commits)| {
            w.print_result("rdkafka", secs, &commits);
            (String::new(), true)
        })
    };
    let result = match w.mode {
        Mode::Produce => printed(rt().block_on(produce(&w))),
        Mode::Consume => printed(consume(&w).map(|secs| (secs, Vec::new()))),
        Mode::Copy => printed(copy(&w)),
        Mode::E2eProduce => e2e_produce(&w, &rt()).map(|line| (line, true)),
        Mode::E2eRead => e2e_read(&w),
    };
    match result {
        Ok((line, ok)) => {
            if !line.is_empty() {
                println!("{line}");
            }
            if !ok {
                eprintln!("bench-rdkafka: records lost or duplicated");
                std::process::exit(1);
            }
        }
        Err(e) => {
            eprintln!("bench-rdkafka: {e}");
            std::process::exit(1);
        }
    }
}
