//! Produce (key 0), versions 3–13, flexible from 9.
//!
//! The request carries raw RecordBatch bytes per partition (decoded separately by
//! [`crate::record`]). Up to v12 topics are named; from v13 they are identified by
//! topic id (the name must then stay empty, the id must stay zero before v13).
//! The response adds per-record errors and an error message from v8, and from
//! v10 the new leader (tagged 0 per partition) and its endpoint (tagged 0 at the
//! top level) for `NOT_LEADER_OR_FOLLOWER` redirects.

use crate::describe::{message, nested};
use crate::primitives::Uuid;
use bytes::Bytes;

message! {
    /// Writes record batches to partition leaders.
    ///
    /// ```
    /// use bytes::Bytes;
    /// use kafka_proto::{Message, messages::*};
    /// let req = ProduceRequest {
    ///     transactional_id: Some("txn-1".into()),
    ///     acks: -1,
    ///     timeout_ms: 30_000,
    ///     topic_data: vec![ProduceRequestTopicProduceData {
    ///         name: "orders".into(),
    ///         partition_data: vec![ProduceRequestPartitionProduceData {
    ///             index: 0,
    ///             records: Some(Bytes::from_static(b"batch")),
    ///             ..Default::default()
    ///         }],
    ///         ..Default::default()
    ///     }],
    ///     ..Default::default()
    /// };
    /// assert_eq!(
    ///     ProduceRequest::decode(&req.encode_to_vec(11).unwrap(), 11).unwrap(),
    ///     req
    /// );
    /// // v13 identifies topics by id: a topic name cannot be carried.
    /// assert!(req.encode_to_vec(13).is_err());
    /// ```
    pub struct ProduceRequest [message Produce, versions 3..=13, flexible 9, request ProduceResponse] {
        /// The transactional ID, or null if the producer is not transactional (nullable).
        transactional_id: Option<String>, nullable ..;
        /// The number of acknowledgments the producer requires the leader to have received before considering a request complete. Allowed values: 0 for no acknowledgments, 1 for only the leader and -1 for the full ISR.
        acks: i16;
        /// The timeout to await a response in milliseconds.
        timeout_ms: i32;
        /// Each topic to produce to.
        topic_data: Vec<ProduceRequestTopicProduceData>;
    }
}

nested! {
    /// Each topic to produce to.
    pub struct ProduceRequestTopicProduceData [in "topic_data.", flexible 9] {
        /// The topic name (v3–12).
        name: String, versions ..=12;
        /// The unique topic ID (v13+).
        topic_id: Uuid, versions 13..;
        /// Each partition to produce to.
        partition_data: Vec<ProduceRequestPartitionProduceData>;
    }
}

nested! {
    /// Each partition to produce to.
    pub struct ProduceRequestPartitionProduceData [in "topic_data.partition_data.", flexible 9] {
        /// The partition index.
        index: i32;
        /// The record data to be produced (nullable).
        records: Option<Bytes>, nullable ..;
    }
}

message! {
    /// The outcome of a produce request, per partition.
    pub struct ProduceResponse [message Produce, versions 3..=13, flexible 9, response] {
        /// Each produce response.
        responses: Vec<ProduceResponseTopicProduceResponse>;
        /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota.
        throttle_time_ms: i32;
        /// Endpoints for all current-leaders enumerated in PartitionProduceResponses, with errors NOT_LEADER_OR_FOLLOWER (v10+, tagged 0).
        node_endpoints: Vec<ProduceResponseNodeEndpoint>, versions 10.., tag 0;
    }
}

nested! {
    /// Each produce response.
    pub struct ProduceResponseTopicProduceResponse [in "responses.", flexible 9] {
        /// The topic name (v3–12).
        name: String, versions ..=12;
        /// The unique topic ID (v13+).
        topic_id: Uuid, versions 13..;
        /// Each partition that we produced to within the topic.
        partition_responses: Vec<ProduceResponsePartitionProduceResponse>;
    }
}

