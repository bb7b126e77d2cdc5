//! [`MessageAcknowledgingSource`]: Flink's `MessageAcknowledgingSourceBase`.

use super::state::{PendingCheckpoint, StateError, UniqueId, decode_pending, encode_pending};
use bytes::Bytes;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};

/// Acknowledges, at the broker, the ids of one completed snapshot.
///
/// Implemented for every `FnMut(u64, &[Id]) -> Result<(), E>`.
///
/// ```
/// use kafka_sink::source::{AcknowledgeIds, MessageAcknowledgingSource};
/// /// Acknowledges by recording the ids (a real one calls the broker).
/// struct Broker { acked: Vec<u64> }
/// impl AcknowledgeIds<u64> for &mut Broker {
///     type Error = std::convert::Infallible;
///     fn acknowledge_ids(&mut self, _checkpoint_id: u64, ids: &[u64]) -> Result<(), Self::Error> {
///         self.acked.extend_from_slice(ids);
///         Ok(())
///     }
/// }
/// let mut broker = Broker { acked: Vec::new() };
/// let mut src = MessageAcknowledgingSource::new();
/// src.add_id(7);
/// src.snapshot_state(1).unwrap();
/// src.notify_checkpoint_complete(1, &mut broker).unwrap();
/// assert_eq!(broker.acked, [7]);
/// ```
pub trait AcknowledgeIds<Id> {
    /// The error of an acknowledgement.
    type Error;
    /// Acknowledges `ids`. As in Flink, `checkpoint_id` is the id passed to
    /// [`notify_checkpoint_complete`](MessageAcknowledgingSource::notify_checkpoint_complete)
    /// (the **notified** checkpoint), not necessarily the snapshot the ids
    /// belong to.
    fn acknowledge_ids(&mut self, checkpoint_id: u64, ids: &[Id]) -> Result<(), Self::Error>;
}

impl<Id, E, F> AcknowledgeIds<Id> for F
where
    F: FnMut(u64, &[Id]) -> Result<(), E>,
{
    type Error = E;
    fn acknowledge_ids(&mut self, checkpoint_id: u64, ids: &[Id]) -> Result<(), E> {
        self(checkpoint_id, ids)
    }
}

/// Where an id is held: in how many pending snapshots, and whether it is in
/// the current (not yet snapshotted) group.
#[derive(Debug, Clone, Copy, Default)]
struct Holds {
    /// How many pending snapshots hold the id.
    pending: u32,
    /// Whether the current group holds it.
    current: bool,
}

/// A source whose messages carry unique ids and are acknowledged at the broker
/// only when a checkpoint containing them completes (Flink's
/// `MessageAcknowledgingSourceBase`).
///
/// * [`add_id`](Self::add_id) records an id in the current group and returns
///   whether it is new, i.e. neither pending nor in the current group: emit
///   the message only then.
/// * [`snapshot_state`](Self::snapshot_state) closes the current group as a
///   pending checkpoint and returns the serialized pending queue.
/// * [`notify_checkpoint_complete`](Self::notify_checkpoint_complete)`(N)`
///   acknowledges every pending checkpoint ≤ N from the front, in order, and
///   releases its ids; it stops at the first larger one.
/// * [`initialize_state`](Self::initialize_state) restores the pending queue
///   and rebuilds the dedup set from it.
///
/// The dedup set is always exactly "ids in pending snapshots ∪ current ids".
/// One deliberate difference from Flink: an id that arrives again while it is
/// pending is (as in Flink) also recorded in the current group, and here it
/// stays in the dedup set until the *last* group holding it is acknowledged.
/// Flink's `removeAll` drops it when the first group is acknowledged, so a
/// live source and one restored from the same state would disagree.
///
/// ```
/// use kafka_sink::source::MessageAcknowledgingSource;
///
/// let mut src = MessageAcknowledgingSource::<String>::new();
/// assert!(src.add_id("a".into()));
/// assert!(!src.add_id("a".into())); // duplicate: do not emit
/// let state = src.snapshot_state(1).unwrap();
/// assert!(src.add_id("b".into()));
///
/// let mut acked = Vec::new();
/// src.notify_checkpoint_complete(1, |cp: u64, ids: &[String]| {
///     acked.push((cp, ids.to_vec()));
///     Ok::<(), std::convert::Infallible>(())
/// })
/// .unwrap();
/// assert_eq!(acked, vec![(1, vec!["a".to_string()])]);
///
/// // A restored source rejects the ids of the restored pending snapshot.
/// let mut restored = MessageAcknowledgingSource::<String>::new();
/// restored.initialize_state(Some(&state)).unwrap();
/// assert!(!restored.add_id("a".into()));
/// assert!(restored.add_id("b".into()));
/// ```
#[derive(Debug, Clone)]
pub struct MessageAcknowledgingSource<Id> {
    /// The ids recorded since the last snapshot, in arrival order.
    current: Vec<Id>,
    /// Snapshotted groups awaiting their checkpoint's completion, oldest
    /// first.
    pending: VecDeque<PendingCheckpoint<Id>>,
    /// The dedup set: every pending or current id, with the groups holding it.
    holds: HashMap<Id, Holds>,
    /// The last snapshot taken or restored, to refuse one that does not
    /// increase.
    last_snapshot: Option<u64>,
}

