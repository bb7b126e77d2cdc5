//! OffsetFetch (key 9), versions 1–10, flexible from 6.
//!
//! Two request/response shapes share this API:
//!
//! - v1–7 fetch the committed offsets of a **single group** (`group_id` and
//!   `topics` at the top level; `topics` may be null from v2 to mean all topics;
//!   the response has top-level `topics` and, from v2, `error_code`);
//! - v8+ fetch **several groups** at once (`groups`, each with its own nullable
//!   `topics`; the response has per-group `groups` with a group-level error).
//!
//! Fields of the other shape must stay at their defaults (an [`EncodeError`](crate::EncodeError)
//! otherwise). v7 adds `require_stable`, v9 the KIP-848 member id and epoch, and
//! v10 replaces topic names with topic ids.

use crate::describe::{message, nested};
use crate::primitives::Uuid;

message! {
    /// Fetches committed offsets of one group (v1–7) or several groups (v8+).
    ///
    /// ```
    /// use kafka_proto::Message;
    /// use kafka_proto::messages::{
    ///     OffsetFetchRequest, OffsetFetchRequestGroup, OffsetFetchRequestTopic,
    /// };
    /// // v1–7: one group, top-level topics.
    /// let single = OffsetFetchRequest {
    ///     group_id: "billing".into(),
    ///     topics: Some(vec![OffsetFetchRequestTopic {
    ///         name: "orders".into(),
    ///         partition_indexes: vec![0, 1],
    ///         ..Default::default()
    ///     }]),
    ///     require_stable: true,
    ///     ..Default::default()
    /// };
    /// assert_eq!(
    ///     OffsetFetchRequest::decode(&single.encode_to_vec(7).unwrap(), 7).unwrap(),
    ///     single
    /// );
    /// // v8+: batched groups; topics null means every topic.
    /// let batched = OffsetFetchRequest {
    ///     groups: vec![OffsetFetchRequestGroup {
    ///         group_id: "billing".into(),
    ///         ..Default::default()
    ///     }],
    ///     ..Default::default()
    /// };
    /// assert_eq!(
    ///     OffsetFetchRequest::decode(&batched.encode_to_vec(8).unwrap(), 8).unwrap(),
    ///     batched
    /// );
    /// assert!(single.encode_to_vec(8).is_err() && batched.encode_to_vec(7).is_err());
    /// ```
    pub struct OffsetFetchRequest [message OffsetFetch, versions 1..=10, flexible 6, request OffsetFetchResponse] {
        /// The group to fetch offsets for (v1–7).
        group_id: String, versions ..=7;
        /// The topics to fetch offsets for, or null for all topics (v1–7; null
        /// only from v2; default null).
        topics: Option<Vec<OffsetFetchRequestTopic>> = Some(Vec::new()), versions ..=7, nullable 2..=7;
        /// The groups to fetch offsets for (v8+).
        groups: Vec<OffsetFetchRequestGroup>, versions 8..;
        /// Whether the broker should hold back unstable offsets and return a
        /// retriable error for those partitions instead (v7+).
        require_stable: bool, versions 7..;
    }
}

nested! {
    /// One topic of a single-group request (v1–7).
    pub struct OffsetFetchRequestTopic [in "topics.", flexible 6] {
        /// The topic name.
        name: String, versions ..=7;
        /// The partition indexes to fetch offsets for.
        partition_indexes: Vec<i32>, versions ..=7;
    }
}

nested! {
    /// One group of a batched request (v8+).
    pub struct OffsetFetchRequestGroup [in "groups.", flexible 6] {
        /// The group id.
        group_id: String, versions 8..;
        /// The member id (v9+, default null).
        member_id: Option<String>, versions 9.., nullable 9..;
        /// The member epoch with the KIP-848 consumer protocol (v9+, default -1).
        member_epoch: i32 = -1, versions 9..;
        /// The topics to fetch offsets for, or null for all topics (default null).
        topics: Option<Vec<OffsetFetchRequestTopics>> = Some(Vec::new()), versions 8.., nullable 8..;
    }
}

nested! {
    /// One topic of a group in a batched request (v8+).
    pub struct OffsetFetchRequestTopics [in "groups.topics.", flexible 6] {
        /// The topic name (v8–9).
        name: String, versions 8..=9;
        /// The topic id (v10+).
        topic_id: Uuid, versions 10..;
        /// The partition indexes to fetch offsets for.
        partition_indexes: Vec<i32>, versions 8..;
    }
}