nested! {
    /// Each partition that we produced to within the topic.
    pub struct ProduceResponsePartitionProduceResponse [in "responses.partition_responses.", flexible 9] {
        /// The partition index.
        index: i32;
        /// The error code, or 0 if there was no error.
        error_code: i16;
        /// The base offset.
        base_offset: i64;
        /// The timestamp returned by broker after appending the messages. If CreateTime is used for the topic, the timestamp will be -1.  If LogAppendTime is used for the topic, the timestamp will be the broker local time when the messages are appended (default -1).
        log_append_time_ms: i64 = -1;
        /// The log start offset (v5+, default -1).
        log_start_offset: i64 = -1, versions 5..;
        /// The batch indices of records that caused the batch to be dropped (v8+).
        record_errors: Vec<ProduceResponseBatchIndexAndErrorMessage>, versions 8..;
        /// The global error message summarizing the common root cause of the records that caused the batch to be dropped (v8+, nullable).
        error_message: Option<String>, versions 8.., nullable 8..;
        /// The leader broker that the producer should use for future requests (v10+, tagged 0).
        current_leader: ProduceResponseLeaderIdAndEpoch, versions 10.., tag 0;
    }
}

nested! {
    /// The batch indices of records that caused the batch to be dropped.
    pub struct ProduceResponseBatchIndexAndErrorMessage [in "responses.partition_responses.record_errors.", flexible 9] {
        /// The batch index of the record that caused the batch to be dropped (v8+).
        batch_index: i32, versions 8..;
        /// The error message of the record that caused the batch to be dropped (v8+, nullable).
        batch_index_error_message: Option<String>, versions 8.., nullable 8..;
    }
}

nested! {
    /// The leader broker that the producer should use for future requests.
    pub struct ProduceResponseLeaderIdAndEpoch [in "responses.partition_responses.current_leader.", flexible 9] {
        /// The ID of the current leader or -1 if the leader is unknown (v10+, default -1).
        leader_id: i32 = -1, versions 10..;
        /// The latest known leader epoch (v10+, default -1).
        leader_epoch: i32 = -1, versions 10..;
    }
}

