//! The transaction coordinator (Kafka's `TransactionCoordinator` and
//! `TransactionMetadata`), for transaction versions 1 and 2.
//!
//! ```text
//!            AddPartitions / AddOffsets / TV2 Produce, TxnOffsetCommit
//!   Empty ─────────────────────────────────────────────► Ongoing
//!     ▲                                                    │ EndTxn, or the
//!     │ InitProducerId                                     │ transaction timeout
//!     │                                                    ▼ (abort)
//!   CompleteCommit / CompleteAbort ◄── markers written ── PrepareCommit / PrepareAbort
//! ```
//!
//! - InitProducerId allocates a producer id (epoch 0) for a new
//!   transactional id, and bumps the epoch of a known one (a new producer
//!   id when the epoch is exhausted). With KIP-360's producer id and epoch
//!   in the request, only the current producer may bump (a repeat of the
//!   last bump is answered with the same epoch). On an open transaction
//!   it fences the epoch, aborts the transaction and answers
//!   CONCURRENT_TRANSACTIONS (the client retries).
//! - Transaction version 1: the epoch changes only at InitProducerId;
//!   EndTxn must carry the current epoch.
//! - Transaction version 2 (EndTxn v5): every EndTxn bumps the epoch and
//!   writes its markers with the bumped epoch; the response carries the
//!   producer id and epoch of the next transaction. An EndTxn with the
//!   previous epoch is a retry of the last one (NONE if it asked for the
//!   same outcome).
//! - Markers are written `marker_delay` after EndTxn (0: at once); until
//!   then the transaction is in a Prepare state and its producer gets
//!   CONCURRENT_TRANSACTIONS.
//! - A transaction open longer than its timeout is aborted with a bumped
//!   epoch: under version 1 the producer is fenced, under version 2 its
//!   abort is a retry and succeeds.

use super::{ClusterState, CoordinatorKind, Ctx};
use kafka_proto::ErrorCode;
use std::collections::BTreeSet;

/// The state of a transactional id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnState {
    /// No transaction open.
    Empty,
    /// A transaction is open.
    Ongoing,
    /// Committing: markers not yet written.
    PrepareCommit,
    /// Aborting: markers not yet written.
    PrepareAbort,
    /// The last transaction committed.
    CompleteCommit,
    /// The last transaction aborted.
    CompleteAbort,
}

impl TxnState {
    /// The state's name as Kafka's admin APIs spell it.
    pub fn name(self) -> &'static str {
        match self {
            TxnState::Empty => "Empty",
            TxnState::Ongoing => "Ongoing",
            TxnState::PrepareCommit => "PrepareCommit",
            TxnState::PrepareAbort => "PrepareAbort",
            TxnState::CompleteCommit => "CompleteCommit",
            TxnState::CompleteAbort => "CompleteAbort",
        }
    }
}

/// Markers to write when a Prepare state completes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PendingEnd {
    /// Commit markers (true) or abort markers.
    pub commit: bool,
    /// The epoch the markers carry.
    pub marker_epoch: i16,
    /// When the markers are written (ms).
    pub due_ms: i64,
}

/// A transactional id's metadata.
#[derive(Debug, Clone)]
pub(crate) struct TxnMetadata {
    /// The producer id the coordinator gave this transactional id.
    pub producer_id: i64,
    /// The producer id before the last rotation (epoch exhausted), or −1.
    pub previous_producer_id: i64,
    /// The current producer epoch; requests with an older one are fenced.
    pub epoch: i16,
    /// The epoch before the last bump, or −1 (for retries of that bump).
    pub last_epoch: i16,
    /// The transaction timeout InitProducerId asked for.
    pub timeout_ms: i32,
    /// Where the transaction is (see the module diagram).
    pub state: TxnState,
    /// Partitions in the open transaction: the markers go to each.
    pub partitions: BTreeSet<(String, i32)>,
    /// Groups whose offsets the open transaction commits (AddOffsetsToTxn).
    pub groups: BTreeSet<String>,
    /// When the open transaction began, for its timeout.
    pub started_ms: i64,
    /// The last or current transaction uses version 2.
    pub tv2: bool,
    /// Markers due once a Prepare state completes.
    pub pending: Option<PendingEnd>,
}

