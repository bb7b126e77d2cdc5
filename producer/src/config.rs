//! Producer configuration: a typed builder and Java property names.

use kafka_client::ClientConfig;
use kafka_client::{ClusterConfig, ConnectionConfig, SaslMechanism, TlsConfig};
pub use kafka_client::{ConfigError, Properties, Secret, SecurityProtocol};
use kafka_proto::record::Compression;
use std::time::Duration;

/// Acknowledgements the leader waits for (`acks`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Acks {
    /// `acks=0`: fire and forget; offsets are unknown (-1).
    Zero,
    /// `acks=1`: the leader's log.
    One,
    /// `acks=all` / `-1`: the full ISR (the default).
    #[default]
    All,
}

impl Acks {
    /// The wire value (0, 1, -1).
    pub fn wire(self) -> i16 {
        match self {
            Acks::Zero => 0,
            Acks::One => 1,
            Acks::All => -1,
        }
    }
}

/// Which partitioner assigns partitions to records without one.
///
/// The implementations live in [`crate::partitioner`]; `Custom` takes any
/// [`crate::partitioner::Partitioner`].
#[derive(Debug, Clone, Default)]
pub enum PartitionerChoice {
    /// Java's default: murmur2 of the key, sticky partitions for null keys.
    #[default]
    Default,
    /// Every record to the next partition in turn.
    RoundRobin,
    /// Flink's fixed partitioner: subtask index modulo the partition count.
    Fixed(usize),
    /// murmur2 of the key for every record (null keys: sticky).
    KeyHash,
    /// A user partitioner.
    Custom(std::sync::Arc<dyn crate::partitioner::Partitioner>),
}

impl PartitionerChoice {
    /// The partitioner instance.
    pub fn build(&self) -> std::sync::Arc<dyn crate::partitioner::Partitioner> {
        use crate::partitioner::*;
        match self {
            Self::Default => std::sync::Arc::new(DefaultPartitioner::new()),
            Self::RoundRobin => std::sync::Arc::new(RoundRobinPartitioner::new()),
            Self::Fixed(s) => std::sync::Arc::new(FixedPartitioner::new(*s)),
            Self::KeyHash => std::sync::Arc::new(KeyHashPartitioner::new()),
            Self::Custom(p) => p.clone(),
        }
    }
}

/// The producer's settings. Build with [`ProducerConfig::builder`] or
/// [`ProducerConfig::from_properties`]; both validate.
///
/// ```
/// use kafka_producer::ProducerConfig;
/// let cfg = ProducerConfig::from_properties([
///     ("bootstrap.servers", "broker-1:9092,broker-2:9092"),
///     ("transactional.id", "orders-sink-0"),
///     ("transaction.timeout.ms", "900000"),
/// ])
/// .unwrap();
/// assert_eq!(cfg.bootstrap_servers.len(), 2);
/// assert!(cfg.idempotence(), "transactions imply idempotence");
/// assert_eq!(cfg.transaction_timeout.as_secs(), 900);
/// ```
///
/// [`ProducerConfig::from_properties`] accepts the Java client's property
/// names (`bootstrap.servers`, `acks`, `linger.ms`, ...). Unknown keys and bad
/// values are errors naming the key; incompatible settings fail as in the Java
/// client (`ProducerConfig.postProcessAndValidateIdempotenceConfigs`):
/// idempotence explicitly enabled with `acks` other than `all`, `retries=0`
/// or more than 5 requests in flight is an error, while the same settings
/// with `enable.idempotence` left unset silently disable idempotence.
///
/// ```
/// use kafka_producer::{Acks, ProducerConfig};
/// let cfg = ProducerConfig::from_properties([
///     ("bootstrap.servers", "127.0.0.1:9092"),
///     ("acks", "1"),
///     ("linger.ms", "10"),
/// ])
/// .unwrap();
/// assert_eq!(cfg.acks, Acks::One);
/// assert!(!cfg.idempotence(), "acks=1 silently disables default idempotence");
///
/// let err = ProducerConfig::from_properties([
///     ("bootstrap.servers", "127.0.0.1:9092"),
///     ("acks", "1"),
///     ("enable.idempotence", "true"),
/// ])
/// .unwrap_err();
/// assert_eq!(err.key(), "acks");
///
/// let typed = ProducerConfig::builder("127.0.0.1:9092")
///     .linger(std::time::Duration::from_millis(20))
///     .batch_size(64 * 1024)
///     .build()
///     .unwrap();
/// assert!(typed.idempotence());
/// ```
#[derive(Debug, Clone)]
pub struct ProducerConfig {
    /// `bootstrap.servers`.
    pub bootstrap_servers: Vec<String>,
    /// `client.id` (default `kafka-eos-producer`).
    pub client_id: String,
    /// `acks` (default all).
    pub acks: Acks,
    /// `batch.size` in bytes (default 16384). With compression it counts
    /// the batch's estimated compressed bytes, as Java's producer does: a
    /// batch of records that compress well holds more than `batch.size` of
    /// them, up to half of `max.request.size` (at most 1 MiB) before
    /// compression (Java's `CompressionRatioEstimator`).
    pub batch_size: usize,
    /// `batch.max.size` (a kafka-eos extension, not a Java key; `None`, the
    /// default: [`DEFAULT_BATCH_MAX_SIZE`], 1 MiB, at most
    /// `max.request.size` and at least `batch.size`; set it to `batch.size`
    /// for the Java producer's batches, which never grow): how far a
    /// partition's open batch keeps growing while it cannot be sent anyway.
    /// `batch.size` stays the size at which a batch is ready; but while the
    /// partition's leader connection has `max.in.flight.requests.per.connection`
    /// requests out, the open batch keeps taking records up to this size
    /// (with compression: this many estimated compressed bytes) instead of
    /// starting the next batch, so that the request that goes out when a
    /// slot frees carries more. Never beyond `max.request.size`, nor the
    /// topic's `max.message.bytes` when the broker tells it (the producer
    /// asks with DescribeConfigs); a batch the broker still refuses as too
    /// large (MESSAGE_TOO_LARGE) is split and sent again, as Java splits
    /// one, with the same sequence numbers. Must be at least `batch.size`
    /// and at most `max.request.size`.
    pub batch_max_size: Option<usize>,
    /// `linger.ms` (default 5 ms, as Java 4.x).
    pub linger: Duration,
    /// `buffer.memory` in bytes (default 32 MiB).
    pub buffer_memory: usize,
    /// `compression.type` (default none).
    pub compression: Compression,
    /// The level of that codec, from its `compression.gzip.level`,
    /// `compression.lz4.level` or `compression.zstd.level` (`None`, the
    /// default: the codec's default level). gzip honours every level;
    /// lz4 accepts only Java's default 9 (Java's one level on LZ4's fast
    /// compressor, the one this client implements) and zstd levels up to
    /// Java's default 3 (this client's zstd encoder follows zstd's fast
    /// strategy): a level the codec cannot honour is refused, never
    /// ignored.
    pub compression_level: Option<i32>,
    /// `retries` (default `i32::MAX`).
    pub retries: i32,
    /// `retry.backoff.ms` (default 100 ms).
    pub retry_backoff: Duration,
    /// `delivery.timeout.ms` (default 120 s).
    pub delivery_timeout: Duration,
    /// `request.timeout.ms` (default 30 s).
    pub request_timeout: Duration,
    /// `socket.connection.setup.timeout.ms` (default 10 s): bound on TCP
    /// connect + ApiVersions + SASL, doubled per consecutive failed attempt
    /// to a broker.
    pub connection_setup_timeout: Duration,
    /// `socket.connection.setup.timeout.max.ms` (default 30 s): the most the
    /// setup timeout grows to.
    pub connection_setup_timeout_max: Duration,
    /// `max.request.size` (default 1 MiB).
    pub max_request_size: usize,
    /// `receive.message.max.bytes` (default 100 MiB): the largest response
    /// frame a connection accepts. Java's clients read responses of any size;
    /// this is librdkafka's name for the cap. Memory still grows only with
    /// the bytes that arrive; a consumer (`kafka-consumer`'s `Reader`) keeps its
    /// `fetch.max.bytes` below it.
    pub receive_message_max_bytes: usize,
    /// `max.in.flight.requests.per.connection` (default 5).
    pub max_in_flight: usize,
    /// `enable.idempotence` as given: `None` when not set explicitly.
    pub enable_idempotence: Option<bool>,
    /// `metadata.max.age.ms` (default 5 min).
    pub metadata_max_age: Duration,
    /// `max.block.ms` (default 60 s).
    pub max_block: Duration,
    /// `security.protocol`.
    pub security_protocol: SecurityProtocol,
    /// `sasl.mechanism` (default PLAIN).
    pub sasl_mechanism: SaslMechanism,
    /// `sasl.username` (or from `sasl.jaas.config`).
    pub sasl_username: Option<String>,
    /// `sasl.password` (or from `sasl.jaas.config`); `Debug` prints it as
    /// `<redacted>`.
    pub sasl_password: Option<Secret>,
    /// OAUTHBEARER's token source (`sasl.oauthbearer.*`, see
    /// [`ClientConfig::sasl_oauthbearer`]).
    pub sasl_oauthbearer: Option<kafka_client::oauth::OAuthBearerConfig>,
    /// TLS settings for `SSL` / `SASL_SSL` (from `ssl.truststore.*`,
    /// `ssl.keystore.*` and `ssl.endpoint.identification.algorithm`).
    pub tls: Option<TlsConfig>,
    /// `transactional.id` (used by the transactional producer).
    pub transactional_id: Option<String>,
    /// `transaction.timeout.ms` (default 60 s).
    pub transaction_timeout: Duration,
    /// `partitioner.class` (typed).
    pub partitioner: PartitionerChoice,
    /// In-process metrics (`metrics.enabled`, a kafka-eos extension; default on).
    pub metrics_enabled: bool,
    /// `connections.per.broker` (a kafka-eos extension; default 1, at most
    /// 8): the connections Produce requests use to each broker. Partition p
    /// takes connection p mod n, so a partition's batches stay on one
    /// connection, in order; `max.in.flight.requests.per.connection` holds
    /// per connection, as in Java; idempotence and transactions are
    /// unchanged. Connection 0 is the one shared with metadata and the other
    /// requests (the Java client's only one); the others are dialled only
    /// for partitions that take them.
    ///
    /// A broker reads a connection's next request only once it has answered
    /// the one before, so one connection gets one request handler thread of
    /// the broker at a time. With 2, the broker works on a producer's
    /// requests side by side: measured on one Kafka 4.4 broker sharing a
    /// 2-core machine with the client, 1 KiB records in 6 partitions moved
    /// 11-24% faster, but 100 B records and 100 ms transactions 4-29%
    /// slower — there the machine's cores were already busy, and twice the
    /// requests of half the size cost the client and the broker more CPU.
    /// Worth trying when the broker has idle cores and a producer writes
    /// many partitions per broker.
    pub connections_per_broker: usize,
    /// `bootstrap.timeout.ms` (a kafka-eos extension, a connection property
    /// every client shares; default: `max.block.ms`): how long connecting
    /// waits for a first answer from a bootstrap address. Java's producer
    /// starts without contacting a broker and waits for its first metadata
    /// up to `max.block.ms`; this producer fetches it while connecting,
    /// waiting the same by default, so that a service started before its
    /// brokers waits for them. 0 tries each address once (the `kafka-eos`
    /// command line's choice, to fail fast).
    pub bootstrap_timeout: Option<Duration>,
    delivery_timeout_set: bool,
}

