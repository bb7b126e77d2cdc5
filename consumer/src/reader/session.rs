//! KIP-227 incremental fetch sessions, one per broker (Java's
//! `FetchSessionHandler`), as a sans-IO state machine: the reader asks it
//! what to put in the next Fetch and tells it how the Fetch ended.
//!
//! ```text
//!            build (epoch 0: every partition)        answer with a session id
//!   None ─────────────────────────────────────► Full ──────────────────────────► Open(id, epoch 1)
//!    ▲  answer without a session id (the broker       │                             │ build: only the
//!    └────────── keeps no sessions) ◄─────────────────┘                             │ partitions whose
//!                                                                                   │ offset, leader epoch
//!   FETCH_SESSION_ID_NOT_FOUND / INVALID_FETCH_SESSION_EPOCH: back to None          │ or limit changed,
//!   a Fetch lost or failed: epoch 0 with the old id (the broker closes it           │ the removed ones as
//!   and opens a new one)                                                            ▼ forgotten; epoch + 1
//! ```
//!
//! - A partition that leaves the fetch set is sent as forgotten, or the
//!   broker would keep serving it from its cached offset.
//! - A partition absent from an incremental answer is unchanged (no new
//!   records, same offsets), not at its end.
//! - One Fetch per broker at a time: the next is built after the last
//!   answer (or failure) was handed back.

use kafka_proto::ErrorCode;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A topic and partition.
pub(crate) type Key = (Arc<str>, i32);

/// What the session holds for one partition: the fetch offset, the
/// leader epoch and the byte limit last sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PartitionFetch {
    /// The offset to fetch from.
    pub offset: i64,
    /// The current leader epoch sent (-1 before Fetch v9 or when unknown).
    pub leader_epoch: i32,
    /// The epoch of the last fetched batch sent (-1 before Fetch v12 or
    /// when unknown, KIP-320).
    pub last_fetched_epoch: i32,
    /// The partition's byte limit.
    pub max_bytes: i32,
}

/// The session fields and partitions of the next Fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SessionRequest {
    /// The session to continue; 0 for none.
    pub session_id: i32,
    /// The session epoch to send; 0 opens a new session (a full request).
    pub session_epoch: i32,
    /// The partitions to put in the request.
    pub partitions: Vec<(Key, PartitionFetch)>,
    /// Partitions the session holds that are no longer fetched.
    pub forgotten: Vec<Key>,
}

impl SessionRequest {
    /// A full request (every partition sent, nothing forgotten).
    pub(crate) fn is_full(&self) -> bool {
        self.session_epoch == 0
    }
}

/// Why a Fetch's session ended badly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SessionReset {
    /// The broker lost the session or the epoch: fetch again in full.
    Lost,
}

/// One broker's fetch session.
#[derive(Debug, Clone, Default)]
pub(crate) struct FetchSession {
    /// The broker's session id; 0 when there is none.
    id: i32,
    /// The epoch of the next request; 0 asks for a new session.
    epoch: i32,
    /// What the broker's session holds.
    held: BTreeMap<Key, PartitionFetch>,
    /// What it will hold once the request in flight is answered.
    pending: Option<BTreeMap<Key, PartitionFetch>>,
}

impl FetchSession {
    /// The request for fetching `wanted` next.
    pub(crate) fn build(&mut self, wanted: &BTreeMap<Key, PartitionFetch>) -> SessionRequest {
        let full = self.epoch == 0;
        let (partitions, forgotten) = if full {
            (
                wanted.iter().map(|(k, f)| (k.clone(), *f)).collect(),
                Vec::new(),
            )
        } else {
            (
                wanted
                    .iter()
                    .filter(|(k, f)| self.held.get(*k) != Some(*f))
                    .map(|(k, f)| (k.clone(), *f))
                    .collect(),
                self.held
                    .keys()
                    .filter(|k| !wanted.contains_key(*k))
                    .cloned()
                    .collect(),
            )
        };
        self.pending = Some(wanted.clone());
        SessionRequest {
            session_id: self.id,
            session_epoch: self.epoch,
            partitions,
            forgotten,
        }
    }

