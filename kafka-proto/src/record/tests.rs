//! Unit tests of the record module; the property tests live in
//! `tests/record_*.rs`.

use super::*;
use crate::error::DecodeErrorKind;
use bytes::{Bytes, BytesMut};

fn sample() -> RecordBatch {
    let mut b = RecordBatchBuilder::new(Compression::None)
        .producer(1000, 5, 7)
        .transactional(true);
    b.push(
        Record::new(
            1_700_000_000_000,
            Some(Bytes::from("k1")),
            Some(Bytes::from("v1")),
        )
        .with_header("h", Some(Bytes::from("x"))),
    )
    .push(Record::new(1_699_999_999_990, None, None));
    b.build()
}

#[test]
fn record_crc32c_check_value() {
    assert_eq!(crc32c::crc32c(b"123456789"), 0xE306_9283);
}

#[test]
fn record_round_trip_and_layout() {
    let batch = sample();
    let bytes = batch.encode_to_vec().unwrap();
    assert_eq!(bytes.len(), batch.encoded_size().unwrap());
    assert_eq!(bytes[16], 2);
    assert_eq!(
        i32::from_be_bytes(bytes[8..12].try_into().unwrap()) as usize,
        bytes.len() - 12
    );
    let crc = u32::from_be_bytes(bytes[17..21].try_into().unwrap());
    assert_eq!(crc, crc32c::crc32c(&bytes[21..]));
    let back = RecordBatch::decode(&bytes).unwrap();
    assert_eq!(back, batch);
    assert_eq!(back.records[1].timestamp, 1_699_999_999_990);
    assert_eq!(back.encode_to_vec().unwrap(), bytes);
    let fast = RecordBatch::decode_bytes(&Bytes::from(bytes.clone())).unwrap();
    assert_eq!(fast, batch);
}

#[test]
fn record_sequence_wrap() {
    assert_eq!(increment_sequence(i32::MAX, 1), 0);
    assert_eq!(increment_sequence(i32::MAX - 2, 5), 2);
    assert_eq!(increment_sequence(0, 0), 0);
    assert_eq!(decrement_sequence(2, 5), i32::MAX - 2);
    let mut b = sample();
    b.base_sequence = i32::MAX;
    assert_eq!(b.last_sequence(), 0);
}

#[test]
fn record_crc_mismatch_detected() {
    let mut bytes = sample().encode_to_vec().unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    let e = RecordBatch::decode(&bytes).unwrap_err();
    assert!(matches!(e.kind, DecodeErrorKind::CrcMismatch { .. }), "{e}");
}

#[test]
fn record_bad_magic_and_trailing() {
    let mut bytes = sample().encode_to_vec().unwrap();
    bytes.push(0);
    let e = RecordBatch::decode(&bytes).unwrap_err();
    assert_eq!(e.kind, DecodeErrorKind::TrailingBytes(1));
    bytes.pop();
    bytes[16] = 1;
    assert!(matches!(
        RecordBatch::decode(&bytes).unwrap_err().kind,
        DecodeErrorKind::InvalidValue(_)
    ));
}

#[test]
fn record_control_batch() {
    let m = RecordBatch::control(10, 1000, 5, 123, ControlRecord::abort(9));
    let bytes = m.encode_to_vec().unwrap();
    let back = RecordBatch::decode(&bytes).unwrap();
    assert!(back.is_control && back.is_transactional);
    assert_eq!(back.base_sequence, -1);
    assert_eq!(
        back.control_record().unwrap().unwrap(),
        ControlRecord::abort(9)
    );
    assert_eq!(back.records[0].offset, 10);
}

#[test]
fn record_unsupported_codec_id() {
    let mut batch = sample();
    batch.records.clear();
    batch.last_offset_delta = -1;
    let mut bytes = batch.encode_to_vec().unwrap();
    bytes[22] |= 0x07; // codec 7
    let crc = crc32c::crc32c(&bytes[21..]);
    bytes[17..21].copy_from_slice(&crc.to_be_bytes());
    assert_eq!(
        RecordBatch::decode(&bytes).unwrap_err().kind,
        DecodeErrorKind::UnsupportedCompression(7)
    );
}

