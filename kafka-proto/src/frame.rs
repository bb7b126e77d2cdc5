//! The `int32` length-prefixed frame that carries every request and response, and
//! helpers to build a request frame and split a response frame.
//!
//! [`FrameDecoder`] rejects a frame whose announced size exceeds the configured
//! maximum *before* buffering or allocating for it; it reserves nothing for the
//! rest of an incomplete frame (a reader grows its buffer by at most
//! [`READ_CHUNK`] per read).
//!
//! A request's way from one side of a connection to the other:
//! 1. the client writes it with [`encode_request_frame`] (length, header, body);
//! 2. the server splits the byte stream with [`FrameDecoder::decode`];
//! 3. it reads the API, version and correlation id with [`peek_request_header`]
//!    to route the request (or answer one it cannot parse);
//! 4. it decodes the body with [`decode_request_frame`], and answers with
//!    [`encode_response_frame`];
//! 5. the client routes the answer by [`peek_correlation_id`] and decodes it
//!    with [`decode_response_frame`] (or [`decode_response_frame_bytes`], whose
//!    bytes fields are slices of the frame, not copies).
//!
//! ```
//! use bytes::BytesMut;
//! use kafka_proto::ApiKey;
//! use kafka_proto::frame::*;
//! use kafka_proto::messages::{MetadataRequest, MetadataResponse};
//!
//! let request = encode_request_frame(&MetadataRequest::all_topics(), 12, 3, Some("eos")).unwrap();
//! let mut received = BytesMut::from(&request[..]);
//! received.extend_from_slice(&[0, 0]); // the start of the next frame
//! let mut frames = FrameDecoder::new(DEFAULT_MAX_FRAME_SIZE);
//! let body = frames.decode(&mut received).unwrap().unwrap();
//! assert_eq!(frames.decode(&mut received).unwrap(), None, "needs more bytes");
//!
//! let start = peek_request_header(&body).unwrap();
//! assert_eq!((start.api_key, start.api_version), (ApiKey::Metadata, 12));
//! let (header, req) = decode_request_frame::<MetadataRequest>(&body).unwrap();
//! assert_eq!(req, MetadataRequest::all_topics());
//!
//! let response = encode_response_frame(&MetadataResponse::default(), 12, header.correlation_id).unwrap();
//! assert_eq!(peek_correlation_id(&response[4..]).unwrap(), 3);
//! let (_, resp) = decode_response_frame::<MetadataResponse>(&response[4..], 12).unwrap();
//! assert_eq!(resp, MetadataResponse::default());
//! ```

use crate::error::{DecodeError, DecodeErrorKind, EncodeError};
use crate::header::{request_header_version, response_header_version};
use crate::primitives::Reader;
use crate::{Message, RequestHeader, ResponseHeader};
use bytes::{Buf, BufMut, Bytes, BytesMut};

/// How much a reader should reserve ahead of the bytes received (per read);
/// [`FrameDecoder::decode`] itself reserves nothing for an incomplete frame.
pub const READ_CHUNK: usize = 64 * 1024;

/// Default maximum frame size: 100 MiB, Kafka's `socket.request.max.bytes`.
pub const DEFAULT_MAX_FRAME_SIZE: usize = 100 * 1024 * 1024;

/// Splits a byte stream into frames.
#[derive(Debug, Clone)]
pub struct FrameDecoder {
    max_frame_size: usize,
}

impl Default for FrameDecoder {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_FRAME_SIZE)
    }
}

impl FrameDecoder {
    /// A decoder that refuses frames larger than `max_frame_size` bytes
    /// (Kafka's `socket.request.max.bytes` on a broker; [`Default`] is
    /// [`DEFAULT_MAX_FRAME_SIZE`]).
    ///
    /// ```
    /// use bytes::BytesMut;
    /// use kafka_proto::frame::FrameDecoder;
    /// let mut dec = FrameDecoder::new(16);
    /// let mut buf = BytesMut::from(&[0u8, 0, 1, 0][..]); // announces 256 bytes
    /// assert!(dec.decode(&mut buf).is_err(), "refused before its body arrives");
    /// ```
    pub fn new(max_frame_size: usize) -> Self {
        Self { max_frame_size }
    }

    /// The configured maximum.
    pub fn max_frame_size(&self) -> usize {
        self.max_frame_size
    }

