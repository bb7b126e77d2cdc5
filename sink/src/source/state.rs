//! Versioned serializer for the pending checkpoints of a
//! [`MessageAcknowledgingSource`](super::MessageAcknowledgingSource).

use bytes::Bytes;
use std::fmt::Debug;
use std::hash::Hash;

use crate::codec::{StateDecodeError, StateReader};

/// The magic at the start of every serialized source state.
pub const STATE_MAGIC: [u8; 4] = *b"KEAS";
/// The version [`encode_pending`] writes.
pub const STATE_VERSION: u8 = 1;

/// Errors of snapshot and restore.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StateError {
    /// The state does not start with [`STATE_MAGIC`].
    #[error("not a message-acknowledging source state (magic {found:02x?})")]
    BadMagic {
        /// The first bytes found.
        found: Vec<u8>,
    },
    /// A version this build cannot read.
    #[error("unsupported source state version {0} (this build reads version 1)")]
    UnsupportedVersion(u8),
    /// The state was written for another id type.
    #[error("source state holds id kind {found}, expected {expected}")]
    IdKindMismatch {
        /// The kind this source uses.
        expected: u8,
        /// The kind in the state.
        found: u8,
    },
    /// The state ended early.
    #[error("source state truncated while reading {what}")]
    Truncated {
        /// What was being read.
        what: &'static str,
    },
    /// The checksum does not match.
    #[error("source state checksum mismatch (stored {stored:#010x}, computed {computed:#010x})")]
    ChecksumMismatch {
        /// The CRC-32C stored in the state.
        stored: u32,
        /// The CRC-32C of the bytes read.
        computed: u32,
    },
    /// An id could not be decoded (e.g. a string that is not UTF-8).
    #[error("invalid id in source state: {0}")]
    InvalidId(String),
    /// Bytes after the checksum.
    #[error("{0} unexpected bytes after the source state")]
    TrailingBytes(usize),
    /// Checkpoint ids in the state or passed to `snapshot_state` do not
    /// strictly increase.
    #[error("checkpoint id {checkpoint_id} is not greater than the previous one, {previous}")]
    NonIncreasingCheckpointId {
        /// The offending id.
        checkpoint_id: u64,
        /// The id before it.
        previous: u64,
    },
}

/// A message id that can be deduplicated and checkpointed.
///
/// Implemented for [`String`], [`u64`], [`Vec<u8>`] and [`Bytes`].
///
/// A message id type of your own, stored as a string:
///
/// ```
/// use kafka_sink::source::{MessageAcknowledgingSource, StateError, UniqueId};
///
/// /// The AMQP `correlation-id` of a message.
/// #[derive(Debug, Clone, PartialEq, Eq, Hash)]
/// struct CorrelationId(String);
///
/// impl UniqueId for CorrelationId {
///     const KIND: u8 = String::KIND; // the state holds strings
///     fn encode(&self, out: &mut Vec<u8>) {
///         self.0.encode(out)
///     }
///     fn decode(input: &mut &[u8]) -> Result<Self, StateError> {
///         String::decode(input).map(CorrelationId)
///     }
/// }
///
/// let mut src = MessageAcknowledgingSource::<CorrelationId>::new();
/// assert!(src.add_id(CorrelationId("corr-1".into())));
/// let state = src.snapshot_state(1).unwrap();
/// let restored = MessageAcknowledgingSource::<CorrelationId>::restore(&state).unwrap();
/// assert!(restored.contains(&CorrelationId("corr-1".into())));
/// ```
pub trait UniqueId: Clone + Eq + Hash + Debug {
    /// The id kind byte stored in the state (1 = string, 2 = u64, 3 = bytes).
    const KIND: u8;
    /// Appends the encoding of `self`.
    fn encode(&self, out: &mut Vec<u8>);
    /// Decodes one id from the front of `input`, advancing it.
    fn decode(input: &mut &[u8]) -> Result<Self, StateError>;
}

/// Runs `read` on a [`StateReader`] over the front of `input`, then advances
/// `input` past every byte read (also when `read` fails part-way).
fn read_front<'a, T>(
    input: &mut &'a [u8],
    read: impl FnOnce(&mut StateReader<'a>) -> Result<T, StateError>,
) -> Result<T, StateError> {
    let mut r = StateReader::new(input);
    let result = read(&mut r);
    *input = r.rest();
    result
}

/// The state ended while reading `what`: the only error the reader's
/// `take`, `u8`, `u32` and `u64` return.
fn truncated(what: &'static str) -> impl FnOnce(StateDecodeError) -> StateError {
    move |_| StateError::Truncated { what }
}

