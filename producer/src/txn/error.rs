//! Typed transactional errors and the per-API error classification of the
//! Java client (`TransactionManager` and its `TxnRequestHandler`s).

use super::State;
use kafka_proto::{ApiKey, ErrorCode};
use std::fmt;

/// A transactional API (the columns of the classification table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TxnApi {
    /// FindCoordinator (10).
    FindCoordinator,
    /// InitProducerId (22).
    InitProducerId,
    /// AddPartitionsToTxn (24), TV1 only.
    AddPartitionsToTxn,
    /// AddOffsetsToTxn (25), TV1 only.
    AddOffsetsToTxn,
    /// TxnOffsetCommit (28), sent to the group coordinator.
    TxnOffsetCommit,
    /// EndTxn (26).
    EndTxn,
    /// Produce (0), as reported by the producer core.
    Produce,
}

impl TxnApi {
    /// Every API, for table-driven tests.
    pub const ALL: [TxnApi; 7] = [
        TxnApi::FindCoordinator,
        TxnApi::InitProducerId,
        TxnApi::AddPartitionsToTxn,
        TxnApi::AddOffsetsToTxn,
        TxnApi::TxnOffsetCommit,
        TxnApi::EndTxn,
        TxnApi::Produce,
    ];

    /// The wire API key.
    pub fn api_key(self) -> ApiKey {
        match self {
            TxnApi::FindCoordinator => ApiKey::FindCoordinator,
            TxnApi::InitProducerId => ApiKey::InitProducerId,
            TxnApi::AddPartitionsToTxn => ApiKey::AddPartitionsToTxn,
            TxnApi::AddOffsetsToTxn => ApiKey::AddOffsetsToTxn,
            TxnApi::TxnOffsetCommit => ApiKey::TxnOffsetCommit,
            TxnApi::EndTxn => ApiKey::EndTxn,
            TxnApi::Produce => ApiKey::Produce,
        }
    }
}

/// How one error code on one API is handled (the table cells).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorClass {
    /// NONE.
    Success,
    /// Retry the same request after a backoff (R).
    Retry,
    /// Look the coordinator up again, then retry (RC).
    RefreshCoordinator,
    /// Abort the transaction; the producer stays usable (A).
    Abortable,
    /// The producer cannot continue (F).
    Fatal,
    /// Fatal: another producer with this transactional id took over
    /// (PRODUCER_FENCED, or INVALID_PRODUCER_EPOCH on a coordinator request).
    Fenced,
}

/// Classifies `error` received on `api` exactly as the Java client does
/// (`TransactionManager`'s response handlers). `can_bump_epoch` is true when the coordinator
/// supports KIP-360 epoch bumps (InitProducerId >= v3) or TV2 is in use; it
/// decides the `abortableErrorIfPossible` cells (UNKNOWN_PRODUCER_ID).
///
/// Request-specific refinements not expressible per code are applied by the
/// [`super::TransactionManager`]: TRANSACTION_ABORTABLE on EndTxn while
/// aborting is fatal; InitProducerId authorization errors move the producer
/// back to `Uninitialized`; AddPartitionsToTxn CONCURRENT_TRANSACTIONS uses a
/// 20 ms backoff while no partition is in the transaction.
pub fn classify(api: TxnApi, error: ErrorCode, can_bump_epoch: bool) -> ErrorClass {
    use ErrorClass::*;
    use ErrorCode as E;
    if error == E::None {
        return Success;
    }
    let abortable_if_possible = if can_bump_epoch { Abortable } else { Fatal };
    match api {
        TxnApi::Produce => match error {
            E::ProducerFenced => Fenced,
            E::ClusterAuthorizationFailed
            | E::TransactionalIdAuthorizationFailed
            | E::UnsupportedVersion
            | E::InvalidProducerIdMapping => Fatal,
            _ => Abortable,
        },
        TxnApi::FindCoordinator => match error {
            E::TransactionAbortable | E::GroupAuthorizationFailed => Abortable,
            E::TransactionalIdAuthorizationFailed | E::ClusterAuthorizationFailed => Fatal,
            e if e.is_retriable() => Retry,
            _ => Fatal,
        },
        TxnApi::InitProducerId => match error {
            E::NotCoordinator | E::CoordinatorNotAvailable => RefreshCoordinator,
            E::ProducerFenced | E::InvalidProducerEpoch => Fenced,
            E::TransactionAbortable
            | E::TransactionalIdAuthorizationFailed
            | E::ClusterAuthorizationFailed => Abortable,
            e if e.is_retriable() => Retry,
            _ => Fatal,
        },
        TxnApi::AddPartitionsToTxn => match error {
            E::NotCoordinator | E::CoordinatorNotAvailable => RefreshCoordinator,
            E::ProducerFenced | E::InvalidProducerEpoch => Fenced,
            E::UnknownProducerId => abortable_if_possible,
            E::InvalidTxnState
            | E::InvalidProducerIdMapping
            | E::TransactionalIdAuthorizationFailed => Fatal,
            e if e.is_retriable() => Retry,
            // TRANSACTION_ABORTABLE, TOPIC_AUTHORIZATION_FAILED,
            // OPERATION_NOT_ATTEMPTED and every unexpected per-partition
            // error ("Could not add partitions").
            _ => Abortable,
        },
        TxnApi::AddOffsetsToTxn => match error {
            E::NotCoordinator | E::CoordinatorNotAvailable => RefreshCoordinator,
            E::ProducerFenced | E::InvalidProducerEpoch => Fenced,
            E::UnknownProducerId => abortable_if_possible,
            E::TransactionAbortable | E::GroupAuthorizationFailed => Abortable,
            e if e.is_retriable() => Retry,
            _ => Fatal,
        },
        TxnApi::TxnOffsetCommit => match error {
            E::NotCoordinator | E::CoordinatorNotAvailable | E::RequestTimedOut => {
                RefreshCoordinator
            }
            E::ProducerFenced | E::InvalidProducerEpoch => Fenced,
            E::TransactionAbortable
            | E::GroupAuthorizationFailed
            | E::FencedInstanceId
            | E::UnknownMemberId
            | E::IllegalGeneration
            | E::GroupIdNotFound
            | E::StaleMemberEpoch => Abortable,
            e if e.is_retriable() => Retry,
            _ => Fatal,
        },
        TxnApi::EndTxn => match error {
            E::NotCoordinator | E::CoordinatorNotAvailable => RefreshCoordinator,
            E::ProducerFenced | E::InvalidProducerEpoch => Fenced,
            E::UnknownProducerId => abortable_if_possible,
            E::TransactionAbortable => Abortable,
            e if e.is_retriable() => Retry,
            _ => Fatal,
        },
    }
}

