//! `buffer.memory`: what the batches reserve, and the records that wait for
//! it (or for their topic's metadata) in send order, each with a [`Parked`]
//! slot its send future watches.

use super::batch::{Batch, Completion, record_result};
use super::{Accumulator, Appended, Inner, Placed};
use crate::idempotence::BatchId;
use crate::record::{ProduceError, ProducerRecord};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::sync::Notify;

/// Appends `r` to the open batch `b` if it fits the batch's limit (its
/// [`Batch::growth_limit`] for `grow_to`, while its partition waits for an
/// in-flight slot) and the memory the batch may still reserve; the batch's
/// reservation grows by what it then holds beyond it. Returns the record's
/// index and whether this record filled the batch (it reached its
/// `batch.size` limit now: the sender may want to know; a batch grown
/// further is not news).
pub(super) fn append_to_open(
    b: &mut Batch,
    r: &mut ProducerRecord,
    ts: i64,
    used_memory: &mut usize,
    buffer_memory: usize,
    grow_to: Option<(usize, usize)>,
) -> Option<(i32, bool)> {
    let free = buffer_memory.saturating_sub(*used_memory);
    let limit = match grow_to {
        Some((bound, max_request_size)) => b.growth_limit(bound, max_request_size),
        None => b.limit,
    };
    let room = limit.min(b.memory.saturating_add(free));
    let was_full = b.is_full();
    let index = b.try_append(r, ts, room)?;
    if b.size > b.memory {
        let extra = b.size - b.memory;
        b.memory += extra;
        *used_memory += extra;
    }
    Some((index, !was_full && b.is_full()))
}

/// A record the producer owns but could not append at `send` time: it
/// waits for its topic's metadata ([`TopicQueues::parked`]) or for buffer
/// memory ([`Inner::waiting`]). Its place (order and transaction) was fixed
/// when `send` was called; the sender task appends it when it can, whether
/// or not anybody polls the send future.
#[derive(Debug)]
pub(crate) struct Queued {
    /// The record.
    pub record: ProducerRecord,
    /// Its timestamp, fixed at `send`.
    pub timestamp: i64,
    /// Global enqueue order (what `flush` waits for).
    pub seq: u64,
    /// The transaction the record was sent in ([`crate::hooks::SendHooks::on_enqueue`]).
    pub serial: u64,
    /// When `send` was called (`max.block.ms` runs from here).
    pub sent_at: Instant,
    /// What its send future watches.
    pub slot: Arc<Parked>,
}

/// Where a queued record is, shared with its send future.
#[derive(Debug, Default)]
pub(crate) struct Parked {
    /// Where the record is.
    pub state: Mutex<ParkedState>,
    /// Wakes the send future when `state` changes.
    pub notify: Notify,
}

impl Parked {
    pub(super) fn set(&self, state: ParkedState) {
        *self.state.lock().unwrap_or_else(|p| p.into_inner()) = state;
        self.notify.notify_waiters();
    }
}

/// Where a queued record is.
#[derive(Debug, Default)]
pub(crate) enum ParkedState {
    /// Still queued.
    #[default]
    Waiting,
    /// Appended to a batch.
    Appended {
        completion: Arc<Completion>,
        index: i32,
        partition: i32,
        topic: Arc<str>,
        timestamp: i64,
    },
    /// Could not be appended (never written).
    Failed(ProduceError),
}

impl Accumulator {
    /// Appends queued records from the head of the memory queue while
    /// memory allows (called under the lock whenever memory was freed or the
    /// queue changed). Returns whether a batch was created or filled.
    pub(super) fn drain_waiting(&self, inner: &mut Inner, now: Instant) -> bool {
        let mut wake = false;
        while let Some(mut q) = inner.waiting.pop_front() {
            match self.place(inner, q.record, q.timestamp, now, Some(q.serial)) {
                Ok((Placed::Done(a), w)) => {
                    wake |= w;
                    q.slot.set(appended_state(a));
                }
                Ok((Placed::NeedMemory(record), _)) => {
                    q.record = record;
                    inner.waiting.push_front(q);
                    break;
                }
                Err(e) => {
                    self.record_failed(Some(q.serial), &e);
                    q.slot.set(ParkedState::Failed(e));
                }
            }
        }
        wake
    }

