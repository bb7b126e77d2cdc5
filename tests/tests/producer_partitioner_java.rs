//! The partitioners against the real Java client (kafka-clients 4.4.0 from
//! the harness's distribution):
//!
//! - `tests/java/Murmur2Vectors.java` prints `Utils.murmur2` and
//!   `Utils.toPositive(murmur2) % n` for a fixed key list; every line must
//!   match [`murmur2`], [`partition_for_key`] and [`DefaultPartitioner`].
//! - `tests/java/KeyedProduce.java` produces 200 keyed records with the Java
//!   `KafkaProducer` (default partitioner) to a 7-partition topic on a real
//!   broker (the harness's shared Kafka 4.4 cluster, the topic's name of
//!   the test's own); read back with the Java console consumer, every record must sit
//!   in the partition our [`DefaultPartitioner`] picks for its key.
//!
//! Both programs run with Java's single-file source launcher (Java 11+).

use kafka_producer::partitioner::{
    DefaultPartitioner, KeyHashPartitioner, Partitioner, murmur2, partition_for_key, to_positive,
};
use kafka_testcontainers::{IsolationLevel, KafkaVersion, ensure_distribution};
use kafka_testcontainers::{SharedKafka, unique_name};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::Duration;

/// Partition counts of Murmur2Vectors.java's last column.
const PARTITION_COUNTS: [i32; 7] = [1, 2, 3, 7, 16, 100, 1000];

fn java_source(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("java")
        .join(name)
}

/// `"-"` is the empty key; anything else lowercase hex.
fn unhex(s: &str) -> Vec<u8> {
    if s == "-" {
        return Vec::new();
    }
    let pairs = s.as_bytes().chunks_exact(2);
    assert!(pairs.remainder().is_empty(), "odd hex {s:?}");
    pairs
        .map(|h| u8::from_str_radix(std::str::from_utf8(h).unwrap(), 16).expect("hex"))
        .collect()
}

/// Invariant: for every key of Murmur2Vectors.java, our `murmur2`,
/// `to_positive`, `partition_for_key` and both partitioners give the Java
/// client's hash and partitions (no broker: the Kafka jars only).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn murmur2_vectors_match_the_java_client_at_test_time() {
    let dist = ensure_distribution(&KafkaVersion::V4_4)
        .await
        .expect("Kafka 4.4 jars");
    let out = tokio::process::Command::from(
        dist.java_command(&java_source("Murmur2Vectors.java").display().to_string()),
    )
    .output()
    .await
    .expect("run java");
    let stdout = String::from_utf8(out.stdout).expect("utf-8");
    assert!(
        out.status.success(),
        "Murmur2Vectors.java failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );

    let p = DefaultPartitioner::new();
    let k = KeyHashPartitioner::new();
    let mut lines = 0;
    let mut tails = HashSet::new();
    for line in stdout.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 3, "unexpected line {line:?}");
        let key = unhex(f[0]);
        let hash: i32 = f[1].parse().expect("murmur2 column");
        assert_eq!(murmur2(&key), hash, "murmur2 of {}", f[0]);
        let parts: Vec<i32> = f[2].split(',').map(|x| x.parse().unwrap()).collect();
        assert_eq!(parts.len(), PARTITION_COUNTS.len());
        for (&n, &want) in PARTITION_COUNTS.iter().zip(&parts) {
            assert_eq!(to_positive(murmur2(&key)) % n, want, "{} n={n}", f[0]);
            assert_eq!(partition_for_key(&key, n), want, "{} n={n}", f[0]);
            assert_eq!(p.partition("t", Some(&key), None, n), want);
            assert_eq!(k.partition("t", Some(&key), Some(b"v"), n), want);
        }
        tails.insert(key.len() % 4);
        lines += 1;
    }
    // Empty, 14 short keys, 6 fixed strings, 100 random ones.
    assert_eq!(lines, 121);
    assert_eq!(tails.len(), 4, "every murmur2 tail length covered");
}

/// Invariant: every record the Java producer's default partitioner placed
/// (keyed, the empty key included) sits in the partition our
/// `DefaultPartitioner` picks for its key, and the keys cover every
/// partition.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyed_records_land_where_the_java_producer_puts_them_kafka_4_4_tv2() {
    const PARTITIONS: i32 = 7;
    const RECORDS: usize = 200;

    let cluster = SharedKafka::Kafka44Tv2
        .cluster()
        .await
        .expect("shared Kafka 4.4");
    let topic = unique_name("keyed-java");
    let topic = topic.as_str();
    cluster
        .create_topic(topic, PARTITIONS, 1)
        .await
        .expect("create topic");

    let produced = cluster
        .run_java(
            &java_source("KeyedProduce.java").display().to_string(),
            &[cluster.bootstrap(), topic.to_string(), RECORDS.to_string()],
            Duration::from_secs(180),
        )
        .await
        .expect("run KeyedProduce.java");
    assert!(
        produced.success,
        "KeyedProduce.java failed ({:?}, timed out {}):\n{}",
        produced.exit_code, produced.timed_out, produced.stderr
    );

    // What the Java producer reported (key -> partition).
    let mut java_choice: HashMap<Vec<u8>, i32> = HashMap::new();
    let mut reported = 0;
    for line in produced.stdout_text().lines() {
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 3, "unexpected line {line:?}");
        let partition: i32 = f[1].parse().unwrap();
        let previous = java_choice.insert(unhex(f[0]), partition);
        assert!(previous.is_none() || previous == Some(partition));
        reported += 1;
    }
    assert_eq!(reported, RECORDS);

    // What is actually stored, read back with the Java console consumer.
    let records = cluster
        .console_consume(
            topic,
            IsolationLevel::ReadUncommitted,
            RECORDS,
            Duration::from_secs(30),
        )
        .await
        .expect("console consumer");
    assert_eq!(records.len(), RECORDS);

    let ours = DefaultPartitioner::new();
    let mut used = HashSet::new();
    let mut values = HashSet::new();
    for r in &records {
        let key = r.key.as_deref().expect("every record is keyed");
        let value = r.value.as_deref().expect("every record has a value");
        assert_eq!(
            ours.partition(topic, Some(key), Some(value), PARTITIONS),
            r.partition,
            "key {key:02x?} (value {:?}) is in partition {} on the broker",
            String::from_utf8_lossy(value),
            r.partition
        );
        assert_eq!(java_choice.get(key), Some(&r.partition));
        used.insert(r.partition);
        values.insert(value.to_vec());
    }
    assert_eq!(values.len(), RECORDS, "every record read back once");
    assert!(
        records.iter().any(|r| r.key.as_deref() == Some(&[][..])),
        "the empty key is covered"
    );
    assert_eq!(
        used.len(),
        PARTITIONS as usize,
        "keys spread over every partition"
    );
    // The null-key path never applied to these records.
    assert_eq!(ours.sticky_partition(topic), None);
}
