//! The typed producer: [`SerializingProducer`] serializes a record's key and
//! value with [`RecordSerializer`]s, then hands the bytes to a
//! [`Producer`] or a [`TransactionalProducer`] (anything that is a
//! [`RecordSender`]).

use std::future::Future;

use bytes::Bytes;
use kafka_producer::{
    ProduceError, Producer, ProducerRecord, RecordMetadata, TransactionalProducer,
};
use kafka_proto::record::RecordHeader;

use crate::context::{Field, SerializationContext};
use crate::error::SerdeError;
use crate::record_serde::RecordSerializer;

/// Something that sends a [`ProducerRecord`]: [`Producer`] and
/// [`TransactionalProducer`]. `send_record` enqueues the record before it
/// returns (the producer's `send`) and returns its delivery future.
///
/// ```no_run
/// # async fn demo(producer: kafka_producer::Producer) -> Result<(), Box<dyn std::error::Error>> {
/// use kafka_producer::ProducerRecord;
/// use kafka_schema_registry::RecordSender;
/// /// Works with a plain or a transactional producer.
/// async fn ping(to: &impl RecordSender) -> Result<(), kafka_producer::ProduceError> {
///     to.send_record(ProducerRecord::new("pings").value("ping")).await.map(drop)
/// }
/// ping(&producer).await?;
/// # Ok(()) }
/// ```
pub trait RecordSender: Send + Sync {
    /// Enqueues `record`; the future resolves once the broker acknowledged
    /// it, or failed.
    fn send_record(
        &self,
        record: ProducerRecord,
    ) -> impl Future<Output = Result<RecordMetadata, ProduceError>> + Send + 'static + use<Self>;
}

impl RecordSender for Producer {
    fn send_record(
        &self,
        record: ProducerRecord,
    ) -> impl Future<Output = Result<RecordMetadata, ProduceError>> + Send + 'static + use<> {
        self.send(record)
    }
}

impl RecordSender for TransactionalProducer {
    fn send_record(
        &self,
        record: ProducerRecord,
    ) -> impl Future<Output = Result<RecordMetadata, ProduceError>> + Send + 'static + use<> {
        self.send(record)
    }
}

/// A record before serialization: [`ProducerRecord`] with a typed key and
/// value. A `None` key or value stays null (a tombstone) and registers
/// nothing.
#[derive(Debug, Clone, PartialEq)]
pub struct TypedRecord<K, V> {
    /// The topic.
    pub topic: String,
    /// Explicit partition, or `None` for the partitioner.
    pub partition: Option<i32>,
    /// The key (`None` = null).
    pub key: Option<K>,
    /// The value (`None` = null, a tombstone).
    pub value: Option<V>,
    /// Headers in order (a `None` value is null); the serializers see them.
    pub headers: Vec<(String, Option<Bytes>)>,
    /// Create time in ms since the epoch; `None` = now.
    pub timestamp: Option<i64>,
}

impl<K, V> TypedRecord<K, V> {
    /// A record of `value` for `topic`, without key.
    ///
    /// ```
    /// use kafka_schema_registry::TypedRecord;
    /// let r = TypedRecord::new("orders", 12_u32).key("customer-7").header("source", "web");
    /// assert_eq!((r.key, r.value, r.headers.len()), (Some("customer-7"), Some(12), 1));
    /// ```
    pub fn new(topic: impl Into<String>, value: V) -> Self {
        TypedRecord {
            topic: topic.into(),
            partition: None,
            key: None,
            value: Some(value),
            headers: Vec::new(),
            timestamp: None,
        }
    }

    /// Sets the key.
    pub fn key(mut self, key: K) -> Self {
        self.key = Some(key);
        self
    }

    /// Adds a header.
    pub fn header(mut self, key: impl Into<String>, value: impl Into<Bytes>) -> Self {
        self.headers.push((key.into(), Some(value.into())));
        self
    }

    /// Sends to `partition` instead of the partitioner's choice.
    pub fn partition(mut self, partition: i32) -> Self {
        self.partition = Some(partition);
        self
    }
}

/// Why [`SerializingProducer::send`] refused a record: its key or value
/// could not be serialized. Nothing of the record was enqueued; in a
/// transaction, the transaction is unaffected (commit it without the
/// record, or abort it).
#[derive(Debug, thiserror::Error)]
#[error(
    "serializing the record's {field:?} for topic {topic:?} failed (nothing was sent): {source}"
)]
pub struct SerializeRecordError {
    /// The topic of the record.
    pub topic: String,
    /// Which part failed.
    pub field: Field,
    /// Why.
    #[source]
    pub source: SerdeError,
}