/// A user-visible transactional operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TxnOp {
    /// `init_transactions`.
    InitTransactions,
    /// `begin_transaction`.
    BeginTransaction,
    /// `send` (a record added to the transaction).
    Send,
    /// `send_offsets_to_transaction`.
    SendOffsets,
    /// `prepare_transaction` (pre-commit for resume).
    PrepareTransaction,
    /// `resume_prepared`.
    ResumePrepared,
    /// `commit_transaction`.
    CommitTransaction,
    /// `abort_transaction`.
    AbortTransaction,
}

impl fmt::Display for TxnOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            TxnOp::InitTransactions => "initTransactions",
            TxnOp::BeginTransaction => "beginTransaction",
            TxnOp::Send => "send",
            TxnOp::SendOffsets => "sendOffsetsToTransaction",
            TxnOp::PrepareTransaction => "prepareTransaction",
            TxnOp::ResumePrepared => "resumePrepared",
            TxnOp::CommitTransaction => "commitTransaction",
            TxnOp::AbortTransaction => "abortTransaction",
        };
        f.write_str(s)
    }
}

/// A transactional error the user can match on.
///
/// ```
/// use kafka_producer::txn::{TransactionError, TxnApi};
/// use kafka_proto::ErrorCode;
/// let e = TransactionError::Fenced { api: TxnApi::EndTxn, version: 4, error: ErrorCode::ProducerFenced };
/// assert!(e.is_fatal() && !e.is_abortable());
/// match e {
///     TransactionError::Fenced { .. } => { /* close the producer */ }
///     TransactionError::Abortable { .. } => { /* abort_transaction() and go on */ }
///     _ => {}
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TransactionError {
    /// The producer cannot continue; close it.
    #[error("fatal transactional error{}: {message}", fmt_api(*api, *version, *error))]
    Fatal {
        /// The API that failed, if any.
        api: Option<TxnApi>,
        /// Its version (-1 if not sent).
        version: i16,
        /// The broker's error code, if any.
        error: Option<ErrorCode>,
        /// What happened.
        message: String,
    },
    /// The transaction must be aborted; the producer stays usable.
    #[error("abortable transactional error{}: {message}", fmt_api(*api, *version, *error))]
    Abortable {
        /// The API that failed, if any.
        api: Option<TxnApi>,
        /// Its version (-1 if not sent).
        version: i16,
        /// The broker's error code, if any.
        error: Option<ErrorCode>,
        /// What happened.
        message: String,
    },
    /// Another producer with the same transactional id (a newer epoch) took
    /// over: fatal for this producer.
    #[error("producer fenced on {api:?} v{version}: {}", error.name())]
    Fenced {
        /// The API that reported it.
        api: TxnApi,
        /// Its version.
        version: i16,
        /// PRODUCER_FENCED or INVALID_PRODUCER_EPOCH.
        error: ErrorCode,
    },
    /// The operation did not complete in time. When `outcome_unknown`, it
    /// goes on in the background and may still take effect (offsets of a
    /// timed-out `send_offsets_to_transaction` are committed by a later
    /// commit once they arrive): call the **same** operation again to learn
    /// its outcome (pending transition), or abort.
    #[error("{op} timed out{}", if *outcome_unknown { "; outcome unknown, retry the same operation" } else { "" })]
    Timeout {
        /// The operation.
        op: TxnOp,
        /// True when the coordinator may have acted on it.
        outcome_unknown: bool,
    },
    /// The operation is not allowed in the current state.
    #[error("cannot {op} in state {from:?}")]
    InvalidState {
        /// The current state.
        from: State,
        /// The refused operation.
        op: TxnOp,
    },
    /// A previous call timed out and must be retried before anything else.
    #[error(
        "cannot attempt {attempted} because the previous call to {pending} timed out and must be retried"
    )]
    PendingTransition {
        /// The operation that timed out.
        pending: TxnOp,
        /// The refused operation.
        attempted: TxnOp,
    },
    /// `transaction.timeout.ms` exceeds the broker's `transaction.max.timeout.ms`.
    #[error(
        "transaction.timeout.ms = {requested_ms} exceeds the broker's transaction.max.timeout.ms = {broker_max_ms}"
    )]
    TransactionTimeoutTooLarge {
        /// The configured `transaction.timeout.ms`.
        requested_ms: i64,
        /// The coordinator's `transaction.max.timeout.ms`.
        broker_max_ms: i64,
    },
    /// `prepare_transaction` was called before the transaction could be
    /// persisted (partitions still being added, or nothing written).
    #[error("cannot prepare the transaction: {reason}")]
    NotPreparable {
        /// Why.
        reason: NotPreparableReason,
    },
}

