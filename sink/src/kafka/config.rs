//! The sink's options: [`KafkaSinkConfig`] with its Java-style property
//! parsing ([`KafkaSinkConfig::from_properties`]), the delivery guarantee
//! ([`Semantic`]), the partitioner choice ([`SinkPartitioner`]) and Flink's
//! defaults.

use std::sync::Arc;
use std::time::Duration;

use kafka_producer::ProducerConfig;
use kafka_producer::kafka_client::Properties;
use kafka_producer::partitioner::Partitioner;
use kafka_producer::{ConfigError, PartitionerChoice};

use super::{KafkaSinkError, SAFE_SCALE_DOWN_FACTOR, TransactionalIdsGenerator};

/// Producers per subtask in the id pool (Flink's
/// `DEFAULT_KAFKA_PRODUCERS_POOL_SIZE`).
pub const DEFAULT_KAFKA_PRODUCERS_POOL_SIZE: usize = 5;

/// Default `transaction.timeout.ms` of the sink (Flink's 1 hour). Brokers
/// allow 15 minutes by default (`transaction.max.timeout.ms`): lower it or
/// raise the broker's maximum; [`KafkaSink::connect`](super::KafkaSink::connect) checks.
pub const DEFAULT_KAFKA_TRANSACTION_TIMEOUT: Duration = Duration::from_secs(3600);
/// Task names are truncated to this many characters in the default prefix
/// (as Flink does), so that a long task name cannot make transactional ids
/// too long.
pub const MAX_TASK_NAME_LENGTH: usize = 1000;

/// The delivery guarantee.
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

