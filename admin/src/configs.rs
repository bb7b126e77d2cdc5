//! Broker and topic configs (DescribeConfigs), through
//! [`kafka_client::requests::describe_configs`].

use kafka_client::requests::describe_configs::{
    broker_config_on, describe_config_entries, describe_configs_on,
};
use kafka_client::{Cluster, RequestError};
use std::collections::{BTreeMap, HashMap};

/// DescribeConfigs of broker `node` (BROKER resource) for `keys`; a key the
/// broker does not know is absent; a null value is `None`.
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), Box<dyn std::error::Error>> {
/// let node = *cluster.metadata().brokers().keys().next().expect("a broker");
/// let cfg = kafka_admin::broker_config(cluster, node, &["transaction.max.timeout.ms"]).await?;
/// println!("max timeout: {:?}", cfg.get("transaction.max.timeout.ms"));
/// # Ok(()) }
/// ```
pub async fn broker_config(
    cluster: &Cluster,
    node: i32,
    keys: &[&str],
) -> Result<HashMap<String, Option<String>>, RequestError> {
    let conn = cluster.connection(node).await?;
    broker_config_on(&conn, node, keys).await
}

/// DescribeConfigs of `topic` (TOPIC resource) on any broker: the values in
/// force, defaults included; `keys` empty: every config. A null (sensitive)
/// value is `None`.
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), kafka_client::RequestError> {
/// let cfg = kafka_admin::topic_config(cluster, "orders", &["cleanup.policy", "retention.ms"]).await?;
/// println!("cleanup.policy = {:?}", cfg.get("cleanup.policy"));
/// # Ok(()) }
/// ```
pub async fn topic_config(
    cluster: &Cluster,
    topic: &str,
    keys: &[&str],
) -> Result<HashMap<String, Option<String>>, RequestError> {
    let conn = cluster.any_connection().await?;
    let keys = (!keys.is_empty()).then_some(keys);
    describe_configs_on(&conn, 2, topic, keys).await // 2: TOPIC
}

/// DescribeConfigs of `topic` on any broker, only the configs set on the
/// topic itself (source DYNAMIC_TOPIC_CONFIG), as Kafka's `kafka-topics.sh
/// --describe` shows them. A sensitive value is `None`.
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), kafka_client::RequestError> {
/// for (k, v) in kafka_admin::topic_config_overrides(cluster, "orders").await? {
///     println!("{k}={}", v.as_deref().unwrap_or("<sensitive>"));
/// }
/// # Ok(()) }
/// ```
pub async fn topic_config_overrides(
    cluster: &Cluster,
    topic: &str,
) -> Result<BTreeMap<String, Option<String>>, RequestError> {
    const DYNAMIC_TOPIC_CONFIG: i8 = 1;
    let conn = cluster.any_connection().await?;
    Ok(describe_config_entries(&conn, 2, topic, None) // 2: TOPIC
        .await?
        .into_iter()
        .filter(|c| c.config_source == DYNAMIC_TOPIC_CONFIG)
        .map(|c| (c.name, c.value))
        .collect())
}
