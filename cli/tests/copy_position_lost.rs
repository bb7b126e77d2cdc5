//! An exactly-once `copy` must never skip input silently. Invariant: with
//! `-X auto.offset.reset=none`, a copier whose group's committed input
//! position (5) fell below the log start (15, DeleteRecords run by Kafka's
//! `DeleteRecordsCommand`) exits 1 with a message naming the partition, the
//! position and the log start, and commits nothing: the output holds no
//! committed record and the group's offset is still 5.

use kafka_client::TopicPartition;
use kafka_client::{Cluster, ClusterConfig};
use kafka_consumer::{
    ConsumerEvent, GroupConsumer, GroupConsumerConfig, IsolationLevel, Reader, ReaderConfig,
};
use kafka_producer::{Producer, ProducerConfig, ProducerRecord};
use kafka_testcontainers::{KafkaCluster, SharedKafka, unique_name};
use std::time::{Duration, Instant};
use tokio::process::Command;

fn bin() -> String {
    std::env::var("KAFKA_EOS_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_kafka-eos").into())
}

async fn delete_records(kafka: &KafkaCluster, topic: &str, offset: i64) {
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
            Duration::from_secs(60),
        )
        .await
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.success, "DeleteRecordsCommand: {}", out.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_under_none_stops_when_its_input_position_left_the_log() {
    let kafka = SharedKafka::Kafka44Tv2
        .cluster()
        .await
        .expect("shared Kafka");
    let bootstrap = kafka.bootstrap();
    let from = unique_name("copy-lost-in");
    let to = unique_name("copy-lost-out");
    let group = unique_name("copy-lost");
    kafka.create_topic(&from, 1, 1).await.unwrap();
    kafka.create_topic(&to, 1, 1).await.unwrap();
    let producer = Producer::connect(
        ProducerConfig::from_properties([("bootstrap.servers", bootstrap.as_str())]).unwrap(),
    )
    .await
    .unwrap();
    for i in 0..20 {
        producer
            .send(
                ProducerRecord::new(from.as_str())
                    .partition(0)
                    .value(i.to_string()),
            )
            .await
            .unwrap();
    }
    producer.close(Duration::from_secs(10)).await.unwrap();
    // The group copied 0..5 (its committed offset), then stopped.
    let config = GroupConsumerConfig::from_properties([
        ("bootstrap.servers", bootstrap.as_str()),
        ("group.id", group.as_str()),
    ])
    .unwrap();
    let mut member = GroupConsumer::subscribe(config, [from.as_str()])
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(Instant::now() < deadline, "no assignment");
        if let ConsumerEvent::Assigned(p) = member.poll(Duration::from_millis(200)).await.unwrap()
            && !p.is_empty()
        {
            break;
        }
    }
    let tp = TopicPartition::new(from.as_str(), 0);
    member.commit(&[(tp, 5)]).await.unwrap();
    member.close(Duration::from_secs(10)).await;
    delete_records(kafka, &from, 15).await;

    let out = tokio::time::timeout(
        Duration::from_secs(120),
        Command::new(bin())
            .args([
                "--bootstrap",
                &bootstrap,
                "-X",
                "auto.offset.reset=none",
                "copy",
                "--from",
                &from,
                "--to",
                &to,
                "--group",
                &group,
                "--transactional-id-prefix",
                &group,
                "--idle-exit-ms",
                "60000",
            ])
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("copy did not stop within 120 s")
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    for part in [
        format!("{from}-0"),
        "position 5".into(),
        "log start 15".into(),
        "nothing skipped".into(),
    ] {
        assert!(stderr.contains(&part), "{part:?} missing from: {stderr}");
    }
    // Nothing committed: no output, the group's offset unchanged.
    let cluster = Cluster::connect(ClusterConfig::new(&bootstrap))
        .await
        .unwrap();
    let mut reader = Reader::new(
        cluster,
        ReaderConfig {
            isolation: IsolationLevel::ReadCommitted,
            ..ReaderConfig::default()
        },
    );
    assert!(reader.read_to_end(&to, &[0]).await.unwrap().is_empty());
    let committed = reader.committed_offsets(&group, &from, &[0]).await.unwrap();
    assert_eq!(committed[&0], Some(5));
}
