//! Decoding: one batch, or the concatenated batches of a Fetch response.

use super::{
    ATTR_COMPRESSION_MASK, ATTR_CONTROL, ATTR_DELETE_HORIZON, ATTR_TIMESTAMP_TYPE,
    ATTR_TRANSACTIONAL, ATTRIBUTES_OFFSET, BATCH_HEADER_LEN, Compression, DecodeOptions,
    LOG_OVERHEAD, MAGIC, MIN_RECORD_LEN, Record, RecordBatch, RecordHeader, TimestampType,
    compression,
};
use crate::error::{DecodeError, DecodeErrorKind};
use crate::primitives::{Reader, parse_uvarint, parse_uvarlong};
use bytes::Bytes;
use std::borrow::Cow;

#[cold]
#[inline(never)]
fn err(field: &'static str, kind: DecodeErrorKind) -> DecodeError {
    DecodeError::new(field, kind)
}

/// A record's fields, borrowed from the records section; the headers are
/// validated and handed to a callback while parsing.
struct RawRecord<'a> {
    timestamp_delta: i64,
    offset_delta: i32,
    key: Option<&'a [u8]>,
    value: Option<&'a [u8]>,
    /// The headers section after the count.
    headers: &'a [u8],
    header_count: u32,
}

#[cold]
#[inline(never)]
fn truncated_at(field: &'static str, needed: usize, remaining: usize) -> DecodeError {
    err(field, DecodeErrorKind::Truncated { needed, remaining })
}

#[cold]
#[inline(never)]
fn invalid_len(field: &'static str, n: i64) -> DecodeError {
    err(field, DecodeErrorKind::InvalidLength(n))
}

/// The general (3+ byte, truncated or over-long) unsigned varint at
/// `b[p..]`, of at most 5 bytes (10 when `long`); returns it and the position
/// after it. Takes and returns positions by value so that callers' cursors
/// stay in registers.
#[cold]
#[inline(never)]
fn uvar_slow(
    b: &[u8],
    p: usize,
    field: &'static str,
    long: bool,
) -> Result<(u64, usize), DecodeError> {
    let input = &b[p..];
    let parsed = if long {
        parse_uvarlong(input).map(|(rest, v)| (rest.len(), v))
    } else {
        parse_uvarint(input).map(|(rest, v)| (rest.len(), v.map(u64::from)))
    };
    match parsed {
        Ok((rest, v)) => Ok((v.map_err(|k| err(field, k))?, b.len() - rest)),
        Err(_) => Err(truncated_at(field, 1, input.len())),
    }
}

/// An unsigned varint at `b[*i..]`, with inline paths for the 1- and 2-byte
/// values that make up nearly every record; advances `*i`.
#[inline(always)]
fn uvar(b: &[u8], i: &mut usize, field: &'static str, long: bool) -> Result<u64, DecodeError> {
    let p = *i;
    if let Some(&b0) = b.get(p) {
        if b0 < 0x80 {
            *i = p + 1;
            return Ok(u64::from(b0));
        }
        if let Some(&b1) = b.get(p + 1)
            && b1 < 0x80
        {
            *i = p + 2;
            return Ok(u64::from(b0 & 0x7f) | (u64::from(b1) << 7));
        }
    }
    let (v, next) = uvar_slow(b, p, field, long)?;
    *i = next;
    Ok(v)
}

/// A zigzag varint (at most 5 bytes).
#[inline(always)]
fn varint(b: &[u8], i: &mut usize, field: &'static str) -> Result<i32, DecodeError> {
    let v = uvar(b, i, field, false)? as u32;
    Ok(((v >> 1) as i32) ^ -((v & 1) as i32))
}

/// A zigzag varlong (at most 10 bytes).
#[inline(always)]
fn varlong(b: &[u8], i: &mut usize, field: &'static str) -> Result<i64, DecodeError> {
    let v = uvar(b, i, field, true)?;
    Ok(((v >> 1) as i64) ^ -((v & 1) as i64))
}

/// A varint length then that many bytes of `b`, `-1` meaning null; returns
/// those bytes.
#[inline(always)]
fn nullable_at<'a>(
    b: &'a [u8],
    i: &mut usize,
    field: &'static str,
) -> Result<Option<&'a [u8]>, DecodeError> {
    let n = varint(b, i, field)?;
    if n < 0 {
        if n == -1 {
            return Ok(None);
        }
        return Err(invalid_len(field, i64::from(n)));
    }
    let start = *i;
    // `start <= b.len()` and `n <= i32::MAX`: no overflow.
    match b.get(start..start + n as usize) {
        Some(bytes) => {
            *i = start + n as usize;
            Ok(Some(bytes))
        }
        None => Err(truncated_at(field, n as usize, b.len() - start)),
    }
}

