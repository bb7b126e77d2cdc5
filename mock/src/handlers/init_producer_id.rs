//! InitProducerId: a producer id for an idempotent producer (any broker),
//! or the transactional id's producer id and next epoch (its coordinator;
//! see the transaction coordinator's rules).

use super::{Call, Handle, Reply, fenced_code};
use crate::state::ClusterState;
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

impl Handle for InitProducerIdRequest {
    type Response = InitProducerIdResponse;

    fn handle(&self, state: &mut ClusterState, call: &Call) -> Reply<Self::Response> {
        let expected = (call.version >= 3 && self.producer_id >= 0)
            .then_some((self.producer_id, self.producer_epoch));
        let tid = self.transactional_id.as_deref().filter(|t| !t.is_empty());
        let result = state.init_producer_id(
            &call.ctx,
            tid,
            self.transaction_timeout_ms,
            expected,
            fenced_code(call.version, 4),
        );
        Reply::Now(match result {
            Ok((producer_id, producer_epoch)) => InitProducerIdResponse {
                producer_id,
                producer_epoch,
                ..Default::default()
            },
            Err(code) => self.error(state, call, code),
        })
    }

    fn error(&self, _state: &ClusterState, _call: &Call, code: ErrorCode) -> Self::Response {
        InitProducerIdResponse {
            error_code: code.code(),
            producer_id: -1,
            producer_epoch: -1,
            ..Default::default()
        }
    }
}
