//! Protocol Buffers with Confluent's framing.
//!
//! - [`ProtobufSchema`]: a root `.proto` file and its imports, compiled at
//!   run time (protox, no `protoc`), from text, a prost-generated type, or a
//!   schema fetched from the registry (`.proto` text or base64 descriptor);
//!   its registered form (imports as references under their import paths)
//!   and Confluent's message indexes.
//! - [`ProtobufSerializer`]: messages to `00 | id | indexes | payload`.
//! - [`ProtobufDeserializer`] / [`TypedProtobufDeserializer`]: back to a
//!   [`prost_reflect::DynamicMessage`] or a generated type, with the writer
//!   schema fetched by id and cached.

mod schema;
mod serde;

pub use schema::{MessageIndexError, ProtobufSchema};
pub use serde::{ProtobufDeserializer, ProtobufSerializer, TypedProtobufDeserializer};

#[cfg(test)]
mod tests;
