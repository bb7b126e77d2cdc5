//! LeaveGroup (classic groups): the members leave at once (no session
//! timeout to wait) and the others rebalance.

use super::Reply;
use crate::state::{ClusterState, Ctx};
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

pub(crate) fn handle(
    state: &mut ClusterState,
    ctx: &Ctx,
    req: &LeaveGroupRequest,
    version: i16,
    _final_attempt: bool,
) -> Reply<LeaveGroupResponse> {
    let leaving: Vec<(String, Option<String>)> = if version >= 3 {
        req.members
            .iter()
            .map(|m| (m.member_id.clone(), m.group_instance_id.clone()))
            .collect()
    } else {
        vec![(req.member_id.clone(), None)]
    };
    let mut results = Vec::with_capacity(leaving.len());
    for (id, instance) in &leaving {
        let code = match state.classic.get_mut(&req.group_id) {
            None => ErrorCode::UnknownMemberId,
            Some(g) => match instance.as_deref().map(|i| g.static_member(i)) {
                // A static member leaves by its instance id; a member id,
                // if given, must be the one registered for it.
                Some(None) => ErrorCode::UnknownMemberId,
                Some(Some(existing)) if !id.is_empty() && *id != existing => {
                    ErrorCode::FencedInstanceId
                }
                Some(Some(existing)) => g
                    .leave(&existing, ctx.now_ms)
                    .err()
                    .unwrap_or(ErrorCode::None),
                None => g.leave(id, ctx.now_ms).err().unwrap_or(ErrorCode::None),
            },
        };
        results.push(code);
    }
    state.appends += 1;
    if version < 3 {
        return Reply::Now(error(state, req, version, results[0]));
    }
    Reply::Now(LeaveGroupResponse {
        members: leaving
            .into_iter()
            .zip(results)
            .map(
                |((member_id, instance), code)| LeaveGroupResponseMemberResponse {
                    member_id,
                    group_instance_id: instance,
                    error_code: code.code(),
                    ..Default::default()
                },
            )
            .collect(),
        ..Default::default()
    })
}

pub(crate) fn error(
    _state: &ClusterState,
    _req: &LeaveGroupRequest,
    _version: i16,
    code: ErrorCode,
) -> LeaveGroupResponse {
    LeaveGroupResponse {
        error_code: code.code(),
        ..Default::default()
    }
}
