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
//! [`prepare_transaction`](kafka_producer::TransactionalProducer::prepare_transaction) (flush,
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
//!
//! [`TransactionalProducer`]: kafka_producer::TransactionalProducer
//! [`PreparedTransaction`]: kafka_producer::txn::PreparedTransaction
//! [`commit_prepared`]: kafka_producer::txn::commit_prepared
//! [`TwoPhaseCommitHandler`]: crate::two_phase::TwoPhaseCommitHandler
//! [`CheckpointedOperator`]: crate::checkpoint::CheckpointedOperator

// One concern per file; everything public is re-exported below, so every
// item is used as `kafka_sink::kafka::Name`.

// Options, property parsing and defaults (KafkaSinkConfig, Semantic, SinkPartitioner).
mod config;
// The sink's error type.
mod error;
// The two-phase-commit handler: producer pool, sends, pre-commit, commit, abort.
mod handler;
// The checkpointed operator (KafkaSink) around the handler.
mod operator;
// Finishing or aborting transactions that earlier processes left behind.
mod recovery;
// Turning inputs into records: KafkaSinkRecord and the serialization schemas.
mod schema;
// The operator state format: sink state and next-free-id hint.
mod state;
// The transaction handle (KafkaTransaction) and its codec.
mod transaction;
// Transactional id allocation (TransactionalIdsGenerator, NextTransactionalIdHint).
mod transactional_id;

pub use config::{
    DEFAULT_KAFKA_PRODUCERS_POOL_SIZE, DEFAULT_KAFKA_TRANSACTION_TIMEOUT, KEY_DISABLE_METRICS,
    KafkaSinkConfig, MAX_TASK_NAME_LENGTH, Semantic, SinkPartitioner,
};
pub use error::KafkaSinkError;
pub use handler::KafkaSinkHandler;
pub use operator::{KafkaSink, check_transaction_timeout};
pub use schema::{
    AsyncKafkaSerializationSchema, KafkaSerializationSchema, KafkaSinkRecord, Keyed,
    KeyedSerializationSchema, SerializationError, SerializationSchema, SerializeFuture,
    SimpleStringSchema, ValueOnly,
};
pub use transaction::{KafkaTransaction, KafkaTransactionCodec};
pub use transactional_id::{
    NextTransactionalIdHint, SAFE_SCALE_DOWN_FACTOR, TransactionalIdsGenerator,
};
