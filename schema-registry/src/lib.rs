//! # kafka-schema-registry
//!
//! Confluent Schema Registry serdes for kafka-eos, byte-identical with
//! Confluent's own serializers:
//!
//! - [`wire`]: the wire format (magic byte, schema id or GUID, Protobuf
//!   message indexes), sans-IO;
//! - [`SchemaRegistryClient`]: Confluent's REST API with bounded caches,
//!   retries and URL failover, configured by [`RegistryConfig`] under
//!   Confluent's property names (basic, bearer and OAUTHBEARER
//!   credentials, `schema.registry.ssl.*`); its errors, by blame, are
//!   [`RegistryError`]s;
//! - [`SchemaIdSelector`]: which schema id a serializer writes
//!   (`auto.register.schemas`, `use.latest.version`, `use.schema.id`, the
//!   subject name strategies);
//! - [`RecordSerializer`] / [`RecordDeserializer`]: what the typed producer,
//!   consumer, sink and pipeline layers take;
//! - on kafka-eos's paths (features `producer`, `consumer`, `sink`): the
//!   typed producer `SerializingProducer`, the consumer's `RecordDecoder`
//!   and the Kafka sink's `RegistrySinkSchema`.

#![warn(missing_docs)]

mod context;
mod error;
mod format;
#[cfg(any(feature = "producer", feature = "consumer", feature = "sink"))]
mod kafka;
mod record_serde;
mod registry;
mod schema;
mod selector;
pub mod wire;

// The public interface is:
pub use context::{Field, SerializationContext};
pub use error::SerdeError;
#[cfg(feature = "avro")]
pub use format::avro::{
    AvroDeserializer, AvroSchema, AvroSerializer, MAX_ALLOCATION_BYTES, ReaderSchema, Typed,
};
#[cfg(feature = "json")]
pub use format::json::{JsonDeserializer, JsonSchema, JsonSerializer};
#[cfg(feature = "consumer")]
pub use kafka::{
    DecodeErrorPolicy, DecodedEvent, DecodedRecords, DeserializedRecord, PartitionStop,
    RecordDecoder,
};
#[cfg(feature = "producer")]
pub use kafka::{RecordSender, SerializeRecordError, SerializingProducer, TypedRecord};
#[cfg(feature = "sink")]
pub use kafka::{RegistrySinkSchema, RegistryTransform, RegistryTransformError};
pub use record_serde::{RawBytes, RecordDeserializer, RecordSerializer};
pub use registry::{
    CompatibilityCheck, CompatibilityLevel, RegistryAuth, RegistryConfig, RegistryError,
    SchemaRegistryClient,
};
pub use schema::{
    LocalReference, LocalSchema, RegisteredSchema, ResolvedSchema, Schema, SchemaReference,
    SchemaType,
};
pub use selector::{
    DeserializerConfig, SchemaIdSelector, SelectedSchema, SerializerConfig, SubjectNameStrategy,
};

#[cfg(feature = "protobuf")]
pub use format::protobuf::{
    MessageIndexError, ProtobufDeserializer, ProtobufSchema, ProtobufSerializer,
    TypedProtobufDeserializer,
};
