//! Decode with a schema registry, map, encode again: a [`RecordTransform`]
//! of kafka-sink's `ConsumeTransformProduce`, for exactly-once re-encoding
//! (feature `sink`).

use crate::context::{Field, SerializationContext};
use crate::error::SerdeError;
use crate::record_serde::{RecordDeserializer, RecordSerializer};
use kafka_consumer::ConsumerRecord;
use kafka_producer::ProducerRecord;
use kafka_proto::record::RecordHeader;
use kafka_sink::pipeline::RecordTransform;
use std::marker::PhantomData;

/// Why [`RegistryTransform`] could not re-encode a record.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryTransformError {
    /// The input value does not decode (its schema id is unknown, the
    /// registry is unreachable, the bytes are not a registry frame or do not
    /// match their schema).
    #[error("decoding the input value: {0}")]
    Decode(#[source] SerdeError),
    /// The mapped value could not be encoded in the output format (the
    /// registry refused the schema or is unreachable, or the value does not
    /// fit the output schema).
    #[error("encoding the output value: {0}")]
    Encode(#[source] SerdeError),
    /// The map refused the value.
    #[error("mapping the value: {0}")]
    Map(String),
}

/// Re-encodes each record's value: decodes it with any
/// [`RecordDeserializer`], maps the decoded value, and encodes the result
/// with any [`RecordSerializer`] for the output topic. The key, the
/// timestamp and the headers are copied as they are, except the schema-id
/// headers of the value (`__value_schema_id`), which named the input's
/// schema; a null value (a tombstone) stays null without touching the
/// registry.
///
/// A record that fails to decode, map or encode fails the pipeline before
/// anything of it is sent (see [`RecordTransform`]).
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// use kafka_client::Properties;
/// use kafka_consumer::GroupConsumerConfig;
/// use kafka_producer::ProducerConfig;
/// use kafka_schema_registry::{AvroSchema, AvroSerializer, JsonDeserializer, RegistryTransform};
/// use kafka_sink::pipeline::{ConsumeTransformProduce, PipelineConfig};
///
/// let registry = [("schema.registry.url", "http://127.0.0.1:8081")];
/// let input = JsonDeserializer::<serde_json::Value>::from_properties(&mut Properties::new(registry))?;
/// let schema = AvroSchema::parse(r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"long"}]}"#)?;
/// let output = AvroSerializer::from_properties(&mut Properties::new(registry), schema)?;
/// // JSON documents {"id": 7} become Avro records {id: 7}.
/// let to_avro = |v: serde_json::Value| -> Result<apache_avro::types::Value, String> {
///     let id = v["id"].as_i64().ok_or("no integer id")?;
///     Ok(apache_avro::types::Value::Record(vec![("id".into(), apache_avro::types::Value::Long(id))]))
/// };
/// let transform = RegistryTransform::new(input, to_avro, output, "orders-avro");
///
/// let consumer = GroupConsumerConfig::from_properties([
///     ("bootstrap.servers", "127.0.0.1:9092"),
///     ("group.id", "orders-to-avro"),
///     ("isolation.level", "read_committed"),
/// ])?;
/// let producer = ProducerConfig::from_properties([
///     ("bootstrap.servers", "127.0.0.1:9092"),
///     ("transactional.id", "orders-to-avro-1"),
/// ])?;
/// let mut pipeline =
///     ConsumeTransformProduce::connect_with(consumer, &["orders-json"], producer, transform, PipelineConfig::default())
///         .await?;
/// loop {
///     pipeline.step(std::time::Duration::from_millis(500)).await?;
/// }
/// # }
/// ```
pub struct RegistryTransform<D, M, S, O> {
    /// Decodes the input values.
    deserializer: D,
    /// Input value to output value.
    map: M,
    /// Encodes the output values.
    serializer: S,
    /// Where the output goes (the subject of the output schema follows it).
    output_topic: String,
    /// The output value type.
    output: PhantomData<fn() -> O>,
}

impl<D, M, S, O> std::fmt::Debug for RegistryTransform<D, M, S, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistryTransform")
            .field("output_topic", &self.output_topic)
            .finish_non_exhaustive()
    }
}

impl<D, M, S, O, E> RegistryTransform<D, M, S, O>
where
    D: RecordDeserializer,
    M: FnMut(D::Value) -> Result<O, E> + Send,
    E: std::fmt::Display,
    S: RecordSerializer<O>,
    O: Send + Sync,
{
    /// A transform writing to `output_topic`: each value decoded by
    /// `deserializer`, passed through `map` (an `Err` stops the pipeline),
    /// and encoded by `serializer`.
    ///
    /// ```
    /// # #[cfg(feature = "json")]
    /// # fn demo(d: kafka_schema_registry::JsonDeserializer, s: kafka_schema_registry::JsonSerializer) {
    /// use kafka_schema_registry::RegistryTransform;
    /// // The same document, re-registered under the output topic's subject.
    /// let same = |v: serde_json::Value| Ok::<_, std::convert::Infallible>(v);
    /// let _t = RegistryTransform::new(d, same, s, "orders-copy");
    /// # }
    /// ```
    pub fn new(deserializer: D, map: M, serializer: S, output_topic: impl Into<String>) -> Self {
        Self {
            deserializer,
            map,
            serializer,
            output_topic: output_topic.into(),
            output: PhantomData,
        }
    }
}

impl<D, M, S, O, E> RecordTransform for RegistryTransform<D, M, S, O>
where
    D: RecordDeserializer,
    M: FnMut(D::Value) -> Result<O, E> + Send,
    E: std::fmt::Display,
    S: RecordSerializer<O>,
    O: Send + Sync,
{
    type Error = RegistryTransformError;

    async fn transform(
        &mut self,
        record: &ConsumerRecord,
    ) -> Result<Vec<ProducerRecord>, RegistryTransformError> {
        let headers: Vec<RecordHeader> = record
            .headers
            .iter()
            .filter(|h| h.key != Field::Value.schema_id_header())
            .cloned()
            .collect();
        let value = match &record.value {
            None => None,
            Some(bytes) => {
                let input = SerializationContext {
                    topic: &record.topic,
                    field: Field::Value,
                    headers: &record.headers,
                };
                let decoded = self
                    .deserializer
                    .deserialize(&input, bytes)
                    .await
                    .map_err(RegistryTransformError::Decode)?;
                let mapped =
                    (self.map)(decoded).map_err(|e| RegistryTransformError::Map(e.to_string()))?;
                let output = SerializationContext {
                    topic: &self.output_topic,
                    field: Field::Value,
                    headers: &headers,
                };
                Some(
                    self.serializer
                        .serialize(&output, &mapped)
                        .await
                        .map_err(RegistryTransformError::Encode)?,
                )
            }
        };
        let mut out = ProducerRecord::new(self.output_topic.as_str()).timestamp(record.timestamp);
        out.key = record.key.clone();
        out.value = value;
        out.headers = headers.into_iter().map(|h| (h.key, h.value)).collect();
        Ok(vec![out])
    }
}
