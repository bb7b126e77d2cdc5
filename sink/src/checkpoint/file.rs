//! The checkpoint file format: a [`Checkpoint`] with one [`OperatorSnapshot`]
//! per operator, encoded with a checksum; [`CheckpointFileError`] says why a
//! file was rejected.

use super::{OperatorInfo, RestoredState};
use crate::codec::{StateDecodeError, StateReader, put_bytes, put_str, put_u8, put_u32, put_u64};

/// One operator's state in a [`Checkpoint`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperatorSnapshot {
    /// The operator's id.
    pub uid: String,
    /// The subtask that wrote the state.
    pub subtask_index: u32,
    /// The operator's parallelism at the time.
    pub parallelism: u32,
    /// The state bytes.
    pub state: Vec<u8>,
}

/// A complete checkpoint: id, time and the state of every operator.
///
/// # File format, version 1 (big-endian)
///
/// ```text
/// magic        8 bytes "KEOSCKPT"
/// version      u8      1
/// checkpoint   u64
/// body_len     u64
/// crc32c       u32     CRC-32C of version, checkpoint, body_len and body
/// body         timestamp_ms u64, n u32,
///              n x (uid: u32 len + UTF-8, subtask u32, parallelism u32,
///                   state: u32 len + bytes)
/// ```
///
/// ```
/// use kafka_sink::{Checkpoint, OperatorSnapshot};
/// let checkpoint = Checkpoint {
///     id: 7,
///     timestamp_ms: 1_700_000_000_000,
///     operators: vec![OperatorSnapshot { uid: "kafka-sink".into(), subtask_index: 0, parallelism: 1, state: vec![1, 2] }],
/// };
/// let bytes = checkpoint.encode();
/// assert!(bytes.starts_with(&Checkpoint::MAGIC));
/// assert_eq!(Checkpoint::decode(&bytes), Ok(checkpoint));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    /// The checkpoint id.
    pub id: u64,
    /// Wall-clock time of the checkpoint (ms since the Unix epoch).
    pub timestamp_ms: u64,
    /// Every operator's state.
    pub operators: Vec<OperatorSnapshot>,
}

/// Why a checkpoint file was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckpointFileError {
    /// Malformed bytes (magic, version, truncation, trailing bytes...).
    #[error(transparent)]
    Decode(#[from] StateDecodeError),
    /// The checksum does not match the contents (torn or corrupt file).
    #[error("checksum mismatch: stored {stored:#010x}, computed {computed:#010x}")]
    ChecksumMismatch {
        /// The CRC-32C in the file.
        stored: u32,
        /// The CRC-32C of the contents.
        computed: u32,
    },
}

impl Checkpoint {
    /// The first bytes of a checkpoint file.
    pub const MAGIC: [u8; 8] = *b"KEOSCKPT";
    /// The file format version written.
    pub const VERSION: u8 = 1;
    const HEADER_LEN: usize = 8 + 1 + 8 + 8 + 4;

    /// Encodes the checkpoint as a file.
    pub fn encode(&self) -> Vec<u8> {
        let mut body = Vec::new();
        put_u64(&mut body, self.timestamp_ms);
        put_u32(
            &mut body,
            u32::try_from(self.operators.len()).expect("too many operators"),
        );
        for op in &self.operators {
            put_str(&mut body, &op.uid);
            put_u32(&mut body, op.subtask_index);
            put_u32(&mut body, op.parallelism);
            put_bytes(&mut body, &op.state);
        }
        let mut covered = Vec::with_capacity(17);
        put_u8(&mut covered, Self::VERSION);
        put_u64(&mut covered, self.id);
        put_u64(&mut covered, body.len() as u64);
        let crc = crc32c::crc32c_append(crc32c::crc32c(&covered), &body);

        let mut out = Vec::with_capacity(Self::HEADER_LEN + body.len());
        out.extend_from_slice(&Self::MAGIC);
        out.extend_from_slice(&covered);
        put_u32(&mut out, crc);
        out.extend_from_slice(&body);
        out
    }

