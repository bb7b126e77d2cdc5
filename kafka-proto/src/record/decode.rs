//! Decoding: one batch, or the concatenated batches of a Fetch response.

use super::{
    compression, Compression, DecodeOptions, Record, RecordBatch, RecordHeader, TimestampType,
    ATTRIBUTES_OFFSET, ATTR_COMPRESSION_MASK, ATTR_CONTROL, ATTR_DELETE_HORIZON,
    ATTR_TIMESTAMP_TYPE, ATTR_TRANSACTIONAL, BATCH_HEADER_LEN, LOG_OVERHEAD, MAGIC, MIN_RECORD_LEN,
};
use crate::error::{DecodeError, DecodeErrorKind};
use crate::primitives::{parse_uvarint, parse_uvarlong, Reader};
use bytes::Bytes;

fn err(field: &'static str, kind: DecodeErrorKind) -> DecodeError {
    DecodeError::new(field, kind)
}

/// A cursor over the records section, bounded by `end`: every read checks it,
/// so a record can never read past its own length.
struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    end: usize,
}

impl<'a> Cursor<'a> {
    #[inline(always)]
    fn truncated(&self, field: &'static str, needed: usize) -> DecodeError {
        err(
            field,
            DecodeErrorKind::Truncated {
                needed,
                remaining: self.end - self.pos,
            },
        )
    }

    #[inline(always)]
    fn u8(&mut self, field: &'static str) -> Result<u8, DecodeError> {
        if self.pos < self.end {
            let b = self.buf[self.pos];
            self.pos += 1;
            Ok(b)
        } else {
            Err(self.truncated(field, 1))
        }
    }

    /// Fast path for the 1- and 2-byte varints that make up nearly every
    /// record; `None` sends longer ones to the general parser.
    #[inline(always)]
    fn short_uvar(&mut self) -> Option<u32> {
        let b = self.buf.get(self.pos..self.end)?;
        match *b {
            [b0, ..] if b0 < 0x80 => {
                self.pos += 1;
                Some(u32::from(b0))
            }
            [b0, b1, ..] if b1 < 0x80 => {
                self.pos += 2;
                Some(u32::from(b0 & 0x7f) | (u32::from(b1) << 7))
            }
            _ => None,
        }
    }

    #[inline(always)]
    fn varint(&mut self, field: &'static str) -> Result<i32, DecodeError> {
        if let Some(v) = self.short_uvar() {
            return Ok(((v >> 1) as i32) ^ -((v & 1) as i32));
        }
        self.varint_slow(field)
    }

    #[inline(never)]
    fn varint_slow(&mut self, field: &'static str) -> Result<i32, DecodeError> {
        let input = &self.buf[self.pos..self.end];
        match parse_uvarint(input) {
            Ok((rest, v)) => {
                self.pos = self.end - rest.len();
                let v = v.map_err(|k| err(field, k))?;
                Ok(((v >> 1) as i32) ^ -((v & 1) as i32))
            }
            Err(_) => Err(self.truncated(field, 1)),
        }
    }

    #[inline(always)]
    fn varlong(&mut self, field: &'static str) -> Result<i64, DecodeError> {
        if let Some(v) = self.short_uvar() {
            return Ok(i64::from(v >> 1) ^ -i64::from(v & 1));
        }
        self.varlong_slow(field)
    }

    #[inline(never)]
    fn varlong_slow(&mut self, field: &'static str) -> Result<i64, DecodeError> {
        let input = &self.buf[self.pos..self.end];
        match parse_uvarlong(input) {
            Ok((rest, v)) => {
                self.pos = self.end - rest.len();
                let v = v.map_err(|k| err(field, k))?;
                Ok(((v >> 1) as i64) ^ -((v & 1) as i64))
            }
            Err(_) => Err(self.truncated(field, 1)),
        }
    }

    /// A varint length, `-1` meaning null; returns the byte range.
    #[inline(always)]
    fn nullable_range(
        &mut self,
        field: &'static str,
    ) -> Result<Option<(usize, usize)>, DecodeError> {
        let n = self.varint(field)?;
        if n < 0 {
            if n == -1 {
                return Ok(None);
            }
            return Err(err(field, DecodeErrorKind::InvalidLength(i64::from(n))));
        }
        let n = n as usize;
        if n > self.end - self.pos {
            return Err(self.truncated(field, n));
        }
        let start = self.pos;
        self.pos += n;
        Ok(Some((start, self.pos)))
    }
}

