//! EndTxn (key 26), versions 0–5, flexible from 3.
//!
//! Commits or aborts a transaction. From v5 (KIP-890 part 2, transaction
//! version 2) the coordinator bumps the epoch on every transaction and returns
//! the producer id and new epoch in the response.

use crate::describe::message;

message! {
    /// Ends (commits or aborts) a transaction.
    ///
    /// ```
    /// use kafka_proto::{Message, messages::EndTxnRequest};
    /// let req = EndTxnRequest {
    ///     transactional_id: "my-txn".into(),
    ///     producer_id: 4000,
    ///     producer_epoch: 3,
    ///     committed: true,
    ///     ..Default::default()
    /// };
    /// let bytes = req.encode_to_vec(5).unwrap();
    /// assert_eq!(EndTxnRequest::decode(&bytes, 5).unwrap(), req);
    /// ```
    pub struct EndTxnRequest [message EndTxn, versions 0..=5, flexible 3, request EndTxnResponse] {
        /// The transactional id.
        transactional_id: String;
        /// The producer id.
        producer_id: i64;
        /// The producer's current epoch.
        producer_epoch: i16;
        /// True to commit, false to abort.
        committed: bool;
    }
}

message! {
    /// The outcome of ending a transaction.
    pub struct EndTxnResponse [message EndTxn, versions 0..=5, flexible 3, response] {
        /// Throttle time in milliseconds.
        throttle_time_ms: i32;
        /// The error code, or 0.
        error_code: i16;
        /// The producer id (v5+, default -1).
        producer_id: i64 = -1, versions 5..;
        /// The producer's (bumped) epoch (v5+, default -1).
        producer_epoch: i16 = -1, versions 5..;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;
    use crate::testing::decode_fixture;

    /// v2 request by hand: "t" (int16 length), producer 5, epoch 1, abort.
    #[test]
    fn v2_request_fixture() {
        let bytes: &[u8] = &[
            0, 1, b't', // transactional id
            0, 0, 0, 0, 0, 0, 0, 5, // producer id
            0, 1, // epoch
            0, // abort
        ];
        let req: EndTxnRequest = decode_fixture(bytes, 2);
        assert_eq!(
            req,
            EndTxnRequest {
                transactional_id: "t".into(),
                producer_id: 5,
                producer_epoch: 1,
                committed: false,
                ..Default::default()
            }
        );
    }

    /// v5 response by hand: throttle 0, error 0, producer 5, epoch 2, no tags.
    #[test]
    fn v5_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 0, // throttle
            0, 0, // error
            0, 0, 0, 0, 0, 0, 0, 5, // producer id
            0, 2, // epoch
            0, // tags
        ];
        let resp: EndTxnResponse = decode_fixture(bytes, 5);
        assert_eq!((resp.producer_id, resp.producer_epoch), (5, 2));
        // v4 decode: no producer id/epoch, defaults -1.
        let v4 = EndTxnResponse::decode(&[0, 0, 0, 0, 0, 48, 0], 4).unwrap();
        assert_eq!(
            (v4.error_code, v4.producer_id, v4.producer_epoch),
            (48, -1, -1)
        );
    }

    #[test]
    fn response_producer_id_and_epoch_need_v5() {
        use crate::{Message, messages::EndTxnResponse};
        let resp = EndTxnResponse {
            producer_id: 4000,
            producer_epoch: 4,
            ..Default::default()
        };
        assert_eq!(
            EndTxnResponse::decode(&resp.encode_to_vec(5).unwrap(), 5).unwrap(),
            resp
        );
        // Before v5 the response cannot carry the new epoch.
        assert!(resp.encode_to_vec(4).is_err());
    }
}
