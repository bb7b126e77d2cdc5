//! The Kafka sink with a registry schema (`RegistrySinkSchema` of
//! kafka-schema-registry over `KafkaSink::connect_async_schema`), EXACTLY_ONCE,
//! against the shared Kafka 4.4 cluster and a real registry (Apicurio with
//! Confluent's API). One scenario each:
//!
//! - typed records go through a checkpoint, a process that dies before
//!   notify, and a restore: exactly the checkpointed and later committed
//!   ones are visible to read_committed, each once;
//! - a value failing to serialize fails that `invoke` with a typed
//!   serialization error; closing the sink (the job's failure path) aborts
//!   the open transaction and nothing of it is visible to read_committed.

use std::sync::Arc;
use std::time::Duration;

use apache_avro::types::Value;
use bytes::Bytes;
use kafka_client::Cluster;
use kafka_consumer::IsolationLevel;
use kafka_producer::ProducerConfig;
use kafka_schema_registry::{AvroSerializer, RawBytes, RegistrySinkSchema, SerdeError};
use kafka_sink::kafka::{KafkaSink, KafkaSinkConfig, KafkaSinkError, Semantic};
use kafka_sink::{CheckpointedOperator, RecordContext, RestoredState, TwoPhaseCommitError};
use kafka_testcontainers::{KafkaCluster, SchemaRegistry, SharedKafka, unique_name, unique_topic};

use crate::support;
use crate::support::registry::{
    ORDER, decoder, not_an_order, order, read_decoded, serializer, values,
};

async fn start(name: &str) -> (&'static KafkaCluster, Arc<Cluster>, String, String) {
    let (kafka, cluster) = support::shared::client(SharedKafka::Kafka44Tv2).await;
    let topic = unique_topic(kafka, name, 1).await.expect("create topic");
    (kafka, cluster, topic, unique_name(&format!("{name}-sink")))
}

fn config(kafka: &KafkaCluster, topic: &str, prefix: &str) -> KafkaSinkConfig {
    let producer = ProducerConfig::from_properties([
        ("bootstrap.servers", kafka.bootstrap().as_str()),
        ("max.block.ms", "30000"),
        ("linger.ms", "5"),
    ])
    .unwrap();
    let mut c = KafkaSinkConfig::new(producer, topic);
    c.semantic = Semantic::ExactlyOnce;
    c.transactional_id_prefix = Some(prefix.into());
    c.transaction_timeout = Duration::from_secs(120);
    c.recovery_timeout = Duration::from_secs(30);
    c
}

/// Orders keyed by their id, values through the registry.
fn schema(url: &str) -> RegistrySinkSchema<Value, AvroSerializer> {
    RegistrySinkSchema::new(serializer(url, ORDER)).with_key(
        |v: &Value| match v {
            Value::Record(fields) => fields.iter().find_map(|(n, f)| match (n.as_str(), f) {
                ("id", Value::Long(id)) => Some(Bytes::from(format!("k{id}"))),
                _ => None,
            }),
            _ => None,
        },
        RawBytes,
    )
}

async fn connect(kafka: &KafkaCluster, topic: &str, prefix: &str, url: &str) -> KafkaSink<Value> {
    KafkaSink::connect_async_schema(config(kafka, topic, prefix), schema(url))
        .await
        .expect("connect sink")
}

/// Invariant: a process restored from checkpoint 1 of a process that died
/// before notify commits what checkpoint 1 held; the dead process's open
/// transaction is aborted; with a later checkpoint notified, read_committed
/// decodes exactly orders 1 and 3 (keys kept), once each, and
/// read_uncommitted holds each of them once too (order 2, of the aborted
/// transaction, at most once).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registry_schema_is_exactly_once_through_checkpoint_and_restore() {
    let registry = SchemaRegistry::shared().await.expect("registry");
    let url = registry.url();
    let (kafka, cluster, topic, prefix) = start("sr-sink").await;
    let mut dead = connect(kafka, &topic, &prefix, &url).await;
    dead.initialize_state(None).await.unwrap();
    dead.invoke(order(1), &RecordContext::default())
        .await
        .unwrap();
    let cp1 = dead.snapshot_state(1).await.unwrap();
    dead.invoke(order(2), &RecordContext::default())
        .await
        .unwrap();
    drop(dead);
    let mut alive = connect(kafka, &topic, &prefix, &url).await;
    alive
        .initialize_state(Some(RestoredState {
            checkpoint_id: 1,
            own: vec![cp1.clone()],
            union: vec![cp1],
            previous_parallelism: Some(1),
        }))
        .await
        .unwrap();
    alive
        .invoke(order(3), &RecordContext::default())
        .await
        .unwrap();
    alive.snapshot_state(2).await.unwrap();
    alive.notify_checkpoint_complete(2).await.unwrap();
    alive.close().await.unwrap();
    let dec = decoder(&url);
    let committed = read_decoded(&cluster, &topic, IsolationLevel::ReadCommitted, &dec).await;
    assert_eq!(values(&committed), vec![order(1), order(3)]);
    let keys: Vec<_> = committed
        .iter()
        .map(|r| r.key.as_ref().unwrap().clone())
        .collect();
    assert_eq!(keys, [Some(Bytes::from("k1")), Some(Bytes::from("k3"))]);
    let uncommitted =
        values(&read_decoded(&cluster, &topic, IsolationLevel::ReadUncommitted, &dec).await);
    for (o, at_most) in [(1, 1), (2, 1), (3, 1)] {
        let n = uncommitted.iter().filter(|v| **v == order(o)).count();
        assert!(
            n <= at_most && (o == 2 || n == 1),
            "order {o} written {n} times: {uncommitted:?}"
        );
    }
    assert!(
        uncommitted
            .iter()
            .all(|v| [order(1), order(2), order(3)].contains(v))
    );
}

/// Invariant: an input that does not match the schema fails `invoke` with
/// `KafkaSinkError::Serialization` (the registry serializer's typed encode
/// error inside) and nothing of it is sent; closing the sink aborts the
/// open transaction, so read_committed sees nothing and read_uncommitted
/// only the order sent before the failure.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_value_failing_to_serialize_fails_invoke_and_nothing_is_visible() {
    let registry = SchemaRegistry::shared().await.expect("registry");
    let url = registry.url();
    let (kafka, cluster, topic, prefix) = start("sr-sink-bad").await;
    let mut s = connect(kafka, &topic, &prefix, &url).await;
    s.initialize_state(None).await.unwrap();
    s.invoke(order(1), &RecordContext::default()).await.unwrap();
    let err = s
        .invoke(not_an_order(2), &RecordContext::default())
        .await
        .expect_err("a value without `item` was serialized");
    match &err {
        TwoPhaseCommitError::Hook {
            source: KafkaSinkError::Serialization(e),
            ..
        } => assert!(
            matches!(
                e.downcast_ref::<SerdeError>(),
                Some(SerdeError::Encode { .. })
            ),
            "{e}"
        ),
        other => panic!("not a serialization error: {other}"),
    }
    // The job fails: the sink is closed, its open transaction aborted.
    s.close().await.unwrap();
    let dec = decoder(&url);
    let committed = read_decoded(&cluster, &topic, IsolationLevel::ReadCommitted, &dec).await;
    assert!(committed.is_empty(), "{} records visible", committed.len());
    let uncommitted =
        values(&read_decoded(&cluster, &topic, IsolationLevel::ReadUncommitted, &dec).await);
    assert!(
        uncommitted.iter().all(|v| *v == order(1)),
        "{uncommitted:?}"
    );
    assert!(uncommitted.len() <= 1, "{uncommitted:?}");
}
