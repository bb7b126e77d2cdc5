//! Bytes written by sink-state format version 1 must stay readable by every
//! later version of the crate.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use kafka_sink::codec::{StateDecodeError, StringCodec, StringSetCodec};
use kafka_sink::{SinkState, StateSerializer, TransactionHolder};

type State = SinkState<String, BTreeSet<String>>;

fn fixture_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sink_state_v1.hex")
}

/// The state the fixture was written from (Kafka-like ids and context).
fn expected() -> State {
    SinkState {
        current: Some(TransactionHolder::new(
            "job-sink-7".to_string(),
            1_700_000_003_000,
        )),
        pending: BTreeMap::from([
            (
                41,
                TransactionHolder::new("job-sink-5".to_string(), 1_700_000_001_000),
            ),
            (
                42,
                TransactionHolder::new("job-sink-6".to_string(), 1_700_000_002_000),
            ),
        ]),
        context: Some(
            [
                "job-sink-5",
                "job-sink-6",
                "job-sink-7",
                "job-sink-8",
                "job-sink-9",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        ),
    }
}

fn serializer() -> StateSerializer<StringCodec, StringSetCodec> {
    StateSerializer::new(StringCodec, StringSetCodec)
}

fn from_hex(text: &str) -> Vec<u8> {
    let digits: Vec<u8> = text
        .bytes()
        .filter(|b| b.is_ascii_hexdigit())
        .map(|b| (b as char).to_digit(16).unwrap() as u8)
        .collect();
    assert_eq!(digits.len() % 2, 0, "odd number of hex digits");
    digits.chunks(2).map(|p| p[0] << 4 | p[1]).collect()
}

#[test]
fn decodes_format_version_1_fixture() {
    let text = std::fs::read_to_string(fixture_path()).expect("fixture present");
    let bytes = from_hex(&text);
    assert_eq!(&bytes[..4], b"K2PC");
    assert_eq!(bytes[4], 1, "the fixture is format version 1");
    assert_eq!(
        serializer()
            .decode::<String, BTreeSet<String>>(&bytes)
            .unwrap(),
        expected()
    );
}

#[test]
fn version_1_writer_still_produces_the_fixture() {
    // Holds only while this build writes version 1; when the version is
    // bumped, delete this test and keep the one above.
    if StateSerializer::<StringCodec, StringSetCodec>::VERSION != 1 {
        return;
    }
    let text = std::fs::read_to_string(fixture_path()).expect("fixture present");
    assert_eq!(serializer().encode(&expected()), from_hex(&text));
}

#[test]
fn fixture_with_trailing_byte_or_future_version_is_rejected() {
    let mut bytes = from_hex(&std::fs::read_to_string(fixture_path()).unwrap());
    bytes.push(0);
    assert_eq!(
        serializer().decode::<String, BTreeSet<String>>(&bytes),
        Err(StateDecodeError::TrailingBytes { count: 1 })
    );
    bytes.pop();
    bytes[4] = 9;
    assert_eq!(
        serializer().decode::<String, BTreeSet<String>>(&bytes),
        Err(StateDecodeError::UnsupportedVersion {
            version: 9,
            supported: 1
        })
    );
}
