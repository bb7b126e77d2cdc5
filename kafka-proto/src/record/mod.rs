//! RecordBatch v2 (magic 2): records, headers, control records, CRC-32C and compression.
//!
//! Layout (`DefaultRecordBatch.java`): a 61-byte header — base offset, batch
//! length, partition leader epoch, magic, CRC-32C over everything from the
//! attributes to the end, attributes, last offset delta, base/max timestamp,
//! producer id/epoch, base sequence, record count — then the records, compressed
//! as one blob when the attributes name a codec (the record count stays
//! uncompressed).
//!
//! - Build batches for the producer with [`RecordBatchBuilder`], or fill a
//!   [`RecordBatch`] yourself and call [`RecordBatch::encode`].
//! - Decode one batch with [`RecordBatch::decode`] / [`RecordBatch::decode_bytes`]
//!   (zero-copy keys and values), or the concatenated batches of a Fetch
//!   response with [`RecordBatches`], which stops cleanly at a truncated last
//!   batch.
//! - Or view one batch with [`RecordBatchView`]: CRC-checked header, records
//!   parsed lazily as [`RecordRef`]s borrowing from the input (no allocation
//!   and no reference counting per record).
//! - Control batches carry one [`ControlRecord`] (transaction markers).
//! - Codecs: gzip, snappy (xerial framing, as Java), lz4 (LZ4 Frame) and zstd,
//!   each behind its cargo feature; all pure Rust.
//!
//! ```
//! use bytes::{Bytes, BytesMut};
//! use kafka_proto::record::{Compression, Record, RecordBatch, RecordBatchBuilder};
//!
//! let mut builder = RecordBatchBuilder::new(Compression::None)
//!     .producer(1000, 5, 7)
//!     .transactional(true);
//! builder
//!     .push(Record::new(1_700_000_000_000, Some(Bytes::from("k")), Some(Bytes::from("v"))))
//!     .push(Record::new(1_700_000_000_001, None, Some(Bytes::from("w"))).with_header("h", None));
//! let mut buf = BytesMut::new();
//! builder.encode(&mut buf).unwrap();
//!
//! let batch = RecordBatch::decode(&buf).unwrap();
//! assert_eq!(batch.records.len(), 2);
//! assert_eq!(batch.records[1].offset, 1);
//! assert!(batch.is_transactional);
//! assert_eq!(batch.last_sequence(), 8);
//! ```

mod compression;
mod control;
mod decode;
mod writer;
#[cfg(feature = "zstd")]
mod zstd;

pub use control::{ControlRecord, ControlRecordType};
pub use decode::{
    HeaderRefs, HeadersRef, RecordBatchView, RecordBatches, RecordHeaderRef, RecordRef, RecordRefs,
};
pub use writer::{HeaderRef, RecordParts, RecordSize, append_record, record_len, record_size};

use crate::error::{EncodeError, EncodeErrorKind};
use crate::primitives::{uvar_len, zz32, zz64};
use bytes::{BufMut, Bytes};
use std::ops::DerefMut;

/// The most bytes of scratch a thread keeps between compressed batches
/// (each of its two buffers); a larger batch's buffers are freed after it.
const SCRATCH_KEPT: usize = 4 << 20;

thread_local! {
    /// This thread's scratch for compressed batches: the records before
    /// compression, and the compressed bytes. Kept between batches, so that
    /// a producer compressing batch after batch reuses the memory instead
    /// of faulting fresh pages in for every batch.
    static SCRATCH: std::cell::Cell<(Vec<u8>, Vec<u8>)> =
        const { std::cell::Cell::new((Vec::new(), Vec::new())) };
}

/// Runs `f` with this thread's two scratch buffers, emptied (a nested call
/// gets new ones), and keeps them for the next batch unless they outgrew
/// [`SCRATCH_KEPT`].
fn with_scratch<T>(f: impl FnOnce(&mut Vec<u8>, &mut Vec<u8>) -> T) -> T {
    let (mut raw, mut c) = SCRATCH.take();
    raw.clear();
    c.clear();
    let result = f(&mut raw, &mut c);
    if raw.capacity() <= SCRATCH_KEPT && c.capacity() <= SCRATCH_KEPT {
        SCRATCH.set((raw, c));
    }
    result
}

