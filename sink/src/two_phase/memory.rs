//! An in-memory transactional table: a complete [`TwoPhaseCommitHandler`]
//! for examples and for unit-testing pipelines without an external system.
//!
//! [`InMemoryTable`] keeps every transaction it began with its
//! [`TxnStatus`] and rows. Rows become visible in
//! [`committed`](InMemoryTable::committed) only when their transaction
//! commits; [`set_failing_commits`](InMemoryTable::set_failing_commits)
//! makes commits fail, as if the external system were unavailable. To
//! simulate a crash and restore, move the table out of the old sink with
//! [`TwoPhaseCommitSink::into_handler`] (the external system survives the
//! process) and restore a new sink over it.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! use kafka_sink::InMemoryTable;
//! use kafka_sink::{RecordContext, TwoPhaseCommitSink};
//!
//! let mut sink = TwoPhaseCommitSink::new(InMemoryTable::new());
//! sink.initialize_state(None).await?;
//! sink.invoke("a", &RecordContext::default()).await?;
//! sink.snapshot_state(1).await?;
//! assert!(sink.handler().committed().is_empty()); // pre-committed, not visible
//! sink.notify_checkpoint_complete(1).await?;
//! assert_eq!(sink.handler().committed(), ["a"]);
//! # Ok(())
//! # }
//! ```

use std::collections::BTreeMap;
use std::fmt;

#[cfg(doc)]
use super::TwoPhaseCommitSink;
use super::{CommitOutcome, PreCommitted, RecordContext, TwoPhaseCommitHandler};

/// Where a transaction of an [`InMemoryTable`] is in its lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TxnStatus {
    /// Begun; accepts rows.
    Open,
    /// Pre-committed: accepts no more rows, may be committed or aborted.
    PreCommitted,
    /// Committed: its rows are in [`InMemoryTable::committed`].
    Committed,
    /// Aborted: its rows were discarded.
    Aborted,
}

impl fmt::Display for TxnStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TxnStatus::Open => "open",
            TxnStatus::PreCommitted => "pre-committed",
            TxnStatus::Committed => "committed",
            TxnStatus::Aborted => "aborted",
        })
    }
}

/// An error of an [`InMemoryTable`] operation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InMemoryError {
    /// A commit while the table is set to fail commits. The transaction stays
    /// pre-committed, so a later commit (for example after a restore) can
    /// still succeed.
    #[error(
        "commit of transaction {txn} failed: the table is set to fail commits \
         (call set_failing_commits(false) to let commits succeed)"
    )]
    CommitsFailing {
        /// The transaction whose commit failed.
        txn: u64,
    },
    /// An operation on a transaction this table never began.
    #[error(
        "transaction {txn} was never begun on this table (restore a sink over the table \
         that began it, e.g. the old sink's `into_handler()`)"
    )]
    UnknownTransaction {
        /// The unknown transaction.
        txn: u64,
    },
    /// An operation the transaction's status does not allow (a write after
    /// pre-commit, an abort after commit, a commit before pre-commit).
    #[error(
        "cannot {operation} transaction {txn}: it is {status} (open → pre-committed → \
         committed, or open/pre-committed → aborted; fix the code driving the table)"
    )]
    InvalidTransition {
        /// The transaction.
        txn: u64,
        /// What was attempted: `"write to"`, `"pre-commit"`, `"commit"` or `"abort"`.
        operation: &'static str,
        /// Its status at the time.
        status: TxnStatus,
    },
}

#[derive(Debug, Clone)]
struct Entry<V> {
    status: TxnStatus,
    rows: Vec<V>,
}