nested! {
    /// Endpoints for all current-leaders enumerated in PartitionProduceResponses, with errors NOT_LEADER_OR_FOLLOWER.
    pub struct ProduceResponseNodeEndpoint [in "node_endpoints.", flexible 9] {
        /// The ID of the associated node (v10+).
        node_id: i32, versions 10..;
        /// The node's hostname (v10+).
        host: String, versions 10..;
        /// The node's port (v10+).
        port: i32, versions 10..;
        /// The rack of the node, or null if it has not been assigned to a rack (v10+, nullable).
        rack: Option<String>, versions 10.., nullable 10..;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;
    use crate::testing::{assert_not_in_version, decode_fixture};

    /// A v9 (first flexible) request written by hand from the schema layout.
    #[test]
    fn v9_request_fixture() {
        let bytes: &[u8] = &[
            2, b't', // transactional_id "t" (compact)
            0xff, 0xff, // acks -1
            0, 0, 0x03, 0xe8, // timeout_ms 1000
            2,    // topic_data: 1 element
            2, b'a', // name "a"
            2,    // partition_data: 1 element
            0, 0, 0, 0, // index 0
            4, 1, 2, 3, // records: 3 bytes
            0, // partition tags
            0, // topic tags
            0, // request tags
        ];
        let req: ProduceRequest = decode_fixture(bytes, 9);
        assert_eq!(req.transactional_id.as_deref(), Some("t"));
        assert_eq!(req.acks, -1);
        assert_eq!(req.timeout_ms, 1000);
        assert_eq!(req.topic_data[0].name, "a");
        let p = &req.topic_data[0].partition_data[0];
        assert_eq!(p.index, 0);
        assert_eq!(p.records.as_deref(), Some(&[1u8, 2, 3][..]));
    }

    /// A v3 (classic) request: int16 strings, int32 lengths, null records.
    #[test]
    fn v3_request_fixture() {
        let bytes: &[u8] = &[
            0xff, 0xff, // transactional_id null
            0, 1, // acks 1
            0, 0, 0, 10, // timeout_ms 10
            0, 0, 0, 1, // topic_data: 1 element
            0, 1, b'a', // name "a"
            0, 0, 0, 1, // partition_data: 1 element
            0, 0, 0, 7, // index 7
            0xff, 0xff, 0xff, 0xff, // records null
        ];
        let req: ProduceRequest = decode_fixture(bytes, 3);
        assert_eq!(req.transactional_id, None);
        assert_eq!(req.topic_data[0].partition_data[0].index, 7);
        assert_eq!(req.topic_data[0].partition_data[0].records, None);
    }

    /// v13 carries a topic id in place of the name.
    #[test]
    fn v13_request_uses_topic_id() {
        let mut bytes: Vec<u8> = vec![0, 0xff, 0xff, 0, 0, 0, 5, 2];
        bytes.extend(1..=16u8); // topic_id
        bytes.extend([1, 0, 0]); // no partitions, topic tags, request tags
        let req = ProduceRequest::decode(&bytes, 13).unwrap();
        assert_eq!(req.transactional_id, None);
        assert_eq!(req.topic_data[0].topic_id[0], 1);
        assert_eq!(req.topic_data[0].topic_id[15], 16);
        assert!(req.topic_data[0].name.is_empty());
        assert_eq!(req.encode_to_vec(13).unwrap(), bytes);
        // The id cannot be carried by v12, nor a name by v13.
        assert_not_in_version(&req, 12, "topic_data.topic_id");
    }

    /// A v10 response with a NOT_LEADER_OR_FOLLOWER partition, its new leader
    /// (partition tag 0) and the leader's endpoint (top-level tag 0).
    #[test]
    fn v10_response_fixture() {
        let bytes: &[u8] = &[
            2, // responses: 1 element
            2, b'a', // name "a"
            2,    // partition_responses: 1 element
            0, 0, 0, 1, // index 1
            0, 6, // error_code NOT_LEADER_OR_FOLLOWER
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // base_offset -1
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // log_append_time_ms -1
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // log_start_offset -1
            1,    // record_errors: empty
            0,    // error_message null
            1, 0, 9, // one tag: 0 (current_leader), 9 bytes
            0, 0, 0, 2, 0, 0, 0, 7, 0, // leader 2, epoch 7, no tags
            0, // topic tags
            0, 0, 0, 0, // throttle_time_ms
            1, 0, 14, // one tag: 0 (node_endpoints), 14 bytes
            2, 0, 0, 0, 2, 3, b'b', b'1', 0, 0, 0x23, 0x84, 0,
            0, // node 2 "b1":9092, rack null
        ];
        let resp: ProduceResponse = decode_fixture(bytes, 10);
        let p = &resp.responses[0].partition_responses[0];
        assert_eq!(
            crate::ErrorCode::from(p.error_code),
            crate::ErrorCode::NotLeaderOrFollower
        );
        assert_eq!(p.base_offset, -1);
        assert_eq!(p.error_message, None);
        assert_eq!(p.current_leader.leader_id, 2);
        assert_eq!(p.current_leader.leader_epoch, 7);
        let n = &resp.node_endpoints[0];
        assert_eq!((n.node_id, n.host.as_str(), n.port), (2, "b1", 9092));
        assert_eq!(n.rack, None);
        // v9 is flexible but cannot carry the leader hints.
        assert_not_in_version(&resp, 9, "node_endpoints");
    }

    #[test]
    fn record_errors_need_v8() {
        use crate::{ErrorCode, Message, messages::*};
        let p = ProduceResponsePartitionProduceResponse {
            error_code: ErrorCode::InvalidRecord.code(),
            record_errors: vec![ProduceResponseBatchIndexAndErrorMessage {
                batch_index: 3,
                batch_index_error_message: Some("key required".into()),
                ..Default::default()
            }],
            ..Default::default()
        };
        let resp = ProduceResponse {
            responses: vec![ProduceResponseTopicProduceResponse {
                name: "orders".into(),
                partition_responses: vec![p],
                ..Default::default()
            }],
            ..Default::default()
        };
        assert_eq!(
            ProduceResponse::decode(&resp.encode_to_vec(8).unwrap(), 8).unwrap(),
            resp
        );
        assert!(resp.encode_to_vec(7).is_err(), "record errors need v8+");
    }
}
