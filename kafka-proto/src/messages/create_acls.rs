//! CreateAcls (key 30), versions 1–3, flexible from 2.
//!
//! Adds ACL bindings to the cluster's authorizer (Kafka's `kafka-acls.sh
//! --add`). v0 was removed in Kafka 4.0; v1 (the baseline) has the pattern
//! type; v3 admits the USER resource type. Codes: resource type 2 topic,
//! 3 group, 4 cluster, 5 transactional id, 6 delegation token, 7 user;
//! pattern type 3 literal, 4 prefixed; operation 2 all, 3 read, 4 write,
//! 5 create, 6 delete, 7 alter, 8 describe, 9 cluster action, 10 describe
//! configs, 11 alter configs, 12 idempotent write, 13 create tokens,
//! 14 describe tokens; permission 2 deny, 3 allow.

use crate::describe::{message, nested};

message! {
    /// Creates ACL bindings.
    ///
    /// ```
    /// use kafka_proto::{Message, messages::*};
    /// let req = CreateAclsRequest {
    ///     creations: vec![CreateAclsRequestCreation {
    ///         resource_type: 2, // TOPIC
    ///         resource_name: "orders".into(),
    ///         resource_pattern_type: 3, // LITERAL
    ///         principal: "User:billing".into(),
    ///         host: "*".into(),
    ///         operation: 3,       // READ
    ///         permission_type: 3, // ALLOW
    ///         ..Default::default()
    ///     }],
    ///     ..Default::default()
    /// };
    /// assert_eq!(CreateAclsRequest::decode(&req.encode_to_vec(3).unwrap(), 3).unwrap(), req);
    /// ```
    pub struct CreateAclsRequest [message CreateAcls, versions 1..=3, flexible 2, request CreateAclsResponse] {
        /// The ACLs that we want to create.
        creations: Vec<CreateAclsRequestCreation>;
    }
}

nested! {
    /// One ACL binding to create.
    pub struct CreateAclsRequestCreation [in "creations.", flexible 2] {
        /// The type of the resource.
        resource_type: i8;
        /// The resource name for the ACL.
        resource_name: String;
        /// The pattern type for the ACL (default 3, LITERAL).
        resource_pattern_type: i8 = 3;
        /// The principal for the ACL.
        principal: String;
        /// The host for the ACL.
        host: String;
        /// The operation type for the ACL (read, write, etc.).
        operation: i8;
        /// The permission type for the ACL (allow, deny, etc.).
        permission_type: i8;
    }
}

message! {
    /// The outcome of each creation, in request order.
    pub struct CreateAclsResponse [message CreateAcls, versions 1..=3, flexible 2, response] {
        /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota.
        throttle_time_ms: i32;
        /// The results for each ACL creation.
        results: Vec<CreateAclsResponseResult>;
    }
}

nested! {
    /// The outcome of one creation.
    pub struct CreateAclsResponseResult [in "results.", flexible 2] {
        /// The result error, or zero if there was no error.
        error_code: i16;
        /// The result message, or null if there was no error.
        error_message: Option<String> = Some(String::new()), nullable ..;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::decode_fixture;

    /// A v1 request written by hand.
    #[test]
    fn v1_request_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 1, // creations: 1
            2, // resource_type TOPIC
            0, 1, b't', // resource_name "t"
            4,    // PREFIXED
            0, 6, b'U', b's', b'e', b'r', b':', b'a', // principal "User:a"
            0, 1, b'*', // host "*"
            3,    // READ
            3,    // ALLOW
        ];
        let req: CreateAclsRequest = decode_fixture(bytes, 1);
        assert_eq!(req.creations[0].resource_pattern_type, 4);
        assert_eq!(req.creations[0].principal, "User:a");
    }
}
