//! DeleteGroups (key 42), versions 0–3, flexible from 2.
//!
//! Deletes empty groups and their committed offsets. v3 adds a per-group
//! error message to the response (ignorable: encoding at v0–2 drops it);
//! the request is the same in every version but the flexible encoding.

use crate::describe::{ignorable, message, nested};

message! {
    /// Deletes groups.
    ///
    /// ```
    /// use kafka_proto::{Message, messages::DeleteGroupsRequest};
    /// let req = DeleteGroupsRequest {
    ///     groups_names: vec!["old-app".into()],
    ///     ..Default::default()
    /// };
    /// assert_eq!(DeleteGroupsRequest::decode(&req.encode_to_vec(3).unwrap(), 3).unwrap(), req);
    /// ```
    pub struct DeleteGroupsRequest [message DeleteGroups, versions 0..=3, flexible 2, request DeleteGroupsResponse] {
        /// The group names to delete.
        groups_names: Vec<String>;
    }
}

message! {
    /// The deletion result of each group.
    pub struct DeleteGroupsResponse [message DeleteGroups, versions 0..=3, flexible 2, response] {
        /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota.
        throttle_time_ms: i32;
        /// The deletion results.
        results: Vec<DeleteGroupsResponseDeletableGroupResult>;
    }
}

nested! {
    /// The deletion result of one group.
    pub struct DeleteGroupsResponseDeletableGroupResult [in "results.", flexible 2] {
        /// The group id.
        group_id: String;
        /// The deletion error, or 0 if the deletion succeeded.
        error_code: i16;
        /// The error message, or null if there was no error (v3+, default null, ignorable).
        error_message: Option<String> = None, versions ignorable(3..), nullable 3..;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;
    use crate::testing::decode_fixture;

    /// A v0 request and response written by hand.
    #[test]
    fn v0_fixtures() {
        let req_bytes: &[u8] = &[
            0, 0, 0, 1, // groups_names: 1
            0, 1, b'g', // "g"
        ];
        let req = DeleteGroupsRequest::decode(req_bytes, 0).unwrap();
        assert_eq!(req.groups_names, ["g"]);
        assert_eq!(req.encode_to_vec(0).unwrap(), req_bytes);

        let resp_bytes: &[u8] = &[
            0, 0, 0, 0, // throttle_time_ms
            0, 0, 0, 1, // results: 1
            0, 1, b'g', // group_id "g"
            0, 68, // NON_EMPTY_GROUP
        ];
        let resp = DeleteGroupsResponse::decode(resp_bytes, 0).unwrap();
        assert_eq!(
            crate::ErrorCode::from(resp.results[0].error_code),
            crate::ErrorCode::NonEmptyGroup
        );
        assert_eq!(resp.encode_to_vec(0).unwrap(), resp_bytes);
    }

    /// A v3 response: the error message, null and present.
    #[test]
    fn v3_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 0, // throttle_time_ms
            3, // results: 2
            2, b'a', // group_id "a"
            0, 0, // error_code
            0, // error_message null
            0, // result tags
            2, b'b', // group_id "b"
            0, 68, // NON_EMPTY_GROUP
            3, b'n', b'e', // error_message "ne"
            0,    // result tags
            0,    // response tags
        ];
        let resp: DeleteGroupsResponse = decode_fixture(bytes, 3);
        assert_eq!(resp.results[0].error_message, None);
        assert_eq!(resp.results[1].error_message.as_deref(), Some("ne"));
    }
}
