//! # kafka-producer
//!
//! The idempotent and transactional Kafka producer of kafka-eos, with the
//! Java client's semantics (KIP-98, KIP-360, KIP-588, KIP-890 / transaction
//! version 2), and the resume of a prepared transaction after a crash.
//! Most applications use it through the `kafka-eos` crate's `producer`
//! module.
//!
//! - [`Producer`]: the idempotent (or plain) producer. `send` fixes a
//!   record's place when called; the returned future yields its
//!   [`RecordMetadata`] or a [`ProduceError`].
//! - [`TransactionalProducer`]: transactions (`begin` / `commit` / `abort`),
//!   offsets committed in a transaction for exactly-once
//!   consume-transform-produce (KIP-447), and
//!   [`prepare_transaction`](TransactionalProducer::prepare_transaction)
//!   for a two-phase commit.
//! - [`txn::PreparedTransaction`] with [`txn::commit_prepared`] / [`txn::abort_prepared`]:
//!   finish, from another process, a transaction a crashed one prepared.
//! - [`ProducerConfig`]: Java's property names, validated as
//!   Java validates them; [`partitioner`]: Java's partitioners and the
//!   [`Partitioner`](partitioner::Partitioner) trait for your own;
//!   [`metrics`]: counters and latencies ([`MetricsSnapshot`](metrics::MetricsSnapshot)).
//! - [`txn::TransactionError`]: what to do next — retry, abort, or
//!   close the producer.
//!
//! The machinery under them — the record accumulator, the sender, the
//! idempotence and transaction state machines — is private; the
//! `internals` cargo feature opens it to kafka-eos's own tests and benches
//! and is not a supported API.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! use kafka_producer::{Producer, ProducerConfig, ProducerRecord};
//! let config = ProducerConfig::from_properties([("bootstrap.servers", "127.0.0.1:9092")])?;
//! let producer = Producer::connect(config).await?;
//! let metadata = producer.send(ProducerRecord::new("orders").key("k").value("v")).await?;
//! println!("written at offset {:?}", metadata.offset);
//! producer.close(std::time::Duration::from_secs(10)).await?;
//! # Ok(()) }
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[cfg_attr(not(feature = "internals"), allow(dead_code))]
mod accumulator;
#[cfg_attr(not(feature = "internals"), allow(dead_code))]
mod compression_ratio;
mod fast_hash;
mod hooks;
#[cfg_attr(not(feature = "internals"), allow(dead_code))]
mod idempotence;
#[cfg_attr(not(feature = "internals"), allow(dead_code))]
mod sender;

#[cfg(test)]
mod tests;

use kafka_client::{Cluster, ClusterError, Connection};

// The public interface is:
mod config;
pub use config::{
    Acks, ConfigError, DEFAULT_BATCH_MAX_SIZE, PartitionerChoice, ProducerConfig,
    ProducerConfigBuilder,
};
mod producer;
pub use producer::Producer;
mod record;
pub use record::{ProduceError, ProducerRecord, RecordMetadata};
mod transactional;
pub use kafka_client::{self, TopicPartition};
pub use kafka_proto;
pub use transactional::{ConnectError, TransactionalProducer};
// Namespaces: the producer's metrics and their names, the partitioners, the
// transactions (errors, prepared transactions and their resume).
pub mod metrics;
pub mod partitioner;
pub mod txn;

/// The producer's sans-IO machinery (the accumulator, the idempotence
/// state machine, the sender, the transaction manager and its driver), for
/// kafka-eos's own tests and benchmarks: not a stable API.
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod internals {
    /// The record accumulator.
    pub mod accumulator {
        pub use crate::accumulator::*;
    }
    /// Java's compression-ratio estimate.
    pub mod compression_ratio {
        pub use crate::compression_ratio::*;
    }
    /// The idempotence state machine.
    pub mod idempotence {
        pub use crate::idempotence::*;
    }
    pub use crate::hooks::SendHooks;
    pub use crate::txn::internals::*;
}
