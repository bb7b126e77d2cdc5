//! Schema evolution, typed values, bad values and corrupt payloads.

use super::codec::{decode_serde, decode_value, encode_serde, encode_value};
use super::schema::AvroSchema;
use crate::error::SerdeError;
use apache_avro::types::Value;
use proptest::prelude::*;

const V1: &str = r#"{"type":"record","name":"User","namespace":"app","fields":[
  {"name":"id","type":"int"},{"name":"name","type":"string"}]}"#;
const V2: &str = r#"{"type":"record","name":"User","namespace":"app","fields":[
  {"name":"id","type":"long"},{"name":"name","type":"string"},
  {"name":"plan","type":"string","default":"free"}]}"#;

fn schema(text: &str) -> AvroSchema {
    AvroSchema::parse(text).expect("schema parses")
}

fn encode(text: &str, value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    encode_value(schema(text).schema(), value, &mut out).expect("encodes");
    out
}

#[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct UserV1 {
    id: i32,
    name: String,
}

#[derive(Debug, PartialEq, serde::Deserialize)]
struct UserV2 {
    id: i64,
    name: String,
    plan: String,
}

/// A v2 reader reads v1 data: the added field takes its default, int is
/// promoted to long.
#[test]
fn reader_v2_reads_writer_v1_with_default_and_promotion() {
    let payload = encode(
        V1,
        &Value::Record(vec![
            ("id".into(), Value::Int(7)),
            ("name".into(), Value::String("ann".into())),
        ]),
    );
    let back = decode_value(
        schema(V1).schema(),
        Some(schema(V2).schema()),
        &payload,
        "id 1",
    )
    .unwrap();
    assert_eq!(
        back,
        Value::Record(vec![
            ("id".into(), Value::Long(7)),
            ("name".into(), Value::String("ann".into())),
            ("plan".into(), Value::String("free".into())),
        ])
    );
    let typed: UserV2 = decode_serde(
        schema(V1).schema(),
        Some(schema(V2).schema()),
        &payload,
        "id 1",
    )
    .unwrap();
    assert_eq!(
        typed,
        UserV2 {
            id: 7,
            name: "ann".into(),
            plan: "free".into()
        }
    );
}

/// A v1 reader reads v2 data: the field it does not know is skipped.
#[test]
fn reader_v1_reads_writer_v2_dropping_the_new_field() {
    const V2_INT: &str = r#"{"type":"record","name":"User","namespace":"app","fields":[
      {"name":"id","type":"int"},{"name":"plan","type":"string","default":"free"},{"name":"name","type":"string"}]}"#;
    let payload = encode(
        V2_INT,
        &Value::Record(vec![
            ("id".into(), Value::Int(9)),
            ("plan".into(), Value::String("pro".into())),
            ("name".into(), Value::String("bo".into())),
        ]),
    );
    let typed: UserV1 = decode_serde(
        schema(V2_INT).schema(),
        Some(schema(V1).schema()),
        &payload,
        "id 2",
    )
    .unwrap();
    assert_eq!(
        typed,
        UserV1 {
            id: 9,
            name: "bo".into()
        }
    );
}

/// A reader that needs a field the writer lacks and has no default for it
/// gets a Decode error, not a made-up value.
#[test]
fn incompatible_reader_is_a_decode_error() {
    const NEEDS: &str = r#"{"type":"record","name":"User","namespace":"app","fields":[
      {"name":"id","type":"int"},{"name":"name","type":"string"},{"name":"age","type":"int"}]}"#;
    let payload = encode(
        V1,
        &Value::Record(vec![
            ("id".into(), Value::Int(1)),
            ("name".into(), Value::String("x".into())),
        ]),
    );
    let err = decode_value(
        schema(V1).schema(),
        Some(schema(NEEDS).schema()),
        &payload,
        "id 3",
    )
    .unwrap_err();
    assert!(
        matches!(&err, SerdeError::Decode { schema, .. } if schema == "id 3"),
        "{err}"
    );
}

/// serde types encode to the same bytes as the generic value and decode back.
#[test]
fn serde_types_match_generic_values() {
    let user = UserV1 {
        id: -5,
        name: "ünï".into(),
    };
    let mut typed = Vec::new();
    encode_serde(schema(V1).schema(), &user, &mut typed).unwrap();
    let generic = encode(
        V1,
        &Value::Record(vec![
            ("id".into(), Value::Int(-5)),
            ("name".into(), Value::String("ünï".into())),
        ]),
    );
    assert_eq!(typed, generic);
    let back: UserV1 = decode_serde(schema(V1).schema(), None, &typed, "id 4").unwrap();
    assert_eq!(back, user);
}

