//! The Protobuf serializer and deserializers: Confluent's framing around
//! Protobuf payloads.

use super::schema::{DecodeFailure, ProtobufSchema};
use crate::context::SerializationContext;
use crate::error::SerdeError;
use crate::format::{PARSED_SCHEMAS, ParsedSchemas, naming};
use crate::record_serde::{RecordDeserializer, RecordSerializer};
use crate::registry::SchemaRegistryClient;
use crate::schema::LocalSchema;
use crate::schema::ResolvedSchema;
use crate::selector::{DeserializerConfig, SchemaIdSelector, SerializerConfig};
use crate::wire::{self, SchemaId};
use bytes::Bytes;
use kafka_client::{ConfigError, Properties};
use prost_reflect::{DynamicMessage, MessageDescriptor, ReflectMessage};
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

/// Confluent's `skip.known.types`: leave the well-known files out of the
/// references a serializer registers.
const SKIP_KNOWN_TYPES: &str = "skip.known.types";

/// Serializes Protobuf messages with Confluent's framing: magic byte, schema
/// id, message indexes, payload; byte-identical with Confluent's
/// `KafkaProtobufSerializer`.
///
/// `T` is a prost-generated message type (with `prost_reflect`'s
/// `ReflectMessage`) or [`DynamicMessage`]. The schema registered is the
/// message's own file with its imports as references under their import
/// paths, or the schema given to [`with_schema`](Self::with_schema).
///
/// ```no_run
/// use kafka_client::Properties;
/// use kafka_schema_registry::{ProtobufSchema, ProtobufSerializer, RecordSerializer, SerializationContext};
/// use prost_reflect::DynamicMessage;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let schema = ProtobufSchema::from_proto(r#"syntax = "proto3"; message Ping { int64 at = 1; }"#, &[])?;
/// let mut props = Properties::new([("schema.registry.url", "http://127.0.0.1:8081")]);
/// let serializer = ProtobufSerializer::from_properties(&mut props)?.with_schema(schema.clone());
/// let ping = DynamicMessage::new(schema.message("Ping").unwrap());
/// let bytes = serializer.serialize(&SerializationContext::value("pings"), &ping).await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct ProtobufSerializer<T: ?Sized = DynamicMessage> {
    /// Picks the id each value is written with.
    selector: SchemaIdSelector,
    /// Confluent's `skip.known.types`.
    skip_known_types: bool,
    /// The schema values must belong to, when one was given.
    schema: Option<Arc<Prepared>>,
    /// The schemas of the files values came from, when none was given.
    by_file: Mutex<Vec<Arc<Prepared>>>,
    /// Registered schemas a selector chose instead of the local one
    /// (`use.latest.version`, `use.schema.id`), parsed, by id.
    registered: ParsedSchemas<Arc<ProtobufSchema>>,
    /// The value type.
    _value: PhantomData<fn(&T)>,
}

/// A schema ready to register: parsed, and in its registered form.
#[derive(Debug)]
struct Prepared {
    /// The parsed schema.
    schema: ProtobufSchema,
    /// What the selector registers or looks up.
    local: LocalSchema,
}

impl Prepared {
    fn new(schema: ProtobufSchema, skip_known_types: bool) -> Self {
        let local = schema.local_schema(skip_known_types);
        Self { schema, local }
    }

    /// Whether this schema's root file is `message`'s file.
    fn holds(&self, message: &MessageDescriptor) -> bool {
        message.parent_pool() == self.schema.pool()
            && message.parent_file().name() == self.schema.root_file().name()
    }
}

impl<T: ?Sized> ProtobufSerializer<T> {
    /// A serializer that registers each value's own file (and its imports)
    /// through `selector`.
    ///
    /// ```no_run
    /// use kafka_client::Properties;
    /// use kafka_schema_registry::{ProtobufSerializer, SchemaIdSelector, SchemaRegistryClient, SerializerConfig};
    /// use prost_reflect::DynamicMessage;
    ///
    /// let mut props = Properties::new([("schema.registry.url", "http://127.0.0.1:8081")]);
    /// let client = SchemaRegistryClient::from_properties(&mut props)?;
    /// let selector = SchemaIdSelector::new(client, SerializerConfig::from_properties(&mut props)?);
    /// let serializer: ProtobufSerializer<DynamicMessage> = ProtobufSerializer::new(selector);
    /// # Ok::<(), kafka_client::ConfigError>(())
    /// ```
    pub fn new(selector: SchemaIdSelector) -> Self {
        Self {
            selector,
            skip_known_types: true,
            schema: None,
            by_file: Mutex::default(),
            registered: ParsedSchemas::new(PARSED_SCHEMAS),
            _value: PhantomData,
        }
    }

