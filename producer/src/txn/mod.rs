//! The transactional layer: exactly-once Kafka with the Java client's
//! semantics (KIP-98, KIP-360, KIP-588, KIP-890) and resume of a prepared
//! transaction after a crash.
//!
//! - [`TransactionManager`]: the sans-IO state machine (states, coordinator
//!   request queue, error classification, epoch bumps, TV1/TV2).
//! - [`CoordinatorClient`]: the tokio driver executing its coordinator
//!   requests against a [`crate::Cluster`].
//! - [`prepared`]: [`PreparedTransaction`] (a stable byte encoding) and
//!   [`commit_prepared`] / [`abort_prepared`], which finish a transaction of a
//!   crashed process without InitProducerId.
//! - [`classify`]: the per-API error table; [`TransactionError`]: what the
//!   user matches on.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use kafka_producer::txn::{commit_prepared, PreparedTransaction, ResumeOptions, ResumeOutcome};
//! use kafka_producer::{Cluster, ClusterConfig};
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

mod client;
mod error;
mod manager;
#[cfg(test)]
mod peer_tests;
pub mod prepared;
#[cfg(test)]
mod tests;

pub use crate::idempotence::ProducerIdAndEpoch;
pub use client::{CoordinatorClient, CoordinatorConnection, CoordinatorError, find_coordinator};
pub use error::{ErrorClass, NotPreparableReason, TransactionError, TxnApi, TxnOp, classify};
pub use manager::{
    ADD_PARTITIONS_RETRY_BACKOFF, CoordinatorRequest, CoordinatorResponse, OpTicket, Priority,
    RequestBody, Target, TransactionManager, TxnConfig, TxnEvent,
};
pub use prepared::{
    PreparedDecodeError, PreparedTransaction, ResumeError, ResumeOptions, ResumeOutcome,
    abort_prepared, commit_prepared,
};

/// The state of a transaction as its coordinator reports it
/// (DescribeTransactions, ListTransactions; the broker's `TransactionState`,
/// Java's admin `TransactionState`) — not the client's [`State`]. A state
/// name this client does not know (from a newer broker) is kept in
/// [`TransactionState::Unknown`].
///
/// ```
/// use kafka_producer::txn::TransactionState;
/// let s = TransactionState::parse("PrepareCommit");
/// assert_eq!(s, TransactionState::PrepareCommit);
/// assert_eq!(s.to_string(), "PrepareCommit");
/// assert!(s.is_committing());
/// let newer = TransactionState::parse("SomethingNew");
/// assert_eq!(newer, TransactionState::Unknown("SomethingNew".into()));
/// assert_eq!(newer.as_str(), "SomethingNew");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TransactionState {
    /// No transaction open (after init, or after the previous one completed
    /// and its markers were written long ago).
    Empty,
    /// A transaction is open.
    Ongoing,
    /// EndTxn(commit) accepted; markers being written.
    PrepareCommit,
    /// EndTxn(abort) accepted (or a timeout abort); markers being written.
    PrepareAbort,
    /// The last transaction committed.
    CompleteCommit,
    /// The last transaction aborted.
    CompleteAbort,
    /// The transactional id expired and is being removed.
    Dead,
    /// The coordinator is fencing the epoch (a timed-out TV1 transaction).
    PrepareEpochFence,
    /// A state name this client does not know, kept as sent.
    Unknown(String),
}

impl TransactionState {
    /// The state named `name` (the wire string, exact case).
    ///
    /// ```
    /// use kafka_producer::txn::TransactionState;
    /// assert_eq!(TransactionState::parse("Ongoing"), TransactionState::Ongoing);
    /// ```
    pub fn parse(name: &str) -> Self {
        match name {
            "Empty" => TransactionState::Empty,
            "Ongoing" => TransactionState::Ongoing,
            "PrepareCommit" => TransactionState::PrepareCommit,
            "PrepareAbort" => TransactionState::PrepareAbort,
            "CompleteCommit" => TransactionState::CompleteCommit,
            "CompleteAbort" => TransactionState::CompleteAbort,
            "Dead" => TransactionState::Dead,
            "PrepareEpochFence" => TransactionState::PrepareEpochFence,
            other => TransactionState::Unknown(other.to_string()),
        }
    }

    /// The wire name.
    ///
    /// ```
    /// use kafka_producer::txn::TransactionState;
    /// assert_eq!(TransactionState::CompleteAbort.as_str(), "CompleteAbort");
    /// ```
    pub fn as_str(&self) -> &str {
        match self {
            TransactionState::Empty => "Empty",
            TransactionState::Ongoing => "Ongoing",
            TransactionState::PrepareCommit => "PrepareCommit",
            TransactionState::PrepareAbort => "PrepareAbort",
            TransactionState::CompleteCommit => "CompleteCommit",
            TransactionState::CompleteAbort => "CompleteAbort",
            TransactionState::Dead => "Dead",
            TransactionState::PrepareEpochFence => "PrepareEpochFence",
            TransactionState::Unknown(s) => s,
        }
    }

    /// True when the coordinator committed or is committing
    /// (`PrepareCommit`, `CompleteCommit`).
    ///
    /// ```
    /// use kafka_producer::txn::TransactionState;
    /// assert!(TransactionState::CompleteCommit.is_committing());
    /// assert!(!TransactionState::Ongoing.is_committing());
    /// ```
    pub fn is_committing(&self) -> bool {
        matches!(
            self,
            TransactionState::PrepareCommit | TransactionState::CompleteCommit
        )
    }