#[cfg(not(feature = "gzip"))]
#[test]
fn record_codec_not_compiled_in() {
    let mut batch = sample();
    batch.compression = Compression::Gzip;
    assert!(batch.encode_to_vec().is_err());
    let mut bytes = sample().encode_to_vec().unwrap();
    bytes[22] |= 0x01;
    let crc = crc32c::crc32c(&bytes[21..]);
    bytes[17..21].copy_from_slice(&crc.to_be_bytes());
    assert_eq!(
        RecordBatch::decode(&bytes).unwrap_err().kind,
        DecodeErrorKind::UnsupportedCompression(1)
    );
}

#[test]
fn record_batches_iterator_stops_at_truncation() {
    let mut buf = BytesMut::new();
    sample().encode(&mut buf).unwrap();
    sample().encode(&mut buf).unwrap();
    let one = buf.len() / 2;
    for cut in 0..buf.len() {
        let data = buf.clone().freeze().slice(..cut);
        let mut it = RecordBatches::new(data);
        let got: Vec<_> = it.by_ref().collect();
        assert!(got.iter().all(Result::is_ok), "cut {cut}");
        assert_eq!(got.len(), cut / one);
        assert_eq!(it.truncated_bytes(), cut % one);
    }
}

#[test]
fn record_hostile_count_does_not_allocate() {
    let mut batch = sample();
    batch.records.clear();
    let mut bytes = batch.encode_to_vec().unwrap();
    bytes[57..61].copy_from_slice(&i32::MAX.to_be_bytes());
    let crc = crc32c::crc32c(&bytes[21..]);
    bytes[17..21].copy_from_slice(&crc.to_be_bytes());
    assert!(matches!(
        RecordBatch::decode(&bytes).unwrap_err().kind,
        DecodeErrorKind::InvalidLength(_)
    ));
}

/// The view yields the same records as the owned decode.
fn assert_view_matches(bytes: &[u8]) {
    let owned = RecordBatch::decode(bytes).unwrap();
    let view = RecordBatchView::decode(bytes).unwrap();
    assert_eq!(view.len(), owned.records.len());
    assert_eq!(
        (view.base_offset, view.compression, view.is_transactional),
        (owned.base_offset, owned.compression, owned.is_transactional)
    );
    assert_eq!(
        (view.producer_id, view.base_sequence, view.last_offset()),
        (owned.producer_id, owned.base_sequence, owned.last_offset())
    );
    let records: Vec<Record> = view.records().map(|r| r.unwrap().to_record()).collect();
    assert_eq!(records, owned.records);
}

#[test]
fn record_view_matches_owned_decode() {
    let bytes = sample().encode_to_vec().unwrap();
    assert_view_matches(&bytes);
    let view = RecordBatchView::decode(&bytes).unwrap();
    let first = view.records().next().unwrap().unwrap();
    assert_eq!(first.key, Some(&b"k1"[..]));
    let h: Vec<_> = first.headers.iter().collect();
    assert_eq!(
        h,
        [RecordHeaderRef {
            key: "h",
            value: Some(&b"x"[..])
        }]
    );
    assert_eq!(view.records_bytes(), &bytes[BATCH_HEADER_LEN..]);
    assert_eq!(view.records().count(), 2);
    let empty = RecordBatch::default().encode_to_vec().unwrap();
    let view = RecordBatchView::decode(&empty).unwrap();
    assert!(view.is_empty() && view.records().next().is_none());
    for c in [
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        if c.is_supported() {
            let mut b = sample();
            b.compression = c;
            assert_view_matches(&b.encode_to_vec().unwrap());
        }
    }
}

#[test]
fn record_view_rejects_like_owned_decode() {
    let mut bytes = sample().encode_to_vec().unwrap();
    let n = bytes.len();
    bytes[n - 1] ^= 1;
    let view_err = RecordBatchView::decode(&bytes).unwrap_err();
    assert!(matches!(view_err.kind, DecodeErrorKind::CrcMismatch { .. }));
    assert_eq!(view_err, RecordBatch::decode(&bytes).unwrap_err());
    assert_eq!(
        RecordBatchView::decode(&bytes[..n - 1]).unwrap_err(),
        RecordBatch::decode(&bytes[..n - 1]).unwrap_err()
    );
}