impl<Id: UniqueId> Default for MessageAcknowledgingSource<Id> {
    fn default() -> Self {
        Self::new()
    }
}

impl<Id: UniqueId> MessageAcknowledgingSource<Id> {
    /// An empty source (no pending checkpoints).
    ///
    /// ```
    /// use kafka_sink::source::MessageAcknowledgingSource;
    /// let src = MessageAcknowledgingSource::<String>::new();
    /// assert_eq!((src.pending().len(), src.last_snapshot_id()), (0, None));
    /// ```
    pub fn new() -> Self {
        MessageAcknowledgingSource {
            current: Vec::new(),
            pending: VecDeque::new(),
            holds: HashMap::new(),
            last_snapshot: None,
        }
    }

    /// A source restored from `state` (see [`initialize_state`](Self::initialize_state)).
    pub fn restore(state: &[u8]) -> Result<Self, StateError> {
        let mut s = Self::new();
        s.initialize_state(Some(state))?;
        Ok(s)
    }

    /// Replaces everything with the pending checkpoints in `state` (`None`:
    /// a fresh start) and rebuilds the dedup set from their ids. The current
    /// group starts empty. On error nothing changes.
    pub fn initialize_state(&mut self, state: Option<&[u8]>) -> Result<(), StateError> {
        let pending = match state {
            Some(bytes) => decode_pending::<Id>(bytes)?,
            None => Vec::new(),
        };
        let mut holds: HashMap<Id, Holds> = HashMap::new();
        for cp in &pending {
            for id in &cp.ids {
                holds.entry(id.clone()).or_default().pending += 1;
            }
        }
        self.last_snapshot = pending.last().map(|cp| cp.checkpoint_id);
        self.pending = pending.into();
        self.holds = holds;
        self.current.clear();
        Ok(())
    }

    /// Records `id` in the current group and returns whether it is new
    /// (neither pending nor already in the current group). Emit the message
    /// only when this returns `true`.
    pub fn add_id(&mut self, id: Id) -> bool {
        match self.holds.entry(id) {
            Entry::Vacant(v) => {
                self.current.push(v.key().clone());
                v.insert(Holds {
                    pending: 0,
                    current: true,
                });
                true
            }
            Entry::Occupied(mut o) => {
                if !o.get().current {
                    o.get_mut().current = true;
                    self.current.push(o.key().clone());
                }
                false
            }
        }
    }

    /// Whether `id` is in the dedup set (pending or current).
    pub fn contains(&self, id: &Id) -> bool {
        self.holds.contains_key(id)
    }

    /// Closes the current group as pending checkpoint `checkpoint_id` (even
    /// when it is empty, as in Flink) and returns the serialized pending
    /// queue. Checkpoint ids must strictly increase; otherwise nothing
    /// changes and an error is returned.
    pub fn snapshot_state(&mut self, checkpoint_id: u64) -> Result<Bytes, StateError> {
        if let Some(previous) = self.last_snapshot
            && checkpoint_id <= previous
        {
            return Err(StateError::NonIncreasingCheckpointId {
                checkpoint_id,
                previous,
            });
        }
        let ids = std::mem::take(&mut self.current);
        for id in &ids {
            if let Some(h) = self.holds.get_mut(id) {
                h.current = false;
                h.pending += 1;
            }
        }
        self.pending
            .push_back(PendingCheckpoint { checkpoint_id, ids });
        self.last_snapshot = Some(checkpoint_id);
        Ok(encode_pending(&self.pending))
    }

    /// The serialized pending queue, without taking a snapshot.
    pub fn serialized_pending(&self) -> Bytes {
        encode_pending(&self.pending)
    }

    /// Acknowledges every pending checkpoint ≤ `checkpoint_id`, front first:
    /// `acker.acknowledge_ids(checkpoint_id, ids)` (the notified id, as in
    /// Flink), then its ids leave the dedup set and the entry is dropped.
    /// Stops at the first larger checkpoint, so a notification of an older
    /// (subsumed) checkpoint is a no-op.
    ///
    /// If the acker fails, the error is returned at once: checkpoints
    /// acknowledged before it stay released, the failing one and everything
    /// after it stay pending (ids still deduplicated) and are retried by the
    /// next notification. Returns how many checkpoints were acknowledged.
    pub fn notify_checkpoint_complete<A: AcknowledgeIds<Id>>(
        &mut self,
        checkpoint_id: u64,
        mut acker: A,
    ) -> Result<usize, A::Error> {
        let mut n = 0;
        while let Some(cp) = self.next_completed(checkpoint_id) {
            acker.acknowledge_ids(checkpoint_id, &cp.ids)?;
            self.pop_acknowledged();
            n += 1;
        }
        Ok(n)
    }

