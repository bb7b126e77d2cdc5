//! OffsetCommit at the group's coordinator: a standalone consumer's
//! (generation −1, no member id), a classic group member's of the
//! current generation (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION,
//! REBALANCE_IN_PROGRESS otherwise), or a KIP-848 member's at its epoch
//! (STALE_MEMBER_EPOCH otherwise; an older epoch for the partitions it
//! has held since).

use super::{Call, Handle, Reply};
use crate::state::ClusterState;
use crate::state::groups::CommittedOffset;
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

impl Handle for OffsetCommitRequest {
    type Response = OffsetCommitResponse;

    fn handle(&self, state: &mut ClusterState, call: &Call) -> Reply<Self::Response> {
        let validator = match state.check_commit_member(
            &self.group_id,
            &self.member_id,
            self.group_instance_id.as_deref(),
            self.generation_id_or_member_epoch,
            false,
            call.version,
        ) {
            Ok(v) => v,
            Err(code) => return Reply::Now(self.error(state, call, code)),
        };
        Reply::Now(response(self, call.version, |t, p| {
            let name = state.request_topic(call.version >= 10, &t.name, &t.topic_id);
            let offset = CommittedOffset {
                offset: p.committed_offset,
                leader_epoch: p.committed_leader_epoch,
                metadata: p.committed_metadata.clone(),
            };
            state.commit_offset(
                &validator,
                &self.group_id,
                None,
                name.as_deref(),
                p.partition_index,
                offset,
            )
        }))
    }

    fn error(&self, _state: &ClusterState, call: &Call, code: ErrorCode) -> Self::Response {
        response(self, call.version, |_, _| code)
    }
}

/// The response with `code_of` each requested partition (topics by id
/// from v10).
fn response(
    req: &OffsetCommitRequest,
    version: i16,
    mut code_of: impl FnMut(&OffsetCommitRequestTopic, &OffsetCommitRequestPartition) -> ErrorCode,
) -> OffsetCommitResponse {
    OffsetCommitResponse {
        topics: req
            .topics
            .iter()
            .map(|t| OffsetCommitResponseTopic {
                name: if version >= 10 {
                    String::new()
                } else {
                    t.name.clone()
                },
                topic_id: if version >= 10 { t.topic_id } else { [0; 16] },
                partitions: t
                    .partitions
                    .iter()
                    .map(|p| OffsetCommitResponsePartition {
                        partition_index: p.partition_index,
                        error_code: code_of(t, p).code(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}
