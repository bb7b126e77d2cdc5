//! What goes in and out of the transaction manager: its settings
//! ([`TxnConfig`]), the coordinator requests it hands its driver
//! ([`CoordinatorRequest`]: a [`Target`], a [`RequestBody`], a
//! [`Priority`]), the answers the driver feeds back
//! ([`CoordinatorResponse`]), the tickets of the user's operations
//! ([`OpTicket`]) and the events it reports ([`TxnEvent`]).

#[cfg(doc)]
use super::TransactionManager;
use super::error::TxnApi;
use super::{
    CoordinatorType, GroupMetadata, OffsetAndMetadata, ProducerIdAndEpoch, TransactionVersion,
};
use kafka_client::ExponentialBackoff;
use kafka_client::TopicPartition;
use kafka_proto::ErrorCode;
use std::collections::BTreeMap;
use std::time::Duration;

/// AddPartitionsToTxn CONCURRENT_TRANSACTIONS backoff while no partition is
/// yet in the transaction (Java `ADD_PARTITIONS_RETRY_BACKOFF_MS`).
pub const ADD_PARTITIONS_RETRY_BACKOFF: Duration = Duration::from_millis(20);

/// Settings of a [`TransactionManager`].
///
/// ```
/// use kafka_producer::internals::TxnConfig;
/// let c = TxnConfig::new("orders-writer-1");
/// assert_eq!(c.transaction_timeout.as_millis(), 60_000);
/// ```
#[derive(Debug, Clone)]
pub struct TxnConfig {
    /// `transactional.id`.
    pub transactional_id: String,
    /// `transaction.timeout.ms` (default 60 s).
    pub transaction_timeout: Duration,
    /// Retry backoff of coordinator requests: `retry.backoff.ms` (100 ms)
    /// growing ×2 per attempt up to `retry.backoff.max.ms` (1 s), jitter 0.2.
    pub retry_backoff: ExponentialBackoff,
}

impl TxnConfig {
    /// Defaults for `transactional_id`.
    pub fn new(transactional_id: impl Into<String>) -> Self {
        Self {
            transactional_id: transactional_id.into(),
            transaction_timeout: Duration::from_secs(60),
            retry_backoff: ExponentialBackoff {
                initial: Duration::from_millis(100),
                multiplier: 2.0,
                max: Duration::from_secs(1),
                jitter: 0.2,
            },
        }
    }
}

/// Priority of a coordinator request; lower is sent first (Java
/// `TxnRequestHandler.Priority`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Priority {
    /// FindCoordinator.
    FindCoordinator = 0,
    /// InitProducerId (first initialisation).
    InitProducerId = 1,
    /// AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit.
    AddPartitionsOrOffsets = 2,
    /// EndTxn.
    EndTxn = 3,
    /// InitProducerId bumping the epoch after EndTxn.
    EpochBump = 4,
}

/// Identifies the completion of a user operation (see
/// [`TransactionManager::poll_result`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OpTicket(pub u64);

/// Where a coordinator request goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Any broker (FindCoordinator).
    AnyBroker,
    /// This node (the transaction or group coordinator).
    Node(i32),
}

