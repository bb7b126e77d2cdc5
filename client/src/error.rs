//! Typed errors of the connection and cluster layer.

use kafka_proto::{ApiKey, DecodeError, EncodeError, ErrorCode, VersionRange};
use std::time::Duration;

/// An error on one broker connection.
///
/// A caller's retry policy reads it in three questions:
/// 1. may retrying help ([`is_retriable`](Self::is_retriable))? If not, give up;
/// 2. may the request have taken effect ([`outcome_unknown`](Self::outcome_unknown))?
///    Then retry only what is idempotent, or first learn the outcome (a
///    transaction's state, a producer's sequence);
/// 3. otherwise retry, on a new connection when this one is gone.
///
/// ```
/// use kafka_client::ConnError;
/// use kafka_proto::ApiKey;
///
/// enum Next { GiveUp, LearnOutcomeFirst, Retry }
/// fn next(e: &ConnError) -> Next {
///     if !e.is_retriable() {
///         Next::GiveUp
///     } else if e.outcome_unknown() {
///         Next::LearnOutcomeFirst
///     } else {
///         Next::Retry
///     }
/// }
/// let timed_out = ConnError::Timeout {
///     api: ApiKey::EndTxn,
///     version: 4,
///     correlation_id: 7,
///     after: std::time::Duration::from_secs(30),
/// };
/// assert!(matches!(next(&timed_out), Next::LearnOutcomeFirst)); // the EndTxn may have been applied
/// ```
///
/// Every error says whether retrying may help ([`ConnError::is_retriable`]),
/// whether the request may have reached the broker and taken effect
/// ([`ConnError::outcome_unknown`]), and, where one applies, which API and
/// version it happened in ([`ConnError::api`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConnError {
    /// The TCP connection could not be established (retriable).
    #[error("cannot connect to {addr}: {source}")]
    Connect {
        /// The address dialled.
        addr: String,
        /// The IO error.
        #[source]
        source: std::io::Error,
    },
    /// The TCP connection (including ApiVersions and SASL) took longer than
    /// the connect timeout (retriable).
    #[error("connecting to {addr} timed out after {after:?}")]
    ConnectTimeout {
        /// The address dialled.
        addr: String,
        /// The configured bound.
        after: Duration,
    },
    /// No response within the request timeout. The request may or may not
    /// have been applied by the broker: **the outcome is unknown**. The
    /// connection is closed, as the Java client does (retriable).
    #[error(
        "{api:?} v{version} (correlation id {correlation_id}) timed out after {after:?}; outcome unknown"
    )]
    Timeout {
        /// The API of the request.
        api: ApiKey,
        /// Its version.
        version: i16,
        /// Its correlation id.
        correlation_id: i32,
        /// The timeout that elapsed.
        after: Duration,
    },
    /// The connection closed (by the peer, an IO error, a protocol error or
    /// [`crate::Connection::close`]) before the response arrived. If the
    /// request had been written, the outcome is unknown (retriable).
    #[error("connection to {addr} closed{}: {reason}", api.map(|(a, v)| format!(" during {a:?} v{v}")).unwrap_or_default())]
    Disconnected {
        /// The peer address.
        addr: String,
        /// The API and version of the request that failed, if any.
        api: Option<(ApiKey, i16)>,
        /// Why the connection closed.
        reason: String,
    },
    /// A request could not be encoded (a bug or a field the version cannot
    /// carry; fatal for this request).
    #[error("cannot encode request: {0}")]
    Encode(#[from] EncodeError),
    /// A response could not be decoded (fatal; the connection is closed).
    #[error("cannot decode {api:?} v{version} response: {source}")]
    Decode {
        /// The API of the response.
        api: ApiKey,
        /// Its version.
        version: i16,
        /// The decoder error.
        #[source]
        source: DecodeError,
    },
    /// The broker and this client share no version of an API (fatal).
    #[error("no common version of {api:?}: client {client:?}, broker {broker:?}")]
    UnsupportedVersion {
        /// The API.
        api: ApiKey,
        /// The versions this client implements.
        client: VersionRange,
        /// The broker's range, `None` if it does not support the API at all.
        broker: Option<VersionRange>,
    },
    /// ApiVersions failed with an error code (fatal for this connection).
    #[error("ApiVersions v{version} failed: {error:?}")]
    ApiVersions {
        /// The ApiVersions version sent.
        version: i16,
        /// The broker's error.
        error: ErrorCode,
    },
    /// The broker does not enable the SASL mechanism (fatal).
    #[error("SASL mechanism {mechanism} is not enabled on the broker (enabled: {enabled:?})")]
    UnsupportedSaslMechanism {
        /// The mechanism asked for.
        mechanism: String,
        /// The mechanisms the broker enables.
        enabled: Vec<String>,
    },
    /// SASL authentication failed: wrong credentials, a failed server
    /// signature check or a malformed server message (fatal).
    #[error("SASL authentication failed: {message}")]
    AuthenticationFailed {
        /// The broker's error message or the client-side reason.
        message: String,
    },
    /// No OAUTHBEARER token could be had from the token provider (an
    /// identity provider down, refusing the client's credentials, or
    /// handing out an unusable token). Retriable when the provider's
    /// failure is ([`TokenError::is_retriable`](crate::oauth::TokenError::is_retriable)).
    #[error("no OAUTHBEARER token for {addr}: {source}")]
    Token {
        /// The broker the token was for.
        addr: String,
        /// Why the provider had none.
        #[source]
        source: crate::oauth::TokenError,
    },
    /// The TLS handshake failed. An `InvalidData` source is rustls refusing
    /// the peer (an untrusted or mismatched certificate, a TLS alert such as
    /// a rejected client certificate, a protocol error): fatal. Any other
    /// kind is an IO failure during the handshake (retriable).
    #[error("TLS handshake with {addr} failed: {source}")]
    Tls {
        /// The address dialled.
        addr: String,
        /// The handshake error (rustls errors have kind `InvalidData`).
        #[source]
        source: std::io::Error,
    },
    /// The TLS settings are unusable (bad PEM, a key without its
    /// certificate, an invalid server name) or this build lacks the `tls`
    /// cargo feature (fatal).
    #[error("invalid TLS configuration: {message}")]
    InvalidTlsConfig {
        /// What is wrong.
        message: String,
    },
    /// A broker-level error code answered a connection-setup request
    /// (SaslHandshake or SaslAuthenticate) (fatal unless the code is retriable).
    #[error("{api:?} v{version} failed: {error:?}{}", message.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    Broker {
        /// The API.
        api: ApiKey,
        /// Its version.
        version: i16,
        /// The error code.
        error: ErrorCode,
        /// The broker's message, if any.
        message: Option<String>,
    },
}

