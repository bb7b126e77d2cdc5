//! `kafka_client::http::ResponseParser` on arbitrary bytes delivered in
//! arbitrary pieces: never panics, gives the same outcome as a one-shot
//! parse of the same bytes, and never holds a body beyond its limit.
//!
//! Input: byte 0 → body limit (`16 * b`); byte 1 → piece-size seed; the
//! rest is what the connection delivers.
//!
//! The checks: `kafka_proto_fuzz::targets::http_response`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kafka_proto_fuzz::targets::http_response::run(data));
