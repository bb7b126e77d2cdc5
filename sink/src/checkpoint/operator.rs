//! The hooks of a checkpointed operator: [`CheckpointedOperator`], the
//! [`OperatorInfo`] it is registered with and the [`RestoredState`] it is
//! restored from.

use std::future::Future;

#[cfg(doc)]
use super::{Checkpoint, CheckpointCoordinator};

/// The error type of operator hooks.
pub type OperatorError = Box<dyn std::error::Error + Send + Sync>;

/// An operator whose state is checkpointed: a source, a sink, anything with
/// Flink's `CheckpointedFunction` + `CheckpointListener` hooks.
///
/// Implement the methods with `async fn`.
///
/// ```
/// use kafka_sink::{CheckpointedOperator, OperatorError, RestoredState};
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
    fn initialize_state(
        &mut self,
        restored: Option<RestoredState>,
    ) -> impl Future<Output = Result<(), OperatorError>> + Send;

    /// Called at the barrier of checkpoint `checkpoint_id`; returns the
    /// operator's state.
    fn snapshot_state(
        &mut self,
        checkpoint_id: u64,
    ) -> impl Future<Output = Result<Vec<u8>, OperatorError>> + Send;

    /// Called when checkpoint `checkpoint_id` is durable.
    fn notify_checkpoint_complete(
        &mut self,
        checkpoint_id: u64,
    ) -> impl Future<Output = Result<(), OperatorError>> + Send;
}

/// Identity of one operator instance: a stable unique id (the same across
/// restarts), its subtask index and the operator's parallelism.
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
    /// use kafka_sink::OperatorInfo;
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
/// use kafka_sink::{Checkpoint, OperatorInfo, OperatorSnapshot};
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