/// An in-memory transactional table of rows `V`, implementing
/// [`TwoPhaseCommitHandler`] with `Txn = u64` (handles 1, 2, 3, … in begin
/// order) and no user context (`Ctx = ()`; checkpoint it with
/// [`U64Codec`](crate::codec::U64Codec) and
/// [`UnitCodec`](crate::codec::UnitCodec)).
///
/// | operation | effect |
/// |---|---|
/// | `begin_transaction` | opens the next handle |
/// | `invoke` | appends a row to an open transaction |
/// | `pre_commit` | open → pre-committed (no more rows) |
/// | `commit` | pre-committed → committed, rows appended to [`committed`](Self::committed); [`AlreadyCommitted`](CommitOutcome::AlreadyCommitted) when already committed, [`Lost`](CommitOutcome::Lost) when aborted, [`InMemoryError::CommitsFailing`] while [failing](Self::set_failing_commits), [`InMemoryError::UnknownTransaction`] for a handle it never began |
/// | `abort` | open or pre-committed → aborted, rows discarded; no-op when already aborted or never begun |
///
/// Recovery uses the default hooks: a restored pending transaction is
/// committed like any other, the restored open one aborted.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// use kafka_sink::{InMemoryTable, TxnStatus};
/// use kafka_sink::{RecordContext, TwoPhaseCommitHandler};
///
/// let mut table = InMemoryTable::new();
/// let mut txn = table.begin_transaction(&mut ()).await?;
/// table.invoke(&mut txn, "row-1", &RecordContext::default()).await?;
/// assert_eq!(table.rows(txn), Some(&["row-1"][..]));
/// table.abort(txn, &mut ()).await?;
/// assert_eq!(table.status(txn), Some(TxnStatus::Aborted));
/// assert!(table.committed().is_empty());
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct InMemoryTable<V> {
    /// Every transaction begun, by handle, with its status and rows.
    txns: BTreeMap<u64, Entry<V>>,
    /// The rows of committed transactions, in commit order.
    committed: Vec<V>,
    /// Whether commits fail (an unavailable external system).
    failing_commits: bool,
}

impl<V> Default for InMemoryTable<V> {
    fn default() -> Self {
        InMemoryTable {
            txns: BTreeMap::new(),
            committed: Vec::new(),
            failing_commits: false,
        }
    }
}

impl<V> InMemoryTable<V> {
    /// An empty table whose commits succeed.
    ///
    /// ```
    /// use kafka_sink::InMemoryTable;
    /// let table = InMemoryTable::<String>::new();
    /// assert!(table.committed().is_empty() && table.unfinished().is_empty());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// This table with every commit failing until
    /// [`set_failing_commits(false)`](Self::set_failing_commits) (an
    /// unavailable external system).
    pub fn with_failing_commits(mut self) -> Self {
        self.failing_commits = true;
        self
    }

    /// Makes every later commit fail with [`InMemoryError::CommitsFailing`]
    /// (`true`) or succeed again (`false`). A failed commit leaves its
    /// transaction pre-committed.
    pub fn set_failing_commits(&mut self, failing: bool) {
        self.failing_commits = failing;
    }

    /// Whether commits currently fail.
    pub fn is_failing_commits(&self) -> bool {
        self.failing_commits
    }

    /// The rows of committed transactions, in commit order (what a
    /// read-committed reader sees).
    pub fn committed(&self) -> &[V] {
        &self.committed
    }

    /// The status of transaction `txn`, `None` if this table never began it.
    pub fn status(&self, txn: u64) -> Option<TxnStatus> {
        self.txns.get(&txn).map(|e| e.status)
    }

    /// The rows written to transaction `txn` while it is open or
    /// pre-committed; `None` once it is committed or aborted, or if it was
    /// never begun.
    pub fn rows(&self, txn: u64) -> Option<&[V]> {
        self.txns
            .get(&txn)
            .filter(|e| matches!(e.status, TxnStatus::Open | TxnStatus::PreCommitted))
            .map(|e| e.rows.as_slice())
    }

    /// The transactions still open or pre-committed, ascending: after a
    /// clean shutdown or a completed restore, only the sink's current one
    /// (or none after `close`).
    pub fn unfinished(&self) -> Vec<u64> {
        self.txns
            .iter()
            .filter(|(_, e)| matches!(e.status, TxnStatus::Open | TxnStatus::PreCommitted))
            .map(|(id, _)| *id)
            .collect()
    }

    fn entry(&mut self, txn: u64) -> Result<&mut Entry<V>, InMemoryError> {
        self.txns
            .get_mut(&txn)
            .ok_or(InMemoryError::UnknownTransaction { txn })
    }
}

