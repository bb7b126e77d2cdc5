//! CreateAcls: SECURITY_DISABLED for every creation without an authorizer
//! (Kafka's default); with `MockConfig::acl_authorizer`, each binding is
//! checked and stored (see `state::acls`).

use super::Reply;
use crate::state::acls::{AclBinding, check_new};
use crate::state::{ClusterState, Ctx};
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

pub(crate) fn handle(
    state: &mut ClusterState,
    _ctx: &Ctx,
    req: &CreateAclsRequest,
    version: i16,
    _final_attempt: bool,
) -> Reply<CreateAclsResponse> {
    if !state.config.acl_authorizer {
        return Reply::Now(error(state, req, version, ErrorCode::SecurityDisabled));
    }
    let results = req
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

pub(crate) fn error(
    _state: &ClusterState,
    req: &CreateAclsRequest,
    _version: i16,
    code: ErrorCode,
) -> CreateAclsResponse {
    let message = (code == ErrorCode::SecurityDisabled).then(|| NO_AUTHORIZER.to_string());
    CreateAclsResponse {
        results: req
            .creations
            .iter()
            .map(|_| result(code, message.clone()))
            .collect(),
        ..Default::default()
    }
}
