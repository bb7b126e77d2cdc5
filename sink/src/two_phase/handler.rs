//! What a [`TwoPhaseCommitSink`] drives: the [`TwoPhaseCommitHandler`] a user
//! implements for one external system, with the types it is handed:
//!
//! 1. [`RecordContext`]: the per-record context given to
//!    [`invoke`](TwoPhaseCommitHandler::invoke);
//! 2. [`PreCommitted`]: a transaction after pre-commit, which can only be
//!    committed;
//! 3. [`CommitOutcome`]: what a commit found.

use std::fmt;
use std::future::Future;

#[cfg(doc)]
use super::{SinkMetrics, TwoPhaseCommitError, TwoPhaseCommitSink, memory};
#[cfg(doc)]
use crate::codec::Codec;
use crate::state::TransactionHolder;

/// Per-record context handed to [`TwoPhaseCommitHandler::invoke`] (Flink's
/// `SinkFunction.Context`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecordContext {
    /// The record's event timestamp (ms since the Unix epoch), if it has one.
    pub timestamp: Option<i64>,
    /// The current event-time watermark, if the host tracks one.
    pub current_watermark: Option<i64>,
}

impl RecordContext {
    /// A context carrying an event timestamp.
    pub fn with_timestamp(timestamp: i64) -> Self {
        RecordContext {
            timestamp: Some(timestamp),
            current_watermark: None,
        }
    }
}

/// What a commit found, modelled on Flink Sink V2's committer results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommitOutcome {
    /// The commit took effect now.
    Committed,
    /// The external system reports the transaction as committed already
    /// (typical when recovering: the notification arrived before the crash).
    AlreadyCommitted,
    /// The transaction can no longer be committed and its data is gone (for
    /// example the broker aborted it after its timeout). Counted in
    /// [`SinkMetrics::lost`] and returned as
    /// [`TwoPhaseCommitError::TransactionsLost`], as Flink fails the job;
    /// only with
    /// [`ignore_failures_after_transaction_timeout`](TwoPhaseCommitSink::ignore_failures_after_transaction_timeout)
    /// and a transaction older than the timeout is it logged instead.
    Lost {
        /// Why, for the log.
        reason: String,
    },
}

/// A transaction that went through [`TwoPhaseCommitHandler::pre_commit`]
/// (or was restored from a checkpoint's pending list). It can only be
/// committed ([`TwoPhaseCommitHandler::commit`],
/// [`TwoPhaseCommitHandler::recover_and_commit`]); it is never given to an
/// abort, and only this crate creates one.
///
/// A pre-committed transaction cannot be aborted:
///
/// ```compile_fail
/// use kafka_sink::{PreCommitted, TwoPhaseCommitHandler};
/// async fn oops<H: TwoPhaseCommitHandler>(h: &mut H, p: PreCommitted<H::Txn>, ctx: &mut H::Ctx) {
///     h.abort(p, ctx).await.unwrap(); // expected `H::Txn`, found `PreCommitted<H::Txn>`
/// }
/// ```
///
/// and there is no public constructor: a `PreCommitted` only comes from the
/// sink.
///
/// ```compile_fail
/// let p = kafka_sink::PreCommitted::new(kafka_sink::TransactionHolder::new(1u64, 0));
/// ```
#[derive(Debug, PartialEq, Eq)]
pub struct PreCommitted<T> {
    pub(super) holder: TransactionHolder<T>,
}

impl<T> PreCommitted<T> {
    pub(crate) fn new(holder: TransactionHolder<T>) -> Self {
        PreCommitted { holder }
    }

    /// The transaction handle.
    pub fn handle(&self) -> &T {
        &self.holder.handle
    }

    /// The transaction handle, mutably (for example to take a live resource
    /// out of it while committing).
    pub fn handle_mut(&mut self) -> &mut T {
        &mut self.holder.handle
    }

    /// When the transaction began (ms since the Unix epoch).
    pub fn start_time_ms(&self) -> u64 {
        self.holder.start_time_ms
    }

    /// The handle with its start time.
    pub fn holder(&self) -> &TransactionHolder<T> {
        &self.holder
    }
}

