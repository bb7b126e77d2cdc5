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
#[derive(Debug, Default)]
pub struct Completion {
    /// The batch's outcome, set once.
    result: OnceLock<Result<BatchResult, ProduceError>>,
    /// Wakes the waiters when it is set.
    notify: Notify,
}

impl Completion {
    /// Completes the batch once; later calls are ignored (returns false:
    /// the first outcome wins).
    pub fn complete(&self, r: Result<BatchResult, ProduceError>) -> bool {
        let first = self.result.set(r).is_ok();
        if first {
            self.notify.notify_waiters();
        }
        first
    }

    /// The result, if completed.
    pub fn get(&self) -> Option<&Result<BatchResult, ProduceError>> {
        self.result.get()
    }

    /// Waits for the result.
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

pub(super) enum Body {
    /// Uncompressed: header placeholder + records encoded in place.
    Raw(BytesMut),
    /// Compressed: records kept until drain.
    Records(Vec<Record>),
}

/// One producer batch.
pub(crate) struct Batch {
    /// Its number, in creation order (what `flush` waits for).
    pub id: BatchId,
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
            async move { c.wait().await.clone() }
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
