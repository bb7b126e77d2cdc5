//! The registry formats of `produce`, `consume` and `copy`: a record's key
//! or value as a JSON document, encoded to (and decoded from) Avro,
//! Protobuf or JSON Schema through a schema registry, or to plain UTF-8
//! (`string`) or base64-given bytes (`bytes`).
//!
//! - [`Encoder`]: a JSON document to a record's bytes (a
//!   [`RecordSerializer`] of `serde_json::Value`);
//! - [`Decoder`]: a record's bytes to a JSON document (a
//!   [`RecordDeserializer`]), so `copy` re-encodes through
//!   `kafka_schema_registry::RegistryTransform`.
//!
//! The registry settings come from the one bag of `-X` settings
//! (`schema.registry.url`, `basic.auth.credentials.source`,
//! `basic.auth.user.info`, `bearer.auth.token`, `schema.registry.ssl.*`,
//! `auto.register.schemas`, `use.latest.version`, the subject name
//! strategies, ...).

// Without every format, some schema helpers have no caller.
#![cfg_attr(
    not(all(feature = "avro", feature = "protobuf", feature = "json")),
    allow(dead_code, unused_variables)
)]

#[cfg(feature = "avro")]
mod avro_json;

use crate::error::{CliError, CliResult};
use base64::Engine as _;
use bytes::Bytes;
use kafka_client::Properties;
use kafka_schema_registry::{
    RecordDeserializer, RecordSerializer, SerdeError, SerializationContext,
};
use serde_json::Value as Json;
use std::path::Path;

/// `--value-format` / `--key-format`: how a key or value is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Avro with the registry (Confluent's framing).
    Avro,
    /// Protocol Buffers with the registry (Confluent's framing).
    Protobuf,
    /// JSON Schema with the registry (Confluent's framing).
    Json,
    /// UTF-8 text, unframed (a JSON string in JSON input and output).
    String,
    /// Raw bytes, unframed (base64 in JSON input and output).
    Bytes,
}

impl Format {
    fn name(self) -> &'static str {
        match self {
            Format::Avro => "avro",
            Format::Protobuf => "protobuf",
            Format::Json => "json",
            Format::String => "string",
            Format::Bytes => "bytes",
        }
    }

    /// Settings this format adds to the bag before `-X` (which overrides
    /// them): JSON Schema validates what it writes and reads.
    pub fn defaults(formats: &[Option<Format>]) -> Vec<(&'static str, &'static str)> {
        if formats.contains(&Some(Format::Json)) {
            vec![("json.fail.invalid.schema", "true")]
        } else {
            Vec::new()
        }
    }
}

/// The schema of a registry format: its file and, for Protobuf, the
/// message.
#[derive(Debug, Clone)]
pub struct SchemaSource<'a> {
    /// The schema file (`.avsc`, `.proto`, or a JSON Schema document).
    pub file: Option<&'a Path>,
    /// The Protobuf message (full name); default: the file's first.
    pub message: Option<&'a str>,
    /// The flag naming the file, for errors.
    pub flag: &'static str,
}

fn not_built(format: Format) -> CliError {
    CliError::usage(format!(
        "this kafka-eos was built without the {} format (cargo feature `{}`)",
        format.name(),
        format.name()
    ))
}

fn read_schema(source: &SchemaSource<'_>, format: Format) -> CliResult<String> {
    let Some(path) = source.file else {
        return Err(CliError::usage(format!(
            "--{}-format {} needs {} FILE",
            if source.flag.contains("key") {
                "key"
            } else {
                "value"
            },
            format.name(),
            source.flag
        )));
    };
    std::fs::read_to_string(path)
        .map_err(|e| CliError::usage(format!("{} {}: {e}", source.flag, path.display())))
}

fn bad_schema(source: &SchemaSource<'_>, e: impl std::fmt::Display) -> CliError {
    let file = source.file.map(Path::display);
    CliError::usage(format!(
        "{} {}: {e}",
        source.flag,
        file.map(|f| f.to_string()).unwrap_or_default()
    ))
}