    /// Step API for asynchronous acknowledgement: the front pending
    /// checkpoint if its id is ≤ `completed_checkpoint_id`.
    pub fn next_completed(&self, completed_checkpoint_id: u64) -> Option<&PendingCheckpoint<Id>> {
        self.pending
            .front()
            .filter(|cp| cp.checkpoint_id <= completed_checkpoint_id)
    }

    /// Step API: drops the front pending checkpoint after its acknowledgement
    /// succeeded and releases its ids from the dedup set.
    ///
    /// ```
    /// use kafka_sink::source::MessageAcknowledgingSource;
    /// let mut src = MessageAcknowledgingSource::<u64>::new();
    /// src.add_id(9);
    /// src.snapshot_state(3).unwrap();
    /// if let Some(cp) = src.next_completed(3) {
    ///     let _ids = cp.ids.clone(); // acknowledge these asynchronously, then:
    ///     src.pop_acknowledged();
    /// }
    /// assert!(!src.contains(&9));
    /// ```
    pub fn pop_acknowledged(&mut self) -> Option<PendingCheckpoint<Id>> {
        let cp = self.pending.pop_front()?;
        for id in &cp.ids {
            if let Entry::Occupied(mut o) = self.holds.entry(id.clone()) {
                let h = o.get_mut();
                h.pending = h.pending.saturating_sub(1);
                if h.pending == 0 && !h.current {
                    o.remove();
                }
            }
        }
        Some(cp)
    }

    /// The pending checkpoints, oldest first.
    pub fn pending(&self) -> impl ExactSizeIterator<Item = &PendingCheckpoint<Id>> {
        self.pending.iter()
    }

    /// The ids recorded since the last snapshot.
    pub fn current_ids(&self) -> &[Id] {
        &self.current
    }

    /// The size of the dedup set (distinct pending and current ids).
    pub fn unacknowledged_len(&self) -> usize {
        self.holds.len()
    }

    /// The id of the last snapshot taken or restored.
    pub fn last_snapshot_id(&self) -> Option<u64> {
        self.last_snapshot
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Invariant: a restored source deduplicates the restored ids and keeps
    /// the restored snapshot's id.
    #[test]
    fn restore_keeps_the_ids_and_the_last_snapshot_id() {
        let mut live = MessageAcknowledgingSource::<u64>::new();
        live.add_id(1);
        let state = live.snapshot_state(1).unwrap();
        let restored = MessageAcknowledgingSource::<u64>::restore(&state).unwrap();
        assert!(restored.contains(&1) && !restored.contains(&2));
        assert_eq!(restored.last_snapshot_id(), Some(1));
    }

    /// Invariant: the serialized pending queue is what the last snapshot
    /// returned, in the `KEAS` format.
    #[test]
    fn serialized_pending_equals_the_last_snapshot() {
        let mut src = MessageAcknowledgingSource::<u64>::new();
        src.add_id(1);
        let state = src.snapshot_state(1).unwrap();
        assert!(state.starts_with(b"KEAS"));
        assert_eq!(src.serialized_pending(), state);
    }

    /// Invariant: `next_completed` offers only a checkpoint up to the
    /// completed id, and `pop_acknowledged` releases its ids.
    #[test]
    fn step_api_offers_completed_checkpoints_and_releases_their_ids() {
        let mut src = MessageAcknowledgingSource::<u64>::new();
        src.add_id(9);
        src.snapshot_state(3).unwrap();
        assert!(src.next_completed(2).is_none());
        assert_eq!(src.next_completed(3).unwrap().ids, [9]);
        assert_eq!(src.pop_acknowledged().unwrap().checkpoint_id, 3);
        assert!(!src.contains(&9));
        assert!(src.pop_acknowledged().is_none());
    }

    /// Invariant: the dedup set counts pending and current ids; a snapshot
    /// empties the current group.
    #[test]
    fn unacknowledged_len_counts_pending_and_current_ids() {
        let mut src = MessageAcknowledgingSource::<u64>::new();
        src.add_id(1);
        src.add_id(2);
        assert_eq!(src.current_ids(), [1, 2]);
        src.snapshot_state(1).unwrap();
        assert!(src.current_ids().is_empty());
        src.add_id(3);
        assert_eq!(src.unacknowledged_len(), 3);
        assert_eq!(
            src.pending().map(|cp| cp.checkpoint_id).collect::<Vec<_>>(),
            [1]
        );
    }

    /// Invariant: a closure acknowledges under the notified checkpoint id.
    #[test]
    fn closure_acker_receives_the_notified_checkpoint_id() {
        let mut log = Vec::new();
        let mut acker = |cp: u64, ids: &[String]| {
            log.push(format!("{cp}:{}", ids.join(",")));
            Ok::<(), std::convert::Infallible>(())
        };
        acker.acknowledge_ids(5, &["a".into(), "b".into()]).unwrap();
        assert_eq!(log, ["5:a,b"]);
    }
}