    /// A serializer with the registry client, the serializer settings and
    /// `skip.known.types` taken from `props`.
    ///
    /// ```no_run
    /// use kafka_client::Properties;
    /// use kafka_schema_registry::ProtobufSerializer;
    /// use prost_reflect::DynamicMessage;
    ///
    /// let mut props = Properties::new([
    ///     ("schema.registry.url", "http://127.0.0.1:8081"),
    ///     ("skip.known.types", "false"),
    /// ]);
    /// let serializer: ProtobufSerializer<DynamicMessage> = ProtobufSerializer::from_properties(&mut props)?;
    /// # Ok::<(), kafka_client::ConfigError>(())
    /// ```
    pub fn from_properties(props: &mut Properties) -> Result<Self, ConfigError> {
        let skip_known_types = props.bool(SKIP_KNOWN_TYPES)?.unwrap_or(true);
        let client = SchemaRegistryClient::from_properties(props)?;
        let config = SerializerConfig::from_properties(props)?;
        Ok(
            Self::new(SchemaIdSelector::new(client, config))
                .with_skip_known_types(skip_known_types),
        )
    }

    /// Registers `schema` (as given: `.proto` text stays text) and accepts
    /// only messages of its root file.
    pub fn with_schema(mut self, schema: ProtobufSchema) -> Self {
        self.schema = Some(Arc::new(Prepared::new(schema, self.skip_known_types)));
        self
    }

    /// Confluent's `skip.known.types` (default true): whether the
    /// well-known imports stay out of the registered references.
    pub fn with_skip_known_types(mut self, skip: bool) -> Self {
        self.skip_known_types = skip;
        if let Some(prepared) = self.schema.take() {
            let schema = prepared.schema.clone();
            self.schema = Some(Arc::new(Prepared::new(schema, skip)));
        }
        self.by_file
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        self
    }

    /// The schema of the file `message` belongs to.
    fn prepared(&self, message: &MessageDescriptor) -> Result<Arc<Prepared>, SerdeError> {
        if let Some(prepared) = &self.schema {
            if prepared.holds(message) {
                return Ok(prepared.clone());
            }
            return Err(SerdeError::Encode {
                reason: format!(
                    "{} is not a message of the serializer's schema (file {:?})",
                    message.full_name(),
                    prepared.schema.root_file().name()
                ),
            });
        }
        let mut by_file = self.by_file.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(prepared) = by_file.iter().find(|p| p.holds(message)) {
            return Ok(prepared.clone());
        }
        let prepared = Arc::new(Prepared::new(
            ProtobufSchema::from_file(message.parent_file()),
            self.skip_known_types,
        ));
        by_file.push(prepared.clone());
        Ok(prepared)
    }
}

impl<T> RecordSerializer<T> for ProtobufSerializer<T>
where
    T: ReflectMessage + Sync,
{
    async fn serialize(
        &self,
        ctx: &SerializationContext<'_>,
        value: &T,
    ) -> Result<Bytes, SerdeError> {
        let message = value.descriptor();
        let prepared = self.prepared(&message)?;
        let selected = self
            .selector
            .select(ctx, &prepared.local, Some(message.full_name()))
            .await?;
        let indexes = match &selected.schema {
            None => prepared
                .schema
                .message_indexes(message.full_name())
                .ok_or_else(|| SerdeError::Encode {
                    reason: format!("{} is not in its own schema", message.full_name()),
                })?,
            Some(resolved) => {
                let id = SchemaId::Id(selected.id);
                let registered = self
                    .registered
                    .parse(id, resolved, |r| parse_registered(id, r))?;
                registered_indexes(&registered, selected.id, &message)?
            }
        };
        Ok(frame(selected.id, &indexes, value))
    }
}

/// The indexes of `message` in a registered schema a selector chose: the
/// message must be declared there under the same full name (Confluent's
/// Java serializer computes them the same way from the chosen schema).
fn registered_indexes(
    registered: &ProtobufSchema,
    id: i32,
    message: &MessageDescriptor,
) -> Result<Vec<i32>, SerdeError> {
    registered
        .message_indexes(message.full_name())
        .ok_or_else(|| SerdeError::Encode {
            reason: format!(
                "the registered schema id {id} declares no message {} in its file",
                message.full_name()
            ),
        })
}

