//! DescribeTransactions (key 65), version 0, flexible.
//!
//! Asks a transaction coordinator for the state of transactional ids: state,
//! timeout, start time, producer id/epoch and the partitions in the transaction.

use crate::describe::{message, nested};

message! {
    /// Describes transactions by transactional id.
    ///
    /// ```
    /// use kafka_proto::{Message, messages::DescribeTransactionsRequest};
    /// let req = DescribeTransactionsRequest {
    ///     transactional_ids: vec!["orders-0".into()],
    ///     ..Default::default()
    /// };
    /// let bytes = req.encode_to_vec(0).unwrap();
    /// assert_eq!(DescribeTransactionsRequest::decode(&bytes, 0).unwrap(), req);
    /// ```
    pub struct DescribeTransactionsRequest [message DescribeTransactions, versions 0..=0, flexible 0, request DescribeTransactionsResponse] {
        /// Transactional ids to describe; empty returns no results.
        transactional_ids: Vec<String>;
    }
}

message! {
    /// The state of each requested transaction.
    pub struct DescribeTransactionsResponse [message DescribeTransactions, versions 0..=0, flexible 0, response] {
        /// Throttle time in milliseconds, or zero.
        throttle_time_ms: i32;
        /// The state of each transaction.
        transaction_states: Vec<DescribeTransactionsResponseTransactionState>;
    }
}

nested! {
    /// The state of one transaction.
    pub struct DescribeTransactionsResponseTransactionState [in "transaction_states.", flexible 0] {
        /// The error code.
        error_code: i16;
        /// The transactional id.
        transactional_id: String;
        /// The current transaction state of the producer, e.g. `Ongoing`.
        transaction_state: String;
        /// The timeout in milliseconds for the transaction.
        transaction_timeout_ms: i32;
        /// The start time of the transaction in milliseconds.
        transaction_start_time_ms: i64;
        /// The current producer id associated with the transaction.
        producer_id: i64;
        /// The current epoch associated with the producer id.
        producer_epoch: i16;
        /// The partitions in the current transaction (if active); while preparing
        /// to commit or abort, only partitions which do not have markers yet.
        topics: Vec<DescribeTransactionsResponseTopicData>;
    }
}

nested! {
    /// The partitions of one topic in a transaction.
    pub struct DescribeTransactionsResponseTopicData [in "transaction_states.topics.", flexible 0] {
        /// The topic name.
        topic: String;
        /// The partition ids included in the current transaction.
        partitions: Vec<i32>;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::decode_fixture;

    #[test]
    fn v0_request_fixture() {
        let bytes: &[u8] = &[3, 2, b'a', 3, b'b', b'c', 0];
        let req: DescribeTransactionsRequest = decode_fixture(bytes, 0);
        assert_eq!(req.transactional_ids, ["a", "bc"]);
    }

    /// One ongoing transaction over partitions 0 and 2 of topic "t".
    #[test]
    fn v0_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 0, // throttle_time_ms
            2, // transaction_states: 1 element
            0, 0, // error_code
            3, b't', b'x', // transactional_id "tx"
            8, b'O', b'n', b'g', b'o', b'i', b'n', b'g', // "Ongoing"
            0, 0, 0xea, 0x60, // transaction_timeout_ms 60000
            0, 0, 0, 0, 0, 0, 0x03, 0xe8, // transaction_start_time_ms 1000
            0, 0, 0, 0, 0, 0, 0x0f, 0xa0, // producer_id 4000
            0, 7, // producer_epoch 7
            2, // topics: 1 element
            2, b't', // topic "t"
            3, 0, 0, 0, 0, 0, 0, 0, 2, // partitions [0, 2]
            0, // topic tags
            0, // state tags
            0, // tags
        ];
        let resp: DescribeTransactionsResponse = decode_fixture(bytes, 0);
        let s = &resp.transaction_states[0];
        assert_eq!(s.transactional_id, "tx");
        assert_eq!(s.transaction_state, "Ongoing");
        assert_eq!(s.transaction_timeout_ms, 60000);
        assert_eq!(s.transaction_start_time_ms, 1000);
        assert_eq!((s.producer_id, s.producer_epoch), (4000, 7));
        assert_eq!(s.topics[0].topic, "t");
        assert_eq!(s.topics[0].partitions, [0, 2]);
    }
}
