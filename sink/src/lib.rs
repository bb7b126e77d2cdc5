//! # kafka-sink
//!
//! Flink's two-phase-commit sink semantics for Rust.
//!
//! - [`two_phase`]: [`TwoPhaseCommitSink`] runs the checkpoint protocol of
//!   Flink's `TwoPhaseCommitSinkFunction` around a user
//!   [`TwoPhaseCommitHandler`] (begin, invoke, pre-commit, commit, abort,
//!   recovery hooks, user context), with pending transactions in checkpoint
//!   order, subsuming notifications, commit failures collected until every
//!   commit was attempted, a type of its own for pre-committed transactions
//!   ([`PreCommitted`]) and transaction-timeout warnings;
//!   [`InMemoryTable`](two_phase::memory::InMemoryTable) is a complete
//!   in-memory handler for examples and for testing pipelines.
//! - [`state`]: [`SinkState`](state::SinkState) and its versioned binary
//!   [`StateSerializer`](state::StateSerializer); [`codec`]: codecs for the
//!   user's transaction and context types.
//! - [`checkpoint`]: a small single-process checkpoint driver with durable,
//!   checksummed checkpoint files, for running the lifecycle without a host
//!   engine.
//! - [`clock`]: wall-clock time behind a trait, for deterministic tests.
//!
//! - [`kafka`]: the Kafka sink (EXACTLY_ONCE / AT_LEAST_ONCE / NONE) on the
//!   transactional producer, with Flink's transactional-id pool.
//! - [`pipeline`]: exactly-once Kafka → transform → Kafka on a consumer
//!   group, the input offsets committed in the output transaction (the
//!   Kafka Streams EOS-v2 model), and the RabbitMQ → Kafka bridge (feature
//!   `rabbitmq`).
//!
//! ```
//! use kafka_sink::{TwoPhaseCommitSink, TwoPhaseCommitHandler};
//! use kafka_sink::clock::ManualClock;
//! use std::{sync::Arc, time::Duration};
//!
//! fn configure<H: TwoPhaseCommitHandler>(handler: H, clock: ManualClock) -> TwoPhaseCommitSink<H> {
//!     let mut sink = TwoPhaseCommitSink::new(handler).with_clock(Arc::new(clock));
//!     sink.set_transaction_timeout(Duration::from_secs(900))
//!         .enable_transaction_timeout_warnings(0.8)
//!         .ignore_failures_after_transaction_timeout();
//!     sink
//! }
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod checkpoint;
pub mod clock;
pub mod codec;
pub mod kafka;
pub mod pipeline;
pub mod source;
pub mod state;
pub mod two_phase;

pub use checkpoint::{
    CheckpointCoordinator, CheckpointError, CheckpointStorage, CheckpointedOperator, OperatorInfo,
    RestoredState,
};
pub use clock::{Clock, ManualClock, SystemClock};
pub use pipeline::consume_transform_produce::{
    ConsumeTransformProduce, MAX_PRODUCER_RESTARTS, PipelineConfig, PipelineError, PipelineStats,
};
#[cfg(feature = "rabbitmq")]
pub use pipeline::rabbitmq_bridge::{
    Bridge, BridgeConfig, BridgeError, BridgeEvent, BridgeReport, BridgeStats,
};
pub use two_phase::{
    CheckpointedSink, CommitOutcome, DEFAULT_TIMEOUT_WARNING_RATIO, LostTransaction, Operation,
    PreCommitted, RecordContext, SinkMetrics, TransactionFailure, TwoPhaseCommitError,
    TwoPhaseCommitHandler, TwoPhaseCommitSink,
};