    /// The Fetch was answered with top-level `error` and `session_id`.
    pub(crate) fn on_answer(
        &mut self,
        error: ErrorCode,
        session_id: i32,
    ) -> Result<(), SessionReset> {
        let pending = self.pending.take().unwrap_or_default();
        match error {
            ErrorCode::None => {
                if self.epoch == 0 {
                    if session_id == 0 {
                        // No session (the broker's cache is full, or it
                        // keeps none): full requests from now on.
                        self.id = 0;
                        self.held.clear();
                        return Ok(());
                    }
                    self.id = session_id;
                }
                self.held = pending;
                self.epoch = if self.epoch == i32::MAX {
                    1
                } else {
                    self.epoch + 1
                };
                Ok(())
            }
            ErrorCode::FetchSessionIdNotFound | ErrorCode::InvalidFetchSessionEpoch => {
                *self = Self::default();
                Err(SessionReset::Lost)
            }
            _ => {
                self.close_existing();
                Ok(())
            }
        }
    }

    /// The Fetch failed or its answer was lost: the next one opens a new
    /// session in place of this one.
    pub(crate) fn on_failure(&mut self) {
        self.pending = None;
        self.close_existing();
    }

    fn close_existing(&mut self) {
        self.epoch = 0;
        self.held.clear();
    }