/// The default of `batch.max.size`: how far a partition's open batch grows
/// while the partition waits for an in-flight slot, when the setting is not
/// given (1 MiB, as franz-go's largest batch; never beyond
/// `max.request.size`). Chosen by measurement: with it, against batches
/// that never grow, the idempotent producer moved 1.33x (100 B records) and
/// 1.54x (1 KiB) as many records per second, and the exactly-once copy
/// 1.10x (BENCHMARKS.md, "Choosing the producer's defaults").
pub const DEFAULT_BATCH_MAX_SIZE: usize = 1024 * 1024;

impl ProducerConfig {
    /// The growth bound in effect: `batch.max.size` when set, else
    /// [`DEFAULT_BATCH_MAX_SIZE`] within `max.request.size`; never below
    /// `batch.size`.
    pub(crate) fn effective_batch_max_size(&self) -> usize {
        let batch_size = self.batch_size.max(1);
        self.batch_max_size
            .unwrap_or(DEFAULT_BATCH_MAX_SIZE.min(self.max_request_size))
            .max(batch_size)
    }

    /// Defaults for `bootstrap` (comma-separated), not yet validated.
    ///
    /// ```
    /// use kafka_producer::ProducerConfig;
    /// let mut cfg = ProducerConfig::new("broker-1:9092");
    /// cfg.linger = std::time::Duration::from_millis(20);
    /// let cfg = cfg.validate().unwrap();
    /// assert_eq!(cfg.client_id, "kafka-eos-producer");
    /// ```
    pub fn new(bootstrap: &str) -> Self {
        Self {
            bootstrap_servers: ClientConfig::new(bootstrap).bootstrap_servers,
            client_id: "kafka-eos-producer".into(),
            acks: Acks::All,
            batch_size: 16384,
            batch_max_size: None,
            linger: Duration::from_millis(5),
            buffer_memory: 32 * 1024 * 1024,
            compression: Compression::None,
            compression_level: None,
            retries: i32::MAX,
            retry_backoff: Duration::from_millis(100),
            delivery_timeout: Duration::from_millis(120_000),
            request_timeout: Duration::from_millis(30_000),
            connection_setup_timeout: Duration::from_millis(10_000),
            connection_setup_timeout_max: Duration::from_millis(30_000),
            max_request_size: 1024 * 1024,
            receive_message_max_bytes: kafka_proto::frame::DEFAULT_MAX_FRAME_SIZE,
            max_in_flight: 5,
            enable_idempotence: None,
            metadata_max_age: Duration::from_millis(300_000),
            max_block: Duration::from_millis(60_000),
            security_protocol: SecurityProtocol::Plaintext,
            sasl_mechanism: SaslMechanism::Plain,
            sasl_username: None,
            sasl_password: None,
            sasl_oauthbearer: None,
            tls: None,
            transactional_id: None,
            transaction_timeout: Duration::from_millis(60_000),
            partitioner: PartitionerChoice::Default,
            metrics_enabled: true,
            connections_per_broker: 1,
            bootstrap_timeout: None,
            delivery_timeout_set: false,
        }
    }

    /// A typed builder with Java's defaults.
    ///
    /// ```
    /// use kafka_producer::ProducerConfig;
    /// let cfg = ProducerConfig::builder("broker-1:9092").client_id("orders-app").build().unwrap();
    /// assert_eq!(cfg.client_id, "orders-app");
    /// ```
    pub fn builder(bootstrap: &str) -> ProducerConfigBuilder {
        ProducerConfigBuilder {
            config: Self::new(bootstrap),
        }
    }

