//! OffsetForLeaderEpoch (KIP-101, KIP-320) from consumers: on each
//! partition's leader, the end offset of the largest leader epoch at or
//! below the one asked for (Kafka's `LeaderEpochFileCache.endOffsetFor`),
//! after checking the client's current leader epoch: older is
//! FENCED_LEADER_EPOCH, newer UNKNOWN_LEADER_EPOCH (-1 skips the check).

use super::answer_each_partition;
use crate::state::{ClusterState, Ctx};
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

fn answer(
    state: &ClusterState,
    ctx: &Ctx,
    topic: &str,
    p: &OffsetForLeaderEpochRequestPartition,
) -> OffsetForLeaderEpochResponsePartition {
    let Some(log) = state.partition(topic, p.partition) else {
        return failed(p, ErrorCode::UnknownTopicOrPartition);
    };
    if log.leader != ctx.broker {
        return failed(p, ErrorCode::NotLeaderOrFollower);
    }
    if p.current_leader_epoch >= 0 {
        if p.current_leader_epoch < log.leader_epoch {
            return failed(p, ErrorCode::FencedLeaderEpoch);
        }
        if p.current_leader_epoch > log.leader_epoch {
            return failed(p, ErrorCode::UnknownLeaderEpoch);
        }
    }
    let (leader_epoch, end_offset) = log.end_offset_for_epoch(p.leader_epoch);
    OffsetForLeaderEpochResponsePartition {
        partition: p.partition,
        leader_epoch,
        end_offset,
        ..Default::default()
    }
}

/// A partition answered with `code` alone.
fn failed(
    p: &OffsetForLeaderEpochRequestPartition,
    code: ErrorCode,
) -> OffsetForLeaderEpochResponsePartition {
    OffsetForLeaderEpochResponsePartition {
        error_code: code.code(),
        partition: p.partition,
        leader_epoch: -1,
        end_offset: -1,
        ..Default::default()
    }
}

answer_each_partition! {
    OffsetForLeaderEpochRequest.topics[topic].partitions: OffsetForLeaderEpochRequestPartition
        => OffsetForLeaderEpochResponse.topics[OffsetForLeaderEpochResponseTopic]
            .partitions: OffsetForLeaderEpochResponsePartition,
    answer: |_req, state, call, topic, p| answer(state, &call.ctx, topic, p),
    failed: failed,
}