/// Parses `count` records from `data` (the whole, uncompressed records section);
/// keys, values and header values are zero-copy slices of `data`.
fn parse_records(
    data: &Bytes,
    count: i32,
    base_offset: i64,
    base_timestamp: i64,
) -> Result<Vec<Record>, DecodeError> {
    if count < 0 {
        return Err(err(
            "record_batch.records_count",
            DecodeErrorKind::InvalidLength(i64::from(count)),
        ));
    }
    let count = count as usize;
    // Never allocate for more records than the bytes can hold.
    if count > data.len() / MIN_RECORD_LEN {
        return Err(err(
            "record_batch.records_count",
            DecodeErrorKind::InvalidLength(count as i64),
        ));
    }
    let buf: &[u8] = data;
    let mut records = Vec::with_capacity(count);
    let mut c = Cursor {
        buf,
        pos: 0,
        end: buf.len(),
    };
    let slice = |r: Option<(usize, usize)>| r.map(|(s, e)| data.slice(s..e));
    for _ in 0..count {
        let len = c.varint("record.length")?;
        if len < 0 || len as usize > c.end - c.pos {
            return Err(err(
                "record.length",
                DecodeErrorKind::InvalidLength(i64::from(len)),
            ));
        }
        let record_end = c.pos + len as usize;
        let outer_end = c.end;
        c.end = record_end;
        let _attributes = c.u8("record.attributes")?;
        let ts_delta = c.varlong("record.timestamp_delta")?;
        let offset_delta = c.varint("record.offset_delta")?;
        let key = slice(c.nullable_range("record.key")?);
        let value = slice(c.nullable_range("record.value")?);
        let header_count = c.varint("record.headers")?;
        if header_count < 0 || header_count as usize > (c.end - c.pos) / 2 {
            return Err(err(
                "record.headers",
                DecodeErrorKind::InvalidLength(i64::from(header_count)),
            ));
        }
        let mut headers = Vec::with_capacity(header_count as usize);
        for _ in 0..header_count {
            let (ks, ke) = c
                .nullable_range("record.headers.key")?
                .ok_or_else(|| err("record.headers.key", DecodeErrorKind::UnexpectedNull))?;
            let key = std::str::from_utf8(&buf[ks..ke])
                .map_err(|_| err("record.headers.key", DecodeErrorKind::InvalidUtf8))?
                .to_owned();
            let value = slice(c.nullable_range("record.headers.value")?);
            headers.push(RecordHeader { key, value });
        }
        if c.pos != record_end {
            return Err(err(
                "record",
                DecodeErrorKind::TrailingBytes(record_end - c.pos),
            ));
        }
        c.end = outer_end;
        records.push(Record {
            timestamp: base_timestamp.wrapping_add(ts_delta),
            offset: base_offset.wrapping_add(i64::from(offset_delta)),
            key,
            value,
            headers,
        });
    }
    if c.pos != c.end {
        return Err(err(
            "record_batch.records",
            DecodeErrorKind::TrailingBytes(c.end - c.pos),
        ));
    }
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

/// Decodes exactly one batch occupying all of `data`.
fn decode_exact(data: &Bytes, opts: &DecodeOptions) -> Result<RecordBatch, DecodeError> {
    let input: &[u8] = data;
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
    let compression = Compression::from_id(codec_id).ok_or_else(|| {
        err(
            "record_batch.attributes",
            DecodeErrorKind::UnsupportedCompression(codec_id),
        )
    })?;
    let records = if compression == Compression::None {
        parse_records(
            &data.slice(BATCH_HEADER_LEN..),
            count,
            base_offset,
            base_timestamp,
        )?
    } else {
        if !compression.is_supported() {
            return Err(err(
                "record_batch.attributes",
                DecodeErrorKind::UnsupportedCompression(codec_id),
            ));
        }
        let raw = compression::decompress(
            compression,
            &input[BATCH_HEADER_LEN..],
            opts.max_decompressed_size,
        )?;
        parse_records(&Bytes::from(raw), count, base_offset, base_timestamp)?
    };
    Ok(RecordBatch {
        base_offset,
        partition_leader_epoch,
        compression,
        timestamp_type: if attributes & ATTR_TIMESTAMP_TYPE != 0 {
            TimestampType::LogAppend
        } else {
            TimestampType::Create
        },
        is_transactional: attributes & ATTR_TRANSACTIONAL != 0,
        is_control: attributes & ATTR_CONTROL != 0,
        has_delete_horizon: attributes & ATTR_DELETE_HORIZON != 0,
        last_offset_delta,
        base_timestamp,
        max_timestamp,
        producer_id,
        producer_epoch,
        base_sequence,
        records,
    })
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
