//! The record accumulator: per-partition queues of batches, `buffer.memory`
//! accounting with FIFO back-pressure, and the batch encoding.
//!
//! Records are appended straight into the open batch of their partition:
//! uncompressed batches are encoded record by record into one `BytesMut`
//! (the 61-byte batch header is reserved up front and filled in when the
//! batch is drained), compressed batches collect [`Record`](kafka_proto::record::Record)s (moving the
//! record's own `Bytes`) and are compressed at drain. Nothing is allocated per
//! record besides amortised growth of the batch buffer; every record of a
//! batch shares the batch's [`Completion`].
//!
//! Memory is reserved per batch (`max(batch.size, record size)`), as Java's
//! `BufferPool` does, and released when the batch completes. A compressed
//! batch counts `batch.size` in estimated compressed bytes (see
//! [`crate::compression_ratio`]), so it may hold more record bytes than
//! `batch.size`: its reservation grows with what it holds beyond it, while
//! `buffer.memory` allows (else the batch takes no more records).

use crate::compression_ratio::CompressionRatio;
use crate::idempotence::BatchId;
use crate::metrics::Metrics;
use crate::record::{ProduceError, ProducerRecord, TopicPartition};
use kafka_proto::record::{BATCH_HEADER_LEN, Compression};
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Instant;
use tokio::sync::Notify;

mod batch;
mod memory;
pub(crate) use batch::{Batch, estimate_record_size, record_metadata};
pub use batch::{BatchResult, Completion};
use memory::append_to_open;
pub(crate) use memory::{Parked, ParkedState, Queued, queued_result};

/// Per-topic queues.
#[derive(Debug, Default)]
pub(crate) struct TopicQueues {
    /// The topic (the map's key), once records were sent to it.
    pub name: Option<Arc<str>>,
    /// Known partition count (0 = unknown).
    pub num_partitions: i32,
    /// Each partition's batches, oldest first; the last one takes appends.
    pub partitions: Vec<VecDeque<Batch>>,
    /// Per partition (by index, possibly shorter than `partitions`): set
    /// by the sender while the partition's leader connection has
    /// `max.in.flight` requests out, so that its open batch grows past
    /// `batch.size` up to `batch.max.size` (see [`TopicQueues::max_batch_bytes`]).
    pub grow: Vec<bool>,
    /// The largest batch the topic takes (its `max.message.bytes`, as the
    /// broker reported it; `max.request.size` when it could not be asked);
    /// `None` while unknown: no batch grows past `batch.size` then.
    pub max_batch_bytes: Option<usize>,
    /// Records sent before the topic's metadata was known, in send order.
    pub parked: VecDeque<Queued>,
    /// How well the topic's batches compress (compressed batches only).
    pub ratio: Arc<CompressionRatio>,
}

/// Where `append` put a record.
pub(crate) enum Appended {
    /// In batch `completion` at relative offset `index`.
    Done {
        completion: Arc<Completion>,
        index: i32,
        partition: i32,
        topic: Arc<str>,
        timestamp: i64,
    },
    /// Queued in send order (buffer memory or the topic's metadata is not
    /// available yet); the sender appends it.
    Queued(Arc<Parked>),
}

/// Result of [`Accumulator::place`].
enum Placed {
    Done(Appended),
    /// No buffer memory for a new batch: the record comes back.
    NeedMemory(ProducerRecord),
}

/// The time of an append, read only if needed: most records join an open
/// batch and never look at the clock (a new batch or a queued record does).
/// An `Instant` is a fixed time; [`LiveClock`] reads the clock.
pub(crate) trait Now: Copy {
    fn now(self) -> Instant;
}

impl Now for Instant {
    fn now(self) -> Instant {
        self
    }
}

/// [`Now`] from `Instant::now()`, read when asked.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LiveClock;

impl Now for LiveClock {
    fn now(self) -> Instant {
        Instant::now()
    }
}

/// State shared by the producer handles and the sender task.
#[derive(Debug)]
pub(crate) struct Inner {
    /// Each topic's queues.
    pub topics: crate::fast_hash::FastHashMap<Arc<str>, TopicQueues>,
    /// Bytes reserved by incomplete batches (`buffer.memory` accounting).
    pub used_memory: usize,
    /// The id the next batch gets.
    pub next_batch_id: BatchId,
    /// Batches not yet completed (what `flush` waits for), by
    /// [`Batch::root`], with how many batches hold records of that root
    /// (more than one once a batch was split).
    pub incomplete: BTreeMap<BatchId, u32>,
    /// Records waiting for buffer memory, in send order (FIFO across all
    /// partitions: while one waits, every later send queues behind it).
    pub waiting: VecDeque<Queued>,
    /// Next [`Queued::seq`].
    pub next_queue_seq: u64,
    /// Set by close/abort: the error new sends get.
    pub closed: Option<ProduceError>,
    /// Set with `closed` when records not yet acknowledged must fail now
    /// instead of being sent (an aborting close or a dropped transactional
    /// producer).
    pub fail_pending: bool,
    /// `flush` calls under way: every batch is ready, lingered or not.
    pub flushing: usize,
    /// The fatal error every later send gets.
    pub fatal: Option<ProduceError>,
    /// The lowest batch id a [`Accumulator::wait_flushed`] caller waits
    /// for: batch completions wake flushers only once it is reached.
    pub flush_wanted: Option<BatchId>,
}

impl Inner {
    /// Takes every batch still queued in any partition.
    pub fn drain_queued(&mut self) -> Vec<Batch> {
        self.topics
            .values_mut()
            .flat_map(|tq| tq.partitions.iter_mut().flat_map(|q| q.drain(..)))
            .collect()
    }

