//! DeleteRecords (Kafka's `Partition.deleteRecordsOnLeader`): moves each
//! partition's log start up to the offset asked for (-1: the high
//! watermark) on its leader, answering the new low watermark. An offset
//! above the high watermark, or negative, is OFFSET_OUT_OF_RANGE; a topic
//! whose `cleanup.policy` lacks `delete` is POLICY_VIOLATION. Fetches
//! below the new log start then get OFFSET_OUT_OF_RANGE and ListOffsets
//! earliest answers it.

use super::{Call, Handle, Reply};
use crate::state::{ClusterState, Ctx};
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

/// `DeleteRecordsRequest.HIGH_WATERMARK`.
const HIGH_WATERMARK: i64 = -1;

fn delete(
    state: &mut ClusterState,
    ctx: &Ctx,
    topic: &str,
    partition: i32,
    offset: i64,
) -> Result<i64, ErrorCode> {
    let deletable = state
        .configs
        .topic_value(topic, "cleanup.policy")
        .is_none_or(|p| p.split(',').any(|x| x.trim() == "delete"));
    let log = state
        .partition_mut(topic, partition)
        .ok_or(ErrorCode::UnknownTopicOrPartition)?;
    if log.leader != ctx.broker {
        return Err(ErrorCode::NotLeaderOrFollower);
    }
    if !deletable {
        return Err(ErrorCode::PolicyViolation);
    }
    let offset = if offset == HIGH_WATERMARK {
        log.high_watermark()
    } else {
        offset
    };
    if offset < 0 || offset > log.high_watermark() {
        return Err(ErrorCode::OffsetOutOfRange);
    }
    Ok(log.delete_records_before(offset))
}

impl Handle for DeleteRecordsRequest {
    type Response = DeleteRecordsResponse;

    fn handle(&self, state: &mut ClusterState, call: &Call) -> Reply<Self::Response> {
        let resp = response(self, |topic, p| {
            delete(state, &call.ctx, topic, p.partition_index, p.offset)
        });
        // Parked fetches below the new log start answer OFFSET_OUT_OF_RANGE.
        state.appends += 1;
        Reply::Now(resp)
    }

    fn error(&self, _state: &ClusterState, _call: &Call, code: ErrorCode) -> Self::Response {
        response(self, |_, _| Err(code))
    }
}

/// The response with each requested partition's new low watermark, or
/// its error, from `outcome_of`.
fn response(
    req: &DeleteRecordsRequest,
    mut outcome_of: impl FnMut(&str, &DeleteRecordsRequestPartition) -> Result<i64, ErrorCode>,
) -> DeleteRecordsResponse {
    DeleteRecordsResponse {
        topics: req
            .topics
            .iter()
            .map(|t| DeleteRecordsResponseTopic {
                name: t.name.clone(),
                partitions: t
                    .partitions
                    .iter()
                    .map(|p| {
                        let (low_watermark, code) = match outcome_of(&t.name, p) {
                            Ok(low) => (low, ErrorCode::None),
                            Err(code) => (-1, code),
                        };
                        DeleteRecordsResponsePartition {
                            partition_index: p.partition_index,
                            low_watermark,
                            error_code: code.code(),
                            ..Default::default()
                        }
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}