/// Parses the record at `buf[pos..]` (`pos <= buf.len()`), bounded by its
/// length prefix: no field can read past the record. `on_header` gets each
/// header's key (validated UTF-8) and value. Returns the record, borrowing
/// from `buf`, and the position after it.
///
/// All state is local (no `&mut self`), so it stays in registers.
#[inline(always)]
fn parse_record<'a, F: FnMut(&'a str, Option<&'a [u8]>)>(
    buf: &'a [u8],
    pos: usize,
    mut on_header: F,
) -> Result<(RawRecord<'a>, usize), DecodeError> {
    let rest = buf.get(pos..).unwrap_or_default();
    let mut i = 0;
    let len = varint(rest, &mut i, "record.length")?;
    if len < 0 || len as usize > rest.len() - i {
        return Err(invalid_len("record.length", i64::from(len)));
    }
    let base = pos + i;
    let body: &'a [u8] = &rest[i..i + len as usize];
    // Attributes (unused): the first byte.
    if body.is_empty() {
        return Err(truncated_at("record.attributes", 1, 0));
    }
    let mut j = 1;
    let timestamp_delta = varlong(body, &mut j, "record.timestamp_delta")?;
    let offset_delta = varint(body, &mut j, "record.offset_delta")?;
    let key = nullable_at(body, &mut j, "record.key")?;
    let value = nullable_at(body, &mut j, "record.value")?;
    let header_count = varint(body, &mut j, "record.headers")?;
    let headers_start = j;
    if header_count != 0 {
        // Each header takes at least 2 bytes.
        if header_count < 0 || header_count as usize > (body.len() - j) / 2 {
            return Err(invalid_len("record.headers", i64::from(header_count)));
        }
        for _ in 0..header_count {
            let key = nullable_at(body, &mut j, "record.headers.key")?
                .ok_or_else(|| err("record.headers.key", DecodeErrorKind::UnexpectedNull))?;
            let key = std::str::from_utf8(key)
                .map_err(|_| err("record.headers.key", DecodeErrorKind::InvalidUtf8))?;
            let value = nullable_at(body, &mut j, "record.headers.value")?;
            on_header(key, value);
        }
    }
    if j != body.len() {
        return Err(err(
            "record",
            DecodeErrorKind::TrailingBytes(body.len() - j),
        ));
    }
    Ok((
        RawRecord {
            timestamp_delta,
            offset_delta,
            key,
            value,
            headers: &body[headers_start..],
            header_count: header_count as u32,
        },
        base + body.len(),
    ))
}

/// After the last record: the records section must be used up.
fn finish(buf: &[u8], pos: usize) -> Result<(), DecodeError> {
    if pos != buf.len() {
        return Err(err(
            "record_batch.records",
            DecodeErrorKind::TrailingBytes(buf.len().saturating_sub(pos)),
        ));
    }
    Ok(())
}

/// Validates the record count against the records section: never more
/// records than the bytes can hold.
fn check_count(count: i32, data_len: usize) -> Result<usize, DecodeError> {
    if count < 0 {
        return Err(err(
            "record_batch.records_count",
            DecodeErrorKind::InvalidLength(i64::from(count)),
        ));
    }
    let count = count as usize;
    if count > data_len / MIN_RECORD_LEN {
        return Err(err(
            "record_batch.records_count",
            DecodeErrorKind::InvalidLength(count as i64),
        ));
    }
    Ok(count)
}

