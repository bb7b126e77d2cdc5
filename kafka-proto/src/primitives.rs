//! Wire primitives: a bounded [`Reader`] whose reads are `nom` parsers over byte
//! slices, and `put_*` encoders over [`bytes::BufMut`].
//!
//! Classic (non-flexible) strings carry an `int16` length, bytes and arrays an
//! `int32` length, `-1` meaning null. Compact (flexible) forms carry
//! `uvarint(len + 1)`, `0` meaning null. Record-level varints are zigzag.
//!
//! Every read names its field, so errors point at the bytes that failed, and no
//! read allocates more than the remaining input can justify.
//!
//! ```
//! use kafka_proto::primitives::{Reader, put_compact_string};
//! let mut buf = Vec::new();
//! put_compact_string(&mut buf, "hi");
//! let mut r = Reader::new(&buf);
//! assert_eq!(r.string("name", true).unwrap(), "hi");
//! r.finish().unwrap();
//! ```

use crate::error::{DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind};
use bytes::{BufMut, Bytes};
use nom::IResult;
use nom::number::complete as num;

/// A 128-bit UUID as Kafka writes it (topic ids), big-endian.
pub type Uuid = [u8; 16];

/// Unknown tagged fields kept verbatim, in ascending tag order, so that they
/// re-encode byte-identically.
pub type TaggedFields = Vec<(u32, Bytes)>;

type NomResult<'a, T> = IResult<&'a [u8], T, ()>;

/// Parses an unsigned LEB128 varint of at most `max_len` bytes whose last
/// byte may be at most `last_max`, so that the value fits the target width;
/// a longer one is `VarintTooLong`, a cut one a parse error.
#[inline]
fn parse_leb128(
    input: &[u8],
    max_len: usize,
    last_max: u8,
) -> NomResult<'_, Result<u64, DecodeErrorKind>> {
    let mut value: u64 = 0;
    for (i, &b) in input.iter().enumerate().take(max_len) {
        if i == max_len - 1 && b > last_max {
            return Ok((&input[i + 1..], Err(DecodeErrorKind::VarintTooLong)));
        }
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Ok((&input[i + 1..], Ok(value)));
        }
    }
    if input.len() >= max_len {
        Ok((&input[max_len..], Err(DecodeErrorKind::VarintTooLong)))
    } else {
        Err(nom::Err::Error(()))
    }
}

/// Parses an unsigned LEB128 varint of at most 5 bytes (u32).
pub fn parse_uvarint(input: &[u8]) -> NomResult<'_, Result<u32, DecodeErrorKind>> {
    // The fifth byte carries bits 28–31 only, so the value fits a u32.
    let (rest, v) = parse_leb128(input, 5, 0x0f)?;
    Ok((rest, v.map(|v| v as u32)))
}

/// Parses an unsigned LEB128 varint of at most 10 bytes (u64).
pub fn parse_uvarlong(input: &[u8]) -> NomResult<'_, Result<u64, DecodeErrorKind>> {
    parse_leb128(input, 10, 0x01)
}

/// A cursor over a bounded byte slice. Reads consume from the front.
///
/// ```
/// use kafka_proto::primitives::Reader;
/// let mut r = Reader::new(&[0, 0, 0, 42, 1]);
/// assert_eq!(r.i32("partition").unwrap(), 42);
/// assert!(r.bool("is_leader").unwrap());
/// assert!(r.is_empty());
/// ```
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    input: &'a [u8],
    /// The buffer `input` lies in, when it is shared: byte fields are then
    /// slices of it (no copy), kept alive by reference counting.
    backing: Option<&'a Bytes>,
}

fn truncated(field: &'static str, needed: usize, remaining: usize) -> DecodeError {
    DecodeError::new(field, DecodeErrorKind::Truncated { needed, remaining })
}

