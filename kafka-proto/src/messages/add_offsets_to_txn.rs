//! AddOffsetsToTxn (key 25), versions 0–4, flexible from 3.
//!
//! Adds a consumer group's offsets partition to a transaction, before the
//! producer sends TxnOffsetCommit to the group coordinator.

use crate::describe::message;

message! {
    /// Adds a consumer group's offsets to a transaction.
    ///
    /// ```
    /// use kafka_proto::{Message, messages::AddOffsetsToTxnRequest};
    /// let req = AddOffsetsToTxnRequest {
    ///     transactional_id: "my-txn".into(),
    ///     producer_id: 4000,
    ///     producer_epoch: 0,
    ///     group_id: "my-group".into(),
    ///     ..Default::default()
    /// };
    /// let bytes = req.encode_to_vec(4).unwrap();
    /// assert_eq!(AddOffsetsToTxnRequest::decode(&bytes, 4).unwrap(), req);
    /// ```
    pub struct AddOffsetsToTxnRequest [message AddOffsetsToTxn, versions 0..=4, flexible 3, request AddOffsetsToTxnResponse] {
        /// The transactional id.
        transactional_id: String;
        /// The producer id in use by the transactional id.
        producer_id: i64;
        /// The producer's current epoch.
        producer_epoch: i16;
        /// The consumer group id.
        group_id: String;
    }
}

message! {
    /// The outcome of adding a group's offsets to a transaction.
    pub struct AddOffsetsToTxnResponse [message AddOffsetsToTxn, versions 0..=4, flexible 3, response] {
        /// Throttle time in milliseconds.
        throttle_time_ms: i32;
        /// The error code, or 0.
        error_code: i16;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;
    use crate::testing::decode_fixture;

    /// v3 request by hand: compact "t", producer 2, epoch 0, group "g", no tags.
    #[test]
    fn v3_request_fixture() {
        let bytes: &[u8] = &[
            2, b't', // transactional id
            0, 0, 0, 0, 0, 0, 0, 2, // producer id
            0, 0, // epoch
            2, b'g', // group id
            0,    // tags
        ];
        let req: AddOffsetsToTxnRequest = decode_fixture(bytes, 3);
        assert_eq!(
            (
                req.transactional_id.as_str(),
                req.producer_id,
                req.group_id.as_str()
            ),
            ("t", 2, "g")
        );
        // The same request in v2 uses int16 string lengths and no tags.
        assert_eq!(
            req.encode_to_vec(2).unwrap(),
            [0, 1, b't', 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1, b'g']
        );
    }

    /// v4 response by hand: throttle 10, error 48 (INVALID_TXN_STATE), one unknown tag.
    #[test]
    fn v4_response_fixture() {
        let bytes: &[u8] = &[0, 0, 0, 10, 0, 48, 1, 20, 1, 0xaa];
        let resp: AddOffsetsToTxnResponse = decode_fixture(bytes, 4);
        assert_eq!((resp.throttle_time_ms, resp.error_code), (10, 48));
        assert_eq!(resp.unknown_tagged_fields.len(), 1);
        // Unknown tagged fields cannot be sent in a non-flexible version.
        assert!(resp.encode_to_vec(2).is_err());
    }
}
