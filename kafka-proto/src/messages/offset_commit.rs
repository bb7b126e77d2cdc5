//! OffsetCommit (key 8), versions 2–10, flexible from 8.
//!
//! Commits consumer offsets to the group coordinator (outside a
//! transaction; inside one, TxnOffsetCommit). Versions 0–1 were removed in
//! Kafka 4.0 (KIP-896). v2–4 carry a retention time, v6 adds the leader
//! epoch, v7 static membership (`group_instance_id`), v9 is the first
//! version usable with the KIP-848 consumer protocol (the generation field
//! then holds the member epoch), and v10 identifies topics by id instead of
//! name.
//!
//! Ignorable fields (dropped when encoding at a version without them):
//! `retention_time_ms`, the topics' `name` and `topic_id`, the partitions'
//! `committed_leader_epoch` and the response's `throttle_time_ms`; so a
//! request filled with both topic name and id encodes at every version.
//! `committed_metadata` is nullable without a schema default: its default
//! is the empty string, as in Kafka.

use crate::describe::{ignorable, message, nested};
use crate::primitives::Uuid;

message! {
    /// Commits offsets for a consumer group.
    ///
    /// ```
    /// use kafka_proto::{Message, messages::*};
    /// let req = OffsetCommitRequest {
    ///     group_id: "orders-app".into(),
    ///     generation_id_or_member_epoch: 3,
    ///     member_id: "m-1".into(),
    ///     topics: vec![OffsetCommitRequestTopic {
    ///         name: "orders".into(),
    ///         topic_id: [9; 16],
    ///         partitions: vec![OffsetCommitRequestPartition {
    ///             partition_index: 0,
    ///             committed_offset: 42,
    ///             ..Default::default()
    ///         }],
    ///         ..Default::default()
    ///     }],
    ///     ..Default::default()
    /// };
    /// // Name and id are both ignorable: v9 sends the name, v10 the id.
    /// let v9 = OffsetCommitRequest::decode(&req.encode_to_vec(9).unwrap(), 9).unwrap();
    /// assert_eq!((v9.topics[0].name.as_str(), v9.topics[0].topic_id), ("orders", [0; 16]));
    /// let v10 = OffsetCommitRequest::decode(&req.encode_to_vec(10).unwrap(), 10).unwrap();
    /// assert_eq!((v10.topics[0].name.as_str(), v10.topics[0].topic_id), ("", [9; 16]));
    /// ```
    pub struct OffsetCommitRequest [message OffsetCommit, versions 2..=10, flexible 8, request OffsetCommitResponse] {
        /// The unique group identifier.
        group_id: String;
        /// The generation of the group if using the classic group protocol or the member epoch if using the consumer protocol (default -1).
        generation_id_or_member_epoch: i32 = -1;
        /// The member ID assigned by the group coordinator.
        member_id: String;
        /// The unique identifier of the consumer instance provided by end user (v7+, default null).
        group_instance_id: Option<String> = None, versions 7.., nullable 7..;
        /// The time period in ms to retain the offset (v2–4, default -1, ignorable).
        retention_time_ms: i64 = -1, versions ignorable(2..=4);
        /// The topics to commit offsets for.
        topics: Vec<OffsetCommitRequestTopic>;
    }
}

nested! {
    /// The offsets to commit in one topic.
    pub struct OffsetCommitRequestTopic [in "topics.", flexible 8] {
        /// The topic name (v2–9, ignorable).
        name: String, versions ignorable(..=9);
        /// The topic ID (v10+, ignorable).
        topic_id: Uuid, versions ignorable(10..);
        /// Each partition to commit offsets for.
        partitions: Vec<OffsetCommitRequestPartition>;
    }
}

nested! {
    /// The offset to commit in one partition.
    pub struct OffsetCommitRequestPartition [in "topics.partitions.", flexible 8] {
        /// The partition index.
        partition_index: i32;
        /// The message offset to be committed.
        committed_offset: i64;
        /// The leader epoch of this partition (v6+, default -1, ignorable).
        committed_leader_epoch: i32 = -1, versions ignorable(6..);
        /// Any associated metadata the client wants to keep (nullable).
        committed_metadata: Option<String> = Some(String::new()), nullable ..;
    }
}

