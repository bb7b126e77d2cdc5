//! Consume-transform-produce on a consumer group, with a zombie fenced by
//! the group coordinator (KIP-447).
//!
//! Member `a` joins the group, reads the input, writes its output in a
//! transaction — and then stalls past `max.poll.interval.ms` before
//! committing (a long GC pause, a stuck disk). The group moves the
//! partitions to member `b`. When `a` wakes up and sends its offsets with its
//! (now stale) group metadata, the coordinator refuses them, so `a`'s
//! transaction cannot commit and is aborted: its output never becomes
//! visible. Member `b` reads the same input from the committed offsets and
//! commits output and offsets together. At the end a read_committed reader
//! sees each transformed input record exactly once.
//!
//! ```text
//! cargo run -p kafka-eos-examples --example group_consume_transform_produce -- --bootstrap 127.0.0.1:9092 --records 20
//! ```
//!
//! The bootstrap defaults to `$KAFKA_EOS_BOOTSTRAP`, then `127.0.0.1:9092`.
//! Each run uses its own topics and group (named after the run's start
//! time), so runs never see each other's data. Exits with status 1 when
//! anything fails or the check does not hold.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use kafka_eos::client::OffsetAndMetadata;
use kafka_eos::client::{Cluster, ClusterConfig};
use kafka_eos::consumer::ConsumerRecord;
use kafka_eos::consumer::{ConsumerEvent, GroupConsumer, GroupConsumerConfig};
use kafka_eos::producer::{
    Producer, ProducerConfig, ProducerRecord, TopicPartition, TransactionalProducer,
};
use kafka_eos_examples::support::{self, BoxError};

/// The transformation: one output value per input value.
fn transform(input: &str) -> String {
    input.to_uppercase()
}

#[tokio::main]
async fn main() -> ExitCode {
    support::exit_code(run().await)
}

struct Names {
    input: String,
    output: String,
    group: String,
}

async fn run() -> Result<(), BoxError> {
    let bootstrap = support::bootstrap();
    let records: usize = support::number_arg("records", 20)?;
    let run_id = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_millis();
    let names = Names {
        input: format!("example-gctp-input-{run_id}"),
        output: format!("example-gctp-output-{run_id}"),
        group: format!("example-gctp-{run_id}"),
    };
    let cluster = Cluster::connect(ClusterConfig::new(&bootstrap)).await?;
    let partitions = support::ensure_topic(&cluster, &names.input, 2).await?;
    support::ensure_topic(&cluster, &names.output, 2).await?;
    let output_start: BTreeMap<i32, i64> = partitions.iter().map(|p| (*p, 0)).collect();
    let inputs = seed_input(&bootstrap, &names.input, records).await?;

    // Member a: reads everything, opens a transaction, then stalls.
    let mut a = member(&bootstrap, &names.group, &names.input, "3000").await?;
    let a_producer = producer(&bootstrap, &format!("{}-a", names.group)).await?;
    let read = read_n(&mut a, records, "member a").await?;
    a_producer.begin_transaction()?;
    for r in &read {
        drop(a_producer.send(output_record(&names.output, r)));
    }
    let a_offsets = a.transaction_offsets();
    let a_group = a.group_metadata();
    println!(
        "member a read {} records at epoch {}; now it stalls (no poll for over 3 s)",
        read.len(),
        a_group.generation_id
    );

    // Member b joins; a misses max.poll.interval.ms and leaves; b gets both
    // partitions.
    let mut b = member(&bootstrap, &names.group, &names.input, "300000").await?;
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut owned = 0;
    while owned < partitions.len() {
        support::check(Instant::now() < deadline, "member b got every partition")?;
        if let ConsumerEvent::Assigned(parts) = b.poll(Duration::from_millis(200)).await? {
            owned += parts.len();
        }
    }
    println!("member b owns {owned} partitions");

    // The zombie wakes up: its offsets are refused, its transaction aborted.
    let fenced = a_producer
        .send_offsets_and_metadata_to_transaction(a_offsets, &a_group)
        .await;
    support::check(fenced.is_err(), "the zombie's offsets are refused")?;
    println!("member a was fenced: {}", fenced.unwrap_err());
    let _ = a_producer.abort_transaction().await;
    a.close(Duration::from_secs(5)).await;
    let _ = a_producer.close(Duration::from_secs(5)).await;

    // Member b does the work, five input records per transaction.
    let b_producer = producer(&bootstrap, &format!("{}-b", names.group)).await?;
    let read = read_n(&mut b, records, "member b").await?;
    for chunk in read.chunks(5) {
        b_producer.begin_transaction()?;
        for r in chunk {
            drop(b_producer.send(output_record(&names.output, r)));
        }
        b_producer
            .send_offsets_and_metadata_to_transaction(offsets_after(chunk), &b.group_metadata())
            .await?;
        b_producer.commit_transaction().await?;
    }
    b.close(Duration::from_secs(5)).await;
    b_producer.close(Duration::from_secs(5)).await?;

    // Each input exactly once in the output, transformed.
    let output = support::read_committed_from(&cluster, &names.output, &output_start).await?;
    let mut got: Vec<String> = output.iter().map(support::value).collect();
    let mut want: Vec<String> = inputs.iter().map(|v| transform(v)).collect();
    got.sort();
    want.sort();
    support::check(
        got == want,
        format!(
            "the output holds each transformed input once ({} records)",
            got.len()
        ),
    )?;
    println!("ok: {} output records, each input exactly once", got.len());
    Ok(())
}