    /// The oldest record still queued (waiting for memory or metadata).
    pub fn oldest_queued(&self) -> Option<u64> {
        let parked = self
            .topics
            .values()
            .filter_map(|t| t.parked.front().map(|q| q.seq))
            .min();
        let waiting = self.waiting.front().map(|q| q.seq);
        match (parked, waiting) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// True when any record is queued.
    pub fn has_queued(&self) -> bool {
        self.oldest_queued().is_some()
    }
}

/// Settings the accumulator needs.
#[derive(Debug, Clone)]
pub(crate) struct AccConfig {
    /// `batch.size`.
    pub batch_size: usize,
    /// `buffer.memory`.
    pub buffer_memory: usize,
    /// `compression.type`.
    pub compression: Compression,
    /// `compression.<codec>.level` of that codec (`None`: its default).
    pub compression_level: Option<i32>,
    /// `max.request.size`.
    pub max_request_size: usize,
    /// `batch.max.size` (at least `batch_size`; equal: batches never grow,
    /// as in Java).
    pub batch_max_size: usize,
}

impl AccConfig {
    /// True when batches may grow past `batch.size` (`batch.max.size` above it).
    pub fn grows(&self) -> bool {
        self.batch_max_size > self.batch_size
    }
}

/// The accumulator: shared by [`crate::Producer`] handles and the sender.
#[derive(Debug)]
pub(crate) struct Accumulator {
    /// Its settings.
    pub config: AccConfig,
    /// The queues and the memory accounting, under one lock.
    inner: Mutex<Inner>,
    /// Wakes the sender (new batch, flush, close).
    pub wake_sender: Notify,
    /// Set by the sender while it waits with every leader of every
    /// partition of the queued topics at `max.in.flight` requests: a new or
    /// filled batch cannot be sent before a response comes, and a response
    /// wakes the sender anyway, so appends do not wake it
    /// ([`Accumulator::set_sender_saturated`]).
    sender_saturated: AtomicBool,
    /// Wakes flushers and transaction operations waiting for the queue
    /// (queued records appended or failed).
    pub progress: Notify,
    /// Wakes [`Accumulator::wait_flushed`] callers, once the lowest batch id
    /// one waits for is reached (not on every completion).
    flushed_progress: Notify,
    /// Picks the partition of a record without one.
    pub partitioner: Arc<dyn crate::partitioner::Partitioner>,
    /// The producer's metrics.
    pub metrics: Arc<Metrics>,
    /// The transaction manager's hooks ([`crate::hooks::SendHooks::on_append`]
    /// and friends), called under the accumulator lock.
    pub hooks: OnceLock<Arc<dyn crate::hooks::SendHooks>>,
}

impl Accumulator {
    pub fn new(
        config: AccConfig,
        partitioner: Arc<dyn crate::partitioner::Partitioner>,
        metrics: Arc<Metrics>,
    ) -> Self {
        Self {
            inner: Mutex::new(Inner {
                topics: Default::default(),
                used_memory: 0,
                next_batch_id: 1,
                incomplete: BTreeMap::new(),
                waiting: VecDeque::new(),
                next_queue_seq: 0,
                closed: None,
                fail_pending: false,
                flushing: 0,
                fatal: None,
                flush_wanted: None,
            }),
            config,
            wake_sender: Notify::new(),
            sender_saturated: AtomicBool::new(false),
            progress: Notify::new(),
            flushed_progress: Notify::new(),
            partitioner,
            metrics,
            hooks: OnceLock::new(),
        }
    }

    pub fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The sender's word on whether a new or filled batch could be sent
    /// now: `true` only while it waits with every leader of the queued
    /// topics' partitions at `max.in.flight` (their in-flight counts change
    /// only on events that wake it), `false` as soon as it runs again.
    ///
    /// Ordering: an append that reads `true` happened before the sender
    /// cleared it, so the sender's next drain (after it clears the flag, under
    /// the accumulator lock the append released) sees the batch.
    pub fn set_sender_saturated(&self, saturated: bool) {
        self.sender_saturated.store(saturated, Ordering::SeqCst);
    }

    /// The sender's last word (tests).
    #[cfg(test)]
    pub(crate) fn sender_saturated(&self) -> bool {
        self.sender_saturated.load(Ordering::SeqCst)
    }

    /// Wakes the sender for a new or filled batch unless it cannot send it
    /// before a response wakes it anyway (Java's `Sender.wakeup()` after
    /// `RecordAppendResult.batchIsFull || newBatchCreated`, without the
    /// wake-up that changes nothing).
    fn wake_sender_for_batch(&self) {
        if !self.sender_saturated.load(Ordering::SeqCst) {
            self.wake_sender.notify_one();
        }
    }

    /// Appends `r` (whose timestamp is `ts`) at once when its topic's
    /// metadata and buffer memory are available and no earlier record is
    /// queued; otherwise queues it in send order (its transaction fixed
    /// now) for the sender to append. Either way the record's place is
    /// decided before this returns.
    pub fn append(
        &self,
        r: ProducerRecord,
        ts: i64,
        now: impl Now,
    ) -> Result<Appended, ProduceError> {
        let r = self.try_append(r, ts, now);
        if let Err(e) = &r {
            self.record_failed(None, e);
        }
        r
    }

    fn try_append(
        &self,
        r: ProducerRecord,
        ts: i64,
        now: impl Now,
    ) -> Result<Appended, ProduceError> {
        let mut g = self.lock();
        let inner = &mut *g;
        if let Some(e) = inner.fatal.clone().or_else(|| inner.closed.clone()) {
            return Err(e);
        }
        // Unknown topic (or records already parked for it): park the record
        // in send order until metadata arrives.
        let park = match inner.topics.get(r.topic.as_str()) {
            None => {
                // A topic seen for the first time. Java learns an illegal
                // name from the broker (INVALID_TOPIC_EXCEPTION) after a
                // metadata round trip; the name alone decides it.
                if let Err(reason) = kafka_proto::topic::validate(&r.topic) {
                    return Err(ProduceError::InvalidTopic {
                        topic: Arc::from(r.topic.as_str()),
                        reason,
                    });
                }
                true
            }
            Some(tq) => tq.num_partitions <= 0 || !tq.parked.is_empty(),
        };
        if park {
            let queued = self.enqueue(inner, r, ts, now)?;
            let slot = queued.slot.clone();
            let tq = inner
                .topics
                .entry(Arc::from(queued.record.topic.as_str()))
                .or_default();
            if tq.name.is_none() {
                tq.name = Some(Arc::from(queued.record.topic.as_str()));
            }
            tq.parked.push_back(queued);
            drop(g);
            self.wake_sender.notify_one();
            return Ok(Appended::Queued(slot));
        }
        if !inner.waiting.is_empty() {
            let queued = self.enqueue(inner, r, ts, now)?;
            let slot = queued.slot.clone();
            inner.waiting.push_back(queued);
            drop(g);
            self.wake_sender.notify_one();
            return Ok(Appended::Queued(slot));
        }
        match self.place(inner, r, ts, now, None)? {
            (Placed::Done(a), wake) => {
                let used = inner.used_memory;
                drop(g);
                if wake {
                    self.metrics.set_buffer_used(used);
                    self.wake_sender_for_batch();
                }
                Ok(a)
            }
            (Placed::NeedMemory(r), _) => {
                let queued = self.enqueue(inner, r, ts, now)?;
                let slot = queued.slot.clone();
                inner.waiting.push_back(queued);
                drop(g);
                // Batches are drained at once while records wait for memory.
                self.wake_sender.notify_one();
                Ok(Appended::Queued(slot))
            }
        }
    }

    /// Takes ownership of a record that cannot be appended now: asks the
    /// gate which transaction it belongs to (an error fails the send now).
    fn enqueue(
        &self,
        inner: &mut Inner,
        record: ProducerRecord,
        timestamp: i64,
        now: impl Now,
    ) -> Result<Queued, ProduceError> {
        let serial = match self.hooks.get() {
            Some(g) => g.on_enqueue()?,
            None => 0,
        };
        let seq = inner.next_queue_seq;
        inner.next_queue_seq += 1;
        Ok(Queued {
            record,
            timestamp,
            seq,
            serial,
            sent_at: now.now(),
            slot: Arc::new(Parked::default()),
        })
    }

