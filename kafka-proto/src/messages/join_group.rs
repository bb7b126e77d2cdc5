//! JoinGroup (key 11), versions 0–9, flexible from 6.
//!
//! The first step of the classic group protocol: a member joins (or
//! rejoins) a group with the protocols it supports; the coordinator answers
//! with the generation, the chosen protocol and, to the leader, every
//! member's metadata. From v4 a new member first gets MEMBER_ID_REQUIRED
//! with its assigned member id and joins again with it; v5 adds static
//! membership (`group_instance_id`, KIP-345), v7 the protocol type in the
//! response (KIP-559), v8 the join reason (KIP-800) and v9 `skip_assignment`.
//!
//! For a consumer group the protocol type is `"consumer"` and each
//! protocol's metadata is a version-prefixed
//! [`ConsumerProtocolSubscription`](crate::messages::ConsumerProtocolSubscription).
//!
//! Ignorable fields (dropped when encoding at a version without them):
//! `rebalance_timeout_ms` and `reason` in the request, `throttle_time_ms`,
//! `protocol_type` and the members' `group_instance_id` in the response.

use crate::describe::{ignorable, message, nested};
use bytes::Bytes;

message! {
    /// Joins a classic group.
    ///
    /// ```
    /// use kafka_proto::{Message, messages::*};
    /// let req = JoinGroupRequest {
    ///     group_id: "orders-app".into(),
    ///     session_timeout_ms: 45_000,
    ///     rebalance_timeout_ms: 300_000,
    ///     protocol_type: "consumer".into(),
    ///     protocols: vec![JoinGroupRequestProtocol {
    ///         name: "range".into(),
    ///         metadata: bytes::Bytes::from_static(&[0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]),
    ///         ..Default::default()
    ///     }],
    ///     ..Default::default()
    /// };
    /// assert_eq!(req.member_id, "", "a new member joins with an empty id");
    /// assert_eq!(JoinGroupRequest::decode(&req.encode_to_vec(9).unwrap(), 9).unwrap(), req);
    /// ```
    pub struct JoinGroupRequest [message JoinGroup, versions 0..=9, flexible 6, request JoinGroupResponse] {
        /// The group identifier.
        group_id: String;
        /// The coordinator considers the consumer dead if it receives no heartbeat after this timeout in milliseconds.
        session_timeout_ms: i32;
        /// The maximum time in milliseconds that the coordinator will wait for each member to rejoin when rebalancing the group (v1+, default -1, ignorable).
        rebalance_timeout_ms: i32 = -1, versions ignorable(1..);
        /// The member id assigned by the group coordinator.
        member_id: String;
        /// The unique identifier of the consumer instance provided by end user (v5+, default null).
        group_instance_id: Option<String> = None, versions 5.., nullable 5..;
        /// The unique name the for class of protocols implemented by the group we want to join.
        protocol_type: String;
        /// The list of protocols that the member supports.
        protocols: Vec<JoinGroupRequestProtocol>;
        /// The reason why the member (re-)joins the group (v8+, default null, ignorable).
        reason: Option<String> = None, versions ignorable(8..), nullable 8..;
    }
}

nested! {
    /// One protocol the member supports, with its metadata.
    pub struct JoinGroupRequestProtocol [in "protocols.", flexible 6] {
        /// The protocol name.
        name: String;
        /// The protocol metadata.
        metadata: Bytes;
    }
}

message! {
    /// The coordinator's answer to a join: generation, protocol, leader and,
    /// for the leader, the members.
    pub struct JoinGroupResponse [message JoinGroup, versions 0..=9, flexible 6, response] {
        /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota (v2+, ignorable).
        throttle_time_ms: i32, versions ignorable(2..);
        /// The error code, or 0 if there was no error.
        error_code: i16;
        /// The generation ID of the group (default -1).
        generation_id: i32 = -1;
        /// The group protocol type (v7+, default null, ignorable).
        protocol_type: Option<String> = None, versions ignorable(7..), nullable 7..;
        /// The group protocol selected by the coordinator (nullable in v7+).
        protocol_name: Option<String> = Some(String::new()), nullable 7..;
        /// The leader of the group.
        leader: String;
        /// True if the leader must skip running the assignment (v9+).
        skip_assignment: bool, versions 9..;
        /// The member ID assigned by the group coordinator.
        member_id: String;
        /// The group members (filled for the leader only).
        members: Vec<JoinGroupResponseMember>;
    }
}