/// The magic byte of RecordBatch v2.
pub const MAGIC: i8 = 2;
/// Size of the batch header before the records (the minimum batch size).
pub const BATCH_HEADER_LEN: usize = 61;
/// Bytes before the batch length field is counted: base offset and length.
pub const LOG_OVERHEAD: usize = 12;
/// Offset of the CRC field in the batch.
pub const CRC_OFFSET: usize = 17;
/// Offset of the attributes: the CRC covers `ATTRIBUTES_OFFSET..end`.
pub const ATTRIBUTES_OFFSET: usize = 21;
/// Smallest encoded record (length prefix included): every field one byte.
pub const MIN_RECORD_LEN: usize = 7;
/// Default bound on the decompressed size of one batch's records.
pub const DEFAULT_MAX_DECOMPRESSED_SIZE: usize = 64 * 1024 * 1024;

const ATTR_COMPRESSION_MASK: i16 = 0x07;
const ATTR_TIMESTAMP_TYPE: i16 = 0x08;
const ATTR_TRANSACTIONAL: i16 = 0x10;
const ATTR_CONTROL: i16 = 0x20;
const ATTR_DELETE_HORIZON: i16 = 0x40;

/// Java's `compression.lz4.level` default, the one level at which Java
/// compresses with LZ4's fast compressor (the others select LZ4 HC).
const LZ4_FAST_LEVEL: i32 = 9;
/// zstd's lowest (fastest) level, as Java's `compression.zstd.level` bounds it.
const ZSTD_MIN_LEVEL: i32 = -131_072;
/// The strongest zstd level this crate's fast-strategy encoder accepts:
/// Java's default.
const ZSTD_MAX_FAST_LEVEL: i32 = 3;

/// The codec of a batch's records section (attribute bits 0-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Compression {
    /// 0: uncompressed.
    #[default]
    None,
    /// 1: gzip (feature `gzip`).
    Gzip,
    /// 2: snappy, xerial-framed (feature `snappy`).
    Snappy,
    /// 3: LZ4 Frame (feature `lz4`).
    Lz4,
    /// 4: zstd (feature `zstd`; needs Produce v7+).
    Zstd,
}

impl Compression {
    /// The attribute id (0-4).
    pub fn id(self) -> u8 {
        match self {
            Self::None => 0,
            Self::Gzip => 1,
            Self::Snappy => 2,
            Self::Lz4 => 3,
            Self::Zstd => 4,
        }
    }

    /// The codec for an attribute id, `None` for ids 5-7.
    pub fn from_id(id: u8) -> Option<Self> {
        Some(match id {
            0 => Self::None,
            1 => Self::Gzip,
            2 => Self::Snappy,
            3 => Self::Lz4,
            4 => Self::Zstd,
            _ => return None,
        })
    }

    /// The Kafka config name (`compression.type`) and cargo feature name.
    pub fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Gzip => "gzip",
            Self::Snappy => "snappy",
            Self::Lz4 => "lz4",
            Self::Zstd => "zstd",
        }
    }

    /// Checks a level of Java's `compression.<codec>.level` keys against
    /// what this crate's encoder of the codec can do; the error says why
    /// and what to set instead.
    ///
    /// - gzip: Java's range, 1 (fastest) to 9 (smallest), and -1 for the
    ///   default (6); each level is honoured.
    /// - lz4: Java's range is 1 to 17, and its default 9 is the only level
    ///   at which Java uses LZ4's fast compressor (any other level selects
    ///   LZ4 HC). This crate's encoder is the fast compressor, so 9 is
    ///   accepted and any other level refused.
    /// - zstd: this crate's encoder follows zstd's fast strategy (about
    ///   zstd level 1): levels up to Java's default 3 are accepted (the
    ///   frames are what those levels would write, at the fast strategy's
    ///   ratio), stronger levels refused.
    /// - none and snappy have no levels.
    ///
    /// ```
    /// use kafka_proto::record::Compression;
    /// assert!(Compression::Gzip.check_level(1).is_ok());
    /// assert!(Compression::Lz4.check_level(9).is_ok());
    /// assert!(Compression::Lz4.check_level(12).is_err());
    /// ```
    pub fn check_level(self, level: i32) -> Result<(), String> {
        match self {
            Self::Gzip if level == -1 || (1..=9).contains(&level) => Ok(()),
            Self::Gzip => {
                Err("gzip levels are 1 (fastest) to 9 (smallest), or -1 for the default (6)".into())
            }
            Self::Lz4 if level == LZ4_FAST_LEVEL => Ok(()),
            Self::Lz4 => Err(format!(
                "lz4 levels other than {LZ4_FAST_LEVEL} select LZ4 HC, which kafka-eos's pure-Rust encoder does not implement: remove the setting or set {LZ4_FAST_LEVEL} (the fast compressor, Java's default)"
            )),
            Self::Zstd if (ZSTD_MIN_LEVEL..=ZSTD_MAX_FAST_LEVEL).contains(&level) => Ok(()),
            Self::Zstd => Err(format!(
                "kafka-eos's pure-Rust zstd encoder follows zstd's fast strategy: levels {ZSTD_MIN_LEVEL} to {ZSTD_MAX_FAST_LEVEL} (Java's default); a stronger level is not implemented"
            )),
            Self::None | Self::Snappy => Err(format!("{} has no compression levels", self.name())),
        }
    }

    /// True when this build can encode and decode the codec.
    pub fn is_supported(self) -> bool {
        match self {
            Self::None => true,
            Self::Gzip => cfg!(feature = "gzip"),
            Self::Snappy => cfg!(feature = "snappy"),
            Self::Lz4 => cfg!(feature = "lz4"),
            Self::Zstd => cfg!(feature = "zstd"),
        }
    }
}

