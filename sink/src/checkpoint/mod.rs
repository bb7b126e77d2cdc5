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
//!    interval): lock every operator in registration order (the barrier),
//!    [`snapshot_state`](CheckpointedOperator::snapshot_state) each, unlock,
//!    write the checkpoint durably through [`CheckpointStorage`] (temp file,
//!    fsync, rename, fsync of the directory, keep the last N), then
//!    [`notify_checkpoint_complete`](CheckpointedOperator::notify_checkpoint_complete)
//!    every operator.
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

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::future::Future;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Mutex, OwnedMutexGuard};

use crate::clock::{Clock, SystemClock};

mod position;
use crate::codec::{DecodeError, Reader, put_bytes, put_str, put_u8, put_u32, put_u64};
pub use position::SourcePosition;

/// The error type of operator hooks.
pub type OperatorError = Box<dyn std::error::Error + Send + Sync>;

/// The default number of complete checkpoints kept on disk.
pub const DEFAULT_RETAINED_CHECKPOINTS: usize = 3;

/// An operator whose state is checkpointed: a source, a sink, anything with
/// Flink's `CheckpointedFunction` + `CheckpointListener` hooks.
///
/// Implement the methods with `async fn`.
///
/// ```
/// use kafka_sink::checkpoint::{CheckpointedOperator, OperatorError, RestoredState};
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
///
/// /// Remembers which checkpoints completed.
/// #[derive(Default)]
/// struct Completed(Vec<u64>);
///
/// impl CheckpointedOperator for Completed {
///     async fn initialize_state(&mut self, _: Option<RestoredState>) -> Result<(), OperatorError> { Ok(()) }
///     async fn snapshot_state(&mut self, _: u64) -> Result<Vec<u8>, OperatorError> { Ok(Vec::new()) }
///     async fn notify_checkpoint_complete(&mut self, id: u64) -> Result<(), OperatorError> {
///         self.0.push(id);
///         Ok(())
///     }
/// }
///
/// let mut op = Completed::default();
/// op.initialize_state(None).await?;
/// op.snapshot_state(1).await?;
/// op.notify_checkpoint_complete(1).await?;
/// assert_eq!(op.0, [1]);
/// # Ok(())
/// # }
/// ```
pub trait CheckpointedOperator: Send {
    /// Called before any record: `None` on a fresh start, otherwise the
    /// state restored for this subtask. Called again on an in-process
    /// failover ([`CheckpointCoordinator::restore`] after a failed
    /// checkpoint): the operator must then drop what it holds in memory and
    /// continue from the restored state (or from its fresh start on `None`),
    /// as a new instance would.
    ///
    /// ```
    /// # use kafka_sink::checkpoint::{CheckpointedOperator, OperatorError, RestoredState};
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
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    /// let mut counter = Counter::default();
    /// let restored = RestoredState {
    ///     checkpoint_id: 3,
    ///     own: vec![41u64.to_be_bytes().to_vec()],
    ///     union: vec![41u64.to_be_bytes().to_vec()],
    ///     previous_parallelism: Some(1),
    /// };
    /// counter.initialize_state(Some(restored)).await?;
    /// assert_eq!(counter.n, 41);
    /// # Ok(())
    /// # }
    /// ```
    fn initialize_state(
        &mut self,
        restored: Option<RestoredState>,
    ) -> impl Future<Output = Result<(), OperatorError>> + Send;

    /// Called at the barrier of checkpoint `checkpoint_id`; returns the
    /// operator's state.
    ///
    /// ```
    /// # use kafka_sink::checkpoint::{CheckpointedOperator, OperatorError, RestoredState};
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
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    /// let mut counter = Counter { n: 7 };
    /// assert_eq!(counter.snapshot_state(1).await?, 7u64.to_be_bytes());
    /// # Ok(())
    /// # }
    /// ```
    fn snapshot_state(
        &mut self,
        checkpoint_id: u64,
    ) -> impl Future<Output = Result<Vec<u8>, OperatorError>> + Send;

