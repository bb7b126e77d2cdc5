//! The typed producer (`SerializingProducer` of kafka-schema-registry)
//! over a real transactional producer and a real registry (Apicurio with
//! Confluent's API), on the shared Kafka 4.4 cluster. One scenario each:
//!
//! - a transaction of typed Avro records commits, and read_committed and
//!   read_uncommitted typed readers decode exactly them;
//! - a value that does not match its schema in the middle of a transaction
//!   fails before anything of it is enqueued; the application aborts, and
//!   neither reader shows a record of the failed value;
//! - the registry dies mid-run: records of cached schemas still serialize
//!   and are delivered, a new schema fails with a typed registry error,
//!   nothing is lost or duplicated.

use std::sync::Arc;

use bytes::Bytes;
use kafka_client::Cluster;
use kafka_consumer::IsolationLevel;
use kafka_producer::{ProducerConfig, TransactionalProducer};
use kafka_schema_registry::{Field, RawBytes, SerdeError, SerializingProducer, TypedRecord};
use kafka_testcontainers::{KafkaCluster, SchemaRegistry, SharedKafka, unique_name, unique_topic};

use crate::support;
use crate::support::registry::{
    ORDER, REFUND, decoder, not_an_order, order, read_decoded, serializer, values,
};

/// The shared cluster, a one-partition topic of this test, and a client.
async fn start(name: &str) -> (&'static KafkaCluster, Arc<Cluster>, String) {
    let (kafka, cluster) = support::shared::client(SharedKafka::Kafka44Tv2).await;
    let topic = unique_topic(kafka, name, 1).await.expect("create topic");
    (kafka, cluster, topic)
}

/// An initialized transactional producer of its own id.
async fn transactional(kafka: &KafkaCluster, name: &str) -> TransactionalProducer {
    let config = ProducerConfig::from_properties([
        ("bootstrap.servers", kafka.bootstrap().as_str()),
        ("transactional.id", unique_name(name).as_str()),
        ("max.block.ms", "30000"),
    ])
    .unwrap();
    let p = TransactionalProducer::connect(config).await.unwrap();
    p.init_transactions().await.unwrap();
    p
}

fn record(
    topic: &str,
    id: i64,
    value: apache_avro::types::Value,
) -> TypedRecord<Bytes, apache_avro::types::Value> {
    TypedRecord::new(topic, value).key(Bytes::from(format!("k{id}")))
}

/// Invariant: every typed record sent in a committed transaction is read
/// back exactly once, in send order, decoded to the value sent, by a
/// read_committed reader; a read_uncommitted reader sees the same records
/// (nothing extra was written).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_transaction_commits_and_decodes_exactly() {
    let registry = SchemaRegistry::shared().await.expect("registry");
    let url = registry.url();
    let (kafka, cluster, topic) = start("sr-txn").await;
    let producer = SerializingProducer::new(
        transactional(kafka, "sr-txn").await,
        RawBytes,
        serializer(&url, ORDER),
    );
    producer.producer().begin_transaction().unwrap();
    let mut deliveries = Vec::new();
    for id in 0..10 {
        let d = producer
            .send(record(&topic, id, order(id)))
            .await
            .expect("serializes");
        deliveries.push(d);
    }
    producer.producer().commit_transaction().await.unwrap();
    let mut offsets = Vec::new();
    for d in deliveries {
        offsets.push(d.await.expect("acknowledged").offset.expect("offset"));
    }
    assert!(
        offsets.windows(2).all(|w| w[0] < w[1]),
        "send order kept: {offsets:?}"
    );
    let expected: Vec<_> = (0..10).map(order).collect();
    let dec = decoder(&url);
    let committed = read_decoded(&cluster, &topic, IsolationLevel::ReadCommitted, &dec).await;
    assert_eq!(values(&committed), expected);
    let keys: Vec<_> = committed
        .iter()
        .map(|r| r.key.as_ref().unwrap().clone())
        .collect();
    let want: Vec<_> = (0..10)
        .map(|i| Some(Bytes::from(format!("k{i}"))))
        .collect();
    assert_eq!(keys, want);
    let uncommitted = read_decoded(&cluster, &topic, IsolationLevel::ReadUncommitted, &dec).await;
    assert_eq!(values(&uncommitted), expected);
    producer
        .into_producer()
        .close(std::time::Duration::from_secs(5))
        .await
        .ok();
}

