//! Fetch (key 1), versions 4–18, flexible from 12.
//!
//! Used here to read back committed data (`isolation_level = 1`,
//! READ_COMMITTED) and to verify transactional outcomes. Up to v12 topics are
//! named; from v13 they are identified by topic id. Records are kept as raw
//! RecordBatch bytes (`Option<Bytes>`, nullable on the wire) for
//! [`crate::record`] to decode.
//!
//! Tagged fields: request `cluster_id` (tag 0, v12+), `replica_state` (tag 1,
//! v15+, replacing `replica_id`), partition `replica_directory_id` (tag 0, v17+)
//! and `high_watermark` (tag 1, v18+); response partition `diverging_epoch`,
//! `current_leader`, `snapshot_id` (tags 0–2, v12+) and top-level
//! `node_endpoints` (tag 0, v16+). `aborted_transactions` is a nullable array:
//! its schema default is an empty (non-null) list.

use crate::describe::{message, nested};
use crate::primitives::Uuid;
use bytes::Bytes;

message! {
    /// Fetches records from partition leaders (or followers).
    ///
    /// ```
    /// use kafka_proto::{Message, messages::*};
    /// let req = FetchRequest {
    ///     max_wait_ms: 500,
    ///     min_bytes: 1,
    ///     isolation_level: 1, // READ_COMMITTED
    ///     topics: vec![FetchRequestTopic {
    ///         topic: "orders".into(),
    ///         partitions: vec![FetchRequestPartition {
    ///             partition: 0,
    ///             fetch_offset: 0,
    ///             partition_max_bytes: 1 << 20,
    ///             ..Default::default()
    ///         }],
    ///         ..Default::default()
    ///     }],
    ///     ..Default::default()
    /// };
    /// assert_eq!(req.max_bytes, i32::MAX);
    /// assert_eq!(
    ///     FetchRequest::decode(&req.encode_to_vec(12).unwrap(), 12).unwrap(),
    ///     req
    /// );
    /// // v13+ identifies topics by id only.
    /// assert!(req.encode_to_vec(13).is_err());
    /// ```
    pub struct FetchRequest [message Fetch, versions 4..=18, flexible 12, request FetchResponse] {
        /// The clusterId if known. This is used to validate metadata fetches prior to broker registration (v12+, tagged 0, nullable).
        cluster_id: Option<String>, versions 12.., nullable 12.., tag 0;
        /// The broker ID of the follower, of -1 if this request is from a consumer (v4–14, default -1).
        replica_id: i32 = -1, versions ..=14;
        /// The state of the replica in the follower (v15+, tagged 1).
        replica_state: FetchRequestReplicaState, versions 15.., tag 1;
        /// The maximum time in milliseconds to wait for the response.
        max_wait_ms: i32;
        /// The minimum bytes to accumulate in the response.
        min_bytes: i32;
        /// The maximum bytes to fetch.  See KIP-74 for cases where this limit may not be honored (default 0x7fffffff).
        max_bytes: i32 = i32::MAX;
        /// This setting controls the visibility of transactional records. Using READ_UNCOMMITTED (isolation_level = 0) makes all records visible. With READ_COMMITTED (isolation_level = 1), non-transactional and COMMITTED transactional records are visible. To be more concrete, READ_COMMITTED returns all data from offsets smaller than the current LSO (last stable offset), and enables the inclusion of the list of aborted transactions in the result, which allows consumers to discard ABORTED transactional records.
        isolation_level: i8;
        /// The fetch session ID (v7+).
        session_id: i32, versions 7..;
        /// The fetch session epoch, which is used for ordering requests in a session (v7+, default -1).
        session_epoch: i32 = -1, versions 7..;
        /// The topics to fetch.
        topics: Vec<FetchRequestTopic>;
        /// In an incremental fetch request, the partitions to remove (v7+).
        forgotten_topics_data: Vec<FetchRequestForgottenTopic>, versions 7..;
        /// Rack ID of the consumer making this request (v11+).
        rack_id: String, versions 11..;
    }
}

