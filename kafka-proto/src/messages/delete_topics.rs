//! DeleteTopics (key 20), versions 1–6, flexible from 4.
//!
//! Deletes topics. Up to v5 the request names the topics (`topic_names`);
//! from v6 it lists [`DeleteTopicsRequestDeleteTopicState`]s that carry a
//! name or a topic id, and the response carries each topic's id (its name
//! may then be null). From v5 the response may carry an error message
//! (KIP-599). Version 0 was removed in Kafka 4.0 (KIP-896).
//!
//! `topic_names` (v1–5), the response's `throttle_time_ms`, `topic_id` and
//! `error_message` are ignorable: encoding at a version without them drops
//! them.

use crate::describe::{ignorable, message, nested};
use crate::primitives::Uuid;

message! {
    /// Deletes topics, by name (v1–5) or by name or id (v6+).
    ///
    /// ```
    /// use kafka_proto::{Message, messages::*};
    /// let req = DeleteTopicsRequest {
    ///     topic_names: vec!["orders".into()],
    ///     timeout_ms: 30_000,
    ///     ..Default::default()
    /// };
    /// assert_eq!(DeleteTopicsRequest::decode(&req.encode_to_vec(5).unwrap(), 5).unwrap(), req);
    /// // v6 has no `topic_names` (ignorable): the names are dropped, not an error.
    /// let v6 = DeleteTopicsRequest::decode(&req.encode_to_vec(6).unwrap(), 6).unwrap();
    /// assert!(v6.topic_names.is_empty());
    /// ```
    pub struct DeleteTopicsRequest [message DeleteTopics, versions 1..=6, flexible 4, request DeleteTopicsResponse] {
        /// The name or topic ID of the topics to delete (v6+).
        topics: Vec<DeleteTopicsRequestDeleteTopicState>, versions 6..;
        /// The names of the topics to delete (v1–5, ignorable).
        topic_names: Vec<String>, versions ignorable(..=5);
        /// The length of time in milliseconds to wait for the deletions to complete.
        timeout_ms: i32;
    }
}

nested! {
    /// One topic to delete (v6+): by name, or by id with a null name.
    pub struct DeleteTopicsRequestDeleteTopicState [in "topics.", flexible 4] {
        /// The topic name, or null to address the topic by id (v6+).
        name: Option<String> = None, versions 6.., nullable 6..;
        /// The unique topic ID (v6+).
        topic_id: Uuid, versions 6..;
    }
}

message! {
    /// The result of each topic deletion.
    pub struct DeleteTopicsResponse [message DeleteTopics, versions 1..=6, flexible 4, response] {
        /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota.
        throttle_time_ms: i32, versions ignorable(1..);
        /// The results for each topic we tried to delete.
        responses: Vec<DeleteTopicsResponseDeletableTopicResult>;
    }
}

