//! The Schema Registry frame decoder (`kafka_schema_registry::wire`) on
//! arbitrary bytes: `read_frame` and `read_message_indexes` never panic,
//! a decoded payload is the input's tail, decoded indexes are bounded by
//! the input, and the canonical encoding of decoded indexes reads back the
//! same.
//!
//! Input: byte 0 → bit 0: a header form (the header is the next
//! `byte 1` bytes), bit 1: with message indexes; the rest is the record.
//!
//! The checks: `kafka_proto_fuzz::targets::registry_frame`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kafka_proto_fuzz::targets::registry_frame::run(data));
