//! ListGroups (key 16), versions 0–5, flexible from 3.
//!
//! Lists the groups a broker coordinates. v4 adds a filter on and an answer
//! with the group state (KIP-518), v5 the same for the group type, classic
//! or consumer (KIP-848). The response's `throttle_time_ms` (v1+),
//! `group_state` and `group_type` are ignorable: encoding at a version
//! without them drops them. The request's filters are not.

use crate::describe::{ignorable, message, nested};

message! {
    /// Lists groups, optionally filtered by state (v4+) and type (v5+).
    ///
    /// ```
    /// use kafka_proto::{Message, messages::ListGroupsRequest};
    /// let req = ListGroupsRequest {
    ///     states_filter: vec!["Stable".into()],
    ///     types_filter: vec!["consumer".into()],
    ///     ..Default::default()
    /// };
    /// assert_eq!(ListGroupsRequest::decode(&req.encode_to_vec(5).unwrap(), 5).unwrap(), req);
    /// // A type filter needs v5.
    /// assert!(req.encode_to_vec(4).is_err());
    /// ```
    pub struct ListGroupsRequest [message ListGroups, versions 0..=5, flexible 3, request ListGroupsResponse] {
        /// The states of the groups we want to list. If empty, all groups are returned with their state (v4+).
        states_filter: Vec<String>, versions 4..;
        /// The types of the groups we want to list. If empty, all groups are returned with their type (v5+).
        types_filter: Vec<String>, versions 5..;
    }
}

message! {
    /// The groups of one broker.
    pub struct ListGroupsResponse [message ListGroups, versions 0..=5, flexible 3, response] {
        /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota (v1+, ignorable).
        throttle_time_ms: i32, versions ignorable(1..);
        /// The error code, or 0 if there was no error.
        error_code: i16;
        /// Each group in the response.
        groups: Vec<ListGroupsResponseListedGroup>;
    }
}

nested! {
    /// One listed group.
    pub struct ListGroupsResponseListedGroup [in "groups.", flexible 3] {
        /// The group ID.
        group_id: String;
        /// The group protocol type.
        protocol_type: String;
        /// The group state name (v4+, ignorable).
        group_state: String, versions ignorable(4..);
        /// The group type name (v5+, ignorable).
        group_type: String, versions ignorable(5..);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;
    use crate::testing::{assert_not_in_version, decode_fixture};

    /// A v0 request is empty.
    #[test]
    fn v0_request_fixture() {
        let req = ListGroupsRequest::decode(&[], 0).unwrap();
        assert_eq!(req, ListGroupsRequest::default());
        assert!(req.encode_to_vec(0).unwrap().is_empty());
        assert_eq!(req.encode_to_vec(3).unwrap(), [0]); // flexible: the tags
    }

    /// A v5 request with both filters.
    #[test]
    fn v5_request_fixture() {
        let bytes: &[u8] = &[
            2, 7, b'S', b't', b'a', b'b', b'l', b'e', // states_filter ["Stable"]
            2, 9, b'c', b'o', b'n', b's', b'u', b'm', b'e', b'r', // types_filter ["consumer"]
            0,    // tags
        ];
        let req: ListGroupsRequest = decode_fixture(bytes, 5);
        assert_eq!(req.states_filter, ["Stable"]);
        assert_eq!(req.types_filter, ["consumer"]);
        assert_not_in_version(&req, 4, "types_filter");
    }

    /// A v1 response written by hand.
    #[test]
    fn v1_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 0, // throttle_time_ms
            0, 0, // error_code
            0, 0, 0, 1, // groups: 1
            0, 1, b'g', // group_id "g"
            0, 0, // protocol_type ""
        ];
        let resp: ListGroupsResponse = decode_fixture(bytes, 1);
        assert_eq!(resp.groups[0].group_id, "g");
    }

    /// A v5 response: state and type.
    #[test]
    fn v5_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 0, // throttle_time_ms
            0, 0, // error_code
            2, // groups: 1
            2, b'g', // group_id "g"
            1,    // protocol_type ""
            6, b'E', b'm', b'p', b't', b'y', // group_state "Empty"
            8, b'c', b'l', b'a', b's', b's', b'i', b'c', // group_type "classic"
            0,    // group tags
            0,    // response tags
        ];
        let resp: ListGroupsResponse = decode_fixture(bytes, 5);
        assert_eq!(resp.groups[0].group_state, "Empty");
        assert_eq!(resp.groups[0].group_type, "classic");
    }
}
