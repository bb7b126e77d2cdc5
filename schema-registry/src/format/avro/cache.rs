//! Parsed schemas by registry id or GUID, bounded.

use super::schema::AvroSchema;
use crate::error::SerdeError;
use crate::registry::SharedBounded;
use crate::schema::ResolvedSchema;
use crate::wire::SchemaId;
use std::sync::Arc;

/// How many parsed schemas a serializer or deserializer keeps (Confluent's
/// clients keep 1000 per cache).
const CAPACITY: usize = 1000;

/// Parsed schemas by id; the oldest leaves when full. Ids are immutable,
/// so a dropped entry costs only a re-parse of a schema the registry
/// client still has cached.
#[derive(Debug)]
pub(crate) struct SchemaCache {
    /// The parsed schemas by registry id or GUID.
    by_id: SharedBounded<SchemaId, Arc<AvroSchema>>,
}

impl Default for SchemaCache {
    fn default() -> Self {
        Self {
            by_id: SharedBounded::new(CAPACITY),
        }
    }
}

impl SchemaCache {
    /// The parsed schema of `id`, if cached.
    pub(crate) fn get(&self, id: SchemaId) -> Option<Arc<AvroSchema>> {
        self.by_id.get(&id)
    }

    /// Parses and caches `resolved` as `id`.
    pub(crate) fn insert(
        &self,
        id: SchemaId,
        resolved: &ResolvedSchema,
    ) -> Result<Arc<AvroSchema>, SerdeError> {
        let parsed = Arc::new(AvroSchema::from_resolved(resolved)?);
        self.by_id.insert(id, Arc::clone(&parsed));
        Ok(parsed)
    }
}