/// What a batch's timestamps mean (attribute bit 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TimestampType {
    /// Set by the producer (what clients send).
    #[default]
    Create,
    /// Overwritten by the broker on append; `max_timestamp` holds it.
    LogAppend,
}

/// A record header: a UTF-8 key and an optional value.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct RecordHeader {
    /// Header key.
    pub key: String,
    /// Header value; `None` is null.
    pub value: Option<Bytes>,
}

/// One record of a batch.
///
/// `timestamp` and `offset` are absolute: the batch encodes them as deltas
/// from its `base_timestamp` and `base_offset` (wrapping arithmetic, so any
/// decoded record re-encodes identically); the offset delta must fit an `i32`.
///
/// ```
/// use bytes::Bytes;
/// use kafka_proto::record::Record;
/// let r = Record::new(1_700_000_000_000, Some(Bytes::from("key")), Some(Bytes::from("value")))
///     .with_header("trace-id", Some(Bytes::from("abc")));
/// assert_eq!(r.headers[0].key, "trace-id");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Record {
    /// Absolute timestamp (ms): `base_timestamp + timestampDelta`.
    pub timestamp: i64,
    /// Absolute offset: `base_offset + offsetDelta`.
    pub offset: i64,
    /// Key; `None` is null.
    pub key: Option<Bytes>,
    /// Value; `None` is null (a tombstone).
    pub value: Option<Bytes>,
    /// Headers, in order.
    pub headers: Vec<RecordHeader>,
}

impl Record {
    /// A record at `timestamp` with no headers and offset 0 (a builder or the
    /// batch assigns offsets).
    ///
    /// ```
    /// use bytes::Bytes;
    /// use kafka_proto::record::Record;
    /// let r = Record::new(5, None, Some(Bytes::from("v")));
    /// assert_eq!((r.timestamp, r.offset, r.key, r.headers.len()), (5, 0, None, 0));
    /// ```
    pub fn new(timestamp: i64, key: Option<Bytes>, value: Option<Bytes>) -> Self {
        Self {
            timestamp,
            offset: 0,
            key,
            value,
            headers: Vec::new(),
        }
    }

    /// Appends a header.
    pub fn with_header(mut self, key: impl Into<String>, value: Option<Bytes>) -> Self {
        self.headers.push(RecordHeader {
            key: key.into(),
            value,
        });
        self
    }
}

/// Limits applied while decoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeOptions {
    /// Maximum decompressed size of one batch's records section; larger output
    /// fails with `DecompressedTooLarge` (default 64 MiB).
    pub max_decompressed_size: usize,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        Self {
            max_decompressed_size: DEFAULT_MAX_DECOMPRESSED_SIZE,
        }
    }
}

/// A RecordBatch v2 with its records decoded.
///
/// Header fields are stored as given: [`RecordBatchBuilder`] computes
/// `last_offset_delta`, `base_timestamp` and `max_timestamp`; when filling a
/// batch by hand keep them consistent with the records.
///
/// ```
/// use bytes::Bytes;
/// use kafka_proto::record::{ControlRecord, RecordBatch};
/// // A COMMIT marker as the coordinator writes it.
/// let marker = RecordBatch::control(42, 1000, 5, 1_700_000_000_000, ControlRecord::commit(3));
/// let bytes = marker.encode_to_vec().unwrap();
/// let back = RecordBatch::decode(&bytes).unwrap();
/// assert_eq!(back, marker);
/// assert_eq!(back.control_record().unwrap().unwrap(), ControlRecord::commit(3));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordBatch {
    /// Offset of the first record (producers send 0).
    pub base_offset: i64,
    /// Partition leader epoch (clients send −1; not covered by the CRC).
    pub partition_leader_epoch: i32,
    /// Codec of the records section.
    pub compression: Compression,
    /// Meaning of the timestamps.
    pub timestamp_type: TimestampType,
    /// Part of a transaction.
    pub is_transactional: bool,
    /// A control batch (transaction marker).
    pub is_control: bool,
    /// `base_timestamp` is a delete horizon (compacted tombstones, KIP-534).
    pub has_delete_horizon: bool,
    /// Offset delta of the last record (count − 1 when written by a producer).
    pub last_offset_delta: i32,
    /// Timestamp of the first record (or the delete horizon).
    pub base_timestamp: i64,
    /// Largest record timestamp (or the log-append time).
    pub max_timestamp: i64,
    /// Producer id, −1 if not idempotent.
    pub producer_id: i64,
    /// Producer epoch, −1 if not idempotent.
    pub producer_epoch: i16,
    /// Sequence of the first record, −1 if not idempotent.
    pub base_sequence: i32,
    /// The records.
    pub records: Vec<Record>,
}

