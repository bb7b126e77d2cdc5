//! Errors of the [`Reader`](super::Reader).

use kafka_client::RequestError;
use kafka_client::{ClusterError, ConnError};
use kafka_proto::{ApiKey, DecodeError, ErrorCode};
use std::time::Duration;

/// An error of the [`Reader`](super::Reader): says whether retrying may help
/// ([`Self::is_retriable`]) and, where one applies, which API, version and
/// error code it came from ([`Self::api`], [`Self::error_code`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReaderError {
    /// A connection or metadata error.
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    /// A partition-level error code (e.g. TOPIC_AUTHORIZATION_FAILED, or a
    /// retriable one that outlived the retry budget).
    #[error("{api:?} v{version} for {topic}-{partition} failed: {}", error.name())]
    Partition {
        /// The API.
        api: ApiKey,
        /// Its version.
        version: i16,
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
        /// The broker's error code.
        error: ErrorCode,
    },
    /// A request-, group- or coordinator-level error code.
    #[error("{api:?} v{version} failed: {}{}", error.name(), message.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    Broker {
        /// The API.
        api: ApiKey,
        /// Its version.
        version: i16,
        /// The broker's error code.
        error: ErrorCode,
        /// The broker's message, if any.
        message: Option<String>,
    },
    /// Fetch answered OFFSET_OUT_OF_RANGE under `auto.offset.reset=none`:
    /// the position is below the log start (retention or DeleteRecords
    /// passed it) or beyond the end. The position is left unchanged; answer
    /// with a [`seek`](super::Reader::seek) (e.g. to the log start, knowing
    /// the records between were never read).
    #[error("{topic}-{partition}: position {offset} is out of range (log start {}, end {}); auto.offset.reset=none: seek to continue", fmt_offset(*log_start_offset), fmt_offset(*end_offset))]
    OffsetOutOfRange {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
        /// The position that was refused.
        offset: i64,
        /// The log start offset when the error was reported, if known.
        log_start_offset: Option<i64>,
        /// The end offset (high watermark, or last stable offset under
        /// read_committed) when the error was reported, if known.
        end_offset: Option<i64>,
    },
    /// The log the position was read from was truncated (KIP-320: an
    /// unclean leader election made a replica that lacked the records
    /// leader) under `auto.offset.reset=none`: records below the position
    /// may have been replaced. The position is left unchanged; answer with a
    /// [`seek`](super::Reader::seek) (to `divergent_offset` to read the new
    /// log from where it differs).
    #[error("{topic}-{partition}: log truncation detected at position {position}; the log diverges from offset {}; auto.offset.reset=none: seek to continue", fmt_offset(*divergent_offset))]
    LogTruncation {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
        /// The position whose earlier records were truncated.
        position: i64,
        /// The first offset known to diverge (the end offset of the
        /// position's leader epoch on the new leader), if the leader knows it.
        divergent_offset: Option<i64>,
    },
    /// A record batch failed to decode (CRC, framing or an unsupported codec).
    #[error("corrupt record batch in {topic}-{partition} after offset {offset}: {source}")]
    Corrupt {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
        /// The position reached before the bad batch.
        offset: i64,
        /// The decoder error.
        #[source]
        source: DecodeError,
    },
    /// The fetch returned only part of one batch: raise `partition_max_bytes`
    /// / `max_bytes` (brokers normally return the first batch whole).
    #[error(
        "{topic}-{partition}: no complete record batch at offset {offset} within {bytes} bytes"
    )]
    RecordTooLarge {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
        /// The fetch offset.
        offset: i64,
        /// Bytes returned.
        bytes: usize,
    },
    /// The partition is not assigned to this reader.
    #[error("{topic}-{partition} is not assigned")]
    NotAssigned {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
    },
    /// The partition has no position and `auto_offset_reset` is `None`.
    #[error("{topic}-{partition} has no position; seek first")]
    NoPosition {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
    },
    /// Nothing is assigned.
    #[error("no partition is assigned")]
    NoAssignment,
    /// A retried operation did not finish in time.
    #[error("{what} did not finish within {after:?}{}", last_error.as_deref().map(|e| format!("; last error: {e}")).unwrap_or_default())]
    Timeout {
        /// The operation.
        what: String,
        /// The bound that elapsed.
        after: Duration,
        /// The last retriable error seen, if any.
        last_error: Option<String>,
    },
}

fn fmt_offset(o: Option<i64>) -> String {
    o.map_or_else(|| "unknown".to_string(), |o| o.to_string())
}