/// A transactional request's producer: its transactional id, producer id
/// and epoch, and the error code that fences it at the request's version
/// (PRODUCER_FENCED, or INVALID_PRODUCER_EPOCH before KIP-588).
#[derive(Debug, Clone, Copy)]
pub(crate) struct TxnProducer<'a> {
    /// The transactional id.
    pub tid: &'a str,
    /// The producer id the request carries.
    pub pid: i64,
    /// The producer epoch the request carries.
    pub epoch: i16,
    /// The error a stale epoch gets at this request version.
    pub fenced: ErrorCode,
}

/// The epoch at which Kafka rotates to a new producer id.
const EPOCH_EXHAUSTED: i16 = i16::MAX - 1;

/// A transactional request's producer, as the coordinator judges it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Epoch {
    Current,
    /// The epoch before the last bump (a retried EndTxn under version 2).
    Previous,
}

impl ClusterState {
    /// InitProducerId for a transactional id (`None`: idempotent).
    pub(crate) fn init_producer_id(
        &mut self,
        ctx: &Ctx,
        transactional_id: Option<&str>,
        timeout_ms: i32,
        expected: Option<(i64, i16)>,
        fenced_code: ErrorCode,
    ) -> Result<(i64, i16), ErrorCode> {
        let Some(tid) = transactional_id else {
            return Ok((self.allocate_producer_id(), 0));
        };
        self.check_coordinator(ctx, CoordinatorKind::Transaction, tid)?;
        if timeout_ms <= 0 || i64::from(timeout_ms) > self.config.max_transaction_timeout_ms {
            return Err(ErrorCode::InvalidTransactionTimeout);
        }
        if !self.txns.contains_key(tid) {
            let pid = self.allocate_producer_id();
            self.txns.insert(
                tid.to_string(),
                TxnMetadata {
                    producer_id: pid,
                    previous_producer_id: -1,
                    epoch: 0,
                    last_epoch: -1,
                    timeout_ms,
                    state: TxnState::Empty,
                    partitions: BTreeSet::new(),
                    groups: BTreeSet::new(),
                    started_ms: ctx.now_ms,
                    tv2: self.tv2(),
                    pending: None,
                },
            );
            return Ok((pid, 0));
        }
        let m = &self.txns[tid];
        match m.state {
            TxnState::PrepareCommit | TxnState::PrepareAbort => {
                return Err(ErrorCode::ConcurrentTransactions);
            }
            TxnState::Ongoing => {
                // Fence the open transaction's producer and abort it; the
                // client's retry gets the next epoch.
                let bumped = m.epoch.saturating_add(1);
                self.begin_end(tid, false, bumped, ctx.now_ms, true);
                return Err(ErrorCode::ConcurrentTransactions);
            }
            _ => {}
        }
        let tv2 = self.tv2();
        let allocate_needed = m.epoch >= EPOCH_EXHAUSTED;
        let m = self.txns.get_mut(tid).expect("checked above");
        if let Some((pid, epoch)) = expected {
            let current = pid == m.producer_id && epoch == m.epoch;
            let retry = (pid == m.producer_id && epoch == m.last_epoch && m.last_epoch >= 0)
                || (pid == m.previous_producer_id && m.epoch == 0);
            if retry && !current {
                return Ok((m.producer_id, m.epoch));
            }
            if !current {
                return Err(fenced_code);
            }
        }
        m.timeout_ms = timeout_ms;
        m.state = TxnState::Empty;
        m.partitions.clear();
        m.groups.clear();
        m.tv2 = tv2;
        if allocate_needed {
            Ok((self.renew_producer_id(tid), 0))
        } else {
            m.last_epoch = m.epoch;
            m.epoch += 1;
            Ok((m.producer_id, m.epoch))
        }
    }

    /// Judges a request's producer id and epoch against the transaction.
    fn judge(
        &self,
        tid: &str,
        pid: i64,
        epoch: i16,
        fenced_code: ErrorCode,
    ) -> Result<Epoch, ErrorCode> {
        let Some(m) = self.txns.get(tid) else {
            return Err(ErrorCode::InvalidProducerIdMapping);
        };
        if pid != m.producer_id && pid != m.previous_producer_id {
            return Err(ErrorCode::InvalidProducerIdMapping);
        }
        if pid == m.producer_id && epoch == m.epoch {
            Ok(Epoch::Current)
        } else if (pid == m.producer_id && m.last_epoch >= 0 && epoch == m.last_epoch)
            || (pid == m.previous_producer_id && m.epoch == 0)
        {
            Ok(Epoch::Previous)
        } else {
            Err(fenced_code)
        }
    }

