//! The Avro serdes end to end against a real registry (Apicurio Registry
//! serving Confluent's API), and against Confluent's Python serializers
//! pointed at the same registry.

use apache_avro::types::Value;
use kafka_client::Properties;
use kafka_schema_registry::{
    AvroDeserializer, AvroSchema, AvroSerializer, ReaderSchema, RecordDeserializer,
    RecordSerializer, RegistryError, SerdeError, SerializationContext, SubjectNameStrategy, Typed,
};
use kafka_testcontainers::SchemaRegistry;
use std::process::Stdio;
use std::time::Duration;

const USER_V1: &str = r#"{"type":"record","name":"User","namespace":"it","fields":[{"name":"id","type":"long"},{"name":"name","type":"string"}]}"#;
const USER_V2: &str = r#"{"type":"record","name":"User","namespace":"it","fields":[{"name":"id","type":"long"},{"name":"name","type":"string"},{"name":"plan","type":"string","default":"free"}]}"#;

fn props(url: &str, extra: &[(&str, &str)]) -> Properties {
    let mut all = vec![("schema.registry.url", url)];
    all.extend_from_slice(extra);
    Properties::new(all)
}

fn user(id: i64, name: &str) -> Value {
    Value::Record(vec![
        ("id".into(), Value::Long(id)),
        ("name".into(), Value::String(name.into())),
    ])
}

/// Invariant: a generic record serialized with auto-registration decodes
/// back to the same record, and the registry stores our text as given.
#[tokio::test(flavor = "multi_thread")]
async fn generic_record_round_trips_through_the_registry() {
    let registry = SchemaRegistry::shared().await.expect("registry");
    let url = registry.url();
    let ser: AvroSerializer =
        AvroSerializer::from_properties(&mut props(&url, &[]), AvroSchema::parse(USER_V1).unwrap())
            .unwrap();
    let de: AvroDeserializer =
        AvroDeserializer::from_properties(&mut props(&url, &[]), ReaderSchema::Writer).unwrap();
    let ctx = SerializationContext::value("avro-roundtrip");
    let bytes = ser.serialize(&ctx, &user(1, "ann")).await.unwrap();
    assert_eq!(bytes[0], 0, "prefix form");
    assert_eq!(de.deserialize(&ctx, &bytes).await.unwrap(), user(1, "ann"));
    let id = i32::from_be_bytes(bytes[1..5].try_into().unwrap());
    let client =
        kafka_schema_registry::SchemaRegistryClient::from_properties(&mut props(&url, &[]))
            .unwrap();
    assert_eq!(client.schema_by_id(id).await.unwrap().schema, USER_V1);
}

/// Invariant: with auto.register.schemas=false, a schema registered
/// before is found by look-up (same text, same id) and an unknown one is
/// a registry error, not a silently registered schema.
#[tokio::test(flavor = "multi_thread")]
async fn lookup_only_finds_registered_text() {
    let registry = SchemaRegistry::shared().await.expect("registry");
    let url = registry.url();
    let ctx = SerializationContext::value("avro-lookup");
    let register: AvroSerializer =
        AvroSerializer::from_properties(&mut props(&url, &[]), AvroSchema::parse(USER_V1).unwrap())
            .unwrap();
    let first = register.serialize(&ctx, &user(2, "bo")).await.unwrap();
    let lookup: AvroSerializer = AvroSerializer::from_properties(
        &mut props(&url, &[("auto.register.schemas", "false")]),
        AvroSchema::parse(USER_V1).unwrap(),
    )
    .unwrap();
    assert_eq!(lookup.serialize(&ctx, &user(2, "bo")).await.unwrap(), first);
    let unknown: AvroSerializer = AvroSerializer::from_properties(
        &mut props(&url, &[("auto.register.schemas", "false")]),
        AvroSchema::parse(USER_V2).unwrap(),
    )
    .unwrap();
    let err = unknown.serialize(&ctx, &user(2, "bo")).await.unwrap_err();
    assert!(
        matches!(err, kafka_schema_registry::SerdeError::Registry(_)),
        "{err}"
    );
}

