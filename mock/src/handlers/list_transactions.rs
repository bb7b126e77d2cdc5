//! ListTransactions (v0-1): the transactions this broker coordinates,
//! filtered by state, producer id and (v1) how long they have been open.
//! v2's transactional id pattern (a RE2/J regex) is not served.

use super::{Call, Handle, Reply};
use crate::state::txn::TxnState;
use crate::state::{ClusterState, CoordinatorKind};
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

impl Handle for ListTransactionsRequest {
    type Response = ListTransactionsResponse;

    fn handle(&self, state: &mut ClusterState, call: &Call) -> Reply<Self::Response> {
        let unknown_state_filters: Vec<String> = self
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
            .filter(|(tid, _)| {
                state.coordinator(CoordinatorKind::Transaction, tid) == Some(call.ctx.broker)
            })
            .filter(|(_, m)| {
                self.state_filters.is_empty()
                    || self.state_filters.iter().any(|f| f == m.state.name())
            })
            .filter(|(_, m)| {
                self.producer_id_filters.is_empty()
                    || self.producer_id_filters.contains(&m.producer_id)
            })
            .filter(|(_, m)| {
                self.duration_filter < 0
                    || (m.state == TxnState::Ongoing
                        && call.ctx.now_ms - m.started_ms >= self.duration_filter)
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

    fn error(&self, _state: &ClusterState, _call: &Call, code: ErrorCode) -> Self::Response {
        ListTransactionsResponse {
            error_code: code.code(),
            ..Default::default()
        }
    }
}
