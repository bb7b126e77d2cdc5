//! [`CheckpointedSink`]: a [`TwoPhaseCommitSink`] with the serializer of its
//! state, so that the [checkpoint driver](crate::CheckpointCoordinator) runs it as a
//! [`CheckpointedOperator`].

use std::fmt;

use super::{RecordContext, SinkResult, TwoPhaseCommitHandler, TwoPhaseCommitSink};
use crate::checkpoint::{CheckpointedOperator, OperatorError, RestoredState};
use crate::codec::Codec;
use crate::state::StateSerializer;

/// A [`TwoPhaseCommitSink`] with a [`StateSerializer`], usable as a
/// [`CheckpointedOperator`] of the [checkpoint driver](crate::CheckpointCoordinator).
///
/// Driven through its [`CheckpointedOperator`] hooks, as the checkpoint
/// driver does:
///
/// ```
/// use kafka_sink::{CheckpointedOperator, CheckpointedSink, RecordContext, TwoPhaseCommitSink};
/// use kafka_sink::codec::{U64Codec, UnitCodec};
/// use kafka_sink::StateSerializer;
/// use kafka_sink::InMemoryTable;
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// let mut sink = CheckpointedSink::new(
///     TwoPhaseCommitSink::new(InMemoryTable::new()),
///     StateSerializer::new(U64Codec, UnitCodec),
/// );
/// sink.initialize_state(None).await?; // a fresh start
/// sink.invoke("a", &RecordContext::default()).await?;
/// let _state: Vec<u8> = sink.snapshot_state(1).await?; // persist with checkpoint 1
/// sink.notify_checkpoint_complete(1).await?;
/// assert_eq!(sink.sink().handler().committed(), ["a"]);
/// # Ok(())
/// # }
/// ```
pub struct CheckpointedSink<H: TwoPhaseCommitHandler, TC, CC> {
    /// The sink whose hooks this operator forwards.
    sink: TwoPhaseCommitSink<H>,
    /// Encodes the sink's state at a snapshot and decodes it at a restore.
    serializer: StateSerializer<TC, CC>,
}

impl<H: TwoPhaseCommitHandler, TC, CC> fmt::Debug for CheckpointedSink<H, TC, CC> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CheckpointedSink")
            .field("sink", &self.sink)
            .finish_non_exhaustive()
    }
}

impl<H: TwoPhaseCommitHandler, TC, CC> CheckpointedSink<H, TC, CC> {
    /// Pairs a sink with the serializer of its state.
    ///
    /// ```
    /// use kafka_sink::{CheckpointedSink, TwoPhaseCommitSink};
    /// use kafka_sink::codec::{U64Codec, UnitCodec};
    /// use kafka_sink::StateSerializer;
    /// use kafka_sink::InMemoryTable;
    /// let sink = CheckpointedSink::new(
    ///     TwoPhaseCommitSink::new(InMemoryTable::<&str>::new()),
    ///     StateSerializer::new(U64Codec, UnitCodec),
    /// );
    /// assert!(!sink.sink().is_running());
    /// ```
    pub fn new(sink: TwoPhaseCommitSink<H>, serializer: StateSerializer<TC, CC>) -> Self {
        CheckpointedSink { sink, serializer }
    }

    /// The sink (for `invoke`).
    pub fn sink(&self) -> &TwoPhaseCommitSink<H> {
        &self.sink
    }

    /// The sink, mutably (for `invoke`).
    pub fn sink_mut(&mut self) -> &mut TwoPhaseCommitSink<H> {
        &mut self.sink
    }

    /// Writes one value (shorthand for `sink_mut().invoke`).
    pub async fn invoke(&mut self, value: H::Value, context: &RecordContext) -> SinkResult<(), H> {
        self.sink.invoke(value, context).await
    }
}

impl<H, TC, CC> CheckpointedOperator for CheckpointedSink<H, TC, CC>
where
    H: TwoPhaseCommitHandler,
    TC: Codec<H::Txn>,
    CC: Codec<H::Ctx>,
{
    async fn initialize_state(
        &mut self,
        restored: Option<RestoredState>,
    ) -> Result<(), OperatorError> {
        let states = match restored {
            None => None,
            Some(r) => Some(
                r.own
                    .iter()
                    .map(|b| self.serializer.decode(b))
                    .collect::<Result<Vec<_>, _>>()?,
            ),
        };
        self.sink.initialize_state(states).await?;
        Ok(())
    }

    async fn snapshot_state(&mut self, checkpoint_id: u64) -> Result<Vec<u8>, OperatorError> {
        let state = self.sink.snapshot_state(checkpoint_id).await?;
        Ok(self.serializer.encode(state))
    }

    async fn notify_checkpoint_complete(
        &mut self,
        checkpoint_id: u64,
    ) -> Result<(), OperatorError> {
        self.sink.notify_checkpoint_complete(checkpoint_id).await?;
        Ok(())
    }
}