/// A framed value: magic byte, id, message indexes, then the payload.
pub(crate) fn frame<M: prost::Message>(id: i32, indexes: &[i32], message: &M) -> Bytes {
    let mut out = Vec::with_capacity(5 + 1 + indexes.len() * 2 + message.encoded_len());
    wire::write_prefix(id, &mut out);
    wire::write_message_indexes(indexes, &mut out);
    message.encode_raw(&mut out);
    Bytes::from(out)
}

/// Deserializes Confluent-framed Protobuf values into [`DynamicMessage`]s,
/// with the writer's schema fetched by id (and its references) and cached.
///
/// ```no_run
/// use kafka_client::Properties;
/// use kafka_schema_registry::{ProtobufDeserializer, RecordDeserializer, SerializationContext};
/// use prost_reflect::ReflectMessage;
///
/// # async fn run(bytes: &[u8]) -> Result<(), Box<dyn std::error::Error>> {
/// let mut props = Properties::new([("schema.registry.url", "http://127.0.0.1:8081")]);
/// let deserializer = ProtobufDeserializer::from_properties(&mut props)?;
/// let message = deserializer.deserialize(&SerializationContext::value("pings"), bytes).await?;
/// println!("{}: {message:?}", message.descriptor().full_name());
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct ProtobufDeserializer {
    /// Fetches writer schemas by id.
    client: SchemaRegistryClient,
    /// Parsed writer schemas by id.
    schemas: ParsedSchemas<Arc<ProtobufSchema>>,
}

impl ProtobufDeserializer {
    /// A deserializer fetching writer schemas through `client`.
    ///
    /// ```no_run
    /// use kafka_client::Properties;
    /// use kafka_schema_registry::{ProtobufDeserializer, SchemaRegistryClient};
    ///
    /// let mut props = Properties::new([("schema.registry.url", "http://127.0.0.1:8081")]);
    /// let deserializer = ProtobufDeserializer::new(SchemaRegistryClient::from_properties(&mut props)?);
    /// # Ok::<(), kafka_client::ConfigError>(())
    /// ```
    pub fn new(client: SchemaRegistryClient) -> Self {
        Self {
            client,
            schemas: ParsedSchemas::new(PARSED_SCHEMAS),
        }
    }

    /// A deserializer with the registry client and the deserializer
    /// settings taken from `props`.
    ///
    /// ```no_run
    /// use kafka_client::Properties;
    /// use kafka_schema_registry::ProtobufDeserializer;
    ///
    /// let mut props = Properties::new([("schema.registry.url", "http://127.0.0.1:8081")]);
    /// let deserializer = ProtobufDeserializer::from_properties(&mut props)?;
    /// # Ok::<(), kafka_client::ConfigError>(())
    /// ```
    pub fn from_properties(props: &mut Properties) -> Result<Self, ConfigError> {
        let client = SchemaRegistryClient::from_properties(props)?;
        // Taken so that the bag reports no unused key; the writer schema is
        // all a Protobuf reader needs.
        let _config = DeserializerConfig::from_properties(props)?;
        Ok(Self::new(client))
    }

    /// The writer's message and payload of a framed value.
    async fn decode(
        &self,
        ctx: &SerializationContext<'_>,
        bytes: &[u8],
    ) -> Result<DynamicMessage, SerdeError> {
        let frame = wire::read_frame(bytes, ctx.schema_id_header(), true)?;
        let id = frame.id;
        let schema = self
            .schemas
            .fetch(&self.client, id, |r| parse_registered(id, r))
            .await?;
        decode_with(
            &schema,
            id,
            frame.indexes.as_deref().unwrap_or(&[0]),
            frame.payload,
        )
    }
}

impl RecordDeserializer for ProtobufDeserializer {
    type Value = DynamicMessage;

    async fn deserialize(
        &self,
        ctx: &SerializationContext<'_>,
        bytes: &[u8],
    ) -> Result<DynamicMessage, SerdeError> {
        self.decode(ctx, bytes).await
    }
}

/// Parses a registered schema, naming its id or GUID in the error.
pub(crate) fn parse_registered(
    id: SchemaId,
    resolved: &ResolvedSchema,
) -> Result<Arc<ProtobufSchema>, SerdeError> {
    ProtobufSchema::from_resolved(resolved)
        .map(Arc::new)
        .map_err(naming(id))
}

