//! The CLI's error type and its exit codes.
//!
//! Every failure is a [`CliError`]: a message for stderr and an exit code
//! (see [`ExitCode`]). Library errors are classified by walking their typed
//! variants: an unreachable broker exits 3, an authentication or
//! authorization failure 4, a bad setting 2.

use kafka_client::{ClusterError, ConnError};
use kafka_consumer::ReaderError;
use kafka_producer::txn::{RequestError, ResumeError, TransactionError};
use kafka_producer::{ConfigError, ProduceError};
use kafka_proto::ErrorCode;
use std::fmt;

/// The process exit codes (documented in `kafka-eos --help`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    /// 1: the command failed (a delivery, a broker error, bad input data).
    Failure = 1,
    /// 2: bad command line or setting (`-X key=value`, flags).
    Usage = 2,
    /// 3: no broker reachable at the bootstrap addresses.
    Unreachable = 3,
    /// 4: authentication (SASL) or authorization failed.
    Auth = 4,
    /// 5: a prepared transaction's data is lost or its outcome unknowable
    /// (`AbortedByBroker`, `Fenced`).
    TransactionLost = 5,
    /// 6: a commit's outcome is unknown (it timed out or the producer was
    /// fenced while committing); `txn describe` tells what happened.
    TransactionOutcomeUnknown = 6,
    /// 130: interrupted (Ctrl-C).
    Interrupted = 130,
}

/// A failure of a command: what to print and how to exit.
#[derive(Debug)]
pub struct CliError {
    /// The exit code.
    pub code: ExitCode,
    /// The message (without the `kafka-eos: error:` prefix).
    pub message: String,
}

/// The result type of every command.
pub type CliResult<T> = Result<T, CliError>;

impl CliError {
    /// An error with an explicit exit code.
    pub fn new(code: ExitCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    /// A usage error (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Self::new(ExitCode::Usage, message)
    }

    /// A command failure (exit 1).
    pub fn failure(message: impl Into<String>) -> Self {
        Self::new(ExitCode::Failure, message)
    }

    /// Prefixes the message with what was being done.
    pub fn context(mut self, what: impl fmt::Display) -> Self {
        self.message = format!("{what}: {}", self.message);
        self
    }