/// Parses `count` records from `data` (the whole, uncompressed records section);
/// keys, values and header values are zero-copy slices of `data`.
fn parse_records(
    data: &Bytes,
    count: i32,
    base_offset: i64,
    base_timestamp: i64,
) -> Result<Vec<Record>, DecodeError> {
    let count = check_count(count, data.len())?;
    let buf: &[u8] = data;
    // The count is bounded by the bytes (`check_count`), but a `Record`
    // costs far more memory than its 7 smallest bytes: reserve no more memory
    // than the (decompressed) section itself, and grow as records parse.
    let mut records = Vec::with_capacity(count.min(buf.len() / std::mem::size_of::<Record>()));
    let mut pos = 0;
    // Sub-slices of `buf` back to reference-counted views of `data` (by
    // offset: cheaper than `Bytes::slice_ref`, which re-checks the bounds).
    let slice = |b: Option<&[u8]>| {
        b.map(|b| {
            let at = b.as_ptr() as usize - buf.as_ptr() as usize;
            data.slice(at..at + b.len())
        })
    };
    for _ in 0..count {
        let mut headers = Vec::new();
        let (raw, next) = parse_record(buf, pos, |key, value| {
            headers.push(RecordHeader {
                key: key.to_owned(),
                value: slice(value),
            });
        })?;
        pos = next;
        records.push(Record {
            timestamp: base_timestamp.wrapping_add(raw.timestamp_delta),
            offset: base_offset.wrapping_add(i64::from(raw.offset_delta)),
            key: slice(raw.key),
            value: slice(raw.value),
            headers,
        });
    }
    finish(buf, pos)?;
    Ok(records)
}

