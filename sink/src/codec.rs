//! Binary codecs for the user types stored in sink state.
//!
//! A [`Codec`] turns one value (a transaction handle or a user context) into
//! bytes and back. The [`StateSerializer`](crate::state::StateSerializer)
//! length-prefixes every value it hands to a codec, so a codec always decodes
//! from an exact slice and leftover bytes are a typed
//! [`StateDecodeError::TrailingBytes`]. [`StateReader`] and the `put_*` helpers give
//! codecs the same big-endian primitives the framework uses.
//!
//! ```
//! use kafka_sink::codec::{Codec, StateDecodeError, StateReader, put_str, put_u64};
//!
//! #[derive(Debug, PartialEq)]
//! struct Txn { id: String, producer_id: u64 }
//!
//! struct TxnCodec;
//! impl Codec<Txn> for TxnCodec {
//!     fn encode(&self, t: &Txn, out: &mut Vec<u8>) {
//!         put_str(out, &t.id);
//!         put_u64(out, t.producer_id);
//!     }
//!     fn decode(&self, bytes: &[u8]) -> Result<Txn, StateDecodeError> {
//!         let mut r = StateReader::new(bytes);
//!         let t = Txn { id: r.str()?.to_owned(), producer_id: r.u64()? };
//!         r.finish()?;
//!         Ok(t)
//!     }
//! }
//!
//! let mut buf = Vec::new();
//! TxnCodec.encode(&Txn { id: "sink-3".into(), producer_id: 7 }, &mut buf);
//! assert_eq!(TxnCodec.decode(&buf).unwrap(), Txn { id: "sink-3".into(), producer_id: 7 });
//! ```

use std::collections::BTreeSet;

/// Why bytes could not be decoded. Every malformed input maps to one of
/// these; decoding never panics.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StateDecodeError {
    /// The bytes do not start with the expected magic.
    #[error("bad magic: expected {expected:02x?}, found {found:02x?}")]
    BadMagic {
        /// The magic this format starts with.
        expected: Vec<u8>,
        /// The bytes found instead (possibly shorter).
        found: Vec<u8>,
    },
    /// A format version this build cannot read.
    #[error("unsupported format version {version} (this build reads up to {supported})")]
    UnsupportedVersion {
        /// The version byte found.
        version: u8,
        /// The newest version this build reads.
        supported: u8,
    },
    /// The input ended early.
    #[error("truncated input: needed {needed} more bytes, {remaining} left")]
    Truncated {
        /// Bytes needed by the next field.
        needed: usize,
        /// Bytes left.
        remaining: usize,
    },
    /// Bytes were left after a complete value.
    #[error("{count} trailing bytes after a complete value")]
    TrailingBytes {
        /// How many bytes were left.
        count: usize,
    },
    /// A string was not UTF-8.
    #[error("string is not valid UTF-8")]
    InvalidUtf8,
    /// A boolean/presence byte other than 0 or 1.
    #[error("invalid flag byte {0} (expected 0 or 1)")]
    InvalidFlag(u8),
    /// The same checkpoint id appears twice among pending transactions.
    #[error("checkpoint id {0} appears twice among pending transactions")]
    DuplicateCheckpointId(u64),
    /// A value-specific rule was broken (for codecs written by users).
    #[error("invalid value: {0}")]
    Invalid(String),
}

/// Encodes and decodes values of type `T`.
///
/// `decode` receives exactly the bytes `encode` wrote for one value and must
/// reject anything else with a [`StateDecodeError`] (use [`StateReader::finish`]).
///
/// ```
/// use kafka_sink::codec::{Codec, U64Codec};
/// fn round_trip<T, C: Codec<T>>(codec: &C, value: &T) -> T {
///     let mut buf = Vec::new();
///     codec.encode(value, &mut buf);
///     codec.decode(&buf).unwrap()
/// }
/// assert_eq!(round_trip(&U64Codec, &42), 42);
/// ```
pub trait Codec<T>: Send + Sync {
    /// Appends the encoding of `value` to `out`.
    fn encode(&self, value: &T, out: &mut Vec<u8>);
    /// Decodes one value from exactly `bytes`.
    fn decode(&self, bytes: &[u8]) -> Result<T, StateDecodeError>;
}

