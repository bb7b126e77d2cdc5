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
//! - [`PreparedTransaction`] with [`commit_prepared`] / [`abort_prepared`]:
//!   finish, from another process, a transaction a crashed one prepared.
//! - [`ProducerConfig`] ([`config`]): Java's property names, validated as
//!   Java validates them; [`partitioner`]: Java's partitioners and the
//!   [`Partitioner`](partitioner::Partitioner) trait for your own;
//!   [`metrics`]: counters and latencies ([`MetricsSnapshot`]).
//! - [`TransactionError`] ([`txn`]): what to do next — retry, abort, or
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

use kafka_client::internal_mod;

internal_mod!(accumulator);
pub mod compression_ratio;
pub mod config;
mod fast_hash;
mod hooks;
internal_mod!(idempotence);
pub mod metrics;
pub mod partitioner;
mod producer;
pub mod record;
internal_mod!(sender);
pub mod transactional;
pub mod txn;

#[cfg(test)]
mod tests;

use kafka_client::{Cluster, ClusterError, Connection};

pub use config::{Acks, ConfigError, PartitionerChoice, ProducerConfig, ProducerConfigBuilder};
pub use kafka_client::{self, TopicPartition};
pub use kafka_proto;
pub use metrics::MetricsSnapshot;
pub use producer::Producer;
pub use record::{ProduceError, ProducerRecord, RecordMetadata};
pub use transactional::{ConnectError, TransactionalProducer};
// The send path's hooks, implemented by the transactional producer.
kafka_client::internal_use!(hooks::SendHooks);
pub use txn::{
    PreparedTransaction, ResumeOptions, ResumeOutcome, TransactionError, abort_prepared,
    commit_prepared,
};
