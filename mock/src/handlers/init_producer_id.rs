//! InitProducerId: a producer id for an idempotent producer (any broker),
//! or the transactional id's producer id and next epoch (its coordinator;
//! see the transaction coordinator's rules).

use super::{Reply, fenced_code};
use crate::state::{ClusterState, Ctx};
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

pub(crate) fn handle(
    state: &mut ClusterState,
    ctx: &Ctx,
    req: &InitProducerIdRequest,
    version: i16,
    _final_attempt: bool,
) -> Reply<InitProducerIdResponse> {
    let expected =
        (version >= 3 && req.producer_id >= 0).then_some((req.producer_id, req.producer_epoch));
    let tid = req.transactional_id.as_deref().filter(|t| !t.is_empty());
    let result = state.init_producer_id(
        ctx,
        tid,
        req.transaction_timeout_ms,
        expected,
        fenced_code(version, 4),
    );
    Reply::Now(match result {
        Ok((producer_id, producer_epoch)) => InitProducerIdResponse {
            producer_id,
            producer_epoch,
            ..Default::default()
        },
        Err(code) => error(state, req, version, code),
    })
}

pub(crate) fn error(
    _state: &ClusterState,
    _req: &InitProducerIdRequest,
    _version: i16,
    code: ErrorCode,
) -> InitProducerIdResponse {
    InitProducerIdResponse {
        error_code: code.code(),
        producer_id: -1,
        producer_epoch: -1,
        ..Default::default()
    }
}