    /// Appends to a topic with known partitions; returns whether the sender
    /// should be woken (a batch filled or was created). `serial`: the
    /// transaction of a queued record (`None`: the current one).
    fn place(
        &self,
        inner: &mut Inner,
        mut r: ProducerRecord,
        ts: i64,
        now: impl Now,
        serial: Option<u64>,
    ) -> Result<(Placed, bool), ProduceError> {
        let cfg = &self.config;
        let Some(tq) = inner.topics.get_mut(r.topic.as_str()) else {
            return Err(ProduceError::InvalidRecord(
                "topic metadata vanished".into(),
            ));
        };
        let n = tq.num_partitions;
        if n <= 0 {
            return Err(ProduceError::InvalidRecord(
                "topic has no partitions".into(),
            ));
        }
        let topic = tq
            .name
            .clone()
            .unwrap_or_else(|| Arc::from(r.topic.as_str()));
        let explicit = r.partition.is_some();
        let mut p = match r.partition {
            Some(p) if p < 0 || p >= n => {
                let msg = format!("partition {p} of {} is not in [0, {n})", r.topic);
                return Err(ProduceError::InvalidRecord(msg.into()));
            }
            Some(p) => p,
            None => self
                .partitioner
                .partition(&r.topic, r.key.as_deref(), r.value.as_deref(), n),
        };
        if p < 0 || p >= n {
            let msg = format!(
                "partitioner returned {p} for {} with {n} partitions",
                r.topic
            );
            return Err(ProduceError::InvalidRecord(msg.into()));
        }
        if tq.partitions.len() < n as usize {
            tq.partitions.resize_with(n as usize, VecDeque::new);
        }
        let hooks = self.hooks.get();
        // The hooks's say on a record joining `b`, or a new batch of `p`
        // (`b` None; the memo then goes to the batch made for it).
        let check = |p: i32, b: Option<&mut Batch>, memo: &mut u64| match hooks {
            Some(g) => match (serial, b) {
                (None, Some(b)) => g.on_append_to_batch(&b.tp, &mut b.hooks_memo),
                (None, None) => g.on_append_to_batch(
                    &TopicPartition {
                        topic: topic.clone(),
                        partition: p,
                    },
                    memo,
                ),
                (Some(s), Some(b)) => g.on_append_queued(&b.tp, s),
                (Some(s), None) => g.on_append_queued(
                    &TopicPartition {
                        topic: topic.clone(),
                        partition: p,
                    },
                    s,
                ),
            },
            None => Ok(()),
        };
        let mut new_batch_memo = 0;
        let done = |completion, index, partition, topic| {
            Placed::Done(Appended::Done {
                completion,
                index,
                partition,
                topic,
                timestamp: ts,
            })
        };
        // Appends to the open batch of `p`, if it has one that takes the
        // record (and the hooks agree): its completion, the record's index,
        // whether the batch filled.
        let append_to_open_of =
            |tq: &mut TopicQueues,
             p: i32,
             r: &mut ProducerRecord,
             used_memory: &mut usize,
             memo: &mut u64|
             -> Result<Option<(Arc<Completion>, i32, bool)>, ProduceError> {
                let grow_to = growth(cfg, tq, p);
                let Some(b) = tq.partitions[p as usize].back_mut() else {
                    return Ok(None);
                };
                check(p, Some(&mut *b), memo)?;
                Ok(
                    append_to_open(b, r, ts, used_memory, cfg.buffer_memory, grow_to)
                        .map(|(index, filled)| (b.completion.clone(), index, filled)),
                )
            };
        // Try the open batch.
        if let Some((completion, index, filled)) =
            append_to_open_of(tq, p, &mut r, &mut inner.used_memory, &mut new_batch_memo)?
        {
            return Ok((done(completion, index, p, topic), filled));
        }
        // A new batch is needed: sticky partitioners move on first (KIP-480).
        if !explicit {
            self.partitioner.on_new_batch(&r.topic, n, p);
            let q = self
                .partitioner
                .partition(&r.topic, r.key.as_deref(), r.value.as_deref(), n);
            if q != p && (0..n).contains(&q) {
                p = q;
                if let Some((completion, index, _)) =
                    append_to_open_of(tq, p, &mut r, &mut inner.used_memory, &mut new_batch_memo)?
                {
                    return Ok((done(completion, index, p, topic), false));
                }
            }
        }
        let size = estimate_record_size(&r) + BATCH_HEADER_LEN;
        if size > cfg.max_request_size || size > cfg.buffer_memory {
            let (limit, limit_name) = if size > cfg.max_request_size {
                (cfg.max_request_size, "max.request.size")
            } else {
                (cfg.buffer_memory, "buffer.memory")
            };
            return Err(ProduceError::RecordTooLarge {
                size,
                limit,
                limit_name,
            });
        }
        let memory = cfg.batch_size.max(size);
        if inner.used_memory + memory > cfg.buffer_memory {
            return Ok((Placed::NeedMemory(r), false));
        }
        check(p, None, &mut new_batch_memo)?;
        inner.used_memory += memory;
        let id = inner.next_batch_id;
        inner.next_batch_id += 1;
        inner.incomplete.insert(id, 1);
        let tp = TopicPartition {
            topic: topic.clone(),
            partition: p,
        };
        let tq = inner.topics.get_mut(&*topic).expect("topic present");
        let mut b = Batch::new(id, tp, cfg, memory, &tq.ratio, now.now());
        b.hooks_memo = new_batch_memo;
        let index = b
            .try_append(&mut r, ts, b.limit)
            .expect("an empty batch takes any record");
        let completion = b.completion.clone();
        tq.partitions[p as usize].push_back(b);
        Ok((done(completion, index, p, topic), true))
    }

    /// Tells the hooks that a record the application sent will never be
    /// written (a transaction must then not commit without it).
    fn record_failed(&self, serial: Option<u64>, e: &ProduceError) {
        if let Some(hooks) = self.hooks.get() {
            hooks.record_failed(serial, e);
        }
    }

    /// Sets a topic's partition count (from metadata); records parked for
    /// it move on, in send order (appended, or queued for memory).
    pub fn set_partitions(&self, topic: &str, n: i32) {
        let mut guard = self.lock();
        let g = &mut *guard;
        let tq = g.topics.entry(Arc::from(topic)).or_default();
        if tq.name.is_none() {
            tq.name = Some(Arc::from(topic));
        }
        if n > tq.num_partitions {
            tq.num_partitions = n;
            tq.partitions.resize_with(n as usize, VecDeque::new);
        }
        if tq.parked.is_empty() {
            return;
        }
        let parked = std::mem::take(&mut tq.parked);
        g.waiting.extend(parked);
        self.drain_waiting(g, Instant::now());
        let used = g.used_memory;
        drop(guard);
        self.metrics.set_buffer_used(used);
        self.wake_sender.notify_one();
        self.progress.notify_waiters();
    }