    /// Called when checkpoint `checkpoint_id` is durable.
    ///
    /// ```
    /// # use kafka_sink::checkpoint::{CheckpointedOperator, OperatorError, RestoredState};
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
    /// use kafka_sink::checkpoint::{CheckpointCoordinator, CheckpointStorage, OperatorInfo};
    /// use std::sync::Arc;
    /// use tokio::sync::Mutex;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    /// let dir = tempfile::tempdir()?;
    /// let mut coordinator = CheckpointCoordinator::new(CheckpointStorage::open(dir.path(), 3)?);
    /// let counter = Arc::new(Mutex::new(Counter::default()));
    /// coordinator.register(OperatorInfo::new("counter", 0, 1), counter.clone())?;
    /// coordinator.restore().await?;
    /// // Snapshots every operator, writes the file, then notifies every operator.
    /// let id = coordinator.trigger_checkpoint().await?;
    /// assert_eq!(coordinator.last_completed(), Some(id));
    /// # Ok(())
    /// # }
    /// ```
    fn notify_checkpoint_complete(
        &mut self,
        checkpoint_id: u64,
    ) -> impl Future<Output = Result<(), OperatorError>> + Send;
}

/// Identity of one operator instance: a stable unique id (the same across
/// restarts), its subtask index and the operator's parallelism.
///
/// ```
/// use kafka_sink::checkpoint::OperatorInfo;
/// // Subtask 2 of the 4 instances of the operator "orders-sink".
/// let info = OperatorInfo::new("orders-sink", 2, 4);
/// assert_eq!((info.uid.as_str(), info.subtask_index, info.parallelism), ("orders-sink", 2, 4));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OperatorInfo {
    /// Stable id of the operator (all subtasks share it).
    pub uid: String,
    /// This instance's index in `0..parallelism`.
    pub subtask_index: u32,
    /// Number of instances of the operator.
    pub parallelism: u32,
}

impl OperatorInfo {
    /// Builds an info.
    ///
    /// ```
    /// use kafka_sink::checkpoint::OperatorInfo;
    /// assert_eq!(OperatorInfo::new("orders-sink", 0, 1).uid, "orders-sink");
    /// ```
    pub fn new(uid: impl Into<String>, subtask_index: u32, parallelism: u32) -> Self {
        OperatorInfo {
            uid: uid.into(),
            subtask_index,
            parallelism,
        }
    }
}

/// The state handed to [`CheckpointedOperator::initialize_state`] on a
/// restore.
///
/// With unchanged parallelism `own` holds exactly the state this subtask
/// wrote. After a rescale, the state written by old subtask `j` goes to new
/// subtask `j % parallelism` (so after scaling down one subtask can get
/// several states, and after scaling up some get none).
///
/// ```
/// use kafka_sink::checkpoint::{Checkpoint, OperatorInfo, OperatorSnapshot};
/// let checkpoint = Checkpoint {
///     id: 9,
///     timestamp_ms: 0,
///     operators: (0..3)
///         .map(|i| OperatorSnapshot { uid: "sink".into(), subtask_index: i, parallelism: 3, state: vec![i as u8] })
///         .collect(),
/// };
/// // Scaled down from 3 to 2 subtasks: new subtask 0 gets old subtasks 0 and 2.
/// let r = checkpoint.restored_state_for(&OperatorInfo::new("sink", 0, 2));
/// assert_eq!(r.own, [vec![0], vec![2]]);
/// assert_eq!((r.union.len(), r.previous_parallelism), (3, Some(3)));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestoredState {
    /// The restored checkpoint's id.
    pub checkpoint_id: u64,
    /// The states assigned to this subtask, by old subtask index.
    pub own: Vec<Vec<u8>>,
    /// The states of every subtask of this operator, by old subtask index
    /// (Flink's union list state).
    pub union: Vec<Vec<u8>>,
    /// The operator's parallelism when the checkpoint was taken (`None` if
    /// the checkpoint has no state of this operator).
    pub previous_parallelism: Option<u32>,
}

/// One operator's state in a [`Checkpoint`].
///
/// ```
/// use kafka_sink::checkpoint::{Checkpoint, OperatorSnapshot};
/// let checkpoint = Checkpoint {
///     id: 7,
///     timestamp_ms: 1_700_000_000_000,
///     operators: vec![OperatorSnapshot { uid: "kafka-sink".into(), subtask_index: 0, parallelism: 1, state: vec![1, 2] }],
/// };
/// let decoded = Checkpoint::decode(&checkpoint.encode()).unwrap();
/// assert_eq!(decoded.operators[0].state, [1, 2]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperatorSnapshot {
    /// The operator's id.
    pub uid: String,
    /// The subtask that wrote the state.
    pub subtask_index: u32,
    /// The operator's parallelism at the time.
    pub parallelism: u32,
    /// The state bytes.
    pub state: Vec<u8>,
}

