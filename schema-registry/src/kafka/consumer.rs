//! Typed records on the consumer side: [`RecordDecoder`] decodes the
//! [`ConsumerRecord`]s of [`Reader::poll`] and of [`GroupConsumer::poll`]
//! into [`DeserializedRecord`]s, each keeping its raw record beside the
//! decoded key and value (or the per-record error), so that no record is
//! ever dropped for being undecodable.

use std::time::Duration;

use kafka_consumer::{
    ConsumerEvent, ConsumerRecord, GroupConsumer, GroupError, Offset, Reader, ReaderError,
    TopicPartition,
};

use crate::context::{Field, SerializationContext};
use crate::error::SerdeError;
use crate::record_serde::RecordDeserializer;

/// One consumed record, decoded: the raw record (topic, partition, offset,
/// headers, the bytes) and its key and value, each decoded or the typed
/// reason it could not be. A null key or value is `Ok(None)`.
#[derive(Debug)]
pub struct DeserializedRecord<K, V> {
    /// The record as read.
    pub record: ConsumerRecord,
    /// The decoded key.
    pub key: Result<Option<K>, SerdeError>,
    /// The decoded value.
    pub value: Result<Option<V>, SerdeError>,
}

impl<K, V> DeserializedRecord<K, V> {
    /// True when both the key and the value decoded.
    pub fn is_ok(&self) -> bool {
        self.key.is_ok() && self.value.is_ok()
    }

    /// The first failure, key first.
    pub fn error(&self) -> Option<(Field, &SerdeError)> {
        match (&self.key, &self.value) {
            (Err(e), _) => Some((Field::Key, e)),
            (_, Err(e)) => Some((Field::Value, e)),
            _ => None,
        }
    }

    /// The record's partition.
    pub fn topic_partition(&self) -> TopicPartition {
        TopicPartition {
            topic: self.record.topic.clone(),
            partition: self.record.partition,
        }
    }
}

/// What a [`RecordDecoder`] does at a record it cannot decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DecodeErrorPolicy {
    /// Hand the record over with its error and go on with the partition.
    #[default]
    Continue,
    /// Stop the partition at its first undecodable record (Java's
    /// `RecordDeserializationException`): that record is handed over with
    /// its error, the records after it in the same partition are not
    /// decoded (see [`PartitionStop`]); other partitions go on.
    StopPartition,
}

/// A partition stopped at an undecodable record
/// ([`DecodeErrorPolicy::StopPartition`]).
#[derive(Debug)]
pub struct PartitionStop {
    /// The partition.
    pub partition: TopicPartition,
    /// The offset of the undecodable record (its position: the application
    /// seeks to it to read it again, or past it, [`Self::skip_to`], to skip
    /// it).
    pub offset: i64,
    /// The partition's records after it in the same poll, not decoded.
    /// [`RecordDecoder::poll_reader`] and [`RecordDecoder::poll_group`]
    /// rewind to `offset`, so they leave this empty (the records are
    /// fetched again); [`RecordDecoder::decode_all`] hands them back here,
    /// so that none is lost.
    pub held_back: Vec<ConsumerRecord>,
}

impl PartitionStop {
    /// The offset just past the undecodable record: where to seek to skip
    /// it.
    pub fn skip_to(&self) -> i64 {
        self.offset + 1
    }
}

/// The records of one poll, decoded.
#[derive(Debug)]
pub struct DecodedRecords<K, V> {
    /// Every record handed over, in the poll's order (offset order per
    /// partition); undecodable ones carry their error.
    pub records: Vec<DeserializedRecord<K, V>>,
    /// The partitions stopped at an undecodable record (only with
    /// [`DecodeErrorPolicy::StopPartition`]).
    pub stopped: Vec<PartitionStop>,
}

/// A [`ConsumerEvent`] with its records decoded.
#[derive(Debug)]
pub enum DecodedEvent<K, V> {
    /// [`ConsumerEvent::Records`], decoded.
    Records(DecodedRecords<K, V>),
    /// [`ConsumerEvent::Assigned`].
    Assigned(Vec<TopicPartition>),
    /// [`ConsumerEvent::Revoked`].
    Revoked(Vec<TopicPartition>),
    /// [`ConsumerEvent::Lost`].
    Lost(Vec<TopicPartition>),
}

/// Decodes consumed records with a key and a value
/// [`RecordDeserializer`].
pub struct RecordDecoder<KD, VD> {
    /// Decodes keys.
    key: KD,
    /// Decodes values.
    value: VD,
    /// What to do at an undecodable record.
    policy: DecodeErrorPolicy,
}

