//! One producer batch ([`Batch`]): the records of one partition, encoded as
//! they are appended (uncompressed) or kept until the batch is drained
//! (compressed), and the [`Completion`] every record of the batch waits on.

use crate::compression_ratio::{self, CompressionRatio};
use crate::idempotence::{BatchId, BatchSequence};
use crate::record::{ProduceError, ProducerRecord, TopicPartition};
use bytes::{BufMut, Bytes, BytesMut};
use kafka_proto::record::{
    ATTRIBUTES_OFFSET, BATCH_HEADER_LEN, CRC_OFFSET, Compression, MAGIC, Record,
    RecordBatchBuilder, RecordHeader, RecordParts, append_record, record_len, record_size,
};
use std::sync::{Arc, OnceLock};
use std::time::Instant;
use tokio::sync::Notify;

use super::AccConfig;

/// Outcome of a written batch: what every record of it learns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchResult {
    /// Offset of the first record (-1 if unknown).
    pub base_offset: i64,
    /// Log-append time (-1 with CreateTime).
    pub log_append_time: i64,
}

/// The single completion every record of a batch waits on.
///
/// A batch the broker refused as too large is split (`Batch::split`):
/// its completion then points to the completions of the batches its
/// records moved to, and a record follows it to its own
/// ([`Completion::record`], [`Completion::wait_record`]).
#[derive(Debug, Default)]
pub struct Completion {
    /// The batch's outcome, set once.
    outcome: OnceLock<Outcome>,
    /// Wakes the waiters when it is set.
    notify: Notify,
}

/// How a batch ended.
#[derive(Debug)]
enum Outcome {
    /// Written (or failed): every record's result follows from this one.
    Done(Result<BatchResult, ProduceError>),
    /// Split: the records from each index on (the first pair's index is 0)
    /// are in the batch of that completion, from its index 0 on.
    Split(Vec<(i32, Arc<Completion>)>),
}

impl Completion {
    /// Completes the batch once; later calls are ignored (returns false:
    /// the first outcome wins).
    pub fn complete(&self, r: Result<BatchResult, ProduceError>) -> bool {
        self.set(Outcome::Done(r))
    }

    /// Hands the records over to the batches a split made of this one:
    /// `parts` lists, in order, the index of the first record each took
    /// and its completion. False (and nothing changes) when the batch was
    /// already complete.
    pub(crate) fn split(&self, parts: Vec<(i32, Arc<Completion>)>) -> bool {
        debug_assert!(parts.first().is_some_and(|(i, _)| *i == 0));
        self.set(Outcome::Split(parts))
    }

    fn set(&self, outcome: Outcome) -> bool {
        let first = self.outcome.set(outcome).is_ok();
        if first {
            self.notify.notify_waiters();
        }
        first
    }

    /// The result, if the batch completed (`None` while it is in flight,
    /// and for a split batch: its records have results of their own).
    pub fn get(&self) -> Option<&Result<BatchResult, ProduceError>> {
        match self.outcome.get()? {
            Outcome::Done(r) => Some(r),
            Outcome::Split(_) => None,
        }
    }

    /// The result of the record at `index` of this batch, once known, and
    /// the record's index in the batch that was written (another one when
    /// this batch was split).
    pub fn record(&self, index: i32) -> Option<(&Result<BatchResult, ProduceError>, i32)> {
        let (mut c, mut i) = (self, index);
        loop {
            match c.outcome.get()? {
                Outcome::Done(r) => return Some((r, i)),
                Outcome::Split(parts) => (c, i) = part_of(parts, i)?,
            }
        }
    }

    /// Waits for the result of the record at `index` (see [`Self::record`]).
    pub async fn wait_record(&self, index: i32) -> (&Result<BatchResult, ProduceError>, i32) {
        let (mut c, mut i) = (self, index);
        loop {
            let notified = c.notify.notified();
            match c.outcome.get() {
                Some(Outcome::Done(r)) => return (r, i),
                Some(Outcome::Split(parts)) => match part_of(parts, i) {
                    Some(next) => (c, i) = next,
                    // Not reachable: a split covers every index from 0.
                    None => notified.await,
                },
                None => notified.await,
            }
        }
    }

    /// Waits for the batch's outcome (a split batch: until it is split).
    pub async fn wait(&self) {
        loop {
            let notified = self.notify.notified();
            if self.outcome.get().is_some() {
                return;
            }
            notified.await;
        }
    }
}

/// The part of a split batch that holds its record `index`, and the
/// record's index there.
fn part_of(parts: &[(i32, Arc<Completion>)], index: i32) -> Option<(&Completion, i32)> {
    let (start, c) = parts.iter().rev().find(|(start, _)| *start <= index)?;
    Some((c, index - start))
}

