//! AddOffsetsToTxn (transaction version 1): adds a group's offsets to the
//! open transaction, opening it; TxnOffsetCommit then writes them.

use super::{Call, Handle, Reply, fenced_code};
use crate::state::ClusterState;
use crate::state::txn::TxnProducer;
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

impl Handle for AddOffsetsToTxnRequest {
    type Response = AddOffsetsToTxnResponse;

    fn handle(&self, state: &mut ClusterState, call: &Call) -> Reply<Self::Response> {
        let producer = TxnProducer {
            tid: &self.transactional_id,
            pid: self.producer_id,
            epoch: self.producer_epoch,
            fenced: fenced_code(call.version, 2),
        };
        let code = state
            .add_to_txn(&call.ctx, producer, &[], Some(&self.group_id), false, false)
            .err()
            .unwrap_or(ErrorCode::None);
        Reply::Now(self.error(state, call, code))
    }

    fn error(&self, _state: &ClusterState, _call: &Call, code: ErrorCode) -> Self::Response {
        AddOffsetsToTxnResponse {
            error_code: code.code(),
            ..Default::default()
        }
    }
}
