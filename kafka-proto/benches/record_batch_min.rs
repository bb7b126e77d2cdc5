//! Low-noise cross-check of `record_batch.rs` for a shared, loaded machine:
//! the same cases, each timed as many short samples interleaved round-robin,
//! reporting the minimum and the median time per call. Other processes only
//! ever add time, so the minimum is the stable figure; the median shows the
//! load.
//!
//! `cargo bench -p kafka-proto --bench record_batch_min`

use bytes::{Bytes, BytesMut};
use kafka_proto::record::{RecordBatch, RecordBatchView};
use std::hint::black_box;
use std::time::Instant;

mod common;
use common::{RECORDS, batch, same_page_offset_dst};
/// Wall time spent sampling each group, all its cases interleaved: long
/// enough for the minimum to catch quiet moments of the other processes.
const GROUP_SECONDS: f64 = 6.0;

type Case<'a> = (&'static str, Box<dyn FnMut() + 'a>);

fn main() {
    // `cargo bench` passes `--bench`; a name filter may follow.
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    for (name, size) in [("100B", 100usize), ("1KiB", 1024)] {
        let batch = batch(size);
        let encoded = Bytes::from(batch.encode_to_vec().unwrap());
        let n = encoded.len();
        // Same 4 KiB page offset as the source: see `record_batch.rs`.
        let (mut dst, off) = same_page_offset_dst(&encoded);
        let mut out = BytesMut::with_capacity(n);
        let src = &encoded[..];
        let mut cases: Vec<Case<'_>> = vec![
            (
                "memcpy",
                Box::new(|| {
                    dst[off..off + n].copy_from_slice(black_box(src));
                    black_box(&mut dst);
                }),
            ),
            (
                "crc32c_only",
                Box::new(|| {
                    black_box(crc32c::crc32c(black_box(&src[21..])));
                }),
            ),
            (
                "encode",
                Box::new(|| {
                    out.clear();
                    black_box(&batch).encode(&mut out).unwrap();
                    black_box(&out);
                }),
            ),
            (
                "decode_view",
                Box::new(|| {
                    let view = RecordBatchView::decode(black_box(src)).unwrap();
                    let mut n = 0usize;
                    for r in view.records() {
                        let r = r.unwrap();
                        n += r.key.map_or(0, <[u8]>::len) + r.value.map_or(0, <[u8]>::len);
                    }
                    black_box(n);
                }),
            ),
            (
                "decode_bytes",
                Box::new(|| {
                    let batch = RecordBatch::decode_bytes(black_box(&encoded)).unwrap();
                    let mut n = 0usize;
                    for r in &batch.records {
                        n += r.key.as_ref().map_or(0, Bytes::len)
                            + r.value.as_ref().map_or(0, Bytes::len);
                    }
                    black_box(n);
                }),
            ),
        ];
        let group = format!("record_batch/{RECORDS}x{name}");
        cases.retain(|(c, _)| {
            filter
                .as_ref()
                .is_none_or(|f| format!("{group}/{c}").contains(f.as_str()))
        });
        if cases.is_empty() {
            continue;
        }
        // Calls per sample: about 200 µs of the slowest case.
        let per = |f: &mut Box<dyn FnMut() + '_>| {
            let t = Instant::now();
            for _ in 0..10 {
                f();
            }
            t.elapsed().as_secs_f64() / 10.0
        };
        let iters: Vec<usize> = cases
            .iter_mut()
            .map(|(_, f)| ((200e-6 / per(f)).ceil() as usize).max(1))
            .collect();
        let mut samples = vec![Vec::new(); cases.len()];
        let t0 = Instant::now();
        while t0.elapsed().as_secs_f64() < GROUP_SECONDS {
            for (i, (_, f)) in cases.iter_mut().enumerate() {
                let t = Instant::now();
                for _ in 0..iters[i] {
                    f();
                }
                samples[i].push(t.elapsed().as_secs_f64() / iters[i] as f64);
            }
        }
        let memcpy_min = cases
            .iter()
            .position(|(c, _)| *c == "memcpy")
            .map(|i| samples[i].iter().cloned().fold(f64::MAX, f64::min));
        println!(
            "{group} ({n} bytes), {} samples of ~200 µs per case:",
            samples[0].len()
        );
        for (i, (c, _)) in cases.iter().enumerate() {
            let s = &mut samples[i];
            s.sort_by(f64::total_cmp);
            let (min, med) = (s[0], s[s.len() / 2]);
            let ratio = memcpy_min.map_or(String::new(), |m| format!(", {:.2}× memcpy", m / min));
            println!(
                "  {c:13} min {:8.2} µs ({:6.2} GiB/s{ratio}), median {:8.2} µs",
                min * 1e6,
                n as f64 / min / (1u64 << 30) as f64,
                med * 1e6
            );
        }
    }
}