/// Invariant: a reader on the subject's latest version (v2, a field added
/// with a default) reads v1 data with the default filled in.
#[tokio::test(flavor = "multi_thread")]
async fn latest_reader_schema_resolves_old_data() {
    let registry = SchemaRegistry::shared().await.expect("registry");
    let url = registry.url();
    let ctx = SerializationContext::value("avro-evolution");
    let v1: AvroSerializer =
        AvroSerializer::from_properties(&mut props(&url, &[]), AvroSchema::parse(USER_V1).unwrap())
            .unwrap();
    let old = v1.serialize(&ctx, &user(3, "cy")).await.unwrap();
    #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
    struct UserV2 {
        id: i64,
        name: String,
        plan: String,
    }
    let v2 = AvroSerializer::<Typed<UserV2>>::from_properties(
        &mut props(&url, &[]),
        AvroSchema::parse(USER_V2).unwrap(),
    )
    .unwrap();
    v2.serialize(
        &ctx,
        &UserV2 {
            id: 4,
            name: "di".into(),
            plan: "pro".into(),
        },
    )
    .await
    .unwrap();
    let de = AvroDeserializer::<Typed<UserV2>>::from_properties(
        &mut props(&url, &[]),
        ReaderSchema::Latest(SubjectNameStrategy::TopicName),
    )
    .unwrap();
    assert_eq!(
        de.deserialize(&ctx, &old).await.unwrap(),
        UserV2 {
            id: 3,
            name: "cy".into(),
            plan: "free".into()
        }
    );
}

/// Invariant: `use.latest.version=true` in the deserializer's settings
/// reads old data with the subject's latest schema, as Confluent's
/// deserializer does, without the application naming a reader schema.
#[tokio::test(flavor = "multi_thread")]
async fn use_latest_version_setting_resolves_old_data() {
    let registry = SchemaRegistry::shared().await.expect("registry");
    let url = registry.url();
    let ctx = SerializationContext::value("avro-latest-setting");
    let v1: AvroSerializer =
        AvroSerializer::from_properties(&mut props(&url, &[]), AvroSchema::parse(USER_V1).unwrap())
            .unwrap();
    let old = v1.serialize(&ctx, &user(5, "ed")).await.unwrap();
    let v2: AvroSerializer =
        AvroSerializer::from_properties(&mut props(&url, &[]), AvroSchema::parse(USER_V2).unwrap())
            .unwrap();
    let mut v2_user = user(6, "fa");
    if let Value::Record(fields) = &mut v2_user {
        fields.push(("plan".into(), Value::String("pro".into())));
    }
    v2.serialize(&ctx, &v2_user).await.unwrap();
    let de: AvroDeserializer = AvroDeserializer::from_properties(
        &mut props(&url, &[("use.latest.version", "true")]),
        ReaderSchema::Writer,
    )
    .unwrap();
    let mut expected = user(5, "ed");
    if let Value::Record(fields) = &mut expected {
        fields.push(("plan".into(), Value::String("free".into())));
    }
    assert_eq!(de.deserialize(&ctx, &old).await.unwrap(), expected);
}

