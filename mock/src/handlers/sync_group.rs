//! SyncGroup (classic groups): the leader's assignments make the group
//! Stable; a follower's SyncGroup waits (parked) for them.

use super::{Call, Handle, Reply};
use crate::state::ClusterState;
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

impl Handle for SyncGroupRequest {
    type Response = SyncGroupResponse;

    fn handle(&self, state: &mut ClusterState, call: &Call) -> Reply<Self::Response> {
        let Some(group) = state.classic.get_mut(&self.group_id) else {
            return Reply::Now(self.error(state, call, ErrorCode::UnknownMemberId));
        };
        let assignments: Vec<_> = self
            .assignments
            .iter()
            .map(|a| (a.member_id.clone(), a.assignment.clone()))
            .collect();
        let before = group.fingerprint();
        let outcome = group.sync(
            &self.member_id,
            self.group_instance_id.as_deref(),
            self.generation_id,
            &assignments,
            call.ctx.now_ms,
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
                protocol_type: (call.version >= 5).then_some(protocol_type),
                protocol_name: if call.version >= 5 { protocol } else { None },
                assignment,
                ..Default::default()
            }),
            Ok(None) if call.final_attempt => {
                Reply::Now(self.error(state, call, ErrorCode::RebalanceInProgress))
            }
            Ok(None) => Reply::Park {
                until_ms: deadline.max(call.ctx.now_ms + 1),
            },
            Err(code) => Reply::Now(self.error(state, call, code)),
        }
    }

    fn error(&self, _state: &ClusterState, _call: &Call, code: ErrorCode) -> Self::Response {
        SyncGroupResponse {
            error_code: code.code(),
            ..Default::default()
        }
    }
}
