//! LeaveGroup (classic groups): the members leave at once (no session
//! timeout to wait) and the others rebalance.

use super::{Call, Handle, Reply};
use crate::state::ClusterState;
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

impl Handle for LeaveGroupRequest {
    type Response = LeaveGroupResponse;

    fn handle(&self, state: &mut ClusterState, call: &Call) -> Reply<Self::Response> {
        let leaving: Vec<(String, Option<String>)> = if call.version >= 3 {
            self.members
                .iter()
                .map(|m| (m.member_id.clone(), m.group_instance_id.clone()))
                .collect()
        } else {
            vec![(self.member_id.clone(), None)]
        };
        let mut results = Vec::with_capacity(leaving.len());
        for (id, instance) in &leaving {
            let code = match state.classic.get_mut(&self.group_id) {
                None => ErrorCode::UnknownMemberId,
                Some(g) => match instance.as_deref().map(|i| g.static_member(i)) {
                    // A static member leaves by its instance id; a member id,
                    // if given, must be the one registered for it.
                    Some(None) => ErrorCode::UnknownMemberId,
                    Some(Some(existing)) if !id.is_empty() && *id != existing => {
                        ErrorCode::FencedInstanceId
                    }
                    Some(Some(existing)) => g
                        .leave(&existing, call.ctx.now_ms)
                        .err()
                        .unwrap_or(ErrorCode::None),
                    None => g
                        .leave(id, call.ctx.now_ms)
                        .err()
                        .unwrap_or(ErrorCode::None),
                },
            };
            results.push(code);
        }
        state.appends += 1;
        if call.version < 3 {
            return Reply::Now(self.error(state, call, results[0]));
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

    fn error(&self, _state: &ClusterState, _call: &Call, code: ErrorCode) -> Self::Response {
        LeaveGroupResponse {
            error_code: code.code(),
            ..Default::default()
        }
    }
}
