//! SaslAuthenticate (key 36), versions 0–2, flexible from 2.
//!
//! Carries the opaque SASL tokens of the mechanism chosen with SaslHandshake v1.
//! From v1 the response tells the client how long the session lives
//! (`session_lifetime_ms`, KIP-368 re-authentication).

use crate::describe::message;
use bytes::Bytes;

message! {
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
    pub struct SaslAuthenticateRequest [message SaslAuthenticate, versions 0..=2, flexible 2, request SaslAuthenticateResponse] {
        /// The SASL authentication bytes from the client, as defined by the SASL mechanism.
        auth_bytes: Bytes;
    }
}

message! {
    /// The broker's SASL token, or the authentication error.
    pub struct SaslAuthenticateResponse [message SaslAuthenticate, versions 0..=2, flexible 2, response] {
        /// The error code, or 0 if there was no error.
        error_code: i16;
        /// The error message, or null if there was no error.
        error_message: Option<String> = Some(String::new()), nullable ..;
        /// The SASL authentication bytes from the server, as defined by the SASL mechanism.
        auth_bytes: Bytes;
        /// Milliseconds after which only re-authentication over the existing
        /// connection can create a new session; 0 if none (v1+).
        session_lifetime_ms: i64, versions 1..;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;
    use crate::testing::{assert_not_in_version, decode_fixture};

    /// v0 request: int32 length + raw bytes.
    #[test]
    fn v0_request_fixture() {
        let bytes: &[u8] = &[0, 0, 0, 4, 0, b'u', 0, b'p'];
        let req: SaslAuthenticateRequest = decode_fixture(bytes, 0);
        assert_eq!(req.auth_bytes.as_ref(), b"\0u\0p");
        assert_eq!(req.encode_to_vec(1).unwrap(), bytes);
    }

    /// v2 request: compact bytes (uvarint len+1) and an empty tag section.
    #[test]
    fn v2_request_fixture() {
        let bytes: &[u8] = &[5, 0, b'u', 0, b'p', 0];
        let req: SaslAuthenticateRequest = decode_fixture(bytes, 2);
        assert_eq!(req.auth_bytes.as_ref(), b"\0u\0p");
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
        let resp: SaslAuthenticateResponse = decode_fixture(bytes, 1);
        assert_eq!(resp.error_code, 58);
        assert_eq!(resp.error_message.as_deref(), Some("bad"));
        assert!(resp.auth_bytes.is_empty());
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
        let resp: SaslAuthenticateResponse = decode_fixture(bytes, 2);
        assert_eq!(resp.error_code, 0);
        assert_eq!(resp.error_message, None);
        assert_eq!(resp.auth_bytes.as_ref(), b"ok");
        assert_eq!(resp.session_lifetime_ms, 3_600_000);
    }

    #[test]
    fn tagged_fields_rejected_before_v2() {
        let req = SaslAuthenticateRequest {
            unknown_tagged_fields: vec![(20, Bytes::from_static(b"x"))],
            ..Default::default()
        };
        assert_not_in_version(&req, 1, "_tagged_fields");
        assert!(req.encode_to_vec(2).is_ok());
    }

    #[test]
    fn session_lifetime_needs_v1() {
        use crate::{Message, messages::SaslAuthenticateResponse};
        let resp = SaslAuthenticateResponse {
            session_lifetime_ms: 3_600_000,
            ..Default::default()
        };
        let back = SaslAuthenticateResponse::decode(&resp.encode_to_vec(1).unwrap(), 1).unwrap();
        assert_eq!(back.session_lifetime_ms, 3_600_000);
        // v0 cannot carry a session lifetime.
        assert!(resp.encode_to_vec(0).is_err());
    }
}
