//! Decode and encode errors, split by who is at fault.

use crate::api_key::ApiKey;
use std::fmt;

/// Why a decode failed, independent of where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// The input ended before the field was complete.
    #[error("truncated: needed {needed} more bytes, {remaining} remaining")]
    Truncated {
        /// Bytes the field still needed (a lower bound).
        needed: usize,
        /// Bytes that were left.
        remaining: usize,
    },
    /// A length prefix was negative (where null is not allowed) or larger than the input.
    #[error("invalid length {0}")]
    InvalidLength(i64),
    /// A varint ran over its maximum encoded width.
    #[error("varint too long")]
    VarintTooLong,
    /// A string was not valid UTF-8.
    #[error("invalid UTF-8")]
    InvalidUtf8,
    /// A null appeared where the version does not allow one.
    #[error("unexpected null")]
    UnexpectedNull,
    /// Bytes were left after a bounded structure ended.
    #[error("{0} trailing bytes")]
    TrailingBytes(usize),
    /// The API version is outside the range this crate implements.
    #[error("unsupported version")]
    UnsupportedVersion,
    /// Tagged fields were not in strictly ascending tag order.
    #[error("tagged fields out of order (tag {0})")]
    TagOrder(u32),
    /// A value is outside what the protocol allows.
    #[error("invalid value: {0}")]
    InvalidValue(String),
    /// A record batch CRC-32C did not match.
    #[error("CRC mismatch: stored {stored:#010x}, computed {computed:#010x}")]
    CrcMismatch {
        /// The CRC carried by the batch.
        stored: u32,
        /// The CRC computed over the batch bytes.
        computed: u32,
    },
    /// A compression codec is not compiled in or unknown.
    #[error("unsupported compression codec {0}")]
    UnsupportedCompression(u8),
    /// Decompression failed.
    #[error("decompression failed: {0}")]
    Decompression(String),
    /// Decompressed data would exceed the configured bound.
    #[error("decompressed size exceeds limit of {limit} bytes")]
    DecompressedTooLarge {
        /// The configured limit.
        limit: usize,
    },
    /// A frame is larger than the configured maximum.
    #[error("frame of {size} bytes exceeds maximum {max}")]
    FrameTooLarge {
        /// Announced frame size.
        size: i64,
        /// Configured maximum.
        max: usize,
    },
}

/// A failure to decode bytes received from a peer.
///
/// A [`DecodeError`] means the *peer* sent bytes we cannot accept (truncated,
/// over-long, bad CRC, trailing bytes, …). An [`EncodeError`] means *our caller*
/// asked for something the chosen protocol version cannot carry. Both name the
/// API, version and field so that a log line is enough to find the problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct DecodeError {
    /// The API whose message failed, when known.
    pub api: Option<ApiKey>,
    /// The API version, when known.
    pub version: Option<i16>,
    /// The field (dotted path) that failed.
    pub field: &'static str,
    /// What went wrong.
    #[source]
    pub kind: DecodeErrorKind,
}

impl DecodeError {
    /// An error at `field` with no API context yet.
    ///
    /// A reader reports the field; the message's decoder adds the API and
    /// version on the way out ([`in_api`](Self::in_api)), so the log line
    /// names all three:
    ///
    /// ```
    /// use kafka_proto::{ApiKey, DecodeError, DecodeErrorKind};
    /// let e = DecodeError::new("records", DecodeErrorKind::VarintTooLong).in_api(ApiKey::Fetch, 12);
    /// assert_eq!(e.to_string(), "decoding Fetch v12, field `records`: varint too long");
    /// ```
    pub fn new(field: &'static str, kind: DecodeErrorKind) -> Self {
        Self {
            api: None,
            version: None,
            field,
            kind,
        }
    }

    /// Adds the API and version if they are not set yet.
    pub fn in_api(mut self, api: ApiKey, version: i16) -> Self {
        self.api.get_or_insert(api);
        self.version.get_or_insert(version);
        self
    }
}

/// Writes "`doing` API vN, field `field`: kind", naming the API and the
/// version as far as they are known.
fn write_failure(
    f: &mut fmt::Formatter<'_>,
    doing: &str,
    api: Option<ApiKey>,
    version: Option<i16>,
    field: &str,
    kind: &dyn fmt::Display,
) -> fmt::Result {
    match (api, version) {
        (Some(api), Some(v)) => write!(f, "{doing} {api:?} v{v}")?,
        (Some(api), None) => write!(f, "{doing} {api:?}")?,
        _ => write!(f, "{doing}")?,
    }
    write!(f, ", field `{field}`: {kind}")
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_failure(
            f,
            "decoding",
            self.api,
            self.version,
            self.field,
            &self.kind,
        )
    }
}

