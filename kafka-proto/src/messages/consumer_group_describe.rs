//! ConsumerGroupDescribe (key 69), versions 0–1, flexible from 0.
//!
//! Describes KIP-848 consumer groups: state, epochs, assignor and, per
//! member, its subscription and its current and target assignments. v1 adds
//! the members' `member_type` (KIP-1099; ignorable: dropped when encoding at
//! v0). `authorized_operations` defaults to `i32::MIN` (not requested).

use crate::describe::{ignorable, message, nested};
use crate::primitives::Uuid;

message! {
    /// Describes consumer groups.
    ///
    /// ```
    /// use kafka_proto::{Message, messages::ConsumerGroupDescribeRequest};
    /// let req = ConsumerGroupDescribeRequest {
    ///     group_ids: vec!["orders-app".into()],
    ///     include_authorized_operations: true,
    ///     ..Default::default()
    /// };
    /// let bytes = req.encode_to_vec(1).unwrap();
    /// assert_eq!(ConsumerGroupDescribeRequest::decode(&bytes, 1).unwrap(), req);
    /// ```
    pub struct ConsumerGroupDescribeRequest [message ConsumerGroupDescribe, versions 0..=1, flexible 0, request ConsumerGroupDescribeResponse] {
        /// The ids of the groups to describe.
        group_ids: Vec<String>;
        /// Whether to include authorized operations.
        include_authorized_operations: bool;
    }
}

message! {
    /// The description of each requested group.
    pub struct ConsumerGroupDescribeResponse [message ConsumerGroupDescribe, versions 0..=1, flexible 0, response] {
        /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota.
        throttle_time_ms: i32;
        /// Each described group.
        groups: Vec<ConsumerGroupDescribeResponseDescribedGroup>;
    }
}

nested! {
    /// One described group.
    pub struct ConsumerGroupDescribeResponseDescribedGroup [in "groups.", flexible 0] {
        /// The describe error, or 0 if there was no error.
        error_code: i16;
        /// The top-level error message, or null if there was no error.
        error_message: Option<String> = None, nullable ..;
        /// The group ID string.
        group_id: String;
        /// The group state string, or the empty string.
        group_state: String;
        /// The group epoch.
        group_epoch: i32;
        /// The assignment epoch.
        assignment_epoch: i32;
        /// The selected assignor.
        assignor_name: String;
        /// The members.
        members: Vec<ConsumerGroupDescribeResponseMember>;
        /// 32-bit bitfield to represent authorized operations for this group (default `i32::MIN`).
        authorized_operations: i32 = i32::MIN;
    }
}

nested! {
    /// One member of a described group.
    pub struct ConsumerGroupDescribeResponseMember [in "groups.members.", flexible 0] {
        /// The member ID.
        member_id: String;
        /// The member instance ID.
        instance_id: Option<String> = None, nullable ..;
        /// The member rack ID.
        rack_id: Option<String> = None, nullable ..;
        /// The current member epoch.
        member_epoch: i32;
        /// The client ID.
        client_id: String;
        /// The client host.
        client_host: String;
        /// The subscribed topic names.
        subscribed_topic_names: Vec<String>;
        /// The subscribed topic regex, or null if not provided.
        subscribed_topic_regex: Option<String> = None, nullable ..;
        /// The current assignment.
        assignment: ConsumerGroupDescribeResponseAssignment;
        /// The target assignment.
        target_assignment: ConsumerGroupDescribeResponseAssignment;
        /// -1 for unknown, 0 for a classic member, 1 for a consumer member (v1+, default -1, ignorable).
        member_type: i8 = -1, versions ignorable(1..);
    }
}

nested! {
    /// A member's current or target assignment.
    pub struct ConsumerGroupDescribeResponseAssignment [in "groups.members.assignment.", flexible 0] {
        /// The assigned topic-partitions to the member.
        topic_partitions: Vec<ConsumerGroupDescribeResponseTopicPartitions>;
    }
}

nested! {
    /// The partitions of one topic in an assignment.
    pub struct ConsumerGroupDescribeResponseTopicPartitions [in "groups.members.assignment.topic_partitions.", flexible 0] {
        /// The topic ID.
        topic_id: Uuid;
        /// The topic name.
        topic_name: String;
        /// The partitions.
        partitions: Vec<i32>;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;
    use crate::testing::decode_fixture;

    /// A v0 request written by hand.
    #[test]
    fn v0_request_fixture() {
        let bytes: &[u8] = &[
            3, // group_ids: 2
            2, b'a', // "a"
            2, b'b', // "b"
            1,    // include_authorized_operations
            0,    // tags
        ];
        let req: ConsumerGroupDescribeRequest = decode_fixture(bytes, 0);
        assert_eq!(req.group_ids, ["a", "b"]);
        assert!(req.include_authorized_operations);
    }

    /// A v1 response: one group, one member with assignments and a type.
    #[test]
    fn v1_response_fixture() {
        let mut bytes: Vec<u8> = vec![
            0, 0, 0, 0, // throttle_time_ms
            2, // groups: 1
            0, 0, // error_code
            0, // error_message null
            2, b'g', // group_id "g"
            7, b'S', b't', b'a', b'b', b'l', b'e', // group_state "Stable"
            0, 0, 0, 5, // group_epoch 5
            0, 0, 0, 5, // assignment_epoch 5
            2, b'u', // assignor_name "u"
            2,    // members: 1
            2, b'm', // member_id "m"
            0,    // instance_id null
            2, b'r', // rack_id "r"
            0, 0, 0, 5, // member_epoch 5
            2, b'c', // client_id "c"
            2, b'h', // client_host "h"
            2, 2, b't', // subscribed_topic_names ["t"]
            0,    // subscribed_topic_regex null
            2,    // assignment.topic_partitions: 1
        ];
        bytes.extend([0x07; 16]); // topic_id
        bytes.extend([
            2, b't', // topic_name "t"
            2, 0, 0, 0, 1, // partitions [1]
            0, // topic_partitions tags
            0, // assignment tags
            1, // target_assignment.topic_partitions: empty
            0, // target_assignment tags
            1, // member_type 1
            0, // member tags
            0x80, 0, 0, 0, // authorized_operations i32::MIN
            0, // group tags
            0, // response tags
        ]);
        let resp = ConsumerGroupDescribeResponse::decode(&bytes, 1).unwrap();
        let g = &resp.groups[0];
        assert_eq!(g.group_state, "Stable");
        assert_eq!(g.authorized_operations, i32::MIN);
        let m = &g.members[0];
        assert_eq!(m.rack_id.as_deref(), Some("r"));
        assert_eq!(m.assignment.topic_partitions[0].topic_id, [0x07; 16]);
        assert_eq!(m.assignment.topic_partitions[0].partitions, [1]);
        assert!(m.target_assignment.topic_partitions.is_empty());
        assert_eq!(m.member_type, 1);
        assert_eq!(resp.encode_to_vec(1).unwrap(), bytes);
    }
}