/// Invariant: a schema with a reference registers the referenced schema
/// under its full name first, and the reader resolves it by id.
#[tokio::test(flavor = "multi_thread")]
async fn references_register_and_resolve() {
    let registry = SchemaRegistry::shared().await.expect("registry");
    let url = registry.url();
    let address = AvroSchema::parse(r#"{"type":"record","name":"Address","namespace":"it","fields":[{"name":"city","type":"string"}]}"#).unwrap();
    let order = AvroSchema::with_references(
        r#"{"type":"record","name":"Order","namespace":"it","fields":[{"name":"to","type":"Address"}]}"#,
        &[address],
    )
    .unwrap();
    let ser: AvroSerializer =
        AvroSerializer::from_properties(&mut props(&url, &[]), order).unwrap();
    let de: AvroDeserializer =
        AvroDeserializer::from_properties(&mut props(&url, &[]), ReaderSchema::Writer).unwrap();
    let ctx = SerializationContext::value("avro-refs");
    let value = Value::Record(vec![(
        "to".into(),
        Value::Record(vec![("city".into(), Value::String("Lyon".into()))]),
    )]);
    let bytes = ser.serialize(&ctx, &value).await.unwrap();
    assert_eq!(de.deserialize(&ctx, &bytes).await.unwrap(), value);
}

/// How long the oracle may take: its registry calls have no timeout of
/// their own, and a stuck one would otherwise hold the test forever.
const ORACLE_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs Confluent's Python serializers on `script` with `input` on stdin;
/// its stdout. Fails, with its stderr, when it fails or outlives
/// [`ORACLE_TIMEOUT`] (then it is killed).
async fn run_oracle(script: &str, input: &str) -> Vec<u8> {
    use tokio::io::AsyncWriteExt as _;
    let python = kafka_testcontainers::confluent_python().unwrap_or_else(|e| {
        panic!("Confluent's Python serializers (the byte-exactness oracle): {e}")
    });
    let mut child = tokio::process::Command::new(python)
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).await.unwrap();
    drop(stdin);
    let out = tokio::time::timeout(ORACLE_TIMEOUT, child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("the oracle ran longer than {ORACLE_TIMEOUT:?} and was killed"))
        .unwrap();
    assert!(
        out.status.success(),
        "the oracle failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Invariant: Confluent's Python serializer and ours, on the same registry
/// and subject, write identical frames (same id, same payload), and each
/// side reads the other's.
#[tokio::test(flavor = "multi_thread")]
async fn confluent_python_and_ours_interoperate_through_the_registry() {
    let registry = SchemaRegistry::shared().await.expect("registry");
    let url = registry.url();
    let ctx = SerializationContext::value("avro-python");
    let ser: AvroSerializer =
        AvroSerializer::from_properties(&mut props(&url, &[]), AvroSchema::parse(USER_V1).unwrap())
            .unwrap();
    let ours = ser.serialize(&ctx, &user(5, "éva")).await.unwrap();
    let script = r#"
import json, sys
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer, AvroDeserializer
from confluent_kafka.serialization import SerializationContext, MessageField
url, schema, ours = sys.stdin.read().split("\n")[:3]
# A request timeout: the client's default is none (a lost answer hangs).
client = SchemaRegistryClient({"url": url, "timeout": 20})
ctx = SerializationContext("avro-python", MessageField.VALUE)
theirs = AvroSerializer(client, schema)({"id": 5, "name": "éva"}, ctx)
back = AvroDeserializer(client)(bytes.fromhex(ours), ctx)
print(json.dumps({"theirs": theirs.hex(), "back": back}))
"#;
    let hex: String = ours.iter().map(|b| format!("{b:02x}")).collect();
    let stdout = run_oracle(script, &format!("{url}\n{USER_V1}\n{hex}\n")).await;
    let answer: serde_json::Value = serde_json::from_slice(&stdout).unwrap();
    assert_eq!(
        answer["theirs"].as_str().unwrap(),
        hex,
        "same id, same payload"
    );
    assert_eq!(answer["back"], serde_json::json!({"id": 5, "name": "éva"}));
    let de: AvroDeserializer =
        AvroDeserializer::from_properties(&mut props(&url, &[]), ReaderSchema::Writer).unwrap();
    assert_eq!(de.deserialize(&ctx, &ours).await.unwrap(), user(5, "éva"));
}

/// Invariant: a record whose `__value_schema_id` header names its schema
/// by GUID (Confluent's header form) is decoded with the schema the
/// registry serves for that GUID: the deserializer asks the registry, and
/// a GUID the registry does not serve is the registry's typed refusal, not
/// a decode error. (Apicurio keeps no GUIDs: only the refusal is shown.)
#[tokio::test(flavor = "multi_thread")]
async fn a_guid_header_is_looked_up_in_the_registry() {
    let registry = SchemaRegistry::shared().await.expect("registry");
    let de: AvroDeserializer = AvroDeserializer::from_properties(
        &mut props(&registry.url(), &[("max.retries", "0")]),
        ReaderSchema::Writer,
    )
    .unwrap();
    let mut header = vec![1u8];
    header.extend_from_slice(&[0x3c; 16]);
    let headers = [kafka_proto::record::RecordHeader {
        key: "__value_schema_id".into(),
        value: Some(header.into()),
    }];
    let ctx = SerializationContext {
        headers: &headers,
        ..SerializationContext::value("avro-guid")
    };
    let e = de.deserialize(&ctx, &[0x02, 0x06]).await.unwrap_err();
    assert!(
        matches!(
            e,
            SerdeError::Registry(RegistryError::Refused { status: 404, .. })
        ),
        "{e:?}"
    );
}
