//! `FrameDecoder` on an arbitrary byte stream delivered in chunks, with a small
//! maximum frame size, checked against a one-shot reference splitter: the same
//! frames in the same order, an error exactly when the reference meets a negative
//! or oversized length, and no buffer growth beyond what a bounded frame needs.
//!
//! Input: byte 0 → max frame size (`4 * b`, 0..=1020); byte 1 → chunk-size seed;
//! the rest is the stream.
//!
//! The checks: `kafka_proto_fuzz::targets::frame_decoder`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kafka_proto_fuzz::targets::frame_decoder::run(data));