nested! {
    /// The result of deleting one topic.
    pub struct DeleteTopicsResponseDeletableTopicResult [in "responses.", flexible 4] {
        /// The topic name (nullable in v6+).
        name: Option<String> = Some(String::new()), nullable 6..;
        /// The unique topic ID (v6+, ignorable).
        topic_id: Uuid, versions ignorable(6..);
        /// The deletion error, or 0 if the deletion succeeded.
        error_code: i16;
        /// The error message, or null if there was no error (v5+, ignorable).
        error_message: Option<String> = None, versions ignorable(5..), nullable 5..;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EncodeErrorKind;
    use crate::Message;
    use crate::testing::{assert_not_in_version, decode_fixture};

    /// A v1 request written by hand from the schema layout.
    #[test]
    fn v1_request_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 2, // topic_names: 2
            0, 1, b'a', // "a"
            0, 2, b'b', b'c', // "bc"
            0, 0, 0x75, 0x30, // timeout_ms 30000
        ];
        let req: DeleteTopicsRequest = decode_fixture(bytes, 1);
        assert_eq!(req.topic_names, ["a", "bc"]);
        assert_eq!(req.timeout_ms, 30000);
        assert!(req.topics.is_empty());
    }

    /// A v6 request: one topic by name, one by id with a null name.
    #[test]
    fn v6_request_fixture() {
        let mut bytes: Vec<u8> = vec![
            3, // topics: 2
            2, b't', // name "t"
        ];
        bytes.extend([0; 16]); // topic_id zero
        bytes.push(0); // topic tags
        bytes.push(0); // name null
        bytes.extend([0xcd; 16]); // topic_id
        bytes.extend([
            0, // topic tags
            0, 0, 0x03, 0xe8, // timeout_ms 1000
            0,    // request tags
        ]);
        let req = DeleteTopicsRequest::decode(&bytes, 6).unwrap();
        assert_eq!(req.topics[0].name.as_deref(), Some("t"));
        assert_eq!(req.topics[1].name, None);
        assert_eq!(req.topics[1].topic_id, [0xcd; 16]);
        assert_eq!(req.timeout_ms, 1000);
        assert_eq!(req.encode_to_vec(6).unwrap(), bytes);
        // `topics` is not ignorable: before v6 it is an error, not dropped.
        assert_not_in_version(&req, 5, "topics");
    }

    /// A v5 response (flexible): error message present, null.
    #[test]
    fn v5_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 0, // throttle_time_ms
            3, // responses: 2
            2, b'a', // name "a"
            0, 0, // error_code
            0, // error_message null
            0, // result tags
            2, b'b', // name "b"
            0, 73, // error_code TOPIC_DELETION_DISABLED
            5, b'o', b'f', b'f', b'!', // error_message "off!"
            0,    // result tags
            0,    // response tags
        ];
        let resp: DeleteTopicsResponse = decode_fixture(bytes, 5);
        assert_eq!(resp.responses[0].name.as_deref(), Some("a"));
        assert_eq!(resp.responses[0].error_message, None);
        assert_eq!(resp.responses[1].error_code, 73);
        assert_eq!(resp.responses[1].error_message.as_deref(), Some("off!"));
    }

    /// Ignorable fields are dropped at versions without them; a null name is
    /// not (the name is not ignorable, and not nullable before v6).
    #[test]
    fn ignorable_fields_dropped_null_name_refused() {
        let resp = DeleteTopicsResponse {
            throttle_time_ms: 9,
            responses: vec![DeleteTopicsResponseDeletableTopicResult {
                name: Some("a".into()),
                topic_id: [1; 16],
                error_message: Some("m".into()),
                ..Default::default()
            }],
            ..Default::default()
        };
        let v4 = DeleteTopicsResponse::decode(&resp.encode_to_vec(4).unwrap(), 4).unwrap();
        assert_eq!(v4.throttle_time_ms, 9);
        assert_eq!(v4.responses[0].topic_id, [0; 16]);
        assert_eq!(v4.responses[0].error_message, None);
        let null_name = DeleteTopicsResponse {
            responses: vec![DeleteTopicsResponseDeletableTopicResult {
                name: None,
                ..Default::default()
            }],
            ..Default::default()
        };
        let err = null_name.encode_to_vec(5).unwrap_err();
        assert_eq!(err.kind, EncodeErrorKind::NullNotAllowed);
        assert_eq!(err.field, "responses.name");
        assert!(null_name.encode_to_vec(6).is_ok());
    }

    #[test]
    fn topic_ids_need_v6() {
        use crate::{Message, messages::*};
        let req = DeleteTopicsRequest {
            topics: vec![DeleteTopicsRequestDeleteTopicState {
                topic_id: [7; 16],
                ..Default::default()
            }],
            timeout_ms: 30_000,
            ..Default::default()
        };
        assert_eq!(req.topics[0].name, None, "the name defaults to null");
        assert_eq!(
            DeleteTopicsRequest::decode(&req.encode_to_vec(6).unwrap(), 6).unwrap(),
            req
        );
        // Before v6 a request cannot address topics by id.
        assert!(req.encode_to_vec(5).is_err());
    }

    #[test]
    fn null_topic_name_needs_v6() {
        use crate::{Message, messages::*};
        // v6: a topic deleted by id answers with its id and may have a null name.
        let resp = DeleteTopicsResponse {
            responses: vec![DeleteTopicsResponseDeletableTopicResult {
                name: None,
                topic_id: [7; 16],
                error_code: 100, // UNKNOWN_TOPIC_ID
                error_message: Some("unknown topic id".into()),
                ..Default::default()
            }],
            ..Default::default()
        };
        assert_eq!(
            DeleteTopicsResponse::decode(&resp.encode_to_vec(6).unwrap(), 6).unwrap(),
            resp
        );
        // A null name is refused before v6.
        assert!(resp.encode_to_vec(5).is_err());
    }
}
