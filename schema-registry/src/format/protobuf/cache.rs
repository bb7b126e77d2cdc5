//! Parsed schemas by registry id or GUID, bounded.

use super::schema::ProtobufSchema;
use crate::error::SerdeError;
use crate::registry::{SchemaRegistryClient, SharedBounded};
use crate::schema::ResolvedSchema;
use crate::wire::SchemaId;
use std::sync::Arc;

/// How many parsed schemas a serializer or deserializer keeps, as
/// Confluent's client keeps 1000 schemas per cache.
pub(crate) const DEFAULT_CAPACITY: usize = 1000;

/// Parsed schemas by id; the oldest entry leaves when full. Two tasks that
/// miss on the same id at once both parse it; the second insert wins.
#[derive(Debug)]
pub(crate) struct SchemaCache(SharedBounded<SchemaId, Arc<ProtobufSchema>>);

impl SchemaCache {
    pub(crate) fn new(capacity: usize) -> Self {
        Self(SharedBounded::new(capacity))
    }

    fn get(&self, id: SchemaId) -> Option<Arc<ProtobufSchema>> {
        self.0.get(&id)
    }

    fn insert(&self, id: SchemaId, schema: Arc<ProtobufSchema>) {
        self.0.insert(id, schema);
    }

    /// The parsed schema of a resolved one the caller already has.
    pub(crate) fn parse(
        &self,
        id: SchemaId,
        resolved: &ResolvedSchema,
    ) -> Result<Arc<ProtobufSchema>, SerdeError> {
        if let Some(schema) = self.get(id) {
            return Ok(schema);
        }
        let schema = Arc::new(parse_registered(id, resolved)?);
        self.insert(id, schema.clone());
        Ok(schema)
    }

    /// The parsed schema with this id or GUID, fetched with its references
    /// when not cached.
    pub(crate) async fn fetch(
        &self,
        client: &SchemaRegistryClient,
        id: SchemaId,
    ) -> Result<Arc<ProtobufSchema>, SerdeError> {
        if let Some(schema) = self.get(id) {
            return Ok(schema);
        }
        let resolved = client.resolved(id).await?;
        let schema = Arc::new(parse_registered(id, &resolved)?);
        self.insert(id, schema.clone());
        Ok(schema)
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }
}

/// Parses a registered schema, naming its id or GUID in the error.
fn parse_registered(id: SchemaId, resolved: &ResolvedSchema) -> Result<ProtobufSchema, SerdeError> {
    ProtobufSchema::from_resolved(resolved).map_err(|e| match e {
        SerdeError::Schema { reason } => SerdeError::Schema {
            reason: format!("registered schema {id}: {reason}"),
        },
        other => other,
    })
}