/// A complete checkpoint: id, time and the state of every operator.
///
/// # File format, version 1 (big-endian)
///
/// ```text
/// magic        8 bytes "KEOSCKPT"
/// version      u8      1
/// checkpoint   u64
/// body_len     u64
/// crc32c       u32     CRC-32C of version, checkpoint, body_len and body
/// body         timestamp_ms u64, n u32,
///              n x (uid: u32 len + UTF-8, subtask u32, parallelism u32,
///                   state: u32 len + bytes)
/// ```
///
/// ```
/// use kafka_sink::checkpoint::{Checkpoint, OperatorSnapshot};
/// let checkpoint = Checkpoint {
///     id: 7,
///     timestamp_ms: 1_700_000_000_000,
///     operators: vec![OperatorSnapshot { uid: "kafka-sink".into(), subtask_index: 0, parallelism: 1, state: vec![1, 2] }],
/// };
/// let bytes = checkpoint.encode();
/// assert!(bytes.starts_with(&Checkpoint::MAGIC));
/// assert_eq!(Checkpoint::decode(&bytes), Ok(checkpoint));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    /// The checkpoint id.
    pub id: u64,
    /// Wall-clock time of the checkpoint (ms since the Unix epoch).
    pub timestamp_ms: u64,
    /// Every operator's state.
    pub operators: Vec<OperatorSnapshot>,
}

/// Why a checkpoint file was rejected.
///
/// ```
/// use kafka_sink::checkpoint::{Checkpoint, OperatorSnapshot};
/// let checkpoint = Checkpoint {
///     id: 7,
///     timestamp_ms: 1_700_000_000_000,
///     operators: vec![OperatorSnapshot { uid: "kafka-sink".into(), subtask_index: 0, parallelism: 1, state: vec![1, 2] }],
/// };
/// use kafka_sink::checkpoint::CheckpointFileError;
/// let mut bytes = checkpoint.encode();
/// *bytes.last_mut().unwrap() ^= 0xFF; // a flipped bit in the state
/// assert!(matches!(Checkpoint::decode(&bytes), Err(CheckpointFileError::ChecksumMismatch { .. })));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckpointFileError {
    /// Malformed bytes (magic, version, truncation, trailing bytes...).
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// The checksum does not match the contents (torn or corrupt file).
    #[error("checksum mismatch: stored {stored:#010x}, computed {computed:#010x}")]
    ChecksumMismatch {
        /// The CRC-32C in the file.
        stored: u32,
        /// The CRC-32C of the contents.
        computed: u32,
    },
}

impl Checkpoint {
    /// The first bytes of a checkpoint file.
    pub const MAGIC: [u8; 8] = *b"KEOSCKPT";
    /// The file format version written.
    pub const VERSION: u8 = 1;
    const HEADER_LEN: usize = 8 + 1 + 8 + 8 + 4;

    /// Encodes the checkpoint as a file.
    ///
    /// ```
    /// use kafka_sink::checkpoint::{Checkpoint, OperatorSnapshot};
    /// let checkpoint = Checkpoint {
    ///     id: 7,
    ///     timestamp_ms: 1_700_000_000_000,
    ///     operators: vec![OperatorSnapshot { uid: "kafka-sink".into(), subtask_index: 0, parallelism: 1, state: vec![1, 2] }],
    /// };
    /// let bytes = checkpoint.encode();
    /// assert_eq!(&bytes[..9], b"KEOSCKPT\x01"); // magic and version
    /// ```
    pub fn encode(&self) -> Vec<u8> {
        let mut body = Vec::new();
        put_u64(&mut body, self.timestamp_ms);
        put_u32(
            &mut body,
            u32::try_from(self.operators.len()).expect("too many operators"),
        );
        for op in &self.operators {
            put_str(&mut body, &op.uid);
            put_u32(&mut body, op.subtask_index);
            put_u32(&mut body, op.parallelism);
            put_bytes(&mut body, &op.state);
        }
        let mut covered = Vec::with_capacity(17);
        put_u8(&mut covered, Self::VERSION);
        put_u64(&mut covered, self.id);
        put_u64(&mut covered, body.len() as u64);
        let crc = crc32c::crc32c_append(crc32c::crc32c(&covered), &body);

        let mut out = Vec::with_capacity(Self::HEADER_LEN + body.len());
        out.extend_from_slice(&Self::MAGIC);
        out.extend_from_slice(&covered);
        put_u32(&mut out, crc);
        out.extend_from_slice(&body);
        out
    }

