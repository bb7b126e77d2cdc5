//! Turning sink inputs into records: [`KafkaSinkRecord`], the sink's own
//! [`KafkaSerializationSchema`], and Flink's value-only
//! ([`SerializationSchema`], adapted by [`ValueOnly`]) and keyed
//! ([`KeyedSerializationSchema`], adapted by [`Keyed`]) schemas; and the
//! asynchronous, fallible [`AsyncKafkaSerializationSchema`] of formats that
//! need I/O (a schema registry).

use std::error::Error as StdError;
use std::future::Future;
use std::pin::Pin;

use bytes::Bytes;

/// One record for the sink to send: an optional key, the value and
/// optionally a topic other than the sink's default.
///
/// ```
/// use kafka_sink::kafka::KafkaSinkRecord;
/// let r = KafkaSinkRecord::keyed("customer-7", r#"{"total":12}"#).to_topic("orders-eu");
/// assert_eq!(r.topic.as_deref(), Some("orders-eu"));
/// assert_eq!(r.key.as_deref(), Some(&b"customer-7"[..]));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KafkaSinkRecord {
    /// Target topic; `None` = the sink's default topic.
    pub topic: Option<String>,
    /// Record key.
    pub key: Option<Bytes>,
    /// Record value.
    pub value: Bytes,
}

impl KafkaSinkRecord {
    /// A value-only record for the default topic.
    pub fn value(value: impl Into<Bytes>) -> Self {
        KafkaSinkRecord {
            topic: None,
            key: None,
            value: value.into(),
        }
    }

    /// A keyed record for the default topic.
    pub fn keyed(key: impl Into<Bytes>, value: impl Into<Bytes>) -> Self {
        KafkaSinkRecord {
            topic: None,
            key: Some(key.into()),
            value: value.into(),
        }
    }

    /// Sends the record to `topic` instead of the default topic.
    pub fn to_topic(mut self, topic: impl Into<String>) -> Self {
        self.topic = Some(topic.into());
        self
    }
}

/// Turns a sink input into a [`KafkaSinkRecord`] (value-only or keyed, with
/// an optional per-record topic). Closures `Fn(&T) -> KafkaSinkRecord`
/// implement it.
///
/// ```
/// use kafka_sink::kafka::{KafkaSerializationSchema, KafkaSinkRecord};
/// /// Orders as `id=total`, keyed by id.
/// struct OrderSchema;
/// impl KafkaSerializationSchema<(u64, u32)> for OrderSchema {
///     fn serialize(&self, &(id, total): &(u64, u32)) -> KafkaSinkRecord {
///         KafkaSinkRecord::keyed(id.to_string(), format!("{id}={total}"))
///     }
/// }
/// assert_eq!(OrderSchema.serialize(&(7, 12)), KafkaSinkRecord::keyed("7", "7=12"));
/// ```
pub trait KafkaSerializationSchema<T>: Send + Sync {
    /// Serializes one input.
    fn serialize(&self, value: &T) -> KafkaSinkRecord;
}

impl<T, F: Fn(&T) -> KafkaSinkRecord + Send + Sync> KafkaSerializationSchema<T> for F {
    fn serialize(&self, value: &T) -> KafkaSinkRecord {
        self(value)
    }
}

/// A value-only serialization schema (Flink's `SerializationSchema`): the
/// record has no key and goes to the sink's default topic. Closures
/// `Fn(&T) -> Bytes` implement it; wrap it in [`ValueOnly`] to give it to
/// the sink.
///
/// ```
/// use bytes::Bytes;
/// use kafka_sink::kafka::{KafkaSerializationSchema, KafkaSinkRecord, ValueOnly};
/// let schema = ValueOnly(|v: &u32| Bytes::from(v.to_string()));
/// assert_eq!(schema.serialize(&7), KafkaSinkRecord::value("7"));
/// ```
pub trait SerializationSchema<T>: Send + Sync {
    /// The record value of `value`.
    fn serialize(&self, value: &T) -> Bytes;
}

impl<T, F: Fn(&T) -> Bytes + Send + Sync> SerializationSchema<T> for F {
    fn serialize(&self, value: &T) -> Bytes {
        self(value)
    }
}

/// Flink's `SimpleStringSchema`: the UTF-8 bytes of a string.
#[derive(Debug, Clone, Copy, Default)]
pub struct SimpleStringSchema;

