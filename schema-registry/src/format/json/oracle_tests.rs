//! Differential tests against Confluent's own Python serializers
//! (`confluent-kafka` 2.16.1, `JSONSerializer` / `JSONDeserializer`) over
//! its in-process `mock://` registry: one Python process per test binary,
//! requests and answers as JSON lines.
//!
//! Where the bytes differ, they differ as stated in the JSON module's
//! notes: Python writes `json.dumps(separators=(",", ":"),
//! ensure_ascii=False)` (this environment has no `orjson`), we write what
//! Confluent's Java serializer (Jackson) writes; the two differ only in the
//! spelling of floats outside `[10^-3, 10^7)` and of `\u00XX` escapes.
//! Objects are given with sorted keys: a `serde_json::Value` writes its
//! members sorted, Python in the order given.

use super::deserializer::decode;
use super::schema::JsonSchema;
use super::serializer::encode;
use crate::error::SerdeError;
use crate::wire::{self, SchemaId};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Mutex, OnceLock};

/// The oracle: reads one JSON request a line, answers one JSON line.
const ORACLE: &str = r#"
import json, sys
from confluent_kafka.schema_registry import SchemaRegistryClient, Schema, SchemaReference
from confluent_kafka.schema_registry.json_schema import JSONSerializer, JSONDeserializer
from confluent_kafka.serialization import SerializationContext, MessageField

client = SchemaRegistryClient.new_client({'url': 'mock://'})

def schema(req):
    refs = [SchemaReference(n, s, v) for n, s, v in req.get('refs', [])]
    return Schema(req['schema'], 'JSON', refs)

for line in sys.stdin:
    req = json.loads(line)
    ctx = SerializationContext(req.get('topic', 't'), MessageField.VALUE)
    conf = {'validate': req.get('validate', False), 'subject.name.strategy.type': 'TOPIC'}
    try:
        if req['op'] == 'register':
            rs = client.register_schema_full_response(req['subject'], schema(req))
            out = {'id': rs.schema_id, 'version': rs.version}
        elif req['op'] == 'serialize':
            ser = JSONSerializer(schema(req), client, conf=conf)
            out = {'hex': ser(req['value'], ctx).hex()}
        elif req['op'] == 'deserialize':
            de = JSONDeserializer(None, schema_registry_client=client, conf=conf)
            out = {'value': de(bytes.fromhex(req['hex']), ctx)}
        else:
            out = {'error': 'unknown op'}
    except Exception as e:
        out = {'error': '%s: %s' % (type(e).__name__, e)}
    print(json.dumps(out), flush=True)
"#;

/// The running oracle.
struct Oracle {
    _child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

/// The Python interpreter of Confluent's serializers, installed on first
/// use.
fn interpreter() -> PathBuf {
    kafka_testcontainers::confluent_python().unwrap_or_else(|e| {
        panic!("Confluent's Python serializers (the byte-exactness oracle): {e}")
    })
}

/// One request to the shared oracle, started on first use.
fn ask(request: Value) -> Value {
    static ORACLE_PROCESS: OnceLock<Mutex<Oracle>> = OnceLock::new();
    let oracle = ORACLE_PROCESS.get_or_init(|| {
        let python = interpreter();
        let mut child = Command::new(&python)
            .args(["-c", ORACLE])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", python.display()));
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        Mutex::new(Oracle {
            _child: child,
            stdin,
            stdout,
        })
    });
    let mut oracle = oracle.lock().unwrap_or_else(|e| e.into_inner());
    writeln!(oracle.stdin, "{request}").expect("oracle stdin");
    let mut line = String::new();
    oracle.stdout.read_line(&mut line).expect("oracle stdout");
    assert!(!line.is_empty(), "the oracle exited (its stderr is above)");
    serde_json::from_str(&line).expect("oracle answer is JSON")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

/// Python's framed bytes for `value` (validation as asked), or its error.
fn python_serialize(
    topic: &str,
    schema: &str,
    value: &Value,
    validate: bool,
) -> Result<Vec<u8>, String> {
    python_serialize_with_refs(topic, schema, &[], value, validate)
}

fn python_serialize_with_refs(
    topic: &str,
    schema: &str,
    refs: &[(&str, &str, i32)],
    value: &Value,
    validate: bool,
) -> Result<Vec<u8>, String> {
    let answer = ask(json!({
        "op": "serialize", "topic": topic, "schema": schema, "refs": refs,
        "value": value, "validate": validate,
    }));
    match answer["hex"].as_str() {
        Some(h) => Ok(unhex(h)),
        None => Err(answer["error"].to_string()),
    }
}

/// What Python's deserializer reads from `bytes`, or its error.
fn python_deserialize(bytes: &[u8], validate: bool) -> Result<Value, String> {
    let answer = ask(json!({"op": "deserialize", "hex": hex(bytes), "validate": validate}));
    match answer.get("value") {
        Some(v) => Ok(v.clone()),
        None => Err(answer["error"].to_string()),
    }
}

/// The id and payload of a prefix frame.
fn split(frame: &[u8]) -> (i32, &[u8]) {
    let f = wire::read_frame(frame, None, false).expect("a prefix frame");
    let wire::SchemaId::Id(id) = f.id else {
        panic!("prefix frames carry ids")
    };
    (id, f.payload)
}

const ANY_OBJECT: &str =
    r#"{"title": "Any", "type": ["object", "array", "string", "number", "boolean", "null"]}"#;

/// Values spelled the same by Python and Java (keys sorted, floats in
/// `[10^-3, 10^7)`, no control characters): our frame equals Python's,
/// byte for byte, and each side reads the other's back to the same value.
#[test]
fn same_bytes_as_python_where_java_and_python_agree() {
    let vectors = [
        json!({"a": 1, "b": "two", "c": [true, false, null], "d": {"e": -3}}),
        json!({"id": 9_007_199_254_740_993_i64, "max": 18_446_744_073_709_551_615_u64, "min": i64::MIN}),
        json!({"f": [0.001, 0.5, 1.0, 100.0, 123.456, 1234567.5, 9999999.0, -2.75]}),
        json!({"text": "Grüße, 世界 😀 \"quoted\" back\\slash /slash \t\n\r\u{8}\u{c} \u{7f} \u{2028}"}),
        json!([1, [2, [3, {}]], []]),
        json!("just a string"),
        json!(42),
        json!({"": "", "nested": {"deeper": {"deepest": [{"k": null}]}}}),
    ];
    for (i, value) in vectors.iter().enumerate() {
        let python = python_serialize("agree", ANY_OBJECT, value, false).unwrap();
        let (id, payload) = split(&python);
        let ours = encode(id, value).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&ours[5..]),
            String::from_utf8_lossy(payload),
            "vector {i}"
        );
        assert_eq!(&ours[..], &python[..], "vector {i}");
        // Each side reads the other's bytes back to the value.
        let read: Value = decode(SchemaId::Id(id), payload, None).unwrap();
        assert_eq!(&read, value, "vector {i}");
        assert_eq!(
            &python_deserialize(&ours, false).unwrap(),
            value,
            "vector {i}"
        );
    }
}