impl Default for RecordBatch {
    fn default() -> Self {
        Self {
            base_offset: 0,
            partition_leader_epoch: -1,
            compression: Compression::None,
            timestamp_type: TimestampType::Create,
            is_transactional: false,
            is_control: false,
            has_delete_horizon: false,
            last_offset_delta: -1,
            base_timestamp: -1,
            max_timestamp: -1,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            records: Vec::new(),
        }
    }
}

/// `seq + inc` with Kafka's wrap rule: past `i32::MAX` sequences continue at 0
/// (`DefaultRecordBatch.incrementSequence`).
pub fn increment_sequence(seq: i32, inc: i32) -> i32 {
    // Java `int` arithmetic wraps; so does ours, so that hostile values (a
    // negative delta from a corrupt batch) give Java's answer instead of a panic.
    if seq > i32::MAX.wrapping_sub(inc) {
        inc.wrapping_sub(i32::MAX.wrapping_sub(seq)).wrapping_sub(1)
    } else {
        seq.wrapping_add(inc)
    }
}

/// `seq − dec` with the inverse wrap (`DefaultRecordBatch.decrementSequence`).
pub fn decrement_sequence(seq: i32, dec: i32) -> i32 {
    if seq < dec {
        i32::MAX.wrapping_sub(dec.wrapping_sub(seq)).wrapping_add(1)
    } else {
        seq.wrapping_sub(dec)
    }
}

/// An output buffer a batch can be encoded into: growable, and readable back
/// so the length and CRC can be patched in. Implemented for `Vec<u8>` and
/// `BytesMut`.
///
/// ```
/// use bytes::BytesMut;
/// use kafka_proto::record::RecordBatch;
/// let batch = RecordBatch::default();
/// let (mut v, mut b) = (Vec::new(), BytesMut::new());
/// batch.encode(&mut v).unwrap();
/// batch.encode(&mut b).unwrap();
/// assert_eq!(v, &b[..]);
/// ```
pub trait BatchBuf: BufMut + DerefMut<Target = [u8]> {
    /// Makes room for at least `additional` more bytes.
    fn reserve_bytes(&mut self, additional: usize);
    /// Appends `n` zero bytes (then overwritten in place).
    fn grow_zeroed(&mut self, n: usize);
    /// Bytes the buffer can hold without reallocating.
    fn capacity(&self) -> usize;
    /// Shortens the buffer to `len` bytes.
    fn truncate_to(&mut self, len: usize);
}

impl BatchBuf for Vec<u8> {
    fn reserve_bytes(&mut self, additional: usize) {
        self.reserve(additional);
    }
    fn grow_zeroed(&mut self, n: usize) {
        self.resize(self.len() + n, 0);
    }
    fn capacity(&self) -> usize {
        <Vec<u8>>::capacity(self)
    }
    fn truncate_to(&mut self, len: usize) {
        self.truncate(len);
    }
}

impl BatchBuf for bytes::BytesMut {
    fn reserve_bytes(&mut self, additional: usize) {
        self.reserve(additional);
    }
    fn grow_zeroed(&mut self, n: usize) {
        self.resize(self.len() + n, 0);
    }
    fn capacity(&self) -> usize {
        <bytes::BytesMut>::capacity(self)
    }
    fn truncate_to(&mut self, len: usize) {
        self.truncate(len);
    }
}

fn invalid(field: &'static str, msg: String) -> EncodeError {
    EncodeError::new(field, EncodeErrorKind::InvalidValue(msg))
}

fn too_long(field: &'static str, n: usize) -> EncodeError {
    EncodeError::new(field, EncodeErrorKind::TooLong(n))
}

/// Encoded size of a varint length prefix plus the bytes (null: one byte).
/// `len <= i32::MAX`, so its zigzag form is `2 * len`.
#[inline(always)]
fn nullable_len(b: Option<&[u8]>) -> usize {
    match b {
        None => 1,
        Some(b) => uvar_len(2 * b.len() as u64) + b.len(),
    }
}

