//! InitProducerId (key 22), versions 0–6, flexible from 2.
//!
//! Obtains a producer id and epoch, for an idempotent producer (null
//! transactional id) or a transactional one. v3 lets a producer pass its current
//! id and epoch to recover after an epoch error; v6 (KIP-939, unstable in Kafka
//! 4.4) adds two-phase commit: `enable_2pc` / `keep_prepared_txn` in the request
//! and the ongoing transaction's producer id and epoch in the response.

use crate::describe::message;

message! {
    /// Requests a producer id and epoch.
    ///
    /// ```
    /// use kafka_proto::{Message, messages::InitProducerIdRequest};
    /// let req = InitProducerIdRequest::transactional("my-txn", 60_000);
    /// let bytes = req.encode_to_vec(5).unwrap();
    /// assert_eq!(InitProducerIdRequest::decode(&bytes, 5).unwrap(), req);
    /// let idem = InitProducerIdRequest::idempotent();
    /// assert_eq!(idem.transactional_id, None);
    /// ```
    pub struct InitProducerIdRequest [message InitProducerId, versions 0..=6, flexible 2, request InitProducerIdResponse] {
        /// The transactional id, or null for an idempotent producer. Defaults to
        /// `""` as in Kafka; use [`InitProducerIdRequest::idempotent`] for null.
        transactional_id: Option<String> = Some(String::new()), nullable ..;
        /// The transaction timeout in milliseconds.
        transaction_timeout_ms: i32;
        /// The current producer id, to recover after an epoch error (v3+, default -1).
        producer_id: i64 = -1, versions 3..;
        /// The current producer epoch (v3+, default -1).
        producer_epoch: i16 = -1, versions 3..;
        /// True if the client wants to enable two-phase commit (2PC) protocol for transactions.
        enable_2pc: bool, versions 6..;
        /// Keep the currently prepared transaction instead of aborting it (v6+).
        keep_prepared_txn: bool, versions 6..;
    }
}

message! {
    /// The producer id and epoch assigned.
    pub struct InitProducerIdResponse [message InitProducerId, versions 0..=6, flexible 2, response] {
        /// Throttle time in milliseconds.
        throttle_time_ms: i32;
        /// The error code, or 0.
        error_code: i16;
        /// The producer id (default -1).
        producer_id: i64 = -1;
        /// The producer epoch.
        producer_epoch: i16;
        /// The producer id of the ongoing (prepared) transaction kept with
        /// `keep_prepared_txn`, or -1 (v6+).
        ongoing_txn_producer_id: i64 = -1, versions 6..;
        /// The epoch of the ongoing transaction's producer id, or -1 (v6+).
        ongoing_txn_producer_epoch: i16 = -1, versions 6..;
    }
}

impl InitProducerIdRequest {
    /// A request for an idempotent (non-transactional) producer: null transactional id.
    pub fn idempotent() -> Self {
        Self {
            transactional_id: None,
            transaction_timeout_ms: i32::MAX,
            ..Self::default()
        }
    }
    /// A request for a transactional producer.
    pub fn transactional(transactional_id: impl Into<String>, transaction_timeout_ms: i32) -> Self {
        Self {
            transactional_id: Some(transactional_id.into()),
            transaction_timeout_ms,
            ..Self::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;
    use crate::testing::{assert_not_in_version, decode_fixture};

    /// v0 request by hand: null transactional id (int16 -1), timeout 60000.
    #[test]
    fn v0_idempotent_request_fixture() {
        let bytes: &[u8] = &[0xff, 0xff, 0, 0, 0xea, 0x60];
        let req: InitProducerIdRequest = decode_fixture(bytes, 0);
        assert_eq!(req.transactional_id, None);
        assert_eq!(req.transaction_timeout_ms, 60_000);
        assert_eq!((req.producer_id, req.producer_epoch), (-1, -1));
    }

    /// v6 request by hand: "tx", timeout 1000, producer 7 epoch 2, 2PC on, keep off.
    #[test]
    fn v6_request_fixture() {
        let bytes: &[u8] = &[
            3, b't', b'x', // compact "tx"
            0, 0, 0x03, 0xe8, // timeout 1000
            0, 0, 0, 0, 0, 0, 0, 7, // producer id
            0, 2, // epoch
            1, 0, // enable_2pc, keep_prepared_txn
            0, // tags
        ];
        let req: InitProducerIdRequest = decode_fixture(bytes, 6);
        assert_eq!(req.transactional_id.as_deref(), Some("tx"));
        assert_eq!((req.producer_id, req.producer_epoch), (7, 2));
        assert!(req.enable_2pc && !req.keep_prepared_txn);
        assert_not_in_version(&req, 5, "enable_2pc");
    }

    /// v6 response by hand: throttle 0, no error, producer 9 epoch 1, ongoing 8 epoch 3.
    #[test]
    fn v6_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 0, // throttle
            0, 0, // error
            0, 0, 0, 0, 0, 0, 0, 9, // producer id
            0, 1, // epoch
            0, 0, 0, 0, 0, 0, 0, 8, // ongoing producer id
            0, 3, // ongoing epoch
            0, // tags
        ];
        let resp: InitProducerIdResponse = decode_fixture(bytes, 6);
        assert_eq!((resp.producer_id, resp.producer_epoch), (9, 1));
        assert_eq!(
            (
                resp.ongoing_txn_producer_id,
                resp.ongoing_txn_producer_epoch
            ),
            (8, 3)
        );
        assert!(resp.encode_to_vec(5).is_err());
    }

    #[test]
    fn idempotent_has_no_transactional_id() {
        use crate::{Message, messages::InitProducerIdRequest};
        let req = InitProducerIdRequest::idempotent();
        assert_eq!(req.transactional_id, None);
        assert_eq!(
            InitProducerIdRequest::decode(&req.encode_to_vec(4).unwrap(), 4).unwrap(),
            req
        );
    }

    #[test]
    fn transactional_sets_the_id() {
        use crate::{Message, messages::InitProducerIdRequest};
        let req = InitProducerIdRequest::transactional("orders-0", 60_000);
        assert_eq!(req.transactional_id.as_deref(), Some("orders-0"));
        assert_eq!(
            InitProducerIdRequest::decode(&req.encode_to_vec(5).unwrap(), 5).unwrap(),
            req
        );
    }
}
