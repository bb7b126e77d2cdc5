//! Every request type: `Message::decode` (body mode) and `decode_request_frame`
//! (frame mode, version from the header) on arbitrary bytes; whatever decodes must
//! re-encode and decode to an equal value. Input layout: see `kafka_proto_fuzz`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some((api, mode, rest)) = kafka_proto_fuzz::select(data) {
        (api.request)(mode, rest);
    }
});
