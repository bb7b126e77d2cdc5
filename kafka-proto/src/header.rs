//! Request and response headers, and which header version each (API, version) uses.

use crate::api_key::ApiKey;
use crate::error::{DecodeError, DecodeErrorKind, EncodeError};
use crate::primitives::{Reader, TaggedFields, put_nullable_string, put_unknown_tagged_fields};
use bytes::BufMut;

/// A request header (v1 or v2).
///
/// Request header v1 is key, version, correlation id and an `int16`-length client
/// id; v2 adds tagged fields (the client id stays non-compact). Response header
/// v0 is the correlation id; v1 adds tagged fields. Flexible API versions use
/// request v2 / response v1 — except ApiVersions, whose response header is always
/// v0 (KIP-511) so that a client can read it before knowing what the broker speaks.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RequestHeader {
    /// The API key of this request.
    pub request_api_key: i16,
    /// The API version of this request.
    pub request_api_version: i16,
    /// The correlation id the response will echo.
    pub correlation_id: i32,
    /// The client id.
    pub client_id: Option<String>,
    /// Unknown tagged fields (v2).
    pub unknown_tagged_fields: TaggedFields,
}

impl RequestHeader {
    /// A header for `api` at `version`. Its own version follows from whether
    /// that API version is flexible ([`request_header_version`]); the frame
    /// writer in [`crate::frame`] does this for every request.
    ///
    /// ```
    /// use kafka_proto::request_header_version;
    /// use kafka_proto::{ApiKey, Message, RequestHeader, messages::MetadataRequest};
    /// let header = RequestHeader::new(ApiKey::Metadata, 12, 7, Some("orders-app"));
    /// let mut frame = Vec::new();
    /// header.encode(&mut frame, request_header_version(MetadataRequest::is_flexible(12)))?;
    /// MetadataRequest::default().encode(&mut frame, 12)?;
    /// # Ok::<(), kafka_proto::EncodeError>(())
    /// ```
    pub fn new(api: ApiKey, version: i16, correlation_id: i32, client_id: Option<&str>) -> Self {
        Self {
            request_api_key: api.code(),
            request_api_version: version,
            correlation_id,
            client_id: client_id.map(str::to_owned),
            unknown_tagged_fields: Vec::new(),
        }
    }

    /// Writes the header in `header_version` (1 or 2).
    pub fn encode(&self, buf: &mut impl BufMut, header_version: i16) -> Result<(), EncodeError> {
        buf.put_i16(self.request_api_key);
        buf.put_i16(self.request_api_version);
        buf.put_i32(self.correlation_id);
        put_nullable_string(buf, "client_id", self.client_id.as_deref(), false)?;
        put_header_tags(buf, &self.unknown_tagged_fields, header_version >= 2)
    }

    /// Reads a header in `header_version` (1 or 2).
    pub fn decode(r: &mut Reader<'_>, header_version: i16) -> Result<Self, DecodeError> {
        if !(1..=2).contains(&header_version) {
            return Err(DecodeError::new(
                "header",
                DecodeErrorKind::UnsupportedVersion,
            ));
        }
        let request_api_key = r.i16("request_api_key")?;
        let request_api_version = r.i16("request_api_version")?;
        let correlation_id = r.i32("correlation_id")?;
        let client_id = r.nullable_string("client_id", false)?;
        let unknown_tagged_fields = read_header_tags(r, header_version >= 2)?;
        Ok(Self {
            request_api_key,
            request_api_version,
            correlation_id,
            client_id,
            unknown_tagged_fields,
        })
    }
}

/// A response header (v0 or v1).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResponseHeader {
    /// The correlation id of the request this answers.
    pub correlation_id: i32,
    /// Unknown tagged fields (v1).
    pub unknown_tagged_fields: TaggedFields,
}

impl ResponseHeader {
    /// Writes the header in `header_version` (0 or 1).
    pub fn encode(&self, buf: &mut impl BufMut, header_version: i16) -> Result<(), EncodeError> {
        buf.put_i32(self.correlation_id);
        put_header_tags(buf, &self.unknown_tagged_fields, header_version >= 1)
    }

    /// Reads a header in `header_version` (0 or 1).
    pub fn decode(r: &mut Reader<'_>, header_version: i16) -> Result<Self, DecodeError> {
        let correlation_id = r.i32("correlation_id")?;
        let unknown_tagged_fields = read_header_tags(r, header_version >= 1)?;
        Ok(Self {
            correlation_id,
            unknown_tagged_fields,
        })
    }
}

