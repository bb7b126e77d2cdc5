//! An OAUTHBEARER setup for tests: a JWT issuer whose RS256 key the broker
//! trusts through a JWKS file (Kafka's own `OAuthBearerValidatorCallbackHandler`
//! validates every token), and an OIDC token endpoint (client credentials)
//! that tests can make fail, stall or hand out bad tokens.
//!
//! ```no_run
//! # async fn demo() -> Result<(), kafka_testcontainers::HarnessError> {
//! use kafka_testcontainers::oauth::{JwtIssuer, TokenEndpoint};
//! use kafka_testcontainers::{KafkaCluster, SaslConfig};
//! use std::sync::Arc;
//! use std::time::Duration;
//! let issuer = Arc::new(JwtIssuer::new()?);
//! let cluster = KafkaCluster::builder()
//!     .sasl(SaslConfig::default())
//!     .oauth_bearer(&issuer, Some(Duration::from_secs(3)))
//!     .start()
//!     .await?;
//! let endpoint = TokenEndpoint::start(issuer.clone(), "client", "secret", Duration::from_secs(5)).await?;
//! // Clients: sasl.mechanism=OAUTHBEARER, sasl.oauthbearer.token.endpoint.url=endpoint.url(), ...
//! # let _ = (cluster, endpoint);
//! # Ok(()) }
//! ```

use crate::Result;
use crate::cluster::KafkaClusterBuilder;
use crate::error::{HarnessError, IoContext};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD as B64, URL_SAFE_NO_PAD as B64URL};
use rsa::RsaPrivateKey;
use rsa::pkcs1v15::SigningKey;
use rsa::signature::{SignatureEncoding, Signer};
use rsa::traits::PublicKeyParts;
use sha2::Sha256;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// The `iss` the broker expects.
pub const ISSUER: &str = "https://idp.kafka-eos.test/";
/// The `aud` the broker expects.
pub const AUDIENCE: &str = "kafka-eos-test";
/// The key id in the JWKS and in every token's header.
const KID: &str = "kafka-eos-test-key";

/// A JWT signer with an RS256 key, and the JWKS file the broker reads.
pub struct JwtIssuer {
    /// Signs the tokens the broker trusts.
    key: SigningKey<Sha256>,
    /// A second key the broker does not know (wrongly signed tokens).
    stranger: SigningKey<Sha256>,
    /// The JWKS file (removed on drop).
    jwks_path: PathBuf,
}

impl std::fmt::Debug for JwtIssuer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtIssuer")
            .field("jwks_path", &self.jwks_path)
            .finish_non_exhaustive()
    }
}

impl Drop for JwtIssuer {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.jwks_path);
    }
}

/// What a minted token claims.
#[derive(Debug, Clone)]
pub struct Claims {
    /// `sub`: the principal.
    pub subject: String,
    /// `iat`.
    pub issued_at: SystemTime,
    /// `exp`.
    pub expires_at: SystemTime,
    /// `iss`.
    pub issuer: String,
    /// `aud`.
    pub audience: String,
}

impl Claims {
    /// Claims the broker accepts: `subject`, issued now, valid `lifetime`.
    pub fn valid(subject: &str, lifetime: Duration) -> Self {
        let now = SystemTime::now();
        Self {
            subject: subject.into(),
            issued_at: now,
            expires_at: now + lifetime,
            issuer: ISSUER.into(),
            audience: AUDIENCE.into(),
        }
    }
}

fn secs(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs()
}

fn rsa_key() -> Result<RsaPrivateKey> {
    let mut rng = rsa::rand_core::OsRng;
    RsaPrivateKey::new(&mut rng, 2048)
        .map_err(|e| HarnessError::Config(format!("generating an RSA key: {e}")))
}

