//! Testing an exactly-once job without a broker: a consume-transform-produce
//! job (read an input topic read_committed, write one upper-cased record
//! per input record, commit the input offsets in the same transaction) runs
//! against kafka-mock, an in-process three-broker Kafka cluster, while the
//! test injects faults at exact protocol moments:
//!
//! - the answer to the first EndTxn (a commit) is lost after the
//!   coordinator applied it: the producer times out, retries, and the
//!   coordinator recognizes the retry (transaction version 2);
//! - the next two Produce requests are refused with NOT_LEADER_OR_FOLLOWER;
//! - one TxnOffsetCommit is refused with COORDINATOR_LOAD_IN_PROGRESS;
//! - the leader of an input partition's broker is stopped half-way.
//!
//! Then it checks what a user's test would: every input record is in the
//! output exactly once, in order per partition, and the group's committed
//! offsets are at the end of the input. No JVM, no Docker: it runs in
//! about a second.
//!
//! ```text
//! cargo run -p kafka-eos-examples --example test_with_kafka_mock
//! ```
//!
//! Exits with status 1 when the job or the check fails.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Duration;

use kafka_eos::client::{Cluster, ClusterConfig};
use kafka_eos::consumer::{IsolationLevel, Offset, Reader, ReaderConfig};
use kafka_eos::producer::txn::GroupMetadata;
use kafka_eos::producer::{
    Producer, ProducerConfig, ProducerRecord, TopicPartition, TransactionalProducer,
};
use kafka_eos::proto::{ApiKey, ErrorCode};
use kafka_eos_examples::support::{self, BoxError};
use kafka_mock::{Fault, FaultAction, MockCluster, MockConfig};

const INPUT: &str = "orders";
const OUTPUT: &str = "orders-upper";
const GROUP: &str = "upper-job";
const PARTITIONS: i32 = 2;
const RECORDS: usize = 200;

#[tokio::main]
async fn main() -> ExitCode {
    support::exit_code(run().await)
}

async fn run() -> Result<(), BoxError> {
    // The cluster under test: three brokers on free ports of 127.0.0.1.
    let mock = MockCluster::start(MockConfig {
        brokers: 3,
        ..MockConfig::default()
    })
    .await?;
    mock.create_topic(INPUT, PARTITIONS)?;
    mock.create_topic(OUTPUT, PARTITIONS)?;
    let bootstrap = mock.bootstrap();
    seed_input(&bootstrap).await?;

    // The faults, queued before the job starts: each hits the next
    // matching request.
    mock.inject(Fault::new(FaultAction::DropResponse).api(ApiKey::EndTxn));
    mock.inject(
        Fault::new(FaultAction::Error(ErrorCode::NotLeaderOrFollower))
            .api(ApiKey::Produce)
            .times(2),
    );
    mock.inject(
        Fault::new(FaultAction::Error(ErrorCode::CoordinatorLoadInProgress))
            .api(ApiKey::TxnOffsetCommit),
    );

    let job = tokio::spawn(upper_case_job(bootstrap.clone()));
    // Half-way, the broker leading input partition 0 stops (its partitions
    // and coordinators fail over to the others).
    wait_for_progress(&mock).await;
    let leader = mock.leader(INPUT, 0).ok_or("no leader")?;
    mock.stop_broker(leader).await?;
    println!("stopped broker {leader} (leader of {INPUT}-0) during the job");
    let transactions = job.await??;
    println!("the job committed {transactions} transactions");
    support::check(
        mock.pending_faults() == 0,
        "every injected fault was hit by the job",
    )?;
    check(&bootstrap).await?;
    println!("ok: every input record transformed exactly once despite the faults");
    Ok(())
}