nested! {
    /// The state of the replica in the follower.
    pub struct FetchRequestReplicaState [in "replica_state.", flexible 12] {
        /// The replica ID of the follower, or -1 if this request is from a consumer (v15+, default -1).
        replica_id: i32 = -1, versions 15..;
        /// The epoch of this follower, or -1 if not available (v15+, default -1).
        replica_epoch: i64 = -1, versions 15..;
    }
}

nested! {
    /// The topics to fetch.
    pub struct FetchRequestTopic [in "topics.", flexible 12] {
        /// The name of the topic to fetch (v4–12).
        topic: String, versions ..=12;
        /// The unique topic ID (v13+).
        topic_id: Uuid, versions 13..;
        /// The partitions to fetch.
        partitions: Vec<FetchRequestPartition>;
    }
}

nested! {
    /// The partitions to fetch.
    pub struct FetchRequestPartition [in "topics.partitions.", flexible 12] {
        /// The partition index.
        partition: i32;
        /// The current leader epoch of the partition (v9+, default -1).
        current_leader_epoch: i32 = -1, versions 9..;
        /// The message offset.
        fetch_offset: i64;
        /// The epoch of the last fetched record or -1 if there is none (v12+, default -1).
        last_fetched_epoch: i32 = -1, versions 12..;
        /// The earliest available offset of the follower replica.  The field is only used when the request is sent by the follower (v5+, default -1).
        log_start_offset: i64 = -1, versions 5..;
        /// The maximum bytes to fetch from this partition.  See KIP-74 for cases where this limit may not be honored.
        partition_max_bytes: i32;
        /// The directory id of the follower fetching (v17+, tagged 0).
        replica_directory_id: Uuid, versions 17.., tag 0;
        /// The high-watermark known by the replica. -1 if the high-watermark is not known and 9223372036854775807 if the feature is not supported (v18+, tagged 1, default 9223372036854775807).
        high_watermark: i64 = i64::MAX, versions 18.., tag 1;
    }
}

nested! {
    /// In an incremental fetch request, the partitions to remove.
    pub struct FetchRequestForgottenTopic [in "forgotten_topics_data.", flexible 12] {
        /// The topic name (v7–12).
        topic: String, versions 7..=12;
        /// The unique topic ID (v13+).
        topic_id: Uuid, versions 13..;
        /// The partitions indexes to forget (v7+).
        partitions: Vec<i32>, versions 7..;
    }
}

message! {
    /// Records and partition state returned by a fetch.
    pub struct FetchResponse [message Fetch, versions 4..=18, flexible 12, response] {
        /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota.
        throttle_time_ms: i32;
        /// The top level response error code (v7+).
        error_code: i16, versions 7..;
        /// The fetch session ID, or 0 if this is not part of a fetch session (v7+).
        session_id: i32, versions 7..;
        /// The response topics.
        responses: Vec<FetchResponseTopic>;
        /// Endpoints for all current-leaders enumerated in PartitionData, with errors NOT_LEADER_OR_FOLLOWER & FENCED_LEADER_EPOCH (v16+, tagged 0).
        node_endpoints: Vec<FetchResponseNodeEndpoint>, versions 16.., tag 0;
    }
}

nested! {
    /// The response topics.
    pub struct FetchResponseTopic [in "responses.", flexible 12] {
        /// The topic name (v4–12).
        topic: String, versions ..=12;
        /// The unique topic ID (v13+).
        topic_id: Uuid, versions 13..;
        /// The topic partitions.
        partitions: Vec<FetchResponsePartitionData>;
    }
}