impl JwtIssuer {
    /// Two fresh 2048-bit RSA keys (one trusted, one not), and the JWKS
    /// file of the trusted one in the system temporary directory.
    ///
    /// ```no_run
    /// # fn demo() -> Result<(), kafka_testcontainers::HarnessError> {
    /// use kafka_testcontainers::oauth::{Claims, JwtIssuer};
    /// use std::time::Duration;
    /// let issuer = JwtIssuer::new()?;
    /// let jwt = issuer.mint(&Claims::valid("alice", Duration::from_secs(60)));
    /// assert_eq!(jwt.split('.').count(), 3);
    /// # Ok(()) }
    /// ```
    pub fn new() -> Result<Self> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let key = rsa_key()?;
        let stranger = rsa_key()?;
        let public = key.to_public_key();
        let jwks = serde_json::json!({
            "keys": [{
                "kty": "RSA",
                "kid": KID,
                "use": "sig",
                "alg": "RS256",
                "n": B64URL.encode(public.n().to_bytes_be()),
                "e": B64URL.encode(public.e().to_bytes_be()),
            }]
        });
        let jwks_path = std::env::temp_dir().join(format!(
            "kafka-eos-jwks-{}-{}.json",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::write(&jwks_path, jwks.to_string())
            .ctx(|| format!("writing {}", jwks_path.display()))?;
        Ok(Self {
            key: SigningKey::new(key),
            stranger: SigningKey::new(stranger),
            jwks_path,
        })
    }

    /// The JWKS URL the broker is given (`file:/abs/path`, as Kafka's own
    /// tests write it); also the value of the allowed-URLs system property.
    pub fn jwks_url(&self) -> String {
        format!("file:{}", self.jwks_path.display())
    }

    /// A token with `claims`, signed by the trusted key.
    pub fn mint(&self, claims: &Claims) -> String {
        self.sign(claims, &self.key)
    }

    /// A token with `claims`, signed by a key the broker does not trust.
    pub fn mint_wrongly_signed(&self, claims: &Claims) -> String {
        self.sign(claims, &self.stranger)
    }

    fn sign(&self, claims: &Claims, key: &SigningKey<Sha256>) -> String {
        let header = serde_json::json!({"alg": "RS256", "typ": "JWT", "kid": KID});
        let payload = serde_json::json!({
            "sub": claims.subject,
            "iat": secs(claims.issued_at),
            "exp": secs(claims.expires_at),
            "iss": claims.issuer,
            "aud": claims.audience,
            "scope": "kafka",
        });
        let signing_input = format!(
            "{}.{}",
            B64URL.encode(header.to_string()),
            B64URL.encode(payload.to_string())
        );
        let signature = key.sign(signing_input.as_bytes()).to_bytes();
        format!("{signing_input}.{}", B64URL.encode(signature))
    }

    /// The broker properties of an OAUTHBEARER CLIENT listener validating
    /// this issuer's tokens, and `connections.max.reauth.ms` for every
    /// mechanism when given.
    pub fn broker_config(&self, max_reauth: Option<Duration>) -> Vec<(String, String)> {
        let p = "listener.name.client.oauthbearer.";
        let mut c =
            vec![
            (
                "sasl.enabled.mechanisms".to_string(),
                "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER".to_string(),
            ),
            (
                format!("{p}sasl.jaas.config"),
                "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required ;"
                    .into(),
            ),
            (
                format!("{p}sasl.server.callback.handler.class"),
                "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"
                    .into(),
            ),
            (format!("{p}sasl.oauthbearer.jwks.endpoint.url"), self.jwks_url()),
            (format!("{p}sasl.oauthbearer.expected.audience"), AUDIENCE.into()),
            (format!("{p}sasl.oauthbearer.expected.issuer"), ISSUER.into()),
            (format!("{p}sasl.oauthbearer.clock.skew.seconds"), "0".into()),
        ];
        if let Some(reauth) = max_reauth {
            let ms = reauth.as_millis().to_string();
            for m in ["oauthbearer", "plain", "scram-sha-256", "scram-sha-512"] {
                c.push((
                    format!("listener.name.client.{m}.connections.max.reauth.ms"),
                    ms.clone(),
                ));
            }
        }
        c
    }
}

impl KafkaClusterBuilder {
    /// Adds OAUTHBEARER to the SASL CLIENT listener (set [`Self::sasl`]
    /// too: the readiness check logs in with PLAIN): Kafka's
    /// `OAuthBearerValidatorCallbackHandler` checks every token against
    /// `issuer`'s JWKS, issuer and audience. With `max_reauth`, every
    /// mechanism's sessions last at most that long (KIP-368
    /// `connections.max.reauth.ms`).
    pub fn oauth_bearer(mut self, issuer: &JwtIssuer, max_reauth: Option<Duration>) -> Self {
        for (k, v) in issuer.broker_config(max_reauth) {
            self = self.broker_config(k, v);
        }
        self.jvm_arg(format!(
            "-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls={}",
            issuer.jwks_url()
        ))
    }
}

/// How the [`TokenEndpoint`] answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Behaviour {
    /// Valid tokens of the endpoint's lifetime.
    Issue,
    /// This HTTP status with an RFC 6749 error body.
    Fail(u16),
    /// Accepts the request and never answers.
    Stall,
    /// 200 with a body that is not a token response.
    Malformed,
    /// A token signed by a key the broker does not trust.
    WronglySigned,
    /// A token that expired a minute ago.
    Expired,
}

/// What the endpoint shares with its task.
#[derive(Debug)]
struct EndpointState {
    /// How to answer.
    behaviour: Mutex<Behaviour>,
    /// Requests received.
    requests: AtomicU64,
    /// Valid tokens issued.
    issued: AtomicU64,
}

