//! `admin::committed_offsets` against a real Kafka 4.4 broker (one node):
//! the harness's shared cluster, with topic and group names of the test's
//! own.
//!
//! Invariant: OffsetFetch with the topics left null returns exactly the
//! offsets the group committed, over all its topics (partitions without an
//! offset are absent), and nothing for a group that never committed.

use kafka_admin as admin;
use kafka_client::TopicPartition;
use kafka_client::{Cluster, ClusterConfig};
use kafka_consumer::{GroupConsumer, GroupConsumerConfig};
use kafka_testcontainers::{SharedKafka, unique_name};
use std::collections::BTreeMap;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn committed_offsets_returns_every_topic_the_group_committed_kafka_4_4_tv2() {
    let kafka = SharedKafka::Kafka44Tv2
        .cluster()
        .await
        .expect("shared Kafka 4.4");
    let (alpha, beta) = (unique_name("alpha"), unique_name("beta"));
    let (group, never) = (unique_name("offsets"), unique_name("never-committed"));
    kafka.create_topic(&alpha, 3, 1).await.unwrap();
    kafka.create_topic(&beta, 1, 1).await.unwrap();
    let bootstrap = kafka.bootstrap();
    let config = GroupConsumerConfig::from_properties([
        ("bootstrap.servers", bootstrap.as_str()),
        ("group.id", group.as_str()),
        ("auto.offset.reset", "earliest"),
    ])
    .unwrap();
    let mut consumer = GroupConsumer::subscribe(config, [alpha.as_str(), beta.as_str()])
        .await
        .unwrap();
    // The only member gets all four partitions.
    while consumer.assignment().len() < 4 {
        consumer.poll(Duration::from_millis(200)).await.unwrap();
    }
    let expected = BTreeMap::from([
        (TopicPartition::new(alpha.as_str(), 0), 3),
        (TopicPartition::new(alpha.as_str(), 2), 5),
        (TopicPartition::new(beta.as_str(), 0), 7),
    ]);
    let offsets: Vec<(TopicPartition, i64)> =
        expected.iter().map(|(tp, o)| (tp.clone(), *o)).collect();
    consumer.commit(&offsets).await.unwrap();

    let cluster = Cluster::connect(ClusterConfig::new(&bootstrap))
        .await
        .unwrap();
    assert_eq!(
        admin::committed_offsets(&cluster, &group).await.unwrap(),
        expected,
        "alpha-1 has no offset and is absent; both topics are there"
    );
    assert!(
        admin::committed_offsets(&cluster, &never)
            .await
            .unwrap()
            .is_empty()
    );
    consumer.close(Duration::from_secs(5)).await;
}