message! {
    /// The per-partition outcome of an offset commit.
    pub struct OffsetCommitResponse [message OffsetCommit, versions 2..=10, flexible 8, response] {
        /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota (v3+, ignorable).
        throttle_time_ms: i32, versions ignorable(3..);
        /// The responses for each topic.
        topics: Vec<OffsetCommitResponseTopic>;
    }
}

nested! {
    /// The responses for one topic.
    pub struct OffsetCommitResponseTopic [in "topics.", flexible 8] {
        /// The topic name (v2–9, ignorable).
        name: String, versions ignorable(..=9);
        /// The topic ID (v10+, ignorable).
        topic_id: Uuid, versions ignorable(10..);
        /// The responses for each partition in the topic.
        partitions: Vec<OffsetCommitResponsePartition>;
    }
}

nested! {
    /// The outcome for one partition.
    pub struct OffsetCommitResponsePartition [in "topics.partitions.", flexible 8] {
        /// The partition index.
        partition_index: i32;
        /// The error code, or 0 if there was no error.
        error_code: i16;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;
    use crate::testing::{assert_not_in_version, decode_fixture};

    /// A v2 request written by hand: retention time, no leader epoch.
    #[test]
    fn v2_request_fixture() {
        let bytes: &[u8] = &[
            0, 1, b'g', // group_id "g"
            0, 0, 0, 4, // generation_id_or_member_epoch 4
            0, 1, b'm', // member_id "m"
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // retention_time_ms -1
            0, 0, 0, 1, // topics: 1
            0, 1, b't', // name "t"
            0, 0, 0, 1, // partitions: 1
            0, 0, 0, 2, // partition_index 2
            0, 0, 0, 0, 0, 0, 0, 10, // committed_offset 10
            0xff, 0xff, // committed_metadata null
        ];
        let req: OffsetCommitRequest = decode_fixture(bytes, 2);
        assert_eq!(req.generation_id_or_member_epoch, 4);
        assert_eq!(req.retention_time_ms, -1);
        let p = &req.topics[0].partitions[0];
        assert_eq!((p.partition_index, p.committed_offset), (2, 10));
        assert_eq!(p.committed_leader_epoch, -1);
        assert_eq!(p.committed_metadata, None);
    }

    /// A v10 request (flexible): topic id, leader epoch, instance id.
    #[test]
    fn v10_request_fixture() {
        let mut bytes: Vec<u8> = vec![
            2, b'g', // group_id "g"
            0, 0, 0, 1, // member epoch 1
            2, b'm', // member_id "m"
            2, b'i', // group_instance_id "i"
            2,    // topics: 1
        ];
        bytes.extend([0x11; 16]); // topic_id
        bytes.extend([
            2, // partitions: 1
            0, 0, 0, 0, // partition_index 0
            0, 0, 0, 0, 0, 0, 0, 5, // committed_offset 5
            0, 0, 0, 3, // committed_leader_epoch 3
            1, // committed_metadata ""
            0, // partition tags
            0, // topic tags
            0, // request tags
        ]);
        let req = OffsetCommitRequest::decode(&bytes, 10).unwrap();
        assert_eq!(req.group_instance_id.as_deref(), Some("i"));
        let t = &req.topics[0];
        assert_eq!(t.topic_id, [0x11; 16]);
        assert!(t.name.is_empty());
        assert_eq!(t.partitions[0].committed_leader_epoch, 3);
        assert_eq!(req.encode_to_vec(10).unwrap(), bytes);
        // The instance id is not ignorable: v6 refuses it.
        assert_not_in_version(&req, 6, "group_instance_id");
    }

    /// A v3 response: throttle time, topic names.
    #[test]
    fn v3_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 1, // throttle_time_ms 1
            0, 0, 0, 1, // topics: 1
            0, 1, b't', // name "t"
            0, 0, 0, 1, // partitions: 1
            0, 0, 0, 0, // partition_index 0
            0, 25, // UNKNOWN_MEMBER_ID
        ];
        let resp: OffsetCommitResponse = decode_fixture(bytes, 3);
        assert_eq!(resp.throttle_time_ms, 1);
        assert_eq!(
            crate::ErrorCode::from(resp.topics[0].partitions[0].error_code),
            crate::ErrorCode::UnknownMemberId
        );
        // v2 has no throttle time; it is ignorable.
        assert_eq!(resp.encode_to_vec(2).unwrap(), bytes[4..]);
    }
}
