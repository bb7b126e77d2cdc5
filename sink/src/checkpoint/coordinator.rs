//! [`CheckpointCoordinator`]: registers operators, restores them from the
//! newest valid checkpoint, and triggers checkpoints (see the
//! [module docs](super) for the steps).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Mutex, OwnedMutexGuard};

use super::{
    Checkpoint, CheckpointError, CheckpointStorage, CheckpointedOperator, OperatorError,
    OperatorInfo, OperatorSnapshot, RestoredState,
};
use crate::clock::{Clock, SystemClock};

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

trait DynOperator: Send + Sync {
    fn lock(&self) -> BoxFuture<'static, Box<dyn DynGuard>>;
}

trait DynGuard: Send {
    fn initialize(&mut self, r: Option<RestoredState>) -> BoxFuture<'_, Result<(), OperatorError>>;
    fn snapshot(&mut self, id: u64) -> BoxFuture<'_, Result<Vec<u8>, OperatorError>>;
    fn notify(&mut self, id: u64) -> BoxFuture<'_, Result<(), OperatorError>>;
}

struct Shared<T>(Arc<Mutex<T>>);

impl<T: CheckpointedOperator + 'static> DynOperator for Shared<T> {
    fn lock(&self) -> BoxFuture<'static, Box<dyn DynGuard>> {
        let m = self.0.clone();
        Box::pin(async move { Box::new(m.lock_owned().await) as Box<dyn DynGuard> })
    }
}

impl<T: CheckpointedOperator + 'static> DynGuard for OwnedMutexGuard<T> {
    fn initialize(&mut self, r: Option<RestoredState>) -> BoxFuture<'_, Result<(), OperatorError>> {
        Box::pin((**self).initialize_state(r))
    }
    fn snapshot(&mut self, id: u64) -> BoxFuture<'_, Result<Vec<u8>, OperatorError>> {
        Box::pin((**self).snapshot_state(id))
    }
    fn notify(&mut self, id: u64) -> BoxFuture<'_, Result<(), OperatorError>> {
        Box::pin((**self).notify_checkpoint_complete(id))
    }
}

struct Registered {
    info: OperatorInfo,
    op: Box<dyn DynOperator>,
}

impl Registered {
    /// The error for this operator's `hook` failing with `source`.
    fn failed(
        &self,
        hook: &'static str,
        checkpoint_id: Option<u64>,
        source: OperatorError,
    ) -> CheckpointError {
        CheckpointError::Operator {
            hook,
            uid: self.info.uid.clone(),
            subtask_index: self.info.subtask_index,
            checkpoint_id,
            source,
        }
    }
}

