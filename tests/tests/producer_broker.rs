//! The producer against a real Kafka 4.4 broker (the harness's shared
//! cluster): records written by our producer read back by the Java console
//! consumer and by our reader, one test per codec; acks=0 and acks=1; a send
//! to a topic that does not exist.

use bytes::Bytes;
use kafka_client::{Cluster, ClusterConfig};
use kafka_consumer::{Reader, ReaderConfig};
use kafka_producer::{Acks, Producer, ProducerConfig, ProducerRecord};
use kafka_proto::record::Compression;
use kafka_testcontainers::{IsolationLevel, KafkaCluster};
use kafka_testcontainers::{SharedKafka, recent_timestamp, unique_name};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

fn record(topic: &str, i: usize) -> ProducerRecord {
    let mut r = ProducerRecord::new(topic)
        .key(format!("key-{}", i % 17))
        .value(format!("value-{i}-{}", "x".repeat(i % 50)))
        .timestamp(recent_timestamp() + i as i64)
        .header("seq", Some(i.to_string()));
    if i.is_multiple_of(5) {
        r = r.header("empty", None::<Bytes>);
    }
    r
}

async fn produce_and_check(kafka: &KafkaCluster, compression: Compression, level: Option<i32>) {
    let topic = unique_name(&format!("produce-{}", compression.name()));
    kafka.create_topic(&topic, 3, 1).await.unwrap();
    let config = ProducerConfig::builder(&kafka.bootstrap())
        .compression(compression)
        .compression_level(level)
        .linger(Duration::from_millis(5))
        .batch_size(4096)
        .build()
        .unwrap();
    let producer = Producer::connect(config).await.unwrap();
    const N: usize = 2000;
    let futures: Vec<_> = (0..N).map(|i| producer.send(record(&topic, i))).collect();
    let mut offsets = BTreeMap::new();
    for (i, f) in futures.into_iter().enumerate() {
        let m = f
            .await
            .unwrap_or_else(|e| panic!("{compression:?} record {i}: {e}"));
        assert_eq!(m.timestamp, recent_timestamp() + i as i64);
        assert!(
            offsets
                .insert((m.partition, m.offset.unwrap()), i)
                .is_none()
        );
    }
    let metrics = producer.metrics();
    assert_eq!(metrics.records_sent, N as u64);
    assert!(metrics.batches_sent < N as u64 / 4, "batched: {metrics:?}");
    producer.close(Duration::from_secs(10)).await.unwrap();

    let got = kafka
        .console_consume(
            &topic,
            IsolationLevel::ReadUncommitted,
            N,
            // The Java tool's own bound: it stops after N records; its JVM
            // alone can take tens of seconds to start on a loaded machine.
            Duration::from_secs(90),
        )
        .await
        .unwrap();
    assert_eq!(got.len(), N, "{compression:?}");
    for c in &got {
        let i = offsets[&(c.partition, c.offset)];
        let want = record(&topic, i);
        assert_eq!(
            c.key.as_deref(),
            want.key.as_deref(),
            "{compression:?} key {i}"
        );
        assert_eq!(
            c.value.as_deref(),
            want.value.as_deref(),
            "{compression:?} value {i}"
        );
        let headers: Vec<(String, Vec<u8>)> = want
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), v.as_deref().unwrap_or_default().to_vec()))
            .collect();
        assert_eq!(c.headers, headers);
    }
    // Our read_committed reader returns the same records as the Java console
    // consumer — and also the create timestamps we sent, which the console
    // consumer does not print.
    let cluster = Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
        .await
        .expect("connect");
    let mut reader = Reader::new(cluster, ReaderConfig::default());
    let ours = reader.read_to_end(&topic, &[0, 1, 2]).await.unwrap();
    assert_eq!(ours.len(), N, "{compression:?}: our reader");
    let java: BTreeSet<(i32, i64)> = got.iter().map(|c| (c.partition, c.offset)).collect();
    for r in &ours {
        assert!(java.contains(&(r.partition, r.offset)), "{compression:?}");
        let i = offsets[&(r.partition, r.offset)];
        let want = record(&topic, i);
        assert_eq!(r.key, want.key, "{compression:?} key {i}");
        assert_eq!(r.value, want.value, "{compression:?} value {i}");
        assert_eq!(
            r.timestamp,
            recent_timestamp() + i as i64,
            "{compression:?} ts {i}"
        );
        let headers: Vec<(String, Option<Bytes>)> = r
            .headers
            .iter()
            .map(|h| (h.key.clone(), h.value.clone()))
            .collect();
        assert_eq!(headers, want.headers, "{compression:?} headers {i}");
    }
    // Same key, same partition (per-key order) — and per-partition offsets ascend with i.
    let mut last: BTreeMap<i32, usize> = BTreeMap::new();
    for ((p, _), i) in &offsets {
        if let Some(prev) = last.insert(*p, *i) {
            assert!(prev < *i, "partition {p}: order");
        }
    }
}

