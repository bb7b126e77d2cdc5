//! DeleteGroups (v0-3, Kafka 3.9 v0-2) through each group's coordinator
//! (NOT_COORDINATOR elsewhere, per group), as Kafka's
//! `GroupCoordinatorShard.deleteGroups`: GROUP_ID_NOT_FOUND for a group
//! that does not exist, NON_EMPTY_GROUP while it has members, else the
//! group goes with its committed and pending transactional offsets.

use super::{Call, Handle, Reply};
use crate::state::{ClusterState, CoordinatorKind};
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

fn result(id: &str, code: ErrorCode) -> DeleteGroupsResponseDeletableGroupResult {
    DeleteGroupsResponseDeletableGroupResult {
        group_id: id.to_string(),
        error_code: code.code(),
        ..Default::default()
    }
}

impl Handle for DeleteGroupsRequest {
    type Response = DeleteGroupsResponse;

    fn handle(&self, state: &mut ClusterState, call: &Call) -> Reply<Self::Response> {
        let results = self
            .groups_names
            .iter()
            .map(|id| {
                let outcome = state
                    .check_coordinator(&call.ctx, CoordinatorKind::Group, id)
                    .and_then(|()| state.delete_group(id));
                result(id, outcome.err().unwrap_or(ErrorCode::None))
            })
            .collect();
        Reply::Now(DeleteGroupsResponse {
            results,
            ..Default::default()
        })
    }

    fn error(&self, _state: &ClusterState, _call: &Call, code: ErrorCode) -> Self::Response {
        DeleteGroupsResponse {
            results: self
                .groups_names
                .iter()
                .map(|id| result(id, code))
                .collect(),
            ..Default::default()
        }
    }
}
