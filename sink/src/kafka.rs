//! The Kafka sink: Flink's `FlinkKafkaProducer` (EXACTLY_ONCE /
//! AT_LEAST_ONCE / NONE) on the kafka-eos [`TransactionalProducer`], as a
//! [`TwoPhaseCommitHandler`] and a [`CheckpointedOperator`].
//!
//! **EXACTLY_ONCE.** A pool of `pool_size` (default 5) transactional ids
//! `prefix-n` per subtask; one id serves the open transaction and one each
//! un-notified checkpoint, so the pool bounds the number of concurrent
//! checkpoints ([`KafkaSinkError::PoolExhausted`]). Each id has one
//! [`TransactionalProducer`], initialised (fencing and aborting whatever an
//! earlier process left open under that id) before its first transaction and
//! reused afterwards. Pre-commit is
//! [`prepare_transaction`](TransactionalProducer::prepare_transaction) (flush,
//! every partition registered) and its [`PreparedTransaction`] is the
//! persisted handle, so a restored process commits what a dead one
//! pre-committed with [`commit_prepared`]. An empty transaction is never
//! committed (nothing is prepared; the id is recycled).
//!
//! Ids are Flink's `TransactionalIdsGenerator`: subtask `s` uses
//! `next_free + s × pool + i`; a [`NextTransactionalIdHint`] (written by
//! subtask 0) moves `next_free` past every id in use when the parallelism
//! grows. A fresh start (no hint restored) aborts the ids in
//! `[0, parallelism × pool × SAFE_SCALE_DOWN_FACTOR)` and, where the broker
//! supports ListTransactions, every other open transaction of the prefix.
//!
//! **AT_LEAST_ONCE** (the default) flushes one shared idempotent producer
//! at every checkpoint; **NONE** only checks for send errors.
//!
//! **Options** (Flink's): [`SinkPartitioner`] (default `None`: the
//! producer's `partitioner.class`, by default murmur2 of the key as Java's
//! producer and sticky for null keys; `Fixed`: subtask → partition;
//! `Custom`), [`KafkaSinkConfig::set_write_timestamp_to_kafka`],
//! [`KafkaSinkConfig::set_log_failures_only`] (refused unless NONE, because
//! it drops records), value-only ([`SerializationSchema`] via [`ValueOnly`])
//! and keyed ([`KeyedSerializationSchema`] via [`Keyed`]: key, value,
//! optional topic per record) schemas, and producer metrics switched off by
//! [`KEY_DISABLE_METRICS`] in [`KafkaSinkConfig::from_properties`] or
//! [`KafkaSinkConfig::set_disable_metrics`].
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! use kafka_sink::kafka::{KafkaSink, KafkaSinkConfig, KafkaSinkRecord, Semantic};
//! use kafka_sink::{CheckpointedOperator, RecordContext};
//! use kafka_producer::ProducerConfig;
//! use std::time::Duration;
//!
//! let mut config = KafkaSinkConfig::new(ProducerConfig::new("127.0.0.1:9092"), "orders-out");
//! config.semantic = Semantic::ExactlyOnce;
//! config.transactional_id_prefix = Some("orders-job".into());
//! config.transaction_timeout = Duration::from_secs(600);
//! let mut sink = KafkaSink::connect(config, |v: &String| KafkaSinkRecord::value(v.clone())).await?;
//! sink.initialize_state(None).await?;
//! sink.invoke("hello".to_string(), &RecordContext::default()).await?;
//! let state = sink.snapshot_state(1).await?;   // persist durably, then:
//! sink.notify_checkpoint_complete(1).await?;   // "hello" is now committed
//! # let _ = state; Ok(()) }
//! ```

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use kafka_producer::admin::{self, TransactionFilters};
use kafka_producer::config::PartitionerChoice;
use kafka_producer::metrics::MetricsSnapshot;
use kafka_producer::partitioner::Partitioner;
use kafka_producer::txn::{ResumeOptions, ResumeOutcome, abort_prepared};
use kafka_producer::{
    Cluster, PreparedTransaction, ProduceError, Producer, ProducerConfig, ProducerRecord,
    RecordMetadata, TransactionError, TransactionalProducer, commit_prepared,
};

use crate::checkpoint::{CheckpointedOperator, OperatorError, RestoredState};
use crate::codec::StringSetCodec;
use crate::codec::{Codec, DecodeError, Reader, put_bytes, put_str, put_u8, put_u32, put_u64};
use crate::state::StateSerializer;
use crate::two_phase::{
    CommitOutcome, PreCommitted, RecordContext, TwoPhaseCommitError, TwoPhaseCommitHandler,
    TwoPhaseCommitSink,
};

/// Producers per subtask in the id pool (Flink's
/// `DEFAULT_KAFKA_PRODUCERS_POOL_SIZE`).
pub const DEFAULT_KAFKA_PRODUCERS_POOL_SIZE: usize = 5;
/// How far the parallelism may shrink before the first checkpoint with
/// every lingering transaction still found by the fixed-range abort.
pub const SAFE_SCALE_DOWN_FACTOR: u64 = 5;
/// Default `transaction.timeout.ms` of the sink (Flink's 1 hour). Brokers
/// allow 15 minutes by default (`transaction.max.timeout.ms`): lower it or
/// raise the broker's maximum; [`KafkaSink::connect`] checks.
pub const DEFAULT_KAFKA_TRANSACTION_TIMEOUT: Duration = Duration::from_secs(3600);
/// Task names are truncated to this many characters in the default prefix
/// (FLINK-17691).
pub const MAX_TASK_NAME_LENGTH: usize = 1000;

/// The delivery guarantee.
///
/// ```
/// use kafka_producer::ProducerConfig;
/// use kafka_sink::kafka::{KafkaSinkConfig, Semantic};
/// let mut config = KafkaSinkConfig::new(ProducerConfig::new("broker-1:9092"), "orders-out");
/// assert_eq!(config.semantic, Semantic::AtLeastOnce); // the default
/// config.semantic = Semantic::ExactlyOnce;
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Semantic {
    /// Kafka transactions committed when a checkpoint completes.
    ExactlyOnce,
    /// Flush at every checkpoint; duplicates possible after a restore.
    #[default]
    AtLeastOnce,
    /// No guarantee: records may be lost or duplicated.
    None,
}

/// One record to write, built by a [`KafkaSerializationSchema`]: key,
/// value and optionally a topic other than the sink's default.
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
    ///
    /// ```
    /// use kafka_sink::kafka::KafkaSinkRecord;
    /// let r = KafkaSinkRecord::value("hello");
    /// assert_eq!((r.topic, r.key, &r.value[..]), (None, None, &b"hello"[..]));
    /// ```
    pub fn value(value: impl Into<Bytes>) -> Self {
        KafkaSinkRecord {
            topic: None,
            key: None,
            value: value.into(),
        }
    }

    /// A keyed record for the default topic.
    ///
    /// ```
    /// use kafka_sink::kafka::KafkaSinkRecord;
    /// let r = KafkaSinkRecord::keyed("customer-7", "order-1");
    /// assert_eq!(r.key.as_deref(), Some(&b"customer-7"[..]));
    /// ```
    pub fn keyed(key: impl Into<Bytes>, value: impl Into<Bytes>) -> Self {
        KafkaSinkRecord {
            topic: None,
            key: Some(key.into()),
            value: value.into(),
        }
    }

    /// Sends the record to `topic` instead of the default topic.
    ///
    /// ```
    /// use kafka_sink::kafka::KafkaSinkRecord;
    /// let r = KafkaSinkRecord::value("late event").to_topic("orders-dlq");
    /// assert_eq!(r.topic.as_deref(), Some("orders-dlq"));
    /// ```
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
    ///
    /// ```
    /// use kafka_sink::kafka::{KafkaSerializationSchema, KafkaSinkRecord};
    /// // A closure is a schema.
    /// let schema = |v: &String| KafkaSinkRecord::value(v.to_uppercase());
    /// assert_eq!(schema.serialize(&"hi".to_string()), KafkaSinkRecord::value("HI"));
    /// ```
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
    ///
    /// ```
    /// use kafka_sink::kafka::{SerializationSchema, SimpleStringSchema};
    /// assert_eq!(SimpleStringSchema.serialize(&"héllo"), "héllo".as_bytes());
    /// ```
    fn serialize(&self, value: &T) -> Bytes;
}

impl<T, F: Fn(&T) -> Bytes + Send + Sync> SerializationSchema<T> for F {
    fn serialize(&self, value: &T) -> Bytes {
        self(value)
    }
}

/// Flink's `SimpleStringSchema`: the UTF-8 bytes of a string.
///
/// ```
/// use kafka_sink::kafka::{KafkaSerializationSchema, KafkaSinkRecord, SimpleStringSchema, ValueOnly};
/// let schema = ValueOnly(SimpleStringSchema);
/// assert_eq!(schema.serialize(&"order-1".to_string()), KafkaSinkRecord::value("order-1"));
/// ```
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
    ///
    /// ```
    /// # use bytes::Bytes;
    /// # use kafka_sink::kafka::KeyedSerializationSchema;
    /// # /// Orders keyed by user; big ones go to their own topic.
    /// # struct ByUser;
    /// # impl KeyedSerializationSchema<(String, u32)> for ByUser {
    /// #     fn serialize_key(&self, v: &(String, u32)) -> Option<Bytes> { Some(Bytes::from(v.0.clone())) }
    /// #     fn serialize_value(&self, v: &(String, u32)) -> Bytes { Bytes::from(v.1.to_string()) }
    /// #     fn target_topic(&self, v: &(String, u32)) -> Option<String> { (v.1 > 100).then(|| "big-orders".to_string()) }
    /// # }
    /// assert_eq!(ByUser.serialize_key(&("ann".into(), 5)), Some(Bytes::from("ann")));
    /// ```
    fn serialize_key(&self, value: &T) -> Option<Bytes>;
    /// The record value.
    ///
    /// ```
    /// # use bytes::Bytes;
    /// # use kafka_sink::kafka::KeyedSerializationSchema;
    /// # /// Orders keyed by user; big ones go to their own topic.
    /// # struct ByUser;
    /// # impl KeyedSerializationSchema<(String, u32)> for ByUser {
    /// #     fn serialize_key(&self, v: &(String, u32)) -> Option<Bytes> { Some(Bytes::from(v.0.clone())) }
    /// #     fn serialize_value(&self, v: &(String, u32)) -> Bytes { Bytes::from(v.1.to_string()) }
    /// #     fn target_topic(&self, v: &(String, u32)) -> Option<String> { (v.1 > 100).then(|| "big-orders".to_string()) }
    /// # }
    /// assert_eq!(ByUser.serialize_value(&("ann".into(), 5)), Bytes::from("5"));
    /// ```
    fn serialize_value(&self, value: &T) -> Bytes;
    /// The topic of this record; `None` (the default) = the sink's default
    /// topic.
    ///
    /// ```
    /// use bytes::Bytes;
    /// use kafka_sink::kafka::KeyedSerializationSchema;
    /// struct Plain;
    /// impl KeyedSerializationSchema<String> for Plain {
    ///     fn serialize_key(&self, _: &String) -> Option<Bytes> { None }
    ///     fn serialize_value(&self, v: &String) -> Bytes { Bytes::from(v.clone()) }
    /// }
    /// assert_eq!(Plain.target_topic(&"x".to_string()), None); // the sink's default topic
    /// ```
    fn target_topic(&self, value: &T) -> Option<String> {
        let _ = value;
        None
    }
}