    /// Decodes and verifies a checkpoint file.
    ///
    /// ```
    /// use kafka_sink::checkpoint::{Checkpoint, OperatorSnapshot};
    /// let checkpoint = Checkpoint {
    ///     id: 7,
    ///     timestamp_ms: 1_700_000_000_000,
    ///     operators: vec![OperatorSnapshot { uid: "kafka-sink".into(), subtask_index: 0, parallelism: 1, state: vec![1, 2] }],
    /// };
    /// use kafka_sink::checkpoint::CheckpointFileError;
    /// let bytes = checkpoint.encode();
    /// assert_eq!(Checkpoint::decode(&bytes).unwrap().id, 7);
    /// // A torn write (truncated file) is rejected.
    /// assert!(matches!(Checkpoint::decode(&bytes[..bytes.len() - 1]), Err(CheckpointFileError::Decode(_))));
    /// ```
    pub fn decode(bytes: &[u8]) -> Result<Self, CheckpointFileError> {
        let mut r = Reader::new(bytes);
        let magic = r.take(8).map_err(|_| DecodeError::BadMagic {
            expected: Self::MAGIC.to_vec(),
            found: bytes.to_vec(),
        })?;
        if magic != Self::MAGIC {
            return Err(DecodeError::BadMagic {
                expected: Self::MAGIC.to_vec(),
                found: magic.to_vec(),
            }
            .into());
        }
        let version = r.u8()?;
        if version != Self::VERSION {
            return Err(DecodeError::UnsupportedVersion {
                version,
                supported: Self::VERSION,
            }
            .into());
        }
        let id = r.u64()?;
        let body_len = r.u64()?;
        let stored = r.u32()?;
        let body_len = usize::try_from(body_len).map_err(|_| DecodeError::Truncated {
            needed: usize::MAX,
            remaining: r.remaining(),
        })?;
        let body = r.take(body_len)?;
        r.finish()?;
        let computed = crc32c::crc32c_append(crc32c::crc32c(&bytes[8..8 + 17]), body);
        if stored != computed {
            return Err(CheckpointFileError::ChecksumMismatch { stored, computed });
        }
        let mut b = Reader::new(body);
        let timestamp_ms = b.u64()?;
        let n = b.u32()?;
        let mut operators = Vec::new();
        for _ in 0..n {
            operators.push(OperatorSnapshot {
                uid: b.str()?.to_owned(),
                subtask_index: b.u32()?,
                parallelism: b.u32()?,
                state: b.bytes()?.to_vec(),
            });
        }
        b.finish()?;
        Ok(Checkpoint {
            id,
            timestamp_ms,
            operators,
        })
    }

    /// The state to restore for `info` (see [`RestoredState`] for the
    /// assignment after a rescale).
    ///
    /// ```
    /// use kafka_sink::checkpoint::{Checkpoint, OperatorSnapshot};
    /// let checkpoint = Checkpoint {
    ///     id: 7,
    ///     timestamp_ms: 1_700_000_000_000,
    ///     operators: vec![OperatorSnapshot { uid: "kafka-sink".into(), subtask_index: 0, parallelism: 1, state: vec![1, 2] }],
    /// };
    /// use kafka_sink::checkpoint::OperatorInfo;
    /// let r = checkpoint.restored_state_for(&OperatorInfo::new("kafka-sink", 0, 1));
    /// assert_eq!((r.checkpoint_id, r.own), (7, vec![vec![1, 2]]));
    /// // An operator new in this job gets no state.
    /// assert!(checkpoint.restored_state_for(&OperatorInfo::new("new-op", 0, 1)).own.is_empty());
    /// ```
    pub fn restored_state_for(&self, info: &OperatorInfo) -> RestoredState {
        let mut mine: Vec<&OperatorSnapshot> = self
            .operators
            .iter()
            .filter(|o| o.uid == info.uid)
            .collect();
        mine.sort_by_key(|o| o.subtask_index);
        let parallelism = info.parallelism.max(1);
        RestoredState {
            checkpoint_id: self.id,
            own: mine
                .iter()
                .filter(|o| o.subtask_index % parallelism == info.subtask_index)
                .map(|o| o.state.clone())
                .collect(),
            union: mine.iter().map(|o| o.state.clone()).collect(),
            previous_parallelism: mine.first().map(|o| o.parallelism),
        }
    }
}