pub(super) enum Body {
    /// Uncompressed: header placeholder + records encoded in place.
    Raw(BytesMut),
    /// Compressed: records kept until drain.
    Records(Vec<Record>),
}

/// One producer batch.
pub(crate) struct Batch {
    /// Its number, unique among the producer's batches.
    pub id: BatchId,
    /// The batch the application's records were appended to: `id`, or
    /// for a part of a split batch the id of the batch first split (what
    /// `flush` waits for, and the batch's place in its partition's order).
    pub root: BatchId,
    /// The index in batch `root` of this batch's first record (0 unless a
    /// split made it).
    pub root_offset: i32,
    /// Its partition.
    pub tp: TopicPartition,
    /// When it was created (`linger.ms` and `delivery.timeout.ms` run from here).
    pub created: Instant,
    /// Records appended.
    pub records: i32,
    /// Uncompressed bytes, the batch header included.
    pub size: usize,
    /// Bytes of `buffer.memory` it reserves.
    pub memory: usize,
    /// Timestamp of its first record (the batch's base timestamp).
    pub base_ts: i64,
    /// Largest record timestamp.
    pub max_ts: i64,
    /// Produce requests it went out in.
    pub attempts: u32,
    /// Not drained again before this time (`retry.backoff.ms`).
    pub retry_at: Option<Instant>,
    /// What its records' send futures wait on.
    pub completion: Arc<Completion>,
    /// Encoded bytes, once drained.
    pub encoded: Option<Bytes>,
    /// Producer state the encoded bytes carry.
    pub sequence: Option<BatchSequence>,
    /// The records until it is encoded.
    pub(super) body: Option<Body>,
    /// `compression.type`.
    pub(super) compression: Compression,
    /// `compression.<codec>.level` (`None`: the codec's default).
    pub(super) compression_level: Option<i32>,
    /// Takes no more records (drained, or closed by a flush).
    pub(super) closed: bool,
    /// The uncompressed bytes at which the batch is full (`batch.size`,
    /// or more for a compressed batch: [`compression_ratio::uncompressed_limit`]).
    pub(super) limit: usize,
    /// A compressed batch's topic estimate (updated when it is encoded)
    /// and its value when the batch was created.
    pub(super) ratio: Option<(Arc<CompressionRatio>, f32)>,
    /// What the send hooks remember of this batch between its records
    /// ([`crate::hooks::SendHooks::on_append_to_batch`]).
    pub(super) hooks_memo: u64,
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

/// Upper bound of a record's encoded size in a batch (for size checks).
pub(crate) fn estimate_record_size(r: &ProducerRecord) -> usize {
    record_len(&parts(r, i64::MAX / 2, i32::MAX))
}

/// The record writer's view of `r` at `timestamp_delta`, `offset_delta`.
#[inline(always)]
fn parts(
    r: &ProducerRecord,
    timestamp_delta: i64,
    offset_delta: i32,
) -> RecordParts<'_, (String, Option<Bytes>)> {
    RecordParts {
        timestamp_delta,
        offset_delta,
        key: r.key.as_deref(),
        value: r.value.as_deref(),
        headers: &r.headers,
    }
}

