//! Plain JSON to Avro values, guided by the schema, and back.
//!
//! The JSON is the document a person writes, not Avro's JSON encoding:
//! a union takes the bare value (`null`, or the first branch the value
//! fits, in the schema's order), `bytes` and `fixed` are strings whose
//! characters are the bytes (U+0000..U+00FF, as Avro's JSON encoding
//! writes them), an enum is its symbol. Back to JSON, a union is its
//! value, so a document read with `consume` is the one given to
//! `produce`.

use apache_avro::Schema;
use apache_avro::schema::{Name, NamesRef, RecordSchema};
use apache_avro::types::Value;
use serde_json::Value as Json;
use std::collections::HashMap;

/// `json` as a value of `schema`; `names` resolves named references.
pub fn to_avro(
    schema: &Schema,
    names: &NamesRef<'_>,
    json: &Json,
    at: &str,
) -> Result<Value, String> {
    let wrong = |what: &str| Err(format!("{at}: expected {what}, got {}", kind(json)));
    match schema {
        Schema::Null => match json {
            Json::Null => Ok(Value::Null),
            _ => wrong("null"),
        },
        Schema::Boolean => match json {
            Json::Bool(b) => Ok(Value::Boolean(*b)),
            _ => wrong("a boolean"),
        },
        Schema::Int | Schema::Date | Schema::TimeMillis => {
            let n = match json.as_i64() {
                Some(n) => {
                    i32::try_from(n).map_err(|_| format!("{at}: {n} does not fit an int"))?
                }
                None => return wrong("an integer (int)"),
            };
            Ok(match schema {
                Schema::Date => Value::Date(n),
                Schema::TimeMillis => Value::TimeMillis(n),
                _ => Value::Int(n),
            })
        }
        Schema::Long
        | Schema::TimeMicros
        | Schema::TimestampMillis
        | Schema::TimestampMicros
        | Schema::TimestampNanos
        | Schema::LocalTimestampMillis
        | Schema::LocalTimestampMicros
        | Schema::LocalTimestampNanos => {
            let Some(n) = json.as_i64() else {
                return wrong("an integer (long)");
            };
            Ok(match schema {
                Schema::TimeMicros => Value::TimeMicros(n),
                Schema::TimestampMillis => Value::TimestampMillis(n),
                Schema::TimestampMicros => Value::TimestampMicros(n),
                Schema::TimestampNanos => Value::TimestampNanos(n),
                Schema::LocalTimestampMillis => Value::LocalTimestampMillis(n),
                Schema::LocalTimestampMicros => Value::LocalTimestampMicros(n),
                Schema::LocalTimestampNanos => Value::LocalTimestampNanos(n),
                _ => Value::Long(n),
            })
        }
        Schema::Float => match json.as_f64() {
            Some(f) => Ok(Value::Float(f as f32)),
            None => wrong("a number (float)"),
        },
        Schema::Double => match json.as_f64() {
            Some(f) => Ok(Value::Double(f)),
            None => wrong("a number (double)"),
        },
        Schema::String => match json {
            Json::String(s) => Ok(Value::String(s.clone())),
            _ => wrong("a string"),
        },
        Schema::Bytes => match json {
            Json::String(s) => Ok(Value::Bytes(latin1(s, at)?)),
            _ => wrong("a string of bytes (characters U+0000..U+00FF)"),
        },
        Schema::Fixed(f) => match json {
            Json::String(s) => {
                let bytes = latin1(s, at)?;
                if bytes.len() != f.size {
                    return Err(format!(
                        "{at}: fixed {} takes {} bytes, got {}",
                        f.name,
                        f.size,
                        bytes.len()
                    ));
                }
                Ok(Value::Fixed(f.size, bytes))
            }
            _ => wrong("a string of bytes (characters U+0000..U+00FF)"),
        },
        Schema::Enum(e) => match json {
            Json::String(s) => match e.symbols.iter().position(|x| x == s) {
                Some(i) => Ok(Value::Enum(i as u32, s.clone())),
                None => Err(format!(
                    "{at}: {s:?} is not a symbol of enum {} ({:?})",
                    e.name, e.symbols
                )),
            },
            _ => wrong("an enum symbol (a string)"),
        },
        Schema::Array(a) => match json {
            Json::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, v)| to_avro(&a.items, names, v, &format!("{at}[{i}]")))
                .collect::<Result<_, _>>()
                .map(Value::Array),
            _ => wrong("an array"),
        },
        Schema::Map(m) => match json {
            Json::Object(o) => o
                .iter()
                .map(|(k, v)| {
                    Ok((
                        k.clone(),
                        to_avro(&m.types, names, v, &format!("{at}.{k}"))?,
                    ))
                })
                .collect::<Result<HashMap<_, _>, String>>()
                .map(Value::Map),
            _ => wrong("an object (map)"),
        },
        Schema::Record(r) => record(r, names, json, at),
        Schema::Union(u) => {
            let variants = u.variants();
            if json.is_null() {
                return match variants.iter().position(|s| matches!(s, Schema::Null)) {
                    Some(i) => Ok(Value::Union(i as u32, Box::new(Value::Null))),
                    None => Err(format!("{at}: null is not a branch of the union")),
                };
            }
            let mut refusals = Vec::new();
            for (i, branch) in variants.iter().enumerate() {
                if matches!(branch, Schema::Null) {
                    continue;
                }
                match to_avro(branch, names, json, at) {
                    Ok(v) => return Ok(Value::Union(i as u32, Box::new(v))),
                    Err(e) => refusals.push(e),
                }
            }
            Err(format!(
                "{at}: the value fits no branch of the union: {}",
                refusals.join("; ")
            ))
        }
        Schema::Ref { name } => match lookup(names, name) {
            Some(s) => to_avro(s, names, json, at),
            None => Err(format!(
                "{at}: the schema names {name} but does not define it"
            )),
        },
        other => Err(format!(
            "{at}: the logical type of {other:?} is not supported in JSON input"
        )),
    }
}

