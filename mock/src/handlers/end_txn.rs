//! EndTxn: commits or aborts the open transaction (v5: transaction
//! version 2, answering with the producer id and epoch of the next
//! transaction). See the transaction coordinator for every outcome.

use super::{Call, Handle, Reply, fenced_code};
use crate::state::ClusterState;
use crate::state::txn::TxnProducer;
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

impl Handle for EndTxnRequest {
    type Response = EndTxnResponse;

    fn handle(&self, state: &mut ClusterState, call: &Call) -> Reply<Self::Response> {
        let producer = TxnProducer {
            tid: &self.transactional_id,
            pid: self.producer_id,
            epoch: self.producer_epoch,
            fenced: fenced_code(call.version, 2),
        };
        let tv2 = call.version >= 5 && state.tv2();
        Reply::Now(
            match state.end_txn(&call.ctx, producer, self.committed, tv2) {
                Ok((producer_id, producer_epoch)) if call.version >= 5 => EndTxnResponse {
                    producer_id,
                    producer_epoch,
                    ..Default::default()
                },
                Ok(_) => EndTxnResponse::default(),
                Err(code) => self.error(state, call, code),
            },
        )
    }

    fn error(&self, _state: &ClusterState, _call: &Call, code: ErrorCode) -> Self::Response {
        EndTxnResponse {
            error_code: code.code(),
            ..Default::default()
        }
    }
}
