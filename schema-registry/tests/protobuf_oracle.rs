//! Byte-exactness of the Protobuf format against Confluent's own Python
//! `ProtobufSerializer` and `ProtobufDeserializer` (confluent-kafka, with an
//! in-process `mock://` registry): the same message-index bytes and payload
//! for the same message, each side decoding the other's frame, and the same
//! references registered under the same import paths.
//!
//! Needs the oracle: `bash testcontainers/install-confluent-python.sh`.
//! One Python process serves every test of this binary.
#![cfg(feature = "protobuf")]

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use kafka_schema_registry::{LocalSchema, ProtobufSchema, wire};
use prost::Message as _;
use prost_reflect::{DynamicMessage, MapKey, ReflectMessage, Value};
use serde_json::json;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Mutex, OnceLock};

const CURRENCY: &str = r#"syntax = "proto3";
package shop;
message Currency { string code = 1; }
"#;

const MONEY: &str = r#"syntax = "proto3";
package shop;
import "currency.proto";
message Money { int64 units = 1; Currency currency = 2; }
"#;

const SHOP: &str = r#"syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";
import "money.proto";

message Customer { string name = 1; }
message Order {
  message Line { Money price = 1; int32 qty = 2; }
  enum Status { NEW = 0; PAID = 1; }
  repeated Line lines = 1;
  map<string, string> tags = 2;
  Status status = 3;
  google.protobuf.Timestamp at = 4;
  oneof payment { string card = 5; int64 voucher = 6; }
  message Audit { string by = 1; }
}
message Deep {
  message A {
    message X0 {}
    message X1 {}
    message X2 {}
    message X3 { string leaf = 1; }
  }
  message B { int32 b = 1; }
}
message Scalars {
  int32 neg = 1;
  sint64 zig = 2;
  fixed32 fixed = 3;
  double real = 4;
  bool flag = 5;
  bytes blob = 6;
  repeated int32 packed = 7;
  string text = 8;
  uint64 big = 536870911;
}
"#;

const NO_PACKAGE: &str = r#"syntax = "proto2";
message First { optional int32 a = 1; }
message Second { required string s = 1; repeated int64 unpacked = 2; }
message Third { message Inner { optional bool ok = 1; } optional Inner inner = 1; }
"#;

fn shop() -> ProtobufSchema {
    ProtobufSchema::from_proto(
        SHOP,
        &[("money.proto", MONEY), ("currency.proto", CURRENCY)],
    )
    .expect("the shop schema compiles")
}

/// The oracle process, shared by the tests of this binary.
struct Oracle {
    /// The Python process; it exits when its stdin closes.
    _child: Child,
    /// Requests, one JSON line each.
    stdin: ChildStdin,
    /// Answers, one JSON line each.
    stdout: BufReader<ChildStdout>,
}

fn oracle_python() -> PathBuf {
    kafka_testcontainers::confluent_python().unwrap_or_else(|e| {
        panic!("Confluent's Python serializers (the byte-exactness oracle): {e}")
    })
}

