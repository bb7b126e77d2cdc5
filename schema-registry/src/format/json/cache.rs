//! A bounded map from schema id to compiled schema.

use super::schema::JsonSchema;
use crate::registry::SharedBounded;

/// How many compiled schemas a serializer or deserializer keeps (as
/// Confluent's Python serdes keep 1000 validators).
pub(crate) const COMPILED_SCHEMAS: usize = 1000;

/// Compiled schemas by registry id, at most `capacity`; the oldest entry
/// leaves first. A miss only costs a compile: the registry client caches
/// the schema text.
#[derive(Debug)]
pub(crate) struct CompiledCache(SharedBounded<i32, JsonSchema>);

impl CompiledCache {
    /// An empty cache holding at most `capacity` schemas (at least one).
    pub(crate) fn new(capacity: usize) -> Self {
        Self(SharedBounded::new(capacity))
    }

    /// The compiled schema of `id`, if cached.
    pub(crate) fn get(&self, id: i32) -> Option<JsonSchema> {
        self.0.get(&id)
    }

    /// Caches `schema` as `id`'s, evicting the oldest entry when full.
    pub(crate) fn insert(&self, id: i32, schema: JsonSchema) {
        self.0.insert(id, schema);
    }

    /// How many schemas are cached.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.0.len()
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