#[test]
fn record_view_reports_malformed_records_then_ends() {
    // A CRC-valid batch whose count says 1 but holds 2 records: the record is
    // yielded, then the trailing bytes, then nothing.
    let mut bytes = sample().encode_to_vec().unwrap();
    bytes[57..61].copy_from_slice(&1i32.to_be_bytes());
    let crc = crc32c::crc32c(&bytes[ATTRIBUTES_OFFSET..]);
    bytes[CRC_OFFSET..ATTRIBUTES_OFFSET].copy_from_slice(&crc.to_be_bytes());
    let view = RecordBatchView::decode(&bytes).unwrap();
    let mut it = view.records();
    assert!(it.next().unwrap().is_ok());
    let e = it.next().unwrap().unwrap_err();
    assert!(matches!(e.kind, DecodeErrorKind::TrailingBytes(_)));
    assert!(it.next().is_none());
    assert_eq!(RecordBatch::decode(&bytes).unwrap_err(), e);
    // A record length past the section: an error, then the end.
    bytes[BATCH_HEADER_LEN] = 0x7e; // zigzag 63
    let crc = crc32c::crc32c(&bytes[ATTRIBUTES_OFFSET..]);
    bytes[CRC_OFFSET..ATTRIBUTES_OFFSET].copy_from_slice(&crc.to_be_bytes());
    let view = RecordBatchView::decode(&bytes).unwrap();
    let mut it = view.records();
    assert!(it.next().unwrap().is_err());
    assert!(it.next().is_none());
}

#[test]
fn append_record_writes_the_records_as_the_batch_encoder_does() {
    let mut batch = sample();
    batch.records[1].headers.push(RecordHeader {
        key: "null".into(),
        value: None,
    });
    batch.records.push(Record::new(
        batch.base_timestamp + (1 << 40),
        Some(Bytes::from(vec![7; 300])),
        Some(Bytes::from(vec![9; 20_000])),
    ));
    for (i, r) in batch.records.iter_mut().enumerate() {
        r.offset = i as i64;
    }
    batch.last_offset_delta = batch.records.len() as i32 - 1;
    let encoded = batch.encode_to_vec().unwrap();
    let mut out = BytesMut::new();
    for r in &batch.records {
        let parts = RecordParts {
            timestamp_delta: r.timestamp.wrapping_sub(batch.base_timestamp),
            offset_delta: (r.offset - batch.base_offset) as i32,
            key: r.key.as_deref(),
            value: r.value.as_deref(),
            headers: &r.headers[..],
        };
        let size = record_size(&parts);
        assert_eq!(record_len(&parts), size.total);
        let before = out.len();
        append_record(&mut out, &parts, size);
        assert_eq!(out.len() - before, size.total);
    }
    assert_eq!(&out[..], &encoded[BATCH_HEADER_LEN..]);
}

/// Compression defaults to none; a codec's id maps back to it.
#[test]
fn compression_defaults_to_none_and_ids_round_trip() {
    use crate::record::Compression;
    assert_eq!(Compression::default(), Compression::None);
    assert_eq!(
        Compression::from_id(Compression::Zstd.id()),
        Some(Compression::Zstd)
    );
}

/// LZ4's id in the batch attributes is 3.
#[test]
fn lz4s_attribute_id_is_three() {
    use crate::record::Compression;
    assert_eq!(Compression::Lz4.id(), 3);
}

/// Known compression ids map to their codec; an unknown one to `None`.
#[test]
fn unknown_compression_ids_are_refused() {
    use crate::record::Compression;
    assert_eq!(Compression::from_id(1), Some(Compression::Gzip));
    assert_eq!(Compression::from_id(5), None);
}

/// Codecs carry Java's `compression.type` names.
#[test]
fn codecs_have_javas_names() {
    use crate::record::Compression;
    assert_eq!(Compression::Snappy.name(), "snappy");
}

/// A codec not compiled in is unsupported, and encoding with it fails.
#[test]
fn encoding_with_an_absent_codec_fails() {
    use crate::record::{Compression, RecordBatch};
    assert!(Compression::None.is_supported());
    // Encoding with a codec that is not compiled in fails.
    let batch = RecordBatch {
        compression: Compression::Gzip,
        ..RecordBatch::default()
    };
    assert_eq!(
        batch.encode_to_vec().is_ok(),
        Compression::Gzip.is_supported()
    );
}

/// LogAppendTime sets attribute bit 3 and survives a round trip.
#[test]
fn log_append_time_sets_attribute_bit_three() {
    use crate::record::{RecordBatch, TimestampType};
    let batch = RecordBatch {
        timestamp_type: TimestampType::LogAppend,
        ..RecordBatch::default()
    };
    assert_eq!(batch.attributes() & 0x08, 0x08);
    let back = RecordBatch::decode(&batch.encode_to_vec().unwrap()).unwrap();
    assert_eq!(back.timestamp_type, TimestampType::LogAppend);
}

