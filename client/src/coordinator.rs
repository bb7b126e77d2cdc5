//! Coordinator lookup: FindCoordinator for a consumer group or a
//! transactional id, and a connection to the answer. The transaction
//! manager, the group consumer, the manual-assign consumer and the admin
//! functions all use this one lookup.

use crate::error::{ClusterError, ConnError, RequestError};
use crate::{Cluster, Connection};
use kafka_proto::messages::*;
use kafka_proto::{ApiKey, ErrorCode, Message};
use std::sync::Arc;

/// The former name of [`RequestError`], kept for one release.
///
/// The former name of [`RequestError`], kept for one release.
#[deprecated(note = "renamed RequestError: it is any request's error, not only a coordinator's")]
pub type CoordinatorError = RequestError;

/// A coordinator and a connection to it.
#[derive(Debug, Clone)]
pub struct CoordinatorConnection {
    /// The coordinator's node id.
    pub node_id: i32,
    /// A connection to it.
    pub connection: Arc<Connection>,
}

/// FindCoordinator(`key_type`, `key`) on any broker — v4+ batched
/// (`CoordinatorKeys`), v0-3 single key (a transactional id needs v1+) —
/// then a pooled connection to the answer. The one lookup of the clients:
/// the transaction manager, the group consumer, the admin functions and the
/// manual-assign consumer all use it. It does not retry: an error
/// code comes back as [`RequestError::Broker`] (retriable ones such as
/// COORDINATOR_NOT_AVAILABLE say so in [`RequestError::is_retriable`]),
/// and callers retry within their own deadline.
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), kafka_client::RequestError> {
/// use kafka_client::{find_coordinator, CoordinatorType};
/// let c = find_coordinator(cluster, CoordinatorType::Transaction, "my-txn-id").await?;
/// println!("coordinator of my-txn-id: node {}", c.node_id);
/// # Ok(()) }
/// ```
pub async fn find_coordinator(
    cluster: &Cluster,
    key_type: CoordinatorType,
    key: &str,
) -> Result<CoordinatorConnection, RequestError> {
    let any = cluster.any_connection().await?;
    let CoordinatorAnswer {
        version,
        error,
        node_id,
        host,
        port,
        message,
    } = find_coordinator_on(&any, key_type, key).await?;
    if !error.is_ok() {
        return Err(RequestError::Broker {
            api: ApiKey::FindCoordinator,
            version,
            error,
            message,
        });
    }
    let connection = connect_node(cluster, node_id, &host, port).await?;
    Ok(CoordinatorConnection {
        node_id,
        connection,
    })
}

/// FindCoordinator's answer as one broker gave it, error code included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoordinatorAnswer {
    /// The FindCoordinator version used.
    pub version: i16,
    /// The error code (`None` when found).
    pub error: ErrorCode,
    /// The coordinator's node id.
    pub node_id: i32,
    /// Its host.
    pub host: String,
    /// Its port.
    pub port: i32,
    /// The broker's error message, if any.
    pub message: Option<String>,
}

/// FindCoordinator(`key_type`, `key`) on `conn`, without connecting to the
/// answer and without turning an error code into an error: the transaction
/// manager's driver feeds the answer to its state machine.
///
/// ```no_run
/// # async fn demo(conn: &kafka_client::Connection) -> Result<(), kafka_client::RequestError> {
/// use kafka_client::{CoordinatorType, find_coordinator_on};
/// let answer = find_coordinator_on(conn, CoordinatorType::Group, "billing").await?;
/// println!("{:?}: node {}", answer.error, answer.node_id);
/// # Ok(()) }
/// ```
pub async fn find_coordinator_on(
    conn: &Connection,
    key_type: CoordinatorType,
    key: &str,
) -> Result<CoordinatorAnswer, RequestError> {
    let version = conn.versions().version_for::<FindCoordinatorRequest>()?;
    if version < 1 && key_type == CoordinatorType::Transaction {
        return Err(ConnError::UnsupportedVersion {
            api: ApiKey::FindCoordinator,
            client: FindCoordinatorRequest::VERSIONS,
            broker: conn.versions().broker_range(ApiKey::FindCoordinator),
        }
        .into());
    }
    let mut req = FindCoordinatorRequest {
        key_type: key_type.wire(),
        ..Default::default()
    };
    if version >= 4 {
        req.coordinator_keys = vec![key.to_string()];
    } else {
        req.key = key.to_string();
    }
    let resp = conn.send(&req, version).await?;
    let message = |m: Option<String>| m.filter(|m| !m.is_empty());
    Ok(if version >= 4 {
        match resp.coordinators.into_iter().find(|c| c.key == key) {
            Some(c) => CoordinatorAnswer {
                version,
                error: ErrorCode::from(c.error_code),
                node_id: c.node_id,
                host: c.host,
                port: c.port,
                message: message(c.error_message),
            },
            None => CoordinatorAnswer {
                version,
                error: ErrorCode::CoordinatorNotAvailable,
                node_id: -1,
                host: String::new(),
                port: 0,
                message: Some(format!("no coordinator for {key:?} in the response")),
            },
        }
    } else {
        CoordinatorAnswer {
            version,
            error: ErrorCode::from(resp.error_code),
            node_id: resp.node_id,
            host: resp.host,
            port: resp.port,
            message: message(resp.error_message),
        }
    })
}

async fn connect_node(
    cluster: &Cluster,
    node_id: i32,
    host: &str,
    port: i32,
) -> Result<Arc<Connection>, ClusterError> {
    if cluster.metadata().broker(node_id).is_none() && !host.is_empty() {
        cluster
            .pool()
            .set_address(node_id, &format!("{host}:{port}"));
    }
    cluster.connection(node_id).await
}
/// FindCoordinator key type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CoordinatorType {
    /// A consumer group (key type 0).
    Group,
    /// A transactional id (key type 1).
    Transaction,
}

impl CoordinatorType {
    /// The wire key type.
    pub fn wire(self) -> i8 {
        match self {
            CoordinatorType::Group => 0,
            CoordinatorType::Transaction => 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// FindCoordinator's `key_type`: 0 for a group, 1 for a transactional id.
    #[test]
    fn coordinator_type_wire_values() {
        assert_eq!(CoordinatorType::Group.wire(), 0);
        assert_eq!(CoordinatorType::Transaction.wire(), 1);
    }
}
