//! Values to Confluent JSON Schema frames.

use super::FAIL_INVALID_SCHEMA;
use super::compact::write_jackson_compact;
use super::schema::JsonSchema;
use crate::context::SerializationContext;
use crate::error::SerdeError;
use crate::format::{PARSED_SCHEMAS, ParsedSchemas};
use crate::record_serde::RecordSerializer;
use crate::registry::SchemaRegistryClient;
use crate::schema::ResolvedSchema;
use crate::selector::{SchemaIdSelector, SerializerConfig};
use crate::wire::{self, SchemaId};
use bytes::Bytes;
use kafka_client::Properties;
use serde::Serialize;
use std::sync::Arc;

/// Serializes values with a JSON Schema as Confluent's
/// `KafkaJsonSchemaSerializer` does: the schema id is chosen (registered,
/// looked up, or the latest version, per the [`SchemaIdSelector`]'s
/// settings), the value is checked against the schema when
/// `json.fail.invalid.schema=true`, then the frame is `00`, the id
/// (4 bytes, big-endian) and the value as Jackson's compact JSON (see the
/// crate's JSON notes for the exact spelling).
///
/// It serializes any `serde::Serialize` value, `serde_json::Value`
/// included.
#[derive(Debug)]
pub struct JsonSerializer {
    /// Picks the id (and, with `use.latest.version` or `use.schema.id`,
    /// the registered schema to validate against).
    selector: SchemaIdSelector,
    /// The application's schema.
    schema: JsonSchema,
    /// `json.fail.invalid.schema`: refuse a value the schema rejects.
    validate: bool,
    /// Registered schemas chosen by the selector, compiled, by id.
    selected: ParsedSchemas<JsonSchema>,
}

impl JsonSerializer {
    /// A serializer of values of `schema`, choosing ids with `selector`;
    /// validation off (Confluent's default).
    ///
    /// ```no_run
    /// use kafka_client::Properties;
    /// use kafka_schema_registry::{
    ///     JsonSchema, JsonSerializer, RecordSerializer, SchemaIdSelector, SchemaRegistryClient,
    ///     SerializationContext, SerializerConfig,
    /// };
    ///
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let mut props = Properties::new([("schema.registry.url", "http://localhost:8081")]);
    /// let client = SchemaRegistryClient::from_properties(&mut props)?;
    /// let selector = SchemaIdSelector::new(client, SerializerConfig::from_properties(&mut props)?);
    /// let schema = JsonSchema::new(r#"{"title": "Order", "type": "object"}"#)?;
    /// let serializer = JsonSerializer::new(selector, schema).with_validation(true);
    ///
    /// let bytes = serializer
    ///     .serialize(&SerializationContext::value("orders"), &serde_json::json!({"id": 7}))
    ///     .await?;
    /// assert_eq!(bytes[0], 0); // then the id, then {"id":7}
    /// # Ok(()) }
    /// ```
    pub fn new(selector: SchemaIdSelector, schema: JsonSchema) -> Self {
        Self {
            selector,
            schema,
            validate: false,
            selected: ParsedSchemas::new(PARSED_SCHEMAS),
        }
    }

    /// A serializer configured from `props`: the registry client's keys
    /// (`schema.registry.url`, ...), the serializer's
    /// (`auto.register.schemas`, `use.latest.version`, the subject name
    /// strategies, ...) and `json.fail.invalid.schema` (default `false`).
    /// The keys read are marked read; the caller's `Properties::finish`
    /// reports the others.
    ///
    /// ```no_run
    /// use kafka_client::Properties;
    /// use kafka_schema_registry::{JsonSchema, JsonSerializer};
    ///
    /// # fn run() -> Result<(), kafka_schema_registry::SerdeError> {
    /// let mut props = Properties::new([
    ///     ("schema.registry.url", "http://localhost:8081"),
    ///     ("json.fail.invalid.schema", "true"),
    /// ]);
    /// let schema = JsonSchema::new(r#"{"title": "Order", "type": "object"}"#)?;
    /// let serializer = JsonSerializer::from_properties(&mut props, schema)?;
    /// props.finish()?;
    /// # Ok(()) }
    /// ```
    pub fn from_properties(props: &mut Properties, schema: JsonSchema) -> Result<Self, SerdeError> {
        let validate = props.bool(FAIL_INVALID_SCHEMA)?.unwrap_or(false);
        let client = SchemaRegistryClient::from_properties(props)?;
        let config = SerializerConfig::from_properties(props)?;
        Ok(Self::new(SchemaIdSelector::new(client, config), schema).with_validation(validate))
    }

    /// Turns validation on or off (`json.fail.invalid.schema`).
    pub fn with_validation(mut self, validate: bool) -> Self {
        self.validate = validate;
        self
    }

    /// The application's schema.
    pub fn schema(&self) -> &JsonSchema {
        &self.schema
    }

    /// The schema to validate against: the local one, or the registered
    /// one the selector chose (compiled once per id).
    fn validating_schema(
        &self,
        id: i32,
        chosen: Option<&Arc<ResolvedSchema>>,
    ) -> Result<JsonSchema, SerdeError> {
        let Some(resolved) = chosen else {
            return Ok(self.schema.clone());
        };
        self.selected
            .parse(SchemaId::Id(id), resolved, JsonSchema::from_resolved)
    }
}

impl<T: Serialize + ?Sized + Sync> RecordSerializer<T> for JsonSerializer {
    async fn serialize(
        &self,
        ctx: &SerializationContext<'_>,
        value: &T,
    ) -> Result<Bytes, SerdeError> {
        let selected = self
            .selector
            .select(ctx, self.schema.local(), self.schema.title())
            .await?;
        if self.validate {
            let schema = self.validating_schema(selected.id, selected.schema.as_ref())?;
            let document = serde_json::to_value(value).map_err(|e| SerdeError::Encode {
                reason: format!("not representable as JSON: {e}"),
            })?;
            schema.validate(&document)?;
        }
        encode(selected.id, value)
    }
}

/// The frame: `00`, `id` big-endian, then `value` as Jackson's compact
/// JSON.
pub(crate) fn encode<T: Serialize + ?Sized>(id: i32, value: &T) -> Result<Bytes, SerdeError> {
    let mut out = Vec::with_capacity(64);
    wire::write_prefix(id, &mut out);
    write_jackson_compact(value, &mut out).map_err(|e| SerdeError::Encode {
        reason: format!("not representable as JSON: {e}"),
    })?;
    Ok(Bytes::from(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// The frame is the prefix and the compact document, nothing else.
    #[test]
    fn frame_is_prefix_then_document() {
        let bytes = encode(0x0102_0304, &serde_json::json!({"a": 1})).unwrap();
        assert_eq!(&bytes[..], b"\x00\x01\x02\x03\x04{\"a\":1}");
    }

    /// A value JSON cannot hold (a map with non-string keys) is a typed
    /// Encode error.
    #[test]
    fn unrepresentable_value_is_encode_error() {
        let mut m = BTreeMap::new();
        m.insert(vec![1u8], 1);
        assert!(matches!(encode(1, &m), Err(SerdeError::Encode { .. })));
    }
}
