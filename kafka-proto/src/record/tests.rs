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
