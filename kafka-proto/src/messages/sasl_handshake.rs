//! SaslHandshake (key 17), versions 0–1, never flexible.
//!
//! The client names the SASL mechanism it wants; the broker answers with the
//! mechanisms it has enabled. With v0 the SASL tokens that follow travel as raw
//! length-prefixed frames; with v1 they travel inside SaslAuthenticate requests
//! (see [`crate::messages::SaslAuthenticateRequest`]).

use crate::describe::message;

message! {
    /// Chooses a SASL mechanism before authenticating.
    ///
    /// ```
    /// use kafka_proto::{Message, messages::SaslHandshakeRequest};
    /// let req = SaslHandshakeRequest {
    ///     mechanism: "SCRAM-SHA-512".into(),
    /// };
    /// let bytes = req.encode_to_vec(1).unwrap();
    /// assert_eq!(SaslHandshakeRequest::decode(&bytes, 1).unwrap(), req);
    /// ```
    pub struct SaslHandshakeRequest [message SaslHandshake, versions 0..=1, flexible never, request SaslHandshakeResponse] {
        /// The SASL mechanism chosen by the client, e.g. `PLAIN` or `SCRAM-SHA-256`.
        mechanism: String;
    }
}

message! {
    /// The broker's answer to a [`SaslHandshakeRequest`].
    pub struct SaslHandshakeResponse [message SaslHandshake, versions 0..=1, flexible never, response] {
        /// The error code, or 0 if there was no error.
        error_code: i16;
        /// The mechanisms enabled in the server.
        mechanisms: Vec<String>;
    }
}

impl SaslHandshakeResponse {
    /// True when the broker enabled `mechanism`.
    pub fn supports(&self, mechanism: &str) -> bool {
        self.mechanisms.iter().any(|m| m == mechanism)
    }
}

/// A SASL mechanism kafka-eos implements, by the name SaslHandshake carries
/// (the client's `sasl.mechanism`, the broker's
/// `sasl.enabled.mechanisms`). The producer authenticates with it; the test
/// harness enables it on a broker listener.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SaslMechanism {
    /// `PLAIN` (RFC 4616).
    Plain,
    /// `SCRAM-SHA-256` (RFC 7677).
    ScramSha256,
    /// `SCRAM-SHA-512`.
    ScramSha512,
    /// `OAUTHBEARER` (RFC 7628, KIP-255): a bearer token from a token
    /// provider.
    OAuthBearer,
    /// `AWS_MSK_IAM`: Amazon MSK's own mechanism (the `aws-msk-iam-auth`
    /// plugin's `IAMLoginModule`), one JSON message carrying a SigV4
    /// signature. Brokers outside Amazon MSK do not offer it.
    AwsMskIam,
}

impl SaslMechanism {
    /// The name sent in SaslHandshake.
    pub fn name(self) -> &'static str {
        match self {
            SaslMechanism::Plain => "PLAIN",
            SaslMechanism::ScramSha256 => "SCRAM-SHA-256",
            SaslMechanism::ScramSha512 => "SCRAM-SHA-512",
            SaslMechanism::OAuthBearer => "OAUTHBEARER",
            SaslMechanism::AwsMskIam => "AWS_MSK_IAM",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;
    use crate::testing::decode_fixture;

    /// v1 request: int16 length + "PLAIN".
    #[test]
    fn v1_request_fixture() {
        let bytes: &[u8] = &[0, 5, b'P', b'L', b'A', b'I', b'N'];
        let req: SaslHandshakeRequest = decode_fixture(bytes, 1);
        assert_eq!(req.mechanism, "PLAIN");
        assert_eq!(req.encode_to_vec(0).unwrap(), bytes);
    }

    /// v1 response: error 0, int32 array of two int16-length strings.
    #[test]
    fn v1_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, // error_code
            0, 0, 0, 2, // mechanisms: 2 elements
            0, 5, b'P', b'L', b'A', b'I', b'N', // "PLAIN"
            0, 13, b'S', b'C', b'R', b'A', b'M', b'-', b'S', b'H', b'A', b'-', b'2', b'5',
            b'6', // "SCRAM-SHA-256"
        ];
        let resp: SaslHandshakeResponse = decode_fixture(bytes, 1);
        assert_eq!(resp.error_code, 0);
        assert_eq!(resp.mechanisms, ["PLAIN", "SCRAM-SHA-256"]);
        assert!(resp.supports("SCRAM-SHA-256") && !resp.supports("GSSAPI"));
    }

    /// UNSUPPORTED_SASL_MECHANISM (33) with the enabled list.
    #[test]
    fn v0_error_response_fixture() {
        let bytes: &[u8] = &[0, 33, 0, 0, 0, 1, 0, 6, b'G', b'S', b'S', b'A', b'P', b'I'];
        let resp: SaslHandshakeResponse = decode_fixture(bytes, 0);
        assert_eq!(resp.error_code, 33);
        assert_eq!(resp.mechanisms, ["GSSAPI"]);
    }

    #[test]
    fn mechanism_names_are_kafkas() {
        use crate::messages::SaslMechanism;
        assert_eq!(SaslMechanism::Plain.name(), "PLAIN");
        assert_eq!(SaslMechanism::ScramSha512.name(), "SCRAM-SHA-512");
        assert_eq!(SaslMechanism::OAuthBearer.name(), "OAUTHBEARER");
    }
}
