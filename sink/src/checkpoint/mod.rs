//! A small single-process checkpoint driver.

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
