//! Avro binary encoding and decoding of one key or value, sans-IO, as
//! Confluent's serializers write it.
//!
//! 1. The payload is one raw Avro datum (no container file, no
//!    single-object header).
//! 2. A schema that is plain `bytes` at the top level writes the bytes as
//!    they are, without Avro's length prefix: Confluent's Java and Python
//!    serializers special-case it, and readers expect it.
//! 3. Decoding never panics. Lengths a payload claims are bounded by
//!    apache-avro's allocation limit (see [`MAX_ALLOCATION_BYTES`]).

use crate::error::SerdeError;
use apache_avro::Schema;
use apache_avro::reader::datum::GenericDatumReader;
use apache_avro::schema::{Name, ResolvedSchema};
use apache_avro::types::Value;
use apache_avro::writer::datum::GenericDatumWriter;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::borrow::Borrow;
use std::collections::HashMap;

/// The most a single decoded string, byte array or collection may claim
/// (apache-avro's process-wide allocation limit, which these serdes set
/// unless the application set it first): 64 MiB, far above Kafka's
/// default 1 MiB record limit and far below apache-avro's own 512 MiB.
pub const MAX_ALLOCATION_BYTES: usize = 64 * 1024 * 1024;

/// Sets apache-avro's allocation limit to [`MAX_ALLOCATION_BYTES`] unless it
/// was set before (the limit is set once per process).
pub(crate) fn limit_allocations() -> usize {
    apache_avro::util::max_allocation_bytes(MAX_ALLOCATION_BYTES)
}

/// Appends `value` encoded with `schema` to `out`.
pub(crate) fn encode_value(
    schema: &Schema,
    value: &Value,
    out: &mut Vec<u8>,
) -> Result<(), SerdeError> {
    let writer = GenericDatumWriter::builder(schema)
        .build()
        .map_err(|e| schema_error(&e))?;
    let start = out.len();
    if let Err(e) = writer.write_value_ref(out, value) {
        out.truncate(start);
        // apache-avro says only that validation failed: find where.
        let names = ResolvedSchema::new(schema).map_err(|e| schema_error(&e))?;
        let reason =
            mismatch(value, schema, names.get_names(), "value").unwrap_or_else(|| e.to_string());
        return Err(SerdeError::Encode { reason });
    }
    strip_top_level_bytes_length(schema, out, start);
    Ok(())
}

/// Appends the serde value `value` encoded with `schema` to `out`.
pub(crate) fn encode_serde<T: Serialize + ?Sized>(
    schema: &Schema,
    value: &T,
    out: &mut Vec<u8>,
) -> Result<(), SerdeError> {
    let writer = GenericDatumWriter::builder(schema)
        .build()
        .map_err(|e| schema_error(&e))?;
    let start = out.len();
    writer.write_ser(out, &value).map_err(|e| {
        out.truncate(start);
        SerdeError::Encode {
            reason: e.to_string(),
        }
    })?;
    strip_top_level_bytes_length(schema, out, start);
    Ok(())
}

/// Decodes `payload`, written with `writer`, as a generic value; resolved
/// to `reader` (Avro schema resolution) when given.
pub(crate) fn decode_value(
    writer: &Schema,
    reader: Option<&Schema>,
    payload: &[u8],
    label: &str,
) -> Result<Value, SerdeError> {
    limit_allocations();
    let decode_error = |e: apache_avro::Error| SerdeError::Decode {
        schema: label.to_owned(),
        reason: e.to_string(),
    };
    let datum = GenericDatumReader::builder(writer)
        .maybe_reader_schema(reader)
        .build()
        .map_err(decode_error)?;
    let framed = with_top_level_bytes_length(writer, payload);
    let mut input = Input {
        rest: &framed,
        short: false,
    };
    let value = datum.read_value(&mut input).map_err(decode_error)?;
    if input.short {
        // apache-avro reads a string cut short as null; never hand that out.
        return Err(SerdeError::Decode {
            schema: label.to_owned(),
            reason: "payload truncated".into(),
        });
    }
    trailing(input.rest, label)?;
    Ok(value)
}

/// Decodes `payload`, written with `writer`, into `T`; through `reader`
/// (Avro schema resolution) when given. Goes through the generic value:
/// apache-avro's direct deserializer neither resolves schemas nor accepts
/// a Rust type named otherwise than the record.
pub(crate) fn decode_serde<T: DeserializeOwned>(
    writer: &Schema,
    reader: Option<&Schema>,
    payload: &[u8],
    label: &str,
) -> Result<T, SerdeError> {
    let value = decode_value(writer, reader, payload, label)?;
    apache_avro::from_value(&value).map_err(|e| SerdeError::Decode {
        schema: label.to_owned(),
        reason: e.to_string(),
    })
}

/// The payload as apache-avro reads it, remembering whether a read asked
/// for more than was left (a well-formed datum never does).
struct Input<'a> {
    /// What is left to read.
    rest: &'a [u8],
    /// Whether a read ran past the end.
    short: bool,
}

