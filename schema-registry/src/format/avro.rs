//! The Avro format: Confluent's `KafkaAvroSerializer` and
//! `KafkaAvroDeserializer`, byte for byte.
//!
//! 1. [`AvroSchema`]: the application's writer schema (with the named types
//!    it takes from other registered schemas), or one fetched by id.
//! 2. [`AvroSerializer`]: picks the schema id with [`SchemaIdSelector`]
//!    (register, look up, latest version or fixed id), encodes the value
//!    with that schema and prefixes the frame.
//! 3. [`AvroDeserializer`]: reads the frame (schema-id header first, then
//!    the prefix), fetches the writer schema by id (parsed schemas cached),
//!    decodes, and resolves to a reader schema when one is set.
//!
//! Generic records are [`apache_avro::types::Value`]s; serde types go
//! through [`Typed`]: `AvroSerializer<Typed<Order>>`,
//! `AvroDeserializer<Typed<Order>>`.
//!
//! [`SchemaIdSelector`]: crate::SchemaIdSelector

mod codec;
mod deserializer;
mod schema;
mod serializer;

#[cfg(test)]
mod codec_tests;
#[cfg(test)]
mod oracle_tests;

pub use codec::MAX_ALLOCATION_BYTES;
pub use deserializer::{AvroDeserializer, ReaderSchema};
pub use schema::AvroSchema;
pub use serializer::{AvroSerializer, Typed};