/// A record's zigzagged varint fields and sizes, computed once per record.
struct RecordPlan {
    /// Zigzag timestamp delta.
    ts: u64,
    /// Zigzag offset delta.
    od: u64,
    /// Bytes after the length prefix.
    body_len: usize,
    /// Full encoded size, length prefix included.
    len: usize,
}

fn check_len(field: &'static str, n: usize) -> Result<(), EncodeError> {
    if n > i32::MAX as usize {
        return Err(too_long(field, n));
    }
    Ok(())
}

/// Size of a record's headers section (count and headers), validating the
/// lengths.
#[inline(never)]
fn headers_len(headers: &[RecordHeader]) -> Result<usize, EncodeError> {
    check_len("record.headers", headers.len())?;
    let mut n = uvar_len(2 * headers.len() as u64);
    for h in headers {
        check_len("record.headers.key", h.key.len())?;
        check_len(
            "record.headers.value",
            h.value.as_ref().map_or(0, Bytes::len),
        )?;
        n += nullable_len(Some(h.key.as_bytes())) + nullable_len(h.value.as_deref());
    }
    Ok(n)
}

/// Names what [`plan_record`] rejected (off the hot path).
#[cold]
#[inline(never)]
fn record_error(r: &Record, base_offset: i64) -> EncodeError {
    if i32::try_from(r.offset.wrapping_sub(base_offset)).is_err() {
        return invalid(
            "record.offset",
            format!("offset {} too far from base offset {base_offset}", r.offset),
        );
    }
    let key = r.key.as_ref().map_or(0, Bytes::len);
    if key > i32::MAX as usize {
        return too_long("record.key", key);
    }
    too_long("record.value", r.value.as_ref().map_or(0, Bytes::len))
}

/// Validates a record and sizes it: offset delta within `i32`, every length
/// within `i32`.
#[inline(always)]
fn plan_record(
    r: &Record,
    base_offset: i64,
    base_timestamp: i64,
) -> Result<RecordPlan, EncodeError> {
    let delta = r.offset.wrapping_sub(base_offset);
    let key = r.key.as_deref();
    let value = r.value.as_deref();
    let (klen, vlen) = (key.map_or(0, <[u8]>::len), value.map_or(0, <[u8]>::len));
    if i64::from(delta as i32) != delta || (klen | vlen) > i32::MAX as usize {
        return Err(record_error(r, base_offset));
    }
    let ts = zz64(r.timestamp.wrapping_sub(base_timestamp));
    let od = zz32(delta as i32);
    // The header count alone (one byte) when there is no header.
    let headers_len = if r.headers.is_empty() {
        1
    } else {
        headers_len(&r.headers)?
    };
    // The attributes byte, then the fields.
    let body_len =
        1 + uvar_len(ts) + uvar_len(od) + nullable_len(key) + nullable_len(value) + headers_len;
    check_len("record", body_len)?;
    Ok(RecordPlan {
        ts,
        od,
        body_len,
        len: uvar_len(2 * body_len as u64) + body_len,
    })
}

/// Writes an unsigned varint at `dst[pos..]`, returns the position after it.
#[inline(always)]
fn put_uvar(dst: &mut [u8], pos: usize, v: u64) -> usize {
    if v < 1 << 7 {
        dst[pos] = v as u8;
        pos + 1
    } else if v < 1 << 14 {
        dst[pos] = (v as u8) | 0x80;
        dst[pos + 1] = (v >> 7) as u8;
        pos + 2
    } else {
        put_uvar_long(dst, pos, v)
    }
}

#[inline(never)]
fn put_uvar_long(dst: &mut [u8], mut pos: usize, mut v: u64) -> usize {
    while v >= 0x80 {
        dst[pos] = (v as u8) | 0x80;
        v >>= 7;
        pos += 1;
    }
    dst[pos] = v as u8;
    pos + 1
}

/// Writes a varint length (zigzag, `2 * len`) and the bytes, or `-1` (zigzag
/// `1`) for null.
#[inline(always)]
fn put_nullable(dst: &mut [u8], pos: usize, b: Option<&[u8]>) -> usize {
    match b {
        None => {
            dst[pos] = 1;
            pos + 1
        }
        Some(b) => {
            let p = put_uvar(dst, pos, 2 * b.len() as u64);
            let end = p + b.len();
            dst[p..end].copy_from_slice(b);
            end
        }
    }
}

