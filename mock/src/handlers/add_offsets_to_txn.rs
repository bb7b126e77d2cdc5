//! AddOffsetsToTxn (transaction version 1): adds a group's offsets to the
//! open transaction, opening it; TxnOffsetCommit then writes them.

use super::{Reply, fenced_code};
use crate::state::txn::TxnProducer;
use crate::state::{ClusterState, Ctx};
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

pub(crate) fn handle(
    state: &mut ClusterState,
    ctx: &Ctx,
    req: &AddOffsetsToTxnRequest,
    version: i16,
    _final_attempt: bool,
) -> Reply<AddOffsetsToTxnResponse> {
    let producer = TxnProducer {
        tid: &req.transactional_id,
        pid: req.producer_id,
        epoch: req.producer_epoch,
        fenced: fenced_code(version, 2),
    };
    let code = state
        .add_to_txn(ctx, producer, &[], Some(&req.group_id), false, false)
        .err()
        .unwrap_or(ErrorCode::None);
    Reply::Now(error(state, req, version, code))
}

pub(crate) fn error(
    _state: &ClusterState,
    _req: &AddOffsetsToTxnRequest,
    _version: i16,
    code: ErrorCode,
) -> AddOffsetsToTxnResponse {
    AddOffsetsToTxnResponse {
        error_code: code.code(),
        ..Default::default()
    }
}