fn put_len(out: &mut Vec<u8>, len: usize) {
    let len = u32::try_from(len).expect("a source state item longer than 4 GiB");
    out.extend_from_slice(&len.to_be_bytes());
}

impl UniqueId for String {
    const KIND: u8 = 1;
    fn encode(&self, out: &mut Vec<u8>) {
        put_len(out, self.len());
        out.extend_from_slice(self.as_bytes());
    }
    fn decode(input: &mut &[u8]) -> Result<Self, StateError> {
        let b = read_front(input, |r| {
            let len = r.u32().map_err(truncated("a string id length"))? as usize;
            r.take(len).map_err(truncated("a string id"))
        })?;
        String::from_utf8(b.to_vec()).map_err(|e| StateError::InvalidId(e.to_string()))
    }
}

impl UniqueId for u64 {
    const KIND: u8 = 2;
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_be_bytes());
    }
    fn decode(input: &mut &[u8]) -> Result<Self, StateError> {
        read_front(input, |r| r.u64().map_err(truncated("a u64 id")))
    }
}

impl UniqueId for Vec<u8> {
    const KIND: u8 = 3;
    fn encode(&self, out: &mut Vec<u8>) {
        put_len(out, self.len());
        out.extend_from_slice(self);
    }
    fn decode(input: &mut &[u8]) -> Result<Self, StateError> {
        read_front(input, |r| {
            let len = r.u32().map_err(truncated("a byte id length"))? as usize;
            Ok(r.take(len).map_err(truncated("a byte id"))?.to_vec())
        })
    }
}

impl UniqueId for Bytes {
    const KIND: u8 = 3;
    fn encode(&self, out: &mut Vec<u8>) {
        put_len(out, self.len());
        out.extend_from_slice(self);
    }
    fn decode(input: &mut &[u8]) -> Result<Self, StateError> {
        Vec::<u8>::decode(input).map(Bytes::from)
    }
}

/// The ids of one snapshot that the broker has not acknowledged yet.
///
/// # Format v1
///
/// All integers are big-endian.
///
/// | bytes | field |
/// |---|---|
/// | 4 | magic `KEAS` (kafka-eos acknowledging source) |
/// | 1 | format version, `1` |
/// | 1 | id kind ([`UniqueId::KIND`]: 1 = UTF-8 string, 2 = `u64`, 3 = bytes) |
/// | 4 | number of pending checkpoints |
/// | per checkpoint | checkpoint id (8), number of ids (4), the ids |
/// | 4 | CRC-32C of every preceding byte |
///
/// A string or byte id is a 4-byte length and its bytes; a `u64` id is 8
/// bytes. The committed fixture `sink/tests/source_state_v1.hex` pins the
/// format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingCheckpoint<Id> {
    /// The checkpoint whose snapshot took these ids.
    pub checkpoint_id: u64,
    /// The ids emitted between the previous snapshot and this one, in
    /// emission order, each once.
    pub ids: Vec<Id>,
}

