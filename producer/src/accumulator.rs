//! The record accumulator: per-partition queues of batches, `buffer.memory`
//! accounting with FIFO back-pressure, and the batch encoding.
//!
//! Records are appended straight into the open batch of their partition:
//! uncompressed batches are encoded record by record into one `BytesMut`
//! (the 61-byte batch header is reserved up front and filled in when the
//! batch is drained), compressed batches collect [`Record`]s (moving the
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

use crate::compression_ratio::{self, CompressionRatio};
use crate::idempotence::{BatchId, BatchSequence};
use crate::metrics::Metrics;
use crate::record::{ProduceError, ProducerRecord, TopicPartition};
use bytes::{BufMut, Bytes, BytesMut};
use kafka_proto::record::{
    ATTRIBUTES_OFFSET, BATCH_HEADER_LEN, CRC_OFFSET, Compression, MAGIC, Record,
    RecordBatchBuilder, RecordHeader,
};
use std::collections::{BTreeSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Instant;
use tokio::sync::Notify;

/// Outcome of a written batch.
///
/// ```
/// use kafka_producer::accumulator::BatchResult;
/// let r = BatchResult { base_offset: 40, log_append_time: -1 };
/// // The third record of the batch (relative index 2) got offset 42.
/// assert_eq!(r.base_offset + 2, 42);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchResult {
    /// Offset of the first record (-1 if unknown).
    pub base_offset: i64,
    /// Log-append time (-1 with CreateTime).
    pub log_append_time: i64,
}

/// The single completion every record of a batch waits on.
///
/// ```
/// use kafka_producer::accumulator::{BatchResult, Completion};
/// let c = Completion::default();
/// assert!(c.get().is_none(), "in flight");
/// c.complete(Ok(BatchResult { base_offset: 7, log_append_time: -1 }));
/// assert_eq!(c.get().unwrap().as_ref().unwrap().base_offset, 7);
/// ```
#[derive(Debug, Default)]
pub struct Completion {
    result: OnceLock<Result<BatchResult, ProduceError>>,
    notify: Notify,
}

impl Completion {
    /// Completes the batch once; later calls are ignored (returns false).
    ///
    /// ```
    /// use kafka_producer::accumulator::{BatchResult, Completion};
    /// use kafka_producer::ProduceError;
    /// let c = Completion::default();
    /// assert!(c.complete(Ok(BatchResult { base_offset: 0, log_append_time: -1 })));
    /// assert!(!c.complete(Err(ProduceError::Closed(None))), "first outcome wins");
    /// assert!(c.get().unwrap().is_ok());
    /// ```
    pub fn complete(&self, r: Result<BatchResult, ProduceError>) -> bool {
        let first = self.result.set(r).is_ok();
        if first {
            self.notify.notify_waiters();
        }
        first
    }

    /// The result, if completed.
    ///
    /// ```
    /// use kafka_producer::accumulator::Completion;
    /// use kafka_producer::ProduceError;
    /// let c = Completion::default();
    /// assert!(c.get().is_none());
    /// c.complete(Err(ProduceError::Closed(None)));
    /// assert!(matches!(c.get(), Some(Err(ProduceError::Closed(None)))));
    /// ```
    pub fn get(&self) -> Option<&Result<BatchResult, ProduceError>> {
        self.result.get()
    }

    /// Waits for the result.
    ///
    /// ```
    /// use kafka_producer::accumulator::{BatchResult, Completion};
    /// use std::sync::Arc;
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let c = Arc::new(Completion::default());
    /// let waiter = tokio::spawn({
    ///     let c = c.clone();
    ///     async move { c.wait().await.clone() }
    /// });
    /// c.complete(Ok(BatchResult { base_offset: 3, log_append_time: -1 }));
    /// assert_eq!(waiter.await.unwrap().unwrap().base_offset, 3);
    /// # }
    /// ```
    pub async fn wait(&self) -> &Result<BatchResult, ProduceError> {
        loop {
            let notified = self.notify.notified();
            if let Some(r) = self.result.get() {
                return r;
            }
            notified.await;
        }
    }
}

