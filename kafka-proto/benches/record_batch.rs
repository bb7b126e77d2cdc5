//! RecordBatch v2 encode/decode throughput against a plain memcpy of the same
//! number of bytes (uncompressed; 1,000 records of 100 B and of 1 KiB values).
//!
//! `cargo bench -p kafka-proto --bench record_batch -- --warm-up-time 1 --measurement-time 3`

use bytes::{Bytes, BytesMut};
use criterion::{Criterion, Throughput, black_box, criterion_group, criterion_main};
use kafka_proto::record::{Compression, Record, RecordBatch, RecordBatchBuilder, RecordBatchView};

const RECORDS: usize = 1000;

fn batch(value_size: usize) -> RecordBatch {
    let mut b = RecordBatchBuilder::new(Compression::None)
        .producer(1000, 5, 0)
        .transactional(true);
    for i in 0..RECORDS {
        let key = Bytes::from(format!("key-{i:06}"));
        let value = Bytes::from(vec![(i % 251) as u8; value_size]);
        b.push(Record::new(
            1_700_000_000_000 + i as i64,
            Some(key),
            Some(value),
        ));
    }
    b.build()
}

fn bench(c: &mut Criterion) {
    for (name, size) in [("100B", 100usize), ("1KiB", 1024)] {
        let batch = batch(size);
        let encoded = Bytes::from(batch.encode_to_vec().unwrap());
        let n = encoded.len();
        let mut g = c.benchmark_group(format!("record_batch/{RECORDS}x{name}"));
        g.throughput(Throughput::Bytes(n as u64));

        g.bench_function("memcpy", |b| {
            let mut dst = vec![0u8; n];
            b.iter(|| {
                dst.copy_from_slice(black_box(&encoded[..]));
                black_box(&mut dst);
            })
        });

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

criterion_group!(benches, bench);
criterion_main!(benches);
