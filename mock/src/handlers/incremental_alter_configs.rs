//! IncrementalAlterConfigs (KIP-339): SET, DELETE, APPEND and SUBTRACT of
//! topic configs and of broker configs (one broker's or, with an empty
//! name, the cluster-wide default); `validate_only` checks and changes
//! nothing. See `state::configs` for the checks.

use super::answer_each;
use crate::state::configs::ConfigOp;
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

answer_each! {
    IncrementalAlterConfigsRequest.resources => IncrementalAlterConfigsResponse.responses,
    answer: |req, state, _call, r| {
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
    },
    failed: failed,
}

/// A resource answered with `code` alone, its name as the message.
fn failed(
    r: &IncrementalAlterConfigsRequestResource,
    code: ErrorCode,
) -> IncrementalAlterConfigsResponseResource {
    result(r, Err((code, format!("{code:?}"))))
}
