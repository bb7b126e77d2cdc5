//! The OAUTHBEARER messages (RFC 7628 §3.1, as Kafka's
//! `OAuthBearerClientInitialResponse` writes and reads them), sans-IO.
//!
//! The exchange, one SaslAuthenticate per client message:
//! 1. the client sends [`client_first_message`];
//! 2. an empty answer means authenticated; a non-empty one is the broker's
//!    error (JSON such as `{"status":"invalid_token"}`), to which the client
//!    answers the single byte [`ERROR_ACK`];
//! 3. the broker then fails the exchange with `SASL_AUTHENTICATION_FAILED`
//!    and closes the connection.

use std::collections::BTreeMap;

/// The byte a client sends after an error challenge (RFC 7628 §3.2.3).
pub const ERROR_ACK: &[u8] = &[0x01];

/// Separates the message's key/value pairs.
const SEP: u8 = 0x01;

/// A message the client cannot send, or a client-first message that does
/// not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("OAUTHBEARER: {0}")]
pub struct MessageError(pub String);

/// True for an RFC 6750 `b64token`: `[-_~+/.a-zA-Z0-9]+=*` (what Kafka's
/// broker accepts after `Bearer `).
pub fn is_valid_bearer(token: &str) -> bool {
    let body = token.trim_end_matches('=');
    !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_~+/.".contains(&b))
}

/// Checks one SASL extension: key `[A-Za-z]+` other than `auth`, value
/// `[\x21-\x7E \t\r\n]+`.
pub fn check_extension(key: &str, value: &str) -> Result<(), MessageError> {
    if key.is_empty() || !key.bytes().all(|b| b.is_ascii_alphabetic()) {
        return Err(MessageError(format!(
            "extension name {key:?} must be letters only"
        )));
    }
    if key == "auth" {
        return Err(MessageError("extension name \"auth\" is reserved".into()));
    }
    if value.is_empty()
        || !value
            .bytes()
            .all(|b| (0x21..=0x7e).contains(&b) || b" \t\r\n".contains(&b))
    {
        return Err(MessageError(format!(
            "extension {key}: value must be printable ASCII"
        )));
    }
    Ok(())
}

/// The client-first message:
/// `n,[a=authzid],` 0x01 `auth=Bearer <token>` {0x01 key=value} 0x01 0x01.
pub fn client_first_message(
    token: &str,
    authzid: Option<&str>,
    extensions: &BTreeMap<String, String>,
) -> Result<Vec<u8>, MessageError> {
    if !is_valid_bearer(token) {
        return Err(MessageError(
            "the token is not a valid bearer string ([-_~+/.a-zA-Z0-9]+=*)".into(),
        ));
    }
    let mut out = Vec::with_capacity(token.len() + 32);
    out.extend_from_slice(b"n,");
    if let Some(a) = authzid {
        out.extend_from_slice(b"a=");
        out.extend_from_slice(a.as_bytes());
    }
    out.push(b',');
    out.push(SEP);
    out.extend_from_slice(b"auth=Bearer ");
    out.extend_from_slice(token.as_bytes());
    for (k, v) in extensions {
        check_extension(k, v)?;
        out.push(SEP);
        out.extend_from_slice(k.as_bytes());
        out.push(b'=');
        out.extend_from_slice(v.as_bytes());
    }
    out.push(SEP);
    out.push(SEP);
    Ok(out)
}

/// A parsed client-first message (what a broker reads; the tests check
/// the writer against it and against Kafka's own vectors).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientFirstMessage {
    /// The token after `Bearer `.
    pub token: String,
    /// The authorization id, empty when absent.
    pub authzid: String,
    /// The extensions.
    pub extensions: BTreeMap<String, String>,
}

