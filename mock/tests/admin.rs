//! kafka-mock serving this project's admin client: a transaction left open
//! by a producer that went away is found as Kafka's tools find it
//! (ListTransactions, DescribeTransactions, DescribeProducers), aborted by
//! fencing its transactional id, and read_committed then reads past it.

use kafka_admin::{self as admin, TransactionFilters};
use kafka_client::{Cluster, ClusterConfig};
use kafka_consumer::{Reader, ReaderConfig};
use kafka_mock::MockCluster;
use kafka_producer::{ProducerRecord, TopicPartition, TransactionalProducer};
use std::time::Duration;

use crate::common;

/// A transactional producer `id` whose open transaction holds `value`,
/// written to "t".
async fn open_transaction(
    mock: &MockCluster,
    id: &str,
    value: &'static str,
) -> TransactionalProducer {
    let config = common::producer_config(mock, &[("transactional.id", id)]);
    let producer = TransactionalProducer::connect(config).await.unwrap();
    producer.init_transactions().await.unwrap();
    producer.begin_transaction().unwrap();
    producer
        .send(ProducerRecord::new("t").value(value))
        .await
        .unwrap();
    producer
}

/// Invariant: an open transaction holds the last stable offset; the admin
/// APIs name it, its partitions and its first offset; aborting it moves
/// the last stable offset past it and read_committed sees only the
/// committed record.
#[tokio::test]
async fn a_lingering_transaction_is_found_described_and_aborted() {
    let mock = common::cluster(3).await;
    mock.create_topic("t", 1).unwrap();
    let committed = open_transaction(&mock, "done", "kept").await;
    committed.commit_transaction().await.unwrap();
    let lingering = open_transaction(&mock, "gone", "open").await;
    // The producer goes away with its transaction open.
    std::mem::forget(lingering);

    let cluster = Cluster::connect(ClusterConfig::new(&mock.bootstrap()))
        .await
        .unwrap();
    let open = admin::list_transactions(&cluster, &TransactionFilters::states(&["Ongoing"]))
        .await
        .unwrap();
    let ids: Vec<&str> = open.iter().map(|t| t.transactional_id.as_str()).collect();
    assert_eq!(ids, ["gone"]);
    let described = admin::describe_transactions(&cluster, &["gone"])
        .await
        .unwrap();
    assert_eq!(described[0].snapshot.state.as_str(), "Ongoing");
    let producers = admin::describe_producers(&cluster, &[TopicPartition::new("t", 0)])
        .await
        .unwrap();
    let holding: Vec<i64> = producers
        .iter()
        .filter(|p| p.current_txn_start_offset >= 0)
        .map(|p| p.current_txn_start_offset)
        .collect();
    assert_eq!(holding, [2], "after the committed record and its marker");
    assert_eq!(
        mock.offsets("t", 0),
        Some((3, 2)),
        "the open transaction holds the LSO"
    );

    admin::abort_lingering_transaction(&cluster, "gone", Duration::from_secs(10))
        .await
        .unwrap();
    let mut reader = Reader::new(cluster.clone(), ReaderConfig::default());
    reader
        .wait_until_stable("t", &[0], Duration::from_secs(10))
        .await
        .unwrap();
    let values: Vec<_> = reader
        .read_to_end("t", &[0])
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.value.unwrap())
        .collect();
    assert_eq!(values, ["kept"]);
    let config = admin::broker_config(&cluster, 1, &["transaction.max.timeout.ms"])
        .await
        .unwrap();
    assert_eq!(
        config
            .get("transaction.max.timeout.ms")
            .cloned()
            .flatten()
            .as_deref(),
        Some("900000")
    );
}
