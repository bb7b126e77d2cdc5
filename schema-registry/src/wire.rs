//! Confluent's wire format, sans-IO: how a serialized key or value names its
//! schema.
//!
//! 1. **Prefix form** (magic byte `0`), written by every Confluent
//!    serializer by default: `00`, the schema id as a 4-byte big-endian
//!    integer, for Protobuf the message indexes, then the payload.
//! 2. **Header form** (magic byte `1`), written by Confluent's
//!    `HeaderSchemaIdSerializer`: the record header `__value_schema_id` (or
//!    `__key_schema_id`) holds `01`, the schema's 16-byte GUID and, for
//!    Protobuf, the message indexes; the payload is left bare. A header may
//!    also hold the prefix form (`00` and an id). Readers look at the header
//!    first, then at the prefix, as Confluent's `DualSchemaIdDeserializer`
//!    does.
//! 3. **Message indexes** (Protobuf only) locate the message type inside its
//!    `.proto` file: the index among the message types at each nesting level.
//!    `[0]`, the first top-level message, is written as the single byte `00`;
//!    any other path as its length and then each index, all as zigzag
//!    varints (Kafka's `ByteUtils.writeVarint`). A length of 0 reads as `[0]`.
//!
//! Every malformed frame is a [`WireError`]; nothing here panics, and memory
//! follows the bytes given, never a count a frame claims.
//!
//! ```
//! use kafka_schema_registry::wire::{self, SchemaId};
//!
//! let mut framed = Vec::new();
//! wire::write_prefix(42, &mut framed);
//! wire::write_message_indexes(&[1, 0], &mut framed);
//! framed.extend_from_slice(b"payload");
//! assert_eq!(&framed[..8], &[0, 0, 0, 0, 42, 4, 2, 0]);
//!
//! let frame = wire::read_frame(&framed, None, true)?;
//! assert_eq!(frame.id, SchemaId::Id(42));
//! assert_eq!(frame.indexes.as_deref(), Some(&[1, 0][..]));
//! assert_eq!(frame.payload, b"payload");
//! # Ok::<(), wire::WireError>(())
//! ```

use std::fmt;

/// The magic byte of the prefix form: a 4-byte schema id follows.
pub const MAGIC_ID: u8 = 0;
/// The magic byte of the GUID form: a 16-byte schema GUID follows.
pub const MAGIC_GUID: u8 = 1;
/// The record header holding a key's schema id in the header form.
pub const KEY_SCHEMA_ID_HEADER: &str = "__key_schema_id";
/// The record header holding a value's schema id in the header form.
pub const VALUE_SCHEMA_ID_HEADER: &str = "__value_schema_id";

/// The longest zigzag varint of a 32-bit integer.
const MAX_VARINT_LEN: usize = 5;

/// How a frame names its schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SchemaId {
    /// A registry id (magic byte 0), as `GET /schemas/ids/{id}` takes it.
    Id(i32),
    /// A schema GUID (magic byte 1), as `GET /schemas/guids/{guid}` takes it.
    Guid([u8; 16]),
}

impl fmt::Display for SchemaId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SchemaId::Id(id) => write!(f, "id {id}"),
            SchemaId::Guid(g) => write!(f, "guid {}", uuid_text(g)),
        }
    }
}

/// A GUID in the text form the registry's paths and answers use
/// (`8-4-4-4-12` lowercase hex digits).
pub(crate) fn uuid_text(guid: &[u8; 16]) -> String {
    let mut out = String::with_capacity(36);
    for (i, b) in guid.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// A frame read from a record's key or value (and its schema-id header).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame<'a> {
    /// The schema the payload was written with.
    pub id: SchemaId,
    /// The message indexes, when asked for (Protobuf); `[0]` when the frame
    /// wrote the single byte `00`.
    pub indexes: Option<Vec<i32>>,
    /// The serialized value itself.
    pub payload: &'a [u8],
}

/// A malformed frame. The record is not lost: the application decides what
/// to do with it (skip it, stop, send it to a dead-letter topic).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WireError {
    /// A null or empty key or value where a framed one was expected.
    #[error("the record has no bytes to read a schema id from")]
    Empty,
    /// The first byte is neither `0` (id) nor `1` (GUID): the data was not
    /// written by a Schema Registry serializer.
    #[error("unknown magic byte {0:#04x}: not written by a Schema Registry serializer")]
    UnknownMagic(u8),
    /// Fewer bytes than the form needs.
    #[error("frame truncated: {needed} bytes needed for the {what}, {available} left")]
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Bytes the field needs.
        needed: usize,
        /// Bytes that were left.
        available: usize,
    },
    /// A varint longer than 5 bytes (or running past the end).
    #[error("malformed varint in the message indexes")]
    BadVarint,
    /// A negative message-index count or index.
    #[error("negative message index or count {0}")]
    NegativeIndex(i32),
    /// More indexes claimed than bytes left to hold them.
    #[error("{claimed} message indexes claimed, only {available} bytes left")]
    TooManyIndexes {
        /// The count the frame claims.
        claimed: usize,
        /// Bytes left after the count.
        available: usize,
    },
}

