//! The sans-IO transaction manager (Java `TransactionManager`).

use super::error::{ErrorClass, NotPreparableReason, TransactionError, TxnApi, TxnOp, classify};
use super::interface::*;
use super::prepared::PreparedTransaction;
use super::{
    CoordinatorType, GroupMetadata, OffsetAndMetadata, ProducerIdAndEpoch, State,
    TransactionVersion,
};
use kafka_client::TopicPartition;
use kafka_proto::ErrorCode;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
struct Queued {
    /// Which requests go first (Java's `TxnRequestHandler.priority`).
    priority: Priority,
    /// Order among requests of one priority.
    seq: u64,
    /// The request.
    body: RequestBody,
    /// The user operation it completes, if any.
    ticket: Option<OpTicket>,
    /// InitProducerId only: a bump (keeps READY transition semantics).
    bump: bool,
    /// Retries so far (the backoff grows with them).
    attempts: u32,
    /// Not sent before this time (retry backoff).
    not_before: Option<Instant>,
}

/// Why the manager changes state: a user operation, or what a coordinator
/// answer or the producer core reported. Traced with every transition; a
/// refused user operation reports its [`TxnOp`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reason {
    /// A user operation.
    Op(TxnOp),
    /// InitProducerId returned a producer id and epoch: Initializing → Ready.
    ProducerIdReceived,
    /// The client bumps the epoch after the transaction ended (KIP-360):
    /// Committing/Aborting → Initializing.
    EpochBump,
    /// InitProducerId was refused for lack of authorization: AbortableError →
    /// Uninitialized, so that `init_transactions` may be called again.
    InitNotAuthorized,
    /// EndTxn succeeded, or an empty transaction ended without it:
    /// Committing/Aborting → Ready (Initializing when an epoch bump follows).
    TransactionEnded {
        /// True for a commit.
        committed: bool,
    },
    /// An abortable error: the transaction must be aborted.
    AbortableError,
    /// A fatal error: the producer cannot continue.
    FatalError,
}

impl Reason {
    /// The operation a refusal names.
    fn op(self) -> TxnOp {
        match self {
            Reason::Op(op) => op,
            Reason::ProducerIdReceived | Reason::EpochBump | Reason::InitNotAuthorized => {
                TxnOp::InitTransactions
            }
            Reason::TransactionEnded { committed: true } => TxnOp::CommitTransaction,
            Reason::TransactionEnded { committed: false } => TxnOp::AbortTransaction,
            Reason::AbortableError | Reason::FatalError => TxnOp::Send,
        }
    }
}

#[derive(Debug, Clone)]
struct PendingTransition {
    /// The operation.
    op: TxnOp,
    /// Its result's ticket.
    ticket: OpTicket,
}

/// The transactional producer's state machine, sans IO.
///
/// State diagram (transitions allowed exactly as Java's `isTransitionValid`):
///
/// ```text
///                 init_transactions           InitProducerId ok
///  Uninitialized ─────────────────► Initializing ─────────────────► Ready ◄─────────┐
///       ▲   ▲                        │  ▲    │ resume_prepared        │ begin        │
///       │   │ InitPid auth error     │  │    ▼                        ▼              │ EndTxn ok
///       │   └──── AbortableError ◄───┘  │  PreparedTransaction ◄── InTransaction     │ (or empty:
///       │          ▲   │  ▲             │   │ commit   │ abort        │  │  │        │  local)
///       │          │   │  └─────────────┼───┼──────────┼──────────────┘  │  │        │
///       │          │   │ abort          │   ▼          ▼      commit     │  │ abort  │
///       │          │   └────────────────┼─► Aborting ◄────────────────────┼──┘       │
///       │          │                    │   Committing ◄──────────────────┘          │
///       │          └─ abortable error ──┼── Committing                               │
///       │                               └── Committing/Aborting (epoch bump) ────────┤
///       └─ Ready (reset)                     Committing/Aborting ───────────────────┘
///  FatalError: from any state; terminal.
/// ```
///
/// | Target | Allowed from |
/// |---|---|
/// | Uninitialized | Ready, AbortableError |
/// | Initializing | Uninitialized, CommittingTransaction, AbortingTransaction (epoch bump) |
/// | Ready | Initializing, CommittingTransaction, AbortingTransaction |
/// | InTransaction | Ready |
/// | PreparedTransaction | InTransaction, Initializing |
/// | CommittingTransaction | InTransaction, PreparedTransaction |
/// | AbortingTransaction | InTransaction, PreparedTransaction, AbortableError |
/// | AbortableError | InTransaction, CommittingTransaction, AbortableError, Initializing |
/// | FatalError | any |
///
/// Inputs are the user operations (`init_transactions`, `begin_transaction`,
/// `on_partition_used`, `send_offsets_to_transaction`, `commit_transaction`,
/// `abort_transaction`, `prepare_transaction`, `resume_prepared`), the
/// producer-path hooks (`produce_batch_failed`) and the coordinator answers
/// (`handle_response`, `handle_disconnect`, `handle_version_mismatch`).
/// Outputs are [`Self::poll_request`] (at most one coordinator request in
/// flight), [`Self::poll_event`] and [`Self::poll_result`]. Time is passed in.
///
/// ```
/// use kafka_producer::internals::*;
/// use kafka_producer::txn::*;
/// use kafka_proto::ErrorCode;
/// use std::time::Instant;
/// let now = Instant::now();
/// let mut m = TransactionManager::new(TxnConfig::new("tx"));
/// m.set_coordinator_capabilities(true, true); // InitProducerId v3+, TV2 usable
/// let init = m.init_transactions().unwrap();
/// let find = m.poll_request(now, false).unwrap();
/// assert_eq!(find.target, Target::AnyBroker);
/// m.handle_response(find.id, 4, CoordinatorResponse::FindCoordinator { error: ErrorCode::None, node_id: 2 }, now);
/// let init_pid = m.poll_request(now, false).unwrap();
/// assert_eq!(init_pid.target, Target::Node(2));
/// let producer = ProducerIdAndEpoch { producer_id: 7, epoch: 0 };
/// m.handle_response(init_pid.id, 5, CoordinatorResponse::InitProducerId { error: ErrorCode::None, producer }, now);
/// assert_eq!(m.poll_result(init), Some(Ok(())));
/// m.begin_transaction().unwrap();
/// // Nothing was written: the commit completes locally, without EndTxn.
/// let commit = m.commit_transaction().unwrap();
/// assert!(m.poll_request(now, false).is_none());
/// assert_eq!(m.poll_result(commit), Some(Ok(())));
/// assert_eq!(m.state(), State::Ready);
/// ```
#[derive(Debug)]
pub struct TransactionManager {
    /// The transactional id and timeouts the manager was built with.
    config: TxnConfig,
    /// Where the machine is (Java's `TransactionManager.State`); changed only by `transition`.
    state: State,
    /// The producer id and epoch the coordinator gave (`NONE` before InitProducerId).
    producer: ProducerIdAndEpoch,
    /// The transaction protocol in use: V1 (AddPartitionsToTxn) or V2 (KIP-890, implicit adds).
    tv: TransactionVersion,
    /// The coordinator offers transaction version 2: a V1 manager upgrades between transactions.
    tv2_available: bool,
    /// The coordinator accepts InitProducerId v3+, so the client can bump its own epoch (KIP-360).
    supports_bump: bool,
    /// The transaction coordinator's node id, once FindCoordinator found it.
    txn_coordinator: Option<i32>,
    /// The group coordinator of each group offsets were sent for.
    group_coordinators: HashMap<String, i32>,
    /// Partitions the coordinator knows are in the transaction: their batches may be drained.
    partitions_in_txn: BTreeSet<TopicPartition>,
    /// TV1: partitions written to but not yet sent in an AddPartitionsToTxn (batched into the next one).
    new_partitions: BTreeSet<TopicPartition>,
    /// TV1: partitions in an AddPartitionsToTxn in flight, not yet confirmed.
    pending_partitions: BTreeSet<TopicPartition>,
    /// Something of this transaction reached a coordinator or a broker: the commit or abort needs an EndTxn.
    transaction_started: bool,
    /// The epoch must be bumped (InitProducerId) when the transaction ends, before the next one.
    bump_required: bool,
    /// The error that put the machine in AbortableError or FatalError, returned to later operations.
    last_error: Option<TransactionError>,
    /// Coordinator requests waiting to be sent, by priority then `seq`.
    queue: Vec<Queued>,
    /// The one coordinator request in flight, with its request id.
    in_flight: Option<(u64, Queued)>,
    /// The last number given to a queued request (its place in the queue) or a sent one (its id).
    next_seq: u64,
    /// The last ticket given to a user operation.
    next_ticket: u64,
    /// The outcome of each user operation not yet observed (`None` while it runs).
    results: BTreeMap<OpTicket, Option<Result<(), TransactionError>>>,
    /// The user operation a caller may await again after a timeout (Java's `pendingTransition`).
    pending: Option<PendingTransition>,
    /// Events for the driver (producer id changed, transaction completed), oldest first.
    events: VecDeque<TxnEvent>,
    /// TV1: the offsets of a `send_offsets_to_transaction` waiting for its AddOffsetsToTxn; their TxnOffsetCommit follows it.
    deferred_offsets:
        HashMap<OpTicket, (GroupMetadata, BTreeMap<TopicPartition, OffsetAndMetadata>)>,
    /// Serial number of the current (or last) transaction: +1 at every
    /// `begin_transaction`. A record queued by the producer carries the
    /// serial of the transaction it was sent in.
    transaction_serial: u64,
    /// Jitter factor override for deterministic tests.
    jitter_factor: Option<f64>,
    /// Groups of the current transaction whose TxnOffsetCommit got no
    /// answer (see `handle_disconnect`): it may still land, so more offsets
    /// for the group in this transaction are refused (the transaction must abort).
    offsets_unknown: BTreeSet<String>,
}

