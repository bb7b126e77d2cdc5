//! OIDC client credentials (KIP-768): the token request Java's
//! `ClientSecretRequestFormatter` sends, the response its
//! `JwtResponseParser` reads, its retry rules (`Retry`), and the provider
//! that runs them.

use super::jwt::token_from_jwt;
use super::token::{Token, TokenError, TokenProvider};
use crate::config::Secret;
use crate::connection::TlsConfig;
use crate::http::{HttpClient, HttpConfig, HttpError, HttpUrl, Method};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use std::collections::BTreeMap;
use std::fmt;
use std::time::{Duration, Instant, SystemTime};

/// The settings of a [`ClientCredentialsProvider`] (the `sasl.oauthbearer.*`
/// and `sasl.login.*` keys).
#[derive(Clone)]
#[non_exhaustive]
pub struct ClientCredentialsConfig {
    /// `sasl.oauthbearer.token.endpoint.url`: `https://`, `http://`, or
    /// `file:` (the file holds a ready JWT, re-read on every fetch).
    pub token_endpoint_url: String,
    /// `sasl.oauthbearer.client.credentials.client.id` (JAAS `clientId`).
    pub client_id: String,
    /// `sasl.oauthbearer.client.credentials.client.secret` (JAAS `clientSecret`).
    pub client_secret: Secret,
    /// `sasl.oauthbearer.scope` (JAAS `scope`).
    pub scope: Option<String>,
    /// SASL extensions sent with every token (JAAS `extension_<name>`).
    pub extensions: BTreeMap<String, String>,
    /// `sasl.oauthbearer.sub.claim.name` (default `sub`).
    pub sub_claim_name: String,
    /// `sasl.oauthbearer.header.urlencode` (default false).
    pub header_urlencode: bool,
    /// `sasl.login.connect.timeout.ms` (Java: no bound; here 10 s).
    pub connect_timeout: Duration,
    /// `sasl.login.read.timeout.ms` (Java: no bound; here 30 s).
    pub read_timeout: Duration,
    /// `sasl.login.retry.backoff.ms` (default 100 ms): the first wait.
    pub retry_backoff: Duration,
    /// `sasl.login.retry.backoff.max.ms` (default 10 s): the whole retry
    /// budget, as Java uses it.
    pub retry_backoff_max: Duration,
    /// Trusted CAs for an `https` endpoint (the brokers' `ssl.*` trust).
    pub tls: Option<TlsConfig>,
}

impl fmt::Debug for ClientCredentialsConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientCredentialsConfig")
            .field("token_endpoint_url", &self.token_endpoint_url)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret)
            .field("scope", &self.scope)
            .field("extensions", &self.extensions.keys().collect::<Vec<_>>())
            .field("sub_claim_name", &self.sub_claim_name)
            .field("connect_timeout", &self.connect_timeout)
            .field("read_timeout", &self.read_timeout)
            .field("retry_backoff", &self.retry_backoff)
            .field("retry_backoff_max", &self.retry_backoff_max)
            .field("tls", &self.tls.is_some())
            .finish_non_exhaustive()
    }
}

impl ClientCredentialsConfig {
    /// Java's defaults for an endpoint and a client.
    ///
    /// ```
    /// use kafka_client::oauth::{ClientCredentialsConfig, ClientCredentialsProvider};
    /// let mut config = ClientCredentialsConfig::new("https://idp.example/oauth2/token", "orders", "s3cret");
    /// config.scope = Some("kafka".into());
    /// let provider = ClientCredentialsProvider::new(config);
    /// assert!(!format!("{provider:?}").contains("s3cret"));
    /// ```
    pub fn new(
        token_endpoint_url: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        Self {
            token_endpoint_url: token_endpoint_url.into(),
            client_id: client_id.into(),
            client_secret: Secret::new(client_secret),
            scope: None,
            extensions: BTreeMap::new(),
            sub_claim_name: "sub".into(),
            header_urlencode: false,
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(30),
            retry_backoff: Duration::from_millis(100),
            retry_backoff_max: Duration::from_secs(10),
            tls: None,
        }
    }
}

