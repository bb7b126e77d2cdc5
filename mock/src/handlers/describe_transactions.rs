//! DescribeTransactions: a transactional id's state, producer id and
//! epoch, timeout, start time and partitions, at its coordinator.

use super::{Call, answer_each};
use crate::state::txn::TxnState;
use crate::state::{ClusterState, CoordinatorKind};
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;
use std::collections::BTreeMap;

answer_each! {
    DescribeTransactionsRequest.transactional_ids
        => DescribeTransactionsResponse.transaction_states,
    answer: |_req, state, call, tid| describe(state, call, tid),
    failed: failed,
}

/// A transactional id's state, at its coordinator.
fn describe(
    state: &ClusterState,
    call: &Call,
    tid: &str,
) -> DescribeTransactionsResponseTransactionState {
    let mut out = DescribeTransactionsResponseTransactionState {
        transactional_id: tid.to_string(),
        producer_id: -1,
        producer_epoch: -1,
        transaction_start_time_ms: -1,
        ..Default::default()
    };
    if let Err(code) = state.check_coordinator(&call.ctx, CoordinatorKind::Transaction, tid) {
        out.error_code = code.code();
        return out;
    }
    let Some(m) = state.txns.get(tid) else {
        out.error_code = ErrorCode::TransactionalIdNotFound.code();
        return out;
    };
    out.transaction_state = m.state.name().into();
    out.transaction_timeout_ms = m.timeout_ms;
    out.producer_id = m.producer_id;
    out.producer_epoch = m.epoch;
    if m.state != TxnState::Empty {
        out.transaction_start_time_ms = m.started_ms;
    }
    let mut by_topic: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
    for (t, p) in &m.partitions {
        by_topic.entry(t).or_default().push(*p);
    }
    out.topics = by_topic
        .into_iter()
        .map(|(t, partitions)| DescribeTransactionsResponseTopicData {
            topic: t.into(),
            partitions,
            ..Default::default()
        })
        .collect();
    out
}

/// A transactional id answered with `code` alone.
fn failed(tid: &str, code: ErrorCode) -> DescribeTransactionsResponseTransactionState {
    DescribeTransactionsResponseTransactionState {
        error_code: code.code(),
        transactional_id: tid.to_string(),
        ..Default::default()
    }
}
