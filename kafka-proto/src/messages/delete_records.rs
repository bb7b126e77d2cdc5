//! DeleteRecords (key 21), versions 0–2, flexible from 2.
//!
//! Moves the log start offset of partitions forward (Kafka's
//! `kafka-delete-records.sh`): every record below the given offset becomes
//! unreadable. Sent to each partition's leader; offset -1 means "up to the
//! high watermark". v1 is v0 (throttling changed); v2 is flexible.

use crate::describe::{message, nested};

message! {
    /// Deletes records below an offset, per partition.
    ///
    /// ```
    /// use kafka_proto::{Message, messages::*};
    /// let req = DeleteRecordsRequest {
    ///     topics: vec![DeleteRecordsRequestTopic {
    ///         name: "orders".into(),
    ///         partitions: vec![DeleteRecordsRequestPartition { partition_index: 0, offset: 42, ..Default::default() }],
    ///         ..Default::default()
    ///     }],
    ///     timeout_ms: 30_000,
    ///     ..Default::default()
    /// };
    /// assert_eq!(DeleteRecordsRequest::decode(&req.encode_to_vec(2).unwrap(), 2).unwrap(), req);
    /// ```
    pub struct DeleteRecordsRequest [message DeleteRecords, versions 0..=2, flexible 2, request DeleteRecordsResponse] {
        /// Each topic that we want to delete records from.
        topics: Vec<DeleteRecordsRequestTopic>;
        /// How long to wait for the deletion to complete, in milliseconds.
        timeout_ms: i32;
    }
}

nested! {
    /// One topic to delete records from.
    pub struct DeleteRecordsRequestTopic [in "topics.", flexible 2] {
        /// The topic name.
        name: String;
        /// Each partition that we want to delete records from.
        partitions: Vec<DeleteRecordsRequestPartition>;
    }
}

nested! {
    /// One partition to delete records from.
    pub struct DeleteRecordsRequestPartition [in "topics.partitions.", flexible 2] {
        /// The partition index.
        partition_index: i32;
        /// The deletion offset; -1 truncates to the high watermark.
        offset: i64;
    }
}

message! {
    /// The new low watermark (log start offset) of each partition.
    pub struct DeleteRecordsResponse [message DeleteRecords, versions 0..=2, flexible 2, response] {
        /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota.
        throttle_time_ms: i32;
        /// Each topic that we wanted to delete records from.
        topics: Vec<DeleteRecordsResponseTopic>;
    }
}

nested! {
    /// The results of one topic.
    pub struct DeleteRecordsResponseTopic [in "topics.", flexible 2] {
        /// The topic name.
        name: String;
        /// Each partition that we wanted to delete records from.
        partitions: Vec<DeleteRecordsResponsePartition>;
    }
}

nested! {
    /// The result of one partition.
    pub struct DeleteRecordsResponsePartition [in "topics.partitions.", flexible 2] {
        /// The partition index.
        partition_index: i32;
        /// The partition low water mark.
        low_watermark: i64;
        /// The deletion error code, or 0 if the deletion succeeded.
        error_code: i16;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;

    /// A v0 request and a v2 (flexible) response written by hand.
    #[test]
    fn fixtures() {
        let req_bytes: &[u8] = &[
            0, 0, 0, 1, // topics: 1
            0, 1, b't', // name "t"
            0, 0, 0, 1, // partitions: 1
            0, 0, 0, 3, // partition_index 3
            0, 0, 0, 0, 0, 0, 0, 7, // offset 7
            0, 0, 0x75, 0x30, // timeout_ms 30000
        ];
        let req = DeleteRecordsRequest::decode(req_bytes, 0).unwrap();
        assert_eq!(req.topics[0].partitions[0].offset, 7);
        assert_eq!(req.encode_to_vec(0).unwrap(), req_bytes);

        let resp_bytes: &[u8] = &[
            0, 0, 0, 0, // throttle_time_ms
            2, // topics: 1
            2, b't', // name "t"
            2,    // partitions: 1
            0, 0, 0, 3, // partition_index 3
            0, 0, 0, 0, 0, 0, 0, 7, // low_watermark 7
            0, 1, // OFFSET_OUT_OF_RANGE
            0, // partition tags
            0, // topic tags
            0, // response tags
        ];
        let resp = DeleteRecordsResponse::decode(resp_bytes, 2).unwrap();
        let p = &resp.topics[0].partitions[0];
        assert_eq!((p.low_watermark, p.error_code), (7, 1));
        assert_eq!(resp.encode_to_vec(2).unwrap(), resp_bytes);
    }
}