/// Invariant: a value that does not match the schema fails `send` with a
/// typed encode error on the value before anything of it is enqueued; the
/// transaction stays abortable, and after the abort read_committed sees
/// none of the transaction and read_uncommitted only the records sent
/// before the failure (no record of the failed value exists).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_value_not_matching_fails_before_enqueue_and_the_transaction_aborts() {
    let registry = SchemaRegistry::shared().await.expect("registry");
    let url = registry.url();
    let (kafka, cluster, topic) = start("sr-bad").await;
    let producer = SerializingProducer::new(
        transactional(kafka, "sr-bad").await,
        RawBytes,
        serializer(&url, ORDER),
    );
    producer.producer().begin_transaction().unwrap();
    let mut deliveries = Vec::new();
    for id in 0..2 {
        deliveries.push(
            producer
                .send(record(&topic, id, order(id)))
                .await
                .expect("serializes"),
        );
    }
    let err = match producer.send(record(&topic, 2, not_an_order(2))).await {
        Ok(_) => panic!("a value without `item` was serialized"),
        Err(e) => e,
    };
    assert_eq!(err.field, Field::Value);
    assert!(matches!(err.source, SerdeError::Encode { .. }), "{err}");
    // The two records before it were enqueued and are acknowledged; then
    // the application aborts.
    producer.producer().flush().await;
    for d in deliveries {
        d.await.expect("acknowledged before the abort");
    }
    producer
        .producer()
        .abort_transaction()
        .await
        .expect("abortable");
    let dec = decoder(&url);
    let committed = read_decoded(&cluster, &topic, IsolationLevel::ReadCommitted, &dec).await;
    assert!(
        committed.is_empty(),
        "{} records of an aborted transaction visible",
        committed.len()
    );
    let uncommitted = read_decoded(&cluster, &topic, IsolationLevel::ReadUncommitted, &dec).await;
    assert_eq!(values(&uncommitted), vec![order(0), order(1)]);
    producer
        .into_producer()
        .close(std::time::Duration::from_secs(5))
        .await
        .ok();
}

/// Invariant: with the registry killed mid-run, a schema already cached
/// still serializes (its records are delivered and committed), a schema
/// never seen fails `send` with a typed registry error and enqueues
/// nothing, and both readers read every committed record exactly once (the
/// reader's own cache decodes them with the registry gone).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registry_killed_mid_run_cached_schemas_still_deliver() {
    let registry = SchemaRegistry::start().await.expect("private registry");
    let url = registry.url();
    let (kafka, cluster, topic) = start("sr-kill").await;
    let producer = SerializingProducer::new(
        transactional(kafka, "sr-kill").await,
        RawBytes,
        serializer(&url, ORDER),
    );
    let refunds = SerializingProducer::new(
        producer.producer().clone(),
        RawBytes,
        serializer(&url, REFUND),
    );
    let dec = decoder(&url);
    // Transaction 1 with the registry up: registers ORDER; the reader
    // fetches it by id (and caches it).
    producer.producer().begin_transaction().unwrap();
    for id in 0..5 {
        drop(
            producer
                .send(record(&topic, id, order(id)))
                .await
                .expect("serializes"),
        );
    }
    producer.producer().commit_transaction().await.unwrap();
    let first = read_decoded(&cluster, &topic, IsolationLevel::ReadCommitted, &dec).await;
    assert_eq!(values(&first), (0..5).map(order).collect::<Vec<_>>());

    registry.kill();
    producer.producer().begin_transaction().unwrap();
    let mut deliveries = Vec::new();
    for id in 5..10 {
        deliveries.push(
            producer
                .send(record(&topic, id, order(id)))
                .await
                .expect("a cached schema serializes without the registry"),
        );
    }
    let refund = apache_avro::types::Value::Record(vec![(
        "order".into(),
        apache_avro::types::Value::Long(1),
    )]);
    let err = match refunds.send(TypedRecord::new(topic.as_str(), refund)).await {
        Ok(_) => panic!("a new schema was serialized with the registry down"),
        Err(e) => e,
    };
    assert!(matches!(err.source, SerdeError::Registry(_)), "{err}");
    // Nothing of the refund was enqueued: the transaction commits.
    producer.producer().commit_transaction().await.unwrap();
    for d in deliveries {
        d.await.expect("acknowledged");
    }
    let expected: Vec<_> = (0..10).map(order).collect();
    let committed = read_decoded(&cluster, &topic, IsolationLevel::ReadCommitted, &dec).await;
    assert_eq!(values(&committed), expected);
    let uncommitted = read_decoded(&cluster, &topic, IsolationLevel::ReadUncommitted, &dec).await;
    assert_eq!(values(&uncommitted), expected);
    drop(refunds);
    producer
        .into_producer()
        .close(std::time::Duration::from_secs(5))
        .await
        .ok();
}
