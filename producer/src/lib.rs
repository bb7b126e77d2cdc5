//! # kafka-producer
//!
//! The async connection and cluster layer of the kafka-eos producer; the
//! batching idempotent/transactional producer builds on it.
//!
//! - [`Connection`]: one broker connection with pipelined requests matched
//!   by correlation id, per-request timeouts, ApiVersions negotiation
//!   (with the UNSUPPORTED_VERSION fallback) and SASL (PLAIN, SCRAM-SHA-256/512).
//! - [`versions`]: sans-IO version negotiation ([`BrokerVersions`]).
//! - [`sasl`]: sans-IO SASL mechanisms, the RFC 5802/7677 SCRAM client.
//! - [`ConnectionPool`] / [`BrokerConnection`]: lazy per-node connections with
//!   exponential reconnect backoff and jitter ([`ExponentialBackoff`]).
//! - [`Cluster`]: bootstrap, metadata refresh, leaders; its bookkeeping is the
//!   plain [`ClusterMetadata`] struct.
//!
//! Protocol logic is deterministic and IO-free where it can be; tokio appears
//! only in the drivers ([`Connection`], [`ConnectionPool`], [`Cluster`]).
//!
//! ```no_run
//! # async fn demo() -> Result<(), kafka_producer::ClusterError> {
//! use kafka_producer::{Cluster, ClusterConfig, SaslConfig};
//! let mut config = ClusterConfig::new("127.0.0.1:9092");
//! config.connection.sasl = Some(SaslConfig::scram_sha512("alice", "alice-secret"));
//! let cluster = Cluster::connect(config).await?;
//! let _refresher = cluster.spawn_metadata_refresher();
//! cluster.refresh_topics(&["orders"]).await?;
//! let (leader, conn) = cluster.leader_connection("orders", 0).await?;
//! println!("orders-0 leader {leader}: Produce v{:?}", conn.negotiated_version(kafka_proto::ApiKey::Produce));
//! # Ok(()) }
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod accumulator;
pub mod admin;
pub mod backoff;
pub mod cluster;
pub mod config;
pub mod connection;
pub mod error;
mod fast_hash;
pub mod group;
pub mod idempotence;
pub mod metadata;
pub mod metrics;
pub mod partitioner;
pub mod pool;
pub mod producer;
pub mod reader;
pub mod record;
pub mod sasl;
pub mod sender;
pub mod txn;
pub mod versions;

pub use backoff::ExponentialBackoff;
pub use cluster::{Cluster, ClusterConfig, TopicSelection};
pub use config::{Acks, ConfigError, PartitionerChoice, ProducerConfig, ProducerConfigBuilder};
pub use connection::{Connection, ConnectionConfig};
pub use error::{ClusterError, ConnError};
pub use kafka_proto;
pub use metadata::{
    BrokerInfo, ClusterMetadata, DEFAULT_METADATA_MAX_AGE, MetadataUpdate, PartitionMetadata,
    TopicMetadata,
};
pub use metrics::MetricsSnapshot;
pub use pool::{BrokerConnection, ConnectionPool};
pub use producer::Producer;
pub use record::{ProduceError, ProducerRecord, RecordMetadata, TopicPartition};
pub use sasl::{SaslConfig, SaslMechanism};
pub use versions::BrokerVersions;
#[cfg(test)]
mod ordering_peer_tests;
#[cfg(test)]
mod peer_tests;
#[cfg(test)]
mod saturation_peer_tests;
pub use txn::{
    CoordinatorClient, PreparedTransaction, ResumeOutcome, TransactionError, TransactionManager,
    abort_prepared, commit_prepared,
};
pub mod transactional;
pub use transactional::{ConsumerGroupMetadata, TransactionalProducer};
