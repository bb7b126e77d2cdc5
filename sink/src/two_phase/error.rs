//! The errors of a [`TwoPhaseCommitSink`]: [`TwoPhaseCommitError`], with the
//! [`Operation`] that failed, each [`TransactionFailure`] and each
//! [`LostTransaction`].

use std::fmt;

#[cfg(doc)]
use super::{CommitOutcome, SinkMetrics, TwoPhaseCommitHandler, TwoPhaseCommitSink};

/// The sink or handler operation that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    /// [`TwoPhaseCommitHandler::begin_transaction`].
    BeginTransaction,
    /// [`TwoPhaseCommitHandler::invoke`].
    Invoke,
    /// [`TwoPhaseCommitHandler::pre_commit`].
    PreCommit,
    /// [`TwoPhaseCommitHandler::commit`].
    Commit,
    /// [`TwoPhaseCommitHandler::abort`].
    Abort,
    /// [`TwoPhaseCommitHandler::recover_and_commit`].
    RecoverAndCommit,
    /// [`TwoPhaseCommitHandler::recover_and_abort`].
    RecoverAndAbort,
    /// [`TwoPhaseCommitHandler::initialize_user_context`].
    InitializeUserContext,
    /// [`TwoPhaseCommitHandler::finish_recovering_and_committing`].
    FinishRecoveringAndCommitting,
    /// [`TwoPhaseCommitHandler::release_after_failover`].
    ReleaseAfterFailover,
}

/// One failed transaction operation, collected while the others proceed.
#[derive(Debug)]
pub struct TransactionFailure<E> {
    /// The checkpoint of the transaction, for pending (pre-committed) ones.
    pub checkpoint_id: Option<u64>,
    /// What failed.
    pub operation: Operation,
    /// The handler's error.
    pub error: E,
}

/// A pre-committed transaction that can no longer be committed: its records
/// are lost ([`CommitOutcome::Lost`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LostTransaction {
    /// The checkpoint whose transaction it was.
    pub checkpoint_id: u64,
    /// The transaction handle, as its `Debug` form.
    pub transaction: String,
    /// Why the handler reports it lost.
    pub reason: String,
}

impl fmt::Display for LostTransaction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "transaction {} of checkpoint {} is lost: {}",
            self.transaction, self.checkpoint_id, self.reason
        )
    }
}

/// An error of a [`TwoPhaseCommitSink`] call.
///
/// A failed commit at a notification carries each failed transaction with
/// its checkpoint, the operation and the handler's error; the transaction
/// stays pending and is retried:
///
/// ```
/// use kafka_sink::{Operation, TwoPhaseCommitError, TwoPhaseCommitSink};
/// use kafka_sink::{InMemoryError, InMemoryTable};
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// let mut sink = TwoPhaseCommitSink::new(InMemoryTable::<&str>::new().with_failing_commits());
/// sink.initialize_state(None).await?;
/// sink.snapshot_state(7).await?;
/// match sink.notify_checkpoint_complete(7).await {
///     Err(TwoPhaseCommitError::CommitFailed { failures }) => {
///         assert_eq!(failures[0].checkpoint_id, Some(7));
///         assert_eq!(failures[0].operation, Operation::Commit);
///         assert_eq!(failures[0].error, InMemoryError::CommitsFailing { txn: 1 });
///     }
///     other => panic!("expected a commit failure, got {other:?}"),
/// }
/// assert_eq!(sink.pending_checkpoints(), [7]); // retried at the next notification
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub enum TwoPhaseCommitError<E> {
    /// A handler operation failed.
    Hook {
        /// Which one.
        operation: Operation,
        /// The handler's error.
        source: E,
    },
    /// Commits failed during a checkpoint notification. Every due pending
    /// transaction was attempted first; the failed ones stay pending and are
    /// retried at the next notification (or committed by a restore of the
    /// checkpoint that holds them).
    CommitFailed {
        /// The failures, in checkpoint order.
        failures: Vec<TransactionFailure<E>>,
    },
    /// Restored transactions could not be committed or aborted. Every one was
    /// attempted; the sink stays uninitialized, so `initialize_state` may be
    /// retried with the same state.
    RecoveryFailed {
        /// The failures, in the order attempted.
        failures: Vec<TransactionFailure<E>>,
    },
    /// A call other than `initialize_state` before `initialize_state`.
    NotInitialized,
    /// A call after `close`.
    Closed,
    /// A pre-commit failed (a record of the transaction failed) and the
    /// transaction was aborted: its records are not in the sink, so the
    /// pipeline must restore from the last completed checkpoint (rewinding
    /// its source) before writing again. Notifications still commit the
    /// transactions of completed checkpoints.
    RestoreRequired,
    /// Pre-committed transactions could not be committed any more and their
    /// records are lost (every due transaction was attempted first). From
    /// `initialize_state` the sink stays uninitialized, as Flink fails the
    /// job on restore; set
    /// [`ignore_failures_after_transaction_timeout`](TwoPhaseCommitSink::ignore_failures_after_transaction_timeout)
    /// to only log losses of transactions older than the timeout.
    TransactionsLost {
        /// The lost transactions, in checkpoint order.
        lost: Vec<LostTransaction>,
    },
    /// `snapshot_state` with a checkpoint id not above the previous one.
    NonIncreasingCheckpoint {
        /// The id given.
        checkpoint_id: u64,
        /// The previous snapshot's id.
        last: u64,
    },
}