impl From<ConnError> for ReaderError {
    fn from(e: ConnError) -> Self {
        ReaderError::Cluster(ClusterError::Conn(e))
    }
}

impl From<RequestError> for ReaderError {
    /// A FindCoordinator failure keeps its cluster error, or its API, version,
    /// error code and message.
    fn from(e: RequestError) -> Self {
        match e {
            RequestError::Cluster(e) => ReaderError::Cluster(e),
            RequestError::Broker {
                api,
                version,
                error,
                message,
            } => ReaderError::Broker {
                api,
                version,
                error,
                message,
            },
        }
    }
}

impl ReaderError {
    /// True when retrying (after a metadata refresh) may succeed.
    pub fn is_retriable(&self) -> bool {
        match self {
            ReaderError::Cluster(e) => e.is_retriable(),
            ReaderError::Partition { error, .. } | ReaderError::Broker { error, .. } => {
                error.is_retriable()
            }
            ReaderError::Timeout { .. } => true,
            _ => false,
        }
    }

    /// True for a position the application must move
    /// ([`Self::OffsetOutOfRange`], [`Self::LogTruncation`] under
    /// `auto.offset.reset=none`): polling again fails again until a seek.
    pub fn is_position_lost(&self) -> bool {
        matches!(
            self,
            ReaderError::OffsetOutOfRange { .. } | ReaderError::LogTruncation { .. }
        )
    }

    /// The API and version involved, if any.
    pub fn api(&self) -> Option<(ApiKey, i16)> {
        match self {
            ReaderError::Cluster(ClusterError::Conn(e)) => e.api(),
            ReaderError::Cluster(ClusterError::Metadata { version, .. }) => {
                Some((ApiKey::Metadata, *version))
            }
            ReaderError::Partition { api, version, .. }
            | ReaderError::Broker { api, version, .. } => Some((*api, *version)),
            _ => None,
        }
    }

    /// The broker error code, if the error carries one.
    pub fn error_code(&self) -> Option<ErrorCode> {
        match self {
            ReaderError::Cluster(ClusterError::Metadata { error, .. }) => Some(*error),
            ReaderError::Cluster(ClusterError::Conn(ConnError::Broker { error, .. })) => {
                Some(*error)
            }
            ReaderError::Partition { error, .. } | ReaderError::Broker { error, .. } => {
                Some(*error)
            }
            ReaderError::OffsetOutOfRange { .. } => Some(ErrorCode::OffsetOutOfRange),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A FindCoordinator failure reaches the reader with its API, version,
    /// code and message, so `committed_offsets` retries exactly the codes the
    /// coordinator lookup calls retriable.
    #[test]
    fn coordinator_errors_keep_code_and_retriability() {
        for (code, retriable) in [
            (ErrorCode::CoordinatorNotAvailable, true),
            (ErrorCode::NotCoordinator, true),
            (ErrorCode::CoordinatorLoadInProgress, true),
            (ErrorCode::GroupAuthorizationFailed, false),
        ] {
            let e = ReaderError::from(RequestError::Broker {
                api: ApiKey::FindCoordinator,
                version: 4,
                error: code,
                message: Some("m".into()),
            });
            assert_eq!(e.is_retriable(), retriable, "{code:?}");
            assert_eq!(e.api(), Some((ApiKey::FindCoordinator, 4)));
            assert_eq!(e.error_code(), Some(code));
            assert!(matches!(e, ReaderError::Broker { message: Some(ref m), .. } if m == "m"));
        }
    }

    /// A position outside the log is not retried: the error names the
    /// partition and the offsets, and says how to go on.
    #[test]
    fn offset_out_of_range_is_fatal_and_names_the_offsets() {
        let e = ReaderError::OffsetOutOfRange {
            topic: "orders".into(),
            partition: 0,
            offset: 42,
            log_start_offset: Some(100),
            end_offset: None,
        };
        assert!(!e.is_retriable());
        assert!(e.is_position_lost());
        assert_eq!(e.error_code(), Some(ErrorCode::OffsetOutOfRange));
        assert_eq!(
            e.to_string(),
            "orders-0: position 42 is out of range (log start 100, end unknown); auto.offset.reset=none: seek to continue"
        );
        let t = ReaderError::LogTruncation {
            topic: "orders".into(),
            partition: 1,
            position: 50,
            divergent_offset: Some(40),
        };
        assert!(!t.is_retriable() && t.is_position_lost());
        assert!(t.to_string().contains("position 50") && t.to_string().contains("offset 40"));
    }
}