/// The shared Kafka 4.4 cluster (other tests use it too: names are unique).
async fn kafka() -> &'static KafkaCluster {
    SharedKafka::Kafka44Tv2
        .cluster()
        .await
        .expect("shared Kafka 4.4")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn produce_read_back_uncompressed() {
    produce_and_check(kafka().await, Compression::None, None).await;
}

/// Invariant: batches gzip-compressed at a level other than the default
/// (`compression.gzip.level=9`) are accepted by the broker and read back
/// by Java's console consumer, every record once.
#[cfg(feature = "gzip")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn produce_read_back_gzip_at_level_9() {
    produce_and_check(kafka().await, Compression::Gzip, Some(9)).await;
}

#[cfg(feature = "gzip")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn produce_read_back_gzip() {
    produce_and_check(kafka().await, Compression::Gzip, None).await;
}

#[cfg(feature = "snappy")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn produce_read_back_snappy() {
    produce_and_check(kafka().await, Compression::Snappy, None).await;
}

#[cfg(feature = "lz4")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn produce_read_back_lz4() {
    produce_and_check(kafka().await, Compression::Lz4, None).await;
}

#[cfg(feature = "zstd")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn produce_read_back_zstd() {
    produce_and_check(kafka().await, Compression::Zstd, None).await;
}

/// Invariant: a compressed batch counts `batch.size` in estimated
/// compressed bytes (Java's `CompressionRatioEstimator`), and whatever the
/// estimate, no batch grows past what the broker takes: records that
/// compress a hundredfold, then records that do not compress at all
/// (random bytes, sent while the estimate still expects a hundredfold
/// gain: their first batch fills to the cap on uncompressed bytes), are
/// each acknowledged and read back once, in order, with their values; the
/// compressible ones travel in far fewer batches than `batch.size` of
/// uncompressed bytes would make.
async fn compressed_batches_follow_the_ratio(compression: Compression) {
    let kafka = kafka().await;
    let topic = unique_name(&format!("ratio-{}", compression.name()));
    kafka.create_topic(&topic, 1, 1).await.unwrap();
    let config = ProducerConfig::builder(&kafka.bootstrap())
        .compression(compression)
        .linger(Duration::from_millis(20))
        .batch_size(16_384)
        .build()
        .unwrap();
    let producer = Producer::connect(config).await.unwrap();
    const COMPRESSIBLE: usize = 30_000;
    const RANDOM: usize = 3_000;
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut random = move || {
        (0..125)
            .flat_map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state.to_le_bytes()
            })
            .collect::<Vec<u8>>()
    };
    let values: Vec<Bytes> = (0..COMPRESSIBLE + RANDOM)
        .map(|i| {
            if i < COMPRESSIBLE {
                Bytes::from(format!("{i:08}{}", "a".repeat(992)))
            } else {
                Bytes::from(random())
            }
        })
        .collect();
    // In waves of 1,000 (the estimate learns from the batches compressed
    // so far; a burst is batched before any is), the random ones at once.
    let mut batches_after_compressible = 0;
    let mut next = 0;
    for wave in values[..COMPRESSIBLE]
        .chunks(1_000)
        .chain([&values[COMPRESSIBLE..]])
    {
        let sends: Vec<_> = wave
            .iter()
            .map(|v| producer.send(ProducerRecord::new(topic.as_str()).value(v.clone())))
            .collect();
        for f in sends {
            let m = f
                .await
                .unwrap_or_else(|e| panic!("{compression:?} record {next}: {e}"));
            assert_eq!(
                m.offset,
                Some(next as i64),
                "{compression:?}: in order, once"
            );
            next += 1;
        }
        if next == COMPRESSIBLE {
            batches_after_compressible = producer.metrics().batches_sent;
        }
    }
    let metrics = producer.metrics();
    producer.close(Duration::from_secs(10)).await.unwrap();
    // 16 KiB of uncompressed records is 16 of these: 1,875 batches.
    assert!(
        batches_after_compressible < COMPRESSIBLE as u64 / 16 / 4,
        "{compression:?}: batches grew with the ratio: {metrics:?}"
    );
    assert_eq!(metrics.records_sent, (COMPRESSIBLE + RANDOM) as u64);

    let cluster = Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
        .await
        .expect("connect");
    let mut reader = Reader::new(cluster, ReaderConfig::default());
    let read = reader.read_to_end(&topic, &[0]).await.unwrap();
    assert_eq!(read.len(), values.len(), "{compression:?}");
    for (i, r) in read.iter().enumerate() {
        assert_eq!(r.offset, i as i64, "{compression:?}");
        assert_eq!(
            r.value.as_ref(),
            Some(&values[i]),
            "{compression:?} value {i}"
        );
    }
}

