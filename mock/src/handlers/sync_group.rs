//! SyncGroup (classic groups): the leader's assignments make the group
//! Stable; a follower's SyncGroup waits (parked) for them.

use super::Reply;
use crate::state::{ClusterState, Ctx};
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

pub(crate) fn handle(
    state: &mut ClusterState,
    ctx: &Ctx,
    req: &SyncGroupRequest,
    version: i16,
    final_attempt: bool,
) -> Reply<SyncGroupResponse> {
    let Some(group) = state.classic.get_mut(&req.group_id) else {
        return Reply::Now(error(state, req, version, ErrorCode::UnknownMemberId));
    };
    let assignments: Vec<_> = req
        .assignments
        .iter()
        .map(|a| (a.member_id.clone(), a.assignment.clone()))
        .collect();
    let before = group.fingerprint();
    let outcome = group.sync(
        &req.member_id,
        req.group_instance_id.as_deref(),
        req.generation_id,
        &assignments,
        ctx.now_ms,
    );
    let changed = group.fingerprint() != before;
    let deadline = group.rebalance_deadline_ms;
    let protocol = group.protocol.clone();
    let protocol_type = group.protocol_type.clone();
    if changed {
        state.appends += 1;
    }
    match outcome {
        Ok(Some(assignment)) => Reply::Now(SyncGroupResponse {
            protocol_type: (version >= 5).then_some(protocol_type),
            protocol_name: if version >= 5 { protocol } else { None },
            assignment,
            ..Default::default()
        }),
        Ok(None) if final_attempt => {
            Reply::Now(error(state, req, version, ErrorCode::RebalanceInProgress))
        }
        Ok(None) => Reply::Park {
            until_ms: deadline.max(ctx.now_ms + 1),
        },
        Err(code) => Reply::Now(error(state, req, version, code)),
    }
}

pub(crate) fn error(
    _state: &ClusterState,
    _req: &SyncGroupRequest,
    _version: i16,
    code: ErrorCode,
) -> SyncGroupResponse {
    SyncGroupResponse {
        error_code: code.code(),
        ..Default::default()
    }
}
