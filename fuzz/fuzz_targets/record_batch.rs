//! RecordBatch v2 decoding, including decompression with a small
//! `max_decompressed_size`; a decoded batch must re-encode (compressing again
//! with its codec) and decode to an equal batch.
//!
//! Input: byte 0 holds flags, the rest is the batch data.
//! - bits 0–2: `max_decompressed_size = 256 << n` (256 B … 32 KiB);
//! - bit 3: recompute the CRC-32C of each batch before decoding, so mutations
//!   reach the codecs and the record parser instead of failing the CRC check;
//! - bit 4: decode the data as concatenated batches with `RecordBatches` (as in
//!   a Fetch response) instead of one batch with `RecordBatch::decode_bytes_with`.
//!
//! The checks: `kafka_proto_fuzz::targets::record_batch`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kafka_proto_fuzz::targets::record_batch::run(data));