/// Where Java and Python spell a value differently, Python writes
/// `repr(float)` and lower-case `\u00xx`, we write Java's `Double.toString`
/// and upper-case `\u00XX` (Jackson); both read back to the same value on
/// both sides.
#[test]
fn java_spelling_where_python_differs() {
    let vectors = [
        (json!({"x": 1e16}), r#"{"x":1e+16}"#, r#"{"x":1.0E16}"#),
        (json!({"x": 1e7}), r#"{"x":10000000.0}"#, r#"{"x":1.0E7}"#),
        (
            json!({"x": 12_345_678.9}),
            r#"{"x":12345678.9}"#,
            r#"{"x":1.23456789E7}"#,
        ),
        (json!({"x": 0.0001}), r#"{"x":0.0001}"#, r#"{"x":1.0E-4}"#),
        (json!({"x": 2.5e-7}), r#"{"x":2.5e-07}"#, r#"{"x":2.5E-7}"#),
        (
            json!({"x": -1.5e300}),
            r#"{"x":-1.5e+300}"#,
            r#"{"x":-1.5E300}"#,
        ),
        (
            json!({"s": "\u{1}\u{1f}\u{1b}"}),
            r#"{"s":"\u0001\u001f\u001b"}"#,
            r#"{"s":"\u0001\u001F\u001B"}"#,
        ),
    ];
    for (value, python_text, java_text) in vectors {
        let python = python_serialize("differ", ANY_OBJECT, &value, false).unwrap();
        let (id, payload) = split(&python);
        assert_eq!(String::from_utf8_lossy(payload), python_text);
        let ours = encode(id, &value).unwrap();
        assert_eq!(String::from_utf8_lossy(&ours[5..]), java_text);
        assert_eq!(&ours[..5], &python[..5]);
        let read: Value = decode(SchemaId::Id(id), payload, None).unwrap();
        assert_eq!(read, value, "{python_text}");
        assert_eq!(
            python_deserialize(&ours, false).unwrap(),
            value,
            "{java_text}"
        );
    }
}

const ORDER: &str = r#"{
    "title": "Order",
    "type": "object",
    "properties": {"id": {"type": "integer", "minimum": 1}, "note": {"type": "string", "maxLength": 5}},
    "required": ["id"]
}"#;

/// Validation agrees with Confluent's: a value the schema accepts is
/// written by both, one it rejects is refused by both serializers when
/// validating and written identically by both when not; both
/// deserializers refuse it when validating.
#[test]
fn validation_agrees_with_python() {
    let schema = JsonSchema::new(ORDER).unwrap();
    let good = json!({"id": 3, "note": "ok"});
    let python = python_serialize("orders", ORDER, &good, true).unwrap();
    assert!(schema.validate(&good).is_ok());
    let (id, _) = split(&python);
    assert_eq!(&encode(id, &good).unwrap()[..], &python[..]);

    for bad in [
        json!({"id": 0}),
        json!({"note": "x"}),
        json!({"id": 1, "note": "too long"}),
        json!([1]),
    ] {
        let refused = python_serialize("orders", ORDER, &bad, true);
        assert!(refused.is_err(), "python accepted {bad}");
        let Err(SerdeError::Encode { reason }) = schema.validate(&bad) else {
            panic!("we accepted {bad}")
        };
        assert!(reason.starts_with("at \""), "{reason}");
        // Validation off: both write it, identically.
        let python = python_serialize("orders", ORDER, &bad, false).unwrap();
        let ours = encode(id, &bad).unwrap();
        assert_eq!(&ours[..], &python[..]);
        // Deserializers with validation refuse it, without read it.
        assert!(python_deserialize(&ours, true).is_err(), "{bad}");
        assert!(python_deserialize(&ours, false).is_ok(), "{bad}");
        let e = decode::<Value>(SchemaId::Id(id), &python[5..], Some(&schema)).unwrap_err();
        assert!(matches!(e, SerdeError::Decode { .. }), "{e:?}");
        assert_eq!(
            decode::<Value>(SchemaId::Id(id), &python[5..], None).unwrap(),
            bad
        );
    }
}

/// A `$ref` to another registered schema (Confluent's JSON Schema
/// references): Python resolves it from the registry, we from the given
/// set; both accept and refuse the same values, and write the same bytes.
#[test]
fn references_validate_as_python_resolves_them() {
    const ADDRESS: &str =
        r#"{"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}"#;
    const CUSTOMER: &str = r#"{"title": "Customer", "type": "object",
        "properties": {"name": {"type": "string"}, "address": {"$ref": "address.json"}},
        "required": ["address"]}"#;
    let registered = ask(json!({"op": "register", "subject": "address.json", "schema": ADDRESS}));
    let version = registered["version"].as_i64().expect("registered") as i32;
    let refs = [("address.json", "address.json", version)];
    let customer = JsonSchema::with_references(
        CUSTOMER,
        [("address.json", JsonSchema::new(ADDRESS).unwrap())],
    )
    .unwrap();

    let good = json!({"address": {"city": "Oslo"}, "name": "Ada"});
    let python = python_serialize_with_refs("customers", CUSTOMER, &refs, &good, true).unwrap();
    assert!(customer.validate(&good).is_ok());
    let (id, _) = split(&python);
    assert_eq!(&encode(id, &good).unwrap()[..], &python[..]);
    // The deserializer's view: the fetched schema with its references.
    assert_eq!(python_deserialize(&python, true).unwrap(), good);

    for bad in [
        json!({"address": {}}),
        json!({"address": {"city": 7}}),
        json!({"name": "x"}),
    ] {
        assert!(
            python_serialize_with_refs("customers", CUSTOMER, &refs, &bad, true).is_err(),
            "{bad}"
        );
        assert!(customer.validate(&bad).is_err(), "{bad}");
        assert!(
            python_deserialize(&encode(id, &bad).unwrap(), true).is_err(),
            "{bad}"
        );
    }
}

/// Draft 2020-12 named by `$schema` (`prefixItems`, `$defs`,
/// `unevaluatedProperties`): we accept and refuse what Python does.
#[test]
fn draft_2020_12_agrees_with_python() {
    const POINT: &str = r##"{
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Point",
        "type": "object",
        "properties": {"xy": {"$ref": "#/$defs/pair"}},
        "unevaluatedProperties": false,
        "$defs": {"pair": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}], "items": false}}
    }"##;
    let schema = JsonSchema::new(POINT).unwrap();
    for (value, valid) in [
        (json!({"xy": [1, 2.5]}), true),
        (json!({}), true),
        (json!({"xy": [1, "2"]}), false),
        (json!({"xy": [1, 2, 3]}), false),
        (json!({"xy": [1, 2], "z": 0}), false),
    ] {
        let python = python_serialize("points", POINT, &value, true);
        assert_eq!(python.is_ok(), valid, "python on {value}: {python:?}");
        assert_eq!(schema.validate(&value).is_ok(), valid, "we on {value}");
    }
}

/// Draft 7 named by `$schema` (tuple `items`, `additionalItems`,
/// `dependencies`): we accept and refuse what Python does.
#[test]
fn draft_7_agrees_with_python() {
    const PAIR: &str = r#"{
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "Pair",
        "type": "object",
        "properties": {"p": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}], "additionalItems": false}},
        "dependencies": {"a": ["b"]}
    }"#;
    let schema = JsonSchema::new(PAIR).unwrap();
    for (value, valid) in [
        (json!({"p": ["x", 1]}), true),
        (json!({"a": 1, "b": 2}), true),
        (json!({"p": [1, "x"]}), false),
        (json!({"p": ["x", 1, 2]}), false),
        (json!({"a": 1}), false),
    ] {
        let python = python_serialize("pairs", PAIR, &value, true);
        assert_eq!(python.is_ok(), valid, "python on {value}: {python:?}");
        assert_eq!(schema.validate(&value).is_ok(), valid, "we on {value}");
    }
}
