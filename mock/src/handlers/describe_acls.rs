//! DescribeAcls: SECURITY_DISABLED without an authorizer (Kafka's
//! default); with `MockConfig::acl_authorizer`, the stored bindings the
//! filter matches, grouped by resource pattern.

use super::{Call, Handle, Reply};
use crate::state::ClusterState;
use crate::state::acls::AclFilter;
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

impl Handle for DescribeAclsRequest {
    type Response = DescribeAclsResponse;

    fn handle(&self, state: &mut ClusterState, call: &Call) -> Reply<Self::Response> {
        if !state.config.acl_authorizer {
            return Reply::Now(self.error(state, call, ErrorCode::SecurityDisabled));
        }
        let filter = AclFilter {
            resource_type: self.resource_type_filter,
            resource_name: self.resource_name_filter.clone(),
            pattern_type: self.pattern_type_filter,
            principal: self.principal_filter.clone(),
            host: self.host_filter.clone(),
            operation: self.operation,
            permission_type: self.permission_type,
        };
        if let Err((code, message)) = filter.check() {
            return Reply::Now(DescribeAclsResponse {
                error_code: code.code(),
                error_message: Some(message),
                ..Default::default()
            });
        }
        let mut resources: Vec<DescribeAclsResponseResource> = Vec::new();
        for b in state.acls.describe(&filter) {
            let acl = DescribeAclsResponseAcl {
                principal: b.principal,
                host: b.host,
                operation: b.operation,
                permission_type: b.permission_type,
                ..Default::default()
            };
            let same = |r: &&mut DescribeAclsResponseResource| {
                r.resource_type == b.resource_type
                    && r.resource_name == b.resource_name
                    && r.pattern_type == b.pattern_type
            };
            match resources.iter_mut().find(same) {
                Some(r) => r.acls.push(acl),
                None => resources.push(DescribeAclsResponseResource {
                    resource_type: b.resource_type,
                    resource_name: b.resource_name,
                    pattern_type: b.pattern_type,
                    acls: vec![acl],
                    ..Default::default()
                }),
            }
        }
        Reply::Now(DescribeAclsResponse {
            error_message: None,
            resources,
            ..Default::default()
        })
    }

    fn error(&self, _state: &ClusterState, _call: &Call, code: ErrorCode) -> Self::Response {
        DescribeAclsResponse {
            error_code: code.code(),
            error_message: Some(if code == ErrorCode::SecurityDisabled {
                // Kafka's DescribeAcls words it differently from the others.
                "No Authorizer is configured on the broker".to_string()
            } else {
                format!("{code:?}")
            }),
            ..Default::default()
        }
    }
}
