//! CreateAcls: SECURITY_DISABLED for every creation without an authorizer
//! (Kafka's default); with `MockConfig::acl_authorizer`, each binding is
//! checked and stored (see `state::acls`).

use super::{Call, Handle, Reply};
use crate::state::ClusterState;
use crate::state::acls::{AclBinding, check_new};
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

/// Kafka's message when no authorizer is configured.
pub(crate) const NO_AUTHORIZER: &str = "No Authorizer is configured.";

fn result(code: ErrorCode, message: Option<String>) -> CreateAclsResponseResult {
    CreateAclsResponseResult {
        error_code: code.code(),
        error_message: message,
        ..Default::default()
    }
}

impl Handle for CreateAclsRequest {
    type Response = CreateAclsResponse;

    fn handle(&self, state: &mut ClusterState, call: &Call) -> Reply<Self::Response> {
        if !state.config.acl_authorizer {
            return Reply::Now(self.error(state, call, ErrorCode::SecurityDisabled));
        }
        let results = self
            .creations
            .iter()
            .map(|c| {
                let binding = AclBinding {
                    resource_type: c.resource_type,
                    resource_name: c.resource_name.clone(),
                    pattern_type: c.resource_pattern_type,
                    principal: c.principal.clone(),
                    host: c.host.clone(),
                    operation: c.operation,
                    permission_type: c.permission_type,
                };
                match check_new(&binding) {
                    Ok(()) => {
                        state.acls.create(binding);
                        result(ErrorCode::None, None)
                    }
                    Err((code, message)) => result(code, Some(message)),
                }
            })
            .collect();
        Reply::Now(CreateAclsResponse {
            results,
            ..Default::default()
        })
    }

    fn error(&self, _state: &ClusterState, _call: &Call, code: ErrorCode) -> Self::Response {
        let message = (code == ErrorCode::SecurityDisabled).then(|| NO_AUTHORIZER.to_string());
        CreateAclsResponse {
            results: self
                .creations
                .iter()
                .map(|_| result(code, message.clone()))
                .collect(),
            ..Default::default()
        }
    }
}