impl TransactionManager {
    /// A manager in state `Uninitialized`.
    pub fn new(config: TxnConfig) -> Self {
        Self {
            config,
            state: State::Uninitialized,
            producer: ProducerIdAndEpoch::NONE,
            tv: TransactionVersion::V1,
            tv2_available: false,
            supports_bump: true,
            txn_coordinator: None,
            group_coordinators: HashMap::new(),
            partitions_in_txn: BTreeSet::new(),
            new_partitions: BTreeSet::new(),
            pending_partitions: BTreeSet::new(),
            transaction_started: false,
            bump_required: false,
            last_error: None,
            queue: Vec::new(),
            in_flight: None,
            next_seq: 0,
            next_ticket: 0,
            results: BTreeMap::new(),
            pending: None,
            events: VecDeque::new(),
            deferred_offsets: HashMap::new(),
            transaction_serial: 0,
            jitter_factor: None,
            offsets_unknown: BTreeSet::new(),
        }
    }

    /// Makes backoffs deterministic (`factor` replaces the random jitter).
    pub fn set_jitter_factor(&mut self, factor: f64) {
        self.jitter_factor = Some(factor);
    }

    /// The configuration.
    pub fn config(&self) -> &TxnConfig {
        &self.config
    }

    /// The current state.
    pub fn state(&self) -> State {
        self.state
    }

    /// The current producer id and epoch (NONE before init).
    pub fn producer_id_and_epoch(&self) -> ProducerIdAndEpoch {
        self.producer
    }

    /// The transaction version in use (decided at init, switched only
    /// between transactions).
    pub fn transaction_version(&self) -> TransactionVersion {
        self.tv
    }

    /// The error that moved the manager into `AbortableError`/`FatalError`.
    pub fn last_error(&self) -> Option<&TransactionError> {
        self.last_error.as_ref()
    }

    /// Partitions whose AddPartitionsToTxn succeeded (TV1) or that were
    /// written in this transaction (TV2).
    pub fn partitions_in_transaction(&self) -> &BTreeSet<TopicPartition> {
        &self.partitions_in_txn
    }

    /// True once a partition or offsets were added to the transaction: only
    /// then does commit/abort send EndTxn.
    pub fn transaction_started(&self) -> bool {
        self.transaction_started
    }

    /// True when the next transaction completion will bump the epoch with
    /// InitProducerId (KIP-360, TV1).
    pub fn epoch_bump_required(&self) -> bool {
        self.bump_required
    }

    /// The known transaction coordinator.
    pub fn transaction_coordinator(&self) -> Option<i32> {
        self.txn_coordinator
    }

    /// Updates what the coordinator offers: `supports_epoch_bump` is
    /// InitProducerId v3 or later; `tv2_usable` is a finalized
    /// `transaction.version` of at least 2 with usable Produce v12+, EndTxn
    /// v5+ and TxnOffsetCommit v5+.
    /// Before `init_transactions` completes this decides the version; later
    /// changes take effect between transactions (TV1 → TV2 through an epoch
    /// bump after the EndTxn, TV2 → TV1 after the EndTxn v5).
    pub fn set_coordinator_capabilities(&mut self, supports_epoch_bump: bool, tv2_usable: bool) {
        self.supports_bump = supports_epoch_bump;
        self.tv2_available = tv2_usable;
        if matches!(self.state, State::Uninitialized | State::Initializing)
            && !self.producer.is_valid()
        {
            self.tv = if tv2_usable {
                TransactionVersion::V2
            } else {
                TransactionVersion::V1
            };
        }
    }

    fn can_bump(&self) -> bool {
        self.supports_bump || self.tv == TransactionVersion::V2
    }

    fn client_bump_needed(&self) -> bool {
        self.supports_bump && self.tv == TransactionVersion::V1
    }

    // ---------------------------------------------------------------- state

    /// Whether `from → to` is allowed (the transitions of the Java client's
    /// `TransactionManager.State.isTransitionValid`).
    pub fn is_transition_valid(from: State, to: State) -> bool {
        use State::*;
        match to {
            Uninitialized => matches!(from, Ready | AbortableError),
            Initializing => matches!(
                from,
                Uninitialized | CommittingTransaction | AbortingTransaction
            ),
            Ready => matches!(
                from,
                Initializing | CommittingTransaction | AbortingTransaction
            ),
            InTransaction => from == Ready,
            PreparedTransaction => matches!(from, InTransaction | Initializing),
            CommittingTransaction => matches!(from, InTransaction | PreparedTransaction),
            AbortingTransaction => {
                matches!(from, InTransaction | PreparedTransaction | AbortableError)
            }
            AbortableError => matches!(
                from,
                InTransaction | CommittingTransaction | AbortableError | Initializing
            ),
            FatalError => true,
        }
    }