/// Adapts a value-only [`SerializationSchema`] to the sink.
///
/// ```
/// use bytes::Bytes;
/// use kafka_sink::kafka::{KafkaSerializationSchema, KafkaSinkRecord, ValueOnly};
/// let schema = ValueOnly(|v: &u64| Bytes::from(v.to_be_bytes().to_vec()));
/// assert_eq!(schema.serialize(&1), KafkaSinkRecord::value(vec![0, 0, 0, 0, 0, 0, 0, 1]));
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct ValueOnly<S>(pub S);

impl<T, S: SerializationSchema<T>> KafkaSerializationSchema<T> for ValueOnly<S> {
    fn serialize(&self, value: &T) -> KafkaSinkRecord {
        KafkaSinkRecord::value(self.0.serialize(value))
    }
}

/// Adapts a [`KeyedSerializationSchema`] to the sink.
///
/// ```
/// # use bytes::Bytes;
/// # use kafka_sink::kafka::KeyedSerializationSchema;
/// # /// Orders keyed by user; big ones go to their own topic.
/// # struct ByUser;
/// # impl KeyedSerializationSchema<(String, u32)> for ByUser {
/// #     fn serialize_key(&self, v: &(String, u32)) -> Option<Bytes> { Some(Bytes::from(v.0.clone())) }
/// #     fn serialize_value(&self, v: &(String, u32)) -> Bytes { Bytes::from(v.1.to_string()) }
/// #     fn target_topic(&self, v: &(String, u32)) -> Option<String> { (v.1 > 100).then(|| "big-orders".to_string()) }
/// # }
/// use kafka_sink::kafka::{KafkaSerializationSchema, KafkaSinkRecord, Keyed};
/// let schema = Keyed(ByUser);
/// assert_eq!(schema.serialize(&("ann".into(), 5)), KafkaSinkRecord::keyed("ann", "5"));
/// ```
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

/// How the sink assigns partitions to records.
///
/// As Flink's `FlinkKafkaProducer` with no custom partitioner, the default
/// ([`SinkPartitioner::None`]) leaves partitioning to the producer: its
/// `partitioner.class` (`ProducerConfig::partitioner`), by default the Java
/// client's (murmur2 of the key, sticky partitions for null keys). Flink's
/// `FlinkFixedPartitioner` (subtask `s` writes every record to partition
/// `s % partitions`; fewer subtasks than partitions leave partitions empty)
/// and user partitioners are explicit options. A sink partitioner and a
/// non-default producer `partitioner.class` together are refused by
/// [`KafkaSinkConfig::validate`], since one would silently replace the other.
///
/// ```
/// use kafka_producer::ProducerConfig;
/// use kafka_sink::kafka::KafkaSinkConfig;
/// let mut config = KafkaSinkConfig::new(ProducerConfig::new("broker-1:9092"), "orders-out");
/// use kafka_producer::PartitionerChoice;
/// use kafka_sink::kafka::SinkPartitioner;
/// config.subtask_index = 2;
/// config.parallelism = 4;
/// // The default: the producer's partitioner (key hash / sticky).
/// assert!(matches!(config.effective_producer_config().partitioner, PartitionerChoice::Default));
/// // Fixed: subtask 2 writes to partition 2 % partitions.
/// config.set_partitioner(SinkPartitioner::Fixed);
/// assert!(matches!(config.effective_producer_config().partitioner, PartitionerChoice::Fixed(2)));
/// ```
#[derive(Debug, Clone, Default)]
pub enum SinkPartitioner {
    /// No sink partitioner (Flink's `Optional.empty()`, the default): the
    /// producer's own `partitioner.class` decides, by default murmur2 of the
    /// key like the Java client and sticky partitions for null keys
    /// (KIP-480).
    #[default]
    None,
    /// Flink's `FlinkFixedPartitioner`: subtask → partition
    /// ([`kafka_producer::partitioner::FixedPartitioner`]).
    Fixed,
    /// A user partitioner (build it for this subtask; see
    /// [`KafkaSinkConfig::subtask_index`]).
    Custom(Arc<dyn Partitioner>),
}

/// The producer property that switches the sink's producer metrics off
/// (Flink's `FlinkKafkaProducer.KEY_DISABLE_METRICS`).
pub const KEY_DISABLE_METRICS: &str = "flink.disable-metrics";

/// Configuration of a [`KafkaSink`] subtask.
///
/// ```
/// use kafka_producer::ProducerConfig;
/// use kafka_sink::kafka::{KafkaSinkConfig, Semantic};
/// use std::time::Duration;
/// let mut config = KafkaSinkConfig::new(ProducerConfig::new("broker-1:9092"), "orders-out");
/// config.semantic = Semantic::ExactlyOnce;
/// config.transactional_id_prefix = Some("orders-job".into());
/// config.transaction_timeout = Duration::from_secs(15 * 60);
/// (config.subtask_index, config.parallelism) = (1, 4);
/// config.validate().unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct KafkaSinkConfig {
    /// The producer settings (`bootstrap.servers`, batching...). Its
    /// `transactional_id` and `transaction_timeout` are set by the sink.
    pub producer: ProducerConfig,
    /// Topic of records whose schema names none.
    pub default_topic: String,
    /// Delivery guarantee (default AT_LEAST_ONCE).
    pub semantic: Semantic,
    /// Transactional ids per subtask (default 5).
    pub pool_size: usize,
    /// Prefix of the transactional ids; default `task_name-operator_id`.
    pub transactional_id_prefix: Option<String>,
    /// Task name for the default prefix.
    pub task_name: String,
    /// Operator id for the default prefix.
    pub operator_id: String,
    /// This subtask's index.
    pub subtask_index: u32,
    /// Number of sink subtasks.
    pub parallelism: u32,
    /// `transaction.timeout.ms` (default 1 hour; must not exceed the
    /// broker's `transaction.max.timeout.ms`).
    pub transaction_timeout: Duration,
    /// Write the record context's timestamp as the Kafka timestamp
    /// (otherwise the producer's create time).
    pub write_timestamp_to_kafka: bool,
    /// Log send failures instead of failing the checkpoint. Only allowed
    /// with [`Semantic::None`]: under AT_LEAST_ONCE or EXACTLY_ONCE it would
    /// lose records silently (Flink allows it; here [`KafkaSink::connect`]
    /// refuses it).
    pub log_failures_only: bool,
    /// Partition assignment (default [`SinkPartitioner::None`]: the
    /// producer's `partitioner.class`).
    pub partitioner: SinkPartitioner,
    /// Switch the producers' metrics off (also set by the
    /// [`KEY_DISABLE_METRICS`] property).
    pub disable_metrics: bool,
    /// Deadline of abort/commit calls on transactions of other processes.
    pub recovery_timeout: Duration,
}

impl KafkaSinkConfig {
    /// Defaults for subtask 0 of 1 writing to `default_topic`.
    ///
    /// ```
    /// use kafka_producer::ProducerConfig;
    /// use kafka_sink::kafka::{KafkaSinkConfig, DEFAULT_KAFKA_PRODUCERS_POOL_SIZE};
    /// let config = KafkaSinkConfig::new(ProducerConfig::new("broker-1:9092"), "orders-out");
    /// assert_eq!((config.subtask_index, config.parallelism), (0, 1));
    /// assert_eq!(config.pool_size, DEFAULT_KAFKA_PRODUCERS_POOL_SIZE);
    /// ```
    pub fn new(producer: ProducerConfig, default_topic: impl Into<String>) -> Self {
        KafkaSinkConfig {
            producer,
            default_topic: default_topic.into(),
            semantic: Semantic::default(),
            pool_size: DEFAULT_KAFKA_PRODUCERS_POOL_SIZE,
            transactional_id_prefix: None,
            task_name: "kafka-sink".into(),
            operator_id: "0".into(),
            subtask_index: 0,
            parallelism: 1,
            transaction_timeout: DEFAULT_KAFKA_TRANSACTION_TIMEOUT,
            write_timestamp_to_kafka: false,
            log_failures_only: false,
            partitioner: SinkPartitioner::None,
            disable_metrics: false,
            recovery_timeout: Duration::from_secs(60),
        }
    }

