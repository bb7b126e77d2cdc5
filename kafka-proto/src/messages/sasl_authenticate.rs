//! SaslAuthenticate (key 36), versions 0–2, flexible from 2.
//!
//! Carries the opaque SASL tokens of the mechanism chosen with SaslHandshake v1.
//! From v1 the response tells the client how long the session lives
//! (`session_lifetime_ms`, KIP-368 re-authentication).

use crate::primitives::{
    Reader, TaggedFields, put_bytes, put_nullable_string, put_unknown_tagged_fields,
};
use crate::{
    ApiKey, DecodeError, EncodeError, Message, Request, Response, VersionRange, check_field,
};
use bytes::{BufMut, Bytes};

/// Sends a SASL token from the client.
///
/// ```
/// use kafka_proto::{Message, messages::SaslAuthenticateRequest};
/// let req = SaslAuthenticateRequest {
///     auth_bytes: bytes::Bytes::from_static(b"\0user\0secret"),
///     ..Default::default()
/// };
/// let bytes = req.encode_to_vec(2).unwrap();
/// assert_eq!(SaslAuthenticateRequest::decode(&bytes, 2).unwrap(), req);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SaslAuthenticateRequest {
    /// The SASL authentication bytes from the client, as defined by the SASL mechanism.
    pub auth_bytes: Bytes,
    /// Unknown tagged fields (v2+).
    pub unknown_tagged_fields: TaggedFields,
}

impl Message for SaslAuthenticateRequest {
    const API_KEY: ApiKey = ApiKey::SaslAuthenticate;
    const VERSIONS: VersionRange = VersionRange::new(0, 2);
    const FLEXIBLE_MIN: i16 = 2;

    fn encode_body<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let flex = Self::is_flexible(version);
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &Vec::new(),
            "_tagged_fields",
        )?;
        put_bytes(buf, "auth_bytes", &self.auth_bytes, flex)?;
        if flex {
            put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
        }
        Ok(())
    }

    fn decode_body(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = Self::is_flexible(version);
        let mut m = Self {
            auth_bytes: r.bytes("auth_bytes", flex)?,
            ..Default::default()
        };
        if flex {
            m.unknown_tagged_fields = r.unknown_tagged_fields("_tagged_fields")?;
        }
        Ok(m)
    }
}

impl Request for SaslAuthenticateRequest {
    type Response = SaslAuthenticateResponse;
}

/// The broker's SASL token, or the authentication error.
///
/// ```
/// use kafka_proto::{Message, messages::SaslAuthenticateResponse};
/// let resp = SaslAuthenticateResponse {
///     session_lifetime_ms: 3_600_000,
///     ..Default::default()
/// };
/// let back = SaslAuthenticateResponse::decode(&resp.encode_to_vec(1).unwrap(), 1).unwrap();
/// assert_eq!(back.session_lifetime_ms, 3_600_000);
/// // v0 cannot carry a session lifetime.
/// assert!(resp.encode_to_vec(0).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SaslAuthenticateResponse {
    /// The error code, or 0 if there was no error.
    pub error_code: i16,
    /// The error message, or null if there was no error.
    pub error_message: Option<String>,
    /// The SASL authentication bytes from the server, as defined by the SASL mechanism.
    pub auth_bytes: Bytes,
    /// Milliseconds after which only re-authentication over the existing
    /// connection can create a new session; 0 if none (v1+).
    pub session_lifetime_ms: i64,
    /// Unknown tagged fields (v2+).
    pub unknown_tagged_fields: TaggedFields,
}

impl Message for SaslAuthenticateResponse {
    const API_KEY: ApiKey = ApiKey::SaslAuthenticate;
    const VERSIONS: VersionRange = VersionRange::new(0, 2);
    const FLEXIBLE_MIN: i16 = 2;

    fn encode_body<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let d = Self::default();
        let flex = Self::is_flexible(version);
        check_field(
            version >= 1,
            &self.session_lifetime_ms,
            &d.session_lifetime_ms,
            "session_lifetime_ms",
        )?;
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &d.unknown_tagged_fields,
            "_tagged_fields",
        )?;
        buf.put_i16(self.error_code);
        put_nullable_string(buf, "error_message", self.error_message.as_deref(), flex)?;
        put_bytes(buf, "auth_bytes", &self.auth_bytes, flex)?;
        if version >= 1 {
            buf.put_i64(self.session_lifetime_ms);
        }
        if flex {
            put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
        }
        Ok(())
    }

    fn decode_body(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = Self::is_flexible(version);
        let mut m = Self {
            error_code: r.i16("error_code")?,
            error_message: r.nullable_string("error_message", flex)?,
            auth_bytes: r.bytes("auth_bytes", flex)?,
            ..Default::default()
        };
        if version >= 1 {
            m.session_lifetime_ms = r.i64("session_lifetime_ms")?;
        }
        if flex {
            m.unknown_tagged_fields = r.unknown_tagged_fields("_tagged_fields")?;
        }
        Ok(m)
    }
}