/// Reads the batch length of the batch at the start of `input`, if the
/// 12-byte log overhead is there.
fn peek_batch_len(input: &[u8]) -> Option<i32> {
    let b = input.get(8..12)?;
    Some(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

fn check_batch_len(len: i32) -> Result<usize, DecodeError> {
    if len < (BATCH_HEADER_LEN - LOG_OVERHEAD) as i32 {
        return Err(err(
            "record_batch.batch_length",
            DecodeErrorKind::InvalidLength(i64::from(len)),
        ));
    }
    Ok(LOG_OVERHEAD + len as usize)
}

/// The batch header, checked: length against the input, magic, CRC, codec.
struct Header {
    base_offset: i64,
    partition_leader_epoch: i32,
    attributes: i16,
    compression: Compression,
    last_offset_delta: i32,
    base_timestamp: i64,
    max_timestamp: i64,
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
    count: i32,
}

impl Header {
    fn timestamp_type(&self) -> TimestampType {
        if self.attributes & ATTR_TIMESTAMP_TYPE != 0 {
            TimestampType::LogAppend
        } else {
            TimestampType::Create
        }
    }
}

/// Parses and checks the header of exactly one batch occupying all of
/// `input`, including the CRC-32C over `input[21..]`: nothing of the records
/// is trusted before this returns.
fn parse_header(input: &[u8]) -> Result<Header, DecodeError> {
    let mut r = Reader::new(input);
    let base_offset = r.i64("record_batch.base_offset")?;
    let len = r.i32("record_batch.batch_length")?;
    let total = check_batch_len(len)?;
    if total > input.len() {
        return Err(err(
            "record_batch",
            DecodeErrorKind::Truncated {
                needed: total - input.len(),
                remaining: input.len(),
            },
        ));
    }
    if total < input.len() {
        return Err(err(
            "record_batch",
            DecodeErrorKind::TrailingBytes(input.len() - total),
        ));
    }
    let partition_leader_epoch = r.i32("record_batch.partition_leader_epoch")?;
    let magic = r.i8("record_batch.magic")?;
    if magic != MAGIC {
        return Err(err(
            "record_batch.magic",
            DecodeErrorKind::InvalidValue(format!("magic {magic}, only 2 is supported")),
        ));
    }
    let stored = r.u32("record_batch.crc")?;
    let computed = crc32c::crc32c(&input[ATTRIBUTES_OFFSET..]);
    if stored != computed {
        return Err(err(
            "record_batch.crc",
            DecodeErrorKind::CrcMismatch { stored, computed },
        ));
    }
    let attributes = r.i16("record_batch.attributes")?;
    let last_offset_delta = r.i32("record_batch.last_offset_delta")?;
    let base_timestamp = r.i64("record_batch.base_timestamp")?;
    let max_timestamp = r.i64("record_batch.max_timestamp")?;
    let producer_id = r.i64("record_batch.producer_id")?;
    let producer_epoch = r.i16("record_batch.producer_epoch")?;
    let base_sequence = r.i32("record_batch.base_sequence")?;
    let count = r.i32("record_batch.records_count")?;
    debug_assert_eq!(r.remaining(), input.len() - BATCH_HEADER_LEN);

    let codec_id = (attributes & ATTR_COMPRESSION_MASK) as u8;
    let compression = Compression::from_id(codec_id)
        .filter(|c| *c == Compression::None || c.is_supported())
        .ok_or_else(|| {
            err(
                "record_batch.attributes",
                DecodeErrorKind::UnsupportedCompression(codec_id),
            )
        })?;
    Ok(Header {
        base_offset,
        partition_leader_epoch,
        attributes,
        compression,
        last_offset_delta,
        base_timestamp,
        max_timestamp,
        producer_id,
        producer_epoch,
        base_sequence,
        count,
    })
}

/// A [`RecordBatch`] or [`RecordBatchView`] literal whose public header
/// fields are read from the parsed [`Header`] `h` (flags decoded from the
/// attributes), completed by the named fields that follow (shorthand).
macro_rules! batch_from_header {
    ($batch:ident, $h:expr, $($rest:ident),+) => {{
        let h: &Header = &$h;
        $batch {
            base_offset: h.base_offset,
            partition_leader_epoch: h.partition_leader_epoch,
            compression: h.compression,
            timestamp_type: h.timestamp_type(),
            is_transactional: h.attributes & ATTR_TRANSACTIONAL != 0,
            is_control: h.attributes & ATTR_CONTROL != 0,
            has_delete_horizon: h.attributes & ATTR_DELETE_HORIZON != 0,
            last_offset_delta: h.last_offset_delta,
            base_timestamp: h.base_timestamp,
            max_timestamp: h.max_timestamp,
            producer_id: h.producer_id,
            producer_epoch: h.producer_epoch,
            base_sequence: h.base_sequence,
            $($rest),+
        }
    }};
}

/// Decodes exactly one batch occupying all of `data`.
fn decode_exact(data: &Bytes, opts: &DecodeOptions) -> Result<RecordBatch, DecodeError> {
    let input: &[u8] = data;
    let h = parse_header(input)?;
    let records = if h.compression == Compression::None {
        parse_records(
            &data.slice(BATCH_HEADER_LEN..),
            h.count,
            h.base_offset,
            h.base_timestamp,
        )?
    } else {
        let raw = compression::decompress(
            h.compression,
            &input[BATCH_HEADER_LEN..],
            opts.max_decompressed_size,
        )?;
        parse_records(&Bytes::from(raw), h.count, h.base_offset, h.base_timestamp)?
    };
    Ok(batch_from_header!(RecordBatch, h, records))
}

/// A borrowed, CRC-checked view of one RecordBatch v2: the header fields are
/// parsed, and the records are parsed lazily by [`records`](Self::records)
/// into [`RecordRef`]s that borrow keys, values and headers from the input,
/// with no allocation and no reference counting per record. Compressed
/// batches are decompressed once into a buffer the view owns.
///
/// For consumers that filter records (read_committed, offsets already
/// consumed) or copy them into their own buffers; [`RecordBatch::decode_bytes`]
/// gives owned, reference-counted records instead.
///
/// The CRC, the batch length and the record count are checked before the
/// view is returned, so no byte of an unverified batch is ever exposed;
/// malformed records (a CRC-valid batch a broken producer wrote) are reported
/// by the iterator, which then ends.
///
/// ```
/// use bytes::{Bytes, BytesMut};
/// use kafka_proto::record::{Compression, Record, RecordBatchBuilder, RecordBatchView};
///
/// let mut b = RecordBatchBuilder::new(Compression::None).base_offset(100);
/// b.push(Record::new(1_000, Some(Bytes::from("k")), Some(Bytes::from("v1"))))
///     .push(Record::new(1_001, None, Some(Bytes::from("v2"))).with_header("h", None));
/// let mut buf = BytesMut::new();
/// b.encode(&mut buf).unwrap();
///
/// let view = RecordBatchView::decode(&buf).unwrap();
/// assert_eq!((view.base_offset, view.len()), (100, 2));
/// let mut value_bytes = 0;
/// for record in view.records() {
///     let record = record.unwrap();
///     value_bytes += record.value.map_or(0, <[u8]>::len);
///     for h in record.headers {
///         assert_eq!((h.key, h.value), ("h", None));
///     }
/// }
/// assert_eq!(value_bytes, 4);
/// let last = view.records().last().unwrap().unwrap();
/// assert_eq!((last.offset, last.key, last.headers.len()), (101, None, 1));
/// ```
#[derive(Debug, Clone)]
pub struct RecordBatchView<'a> {
    /// Offset of the first record.
    pub base_offset: i64,
    /// Partition leader epoch.
    pub partition_leader_epoch: i32,
    /// Codec of the records section.
    pub compression: Compression,
    /// Meaning of the timestamps.
    pub timestamp_type: TimestampType,
    /// Part of a transaction.
    pub is_transactional: bool,
    /// A control batch (transaction marker).
    pub is_control: bool,
    /// `base_timestamp` is a delete horizon.
    pub has_delete_horizon: bool,
    /// Offset delta of the last record.
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
    count: usize,
    data: Cow<'a, [u8]>,
}

impl<'a> RecordBatchView<'a> {
    /// Checks and views one batch that must occupy all of `input`, with
    /// default limits. Same checks, in the same order, as
    /// [`RecordBatch::decode`] up to the records, which are parsed lazily.
    pub fn decode(input: &'a [u8]) -> Result<Self, DecodeError> {
        Self::decode_with(input, &DecodeOptions::default())
    }

    /// [`decode`](Self::decode) with explicit limits.
    pub fn decode_with(input: &'a [u8], opts: &DecodeOptions) -> Result<Self, DecodeError> {
        let h = parse_header(input)?;
        let body = &input[BATCH_HEADER_LEN..];
        let data = if h.compression == Compression::None {
            Cow::Borrowed(body)
        } else {
            Cow::Owned(compression::decompress(
                h.compression,
                body,
                opts.max_decompressed_size,
            )?)
        };
        let count = check_count(h.count, data.len())?;
        Ok(batch_from_header!(RecordBatchView, h, count, data))
    }

    /// The record count of the header.
    pub fn len(&self) -> usize {
        self.count
    }

    /// True when the batch holds no record.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Offset of the last record: `base_offset + last_offset_delta`.
    pub fn last_offset(&self) -> i64 {
        self.base_offset
            .wrapping_add(i64::from(self.last_offset_delta))
    }

    /// The (uncompressed) records section.
    pub fn records_bytes(&self) -> &[u8] {
        &self.data
    }

    /// Iterates over the records, parsing each on demand.
    pub fn records(&self) -> RecordRefs<'_> {
        RecordRefs {
            buf: &self.data,
            pos: 0,
            remaining: self.count,
            done: false,
            base_offset: self.base_offset,
            base_timestamp: self.base_timestamp,
        }
    }
}

