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
//! consume and copy check every record they receive
//! ([`Workload::check_value`]) and fail once nothing arrived for a minute
//! ([`IDLE_LIMIT`]) or on any error the consumer reports.

#[path = "../../shared/args.rs"]
mod args;

use args::{Isolation, Mode, Workload};
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

/// The producer settings of the produce and copy modes.
fn producer_config(w: &Workload) -> ClientConfig {
    let mut c = ClientConfig::new();
    c.set("bootstrap.servers", &w.bootstrap)
        .set("acks", "all")
        .set("enable.idempotence", "true")
        .set("linger.ms", "5")
        .set("batch.size", "16384")
        .set("compression.type", &w.compression)
        // Java's key hash, as ours and franz-go use (librdkafka's default
        // hashes keys with CRC32); null keys stay sticky
        // (sticky.partitioning.linger.ms).
        .set("partitioner", "murmur2_random")
        // The default (100,000 messages) must not be what limits the window.
        .set(
            "queue.buffering.max.messages",
            (2 * w.window).max(100_000).to_string(),
        );
    if w.txn_every.is_some() {
        c.set("transactional.id", &w.txn_id);
    }
    c
}

fn send(
    p: &FutureProducer,
    w: &Workload,
    key: Option<&str>,
    value: &[u8],
) -> Result<DeliveryFuture, Error> {
    let mut r = FutureRecord::<str, [u8]>::to(&w.topic).payload(value);
    if let Some(k) = key {
        r = r.key(k);
    }
    p.send_result(r)
        .map_err(|(e, _)| format!("send refused: {e}").into())
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
    acked(send(&p, w, None, b"w")?).await?;
    if w.txn_every.is_some() {
        p.commit_transaction(TIMEOUT)?;
    }
    let mut pending: VecDeque<DeliveryFuture> = VecDeque::with_capacity(w.window + 1);
    let mut commits = Vec::new();
    let t0 = Instant::now();
    if w.txn_every.is_some() {
        p.begin_transaction()?;
    }
    let mut txn_start = Instant::now();
    for i in 0..w.records {
        let key = w.keyed.then(|| i.to_string());
        pending.push_back(send(&p, w, key.as_deref(), &value)?);
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

/// The consumer settings of the consume and copy modes.
fn consumer_config(w: &Workload, group: &str, isolation: Isolation) -> ClientConfig {
    let mut c = ClientConfig::new();
    c.set("bootstrap.servers", &w.bootstrap)
        .set("group.id", group)
        .set("enable.auto.commit", "false")
        .set(
            "isolation.level",
            match isolation {
                Isolation::Committed => "read_committed",
                Isolation::Uncommitted => "read_uncommitted",
            },
        );
    for (k, v) in FETCH {
        c.set(k, v);
    }
    c
}

/// Consume mode: the time from just before the consumer's creation to the
/// N-th record.
fn consume(w: &Workload) -> Result<f64, Error> {
    let mut config = consumer_config(w, "bench-rdkafka-unused", w.isolation);
    config.set("enable.auto.offset.store", "false");
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
    let mut config = consumer_config(w, &w.group, Isolation::Committed);
    config.set("auto.offset.reset", "earliest");
    let consumer: BaseConsumer<CopyContext> = config.create_with_context(CopyContext::default())?;
    consumer.subscribe(&[&w.topic])?;
    producer.begin_transaction()?;

    let mut commits = Vec::new();
    let mut t0 = None; // the first input record's arrival
    let mut last = Instant::now();
    let mut committed = 0u64; // input records in committed transactions
    let mut pending = 0u64; // input records in the open transaction
    let mut txn_start: Option<Instant> = None; // the open transaction's first record
    loop {
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
                t0.get_or_insert(last);
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

fn main() {
    let w = Workload::from_args();
    let result = match w.mode {
        Mode::Produce => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a tokio runtime")
            .block_on(produce(&w)),
        Mode::Consume => consume(&w).map(|secs| (secs, Vec::new())),
        Mode::Copy => copy(&w),
    };
    match result {
        Ok((secs, commits)) => w.print_result("rdkafka", secs, &commits),
        Err(e) => {
            eprintln!("bench-rdkafka: {e}");
            std::process::exit(1);
        }
    }
}