nested! {
    /// The topic partitions.
    pub struct FetchResponsePartitionData [in "responses.partitions.", flexible 12] {
        /// The partition index.
        partition_index: i32;
        /// The error code, or 0 if there was no fetch error.
        error_code: i16;
        /// The current high water mark.
        high_watermark: i64;
        /// The last stable offset (or LSO) of the partition. This is the last offset such that the state of all transactional records prior to this offset have been decided (ABORTED or COMMITTED) (default -1).
        last_stable_offset: i64 = -1;
        /// The current log start offset (v5+, default -1).
        log_start_offset: i64 = -1, versions 5..;
        /// In case divergence is detected based on the `LastFetchedEpoch` and `FetchOffset` in the request, this field indicates the largest epoch and its end offset such that subsequent records are known to diverge (v12+, tagged 0).
        diverging_epoch: FetchResponseEpochEndOffset, versions 12.., tag 0;
        /// The current leader of the partition (v12+, tagged 1).
        current_leader: FetchResponseLeaderIdAndEpoch, versions 12.., tag 1;
        /// In the case of fetching an offset less than the LogStartOffset, this is the end offset and epoch that should be used in the FetchSnapshot request (v12+, tagged 2).
        snapshot_id: FetchResponseSnapshotId, versions 12.., tag 2;
        /// The aborted transactions (nullable).
        aborted_transactions: Option<Vec<FetchResponseAbortedTransaction>> = Some(Vec::new()), nullable ..;
        /// The preferred read replica for the consumer to use on its next fetch request (v11+, default -1).
        preferred_read_replica: i32 = -1, versions 11..;
        /// The record data (nullable).
        records: Option<Bytes>, nullable ..;
    }
}

nested! {
    /// In case divergence is detected based on the `LastFetchedEpoch` and `FetchOffset` in the request, this field indicates the largest epoch and its end offset such that subsequent records are known to diverge.
    pub struct FetchResponseEpochEndOffset [in "responses.partitions.diverging_epoch.", flexible 12] {
        /// The largest epoch (v12+, default -1).
        epoch: i32 = -1, versions 12..;
        /// The end offset of the epoch (v12+, default -1).
        end_offset: i64 = -1, versions 12..;
    }
}

nested! {
    /// The current leader of the partition.
    pub struct FetchResponseLeaderIdAndEpoch [in "responses.partitions.current_leader.", flexible 12] {
        /// The ID of the current leader or -1 if the leader is unknown (v12+, default -1).
        leader_id: i32 = -1, versions 12..;
        /// The latest known leader epoch (v12+, default -1).
        leader_epoch: i32 = -1, versions 12..;
    }
}

nested! {
    /// In the case of fetching an offset less than the LogStartOffset, this is the end offset and epoch that should be used in the FetchSnapshot request.
    pub struct FetchResponseSnapshotId [in "responses.partitions.snapshot_id.", flexible 12] {
        /// The end offset of the epoch (default -1).
        end_offset: i64 = -1;
        /// The largest epoch (default -1).
        epoch: i32 = -1;
    }
}

nested! {
    /// The aborted transactions.
    pub struct FetchResponseAbortedTransaction [in "responses.partitions.aborted_transactions.", flexible 12] {
        /// The producer id associated with the aborted transaction.
        producer_id: i64;
        /// The first offset in the aborted transaction.
        first_offset: i64;
    }
}

