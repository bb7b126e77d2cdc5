//! CreateTopics (key 19), versions 2–7, flexible from 5.
//!
//! From v5 the response describes each created topic (partition count,
//! replication factor and configs, the latter nullable) and may carry a
//! `topic_config_error_code` as tagged field 0; from v7 it carries the topic id.

use crate::describe::{message, nested};
use crate::primitives::Uuid;

message! {
    /// Creates topics.
    ///
    /// ```
    /// use kafka_proto::{
    ///     Message,
    ///     messages::{CreateTopicsRequest, CreateTopicsRequestCreatableTopic},
    /// };
    /// let req = CreateTopicsRequest {
    ///     topics: vec![CreateTopicsRequestCreatableTopic {
    ///         name: "orders".into(),
    ///         num_partitions: 6,
    ///         replication_factor: 3,
    ///         ..Default::default()
    ///     }],
    ///     ..Default::default()
    /// };
    /// assert_eq!(req.timeout_ms, 60_000);
    /// let bytes = req.encode_to_vec(7).unwrap();
    /// assert_eq!(CreateTopicsRequest::decode(&bytes, 7).unwrap(), req);
    /// ```
    pub struct CreateTopicsRequest [message CreateTopics, versions 2..=7, flexible 5, request CreateTopicsResponse] {
        /// The topics to create.
        topics: Vec<CreateTopicsRequestCreatableTopic>;
        /// How long to wait in milliseconds before timing out the request (default 60000).
        timeout_ms: i32 = 60000;
        /// If true, check that the topics can be created as specified, but don't create anything.
        validate_only: bool;
    }
}

nested! {
    /// One topic to create.
    pub struct CreateTopicsRequestCreatableTopic [in "topics.", flexible 5] {
        /// The topic name.
        name: String;
        /// The number of partitions, or -1 with a manual assignment or to use the broker default.
        num_partitions: i32;
        /// The replication factor, or -1 with a manual assignment or to use the broker default.
        replication_factor: i16;
        /// The manual partition assignment, or empty for automatic assignment.
        assignments: Vec<CreateTopicsRequestCreatableReplicaAssignment>;
        /// The custom topic configurations to set.
        configs: Vec<CreateTopicsRequestCreatableTopicConfig>;
    }
}

nested! {
    /// A manual replica assignment for one partition.
    pub struct CreateTopicsRequestCreatableReplicaAssignment [in "topics.assignments.", flexible 5] {
        /// The partition index.
        partition_index: i32;
        /// The brokers to place the partition on.
        broker_ids: Vec<i32>;
    }
}

nested! {
    /// A topic configuration to set at creation.
    pub struct CreateTopicsRequestCreatableTopicConfig [in "topics.configs.", flexible 5] {
        /// The configuration name.
        name: String;
        /// The configuration value.
        value: Option<String> = Some(String::new()), nullable ..;
    }
}

message! {
    /// The result of a [`CreateTopicsRequest`].
    pub struct CreateTopicsResponse [message CreateTopics, versions 2..=7, flexible 5, response] {
        /// Throttle time in milliseconds, or zero.
        throttle_time_ms: i32;
        /// Results for each topic we tried to create.
        topics: Vec<CreateTopicsResponseCreatableTopicResult>;
    }
}

nested! {
    /// The result for one topic.
    pub struct CreateTopicsResponseCreatableTopicResult [in "topics.", flexible 5] {
        /// The topic name.
        name: String;
        /// The unique topic id (v7+).
        topic_id: Uuid, versions 7..;
        /// The error code, or 0 if there was no error.
        error_code: i16;
        /// The error message, or null if there was no error.
        error_message: Option<String> = Some(String::new()), nullable ..;
        /// Optional topic config error returned if configs are not returned (v5+, tagged 0).
        topic_config_error_code: i16, versions 5.., tag 0;
        /// Number of partitions of the topic (v5+, default -1).
        num_partitions: i32 = -1, versions 5..;
        /// Replication factor of the topic (v5+, default -1).
        replication_factor: i16 = -1, versions 5..;
        /// Configuration of the topic, or null (v5+).
        configs: Option<Vec<CreateTopicsResponseCreatableTopicConfigs>> = Some(Vec::new()), versions 5.., nullable 5..;
    }
}

