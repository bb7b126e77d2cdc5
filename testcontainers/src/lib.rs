//! # kafka-testcontainers
//!
//! A Docker-free test harness for the kafka-eos workspace:
//!
//! - [`KafkaCluster`]: real Apache Kafka brokers (KRaft, combined broker +
//!   controller nodes) run from the Maven Central jars on loopback ports, with
//!   1 or 3 nodes, Kafka 4.4 (transaction version 1 or 2) or 3.9, optional
//!   SASL (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512), optional TLS ([`tls`]) and
//!   optional fault proxies.
//! - [`Proxy`]: a TCP proxy that injects latency, resets, black holes, pauses,
//!   dropped response frames and corrupted bytes.
//! - [`console_consume`], [`producer_performance`]: the Java reference tools (console consumer, producer
//!   performance, topic creation) run against a cluster.
//! - [`ClusterSlot`]: one cluster handed from test to test, for the tests that
//!   need a cluster of their own, one at a time.
//! - [`RabbitMq`]: a private RabbitMQ broker.
//! - [`wire`]: a tiny async Kafka client (one request, one response) built on
//!   the `kafka-proto` codec, used for readiness checks and in tests.
//!
//! Every process the harness starts is tied to the test process: it is killed
//! on drop, on panic, and (through `PR_SET_PDEATHSIG`) when the test binary
//! itself is killed.
//!
//! ```no_run
//! # async fn demo() -> Result<(), kafka_testcontainers::HarnessError> {
//! use kafka_testcontainers::{KafkaCluster, KafkaVersion};
//! let cluster = KafkaCluster::builder()
//!     .version(KafkaVersion::V4_4)
//!     .nodes(1)
//!     .start()
//!     .await?;
//! cluster.create_topic("events", 3, 1).await?;
//! println!("bootstrap: {}", cluster.bootstrap());
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

mod class_archive;
mod error;
mod java;
mod java_source;
mod process;
mod runtime;
mod scratch;
mod storage_template;

// The public interface is:
mod cluster;
pub use cluster::{
    DEFAULT_STARTUP_TIMEOUT, KafkaCluster, KafkaClusterBuilder, SaslConfig, SaslMechanism, SaslUser,
};
mod dist;
pub use dist::{
    Distribution, KAFKA_3_9, KAFKA_4_4, KafkaVersion, cache_dir, ensure_distribution, fetch_script,
};
pub use error::HarnessError;
mod proxy;
pub use proxy::{Direction, Proxy, ProxyHandle};
mod rabbitmq;
mod schema_registry;
pub use rabbitmq::{RABBITMQ_STARTUP_TIMEOUT, RabbitMq};

pub use schema_registry::{
    APICURIO_VERSION, SCHEMA_REGISTRY_STARTUP_TIMEOUT, SHARED_REGISTRY_ENV, SchemaRegistry,
    confluent_python,
};
mod seeded;
pub use seeded::{SeededRng, fresh_seed, schedule_seeds};
mod shared;
pub use shared::{SHARED_KAFKA_ENV, SharedKafka, recent_timestamp, unique_name, unique_topic};
mod slot;
pub use slot::{ClusterSlot, SlotGuard};
mod tools;
pub use tools::{
    ConsumedRecord, IsolationLevel, ProducerPerfArgs, ProducerPerfSummary, ToolOutput,
    console_consume, parse_console_output, parse_perf_summary, producer_performance,
};
// Namespaces: test certificates, and a raw Kafka connection for probes.
pub mod oauth;
pub mod tls;
pub mod wire;

/// Result alias used throughout the harness.
pub type Result<T, E = HarnessError> = std::result::Result<T, E>;

/// Removes the scratch directories (clusters, shared clusters, RabbitMQ
/// brokers) that processes now gone left in the system temporary
/// directory. Dropping a cluster or broker removes its directory, and the
/// JVMs and brokers die with the process that started them, but one kept
/// in a static is never dropped: a test that keeps one there calls this
/// before starting it ([`RabbitMq::shared`], the shared clusters and
/// [`slot::ClusterSlot`] do).
pub fn remove_orphaned_scratch_dirs() {
    let temp = std::env::temp_dir();
    for prefix in [
        cluster::PRIVATE_DIR_PREFIX,
        shared::IN_PROCESS_DIR_PREFIX,
        rabbitmq::RABBITMQ_DIR_PREFIX,
        schema_registry::REGISTRY_DIR_PREFIX,
    ] {
        scratch::ScratchDir::remove_orphans(&temp, prefix);
    }
}