fn lookup<'a>(names: &NamesRef<'a>, name: &Name) -> Option<&'a Schema> {
    names.get(name).copied()
}

fn record(r: &RecordSchema, names: &NamesRef<'_>, json: &Json, at: &str) -> Result<Value, String> {
    let Json::Object(o) = json else {
        return Err(format!(
            "{at}: expected an object (record {}), got {}",
            r.name,
            kind(json)
        ));
    };
    if let Some(unknown) = o.keys().find(|k| !r.fields.iter().any(|f| &f.name == *k)) {
        return Err(format!("{at}: record {} has no field {unknown:?}", r.name));
    }
    let mut fields = Vec::with_capacity(r.fields.len());
    for f in &r.fields {
        let path = format!("{at}.{}", f.name);
        let v = match (o.get(&f.name), &f.default) {
            (Some(v), _) => to_avro(&f.schema, names, v, &path)?,
            (None, Some(default)) => to_avro(&f.schema, names, default, &path)?,
            (None, None) => return Err(format!("{path}: missing (record {} requires it)", r.name)),
        };
        fields.push((f.name.clone(), v));
    }
    Ok(Value::Record(fields))
}

fn latin1(s: &str, at: &str) -> Result<Vec<u8>, String> {
    s.chars()
        .map(|c| {
            u8::try_from(u32::from(c))
                .map_err(|_| format!("{at}: {c:?} is not a byte (U+0000..U+00FF)"))
        })
        .collect()
}

