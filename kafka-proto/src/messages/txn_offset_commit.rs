//! TxnOffsetCommit (key 28), versions 0–6, flexible from 3.
//!
//! Commits consumer offsets as part of a transaction (sent to the group
//! coordinator after AddOffsetsToTxn). From v3 the request carries the consumer
//! group generation/member epoch, member id and group instance id so the
//! coordinator can fence zombie consumers (KIP-447); from v6 topics are
//! identified by topic id instead of name.
//!
//! `committed_metadata` is nullable with no schema default: its default is the
//! empty string, as in Kafka.

use crate::describe::{message, nested};
use crate::primitives::Uuid;

message! {
    /// Adds consumer offset commits to a transaction.
    ///
    /// ```
    /// use kafka_proto::{Message, messages::*};
    /// let req = TxnOffsetCommitRequest {
    ///     transactional_id: "txn-1".into(),
    ///     group_id: "group".into(),
    ///     producer_id: 4000,
    ///     producer_epoch: 2,
    ///     generation_id_or_member_epoch: 5,
    ///     member_id: "member-1".into(),
    ///     topics: vec![TxnOffsetCommitRequestTopic {
    ///         name: "orders".into(),
    ///         partitions: vec![TxnOffsetCommitRequestPartition {
    ///             partition_index: 0,
    ///             committed_offset: 42,
    ///             ..Default::default()
    ///         }],
    ///         ..Default::default()
    ///     }],
    ///     ..Default::default()
    /// };
    /// assert_eq!(
    ///     TxnOffsetCommitRequest::decode(&req.encode_to_vec(3).unwrap(), 3).unwrap(),
    ///     req
    /// );
    /// // v2 cannot carry the consumer group metadata.
    /// assert!(req.encode_to_vec(2).is_err());
    /// ```
    pub struct TxnOffsetCommitRequest [message TxnOffsetCommit, versions 0..=6, flexible 3, request TxnOffsetCommitResponse] {
        /// The ID of the transaction.
        transactional_id: String;
        /// The ID of the group.
        group_id: String;
        /// The current producer ID in use by the transactional ID.
        producer_id: i64;
        /// The current epoch associated with the producer ID.
        producer_epoch: i16;
        /// The generation of the group if using the classic group protocol or the member epoch if using the consumer protocol (v3+, default -1).
        generation_id_or_member_epoch: i32 = -1, versions 3..;
        /// The member ID assigned by the group coordinator (v3+).
        member_id: String, versions 3..;
        /// The unique identifier of the consumer instance provided by end user (v3+, nullable).
        group_instance_id: Option<String>, versions 3.., nullable 3..;
        /// Each topic that we want to commit offsets for.
        topics: Vec<TxnOffsetCommitRequestTopic>;
    }
}

nested! {
    /// Each topic that we want to commit offsets for.
    pub struct TxnOffsetCommitRequestTopic [in "topics.", flexible 3] {
        /// The topic name (v0–5).
        name: String, versions ..=5;
        /// The topic ID (v6+).
        topic_id: Uuid, versions 6..;
        /// The partitions inside the topic that we want to commit offsets for.
        partitions: Vec<TxnOffsetCommitRequestPartition>;
    }
}

nested! {
    /// The partitions inside the topic that we want to commit offsets for.
    pub struct TxnOffsetCommitRequestPartition [in "topics.partitions.", flexible 3] {
        /// The index of the partition within the topic.
        partition_index: i32;
        /// The message offset to be committed.
        committed_offset: i64;
        /// The leader epoch of the last consumed record (v2+, default -1).
        committed_leader_epoch: i32 = -1, versions 2..;
        /// Any associated metadata the client wants to keep (nullable).
        committed_metadata: Option<String> = Some(String::new()), nullable ..;
    }
}

message! {
    /// The per-partition outcome of a transactional offset commit.
    pub struct TxnOffsetCommitResponse [message TxnOffsetCommit, versions 0..=6, flexible 3, response] {
        /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota.
        throttle_time_ms: i32;
        /// The responses for each topic.
        topics: Vec<TxnOffsetCommitResponseTopic>;
    }
}