enum Body {
    /// Uncompressed: header placeholder + records encoded in place.
    Raw(BytesMut),
    /// Compressed: records kept until drain.
    Records(Vec<Record>),
}

/// One producer batch.
pub(crate) struct Batch {
    pub id: BatchId,
    pub tp: TopicPartition,
    pub created: Instant,
    pub records: i32,
    pub size: usize,
    pub memory: usize,
    pub base_ts: i64,
    pub max_ts: i64,
    pub attempts: u32,
    pub retry_at: Option<Instant>,
    pub completion: Arc<Completion>,
    /// Encoded bytes, once drained.
    pub encoded: Option<Bytes>,
    /// Producer state the encoded bytes carry.
    pub sequence: Option<BatchSequence>,
    body: Option<Body>,
    compression: Compression,
    closed: bool,
    /// The uncompressed bytes at which the batch is full (`batch.size`,
    /// or more for a compressed batch: [`compression_ratio::uncompressed_limit`]).
    limit: usize,
    /// A compressed batch's topic estimate (updated when it is encoded)
    /// and its value when the batch was created.
    ratio: Option<(Arc<CompressionRatio>, f32)>,
    /// What the send hooks remember of this batch between its records
    /// ([`crate::hooks::SendHooks::on_append_to_batch`]).
    hooks_memo: u64,
}

impl std::fmt::Debug for Batch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batch")
            .field("id", &self.id)
            .field("tp", &self.tp)
            .field("records", &self.records)
            .field("size", &self.size)
            .field("attempts", &self.attempts)
            .field("sequence", &self.sequence)
            .finish()
    }
}

