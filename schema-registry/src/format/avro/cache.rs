//! Parsed schemas by registry id, bounded.

use super::schema::AvroSchema;
use crate::error::SerdeError;
use crate::schema::ResolvedSchema;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// How many parsed schemas a serializer or deserializer keeps (Confluent's
/// clients keep 1000 per cache).
const CAPACITY: usize = 1000;

/// Parsed schemas by id. Full, it starts over: ids are immutable, so a
/// dropped entry costs only a re-parse of a schema the registry client
/// still has cached.
#[derive(Debug, Default)]
pub(crate) struct SchemaCache {
    /// The parsed schemas by registry id.
    by_id: Mutex<HashMap<i32, Arc<AvroSchema>>>,
}

impl SchemaCache {
    /// The parsed schema of `id`, if cached.
    pub(crate) fn get(&self, id: i32) -> Option<Arc<AvroSchema>> {
        self.lock().get(&id).cloned()
    }

    /// Parses and caches `resolved` as `id`.
    pub(crate) fn insert(
        &self,
        id: i32,
        resolved: &ResolvedSchema,
    ) -> Result<Arc<AvroSchema>, SerdeError> {
        let parsed = Arc::new(AvroSchema::from_resolved(resolved)?);
        let mut map = self.lock();
        if map.len() >= CAPACITY {
            map.clear();
        }
        map.insert(id, Arc::clone(&parsed));
        Ok(parsed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<i32, Arc<AvroSchema>>> {
        // A panic while holding the lock cannot leave the map half-written.
        self.by_id.lock().unwrap_or_else(|p| p.into_inner())
    }
}