/// The job under test: until the input is consumed, read a chunk, write
/// its transformation and commit the input offsets in one transaction; on
/// an abortable error abort and rewind to the committed offsets.
async fn upper_case_job(bootstrap: String) -> Result<usize, BoxError> {
    let cluster = Cluster::connect(ClusterConfig::new(&bootstrap)).await?;
    let partitions: Vec<i32> = (0..PARTITIONS).collect();
    // read_committed; small fetches: a few records per transaction.
    let mut reader = Reader::new(
        cluster.clone(),
        ReaderConfig {
            partition_max_bytes: 512,
            ..ReaderConfig::default()
        },
    );
    reader.assign(INPUT, &partitions);
    rewind(&mut reader, &partitions).await?;
    let end = support::end_offsets(&cluster, INPUT, &partitions).await?;
    let producer = TransactionalProducer::connect(ProducerConfig::from_properties([
        ("bootstrap.servers", bootstrap.as_str()),
        ("transactional.id", "upper-job-1"),
        ("request.timeout.ms", "1000"),
    ])?)
    .await?;
    producer.init_transactions().await?;
    let group = GroupMetadata::new(GROUP);
    let mut committed = 0;
    while !end
        .iter()
        .all(|(p, e)| reader.position(INPUT, *p).is_some_and(|pos| pos >= *e))
    {
        let polled = reader.poll(Duration::from_secs(1)).await?;
        if polled.is_empty() {
            continue;
        }
        producer.begin_transaction()?;
        let mut next: BTreeMap<i32, i64> = BTreeMap::new();
        let mut sends = Vec::with_capacity(polled.len());
        for r in &polled {
            let out = support::value(r).to_uppercase();
            sends.push(
                producer.send(
                    ProducerRecord::new(OUTPUT)
                        .partition(r.partition)
                        .value(out),
                ),
            );
            next.insert(r.partition, r.offset + 1);
        }
        let offsets: Vec<_> = next
            .iter()
            .map(|(p, o)| (TopicPartition::new(INPUT, *p), *o, None))
            .collect();
        let outcome = match producer.send_offsets_to_transaction(&offsets, &group).await {
            Ok(()) => producer.commit_transaction().await,
            Err(e) => Err(e),
        };
        match outcome {
            Ok(()) => {
                committed += 1;
                for s in sends {
                    s.await?; // committed: each record has its offset
                }
            }
            Err(e) if e.is_abortable() => {
                producer.abort_transaction().await?;
                rewind(&mut reader, &partitions).await?;
            }
            Err(e) => return Err(e.into()),
        }
    }
    producer.close(Duration::from_secs(5)).await?;
    Ok(committed)
}

/// Seeks every input partition to the group's committed offset (earliest
/// when none).
async fn rewind(reader: &mut Reader, partitions: &[i32]) -> Result<(), BoxError> {
    for (p, offset) in reader.committed_offsets(GROUP, INPUT, partitions).await? {
        reader
            .seek(INPUT, p, offset.map_or(Offset::Earliest, Offset::At))
            .await?;
    }
    Ok(())
}

async fn seed_input(bootstrap: &str) -> Result<(), BoxError> {
    // One record per batch (each send awaited): the job's small fetches
    // then take a few records at a time, so it commits many transactions.
    let producer = Producer::connect(ProducerConfig::new(bootstrap)).await?;
    for i in 0..RECORDS {
        producer
            .send(
                ProducerRecord::new(INPUT)
                    .key(i.to_string())
                    .value(format!("order {i}")),
            )
            .await?;
    }
    producer.close(Duration::from_secs(5)).await?;
    Ok(())
}

/// Returns once some output is committed (the job is under way).
async fn wait_for_progress(mock: &MockCluster) {
    while (0..PARTITIONS).all(|p| mock.offsets(OUTPUT, p).is_none_or(|(_, lso)| lso == 0)) {
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Output = upper-cased input, once each, in order per partition; the
/// group's offsets at the input's end.
async fn check(bootstrap: &str) -> Result<(), BoxError> {
    let cluster = Cluster::connect(ClusterConfig::new(bootstrap)).await?;
    let partitions: Vec<i32> = (0..PARTITIONS).collect();
    let mut reader = Reader::new(
        cluster.clone(),
        ReaderConfig {
            isolation: IsolationLevel::ReadCommitted,
            ..ReaderConfig::default()
        },
    );
    reader
        .wait_until_stable(OUTPUT, &partitions, Duration::from_secs(10))
        .await?;
    let input = reader.read_to_end(INPUT, &partitions).await?;
    let output = reader.read_to_end(OUTPUT, &partitions).await?;
    for p in &partitions {
        let want: Vec<String> = input
            .iter()
            .filter(|r| r.partition == *p)
            .map(|r| support::value(r).to_uppercase())
            .collect();
        let got: Vec<String> = output
            .iter()
            .filter(|r| r.partition == *p)
            .map(support::value)
            .collect();
        support::check(
            got == want,
            format!(
                "partition {p}: {} output records for {} input records, each once and in order",
                got.len(),
                want.len()
            ),
        )?;
    }
    let end = support::end_offsets(&cluster, INPUT, &partitions).await?;
    let committed = reader.committed_offsets(GROUP, INPUT, &partitions).await?;
    support::check(
        committed.iter().all(|(p, o)| *o == Some(end[p])),
        format!("the group's offsets {committed:?} are the input's end {end:?}"),
    )?;
    Ok(())
}