    /// Fails every record parked for `topic` with `e`: the broker refused
    /// the topic for good, so its metadata will never arrive.
    pub fn fail_parked(&self, topic: &str, e: &ProduceError) {
        let mut guard = self.lock();
        let Some(tq) = guard.topics.get_mut(topic) else {
            return;
        };
        let parked = std::mem::take(&mut tq.parked);
        drop(guard);
        if parked.is_empty() {
            return;
        }
        for q in parked {
            self.record_failed(Some(q.serial), e);
            q.slot.set(ParkedState::Failed(e.clone()));
        }
        self.progress.notify_waiters();
        self.wake_sender.notify_one();
    }

    /// Topics with parked records (metadata still unknown).
    pub fn parked_topics(&self) -> Vec<Arc<str>> {
        self.lock()
            .topics
            .values()
            .filter(|t| !t.parked.is_empty())
            .filter_map(|t| t.name.clone())
            .collect()
    }

    /// True when every batch with an id below `target` completed.
    pub fn flushed(&self, target: BatchId) -> bool {
        self.lock()
            .incomplete
            .first_key_value()
            .is_none_or(|(f, _)| *f >= target)
    }

    /// Waits until every batch with an id below `target` completed
    /// (`BatchId::MAX`: every batch). Woken once, when the lowest target
    /// waited for is reached — not by each completion before it.
    pub async fn wait_flushed(&self, target: BatchId) {
        loop {
            // Created before the look: a notification after it is not lost.
            let notified = self.flushed_progress.notified();
            {
                let mut g = self.lock();
                if g.incomplete
                    .first_key_value()
                    .is_none_or(|(f, _)| *f >= target)
                {
                    return;
                }
                g.flush_wanted = Some(g.flush_wanted.map_or(target, |w| w.min(target)));
            }
            notified.await;
        }
    }
}

/// How far the open batch of partition `p` may grow now: `Some(bound)`
/// while the sender says the partition waits for an in-flight slot and the
/// topic's largest batch is known, `None` (up to `batch.size`) otherwise.
/// Returned with `max.request.size`, for [`append_to_open`].
fn growth(cfg: &AccConfig, tq: &TopicQueues, p: i32) -> Option<(usize, usize)> {
    if !tq.grow.get(p as usize).copied().unwrap_or(false) {
        return None;
    }
    let bound = cfg.batch_max_size.min(tq.max_batch_bytes?);
    (bound > cfg.batch_size).then_some((bound, cfg.max_request_size))
}

impl Accumulator {
    /// Sets the largest batch `topic` takes (`None`: unknown again, no
    /// batch of it grows past `batch.size` until it is set).
    pub fn set_max_batch_bytes(&self, topic: &str, max: Option<usize>) {
        if let Some(tq) = self.lock().topics.get_mut(topic) {
            tq.max_batch_bytes = max;
        }
    }

    /// A fresh batch id (for the parts of a split batch).
    pub fn next_batch_id(&self) -> BatchId {
        let mut g = self.lock();
        let id = g.next_batch_id;
        g.next_batch_id += 1;
        id
    }