#[inline(always)]
fn uvar_len(v: u64) -> usize {
    if v < 1 << 7 {
        1
    } else if v < 1 << 14 {
        2
    } else if v < 1 << 21 {
        3
    } else if v < 1 << 28 {
        4
    } else {
        (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
    }
}
#[inline(always)]
fn zz32(v: i32) -> u64 {
    u64::from(((v << 1) ^ (v >> 31)) as u32)
}
#[inline(always)]
fn zz64(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}
#[inline(always)]
fn put_uvar(out: &mut BytesMut, mut v: u64) {
    while v >= 0x80 {
        out.put_u8((v as u8) | 0x80);
        v >>= 7;
    }
    out.put_u8(v as u8);
}
#[inline(always)]
fn nullable_len(b: Option<&[u8]>) -> usize {
    match b {
        None => 1,
        Some(b) => uvar_len(zz32(b.len() as i32)) + b.len(),
    }
}
#[inline(always)]
fn put_nullable(out: &mut BytesMut, b: Option<&[u8]>) {
    match b {
        None => out.put_u8(1),
        Some(b) => {
            put_uvar(out, zz32(b.len() as i32));
            out.put_slice(b);
        }
    }
}

/// Body size of a record (after its length prefix).
#[inline(always)]
fn body_len(r: &ProducerRecord, ts_delta: i64, offset_delta: i32) -> usize {
    let mut n = 1
        + uvar_len(zz64(ts_delta))
        + uvar_len(zz32(offset_delta))
        + nullable_len(r.key.as_deref())
        + nullable_len(r.value.as_deref())
        + uvar_len(zz32(r.headers.len() as i32));
    for (k, v) in &r.headers {
        n += nullable_len(Some(k.as_bytes())) + nullable_len(v.as_deref());
    }
    n
}

/// Upper bound of a record's encoded size in a batch (for size checks).
pub(crate) fn estimate_record_size(r: &ProducerRecord) -> usize {
    let b = body_len(r, i64::MAX / 2, i32::MAX);
    b + uvar_len(zz32(b as i32))
}

impl Batch {
    /// A batch reserving `memory` bytes of `buffer.memory` (its buffer's
    /// capacity, uncompressed). A compressed batch is full at the
    /// uncompressed bytes `ratio` (its topic's estimate) allows for
    /// `batch.size` compressed; an uncompressed one at `batch.size`.
    fn new(
        id: BatchId,
        tp: TopicPartition,
        cfg: &AccConfig,
        memory: usize,
        ratio: &Arc<CompressionRatio>,
        now: Instant,
    ) -> Self {
        let compression = cfg.compression;
        let (body, limit, ratio) = if compression == Compression::None {
            let mut b = BytesMut::with_capacity(memory.max(BATCH_HEADER_LEN + 64));
            b.put_bytes(0, BATCH_HEADER_LEN);
            (Body::Raw(b), cfg.batch_size, None)
        } else {
            let estimate = ratio.get();
            let limit = compression_ratio::uncompressed_limit(
                cfg.batch_size,
                cfg.max_request_size,
                estimate,
            );
            (
                Body::Records(Vec::new()),
                limit,
                Some((ratio.clone(), estimate)),
            )
        };
        Self {
            id,
            tp,
            created: now,
            records: 0,
            size: BATCH_HEADER_LEN,
            memory,
            base_ts: -1,
            max_ts: -1,
            attempts: 0,
            retry_at: None,
            completion: Arc::new(Completion::default()),
            encoded: None,
            sequence: None,
            body: Some(body),
            compression,
            closed: false,
            limit,
            ratio,
            hooks_memo: 0,
        }
    }

    /// Appends if the record fits in `batch_size` (an empty batch takes any
    /// record). Returns the record's relative offset.
    fn try_append(&mut self, r: &mut ProducerRecord, ts: i64, batch_size: usize) -> Option<i32> {
        if self.closed {
            return None;
        }
        let offset_delta = self.records;
        let ts_delta = if self.records == 0 {
            0
        } else {
            ts.wrapping_sub(self.base_ts)
        };
        let body = body_len(r, ts_delta, offset_delta);
        let len = body + uvar_len(zz32(body as i32));
        if self.records > 0 && self.size + len > batch_size {
            return None;
        }
        if self.records == 0 {
            self.base_ts = ts;
            self.max_ts = ts;
        } else if ts > self.max_ts {
            self.max_ts = ts;
        }
        match self.body.as_mut()? {
            Body::Raw(out) => {
                out.reserve(len);
                put_uvar(out, zz32(body as i32));
                out.put_u8(0);
                put_uvar(out, zz64(ts_delta));
                put_uvar(out, zz32(offset_delta));
                put_nullable(out, r.key.as_deref());
                put_nullable(out, r.value.as_deref());
                put_uvar(out, zz32(r.headers.len() as i32));
                for (k, v) in &r.headers {
                    put_nullable(out, Some(k.as_bytes()));
                    put_nullable(out, v.as_deref());
                }
            }
            Body::Records(v) => {
                let headers = std::mem::take(&mut r.headers)
                    .into_iter()
                    .map(|(key, value)| RecordHeader { key, value })
                    .collect();
                v.push(Record {
                    timestamp: ts,
                    offset: i64::from(offset_delta),
                    key: r.key.take(),
                    value: r.value.take(),
                    headers,
                });
            }
        }
        self.records += 1;
        self.size += len;
        Some(offset_delta)
    }

    /// Closed, or holding its limit's worth of bytes: it takes no more
    /// records and need not wait for `linger.ms`.
    pub(crate) fn is_full(&self) -> bool {
        self.closed || self.size >= self.limit
    }

    /// Closes the batch for appends and encodes it with `seq` (or as a
    /// non-idempotent batch).
    pub(crate) fn close_and_encode(
        &mut self,
        seq: Option<BatchSequence>,
        transactional: bool,
    ) -> Result<(), ProduceError> {
        self.closed = true;
        if self.encoded.is_some() {
            if seq != self.sequence {
                self.rewrite(seq);
            }
            return Ok(());
        }
        let (pid, epoch, base_seq) = match seq {
            Some(s) => (s.producer.producer_id, s.producer.epoch, s.base_sequence),
            None => (-1, -1, -1),
        };
        let bytes = match self.body.take() {
            Some(Body::Raw(mut b)) => {
                let total = b.len();
                let mut h = &mut b[..BATCH_HEADER_LEN];
                h.put_i64(0);
                h.put_i32((total - 12) as i32);
                h.put_i32(-1);
                h.put_i8(MAGIC);
                h.put_u32(0);
                h.put_i16(if transactional { 0x10 } else { 0 });
                h.put_i32(self.records - 1);
                h.put_i64(self.base_ts);
                h.put_i64(self.max_ts);
                h.put_i64(pid);
                h.put_i16(epoch);
                h.put_i32(base_seq);
                h.put_i32(self.records);
                let crc = crc32c::crc32c(&b[ATTRIBUTES_OFFSET..]);
                b[CRC_OFFSET..ATTRIBUTES_OFFSET].copy_from_slice(&crc.to_be_bytes());
                b.freeze()
            }
            Some(Body::Records(records)) => {
                let mut builder = RecordBatchBuilder::new(self.compression)
                    .producer(pid, epoch, base_seq)
                    .transactional(transactional);
                for r in records {
                    builder.push(r);
                }
                let mut out = BytesMut::with_capacity(self.size / 2 + 128);
                builder
                    .encode(&mut out)
                    .map_err(|e| ProduceError::Encode(e.to_string().into()))?;
                if let Some((ratio, _)) = &self.ratio {
                    let records = self.size.saturating_sub(BATCH_HEADER_LEN).max(1);
                    let compressed = out.len().saturating_sub(BATCH_HEADER_LEN);
                    ratio.observe(compressed as f32 / records as f32);
                }
                out.freeze()
            }
            None => return Err(ProduceError::Encode("batch has no body".into())),
        };
        self.encoded = Some(bytes);
        self.sequence = seq;
        Ok(())
    }

    /// Rewrites producer id, epoch and base sequence of the encoded batch
    /// (after an epoch bump), recomputing the CRC.
    pub(crate) fn rewrite(&mut self, seq: Option<BatchSequence>) {
        let Some(enc) = self.encoded.take() else {
            self.sequence = seq;
            return;
        };
        let mut b = BytesMut::from(&enc[..]);
        let (pid, epoch, base_seq) = match seq {
            Some(s) => (s.producer.producer_id, s.producer.epoch, s.base_sequence),
            None => (-1, -1, -1),
        };
        b[43..51].copy_from_slice(&pid.to_be_bytes());
        b[51..53].copy_from_slice(&epoch.to_be_bytes());
        b[53..57].copy_from_slice(&base_seq.to_be_bytes());
        let crc = crc32c::crc32c(&b[ATTRIBUTES_OFFSET..]);
        b[CRC_OFFSET..ATTRIBUTES_OFFSET].copy_from_slice(&crc.to_be_bytes());
        self.encoded = Some(b.freeze());
        self.sequence = seq;
    }

    /// Encoded size, or before encoding the size estimated (a compressed
    /// batch: at its topic's compression ratio when it was created).
    pub(crate) fn wire_size(&self) -> usize {
        match (&self.encoded, &self.ratio) {
            (Some(e), _) => e.len(),
            (None, Some((_, estimate))) => {
                compression_ratio::estimated_size(BATCH_HEADER_LEN, self.size, *estimate)
            }
            (None, None) => self.size,
        }
    }
}

/// Appends `r` to the open batch `b` if it fits the batch's limit and the
/// memory the batch may still reserve; the batch's reservation grows by
/// what it then holds beyond it (only a compressed batch outgrows
/// `batch.size`).
fn append_to_open(
    b: &mut Batch,
    r: &mut ProducerRecord,
    ts: i64,
    used_memory: &mut usize,
    buffer_memory: usize,
) -> Option<i32> {
    let free = buffer_memory.saturating_sub(*used_memory);
    let room = b.limit.min(b.memory.saturating_add(free));
    let index = b.try_append(r, ts, room)?;
    if b.size > b.memory {
        let extra = b.size - b.memory;
        b.memory += extra;
        *used_memory += extra;
    }
    Some(index)
}

/// Per-topic queues.
#[derive(Debug, Default)]
pub(crate) struct TopicQueues {
    pub name: Option<Arc<str>>,
    /// Known partition count (0 = unknown).
    pub num_partitions: i32,
    pub partitions: Vec<VecDeque<Batch>>,
    /// Records sent before the topic's metadata was known, in send order.
    pub parked: VecDeque<Queued>,
    /// How well the topic's batches compress (compressed batches only).
    pub ratio: Arc<CompressionRatio>,
}

/// A record the producer owns but could not append at `send` time: it
/// waits for its topic's metadata ([`TopicQueues::parked`]) or for buffer
/// memory ([`Inner::waiting`]). Its place (order and transaction) was fixed
/// when `send` was called; the sender task appends it when it can, whether
/// or not anybody polls the send future.
#[derive(Debug)]
pub(crate) struct Queued {
    pub record: ProducerRecord,
    pub timestamp: i64,
    /// Global enqueue order (what `flush` waits for).
    pub seq: u64,
    /// The transaction the record was sent in ([`crate::hooks::SendHooks::on_enqueue`]).
    pub serial: u64,
    /// When `send` was called (`max.block.ms` runs from here).
    pub sent_at: Instant,
    pub slot: Arc<Parked>,
}

/// Where a queued record is, shared with its send future.
#[derive(Debug, Default)]
pub(crate) struct Parked {
    pub state: Mutex<ParkedState>,
    pub notify: Notify,
}

impl Parked {
    fn set(&self, state: ParkedState) {
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
    pub topics: crate::fast_hash::FastHashMap<Arc<str>, TopicQueues>,
    /// Bytes reserved by incomplete batches (`buffer.memory` accounting).
    pub used_memory: usize,
    pub next_batch_id: BatchId,
    pub incomplete: BTreeSet<BatchId>,
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
    pub flushing: usize,
    pub fatal: Option<ProduceError>,
    /// The lowest batch id a [`Accumulator::wait_flushed`] caller waits
    /// for: batch completions wake flushers only once it is reached.
    pub flush_wanted: Option<BatchId>,
}

impl Inner {
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
    pub batch_size: usize,
    pub buffer_memory: usize,
    pub compression: Compression,
    pub max_request_size: usize,
}

/// The accumulator: shared by [`crate::Producer`] handles and the sender.
#[derive(Debug)]
pub(crate) struct Accumulator {
    pub config: AccConfig,
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
    pub partitioner: Arc<dyn crate::partitioner::Partitioner>,
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
                incomplete: BTreeSet::new(),
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
        // Try the open batch.
        if let Some(b) = tq.partitions[p as usize].back_mut() {
            check(p, Some(&mut *b), &mut new_batch_memo)?;
            if let Some(index) =
                append_to_open(b, &mut r, ts, &mut inner.used_memory, cfg.buffer_memory)
            {
                let full = b.is_full();
                return Ok((done(b.completion.clone(), index, p, topic), full));
            }
        }
        // A new batch is needed: sticky partitioners move on first (KIP-480).
        if !explicit {
            self.partitioner.on_new_batch(&r.topic, n, p);
            let q = self
                .partitioner
                .partition(&r.topic, r.key.as_deref(), r.value.as_deref(), n);
            if q != p && (0..n).contains(&q) {
                p = q;
                if let Some(b) = tq.partitions[p as usize].back_mut() {
                    check(p, Some(&mut *b), &mut new_batch_memo)?;
                    if let Some(index) =
                        append_to_open(b, &mut r, ts, &mut inner.used_memory, cfg.buffer_memory)
                    {
                        return Ok((done(b.completion.clone(), index, p, topic), false));
                    }
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
        inner.incomplete.insert(id);
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

    /// Appends queued records from the head of the memory queue while
    /// memory allows (called under the lock whenever memory was freed or the
    /// queue changed). Returns whether a batch was created or filled.
    fn drain_waiting(&self, inner: &mut Inner, now: Instant) -> bool {
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
    pub fn batch_done(&self, id: BatchId, memory: usize) {
        let (used, wake, moved, flushed) = {
            let mut g = self.lock();
            g.used_memory = g.used_memory.saturating_sub(memory);
            g.incomplete.remove(&id);
            let queued = g.waiting.len();
            let wake = queued > 0 && self.drain_waiting(&mut g, Instant::now());
            // Appended or failed (their transaction must abort): either way
            // records left the queue.
            let moved = g.waiting.len() < queued;
            let first = g.incomplete.first().copied();
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

    /// True when every batch with an id below `target` completed.
    pub fn flushed(&self, target: BatchId) -> bool {
        self.lock().incomplete.first().is_none_or(|f| *f >= target)
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
                if g.incomplete.first().is_none_or(|f| *f >= target) {
                    return;
                }
                g.flush_wanted = Some(g.flush_wanted.map_or(target, |w| w.min(target)));
            }
            notified.await;
        }
    }
}

/// The queued-record state of an appended record.
fn appended_state(a: Appended) -> ParkedState {
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

/// Waits for a batch's completion and turns it into the record's result.
pub(crate) async fn record_result(
    completion: Arc<Completion>,
    index: i32,
    partition: i32,
    topic: Arc<str>,
    timestamp: i64,
) -> Result<crate::record::RecordMetadata, ProduceError> {
    record_metadata(completion.wait().await, index, partition, topic, timestamp)
}

/// A record's outcome from its batch's.
pub(crate) fn record_metadata(
    batch: &Result<BatchResult, ProduceError>,
    index: i32,
    partition: i32,
    topic: Arc<str>,
    timestamp: i64,
) -> Result<crate::record::RecordMetadata, ProduceError> {
    match batch {
        Ok(b) => Ok(crate::record::RecordMetadata {
            topic,
            partition,
            offset: (b.base_offset >= 0).then(|| b.base_offset + i64::from(index)),
            timestamp: if b.log_append_time >= 0 {
                b.log_append_time
            } else {
                timestamp
            },
        }),
        Err(e) => Err(e.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_proto::record::RecordBatch;

    fn acc(batch_size: usize, memory: usize, compression: Compression) -> Accumulator {
        let a = Accumulator::new(
            AccConfig {
                batch_size,
                buffer_memory: memory,
                compression,
                max_request_size: 1 << 20,
            },
            Arc::new(crate::partitioner::RoundRobinPartitioner::new()),
            Arc::new(Metrics::new(true)),
        );
        a.set_partitions("t", 2);
        a
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

    /// The append micro-benchmark, for an instruction count under
    /// callgrind: `APPEND_MICRO_N` records (10-byte key, 100-byte value,
    /// `APPEND_MICRO_HEADERS` headers) appended to 16 KiB uncompressed
    /// batches. Run twice with different counts; the difference divided by
    /// the difference of counts is the cost of one append.
    #[test]
    #[ignore = "a micro-benchmark, run by hand under callgrind"]
    fn append_micro() {
        let n: usize = std::env::var("APPEND_MICRO_N").map_or(100_000, |v| v.parse().unwrap());
        let headers: usize =
            std::env::var("APPEND_MICRO_HEADERS").map_or(0, |v| v.parse().unwrap());
        let cfg = AccConfig {
            batch_size: 16 * 1024,
            buffer_memory: 1 << 30,
            compression: Compression::None,
            max_request_size: 1 << 20,
        };
        let ratio = Arc::new(CompressionRatio::default());
        let mut r = ProducerRecord::new("t")
            .partition(0)
            .key(Bytes::from_static(b"0123456789"))
            .value(Bytes::from_static(&[b'v'; 100]));
        for i in 0..headers {
            r = r.header(format!("h{i}"), Some(Bytes::from_static(b"value")));
        }
        let now = Instant::now();
        let tp = TopicPartition::new("t", 0);
        let mut batch = Batch::new(0, tp.clone(), &cfg, cfg.batch_size, &ratio, now);
        let (mut batches, mut bytes) = (0usize, 0usize);
        for i in 0..n {
            let ts = 1_700_000_000_000 + (i as i64 & 7);
            if batch.try_append(&mut r, ts, cfg.batch_size).is_none() {
                bytes += std::hint::black_box(&batch).size;
                batches += 1;
                batch = Batch::new(i as u64, tp.clone(), &cfg, cfg.batch_size, &ratio, now);
                batch.try_append(&mut r, ts, cfg.batch_size).unwrap();
            }
        }
        eprintln!("{n} records, {batches} full batches, {bytes} bytes");
    }
}