    /// Adds the hint for unreachable brokers, naming the addresses.
    pub fn with_bootstrap(mut self, bootstrap: &str) -> Self {
        match self.code {
            ExitCode::Unreachable => {
                self.message = format!(
                    "cannot reach any broker at {bootstrap}: {}\nhint: check --bootstrap \
                     (or KAFKA_EOS_BOOTSTRAP) and that the brokers are running and reachable",
                    self.message
                );
            }
            ExitCode::Auth => {
                self.message = format!(
                    "{}\nhint: check sasl.mechanism / sasl.username / sasl.password \
                     (-X) and the principal's ACLs",
                    self.message
                );
            }
            _ => {}
        }
        self
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

fn is_auth_code(e: ErrorCode) -> bool {
    matches!(
        e,
        ErrorCode::SaslAuthenticationFailed
            | ErrorCode::TopicAuthorizationFailed
            | ErrorCode::GroupAuthorizationFailed
            | ErrorCode::ClusterAuthorizationFailed
            | ErrorCode::TransactionalIdAuthorizationFailed
    )
}

fn conn_code(e: &ConnError) -> ExitCode {
    match e {
        ConnError::Connect { .. } | ConnError::ConnectTimeout { .. } => ExitCode::Unreachable,
        ConnError::AuthenticationFailed { .. }
        | ConnError::UnsupportedSaslMechanism { .. }
        | ConnError::Token { .. } => ExitCode::Auth,
        ConnError::Broker { error, .. } if is_auth_code(*error) => ExitCode::Auth,
        _ => ExitCode::Failure,
    }
}

fn cluster_code(e: &ClusterError) -> ExitCode {
    match e {
        ClusterError::NoBrokerAvailable { attempts } => {
            if attempts.iter().any(|(_, e)| conn_code(e) == ExitCode::Auth) {
                ExitCode::Auth
            } else {
                ExitCode::Unreachable
            }
        }
        ClusterError::Conn(c) => conn_code(c),
        ClusterError::InvalidAddress(_) => ExitCode::Usage,
        _ => ExitCode::Failure,
    }
}

impl From<ConfigError> for CliError {
    fn from(e: ConfigError) -> Self {
        let hint = match &e {
            ConfigError::UnknownKey(k) => format!(
                "\nhint: -X takes the Java clients' property names; {k:?} is not one the command's clients take"
            ),
            _ => String::new(),
        };
        // Never echo a secret (a JAAS configuration, a password) back.
        let shown = match &e {
            ConfigError::InvalidValue { key, reason, .. } if crate::logging::is_secret(key) => {
                format!("invalid value (not shown) for {key}: {reason}")
            }
            _ => e.to_string(),
        };
        CliError::usage(format!("bad setting {}: {shown}{hint}", e.key()))
    }
}

impl From<ClusterError> for CliError {
    fn from(e: ClusterError) -> Self {
        CliError::new(cluster_code(&e), e.to_string())
    }
}

impl From<ConnError> for CliError {
    fn from(e: ConnError) -> Self {
        CliError::new(conn_code(&e), e.to_string())
    }
}

impl From<RequestError> for CliError {
    fn from(e: RequestError) -> Self {
        CliError::from_request(&e, e.to_string())
    }
}

impl CliError {
    /// `message` with the exit code a [`RequestError`] gets.
    fn from_request(e: &RequestError, message: String) -> Self {
        let code = match e {
            RequestError::Cluster(c) => cluster_code(c),
            RequestError::Broker { error, .. } if is_auth_code(*error) => ExitCode::Auth,
            _ => ExitCode::Failure,
        };
        CliError::new(code, message)
    }
}

impl From<kafka_admin::AdminError> for CliError {
    fn from(e: kafka_admin::AdminError) -> Self {
        use kafka_admin::AdminError;
        let code = match &e {
            AdminError::Cluster(c) => cluster_code(c),
            AdminError::Topic(t) if is_auth_code(t.error) => ExitCode::Auth,
            _ => ExitCode::Failure,
        };
        CliError::new(code, e.to_string())
    }
}

impl From<kafka_admin::OffsetsError> for CliError {
    fn from(e: kafka_admin::OffsetsError) -> Self {
        use kafka_admin::OffsetsError;
        let code = match &e {
            OffsetsError::Request(r) => return CliError::from_request(r, e.to_string()),
            OffsetsError::Partition { error, .. } if is_auth_code(*error) => ExitCode::Auth,
            OffsetsError::InvalidSpec(_) => ExitCode::Usage,
            _ => ExitCode::Failure,
        };
        CliError::new(code, e.to_string())
    }
}

impl From<ReaderError> for CliError {
    fn from(e: ReaderError) -> Self {
        let code = match &e {
            ReaderError::Cluster(c) => cluster_code(c),
            ReaderError::Partition { error, .. } | ReaderError::Broker { error, .. }
                if is_auth_code(*error) =>
            {
                ExitCode::Auth
            }
            _ => ExitCode::Failure,
        };
        CliError::new(code, e.to_string())
    }
}

impl From<ProduceError> for CliError {
    fn from(e: ProduceError) -> Self {
        let code = match &e {
            ProduceError::Broker { error, .. } if is_auth_code(*error) => ExitCode::Auth,
            ProduceError::Transaction(t) => transaction_code(t),
            _ => ExitCode::Failure,
        };
        CliError::new(code, e.to_string())
    }
}

fn transaction_code(e: &TransactionError) -> ExitCode {
    match e {
        TransactionError::Fatal {
            error: Some(code), ..
        }
        | TransactionError::Abortable {
            error: Some(code), ..
        } if is_auth_code(*code) => ExitCode::Auth,
        _ => ExitCode::Failure,
    }
}

impl From<TransactionError> for CliError {
    fn from(e: TransactionError) -> Self {
        CliError::new(transaction_code(&e), e.to_string())
    }
}

impl From<kafka_producer::ConnectError> for CliError {
    fn from(e: kafka_producer::ConnectError) -> Self {
        use kafka_producer::ConnectError as C;
        match e {
            C::Config(c) => c.into(),
            C::Cluster(c) => c.into(),
            other => CliError::usage(other.to_string()),
        }
    }
}

impl From<ResumeError> for CliError {
    fn from(e: ResumeError) -> Self {
        match e {
            ResumeError::Coordinator(c) => c.into(),
            other => CliError::failure(other.to_string()),
        }
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        CliError::failure(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreachable_and_auth_are_classified() {
        let refused = ClusterError::NoBrokerAvailable {
            attempts: vec![(
                "127.0.0.1:1".into(),
                ConnError::Connect {
                    addr: "127.0.0.1:1".into(),
                    source: std::io::Error::from(std::io::ErrorKind::ConnectionRefused),
                },
            )],
        };
        let e = CliError::from(refused).with_bootstrap("127.0.0.1:1");
        assert_eq!(e.code, ExitCode::Unreachable);
        assert!(e.message.contains("127.0.0.1:1") && e.message.contains("--bootstrap"));

        let auth = ClusterError::NoBrokerAvailable {
            attempts: vec![(
                "h:1".into(),
                ConnError::AuthenticationFailed {
                    message: "bad password".into(),
                },
            )],
        };
        assert_eq!(CliError::from(auth).code, ExitCode::Auth);

        // No OAUTHBEARER token (the identity provider refused or is down):
        // an authentication failure, exit 4.
        let token = ClusterError::NoBrokerAvailable {
            attempts: vec![(
                "h:1".into(),
                ConnError::Token {
                    addr: "h:1".into(),
                    source: kafka_client::oauth::TokenError::Refused {
                        status: 401,
                        message: "invalid_client".into(),
                    },
                },
            )],
        };
        assert_eq!(CliError::from(token).code, ExitCode::Auth);

        let secret = CliError::from(ConfigError::InvalidValue {
            key: "sasl.jaas.config".into(),
            value: "Krb5LoginModule required password=\"hunter2\";".into(),
            reason: "unsupported".into(),
        });
        assert!(
            secret.message.contains("sasl.jaas.config") && !secret.message.contains("hunter2"),
            "{}",
            secret.message
        );
        let bad = CliError::from(ConfigError::UnknownKey("bogus.key".into()));
        assert_eq!(bad.code, ExitCode::Usage);
        assert!(bad.message.contains("bogus.key"));
    }
}