/// An error of the checkpoint driver.
///
/// ```
/// use kafka_sink::checkpoint::{CheckpointError, CheckpointStorage};
/// let dir = tempfile::tempdir().unwrap();
/// let file = dir.path().join("not-a-directory");
/// std::fs::write(&file, b"x").unwrap();
/// let err = CheckpointStorage::open(&file, 3).unwrap_err();
/// assert!(matches!(err, CheckpointError::Io { action: "create directory", .. }));
/// ```
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

fn io_err<'a>(
    action: &'static str,
    path: &'a Path,
) -> impl FnOnce(io::Error) -> CheckpointError + 'a {
    move |source| CheckpointError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// Durable checkpoint files in one directory: `chk-<id>.ckpt`, written
/// atomically, the last `retain` kept.
///
/// ```
/// use kafka_sink::checkpoint::{Checkpoint, CheckpointStorage};
/// let dir = tempfile::tempdir()?;
/// let storage = CheckpointStorage::open(dir.path(), 2)?;
/// for id in 1..=3 {
///     storage.write(&Checkpoint { id, timestamp_ms: 0, operators: vec![] })?;
/// }
/// // Only the newest two are kept.
/// let ids: Vec<u64> = storage.list()?.into_iter().map(|(id, _)| id).collect();
/// assert_eq!(ids, [2, 3]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct CheckpointStorage {
    dir: PathBuf,
    retain: usize,
}

impl CheckpointStorage {
    /// Opens (creating) `dir`, keeping the last `retain` checkpoints (at
    /// least 1). Leftover temporary files of interrupted writes are removed.
    ///
    /// ```
    /// use kafka_sink::checkpoint::CheckpointStorage;
    /// let dir = tempfile::tempdir()?;
    /// let storage = CheckpointStorage::open(dir.path().join("checkpoints"), 0)?; // created
    /// assert_eq!(storage.retained(), 1); // at least one is kept
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open(dir: impl AsRef<Path>, retain: usize) -> Result<Self, CheckpointError> {
        let dir = dir.as_ref().to_path_buf();
        fs::create_dir_all(&dir).map_err(io_err("create directory", &dir))?;
        let storage = CheckpointStorage {
            dir,
            retain: retain.max(1),
        };
        for entry in fs::read_dir(&storage.dir).map_err(io_err("list", &storage.dir))? {
            let entry = entry.map_err(io_err("list", &storage.dir))?;
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with(".chk-") && name.ends_with(".tmp") {
                let path = entry.path();
                tracing::info!(path = %path.display(), "removing an interrupted checkpoint write");
                fs::remove_file(&path).map_err(io_err("remove", &path))?;
            }
        }
        Ok(storage)
    }

