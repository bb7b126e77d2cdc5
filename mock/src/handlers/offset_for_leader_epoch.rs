//! OffsetForLeaderEpoch (KIP-101, KIP-320) from consumers: on each
//! partition's leader, the end offset of the largest leader epoch at or
//! below the one asked for (Kafka's `LeaderEpochFileCache.endOffsetFor`),
//! after checking the client's current leader epoch: older is
//! FENCED_LEADER_EPOCH, newer UNKNOWN_LEADER_EPOCH (-1 skips the check).

use super::{Call, Handle, Reply};
use crate::state::{ClusterState, Ctx};
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

fn answer(
    state: &ClusterState,
    ctx: &Ctx,
    topic: &str,
    p: &OffsetForLeaderEpochRequestPartition,
) -> OffsetForLeaderEpochResponsePartition {
    let failed = |code: ErrorCode| OffsetForLeaderEpochResponsePartition {
        error_code: code.code(),
        partition: p.partition,
        leader_epoch: -1,
        end_offset: -1,
        ..Default::default()
    };
    let Some(log) = state.partition(topic, p.partition) else {
        return failed(ErrorCode::UnknownTopicOrPartition);
    };
    if log.leader != ctx.broker {
        return failed(ErrorCode::NotLeaderOrFollower);
    }
    if p.current_leader_epoch >= 0 {
        if p.current_leader_epoch < log.leader_epoch {
            return failed(ErrorCode::FencedLeaderEpoch);
        }
        if p.current_leader_epoch > log.leader_epoch {
            return failed(ErrorCode::UnknownLeaderEpoch);
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

fn per_partition(
    req: &OffsetForLeaderEpochRequest,
    mut f: impl FnMut(
        &str,
        &OffsetForLeaderEpochRequestPartition,
    ) -> OffsetForLeaderEpochResponsePartition,
) -> OffsetForLeaderEpochResponse {
    OffsetForLeaderEpochResponse {
        topics: req
            .topics
            .iter()
            .map(|t| OffsetForLeaderEpochResponseTopic {
                topic: t.topic.clone(),
                partitions: t.partitions.iter().map(|p| f(&t.topic, p)).collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

impl Handle for OffsetForLeaderEpochRequest {
    type Response = OffsetForLeaderEpochResponse;

    fn handle(&self, state: &mut ClusterState, call: &Call) -> Reply<Self::Response> {
        Reply::Now(per_partition(self, |t, p| answer(state, &call.ctx, t, p)))
    }

    fn error(&self, _state: &ClusterState, _call: &Call, code: ErrorCode) -> Self::Response {
        per_partition(self, |_, p| OffsetForLeaderEpochResponsePartition {
            error_code: code.code(),
            partition: p.partition,
            leader_epoch: -1,
            end_offset: -1,
            ..Default::default()
        })
    }
}