impl Response for SaslAuthenticateResponse {}

#[cfg(any(test, feature = "arbitrary"))]
mod arbitrary {
    use super::*;
    use crate::testing::{VersionedArbitrary, arb_bytes, arb_or, arb_tagged, opt_nullable_string};
    use proptest::prelude::*;

    impl VersionedArbitrary for SaslAuthenticateRequest {
        fn arbitrary(version: i16) -> BoxedStrategy<Self> {
            (arb_bytes(true), arb_tagged(version >= 2))
                .prop_map(|(auth_bytes, t)| SaslAuthenticateRequest {
                    auth_bytes,
                    unknown_tagged_fields: t,
                })
                .boxed()
        }
    }

    impl VersionedArbitrary for SaslAuthenticateResponse {
        fn arbitrary(version: i16) -> BoxedStrategy<Self> {
            (
                any::<i16>(),
                opt_nullable_string(true),
                arb_bytes(true),
                arb_or(version >= 1, 0i64),
                arb_tagged(version >= 2),
            )
                .prop_map(|(e, msg, auth, life, t)| SaslAuthenticateResponse {
                    error_code: e,
                    error_message: msg,
                    auth_bytes: auth,
                    session_lifetime_ms: life,
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

    /// v0 request: int32 length + raw bytes.
    #[test]
    fn v0_request_fixture() {
        let bytes: &[u8] = &[0, 0, 0, 4, 0, b'u', 0, b'p'];
        let req = SaslAuthenticateRequest::decode(bytes, 0).unwrap();
        assert_eq!(req.auth_bytes.as_ref(), b"\0u\0p");
        assert_eq!(req.encode_to_vec(0).unwrap(), bytes);
        assert_eq!(req.encode_to_vec(1).unwrap(), bytes);
    }

    /// v2 request: compact bytes (uvarint len+1) and an empty tag section.
    #[test]
    fn v2_request_fixture() {
        let bytes: &[u8] = &[5, 0, b'u', 0, b'p', 0];
        let req = SaslAuthenticateRequest::decode(bytes, 2).unwrap();
        assert_eq!(req.auth_bytes.as_ref(), b"\0u\0p");
        assert_eq!(req.encode_to_vec(2).unwrap(), bytes);
    }

    /// v1 response: error 58 (SASL_AUTHENTICATION_FAILED) with a message,
    /// empty auth bytes and no session lifetime.
    #[test]
    fn v1_error_response_fixture() {
        let bytes: &[u8] = &[
            0, 58, // error_code
            0, 3, b'b', b'a', b'd', // error_message "bad"
            0, 0, 0, 0, // auth_bytes: empty
            0, 0, 0, 0, 0, 0, 0, 0, // session_lifetime_ms
        ];
        let resp = SaslAuthenticateResponse::decode(bytes, 1).unwrap();
        assert_eq!(resp.error_code, 58);
        assert_eq!(resp.error_message.as_deref(), Some("bad"));
        assert!(resp.auth_bytes.is_empty());
        assert_eq!(resp.encode_to_vec(1).unwrap(), bytes);
    }

    /// v2 response: success, null message, 2 auth bytes, 1 hour lifetime.
    #[test]
    fn v2_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, // error_code
            0, // error_message: null
            3, b'o', b'k', // auth_bytes
            0, 0, 0, 0, 0, 0x36, 0xee, 0x80, // session_lifetime_ms = 3_600_000
            0,    // tagged fields
        ];
        let resp = SaslAuthenticateResponse::decode(bytes, 2).unwrap();
        assert_eq!(resp.error_code, 0);
        assert_eq!(resp.error_message, None);
        assert_eq!(resp.auth_bytes.as_ref(), b"ok");
        assert_eq!(resp.session_lifetime_ms, 3_600_000);
        assert_eq!(resp.encode_to_vec(2).unwrap(), bytes);
    }

    #[test]
    fn tagged_fields_rejected_before_v2() {
        let req = SaslAuthenticateRequest {
            unknown_tagged_fields: vec![(20, Bytes::from_static(b"x"))],
            ..Default::default()
        };
        let e = req.encode_to_vec(1).unwrap_err();
        assert_eq!(e.kind, EncodeErrorKind::FieldNotInVersion);
        assert!(req.encode_to_vec(2).is_ok());
    }
}

#[cfg(test)]
mod round_trip {
    use super::*;
    use crate::testing::{round_trip_all_versions, truncations_fail_cleanly};

    #[test]
    fn request_every_version() {
        round_trip_all_versions::<SaslAuthenticateRequest>(64);
        truncations_fail_cleanly::<SaslAuthenticateRequest>(8);
    }

    #[test]
    fn response_every_version() {
        round_trip_all_versions::<SaslAuthenticateResponse>(64);
        truncations_fail_cleanly::<SaslAuthenticateResponse>(8);
    }
}
