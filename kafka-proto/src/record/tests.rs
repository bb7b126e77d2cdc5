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
