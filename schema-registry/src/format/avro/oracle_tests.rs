//! Byte-exactness against Confluent's Python `AvroSerializer` and
//! `AvroDeserializer` (fastavro), run once per test binary over every
//! vector (tests/oracle/avro_oracle.py, Confluent's in-process mock
//! registry). Without the oracle installed these tests fail, naming the
//! install script.

use super::codec::{decode_value, encode_value};
use super::schema::AvroSchema;
use apache_avro::Decimal;
use apache_avro::schema::Schema;
use apache_avro::types::Value;
use serde_json::{Value as Json, json};
use std::collections::HashMap;
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

const SCRIPT: &str = include_str!("../../../tests/oracle/avro_oracle.py");

/// One value to encode with both serializers.
struct Vector {
    name: &'static str,
    schema: &'static str,
    refs: Vec<(&'static str, &'static str)>,
    value: Value,
}

/// What the oracle answered for one vector.
struct Answer {
    theirs: Option<Vec<u8>>,
    ours_decodes: bool,
    error: Option<String>,
}

const PERSON: &str = r#"{"type":"record","name":"Person","namespace":"demo","fields":[
  {"name":"name","type":"string"},
  {"name":"age","type":"int"},
  {"name":"email","type":["null","string"],"default":null},
  {"name":"address","type":{"type":"record","name":"Address","fields":[
     {"name":"street","type":"string"},{"name":"zip","type":"long"}]}},
  {"name":"kind","type":{"type":"enum","name":"Kind","symbols":["ADULT","CHILD","OTHER"]}},
  {"name":"tags","type":{"type":"array","items":"string"}},
  {"name":"scores","type":{"type":"map","values":"double"}},
  {"name":"hash","type":{"type":"fixed","name":"Hash","size":4}},
  {"name":"raw","type":"bytes"},
  {"name":"flag","type":"boolean"},
  {"name":"ratio","type":"float"}
]}"#;

const LOGICAL: &str = r#"{"type":"record","name":"Logical","fields":[
  {"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}},
  {"name":"big","type":{"type":"fixed","name":"Dec16","size":16,"logicalType":"decimal","precision":38,"scale":4}},
  {"name":"day","type":{"type":"int","logicalType":"date"}},
  {"name":"at_ms","type":{"type":"long","logicalType":"timestamp-millis"}},
  {"name":"at_us","type":{"type":"long","logicalType":"timestamp-micros"}},
  {"name":"tod","type":{"type":"int","logicalType":"time-millis"}},
  {"name":"id","type":{"type":"string","logicalType":"uuid"}}
]}"#;

const ADDRESS_REF: &str = r#"{"type":"record","name":"Address","namespace":"shop","fields":[{"name":"city","type":"string"}]}"#;
const ORDER_WITH_REF: &str = r#"{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"long"},{"name":"to","type":"Address"},{"name":"back","type":["null","Address"],"default":null}]}"#;

fn person(name: &str, email: Option<&str>, zip: i64, scores: &[(&str, f64)], raw: &[u8]) -> Value {
    Value::Record(vec![
        ("name".into(), Value::String(name.into())),
        ("age".into(), Value::Int(i32::MAX)),
        (
            "email".into(),
            match email {
                None => Value::Union(0, Box::new(Value::Null)),
                Some(e) => Value::Union(1, Box::new(Value::String(e.into()))),
            },
        ),
        (
            "address".into(),
            Value::Record(vec![
                ("street".into(), Value::String("Hauptstraße 1 🏠".into())),
                ("zip".into(), Value::Long(zip)),
            ]),
        ),
        ("kind".into(), Value::Enum(2, "OTHER".into())),
        (
            "tags".into(),
            Value::Array(vec![
                Value::String("a".into()),
                Value::String("日本語".into()),
            ]),
        ),
        (
            "scores".into(),
            Value::Map(
                scores
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), Value::Double(*v)))
                    .collect(),
            ),
        ),
        ("hash".into(), Value::Fixed(4, vec![0, 0xff, 0x10, 0x7f])),
        ("raw".into(), Value::Bytes(raw.to_vec())),
        ("flag".into(), Value::Boolean(true)),
        ("ratio".into(), Value::Float(-1.5)),
    ])
}

