//! DescribeProducers: the idempotent producers a partition leader keeps
//! state for (epoch, last sequence, coordinator epoch, and the first
//! offset of an open transaction: how lingering transactions are found).

use super::{Call, answer_each_partition};
use crate::state::ClusterState;
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

answer_each_partition! {
    DescribeProducersRequest.topics[name].partition_indexes: i32
        => DescribeProducersResponse.topics[DescribeProducersResponseTopicResponse]
            .partitions: DescribeProducersResponsePartitionResponse,
    answer: |_req, state, call, topic, p| describe(state, call, topic, *p),
    failed: failed,
}

/// The producers partition `p` of `topic` keeps state for, on its leader.
fn describe(
    state: &ClusterState,
    call: &Call,
    topic: &str,
    p: i32,
) -> DescribeProducersResponsePartitionResponse {
    let mut out = DescribeProducersResponsePartitionResponse {
        partition_index: p,
        ..Default::default()
    };
    match state.partition(topic, p) {
        None => out.error_code = ErrorCode::UnknownTopicOrPartition.code(),
        Some(log) if log.leader != call.ctx.broker => {
            out.error_code = ErrorCode::NotLeaderOrFollower.code()
        }
        Some(log) => {
            let mut producers: Vec<_> = log
                .producers()
                .map(|(pid, e)| DescribeProducersResponseProducerState {
                    producer_id: pid,
                    producer_epoch: i32::from(e.epoch),
                    last_sequence: e.last_seq(),
                    coordinator_epoch: e.coordinator_epoch,
                    current_txn_start_offset: e.txn_first_offset.unwrap_or(-1),
                    ..Default::default()
                })
                .collect();
            producers.sort_by_key(|p| p.producer_id);
            out.active_producers = producers;
        }
    }
    out
}

/// A partition answered with `code` alone.
fn failed(p: &i32, code: ErrorCode) -> DescribeProducersResponsePartitionResponse {
    DescribeProducersResponsePartitionResponse {
        partition_index: *p,
        error_code: code.code(),
        ..Default::default()
    }
}
