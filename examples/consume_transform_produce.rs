//! Consume-transform-produce, exactly once: read an input topic with a
//! read_committed reader, write a transformed record per input record and
//! commit the consumer group's offsets **in the same transaction**
//! (`send_offsets_to_transaction`). One transaction is aborted on purpose to
//! show the recovery: rewind to the group's committed offsets and redo the
//! work. At the end the output holds each transformed input record exactly
//! once and the group's offsets point at the end of the input.
//!
//! ```text
//! cargo run -p kafka-eos-examples --example consume_transform_produce -- --bootstrap 127.0.0.1:9092 --records 20
//! ```
//!
//! The bootstrap defaults to `$KAFKA_EOS_BOOTSTRAP`, then `127.0.0.1:9092`.
//! Topics `example-ctp-input` and `example-ctp-output` (2 partitions each,
//! created when missing), consumer group `example-ctp`, transactional id
//! `example-ctp-processor` (`--name-suffix S` appends `-S` to each). Exits with status 1 when anything fails or the
//! check does not hold.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use kafka_eos::client::{Cluster, ClusterConfig};
use kafka_eos::consumer::{ConsumerRecord, Offset, Reader, ReaderConfig};
use kafka_eos::producer::txn::GroupMetadata;
use kafka_eos::producer::{
    Producer, ProducerConfig, ProducerRecord, TopicPartition, TransactionalProducer,
};
use kafka_eos_examples::support::{self, BoxError};

const INPUT: &str = "example-ctp-input";
const OUTPUT: &str = "example-ctp-output";
const GROUP: &str = "example-ctp";
/// The topics, group and transactional id of a run: the constants above, or
/// with `--name-suffix S` each followed by `-S`.
struct Names {
    input: String,
    output: String,
    group: String,
    transactional_id: String,
}

/// Input records per transaction.
const CHUNK: usize = 5;

/// The transformation: one output value per input value.
fn transform(input: &str) -> String {
    input.to_uppercase()
}

#[tokio::main]
async fn main() -> ExitCode {
    support::exit_code(run().await)
}

async fn run() -> Result<(), BoxError> {
    let bootstrap = support::bootstrap();
    let records: usize = support::number_arg("records", 20)?;
    let names = Names {
        input: support::name(INPUT),
        output: support::name(OUTPUT),
        group: support::name(GROUP),
        transactional_id: support::name("example-ctp-processor"),
    };
    let (input, output) = (names.input.as_str(), names.output.as_str());
    let cluster = Cluster::connect(ClusterConfig::new(&bootstrap)).await?;
    let partitions = support::ensure_topic(&cluster, input, 2).await?;
    support::ensure_topic(&cluster, output, 2).await?;
    let output_start = support::end_offsets(&cluster, output, &partitions).await?;
    seed_input(&bootstrap, input, records).await?;

    // The reader starts where the group's last committed transaction ended.
    let mut reader = Reader::new(cluster.clone(), ReaderConfig::default()); // read_committed
    reader.assign(input, &partitions);
    let input_start = rewind(&mut reader, &names, &partitions).await?;
    let input_end = support::end_offsets(&cluster, input, &partitions).await?;
    println!("processing {input} from {input_start:?} to {input_end:?}");

    let config = ProducerConfig::from_properties([
        ("bootstrap.servers", bootstrap.as_str()),
        ("transactional.id", names.transactional_id.as_str()),
    ])?;
    let producer = TransactionalProducer::connect(config).await?;
    producer.init_transactions().await?;
    let group = GroupMetadata::new(names.group.as_str());

    let mut simulate_failure = true;
    let (mut committed_txns, mut aborted_txns) = (0, 0);
    'poll: while !caught_up(&reader, input, &input_end) {
        let polled = reader.poll(Duration::from_secs(1)).await?;
        for chunk in polled.chunks(CHUNK) {
            producer.begin_transaction()?;
            let pending: Vec<_> = chunk
                .iter()
                .map(|r| {
                    let out = transform(&support::value(r));
                    producer.send(
                        ProducerRecord::new(output)
                            .partition(r.partition)
                            .value(out),
                    )
                })
                .collect();
            // Commit "input consumed up to here" atomically with the output.
            producer
                .send_offsets_to_transaction(&next_offsets(input, chunk), &group)
                .await?;
            if simulate_failure {
                // Pretend processing failed before the commit: abort, and
                // restart from the group's committed offsets.
                simulate_failure = false;
                producer.abort_transaction().await?;
                aborted_txns += 1;
                for p in pending {
                    let _ = p.await; // written but aborted, or never sent
                }
                let back = rewind(&mut reader, &names, &partitions).await?;
                println!(
                    "aborted a transaction of {} records; rewound to {back:?}",
                    chunk.len()
                );
                continue 'poll;
            }
            match producer.commit_transaction().await {
                Ok(()) => committed_txns += 1,
                // A record failed: abort and redo from the committed offsets.
                Err(e) if e.is_abortable() => {
                    producer.abort_transaction().await?;
                    aborted_txns += 1;
                    rewind(&mut reader, &names, &partitions).await?;
                    continue 'poll;
                }
                Err(e) => return Err(e.into()),
            }
            for p in pending {
                p.await?; // committed: each record has its offset
            }
        }
    }
    producer.close(Duration::from_secs(10)).await?;
    println!("{committed_txns} transactions committed, {aborted_txns} aborted");

    check(
        &cluster,
        &reader,
        &names,
        &partitions,
        &input_start,
        &input_end,
        &output_start,
    )
    .await?;
    println!("ok: every input record transformed exactly once, group offsets at the input's end");
    Ok(())
}

