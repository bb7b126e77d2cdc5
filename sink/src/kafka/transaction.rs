//! The sink's transaction handle, [`KafkaTransaction`], and its codec
//! [`KafkaTransactionCodec`] (how a pre-committed transaction is persisted
//! in a checkpoint).

use kafka_producer::txn::PreparedTransaction;

use crate::codec::{
    Codec, StateDecodeError, StateReader, put_bytes, put_i64, put_str, put_u8, put_u32,
};

/// A Kafka transaction handle: the transactional id and, once pre-committed
/// with records, the [`PreparedTransaction`] (producer id, epoch, transaction
/// version). Non-transactional semantics use an empty handle.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KafkaTransaction {
    /// The transactional id (EXACTLY_ONCE).
    pub transactional_id: Option<String>,
    /// Set by pre-commit when the transaction has records.
    pub prepared: Option<PreparedTransaction>,
    /// Records written (not persisted).
    pub records: u64,
    /// Where the transaction's records begin: (topic, partition, offset of
    /// its first record there), from the acknowledgements, set by
    /// pre-commit. A commit whose outcome the coordinator can no longer
    /// tell (the id was fenced) is settled by reading the log at these
    /// offsets.
    pub first_offsets: Vec<(String, i32, i64)>,
}

/// Codec of [`KafkaTransaction`]: flag + id, flag + `PreparedTransaction`
/// bytes, then the first offsets (count, then topic, partition, offset each;
/// absent in states written before they were kept: decoded as none).
#[derive(Debug, Clone, Copy, Default)]
pub struct KafkaTransactionCodec;

impl Codec<KafkaTransaction> for KafkaTransactionCodec {
    fn encode(&self, t: &KafkaTransaction, out: &mut Vec<u8>) {
        match &t.transactional_id {
            Some(id) => {
                put_u8(out, 1);
                put_str(out, id);
            }
            None => put_u8(out, 0),
        }
        match &t.prepared {
            Some(p) => {
                put_u8(out, 1);
                put_bytes(out, &p.encode());
            }
            None => put_u8(out, 0),
        }
        put_u32(out, t.first_offsets.len() as u32);
        for (topic, partition, offset) in &t.first_offsets {
            put_str(out, topic);
            put_u32(out, *partition as u32);
            put_i64(out, *offset);
        }
    }

    fn decode(&self, bytes: &[u8]) -> Result<KafkaTransaction, StateDecodeError> {
        let mut r = StateReader::new(bytes);
        let transactional_id = if r.flag()? {
            Some(r.str()?.to_owned())
        } else {
            None
        };
        let prepared = if r.flag()? {
            Some(
                PreparedTransaction::decode(r.bytes()?)
                    .map_err(|e| StateDecodeError::Invalid(e.to_string()))?,
            )
        } else {
            None
        };
        let mut first_offsets = Vec::new();
        if r.remaining() > 0 {
            let n = r.u32()?;
            for _ in 0..n {
                let topic = r.str()?.to_owned();
                let partition = r.u32()? as i32;
                let offset = r.i64()?;
                first_offsets.push((topic, partition, offset));
            }
        }
        r.finish()?;
        Ok(KafkaTransaction {
            transactional_id,
            prepared,
            records: 0,
            first_offsets,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_producer::txn::TransactionVersion;

    /// Invariant: the id and the prepared transaction survive the codec;
    /// the record count is not persisted.
    #[test]
    fn transaction_codec_round_trip() {
        let t = KafkaTransaction {
            transactional_id: Some("p-3".into()),
            prepared: Some(PreparedTransaction {
                transactional_id: "p-3".into(),
                producer_id: 42,
                producer_epoch: 7,
                transaction_version: TransactionVersion::V2,
            }),
            records: 9,
            first_offsets: vec![("t".into(), 1, 42), ("u".into(), 0, 7)],
        };
        let mut buf = Vec::new();
        KafkaTransactionCodec.encode(&t, &mut buf);
        let back = KafkaTransactionCodec.decode(&buf).unwrap();
        assert_eq!(back, KafkaTransaction { records: 0, ..t });
    }

    /// Invariant: a state written before the first offsets were kept
    /// decodes, with none.
    #[test]
    fn older_states_decode_without_first_offsets() {
        let mut buf = Vec::new();
        put_u8(&mut buf, 1);
        put_str(&mut buf, "p-1");
        put_u8(&mut buf, 0);
        let back = KafkaTransactionCodec.decode(&buf).unwrap();
        assert_eq!(back.transactional_id.as_deref(), Some("p-1"));
        assert!(back.first_offsets.is_empty());
    }
}
