//! AddPartitionsToTxn (key 24), versions 0–5, flexible from 3.
//!
//! Versions 0–3 are the client form: one transaction, described by the
//! `v3_and_below_*` fields, answered with `results_by_topic_v3_and_below`.
//! Versions 4+ are the broker-to-coordinator form (KIP-890): a batch of
//! `transactions`, each optionally `verify_only`, answered per transaction in
//! `results_by_transaction` with a top-level `error_code`.
//!
//! Kafka's common structs are prefixed with the message name here:
//! `AddPartitionsToTxnTopic` → [`AddPartitionsToTxnRequestTopic`],
//! `AddPartitionsToTxnTransaction` → [`AddPartitionsToTxnRequestTransaction`],
//! `AddPartitionsToTxnResult` → [`AddPartitionsToTxnResponseResult`],
//! `AddPartitionsToTxnTopicResult` → [`AddPartitionsToTxnResponseTopicResult`],
//! `AddPartitionsToTxnPartitionResult` → [`AddPartitionsToTxnResponsePartitionResult`].

use crate::describe::{message, nested};

message! {
    /// Adds partitions to a transaction (v0–3), or verifies/adds them for a batch
    /// of transactions (v4+, sent by brokers).
    ///
    /// ```
    /// use kafka_proto::{
    ///     Message,
    ///     messages::{AddPartitionsToTxnRequest, AddPartitionsToTxnRequestTopic},
    /// };
    /// let req = AddPartitionsToTxnRequest {
    ///     v3_and_below_transactional_id: "my-txn".into(),
    ///     v3_and_below_producer_id: 4000,
    ///     v3_and_below_producer_epoch: 0,
    ///     v3_and_below_topics: vec![AddPartitionsToTxnRequestTopic {
    ///         name: "orders".into(),
    ///         partitions: vec![0, 1],
    ///         ..Default::default()
    ///     }],
    ///     ..Default::default()
    /// };
    /// let bytes = req.encode_to_vec(3).unwrap();
    /// assert_eq!(AddPartitionsToTxnRequest::decode(&bytes, 3).unwrap(), req);
    /// // The client form cannot be sent as v4+.
    /// assert!(req.encode_to_vec(4).is_err());
    /// ```
    pub struct AddPartitionsToTxnRequest [message AddPartitionsToTxn, versions 0..=5, flexible 3, request AddPartitionsToTxnResponse] {
        /// The transactions to add partitions to (v4+).
        transactions: Vec<AddPartitionsToTxnRequestTransaction>, versions 4..;
        /// The transactional id (v0–3).
        v3_and_below_transactional_id: String, versions ..=3;
        /// The producer id in use by the transactional id (v0–3).
        v3_and_below_producer_id: i64, versions ..=3;
        /// The producer's current epoch (v0–3).
        v3_and_below_producer_epoch: i16, versions ..=3;
        /// The partitions to add to the transaction (v0–3).
        v3_and_below_topics: Vec<AddPartitionsToTxnRequestTopic>, versions ..=3;
    }
}

nested! {
    /// One transaction of a batched (v4+) request.
    pub struct AddPartitionsToTxnRequestTransaction [in "transactions.", flexible 3] {
        /// The transactional id.
        transactional_id: String, versions 4..;
        /// The producer id in use by the transactional id.
        producer_id: i64, versions 4..;
        /// The producer's current epoch.
        producer_epoch: i16, versions 4..;
        /// Only check whether the partitions are already in the transaction.
        verify_only: bool, versions 4..;
        /// The partitions to add (or verify).
        topics: Vec<AddPartitionsToTxnRequestTopic>, versions 4..;
    }
}

nested! {
    /// A topic and the partitions of it to add to a transaction (Kafka's
    /// `AddPartitionsToTxnTopic`).
    pub struct AddPartitionsToTxnRequestTopic [in "transactions.topics.", flexible 3] {
        /// The topic name.
        name: String;
        /// The partition indexes.
        partitions: Vec<i32>;
    }
}

message! {
    /// Per-partition results of adding partitions to a transaction.
    pub struct AddPartitionsToTxnResponse [message AddPartitionsToTxn, versions 0..=5, flexible 3, response] {
        /// Throttle time in milliseconds.
        throttle_time_ms: i32;
        /// The top-level error code (v4+).
        error_code: i16, versions 4..;
        /// Results per transaction (v4+).
        results_by_transaction: Vec<AddPartitionsToTxnResponseResult>, versions 4..;
        /// Results per topic (v0–3).
        results_by_topic_v3_and_below: Vec<AddPartitionsToTxnResponseTopicResult>, versions ..=3;
    }
}

nested! {
    /// The results of one transaction (v4+; Kafka's `AddPartitionsToTxnResult`).
    pub struct AddPartitionsToTxnResponseResult [in "results_by_transaction.", flexible 3] {
        /// The transactional id.
        transactional_id: String, versions 4..;
        /// The results for each topic.
        topic_results: Vec<AddPartitionsToTxnResponseTopicResult>, versions 4..;
    }
}