fn decimal_bytes(unscaled: i128, size: Option<usize>) -> Decimal {
    let full = unscaled.to_be_bytes();
    let bytes = match size {
        Some(n) => full[16 - n..].to_vec(),
        None => {
            // Minimal two's complement, as Java's BigInteger.toByteArray.
            let mut start = 0;
            while start < 15
                && ((full[start] == 0 && full[start + 1] & 0x80 == 0)
                    || (full[start] == 0xff && full[start + 1] & 0x80 != 0))
            {
                start += 1;
            }
            full[start..].to_vec()
        }
    };
    Decimal::from(bytes)
}

fn vectors() -> Vec<Vector> {
    let v = |name, schema, value| Vector {
        name,
        schema,
        refs: Vec::new(),
        value,
    };
    let logical = |price: i128, big: i128, day, ms, us, tod| {
        Value::Record(vec![
            ("price".into(), Value::Decimal(decimal_bytes(price, None))),
            ("big".into(), Value::Decimal(decimal_bytes(big, Some(16)))),
            ("day".into(), Value::Date(day)),
            ("at_ms".into(), Value::TimestampMillis(ms)),
            ("at_us".into(), Value::TimestampMicros(us)),
            ("tod".into(), Value::TimeMillis(tod)),
            (
                "id".into(),
                Value::Uuid(
                    "6ba7b810-9dad-11d1-80b4-00c04fd430c8"
                        .parse()
                        .expect("uuid"),
                ),
            ),
        ])
    };
    let mut out = vec![
        v("long min", r#""long""#, Value::Long(i64::MIN)),
        v("long max", r#""long""#, Value::Long(i64::MAX)),
        v("long -1", r#""long""#, Value::Long(-1)),
        v("long 0", r#""long""#, Value::Long(0)),
        v("long 64", r#""long""#, Value::Long(64)),
        v("int min", r#""int""#, Value::Int(i32::MIN)),
        v("int max", r#"{"type":"int"}"#, Value::Int(i32::MAX)),
        v(
            "string unicode",
            r#""string""#,
            Value::String("grüße, 世界, 🦀, \u{0}".into()),
        ),
        v("string empty", r#""string""#, Value::String(String::new())),
        v("double", r#""double""#, Value::Double(-1234.5678e300)),
        v("float", r#""float""#, Value::Float(3.25)),
        v("boolean", r#""boolean""#, Value::Boolean(false)),
        v(
            "top-level bytes are raw",
            r#""bytes""#,
            Value::Bytes(vec![0, 1, 2, 0xff, 0x80]),
        ),
        // Not here: a null top-level value (Confluent's serializers keep it
        // a null record, never framed) and empty top-level bytes (Python's
        // deserializer refuses a 5-byte frame, even its own).
        v(
            "union string",
            r#"["null","string"]"#,
            Value::Union(1, Box::new(Value::String("x".into()))),
        ),
        v(
            "union long",
            r#"["null","long"]"#,
            Value::Union(1, Box::new(Value::Long(-300))),
        ),
        v(
            "array of longs",
            r#"{"type":"array","items":"long"}"#,
            Value::Array(vec![Value::Long(1), Value::Long(-1), Value::Long(i64::MAX)]),
        ),
        v(
            "empty array",
            r#"{"type":"array","items":"long"}"#,
            Value::Array(vec![]),
        ),
        v(
            "map",
            r#"{"type":"map","values":"long"}"#,
            Value::Map(HashMap::from([("k".to_owned(), Value::Long(7))])),
        ),
        v(
            "top-level enum",
            r#"{"type":"enum","name":"Suit","symbols":["SPADES","HEARTS"]}"#,
            Value::Enum(1, "HEARTS".into()),
        ),
        v(
            "top-level fixed",
            r#"{"type":"fixed","name":"Md5","size":3}"#,
            Value::Fixed(3, vec![1, 2, 3]),
        ),
        v(
            "person with email",
            PERSON,
            person(
                "Zoë",
                Some("z@example.org"),
                i64::MIN,
                &[("math", 1.5)],
                b"\x00\x01",
            ),
        ),
        v(
            "person without email",
            PERSON,
            person(
                "",
                None,
                i64::MAX,
                &[("x", -0.0), ("y", 1e-300), ("z", 2.0)],
                b"",
            ),
        ),
        v(
            "logical types",
            LOGICAL,
            logical(
                12345,
                -98765432109876543210,
                19000,
                1_700_000_000_123,
                1_700_000_000_123_456,
                86_399_999,
            ),
        ),
        v("logical negatives", LOGICAL, logical(-1, 1, -1, -1, -1, 0)),
        v("logical zero", LOGICAL, logical(0, 0, 0, 0, 0, 0)),
        // Not -128 or another negative power of two: fastavro writes those
        // one byte longer (`ff 80`) than Java's BigInteger (`80`).
        v(
            "logical price -129",
            LOGICAL,
            logical(-129, i128::MAX / 10, 1, 1, 1, 1),
        ),
    ];
    let address = |city: &str| Value::Record(vec![("city".into(), Value::String(city.into()))]);
    out.push(Vector {
        name: "order with a referenced Address",
        schema: ORDER_WITH_REF,
        refs: vec![("shop.Address", ADDRESS_REF)],
        value: Value::Record(vec![
            ("id".into(), Value::Long(42)),
            ("to".into(), address("Köln")),
            ("back".into(), Value::Union(1, Box::new(address("Bonn")))),
        ]),
    });
    out
}

fn parse(vector: &Vector) -> AvroSchema {
    let refs: Vec<AvroSchema> = vector
        .refs
        .iter()
        .map(|(_, text)| AvroSchema::parse(text).expect("reference parses"))
        .collect();
    AvroSchema::with_references(vector.schema, &refs).expect("schema parses")
}

/// Tagged JSON for the oracle (see avro_oracle.py).
fn to_json(value: &Value, schema: &Schema) -> Json {
    let resolved = apache_avro::schema::ResolvedSchema::new(schema).expect("names");
    to_json_in(value, schema, resolved.get_names())
}

fn to_json_in(value: &Value, schema: &Schema, names: &apache_avro::schema::NamesRef<'_>) -> Json {
    let to_json = |v: &Value, s: &Schema| to_json_in(v, s, names);
    match (value, schema) {
        (v, Schema::Ref { name }) => to_json(v, names[name]),
        (Value::Union(i, v), Schema::Union(u)) => to_json(v, &u.variants()[*i as usize]),
        (Value::Record(fields), Schema::Record(r)) => Json::Object(
            fields
                .iter()
                .map(|(n, v)| {
                    let f = r.fields.iter().find(|f| f.name == *n).expect("field");
                    (n.clone(), to_json(v, &f.schema))
                })
                .collect(),
        ),
        (Value::Array(items), Schema::Array(a)) => {
            Json::Array(items.iter().map(|v| to_json(v, &a.items)).collect())
        }
        (Value::Map(m), Schema::Map(s)) => {
            json!({"$map": m.iter().map(|(k, v)| json!([k, to_json(v, &s.types)])).collect::<Vec<_>>()})
        }
        (Value::Decimal(d), Schema::Decimal(ds)) => {
            let bytes: Vec<u8> = d.try_into().expect("decimal bytes");
            let mut full = if bytes.first().is_some_and(|b| b & 0x80 != 0) {
                [0xff; 16]
            } else {
                [0; 16]
            };
            full[16 - bytes.len()..].copy_from_slice(&bytes);
            let unscaled = i128::from_be_bytes(full);
            let digits = unscaled.unsigned_abs().to_string();
            let scale = ds.scale;
            let padded = format!("{digits:0>width$}", width = scale + 1);
            let (int, frac) = padded.split_at(padded.len() - scale);
            let sign = if unscaled < 0 { "-" } else { "" };
            json!({"$decimal": format!("{sign}{int}.{frac}")})
        }
        (Value::Null, _) => Json::Null,
        (Value::Boolean(b), _) => json!(b),
        (Value::Int(i) | Value::Date(i) | Value::TimeMillis(i), _) => json!(i),
        (Value::Long(i) | Value::TimestampMillis(i) | Value::TimestampMicros(i), _) => json!(i),
        (Value::Float(f), _) => json!(f),
        (Value::Double(f), _) => json!(f),
        (Value::String(s), _) => json!(s),
        (Value::Uuid(u), _) => json!(u.to_string()),
        (Value::Enum(_, s), _) => json!(s),
        (Value::Bytes(b) | Value::Fixed(_, b), _) => json!({"$bytes": hex(b)}),
        (other, s) => panic!("no oracle form for {other:?} in {s:?}"),
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

/// The oracle's interpreter, installed on first use.
pub(crate) fn oracle_python() -> std::path::PathBuf {
    kafka_testcontainers::confluent_python().unwrap_or_else(|e| {
        panic!("Confluent's Python serializers (the byte-exactness oracle): {e}")
    })
}

/// Every vector, ours and the oracle's answer; the oracle runs once.
fn answers() -> &'static [(Vector, Vec<u8>, Answer)] {
    static ANSWERS: OnceLock<Vec<(Vector, Vec<u8>, Answer)>> = OnceLock::new();
    ANSWERS.get_or_init(|| {
        let vectors = vectors();
        let mut input = String::new();
        let mut ours_all = Vec::new();
        for vector in &vectors {
            let schema = parse(vector);
            let mut ours = Vec::new();
            encode_value(schema.schema(), &vector.value, &mut ours)
                .unwrap_or_else(|e| panic!("{}: we cannot encode: {e}", vector.name));
            let line = json!({
                "schema": schema.local().schema,
                "refs": vector.refs,
                "value": to_json(&vector.value, schema.schema()),
                "ours": hex(&ours),
            });
            input.push_str(&line.to_string());
            input.push('\n');
            ours_all.push(ours);
        }
        let mut child = Command::new(oracle_python())
            .arg("-c")
            .arg(SCRIPT)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the oracle");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("feed the oracle");
        let output = child.wait_with_output().expect("oracle output");
        assert!(
            output.status.success(),
            "the oracle failed: {:?}",
            output.status
        );
        let lines: Vec<Json> = String::from_utf8(output.stdout)
            .expect("utf-8")
            .lines()
            .map(|l| serde_json::from_str(l).expect("oracle line"))
            .collect();
        assert_eq!(lines.len(), vectors.len(), "one answer per vector");
        vectors
            .into_iter()
            .zip(ours_all)
            .zip(lines)
            .map(|((vector, ours), line)| {
                let answer = Answer {
                    theirs: line["theirs"].as_str().map(unhex),
                    ours_decodes: line["ours_decodes"].as_bool().unwrap_or(false),
                    error: line["error"].as_str().map(str::to_owned),
                };
                (vector, ours, answer)
            })
            .collect()
    })
}

/// Our payload equals Confluent's for every vector (same schema, same value):
/// a reader of either cannot tell who wrote it.
#[test]
fn ours_encode_byte_identical_to_confluents() {
    let mut failures = Vec::new();
    for (vector, ours, answer) in answers() {
        match (&answer.theirs, &answer.error) {
            (Some(theirs), None) if theirs == ours => {}
            (theirs, error) => failures.push(format!(
                "{}: ours {} theirs {:?} error {:?}",
                vector.name,
                hex(ours),
                theirs.as_deref().map(hex),
                error
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} vectors differ:\n{}",
        failures.len(),
        answers().len(),
        failures.join("\n")
    );
}

/// Confluent's deserializer reads our payloads as it reads its own.
#[test]
fn confluents_deserializer_reads_ours() {
    let bad: Vec<_> = answers()
        .iter()
        .filter(|(_, _, a)| !a.ours_decodes)
        .map(|(v, _, a)| format!("{}: {:?}", v.name, a.error))
        .collect();
    assert!(
        bad.is_empty(),
        "Confluent could not read ours:\n{}",
        bad.join("\n")
    );
}

/// We decode Confluent's payloads back to the value that was written.
#[test]
fn ours_decode_confluents_payloads() {
    for (vector, _, answer) in answers() {
        let theirs = answer
            .theirs
            .as_ref()
            .unwrap_or_else(|| panic!("{}: no payload: {:?}", vector.name, answer.error));
        let schema = parse(vector);
        let back = decode_value(schema.schema(), None, theirs, "oracle")
            .unwrap_or_else(|e| panic!("{}: {e}", vector.name));
        assert_eq!(back, vector.value, "{}", vector.name);
    }
}