/// Java's `URLEncoder` (form encoding): `[A-Za-z0-9.*_-]` kept, space as
/// `+`, every other byte `%XX`.
pub fn form_urlencode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'.' | b'*' | b'_' | b'-' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The `Authorization` header value: `Basic base64(id:secret)` (standard
/// base64 with padding), id and secret form-encoded first when `urlencode`.
pub fn basic_authorization(client_id: &str, client_secret: &str, urlencode: bool) -> String {
    let pair = if urlencode {
        format!(
            "{}:{}",
            form_urlencode(client_id),
            form_urlencode(client_secret)
        )
    } else {
        format!("{client_id}:{client_secret}")
    };
    format!("Basic {}", B64.encode(pair))
}

/// The request body: `grant_type=client_credentials[&scope=<scope>]`, the
/// scope always form-encoded.
pub fn request_body(scope: Option<&str>) -> String {
    match scope.map(str::trim).filter(|s| !s.is_empty()) {
        Some(scope) => format!(
            "grant_type=client_credentials&scope={}",
            form_urlencode(scope)
        ),
        None => "grant_type=client_credentials".into(),
    }
}

/// HTTP statuses Java does not retry (`HttpJwtRetriever`).
pub fn is_unretriable_status(status: u16) -> bool {
    matches!(
        status,
        400..=407 | 409..=415 | 501 | 505
    )
}

/// The bearer string of a successful response: the first non-blank of
/// `access_token` and `id_token`; or the typed error of any other answer.
pub fn parse_token_response(status: u16, body: &[u8]) -> Result<String, TokenError> {
    let json: Option<serde_json::Value> = serde_json::from_slice(body).ok();
    if status == 200 || status == 201 {
        let json = json.ok_or_else(|| TokenError::InvalidToken {
            message: "the token endpoint's answer is not JSON".into(),
        })?;
        for key in ["access_token", "id_token"] {
            if let Some(t) = json.get(key).and_then(|v| v.as_str())
                && !t.trim().is_empty()
            {
                return Ok(t.trim().to_string());
            }
        }
        return Err(TokenError::InvalidToken {
            message: "the token endpoint's answer has no access_token or id_token".into(),
        });
    }
    // RFC 6749 §5.2 `error` / `error_description`, or Okta's fields.
    let message = json
        .as_ref()
        .and_then(|j| {
            let field = |k: &str| j.get(k).and_then(|v| v.as_str()).map(str::to_string);
            match (field("error"), field("error_description")) {
                (Some(e), Some(d)) => Some(format!("{e}: {d}")),
                (Some(e), None) => Some(e),
                _ => match (field("errorCode"), field("errorSummary")) {
                    (Some(e), Some(d)) => Some(format!("{e}: {d}")),
                    (Some(e), None) => Some(e),
                    _ => None,
                },
            }
        })
        .unwrap_or_else(|| {
            let text = String::from_utf8_lossy(body);
            text.chars().take(200).collect()
        });
    if is_unretriable_status(status) {
        Err(TokenError::Refused { status, message })
    } else {
        Err(TokenError::Unavailable {
            message: format!("HTTP {status}: {message}"),
        })
    }
}

/// The wait before retry `attempt` (1-based): `backoff × 2^(attempt-1)`.
pub fn retry_wait(attempt: u32, backoff: Duration) -> Duration {
    backoff.saturating_mul(2u32.saturating_pow(attempt.saturating_sub(1).min(20)))
}

/// Tokens from an OIDC token endpoint with the client credentials grant
/// (KIP-768), as Java's `OAuthBearerLoginCallbackHandler` gets them:
/// retried with exponential waits while the failure is retriable, within
/// `sasl.login.retry.backoff.max.ms`; each JWT checked for `exp` and its
/// subject claim (not its signature: the broker checks that).
///
/// Wrap it in a [`RefreshingTokenProvider`](crate::oauth::RefreshingTokenProvider)
/// (as the `sasl.oauthbearer.*` properties do) to refresh ahead of expiry.
#[derive(Debug, Clone)]
pub struct ClientCredentialsProvider {
    config: ClientCredentialsConfig,
}

impl ClientCredentialsProvider {
    /// A provider for `config`; nothing is fetched yet.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), kafka_client::oauth::TokenError> {
    /// use kafka_client::oauth::{ClientCredentialsConfig, ClientCredentialsProvider, TokenProvider};
    /// let provider = ClientCredentialsProvider::new(ClientCredentialsConfig::new(
    ///     "https://idp.example/oauth2/token",
    ///     "orders",
    ///     "s3cret",
    /// ));
    /// let token = provider.token().await?;
    /// println!("token for {} expires at {:?}", token.principal(), token.expires_at());
    /// # Ok(()) }
    /// ```
    pub fn new(config: ClientCredentialsConfig) -> Self {
        Self { config }
    }

    /// One attempt: the bearer string.
    async fn fetch_once(&self) -> Result<String, TokenError> {
        let c = &self.config;
        if let Some(path) = c.token_endpoint_url.strip_prefix("file:") {
            let path = path.strip_prefix("//").unwrap_or(path);
            // A small local file: read in place.
            return std::fs::read_to_string(path)
                .map(|s| s.trim().to_string())
                .map_err(|e| TokenError::Unavailable {
                    message: format!("reading the token file {path}: {e}"),
                });
        }
        let url = HttpUrl::parse(&c.token_endpoint_url)
            .map_err(|message| TokenError::Config { message })?;
        let authorization =
            basic_authorization(&c.client_id, c.client_secret.expose(), c.header_urlencode);
        let body = request_body(c.scope.as_deref());
        let headers = [
            ("Accept", "application/json"),
            ("Cache-Control", "no-cache"),
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Authorization", authorization.as_str()),
        ];
        // One request per connection, as Java's login callback does.
        let http = HttpClient::new(HttpConfig {
            connect_timeout: c.connect_timeout,
            request_timeout: c.read_timeout,
            max_response_bytes: 1 << 20,
            max_idle_per_host: 0,
            tls: c.tls.clone(),
            ..HttpConfig::default()
        });
        let response = http
            .request(Method::Post, &url, &headers, body.as_bytes())
            .await
            .map_err(|e| match e {
                HttpError::Config(message) => TokenError::Config { message },
                e => TokenError::Unavailable {
                    message: e.to_string(),
                },
            })?;
        parse_token_response(response.status, &response.body)
    }
}

impl TokenProvider for ClientCredentialsProvider {
    async fn token(&self) -> Result<Token, TokenError> {
        let c = &self.config;
        let end = Instant::now() + c.retry_backoff_max;
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            match self.fetch_once().await {
                Ok(jwt) => {
                    let mut token = token_from_jwt(&jwt, &c.sub_claim_name, SystemTime::now())?;
                    for (k, v) in &c.extensions {
                        token = token.with_extension(k, v);
                    }
                    return Ok(token);
                }
                Err(e) if e.is_retriable() => {
                    let wait = retry_wait(attempt, c.retry_backoff);
                    if Instant::now() + wait > end {
                        tracing::warn!(error = %e, attempt, "token endpoint failed; retry budget spent");
                        return Err(e);
                    }
                    tracing::debug!(error = %e, attempt, ?wait, "token endpoint failed; retrying");
                    tokio::time::sleep(wait).await;
                }
                Err(e) => return Err(e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kafka's `ClientSecretRequestFormatterTest` vectors.
    #[test]
    fn authorization_header_matches_kafkas_vectors() {
        assert_eq!(
            basic_authorization(
                "SOME_RANDOM_LONG_USER_01234",
                "9Q|0`8i~ute-n9ksjLWb\\50\"AX@UUED5E",
                false
            ),
            "Basic U09NRV9SQU5ET01fTE9OR19VU0VSXzAxMjM0OjlRfDBgOGl+dXRlLW45a3NqTFdiXDUwIkFYQFVVRUQ1RQ=="
        );
        assert_eq!(
            basic_authorization("user!@~'", "secret-(*)!", true),
            "Basic dXNlciUyMSU0MCU3RSUyNzpzZWNyZXQtJTI4KiUyOSUyMQ=="
        );
    }

    #[test]
    fn body_form_encodes_the_scope() {
        assert_eq!(request_body(None), "grant_type=client_credentials");
        assert_eq!(request_body(Some(" ")), "grant_type=client_credentials");
        assert_eq!(
            request_body(Some("earth is great!")),
            "grant_type=client_credentials&scope=earth+is+great%21"
        );
    }

    #[test]
    fn responses_give_the_token_or_a_typed_error() {
        assert_eq!(
            parse_token_response(200, br#"{"access_token":"a.b.c","token_type":"Bearer"}"#)
                .unwrap(),
            "a.b.c"
        );
        assert_eq!(
            parse_token_response(200, br#"{"access_token":" ","id_token":"i.d.t"}"#).unwrap(),
            "i.d.t"
        );
        assert!(matches!(
            parse_token_response(200, b"not json"),
            Err(TokenError::InvalidToken { .. })
        ));
        assert!(matches!(
            parse_token_response(200, b"{}"),
            Err(TokenError::InvalidToken { .. })
        ));
        let refused = parse_token_response(
            401,
            br#"{"error":"invalid_client","error_description":"bad secret"}"#,
        )
        .unwrap_err();
        assert_eq!(
            refused,
            TokenError::Refused {
                status: 401,
                message: "invalid_client: bad secret".into()
            }
        );
        assert!(!refused.is_retriable());
        let busy = parse_token_response(503, b"busy").unwrap_err();
        assert!(busy.is_retriable(), "{busy}");
        assert!(parse_token_response(429, b"{}").unwrap_err().is_retriable());
        assert!(parse_token_response(408, b"{}").unwrap_err().is_retriable());
    }

    #[test]
    fn retry_waits_double() {
        let b = Duration::from_millis(100);
        assert_eq!(retry_wait(1, b), b);
        assert_eq!(retry_wait(2, b), b * 2);
        assert_eq!(retry_wait(4, b), b * 8);
    }

    #[test]
    fn debug_redacts_the_secret() {
        let c = ClientCredentialsConfig::new("http://x/t", "id", "hunter2");
        assert!(!format!("{c:?}").contains("hunter2"));
    }
}
