//! How a mock cluster is set up.

use std::time::Duration;

/// The transaction protocol the cluster has finalized (the
/// `transaction.version` feature).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TransactionVersion {
    /// KIP-98 transactions: AddPartitionsToTxn, epoch bumped only by
    /// InitProducerId.
    V1,
    /// KIP-890: partitions added by Produce v12+, the epoch bumped at every
    /// EndTxn (v5). Kafka 4.x's default.
    #[default]
    V2,
}

/// Which Kafka release's API versions the brokers advertise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KafkaRelease {
    /// Kafka 3.9: Produce up to v11, EndTxn up to v4, no
    /// `transaction.version` feature (transactions are version 1).
    V3_9,
    /// Kafka 4.4.
    #[default]
    V4_4,
}

/// The settings of a [`MockCluster`](crate::MockCluster).
///
/// ```
/// use kafka_mock::{MockConfig, TransactionVersion};
/// let config = MockConfig {
///     brokers: 3,
///     transaction_version: TransactionVersion::V1,
///     ..MockConfig::default()
/// };
/// assert_eq!(config.brokers, 3);
/// ```
#[derive(Debug, Clone)]
pub struct MockConfig {
    /// How many brokers (node ids 1..=brokers).
    pub brokers: usize,
    /// The advertised API versions.
    pub release: KafkaRelease,
    /// The finalized transaction version (ignored for Kafka 3.9: version 1).
    pub transaction_version: TransactionVersion,
    /// Create a topic on first use by Metadata or Produce
    /// (`auto.create.topics.enable`, true in Kafka).
    pub auto_create_topics: bool,
    /// Partitions of an automatically created topic (`num.partitions`).
    pub default_partitions: i32,
    /// The largest transaction timeout a producer may ask for
    /// (`transaction.max.timeout.ms`, 15 minutes in Kafka).
    pub max_transaction_timeout_ms: i64,
    /// How long after EndTxn the transaction markers are written; the
    /// producer gets CONCURRENT_TRANSACTIONS meanwhile, as from a real
    /// coordinator whose markers are in flight. Zero writes them at once.
    pub marker_delay: Duration,
    /// Seeds the topic ids and the seeded fault modes.
    pub seed: u64,
    /// The cluster id in Metadata.
    pub cluster_id: String,
    /// How long a KIP-848 consumer group member may stay silent before it
    /// is removed (`group.consumer.session.timeout.ms`, 45 s in Kafka).
    pub consumer_group_session_timeout: Duration,
    /// The heartbeat interval KIP-848 members are told
    /// (`group.consumer.heartbeat.interval.ms`, 5 s in Kafka).
    pub consumer_group_heartbeat_interval: Duration,
    /// Run with an authorizer (`authorizer.class.name` set to Kafka's
    /// `StandardAuthorizer`, every principal a super user): CreateAcls,
    /// DescribeAcls and DeleteAcls store and select ACL bindings, while
    /// every request stays allowed. False, Kafka's default: the ACL APIs
    /// answer SECURITY_DISABLED.
    pub acl_authorizer: bool,
}

impl Default for MockConfig {
    fn default() -> Self {
        Self {
            brokers: 1,
            release: KafkaRelease::V4_4,
            transaction_version: TransactionVersion::V2,
            auto_create_topics: true,
            default_partitions: 1,
            max_transaction_timeout_ms: 900_000,
            marker_delay: Duration::ZERO,
            seed: 0,
            cluster_id: "kafka-mock".into(),
            consumer_group_session_timeout: Duration::from_secs(45),
            consumer_group_heartbeat_interval: Duration::from_secs(5),
            acl_authorizer: false,
        }
    }
}

impl MockConfig {
    /// The transaction version in effect.
    pub fn effective_transaction_version(&self) -> TransactionVersion {
        match self.release {
            KafkaRelease::V3_9 => TransactionVersion::V1,
            KafkaRelease::V4_4 => self.transaction_version,
        }
    }
}
