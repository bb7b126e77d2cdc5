//! Retention overtaking a lagging consumer, on a real broker (the shared
//! Kafka 4.4 cluster): a group's committed position 5 falls below the log
//! start when DeleteRecords (Kafka's `DeleteRecordsCommand`, as
//! `bin/kafka-delete-records.sh` runs it) moves the start to 15. The next
//! Fetch at 5 is answered OFFSET_OUT_OF_RANGE, and `auto.offset.reset`
//! decides, per partition:
//!
//! - `earliest`: the member goes on at the new log start (15);
//! - `latest`: at the end (only records produced later arrive);
//! - `none`: a typed `OffsetOutOfRange` naming the partition, the position
//!   and the log's start and end; the position stays for a seek.
//!
//! For both group protocols (classic, KIP-848 consumer), and once for a
//! manually assigned [`Reader`] that answers the error with a seek.

use crate::support::group_consumer::config as group_config;
use kafka_client::TopicPartition;
use kafka_client::{Cluster, ClusterConfig};
use kafka_consumer::{
    AutoOffsetReset, ConsumerEvent, ConsumerRecord, GroupConsumer, GroupError, Offset, Reader,
    ReaderConfig, ReaderError,
};
use kafka_producer::{Producer, ProducerConfig, ProducerRecord};
use kafka_testcontainers::{KafkaCluster, SharedKafka, unique_name};
use std::time::{Duration, Instant};

const RECORDS: i64 = 20;
const COMMITTED: i64 = 5;
const LOG_START: i64 = 15;

async fn kafka() -> &'static KafkaCluster {
    SharedKafka::Kafka44Tv2
        .cluster()
        .await
        .unwrap_or_else(|e| panic!("shared Kafka: {e}"))
}

async fn produce(kafka: &KafkaCluster, topic: &str, values: std::ops::Range<i64>) {
    let producer = Producer::connect(
        ProducerConfig::from_properties([("bootstrap.servers", kafka.bootstrap().as_str())])
            .unwrap(),
    )
    .await
    .unwrap();
    let sends: Vec<_> = values
        .map(|i| producer.send(ProducerRecord::new(topic).partition(0).value(i.to_string())))
        .collect();
    for s in sends {
        s.await.expect("produced");
    }
    producer.close(Duration::from_secs(10)).await.unwrap();
}

/// Moves the log start of `topic`-0 to `offset` with Kafka's own
/// `DeleteRecordsCommand` (`bin/kafka-delete-records.sh`).
pub async fn delete_records(kafka: &KafkaCluster, topic: &str, offset: i64) {
    let dir = std::env::temp_dir().join(unique_name("delete-records"));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("offsets.json");
    std::fs::write(
        &json,
        format!(
            r#"{{"partitions":[{{"topic":"{topic}","partition":0,"offset":{offset}}}],"version":1}}"#
        ),
    )
    .unwrap();
    let out = kafka
        .run_java(
            "org.apache.kafka.tools.DeleteRecordsCommand",
            &[
                "--bootstrap-server".into(),
                kafka.bootstrap(),
                "--offset-json-file".into(),
                json.display().to_string(),
            ],
            // A JVM's start, and the class archive its second run writes
            // at exit, take long on a loaded machine.
            Duration::from_secs(120),
        )
        .await
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.success,
        "DeleteRecordsCommand (exit code {:?}, timed out: {}): {}\n{}",
        out.exit_code,
        out.timed_out,
        out.stdout_text(),
        out.stderr
    );
}