    /// True when the coordinator aborted or is aborting (`PrepareAbort`,
    /// `CompleteAbort`).
    ///
    /// ```
    /// use kafka_producer::txn::TransactionState;
    /// assert!(TransactionState::PrepareAbort.is_aborting());
    /// assert!(!TransactionState::PrepareEpochFence.is_aborting());
    /// ```
    pub fn is_aborting(&self) -> bool {
        matches!(
            self,
            TransactionState::PrepareAbort | TransactionState::CompleteAbort
        )
    }
}

impl std::fmt::Display for TransactionState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A state of the [`TransactionManager`] (Java `TransactionManager.State`).
///
/// ```
/// use kafka_producer::txn::{State, TransactionManager, TxnConfig};
/// let mut m = TransactionManager::new(TxnConfig::new("tx"));
/// assert_eq!(m.state(), State::Uninitialized);
/// m.init_transactions().unwrap();
/// assert_eq!(m.state(), State::Initializing, "until InitProducerId answers");
/// assert!(m.begin_transaction().is_err(), "not Ready yet");
/// ```
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
///
/// ```
/// use kafka_producer::txn::TransactionVersion;
/// assert_eq!(TransactionVersion::V2.end_txn_max_version(), 5);
/// assert_eq!(TransactionVersion::from_level(1), TransactionVersion::V1);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TransactionVersion {
    /// TV0/TV1: AddPartitionsToTxn, AddOffsetsToTxn, EndTxn <= v4, client-side epoch bumps.
    V1,
    /// TV2: implicit partition registration, EndTxn v5 bumps the epoch per transaction.
    V2,
}

impl TransactionVersion {
    /// From a finalized `transaction.version` level (>= 2 is TV2).
    ///
    /// ```
    /// use kafka_producer::txn::TransactionVersion;
    /// assert_eq!(TransactionVersion::from_level(0), TransactionVersion::V1);
    /// assert_eq!(TransactionVersion::from_level(2), TransactionVersion::V2);
    /// ```
    pub fn from_level(level: i16) -> Self {
        if level >= 2 {
            TransactionVersion::V2
        } else {
            TransactionVersion::V1
        }
    }

    /// The highest EndTxn version of this transaction version (4 or 5).
    ///
    /// ```
    /// use kafka_producer::txn::TransactionVersion;
    /// assert_eq!(TransactionVersion::V1.end_txn_max_version(), 4);
    /// assert_eq!(TransactionVersion::V2.end_txn_max_version(), 5);
    /// ```
    pub fn end_txn_max_version(self) -> i16 {
        match self {
            TransactionVersion::V1 => 4,
            TransactionVersion::V2 => 5,
        }
    }
}

/// FindCoordinator key type.
///
/// ```no_run
/// # async fn demo(cluster: &kafka_producer::Cluster) -> Result<(), kafka_producer::txn::CoordinatorError> {
/// use kafka_producer::txn::{find_coordinator, CoordinatorType};
/// let group = find_coordinator(cluster, CoordinatorType::Group, "billing").await?;
/// println!("group coordinator: node {}", group.node_id);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CoordinatorType {
    /// A consumer group (key type 0).
    Group,
    /// A transactional id (key type 1).
    Transaction,
}

impl CoordinatorType {
    /// The wire key type.
    ///
    /// ```
    /// use kafka_producer::txn::CoordinatorType;
    /// assert_eq!(CoordinatorType::Group.wire(), 0);
    /// assert_eq!(CoordinatorType::Transaction.wire(), 1);
    /// ```
    pub fn wire(self) -> i8 {
        match self {
            CoordinatorType::Group => 0,
            CoordinatorType::Transaction => 1,
        }
    }
}

/// Consumer group metadata for `send_offsets_to_transaction` (Java
/// `ConsumerGroupMetadata`); generation -1 and an empty member id when
/// unknown (then the group coordinator cannot fence zombies, KIP-447).
///
/// ```
/// use kafka_producer::txn::GroupMetadata;
/// let g = GroupMetadata::new("my-group");
/// assert_eq!(g.generation_id, -1);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GroupMetadata {
    /// Group id.
    pub group_id: String,
    /// Generation (or member epoch).
    pub generation_id: i32,
    /// Member id.
    pub member_id: String,
    /// Static member instance id.
    pub group_instance_id: Option<String>,
}

impl GroupMetadata {
    /// Metadata with only a group id.
    ///
    /// ```
    /// use kafka_producer::txn::GroupMetadata;
    /// let g = GroupMetadata::new("billing");
    /// assert_eq!((g.group_id.as_str(), g.member_id.as_str()), ("billing", ""));
    /// assert_eq!(g.group_instance_id, None);
    /// ```
    pub fn new(group_id: impl Into<String>) -> Self {
        Self {
            group_id: group_id.into(),
            generation_id: -1,
            member_id: String::new(),
            group_instance_id: None,
        }
    }
}

/// An offset to commit in a transaction.
///
/// ```
/// use kafka_producer::txn::OffsetAndMetadata;
/// let o = OffsetAndMetadata { offset: 42, leader_epoch: Some(3), metadata: Some("batch-7".into()) };
/// assert_eq!(o.offset, 42, "the next offset to consume");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OffsetAndMetadata {
    /// The next offset to consume.
    pub offset: i64,
    /// The leader epoch of the consumed record, if known.
    pub leader_epoch: Option<i32>,
    /// Metadata string.
    pub metadata: Option<String>,
}

impl OffsetAndMetadata {
    /// An offset without metadata.
    ///
    /// ```
    /// use kafka_producer::txn::OffsetAndMetadata;
    /// let o = OffsetAndMetadata::new(42);
    /// assert_eq!((o.offset, o.leader_epoch, o.metadata), (42, None, None));
    /// ```
    pub fn new(offset: i64) -> Self {
        Self {
            offset,
            leader_epoch: None,
            metadata: None,
        }
    }
}
