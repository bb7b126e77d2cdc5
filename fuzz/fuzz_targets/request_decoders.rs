//! Every request type: `Message::decode` (body mode) and `decode_request_frame`
//! (frame mode, version from the header) on arbitrary bytes; whatever decodes must
//! re-encode and decode to an equal value. Input layout: see `kafka_proto_fuzz`.
//!
//! The checks: `kafka_proto_fuzz::targets::request_decoders`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kafka_proto_fuzz::targets::request_decoders::run(data));
