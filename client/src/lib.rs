//! # kafka-client
//!
//! The connection and cluster layer every kafka-eos client stands on: the
//! producers (`kafka-producer`), the consumers (`kafka-consumer`) and the
//! admin functions (`kafka-admin`). Most applications use it through the
//! `kafka-eos` crate's `client` module, for the [`Cluster`] the admin
//! functions take and the settings every client shares.
//!
//! - [`ClientConfig`], read from [`Properties`]: `bootstrap.servers`, `client.id`,
//!   timeouts, `security.protocol`, `sasl.*` and `ssl.*` under the Java
//!   client's property names.
//! - [`Connection`]: one broker connection with pipelined requests matched
//!   by correlation id, per-request timeouts, ApiVersions negotiation
//!   (with the UNSUPPORTED_VERSION fallback), SASL (PLAIN, SCRAM-SHA-256/512)
//!   and TLS (cargo feature `tls`).
//! - [`BrokerVersions`]: sans-IO version negotiation.
//! - [`SaslConfig`]: SASL PLAIN and SCRAM (a sans-IO RFC 5802/7677 client),
//!   and OAUTHBEARER with tokens from a [`oauth::TokenProvider`] (OIDC
//!   client credentials, KIP-768, built in); connections re-authenticate
//!   before the session the broker granted ends (KIP-368).
//! - [`ConnectionPool`] / [`BrokerConnection`]: lazy per-node connections with
//!   exponential reconnect backoff and jitter ([`ExponentialBackoff`]).
//! - [`Cluster`]: bootstrap, metadata refresh, leaders; its bookkeeping is the
//!   plain [`ClusterMetadata`] struct.
//! - [`find_coordinator`]: FindCoordinator for a group or a transactional id.
//! - [`requests`]: one round trip per request that several clients send
//!   (DescribeConfigs, DescribeTransactions, OffsetFetch), each version
//!   shape handled once.
//! - [`metrics`]: what the producer's and the consumer's metrics are built
//!   from (errors by code, round-trip latencies, the `metrics` facade).
//! - The types every client shares: [`TopicPartition`],
//!   [`ProducerIdAndEpoch`], [`GroupMetadata`] and [`OffsetAndMetadata`]
//!   (what a consumer hands a transactional producer, KIP-447),
//!   [`TransactionState`], and the errors [`ConnError`], [`ClusterError`],
//!   [`RequestError`] and [`ConfigError`].
//!
//! Protocol logic is deterministic and IO-free where it can be; tokio appears
//! only in the drivers ([`Connection`], [`ConnectionPool`], [`Cluster`]).
//!
//! ```no_run
//! # async fn demo() -> Result<(), kafka_client::ClusterError> {
//! use kafka_client::{Cluster, ClusterConfig, SaslConfig};
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

mod group_offsets;
mod producer_id;
mod topic_partition;
mod transaction_state;

#[cfg(test)]
mod tests;

// The public interface is:
mod backoff;
pub use backoff::ExponentialBackoff;
mod cluster;
pub use cluster::{Cluster, ClusterConfig, TopicSelection};
mod config;
pub use config::{ClientConfig, ConfigError, Properties, Secret, SecurityProtocol};
mod connection;
pub use connection::{Connection, ConnectionConfig, KeyStoreError, TlsConfig, TrustStore};
mod coordinator;
#[allow(deprecated)]
pub use coordinator::CoordinatorError;
pub use coordinator::{
    CoordinatorAnswer, CoordinatorConnection, CoordinatorType, find_coordinator,
    find_coordinator_on,
};
mod error;
pub use error::{ClusterError, ConnError, RequestError};
pub mod http;
pub use group_offsets::{GroupMetadata, OffsetAndMetadata};
pub use kafka_proto;
mod metadata;
pub mod metrics;
pub mod oauth;
pub use metadata::{
    BrokerInfo, ClusterMetadata, DEFAULT_METADATA_MAX_AGE, MetadataUpdate, PartitionMetadata,
    TopicMetadata,
};
mod msk_iam;
pub use msk_iam::{AwsCredentials, MSK_TOKEN_LIFETIME, MskAuthToken, MskIamError, MskIamSigner};
mod pool;
pub use pool::{BrokerConnection, ConnectionPool};
pub use producer_id::ProducerIdAndEpoch;
mod sasl;
pub use sasl::{SaslConfig, SaslMechanism, ScramError};
pub use topic_partition::TopicPartition;
pub use transaction_state::TransactionState;
mod versions;
pub use versions::BrokerVersions;
#[cfg(any(test, feature = "internals"))]
pub mod internals;
pub mod requests;
