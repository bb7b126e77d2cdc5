//! DescribeConfigs on one broker connection: the configs of a broker or a
//! topic as the broker reports them. The admin client builds its config
//! lookups on it; the transactional producer reads
//! `transaction.max.timeout.ms` with it.
//!
//! ```no_run
//! # async fn demo(conn: &kafka_client::Connection) -> Result<(), kafka_client::RequestError> {
//! use kafka_client::requests::describe_configs::describe_configs_on;
//! let topic = describe_configs_on(conn, 2, "orders", None).await?; // 2: TOPIC
//! println!("{} configs", topic.len());
//! # Ok(()) }
//! ```

use crate::Connection;
use crate::error::RequestError;
use kafka_proto::messages::*;
use kafka_proto::{ApiKey, ErrorCode};
use std::collections::HashMap;

/// DescribeConfigs of broker `node` (BROKER resource) on an existing
/// connection to it: the values in force, defaults included. A null
/// (sensitive) value is `None`.
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), Box<dyn std::error::Error>> {
/// let (node, conn) = cluster.leader_connection("orders", 0).await?;
/// let cfg = kafka_client::requests::describe_configs::broker_config_on(&conn, node, &["min.insync.replicas"]).await?;
/// println!("{:?}", cfg.get("min.insync.replicas"));
/// # Ok(()) }
/// ```
pub async fn broker_config_on(
    conn: &Connection,
    node: i32,
    keys: &[&str],
) -> Result<HashMap<String, Option<String>>, RequestError> {
    describe_configs_on(conn, 4, &node.to_string(), Some(keys)).await // 4: BROKER
}

/// DescribeConfigs of one resource (`resource_type`: 2 TOPIC, 4 BROKER) on
/// `conn`: name to value; `keys` `None`: every config.
///
/// ```no_run
/// # async fn demo(conn: &kafka_client::Connection) -> Result<(), kafka_client::RequestError> {
/// let cfg = kafka_client::requests::describe_configs::describe_configs_on(conn, 2, "orders", Some(&["cleanup.policy"])).await?;
/// println!("{:?}", cfg.get("cleanup.policy"));
/// # Ok(()) }
/// ```
pub async fn describe_configs_on(
    conn: &Connection,
    resource_type: i8,
    resource_name: &str,
    keys: Option<&[&str]>,
) -> Result<HashMap<String, Option<String>>, RequestError> {
    Ok(
        describe_config_entries(conn, resource_type, resource_name, keys)
            .await?
            .into_iter()
            .map(|c| (c.name, c.value))
            .collect(),
    )
}

/// DescribeConfigs of one resource on `conn`: the entries as the broker
/// sent them (source, sensitivity, synonyms).
///
/// ```no_run
/// # async fn demo(conn: &kafka_client::Connection) -> Result<(), kafka_client::RequestError> {
/// for entry in kafka_client::requests::describe_configs::describe_config_entries(conn, 2, "orders", None).await? {
///     println!("{} = {:?}", entry.name, entry.value);
/// }
/// # Ok(()) }
/// ```
pub async fn describe_config_entries(
    conn: &Connection,
    resource_type: i8,
    resource_name: &str,
    keys: Option<&[&str]>,
) -> Result<Vec<DescribeConfigsResponseDescribeConfigsResourceResult>, RequestError> {
    let version = conn.versions().version_for::<DescribeConfigsRequest>()?;
    let req = DescribeConfigsRequest {
        resources: vec![DescribeConfigsRequestDescribeConfigsResource {
            resource_type,
            resource_name: resource_name.to_string(),
            configuration_keys: keys.map(|k| k.iter().map(|k| k.to_string()).collect()),
            ..Default::default()
        }],
        ..Default::default()
    };
    let resp = conn.send(&req, version).await?;
    let mut out = Vec::new();
    for r in resp.results {
        let error = ErrorCode::from(r.error_code);
        if !error.is_ok() {
            return Err(RequestError::Broker {
                api: ApiKey::DescribeConfigs,
                version,
                error,
                message: r.error_message,
            });
        }
        out.extend(r.configs);
    }
    Ok(out)
}