message! {
    /// Committed offsets of one group (v1–7) or several groups (v8+).
    pub struct OffsetFetchResponse [message OffsetFetch, versions 1..=10, flexible 6, response] {
        /// Throttle time in milliseconds, or zero (v3+).
        throttle_time_ms: i32, versions 3..;
        /// The responses per topic (v1–7).
        topics: Vec<OffsetFetchResponseTopic>, versions ..=7;
        /// The top-level error code, or 0 (v2–7).
        error_code: i16, versions 2..=7;
        /// The responses per group (v8+).
        groups: Vec<OffsetFetchResponseGroup>, versions 8..;
    }
}

nested! {
    /// Offsets of one topic in a single-group response (v1–7).
    pub struct OffsetFetchResponseTopic [in "topics.", flexible 6] {
        /// The topic name.
        name: String, versions ..=7;
        /// The responses per partition.
        partitions: Vec<OffsetFetchResponsePartition>, versions ..=7;
    }
}

nested! {
    /// The committed offset of one partition in a single-group response (v1–7).
    pub struct OffsetFetchResponsePartition [in "topics.partitions.", flexible 6] {
        /// The partition index.
        partition_index: i32, versions ..=7;
        /// The committed message offset, or -1 if none.
        committed_offset: i64, versions ..=7;
        /// The leader epoch (v5–7, default -1).
        committed_leader_epoch: i32 = -1, versions 5..=7;
        /// The partition metadata.
        metadata: Option<String> = Some(String::new()), versions ..=7, nullable ..=7;
        /// The error code, or 0 if there was no error.
        error_code: i16, versions ..=7;
    }
}

nested! {
    /// Offsets of one group in a batched response (v8+).
    pub struct OffsetFetchResponseGroup [in "groups.", flexible 6] {
        /// The group id.
        group_id: String, versions 8..;
        /// The responses per topic.
        topics: Vec<OffsetFetchResponseTopics>, versions 8..;
        /// The group-level error code, or 0 if there was no error.
        error_code: i16, versions 8..;
    }
}

nested! {
    /// Offsets of one topic of a group in a batched response (v8+).
    pub struct OffsetFetchResponseTopics [in "groups.topics.", flexible 6] {
        /// The topic name (v8–9).
        name: String, versions 8..=9;
        /// The topic id (v10+).
        topic_id: Uuid, versions 10..;
        /// The responses per partition.
        partitions: Vec<OffsetFetchResponsePartitions>, versions 8..;
    }
}

