//! `admin::create_topics` / `admin::ensure_topic` against a real single-node
//! Kafka 4.4 (KRaft), one test per case:
//!
//! - Explicit partitions/replication factor and configs: `Created` with the
//!   values asked for, every partition led on return (`wait_for_leaders`),
//!   and DescribeConfigs shows the configs in force.
//! - Broker defaults (`None`): `Created` with the broker's partition count
//!   and replication factor. This test starts a broker of its own whose
//!   `num.partitions` is 2, so that the broker's default is told apart from
//!   an explicit count of 1 sent by the client.
//! - An existing topic: `AlreadyExists`, nothing changed; `ensure_topic`
//!   reports `created: false` with the existing partitions.
//! - Replication factor 3 on one broker and a bad config value: typed
//!   per-topic errors (INVALID_REPLICATION_FACTOR, INVALID_CONFIG) with the
//!   broker's message, while a valid topic of the same call is created.
//! - `validate_only`: `Validated` with the would-be partition count, and the
//!   topic does not exist afterwards.
//! - A name listed twice: the call fails before anything is sent.
//!
//! Every case but the broker defaults runs on the harness's shared Kafka 4.4
//! cluster, with topic names of its own.

use kafka_admin::{
    self as admin, AdminError, CreateTopicsOptions, NewTopic, TopicDetails, TopicOutcome,
};
use kafka_client::{Cluster, ClusterConfig, TopicSelection};
use kafka_producer::kafka_proto::ErrorCode;
use kafka_testcontainers::{KafkaCluster, KafkaVersion};
use kafka_testcontainers::{SharedKafka, unique_name};
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(60);

fn created(outcome: &Result<TopicOutcome, admin::CreateTopicError>) -> &TopicDetails {
    match outcome {
        Ok(TopicOutcome::Created(d)) => d,
        other => panic!("expected Created, got {other:?}"),
    }
}

fn led_partitions(cluster: &Cluster, topic: &str) -> Vec<i32> {
    let md = cluster.metadata();
    let t = md.topic(topic).expect("topic in metadata");
    assert!(
        t.partitions.values().all(|p| p.leader.is_some()),
        "{topic}: every partition has a leader on return"
    );
    t.partitions.keys().copied().collect()
}

/// Create with every partition led on return.
fn wait() -> CreateTopicsOptions {
    CreateTopicsOptions {
        timeout: TIMEOUT,
        wait_for_leaders: true,
        ..Default::default()
    }
}

/// A client of the shared Kafka 4.4 cluster (other tests use it too: names
/// are unique).
async fn shared_client() -> std::sync::Arc<Cluster> {
    let kafka = SharedKafka::Kafka44Tv2
        .cluster()
        .await
        .expect("shared Kafka 4.4");
    Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
        .await
        .expect("connect")
}

/// Invariant: a topic created with an explicit partition count, replication
/// factor and configs is `Created` with those values (the topic id and the
/// configs in force returned by CreateTopics v7), every partition is led on
/// return, and DescribeConfigs shows the configs set.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_topics_applies_explicit_settings_and_configs_kafka_4_4_tv2() {
    let cluster = shared_client().await;
    let explicit = unique_name("explicit");
    let topic = NewTopic::new(&explicit)
        .with_partitions(3)
        .with_replication_factor(1)
        .with_config("cleanup.policy", "compact")
        .with_config("retention.ms", "123456");
    let r = admin::create_topics(&cluster, std::slice::from_ref(&topic), &wait())
        .await
        .unwrap();
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].name, explicit);
    let d = created(&r[0].outcome);
    assert_eq!(d.partitions, Some(3));
    assert_eq!(d.replication_factor, Some(1));
    assert!(d.topic_id.is_some(), "CreateTopics v7 returns the topic id");
    let configs = d.configs.as_ref().expect("v5+ returns the configs");
    assert_eq!(configs["cleanup.policy"].as_deref(), Some("compact"));
    assert_eq!(led_partitions(&cluster, &explicit), [0, 1, 2]);
    let described = admin::topic_config(&cluster, &explicit, &["cleanup.policy", "retention.ms"])
        .await
        .unwrap();
    assert_eq!(described["cleanup.policy"].as_deref(), Some("compact"));
    assert_eq!(described["retention.ms"].as_deref(), Some("123456"));
}

