//! A bounded map from schema id to compiled schema.

use super::schema::JsonSchema;
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

/// How many compiled schemas a serializer or deserializer keeps (as
/// Confluent's Python serdes keep 1000 validators).
pub(crate) const COMPILED_SCHEMAS: usize = 1000;

/// Compiled schemas by registry id, at most `capacity`; the oldest entry
/// leaves first. A miss only costs a compile: the registry client caches
/// the schema text.
#[derive(Debug)]
pub(crate) struct CompiledCache {
    /// The most entries kept.
    capacity: usize,
    /// The entries and their insertion order.
    inner: Mutex<Entries>,
}

#[derive(Debug, Default)]
struct Entries {
    /// Compiled schemas by id.
    by_id: HashMap<i32, JsonSchema>,
    /// Ids, oldest first.
    order: VecDeque<i32>,
}

impl CompiledCache {
    /// An empty cache holding at most `capacity` schemas (at least one).
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            inner: Mutex::new(Entries::default()),
        }
    }

    /// The compiled schema of `id`, if cached.
    pub(crate) fn get(&self, id: i32) -> Option<JsonSchema> {
        self.lock().by_id.get(&id).cloned()
    }

    /// Caches `schema` as `id`'s, evicting the oldest entry when full.
    pub(crate) fn insert(&self, id: i32, schema: JsonSchema) {
        let mut entries = self.lock();
        if entries.by_id.insert(id, schema).is_some() {
            return;
        }
        entries.order.push_back(id);
        while entries.order.len() > self.capacity {
            if let Some(old) = entries.order.pop_front() {
                entries.by_id.remove(&old);
            }
        }
    }

    /// How many schemas are cached.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().by_id.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        // A panic elsewhere while holding the lock leaves a consistent map
        // (every mutation completes before unlocking): keep using it.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cache never holds more than its capacity; the oldest id leaves.
    #[test]
    fn oldest_entry_leaves_when_full() {
        let cache = CompiledCache::new(2);
        let schema = JsonSchema::new(r#"{"type":"string"}"#).unwrap();
        cache.insert(1, schema.clone());
        cache.insert(2, schema.clone());
        cache.insert(2, schema.clone());
        assert_eq!(cache.len(), 2);
        cache.insert(3, schema);
        assert_eq!(cache.len(), 2);
        assert!(cache.get(1).is_none());
        assert!(cache.get(2).is_some() && cache.get(3).is_some());
    }
}