    /// Adds partitions (AddPartitionsToTxn v0-3, or a version 2 Produce's
    /// implicit add) and groups to the open transaction, opening it if
    /// needed. `verify_only` checks they are already in it.
    pub(crate) fn add_to_txn(
        &mut self,
        ctx: &Ctx,
        p: TxnProducer<'_>,
        partitions: &[(String, i32)],
        group: Option<&str>,
        tv2: bool,
        verify_only: bool,
    ) -> Result<(), ErrorCode> {
        let tid = p.tid;
        self.check_coordinator(ctx, CoordinatorKind::Transaction, tid)?;
        if self.judge(tid, p.pid, p.epoch, p.fenced)? != Epoch::Current {
            return Err(p.fenced);
        }
        let m = self.txns.get_mut(tid).expect("judged");
        match m.state {
            TxnState::PrepareCommit | TxnState::PrepareAbort => {
                return Err(ErrorCode::ConcurrentTransactions);
            }
            TxnState::Ongoing => {}
            _ if verify_only => return Err(ErrorCode::InvalidTxnState),
            _ => {
                m.state = TxnState::Ongoing;
                m.started_ms = ctx.now_ms;
                m.partitions.clear();
                m.groups.clear();
                m.tv2 = tv2;
            }
        }
        if verify_only {
            let missing = partitions.iter().any(|p| !m.partitions.contains(p))
                || group.is_some_and(|g| !m.groups.contains(g));
            return if missing {
                Err(ErrorCode::InvalidTxnState)
            } else {
                Ok(())
            };
        }
        m.partitions.extend(partitions.iter().cloned());
        if let Some(g) = group {
            m.groups.insert(g.to_string());
        }
        Ok(())
    }

    /// EndTxn. Returns the producer id and epoch for the next transaction.
    pub(crate) fn end_txn(
        &mut self,
        ctx: &Ctx,
        p: TxnProducer<'_>,
        commit: bool,
        tv2: bool,
    ) -> Result<(i64, i16), ErrorCode> {
        let (tid, epoch, fenced_code) = (p.tid, p.epoch, p.fenced);
        self.check_coordinator(ctx, CoordinatorKind::Transaction, tid)?;
        let judged = self.judge(tid, p.pid, epoch, fenced_code)?;
        let m = &self.txns[tid];
        let answer = (m.producer_id, m.epoch);
        let same_outcome = |s: TxnState| {
            matches!(
                (s, commit),
                (TxnState::CompleteCommit, true) | (TxnState::CompleteAbort, false)
            )
        };
        if !tv2 {
            if judged != Epoch::Current {
                return Err(fenced_code);
            }
            return match m.state {
                TxnState::Ongoing => {
                    self.begin_end(tid, commit, epoch, ctx.now_ms, false);
                    let m = &self.txns[tid];
                    Ok((m.producer_id, m.epoch))
                }
                s if same_outcome(s) => Ok(answer),
                TxnState::PrepareCommit if commit => Err(ErrorCode::ConcurrentTransactions),
                TxnState::PrepareAbort if !commit => Err(ErrorCode::ConcurrentTransactions),
                _ => Err(ErrorCode::InvalidTxnState),
            };
        }
        match (m.state, judged) {
            (TxnState::Ongoing, Epoch::Current) => {
                let bumped = epoch.saturating_add(1);
                self.begin_end(tid, commit, bumped, ctx.now_ms, false);
                let m = &self.txns[tid];
                Ok((m.producer_id, m.epoch))
            }
            (TxnState::Ongoing, Epoch::Previous) => Err(fenced_code),
            (TxnState::PrepareCommit, _) if commit => Err(ErrorCode::ConcurrentTransactions),
            (TxnState::PrepareAbort, _) if !commit => Err(ErrorCode::ConcurrentTransactions),
            (TxnState::PrepareCommit | TxnState::PrepareAbort, _) => {
                Err(ErrorCode::InvalidTxnState)
            }
            (s, Epoch::Previous) if same_outcome(s) => Ok(answer),
            (TxnState::Empty, Epoch::Previous) => Err(fenced_code),
            (_, Epoch::Previous) => Err(ErrorCode::InvalidTxnState),
            (_, Epoch::Current) if !commit => {
                // Abort of no open transaction: the epoch is bumped.
                let bumped = epoch.saturating_add(1);
                self.begin_end(tid, false, bumped, ctx.now_ms, false);
                let m = &self.txns[tid];
                Ok((m.producer_id, m.epoch))
            }
            (_, Epoch::Current) => Err(ErrorCode::InvalidTxnState),
        }
    }