nested! {
    /// The committed offset of one partition in a batched response (v8+).
    pub struct OffsetFetchResponsePartitions [in "groups.topics.partitions.", flexible 6] {
        /// The partition index.
        partition_index: i32, versions 8..;
        /// The committed message offset, or -1 if none.
        committed_offset: i64, versions 8..;
        /// The leader epoch (default -1).
        committed_leader_epoch: i32 = -1, versions 8..;
        /// The partition metadata.
        metadata: Option<String> = Some(String::new()), versions 8.., nullable 8..;
        /// The partition-level error code, or 0 if there was no error.
        error_code: i16, versions 8..;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EncodeErrorKind;
    use crate::Message;
    use crate::testing::decode_fixture;

    /// v1 request (classic, single group): group "g", topic "t", partition 0.
    #[test]
    fn v1_request_fixture() {
        let bytes: &[u8] = &[
            0, 1, b'g', // group_id
            0, 0, 0, 1, // topics: 1 element
            0, 1, b't', // name
            0, 0, 0, 1, 0, 0, 0, 0, // partition_indexes [0]
        ];
        let req: OffsetFetchRequest = decode_fixture(bytes, 1);
        assert_eq!(req.group_id, "g");
        let topics = req.topics.as_ref().unwrap();
        assert_eq!(topics[0].name, "t");
        assert_eq!(topics[0].partition_indexes, [0]);
        // Null topics (all topics) need v2+.
        let all = OffsetFetchRequest {
            topics: None,
            ..req
        };
        assert_eq!(
            all.encode_to_vec(1).unwrap_err().kind,
            EncodeErrorKind::NullNotAllowed
        );
        assert_eq!(
            all.encode_to_vec(2).unwrap(),
            [0, 1, b'g', 0xff, 0xff, 0xff, 0xff]
        );
        // A null array on the wire is rejected at v1.
        assert!(OffsetFetchRequest::decode(&[0, 1, b'g', 0xff, 0xff, 0xff, 0xff], 1).is_err());
    }

    /// v7 request (flexible, single group): null topics, require_stable.
    #[test]
    fn v7_request_fixture() {
        let bytes: &[u8] = &[2, b'g', 0, 1, 0];
        let req: OffsetFetchRequest = decode_fixture(bytes, 7);
        assert_eq!(req.group_id, "g");
        assert_eq!(req.topics, None);
        assert!(req.require_stable);
        assert!(req.groups.is_empty());
    }

    /// v10 request (batched): member id and epoch, one topic by id.
    #[test]
    fn v10_request_fixture() {
        let bytes: &[u8] = &[
            2, // groups: 1 element
            2, b'g', // group_id
            2, b'm', // member_id "m"
            0, 0, 0, 5, // member_epoch 5
            2, // topics: 1 element
            1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, // topic_id
            2, 0, 0, 0, 0, // partition_indexes [0]
            0, // topic tags
            0, // group tags
            0, // require_stable
            0, // tags
        ];
        let req: OffsetFetchRequest = decode_fixture(bytes, 10);
        let g = &req.groups[0];
        assert_eq!(g.group_id, "g");
        assert_eq!(g.member_id.as_deref(), Some("m"));
        assert_eq!(g.member_epoch, 5);
        let t = &g.topics.as_ref().unwrap()[0];
        assert_eq!(t.topic_id[15], 16);
        assert_eq!(t.name, "");
        assert_eq!(t.partition_indexes, [0]);
        // v9 cannot carry topic ids; v8 cannot carry member fields.
        assert_eq!(
            req.encode_to_vec(9).unwrap_err().field,
            "groups.topics.topic_id"
        );
        assert_eq!(req.encode_to_vec(8).unwrap_err().field, "groups.member_id");
    }

    /// v8 request: batched group with null topics (all topics).
    #[test]
    fn v8_request_fixture() {
        let bytes: &[u8] = &[2, 2, b'g', 0, 0, 1, 0];
        let req: OffsetFetchRequest = decode_fixture(bytes, 8);
        assert_eq!(req.groups[0].group_id, "g");
        assert_eq!(req.groups[0].topics, None);
        assert_eq!(req.groups[0].member_epoch, -1);
        assert!(req.require_stable);
    }

    /// v1 response: one partition with offset 100, empty metadata, no top-level error.
    #[test]
    fn v1_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 1, // topics: 1 element
            0, 1, b't', // name
            0, 0, 0, 1, // partitions: 1 element
            0, 0, 0, 0, // partition_index
            0, 0, 0, 0, 0, 0, 0, 100, // committed_offset
            0, 0, // metadata ""
            0, 0, // error_code
        ];
        let resp: OffsetFetchResponse = decode_fixture(bytes, 1);
        let p = &resp.topics[0].partitions[0];
        assert_eq!(p.committed_offset, 100);
        assert_eq!(p.committed_leader_epoch, -1);
        assert_eq!(p.metadata.as_deref(), Some(""));
    }

    /// v5 response: throttle, leader epoch, null metadata, top-level error.
    #[test]
    fn v5_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 7, // throttle_time_ms
            0, 0, 0, 1, // topics
            0, 1, b't', // name
            0, 0, 0, 1, // partitions
            0, 0, 0, 2, // partition_index
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // committed_offset -1
            0, 0, 0, 4, // committed_leader_epoch
            0xff, 0xff, // metadata null
            0, 0, // error_code
            0, 0, // top-level error_code
        ];
        let resp: OffsetFetchResponse = decode_fixture(bytes, 5);
        assert_eq!(resp.throttle_time_ms, 7);
        let p = &resp.topics[0].partitions[0];
        assert_eq!((p.partition_index, p.committed_offset), (2, -1));
        assert_eq!(p.committed_leader_epoch, 4);
        assert_eq!(p.metadata, None);
        assert_eq!(
            resp.encode_to_vec(4).unwrap_err().field,
            "topics.partitions.committed_leader_epoch"
        );
    }

    /// v10 response: one group, one topic by id, one partition.
    #[test]
    fn v10_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 0, // throttle_time_ms
            2, // groups: 1 element
            2, b'g', // group_id
            2,    // topics: 1 element
            1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, // topic_id
            2,  // partitions: 1 element
            0, 0, 0, 0, // partition_index
            0, 0, 0, 0, 0, 0, 0, 100, // committed_offset
            0, 0, 0, 2, // committed_leader_epoch
            0, // metadata null
            0, 0, // error_code
            0, // partition tags
            0, // topic tags
            0, 0, // group error_code
            0, // group tags
            0, // tags
        ];
        let resp: OffsetFetchResponse = decode_fixture(bytes, 10);
        let g = &resp.groups[0];
        assert_eq!(g.group_id, "g");
        let t = &g.topics[0];
        assert_eq!(t.topic_id[0], 1);
        let p = &t.partitions[0];
        assert_eq!((p.committed_offset, p.committed_leader_epoch), (100, 2));
        assert_eq!(p.metadata, None);
        assert_eq!(resp.encode_to_vec(7).unwrap_err().field, "groups");
    }
}