#[cfg(feature = "lz4")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lz4_batches_follow_the_compression_ratio() {
    compressed_batches_follow_the_ratio(Compression::Lz4).await;
}

#[cfg(feature = "zstd")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zstd_batches_follow_the_compression_ratio() {
    compressed_batches_follow_the_ratio(Compression::Zstd).await;
}

#[cfg(feature = "snappy")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snappy_batches_follow_the_compression_ratio() {
    compressed_batches_follow_the_ratio(Compression::Snappy).await;
}

/// acks=0 and acks=1 (idempotence silently off): offsets unknown / known.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acks_zero_and_one_report_offsets_only_when_acknowledged() {
    let kafka = kafka().await;
    let topic = unique_name("acks");
    kafka.create_topic(&topic, 1, 1).await.unwrap();
    for acks in [Acks::Zero, Acks::One] {
        let config = ProducerConfig::builder(&kafka.bootstrap())
            .acks(acks)
            .build()
            .unwrap();
        assert!(!config.idempotence());
        let p = Producer::connect(config).await.unwrap();
        let m = p
            .send(ProducerRecord::new(topic.as_str()).value("v"))
            .await
            .unwrap();
        assert_eq!(m.offset.is_some(), acks == Acks::One);
        p.close(Duration::from_secs(5)).await.unwrap();
    }
}

/// Unknown topic: the send waits for metadata, bounded by max.block.ms.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_to_an_unknown_topic_times_out_after_max_block() {
    let kafka = kafka().await;
    let config = ProducerConfig::builder(&kafka.bootstrap())
        .max_block(Duration::from_millis(500))
        .build()
        .unwrap();
    let p = Producer::connect(config).await.unwrap();
    let absent = unique_name("absent");
    let e = p
        .send(ProducerRecord::new(absent.as_str()).value("v"))
        .await
        .unwrap_err();
    assert!(
        matches!(e, kafka_producer::ProduceError::MaxBlockTimeout { .. }),
        "{e}"
    );
    p.close(Duration::from_secs(1)).await.unwrap();
}

/// Invariant: with `connections.per.broker` 2 (each partition on one of two
/// connections to the broker), an idempotent producer's records all arrive,
/// once each, in send order per partition, at the offsets acknowledged.
/// Small batches that never grow (`batch.max.size` = `batch.size`) and no
/// linger keep many requests in flight on both connections at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_on_two_connections_per_broker_arrive_once_in_order() {
    let kafka = kafka().await;
    let topic = unique_name("two-connections");
    const PARTITIONS: i32 = 6;
    kafka.create_topic(&topic, PARTITIONS, 1).await.unwrap();
    let config = ProducerConfig::builder(&kafka.bootstrap())
        .connections_per_broker(2)
        .linger(Duration::from_millis(0))
        .batch_size(1024)
        .batch_max_size(Some(1024))
        .build()
        .unwrap();
    assert!(config.idempotence());
    let producer = Producer::connect(config).await.unwrap();
    const N: usize = 30_000;
    let value = |i: usize| format!("{i:08}-{}", "v".repeat(i % 40));
    let futures: Vec<_> = (0..N)
        .map(|i| {
            producer.send(
                ProducerRecord::new(topic.as_str())
                    .partition(i as i32 % PARTITIONS)
                    .value(value(i)),
            )
        })
        .collect();
    let mut acked = BTreeMap::new();
    for (i, f) in futures.into_iter().enumerate() {
        let m = f.await.unwrap_or_else(|e| panic!("record {i}: {e}"));
        assert_eq!(m.partition, i as i32 % PARTITIONS);
        assert!(acked.insert((m.partition, m.offset.unwrap()), i).is_none());
    }
    assert!(
        producer.metrics().requests > 100,
        "{:?}",
        producer.metrics()
    );
    producer.close(Duration::from_secs(10)).await.unwrap();

    let cluster = Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
        .await
        .expect("connect");
    let mut reader = Reader::new(cluster, ReaderConfig::default());
    let partitions: Vec<i32> = (0..PARTITIONS).collect();
    let read = reader.read_to_end(&topic, &partitions).await.unwrap();
    assert_eq!(read.len(), N, "every record once");
    let mut next: BTreeMap<i32, usize> = BTreeMap::new();
    for r in &read {
        let i = acked[&(r.partition, r.offset)];
        assert_eq!(
            r.value.as_deref(),
            Some(value(i).as_bytes()),
            "offset of {i}"
        );
        // Record i of partition p is the (i / PARTITIONS)-th of p.
        let n = next.entry(r.partition).or_default();
        assert_eq!(i, *n * PARTITIONS as usize + r.partition as usize, "order");
        *n += 1;
    }
}
