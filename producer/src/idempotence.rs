//! Sans-IO bookkeeping of the idempotent producer: producer id and epoch,
//! per-partition sequence numbers, in-flight batches, and the Java client's
//! error handling for Produce (`TransactionManager` + `Sender` in
//! `org.apache.kafka.clients.producer.internals`).
//!
//! No IO and no clock: the driver ([`crate::sender`]) feeds responses in and
//! executes the decisions that come out.
//!
//! # States
//!
//! Producer level ([`Phase`]):
//!
//! ```text
//!  Uninitialized --next_action()=InitProducerId--> Initializing
//!  Initializing --handle_init_producer_id(Ok)--> Ready           (sequences restart at 0)
//!  Initializing --handle_init_producer_id(retriable err)--> Uninitialized
//!  Initializing --handle_init_producer_id(fatal err)--> Fatal
//!  Ready --epoch bump at epoch i16::MAX--> Uninitialized         (a new producer id)
//!  Ready --PRODUCER_FENCED / authorization / UNSUPPORTED_VERSION on Produce--> Fatal
//! ```
//!
//! Partition level (one [`PartitionState`] per partition written to):
//! `next_sequence`, `last_acked_sequence`, `last_acked_offset`, the producer
//! id/epoch its sequences belong to, and the in-flight batches (drained and
//! not yet completed or failed, including batches waiting for a retry) in
//! sequence order.
//!
//! - [`Idempotence::assign`] (at drain, never at append): if the partition's
//!   epoch is stale and nothing is in flight, restart at sequence 0 under the
//!   current epoch; the batch gets `next_sequence`, which advances by the
//!   record count (wrapping as `increment_sequence`).
//! - [`Idempotence::may_drain`]: nothing is drained without a valid producer
//!   id; a *new* batch waits while the partition has in-flight batches of an
//!   older epoch or an unresolved sequence, and while the first batch of the
//!   epoch is unacknowledged (a broker holding no state for the producer —
//!   Kafka before transaction version 2 — appends *any* sequence, so a
//!   second batch could overtake a lost or refused first one; not needed
//!   with transaction version 2, whose brokers refuse it); a *retried*
//!   batch is sent only if it is the first in flight (so after a retry the
//!   partition has one request in flight until the head resolves).
//!   Stricter than the Java client, which pipelines from the first batch.
//! - [`Idempotence::handle_completed`]: the last acked sequence/offset advance.
//! - [`Idempotence::handle_error`]: Java's `Sender.canRetry` +
//!   `TransactionManager.canRetry`/`handleFailedBatch`:
//!   - UNKNOWN_PRODUCER_ID: retry if the log start offset is unknown or the
//!     batch's sequence was already reset; if the last acked offset is below
//!     the log start offset (retention removed the producer state) request an
//!     epoch bump and retry; otherwise (idempotent producer) request an epoch
//!     bump and retry.
//!   - OUT_OF_ORDER_SEQUENCE_NUMBER: retry if the batch is not next in line
//!     (or its sequence was reset); if it is next in line (a real gap), request
//!     an epoch bump for the partition and retry.
//!   - DUPLICATE_SEQUENCE_NUMBER: success without an offset.
//!   - other retriable errors: retry (same sequence) while retries and the
//!     delivery timeout allow.
//!   - anything else fails the batch; PRODUCER_FENCED, authorization errors,
//!     UNSUPPORTED_VERSION and INVALID_PRODUCER_ID_MAPPING make the producer
//!     fatal; otherwise a failed batch whose retries were not exhausted
//!     requests an epoch bump for its partition (the idempotent producer
//!     cannot close the sequence gap the failure leaves).
//! - [`Idempotence::handle_expired`]: a drained batch that expired leaves an
//!   unresolved sequence: no new batch of that partition is drained until
//!   its in-flight batches are resolved; then if the last acked sequence is
//!   right before `next_sequence` the partition is fine, else an epoch bump is
//!   requested ([`Idempotence::next_action`] runs `maybeResolveSequences`).
//! - Epoch bump (KIP-360, idempotent producer): done **locally** by the
//!   client as Java does (`bumpIdempotentProducerEpoch`): epoch + 1, and the
//!   in-flight batches of the partitions that asked for it are rewritten
//!   with sequences from 0 ([`Rewrite`]); at epoch `i16::MAX` the producer id
//!   is dropped and a new one fetched with InitProducerId. Other partitions
//!   move to the new epoch (from sequence 0) once their in-flight batches
//!   complete.
//!
//! ```
//! use kafka_producer::internals::idempotence::{Action, Idempotence, ProducerIdAndEpoch};
//! use kafka_client::TopicPartition;
//! let mut st = Idempotence::new();
//! assert_eq!(st.next_action(), Some(Action::InitProducerId));
//! st.handle_init_producer_id(Ok(ProducerIdAndEpoch { producer_id: 7, epoch: 0 }));
//! let tp = TopicPartition::new("t", 0);
//! assert!(st.may_drain(&tp, 1).is_new());
//! let seq = st.assign(&tp, 1, 10);
//! assert_eq!((seq.base_sequence, seq.producer.producer_id), (0, 7));
//! assert_eq!(st.assign(&tp, 2, 5).base_sequence, 10);
//! st.handle_completed(&tp, 1, 100);
//! assert_eq!(st.partition(&tp).unwrap().last_acked_sequence, 9);
//! ```

pub use kafka_client::ProducerIdAndEpoch;
use kafka_client::TopicPartition;
use kafka_proto::ErrorCode;
use kafka_proto::record::increment_sequence;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Identifies a batch for the state machine (assigned by the driver).
pub type BatchId = u64;

/// "No sequence acknowledged yet".
pub const NO_LAST_ACKED_SEQUENCE: i32 = -1;

/// The producer state a drained batch is (to be) written with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchSequence {
    /// Producer id and epoch.
    pub producer: ProducerIdAndEpoch,
    /// Sequence of the first record.
    pub base_sequence: i32,
    /// Records in the batch.
    pub record_count: i32,
    /// True once the sequence was rewritten after an epoch bump.
    pub sequence_reset: bool,
}

impl BatchSequence {
    /// Sequence of the last record (with wrap).
    pub fn last_sequence(&self) -> i32 {
        increment_sequence(self.base_sequence, self.record_count - 1)
    }
}

/// Producer-level phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// No producer id: InitProducerId is needed.
    Uninitialized,
    /// InitProducerId in flight.
    Initializing,
    /// Producer id known: batches may be drained.
    Ready,
    /// A fatal error: nothing more can be sent.
    Fatal(ErrorCode),
}

/// What the driver must do next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Send InitProducerId (no transactional id), then call
    /// [`Idempotence::handle_init_producer_id`].
    InitProducerId,
}

/// One in-flight batch's new producer state after an epoch bump; the driver
/// rewrites the batch header before resending it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rewrite {
    /// The batch.
    pub batch: BatchId,
    /// Its new state.
    pub sequence: BatchSequence,
}

/// [`Idempotence::may_drain`]'s answer for the first queued batch of a partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drain {
    /// Do not drain this partition now.
    Stop,
    /// A new batch: call [`Idempotence::assign`] and send it.
    New,
    /// A retried batch, first in line: send it with this state.
    Retry(BatchSequence),
}

impl Drain {
    /// True for [`Drain::New`].
    pub fn is_new(&self) -> bool {
        matches!(self, Drain::New)
    }
}

/// What to do with a batch the broker answered with an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorDecision {
    /// Requeue it (same sequence unless an epoch bump rewrites it) after `retry.backoff.ms`.
    Retry,
    /// Complete it as written, offset unknown (DUPLICATE_SEQUENCE_NUMBER).
    SucceedWithoutOffset,
    /// Fail it with the error; `fatal` when the producer is now unusable.
    Fail {
        /// The producer moved to [`Phase::Fatal`].
        fatal: bool,
    },
}

