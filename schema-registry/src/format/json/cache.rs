//! A bounded map from schema id (or GUID) to compiled schema.

use super::schema::JsonSchema;
use crate::registry::SharedBounded;
use crate::wire::SchemaId;

/// How many compiled schemas a serializer or deserializer keeps (as
/// Confluent's Python serdes keep 1000 validators).
pub(crate) const COMPILED_SCHEMAS: usize = 1000;

/// Compiled schemas by registry id or GUID, at most `capacity`; the oldest entry
/// leaves first. A miss only costs a compile: the registry client caches
/// the schema text.
#[derive(Debug)]
pub(crate) struct CompiledCache(SharedBounded<SchemaId, JsonSchema>);

impl CompiledCache {
    /// An empty cache holding at most `capacity` schemas (at least one).
    pub(crate) fn new(capacity: usize) -> Self {
        Self(SharedBounded::new(capacity))
    }

    /// The compiled schema of `id`, if cached.
    pub(crate) fn get(&self, id: SchemaId) -> Option<JsonSchema> {
        self.0.get(&id)
    }

    /// Caches `schema` as `id`'s, evicting the oldest entry when full.
    pub(crate) fn insert(&self, id: SchemaId, schema: JsonSchema) {
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
        let id = SchemaId::Id;
        cache.insert(id(1), schema.clone());
        cache.insert(id(2), schema.clone());
        cache.insert(id(2), schema.clone());
        assert_eq!(cache.len(), 2);
        cache.insert(id(3), schema);
        assert_eq!(cache.len(), 2);
        assert!(cache.get(id(1)).is_none());
        assert!(cache.get(id(2)).is_some() && cache.get(id(3)).is_some());
    }
}