    /// The one place the state changes (Java `transitionTo`): refused unless
    /// [`Self::is_transition_valid`] allows `state → to`. `FatalError` is
    /// terminal: only a later fatal error (which replaces the error to
    /// report) may enter it again; anything else reports the fatal error.
    fn transition(&mut self, to: State, reason: Reason) -> Result<(), TransactionError> {
        let op = reason.op();
        if self.state == State::FatalError && to != State::FatalError {
            return Err(self
                .last_error
                .clone()
                .unwrap_or(TransactionError::InvalidState {
                    from: self.state,
                    op,
                }));
        }
        if !Self::is_transition_valid(self.state, to) {
            return Err(TransactionError::InvalidState {
                from: self.state,
                op,
            });
        }
        tracing::debug!(from = ?self.state, ?to, ?reason, transactional_id = %self.config.transactional_id, "transaction state");
        self.state = to;
        Ok(())
    }

    /// A transition the manager makes on its own (a coordinator answer or
    /// an error report): the flows only ask for legal ones, so a refusal is
    /// a bug. It is logged (and fails debug builds); the state is kept.
    fn transition_internal(&mut self, to: State, reason: Reason) {
        if let Err(e) = self.transition(to, reason) {
            tracing::error!(from = ?self.state, ?to, ?reason, error = %e, "invalid internal transaction state transition");
            debug_assert!(
                false,
                "invalid internal transition {:?} -> {to:?} ({reason:?})",
                self.state
            );
        }
    }

    fn maybe_fail_with_error(&self) -> Result<(), TransactionError> {
        match self.state {
            State::FatalError | State::AbortableError => {
                Err(self
                    .last_error
                    .clone()
                    .unwrap_or(TransactionError::InvalidState {
                        from: self.state,
                        op: TxnOp::Send,
                    }))
            }
            _ => Ok(()),
        }
    }

    /// A user operation: refused while another one is incomplete; a
    /// completed one that was never observed is dropped (the user moved on).
    fn throw_if_pending(&mut self, op: TxnOp) -> Result<(), TransactionError> {
        self.check_not_pending(op)?;
        if let Some(p) = self.pending.take() {
            self.results.remove(&p.ticket);
        }
        Ok(())
    }

    /// A user operation allowed only inside a transaction: refused while
    /// another is incomplete, after an error, or outside a transaction.
    fn start_in_transaction(&mut self, op: TxnOp) -> Result<(), TransactionError> {
        self.throw_if_pending(op)?;
        self.maybe_fail_with_error()?;
        if self.state != State::InTransaction {
            return Err(TransactionError::InvalidState {
                from: self.state,
                op,
            });
        }
        Ok(())
    }

    /// The producer-core form of [`Self::throw_if_pending`]: refuses while an
    /// operation is incomplete but never consumes a completed result. A
    /// hook runs on the sender's schedule (e.g. a record parked for its
    /// topic's metadata is placed after an abort completed), and the user's
    /// waiter must still find the result behind its ticket (otherwise an
    /// abort of an empty transaction times out because a late placement
    /// dropped its result).
    fn check_not_pending(&self, op: TxnOp) -> Result<(), TransactionError> {
        match &self.pending {
            Some(p) if self.results.get(&p.ticket).is_some_and(|r| r.is_none()) => {
                Err(TransactionError::PendingTransition {
                    pending: p.op,
                    attempted: op,
                })
            }
            _ => Ok(()),
        }
    }

    /// Java `handleCachedTransactionRequestResult`: the same timed-out
    /// operation returns the same ticket; another one is refused.
    fn cached(
        &mut self,
        op: TxnOp,
        start: impl FnOnce(&mut Self) -> Result<OpTicket, TransactionError>,
    ) -> Result<OpTicket, TransactionError> {
        if let Some(p) = self.pending.clone() {
            match self.results.get(&p.ticket) {
                Some(None) | Some(Some(_)) if p.op == op => return Ok(p.ticket),
                Some(None) => {
                    return Err(TransactionError::PendingTransition {
                        pending: p.op,
                        attempted: op,
                    });
                }
                _ => {
                    self.results.remove(&p.ticket);
                    self.pending = None;
                }
            }
        }
        let ticket = start(self)?;
        self.pending = Some(PendingTransition { op, ticket });
        Ok(ticket)
    }

    fn new_ticket(&mut self) -> OpTicket {
        self.next_ticket += 1;
        let t = OpTicket(self.next_ticket);
        self.results.insert(t, None);
        t
    }

    fn complete(&mut self, ticket: Option<OpTicket>, result: Result<(), TransactionError>) {
        if let Some(t) = ticket
            && let Some(slot) = self.results.get_mut(&t)
            && slot.is_none()
        {
            *slot = Some(result);
        }
    }

    /// The outcome of the operation behind `ticket`, once known. Observing a
    /// result clears the pending transition of that operation.
    pub fn poll_result(&mut self, ticket: OpTicket) -> Option<Result<(), TransactionError>> {
        let r = self.results.get(&ticket)?.clone()?;
        if self.pending.as_ref().is_some_and(|p| p.ticket == ticket) {
            self.pending = None;
        }
        self.results.remove(&ticket);
        Some(r)
    }

    /// True while the operation behind `ticket` is incomplete.
    pub fn is_pending(&self, ticket: OpTicket) -> bool {
        matches!(self.results.get(&ticket), Some(None))
    }

    #[cfg(test)]
    pub(super) fn forget_pending(&mut self) {
        if let Some(p) = self.pending.take() {
            self.results.remove(&p.ticket);
        }
    }

    /// The next event for the producer core.
    pub fn poll_event(&mut self) -> Option<TxnEvent> {
        self.events.pop_front()
    }

    // ------------------------------------------------------- user operations

    /// `initTransactions()`: Uninitialized → Initializing, then
    /// FindCoordinator + InitProducerId(−1/−1); completes in Ready.
    pub fn init_transactions(&mut self) -> Result<OpTicket, TransactionError> {
        self.cached(TxnOp::InitTransactions, |m| {
            m.maybe_fail_with_error()?;
            // Committing/Aborting → Initializing is the internal epoch bump only.
            if m.state != State::Uninitialized {
                return Err(TransactionError::InvalidState {
                    from: m.state,
                    op: TxnOp::InitTransactions,
                });
            }
            m.transition(State::Initializing, Reason::Op(TxnOp::InitTransactions))?;
            m.tv = if m.tv2_available {
                TransactionVersion::V2
            } else {
                TransactionVersion::V1
            };
            let ticket = m.new_ticket();
            m.enqueue_init_pid(ProducerIdAndEpoch::NONE, false, Some(ticket));
            Ok(ticket)
        })
    }

    /// `beginTransaction()`: Ready → InTransaction.
    pub fn begin_transaction(&mut self) -> Result<(), TransactionError> {
        self.throw_if_pending(TxnOp::BeginTransaction)?;
        self.maybe_fail_with_error()?;
        self.transition(State::InTransaction, Reason::Op(TxnOp::BeginTransaction))?;
        self.transaction_serial += 1;
        Ok(())
    }

    /// The serial number of the current transaction (+1 at every
    /// `begin_transaction`).
    pub fn transaction_serial(&self) -> u64 {
        self.transaction_serial
    }

    /// Producer-core hook, called when a record is sent but cannot be
    /// appended yet (the producer queues it for buffer memory or metadata):
    /// the record belongs to the current transaction, whose serial is
    /// returned. Fails as [`Self::on_partition_used`] would.
    pub fn on_record_queued(&mut self) -> Result<u64, TransactionError> {
        self.check_may_send()?;
        Ok(self.transaction_serial)
    }

