//! LeaveGroup (key 13), versions 0–5, flexible from 4.
//!
//! Leaves a classic group so that it rebalances at once instead of after the
//! session timeout. Up to v2 one member leaves (`member_id`); from v3 a batch
//! of members, identified by member id and/or group instance id (KIP-345),
//! with a result per member. v5 adds the reason (KIP-800).
//!
//! Ignorable fields (dropped when encoding at a version without them): the
//! members' `reason` and the response's `throttle_time_ms`.

use crate::describe::{ignorable, message, nested};

message! {
    /// Removes members from a classic group.
    ///
    /// ```
    /// use kafka_proto::{Message, messages::*};
    /// let req = LeaveGroupRequest {
    ///     group_id: "orders-app".into(),
    ///     members: vec![LeaveGroupRequestMemberIdentity {
    ///         member_id: "m-1".into(),
    ///         reason: Some("the consumer is being closed".into()),
    ///         ..Default::default()
    ///     }],
    ///     ..Default::default()
    /// };
    /// assert_eq!(LeaveGroupRequest::decode(&req.encode_to_vec(5).unwrap(), 5).unwrap(), req);
    /// // v0–2 name a single member in `member_id` instead.
    /// assert!(req.encode_to_vec(2).is_err());
    /// ```
    pub struct LeaveGroupRequest [message LeaveGroup, versions 0..=5, flexible 4, request LeaveGroupResponse] {
        /// The ID of the group to leave.
        group_id: String;
        /// The member ID to remove from the group (v0–2).
        member_id: String, versions ..=2;
        /// List of leaving member identities (v3+).
        members: Vec<LeaveGroupRequestMemberIdentity>, versions 3..;
    }
}

nested! {
    /// One leaving member (v3+).
    pub struct LeaveGroupRequestMemberIdentity [in "members.", flexible 4] {
        /// The member ID to remove from the group.
        member_id: String, versions 3..;
        /// The group instance ID to remove from the group (default null).
        group_instance_id: Option<String> = None, versions 3.., nullable 3..;
        /// The reason why the member left the group (v5+, default null, ignorable).
        reason: Option<String> = None, versions ignorable(5..), nullable 5..;
    }
}

message! {
    /// The outcome of a leave, per member from v3.
    pub struct LeaveGroupResponse [message LeaveGroup, versions 0..=5, flexible 4, response] {
        /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota (v1+, ignorable).
        throttle_time_ms: i32, versions ignorable(1..);
        /// The error code, or 0 if there was no error.
        error_code: i16;
        /// List of leaving member responses (v3+).
        members: Vec<LeaveGroupResponseMemberResponse>, versions 3..;
    }
}

nested! {
    /// The outcome for one leaving member (v3+).
    pub struct LeaveGroupResponseMemberResponse [in "members.", flexible 4] {
        /// The member ID to remove from the group.
        member_id: String, versions 3..;
        /// The group instance ID to remove from the group.
        group_instance_id: Option<String> = Some(String::new()), versions 3.., nullable 3..;
        /// The error code, or 0 if there was no error.
        error_code: i16, versions 3..;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{assert_not_in_version, decode_fixture};

    /// A v0 request written by hand: one member.
    #[test]
    fn v0_request_fixture() {
        let bytes: &[u8] = &[
            0, 1, b'g', // group_id "g"
            0, 1, b'm', // member_id "m"
        ];
        let req: LeaveGroupRequest = decode_fixture(bytes, 0);
        assert_eq!(req.member_id, "m");
        assert!(req.members.is_empty());
        // v3+ has no single member id, and it is not ignorable.
        assert_not_in_version(&req, 3, "member_id");
    }

    /// A v5 request: one member with an instance id and a reason, one bare.
    #[test]
    fn v5_request_fixture() {
        let bytes: &[u8] = &[
            2, b'g', // group_id "g"
            3,    // members: 2
            2, b'a', // member_id "a"
            2, b'i', // group_instance_id "i"
            2, b'r', // reason "r"
            0,    // member tags
            1,    // member_id ""
            0,    // group_instance_id null
            0,    // reason null
            0,    // member tags
            0,    // request tags
        ];
        let req: LeaveGroupRequest = decode_fixture(bytes, 5);
        assert_eq!(req.members[0].group_instance_id.as_deref(), Some("i"));
        assert_eq!(req.members[0].reason.as_deref(), Some("r"));
        assert_eq!(req.members[1].group_instance_id, None);
    }

    /// A v3 response written by hand.
    #[test]
    fn v3_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 0, // throttle_time_ms
            0, 0, // error_code
            0, 0, 0, 1, // members: 1
            0, 1, b'm', // member_id "m"
            0xff, 0xff, // group_instance_id null
            0, 82, // FENCED_INSTANCE_ID
        ];
        let resp: LeaveGroupResponse = decode_fixture(bytes, 3);
        assert_eq!(resp.members[0].group_instance_id, None);
        assert_eq!(
            crate::ErrorCode::from(resp.members[0].error_code),
            crate::ErrorCode::FencedInstanceId
        );
    }
}
