//! IncrementalAlterConfigs (KIP-339): SET, DELETE, APPEND and SUBTRACT of
//! topic configs and of broker configs (one broker's or, with an empty
//! name, the cluster-wide default); `validate_only` checks and changes
//! nothing. See `state::configs` for the checks.

use super::Reply;
use crate::state::configs::ConfigOp;
use crate::state::{ClusterState, Ctx};
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

const TOPIC: i8 = 2;
const BROKER: i8 = 4;

fn result(
    r: &IncrementalAlterConfigsRequestResource,
    outcome: Result<(), (ErrorCode, String)>,
) -> IncrementalAlterConfigsResponseResource {
    let (code, message) = match outcome {
        Ok(()) => (ErrorCode::None, None),
        Err((code, message)) => (code, Some(message)),
    };
    IncrementalAlterConfigsResponseResource {
        error_code: code.code(),
        error_message: message,
        resource_type: r.resource_type,
        resource_name: r.resource_name.clone(),
        ..Default::default()
    }
}

pub(crate) fn handle(
    state: &mut ClusterState,
    _ctx: &Ctx,
    req: &IncrementalAlterConfigsRequest,
    _version: i16,
    _final_attempt: bool,
) -> Reply<IncrementalAlterConfigsResponse> {
    let responses = req
        .resources
        .iter()
        .map(|r| {
            let ops: Vec<ConfigOp> = r
                .configs
                .iter()
                .map(|c| ConfigOp {
                    name: c.name.clone(),
                    op: c.config_operation,
                    value: c.value.clone(),
                })
                .collect();
            let outcome = match r.resource_type {
                TOPIC => state.alter_topic_configs(&r.resource_name, &ops, req.validate_only),
                BROKER => state.alter_broker_configs(&r.resource_name, &ops, req.validate_only),
                other => Err((
                    ErrorCode::InvalidRequest,
                    format!("Unexpected resource type {other}"),
                )),
            };
            result(r, outcome)
        })
        .collect();
    Reply::Now(IncrementalAlterConfigsResponse {
        responses,
        ..Default::default()
    })
}

pub(crate) fn error(
    _state: &ClusterState,
    req: &IncrementalAlterConfigsRequest,
    _version: i16,
    code: ErrorCode,
) -> IncrementalAlterConfigsResponse {
    IncrementalAlterConfigsResponse {
        responses: req
            .resources
            .iter()
            .map(|r| result(r, Err((code, format!("{code:?}")))))
            .collect(),
        ..Default::default()
    }
}