/// The records of a [`RecordBatchView`], parsed one at a time.
///
/// Yields `count` records, then checks that the records section is used up.
/// The first malformed record is yielded as an `Err`, after which the
/// iterator ends.
#[derive(Debug, Clone)]
pub struct RecordRefs<'a> {
    buf: &'a [u8],
    pos: usize,
    remaining: usize,
    done: bool,
    base_offset: i64,
    base_timestamp: i64,
}

impl<'a> Iterator for RecordRefs<'a> {
    type Item = Result<RecordRef<'a>, DecodeError>;

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        if self.remaining == 0 {
            if self.done {
                return None;
            }
            self.done = true;
            return finish(self.buf, self.pos).err().map(Err);
        }
        self.remaining -= 1;
        let buf = self.buf;
        match parse_record(buf, self.pos, |_, _| {}) {
            Ok((raw, next)) => {
                self.pos = next;
                Some(Ok(RecordRef {
                    timestamp: self.base_timestamp.wrapping_add(raw.timestamp_delta),
                    offset: self.base_offset.wrapping_add(i64::from(raw.offset_delta)),
                    key: raw.key,
                    value: raw.value,
                    headers: HeadersRef {
                        data: raw.headers,
                        count: raw.header_count,
                    },
                }))
            }
            Err(e) => {
                self.remaining = 0;
                self.done = true;
                Some(Err(e))
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.remaining + usize::from(!self.done)))
    }
}

/// One record borrowed from a [`RecordBatchView`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordRef<'a> {
    /// Absolute timestamp (ms).
    pub timestamp: i64,
    /// Absolute offset.
    pub offset: i64,
    /// Key; `None` is null.
    pub key: Option<&'a [u8]>,
    /// Value; `None` is null (a tombstone).
    pub value: Option<&'a [u8]>,
    /// Headers, already validated.
    pub headers: HeadersRef<'a>,
}