/// Writes a JSON document as a key or value in one format.
#[derive(Debug)]
pub enum Encoder {
    /// Avro: the document converted with the schema, then serialized.
    #[cfg(feature = "avro")]
    Avro(Box<kafka_schema_registry::AvroSerializer>),
    /// Protobuf: the document read with the JSON mapping into the message.
    #[cfg(feature = "protobuf")]
    Protobuf(
        Box<kafka_schema_registry::ProtobufSerializer>,
        prost_reflect::MessageDescriptor,
    ),
    /// JSON Schema: the document as it is.
    #[cfg(feature = "json")]
    Json(Box<kafka_schema_registry::JsonSerializer>),
    /// A JSON string as UTF-8.
    String,
    /// A base64 JSON string as its bytes.
    Bytes,
}

impl Encoder {
    /// The encoder of `format`, its registry settings taken from `props`.
    pub fn new(
        format: Format,
        source: &SchemaSource<'_>,
        props: &mut Properties,
    ) -> CliResult<Self> {
        let _ = &props;
        match format {
            Format::String => Ok(Encoder::String),
            Format::Bytes => Ok(Encoder::Bytes),
            #[cfg(feature = "avro")]
            Format::Avro => {
                let text = read_schema(source, format)?;
                let schema = kafka_schema_registry::AvroSchema::parse(&text)
                    .map_err(|e| bad_schema(source, e))?;
                let s = kafka_schema_registry::AvroSerializer::from_properties(props, schema)
                    .map_err(registry_setting)?;
                Ok(Encoder::Avro(Box::new(s)))
            }
            #[cfg(feature = "protobuf")]
            Format::Protobuf => {
                let text = read_schema(source, format)?;
                let schema = kafka_schema_registry::ProtobufSchema::from_proto(&text, &[])
                    .map_err(|e| bad_schema(source, e))?;
                let message = match source.message {
                    Some(name) => schema.message(name).ok_or_else(|| {
                        bad_schema(source, format!("no message {name:?} in the file"))
                    })?,
                    None => schema
                        .root_file()
                        .messages()
                        .next()
                        .ok_or_else(|| bad_schema(source, "the file declares no message"))?,
                };
                let s = kafka_schema_registry::ProtobufSerializer::from_properties(props)
                    .map_err(CliError::from)?
                    .with_schema(schema);
                Ok(Encoder::Protobuf(Box::new(s), message))
            }
            #[cfg(feature = "json")]
            Format::Json => {
                let text = read_schema(source, format)?;
                let schema = kafka_schema_registry::JsonSchema::new(&text)
                    .map_err(|e| bad_schema(source, e))?;
                let s = kafka_schema_registry::JsonSerializer::from_properties(props, schema)
                    .map_err(registry_setting)?;
                Ok(Encoder::Json(Box::new(s)))
            }
            #[allow(unreachable_patterns)]
            other => Err(not_built(other)),
        }
    }
}

fn registry_setting(e: SerdeError) -> CliError {
    match e {
        SerdeError::Config(c) => CliError::from(c),
        e => CliError::usage(e.to_string()),
    }
}

fn encode_error(reason: impl Into<String>) -> SerdeError {
    SerdeError::Encode {
        reason: reason.into(),
    }
}

impl RecordSerializer<Json> for Encoder {
    async fn serialize(
        &self,
        ctx: &SerializationContext<'_>,
        value: &Json,
    ) -> Result<Bytes, SerdeError> {
        let _ = ctx;
        match self {
            Encoder::String => match value {
                Json::String(s) => Ok(Bytes::copy_from_slice(s.as_bytes())),
                _ => Err(encode_error("the string format takes a JSON string")),
            },
            Encoder::Bytes => match value {
                Json::String(s) => base64::engine::general_purpose::STANDARD
                    .decode(s)
                    .map(Bytes::from)
                    .map_err(|e| {
                        encode_error(format!("the bytes format takes a base64 string: {e}"))
                    }),
                _ => Err(encode_error("the bytes format takes a base64 JSON string")),
            },
            #[cfg(feature = "avro")]
            Encoder::Avro(s) => {
                let schema = s.schema().schema();
                let names = apache_avro::schema::ResolvedSchema::new(schema).map_err(|e| {
                    SerdeError::Schema {
                        reason: e.to_string(),
                    }
                })?;
                let avro = avro_json::to_avro(schema, names.get_names(), value, "value")
                    .map_err(encode_error)?;
                s.serialize(ctx, &avro).await
            }
            #[cfg(feature = "protobuf")]
            Encoder::Protobuf(s, message) => {
                let m = prost_reflect::DynamicMessage::deserialize(message.clone(), value)
                    .map_err(|e| encode_error(format!("{}: {e}", message.full_name())))?;
                s.serialize(ctx, &m).await
            }
            #[cfg(feature = "json")]
            Encoder::Json(s) => s.serialize(ctx, value).await,
        }
    }
}

