//! The operator state format of [`KafkaSink`](super::KafkaSink), version 1:
//! magic `KSNK`, version byte, the length-prefixed sink state, then a flag
//! and the [`NextTransactionalIdHint`] (written by subtask 0 only).

use crate::codec::{StateDecodeError, StateReader, put_bytes, put_u8, put_u32, put_u64};

use super::NextTransactionalIdHint;

const STATE_MAGIC: [u8; 4] = *b"KSNK";
const STATE_VERSION: u8 = 1;

pub(super) fn encode_operator_state(
    sink_state: &[u8],
    hint: Option<NextTransactionalIdHint>,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(sink_state.len() + 24);
    out.extend_from_slice(&STATE_MAGIC);
    put_u8(&mut out, STATE_VERSION);
    put_bytes(&mut out, sink_state);
    match hint {
        Some(h) => {
            put_u8(&mut out, 1);
            put_u64(&mut out, h.next_free_transactional_id);
            put_u32(&mut out, h.last_parallelism);
        }
        None => put_u8(&mut out, 0),
    }
    out
}

pub(super) fn decode_operator_state(
    bytes: &[u8],
) -> Result<(&[u8], Option<NextTransactionalIdHint>), StateDecodeError> {
    let mut r = StateReader::new(bytes);
    let magic = r.take(4)?;
    if magic != STATE_MAGIC {
        return Err(StateDecodeError::BadMagic {
            expected: STATE_MAGIC.to_vec(),
            found: magic.to_vec(),
        });
    }
    r.version(STATE_VERSION)?;
    let state = r.bytes()?;
    let hint = if r.flag()? {
        let next_free_transactional_id = r.u64()?;
        let last_parallelism = r.u32()?;
        Some(NextTransactionalIdHint {
            last_parallelism,
            next_free_transactional_id,
        })
    } else {
        None
    };
    r.finish()?;
    Ok((state, hint))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Invariant: the sink state and the hint survive the operator state
    /// format; trailing bytes are refused.
    #[test]
    fn operator_state_round_trip() {
        let hint = NextTransactionalIdHint {
            last_parallelism: 3,
            next_free_transactional_id: 15,
        };
        let bytes = encode_operator_state(b"inner", Some(hint));
        assert_eq!(
            decode_operator_state(&bytes).unwrap(),
            (&b"inner"[..], Some(hint))
        );
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode_operator_state(&longer).is_err());
    }
}