impl<E: fmt::Display> fmt::Display for TwoPhaseCommitError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn list<E: fmt::Display>(
            f: &mut fmt::Formatter<'_>,
            failures: &[TransactionFailure<E>],
        ) -> fmt::Result {
            for (i, x) in failures.iter().enumerate() {
                let sep = if i == 0 { "" } else { "; " };
                match x.checkpoint_id {
                    Some(id) => {
                        write!(f, "{sep}{:?} of checkpoint {id}: {}", x.operation, x.error)?
                    }
                    None => write!(f, "{sep}{:?}: {}", x.operation, x.error)?,
                }
            }
            Ok(())
        }
        match self {
            TwoPhaseCommitError::Hook { operation, source } => {
                write!(f, "{operation:?} failed: {source}")
            }
            TwoPhaseCommitError::CommitFailed { failures } => {
                write!(
                    f,
                    "{} commit(s) failed after every due pending transaction was attempted \
                     (restore the last checkpoint to retry): ",
                    failures.len()
                )?;
                list(f, failures)
            }
            TwoPhaseCommitError::RecoveryFailed { failures } => {
                write!(f, "{} restored transaction(s) failed: ", failures.len())?;
                list(f, failures)
            }
            TwoPhaseCommitError::NotInitialized => {
                write!(
                    f,
                    "the sink was not initialized (call initialize_state first)"
                )
            }
            TwoPhaseCommitError::Closed => write!(f, "the sink is closed"),
            TwoPhaseCommitError::RestoreRequired => write!(
                f,
                "a pre-commit failed and its transaction was aborted; restore from the last completed checkpoint"
            ),
            TwoPhaseCommitError::TransactionsLost { lost } => {
                write!(f, "data loss: {} transaction(s) lost: ", lost.len())?;
                for (i, l) in lost.iter().enumerate() {
                    write!(f, "{}{l}", if i == 0 { "" } else { "; " })?;
                }
                Ok(())
            }
            TwoPhaseCommitError::NonIncreasingCheckpoint {
                checkpoint_id,
                last,
            } => write!(
                f,
                "checkpoint id {checkpoint_id} is not above the previous snapshot's id {last}"
            ),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for TwoPhaseCommitError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TwoPhaseCommitError::Hook { source, .. } => Some(source),
            TwoPhaseCommitError::CommitFailed { failures }
            | TwoPhaseCommitError::RecoveryFailed { failures } => {
                failures.first().map(|x| &x.error as _)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::two_phase::memory::InMemoryTable;
    use crate::{RecordContext, TwoPhaseCommitSink};

    /// Invariant: a lost transaction names its checkpoint, its handle and
    /// why.
    #[test]
    fn lost_transaction_names_checkpoint_handle_and_reason() {
        let lost = LostTransaction {
            checkpoint_id: 7,
            transaction: "orders-0".into(),
            reason: "the broker aborted it".into(),
        };
        assert_eq!(
            lost.to_string(),
            "transaction orders-0 of checkpoint 7 is lost: the broker aborted it"
        );
    }

    /// Invariant: a write before `initialize_state` is `NotInitialized`,
    /// whose message says what to call.
    #[tokio::test]
    async fn write_before_initialization_is_not_initialized() {
        let mut sink = TwoPhaseCommitSink::new(InMemoryTable::new());
        let err = sink
            .invoke("a", &RecordContext::default())
            .await
            .unwrap_err();
        assert!(matches!(err, TwoPhaseCommitError::NotInitialized));
        assert_eq!(
            err.to_string(),
            "the sink was not initialized (call initialize_state first)"
        );
    }
}
