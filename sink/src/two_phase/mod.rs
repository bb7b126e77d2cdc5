//! The generic two-phase-commit sink (Flink's `TwoPhaseCommitSinkFunction`).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::clock::{Clock, SystemClock};
use crate::state::{SinkState, SinkStateRef, TransactionHolder};

mod checkpointed;
mod error;
mod handler;
mod memory;
mod timeout;

#[cfg(test)]
mod tests;

pub use checkpointed::CheckpointedSink;
pub use error::{LostTransaction, Operation, TransactionFailure, TwoPhaseCommitError};
pub use handler::{CommitOutcome, PreCommitted, RecordContext, TwoPhaseCommitHandler};
pub use memory::{InMemoryError, InMemoryTable, TxnStatus};
pub use timeout::DEFAULT_TIMEOUT_WARNING_RATIO;
use timeout::TimeoutPolicy;

/// Counters of a [`TwoPhaseCommitSink`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SinkMetrics {
    /// Transactions begun.
    pub begun: u64,
    /// Pending transactions committed ([`CommitOutcome::Committed`]),
    /// including recovered ones.
    pub committed: u64,
    /// Commits that found the transaction committed already.
    pub already_committed: u64,
    /// Commits that reported [`CommitOutcome::Lost`].
    pub lost: u64,
    /// Commit calls that returned an error (normal or recovery).
    pub commit_failures: u64,
    /// Recovery commit errors swallowed because the transaction was past its
    /// timeout (possible data loss).
    pub ignored_commit_failures: u64,
    /// Restored pending transactions handed to `recover_and_commit`.
    pub recovered_commits: u64,
    /// Restored open transactions aborted.
    pub recovered_aborts: u64,
    /// Transaction-timeout warnings logged.
    pub timeout_warnings: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lifecycle {
    Created,
    Running,
    /// A pre-commit failed and its transaction was aborted: records and
    /// checkpoints are refused until the pipeline restores.
    Failed,
    Closed,
}

