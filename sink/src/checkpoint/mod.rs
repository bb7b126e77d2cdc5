//! A small single-process checkpoint driver.
//!
//! It exists to drive the two-phase-commit lifecycle of sources and sinks in
//! one process, not to be a stream processor:
//!
//! 1. [`CheckpointCoordinator::register`] operators (anything implementing
//!    [`CheckpointedOperator`], shared as `Arc<tokio::sync::Mutex<_>>`) with
//!    their [`OperatorInfo`] (unique id, subtask index, parallelism).
//! 2. [`CheckpointCoordinator::restore`]: the newest checkpoint file that
//!    passes its checksum is read and every operator gets
//!    [`initialize_state`](CheckpointedOperator::initialize_state) (`None` on
//!    a fresh start). Corrupt or torn files are skipped with a warning.
//!    After a failed checkpoint, call `restore` again to fail over in the
//!    same process: every operator is re-initialized from the newest
//!    completed checkpoint, as Flink restarts its tasks from it.
//! 3. [`trigger_checkpoint`](CheckpointCoordinator::trigger_checkpoint) (on
//!    demand) or [`run_periodic`](CheckpointCoordinator::run_periodic) (on an
//!    interval):
//!    1. lock every operator in registration order (the barrier);
//!    2. [`snapshot_state`](CheckpointedOperator::snapshot_state) each, then
//!       unlock;
//!    3. write the checkpoint durably through [`CheckpointStorage`]: temp
//!       file, fsync, rename, fsync of the directory, keep the last N;
//!    4. [`notify_checkpoint_complete`](CheckpointedOperator::notify_checkpoint_complete)
//!       every operator.
//!
//! **Consistent cuts.** A checkpoint locks all operators before snapshotting
//! any. Code that moves a record from a source to a sink must hold both
//! operators' locks for the whole record, taking them in registration order,
//! so that no record is read from the source but not yet written to the sink
//! at the barrier.
//!
//! **Older checkpoints.** Restoring a checkpoint older than one whose
//! notification already committed (only possible when the newest file was
//! damaged after it completed) replays records that sinks already
//! committed: fallback past a corrupt file protects against torn writes, not
//! against losing a completed checkpoint.
//!
//! **One trigger at a time.** [`run_periodic`](CheckpointCoordinator::run_periodic)
//! borrows the coordinator; trigger on demand from the same task instead
//! when both are needed.
//!
//! **Blocking.** Checkpoint files are written with blocking `std::fs` calls
//! on the calling task (small files; one fsync of the file and one of the
//! directory per checkpoint).
//!
//! # Using the hooks from a host engine instead
//!
//! An engine with its own checkpointing (barriers, a state backend, a
//! coordinator) calls the same [`CheckpointedOperator`] hooks and skips this
//! driver: at the barrier of checkpoint `n` call `snapshot_state(n)` and store
//! the returned bytes as the operator's state for `(uid, subtask)`; once the
//! engine has made checkpoint `n` durable everywhere call
//! `notify_checkpoint_complete(n)` (late, repeated or skipped notifications
//! are fine: a notification commits everything up to `n`); on every (re)start
//! call `initialize_state` before the first record (and again on a failover), with the
//! states of the restored checkpoint assigned to this subtask (and all of the
//! operator's states as `union`, for operators that need a global view), or
//! `None` on a fresh start. A [`TwoPhaseCommitSink`](crate::TwoPhaseCommitSink)
//! can also be driven directly with its own methods and a
//! [`StateSerializer`](crate::state::StateSerializer).
//!
//! # Example
//!
//! ```
//! use kafka_sink::checkpoint::{CheckpointCoordinator, CheckpointStorage, CheckpointedOperator,
//!     OperatorError, OperatorInfo, RestoredState};
//! use std::sync::Arc;
//! use tokio::sync::Mutex;
//!
//! /// A counter whose value survives restarts.
//! #[derive(Default)]
//! struct Counter { n: u64 }
//!
//! impl CheckpointedOperator for Counter {
//!     async fn initialize_state(&mut self, restored: Option<RestoredState>) -> Result<(), OperatorError> {
//!         if let Some(bytes) = restored.and_then(|r| r.own.into_iter().next()) {
//!             self.n = u64::from_be_bytes(bytes.as_slice().try_into()?);
//!         }
//!         Ok(())
//!     }
//!     async fn snapshot_state(&mut self, _id: u64) -> Result<Vec<u8>, OperatorError> {
//!         Ok(self.n.to_be_bytes().to_vec())
//!     }
//!     async fn notify_checkpoint_complete(&mut self, _id: u64) -> Result<(), OperatorError> { Ok(()) }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! let dir = tempfile::tempdir()?;
//! let counter = Arc::new(Mutex::new(Counter::default()));
//! let mut coordinator = CheckpointCoordinator::new(CheckpointStorage::open(dir.path(), 3)?);
//! coordinator.register(OperatorInfo::new("counter", 0, 1), counter.clone())?;
//! coordinator.restore().await?;
//! counter.lock().await.n = 41;
//! let id = coordinator.trigger_checkpoint().await?;
//!
//! // A new process restores the last complete checkpoint.
//! let restored = Arc::new(Mutex::new(Counter::default()));
//! let mut again = CheckpointCoordinator::new(CheckpointStorage::open(dir.path(), 3)?);
//! again.register(OperatorInfo::new("counter", 0, 1), restored.clone())?;
//! assert_eq!(again.restore().await?, Some(id));
//! assert_eq!(restored.lock().await.n, 41);
//! # Ok(())
//! # }
//! ```