    /// The broker's session id (0: none).
    pub(crate) fn id(&self) -> i32 {
        self.id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(p: i32) -> Key {
        (Arc::from("t"), p)
    }

    fn at(offset: i64) -> PartitionFetch {
        PartitionFetch {
            offset,
            leader_epoch: 0,
            last_fetched_epoch: -1,
            max_bytes: 1 << 20,
        }
    }

    fn wanted(parts: &[(i32, i64)]) -> BTreeMap<Key, PartitionFetch> {
        parts.iter().map(|(p, o)| (key(*p), at(*o))).collect()
    }

    fn sent(r: &SessionRequest) -> Vec<(i32, i64)> {
        r.partitions.iter().map(|(k, f)| (k.1, f.offset)).collect()
    }

    /// Invariant: after a full request opens a session, a request carries
    /// only the partitions whose fetch changed, and the epochs follow.
    #[test]
    fn an_open_session_sends_only_what_changed() {
        let mut s = FetchSession::default();
        let r = s.build(&wanted(&[(0, 10), (1, 20)]));
        assert_eq!(
            (r.session_id, r.session_epoch, sent(&r)),
            (0, 0, vec![(0, 10), (1, 20)])
        );
        s.on_answer(ErrorCode::None, 77).unwrap();
        let r = s.build(&wanted(&[(0, 15), (1, 20)]));
        assert_eq!(
            (r.session_id, r.session_epoch, sent(&r)),
            (77, 1, vec![(0, 15)])
        );
        assert!(r.forgotten.is_empty());
        s.on_answer(ErrorCode::None, 77).unwrap();
        let r = s.build(&wanted(&[(0, 15), (1, 20)]));
        assert_eq!((r.session_epoch, sent(&r)), (2, vec![]));
    }

    /// Invariant: a partition that leaves the fetch set is forgotten, or
    /// the broker keeps serving it from its cached offset.
    #[test]
    fn a_removed_partition_is_sent_as_forgotten() {
        let mut s = FetchSession::default();
        s.build(&wanted(&[(0, 10), (1, 20)]));
        s.on_answer(ErrorCode::None, 5).unwrap();
        let r = s.build(&wanted(&[(0, 10)]));
        assert_eq!(r.forgotten, vec![key(1)]);
        s.on_answer(ErrorCode::None, 5).unwrap();
        // Back at another offset: sent again, as new.
        let r = s.build(&wanted(&[(0, 10), (1, 3)]));
        assert_eq!((sent(&r), r.forgotten.len()), (vec![(1, 3)], 0));
    }

    /// Invariant: a lost session or epoch falls back to a full request
    /// that opens a new session; a failed Fetch closes the old one.
    #[test]
    fn errors_fall_back_to_a_full_request() {
        let mut s = FetchSession::default();
        s.build(&wanted(&[(0, 10)]));
        s.on_answer(ErrorCode::None, 5).unwrap();
        s.build(&wanted(&[(0, 11)]));
        assert_eq!(
            s.on_answer(ErrorCode::InvalidFetchSessionEpoch, 0),
            Err(SessionReset::Lost)
        );
        let r = s.build(&wanted(&[(0, 11)]));
        assert!(r.is_full() && r.session_id == 0);
        s.on_answer(ErrorCode::None, 6).unwrap();
        s.build(&wanted(&[(0, 12)]));
        s.on_failure();
        let r = s.build(&wanted(&[(0, 12)]));
        assert_eq!(
            (r.session_id, r.session_epoch, sent(&r)),
            (6, 0, vec![(0, 12)])
        );
    }

    /// What the broker's session holds, applying requests as Kafka's
    /// `FetchSession.update` does, for the property below.
    #[derive(Debug, Default)]
    struct BrokerModel {
        id: i32,
        epoch: i32,
        held: BTreeMap<Key, PartitionFetch>,
    }

    impl BrokerModel {
        /// Applies `r`; `None` when the broker refuses it (unknown session
        /// or epoch).
        fn apply(
            &mut self,
            r: &SessionRequest,
            new_id: i32,
        ) -> Option<BTreeMap<Key, PartitionFetch>> {
            if r.session_epoch == 0 {
                self.id = new_id;
                self.epoch = 1;
                self.held = r.partitions.iter().cloned().collect();
                return Some(self.held.clone());
            }
            if r.session_id != self.id || r.session_epoch != self.epoch {
                return None;
            }
            for (k, f) in &r.partitions {
                self.held.insert(k.clone(), *f);
            }
            for k in &r.forgotten {
                self.held.remove(k);
            }
            self.epoch += 1;
            Some(self.held.clone())
        }
    }

    proptest::proptest! {
        /// Invariant: whatever the sequence of fetch sets, answers lost and
        /// sessions lost, every request the broker accepts leaves its
        /// session holding exactly the partitions and offsets the reader
        /// wanted (nothing stale, nothing missing); a refused one is
        /// followed by a full request.
        #[test]
        fn the_broker_always_holds_what_the_reader_wants(
            steps in proptest::collection::vec(
                (proptest::collection::btree_map(0..6i32, 0..50i64, 0..6), 0..10u8),
                1..60,
            )
        ) {
            let mut s = FetchSession::default();
            let mut broker = BrokerModel::default();
            let mut next_id = 100;
            let mut must_be_full = true;
            for (parts, fate) in steps {
                let want: BTreeMap<Key, PartitionFetch> =
                    parts.iter().map(|(p, o)| (key(*p), at(*o))).collect();
                let r = s.build(&want);
                if must_be_full {
                    proptest::prop_assert!(r.is_full());
                }
                match fate {
                    // The Fetch is lost: before the broker saw it (2), or
                    // after the broker applied it, its answer lost (0).
                    0 | 2 => {
                        if fate == 0 {
                            next_id += 1;
                            let _ = broker.apply(&r, next_id);
                        }
                        s.on_failure();
                        must_be_full = true;
                    }
                    // The broker lost every session.
                    1 => {
                        broker = BrokerModel::default();
                        broker.id = -1;
                        let answer = broker.apply(&r, next_id);
                        if answer.is_none() {
                            proptest::prop_assert_eq!(
                                s.on_answer(ErrorCode::FetchSessionIdNotFound, 0),
                                Err(SessionReset::Lost)
                            );
                            must_be_full = true;
                        } else {
                            proptest::prop_assert_eq!(answer, Some(want.clone()));
                            s.on_answer(ErrorCode::None, broker.id).unwrap();
                            must_be_full = false;
                        }
                    }
                    _ => {
                        next_id += 1;
                        match broker.apply(&r, next_id) {
                            Some(held) => {
                                proptest::prop_assert_eq!(held, want.clone());
                                s.on_answer(ErrorCode::None, broker.id).unwrap();
                                must_be_full = false;
                            }
                            None => {
                                proptest::prop_assert_eq!(
                                    s.on_answer(ErrorCode::InvalidFetchSessionEpoch, 0),
                                    Err(SessionReset::Lost)
                                );
                                must_be_full = true;
                            }
                        }
                    }
                }
            }
        }
    }

    /// Invariant: a broker that keeps no session (answers id 0) gets full
    /// requests every time.
    #[test]
    fn without_a_session_every_request_is_full() {
        let mut s = FetchSession::default();
        s.build(&wanted(&[(0, 10)]));
        s.on_answer(ErrorCode::None, 0).unwrap();
        let r = s.build(&wanted(&[(0, 10)]));
        assert!(r.is_full());
        assert_eq!(sent(&r), vec![(0, 10)]);
    }
}
