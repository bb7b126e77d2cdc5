//! The JSON Schema serdes against a real registry (Apicurio Registry
//! serving Confluent's API, started by kafka-testcontainers): register,
//! frame, fetch by id, validate, read back.
#![cfg(feature = "json")]

use kafka_client::Properties;
use kafka_schema_registry::{
    JsonDeserializer, JsonSchema, JsonSerializer, RecordDeserializer, RecordSerializer,
    SchemaRegistryClient, SerdeError, SerializationContext,
};
use kafka_testcontainers::SchemaRegistry;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const ORDER: &str = r#"{
    "title": "Order",
    "type": "object",
    "properties": {"id": {"type": "integer", "minimum": 1}, "item": {"type": "string"}},
    "required": ["id"]
}"#;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Order {
    id: u64,
    item: String,
}

async fn props(extra: &[(&str, &str)]) -> Properties {
    let registry = SchemaRegistry::shared().await.expect("start the registry");
    let mut props = Properties::new([("schema.registry.url", registry.url())]);
    for (k, v) in extra {
        props.insert(k, v);
    }
    props
}

async fn serializer(schema: JsonSchema, extra: &[(&str, &str)]) -> JsonSerializer {
    let mut props = props(extra).await;
    let s = JsonSerializer::from_properties(&mut props, schema).expect("serializer settings");
    props.finish().expect("every key read");
    s
}

async fn deserializer<T: serde::de::DeserializeOwned + Send>(
    validate: bool,
) -> JsonDeserializer<T> {
    let mut props = props(&[(
        "json.fail.invalid.schema",
        if validate { "true" } else { "false" },
    )])
    .await;
    let d = JsonDeserializer::from_properties(&mut props).expect("deserializer settings");
    props.finish().expect("every key read");
    d
}

async fn client() -> SchemaRegistryClient {
    let mut props = props(&[]).await;
    SchemaRegistryClient::from_properties(&mut props).expect("client settings")
}

/// Invariant: a value written with auto-registration names the id its
/// schema got under `<topic>-value`, and reads back equal, typed and as a
/// `serde_json::Value`.
#[tokio::test(flavor = "multi_thread")]
async fn value_round_trips_through_the_registry() {
    let ctx = SerializationContext::value("json-orders");
    let ser = serializer(JsonSchema::new(ORDER).unwrap(), &[]).await;
    let order = Order {
        id: 7,
        item: "lamp".into(),
    };
    let bytes = ser.serialize(&ctx, &order).await.expect("serialize");

    let registered = client()
        .await
        .latest_version("json-orders-value")
        .await
        .expect("registered");
    assert_eq!(
        &bytes[..5],
        &[&[0u8][..], &registered.id.to_be_bytes()[..]].concat()[..]
    );
    assert_eq!(&bytes[5..], br#"{"id":7,"item":"lamp"}"#);

    let typed: Order = deserializer(true)
        .await
        .deserialize(&ctx, &bytes)
        .await
        .expect("typed");
    assert_eq!(typed, order);
    let value: Value = deserializer(false)
        .await
        .deserialize(&ctx, &bytes)
        .await
        .expect("value");
    assert_eq!(value, json!({"id": 7, "item": "lamp"}));
}

/// Invariant: with `json.fail.invalid.schema=true` a value the schema
/// rejects is refused before any frame exists; with it off the value is
/// written, and a validating deserializer refuses it while a
/// non-validating one reads it.
#[tokio::test(flavor = "multi_thread")]
async fn validation_refuses_on_both_sides_when_asked() {
    let ctx = SerializationContext::value("json-validated");
    let bad = json!({"id": 0, "item": "lamp"});
    let strict = serializer(
        JsonSchema::new(ORDER).unwrap(),
        &[("json.fail.invalid.schema", "true")],
    )
    .await;
    let e = strict.serialize(&ctx, &bad).await.unwrap_err();
    assert!(matches!(e, SerdeError::Encode { .. }), "{e:?}");

    let lax = serializer(JsonSchema::new(ORDER).unwrap(), &[]).await;
    let bytes = lax
        .serialize(&ctx, &bad)
        .await
        .expect("written without validation");
    let e = deserializer::<Value>(true)
        .await
        .deserialize(&ctx, &bytes)
        .await
        .unwrap_err();
    assert!(matches!(e, SerdeError::Decode { .. }), "{e:?}");
    let read: Value = deserializer(false)
        .await
        .deserialize(&ctx, &bytes)
        .await
        .expect("read");
    assert_eq!(read, bad);
}

/// Invariant: a schema's references are registered first, each under its
/// name as the subject; the deserializer fetches the schema with them and
/// validates through the `$ref`.
#[tokio::test(flavor = "multi_thread")]
async fn references_are_registered_under_their_names() {
    const ADDRESS: &str =
        r#"{"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}"#;
    const CUSTOMER: &str = r#"{"title": "Customer", "type": "object",
        "properties": {"address": {"$ref": "json-address.json"}}, "required": ["address"]}"#;
    let schema = JsonSchema::with_references(
        CUSTOMER,
        [("json-address.json", JsonSchema::new(ADDRESS).unwrap())],
    )
    .unwrap();
    let ctx = SerializationContext::value("json-customers");
    let ser = serializer(schema, &[]).await;
    let good = json!({"address": {"city": "Oslo"}});
    let bytes = ser.serialize(&ctx, &good).await.expect("serialize");

    let client = client().await;
    let address = client
        .latest_version("json-address.json")
        .await
        .expect("reference registered");
    assert_eq!(address.schema.schema, ADDRESS);
    let customer = client
        .latest_version("json-customers-value")
        .await
        .expect("root registered");
    assert_eq!(customer.schema.references.len(), 1);
    assert_eq!(customer.schema.references[0].name, "json-address.json");
    assert_eq!(customer.schema.references[0].subject, "json-address.json");

    let read: Value = deserializer(true)
        .await
        .deserialize(&ctx, &bytes)
        .await
        .expect("read");
    assert_eq!(read, good);
    let bad = ser
        .serialize(&ctx, &json!({"address": {}}))
        .await
        .expect("written without validation");
    let e = deserializer::<Value>(true)
        .await
        .deserialize(&ctx, &bad)
        .await
        .unwrap_err();
    assert!(matches!(e, SerdeError::Decode { .. }), "{e:?}");
}

/// Invariant: a frame naming an id the registry does not know is a
/// registry error, not a value.
#[tokio::test(flavor = "multi_thread")]
async fn unknown_id_is_a_registry_error() {
    let ctx = SerializationContext::value("json-unknown");
    let mut frame = vec![0u8];
    frame.extend_from_slice(&987_654_321i32.to_be_bytes());
    frame.extend_from_slice(b"{}");
    let e = deserializer::<Value>(false)
        .await
        .deserialize(&ctx, &frame)
        .await
        .unwrap_err();
    assert!(matches!(e, SerdeError::Registry(_)), "{e:?}");
}
