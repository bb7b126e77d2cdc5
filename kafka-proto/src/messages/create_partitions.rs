//! CreatePartitions (key 37), versions 0–3, flexible from 2.
//!
//! Raises the partition count of existing topics, optionally with a manual
//! replica assignment for the new partitions (`assignments`, nullable: null
//! lets the controller place them, as Java's `Admin` sends; its schema
//! default is the empty list). v3 is v2 that may answer
//! THROTTLING_QUOTA_EXCEEDED (KIP-599).

use crate::describe::{message, nested};

message! {
    /// Creates new partitions in existing topics.
    ///
    /// ```
    /// use kafka_proto::{Message, messages::*};
    /// let req = CreatePartitionsRequest {
    ///     topics: vec![CreatePartitionsRequestCreatePartitionsTopic {
    ///         name: "orders".into(),
    ///         count: 12,
    ///         assignments: None, // the controller places the new partitions
    ///         ..Default::default()
    ///     }],
    ///     timeout_ms: 30_000,
    ///     ..Default::default()
    /// };
    /// assert_eq!(CreatePartitionsRequest::decode(&req.encode_to_vec(3).unwrap(), 3).unwrap(), req);
    /// ```
    pub struct CreatePartitionsRequest [message CreatePartitions, versions 0..=3, flexible 2, request CreatePartitionsResponse] {
        /// Each topic that we want to create new partitions inside.
        topics: Vec<CreatePartitionsRequestCreatePartitionsTopic>;
        /// The time in ms to wait for the partitions to be created.
        timeout_ms: i32;
        /// If true, then validate the request, but don't actually increase the number of partitions.
        validate_only: bool;
    }
}

nested! {
    /// One topic to grow.
    pub struct CreatePartitionsRequestCreatePartitionsTopic [in "topics.", flexible 2] {
        /// The topic name.
        name: String;
        /// The new partition count.
        count: i32;
        /// The new partition assignments, or null to let the controller place them.
        assignments: Option<Vec<CreatePartitionsRequestCreatePartitionsAssignment>> = Some(Vec::new()), nullable ..;
    }
}

nested! {
    /// The replicas of one new partition.
    pub struct CreatePartitionsRequestCreatePartitionsAssignment [in "topics.assignments.", flexible 2] {
        /// The assigned broker IDs.
        broker_ids: Vec<i32>;
    }
}

message! {
    /// The partition creation result of each topic.
    pub struct CreatePartitionsResponse [message CreatePartitions, versions 0..=3, flexible 2, response] {
        /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota.
        throttle_time_ms: i32;
        /// The partition creation results for each topic.
        results: Vec<CreatePartitionsResponseCreatePartitionsTopicResult>;
    }
}

nested! {
    /// The result for one topic.
    pub struct CreatePartitionsResponseCreatePartitionsTopicResult [in "results.", flexible 2] {
        /// The topic name.
        name: String;
        /// The result error, or zero if there was no error.
        error_code: i16;
        /// The result message, or null if there was no error.
        error_message: Option<String> = None, nullable ..;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::decode_fixture;

    /// A v0 request written by hand: one topic with a null assignment, one
    /// with a manual assignment.
    #[test]
    fn v0_request_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 2, // topics: 2
            0, 1, b'a', // name "a"
            0, 0, 0, 3, // count 3
            0xff, 0xff, 0xff, 0xff, // assignments null
            0, 1, b'b', // name "b"
            0, 0, 0, 2, // count 2
            0, 0, 0, 1, // assignments: 1
            0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2, // broker_ids [1, 2]
            0, 0, 0x13, 0x88, // timeout_ms 5000
            1,    // validate_only
        ];
        let req: CreatePartitionsRequest = decode_fixture(bytes, 0);
        assert_eq!(req.topics[0].name, "a");
        assert_eq!(req.topics[0].count, 3);
        assert_eq!(req.topics[0].assignments, None);
        let b = req.topics[1].assignments.as_ref().unwrap();
        assert_eq!(b[0].broker_ids, [1, 2]);
        assert_eq!(req.timeout_ms, 5000);
        assert!(req.validate_only);
    }

    /// A v3 response (flexible): one success with a null message, one error.
    #[test]
    fn v3_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 0, // throttle_time_ms
            3, // results: 2
            2, b'a', // name "a"
            0, 0, // error_code
            0, // error_message null
            0, // result tags
            2, b'b', // name "b"
            0, 89, // THROTTLING_QUOTA_EXCEEDED
            3, b'q', b'!', // error_message "q!"
            0,    // result tags
            0,    // response tags
        ];
        let resp: CreatePartitionsResponse = decode_fixture(bytes, 3);
        assert_eq!(resp.results[0].error_message, None);
        assert_eq!(
            crate::ErrorCode::from(resp.results[1].error_code),
            crate::ErrorCode::ThrottlingQuotaExceeded
        );
        assert_eq!(resp.results[1].error_message.as_deref(), Some("q!"));
    }
}