    /// Takes one complete frame body (without its length) off the front of
    /// `buf`, `Ok(None)` if more bytes are needed. An oversized or negative
    /// length fails at once, before any allocation.
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Bytes>, DecodeError> {
        if buf.len() < 4 {
            return Ok(None);
        }
        let size = i32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]);
        if size < 0 || size as usize > self.max_frame_size {
            return Err(DecodeError::new(
                "frame_length",
                DecodeErrorKind::FrameTooLarge {
                    size: i64::from(size),
                    max: self.max_frame_size,
                },
            ));
        }
        let size = size as usize;
        if buf.len() < 4 + size {
            // Memory follows the bytes that arrive, not the length a peer
            // announces: nothing is reserved for the rest of the frame (the
            // reader grows its buffer by at most `READ_CHUNK` per read).
            return Ok(None);
        }
        buf.advance(4);
        Ok(Some(buf.split_to(size).freeze()))
    }
}

/// Writes `header` and `body` as one frame, patching the length afterwards.
fn write_frame(
    out: &mut BytesMut,
    write: impl FnOnce(&mut BytesMut) -> Result<(), EncodeError>,
) -> Result<(), EncodeError> {
    let start = out.len();
    out.put_i32(0);
    write(out)?;
    let len = out.len() - start - 4;
    let len = i32::try_from(len)
        .map_err(|_| EncodeError::new("frame_length", crate::EncodeErrorKind::TooLong(len)))?;
    out[start..start + 4].copy_from_slice(&len.to_be_bytes());
    Ok(())
}

/// Encodes a complete request frame: length, header (v1/v2 as the version
/// requires) and body.
pub fn encode_request_frame<M: Message>(
    msg: &M,
    version: i16,
    correlation_id: i32,
    client_id: Option<&str>,
) -> Result<BytesMut, EncodeError> {
    let mut out = BytesMut::with_capacity(64);
    write_frame(&mut out, |b| {
        let header = RequestHeader::new(M::API_KEY, version, correlation_id, client_id);
        header
            .encode(b, request_header_version(M::is_flexible(version)))
            .map_err(|e| e.in_api(M::API_KEY, version))?;
        msg.encode(b, version)
    })?;
    Ok(out)
}

/// Encodes a complete response frame (used by test peers and fixtures).
pub fn encode_response_frame<M: Message>(
    msg: &M,
    version: i16,
    correlation_id: i32,
) -> Result<BytesMut, EncodeError> {
    let mut out = BytesMut::with_capacity(64);
    write_frame(&mut out, |b| {
        let header = ResponseHeader {
            correlation_id,
            unknown_tagged_fields: Vec::new(),
        };
        header.encode(
            b,
            response_header_version(M::API_KEY, M::is_flexible(version)),
        )?;
        msg.encode(b, version)
    })?;
    Ok(out)
}

/// Decodes a response frame body (without the length): header then message.
/// Trailing bytes are an error.
pub fn decode_response_frame<M: Message>(
    body: &[u8],
    version: i16,
) -> Result<(ResponseHeader, M), DecodeError> {
    read_response(Reader::new(body), version)
}

/// [`decode_response_frame`] over a shared buffer: the response's bytes
/// fields (a Fetch response's record batches) are slices of `body`, not
/// copies.
pub fn decode_response_frame_bytes<M: Message>(
    body: &Bytes,
    version: i16,
) -> Result<(ResponseHeader, M), DecodeError> {
    read_response(Reader::from_bytes(body), version)
}

fn read_response<M: Message>(
    mut r: Reader<'_>,
    version: i16,
) -> Result<(ResponseHeader, M), DecodeError> {
    let header = ResponseHeader::decode(
        &mut r,
        response_header_version(M::API_KEY, M::is_flexible(version)),
    )
    .map_err(|e| e.in_api(M::API_KEY, version))?;
    let msg = M::read(&mut r, version)?;
    r.finish().map_err(|e| e.in_api(M::API_KEY, version))?;
    Ok((header, msg))
}

/// Reads only the correlation id of a response frame body, to route it before
/// the version is known.
pub fn peek_correlation_id(body: &[u8]) -> Result<i32, DecodeError> {
    Reader::new(body).i32("correlation_id")
}

/// The start of every request header, read before the API is known: enough
/// to route a request (or to answer one the server cannot parse with the
/// right correlation id).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestHeaderStart {
    /// `request_api_key`: which API the request is for.
    pub api_key: crate::ApiKey,
    /// `request_api_version`: the version its body is written in.
    pub api_version: i16,
    /// `correlation_id`: echoed in the response.
    pub correlation_id: i32,
}