/// A topic of one partition holding values 0..20, whose group `group` has
/// committed offset 5 (a member that read 5 records and stopped), and whose
/// log start was then moved to 15.
async fn lagging_group(kafka: &KafkaCluster, protocol: &str) -> (String, String) {
    let topic = unique_name("positions");
    let group = unique_name("positions-group");
    kafka.create_topic(&topic, 1, 1).await.unwrap();
    produce(kafka, &topic, 0..RECORDS).await;
    let first = GroupConsumer::subscribe(
        member_config(kafka, &group, protocol, "earliest"),
        [topic.as_str()],
    )
    .await
    .unwrap();
    let first = until_assigned(first).await;
    first
        .commit(&[(TopicPartition::new(topic.as_str(), 0), COMMITTED)])
        .await
        .unwrap();
    first.close(Duration::from_secs(10)).await;
    delete_records(kafka, &topic, LOG_START).await;
    (topic, group)
}

fn member_config(
    kafka: &KafkaCluster,
    group: &str,
    protocol: &str,
    reset: &str,
) -> kafka_consumer::GroupConsumerConfig {
    let mut extra = vec![("group.protocol", protocol), ("auto.offset.reset", reset)];
    if protocol == "classic" {
        extra.extend([
            ("session.timeout.ms", "6000"),
            ("heartbeat.interval.ms", "500"),
        ]);
    }
    group_config(kafka, group, &extra)
}

async fn until_assigned(mut c: GroupConsumer) -> GroupConsumer {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if let ConsumerEvent::Assigned(p) = c.poll(Duration::from_millis(200)).await.unwrap()
            && !p.is_empty()
        {
            return c;
        }
    }
    panic!("no assignment within 60 s");
}

/// Polls until a record arrives (or fails).
async fn first_records(c: &mut GroupConsumer) -> Result<Vec<ConsumerRecord>, GroupError> {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if let ConsumerEvent::Records(r) = c.poll(Duration::from_millis(200)).await?
            && !r.is_empty()
        {
            return Ok(r);
        }
    }
    panic!("no record within 60 s");
}

/// Invariant: under `earliest` a member whose committed position fell below
/// the log start goes on at the new log start, each record from there once,
/// and counts one reset.
async fn earliest(protocol: &str) {
    let kafka = kafka().await;
    let (topic, group) = lagging_group(kafka, protocol).await;
    let mut c = GroupConsumer::subscribe(
        member_config(kafka, &group, protocol, "earliest"),
        [topic.as_str()],
    )
    .await
    .unwrap();
    let mut got: Vec<i64> = Vec::new();
    while got.len() < (RECORDS - LOG_START) as usize {
        got.extend(
            first_records(&mut c)
                .await
                .unwrap()
                .iter()
                .map(|r| r.offset),
        );
    }
    assert_eq!(got, (LOG_START..RECORDS).collect::<Vec<_>>());
    assert_eq!(c.metrics().offset_resets, 1);
    c.close(Duration::from_secs(10)).await;
}

/// Invariant: under `latest` the member goes on at the end: the first
/// record it gets is the first produced after the reset.
async fn latest(protocol: &str) {
    let kafka = kafka().await;
    let (topic, group) = lagging_group(kafka, protocol).await;
    let mut c = GroupConsumer::subscribe(
        member_config(kafka, &group, protocol, "latest"),
        [topic.as_str()],
    )
    .await
    .unwrap();
    // Poll until the reset happened (the position is at the end), then
    // produce one more record: it is the first one returned.
    let deadline = Instant::now() + Duration::from_secs(60);
    while c.metrics().offset_resets == 0 {
        assert!(Instant::now() < deadline, "no reset within 60 s");
        if let ConsumerEvent::Records(r) = c.poll(Duration::from_millis(200)).await.unwrap() {
            assert!(r.is_empty(), "records before the reset: {r:?}");
        }
    }
    assert_eq!(
        c.positions(),
        vec![(TopicPartition::new(topic.as_str(), 0), RECORDS)]
    );
    produce(kafka, &topic, RECORDS..RECORDS + 1).await;
    let got = first_records(&mut c).await.unwrap();
    assert_eq!(got[0].offset, RECORDS);
    assert_eq!(c.metrics().offset_resets, 1);
    c.close(Duration::from_secs(10)).await;
}