    /// Decodes and verifies a checkpoint file.
    pub fn decode(bytes: &[u8]) -> Result<Self, CheckpointFileError> {
        let mut r = StateReader::new(bytes);
        r.magic(&Self::MAGIC)?;
        r.version(Self::VERSION)?;
        let id = r.u64()?;
        let body_len = r.u64()?;
        let stored = r.u32()?;
        let body_len = usize::try_from(body_len).map_err(|_| StateDecodeError::Truncated {
            needed: usize::MAX,
            remaining: r.remaining(),
        })?;
        let body = r.take(body_len)?;
        r.finish()?;
        let computed = crc32c::crc32c_append(crc32c::crc32c(&bytes[8..8 + 17]), body);
        if stored != computed {
            return Err(CheckpointFileError::ChecksumMismatch { stored, computed });
        }
        let mut b = StateReader::new(body);
        let timestamp_ms = b.u64()?;
        let n = b.u32()?;
        let mut operators = Vec::new();
        for _ in 0..n {
            operators.push(OperatorSnapshot {
                uid: b.str()?.to_owned(),
                subtask_index: b.u32()?,
                parallelism: b.u32()?,
                state: b.bytes()?.to_vec(),
            });
        }
        b.finish()?;
        Ok(Checkpoint {
            id,
            timestamp_ms,
            operators,
        })
    }

    /// The state to restore for `info` (see [`RestoredState`] for the
    /// assignment after a rescale).
    pub fn restored_state_for(&self, info: &OperatorInfo) -> RestoredState {
        let mut mine: Vec<&OperatorSnapshot> = self
            .operators
            .iter()
            .filter(|o| o.uid == info.uid)
            .collect();
        mine.sort_by_key(|o| o.subtask_index);
        let parallelism = info.parallelism.max(1);
        RestoredState {
            checkpoint_id: self.id,
            own: mine
                .iter()
                .filter(|o| o.subtask_index % parallelism == info.subtask_index)
                .map(|o| o.state.clone())
                .collect(),
            union: mine.iter().map(|o| o.state.clone()).collect(),
            previous_parallelism: mine.first().map(|o| o.parallelism),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Checkpoint {
        Checkpoint {
            id: 7,
            timestamp_ms: 1234,
            operators: vec![
                OperatorSnapshot {
                    uid: "src".into(),
                    subtask_index: 0,
                    parallelism: 1,
                    state: vec![1, 2, 3],
                },
                OperatorSnapshot {
                    uid: "sink".into(),
                    subtask_index: 0,
                    parallelism: 1,
                    state: vec![],
                },
            ],
        }
    }

    #[test]
    fn round_trip() {
        let bytes = sample().encode();
        assert_eq!(Checkpoint::decode(&bytes).unwrap(), sample());
    }

    #[test]
    fn every_single_byte_flip_and_truncation_is_detected() {
        let bytes = sample().encode();
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x01;
            assert!(Checkpoint::decode(&b).is_err(), "flip at {i} undetected");
        }
        for cut in 0..bytes.len() {
            assert!(Checkpoint::decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(matches!(
            Checkpoint::decode(&longer),
            Err(CheckpointFileError::Decode(
                StateDecodeError::TrailingBytes { count: 1 }
            ))
        ));
    }

    #[test]
    fn checksum_mismatch_is_typed() {
        let mut bytes = sample().encode();
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
        assert!(matches!(
            Checkpoint::decode(&bytes),
            Err(CheckpointFileError::ChecksumMismatch { .. })
        ));
    }

    #[test]
    fn rescale_assignment() {
        let cp = Checkpoint {
            id: 1,
            timestamp_ms: 0,
            operators: (0..5)
                .map(|i| OperatorSnapshot {
                    uid: "sink".into(),
                    subtask_index: i,
                    parallelism: 5,
                    state: vec![i as u8],
                })
                .collect(),
        };
        let down = cp.restored_state_for(&OperatorInfo::new("sink", 0, 1));
        assert_eq!(down.own.len(), 5);
        assert_eq!(down.previous_parallelism, Some(5));
        let s1of2 = cp.restored_state_for(&OperatorInfo::new("sink", 1, 2));
        assert_eq!(s1of2.own, vec![vec![1], vec![3]]);
        assert_eq!(s1of2.union.len(), 5);
        let up = cp.restored_state_for(&OperatorInfo::new("sink", 6, 8));
        assert!(up.own.is_empty());
        let other = cp.restored_state_for(&OperatorInfo::new("src", 0, 1));
        assert!(other.own.is_empty() && other.previous_parallelism.is_none());
    }

    /// Invariant: a file starts with the magic `KEOSCKPT` and the version
    /// byte 1.
    #[test]
    fn encoding_starts_with_magic_and_version() {
        let bytes = sample().encode();
        assert_eq!(&bytes[..9], b"KEOSCKPT\x01");
        assert!(bytes.starts_with(&Checkpoint::MAGIC));
    }
}
