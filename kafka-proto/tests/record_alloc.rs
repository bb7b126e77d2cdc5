//! Decoding hostile batches stays within the configured memory bound: a
//! counting global allocator records the peak of live heap bytes while each
//! bomb is decoded. One test function, so nothing else allocates meanwhile.
//!
//! Run with `--features all-compression` to cover every codec.
#![allow(unsafe_code)] // the counting allocator only

#[path = "batch_around.rs"]
mod batch_around;

use batch_around::{COMPRESSING_CODECS, batch_around};
use bytes::Bytes;
use kafka_proto::DecodeErrorKind;
use kafka_proto::record::{Compression, DecodeOptions, Record, RecordBatch, RecordBatchBuilder};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator; only counts sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Relaxed) + layout.size();
        PEAK.fetch_max(live, Relaxed);
        // SAFETY: same layout contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Relaxed);
        // SAFETY: `ptr` came from `alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            let live = LIVE.fetch_add(new_size - layout.size(), Relaxed) + new_size - layout.size();
            PEAK.fetch_max(live, Relaxed);
        } else {
            LIVE.fetch_sub(layout.size() - new_size, Relaxed);
        }
        // SAFETY: same contract as `GlobalAlloc::realloc`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const LIMIT: usize = 1 << 20;

/// Peak heap growth (bytes) while decoding `bytes`, and the error kind.
fn peak_while_decoding(bytes: &[u8]) -> (usize, DecodeErrorKind) {
    let opts = DecodeOptions {
        max_decompressed_size: LIMIT,
    };
    let base = LIVE.load(Relaxed);
    PEAK.store(base, Relaxed);
    let kind = RecordBatch::decode_with(bytes, &opts).unwrap_err().kind;
    (PEAK.load(Relaxed) - base, kind)
}

#[test]
fn record_hostile_inputs_stay_within_memory_bound() {
    // Uncompressed: a count of i32::MAX records over 16 bytes.
    let (peak, kind) = peak_while_decoding(&batch_around(0, i32::MAX, &[0; 16]));
    assert!(matches!(kind, DecodeErrorKind::InvalidLength(_)));
    assert!(peak < 64 * 1024, "count bomb peak {peak}");

    // Bombs: 32 MiB of zeros per codec against a 1 MiB limit. Allowed: the
    // limit, the Vec's doubling slack, the codec's own window/block buffers.
    let bound = 4 * LIMIT + (8 << 20);
    for codec in COMPRESSING_CODECS {
        if !codec.is_supported() {
            continue;
        }
        let mut b = RecordBatchBuilder::new(codec);
        b.push(Record::new(0, None, Some(Bytes::from(vec![0u8; 32 << 20]))));
        let bomb = b.build().encode_to_vec().unwrap();
        let (peak, kind) = peak_while_decoding(&bomb);
        assert_eq!(kind, DecodeErrorKind::DecompressedTooLarge { limit: LIMIT });
        assert!(peak < bound, "{codec:?} bomb peak {peak} bytes");
        println!("{codec:?}: bomb {} bytes, peak {peak} bytes", bomb.len());
    }

    // A compressed section just under the limit whose count claims as many
    // minimal records as its bytes could hold: the decoder may not reserve
    // ~15x the section for `Record`s it never parses. Ceiling: the section
    // itself (decompressed once, plus doubling slack) and as much again.
    for codec in [Compression::Gzip, Compression::Zstd] {
        if !codec.is_supported() {
            continue;
        }
        let section = LIMIT - 1024;
        let mut b = RecordBatchBuilder::new(codec);
        b.push(Record::new(0, None, Some(Bytes::from(vec![0u8; section]))));
        let mut bomb = b.build().encode_to_vec().unwrap();
        let claimed = (section / 7) as i32;
        bomb[57..61].copy_from_slice(&claimed.to_be_bytes());
        let crc = crc32c::crc32c(&bomb[21..]);
        bomb[17..21].copy_from_slice(&crc.to_be_bytes());
        let (peak, _) = peak_while_decoding(&bomb);
        let ceiling = 4 * section + (1 << 20);
        assert!(
            peak < ceiling,
            "{codec:?}: count {claimed} over {section} decompressed bytes: peak {peak} bytes (ceiling {ceiling})"
        );
        println!(
            "{codec:?}: count bomb of {} bytes, peak {peak} bytes",
            bomb.len()
        );
    }

    // A message array whose count claims a million elements over 1 MiB of
    // bytes that fail at the first element: reserved memory follows the
    // bytes, not the count times the element's size.
    {
        use kafka_proto::Message;
        use kafka_proto::messages::FetchResponse;
        let mut body = Vec::new();
        body.extend_from_slice(&0i32.to_be_bytes()); // throttle_time_ms
        body.extend_from_slice(&1_000_000i32.to_be_bytes()); // responses count
        body.extend_from_slice(&vec![0xff; 1 << 20]); // a null topic name: invalid
        let base = LIVE.load(Relaxed);
        PEAK.store(base, Relaxed);
        let err = FetchResponse::decode(&body, 4).unwrap_err();
        let peak = PEAK.load(Relaxed) - base;
        assert_eq!(err.kind, DecodeErrorKind::UnexpectedNull);
        let ceiling = (1 << 20) + 64 * 1024;
        assert!(
            peak < ceiling,
            "array count bomb: peak {peak} bytes over {} input bytes",
            body.len()
        );
        println!(
            "array count bomb of {} bytes, peak {peak} bytes",
            body.len()
        );
    }

    // Lying headers: raw snappy announcing 1 GiB, zstd announcing a 128 MiB window.
    if Compression::Snappy.is_supported() {
        let (peak, _) = peak_while_decoding(&batch_around(
            2,
            1,
            &[0x80, 0x80, 0x80, 0x80, 0x04, 0, 0, 0],
        ));
        assert!(peak < 64 * 1024, "snappy header peak {peak}");
    }
    if Compression::Zstd.is_supported() {
        let (peak, kind) = peak_while_decoding(&batch_around(
            4,
            1,
            &[0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x88, 0, 0],
        ));
        assert_eq!(kind, DecodeErrorKind::DecompressedTooLarge { limit: LIMIT });
        assert!(peak < 64 * 1024, "zstd window peak {peak}");
    }
}
