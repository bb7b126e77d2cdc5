//! DescribeProducers: the idempotent producers a partition leader keeps
//! state for (epoch, last sequence, coordinator epoch, and the first
//! offset of an open transaction: how lingering transactions are found).

use super::{Call, Handle, Reply};
use crate::state::ClusterState;
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

impl Handle for DescribeProducersRequest {
    type Response = DescribeProducersResponse;

    fn handle(&self, state: &mut ClusterState, call: &Call) -> Reply<Self::Response> {
        Reply::Now(per_partition(self, |topic, p| {
            let mut out = DescribeProducersResponsePartitionResponse {
                partition_index: *p,
                ..Default::default()
            };
            match state.partition(topic, *p) {
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
        }))
    }

    fn error(&self, _state: &ClusterState, _call: &Call, code: ErrorCode) -> Self::Response {
        per_partition(self, |_, p| DescribeProducersResponsePartitionResponse {
            partition_index: *p,
            error_code: code.code(),
            ..Default::default()
        })
    }
}

/// The response with `f`'s answer for each partition asked for.
fn per_partition(
    req: &DescribeProducersRequest,
    mut f: impl FnMut(&str, &i32) -> DescribeProducersResponsePartitionResponse,
) -> DescribeProducersResponse {
    DescribeProducersResponse {
        topics: req
            .topics
            .iter()
            .map(|t| DescribeProducersResponseTopicResponse {
                name: t.name.clone(),
                partitions: t.partition_indexes.iter().map(|p| f(&t.name, p)).collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}