/// One partition's sequence bookkeeping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionState {
    /// Producer id/epoch the sequences belong to.
    pub producer: ProducerIdAndEpoch,
    /// Next sequence to assign.
    pub next_sequence: i32,
    /// Last acknowledged sequence ([`NO_LAST_ACKED_SEQUENCE`] if none).
    pub last_acked_sequence: i32,
    /// Offset of the last acknowledged record (-1 if unknown).
    pub last_acked_offset: i64,
    /// Drained batches not yet resolved, in sequence order.
    inflight: Vec<(BatchId, BatchSequence)>,
}

impl PartitionState {
    fn new(producer: ProducerIdAndEpoch) -> Self {
        Self {
            producer,
            next_sequence: 0,
            last_acked_sequence: NO_LAST_ACKED_SEQUENCE,
            last_acked_offset: -1,
            inflight: Vec::new(),
        }
    }

    /// In-flight batches (drained, unresolved) in sequence order.
    pub fn inflight(&self) -> impl Iterator<Item = (BatchId, BatchSequence)> + '_ {
        self.inflight.iter().copied()
    }

    fn is_next_sequence(&self, seq: i32) -> bool {
        if self.last_acked_sequence == NO_LAST_ACKED_SEQUENCE {
            seq == 0
        } else {
            increment_sequence(self.last_acked_sequence, 1) == seq
        }
    }

    fn start_sequences_at_beginning(
        &mut self,
        producer: ProducerIdAndEpoch,
        rewrites: &mut Vec<Rewrite>,
    ) {
        let mut seq = 0;
        for (id, s) in &mut self.inflight {
            s.producer = producer;
            s.base_sequence = seq;
            s.sequence_reset = true;
            seq = increment_sequence(seq, s.record_count);
            rewrites.push(Rewrite {
                batch: *id,
                sequence: *s,
            });
        }
        self.producer = producer;
        self.next_sequence = seq;
        self.last_acked_sequence = NO_LAST_ACKED_SEQUENCE;
    }
}

/// The idempotent producer's state machine (see the module docs).
///
/// ```
/// use kafka_producer::internals::idempotence::{Action, Drain, Idempotence, ProducerIdAndEpoch};
/// use kafka_client::TopicPartition;
/// let mut st = Idempotence::new();
/// if st.next_action() == Some(Action::InitProducerId) {
///     st.handle_init_producer_id(Ok(ProducerIdAndEpoch { producer_id: 7, epoch: 0 }));
/// }
/// let tp = TopicPartition::new("orders", 0);
/// if let Drain::New = st.may_drain(&tp, 1) {
///     let seq = st.assign(&tp, 1, 3);
///     assert_eq!(seq.base_sequence, 0);
/// }
/// st.handle_completed(&tp, 1, 41);
/// assert!(!st.has_inflight(&tp));
/// ```
#[derive(Debug, Clone)]
pub struct Idempotence {
    /// Where the producer id is (see the state diagram in the module docs).
    phase: Phase,
    /// The producer id and epoch batches are sequenced under (`NONE` before InitProducerId).
    producer: ProducerIdAndEpoch,
    /// Each partition's sequences and in-flight batches.
    partitions: HashMap<TopicPartition, PartitionState>,
    /// A batch failed in a way only a new epoch fixes: the next `next_action` bumps it.
    epoch_bump_required: bool,
    /// The partitions whose sequences restart at 0 (their batches rewritten) at that bump.
    partitions_to_rewrite: BTreeSet<TopicPartition>,
    /// Partitions whose last batch failed with an unknown outcome, and the next sequence then:
    /// nothing more is drained until it is resolved (Java's `hasUnresolvedSequence`).
    unresolved: BTreeMap<TopicPartition, i32>,
    /// Batches to re-encode with a new producer id, epoch or sequence, for the sender to take.
    pending_rewrites: Vec<Rewrite>,
    /// Epoch bumps so far (a metric).
    bumps: u64,
    /// Transactional producer: the transaction manager owns the producer id
    /// (no InitProducerId here, no local epoch bumps; see [`Idempotence::new_transactional`]).
    transactional: bool,
    /// The broker refuses an epoch's first batch unless it starts at
    /// sequence 0 (transaction version 2): no need to send it alone.
    broker_checks_epoch_start: bool,
}

impl Default for Idempotence {
    fn default() -> Self {
        Self::new()
    }
}

impl Idempotence {
    /// A producer without an id yet.
    ///
    /// ```
    /// use kafka_producer::internals::idempotence::{Idempotence, Phase, ProducerIdAndEpoch};
    /// let st = Idempotence::new();
    /// assert_eq!((st.phase(), st.producer()), (Phase::Uninitialized, ProducerIdAndEpoch::NONE));
    /// ```
    pub fn new() -> Self {
        Self {
            phase: Phase::Uninitialized,
            producer: ProducerIdAndEpoch::NONE,
            partitions: HashMap::new(),
            epoch_bump_required: false,
            partitions_to_rewrite: BTreeSet::new(),
            unresolved: BTreeMap::new(),
            pending_rewrites: Vec::new(),
            bumps: 0,
            transactional: false,
            broker_checks_epoch_start: false,
        }
    }

    /// The sequence bookkeeping of a transactional producer: the producer
    /// id/epoch come from the transaction manager ([`Self::set_producer`]),
    /// [`Self::next_action`] never asks for InitProducerId and no epoch is
    /// bumped locally — a failed batch aborts the transaction instead, and
    /// the manager bumps the epoch (KIP-360 InitProducerId, or TV2 EndTxn).
    /// As in Java's `TransactionManager.canRetry`, UNKNOWN_PRODUCER_ID with a
    /// known log start offset and an OUT_OF_ORDER_SEQUENCE_NUMBER of the
    /// batch next in line are not retried.
    ///
    /// ```
    /// use kafka_producer::internals::idempotence::{Idempotence, Phase, ProducerIdAndEpoch};
    /// let mut st = Idempotence::new_transactional();
    /// assert_eq!(st.next_action(), None); // the transaction manager runs InitProducerId
    /// st.set_producer(ProducerIdAndEpoch { producer_id: 9, epoch: 2 }, true);
    /// assert_eq!(st.phase(), Phase::Ready);
    /// ```
    pub fn new_transactional() -> Self {
        Self {
            transactional: true,
            ..Self::new()
        }
    }

    /// True for [`Self::new_transactional`].
    pub fn is_transactional(&self) -> bool {
        self.transactional
    }

    /// Tells whether the broker refuses the first batch of an epoch unless it
    /// starts at sequence 0 — Kafka's transaction version 2, whose every
    /// transaction is a new epoch. Then an epoch's first batch need not
    /// travel alone: a second one cannot overtake it (see
    /// [`Self::may_drain`]).
    pub fn set_broker_checks_epoch_start(&mut self, checks: bool) {
        self.broker_checks_epoch_start = checks;
    }

    /// Installs a producer id/epoch chosen elsewhere (the transaction
    /// manager's `ProducerIdAndEpochChanged`) and moves to [`Phase::Ready`].
    /// With `reset_sequences`, every partition without in-flight batches
    /// restarts at sequence 0 (partitions with in-flight batches of the old
    /// epoch restart once those resolve, see [`Self::assign`]).
    pub fn set_producer(&mut self, producer: ProducerIdAndEpoch, reset_sequences: bool) {
        self.producer = producer;
        if !matches!(self.phase, Phase::Fatal(_)) {
            self.phase = Phase::Ready;
        }
        if reset_sequences {
            self.partitions.retain(|_, p| !p.inflight.is_empty());
            let partitions = &self.partitions;
            self.unresolved.retain(|tp, _| partitions.contains_key(tp));
            self.partitions_to_rewrite.clear();
            self.epoch_bump_required = false;
        }
    }

    /// The phase.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The current producer id and epoch.
    pub fn producer(&self) -> ProducerIdAndEpoch {
        self.producer
    }

    /// Local epoch bumps so far.
    pub fn epoch_bumps(&self) -> u64 {
        self.bumps
    }

    /// A partition's bookkeeping, if it was ever drained.
    pub fn partition(&self, tp: &TopicPartition) -> Option<&PartitionState> {
        self.partitions.get(tp)
    }

    /// True when `tp` has an unresolved sequence (an expired in-flight batch).
    pub fn has_unresolved_sequence(&self, tp: &TopicPartition) -> bool {
        self.unresolved.contains_key(tp)
    }