/// A header is a key and a nullable value.
#[test]
fn a_header_is_a_key_and_a_nullable_value() {
    use crate::record::{Record, RecordHeader};
    use bytes::Bytes;
    let r = Record::new(0, None, None).with_header("h", Some(Bytes::from("v")));
    let expected = RecordHeader {
        key: "h".into(),
        value: Some(Bytes::from("v")),
    };
    assert_eq!(r.headers, [expected]);
}

/// Headers are kept in the order added, null values included.
#[test]
fn headers_keep_their_order() {
    use crate::record::Record;
    use bytes::Bytes;
    let r = Record::new(0, None, None)
        .with_header("a", None)
        .with_header("b", Some(Bytes::from("1")));
    let keys: Vec<&str> = r.headers.iter().map(|h| h.key.as_str()).collect();
    assert_eq!(keys, ["a", "b"]);
}

/// Decoding caps the decompressed size, by default and as set.
#[test]
fn decode_options_cap_the_decompressed_size() {
    use crate::record::{DEFAULT_MAX_DECOMPRESSED_SIZE, DecodeOptions, RecordBatch};
    assert_eq!(
        DecodeOptions::default().max_decompressed_size,
        DEFAULT_MAX_DECOMPRESSED_SIZE
    );
    let opts = DecodeOptions {
        max_decompressed_size: 1 << 20,
    };
    let bytes = RecordBatch::default().encode_to_vec().unwrap();
    assert!(RecordBatch::decode_with(&bytes, &opts).is_ok());
}

/// Sequences wrap from `i32::MAX` to 0.
#[test]
fn increment_sequence_wraps_to_zero() {
    use crate::record::increment_sequence;
    assert_eq!(increment_sequence(5, 3), 8);
    assert_eq!(increment_sequence(i32::MAX, 1), 0);
    assert_eq!(increment_sequence(i32::MAX - 1, 5), 3);
}

/// Sequences below 0 wrap to `i32::MAX`.
#[test]
fn decrement_sequence_wraps_to_max() {
    use crate::record::decrement_sequence;
    assert_eq!(decrement_sequence(0, 1), i32::MAX);
}

/// `reserve_bytes` grows a buffer's capacity.
#[test]
fn reserve_bytes_grows_the_capacity() {
    use crate::record::BatchBuf;
    let mut v: Vec<u8> = Vec::new();
    v.reserve_bytes(100);
    assert!(BatchBuf::capacity(&v) >= 100);
}

/// `grow_zeroed` appends zeros.
#[test]
fn grow_zeroed_appends_zeros() {
    use crate::record::BatchBuf;
    let mut v = vec![1u8];
    v.grow_zeroed(2);
    assert_eq!(v, [1, 0, 0]);
}

/// `BytesMut`'s capacity is at least what it was built with.
#[test]
fn capacity_of_bytes_mut_is_its_allocation() {
    use crate::record::BatchBuf;
    use bytes::BytesMut;
    let b = BytesMut::with_capacity(64);
    assert!(BatchBuf::capacity(&b) >= 64);
}

/// `truncate_to` keeps the prefix.
#[test]
fn truncate_to_keeps_the_prefix() {
    use crate::record::BatchBuf;
    let mut v = vec![1u8, 2, 3];
    v.truncate_to(1);
    assert_eq!(v, [1]);
}

/// The attributes combine the codec id and the transactional bit (0x10).
#[test]
fn attributes_combine_codec_and_transactional_bit() {
    use crate::record::{Compression, RecordBatch};
    let b = RecordBatch {
        compression: Compression::Gzip,
        is_transactional: true,
        ..RecordBatch::default()
    };
    assert_eq!(b.attributes(), 0x10 | 1);
}

/// An empty batch from `base_offset` and `base_sequence`, its last record
/// `last_offset_delta` past them.
fn batch_with_deltas(
    base_offset: i64,
    base_sequence: i32,
    last_offset_delta: i32,
) -> crate::record::RecordBatch {
    crate::record::RecordBatch {
        base_offset,
        base_sequence,
        last_offset_delta,
        ..crate::record::RecordBatch::default()
    }
}

/// The last offset is the base offset plus the last delta.
#[test]
fn last_offset_is_base_plus_delta() {
    let b = batch_with_deltas(100, -1, 9);
    assert_eq!(b.last_offset(), 109);
}