    /// Builds the configuration from Java-style producer properties, as
    /// Flink's `FlinkKafkaProducer(topic, schema, properties)` does:
    /// [`KEY_DISABLE_METRICS`] (`flink.disable-metrics`) is the sink's own
    /// key, `transaction.timeout.ms` also sets
    /// [`transaction_timeout`](Self::transaction_timeout), and every other
    /// key goes to [`ProducerConfig::from_properties`].
    ///
    /// ```
    /// use kafka_sink::kafka::KafkaSinkConfig;
    /// let c = KafkaSinkConfig::from_properties(
    ///     [("bootstrap.servers", "h:9092"), ("flink.disable-metrics", "true")],
    ///     "out",
    /// ).unwrap();
    /// assert!(c.disable_metrics);
    /// ```
    pub fn from_properties<I, K, V>(
        props: I,
        default_topic: impl Into<String>,
    ) -> Result<Self, KafkaSinkError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut disable_metrics = false;
        let mut timeout = None;
        let mut rest = Vec::new();
        for (k, v) in props {
            let (k, v) = (k.as_ref().trim(), v.as_ref().trim());
            match k {
                KEY_DISABLE_METRICS => {
                    disable_metrics = match v.to_ascii_lowercase().as_str() {
                        "true" => true,
                        "false" => false,
                        _ => return Err(bad_value(KEY_DISABLE_METRICS, v)),
                    }
                }
                "transaction.timeout.ms" => {
                    let ms = v.parse::<u64>().map_err(|_| bad_value(k, v))?;
                    timeout = Some(Duration::from_millis(ms));
                    rest.push((k.to_owned(), v.to_owned()));
                }
                _ => rest.push((k.to_owned(), v.to_owned())),
            }
        }
        let producer = ProducerConfig::from_properties(rest)
            .map_err(|e| KafkaSinkError::Config(e.to_string()))?;
        let mut c = KafkaSinkConfig::new(producer, default_topic);
        c.disable_metrics = disable_metrics;
        if let Some(t) = timeout {
            c.transaction_timeout = t;
        }
        Ok(c)
    }

    /// Flink's `setWriteTimestampToKafka`.
    ///
    /// ```
    /// use kafka_producer::ProducerConfig;
    /// use kafka_sink::kafka::KafkaSinkConfig;
    /// let mut config = KafkaSinkConfig::new(ProducerConfig::new("broker-1:9092"), "orders-out");
    /// config.set_write_timestamp_to_kafka(true); // RecordContext::timestamp becomes the record timestamp
    /// assert!(config.write_timestamp_to_kafka);
    /// ```
    pub fn set_write_timestamp_to_kafka(&mut self, on: bool) -> &mut Self {
        self.write_timestamp_to_kafka = on;
        self
    }

    /// Flink's `setLogFailuresOnly`, refused unless the semantic is
    /// [`Semantic::None`] (set the semantic first): logging instead of
    /// failing drops records, which breaks AT_LEAST_ONCE and EXACTLY_ONCE.
    ///
    /// ```
    /// use kafka_producer::ProducerConfig;
    /// use kafka_sink::kafka::KafkaSinkConfig;
    /// let mut config = KafkaSinkConfig::new(ProducerConfig::new("broker-1:9092"), "orders-out");
    /// use kafka_sink::kafka::Semantic;
    /// assert!(config.set_log_failures_only(true).is_err()); // AT_LEAST_ONCE would lose records
    /// config.semantic = Semantic::None;
    /// config.set_log_failures_only(true).unwrap();
    /// ```
    pub fn set_log_failures_only(&mut self, on: bool) -> Result<&mut Self, KafkaSinkError> {
        self.log_failures_only = on;
        self.validate()?;
        Ok(self)
    }

    /// Sets the partitioner ([`SinkPartitioner::None`], the producer's
    /// `partitioner.class`, by default). `Fixed` or `Custom` with a
    /// non-default `partitioner.class` in [`producer`](Self::producer) is
    /// refused by [`validate`](Self::validate).
    ///
    /// ```
    /// use kafka_producer::partitioner::Partitioner;
    /// use kafka_sink::kafka::SinkPartitioner;
    /// use std::sync::Arc;
    /// /// Every record to partition 0.
    /// #[derive(Debug)]
    /// struct First;
    /// impl Partitioner for First {
    ///     fn partition(&self, _: &str, _: Option<&[u8]>, _: Option<&[u8]>, _: i32) -> i32 { 0 }
    /// }
    /// use kafka_producer::ProducerConfig;
    /// use kafka_sink::kafka::KafkaSinkConfig;
    /// let mut config = KafkaSinkConfig::new(ProducerConfig::new("broker-1:9092"), "orders-out");
    /// config.set_partitioner(SinkPartitioner::Custom(Arc::new(First)));
    /// ```
    pub fn set_partitioner(&mut self, partitioner: SinkPartitioner) -> &mut Self {
        self.partitioner = partitioner;
        self
    }

    /// Switches the producers' metrics off (Flink's `flink.disable-metrics`).
    ///
    /// ```
    /// use kafka_producer::ProducerConfig;
    /// use kafka_sink::kafka::KafkaSinkConfig;
    /// let mut config = KafkaSinkConfig::new(ProducerConfig::new("broker-1:9092"), "orders-out");
    /// config.set_disable_metrics(true);
    /// assert!(!config.effective_producer_config().metrics_enabled);
    /// ```
    pub fn set_disable_metrics(&mut self, off: bool) -> &mut Self {
        self.disable_metrics = off;
        self
    }

    /// Checks option combinations (called by [`KafkaSink::connect`]).
    ///
    /// ```
    /// use kafka_producer::ProducerConfig;
    /// use kafka_sink::kafka::KafkaSinkConfig;
    /// let mut config = KafkaSinkConfig::new(ProducerConfig::new("broker-1:9092"), "orders-out");
    /// use kafka_sink::kafka::KafkaSinkError;
    /// config.subtask_index = 4;
    /// config.parallelism = 4; // subtask indexes are 0..parallelism
    /// assert!(matches!(config.validate(), Err(KafkaSinkError::Config(_))));
    /// ```
    pub fn validate(&self) -> Result<(), KafkaSinkError> {
        if self.pool_size == 0 {
            return Err(KafkaSinkError::Config("pool_size must be > 0".into()));
        }
        if self.parallelism == 0 || self.subtask_index >= self.parallelism {
            return Err(KafkaSinkError::Config(format!(
                "subtask {} of parallelism {}",
                self.subtask_index, self.parallelism
            )));
        }
        if !matches!(self.partitioner, SinkPartitioner::None)
            && !matches!(self.producer.partitioner, PartitionerChoice::Default)
        {
            return Err(KafkaSinkError::Config(format!(
                "both a sink partitioner ({}) and the producer's partitioner.class ({:?}) \
                 are set and only one can assign partitions: remove partitioner.class or \
                 set the sink partitioner to SinkPartitioner::None",
                match self.partitioner {
                    SinkPartitioner::Fixed => "Fixed",
                    _ => "Custom",
                },
                self.producer.partitioner
            )));
        }
        if self.log_failures_only && self.semantic != Semantic::None {
            return Err(KafkaSinkError::Config(format!(
                "log_failures_only would silently drop records under {:?}; \
                 it is only allowed with Semantic::None",
                self.semantic
            )));
        }
        Ok(())
    }

    /// The producer configuration the sink's producers use: `producer` with
    /// the partitioner and metrics options applied (no transactional id).
    ///
    /// ```
    /// use kafka_producer::ProducerConfig;
    /// use kafka_sink::kafka::KafkaSinkConfig;
    /// let mut config = KafkaSinkConfig::new(ProducerConfig::new("broker-1:9092"), "orders-out");
    /// config.producer.transactional_id = Some("set-by-the-sink".into());
    /// config.set_disable_metrics(true);
    /// let producer = config.effective_producer_config();
    /// assert_eq!(producer.transactional_id, None);
    /// assert!(!producer.metrics_enabled);
    /// ```
    pub fn effective_producer_config(&self) -> ProducerConfig {
        let mut c = self.producer.clone();
        c.transactional_id = None;
        match &self.partitioner {
            SinkPartitioner::Fixed => {
                c.partitioner = PartitionerChoice::Fixed(self.subtask_index as usize)
            }
            SinkPartitioner::None => {}
            SinkPartitioner::Custom(p) => c.partitioner = PartitionerChoice::Custom(p.clone()),
        }
        if self.disable_metrics {
            c.metrics_enabled = false;
        }
        c
    }

    /// The transactional id prefix in use.
    ///
    /// ```
    /// use kafka_producer::ProducerConfig;
    /// use kafka_sink::kafka::KafkaSinkConfig;
    /// let mut config = KafkaSinkConfig::new(ProducerConfig::new("broker-1:9092"), "orders-out");
    /// config.task_name = "orders-job".into();
    /// config.operator_id = "sink-1".into();
    /// assert_eq!(config.prefix(), "orders-job-sink-1");
    /// config.transactional_id_prefix = Some("orders".into());
    /// assert_eq!(config.prefix(), "orders");
    /// ```
    pub fn prefix(&self) -> String {
        match &self.transactional_id_prefix {
            Some(p) => p.clone(),
            None => {
                let task: String = self.task_name.chars().take(MAX_TASK_NAME_LENGTH).collect();
                format!("{task}-{}", self.operator_id)
            }
        }
    }

    /// The id generator of this subtask.
    ///
    /// ```
    /// use kafka_producer::ProducerConfig;
    /// use kafka_sink::kafka::KafkaSinkConfig;
    /// let mut config = KafkaSinkConfig::new(ProducerConfig::new("broker-1:9092"), "orders-out");
    /// config.transactional_id_prefix = Some("orders".into());
    /// (config.subtask_index, config.parallelism, config.pool_size) = (1, 2, 3);
    /// let ids: Vec<String> = config.ids().generate_ids_to_use(0).into_iter().collect();
    /// assert_eq!(ids, ["orders-3", "orders-4", "orders-5"]);
    /// ```
    pub fn ids(&self) -> TransactionalIdsGenerator {
        TransactionalIdsGenerator {
            prefix: self.prefix(),
            subtask_index: self.subtask_index,
            parallelism: self.parallelism,
            pool_size: self.pool_size as u64,
            safe_scale_down_factor: SAFE_SCALE_DOWN_FACTOR,
        }
    }
}

fn bad_value(key: &str, value: &str) -> KafkaSinkError {
    KafkaSinkError::Config(format!("invalid value {value:?} for {key}"))
}

