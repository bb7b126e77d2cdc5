//! AddPartitionsToTxn: v0-3 from a transactional producer (transaction
//! version 1) adds partitions to its open transaction, opening it; v4-5
//! (from brokers) carries several transactions and may only verify.
//! Unknown partitions fail with UNKNOWN_TOPIC_OR_PARTITION and the others
//! of the request with OPERATION_NOT_ATTEMPTED, adding nothing.

use super::{Call, Handle, Reply, fenced_code};
use crate::state::txn::TxnProducer;
use crate::state::{ClusterState, Ctx};
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

fn results(
    topics: &[AddPartitionsToTxnRequestTopic],
    code_of: impl Fn(&str, i32) -> ErrorCode,
) -> Vec<AddPartitionsToTxnResponseTopicResult> {
    topics
        .iter()
        .map(|t| AddPartitionsToTxnResponseTopicResult {
            name: t.name.clone(),
            results_by_partition: t
                .partitions
                .iter()
                .map(|p| AddPartitionsToTxnResponsePartitionResult {
                    partition_index: *p,
                    partition_error_code: code_of(&t.name, *p).code(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        })
        .collect()
}

fn add(
    state: &mut ClusterState,
    ctx: &Ctx,
    producer: TxnProducer<'_>,
    topics: &[AddPartitionsToTxnRequestTopic],
    verify_only: bool,
    tv2: bool,
) -> Vec<AddPartitionsToTxnResponseTopicResult> {
    let unknown: Vec<(String, i32)> = topics
        .iter()
        .flat_map(|t| t.partitions.iter().map(move |p| (t.name.clone(), *p)))
        .filter(|(t, p)| state.partition(t, *p).is_none())
        .collect();
    if !unknown.is_empty() {
        return results(topics, |t, p| {
            if unknown.iter().any(|(ut, up)| ut == t && *up == p) {
                ErrorCode::UnknownTopicOrPartition
            } else {
                ErrorCode::OperationNotAttempted
            }
        });
    }
    let all: Vec<(String, i32)> = topics
        .iter()
        .flat_map(|t| t.partitions.iter().map(move |p| (t.name.clone(), *p)))
        .collect();
    let outcome = state.add_to_txn(ctx, producer, &all, None, tv2, verify_only);
    let code = outcome.err().unwrap_or(ErrorCode::None);
    results(topics, |_, _| code)
}

impl Handle for AddPartitionsToTxnRequest {
    type Response = AddPartitionsToTxnResponse;

    fn handle(&self, state: &mut ClusterState, call: &Call) -> Reply<Self::Response> {
        if call.version <= 3 {
            let producer = TxnProducer {
                tid: &self.v3_and_below_transactional_id,
                pid: self.v3_and_below_producer_id,
                epoch: self.v3_and_below_producer_epoch,
                fenced: fenced_code(call.version, 2),
            };
            let r = add(
                state,
                &call.ctx,
                producer,
                &self.v3_and_below_topics,
                false,
                false,
            );
            return Reply::Now(AddPartitionsToTxnResponse {
                results_by_topic_v3_and_below: r,
                ..Default::default()
            });
        }
        let results_by_transaction = self
            .transactions
            .iter()
            .map(|t| {
                let producer = TxnProducer {
                    tid: &t.transactional_id,
                    pid: t.producer_id,
                    epoch: t.producer_epoch,
                    fenced: ErrorCode::ProducerFenced,
                };
                AddPartitionsToTxnResponseResult {
                    transactional_id: t.transactional_id.clone(),
                    topic_results: add(state, &call.ctx, producer, &t.topics, t.verify_only, true),
                    ..Default::default()
                }
            })
            .collect();
        Reply::Now(AddPartitionsToTxnResponse {
            results_by_transaction,
            ..Default::default()
        })
    }

    fn error(&self, _state: &ClusterState, call: &Call, code: ErrorCode) -> Self::Response {
        if call.version <= 3 {
            return AddPartitionsToTxnResponse {
                results_by_topic_v3_and_below: results(&self.v3_and_below_topics, |_, _| code),
                ..Default::default()
            };
        }
        AddPartitionsToTxnResponse {
            error_code: code.code(),
            ..Default::default()
        }
    }
}