impl<KD, VD> std::fmt::Debug for RecordDecoder<KD, VD> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordDecoder")
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl<KD: RecordDeserializer, VD: RecordDeserializer> RecordDecoder<KD, VD> {
    /// A decoder of keys with `key` and values with `value`, that goes on
    /// past undecodable records ([`DecodeErrorPolicy::Continue`]).
    ///
    /// ```no_run
    /// # async fn demo(reader: &mut kafka_consumer::Reader) -> Result<(), Box<dyn std::error::Error>> {
    /// use std::time::Duration;
    /// use kafka_client::Properties;
    /// use kafka_schema_registry::{AvroDeserializer, RawBytes, RecordDecoder, ReaderSchema};
    ///
    /// let mut props = Properties::new([("schema.registry.url", "http://127.0.0.1:8081")]);
    /// let values: AvroDeserializer = AvroDeserializer::from_properties(&mut props, ReaderSchema::Writer)?;
    /// let decoder = RecordDecoder::new(RawBytes, values);
    /// let polled = decoder.poll_reader(reader, Duration::from_secs(1)).await?;
    /// for r in polled.records {
    ///     match r.value {
    ///         Ok(value) => println!("{}@{}: {value:?}", r.record.partition, r.record.offset),
    ///         Err(e) => eprintln!("{}@{} is undecodable: {e}", r.record.partition, r.record.offset),
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub fn new(key: KD, value: VD) -> Self {
        RecordDecoder {
            key,
            value,
            policy: DecodeErrorPolicy::Continue,
        }
    }

    /// Sets what to do at an undecodable record.
    pub fn with_policy(mut self, policy: DecodeErrorPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// The policy.
    pub fn policy(&self) -> DecodeErrorPolicy {
        self.policy
    }

    /// Decodes one record's key and value.
    pub async fn decode(&self, record: ConsumerRecord) -> DeserializedRecord<KD::Value, VD::Value> {
        let key = match &record.key {
            None => Ok(None),
            Some(bytes) => {
                let ctx = SerializationContext {
                    topic: &record.topic,
                    field: Field::Key,
                    headers: &record.headers,
                };
                self.key.deserialize(&ctx, bytes).await.map(Some)
            }
        };
        let value = match &record.value {
            None => Ok(None),
            Some(bytes) => {
                let ctx = SerializationContext {
                    topic: &record.topic,
                    field: Field::Value,
                    headers: &record.headers,
                };
                self.value.deserialize(&ctx, bytes).await.map(Some)
            }
        };
        DeserializedRecord { record, key, value }
    }

    /// Decodes the records of one poll in order, applying the policy.
    pub async fn decode_all(
        &self,
        records: Vec<ConsumerRecord>,
    ) -> DecodedRecords<KD::Value, VD::Value> {
        let mut out = DecodedRecords {
            records: Vec::with_capacity(records.len()),
            stopped: Vec::new(),
        };
        for record in records {
            if let Some(stop) = out.stopped.iter_mut().find(|s| {
                s.partition.partition == record.partition && s.partition.topic == record.topic
            }) {
                stop.held_back.push(record);
                continue;
            }
            let decoded = self.decode(record).await;
            if !decoded.is_ok() && self.policy == DecodeErrorPolicy::StopPartition {
                out.stopped.push(PartitionStop {
                    partition: decoded.topic_partition(),
                    offset: decoded.record.offset,
                    held_back: Vec::new(),
                });
            }
            out.records.push(decoded);
        }
        out
    }

    /// Polls `reader` and decodes what it returns. With
    /// [`DecodeErrorPolicy::StopPartition`], each stopped partition is
    /// rewound to its undecodable record (its `held_back` records are
    /// fetched again): the next poll returns it again, until the
    /// application seeks past it ([`PartitionStop::skip_to`]).
    pub async fn poll_reader(
        &self,
        reader: &mut Reader,
        timeout: Duration,
    ) -> Result<DecodedRecords<KD::Value, VD::Value>, ReaderError> {
        let records = reader.poll(timeout).await?;
        let mut decoded = self.decode_all(records).await;
        for stop in &mut decoded.stopped {
            reader
                .seek(
                    &stop.partition.topic,
                    stop.partition.partition,
                    Offset::At(stop.offset),
                )
                .await?;
            stop.held_back.clear();
        }
        Ok(decoded)
    }

    /// Polls `consumer` and decodes its records. With
    /// [`DecodeErrorPolicy::StopPartition`], each stopped partition is
    /// rewound to its undecodable record with [`GroupConsumer::seek`] (its
    /// `held_back` records are fetched again), as [`Self::poll_reader`]
    /// does: the next poll returns it again until the application seeks
    /// past it ([`PartitionStop::skip_to`]). A partition revoked meanwhile
    /// cannot be rewound: its records stay in `held_back`, none lost.
    pub async fn poll_group(
        &self,
        consumer: &mut GroupConsumer,
        timeout: Duration,
    ) -> Result<DecodedEvent<KD::Value, VD::Value>, GroupError> {
        Ok(match consumer.poll(timeout).await? {
            ConsumerEvent::Records(records) => {
                let mut decoded = self.decode_all(records).await;
                for stop in &mut decoded.stopped {
                    match consumer
                        .seek(&stop.partition, Offset::At(stop.offset))
                        .await
                    {
                        Ok(_) => stop.held_back.clear(),
                        // Revoked meanwhile: the new owner reads it; keep
                        // what was fetched beside the error.
                        Err(GroupError::NotAssigned { .. }) => {}
                        Err(e) => return Err(e),
                    }
                }
                DecodedEvent::Records(decoded)
            }
            ConsumerEvent::Assigned(p) => DecodedEvent::Assigned(p),
            ConsumerEvent::Revoked(p) => DecodedEvent::Revoked(p),
            ConsumerEvent::Lost(p) => DecodedEvent::Lost(p),
        })
    }
}