fn invalid(txn: u64, operation: &'static str, status: TxnStatus) -> InMemoryError {
    InMemoryError::InvalidTransition {
        txn,
        operation,
        status,
    }
}

impl<V: Send> TwoPhaseCommitHandler for InMemoryTable<V> {
    type Value = V;
    type Txn = u64;
    type Ctx = ();
    type Error = InMemoryError;

    async fn begin_transaction(&mut self, _: &mut ()) -> Result<u64, InMemoryError> {
        let txn = self.txns.last_key_value().map_or(1, |(id, _)| id + 1);
        self.txns.insert(
            txn,
            Entry {
                status: TxnStatus::Open,
                rows: Vec::new(),
            },
        );
        Ok(txn)
    }

    async fn invoke(
        &mut self,
        txn: &mut u64,
        value: V,
        _: &RecordContext,
    ) -> Result<(), InMemoryError> {
        let entry = self.entry(*txn)?;
        match entry.status {
            TxnStatus::Open => {
                entry.rows.push(value);
                Ok(())
            }
            status => Err(invalid(*txn, "write to", status)),
        }
    }

    async fn pre_commit(&mut self, txn: &mut u64) -> Result<(), InMemoryError> {
        let entry = self.entry(*txn)?;
        match entry.status {
            TxnStatus::Open => {
                entry.status = TxnStatus::PreCommitted;
                Ok(())
            }
            status => Err(invalid(*txn, "pre-commit", status)),
        }
    }

    async fn commit(
        &mut self,
        txn: PreCommitted<u64>,
        _: &mut (),
    ) -> Result<CommitOutcome, InMemoryError> {
        let txn = *txn.handle();
        if self.failing_commits {
            return Err(InMemoryError::CommitsFailing { txn });
        }
        let entry = self.entry(txn)?;
        match entry.status {
            TxnStatus::PreCommitted => {
                entry.status = TxnStatus::Committed;
                let rows = std::mem::take(&mut entry.rows);
                self.committed.extend(rows);
                Ok(CommitOutcome::Committed)
            }
            TxnStatus::Committed => Ok(CommitOutcome::AlreadyCommitted),
            TxnStatus::Aborted => Ok(CommitOutcome::Lost {
                reason: format!("transaction {txn} was aborted before its commit"),
            }),
            TxnStatus::Open => Err(invalid(txn, "commit", TxnStatus::Open)),
        }
    }

    async fn abort(&mut self, txn: u64, _: &mut ()) -> Result<(), InMemoryError> {
        let Some(entry) = self.txns.get_mut(&txn) else {
            return Ok(()); // nothing to discard
        };
        match entry.status {
            TxnStatus::Open | TxnStatus::PreCommitted | TxnStatus::Aborted => {
                entry.status = TxnStatus::Aborted;
                entry.rows = Vec::new();
                Ok(())
            }
            TxnStatus::Committed => Err(invalid(txn, "abort", TxnStatus::Committed)),
        }
    }

    async fn initialize_user_context(&mut self) -> Result<(), InMemoryError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{U64Codec, UnitCodec};
    use crate::state::{SinkState, SinkStateRef, StateSerializer};
    use crate::two_phase::{TwoPhaseCommitError, TwoPhaseCommitSink};

    type Sink = TwoPhaseCommitSink<InMemoryTable<&'static str>>;

    fn ctx() -> RecordContext {
        RecordContext::default()
    }

    async fn running() -> Sink {
        let mut sink = TwoPhaseCommitSink::new(InMemoryTable::new());
        sink.initialize_state(None).await.unwrap();
        sink
    }

    /// The state as a restore after a crash sees it (encoded and decoded).
    fn round_trip(state: SinkStateRef<'_, u64, ()>) -> SinkState<u64, ()> {
        let serializer = StateSerializer::new(U64Codec, UnitCodec);
        serializer.decode(&serializer.encode(state)).unwrap()
    }