/// Invariant: under `none` the member gets a typed error naming the
/// partition, its position and the log's start and end, again at the next
/// poll (nothing is skipped), and no reset is counted; the application
/// answers with a seek to the beginning, and the member reads every record
/// from the new log start once.
async fn none(protocol: &str) {
    let kafka = kafka().await;
    let (topic, group) = lagging_group(kafka, protocol).await;
    let mut c = GroupConsumer::subscribe(
        member_config(kafka, &group, protocol, "none"),
        [topic.as_str()],
    )
    .await
    .unwrap();
    for _ in 0..2 {
        match first_records(&mut c).await {
            Err(GroupError::Reader(ReaderError::OffsetOutOfRange {
                topic: t,
                partition: 0,
                offset: COMMITTED,
                log_start_offset: Some(LOG_START),
                end_offset: Some(RECORDS),
            })) if t == topic => {}
            other => panic!("expected OffsetOutOfRange at {COMMITTED}, got {other:?}"),
        }
    }
    assert_eq!(c.metrics().offset_resets, 0);
    let tp = TopicPartition::new(topic.as_str(), 0);
    c.seek_to_beginning(std::slice::from_ref(&tp))
        .await
        .unwrap();
    let mut got: Vec<i64> = Vec::new();
    while got.len() < (RECORDS - LOG_START) as usize {
        got.extend(
            first_records(&mut c)
                .await
                .unwrap()
                .iter()
                .map(|r| r.offset),
        );
    }
    assert_eq!(got, (LOG_START..RECORDS).collect::<Vec<_>>());
    c.close(Duration::from_secs(10)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn classic_member_resets_to_earliest() {
    earliest("classic").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consumer_member_resets_to_earliest() {
    earliest("consumer").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn classic_member_resets_to_latest() {
    latest("classic").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consumer_member_resets_to_latest() {
    latest("consumer").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn classic_member_without_reset_gets_the_offsets() {
    none("classic").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consumer_member_without_reset_gets_the_offsets() {
    none("consumer").await;
}

/// Invariant: a manually assigned reader under `none` whose position fell
/// below the log start gets the typed error with the position unchanged,
/// and after a seek to the earliest offset reads from the new log start,
/// each record once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reader_without_reset_seeks_after_the_error() {
    let kafka = kafka().await;
    let topic = unique_name("positions-reader");
    kafka.create_topic(&topic, 1, 1).await.unwrap();
    produce(kafka, &topic, 0..RECORDS).await;
    delete_records(kafka, &topic, LOG_START).await;
    let cluster = Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
        .await
        .unwrap();
    let mut reader = Reader::new(
        cluster,
        ReaderConfig {
            auto_offset_reset: AutoOffsetReset::None,
            ..ReaderConfig::default()
        },
    );
    reader.assign(&topic, &[0]);
    reader.seek(&topic, 0, Offset::At(COMMITTED)).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let e = loop {
        assert!(Instant::now() < deadline, "no error within 60 s");
        match reader.poll(Duration::from_millis(500)).await {
            Ok(r) => assert!(r.is_empty(), "records from a lost position: {r:?}"),
            Err(e) => break e,
        }
    };
    assert!(
        matches!(
            e,
            ReaderError::OffsetOutOfRange {
                offset: COMMITTED,
                log_start_offset: Some(LOG_START),
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(reader.position(&topic, 0), Some(COMMITTED));
    let at = reader.seek(&topic, 0, Offset::Earliest).await.unwrap();
    assert_eq!(at, LOG_START);
    let mut got = Vec::new();
    while got.len() < (RECORDS - LOG_START) as usize {
        assert!(Instant::now() < deadline, "records after the seek");
        got.extend(
            reader
                .poll(Duration::from_millis(500))
                .await
                .unwrap()
                .iter()
                .map(|r| r.offset),
        );
    }
    assert_eq!(got, (LOG_START..RECORDS).collect::<Vec<_>>());
    assert_eq!(reader.metrics().offset_resets, 0);
}