    /// A record may join the current transaction: no operation pending, no
    /// error to report, a producer id, and state InTransaction.
    fn check_may_send(&self) -> Result<(), TransactionError> {
        self.check_not_pending(TxnOp::Send)?;
        self.maybe_fail_with_error()?;
        if !self.producer.is_valid() || self.state != State::InTransaction {
            return Err(TransactionError::InvalidState {
                from: self.state,
                op: TxnOp::Send,
            });
        }
        Ok(())
    }

    /// Producer-core hook: a record is appended to a batch of `tp` whose
    /// `memo` says in which transaction the batch last added its partition
    /// (0: never). The record is refused as by [`Self::on_partition_used`];
    /// the partition is added only if the batch has not added it in this
    /// transaction already, and `memo` updated. Returns whether it was
    /// added now.
    ///
    /// A partition added in a transaction stays added while sends are
    /// allowed: the sets of partitions are cleared or shrunk only when the
    /// transaction completes or fails, and the next transaction has another
    /// serial. So the per-record work is the send check alone.
    pub fn on_batch_partition_used(
        &mut self,
        tp: &TopicPartition,
        memo: &mut u64,
    ) -> Result<bool, TransactionError> {
        self.check_may_send()?;
        if *memo == self.transaction_serial {
            debug_assert!(
                self.partitions_in_txn.contains(tp)
                    || self.new_partitions.contains(tp)
                    || self.pending_partitions.contains(tp),
                "{tp} added in transaction {memo} but no longer in it"
            );
            return Ok(false);
        }
        self.on_partition_used(tp)?;
        *memo = self.transaction_serial;
        Ok(true)
    }

    /// Producer-core hook: a record queued in transaction `serial` is
    /// appended for `tp`. A record of an earlier transaction is refused (it
    /// must never join a later one); otherwise as [`Self::on_partition_used`].
    pub fn on_queued_partition_used(
        &mut self,
        tp: &TopicPartition,
        serial: u64,
    ) -> Result<(), TransactionError> {
        if serial != self.transaction_serial {
            return Err(TransactionError::Abortable {
                api: None,
                version: -1,
                error: None,
                message: format!(
                    "the record was sent in transaction {serial}, which ended before it could be \
                     appended (now in transaction {})",
                    self.transaction_serial
                ),
            });
        }
        self.on_partition_used(tp)
    }

    /// Producer-core hook: a record sent in transaction `serial` (`None`:
    /// the current one) will never be written (too large, `max.block.ms`,
    /// ...). The transaction becomes abortable, so that it cannot commit
    /// without the record (Java `KafkaProducer.send` →
    /// `maybeTransitionToErrorState`).
    pub fn record_failed(&mut self, serial: Option<u64>, message: String) {
        if serial.is_some_and(|s| s != self.transaction_serial)
            || self.state != State::InTransaction
        {
            return;
        }
        self.abortable(TransactionError::Abortable {
            api: None,
            version: -1,
            error: None,
            message,
        });
    }

    /// Producer-core hook, called when a record is appended for `tp` (Java
    /// `maybeAddPartition`). TV1: enqueues the partition for
    /// AddPartitionsToTxn (batched); TV2: the partition joins implicitly
    /// with its first Produce v12+.
    pub fn on_partition_used(&mut self, tp: &TopicPartition) -> Result<(), TransactionError> {
        self.check_may_send()?;
        if self.tv == TransactionVersion::V2 {
            self.partitions_in_txn.insert(tp.clone());
            self.transaction_started = true;
        } else if !self.partitions_in_txn.contains(tp) && !self.pending_partitions.contains(tp) {
            self.new_partitions.insert(tp.clone());
        }
        Ok(())
    }

    /// Producer-core hook: may batches of `tp` be drained (sent) now? Under
    /// TV1 only after its AddPartitionsToTxn succeeded; never after a fatal
    /// error.
    pub fn may_drain(&self, tp: &TopicPartition) -> bool {
        self.state != State::FatalError
            && self.producer.is_valid()
            && self.partitions_in_txn.contains(tp)
    }

    /// Producer-core hook: a Produce batch for `tp` failed for good (retries
    /// exhausted, expired, or a non-retriable error; `outcome_unknown` when
    /// the batch may have been written, e.g. expired in flight). Moves to
    /// `FatalError` for the Produce-path fatal set (ClusterAuthorization,
    /// TransactionalIdAuthorization, ProducerFenced, UnsupportedVersion,
    /// InvalidPidMapping), else to `AbortableError`. Under TV1 with epoch-bump
    /// support the next completion bumps the epoch (so that a late Produce of
    /// this transaction can never land in a later one); under TV2 the EndTxn
    /// bumps it.
    pub fn produce_batch_failed(
        &mut self,
        tp: &TopicPartition,
        error: Option<ErrorCode>,
        outcome_unknown: bool,
    ) {
        let code = error.unwrap_or(ErrorCode::RequestTimedOut);
        let class = classify(TxnApi::Produce, code, self.can_bump());
        let message = format!(
            "batch for {tp} failed: {}{}",
            code.name(),
            if outcome_unknown {
                " (outcome unknown)"
            } else {
                ""
            }
        );
        match class {
            ErrorClass::Fenced => self.fatal(TransactionError::Fenced {
                api: TxnApi::Produce,
                version: -1,
                error: code,
            }),
            ErrorClass::Fatal => self.fatal(TransactionError::Fatal {
                api: Some(TxnApi::Produce),
                version: -1,
                error,
                message,
            }),
            _ => {
                if outcome_unknown && !self.can_bump() {
                    self.fatal(TransactionError::Fatal {
                        api: Some(TxnApi::Produce),
                        version: -1,
                        error,
                        message: format!(
                            "{message}; the coordinator cannot bump the epoch (InitProducerId < v3)"
                        ),
                    });
                    return;
                }
                if self.client_bump_needed()
                    && !matches!(
                        self.state,
                        State::CommittingTransaction | State::AbortingTransaction
                    )
                {
                    self.bump_required = true;
                }
                self.abortable(TransactionError::Abortable {
                    api: Some(TxnApi::Produce),
                    version: -1,
                    error,
                    message,
                });
            }
        }
    }

    /// Producer-core hook: when `Some`, fail every undrained batch with this
    /// error (ABORTABLE_ERROR, ABORTING_TRANSACTION or FATAL_ERROR).
    pub fn undrained_batch_error(&self) -> Option<TransactionError> {
        match self.state {
            State::AbortableError | State::FatalError => self.last_error.clone(),
            State::AbortingTransaction => Some(self.last_error.clone().unwrap_or(
                TransactionError::Abortable {
                    api: None,
                    version: -1,
                    error: None,
                    message: "the transaction is being aborted".into(),
                },
            )),
            _ => None,
        }
    }