/// Why a transaction cannot be prepared (yet).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NotPreparableReason {
    /// Partitions or offsets are still being added to the transaction
    /// (AddPartitionsToTxn or AddOffsetsToTxn queued or in flight): once the
    /// coordinator has them, preparing can succeed.
    PartitionsPending,
    /// Nothing was written in the transaction: the coordinator does not know
    /// it, so a commit from another process would fail with
    /// INVALID_TXN_STATE.
    Empty,
}

impl fmt::Display for NotPreparableReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NotPreparableReason::PartitionsPending => {
                "partitions or offsets are still being added to the transaction"
            }
            NotPreparableReason::Empty => {
                "the transaction is empty (a commit would fail with INVALID_TXN_STATE)"
            }
        })
    }
}

fn fmt_api(api: Option<TxnApi>, version: i16, error: Option<ErrorCode>) -> String {
    let mut s = String::new();
    if let Some(a) = api {
        s.push_str(&format!(" on {a:?}"));
        if version >= 0 {
            s.push_str(&format!(" v{version}"));
        }
    }
    if let Some(e) = error {
        s.push_str(&format!(" ({})", e.name()));
    }
    s
}

impl TransactionError {
    /// True for [`TransactionError::Fatal`] and [`TransactionError::Fenced`].
    pub fn is_fatal(&self) -> bool {
        matches!(
            self,
            TransactionError::Fatal { .. } | TransactionError::Fenced { .. }
        )
    }

    /// True for [`TransactionError::Abortable`].
    pub fn is_abortable(&self) -> bool {
        matches!(self, TransactionError::Abortable { .. })
    }

    /// The broker error code, if one caused this.
    pub fn error_code(&self) -> Option<ErrorCode> {
        match self {
            TransactionError::Fatal { error, .. } | TransactionError::Abortable { error, .. } => {
                *error
            }
            TransactionError::Fenced { error, .. } => Some(*error),
            _ => None,
        }
    }

    /// The API involved, if any.
    pub fn api(&self) -> Option<TxnApi> {
        match self {
            TransactionError::Fatal { api, .. } | TransactionError::Abortable { api, .. } => *api,
            TransactionError::Fenced { api, .. } => Some(*api),
            _ => None,
        }
    }

    /// Builds the error of `class` for `error` on `api`; `None` for success
    /// and the retry classes.
    pub fn from_class(
        class: ErrorClass,
        api: TxnApi,
        version: i16,
        error: ErrorCode,
    ) -> Option<Self> {
        let message = error.name().to_string();
        match class {
            ErrorClass::Fatal => Some(TransactionError::Fatal {
                api: Some(api),
                version,
                error: Some(error),
                message,
            }),
            ErrorClass::Abortable => Some(TransactionError::Abortable {
                api: Some(api),
                version,
                error: Some(error),
                message,
            }),
            ErrorClass::Fenced => Some(TransactionError::Fenced {
                api,
                version,
                error,
            }),
            _ => None,
        }
    }
}