nested! {
    /// One configuration of a created topic (v5+).
    pub struct CreateTopicsResponseCreatableTopicConfigs [in "topics.configs.", flexible 5] {
        /// The configuration name.
        name: String, versions 5..;
        /// The configuration value.
        value: Option<String> = Some(String::new()), versions 5.., nullable 5..;
        /// True if the configuration is read-only.
        read_only: bool, versions 5..;
        /// The configuration source (default -1).
        config_source: i8 = -1, versions 5..;
        /// True if this configuration is sensitive.
        is_sensitive: bool, versions 5..;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;
    use crate::testing::{assert_not_in_version, decode_fixture};

    /// v5 request: one topic with a manual assignment and one config.
    #[test]
    fn v5_request_fixture() {
        let bytes: &[u8] = &[
            2, // topics: 1 element
            2, b't', // name "t"
            0xff, 0xff, 0xff, 0xff, // num_partitions -1
            0xff, 0xff, // replication_factor -1
            2,    // assignments: 1 element
            0, 0, 0, 0, // partition_index 0
            3, 0, 0, 0, 1, 0, 0, 0, 2, // broker_ids [1, 2]
            0, // assignment tags
            2, // configs: 1 element
            15, b'c', b'l', b'e', b'a', b'n', b'u', b'p', b'.', b'p', b'o', b'l', b'i', b'c',
            b'y', // "cleanup.policy"
            8, b'c', b'o', b'm', b'p', b'a', b'c', b't', // "compact"
            0,    // config tags
            0,    // topic tags
            0, 0, 0x75, 0x30, // timeout_ms 30000
            1,    // validate_only
            0,    // tags
        ];
        let req: CreateTopicsRequest = decode_fixture(bytes, 5);
        assert_eq!(req.timeout_ms, 30000);
        assert!(req.validate_only);
        let t = &req.topics[0];
        assert_eq!(t.name, "t");
        assert_eq!((t.num_partitions, t.replication_factor), (-1, -1));
        assert_eq!(t.assignments[0].broker_ids, [1, 2]);
        assert_eq!(t.configs[0].name, "cleanup.policy");
        assert_eq!(t.configs[0].value.as_deref(), Some("compact"));
    }

    /// v7 response: topic id, null message, null configs, tagged config error.
    #[test]
    fn v7_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 0, // throttle_time_ms
            2, // topics: 1 element
            2, b't', // name "t"
            1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, // topic_id
            0, 0, // error_code
            0, // error_message null
            0, 0, 0, 3, // num_partitions 3
            0, 1, // replication_factor 1
            0, // configs null
            1, 0, 2, 0, 29, // tag 0: topic_config_error_code 29
            0,  // tags
        ];
        let resp: CreateTopicsResponse = decode_fixture(bytes, 7);
        let t = &resp.topics[0];
        assert_eq!(
            t.topic_id,
            [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]
        );
        assert_eq!(t.error_message, None);
        assert_eq!((t.num_partitions, t.replication_factor), (3, 1));
        assert_eq!(t.configs, None);
        assert_eq!(t.topic_config_error_code, 29);
        assert!(t.unknown_tagged_fields.is_empty());
    }

    /// v2 response is classic: no topic id, no v5 fields.
    #[test]
    fn v2_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 5, // throttle_time_ms 5
            0, 0, 0, 1, // topics: 1 element
            0, 1, b't', // name
            0, 36, // TOPIC_ALREADY_EXISTS
            0, 2, b'n', b'o', // error_message "no"
        ];
        let resp: CreateTopicsResponse = decode_fixture(bytes, 2);
        assert_eq!(resp.throttle_time_ms, 5);
        assert_eq!(resp.topics[0].error_code, 36);
        assert_eq!(resp.topics[0].num_partitions, -1);
    }

    #[test]
    fn v5_fields_rejected_before_v5() {
        let resp = CreateTopicsResponse {
            topics: vec![CreateTopicsResponseCreatableTopicResult {
                num_partitions: 3,
                ..Default::default()
            }],
            ..Default::default()
        };
        assert_not_in_version(&resp, 4, "topics.num_partitions");
        let resp = CreateTopicsResponse {
            topics: vec![CreateTopicsResponseCreatableTopicResult {
                topic_id: [1; 16],
                ..Default::default()
            }],
            ..Default::default()
        };
        assert!(resp.encode_to_vec(6).is_err());
        assert!(resp.encode_to_vec(7).is_ok());
    }
}