impl ConnError {
    /// True when retrying (possibly on a new connection) may succeed.
    pub fn is_retriable(&self) -> bool {
        match self {
            ConnError::Connect { .. }
            | ConnError::ConnectTimeout { .. }
            | ConnError::Timeout { .. }
            | ConnError::Disconnected { .. } => true,
            ConnError::Broker { error, .. } => error.is_retriable(),
            ConnError::Token { source, .. } => source.is_retriable(),
            ConnError::Tls { source, .. } => source.kind() != std::io::ErrorKind::InvalidData,
            _ => false,
        }
    }

    /// True when nothing but a code change or a configuration change can
    /// fix it (e.g. a broker too old for an API: upgrade it).
    pub fn is_fatal(&self) -> bool {
        !self.is_retriable()
    }

    /// True when the request may have been applied by the broker although no
    /// response was seen (a timeout or a disconnect with a request in flight).
    pub fn outcome_unknown(&self) -> bool {
        matches!(
            self,
            ConnError::Timeout { .. } | ConnError::Disconnected { api: Some(_), .. }
        )
    }

    /// The API and version involved, if any.
    pub fn api(&self) -> Option<(ApiKey, i16)> {
        match self {
            ConnError::Timeout { api, version, .. }
            | ConnError::Decode { api, version, .. }
            | ConnError::Broker { api, version, .. } => Some((*api, *version)),
            ConnError::ApiVersions { version, .. } => Some((ApiKey::ApiVersions, *version)),
            ConnError::Disconnected { api, .. } => *api,
            ConnError::Encode(e) => e.api.map(|a| (a, e.version.unwrap_or(-1))),
            ConnError::UnsupportedVersion { api, .. } => Some((*api, -1)),
            _ => None,
        }
    }
}

/// An error of the cluster layer: bootstrap, metadata and broker lookup.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClusterError {
    /// Every bootstrap address / known broker failed (retriable).
    #[error("no broker reachable; attempts: {}", attempts.iter().map(|(a, e)| format!("{a}: {e}")).collect::<Vec<_>>().join("; "))]
    NoBrokerAvailable {
        /// Each address tried and its error.
        attempts: Vec<(String, ConnError)>,
    },
    /// A connection error.
    #[error(transparent)]
    Conn(#[from] ConnError),
    /// Metadata answered with a top-level error (v13+), e.g. REBOOTSTRAP_REQUIRED.
    #[error("Metadata v{version} failed: {error:?}")]
    Metadata {
        /// The Metadata version.
        version: i16,
        /// The error code.
        error: ErrorCode,
    },
    /// A node id not present in the cached metadata (retriable after a refresh).
    #[error("unknown broker node id {0}")]
    UnknownBroker(i32),
    /// A bootstrap address is malformed (fatal).
    #[error("invalid bootstrap address {0:?}: expected host:port")]
    InvalidAddress(String),
}

impl ClusterError {
    /// True when retrying may succeed (an unknown broker after a metadata
    /// refresh, REBOOTSTRAP_REQUIRED after a rebootstrap).
    pub fn is_retriable(&self) -> bool {
        match self {
            ClusterError::NoBrokerAvailable { .. } | ClusterError::UnknownBroker(_) => true,
            ClusterError::Conn(e) => e.is_retriable(),
            ClusterError::Metadata { error, .. } => {
                error.is_retriable() || *error == ErrorCode::RebootstrapRequired
            }
            ClusterError::InvalidAddress(_) => false,
        }
    }
}