/// Reads a key or value of one format as a JSON document.
#[derive(Debug)]
pub enum Decoder {
    /// Avro, with the writer's schema.
    #[cfg(feature = "avro")]
    Avro(Box<kafka_schema_registry::AvroDeserializer>),
    /// Protobuf, printed with the JSON mapping (field names as in the
    /// `.proto`, 64-bit integers as numbers, default values included).
    #[cfg(feature = "protobuf")]
    Protobuf(Box<kafka_schema_registry::ProtobufDeserializer>),
    /// JSON Schema: the document.
    #[cfg(feature = "json")]
    Json(Box<kafka_schema_registry::JsonDeserializer>),
    /// UTF-8 text as a JSON string (not UTF-8: a decode error).
    String,
    /// The bytes as a base64 JSON string.
    Bytes,
}

impl Decoder {
    /// The decoder of `format`, its registry settings taken from `props`.
    pub fn new(format: Format, props: &mut Properties) -> CliResult<Self> {
        let _ = &props;
        match format {
            Format::String => Ok(Decoder::String),
            Format::Bytes => Ok(Decoder::Bytes),
            #[cfg(feature = "avro")]
            Format::Avro => kafka_schema_registry::AvroDeserializer::from_properties(
                props,
                kafka_schema_registry::ReaderSchema::Writer,
            )
            .map(|d| Decoder::Avro(Box::new(d)))
            .map_err(registry_setting),
            #[cfg(feature = "protobuf")]
            Format::Protobuf => kafka_schema_registry::ProtobufDeserializer::from_properties(props)
                .map(|d| Decoder::Protobuf(Box::new(d)))
                .map_err(CliError::from),
            #[cfg(feature = "json")]
            Format::Json => kafka_schema_registry::JsonDeserializer::from_properties(props)
                .map(|d| Decoder::Json(Box::new(d)))
                .map_err(registry_setting),
            #[allow(unreachable_patterns)]
            other => Err(not_built(other)),
        }
    }
}

impl RecordDeserializer for Decoder {
    type Value = Json;

    async fn deserialize(
        &self,
        ctx: &SerializationContext<'_>,
        bytes: &[u8],
    ) -> Result<Json, SerdeError> {
        let _ = ctx;
        match self {
            Decoder::String => std::str::from_utf8(bytes)
                .map(|s| Json::String(s.to_string()))
                .map_err(|e| SerdeError::Decode {
                    schema: "utf-8".into(),
                    reason: e.to_string(),
                }),
            Decoder::Bytes => Ok(Json::String(
                base64::engine::general_purpose::STANDARD.encode(bytes),
            )),
            #[cfg(feature = "avro")]
            Decoder::Avro(d) => Ok(avro_json::to_json(&d.deserialize(ctx, bytes).await?)),
            #[cfg(feature = "protobuf")]
            Decoder::Protobuf(d) => {
                let m = d.deserialize(ctx, bytes).await?;
                let options = prost_reflect::SerializeOptions::new()
                    .use_proto_field_name(true)
                    .stringify_64_bit_integers(false)
                    .skip_default_fields(false);
                m.serialize_with_options(serde_json::value::Serializer, &options)
                    .map_err(|e| SerdeError::Decode {
                        schema: prost_reflect::ReflectMessage::descriptor(&m)
                            .full_name()
                            .to_string(),
                        reason: e.to_string(),
                    })
            }
            #[cfg(feature = "json")]
            Decoder::Json(d) => d.deserialize(ctx, bytes).await,
        }
    }
}