/// Flink's `TransactionalIdsGenerator`: disjoint id ranges per subtask.
///
/// ```
/// use kafka_sink::kafka::TransactionalIdsGenerator;
/// let g = TransactionalIdsGenerator { prefix: "p".into(), subtask_index: 1, parallelism: 2, pool_size: 3, safe_scale_down_factor: 5 };
/// assert_eq!(g.generate_ids_to_use(0).into_iter().collect::<Vec<_>>(), ["p-3", "p-4", "p-5"]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionalIdsGenerator {
    /// Id prefix.
    pub prefix: String,
    /// This subtask.
    pub subtask_index: u32,
    /// Subtasks.
    pub parallelism: u32,
    /// Ids per subtask.
    pub pool_size: u64,
    /// [`SAFE_SCALE_DOWN_FACTOR`].
    pub safe_scale_down_factor: u64,
}

impl TransactionalIdsGenerator {
    /// `prefix-n`.
    ///
    /// ```
    /// use kafka_sink::kafka::TransactionalIdsGenerator;
    /// let g = TransactionalIdsGenerator { prefix: "orders".into(), subtask_index: 0, parallelism: 1, pool_size: 5, safe_scale_down_factor: 5 };
    /// assert_eq!(g.id(12), "orders-12");
    /// ```
    pub fn id(&self, n: u64) -> String {
        format!("{}-{n}", self.prefix)
    }

    /// `{ next_free + subtask × pool + i | i < pool }`.
    ///
    /// ```
    /// use kafka_sink::kafka::TransactionalIdsGenerator;
    /// let g = TransactionalIdsGenerator { prefix: "p".into(), subtask_index: 0, parallelism: 2, pool_size: 2, safe_scale_down_factor: 5 };
    /// // After a restore whose hint says ids below 10 may be in use:
    /// assert_eq!(g.generate_ids_to_use(10).into_iter().collect::<Vec<_>>(), ["p-10", "p-11"]);
    /// ```
    pub fn generate_ids_to_use(&self, next_free: u64) -> BTreeSet<String> {
        let start = next_free + u64::from(self.subtask_index) * self.pool_size;
        (start..start + self.pool_size)
            .map(|n| self.id(n))
            .collect()
    }

    /// This subtask's share of `[0, parallelism × pool × factor)`.
    ///
    /// ```
    /// use kafka_sink::kafka::TransactionalIdsGenerator;
    /// let g = TransactionalIdsGenerator { prefix: "p".into(), subtask_index: 0, parallelism: 1, pool_size: 2, safe_scale_down_factor: 2 };
    /// assert_eq!(g.generate_ids_to_abort().into_iter().collect::<Vec<_>>(), ["p-0", "p-1", "p-2", "p-3"]);
    /// ```
    pub fn generate_ids_to_abort(&self) -> BTreeSet<String> {
        (0..self.safe_scale_down_factor)
            .flat_map(|i| {
                self.generate_ids_to_use(i * self.pool_size * u64::from(self.parallelism))
            })
            .collect()
    }

    /// The end of the fixed abort range (exclusive).
    ///
    /// ```
    /// use kafka_sink::kafka::TransactionalIdsGenerator;
    /// let g = TransactionalIdsGenerator { prefix: "p".into(), subtask_index: 0, parallelism: 2, pool_size: 3, safe_scale_down_factor: 5 };
    /// assert_eq!(g.abort_range_end(), 30); // 2 subtasks × 3 ids × 5
    /// ```
    pub fn abort_range_end(&self) -> u64 {
        u64::from(self.parallelism) * self.pool_size * self.safe_scale_down_factor
    }
}

/// Where the next free transactional id starts (Flink's
/// `NextTransactionalIdHint`, union state written by subtask 0).
///
/// ```
/// use kafka_sink::kafka::{NextTransactionalIdHint, TransactionalIdsGenerator};
/// // Written by subtask 0 of a job with parallelism 2 and pool size 5.
/// let hint = NextTransactionalIdHint { last_parallelism: 2, next_free_transactional_id: 10 };
/// let g = TransactionalIdsGenerator { prefix: "p".into(), subtask_index: 0, parallelism: 3, pool_size: 5, safe_scale_down_factor: 5 };
/// assert!(g.generate_ids_to_use(hint.next_free_transactional_id).contains("p-10"));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NextTransactionalIdHint {
    /// Parallelism when the hint was written.
    pub last_parallelism: u32,
    /// First id not used by any subtask.
    pub next_free_transactional_id: u64,
}

/// Errors of the Kafka sink.
///
/// ```
/// use kafka_sink::kafka::KafkaSinkError;
/// let err = KafkaSinkError::PoolExhausted { pool_size: 5 };
/// assert!(err.to_string().contains("Increase the kafka producers pool size"));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KafkaSinkError {
    /// The pool has no free transactional id.
    #[error(
        "Too many ongoing snapshots: all {pool_size} transactional ids are in use. \
         Increase the kafka producers pool size or decrease the number of concurrent checkpoints."
    )]
    PoolExhausted {
        /// The pool size.
        pool_size: usize,
    },
    /// The transaction timeout exceeds the broker's maximum.
    #[error(
        "transaction timeout {configured:?} exceeds the broker's transaction.max.timeout.ms \
         ({broker_max:?}): lower KafkaSinkConfig::transaction_timeout or raise the broker setting"
    )]
    TransactionTimeoutTooLarge {
        /// The sink's timeout.
        configured: Duration,
        /// The broker's maximum.
        broker_max: Duration,
    },
    /// Invalid configuration.
    #[error("invalid Kafka sink configuration: {0}")]
    Config(String),
    /// Connecting failed.
    #[error("connecting to Kafka failed: {0}")]
    Connect(String),
    /// A transactional operation failed.
    #[error("transaction {transactional_id}: {source}")]
    Transaction {
        /// The id.
        transactional_id: String,
        /// The error.
        #[source]
        source: TransactionError,
    },
    /// A record could not be written.
    #[error("sending a record failed: {0}")]
    Produce(#[from] ProduceError),
    /// Finishing or aborting a transaction of another process failed.
    #[error("{0}")]
    Recovery(String),
    /// State could not be decoded.
    #[error("Kafka sink state: {0}")]
    State(#[from] DecodeError),
    /// More than one id hint in the restored union state.
    #[error("{0} NextTransactionalIdHints restored; expected at most one")]
    MultipleHints(usize),
}

/// A Kafka transaction handle: the transactional id and, once pre-committed
/// with records, the [`PreparedTransaction`] (producer id, epoch, transaction
/// version). Non-transactional semantics use an empty handle.
///
/// ```
/// use kafka_sink::kafka::KafkaTransaction;
/// let txn = KafkaTransaction { transactional_id: Some("orders-3".into()), ..Default::default() };
/// assert!(txn.prepared.is_none()); // not pre-committed yet
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KafkaTransaction {
    /// The transactional id (EXACTLY_ONCE).
    pub transactional_id: Option<String>,
    /// Set by pre-commit when the transaction has records.
    pub prepared: Option<PreparedTransaction>,
    /// Records written (not persisted).
    pub records: u64,
}

/// Codec of [`KafkaTransaction`]: flag + id, flag + `PreparedTransaction`
/// bytes.
///
/// ```
/// use kafka_producer::PreparedTransaction;
/// use kafka_producer::txn::TransactionVersion;
/// use kafka_sink::codec::Codec;
/// use kafka_sink::kafka::{KafkaTransaction, KafkaTransactionCodec};
/// let prepared = PreparedTransaction {
///     transactional_id: "orders-3".into(),
///     producer_id: 4_000,
///     producer_epoch: 7,
///     transaction_version: TransactionVersion::V2,
/// };
/// let txn = KafkaTransaction { transactional_id: Some("orders-3".into()), prepared: Some(prepared), records: 12 };
/// let mut buf = Vec::new();
/// KafkaTransactionCodec.encode(&txn, &mut buf);
/// let decoded = KafkaTransactionCodec.decode(&buf).unwrap();
/// assert_eq!(decoded, KafkaTransaction { records: 0, ..txn }); // the count is not persisted
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct KafkaTransactionCodec;

impl Codec<KafkaTransaction> for KafkaTransactionCodec {
    fn encode(&self, t: &KafkaTransaction, out: &mut Vec<u8>) {
        match &t.transactional_id {
            Some(id) => {
                put_u8(out, 1);
                put_str(out, id);
            }
            None => put_u8(out, 0),
        }
        match &t.prepared {
            Some(p) => {
                put_u8(out, 1);
                put_bytes(out, &p.encode());
            }
            None => put_u8(out, 0),
        }
    }

    fn decode(&self, bytes: &[u8]) -> Result<KafkaTransaction, DecodeError> {
        let mut r = Reader::new(bytes);
        let transactional_id = if r.flag()? {
            Some(r.str()?.to_owned())
        } else {
            None
        };
        let prepared = if r.flag()? {
            Some(
                PreparedTransaction::decode(r.bytes()?)
                    .map_err(|e| DecodeError::Invalid(e.to_string()))?,
            )
        } else {
            None
        };
        r.finish()?;
        Ok(KafkaTransaction {
            transactional_id,
            prepared,
            records: 0,
        })
    }
}

type SendFuture = Pin<Box<dyn Future<Output = Result<RecordMetadata, ProduceError>> + Send>>;

/// In-flight sends kept before awaiting the oldest (back-pressure).
const MAX_IN_FLIGHT: usize = 16_384;

/// The [`TwoPhaseCommitHandler`] of the Kafka sink (use it through
/// [`KafkaSink`]).
///
/// ```no_run
/// # async fn example() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// use kafka_producer::ProducerConfig;
/// use kafka_sink::kafka::{KafkaSink, KafkaSinkConfig, KafkaSinkRecord, Semantic};
/// let mut config = KafkaSinkConfig::new(ProducerConfig::new("broker-1:9092"), "orders-out");
/// config.semantic = Semantic::ExactlyOnce;
/// let mut sink = KafkaSink::connect(config, |v: &String| KafkaSinkRecord::value(v.clone())).await?;
/// let handler = sink.sink().handler(); // a KafkaSinkHandler<String>
/// println!("{handler:?}"); // semantic, prefix, free ids, producers
/// # Ok(()) }
/// ```
pub struct KafkaSinkHandler<T> {
    config: KafkaSinkConfig,
    schema: Arc<dyn KafkaSerializationSchema<T>>,
    cluster: Arc<Cluster>,
    shared: Option<Producer>,
    producers: HashMap<String, TransactionalProducer>,
    available: VecDeque<String>,
    in_flight: VecDeque<SendFuture>,
    hint: NextTransactionalIdHint,
    resume: ResumeOptions,
    logged_failures: u64,
}

impl<T> fmt::Debug for KafkaSinkHandler<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KafkaSinkHandler")
            .field("semantic", &self.config.semantic)
            .field("prefix", &self.config.prefix())
            .field("available", &self.available)
            .field("producers", &self.producers.keys().collect::<Vec<_>>())
            .field("in_flight", &self.in_flight.len())
            .field("hint", &self.hint)
            .finish_non_exhaustive()
    }
}