    /// `sendOffsetsToTransaction(offsets, groupMetadata)`: TV1 AddOffsetsToTxn
    /// then TxnOffsetCommit; TV2 TxnOffsetCommit v5 only.
    pub fn send_offsets_to_transaction(
        &mut self,
        offsets: BTreeMap<TopicPartition, OffsetAndMetadata>,
        group: GroupMetadata,
    ) -> Result<OpTicket, TransactionError> {
        self.start_in_transaction(TxnOp::SendOffsets)?;
        if self.offsets_unknown.contains(&group.group_id) {
            // An earlier TxnOffsetCommit of this transaction for the group
            // got no answer: it may still reach the group coordinator after
            // these offsets and overwrite them (both carry this epoch).
            // Abort; the epoch moves on before the next transaction, which
            // fences the late request.
            // (`handle_disconnect` already required the epoch bump.)
            let message = format!(
                "an earlier TxnOffsetCommit of this transaction for group {} got no answer and may still land after these offsets",
                group.group_id
            );
            let err = TransactionError::Abortable {
                api: Some(TxnApi::TxnOffsetCommit),
                version: -1,
                error: None,
                message,
            };
            self.abortable(err.clone());
            return Err(err);
        }
        let ticket = self.new_ticket();
        if self.tv == TransactionVersion::V2 {
            self.transaction_started = true;
            self.enqueue_txn_offset_commit(group, offsets, ticket);
        } else {
            self.enqueue(
                Priority::AddPartitionsOrOffsets,
                RequestBody::AddOffsetsToTxn {
                    transactional_id: self.config.transactional_id.clone(),
                    producer: self.producer,
                    group_id: group.group_id.clone(),
                },
                Some(ticket),
                false,
            );
            // The TxnOffsetCommit follows on success.
            self.deferred_offsets.insert(ticket, (group, offsets));
        }
        Ok(ticket)
    }

    /// `commitTransaction()`: InTransaction/PreparedTransaction →
    /// CommittingTransaction; pending AddPartitionsToTxn first, then EndTxn
    /// (not sent while produce batches are incomplete; skipped for an empty
    /// transaction), then an epoch bump if required. Completes in Ready.
    pub fn commit_transaction(&mut self) -> Result<OpTicket, TransactionError> {
        self.cached(TxnOp::CommitTransaction, |m| {
            m.maybe_fail_with_error()?;
            m.transition(
                State::CommittingTransaction,
                Reason::Op(TxnOp::CommitTransaction),
            )?;
            Ok(m.begin_completing(true))
        })
    }

    /// `abortTransaction()`: InTransaction/PreparedTransaction/AbortableError
    /// → AbortingTransaction; EndTxn(abort) (skipped for an empty
    /// transaction), then an epoch bump if required. Completes in Ready.
    pub fn abort_transaction(&mut self) -> Result<OpTicket, TransactionError> {
        self.cached(TxnOp::AbortTransaction, |m| {
            if m.state != State::AbortableError {
                m.maybe_fail_with_error()?;
            }
            m.transition(
                State::AbortingTransaction,
                Reason::Op(TxnOp::AbortTransaction),
            )?;
            m.new_partitions.clear();
            Ok(m.begin_completing(false))
        })
    }

    /// Pre-commit for resume-after-crash: InTransaction → PreparedTransaction.
    /// Call after every batch is acknowledged (flush). Returns what to persist.
    pub fn prepare_transaction(&mut self) -> Result<PreparedTransaction, TransactionError> {
        self.start_in_transaction(TxnOp::PrepareTransaction)?;
        if !self.new_partitions.is_empty()
            || !self.pending_partitions.is_empty()
            || self.in_flight.is_some()
            || !self.queue.is_empty()
        {
            return Err(TransactionError::NotPreparable {
                reason: NotPreparableReason::PartitionsPending,
            });
        }
        if !self.transaction_started {
            return Err(TransactionError::NotPreparable {
                reason: NotPreparableReason::Empty,
            });
        }
        self.transition(
            State::PreparedTransaction,
            Reason::Op(TxnOp::PrepareTransaction),
        )?;
        Ok(PreparedTransaction {
            transactional_id: self.config.transactional_id.clone(),
            producer_id: self.producer.producer_id,
            producer_epoch: self.producer.epoch,
            transaction_version: self.tv,
        })
    }

    /// Adopts a transaction prepared by another (crashed) process, without
    /// InitProducerId: Uninitialized → Initializing → PreparedTransaction.
    /// Then `commit_transaction`/`abort_transaction` send EndTxn with its
    /// pid/epoch at its transaction version.
    pub fn resume_prepared(
        &mut self,
        prepared: &PreparedTransaction,
    ) -> Result<(), TransactionError> {
        self.throw_if_pending(TxnOp::ResumePrepared)?;
        if prepared.transactional_id != self.config.transactional_id {
            return Err(TransactionError::Fatal {
                api: None,
                version: -1,
                error: None,
                message: format!(
                    "prepared transaction of transactional id {:?} resumed by {:?}",
                    prepared.transactional_id, self.config.transactional_id
                ),
            });
        }
        if self.state != State::Uninitialized {
            return Err(TransactionError::InvalidState {
                from: self.state,
                op: TxnOp::ResumePrepared,
            });
        }
        self.transition(State::Initializing, Reason::Op(TxnOp::ResumePrepared))?;
        self.producer = prepared.producer();
        self.tv = prepared.transaction_version;
        self.reset_transaction_partitions();
        self.transaction_started = true;
        self.transition(
            State::PreparedTransaction,
            Reason::Op(TxnOp::ResumePrepared),
        )
    }

    fn begin_completing(&mut self, committed: bool) -> OpTicket {
        let ticket = self.new_ticket();
        if !self.new_partitions.is_empty() {
            self.enqueue_add_partitions();
        }
        // Switch TV1 → TV2 only between transactions, through an epoch bump.
        let upgrade = self.tv == TransactionVersion::V1 && self.tv2_available;
        let bump = self.bump_required || upgrade;
        self.enqueue(
            Priority::EndTxn,
            RequestBody::EndTxn {
                transactional_id: self.config.transactional_id.clone(),
                producer: self.producer,
                committed,
                transaction_version: self.tv,
            },
            if bump { None } else { Some(ticket) },
            false,
        );
        if bump {
            self.bump_required = true;
            self.enqueue_init_pid(self.producer, true, Some(ticket));
        }
        ticket
    }

    fn enqueue_init_pid(
        &mut self,
        producer: ProducerIdAndEpoch,
        bump: bool,
        ticket: Option<OpTicket>,
    ) {
        let body = RequestBody::InitProducerId {
            transactional_id: self.config.transactional_id.clone(),
            transaction_timeout_ms: self
                .config
                .transaction_timeout
                .as_millis()
                .min(i32::MAX as u128) as i32,
            producer,
        };
        let prio = if bump {
            Priority::EpochBump
        } else {
            Priority::InitProducerId
        };
        self.enqueue(prio, body, ticket, bump);
    }

    fn enqueue_add_partitions(&mut self) {
        let parts: Vec<TopicPartition> = std::mem::take(&mut self.new_partitions)
            .into_iter()
            .collect();
        self.pending_partitions.extend(parts.iter().cloned());
        self.enqueue(
            Priority::AddPartitionsOrOffsets,
            RequestBody::AddPartitionsToTxn {
                transactional_id: self.config.transactional_id.clone(),
                producer: self.producer,
                partitions: parts,
            },
            None,
            false,
        );
    }

    fn enqueue(
        &mut self,
        priority: Priority,
        body: RequestBody,
        ticket: Option<OpTicket>,
        bump: bool,
    ) {
        self.next_seq += 1;
        self.queue.push(Queued {
            priority,
            seq: self.next_seq,
            body,
            ticket,
            bump,
            attempts: 0,
            not_before: None,
        });
    }