/// The body of a coordinator request, with everything needed to encode it
/// (the driver picks the wire version).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestBody {
    /// FindCoordinator for one key.
    FindCoordinator {
        /// Transaction or group.
        key_type: CoordinatorType,
        /// The transactional id or group id.
        key: String,
    },
    /// InitProducerId; `producer` is NONE for a first init, the current
    /// pid/epoch for a KIP-360 bump.
    InitProducerId {
        /// The transactional id.
        transactional_id: String,
        /// `transaction.timeout.ms`.
        transaction_timeout_ms: i32,
        /// NONE or the current pid/epoch.
        producer: ProducerIdAndEpoch,
    },
    /// AddPartitionsToTxn (v<=3).
    AddPartitionsToTxn {
        /// The transactional id.
        transactional_id: String,
        /// Current pid/epoch.
        producer: ProducerIdAndEpoch,
        /// The partitions to add.
        partitions: Vec<TopicPartition>,
    },
    /// AddOffsetsToTxn (TV1).
    AddOffsetsToTxn {
        /// The transactional id.
        transactional_id: String,
        /// Current pid/epoch.
        producer: ProducerIdAndEpoch,
        /// The consumer group.
        group_id: String,
    },
    /// TxnOffsetCommit to the group coordinator (v<=4 under TV1, v5 under TV2).
    TxnOffsetCommit {
        /// The transactional id.
        transactional_id: String,
        /// Current pid/epoch.
        producer: ProducerIdAndEpoch,
        /// The consumer group metadata.
        group: GroupMetadata,
        /// Offsets still to commit.
        offsets: BTreeMap<TopicPartition, OffsetAndMetadata>,
        /// Transaction version of the transaction.
        transaction_version: TransactionVersion,
    },
    /// EndTxn (v<=4 under TV1, v5 under TV2).
    EndTxn {
        /// The transactional id.
        transactional_id: String,
        /// The pid/epoch of the transaction.
        producer: ProducerIdAndEpoch,
        /// Commit (true) or abort.
        committed: bool,
        /// Transaction version the transaction was started with.
        transaction_version: TransactionVersion,
    },
}

impl RequestBody {
    /// The API of this request.
    pub fn api(&self) -> TxnApi {
        match self {
            RequestBody::FindCoordinator { .. } => TxnApi::FindCoordinator,
            RequestBody::InitProducerId { .. } => TxnApi::InitProducerId,
            RequestBody::AddPartitionsToTxn { .. } => TxnApi::AddPartitionsToTxn,
            RequestBody::AddOffsetsToTxn { .. } => TxnApi::AddOffsetsToTxn,
            RequestBody::TxnOffsetCommit { .. } => TxnApi::TxnOffsetCommit,
            RequestBody::EndTxn { .. } => TxnApi::EndTxn,
        }
    }
}

/// A coordinator request the driver must send now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoordinatorRequest {
    /// Matches the answer to [`TransactionManager::handle_response`].
    pub id: u64,
    /// Where to send it.
    pub target: Target,
    /// What to send.
    pub body: RequestBody,
    /// Zero for the first attempt.
    pub attempt: u32,
}

/// A decoded coordinator answer, fed back with
/// [`TransactionManager::handle_response`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoordinatorResponse {
    /// FindCoordinator: error and the coordinator's node id.
    FindCoordinator {
        /// Error code (of the key's entry for v4+).
        error: ErrorCode,
        /// Node id of the coordinator.
        node_id: i32,
    },
    /// InitProducerId.
    InitProducerId {
        /// Error code.
        error: ErrorCode,
        /// The new pid/epoch.
        producer: ProducerIdAndEpoch,
    },
    /// AddPartitionsToTxn: one error per partition.
    AddPartitionsToTxn {
        /// Per-partition errors.
        results: Vec<(TopicPartition, ErrorCode)>,
    },
    /// AddOffsetsToTxn.
    AddOffsetsToTxn {
        /// Error code.
        error: ErrorCode,
    },
    /// TxnOffsetCommit: one error per partition.
    TxnOffsetCommit {
        /// Per-partition errors.
        results: Vec<(TopicPartition, ErrorCode)>,
    },
    /// EndTxn; v5 (TV2) answers carry the next pid/epoch.
    EndTxn {
        /// Error code.
        error: ErrorCode,
        /// The next pid/epoch (v5), `None` before v5.
        producer: Option<ProducerIdAndEpoch>,
    },
}

/// Something the producer core must act on (see
/// [`TransactionManager::poll_event`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TxnEvent {
    /// A new producer id/epoch (InitProducerId or a TV2 EndTxn): write new
    /// batches with it; when `reset_sequences`, every partition's sequence
    /// restarts at 0.
    ProducerIdAndEpochChanged {
        /// The new pid/epoch.
        producer: ProducerIdAndEpoch,
        /// Reset every partition's sequence to 0.
        reset_sequences: bool,
    },
    /// The transaction ended (committed or aborted, locally for an empty
    /// transaction).
    TransactionCompleted {
        /// True for a commit.
        committed: bool,
    },
}