/// Appends one byte.
pub fn put_u8(out: &mut Vec<u8>, v: u8) {
    out.push(v);
}

/// Appends a big-endian `u16`.
pub fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_be_bytes());
}

/// Appends a big-endian `u32`.
pub fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_be_bytes());
}

/// Appends a big-endian `u64`.
pub fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_be_bytes());
}

/// Appends a big-endian `i64`.
pub fn put_i64(out: &mut Vec<u8>, v: i64) {
    out.extend_from_slice(&v.to_be_bytes());
}

/// Appends a `u32` length and the bytes.
///
/// # Panics
/// If `bytes` is longer than `u32::MAX` (4 GiB) — no sink state is.
pub fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    let len = u32::try_from(bytes.len()).expect("state value larger than 4 GiB");
    put_u32(out, len);
    out.extend_from_slice(bytes);
}

/// Appends a `u32` length and the UTF-8 bytes of `s`.
pub fn put_str(out: &mut Vec<u8>, s: &str) {
    put_bytes(out, s.as_bytes());
}

/// A cursor over an input slice reading the primitives written by the
/// `put_*` functions.
///
/// ```
/// use kafka_sink::codec::{StateReader, put_str, put_u64};
/// let mut buf = Vec::new();
/// put_u64(&mut buf, 7);
/// put_str(&mut buf, "orders-0");
/// let mut r = StateReader::new(&buf);
/// assert_eq!((r.u64().unwrap(), r.str().unwrap()), (7, "orders-0"));
/// r.finish().unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct StateReader<'a> {
    input: &'a [u8],
}

/// The former name of [`StateReader`].
#[deprecated(note = "renamed StateReader (kafka_proto has a Reader of its own)")]
pub type Reader<'a> = StateReader<'a>;

/// The former name of [`StateDecodeError`].
#[deprecated(note = "renamed StateDecodeError (kafka_proto has a DecodeError of its own)")]
pub type DecodeError = StateDecodeError;

impl<'a> StateReader<'a> {
    /// A reader at the start of `input`.
    ///
    /// ```
    /// let r = kafka_sink::codec::StateReader::new(&[1, 2, 3]);
    /// assert_eq!(r.remaining(), 3);
    /// ```
    pub fn new(input: &'a [u8]) -> Self {
        StateReader { input }
    }

