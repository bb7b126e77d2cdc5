//! `admin::create_topics` / `admin::ensure_topic` against a real single-node
//! Kafka 4.4 (KRaft) whose `num.partitions` is 2, so that a broker default
//! is told apart from the client's explicit value. One cluster, one test
//! function, cases in order:
//!
//! 1. Explicit partitions/replication factor and configs: `Created` with the
//!    values asked for, every partition led on return (`wait_for_leaders`),
//!    and DescribeConfigs shows the configs in force.
//! 2. Broker defaults (`None`): `Created` with the broker's 2 partitions and
//!    replication factor 1.
//! 3. An existing topic: `AlreadyExists`, nothing changed; `ensure_topic`
//!    reports `created: false` with the existing partitions.
//! 4. Replication factor 3 on one broker and a bad config value: typed
//!    per-topic errors (INVALID_REPLICATION_FACTOR, INVALID_CONFIG) with the
//!    broker's message, while a valid topic of the same call is created.
//! 5. `validate_only`: `Validated` with the would-be partition count, and the
//!    topic does not exist afterwards.
//! 6. A name listed twice: the call fails before anything is sent.

use kafka_producer::admin::{
    self, AdminError, CreateTopicsOptions, NewTopic, TopicDetails, TopicOutcome,
};
use kafka_producer::kafka_proto::ErrorCode;
use kafka_producer::{Cluster, ClusterConfig, TopicSelection};
use kafka_testcontainers::{KafkaCluster, KafkaVersion};
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_topics_kafka_4_4() {
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
    let wait = CreateTopicsOptions {
        timeout: TIMEOUT,
        wait_for_leaders: true,
        ..Default::default()
    };

    // ---- 1. explicit settings and configs
    let explicit = NewTopic::new("explicit")
        .with_partitions(3)
        .with_replication_factor(1)
        .with_config("cleanup.policy", "compact")
        .with_config("retention.ms", "123456");
    let r = admin::create_topics(&cluster, std::slice::from_ref(&explicit), &wait)
        .await
        .unwrap();
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].name, "explicit");
    let d = created(&r[0].outcome);
    assert_eq!(d.partitions, Some(3));
    assert_eq!(d.replication_factor, Some(1));
    assert!(d.topic_id.is_some(), "CreateTopics v7 returns the topic id");
    let configs = d.configs.as_ref().expect("v5+ returns the configs");
    assert_eq!(configs["cleanup.policy"].as_deref(), Some("compact"));
    assert_eq!(led_partitions(&cluster, "explicit"), [0, 1, 2]);
    let described = admin::topic_config(&cluster, "explicit", &["cleanup.policy", "retention.ms"])
        .await
        .unwrap();
    assert_eq!(described["cleanup.policy"].as_deref(), Some("compact"));
    assert_eq!(described["retention.ms"].as_deref(), Some("123456"));

    // ---- 2. broker defaults
    let r = admin::create_topics(&cluster, &[NewTopic::new("defaults")], &wait)
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

    // ---- 3. already exists: a distinct outcome, the topic left unchanged
    let r = admin::create_topics(
        &cluster,
        &[NewTopic::new("explicit").with_partitions(5)],
        &wait,
    )
    .await
    .unwrap();
    match &r[0].outcome {
        Ok(TopicOutcome::AlreadyExists { message }) => {
            assert!(message.as_deref().unwrap_or_default().contains("explicit"))
        }
        other => panic!("expected AlreadyExists, got {other:?}"),
    }
    let ensured = admin::ensure_topic(&cluster, &NewTopic::new("explicit"), TIMEOUT)
        .await
        .unwrap();
    assert!(!ensured.created);
    assert_eq!(ensured.partitions, [0, 1, 2]);
    let ensured = admin::ensure_topic(
        &cluster,
        &NewTopic::new("ensured").with_partitions(4),
        TIMEOUT,
    )
    .await
    .unwrap();
    assert!(ensured.created);
    assert_eq!(ensured.partitions, [0, 1, 2, 3]);

    // ---- 4. per-topic errors, the valid topic of the same call created
    let r = admin::create_topics(
        &cluster,
        &[
            NewTopic::new("three-replicas").with_replication_factor(3),
            NewTopic::new("bad-config").with_config("cleanup.policy", "sometimes"),
            NewTopic::new("fine").with_partitions(1),
        ],
        &wait,
    )
    .await
    .unwrap();
    let names: Vec<&str> = r.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        ["three-replicas", "bad-config", "fine"],
        "results in call order"
    );
    let e = r[0].outcome.as_ref().unwrap_err();
    assert_eq!(e.topic, "three-replicas");
    assert_eq!(e.error, ErrorCode::InvalidReplicationFactor);
    assert!(e.message.is_some(), "the broker's message is kept");
    assert!(e.to_string().contains("INVALID_REPLICATION_FACTOR"), "{e}");
    let e = r[1].outcome.as_ref().unwrap_err();
    assert_eq!(e.error, ErrorCode::InvalidConfig, "{e}");
    created(&r[2].outcome);
    let err = admin::ensure_topic(
        &cluster,
        &NewTopic::new("three-replicas").with_replication_factor(3),
        TIMEOUT,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&err, AdminError::Topic(e) if e.error == ErrorCode::InvalidReplicationFactor),
        "{err}"
    );
    let update = cluster
        .refresh_selection(TopicSelection::Names(vec!["three-replicas".into()]))
        .await
        .unwrap();
    assert_eq!(
        update.topic_errors,
        [(
            "three-replicas".to_string(),
            ErrorCode::UnknownTopicOrPartition
        )],
        "a refused topic is not created"
    );

    // ---- 5. validate_only creates nothing
    let r = admin::create_topics(
        &cluster,
        &[NewTopic::new("validated").with_partitions(4)],
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
        .refresh_selection(TopicSelection::Names(vec!["validated".into()]))
        .await
        .unwrap();
    assert_eq!(
        update.topic_errors,
        [("validated".to_string(), ErrorCode::UnknownTopicOrPartition)]
    );
    assert!(cluster.metadata().topic("validated").is_none());
    let r = admin::create_topics(
        &cluster,
        &[NewTopic::new("validated").with_partitions(4)],
        &wait,
    )
    .await
    .unwrap();
    assert_eq!(
        created(&r[0].outcome).partitions,
        Some(4),
        "not there before"
    );

    // ---- 6. a duplicate name fails the call before anything is sent
    let err = admin::create_topics(
        &cluster,
        &[
            NewTopic::new("twice"),
            NewTopic::new("twice").with_partitions(2),
        ],
        &wait,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&err, AdminError::DuplicateTopic(n) if n == "twice"),
        "{err}"
    );
    let update = cluster
        .refresh_selection(TopicSelection::Names(vec!["twice".into()]))
        .await
        .unwrap();
    assert_eq!(
        update.topic_errors,
        [("twice".to_string(), ErrorCode::UnknownTopicOrPartition)]
    );
}
