//! OffsetDelete (KIP-496) through the group's coordinator; see
//! `state::offset_delete` for Kafka's rules.

use super::Reply;
use crate::state::{ClusterState, Ctx};
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

/// The response with `codes` (one per requested partition, in order).
fn response(
    req: &OffsetDeleteRequest,
    top: ErrorCode,
    codes: &[ErrorCode],
) -> OffsetDeleteResponse {
    let mut codes = codes.iter();
    OffsetDeleteResponse {
        error_code: top.code(),
        topics: if top == ErrorCode::None {
            req.topics
                .iter()
                .map(|t| OffsetDeleteResponseTopic {
                    name: t.name.clone(),
                    partitions: t
                        .partitions
                        .iter()
                        .map(|p| OffsetDeleteResponsePartition {
                            partition_index: p.partition_index,
                            error_code: codes.next().copied().unwrap_or(ErrorCode::None).code(),
                        })
                        .collect(),
                })
                .collect()
        } else {
            Vec::new()
        },
        ..Default::default()
    }
}

pub(crate) fn handle(
    state: &mut ClusterState,
    _ctx: &Ctx,
    req: &OffsetDeleteRequest,
    _version: i16,
    _final_attempt: bool,
) -> Reply<OffsetDeleteResponse> {
    let partitions: Vec<(String, i32)> = req
        .topics
        .iter()
        .flat_map(|t| {
            t.partitions
                .iter()
                .map(|p| (t.name.clone(), p.partition_index))
        })
        .collect();
    Reply::Now(match state.delete_offsets(&req.group_id, &partitions) {
        Ok(codes) => response(req, ErrorCode::None, &codes),
        Err(code) => response(req, code, &[]),
    })
}

pub(crate) fn error(
    _state: &ClusterState,
    req: &OffsetDeleteRequest,
    _version: i16,
    code: ErrorCode,
) -> OffsetDeleteResponse {
    response(req, code, &[])
}
