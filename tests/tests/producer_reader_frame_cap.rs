//! The reader's fetch sizes follow the connection's frame cap
//! (`receive.message.max.bytes`), against a real Kafka 4.4 broker.
//!
//! Invariant: with a frame cap far below `fetch.max.bytes` and
//! `max.partition.fetch.bytes`, the reader still reads every record of a
//! partition once, in offset order — its Fetch requests ask for no more than
//! a frame can carry, so no response is refused as too large.

use kafka_client::{Cluster, ClusterConfig};
use kafka_consumer::{IsolationLevel, Reader, ReaderConfig};
use kafka_producer::{Producer, ProducerConfig, ProducerRecord};
use kafka_testcontainers::{SharedKafka, unique_name};
use std::time::Duration;

const RECORDS: usize = 4_000;
const VALUE_BYTES: usize = 400;
/// 64 KiB: each 16 KiB batch fits, the partition's 1.6 MB does not.
const FRAME_CAP: usize = 64 * 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reader_keeps_fetches_below_a_small_frame_cap() {
    let kafka = SharedKafka::Kafka44Tv2
        .cluster()
        .await
        .expect("shared Kafka 4.4");
    let topic = unique_name("frame-cap");
    let topic = topic.as_str();
    kafka.create_topic(topic, 1, 1).await.expect("create topic");

    let producer = Producer::connect(
        ProducerConfig::from_properties([
            ("bootstrap.servers", kafka.bootstrap().as_str()),
            ("batch.size", "16384"),
            // Batches that never grow past the frame cap.
            ("batch.max.size", "16384"),
        ])
        .unwrap(),
    )
    .await
    .expect("producer");
    let sends: Vec<_> = (0..RECORDS)
        .map(|i| {
            let mut v = format!("{i:08}").into_bytes();
            v.resize(VALUE_BYTES, b'.');
            producer.send(ProducerRecord::new(topic).partition(0).value(v))
        })
        .collect();
    for s in sends {
        s.await.expect("sent");
    }
    producer.close(Duration::from_secs(10)).await.unwrap();

    let mut config = ClusterConfig::new(&kafka.bootstrap());
    config.connection.max_frame_size = FRAME_CAP;
    let cluster = Cluster::connect(config).await.expect("connect");
    let defaults = ReaderConfig::default();
    assert!(defaults.max_bytes as usize > FRAME_CAP);
    assert!(defaults.partition_max_bytes as usize > FRAME_CAP);
    let mut reader = Reader::new(
        cluster,
        ReaderConfig {
            isolation: IsolationLevel::ReadUncommitted,
            read_to_end_timeout: Duration::from_secs(60),
            ..defaults
        },
    );
    let records = reader.read_to_end(topic, &[0]).await.expect("read to end");
    let offsets: Vec<i64> = records.iter().map(|r| r.offset).collect();
    assert_eq!(offsets, (0..RECORDS as i64).collect::<Vec<_>>());
    for (i, r) in records.iter().enumerate() {
        let v = r.value.as_deref().expect("value");
        assert_eq!(&v[..8], format!("{i:08}").as_bytes());
    }
}
