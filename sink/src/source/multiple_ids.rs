//! [`MultipleIdsMessageAcknowledgingSource`]: Flink's
//! `MultipleIdsMessageAcknowledgingSourceBase`.

use super::base::MessageAcknowledgingSource;
use super::state::{StateError, UniqueId};
use bytes::Bytes;
use std::collections::VecDeque;
use std::future::Future;

/// Acknowledges, at the broker, the session ids (e.g. delivery tags) of one
/// completed snapshot.
///
/// Implemented for every `FnMut(&[SessionId]) -> Result<(), E>`.
///
/// ```
/// use kafka_sink::source::{AcknowledgeSessionIds, MultipleIdsMessageAcknowledgingSource};
/// /// Acknowledges delivery tags on a channel (here: records them).
/// struct Channel { acked: Vec<u64> }
/// impl AcknowledgeSessionIds<u64> for &mut Channel {
///     type Error = std::convert::Infallible;
///     fn acknowledge_session_ids(&mut self, tags: &[u64]) -> Result<(), Self::Error> {
///         self.acked.extend_from_slice(tags);
///         Ok(())
///     }
/// }
/// let mut channel = Channel { acked: Vec::new() };
/// let mut src = MultipleIdsMessageAcknowledgingSource::<String, u64>::new();
/// src.add_id("corr-1".into());
/// src.add_session_id(41);
/// src.snapshot_state(1).unwrap();
/// src.notify_checkpoint_complete(1, &mut channel).unwrap();
/// assert_eq!(channel.acked, [41]);
/// ```
pub trait AcknowledgeSessionIds<SessionId> {
    /// The error of an acknowledgement.
    type Error;
    /// Acknowledges the session ids of one snapshot (possibly empty, as in
    /// Flink).
    fn acknowledge_session_ids(&mut self, session_ids: &[SessionId]) -> Result<(), Self::Error>;
}

impl<S, E, F> AcknowledgeSessionIds<S> for F
where
    F: FnMut(&[S]) -> Result<(), E>,
{
    type Error = E;
    fn acknowledge_session_ids(&mut self, session_ids: &[S]) -> Result<(), E> {
        self(session_ids)
    }
}

/// The asynchronous form of [`AcknowledgeSessionIds`], for broker clients
/// such as `lapin`.
///
/// ```
/// use kafka_sink::source::{AcknowledgeSessionIdsAsync, MultipleIdsMessageAcknowledgingSource};
/// struct Channel { acked: Vec<u64> }
/// impl AcknowledgeSessionIdsAsync<u64> for Channel {
///     type Error = std::io::Error;
///     async fn acknowledge_session_ids(&mut self, tags: &[u64]) -> Result<(), Self::Error> {
///         self.acked.extend_from_slice(tags); // e.g. basic_ack(multiple = false) per tag
///         Ok(())
///     }
/// }
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let mut channel = Channel { acked: Vec::new() };
/// let mut src = MultipleIdsMessageAcknowledgingSource::<String, u64>::new();
/// src.add_id("corr-1".into());
/// src.add_session_id(1);
/// src.snapshot_state(1).unwrap();
/// src.notify_checkpoint_complete_async(1, &mut channel).await.unwrap();
/// assert_eq!(channel.acked, [1]);
/// # });
/// ```
pub trait AcknowledgeSessionIdsAsync<SessionId> {
    /// The error of an acknowledgement.
    type Error;
    /// Acknowledges the session ids of one snapshot (possibly empty).
    fn acknowledge_session_ids(
        &mut self,
        session_ids: &[SessionId],
    ) -> impl Future<Output = Result<(), Self::Error>> + Send;
}

/// A [`MessageAcknowledgingSource`] that also tracks per-session ids (Flink's
/// `MultipleIdsMessageAcknowledgingSourceBase`).
///
/// Unique ids (e.g. correlation ids) are checkpointed and deduplicate across
/// restarts. Session ids (e.g. RabbitMQ delivery tags, valid only on the
/// channel that delivered them) are grouped per snapshot but never
/// checkpointed; on completion of checkpoint N the session ids of every
/// snapshot ≤ N are acknowledged, oldest first. After a restore, or after
/// [`discard_session_ids`](Self::discard_session_ids) (a new broker
/// session), earlier session ids are gone.
///
/// ```
/// use kafka_sink::source::MultipleIdsMessageAcknowledgingSource;
///
/// let mut src = MultipleIdsMessageAcknowledgingSource::<String, u64>::new();
/// if src.add_id("corr-1".into()) {
///     src.add_session_id(1); // delivery tag of an emitted message
/// }
/// src.snapshot_state(1).unwrap();
/// let mut acked = Vec::new();
/// src.notify_checkpoint_complete(1, |tags: &[u64]| {
///     acked.extend_from_slice(tags);
///     Ok::<(), std::convert::Infallible>(())
/// })
/// .unwrap();
/// assert_eq!(acked, [1]);
/// ```
#[derive(Debug, Clone)]
pub struct MultipleIdsMessageAcknowledgingSource<Id, SessionId> {
    /// The unique ids: deduplication and the checkpointed state.
    base: MessageAcknowledgingSource<Id>,
    /// The session ids (delivery tags) recorded since the last snapshot.
    session_ids: Vec<SessionId>,
    /// Session-id groups awaiting acknowledgement, by snapshot id, oldest
    /// first (never persisted: they die with the broker session).
    session_ids_per_snapshot: VecDeque<(u64, Vec<SessionId>)>,
}