fn txn_err(id: &str) -> impl FnOnce(TransactionError) -> KafkaSinkError + '_ {
    move |source| KafkaSinkError::Transaction {
        transactional_id: id.to_owned(),
        source,
    }
}

impl<T> KafkaSinkHandler<T> {
    fn exactly_once(&self) -> bool {
        self.config.semantic == Semantic::ExactlyOnce
    }

    async fn producer_for(&mut self, id: &str) -> Result<TransactionalProducer, KafkaSinkError> {
        if let Some(p) = self.producers.get(id) {
            return Ok(p.clone());
        }
        let mut config = self.config.effective_producer_config();
        config.transactional_id = Some(id.to_owned());
        config.transaction_timeout = self.config.transaction_timeout;
        let p = TransactionalProducer::connect(config)
            .await
            .map_err(|e| KafkaSinkError::Connect(e.to_string()))?;
        // Fences any earlier producer of this id and aborts its transaction.
        p.init_transactions().await.map_err(txn_err(id))?;
        self.producers.insert(id.to_owned(), p.clone());
        Ok(p)
    }

    fn recycle(&mut self, id: &str) {
        if !self.available.iter().any(|a| a == id) {
            self.available.push_back(id.to_owned());
        }
    }

    async fn drop_producer(&mut self, id: &str) {
        if let Some(p) = self.producers.remove(id) {
            let _ = p.close(Duration::ZERO).await;
        }
    }

    async fn await_sends(&mut self, keep: usize) -> Result<(), KafkaSinkError> {
        let mut first_error = None;
        while self.in_flight.len() > keep {
            let Some(f) = self.in_flight.pop_front() else {
                break;
            };
            if let Err(e) = f.await {
                if self.config.log_failures_only {
                    self.logged_failures += 1;
                    tracing::error!(error = %e, "error while sending record to Kafka (log_failures_only: the record is lost)");
                } else {
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }
}

/// Aborts whatever another process left open under `id`.
async fn abort_lingering(
    cluster: &Cluster,
    timeout: Duration,
    id: &str,
) -> Result<(), KafkaSinkError> {
    admin::abort_lingering_transaction(cluster, id, timeout)
        .await
        .map(|_| ())
        .map_err(|e| KafkaSinkError::Recovery(format!("aborting {id}: {e}")))
}

/// Aborts the transactions of `ids` concurrently (FLINK-13498).
async fn abort_all(
    cluster: &Arc<Cluster>,
    timeout: Duration,
    ids: impl IntoIterator<Item = String>,
) -> Result<(), KafkaSinkError> {
    let mut set = tokio::task::JoinSet::new();
    for id in ids {
        let cluster = cluster.clone();
        set.spawn(async move { abort_lingering(&cluster, timeout, &id).await });
    }
    let mut first = None;
    while let Some(r) = set.join_next().await {
        match r {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                first.get_or_insert(e);
            }
            Err(e) => {
                first.get_or_insert(KafkaSinkError::Recovery(e.to_string()));
            }
        }
    }
    first.map_or(Ok(()), Err)
}

/// Fresh start: abort the fixed range, then (subtask 0) every other open
/// transaction of the prefix the broker lists.
async fn abort_on_fresh_start(
    cluster: &Arc<Cluster>,
    config: &KafkaSinkConfig,
) -> Result<(), KafkaSinkError> {
    let ids = config.ids();
    let timeout = config.recovery_timeout;
    abort_all(cluster, timeout, ids.generate_ids_to_abort()).await?;
    if config.subtask_index != 0 {
        return Ok(());
    }
    let filters = TransactionFilters::states(&["Ongoing", "PrepareCommit", "PrepareAbort"]);
    match admin::list_transactions(cluster, &filters).await {
        Ok(listed) => {
            let prefix = format!("{}-", ids.prefix);
            let lingering: Vec<String> = listed
                .into_iter()
                .filter_map(|t| {
                    let n: u64 = t.transactional_id.strip_prefix(&prefix)?.parse().ok()?;
                    (n >= ids.abort_range_end()).then_some(t.transactional_id)
                })
                .collect();
            if !lingering.is_empty() {
                tracing::warn!(?lingering, "aborting lingering transactions of the prefix");
            }
            abort_all(cluster, timeout, lingering).await
        }
        Err(e) => {
            tracing::warn!(error = %e, "ListTransactions unavailable; only the fixed id range was aborted");
            Ok(())
        }
    }
}

/// What finishing a prepared transaction means for the sink.
///
/// `Fenced` (the transactional id moved on: a newer producer initialized
/// it) is ambiguous on its own. Within its transaction timeout the
/// coordinator cannot have aborted the transaction, and the only producer
/// that initializes a pending transaction's id is a later run of this sink
/// that restored the same checkpoint, which commits it before it begins
/// anything (ids of a prefix belong to one sink, as in Flink). So a fenced
/// transaction younger than `timeout` was committed by an earlier restore
/// (FlinkKafkaProducer presumes the same on ProducerFenced). An older one may
/// have been aborted by the coordinator: it is reported lost.
/// `AbortedByBroker` is always lost.
fn outcome(id: &str, r: ResumeOutcome, age: Duration, timeout: Duration) -> CommitOutcome {
    match r {
        ResumeOutcome::Committed => CommitOutcome::Committed,
        ResumeOutcome::AlreadyCommitted => CommitOutcome::AlreadyCommitted,
        ResumeOutcome::Fenced { error, state } if age < timeout => {
            tracing::warn!(
                transactional_id = id,
                ?error,
                ?state,
                ?age,
                ?timeout,
                "a newer producer initialized the id of a transaction younger than its timeout: \
                 an earlier restore committed it"
            );
            CommitOutcome::AlreadyCommitted
        }
        other => CommitOutcome::Lost {
            reason: format!("transaction {id} (age {age:?}, timeout {timeout:?}): {other:?}"),
        },
    }
}

/// How long ago a pre-committed transaction began (wall clock).
fn age_of<T>(txn: &PreCommitted<T>) -> Duration {
    let now = crate::clock::Clock::now_millis(&crate::clock::SystemClock);
    Duration::from_millis(now.saturating_sub(txn.start_time_ms()))
}

impl<T: Send + Sync + 'static> TwoPhaseCommitHandler for KafkaSinkHandler<T> {
    type Value = T;
    type Txn = KafkaTransaction;
    type Ctx = BTreeSet<String>;
    type Error = KafkaSinkError;

    async fn begin_transaction(
        &mut self,
        _ctx: &mut BTreeSet<String>,
    ) -> Result<KafkaTransaction, KafkaSinkError> {
        if !self.exactly_once() {
            return Ok(KafkaTransaction::default());
        }
        let Some(id) = self.available.pop_front() else {
            return Err(KafkaSinkError::PoolExhausted {
                pool_size: self.config.pool_size,
            });
        };
        let producer = match self.producer_for(&id).await {
            Ok(p) => p,
            Err(e) => {
                self.available.push_front(id);
                return Err(e);
            }
        };
        producer.begin_transaction().map_err(txn_err(&id))?;
        Ok(KafkaTransaction {
            transactional_id: Some(id),
            prepared: None,
            records: 0,
        })
    }

    async fn invoke(
        &mut self,
        txn: &mut KafkaTransaction,
        value: T,
        context: &RecordContext,
    ) -> Result<(), KafkaSinkError> {
        let r = self.schema.serialize(&value);
        let mut record =
            ProducerRecord::new(r.topic.unwrap_or_else(|| self.config.default_topic.clone()))
                .value(r.value);
        if let Some(k) = r.key {
            record = record.key(k);
        }
        if self.config.write_timestamp_to_kafka
            && let Some(ts) = context.timestamp
        {
            record = record.timestamp(ts);
        }
        let fut: SendFuture = match (&txn.transactional_id, &self.shared) {
            (Some(id), _) => {
                let p = self
                    .producers
                    .get(id)
                    .ok_or_else(|| KafkaSinkError::Config(format!("no producer for {id}")))?;
                Box::pin(p.send(record))
            }
            (None, Some(p)) => Box::pin(p.send(record)),
            (None, None) => {
                return Err(KafkaSinkError::Config("no producer".into()));
            }
        };
        self.in_flight.push_back(fut);
        txn.records += 1;
        if self.in_flight.len() >= MAX_IN_FLIGHT {
            self.await_sends(MAX_IN_FLIGHT / 2).await?;
        }
        Ok(())
    }

    async fn pre_commit(&mut self, txn: &mut KafkaTransaction) -> Result<(), KafkaSinkError> {
        // Every record of the transaction must have succeeded before it is
        // prepared: a prepared transaction missing a record could be
        // committed by a restore.
        if !self.exactly_once() {
            if self.config.semantic == Semantic::AtLeastOnce
                && let Some(p) = &self.shared
            {
                p.flush().await;
            }
            return self.await_sends(0).await;
        }
        if let Some(p) = txn
            .transactional_id
            .as_ref()
            .and_then(|id| self.producers.get(id))
        {
            p.flush().await; // ignores linger.ms
        }
        self.await_sends(0).await?;
        match (&txn.transactional_id, self.config.semantic) {
            // An empty transaction is never prepared (nor committed).
            (Some(id), Semantic::ExactlyOnce) if txn.records > 0 => {
                let id = id.clone();
                let p = self
                    .producers
                    .get(&id)
                    .cloned()
                    .ok_or_else(|| KafkaSinkError::Config(format!("no producer for {id}")))?;
                let prepared = p.prepare_transaction().await.map_err(txn_err(&id))?;
                txn.prepared = Some(prepared);
            }
            _ => {}
        }
        Ok(())
    }

    async fn commit(
        &mut self,
        txn: PreCommitted<KafkaTransaction>,
        _ctx: &mut BTreeSet<String>,
    ) -> Result<CommitOutcome, KafkaSinkError> {
        let Some(id) = txn.handle().transactional_id.clone() else {
            return Ok(CommitOutcome::Committed);
        };
        let result = match (&txn.handle().prepared, self.producers.get(&id).cloned()) {
            // Empty: never committed; the producer's local transaction ends.
            (None, Some(p)) => p
                .abort_transaction()
                .await
                .map(|()| CommitOutcome::Committed)
                .map_err(txn_err(&id)),
            (None, None) => Ok(CommitOutcome::Committed),
            (Some(_), Some(p)) => p
                .commit_transaction()
                .await
                .map(|()| CommitOutcome::Committed)
                .map_err(txn_err(&id)),
            (Some(prepared), None) => commit_prepared(&self.cluster, prepared, &self.resume)
                .await
                .map(|o| outcome(&id, o, age_of(&txn), self.config.transaction_timeout))
                .map_err(|e| KafkaSinkError::Recovery(format!("committing {id}: {e}"))),
        };
        match &result {
            Ok(_) => self.recycle(&id),
            Err(_) => {
                // The transaction may still be prepared: keep its id out of
                // the pool (reusing it would abort the transaction) until a
                // restore commits it; drop the producer, whose state is
                // unknown.
                self.drop_producer(&id).await;
            }
        }
        result
    }

    async fn abort(
        &mut self,
        txn: KafkaTransaction,
        _ctx: &mut BTreeSet<String>,
    ) -> Result<(), KafkaSinkError> {
        let Some(id) = txn.transactional_id else {
            return Ok(());
        };
        // Records of an aborted transaction fail; their errors do not matter.
        self.in_flight.clear();
        let r = match self.producers.get(&id).cloned() {
            Some(p) => p.abort_transaction().await.map_err(txn_err(&id)),
            None => Ok(()),
        };
        if r.is_err() {
            self.drop_producer(&id).await;
        }
        self.recycle(&id);
        r
    }

    async fn recover_and_commit(
        &mut self,
        txn: PreCommitted<KafkaTransaction>,
        _ctx: &mut BTreeSet<String>,
    ) -> Result<CommitOutcome, KafkaSinkError> {
        let (Some(id), Some(prepared)) = (&txn.handle().transactional_id, &txn.handle().prepared)
        else {
            return Ok(CommitOutcome::Committed); // empty or non-transactional
        };
        commit_prepared(&self.cluster, prepared, &self.resume)
            .await
            .map(|o| outcome(id, o, age_of(&txn), self.config.transaction_timeout))
            .map_err(|e| KafkaSinkError::Recovery(format!("committing {id}: {e}")))
    }

    async fn recover_and_abort(
        &mut self,
        txn: KafkaTransaction,
        _ctx: &mut BTreeSet<String>,
    ) -> Result<(), KafkaSinkError> {
        match (&txn.transactional_id, &txn.prepared) {
            (_, Some(prepared)) => abort_prepared(&self.cluster, prepared, &self.resume)
                .await
                .map(|_| ())
                .map_err(|e| KafkaSinkError::Recovery(e.to_string())),
            (Some(id), None) => {
                abort_lingering(&self.cluster, self.config.recovery_timeout, id).await
            }
            (None, None) => Ok(()),
        }
    }

    async fn initialize_user_context(&mut self) -> Result<BTreeSet<String>, KafkaSinkError> {
        if !self.exactly_once() {
            return Ok(BTreeSet::new());
        }
        let ids = self
            .config
            .ids()
            .generate_ids_to_use(self.hint.next_free_transactional_id);
        self.available = ids.iter().cloned().collect();
        Ok(ids)
    }

    async fn finish_recovering_and_committing(
        &mut self,
        ctx: &mut BTreeSet<String>,
        handled: &[KafkaTransaction],
    ) -> Result<(), KafkaSinkError> {
        if !self.exactly_once() {
            ctx.clear();
            return Ok(());
        }
        if ctx.is_empty() {
            // Restored from AT_LEAST_ONCE/NONE state: a fresh pool.
            *ctx = self.initialize_user_context().await?;
            return Ok(());
        }
        let handled: BTreeSet<&str> = handled
            .iter()
            .filter_map(|t| t.transactional_id.as_deref())
            .collect();
        let unhandled: Vec<String> = ctx
            .iter()
            .filter(|id| !handled.contains(id.as_str()))
            .cloned()
            .collect();
        abort_all(&self.cluster, self.config.recovery_timeout, unhandled).await?;
        self.available = ctx.iter().cloned().collect();
        Ok(())
    }

    async fn release_after_failover(
        &mut self,
        _ctx: &mut BTreeSet<String>,
    ) -> Result<(), KafkaSinkError> {
        // Every transaction of the old run was committed or aborted (or is
        // left to the restore); the restore may fence these producers, so
        // the next run connects new ones. Closing never aborts.
        self.in_flight.clear();
        self.available.clear();
        for (_, p) in self.producers.drain() {
            let _ = p.close(Duration::ZERO).await;
        }
        Ok(())
    }
}

/// A Kafka sink subtask: [`TwoPhaseCommitSink`] over [`KafkaSinkHandler`],
/// with its state (and the [`NextTransactionalIdHint`]) encoded for the
/// [checkpoint driver](crate::checkpoint) or a host engine.
///
/// Operator state format v1: magic `KSNK`, version 1, the sink state
/// ([`StateSerializer`] with [`KafkaTransactionCodec`] and
/// [`StringSetCodec`]) length-prefixed, then a flag and the hint (`u64`
/// next free id, `u32` last parallelism) — written by subtask 0 only.
///
/// ```no_run
/// # async fn example() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// use kafka_producer::ProducerConfig;
/// use kafka_sink::kafka::{KafkaSink, KafkaSinkConfig, KafkaSinkRecord, Semantic};
/// let mut config = KafkaSinkConfig::new(ProducerConfig::new("broker-1:9092"), "orders-out");
/// config.semantic = Semantic::ExactlyOnce;
/// let mut sink = KafkaSink::connect(config, |v: &String| KafkaSinkRecord::value(v.clone())).await?;
/// use kafka_sink::{CheckpointedOperator, RecordContext};
/// sink.initialize_state(None).await?;
/// sink.invoke("order-1".to_string(), &RecordContext::default()).await?;
/// let state = sink.snapshot_state(1).await?; // store durably, then:
/// sink.notify_checkpoint_complete(1).await?;
/// # let _ = state;
/// # Ok(()) }
/// ```
pub struct KafkaSink<T: Send + Sync + 'static> {
    sink: TwoPhaseCommitSink<KafkaSinkHandler<T>>,
    serializer: StateSerializer<KafkaTransactionCodec, StringSetCodec>,
}

