//! OffsetDelete (key 47), version 0, never flexible.
//!
//! Deletes a group's committed offsets for chosen partitions (Kafka's
//! `kafka-consumer-groups.sh --delete-offsets`, Java's
//! `Admin.deleteConsumerGroupOffsets`). The coordinator refuses
//! (GROUP_SUBSCRIBED_TO_TOPIC) a partition of a topic the group's members
//! are still subscribed to.

use crate::describe::{message, nested};

message! {
    /// Deletes committed offsets of a group.
    ///
    /// ```
    /// use kafka_proto::{Message, messages::*};
    /// let req = OffsetDeleteRequest {
    ///     group_id: "billing".into(),
    ///     topics: vec![OffsetDeleteRequestTopic {
    ///         name: "orders".into(),
    ///         partitions: vec![OffsetDeleteRequestPartition { partition_index: 0 }],
    ///     }],
    /// };
    /// assert_eq!(OffsetDeleteRequest::decode(&req.encode_to_vec(0).unwrap(), 0).unwrap(), req);
    /// ```
    pub struct OffsetDeleteRequest [message OffsetDelete, versions 0..=0, flexible never, request OffsetDeleteResponse] {
        /// The unique group identifier.
        group_id: String;
        /// The topics to delete offsets for.
        topics: Vec<OffsetDeleteRequestTopic>;
    }
}

nested! {
    /// One topic to delete offsets for.
    pub struct OffsetDeleteRequestTopic [in "topics.", flexible never] {
        /// The topic name.
        name: String;
        /// Each partition to delete offsets for.
        partitions: Vec<OffsetDeleteRequestPartition>;
    }
}

nested! {
    /// One partition to delete the offset of.
    pub struct OffsetDeleteRequestPartition [in "topics.partitions.", flexible never] {
        /// The partition index.
        partition_index: i32;
    }
}

message! {
    /// The outcome of each partition.
    pub struct OffsetDeleteResponse [message OffsetDelete, versions 0..=0, flexible never, response] {
        /// The top-level error code, or 0 if there was no error.
        error_code: i16;
        /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota.
        throttle_time_ms: i32;
        /// The responses for each topic.
        topics: Vec<OffsetDeleteResponseTopic>;
    }
}

nested! {
    /// The outcome of one topic.
    pub struct OffsetDeleteResponseTopic [in "topics.", flexible never] {
        /// The topic name.
        name: String;
        /// The responses for each partition in the topic.
        partitions: Vec<OffsetDeleteResponsePartition>;
    }
}

nested! {
    /// The outcome of one partition.
    pub struct OffsetDeleteResponsePartition [in "topics.partitions.", flexible never] {
        /// The partition index.
        partition_index: i32;
        /// The error code, or 0 if there was no error.
        error_code: i16;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::decode_fixture;

    /// A v0 response written by hand: a partition refused because the group
    /// is subscribed to its topic.
    #[test]
    fn v0_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, // error_code
            0, 0, 0, 0, // throttle_time_ms
            0, 0, 0, 1, // topics: 1
            0, 1, b't', // name "t"
            0, 0, 0, 1, // partitions: 1
            0, 0, 0, 0, // partition_index 0
            0, 86, // GROUP_SUBSCRIBED_TO_TOPIC
        ];
        let resp: OffsetDeleteResponse = decode_fixture(bytes, 0);
        assert_eq!(resp.topics[0].partitions[0].error_code, 86);
    }
}