    /// True when `tp` has in-flight batches.
    pub fn has_inflight(&self, tp: &TopicPartition) -> bool {
        self.partitions
            .get(tp)
            .is_some_and(|p| !p.inflight.is_empty())
    }

    /// The in-flight state of batch `id` of `tp`, if it is in flight.
    pub fn batch(&self, tp: &TopicPartition, id: BatchId) -> Option<BatchSequence> {
        self.partitions
            .get(tp)?
            .inflight
            .iter()
            .find(|(b, _)| *b == id)
            .map(|(_, s)| *s)
    }

    /// Runs the start-of-pass housekeeping (`maybeResolveSequences`, then
    /// `bumpIdempotentEpochAndResetIdIfNeeded`) and returns a request to send,
    /// if any. Rewrites produced by an epoch bump are collected with
    /// [`Self::take_rewrites`].
    pub fn next_action(&mut self) -> Option<Action> {
        if matches!(self.phase, Phase::Fatal(_)) {
            return None;
        }
        self.maybe_resolve_sequences();
        if self.epoch_bump_required {
            self.bump_epoch();
        }
        if self.phase == Phase::Uninitialized && !self.transactional {
            self.phase = Phase::Initializing;
            return Some(Action::InitProducerId);
        }
        None
    }

    /// Header rewrites of in-flight batches after epoch bumps, since the last call.
    pub fn take_rewrites(&mut self) -> Vec<Rewrite> {
        std::mem::take(&mut self.pending_rewrites)
    }

    /// The InitProducerId outcome: `Ok` sets the producer id and epoch;
    /// a retriable error goes back to `Uninitialized` (the driver backs off),
    /// another error is fatal.
    pub fn handle_init_producer_id(&mut self, result: Result<ProducerIdAndEpoch, ErrorCode>) {
        match result {
            Ok(p) => {
                self.producer = p;
                self.phase = Phase::Ready;
                // Partitions rewritten while the id was being replaced
                // (epoch exhaustion) restart under the new id.
                let mut rewrites = Vec::new();
                for st in self.partitions.values_mut() {
                    if !st.producer.is_valid() {
                        st.start_sequences_at_beginning(p, &mut rewrites);
                    }
                }
                self.pending_rewrites.extend(rewrites);
            }
            Err(e) if e.is_retriable() => self.phase = Phase::Uninitialized,
            Err(e) => self.phase = Phase::Fatal(e),
        }
    }

    /// InitProducerId failed at the connection level (retriable).
    pub fn handle_init_producer_id_disconnect(&mut self) {
        if self.phase == Phase::Initializing {
            self.phase = Phase::Uninitialized;
        }
    }

    fn entry(&mut self, tp: &TopicPartition) -> &mut PartitionState {
        let producer = self.producer;
        self.partitions
            .entry(tp.clone())
            .or_insert_with(|| PartitionState::new(producer))
    }

    /// May the first queued batch `first` of `tp` be drained
    /// (`RecordAccumulator.shouldStopDrainBatchesForPartition`)?
    pub fn may_drain(&self, tp: &TopicPartition, first: BatchId) -> Drain {
        if self.phase != Phase::Ready || !self.producer.is_valid() {
            return Drain::Stop;
        }
        let Some(p) = self.partitions.get(tp) else {
            return Drain::New;
        };
        match p.inflight.iter().find(|(b, _)| *b == first) {
            None => {
                if !p.inflight.is_empty() && p.producer != self.producer {
                    return Drain::Stop; // older epoch still in flight
                }
                if self.unresolved.contains_key(tp) {
                    return Drain::Stop;
                }
                if !self.broker_checks_epoch_start
                    && !p.inflight.is_empty()
                    && p.last_acked_sequence == NO_LAST_ACKED_SEQUENCE
                {
                    // Nothing of this epoch acknowledged yet: the broker may
                    // hold no state for the producer, and then it appends a
                    // batch of any sequence. A second batch must not be able
                    // to overtake the first.
                    return Drain::Stop;
                }
                Drain::New
            }
            Some((_, seq)) => {
                if p.inflight.first().map(|(b, _)| *b) != Some(first) {
                    return Drain::Stop; // wait for the head of line
                }
                Drain::Retry(*seq)
            }
        }
    }

    /// Assigns the next sequence of `tp` to new batch `id` of `records`
    /// records and tracks it in flight. Call only after [`Drain::New`].
    pub fn assign(&mut self, tp: &TopicPartition, id: BatchId, records: i32) -> BatchSequence {
        let producer = self.producer;
        let mut sink = Vec::new();
        let p = self.entry(tp);
        if p.producer != producer && p.inflight.is_empty() {
            // maybeUpdateProducerIdAndEpoch
            p.start_sequences_at_beginning(producer, &mut sink);
        }
        let seq = BatchSequence {
            producer,
            base_sequence: p.next_sequence,
            record_count: records,
            sequence_reset: false,
        };
        p.next_sequence = increment_sequence(p.next_sequence, records);
        p.inflight.push((id, seq));
        seq
    }

    fn remove_inflight(&mut self, tp: &TopicPartition, id: BatchId) -> Option<BatchSequence> {
        let p = self.partitions.get_mut(tp)?;
        let i = p.inflight.iter().position(|(b, _)| *b == id)?;
        Some(p.inflight.remove(i).1)
    }

    /// In-flight batch `id` of `tp`, refused by the broker as too large, was
    /// split into `parts` (their ids and record counts, in record order):
    /// they take its place among the in-flight batches, with its sequences
    /// (the first part its base sequence, each next one where the one
    /// before ends), its producer id and epoch (Java's `ProducerBatch.split`
    /// keeps them, and `RecordAccumulator.splitAndReenqueue` tracks the parts
    /// in flight). The broker wrote nothing of the refused batch, so the
    /// parts are sent, head of line first, as retries would be; the batches
    /// behind it keep their sequences. `None` when `id` is not in flight
    /// (nothing changes then). The record counts must add up to the batch's.
    pub fn split(
        &mut self,
        tp: &TopicPartition,
        id: BatchId,
        parts: &[(BatchId, i32)],
    ) -> Option<Vec<BatchSequence>> {
        let p = self.partitions.get_mut(tp)?;
        let i = p.inflight.iter().position(|(b, _)| *b == id)?;
        let whole = p.inflight[i].1;
        if parts.iter().map(|(_, n)| *n).sum::<i32>() != whole.record_count {
            return None;
        }
        let mut seq = whole.base_sequence;
        let sequences: Vec<BatchSequence> = parts
            .iter()
            .map(|&(_, records)| {
                let s = BatchSequence {
                    base_sequence: seq,
                    record_count: records,
                    ..whole
                };
                seq = increment_sequence(seq, records);
                s
            })
            .collect();
        p.inflight.splice(
            i..=i,
            parts.iter().map(|(b, _)| *b).zip(sequences.iter().copied()),
        );
        Some(sequences)
    }

    /// Batch `id` of `tp` was written at `base_offset` (-1 if unknown).
    pub fn handle_completed(&mut self, tp: &TopicPartition, id: BatchId, base_offset: i64) {
        if let Some(seq) = self.remove_inflight(tp, id) {
            self.handle_late_completed(tp, seq, base_offset);
        }
    }

    /// A batch already given up on ([`Self::handle_expired`]) was written
    /// after all, with state `seq`: the acked sequence/offset advance, which
    /// may resolve the partition's unresolved sequence.
    pub fn handle_late_completed(
        &mut self,
        tp: &TopicPartition,
        seq: BatchSequence,
        base_offset: i64,
    ) {
        let p = self.entry(tp);
        if seq.producer == p.producer {
            let last = seq.last_sequence();
            let newer = p.last_acked_sequence == NO_LAST_ACKED_SEQUENCE
                || (last.wrapping_sub(p.last_acked_sequence) as u32 & 0x7fff_ffff) < (1 << 30);
            if newer {
                p.last_acked_sequence = last;
            }
        }
        if base_offset >= 0 {
            p.last_acked_offset = p
                .last_acked_offset
                .max(base_offset + i64::from(seq.record_count) - 1);
        }
    }