impl<T: AsRef<str>> SerializationSchema<T> for SimpleStringSchema {
    fn serialize(&self, value: &T) -> Bytes {
        Bytes::copy_from_slice(value.as_ref().as_bytes())
    }
}

/// A keyed serialization schema (Flink's `KeyedSerializationSchema`): key
/// (`None` = null), value and an optional target topic per record (`None` =
/// the sink's default topic). Wrap it in [`Keyed`] to give it to the sink.
///
/// ```
/// use bytes::Bytes;
/// use kafka_sink::kafka::{KafkaSerializationSchema, KafkaSinkRecord, Keyed, KeyedSerializationSchema};
/// struct ByUser;
/// impl KeyedSerializationSchema<(String, u32)> for ByUser {
///     fn serialize_key(&self, v: &(String, u32)) -> Option<Bytes> { Some(Bytes::from(v.0.clone())) }
///     fn serialize_value(&self, v: &(String, u32)) -> Bytes { Bytes::from(v.1.to_string()) }
///     fn target_topic(&self, v: &(String, u32)) -> Option<String> {
///         (v.1 > 100).then(|| "big-orders".to_string())
///     }
/// }
/// let r = Keyed(ByUser).serialize(&("ann".into(), 500));
/// assert_eq!(r, KafkaSinkRecord::keyed("ann", "500").to_topic("big-orders"));
/// ```
pub trait KeyedSerializationSchema<T>: Send + Sync {
    /// The record key (`None` = null key).
    fn serialize_key(&self, value: &T) -> Option<Bytes>;
    /// The record value.
    fn serialize_value(&self, value: &T) -> Bytes;
    /// The topic of this record; `None` (the default) = the sink's default
    /// topic.
    fn target_topic(&self, value: &T) -> Option<String> {
        let _ = value;
        None
    }
}

/// Adapts a value-only [`SerializationSchema`] to the sink.
#[derive(Debug, Clone, Copy, Default)]
pub struct ValueOnly<S>(pub S);

impl<T, S: SerializationSchema<T>> KafkaSerializationSchema<T> for ValueOnly<S> {
    fn serialize(&self, value: &T) -> KafkaSinkRecord {
        KafkaSinkRecord::value(self.0.serialize(value))
    }
}

/// Adapts a [`KeyedSerializationSchema`] to the sink.
#[derive(Debug, Clone, Copy, Default)]
pub struct Keyed<S>(pub S);

impl<T, S: KeyedSerializationSchema<T>> KafkaSerializationSchema<T> for Keyed<S> {
    fn serialize(&self, value: &T) -> KafkaSinkRecord {
        KafkaSinkRecord {
            topic: self.0.target_topic(value),
            key: self.0.serialize_key(value),
            value: self.0.serialize_value(value),
        }
    }
}

/// Why an input could not be turned into a record: what an
/// [`AsyncKafkaSerializationSchema`] returns (a registry that is down, a
/// schema it refused, a value that does not match its schema). The sink
/// fails that `invoke` with [`KafkaSinkError::Serialization`]; the record
/// was not sent, and the open transaction is aborted by the usual failure
/// path (`close`, or a restore).
///
/// The cause is kept as the schema's own error: [`Self::downcast_ref`]
/// finds it.
///
/// [`KafkaSinkError::Serialization`]: super::KafkaSinkError::Serialization
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SerializationError(Box<dyn StdError + Send + Sync>);

impl SerializationError {
    /// Wraps the schema's error.
    ///
    /// ```
    /// use kafka_sink::kafka::SerializationError;
    /// let e = SerializationError::new("field `total` is missing");
    /// assert_eq!(e.to_string(), "field `total` is missing");
    /// ```
    pub fn new(source: impl Into<Box<dyn StdError + Send + Sync>>) -> Self {
        SerializationError(source.into())
    }

    /// The schema's error as type `E`, if it is one.
    pub fn downcast_ref<E: StdError + 'static>(&self) -> Option<&E> {
        self.0.downcast_ref()
    }

    /// The schema's error.
    pub fn into_inner(self) -> Box<dyn StdError + Send + Sync> {
        self.0
    }
}

/// What [`AsyncKafkaSerializationSchema::serialize`] returns.
pub type SerializeFuture<'a> =
    Pin<Box<dyn Future<Output = Result<KafkaSinkRecord, SerializationError>> + Send + 'a>>;