impl RecordRef<'_> {
    /// Copies the record into an owned [`Record`].
    pub fn to_record(&self) -> Record {
        let copy = |b: Option<&[u8]>| b.map(Bytes::copy_from_slice);
        Record {
            timestamp: self.timestamp,
            offset: self.offset,
            key: copy(self.key),
            value: copy(self.value),
            headers: self
                .headers
                .iter()
                .map(|h| RecordHeader {
                    key: h.key.to_owned(),
                    value: copy(h.value),
                })
                .collect(),
        }
    }
}

/// The headers of a [`RecordRef`] (validated when the record was parsed:
/// UTF-8 keys, no null key).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeadersRef<'a> {
    data: &'a [u8],
    count: u32,
}

impl<'a> HeadersRef<'a> {
    /// Number of headers.
    pub fn len(&self) -> usize {
        self.count as usize
    }

    /// True when the record has no header.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Iterates over the headers, in order.
    pub fn iter(&self) -> HeaderRefs<'a> {
        HeaderRefs {
            data: self.data,
            pos: 0,
            remaining: self.count,
        }
    }
}

impl<'a> IntoIterator for HeadersRef<'a> {
    type Item = RecordHeaderRef<'a>;
    type IntoIter = HeaderRefs<'a>;

    fn into_iter(self) -> HeaderRefs<'a> {
        self.iter()
    }
}

/// One header borrowed from a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordHeaderRef<'a> {
    /// Header key.
    pub key: &'a str,
    /// Header value; `None` is null.
    pub value: Option<&'a [u8]>,
}

/// Iterator over [`HeadersRef`].
#[derive(Debug, Clone)]
pub struct HeaderRefs<'a> {
    data: &'a [u8],
    pos: usize,
    remaining: u32,
}

impl<'a> Iterator for HeaderRefs<'a> {
    type Item = RecordHeaderRef<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        // Validated when the record was parsed: these reads cannot fail; stop
        // quietly if they ever did.
        let buf = self.data;
        let key = nullable_at(buf, &mut self.pos, "record.headers.key").ok()??;
        let key = std::str::from_utf8(key).ok()?;
        let value = nullable_at(buf, &mut self.pos, "record.headers.value").ok()?;
        Some(RecordHeaderRef { key, value })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.remaining as usize))
    }
}

impl RecordBatch {
    /// Decodes one batch that must occupy all of `input`, with default limits.
    /// Keys and values share one copy of `input`; use
    /// [`decode_bytes`](Self::decode_bytes) to avoid even that copy.
    ///
    /// Checks, in order: the batch length against the input (no trailing
    /// bytes), magic 2, the CRC-32C, then parses with every record bounded by
    /// its length.
    pub fn decode(input: &[u8]) -> Result<Self, DecodeError> {
        Self::decode_with(input, &DecodeOptions::default())
    }

    /// [`decode`](Self::decode) with explicit limits.
    pub fn decode_with(input: &[u8], opts: &DecodeOptions) -> Result<Self, DecodeError> {
        decode_exact(&Bytes::copy_from_slice(input), opts)
    }

    /// Decodes one batch from `input` without copying: uncompressed keys,
    /// values and header values are slices of `input`.
    pub fn decode_bytes(input: &Bytes) -> Result<Self, DecodeError> {
        decode_exact(input, &DecodeOptions::default())
    }

    /// [`decode_bytes`](Self::decode_bytes) with explicit limits.
    pub fn decode_bytes_with(input: &Bytes, opts: &DecodeOptions) -> Result<Self, DecodeError> {
        decode_exact(input, opts)
    }
}

/// An iterator over the concatenated batches of a `records` field (Fetch
/// responses, log segments).
///
/// A Fetch response may end in the middle of a batch: iteration then stops
/// without an error and [`truncated_bytes`](Self::truncated_bytes) tells how
/// many bytes were left over. Any other failure is yielded once as an `Err`,
/// after which the iterator ends.
///
/// ```
/// use bytes::{Bytes, BytesMut};
/// use kafka_proto::record::{Compression, Record, RecordBatchBuilder, RecordBatches};
/// let mut buf = BytesMut::new();
/// for base in [0, 1] {
///     let mut b = RecordBatchBuilder::new(Compression::None).base_offset(base);
///     b.push(Record::new(0, None, Some(Bytes::from("v"))));
///     b.encode(&mut buf).unwrap();
/// }
/// buf.truncate(buf.len() - 3); // the fetch ended mid-batch
/// let mut it = RecordBatches::new(buf.freeze());
/// assert_eq!(it.next().unwrap().unwrap().base_offset, 0);
/// assert!(it.next().is_none());
/// assert!(it.truncated_bytes() > 0);
/// ```
#[derive(Debug, Clone)]
pub struct RecordBatches {
    data: Bytes,
    pos: usize,
    opts: DecodeOptions,
    done: bool,
    truncated: usize,
}