/// The transaction operations of one external system, driven by a
/// [`TwoPhaseCommitSink`] (the abstract methods and hooks of Flink's
/// `TwoPhaseCommitSinkFunction`).
///
/// Methods return `impl Future + Send`; implement them with `async fn`.
/// `Txn` is the persisted transaction handle: it is cloned only to list the
/// transactions handled during recovery, and encoded into checkpoints by a
/// [`Codec`]. Keep live resources (connections, producers) in the handler,
/// keyed by something in the handle, or in a field the codec skips.
///
/// A handler whose rows become visible at commit (a shorter
/// [`memory::InMemoryTable`]):
///
/// ```
/// use kafka_sink::{CommitOutcome, PreCommitted, RecordContext, TwoPhaseCommitHandler, TwoPhaseCommitSink};
/// use std::collections::BTreeMap;
///
/// /// Rows of a transaction become visible at commit.
/// #[derive(Default)]
/// struct Table { next: u64, open: BTreeMap<u64, Vec<String>>, committed: Vec<String> }
///
/// impl TwoPhaseCommitHandler for Table {
///     type Value = String;
///     type Txn = u64;
///     type Ctx = ();
///     type Error = std::io::Error;
///
///     async fn begin_transaction(&mut self, _: &mut ()) -> std::io::Result<u64> {
///         self.next += 1;
///         self.open.insert(self.next, Vec::new());
///         Ok(self.next)
///     }
///     async fn invoke(&mut self, txn: &mut u64, row: String, _: &RecordContext) -> std::io::Result<()> {
///         self.open.entry(*txn).or_default().push(row);
///         Ok(())
///     }
///     async fn pre_commit(&mut self, _: &mut u64) -> std::io::Result<()> { Ok(()) }
///     async fn commit(&mut self, txn: PreCommitted<u64>, _: &mut ()) -> std::io::Result<CommitOutcome> {
///         match self.open.remove(txn.handle()) {
///             Some(rows) => { self.committed.extend(rows); Ok(CommitOutcome::Committed) }
///             None => Ok(CommitOutcome::AlreadyCommitted), // committed before a restore
///         }
///     }
///     async fn abort(&mut self, txn: u64, _: &mut ()) -> std::io::Result<()> {
///         self.open.remove(&txn);
///         Ok(())
///     }
///     async fn initialize_user_context(&mut self) -> std::io::Result<()> { Ok(()) }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// let mut sink = TwoPhaseCommitSink::new(Table::default());
/// sink.initialize_state(None).await?;
/// sink.invoke("row-1".into(), &RecordContext::default()).await?;
/// sink.snapshot_state(1).await?;
/// sink.notify_checkpoint_complete(1).await?;
/// assert_eq!(sink.handler().committed, ["row-1"]);
/// # Ok(())
/// # }
/// ```
pub trait TwoPhaseCommitHandler: Send {
    /// The input records.
    type Value: Send;
    /// The transaction handle.
    type Txn: Clone + fmt::Debug + Send + Sync;
    /// The user context persisted with the state (use `()` for none).
    type Ctx: Send + Sync;
    /// The error of every operation.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Opens a new transaction.
    fn begin_transaction(
        &mut self,
        ctx: &mut Self::Ctx,
    ) -> impl Future<Output = Result<Self::Txn, Self::Error>> + Send;

    /// Writes `value` into the open transaction `txn`.
    fn invoke(
        &mut self,
        txn: &mut Self::Txn,
        value: Self::Value,
        context: &RecordContext,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send;

    /// Makes every later [`commit`](Self::commit) of `txn` succeed (usually:
    /// flush). No record is written to `txn` afterwards.
    fn pre_commit(
        &mut self,
        txn: &mut Self::Txn,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send;

    /// Commits a pre-committed transaction. Must be idempotent: the same
    /// transaction may be committed again after a restore.
    fn commit(
        &mut self,
        txn: PreCommitted<Self::Txn>,
        ctx: &mut Self::Ctx,
    ) -> impl Future<Output = Result<CommitOutcome, Self::Error>> + Send;

    /// Aborts an open transaction; during an in-process failover also a
    /// pre-committed one whose checkpoint never completed (as a two-phase
    /// commit participant may abort after prepare).
    fn abort(
        &mut self,
        txn: Self::Txn,
        ctx: &mut Self::Ctx,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send;

    /// Commits a pre-committed transaction restored from a checkpoint, in a
    /// process that may not be the one that began it. Defaults to
    /// [`commit`](Self::commit).
    fn recover_and_commit(
        &mut self,
        txn: PreCommitted<Self::Txn>,
        ctx: &mut Self::Ctx,
    ) -> impl Future<Output = Result<CommitOutcome, Self::Error>> + Send {
        self.commit(txn, ctx)
    }

    /// Aborts the transaction that was open at the restored checkpoint.
    /// Defaults to [`abort`](Self::abort).
    fn recover_and_abort(
        &mut self,
        txn: Self::Txn,
        ctx: &mut Self::Ctx,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.abort(txn, ctx)
    }

    /// Creates the user context when none was restored (fresh start, or a
    /// restore whose states carry no context).
    fn initialize_user_context(
        &mut self,
    ) -> impl Future<Output = Result<Self::Ctx, Self::Error>> + Send;

    /// Called after a restore with a recovered context, once every restored
    /// transaction was committed or aborted; `handled` lists them (Flink's
    /// `finishRecoveringContext`). Default: nothing.
    fn finish_recovering_and_committing(
        &mut self,
        ctx: &mut Self::Ctx,
        handled: &[Self::Txn],
    ) -> impl Future<Output = Result<(), Self::Error>> + Send {
        let _ = (ctx, handled);
        std::future::ready(Ok(()))
    }

    /// Called during an in-process failover (a second
    /// [`initialize_state`](TwoPhaseCommitSink::initialize_state)), after the
    /// sink has committed or aborted every transaction this instance held
    /// and before the restore: drop whatever belongs to the old run
    /// (connections, producers, records in flight). Flink gets the same
    /// effect by creating a new operator instance. Default: nothing.
    fn release_after_failover(
        &mut self,
        ctx: &mut Self::Ctx,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send {
        let _ = ctx;
        std::future::ready(Ok(()))
    }
}
