//! The idempotent producer: send keyed records without waiting for each
//! one, await the acknowledgements, then read the topic back and check that
//! every record is there exactly once and each key's records kept their
//! order.
//!
//! ```text
//! cargo run -p kafka-eos-examples --example idempotent_producer -- --bootstrap 127.0.0.1:9092 --records 1000
//! ```
//!
//! The bootstrap defaults to `$KAFKA_EOS_BOOTSTRAP`, then `127.0.0.1:9092`.
//! It writes to the topic `example-idempotent` (3 partitions, created when
//! missing; `--name-suffix S` makes it `example-idempotent-S`) and exits with status 1 when anything fails or the check does
//! not hold.
//!
//! Idempotence is on by default (`acks=all`, retries, at most 5 requests in
//! flight per connection): the broker drops a batch the producer retried
//! after a lost acknowledgement, so retries create no duplicates and no
//! reordering.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Duration;

use kafka_eos::client::{Cluster, ClusterConfig};
use kafka_eos::producer::{Producer, ProducerConfig, ProducerRecord};
use kafka_eos_examples::support::{self, BoxError};

const TOPIC: &str = "example-idempotent";
const KEYS: usize = 10;

#[tokio::main]
async fn main() -> ExitCode {
    support::exit_code(run().await)
}

async fn run() -> Result<(), BoxError> {
    let bootstrap = support::bootstrap();
    let records: usize = support::number_arg("records", 1000)?;
    let topic = support::name(TOPIC);
    let cluster = Cluster::connect(ClusterConfig::new(&bootstrap)).await?;
    let partitions = support::ensure_topic(&cluster, &topic, 3).await?;
    let start = support::end_offsets(&cluster, &topic, &partitions).await?;

    let config = ProducerConfig::from_properties([
        ("bootstrap.servers", bootstrap.as_str()),
        ("enable.idempotence", "true"),
        ("linger.ms", "5"),
    ])?;
    let producer = Producer::connect(config).await?;

    // Records with the same key go to the same partition, in send order.
    let pending: Vec<_> = (0..records)
        .map(|i| {
            let key = format!("key-{}", i % KEYS);
            producer.send(
                ProducerRecord::new(topic.as_str())
                    .key(key)
                    .value(i.to_string()),
            )
        })
        .collect();
    let mut per_partition: BTreeMap<i32, usize> = BTreeMap::new();
    for p in pending {
        let meta = p.await?;
        *per_partition.entry(meta.partition).or_default() += 1;
    }
    let m = producer.metrics();
    println!(
        "sent {records} records in {} batches ({} requests, {} retries); per partition: {per_partition:?}",
        m.batches_sent, m.requests, m.retries
    );
    producer.close(Duration::from_secs(10)).await?;

    // Check: each number once, and per key in increasing order.
    let read = support::read_committed_from(&cluster, &topic, &start).await?;
    let mut by_key: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for r in &read {
        let key = String::from_utf8_lossy(r.key.as_deref().unwrap_or_default()).into_owned();
        by_key
            .entry(key)
            .or_default()
            .push(support::value(r).parse()?);
    }
    let mut all: Vec<usize> = by_key.values().flatten().copied().collect();
    all.sort_unstable();
    println!(
        "read back {} records under {} keys",
        read.len(),
        by_key.len()
    );
    support::check(
        all == (0..records).collect::<Vec<_>>(),
        format!("each of the {records} records is in the topic exactly once"),
    )?;
    for (key, values) in &by_key {
        support::check(
            values.is_sorted(),
            format!("the records of {key} kept their send order"),
        )?;
    }
    println!("ok: {records} records, no duplicate, no gap, per-key order kept");
    Ok(())
}
