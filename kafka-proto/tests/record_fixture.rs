//! The encoder against an independent, byte-by-byte Python construction of the
//! same batch (`tests/fixtures/make_record_batch_fixture.py`, CRC-32C
//! implemented there from the table definition).

use bytes::{Bytes, BytesMut};
use kafka_proto::record::{Compression, Record, RecordBatch, RecordBatchBuilder};

const HEX: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/fixtures/record_batch_v2.hex"
));
const CRC: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/fixtures/record_batch_v2.crc"
));

fn unhex(s: &str) -> Vec<u8> {
    let s = s.trim();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn fixture_batch() -> RecordBatchBuilder {
    let mut b = RecordBatchBuilder::new(Compression::None)
        .producer(1000, 5, 7)
        .transactional(true);
    b.push(
        Record::new(
            1_700_000_000_000,
            Some(Bytes::from_static(b"key-0")),
            Some(Bytes::from_static(b"value-0")),
        )
        .with_header("trace", Some(Bytes::from_static(b"abc"))),
    )
    .push(Record::new(
        1_700_000_000_005,
        Some(Bytes::from_static(b"key-1")),
        Some(Bytes::from_static(b"value-1")),
    ));
    b
}

#[test]
fn record_crc32c_known_check_value() {
    assert_eq!(crc32c::crc32c(b"123456789"), 0xE306_9283);
}

#[test]
fn record_fixture_encodes_byte_identical() {
    let expected = unhex(HEX);
    let mut out = BytesMut::new();
    fixture_batch().encode(&mut out).unwrap();
    assert_eq!(hex(&out), hex(&expected));
    let crc = u32::from_str_radix(CRC.trim().trim_start_matches("0x"), 16).unwrap();
    assert_eq!(u32::from_be_bytes(out[17..21].try_into().unwrap()), crc);
    assert_eq!(crc32c::crc32c(&expected[21..]), crc);
}

#[test]
fn record_fixture_decodes() {
    let bytes = unhex(HEX);
    let batch = RecordBatch::decode(&bytes).unwrap();
    assert_eq!(batch, fixture_batch().build());
    assert_eq!(
        (batch.producer_id, batch.producer_epoch, batch.base_sequence),
        (1000, 5, 7)
    );
    assert!(batch.is_transactional && !batch.is_control);
    assert_eq!(batch.partition_leader_epoch, -1);
    assert_eq!(batch.last_offset_delta, 1);
    assert_eq!(batch.max_timestamp, 1_700_000_000_005);
    assert_eq!(batch.records[0].headers[0].key, "trace");
    assert_eq!(batch.records[1].offset, 1);
    assert_eq!(batch.last_sequence(), 8);
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