/// Serializes pending checkpoints in format v1 (see [`PendingCheckpoint`]).
pub fn encode_pending<'a, Id: UniqueId + 'a>(
    pending: impl IntoIterator<Item = &'a PendingCheckpoint<Id>>,
) -> Bytes {
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(&STATE_MAGIC);
    out.push(STATE_VERSION);
    out.push(Id::KIND);
    let count_at = out.len();
    out.extend_from_slice(&[0; 4]);
    let mut count = 0u32;
    for cp in pending {
        count += 1;
        out.extend_from_slice(&cp.checkpoint_id.to_be_bytes());
        put_len(&mut out, cp.ids.len());
        for id in &cp.ids {
            id.encode(&mut out);
        }
    }
    out[count_at..count_at + 4].copy_from_slice(&count.to_be_bytes());
    let crc = crc32c::crc32c(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    Bytes::from(out)
}

/// Decodes pending checkpoints written by [`encode_pending`].
///
/// Checks magic, version, id kind, checksum, strictly increasing checkpoint
/// ids and that nothing follows the checksum.
pub fn decode_pending<Id: UniqueId>(
    state: &[u8],
) -> Result<Vec<PendingCheckpoint<Id>>, StateError> {
    let mut r = StateReader::new(state);
    let magic = r.take(4).map_err(|_| StateError::BadMagic {
        found: state.to_vec(),
    })?;
    if magic != STATE_MAGIC {
        return Err(StateError::BadMagic {
            found: magic.to_vec(),
        });
    }
    let version = r.u8().map_err(truncated("the version"))?;
    if version != STATE_VERSION {
        return Err(StateError::UnsupportedVersion(version));
    }
    if r.remaining() < 5 {
        return Err(StateError::Truncated { what: "the header" });
    }
    // Verify the checksum before trusting any length.
    let body_len = state.len() - 4;
    if body_len < 10 {
        return Err(StateError::Truncated {
            what: "the checksum",
        });
    }
    let stored = StateReader::new(&state[body_len..])
        .u32()
        .map_err(truncated("the checksum"))?;
    let computed = crc32c::crc32c(&state[..body_len]);
    if stored != computed {
        return Err(StateError::ChecksumMismatch { stored, computed });
    }
    let mut r = StateReader::new(&state[5..body_len]);
    let kind = r.u8().map_err(truncated("the id kind"))?;
    if kind != Id::KIND {
        return Err(StateError::IdKindMismatch {
            expected: Id::KIND,
            found: kind,
        });
    }
    let count = r.u32().map_err(truncated("the checkpoint count"))?;
    let mut out: Vec<PendingCheckpoint<Id>> = Vec::with_capacity(count.min(1024) as usize);
    for _ in 0..count {
        let checkpoint_id = r.u64().map_err(truncated("a checkpoint id"))?;
        if let Some(prev) = out.last()
            && checkpoint_id <= prev.checkpoint_id
        {
            return Err(StateError::NonIncreasingCheckpointId {
                checkpoint_id,
                previous: prev.checkpoint_id,
            });
        }
        let n = r.u32().map_err(truncated("an id count"))?;
        let mut ids = Vec::with_capacity(n.min(4096) as usize);
        let mut input = r.rest();
        for _ in 0..n {
            ids.push(Id::decode(&mut input)?);
        }
        r = StateReader::new(input);
        out.push(PendingCheckpoint { checkpoint_id, ids });
    }
    if r.remaining() > 0 {
        return Err(StateError::TrailingBytes(r.remaining()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Invariant: a state not starting with `KEAS` is `BadMagic`, carrying
    /// the bytes found.
    #[test]
    fn wrong_magic_is_bad_magic_with_the_bytes_found() {
        let err = decode_pending::<u64>(b"JUNK").unwrap_err();
        assert_eq!(
            err,
            StateError::BadMagic {
                found: b"JUNK".to_vec()
            }
        );
    }

    /// Invariant: a string id is a u32 length and its bytes; a u64 id is 8
    /// big-endian bytes.
    #[test]
    fn id_encodings() {
        let mut out = Vec::new();
        "a".to_string().encode(&mut out);
        assert_eq!(out, [0, 0, 0, 1, b'a']);
        let mut out = Vec::new();
        42u64.encode(&mut out);
        assert_eq!(out, [0, 0, 0, 0, 0, 0, 0, 42]);
    }

    /// Invariant: decoding an id advances the input past it, and a short
    /// input is `Truncated`.
    #[test]
    fn id_decode_advances_the_input() {
        let mut input: &[u8] = &[0, 0, 0, 2, b'i', b'd', 0xFF];
        assert_eq!(String::decode(&mut input).unwrap(), "id");
        assert_eq!(input, [0xFF]);
        assert!(matches!(
            u64::decode(&mut input),
            Err(StateError::Truncated { .. })
        ));
    }

    /// Invariant: the state starts with the magic and version 1, and decodes
    /// back to the same pending checkpoints.
    #[test]
    fn encode_pending_writes_the_v1_header_and_round_trips() {
        let pending = vec![PendingCheckpoint {
            checkpoint_id: 7,
            ids: vec![1u64, 2],
        }];
        let bytes = encode_pending(&pending);
        assert_eq!(&bytes[..5], b"KEAS\x01");
        assert_eq!(decode_pending::<u64>(&bytes).unwrap(), pending);
    }

    /// Invariant: string ids cannot be read as u64 ids.
    #[test]
    fn id_kind_is_checked() {
        let bytes = encode_pending(&[PendingCheckpoint {
            checkpoint_id: 3,
            ids: vec!["m-1".to_string()],
        }]);
        assert_eq!(decode_pending::<String>(&bytes).unwrap()[0].ids, ["m-1"]);
        assert!(matches!(
            decode_pending::<u64>(&bytes),
            Err(StateError::IdKindMismatch { .. })
        ));
    }
}
