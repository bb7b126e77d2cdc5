//! # kafka-sink
//!
//! Flink's two-phase-commit sink semantics for Rust.
//!
//! - The two-phase-commit layer: [`TwoPhaseCommitSink`] runs the checkpoint protocol of
//!   Flink's `TwoPhaseCommitSinkFunction` around a user
//!   [`TwoPhaseCommitHandler`] (begin, invoke, pre-commit, commit, abort,
//!   recovery hooks, user context), with pending transactions in checkpoint
//!   order, subsuming notifications, commit failures collected until every
//!   commit was attempted, a type of its own for pre-committed transactions
//!   ([`PreCommitted`]) and transaction-timeout warnings;
//!   [`InMemoryTable`] is a complete
//!   in-memory handler for examples and for testing pipelines.
//! - The sink's state: [`SinkState`] and its versioned binary
//!   [`StateSerializer`]; [`codec`]: codecs for the
//!   user's transaction and context types.
//! - Checkpoints: [`CheckpointCoordinator`], a small single-process checkpoint driver with durable,
//!   checksummed checkpoint files, for running the lifecycle without a host
//!   engine.
//! - [`Clock`]: wall-clock time behind a trait, for deterministic tests.
//! - [`kafka`]: the Kafka sink (EXACTLY_ONCE / AT_LEAST_ONCE / NONE) on the
//!   transactional producer, with Flink's transactional-id pool.
//! - [`pipeline`]: exactly-once Kafka → transform → Kafka on a consumer
//!   group, the input offsets committed in the output transaction (the
//!   Kafka Streams EOS-v2 model), and the RabbitMQ → Kafka bridge (feature
//!   `rabbitmq`).
//!
//! The protocol, with the crate's in-memory handler standing in for an
//! external system:
//!
//! ```
//! use kafka_sink::codec::{U64Codec, UnitCodec};
//! use kafka_sink::StateSerializer;
//! use kafka_sink::InMemoryTable;
//! use kafka_sink::{RecordContext, TwoPhaseCommitSink};
//! use std::time::Duration;
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! // The codecs of the handler's transaction handle (u64) and context (none).
//! let serializer = StateSerializer::new(U64Codec, UnitCodec);
//! let mut sink = TwoPhaseCommitSink::new(InMemoryTable::new());
//! sink.set_transaction_timeout(Duration::from_secs(900)); // the external system's
//! sink.initialize_state(None).await?; // a fresh start: begins a transaction
//! sink.invoke("row-1", &RecordContext::default()).await?;
//! // Checkpoint 1: pre-commit, then store `state` durably with the checkpoint.
//! let state = serializer.encode(sink.snapshot_state(1).await?);
//! // Checkpoint 1 is durable everywhere: commit.
//! sink.notify_checkpoint_complete(1).await?;
//! assert_eq!(sink.handler().committed(), ["row-1"]);
//! # let _ = state;
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

// The public interface is:
mod checkpoint;
pub use checkpoint::{
    Checkpoint, CheckpointCoordinator, CheckpointError, CheckpointFileError, CheckpointStorage,
    CheckpointedOperator, DEFAULT_RETAINED_CHECKPOINTS, OperatorError, OperatorInfo,
    OperatorSnapshot, RestoredState, SourcePosition,
};
mod clock;
pub use clock::{Clock, ManualClock, SystemClock};
mod state;
pub use state::{SinkState, SinkStateRef, StateSerializer, TransactionHolder};
mod two_phase;
pub use two_phase::{
    CheckpointedSink, CommitOutcome, DEFAULT_TIMEOUT_WARNING_RATIO, InMemoryError, InMemoryTable,
    LostTransaction, Operation, PreCommitted, RecordContext, SinkMetrics, TransactionFailure,
    TwoPhaseCommitError, TwoPhaseCommitHandler, TwoPhaseCommitSink, TxnStatus,
};
// Namespaces: the state codecs, the Kafka sink, the sources, the pipelines.
pub mod codec;
pub mod kafka;
pub mod pipeline;
pub mod source;
