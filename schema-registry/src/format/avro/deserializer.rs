//! The Avro deserializer: Confluent's `KafkaAvroDeserializer`.

use super::codec;
use super::schema::AvroSchema;
use super::serializer::Typed;
use crate::context::SerializationContext;
use crate::error::SerdeError;
use crate::format::{PARSED_SCHEMAS, ParsedSchemas};
use crate::record_serde::RecordDeserializer;
use crate::registry::SchemaRegistryClient;
use crate::selector::{DeserializerConfig, SubjectNameStrategy};
use crate::wire::{self, SchemaId};
use apache_avro::types::Value;
use kafka_client::Properties;
use serde::de::DeserializeOwned;
use std::marker::PhantomData;
use std::sync::Arc;

/// The schema a deserializer resolves what it reads to (Avro schema
/// resolution: fields added with defaults, fields removed, promotions).
#[derive(Debug, Clone, Default)]
pub enum ReaderSchema {
    /// No resolution: values come out as written (unless the settings say
    /// `use.latest.version=true`: then as the latest version under the
    /// subject the value strategy names).
    #[default]
    Writer,
    /// The application's schema.
    Given(Arc<AvroSchema>),
    /// The latest version of the subject the strategy names
    /// (Confluent's `use.latest.version` on a deserializer).
    Latest(SubjectNameStrategy),
}

/// Deserializes Avro written in Confluent's wire format.
///
/// `AvroDeserializer` yields generic [`apache_avro::types::Value`]s;
/// `AvroDeserializer<Typed<T>>` yields any `T: DeserializeOwned`. The
/// writer schema is fetched by the id in the frame (the schema-id header
/// first, then the prefix) and parsed once per id.
pub struct AvroDeserializer<T = Value> {
    /// Fetches writer (and latest) schemas by id.
    client: SchemaRegistryClient,
    /// The deserializer settings.
    config: DeserializerConfig,
    /// What values are resolved to.
    reader: ReaderSchema,
    /// Parsed writer and latest schemas by id.
    parsed: ParsedSchemas<Arc<AvroSchema>>,
    /// The value type.
    _value: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for AvroDeserializer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AvroDeserializer")
            .field("reader", &self.reader)
            .finish_non_exhaustive()
    }
}

impl<T> AvroDeserializer<T> {
    /// A deserializer through `client`, with `config`, resolving to
    /// `reader`.
    ///
    /// Sets apache-avro's process-wide allocation limit to
    /// [`MAX_ALLOCATION_BYTES`](super::MAX_ALLOCATION_BYTES) unless the
    /// application set it before (`apache_avro::util::max_allocation_bytes`).
    ///
    /// ```no_run
    /// use kafka_client::Properties;
    /// use kafka_schema_registry::{AvroDeserializer, DeserializerConfig, ReaderSchema, SchemaRegistryClient};
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let mut props = Properties::new([("schema.registry.url", "http://127.0.0.1:8081")]);
    /// let client = SchemaRegistryClient::from_properties(&mut props)?;
    /// let config = DeserializerConfig::from_properties(&mut props)?;
    /// let deserializer: AvroDeserializer = AvroDeserializer::new(client, config, ReaderSchema::Writer);
    /// # Ok(()) }
    /// ```
    pub fn new(
        client: SchemaRegistryClient,
        config: DeserializerConfig,
        reader: ReaderSchema,
    ) -> Self {
        codec::limit_allocations();
        Self {
            client,
            config,
            reader,
            parsed: ParsedSchemas::new(PARSED_SCHEMAS),
            _value: PhantomData,
        }
    }

    /// A deserializer configured from `props` (`schema.registry.url`, the
    /// other client keys, the deserializer keys), resolving to `reader`.
    ///
    /// ```no_run
    /// use kafka_client::Properties;
    /// use kafka_schema_registry::{AvroDeserializer, ReaderSchema, Typed};
    ///
    /// #[derive(serde::Deserialize)]
    /// struct Ping { n: i64 }
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let mut props = Properties::new([("schema.registry.url", "http://127.0.0.1:8081")]);
    /// let deserializer = AvroDeserializer::<Typed<Ping>>::from_properties(&mut props, ReaderSchema::Writer)?;
    /// # Ok(()) }
    /// ```
    pub fn from_properties(
        props: &mut Properties,
        reader: ReaderSchema,
    ) -> Result<Self, SerdeError> {
        let client = SchemaRegistryClient::from_properties(props)?;
        let config = DeserializerConfig::from_properties(props)?;
        Ok(Self::new(client, config, reader))
    }

    /// The settings.
    pub fn config(&self) -> &DeserializerConfig {
        &self.config
    }

    /// The writer schema, the reader schema (if any) and the payload of
    /// `bytes`, and the label decode errors name the schema by.
    async fn schemas<'b>(
        &self,
        ctx: &SerializationContext<'_>,
        bytes: &'b [u8],
    ) -> Result<(Arc<AvroSchema>, Option<Arc<AvroSchema>>, &'b [u8], String), SerdeError> {
        let frame = wire::read_frame(bytes, ctx.schema_id_header(), false)?;
        let id = frame.id;
        let writer = self.parsed(id).await?;
        // `use.latest.version` on the deserializer's settings asks for the
        // latest version even when the application gave no reader schema.
        let latest = match &self.reader {
            ReaderSchema::Latest(strategy) => Some(*strategy),
            ReaderSchema::Writer if self.config.use_latest_version => {
                Some(self.config.subject_name_strategy(ctx.field))
            }
            _ => None,
        };
        let reader = match (&self.reader, latest) {
            (_, Some(strategy)) => {
                let subject = strategy.subject(ctx, writer.full_name())?;
                let latest = self
                    .client
                    .latest_version(&subject)
                    .await
                    .map_err(SerdeError::from)?;
                let latest_id = SchemaId::Id(latest.id);
                if latest_id == id {
                    None
                } else {
                    Some(self.parsed(latest_id).await?)
                }
            }
            (ReaderSchema::Given(schema), None) => Some(Arc::clone(schema)),
            _ => None,
        };
        Ok((writer, reader, frame.payload, id.to_string()))
    }

    /// The parsed schema a frame names by id or GUID (cached).
    async fn parsed(&self, id: SchemaId) -> Result<Arc<AvroSchema>, SerdeError> {
        self.parsed
            .fetch(&self.client, id, |r| {
                AvroSchema::from_resolved(r).map(Arc::new)
            })
            .await
    }
}

impl RecordDeserializer for AvroDeserializer<Value> {
    type Value = Value;

    async fn deserialize(
        &self,
        ctx: &SerializationContext<'_>,
        bytes: &[u8],
    ) -> Result<Value, SerdeError> {
        let (writer, reader, payload, label) = self.schemas(ctx, bytes).await?;
        codec::decode_value(
            writer.schema(),
            reader.as_deref().map(AvroSchema::schema),
            payload,
            &label,
        )
    }
}

impl<T: DeserializeOwned + Send> RecordDeserializer for AvroDeserializer<Typed<T>> {
    type Value = T;

    async fn deserialize(
        &self,
        ctx: &SerializationContext<'_>,
        bytes: &[u8],
    ) -> Result<T, SerdeError> {
        let (writer, reader, payload, label) = self.schemas(ctx, bytes).await?;
        codec::decode_serde(
            writer.schema(),
            reader.as_deref().map(AvroSchema::schema),
            payload,
            &label,
        )
    }
}
