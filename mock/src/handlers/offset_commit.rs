//! OffsetCommit at the group's coordinator: a standalone consumer's
//! (generation −1, no member id), a classic group member's of the
//! current generation (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION,
//! REBALANCE_IN_PROGRESS otherwise), or a KIP-848 member's at its epoch
//! (STALE_MEMBER_EPOCH otherwise; an older epoch for the partitions it
//! has held since).

use super::{Call, Handle, Reply, offset_commit_answers};
use crate::state::ClusterState;
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

impl Handle for OffsetCommitRequest {
    type Response = OffsetCommitResponse;

    fn handle(&self, state: &mut ClusterState, call: &Call) -> Reply<Self::Response> {
        let validator = match state.check_commit_member(commit_member(self), false, call.version) {
            Ok(v) => v,
            Err(code) => return Reply::Now(self.error(state, call, code)),
        };
        Reply::Now(response(self, call.version, |t, p| {
            commit(state, &validator, self, None, call.version, t, p)
        }))
    }

    fn error(&self, _state: &ClusterState, call: &Call, code: ErrorCode) -> Self::Response {
        response(self, call.version, |_, _| code)
    }
}

offset_commit_answers! {
    OffsetCommitRequest { OffsetCommitRequestTopic { OffsetCommitRequestPartition } }
        => OffsetCommitResponse { OffsetCommitResponseTopic { OffsetCommitResponsePartition } },
    topic ids from version 10,
}