    /// Fails every queued record older than `max_block` (it was never
    /// written) and returns when the next one would expire.
    pub fn expire_queued(&self, now: Instant, max_block: std::time::Duration) -> Option<Instant> {
        let mut guard = self.lock();
        let g = &mut *guard;
        let hooks = self.hooks.get();
        let mut failed = false;
        let mut fail = |q: Queued, waiting_for: Arc<str>| {
            let e = ProduceError::MaxBlockTimeout {
                waiting_for,
                after: max_block,
            };
            if let Some(hooks) = hooks {
                hooks.record_failed(Some(q.serial), &e);
            }
            q.slot.set(ParkedState::Failed(e));
            failed = true;
        };
        let expired = |q: &Queued| now >= q.sent_at + max_block;
        while g.waiting.front().is_some_and(expired) {
            let q = g.waiting.pop_front().expect("front");
            fail(q, "buffer memory".into());
        }
        for tq in g.topics.values_mut() {
            while tq.parked.front().is_some_and(expired) {
                let q = tq.parked.pop_front().expect("front");
                let what = format!("metadata of topic {}", q.record.topic);
                fail(q, what.into());
            }
        }
        if failed {
            self.drain_waiting(g, now);
        }
        let next = g
            .topics
            .values()
            .filter_map(|t| t.parked.front())
            .chain(g.waiting.front())
            .map(|q| q.sent_at + max_block)
            .min();
        drop(guard);
        if failed {
            self.progress.notify_waiters();
            self.wake_sender.notify_one();
        }
        next
    }

    /// Fails every queued record with `e` (fatal error, close, or the
    /// queued records of an aborted transaction when `serial` is `Some`).
    pub fn fail_queued(&self, serial: Option<u64>, e: &ProduceError) {
        let mut guard = self.lock();
        let g = &mut *guard;
        let hit = |q: &Queued| serial.is_none_or(|s| s == q.serial);
        let mut any = false;
        for queue in g
            .topics
            .values_mut()
            .map(|t| &mut t.parked)
            .chain(std::iter::once(&mut g.waiting))
        {
            let mut keep = VecDeque::with_capacity(queue.len());
            for q in queue.drain(..) {
                if hit(&q) {
                    q.slot.set(ParkedState::Failed(e.clone()));
                    any = true;
                } else {
                    keep.push_back(q);
                }
            }
            *queue = keep;
        }
        if any {
            self.drain_waiting(g, Instant::now());
        }
        drop(guard);
        if any {
            self.progress.notify_waiters();
        }
    }

    /// A batch completed (either way): memory back, queued records appended
    /// (or failed), flushers woken.
    /// `root`: the batch's [`Batch::root`].
    pub fn batch_done(&self, root: BatchId, memory: usize) {
        let (used, wake, moved, flushed) = {
            let mut g = self.lock();
            g.used_memory = g.used_memory.saturating_sub(memory);
            if let Some(n) = g.incomplete.get_mut(&root) {
                *n -= 1;
                if *n == 0 {
                    g.incomplete.remove(&root);
                }
            }
            let queued = g.waiting.len();
            let wake = queued > 0 && self.drain_waiting(&mut g, Instant::now());
            // Appended or failed (their transaction must abort): either way
            // records left the queue.
            let moved = g.waiting.len() < queued;
            let first = g.incomplete.first_key_value().map(|(f, _)| *f);
            let flushed = g.flush_wanted.is_some_and(|w| first.is_none_or(|f| f >= w));
            if flushed {
                g.flush_wanted = None;
            }
            (g.used_memory, wake, moved, flushed)
        };
        self.metrics.set_buffer_used(used);
        if wake {
            self.wake_sender.notify_one();
        }
        if moved {
            // The queue's waiters (flush, commit) look again. Woken only
            // for appended records, a flush whose records failed here
            // waited forever: nothing else moves an empty queue.
            self.progress.notify_waiters();
        }
        if flushed {
            self.flushed_progress.notify_waiters();
        }
    }
}

/// The queued-record state of an appended record.
pub(super) fn appended_state(a: Appended) -> ParkedState {
    match a {
        Appended::Done {
            completion,
            index,
            partition,
            topic,
            timestamp,
        } => ParkedState::Appended {
            completion,
            index,
            partition,
            topic,
            timestamp,
        },
        Appended::Queued(_) => unreachable!("place never queues"),
    }
}

/// Waits until a queued record is appended (then for its batch) or failed.
/// Needs no polling to make progress: the sender appends it.
pub(crate) async fn queued_result(
    slot: Arc<Parked>,
) -> Result<crate::record::RecordMetadata, ProduceError> {
    loop {
        let notified = slot.notify.notified();
        let appended = {
            let st = slot.state.lock().unwrap_or_else(|p| p.into_inner());
            match &*st {
                ParkedState::Appended {
                    completion,
                    index,
                    partition,
                    topic,
                    timestamp,
                } => Some((
                    completion.clone(),
                    *index,
                    *partition,
                    topic.clone(),
                    *timestamp,
                )),
                ParkedState::Failed(e) => return Err(e.clone()),
                ParkedState::Waiting => None,
            }
        };
        if let Some((c, i, p, t, ts)) = appended {
            return record_result(c, i, p, t, ts).await;
        }
        notified.await;
    }
}