/// Flink's two-phase-commit protocol around a [`TwoPhaseCommitHandler`]: see
/// the lifecycle and an example below.
///
/// Pending transactions are kept by checkpoint id in ascending order; a
/// notification commits every pending transaction up to the notified id.
/// Time comes from a [`Clock`] (the system clock unless
/// [`with_clock`](Self::with_clock) is used).
///
/// ```
/// use kafka_sink::{RecordContext, TwoPhaseCommitSink};
/// use kafka_sink::InMemoryTable;
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// let mut sink = TwoPhaseCommitSink::new(InMemoryTable::new());
/// sink.initialize_state(None).await?;
/// sink.invoke("a", &RecordContext::default()).await?;
/// sink.snapshot_state(1).await?; // persist the returned state, then:
/// sink.notify_checkpoint_complete(1).await?;
/// assert_eq!(sink.handler().committed(), ["a"]);
/// sink.close().await?;
/// # Ok(())
/// # }
/// ```
///
/// A user implements [`TwoPhaseCommitHandler`] — how to begin, write to,
/// pre-commit, commit and abort one transaction of some external system —
/// and [`TwoPhaseCommitSink`] runs Flink's checkpoint protocol around it:
///
/// 1. [`initialize_state`](TwoPhaseCommitSink::initialize_state), with the
///    restored state or none:
///    - restored: abort the restored open transaction
///      ([`recover_and_abort`](TwoPhaseCommitHandler::recover_and_abort)),
///      commit every restored pre-committed one in checkpoint order
///      ([`recover_and_commit`](TwoPhaseCommitHandler::recover_and_commit)),
///      keep the (last) restored context and call
///      [`finish_recovering_and_committing`](TwoPhaseCommitHandler::finish_recovering_and_committing);
///    - fresh: [`initialize_user_context`](TwoPhaseCommitHandler::initialize_user_context);
///
///    then begin a transaction.
/// 2. [`invoke`](TwoPhaseCommitSink::invoke): write one value into the open
///    transaction.
/// 3. [`snapshot_state`](TwoPhaseCommitSink::snapshot_state), at each
///    checkpoint: pre-commit the open transaction, keep it as pending under
///    the checkpoint id, begin the next one, and return the state to persist.
/// 4. [`notify_checkpoint_complete`](TwoPhaseCommitSink::notify_checkpoint_complete),
///    once the checkpoint is durable: commit every pending transaction with an
///    id up to the notified one, attempting all before reporting failures.
/// 5. [`close`](TwoPhaseCommitSink::close): abort the open transaction.
///
/// A transaction that was pre-committed becomes a [`PreCommitted`], which the
/// handler can only commit: [`TwoPhaseCommitHandler::abort`] takes the plain
/// transaction type, so a pre-committed transaction cannot be aborted by the
/// sink or handed to an abort by mistake.
///
/// # Example
///
/// [`InMemoryTable`](memory::InMemoryTable) is a complete handler whose rows
/// become visible only at commit (see the [`TwoPhaseCommitHandler`] docs for
/// writing one of your own):
///
/// ```
/// use kafka_sink::{RecordContext, TwoPhaseCommitSink};
/// use kafka_sink::InMemoryTable;
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// let mut sink = TwoPhaseCommitSink::new(InMemoryTable::new());
/// sink.initialize_state(None).await?;
/// sink.invoke("a", &RecordContext::default()).await?;
/// sink.snapshot_state(1).await?; // persist this state durably
/// sink.invoke("b", &RecordContext::default()).await?;
/// assert!(sink.handler().committed().is_empty());
/// sink.notify_checkpoint_complete(1).await?;
/// assert_eq!(sink.handler().committed(), ["a"]);
/// # Ok(())
/// # }
/// ```
pub struct TwoPhaseCommitSink<H: TwoPhaseCommitHandler> {
    /// The user's hooks into the external system's transactions.
    handler: H,
    /// Source of transaction start times and of the age checks.
    clock: Arc<dyn Clock>,
    /// The external system's transaction timeout, the warning ratio and
    /// whether recovery swallows commit errors past the timeout.
    policy: TimeoutPolicy,
    /// The open transaction receiving records (none before initialization,
    /// after close, or after a failed pre-commit).
    current: Option<TransactionHolder<H::Txn>>,
    /// Whether the timeout warning was already logged for `current` (once per
    /// transaction).
    current_warned: bool,
    /// Pre-committed transactions awaiting their checkpoint's notification,
    /// by checkpoint id, ascending.
    pending: BTreeMap<u64, PreCommitted<H::Txn>>,
    /// The user context, persisted with every snapshot (set by
    /// initialization).
    context: Option<H::Ctx>,
    /// The id of the last checkpoint snapshotted, to refuse one that does not
    /// increase.
    last_snapshot: Option<u64>,
    /// Created, running, failed (after a pre-commit error) or closed.
    lifecycle: Lifecycle,
    /// The counters [`metrics`](Self::metrics) returns.
    metrics: SinkMetrics,
}

impl<H: TwoPhaseCommitHandler> fmt::Debug for TwoPhaseCommitSink<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TwoPhaseCommitSink")
            .field("lifecycle", &self.lifecycle)
            .field("current", &self.current)
            .field("pending", &self.pending.keys().collect::<Vec<_>>())
            .field("last_snapshot", &self.last_snapshot)
            .field("policy", &self.policy)
            .field("metrics", &self.metrics)
            .finish_non_exhaustive()
    }
}

type SinkResult<T, H> = Result<T, TwoPhaseCommitError<<H as TwoPhaseCommitHandler>::Error>>;

fn hook<E>(operation: Operation) -> impl FnOnce(E) -> TwoPhaseCommitError<E> {
    move |source| TwoPhaseCommitError::Hook { operation, source }
}