nested! {
    /// Endpoints for all current-leaders enumerated in PartitionData, with errors NOT_LEADER_OR_FOLLOWER & FENCED_LEADER_EPOCH.
    pub struct FetchResponseNodeEndpoint [in "node_endpoints.", flexible 12] {
        /// The ID of the associated node (v16+).
        node_id: i32, versions 16..;
        /// The node's hostname (v16+).
        host: String, versions 16..;
        /// The node's port (v16+).
        port: i32, versions 16..;
        /// The rack of the node, or null if it has not been assigned to a rack (v16+, nullable).
        rack: Option<String>, versions 16.., nullable 16..;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;
    use crate::testing::{assert_not_in_version, decode_fixture};

    /// A v4 (oldest, classic) READ_COMMITTED request written from the schema.
    #[test]
    fn v4_request_fixture() {
        let bytes: &[u8] = &[
            0xff, 0xff, 0xff, 0xff, // replica_id -1
            0, 0, 0x01, 0xf4, // max_wait_ms 500
            0, 0, 0, 1, // min_bytes 1
            0x7f, 0xff, 0xff, 0xff, // max_bytes i32::MAX
            1,    // isolation_level READ_COMMITTED
            0, 0, 0, 1, // topics: 1
            0, 1, b'a', // topic "a"
            0, 0, 0, 1, // partitions: 1
            0, 0, 0, 0, // partition 0
            0, 0, 0, 0, 0, 0, 0, 5, // fetch_offset 5
            0, 0x10, 0, 0, // partition_max_bytes 1 MiB
        ];
        let req: FetchRequest = decode_fixture(bytes, 4);
        assert_eq!(req.replica_id, -1);
        assert_eq!(req.max_bytes, i32::MAX);
        assert_eq!(req.isolation_level, 1);
        assert_eq!(req.topics[0].topic, "a");
        let p = &req.topics[0].partitions[0];
        assert_eq!(
            (p.partition, p.fetch_offset, p.partition_max_bytes),
            (0, 5, 1 << 20)
        );
        assert_eq!(p.current_leader_epoch, -1);
    }

    /// A v17 request: topic ids, `replica_state` (tag 1) instead of
    /// `replica_id`, `cluster_id` (tag 0) and a partition `replica_directory_id` (tag 0).
    #[test]
    fn v17_request_fixture() {
        let mut bytes: Vec<u8> = vec![
            0, 0, 0x01, 0xf4, // max_wait_ms 500
            0, 0, 0, 1, // min_bytes 1
            0x7f, 0xff, 0xff, 0xff, // max_bytes
            0,    // isolation_level
            0, 0, 0, 0, // session_id 0
            0xff, 0xff, 0xff, 0xff, // session_epoch -1
            2,    // topics: 1
        ];
        bytes.extend([0x11; 16]); // topic_id
        bytes.extend([
            2, // partitions: 1
            0, 0, 0, 3, // partition 3
            0, 0, 0, 4, // current_leader_epoch 4
            0, 0, 0, 0, 0, 0, 0, 10, // fetch_offset 10
            0xff, 0xff, 0xff, 0xff, // last_fetched_epoch -1
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // log_start_offset -1
            0, 0x10, 0, 0, // partition_max_bytes
            1, 0, 16, // one tag: 0 (replica_directory_id), 16 bytes
        ]);
        bytes.extend([0x22; 16]);
        bytes.extend([
            0, // topic tags
            1, // forgotten_topics_data: empty
            1, // rack_id ""
            2, // two tags
            0, 2, 2, b'c', // tag 0: cluster_id "c"
            1, 13, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, // tag 1: replica 1, epoch 2
        ]);
        let req = FetchRequest::decode(&bytes, 17).unwrap();
        assert_eq!(req.cluster_id.as_deref(), Some("c"));
        assert_eq!(req.replica_id, -1);
        assert_eq!(req.replica_state.replica_id, 1);
        assert_eq!(req.replica_state.replica_epoch, 2);
        assert_eq!(req.session_epoch, -1);
        let t = &req.topics[0];
        assert_eq!(t.topic_id, [0x11; 16]);
        assert_eq!(t.partitions[0].replica_directory_id, [0x22; 16]);
        assert_eq!(t.partitions[0].high_watermark, i64::MAX);
        assert_eq!(req.encode_to_vec(17).unwrap(), bytes);
        // v14 has no replica_state, and no topic ids.
        assert_not_in_version(&req, 14, "replica_state");
    }

    /// A v4 response with null aborted transactions and null records.
    #[test]
    fn v4_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 0, // throttle_time_ms
            0, 0, 0, 1, // responses: 1
            0, 1, b'a', // topic "a"
            0, 0, 0, 1, // partitions: 1
            0, 0, 0, 2, // partition_index 2
            0, 1, // error_code OFFSET_OUT_OF_RANGE
            0, 0, 0, 0, 0, 0, 0, 9, // high_watermark 9
            0, 0, 0, 0, 0, 0, 0, 8, // last_stable_offset 8
            0xff, 0xff, 0xff, 0xff, // aborted_transactions null
            0xff, 0xff, 0xff, 0xff, // records null
        ];
        let resp: FetchResponse = decode_fixture(bytes, 4);
        let p = &resp.responses[0].partitions[0];
        assert_eq!(p.partition_index, 2);
        assert_eq!(
            crate::ErrorCode::from(p.error_code),
            crate::ErrorCode::OffsetOutOfRange
        );
        assert_eq!((p.high_watermark, p.last_stable_offset), (9, 8));
        assert_eq!(p.aborted_transactions, None);
        assert_eq!(p.records, None);
    }

    /// A v12 (first flexible) response: an aborted transaction, records, and
    /// the `diverging_epoch` (tag 0) and `current_leader` (tag 1) tagged structs.
    #[test]
    fn v12_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 0, // throttle_time_ms
            0, 0, // error_code
            0, 0, 0, 9, // session_id 9
            2, // responses: 1
            2, b'a', // topic "a"
            2,    // partitions: 1
            0, 0, 0, 0, // partition_index 0
            0, 0, // error_code
            0, 0, 0, 0, 0, 0, 0, 10, // high_watermark 10
            0, 0, 0, 0, 0, 0, 0, 8, // last_stable_offset 8
            0, 0, 0, 0, 0, 0, 0, 0, // log_start_offset 0
            2, // aborted_transactions: 1
            0, 0, 0, 0, 0, 0, 0, 7, // producer_id 7
            0, 0, 0, 0, 0, 0, 0, 5, // first_offset 5
            0, // aborted transaction tags
            0xff, 0xff, 0xff, 0xff, // preferred_read_replica -1
            4, 1, 2, 3, // records: 3 bytes
            2, // two tags
            0, 13, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 100, 0, // diverging epoch 2 @ 100
            1, 9, 0, 0, 0, 1, 0, 0, 0, 5, 0, // current leader 1, epoch 5
            0, // topic tags
            0, // response tags
        ];
        let resp: FetchResponse = decode_fixture(bytes, 12);
        assert_eq!(resp.session_id, 9);
        let p = &resp.responses[0].partitions[0];
        assert_eq!(p.high_watermark, 10);
        let aborted = p.aborted_transactions.as_ref().unwrap();
        assert_eq!((aborted[0].producer_id, aborted[0].first_offset), (7, 5));
        assert_eq!(p.records.as_deref(), Some(&[1u8, 2, 3][..]));
        assert_eq!(p.diverging_epoch.epoch, 2);
        assert_eq!(p.diverging_epoch.end_offset, 100);
        assert_eq!(p.current_leader.leader_id, 1);
        assert_eq!(p.current_leader.leader_epoch, 5);
        assert_eq!(p.snapshot_id, FetchResponseSnapshotId::default());
        assert_eq!(p.preferred_read_replica, -1);
    }

    #[test]
    fn replica_state_needs_v15() {
        use crate::{Message, messages::*};
        // A follower (KIP-903) describes itself in `replica_state` from v15 on.
        let req = FetchRequest {
            replica_state: FetchRequestReplicaState {
                replica_id: 2,
                replica_epoch: 7,
                ..Default::default()
            },
            ..Default::default()
        };
        assert_eq!(
            FetchRequest::decode(&req.encode_to_vec(15).unwrap(), 15).unwrap(),
            req
        );
        assert!(req.encode_to_vec(14).is_err());
    }

    #[test]
    fn node_endpoints_need_v16() {
        use crate::{Message, messages::*};
        let resp = FetchResponse {
            node_endpoints: vec![FetchResponseNodeEndpoint {
                node_id: 2,
                host: "kafka-2".into(),
                port: 9092,
                rack: None,
                ..Default::default()
            }],
            ..Default::default()
        };
        assert_eq!(
            FetchResponse::decode(&resp.encode_to_vec(16).unwrap(), 16).unwrap(),
            resp
        );
        assert!(resp.encode_to_vec(15).is_err(), "node endpoints need v16+");
    }
}