/// An OIDC token endpoint on 127.0.0.1 (client credentials grant over
/// plain HTTP), issuing tokens from a [`JwtIssuer`]; stops on drop.
#[derive(Debug)]
pub struct TokenEndpoint {
    /// `http://127.0.0.1:<port>/oauth2/token`.
    url: String,
    /// Shared with the server task.
    state: Arc<EndpointState>,
    /// The server task.
    task: tokio::task::JoinHandle<()>,
}

impl Drop for TokenEndpoint {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl TokenEndpoint {
    /// Serves tokens of `lifetime` for `client_id` / `client_secret` (HTTP
    /// Basic, as Java sends them); other credentials get 401.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), kafka_testcontainers::HarnessError> {
    /// use kafka_testcontainers::oauth::{Behaviour, JwtIssuer, TokenEndpoint};
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// let issuer = Arc::new(JwtIssuer::new()?);
    /// let endpoint = TokenEndpoint::start(issuer, "id", "secret", Duration::from_secs(5)).await?;
    /// endpoint.set_behaviour(Behaviour::Fail(503)); // the identity provider is down
    /// # Ok(()) }
    /// ```
    pub async fn start(
        issuer: Arc<JwtIssuer>,
        client_id: &str,
        client_secret: &str,
        lifetime: Duration,
    ) -> Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .ctx(|| "binding the token endpoint".into())?;
        let port = listener
            .local_addr()
            .ctx(|| "reading the token endpoint's port".into())?
            .port();
        let state = Arc::new(EndpointState {
            behaviour: Mutex::new(Behaviour::Issue),
            requests: AtomicU64::new(0),
            issued: AtomicU64::new(0),
        });
        let expected = format!(
            "Basic {}",
            B64.encode(format!("{client_id}:{client_secret}"))
        );
        let task = tokio::spawn(serve(
            listener,
            None,
            issuer,
            state.clone(),
            expected,
            lifetime,
        ));
        Ok(Self {
            url: format!("http://127.0.0.1:{port}/oauth2/token"),
            state,
            task,
        })
    }

    /// [`Self::start`] over https: the endpoint presents the harness's
    /// broker certificate of `tls` (valid for `127.0.0.1`, signed by its
    /// CA), so clients trust it through the same `ssl.truststore.*` as the
    /// brokers. Needs the cargo feature `https`.
    ///
    /// ```no_run
    /// # async fn demo(cluster: kafka_testcontainers::KafkaCluster) -> Result<(), kafka_testcontainers::HarnessError> {
    /// use kafka_testcontainers::oauth::{JwtIssuer, TokenEndpoint};
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// let issuer = Arc::new(JwtIssuer::new()?);
    /// let tls = cluster.tls_files().expect("a TLS cluster");
    /// let endpoint = TokenEndpoint::start_https(issuer, "id", "secret", Duration::from_secs(5), tls).await?;
    /// assert!(endpoint.url().starts_with("https://127.0.0.1:"));
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "https")]
    pub async fn start_https(
        issuer: Arc<JwtIssuer>,
        client_id: &str,
        client_secret: &str,
        lifetime: Duration,
        tls: &crate::tls::TlsFiles,
    ) -> Result<Self> {
        use rustls_pki_types::pem::PemObject;
        use rustls_pki_types::{CertificateDer, PrivateKeyDer};
        use tokio_rustls::rustls;
        let bad = |what: String| HarnessError::Config(what);
        let certs = CertificateDer::pem_file_iter(&tls.broker_cert_path)
            .and_then(|i| i.collect::<std::result::Result<Vec<_>, _>>())
            .map_err(|e| bad(format!("reading {}: {e}", tls.broker_cert_path.display())))?;
        let key = PrivateKeyDer::from_pem_file(&tls.broker_key_path)
            .map_err(|e| bad(format!("reading {}: {e}", tls.broker_key_path.display())))?;
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(|e| bad(format!("TLS versions: {e}")))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| bad(format!("the token endpoint's certificate: {e}")))?;
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .ctx(|| "binding the token endpoint".into())?;
        let port = listener
            .local_addr()
            .ctx(|| "reading the token endpoint's port".into())?
            .port();
        let state = Arc::new(EndpointState {
            behaviour: Mutex::new(Behaviour::Issue),
            requests: AtomicU64::new(0),
            issued: AtomicU64::new(0),
        });
        let expected = format!(
            "Basic {}",
            B64.encode(format!("{client_id}:{client_secret}"))
        );
        let task = tokio::spawn(serve(
            listener,
            Some(acceptor),
            issuer,
            state.clone(),
            expected,
            lifetime,
        ));
        Ok(Self {
            url: format!("https://127.0.0.1:{port}/oauth2/token"),
            state,
            task,
        })
    }

    /// The URL for `sasl.oauthbearer.token.endpoint.url`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Changes how the endpoint answers from now on.
    pub fn set_behaviour(&self, behaviour: Behaviour) {
        *self
            .state
            .behaviour
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = behaviour;
    }

    /// Requests received so far.
    pub fn requests(&self) -> u64 {
        self.state.requests.load(Ordering::Relaxed)
    }

    /// Valid tokens issued so far.
    pub fn issued(&self) -> u64 {
        self.state.issued.load(Ordering::Relaxed)
    }
}