    /// Queues the TxnOffsetCommit of `offsets` for `group`, completing
    /// `ticket` (under TV1 after AddOffsetsToTxn, under TV2 at once).
    fn enqueue_txn_offset_commit(
        &mut self,
        group: GroupMetadata,
        offsets: BTreeMap<TopicPartition, OffsetAndMetadata>,
        ticket: OpTicket,
    ) {
        self.enqueue(
            Priority::AddPartitionsOrOffsets,
            RequestBody::TxnOffsetCommit {
                transactional_id: self.config.transactional_id.clone(),
                producer: self.producer,
                group,
                offsets,
                transaction_version: self.tv,
            },
            Some(ticket),
            false,
        );
    }

    /// Forgets the transaction coordinator and queues its FindCoordinator.
    fn lookup_txn_coordinator(&mut self) {
        let id = self.config.transactional_id.clone();
        self.lookup_coordinator(CoordinatorType::Transaction, &id);
    }

    fn lookup_coordinator(&mut self, key_type: CoordinatorType, key: &str) {
        match key_type {
            CoordinatorType::Transaction => self.txn_coordinator = None,
            CoordinatorType::Group => {
                self.group_coordinators.remove(key);
            }
        }
        let dup = self.queue.iter().any(|q| {
            matches!(&q.body, RequestBody::FindCoordinator { key_type: t, key: k } if *t == key_type && k == key)
        });
        if !dup {
            self.enqueue(
                Priority::FindCoordinator,
                RequestBody::FindCoordinator {
                    key_type,
                    key: key.to_string(),
                },
                None,
                false,
            );
        }
    }

    fn backoff(&self, attempts: u32) -> Duration {
        match self.jitter_factor {
            Some(f) => self.config.retry_backoff.backoff_with_factor(attempts, f),
            None => self.config.retry_backoff.backoff(attempts),
        }
    }

    fn reenqueue(&mut self, mut q: Queued, now: Instant, backoff: Option<Duration>) {
        let delay = backoff.unwrap_or_else(|| self.backoff(q.attempts));
        q.attempts += 1;
        q.not_before = Some(now + delay);
        self.queue.push(q);
    }

    // ------------------------------------------------------ request pipeline

    fn head_index(&self) -> Option<usize> {
        self.queue
            .iter()
            .enumerate()
            .min_by_key(|(_, q)| (q.priority, q.seq))
            .map(|(i, _)| i)
    }

    /// True when a coordinator request is in flight or ready to be sent: a
    /// Sender pass then does only that (no produce data).
    pub fn has_in_flight_request(&self) -> bool {
        self.in_flight.is_some()
    }

    /// True when coordinator requests are queued or in flight.
    pub fn has_pending_requests(&self) -> bool {
        self.in_flight.is_some() || !self.queue.is_empty() || !self.new_partitions.is_empty()
    }

