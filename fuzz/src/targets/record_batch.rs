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

use bytes::Bytes;
use kafka_proto::record::{
    ATTRIBUTES_OFFSET, BATCH_HEADER_LEN, CRC_OFFSET, DecodeOptions, LOG_OVERHEAD, RecordBatch,
    RecordBatches,
};

/// Patches the CRC of every complete batch in `data` (or of `data` as one batch).
fn fix_crcs(data: &mut [u8], concatenated: bool) {
    if !concatenated {
        if data.len() >= BATCH_HEADER_LEN {
            let crc = crc32c::crc32c(&data[ATTRIBUTES_OFFSET..]);
            data[CRC_OFFSET..ATTRIBUTES_OFFSET].copy_from_slice(&crc.to_be_bytes());
        }
        return;
    }
    let mut pos = 0;
    while data.len() - pos >= BATCH_HEADER_LEN {
        let len = i32::from_be_bytes(data[pos + 8..pos + 12].try_into().unwrap());
        let Ok(len) = usize::try_from(len) else {
            return;
        };
        let total = LOG_OVERHEAD + len;
        if len < BATCH_HEADER_LEN - LOG_OVERHEAD || total > data.len() - pos {
            return;
        }
        let batch = &mut data[pos..pos + total];
        let crc = crc32c::crc32c(&batch[ATTRIBUTES_OFFSET..]);
        batch[CRC_OFFSET..ATTRIBUTES_OFFSET].copy_from_slice(&crc.to_be_bytes());
        pos += total;
    }
}

/// Re-encodes a decoded batch and decodes it again; exercises the accessors.
fn check(batch: &RecordBatch, opts: &DecodeOptions) {
    let _ = batch.attributes();
    let _ = batch.last_offset();
    let _ = batch.next_offset();
    let _ = batch.last_sequence();
    if let Some(Err(e)) = batch.control_record() {
        let _ = e.to_string();
    }
    let enc = batch
        .encode_to_vec()
        .unwrap_or_else(|e| panic!("decoded batch does not re-encode: {e}\n{batch:?}"));
    assert!(enc.len() >= BATCH_HEADER_LEN);
    let back = RecordBatch::decode_with(&enc, opts)
        .unwrap_or_else(|e| panic!("re-encoded batch does not decode: {e}\n{batch:?}"));
    assert_eq!(&back, batch);
}

/// Runs one input through the target's checks; panics on a failed one.
pub fn run(data: &[u8]) {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let opts = DecodeOptions {
        max_decompressed_size: 256 << (flags & 7),
    };
    let concatenated = flags & 0x10 != 0;
    let mut buf = rest.to_vec();
    if flags & 0x08 != 0 {
        fix_crcs(&mut buf, concatenated);
    }
    let input = Bytes::from(buf);
    if concatenated {
        let mut it = RecordBatches::with_options(input.clone(), opts);
        let mut failed = false;
        for r in it.by_ref() {
            match r {
                Ok(batch) => check(&batch, &opts),
                Err(e) => {
                    let _ = e.to_string();
                    failed = true;
                }
            }
        }
        if !failed {
            assert_eq!(it.position() + it.truncated_bytes(), input.len());
        }
    } else {
        match RecordBatch::decode_bytes_with(&input, &opts) {
            Ok(batch) => check(&batch, &opts),
            Err(e) => {
                let _ = e.to_string();
            }
        }
    }
}