/// Writes `records` new input records (idempotent producer).
async fn seed_input(bootstrap: &str, input: &str, records: usize) -> Result<(), BoxError> {
    let producer = Producer::connect(ProducerConfig::new(bootstrap)).await?;
    let pending: Vec<_> = (0..records)
        .map(|i| {
            let value = format!("event {i}");
            producer.send(ProducerRecord::new(input).key(i.to_string()).value(value))
        })
        .collect();
    for p in pending {
        p.await?;
    }
    producer.close(Duration::from_secs(10)).await?;
    println!("wrote {records} input records to {input}");
    Ok(())
}

/// Seeks every partition to the group's committed offset (the earliest
/// offset when the group has none) and returns the positions.
async fn rewind(
    reader: &mut Reader,
    names: &Names,
    partitions: &[i32],
) -> Result<BTreeMap<i32, i64>, BoxError> {
    let committed = reader
        .committed_offsets(&names.group, &names.input, partitions)
        .await?;
    let mut positions = BTreeMap::new();
    for (p, offset) in committed {
        let to = offset.map_or(Offset::Earliest, Offset::At);
        positions.insert(p, reader.seek(&names.input, p, to).await?);
    }
    Ok(positions)
}

/// True once every partition's position reached `end`.
fn caught_up(reader: &Reader, input: &str, end: &BTreeMap<i32, i64>) -> bool {
    end.iter()
        .all(|(p, e)| reader.position(input, *p).is_some_and(|pos| pos >= *e))
}

/// The offsets to commit after `records`: per partition, the next offset to read.
fn next_offsets(
    input: &str,
    records: &[ConsumerRecord],
) -> Vec<(TopicPartition, i64, Option<String>)> {
    let mut next: BTreeMap<i32, i64> = BTreeMap::new();
    for r in records {
        let n = next.entry(r.partition).or_default();
        *n = (*n).max(r.offset + 1);
    }
    next.into_iter()
        .map(|(p, offset)| (TopicPartition::new(input, p), offset, None))
        .collect()
}

/// The output holds `transform(input)` for each input record read, once
/// each and in order per partition; the group's offsets are at the end.
async fn check(
    cluster: &Arc<Cluster>,
    reader: &Reader,
    names: &Names,
    partitions: &[i32],
    input_start: &BTreeMap<i32, i64>,
    input_end: &BTreeMap<i32, i64>,
    output_start: &BTreeMap<i32, i64>,
) -> Result<(), BoxError> {
    let committed = reader
        .committed_offsets(&names.group, &names.input, partitions)
        .await?;
    let expected_offsets: BTreeMap<i32, Option<i64>> =
        input_end.iter().map(|(p, e)| (*p, Some(*e))).collect();
    println!("group {} committed offsets: {committed:?}", names.group);
    support::check(
        committed == expected_offsets,
        format!("the group's offsets are the input's end {input_end:?}"),
    )?;

    let input = support::read_committed_from(cluster, &names.input, input_start).await?;
    let output = support::read_committed_from(cluster, &names.output, output_start).await?;
    let expected: Vec<(i32, String)> = input
        .iter()
        .filter(|r| r.offset < input_end[&r.partition])
        .map(|r| (r.partition, transform(&support::value(r))))
        .collect();
    let got: Vec<(i32, String)> = output
        .iter()
        .map(|r| (r.partition, support::value(r)))
        .collect();
    println!(
        "output: {} committed records for {} input records",
        got.len(),
        expected.len()
    );
    support::check(
        got == expected,
        format!("the output is the transformed input, once each (got {got:?})"),
    )
}