/// Writes a header's tagged fields when its version is `flexible`; an older
/// header cannot carry any.
fn put_header_tags(
    buf: &mut impl BufMut,
    tags: &TaggedFields,
    flexible: bool,
) -> Result<(), EncodeError> {
    if flexible {
        put_unknown_tagged_fields(buf, tags);
    } else if !tags.is_empty() {
        return Err(EncodeError::not_in_version("_tagged_fields"));
    }
    Ok(())
}

/// Reads a header's tagged fields when its version is `flexible`; an older
/// header has none.
fn read_header_tags(r: &mut Reader<'_>, flexible: bool) -> Result<TaggedFields, DecodeError> {
    if flexible {
        r.unknown_tagged_fields("_tagged_fields")
    } else {
        Ok(Vec::new())
    }
}

/// The request header version: 2 for a flexible API version, else 1.
pub fn request_header_version(flexible: bool) -> i16 {
    if flexible { 2 } else { 1 }
}

/// The response header version for `api` at a version that is `flexible` or not.
pub fn response_header_version(api: ApiKey, flexible: bool) -> i16 {
    if flexible && api != ApiKey::ApiVersions {
        1
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;
    use crate::messages::MetadataRequest;

    #[test]
    fn request_header_v2_round_trips() {
        let h = RequestHeader::new(ApiKey::Metadata, 12, 7, Some("app"));
        let mut buf = Vec::new();
        h.encode(&mut buf, 2).unwrap();
        assert_eq!(RequestHeader::decode(&mut Reader::new(&buf), 2).unwrap(), h);
    }

    #[test]
    fn new_takes_the_api_code_and_client_id() {
        let h = RequestHeader::new(ApiKey::InitProducerId, 5, 1, Some("producer-1"));
        assert_eq!(
            (h.request_api_key, h.client_id.as_deref()),
            (22, Some("producer-1"))
        );
    }

    #[test]
    fn request_header_v1_null_client_id_bytes() {
        let mut v1 = Vec::new();
        RequestHeader::new(ApiKey::Produce, 8, 1, None)
            .encode(&mut v1, 1)
            .unwrap();
        assert_eq!(v1, [0, 0, 0, 8, 0, 0, 0, 1, 0xff, 0xff]);
    }

    #[test]
    fn request_header_v2_keeps_a_non_compact_client_id() {
        let bytes = [0, 3, 0, 12, 0, 0, 0, 9, 0, 1, b'c', 0];
        let h = RequestHeader::decode(&mut Reader::new(&bytes), 2).unwrap();
        assert_eq!(
            (
                h.request_api_version,
                h.correlation_id,
                h.client_id.as_deref()
            ),
            (12, 9, Some("c"))
        );
    }

    #[test]
    fn response_header_v1_round_trips() {
        let h = ResponseHeader {
            correlation_id: 7,
            ..Default::default()
        };
        let mut buf = Vec::new();
        h.encode(&mut buf, 1).unwrap();
        assert_eq!(
            ResponseHeader::decode(&mut Reader::new(&buf), 1).unwrap(),
            h
        );
    }

    #[test]
    fn response_header_v0_is_the_correlation_id_only() {
        let mut v0 = Vec::new();
        ResponseHeader {
            correlation_id: 1,
            ..Default::default()
        }
        .encode(&mut v0, 0)
        .unwrap();
        assert_eq!(v0, [0, 0, 0, 1]);
    }

    #[test]
    fn response_header_v1_reads_the_tag_section() {
        let h = ResponseHeader::decode(&mut Reader::new(&[0, 0, 0, 5, 0]), 1).unwrap();
        assert_eq!(h.correlation_id, 5);
    }

    #[test]
    fn flexible_requests_use_header_v2() {
        assert_eq!(request_header_version(MetadataRequest::is_flexible(12)), 2);
        assert_eq!(request_header_version(MetadataRequest::is_flexible(8)), 1);
    }

    #[test]
    fn api_versions_response_header_is_always_v0() {
        assert_eq!(response_header_version(ApiKey::ApiVersions, true), 0);
        assert_eq!(response_header_version(ApiKey::Metadata, true), 1);
        assert_eq!(response_header_version(ApiKey::Metadata, false), 0);
    }
}