impl<T: Send + Sync + 'static> fmt::Debug for KafkaSink<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KafkaSink")
            .field("sink", &self.sink)
            .finish_non_exhaustive()
    }
}

const STATE_MAGIC: [u8; 4] = *b"KSNK";
const STATE_VERSION: u8 = 1;

fn encode_operator_state(sink_state: &[u8], hint: Option<NextTransactionalIdHint>) -> Vec<u8> {
    let mut out = Vec::with_capacity(sink_state.len() + 24);
    out.extend_from_slice(&STATE_MAGIC);
    put_u8(&mut out, STATE_VERSION);
    put_bytes(&mut out, sink_state);
    match hint {
        Some(h) => {
            put_u8(&mut out, 1);
            put_u64(&mut out, h.next_free_transactional_id);
            put_u32(&mut out, h.last_parallelism);
        }
        None => put_u8(&mut out, 0),
    }
    out
}

fn decode_operator_state(
    bytes: &[u8],
) -> Result<(&[u8], Option<NextTransactionalIdHint>), DecodeError> {
    let mut r = Reader::new(bytes);
    let magic = r.take(4)?;
    if magic != STATE_MAGIC {
        return Err(DecodeError::BadMagic {
            expected: STATE_MAGIC.to_vec(),
            found: magic.to_vec(),
        });
    }
    let version = r.u8()?;
    if version != STATE_VERSION {
        return Err(DecodeError::UnsupportedVersion {
            version,
            supported: STATE_VERSION,
        });
    }
    let state = r.bytes()?;
    let hint = if r.flag()? {
        let next_free_transactional_id = r.u64()?;
        let last_parallelism = r.u32()?;
        Some(NextTransactionalIdHint {
            last_parallelism,
            next_free_transactional_id,
        })
    } else {
        None
    };
    r.finish()?;
    Ok((state, hint))
}

