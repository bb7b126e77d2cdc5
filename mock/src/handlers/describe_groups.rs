//! DescribeGroups (v0-6, Kafka 3.9 v0-5) through each group's coordinator
//! (NOT_COORDINATOR elsewhere, per group): a classic group's state as Kafka
//! spells it, protocol type and members (member and instance id, client id
//! and host); the chosen protocol and each member's metadata only when the
//! group is Stable (`GroupMetadataManager.describeGroups`), the members'
//! assignments when Stable, and in the other states as last synced on
//! Kafka 4.4 (none on 3.9).
//! A group that does not exist, or is a KIP-848 consumer group, is `Dead`
//! with NONE before v6, and GROUP_ID_NOT_FOUND with a message from v6
//! (KIP-1043). A group with offsets only is Empty with protocol type "".

use super::answer_each;
use super::consumer_group_describe::GROUP_OPERATIONS;
use crate::state::ClusterState;
use crate::state::group_admin::DEAD;
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

/// A group answered with `code` alone.
fn failed(id: &str, code: ErrorCode) -> DescribeGroupsResponseDescribedGroup {
    DescribeGroupsResponseDescribedGroup {
        group_id: id.to_string(),
        error_code: code.code(),
        ..Default::default()
    }
}

/// A group's description, at its coordinator.
fn describe(
    state: &ClusterState,
    id: &str,
    operations: bool,
    version: i16,
) -> DescribeGroupsResponseDescribedGroup {
    match state.describe_classic_group(id) {
        Err(message) => DescribeGroupsResponseDescribedGroup {
            group_id: id.to_string(),
            group_state: DEAD.to_string(),
            error_code: if version >= 6 {
                ErrorCode::GroupIdNotFound.code()
            } else {
                0
            },
            error_message: (version >= 6).then_some(message),
            ..Default::default()
        },
        Ok(d) => DescribeGroupsResponseDescribedGroup {
            group_id: id.to_string(),
            group_state: d.state.to_string(),
            protocol_type: d.protocol_type,
            protocol_data: d.protocol,
            members: d
                .members
                .into_iter()
                .map(|m| DescribeGroupsResponseDescribedGroupMember {
                    member_id: m.member_id,
                    group_instance_id: m.instance_id,
                    client_id: m.client_id,
                    client_host: m.client_host,
                    member_metadata: m.metadata,
                    member_assignment: m.assignment,
                    ..Default::default()
                })
                .collect(),
            authorized_operations: if operations && version >= 3 {
                GROUP_OPERATIONS
            } else {
                i32::MIN
            },
            ..Default::default()
        },
    }
}

answer_each! {
    DescribeGroupsRequest.groups => DescribeGroupsResponse.groups,
    at_coordinator: Group,
    answer: |req, state, call, id| {
        describe(state, id, req.include_authorized_operations, call.version)
    },
    failed: failed,
}