/// The next offset follows the last one.
#[test]
fn next_offset_follows_the_last() {
    let b = batch_with_deltas(100, -1, 9);
    assert_eq!(b.next_offset(), 110);
}

/// The last sequence is the base plus the last delta; -1 without a producer.
#[test]
fn last_sequence_is_base_plus_delta_or_none() {
    let b = batch_with_deltas(0, 10, 4);
    assert_eq!(b.last_sequence(), 14);
    assert_eq!(crate::record::RecordBatch::default().last_sequence(), -1);
}

/// A control batch is a transactional control batch of one record.
#[test]
fn a_control_batch_is_transactional_with_one_record() {
    use crate::record::{ControlRecord, RecordBatch};
    let abort = RecordBatch::control(7, 1000, 2, 1_700_000_000_000, ControlRecord::abort(0));
    assert!(abort.is_control && abort.is_transactional);
    assert_eq!(
        (abort.base_offset, abort.records.len(), abort.base_sequence),
        (7, 1, -1)
    );
}

/// `control_record` reads a marker's record, and nothing from a data batch.
#[test]
fn control_record_reads_the_marker() {
    use crate::record::{ControlRecord, RecordBatch};
    assert!(RecordBatch::default().control_record().is_none());
    let marker = RecordBatch::control(0, 1000, 2, 0, ControlRecord::commit(1));
    assert_eq!(
        marker.control_record().unwrap().unwrap(),
        ControlRecord::commit(1)
    );
}

/// The encoded size is the header alone for an empty batch, and the encoding's length otherwise.
#[test]
fn encoded_size_counts_header_and_records() {
    use crate::record::{BATCH_HEADER_LEN, Compression, Record, RecordBatch, RecordBatchBuilder};
    use bytes::Bytes;
    assert_eq!(
        RecordBatch::default().encoded_size().unwrap(),
        BATCH_HEADER_LEN
    );
    let mut b = RecordBatchBuilder::new(Compression::None);
    b.push(Record::new(0, None, Some(Bytes::from("value"))));
    let batch = b.build();
    assert_eq!(
        batch.encoded_size().unwrap(),
        batch.encode_to_vec().unwrap().len()
    );
}

/// Encoding appends after what the buffer already holds.
#[test]
fn encode_appends_after_what_the_buffer_holds() {
    use crate::record::{Compression, Record, RecordBatch, RecordBatchBuilder};
    use bytes::{Bytes, BytesMut};
    let mut b = RecordBatchBuilder::new(Compression::None);
    b.push(Record::new(0, None, Some(Bytes::from("v"))));
    let mut out = BytesMut::from(&b"prefix"[..]);
    b.batch().encode(&mut out).unwrap();
    assert_eq!(RecordBatch::decode(&out[6..]).unwrap(), *b.batch());
    // An offset more than i32::MAX past the base fails and leaves `out` as it was.
    let mut bad = b.build();
    bad.records[0].offset = i64::from(i32::MAX) + 1;
    let len = out.len();
    assert!(bad.encode(&mut out).is_err());
    assert_eq!(out.len(), len);
}

/// `encode_to_vec` writes `encoded_size` bytes that decode back.
#[test]
fn encode_to_vec_round_trips_a_marker() {
    use crate::record::{ControlRecord, RecordBatch};
    let batch = RecordBatch::control(0, 1, 0, 0, ControlRecord::commit(0));
    let v = batch.encode_to_vec().unwrap();
    assert_eq!(v.len(), batch.encoded_size().unwrap());
    assert_eq!(RecordBatch::decode(&v).unwrap(), batch);
}

/// `producer` sets the id, epoch and base sequence.
#[test]
fn producer_sets_id_epoch_and_base_sequence() {
    use crate::record::{Compression, RecordBatchBuilder};
    let b = RecordBatchBuilder::new(Compression::None).producer(42, 3, 100);
    let batch = b.batch();
    assert_eq!(
        (batch.producer_id, batch.producer_epoch, batch.base_sequence),
        (42, 3, 100)
    );
}

/// `transactional` sets the batch's flag.
#[test]
fn transactional_sets_the_flag() {
    use crate::record::{Compression, RecordBatchBuilder};
    let b = RecordBatchBuilder::new(Compression::None).transactional(true);
    assert!(b.batch().is_transactional);
}

