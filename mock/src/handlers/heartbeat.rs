//! Heartbeat (classic groups): keeps a member's session; tells it of a
//! rebalance (REBALANCE_IN_PROGRESS) or that it is no longer a member.

use super::{Call, Handle, Reply};
use crate::state::ClusterState;
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

impl Handle for HeartbeatRequest {
    type Response = HeartbeatResponse;

    fn handle(&self, state: &mut ClusterState, call: &Call) -> Reply<Self::Response> {
        let code = match state.classic.get_mut(&self.group_id) {
            None => ErrorCode::UnknownMemberId,
            Some(g) => g
                .heartbeat(
                    &self.member_id,
                    self.group_instance_id.as_deref(),
                    self.generation_id,
                    call.ctx.now_ms,
                )
                .err()
                .unwrap_or(ErrorCode::None),
        };
        Reply::Now(self.error(state, call, code))
    }

    fn error(&self, _state: &ClusterState, _call: &Call, code: ErrorCode) -> Self::Response {
        HeartbeatResponse {
            error_code: code.code(),
            ..Default::default()
        }
    }
}