/// Why an encode failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EncodeErrorKind {
    /// The version is outside the message's supported range.
    #[error("unsupported version")]
    UnsupportedVersion,
    /// The field holds a non-default value that this version cannot carry.
    #[error("field has a non-default value that this version cannot carry")]
    FieldNotInVersion,
    /// The field is null but this version does not allow null.
    #[error("null is not allowed in this version")]
    NullNotAllowed,
    /// A string, byte array or array is longer than its length prefix allows.
    #[error("length {0} too large for the field's length prefix")]
    TooLong(usize),
    /// A value is outside what the protocol allows.
    #[error("invalid value: {0}")]
    InvalidValue(String),
}

/// A request to encode something the chosen protocol version cannot express.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct EncodeError {
    /// The API being encoded, when known.
    pub api: Option<ApiKey>,
    /// The version being encoded, when known.
    pub version: Option<i16>,
    /// The offending field.
    pub field: &'static str,
    /// What went wrong.
    #[source]
    pub kind: EncodeErrorKind,
}

impl EncodeError {
    /// An error at `field` with no API context yet.
    ///
    /// A writer reports the field; the message's encoder adds the API and
    /// version on the way out ([`in_api`](Self::in_api)):
    ///
    /// ```
    /// use kafka_proto::{ApiKey, EncodeError, EncodeErrorKind};
    /// let e = EncodeError::new("topic", EncodeErrorKind::TooLong(40_000)).in_api(ApiKey::Metadata, 12);
    /// assert!(e.to_string().starts_with("encoding Metadata v12, field `topic`: length 40000 too large"));
    /// ```
    pub fn new(field: &'static str, kind: EncodeErrorKind) -> Self {
        Self {
            api: None,
            version: None,
            field,
            kind,
        }
    }

    /// Shorthand for [`EncodeErrorKind::FieldNotInVersion`].
    pub fn not_in_version(field: &'static str) -> Self {
        Self::new(field, EncodeErrorKind::FieldNotInVersion)
    }

    /// Adds the API and version if they are not set yet.
    pub fn in_api(mut self, api: ApiKey, version: i16) -> Self {
        self.api.get_or_insert(api);
        self.version.get_or_insert(version);
        self
    }
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_failure(
            f,
            "encoding",
            self.api,
            self.version,
            self.field,
            &self.kind,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;
    use crate::messages::{ApiVersionsRequest, ApiVersionsResponse, MetadataRequest};

    #[test]
    fn short_input_is_truncated() {
        let err = MetadataRequest::decode(&[0, 0], 12).unwrap_err();
        assert!(matches!(err.kind, DecodeErrorKind::Truncated { .. }));
    }

    #[test]
    fn decode_error_names_the_api() {
        let err = ApiVersionsResponse::decode(&[0, 0], 3).unwrap_err();
        assert!(err.to_string().contains("ApiVersions"), "{err}");
    }

    #[test]
    fn decode_error_without_context_says_decoding_and_the_field() {
        let e = DecodeError::new("records", DecodeErrorKind::VarintTooLong);
        assert_eq!(e.to_string(), "decoding, field `records`: varint too long");
    }

    #[test]
    fn decode_error_keeps_the_first_api_context() {
        let e = DecodeError::new("error_code", DecodeErrorKind::InvalidUtf8)
            .in_api(ApiKey::Produce, 9)
            .in_api(ApiKey::Fetch, 12);
        assert_eq!((e.api, e.version), (Some(ApiKey::Produce), Some(9)));
    }

    #[test]
    fn version_out_of_range_is_unsupported() {
        let err = ApiVersionsRequest::default().encode_to_vec(6).unwrap_err();
        assert_eq!(err.kind, EncodeErrorKind::UnsupportedVersion);
    }

    #[test]
    fn non_default_field_missing_from_the_version_is_refused() {
        let req = ApiVersionsRequest {
            client_software_name: "x".into(),
            ..Default::default()
        };
        let err = req.encode_to_vec(0).unwrap_err();
        assert_eq!(err.kind, EncodeErrorKind::FieldNotInVersion);
    }

    #[test]
    fn encode_error_message_names_the_length() {
        let e = EncodeError::new("topic", EncodeErrorKind::TooLong(40_000));
        assert!(e.to_string().contains("length 40000 too large"), "{e}");
    }

    #[test]
    fn not_in_version_is_field_not_in_version() {
        let e = EncodeError::not_in_version("cluster_id");
        assert_eq!(e.kind, EncodeErrorKind::FieldNotInVersion);
    }

    #[test]
    fn encode_error_with_context_names_api_version_and_field() {
        let e = EncodeError::not_in_version("node_id").in_api(ApiKey::ApiVersions, 4);
        assert!(
            e.to_string()
                .starts_with("encoding ApiVersions v4, field `node_id`:"),
            "{e}"
        );
    }
}
