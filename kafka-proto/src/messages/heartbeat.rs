//! Heartbeat (key 12), versions 0–4, flexible from 4.
//!
//! A classic group member's liveness signal between rebalances; the answer
//! tells it to rejoin (REBALANCE_IN_PROGRESS) or that it was removed
//! (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, FENCED_INSTANCE_ID). v3 adds static
//! membership (`group_instance_id`, KIP-345). The response's
//! `throttle_time_ms` (v1+) is ignorable.

use crate::describe::{ignorable, message};

message! {
    /// A member's heartbeat in a classic group.
    ///
    /// ```
    /// use kafka_proto::{Message, messages::HeartbeatRequest};
    /// let req = HeartbeatRequest {
    ///     group_id: "orders-app".into(),
    ///     generation_id: 3,
    ///     member_id: "m-1".into(),
    ///     group_instance_id: Some("host-a".into()),
    ///     ..Default::default()
    /// };
    /// assert_eq!(HeartbeatRequest::decode(&req.encode_to_vec(4).unwrap(), 4).unwrap(), req);
    /// // Static membership needs v3+.
    /// assert!(req.encode_to_vec(2).is_err());
    /// ```
    pub struct HeartbeatRequest [message Heartbeat, versions 0..=4, flexible 4, request HeartbeatResponse] {
        /// The group id.
        group_id: String;
        /// The generation of the group.
        generation_id: i32;
        /// The member ID.
        member_id: String;
        /// The unique identifier of the consumer instance provided by end user (v3+, default null).
        group_instance_id: Option<String> = None, versions 3.., nullable 3..;
    }
}

message! {
    /// The coordinator's answer to a heartbeat.
    pub struct HeartbeatResponse [message Heartbeat, versions 0..=4, flexible 4, response] {
        /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota (v1+, ignorable).
        throttle_time_ms: i32, versions ignorable(1..);
        /// The error code, or 0 if there was no error.
        error_code: i16;
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
            0, 1, b'g', // group_id "g"
            0, 0, 0, 2, // generation_id 2
            0, 1, b'm', // member_id "m"
        ];
        let req: HeartbeatRequest = decode_fixture(bytes, 0);
        assert_eq!((req.group_id.as_str(), req.generation_id), ("g", 2));
    }

    /// A v4 request (flexible) with a null instance id.
    #[test]
    fn v4_request_fixture() {
        let bytes: &[u8] = &[
            2, b'g', // group_id "g"
            0, 0, 0, 2, // generation_id 2
            2, b'm', // member_id "m"
            0,    // group_instance_id null
            0,    // tags
        ];
        let req: HeartbeatRequest = decode_fixture(bytes, 4);
        assert_eq!(req.group_instance_id, None);
    }

    /// v0 response: no throttle time; a throttle time set is dropped there.
    #[test]
    fn v0_response_fixture() {
        let bytes: &[u8] = &[0, 22]; // ILLEGAL_GENERATION
        let resp: HeartbeatResponse = decode_fixture(bytes, 0);
        assert_eq!(
            crate::ErrorCode::from(resp.error_code),
            crate::ErrorCode::IllegalGeneration
        );
        let throttled = HeartbeatResponse {
            throttle_time_ms: 100,
            ..resp
        };
        assert_eq!(throttled.encode_to_vec(0).unwrap(), bytes);
        assert_eq!(throttled.encode_to_vec(1).unwrap(), [0, 0, 0, 100, 0, 22]);
    }
}
