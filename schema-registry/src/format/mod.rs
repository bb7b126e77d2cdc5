//! The formats: each one parses its schemas and encodes and decodes values.

#[cfg(feature = "avro")]
pub mod avro;
