//! KIP-227 fetch sessions on the brokers (Kafka's `FetchSessionCache`):
//! 1. a client's full Fetch (epoch 0) opens a session holding its
//!    partitions and their fetch offsets;
//! 2. its incremental Fetches (epoch 1, 2, ...) name only what changed and
//!    the partitions to forget;
//! 3. they are answered with only the partitions that have news (records,
//!    an error, or a moved high watermark, last stable offset or log start
//!    offset).
//!
//! A session lives on the broker that opened it, is lost when that broker
//! stops, and the least recently used one is evicted when the cache is full
//! (`max.incremental.fetch.session.cache.slots`, 1000).

use std::collections::{BTreeMap, HashMap};

/// The sessions a broker keeps at most.
pub(crate) const CACHE_SLOTS: usize = 1000;

/// A topic and partition, by name.
pub(crate) type SessionKey = (String, i32);

/// What a session holds for one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CachedPartition {
    /// The topic's id as the client named it (v13+), else zero.
    pub topic_id: kafka_proto::primitives::Uuid,
    /// The fetch offset the client last sent.
    pub fetch_offset: i64,
    /// The current leader epoch it last sent (-1: unchecked).
    pub leader_epoch: i32,
    /// The partition byte limit it last sent.
    pub max_bytes: i32,
    /// The high watermark last answered (news is a change from it, or
    /// from the two below).
    pub high_watermark: i64,
    /// The last stable offset last answered.
    pub last_stable_offset: i64,
    /// The log start offset last answered.
    pub log_start_offset: i64,
}

/// One session.
#[derive(Debug, Clone)]
pub(crate) struct FetchSession {
    /// The epoch the next incremental request must carry.
    pub next_epoch: i32,
    /// The partitions, in the order the client first named them.
    pub partitions: Vec<(SessionKey, CachedPartition)>,
    /// When a request last used it, for the least-recently-used eviction.
    pub last_used_ms: i64,
}

/// Every broker's sessions.
#[derive(Debug, Default)]
pub(crate) struct FetchSessions {
    /// Sessions by (broker, session id).
    sessions: HashMap<(i32, i32), FetchSession>,
    /// The id the next new session gets.
    next_id: i32,
}

impl FetchSessions {
    /// The session `id` on `broker`.
    pub(crate) fn get(&self, broker: i32, id: i32) -> Option<&FetchSession> {
        self.sessions.get(&(broker, id))
    }

    /// Stores `session` under `id` (0: a new id, evicting the least
    /// recently used session when the broker's cache is full); returns
    /// the id.
    pub(crate) fn put(&mut self, broker: i32, id: i32, session: FetchSession) -> i32 {
        let id = if id != 0 {
            id
        } else {
            let on_broker = self.sessions.keys().filter(|(b, _)| *b == broker).count();
            if on_broker >= CACHE_SLOTS
                && let Some(oldest) = self
                    .sessions
                    .iter()
                    .filter(|((b, _), _)| *b == broker)
                    .min_by_key(|(_, s)| s.last_used_ms)
                    .map(|(k, _)| *k)
            {
                self.sessions.remove(&oldest);
            }
            self.next_id = if self.next_id == i32::MAX {
                1
            } else {
                self.next_id + 1
            };
            self.next_id
        };
        self.sessions.insert((broker, id), session);
        id
    }

    /// Closes session `id` on `broker`.
    pub(crate) fn close(&mut self, broker: i32, id: i32) {
        self.sessions.remove(&(broker, id));
    }

    /// Forgets every session of a stopped broker.
    pub(crate) fn broker_stopped(&mut self, broker: i32) {
        self.sessions.retain(|(b, _), _| *b != broker);
    }

    /// Sessions per broker (for the state dump).
    pub(crate) fn count(&self) -> BTreeMap<i32, usize> {
        let mut out = BTreeMap::new();
        for (b, _) in self.sessions.keys() {
            *out.entry(*b).or_default() += 1;
        }
        out
    }
}