impl<T: Send + Sync + 'static> KafkaSink<T> {
    /// Validates `config`, connects, and for EXACTLY_ONCE checks the
    /// transaction timeout against the broker's `transaction.max.timeout.ms`.
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    /// use kafka_producer::ProducerConfig;
    /// use kafka_sink::kafka::{KafkaSink, KafkaSinkConfig, Semantic, SimpleStringSchema, ValueOnly};
    /// use std::time::Duration;
    /// let mut config = KafkaSinkConfig::new(ProducerConfig::new("broker-1:9092"), "orders-out");
    /// config.semantic = Semantic::ExactlyOnce;
    /// config.transaction_timeout = Duration::from_secs(15 * 60); // <= transaction.max.timeout.ms
    /// let sink: KafkaSink<String> = KafkaSink::connect(config, ValueOnly(SimpleStringSchema)).await?;
    /// # Ok(()) }
    /// ```
    pub async fn connect(
        config: KafkaSinkConfig,
        schema: impl KafkaSerializationSchema<T> + 'static,
    ) -> Result<Self, KafkaSinkError> {
        config.validate()?;
        let base = config.effective_producer_config();
        let (cluster, shared) = if config.semantic == Semantic::ExactlyOnce {
            let cluster = Cluster::connect(base.cluster_config())
                .await
                .map_err(|e| KafkaSinkError::Connect(e.to_string()))?;
            (cluster, None)
        } else {
            let p = Producer::connect(base)
                .await
                .map_err(|e| KafkaSinkError::Connect(e.to_string()))?;
            (p.cluster().clone(), Some(p))
        };
        if config.semantic == Semantic::ExactlyOnce {
            check_transaction_timeout(&cluster, config.transaction_timeout).await?;
        }
        let timeout = config.transaction_timeout;
        let handler = KafkaSinkHandler {
            resume: ResumeOptions {
                timeout: config.recovery_timeout,
                ..ResumeOptions::default()
            },
            config,
            schema: Arc::new(schema),
            cluster,
            shared,
            producers: HashMap::new(),
            available: VecDeque::new(),
            in_flight: VecDeque::new(),
            hint: NextTransactionalIdHint::default(),
            logged_failures: 0,
        };
        let mut sink = TwoPhaseCommitSink::new(handler);
        // KAFKA-6119: a commit past the timeout may fail silently; warn early.
        sink.set_transaction_timeout(timeout)
            .enable_transaction_timeout_warnings(0.8);
        Ok(KafkaSink {
            sink,
            serializer: StateSerializer::new(KafkaTransactionCodec, StringSetCodec),
        })
    }

    /// The generic sink (metrics, pending checkpoints, timeout options).
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    /// use kafka_producer::ProducerConfig;
    /// use kafka_sink::kafka::{KafkaSink, KafkaSinkConfig, KafkaSinkRecord, Semantic};
    /// let mut config = KafkaSinkConfig::new(ProducerConfig::new("broker-1:9092"), "orders-out");
    /// config.semantic = Semantic::ExactlyOnce;
    /// let mut sink = KafkaSink::connect(config, |v: &String| KafkaSinkRecord::value(v.clone())).await?;
    /// println!("pending checkpoints: {:?}", sink.sink().pending_checkpoints());
    /// # Ok(()) }
    /// ```
    pub fn sink(&self) -> &TwoPhaseCommitSink<KafkaSinkHandler<T>> {
        &self.sink
    }

    /// The generic sink, mutably.
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    /// use kafka_producer::ProducerConfig;
    /// use kafka_sink::kafka::{KafkaSink, KafkaSinkConfig, KafkaSinkRecord, Semantic};
    /// let mut config = KafkaSinkConfig::new(ProducerConfig::new("broker-1:9092"), "orders-out");
    /// config.semantic = Semantic::ExactlyOnce;
    /// let mut sink = KafkaSink::connect(config, |v: &String| KafkaSinkRecord::value(v.clone())).await?;
    /// sink.sink_mut().ignore_failures_after_transaction_timeout();
    /// # Ok(()) }
    /// ```
    pub fn sink_mut(&mut self) -> &mut TwoPhaseCommitSink<KafkaSinkHandler<T>> {
        &mut self.sink
    }

    /// The transactional ids of this subtask's pool (the user context;
    /// empty unless EXACTLY_ONCE).
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    /// use kafka_producer::ProducerConfig;
    /// use kafka_sink::kafka::{KafkaSink, KafkaSinkConfig, KafkaSinkRecord, Semantic};
    /// let mut config = KafkaSinkConfig::new(ProducerConfig::new("broker-1:9092"), "orders-out");
    /// config.semantic = Semantic::ExactlyOnce;
    /// let mut sink = KafkaSink::connect(config, |v: &String| KafkaSinkRecord::value(v.clone())).await?;
    /// use kafka_sink::CheckpointedOperator;
    /// sink.initialize_state(None).await?;
    /// assert_eq!(sink.transactional_ids().len(), 5); // the pool, e.g. kafka-sink-0-0..4
    /// # Ok(()) }
    /// ```
    pub fn transactional_ids(&self) -> BTreeSet<String> {
        self.sink.user_context().cloned().unwrap_or_default()
    }

    /// Send failures logged and dropped under
    /// [`log_failures_only`](KafkaSinkConfig::log_failures_only).
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    /// use kafka_producer::ProducerConfig;
    /// use kafka_sink::kafka::{KafkaSink, KafkaSinkConfig, KafkaSinkRecord, Semantic};
    /// let mut config = KafkaSinkConfig::new(ProducerConfig::new("broker-1:9092"), "orders-out");
    /// config.semantic = Semantic::ExactlyOnce;
    /// let mut sink = KafkaSink::connect(config, |v: &String| KafkaSinkRecord::value(v.clone())).await?;
    /// println!("records dropped: {}", sink.logged_failures()); // 0 unless log_failures_only
    /// # Ok(()) }
    /// ```
    pub fn logged_failures(&self) -> u64 {
        self.sink.handler().logged_failures
    }

    /// Metrics of every producer of this subtask, keyed by transactional id
    /// (`""` for the shared AT_LEAST_ONCE / NONE producer); all zero when
    /// metrics are [disabled](KafkaSinkConfig::disable_metrics).
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    /// use kafka_producer::ProducerConfig;
    /// use kafka_sink::kafka::{KafkaSink, KafkaSinkConfig, KafkaSinkRecord, Semantic};
    /// let mut config = KafkaSinkConfig::new(ProducerConfig::new("broker-1:9092"), "orders-out");
    /// config.semantic = Semantic::ExactlyOnce;
    /// let mut sink = KafkaSink::connect(config, |v: &String| KafkaSinkRecord::value(v.clone())).await?;
    /// for (transactional_id, m) in sink.producer_metrics() {
    ///     println!("{transactional_id}: {} records, {} retries", m.records_sent, m.retries);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn producer_metrics(&self) -> Vec<(String, MetricsSnapshot)> {
        let h = self.sink.handler();
        let mut out: Vec<(String, MetricsSnapshot)> = h
            .producers
            .iter()
            .map(|(id, p)| (id.clone(), p.metrics()))
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        if let Some(p) = &h.shared {
            out.insert(0, (String::new(), p.metrics()));
        }
        out
    }

    /// Writes one value.
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    /// use kafka_producer::ProducerConfig;
    /// use kafka_sink::kafka::{KafkaSink, KafkaSinkConfig, KafkaSinkRecord, Semantic};
    /// let mut config = KafkaSinkConfig::new(ProducerConfig::new("broker-1:9092"), "orders-out");
    /// config.semantic = Semantic::ExactlyOnce;
    /// let mut sink = KafkaSink::connect(config, |v: &String| KafkaSinkRecord::value(v.clone())).await?;
    /// use kafka_sink::{CheckpointedOperator, RecordContext};
    /// sink.initialize_state(None).await?;
    /// sink.invoke("order-1".to_string(), &RecordContext::with_timestamp(1_700_000_000_000)).await?;
    /// # Ok(()) }
    /// ```
    pub async fn invoke(
        &mut self,
        value: T,
        context: &RecordContext,
    ) -> Result<(), TwoPhaseCommitError<KafkaSinkError>> {
        self.sink.invoke(value, context).await
    }

    /// Aborts the open transaction and closes every producer (pre-committed
    /// transactions stay for a restore to commit).
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    /// use kafka_producer::ProducerConfig;
    /// use kafka_sink::kafka::{KafkaSink, KafkaSinkConfig, KafkaSinkRecord, Semantic};
    /// let mut config = KafkaSinkConfig::new(ProducerConfig::new("broker-1:9092"), "orders-out");
    /// config.semantic = Semantic::ExactlyOnce;
    /// let mut sink = KafkaSink::connect(config, |v: &String| KafkaSinkRecord::value(v.clone())).await?;
    /// use kafka_sink::CheckpointedOperator;
    /// sink.initialize_state(None).await?;
    /// sink.close().await?; // the open transaction is aborted
    /// # Ok(()) }
    /// ```
    pub async fn close(&mut self) -> Result<(), TwoPhaseCommitError<KafkaSinkError>> {
        let r = self.sink.close().await;
        let h = self.sink.handler_mut();
        for (_, p) in h.producers.drain() {
            let _ = p.close(Duration::from_secs(5)).await;
        }
        if let Some(p) = h.shared.take() {
            let _ = p.close(Duration::from_secs(5)).await;
        }
        r
    }
}

/// Fails when `timeout` exceeds the `transaction.max.timeout.ms` of a broker.
///
/// ```no_run
/// # async fn example() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// use kafka_producer::{Cluster, ProducerConfig};
/// use kafka_sink::kafka::{KafkaSinkError, check_transaction_timeout};
/// use std::time::Duration;
/// let cluster = Cluster::connect(ProducerConfig::new("broker-1:9092").cluster_config()).await?;
/// match check_transaction_timeout(&cluster, Duration::from_secs(3600)).await {
///     Err(KafkaSinkError::TransactionTimeoutTooLarge { broker_max, .. }) => println!("use at most {broker_max:?}"),
///     other => other?,
/// }
/// # Ok(()) }
/// ```
pub async fn check_transaction_timeout(
    cluster: &Cluster,
    timeout: Duration,
) -> Result<(), KafkaSinkError> {
    cluster
        .refresh()
        .await
        .map_err(|e| KafkaSinkError::Connect(e.to_string()))?;
    let node = cluster
        .metadata()
        .brokers()
        .keys()
        .next()
        .copied()
        .ok_or_else(|| KafkaSinkError::Connect("no broker in metadata".into()))?;
    let key = "transaction.max.timeout.ms";
    let configs = admin::broker_config(cluster, node, &[key])
        .await
        .map_err(|e| KafkaSinkError::Connect(format!("reading {key}: {e}")))?;
    if let Some(Some(v)) = configs.get(key)
        && let Ok(ms) = v.parse::<u64>()
    {
        let broker_max = Duration::from_millis(ms);
        if timeout > broker_max {
            return Err(KafkaSinkError::TransactionTimeoutTooLarge {
                configured: timeout,
                broker_max,
            });
        }
    }
    Ok(())
}

