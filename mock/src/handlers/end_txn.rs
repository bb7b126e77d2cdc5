//! EndTxn: commits or aborts the open transaction (v5: transaction
//! version 2, answering with the producer id and epoch of the next
//! transaction). See the transaction coordinator for every outcome.

use super::{Reply, fenced_code};
use crate::state::txn::TxnProducer;
use crate::state::{ClusterState, Ctx};
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

pub(crate) fn handle(
    state: &mut ClusterState,
    ctx: &Ctx,
    req: &EndTxnRequest,
    version: i16,
    _final_attempt: bool,
) -> Reply<EndTxnResponse> {
    let producer = TxnProducer {
        tid: &req.transactional_id,
        pid: req.producer_id,
        epoch: req.producer_epoch,
        fenced: fenced_code(version, 2),
    };
    let tv2 = version >= 5 && state.tv2();
    Reply::Now(match state.end_txn(ctx, producer, req.committed, tv2) {
        Ok((producer_id, producer_epoch)) if version >= 5 => EndTxnResponse {
            producer_id,
            producer_epoch,
            ..Default::default()
        },
        Ok(_) => EndTxnResponse::default(),
        Err(code) => error(state, req, version, code),
    })
}

pub(crate) fn error(
    _state: &ClusterState,
    _req: &EndTxnRequest,
    _version: i16,
    code: ErrorCode,
) -> EndTxnResponse {
    EndTxnResponse {
        error_code: code.code(),
        ..Default::default()
    }
}
