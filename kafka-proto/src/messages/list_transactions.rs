//! ListTransactions (key 66), versions 0–2, flexible in every version.
//!
//! Lists the transactions a coordinator knows about, filtered by state and
//! producer id; v1 adds a minimum running duration filter (KIP-994) and v2 a
//! transactional-id regular expression (KIP-1152).

use crate::primitives::{
    Reader, TaggedFields, put_array, put_nullable_string, put_string, put_unknown_tagged_fields,
};
use crate::{
    ApiKey, DecodeError, EncodeError, Message, Request, Response, VersionRange, check_field,
};
use bytes::BufMut;

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
#[derive(Debug, Clone, PartialEq)]
pub struct ListTransactionsRequest {
    /// The transaction states to filter by; empty lists all.
    pub state_filters: Vec<String>,
    /// The producer ids to filter by; empty lists all.
    pub producer_id_filters: Vec<i64>,
    /// Only transactions running longer than this many milliseconds; negative
    /// lists all (v1+, default -1).
    pub duration_filter: i64,
    /// A regular expression the transactional id must match; null or empty
    /// lists all (v2+, default null).
    pub transactional_id_pattern: Option<String>,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl Default for ListTransactionsRequest {
    fn default() -> Self {
        Self {
            state_filters: Vec::new(),
            producer_id_filters: Vec::new(),
            duration_filter: -1,
            transactional_id_pattern: None,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl Message for ListTransactionsRequest {
    const API_KEY: ApiKey = ApiKey::ListTransactions;
    const VERSIONS: VersionRange = VersionRange::new(0, 2);
    const FLEXIBLE_MIN: i16 = 0;

    fn encode_body<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let d = Self::default();
        check_field(
            version >= 1,
            &self.duration_filter,
            &d.duration_filter,
            "duration_filter",
        )?;
        check_field(
            version >= 2,
            &self.transactional_id_pattern,
            &d.transactional_id_pattern,
            "transactional_id_pattern",
        )?;
        put_array(buf, "state_filters", &self.state_filters, true, |b, s| {
            put_string(b, "state_filters", s, true)
        })?;
        put_array(
            buf,
            "producer_id_filters",
            &self.producer_id_filters,
            true,
            |b, p| {
                b.put_i64(*p);
                Ok(())
            },
        )?;
        if version >= 1 {
            buf.put_i64(self.duration_filter);
        }
        if version >= 2 {
            put_nullable_string(
                buf,
                "transactional_id_pattern",
                self.transactional_id_pattern.as_deref(),
                true,
            )?;
        }
        put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
        Ok(())
    }

    fn decode_body(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let mut m = Self {
            state_filters: r.array("state_filters", true, |r| r.string("state_filters", true))?,
            producer_id_filters: r.array("producer_id_filters", true, |r| {
                r.i64("producer_id_filters")
            })?,
            ..Default::default()
        };
        if version >= 1 {
            m.duration_filter = r.i64("duration_filter")?;
        }
        if version >= 2 {
            m.transactional_id_pattern = r.nullable_string("transactional_id_pattern", true)?;
        }
        m.unknown_tagged_fields = r.unknown_tagged_fields("_tagged_fields")?;
        Ok(m)
    }
}

impl Request for ListTransactionsRequest {
    type Response = ListTransactionsResponse;
}

/// The transactions matching a [`ListTransactionsRequest`].
///
/// ```
/// use kafka_proto::{
///     Message,
///     messages::{ListTransactionsResponse, ListTransactionsResponseTransactionState},
/// };
/// let resp = ListTransactionsResponse {
///     transaction_states: vec![ListTransactionsResponseTransactionState {
///         transactional_id: "orders-0".into(),
///         producer_id: 4000,
///         transaction_state: "Ongoing".into(),
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// let back = ListTransactionsResponse::decode(&resp.encode_to_vec(0).unwrap(), 0).unwrap();
/// assert_eq!(back, resp);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ListTransactionsResponse {
    /// Throttle time in milliseconds, or zero.
    pub throttle_time_ms: i32,
    /// The error code, or 0 if there was no error.
    pub error_code: i16,
    /// State filters from the request which the coordinator did not know.
    pub unknown_state_filters: Vec<String>,
    /// The matching transactions.
    pub transaction_states: Vec<ListTransactionsResponseTransactionState>,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

/// One listed transaction.
///
/// ```
/// use kafka_proto::{Message, messages::*};
/// let resp = ListTransactionsResponse {
///     transaction_states: vec![ListTransactionsResponseTransactionState {
///         transactional_id: "orders-0".into(),
///         producer_id: 4000,
///         transaction_state: "PrepareCommit".into(),
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// assert_eq!(
///     ListTransactionsResponse::decode(&resp.encode_to_vec(1).unwrap(), 1).unwrap(),
///     resp
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ListTransactionsResponseTransactionState {
    /// The transactional id.
    pub transactional_id: String,
    /// The producer id.
    pub producer_id: i64,
    /// The current transaction state of the producer, e.g. `Ongoing`.
    pub transaction_state: String,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl Message for ListTransactionsResponse {
    const API_KEY: ApiKey = ApiKey::ListTransactions;
    const VERSIONS: VersionRange = VersionRange::new(0, 2);
    const FLEXIBLE_MIN: i16 = 0;

    fn encode_body<B: BufMut>(&self, buf: &mut B, _version: i16) -> Result<(), EncodeError> {
        buf.put_i32(self.throttle_time_ms);
        buf.put_i16(self.error_code);
        put_array(
            buf,
            "unknown_state_filters",
            &self.unknown_state_filters,
            true,
            |b, s| put_string(b, "unknown_state_filters", s, true),
        )?;
        put_array(
            buf,
            "transaction_states",
            &self.transaction_states,
            true,
            |b, t| {
                put_string(
                    b,
                    "transaction_states.transactional_id",
                    &t.transactional_id,
                    true,
                )?;
                b.put_i64(t.producer_id);
                put_string(
                    b,
                    "transaction_states.transaction_state",
                    &t.transaction_state,
                    true,
                )?;
                put_unknown_tagged_fields(b, &t.unknown_tagged_fields);
                Ok(())
            },
        )?;
        put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
        Ok(())
    }

    fn decode_body(r: &mut Reader<'_>, _version: i16) -> Result<Self, DecodeError> {
        Ok(Self {
            throttle_time_ms: r.i32("throttle_time_ms")?,
            error_code: r.i16("error_code")?,
            unknown_state_filters: r.array("unknown_state_filters", true, |r| {
                r.string("unknown_state_filters", true)
            })?,
            transaction_states: r.array("transaction_states", true, |r| {
                Ok(ListTransactionsResponseTransactionState {
                    transactional_id: r.string("transaction_states.transactional_id", true)?,
                    producer_id: r.i64("transaction_states.producer_id")?,
                    transaction_state: r.string("transaction_states.transaction_state", true)?,
                    unknown_tagged_fields: r
                        .unknown_tagged_fields("transaction_states._tagged_fields")?,
                })
            })?,
            unknown_tagged_fields: r.unknown_tagged_fields("_tagged_fields")?,
        })
    }
}

impl Response for ListTransactionsResponse {}

#[cfg(any(test, feature = "arbitrary"))]
mod arbitrary {
    use super::*;
    use crate::testing::{
        VersionedArbitrary, arb_or, arb_string, arb_tagged, arb_vec, opt_nullable_string,
    };
    use proptest::prelude::*;

    impl VersionedArbitrary for ListTransactionsRequest {
        fn arbitrary(version: i16) -> BoxedStrategy<Self> {
            (
                arb_vec(true, arb_string(true)),
                arb_vec(true, any::<i64>()),
                arb_or(version >= 1, -1i64),
                opt_nullable_string(version >= 2),
                arb_tagged(true),
            )
                .prop_map(|(s, p, d, pat, t)| ListTransactionsRequest {
                    state_filters: s,
                    producer_id_filters: p,
                    duration_filter: d,
                    transactional_id_pattern: pat,
                    unknown_tagged_fields: t,
                })
                .boxed()
        }
    }

    impl VersionedArbitrary for ListTransactionsResponse {
        fn arbitrary(_version: i16) -> BoxedStrategy<Self> {
            let state = (
                arb_string(true),
                any::<i64>(),
                arb_string(true),
                arb_tagged(true),
            )
                .prop_map(|(id, pid, st, t)| {
                    ListTransactionsResponseTransactionState {
                        transactional_id: id,
                        producer_id: pid,
                        transaction_state: st,
                        unknown_tagged_fields: t,
                    }
                });
            (
                any::<i32>(),
                any::<i16>(),
                arb_vec(true, arb_string(true)),
                arb_vec(true, state),
                arb_tagged(true),
            )
                .prop_map(|(th, e, u, s, t)| ListTransactionsResponse {
                    throttle_time_ms: th,
                    error_code: e,
                    unknown_state_filters: u,
                    transaction_states: s,
                    unknown_tagged_fields: t,
                })
                .boxed()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EncodeErrorKind;

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
        let req = ListTransactionsRequest::decode(bytes, 2).unwrap();
        assert_eq!(req.state_filters, ["Ongoing"]);
        assert_eq!(req.producer_id_filters, [42]);
        assert_eq!(req.duration_filter, 60000);
        assert_eq!(req.transactional_id_pattern.as_deref(), Some("tx.*"));
        assert_eq!(req.encode_to_vec(2).unwrap(), bytes);
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
        let e = with_duration.encode_to_vec(0).unwrap_err();
        assert_eq!(e.kind, EncodeErrorKind::FieldNotInVersion);
        assert_eq!(e.field, "duration_filter");
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
        let resp = ListTransactionsResponse::decode(bytes, 0).unwrap();
        assert_eq!(resp.unknown_state_filters, ["Bad"]);
        let t = &resp.transaction_states[0];
        assert_eq!(t.transactional_id, "tx");
        assert_eq!(t.producer_id, 4000);
        assert_eq!(t.transaction_state, "Ongoing");
        assert_eq!(resp.encode_to_vec(0).unwrap(), bytes);
        assert_eq!(resp.encode_to_vec(2).unwrap(), bytes);
    }
}

#[cfg(test)]
mod round_trip {
    use super::*;
    use crate::testing::{round_trip_all_versions, truncations_fail_cleanly};

    #[test]
    fn request_every_version() {
        round_trip_all_versions::<ListTransactionsRequest>(64);
        truncations_fail_cleanly::<ListTransactionsRequest>(8);
    }

    #[test]
    fn response_every_version() {
        round_trip_all_versions::<ListTransactionsResponse>(64);
        truncations_fail_cleanly::<ListTransactionsResponse>(8);
    }
}
