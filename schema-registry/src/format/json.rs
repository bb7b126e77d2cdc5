//! JSON Schema (feature `json`), byte-identical with Confluent's
//! `KafkaJsonSchemaSerializer`.
//!
//! - [`JsonSchema`]: the application's schema text and the schemas it
//!   `$ref`s (Confluent's JSON Schema references), compiled once; its
//!   `title` names the record for the record name strategies.
//! - [`JsonSerializer`]: any `serde::Serialize` value (a
//!   `serde_json::Value` included) to `00`, the schema id, then the UTF-8
//!   document, validated against the schema when
//!   `json.fail.invalid.schema=true`.
//! - [`JsonDeserializer`]: the frame's id (header form first, then the
//!   prefix), then the document into a `serde_json::Value` or any
//!   `serde::de::DeserializeOwned` type, validated against the writer's
//!   schema when `json.fail.invalid.schema=true`.
//!
//! **The bytes.** Confluent's Java serializer writes Jackson's compact
//! form: no whitespace, non-ASCII characters as UTF-8, `"` `\` and the
//! control characters escaped (`\b \t \n \f \r`, the others as `\u00XX`
//! with upper-case hex digits), and a `double` as Java's
//! `Double.toString` (`1.5`, `1.0`, `1.0E7`, `1.0E-4`). The serializer
//! writes exactly that. Object members are written in the order the value
//! gives them: a struct's field order (Jackson's POJO order), a
//! `serde_json::Value`'s map order (sorted by key unless serde_json's
//! `preserve_order` feature is on; Jackson keeps a `JsonNode`'s insertion
//! order).
//!
//! Confluent's Python serializer writes `json.dumps(separators=(",", ":"),
//! ensure_ascii=False)` (or `orjson` when installed): the same bytes except
//! lower-case hex in `\u00xx` escapes and Python's `repr` of a float
//! (`1e+16`, `0.0001`, `12345678.0` where Java writes `1.0E16`, `1.0E-4`,
//! `1.2345678E7`); numbers in `[0.001, 10^7)` read the same in both.
//!
//! References resolve from the schema's own set only: no schema is ever
//! fetched from the network or the file system.

mod compact;
mod deserializer;
#[cfg(test)]
mod oracle_tests;
mod schema;
mod serializer;

pub use deserializer::JsonDeserializer;
pub use schema::JsonSchema;
pub use serializer::JsonSerializer;

/// The setting that turns validation on, in the serializer and the
/// deserializer (Confluent's `KafkaJsonSchemaSerializerConfig` and
/// `KafkaJsonSchemaDeserializerConfig`; default `false`).
pub(crate) const FAIL_INVALID_SCHEMA: &str = "json.fail.invalid.schema";
