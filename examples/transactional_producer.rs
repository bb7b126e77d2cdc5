//! The transactional producer: commit a transaction, abort one, commit
//! another, then read the topic back with a read_committed reader and check
//! that exactly the committed records are visible.
//!
//! ```text
//! cargo run -p kafka-eos-examples --example transactional_producer -- --bootstrap 127.0.0.1:9092
//! ```
//!
//! The bootstrap defaults to `$KAFKA_EOS_BOOTSTRAP`, then `127.0.0.1:9092`.
//! It writes to the topic `example-transactions` (3 partitions, created when
//! missing) with the transactional id `example-transactional-producer`
//! (`--name-suffix S` appends `-S` to both), and exits with status 1 when anything fails or the check does not hold.

use std::process::ExitCode;
use std::time::Duration;

use kafka_eos::client::{Cluster, ClusterConfig};
use kafka_eos::producer::{ProducerConfig, ProducerRecord, TransactionalProducer};
use kafka_eos_examples::support::{self, BoxError};

const TOPIC: &str = "example-transactions";
const RECORDS_PER_TRANSACTION: usize = 6;

#[tokio::main]
async fn main() -> ExitCode {
    support::exit_code(run().await)
}

async fn run() -> Result<(), BoxError> {
    let bootstrap = support::bootstrap();
    let topic = support::name(TOPIC);
    let cluster = Cluster::connect(ClusterConfig::new(&bootstrap)).await?;
    let partitions = support::ensure_topic(&cluster, &topic, 3).await?;
    // Where this run's records will start (earlier runs wrote before).
    let start = support::end_offsets(&cluster, &topic, &partitions).await?;

    // A transactional id makes the producer idempotent and transactional.
    // init_transactions fences any older producer with the same id and
    // finishes whatever transaction it left open.
    let transactional_id = support::name("example-transactional-producer");
    let config = ProducerConfig::from_properties([
        ("bootstrap.servers", bootstrap.as_str()),
        ("transactional.id", transactional_id.as_str()),
    ])?;
    let producer = TransactionalProducer::connect(config).await?;
    producer.init_transactions().await?;
    println!(
        "initialised: {:?}, transaction version {:?}",
        producer.producer_id_and_epoch(),
        producer.transaction_version()
    );

    let mut committed = Vec::new();
    for (txn, commit) in [("first", true), ("second", false), ("third", true)] {
        producer.begin_transaction()?;
        let values: Vec<String> = (0..RECORDS_PER_TRANSACTION)
            .map(|i| format!("{txn}-{i}"))
            .collect();
        // `send` returns at once; each future resolves when the broker has
        // the record (which read_committed readers see only after a commit).
        let pending: Vec<_> = values
            .iter()
            .map(|v| {
                producer.send(
                    ProducerRecord::new(topic.as_str())
                        .key(v.clone())
                        .value(v.clone()),
                )
            })
            .collect();
        if commit {
            match producer.commit_transaction().await {
                Ok(()) => {}
                // An abortable error (e.g. a record failed): abort, then retry
                // the transaction's work. Fenced or fatal errors: give up.
                Err(e) if e.is_abortable() => {
                    producer.abort_transaction().await?;
                    return Err(format!("the {txn} transaction was aborted: {e}").into());
                }
                Err(e) => return Err(e.into()),
            }
            committed.extend(values);
        } else {
            // Flush first so that the records are really in the log: the
            // abort marker is what hides them from read_committed readers.
            producer.flush().await;
            producer.abort_transaction().await?;
        }
        for p in pending {
            let meta = p.await?;
            println!(
                "  {txn} transaction: {}-{} offset {:?}",
                meta.topic, meta.partition, meta.offset
            );
        }
        let outcome = if commit { "committed" } else { "aborted" };
        println!("{txn} transaction: {RECORDS_PER_TRANSACTION} records {outcome}");
    }
    producer.close(Duration::from_secs(10)).await?;

    // Check: read_committed sees exactly the committed records.
    let records = support::read_committed_from(&cluster, &topic, &start).await?;
    let mut seen: Vec<String> = records.iter().map(support::value).collect();
    seen.sort();
    committed.sort();
    let aborted_visible = seen.iter().filter(|v| v.starts_with("second-")).count();
    println!(
        "read_committed sees {} records of this run: {} committed expected, {aborted_visible} aborted visible",
        seen.len(),
        committed.len()
    );
    support::check(aborted_visible == 0, "no aborted record is visible")?;
    support::check(
        seen == committed,
        format!("read_committed sees exactly the committed records (saw {seen:?})"),
    )?;
    println!("ok: committed records visible once each, aborted records invisible");
    Ok(())
}