/// Registers operators, restores them, triggers checkpoints and notifies
/// completion; the steps follow.
///
/// ```
/// # use kafka_sink::{CheckpointedOperator, OperatorError, RestoredState};
/// # #[derive(Default)]
/// # struct Counter { n: u64 } // the module example's operator
/// # impl CheckpointedOperator for Counter {
/// #     async fn initialize_state(&mut self, r: Option<RestoredState>) -> Result<(), OperatorError> {
/// #         if let Some(b) = r.and_then(|r| r.own.into_iter().next()) { self.n = u64::from_be_bytes(b.as_slice().try_into()?) }
/// #         Ok(())
/// #     }
/// #     async fn snapshot_state(&mut self, _: u64) -> Result<Vec<u8>, OperatorError> { Ok(self.n.to_be_bytes().to_vec()) }
/// #     async fn notify_checkpoint_complete(&mut self, _: u64) -> Result<(), OperatorError> { Ok(()) }
/// # }
/// use kafka_sink::{CheckpointCoordinator, CheckpointStorage, OperatorInfo};
/// use std::sync::Arc;
/// use tokio::sync::Mutex;
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// let dir = tempfile::tempdir()?;
/// let counter = Arc::new(Mutex::new(Counter::default()));
/// let mut coordinator = CheckpointCoordinator::new(CheckpointStorage::open(dir.path(), 3)?);
/// coordinator.register(OperatorInfo::new("counter", 0, 1), counter.clone())?;
/// assert_eq!(coordinator.restore().await?, None); // fresh start
/// counter.lock().await.n = 5;
/// assert_eq!(coordinator.trigger_checkpoint().await?, 1);
/// # Ok(())
/// # }
/// ```
///
/// It exists to drive the two-phase-commit lifecycle of sources and sinks in
/// one process, not to be a stream processor:
///
/// 1. [`CheckpointCoordinator::register`] operators (anything implementing
///    [`CheckpointedOperator`], shared as `Arc<tokio::sync::Mutex<_>>`) with
///    their [`OperatorInfo`] (unique id, subtask index, parallelism).
/// 2. [`CheckpointCoordinator::restore`]: the newest checkpoint file that
///    passes its checksum is read and every operator gets
///    [`initialize_state`](CheckpointedOperator::initialize_state) (`None` on
///    a fresh start). Corrupt or torn files are skipped with a warning.
///    After a failed checkpoint, call `restore` again to fail over in the
///    same process: every operator is re-initialized from the newest
///    completed checkpoint, as Flink restarts its tasks from it.
/// 3. [`trigger_checkpoint`](CheckpointCoordinator::trigger_checkpoint) (on
///    demand) or [`run_periodic`](CheckpointCoordinator::run_periodic) (on an
///    interval):
///    1. lock every operator in registration order (the barrier);
///    2. [`snapshot_state`](CheckpointedOperator::snapshot_state) each, then
///       unlock;
///    3. write the checkpoint durably through [`CheckpointStorage`]: temp
///       file, fsync, rename, fsync of the directory, keep the last N;
///    4. [`notify_checkpoint_complete`](CheckpointedOperator::notify_checkpoint_complete)
///       every operator.
///
/// **Consistent cuts.** A checkpoint locks all operators before snapshotting
/// any. Code that moves a record from a source to a sink must hold both
/// operators' locks for the whole record, taking them in registration order,
/// so that no record is read from the source but not yet written to the sink
/// at the barrier.
///
/// **Older checkpoints.** Restoring a checkpoint older than one whose
/// notification already committed (only possible when the newest file was
/// damaged after it completed) replays records that sinks already
/// committed: fallback past a corrupt file protects against torn writes, not
/// against losing a completed checkpoint.
///
/// **One trigger at a time.** [`run_periodic`](CheckpointCoordinator::run_periodic)
/// borrows the coordinator; trigger on demand from the same task instead
/// when both are needed.
///
/// **Blocking.** Checkpoint files are written with blocking `std::fs` calls
/// on the calling task (small files; one fsync of the file and one of the
/// directory per checkpoint).
///
/// # Using the hooks from a host engine instead
///
/// An engine with its own checkpointing (barriers, a state backend, a
/// coordinator) calls the same [`CheckpointedOperator`] hooks and skips this
/// driver: at the barrier of checkpoint `n` call `snapshot_state(n)` and store
/// the returned bytes as the operator's state for `(uid, subtask)`; once the
/// engine has made checkpoint `n` durable everywhere call
/// `notify_checkpoint_complete(n)` (late, repeated or skipped notifications
/// are fine: a notification commits everything up to `n`); on every (re)start
/// call `initialize_state` before the first record (and again on a failover), with the
/// states of the restored checkpoint assigned to this subtask (and all of the
/// operator's states as `union`, for operators that need a global view), or
/// `None` on a fresh start. A [`TwoPhaseCommitSink`](crate::TwoPhaseCommitSink)
/// can also be driven directly with its own methods and a
/// [`StateSerializer`](crate::state::StateSerializer).
///
/// # Example
///
/// ```
/// use kafka_sink::{CheckpointCoordinator, CheckpointStorage, CheckpointedOperator,
///     OperatorError, OperatorInfo, RestoredState};
/// use std::sync::Arc;
/// use tokio::sync::Mutex;
///
/// /// A counter whose value survives restarts.
/// #[derive(Default)]
/// struct Counter { n: u64 }
///
/// impl CheckpointedOperator for Counter {
///     async fn initialize_state(&mut self, restored: Option<RestoredState>) -> Result<(), OperatorError> {
///         if let Some(bytes) = restored.and_then(|r| r.own.into_iter().next()) {
///             self.n = u64::from_be_bytes(bytes.as_slice().try_into()?);
///         }
///         Ok(())
///     }
///     async fn snapshot_state(&mut self, _id: u64) -> Result<Vec<u8>, OperatorError> {
///         Ok(self.n.to_be_bytes().to_vec())
///     }
///     async fn notify_checkpoint_complete(&mut self, _id: u64) -> Result<(), OperatorError> { Ok(()) }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// let dir = tempfile::tempdir()?;
/// let counter = Arc::new(Mutex::new(Counter::default()));
/// let mut coordinator = CheckpointCoordinator::new(CheckpointStorage::open(dir.path(), 3)?);
/// coordinator.register(OperatorInfo::new("counter", 0, 1), counter.clone())?;
/// coordinator.restore().await?;
/// counter.lock().await.n = 41;
/// let id = coordinator.trigger_checkpoint().await?;
///
/// // A new process restores the last complete checkpoint.
/// let restored = Arc::new(Mutex::new(Counter::default()));
/// let mut again = CheckpointCoordinator::new(CheckpointStorage::open(dir.path(), 3)?);
/// again.register(OperatorInfo::new("counter", 0, 1), restored.clone())?;
/// assert_eq!(again.restore().await?, Some(id));
/// assert_eq!(restored.lock().await.n, 41);
/// # Ok(())
/// # }
/// ```
pub struct CheckpointCoordinator {
    /// Where checkpoint files are written and read back at a restore.
    storage: CheckpointStorage,
    /// Source of the checkpoints' timestamps.
    clock: Arc<dyn Clock>,
    /// The operators, in registration order (the order they are locked,
    /// snapshotted and notified in).
    operators: Vec<Registered>,
    /// The id the next checkpoint gets; ids never repeat, not even after a
    /// failed checkpoint or a failover.
    next_id: u64,
    /// The last checkpoint written or restored.
    last_completed: Option<u64>,
    /// Registering, restoring or running: what may be called now.
    phase: Phase,
}

