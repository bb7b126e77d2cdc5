//! Property tests of RecordBatch v2: round trips (every codec compiled in),
//! CRC corruption, truncation at every cut, and never panicking on garbage.
//!
//! Run with `--features all-compression` to cover every codec.

use crate::batch_around::{COMPRESSING_CODECS, batch_around};
use bytes::Bytes;
use kafka_proto::DecodeErrorKind;
use kafka_proto::record::{
    Compression, DecodeOptions, Record, RecordBatch, RecordBatchView, RecordBatches, RecordHeader,
    TimestampType,
};
use proptest::prelude::*;

fn codecs() -> Vec<Compression> {
    std::iter::once(Compression::None)
        .chain(COMPRESSING_CODECS)
        .filter(|c| c.is_supported())
        .collect()
}

fn opt_bytes(max: usize) -> impl Strategy<Value = Option<Bytes>> {
    proptest::option::of(proptest::collection::vec(any::<u8>(), 0..max).prop_map(Bytes::from))
}

fn arb_header() -> impl Strategy<Value = RecordHeader> {
    ("\\PC{0,8}", opt_bytes(16)).prop_map(|(key, value)| RecordHeader { key, value })
}

/// A record with an arbitrary (possibly negative) offset delta and any timestamp.
fn arb_record(base_offset: i64) -> impl Strategy<Value = Record> {
    (
        any::<i32>(),
        prop_oneof![any::<i64>(), -1000i64..1000],
        opt_bytes(48),
        opt_bytes(200),
        proptest::collection::vec(arb_header(), 0..3),
    )
        .prop_map(move |(delta, timestamp, key, value, headers)| Record {
            timestamp,
            offset: base_offset.wrapping_add(i64::from(delta)),
            key,
            value,
            headers,
        })
}

fn arb_batch(
    compression: impl Strategy<Value = Compression>,
) -> impl Strategy<Value = RecordBatch> {
    (
        any::<i64>(),
        compression,
        any::<(i32, bool, bool, bool, bool, i32)>(),
        any::<(i64, i64, i64, i16, i32)>(),
    )
        .prop_flat_map(|(base_offset, compression, flags, producer)| {
            proptest::collection::vec(arb_record(base_offset), 0..6).prop_map(move |records| {
                let (epoch, log_append, txn, control, horizon, last_offset_delta) = flags;
                let (base_timestamp, max_timestamp, producer_id, producer_epoch, base_sequence) =
                    producer;
                RecordBatch {
                    base_offset,
                    partition_leader_epoch: epoch,
                    compression,
                    timestamp_type: if log_append {
                        TimestampType::LogAppend
                    } else {
                        TimestampType::Create
                    },
                    is_transactional: txn,
                    is_control: control,
                    has_delete_horizon: horizon,
                    last_offset_delta,
                    base_timestamp,
                    max_timestamp,
                    producer_id,
                    producer_epoch,
                    base_sequence,
                    records,
                }
            })
        })
}

fn any_codec() -> impl Strategy<Value = Compression> {
    proptest::sample::select(codecs())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn record_batch_round_trips(batch in arb_batch(any_codec())) {
        let bytes = batch.encode_to_vec().unwrap();
        let back = RecordBatch::decode(&bytes).unwrap();
        prop_assert_eq!(&back, &batch);
        let fast = RecordBatch::decode_bytes(&Bytes::from(bytes.clone())).unwrap();
        prop_assert_eq!(&fast, &batch);
        let view = RecordBatchView::decode(&bytes).unwrap();
        let viewed: Result<Vec<Record>, _> = view.records().map(|r| r.map(|r| r.to_record())).collect();
        prop_assert_eq!(&viewed.unwrap(), &batch.records);
        let again = back.encode_to_vec().unwrap();
        if batch.compression == Compression::None {
            prop_assert_eq!(bytes.len(), batch.encoded_size().unwrap());
            prop_assert_eq!(&again, &bytes);
        } else {
            prop_assert_eq!(RecordBatch::decode(&again).unwrap(), batch);
        }
    }

    #[test]
    fn record_crc_detects_any_byte_flip(
        batch in arb_batch(any_codec()),
        at in any::<prop::sample::Index>(),
        flip in 1u8..=255,
    ) {
        let mut bytes = batch.encode_to_vec().unwrap();
        let i = 21 + at.index(bytes.len() - 21);
        bytes[i] ^= flip;
        let e = RecordBatch::decode(&bytes).unwrap_err();
        prop_assert!(matches!(e.kind, DecodeErrorKind::CrcMismatch { .. }), "{}", e);
    }

    #[test]
    fn record_header_flips_never_panic(
        batch in arb_batch(any_codec()),
        at in 0usize..21,
        flip in 1u8..=255,
    ) {
        let mut bytes = batch.encode_to_vec().unwrap();
        bytes[at] ^= flip;
        let _ = RecordBatch::decode(&bytes);
        let _ = RecordBatches::new(Bytes::from(bytes)).count();
    }

    #[test]
    fn record_truncation_fails_cleanly(batch in arb_batch(any_codec())) {
        let bytes = Bytes::from(batch.encode_to_vec().unwrap());
        for cut in 0..bytes.len() {
            prop_assert!(RecordBatch::decode(&bytes[..cut]).is_err());
            let mut it = RecordBatches::new(bytes.slice(..cut));
            prop_assert!(it.next().is_none());
            prop_assert_eq!(it.truncated_bytes(), cut);
        }
    }

    #[test]
    fn record_batches_concatenated(batches in proptest::collection::vec(arb_batch(any_codec()), 0..4)) {
        let mut buf = Vec::new();
        for b in &batches {
            b.encode(&mut buf).unwrap();
        }
        let got: Vec<RecordBatch> = RecordBatches::new(Bytes::from(buf))
            .collect::<Result<_, _>>()
            .unwrap();
        prop_assert_eq!(got, batches);
    }

    /// Garbage behind a valid header and CRC reaches the record parser and
    /// every decompressor: typed errors, no panic, bounded memory.
    #[test]
    fn record_garbage_body_never_panics(
        codec in 0u8..8,
        count in prop_oneof![0i32..4, any::<i32>()],
        body in proptest::collection::vec(any::<u8>(), 0..300),
    ) {
        let bytes = batch_around(codec, count, &body);
        let opts = DecodeOptions { max_decompressed_size: 1 << 20 };
        let owned = RecordBatch::decode_with(&bytes, &opts);
        // The view fails where the owned decode fails (at construction or
        // while iterating), with the same error, and yields the same records.
        let viewed = RecordBatchView::decode_with(&bytes, &opts)
            .and_then(|v| v.records().map(|r| r.map(|r| r.to_record())).collect::<Result<Vec<_>, _>>());
        match owned {
            Ok(b) => prop_assert_eq!(viewed.unwrap(), b.records),
            Err(e) => prop_assert_eq!(viewed.unwrap_err(), e),
        }
    }

    #[test]
    fn record_garbage_never_panics(data in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = RecordBatch::decode(&data);
        if let Ok(v) = RecordBatchView::decode(&data) {
            let _ = v.records().count();
        }
        let _ = RecordBatches::new(Bytes::from(data)).count();
    }
}
