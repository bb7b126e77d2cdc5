//! DescribeGroups (key 15), versions 0–6, flexible from 5.
//!
//! Describes classic groups: state, protocol and, per member, its metadata
//! and assignment. v3 adds authorized operations, v4 the members' group
//! instance id (ignorable), v6 a per-group error message and
//! GROUP_ID_NOT_FOUND for an unknown group (KIP-1043). The response's
//! `throttle_time_ms` (v1+) is ignorable too; `authorized_operations`
//! defaults to `i32::MIN` (not requested).

use crate::describe::{ignorable, message, nested};
use bytes::Bytes;

message! {
    /// Describes classic groups.
    ///
    /// ```
    /// use kafka_proto::{Message, messages::DescribeGroupsRequest};
    /// let req = DescribeGroupsRequest {
    ///     groups: vec!["orders-app".into()],
    ///     include_authorized_operations: true,
    ///     ..Default::default()
    /// };
    /// assert_eq!(DescribeGroupsRequest::decode(&req.encode_to_vec(6).unwrap(), 6).unwrap(), req);
    /// // Authorized operations need v3+.
    /// assert!(req.encode_to_vec(2).is_err());
    /// ```
    pub struct DescribeGroupsRequest [message DescribeGroups, versions 0..=6, flexible 5, request DescribeGroupsResponse] {
        /// The names of the groups to describe.
        groups: Vec<String>;
        /// Whether to include authorized operations (v3+).
        include_authorized_operations: bool, versions 3..;
    }
}

message! {
    /// The description of each requested group.
    pub struct DescribeGroupsResponse [message DescribeGroups, versions 0..=6, flexible 5, response] {
        /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota (v1+, ignorable).
        throttle_time_ms: i32, versions ignorable(1..);
        /// Each described group.
        groups: Vec<DescribeGroupsResponseDescribedGroup>;
    }
}

nested! {
    /// One described group.
    pub struct DescribeGroupsResponseDescribedGroup [in "groups.", flexible 5] {
        /// The describe error, or 0 if there was no error.
        error_code: i16;
        /// The describe error message, or null if there was no error (v6+).
        error_message: Option<String> = None, versions 6.., nullable 6..;
        /// The group ID string.
        group_id: String;
        /// The group state string, or the empty string.
        group_state: String;
        /// The group protocol type, or the empty string.
        protocol_type: String;
        /// The group protocol data, or the empty string.
        protocol_data: String;
        /// The group members.
        members: Vec<DescribeGroupsResponseDescribedGroupMember>;
        /// 32-bit bitfield to represent authorized operations for this group (v3+, default `i32::MIN`).
        authorized_operations: i32 = i32::MIN, versions 3..;
    }
}

nested! {
    /// One member of a described group.
    pub struct DescribeGroupsResponseDescribedGroupMember [in "groups.members.", flexible 5] {
        /// The member id.
        member_id: String;
        /// The unique identifier of the consumer instance provided by end user (v4+, default null, ignorable).
        group_instance_id: Option<String> = None, versions ignorable(4..), nullable 4..;
        /// The client ID used in the member's latest join group request.
        client_id: String;
        /// The client host.
        client_host: String;
        /// The metadata corresponding to the current group protocol in use.
        member_metadata: Bytes;
        /// The current assignment provided by the group leader.
        member_assignment: Bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{assert_not_in_version, decode_fixture};

    /// A v0 request written by hand.
    #[test]
    fn v0_request_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 1, // groups: 1
            0, 1, b'g', // "g"
        ];
        let req: DescribeGroupsRequest = decode_fixture(bytes, 0);
        assert_eq!(req.groups, ["g"]);
        assert!(!req.include_authorized_operations);
    }

    /// A v0 response: no throttle time, no authorized operations.
    #[test]
    fn v0_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 1, // groups: 1
            0, 0, // error_code
            0, 1, b'g', // group_id "g"
            0, 6, b'S', b't', b'a', b'b', b'l', b'e', // group_state "Stable"
            0, 1, b'c', // protocol_type "c"
            0, 1, b'r', // protocol_data "r"
            0, 0, 0, 1, // members: 1
            0, 1, b'm', // member_id "m"
            0, 2, b'c', b'1', // client_id "c1"
            0, 1, b'h', // client_host "h"
            0, 0, 0, 1, 9, // member_metadata [9]
            0, 0, 0, 0, // member_assignment empty
        ];
        let resp: DescribeGroupsResponse = decode_fixture(bytes, 0);
        let g = &resp.groups[0];
        assert_eq!(g.group_state, "Stable");
        assert_eq!(g.authorized_operations, i32::MIN);
        assert_eq!(g.members[0].client_id, "c1");
        assert_eq!(g.members[0].member_metadata.as_ref(), [9]);
    }

    /// A v6 response: error message, authorized operations, instance id.
    #[test]
    fn v6_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 0, // throttle_time_ms
            2, // groups: 1
            0, 69, // GROUP_ID_NOT_FOUND
            2, b'x', // error_message "x"
            2, b'g', // group_id "g"
            5, b'D', b'e', b'a', b'd', // group_state "Dead"
            1,    // protocol_type ""
            1,    // protocol_data ""
            2,    // members: 1
            2, b'm', // member_id "m"
            0,    // group_instance_id null
            1,    // client_id ""
            1,    // client_host ""
            1,    // member_metadata empty
            1,    // member_assignment empty
            0,    // member tags
            0, 0, 0, 8, // authorized_operations 8
            0, // group tags
            0, // response tags
        ];
        let resp: DescribeGroupsResponse = decode_fixture(bytes, 6);
        let g = &resp.groups[0];
        assert_eq!(g.error_message.as_deref(), Some("x"));
        assert_eq!(g.authorized_operations, 8);
        assert_eq!(g.members[0].group_instance_id, None);
        // The error message is not ignorable: v5 refuses it.
        assert_not_in_version(&resp, 5, "groups.error_message");
    }
}