/// Top-level bytes go raw both ways, for serde types too.
#[test]
fn top_level_bytes_are_raw() {
    let s = schema(r#""bytes""#);
    let mut out = Vec::new();
    encode_value(s.schema(), &Value::Bytes(b"abc".to_vec()), &mut out).unwrap();
    assert_eq!(out, b"abc");
    assert_eq!(
        decode_value(s.schema(), None, b"", "id 5").unwrap(),
        Value::Bytes(Vec::new())
    );
    let back: serde_bytes::ByteBuf = decode_serde(s.schema(), None, b"\x00\xff", "id 5").unwrap();
    assert_eq!(back.as_ref(), b"\x00\xff");
}

/// A value that does not fit names the field that is wrong.
#[test]
fn a_wrong_value_names_the_field() {
    const NESTED: &str = r#"{"type":"record","name":"Outer","fields":[
      {"name":"inner","type":{"type":"record","name":"Inner","fields":[{"name":"count","type":"long"}]}}]}"#;
    let bad = Value::Record(vec![(
        "inner".into(),
        Value::Record(vec![("count".into(), Value::String("seven".into()))]),
    )]);
    let mut out = Vec::new();
    let err = encode_value(schema(NESTED).schema(), &bad, &mut out).unwrap_err();
    match err {
        SerdeError::Encode { reason } => assert!(reason.contains("value.inner.count"), "{reason}"),
        other => panic!("{other}"),
    }
    assert!(out.is_empty(), "nothing half-written");
    let missing = Value::Record(vec![("inner".into(), Value::Record(vec![]))]);
    let err = encode_value(schema(NESTED).schema(), &missing, &mut out).unwrap_err();
    assert!(
        err.to_string().contains("value.inner.count: missing"),
        "{err}"
    );
}

/// A serde value that does not fit is an Encode error too.
#[test]
fn a_wrong_serde_value_is_an_encode_error() {
    #[derive(serde::Serialize)]
    struct Wrong {
        id: String,
    }
    let mut out = Vec::new();
    let err = encode_serde(schema(V1).schema(), &Wrong { id: "x".into() }, &mut out).unwrap_err();
    assert!(matches!(err, SerdeError::Encode { .. }), "{err}");
    assert!(out.is_empty());
}

/// Truncated payloads, trailing bytes and a payload of another schema are
/// Decode errors naming the schema id.
#[test]
fn malformed_payloads_are_decode_errors() {
    let payload = encode(
        V1,
        &Value::Record(vec![
            ("id".into(), Value::Int(300)),
            ("name".into(), Value::String("long name".into())),
        ]),
    );
    for cut in 0..payload.len() {
        let err = decode_value(schema(V1).schema(), None, &payload[..cut], "id 6").unwrap_err();
        assert!(
            matches!(&err, SerdeError::Decode { schema, .. } if schema == "id 6"),
            "cut {cut}: {err}"
        );
    }
    let mut longer = payload.clone();
    longer.push(0);
    let err = decode_value(schema(V1).schema(), None, &longer, "id 6").unwrap_err();
    assert!(err.to_string().contains("1 bytes left"), "{err}");
    // An enum index beyond the symbols.
    let e = schema(r#"{"type":"enum","name":"E","symbols":["A"]}"#);
    assert!(matches!(
        decode_value(e.schema(), None, &[0x04], "id 7"),
        Err(SerdeError::Decode { .. })
    ));
}

/// A string or array claiming far more than the payload holds fails
/// without allocating what it claims beyond the limit.
#[test]
fn huge_claimed_lengths_are_decode_errors() {
    super::codec::limit_allocations();
    // A string of 2^62 bytes, then of 60 MiB (under the limit, but not there).
    for claim in [i64::MAX / 2, 60 * 1024 * 1024] {
        let mut payload = Vec::new();
        let mut z = (claim as u64) << 1;
        while z >= 0x80 {
            payload.push((z as u8) | 0x80);
            z >>= 7;
        }
        payload.push(z as u8);
        payload.extend_from_slice(b"abc");
        let err = decode_value(&apache_avro::Schema::String, None, &payload, "id 8").unwrap_err();
        assert!(matches!(err, SerdeError::Decode { .. }), "{err}");
        let arr = schema(r#"{"type":"array","items":"null"}"#);
        let err = decode_value(arr.schema(), None, &payload, "id 8").unwrap_err();
        assert!(matches!(err, SerdeError::Decode { .. }), "{err}");
    }
}

proptest! {
    /// Decoding arbitrary bytes with a schema of every kind never panics.
    #[test]
    fn decoding_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        super::codec::limit_allocations();
        let kinds = [
            V2,
            r#"{"type":"array","items":{"type":"map","values":["null","string","bytes"]}}"#,
            r#"{"type":"record","name":"N","fields":[{"name":"d","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},{"name":"u","type":{"type":"string","logicalType":"uuid"}},{"name":"f","type":{"type":"fixed","name":"F","size":3}},{"name":"e","type":{"type":"enum","name":"E","symbols":["A","B"]}},{"name":"x","type":"double"}]}"#,
            r#"{"type":"record","name":"List","fields":[{"name":"next","type":["null","List"]}]}"#,
            r#""bytes""#,
        ];
        for k in kinds {
            let s = schema(k);
            let _ = decode_value(s.schema(), None, &bytes, "fuzz");
            let _ = decode_value(s.schema(), Some(s.schema()), &bytes, "fuzz");
        }
        let _: Result<UserV1, _> = decode_serde(schema(V1).schema(), None, &bytes, "fuzz");
    }
}