#[inline(never)]
fn put_headers(dst: &mut [u8], mut pos: usize, headers: &[RecordHeader]) -> usize {
    pos = put_uvar(dst, pos, 2 * headers.len() as u64);
    for h in headers {
        pos = put_nullable(dst, pos, Some(h.key.as_bytes()));
        pos = put_nullable(dst, pos, h.value.as_deref());
    }
    pos
}

/// Writes a record's fields up to its key (included) at the start of `dst`;
/// returns the position after them.
#[inline(always)]
fn write_up_to_key(dst: &mut [u8], r: &Record, p: &RecordPlan) -> usize {
    let mut i = put_uvar(dst, 0, 2 * p.body_len as u64);
    dst[i] = 0; // record attributes: unused
    i = put_uvar(dst, i + 1, p.ts);
    i = put_uvar(dst, i, p.od);
    put_nullable(dst, i, r.key.as_deref())
}

/// Writes the headers section (count and headers) at `dst[pos..]`.
#[inline(always)]
fn write_headers(dst: &mut [u8], pos: usize, r: &Record) -> usize {
    if r.headers.is_empty() {
        dst[pos] = 0;
        pos + 1
    } else {
        put_headers(dst, pos, &r.headers)
    }
}

/// Writes one record, planned as `p`, into `dst` (exactly `p.len` bytes).
#[inline(always)]
fn write_record(dst: &mut [u8], r: &Record, p: &RecordPlan) {
    let mut i = write_up_to_key(dst, r, p);
    i = put_nullable(dst, i, r.value.as_deref());
    i = write_headers(dst, i, r);
    debug_assert_eq!(i, dst.len());
}

/// Largest zero-filled run added ahead of the records being written.
const GROW_CHUNK: usize = 64 * 1024;

/// Appends the records to `out` in one pass: each record is validated and
/// sized once, then written in place into zero-filled room that grows in
/// chunks within the buffer's spare capacity (so no reallocation beyond what
/// the records need). Returns the records section size.
fn append_records<B: BatchBuf>(
    out: &mut B,
    records: &[Record],
    base_offset: i64,
    base_timestamp: i64,
) -> Result<usize, EncodeError> {
    let start = out.len();
    let mut pos = start;
    for r in records {
        let p = plan_record(r, base_offset, base_timestamp)?;
        let end = pos + p.len;
        if out.len() < end {
            let spare = out.capacity() - out.len();
            out.grow_zeroed((end - out.len()).max(spare.min(GROW_CHUNK)));
        }
        write_record(&mut out[pos..end], r, &p);
        pos = end;
    }
    out.truncate_to(pos);
    check_len("record_batch.records", pos - start)?;
    Ok(pos - start)
}

impl RecordBatch {
    /// The attributes field as encoded.
    pub fn attributes(&self) -> i16 {
        let mut a = i16::from(self.compression.id());
        if self.timestamp_type == TimestampType::LogAppend {
            a |= ATTR_TIMESTAMP_TYPE;
        }
        if self.is_transactional {
            a |= ATTR_TRANSACTIONAL;
        }
        if self.is_control {
            a |= ATTR_CONTROL;
        }
        if self.has_delete_horizon {
            a |= ATTR_DELETE_HORIZON;
        }
        a
    }

    /// Offset of the last record: `base_offset + last_offset_delta`.
    pub fn last_offset(&self) -> i64 {
        self.base_offset
            .wrapping_add(i64::from(self.last_offset_delta))
    }

    /// The offset after this batch.
    pub fn next_offset(&self) -> i64 {
        self.last_offset().wrapping_add(1)
    }

    /// Sequence of the last record, with wrap; `base_sequence` (−1) when not idempotent.
    pub fn last_sequence(&self) -> i32 {
        if self.base_sequence < 0 {
            return self.base_sequence;
        }
        increment_sequence(self.base_sequence, self.last_offset_delta)
    }

    /// A one-record control batch as the transaction coordinator writes it:
    /// transactional, control, the producer's id and epoch, base sequence −1,
    /// uncompressed.
    pub fn control(
        base_offset: i64,
        producer_id: i64,
        producer_epoch: i16,
        timestamp: i64,
        marker: ControlRecord,
    ) -> Self {
        let mut record = marker.to_record(timestamp);
        record.offset = base_offset;
        Self {
            base_offset,
            is_transactional: true,
            is_control: true,
            last_offset_delta: 0,
            base_timestamp: timestamp,
            max_timestamp: timestamp,
            producer_id,
            producer_epoch,
            records: vec![record],
            ..Self::default()
        }
    }

    /// For a control batch, the control record its first record carries.
    pub fn control_record(&self) -> Option<Result<ControlRecord, crate::DecodeError>> {
        if !self.is_control {
            return None;
        }
        self.records.first().map(ControlRecord::from_record)
    }