macro_rules! fixed {
    ($($(#[$doc:meta])+ $name:ident -> $ty:ty = $parser:path, $width:expr;)*) => {$(
        $(#[$doc])+
        pub fn $name(&mut self, field: &'static str) -> Result<$ty, DecodeError> {
            let r: NomResult<'a, $ty> = $parser(self.input);
            match r {
                Ok((rest, v)) => {
                    self.input = rest;
                    Ok(v)
                }
                Err(_) => Err(truncated(field, $width, self.input.len())),
            }
        }
    )*};
}

impl<'a> Reader<'a> {
    /// A reader over `input`.
    ///
    /// ```
    /// # use kafka_proto::primitives::Reader;
    /// let r = Reader::new(b"kafka");
    /// assert_eq!(r.remaining(), 5);
    /// ```
    pub fn new(input: &'a [u8]) -> Self {
        Self {
            input,
            backing: None,
        }
    }

    /// A reader over a shared buffer: the bytes fields it reads (a Fetch
    /// response's record batches, for one) are slices of `input`, not
    /// copies.
    ///
    /// ```
    /// # use kafka_proto::primitives::Reader;
    /// use bytes::Bytes;
    /// let frame = Bytes::from_static(&[0, 0, 0, 3, 1, 2, 3]);
    /// let records = Reader::from_bytes(&frame).bytes("records", false)?;
    /// assert_eq!(&records[..], [1, 2, 3]);
    /// assert_eq!(records.as_ptr(), frame[4..].as_ptr(), "the same memory");
    /// # Ok::<(), kafka_proto::DecodeError>(())
    /// ```
    pub fn from_bytes(input: &'a Bytes) -> Self {
        Self {
            input: &input[..],
            backing: Some(input),
        }
    }

    /// Bytes not yet read.
    pub fn remaining(&self) -> usize {
        self.input.len()
    }

    /// The unread bytes.
    pub fn rest(&self) -> &'a [u8] {
        self.input
    }

    /// True when every byte was read.
    pub fn is_empty(&self) -> bool {
        self.input.is_empty()
    }

    /// Fails with [`DecodeErrorKind::TrailingBytes`] unless every byte was read.
    pub fn finish(&self) -> Result<(), DecodeError> {
        if self.input.is_empty() {
            Ok(())
        } else {
            Err(DecodeError::new(
                "<end>",
                DecodeErrorKind::TrailingBytes(self.input.len()),
            ))
        }
    }

    fixed! {
        /// Reads an `int8`.
        i8 -> i8 = num::be_i8, 1;
        /// Reads an `int16`.
        i16 -> i16 = num::be_i16, 2;
        /// Reads an `uint16`.
        u16 -> u16 = num::be_u16, 2;
        /// Reads an `int32`.
        i32 -> i32 = num::be_i32, 4;
        /// Reads an `uint32`.
        u32 -> u32 = num::be_u32, 4;
        /// Reads an `int64`.
        i64 -> i64 = num::be_i64, 8;
        /// Reads a `float64`.
        f64 -> f64 = num::be_f64, 8;
    }

    /// Reads a boolean (any non-zero byte is true, as Kafka reads it).
    pub fn bool(&mut self, field: &'static str) -> Result<bool, DecodeError> {
        Ok(self.i8(field)? != 0)
    }

    /// Reads an unsigned varint with `parse`, consuming what it parsed even
    /// when the varint is too long.
    fn unsigned_varint<T>(
        &mut self,
        field: &'static str,
        parse: impl Fn(&'a [u8]) -> NomResult<'a, Result<T, DecodeErrorKind>>,
    ) -> Result<T, DecodeError> {
        match parse(self.input) {
            Ok((rest, v)) => {
                self.input = rest;
                v.map_err(|k| DecodeError::new(field, k))
            }
            Err(_) => Err(truncated(field, 1, self.input.len())),
        }
    }

    /// Reads an unsigned varint (u32).
    pub fn uvarint(&mut self, field: &'static str) -> Result<u32, DecodeError> {
        self.unsigned_varint(field, parse_uvarint)
    }

    /// Reads a zigzag varint (i32).
    pub fn varint(&mut self, field: &'static str) -> Result<i32, DecodeError> {
        let v = self.uvarint(field)?;
        Ok(((v >> 1) as i32) ^ -((v & 1) as i32))
    }

    /// Reads a zigzag varlong (i64).
    pub fn varlong(&mut self, field: &'static str) -> Result<i64, DecodeError> {
        let v = self.unsigned_varint(field, parse_uvarlong)?;
        Ok(((v >> 1) as i64) ^ -((v & 1) as i64))
    }

    /// Reads a 16-byte UUID.
    pub fn uuid(&mut self, field: &'static str) -> Result<Uuid, DecodeError> {
        let b = self.take(16, field)?;
        let mut out = [0u8; 16];
        out.copy_from_slice(b);
        Ok(out)
    }

    /// Takes exactly `n` bytes.
    pub fn take(&mut self, n: usize, field: &'static str) -> Result<&'a [u8], DecodeError> {
        let r: NomResult<'a, &'a [u8]> = nom::bytes::complete::take(n)(self.input);
        match r {
            Ok((rest, taken)) => {
                self.input = rest;
                Ok(taken)
            }
            Err(_) => Err(truncated(field, n, self.input.len())),
        }
    }

    /// Splits off a bounded sub-reader of `n` bytes.
    pub fn sub_reader(&mut self, n: usize, field: &'static str) -> Result<Reader<'a>, DecodeError> {
        Ok(Reader {
            input: self.take(n, field)?,
            backing: self.backing,
        })
    }

    /// Reads a length prefix: `int16`/`int32` classic or `uvarint(len+1)` compact.
    /// `None` means null. The length is checked against the remaining input
    /// times `min_item_size` so no caller can allocate from a hostile length.
    fn length(
        &mut self,
        field: &'static str,
        flexible: bool,
        classic_i16: bool,
        min_item_size: usize,
    ) -> Result<Option<usize>, DecodeError> {
        let len: i64 = if flexible {
            i64::from(self.uvarint(field)?) - 1
        } else if classic_i16 {
            i64::from(self.i16(field)?)
        } else {
            i64::from(self.i32(field)?)
        };
        if len == -1 {
            return Ok(None);
        }
        if len < 0 {
            return Err(DecodeError::new(field, DecodeErrorKind::InvalidLength(len)));
        }
        let len = len as usize;
        if len.saturating_mul(min_item_size.max(1)) > self.input.len() && min_item_size > 0 {
            return Err(DecodeError::new(
                field,
                DecodeErrorKind::InvalidLength(len as i64),
            ));
        }
        Ok(Some(len))
    }

    /// Reads a length prefix (see [`length`](Self::length)) and takes that
    /// many bytes; `None` for null.
    fn nullable_run(
        &mut self,
        field: &'static str,
        flexible: bool,
        classic_i16: bool,
    ) -> Result<Option<&'a [u8]>, DecodeError> {
        match self.length(field, flexible, classic_i16, 1)? {
            None => Ok(None),
            Some(n) => self.take(n, field).map(Some),
        }
    }

    /// Reads a nullable string (`int16` or compact length).
    pub fn nullable_string(
        &mut self,
        field: &'static str,
        flexible: bool,
    ) -> Result<Option<String>, DecodeError> {
        self.nullable_run(field, flexible, true)?
            .map(|b| {
                std::str::from_utf8(b)
                    .map(str::to_owned)
                    .map_err(|_| DecodeError::new(field, DecodeErrorKind::InvalidUtf8))
            })
            .transpose()
    }

    /// Reads a non-null string.
    pub fn string(&mut self, field: &'static str, flexible: bool) -> Result<String, DecodeError> {
        self.nullable_string(field, flexible)?
            .ok_or_else(|| DecodeError::new(field, DecodeErrorKind::UnexpectedNull))
    }

    /// Reads nullable bytes (`int32` or compact length).
    pub fn nullable_bytes(
        &mut self,
        field: &'static str,
        flexible: bool,
    ) -> Result<Option<Bytes>, DecodeError> {
        let taken = self.nullable_run(field, flexible, false)?;
        Ok(taken.map(|taken| match self.backing {
            Some(b) => b.slice_ref(taken),
            None => Bytes::copy_from_slice(taken),
        }))
    }

    /// Reads non-null bytes.
    pub fn bytes(&mut self, field: &'static str, flexible: bool) -> Result<Bytes, DecodeError> {
        self.nullable_bytes(field, flexible)?
            .ok_or_else(|| DecodeError::new(field, DecodeErrorKind::UnexpectedNull))
    }

    /// Reads a nullable array, each element decoded by `item`.
    pub fn nullable_array<T>(
        &mut self,
        field: &'static str,
        flexible: bool,
        mut item: impl FnMut(&mut Reader<'a>) -> Result<T, DecodeError>,
    ) -> Result<Option<Vec<T>>, DecodeError> {
        match self.length(field, flexible, false, 1)? {
            None => Ok(None),
            Some(n) => {
                // Reserve no more memory than the bytes left could fill:
                // the count is the peer's claim, the bytes are real.
                let fit = self.input.len() / std::mem::size_of::<T>().max(1);
                let mut out = Vec::with_capacity(n.min(fit));
                for _ in 0..n {
                    out.push(item(self)?);
                }
                Ok(Some(out))
            }
        }
    }

    /// Reads a non-null array.
    pub fn array<T>(
        &mut self,
        field: &'static str,
        flexible: bool,
        item: impl FnMut(&mut Reader<'a>) -> Result<T, DecodeError>,
    ) -> Result<Vec<T>, DecodeError> {
        self.nullable_array(field, flexible, item)?
            .ok_or_else(|| DecodeError::new(field, DecodeErrorKind::UnexpectedNull))
    }

    /// Reads the tagged-field section of a flexible struct. `known` is called
    /// with each tag and a bounded reader over its payload; it returns `true`
    /// when it consumed the field (the payload must then be read completely).
    /// Unknown tags are returned verbatim, in order.
    pub fn tagged_fields(
        &mut self,
        field: &'static str,
        mut known: impl FnMut(u32, &mut Reader<'a>) -> Result<bool, DecodeError>,
    ) -> Result<TaggedFields, DecodeError> {
        let count = self.uvarint(field)? as usize;
        if count > self.input.len() {
            return Err(DecodeError::new(
                field,
                DecodeErrorKind::InvalidLength(count as i64),
            ));
        }
        let mut unknown = Vec::new();
        let mut last: Option<u32> = None;
        for _ in 0..count {
            let tag = self.uvarint(field)?;
            if last.is_some_and(|l| tag <= l) {
                return Err(DecodeError::new(field, DecodeErrorKind::TagOrder(tag)));
            }
            last = Some(tag);
            let size = self.uvarint(field)? as usize;
            let mut sub = self.sub_reader(size, field)?;
            if known(tag, &mut sub)? {
                sub.finish().map_err(|e| DecodeError::new(field, e.kind))?;
            } else {
                unknown.push((tag, Bytes::copy_from_slice(sub.rest())));
            }
        }
        Ok(unknown)
    }

    /// Reads a tagged-field section with no known tags.
    pub fn unknown_tagged_fields(
        &mut self,
        field: &'static str,
    ) -> Result<TaggedFields, DecodeError> {
        self.tagged_fields(field, |_, _| Ok(false))
    }
}

// ---------------------------------------------------------------- encoding

// The varint helpers every encoder shares: the message codec above and the
// record layout (`record::append_record`, the producer's hot path, and the
// batch encoder) size and zigzag through these, and write through
// `put_uvarlong`; hence `#[inline(always)]`.

/// Encoded size of an unsigned varint (LEB128) of up to 64 bits.
#[inline(always)]
pub(crate) fn uvar_len(v: u64) -> usize {
    // Branches, not `leading_zeros`: values are small and predictable, and
    // `bsr` is slow on some x86 cores without `lzcnt`.
    if v < 1 << 7 {
        1
    } else if v < 1 << 14 {
        2
    } else if v < 1 << 21 {
        3
    } else if v < 1 << 28 {
        4
    } else {
        uvar_len_slow(v)
    }
}

#[cold]
fn uvar_len_slow(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// The zigzag form of an `i32` (a varint), widened.
#[inline(always)]
pub(crate) fn zz32(v: i32) -> u64 {
    u64::from(((v << 1) ^ (v >> 31)) as u32)
}

/// The zigzag form of an `i64` (a varlong).
#[inline(always)]
pub(crate) fn zz64(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// Writes an unsigned varint.
pub fn put_uvarint(buf: &mut impl BufMut, v: u32) {
    put_uvarlong(buf, u64::from(v));
}

/// Writes an unsigned varlong.
#[inline(always)]
pub fn put_uvarlong(buf: &mut impl BufMut, mut v: u64) {
    while v >= 0x80 {
        buf.put_u8((v as u8) | 0x80);
        v >>= 7;
    }
    buf.put_u8(v as u8);
}

/// Writes a zigzag varint.
pub fn put_varint(buf: &mut impl BufMut, v: i32) {
    put_uvarlong(buf, zz32(v));
}

/// Writes a zigzag varlong.
pub fn put_varlong(buf: &mut impl BufMut, v: i64) {
    put_uvarlong(buf, zz64(v));
}

/// Encoded size of an unsigned varint.
pub fn uvarint_len(v: u32) -> usize {
    uvar_len(u64::from(v))
}

/// Encoded size of a zigzag varint.
pub fn varint_len(v: i32) -> usize {
    uvar_len(zz32(v))
}

/// Encoded size of a zigzag varlong.
pub fn varlong_len(v: i64) -> usize {
    uvar_len(zz64(v))
}

/// Writes a boolean.
pub fn put_bool(buf: &mut impl BufMut, v: bool) {
    buf.put_i8(i8::from(v));
}

/// Writes a UUID.
pub fn put_uuid(buf: &mut impl BufMut, v: &Uuid) {
    buf.put_slice(v);
}

/// Writes a compact (flexible) non-null string.
pub fn put_compact_string(buf: &mut impl BufMut, s: &str) {
    put_uvarint(buf, s.len() as u32 + 1);
    buf.put_slice(s.as_bytes());
}

/// Writes a length prefix: compact `uvarint(len+1)` or classic `int16`/`int32`;
/// `None` writes null.
pub fn put_length(
    buf: &mut impl BufMut,
    field: &'static str,
    len: Option<usize>,
    flexible: bool,
    classic_i16: bool,
) -> Result<(), EncodeError> {
    match (len, flexible) {
        (None, true) => put_uvarint(buf, 0),
        (None, false) if classic_i16 => buf.put_i16(-1),
        (None, false) => buf.put_i32(-1),
        (Some(n), true) => {
            let v = u32::try_from(n)
                .ok()
                .and_then(|n| n.checked_add(1))
                .filter(|v| *v <= i32::MAX as u32)
                .ok_or_else(|| EncodeError::new(field, EncodeErrorKind::TooLong(n)))?;
            put_uvarint(buf, v);
        }
        (Some(n), false) if classic_i16 => {
            let v = i16::try_from(n)
                .map_err(|_| EncodeError::new(field, EncodeErrorKind::TooLong(n)))?;
            buf.put_i16(v);
        }
        (Some(n), false) => {
            let v = i32::try_from(n)
                .map_err(|_| EncodeError::new(field, EncodeErrorKind::TooLong(n)))?;
            buf.put_i32(v);
        }
    }
    Ok(())
}

/// Writes a non-null string in classic or compact form.
pub fn put_string(
    buf: &mut impl BufMut,
    field: &'static str,
    s: &str,
    flexible: bool,
) -> Result<(), EncodeError> {
    put_length(buf, field, Some(s.len()), flexible, true)?;
    buf.put_slice(s.as_bytes());
    Ok(())
}

/// Writes a nullable string in classic or compact form.
pub fn put_nullable_string(
    buf: &mut impl BufMut,
    field: &'static str,
    s: Option<&str>,
    flexible: bool,
) -> Result<(), EncodeError> {
    put_length(buf, field, s.map(str::len), flexible, true)?;
    if let Some(s) = s {
        buf.put_slice(s.as_bytes());
    }
    Ok(())
}

/// Writes non-null bytes in classic or compact form.
pub fn put_bytes(
    buf: &mut impl BufMut,
    field: &'static str,
    b: &[u8],
    flexible: bool,
) -> Result<(), EncodeError> {
    put_length(buf, field, Some(b.len()), flexible, false)?;
    buf.put_slice(b);
    Ok(())
}

/// Writes nullable bytes in classic or compact form.
pub fn put_nullable_bytes(
    buf: &mut impl BufMut,
    field: &'static str,
    b: Option<&[u8]>,
    flexible: bool,
) -> Result<(), EncodeError> {
    put_length(buf, field, b.map(<[u8]>::len), flexible, false)?;
    if let Some(b) = b {
        buf.put_slice(b);
    }
    Ok(())
}

/// Writes an array: its length prefix, then each element with `item`.
pub fn put_array<B: BufMut, T>(
    buf: &mut B,
    field: &'static str,
    items: &[T],
    flexible: bool,
    mut item: impl FnMut(&mut B, &T) -> Result<(), EncodeError>,
) -> Result<(), EncodeError> {
    put_length(buf, field, Some(items.len()), flexible, false)?;
    for i in items {
        item(buf, i)?;
    }
    Ok(())
}

/// Writes a nullable array.
pub fn put_nullable_array<B: BufMut, T>(
    buf: &mut B,
    field: &'static str,
    items: Option<&[T]>,
    flexible: bool,
    item: impl FnMut(&mut B, &T) -> Result<(), EncodeError>,
) -> Result<(), EncodeError> {
    match items {
        None => put_length(buf, field, None, flexible, false),
        Some(items) => put_array(buf, field, items, flexible, item),
    }
}

/// Builds a tagged-field section: known fields are added with [`TaggedWriter::field`]
/// and merged with the unknown ones in ascending tag order by [`TaggedWriter::finish`].
///
/// ```
/// use kafka_proto::primitives::TaggedWriter;
/// let mut out = Vec::new();
/// let mut t = TaggedWriter::new();
/// t.field(1, |b| {
///     b.push(7);
///     Ok(())
/// })
/// .unwrap();
/// t.finish(&mut out, &vec![]).unwrap();
/// assert_eq!(out, [1, 1, 1, 7]);
/// ```
#[derive(Debug, Default)]
pub struct TaggedWriter {
    fields: Vec<(u32, Vec<u8>)>,
}

impl TaggedWriter {
    /// An empty section.
    ///
    /// ```
    /// # use kafka_proto::primitives::TaggedWriter;
    /// let mut out = Vec::new();
    /// TaggedWriter::new().finish(&mut out, &vec![]).unwrap();
    /// assert_eq!(out, [0], "an empty section is a zero count");
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a known tagged field, its payload written by `write`.
    pub fn field(
        &mut self,
        tag: u32,
        write: impl FnOnce(&mut Vec<u8>) -> Result<(), EncodeError>,
    ) -> Result<(), EncodeError> {
        let mut payload = Vec::new();
        write(&mut payload)?;
        self.fields.push((tag, payload));
        Ok(())
    }

    /// Writes the section, merging `unknown` fields by tag.
    pub fn finish(self, buf: &mut impl BufMut, unknown: &TaggedFields) -> Result<(), EncodeError> {
        if self.fields.is_empty() {
            put_unknown_tagged_fields(buf, unknown);
            return Ok(());
        }
        let mut all: Vec<(u32, &[u8])> = self
            .fields
            .iter()
            .map(|(t, p)| (*t, p.as_slice()))
            .chain(unknown.iter().map(|(t, p)| (*t, p.as_ref())))
            .collect();
        all.sort_by_key(|(t, _)| *t);
        if all.windows(2).any(|w| w[0].0 == w[1].0) {
            return Err(EncodeError::new(
                "_tagged_fields",
                EncodeErrorKind::InvalidValue("duplicate tag".into()),
            ));
        }
        put_uvarint(buf, all.len() as u32);
        for (tag, payload) in all {
            put_uvarint(buf, tag);
            put_uvarint(buf, payload.len() as u32);
            buf.put_slice(payload);
        }
        Ok(())
    }
}

/// Writes a tagged-field section holding only `unknown` fields.
pub fn put_unknown_tagged_fields(buf: &mut impl BufMut, unknown: &TaggedFields) {
    put_uvarint(buf, unknown.len() as u32);
    for (tag, payload) in unknown {
        put_uvarint(buf, *tag);
        put_uvarint(buf, payload.len() as u32);
        buf.put_slice(payload);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Writes `v` with `put`, checks that it takes the `len` bytes predicted,
    /// and reads it back with `read`, consuming every byte.
    fn check_varint_round_trip<T: PartialEq + std::fmt::Debug + Copy>(
        v: T,
        put: fn(&mut Vec<u8>, T),
        len: fn(T) -> usize,
        read: fn(&mut Reader<'_>) -> Result<T, DecodeError>,
    ) -> Result<(), TestCaseError> {
        let mut b = Vec::new();
        put(&mut b, v);
        prop_assert_eq!(b.len(), len(v));
        let mut r = Reader::new(&b);
        prop_assert_eq!(read(&mut r).unwrap(), v);
        prop_assert!(r.is_empty());
        Ok(())
    }

    proptest! {
        #[test]
        fn varint_round_trips(v in any::<i32>()) {
            check_varint_round_trip(v, put_varint, varint_len, |r| r.varint("v"))?;
        }

        #[test]
        fn varlong_round_trips(v in any::<i64>()) {
            check_varint_round_trip(v, put_varlong, varlong_len, |r| r.varlong("v"))?;
        }

        #[test]
        fn uvarint_round_trips(v in any::<u32>()) {
            check_varint_round_trip(v, put_uvarint, uvarint_len, |r| r.uvarint("v"))?;
        }

        #[test]
        fn reader_never_panics(data in proptest::collection::vec(any::<u8>(), 0..64)) {
            let mut r = Reader::new(&data);
            let _ = r.nullable_string("s", true);
            let _ = r.array("a", false, |r| r.i32("x"));
            let _ = r.unknown_tagged_fields("t");
            let _ = r.varlong("l");
        }
    }

    #[test]
    fn zigzag_vectors() {
        // Values from the protobuf/Kafka zigzag definition.
        for (v, enc) in [
            (0, vec![0]),
            (-1, vec![1]),
            (1, vec![2]),
            (-64, vec![0x7f]),
            (64, vec![0x80, 1]),
        ] {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            assert_eq!(b, enc, "value {v}");
        }
    }

    #[test]
    fn overlong_varint_is_rejected() {
        let e = Reader::new(&[0xff, 0xff, 0xff, 0xff, 0xff, 0x01])
            .uvarint("x")
            .unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::VarintTooLong);
    }

    #[test]
    fn hostile_array_length_does_not_allocate() {
        // int32 length 2^31-1 with 4 bytes of input: rejected before any allocation.
        let e = Reader::new(&[0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0])
            .array("a", false, |r| r.i32("x"))
            .unwrap_err();
        assert!(matches!(e.kind, DecodeErrorKind::InvalidLength(_)));
    }

    #[test]
    fn compact_null_and_classic_null() {
        assert_eq!(Reader::new(&[0]).nullable_string("s", true).unwrap(), None);
        assert_eq!(
            Reader::new(&[0xff, 0xff])
                .nullable_string("s", false)
                .unwrap(),
            None
        );
        assert_eq!(
            Reader::new(&[0xff, 0xff, 0xff, 0xff])
                .nullable_bytes("b", false)
                .unwrap(),
            None
        );
        let e = Reader::new(&[0xff, 0xfe])
            .nullable_string("s", false)
            .unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::InvalidLength(-2));
    }

    #[test]
    fn unknown_tags_survive_in_order() {
        let unknown: TaggedFields = vec![
            (3, Bytes::from_static(b"x")),
            (9, Bytes::from_static(b"yz")),
        ];
        let mut b = Vec::new();
        let mut w = TaggedWriter::new();
        w.field(5, |p| {
            p.push(1);
            Ok(())
        })
        .unwrap();
        w.finish(&mut b, &unknown).unwrap();
        let mut seen = None;
        let got = Reader::new(&b)
            .tagged_fields("t", |tag, r| {
                if tag == 5 {
                    seen = Some(r.i8("five")?);
                    Ok(true)
                } else {
                    Ok(false)
                }
            })
            .unwrap();
        assert_eq!(seen, Some(1));
        assert_eq!(got, unknown);
    }

    #[test]
    fn tags_out_of_order_are_rejected() {
        let e = Reader::new(&[2, 5, 0, 3, 0])
            .unknown_tagged_fields("t")
            .unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::TagOrder(3));
    }

    /// `parse_uvarint` returns the value and the input after it.
    #[test]
    fn parse_uvarint_returns_the_value_and_the_rest() {
        use crate::primitives::parse_uvarint;
        let (rest, v) = parse_uvarint(&[0xac, 0x02, 0xff]).unwrap();
        assert_eq!((v, rest), (Ok(300), &[0xff][..]));
    }

    /// `parse_uvarlong` reads a value spread over several bytes.
    #[test]
    fn parse_uvarlong_reads_a_multi_byte_value() {
        use crate::primitives::parse_uvarlong;
        let (rest, v) = parse_uvarlong(&[0x80, 0x80, 0x04]).unwrap();
        assert_eq!((v, rest.len()), (Ok(1 << 16), 0));
    }

    /// `remaining` counts the bytes not read yet.
    #[test]
    fn remaining_counts_the_unread_bytes() {
        use crate::primitives::Reader;
        let mut r = Reader::new(&[0, 7, 9]);
        r.i16("error_code").unwrap();
        assert_eq!(r.remaining(), 1);
    }

    /// `rest` is the input not read yet.
    #[test]
    fn rest_is_the_unread_input() {
        use crate::primitives::Reader;
        let mut r = Reader::new(&[1, 2, 3]);
        r.i8("acks").unwrap();
        assert_eq!(r.rest(), &[2, 3]);
    }

    /// A reader is empty once every byte is read.
    #[test]
    fn is_empty_once_everything_is_read() {
        use crate::primitives::Reader;
        let mut r = Reader::new(&[1]);
        assert!(!r.is_empty());
        r.bool("flag").unwrap();
        assert!(r.is_empty());
    }

    /// `finish` refuses bytes left unread.
    #[test]
    fn finish_refuses_trailing_bytes() {
        use crate::primitives::Reader;
        let mut r = Reader::new(&[0, 1, 0xff]);
        r.i16("error_code").unwrap();
        assert!(r.finish().is_err(), "one trailing byte");
    }

    /// `i8` reads a signed byte.
    #[test]
    fn i8_is_signed() {
        use crate::primitives::Reader;
        assert_eq!(Reader::new(&[0xff]).i8("acks").unwrap(), -1);
    }

    /// `i16` reads big-endian.
    #[test]
    fn i16_is_big_endian() {
        use crate::primitives::Reader;
        assert_eq!(Reader::new(&[0, 51]).i16("error_code").unwrap(), 51);
    }

    /// `u16` reads big-endian.
    #[test]
    fn u16_is_big_endian() {
        use crate::primitives::Reader;
        assert_eq!(Reader::new(&[0x23, 0x84]).u16("port").unwrap(), 9092);
    }

    /// `i32` reads big-endian.
    #[test]
    fn i32_is_big_endian() {
        use crate::primitives::Reader;
        assert_eq!(
            Reader::new(&[0, 0, 0x75, 0x30]).i32("timeout_ms").unwrap(),
            30_000
        );
    }

    /// `u32` reads an unsigned value.
    #[test]
    fn u32_is_unsigned() {
        use crate::primitives::Reader;
        assert_eq!(Reader::new(&[0xff; 4]).u32("crc").unwrap(), u32::MAX);
    }

    /// `i64` reads a signed value.
    #[test]
    fn i64_is_signed() {
        use crate::primitives::Reader;
        let mut r = Reader::new(&[0xff; 8]);
        assert_eq!(r.i64("offset").unwrap(), -1);
    }

    /// `f64` reads an IEEE 754 double, big-endian.
    #[test]
    fn f64_reads_ieee_big_endian() {
        use crate::primitives::Reader;
        let bytes = 0.5f64.to_be_bytes();
        assert_eq!(Reader::new(&bytes).f64("ratio").unwrap(), 0.5);
    }

    /// A boolean is one byte, nonzero true.
    #[test]
    fn bool_is_one_byte_nonzero_true() {
        use crate::primitives::Reader;
        let mut r = Reader::new(&[0, 2]);
        assert_eq!((r.bool("a").unwrap(), r.bool("b").unwrap()), (false, true));
    }

    /// `uvarint` reads an unsigned LEB128 value.
    #[test]
    fn uvarint_reads_leb128() {
        use crate::primitives::Reader;
        assert_eq!(Reader::new(&[0xac, 0x02]).uvarint("length").unwrap(), 300);
    }

    /// `varint` reads zigzag: 1 is -1, 2 is 1.
    #[test]
    fn varint_is_zigzag() {
        use crate::primitives::Reader;
        // Zigzag: 1 is -1, 2 is 1.
        let mut r = Reader::new(&[1, 2]);
        assert_eq!((r.varint("a").unwrap(), r.varint("b").unwrap()), (-1, 1));
    }

    /// A varlong written by `put_varlong` reads back, negative included.
    #[test]
    fn varlong_round_trips_a_negative_timestamp_delta() {
        use crate::primitives::{Reader, put_varlong};
        let mut buf = Vec::new();
        put_varlong(&mut buf, -1_700_000_000_000);
        assert_eq!(
            Reader::new(&buf).varlong("timestamp_delta").unwrap(),
            -1_700_000_000_000
        );
    }

    /// A UUID is 16 bytes, as written.
    #[test]
    fn uuid_is_sixteen_bytes() {
        use crate::primitives::Reader;
        let id = [7u8; 16];
        assert_eq!(Reader::new(&id).uuid("topic_id").unwrap(), id);
    }

    /// `take` returns the bytes asked for and refuses more than are left.
    #[test]
    fn take_refuses_more_than_is_left() {
        use crate::primitives::Reader;
        let mut r = Reader::new(b"abcdef");
        assert_eq!(r.take(3, "key").unwrap(), b"abc");
        assert!(r.take(4, "value").is_err(), "only 3 bytes left");
    }

    /// A sub-reader reads only its `n` bytes; the parent goes on after them.
    #[test]
    fn a_sub_reader_is_bounded() -> Result<(), crate::DecodeError> {
        use crate::primitives::Reader;
        let mut r = Reader::new(&[0, 1, 9]);
        let mut sub = r.sub_reader(2, "tagged_field")?;
        assert_eq!(sub.i16("error_code")?, 1);
        assert!(sub.is_empty() && r.remaining() == 1);
        Ok::<(), crate::DecodeError>(())
    }

    /// A classic length of -1 and a compact 0 both mean a null string.
    #[test]
    fn classic_minus_one_and_compact_zero_are_null_strings() {
        use crate::primitives::Reader;
        // Classic -1 length and compact 0 both mean null.
        assert_eq!(
            Reader::new(&[0xff, 0xff])
                .nullable_string("txn_id", false)
                .unwrap(),
            None
        );
        assert_eq!(
            Reader::new(&[0]).nullable_string("txn_id", true).unwrap(),
            None
        );
    }

    /// `string` reads a classic string and refuses a null one.
    #[test]
    fn string_refuses_null() {
        use crate::primitives::Reader;
        let mut r = Reader::new(&[0, 2, b'o', b'k']);
        assert_eq!(r.string("topic", false).unwrap(), "ok");
        assert!(
            Reader::new(&[0]).string("topic", true).is_err(),
            "null is rejected"
        );
    }

    /// Compact nullable bytes carry their length plus one.
    #[test]
    fn compact_nullable_bytes_carry_length_plus_one() {
        use crate::primitives::Reader;
        let mut r = Reader::new(&[3, 0xca, 0xfe]);
        assert_eq!(
            r.nullable_bytes("auth", true).unwrap().as_deref(),
            Some(&[0xca, 0xfe][..])
        );
    }

    /// Classic bytes carry an `i32` length.
    #[test]
    fn classic_bytes_carry_an_i32_length() {
        use crate::primitives::Reader;
        let mut r = Reader::new(&[0, 0, 0, 1, 42]);
        assert_eq!(&r.bytes("records", false).unwrap()[..], [42]);
    }

    /// An array of length -1 is null.
    #[test]
    fn a_minus_one_array_is_null() {
        use crate::primitives::Reader;
        let mut r = Reader::new(&[0xff, 0xff, 0xff, 0xff]);
        assert_eq!(
            r.nullable_array("topics", false, |r| r.i32("p")).unwrap(),
            None
        );
    }

    /// A compact array carries its count plus one.
    #[test]
    fn a_compact_array_carries_count_plus_one() {
        use crate::primitives::Reader;
        // Compact length 3 means two elements.
        let mut r = Reader::new(&[3, 0, 0, 0, 1, 0, 0, 0, 2]);
        assert_eq!(r.array("partitions", true, |r| r.i32("p")).unwrap(), [1, 2]);
    }

    /// Tagged fields the callback knows are read by it; the others are kept.
    #[test]
    fn tagged_fields_split_known_from_unknown() {
        use crate::primitives::Reader;
        // Two fields: tag 0 = [5], tag 3 = [6].
        let mut r = Reader::new(&[2, 0, 1, 5, 3, 1, 6]);
        let mut known = 0;
        let unknown = r
            .tagged_fields("_tagged_fields", |tag, sub| {
                if tag != 0 {
                    return Ok(false);
                }
                known = sub.i8("throttle")?;
                Ok(true)
            })
            .unwrap();
        assert_eq!((known, unknown.len(), unknown[0].0), (5, 1, 3));
    }

    /// Unknown tagged fields are kept with their tags and bytes.
    #[test]
    fn unknown_tagged_fields_are_kept_with_their_tags() {
        use crate::primitives::Reader;
        let mut r = Reader::new(&[1, 20, 2, 0xab, 0xcd]);
        let unknown = r.unknown_tagged_fields("_tagged_fields").unwrap();
        assert_eq!(unknown[0].0, 20);
        assert_eq!(&unknown[0].1[..], [0xab, 0xcd]);
    }

    /// `put_uvarint` writes unsigned LEB128.
    #[test]
    fn put_uvarint_writes_leb128() {
        use crate::primitives::put_uvarint;
        let mut buf = Vec::new();
        put_uvarint(&mut buf, 300);
        assert_eq!(buf, [0xac, 0x02]);
    }

    /// `put_uvarlong` writes seven bits a byte.
    #[test]
    fn put_uvarlong_writes_seven_bits_a_byte() {
        use crate::primitives::put_uvarlong;
        let mut buf = Vec::new();
        put_uvarlong(&mut buf, 1 << 35);
        assert_eq!(buf.len(), 6);
    }

    /// `put_varint` writes zigzag: -1 as 1, 1 as 2.
    #[test]
    fn put_varint_writes_zigzag() {
        use crate::primitives::put_varint;
        let mut buf = Vec::new();
        put_varint(&mut buf, -1);
        put_varint(&mut buf, 1);
        assert_eq!(buf, [1, 2]);
    }

    /// `put_varlong` writes zigzag: -64 in one byte.
    #[test]
    fn put_varlong_writes_zigzag() {
        use crate::primitives::put_varlong;
        let mut buf = Vec::new();
        put_varlong(&mut buf, -64);
        assert_eq!(buf, [127]);
    }

    /// `uvarint_len` counts seven bits a byte, up to 5.
    #[test]
    fn uvarint_len_counts_seven_bits_a_byte() {
        use crate::primitives::uvarint_len;
        assert_eq!(
            (uvarint_len(127), uvarint_len(128), uvarint_len(u32::MAX)),
            (1, 2, 5)
        );
    }

    /// `varint_len` sizes the zigzag form.
    #[test]
    fn varint_len_sizes_the_zigzag_form() {
        use crate::primitives::varint_len;
        assert_eq!((varint_len(-64), varint_len(64)), (1, 2));
    }

    /// `varlong_len` is 1 for 0 and 10 for `i64::MIN`.
    #[test]
    fn varlong_len_is_one_to_ten() {
        use crate::primitives::varlong_len;
        assert_eq!((varlong_len(0), varlong_len(i64::MIN)), (1, 10));
    }

    /// `put_bool` writes one byte.
    #[test]
    fn put_bool_writes_one_byte() {
        use crate::primitives::put_bool;
        let mut buf = Vec::new();
        put_bool(&mut buf, true);
        assert_eq!(buf, [1]);
    }

    /// `put_uuid` writes the 16 bytes.
    #[test]
    fn put_uuid_writes_sixteen_bytes() {
        use crate::primitives::put_uuid;
        let mut buf = Vec::new();
        put_uuid(&mut buf, &[9; 16]);
        assert_eq!(buf, [9; 16]);
    }

    /// `put_compact_string` prefixes the length plus one.
    #[test]
    fn put_compact_string_prefixes_length_plus_one() {
        use crate::primitives::put_compact_string;
        let mut buf = Vec::new();
        put_compact_string(&mut buf, "eos");
        assert_eq!(buf, [4, b'e', b'o', b's']);
    }

    /// `put_length` writes a classic null as -1 and a compact length plus one.
    #[test]
    fn put_length_writes_null_and_compact_lengths() {
        use crate::primitives::put_length;
        let mut buf = Vec::new();
        put_length(&mut buf, "topics", None, false, false).unwrap();
        put_length(&mut buf, "name", Some(2), true, true).unwrap();
        assert_eq!(buf, [0xff, 0xff, 0xff, 0xff, 3]);
    }

    /// `put_string` writes a classic `i16` length.
    #[test]
    fn put_string_writes_a_classic_i16_length() {
        use crate::primitives::put_string;
        let mut buf = Vec::new();
        put_string(&mut buf, "topic", "ok", false).unwrap();
        assert_eq!(buf, [0, 2, b'o', b'k']);
    }

    /// A null string is -1 (classic) or 0 (compact).
    #[test]
    fn put_nullable_string_writes_null_in_both_forms() {
        use crate::primitives::put_nullable_string;
        let mut buf = Vec::new();
        put_nullable_string(&mut buf, "transactional_id", None, false).unwrap();
        put_nullable_string(&mut buf, "transactional_id", None, true).unwrap();
        assert_eq!(buf, [0xff, 0xff, 0]);
    }

    /// Compact bytes are prefixed with their length plus one.
    #[test]
    fn put_bytes_compact_length_is_plus_one() {
        use crate::primitives::put_bytes;
        let mut buf = Vec::new();
        put_bytes(&mut buf, "auth_bytes", b"\0user\0pw", true).unwrap();
        assert_eq!(buf[0], 9);
    }

    /// Classic null bytes are an `i32` -1.
    #[test]
    fn put_nullable_bytes_writes_a_classic_null() {
        use crate::primitives::put_nullable_bytes;
        let mut buf = Vec::new();
        put_nullable_bytes(&mut buf, "records", None, false).unwrap();
        assert_eq!(buf, [0xff; 4]);
    }

    /// `put_array` writes the compact count, then each element.
    #[test]
    fn put_array_writes_a_compact_count() {
        use crate::primitives::put_array;
        use bytes::BufMut;
        let mut buf = Vec::new();
        put_array(&mut buf, "partitions", &[0i32, 1], true, |b, p| {
            b.put_i32(*p);
            Ok(())
        })
        .unwrap();
        assert_eq!(buf, [3, 0, 0, 0, 0, 0, 0, 0, 1]);
    }

    /// A compact null array is 0.
    #[test]
    fn put_nullable_array_writes_a_compact_null() {
        use crate::primitives::put_nullable_array;
        use bytes::BufMut;
        let mut buf = Vec::new();
        put_nullable_array::<_, i32>(&mut buf, "topics", None, true, |b, p| {
            b.put_i32(*p);
            Ok(())
        })
        .unwrap();
        assert_eq!(buf, [0]);
    }

    /// A tagged field is its tag, its size, then its payload.
    #[test]
    fn a_tagged_field_is_tag_size_payload() {
        use crate::primitives::TaggedWriter;
        let mut t = TaggedWriter::new();
        t.field(0, |b| {
            b.extend_from_slice(b"id");
            Ok(())
        })
        .unwrap();
        let mut out = Vec::new();
        t.finish(&mut out, &vec![]).unwrap();
        assert_eq!(out, [1, 0, 2, b'i', b'd']);
    }

    /// Unknown tagged fields are written with the known ones, in tag order.
    #[test]
    fn unknown_tagged_fields_are_merged_in_tag_order() {
        use crate::primitives::TaggedWriter;
        use bytes::Bytes;
        let mut t = TaggedWriter::new();
        t.field(2, |b| {
            b.push(1);
            Ok(())
        })
        .unwrap();
        let mut out = Vec::new();
        t.finish(&mut out, &vec![(0, Bytes::from_static(&[9]))])
            .unwrap();
        assert_eq!(out, [2, 0, 1, 9, 2, 1, 1], "tags in ascending order");
    }

    /// Unknown tagged fields are written as a count, then tag, size and bytes each.
    #[test]
    fn put_unknown_tagged_fields_writes_count_tag_size_bytes() {
        use crate::primitives::put_unknown_tagged_fields;
        use bytes::Bytes;
        let mut buf = Vec::new();
        put_unknown_tagged_fields(&mut buf, &vec![(20, Bytes::from_static(b"x"))]);
        assert_eq!(buf, [1, 20, 1, b'x']);
    }
}
