//! The parsed schemas a format's serializer or deserializer keeps, by the
//! registry id or GUID they are registered as.

use crate::error::SerdeError;
use crate::registry::{SchemaRegistryClient, SharedBounded};
use crate::schema::ResolvedSchema;
use crate::wire::SchemaId;

/// How many parsed schemas a serializer or deserializer keeps (Confluent's
/// clients keep 1000 per cache).
pub(crate) const PARSED_SCHEMAS: usize = 1000;

/// Parsed schemas (`T`: an `Arc` or a cheap handle) by id or GUID; the
/// oldest leaves when full. Ids and GUIDs name immutable schemas, so a
/// dropped entry costs only a re-parse of a schema the registry client
/// still caches; two tasks that miss on the same id at once both parse it
/// (the second insert wins).
#[derive(Debug)]
pub(crate) struct ParsedSchemas<T>(SharedBounded<SchemaId, T>);

impl<T: Clone> ParsedSchemas<T> {
    /// An empty cache of at most `capacity` schemas (at least one).
    pub(crate) fn new(capacity: usize) -> Self {
        Self(SharedBounded::new(capacity))
    }

    /// The parsed form of `resolved`, registered as `id`: cached, or made by
    /// `parse` and kept.
    pub(crate) fn parse(
        &self,
        id: SchemaId,
        resolved: &ResolvedSchema,
        parse: impl FnOnce(&ResolvedSchema) -> Result<T, SerdeError>,
    ) -> Result<T, SerdeError> {
        if let Some(parsed) = self.0.get(&id) {
            return Ok(parsed);
        }
        let parsed = parse(resolved)?;
        self.0.insert(id, parsed.clone());
        Ok(parsed)
    }

    /// The parsed schema `id` names: cached, or fetched with its references
    /// from the registry, made by `parse` and kept.
    pub(crate) async fn fetch(
        &self,
        client: &SchemaRegistryClient,
        id: SchemaId,
        parse: impl FnOnce(&ResolvedSchema) -> Result<T, SerdeError>,
    ) -> Result<T, SerdeError> {
        if let Some(parsed) = self.0.get(&id) {
            return Ok(parsed);
        }
        let resolved = client.resolved(id).await?;
        let parsed = parse(&resolved)?;
        self.0.insert(id, parsed.clone());
        Ok(parsed)
    }

    /// How many schemas are kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }
}

/// A schema error about the registered schema `id`, naming it.
#[cfg(any(feature = "json", feature = "protobuf", test))]
pub(crate) fn naming(id: SchemaId) -> impl FnOnce(SerdeError) -> SerdeError {
    move |e| match e {
        SerdeError::Schema { reason } => SerdeError::Schema {
            reason: format!("registered schema {id}: {reason}"),
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{Schema, SchemaType};
    use std::sync::Arc;

    fn resolved(text: &str) -> ResolvedSchema {
        ResolvedSchema {
            schema: Schema {
                schema_type: SchemaType::Avro,
                schema: text.into(),
                references: vec![],
            },
            references: vec![],
        }
    }

    /// A schema is parsed once per id, at most `capacity` are kept (the
    /// oldest id leaves), and a failed parse keeps nothing.
    #[test]
    fn schemas_are_parsed_once_per_id_and_bounded() {
        let cache: ParsedSchemas<Arc<String>> = ParsedSchemas::new(2);
        let text = |r: &ResolvedSchema| Ok(Arc::new(r.schema.schema.clone()));
        let first = cache.parse(SchemaId::Id(1), &resolved("a"), text).unwrap();
        let again = cache
            .parse(SchemaId::Id(1), &resolved("a"), |_| panic!("parsed twice"))
            .unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        cache
            .parse(SchemaId::Guid([7; 16]), &resolved("b"), text)
            .unwrap();
        cache.parse(SchemaId::Id(3), &resolved("c"), text).unwrap();
        assert_eq!(cache.len(), 2);
        let reparsed = cache.parse(SchemaId::Id(1), &resolved("a"), text).unwrap();
        assert!(!Arc::ptr_eq(&first, &reparsed), "the oldest id was dropped");
        let failed = cache.parse(SchemaId::Id(4), &resolved("d"), |_| {
            Err(SerdeError::Schema {
                reason: "bad".into(),
            })
        });
        let e = failed.map_err(naming(SchemaId::Id(4))).unwrap_err();
        assert_eq!(
            e.to_string(),
            SerdeError::Schema {
                reason: "registered schema id 4: bad".into()
            }
            .to_string()
        );
        assert_eq!(cache.len(), 2);
    }
}