/// Invariant: a topic created without a partition count or replication
/// factor gets the broker's `num.partitions` (2 here, not Kafka's default
/// of 1, so a client that sent 1 instead of leaving the count to the broker
/// would fail) and `default.replication.factor`, every partition led on
/// return, and the broker's default configs.
///
/// Keeps a broker of its own: `num.partitions=2` is a broker-wide setting
/// the shared clusters do not have.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_topics_applies_broker_defaults_kafka_4_4() {
    let kafka = KafkaCluster::builder()
        .version(KafkaVersion::V4_4)
        .nodes(1)
        .broker_config("num.partitions", "2")
        .start()
        .await
        .expect("start cluster");
    let cluster = Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
        .await
        .unwrap();
    let r = admin::create_topics(&cluster, &[NewTopic::new("defaults")], &wait())
        .await
        .unwrap();
    let d = created(&r[0].outcome);
    assert_eq!(d.partitions, Some(2), "the broker's num.partitions");
    assert_eq!(
        d.replication_factor,
        Some(1),
        "the broker's default.replication.factor"
    );
    assert_eq!(led_partitions(&cluster, "defaults"), [0, 1]);
    let described = admin::topic_config(&cluster, "defaults", &[])
        .await
        .unwrap();
    assert_eq!(described["cleanup.policy"].as_deref(), Some("delete"));
}

/// Invariant: creating a topic that exists is a distinct outcome,
/// `AlreadyExists` with the broker's message naming it, and leaves the
/// topic unchanged; `ensure_topic` reports an existing topic as not created,
/// with its partitions, and creates a missing one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_topics_reports_an_existing_topic_unchanged_kafka_4_4_tv2() {
    let cluster = shared_client().await;
    let existing = unique_name("existing");
    let r = admin::create_topics(
        &cluster,
        &[NewTopic::new(&existing).with_partitions(3)],
        &wait(),
    )
    .await
    .unwrap();
    created(&r[0].outcome);

    let r = admin::create_topics(
        &cluster,
        &[NewTopic::new(&existing).with_partitions(5)],
        &wait(),
    )
    .await
    .unwrap();
    match &r[0].outcome {
        Ok(TopicOutcome::AlreadyExists { message }) => {
            assert!(message.as_deref().unwrap_or_default().contains(&existing))
        }
        other => panic!("expected AlreadyExists, got {other:?}"),
    }
    let ensured = admin::ensure_topic(&cluster, &NewTopic::new(&existing), TIMEOUT)
        .await
        .unwrap();
    assert!(!ensured.created);
    assert_eq!(ensured.partitions, [0, 1, 2]);
    let ensured = admin::ensure_topic(
        &cluster,
        &NewTopic::new(unique_name("ensured")).with_partitions(4),
        TIMEOUT,
    )
    .await
    .unwrap();
    assert!(ensured.created);
    assert_eq!(ensured.partitions, [0, 1, 2, 3]);
}

