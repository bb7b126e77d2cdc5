//! # kafka-proto
//!
//! A hand-written, sans-IO codec of the Apache Kafka wire protocol: the APIs a
//! transactional producer needs, and those to verify, recover and administer.
//! No tokio and no IO: bytes in, typed messages out, and back.
//!
//! - [`primitives`]: bounded readers (nom parsers over byte slices) and `BufMut` writers.
//! - [`RequestHeader`], [`ResponseHeader`]: the headers, and which version each API
//!   uses ([`request_header_version`]).
//! - [`frame`]: the `int32` length-prefixed frame codec with a maximum frame size.
//! - [`messages`]: one module per message, each with its [`ApiKey`] and version range.
//! - [`record`]: RecordBatch v2 with CRC-32C, control records and compression.
//! - [`ErrorCode`]: every Kafka error code with its retriable flag and handling.
//! - [`topic`]: topic-name validation as the broker does it.
//!
//! ```
//! use kafka_proto::{
//!     Message,
//!     messages::{ApiVersionsRequest, ApiVersionsResponse},
//! };
//! let req = ApiVersionsRequest {
//!     client_software_name: "kafka-eos".into(),
//!     client_software_version: "0.1".into(),
//!     ..Default::default()
//! };
//! let bytes = req.encode_to_vec(3).unwrap();
//! assert_eq!(ApiVersionsRequest::decode(&bytes, 3).unwrap(), req);
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub(crate) mod describe;

// The public interface is:
mod api_key;
pub use api_key::ApiKey;
mod error;
pub use error::{DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind};
mod error_code;
pub use error_code::{ErrorCode, TxnHandling};
mod header;
pub use header::{RequestHeader, ResponseHeader, request_header_version, response_header_version};
// Namespaces: frames, one module per message, the primitive types, record
// batches, topic names; the proptest strategies under the `arbitrary` feature.
pub mod frame;
pub mod messages;
pub mod primitives;
pub mod record;
#[cfg(any(test, feature = "arbitrary"))]
pub mod testing;
pub mod topic;

use bytes::BufMut;
use primitives::Reader;

/// An inclusive range of API versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VersionRange {
    /// Lowest supported version.
    pub min: i16,
    /// Highest supported version.
    pub max: i16,
}

impl VersionRange {
    /// `min..=max`.
    ///
    /// ```
    /// use kafka_proto::{Message, VersionRange, messages::ProduceRequest};
    /// // The versions both sides speak: a broker's advertised range, narrowed
    /// // to the ones this crate implements.
    /// let broker = VersionRange::new(0, 11);
    /// let ours = ProduceRequest::VERSIONS;
    /// let common = VersionRange::new(broker.min.max(ours.min), broker.max.min(ours.max));
    /// assert!(common.contains(11) && !common.contains(12));
    /// ```
    pub const fn new(min: i16, max: i16) -> Self {
        Self { min, max }
    }

    /// True when `v` is inside the range.
    pub const fn contains(&self, v: i16) -> bool {
        v >= self.min && v <= self.max
    }

    /// Every version in the range.
    pub fn iter(&self) -> impl Iterator<Item = i16> + use<> {
        self.min..=self.max
    }
}

/// A Kafka request or response body. Each message type knows its API key, the
/// versions this crate implements, and the first flexible version.
///
/// Encoding a field that holds a non-default value in a version that cannot carry
/// it is an [`EncodeError`]; decoding rejects trailing bytes.
///
/// ```
/// use kafka_proto::{ApiKey, Message, messages::EndTxnRequest};
/// assert_eq!(EndTxnRequest::API_KEY, ApiKey::EndTxn);
/// let req = EndTxnRequest {
///     transactional_id: "orders-0".into(),
///     committed: true,
///     ..Default::default()
/// };
/// let v = EndTxnRequest::VERSIONS.max;
/// assert_eq!(
///     EndTxnRequest::decode(&req.encode_to_vec(v).unwrap(), v).unwrap(),
///     req
/// );
/// ```
pub trait Message: Sized + Clone + PartialEq + std::fmt::Debug + Default {
    /// The API this message belongs to.
    const API_KEY: ApiKey;
    /// Versions implemented, from the KIP-896 minimum to the Kafka 4.4 maximum.
    const VERSIONS: VersionRange;
    /// The first flexible (compact, tagged) version; `i16::MAX` if none.
    const FLEXIBLE_MIN: i16;

    /// Writes the body (no header) at `version`, which is already range-checked.
    fn encode_body<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError>;