    /// When the head request's backoff ends (`None`: nothing waits on time).
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.in_flight.is_some() {
            return None;
        }
        self.head_index().and_then(|i| self.queue[i].not_before)
    }

    /// The next coordinator request to send, if any (Java `nextRequest`):
    /// one in flight at a time, by priority, EndTxn held while
    /// `has_incomplete_batches`, requests failed in an error state (except
    /// FindCoordinator), an EndTxn of an empty transaction completed locally,
    /// and a FindCoordinator put first when the target coordinator is unknown.
    pub fn poll_request(
        &mut self,
        now: Instant,
        has_incomplete_batches: bool,
    ) -> Option<CoordinatorRequest> {
        if self.in_flight.is_some() {
            return None;
        }
        if !self.new_partitions.is_empty()
            && matches!(
                self.state,
                State::InTransaction | State::CommittingTransaction
            )
        {
            self.enqueue_add_partitions();
        }
        loop {
            let i = self.head_index()?;
            let head = &self.queue[i];
            if matches!(head.body, RequestBody::EndTxn { .. }) && has_incomplete_batches {
                return None;
            }
            if head.not_before.is_some_and(|t| t > now) {
                return None;
            }
            let q = self.queue.remove(i);
            // maybeTerminateRequestWithError
            if matches!(self.state, State::AbortableError | State::FatalError)
                && !matches!(q.body, RequestBody::FindCoordinator { .. })
            {
                let err = self
                    .last_error
                    .clone()
                    .unwrap_or(TransactionError::InvalidState {
                        from: self.state,
                        op: TxnOp::Send,
                    });
                self.complete(q.ticket, Err(err));
                continue;
            }
            if matches!(q.body, RequestBody::EndTxn { .. }) && !self.transaction_started {
                tracing::debug!("not sending EndTxn for an empty transaction");
                let committed = matches!(
                    q.body,
                    RequestBody::EndTxn {
                        committed: true,
                        ..
                    }
                );
                self.complete_transaction(committed);
                self.complete(q.ticket, Ok(()));
                continue;
            }
            let target = match &q.body {
                RequestBody::FindCoordinator { .. } => Target::AnyBroker,
                RequestBody::TxnOffsetCommit { group, .. } => {
                    match self.group_coordinators.get(&group.group_id) {
                        Some(n) => Target::Node(*n),
                        None => {
                            let g = group.group_id.clone();
                            self.queue.push(q);
                            self.lookup_coordinator(CoordinatorType::Group, &g);
                            continue;
                        }
                    }
                }
                _ => match self.txn_coordinator {
                    Some(n) => Target::Node(n),
                    None => {
                        self.queue.push(q);
                        self.lookup_txn_coordinator();
                        continue;
                    }
                },
            };
            self.next_seq += 1;
            let id = self.next_seq;
            let req = CoordinatorRequest {
                id,
                target,
                body: q.body.clone(),
                attempt: q.attempts,
            };
            self.in_flight = Some((id, q));
            return Some(req);
        }
    }

    fn take_in_flight(&mut self, id: u64) -> Option<Queued> {
        match &self.in_flight {
            Some((i, _)) if *i == id => self.in_flight.take().map(|(_, q)| q),
            _ => {
                tracing::warn!(id, "answer for a coordinator request that is not in flight");
                None
            }
        }
    }

    /// The request `id` got no answer: a disconnect or request timeout (the
    /// outcome is unknown). Looks the coordinator up again and retries the
    /// **same** request (same pid/epoch, same transaction version).
    ///
    /// An EndTxn under transaction version 1 whose outcome is unknown may
    /// still reach the coordinator after the retry completed the
    /// transaction, when the next one is open under the **same** epoch —
    /// and commit or abort that one (Jepsen's torn transactions). When the
    /// coordinator can bump the epoch (KIP-360), the epoch is bumped
    /// before the next transaction: the late request is then fenced.
    pub fn handle_disconnect(&mut self, id: u64, now: Instant) {
        let Some(mut q) = self.take_in_flight(id) else {
            return;
        };
        if let RequestBody::EndTxn {
            transaction_version: TransactionVersion::V1,
            ..
        } = &q.body
            && self.supports_bump
            && q.ticket.is_some()
        {
            let ticket = q.ticket.take();
            self.bump_required = true;
            self.enqueue_init_pid(self.producer, true, ticket);
        }
        match &q.body {
            RequestBody::FindCoordinator { .. } => {}
            RequestBody::TxnOffsetCommit { group, .. } => {
                // The unanswered request may still be applied, late, under
                // this epoch: after a later TxnOffsetCommit of this
                // transaction (which it would overwrite: that one is then
                // refused), or in the next transaction under transaction
                // version 1 (the epoch is bumped at the end of this one,
                // which fences it; version 2 bumps at every EndTxn).
                let g = group.group_id.clone();
                self.offsets_unknown.insert(g.clone());
                if self.client_bump_needed() {
                    self.bump_required = true;
                }
                self.lookup_coordinator(CoordinatorType::Group, &g);
            }
            _ => {
                self.lookup_txn_coordinator();
            }
        }
        self.reenqueue(q, now, None);
    }

    /// The client and the broker share no version of the request's API: fatal.
    pub fn handle_version_mismatch(&mut self, id: u64, message: &str) {
        let Some(q) = self.take_in_flight(id) else {
            return;
        };
        self.fatal(TransactionError::Fatal {
            api: Some(q.body.api()),
            version: -1,
            error: Some(ErrorCode::UnsupportedVersion),
            message: message.to_string(),
        });
    }

    /// Feeds the answer to request `id` (sent at `version`).
    pub fn handle_response(
        &mut self,
        id: u64,
        version: i16,
        resp: CoordinatorResponse,
        now: Instant,
    ) {
        let Some(q) = self.take_in_flight(id) else {
            return;
        };
        match resp {
            CoordinatorResponse::FindCoordinator { error, node_id } => {
                self.on_find_coordinator(q, version, error, node_id, now)
            }
            CoordinatorResponse::InitProducerId { error, producer } => {
                self.on_init_pid(q, version, error, producer, now)
            }
            CoordinatorResponse::AddPartitionsToTxn { results } => {
                self.on_add_partitions(q, version, results, now)
            }
            CoordinatorResponse::AddOffsetsToTxn { error } => {
                self.on_add_offsets(q, version, error, now)
            }
            CoordinatorResponse::TxnOffsetCommit { results } => {
                self.on_txn_offset_commit(q, version, results, now)
            }
            CoordinatorResponse::EndTxn { error, producer } => {
                self.on_end_txn(q, version, error, producer, now)
            }
        }
    }

    fn fatal(&mut self, err: TransactionError) {
        tracing::error!(error = %err, transactional_id = %self.config.transactional_id, "fatal transactional error");
        self.transition_internal(State::FatalError, Reason::FatalError);
        self.last_error = Some(err.clone());
        for q in std::mem::take(&mut self.queue) {
            self.complete(q.ticket, Err(err.clone()));
        }
        if let Some((_, q)) = self.in_flight.take() {
            self.complete(q.ticket, Err(err.clone()));
        }
        let open: Vec<OpTicket> = self
            .results
            .iter()
            .filter(|(_, r)| r.is_none())
            .map(|(t, _)| *t)
            .collect();
        for t in open {
            self.complete(Some(t), Err(err.clone()));
        }
    }

    /// Java `transitionToAbortableError`: ignored while aborting; fails every
    /// queued request (but FindCoordinator) with the error.
    fn abortable(&mut self, err: TransactionError) {
        if self.state == State::AbortingTransaction {
            tracing::debug!(error = %err, "abortable error while aborting: ignored");
            return;
        }
        if self.state == State::FatalError {
            return;
        }
        if !Self::is_transition_valid(self.state, State::AbortableError) {
            // E.g. Ready/Prepared: nothing to abort; keep the state.
            tracing::warn!(error = %err, state = ?self.state, "abortable error outside a transaction");
            return;
        }
        tracing::info!(error = %err, "transaction must be aborted");
        self.transition_internal(State::AbortableError, Reason::AbortableError);
        self.last_error = Some(err.clone());
        let queue = std::mem::take(&mut self.queue);
        for q in queue {
            if matches!(q.body, RequestBody::FindCoordinator { .. }) {
                self.queue.push(q);
            } else {
                self.complete(q.ticket, Err(err.clone()));
            }
        }
    }

    fn fail_request(&mut self, q: &Queued, class: ErrorClass, version: i16, error: ErrorCode) {
        let api = q.body.api();
        let Some(err) = TransactionError::from_class(class, api, version, error) else {
            return;
        };
        self.complete(q.ticket, Err(err.clone()));
        match class {
            ErrorClass::Abortable => {
                if error == ErrorCode::UnknownProducerId && self.client_bump_needed() {
                    self.bump_required = true;
                }
                self.abortable(err)
            }
            _ => self.fatal(err),
        }
    }

    fn on_find_coordinator(
        &mut self,
        q: Queued,
        version: i16,
        error: ErrorCode,
        node_id: i32,
        now: Instant,
    ) {
        let RequestBody::FindCoordinator { key_type, key } = &q.body else {
            return;
        };
        match classify(TxnApi::FindCoordinator, error, self.can_bump()) {
            ErrorClass::Success => {
                match key_type {
                    CoordinatorType::Transaction => self.txn_coordinator = Some(node_id),
                    CoordinatorType::Group => {
                        self.group_coordinators.insert(key.clone(), node_id);
                    }
                }
                self.complete(q.ticket, Ok(()));
            }
            ErrorClass::Retry | ErrorClass::RefreshCoordinator => self.reenqueue(q, now, None),
            class => self.fail_request(&q, class, version, error),
        }
    }

    fn on_init_pid(
        &mut self,
        q: Queued,
        version: i16,
        error: ErrorCode,
        producer: ProducerIdAndEpoch,
        now: Instant,
    ) {
        match classify(TxnApi::InitProducerId, error, self.can_bump()) {
            ErrorClass::Success => {
                let bump = q.bump;
                if bump && self.state != State::Initializing {
                    // EndTxn not yet completed (cannot happen: EPOCH_BUMP sorts after EndTxn).
                    self.transition_internal(State::Initializing, Reason::EpochBump);
                }
                self.producer = producer;
                self.reset_transaction_partitions();
                self.bump_required = false;
                self.last_error = None;
                if self.state == State::Initializing {
                    self.transition_internal(State::Ready, Reason::ProducerIdReceived);
                }
                if bump && self.tv2_available {
                    self.tv = TransactionVersion::V2;
                }
                self.events.push_back(TxnEvent::ProducerIdAndEpochChanged {
                    producer,
                    reset_sequences: true,
                });
                self.complete(q.ticket, Ok(()));
            }
            ErrorClass::RefreshCoordinator => {
                self.lookup_txn_coordinator();
                self.reenqueue(q, now, None);
            }
            ErrorClass::Retry => self.reenqueue(q, now, None),
            ErrorClass::Abortable
                if !q.bump
                    && matches!(
                        error,
                        ErrorCode::TransactionalIdAuthorizationFailed
                            | ErrorCode::ClusterAuthorizationFailed
                    ) =>
            {
                // Java: abortable, then the Sender moves back to
                // UNINITIALIZED so that initTransactions can be retried.
                let err = TransactionError::Abortable {
                    api: Some(TxnApi::InitProducerId),
                    version,
                    error: Some(error),
                    message: format!(
                        "{}: fix the ACLs and call init_transactions again",
                        error.name()
                    ),
                };
                self.complete(q.ticket, Err(err.clone()));
                self.abortable(err);
                if self.state == State::AbortableError {
                    self.transition_internal(State::Uninitialized, Reason::InitNotAuthorized);
                    self.last_error = None;
                }
            }
            class => self.fail_request(&q, class, version, error),
        }
    }

    fn on_add_partitions(
        &mut self,
        q: Queued,
        version: i16,
        results: Vec<(TopicPartition, ErrorCode)>,
        now: Instant,
    ) {
        let RequestBody::AddPartitionsToTxn { partitions, .. } = &q.body else {
            return;
        };
        let partitions = partitions.clone();
        let mut abortable: Option<ErrorCode> = None;
        for (_, error) in &results {
            match classify(TxnApi::AddPartitionsToTxn, *error, self.can_bump()) {
                ErrorClass::Success => {}
                ErrorClass::RefreshCoordinator => {
                    self.lookup_txn_coordinator();
                    self.reenqueue(q, now, None);
                    return;
                }
                ErrorClass::Retry => {
                    let backoff = (*error == ErrorCode::ConcurrentTransactions
                        && self.partitions_in_txn.is_empty())
                    .then(|| ADD_PARTITIONS_RETRY_BACKOFF.min(self.backoff(q.attempts)));
                    self.reenqueue(q, now, backoff);
                    return;
                }
                ErrorClass::Fatal | ErrorClass::Fenced => {
                    let class = classify(TxnApi::AddPartitionsToTxn, *error, self.can_bump());
                    self.fail_request(&q, class, version, *error);
                    return;
                }
                ErrorClass::Abortable => {
                    // UNKNOWN_PRODUCER_ID and TRANSACTION_ABORTABLE fail at
                    // once; topic authorization, OPERATION_NOT_ATTEMPTED and
                    // unexpected errors are collected.
                    if matches!(
                        error,
                        ErrorCode::UnknownProducerId | ErrorCode::TransactionAbortable
                    ) {
                        for p in &partitions {
                            self.pending_partitions.remove(p);
                        }
                        self.fail_request(&q, ErrorClass::Abortable, version, *error);
                        return;
                    }
                    if abortable.is_none() || *error == ErrorCode::TopicAuthorizationFailed {
                        abortable = Some(*error);
                    }
                }
            }
        }
        for p in &partitions {
            self.pending_partitions.remove(p);
        }
        if let Some(error) = abortable {
            let failed: Vec<String> = results
                .iter()
                .filter(|(_, e)| *e != ErrorCode::None)
                .map(|(tp, e)| format!("{tp}: {}", e.name()))
                .collect();
            let err = TransactionError::Abortable {
                api: Some(TxnApi::AddPartitionsToTxn),
                version,
                error: Some(error),
                message: format!(
                    "could not add partitions to the transaction: {}",
                    failed.join(", ")
                ),
            };
            self.complete(q.ticket, Err(err.clone()));
            self.abortable(err);
            return;
        }
        self.partitions_in_txn.extend(partitions);
        self.transaction_started = true;
        self.complete(q.ticket, Ok(()));
    }

    fn on_add_offsets(&mut self, q: Queued, version: i16, error: ErrorCode, now: Instant) {
        match classify(TxnApi::AddOffsetsToTxn, error, self.can_bump()) {
            ErrorClass::Success => {
                self.transaction_started = true;
                if let Some(ticket) = q.ticket
                    && let Some((group, offsets)) = self.deferred_offsets.remove(&ticket)
                {
                    self.enqueue_txn_offset_commit(group, offsets, ticket);
                }
            }
            ErrorClass::RefreshCoordinator => {
                self.lookup_txn_coordinator();
                self.reenqueue(q, now, None);
            }
            ErrorClass::Retry => self.reenqueue(q, now, None),
            class => {
                if let Some(t) = q.ticket {
                    self.deferred_offsets.remove(&t);
                }
                self.fail_request(&q, class, version, error)
            }
        }
    }

    fn on_txn_offset_commit(
        &mut self,
        mut q: Queued,
        version: i16,
        results: Vec<(TopicPartition, ErrorCode)>,
        now: Instant,
    ) {
        let RequestBody::TxnOffsetCommit { group, offsets, .. } = &mut q.body else {
            return;
        };
        let group_id = group.group_id.clone();
        let mut refresh = false;
        for (tp, error) in &results {
            match classify(
                TxnApi::TxnOffsetCommit,
                *error,
                self.supports_bump || self.tv == TransactionVersion::V2,
            ) {
                ErrorClass::Success => {
                    offsets.remove(tp);
                }
                ErrorClass::RefreshCoordinator => refresh = true,
                ErrorClass::Retry => {}
                class => {
                    let e = *error;
                    self.fail_request(&q, class, version, e);
                    return;
                }
            }
        }
        if offsets.is_empty() {
            self.complete(q.ticket, Ok(()));
            return;
        }
        if refresh {
            self.lookup_coordinator(CoordinatorType::Group, &group_id);
        }
        self.reenqueue(q, now, None);
    }

    fn on_end_txn(
        &mut self,
        q: Queued,
        version: i16,
        error: ErrorCode,
        next: Option<ProducerIdAndEpoch>,
        now: Instant,
    ) {
        let RequestBody::EndTxn {
            committed,
            transaction_version,
            ..
        } = &q.body
        else {
            return;
        };
        let (committed, tv) = (*committed, *transaction_version);
        let aborting = self.state == State::AbortingTransaction;
        match classify(TxnApi::EndTxn, error, self.can_bump()) {
            ErrorClass::Success => {
                if tv == TransactionVersion::V2 {
                    if let Some(p) = next.filter(|p| p.is_valid())
                        && p != self.producer
                    {
                        self.producer = p;
                        self.events.push_back(TxnEvent::ProducerIdAndEpochChanged {
                            producer: p,
                            reset_sequences: true,
                        });
                    }
                    if !self.tv2_available {
                        self.tv = TransactionVersion::V1;
                    }
                }
                self.complete_transaction(committed);
                self.complete(q.ticket, Ok(()));
            }
            ErrorClass::RefreshCoordinator => {
                self.lookup_txn_coordinator();
                self.reenqueue(q, now, None);
            }
            ErrorClass::Retry => self.reenqueue(q, now, None),
            ErrorClass::Abortable if aborting && error == ErrorCode::TransactionAbortable => {
                self.fail_request(&q, ErrorClass::Fatal, version, error)
            }
            ErrorClass::Abortable if aborting => {
                // UNKNOWN_PRODUCER_ID while aborting: the transaction is gone
                // with the producer id; recover with the epoch bump.
                if self.tv == TransactionVersion::V1 && self.supports_bump {
                    self.bump_required = true;
                    if !self.queue.iter().any(|x| x.bump) {
                        let ticket = q.ticket;
                        self.enqueue_init_pid(self.producer, true, ticket);
                    } else if let Some(pos) = self.queue.iter().position(|x| x.bump)
                        && self.queue[pos].ticket.is_none()
                    {
                        self.queue[pos].ticket = q.ticket;
                    }
                    self.complete_transaction(false);
                } else {
                    self.fail_request(&q, ErrorClass::Fatal, version, error)
                }
            }
            class => self.fail_request(&q, class, version, error),
        }
    }

    /// Java `completeTransaction`: Ready, or Initializing when an epoch bump
    /// follows; the transaction's partitions are forgotten.
    fn complete_transaction(&mut self, committed: bool) {
        let to = if self.bump_required {
            State::Initializing
        } else {
            State::Ready
        };
        self.transition_internal(to, Reason::TransactionEnded { committed });
        self.last_error = None;
        self.reset_transaction_partitions();
        self.events
            .push_back(TxnEvent::TransactionCompleted { committed });
    }

    fn reset_transaction_partitions(&mut self) {
        self.offsets_unknown.clear();
        self.transaction_started = false;
        self.partitions_in_txn.clear();
        self.new_partitions.clear();
        self.pending_partitions.clear();
    }
}
