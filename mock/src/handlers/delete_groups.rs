//! DeleteGroups (v0-3, Kafka 3.9 v0-2) through each group's coordinator
//! (NOT_COORDINATOR elsewhere, per group), as Kafka's
//! `GroupCoordinatorShard.deleteGroups`: GROUP_ID_NOT_FOUND for a group
//! that does not exist, NON_EMPTY_GROUP while it has members, else the
//! group goes with its committed and pending transactional offsets.

use super::Reply;
use crate::state::{ClusterState, CoordinatorKind, Ctx};
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

fn result(id: &str, code: ErrorCode) -> DeleteGroupsResponseDeletableGroupResult {
    DeleteGroupsResponseDeletableGroupResult {
        group_id: id.to_string(),
        error_code: code.code(),
        ..Default::default()
    }
}

pub(crate) fn handle(
    state: &mut ClusterState,
    ctx: &Ctx,
    req: &DeleteGroupsRequest,
    _version: i16,
    _final_attempt: bool,
) -> Reply<DeleteGroupsResponse> {
    let results = req
        .groups_names
        .iter()
        .map(|id| {
            let outcome = state
                .check_coordinator(ctx, CoordinatorKind::Group, id)
                .and_then(|()| state.delete_group(id));
            result(id, outcome.err().unwrap_or(ErrorCode::None))
        })
        .collect();
    Reply::Now(DeleteGroupsResponse {
        results,
        ..Default::default()
    })
}

pub(crate) fn error(
    _state: &ClusterState,
    req: &DeleteGroupsRequest,
    _version: i16,
    code: ErrorCode,
) -> DeleteGroupsResponse {
    DeleteGroupsResponse {
        results: req.groups_names.iter().map(|id| result(id, code)).collect(),
        ..Default::default()
    }
}