    /// Reads the body (no header) at `version`, which is already range-checked.
    fn decode_body(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError>;

    /// The number of bytes [`encode_body`](Message::encode_body) writes at
    /// `version` (which is already range-checked), without encoding.
    fn body_size(&self, version: i16) -> usize {
        let mut v = Vec::new();
        let _ = self.encode_body(&mut v, version);
        v.len()
    }

    /// True when `version` uses the flexible encoding.
    fn is_flexible(version: i16) -> bool {
        version >= Self::FLEXIBLE_MIN
    }

    /// Checks the version and writes the body.
    fn encode<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        if !Self::VERSIONS.contains(version) {
            return Err(
                EncodeError::new("<version>", EncodeErrorKind::UnsupportedVersion)
                    .in_api(Self::API_KEY, version),
            );
        }
        self.encode_body(buf, version)
            .map_err(|e| e.in_api(Self::API_KEY, version))
    }

    /// Encodes into a fresh vector.
    fn encode_to_vec(&self, version: i16) -> Result<Vec<u8>, EncodeError> {
        let mut v = Vec::new();
        self.encode(&mut v, version)?;
        Ok(v)
    }

    /// Decodes a complete body: every byte must belong to the message.
    fn decode(bytes: &[u8], version: i16) -> Result<Self, DecodeError> {
        let mut r = Reader::new(bytes);
        let m = Self::read(&mut r, version)?;
        r.finish().map_err(|e| e.in_api(Self::API_KEY, version))?;
        Ok(m)
    }

    /// Checks the version and reads a body from `r`, leaving what follows.
    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        if !Self::VERSIONS.contains(version) {
            return Err(
                DecodeError::new("<version>", DecodeErrorKind::UnsupportedVersion)
                    .in_api(Self::API_KEY, version),
            );
        }
        Self::decode_body(r, version).map_err(|e| e.in_api(Self::API_KEY, version))
    }
}

/// A request message, tied to its response type.
///
/// ```
/// use kafka_proto::{
///     Message, Request,
///     messages::{ApiVersionsRequest, ApiVersionsResponse},
/// };
/// fn response_key<R: Request>() -> kafka_proto::ApiKey {
///     <R::Response as Message>::API_KEY
/// }
/// assert_eq!(
///     response_key::<ApiVersionsRequest>(),
///     ApiVersionsResponse::API_KEY
/// );
/// ```
pub trait Request: Message {
    /// The response this request receives.
    type Response: Response;
}

/// A response message.
///
/// ```
/// use kafka_proto::{Response, messages::MetadataResponse};
/// fn is_response<R: Response>() {}
/// is_response::<MetadataResponse>();
/// ```
pub trait Response: Message {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::{ApiVersionsRequest, EndTxnRequest, FindCoordinatorRequest};

    #[test]
    fn version_range_is_inclusive_at_both_ends() {
        let r = VersionRange::new(3, 5);
        assert!(r.contains(3) && r.contains(5));
        assert!(!r.contains(2) && !r.contains(6));
        assert_eq!(r.iter().collect::<Vec<_>>(), [3, 4, 5]);
    }

    #[test]
    fn flexible_encoding_starts_at_flexible_min() {
        assert!(!ApiVersionsRequest::is_flexible(2));
        assert!(ApiVersionsRequest::is_flexible(3));
    }

    #[test]
    fn body_size_equals_encoded_length() {
        let req = EndTxnRequest {
            transactional_id: "t".into(),
            ..Default::default()
        };
        assert_eq!(req.body_size(3), req.encode_to_vec(3).unwrap().len());
        assert!(
            !FindCoordinatorRequest::default()
                .encode_to_vec(4)
                .unwrap()
                .is_empty()
        );
        let mut v0 = Vec::new();
        ApiVersionsRequest::default()
            .encode_body(&mut v0, 0)
            .unwrap();
        assert!(v0.is_empty(), "ApiVersions v0 has no fields");
        assert_eq!(
            ApiVersionsRequest::decode_body(&mut Reader::new(&[]), 0).unwrap(),
            ApiVersionsRequest::default()
        );
    }

    #[test]
    fn encode_refuses_a_version_outside_the_range() {
        let mut buf = bytes::BytesMut::new();
        ApiVersionsRequest::default().encode(&mut buf, 3).unwrap();
        let err = ApiVersionsRequest::default()
            .encode(&mut buf, 99)
            .unwrap_err();
        assert_eq!(err.kind, EncodeErrorKind::UnsupportedVersion);
    }

    #[test]
    fn decode_refuses_trailing_bytes() {
        let err = ApiVersionsRequest::decode(&[0], 0).unwrap_err();
        assert_eq!(err.kind, DecodeErrorKind::TrailingBytes(1));
    }

    #[test]
    fn read_leaves_the_bytes_after_the_body() {
        let mut bytes = ApiVersionsRequest::default().encode_to_vec(3).unwrap();
        bytes.push(0xff);
        let mut r = Reader::new(&bytes);
        ApiVersionsRequest::read(&mut r, 3).unwrap();
        assert_eq!(r.rest(), [0xff]);
    }
}
