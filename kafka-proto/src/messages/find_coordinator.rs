//! FindCoordinator (key 10), versions 0–6, flexible from 3.
//!
//! Versions 0–3 look up a single `key` and answer with a single coordinator;
//! from v4 (KIP-699) the request carries a batch of `coordinator_keys` and the
//! response a `coordinators` array, one entry per key, each with its own error.
//! `key_type` (v1+) selects a group (0), transaction (1) or share (2, v6) coordinator.

use crate::describe::{message, nested};

message! {
    /// Finds the coordinator of a group or transactional id.
    ///
    /// ```
    /// use kafka_proto::{Message, messages::FindCoordinatorRequest};
    /// // v3 and below: one key.
    /// let old = FindCoordinatorRequest {
    ///     key: "my-txn".into(),
    ///     key_type: FindCoordinatorRequest::KEY_TYPE_TRANSACTION,
    ///     ..Default::default()
    /// };
    /// assert_eq!(
    ///     FindCoordinatorRequest::decode(&old.encode_to_vec(3).unwrap(), 3).unwrap(),
    ///     old
    /// );
    /// // v4+: a batch of keys; `key` cannot be sent.
    /// let new = FindCoordinatorRequest {
    ///     key_type: FindCoordinatorRequest::KEY_TYPE_TRANSACTION,
    ///     coordinator_keys: vec!["my-txn".into()],
    ///     ..Default::default()
    /// };
    /// assert_eq!(
    ///     FindCoordinatorRequest::decode(&new.encode_to_vec(6).unwrap(), 6).unwrap(),
    ///     new
    /// );
    /// assert!(old.encode_to_vec(4).is_err());
    /// ```
    pub struct FindCoordinatorRequest [message FindCoordinator, versions 0..=6, flexible 3, request FindCoordinatorResponse] {
        /// The coordinator key (v0–3).
        key: String, versions ..=3;
        /// The coordinator key type (v1+): 0 group, 1 transaction, 2 share.
        key_type: i8, versions 1..;
        /// The coordinator keys (v4+).
        coordinator_keys: Vec<String>, versions 4..;
    }
}

message! {
    /// The coordinator(s) found.
    pub struct FindCoordinatorResponse [message FindCoordinator, versions 0..=6, flexible 3, response] {
        /// Throttle time in milliseconds (v1+).
        throttle_time_ms: i32, versions 1..;
        /// The error code, or 0 (v0–3).
        error_code: i16, versions ..=3;
        /// The error message, or null (v1–3). Defaults to `""` as in Kafka.
        error_message: Option<String> = Some(String::new()), versions 1..=3, nullable 1..=3;
        /// The coordinator's node id (v0–3).
        node_id: i32, versions ..=3;
        /// The coordinator's host name (v0–3).
        host: String, versions ..=3;
        /// The coordinator's port (v0–3).
        port: i32, versions ..=3;
        /// One result per requested key (v4+).
        coordinators: Vec<FindCoordinatorResponseCoordinator>, versions 4..;
    }
}

nested! {
    /// The coordinator of one key (v4+).
    pub struct FindCoordinatorResponseCoordinator [in "coordinators.", flexible 3] {
        /// The coordinator key.
        key: String, versions 4..;
        /// The coordinator's node id.
        node_id: i32, versions 4..;
        /// The coordinator's host name.
        host: String, versions 4..;
        /// The coordinator's port.
        port: i32, versions 4..;
        /// The error code, or 0.
        error_code: i16, versions 4..;
        /// The error message, or null. Defaults to `""` as in Kafka.
        error_message: Option<String> = Some(String::new()), versions 4.., nullable 4..;
    }
}

impl FindCoordinatorRequest {
    /// `key_type` of a consumer group coordinator.
    pub const KEY_TYPE_GROUP: i8 = 0;
    /// `key_type` of a transaction coordinator.
    pub const KEY_TYPE_TRANSACTION: i8 = 1;
    /// `key_type` of a share group coordinator (v6+).
    pub const KEY_TYPE_SHARE: i8 = 2;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;
    use crate::testing::{assert_not_in_version, decode_fixture};

    /// v1 request by hand: key "tx" (int16 length), key_type 1.
    #[test]
    fn v1_request_fixture() {
        let bytes: &[u8] = &[0, 2, b't', b'x', 1];
        let req: FindCoordinatorRequest = decode_fixture(bytes, 1);
        assert_eq!(req.key, "tx");
        assert_eq!(req.key_type, FindCoordinatorRequest::KEY_TYPE_TRANSACTION);
    }

    /// v4 request by hand: key_type 1, keys ["a", "bc"], no tags.
    #[test]
    fn v4_request_fixture() {
        let bytes: &[u8] = &[1, 3, 2, b'a', 3, b'b', b'c', 0];
        let req: FindCoordinatorRequest = decode_fixture(bytes, 4);
        assert_eq!(req.key, "");
        assert_eq!(req.coordinator_keys, ["a", "bc"]);
        // The batch cannot be sent to a v3 broker.
        assert_not_in_version(&req, 3, "coordinator_keys");
    }

    /// v2 response by hand: throttle 0, error 15 (COORDINATOR_NOT_AVAILABLE),
    /// null message, node -1, host "", port -1.
    #[test]
    fn v2_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 0, // throttle
            0, 15, // error
            0xff, 0xff, // null message
            0xff, 0xff, 0xff, 0xff, // node -1
            0, 0, // host ""
            0xff, 0xff, 0xff, 0xff, // port -1
        ];
        let resp: FindCoordinatorResponse = decode_fixture(bytes, 2);
        assert_eq!(resp.error_code, 15);
        assert_eq!(resp.error_message, None);
        assert_eq!((resp.node_id, resp.port), (-1, -1));
    }

    /// v5 response by hand: throttle 1, one coordinator "tx" at node 3 "h":9092, no error.
    #[test]
    fn v5_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 1, // throttle
            2, // 1 coordinator
            3, b't', b'x', // key
            0, 0, 0, 3, // node 3
            2, b'h', // host
            0, 0, 0x23, 0x84, // port 9092
            0, 0, // error
            0, // null message
            0, // coordinator tags
            0, // tags
        ];
        let resp: FindCoordinatorResponse = decode_fixture(bytes, 5);
        assert_eq!(resp.throttle_time_ms, 1);
        let c = &resp.coordinators[0];
        assert_eq!(
            (c.key.as_str(), c.node_id, c.host.as_str(), c.port),
            ("tx", 3, "h", 9092)
        );
        assert_eq!(c.error_message, None);
        // Single-coordinator fields cannot be sent in v4+.
        let bad = FindCoordinatorResponse {
            node_id: 1,
            ..Default::default()
        };
        assert!(bad.encode_to_vec(4).is_err());
    }
}
