//! DeleteAcls (key 31), versions 1–3, flexible from 2.
//!
//! Deletes every ACL binding matching each filter (Kafka's `kafka-acls.sh
//! --remove`) and reports, per filter, the bindings it deleted. Filter
//! codes as in DescribeAcls.

use crate::describe::{message, nested};

message! {
    /// Deletes the bindings matching filters.
    ///
    /// ```
    /// use kafka_proto::{Message, messages::*};
    /// let req = DeleteAclsRequest {
    ///     filters: vec![DeleteAclsRequestFilter {
    ///         resource_type_filter: 2, // TOPIC
    ///         resource_name_filter: Some("orders".into()),
    ///         pattern_type_filter: 3, // LITERAL
    ///         principal_filter: None,
    ///         host_filter: None,
    ///         operation: 1,       // ANY
    ///         permission_type: 1, // ANY
    ///         ..Default::default()
    ///     }],
    ///     ..Default::default()
    /// };
    /// assert_eq!(DeleteAclsRequest::decode(&req.encode_to_vec(3).unwrap(), 3).unwrap(), req);
    /// ```
    pub struct DeleteAclsRequest [message DeleteAcls, versions 1..=3, flexible 2, request DeleteAclsResponse] {
        /// The filters to use when deleting ACLs.
        filters: Vec<DeleteAclsRequestFilter>;
    }
}

nested! {
    /// One filter.
    pub struct DeleteAclsRequestFilter [in "filters.", flexible 2] {
        /// The resource type.
        resource_type_filter: i8;
        /// The resource name, or null to match any resource name.
        resource_name_filter: Option<String> = Some(String::new()), nullable ..;
        /// The pattern type (default 3, LITERAL).
        pattern_type_filter: i8 = 3;
        /// The principal filter, or null to accept all principals.
        principal_filter: Option<String> = Some(String::new()), nullable ..;
        /// The host filter, or null to accept all hosts.
        host_filter: Option<String> = Some(String::new()), nullable ..;
        /// The ACL operation.
        operation: i8;
        /// The permission type.
        permission_type: i8;
    }
}

message! {
    /// What each filter deleted, in request order.
    pub struct DeleteAclsResponse [message DeleteAcls, versions 1..=3, flexible 2, response] {
        /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota.
        throttle_time_ms: i32;
        /// The results for each filter.
        filter_results: Vec<DeleteAclsResponseFilterResult>;
    }
}

nested! {
    /// The outcome of one filter.
    pub struct DeleteAclsResponseFilterResult [in "filter_results.", flexible 2] {
        /// The error code, or 0 if the filter succeeded.
        error_code: i16;
        /// The error message, or null if the filter succeeded.
        error_message: Option<String> = Some(String::new()), nullable ..;
        /// The ACLs which matched this filter.
        matching_acls: Vec<DeleteAclsResponseMatchingAcl>;
    }
}

nested! {
    /// One binding the filter matched.
    pub struct DeleteAclsResponseMatchingAcl [in "filter_results.matching_acls.", flexible 2] {
        /// The deletion error code, or 0 if the deletion succeeded.
        error_code: i16;
        /// The deletion error message, or null if the deletion succeeded.
        error_message: Option<String> = Some(String::new()), nullable ..;
        /// The ACL resource type.
        resource_type: i8;
        /// The ACL resource name.
        resource_name: String;
        /// The ACL resource pattern type (default 3, LITERAL).
        pattern_type: i8 = 3;
        /// The ACL principal.
        principal: String;
        /// The ACL host.
        host: String;
        /// The ACL operation.
        operation: i8;
        /// The ACL permission type.
        permission_type: i8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::decode_fixture;

    /// A v1 request with null filters written by hand.
    #[test]
    fn v1_request_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 1, // filters: 1
            1, // resource_type_filter ANY
            0xff, 0xff, // resource_name_filter null
            1,    // pattern_type_filter ANY
            0xff, 0xff, // principal_filter null
            0xff, 0xff, // host_filter null
            1,    // operation ANY
            1,    // permission_type ANY
        ];
        let req: DeleteAclsRequest = decode_fixture(bytes, 1);
        assert_eq!(req.filters[0].resource_name_filter, None);
    }
}
