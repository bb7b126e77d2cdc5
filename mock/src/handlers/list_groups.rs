//! ListGroups (v0-5): each broker lists the groups it coordinates (the
//! client asks every broker), with their state (v4+) and type (v5+),
//! filtered by state (v4+) and type (v5+) as Kafka's
//! `GroupMetadataManager.listGroups` filters: states in any case, types
//! `classic` and `consumer` in any case (another type matches nothing).
//! A group with offsets only is an Empty classic group with protocol type
//! "" (see `state::group_admin`).

use super::{Call, Handle, Reply};
use crate::state::ClusterState;
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

impl Handle for ListGroupsRequest {
    type Response = ListGroupsResponse;

    fn handle(&self, state: &mut ClusterState, call: &Call) -> Reply<Self::Response> {
        let groups = state
            .list_groups(call.ctx.broker, &self.states_filter, &self.types_filter)
            .into_iter()
            .map(|g| ListGroupsResponseListedGroup {
                group_id: g.group_id,
                protocol_type: g.protocol_type,
                group_state: g.state.to_string(),
                group_type: g.group_type.to_string(),
                ..Default::default()
            })
            .collect();
        Reply::Now(ListGroupsResponse {
            groups,
            ..Default::default()
        })
    }

    fn error(&self, _state: &ClusterState, _call: &Call, code: ErrorCode) -> Self::Response {
        ListGroupsResponse {
            error_code: code.code(),
            ..Default::default()
        }
    }
}