    /// The directory.
    ///
    /// ```
    /// use kafka_sink::checkpoint::CheckpointStorage;
    /// let dir = tempfile::tempdir()?;
    /// let storage = CheckpointStorage::open(dir.path(), 3)?;
    /// assert_eq!(storage.dir(), dir.path());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// How many complete checkpoints are kept.
    ///
    /// ```
    /// use kafka_sink::checkpoint::{CheckpointStorage, DEFAULT_RETAINED_CHECKPOINTS};
    /// let dir = tempfile::tempdir()?;
    /// let storage = CheckpointStorage::open(dir.path(), DEFAULT_RETAINED_CHECKPOINTS)?;
    /// assert_eq!(storage.retained(), 3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn retained(&self) -> usize {
        self.retain
    }

    /// The file of checkpoint `id`.
    ///
    /// ```
    /// use kafka_sink::checkpoint::CheckpointStorage;
    /// let dir = tempfile::tempdir()?;
    /// let storage = CheckpointStorage::open(dir.path(), 3)?;
    /// assert_eq!(storage.path_for(42), dir.path().join("chk-00000000000000000042.ckpt"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn path_for(&self, id: u64) -> PathBuf {
        self.dir.join(format!("chk-{id:020}.ckpt"))
    }

    /// Checkpoint files present, ascending by id (valid or not).
    ///
    /// ```
    /// use kafka_sink::checkpoint::{Checkpoint, CheckpointStorage};
    /// let dir = tempfile::tempdir()?;
    /// let storage = CheckpointStorage::open(dir.path(), 3)?;
    /// let path = storage.write(&Checkpoint { id: 5, timestamp_ms: 0, operators: vec![] })?;
    /// std::fs::write(dir.path().join("notes.txt"), "ignored")?;
    /// assert_eq!(storage.list()?, [(5, path)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn list(&self) -> Result<Vec<(u64, PathBuf)>, CheckpointError> {
        let mut out = Vec::new();
        for entry in fs::read_dir(&self.dir).map_err(io_err("list", &self.dir))? {
            let entry = entry.map_err(io_err("list", &self.dir))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let Some(id) = name
                .strip_prefix("chk-")
                .and_then(|s| s.strip_suffix(".ckpt"))
                .and_then(|s| s.parse::<u64>().ok())
            else {
                continue;
            };
            out.push((id, entry.path()));
        }
        out.sort();
        Ok(out)
    }

    /// Writes `checkpoint` durably (temp file, fsync, rename, fsync of the
    /// directory), then deletes all but the newest `retain` checkpoints.
    ///
    /// ```
    /// use kafka_sink::checkpoint::{Checkpoint, CheckpointStorage};
    /// let dir = tempfile::tempdir()?;
    /// let storage = CheckpointStorage::open(dir.path(), 3)?;
    /// let checkpoint = Checkpoint { id: 1, timestamp_ms: 1_700_000_000_000, operators: vec![] };
    /// let path = storage.write(&checkpoint)?;
    /// assert_eq!(path, storage.path_for(1));
    /// assert_eq!(std::fs::read(&path)?, checkpoint.encode());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write(&self, checkpoint: &Checkpoint) -> Result<PathBuf, CheckpointError> {
        let bytes = checkpoint.encode();
        let tmp = self.dir.join(format!(".chk-{:020}.tmp", checkpoint.id));
        let path = self.path_for(checkpoint.id);
        {
            let mut f = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .open(&tmp)
                .map_err(io_err("create", &tmp))?;
            f.write_all(&bytes).map_err(io_err("write", &tmp))?;
            f.sync_all().map_err(io_err("fsync", &tmp))?;
        }
        fs::rename(&tmp, &path).map_err(io_err("rename into", &path))?;
        self.sync_dir()?;
        let files = self.list()?;
        if files.len() > self.retain {
            for (id, old) in &files[..files.len() - self.retain] {
                if *id < checkpoint.id {
                    fs::remove_file(old).map_err(io_err("remove", old))?;
                }
            }
            self.sync_dir()?;
        }
        Ok(path)
    }

    fn sync_dir(&self) -> Result<(), CheckpointError> {
        File::open(&self.dir)
            .and_then(|d| d.sync_all())
            .map_err(io_err("fsync directory", &self.dir))
    }

    /// Reads and verifies one checkpoint file.
    ///
    /// ```
    /// use kafka_sink::checkpoint::{Checkpoint, CheckpointError, CheckpointStorage};
    /// let dir = tempfile::tempdir()?;
    /// let storage = CheckpointStorage::open(dir.path(), 3)?;
    /// let path = storage.write(&Checkpoint { id: 1, timestamp_ms: 0, operators: vec![] })?;
    /// assert_eq!(storage.read(&path)?.id, 1);
    /// std::fs::write(&path, b"KEOSCKPT")?; // torn
    /// assert!(matches!(storage.read(&path), Err(CheckpointError::Corrupt { .. })));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read(&self, path: &Path) -> Result<Checkpoint, CheckpointError> {
        let bytes = fs::read(path).map_err(io_err("read", path))?;
        Checkpoint::decode(&bytes).map_err(|source| CheckpointError::Corrupt {
            path: path.to_path_buf(),
            source,
        })
    }

    /// The newest checkpoint that reads and verifies; corrupt or torn files
    /// (and files whose name and contents disagree on the id) are skipped
    /// with a warning.
    ///
    /// ```
    /// use kafka_sink::checkpoint::{Checkpoint, CheckpointStorage};
    /// let dir = tempfile::tempdir()?;
    /// let storage = CheckpointStorage::open(dir.path(), 3)?;
    /// assert!(storage.latest_valid()?.is_none());
    /// storage.write(&Checkpoint { id: 1, timestamp_ms: 0, operators: vec![] })?;
    /// let newest = storage.write(&Checkpoint { id: 2, timestamp_ms: 0, operators: vec![] })?;
    /// std::fs::write(&newest, b"garbage")?; // damaged after the write
    /// assert_eq!(storage.latest_valid()?.map(|c| c.id), Some(1));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn latest_valid(&self) -> Result<Option<Checkpoint>, CheckpointError> {
        for (id, path) in self.list()?.into_iter().rev() {
            match self.read(&path) {
                Ok(cp) if cp.id == id => return Ok(Some(cp)),
                Ok(cp) => tracing::warn!(
                    path = %path.display(),
                    found = cp.id,
                    "skipping a checkpoint file whose name and contents disagree"
                ),
                Err(CheckpointError::Corrupt { path, source }) => tracing::warn!(
                    path = %path.display(),
                    error = %source,
                    "skipping a corrupt checkpoint file"
                ),
                Err(e) => return Err(e),
            }
        }
        Ok(None)
    }
}

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