impl Batch {
    /// A batch reserving `memory` bytes of `buffer.memory` (its buffer's
    /// capacity, uncompressed). A compressed batch is full at the
    /// uncompressed bytes `ratio` (its topic's estimate) allows for
    /// `batch.size` compressed; an uncompressed one at `batch.size`.
    pub(super) fn new(
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
            root: id,
            root_offset: 0,
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
            compression_level: cfg.compression_level,
            closed: false,
            limit,
            ratio,
            hooks_memo: 0,
        }
    }

    /// Appends if the record fits in `batch_size` (an empty batch takes any
    /// record). Returns the record's relative offset.
    pub(super) fn try_append(
        &mut self,
        r: &mut ProducerRecord,
        ts: i64,
        batch_size: usize,
    ) -> Option<i32> {
        if self.closed {
            return None;
        }
        let offset_delta = self.records;
        let ts_delta = if self.records == 0 {
            0
        } else {
            ts.wrapping_sub(self.base_ts)
        };
        let record = parts(r, ts_delta, offset_delta);
        let size = record_size(&record);
        let len = size.total;
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
            Body::Raw(out) => append_record(out, &record, size),
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

    /// The uncompressed bytes up to which the batch may grow while its
    /// partition waits for an in-flight slot: `bound` (`batch.max.size`
    /// within the topic's `max.message.bytes`) counted as `batch.size` is
    /// (estimated compressed bytes for a compressed batch), never below
    /// the batch's `limit`.
    pub(crate) fn growth_limit(&self, bound: usize, max_request_size: usize) -> usize {
        match &self.ratio {
            None => bound.max(self.limit),
            Some((_, estimate)) => {
                compression_ratio::uncompressed_limit(bound, max_request_size, *estimate)
                    .max(self.limit)
            }
        }
    }

    /// Where the batch goes in its partition's queue: batches of a
    /// partition are sent in this order (creation order, the parts of a
    /// split batch in its place).
    pub(crate) fn order_key(&self) -> (BatchId, i32) {
        (self.root, self.root_offset)
    }

    /// Splits an encoded batch of several records the broker refused as
    /// too large (Java's `ProducerBatch.split`) into at least two batches,
    /// in record order, ids from `next_id`: each holds at most `max_part`
    /// bytes of records, and at most half of this batch's (so that
    /// splitting again always makes smaller batches); a record larger than
    /// that gets a batch of its own. The parts are not encoded yet, and
    /// closed: they take no new records. Each keeps this batch's creation
    /// time, root and place. Reserved memory
    /// is not distributed here ([`Batch::memory`] of every part is 0), and
    /// this batch's completion is left alone: [`Batch::hand_over`] points
    /// it at the parts.
    pub(crate) fn split(
        &self,
        max_part: usize,
        mut next_id: impl FnMut() -> BatchId,
    ) -> Result<Vec<Batch>, ProduceError> {
        let encoded = self
            .encoded
            .as_ref()
            .ok_or_else(|| ProduceError::Encode("a batch is split only once encoded".into()))?;
        let decoded = kafka_proto::record::RecordBatch::decode(encoded).map_err(|e| {
            ProduceError::Encode(format!("re-reading a batch to split it: {e}").into())
        })?;
        if decoded.records.len() < 2 {
            return Err(ProduceError::Encode(
                "a batch of one record cannot be split".into(),
            ));
        }
        let lens: Vec<usize> = decoded
            .records
            .iter()
            .map(|record| {
                record_len(&RecordParts {
                    timestamp_delta: 0,
                    offset_delta: 0,
                    key: record.key.as_deref(),
                    value: record.value.as_deref(),
                    headers: &record.headers,
                })
            })
            .collect();
        let total: usize = lens.iter().sum();
        let target = max_part.min(total.div_ceil(2)).max(1);
        let mut parts: Vec<Batch> = Vec::new();
        let mut start = 0i32;
        for (i, (mut record, len)) in decoded.records.into_iter().zip(lens).enumerate() {
            let i = i as i32;
            let fits = parts
                .last()
                .is_some_and(|b| b.size - BATCH_HEADER_LEN + len <= target);
            if !fits {
                let mut part = Batch {
                    id: next_id(),
                    root: self.root,
                    root_offset: self.root_offset + i,
                    tp: self.tp.clone(),
                    created: self.created,
                    records: 0,
                    size: BATCH_HEADER_LEN,
                    memory: 0,
                    base_ts: -1,
                    max_ts: -1,
                    attempts: 0,
                    retry_at: None,
                    completion: Arc::new(Completion::default()),
                    encoded: None,
                    sequence: None,
                    body: None,
                    compression: self.compression,
                    compression_level: self.compression_level,
                    // Its records and sequence range are fixed: back in the
                    // partition's queue, it must take no new records.
                    closed: true,
                    limit: self.limit,
                    ratio: self.ratio.clone(),
                    hooks_memo: self.hooks_memo,
                };
                part.body = Some(if self.compression == Compression::None {
                    let mut b = BytesMut::with_capacity(BATCH_HEADER_LEN + target.min(1 << 20));
                    b.put_bytes(0, BATCH_HEADER_LEN);
                    Body::Raw(b)
                } else {
                    Body::Records(Vec::new())
                });
                parts.push(part);
                start = i;
            }
            let part = parts.last_mut().expect("a part");
            let offset_delta = i - start;
            let ts_delta = if part.records == 0 {
                part.base_ts = record.timestamp;
                part.max_ts = record.timestamp;
                0
            } else {
                part.max_ts = part.max_ts.max(record.timestamp);
                record.timestamp.wrapping_sub(part.base_ts)
            };
            let view = RecordParts {
                timestamp_delta: ts_delta,
                offset_delta,
                key: record.key.as_deref(),
                value: record.value.as_deref(),
                headers: &record.headers,
            };
            let size = record_size(&view);
            match part.body.as_mut().expect("a new part's body") {
                Body::Raw(out) => append_record(out, &view, size),
                Body::Records(v) => {
                    record.offset = i64::from(offset_delta);
                    v.push(record);
                }
            }
            part.records += 1;
            part.size += size.total;
        }
        Ok(parts)
    }

    /// After the broker refused this compressed batch as too large: its
    /// topic's compression estimate goes back to the larger of 1 (no
    /// gain) and what this batch showed, as Java's
    /// `RecordAccumulator.splitAndReenqueue` resets it.
    pub(crate) fn distrust_ratio(&self) {
        if let (Some((ratio, _)), Some(encoded)) = (&self.ratio, &self.encoded) {
            let seen = encoded.len() as f32 / self.size.max(1) as f32;
            ratio.reset(seen.max(1.0));
        }
    }

    /// Points this batch's completion at the completions of the `parts` a
    /// split made of it ([`Batch::split`]): every record's send future
    /// follows it to the part that holds the record. False when the batch
    /// was complete already (nothing changes then).
    pub(crate) fn hand_over(&self, parts: &[Batch]) -> bool {
        let index = parts
            .iter()
            .map(|p| (p.root_offset - self.root_offset, p.completion.clone()))
            .collect();
        self.completion.split(index)
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
                    .level(self.compression_level)
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

/// Waits for a batch's completion and turns it into the record's result.
pub(crate) async fn record_result(
    completion: Arc<Completion>,
    index: i32,
    partition: i32,
    topic: Arc<str>,
    timestamp: i64,
) -> Result<crate::record::RecordMetadata, ProduceError> {
    let (result, index) = completion.wait_record(index).await;
    record_metadata(result, index, partition, topic, timestamp)
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

    #[test]
    fn a_completion_keeps_the_first_outcome() {
        let c = Completion::default();
        assert!(c.get().is_none(), "in flight");
        assert!(c.complete(Ok(BatchResult {
            base_offset: 0,
            log_append_time: -1
        })));
        assert!(
            !c.complete(Err(ProduceError::Closed(None))),
            "first outcome wins"
        );
        assert!(c.get().unwrap().is_ok());
    }
    /// A waiter parked before the outcome is woken with it.
    #[tokio::test(flavor = "current_thread")]
    async fn a_waiter_is_woken_with_the_outcome() {
        let c = Arc::new(Completion::default());
        let waiter = tokio::spawn({
            let c = c.clone();
            async move { c.wait_record(0).await.0.clone() }
        });
        tokio::task::yield_now().await;
        c.complete(Ok(BatchResult {
            base_offset: 3,
            log_append_time: -1,
        }));
        assert_eq!(waiter.await.unwrap().unwrap().base_offset, 3);
    }

    /// Invariant: appending fills each uncompressed batch up to `batch.size`
    /// and no further, and every record lands in exactly one batch.
    ///
    /// Also the append micro-benchmark, for an instruction count under
    /// callgrind: `APPEND_MICRO_N` records (default 2,000; 10-byte key,
    /// 100-byte value, `APPEND_MICRO_HEADERS` headers) appended to 16 KiB
    /// uncompressed batches. Run twice with different counts; the difference
    /// divided by the difference of counts is the cost of one append.
    #[test]
    fn append_micro() {
        let n: usize = std::env::var("APPEND_MICRO_N").map_or(2_000, |v| v.parse().unwrap());
        let headers: usize =
            std::env::var("APPEND_MICRO_HEADERS").map_or(0, |v| v.parse().unwrap());
        let cfg = AccConfig {
            batch_size: 16 * 1024,
            buffer_memory: 1 << 30,
            compression: Compression::None,
            compression_level: None,
            max_request_size: 1 << 20,
            batch_max_size: 0,
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
        let (mut batches, mut bytes, mut records) = (0usize, 0usize, 0usize);
        // A record's encoded size is at most this (its varints grow with the
        // offset delta): a full batch has no room left for one more.
        let record_max = 200 + headers * 16;
        for i in 0..n {
            let ts = 1_700_000_000_000 + (i as i64 & 7);
            if batch.try_append(&mut r, ts, cfg.batch_size).is_none() {
                let full = std::hint::black_box(&batch);
                assert!(full.size <= cfg.batch_size, "batch of {} bytes", full.size);
                assert!(
                    full.size + record_max > cfg.batch_size,
                    "batch closed at {}",
                    full.size
                );
                bytes += full.size;
                records += full.records as usize;
                batches += 1;
                batch = Batch::new(i as u64, tp.clone(), &cfg, cfg.batch_size, &ratio, now);
                batch.try_append(&mut r, ts, cfg.batch_size).unwrap();
            }
        }
        records += batch.records as usize;
        assert_eq!(records, n, "every record in exactly one batch");
        assert!(batches > 0, "{n} records fill at least one batch");
        eprintln!("{n} records, {batches} full batches, {bytes} bytes");
    }
}