/// Appends the prefix form's header: magic `0` and the id, big-endian.
pub fn write_prefix(id: i32, out: &mut Vec<u8>) {
    out.push(MAGIC_ID);
    out.extend_from_slice(&id.to_be_bytes());
}

/// Appends message indexes: `00` for `[0]` (and for an empty path, which
/// Confluent's serializer replaces by `[0]`), else the count and each index.
pub fn write_message_indexes(indexes: &[i32], out: &mut Vec<u8>) {
    if indexes.is_empty() || indexes == [0] {
        out.push(0);
        return;
    }
    write_zigzag(indexes.len() as i32, out);
    for &i in indexes {
        write_zigzag(i, out);
    }
}

/// Reads message indexes from the front of `bytes`; returns them and the
/// bytes after them.
pub fn read_message_indexes(bytes: &[u8]) -> Result<(Vec<i32>, &[u8]), WireError> {
    let (count, mut rest) = read_zigzag(bytes)?;
    if count < 0 {
        return Err(WireError::NegativeIndex(count));
    }
    if count == 0 {
        return Ok((vec![0], rest));
    }
    let count = count as usize;
    // Each index takes at least one byte: a count beyond the bytes left is
    // malformed, and refusing it keeps memory bounded by the input.
    if count > rest.len() {
        return Err(WireError::TooManyIndexes {
            claimed: count,
            available: rest.len(),
        });
    }
    let mut indexes = Vec::with_capacity(count);
    for _ in 0..count {
        let (i, after) = read_zigzag(rest)?;
        if i < 0 {
            return Err(WireError::NegativeIndex(i));
        }
        indexes.push(i);
        rest = after;
    }
    Ok((indexes, rest))
}

/// Reads a framed key or value.
///
/// 1. When `header` (the value of `__value_schema_id` or `__key_schema_id`)
///    is given, the schema id (and, with `with_indexes`, the message indexes)
///    come from it and `bytes` is the bare payload.
/// 2. Otherwise `bytes` starts with magic `0` and the id, then (with
///    `with_indexes`) the message indexes, then the payload.
pub fn read_frame<'a>(
    bytes: &'a [u8],
    header: Option<&[u8]>,
    with_indexes: bool,
) -> Result<Frame<'a>, WireError> {
    if let Some(header) = header {
        let (id, rest) = read_id(header)?;
        let indexes = if with_indexes {
            Some(read_message_indexes(rest)?.0)
        } else {
            None
        };
        return Ok(Frame {
            id,
            indexes,
            payload: bytes,
        });
    }
    let (id, rest) = read_id(bytes)?;
    if matches!(id, SchemaId::Guid(_)) {
        // The GUID form is written only into a header; a payload that starts
        // with magic 1 was not written by a registry serializer.
        return Err(WireError::UnknownMagic(MAGIC_GUID));
    }
    let (indexes, payload) = if with_indexes {
        let (ix, rest) = read_message_indexes(rest)?;
        (Some(ix), rest)
    } else {
        (None, rest)
    };
    Ok(Frame {
        id,
        indexes,
        payload,
    })
}

/// Reads a magic byte and the id or GUID after it.
fn read_id(bytes: &[u8]) -> Result<(SchemaId, &[u8]), WireError> {
    let (&magic, rest) = bytes.split_first().ok_or(WireError::Empty)?;
    match magic {
        MAGIC_ID => {
            let (id, rest) = take::<4>(rest, "schema id")?;
            Ok((SchemaId::Id(i32::from_be_bytes(id)), rest))
        }
        MAGIC_GUID => {
            let (guid, rest) = take::<16>(rest, "schema GUID")?;
            Ok((SchemaId::Guid(guid), rest))
        }
        other => Err(WireError::UnknownMagic(other)),
    }
}

fn take<'a, const N: usize>(
    bytes: &'a [u8],
    what: &'static str,
) -> Result<([u8; N], &'a [u8]), WireError> {
    match bytes.split_first_chunk::<N>() {
        Some((head, rest)) => Ok((*head, rest)),
        None => Err(WireError::Truncated {
            what,
            needed: N,
            available: bytes.len(),
        }),
    }
}

