//! The Schema Registry frame decoder (`kafka_schema_registry::wire`) on
//! arbitrary bytes: `read_frame` and `read_message_indexes` never panic,
//! a decoded payload is the input's tail, decoded indexes are bounded by
//! the input, and the canonical encoding of decoded indexes reads back the
//! same.
//!
//! Input: byte 0 → bit 0: a header form (the header is the next
//! `byte 1` bytes), bit 1: with message indexes; the rest is the record.

use kafka_schema_registry::wire::{read_frame, read_message_indexes, write_message_indexes};

fn check_indexes(bytes: &[u8]) {
    if let Ok((indexes, rest)) = read_message_indexes(bytes) {
        assert!(
            indexes.len() <= bytes.len().max(1),
            "indexes beyond the input"
        );
        assert!(bytes.ends_with(rest));
        assert!(indexes.iter().all(|&i| i >= 0));
        let mut canonical = Vec::new();
        write_message_indexes(&indexes, &mut canonical);
        let (again, tail) = read_message_indexes(&canonical).expect("canonical indexes read back");
        assert_eq!(again, indexes);
        assert!(tail.is_empty());
    }
}

/// Runs one input through the target's checks; panics on a failed one.
pub fn run(data: &[u8]) {
    let [mode, header_len, rest @ ..] = data else {
        return;
    };
    let with_indexes = mode & 2 != 0;
    let (header, record) = if mode & 1 != 0 {
        let n = usize::from(*header_len).min(rest.len());
        (Some(&rest[..n]), &rest[n..])
    } else {
        (None, rest)
    };
    check_indexes(rest);
    if let Ok(frame) = read_frame(record, header, with_indexes) {
        assert!(
            record.ends_with(frame.payload),
            "the payload is the record's tail"
        );
        assert_eq!(frame.indexes.is_some(), with_indexes);
        if header.is_some() {
            assert_eq!(
                frame.payload, record,
                "a header frame leaves the payload bare"
            );
        }
    }
}