/// Configuration of a [`KafkaSink`](super::KafkaSink) subtask.
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
    /// lose records silently (Flink allows it; here [`KafkaSink::connect`](super::KafkaSink::connect)
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
    /// key goes to the producer ([`ProducerConfig::take_from`]); a key
    /// neither takes is refused.
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
        let mut props = Properties::new(props);
        let config = Self::take_from(&mut props, default_topic)?;
        props.finish()?;
        Ok(config)
    }

    /// Takes the sink's keys and its producer's from `props` (see
    /// [`Self::from_properties`]); other keys stay in the bag, and
    /// [`Properties::finish`] refuses those nobody took.
    ///
    /// ```
    /// use kafka_client::Properties;
    /// use kafka_sink::kafka::KafkaSinkConfig;
    /// let mut props = Properties::new([
    ///     ("bootstrap.servers", "h:9092"),
    ///     ("flink.disable-metrics", "TRUE"), // booleans ignore case, as in Java
    ///     ("transaction.timeout.ms", "900000"),
    /// ]);
    /// let c = KafkaSinkConfig::take_from(&mut props, "out").unwrap();
    /// props.finish().unwrap();
    /// assert!(c.disable_metrics);
    /// assert_eq!(c.transaction_timeout.as_secs(), 900);
    /// ```
    pub fn take_from(
        props: &mut Properties,
        default_topic: impl Into<String>,
    ) -> Result<Self, KafkaSinkError> {
        let disable_metrics = props.bool(KEY_DISABLE_METRICS)?;
        let producer = ProducerConfig::take_from(props)?;
        // The producer checked the value; the sink keeps it as its own.
        let timeout = props.millis("transaction.timeout.ms", 1..=i64::from(i32::MAX))?;
        let mut c = KafkaSinkConfig::new(producer, default_topic);
        c.disable_metrics = disable_metrics.unwrap_or(false);
        if let Some(t) = timeout {
            c.transaction_timeout = t;
        }
        Ok(c)
    }

    /// Flink's `setWriteTimestampToKafka`.
    pub fn set_write_timestamp_to_kafka(&mut self, on: bool) -> &mut Self {
        self.write_timestamp_to_kafka = on;
        self
    }

    /// Flink's `setLogFailuresOnly`, refused unless the semantic is
    /// [`Semantic::None`] (set the semantic first): logging instead of
    /// failing drops records, which breaks AT_LEAST_ONCE and EXACTLY_ONCE.
    pub fn set_log_failures_only(&mut self, on: bool) -> Result<&mut Self, KafkaSinkError> {
        self.log_failures_only = on;
        self.validate()?;
        Ok(self)
    }

    /// Sets the partitioner ([`SinkPartitioner::None`], the producer's
    /// `partitioner.class`, by default). `Fixed` or `Custom` with a
    /// non-default `partitioner.class` in [`producer`](Self::producer) is
    /// refused by [`validate`](Self::validate).
    pub fn set_partitioner(&mut self, partitioner: SinkPartitioner) -> &mut Self {
        self.partitioner = partitioner;
        self
    }

    /// Switches the producers' metrics off (Flink's `flink.disable-metrics`).
    pub fn set_disable_metrics(&mut self, off: bool) -> &mut Self {
        self.disable_metrics = off;
        self
    }

    /// Checks option combinations (called by [`KafkaSink::connect`](super::KafkaSink::connect)).
    pub fn validate(&self) -> Result<(), KafkaSinkError> {
        if self.pool_size == 0 {
            return Err(ConfigError::InvalidValue {
                key: "pool_size".into(),
                value: "0".into(),
                reason: "must be at least 1".into(),
            }
            .into());
        }
        if self.parallelism == 0 || self.subtask_index >= self.parallelism {
            return Err(ConfigError::InvalidValue {
                key: "subtask_index".into(),
                value: self.subtask_index.to_string(),
                reason: format!(
                    "subtask {} of parallelism {}: must be below the parallelism",
                    self.subtask_index, self.parallelism
                ),
            }
            .into());
        }
        if !matches!(self.partitioner, SinkPartitioner::None)
            && !matches!(self.producer.partitioner, PartitionerChoice::Default)
        {
            return Err(ConfigError::Incompatible {
                key: "partitioner.class".into(),
                reason: format!(
                    "both a sink partitioner ({}) and the producer's partitioner.class ({:?}) \
                     are set and only one can assign partitions: remove partitioner.class or \
                     set the sink partitioner to SinkPartitioner::None",
                    match self.partitioner {
                        SinkPartitioner::Fixed => "Fixed",
                        _ => "Custom",
                    },
                    self.producer.partitioner
                ),
            }
            .into());
        }
        if self.log_failures_only && self.semantic != Semantic::None {
            return Err(ConfigError::Incompatible {
                key: "log_failures_only".into(),
                reason: format!(
                    "log_failures_only would silently drop records under {:?}; \
                     it is only allowed with Semantic::None",
                    self.semantic
                ),
            }
            .into());
        }
        Ok(())
    }

    /// The producer configuration the sink's producers use: `producer` with
    /// the partitioner and metrics options applied (no transactional id).
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

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(with_property(KEY_DISABLE_METRICS, "yes").is_err());
        // Unknown producer keys are still rejected.
        assert!(with_property("lingr.ms", "5").is_err());
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
            matches!(&e, KafkaSinkError::Config(m) if m.key() == "partitioner.class"),
            "{e}"
        );
        // The default producer partitioner leaves the sink's choice alone.
        c.producer.partitioner = PartitionerChoice::Default;
        c.validate().unwrap();
    }

    /// A bad producer value reaches the caller as the typed error, naming
    /// its key.
    #[test]
    fn a_bad_property_error_names_its_key() {
        let e = with_property("linger.ms", "soon").unwrap_err();
        assert!(
            matches!(&e, KafkaSinkError::Config(c) if c.key() == "linger.ms"),
            "{e}"
        );
        let e = with_property(KEY_DISABLE_METRICS, "yes").unwrap_err();
        assert!(
            matches!(&e, KafkaSinkError::Config(c) if c.key() == KEY_DISABLE_METRICS),
            "{e}"
        );
    }

    /// A key neither the sink nor its producer takes is refused by name.
    #[test]
    fn an_unknown_key_is_refused_by_name() {
        let e = with_property("lingr.ms", "5").unwrap_err();
        assert!(
            matches!(&e, KafkaSinkError::Config(ConfigError::UnknownKey(k)) if k == "lingr.ms"),
            "{e}"
        );
    }

    /// The sink's transaction timeout is checked as the producer's, with
    /// the same range error.
    #[test]
    fn transaction_timeout_range_error_is_the_producers() {
        let props = [
            ("bootstrap.servers", "h:1"),
            ("transaction.timeout.ms", "0"),
        ];
        let KafkaSinkError::Config(sink) =
            KafkaSinkConfig::from_properties(props, "t").unwrap_err()
        else {
            panic!("not a configuration error");
        };
        let producer = ProducerConfig::from_properties(props).unwrap_err();
        assert_eq!(sink, producer);
        assert_eq!(
            sink.to_string(),
            r#"invalid value "0" for transaction.timeout.ms: must be at least 1"#
        );
    }

    /// `flink.disable-metrics` ignores case, as every boolean.
    #[test]
    fn disable_metrics_ignores_case() {
        let c = with_property(KEY_DISABLE_METRICS, "TRUE").unwrap();
        assert!(c.disable_metrics);
    }

    /// The config from `bootstrap.servers` and one more property.
    fn with_property(key: &str, value: &str) -> Result<KafkaSinkConfig, KafkaSinkError> {
        KafkaSinkConfig::from_properties([("bootstrap.servers", "h:1"), (key, value)], "t")
    }

    fn orders_config() -> KafkaSinkConfig {
        KafkaSinkConfig::new(ProducerConfig::new("broker-1:9092"), "orders-out")
    }

    /// Invariant: a subtask index must be below the parallelism.
    #[test]
    fn subtask_index_at_the_parallelism_is_refused() {
        let mut config = orders_config();
        (config.subtask_index, config.parallelism) = (4, 4);
        assert!(matches!(config.validate(), Err(KafkaSinkError::Config(_))));
        config.subtask_index = 3;
        config.validate().unwrap();
    }

    /// Invariant: the producers' configuration never carries a transactional
    /// id (the sink sets one per producer).
    #[test]
    fn effective_producer_config_drops_the_transactional_id() {
        let mut config = orders_config();
        config.producer.transactional_id = Some("set-by-the-sink".into());
        assert_eq!(config.effective_producer_config().transactional_id, None);
    }

    /// Invariant: the default prefix is `task_name-operator_id`; an explicit
    /// prefix replaces it.
    #[test]
    fn prefix_defaults_to_task_and_operator() {
        let mut config = orders_config();
        config.task_name = "orders-job".into();
        config.operator_id = "sink-1".into();
        assert_eq!(config.prefix(), "orders-job-sink-1");
        config.transactional_id_prefix = Some("orders".into());
        assert_eq!(config.prefix(), "orders");
    }

    /// Invariant: subtask `s` of a pool of `n` uses ids `s*n .. s*n+n`.
    #[test]
    fn ids_of_a_subtask_follow_its_pool() {
        let mut config = orders_config();
        config.transactional_id_prefix = Some("orders".into());
        (config.subtask_index, config.parallelism, config.pool_size) = (1, 2, 3);
        let ids: Vec<String> = config.ids().generate_ids_to_use(0).into_iter().collect();
        assert_eq!(ids, ["orders-3", "orders-4", "orders-5"]);
    }

    /// Invariant: the default semantic is AT_LEAST_ONCE, as Flink's.
    #[test]
    fn default_semantic_is_at_least_once() {
        assert_eq!(orders_config().semantic, Semantic::AtLeastOnce);
    }
}