    /// Gives `tid` a new producer id at epoch 0 (its epoch is exhausted),
    /// remembering the old one for the client's retry; the new id.
    fn renew_producer_id(&mut self, tid: &str) -> i64 {
        let pid = self.allocate_producer_id();
        let m = self.txns.get_mut(tid).expect("known transactional id");
        m.previous_producer_id = m.producer_id;
        m.producer_id = pid;
        m.last_epoch = -1;
        m.epoch = 0;
        pid
    }

    /// Moves a transaction to Prepare with markers at `marker_epoch`, and
    /// writes them now when there is no marker delay. The stored epoch
    /// becomes `marker_epoch` (a bump under version 2, or a fence).
    fn begin_end(&mut self, tid: &str, commit: bool, marker_epoch: i16, now_ms: i64, fence: bool) {
        let delay = i64::try_from(self.config.marker_delay.as_millis()).unwrap_or(i64::MAX);
        let m = self.txns.get_mut(tid).expect("known transactional id");
        if marker_epoch != m.epoch {
            m.last_epoch = if fence { -1 } else { m.epoch };
            m.epoch = marker_epoch;
        }
        m.state = if commit {
            TxnState::PrepareCommit
        } else {
            TxnState::PrepareAbort
        };
        m.pending = Some(PendingEnd {
            commit,
            marker_epoch,
            due_ms: now_ms + delay,
        });
        if delay == 0 {
            self.complete_end(tid, now_ms);
        }
    }

    /// Writes the markers of a Prepare state and completes it.
    pub(crate) fn complete_end(&mut self, tid: &str, now_ms: i64) {
        let coordinator_epoch = self.coordinator_epoch;
        let Some(m) = self.txns.get_mut(tid) else {
            return;
        };
        let Some(end) = m.pending.take() else {
            return;
        };
        let pid = m.producer_id;
        let tv2 = m.tv2;
        let partitions: Vec<(String, i32)> =
            std::mem::take(&mut m.partitions).into_iter().collect();
        let groups: Vec<String> = std::mem::take(&mut m.groups).into_iter().collect();
        m.state = if end.commit {
            TxnState::CompleteCommit
        } else {
            TxnState::CompleteAbort
        };
        if tv2 && m.epoch >= EPOCH_EXHAUSTED {
            // The next transaction needs a new producer id.
            self.renew_producer_id(tid);
        }
        for (topic, p) in partitions {
            if let Some(log) = self.partition_mut(&topic, p) {
                // A stale marker (the partition saw a newer epoch) is
                // refused by the partition, as the broker refuses it.
                let _ = log.write_marker(
                    pid,
                    end.marker_epoch,
                    end.commit,
                    coordinator_epoch,
                    tv2,
                    now_ms,
                );
            }
        }
        self.appends += 1;
        for g in groups {
            self.groups.end_txn(&g, pid, end.commit);
        }
    }

    /// Completes due markers and aborts timed-out transactions.
    pub(crate) fn tick_transactions(&mut self, now_ms: i64) {
        let due: Vec<String> = self
            .txns
            .iter()
            .filter(|(_, m)| m.pending.is_some_and(|p| p.due_ms <= now_ms))
            .map(|(t, _)| t.clone())
            .collect();
        for t in due {
            self.complete_end(&t, now_ms);
        }
        let expired: Vec<String> = self
            .txns
            .iter()
            .filter(|(_, m)| {
                m.state == TxnState::Ongoing && now_ms - m.started_ms > i64::from(m.timeout_ms)
            })
            .map(|(t, _)| t.clone())
            .collect();
        for t in expired {
            let m = &self.txns[&t];
            let bumped = m.epoch.saturating_add(1);
            // Version 1 fences the producer (its next request is refused);
            // version 2 keeps the previous epoch as a retry of the abort.
            let fence = !m.tv2;
            self.begin_end(&t, false, bumped, now_ms, fence);
        }
    }
}
