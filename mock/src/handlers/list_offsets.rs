//! ListOffsets: the latest offset (the high watermark, or the last stable
//! offset for read_committed), the earliest (the log start), the offset of
//! the largest timestamp (-3), or the first offset at or after a timestamp.

use super::answer_each_partition;
use crate::state::{ClusterState, Ctx};
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

const LATEST: i64 = -1;
const EARLIEST: i64 = -2;
const MAX_TIMESTAMP: i64 = -3;
const EARLIEST_LOCAL: i64 = -4;

fn answer(
    state: &ClusterState,
    ctx: &Ctx,
    topic: &str,
    p: &ListOffsetsRequestPartition,
    read_committed: bool,
    version: i16,
) -> ListOffsetsResponsePartition {
    let mut out = ListOffsetsResponsePartition {
        partition_index: p.partition_index,
        ..Default::default()
    };
    let Some(log) = state.partition(topic, p.partition_index) else {
        out.error_code = ErrorCode::UnknownTopicOrPartition.code();
        return out;
    };
    if log.leader != ctx.broker {
        out.error_code = ErrorCode::NotLeaderOrFollower.code();
        return out;
    }
    let upper = if read_committed {
        log.last_stable_offset()
    } else {
        log.high_watermark()
    };
    // A search by time looks through the whole log, then answers only an
    // offset below the last one the isolation level may read (Kafka's
    // `Partition.fetchOffsetForTimestamp`): nothing (-1, epoch -1) when
    // the record found is above it.
    let hw = log.high_watermark();
    let found = match p.timestamp {
        LATEST => Some((upper, -1)),
        EARLIEST | EARLIEST_LOCAL => Some((log.log_start_offset(), -1)),
        MAX_TIMESTAMP => log.max_timestamp(hw).filter(|(o, _)| *o < upper),
        ts if ts >= 0 => log.offset_for_timestamp(ts, hw).filter(|(o, _)| *o < upper),
        _ => {
            out.error_code = ErrorCode::InvalidRequest.code();
            return out;
        }
    };
    let Some((offset, timestamp)) = found else {
        out.offset = -1;
        out.timestamp = -1;
        return out;
    };
    out.offset = offset;
    out.timestamp = timestamp;
    if version >= 4 {
        out.leader_epoch = log.leader_epoch;
    }
    out
}

answer_each_partition! {
    ListOffsetsRequest.topics[name].partitions: ListOffsetsRequestPartition
        => ListOffsetsResponse.topics[ListOffsetsResponseTopic]
            .partitions: ListOffsetsResponsePartition,
    answer: |req, state, call, topic, p| {
        let read_committed = call.version >= 2 && req.isolation_level == 1;
        answer(state, &call.ctx, topic, p, read_committed, call.version)
    },
    failed: failed,
}

/// A partition answered with `code` alone.
fn failed(p: &ListOffsetsRequestPartition, code: ErrorCode) -> ListOffsetsResponsePartition {
    ListOffsetsResponsePartition {
        partition_index: p.partition_index,
        error_code: code.code(),
        ..Default::default()
    }
}