    /// Parses Java producer properties. Every key must be known; values are
    /// validated and the result is checked as a whole (see the module docs).
    ///
    /// ```
    /// use kafka_producer::ProducerConfig;
    /// let e = ProducerConfig::from_properties([("bootstrap.servers", "h:1"), ("linger.ms", "soon")]).unwrap_err();
    /// assert_eq!(e.key(), "linger.ms");
    /// let e = ProducerConfig::from_properties([("bootstrap.servers", "h:1"), ("lingr.ms", "5")]).unwrap_err();
    /// assert_eq!(e.key(), "lingr.ms");
    /// ```
    pub fn from_properties<I, K, V>(props: I) -> Result<Self, ConfigError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut props = Properties::new(props);
        let config = Self::take_from(&mut props)?;
        props.finish()?;
        Ok(config)
    }

    /// Takes the producer's keys (its own and the connection keys every
    /// client shares) from `props`, and validates the result. Other keys
    /// stay in the bag, for a consumer beside the producer;
    /// [`Properties::finish`] refuses those nobody took.
    ///
    /// ```
    /// use kafka_producer::ProducerConfig;
    /// use kafka_producer::kafka_client::Properties;
    /// let mut props = Properties::new([
    ///     ("bootstrap.servers", "broker-1:9092"),
    ///     ("enable.idempotence", "TRUE"), // booleans ignore case, as in Java
    ///     ("isolation.level", "read_committed"), // a consumer's key
    /// ]);
    /// let producer = ProducerConfig::take_from(&mut props).unwrap();
    /// assert!(producer.idempotence());
    /// // A consumer's configuration would take isolation.level here.
    /// assert_eq!(props.finish().unwrap_err().key(), "isolation.level");
    /// ```
    pub fn take_from(props: &mut Properties) -> Result<Self, ConfigError> {
        let mut c = Self::new("");
        let mut client = c.client_config();
        client.update_from(props)?;
        c.set_client_config(client);
        let int_max = i64::from(i32::MAX);
        if let Some(v) = props.one_of(
            "acks",
            &[
                ("0", Acks::Zero),
                ("1", Acks::One),
                ("all", Acks::All),
                ("-1", Acks::All),
            ],
        )? {
            c.acks = v;
        }
        if let Some(v) = props.bytes("batch.size", 0..=int_max)? {
            c.batch_size = v;
        }
        if let Some(v) = props.bytes("batch.max.size", 0..=int_max)? {
            c.batch_max_size = Some(v);
        }
        if let Some(v) = props.millis("linger.ms", 0..=int_max)? {
            c.linger = v;
        }
        if let Some(v) = props.bytes("buffer.memory", 0..=i64::MAX)? {
            c.buffer_memory = v;
        }
        if let Some(v) = props.string("compression.type") {
            c.compression = compression("compression.type", &v)?;
        }
        // Java's ranges for every level key; the level of the codec in use
        // must also be one its encoder here honours.
        for (key, codec, range) in [
            ("compression.gzip.level", Compression::Gzip, -1..=9),
            ("compression.lz4.level", Compression::Lz4, 1..=17),
            ("compression.zstd.level", Compression::Zstd, -131_072..=22),
        ] {
            let Some(level) = props.int(key, range)? else {
                continue;
            };
            if codec == Compression::Gzip && level == 0 {
                return Err(ConfigError::InvalidValue {
                    key: key.into(),
                    value: level.to_string(),
                    reason: "must be -1 (the default) or 1 to 9".into(),
                });
            }
            if codec == c.compression {
                codec
                    .check_level(level)
                    .map_err(|reason| ConfigError::InvalidValue {
                        key: key.into(),
                        value: level.to_string(),
                        reason,
                    })?;
                c.compression_level = Some(level);
            }
        }
        if let Some(v) = props.int("retries", 0..=i32::MAX)? {
            c.retries = v;
        }
        if let Some(v) = props.millis("retry.backoff.ms", 0..=i64::MAX)? {
            c.retry_backoff = v;
        }
        if let Some(v) = props.millis("delivery.timeout.ms", 0..=int_max)? {
            c.delivery_timeout = v;
            c.delivery_timeout_set = true;
        }
        if let Some(v) = props.bytes("max.request.size", 0..=int_max)? {
            c.max_request_size = v;
        }
        if let Some(v) = props.int("max.in.flight.requests.per.connection", 1..=i32::MAX)? {
            c.max_in_flight = v as usize;
        }
        if let Some(v) = props.bool("enable.idempotence")? {
            c.enable_idempotence = Some(v);
        }
        if let Some(v) = props.millis("max.block.ms", 0..=i64::MAX)? {
            c.max_block = v;
        }
        if let Some(v) = props.non_empty("transactional.id")? {
            c.transactional_id = Some(v);
        }
        if let Some(v) = props.millis("transaction.timeout.ms", 1..=int_max)? {
            c.transaction_timeout = v;
        }
        if let Some(v) = props.string("partitioner.class") {
            c.partitioner = partitioner("partitioner.class", &v)?;
        }
        if props.bool("partitioner.ignore.keys")? == Some(true) {
            c.partitioner = PartitionerChoice::RoundRobin;
        }
        if let Some(v) = props.bool("metrics.enabled")? {
            c.metrics_enabled = v;
        }
        if let Some(v) = props.int("connections.per.broker", 1..=8)? {
            c.connections_per_broker = v as usize;
        }
        // Serializers are the caller's business in Rust: accept the
        // byte-array ones Java tools pass, reject others.
        for key in ["key.serializer", "value.serializer"] {
            if let Some(v) = props.string(key)
                && !v.ends_with("ByteArraySerializer")
                && !v.ends_with("BytesSerializer")
            {
                return Err(ConfigError::invalid_value(
                    key,
                    &v,
                    "records carry bytes; only ByteArraySerializer/BytesSerializer are accepted",
                ));
            }
        }
        c.validate()
    }

    /// Checks the settings as a whole and resolves `enable.idempotence`.
    ///
    /// ```
    /// use kafka_producer::{Acks, ProducerConfig};
    /// let mut cfg = ProducerConfig::new("broker-1:9092");
    /// cfg.acks = Acks::One;
    /// assert!(!cfg.clone().validate().unwrap().idempotence()); // silently disabled
    /// cfg.enable_idempotence = Some(true);
    /// assert_eq!(cfg.validate().unwrap_err().key(), "acks"); // explicit: an error
    /// ```
    pub fn validate(mut self) -> Result<Self, ConfigError> {
        if self.bootstrap_servers.is_empty() {
            return Err(ConfigError::Missing("bootstrap.servers".into()));
        }
        if !(1..=8).contains(&self.connections_per_broker) {
            // The wording of a range error read from the properties.
            let bound = if self.connections_per_broker == 0 {
                "must be at least 1"
            } else {
                "must be no more than 8"
            };
            return Err(ConfigError::InvalidValue {
                key: "connections.per.broker".into(),
                value: self.connections_per_broker.to_string(),
                reason: bound.into(),
            });
        }
        if let Some(max) = self.batch_max_size {
            let reason = if max < self.batch_size {
                Some(format!("must be at least batch.size ({})", self.batch_size))
            } else if max > self.max_request_size {
                Some(format!(
                    "must be at most max.request.size ({})",
                    self.max_request_size
                ))
            } else {
                None
            };
            if let Some(reason) = reason {
                return Err(ConfigError::InvalidValue {
                    key: "batch.max.size".into(),
                    value: max.to_string(),
                    reason,
                });
            }
        }
        if self.max_in_flight == 0 {
            return Err(ConfigError::InvalidValue {
                key: "max.in.flight.requests.per.connection".into(),
                value: "0".into(),
                reason: "must be at least 1".into(),
            });
        }
        if !self.compression.is_supported() {
            return Err(ConfigError::InvalidValue {
                key: "compression.type".into(),
                value: self.compression.name().into(),
                reason: format!(
                    "this build lacks the `{}` cargo feature of kafka-producer",
                    self.compression.name()
                ),
            });
        }
        if let Some(level) = self.compression_level {
            let key = format!("compression.{}.level", self.compression.name());
            self.compression
                .check_level(level)
                .map_err(|reason| ConfigError::InvalidValue {
                    key,
                    value: level.to_string(),
                    reason,
                })?;
        }
        // Java: postProcessAndValidateIdempotenceConfigs.
        let explicit = self.enable_idempotence;
        if explicit != Some(false) {
            let mut disable = None;
            if self.retries == 0 {
                disable = Some((
                    "retries",
                    "must set retries to non-zero when using the idempotent producer",
                ));
            } else if self.acks != Acks::All {
                disable = Some((
                    "acks",
                    "must set acks to all in order to use the idempotent producer; otherwise idempotence cannot be guaranteed",
                ));
            } else if self.max_in_flight > 5 {
                disable = Some((
                    "max.in.flight.requests.per.connection",
                    "must be at most 5 to use the idempotent producer",
                ));
            }
            if let Some((key, reason)) = disable {
                if explicit == Some(true) {
                    return Err(ConfigError::Incompatible {
                        key: key.into(),
                        reason: reason.into(),
                    });
                }
                self.enable_idempotence = Some(false);
            }
        }
        if self.transactional_id.is_some() && self.enable_idempotence == Some(false) {
            return Err(ConfigError::Incompatible {
                key: "transactional.id".into(),
                reason: "cannot set a transactional.id without also enabling idempotence".into(),
            });
        }
        self.client_config().validate_security()?;
        // Java: KafkaProducer.configureDeliveryTimeout.
        let floor = self.linger + self.request_timeout;
        if self.delivery_timeout < floor {
            if self.delivery_timeout_set {
                return Err(ConfigError::Incompatible {
                    key: "delivery.timeout.ms".into(),
                    reason: "must be equal to or larger than linger.ms + request.timeout.ms".into(),
                });
            }
            self.delivery_timeout = floor;
        }
        Ok(self)
    }

    /// True when the producer will be idempotent (explicitly or by default).
    pub fn idempotence(&self) -> bool {
        self.enable_idempotence != Some(false)
    }

    /// The connection settings derived from this configuration.
    pub fn connection_config(&self) -> ConnectionConfig {
        self.client_config().connection_config()
    }

    /// The cluster settings derived from this configuration.
    pub fn cluster_config(&self) -> ClusterConfig {
        let mut c = self.client_config().cluster_config();
        c.bootstrap_timeout = self.bootstrap_timeout.unwrap_or(self.max_block);
        c
    }

    /// The connection settings of this configuration as the
    /// [`ClientConfig`] every client shares (`retry.backoff.ms` paces its
    /// metadata refreshes).
    pub fn client_config(&self) -> ClientConfig {
        ClientConfig {
            bootstrap_servers: self.bootstrap_servers.clone(),
            client_id: self.client_id.clone(),
            request_timeout: self.request_timeout,
            connection_setup_timeout: self.connection_setup_timeout,
            connection_setup_timeout_max: self.connection_setup_timeout_max,
            receive_message_max_bytes: self.receive_message_max_bytes,
            metadata_max_age: self.metadata_max_age,
            retry_backoff: self.retry_backoff,
            security_protocol: self.security_protocol,
            sasl_mechanism: self.sasl_mechanism,
            sasl_username: self.sasl_username.clone(),
            sasl_password: self.sasl_password.clone(),
            sasl_oauthbearer: self.sasl_oauthbearer.clone(),
            tls: self.tls.clone(),
            bootstrap_timeout: self.bootstrap_timeout,
        }
    }

    /// Takes the connection settings of `client` (all but `retry_backoff`,
    /// which is the producer's own `retry.backoff.ms`).
    fn set_client_config(&mut self, client: ClientConfig) {
        let ClientConfig {
            bootstrap_servers,
            client_id,
            request_timeout,
            connection_setup_timeout,
            connection_setup_timeout_max,
            receive_message_max_bytes,
            metadata_max_age,
            retry_backoff: _,
            security_protocol,
            sasl_mechanism,
            sasl_username,
            sasl_password,
            sasl_oauthbearer,
            tls,
            bootstrap_timeout,
        } = client;
        self.bootstrap_servers = bootstrap_servers;
        self.client_id = client_id;
        self.request_timeout = request_timeout;
        self.connection_setup_timeout = connection_setup_timeout;
        self.connection_setup_timeout_max = connection_setup_timeout_max;
        self.receive_message_max_bytes = receive_message_max_bytes;
        self.metadata_max_age = metadata_max_age;
        self.bootstrap_timeout = bootstrap_timeout;
        self.security_protocol = security_protocol;
        self.sasl_mechanism = sasl_mechanism;
        self.sasl_username = sasl_username;
        self.sasl_password = sasl_password;
        self.sasl_oauthbearer = sasl_oauthbearer;
        self.tls = tls;
    }
}

