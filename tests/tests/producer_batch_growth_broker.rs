//! `batch.max.size` (a kafka-eos extension) against a real Kafka 4.4 broker:
//! batches that grow while their partition waits for an in-flight slot stay
//! within the topic's `max.message.bytes` (the producer reads it with
//! DescribeConfigs), and batches the broker refuses as too large
//! (MESSAGE_TOO_LARGE: `batch.size` above the topic's limit) are split and
//! written once, in order — idempotent and transactional.

use kafka_admin::{self as admin, CreateTopicsOptions, NewTopic};
use kafka_client::{Cluster, ClusterConfig};
use kafka_consumer::{Reader, ReaderConfig};
use kafka_producer::{Producer, ProducerConfig, ProducerRecord, TransactionalProducer};
use kafka_testcontainers::{KafkaCluster, SharedKafka, unique_name};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

const PARTITIONS: i32 = 2;

/// The shared Kafka 4.4 cluster (other tests use it too: names are unique).
async fn kafka() -> &'static KafkaCluster {
    SharedKafka::Kafka44Tv2
        .cluster()
        .await
        .expect("shared Kafka 4.4")
}

/// A topic of [`PARTITIONS`] partitions whose `max.message.bytes` is `max`.
async fn topic_with_limit(kafka: &KafkaCluster, name: &str, max: usize) -> Arc<Cluster> {
    let cluster = Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
        .await
        .expect("connect");
    let topic = NewTopic::new(name)
        .with_partitions(PARTITIONS)
        .with_replication_factor(1)
        .with_config("max.message.bytes", max.to_string());
    let options = CreateTopicsOptions {
        wait_for_leaders: true,
        ..Default::default()
    };
    admin::create_topics(&cluster, std::slice::from_ref(&topic), &options)
        .await
        .expect("create the topic");
    cluster
}

/// Record `i`: about 100 bytes, to partition `i % PARTITIONS`.
fn record(topic: &str, i: usize) -> ProducerRecord {
    ProducerRecord::new(topic)
        .partition((i % PARTITIONS as usize) as i32)
        .value(format!("{i:08}-{}", "v".repeat(92)))
}

/// Reads the topic back (read_committed) and checks that it holds record
/// 0..n exactly once each, in send order per partition, at the offsets
/// their send futures gave.
async fn check_once_in_order(
    cluster: Arc<Cluster>,
    topic: &str,
    n: usize,
    offsets: &BTreeMap<usize, (i32, i64)>,
) {
    let mut reader = Reader::new(cluster, ReaderConfig::default());
    let partitions: Vec<i32> = (0..PARTITIONS).collect();
    // A committed transaction's markers are written after EndTxn returns:
    // read once no transaction is open on the partitions (the last stable
    // offset reached the high watermark).
    reader
        .wait_until_stable(topic, &partitions, Duration::from_secs(30))
        .await
        .unwrap_or_else(|e| panic!("{topic}: LSO stuck below HW: {e}"));
    let got = reader.read_to_end(topic, &partitions).await.unwrap();
    assert_eq!(got.len(), n, "every record once");
    let mut last: BTreeMap<i32, usize> = BTreeMap::new();
    let mut seen = vec![false; n];
    for r in &got {
        let value = String::from_utf8(r.value.as_deref().unwrap().to_vec()).unwrap();
        let i: usize = value[..8].parse().unwrap();
        assert!(!seen[i], "record {i} twice");
        seen[i] = true;
        assert_eq!(offsets[&i], (r.partition, r.offset), "record {i}'s offset");
        if let Some(prev) = last.insert(r.partition, i) {
            assert!(prev < i, "partition {}: {prev} before {i}", r.partition);
        }
    }
}