/// Reads the API key, version and correlation id at the start of a request
/// frame body (without the length), whatever the API and header version;
/// a body shorter than those 8 bytes is a [`DecodeError`] naming the field
/// cut short.
pub fn peek_request_header(body: &[u8]) -> Result<RequestHeaderStart, DecodeError> {
    let mut r = Reader::new(body);
    Ok(RequestHeaderStart {
        api_key: crate::ApiKey::from(r.i16("request_api_key")?),
        api_version: r.i16("request_api_version")?,
        correlation_id: r.i32("correlation_id")?,
    })
}

/// Decodes a request frame body (without the length): header then message.
pub fn decode_request_frame<M: Message>(body: &[u8]) -> Result<(RequestHeader, M), DecodeError> {
    let mut r = Reader::new(body);
    // Peek version to choose the header version.
    let mut peek = r.clone();
    let key = peek.i16("request_api_key")?;
    let version = peek.i16("request_api_version")?;
    if key != M::API_KEY.code() {
        return Err(DecodeError::new(
            "request_api_key",
            DecodeErrorKind::InvalidValue(format!(
                "frame is for API key {key}, expected {:?}",
                M::API_KEY
            )),
        )
        .in_api(M::API_KEY, version));
    }
    let header = RequestHeader::decode(&mut r, request_header_version(M::is_flexible(version)))
        .map_err(|e| e.in_api(M::API_KEY, version))?;
    let msg = M::read(&mut r, version)?;
    r.finish().map_err(|e| e.in_api(M::API_KEY, version))?;
    Ok((header, msg))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Invariant: the buffer grows with the bytes received, in chunks of at
    /// most `READ_CHUNK`, whatever length the header announces.
    #[test]
    fn announced_length_reserves_memory_only_as_bytes_arrive() {
        let mut dec = FrameDecoder::new(DEFAULT_MAX_FRAME_SIZE);
        let mut buf = BytesMut::from(&(100_000_000i32).to_be_bytes()[..]);
        let mut received = 0usize;
        for _ in 0..20 {
            assert_eq!(dec.decode(&mut buf).unwrap(), None);
            assert!(
                buf.capacity() <= 2 * (4 + received) + 64,
                "capacity {} after {received} bytes",
                buf.capacity()
            );
            buf.extend_from_slice(&[0u8; 1000]);
            received += 1000;
        }
    }

    #[test]
    fn oversized_frame_is_rejected_before_buffering() {
        let mut dec = FrameDecoder::new(16);
        let mut buf = BytesMut::from(&[0x7f, 0xff, 0xff, 0xff][..]);
        let cap_before = buf.capacity();
        let err = dec.decode(&mut buf).unwrap_err();
        assert!(matches!(err.kind, DecodeErrorKind::FrameTooLarge { .. }));
        assert_eq!(buf.capacity(), cap_before);
    }

    #[test]
    fn negative_frame_length_is_rejected() {
        let mut dec = FrameDecoder::new(16);
        let mut buf = BytesMut::from(&[0xff, 0xff, 0xff, 0xfe][..]);
        assert!(dec.decode(&mut buf).is_err());
    }

    #[test]
    fn request_frame_for_another_api_is_rejected() {
        use crate::messages::{ApiVersionsRequest, MetadataRequest};
        let frame = encode_request_frame(&ApiVersionsRequest::default(), 3, 9, None).unwrap();
        let err = decode_request_frame::<MetadataRequest>(&frame[4..]).unwrap_err();
        assert_eq!(err.field, "request_api_key");
        let (h, _) = decode_request_frame::<ApiVersionsRequest>(&frame[4..]).unwrap();
        assert_eq!(h.correlation_id, 9);
    }

    /// Invariant: every request frame's header start reads back as
    /// written, whatever the API and header version (flexible or not).
    #[test]
    fn request_header_start_reads_back_for_old_and_flexible_headers() {
        use crate::messages::{ApiVersionsRequest, ProduceRequest};
        let old = encode_request_frame(&ProduceRequest::default(), 3, 41, Some("c")).unwrap();
        let flexible = encode_request_frame(&ApiVersionsRequest::default(), 4, -7, None).unwrap();
        assert_eq!(
            peek_request_header(&old[4..]).unwrap(),
            RequestHeaderStart {
                api_key: crate::ApiKey::Produce,
                api_version: 3,
                correlation_id: 41
            }
        );
        assert_eq!(
            peek_request_header(&flexible[4..]).unwrap(),
            RequestHeaderStart {
                api_key: crate::ApiKey::ApiVersions,
                api_version: 4,
                correlation_id: -7
            }
        );
    }

    /// Invariant: a body shorter than the 8 bytes of key, version and
    /// correlation id is a typed error naming the missing field, never a
    /// panic; an unknown key is kept, not refused.
    #[test]
    fn short_request_header_is_a_typed_error() {
        let full = [0x03, 0xe7, 0, 1, 0, 0, 0, 9];
        for len in 0..full.len() {
            let err = peek_request_header(&full[..len]).unwrap_err();
            let field = match len {
                0..=1 => "request_api_key",
                2..=3 => "request_api_version",
                _ => "correlation_id",
            };
            assert_eq!(err.field, field, "{len} bytes");
        }
        let h = peek_request_header(&full).unwrap();
        assert_eq!(h.api_key, crate::ApiKey::Unknown(999));
        assert_eq!((h.api_version, h.correlation_id), (1, 9));
    }

    #[test]
    fn frames_split_across_reads() {
        let mut dec = FrameDecoder::new(16);
        let mut buf = BytesMut::from(&[0, 0, 0, 3, 1][..]);
        assert_eq!(dec.decode(&mut buf).unwrap(), None);
        buf.extend_from_slice(&[2, 3, 0, 0, 0, 0]);
        assert_eq!(dec.decode(&mut buf).unwrap().unwrap().as_ref(), &[1, 2, 3]);
        assert_eq!(
            dec.decode(&mut buf).unwrap().unwrap().as_ref(),
            &[] as &[u8]
        );
        assert!(buf.is_empty());
    }

    #[test]
    fn default_decoder_allows_kafkas_default_request_size() {
        assert_eq!(
            FrameDecoder::default().max_frame_size(),
            DEFAULT_MAX_FRAME_SIZE
        );
        assert_eq!(FrameDecoder::new(1 << 20).max_frame_size(), 1_048_576);
    }

    /// Invariant: a 90 MB announcement with nothing behind it grows the
    /// buffer by at most one read chunk.
    #[test]
    fn announced_frame_reserves_at_most_one_read_chunk() {
        let mut dec = FrameDecoder::new(100 << 20);
        let mut buf = BytesMut::from(&(90_000_000i32).to_be_bytes()[..]);
        assert_eq!(dec.decode(&mut buf).unwrap(), None);
        assert!(buf.capacity() <= 4 + READ_CHUNK);
    }

    #[test]
    fn request_frame_length_covers_header_and_body() {
        use crate::messages::ApiVersionsRequest;
        // v0 header: key 2, version 2, correlation id 4, client id 2 + 1; empty body.
        let f = encode_request_frame(&ApiVersionsRequest::default(), 0, 1, Some("c")).unwrap();
        assert_eq!(&f[..4], &[0, 0, 0, 11]);
    }

    #[test]
    fn response_frame_round_trips_with_its_correlation_id() {
        use crate::messages::{ApiVersionsResponse, FindCoordinatorResponse};
        let mut buf = encode_response_frame(&ApiVersionsResponse::default(), 3, 42).unwrap();
        let body = FrameDecoder::default().decode(&mut buf).unwrap().unwrap();
        let (header, _) = decode_response_frame::<ApiVersionsResponse>(&body, 3).unwrap();
        assert_eq!(header.correlation_id, 42);
        let resp = FindCoordinatorResponse {
            throttle_time_ms: 5,
            ..Default::default()
        };
        let frame = encode_response_frame(&resp, 4, 7).unwrap();
        assert_eq!(peek_correlation_id(&frame[4..]).unwrap(), 7);
        let (header, back) =
            decode_response_frame::<FindCoordinatorResponse>(&frame[4..], 4).unwrap();
        assert_eq!((header.correlation_id, back), (7, resp));
    }

    /// Invariant: a response decoded from shared bytes holds its records as
    /// a slice of the frame, not a copy.
    #[test]
    fn response_bytes_fields_are_slices_of_the_frame() {
        use crate::messages::{FetchResponse, FetchResponsePartitionData, FetchResponseTopic};
        let resp = FetchResponse {
            responses: vec![FetchResponseTopic {
                topic: "t".into(),
                partitions: vec![FetchResponsePartitionData {
                    records: Some(Bytes::from_static(b"batches")),
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        let body = Bytes::from(encode_response_frame(&resp, 12, 1).unwrap()).slice(4..);
        let (_, back) = decode_response_frame_bytes::<FetchResponse>(&body, 12).unwrap();
        let records = back.responses[0].partitions[0].records.clone().unwrap();
        assert!(body.as_ptr_range().contains(&records.as_ptr()));
    }
}
