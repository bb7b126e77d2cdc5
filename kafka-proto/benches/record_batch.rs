//! RecordBatch v2 encode/decode throughput against a plain memcpy of the same
//! number of bytes (uncompressed; 1,000 records of 100 B and of 1 KiB values).
//!
//! `cargo bench -p kafka-proto --bench record_batch -- --warm-up-time 1 --measurement-time 3`

use bytes::{Bytes, BytesMut};
use criterion::{Criterion, Throughput, black_box, criterion_group, criterion_main};
use kafka_proto::record::{RecordBatch, RecordBatchView};

mod common;
use common::{RECORDS, batch, same_page_offset_dst};

/// Benches a `copy_from_slice` of `src`: the baseline.
fn memcpy(g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>, src: &[u8]) {
    g.bench_function("memcpy", |b| {
        let (mut dst, off) = same_page_offset_dst(src);
        let n = src.len();
        b.iter(|| {
            dst[off..off + n].copy_from_slice(black_box(src));
            black_box(&mut dst);
        })
    });
}

fn bench(c: &mut Criterion) {
    for (name, size) in [("100B", 100usize), ("1KiB", 1024)] {
        let batch = batch(size);
        let encoded = Bytes::from(batch.encode_to_vec().unwrap());
        let n = encoded.len();
        let mut g = c.benchmark_group(format!("record_batch/{RECORDS}x{name}"));
        g.throughput(Throughput::Bytes(n as u64));

        memcpy(&mut g, &encoded);

        g.bench_function("crc32c_only", |b| {
            b.iter(|| black_box(crc32c::crc32c(black_box(&encoded[21..]))))
        });

        g.bench_function("encode", |b| {
            let mut out = BytesMut::with_capacity(n);
            b.iter(|| {
                out.clear();
                black_box(&batch).encode(&mut out).unwrap();
                black_box(&out);
            })
        });

        // What a consumer does: decode, then read every record's key and
        // value (here: their lengths).
        g.bench_function("decode_view", |b| {
            b.iter(|| {
                let view = RecordBatchView::decode(black_box(&encoded[..])).unwrap();
                let mut n = 0usize;
                for r in view.records() {
                    let r = r.unwrap();
                    n += r.key.map_or(0, <[u8]>::len) + r.value.map_or(0, <[u8]>::len);
                }
                black_box(n)
            })
        });

        g.bench_function("decode_bytes", |b| {
            b.iter(|| {
                let batch = RecordBatch::decode_bytes(black_box(&encoded)).unwrap();
                let mut n = 0usize;
                for r in &batch.records {
                    n += r.key.as_ref().map_or(0, Bytes::len)
                        + r.value.as_ref().map_or(0, Bytes::len);
                }
                black_box(n)
            })
        });

        g.bench_function("decode_slice", |b| {
            b.iter(|| black_box(RecordBatch::decode(black_box(&encoded[..])).unwrap()))
        });
        g.finish();
    }
}

/// The CRC-32C alone against memcpy on the same buffers: the bound on how
/// close encode and decode (which both checksum the whole batch) can get.
fn crc(c: &mut Criterion) {
    for (name, n) in [("100KiB", 100 * 1024usize), ("1MiB", 1024 * 1024)] {
        let src: Vec<u8> = (0..n).map(|i| (i * 7 + i / 251) as u8).collect();
        let mut g = c.benchmark_group(format!("crc32c/{name}"));
        g.throughput(Throughput::Bytes(n as u64));
        memcpy(&mut g, &src);
        g.bench_function("crc32c", |b| {
            b.iter(|| black_box(crc32c::crc32c(black_box(&src[..]))))
        });
        g.finish();
    }
}

criterion_group!(benches, bench, crc);
criterion_main!(benches);