impl<T: Send + Sync + 'static> CheckpointedOperator for KafkaSink<T> {
    async fn initialize_state(
        &mut self,
        restored: Option<RestoredState>,
    ) -> Result<(), OperatorError> {
        let exactly_once = self.sink.handler().exactly_once();
        let mut hints = Vec::new();
        let mut states = None;
        if let Some(r) = &restored {
            for b in &r.union {
                if let (_, Some(h)) = decode_operator_state(b)? {
                    hints.push(h);
                }
            }
            let mut own = Vec::new();
            for b in &r.own {
                let (s, _) = decode_operator_state(b)?;
                own.push(self.serializer.decode(s)?);
            }
            states = Some(own);
        }
        if hints.len() > 1 {
            return Err(KafkaSinkError::MultipleHints(hints.len()).into());
        }
        let handler = self.sink.handler_mut();
        match hints.pop() {
            Some(h) => handler.hint = h,
            None => {
                handler.hint = NextTransactionalIdHint::default();
                if exactly_once {
                    // First run, or a failure before the first checkpoint.
                    abort_on_fresh_start(&handler.cluster, &handler.config).await?;
                }
            }
        }
        self.sink.initialize_state(states).await?;
        Ok(())
    }

    async fn snapshot_state(&mut self, checkpoint_id: u64) -> Result<Vec<u8>, OperatorError> {
        let state = self.sink.snapshot_state(checkpoint_id).await?;
        let bytes = self.serializer.encode(state);
        let h = self.sink.handler_mut();
        let hint = (h.config.subtask_index == 0 && h.exactly_once()).then(|| {
            let mut next = h.hint;
            if h.config.parallelism > next.last_parallelism {
                next.next_free_transactional_id +=
                    u64::from(h.config.parallelism) * h.config.pool_size as u64;
            }
            next.last_parallelism = h.config.parallelism;
            h.hint = next;
            next
        });
        Ok(encode_operator_state(&bytes, hint))
    }

    async fn notify_checkpoint_complete(
        &mut self,
        checkpoint_id: u64,
    ) -> Result<(), OperatorError> {
        self.sink.notify_checkpoint_complete(checkpoint_id).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_producer::kafka_proto::ErrorCode;
    use kafka_producer::txn::TransactionVersion;

    /// Invariant: a fenced transaction counts as committed (by an earlier
    /// restore) only while younger than its timeout; an aborted one, or a
    /// fenced one past its timeout, is lost.
    #[test]
    fn resume_outcomes_for_the_sink() {
        let timeout = Duration::from_secs(60);
        let fenced = || ResumeOutcome::Fenced {
            error: ErrorCode::ProducerFenced,
            state: Some(kafka_producer::txn::TransactionState::Empty),
        };
        let young = Duration::from_secs(5);
        let old = Duration::from_secs(61);
        assert_eq!(
            outcome("t-0", fenced(), young, timeout),
            CommitOutcome::AlreadyCommitted
        );
        assert!(matches!(
            outcome("t-0", fenced(), old, timeout),
            CommitOutcome::Lost { .. }
        ));
        let aborted = ResumeOutcome::AbortedByBroker {
            error: ErrorCode::InvalidTxnState,
            state: Some(kafka_producer::txn::TransactionState::CompleteAbort),
        };
        assert!(matches!(
            outcome("t-0", aborted, young, timeout),
            CommitOutcome::Lost { .. }
        ));
        assert_eq!(
            outcome("t-0", ResumeOutcome::Committed, old, timeout),
            CommitOutcome::Committed
        );
    }

    #[test]
    fn ids_never_clash_across_subtasks() {
        let ids_for = |s, p| TransactionalIdsGenerator {
            prefix: "p".into(),
            subtask_index: s,
            parallelism: p,
            pool_size: 5,
            safe_scale_down_factor: 5,
        };
        for p in 1..6 {
            let mut use_all = BTreeSet::new();
            let mut abort_all = BTreeSet::new();
            for s in 0..p {
                for id in ids_for(s, p).generate_ids_to_use(0) {
                    assert!(use_all.insert(id));
                }
                for id in ids_for(s, p).generate_ids_to_abort() {
                    assert!(abort_all.insert(id));
                }
            }
            let expected: BTreeSet<String> =
                (0..u64::from(p) * 25).map(|n| format!("p-{n}")).collect();
            assert_eq!(abort_all, expected);
        }
    }

    #[test]
    fn default_prefix_truncates_task_name() {
        let mut c = KafkaSinkConfig::new(ProducerConfig::new("x:1"), "t");
        c.task_name = "n".repeat(2000);
        c.operator_id = "op".into();
        assert_eq!(c.prefix().len(), 1003);
        c.transactional_id_prefix = Some("custom".into());
        assert_eq!(c.ids().id(7), "custom-7");
    }

    #[test]
    fn transaction_codec_and_operator_state_round_trip() {
        let t = KafkaTransaction {
            transactional_id: Some("p-3".into()),
            prepared: Some(PreparedTransaction {
                transactional_id: "p-3".into(),
                producer_id: 42,
                producer_epoch: 7,
                transaction_version: TransactionVersion::V2,
            }),
            records: 9,
        };
        let mut buf = Vec::new();
        KafkaTransactionCodec.encode(&t, &mut buf);
        let back = KafkaTransactionCodec.decode(&buf).unwrap();
        assert_eq!(back, KafkaTransaction { records: 0, ..t });

        let hint = NextTransactionalIdHint {
            last_parallelism: 3,
            next_free_transactional_id: 15,
        };
        let bytes = encode_operator_state(b"inner", Some(hint));
        assert_eq!(
            decode_operator_state(&bytes).unwrap(),
            (&b"inner"[..], Some(hint))
        );
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode_operator_state(&longer).is_err());
    }

    #[test]
    fn log_failures_only_is_refused_unless_semantic_none() {
        let mut c = KafkaSinkConfig::new(ProducerConfig::new("x:1"), "t");
        for semantic in [Semantic::AtLeastOnce, Semantic::ExactlyOnce] {
            c.semantic = semantic;
            let e = c.set_log_failures_only(true).unwrap_err().to_string();
            assert!(e.contains("only allowed with Semantic::None"), "{e}");
            c.set_log_failures_only(false).unwrap();
        }
        c.semantic = Semantic::None;
        assert!(c.set_log_failures_only(true).unwrap().log_failures_only);
        // Changing the semantic afterwards is caught by validate (connect).
        c.semantic = Semantic::ExactlyOnce;
        assert!(c.validate().is_err());
    }

    #[test]
    fn disable_metrics_property_and_typed_option() {
        let c = KafkaSinkConfig::from_properties(
            [
                ("bootstrap.servers", "h:1"),
                (KEY_DISABLE_METRICS, "true"),
                ("transaction.timeout.ms", "60000"),
            ],
            "t",
        )
        .unwrap();
        assert!(c.disable_metrics);
        assert!(!c.effective_producer_config().metrics_enabled);
        assert_eq!(c.transaction_timeout, Duration::from_secs(60));
        let c = KafkaSinkConfig::from_properties([("bootstrap.servers", "h:1")], "t").unwrap();
        assert!(!c.disable_metrics);
        assert!(c.effective_producer_config().metrics_enabled);
        let mut c = c;
        c.set_disable_metrics(true);
        assert!(!c.effective_producer_config().metrics_enabled);
        assert!(
            KafkaSinkConfig::from_properties(
                [("bootstrap.servers", "h:1"), (KEY_DISABLE_METRICS, "yes")],
                "t"
            )
            .is_err()
        );
        // Unknown producer keys are still rejected.
        assert!(
            KafkaSinkConfig::from_properties(
                [("bootstrap.servers", "h:1"), ("lingr.ms", "5")],
                "t"
            )
            .is_err()
        );
    }

    #[test]
    fn partitioner_options_map_to_the_producer() {
        let mut c = KafkaSinkConfig::new(ProducerConfig::new("x:1"), "t");
        c.subtask_index = 3;
        c.parallelism = 4;
        // Default: the producer's partitioner, murmur2 of the key as Java.
        let p = c.effective_producer_config().partitioner.build();
        for key in [&b"21"[..], b"k", b"customer-7"] {
            assert_eq!(
                p.partition("t", Some(key), None, 7),
                kafka_producer::partitioner::partition_for_key(key, 7)
            );
        }
        // Fixed: Flink's fixed partitioner, subtask 3 → partition 3 % n.
        c.set_partitioner(SinkPartitioner::Fixed);
        let p = c.effective_producer_config().partitioner.build();
        assert_eq!(p.partition("t", Some(b"k"), None, 2), 1);
        assert_eq!(p.partition("t", None, None, 8), 3);
        #[derive(Debug)]
        struct Last;
        impl Partitioner for Last {
            fn partition(&self, _: &str, _: Option<&[u8]>, _: Option<&[u8]>, n: i32) -> i32 {
                n - 1
            }
        }
        c.set_partitioner(SinkPartitioner::Custom(Arc::new(Last)));
        let p = c.effective_producer_config().partitioner.build();
        assert_eq!(p.partition("t", None, None, 5), 4);
    }

    #[test]
    fn producer_partitioner_class_is_honoured_by_default() {
        let c = KafkaSinkConfig::from_properties(
            [
                ("bootstrap.servers", "h:1"),
                (
                    "partitioner.class",
                    "org.apache.kafka.clients.producer.RoundRobinPartitioner",
                ),
            ],
            "t",
        )
        .unwrap();
        c.validate().unwrap();
        let p = c.effective_producer_config().partitioner;
        assert!(matches!(p, PartitionerChoice::RoundRobin), "{p:?}");
    }

    #[test]
    fn sink_partitioner_and_partitioner_class_together_are_refused() {
        let mut c = KafkaSinkConfig::from_properties(
            [
                ("bootstrap.servers", "h:1"),
                ("partitioner.class", "key_hash"),
            ],
            "t",
        )
        .unwrap();
        c.set_partitioner(SinkPartitioner::Fixed);
        let e = c.validate().unwrap_err();
        assert!(
            matches!(&e, KafkaSinkError::Config(m) if m.contains("partitioner.class")),
            "{e}"
        );
        // The default producer partitioner leaves the sink's choice alone.
        c.producer.partitioner = PartitionerChoice::Default;
        c.validate().unwrap();
    }

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

    #[test]
    fn pool_exhausted_message_says_what_to_do() {
        let msg = KafkaSinkError::PoolExhausted { pool_size: 5 }.to_string();
        assert!(msg.contains("Increase the kafka producers pool size"));
        assert!(msg.contains("decrease the number of concurrent checkpoints"));
    }
}
