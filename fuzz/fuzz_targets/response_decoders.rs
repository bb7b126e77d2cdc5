//! Every response type: `Message::decode` (body mode) and `decode_response_frame`
//! (frame mode) on arbitrary bytes; whatever decodes must re-encode and decode to
//! an equal value. Input layout: see `kafka_proto_fuzz` (key, mode|version, rest).
//!
//! The checks: `kafka_proto_fuzz::targets::response_decoders`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kafka_proto_fuzz::targets::response_decoders::run(data));