impl<H: TwoPhaseCommitHandler> TwoPhaseCommitSink<H> {
    /// A sink over `handler` using the system clock, no transaction timeout
    /// (so no warnings) and warning ratio [`DEFAULT_TIMEOUT_WARNING_RATIO`].
    ///
    /// ```
    /// use kafka_sink::TwoPhaseCommitSink;
    /// use kafka_sink::InMemoryTable;
    /// let sink = TwoPhaseCommitSink::new(InMemoryTable::<&str>::new());
    /// assert!(!sink.is_running()); // call initialize_state first
    /// ```
    pub fn new(handler: H) -> Self {
        TwoPhaseCommitSink {
            handler,
            clock: Arc::new(SystemClock),
            policy: TimeoutPolicy {
                timeout: None,
                warning_ratio: Some(DEFAULT_TIMEOUT_WARNING_RATIO),
                ignore_failures_after_timeout: false,
            },
            current: None,
            current_warned: false,
            pending: BTreeMap::new(),
            context: None,
            last_snapshot: None,
            lifecycle: Lifecycle::Created,
            metrics: SinkMetrics::default(),
        }
    }

    /// Uses `clock` for transaction start times and age checks.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Sets the transaction timeout of the external system. It only feeds
    /// the warnings and [`ignore_failures_after_transaction_timeout`](Self::ignore_failures_after_transaction_timeout).
    pub fn set_transaction_timeout(&mut self, timeout: Duration) -> &mut Self {
        self.policy.timeout = Some(timeout);
        self
    }

