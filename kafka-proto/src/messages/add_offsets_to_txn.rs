//! AddOffsetsToTxn (key 25), versions 0–4, flexible from 3.
//!
//! Adds a consumer group's offsets partition to a transaction, before the
//! producer sends TxnOffsetCommit to the group coordinator.

use crate::primitives::{Reader, TaggedFields, put_string, put_unknown_tagged_fields};
use crate::{
    ApiKey, DecodeError, EncodeError, Message, Request, Response, VersionRange, check_field,
};
use bytes::BufMut;

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
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AddOffsetsToTxnRequest {
    /// The transactional id.
    pub transactional_id: String,
    /// The producer id in use by the transactional id.
    pub producer_id: i64,
    /// The producer's current epoch.
    pub producer_epoch: i16,
    /// The consumer group id.
    pub group_id: String,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl Message for AddOffsetsToTxnRequest {
    const API_KEY: ApiKey = ApiKey::AddOffsetsToTxn;
    const VERSIONS: VersionRange = VersionRange::new(0, 4);
    const FLEXIBLE_MIN: i16 = 3;

    fn encode_body<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let flex = Self::is_flexible(version);
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &Vec::new(),
            "_tagged_fields",
        )?;
        put_string(buf, "transactional_id", &self.transactional_id, flex)?;
        buf.put_i64(self.producer_id);
        buf.put_i16(self.producer_epoch);
        put_string(buf, "group_id", &self.group_id, flex)?;
        if flex {
            put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
        }
        Ok(())
    }

    fn decode_body(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = Self::is_flexible(version);
        let mut m = Self {
            transactional_id: r.string("transactional_id", flex)?,
            producer_id: r.i64("producer_id")?,
            producer_epoch: r.i16("producer_epoch")?,
            group_id: r.string("group_id", flex)?,
            ..Default::default()
        };
        if flex {
            m.unknown_tagged_fields = r.unknown_tagged_fields("_tagged_fields")?;
        }
        Ok(m)
    }
}

impl Request for AddOffsetsToTxnRequest {
    type Response = AddOffsetsToTxnResponse;
}

/// The outcome of adding a group's offsets to a transaction.
///
/// ```
/// use kafka_proto::{Message, messages::AddOffsetsToTxnResponse};
/// let resp = AddOffsetsToTxnResponse {
///     error_code: 51,
///     ..Default::default()
/// };
/// assert_eq!(
///     AddOffsetsToTxnResponse::decode(&resp.encode_to_vec(0).unwrap(), 0).unwrap(),
///     resp
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AddOffsetsToTxnResponse {
    /// Throttle time in milliseconds.
    pub throttle_time_ms: i32,
    /// The error code, or 0.
    pub error_code: i16,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl Message for AddOffsetsToTxnResponse {
    const API_KEY: ApiKey = ApiKey::AddOffsetsToTxn;
    const VERSIONS: VersionRange = VersionRange::new(0, 4);
    const FLEXIBLE_MIN: i16 = 3;

    fn encode_body<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let flex = Self::is_flexible(version);
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &Vec::new(),
            "_tagged_fields",
        )?;
        buf.put_i32(self.throttle_time_ms);
        buf.put_i16(self.error_code);
        if flex {
            put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
        }
        Ok(())
    }

    fn decode_body(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = Self::is_flexible(version);
        let mut m = Self {
            throttle_time_ms: r.i32("throttle_time_ms")?,
            error_code: r.i16("error_code")?,
            ..Default::default()
        };
        if flex {
            m.unknown_tagged_fields = r.unknown_tagged_fields("_tagged_fields")?;
        }
        Ok(m)
    }
}

impl Response for AddOffsetsToTxnResponse {}

#[cfg(any(test, feature = "arbitrary"))]
mod arbitrary {
    use super::*;
    use crate::testing::{VersionedArbitrary, arb_string, arb_tagged};
    use proptest::prelude::*;

    impl VersionedArbitrary for AddOffsetsToTxnRequest {
        fn arbitrary(version: i16) -> BoxedStrategy<Self> {
            (
                arb_string(true),
                any::<i64>(),
                any::<i16>(),
                arb_string(true),
                arb_tagged(version >= 3),
            )
                .prop_map(|(tid, pid, epoch, group, t)| AddOffsetsToTxnRequest {
                    transactional_id: tid,
                    producer_id: pid,
                    producer_epoch: epoch,
                    group_id: group,
                    unknown_tagged_fields: t,
                })
                .boxed()
        }
    }

    impl VersionedArbitrary for AddOffsetsToTxnResponse {
        fn arbitrary(version: i16) -> BoxedStrategy<Self> {
            (any::<i32>(), any::<i16>(), arb_tagged(version >= 3))
                .prop_map(|(th, e, t)| AddOffsetsToTxnResponse {
                    throttle_time_ms: th,
                    error_code: e,
                    unknown_tagged_fields: t,
                })
                .boxed()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let req = AddOffsetsToTxnRequest::decode(bytes, 3).unwrap();
        assert_eq!(
            (
                req.transactional_id.as_str(),
                req.producer_id,
                req.group_id.as_str()
            ),
            ("t", 2, "g")
        );
        assert_eq!(req.encode_to_vec(3).unwrap(), bytes);
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
        let resp = AddOffsetsToTxnResponse::decode(bytes, 4).unwrap();
        assert_eq!((resp.throttle_time_ms, resp.error_code), (10, 48));
        assert_eq!(resp.unknown_tagged_fields.len(), 1);
        assert_eq!(resp.encode_to_vec(4).unwrap(), bytes);
        // Unknown tagged fields cannot be sent in a non-flexible version.
        assert!(resp.encode_to_vec(2).is_err());
    }
}

#[cfg(test)]
mod round_trip {
    use super::*;
    use crate::testing::{round_trip_all_versions, truncations_fail_cleanly};

    #[test]
    fn request_every_version() {
        round_trip_all_versions::<AddOffsetsToTxnRequest>(64);
        truncations_fail_cleanly::<AddOffsetsToTxnRequest>(8);
    }

    #[test]
    fn response_every_version() {
        round_trip_all_versions::<AddOffsetsToTxnResponse>(64);
        truncations_fail_cleanly::<AddOffsetsToTxnResponse>(8);
    }
}