impl<Id: UniqueId, S> Default for MultipleIdsMessageAcknowledgingSource<Id, S> {
    fn default() -> Self {
        Self::new()
    }
}

impl<Id: UniqueId, S> MultipleIdsMessageAcknowledgingSource<Id, S> {
    /// An empty source.
    ///
    /// ```
    /// use kafka_sink::source::MultipleIdsMessageAcknowledgingSource;
    /// let src = MultipleIdsMessageAcknowledgingSource::<String, u64>::new();
    /// assert!(src.current_session_ids().is_empty());
    /// ```
    pub fn new() -> Self {
        MultipleIdsMessageAcknowledgingSource {
            base: MessageAcknowledgingSource::new(),
            session_ids: Vec::new(),
            session_ids_per_snapshot: VecDeque::new(),
        }
    }

    /// A source restored from `state`, with no session ids.
    pub fn restore(state: &[u8]) -> Result<Self, StateError> {
        let mut s = Self::new();
        s.initialize_state(Some(state))?;
        Ok(s)
    }

    /// Restores the unique ids (see
    /// [`MessageAcknowledgingSource::initialize_state`]) and starts a new
    /// session: all session ids are dropped.
    pub fn initialize_state(&mut self, state: Option<&[u8]>) -> Result<(), StateError> {
        self.base.initialize_state(state)?;
        self.session_ids.clear();
        self.session_ids_per_snapshot.clear();
        Ok(())
    }

    /// See [`MessageAcknowledgingSource::add_id`].
    pub fn add_id(&mut self, id: Id) -> bool {
        self.base.add_id(id)
    }

    /// Records a session id in the current group.
    pub fn add_session_id(&mut self, session_id: S) {
        self.session_ids.push(session_id);
    }

    /// Starts a new broker session: drops every session id (current and
    /// pending) and returns how many were dropped. Unique ids and pending
    /// checkpoints are kept.
    pub fn discard_session_ids(&mut self) -> usize {
        let n = self.session_ids.len()
            + self
                .session_ids_per_snapshot
                .iter()
                .map(|(_, v)| v.len())
                .sum::<usize>();
        self.session_ids.clear();
        self.session_ids_per_snapshot.clear();
        n
    }

    /// Takes a snapshot: the current unique ids become pending checkpoint
    /// `checkpoint_id` (see [`MessageAcknowledgingSource::snapshot_state`])
    /// and the current session ids are grouped under it. Returns the
    /// serialized unique-id state (session ids are not in it).
    pub fn snapshot_state(&mut self, checkpoint_id: u64) -> Result<Bytes, StateError> {
        let bytes = self.base.snapshot_state(checkpoint_id)?;
        let group = std::mem::take(&mut self.session_ids);
        self.session_ids_per_snapshot
            .push_back((checkpoint_id, group));
        Ok(bytes)
    }

    /// Completes checkpoint `checkpoint_id` with Flink's sequence: for each
    /// pending checkpoint ≤ `checkpoint_id` (front first), the session-id
    /// groups of every snapshot ≤ `checkpoint_id` not yet acknowledged are
    /// acknowledged one by one and dropped, then the pending checkpoint's
    /// unique ids are released.
    ///
    /// On an acker error: groups acknowledged before it are dropped; the
    /// failing group, later groups and the pending checkpoint being processed
    /// stay, and the next notification retries them.
    pub fn notify_checkpoint_complete<A: AcknowledgeSessionIds<S>>(
        &mut self,
        checkpoint_id: u64,
        mut acker: A,
    ) -> Result<usize, A::Error> {
        let mut n = 0;
        while self.base.next_completed(checkpoint_id).is_some() {
            while let Some(group) = self.due_session_ids(checkpoint_id) {
                acker.acknowledge_session_ids(group)?;
                self.session_ids_per_snapshot.pop_front();
            }
            self.base.pop_acknowledged();
            n += 1;
        }
        Ok(n)
    }

    /// The oldest session-id group not yet acknowledged, if its snapshot is
    /// at or before `checkpoint_id`.
    fn due_session_ids(&self, checkpoint_id: u64) -> Option<&[S]> {
        self.session_ids_per_snapshot
            .front()
            .filter(|(id, _)| *id <= checkpoint_id)
            .map(|(_, group)| group.as_slice())
    }

    /// The asynchronous form of
    /// [`notify_checkpoint_complete`](Self::notify_checkpoint_complete), with
    /// the same sequence and error behaviour.
    pub async fn notify_checkpoint_complete_async<A: AcknowledgeSessionIdsAsync<S>>(
        &mut self,
        checkpoint_id: u64,
        acker: &mut A,
    ) -> Result<usize, A::Error> {
        let mut n = 0;
        while self.base.next_completed(checkpoint_id).is_some() {
            while let Some(group) = self.due_session_ids(checkpoint_id) {
                acker.acknowledge_session_ids(group).await?;
                self.session_ids_per_snapshot.pop_front();
            }
            self.base.pop_acknowledged();
            n += 1;
        }
        Ok(n)
    }

    /// The underlying unique-id source.
    pub fn base(&self) -> &MessageAcknowledgingSource<Id> {
        &self.base
    }

    /// The session ids recorded since the last snapshot.
    pub fn current_session_ids(&self) -> &[S] {
        &self.session_ids
    }

    /// The session-id groups awaiting acknowledgement, oldest first.
    pub fn pending_session_ids(&self) -> impl ExactSizeIterator<Item = (u64, &[S])> {
        self.session_ids_per_snapshot
            .iter()
            .map(|(id, v)| (*id, v.as_slice()))
    }
}