/// A producer of typed records: serializes each record's key, then its
/// value (asynchronously: the first value of a schema may register it or
/// look it up), and only then enqueues the bytes with the producer.
///
/// - **Failure.** A key or value that cannot be serialized (registry down,
///   schema refused, value not matching) fails that record with
///   [`SerializeRecordError`] before anything is enqueued: nothing
///   half-written reaches a batch, and a transaction stays abortable.
/// - **Order.** Records whose `send` calls are awaited one after another
///   are enqueued in that order (so a partition keeps them in that order).
///   Sends run concurrently are enqueued in the order their serialization
///   finishes.
pub struct SerializingProducer<P, KS, VS> {
    /// Where the serialized records go.
    producer: P,
    /// Serializes keys.
    key_serializer: KS,
    /// Serializes values.
    value_serializer: VS,
}

impl<P, KS, VS> std::fmt::Debug for SerializingProducer<P, KS, VS> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SerializingProducer")
            .finish_non_exhaustive()
    }
}

impl<P: RecordSender, KS, VS> SerializingProducer<P, KS, VS> {
    /// A typed producer over `producer` (a [`Producer`] or a
    /// [`TransactionalProducer`]), with a key and a value serializer
    /// ([`RawBytes`](crate::RawBytes) for keys that are bytes already).
    ///
    /// ```no_run
    /// # async fn demo(tp: kafka_producer::TransactionalProducer) -> Result<(), Box<dyn std::error::Error>> {
    /// use bytes::Bytes;
    /// use kafka_client::Properties;
    /// use kafka_schema_registry::{AvroSchema, AvroSerializer, RawBytes, SerializingProducer, Typed, TypedRecord};
    ///
    /// #[derive(serde::Serialize)]
    /// struct Order { id: i64 }
    ///
    /// let mut props = Properties::new([("schema.registry.url", "http://127.0.0.1:8081")]);
    /// let schema = AvroSchema::parse(r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"long"}]}"#)?;
    /// let values = AvroSerializer::<Typed<Order>>::from_properties(&mut props, schema)?;
    /// let producer = SerializingProducer::new(tp, RawBytes, values);
    ///
    /// producer.producer().begin_transaction()?;
    /// let record = TypedRecord::new("orders", Order { id: 7 }).key(Bytes::from("customer-7"));
    /// match producer.send(record).await {
    ///     // Enqueued: the future resolves once the broker acknowledged it.
    ///     Ok(delivery) => drop(delivery),
    ///     // Not enqueued: nothing of it is in the transaction.
    ///     Err(e) => {
    ///         producer.producer().abort_transaction().await?;
    ///         return Err(e.into());
    ///     }
    /// }
    /// producer.producer().commit_transaction().await?;
    /// # Ok(()) }
    /// ```
    pub fn new(producer: P, key_serializer: KS, value_serializer: VS) -> Self {
        SerializingProducer {
            producer,
            key_serializer,
            value_serializer,
        }
    }

    /// The producer (to begin, commit or abort transactions, flush, close).
    pub fn producer(&self) -> &P {
        &self.producer
    }

    /// The producer, taken back.
    pub fn into_producer(self) -> P {
        self.producer
    }

    /// Serializes the key, then the value, then enqueues the record and
    /// returns its delivery future. A serialization failure returns
    /// [`SerializeRecordError`] and enqueues nothing.
    pub async fn send<K, V>(
        &self,
        record: TypedRecord<K, V>,
    ) -> Result<
        impl Future<Output = Result<RecordMetadata, ProduceError>>
        + Send
        + 'static
        + use<P, KS, VS, K, V>,
        SerializeRecordError,
    >
    where
        K: Sync,
        V: Sync,
        KS: RecordSerializer<K>,
        VS: RecordSerializer<V>,
    {
        // The serializers see the headers as the record will carry them.
        let headers: Vec<RecordHeader> = record
            .headers
            .iter()
            .map(|(key, value)| RecordHeader {
                key: key.clone(),
                value: value.clone(),
            })
            .collect();
        let fail = |field, source| SerializeRecordError {
            topic: record.topic.clone(),
            field,
            source,
        };
        let key = match &record.key {
            None => None,
            Some(k) => {
                let ctx = SerializationContext {
                    topic: &record.topic,
                    field: Field::Key,
                    headers: &headers,
                };
                Some(
                    self.key_serializer
                        .serialize(&ctx, k)
                        .await
                        .map_err(|e| fail(Field::Key, e))?,
                )
            }
        };
        let value = match &record.value {
            None => None,
            Some(v) => {
                let ctx = SerializationContext {
                    topic: &record.topic,
                    field: Field::Value,
                    headers: &headers,
                };
                Some(
                    self.value_serializer
                        .serialize(&ctx, v)
                        .await
                        .map_err(|e| fail(Field::Value, e))?,
                )
            }
        };
        let out = ProducerRecord {
            topic: record.topic,
            partition: record.partition,
            key,
            value,
            headers: record.headers,
            timestamp: record.timestamp,
        };
        Ok(self.producer.send_record(out))
    }
}