    /// The bytes not yet read, for a decoder that reads on from them.
    pub(crate) fn rest(&self) -> &'a [u8] {
        self.input
    }

    /// Bytes not yet read.
    pub fn remaining(&self) -> usize {
        self.input.len()
    }

    /// Takes the next `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], StateDecodeError> {
        if self.input.len() < n {
            return Err(StateDecodeError::Truncated {
                needed: n,
                remaining: self.input.len(),
            });
        }
        let (head, tail) = self.input.split_at(n);
        self.input = tail;
        Ok(head)
    }

    /// Takes the format's `magic`: input that starts otherwise, or is
    /// shorter, is [`StateDecodeError::BadMagic`] (with the bytes found).
    pub(crate) fn magic(&mut self, magic: &[u8]) -> Result<(), StateDecodeError> {
        let found = self
            .take(magic.len())
            .map_err(|_| StateDecodeError::BadMagic {
                expected: magic.to_vec(),
                found: self.input.to_vec(),
            })?;
        if found != magic {
            return Err(StateDecodeError::BadMagic {
                expected: magic.to_vec(),
                found: found.to_vec(),
            });
        }
        Ok(())
    }

    /// Takes the format version byte: any other than `supported` is
    /// [`StateDecodeError::UnsupportedVersion`].
    pub(crate) fn version(&mut self, supported: u8) -> Result<(), StateDecodeError> {
        let version = self.u8()?;
        if version != supported {
            return Err(StateDecodeError::UnsupportedVersion { version, supported });
        }
        Ok(())
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], StateDecodeError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    /// Reads one byte.
    pub fn u8(&mut self) -> Result<u8, StateDecodeError> {
        Ok(self.array::<1>()?[0])
    }

    /// Reads a big-endian `u16`.
    pub fn u16(&mut self) -> Result<u16, StateDecodeError> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    /// Reads a big-endian `u32`.
    pub fn u32(&mut self) -> Result<u32, StateDecodeError> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    /// Reads a big-endian `u64`.
    pub fn u64(&mut self) -> Result<u64, StateDecodeError> {
        Ok(u64::from_be_bytes(self.array()?))
    }

    /// Reads a big-endian `i64`.
    pub fn i64(&mut self) -> Result<i64, StateDecodeError> {
        Ok(i64::from_be_bytes(self.array()?))
    }

    /// Reads a flag byte (0 = false, 1 = true, anything else is an error).
    pub fn flag(&mut self) -> Result<bool, StateDecodeError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(StateDecodeError::InvalidFlag(other)),
        }
    }

    /// Reads a `u32`-length-prefixed byte string.
    pub fn bytes(&mut self) -> Result<&'a [u8], StateDecodeError> {
        let len = self.u32()? as usize;
        self.take(len)
    }

    /// Reads a `u32`-length-prefixed UTF-8 string.
    pub fn str(&mut self) -> Result<&'a str, StateDecodeError> {
        std::str::from_utf8(self.bytes()?).map_err(|_| StateDecodeError::InvalidUtf8)
    }

    /// Succeeds only if every byte was read.
    pub fn finish(self) -> Result<(), StateDecodeError> {
        if self.input.is_empty() {
            Ok(())
        } else {
            Err(StateDecodeError::TrailingBytes {
                count: self.input.len(),
            })
        }
    }
}

/// A [`String`] as its raw UTF-8 bytes.
#[derive(Debug, Clone, Copy, Default)]
pub struct StringCodec;

impl Codec<String> for StringCodec {
    fn encode(&self, value: &String, out: &mut Vec<u8>) {
        out.extend_from_slice(value.as_bytes());
    }
    fn decode(&self, bytes: &[u8]) -> Result<String, StateDecodeError> {
        String::from_utf8(bytes.to_vec()).map_err(|_| StateDecodeError::InvalidUtf8)
    }
}

/// A `Vec<u8>` as itself.
#[derive(Debug, Clone, Copy, Default)]
pub struct BytesCodec;

impl Codec<Vec<u8>> for BytesCodec {
    fn encode(&self, value: &Vec<u8>, out: &mut Vec<u8>) {
        out.extend_from_slice(value);
    }
    fn decode(&self, bytes: &[u8]) -> Result<Vec<u8>, StateDecodeError> {
        Ok(bytes.to_vec())
    }
}

/// A `u64` as 8 big-endian bytes.
#[derive(Debug, Clone, Copy, Default)]
pub struct U64Codec;

impl Codec<u64> for U64Codec {
    fn encode(&self, value: &u64, out: &mut Vec<u8>) {
        put_u64(out, *value);
    }
    fn decode(&self, bytes: &[u8]) -> Result<u64, StateDecodeError> {
        let mut r = StateReader::new(bytes);
        let v = r.u64()?;
        r.finish()?;
        Ok(v)
    }
}

/// `()` as zero bytes (for sinks without a user context).
#[derive(Debug, Clone, Copy, Default)]
pub struct UnitCodec;

impl Codec<()> for UnitCodec {
    fn encode(&self, _value: &(), _out: &mut Vec<u8>) {}
    fn decode(&self, bytes: &[u8]) -> Result<(), StateDecodeError> {
        StateReader::new(bytes).finish()
    }
}

