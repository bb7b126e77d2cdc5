//! `admin::create_partitions`, `admin::delete_topics` and
//! `admin::topic_config_overrides` against a real single-node Kafka 4.4
//! (KRaft): the harness's shared cluster, with topic names of each test's
//! own. One test per case:
//!
//! - The configs set on a topic, and only those, are its overrides.
//! - `create_partitions` in one call: a topic grown to 3 partitions (each
//!   led on return), a count not above the current one refused with
//!   INVALID_PARTITIONS and a missing topic with UNKNOWN_TOPIC_OR_PARTITION,
//!   each in its own result, in order; `validate_only` changes nothing.
//! - `delete_topics` in one call: existing topics deleted, a missing one
//!   an `is_unknown_topic` error, in order; a name listed twice fails the
//!   call before anything is sent.

use kafka_admin::{self as admin, AdminError, CreateTopicsOptions, NewTopic};
use kafka_client::Cluster;
use kafka_producer::kafka_proto::ErrorCode;
use kafka_testcontainers::{SharedKafka, unique_name};

use crate::support;
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(60);

fn partition_count(cluster: &Cluster, topic: &str) -> usize {
    cluster
        .metadata()
        .topic(topic)
        .map_or(0, |t| t.partitions.len())
}

fn options() -> CreateTopicsOptions {
    CreateTopicsOptions {
        timeout: TIMEOUT,
        wait_for_leaders: true,
        ..Default::default()
    }
}

/// Names of the topics of one test: `grow` (1 partition, `retention.ms`
/// set), `same` (2 partitions, no config) and `missing` (never created).
struct Topics {
    grow: String,
    same: String,
    missing: String,
}

/// A client of the shared Kafka 4.4 cluster and the test's topics, `grow`
/// and `same` created.
async fn setup() -> (std::sync::Arc<Cluster>, Topics) {
    let (_, cluster) = support::shared::client(SharedKafka::Kafka44Tv2).await;
    let t = Topics {
        grow: unique_name("grow"),
        same: unique_name("same"),
        missing: unique_name("missing"),
    };
    let topics = [
        NewTopic::new(&t.grow)
            .with_partitions(1)
            .with_config("retention.ms", "7777"),
        NewTopic::new(&t.same).with_partitions(2),
    ];
    for r in admin::create_topics(&cluster, &topics, &options())
        .await
        .unwrap()
    {
        assert!(r.outcome.unwrap().created());
    }
    (cluster, t)
}

/// Invariant: a topic's overrides are exactly the configs set on it, and a
/// topic created without configs has none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn topic_config_overrides_are_the_configs_set_kafka_4_4_tv2() {
    let (cluster, t) = setup().await;
    let overrides = admin::topic_config_overrides(&cluster, &t.grow)
        .await
        .unwrap();
    assert_eq!(
        overrides.into_iter().collect::<Vec<_>>(),
        [("retention.ms".to_string(), Some("7777".to_string()))]
    );
    assert!(
        admin::topic_config_overrides(&cluster, &t.same)
            .await
            .unwrap()
            .is_empty()
    );
}

/// Invariant: `create_partitions` answers each topic of one call in call
/// order: a grown topic's new partitions are led on return, a count not
/// above the current one is INVALID_PARTITIONS with the broker's message, a
/// missing topic is unknown; `validate_only` changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_partitions_grows_and_refuses_per_topic_kafka_4_4_tv2() {
    let (cluster, t) = setup().await;
    let opts = options();
    let results = admin::create_partitions(
        &cluster,
        &[
            (t.grow.as_str(), 3),
            (t.same.as_str(), 2),
            (t.missing.as_str(), 2),
        ],
        &opts,
    )
    .await
    .unwrap();
    let names: Vec<&str> = results.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        [t.grow.as_str(), t.same.as_str(), t.missing.as_str()]
    );
    assert_eq!(results[0].outcome, Ok(()));
    assert_eq!(partition_count(&cluster, &t.grow), 3, "led on return");
    let same = results[1].outcome.as_ref().unwrap_err();
    assert_eq!(same.error, ErrorCode::InvalidPartitions, "{same}");
    assert!(same.message.is_some(), "the broker says why: {same:?}");
    let missing = results[2].outcome.as_ref().unwrap_err();
    assert!(missing.is_unknown_topic(), "{missing}");
    let dry = CreateTopicsOptions {
        validate_only: true,
        ..opts.clone()
    };
    let results = admin::create_partitions(&cluster, &[(t.grow.as_str(), 5)], &dry)
        .await
        .unwrap();
    assert_eq!(results[0].outcome, Ok(()));
    cluster.refresh_topics(&[t.grow.as_str()]).await.unwrap();
    assert_eq!(partition_count(&cluster, &t.grow), 3, "validate_only");
}

/// Invariant: a name listed twice fails `delete_topics` before anything is
/// sent; otherwise each topic of one call is answered in call order,
/// existing ones deleted for good (deleting again reports them unknown) and
/// a missing one unknown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_topics_deletes_per_topic_in_order_kafka_4_4_tv2() {
    let (cluster, t) = setup().await;
    match admin::delete_topics(&cluster, &[t.grow.as_str(), t.grow.as_str()], TIMEOUT).await {
        Err(AdminError::DuplicateTopic(name)) => assert_eq!(name, t.grow),
        other => panic!("expected DuplicateTopic, got {other:?}"),
    }
    let results = admin::delete_topics(
        &cluster,
        &[t.grow.as_str(), t.missing.as_str(), t.same.as_str()],
        TIMEOUT,
    )
    .await
    .unwrap();
    let names: Vec<&str> = results.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        [t.grow.as_str(), t.missing.as_str(), t.same.as_str()]
    );
    assert_eq!(results[0].outcome, Ok(()));
    assert!(results[1].outcome.as_ref().unwrap_err().is_unknown_topic());
    assert_eq!(results[2].outcome, Ok(()));
    // Deleted for good: deleting again reports unknown topics.
    let again = admin::delete_topics(&cluster, &[t.grow.as_str()], TIMEOUT)
        .await
        .unwrap();
    let e = again[0].outcome.as_ref().unwrap_err();
    assert!(e.is_unknown_topic(), "{e}");
}
