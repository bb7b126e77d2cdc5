//! [`SourcePosition`]: the checkpointed state of a replayable source.

use super::{CheckpointedOperator, OperatorError, RestoredState};

/// The position of a replayable source (a file offset, a sequence number, the
/// next record of a generator) as a checkpointed operator: its state is the
/// position, 8 bytes big-endian.
///
/// Register it with the [`CheckpointCoordinator`](super::CheckpointCoordinator)
/// *before* the sink it feeds, and advance it only while holding both locks,
/// so that every checkpoint pairs the position with exactly the records the
/// sink has seen. After a restore, replay from [`SourcePosition::next`].
///
/// ```
/// use kafka_sink::{CheckpointedOperator, RestoredState, SourcePosition};
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// let mut source = SourcePosition::default();
/// source.next += 250; // 250 records handed to the sink
/// let state = source.snapshot_state(1).await?;
///
/// let mut restarted = SourcePosition::default();
/// let restored = RestoredState {
///     checkpoint_id: 1,
///     own: vec![state.clone()],
///     union: vec![state],
///     previous_parallelism: Some(1),
/// };
/// restarted.initialize_state(Some(restored)).await?;
/// assert_eq!(restarted.next, 250); // replay from record 250
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SourcePosition {
    /// The next record to emit: everything before it was handed downstream.
    pub next: u64,
    /// The position at the first `initialize_state`: where a failover with
    /// nothing to restore rewinds to.
    fresh_start: Option<u64>,
}

impl SourcePosition {
    /// A position starting at `next` (used when there is nothing to restore).
    ///
    /// ```
    /// use kafka_sink::SourcePosition;
    /// assert_eq!(SourcePosition::new(7).next, 7);
    /// ```
    pub fn new(next: u64) -> SourcePosition {
        SourcePosition {
            next,
            fresh_start: None,
        }
    }
}

impl CheckpointedOperator for SourcePosition {
    /// Restores the position. A fresh start keeps the position the source
    /// had at its first initialization, also on a later in-process failover
    /// with nothing to restore (the source rewinds to it). Several
    /// restored states (a rescale that merged subtasks) are refused: one
    /// position cannot stand for several.
    async fn initialize_state(
        &mut self,
        restored: Option<RestoredState>,
    ) -> Result<(), OperatorError> {
        let fresh_start = *self.fresh_start.get_or_insert(self.next);
        let Some(restored) = restored else {
            self.next = fresh_start;
            return Ok(());
        };
        match restored.own.as_slice() {
            [] => {
                self.next = fresh_start;
                Ok(())
            }
            [state] => {
                let bytes: [u8; 8] = state.as_slice().try_into().map_err(|_| {
                    format!(
                        "source position state of checkpoint {}: expected 8 bytes, found {}",
                        restored.checkpoint_id,
                        state.len()
                    )
                })?;
                self.next = u64::from_be_bytes(bytes);
                Ok(())
            }
            several => Err(format!(
                "checkpoint {} assigns {} source positions to this subtask; a position \
                 cannot be merged: restore with the parallelism it was taken with",
                restored.checkpoint_id,
                several.len()
            )
            .into()),
        }
    }

    /// The position, 8 bytes big-endian.
    async fn snapshot_state(&mut self, _checkpoint_id: u64) -> Result<Vec<u8>, OperatorError> {
        Ok(self.next.to_be_bytes().to_vec())
    }

    /// Nothing to do: a replayable source acknowledges nothing upstream.
    async fn notify_checkpoint_complete(
        &mut self,
        _checkpoint_id: u64,
    ) -> Result<(), OperatorError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn restored(own: Vec<Vec<u8>>) -> RestoredState {
        RestoredState {
            checkpoint_id: 1,
            own,
            union: vec![],
            previous_parallelism: Some(1),
        }
    }

    /// Invariant: a failover with nothing to restore rewinds to the position
    /// of the first initialization.
    #[tokio::test]
    async fn failover_without_state_rewinds_to_the_fresh_start() {
        let mut p = SourcePosition::new(3);
        p.initialize_state(None).await.unwrap();
        assert_eq!(p.next, 3);
        p.next = 10;
        p.initialize_state(None).await.unwrap();
        assert_eq!(p.next, 3);
    }

    /// Invariant: a state that is not 8 bytes is refused.
    #[tokio::test]
    async fn state_of_the_wrong_length_is_refused() {
        let mut p = SourcePosition::new(0);
        assert!(
            p.initialize_state(Some(restored(vec![vec![1, 2, 3]])))
                .await
                .is_err()
        );
    }

    /// Invariant: several positions for one subtask (merged subtasks) are
    /// refused.
    #[tokio::test]
    async fn several_positions_are_refused() {
        let mut p = SourcePosition::new(0);
        let state = 5u64.to_be_bytes().to_vec();
        assert!(
            p.initialize_state(Some(restored(vec![state.clone(), state])))
                .await
                .is_err()
        );
    }

    /// Invariant: the state is the position, 8 bytes big-endian, and a
    /// notification leaves it unchanged.
    #[tokio::test]
    async fn snapshot_is_the_position_big_endian() {
        let mut p = SourcePosition::new(258);
        assert_eq!(p.snapshot_state(1).await.unwrap(), [0, 0, 0, 0, 0, 0, 1, 2]);
        p.notify_checkpoint_complete(1).await.unwrap();
        assert_eq!(p.next, 258);
    }
}
