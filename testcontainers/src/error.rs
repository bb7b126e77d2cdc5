//! The harness error type.

use std::time::Duration;

/// Everything that can go wrong while starting, driving or checking test
/// infrastructure.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// An I/O operation failed.
    #[error("I/O error while {context}: {source}")]
    Io {
        /// What the harness was doing.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// Resolving the Kafka jars from Maven Central failed.
    #[error("fetching Kafka {version} failed: {message}")]
    Fetch {
        /// The Kafka version.
        version: String,
        /// The fetch script's output.
        message: String,
    },
    /// A condition did not become true before its deadline.
    #[error("timed out after {elapsed:?} waiting for {what}; last observation: {last}")]
    Timeout {
        /// The condition waited for.
        what: String,
        /// How long the harness waited.
        elapsed: Duration,
        /// The last error or state seen while polling.
        last: String,
    },
    /// A child process failed or exited unexpectedly.
    #[error("process {what} failed: {message}")]
    Process {
        /// Which process.
        what: String,
        /// Exit status and output tail.
        message: String,
    },
    /// A Kafka protocol exchange failed (encode, decode or unexpected reply).
    #[error("Kafka protocol error: {0}")]
    Protocol(String),
    /// A broker answered with a non-zero error code.
    #[error("{api} returned Kafka error code {code}{}", message.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    Kafka {
        /// The API that failed.
        api: &'static str,
        /// The Kafka error code.
        code: i16,
        /// The error message, if the broker sent one.
        message: Option<String>,
    },
    /// A tool's output could not be parsed.
    #[error("cannot parse tool output: {0}")]
    Parse(String),
    /// The requested configuration is invalid.
    #[error("invalid harness configuration: {0}")]
    Config(String),
}

impl HarnessError {
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        HarnessError::Io {
            context: context.into(),
            source,
        }
    }
}

/// Adds context to `std::io::Result`.
pub(crate) trait IoContext<T> {
    fn ctx(self, context: impl FnOnce() -> String) -> Result<T, HarnessError>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn ctx(self, context: impl FnOnce() -> String) -> Result<T, HarnessError> {
        self.map_err(|e| HarnessError::io(context(), e))
    }
}