/// Decodes a payload with the writer schema `id`, the message `indexes` name.
pub(crate) fn decode_with(
    schema: &ProtobufSchema,
    id: SchemaId,
    indexes: &[i32],
    payload: &[u8],
) -> Result<DynamicMessage, SerdeError> {
    schema
        .decode(indexes, payload)
        .map_err(|e: DecodeFailure| SerdeError::Decode {
            schema: id.to_string(),
            reason: e.to_string(),
        })
}

/// Deserializes Confluent-framed Protobuf values into a prost-generated
/// type `T`, after checking that the frame names `T`'s full name.
///
/// ```no_run
/// use kafka_client::Properties;
/// use kafka_schema_registry::TypedProtobufDeserializer;
/// use prost_reflect::prost_types::Timestamp;
///
/// let mut props = Properties::new([("schema.registry.url", "http://127.0.0.1:8081")]);
/// let deserializer: TypedProtobufDeserializer<Timestamp> = TypedProtobufDeserializer::from_properties(&mut props)?;
/// # Ok::<(), kafka_client::ConfigError>(())
/// ```
#[derive(Debug)]
pub struct TypedProtobufDeserializer<T> {
    /// Finds the writer's message type.
    inner: ProtobufDeserializer,
    /// `T`'s full name, which frames must name.
    full_name: String,
    /// The value type.
    _value: PhantomData<fn() -> T>,
}

impl<T: ReflectMessage + Default> TypedProtobufDeserializer<T> {
    /// A deserializer into `T` fetching writer schemas through `client`.
    ///
    /// ```no_run
    /// use kafka_client::Properties;
    /// use kafka_schema_registry::{SchemaRegistryClient, TypedProtobufDeserializer};
    /// use prost_reflect::prost_types::Duration;
    ///
    /// let mut props = Properties::new([("schema.registry.url", "http://127.0.0.1:8081")]);
    /// let client = SchemaRegistryClient::from_properties(&mut props)?;
    /// let deserializer = TypedProtobufDeserializer::<Duration>::new(client);
    /// # Ok::<(), kafka_client::ConfigError>(())
    /// ```
    pub fn new(client: SchemaRegistryClient) -> Self {
        Self {
            inner: ProtobufDeserializer::new(client),
            full_name: T::default().descriptor().full_name().to_owned(),
            _value: PhantomData,
        }
    }

    /// A deserializer into `T` with the registry client and the
    /// deserializer settings taken from `props`.
    ///
    /// ```no_run
    /// use kafka_client::Properties;
    /// use kafka_schema_registry::TypedProtobufDeserializer;
    /// use prost_reflect::prost_types::Duration;
    ///
    /// let mut props = Properties::new([("schema.registry.url", "http://127.0.0.1:8081")]);
    /// let deserializer = TypedProtobufDeserializer::<Duration>::from_properties(&mut props)?;
    /// # Ok::<(), kafka_client::ConfigError>(())
    /// ```
    pub fn from_properties(props: &mut Properties) -> Result<Self, ConfigError> {
        let inner = ProtobufDeserializer::from_properties(props)?;
        Ok(Self::new(inner.client))
    }
}

impl<T> RecordDeserializer for TypedProtobufDeserializer<T>
where
    T: ReflectMessage + Default + Send,
{
    type Value = T;

    async fn deserialize(
        &self,
        ctx: &SerializationContext<'_>,
        bytes: &[u8],
    ) -> Result<T, SerdeError> {
        let frame = wire::read_frame(bytes, ctx.schema_id_header(), true)?;
        let id = frame.id;
        let schema = self
            .inner
            .schemas
            .fetch(&self.inner.client, id, |r| parse_registered(id, r))
            .await?;
        decode_typed(
            &schema,
            id,
            frame.indexes.as_deref().unwrap_or(&[0]),
            frame.payload,
            &self.full_name,
        )
    }
}

/// Decodes a payload into `T` after checking that the writer's message
/// (named by `indexes` in `schema`) is `T`'s.
pub(crate) fn decode_typed<T: prost::Message + Default>(
    schema: &ProtobufSchema,
    id: SchemaId,
    indexes: &[i32],
    payload: &[u8],
    full_name: &str,
) -> Result<T, SerdeError> {
    let failed = |reason: String| SerdeError::Decode {
        schema: id.to_string(),
        reason,
    };
    let writer = schema
        .message_by_indexes(indexes)
        .map_err(|e| failed(e.to_string()))?;
    if writer.full_name() != full_name {
        return Err(failed(format!(
            "the record holds a {}, not a {full_name}",
            writer.full_name()
        )));
    }
    T::decode(payload).map_err(|e| failed(format!("malformed Protobuf payload: {e}")))
}
