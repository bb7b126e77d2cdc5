//! The Avro serializer: Confluent's `KafkaAvroSerializer`.

use super::codec;
use super::schema::AvroSchema;
use crate::context::SerializationContext;
use crate::error::SerdeError;
use crate::format::{PARSED_SCHEMAS, ParsedSchemas};
use crate::record_serde::RecordSerializer;
use crate::registry::SchemaRegistryClient;
use crate::selector::{SchemaIdSelector, SerializerConfig};
use crate::wire::{self, SchemaId};
use apache_avro::types::Value;
use bytes::Bytes;
use kafka_client::Properties;
use serde::Serialize;
use std::marker::PhantomData;
use std::sync::Arc;

/// Marks a serde type for [`AvroSerializer`] and
/// [`AvroDeserializer`](super::AvroDeserializer): `AvroSerializer<Typed<Order>>`
/// serializes `Order` with its `Serialize` implementation.
pub struct Typed<T: ?Sized>(PhantomData<fn(&T)>);

impl<T: ?Sized> std::fmt::Debug for Typed<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Typed<{}>", std::any::type_name::<T>())
    }
}

/// Serializes values as Avro in Confluent's wire format: `00`, the schema
/// id, the Avro binary datum.
///
/// `AvroSerializer` (generic records, [`apache_avro::types::Value`]) or
/// `AvroSerializer<Typed<T>>` (any `T: Serialize`). The schema id comes
/// from [`SchemaIdSelector`] (`auto.register.schemas`, `use.schema.id`,
/// `use.latest.version`, look-up); with a fixed id or the latest version,
/// the value is encoded with that registered schema, as Confluent does.
pub struct AvroSerializer<T: ?Sized = Value> {
    /// Picks (and caches) the id for the schema.
    selector: SchemaIdSelector,
    /// The application's writer schema.
    schema: Arc<AvroSchema>,
    /// Registered schemas chosen instead of `schema`, parsed, by id.
    registered: ParsedSchemas<Arc<AvroSchema>>,
    /// The value type.
    _value: PhantomData<fn(&T)>,
}

impl<T: ?Sized> std::fmt::Debug for AvroSerializer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AvroSerializer")
            .field("schema", &self.schema.local().schema)
            .finish_non_exhaustive()
    }
}

impl<T: ?Sized> AvroSerializer<T> {
    /// A serializer of values of `schema`, through `client`, with `config`.
    ///
    /// ```no_run
    /// use kafka_client::Properties;
    /// use kafka_schema_registry::{AvroSchema, AvroSerializer, SchemaRegistryClient, SerializerConfig};
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let mut props = Properties::new([("schema.registry.url", "http://127.0.0.1:8081")]);
    /// let client = SchemaRegistryClient::from_properties(&mut props)?;
    /// let config = SerializerConfig::from_properties(&mut props)?;
    /// let schema = AvroSchema::parse(r#"{"type":"record","name":"Ping","fields":[{"name":"n","type":"long"}]}"#)?;
    /// let serializer: AvroSerializer = AvroSerializer::new(client, config, schema);
    /// # Ok(()) }
    /// ```
    pub fn new(client: SchemaRegistryClient, config: SerializerConfig, schema: AvroSchema) -> Self {
        Self::with_selector(SchemaIdSelector::new(client, config), schema)
    }

    /// A serializer of values of `schema` sharing `selector` (its client and
    /// settings).
    pub fn with_selector(selector: SchemaIdSelector, schema: AvroSchema) -> Self {
        Self {
            selector,
            schema: Arc::new(schema),
            registered: ParsedSchemas::new(PARSED_SCHEMAS),
            _value: PhantomData,
        }
    }

    /// A serializer configured from `props`: `schema.registry.url` and the
    /// other client keys, then the serializer keys (`auto.register.schemas`,
    /// `use.latest.version`, the subject name strategies, ...).
    ///
    /// ```no_run
    /// use kafka_client::Properties;
    /// use kafka_schema_registry::{AvroSchema, AvroSerializer, Typed};
    ///
    /// #[derive(serde::Serialize)]
    /// struct Ping { n: i64 }
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let mut props = Properties::new([
    ///     ("schema.registry.url", "http://127.0.0.1:8081"),
    ///     ("auto.register.schemas", "false"),
    /// ]);
    /// let schema = AvroSchema::parse(r#"{"type":"record","name":"Ping","fields":[{"name":"n","type":"long"}]}"#)?;
    /// let serializer = AvroSerializer::<Typed<Ping>>::from_properties(&mut props, schema)?;
    /// # Ok(()) }
    /// ```
    pub fn from_properties(props: &mut Properties, schema: AvroSchema) -> Result<Self, SerdeError> {
        let client = SchemaRegistryClient::from_properties(props)?;
        let config = SerializerConfig::from_properties(props)?;
        Ok(Self::new(client, config, schema))
    }

    /// The application's writer schema.
    pub fn schema(&self) -> &AvroSchema {
        &self.schema
    }

    /// The id to write and the schema to encode with.
    async fn choose(
        &self,
        ctx: &SerializationContext<'_>,
    ) -> Result<(i32, Arc<AvroSchema>), SerdeError> {
        let selected = self
            .selector
            .select(ctx, self.schema.local(), self.schema.full_name())
            .await?;
        let schema = match selected.schema {
            None => Arc::clone(&self.schema),
            Some(registered) => {
                self.registered
                    .parse(SchemaId::Id(selected.id), &registered, |r| {
                        AvroSchema::from_resolved(r).map(Arc::new)
                    })?
            }
        };
        Ok((selected.id, schema))
    }
}

impl RecordSerializer<Value> for AvroSerializer<Value> {
    async fn serialize(
        &self,
        ctx: &SerializationContext<'_>,
        value: &Value,
    ) -> Result<Bytes, SerdeError> {
        let (id, schema) = self.choose(ctx).await?;
        let mut out = Vec::with_capacity(64);
        wire::write_prefix(id, &mut out);
        codec::encode_value(schema.schema(), value, &mut out)?;
        Ok(Bytes::from(out))
    }
}

impl<T: Serialize + Sync + ?Sized> RecordSerializer<T> for AvroSerializer<Typed<T>> {
    async fn serialize(
        &self,
        ctx: &SerializationContext<'_>,
        value: &T,
    ) -> Result<Bytes, SerdeError> {
        let (id, schema) = self.choose(ctx).await?;
        let mut out = Vec::with_capacity(64);
        wire::write_prefix(id, &mut out);
        codec::encode_serde(schema.schema(), value, &mut out)?;
        Ok(Bytes::from(out))
    }
}