nested! {
    /// One member of the group, as the leader sees it.
    pub struct JoinGroupResponseMember [in "members.", flexible 6] {
        /// The group member ID.
        member_id: String;
        /// The unique identifier of the consumer instance provided by end user (v5+, default null, ignorable).
        group_instance_id: Option<String> = None, versions ignorable(5..), nullable 5..;
        /// The group member metadata.
        metadata: Bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EncodeErrorKind;
    use crate::Message;
    use crate::testing::{assert_not_in_version, decode_fixture};

    /// A v0 request written by hand: no rebalance timeout, no instance id.
    #[test]
    fn v0_request_fixture() {
        let bytes: &[u8] = &[
            0, 1, b'g', // group_id "g"
            0, 0, 0x75, 0x30, // session_timeout_ms 30000
            0, 0, // member_id ""
            0, 8, b'c', b'o', b'n', b's', b'u', b'm', b'e', b'r', // protocol_type "consumer"
            0, 0, 0, 1, // protocols: 1
            0, 5, b'r', b'a', b'n', b'g', b'e', // name "range"
            0, 0, 0, 2, 0xab, 0xcd, // metadata
        ];
        let req: JoinGroupRequest = decode_fixture(bytes, 0);
        assert_eq!(req.group_id, "g");
        assert_eq!(req.session_timeout_ms, 30000);
        assert_eq!(req.rebalance_timeout_ms, -1);
        assert_eq!(req.protocol_type, "consumer");
        assert_eq!(req.protocols[0].name, "range");
        assert_eq!(req.protocols[0].metadata.as_ref(), [0xab, 0xcd]);
    }

    /// A v8 request (flexible): instance id null, a reason.
    #[test]
    fn v8_request_fixture() {
        let bytes: &[u8] = &[
            2, b'g', // group_id "g"
            0, 0, 0x27, 0x10, // session_timeout_ms 10000
            0, 0, 0x4e, 0x20, // rebalance_timeout_ms 20000
            3, b'm', b'1', // member_id "m1"
            0,    // group_instance_id null
            2, b'c', // protocol_type "c"
            2,    // protocols: 1
            2, b'p', // name "p"
            1,    // metadata: empty
            0,    // protocol tags
            4, b'n', b'e', b'w', // reason "new"
            0,    // request tags
        ];
        let req: JoinGroupRequest = decode_fixture(bytes, 8);
        assert_eq!(req.rebalance_timeout_ms, 20000);
        assert_eq!(req.member_id, "m1");
        assert_eq!(req.group_instance_id, None);
        assert_eq!(req.reason.as_deref(), Some("new"));
        // The reason is ignorable: v7 drops it. The instance id is not: v4 refuses it.
        let v7 = JoinGroupRequest::decode(&req.encode_to_vec(7).unwrap(), 7).unwrap();
        assert_eq!(v7.reason, None);
        let with_instance = JoinGroupRequest {
            group_instance_id: Some("host-a".into()),
            ..req
        };
        assert_not_in_version(&with_instance, 4, "group_instance_id");
    }

    /// A v9 response: protocol type and name null, skip_assignment, one member.
    #[test]
    fn v9_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 0, // throttle_time_ms
            0, 0, // error_code
            0, 0, 0, 5, // generation_id 5
            0, // protocol_type null
            0, // protocol_name null
            2, b'l', // leader "l"
            1,    // skip_assignment
            2, b'l', // member_id "l"
            2,    // members: 1
            2, b'l', // member_id "l"
            2, b'i', // group_instance_id "i"
            3, 1, 2, // metadata [1, 2]
            0, // member tags
            0, // response tags
        ];
        let resp: JoinGroupResponse = decode_fixture(bytes, 9);
        assert_eq!(resp.generation_id, 5);
        assert_eq!(resp.protocol_type, None);
        assert_eq!(resp.protocol_name, None);
        assert!(resp.skip_assignment);
        assert_eq!(resp.members[0].group_instance_id.as_deref(), Some("i"));
        // skip_assignment is not ignorable; a null protocol name needs v7+.
        assert_eq!(resp.encode_to_vec(8).unwrap_err().field, "skip_assignment");
    }

    /// A v1 response: no throttle time; the protocol name is not nullable.
    #[test]
    fn v1_response_fixture() {
        let bytes: &[u8] = &[
            0, 0x4f, // error_code 79 MEMBER_ID_REQUIRED
            0xff, 0xff, 0xff, 0xff, // generation_id -1
            0, 0, // protocol_name ""
            0, 0, // leader ""
            0, 1, b'm', // member_id "m"
            0, 0, 0, 0, // members: 0
        ];
        let resp: JoinGroupResponse = decode_fixture(bytes, 1);
        assert_eq!(resp.protocol_name.as_deref(), Some(""));
        assert_eq!(resp.member_id, "m");
        let null_name = JoinGroupResponse {
            protocol_name: None,
            ..resp
        };
        assert_eq!(
            null_name.encode_to_vec(6).unwrap_err().kind,
            EncodeErrorKind::NullNotAllowed
        );
        let mut null_on_wire = bytes.to_vec();
        null_on_wire[6..8].copy_from_slice(&[0xff, 0xff]);
        assert!(JoinGroupResponse::decode(&null_on_wire, 1).is_err());
    }
}