impl RecordBatches {
    /// Iterates over the batches in `data`, with default limits.
    pub fn new(data: Bytes) -> Self {
        Self::with_options(data, DecodeOptions::default())
    }

    /// Iterates over the batches in `data`, with explicit limits.
    pub fn with_options(data: Bytes, opts: DecodeOptions) -> Self {
        Self {
            data,
            pos: 0,
            opts,
            done: false,
            truncated: 0,
        }
    }

    /// Bytes of an incomplete last batch that were skipped (0 if none, or not
    /// reached yet).
    pub fn truncated_bytes(&self) -> usize {
        self.truncated
    }

    /// True when iteration stopped at an incomplete last batch.
    pub fn is_truncated(&self) -> bool {
        self.truncated > 0
    }

    /// Byte position of the next batch in the input.
    pub fn position(&self) -> usize {
        self.pos
    }
}

impl Iterator for RecordBatches {
    type Item = Result<RecordBatch, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let rest = &self.data[self.pos..];
        if rest.is_empty() {
            self.done = true;
            return None;
        }
        let Some(len) = peek_batch_len(rest) else {
            self.done = true;
            self.truncated = rest.len();
            return None;
        };
        let total = match check_batch_len(len) {
            Ok(t) => t,
            Err(e) => {
                self.done = true;
                return Some(Err(e));
            }
        };
        if total > rest.len() {
            self.done = true;
            self.truncated = rest.len();
            return None;
        }
        let batch = self.data.slice(self.pos..self.pos + total);
        self.pos += total;
        let r = decode_exact(&batch, &self.opts);
        if r.is_err() {
            self.done = true;
        }
        Some(r)
    }
}

#[cfg(test)]
mod decode_tests {
    use super::*;
    use crate::record::{Compression, Record, RecordBatchBuilder};

    fn one_record_batch(value: &'static str) -> RecordBatch {
        RecordBatch {
            last_offset_delta: 0,
            records: vec![Record::new(0, None, Some(Bytes::from(value)))],
            ..RecordBatch::default()
        }
    }

    #[test]
    fn a_flipped_bit_fails_the_crc() {
        let mut b = RecordBatchBuilder::new(Compression::None);
        b.push(Record::new(
            7,
            Some(Bytes::from("k")),
            Some(Bytes::from("v")),
        ));
        let mut bytes = b.batch().encode_to_vec().unwrap();
        let batch = RecordBatch::decode(&bytes).unwrap();
        assert_eq!(batch.records[0].value.as_deref(), Some(&b"v"[..]));
        *bytes.last_mut().unwrap() ^= 1;
        assert!(RecordBatch::decode(&bytes).is_err());
    }

    #[test]
    fn decompression_limit_does_not_apply_to_an_uncompressed_batch() {
        let batch = one_record_batch("");
        let bytes = batch.encode_to_vec().unwrap();
        let opts = DecodeOptions {
            max_decompressed_size: 1024,
        };
        assert_eq!(RecordBatch::decode_with(&bytes, &opts).unwrap(), batch);
    }

    #[test]
    fn decode_bytes_values_are_views_into_the_input() {
        let input = Bytes::from(one_record_batch("payload").encode_to_vec().unwrap());
        let back = RecordBatch::decode_bytes(&input).unwrap();
        let value = back.records[0].value.as_ref().unwrap();
        let at = value.as_ptr() as usize - input.as_ptr() as usize;
        assert!(at < input.len());
        assert_eq!(&input[at..at + value.len()], b"payload");
    }

    #[test]
    fn a_batch_cut_short_is_an_error() {
        let input = Bytes::from(RecordBatch::default().encode_to_vec().unwrap());
        let opts = DecodeOptions::default();
        assert!(
            RecordBatch::decode_bytes_with(&input, &opts)
                .unwrap()
                .records
                .is_empty()
        );
        assert!(RecordBatch::decode_bytes_with(&input.slice(..input.len() - 1), &opts).is_err());
    }
}
