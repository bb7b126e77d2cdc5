//! The client's bounded caches (Confluent's `CachedSchemaRegistryClient`):
//! what a repeated call answers without asking the registry.

use crate::schema::{RegisteredSchema, ResolvedSchema, Schema};
use crate::wire::SchemaId;
use std::collections::{HashMap, VecDeque};
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// A map that forgets its oldest entry when full.
#[derive(Debug)]
pub(crate) struct Bounded<K, V> {
    /// The entries.
    map: HashMap<K, V>,
    /// Keys in insertion order, oldest first.
    order: VecDeque<K>,
    /// The most entries kept.
    capacity: usize,
}

impl<K: Hash + Eq + Clone, V> Bounded<K, V> {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            map: HashMap::new(),
            order: VecDeque::new(),
            capacity: capacity.max(1),
        }
    }

    pub(crate) fn get(&self, k: &K) -> Option<&V> {
        self.map.get(k)
    }

    pub(crate) fn insert(&mut self, k: K, v: V) {
        if self.map.insert(k.clone(), v).is_none() {
            self.order.push_back(k);
            while self.order.len() > self.capacity {
                if let Some(old) = self.order.pop_front() {
                    self.map.remove(&old);
                }
            }
        }
    }

    pub(crate) fn remove(&mut self, k: &K) {
        if self.map.remove(k).is_some() {
            self.order.retain(|o| o != k);
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }
}

/// A [`Bounded`] map behind a lock, shared by the tasks of one serializer
/// or deserializer (the formats' parsed schemas by id): values are cloned
/// out, so they are `Arc`s or cheap handles.
#[derive(Debug)]
pub(crate) struct SharedBounded<K, V>(Mutex<Bounded<K, V>>);

impl<K: Hash + Eq + Clone, V: Clone> SharedBounded<K, V> {
    /// An empty map of at most `capacity` entries (at least one).
    pub(crate) fn new(capacity: usize) -> Self {
        Self(Mutex::new(Bounded::new(capacity)))
    }

    /// The value of `k`, if kept.
    pub(crate) fn get(&self, k: &K) -> Option<V> {
        self.lock().get(k).cloned()
    }

    /// Keeps `v` as `k`'s, forgetting the oldest entry when full.
    pub(crate) fn insert(&self, k: K, v: V) {
        self.lock().insert(k, v);
    }

    #[cfg(all(test, any(feature = "avro", feature = "json", feature = "protobuf")))]
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> MutexGuard<'_, Bounded<K, V>> {
        // Every mutation completes before the lock is released: a panic
        // elsewhere leaves a consistent map, so keep using it.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What is cached about one subject.
#[derive(Debug)]
pub(crate) struct SubjectCache {
    /// (schema, normalize) -> id, from register.
    pub(crate) ids: Bounded<(Schema, bool), i32>,
    /// (schema, normalize) -> its registration, from lookup.
    pub(crate) lookups: Bounded<(Schema, bool), RegisteredSchema>,
    /// version -> registration.
    pub(crate) versions: Bounded<i32, RegisteredSchema>,
}

/// All caches of one client.
#[derive(Debug)]
pub(crate) struct Caches {
    /// Per subject (at most `max.schemas.per.subject` entries each).
    subjects: HashMap<String, SubjectCache>,
    /// The per-subject capacity.
    per_subject: usize,
    /// id or GUID -> schema.
    pub(crate) by_id: Bounded<SchemaId, Arc<Schema>>,
    /// id or GUID -> schema with its references.
    pub(crate) resolved: Bounded<SchemaId, Arc<ResolvedSchema>>,
    /// subject -> latest version and when it was fetched.
    latest: Bounded<String, (RegisteredSchema, Instant)>,
    /// How long a latest version is trusted; `None` forever.
    latest_ttl: Option<Duration>,
}

impl Caches {
    pub(crate) fn new(
        per_subject: usize,
        latest_size: usize,
        latest_ttl: Option<Duration>,
    ) -> Self {
        Self {
            subjects: HashMap::new(),
            per_subject,
            // Ids are global: room for many subjects' worth.
            by_id: Bounded::new(per_subject.saturating_mul(10)),
            resolved: Bounded::new(per_subject.saturating_mul(10)),
            latest: Bounded::new(latest_size),
            latest_ttl,
        }
    }

    pub(crate) fn subject(&mut self, subject: &str) -> &mut SubjectCache {
        let cap = self.per_subject;
        self.subjects
            .entry(subject.to_string())
            .or_insert_with(|| SubjectCache {
                ids: Bounded::new(cap),
                lookups: Bounded::new(cap),
                versions: Bounded::new(cap),
            })
    }

    pub(crate) fn peek_subject(&self, subject: &str) -> Option<&SubjectCache> {
        self.subjects.get(subject)
    }

    /// The cached latest version of `subject`, unless expired.
    pub(crate) fn latest(&self, subject: &str) -> Option<RegisteredSchema> {
        let (s, at) = self.latest.get(&subject.to_string())?;
        match self.latest_ttl {
            Some(ttl) if at.elapsed() >= ttl => None,
            _ => Some(s.clone()),
        }
    }

    pub(crate) fn set_latest(&mut self, s: RegisteredSchema) {
        self.latest
            .insert(s.subject.clone(), (s.clone(), Instant::now()));
        let version = s.version;
        self.subject(&s.subject.clone()).versions.insert(version, s);
    }

    /// Forgets what is cached about `subject` (after a delete).
    pub(crate) fn forget_subject(&mut self, subject: &str) {
        self.subjects.remove(subject);
        self.latest.remove(&subject.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bounded_map_forgets_its_oldest_entries() {
        let mut m = Bounded::new(2);
        m.insert(1, "a");
        m.insert(2, "b");
        m.insert(1, "a2");
        m.insert(3, "c");
        assert_eq!(
            (m.get(&1), m.get(&2), m.get(&3)),
            (None, Some(&"b"), Some(&"c"))
        );
        assert_eq!(m.len(), 2);
        m.remove(&2);
        assert_eq!(m.len(), 1);
    }
}
