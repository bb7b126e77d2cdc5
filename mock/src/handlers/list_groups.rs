//! ListGroups (v0-5): each broker lists the groups it coordinates (the
//! client asks every broker), with their state (v4+) and type (v5+),
//! filtered by state (v4+) and type (v5+) as Kafka's
//! `GroupMetadataManager.listGroups` filters: states in any case, types
//! `classic` and `consumer` in any case (another type matches nothing).
//! A group with offsets only is an Empty classic group with protocol type
//! "" (see `state::group_admin`).

use super::Reply;
use crate::state::{ClusterState, Ctx};
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

pub(crate) fn handle(
    state: &mut ClusterState,
    ctx: &Ctx,
    req: &ListGroupsRequest,
    _version: i16,
    _final_attempt: bool,
) -> Reply<ListGroupsResponse> {
    let groups = state
        .list_groups(ctx.broker, &req.states_filter, &req.types_filter)
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

pub(crate) fn error(
    _state: &ClusterState,
    _req: &ListGroupsRequest,
    _version: i16,
    code: ErrorCode,
) -> ListGroupsResponse {
    ListGroupsResponse {
        error_code: code.code(),
        ..Default::default()
    }
}
