//! ListTransactions (v0-1): the transactions this broker coordinates,
//! filtered by state, producer id and (v1) how long they have been open.
//! v2's transactional id pattern (a RE2/J regex) is not served.

use super::Reply;
use crate::state::txn::TxnState;
use crate::state::{ClusterState, CoordinatorKind, Ctx};
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

const STATES: [TxnState; 6] = [
    TxnState::Empty,
    TxnState::Ongoing,
    TxnState::PrepareCommit,
    TxnState::PrepareAbort,
    TxnState::CompleteCommit,
    TxnState::CompleteAbort,
];

pub(crate) fn handle(
    state: &mut ClusterState,
    ctx: &Ctx,
    req: &ListTransactionsRequest,
    _version: i16,
    _final_attempt: bool,
) -> Reply<ListTransactionsResponse> {
    let unknown_state_filters: Vec<String> = req
        .state_filters
        .iter()
        .filter(|f| {
            !STATES.iter().any(|s| s.name() == f.as_str())
                && f.as_str() != "PrepareEpochFence"
                && f.as_str() != "Dead"
        })
        .cloned()
        .collect();
    let mut transaction_states: Vec<ListTransactionsResponseTransactionState> = state
        .txns
        .iter()
        .filter(|(tid, _)| state.coordinator(CoordinatorKind::Transaction, tid) == Some(ctx.broker))
        .filter(|(_, m)| {
            req.state_filters.is_empty() || req.state_filters.iter().any(|f| f == m.state.name())
        })
        .filter(|(_, m)| {
            req.producer_id_filters.is_empty() || req.producer_id_filters.contains(&m.producer_id)
        })
        .filter(|(_, m)| {
            req.duration_filter < 0
                || (m.state == TxnState::Ongoing
                    && ctx.now_ms - m.started_ms >= req.duration_filter)
        })
        .map(|(tid, m)| ListTransactionsResponseTransactionState {
            transactional_id: tid.clone(),
            producer_id: m.producer_id,
            transaction_state: m.state.name().into(),
            ..Default::default()
        })
        .collect();
    transaction_states.sort_by(|a, b| a.transactional_id.cmp(&b.transactional_id));
    Reply::Now(ListTransactionsResponse {
        unknown_state_filters,
        transaction_states,
        ..Default::default()
    })
}

pub(crate) fn error(
    _state: &ClusterState,
    _req: &ListTransactionsRequest,
    _version: i16,
    code: ErrorCode,
) -> ListTransactionsResponse {
    ListTransactionsResponse {
        error_code: code.code(),
        ..Default::default()
    }
}