/// Invariant: with `batch.max.size` far above the topic's
/// `max.message.bytes`, batches grow while their partition waits for its
/// one in-flight slot, yet none exceeds the topic's limit (the broker
/// refuses none: nothing is split), and every record is written once, in
/// order per partition.
///
/// Growth needs records to arrive while a request is out: on a loaded
/// machine the sender may drain a burst as fast as it is appended. The
/// burst is repeated (at most 5 times, on the same topic) until one grew,
/// and every record of every burst is checked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn growing_batches_stay_within_the_topics_max_message_bytes_kafka_4_4_tv2() {
    let kafka = kafka().await;
    let topic = unique_name("growth-limit");
    let cluster = topic_with_limit(kafka, &topic, 3_000).await;
    let config = ProducerConfig::from_properties([
        ("bootstrap.servers", kafka.bootstrap().as_str()),
        ("batch.size", "1000"),
        ("batch.max.size", "64000"),
        ("max.in.flight.requests.per.connection", "1"),
        ("linger.ms", "0"),
    ])
    .unwrap();
    let producer = Producer::connect(config).await.unwrap();
    const N: usize = 6_000;
    let mut offsets = BTreeMap::new();
    // Two records first, one at a time: the producer learns the topic's
    // partitions and its max.message.bytes (batches grow only once it
    // knows it); the others are sent while one request is in flight.
    for i in 0..2 {
        let md = producer.send(record(&topic, i)).await.unwrap();
        offsets.insert(i, (md.partition, md.offset.unwrap()));
    }
    let mut sent = 2;
    let mut grew = false;
    for _burst in 0..5 {
        let before = producer.metrics();
        let sends: Vec<_> = (sent..sent + N)
            .map(|i| producer.send(record(&topic, i)))
            .collect();
        for (i, send) in (sent..sent + N).zip(sends) {
            let md = send.await.unwrap_or_else(|e| panic!("record {i}: {e}"));
            offsets.insert(i, (md.partition, md.offset.unwrap()));
        }
        sent += N;
        let m = producer.metrics();
        eprintln!("growth within max.message.bytes: {m:?}");
        let (bytes, batches) = (
            m.bytes_sent - before.bytes_sent,
            m.batches_sent - before.batches_sent,
        );
        if bytes / batches > 1_000 {
            grew = true;
            break;
        }
    }
    let m = producer.metrics();
    assert_eq!(m.batch_splits, 0, "no batch over the limit: {m:?}");
    assert_eq!(m.records_sent, sent as u64);
    assert!(grew, "no burst's batches grew past batch.size: {m:?}");
    producer.close(Duration::from_secs(10)).await.unwrap();
    check_once_in_order(cluster, &topic, sent, &offsets).await;
}

/// Invariant: batches the broker refuses as too large (`batch.size` 16 KiB,
/// the topic's `max.message.bytes` 2,000) are split and sent again with
/// their sequences: the idempotent producer writes every record once, in
/// order per partition, each at the offset its send future gave.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_batches_are_split_and_written_once_in_order_kafka_4_4_tv2() {
    let kafka = kafka().await;
    let topic = unique_name("growth-split");
    let cluster = topic_with_limit(kafka, &topic, 2_000).await;
    let config = ProducerConfig::from_properties([
        ("bootstrap.servers", kafka.bootstrap().as_str()),
        ("batch.size", "16384"),
        ("batch.max.size", "262144"),
        ("linger.ms", "5"),
    ])
    .unwrap();
    let producer = Producer::connect(config).await.unwrap();
    const N: usize = 4_000;
    let sends: Vec<_> = (0..N).map(|i| producer.send(record(&topic, i))).collect();
    let mut offsets = BTreeMap::new();
    for (i, send) in sends.into_iter().enumerate() {
        let md = send.await.unwrap_or_else(|e| panic!("record {i}: {e}"));
        offsets.insert(i, (md.partition, md.offset.unwrap()));
    }
    let m = producer.metrics();
    assert!(m.batch_splits > 0, "the broker refused batches: {m:?}");
    assert_eq!(m.epoch_bumps, 0, "{m:?}");
    producer.close(Duration::from_secs(10)).await.unwrap();
    check_once_in_order(cluster, &topic, N, &offsets).await;
}

/// Invariant: in a transaction, batches the broker refuses as too large
/// are split and sent again; the transaction commits, and a read_committed
/// reader sees every record once, in order per partition.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_batches_of_a_transaction_are_split_and_committed_once_kafka_4_4_tv2() {
    // With RUST_LOG set, the producer's warnings (why a refused batch was
    // not split) go to stderr.
    crate::support::trace_to_stderr_under_rust_log();
    let kafka = kafka().await;
    let topic = unique_name("growth-split-txn");
    let cluster = topic_with_limit(kafka, &topic, 2_000).await;
    let txn_id = unique_name("growth-split-txn");
    let config = ProducerConfig::from_properties([
        ("bootstrap.servers", kafka.bootstrap().as_str()),
        ("transactional.id", txn_id.as_str()),
        ("batch.size", "16384"),
        ("batch.max.size", "262144"),
        ("linger.ms", "5"),
    ])
    .unwrap();
    let producer = TransactionalProducer::connect(config).await.unwrap();
    producer.init_transactions().await.unwrap();
    const N: usize = 3_000;
    let mut offsets = BTreeMap::new();
    for round in 0..3 {
        producer.begin_transaction().unwrap();
        let range = round * N / 3..(round + 1) * N / 3;
        let sends: Vec<_> = range
            .clone()
            .map(|i| producer.send(record(&topic, i)))
            .collect();
        producer.commit_transaction().await.unwrap();
        for (i, send) in range.zip(sends) {
            let md = send.await.unwrap_or_else(|e| panic!("record {i}: {e}"));
            offsets.insert(i, (md.partition, md.offset.unwrap()));
        }
    }
    let m = producer.metrics();
    assert!(m.batch_splits > 0, "the broker refused batches: {m:?}");
    producer.close(Duration::from_secs(10)).await.unwrap();
    check_once_in_order(cluster, &topic, N, &offsets).await;
}
