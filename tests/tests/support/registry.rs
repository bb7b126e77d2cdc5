//! What the registry tests (`registry_*_broker.rs`) share: an Avro schema
//! of orders, serdes on a real registry, and typed reads of a topic.

use std::sync::Arc;
use std::time::Duration;

use apache_avro::types::Value;
use kafka_client::{Cluster, Properties};
use kafka_consumer::{IsolationLevel, Reader, ReaderConfig};
use kafka_schema_registry::{
    AvroDeserializer, AvroSchema, AvroSerializer, DeserializedRecord, RawBytes, ReaderSchema,
    RecordDecoder,
};

/// The orders' writer schema.
pub const ORDER: &str = r#"{"type":"record","name":"Order","namespace":"it.registry","fields":[{"name":"id","type":"long"},{"name":"item","type":"string"}]}"#;

/// A schema the registry has not seen before the test uses it.
pub const REFUND: &str = r#"{"type":"record","name":"Refund","namespace":"it.registry","fields":[{"name":"order","type":"long"}]}"#;

/// An order as a generic Avro record.
pub fn order(id: i64) -> Value {
    Value::Record(vec![
        ("id".into(), Value::Long(id)),
        ("item".into(), Value::String(format!("item-{id}"))),
    ])
}

/// A record that does not match [`ORDER`] (its `item` is missing).
pub fn not_an_order(id: i64) -> Value {
    Value::Record(vec![("id".into(), Value::Long(id))])
}

/// A serializer of `schema` registering it on the registry at `url`.
pub fn serializer(url: &str, schema: &str) -> AvroSerializer {
    AvroSerializer::from_properties(
        &mut Properties::new([("schema.registry.url", url)]),
        AvroSchema::parse(schema).expect("schema parses"),
    )
    .expect("serializer")
}

/// A decoder of raw keys and Avro values through the registry at `url`.
pub fn decoder(url: &str) -> RecordDecoder<RawBytes, AvroDeserializer> {
    let values = AvroDeserializer::from_properties(
        &mut Properties::new([("schema.registry.url", url)]),
        ReaderSchema::Writer,
    )
    .expect("deserializer");
    RecordDecoder::new(RawBytes, values)
}

/// Every record of `topic`'s partition 0 under `isolation`, decoded by
/// `decoder` (after waiting until no transaction is open on it: the
/// markers of a commit or an abort land after EndTxn returned).
pub async fn read_decoded(
    cluster: &Arc<Cluster>,
    topic: &str,
    isolation: IsolationLevel,
    decoder: &RecordDecoder<RawBytes, AvroDeserializer>,
) -> Vec<DeserializedRecord<bytes::Bytes, Value>> {
    let mut reader = Reader::new(
        cluster.clone(),
        ReaderConfig {
            isolation,
            ..Default::default()
        },
    );
    reader
        .wait_until_stable(topic, &[0], Duration::from_secs(60))
        .await
        .expect("no transaction stays open");
    let records = reader.read_to_end(topic, &[0]).await.expect("read");
    decoder.decode_all(records).await.records
}

/// The decoded values of `records`, panicking on an undecodable one.
pub fn values(records: &[DeserializedRecord<bytes::Bytes, Value>]) -> Vec<Value> {
    records
        .iter()
        .map(|r| match &r.value {
            Ok(Some(v)) => v.clone(),
            other => panic!("offset {}: {other:?}", r.record.offset),
        })
        .collect()
}
