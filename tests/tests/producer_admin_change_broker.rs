//! `admin::create_partitions`, `admin::delete_topics` and
//! `admin::topic_config_overrides` against a real single-node Kafka 4.4
//! (KRaft). One cluster, one test function, cases in order:
//!
//! 1. The configs set on a topic, and only those, are its overrides.
//! 2. `create_partitions` in one call: a topic grown to 3 partitions (each
//!    led on return), a count not above the current one refused with
//!    INVALID_PARTITIONS and a missing topic with UNKNOWN_TOPIC_OR_PARTITION,
//!    each in its own result, in order; `validate_only` changes nothing.
//! 3. `delete_topics` in one call: existing topics deleted, a missing one
//!    an `is_unknown_topic` error, in order; a name listed twice fails the
//!    call before anything is sent.

use kafka_producer::admin::{self, AdminError, CreateTopicsOptions, NewTopic};
use kafka_producer::kafka_proto::ErrorCode;
use kafka_producer::{Cluster, ClusterConfig};
use kafka_testcontainers::KafkaCluster;
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(60);

fn partition_count(cluster: &Cluster, topic: &str) -> usize {
    cluster
        .metadata()
        .topic(topic)
        .map_or(0, |t| t.partitions.len())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grow_and_delete_topics_kafka_4_4() {
    let kafka = KafkaCluster::builder()
        .start()
        .await
        .expect("start cluster");
    let cluster = Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
        .await
        .expect("connect");
    let opts = CreateTopicsOptions {
        timeout: TIMEOUT,
        wait_for_leaders: true,
        ..Default::default()
    };
    let topics = [
        NewTopic::new("grow")
            .with_partitions(1)
            .with_config("retention.ms", "7777"),
        NewTopic::new("same").with_partitions(2),
    ];
    for r in admin::create_topics(&cluster, &topics, &opts)
        .await
        .unwrap()
    {
        assert!(r.outcome.unwrap().created());
    }

    // ---- 1. overrides.
    let overrides = admin::topic_config_overrides(&cluster, "grow")
        .await
        .unwrap();
    assert_eq!(
        overrides.into_iter().collect::<Vec<_>>(),
        [("retention.ms".to_string(), Some("7777".to_string()))]
    );
    assert!(
        admin::topic_config_overrides(&cluster, "same")
            .await
            .unwrap()
            .is_empty()
    );

    // ---- 2. create_partitions.
    let results =
        admin::create_partitions(&cluster, &[("grow", 3), ("same", 2), ("missing", 2)], &opts)
            .await
            .unwrap();
    let names: Vec<&str> = results.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["grow", "same", "missing"]);
    assert_eq!(results[0].outcome, Ok(()));
    assert_eq!(partition_count(&cluster, "grow"), 3, "led on return");
    let same = results[1].outcome.as_ref().unwrap_err();
    assert_eq!(same.error, ErrorCode::InvalidPartitions, "{same}");
    assert!(same.message.is_some(), "the broker says why: {same:?}");
    let missing = results[2].outcome.as_ref().unwrap_err();
    assert!(missing.is_unknown_topic(), "{missing}");
    let dry = CreateTopicsOptions {
        validate_only: true,
        ..opts.clone()
    };
    let results = admin::create_partitions(&cluster, &[("grow", 5)], &dry)
        .await
        .unwrap();
    assert_eq!(results[0].outcome, Ok(()));
    cluster.refresh_topics(&["grow"]).await.unwrap();
    assert_eq!(partition_count(&cluster, "grow"), 3, "validate_only");

    // ---- 3. delete_topics.
    match admin::delete_topics(&cluster, &["grow", "grow"], TIMEOUT).await {
        Err(AdminError::DuplicateTopic(t)) => assert_eq!(t, "grow"),
        other => panic!("expected DuplicateTopic, got {other:?}"),
    }
    let results = admin::delete_topics(&cluster, &["grow", "missing", "same"], TIMEOUT)
        .await
        .unwrap();
    let names: Vec<&str> = results.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["grow", "missing", "same"]);
    assert_eq!(results[0].outcome, Ok(()));
    assert!(results[1].outcome.as_ref().unwrap_err().is_unknown_topic());
    assert_eq!(results[2].outcome, Ok(()));
    // Deleted for good: deleting again reports unknown topics.
    let again = admin::delete_topics(&cluster, &["grow"], TIMEOUT)
        .await
        .unwrap();
    let e = again[0].outcome.as_ref().unwrap_err();
    assert!(e.is_unknown_topic(), "{e}");
}