use std::io;
use std::path::PathBuf;

mod coordinator;
mod file;
mod operator;
mod position;
mod storage;

pub use coordinator::CheckpointCoordinator;
pub use file::{Checkpoint, CheckpointFileError, OperatorSnapshot};
pub use operator::{CheckpointedOperator, OperatorError, OperatorInfo, RestoredState};
pub use position::SourcePosition;
pub use storage::{CheckpointStorage, DEFAULT_RETAINED_CHECKPOINTS};

/// An error of the checkpoint driver.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// A file-system operation failed.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// On which path.
        path: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
    /// A checkpoint file is corrupt (only from [`CheckpointStorage::read`];
    /// restore skips such files).
    #[error("corrupt checkpoint file {path}: {source}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: CheckpointFileError,
    },
    /// An operator hook failed.
    #[error(
        "{hook} of operator {uid}[{subtask_index}] failed for checkpoint {checkpoint_id:?}: {source}"
    )]
    Operator {
        /// The hook.
        hook: &'static str,
        /// The operator's id.
        uid: String,
        /// Its subtask.
        subtask_index: u32,
        /// The checkpoint involved (`None` for a fresh start).
        checkpoint_id: Option<u64>,
        /// The operator's error.
        #[source]
        source: OperatorError,
    },
    /// Notifications failed after checkpoint `checkpoint_id` was written
    /// (every operator was notified first). The checkpoint is complete;
    /// restore it to retry the commits.
    #[error("{} operator(s) failed the notification of checkpoint {checkpoint_id}: {}", .failures.len(), .failures.first().map(|f| f.to_string()).unwrap_or_default())]
    NotifyFailed {
        /// The checkpoint.
        checkpoint_id: u64,
        /// Each failure as [`CheckpointError::Operator`].
        failures: Vec<CheckpointError>,
    },
    /// The same `(uid, subtask)` registered twice.
    #[error("operator {uid}[{subtask_index}] is already registered")]
    DuplicateOperator {
        /// The operator's id.
        uid: String,
        /// Its subtask.
        subtask_index: u32,
    },
    /// Subtask index not below parallelism, or parallelism 0.
    #[error("invalid operator info {0:?}: need 0 <= subtask_index < parallelism")]
    InvalidOperatorInfo(OperatorInfo),
    /// `register` after `restore`.
    #[error("operators were already restored")]
    AlreadyRestored,
    /// A checkpoint before `restore`, or after a `restore` that failed.
    #[error("call restore() (and let it succeed) before triggering checkpoints")]
    NotRestored,
}
