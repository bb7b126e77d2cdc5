//! The Protobuf serializer and deserializers end to end against a real
//! registry (Apicurio Registry serving Confluent's API, started by
//! kafka-testcontainers): what gets registered under which subject, and
//! that what was written reads back.
#![cfg(feature = "protobuf")]

use kafka_client::Properties;
use kafka_schema_registry::{
    ProtobufDeserializer, ProtobufSchema, ProtobufSerializer, RecordDeserializer, RecordSerializer,
    SerdeError, SerializationContext, TypedProtobufDeserializer, wire,
};
use kafka_testcontainers::SchemaRegistry;
use prost::Message as _;
use prost_reflect::prost_types::{Duration, Timestamp};
use prost_reflect::{DynamicMessage, ReflectMessage, Value};
use std::time::{SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A name no other test of this run uses.
fn unique(prefix: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{prefix}-{nanos}")
}

/// One GET to the registry's Confluent API; the status and the JSON body.
async fn get(registry: &SchemaRegistry, path: &str) -> (u16, serde_json::Value) {
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", registry.port()))
        .await
        .unwrap();
    let req = format!(
        "GET /apis/ccompat/v7{path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAccept: application/vnd.schemaregistry.v1+json\r\n\r\n"
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    let status = out
        .get(9..12)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("GET {path}: not an HTTP response: {out:?}"));
    let body = out.split_once("\r\n\r\n").map(|x| x.1).unwrap_or("");
    let body = body.parse().unwrap_or(serde_json::Value::Null);
    (status, body)
}

fn props(registry: &SchemaRegistry) -> Properties {
    Properties::new([("schema.registry.url", registry.url())])
}

/// Invariant: a message whose file imports another is written with the
/// import registered first under its import path (and its own import under
/// its path), the root under `<topic>-value` referring to it, all as the
/// `.proto` text given; and the reader, fetching the schema and its
/// references by id, decodes the same message.
#[tokio::test(flavor = "multi_thread")]
async fn imports_register_under_their_paths_and_read_back() {
    let registry = SchemaRegistry::shared().await.expect("start the registry");
    let money_path = format!("{}.proto", unique("money"));
    let money = r#"syntax = "proto3";
package reg;
message Money { int64 units = 1; string currency = 2; }
"#;
    let root = format!(
        r#"syntax = "proto3";
package reg;
import "{money_path}";
message Order {{ message Line {{ Money price = 1; }} repeated Line lines = 1; }}
"#
    );
    let schema = ProtobufSchema::from_proto(&root, &[(&money_path, money)]).unwrap();
    let serializer = ProtobufSerializer::from_properties(&mut props(registry))
        .unwrap()
        .with_schema(schema.clone());
    let topic = unique("proto-orders");
    let ctx = SerializationContext::value(&topic);

    let mut price = DynamicMessage::new(schema.message("reg.Money").unwrap());
    price.set_field_by_name("units", Value::I64(995));
    let mut line = DynamicMessage::new(schema.message("reg.Order.Line").unwrap());
    line.set_field_by_name("price", Value::Message(price));
    let bytes = serializer.serialize(&ctx, &line).await.unwrap();
    let frame = wire::read_frame(&bytes, None, true).unwrap();
    assert_eq!(frame.indexes, Some(vec![0, 0]));

    let (status, import) = get(registry, &format!("/subjects/{money_path}/versions/latest")).await;
    assert_eq!(status, 200, "{import}");
    assert_eq!(import["schema"].as_str(), Some(money));
    let (status, latest) = get(
        registry,
        &format!("/subjects/{topic}-value/versions/latest"),
    )
    .await;
    assert_eq!(status, 200, "{latest}");
    assert_eq!(latest["schemaType"], "PROTOBUF");
    assert_eq!(latest["references"][0]["name"], money_path.as_str());
    assert_eq!(latest["references"][0]["subject"], money_path.as_str());
    assert_eq!(
        latest["id"].as_i64(),
        Some(i64::from(match frame.id {
            wire::SchemaId::Id(id) => id,
            other => panic!("{other}"),
        }))
    );

    let deserializer = ProtobufDeserializer::from_properties(&mut props(registry)).unwrap();
    let back = deserializer.deserialize(&ctx, &bytes).await.unwrap();
    assert_eq!(back.descriptor().full_name(), "reg.Order.Line");
    // The reader's message has the registry's descriptors, the writer's
    // the local ones: compare their encodings.
    assert_eq!(back.encode_to_vec(), line.encode_to_vec());
    let price = back.get_field_by_name("price").unwrap();
    let units = price
        .as_message()
        .unwrap()
        .get_field_by_name("units")
        .unwrap();
    assert_eq!(units.as_i64(), Some(995));
}

/// Invariant: a generated type registers its file as a base64 descriptor
/// (accepted by the registry), the typed reader gets the value back, and a
/// reader of another type gets a typed error instead of a wrong value.
#[tokio::test(flavor = "multi_thread")]
async fn generated_types_round_trip_and_wrong_types_are_refused() {
    let registry = SchemaRegistry::shared().await.expect("start the registry");
    let serializer: ProtobufSerializer<Timestamp> =
        ProtobufSerializer::from_properties(&mut props(registry)).unwrap();
    let topic = unique("proto-times");
    let ctx = SerializationContext::value(&topic);
    let at = Timestamp {
        seconds: 1_750_000_000,
        nanos: 42,
    };
    let bytes = serializer.serialize(&ctx, &at).await.unwrap();
    assert_eq!(bytes[5], 0, "the first message writes index byte 00");

    let (status, latest) = get(
        registry,
        &format!("/subjects/{topic}-value/versions/latest"),
    )
    .await;
    assert_eq!(status, 200, "{latest}");
    assert_eq!(latest["schemaType"], "PROTOBUF");

    let times =
        TypedProtobufDeserializer::<Timestamp>::from_properties(&mut props(registry)).unwrap();
    assert_eq!(times.deserialize(&ctx, &bytes).await.unwrap(), at);

    let durations =
        TypedProtobufDeserializer::<Duration>::from_properties(&mut props(registry)).unwrap();
    let err = durations.deserialize(&ctx, &bytes).await.unwrap_err();
    assert!(
        matches!(&err, SerdeError::Decode { reason, .. } if reason.contains("google.protobuf.Timestamp")),
        "{err}"
    );
}

/// Invariant: a frame naming an id the registry does not have is a
/// registry error, not a panic or a wrong value.
#[tokio::test(flavor = "multi_thread")]
async fn unknown_ids_are_registry_errors() {
    let registry = SchemaRegistry::shared().await.expect("start the registry");
    let deserializer = ProtobufDeserializer::from_properties(&mut props(registry)).unwrap();
    let mut bytes = Vec::new();
    wire::write_prefix(i32::MAX - 7, &mut bytes);
    wire::write_message_indexes(&[0], &mut bytes);
    let err = deserializer
        .deserialize(&SerializationContext::value("nowhere"), &bytes)
        .await
        .unwrap_err();
    assert!(matches!(err, SerdeError::Registry(_)), "{err}");
}
