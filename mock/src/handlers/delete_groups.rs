//! DeleteGroups (v0-3, Kafka 3.9 v0-2) through each group's coordinator
//! (NOT_COORDINATOR elsewhere, per group), as Kafka's
//! `GroupCoordinatorShard.deleteGroups`: GROUP_ID_NOT_FOUND for a group
//! that does not exist, NON_EMPTY_GROUP while it has members, else the
//! group goes with its committed and pending transactional offsets.

use super::answer_each;
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

/// A group's answer: deleted, or why not.
fn result(id: &str, code: ErrorCode) -> DeleteGroupsResponseDeletableGroupResult {
    DeleteGroupsResponseDeletableGroupResult {
        group_id: id.to_string(),
        error_code: code.code(),
        ..Default::default()
    }
}

answer_each! {
    DeleteGroupsRequest.groups_names => DeleteGroupsResponse.results,
    at_coordinator: Group,
    answer: |_req, state, _call, id| {
        result(id, state.delete_group(id).err().unwrap_or(ErrorCode::None))
    },
    failed: result,
}
