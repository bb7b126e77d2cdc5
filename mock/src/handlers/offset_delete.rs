//! OffsetDelete (KIP-496) through the group's coordinator; see
//! `state::offset_delete` for Kafka's rules.

use super::{Call, Handle, Reply};
use crate::state::ClusterState;
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

impl Handle for OffsetDeleteRequest {
    type Response = OffsetDeleteResponse;

    fn handle(&self, state: &mut ClusterState, _call: &Call) -> Reply<Self::Response> {
        let partitions: Vec<(String, i32)> = self
            .topics
            .iter()
            .flat_map(|t| {
                t.partitions
                    .iter()
                    .map(|p| (t.name.clone(), p.partition_index))
            })
            .collect();
        Reply::Now(match state.delete_offsets(&self.group_id, &partitions) {
            Ok(codes) => response(self, ErrorCode::None, &codes),
            Err(code) => response(self, code, &[]),
        })
    }

    fn error(&self, _state: &ClusterState, _call: &Call, code: ErrorCode) -> Self::Response {
        response(self, code, &[])
    }
}