    /// Size of the uncompressed records section (without the record count),
    /// validating every record.
    fn records_len(&self) -> Result<usize, EncodeError> {
        let mut total = 0usize;
        for r in &self.records {
            total += plan_record(r, self.base_offset, self.base_timestamp)?.len;
        }
        check_len("record_batch.records", total)?;
        Ok(total)
    }

    /// Exact encoded size when uncompressed; for a compressed batch, the size
    /// before compression (an upper estimate for a producer's `batch.size`).
    pub fn encoded_size(&self) -> Result<usize, EncodeError> {
        Ok(BATCH_HEADER_LEN + self.records_len()?)
    }

    fn put_header<B: BufMut>(&self, out: &mut B, batch_len: i32, count: i32) {
        out.put_i64(self.base_offset);
        out.put_i32(batch_len);
        out.put_i32(self.partition_leader_epoch);
        out.put_i8(MAGIC);
        out.put_u32(0); // CRC placeholder
        out.put_i16(self.attributes());
        out.put_i32(self.last_offset_delta);
        out.put_i64(self.base_timestamp);
        out.put_i64(self.max_timestamp);
        out.put_i64(self.producer_id);
        out.put_i16(self.producer_epoch);
        out.put_i32(self.base_sequence);
        out.put_i32(count);
    }

    /// Appends the encoded batch to `out` (a `BytesMut` or `Vec<u8>`): header
    /// with placeholder length and CRC, records (compressed when a codec is
    /// set), then the length and the CRC-32C over bytes 21.. are patched in.
    ///
    /// On failure (codec not compiled in, offset delta beyond `i32`,
    /// over-long key…) `out` is truncated back to its original length.
    /// Uncompressed, records are written in place in a single pass with no
    /// allocation besides the output's own growth; reserve
    /// [`encoded_size`](Self::encoded_size) up front to avoid even that.
    pub fn encode<B: BatchBuf>(&self, out: &mut B) -> Result<(), EncodeError> {
        self.encode_at_level(out, None)
    }

    /// [`encode`](Self::encode) with the codec at `level` (Java's
    /// `compression.<codec>.level`; `None`: the codec's default). A level
    /// the codec cannot honour ([`Compression::check_level`]) fails.
    pub fn encode_at_level<B: BatchBuf>(
        &self,
        out: &mut B,
        level: Option<i32>,
    ) -> Result<(), EncodeError> {
        let start = out.len();
        let r = self.encode_inner(out, start, level);
        if r.is_err() {
            out.truncate_to(start);
        }
        r
    }

    fn encode_inner<B: BatchBuf>(
        &self,
        out: &mut B,
        start: usize,
        level: Option<i32>,
    ) -> Result<(), EncodeError> {
        let count = i32::try_from(self.records.len())
            .map_err(|_| too_long("record_batch.records", self.records.len()))?;
        if self.compression != Compression::None && !self.compression.is_supported() {
            // Fail before doing any work.
            compression::compress(self.compression, None, &[], &mut Vec::new())?;
        }
        // Length patched below.
        self.put_header(out, 0, count);
        if self.compression == Compression::None {
            append_records(out, &self.records, self.base_offset, self.base_timestamp)?;
        } else {
            with_scratch(|raw, c| {
                append_records(raw, &self.records, self.base_offset, self.base_timestamp)?;
                compression::compress(self.compression, level, raw, c)?;
                out.reserve_bytes(c.len());
                out.put_slice(c);
                Ok::<(), EncodeError>(())
            })?;
        }
        let total = out.len() - start;
        let batch_len =
            i32::try_from(total - LOG_OVERHEAD).map_err(|_| too_long("record_batch", total))?;
        out[start + 8..start + 12].copy_from_slice(&batch_len.to_be_bytes());
        let crc = crc32c::crc32c(&out[start + ATTRIBUTES_OFFSET..]);
        out[start + CRC_OFFSET..start + ATTRIBUTES_OFFSET].copy_from_slice(&crc.to_be_bytes());
        Ok(())
    }

    /// Encodes into a fresh vector, allocated once: at the exact size when
    /// uncompressed, at the uncompressed size otherwise.
    pub fn encode_to_vec(&self) -> Result<Vec<u8>, EncodeError> {
        let mut v = Vec::with_capacity(self.encoded_size()?);
        self.encode(&mut v)?;
        Ok(v)
    }
}