fn kind(json: &Json) -> &'static str {
    match json {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

/// An Avro value as plain JSON (the inverse of [`to_avro`]).
pub fn to_json(value: &Value) -> Json {
    let number = |f: f64| {
        serde_json::Number::from_f64(f).map_or_else(|| Json::String(f.to_string()), Json::Number)
    };
    let bytes = |b: &[u8]| Json::String(b.iter().map(|&b| char::from(b)).collect());
    match value {
        Value::Null => Json::Null,
        Value::Boolean(b) => Json::Bool(*b),
        Value::Int(n) | Value::Date(n) | Value::TimeMillis(n) => Json::from(*n),
        Value::Long(n)
        | Value::TimeMicros(n)
        | Value::TimestampMillis(n)
        | Value::TimestampMicros(n)
        | Value::TimestampNanos(n)
        | Value::LocalTimestampMillis(n)
        | Value::LocalTimestampMicros(n)
        | Value::LocalTimestampNanos(n) => Json::from(*n),
        Value::Float(f) => number(f64::from(*f)),
        Value::Double(f) => number(*f),
        Value::Bytes(b) | Value::Fixed(_, b) => bytes(b),
        Value::String(s) => Json::String(s.clone()),
        Value::Enum(_, s) => Json::String(s.clone()),
        Value::Union(_, v) => to_json(v),
        Value::Array(items) => Json::Array(items.iter().map(to_json).collect()),
        Value::Map(m) => Json::Object(m.iter().map(|(k, v)| (k.clone(), to_json(v))).collect()),
        Value::Record(fields) => Json::Object(
            fields
                .iter()
                .map(|(k, v)| (k.clone(), to_json(v)))
                .collect(),
        ),
        Value::Uuid(u) => Json::String(u.to_string()),
        other => Json::String(format!("{other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use apache_avro::schema::ResolvedSchema;

    const SCHEMA: &str = r#"{"type":"record","name":"Order","namespace":"shop","fields":[
        {"name":"id","type":"long"},
        {"name":"note","type":["null","string"],"default":null},
        {"name":"qty","type":["null","int","string"]},
        {"name":"tags","type":{"type":"array","items":"string"}},
        {"name":"kind","type":{"type":"enum","name":"Kind","symbols":["A","B"]}},
        {"name":"blob","type":"bytes"},
        {"name":"next","type":["null","Order"],"default":null}
    ]}"#;

    fn convert(json: &str) -> Result<Value, String> {
        let schema = Schema::parse_str(SCHEMA).unwrap();
        let names = ResolvedSchema::new(&schema).unwrap();
        to_avro(
            &schema,
            names.get_names(),
            &serde_json::from_str(json).unwrap(),
            "value",
        )
    }

    /// Invariant: a document converts to the schema's value (unions by the
    /// value's type, defaults for missing fields, recursive names) and back
    /// to the same document.
    #[test]
    fn round_trips_through_the_schema() {
        let doc = r#"{"id":7,"note":null,"qty":"many","tags":["x"],"kind":"B","blob":"\u0000\u00ff","next":{"id":8,"note":"n","qty":3,"tags":[],"kind":"A","blob":"","next":null}}"#;
        let v = convert(doc).unwrap();
        let Value::Record(fields) = &v else {
            panic!("{v:?}")
        };
        assert_eq!(
            fields[2].1,
            Value::Union(2, Box::new(Value::String("many".into())))
        );
        assert_eq!(to_json(&v), serde_json::from_str::<Json>(doc).unwrap());
        let schema = Schema::parse_str(SCHEMA).unwrap();
        assert!(v.validate(&schema), "validates against its schema");
    }

    /// Invariant: a document that does not fit is refused with the path of
    /// the offending part, never converted to something else.
    #[test]
    fn misfits_name_the_path() {
        let e = convert(r#"{"id":"x","qty":1,"tags":[],"kind":"A","blob":""}"#).unwrap_err();
        assert!(e.contains("value.id") && e.contains("long"), "{e}");
        let e = convert(r#"{"id":1,"qty":1,"tags":[],"kind":"C","blob":""}"#).unwrap_err();
        assert!(e.contains("not a symbol"), "{e}");
        let e =
            convert(r#"{"id":1,"qty":1,"tags":[],"kind":"A","blob":"","extra":1}"#).unwrap_err();
        assert!(e.contains("no field \"extra\""), "{e}");
        let e = convert(r#"{"id":1,"tags":[],"kind":"A","blob":""}"#).unwrap_err();
        assert!(e.contains("value.qty: missing"), "{e}");
        let e = convert(r#"{"id":1,"qty":1.5,"tags":[],"kind":"A","blob":""}"#).unwrap_err();
        assert!(e.contains("fits no branch"), "{e}");
        let e = convert(r#"{"id":1,"qty":1,"tags":[],"kind":"A","blob":"€"}"#).unwrap_err();
        assert!(e.contains("not a byte"), "{e}");
    }
}
