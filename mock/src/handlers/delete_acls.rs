//! DeleteAcls: SECURITY_DISABLED for every filter without an authorizer
//! (Kafka's default); with `MockConfig::acl_authorizer`, each filter
//! removes the stored bindings it matches and lists them.

use super::create_acls::NO_AUTHORIZER;
use super::{Call, Handle, Reply};
use crate::state::ClusterState;
use crate::state::acls::AclFilter;
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

fn failed(code: ErrorCode, message: String) -> DeleteAclsResponseFilterResult {
    DeleteAclsResponseFilterResult {
        error_code: code.code(),
        error_message: Some(message),
        ..Default::default()
    }
}

impl Handle for DeleteAclsRequest {
    type Response = DeleteAclsResponse;

    fn handle(&self, state: &mut ClusterState, call: &Call) -> Reply<Self::Response> {
        if !state.config.acl_authorizer {
            return Reply::Now(self.error(state, call, ErrorCode::SecurityDisabled));
        }
        let filter_results = self
            .filters
            .iter()
            .map(|f| {
                let filter = AclFilter {
                    resource_type: f.resource_type_filter,
                    resource_name: f.resource_name_filter.clone(),
                    pattern_type: f.pattern_type_filter,
                    principal: f.principal_filter.clone(),
                    host: f.host_filter.clone(),
                    operation: f.operation,
                    permission_type: f.permission_type,
                };
                if let Err((code, message)) = filter.check() {
                    return failed(code, message);
                }
                DeleteAclsResponseFilterResult {
                    error_message: None,
                    matching_acls: state
                        .acls
                        .delete(&filter)
                        .into_iter()
                        .map(|b| DeleteAclsResponseMatchingAcl {
                            error_message: None,
                            resource_type: b.resource_type,
                            resource_name: b.resource_name,
                            pattern_type: b.pattern_type,
                            principal: b.principal,
                            host: b.host,
                            operation: b.operation,
                            permission_type: b.permission_type,
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                }
            })
            .collect();
        Reply::Now(DeleteAclsResponse {
            filter_results,
            ..Default::default()
        })
    }

    fn error(&self, _state: &ClusterState, _call: &Call, code: ErrorCode) -> Self::Response {
        let message = if code == ErrorCode::SecurityDisabled {
            NO_AUTHORIZER.to_string()
        } else {
            format!("{code:?}")
        };
        DeleteAclsResponse {
            filter_results: self
                .filters
                .iter()
                .map(|_| failed(code, message.clone()))
                .collect(),
            ..Default::default()
        }
    }
}