    /// Logs a warning when a transaction has been open longer than
    /// `ratio` × the transaction timeout, checked when records are written
    /// (once per transaction) and before each commit. The default ratio is
    /// [`DEFAULT_TIMEOUT_WARNING_RATIO`].
    ///
    /// # Panics
    /// If `ratio` is not within `0.0..=1.0`.
    ///
    /// ```
    /// use kafka_sink::{RecordContext, TwoPhaseCommitSink};
    /// use kafka_sink::ManualClock;
    /// use kafka_sink::InMemoryTable;
    /// use std::{sync::Arc, time::Duration};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    /// let clock = ManualClock::new(0);
    /// let mut sink = TwoPhaseCommitSink::new(InMemoryTable::new()).with_clock(Arc::new(clock.clone()));
    /// sink.set_transaction_timeout(Duration::from_secs(10)).enable_transaction_timeout_warnings(0.5);
    /// sink.initialize_state(None).await?;
    /// clock.advance(Duration::from_secs(6)); // past 0.5 × 10 s
    /// sink.invoke("a", &RecordContext::default()).await?;
    /// assert_eq!(sink.metrics().timeout_warnings, 1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn enable_transaction_timeout_warnings(&mut self, ratio: f64) -> &mut Self {
        assert!(
            (0.0..=1.0).contains(&ratio),
            "timeout warning ratio must be within [0, 1], got {ratio}"
        );
        self.policy.warning_ratio = Some(ratio);
        self
    }

    /// Turns the timeout warnings off.
    pub fn disable_transaction_timeout_warnings(&mut self) -> &mut Self {
        self.policy.warning_ratio = None;
        self
    }

    /// During recovery only, swallow a commit error of a restored transaction
    /// older than the transaction timeout (logging possible data loss)
    /// instead of failing. Commit errors of normal notifications always fail.
    ///
    /// ```
    /// use kafka_sink::TwoPhaseCommitSink;
    /// use kafka_sink::ManualClock;
    /// use kafka_sink::codec::{U64Codec, UnitCodec};
    /// use kafka_sink::StateSerializer;
    /// use kafka_sink::InMemoryTable;
    /// use std::{sync::Arc, time::Duration};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    /// let serializer = StateSerializer::new(U64Codec, UnitCodec);
    /// let clock = ManualClock::new(0);
    /// let mut sink = TwoPhaseCommitSink::new(InMemoryTable::<&str>::new()).with_clock(Arc::new(clock.clone()));
    /// sink.initialize_state(None).await?;
    /// let bytes = serializer.encode(sink.snapshot_state(1).await?);
    ///
    /// // Restored an hour later; the transaction timed out and its commit fails.
    /// clock.advance(Duration::from_secs(3600));
    /// let failing = sink.into_handler().with_failing_commits();
    /// let mut restored = TwoPhaseCommitSink::new(failing).with_clock(Arc::new(clock));
    /// restored.set_transaction_timeout(Duration::from_secs(900)).ignore_failures_after_transaction_timeout();
    /// restored.initialize_state(Some(vec![serializer.decode(&bytes)?])).await?; // logged, not failed
    /// assert_eq!(restored.metrics().ignored_commit_failures, 1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn ignore_failures_after_transaction_timeout(&mut self) -> &mut Self {
        self.policy.ignore_failures_after_timeout = true;
        self
    }

    /// The handler.
    pub fn handler(&self) -> &H {
        &self.handler
    }

    /// The handler, mutably.
    pub fn handler_mut(&mut self) -> &mut H {
        &mut self.handler
    }

    /// Consumes the sink, returning the handler.
    pub fn into_handler(self) -> H {
        self.handler
    }

    /// The user context (after initialization).
    pub fn user_context(&self) -> Option<&H::Ctx> {
        self.context.as_ref()
    }

    /// The transaction receiving records, if one is open.
    pub fn current_transaction(&self) -> Option<&TransactionHolder<H::Txn>> {
        self.current.as_ref()
    }

    /// Checkpoint ids of the pre-committed transactions awaiting a
    /// notification, ascending.
    pub fn pending_checkpoints(&self) -> Vec<u64> {
        self.pending.keys().copied().collect()
    }

    /// The counters.
    pub fn metrics(&self) -> SinkMetrics {
        self.metrics
    }

    /// Whether `initialize_state` succeeded and `close` was not called.
    pub fn is_running(&self) -> bool {
        self.lifecycle == Lifecycle::Running
    }

    /// The state as it would be persisted now (borrowed).
    pub fn state(&self) -> SinkStateRef<'_, H::Txn, H::Ctx> {
        SinkStateRef {
            current: self
                .current
                .as_ref()
                .map(|h| TransactionHolder::new(&h.handle, h.start_time_ms)),
            pending: self
                .pending
                .iter()
                .map(|(id, p)| (*id, TransactionHolder::new(p.handle(), p.start_time_ms())))
                .collect(),
            context: self.context.as_ref(),
        }
    }

    /// The first step of an in-process failover: settles every transaction
    /// this instance still holds against the checkpoint being restored, and
    /// returns the transactions it committed (they count as handled by the
    /// restore).
    ///
    /// - The open transaction is aborted: its records come again from the
    ///   rewound source.
    /// - A pending transaction that the restored state also holds belongs to
    ///   a completed checkpoint: it is committed with the live handle and
    ///   taken out of the restored state. If that commit fails, the restore
    ///   commits it (`recover_and_commit`).
    /// - A pending transaction the restored state does not hold belongs to a
    ///   checkpoint that never completed: it is aborted. If that abort fails,
    ///   the restore's clean-up must abort it (the Kafka handler aborts every
    ///   id of its pool that the restore did not handle).
    ///
    /// Then the handler releases its per-run resources and the sink is back
    /// to `Created`, so that a failed restore can be retried.
    async fn settle_before_failover(
        &mut self,
        states: &mut [SinkState<H::Txn, H::Ctx>],
    ) -> SinkResult<Vec<H::Txn>, H> {
        let restored: std::collections::BTreeSet<u64> = states
            .iter()
            .flat_map(|s| s.pending.keys().copied())
            .collect();
        let mut ctx = self
            .context
            .take()
            .ok_or(TwoPhaseCommitError::NotInitialized)?;
        if let Some(current) = self.current.take()
            && let Err(error) = self.handler.abort(current.handle, &mut ctx).await
        {
            tracing::warn!(%error, "failover: aborting the open transaction failed; the restore aborts it");
        }
        let mut committed = Vec::new();
        for (checkpoint_id, txn) in std::mem::take(&mut self.pending) {
            let handle = txn.handle().clone();
            if restored.contains(&checkpoint_id) {
                match self.handler.commit(txn, &mut ctx).await {
                    Ok(CommitOutcome::Lost { reason }) => {
                        // Left to the restore, which reports the loss.
                        tracing::warn!(checkpoint_id, transaction = ?handle, reason, "failover: transaction lost; the restore reports it");
                    }
                    Ok(outcome) => {
                        let _ = self.record_outcome(checkpoint_id, &handle, outcome, 0);
                        for state in states.iter_mut() {
                            state.pending.remove(&checkpoint_id);
                        }
                        committed.push(handle);
                    }
                    Err(error) => {
                        self.metrics.commit_failures += 1;
                        tracing::warn!(checkpoint_id, transaction = ?handle, %error, "failover: commit failed; the restore commits it");
                    }
                }
            } else if let Err(error) = self.handler.abort(txn.holder.handle, &mut ctx).await {
                tracing::warn!(checkpoint_id, transaction = ?handle, %error, "failover: aborting the transaction of a checkpoint that never completed failed");
            }
        }
        self.lifecycle = Lifecycle::Created;
        self.last_snapshot = None;
        self.handler
            .release_after_failover(&mut ctx)
            .await
            .map_err(hook(Operation::ReleaseAfterFailover))?;
        Ok(committed)
    }

    fn ensure_running(&self) -> SinkResult<(), H> {
        match self.lifecycle {
            Lifecycle::Running => Ok(()),
            Lifecycle::Created => Err(TwoPhaseCommitError::NotInitialized),
            Lifecycle::Failed => Err(TwoPhaseCommitError::RestoreRequired),
            Lifecycle::Closed => Err(TwoPhaseCommitError::Closed),
        }
    }

    async fn begin_new(&mut self) -> SinkResult<(), H> {
        let ctx = self
            .context
            .as_mut()
            .ok_or(TwoPhaseCommitError::NotInitialized)?;
        let txn = self
            .handler
            .begin_transaction(ctx)
            .await
            .map_err(hook(Operation::BeginTransaction))?;
        self.current = Some(TransactionHolder::new(txn, self.clock.now_millis()));
        self.current_warned = false;
        self.metrics.begun += 1;
        Ok(())
    }

    /// Counts a commit's outcome; a loss comes back unless it is ignored
    /// (the option is set and the transaction, `elapsed_ms` old, is past the
    /// transaction timeout).
    fn record_outcome(
        &mut self,
        checkpoint_id: u64,
        txn: &H::Txn,
        outcome: CommitOutcome,
        elapsed_ms: u64,
    ) -> Option<LostTransaction> {
        match outcome {
            CommitOutcome::Committed => self.metrics.committed += 1,
            CommitOutcome::AlreadyCommitted => {
                tracing::info!(checkpoint_id, transaction = ?txn, "transaction was already committed");
                self.metrics.already_committed += 1;
            }
            CommitOutcome::Lost { reason } => {
                self.metrics.lost += 1;
                if self.policy.ignore_failures_after_timeout && self.policy.past_timeout(elapsed_ms)
                {
                    tracing::error!(
                        checkpoint_id,
                        transaction = ?txn,
                        reason,
                        elapsed_ms,
                        "transaction older than the transaction timeout cannot be committed \
                         any more; ignored as configured. Data loss has occurred"
                    );
                } else {
                    return Some(LostTransaction {
                        checkpoint_id,
                        transaction: format!("{txn:?}"),
                        reason,
                    });
                }
            }
        }
        None
    }

    /// Initializes the sink: `None` for a fresh start, `Some(states)` when
    /// restoring a checkpoint (several states after a rescale, none for a
    /// subtask that got no state).
    ///
    /// A restore:
    /// 1. commits the restored pre-committed transactions in checkpoint order
    ///    ([`recover_and_commit`](TwoPhaseCommitHandler::recover_and_commit));
    /// 2. aborts each restored open transaction
    ///    ([`recover_and_abort`](TwoPhaseCommitHandler::recover_and_abort));
    /// 3. begins the first transaction, so no record is written before
    ///    recovery finished.
    ///
    /// Every restored transaction is attempted before failures are reported
    /// as [`TwoPhaseCommitError::RecoveryFailed`]; the sink then stays
    /// uninitialized and the call may be retried.
    ///
    /// **In-process failover.** Called again on a running or failed sink
    /// (after a failed checkpoint, or when another operator of the pipeline
    /// failed), it first settles what this instance holds:
    /// 1. the open transaction is aborted;
    /// 2. a pending transaction that the restored state also holds is
    ///    committed (its checkpoint completed);
    /// 3. any other pending transaction is aborted (its checkpoint never
    ///    completed);
    /// 4. [`release_after_failover`](TwoPhaseCommitHandler::release_after_failover)
    ///    drops the old run's resources.
    ///
    /// Then it restores as a new instance would, without a process restart.
    ///
    /// ```
    /// use kafka_sink::{RecordContext, TwoPhaseCommitSink};
    /// use kafka_sink::codec::{U64Codec, UnitCodec};
    /// use kafka_sink::StateSerializer;
    /// use kafka_sink::InMemoryTable;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    /// let serializer = StateSerializer::new(U64Codec, UnitCodec);
    /// let mut sink = TwoPhaseCommitSink::new(InMemoryTable::new());
    /// sink.initialize_state(None).await?;
    ///
    /// sink.invoke("a", &RecordContext::default()).await?;
    /// let bytes = serializer.encode(sink.snapshot_state(1).await?);
    ///
    /// // Restore: commit what checkpoint 1 pre-committed, abort what was open.
    /// let mut restored = TwoPhaseCommitSink::new(sink.into_handler());
    /// restored.initialize_state(Some(vec![serializer.decode(&bytes)?])).await?;
    /// assert_eq!(restored.handler().committed(), ["a"]);
    /// assert!(restored.is_running());
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// Failover in the same process:
    ///
    /// ```
    /// use kafka_sink::{RecordContext, TwoPhaseCommitSink};
    /// use kafka_sink::codec::{U64Codec, UnitCodec};
    /// use kafka_sink::StateSerializer;
    /// use kafka_sink::{InMemoryTable, TxnStatus};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    /// let serializer = StateSerializer::new(U64Codec, UnitCodec);
    /// let mut sink = TwoPhaseCommitSink::new(InMemoryTable::new());
    /// sink.initialize_state(None).await?; // begins transaction 1
    /// sink.invoke("a", &RecordContext::default()).await?;
    /// let checkpoint_1 = serializer.encode(sink.snapshot_state(1).await?);
    /// sink.invoke("b", &RecordContext::default()).await?; // transaction 2
    /// sink.snapshot_state(2).await?; // checkpoint 2 never completes
    ///
    /// sink.initialize_state(Some(vec![serializer.decode(&checkpoint_1)?])).await?;
    /// assert_eq!(sink.handler().committed(), ["a"]); // checkpoint 1 completed
    /// assert_eq!(sink.handler().status(2), Some(TxnStatus::Aborted)); // "b" comes again
    /// assert!(sink.is_running());
    /// # Ok(())
    /// # }
    /// ```
    pub async fn initialize_state(
        &mut self,
        restored: Option<Vec<SinkState<H::Txn, H::Ctx>>>,
    ) -> SinkResult<(), H> {
        let mut states = restored.unwrap_or_default();
        let mut handled = match self.lifecycle {
            Lifecycle::Created => Vec::new(),
            Lifecycle::Running | Lifecycle::Failed => {
                self.settle_before_failover(&mut states).await?
            }
            Lifecycle::Closed => return Err(TwoPhaseCommitError::Closed),
        };
        // As in Flink, the context of the last state that has one wins.
        let mut recovered_ctx = None;
        for s in &mut states {
            if let Some(c) = s.context.take() {
                recovered_ctx = Some(c);
            }
        }
        let had_ctx = recovered_ctx.is_some();
        let mut ctx = match recovered_ctx {
            Some(c) => c,
            None => self
                .handler
                .initialize_user_context()
                .await
                .map_err(hook(Operation::InitializeUserContext))?,
        };

        let mut failures = Vec::new();
        let mut lost = Vec::new();
        // The transactions that were open (not pre-committed) at the
        // checkpoints are aborted first: their ids are not those of the
        // pending ones, and while one is open it holds the last stable
        // offset of its partitions, which settling a fenced commit by the
        // log waits on.
        for state in &mut states {
            if let Some(current) = state.current.take() {
                handled.push(current.handle.clone());
                match self
                    .handler
                    .recover_and_abort(current.handle, &mut ctx)
                    .await
                {
                    Ok(()) => self.metrics.recovered_aborts += 1,
                    Err(error) => failures.push(TransactionFailure {
                        checkpoint_id: None,
                        operation: Operation::RecoverAndAbort,
                        error,
                    }),
                }
            }
        }
        for state in states {
            for (checkpoint_id, holder) in state.pending {
                let now = self.clock.now_millis();
                let elapsed = holder.elapsed_ms(now);
                if self
                    .policy
                    .warn_if_close(&holder.handle, elapsed, "recovery commit")
                {
                    self.metrics.timeout_warnings += 1;
                }
                handled.push(holder.handle.clone());
                let txn = holder.handle.clone();
                self.metrics.recovered_commits += 1;
                let result = self
                    .handler
                    .recover_and_commit(PreCommitted::new(holder), &mut ctx)
                    .await;
                let elapsed = elapsed.saturating_add(self.clock.now_millis().saturating_sub(now));
                match result {
                    Ok(outcome) => {
                        lost.extend(self.record_outcome(checkpoint_id, &txn, outcome, elapsed))
                    }
                    Err(error) => {
                        self.metrics.commit_failures += 1;
                        if self.policy.ignore_failures_after_timeout
                            && self.policy.past_timeout(elapsed)
                        {
                            tracing::error!(
                                checkpoint_id,
                                transaction = ?txn,
                                elapsed_ms = elapsed,
                                timeout_ms = self.policy.timeout_ms(),
                                %error,
                                "failed to commit a restored transaction older than the \
                                 transaction timeout; commit will not be attempted again. \
                                 Data loss might have occurred"
                            );
                            self.metrics.ignored_commit_failures += 1;
                        } else {
                            failures.push(TransactionFailure {
                                checkpoint_id: Some(checkpoint_id),
                                operation: Operation::RecoverAndCommit,
                                error,
                            });
                        }
                    }
                }
            }
        }
        if !failures.is_empty() {
            return Err(TwoPhaseCommitError::RecoveryFailed { failures });
        }
        if !lost.is_empty() {
            return Err(TwoPhaseCommitError::TransactionsLost { lost });
        }
        if had_ctx {
            self.handler
                .finish_recovering_and_committing(&mut ctx, &handled)
                .await
                .map_err(hook(Operation::FinishRecoveringAndCommitting))?;
        }
        self.context = Some(ctx);
        self.pending.clear();
        self.last_snapshot = None;
        self.lifecycle = Lifecycle::Running;
        self.begin_new().await
    }

    /// Writes `value` into the open transaction (beginning one first if the
    /// previous begin failed).
    pub async fn invoke(&mut self, value: H::Value, context: &RecordContext) -> SinkResult<(), H> {
        self.ensure_running()?;
        if self.current.is_none() {
            self.begin_new().await?;
        }
        let Some(current) = self.current.as_mut() else {
            return Err(TwoPhaseCommitError::NotInitialized);
        };
        if !self.current_warned {
            let elapsed = current.elapsed_ms(self.clock.now_millis());
            if self
                .policy
                .warn_if_close(&current.handle, elapsed, "invoke")
            {
                self.current_warned = true;
                self.metrics.timeout_warnings += 1;
            }
        }
        self.handler
            .invoke(&mut current.handle, value, context)
            .await
            .map_err(hook(Operation::Invoke))
    }

    /// Checkpoint barrier: pre-commits the open transaction, keeps it pending
    /// under `checkpoint_id`, begins the next transaction and returns the
    /// state to persist for this checkpoint.
    ///
    /// Ids must increase. If the pre-commit fails, the transaction stays
    /// open and the checkpoint must be declined.
    pub async fn snapshot_state(
        &mut self,
        checkpoint_id: u64,
    ) -> SinkResult<SinkStateRef<'_, H::Txn, H::Ctx>, H> {
        self.ensure_running()?;
        if let Some(last) = self.last_snapshot
            && checkpoint_id <= last
        {
            return Err(TwoPhaseCommitError::NonIncreasingCheckpoint {
                checkpoint_id,
                last,
            });
        }
        if let Some(mut current) = self.current.take() {
            if let Err(e) = self.handler.pre_commit(&mut current.handle).await {
                // The transaction cannot be pre-committed (a record of it
                // failed): abort it now, so that nothing stays prepared or
                // blocks readers, and refuse further records. Its records
                // are lost to this sink, so the pipeline must restore from
                // the last completed checkpoint (which rewinds the source).
                self.lifecycle = Lifecycle::Failed;
                if let Some(ctx) = self.context.as_mut()
                    && let Err(abort) = self.handler.abort(current.handle, ctx).await
                {
                    tracing::error!(error = %abort, "aborting the transaction that failed to pre-commit failed");
                }
                return Err(hook(Operation::PreCommit)(e));
            }
            self.pending
                .insert(checkpoint_id, PreCommitted::new(current));
        }
        self.last_snapshot = Some(checkpoint_id);
        self.begin_new().await?;
        Ok(self.state())
    }

    /// Checkpoint `checkpoint_id` is durable: commits every pending
    /// transaction with an id ≤ `checkpoint_id`, in checkpoint order, and
    /// returns how many were handed to commit. A notification for an old or
    /// unknown id commits nothing new.
    ///
    /// Every due transaction is attempted and removed from memory before
    /// failures are returned as [`TwoPhaseCommitError::CommitFailed`].
    pub async fn notify_checkpoint_complete(&mut self, checkpoint_id: u64) -> SinkResult<usize, H> {
        if self.lifecycle != Lifecycle::Failed {
            self.ensure_running()?;
        }
        let later = match checkpoint_id.checked_add(1) {
            Some(next) => self.pending.split_off(&next),
            None => BTreeMap::new(),
        };
        let due = std::mem::replace(&mut self.pending, later);
        let count = due.len();
        let mut failures = Vec::new();
        let mut lost = Vec::new();
        for (id, txn) in due {
            let elapsed = txn.holder.elapsed_ms(self.clock.now_millis());
            if self.policy.warn_if_close(txn.handle(), elapsed, "commit") {
                self.metrics.timeout_warnings += 1;
            }
            let handle = txn.handle().clone();
            let retry = PreCommitted::new(txn.holder.clone());
            let ctx = self
                .context
                .as_mut()
                .ok_or(TwoPhaseCommitError::NotInitialized)?;
            match self.handler.commit(txn, ctx).await {
                Ok(outcome) => lost.extend(self.record_outcome(id, &handle, outcome, elapsed)),
                Err(error) => {
                    self.metrics.commit_failures += 1;
                    tracing::error!(checkpoint_id = id, transaction = ?handle, %error, "commit failed; retried at the next notification");
                    // Still pending (Flink's pendingCommitTransactions): the
                    // next notification, or a restore, commits it.
                    self.pending.insert(id, retry);
                    failures.push(TransactionFailure {
                        checkpoint_id: Some(id),
                        operation: Operation::Commit,
                        error,
                    });
                }
            }
        }
        if !lost.is_empty() {
            // Losses come first: failed commits stay pending and are retried
            // at the next notification anyway.
            for f in &failures {
                tracing::error!(checkpoint_id = ?f.checkpoint_id, error = %f.error, "commit failed; retried at the next notification");
            }
            Err(TwoPhaseCommitError::TransactionsLost { lost })
        } else if !failures.is_empty() {
            Err(TwoPhaseCommitError::CommitFailed { failures })
        } else {
            Ok(count)
        }
    }

    /// Checkpoint `checkpoint_id` was aborted: nothing to do (its pending
    /// transaction is committed by the next completed checkpoint).
    pub fn notify_checkpoint_aborted(&mut self, checkpoint_id: u64) {
        tracing::debug!(checkpoint_id, "checkpoint aborted");
    }

    /// Aborts the open transaction and closes the sink. Pending transactions
    /// are left alone: they belong to checkpoints and a restore commits
    /// them. Closing twice is a no-op.
    pub async fn close(&mut self) -> SinkResult<(), H> {
        if self.lifecycle != Lifecycle::Running {
            self.lifecycle = Lifecycle::Closed;
            return Ok(()); // a failed sink aborted its transaction already
        }
        self.lifecycle = Lifecycle::Closed;
        if let (Some(current), Some(ctx)) = (self.current.take(), self.context.as_mut()) {
            self.handler
                .abort(current.handle, ctx)
                .await
                .map_err(hook(Operation::Abort))?;
        }
        Ok(())
    }
}