nested! {
    /// The responses for each topic.
    pub struct TxnOffsetCommitResponseTopic [in "topics.", flexible 3] {
        /// The topic name (v0–5).
        name: String, versions ..=5;
        /// The topic ID (v6+).
        topic_id: Uuid, versions 6..;
        /// The responses for each partition in the topic.
        partitions: Vec<TxnOffsetCommitResponsePartition>;
    }
}

nested! {
    /// The responses for each partition in the topic.
    pub struct TxnOffsetCommitResponsePartition [in "topics.partitions.", flexible 3] {
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

    /// A v0 request written by hand from the schema layout.
    #[test]
    fn v0_request_fixture() {
        let bytes: &[u8] = &[
            0, 1, b't', // transactional_id "t"
            0, 1, b'g', // group_id "g"
            0, 0, 0, 0, 0, 0, 0x0f, 0xa0, // producer_id 4000
            0, 2, // producer_epoch 2
            0, 0, 0, 1, // topics: 1
            0, 1, b'a', // name "a"
            0, 0, 0, 1, // partitions: 1
            0, 0, 0, 3, // partition_index 3
            0, 0, 0, 0, 0, 0, 0, 42, // committed_offset 42
            0xff, 0xff, // committed_metadata null
        ];
        let req: TxnOffsetCommitRequest = decode_fixture(bytes, 0);
        assert_eq!(req.transactional_id, "t");
        assert_eq!(req.group_id, "g");
        assert_eq!((req.producer_id, req.producer_epoch), (4000, 2));
        assert_eq!(req.generation_id_or_member_epoch, -1);
        let p = &req.topics[0].partitions[0];
        assert_eq!((p.partition_index, p.committed_offset), (3, 42));
        assert_eq!(p.committed_leader_epoch, -1);
        assert_eq!(p.committed_metadata, None);
    }

    /// A v3 (first flexible) request with the KIP-447 group metadata.
    #[test]
    fn v3_request_fixture() {
        let bytes: &[u8] = &[
            2, b't', // transactional_id "t"
            2, b'g', // group_id "g"
            0, 0, 0, 0, 0, 0, 0, 1, // producer_id 1
            0, 0, // producer_epoch 0
            0, 0, 0, 5, // generation_id_or_member_epoch 5
            3, b'm', b'1', // member_id "m1"
            0,    // group_instance_id null
            2,    // topics: 1
            2, b'a', // name "a"
            2,    // partitions: 1
            0, 0, 0, 0, // partition_index 0
            0, 0, 0, 0, 0, 0, 0, 7, // committed_offset 7
            0, 0, 0, 4, // committed_leader_epoch 4
            1, // committed_metadata ""
            0, // partition tags
            0, // topic tags
            0, // request tags
        ];
        let req: TxnOffsetCommitRequest = decode_fixture(bytes, 3);
        assert_eq!(req.generation_id_or_member_epoch, 5);
        assert_eq!(req.member_id, "m1");
        assert_eq!(req.group_instance_id, None);
        let p = &req.topics[0].partitions[0];
        assert_eq!(p.committed_leader_epoch, 4);
        assert_eq!(p.committed_metadata.as_deref(), Some(""));
        assert_not_in_version(&req, 2, "generation_id_or_member_epoch");
    }

    /// A v6 response: topic ids instead of names.
    #[test]
    fn v6_response_fixture() {
        let mut bytes: Vec<u8> = vec![
            0, 0, 0, 0, // throttle_time_ms
            2, // topics: 1
        ];
        bytes.extend([0xab; 16]); // topic_id
        bytes.extend([
            2, // partitions: 1
            0, 0, 0, 1, // partition_index 1
            0, 47, // error_code INVALID_PRODUCER_EPOCH
            0,  // partition tags
            0,  // topic tags
            0,  // response tags
        ]);
        let resp = TxnOffsetCommitResponse::decode(&bytes, 6).unwrap();
        let t = &resp.topics[0];
        assert_eq!(t.topic_id, [0xab; 16]);
        assert!(t.name.is_empty());
        assert_eq!(
            crate::ErrorCode::from(t.partitions[0].error_code),
            crate::ErrorCode::InvalidProducerEpoch
        );
        assert_eq!(resp.encode_to_vec(6).unwrap(), bytes);
        assert_not_in_version(&resp, 5, "topics.topic_id");
    }
}