    fn request_epoch_bump(&mut self, tp: &TopicPartition) {
        if self.transactional {
            return; // the transaction manager bumps (abort + InitProducerId / EndTxn v5)
        }
        self.epoch_bump_required = true;
        self.partitions_to_rewrite.insert(tp.clone());
    }

    /// The broker answered batch `id` of `tp` with `error`.
    /// `delivery_expired`: the batch reached `delivery.timeout.ms`;
    /// `retries_exhausted`: its attempts reached `retries` (Java
    /// `Sender.canRetry`'s first conditions); `log_start_offset` is from the
    /// partition response (-1 if unknown).
    pub fn handle_error(
        &mut self,
        tp: &TopicPartition,
        id: BatchId,
        error: ErrorCode,
        log_start_offset: i64,
        delivery_expired: bool,
        retries_exhausted: bool,
    ) -> ErrorDecision {
        let seq = self.batch(tp, id);
        let retry_allowed = !delivery_expired && !retries_exhausted;
        if retry_allowed && self.can_retry(tp, seq, error, log_start_offset) {
            return ErrorDecision::Retry;
        }
        if error == ErrorCode::DuplicateSequenceNumber {
            self.handle_completed(tp, id, -1);
            return ErrorDecision::SucceedWithoutOffset;
        }
        // failBatch(batch, error, adjustSequenceNumbers = attempts < retries)
        let fatal = matches!(
            error,
            ErrorCode::ClusterAuthorizationFailed
                | ErrorCode::TransactionalIdAuthorizationFailed
                | ErrorCode::ProducerFenced
                | ErrorCode::UnsupportedVersion
                | ErrorCode::InvalidProducerIdMapping
        );
        self.remove_inflight(tp, id);
        if fatal {
            self.phase = Phase::Fatal(error);
            return ErrorDecision::Fail { fatal: true };
        }
        let out_of_order = matches!(
            error,
            ErrorCode::OutOfOrderSequenceNumber | ErrorCode::UnknownProducerId
        );
        if out_of_order && seq.is_some_and(|s| s.producer.producer_id == self.producer.producer_id)
        {
            self.request_epoch_bump(tp);
        }
        if !retries_exhausted {
            self.request_epoch_bump(tp);
        } else if seq.is_some() {
            // Unknown whether the sequence was written.
            let next = self.entry(tp).next_sequence;
            self.unresolved.insert(tp.clone(), next);
        }
        ErrorDecision::Fail { fatal: false }
    }

    /// `TransactionManager.canRetry` for the idempotent producer.
    fn can_retry(
        &mut self,
        tp: &TopicPartition,
        seq: Option<BatchSequence>,
        error: ErrorCode,
        log_start_offset: i64,
    ) -> bool {
        let reset = seq.is_some_and(|s| s.sequence_reset);
        match error {
            ErrorCode::UnknownProducerId => {
                if log_start_offset == -1 || reset {
                    return true;
                }
                if self.transactional {
                    return false; // abortable: the abort bumps the epoch
                }
                // Either retention removed the producer state (last acked
                // offset < log start offset) or it is lost otherwise: the
                // idempotent producer bumps the epoch and retries.
                self.request_epoch_bump(tp);
                true
            }
            ErrorCode::OutOfOrderSequenceNumber => {
                let unresolved = self.unresolved.contains_key(tp);
                let base = seq.map(|s| s.base_sequence).unwrap_or(-1);
                let next_in_line = self
                    .partitions
                    .get(tp)
                    .is_some_and(|p| p.is_next_sequence(base));
                if !unresolved && (reset || !next_in_line) {
                    return true;
                }
                if self.transactional {
                    return false;
                }
                let next_for_unresolved =
                    unresolved && self.unresolved.get(tp).is_some_and(|_| next_in_line);
                if !unresolved || next_for_unresolved {
                    self.request_epoch_bump(tp);
                }
                true
            }
            e => e.is_retriable(),
        }
    }

    /// Batch `id` of `tp` expired (`delivery.timeout.ms`) after it was
    /// drained; its outcome is unknown, so the partition's sequence becomes
    /// unresolved. Batches never drained have no sequence: nothing to do.
    pub fn handle_expired(&mut self, tp: &TopicPartition, id: BatchId) {
        if self.remove_inflight(tp, id).is_some() {
            let next = self.entry(tp).next_sequence;
            self.unresolved.insert(tp.clone(), next);
        }
    }

    /// A batch of `tp` failed locally after drain without a broker answer
    /// (e.g. a fatal encode error): like an expiry.
    pub fn handle_local_failure(&mut self, tp: &TopicPartition, id: BatchId) {
        self.handle_expired(tp, id);
    }

    fn maybe_resolve_sequences(&mut self) {
        let tps: Vec<TopicPartition> = self.unresolved.keys().cloned().collect();
        for tp in tps {
            let Some(p) = self.partitions.get(&tp) else {
                self.unresolved.remove(&tp);
                continue;
            };
            if !p.inflight.is_empty() {
                continue;
            }
            if !p.is_next_sequence(p.next_sequence) {
                // All in-flight batches were expired: a gap of unknown state.
                self.request_epoch_bump(&tp);
            }
            self.unresolved.remove(&tp);
        }
    }