/// A sorted set of strings: `u32` count, then each string length-prefixed
/// (the layout of Flink's `KafkaTransactionContext`).
#[derive(Debug, Clone, Copy, Default)]
pub struct StringSetCodec;

impl Codec<BTreeSet<String>> for StringSetCodec {
    fn encode(&self, value: &BTreeSet<String>, out: &mut Vec<u8>) {
        let n = u32::try_from(value.len()).expect("more than u32::MAX strings");
        put_u32(out, n);
        for s in value {
            put_str(out, s);
        }
    }
    fn decode(&self, bytes: &[u8]) -> Result<BTreeSet<String>, StateDecodeError> {
        let mut r = StateReader::new(bytes);
        let n = r.u32()?;
        let mut set = BTreeSet::new();
        for _ in 0..n {
            let s = r.str()?;
            if !set.insert(s.to_owned()) {
                return Err(StateDecodeError::Invalid(format!(
                    "duplicate string {s:?} in set"
                )));
            }
        }
        r.finish()?;
        Ok(set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_reports_truncation_and_trailing() {
        let mut r = StateReader::new(&[0, 0, 0, 5, b'a']);
        assert_eq!(
            r.bytes(),
            Err(StateDecodeError::Truncated {
                needed: 5,
                remaining: 1
            })
        );
        assert_eq!(
            U64Codec.decode(&[0; 9]),
            Err(StateDecodeError::TrailingBytes { count: 1 })
        );
        assert_eq!(
            StateReader::new(&[2]).flag(),
            Err(StateDecodeError::InvalidFlag(2))
        );
    }

    #[test]
    fn string_set_round_trip_and_rejects_duplicates() {
        let set: BTreeSet<String> = ["a-0", "a-1"].iter().map(|s| s.to_string()).collect();
        let mut buf = Vec::new();
        StringSetCodec.encode(&set, &mut buf);
        assert_eq!(StringSetCodec.decode(&buf).unwrap(), set);

        let mut dup = Vec::new();
        put_u32(&mut dup, 2);
        put_str(&mut dup, "x");
        put_str(&mut dup, "x");
        assert!(matches!(
            StringSetCodec.decode(&dup),
            Err(StateDecodeError::Invalid(_))
        ));
    }

    #[test]
    fn string_codec_rejects_bad_utf8() {
        assert_eq!(
            StringCodec.decode(&[0xff]),
            Err(StateDecodeError::InvalidUtf8)
        );
        assert_eq!(
            UnitCodec.decode(&[1]),
            Err(StateDecodeError::TrailingBytes { count: 1 })
        );
    }

    #[test]
    fn put_helpers_write_big_endian_primitives() {
        let mut out = Vec::new();
        put_u8(&mut out, 1);
        put_u16(&mut out, 0x0102);
        put_u32(&mut out, 5);
        put_u64(&mut out, 1 << 8);
        put_i64(&mut out, -1);
        assert_eq!(
            out,
            [
                [1].as_slice(),
                &[1, 2],
                &[0, 0, 0, 5],
                &[0, 0, 0, 0, 0, 0, 1, 0],
                &[0xFF; 8]
            ]
            .concat()
        );
    }

    #[test]
    fn put_bytes_and_put_str_prefix_a_u32_length() {
        let mut out = Vec::new();
        put_bytes(&mut out, b"ab");
        assert_eq!(out, [0, 0, 0, 2, b'a', b'b']);
        let mut out = Vec::new();
        put_str(&mut out, "sink-0");
        assert_eq!(out, b"\0\0\0\x06sink-0");
    }

    #[test]
    fn reader_reads_what_the_put_helpers_wrote() {
        let mut buf = Vec::new();
        put_u8(&mut buf, 9);
        put_u16(&mut buf, 0x0102);
        put_u32(&mut buf, 256);
        put_u64(&mut buf, 42);
        put_i64(&mut buf, -1);
        put_bytes(&mut buf, &[0xCA, 0xFE]);
        put_str(&mut buf, "ok");
        let mut r = StateReader::new(&buf);
        assert_eq!(r.u8(), Ok(9));
        assert_eq!(r.u16(), Ok(0x0102));
        assert_eq!(r.u32(), Ok(256));
        assert_eq!(r.u64(), Ok(42));
        assert_eq!(r.i64(), Ok(-1));
        assert_eq!(r.bytes(), Ok(&[0xCA, 0xFE][..]));
        assert_eq!(r.remaining(), 6);
        assert_eq!(r.str(), Ok("ok"));
        r.finish().unwrap();
    }

    #[test]
    fn reader_take_past_the_end_is_truncated_and_keeps_the_input() {
        let mut r = StateReader::new(b"KSNK\x01");
        assert_eq!(r.take(4), Ok(&b"KSNK"[..]));
        assert_eq!(
            r.take(2),
            Err(StateDecodeError::Truncated {
                needed: 2,
                remaining: 1
            })
        );
        assert_eq!(r.remaining(), 1);
    }

    #[test]
    fn reader_flag_reads_one_as_true_and_zero_as_false() {
        let mut r = StateReader::new(&[1, 0]);
        assert_eq!((r.flag(), r.flag()), (Ok(true), Ok(false)));
    }

    #[test]
    fn reader_str_rejects_invalid_utf8() {
        assert_eq!(
            StateReader::new(&[0, 0, 0, 1, 0xFF]).str(),
            Err(StateDecodeError::InvalidUtf8)
        );
    }

    #[test]
    fn reader_finish_counts_the_trailing_bytes() {
        let mut r = StateReader::new(&[1, 2]);
        r.u8().unwrap();
        assert_eq!(
            r.finish(),
            Err(StateDecodeError::TrailingBytes { count: 1 })
        );
    }

    #[test]
    fn codec_encode_appends_to_the_buffer() {
        let mut out = vec![0xAA];
        U64Codec.encode(&258, &mut out);
        assert_eq!(out, [0xAA, 0, 0, 0, 0, 0, 0, 1, 2]);
    }

    #[test]
    fn u64_codec_is_eight_big_endian_bytes_and_rejects_a_short_input() {
        let mut buf = Vec::new();
        U64Codec.encode(&7, &mut buf);
        assert_eq!(buf, [0, 0, 0, 0, 0, 0, 0, 7]);
        assert_eq!(U64Codec.decode(&buf), Ok(7));
        assert_eq!(
            U64Codec.decode(&[0, 1, 2]),
            Err(StateDecodeError::Truncated {
                needed: 8,
                remaining: 3
            })
        );
    }

    #[test]
    fn string_and_bytes_codecs_store_the_raw_bytes() {
        let mut buf = Vec::new();
        StringCodec.encode(&"orders-sink-3".to_string(), &mut buf);
        assert_eq!(buf, b"orders-sink-3");
        assert_eq!(StringCodec.decode(&buf).unwrap(), "orders-sink-3");
        let mut buf = Vec::new();
        BytesCodec.encode(&vec![1, 2, 3], &mut buf);
        assert_eq!(buf, [1, 2, 3]);
        assert_eq!(BytesCodec.decode(&buf).unwrap(), [1, 2, 3]);
    }

    #[test]
    fn unit_codec_is_zero_bytes() {
        let mut buf = Vec::new();
        UnitCodec.encode(&(), &mut buf);
        assert!(buf.is_empty());
        assert_eq!(UnitCodec.decode(&[]), Ok(()));
    }

    #[test]
    fn string_set_codec_starts_with_the_count() {
        let ids = BTreeSet::from(["job-0".to_string(), "job-1".to_string()]);
        let mut buf = Vec::new();
        StringSetCodec.encode(&ids, &mut buf);
        assert_eq!(&buf[..4], [0, 0, 0, 2]);
    }
}
