//! SyncGroup (key 14), versions 0–5, flexible from 4.
//!
//! The second step of the classic group protocol: after JoinGroup every
//! member sends SyncGroup; the leader's request carries the assignment of
//! every member, and each member receives its own. v3 adds static
//! membership (`group_instance_id`, KIP-345); from v5 both sides carry the
//! protocol type and name, which the coordinator checks (KIP-559).
//!
//! For a consumer group the assignment bytes are a version-prefixed
//! [`ConsumerProtocolAssignment`](crate::messages::ConsumerProtocolAssignment).
//!
//! Ignorable fields (dropped when encoding at a version without them):
//! `protocol_type` and `protocol_name` on both sides and the response's
//! `throttle_time_ms`.

use crate::describe::{ignorable, message, nested};
use bytes::Bytes;

message! {
    /// Sends the leader's assignment (or an empty one) and asks for this
    /// member's.
    ///
    /// ```
    /// use kafka_proto::{Message, messages::*};
    /// let req = SyncGroupRequest {
    ///     group_id: "orders-app".into(),
    ///     generation_id: 3,
    ///     member_id: "m-1".into(),
    ///     protocol_type: Some("consumer".into()),
    ///     protocol_name: Some("range".into()),
    ///     assignments: vec![SyncGroupRequestAssignment {
    ///         member_id: "m-1".into(),
    ///         assignment: bytes::Bytes::from_static(b"assignment"),
    ///         ..Default::default()
    ///     }],
    ///     ..Default::default()
    /// };
    /// assert_eq!(SyncGroupRequest::decode(&req.encode_to_vec(5).unwrap(), 5).unwrap(), req);
    /// ```
    pub struct SyncGroupRequest [message SyncGroup, versions 0..=5, flexible 4, request SyncGroupResponse] {
        /// The unique group identifier.
        group_id: String;
        /// The generation of the group.
        generation_id: i32;
        /// The member ID assigned by the group.
        member_id: String;
        /// The unique identifier of the consumer instance provided by end user (v3+, default null).
        group_instance_id: Option<String> = None, versions 3.., nullable 3..;
        /// The group protocol type (v5+, default null, ignorable).
        protocol_type: Option<String> = None, versions ignorable(5..), nullable 5..;
        /// The group protocol name (v5+, default null, ignorable).
        protocol_name: Option<String> = None, versions ignorable(5..), nullable 5..;
        /// Each assignment (the leader's request only).
        assignments: Vec<SyncGroupRequestAssignment>;
    }
}

nested! {
    /// The assignment of one member, sent by the leader.
    pub struct SyncGroupRequestAssignment [in "assignments.", flexible 4] {
        /// The ID of the member to assign.
        member_id: String;
        /// The member assignment.
        assignment: Bytes;
    }
}

message! {
    /// This member's assignment.
    pub struct SyncGroupResponse [message SyncGroup, versions 0..=5, flexible 4, response] {
        /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota (v1+, ignorable).
        throttle_time_ms: i32, versions ignorable(1..);
        /// The error code, or 0 if there was no error.
        error_code: i16;
        /// The group protocol type (v5+, default null, ignorable).
        protocol_type: Option<String> = None, versions ignorable(5..), nullable 5..;
        /// The group protocol name (v5+, default null, ignorable).
        protocol_name: Option<String> = None, versions ignorable(5..), nullable 5..;
        /// The member assignment.
        assignment: Bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;
    use crate::testing::{assert_not_in_version, decode_fixture};

    /// A v0 request written by hand: the leader assigns one member.
    #[test]
    fn v0_request_fixture() {
        let bytes: &[u8] = &[
            0, 1, b'g', // group_id "g"
            0, 0, 0, 7, // generation_id 7
            0, 1, b'm', // member_id "m"
            0, 0, 0, 1, // assignments: 1
            0, 1, b'm', // member_id "m"
            0, 0, 0, 3, 1, 2, 3, // assignment
        ];
        let req: SyncGroupRequest = decode_fixture(bytes, 0);
        assert_eq!(req.generation_id, 7);
        assert_eq!(req.assignments[0].assignment.as_ref(), [1, 2, 3]);
        assert_eq!(req.group_instance_id, None);
    }

    /// A v5 request: instance id, protocol type and name.
    #[test]
    fn v5_request_fixture() {
        let bytes: &[u8] = &[
            2, b'g', // group_id "g"
            0, 0, 0, 1, // generation_id 1
            2, b'm', // member_id "m"
            2, b'i', // group_instance_id "i"
            2, b'c', // protocol_type "c"
            2, b'r', // protocol_name "r"
            1,    // assignments: 0
            0,    // request tags
        ];
        let req: SyncGroupRequest = decode_fixture(bytes, 5);
        assert_eq!(req.group_instance_id.as_deref(), Some("i"));
        assert_eq!(req.protocol_type.as_deref(), Some("c"));
        assert_eq!(req.protocol_name.as_deref(), Some("r"));
        // v4 drops the ignorable protocol fields and keeps the instance id.
        let v4 = SyncGroupRequest::decode(&req.encode_to_vec(4).unwrap(), 4).unwrap();
        assert_eq!((v4.protocol_type, v4.protocol_name), (None, None));
        assert_eq!(v4.group_instance_id.as_deref(), Some("i"));
        // v2 cannot carry the (not ignorable) instance id.
        assert_not_in_version(&req, 2, "group_instance_id");
    }

    /// A v4 response (flexible, no protocol fields).
    #[test]
    fn v4_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 9, // throttle_time_ms 9
            0, 0, // error_code
            3, 0xaa, 0xbb, // assignment
            0,    // tags
        ];
        let resp: SyncGroupResponse = decode_fixture(bytes, 4);
        assert_eq!(resp.throttle_time_ms, 9);
        assert_eq!(resp.assignment.as_ref(), [0xaa, 0xbb]);
    }
}
