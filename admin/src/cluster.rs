//! The cluster's id, controller and brokers ([`describe_cluster`],
//! DescribeCluster; Java's `Admin.describeCluster`).

use kafka_client::{Cluster, RequestError};
use kafka_proto::messages::{DescribeClusterRequest, DescribeClusterResponse};
use kafka_proto::{ApiKey, ErrorCode};

/// One broker of the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterBroker {
    /// The broker id.
    pub id: i32,
    /// Its advertised host.
    pub host: String,
    /// Its advertised port.
    pub port: i32,
    /// Its rack, when it has one.
    pub rack: Option<String>,
    /// True when it is fenced (asked for, and told, from DescribeCluster v2).
    pub fenced: bool,
}

/// The cluster as one broker describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterDescription {
    /// The cluster id.
    pub cluster_id: String,
    /// The controller's id as the broker reports it (under KRaft a broker
    /// names a random live broker); `None` when unknown.
    pub controller: Option<i32>,
    /// The brokers, sorted by id.
    pub brokers: Vec<ClusterBroker>,
}

/// Describes the cluster through any broker (DescribeCluster, Kafka 2.8+),
/// fenced brokers included when the broker can say (v2+).
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), kafka_client::RequestError> {
/// let d = kafka_admin::describe_cluster(cluster).await?;
/// println!("cluster {} with {} brokers", d.cluster_id, d.brokers.len());
/// # Ok(()) }
/// ```
pub async fn describe_cluster(cluster: &Cluster) -> Result<ClusterDescription, RequestError> {
    let conn = cluster.any_connection().await?;
    let version = conn.versions().version_for::<DescribeClusterRequest>()?;
    let req = DescribeClusterRequest {
        include_fenced_brokers: version >= 2,
        ..Default::default()
    };
    let resp = conn.send(&req, version).await?;
    description(version, resp)
}

fn description(
    version: i16,
    resp: DescribeClusterResponse,
) -> Result<ClusterDescription, RequestError> {
    let error = ErrorCode::from(resp.error_code);
    if !error.is_ok() {
        return Err(RequestError::Broker {
            api: ApiKey::DescribeCluster,
            version,
            error,
            message: resp.error_message,
        });
    }
    let mut brokers: Vec<ClusterBroker> = resp
        .brokers
        .into_iter()
        .map(|b| ClusterBroker {
            id: b.broker_id,
            host: b.host,
            port: b.port,
            rack: b.rack,
            fenced: b.is_fenced,
        })
        .collect();
    brokers.sort_by_key(|b| b.id);
    Ok(ClusterDescription {
        cluster_id: resp.cluster_id,
        controller: (resp.controller_id >= 0).then_some(resp.controller_id),
        brokers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_proto::messages::DescribeClusterResponseBroker;

    /// Brokers come sorted; -1 controller is none; an error is the broker's.
    #[test]
    fn the_answer_becomes_a_description() {
        let b = |id| DescribeClusterResponseBroker {
            broker_id: id,
            host: "h".into(),
            port: 9092,
            ..Default::default()
        };
        let resp = DescribeClusterResponse {
            cluster_id: "c".into(),
            controller_id: -1,
            brokers: vec![b(2), b(1)],
            ..Default::default()
        };
        let d = description(2, resp).unwrap();
        assert_eq!(d.controller, None);
        assert_eq!(d.brokers.iter().map(|b| b.id).collect::<Vec<_>>(), [1, 2]);
        let refused = DescribeClusterResponse {
            error_code: ErrorCode::ClusterAuthorizationFailed.code(),
            ..Default::default()
        };
        let e = description(2, refused).unwrap_err();
        assert_eq!(e.error_code(), Some(ErrorCode::ClusterAuthorizationFailed));
    }
}
