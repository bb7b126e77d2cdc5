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
//! `BufferPool` does, and released when the batch completes.

use crate::idempotence::{BatchId, BatchSequence};
use crate::metrics::Metrics;
use crate::record::{ProduceError, ProducerRecord, TopicPartition};
use bytes::{BufMut, Bytes, BytesMut};
use kafka_proto::record::{
    ATTRIBUTES_OFFSET, BATCH_HEADER_LEN, CRC_OFFSET, Compression, MAGIC, Record,
    RecordBatchBuilder, RecordHeader,
};
use std::collections::{BTreeSet, HashMap, VecDeque};
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
    fn new(
        id: BatchId,
        tp: TopicPartition,
        compression: Compression,
        capacity: usize,
        memory: usize,
        now: Instant,
    ) -> Self {
        let body = if compression == Compression::None {
            let mut b = BytesMut::with_capacity(capacity.max(BATCH_HEADER_LEN + 64));
            b.put_bytes(0, BATCH_HEADER_LEN);
            Body::Raw(b)
        } else {
            Body::Records(Vec::new())
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

    fn is_full(&self, batch_size: usize) -> bool {
        self.closed || self.size >= batch_size
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

    /// Encoded (or estimated) size.
    pub(crate) fn wire_size(&self) -> usize {
        self.encoded.as_ref().map_or(self.size, Bytes::len)
    }
}

/// Per-topic queues.
#[derive(Debug, Default)]
pub(crate) struct TopicQueues {
    pub name: Option<Arc<str>>,
    /// Known partition count (0 = unknown).
    pub num_partitions: i32,
    pub partitions: Vec<VecDeque<Batch>>,
    /// Records sent before the topic's metadata was known, in send order.
    pub parked: VecDeque<(ProducerRecord, i64, Arc<Parked>)>,
}

/// A record waiting for its topic's metadata.
#[derive(Debug, Default)]
pub(crate) struct Parked {
    pub state: Mutex<ParkedState>,
    pub notify: Notify,
}

/// Where a parked record is.
#[derive(Debug, Default)]
pub(crate) enum ParkedState {
    /// Still parked.
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
    /// Could not be appended.
    Failed(ProduceError),
    /// Gave up (`max.block.ms`).
    Cancelled,
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
    /// Cannot append now: buffer memory exhausted.
    NeedMemory(ProducerRecord),
    /// Cannot append now: the topic's partition count is unknown.
    NeedMetadata(ProducerRecord),
    /// Parked in send order until the topic's metadata is known.
    Parked(Arc<Parked>),
}

/// State shared by the producer handles and the sender task.
#[derive(Debug)]
pub(crate) struct Inner {
    pub topics: HashMap<Arc<str>, TopicQueues>,
    pub free_memory: usize,
    pub next_batch_id: BatchId,
    pub incomplete: BTreeSet<BatchId>,
    pub ticket_next: u64,
    pub ticket_serving: u64,
    pub cancelled: BTreeSet<u64>,
    pub closed: Option<ProduceError>,
    pub flushing: usize,
    pub fatal: Option<ProduceError>,
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
    /// Wakes blocked sends (memory freed, queue advanced) and flushers.
    pub progress: Notify,
    pub partitioner: Arc<dyn crate::partitioner::Partitioner>,
    pub metrics: Arc<Metrics>,
    /// The transaction manager's append hook ([`crate::sender::DrainGate::on_append`]),
    /// called under the accumulator lock before a record joins a batch.
    pub gate: OnceLock<Arc<dyn crate::sender::DrainGate>>,
}

impl Accumulator {
    pub fn new(
        config: AccConfig,
        partitioner: Arc<dyn crate::partitioner::Partitioner>,
        metrics: Arc<Metrics>,
    ) -> Self {
        Self {
            inner: Mutex::new(Inner {
                topics: HashMap::new(),
                free_memory: config.buffer_memory,
                next_batch_id: 1,
                incomplete: BTreeSet::new(),
                ticket_next: 0,
                ticket_serving: 0,
                cancelled: BTreeSet::new(),
                closed: None,
                flushing: 0,
                fatal: None,
            }),
            config,
            wake_sender: Notify::new(),
            progress: Notify::new(),
            partitioner,
            metrics,
            gate: OnceLock::new(),
        }
    }

    pub fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Appends `r` (whose timestamp is `ts`). `ticket`: the caller's place in
    /// the blocked queue, `None` for a fresh send (which must queue behind
    /// any blocked send).
    pub fn append(
        &self,
        r: ProducerRecord,
        ts: i64,
        ticket: Option<u64>,
        now: Instant,
    ) -> Result<Appended, ProduceError> {
        let mut g = self.lock();
        let inner = &mut *g;
        if let Some(e) = inner.fatal.clone().or_else(|| inner.closed.clone()) {
            return Err(e);
        }
        // Unknown topic (or records already parked for it): park the record
        // in send order until metadata arrives.
        let park = match inner.topics.get(r.topic.as_str()) {
            None => true,
            Some(tq) => tq.num_partitions <= 0 || !tq.parked.is_empty(),
        };
        if park {
            let tq = inner.topics.entry(Arc::from(r.topic.as_str())).or_default();
            if tq.name.is_none() {
                tq.name = Some(Arc::from(r.topic.as_str()));
            }
            let slot = Arc::new(Parked::default());
            tq.parked.push_back((r, ts, slot.clone()));
            drop(g);
            self.wake_sender.notify_one();
            return Ok(Appended::Parked(slot));
        }
        match ticket {
            None if inner.ticket_next != inner.ticket_serving => {
                return Ok(Appended::NeedMemory(r));
            }
            Some(t) if t != inner.ticket_serving => return Ok(Appended::NeedMemory(r)),
            _ => {}
        }
        let (a, wake) = self.place(inner, r, ts, now, false)?;
        let used = self.config.buffer_memory.saturating_sub(inner.free_memory);
        drop(g);
        if wake {
            self.metrics.set_buffer_used(used);
            self.wake_sender.notify_one();
        }
        Ok(a)
    }

    /// Appends to a topic with known partitions; returns whether the sender
    /// should be woken (a batch filled or was created).
    fn place(
        &self,
        inner: &mut Inner,
        mut r: ProducerRecord,
        ts: i64,
        now: Instant,
        ignore_memory: bool,
    ) -> Result<(Appended, bool), ProduceError> {
        let cfg = &self.config;
        let Some(tq) = inner.topics.get_mut(r.topic.as_str()) else {
            return Ok((Appended::NeedMetadata(r), false));
        };
        let n = tq.num_partitions;
        if n <= 0 {
            return Ok((Appended::NeedMetadata(r), false));
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
        let gate = self.gate.get();
        let check = |p: i32| match gate {
            Some(g) => g.on_append(&TopicPartition {
                topic: topic.clone(),
                partition: p,
            }),
            None => Ok(()),
        };
        // Try the open batch.
        if let Some(b) = tq.partitions[p as usize].back_mut() {
            check(p)?;
            if let Some(index) = b.try_append(&mut r, ts, cfg.batch_size) {
                let full = b.is_full(cfg.batch_size);
                let completion = b.completion.clone();
                return Ok((
                    Appended::Done {
                        completion,
                        index,
                        partition: p,
                        topic,
                        timestamp: ts,
                    },
                    full,
                ));
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
                    check(p)?;
                    if let Some(index) = b.try_append(&mut r, ts, cfg.batch_size) {
                        let completion = b.completion.clone();
                        return Ok((
                            Appended::Done {
                                completion,
                                index,
                                partition: p,
                                topic,
                                timestamp: ts,
                            },
                            false,
                        ));
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
        if inner.free_memory < memory && !ignore_memory {
            return Ok((Appended::NeedMemory(r), false));
        }
        check(p)?;
        inner.free_memory = inner.free_memory.saturating_sub(memory);
        let id = inner.next_batch_id;
        inner.next_batch_id += 1;
        inner.incomplete.insert(id);
        let tp = TopicPartition {
            topic: topic.clone(),
            partition: p,
        };
        let mut b = Batch::new(id, tp, cfg.compression, memory, memory, now);
        let index = b
            .try_append(&mut r, ts, cfg.batch_size)
            .expect("an empty batch takes any record");
        let completion = b.completion.clone();
        let tq = inner.topics.get_mut(&*topic).expect("topic present");
        tq.partitions[p as usize].push_back(b);
        Ok((
            Appended::Done {
                completion,
                index,
                partition: p,
                topic,
                timestamp: ts,
            },
            true,
        ))
    }

    /// Takes a place in the blocked-send queue.
    pub fn take_ticket(&self) -> u64 {
        let mut g = self.lock();
        let t = g.ticket_next;
        g.ticket_next += 1;
        t
    }

    /// Leaves the blocked-send queue (appended, failed or cancelled).
    pub fn release_ticket(&self, t: u64) {
        let mut g = self.lock();
        if t == g.ticket_serving {
            g.ticket_serving += 1;
            loop {
                let s = g.ticket_serving;
                if !g.cancelled.remove(&s) {
                    break;
                }
                g.ticket_serving += 1;
            }
        } else if t > g.ticket_serving {
            g.cancelled.insert(t);
        }
        drop(g);
        self.progress.notify_waiters();
    }

    /// Sets a topic's partition count (from metadata).
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
        let parked = std::mem::take(&mut tq.parked);
        if parked.is_empty() {
            return;
        }
        let now = Instant::now();
        for (r, ts, slot) in parked {
            let mut st = slot.state.lock().unwrap_or_else(|p| p.into_inner());
            if !matches!(*st, ParkedState::Waiting) {
                continue; // cancelled (max.block.ms)
            }
            *st = match self.place(g, r, ts, now, true) {
                Ok((
                    Appended::Done {
                        completion,
                        index,
                        partition,
                        topic,
                        timestamp,
                    },
                    _,
                )) => ParkedState::Appended {
                    completion,
                    index,
                    partition,
                    topic,
                    timestamp,
                },
                Ok(_) => ParkedState::Failed(ProduceError::InvalidRecord("unplaceable".into())),
                Err(e) => ParkedState::Failed(e),
            };
            drop(st);
            slot.notify.notify_waiters();
        }
        let used = self.config.buffer_memory.saturating_sub(g.free_memory);
        drop(guard);
        self.metrics.set_buffer_used(used);
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

    /// A batch completed (either way): memory back, flushers and blocked sends woken.
    pub fn batch_done(&self, id: BatchId, memory: usize) {
        let used = {
            let mut g = self.lock();
            g.free_memory += memory;
            g.incomplete.remove(&id);
            self.config.buffer_memory - g.free_memory
        };
        self.metrics.set_buffer_used(used);
        self.progress.notify_waiters();
    }

    /// True when every batch with an id below `target` completed.
    pub fn flushed(&self, target: BatchId) -> bool {
        self.lock().incomplete.first().is_none_or(|f| *f >= target)
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
    match completion.wait().await {
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

    #[test]
    fn batches_fill_to_batch_size_and_encode() {
        for c in [Compression::None] {
            let a = acc(1000, 1 << 20, c);
            let now = Instant::now();
            let mut first = None;
            for i in 0..30 {
                let (comp, idx) = done(a.append(rec(i), 1000 + i as i64, None, now).unwrap());
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

    #[test]
    fn back_pressure_and_fifo_tickets() {
        // Memory for exactly two batches.
        let a = acc(200, 400, Compression::None);
        let now = Instant::now();
        let mut batches = Vec::new();
        let mut blocked = None;
        for i in 0..20 {
            match a.append(rec(i), 0, None, now).unwrap() {
                Appended::Done { completion, .. } => batches.push(completion),
                Appended::NeedMemory(r) => {
                    blocked = Some(r);
                    break;
                }
                _ => panic!(),
            }
        }
        let r = blocked.expect("memory runs out");
        assert_eq!(a.lock().free_memory, 0);
        // A blocked send takes a ticket; fresh sends queue behind it.
        let t = a.take_ticket();
        assert!(matches!(
            a.append(rec(99), 0, None, now).unwrap(),
            Appended::NeedMemory(_)
        ));
        assert!(matches!(
            a.append(r.clone(), 0, Some(t), now).unwrap(),
            Appended::NeedMemory(_)
        ));
        // Free a batch: the ticket holder gets in.
        let id = a.lock().topics["t"].partitions[0][0].id;
        a.batch_done(id, 200);
        assert!(matches!(
            a.append(r, 0, Some(t), now).unwrap(),
            Appended::Done { .. }
        ));
        a.release_ticket(t);
        // Cancelled tickets are skipped.
        let t1 = a.take_ticket();
        let t2 = a.take_ticket();
        a.release_ticket(t2);
        assert_eq!(a.lock().ticket_serving, t1);
        a.release_ticket(t1);
        let g = a.lock();
        assert_eq!(g.ticket_serving, g.ticket_next);
    }

    #[test]
    fn unknown_topic_needs_metadata_and_bad_partition_fails() {
        let a = acc(1000, 1 << 20, Compression::None);
        let now = Instant::now();
        let slot = match a
            .append(ProducerRecord::new("other").value("a"), 0, None, now)
            .unwrap()
        {
            Appended::Parked(s) => s,
            _ => panic!("parked"),
        };
        assert!(matches!(
            a.append(ProducerRecord::new("other").value("b"), 0, None, now)
                .unwrap(),
            Appended::Parked(_)
        ));
        assert_eq!(a.parked_topics().len(), 1);
        a.set_partitions("other", 1);
        assert!(matches!(
            *slot.state.lock().unwrap(),
            ParkedState::Appended { index: 0, .. }
        ));
        assert!(a.parked_topics().is_empty());
        let e = a
            .append(ProducerRecord::new("t").partition(5), 0, None, now)
            .err()
            .unwrap();
        assert!(matches!(e, ProduceError::InvalidRecord(_)));
        let big = ProducerRecord::new("t").value(vec![0u8; 2 << 20]);
        let e = a.append(big, 0, None, now).err().unwrap();
        assert!(matches!(e, ProduceError::RecordTooLarge { .. }));
    }

    #[test]
    fn flush_tracks_incomplete_batches() {
        let a = acc(100, 1 << 20, Compression::None);
        let now = Instant::now();
        for i in 0..5 {
            a.append(rec(i), 0, None, now).unwrap();
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
        assert_eq!(a.lock().free_memory, 1 << 20);
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