/// Turns a sink input into a [`KafkaSinkRecord`] asynchronously, and may
/// fail: the schema of formats that need I/O, such as a schema registry's
/// (the first value of a schema registers it or looks it up). The sink
/// awaits it in `invoke` before the record is sent, so a value that cannot
/// be serialized never reaches a batch; the failure fails that `invoke`.
///
/// `default_topic` is the sink's topic, for a record whose schema names
/// none (registry subjects are named after the topic).
///
/// ```
/// use bytes::Bytes;
/// use kafka_sink::kafka::{AsyncKafkaSerializationSchema, KafkaSinkRecord, SerializationError, SerializeFuture};
/// /// Even numbers only.
/// struct Even;
/// impl AsyncKafkaSerializationSchema<u32> for Even {
///     fn serialize<'a>(&'a self, value: &'a u32, _default_topic: &'a str) -> SerializeFuture<'a> {
///         let r = if value % 2 == 0 {
///             Ok(KafkaSinkRecord::value(Bytes::from(value.to_string())))
///         } else {
///             Err(SerializationError::new(format!("{value} is odd")))
///         };
///         Box::pin(std::future::ready(r))
///     }
/// }
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// assert_eq!(Even.serialize(&2, "t").await.unwrap(), KafkaSinkRecord::value("2"));
/// assert!(Even.serialize(&3, "t").await.is_err());
/// # });
/// ```
pub trait AsyncKafkaSerializationSchema<T>: Send + Sync {
    /// Serializes one input.
    fn serialize<'a>(&'a self, value: &'a T, default_topic: &'a str) -> SerializeFuture<'a>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_only_and_keyed_schemas() {
        let s = ValueOnly(SimpleStringSchema);
        assert_eq!(
            KafkaSerializationSchema::<String>::serialize(&s, &"v".to_string()),
            KafkaSinkRecord::value("v")
        );
        struct K;
        impl KeyedSerializationSchema<u32> for K {
            fn serialize_key(&self, v: &u32) -> Option<Bytes> {
                (*v > 0).then(|| Bytes::from(v.to_string()))
            }
            fn serialize_value(&self, v: &u32) -> Bytes {
                Bytes::from(format!("v{v}"))
            }
        }
        assert_eq!(Keyed(K).serialize(&0), KafkaSinkRecord::value("v0"));
        assert_eq!(Keyed(K).serialize(&2), KafkaSinkRecord::keyed("2", "v2"));
    }

    /// Invariant: a value-only record has no key and no topic of its own.
    #[test]
    fn value_record_has_no_key_and_the_default_topic() {
        let r = KafkaSinkRecord::value("hello");
        assert_eq!((r.topic, r.key, &r.value[..]), (None, None, &b"hello"[..]));
        let r = KafkaSinkRecord::value("late").to_topic("orders-dlq");
        assert_eq!(r.topic.as_deref(), Some("orders-dlq"));
    }

    /// Invariant: `SimpleStringSchema` writes the string's UTF-8 bytes.
    #[test]
    fn simple_string_schema_writes_utf8() {
        assert_eq!(
            SerializationSchema::serialize(&SimpleStringSchema, &"héllo"),
            "héllo".as_bytes()
        );
    }

    /// Invariant: a closure is a sink schema.
    #[test]
    fn closure_is_a_kafka_serialization_schema() {
        let schema = |v: &String| KafkaSinkRecord::value(v.to_uppercase());
        assert_eq!(
            schema.serialize(&"hi".to_string()),
            KafkaSinkRecord::value("HI")
        );
    }

    /// Invariant: a keyed schema without `target_topic` sends to the default
    /// topic.
    #[test]
    fn keyed_schema_defaults_to_the_default_topic() {
        struct Plain;
        impl KeyedSerializationSchema<String> for Plain {
            fn serialize_key(&self, _: &String) -> Option<Bytes> {
                None
            }
            fn serialize_value(&self, v: &String) -> Bytes {
                Bytes::from(v.clone())
            }
        }
        assert_eq!(Plain.target_topic(&"x".to_string()), None);
        assert_eq!(
            Keyed(Plain).serialize(&"x".to_string()),
            KafkaSinkRecord::value("x")
        );
    }
}
