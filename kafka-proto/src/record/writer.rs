//! The record writer over borrowed parts: how a producer appends one record
//! to the batch it is filling ([`RecordParts`], [`record_size`],
//! [`append_record`]), in the layout the batch encoder writes.

use super::{RecordHeader, nullable_len, uvar_len, zz32, zz64};
use crate::primitives::put_uvarlong;
use bytes::{BufMut, Bytes, BytesMut};

/// A header as the record writer reads it: a key and a nullable value.
/// Implemented for [`RecordHeader`] and for a producer's `(String,
/// Option<Bytes>)`; implement it for your own header type to append
/// records without converting their headers.
///
/// ```
/// use kafka_proto::record::{HeaderRef, RecordParts, record_len};
/// struct Trace(&'static str);
/// impl HeaderRef for Trace {
///     fn key(&self) -> &[u8] {
///         b"trace-id"
///     }
///     fn value(&self) -> Option<&[u8]> {
///         Some(self.0.as_bytes())
///     }
/// }
/// let headers = [Trace("abc")];
/// let record = RecordParts { timestamp_delta: 0, offset_delta: 0, key: None, value: None, headers: &headers[..] };
/// // length, attributes, deltas, null key and value, count, "trace-id", "abc"
/// assert_eq!(record_len(&record), 1 + 1 + 2 + 2 + 1 + 9 + 4);
/// ```
pub trait HeaderRef {
    /// The key's bytes (UTF-8).
    fn key(&self) -> &[u8];
    /// The value; `None` is null.
    fn value(&self) -> Option<&[u8]>;
}

impl HeaderRef for RecordHeader {
    #[inline(always)]
    fn key(&self) -> &[u8] {
        self.key.as_bytes()
    }
    #[inline(always)]
    fn value(&self) -> Option<&[u8]> {
        self.value.as_deref()
    }
}

/// A header as a producer holds it: `(key, value)`.
impl HeaderRef for (String, Option<Bytes>) {
    #[inline(always)]
    fn key(&self) -> &[u8] {
        self.0.as_bytes()
    }
    #[inline(always)]
    fn value(&self) -> Option<&[u8]> {
        self.1.as_deref()
    }
}

/// One record's fields, borrowed, as the record writer lays them out in a
/// batch: [`record_size`] sizes it, [`append_record`] appends it. This is
/// how a producer encodes a record straight into its open batch, without
/// building a [`Record`](super::Record). Lengths must fit an `i32` (the caller checks
/// them against `max.request.size` first).
///
/// ```
/// use bytes::BytesMut;
/// use kafka_proto::record::{RecordHeader, RecordParts, append_record, record_size};
/// let headers = [RecordHeader { key: "trace".into(), value: None }];
/// let record = RecordParts {
///     timestamp_delta: 5,
///     offset_delta: 1,
///     key: Some(&b"k"[..]),
///     value: Some(&b"value"[..]),
///     headers: &headers[..],
/// };
/// let size = record_size(&record);
/// let mut batch = BytesMut::new();
/// append_record(&mut batch, &record, size);
/// assert_eq!(batch.len(), size.total);
/// // Length 19 (zigzag 38), attributes 0, timestamp delta 5 (10), offset delta 1 (2).
/// assert_eq!(&batch[..4], [38, 0, 10, 2]);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct RecordParts<'a, H> {
    /// The record's timestamp minus the batch's base timestamp.
    pub timestamp_delta: i64,
    /// The record's offset minus the batch's base offset.
    pub offset_delta: i32,
    /// Key; `None` is null.
    pub key: Option<&'a [u8]>,
    /// Value; `None` is null (a tombstone).
    pub value: Option<&'a [u8]>,
    /// Headers, in order.
    pub headers: &'a [H],
}

/// A record's encoded size ([`record_size`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordSize {
    /// Bytes after the length prefix (what the prefix holds).
    pub body: usize,
    /// Bytes in all, the length prefix included.
    pub total: usize,
}

/// Sizes a record, once: pass the result to [`append_record`].
#[inline(always)]
pub fn record_size<H: HeaderRef>(r: &RecordParts<'_, H>) -> RecordSize {
    let mut body = 1
        + uvar_len(zz64(r.timestamp_delta))
        + uvar_len(zz32(r.offset_delta))
        + nullable_len(r.key)
        + nullable_len(r.value)
        + uvar_len(2 * r.headers.len() as u64);
    for h in r.headers {
        body += nullable_len(Some(h.key())) + nullable_len(h.value());
    }
    RecordSize {
        body,
        total: uvar_len(2 * body as u64) + body,
    }
}

/// A record's encoded size in a batch, the length prefix included.
#[inline(always)]
pub fn record_len<H: HeaderRef>(r: &RecordParts<'_, H>) -> usize {
    record_size(r).total
}

/// Appends a record, sized by [`record_size`], to a batch being written
/// (after the batch header and the records before it): exactly
/// `size.total` bytes.
#[inline(always)]
pub fn append_record<H: HeaderRef>(out: &mut BytesMut, r: &RecordParts<'_, H>, size: RecordSize) {
    out.reserve(size.total);
    put_uvarlong(out, 2 * size.body as u64);
    out.put_u8(0); // record attributes: unused
    put_uvarlong(out, zz64(r.timestamp_delta));
    put_uvarlong(out, zz32(r.offset_delta));
    put_nullable_buf(out, r.key);
    put_nullable_buf(out, r.value);
    put_uvarlong(out, 2 * r.headers.len() as u64);
    for h in r.headers {
        put_nullable_buf(out, Some(h.key()));
        put_nullable_buf(out, h.value());
    }
}

/// Appends a varint length (zigzag, `2 * len`) and the bytes, or `-1`
/// (zigzag `1`) for null.
#[inline(always)]
fn put_nullable_buf(out: &mut BytesMut, b: Option<&[u8]>) {
    match b {
        None => out.put_u8(1),
        Some(b) => {
            put_uvarlong(out, 2 * b.len() as u64);
            out.put_slice(b);
        }
    }
}
