//! DescribeAcls (key 29), versions 1–3, flexible from 2.
//!
//! Lists the ACL bindings matching one filter (Kafka's `kafka-acls.sh
//! --list`), grouped by resource pattern. Filter codes as in CreateAcls,
//! plus 1 ANY for resource type, pattern type, operation and permission,
//! and pattern type 2 MATCH (every pattern that applies to the name); a
//! null name, principal or host matches any.

use crate::describe::{message, nested};

message! {
    /// Asks for the ACL bindings matching a filter.
    ///
    /// ```
    /// use kafka_proto::{Message, messages::DescribeAclsRequest};
    /// // Every binding: ANY resource type, pattern, operation and permission.
    /// let req = DescribeAclsRequest {
    ///     resource_type_filter: 1,
    ///     resource_name_filter: None,
    ///     pattern_type_filter: 1,
    ///     principal_filter: None,
    ///     host_filter: None,
    ///     operation: 1,
    ///     permission_type: 1,
    ///     ..Default::default()
    /// };
    /// assert_eq!(DescribeAclsRequest::decode(&req.encode_to_vec(3).unwrap(), 3).unwrap(), req);
    /// ```
    pub struct DescribeAclsRequest [message DescribeAcls, versions 1..=3, flexible 2, request DescribeAclsResponse] {
        /// The resource type.
        resource_type_filter: i8;
        /// The resource name, or null to match any resource name.
        resource_name_filter: Option<String> = Some(String::new()), nullable ..;
        /// The resource pattern to match (default 3, LITERAL).
        pattern_type_filter: i8 = 3;
        /// The principal to match, or null to match any principal.
        principal_filter: Option<String> = Some(String::new()), nullable ..;
        /// The host to match, or null to match any host.
        host_filter: Option<String> = Some(String::new()), nullable ..;
        /// The operation to match.
        operation: i8;
        /// The permission type to match.
        permission_type: i8;
    }
}

message! {
    /// The matching bindings, by resource pattern.
    pub struct DescribeAclsResponse [message DescribeAcls, versions 1..=3, flexible 2, response] {
        /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota.
        throttle_time_ms: i32;
        /// The error code, or 0 if there was no error.
        error_code: i16;
        /// The error message, or null if there was no error.
        error_message: Option<String> = Some(String::new()), nullable ..;
        /// Each Resource that is referenced in an ACL.
        resources: Vec<DescribeAclsResponseResource>;
    }
}

nested! {
    /// One resource pattern and its bindings.
    pub struct DescribeAclsResponseResource [in "resources.", flexible 2] {
        /// The resource type.
        resource_type: i8;
        /// The resource name.
        resource_name: String;
        /// The resource pattern type (default 3, LITERAL).
        pattern_type: i8 = 3;
        /// The ACLs.
        acls: Vec<DescribeAclsResponseAcl>;
    }
}

nested! {
    /// One binding on the resource pattern.
    pub struct DescribeAclsResponseAcl [in "resources.acls.", flexible 2] {
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

    /// A v2 (flexible) response written by hand.
    #[test]
    fn v2_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 0, // throttle_time_ms
            0, 0, // error_code
            0, // error_message null
            2, // resources: 1
            3, // resource_type GROUP
            2, b'g', // resource_name "g"
            3,    // LITERAL
            2,    // acls: 1
            7, b'U', b's', b'e', b'r', b':', b'a', // principal "User:a"
            2, b'*', // host "*"
            3,    // READ
            2,    // DENY
            0,    // acl tags
            0,    // resource tags
            0,    // response tags
        ];
        let resp: DescribeAclsResponse = decode_fixture(bytes, 2);
        assert_eq!(resp.error_message, None);
        assert_eq!(resp.resources[0].acls[0].permission_type, 2);
    }
}
