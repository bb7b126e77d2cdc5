//! libFuzzer's entry to `kafka_proto_fuzz::targets::registry_frame`, where what the
//! target checks and how it reads its input are documented.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kafka_proto_fuzz::targets::registry_frame::run(data));