    /// Invariant: rows become visible only when their transaction commits,
    /// in commit order, and handles count up from 1.
    #[tokio::test]
    async fn rows_are_visible_only_after_commit() {
        let mut sink = running().await;
        assert_eq!(sink.current_transaction().unwrap().handle, 1);
        sink.invoke("a", &ctx()).await.unwrap();
        sink.snapshot_state(1).await.unwrap();
        sink.invoke("b", &ctx()).await.unwrap();
        sink.snapshot_state(2).await.unwrap();
        let table = sink.handler();
        assert!(table.committed().is_empty());
        assert_eq!(table.status(1), Some(TxnStatus::PreCommitted));
        assert_eq!(table.rows(2), Some(&["b"][..]));
        assert_eq!(table.unfinished(), [1, 2, 3]);

        sink.notify_checkpoint_complete(2).await.unwrap();
        let table = sink.handler();
        assert_eq!(table.committed(), ["a", "b"]);
        assert_eq!(table.status(2), Some(TxnStatus::Committed));
        assert_eq!(table.rows(1), None);
        assert_eq!(table.unfinished(), [3]);
    }

    /// Invariant: a failing commit leaves the transaction pre-committed, so
    /// restoring the checkpoint over the same table commits it once commits
    /// succeed again.
    #[tokio::test]
    async fn failed_commit_is_retried_by_restore() {
        let mut sink = running().await;
        sink.invoke("a", &ctx()).await.unwrap();
        let state = round_trip(sink.snapshot_state(1).await.unwrap());
        sink.handler_mut().set_failing_commits(true);
        let Err(TwoPhaseCommitError::CommitFailed { failures }) =
            sink.notify_checkpoint_complete(1).await
        else {
            panic!("the commit must fail while the table fails commits");
        };
        assert_eq!(failures[0].error, InMemoryError::CommitsFailing { txn: 1 });
        assert_eq!(sink.handler().status(1), Some(TxnStatus::PreCommitted));
        assert!(sink.handler().committed().is_empty());

        let mut table = sink.into_handler();
        table.set_failing_commits(false);
        let mut restored = TwoPhaseCommitSink::new(table);
        restored.initialize_state(Some(vec![state])).await.unwrap();
        let table = restored.handler();
        assert_eq!(table.committed(), ["a"]);
        assert_eq!(table.status(2), Some(TxnStatus::Aborted)); // the restored open one
        assert_eq!(table.unfinished(), [3]); // the new current transaction
        assert_eq!(restored.metrics().recovered_commits, 1);
    }

    /// Invariant: committing again after a restore reports AlreadyCommitted
    /// and does not duplicate rows.
    #[tokio::test]
    async fn repeated_commit_is_already_committed() {
        let mut sink = running().await;
        sink.invoke("a", &ctx()).await.unwrap();
        let state = round_trip(sink.snapshot_state(1).await.unwrap());
        sink.notify_checkpoint_complete(1).await.unwrap();

        let mut restored = TwoPhaseCommitSink::new(sink.into_handler());
        restored.initialize_state(Some(vec![state])).await.unwrap();
        assert_eq!(restored.handler().committed(), ["a"]);
        let m = restored.metrics();
        assert_eq!((m.recovered_commits, m.already_committed), (1, 1));
    }

    /// Invariant: a transaction aborted before its commit is reported Lost,
    /// not committed, and its rows never become visible.
    #[tokio::test]
    async fn commit_after_abort_is_lost() {
        let mut sink = running().await;
        sink.invoke("a", &ctx()).await.unwrap();
        let state = round_trip(sink.snapshot_state(1).await.unwrap());
        let mut table = sink.into_handler();
        table.abort(1, &mut ()).await.unwrap(); // e.g. the store's timeout

        let mut restored = TwoPhaseCommitSink::new(table);
        let err = restored.initialize_state(Some(vec![state])).await;
        assert!(matches!(
            err,
            Err(TwoPhaseCommitError::TransactionsLost { .. })
        ));
        assert!(restored.handler().committed().is_empty());
        assert_eq!(restored.metrics().lost, 1);
    }

