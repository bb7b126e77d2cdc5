//! Every response type: `Message::decode` (body mode) and `decode_response_frame`
//! (frame mode) on arbitrary bytes; whatever decodes must re-encode and decode to
//! an equal value. Input layout: see `kafka_proto_fuzz` (key, mode|version, rest).

/// Runs one input through the target's checks; panics on a failed one.
pub fn run(data: &[u8]) {
    if let Some((api, mode, rest)) = super::super::select(data) {
        (api.response)(mode, rest);
    }
}