impl ClientFirstMessage {
    /// Parses a client-first message; `auth` may be any of the pairs.
    pub fn parse(bytes: &[u8]) -> Result<Self, MessageError> {
        let bad = |why: &str| MessageError(format!("malformed client-first message: {why}"));
        let text = std::str::from_utf8(bytes).map_err(|_| bad("not UTF-8"))?;
        let rest = text
            .strip_prefix("n,")
            .ok_or_else(|| bad("no GS2 header"))?;
        let (authzid, rest) = rest.split_once(',').ok_or_else(|| bad("no GS2 header"))?;
        let authzid = match authzid {
            "" => "",
            a => a.strip_prefix("a=").ok_or_else(|| bad("bad authzid"))?,
        };
        let body = rest
            .strip_prefix('\u{1}')
            .and_then(|r| r.strip_suffix("\u{1}\u{1}"))
            .ok_or_else(|| bad("bad framing"))?;
        let mut token = None;
        let mut extensions = BTreeMap::new();
        for pair in body.split('\u{1}') {
            let (k, v) = pair.split_once('=').ok_or_else(|| bad("pair without ="))?;
            if k == "auth" {
                let t = v
                    .get(..7)
                    .filter(|s| s.eq_ignore_ascii_case("bearer "))
                    .map(|_| &v[7..])
                    .ok_or_else(|| bad("auth is not a Bearer token"))?;
                token = Some(t.to_string());
            } else {
                extensions.insert(k.to_string(), v.to_string());
            }
        }
        Ok(Self {
            token: token.ok_or_else(|| bad("no auth pair"))?,
            authzid: authzid.to_string(),
            extensions,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// Kafka's `OAuthBearerClientInitialResponseTest`: token `123.345.567`
    /// with extension `nineteen=42`.
    #[test]
    fn kafka_vector_with_one_extension() {
        let msg = client_first_message("123.345.567", None, &ext(&[("nineteen", "42")])).unwrap();
        assert_eq!(
            msg,
            b"n,,\x01auth=Bearer 123.345.567\x01nineteen=42\x01\x01"
        );
    }

    /// Without extensions the message is the token between the framing.
    #[test]
    fn kafka_vector_without_extensions_parses_back() {
        let msg = client_first_message("123.345.567", None, &BTreeMap::new()).unwrap();
        assert_eq!(msg, b"n,,\x01auth=Bearer 123.345.567\x01\x01");
        let parsed = ClientFirstMessage::parse(&msg).unwrap();
        assert_eq!(parsed.token, "123.345.567");
        assert_eq!(parsed.authzid, "");
    }

    /// Kafka's vector with an authzid.
    #[test]
    fn kafka_vector_with_authzid() {
        let parsed = ClientFirstMessage::parse(b"n,a=myuser,\x01auth=Bearer 345\x01\x01").unwrap();
        assert_eq!(
            (parsed.token.as_str(), parsed.authzid.as_str()),
            ("345", "myuser")
        );
        let msg = client_first_message("345", Some("myuser"), &BTreeMap::new()).unwrap();
        assert_eq!(msg, b"n,a=myuser,\x01auth=Bearer 345\x01\x01");
    }

    /// Kafka's parser takes `auth` in any position among the pairs.
    #[test]
    fn auth_may_come_between_extensions() {
        let parsed = ClientFirstMessage::parse(
            b"n,,\x01propA=valueA1, valueA2\x01auth=Bearer 567\x01propB=valueB\x01\x01",
        )
        .unwrap();
        assert_eq!(parsed.token, "567");
        assert_eq!(
            parsed.extensions,
            ext(&[("propA", "valueA1, valueA2"), ("propB", "valueB")])
        );
    }

    /// Extensions round-trip in key order.
    #[test]
    fn extensions_round_trip() {
        let e = ext(&[("logicalCluster", "lkc-1"), ("identityPoolId", "pool-2")]);
        let msg = client_first_message("a.b.c", None, &e).unwrap();
        assert_eq!(ClientFirstMessage::parse(&msg).unwrap().extensions, e);
    }

    /// Bad extension names and values, and bad tokens, are refused before
    /// anything is sent.
    #[test]
    fn bad_extensions_and_tokens_are_refused() {
        for (k, v) in [
            ("auth", "x"),
            ("a1", "x"),
            ("", "x"),
            ("ok", ""),
            ("ok", "\u{1}"),
        ] {
            assert!(
                client_first_message("t", None, &ext(&[(k, v)])).is_err(),
                "{k:?}={v:?}"
            );
        }
        assert!(client_first_message("has space", None, &BTreeMap::new()).is_err());
        assert!(client_first_message("", None, &BTreeMap::new()).is_err());
        assert!(is_valid_bearer("eyJhbGciOiJub25lIn0.eyJzdWIiOiJhIn0."));
        assert!(is_valid_bearer("abc=="));
        assert!(!is_valid_bearer("=="));
    }

    /// Truncated or foreign messages are errors, never panics.
    #[test]
    fn malformed_messages_are_errors() {
        for m in [
            &b""[..],
            b"n,",
            b"y,,\x01auth=Bearer 1\x01\x01",
            b"n,,\x01auth=Bearer 1\x01",
            b"n,,\x01auth=Basic 1\x01\x01",
            b"n,,\x01noequals\x01\x01",
            b"n,,\x01a=b\x01\x01",
            b"n,,\x01auth=Bear\x01\x01",
        ] {
            assert!(ClientFirstMessage::parse(m).is_err(), "{m:?}");
        }
    }
}