/// Invariant: topics the broker refuses get typed per-topic errors with the
/// broker's message (INVALID_REPLICATION_FACTOR for 3 replicas on one
/// broker, INVALID_CONFIG for a bad config value), results in call order,
/// while a valid topic of the same call is created; `ensure_topic` returns
/// the refusal as an error, and a refused topic does not exist.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_topics_reports_per_topic_errors_and_creates_the_valid_topic_kafka_4_4_tv2() {
    let cluster = shared_client().await;
    let (three_replicas, bad_config, fine) = (
        unique_name("three-replicas"),
        unique_name("bad-config"),
        unique_name("fine"),
    );
    let r = admin::create_topics(
        &cluster,
        &[
            NewTopic::new(&three_replicas)
                .with_partitions(1)
                .with_replication_factor(3),
            NewTopic::new(&bad_config)
                .with_partitions(1)
                .with_config("cleanup.policy", "sometimes"),
            NewTopic::new(&fine).with_partitions(1),
        ],
        &wait(),
    )
    .await
    .unwrap();
    let names: Vec<&str> = r.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        [&three_replicas, &bad_config, &fine],
        "results in call order"
    );
    let e = r[0].outcome.as_ref().unwrap_err();
    assert_eq!(e.topic, three_replicas);
    assert_eq!(e.error, ErrorCode::InvalidReplicationFactor);
    assert!(e.message.is_some(), "the broker's message is kept");
    assert!(e.to_string().contains("INVALID_REPLICATION_FACTOR"), "{e}");
    let e = r[1].outcome.as_ref().unwrap_err();
    assert_eq!(e.error, ErrorCode::InvalidConfig, "{e}");
    created(&r[2].outcome);
    let err = admin::ensure_topic(
        &cluster,
        &NewTopic::new(&three_replicas)
            .with_partitions(1)
            .with_replication_factor(3),
        TIMEOUT,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&err, AdminError::Topic(e) if e.error == ErrorCode::InvalidReplicationFactor),
        "{err}"
    );
    let update = cluster
        .refresh_selection(TopicSelection::Names(vec![three_replicas.clone()]))
        .await
        .unwrap();
    assert_eq!(
        update.topic_errors,
        [(three_replicas, ErrorCode::UnknownTopicOrPartition)],
        "a refused topic is not created"
    );
}

/// Invariant: `validate_only` answers `Validated` with the would-be
/// partition count and creates nothing: the topic is unknown afterwards,
/// and a real create of it then succeeds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_topics_validate_only_creates_nothing_kafka_4_4_tv2() {
    let cluster = shared_client().await;
    let validated = unique_name("validated");
    let r = admin::create_topics(
        &cluster,
        &[NewTopic::new(&validated).with_partitions(4)],
        &CreateTopicsOptions {
            timeout: TIMEOUT,
            validate_only: true,
            wait_for_leaders: true,
        },
    )
    .await
    .unwrap();
    match &r[0].outcome {
        Ok(TopicOutcome::Validated(d)) => assert_eq!(d.partitions, Some(4)),
        other => panic!("expected Validated, got {other:?}"),
    }
    let update = cluster
        .refresh_selection(TopicSelection::Names(vec![validated.clone()]))
        .await
        .unwrap();
    assert_eq!(
        update.topic_errors,
        [(validated.clone(), ErrorCode::UnknownTopicOrPartition)]
    );
    assert!(cluster.metadata().topic(&validated).is_none());
    let r = admin::create_topics(
        &cluster,
        &[NewTopic::new(&validated).with_partitions(4)],
        &wait(),
    )
    .await
    .unwrap();
    assert_eq!(
        created(&r[0].outcome).partitions,
        Some(4),
        "not there before"
    );
}

/// Invariant: a name listed twice in one call fails the call with
/// `DuplicateTopic` before anything is sent: the topic does not exist.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_topics_refuses_a_name_listed_twice_kafka_4_4_tv2() {
    let cluster = shared_client().await;
    let twice = unique_name("twice");
    let err = admin::create_topics(
        &cluster,
        &[
            NewTopic::new(&twice),
            NewTopic::new(&twice).with_partitions(2),
        ],
        &wait(),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&err, AdminError::DuplicateTopic(n) if *n == twice),
        "{err}"
    );
    let update = cluster
        .refresh_selection(TopicSelection::Names(vec![twice.clone()]))
        .await
        .unwrap();
    assert_eq!(
        update.topic_errors,
        [(twice, ErrorCode::UnknownTopicOrPartition)]
    );
}