/// The offsets to commit once `records` are processed: per partition, the
/// offset after its last record, with that record's leader epoch.
fn offsets_after(records: &[ConsumerRecord]) -> Vec<(TopicPartition, OffsetAndMetadata)> {
    let mut next: BTreeMap<TopicPartition, OffsetAndMetadata> = BTreeMap::new();
    for r in records {
        let tp = TopicPartition::new(r.topic.clone(), r.partition);
        let o = next.entry(tp).or_insert(OffsetAndMetadata::new(0));
        if r.offset + 1 > o.offset {
            o.offset = r.offset + 1;
            o.leader_epoch = r.leader_epoch;
        }
    }
    next.into_iter().collect()
}

fn output_record(topic: &str, r: &ConsumerRecord) -> ProducerRecord {
    ProducerRecord::new(topic).value(transform(&support::value(r)))
}

async fn member(
    bootstrap: &str,
    group: &str,
    input: &str,
    max_poll_interval_ms: &str,
) -> Result<GroupConsumer, BoxError> {
    let config = GroupConsumerConfig::from_properties([
        ("bootstrap.servers", bootstrap),
        ("group.id", group),
        ("auto.offset.reset", "earliest"),
        ("max.poll.interval.ms", max_poll_interval_ms),
    ])?;
    Ok(GroupConsumer::subscribe(config, [input]).await?)
}

async fn producer(bootstrap: &str, id: &str) -> Result<TransactionalProducer, BoxError> {
    let p = TransactionalProducer::connect(ProducerConfig::from_properties([
        ("bootstrap.servers", bootstrap),
        ("transactional.id", id),
    ])?)
    .await?;
    p.init_transactions().await?;
    Ok(p)
}

async fn read_n(
    consumer: &mut GroupConsumer,
    n: usize,
    who: &str,
) -> Result<Vec<ConsumerRecord>, BoxError> {
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut read = Vec::new();
    while read.len() < n {
        support::check(
            Instant::now() < deadline,
            format!("{who} read {n} records (got {})", read.len()),
        )?;
        if let ConsumerEvent::Records(r) = consumer.poll(Duration::from_millis(200)).await? {
            read.extend(r);
        }
    }
    Ok(read)
}

async fn seed_input(bootstrap: &str, topic: &str, n: usize) -> Result<Vec<String>, BoxError> {
    let producer = Producer::connect(ProducerConfig::from_properties([(
        "bootstrap.servers",
        bootstrap,
    )])?)
    .await?;
    let values: Vec<String> = (0..n).map(|i| format!("order-{i}")).collect();
    let sends: Vec<_> = values
        .iter()
        .map(|v| producer.send(ProducerRecord::new(topic).key(v.clone()).value(v.clone())))
        .collect();
    for s in sends {
        s.await?;
    }
    producer.close(Duration::from_secs(10)).await?;
    Ok(values)
}
