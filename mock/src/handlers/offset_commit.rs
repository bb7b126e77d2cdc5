//! OffsetCommit at the group's coordinator: a standalone consumer's
//! (generation −1, no member id), a classic group member's of the
//! current generation (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION,
//! REBALANCE_IN_PROGRESS otherwise), or a KIP-848 member's at its epoch
//! (STALE_MEMBER_EPOCH otherwise; an older epoch for the partitions it
//! has held since).

use super::Reply;
use crate::state::groups::CommittedOffset;
use crate::state::{ClusterState, Ctx};
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

pub(crate) fn handle(
    state: &mut ClusterState,
    _ctx: &Ctx,
    req: &OffsetCommitRequest,
    version: i16,
    _final_attempt: bool,
) -> Reply<OffsetCommitResponse> {
    let validator = match state.check_commit_member(
        &req.group_id,
        &req.member_id,
        req.group_instance_id.as_deref(),
        req.generation_id_or_member_epoch,
        false,
        version,
    ) {
        Ok(v) => v,
        Err(code) => return Reply::Now(error(state, req, version, code)),
    };
    Reply::Now(response(req, version, |t, p| {
        let name = state.request_topic(version >= 10, &t.name, &t.topic_id);
        let offset = CommittedOffset {
            offset: p.committed_offset,
            leader_epoch: p.committed_leader_epoch,
            metadata: p.committed_metadata.clone(),
        };
        state.commit_offset(
            &validator,
            &req.group_id,
            None,
            name.as_deref(),
            p.partition_index,
            offset,
        )
    }))
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

pub(crate) fn error(
    _state: &ClusterState,
    req: &OffsetCommitRequest,
    version: i16,
    code: ErrorCode,
) -> OffsetCommitResponse {
    response(req, version, |_, _| code)
}
