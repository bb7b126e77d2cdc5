//! Shared code of the kafka-proto fuzz targets and of the seed-corpus generator.
//!
//! Message inputs (`request_decoders`, `response_decoders`) are laid out as
//!
//! ```text
//! byte 0   the API key (every key kafka-proto implements is < 256)
//! byte 1   bit 7 set: frame mode; bits 0–6: the API version
//! rest     body mode: a message body at that version, decoded with `Message::decode`
//!          frame mode: a frame body (header + message, no length), decoded with
//!          `decode_request_frame` / `decode_response_frame`
//! ```
//!
//! Choosing by key and version (not by an index into the list) keeps the corpus
//! meaningful when messages are added to `kafka_proto::for_each_message!`.

pub mod targets;

use kafka_proto::frame::{
    decode_request_frame, decode_response_frame, decode_response_frame_bytes,
};
use kafka_proto::{ApiKey, Message, RequestHeader, ResponseHeader};
use kafka_proto::{request_header_version, response_header_version};

/// Frame mode flag in byte 1 of a message input.
pub const FRAME_MODE: u8 = 0x80;

/// One fuzzable API: its key and the entry points for its two message types.
#[derive(Debug, Clone, Copy)]
pub struct Api {
    /// The API key.
    pub key: ApiKey,
    /// Fuzzes the request type with `(mode_and_version, rest)`.
    pub request: fn(u8, &[u8]),
    /// Fuzzes the response type with `(mode_and_version, rest)`.
    pub response: fn(u8, &[u8]),
}

macro_rules! api_table {
    ($(($key:ident, $req:ident, $resp:ident)),* $(,)?) => {
        /// Every API the fuzzers exercise.
        pub const APIS: &[Api] = &[
            $(Api {
                key: ApiKey::$key,
                request: fuzz_request::<kafka_proto::messages::$req>,
                response: fuzz_response::<kafka_proto::messages::$resp>,
            },)*
        ];
    };
}
kafka_proto::for_each_message!(api_table);

/// Splits a message input and finds its API; `None` for a key not in [`APIS`].
pub fn select(data: &[u8]) -> Option<(&'static Api, u8, &[u8])> {
    let (&key, rest) = data.split_first()?;
    let (&mode, rest) = rest.split_first()?;
    let api = APIS.iter().find(|a| a.key.code() == i16::from(key))?;
    Some((api, mode, rest))
}

/// Decodes `body` at `version`; on success the value must re-encode, decode to
/// an equal value, and re-encode to the same bytes. Outside the version range
/// decoding must fail.
pub fn body_round_trip<M: Message>(body: &[u8], version: i16) {
    match M::decode(body, version) {
        Ok(m) => {
            assert!(
                M::VERSIONS.contains(version),
                "{:?} decoded at unsupported v{version}",
                M::API_KEY
            );
            let enc = m.encode_to_vec(version).unwrap_or_else(|e| {
                panic!(
                    "{:?} v{version}: decoded value does not re-encode: {e}\n{m:?}",
                    M::API_KEY
                )
            });
            let back = M::decode(&enc, version).unwrap_or_else(|e| {
                panic!(
                    "{:?} v{version}: re-encoding does not decode: {e}\n{m:?}\n{enc:02x?}",
                    M::API_KEY
                )
            });
            assert_eq!(back, m, "{:?} v{version}: value changed", M::API_KEY);
            let again = back.encode_to_vec(version).expect("second re-encode");
            assert_eq!(again, enc, "{:?} v{version}: encoding unstable", M::API_KEY);
        }
        Err(e) => {
            // Error formatting must not panic either.
            let _ = e.to_string();
        }
    }
}

/// Fuzzes one response type (body mode, and `decode_response_frame` beside
/// `decode_response_frame_bytes`).
pub fn fuzz_response<M: Message>(mode: u8, rest: &[u8]) {
    let version = i16::from(mode & !FRAME_MODE);
    if mode & FRAME_MODE == 0 {
        return body_round_trip::<M>(rest, version);
    }
    // The shared-buffer decoder (byte fields sliced, not copied) accepts
    // and refuses exactly what the copying one does, with equal values.
    let shared = bytes::Bytes::copy_from_slice(rest);
    let sliced = decode_response_frame_bytes::<M>(&shared, version);
    let copied = decode_response_frame::<M>(rest, version);
    assert_eq!(
        copied.is_ok(),
        sliced.is_ok(),
        "{:?} v{version}: the two decoders disagree",
        M::API_KEY
    );
    let Ok((header, m)) = copied else {
        return;
    };
    let (hs, ms) = sliced.expect("checked above");
    assert_eq!((&hs, &ms), (&header, &m));
    let hv = response_header_version(M::API_KEY, M::is_flexible(version));
    let mut enc = Vec::new();
    header
        .encode(&mut enc, hv)
        .expect("decoded response header re-encodes");
    m.encode(&mut enc, version)
        .unwrap_or_else(|e| panic!("{:?} v{version}: frame body re-encode: {e}", M::API_KEY));
    let (h2, m2): (ResponseHeader, M) = decode_response_frame(&enc, version)
        .unwrap_or_else(|e| panic!("{:?} v{version}: re-encoded frame: {e}", M::API_KEY));
    assert_eq!(h2, header);
    assert_eq!(m2, m);
}

/// Fuzzes one request type (body mode and `decode_request_frame`, where the
/// version comes from the header).
pub fn fuzz_request<M: Message>(mode: u8, rest: &[u8]) {
    if mode & FRAME_MODE == 0 {
        return body_round_trip::<M>(rest, i16::from(mode));
    }
    let Ok((header, m)) = decode_request_frame::<M>(rest) else {
        return;
    };
    let version = header.request_api_version;
    assert!(M::VERSIONS.contains(version));
    let mut enc = Vec::new();
    header
        .encode(&mut enc, request_header_version(M::is_flexible(version)))
        .expect("decoded request header re-encodes");
    m.encode(&mut enc, version)
        .unwrap_or_else(|e| panic!("{:?} v{version}: frame body re-encode: {e}", M::API_KEY));
    let (h2, m2): (RequestHeader, M) = decode_request_frame(&enc)
        .unwrap_or_else(|e| panic!("{:?} v{version}: re-encoded frame: {e}", M::API_KEY));
    assert_eq!(h2, header);
    assert_eq!(m2, m);
}