/// Typed builder of a [`ProducerConfig`]; [`Self::build`] validates.
///
/// ```
/// use kafka_producer::{Acks, ProducerConfig};
/// use kafka_proto::record::Compression;
/// let cfg = ProducerConfig::builder("127.0.0.1:9092")
///     .acks(Acks::All)
///     .compression(Compression::None)
///     .max_in_flight(5)
///     .enable_idempotence(true)
///     .build()
///     .unwrap();
/// assert_eq!(cfg.batch_size, 16384);
/// ```
#[derive(Debug, Clone)]
pub struct ProducerConfigBuilder {
    config: ProducerConfig,
}

macro_rules! setter {
    ($($(#[$doc:meta])* $name:ident : $ty:ty => $field:ident;)*) => {
        $($(#[$doc])* pub fn $name(mut self, v: $ty) -> Self { self.config.$field = v.into(); self })*
    };
}

impl ProducerConfigBuilder {
    setter! {
        /// `client.id`.
        client_id: impl Into<String> => client_id;
        /// `acks`.
        acks: Acks => acks;
        /// `batch.size`.
        batch_size: usize => batch_size;
        /// `batch.max.size` (a kafka-eos extension): how far the open batch
        /// of a partition waiting for an in-flight slot grows (`None`:
        /// [`DEFAULT_BATCH_MAX_SIZE`] within `max.request.size`).
        batch_max_size: Option<usize> => batch_max_size;
        /// `linger.ms`.
        linger: Duration => linger;
        /// `buffer.memory`.
        buffer_memory: usize => buffer_memory;
        /// `compression.type`.
        compression: Compression => compression;
        /// `compression.<codec>.level` of the codec set (`None`: its default;
        /// [`Self::build`] refuses a level the codec cannot honour).
        compression_level: Option<i32> => compression_level;
        /// `retries`.
        retries: i32 => retries;
        /// `retry.backoff.ms`.
        retry_backoff: Duration => retry_backoff;
        /// `request.timeout.ms`.
        request_timeout: Duration => request_timeout;
        /// `max.request.size`.
        max_request_size: usize => max_request_size;
        /// `max.in.flight.requests.per.connection`.
        max_in_flight: usize => max_in_flight;
        /// `metadata.max.age.ms`.
        metadata_max_age: Duration => metadata_max_age;
        /// `max.block.ms`.
        max_block: Duration => max_block;
        /// `transaction.timeout.ms`.
        transaction_timeout: Duration => transaction_timeout;
        /// The partitioner.
        partitioner: PartitionerChoice => partitioner;
        /// In-process metrics on/off.
        metrics_enabled: bool => metrics_enabled;
        /// `connections.per.broker`: Produce connections to each broker.
        connections_per_broker: usize => connections_per_broker;
        /// `bootstrap.timeout.ms`: how long connecting waits for a bootstrap
        /// address to answer (default `max.block.ms`).
        bootstrap_timeout: Duration => bootstrap_timeout;
    }

    /// `delivery.timeout.ms` (explicitly set: must be ≥ linger + request timeout).
    pub fn delivery_timeout(mut self, v: Duration) -> Self {
        self.config.delivery_timeout = v;
        self.config.delivery_timeout_set = true;
        self
    }

    /// `enable.idempotence`, explicitly.
    pub fn enable_idempotence(mut self, on: bool) -> Self {
        self.config.enable_idempotence = Some(on);
        self
    }

    /// `transactional.id`.
    pub fn transactional_id(mut self, id: impl Into<String>) -> Self {
        self.config.transactional_id = Some(id.into());
        self
    }

    /// `security.protocol=SASL_PLAINTEXT` (`SASL_SSL` after [`Self::tls`])
    /// with a mechanism and credentials.
    pub fn sasl(
        mut self,
        mechanism: SaslMechanism,
        username: impl Into<String>,
        password: impl Into<String>,
    ) -> Self {
        self.config.security_protocol = match self.config.security_protocol {
            SecurityProtocol::Ssl | SecurityProtocol::SaslSsl => SecurityProtocol::SaslSsl,
            _ => SecurityProtocol::SaslPlaintext,
        };
        self.config.sasl_mechanism = mechanism;
        self.config.sasl_username = Some(username.into());
        self.config.sasl_password = Some(Secret::new(password));
        self
    }

    /// `security.protocol=SSL` (`SASL_SSL` after [`Self::sasl`]) with these
    /// TLS settings; [`Self::build`] fails without the `tls` cargo feature.
    pub fn tls(mut self, tls: TlsConfig) -> Self {
        self.config.security_protocol = match self.config.security_protocol {
            SecurityProtocol::SaslPlaintext | SecurityProtocol::SaslSsl => {
                SecurityProtocol::SaslSsl
            }
            _ => SecurityProtocol::Ssl,
        };
        self.config.tls = Some(tls);
        self
    }

    /// Validates and returns the configuration.
    pub fn build(self) -> Result<ProducerConfig, ConfigError> {
        self.config.validate()
    }
}

fn compression(key: &str, value: &str) -> Result<Compression, ConfigError> {
    let c = match value {
        "none" => Compression::None,
        "gzip" => Compression::Gzip,
        "snappy" => Compression::Snappy,
        "lz4" => Compression::Lz4,
        "zstd" => Compression::Zstd,
        _ => {
            return Err(ConfigError::invalid_value(
                key,
                value,
                "expected none, gzip, snappy, lz4 or zstd",
            ));
        }
    };
    if !c.is_supported() {
        return Err(ConfigError::invalid_value(
            key,
            value,
            "codec not compiled in (enable the kafka-producer cargo feature of that name)",
        ));
    }
    Ok(c)
}

fn partitioner(key: &str, value: &str) -> Result<PartitionerChoice, ConfigError> {
    let short = value.rsplit('.').next().unwrap_or(value);
    Ok(match short {
        "" | "default" | "DefaultPartitioner" | "BuiltInPartitioner" => PartitionerChoice::Default,
        "round_robin" | "RoundRobinPartitioner" => PartitionerChoice::RoundRobin,
        "key_hash" | "KeyHashPartitioner" => PartitionerChoice::KeyHash,
        s if s.starts_with("fixed:") => {
            PartitionerChoice::Fixed(s[6..].parse().ok().filter(|_: &usize| true).ok_or_else(
                || ConfigError::invalid_value(key, value, "expected fixed:<subtask index>"),
            )?)
        }
        _ => {
            return Err(ConfigError::invalid_value(
                key,
                value,
                "expected default, round_robin, key_hash, fixed:<subtask> or org.apache.kafka.clients.producer.RoundRobinPartitioner",
            ));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The connection properties mean the same to a producer as to the
    /// other clients: `ProducerConfig::from_properties` and
    /// `ClientConfig::from_properties` (the consumers' parser) give the same
    /// connection settings for them.
    /// `batch.max.size` (a kafka-eos extension) defaults to `batch.size`
    /// (batches never grow: Java's producer), must be at least
    /// `batch.size` and at most `max.request.size`.
    #[test]
    fn batch_max_size_is_at_least_batch_size_and_at_most_max_request_size() {
        let base = [("bootstrap.servers", "h:1"), ("batch.size", "1000")];
        let c = ProducerConfig::from_properties(base).unwrap();
        assert_eq!(c.batch_max_size, None);
        let with = |v: &str| {
            ProducerConfig::from_properties(base.iter().copied().chain([("batch.max.size", v)]))
        };
        assert_eq!(with("65536").unwrap().batch_max_size, Some(65_536));
        assert_eq!(with("1000").unwrap().batch_max_size, Some(1000));
        assert_eq!(with("999").unwrap_err().key(), "batch.max.size");
        assert_eq!(with("2000000").unwrap_err().key(), "batch.max.size");
        assert_eq!(with("lots").unwrap_err().key(), "batch.max.size");
    }

    /// Without `batch.max.size`, batches grow to 1 MiB while they wait,
    /// never beyond `max.request.size` nor below `batch.size`; set to
    /// `batch.size`, they never grow (Java's producer).
    #[test]
    fn the_growth_bound_defaults_to_1_mib_within_max_request_size() {
        let bound = |props: &[(&str, &str)]| {
            ProducerConfig::from_properties(
                [("bootstrap.servers", "h:1")]
                    .into_iter()
                    .chain(props.iter().copied()),
            )
            .unwrap()
            .effective_batch_max_size()
        };
        assert_eq!(bound(&[]), DEFAULT_BATCH_MAX_SIZE);
        assert_eq!(bound(&[("max.request.size", "65536")]), 65_536);
        assert_eq!(
            bound(&[("batch.size", "2097152"), ("max.request.size", "4194304")]),
            2_097_152
        );
        assert_eq!(
            bound(&[("batch.size", "16384"), ("batch.max.size", "16384")]),
            16_384
        );
    }

    #[test]
    fn connection_properties_parse_as_the_other_clients_parse_them() {
        let props = [
            ("bootstrap.servers", "a:1, b:2"),
            ("client.id", "orders"),
            ("request.timeout.ms", "12000"),
            ("socket.connection.setup.timeout.ms", "700"),
            ("socket.connection.setup.timeout.max.ms", "9000"),
            ("receive.message.max.bytes", "2000000"),
            ("metadata.max.age.ms", "4000"),
            ("bootstrap.timeout.ms", "2500"),
            ("security.protocol", "sasl_plaintext"),
            ("sasl.mechanism", "SCRAM-SHA-256"),
            (
                "sasl.jaas.config",
                "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"alice\" password=\"s3cret\";",
            ),
        ];
        let producer = ProducerConfig::from_properties(props)
            .unwrap()
            .client_config();
        let client = ClientConfig::from_properties(props).unwrap();
        assert_eq!(producer.bootstrap_servers, client.bootstrap_servers);
        assert_eq!(producer.client_id, client.client_id);
        assert_eq!(producer.request_timeout, client.request_timeout);
        assert_eq!(
            producer.connection_setup_timeout,
            client.connection_setup_timeout
        );
        assert_eq!(
            producer.connection_setup_timeout_max,
            client.connection_setup_timeout_max
        );
        assert_eq!(
            producer.receive_message_max_bytes,
            client.receive_message_max_bytes
        );
        assert_eq!(producer.metadata_max_age, client.metadata_max_age);
        assert_eq!(
            producer.bootstrap_timeout,
            Some(Duration::from_millis(2500))
        );
        assert_eq!(producer.bootstrap_timeout, client.bootstrap_timeout);
        assert_eq!(producer.security_protocol, client.security_protocol);
        assert_eq!(producer.sasl_mechanism, client.sasl_mechanism);
        assert_eq!(producer.sasl_username.as_deref(), Some("alice"));
        assert_eq!(producer.sasl_username, client.sasl_username);
        assert_eq!(producer.sasl_password, client.sasl_password);
        assert!(producer.tls.is_none() && client.tls.is_none());
    }

    /// A producer setting is not a connection setting: the consumers' parser
    /// refuses it by name, and the producer's takes it.
    #[test]
    fn producer_settings_are_not_connection_settings() {
        let props = [("bootstrap.servers", "a:1"), ("linger.ms", "5")];
        assert!(ProducerConfig::from_properties(props).is_ok());
        assert_eq!(
            ClientConfig::from_properties(props).unwrap_err(),
            ConfigError::UnknownKey("linger.ms".into())
        );
    }

    fn props(extra: &[(&str, &str)]) -> Result<ProducerConfig, ConfigError> {
        let mut v = vec![("bootstrap.servers", "a:1,b:2")];
        v.extend_from_slice(extra);
        ProducerConfig::from_properties(v)
    }

    #[test]
    fn every_key_parses() {
        let c = props(&[
            ("client.id", "me"),
            ("acks", "-1"),
            ("batch.size", "1000"),
            ("linger.ms", "7"),
            ("buffer.memory", "1000000"),
            ("compression.type", "none"),
            ("retries", "3"),
            ("retry.backoff.ms", "50"),
            ("delivery.timeout.ms", "40000"),
            ("request.timeout.ms", "20000"),
            ("max.request.size", "2000000"),
            ("max.in.flight.requests.per.connection", "3"),
            ("enable.idempotence", "true"),
            ("metadata.max.age.ms", "1000"),
            ("max.block.ms", "500"),
            ("security.protocol", "SASL_PLAINTEXT"),
            ("sasl.mechanism", "SCRAM-SHA-512"),
            ("sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"alice\" password=\"s3cret\";"),
            ("transactional.id", "tx"),
            ("transaction.timeout.ms", "9000"),
            ("partitioner.class", "org.apache.kafka.clients.producer.RoundRobinPartitioner"),
            ("metrics.enabled", "false"),
            ("key.serializer", "org.apache.kafka.common.serialization.ByteArraySerializer"),
        ])
        .unwrap();
        assert_eq!(c.bootstrap_servers, vec!["a:1", "b:2"]);
        assert_eq!(c.client_id, "me");
        assert_eq!(c.acks, Acks::All);
        assert_eq!(c.batch_size, 1000);
        assert_eq!(c.linger, Duration::from_millis(7));
        assert_eq!(c.buffer_memory, 1_000_000);
        assert_eq!(c.retries, 3);
        assert_eq!(c.retry_backoff, Duration::from_millis(50));
        assert_eq!(c.delivery_timeout, Duration::from_millis(40_000));
        assert_eq!(c.request_timeout, Duration::from_millis(20_000));
        assert_eq!(c.max_request_size, 2_000_000);
        assert_eq!(c.max_in_flight, 3);
        assert!(c.idempotence());
        assert_eq!(c.metadata_max_age, Duration::from_secs(1));
        assert_eq!(c.max_block, Duration::from_millis(500));
        assert_eq!(c.security_protocol, SecurityProtocol::SaslPlaintext);
        assert_eq!(c.sasl_mechanism, SaslMechanism::ScramSha512);
        assert_eq!(c.sasl_username.as_deref(), Some("alice"));
        assert_eq!(c.sasl_password.as_ref().map(Secret::expose), Some("s3cret"));
        assert!(
            !format!("{c:?}").contains("s3cret"),
            "Debug never prints the password"
        );
        assert_eq!(c.transactional_id.as_deref(), Some("tx"));
        assert_eq!(c.transaction_timeout, Duration::from_secs(9));
        assert!(matches!(c.partitioner, PartitionerChoice::RoundRobin));
        assert!(!c.metrics_enabled);
        let cc = c.connection_config();
        assert_eq!(cc.sasl.unwrap().mechanism, SaslMechanism::ScramSha512);
        let p = props(&[
            ("sasl.mechanism", "PLAIN"),
            ("security.protocol", "SASL_PLAINTEXT"),
            ("sasl.username", "u"),
            ("sasl.password", "p"),
        ])
        .unwrap();
        assert_eq!(p.sasl_username.as_deref(), Some("u"));
        for (v, want) in [
            ("fixed:3", "Fixed(3)"),
            ("key_hash", "KeyHash"),
            ("default", "Default"),
        ] {
            let c = props(&[("partitioner.class", v)]).unwrap();
            assert_eq!(format!("{:?}", c.partitioner), want);
        }
    }

    /// Java's `ConfigDef` compares booleans ignoring case: `TRUE` and
    /// `False` are booleans for every boolean key of the producer.
    #[test]
    fn booleans_ignore_case() {
        let c = props(&[("enable.idempotence", "TRUE"), ("metrics.enabled", "False")]).unwrap();
        assert_eq!(c.enable_idempotence, Some(true));
        assert!(!c.metrics_enabled);
        let c = props(&[("partitioner.ignore.keys", "True")]).unwrap();
        assert!(matches!(c.partitioner, PartitionerChoice::RoundRobin));
    }

    /// A value out of range reads as every client's range error: the bound
    /// crossed, in Java's words.
    #[test]
    fn range_errors_name_the_bound_crossed() {
        let e = props(&[("linger.ms", "-1")]).unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"invalid value "-1" for linger.ms: must be at least 0"#
        );
        let e = props(&[("connections.per.broker", "9")]).unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"invalid value "9" for connections.per.broker: must be no more than 8"#
        );
        let typed = ProducerConfig::builder("a:1")
            .connections_per_broker(9)
            .build()
            .unwrap_err();
        assert_eq!(typed, e, "the builder's check reads as the property's");
    }

    /// A key nobody takes is refused once, by name, however often given.
    #[test]
    fn an_unknown_key_is_reported_once_by_name() {
        let e = props(&[("lingr.ms", "5"), ("acks", "all"), ("lingr.ms", "6")]).unwrap_err();
        assert_eq!(e, ConfigError::UnknownKey("lingr.ms".into()));
    }

    /// `take_from` leaves a consumer's keys in the bag for the consumer.
    #[test]
    fn take_from_leaves_other_clients_keys() {
        let mut bag = Properties::new([
            ("bootstrap.servers", "a:1"),
            ("linger.ms", "7"),
            ("isolation.level", "read_committed"),
        ]);
        let c = ProducerConfig::take_from(&mut bag).unwrap();
        assert_eq!(c.linger, Duration::from_millis(7));
        assert_eq!(
            bag.finish(),
            Err(ConfigError::UnknownKey("isolation.level".into()))
        );
    }

    #[test]
    fn defaults_match_java() {
        let c = props(&[]).unwrap();
        assert_eq!(c.acks, Acks::All);
        assert_eq!(c.batch_size, 16384);
        assert_eq!(c.linger, Duration::from_millis(5));
        assert_eq!(c.buffer_memory, 33_554_432);
        assert_eq!(c.retries, i32::MAX);
        assert_eq!(c.delivery_timeout, Duration::from_secs(120));
        assert_eq!(c.request_timeout, Duration::from_secs(30));
        assert_eq!(c.max_request_size, 1_048_576);
        assert_eq!(c.receive_message_max_bytes, 104_857_600);
        assert_eq!(c.max_in_flight, 5);
        assert_eq!(c.max_block, Duration::from_secs(60));
        assert!(c.idempotence());
    }

    #[test]
    fn java_connection_setup_timeouts_are_used() {
        let c = props(&[
            ("socket.connection.setup.timeout.ms", "2500"),
            ("socket.connection.setup.timeout.max.ms", "9000"),
        ])
        .unwrap();
        let conn = c.connection_config();
        assert_eq!(conn.connect_timeout, Duration::from_millis(2500));
        assert_eq!(conn.setup_timeout(1), Duration::from_millis(5000));
        assert_eq!(conn.setup_timeout(3), Duration::from_millis(9000));
        assert!(props(&[("socket.connection.setup.timeout.ms", "0")]).is_err());
    }

    #[test]
    fn receive_message_max_bytes_caps_the_response_frame() {
        let c = props(&[("receive.message.max.bytes", "2000000")]).unwrap();
        assert_eq!(c.connection_config().max_frame_size, 2_000_000);
        assert_eq!(c.cluster_config().connection.max_frame_size, 2_000_000);
        assert!(props(&[("receive.message.max.bytes", "10")]).is_err());
    }

    #[test]
    fn unknown_key_and_bad_values_name_the_key() {
        assert_eq!(
            props(&[("no.such", "1")]).unwrap_err(),
            ConfigError::UnknownKey("no.such".into())
        );
        for (k, v) in [
            ("acks", "2"),
            ("batch.size", "-1"),
            ("linger.ms", "x"),
            ("buffer.memory", "lots"),
            ("compression.type", "brotli"),
            ("retries", "-3"),
            ("retry.backoff.ms", "1.5"),
            ("delivery.timeout.ms", "forever"),
            ("request.timeout.ms", ""),
            ("max.request.size", "1e6"),
            ("max.in.flight.requests.per.connection", "0"),
            ("enable.idempotence", "yes"),
            ("metadata.max.age.ms", "-"),
            ("max.block.ms", "-1"),
            ("security.protocol", "SSLv3"),
            ("sasl.mechanism", "GSSAPI"),
            ("sasl.jaas.config", "com.sun.Krb5LoginModule required;"),
            ("transactional.id", ""),
            ("transaction.timeout.ms", "0"),
            ("partitioner.class", "com.example.Mine"),
            ("metrics.enabled", "1"),
            ("bootstrap.servers", "nohost"),
            (
                "value.serializer",
                "org.apache.kafka.common.serialization.StringSerializer",
            ),
        ] {
            let e = props(&[(k, v)]).unwrap_err();
            assert_eq!(e.key(), k, "{k}={v}: {e}");
            assert!(matches!(e, ConfigError::InvalidValue { .. }), "{e}");
        }
        assert_eq!(
            ProducerConfig::from_properties([("acks", "1")])
                .unwrap_err()
                .key(),
            "bootstrap.servers"
        );
    }

    #[test]
    fn incompatible_settings_as_java() {
        // Explicit idempotence: errors.
        let e = props(&[("enable.idempotence", "true"), ("acks", "1")]).unwrap_err();
        assert!(matches!(e, ConfigError::Incompatible { .. }) && e.key() == "acks");
        let e = props(&[
            ("enable.idempotence", "true"),
            ("max.in.flight.requests.per.connection", "6"),
        ])
        .unwrap_err();
        assert_eq!(e.key(), "max.in.flight.requests.per.connection");
        let e = props(&[("enable.idempotence", "true"), ("retries", "0")]).unwrap_err();
        assert_eq!(e.key(), "retries");
        // Default idempotence: silently disabled.
        assert!(!props(&[("acks", "0")]).unwrap().idempotence());
        assert!(
            !props(&[("max.in.flight.requests.per.connection", "6")])
                .unwrap()
                .idempotence()
        );
        assert!(!props(&[("retries", "0")]).unwrap().idempotence());
        // transactional.id needs idempotence.
        let e = props(&[("transactional.id", "t"), ("acks", "1")]).unwrap_err();
        assert_eq!(e.key(), "transactional.id");
        let e = props(&[("transactional.id", "t"), ("enable.idempotence", "false")]).unwrap_err();
        assert_eq!(e.key(), "transactional.id");
        // delivery.timeout.ms < linger + request timeout.
        let e = props(&[("delivery.timeout.ms", "1000")]).unwrap_err();
        assert_eq!(e.key(), "delivery.timeout.ms");
        let c = props(&[("request.timeout.ms", "200000")]).unwrap();
        assert_eq!(
            c.delivery_timeout,
            Duration::from_millis(200_005),
            "adjusted when not set"
        );
        // SASL without credentials.
        assert!(props(&[("security.protocol", "SASL_PLAINTEXT")]).is_err());
        // Builder.
        let e = ProducerConfig::builder("h:1")
            .acks(Acks::One)
            .enable_idempotence(true)
            .build()
            .unwrap_err();
        assert_eq!(e.key(), "acks");
        assert!(
            !ProducerConfig::builder("h:1")
                .acks(Acks::One)
                .build()
                .unwrap()
                .idempotence()
        );
    }

    #[test]
    fn ssl_keys_parse_or_name_the_key() {
        // Settings valid in any build.
        for (k, v) in [
            ("ssl.truststore.type", "JKS"),
            ("ssl.keystore.type", "BKS"),
            ("ssl.truststore.fallback", "probe"),
            ("ssl.endpoint.identification.algorithm", "http"),
            ("ssl.truststore.location", "/no/such/ca.pem"),
        ] {
            let e = props(&[(k, v)]).unwrap_err();
            assert_eq!(e.key(), k, "{k}={v}: {e}");
            assert!(!e.to_string().contains("secret"), "{e}");
        }
        assert!(matches!(
            props(&[("ssl.cipher.suites", "x")]).unwrap_err(),
            ConfigError::UnknownKey(_)
        ));
        // ssl.* without SSL is ignored, as in Java.
        let c = props(&[("ssl.endpoint.identification.algorithm", "")]).unwrap();
        assert!(c.connection_config().tls.is_none());
    }

    #[cfg(not(feature = "tls"))]
    #[test]
    fn ssl_without_the_feature_names_it() {
        for proto in ["SSL", "SASL_SSL"] {
            let e = props(&[("security.protocol", proto)]).unwrap_err();
            assert_eq!(e.key(), "security.protocol");
            assert!(e.to_string().contains("`tls` cargo feature"), "{e}");
        }
        let e = ProducerConfig::builder("h:1")
            .tls(TlsConfig::new(Vec::new()))
            .build()
            .unwrap_err();
        assert_eq!(e.key(), "security.protocol");
    }

    #[cfg(feature = "tls")]
    #[test]
    fn ssl_properties_build_a_tls_config() {
        // Fixture certificates (a CA and a client certificate it signed, EC
        // P-256): parsed here, never used in a handshake, so their validity
        // dates do not matter.
        let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/src/fixtures/tls");
        let ca_path = format!("{fixtures}/ca.pem");
        let ca = ca_path.as_str();
        let ca_pem = std::fs::read(ca).unwrap();
        let key = include_str!("fixtures/tls/client.key.pem").to_string();
        let chain = include_str!("fixtures/tls/client.cert.pem").to_string();
        // Without a trust store SSL trusts the system's, as Java does.
        let c = props(&[("security.protocol", "SSL")]).unwrap();
        let tls = c.connection_config().tls.expect("tls");
        assert_eq!(
            tls.trust,
            kafka_client::TrustStore::System {
                mozilla_fallback: false
            }
        );
        let c = props(&[
            ("security.protocol", "SSL"),
            ("ssl.truststore.type", "PEM"),
            ("ssl.truststore.location", ca),
            ("ssl.endpoint.identification.algorithm", ""),
            ("ssl.keystore.type", "PEM"),
            ("ssl.keystore.key", &key),
            ("ssl.keystore.certificate.chain", &chain),
        ])
        .unwrap();
        let tls = c.connection_config().tls.expect("tls");
        assert_eq!(tls.trust, kafka_client::TrustStore::Pem(ca_pem.clone()));
        assert!(!tls.verify_hostname);
        // Values are trimmed, as every property.
        assert_eq!(tls.client_key_pem.as_deref(), Some(key.trim().as_bytes()));
        assert!(c.connection_config().sasl.is_none());
        // Inline trust store; SASL_SSL keeps SASL.
        let pem = String::from_utf8(ca_pem.clone()).unwrap();
        let c = props(&[
            ("security.protocol", "SASL_SSL"),
            ("ssl.truststore.certificates", &pem),
            ("sasl.username", "u"),
            ("sasl.password", "p"),
        ])
        .unwrap();
        let cc = c.connection_config();
        assert!(cc.tls.unwrap().verify_hostname && cc.sasl.is_some());
        // Bad PEM names its key; both trust store forms at once conflict.
        let e = props(&[
            ("security.protocol", "SSL"),
            ("ssl.truststore.certificates", "junk"),
        ])
        .unwrap_err();
        assert_eq!(e.key(), "ssl.truststore.certificates");
        let e = props(&[
            ("ssl.truststore.location", ca),
            ("ssl.truststore.certificates", &pem),
        ])
        .unwrap_err();
        assert_eq!(e.key(), "ssl.truststore.certificates");
        let e = props(&[("ssl.truststore.location", ca), ("ssl.keystore.key", &key)]).unwrap_err();
        assert!(matches!(e, ConfigError::Missing(_)), "{e}");
        // The builder: tls then sasl is SASL_SSL.
        let c = ProducerConfig::builder("h:1")
            .tls(TlsConfig::new(ca_pem.clone()))
            .sasl(SaslMechanism::ScramSha512, "u", "p")
            .build()
            .unwrap();
        assert_eq!(c.security_protocol, SecurityProtocol::SaslSsl);
    }

    /// `acks` goes on the wire as Java writes it: 0, 1 and -1 for `all`.
    #[test]
    fn acks_wire_values_are_javas() {
        assert_eq!(
            [Acks::Zero.wire(), Acks::One.wire(), Acks::All.wire()],
            [0, 1, -1]
        );
    }

    /// `PartitionerChoice::Fixed(i)` builds a partitioner that sends every
    /// record to `i % partitions`, key or not.
    #[test]
    fn a_fixed_choice_builds_index_modulo_partitions() {
        let p = PartitionerChoice::Fixed(4).build();
        assert_eq!(p.partition("orders", Some(b"key"), None, 3), 1);
        assert_eq!(p.partition("orders", None, None, 8), 4);
    }

    /// The connection, cluster and client settings derived from a
    /// configuration carry the builder's values.
    #[test]
    fn derived_settings_carry_the_builders_values() {
        let cfg = ProducerConfig::builder("broker-1:9092,broker-2:9092")
            .client_id("orders-app")
            .request_timeout(Duration::from_secs(10))
            .retry_backoff(Duration::from_millis(250))
            .metadata_max_age(Duration::from_secs(60))
            .build()
            .unwrap();
        let conn = cfg.connection_config();
        assert_eq!(conn.client_id.as_deref(), Some("orders-app"));
        assert_eq!(conn.request_timeout, Duration::from_secs(10));
        assert!(conn.sasl.is_none() && conn.tls.is_none());
        let cluster = cfg.cluster_config();
        assert_eq!(cluster.bootstrap, ["broker-1:9092", "broker-2:9092"]);
        assert_eq!(cluster.metadata_refresh_backoff, Duration::from_millis(250));
        assert_eq!(cluster.metadata_max_age, Duration::from_secs(60));
        assert_eq!(cfg.client_config().client_id, "orders-app");
    }

    /// Connecting waits up to `max.block.ms` for a bootstrap address to
    /// answer, unless `bootstrap.timeout.ms` is set.
    #[test]
    fn bootstrap_waits_max_block_unless_bootstrap_timeout_is_set() {
        let cfg = ProducerConfig::builder("broker-1:9092")
            .max_block(Duration::from_secs(5))
            .build()
            .unwrap();
        assert_eq!(
            cfg.cluster_config().bootstrap_timeout,
            Duration::from_secs(5)
        );
        let cfg = ProducerConfig::builder("broker-1:9092")
            .bootstrap_timeout(Duration::ZERO)
            .build()
            .unwrap();
        assert_eq!(cfg.cluster_config().bootstrap_timeout, Duration::ZERO);
    }

    /// The builder's `sasl` selects `SASL_PLAINTEXT` with credentials.
    #[test]
    fn the_builders_sasl_selects_sasl_plaintext() {
        let cfg = ProducerConfig::builder("broker-1:9092")
            .sasl(SaslMechanism::ScramSha256, "alice", "alice-secret")
            .build()
            .unwrap();
        assert_eq!(cfg.security_protocol, SecurityProtocol::SaslPlaintext);
        assert!(cfg.connection_config().sasl.is_some());
    }

    /// The builder's `tls` selects `SSL`, or without the `tls` cargo
    /// feature fails naming `security.protocol`.
    #[test]
    fn the_builders_tls_selects_ssl_or_names_the_feature() {
        let ca = b"-----BEGIN CERTIFICATE-----\n...".to_vec();
        match ProducerConfig::builder("broker-1:9093")
            .tls(TlsConfig::new(ca))
            .build()
        {
            Ok(cfg) => assert_eq!(cfg.security_protocol, SecurityProtocol::Ssl),
            Err(e) => assert_eq!(e.key(), "security.protocol"),
        }
    }

    /// A builder with no bootstrap address is refused, naming
    /// `bootstrap.servers`.
    #[test]
    fn an_empty_bootstrap_list_is_refused() {
        let err = ProducerConfig::builder("").build().unwrap_err();
        assert_eq!(err.key(), "bootstrap.servers");
    }

    /// A codec this build lacks (its cargo feature off) is refused.
    #[test]
    fn a_codec_this_build_lacks_is_refused() {
        let built = ProducerConfig::builder("broker-1:9092")
            .compression(Compression::Zstd)
            .build();
        assert_eq!(built.is_ok(), Compression::Zstd.is_supported());
    }

    /// No compression level is accepted and then ignored: the level of the
    /// codec in use is kept when its encoder honours it, refused with the
    /// key when not; the other codecs' keys are checked against Java's
    /// ranges only (they do nothing, as in Java).
    #[test]
    fn compression_levels_are_honoured_or_refused() {
        let gzip = props(&[
            ("compression.type", "gzip"),
            ("compression.gzip.level", "1"),
        ])
        .unwrap();
        assert_eq!(gzip.compression_level, Some(1));
        let lz4 = props(&[("compression.type", "lz4"), ("compression.lz4.level", "9")]).unwrap();
        assert_eq!(lz4.compression_level, Some(9));
        let hc =
            props(&[("compression.type", "lz4"), ("compression.lz4.level", "12")]).unwrap_err();
        assert_eq!(hc.key(), "compression.lz4.level");
        assert!(hc.to_string().contains("LZ4 HC"), "{hc}");
        let strong = props(&[
            ("compression.type", "zstd"),
            ("compression.zstd.level", "19"),
        ])
        .unwrap_err();
        assert_eq!(strong.key(), "compression.zstd.level");
        let zero = props(&[
            ("compression.type", "gzip"),
            ("compression.gzip.level", "0"),
        ])
        .unwrap_err();
        assert_eq!(zero.key(), "compression.gzip.level");
        let range = props(&[("compression.lz4.level", "18")]).unwrap_err();
        assert_eq!(range.key(), "compression.lz4.level");
        // Another codec's level does nothing, as in Java.
        let other = props(&[
            ("compression.type", "gzip"),
            ("compression.lz4.level", "12"),
        ])
        .unwrap();
        assert_eq!(other.compression_level, None);
        let built = ProducerConfig::builder("127.0.0.1:9092")
            .compression(Compression::Lz4)
            .compression_level(Some(3))
            .build()
            .unwrap_err();
        assert_eq!(built.key(), "compression.lz4.level");
    }
}