impl std::io::Read for Input<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.len() > self.rest.len() {
            self.short = true;
        }
        let n = buf.len().min(self.rest.len());
        buf[..n].copy_from_slice(&self.rest[..n]);
        self.rest = &self.rest[n..];
        Ok(n)
    }
}

/// Bytes left after a complete datum mean the payload was written with
/// another schema.
fn trailing(rest: &[u8], label: &str) -> Result<(), SerdeError> {
    if rest.is_empty() {
        Ok(())
    } else {
        Err(SerdeError::Decode {
            schema: label.to_owned(),
            reason: format!("{} bytes left after the value", rest.len()),
        })
    }
}

fn schema_error(e: &apache_avro::Error) -> SerdeError {
    SerdeError::Schema {
        reason: format!("Avro schema cannot be used: {e}"),
    }
}

/// Confluent writes a top-level `bytes` value raw: drop the length
/// apache-avro wrote at `start`.
fn strip_top_level_bytes_length(schema: &Schema, out: &mut Vec<u8>, start: usize) {
    if !matches!(schema, Schema::Bytes) {
        return;
    }
    let len_bytes = out[start..].iter().take_while(|b| **b & 0x80 != 0).count() + 1;
    out.drain(start..start + len_bytes.min(out.len() - start));
}

/// A top-level `bytes` payload is raw: give apache-avro its length prefix.
fn with_top_level_bytes_length<'a>(
    schema: &Schema,
    payload: &'a [u8],
) -> std::borrow::Cow<'a, [u8]> {
    if !matches!(schema, Schema::Bytes) {
        return std::borrow::Cow::Borrowed(payload);
    }
    let mut framed = Vec::with_capacity(payload.len() + 10);
    let mut z = (payload.len() as u64) << 1;
    while z >= 0x80 {
        framed.push((z as u8) | 0x80);
        z >>= 7;
    }
    framed.push(z as u8);
    framed.extend_from_slice(payload);
    std::borrow::Cow::Owned(framed)
}

/// Where `value` does not fit `schema`: a path (`value.address.city`) and
/// what is wrong there; `None` when it fits.
fn mismatch<S: Borrow<Schema> + std::fmt::Debug>(
    value: &Value,
    schema: &Schema,
    names: &HashMap<Name, S>,
    path: &str,
) -> Option<String> {
    let schema = match schema {
        Schema::Ref { name } => match names.get(name) {
            Some(s) => s.borrow(),
            None => {
                return Some(format!(
                    "{path}: unknown named type {}",
                    name.fullname(None)
                ));
            }
        },
        other => other,
    };
    match (value, schema) {
        (Value::Record(fields), Schema::Record(record)) => {
            for field in &record.fields {
                match fields.iter().find(|(n, _)| *n == field.name) {
                    Some((_, v)) => {
                        let inner = format!("{path}.{}", field.name);
                        if let Some(m) = mismatch(v, &field.schema, names, &inner) {
                            return Some(m);
                        }
                    }
                    None if field.default.is_none() => {
                        return Some(format!(
                            "{path}.{}: missing, and the field has no default",
                            field.name
                        ));
                    }
                    None => {}
                }
            }
            fields
                .iter()
                .find(|(n, _)| !record.fields.iter().any(|f| f.name == *n))
                .map(|(n, _)| format!("{path}.{n}: not a field of {}", record.name.fullname(None)))
        }
        (Value::Array(items), Schema::Array(a)) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| mismatch(v, &a.items, names, &format!("{path}[{i}]"))),
        (Value::Map(items), Schema::Map(m)) => items
            .iter()
            .find_map(|(k, v)| mismatch(v, &m.types, names, &format!("{path}[{k:?}]"))),
        (Value::Union(i, v), Schema::Union(u)) => match u.variants().get(*i as usize) {
            Some(branch) => mismatch(v, branch, names, path),
            None => Some(format!("{path}: union branch {i} does not exist")),
        },
        (v, Schema::Union(u)) => {
            if u.variants().iter().any(|b| fits(v, b, names)) {
                None
            } else {
                Some(format!("{path}: {} fits no branch of the union", kind(v)))
            }
        }
        (v, s) if fits(v, s, names) => None,
        (v, s) => Some(format!("{path}: {} does not fit {}", kind(v), describe(s))),
    }
}

/// apache-avro's own check of one value (it logs its reason at error
/// level; it runs only on values that failed to encode).
fn fits<S: Borrow<Schema> + std::fmt::Debug>(
    value: &Value,
    schema: &Schema,
    names: &HashMap<Name, S>,
) -> bool {
    value.validate_with_names(schema, names)
}

fn kind(v: &Value) -> String {
    let s = format!("{v:?}");
    match s.find('(') {
        Some(i) => format!("a {} value", &s[..i]),
        None => format!("a {s} value"),
    }
}

fn describe(s: &Schema) -> String {
    match s.name() {
        Some(n) => n.fullname(None),
        None => format!("{:?}", apache_avro::schema::SchemaKind::from(s)),
    }
}
