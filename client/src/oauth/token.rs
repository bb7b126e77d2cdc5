//! The token a connection authenticates with, the trait that supplies it,
//! and why a token could not be had.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// An OAUTHBEARER token: the bearer string, when it expires, the principal
/// it names and the SASL extensions sent beside it (RFC 7628 §3.1).
///
/// `Debug` never prints the bearer string.
#[derive(Clone, PartialEq, Eq)]
pub struct Token {
    /// The bearer string (a JWT, or an opaque token such as an MSK IAM one).
    value: String,
    /// When the token stops being valid; the broker ends the session then.
    expires_at: SystemTime,
    /// When the token was issued (the JWT's `iat`), if known: the refresh
    /// window is measured from it.
    issued_at: Option<SystemTime>,
    /// The principal the token names (the JWT's `sub`).
    principal: String,
    /// SASL extensions (`key=value` pairs after the token).
    extensions: BTreeMap<String, String>,
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Token")
            .field("value", &"<redacted>")
            .field("expires_at", &self.expires_at)
            .field("issued_at", &self.issued_at)
            .field("principal", &self.principal)
            .field("extensions", &self.extensions.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Token {
    /// A token `value` for `principal`, valid until `expires_at`, without
    /// extensions.
    ///
    /// ```
    /// use kafka_client::oauth::Token;
    /// use std::time::{Duration, SystemTime};
    /// let token = Token::new("eyJ...", SystemTime::now() + Duration::from_secs(900), "svc-orders")
    ///     .with_extension("logicalCluster", "lkc-123");
    /// assert!(!format!("{token:?}").contains("eyJ")); // never logged
    /// ```
    pub fn new(
        value: impl Into<String>,
        expires_at: SystemTime,
        principal: impl Into<String>,
    ) -> Self {
        Self {
            value: value.into(),
            expires_at,
            issued_at: None,
            principal: principal.into(),
            extensions: BTreeMap::new(),
        }
    }

    /// Adds a SASL extension (checked when the message is built: key
    /// `[A-Za-z]+` other than `auth`, value printable ASCII).
    pub fn with_extension(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.extensions.insert(key.into(), value.into());
        self
    }

    /// Sets when the token was issued.
    pub fn with_issued_at(mut self, issued_at: SystemTime) -> Self {
        self.issued_at = Some(issued_at);
        self
    }

    /// The bearer string (handle with care: it is a credential).
    pub fn value(&self) -> &str {
        &self.value
    }

    /// When the token expires.
    pub fn expires_at(&self) -> SystemTime {
        self.expires_at
    }

    /// When the token was issued, if known.
    pub fn issued_at(&self) -> Option<SystemTime> {
        self.issued_at
    }

    /// The principal the token names.
    pub fn principal(&self) -> &str {
        &self.principal
    }

    /// The SASL extensions.
    pub fn extensions(&self) -> &BTreeMap<String, String> {
        &self.extensions
    }

    /// The time left before expiry at `now` (zero once expired).
    pub fn remaining(&self, now: SystemTime) -> Duration {
        self.expires_at.duration_since(now).unwrap_or_default()
    }
}

/// Why no token could be had. Cloneable: one failed fetch answers every
/// connection that waited for it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// The token endpoint could not be reached, timed out or answered a
    /// server error: retriable; check the endpoint's health if it lasts.
    #[error("token endpoint unavailable: {message}")]
    Unavailable {
        /// What failed (never a secret).
        message: String,
    },
    /// The token endpoint refused the request (HTTP 4xx such as 401: wrong
    /// client id or secret, unknown scope): fix the credentials.
    #[error("token endpoint refused the request (HTTP {status}): {message}")]
    Refused {
        /// The HTTP status.
        status: u16,
        /// The endpoint's `error` / `error_description`, or the body's start.
        message: String,
    },
    /// The token obtained is unusable: not a JWT, no `exp` or `sub` claim,
    /// already expired, or not a valid bearer string. Fix the identity
    /// provider's client settings.
    #[error("invalid token: {message}")]
    InvalidToken {
        /// What is wrong with it.
        message: String,
    },
    /// The token settings are unusable (a bad URL, an https endpoint without
    /// trusted CAs): fix the configuration.
    #[error("token provider misconfigured: {message}")]
    Config {
        /// What is wrong.
        message: String,
    },
    /// A failure reported by an application's own [`TokenProvider`].
    #[error("token provider failed: {message}")]
    Provider {
        /// The provider's message.
        message: String,
        /// Whether asking again may succeed.
        retriable: bool,
    },
}

impl TokenError {
    /// True when asking again (after a pause) may succeed.
    pub fn is_retriable(&self) -> bool {
        match self {
            TokenError::Unavailable { .. } => true,
            TokenError::Provider { retriable, .. } => *retriable,
            _ => false,
        }
    }
}

/// A source of OAUTHBEARER tokens: implement it for your identity
/// provider, or use the built-in ones ([`ClientCredentialsProvider`](crate::oauth::ClientCredentialsProvider)
/// for OIDC client credentials, [`UnsecuredTokenProvider`](crate::oauth::UnsecuredTokenProvider)
/// for development brokers).
///
/// Each call returns a token valid now. The client calls it when a
/// connection authenticates or re-authenticates and, through a
/// [`RefreshingTokenProvider`](crate::oauth::RefreshingTokenProvider),
/// ahead of expiry in the background; a provider need not cache.
///
/// ```
/// use kafka_client::oauth::{Token, TokenError, TokenProvider};
/// use std::time::{Duration, SystemTime};
///
/// /// Tokens from a file that a sidecar rewrites.
/// #[derive(Debug)]
/// struct SidecarFile(std::path::PathBuf);
///
/// impl TokenProvider for SidecarFile {
///     async fn token(&self) -> Result<Token, TokenError> {
///         let jwt = tokio::fs::read_to_string(&self.0).await.map_err(|e| TokenError::Provider {
///             message: format!("reading {}: {e}", self.0.display()),
///             retriable: true,
///         })?;
///         // Opaque tokens are fine too: the client needs only the expiry and principal.
///         Ok(Token::new(jwt.trim(), SystemTime::now() + Duration::from_secs(300), "svc-orders"))
///     }
/// }
/// ```
pub trait TokenProvider: fmt::Debug + Send + Sync + 'static {
    /// A token valid now, or why there is none.
    fn token(&self) -> impl Future<Output = Result<Token, TokenError>> + Send;
}

