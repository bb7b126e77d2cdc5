//! ListTransactions (key 66), versions 0–2, flexible in every version.
//!
//! Lists the transactions a coordinator knows about, filtered by state and
//! producer id; v1 adds a minimum running duration filter (KIP-994) and v2 a
//! transactional-id regular expression (KIP-1152).

use crate::describe::{message, nested};

message! {
    /// Lists transactions on a broker (its transaction coordinator partitions).
    ///
    /// ```
    /// use kafka_proto::{Message, messages::ListTransactionsRequest};
    /// let req = ListTransactionsRequest {
    ///     state_filters: vec!["Ongoing".into()],
    ///     duration_filter: 60_000,
    ///     transactional_id_pattern: Some("^orders-.*".into()),
    ///     ..Default::default()
    /// };
    /// let bytes = req.encode_to_vec(2).unwrap();
    /// assert_eq!(ListTransactionsRequest::decode(&bytes, 2).unwrap(), req);
    /// // v0 can carry neither the duration nor the pattern.
    /// assert!(req.encode_to_vec(0).is_err());
    /// ```
    pub struct ListTransactionsRequest [message ListTransactions, versions 0..=2, flexible 0, request ListTransactionsResponse] {
        /// The transaction states to filter by; empty lists all.
        state_filters: Vec<String>;
        /// The producer ids to filter by; empty lists all.
        producer_id_filters: Vec<i64>;
        /// Only transactions running longer than this many milliseconds; negative
        /// lists all (v1+, default -1).
        duration_filter: i64 = -1, versions 1..;
        /// A regular expression the transactional id must match; null or empty
        /// lists all (v2+, default null).
        transactional_id_pattern: Option<String>, versions 2.., nullable 2..;
    }
}

message! {
    /// The transactions matching a [`ListTransactionsRequest`].
    pub struct ListTransactionsResponse [message ListTransactions, versions 0..=2, flexible 0, response] {
        /// Throttle time in milliseconds, or zero.
        throttle_time_ms: i32;
        /// The error code, or 0 if there was no error.
        error_code: i16;
        /// State filters from the request which the coordinator did not know.
        unknown_state_filters: Vec<String>;
        /// The matching transactions.
        transaction_states: Vec<ListTransactionsResponseTransactionState>;
    }
}

nested! {
    /// One listed transaction.
    pub struct ListTransactionsResponseTransactionState [in "transaction_states.", flexible 0] {
        /// The transactional id.
        transactional_id: String;
        /// The producer id.
        producer_id: i64;
        /// The current transaction state of the producer, e.g. `Ongoing`.
        transaction_state: String;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;
    use crate::testing::{assert_not_in_version, decode_fixture};

    /// v2 request with every filter set.
    #[test]
    fn v2_request_fixture() {
        let bytes: &[u8] = &[
            2, 8, b'O', b'n', b'g', b'o', b'i', b'n', b'g', // state_filters ["Ongoing"]
            2, 0, 0, 0, 0, 0, 0, 0, 42, // producer_id_filters [42]
            0, 0, 0, 0, 0, 0, 0xea, 0x60, // duration_filter 60000
            5, b't', b'x', b'.', b'*', // transactional_id_pattern "tx.*"
            0,    // tags
        ];
        let req: ListTransactionsRequest = decode_fixture(bytes, 2);
        assert_eq!(req.state_filters, ["Ongoing"]);
        assert_eq!(req.producer_id_filters, [42]);
        assert_eq!(req.duration_filter, 60000);
        assert_eq!(req.transactional_id_pattern.as_deref(), Some("tx.*"));
    }

    /// v0 request: only the two arrays; v1 adds the duration, v2 the (null) pattern.
    #[test]
    fn versioned_request_layouts() {
        let req = ListTransactionsRequest::default();
        assert_eq!(req.encode_to_vec(0).unwrap(), [1, 1, 0]);
        assert_eq!(
            req.encode_to_vec(1).unwrap(),
            [1, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0]
        );
        assert_eq!(
            req.encode_to_vec(2).unwrap(),
            [1, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0]
        );
        let with_duration = ListTransactionsRequest {
            duration_filter: 5,
            ..Default::default()
        };
        assert_not_in_version(&with_duration, 0, "duration_filter");
        let with_pattern = ListTransactionsRequest {
            transactional_id_pattern: Some(String::new()),
            ..Default::default()
        };
        assert_eq!(
            with_pattern.encode_to_vec(1).unwrap_err().field,
            "transactional_id_pattern"
        );
    }

    #[test]
    fn v0_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 0, // throttle_time_ms
            0, 0, // error_code
            2, 4, b'B', b'a', b'd', // unknown_state_filters ["Bad"]
            2,    // transaction_states: 1 element
            3, b't', b'x', // transactional_id "tx"
            0, 0, 0, 0, 0, 0, 0x0f, 0xa0, // producer_id 4000
            8, b'O', b'n', b'g', b'o', b'i', b'n', b'g', // "Ongoing"
            0,    // element tags
            0,    // tags
        ];
        let resp: ListTransactionsResponse = decode_fixture(bytes, 0);
        assert_eq!(resp.unknown_state_filters, ["Bad"]);
        let t = &resp.transaction_states[0];
        assert_eq!(t.transactional_id, "tx");
        assert_eq!(t.producer_id, 4000);
        assert_eq!(t.transaction_state, "Ongoing");
        assert_eq!(resp.encode_to_vec(2).unwrap(), bytes);
    }
}