    fn bump_epoch(&mut self) {
        if self.producer.epoch == i16::MAX {
            // resetIdempotentProducerId
            self.producer = ProducerIdAndEpoch::NONE;
            if self.phase == Phase::Ready {
                self.phase = Phase::Uninitialized;
            }
        } else if self.producer.is_valid() {
            self.producer.epoch += 1;
        }
        self.bumps += 1;
        let producer = self.producer;
        let tps = std::mem::take(&mut self.partitions_to_rewrite);
        let mut rewrites = Vec::new();
        for tp in tps {
            let p = self
                .partitions
                .entry(tp.clone())
                .or_insert_with(|| PartitionState::new(producer));
            p.start_sequences_at_beginning(producer, &mut rewrites);
            self.unresolved.remove(&tp);
        }
        self.pending_rewrites.extend(rewrites);
        self.epoch_bump_required = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ErrorCode as E;

    /// A machine that has its producer id and epoch, past InitProducerId.
    fn initialized(producer_id: i64, epoch: i16) -> Idempotence {
        let mut st = Idempotence::new();
        st.next_action();
        st.handle_init_producer_id(Ok(ProducerIdAndEpoch { producer_id, epoch }));
        st
    }

    fn ready() -> (Idempotence, TopicPartition) {
        let mut st = Idempotence::new();
        assert_eq!(st.phase(), Phase::Uninitialized);
        assert_eq!(st.next_action(), Some(Action::InitProducerId));
        assert_eq!(st.phase(), Phase::Initializing);
        assert_eq!(st.next_action(), None, "one InitProducerId at a time");
        st.handle_init_producer_id(Ok(ProducerIdAndEpoch {
            producer_id: 100,
            epoch: 3,
        }));
        assert_eq!(st.phase(), Phase::Ready);
        (st, TopicPartition::new("t", 0))
    }

    #[test]
    fn init_errors() {
        let mut st = Idempotence::new();
        let tp = TopicPartition::new("t", 0);
        assert_eq!(st.may_drain(&tp, 1), Drain::Stop, "no pid yet");
        st.next_action();
        st.handle_init_producer_id(Err(E::CoordinatorLoadInProgress));
        assert_eq!(st.phase(), Phase::Uninitialized);
        st.next_action();
        st.handle_init_producer_id_disconnect();
        assert_eq!(st.phase(), Phase::Uninitialized);
        st.next_action();
        st.handle_init_producer_id(Err(E::ClusterAuthorizationFailed));
        assert_eq!(st.phase(), Phase::Fatal(E::ClusterAuthorizationFailed));
        assert_eq!(st.next_action(), None);
        assert_eq!(st.may_drain(&tp, 1), Drain::Stop);
    }

    #[test]
    fn sequences_assigned_at_drain_and_acked() {
        let (mut st, tp) = ready();
        let a = st.assign(&tp, 1, 10);
        let b = st.assign(&tp, 2, 5);
        assert_eq!((a.base_sequence, b.base_sequence), (0, 10));
        assert_eq!(a.producer.epoch, 3);
        assert_eq!(st.partition(&tp).unwrap().next_sequence, 15);
        st.handle_completed(&tp, 1, 1000);
        st.handle_completed(&tp, 2, 1010);
        let p = st.partition(&tp).unwrap();
        assert_eq!((p.last_acked_sequence, p.last_acked_offset), (14, 1014));
        assert!(!st.has_inflight(&tp));
        // Another partition is independent.
        let tp1 = TopicPartition::new("t", 1);
        assert_eq!(st.assign(&tp1, 3, 1).base_sequence, 0);
    }

    #[test]
    fn sequence_wraps() {
        let (mut st, tp) = ready();
        st.entry(&tp).next_sequence = i32::MAX - 1;
        let a = st.assign(&tp, 1, 5);
        assert_eq!(a.base_sequence, i32::MAX - 1);
        assert_eq!(a.last_sequence(), 2);
        assert_eq!(st.partition(&tp).unwrap().next_sequence, 3);
        st.handle_completed(&tp, 1, 0);
        assert_eq!(st.partition(&tp).unwrap().last_acked_sequence, 2);
        let b = st.assign(&tp, 2, 1);
        assert_eq!(b.base_sequence, 3);
        assert!(st.partition(&tp).unwrap().is_next_sequence(3));
    }

    /// Invariant: the parts of a batch split after MESSAGE_TOO_LARGE take
    /// its sequence range (consecutive, from its base sequence, same
    /// producer id and epoch) and its place among the in-flight batches;
    /// the batch behind it keeps its sequence, is refused out of order and
    /// retried after the parts; every sequence is acknowledged once, in
    /// order.
    #[test]
    fn split_parts_take_the_refused_batchs_sequences_and_place() {
        let (mut st, tp) = ready();
        st.assign(&tp, 1, 10); // sequences 0..=9
        st.handle_completed(&tp, 1, 0);
        let big = st.assign(&tp, 2, 30); // 10..=39, refused as too large
        let behind = st.assign(&tp, 3, 5); // 40..=44
        assert_eq!((big.base_sequence, behind.base_sequence), (10, 40));
        assert_eq!(st.split(&tp, 99, &[(7, 30)]), None, "not in flight");
        assert_eq!(st.split(&tp, 2, &[(7, 29)]), None, "records must add up");
        let parts = st.split(&tp, 2, &[(10, 12), (11, 12), (12, 6)]).unwrap();
        let bases: Vec<i32> = parts.iter().map(|s| s.base_sequence).collect();
        assert_eq!(bases, [10, 22, 34]);
        assert!(parts.iter().all(|s| s.producer == big.producer));
        let order: Vec<BatchId> = st
            .partition(&tp)
            .unwrap()
            .inflight()
            .map(|(b, _)| b)
            .collect();
        assert_eq!(order, [10, 11, 12, 3]);
        // The batch behind is refused out of order (the broker expects 10):
        // retried, no epoch bump.
        let d = st.handle_error(&tp, 3, E::OutOfOrderSequenceNumber, 0, false, false);
        assert_eq!(d, ErrorDecision::Retry);
        assert_eq!(st.next_action(), None);
        assert!(st.take_rewrites().is_empty());
        // The parts go first, one at a time, as retries.
        assert_eq!(st.may_drain(&tp, 3), Drain::Stop);
        assert_eq!(st.may_drain(&tp, 11), Drain::Stop);
        assert!(matches!(st.may_drain(&tp, 10), Drain::Retry(s) if s.base_sequence == 10));
        st.handle_completed(&tp, 10, 10);
        assert!(matches!(st.may_drain(&tp, 11), Drain::Retry(s) if s.base_sequence == 22));
        st.handle_completed(&tp, 11, 22);
        st.handle_completed(&tp, 12, 34);
        assert!(matches!(st.may_drain(&tp, 3), Drain::Retry(s) if s.base_sequence == 40));
        st.handle_completed(&tp, 3, 40);
        let p = st.partition(&tp).unwrap();
        assert_eq!((p.last_acked_sequence, p.next_sequence), (44, 45));
    }

    #[test]
    fn retried_batch_only_from_head_of_line() {
        let (mut st, tp) = ready();
        st.assign(&tp, 100, 1); // sequence 0, acknowledged: pipelining allowed
        st.handle_completed(&tp, 100, 0);
        for id in 1..=3 {
            assert!(st.may_drain(&tp, id).is_new());
            st.assign(&tp, id, 1);
        }
        // Batch 1 fails retriably: it keeps sequence 1.
        let d = st.handle_error(&tp, 1, E::NotLeaderOrFollower, -1, false, false);
        assert_eq!(d, ErrorDecision::Retry);
        // Batch 2 gets OUT_OF_ORDER (not next in line): retry, no bump.
        let d = st.handle_error(&tp, 2, E::OutOfOrderSequenceNumber, 0, false, false);
        assert_eq!(d, ErrorDecision::Retry);
        assert_eq!(st.next_action(), None);
        assert!(st.take_rewrites().is_empty());
        // Only the head may be drained.
        assert_eq!(st.may_drain(&tp, 2), Drain::Stop);
        match st.may_drain(&tp, 1) {
            Drain::Retry(s) => assert_eq!(s.base_sequence, 1),
            d => panic!("{d:?}"),
        }
        st.handle_completed(&tp, 1, 50);
        assert!(matches!(st.may_drain(&tp, 2), Drain::Retry(s) if s.base_sequence == 2));
    }

    #[test]
    fn the_first_batch_of_an_epoch_travels_alone_until_acknowledged() {
        // Invariant: while nothing of the epoch is acknowledged in a
        // partition (the broker may hold no state and then appends any
        // sequence), no second batch is drained; a refused first batch is
        // retried alone, and pipelining starts with its acknowledgement.
        let (mut st, tp) = ready();
        assert!(st.may_drain(&tp, 1).is_new());
        st.assign(&tp, 1, 5);
        assert_eq!(st.may_drain(&tp, 2), Drain::Stop);
        let d = st.handle_error(&tp, 1, E::NotEnoughReplicas, 0, false, false);
        assert_eq!(d, ErrorDecision::Retry);
        assert_eq!(
            st.may_drain(&tp, 2),
            Drain::Stop,
            "the retry goes first, alone"
        );
        assert!(matches!(st.may_drain(&tp, 1), Drain::Retry(s) if s.base_sequence == 0));
        st.handle_completed(&tp, 1, 0);
        assert!(st.may_drain(&tp, 2).is_new());
        st.assign(&tp, 2, 5);
        assert!(
            st.may_drain(&tp, 3).is_new(),
            "pipelined once the broker holds state"
        );
        // A new epoch (local bump after a gap) starts alone again.
        st.assign(&tp, 3, 5);
        let d = st.handle_error(&tp, 2, E::OutOfOrderSequenceNumber, 0, false, false);
        assert_eq!(d, ErrorDecision::Retry);
        st.next_action();
        st.take_rewrites();
        assert_eq!(st.producer().epoch, 4);
        assert_eq!(st.may_drain(&tp, 4), Drain::Stop);
    }

    #[test]
    fn out_of_order_next_in_line_bumps_epoch_and_rewrites() {
        let (mut st, tp) = ready();
        st.assign(&tp, 1, 2);
        st.handle_completed(&tp, 1, 0);
        st.assign(&tp, 2, 3); // seq 2
        st.assign(&tp, 3, 4); // seq 5
        let d = st.handle_error(&tp, 2, E::OutOfOrderSequenceNumber, 0, false, false);
        assert_eq!(d, ErrorDecision::Retry);
        assert_eq!(st.next_action(), None);
        assert_eq!(st.producer().epoch, 4, "local bump");
        let rw = st.take_rewrites();
        assert_eq!(rw.len(), 2);
        assert_eq!((rw[0].batch, rw[0].sequence.base_sequence), (2, 0));
        assert_eq!((rw[1].batch, rw[1].sequence.base_sequence), (3, 3));
        assert!(
            rw.iter()
                .all(|r| r.sequence.sequence_reset && r.sequence.producer.epoch == 4)
        );
        let p = st.partition(&tp).unwrap();
        assert_eq!(
            (p.next_sequence, p.last_acked_sequence),
            (7, NO_LAST_ACKED_SEQUENCE)
        );
        // A reset batch answered OUT_OF_ORDER again is just retried.
        assert_eq!(
            st.handle_error(&tp, 3, E::OutOfOrderSequenceNumber, 0, false, false),
            ErrorDecision::Retry
        );
        assert_eq!(st.producer().epoch, 4);
    }

    #[test]
    fn other_partitions_move_to_new_epoch_after_inflight_done() {
        let (mut st, tp) = ready();
        let tp1 = TopicPartition::new("t", 1);
        st.assign(&tp1, 10, 1);
        st.assign(&tp, 1, 1);
        st.handle_error(&tp, 1, E::OutOfOrderSequenceNumber, 0, false, false);
        st.next_action();
        assert_eq!(st.producer().epoch, 4);
        // tp1 still has an epoch-3 batch in flight: new batches wait.
        assert_eq!(st.may_drain(&tp1, 11), Drain::Stop);
        st.handle_completed(&tp1, 10, 5);
        assert!(st.may_drain(&tp1, 11).is_new());
        let s = st.assign(&tp1, 11, 1);
        assert_eq!((s.producer.epoch, s.base_sequence), (4, 0));
    }

    #[test]
    fn unknown_producer_id() {
        let (mut st, tp) = ready();
        st.assign(&tp, 1, 1);
        // Log start offset unknown: plain retry.
        assert_eq!(
            st.handle_error(&tp, 1, E::UnknownProducerId, -1, false, false),
            ErrorDecision::Retry
        );
        st.next_action();
        assert_eq!(st.producer().epoch, 3);
        // Known log start offset beyond the last ack: bump + reset, retry.
        assert_eq!(
            st.handle_error(&tp, 1, E::UnknownProducerId, 10, false, false),
            ErrorDecision::Retry
        );
        st.next_action();
        assert_eq!(st.producer().epoch, 4);
        let rw = st.take_rewrites();
        assert_eq!(rw[0].sequence.base_sequence, 0);
        // Already reset: retried without another bump.
        assert_eq!(
            st.handle_error(&tp, 1, E::UnknownProducerId, 10, false, false),
            ErrorDecision::Retry
        );
        st.next_action();
        assert_eq!(st.producer().epoch, 4);
    }

    #[test]
    fn duplicate_sequence_is_success_without_offset() {
        let (mut st, tp) = ready();
        st.assign(&tp, 1, 4);
        assert_eq!(
            st.handle_error(&tp, 1, E::DuplicateSequenceNumber, 0, false, false),
            ErrorDecision::SucceedWithoutOffset
        );
        let p = st.partition(&tp).unwrap();
        assert_eq!((p.last_acked_sequence, p.last_acked_offset), (3, -1));
        assert!(!st.has_inflight(&tp));
    }

    #[test]
    fn fatal_errors() {
        for e in [
            E::ProducerFenced,
            E::ClusterAuthorizationFailed,
            E::UnsupportedVersion,
        ] {
            let (mut st, tp) = ready();
            st.assign(&tp, 1, 1);
            assert_eq!(
                st.handle_error(&tp, 1, e, 0, false, false),
                ErrorDecision::Fail { fatal: true }
            );
            assert_eq!(st.phase(), Phase::Fatal(e));
            assert_eq!(st.may_drain(&tp, 2), Drain::Stop);
        }
    }

    #[test]
    fn non_retriable_failure_bumps_epoch() {
        let (mut st, tp) = ready();
        st.assign(&tp, 1, 1);
        st.assign(&tp, 2, 1);
        for e in [E::MessageTooLarge, E::InvalidProducerEpoch] {
            let id = if e == E::MessageTooLarge { 1 } else { 2 };
            assert_eq!(
                st.handle_error(&tp, id, e, 0, false, false),
                ErrorDecision::Fail { fatal: false }
            );
        }
        st.next_action();
        assert_eq!(st.producer().epoch, 4);
        assert_eq!(st.partition(&tp).unwrap().next_sequence, 0);
    }

    #[test]
    fn retries_exhausted_leaves_unresolved_then_resolves() {
        let (mut st, tp) = ready();
        st.assign(&tp, 1, 1);
        st.assign(&tp, 2, 1);
        // Retriable error but no retry allowed (delivery timeout / retries).
        assert_eq!(
            st.handle_error(&tp, 1, E::NotLeaderOrFollower, -1, false, true),
            ErrorDecision::Fail { fatal: false }
        );
        assert!(st.has_unresolved_sequence(&tp));
        assert_eq!(st.may_drain(&tp, 3), Drain::Stop, "new batches wait");
        // Batch 2 succeeds: the sequence was in fact written (acked 1 => next 2).
        st.handle_completed(&tp, 2, 7);
        st.next_action();
        assert!(!st.has_unresolved_sequence(&tp));
        assert_eq!(st.producer().epoch, 3, "resolved without a bump");
        assert!(st.may_drain(&tp, 3).is_new());
    }

    #[test]
    fn expired_inflight_batch_forces_epoch_bump() {
        let (mut st, tp) = ready();
        st.assign(&tp, 1, 3);
        st.handle_expired(&tp, 1);
        assert!(st.has_unresolved_sequence(&tp));
        assert_eq!(st.may_drain(&tp, 2), Drain::Stop);
        st.next_action(); // nothing in flight, next 3 != acked(-1)+1 → bump
        assert_eq!(st.producer().epoch, 4);
        assert!(!st.has_unresolved_sequence(&tp));
        let s = st.assign(&tp, 2, 1);
        assert_eq!((s.base_sequence, s.producer.epoch), (0, 4));
        // Expiring a batch that was never drained is a no-op.
        st.handle_expired(&tp, 99);
        assert!(!st.has_unresolved_sequence(&tp));
    }

    #[test]
    fn epoch_exhaustion_gets_new_producer_id() {
        let mut st = Idempotence::new();
        st.next_action();
        st.handle_init_producer_id(Ok(ProducerIdAndEpoch {
            producer_id: 5,
            epoch: i16::MAX,
        }));
        let tp = TopicPartition::new("t", 0);
        st.assign(&tp, 1, 1);
        st.handle_error(&tp, 1, E::OutOfOrderSequenceNumber, 0, false, false);
        assert_eq!(st.next_action(), Some(Action::InitProducerId));
        assert_eq!(st.producer(), ProducerIdAndEpoch::NONE);
        assert_eq!(st.may_drain(&tp, 1), Drain::Stop);
        st.handle_init_producer_id(Ok(ProducerIdAndEpoch {
            producer_id: 6,
            epoch: 0,
        }));
        assert!(matches!(st.may_drain(&tp, 1), Drain::Retry(_)));
    }

    /// A batch's state: the producer id and epoch, and sequences from the partition's next one.
    #[test]
    fn assign_numbers_a_batch_from_the_partitions_next_sequence() {
        let mut st = initialized(7, 0);
        let tp = TopicPartition::new("orders", 0);
        let seq = st.assign(&tp, 1, 10);
        assert_eq!(
            (seq.base_sequence, seq.record_count, seq.last_sequence()),
            (0, 10, 9)
        );
        assert_eq!(
            seq.producer,
            ProducerIdAndEpoch {
                producer_id: 7,
                epoch: 0
            }
        );
        assert!(!seq.sequence_reset);
    }

    /// A batch's last sequence wraps past `i32::MAX` to 0, as the broker counts.
    #[test]
    fn last_sequence_wraps_past_i32_max() {
        use crate::idempotence::{BatchSequence, ProducerIdAndEpoch};
        let seq = BatchSequence {
            producer: ProducerIdAndEpoch {
                producer_id: 7,
                epoch: 0,
            },
            base_sequence: i32::MAX - 1,
            record_count: 3,
            sequence_reset: false,
        };
        assert_eq!(seq.last_sequence(), 0); // MAX - 1, MAX, then wraps to 0
    }

    /// The phases run Uninitialized, Initializing, then Fatal on a non-retriable InitProducerId error.
    #[test]
    fn a_non_retriable_init_producer_id_error_is_fatal() {
        use crate::idempotence::{Idempotence, Phase};
        use kafka_proto::ErrorCode;
        let mut st = Idempotence::new();
        assert_eq!(st.phase(), Phase::Uninitialized);
        st.next_action(); // InitProducerId
        assert_eq!(st.phase(), Phase::Initializing);
        st.handle_init_producer_id(Err(ErrorCode::ClusterAuthorizationFailed));
        assert_eq!(
            st.phase(),
            Phase::Fatal(ErrorCode::ClusterAuthorizationFailed)
        );
    }

    /// The idempotent producer asks for InitProducerId; the transactional one leaves it to the transaction manager.
    #[test]
    fn only_the_idempotent_producer_asks_for_init_producer_id() {
        use crate::idempotence::{Action, Idempotence};
        assert_eq!(
            Idempotence::new().next_action(),
            Some(Action::InitProducerId)
        );
        assert_eq!(Idempotence::new_transactional().next_action(), None);
    }

    /// A batch failing for good leaves a gap: the epoch is bumped and the batch after it is rewritten from sequence 0.
    #[test]
    fn a_gap_left_by_a_failed_batch_rewrites_the_next_under_a_new_epoch() {
        let mut st = initialized(7, 0);
        let tp = TopicPartition::new("orders", 0);
        use kafka_proto::ErrorCode;
        st.assign(&tp, 1, 10); // sequences 0..=9
        st.assign(&tp, 2, 5); // sequences 10..=14
        // Batch 1 fails for good: batch 2 would leave a gap, so the epoch is bumped.
        st.handle_error(&tp, 1, ErrorCode::MessageTooLarge, -1, false, false);
        st.next_action();
        let [rewrite] = st.take_rewrites()[..] else {
            panic!("one batch in flight")
        };
        assert_eq!((rewrite.batch, rewrite.sequence.base_sequence), (2, 0));
        assert_eq!(rewrite.sequence.producer.epoch, 1);
    }

    /// No producer id: nothing is drained; a retried batch is drained again with the same sequence.
    #[test]
    fn a_retried_batch_is_drained_with_its_sequence() {
        let mut st = initialized(7, 0);
        let tp = TopicPartition::new("orders", 0);
        use kafka_proto::ErrorCode;
        assert_eq!(Idempotence::new().may_drain(&tp, 1), Drain::Stop); // no producer id yet
        assert_eq!(st.may_drain(&tp, 1), Drain::New);
        let seq = st.assign(&tp, 1, 10);
        st.handle_error(&tp, 1, ErrorCode::NotLeaderOrFollower, -1, false, false);
        assert_eq!(st.may_drain(&tp, 1), Drain::Retry(seq)); // resent with the same sequence
    }

    /// A batch already in flight is not new to the drain.
    #[test]
    fn an_in_flight_first_batch_is_not_new() {
        let mut st = initialized(7, 0);
        let tp = TopicPartition::new("orders", 0);
        assert!(st.may_drain(&tp, 1).is_new());
        st.assign(&tp, 1, 10);
        assert!(!st.may_drain(&tp, 1).is_new()); // in flight: a retry, not new
    }

    /// Retriable errors retry, DUPLICATE_SEQUENCE_NUMBER succeeds without an offset, PRODUCER_FENCED is fatal.
    #[test]
    fn broker_errors_decide_retry_duplicate_or_fatal() {
        let mut st = initialized(7, 0);
        let tp = TopicPartition::new("orders", 0);
        use kafka_proto::ErrorCode;
        st.assign(&tp, 1, 1);
        st.assign(&tp, 2, 1);
        st.assign(&tp, 3, 1);
        assert_eq!(
            st.handle_error(&tp, 1, ErrorCode::NotEnoughReplicas, -1, false, false),
            ErrorDecision::Retry
        );
        assert_eq!(
            st.handle_error(&tp, 2, ErrorCode::DuplicateSequenceNumber, -1, false, false),
            ErrorDecision::SucceedWithoutOffset
        );
        assert_eq!(
            st.handle_error(&tp, 3, ErrorCode::ProducerFenced, -1, false, false),
            ErrorDecision::Fail { fatal: true }
        );
    }

    /// An acknowledged batch advances the next and acknowledged sequences and the offset.
    #[test]
    fn an_acknowledged_batch_advances_the_partitions_sequences() {
        let mut st = initialized(7, 0);
        let tp = TopicPartition::new("orders", 0);
        st.assign(&tp, 1, 10);
        st.handle_completed(&tp, 1, 100);
        let p = st.partition(&tp).unwrap();
        assert_eq!(
            (p.next_sequence, p.last_acked_sequence, p.last_acked_offset),
            (10, 9, 109)
        );
    }

    /// In-flight batches are listed in sequence order.
    #[test]
    fn in_flight_batches_are_listed_in_sequence_order() {
        let mut st = initialized(7, 0);
        let tp = TopicPartition::new("orders", 0);
        st.assign(&tp, 1, 10);
        st.assign(&tp, 2, 5);
        let ids: Vec<BatchId> = st
            .partition(&tp)
            .unwrap()
            .inflight()
            .map(|(id, _)| id)
            .collect();
        assert_eq!(ids, [1, 2]);
    }

    /// Only `new_transactional` makes a transactional state machine.
    #[test]
    fn is_transactional_tells_the_two_constructors_apart() {
        use crate::idempotence::Idempotence;
        assert!(Idempotence::new_transactional().is_transactional());
        assert!(!Idempotence::new().is_transactional());
    }

    /// Under transaction version 2 an epoch's first batch need not travel alone.
    #[test]
    fn a_broker_checking_epoch_start_lets_the_first_batch_be_pipelined() {
        use crate::idempotence::*;
        use kafka_client::TopicPartition;
        let mut st = Idempotence::new_transactional();
        st.set_producer(
            ProducerIdAndEpoch {
                producer_id: 7,
                epoch: 0,
            },
            true,
        );
        let tp = TopicPartition::new("orders", 0);
        st.assign(&tp, 1, 10);
        assert_eq!(st.may_drain(&tp, 2), Drain::Stop);
        st.set_broker_checks_epoch_start(true);
        assert_eq!(st.may_drain(&tp, 2), Drain::New);
    }

    /// A producer epoch installed with `reset_sequences` restarts an idle partition at sequence 0.
    #[test]
    fn a_new_epoch_restarts_sequences_at_zero() {
        use crate::idempotence::{Idempotence, ProducerIdAndEpoch};
        use kafka_client::TopicPartition;
        let tp = TopicPartition::new("orders", 0);
        let mut st = Idempotence::new_transactional();
        st.set_producer(
            ProducerIdAndEpoch {
                producer_id: 9,
                epoch: 0,
            },
            true,
        );
        st.assign(&tp, 1, 3);
        st.handle_completed(&tp, 1, 0);
        // The transaction was aborted and the epoch bumped:
        st.set_producer(
            ProducerIdAndEpoch {
                producer_id: 9,
                epoch: 1,
            },
            true,
        );
        assert_eq!(st.assign(&tp, 2, 1).base_sequence, 0);
    }

    /// An OUT_OF_ORDER_SEQUENCE_NUMBER at the batch next in line bumps the epoch locally (KIP-360), counted.
    #[test]
    fn a_local_epoch_bump_is_counted() {
        let mut st = initialized(7, 0);
        let tp = TopicPartition::new("orders", 0);
        use kafka_proto::ErrorCode;
        st.assign(&tp, 1, 10);
        st.handle_error(&tp, 1, ErrorCode::OutOfOrderSequenceNumber, 0, false, false);
        st.next_action(); // bumps the epoch locally (KIP-360)
        assert_eq!(st.epoch_bumps(), 1);
        assert_eq!(st.producer().epoch, 1);
    }

    /// A partition has bookkeeping once it is drained.
    #[test]
    fn a_partition_is_tracked_from_its_first_drain() {
        let mut st = initialized(7, 0);
        let tp = TopicPartition::new("orders", 0);
        assert!(st.partition(&tp).is_none());
        st.assign(&tp, 1, 10);
        assert_eq!(st.partition(&tp).unwrap().next_sequence, 10);
    }

    /// An expired in-flight batch leaves the partition's sequence unresolved and stops its drain.
    #[test]
    fn an_expired_batch_leaves_the_sequence_unresolved() {
        let mut st = initialized(7, 0);
        let tp = TopicPartition::new("orders", 0);
        st.assign(&tp, 1, 10);
        st.handle_expired(&tp, 1);
        assert!(st.has_unresolved_sequence(&tp));
        assert_eq!(st.may_drain(&tp, 2), Drain::Stop); // until resolved
    }

    /// A partition has in-flight batches until they complete.
    #[test]
    fn has_inflight_follows_the_batches_outcome() {
        let mut st = initialized(7, 0);
        let tp = TopicPartition::new("orders", 0);
        st.assign(&tp, 1, 10);
        assert!(st.has_inflight(&tp));
        st.handle_completed(&tp, 1, 0);
        assert!(!st.has_inflight(&tp));
    }

    /// `batch` finds the state of in-flight batches only.
    #[test]
    fn batch_finds_only_in_flight_batches() {
        let mut st = initialized(7, 0);
        let tp = TopicPartition::new("orders", 0);
        let seq = st.assign(&tp, 1, 10);
        assert_eq!(st.batch(&tp, 1), Some(seq));
        assert_eq!(st.batch(&tp, 2), None);
    }

    /// InitProducerId is asked for once while in flight, and not after it succeeded.
    #[test]
    fn init_producer_id_is_asked_once() {
        use crate::idempotence::{Action, Idempotence, ProducerIdAndEpoch};
        let mut st = Idempotence::new();
        assert_eq!(st.next_action(), Some(Action::InitProducerId));
        assert_eq!(st.next_action(), None); // already in flight
        st.handle_init_producer_id(Ok(ProducerIdAndEpoch {
            producer_id: 7,
            epoch: 0,
        }));
        assert_eq!(st.next_action(), None);
    }

    /// An epoch bump's rewrites reset the sequence and are taken once.
    #[test]
    fn rewrites_are_taken_once() {
        let mut st = initialized(7, 0);
        let tp = TopicPartition::new("orders", 0);
        use kafka_proto::ErrorCode;
        st.assign(&tp, 1, 10);
        st.handle_error(&tp, 1, ErrorCode::OutOfOrderSequenceNumber, 0, false, false); // retried...
        st.next_action(); // ...under epoch 1, from sequence 0
        let rewrites = st.take_rewrites();
        assert_eq!(rewrites.len(), 1);
        assert!(rewrites[0].sequence.sequence_reset);
        assert!(st.take_rewrites().is_empty());
    }

    /// A retriable InitProducerId error goes back to Uninitialized; a later success makes it Ready.
    #[test]
    fn a_retriable_init_producer_id_error_goes_back_to_uninitialized() {
        use crate::idempotence::{Idempotence, Phase, ProducerIdAndEpoch};
        use kafka_proto::ErrorCode;
        let mut st = Idempotence::new();
        st.next_action();
        st.handle_init_producer_id(Err(ErrorCode::CoordinatorLoadInProgress)); // retriable
        assert_eq!(st.phase(), Phase::Uninitialized);
        st.next_action();
        st.handle_init_producer_id(Ok(ProducerIdAndEpoch {
            producer_id: 7,
            epoch: 0,
        }));
        assert_eq!(st.phase(), Phase::Ready);
    }

    /// InitProducerId lost with its connection is asked for again.
    #[test]
    fn a_disconnected_init_producer_id_is_asked_again() {
        use crate::idempotence::{Action, Idempotence};
        let mut st = Idempotence::new();
        st.next_action();
        st.handle_init_producer_id_disconnect();
        assert_eq!(st.next_action(), Some(Action::InitProducerId)); // asked again
    }

    /// An epoch's first batch travels alone until acknowledged; later ones pipeline until a sequence is unresolved.
    #[test]
    fn an_epochs_first_batch_travels_alone() {
        let mut st = initialized(7, 0);
        let tp = TopicPartition::new("orders", 0);
        assert_eq!(st.may_drain(&tp, 1), Drain::New);
        st.assign(&tp, 1, 10);
        // The first batch of an epoch travels alone until it is acknowledged.
        assert_eq!(st.may_drain(&tp, 2), Drain::Stop);
        st.handle_completed(&tp, 1, 0);
        st.assign(&tp, 2, 10);
        assert_eq!(st.may_drain(&tp, 3), Drain::New); // pipelined behind batch 2
        st.handle_expired(&tp, 2);
        assert_eq!(st.may_drain(&tp, 3), Drain::Stop); // unresolved sequence
    }

    /// Sequences are consecutive per partition, each starting at 0.
    #[test]
    fn sequences_are_assigned_per_partition() {
        let mut st = initialized(7, 0);
        let tp = TopicPartition::new("orders", 0);
        assert_eq!(st.assign(&tp, 1, 10).base_sequence, 0);
        assert_eq!(st.assign(&tp, 2, 5).base_sequence, 10);
        assert_eq!(
            st.assign(&TopicPartition::new("orders", 1), 3, 1)
                .base_sequence,
            0
        ); // per partition
    }

    /// A completed batch records its last sequence and offset as acknowledged.
    #[test]
    fn completion_records_the_last_acked_offset() {
        let mut st = initialized(7, 0);
        let tp = TopicPartition::new("orders", 0);
        st.assign(&tp, 1, 10);
        st.handle_completed(&tp, 1, 500);
        let p = st.partition(&tp).unwrap();
        assert_eq!((p.last_acked_sequence, p.last_acked_offset), (9, 509));
    }

    /// A batch given up on but written after all resolves the sequence without an epoch bump.
    #[test]
    fn a_late_completion_resolves_without_a_bump() {
        let mut st = initialized(7, 0);
        let tp = TopicPartition::new("orders", 0);
        let seq = st.assign(&tp, 1, 10);
        st.handle_expired(&tp, 1); // given up on...
        st.handle_late_completed(&tp, seq, 100); // ...but written after all
        st.next_action();
        assert!(!st.has_unresolved_sequence(&tp));
        assert_eq!(st.epoch_bumps(), 0); // no gap: no bump needed
    }

    /// An out-of-order batch next in line retries under a bumped epoch; out of retries it fails, not fatally.
    #[test]
    fn an_out_of_order_batch_retries_under_a_new_epoch_until_out_of_retries() {
        let mut st = initialized(7, 0);
        let tp = TopicPartition::new("orders", 0);
        use kafka_proto::ErrorCode;
        st.assign(&tp, 1, 10);
        // A gap right at the batch next in line: retry it under a bumped epoch.
        let d = st.handle_error(&tp, 1, ErrorCode::OutOfOrderSequenceNumber, 0, false, false);
        assert_eq!(d, ErrorDecision::Retry);
        st.next_action();
        assert_eq!(st.batch(&tp, 1).unwrap().producer.epoch, 1);
        // Out of retries: the batch fails.
        let d = st.handle_error(&tp, 1, ErrorCode::NotEnoughReplicas, -1, false, true);
        assert_eq!(d, ErrorDecision::Fail { fatal: false });
    }

    /// An expired batch's unknown outcome is resolved by bumping the epoch.
    #[test]
    fn an_unresolved_sequence_is_resolved_by_an_epoch_bump() {
        let mut st = initialized(7, 0);
        let tp = TopicPartition::new("orders", 0);
        st.assign(&tp, 1, 10);
        st.handle_expired(&tp, 1);
        assert!(st.has_unresolved_sequence(&tp));
        st.next_action(); // sequences 0..=9 may be missing: bump the epoch
        assert!(!st.has_unresolved_sequence(&tp));
        assert_eq!(st.producer().epoch, 1);
    }

    /// A batch failing locally after drain leaves the sequence unresolved, like an expiry.
    #[test]
    fn a_local_failure_after_drain_is_like_an_expiry() {
        let mut st = initialized(7, 0);
        let tp = TopicPartition::new("orders", 0);
        st.assign(&tp, 1, 10);
        st.handle_local_failure(&tp, 1); // e.g. the batch could not be encoded
        assert!(!st.has_inflight(&tp) && st.has_unresolved_sequence(&tp));
    }
}