nested! {
    /// The results of one topic (Kafka's `AddPartitionsToTxnTopicResult`).
    pub struct AddPartitionsToTxnResponseTopicResult [in "results_by_transaction.topic_results.", flexible 3] {
        /// The topic name.
        name: String;
        /// The results for each partition.
        results_by_partition: Vec<AddPartitionsToTxnResponsePartitionResult>;
    }
}

nested! {
    /// The result of one partition (Kafka's `AddPartitionsToTxnPartitionResult`).
    pub struct AddPartitionsToTxnResponsePartitionResult [in "results_by_transaction.topic_results.results_by_partition.", flexible 3] {
        /// The partition index.
        partition_index: i32;
        /// The partition's error code, or 0.
        partition_error_code: i16;
    }
}

impl AddPartitionsToTxnResponse {
    /// Every `(topic, partition, error_code)` of the v0–3 results.
    pub fn v3_and_below_errors(&self) -> impl Iterator<Item = (&str, i32, i16)> {
        self.results_by_topic_v3_and_below.iter().flat_map(|t| {
            t.results_by_partition
                .iter()
                .map(move |p| (t.name.as_str(), p.partition_index, p.partition_error_code))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;
    use crate::testing::{assert_not_in_version, decode_fixture};

    /// v2 request by hand: "tx", producer 1 epoch 0, topic "a" partitions [0, 2].
    #[test]
    fn v2_request_fixture() {
        let bytes: &[u8] = &[
            0, 2, b't', b'x', // transactional id
            0, 0, 0, 0, 0, 0, 0, 1, // producer id
            0, 0, // epoch
            0, 0, 0, 1, // 1 topic
            0, 1, b'a', // name
            0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 2, // partitions [0, 2]
        ];
        let req: AddPartitionsToTxnRequest = decode_fixture(bytes, 2);
        assert_eq!(req.v3_and_below_transactional_id, "tx");
        assert_eq!(req.v3_and_below_producer_id, 1);
        assert_eq!(req.v3_and_below_topics[0].name, "a");
        assert_eq!(req.v3_and_below_topics[0].partitions, [0, 2]);
        assert_not_in_version(&req, 4, "v3_and_below_transactional_id");
    }

    /// v4 request by hand: one transaction "t", producer 3 epoch 1, verify only,
    /// topic "a" partition [5].
    #[test]
    fn v4_request_fixture() {
        let bytes: &[u8] = &[
            2, // 1 transaction
            2, b't', // transactional id
            0, 0, 0, 0, 0, 0, 0, 3, // producer id
            0, 1, // epoch
            1, // verify_only
            2, // 1 topic
            2, b'a', // name
            2, 0, 0, 0, 5, // partitions [5]
            0, // topic tags
            0, // transaction tags
            0, // tags
        ];
        let req: AddPartitionsToTxnRequest = decode_fixture(bytes, 4);
        let t = &req.transactions[0];
        assert_eq!(
            (t.transactional_id.as_str(), t.producer_id, t.producer_epoch),
            ("t", 3, 1)
        );
        assert!(t.verify_only);
        assert_eq!(t.topics[0].partitions, [5]);
        assert!(req.encode_to_vec(3).is_err());
    }

    /// v3 response by hand: throttle 0, topic "a": partition 0 ok, partition 1
    /// error 53 (TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
    #[test]
    fn v3_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 0, // throttle
            2, // 1 topic
            2, b'a', // name
            3,    // 2 partitions
            0, 0, 0, 0, 0, 0, 0, // partition 0, no error, no tags
            0, 0, 0, 1, 0, 53, 0, // partition 1, error 53, no tags
            0, // topic tags
            0, // tags
        ];
        let resp: AddPartitionsToTxnResponse = decode_fixture(bytes, 3);
        assert_eq!(
            resp.v3_and_below_errors().collect::<Vec<_>>(),
            [("a", 0, 0), ("a", 1, 53)]
        );
    }

    /// v5 response by hand: throttle 0, top-level error 0, transaction "t" with
    /// topic "a" partition 2 error 48.
    #[test]
    fn v5_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 0, // throttle
            0, 0, // error_code
            2, // 1 transaction
            2, b't', // transactional id
            2,    // 1 topic
            2, b'a', // name
            2,    // 1 partition
            0, 0, 0, 2, 0, 48, 0, // partition 2, error 48, no tags
            0, // topic tags
            0, // transaction tags
            0, // tags
        ];
        let resp: AddPartitionsToTxnResponse = decode_fixture(bytes, 5);
        let r = &resp.results_by_transaction[0];
        assert_eq!(r.transactional_id, "t");
        assert_eq!(
            r.topic_results[0].results_by_partition[0].partition_index,
            2
        );
        assert_eq!(
            r.topic_results[0].results_by_partition[0].partition_error_code,
            48
        );
        let v4_only = AddPartitionsToTxnResponse {
            error_code: 7,
            ..Default::default()
        };
        assert_eq!(v4_only.encode_to_vec(3).unwrap_err().field, "error_code");
    }
}
