//! ListOffsets (key 2), versions 1–11, flexible from 6.
//!
//! Looks up offsets by timestamp. Special timestamps: -1 latest (high
//! watermark, or last stable offset under READ_COMMITTED from v2), -2 earliest,
//! -3 max timestamp (v7+), -4 earliest local (v8+), -5 latest tiered (v9+),
//! -6 earliest pending upload (v11+). `timeout_ms` exists from v10.

use crate::describe::{message, nested};

message! {
    /// Asks partition leaders for offsets at given timestamps.
    ///
    /// ```
    /// use kafka_proto::{Message, messages::*};
    /// let req = ListOffsetsRequest {
    ///     replica_id: -1,
    ///     isolation_level: 1,
    ///     topics: vec![ListOffsetsRequestTopic {
    ///         name: "orders".into(),
    ///         partitions: vec![ListOffsetsRequestPartition {
    ///             partition_index: 0,
    ///             timestamp: -1,
    ///             ..Default::default()
    ///         }],
    ///         ..Default::default()
    ///     }],
    ///     ..Default::default()
    /// };
    /// assert_eq!(
    ///     ListOffsetsRequest::decode(&req.encode_to_vec(7).unwrap(), 7).unwrap(),
    ///     req
    /// );
    /// ```
    pub struct ListOffsetsRequest [message ListOffsets, versions 1..=11, flexible 6, request ListOffsetsResponse] {
        /// The broker ID of the requester, or -1 if this request is being made by a normal consumer.
        replica_id: i32;
        /// This setting controls the visibility of transactional records. Using READ_UNCOMMITTED (isolation_level = 0) makes all records visible. With READ_COMMITTED (isolation_level = 1), non-transactional and COMMITTED transactional records are visible. To be more concrete, READ_COMMITTED returns all data from offsets smaller than the current LSO (last stable offset), and enables the inclusion of the list of aborted transactions in the result, which allows consumers to discard ABORTED transactional records (v2+).
        isolation_level: i8, versions 2..;
        /// Each topic in the request.
        topics: Vec<ListOffsetsRequestTopic>;
        /// The timeout to await a response in milliseconds for requests that require reading from remote storage for topics enabled with tiered storage (v10+).
        timeout_ms: i32, versions 10..;
    }
}

nested! {
    /// Each topic in the request.
    pub struct ListOffsetsRequestTopic [in "topics.", flexible 6] {
        /// The topic name.
        name: String;
        /// Each partition in the request.
        partitions: Vec<ListOffsetsRequestPartition>;
    }
}

nested! {
    /// Each partition in the request.
    pub struct ListOffsetsRequestPartition [in "topics.partitions.", flexible 6] {
        /// The partition index.
        partition_index: i32;
        /// The current leader epoch (v4+, default -1).
        current_leader_epoch: i32 = -1, versions 4..;
        /// The current timestamp.
        timestamp: i64;
    }
}

message! {
    /// The offsets found for each requested partition.
    pub struct ListOffsetsResponse [message ListOffsets, versions 1..=11, flexible 6, response] {
        /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota (v2+).
        throttle_time_ms: i32, versions 2..;
        /// Each topic in the response.
        topics: Vec<ListOffsetsResponseTopic>;
    }
}

nested! {
    /// Each topic in the response.
    pub struct ListOffsetsResponseTopic [in "topics.", flexible 6] {
        /// The topic name.
        name: String;
        /// Each partition in the response.
        partitions: Vec<ListOffsetsResponsePartition>;
    }
}

nested! {
    /// Each partition in the response.
    pub struct ListOffsetsResponsePartition [in "topics.partitions.", flexible 6] {
        /// The partition index.
        partition_index: i32;
        /// The partition error code, or 0 if there was no error.
        error_code: i16;
        /// The timestamp associated with the returned offset (default -1).
        timestamp: i64 = -1;
        /// The returned offset (default -1).
        offset: i64 = -1;
        /// The leader epoch associated with the returned offset (v4+, default -1).
        leader_epoch: i32 = -1, versions 4..;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;
    use crate::testing::{assert_not_in_version, decode_fixture};

    /// A v1 (oldest) request written by hand from the schema layout.
    #[test]
    fn v1_request_fixture() {
        let bytes: &[u8] = &[
            0xff, 0xff, 0xff, 0xff, // replica_id -1
            0, 0, 0, 1, // topics: 1
            0, 1, b'a', // name "a"
            0, 0, 0, 1, // partitions: 1
            0, 0, 0, 2, // partition_index 2
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, // timestamp -2 (earliest)
        ];
        let req: ListOffsetsRequest = decode_fixture(bytes, 1);
        assert_eq!(req.replica_id, -1);
        assert_eq!(req.isolation_level, 0);
        let p = &req.topics[0].partitions[0];
        assert_eq!((p.partition_index, p.timestamp), (2, -2));
        // READ_COMMITTED needs v2.
        let rc = ListOffsetsRequest {
            isolation_level: 1,
            ..req
        };
        assert_not_in_version(&rc, 1, "isolation_level");
    }

    /// A v10 (flexible, with timeout) request.
    #[test]
    fn v10_request_fixture() {
        let bytes: &[u8] = &[
            0xff, 0xff, 0xff, 0xff, // replica_id -1
            1,    // isolation_level READ_COMMITTED
            2,    // topics: 1
            2, b'a', // name "a"
            2,    // partitions: 1
            0, 0, 0, 0, // partition_index 0
            0, 0, 0, 3, // current_leader_epoch 3
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // timestamp -1 (latest)
            0,    // partition tags
            0,    // topic tags
            0, 0, 0x75, 0x30, // timeout_ms 30000
            0,    // request tags
        ];
        let req: ListOffsetsRequest = decode_fixture(bytes, 10);
        assert_eq!(req.isolation_level, 1);
        assert_eq!(req.timeout_ms, 30_000);
        assert_eq!(req.topics[0].partitions[0].current_leader_epoch, 3);
        assert_eq!(req.encode_to_vec(9).unwrap_err().field, "timeout_ms");
    }

    /// A v6 (first flexible) response.
    #[test]
    fn v6_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 0, // throttle_time_ms
            2, // topics: 1
            2, b'a', // name "a"
            2,    // partitions: 1
            0, 0, 0, 0, // partition_index 0
            0, 0, // error_code
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // timestamp -1
            0, 0, 0, 0, 0, 0, 0, 99, // offset 99
            0, 0, 0, 4, // leader_epoch 4
            0, // partition tags
            0, // topic tags
            0, // response tags
        ];
        let resp: ListOffsetsResponse = decode_fixture(bytes, 6);
        let p = &resp.topics[0].partitions[0];
        assert_eq!((p.timestamp, p.offset, p.leader_epoch), (-1, 99, 4));
    }
}