fn ask(request: serde_json::Value) -> serde_json::Value {
    static ORACLE: OnceLock<Mutex<Oracle>> = OnceLock::new();
    let oracle = ORACLE.get_or_init(|| {
        let script =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/oracle/protobuf_oracle.py");
        let mut child = Command::new(oracle_python())
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the Confluent Python oracle");
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        Mutex::new(Oracle {
            _child: child,
            stdin,
            stdout,
        })
    });
    let mut oracle = oracle.lock().unwrap_or_else(|e| e.into_inner());
    writeln!(oracle.stdin, "{request}").expect("write to the oracle");
    oracle.stdin.flush().expect("flush to the oracle");
    let mut line = String::new();
    oracle.stdout.read_line(&mut line).expect("read the oracle");
    assert!(!line.is_empty(), "the oracle exited without answering");
    let answer: serde_json::Value = serde_json::from_str(&line).expect("the oracle answers JSON");
    if let Some(error) = answer.get("error") {
        panic!("the oracle failed:\n{}", error.as_str().unwrap_or_default());
    }
    answer
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

/// Sends `message` to the oracle and checks both directions: returns the
/// oracle's answer for further checks.
///
/// - our indexes are `expected` and Confluent's index bytes are ours;
/// - with `exact`, Confluent's payload is ours byte for byte;
/// - Confluent decodes our frame to the same message;
/// - we decode Confluent's frame to the same message.
fn check(
    schema: &ProtobufSchema,
    message: &DynamicMessage,
    expected: &[i32],
    exact: bool,
) -> serde_json::Value {
    let name = message.descriptor().full_name().to_owned();
    let indexes = schema
        .message_indexes(&name)
        .expect("a message of the root file");
    assert_eq!(indexes, expected, "indexes of {name}");
    let payload = message.encode_to_vec();
    let mut ours = Vec::new();
    wire::write_message_indexes(&indexes, &mut ours);
    let index_len = ours.len();
    ours.extend_from_slice(&payload);

    let files: Vec<String> = schema
        .pool()
        .files()
        .map(|f| BASE64.encode(f.encode_to_vec()))
        .collect();
    let answer = ask(json!({
        "files": files,
        "message": name,
        "payload": hex(&payload),
        "ours": hex(&ours),
        "topic": "orders",
    }));
    let theirs = unhex(answer["theirs"].as_str().unwrap());
    assert_eq!(
        hex(&theirs[..index_len]),
        hex(&ours[..index_len]),
        "index bytes of {name}"
    );
    if exact {
        assert_eq!(
            answer["theirs"].as_str().unwrap(),
            hex(&ours),
            "frame of {name}"
        );
        assert_eq!(
            answer["reencoded"].as_str().unwrap(),
            hex(&payload),
            "payload of {name}"
        );
    }
    assert_eq!(answer["equal"], json!(true), "Confluent decodes our {name}");

    let mut framed = Vec::new();
    wire::write_prefix(1, &mut framed);
    framed.extend_from_slice(&theirs);
    let frame = wire::read_frame(&framed, None, true).expect("Confluent's frame reads");
    let desc = schema
        .message_by_indexes(frame.indexes.as_deref().unwrap())
        .expect("Confluent's indexes name a message");
    assert_eq!(desc.full_name(), name);
    let back = DynamicMessage::decode(desc, frame.payload).expect("Confluent's payload decodes");
    assert_eq!(&back, message, "we decode Confluent's {name}");
    answer
}

fn empty(schema: &ProtobufSchema, name: &str) -> DynamicMessage {
    DynamicMessage::new(schema.message(name).unwrap_or_else(|| panic!("{name}")))
}

/// Invariant: nested and top-level messages get Confluent's message indexes
/// ([0], [1], [1,0], [1,2], [2,0,3], [2,1]) and Confluent's index bytes.
#[test]
fn nested_message_indexes_match_confluents() {
    let s = shop();
    let mut x3 = empty(&s, "shop.Deep.A.X3");
    x3.set_field_by_name("leaf", Value::String("deep".into()));
    let mut b = empty(&s, "shop.Deep.B");
    b.set_field_by_name("b", Value::I32(-1));
    let mut audit = empty(&s, "shop.Order.Audit");
    audit.set_field_by_name("by", Value::String("ops".into()));
    let mut customer = empty(&s, "shop.Customer");
    customer.set_field_by_name("name", Value::String("Ada".into()));
    let mut line = empty(&s, "shop.Order.Line");
    line.set_field_by_name("qty", Value::I32(2));
    for (message, expected) in [
        (customer, &[0][..]),
        (empty(&s, "shop.Order"), &[1]),
        (line, &[1, 0]),
        (audit, &[1, 2]),
        (x3, &[2, 0, 3]),
        (b, &[2, 1]),
    ] {
        check(&s, &message, expected, true);
    }
}

/// Invariant: a message using an import (references), a well-known type
/// (Timestamp), an enum, a repeated message field, a map and a oneof encodes
/// to Confluent's bytes, and Confluent registers the same references under
/// the same import paths as our registered form names.
#[test]
fn imports_well_known_types_enums_maps_and_oneofs_match_confluents() {
    let s = shop();
    let mut currency = empty(&s, "shop.Currency");
    currency.set_field_by_name("code", Value::String("EUR".into()));
    let mut price = empty(&s, "shop.Money");
    price.set_field_by_name("units", Value::I64(1250));
    price.set_field_by_name("currency", Value::Message(currency));
    let mut line = empty(&s, "shop.Order.Line");
    line.set_field_by_name("price", Value::Message(price));
    line.set_field_by_name("qty", Value::I32(3));
    let mut at = empty(&s, "google.protobuf.Timestamp");
    at.set_field_by_name("seconds", Value::I64(1_700_000_000));
    at.set_field_by_name("nanos", Value::I32(123));
    let mut order = empty(&s, "shop.Order");
    order.set_field_by_name(
        "lines",
        Value::List(vec![Value::Message(line.clone()), Value::Message(line)]),
    );
    order.set_field_by_name(
        "tags",
        Value::Map(HashMap::from([(
            MapKey::String("gift".into()),
            Value::String("yes".into()),
        )])),
    );
    order.set_field_by_name("status", Value::EnumNumber(1));
    order.set_field_by_name("at", Value::Message(at));
    order.set_field_by_name("card", Value::String("4111".into()));
    let answer = check(&s, &order, &[1], true);

    let local = s.local_schema(true);
    let ours: Vec<_> = local
        .references
        .iter()
        .map(|r| json!([r.name, r.name, 1]))
        .collect();
    assert_eq!(answer["references"], json!(ours));
    let mut subjects = Vec::new();
    collect_names(&local, &mut subjects);
    subjects.push("orders-value".to_owned());
    subjects.sort();
    assert_eq!(answer["subjects"], json!(subjects));
}

fn collect_names(local: &LocalSchema, out: &mut Vec<String>) {
    for r in &local.references {
        collect_names(&r.schema, out);
        if !out.contains(&r.name) {
            out.push(r.name.clone());
        }
    }
}

/// Invariant: every scalar encoding (negative int32, zigzag, fixed, double,
/// bool, bytes, packed repeated, UTF-8, the largest field number) matches
/// Confluent's bytes.
#[test]
fn scalar_encodings_match_confluents() {
    let s = shop();
    let mut m = empty(&s, "shop.Scalars");
    m.set_field_by_name("neg", Value::I32(-5));
    m.set_field_by_name("zig", Value::I64(-300));
    m.set_field_by_name("fixed", Value::U32(0xdead_beef));
    m.set_field_by_name("real", Value::F64(-1.5e300));
    m.set_field_by_name("flag", Value::Bool(true));
    m.set_field_by_name("blob", Value::Bytes(vec![0, 255, 7].into()));
    m.set_field_by_name(
        "packed",
        Value::List(vec![Value::I32(1), Value::I32(-1), Value::I32(300)]),
    );
    m.set_field_by_name("text", Value::String("grüße ✓".into()));
    m.set_field_by_name("big", Value::U64(u64::MAX));
    check(&s, &m, &[3], true);
}

/// Invariant: a map of several entries, whose entry order on the wire is not
/// fixed, decodes to the same message on each side.
#[test]
fn multi_entry_maps_decode_on_both_sides() {
    let s = shop();
    let mut order = empty(&s, "shop.Order");
    let tags = (0..5)
        .map(|i| {
            (
                MapKey::String(format!("k{i}")),
                Value::String(format!("v{i}")),
            )
        })
        .collect();
    order.set_field_by_name("tags", Value::Map(tags));
    check(&s, &order, &[1], false);
}

/// Invariant: a proto2 file without a package (several top-level messages,
/// a required field, unpacked repeated) frames as Confluent does.
#[test]
fn proto2_file_without_package_matches_confluents() {
    let s = ProtobufSchema::from_proto(NO_PACKAGE, &[]).unwrap();
    let mut second = empty(&s, "Second");
    second.set_field_by_name("s", Value::String("x".into()));
    second.set_field_by_name("unpacked", Value::List(vec![Value::I64(1), Value::I64(2)]));
    check(&s, &second, &[1], true);
    let mut inner = empty(&s, "Third.Inner");
    inner.set_field_by_name("ok", Value::Bool(false));
    check(&s, &inner, &[2, 0], true);
    let mut first = empty(&s, "First");
    first.set_field_by_name("a", Value::I32(0));
    check(&s, &first, &[0], true);
}
