//! Fetch: batches as they were written, from the batch holding the fetch
//! offset, up to the partition's and the request's byte limits (the first
//! batch whole even when larger), below the high watermark — or below the
//! last stable offset for read_committed, with the aborted transactions
//! overlapping what is returned. With no data and `max_wait_ms` left, the
//! request waits (long poll) until a write or the deadline.
//!
//! Fetch sessions (KIP-227) are not offered: every answer carries session
//! id 0, which tells the client to send full requests; a request naming a
//! session gets FETCH_SESSION_ID_NOT_FOUND.

use super::Reply;
use crate::state::{ClusterState, Ctx};
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

fn partition_error(index: i32, code: ErrorCode) -> FetchResponsePartitionData {
    FetchResponsePartitionData {
        partition_index: index,
        error_code: code.code(),
        high_watermark: -1,
        last_stable_offset: -1,
        log_start_offset: -1,
        aborted_transactions: None,
        records: None,
        ..Default::default()
    }
}

pub(crate) fn handle(
    state: &mut ClusterState,
    ctx: &Ctx,
    req: &FetchRequest,
    version: i16,
    final_attempt: bool,
) -> Reply<FetchResponse> {
    if version >= 7 && req.session_id != 0 {
        return Reply::Now(FetchResponse {
            error_code: ErrorCode::FetchSessionIdNotFound.code(),
            ..Default::default()
        });
    }
    let read_committed = req.isolation_level == 1;
    let mut budget = usize::try_from(req.max_bytes.max(0)).unwrap_or(0);
    let mut total = 0usize;
    let mut errors = false;
    let mut responses = Vec::with_capacity(req.topics.len());
    for t in &req.topics {
        let name = if version >= 13 {
            state.topic_ids.get(&t.topic_id).cloned()
        } else {
            Some(t.topic.clone())
        };
        let partitions = t
            .partitions
            .iter()
            .map(|p| {
                let Some(name) = &name else {
                    errors = true;
                    return partition_error(p.partition, ErrorCode::UnknownTopicId);
                };
                let Some(log) = state.partition(name, p.partition) else {
                    errors = true;
                    return partition_error(p.partition, ErrorCode::UnknownTopicOrPartition);
                };
                if log.leader != ctx.broker {
                    errors = true;
                    return partition_error(p.partition, ErrorCode::NotLeaderOrFollower);
                }
                if version >= 9 && p.current_leader_epoch >= 0 {
                    if p.current_leader_epoch > log.leader_epoch {
                        errors = true;
                        return partition_error(p.partition, ErrorCode::UnknownLeaderEpoch);
                    }
                    if p.current_leader_epoch < log.leader_epoch {
                        errors = true;
                        return partition_error(p.partition, ErrorCode::FencedLeaderEpoch);
                    }
                }
                let hw = log.high_watermark();
                if p.fetch_offset > hw || p.fetch_offset < log.log_start_offset() {
                    errors = true;
                    let mut e = partition_error(p.partition, ErrorCode::OffsetOutOfRange);
                    e.high_watermark = hw;
                    e.last_stable_offset = log.last_stable_offset();
                    e.log_start_offset = if version >= 5 {
                        log.log_start_offset()
                    } else {
                        -1
                    };
                    return e;
                }
                let limit = usize::try_from(p.partition_max_bytes.max(0))
                    .unwrap_or(0)
                    .min(budget);
                let read = log.read(p.fetch_offset, limit, read_committed);
                budget = budget.saturating_sub(read.records.len());
                total += read.records.len();
                FetchResponsePartitionData {
                    partition_index: p.partition,
                    error_code: 0,
                    high_watermark: hw,
                    last_stable_offset: log.last_stable_offset(),
                    log_start_offset: if version >= 5 {
                        log.log_start_offset()
                    } else {
                        -1
                    },
                    aborted_transactions: read_committed.then(|| {
                        read.aborted
                            .iter()
                            .map(|a| FetchResponseAbortedTransaction {
                                producer_id: a.producer_id,
                                first_offset: a.first_offset,
                                ..Default::default()
                            })
                            .collect()
                    }),
                    records: Some(read.records),
                    ..Default::default()
                }
            })
            .collect();
        responses.push(FetchResponseTopic {
            topic: if version >= 13 {
                String::new()
            } else {
                t.topic.clone()
            },
            topic_id: if version >= 13 { t.topic_id } else { [0; 16] },
            partitions,
            ..Default::default()
        });
    }
    let wanted = usize::try_from(req.min_bytes.max(1)).unwrap_or(1);
    if !final_attempt && !errors && total < wanted && req.max_wait_ms > 0 {
        return Reply::Park {
            until_ms: ctx.now_ms + i64::from(req.max_wait_ms),
        };
    }
    Reply::Now(FetchResponse {
        responses,
        ..Default::default()
    })
}

pub(crate) fn error(
    _state: &ClusterState,
    req: &FetchRequest,
    version: i16,
    code: ErrorCode,
) -> FetchResponse {
    FetchResponse {
        responses: req
            .topics
            .iter()
            .map(|t| FetchResponseTopic {
                topic: if version >= 13 {
                    String::new()
                } else {
                    t.topic.clone()
                },
                topic_id: if version >= 13 { t.topic_id } else { [0; 16] },
                partitions: t
                    .partitions
                    .iter()
                    .map(|p| partition_error(p.partition, code))
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}
