//! DescribeProducers (key 61), version 0, flexible.
//!
//! Asks partition leaders for the active producers of each partition: producer
//! id and epoch, last sequence and timestamp, and the start offset of any open
//! transaction (useful to find hanging transactions).

use crate::describe::{message, nested};

message! {
    /// Lists the active producers of partitions.
    ///
    /// ```
    /// use kafka_proto::{
    ///     Message,
    ///     messages::{DescribeProducersRequest, DescribeProducersRequestTopicRequest},
    /// };
    /// let req = DescribeProducersRequest {
    ///     topics: vec![DescribeProducersRequestTopicRequest {
    ///         name: "orders".into(),
    ///         partition_indexes: vec![0, 1],
    ///         ..Default::default()
    ///     }],
    ///     ..Default::default()
    /// };
    /// let bytes = req.encode_to_vec(0).unwrap();
    /// assert_eq!(DescribeProducersRequest::decode(&bytes, 0).unwrap(), req);
    /// ```
    pub struct DescribeProducersRequest [message DescribeProducers, versions 0..=0, flexible 0, request DescribeProducersResponse] {
        /// The topics to list producers for.
        topics: Vec<DescribeProducersRequestTopicRequest>;
    }
}

nested! {
    /// The partitions of one topic to list producers for.
    pub struct DescribeProducersRequestTopicRequest [in "topics.", flexible 0] {
        /// The topic name.
        name: String;
        /// The indexes of the partitions to list producers for.
        partition_indexes: Vec<i32>;
    }
}

message! {
    /// The active producers of each requested partition.
    pub struct DescribeProducersResponse [message DescribeProducers, versions 0..=0, flexible 0, response] {
        /// Throttle time in milliseconds, or zero.
        throttle_time_ms: i32;
        /// Each topic in the response.
        topics: Vec<DescribeProducersResponseTopicResponse>;
    }
}

nested! {
    /// The partitions of one topic.
    pub struct DescribeProducersResponseTopicResponse [in "topics.", flexible 0] {
        /// The topic name.
        name: String;
        /// Each partition in the response.
        partitions: Vec<DescribeProducersResponsePartitionResponse>;
    }
}

nested! {
    /// The active producers of one partition.
    pub struct DescribeProducersResponsePartitionResponse [in "topics.partitions.", flexible 0] {
        /// The partition index.
        partition_index: i32;
        /// The partition error code, or 0 if there was no error.
        error_code: i16;
        /// The partition error message, or null (the default).
        error_message: Option<String>, nullable ..;
        /// The active producers for the partition.
        active_producers: Vec<DescribeProducersResponseProducerState>;
    }
}

nested! {
    /// The state of one active producer.
    pub struct DescribeProducersResponseProducerState [in "topics.partitions.active_producers.", flexible 0] {
        /// The producer id.
        producer_id: i64;
        /// The producer epoch (an `int32` in this message).
        producer_epoch: i32;
        /// The last sequence number sent by the producer (default -1).
        last_sequence: i32 = -1;
        /// The last timestamp sent by the producer (default -1).
        last_timestamp: i64 = -1;
        /// The current epoch of the producer group.
        coordinator_epoch: i32;
        /// The start offset of the producer's open transaction, or -1 (the default).
        current_txn_start_offset: i64 = -1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::decode_fixture;

    #[test]
    fn v0_request_fixture() {
        let bytes: &[u8] = &[
            2, // topics: 1 element
            2, b't', // name "t"
            3, 0, 0, 0, 0, 0, 0, 0, 5, // partition_indexes [0, 5]
            0, // topic tags
            0, // tags
        ];
        let req: DescribeProducersRequest = decode_fixture(bytes, 0);
        assert_eq!(req.topics[0].name, "t");
        assert_eq!(req.topics[0].partition_indexes, [0, 5]);
    }

    /// One partition with one producer holding an open transaction at offset 120.
    #[test]
    fn v0_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 0, // throttle_time_ms
            2, // topics: 1 element
            2, b't', // name "t"
            2,    // partitions: 1 element
            0, 0, 0, 0, // partition_index 0
            0, 0, // error_code
            0, // error_message null
            2, // active_producers: 1 element
            0, 0, 0, 0, 0, 0, 0x0f, 0xa0, // producer_id 4000
            0, 0, 0, 3, // producer_epoch 3
            0, 0, 0, 9, // last_sequence 9
            0, 0, 0, 0, 0, 0, 0x03, 0xe8, // last_timestamp 1000
            0, 0, 0, 1, // coordinator_epoch 1
            0, 0, 0, 0, 0, 0, 0, 120, // current_txn_start_offset 120
            0,   // producer tags
            0,   // partition tags
            0,   // topic tags
            0,   // tags
        ];
        let resp: DescribeProducersResponse = decode_fixture(bytes, 0);
        let p = &resp.topics[0].partitions[0];
        assert_eq!(p.error_message, None);
        let s = &p.active_producers[0];
        assert_eq!((s.producer_id, s.producer_epoch), (4000, 3));
        assert_eq!(s.last_sequence, 9);
        assert_eq!(s.last_timestamp, 1000);
        assert_eq!(s.coordinator_epoch, 1);
        assert_eq!(s.current_txn_start_offset, 120);
    }
}
