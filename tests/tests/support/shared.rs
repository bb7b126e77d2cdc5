//! Clients of the harness's shared clusters
//! (`kafka_testcontainers::SharedKafka`), as the tests on them begin.

use kafka_client::{Cluster, ClusterConfig};
use kafka_producer::txn::TransactionVersion;
use kafka_testcontainers::KafkaCluster;
use kafka_testcontainers::SharedKafka;
use std::sync::Arc;

/// The shared cluster of `variant` and a client of it.
pub async fn client(variant: SharedKafka) -> (&'static KafkaCluster, Arc<Cluster>) {
    let kafka = variant
        .cluster()
        .await
        .unwrap_or_else(|e| panic!("shared Kafka {variant}: {e}"));
    let cluster = Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
        .await
        .unwrap_or_else(|e| panic!("a client of the shared Kafka {variant}: {e}"));
    (kafka, cluster)
}

/// [`client`], and the transaction version the cluster finalized, checked
/// against the variant's (a transaction test must know which protocol the
/// broker speaks, not assume it).
pub async fn transactional_client(
    variant: SharedKafka,
) -> (&'static KafkaCluster, Arc<Cluster>, TransactionVersion) {
    let (kafka, cluster) = client(variant).await;
    let level = kafka
        .finalized_feature(0, "transaction.version")
        .await
        .unwrap_or_else(|e| panic!("shared Kafka {variant}: reading its features: {e}"))
        .unwrap_or(0);
    let tv = TransactionVersion::from_level(level);
    assert_eq!(
        tv == TransactionVersion::V2,
        variant.transaction_version() == Some(2),
        "{variant}: finalized transaction.version {level}"
    );
    (kafka, cluster, tv)
}
