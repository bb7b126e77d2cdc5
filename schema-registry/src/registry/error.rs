//! [`RegistryError`]: why the registry did not answer as asked, by blame.

use kafka_client::http::HttpError;

/// Why the registry did not answer as asked. Each variant says who is at
/// fault and what to do; [`RegistryError::is_retriable`] says whether
/// asking again can help, [`RegistryError::error_code`] gives Confluent's
/// code when the registry sent one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The subject does not exist (Confluent error code 40401): register
    /// a schema under it first, or check the subject name strategy.
    #[error(
        "subject {0:?} not found (40401): register a schema under it first, or check the subject name strategy"
    )]
    SubjectNotFound(String),
    /// The schema is not registered (40403, or a lookup's 40403 / 404):
    /// register it, or enable `auto.register.schemas`.
    #[error(
        "schema not found (40403): {0}; register it first (auto.register.schemas) or check the id"
    )]
    SchemaNotFound(String),
    /// The subject has no such version (40402).
    #[error(
        "version {version} of subject {subject:?} not found (40402): list the subject's versions"
    )]
    VersionNotFound {
        /// The subject.
        subject: String,
        /// The version asked for (`-1` for latest).
        version: i32,
    },
    /// The schema is incompatible with the subject's earlier versions
    /// under its compatibility level (HTTP 409, 40901): change the schema
    /// to evolve compatibly, or the subject's compatibility level.
    #[error(
        "schema incompatible with subject {subject:?} ({code}): {message}; evolve the schema compatibly or change the subject's compatibility level"
    )]
    Incompatible {
        /// The subject.
        subject: String,
        /// Confluent's code (409 or 40901).
        code: i32,
        /// The registry's explanation.
        message: String,
    },
    /// The registry cannot parse the schema or its references (42201):
    /// fix the schema text.
    #[error("invalid schema (42201): {0}; fix the schema")]
    InvalidSchema(String),
    /// A version number that is not valid (42202).
    #[error("invalid version (42202): {0}")]
    InvalidVersion(String),
    /// The registry refused the credentials (HTTP 401) or the operation
    /// (403): check `basic.auth.*` / `bearer.auth.*` and the principal's
    /// permissions.
    #[error(
        "the registry refused access (HTTP {status}, {code}): {message}; check basic.auth.* / bearer.auth.* and the permissions"
    )]
    Unauthorized {
        /// 401 or 403.
        status: u16,
        /// Confluent's code (the status when none was sent).
        code: i32,
        /// The registry's message.
        message: String,
    },
    /// Any other refusal of the request (4xx): a bad request, an operation
    /// the registry does not support; asking again will not help.
    #[error("the registry refused the request (HTTP {status}, {code}): {message}")]
    Refused {
        /// The HTTP status.
        status: u16,
        /// Confluent's code (the status when none was sent).
        code: i32,
        /// The registry's message.
        message: String,
    },
    /// The registry is unavailable or overloaded (5xx, 429) after the
    /// retries `max.retries` allows: try again later.
    #[error(
        "the registry is unavailable (HTTP {status}, {code}) after {attempts} attempts: {message}; try again later"
    )]
    Unavailable {
        /// The last HTTP status.
        status: u16,
        /// Confluent's code (the status when none was sent).
        code: i32,
        /// The registry's message.
        message: String,
        /// How many requests were sent.
        attempts: u32,
    },
    /// No registry URL could be reached (or the exchange failed) after the
    /// retries `max.retries` allows: check `schema.registry.url` and that
    /// the registry runs; retriable unless the TLS settings are at fault.
    #[error("cannot reach the schema registry after {attempts} attempts: {error}")]
    Connection {
        /// The last failure.
        error: HttpError,
        /// How many requests were tried.
        attempts: u32,
    },
    /// No bearer token could be had from `bearer.auth.issuer.endpoint.url`
    /// (OAUTHBEARER): check the issuer URL and the client credentials;
    /// retriable when the issuer was unreachable.
    #[error("no bearer token for the registry: {message}")]
    Credentials {
        /// The token provider's error.
        message: String,
        /// Whether asking again may help.
        retriable: bool,
    },
    /// The registry answered something this client cannot read (not the
    /// JSON of Confluent's API): a proxy in the way, or an incompatible
    /// registry; check `schema.registry.url`.
    #[error(
        "unreadable answer from the registry to {request}: {reason}; is schema.registry.url a Confluent-compatible registry?"
    )]
    Malformed {
        /// The request (`GET /schemas/ids/1`).
        request: String,
        /// What is wrong with the answer.
        reason: String,
    },
}

impl RegistryError {
    /// Whether asking again (later) can help: an unavailable registry, a
    /// connection failure (not one caused by the TLS settings).
    pub fn is_retriable(&self) -> bool {
        match self {
            RegistryError::Unavailable { .. } => true,
            RegistryError::Credentials { retriable, .. } => *retriable,
            RegistryError::Connection { error, .. } => error.is_retriable(),
            _ => false,
        }
    }

    /// Confluent's `error_code` for this error, when it has one.
    pub fn error_code(&self) -> Option<i32> {
        match self {
            RegistryError::SubjectNotFound(_) => Some(40401),
            RegistryError::VersionNotFound { .. } => Some(40402),
            RegistryError::SchemaNotFound(_) => Some(40403),
            RegistryError::InvalidSchema(_) => Some(42201),
            RegistryError::InvalidVersion(_) => Some(42202),
            RegistryError::Incompatible { code, .. }
            | RegistryError::Unauthorized { code, .. }
            | RegistryError::Refused { code, .. }
            | RegistryError::Unavailable { code, .. } => Some(*code),
            RegistryError::Connection { .. }
            | RegistryError::Credentials { .. }
            | RegistryError::Malformed { .. } => None,
        }
    }
}
