//! Heartbeat (classic groups): keeps a member's session; tells it of a
//! rebalance (REBALANCE_IN_PROGRESS) or that it is no longer a member.

use super::Reply;
use crate::state::{ClusterState, Ctx};
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

pub(crate) fn handle(
    state: &mut ClusterState,
    ctx: &Ctx,
    req: &HeartbeatRequest,
    version: i16,
    _final_attempt: bool,
) -> Reply<HeartbeatResponse> {
    let code = match state.classic.get_mut(&req.group_id) {
        None => ErrorCode::UnknownMemberId,
        Some(g) => g
            .heartbeat(
                &req.member_id,
                req.group_instance_id.as_deref(),
                req.generation_id,
                ctx.now_ms,
            )
            .err()
            .unwrap_or(ErrorCode::None),
    };
    Reply::Now(error(state, req, version, code))
}

pub(crate) fn error(
    _state: &ClusterState,
    _req: &HeartbeatRequest,
    _version: i16,
    code: ErrorCode,
) -> HeartbeatResponse {
    HeartbeatResponse {
        error_code: code.code(),
        ..Default::default()
    }
}
