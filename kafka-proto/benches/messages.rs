//! Message-level hot paths of the codec: Produce request encode and Fetch
//! response decode, each in two shapes — few partitions with large record
//! payloads (dominated by the copy) and many partitions with small payloads
//! (dominated by the per-field work of the message description).
//!
//! `cargo bench -p kafka-proto --bench messages -- --warm-up-time 1 --measurement-time 3`

use bytes::{Bytes, BytesMut};
use criterion::{Criterion, Throughput, black_box, criterion_group, criterion_main};
use kafka_proto::Message;
use kafka_proto::messages::{
    FetchResponse, FetchResponsePartitionData, FetchResponseTopic, ProduceRequest,
    ProduceRequestPartitionProduceData, ProduceRequestTopicProduceData,
};

/// (name, topics, partitions per topic, payload bytes per partition)
const SHAPES: [(&str, usize, usize, usize); 2] =
    [("6x16KiB", 1, 6, 16 * 1024), ("500x100B", 50, 10, 100)];

fn produce_request(topics: usize, partitions: usize, payload: usize) -> ProduceRequest {
    ProduceRequest {
        transactional_id: Some("bench-txn".into()),
        acks: -1,
        timeout_ms: 30_000,
        topic_data: (0..topics)
            .map(|t| ProduceRequestTopicProduceData {
                name: format!("topic-{t}"),
                partition_data: (0..partitions)
                    .map(|p| ProduceRequestPartitionProduceData {
                        index: p as i32,
                        records: Some(Bytes::from(vec![7u8; payload])),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

fn fetch_response(topics: usize, partitions: usize, payload: usize) -> FetchResponse {
    FetchResponse {
        session_id: 7,
        responses: (0..topics)
            .map(|t| FetchResponseTopic {
                topic_id: [t as u8 + 1; 16],
                partitions: (0..partitions)
                    .map(|p| FetchResponsePartitionData {
                        partition_index: p as i32,
                        high_watermark: 1_000_000,
                        last_stable_offset: 1_000_000,
                        log_start_offset: 0,
                        records: Some(Bytes::from(vec![9u8; payload])),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

fn produce_encode(c: &mut Criterion) {
    for version in [9i16, 11] {
        for (name, topics, partitions, payload) in SHAPES {
            let req = produce_request(topics, partitions, payload);
            let n = req.encode_to_vec(version).unwrap().len();
            let mut g = c.benchmark_group(format!("produce_request_encode/v{version}/{name}"));
            g.throughput(Throughput::Bytes(n as u64));
            g.bench_function("encode", |b| {
                let mut out = BytesMut::with_capacity(n);
                b.iter(|| {
                    out.clear();
                    black_box(&req).encode(&mut out, version).unwrap();
                    black_box(&out);
                })
            });
            g.finish();
        }
    }
}

fn fetch_decode(c: &mut Criterion) {
    for version in [13i16, 16] {
        for (name, topics, partitions, payload) in SHAPES {
            let bytes = fetch_response(topics, partitions, payload)
                .encode_to_vec(version)
                .unwrap();
            let mut g = c.benchmark_group(format!("fetch_response_decode/v{version}/{name}"));
            g.throughput(Throughput::Bytes(bytes.len() as u64));
            g.bench_function("decode", |b| {
                b.iter(|| black_box(FetchResponse::decode(black_box(&bytes), version).unwrap()))
            });
            g.finish();
        }
    }
}

criterion_group!(benches, produce_encode, fetch_decode);
criterion_main!(benches);