/// A failed request: the cluster (connection, metadata) failed, or the
/// broker answered with an error code. The request helpers
/// ([`requests`](crate::requests)), the coordinator lookup and the admin
/// functions return it; callers decide from [`Self::is_retriable`] whether to
/// try again within their own deadline.
///
/// ```
/// use kafka_client::RequestError;
/// use kafka_proto::{ApiKey, ErrorCode};
/// let e = RequestError::Broker {
///     api: ApiKey::FindCoordinator,
///     version: 4,
///     error: ErrorCode::CoordinatorNotAvailable,
///     message: None,
/// };
/// assert!(e.is_retriable());
/// assert_eq!(e.to_string(), "FindCoordinator v4 failed: COORDINATOR_NOT_AVAILABLE");
/// ```
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// Cluster or connection failure.
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    /// The broker answered with an error code.
    #[error("{api:?} v{version} failed: {}{}", error.name(), message.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    Broker {
        /// The API.
        api: ApiKey,
        /// Its version.
        version: i16,
        /// The error.
        error: ErrorCode,
        /// The broker's message.
        message: Option<String>,
    },
}

impl From<ConnError> for RequestError {
    fn from(e: ConnError) -> Self {
        RequestError::Cluster(ClusterError::Conn(e))
    }
}

impl RequestError {
    /// True when retrying may help.
    ///
    /// ```
    /// use kafka_client::RequestError;
    /// use kafka_proto::{ApiKey, ErrorCode};
    /// let fatal = RequestError::Broker {
    ///     api: ApiKey::DescribeConfigs,
    ///     version: 4,
    ///     error: ErrorCode::ClusterAuthorizationFailed,
    ///     message: None,
    /// };
    /// assert!(!fatal.is_retriable());
    /// ```
    pub fn is_retriable(&self) -> bool {
        match self {
            RequestError::Cluster(e) => e.is_retriable(),
            RequestError::Broker { error, .. } => error.is_retriable(),
        }
    }

    /// The broker error code, if any.
    ///
    /// ```
    /// use kafka_client::RequestError;
    /// use kafka_proto::{ApiKey, ErrorCode};
    /// let e = RequestError::Broker {
    ///     api: ApiKey::FindCoordinator,
    ///     version: 4,
    ///     error: ErrorCode::NotCoordinator,
    ///     message: None,
    /// };
    /// assert_eq!(e.error_code(), Some(ErrorCode::NotCoordinator));
    /// ```
    pub fn error_code(&self) -> Option<ErrorCode> {
        match self {
            RequestError::Broker { error, .. } => Some(*error),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn disconnected(api: Option<(ApiKey, i16)>) -> ConnError {
        ConnError::Disconnected {
            addr: "broker-1:9092".into(),
            api,
            reason: "reset".into(),
        }
    }

    fn timeout(api: ApiKey, version: i16) -> ConnError {
        ConnError::Timeout {
            api,
            version,
            correlation_id: 7,
            after: Duration::from_secs(30),
        }
    }

    #[test]
    fn timeout_is_retriable_with_unknown_outcome_and_names_its_api() {
        let e = timeout(ApiKey::Produce, 11);
        assert!(e.is_retriable() && e.outcome_unknown());
        assert_eq!(e.api(), Some((ApiKey::Produce, 11)));
    }

    #[test]
    fn authentication_failure_is_fatal_and_names_no_api() {
        let e = ConnError::AuthenticationFailed {
            message: "bad password".into(),
        };
        assert!(!e.is_retriable() && e.is_fatal());
        assert_eq!(e.api(), None);
    }

    #[test]
    fn unsupported_version_is_fatal() {
        let e = ConnError::UnsupportedVersion {
            api: ApiKey::DescribeProducers,
            client: VersionRange::new(0, 0),
            broker: None,
        };
        assert!(e.is_fatal());
    }

    #[test]
    fn disconnect_outcome_is_unknown_only_with_a_request_in_flight() {
        assert!(disconnected(Some((ApiKey::EndTxn, 4))).outcome_unknown());
        assert!(!disconnected(None).outcome_unknown());
    }

    #[test]
    fn api_versions_error_names_api_versions_and_its_version() {
        let e = ConnError::ApiVersions {
            version: 3,
            error: ErrorCode::UnsupportedVersion,
        };
        assert_eq!(e.api(), Some((ApiKey::ApiVersions, 3)));
    }

    #[test]
    fn cluster_no_broker_and_unknown_broker_are_retriable() {
        assert!(ClusterError::NoBrokerAvailable { attempts: vec![] }.is_retriable());
        assert!(ClusterError::UnknownBroker(4).is_retriable());
    }

    #[test]
    fn cluster_rebootstrap_required_is_retriable() {
        let e = ClusterError::Metadata {
            version: 13,
            error: ErrorCode::RebootstrapRequired,
        };
        assert!(e.is_retriable());
    }

    #[test]
    fn cluster_invalid_address_is_fatal() {
        assert!(!ClusterError::InvalidAddress("localhost".into()).is_retriable());
    }
}