/// Registers operators, restores them, triggers checkpoints and notifies
/// completion. See the [module docs](self).
///
/// ```
/// # use kafka_sink::checkpoint::{CheckpointedOperator, OperatorError, RestoredState};
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
/// use kafka_sink::checkpoint::{CheckpointCoordinator, CheckpointStorage, OperatorInfo};
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
pub struct CheckpointCoordinator {
    storage: CheckpointStorage,
    clock: Arc<dyn Clock>,
    operators: Vec<Registered>,
    next_id: u64,
    last_completed: Option<u64>,
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
    /// use kafka_sink::checkpoint::{CheckpointCoordinator, CheckpointStorage};
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
    ///
    /// ```
    /// use kafka_sink::checkpoint::{CheckpointCoordinator, CheckpointStorage};
    /// use kafka_sink::clock::ManualClock;
    /// use std::sync::Arc;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    /// let dir = tempfile::tempdir()?;
    /// let mut coordinator = CheckpointCoordinator::new(CheckpointStorage::open(dir.path(), 3)?)
    ///     .with_clock(Arc::new(ManualClock::new(1_700_000_000_000)));
    /// coordinator.restore().await?;
    /// coordinator.trigger_checkpoint().await?;
    /// let written = coordinator.storage().latest_valid()?.unwrap();
    /// assert_eq!(written.timestamp_ms, 1_700_000_000_000);
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The storage.
    ///
    /// ```
    /// use kafka_sink::checkpoint::{CheckpointCoordinator, CheckpointStorage};
    /// let dir = tempfile::tempdir()?;
    /// let coordinator = CheckpointCoordinator::new(CheckpointStorage::open(dir.path(), 3)?);
    /// assert_eq!(coordinator.storage().dir(), dir.path());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn storage(&self) -> &CheckpointStorage {
        &self.storage
    }

    /// Registers an operator instance; all registrations come before
    /// [`restore`](Self::restore). Checkpoints lock operators in
    /// registration order.
    ///
    /// ```
    /// # use kafka_sink::checkpoint::{CheckpointedOperator, OperatorError, RestoredState};
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
    /// use kafka_sink::checkpoint::{CheckpointCoordinator, CheckpointError, CheckpointStorage, OperatorInfo};
    /// use std::sync::Arc;
    /// use tokio::sync::Mutex;
    /// let dir = tempfile::tempdir()?;
    /// let mut coordinator = CheckpointCoordinator::new(CheckpointStorage::open(dir.path(), 3)?);
    /// let counter = Arc::new(Mutex::new(Counter::default()));
    /// coordinator.register(OperatorInfo::new("counter", 0, 1), counter.clone())?;
    /// let again = coordinator.register(OperatorInfo::new("counter", 0, 1), counter);
    /// assert!(matches!(again, Err(CheckpointError::DuplicateOperator { .. })));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
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
    /// # use kafka_sink::checkpoint::{CheckpointedOperator, OperatorError, RestoredState};
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
    /// use kafka_sink::checkpoint::{CheckpointCoordinator, CheckpointStorage, OperatorInfo};
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
                .map_err(|source| CheckpointError::Operator {
                    hook: "initialize_state",
                    uid: reg.info.uid.clone(),
                    subtask_index: reg.info.subtask_index,
                    checkpoint_id,
                    source,
                })?;
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
    ///
    /// ```
    /// use kafka_sink::checkpoint::{CheckpointCoordinator, CheckpointStorage};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    /// let dir = tempfile::tempdir()?;
    /// let mut coordinator = CheckpointCoordinator::new(CheckpointStorage::open(dir.path(), 3)?);
    /// coordinator.restore().await?;
    /// assert_eq!(coordinator.next_checkpoint_id(), 1);
    /// coordinator.trigger_checkpoint().await?;
    /// assert_eq!(coordinator.next_checkpoint_id(), 2);
    /// # Ok(())
    /// # }
    /// ```
    pub fn next_checkpoint_id(&self) -> u64 {
        self.next_id
    }

    /// The last checkpoint written (or restored) by this coordinator.
    ///
    /// ```
    /// use kafka_sink::checkpoint::{CheckpointCoordinator, CheckpointStorage};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    /// let dir = tempfile::tempdir()?;
    /// let mut coordinator = CheckpointCoordinator::new(CheckpointStorage::open(dir.path(), 3)?);
    /// coordinator.restore().await?;
    /// assert_eq!(coordinator.last_completed(), None);
    /// let id = coordinator.trigger_checkpoint().await?;
    /// assert_eq!(coordinator.last_completed(), Some(id));
    /// # Ok(())
    /// # }
    /// ```
    pub fn last_completed(&self) -> Option<u64> {
        self.last_completed
    }

    /// Takes one checkpoint now: barrier (lock all operators), snapshot each,
    /// write durably, then notify each. Returns its id.
    ///
    /// A snapshot failure declines the checkpoint (nothing written, nothing
    /// notified; the id is not reused). Notification failures are reported
    /// after every operator was notified, as
    /// [`CheckpointError::NotifyFailed`]; the checkpoint stays complete.
    ///
    /// ```
    /// # use kafka_sink::checkpoint::{CheckpointedOperator, OperatorError, RestoredState};
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
    /// use kafka_sink::checkpoint::{CheckpointCoordinator, CheckpointError, CheckpointStorage, OperatorInfo};
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
                .map_err(|source| CheckpointError::Operator {
                    hook: "snapshot_state",
                    uid: reg.info.uid.clone(),
                    subtask_index: reg.info.subtask_index,
                    checkpoint_id: Some(id),
                    source,
                })?;
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
                failures.push(CheckpointError::Operator {
                    hook: "notify_checkpoint_complete",
                    uid: reg.info.uid.clone(),
                    subtask_index: reg.info.subtask_index,
                    checkpoint_id: Some(id),
                    source,
                });
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
    /// use kafka_sink::checkpoint::{CheckpointCoordinator, CheckpointStorage};
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

    fn sample() -> Checkpoint {
        Checkpoint {
            id: 7,
            timestamp_ms: 1234,
            operators: vec![
                OperatorSnapshot {
                    uid: "src".into(),
                    subtask_index: 0,
                    parallelism: 1,
                    state: vec![1, 2, 3],
                },
                OperatorSnapshot {
                    uid: "sink".into(),
                    subtask_index: 0,
                    parallelism: 1,
                    state: vec![],
                },
            ],
        }
    }

    #[test]
    fn round_trip() {
        let bytes = sample().encode();
        assert_eq!(Checkpoint::decode(&bytes).unwrap(), sample());
    }

    #[test]
    fn every_single_byte_flip_and_truncation_is_detected() {
        let bytes = sample().encode();
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x01;
            assert!(Checkpoint::decode(&b).is_err(), "flip at {i} undetected");
        }
        for cut in 0..bytes.len() {
            assert!(Checkpoint::decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(matches!(
            Checkpoint::decode(&longer),
            Err(CheckpointFileError::Decode(DecodeError::TrailingBytes {
                count: 1
            }))
        ));
    }

    #[test]
    fn checksum_mismatch_is_typed() {
        let mut bytes = sample().encode();
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
        assert!(matches!(
            Checkpoint::decode(&bytes),
            Err(CheckpointFileError::ChecksumMismatch { .. })
        ));
    }

    #[test]
    fn rescale_assignment() {
        let cp = Checkpoint {
            id: 1,
            timestamp_ms: 0,
            operators: (0..5)
                .map(|i| OperatorSnapshot {
                    uid: "sink".into(),
                    subtask_index: i,
                    parallelism: 5,
                    state: vec![i as u8],
                })
                .collect(),
        };
        let down = cp.restored_state_for(&OperatorInfo::new("sink", 0, 1));
        assert_eq!(down.own.len(), 5);
        assert_eq!(down.previous_parallelism, Some(5));
        let s1of2 = cp.restored_state_for(&OperatorInfo::new("sink", 1, 2));
        assert_eq!(s1of2.own, vec![vec![1], vec![3]]);
        assert_eq!(s1of2.union.len(), 5);
        let up = cp.restored_state_for(&OperatorInfo::new("sink", 6, 8));
        assert!(up.own.is_empty());
        let other = cp.restored_state_for(&OperatorInfo::new("src", 0, 1));
        assert!(other.own.is_empty() && other.previous_parallelism.is_none());
    }
}