/// Where a [`CheckpointCoordinator`] is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Operators may be registered; nothing was restored yet.
    Registering,
    /// A restore started and did not finish (it failed): checkpoints are
    /// refused until a restore succeeds.
    Restoring,
    /// The last restore succeeded: checkpoints may be triggered.
    Running,
}

impl fmt::Debug for CheckpointCoordinator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CheckpointCoordinator")
            .field("storage", &self.storage)
            .field(
                "operators",
                &self.operators.iter().map(|r| &r.info).collect::<Vec<_>>(),
            )
            .field("next_id", &self.next_id)
            .field("last_completed", &self.last_completed)
            .field("phase", &self.phase)
            .finish_non_exhaustive()
    }
}

impl CheckpointCoordinator {
    /// A coordinator writing to `storage`.
    ///
    /// ```
    /// use kafka_sink::{CheckpointCoordinator, CheckpointStorage};
    /// let dir = tempfile::tempdir()?;
    /// let coordinator = CheckpointCoordinator::new(CheckpointStorage::open(dir.path(), 3)?);
    /// assert_eq!(coordinator.next_checkpoint_id(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(storage: CheckpointStorage) -> Self {
        CheckpointCoordinator {
            storage,
            clock: Arc::new(SystemClock),
            operators: Vec::new(),
            next_id: 1,
            last_completed: None,
            phase: Phase::Registering,
        }
    }

    /// Uses `clock` for checkpoint timestamps.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The storage.
    pub fn storage(&self) -> &CheckpointStorage {
        &self.storage
    }

    /// Registers an operator instance; all registrations come before
    /// [`restore`](Self::restore). Checkpoints lock operators in
    /// registration order.
    pub fn register<T: CheckpointedOperator + 'static>(
        &mut self,
        info: OperatorInfo,
        operator: Arc<Mutex<T>>,
    ) -> Result<(), CheckpointError> {
        if self.phase != Phase::Registering {
            return Err(CheckpointError::AlreadyRestored);
        }
        if info.parallelism == 0 || info.subtask_index >= info.parallelism {
            return Err(CheckpointError::InvalidOperatorInfo(info));
        }
        if self
            .operators
            .iter()
            .any(|r| r.info.uid == info.uid && r.info.subtask_index == info.subtask_index)
        {
            return Err(CheckpointError::DuplicateOperator {
                uid: info.uid,
                subtask_index: info.subtask_index,
            });
        }
        self.operators.push(Registered {
            info,
            op: Box::new(Shared(operator)),
        });
        Ok(())
    }

    /// Initializes every operator from the newest valid checkpoint (or
    /// fresh, `None`) and returns the restored checkpoint's id. New
    /// checkpoint ids continue above every checkpoint file present and every
    /// id this coordinator handed out.
    ///
    /// Calling it again is an in-process failover (after a failed
    /// checkpoint, or when the code moving records hit an error): every
    /// operator's `initialize_state` runs again with the newest completed
    /// checkpoint, so sources rewind and sinks settle and restore. A failed
    /// restore may be retried; checkpoints are refused until one succeeds.
    ///
    /// ```
    /// # use kafka_sink::{CheckpointedOperator, OperatorError, RestoredState};
    /// # #[derive(Default)]
    /// # struct Counter { n: u64 } // the module example's operator
    /// # impl CheckpointedOperator for Counter {
    /// #     async fn initialize_state(&mut self, r: Option<RestoredState>) -> Result<(), OperatorError> {
    /// #         if let Some(b) = r.and_then(|r| r.own.into_iter().next()) { self.n = u64::from_be_bytes(b.as_slice().try_into()?) }
    /// #         Ok(())
    /// #     }
    /// #     async fn snapshot_state(&mut self, _: u64) -> Result<Vec<u8>, OperatorError> { Ok(self.n.to_be_bytes().to_vec()) }
    /// #     async fn notify_checkpoint_complete(&mut self, _: u64) -> Result<(), OperatorError> { Ok(()) }
    /// # }
    /// use kafka_sink::{CheckpointCoordinator, CheckpointStorage, OperatorInfo};
    /// use std::sync::Arc;
    /// use tokio::sync::Mutex;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    /// let dir = tempfile::tempdir()?;
    /// let first = Arc::new(Mutex::new(Counter { n: 41 }));
    /// let mut run1 = CheckpointCoordinator::new(CheckpointStorage::open(dir.path(), 3)?);
    /// run1.register(OperatorInfo::new("counter", 0, 1), first)?;
    /// run1.restore().await?;
    /// let id = run1.trigger_checkpoint().await?;
    ///
    /// // After a restart: the same uid gets its state back.
    /// let second = Arc::new(Mutex::new(Counter::default()));
    /// let mut run2 = CheckpointCoordinator::new(CheckpointStorage::open(dir.path(), 3)?);
    /// run2.register(OperatorInfo::new("counter", 0, 1), second.clone())?;
    /// assert_eq!(run2.restore().await?, Some(id));
    /// assert_eq!(second.lock().await.n, 41);
    /// assert_eq!(run2.next_checkpoint_id(), id + 1);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn restore(&mut self) -> Result<Option<u64>, CheckpointError> {
        self.phase = Phase::Restoring;
        let max_on_disk = self.storage.list()?.last().map(|(id, _)| *id);
        let checkpoint = self.storage.latest_valid()?;
        let checkpoint_id = checkpoint.as_ref().map(|c| c.id);
        if let Some(id) = checkpoint_id {
            tracing::info!(checkpoint_id = id, "restoring checkpoint");
        }
        for reg in &self.operators {
            let restored = checkpoint.as_ref().map(|c| c.restored_state_for(&reg.info));
            let mut guard = reg.op.lock().await;
            guard
                .initialize(restored)
                .await
                .map_err(|source| reg.failed("initialize_state", checkpoint_id, source))?;
        }
        // Ids never repeat, not even those of checkpoints that failed before
        // their file was written (a failover restores in the same process).
        let above_files = max_on_disk.max(checkpoint_id).map_or(1, |id| id + 1);
        self.next_id = self.next_id.max(above_files);
        self.last_completed = checkpoint_id;
        self.phase = Phase::Running;
        Ok(checkpoint_id)
    }

    /// The id the next checkpoint will get.
    pub fn next_checkpoint_id(&self) -> u64 {
        self.next_id
    }

    /// The last checkpoint written (or restored) by this coordinator.
    pub fn last_completed(&self) -> Option<u64> {
        self.last_completed
    }

    /// Takes one checkpoint now and returns its id:
    /// 1. the barrier: locks every operator, in registration order;
    /// 2. snapshots each operator, then unlocks them;
    /// 3. writes the checkpoint file durably (the checkpoint is complete);
    /// 4. notifies each operator of the completion.
    ///
    /// A snapshot failure declines the checkpoint (nothing written, nothing
    /// notified; the id is not reused). Notification failures are reported
    /// after every operator was notified, as
    /// [`CheckpointError::NotifyFailed`]; the checkpoint stays complete.
    ///
    /// ```
    /// # use kafka_sink::{CheckpointedOperator, OperatorError, RestoredState};
    /// # #[derive(Default)]
    /// # struct Counter { n: u64 } // the module example's operator
    /// # impl CheckpointedOperator for Counter {
    /// #     async fn initialize_state(&mut self, r: Option<RestoredState>) -> Result<(), OperatorError> {
    /// #         if let Some(b) = r.and_then(|r| r.own.into_iter().next()) { self.n = u64::from_be_bytes(b.as_slice().try_into()?) }
    /// #         Ok(())
    /// #     }
    /// #     async fn snapshot_state(&mut self, _: u64) -> Result<Vec<u8>, OperatorError> { Ok(self.n.to_be_bytes().to_vec()) }
    /// #     async fn notify_checkpoint_complete(&mut self, _: u64) -> Result<(), OperatorError> { Ok(()) }
    /// # }
    /// use kafka_sink::{CheckpointCoordinator, CheckpointError, CheckpointStorage, OperatorInfo};
    /// use std::sync::Arc;
    /// use tokio::sync::Mutex;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    /// let dir = tempfile::tempdir()?;
    /// let counter = Arc::new(Mutex::new(Counter::default()));
    /// let mut coordinator = CheckpointCoordinator::new(CheckpointStorage::open(dir.path(), 3)?);
    /// coordinator.register(OperatorInfo::new("counter", 0, 1), counter.clone())?;
    /// assert!(matches!(coordinator.trigger_checkpoint().await, Err(CheckpointError::NotRestored)));
    /// coordinator.restore().await?;
    /// counter.lock().await.n = 3;
    /// let id = coordinator.trigger_checkpoint().await?;
    /// let written = coordinator.storage().read(&coordinator.storage().path_for(id))?;
    /// assert_eq!(written.operators[0].state, 3u64.to_be_bytes());
    /// # Ok(())
    /// # }
    /// ```
    pub async fn trigger_checkpoint(&mut self) -> Result<u64, CheckpointError> {
        if self.phase != Phase::Running {
            return Err(CheckpointError::NotRestored);
        }
        let id = self.next_id;
        self.next_id += 1;
        let mut guards = Vec::with_capacity(self.operators.len());
        for reg in &self.operators {
            guards.push(reg.op.lock().await);
        }
        let mut operators = Vec::with_capacity(self.operators.len());
        for (reg, guard) in self.operators.iter().zip(guards.iter_mut()) {
            let state = guard
                .snapshot(id)
                .await
                .map_err(|source| reg.failed("snapshot_state", Some(id), source))?;
            operators.push(OperatorSnapshot {
                uid: reg.info.uid.clone(),
                subtask_index: reg.info.subtask_index,
                parallelism: reg.info.parallelism,
                state,
            });
        }
        drop(guards);
        let checkpoint = Checkpoint {
            id,
            timestamp_ms: self.clock.now_millis(),
            operators,
        };
        self.storage.write(&checkpoint)?;
        self.last_completed = Some(id);
        tracing::debug!(checkpoint_id = id, "checkpoint complete");

        let mut failures = Vec::new();
        for reg in &self.operators {
            let mut guard = reg.op.lock().await;
            if let Err(source) = guard.notify(id).await {
                failures.push(reg.failed("notify_checkpoint_complete", Some(id), source));
            }
        }
        if failures.is_empty() {
            Ok(id)
        } else {
            Err(CheckpointError::NotifyFailed {
                checkpoint_id: id,
                failures,
            })
        }
    }

    /// Triggers a checkpoint every `interval` (first one after `interval`)
    /// until `shutdown` completes or a checkpoint fails. Uses tokio time, so
    /// tests can drive it with `tokio::time::pause` / `advance`.
    ///
    /// ```
    /// use kafka_sink::{CheckpointCoordinator, CheckpointStorage};
    /// use std::time::Duration;
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    /// let dir = tempfile::tempdir()?;
    /// let mut coordinator = CheckpointCoordinator::new(CheckpointStorage::open(dir.path(), 3)?);
    /// coordinator.restore().await?;
    /// // Paused tokio time: checkpoints at 1 s, 2 s and 3 s, then shutdown at 3.5 s.
    /// let shutdown = tokio::time::sleep(Duration::from_millis(3_500));
    /// coordinator.run_periodic(Duration::from_secs(1), shutdown).await?;
    /// assert_eq!(coordinator.last_completed(), Some(3));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn run_periodic(
        &mut self,
        interval: Duration,
        shutdown: impl Future<Output = ()>,
    ) -> Result<(), CheckpointError> {
        let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                biased;
                _ = &mut shutdown => return Ok(()),
                _ = ticker.tick() => {
                    self.trigger_checkpoint().await?;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;

    fn coordinator(dir: &tempfile::TempDir) -> CheckpointCoordinator {
        CheckpointCoordinator::new(CheckpointStorage::open(dir.path(), 3).unwrap())
    }

    /// Invariant: a checkpoint's timestamp comes from the coordinator's clock.
    #[tokio::test]
    async fn with_clock_stamps_the_checkpoint_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = coordinator(&dir).with_clock(Arc::new(ManualClock::new(1_700_000_000_000)));
        c.restore().await.unwrap();
        c.trigger_checkpoint().await.unwrap();
        let written = c.storage().latest_valid().unwrap().unwrap();
        assert_eq!(written.timestamp_ms, 1_700_000_000_000);
        assert_eq!(c.storage().dir(), dir.path());
    }

    /// Invariant: ids start at 1 and each checkpoint becomes the last
    /// completed one and moves the next id on.
    #[tokio::test]
    async fn checkpoint_ids_start_at_one_and_advance() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = coordinator(&dir);
        assert_eq!(c.next_checkpoint_id(), 1);
        c.restore().await.unwrap();
        assert_eq!(c.last_completed(), None);
        let id = c.trigger_checkpoint().await.unwrap();
        assert_eq!(
            (id, c.last_completed(), c.next_checkpoint_id()),
            (1, Some(1), 2)
        );
    }
}