fn write_zigzag(v: i32, out: &mut Vec<u8>) {
    let mut z = ((v << 1) ^ (v >> 31)) as u32;
    while z >= 0x80 {
        out.push((z as u8) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

fn read_zigzag(bytes: &[u8]) -> Result<(i32, &[u8]), WireError> {
    let mut z: u32 = 0;
    for (i, &b) in bytes.iter().enumerate().take(MAX_VARINT_LEN) {
        // The fifth byte may carry only the top 4 bits of a 32-bit value.
        if i == MAX_VARINT_LEN - 1 && b > 0x0f {
            return Err(WireError::BadVarint);
        }
        z |= u32::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            let v = ((z >> 1) as i32) ^ -((z & 1) as i32);
            return Ok((v, &bytes[i + 1..]));
        }
    }
    Err(WireError::BadVarint)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn indexes(ix: &[i32]) -> Vec<u8> {
        let mut out = Vec::new();
        write_message_indexes(ix, &mut out);
        out
    }

    /// The index encodings Confluent's serializers write.
    #[test]
    fn message_indexes_match_confluents_encoding() {
        assert_eq!(indexes(&[0]), [0x00]);
        assert_eq!(indexes(&[]), [0x00]);
        assert_eq!(indexes(&[1]), [0x02, 0x02]);
        assert_eq!(indexes(&[2]), [0x02, 0x04]);
        assert_eq!(indexes(&[0, 1]), [0x04, 0x00, 0x02]);
        assert_eq!(indexes(&[64]), [0x02, 0x80, 0x01]);
    }

    /// A count of 0 reads as `[0]`, the serializer's default path.
    #[test]
    fn zero_count_reads_as_first_message() {
        assert_eq!(read_message_indexes(&[0, 9]).unwrap(), (vec![0], &[9][..]));
    }

    /// The prefix form: magic 0, big-endian id, then the payload.
    #[test]
    fn prefix_frame_round_trips() {
        let mut out = Vec::new();
        write_prefix(0x0102_0304, &mut out);
        out.extend_from_slice(b"x");
        assert_eq!(out, [0, 1, 2, 3, 4, b'x']);
        let f = read_frame(&out, None, false).unwrap();
        assert_eq!(f.id, SchemaId::Id(0x0102_0304));
        assert_eq!(f.indexes, None);
        assert_eq!(f.payload, b"x");
    }

    /// The header form: the GUID and indexes in the header, a bare payload.
    #[test]
    fn guid_header_names_the_schema_of_a_bare_payload() {
        let mut header = vec![MAGIC_GUID];
        header.extend_from_slice(&[7; 16]);
        header.extend_from_slice(&[0x02, 0x02]);
        let f = read_frame(b"bare", Some(&header), true).unwrap();
        assert_eq!(f.id, SchemaId::Guid([7; 16]));
        assert_eq!(f.indexes, Some(vec![1]));
        assert_eq!(f.payload, b"bare");
        assert_eq!(
            f.id.to_string(),
            "guid 07070707-0707-0707-0707-070707070707"
        );
    }

    /// Each malformed frame is its own typed error.
    #[test]
    fn malformed_frames_are_typed_errors() {
        assert_eq!(read_frame(b"", None, false), Err(WireError::Empty));
        assert_eq!(
            read_frame(b"\x05abcd", None, false),
            Err(WireError::UnknownMagic(5))
        );
        assert!(matches!(
            read_frame(b"\x00\x00\x01", None, false),
            Err(WireError::Truncated {
                needed: 4,
                available: 2,
                ..
            })
        ));
        // Magic 1 in a payload: the GUID form lives in headers only.
        let mut guid = vec![1];
        guid.extend_from_slice(&[0; 16]);
        assert_eq!(
            read_frame(&guid, None, false),
            Err(WireError::UnknownMagic(1))
        );
        // A negative count (zigzag 0x01 = -1) and a negative index.
        assert_eq!(
            read_frame(b"\x00\x00\x00\x00\x01\x01", None, true),
            Err(WireError::NegativeIndex(-1))
        );
        assert_eq!(
            read_message_indexes(&[0x02, 0x03]),
            Err(WireError::NegativeIndex(-2))
        );
        // A varint of six bytes, and one that ends with the input.
        assert_eq!(
            read_message_indexes(&[0xff, 0xff, 0xff, 0xff, 0xff, 0x01]),
            Err(WireError::BadVarint)
        );
        assert_eq!(read_message_indexes(&[0x80]), Err(WireError::BadVarint));
        // A huge count with two bytes behind it.
        assert_eq!(
            read_message_indexes(&[0xfe, 0xff, 0xff, 0xff, 0x0f, 0, 0]),
            Err(WireError::TooManyIndexes {
                claimed: i32::MAX as usize,
                available: 2
            })
        );
        assert_eq!(read_message_indexes(&[]), Err(WireError::BadVarint));
    }

    proptest! {
        /// Every index path reads back as written.
        #[test]
        fn indexes_round_trip(ix in proptest::collection::vec(0..i32::MAX, 1..8), tail in proptest::collection::vec(any::<u8>(), 0..8)) {
            let mut out = Vec::new();
            write_message_indexes(&ix, &mut out);
            out.extend_from_slice(&tail);
            let (back, rest) = read_message_indexes(&out).unwrap();
            prop_assert_eq!(back, ix);
            prop_assert_eq!(rest, &tail[..]);
        }

        /// Arbitrary bytes never panic the reader.
        #[test]
        fn any_bytes_read_without_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64), header in proptest::option::of(proptest::collection::vec(any::<u8>(), 0..32)), ix: bool) {
            let _ = read_frame(&bytes, header.as_deref(), ix);
        }
    }
}