/// Without the `https` feature no acceptor can be made.
#[cfg(not(feature = "https"))]
type Acceptor = std::convert::Infallible;
/// The TLS side of an https endpoint.
#[cfg(feature = "https")]
type Acceptor = tokio_rustls::TlsAcceptor;

async fn serve(
    listener: TcpListener,
    acceptor: Option<Acceptor>,
    issuer: Arc<JwtIssuer>,
    state: Arc<EndpointState>,
    expected_authorization: String,
    lifetime: Duration,
) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let issuer = issuer.clone();
        let state = state.clone();
        let expected = expected_authorization.clone();
        // A copy without the `https` feature (`Option<Infallible>`).
        #[allow(clippy::clone_on_copy)]
        let acceptor = acceptor.clone();
        tokio::spawn(async move {
            match acceptor {
                None => answer(stream, issuer, state, expected, lifetime).await,
                #[cfg(feature = "https")]
                Some(acceptor) => {
                    // A client that does not trust the certificate hangs up here.
                    if let Ok(tls) = acceptor.accept(stream).await {
                        answer(tls, issuer, state, expected, lifetime).await;
                    }
                }
                #[cfg(not(feature = "https"))]
                Some(never) => match never {},
            }
        });
    }
}

/// Answers one request on `stream`.
async fn answer<S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin>(
    mut stream: S,
    issuer: Arc<JwtIssuer>,
    state: Arc<EndpointState>,
    expected: String,
    lifetime: Duration,
) {
    let Some((head, body)) = read_request(&mut stream).await else {
        return;
    };
    state.requests.fetch_add(1, Ordering::Relaxed);
    let behaviour = state
        .behaviour
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    let authorized = head.lines().any(|l| {
        l.split_once(':')
            .is_some_and(|(k, v)| k.eq_ignore_ascii_case("authorization") && v.trim() == expected)
    });
    let grant_ok = body
        .split('&')
        .any(|kv| kv == "grant_type=client_credentials");
    let (status, json) = if !head.starts_with("POST ") || !grant_ok {
        (400, r#"{"error":"invalid_request"}"#.to_string())
    } else if !authorized {
        (
            401,
            r#"{"error":"invalid_client","error_description":"bad client credentials"}"#
                .to_string(),
        )
    } else {
        let token = |claims: &Claims, wrong: bool| {
            let t = if wrong {
                issuer.mint_wrongly_signed(claims)
            } else {
                issuer.mint(claims)
            };
            serde_json::json!({"access_token": t, "token_type": "Bearer", "expires_in": lifetime.as_secs()}).to_string()
        };
        match behaviour {
            Behaviour::Issue => {
                state.issued.fetch_add(1, Ordering::Relaxed);
                (
                    200,
                    token(&Claims::valid("kafka-eos-client", lifetime), false),
                )
            }
            Behaviour::Fail(status) => (
                status,
                r#"{"error":"temporarily_unavailable","error_description":"test failure"}"#
                    .to_string(),
            ),
            Behaviour::Stall => {
                std::future::pending::<()>().await;
                return;
            }
            Behaviour::Malformed => (200, r#"{"token_type":"Bearer"}"#.to_string()),
            Behaviour::WronglySigned => (
                200,
                token(&Claims::valid("kafka-eos-client", lifetime), true),
            ),
            Behaviour::Expired => {
                let mut c = Claims::valid("kafka-eos-client", Duration::ZERO);
                c.issued_at -= Duration::from_secs(120);
                c.expires_at -= Duration::from_secs(60);
                (200, token(&c, false))
            }
        }
    };
    let response = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{json}",
        json.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// Reads one request: the head and the body (by Content-Length).
async fn read_request<S: tokio::io::AsyncRead + Unpin>(stream: &mut S) -> Option<(String, String)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if buf.len() > 1 << 16 {
            return None;
        }
        let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&buf[..end]).into_owned();
        let length = head
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse::<usize>().ok())?
            })
            .unwrap_or(0);
        if buf.len() >= end + 4 + length {
            let body = String::from_utf8_lossy(&buf[end + 4..end + 4 + length]).into_owned();
            return Some((head, body));
        }
    }
}
