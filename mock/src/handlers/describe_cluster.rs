//! DescribeCluster (KIP-700): the cluster id, the live brokers with their
//! endpoints, and a controller id (a KRaft broker names a live broker, as
//! it cannot reach the controllers' quorum from the client's side). The
//! cluster's authorized operations are every cluster operation (the mock
//! allows everything), when asked for.

use super::{Call, Handle, Reply};
use crate::state::ClusterState;
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

/// The `AclOperation` bits of the CLUSTER resource: CREATE, ALTER,
/// DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS,
/// IDEMPOTENT_WRITE.
const CLUSTER_OPERATIONS: i32 =
    (1 << 5) | (1 << 7) | (1 << 8) | (1 << 9) | (1 << 10) | (1 << 11) | (1 << 12);

impl Handle for DescribeClusterRequest {
    type Response = DescribeClusterResponse;

    fn handle(&self, state: &mut ClusterState, call: &Call) -> Reply<Self::Response> {
        let brokers: Vec<DescribeClusterResponseBroker> = state
            .brokers
            .iter()
            .filter(|(_, b)| b.alive)
            .map(|(id, b)| DescribeClusterResponseBroker {
                broker_id: *id,
                host: b.host.clone(),
                port: b.port,
                rack: None,
                ..Default::default()
            })
            .collect();
        Reply::Now(DescribeClusterResponse {
            cluster_id: state.config.cluster_id.clone(),
            controller_id: call.ctx.broker,
            brokers,
            cluster_authorized_operations: if self.include_cluster_authorized_operations {
                CLUSTER_OPERATIONS
            } else {
                i32::MIN
            },
            ..Default::default()
        })
    }

    fn error(&self, _state: &ClusterState, _call: &Call, code: ErrorCode) -> Self::Response {
        DescribeClusterResponse {
            error_code: code.code(),
            ..Default::default()
        }
    }
}
