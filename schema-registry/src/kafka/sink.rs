//! The Kafka sink's registry schema: [`RegistrySinkSchema`], an
//! [`AsyncKafkaSerializationSchema`] that serializes each input with a
//! [`RecordSerializer`] (Flink's `ConfluentRegistryAvroSerializationSchema`,
//! for any format), with an optional key.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;

use bytes::Bytes;
use kafka_sink::kafka::{
    AsyncKafkaSerializationSchema, KafkaSinkRecord, SerializationError, SerializeFuture,
};

use crate::context::SerializationContext;
use crate::error::SerdeError;
use crate::record_serde::RecordSerializer;

/// The future of a [`KeyWriter`].
type KeyFuture<'a> = Pin<Box<dyn Future<Output = Result<Option<Bytes>, SerdeError>> + Send + 'a>>;

/// Extracts and serializes the key of an input (type-erased, so that the
/// schema's type does not name the key's).
trait KeyWriter<T>: Send + Sync {
    /// The serialized key of `value` for `topic` (`None`: a null key).
    fn write<'a>(&'a self, value: &'a T, topic: &'a str) -> KeyFuture<'a>;
}

/// A key extractor and the key's serializer.
struct ExtractedKey<F, KS, K> {
    /// Picks the key out of the input (`None`: a null key).
    extract: F,
    /// Serializes it.
    serializer: KS,
    /// The key type.
    _key: PhantomData<fn() -> K>,
}

impl<T, K, F, KS> KeyWriter<T> for ExtractedKey<F, KS, K>
where
    T: Sync,
    K: Send + Sync,
    F: Fn(&T) -> Option<K> + Send + Sync,
    KS: RecordSerializer<K>,
{
    fn write<'a>(&'a self, value: &'a T, topic: &'a str) -> KeyFuture<'a> {
        Box::pin(async move {
            match (self.extract)(value) {
                None => Ok(None),
                Some(key) => {
                    let ctx = SerializationContext::key(topic);
                    self.serializer.serialize(&ctx, &key).await.map(Some)
                }
            }
        })
    }
}

/// The Kafka sink's schema for registry formats: each input is the value,
/// serialized with a [`RecordSerializer`] (`AvroSerializer`,
/// `ProtobufSerializer`, `JsonSerializer`) under the subject of the record's
/// topic; optionally a key is extracted from it and serialized with its own
/// serializer. Give it to `KafkaSink::connect_async_schema`.
///
/// A value that cannot be serialized (registry down, schema refused, value
/// not matching) fails the sink's `invoke` with
/// `KafkaSinkError::Serialization` (the [`SerdeError`] inside: downcast it
/// with `SerializationError::downcast_ref`); the record is not sent.
pub struct RegistrySinkSchema<T, VS> {
    /// Serializes the input as the record value.
    value: VS,
    /// Extracts and serializes the key, if records have one.
    key: Option<Box<dyn KeyWriter<T>>>,
    /// The records' topic; `None`: the sink's default topic.
    topic: Option<String>,
}

impl<T, VS> std::fmt::Debug for RegistrySinkSchema<T, VS> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistrySinkSchema")
            .field("keyed", &self.key.is_some())
            .field("topic", &self.topic)
            .finish_non_exhaustive()
    }
}

impl<T: Sync + 'static, VS: RecordSerializer<T>> RegistrySinkSchema<T, VS> {
    /// A schema writing each input as the value with `value_serializer`,
    /// without key, to the sink's default topic.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    /// use kafka_client::Properties;
    /// use kafka_producer::ProducerConfig;
    /// use kafka_schema_registry::{AvroSchema, AvroSerializer, RawBytes, RegistrySinkSchema, Typed};
    /// use kafka_sink::kafka::{KafkaSink, KafkaSinkConfig, Semantic};
    ///
    /// #[derive(serde::Serialize)]
    /// struct Order { id: i64, customer: String }
    ///
    /// let mut props = Properties::new([("schema.registry.url", "http://127.0.0.1:8081")]);
    /// let avro = AvroSchema::parse(r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"customer","type":"string"}]}"#)?;
    /// let values = AvroSerializer::<Typed<Order>>::from_properties(&mut props, avro)?;
    /// let schema = RegistrySinkSchema::new(values)
    ///     .with_key(|o: &Order| Some(bytes::Bytes::from(o.customer.clone())), RawBytes);
    /// let mut config = KafkaSinkConfig::new(ProducerConfig::new("broker-1:9092"), "orders");
    /// config.semantic = Semantic::ExactlyOnce;
    /// let sink = KafkaSink::connect_async_schema(config, schema).await?;
    /// # let _ = sink; Ok(()) }
    /// ```
    pub fn new(value_serializer: VS) -> Self {
        RegistrySinkSchema {
            value: value_serializer,
            key: None,
            topic: None,
        }
    }

    /// Gives records a key: `extract` picks it out of the input (`None`: a
    /// null key, nothing registered) and `serializer` writes it (under the
    /// `<topic>-key` subject for registry serializers).
    pub fn with_key<K, F, KS>(mut self, extract: F, serializer: KS) -> Self
    where
        K: Send + Sync + 'static,
        F: Fn(&T) -> Option<K> + Send + Sync + 'static,
        KS: RecordSerializer<K> + 'static,
    {
        self.key = Some(Box::new(ExtractedKey {
            extract,
            serializer,
            _key: PhantomData,
        }));
        self
    }

    /// Writes to `topic` instead of the sink's default topic.
    pub fn to_topic(mut self, topic: impl Into<String>) -> Self {
        self.topic = Some(topic.into());
        self
    }
}

impl<T: Sync, VS: RecordSerializer<T>> AsyncKafkaSerializationSchema<T>
    for RegistrySinkSchema<T, VS>
{
    fn serialize<'a>(&'a self, value: &'a T, default_topic: &'a str) -> SerializeFuture<'a> {
        Box::pin(async move {
            let topic = self.topic.as_deref().unwrap_or(default_topic);
            let key = match &self.key {
                None => None,
                Some(k) => k
                    .write(value, topic)
                    .await
                    .map_err(SerializationError::new)?,
            };
            let bytes = self
                .value
                .serialize(&SerializationContext::value(topic), value)
                .await
                .map_err(SerializationError::new)?;
            Ok(KafkaSinkRecord {
                topic: self.topic.clone(),
                key,
                value: bytes,
            })
        })
    }
}
