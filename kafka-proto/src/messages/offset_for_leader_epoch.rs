//! OffsetForLeaderEpoch (key 23), versions 0–4, flexible from 4.
//!
//! Asks a partition's leader where a leader epoch ended: the end offset of
//! the largest epoch at or below the one asked, and that epoch. A consumer
//! uses it to check its position after a leader change (KIP-320, Java's
//! `OffsetsForLeaderEpochUtils`): an end offset below the position means
//! the log it read was truncated. Kafka 3.9 serves v0–4, Kafka 4.x v2–4.
//! v2 adds `current_leader_epoch` (fencing), v3 `replica_id` (-1 for a
//! consumer, which consumers need: Java validates positions only with a
//! broker serving v3+).

use crate::describe::{ignorable, message, nested};

message! {
    /// Asks for the end offset of a leader epoch in each partition.
    ///
    /// ```
    /// use kafka_proto::{Message, messages::*};
    /// let req = OffsetForLeaderEpochRequest {
    ///     replica_id: -1, // a consumer
    ///     topics: vec![OffsetForLeaderEpochRequestTopic {
    ///         topic: "orders".into(),
    ///         partitions: vec![OffsetForLeaderEpochRequestPartition {
    ///             partition: 0,
    ///             current_leader_epoch: 7,
    ///             leader_epoch: 5,
    ///             ..Default::default()
    ///         }],
    ///         ..Default::default()
    ///     }],
    ///     ..Default::default()
    /// };
    /// assert_eq!(
    ///     OffsetForLeaderEpochRequest::decode(&req.encode_to_vec(4).unwrap(), 4).unwrap(),
    ///     req
    /// );
    /// ```
    pub struct OffsetForLeaderEpochRequest [message OffsetForLeaderEpoch, versions 0..=4, flexible 4, request OffsetForLeaderEpochResponse] {
        /// The broker ID of the follower, or -1 if this request is from a consumer (v3+, default -2: a debug consumer allowed beyond the high watermark).
        replica_id: i32 = -2, versions ignorable(3..);
        /// Each topic to get offsets for.
        topics: Vec<OffsetForLeaderEpochRequestTopic>;
    }
}

nested! {
    /// Each topic to get offsets for.
    pub struct OffsetForLeaderEpochRequestTopic [in "topics.", flexible 4] {
        /// The topic name.
        topic: String;
        /// Each partition to get offsets for.
        partitions: Vec<OffsetForLeaderEpochRequestPartition>;
    }
}

nested! {
    /// Each partition to get offsets for.
    pub struct OffsetForLeaderEpochRequestPartition [in "topics.partitions.", flexible 4] {
        /// The partition index.
        partition: i32;
        /// An epoch used to fence consumers/replicas with old metadata: larger than the broker's gives UNKNOWN_LEADER_EPOCH, smaller FENCED_LEADER_EPOCH (v2+, default -1).
        current_leader_epoch: i32 = -1, versions ignorable(2..);
        /// The epoch to look up an offset for.
        leader_epoch: i32;
    }
}

message! {
    /// The end offset of the asked epoch in each partition.
    pub struct OffsetForLeaderEpochResponse [message OffsetForLeaderEpoch, versions 0..=4, flexible 4, response] {
        /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota (v2+).
        throttle_time_ms: i32, versions ignorable(2..);
        /// Each topic we fetched offsets for.
        topics: Vec<OffsetForLeaderEpochResponseTopic>;
    }
}

nested! {
    /// Each topic we fetched offsets for.
    pub struct OffsetForLeaderEpochResponseTopic [in "topics.", flexible 4] {
        /// The topic name.
        topic: String;
        /// Each partition in the topic we fetched offsets for.
        partitions: Vec<OffsetForLeaderEpochResponsePartition>;
    }
}

nested! {
    /// Each partition in the topic we fetched offsets for.
    pub struct OffsetForLeaderEpochResponsePartition [in "topics.partitions.", flexible 4] {
        /// The error code, or 0 if there was no error.
        error_code: i16;
        /// The partition index.
        partition: i32;
        /// The leader epoch of the partition (v1+, default -1).
        leader_epoch: i32 = -1, versions ignorable(1..);
        /// The end offset of the epoch (-1 when the epoch is unknown).
        end_offset: i64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;
    use crate::testing::decode_fixture;

    /// A v3 (last non-flexible) consumer request written by hand from the
    /// schema layout.
    #[test]
    fn v3_request_fixture() {
        let bytes: &[u8] = &[
            0xff, 0xff, 0xff, 0xff, // replica_id -1 (consumer)
            0, 0, 0, 1, // topics: 1
            0, 1, b'a', // topic "a"
            0, 0, 0, 1, // partitions: 1
            0, 0, 0, 2, // partition 2
            0, 0, 0, 7, // current_leader_epoch 7
            0, 0, 0, 5, // leader_epoch 5
        ];
        let req: OffsetForLeaderEpochRequest = decode_fixture(bytes, 3);
        assert_eq!(req.replica_id, -1);
        let p = &req.topics[0].partitions[0];
        assert_eq!(
            (p.partition, p.current_leader_epoch, p.leader_epoch),
            (2, 7, 5)
        );
        // v0 carries neither the replica id nor the current epoch (both
        // ignorable: dropped, not refused).
        let v0 = req.encode_to_vec(0).unwrap();
        assert_eq!(
            v0,
            &[0, 0, 0, 1, 0, 1, b'a', 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 5][..]
        );
        let back = OffsetForLeaderEpochRequest::decode(&v0, 0).unwrap();
        assert_eq!(
            (
                back.replica_id,
                back.topics[0].partitions[0].current_leader_epoch
            ),
            (-2, -1)
        );
    }

    /// A v4 (flexible) response with an end offset and its epoch.
    #[test]
    fn v4_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 0, // throttle_time_ms
            2, // topics: 1 (compact)
            2, b'a', // topic "a"
            2,    // partitions: 1
            0, 0, // error_code
            0, 0, 0, 0, // partition 0
            0, 0, 0, 4, // leader_epoch 4
            0, 0, 0, 0, 0, 0, 0, 99, // end_offset 99
            0,  // partition tags
            0,  // topic tags
            0,  // response tags
        ];
        let resp: OffsetForLeaderEpochResponse = decode_fixture(bytes, 4);
        let p = &resp.topics[0].partitions[0];
        assert_eq!((p.error_code, p.leader_epoch, p.end_offset), (0, 4, 99));
        // v0: no throttle time, no epoch (default -1).
        let v0 = OffsetForLeaderEpochResponse::decode(
            &[
                0, 0, 0, 1, 0, 1, b'a', 0, 0, 0, 1, 0, 74, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff,
                0xff, 0xff, 0xff, 0xff,
            ],
            0,
        )
        .unwrap();
        let p = &v0.topics[0].partitions[0];
        assert_eq!((p.error_code, p.leader_epoch, p.end_offset), (74, -1, -1));
    }

    /// Hostile bytes: a decoder never panics and never allocates more than
    /// the bytes received justify (a huge array count fails cleanly).
    #[test]
    fn hostile_counts_fail_cleanly() {
        let bytes: &[u8] = &[0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff];
        assert!(OffsetForLeaderEpochResponse::decode(bytes, 2).is_err());
        assert!(OffsetForLeaderEpochResponse::decode(&[0xff; 3], 4).is_err());
        assert!(OffsetForLeaderEpochRequest::decode(&[0x80; 9], 4).is_err());
    }
}
