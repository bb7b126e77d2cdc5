//! The few JWT facts a client reads (Java's `ClientJwtValidator`): the
//! payload's `exp`, `iat` and subject claim, without checking the
//! signature (the broker does); and the unsigned tokens of Kafka's
//! unsecured mode (`alg: none`).

use super::token::{Token, TokenError};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64URL;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The largest JWT read (a token is a few KiB; this bounds memory).
const MAX_JWT_LEN: usize = 64 * 1024;

fn invalid(message: impl Into<String>) -> TokenError {
    TokenError::InvalidToken {
        message: message.into(),
    }
}

/// Seconds since the epoch (JSON number, possibly fractional) as a time.
fn claim_time(claims: &serde_json::Value, name: &str) -> Result<Option<SystemTime>, TokenError> {
    match claims.get(name) {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(v) => {
            let secs = v
                .as_f64()
                .filter(|s| s.is_finite() && *s >= 0.0 && *s < 1e12)
                .ok_or_else(|| invalid(format!("claim {name} is not a time")))?;
            Ok(Some(UNIX_EPOCH + Duration::from_secs_f64(secs)))
        }
    }
}

/// Reads a JWT (compact JWS) into a [`Token`]: `exp` required, the
/// `sub_claim` a non-blank string (the principal), `iat` optional. The
/// signature is not checked. An expired token (at `now`) is refused.
pub fn token_from_jwt(jwt: &str, sub_claim: &str, now: SystemTime) -> Result<Token, TokenError> {
    let jwt = jwt.trim();
    if jwt.len() > MAX_JWT_LEN {
        return Err(invalid(format!("longer than {MAX_JWT_LEN} bytes")));
    }
    let mut parts = jwt.split('.');
    let (Some(_header), Some(payload), Some(_signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(invalid("not a JWT (expected three dot-separated parts)"));
    };
    let payload = B64URL
        .decode(payload.trim_end_matches('='))
        .map_err(|_| invalid("JWT payload is not base64url"))?;
    let claims: serde_json::Value =
        serde_json::from_slice(&payload).map_err(|_| invalid("JWT payload is not JSON"))?;
    if !claims.is_object() {
        return Err(invalid("JWT payload is not a JSON object"));
    }
    let exp = claim_time(&claims, "exp")?.ok_or_else(|| invalid("JWT has no exp claim"))?;
    let iat = claim_time(&claims, "iat")?;
    let sub = claims
        .get(sub_claim)
        .and_then(|v| v.as_str())
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| invalid(format!("JWT has no non-blank {sub_claim} claim")))?;
    if exp <= now {
        return Err(invalid("the token has already expired"));
    }
    if !super::message::is_valid_bearer(jwt) {
        return Err(invalid("not a valid bearer string"));
    }
    let mut token = Token::new(jwt, exp, sub);
    if let Some(iat) = iat {
        token = token.with_issued_at(iat);
    }
    Ok(token)
}

/// An unsecured JWS (`{"alg":"none"}`, empty signature) as Kafka's
/// `OAuthBearerUnsecuredLoginCallbackHandler` makes: claims `sub`, `iat`,
/// `exp` (seconds, fractional), then `extra` string claims.
pub fn unsecured_jws(
    principal: &str,
    issued_at: SystemTime,
    lifetime: Duration,
    extra: &[(String, String)],
) -> String {
    let secs = |t: SystemTime| {
        t.duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs_f64()
    };
    let mut claims = serde_json::Map::new();
    for (k, v) in extra {
        claims.insert(k.clone(), serde_json::Value::String(v.clone()));
    }
    claims.insert("sub".into(), principal.into());
    claims.insert("iat".into(), secs(issued_at).into());
    claims.insert("exp".into(), secs(issued_at + lifetime).into());
    let payload = serde_json::Value::Object(claims).to_string();
    format!(
        "{}.{}.",
        B64URL.encode(br#"{"alg":"none"}"#),
        B64URL.encode(payload)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jwt(claims: &str) -> String {
        format!(
            "{}.{}.sig",
            B64URL.encode(br#"{"alg":"RS256"}"#),
            B64URL.encode(claims)
        )
    }

    const NOW: u64 = 1_800_000_000;

    fn now() -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(NOW)
    }

    /// `exp`, `iat` and `sub` come from the payload.
    #[test]
    fn reads_exp_iat_and_sub() {
        let t = token_from_jwt(
            &jwt(&format!(
                r#"{{"sub":"svc","iat":{NOW},"exp":{}}}"#,
                NOW + 60
            )),
            "sub",
            now(),
        )
        .unwrap();
        assert_eq!(t.principal(), "svc");
        assert_eq!(t.expires_at(), now() + Duration::from_secs(60));
        assert_eq!(t.issued_at(), Some(now()));
    }

    /// The principal claim's name is configurable.
    #[test]
    fn principal_claim_is_configurable() {
        let t = token_from_jwt(
            &jwt(&format!(r#"{{"client_id":"c1","exp":{}}}"#, NOW + 5)),
            "client_id",
            now(),
        )
        .unwrap();
        assert_eq!(t.principal(), "c1");
    }

    /// Missing claims, expiry and garbage are typed errors, never panics.
    #[test]
    fn unusable_tokens_are_refused() {
        for bad in [
            jwt(r#"{"sub":"svc"}"#),
            jwt(&format!(r#"{{"sub":" ","exp":{}}}"#, NOW + 5)),
            jwt(&format!(r#"{{"sub":"svc","exp":{}}}"#, NOW - 1)),
            jwt(r#"{"sub":"svc","exp":"soon"}"#),
            jwt("[1,2]"),
            "a.b".into(),
            "a.!!!.c".into(),
            "a.b.c.d".into(),
            String::new(),
        ] {
            let err = token_from_jwt(&bad, "sub", now()).unwrap_err();
            assert!(
                matches!(err, TokenError::InvalidToken { .. }),
                "{bad}: {err}"
            );
            assert!(!err.is_retriable());
        }
    }

    /// An unsecured JWS reads back with its claims, as the broker's
    /// unsecured validator reads it.
    #[test]
    fn unsecured_jws_reads_back() {
        let s = unsecured_jws(
            "alice",
            now(),
            Duration::from_secs(3600),
            &[("scope".into(), "kafka".into())],
        );
        assert!(s.starts_with("eyJhbGciOiJub25lIn0.") && s.ends_with('.'));
        let t = token_from_jwt(&s, "sub", now()).unwrap();
        assert_eq!(t.principal(), "alice");
        assert_eq!(t.expires_at(), now() + Duration::from_secs(3600));
    }
}