/// `base_offset` renumbers the records from it.
#[test]
fn base_offset_renumbers_the_records() {
    use crate::record::{Compression, Record, RecordBatchBuilder};
    let mut b = RecordBatchBuilder::new(Compression::None);
    b.push(Record::new(0, None, None))
        .push(Record::new(0, None, None));
    let b = b.base_offset(10);
    let offsets: Vec<i64> = b.batch().records.iter().map(|r| r.offset).collect();
    assert_eq!((offsets, b.batch().last_offset()), (vec![10, 11], 11));
}

/// `partition_leader_epoch` sets the batch's epoch.
#[test]
fn partition_leader_epoch_is_set() {
    use crate::record::{Compression, RecordBatchBuilder};
    let b = RecordBatchBuilder::new(Compression::None).partition_leader_epoch(4);
    assert_eq!(b.batch().partition_leader_epoch, 4);
}

/// `timestamp_type` sets the batch's timestamp type.
#[test]
fn timestamp_type_is_set() {
    use crate::record::{Compression, RecordBatchBuilder, TimestampType};
    let b = RecordBatchBuilder::new(Compression::None).timestamp_type(TimestampType::LogAppend);
    assert_eq!(b.batch().timestamp_type, TimestampType::LogAppend);
}

/// `push` gives records consecutive offsets, whatever they carried.
#[test]
fn push_gives_consecutive_offsets() {
    use crate::record::{Compression, Record, RecordBatchBuilder};
    let mut b = RecordBatchBuilder::new(Compression::None);
    let mut late = Record::new(3, None, None);
    late.offset = 99; // overwritten
    b.push(Record::new(5, None, None)).push(late);
    let batch = b.batch();
    assert_eq!((batch.records[1].offset, batch.last_offset_delta), (1, 1));
    assert_eq!((batch.base_timestamp, batch.max_timestamp), (5, 5));
}

/// `len` counts the records pushed.
#[test]
fn len_counts_records() {
    use crate::record::{Compression, Record, RecordBatchBuilder};
    let mut b = RecordBatchBuilder::new(Compression::None);
    b.push(Record::new(0, None, None));
    assert_eq!(b.len(), 1);
}

/// A builder is empty until a record is pushed.
#[test]
fn is_empty_until_a_push() {
    use crate::record::{Compression, Record, RecordBatchBuilder};
    let mut b = RecordBatchBuilder::new(Compression::None);
    assert!(b.is_empty());
    b.push(Record::new(0, None, None));
    assert!(!b.is_empty());
}

/// The builder's encoded size is the length of its encoding.
#[test]
fn the_builders_encoded_size_matches_its_encoding() {
    use crate::record::{BATCH_HEADER_LEN, Compression, Record, RecordBatchBuilder};
    use bytes::Bytes;
    let mut b = RecordBatchBuilder::new(Compression::None);
    assert_eq!(b.encoded_size().unwrap(), BATCH_HEADER_LEN);
    b.push(Record::new(0, None, Some(Bytes::from("v"))));
    let mut out = Vec::new();
    b.encode(&mut out).unwrap();
    assert_eq!(b.encoded_size().unwrap(), out.len());
}

/// `batch` shows the batch being built.
#[test]
fn batch_borrows_the_batch_being_built() {
    use crate::record::{Compression, Record, RecordBatchBuilder};
    let mut b = RecordBatchBuilder::new(Compression::None).producer(1, 0, 0);
    b.push(Record::new(0, None, None));
    assert_eq!((b.batch().records.len(), b.batch().last_sequence()), (1, 0));
}

/// The builder's encoding decodes back to its records.
#[test]
fn the_builders_encoding_decodes_back() {
    use crate::record::{Compression, Record, RecordBatch, RecordBatchBuilder};
    use bytes::Bytes;
    let mut b = RecordBatchBuilder::new(Compression::None);
    b.push(Record::new(0, Some(Bytes::from("k")), None));
    let mut out = Vec::new();
    b.encode(&mut out).unwrap();
    let back = RecordBatch::decode(&out).unwrap();
    assert_eq!(back.records[0].key.as_deref(), Some(&b"k"[..]));
}

/// `build` returns the batch with every record.
#[test]
fn build_returns_the_batch() {
    use crate::record::{Compression, Record, RecordBatchBuilder};
    let mut b = RecordBatchBuilder::new(Compression::None);
    b.push(Record::new(0, None, None))
        .push(Record::new(1, None, None));
    let batch = b.build();
    assert_eq!(
        (
            batch.records.len(),
            batch.last_offset_delta,
            batch.max_timestamp
        ),
        (2, 1, 1)
    );
}
