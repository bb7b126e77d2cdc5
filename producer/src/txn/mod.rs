//! The transactional layer: exactly-once Kafka with the Java client's
//! semantics (KIP-98, KIP-360, KIP-588, KIP-890) and resume of a prepared
//! transaction after a crash.
//!
//! - [`TransactionError`] and [`ErrorClass`]: what a failed transactional
//!   call means and what to do next (retry, abort, close); [`State`]: where
//!   the producer's transaction is; [`TransactionVersion`]: the protocol the
//!   cluster finalized (KIP-890).
//! - [`PreparedTransaction`] (a stable byte encoding) and
//!   [`commit_prepared`] / [`abort_prepared`], which finish a transaction of a
//!   crashed process without InitProducerId.
//!
//! Under [`TransactionalProducer`](crate::TransactionalProducer) run the
//! transaction manager (a sans-IO state machine: states, the coordinator
//! request queue, the per-API error table, epoch bumps, TV1 and TV2) and its
//! tokio driver against the coordinator; both are private (the `internals`
//! cargo feature opens them to kafka-eos's own tests).
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use kafka_producer::txn::{commit_prepared, PreparedTransaction, ResumeOptions, ResumeOutcome};
//! use kafka_client::{Cluster, ClusterConfig};
//! let cluster = Cluster::connect(ClusterConfig::new("127.0.0.1:9092")).await?;
//! let bytes: Vec<u8> = std::fs::read("checkpoint/txn")?;
//! let prepared = PreparedTransaction::decode(&bytes)?;
//! match commit_prepared(&cluster, &prepared, &ResumeOptions::default()).await? {
//!     ResumeOutcome::Committed | ResumeOutcome::AlreadyCommitted => {}
//!     ResumeOutcome::AbortedByBroker { .. } => eprintln!("DATA LOST: the transaction timed out"),
//!     other => eprintln!("cannot know the outcome: {other:?}"),
//! }
//! # Ok(()) }
//! ```

// Without `internals`, parts of the machinery only its tests use.
#[cfg_attr(not(feature = "internals"), allow(dead_code))]
mod driver;
mod error;
#[cfg_attr(not(feature = "internals"), allow(dead_code))]
mod interface;
#[cfg_attr(not(feature = "internals"), allow(dead_code))]
mod manager;
mod prepared;
#[cfg(test)]
mod tests;

pub use error::{ErrorClass, NotPreparableReason, TransactionError, TxnApi, TxnOp};
// The client's types that appear in this module's signatures.
use kafka_client::{CoordinatorType, find_coordinator};
pub use kafka_client::{
    GroupMetadata, OffsetAndMetadata, ProducerIdAndEpoch, RequestError, TransactionState,
};
// The transaction manager's state machine and its driver: the
// transactional producer's machinery, public only through the crate's
// `internals`.
#[allow(unused_imports)]
pub(crate) use driver::TxnDriver;
#[allow(unused_imports)]
pub(crate) use error::classify;
#[allow(unused_imports)]
pub(crate) use interface::{
    ADD_PARTITIONS_RETRY_BACKOFF, CoordinatorRequest, CoordinatorResponse, OpTicket, Priority,
    RequestBody, Target, TxnConfig, TxnEvent,
};
pub(crate) use manager::TransactionManager;

/// What the crate's `internals` re-exports of this module.
#[cfg(feature = "internals")]
pub(crate) mod internals {
    pub use super::State;
    pub use super::driver::TxnDriver;
    pub use super::error::classify;
    pub use super::interface::{
        ADD_PARTITIONS_RETRY_BACKOFF, CoordinatorRequest, CoordinatorResponse, OpTicket, Priority,
        RequestBody, Target, TxnConfig, TxnEvent,
    };
    pub use super::manager::TransactionManager;
    pub use super::prepared::{ResumeStep, resume_step};
}
pub use prepared::{
    PreparedDecodeError, PreparedTransaction, ResumeError, ResumeOptions, ResumeOutcome,
    abort_prepared, commit_prepared,
};

/// A state of the [`TransactionManager`] (Java `TransactionManager.State`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    /// No producer id yet.
    Uninitialized,
    /// InitProducerId in progress (first init or epoch bump).
    Initializing,
    /// A producer id; no transaction open.
    Ready,
    /// A transaction is open.
    InTransaction,
    /// A prepared transaction (pre-committed, or resumed from another process).
    PreparedTransaction,
    /// EndTxn(commit) in progress.
    CommittingTransaction,
    /// EndTxn(abort) in progress.
    AbortingTransaction,
    /// The transaction must be aborted.
    AbortableError,
    /// The producer cannot continue (terminal).
    FatalError,
}

impl State {
    /// Every state, for table-driven tests.
    pub const ALL: [State; 9] = [
        State::Uninitialized,
        State::Initializing,
        State::Ready,
        State::InTransaction,
        State::PreparedTransaction,
        State::CommittingTransaction,
        State::AbortingTransaction,
        State::AbortableError,
        State::FatalError,
    ];
}

/// The transaction protocol version (KIP-890).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TransactionVersion {
    /// TV0/TV1: AddPartitionsToTxn, AddOffsetsToTxn, EndTxn <= v4, client-side epoch bumps.
    V1,
    /// TV2: implicit partition registration, EndTxn v5 bumps the epoch per transaction.
    V2,
}

impl TransactionVersion {
    /// From a finalized `transaction.version` level (>= 2 is TV2).
    pub fn from_level(level: i16) -> Self {
        if level >= 2 {
            TransactionVersion::V2
        } else {
            TransactionVersion::V1
        }
    }

    /// The highest EndTxn version of this transaction version (4 or 5).
    pub fn end_txn_max_version(self) -> i16 {
        match self {
            TransactionVersion::V1 => 4,
            TransactionVersion::V2 => 5,
        }
    }
}
