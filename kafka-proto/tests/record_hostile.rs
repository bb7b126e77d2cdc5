//! Hostile inputs: lying counts and lengths, trailing bytes, and a
//! decompression bomb per codec. Each must fail with a typed error.
//!
//! Run with `--features all-compression` to cover every codec.

use crate::batch_around::{COMPRESSING_CODECS, batch_around};
use bytes::Bytes;
use kafka_proto::DecodeErrorKind;
use kafka_proto::record::{Compression, DecodeOptions, Record, RecordBatch, RecordBatchBuilder};

fn kind(bytes: &[u8]) -> DecodeErrorKind {
    RecordBatch::decode(bytes).unwrap_err().kind
}

fn zigzag(v: i32) -> Vec<u8> {
    let mut out = Vec::new();
    let mut z = ((v << 1) ^ (v >> 31)) as u32;
    while z >= 0x80 {
        out.push((z as u8) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
    out
}

/// One valid record body: attributes, deltas, key, value, headers.
fn record_body(key: &[u8], value: &[u8]) -> Vec<u8> {
    let mut b = vec![0, 0, 0];
    b.extend(zigzag(key.len() as i32));
    b.extend_from_slice(key);
    b.extend(zigzag(value.len() as i32));
    b.extend_from_slice(value);
    b.push(0);
    b
}

fn framed(body: &[u8]) -> Vec<u8> {
    let mut r = zigzag(body.len() as i32);
    r.extend_from_slice(body);
    r
}

#[test]
fn record_valid_hand_built_record_decodes() {
    let bytes = batch_around(0, 1, &framed(&record_body(b"k", b"v")));
    let b = RecordBatch::decode(&bytes).unwrap();
    assert_eq!(b.records[0].key.as_deref(), Some(&b"k"[..]));
}

#[test]
fn record_huge_count_rejected_before_allocation() {
    let body = framed(&record_body(b"k", b"v"));
    for count in [i32::MAX, 1 << 20, 2, -1, i32::MIN] {
        let k = kind(&batch_around(0, count, &body));
        assert!(
            matches!(
                k,
                DecodeErrorKind::InvalidLength(_) | DecodeErrorKind::Truncated { .. }
            ),
            "count {count}: {k:?}"
        );
    }
}

#[test]
fn record_huge_or_negative_record_length() {
    for len in [i32::MAX, 1_000_000, -2, -1, i32::MIN] {
        let mut body = zigzag(len);
        body.extend(record_body(b"k", b"v"));
        assert!(
            matches!(
                kind(&batch_around(0, 1, &body)),
                DecodeErrorKind::InvalidLength(_)
            ),
            "len {len}"
        );
    }
}

#[test]
fn record_huge_key_length_stays_inside_record() {
    // The key claims more bytes than the record has, though the batch has them.
    let mut rec = vec![0, 0, 0];
    rec.extend(zigzag(i32::MAX));
    rec.extend_from_slice(&[0; 8]);
    let mut body = framed(&rec);
    body.extend_from_slice(&[0; 64]);
    assert!(matches!(
        kind(&batch_around(0, 1, &body)),
        DecodeErrorKind::Truncated { .. }
    ));
    // A negative length other than -1.
    let mut rec = vec![0, 0, 0];
    rec.extend(zigzag(-5));
    rec.extend_from_slice(&[0; 4]);
    assert!(matches!(
        kind(&batch_around(0, 1, &framed(&rec))),
        DecodeErrorKind::InvalidLength(-5)
    ));
}

#[test]
fn record_huge_header_count() {
    let mut rec = vec![0, 0, 0, 1, 1];
    rec.extend(zigzag(i32::MAX));
    rec.extend_from_slice(&[0; 6]);
    assert!(matches!(
        kind(&batch_around(0, 1, &framed(&rec))),
        DecodeErrorKind::InvalidLength(_)
    ));
}

#[test]
fn record_invalid_header_key_utf8_and_null() {
    let mut rec = vec![0, 0, 0, 1, 1, 2];
    rec.extend([2, 0xff, 1]);
    assert_eq!(
        kind(&batch_around(0, 1, &framed(&rec))),
        DecodeErrorKind::InvalidUtf8
    );
    let rec = vec![0, 0, 0, 1, 1, 2, 1, 1];
    assert_eq!(
        kind(&batch_around(0, 1, &framed(&rec))),
        DecodeErrorKind::UnexpectedNull
    );
}

#[test]
fn record_overlong_varint() {
    let body = [0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0, 0, 0, 0, 0, 0, 0];
    assert_eq!(
        kind(&batch_around(0, 1, &body)),
        DecodeErrorKind::VarintTooLong
    );
}

#[test]
fn record_trailing_bytes_inside_record_and_batch() {
    let mut rec = record_body(b"k", b"v");
    rec.push(0xaa);
    assert_eq!(
        kind(&batch_around(0, 1, &framed(&rec))),
        DecodeErrorKind::TrailingBytes(1)
    );
    let mut body = framed(&record_body(b"k", b"v"));
    body.extend_from_slice(&[1, 2]);
    assert_eq!(
        kind(&batch_around(0, 1, &body)),
        DecodeErrorKind::TrailingBytes(2)
    );
}

#[test]
fn record_batch_length_too_small() {
    let mut bytes = batch_around(0, 0, &[]);
    bytes[8..12].copy_from_slice(&10i32.to_be_bytes());
    assert!(matches!(kind(&bytes), DecodeErrorKind::InvalidLength(10)));
    bytes[8..12].copy_from_slice(&(-1i32).to_be_bytes());
    assert!(matches!(kind(&bytes), DecodeErrorKind::InvalidLength(-1)));
}

// ------------------------------------------------------------ bombs

const LIMIT: usize = 256 * 1024;

fn opts() -> DecodeOptions {
    DecodeOptions {
        max_decompressed_size: LIMIT,
    }
}

/// A real batch of `n` zero bytes of values compressed with `codec`.
#[allow(dead_code)]
fn zero_bomb(codec: Compression, n: usize) -> Vec<u8> {
    let mut b = RecordBatchBuilder::new(codec);
    b.push(Record::new(0, None, Some(Bytes::from(vec![0u8; n]))));
    b.build().encode_to_vec().unwrap()
}

#[allow(dead_code)]
fn assert_too_large(bytes: &[u8]) {
    let e = RecordBatch::decode_with(bytes, &opts()).unwrap_err();
    assert_eq!(
        e.kind,
        DecodeErrorKind::DecompressedTooLarge { limit: LIMIT },
        "{e}"
    );
}

#[test]
fn record_limit_allows_what_fits() {
    for codec in COMPRESSING_CODECS {
        if !codec.is_supported() {
            continue;
        }
        let bytes = zero_bomb(codec, LIMIT / 2);
        assert!(bytes.len() < LIMIT / 8, "{codec:?} compresses zeros");
        let b = RecordBatch::decode_with(&bytes, &opts()).unwrap();
        assert_eq!(b.records[0].value.as_ref().unwrap().len(), LIMIT / 2);
    }
}

#[cfg(feature = "gzip")]
#[test]
fn record_gzip_bomb() {
    assert_too_large(&zero_bomb(Compression::Gzip, 4 * LIMIT));
}

#[cfg(feature = "lz4")]
#[test]
fn record_lz4_bomb() {
    assert_too_large(&zero_bomb(Compression::Lz4, 4 * LIMIT));
}

#[cfg(feature = "zstd")]
#[test]
fn record_zstd_bomb() {
    assert_too_large(&zero_bomb(Compression::Zstd, 4 * LIMIT));
}

#[cfg(feature = "zstd")]
#[test]
fn record_zstd_huge_window_rejected() {
    // Frame header: magic, FHD = 0 (window descriptor present), window
    // descriptor 0x88: 2^(10+17) = 128 MiB window, then garbage.
    let body = [0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x88, 0, 0, 0, 0];
    assert_too_large(&batch_around(4, 1, &body));
    // Single segment announcing a 2^40 content size.
    let mut body = vec![0x28, 0xb5, 0x2f, 0xfd, 0xe0];
    body.extend_from_slice(&(1u64 << 40).to_le_bytes());
    assert_too_large(&batch_around(4, 1, &body));
}

#[cfg(feature = "snappy")]
#[test]
fn record_snappy_bomb_xerial_and_raw() {
    let bytes = zero_bomb(Compression::Snappy, 4 * LIMIT);
    // Java's framing: magic, version 1, compatible 1, 32 KiB blocks.
    assert_eq!(
        &bytes[61..77],
        &[
            0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1
        ]
    );
    assert_too_large(&bytes);
    // A raw block announcing 1 GiB: rejected before allocating.
    let mut body = vec![0x80, 0x80, 0x80, 0x80, 0x04];
    body.extend_from_slice(&[0; 16]);
    assert_too_large(&batch_around(2, 1, &body));
    // Announcing far more than 16 bytes can expand to, within the limit.
    let mut body = vec![0x80, 0x80, 0x08]; // 128 KiB
    body.extend_from_slice(&[0; 16]);
    assert!(matches!(
        RecordBatch::decode_with(&batch_around(2, 1, &body), &opts())
            .unwrap_err()
            .kind,
        DecodeErrorKind::Decompression(_)
    ));
    // A xerial block whose length runs past the input.
    let mut body = bytes[61..77].to_vec();
    body.extend_from_slice(&i32::MAX.to_be_bytes());
    body.extend_from_slice(&[0; 8]);
    assert!(matches!(
        kind(&batch_around(2, 1, &body)),
        DecodeErrorKind::Decompression(_)
    ));
}

#[cfg(feature = "snappy")]
#[test]
fn record_snappy_raw_block_accepted() {
    // librdkafka-style: a single raw snappy block without xerial framing.
    let rec = framed(&record_body(b"key", b"value"));
    let raw = snap::raw::Encoder::new().compress_vec(&rec).unwrap();
    let b = RecordBatch::decode(&batch_around(2, 1, &raw)).unwrap();
    assert_eq!(b.records[0].value.as_deref(), Some(&b"value"[..]));
    assert_eq!(b.compression, Compression::Snappy);
}

#[test]
fn record_codecs_report_unsupported_when_not_compiled_in() {
    for codec in COMPRESSING_CODECS {
        if codec.is_supported() {
            continue;
        }
        let bytes = batch_around(codec.id(), 0, &[1, 2, 3]);
        assert_eq!(
            kind(&bytes),
            DecodeErrorKind::UnsupportedCompression(codec.id())
        );
    }
}
