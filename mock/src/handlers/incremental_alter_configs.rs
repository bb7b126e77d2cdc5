//! IncrementalAlterConfigs (KIP-339): SET, DELETE, APPEND and SUBTRACT of
//! topic configs and of broker configs (one broker's or, with an empty
//! name, the cluster-wide default); `validate_only` checks and changes
//! nothing. See `state::configs` for the checks.

use super::{Call, Handle, Reply};
use crate::state::ClusterState;
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

impl Handle for IncrementalAlterConfigsRequest {
    type Response = IncrementalAlterConfigsResponse;

    fn handle(&self, state: &mut ClusterState, _call: &Call) -> Reply<Self::Response> {
        let responses = self
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
                    TOPIC => state.alter_topic_configs(&r.resource_name, &ops, self.validate_only),
                    BROKER => {
                        state.alter_broker_configs(&r.resource_name, &ops, self.validate_only)
                    }
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

    fn error(&self, _state: &ClusterState, _call: &Call, code: ErrorCode) -> Self::Response {
        IncrementalAlterConfigsResponse {
            responses: self
                .resources
                .iter()
                .map(|r| result(r, Err((code, format!("{code:?}")))))
                .collect(),
            ..Default::default()
        }
    }
}