    /// Takes over the parts a split made of batch `parent` ([`Batch::split`]):
    /// the parent's reserved memory is shared among them (the total stays
    /// the same), and `flush` waits for every part as it waited for the
    /// parent.
    pub fn adopt_split(&self, parent: &Batch, parts: &mut [Batch]) {
        let total: usize = parts.iter().map(|b| b.size).sum::<usize>().max(1);
        let mut left = parent.memory;
        let n = parts.len();
        for (i, b) in parts.iter_mut().enumerate() {
            let share = if i + 1 == n {
                left
            } else {
                (parent.memory as u128 * b.size as u128 / total as u128) as usize
            };
            let share = share.min(left);
            b.memory = share;
            left -= share;
        }
        if n > 1 {
            *self.lock().incomplete.entry(parent.root).or_insert(0) += (n - 1) as u32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::batch::record_result;
    use super::*;
    use crate::compression_ratio;
    use crate::idempotence::BatchSequence;
    use kafka_proto::record::RecordBatch;

    /// An accumulator of topic "t" with 2 partitions, round-robin
    /// partitioned; batches grow past `batch_size` up to `batch_max_size`
    /// (0: never) once the topic's largest batch is known.
    fn accumulator(
        batch_size: usize,
        batch_max_size: usize,
        memory: usize,
        compression: Compression,
    ) -> Accumulator {
        let a = Accumulator::new(
            AccConfig {
                batch_size,
                buffer_memory: memory,
                compression,
                compression_level: None,
                max_request_size: 1 << 20,
                batch_max_size,
            },
            Arc::new(crate::partitioner::RoundRobinPartitioner::new()),
            Arc::new(Metrics::new(true)),
        );
        a.set_partitions("t", 2);
        a
    }

    /// An accumulator whose batches close at `batch_size` (topic "t", 2
    /// partitions).
    fn acc(batch_size: usize, memory: usize, compression: Compression) -> Accumulator {
        accumulator(batch_size, 0, memory, compression)
    }

    /// An accumulator whose batches may grow to `batch_max_size` (topic
    /// "t", 2 partitions, `max.message.bytes` known to be `topic_max`).
    fn growing(
        batch_size: usize,
        batch_max_size: usize,
        topic_max: usize,
        memory: usize,
        compression: Compression,
    ) -> Accumulator {
        let a = accumulator(batch_size, batch_max_size, memory, compression);
        a.set_max_batch_bytes("t", Some(topic_max));
        a
    }

    /// What the sender says: partition `p` of "t" waits (or not) for an
    /// in-flight slot.
    fn set_waiting(a: &Accumulator, p: usize, waiting: bool) {
        let mut g = a.lock();
        let tq = g.topics.get_mut("t").unwrap();
        tq.grow.resize(tq.partitions.len(), false);
        tq.grow[p] = waiting;
    }

    /// Appends `n` records of `value_len` bytes to partition 0 of "t";
    /// returns how many records went to each batch (in queue order).
    fn fill(a: &Accumulator, n: usize, value_len: usize) -> Vec<(i32, usize)> {
        let now = Instant::now();
        for i in 0..n {
            let r = ProducerRecord::new("t")
                .partition(0)
                .value(vec![b'x'; value_len]);
            done(a.append(r, i as i64, now).unwrap());
        }
        a.lock().topics["t"].partitions[0]
            .iter()
            .map(|b| (b.records, b.size))
            .collect()
    }

    /// Invariant: while the sender says a partition waits for an in-flight
    /// slot, its open batch takes records past `batch.size` up to
    /// `batch.max.size` and no further (the next record opens a new
    /// batch); otherwise batches close at `batch.size` exactly as without
    /// the setting. Every record is in exactly one batch.
    #[test]
    fn a_waiting_partition_grows_its_open_batch_up_to_batch_max_size() {
        // Not waiting: batch.size, as Java.
        let a = growing(1000, 4000, 1 << 20, 1 << 20, Compression::None);
        let plain = fill(&a, 100, 100);
        assert!(plain.iter().all(|(_, size)| *size <= 1000), "{plain:?}");
        assert!(plain[0].1 > 1000 - 120, "{plain:?}");
        // Waiting: up to batch.max.size, then a new batch.
        let a = growing(1000, 4000, 1 << 20, 1 << 20, Compression::None);
        set_waiting(&a, 0, true);
        let grown = fill(&a, 100, 100);
        assert!(grown.iter().all(|(_, size)| *size <= 4000), "{grown:?}");
        assert!(grown[0].1 > 4000 - 120, "grew to the bound: {grown:?}");
        assert!(grown.len() > 2, "the next record opened a new batch");
        let total: i32 = grown.iter().map(|(n, _)| n).sum();
        assert_eq!(total, 100, "every record in exactly one batch");
        // The slot frees: the open batch is full already, the next one
        // closes at batch.size again.
        let a = growing(1000, 4000, 1 << 20, 1 << 20, Compression::None);
        set_waiting(&a, 0, true);
        fill(&a, 20, 100);
        set_waiting(&a, 0, false);
        let after = fill(&a, 30, 100);
        assert!(after[0].1 > 1000 && after[0].1 <= 4000, "{after:?}");
        assert!(
            after[1..].iter().all(|(_, size)| *size <= 1000),
            "{after:?}"
        );
        // Another partition is not affected.
        set_waiting(&a, 1, true);
        set_waiting(&a, 0, false);
        let more = fill(&a, 30, 100);
        assert!(more[1..].iter().all(|(_, size)| *size <= 1000), "{more:?}");
    }

    /// Invariant: growth stops at the topic's `max.message.bytes` when it
    /// is below `batch.max.size`, and there is none while it is unknown.
    #[test]
    fn growth_stops_at_the_topics_max_message_bytes() {
        let a = growing(1000, 4000, 2500, 1 << 20, Compression::None);
        set_waiting(&a, 0, true);
        let grown = fill(&a, 100, 100);
        assert!(grown.iter().all(|(_, size)| *size <= 2500), "{grown:?}");
        assert!(grown[0].1 > 2500 - 120, "{grown:?}");
        a.set_max_batch_bytes("t", None);
        let a2 = growing(1000, 4000, 2500, 1 << 20, Compression::None);
        a2.set_max_batch_bytes("t", None);
        set_waiting(&a2, 0, true);
        let unknown = fill(&a2, 100, 100);
        assert!(unknown.iter().all(|(_, size)| *size <= 1000), "{unknown:?}");
    }

    /// Invariant: a growing batch reserves what it holds from
    /// `buffer.memory`: the memory in use is the sum of the incomplete
    /// batches' reservations and never above `buffer.memory`; a batch that
    /// cannot grow for want of memory takes no more records (the next
    /// record waits for memory), and `batch_done` gives all of it back.
    #[test]
    fn a_growing_batch_reserves_its_bytes_from_buffer_memory() {
        let a = growing(1000, 8000, 1 << 20, 3000, Compression::None);
        set_waiting(&a, 0, true);
        let now = Instant::now();
        let mut queued = None;
        for i in 0..100 {
            let r = ProducerRecord::new("t").partition(0).value(vec![b'x'; 100]);
            match a.append(r, i, now).unwrap() {
                Appended::Done { .. } => {}
                Appended::Queued(slot) => {
                    queued = Some(slot);
                    break;
                }
            }
            let g = a.lock();
            let reserved: usize = g.topics["t"].partitions[0].iter().map(|b| b.memory).sum();
            assert_eq!(g.used_memory, reserved);
            assert!(g.used_memory <= 3000, "{}", g.used_memory);
        }
        let slot = queued.expect("3000 bytes of buffer.memory run out");
        let (id, memory) = {
            let g = a.lock();
            let q = &g.topics["t"].partitions[0];
            assert_eq!(q.len(), 1, "one batch, grown past batch.size: {q:?}");
            assert!(q[0].size > 2800 && q[0].memory <= 3000, "{:?}", q[0]);
            (q[0].id, q[0].memory)
        };
        a.lock().topics.get_mut("t").unwrap().partitions[0].clear();
        a.batch_done(id, memory);
        assert!(matches!(
            *slot.state.lock().unwrap(),
            ParkedState::Appended { index: 0, .. }
        ));
        assert_eq!(a.lock().used_memory, 1000, "the new batch's reservation");
    }

    /// Invariant: a compressed batch grows to `batch.max.size` counted in
    /// estimated compressed bytes, as `batch.size` is.
    #[test]
    fn a_compressed_batch_grows_in_estimated_compressed_bytes() {
        let a = growing(4096, 16_384, 1 << 20, 64 << 20, Compression::Lz4);
        for _ in 0..100 {
            a.lock().topics["t"].ratio.observe(0.25);
        }
        let ratio = a.lock().topics["t"].ratio.get();
        set_waiting(&a, 0, true);
        let grown = fill(&a, 400, 100);
        let bound = compression_ratio::uncompressed_limit(16_384, 1 << 20, ratio);
        assert!(bound > 16_384, "{bound}");
        assert!(
            grown[0].1 <= bound && grown[0].1 > bound - 200,
            "{grown:?}, {bound}"
        );
    }

    /// Invariant: the parts of a split batch take no new records. Their
    /// sequences were fixed when the batch was split, so a record appended
    /// to a part back at the end of its partition's queue would be written
    /// under a sequence range that does not count it (and a part refused
    /// again could no longer be split). A new record opens a new batch.
    #[test]
    fn the_parts_of_a_split_batch_take_no_new_records() {
        let a = growing(1000, 8000, 1 << 20, 1 << 20, Compression::None);
        set_waiting(&a, 0, true);
        let now = Instant::now();
        let record = |i: i64| {
            ProducerRecord::new("t")
                .partition(0)
                .value(format!("{i:06}"))
        };
        for i in 0..200 {
            a.append(record(i), 1000 + i, now).unwrap();
        }
        let mut b = a.lock().topics.get_mut("t").unwrap().partitions[0]
            .pop_front()
            .unwrap();
        b.close_and_encode(None, false).unwrap();
        let next = std::sync::atomic::AtomicU64::new(1000);
        let mut parts = b
            .split(1000 - BATCH_HEADER_LEN, || {
                next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            })
            .unwrap();
        assert!(b.hand_over(&parts));
        a.adopt_split(&b, &mut parts);
        let counts: Vec<i32> = parts.iter().map(|p| p.records).collect();
        // Back in the queue, as the sender puts them, with nothing behind.
        a.lock().topics.get_mut("t").unwrap().partitions[0].extend(parts);
        a.append(record(200), 1200, now).unwrap();
        let g = a.lock();
        let queue = &g.topics["t"].partitions[0];
        assert_eq!(queue.len(), counts.len() + 1, "a new batch for the record");
        let after: Vec<i32> = queue.iter().take(counts.len()).map(|p| p.records).collect();
        assert_eq!(after, counts);
        assert_eq!(queue.back().unwrap().records, 1);
    }

    /// Invariant: a batch split after a MESSAGE_TOO_LARGE refusal keeps
    /// every record once, in order, in parts of at most the target size
    /// (and at most half the batch), and each record's result is its part's
    /// base offset plus its index in the part.
    #[test]
    fn a_split_batch_resolves_every_record_from_its_part() {
        for c in [Compression::None, Compression::Lz4, Compression::Gzip] {
            let a = growing(1000, 8000, 1 << 20, 1 << 20, c);
            set_waiting(&a, 0, true);
            let now = Instant::now();
            let mut handles = Vec::new();
            for i in 0..60 {
                let r = ProducerRecord::new("t")
                    .partition(0)
                    .key(format!("k{i}"))
                    .value(vec![b'v'; 90])
                    .header("h", Some(format!("{i}")));
                handles.push(done(a.append(r, 1000 + i, now).unwrap()));
            }
            let mut b = a.lock().topics.get_mut("t").unwrap().partitions[0]
                .pop_front()
                .unwrap();
            assert!(b.size > 4000, "{c:?}: grown: {b:?}");
            b.close_and_encode(None, false).unwrap();
            let n = b.records;
            let next = std::sync::atomic::AtomicU64::new(1000);
            let mut parts = b
                .split(1000 - BATCH_HEADER_LEN, || {
                    next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                })
                .unwrap();
            assert!(parts.len() >= 4, "{c:?}: {} parts", parts.len());
            assert_eq!(parts.iter().map(|p| p.records).sum::<i32>(), n);
            assert!(parts.iter().all(|p| p.size <= 1000), "{c:?}: {parts:?}");
            assert!(parts.iter().all(|p| p.root == b.id), "{c:?}");
            let keys: Vec<_> = parts.iter().map(|p| p.order_key()).collect();
            assert!(keys.windows(2).all(|w| w[0] < w[1]), "{c:?}: {keys:?}");
            assert!(b.hand_over(&parts));
            a.adopt_split(&b, &mut parts);
            assert_eq!(parts.iter().map(|p| p.memory).sum::<usize>(), b.memory);
            // Parts complete out of order; each record follows its own.
            for (k, p) in parts.iter_mut().enumerate().rev() {
                p.close_and_encode(None, false).unwrap();
                let d = RecordBatch::decode(p.encoded.as_ref().unwrap()).unwrap();
                assert_eq!(d.records.len() as i32, p.records);
                assert_eq!(d.compression, c);
                for (j, r) in d.records.iter().enumerate() {
                    let i = p.root_offset as usize + j;
                    assert_eq!(r.key.as_deref(), Some(format!("k{i}").as_bytes()));
                    assert_eq!(r.timestamp, 1000 + i as i64, "{c:?}");
                }
                assert!(!a.flushed(u64::MAX), "{c:?}: part {k} still out");
                p.completion.complete(Ok(BatchResult {
                    base_offset: 10_000 * (k as i64 + 1),
                    log_append_time: -1,
                }));
                a.batch_done(p.root, p.memory);
            }
            assert!(a.flushed(b.id + 1), "{c:?}: every part done");
            for (i, (completion, index)) in handles.iter().enumerate() {
                let (result, at) = completion.record(*index).expect("resolved");
                let part = parts
                    .iter()
                    .position(|p| {
                        p.root_offset as usize <= i && i < (p.root_offset + p.records) as usize
                    })
                    .unwrap();
                assert_eq!(at as usize, i - parts[part].root_offset as usize);
                let md = record_metadata(result, at, 0, "t".into(), 0).unwrap();
                assert_eq!(md.offset, Some(10_000 * (part as i64 + 1) + i64::from(at)));
            }
        }
    }

    fn rec(i: usize) -> ProducerRecord {
        ProducerRecord::new("t")
            .partition(0)
            .key(format!("k{i}"))
            .value(vec![b'v'; 50])
            .header("h", Some(format!("{i}")))
    }

    fn done(a: Appended) -> (Arc<Completion>, i32) {
        match a {
            Appended::Done {
                completion, index, ..
            } => (completion, index),
            _ => panic!("not appended"),
        }
    }

    /// Drains every batch of partition 0 of "t" but the open one,
    /// encoding each; returns (records, uncompressed size, encoded size,
    /// limit) per batch and frees their memory.
    fn drain_encoded(a: &Accumulator) -> Vec<(i32, usize, usize, usize)> {
        let batches: Vec<Batch> = {
            let mut g = a.lock();
            let q = &mut g.topics.get_mut("t").unwrap().partitions[0];
            let n = q.len().saturating_sub(1);
            q.drain(..n).collect()
        };
        batches
            .into_iter()
            .map(|mut b| {
                let (records, size, limit) = (b.records, b.size, b.limit);
                b.close_and_encode(None, false).unwrap();
                let wire = b.wire_size();
                a.batch_done(b.id, b.memory);
                (records, size, wire, limit)
            })
            .collect()
    }

    /// Invariant: a compressed batch counts `batch.size` in estimated
    /// compressed bytes (Java's `CompressionRatioEstimator`): as the
    /// topic's batches show how well they compress, later batches hold
    /// more records, yet none compresses to more than `batch.size`, and
    /// none holds more than the cap before compression.
    #[test]
    fn compressed_batches_grow_with_the_compression_ratio_up_to_the_cap() {
        for c in [
            Compression::Lz4,
            Compression::Zstd,
            Compression::Gzip,
            Compression::Snappy,
        ] {
            let a = acc(4096, 64 << 20, c);
            let now = Instant::now();
            let value = vec![b'x'; 1000];
            let mut seen = Vec::new();
            for i in 0..40_000 {
                let r = ProducerRecord::new("t").partition(0).value(value.clone());
                done(a.append(r, 1000 + i, now).unwrap());
                if i % 1000 == 999 {
                    seen.extend(drain_encoded(&a));
                }
            }
            let (first, last) = (seen[0], *seen.last().unwrap());
            assert_eq!(first.3, 4096, "{c:?}: no estimate yet: {first:?}");
            assert!(first.0 <= 4, "{c:?}: {first:?}");
            let cap = compression_ratio::max_uncompressed(4096, 1 << 20);
            assert!(
                last.3 > 10 * 4096,
                "{c:?}: the limit grew tenfold: {last:?}"
            );
            assert!(last.0 > 40, "{c:?}: {last:?}");
            for &(records, size, wire, limit) in &seen {
                assert!(
                    wire <= 4096,
                    "{c:?}: {records} records, {size} B -> {wire} B"
                );
                // Closed when the next record (1,000 B and its framing) did
                // not fit its limit.
                assert!(
                    size <= limit && size + 1100 > limit,
                    "{c:?}: {size} B, limit {limit}"
                );
                assert!(limit <= cap, "{c:?}: limit {limit}");
            }
            // Far enough down, the estimate meets the cap.
            for _ in 0..400 {
                a.lock().topics["t"].ratio.observe(0.001);
            }
            let ratio = a.lock().topics["t"].ratio.get();
            assert_eq!(
                compression_ratio::uncompressed_limit(4096, 1 << 20, ratio),
                cap
            );
            // Every record counted once.
            let g = a.lock();
            let open: i32 = g.topics["t"].partitions[0].iter().map(|b| b.records).sum();
            let drained: i32 = seen.iter().map(|b| b.0).sum();
            assert_eq!(drained + open, 40_000, "{c:?}");
        }
    }

    /// Invariant: a compressed batch growing past `batch.size` reserves
    /// what it holds beyond it from `buffer.memory`: the memory in use is
    /// the sum of the incomplete batches' reservations and never above
    /// `buffer.memory`; a batch that may not grow takes no more records
    /// (the next record waits for memory), and freeing memory lets it go on.
    #[test]
    fn a_growing_compressed_batch_reserves_its_bytes_from_buffer_memory() {
        let a = acc(1024, 64 << 10, Compression::Lz4);
        // The estimate fell (as after many batches): the limit is the cap.
        for _ in 0..400 {
            a.lock().topics["t"].ratio.observe(0.001);
        }
        let now = Instant::now();
        let value = vec![b'x'; 1000];
        let mut waiting = None;
        for i in 0..200 {
            let r = ProducerRecord::new("t").partition(0).value(value.clone());
            match a.append(r, i, now).unwrap() {
                Appended::Done { .. } => {}
                other => {
                    waiting = Some((i, other));
                    break;
                }
            }
            let g = a.lock();
            let reserved: usize = g.topics["t"].partitions[0].iter().map(|b| b.memory).sum();
            assert_eq!(g.used_memory, reserved);
            assert!(g.used_memory <= 64 << 10, "{}", g.used_memory);
        }
        let (i, _) = waiting.expect("the 64 KiB of buffer.memory run out");
        assert!((60..=66).contains(&i), "{i} records of 1 KB fit 64 KiB");
        {
            let g = a.lock();
            let q = &g.topics["t"].partitions[0];
            assert_eq!(q.len(), 1, "one batch, grown past batch.size");
            assert!(q[0].memory > 60_000 && q[0].memory <= 64 << 10);
            assert!(!q[0].is_full(), "below its limit, stopped by memory");
        }
        // The batch is sent and completes: its memory is freed and the
        // waiting record is appended to a new batch.
        let b = a.lock().topics.get_mut("t").unwrap().partitions[0]
            .pop_front()
            .unwrap();
        a.batch_done(b.id, b.memory);
        let g = a.lock();
        assert!(g.waiting.is_empty());
        assert_eq!(g.topics["t"].partitions[0].len(), 1);
        assert_eq!(g.topics["t"].partitions[0][0].records, 1);
    }

    #[test]
    fn batches_fill_to_batch_size_and_encode() {
        for c in [Compression::None] {
            let a = acc(1000, 1 << 20, c);
            let now = Instant::now();
            let mut first = None;
            for i in 0..30 {
                let (comp, idx) = done(a.append(rec(i), 1000 + i as i64, now).unwrap());
                if i == 0 {
                    first = Some(comp.clone());
                }
                if Arc::ptr_eq(first.as_ref().unwrap(), &comp) {
                    assert_eq!(idx, i as i32);
                }
            }
            let mut g = a.lock();
            let q = &mut g.topics.get_mut("t").unwrap().partitions[0];
            assert!(q.len() >= 3, "{} batches", q.len());
            let b = q.front_mut().unwrap();
            assert!(b.size <= 1000 && b.size > 900);
            let n = b.records;
            b.close_and_encode(None, false).unwrap();
            let enc = b.encoded.clone().unwrap();
            let decoded = RecordBatch::decode(&enc).unwrap();
            assert_eq!(decoded.records.len() as i32, n);
            assert_eq!(decoded.records[3].key.as_deref(), Some(&b"k3"[..]));
            assert_eq!(decoded.records[3].timestamp, 1003);
            assert_eq!(
                decoded.records[3].headers[0].value.as_deref(),
                Some(&b"3"[..])
            );
            assert_eq!(enc.len(), b.size);
            // Rewrite keeps a valid CRC.
            b.rewrite(Some(BatchSequence {
                producer: crate::idempotence::ProducerIdAndEpoch {
                    producer_id: 9,
                    epoch: 2,
                },
                base_sequence: 40,
                record_count: n,
                sequence_reset: true,
            }));
            let d = RecordBatch::decode(b.encoded.as_ref().unwrap()).unwrap();
            assert_eq!(
                (d.producer_id, d.producer_epoch, d.base_sequence),
                (9, 2, 40)
            );
        }
    }

    fn slot_state(slot: &Parked) -> Option<i32> {
        match &*slot.state.lock().unwrap() {
            ParkedState::Waiting => None,
            ParkedState::Appended { index, .. } => Some(*index),
            ParkedState::Failed(e) => panic!("failed: {e}"),
        }
    }

    /// Invariant: a send that finds no buffer memory is owned by the
    /// producer at once, in send order; it is appended when memory is freed
    /// without anybody polling a future, and no later send overtakes it.
    #[test]
    fn back_pressure_queues_in_send_order_without_polling() {
        // Memory for exactly two batches.
        let a = acc(200, 400, Compression::None);
        let now = Instant::now();
        let mut queued = Vec::new();
        for i in 0..20 {
            match a.append(rec(i), 0, now).unwrap() {
                Appended::Done { .. } => assert!(queued.is_empty(), "no overtaking"),
                Appended::Queued(slot) => queued.push(slot),
            }
        }
        assert!(!queued.is_empty(), "memory runs out");
        assert_eq!(a.lock().used_memory, 400);
        assert_eq!(a.lock().waiting.len(), queued.len());
        assert!(queued.iter().all(|s| slot_state(s).is_none()));
        // Free the first batch: the head of the queue gets in first, and
        // the queue advances only in order.
        let id = a.lock().topics["t"].partitions[0][0].id;
        a.batch_done(id, 200);
        let appended = queued
            .iter()
            .take_while(|s| slot_state(s).is_some())
            .count();
        assert!(appended > 0, "the head was appended");
        assert!(queued[appended..].iter().all(|s| slot_state(s).is_none()));
        // Free everything: every queued record is appended.
        loop {
            let ids: Vec<_> = a.lock().topics["t"].partitions[0]
                .iter()
                .map(|b| (b.id, b.memory))
                .collect();
            if a.lock().waiting.is_empty() {
                break;
            }
            for (id, m) in ids {
                a.lock().topics.get_mut("t").unwrap().partitions[0].retain(|b| b.id != id);
                a.batch_done(id, m);
            }
        }
        assert!(queued.iter().all(|s| slot_state(s).is_some()));
    }

    /// Invariant: a queued record that waited longer than `max.block.ms`
    /// fails (it is never written) and the queue moves on.
    #[test]
    fn queued_records_expire_after_max_block() {
        let a = acc(200, 200, Compression::None);
        let now = Instant::now();
        let mut slots = Vec::new();
        for i in 0..10 {
            if let Appended::Queued(s) = a.append(rec(i), 0, now).unwrap() {
                slots.push(s);
            }
        }
        assert!(!slots.is_empty());
        let max_block = std::time::Duration::from_millis(100);
        assert_eq!(a.expire_queued(now, max_block), Some(now + max_block));
        assert!(a.expire_queued(now + max_block, max_block).is_none());
        for s in &slots {
            assert!(matches!(
                &*s.state.lock().unwrap(),
                ParkedState::Failed(ProduceError::MaxBlockTimeout { .. })
            ));
        }
        assert!(!a.lock().has_queued());
    }

    /// Invariant: a record for a topic name Kafka would refuse fails at
    /// `send` with a typed error (error code 17) and queues nothing.
    #[test]
    fn illegal_topic_name_fails_at_send() {
        let a = acc(1000, 1 << 20, Compression::None);
        let now = Instant::now();
        for topic in ["bad topic!", "..", ""] {
            let Err(err) = a.append(ProducerRecord::new(topic).value("v"), 0, now) else {
                panic!("{topic:?} was accepted")
            };
            assert!(
                matches!(err, ProduceError::InvalidTopic { .. }),
                "{topic:?}: {err}"
            );
            assert_eq!(
                err.error_code(),
                Some(kafka_proto::ErrorCode::InvalidTopicException)
            );
        }
        assert!(!a.lock().has_queued());
        assert!(a.parked_topics().is_empty());
    }

    #[test]
    fn unknown_topic_needs_metadata_and_bad_partition_fails() {
        let a = acc(1000, 1 << 20, Compression::None);
        let now = Instant::now();
        let slot = match a
            .append(ProducerRecord::new("other").value("a"), 0, now)
            .unwrap()
        {
            Appended::Queued(s) => s,
            _ => panic!("parked"),
        };
        assert!(matches!(
            a.append(ProducerRecord::new("other").value("b"), 0, now)
                .unwrap(),
            Appended::Queued(_)
        ));
        assert_eq!(a.parked_topics().len(), 1);
        a.set_partitions("other", 1);
        assert!(matches!(
            *slot.state.lock().unwrap(),
            ParkedState::Appended { index: 0, .. }
        ));
        assert!(a.parked_topics().is_empty());
        let e = a
            .append(ProducerRecord::new("t").partition(5), 0, now)
            .err()
            .unwrap();
        assert!(matches!(e, ProduceError::InvalidRecord(_)));
        let big = ProducerRecord::new("t").value(vec![0u8; 2 << 20]);
        let e = a.append(big, 0, now).err().unwrap();
        assert!(matches!(e, ProduceError::RecordTooLarge { .. }));
    }

    /// A transaction that must abort: records queued for it are refused
    /// when they would be appended.
    #[derive(Debug)]
    struct MustAbort;

    impl crate::hooks::SendHooks for MustAbort {
        fn may_drain(&self, _: &TopicPartition) -> bool {
            false
        }

        fn on_append_queued(&self, _: &TopicPartition, _: u64) -> Result<(), ProduceError> {
            Err(ProduceError::InvalidRecord(
                "the transaction must abort".into(),
            ))
        }
    }

    /// Invariant: freed memory that fails the queued records (their
    /// transaction must abort) wakes whoever waits for the queue to move
    /// (`flush`, a commit), as appending them does: the queue is empty
    /// now, and no later event would wake them.
    #[test]
    fn queued_records_failed_when_memory_is_freed_wake_the_queue_waiters() {
        let a = acc(200, 200, Compression::None);
        a.hooks.set(Arc::new(MustAbort)).unwrap();
        let now = Instant::now();
        let slot = (0..10)
            .find_map(|i| match a.append(rec(i), 0, now).unwrap() {
                Appended::Queued(s) => Some(s),
                Appended::Done { .. } => None,
            })
            .expect("memory runs out");
        let progress = a.progress.notified();
        tokio::pin!(progress);
        // The sender drains the batch that holds the memory; it completes.
        let b = a.lock().topics.get_mut("t").unwrap().partitions[0]
            .pop_front()
            .unwrap();
        a.batch_done(b.id, b.memory);
        assert!(matches!(
            &*slot.state.lock().unwrap(),
            ParkedState::Failed(ProduceError::InvalidRecord(_))
        ));
        assert!(!a.lock().has_queued());
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        assert!(
            progress.as_mut().poll(&mut cx).is_ready(),
            "the queue's waiters were not woken"
        );
    }

    #[test]
    fn flush_tracks_incomplete_batches() {
        let a = acc(100, 1 << 20, Compression::None);
        let now = Instant::now();
        for i in 0..5 {
            a.append(rec(i), 0, now).unwrap();
        }
        let target = a.lock().next_batch_id;
        assert!(!a.flushed(target));
        let ids: Vec<_> = a.lock().topics["t"].partitions[0]
            .iter()
            .map(|b| (b.id, b.memory))
            .collect();
        assert_eq!(ids.len(), 5, "one record per batch");
        for (id, memory) in ids {
            a.batch_done(id, memory);
        }
        assert!(a.flushed(target));
        assert_eq!(a.lock().used_memory, 0);
    }

    #[tokio::test]
    async fn completion_resolves_every_record() {
        let c = Arc::new(Completion::default());
        let f1 = tokio::spawn(record_result(c.clone(), 0, 1, "t".into(), 5));
        let f2 = tokio::spawn(record_result(c.clone(), 3, 1, "t".into(), 6));
        tokio::task::yield_now().await;
        c.complete(Ok(BatchResult {
            base_offset: 100,
            log_append_time: -1,
        }));
        assert_eq!(f1.await.unwrap().unwrap().offset, Some(100));
        let m = f2.await.unwrap().unwrap();
        assert_eq!((m.offset, m.timestamp), (Some(103), 6));
    }
}
