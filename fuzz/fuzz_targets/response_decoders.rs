//! Every response type: `Message::decode` (body mode) and `decode_response_frame`
//! (frame mode) on arbitrary bytes; whatever decodes must re-encode and decode to
//! an equal value. Input layout: see `kafka_proto_fuzz` (key, mode|version, rest).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some((api, mode, rest)) = kafka_proto_fuzz::select(data) {
        (api.response)(mode, rest);
    }
});