/// Builds a producer batch: offsets are assigned from `base_offset` (0) in push
/// order, `base_timestamp` is the first record's timestamp, `max_timestamp` the
/// largest, `last_offset_delta` is count − 1.
///
/// ```
/// use bytes::{Bytes, BytesMut};
/// use kafka_proto::record::{Compression, Record, RecordBatchBuilder};
/// let mut b = RecordBatchBuilder::new(Compression::None).producer(1, 0, 0).transactional(true);
/// for i in 0..3 {
///     b.push(Record::new(1000 + i, None, Some(Bytes::from(format!("v{i}")))));
/// }
/// assert_eq!(b.len(), 3);
/// let mut out = BytesMut::new();
/// b.encode(&mut out).unwrap();
/// assert_eq!(out.len(), b.encoded_size().unwrap());
/// let batch = b.build();
/// assert_eq!((batch.last_offset_delta, batch.max_timestamp), (2, 1002));
/// ```
#[derive(Debug, Clone, Default)]
pub struct RecordBatchBuilder {
    batch: RecordBatch,
    /// The codec's level (`None`: its default), see [`Compression::check_level`].
    level: Option<i32>,
}

impl RecordBatchBuilder {
    /// An empty, non-idempotent batch using `compression`.
    ///
    /// ```
    /// use kafka_proto::record::{Compression, RecordBatchBuilder};
    /// let b = RecordBatchBuilder::new(Compression::Lz4);
    /// assert!(b.is_empty());
    /// assert_eq!((b.batch().compression, b.batch().producer_id), (Compression::Lz4, -1));
    /// ```
    pub fn new(compression: Compression) -> Self {
        Self {
            batch: RecordBatch {
                compression,
                ..RecordBatch::default()
            },
            level: None,
        }
    }

    /// Compresses at `level` (Java's `compression.<codec>.level`) instead
    /// of the codec's default; [`encode`](Self::encode) fails on a level the
    /// codec cannot honour ([`Compression::check_level`]).
    pub fn level(mut self, level: Option<i32>) -> Self {
        self.level = level;
        self
    }

    /// Sets the producer id, epoch and the sequence of the first record.
    pub fn producer(mut self, producer_id: i64, producer_epoch: i16, base_sequence: i32) -> Self {
        self.batch.producer_id = producer_id;
        self.batch.producer_epoch = producer_epoch;
        self.batch.base_sequence = base_sequence;
        self
    }

    /// Marks the batch transactional.
    pub fn transactional(mut self, transactional: bool) -> Self {
        self.batch.is_transactional = transactional;
        self
    }

    /// Sets the base offset (0 for producers), renumbering pushed records.
    pub fn base_offset(mut self, base_offset: i64) -> Self {
        self.batch.base_offset = base_offset;
        for (i, r) in self.batch.records.iter_mut().enumerate() {
            r.offset = base_offset.wrapping_add(i as i64);
        }
        self
    }

    /// Sets the partition leader epoch (clients send −1).
    pub fn partition_leader_epoch(mut self, epoch: i32) -> Self {
        self.batch.partition_leader_epoch = epoch;
        self
    }

    /// Sets the timestamp type (producers use `Create`).
    pub fn timestamp_type(mut self, t: TimestampType) -> Self {
        self.batch.timestamp_type = t;
        self
    }

    /// Appends a record; its `offset` is overwritten with the next offset.
    pub fn push(&mut self, mut record: Record) -> &mut Self {
        let b = &mut self.batch;
        let n = b.records.len();
        record.offset = b.base_offset.wrapping_add(n as i64);
        if n == 0 {
            b.base_timestamp = record.timestamp;
            b.max_timestamp = record.timestamp;
        } else {
            b.max_timestamp = b.max_timestamp.max(record.timestamp);
        }
        b.last_offset_delta = i32::try_from(n).unwrap_or(i32::MAX);
        b.records.push(record);
        self
    }

    /// Number of records pushed.
    pub fn len(&self) -> usize {
        self.batch.records.len()
    }

    /// True when no record was pushed.
    pub fn is_empty(&self) -> bool {
        self.batch.records.is_empty()
    }

    /// Uncompressed encoded size so far (see [`RecordBatch::encoded_size`]).
    pub fn encoded_size(&self) -> Result<usize, EncodeError> {
        self.batch.encoded_size()
    }

    /// The batch as it would be encoded.
    pub fn batch(&self) -> &RecordBatch {
        &self.batch
    }

    /// Appends the encoded batch to `out`.
    pub fn encode<B: BatchBuf>(&self, out: &mut B) -> Result<(), EncodeError> {
        self.batch.encode_at_level(out, self.level)
    }

    /// The finished batch.
    pub fn build(self) -> RecordBatch {
        self.batch
    }
}

#[cfg(test)]
mod tests;
