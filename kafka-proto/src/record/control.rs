//! Control records (transaction markers): the key and value of the single
//! record of a control batch.

use super::Record;
use crate::error::{DecodeError, DecodeErrorKind};
use bytes::{BufMut, Bytes, BytesMut};

/// The type carried in a control record key.
///
/// Types 2-6 are KRaft-internal (leader change, snapshot header/footer, voters…)
/// and are kept as [`ControlRecordType::Unknown`]; clients ignore them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ControlRecordType {
    /// Type 0: the transaction was aborted.
    Abort,
    /// Type 1: the transaction was committed.
    Commit,
    /// Any other type id.
    Unknown(i16),
}

impl ControlRecordType {
    /// The wire type id.
    pub fn id(self) -> i16 {
        match self {
            Self::Abort => 0,
            Self::Commit => 1,
            Self::Unknown(id) => id,
        }
    }

    /// The type for a wire id.
    pub fn from_id(id: i16) -> Self {
        match id {
            0 => Self::Abort,
            1 => Self::Commit,
            other => Self::Unknown(other),
        }
    }

    /// True for [`Abort`](Self::Abort) and [`Commit`](Self::Commit): the
    /// end-transaction markers, whose value carries a coordinator epoch.
    pub fn is_transaction_marker(self) -> bool {
        matches!(self, Self::Abort | Self::Commit)
    }
}

/// A control record: `key = int16 version + int16 type`; for transaction
/// markers `value = int16 version + int32 coordinatorEpoch`.
///
/// ```
/// use kafka_proto::record::{ControlRecord, ControlRecordType};
/// let m = ControlRecord::commit(7);
/// let (key, value) = (m.encode_key(), m.encode_value());
/// assert_eq!(&key[..], &[0, 0, 0, 1]);
/// assert_eq!(ControlRecord::decode(&key, Some(&value)).unwrap(), m);
/// assert_eq!(m.kind, ControlRecordType::Commit);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ControlRecord {
    /// Key (and value) schema version; 0 today.
    pub version: i16,
    /// What the record marks.
    pub kind: ControlRecordType,
    /// The transaction coordinator's epoch (markers only; 0 for other types).
    pub coordinator_epoch: i32,
}

/// Reads the INT16 version that starts a control record's key or value
/// (`field`, called `what` in errors) whose version 0 is `v0_len` bytes long:
/// the bytes must hold at least that many, the version must not be negative,
/// and version 0 must be exact (newer versions may append fields).
fn read_version(
    bytes: &[u8],
    field: &'static str,
    v0_len: usize,
    what: &str,
) -> Result<i16, DecodeError> {
    if bytes.len() < v0_len {
        return Err(DecodeError::new(
            field,
            DecodeErrorKind::Truncated {
                needed: v0_len,
                remaining: bytes.len(),
            },
        ));
    }
    let version = i16::from_be_bytes([bytes[0], bytes[1]]);
    if version < 0 {
        return Err(DecodeError::new(
            field,
            DecodeErrorKind::InvalidValue(format!("{what} version {version}")),
        ));
    }
    if version == 0 && bytes.len() > v0_len {
        return Err(DecodeError::new(
            field,
            DecodeErrorKind::TrailingBytes(bytes.len() - v0_len),
        ));
    }
    Ok(version)
}

impl ControlRecord {
    /// A version-0 COMMIT marker.
    pub fn commit(coordinator_epoch: i32) -> Self {
        Self {
            version: 0,
            kind: ControlRecordType::Commit,
            coordinator_epoch,
        }
    }

    /// A version-0 ABORT marker.
    pub fn abort(coordinator_epoch: i32) -> Self {
        Self {
            version: 0,
            kind: ControlRecordType::Abort,
            coordinator_epoch,
        }
    }

    /// The 4-byte key: version, type.
    pub fn encode_key(&self) -> Bytes {
        let mut b = BytesMut::with_capacity(4);
        b.put_i16(self.version);
        b.put_i16(self.kind.id());
        b.freeze()
    }

    /// The 6-byte marker value: version, coordinator epoch.
    pub fn encode_value(&self) -> Bytes {
        let mut b = BytesMut::with_capacity(6);
        b.put_i16(self.version);
        b.put_i32(self.coordinator_epoch);
        b.freeze()
    }

    /// Decodes the key's version and type only (what a consumer needs to
    /// classify a control batch), as Java's `ControlRecordType.parseTypeId`.
    pub fn decode_key(key: &[u8]) -> Result<(i16, ControlRecordType), DecodeError> {
        let version = read_version(key, "control_record.key", 4, "control key")?;
        Ok((
            version,
            ControlRecordType::from_id(i16::from_be_bytes([key[2], key[3]])),
        ))
    }

    /// Decodes a control record from its key and value. The value is parsed
    /// only for transaction markers (it must then be present); other types get
    /// `coordinator_epoch = 0` and their value is ignored.
    pub fn decode(key: &[u8], value: Option<&[u8]>) -> Result<Self, DecodeError> {
        let (version, kind) = Self::decode_key(key)?;
        if !kind.is_transaction_marker() {
            return Ok(Self {
                version,
                kind,
                coordinator_epoch: 0,
            });
        }
        let field = "control_record.value";
        let value =
            value.ok_or_else(|| DecodeError::new(field, DecodeErrorKind::UnexpectedNull))?;
        read_version(value, field, 6, "marker value")?;
        Ok(Self {
            version,
            kind,
            coordinator_epoch: i32::from_be_bytes([value[2], value[3], value[4], value[5]]),
        })
    }

    /// Decodes the control record carried by `record`.
    pub fn from_record(record: &Record) -> Result<Self, DecodeError> {
        let key = record.key.as_deref().ok_or_else(|| {
            DecodeError::new("control_record.key", DecodeErrorKind::UnexpectedNull)
        })?;
        Self::decode(key, record.value.as_deref())
    }

    /// The record carrying this marker, at `timestamp` (offset filled in by the batch).
    pub fn to_record(&self, timestamp: i64) -> Record {
        Record {
            timestamp,
            offset: 0,
            key: Some(self.encode_key()),
            value: Some(self.encode_value()),
            headers: Vec::new(),
        }
    }
}
