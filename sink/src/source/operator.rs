//! [`CheckpointedOperator`] implementations, so the sources run under the
//! crate's [`CheckpointCoordinator`](crate::checkpoint::CheckpointCoordinator).
//!
//! These sources are not parallel (as in Flink): a restored checkpoint must
//! hold at most one state for the operator.

use super::base::{AcknowledgeIds, MessageAcknowledgingSource};
#[cfg(feature = "rabbitmq")]
use super::rabbitmq::RabbitMqSource;
use super::state::UniqueId;
use crate::checkpoint::{CheckpointedOperator, OperatorError, RestoredState};

/// The single state of a non-parallel source, if any.
fn single_state(restored: Option<RestoredState>) -> Result<Option<Vec<u8>>, OperatorError> {
    let Some(restored) = restored else {
        return Ok(None);
    };
    match restored.own.len() {
        0 | 1 => Ok(restored.own.into_iter().next()),
        n => Err(format!(
            "a message-acknowledging source is not parallel, but checkpoint {} restores {n} states to it",
            restored.checkpoint_id
        )
        .into()),
    }
}

/// A [`MessageAcknowledgingSource`] with its acknowledger, as a
/// [`CheckpointedOperator`].
///
/// ```
/// use kafka_sink::source::{AcknowledgingOperator, MessageAcknowledgingSource};
/// use kafka_sink::CheckpointedOperator;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let mut acked = Vec::new();
/// let mut op = AcknowledgingOperator {
///     source: MessageAcknowledgingSource::<u64>::new(),
///     acker: |_cp: u64, ids: &[u64]| {
///         acked.extend_from_slice(ids);
///         Ok::<(), std::io::Error>(())
///     },
/// };
/// op.initialize_state(None).await.unwrap();
/// assert!(op.source.add_id(7));
/// let _state = op.snapshot_state(1).await.unwrap();
/// op.notify_checkpoint_complete(1).await.unwrap();
/// drop(op);
/// assert_eq!(acked, [7]);
/// # });
/// ```
#[derive(Debug)]
pub struct AcknowledgingOperator<Id, A> {
    /// The source state.
    pub source: MessageAcknowledgingSource<Id>,
    /// Called for every completed pending checkpoint.
    pub acker: A,
}

impl<Id, A> CheckpointedOperator for AcknowledgingOperator<Id, A>
where
    Id: UniqueId + Send + Sync,
    A: AcknowledgeIds<Id> + Send,
    A::Error: Into<OperatorError>,
{
    async fn initialize_state(
        &mut self,
        restored: Option<RestoredState>,
    ) -> Result<(), OperatorError> {
        let state = single_state(restored)?;
        self.source.initialize_state(state.as_deref())?;
        Ok(())
    }

    async fn snapshot_state(&mut self, checkpoint_id: u64) -> Result<Vec<u8>, OperatorError> {
        Ok(self.source.snapshot_state(checkpoint_id)?.to_vec())
    }

    async fn notify_checkpoint_complete(
        &mut self,
        checkpoint_id: u64,
    ) -> Result<(), OperatorError> {
        while let Some(cp) = self.source.next_completed(checkpoint_id) {
            self.acker
                .acknowledge_ids(checkpoint_id, &cp.ids)
                .map_err(Into::into)?;
            self.source.pop_acknowledged();
        }
        Ok(())
    }
}

#[cfg(feature = "rabbitmq")]
/// Register the source (behind an `Arc<tokio::sync::Mutex<_>>`) with the
/// coordinator; `initialize_state` must run before the first message.
impl CheckpointedOperator for RabbitMqSource {
    async fn initialize_state(
        &mut self,
        restored: Option<RestoredState>,
    ) -> Result<(), OperatorError> {
        let state = single_state(restored)?;
        RabbitMqSource::initialize_state(self, state.as_deref())?;
        Ok(())
    }

    async fn snapshot_state(&mut self, checkpoint_id: u64) -> Result<Vec<u8>, OperatorError> {
        Ok(RabbitMqSource::snapshot_state(self, checkpoint_id)?.to_vec())
    }

    async fn notify_checkpoint_complete(
        &mut self,
        checkpoint_id: u64,
    ) -> Result<(), OperatorError> {
        RabbitMqSource::notify_checkpoint_complete(self, checkpoint_id).await?;
        Ok(())
    }
}