    /// Invariant: the table refuses transitions outside open → pre-committed
    /// → committed / aborted, and operations on handles it never began.
    #[tokio::test]
    async fn invalid_transitions_are_errors() {
        let mut table = InMemoryTable::new();
        let mut txn = table.begin_transaction(&mut ()).await.unwrap();
        table.pre_commit(&mut txn).await.unwrap();
        assert_eq!(
            table.invoke(&mut txn, "late", &ctx()).await,
            Err(invalid(txn, "write to", TxnStatus::PreCommitted))
        );
        assert_eq!(
            table.pre_commit(&mut txn).await,
            Err(invalid(txn, "pre-commit", TxnStatus::PreCommitted))
        );
        assert_eq!(
            table.invoke(&mut 9, "x", &ctx()).await,
            Err(InMemoryError::UnknownTransaction { txn: 9 })
        );
        table.txns.get_mut(&txn).unwrap().status = TxnStatus::Committed;
        assert_eq!(
            table.abort(txn, &mut ()).await,
            Err(invalid(txn, "abort", TxnStatus::Committed))
        );
        // Aborting twice, or a handle never begun, discards nothing and succeeds.
        let other = table.begin_transaction(&mut ()).await.unwrap();
        table.abort(other, &mut ()).await.unwrap();
        table.abort(other, &mut ()).await.unwrap();
        table.abort(42, &mut ()).await.unwrap();
        assert_eq!(table.status(other), Some(TxnStatus::Aborted));
        assert_eq!(table.status(42), None);
    }

    /// Invariant: a restore over a table that never began the pending
    /// transaction fails recovery instead of silently dropping its rows.
    #[tokio::test]
    async fn restore_over_a_fresh_table_fails() {
        let mut sink = running().await;
        sink.invoke("a", &ctx()).await.unwrap();
        let state = round_trip(sink.snapshot_state(1).await.unwrap());

        let mut restored = TwoPhaseCommitSink::new(InMemoryTable::<&str>::new());
        let Err(TwoPhaseCommitError::RecoveryFailed { failures }) =
            restored.initialize_state(Some(vec![state])).await
        else {
            panic!("recovery must fail on a table without transaction 1");
        };
        assert_eq!(
            failures[0].error,
            InMemoryError::UnknownTransaction { txn: 1 }
        );
        assert!(!restored.is_running());
    }

    /// Invariant: statuses display as the error messages name them.
    #[test]
    fn txn_status_displays_in_words() {
        assert_eq!(TxnStatus::PreCommitted.to_string(), "pre-committed");
        assert_eq!(TxnStatus::Open.to_string(), "open");
    }

    /// Invariant: the unknown-transaction error names the handle.
    #[test]
    fn unknown_transaction_error_names_the_handle() {
        let err = InMemoryError::UnknownTransaction { txn: 7 };
        assert!(
            err.to_string()
                .starts_with("transaction 7 was never begun on this table")
        );
    }

    /// Invariant: `with_failing_commits` makes the table fail its commits.
    #[test]
    fn with_failing_commits_sets_failing() {
        let table = InMemoryTable::<String>::new().with_failing_commits();
        assert!(table.is_failing_commits());
    }

    /// Invariant: a pre-committed transaction reads as pre-committed; a
    /// handle never begun has no status.
    #[tokio::test]
    async fn status_follows_pre_commit_and_unknown_is_none() {
        let mut table = InMemoryTable::<String>::new();
        let mut txn = table.begin_transaction(&mut ()).await.unwrap();
        table.pre_commit(&mut txn).await.unwrap();
        assert_eq!(table.status(txn), Some(TxnStatus::PreCommitted));
        assert_eq!(table.status(txn + 1), None);
    }

    /// Invariant: a failing commit leaves nothing committed and surfaces as
    /// an error of the notification.
    #[tokio::test]
    async fn failing_commits_fail_the_notification() {
        let mut sink = running().await;
        sink.invoke("a", &ctx()).await.unwrap();
        sink.snapshot_state(1).await.unwrap();
        sink.handler_mut().set_failing_commits(true);
        assert!(sink.notify_checkpoint_complete(1).await.is_err());
        assert!(sink.handler().committed().is_empty());
    }

    /// Invariant: only the sink's open transaction is unfinished; close
    /// aborts it.
    #[tokio::test]
    async fn unfinished_is_the_open_transaction_until_close() {
        let mut sink = running().await;
        assert_eq!(sink.handler().unfinished(), [1]);
        sink.close().await.unwrap();
        assert!(sink.handler().unfinished().is_empty());
    }
}