/// The object-safe form of [`TokenProvider`].
trait DynTokenProvider: fmt::Debug + Send + Sync + 'static {
    fn token_boxed(&self) -> Pin<Box<dyn Future<Output = Result<Token, TokenError>> + Send + '_>>;
}

impl<T: TokenProvider> DynTokenProvider for T {
    fn token_boxed(&self) -> Pin<Box<dyn Future<Output = Result<Token, TokenError>> + Send + '_>> {
        Box::pin(self.token())
    }
}

/// A [`TokenProvider`] shared by every connection of a client (cheap to
/// clone; equal when it is the same provider).
#[derive(Clone)]
pub struct SharedTokenProvider(Arc<dyn DynTokenProvider>);

impl SharedTokenProvider {
    /// Shares `provider`.
    ///
    /// ```
    /// use kafka_client::oauth::{SharedTokenProvider, UnsecuredTokenProvider};
    /// use kafka_client::SaslConfig;
    /// let provider = SharedTokenProvider::new(UnsecuredTokenProvider::new("alice"));
    /// let sasl = SaslConfig::oauth_bearer(provider.clone());
    /// assert_eq!(sasl.mechanism_name(), "OAUTHBEARER");
    /// ```
    pub fn new(provider: impl TokenProvider) -> Self {
        Self(Arc::new(provider))
    }

    /// A token from the provider.
    pub async fn token(&self) -> Result<Token, TokenError> {
        self.0.token_boxed().await
    }
}

impl fmt::Debug for SharedTokenProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl PartialEq for SharedTokenProvider {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for SharedTokenProvider {}

impl TokenProvider for SharedTokenProvider {
    async fn token(&self) -> Result<Token, TokenError> {
        self.0.token_boxed().await
    }
}
