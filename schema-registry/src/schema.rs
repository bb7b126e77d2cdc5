//! Schemas as the registry stores them, and as the formats parse them.

use std::fmt;

/// The kinds of schema a registry stores (its `schemaType`; absent means
/// Avro).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SchemaType {
    /// Apache Avro (`AVRO`).
    Avro,
    /// Protocol Buffers (`PROTOBUF`).
    Protobuf,
    /// JSON Schema (`JSON`).
    Json,
}

impl SchemaType {
    /// The registry's name: `AVRO`, `PROTOBUF` or `JSON`.
    pub fn as_str(self) -> &'static str {
        match self {
            SchemaType::Avro => "AVRO",
            SchemaType::Protobuf => "PROTOBUF",
            SchemaType::Json => "JSON",
        }
    }

    /// Parses the registry's name; `None` for an unknown type.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "AVRO" => Some(SchemaType::Avro),
            "PROTOBUF" => Some(SchemaType::Protobuf),
            "JSON" => Some(SchemaType::Json),
            _ => None,
        }
    }
}

impl fmt::Display for SchemaType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A reference from one schema to another registered schema: an Avro named
/// type defined elsewhere, a Protobuf import, a JSON Schema `$ref`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SchemaReference {
    /// The name the referencing schema uses: the Protobuf import path, the
    /// Avro full name, the JSON Schema `$ref` URI.
    pub name: String,
    /// The subject the referenced schema is registered under.
    pub subject: String,
    /// Its version under that subject.
    pub version: i32,
}

/// A schema as the registry stores it: its type, its text and its
/// references.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Schema {
    /// Avro, Protobuf or JSON Schema.
    pub schema_type: SchemaType,
    /// The schema text (for Protobuf, `.proto` text or a base64
    /// `FileDescriptorProto`).
    pub schema: String,
    /// The schemas this one refers to.
    pub references: Vec<SchemaReference>,
}

/// A schema registered under a subject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegisteredSchema {
    /// The id readers find it by.
    pub id: i32,
    /// The subject.
    pub subject: String,
    /// Its version under the subject.
    pub version: i32,
    /// The schema.
    pub schema: Schema,
}

/// A schema with every schema it refers to, transitively: what a format
/// parses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedSchema {
    /// The schema itself.
    pub schema: Schema,
    /// The schemas it refers to, directly or not, each under the name its
    /// referrer uses, dependencies before the schemas that use them.
    pub references: Vec<(String, Schema)>,
}

/// A schema as the application gives it to a serializer, with the schemas
/// it refers to (each registered first, under its name as the subject, as
/// Confluent's `DefaultReferenceSubjectNameStrategy` does).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalSchema {
    /// Avro, Protobuf or JSON Schema.
    pub schema_type: SchemaType,
    /// The schema text as it is registered.
    pub schema: String,
    /// The schemas it refers to, each under the name this one uses for it.
    pub references: Vec<LocalReference>,
}

/// A schema a [`LocalSchema`] refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalReference {
    /// The name the referrer uses (import path, full name, `$ref` URI);
    /// also the subject it is registered under.
    pub name: String,
    /// The referenced schema, with its own references.
    pub schema: LocalSchema,
}
