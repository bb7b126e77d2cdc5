//! The reader's pipelined fetch path with KIP-227 fetch sessions, on a
//! real Kafka 4.4 broker and on kafka-mock (which keeps sessions as Kafka's
//! `FetchSessionCache` does).
//!
//! Invariants:
//! - a partition that leaves the assignment is forgotten by the session:
//!   nothing of it is returned while unassigned, and once assigned again
//!   at a new offset, its records come from that offset, each once, in
//!   order (a broker still serving it from the session's old offset would
//!   deliver stale records);
//! - a seek while the next Fetch is already in flight (prefetched) moves
//!   the position: no record from before the seek is returned after it;
//! - a position only moves past records that `poll` returned.

use kafka_client::{Cluster, ClusterConfig};
use kafka_consumer::{
    AutoOffsetReset, ConsumerRecord, IsolationLevel, Offset, Reader, ReaderConfig,
};
use kafka_mock::{MockCluster, MockConfig, Nemesis, NemesisConfig, NemesisFault};
use kafka_producer::{Producer, ProducerConfig, ProducerRecord};
use kafka_testcontainers::{SharedKafka, unique_name};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::support::brokers::Brokers;

async fn produce(kafka: &dyn Brokers, topic: &str, partition: i32, values: std::ops::Range<u32>) {
    let producer = Producer::connect(ProducerConfig::new(&kafka.bootstrap()))
        .await
        .unwrap();
    let sends: Vec<_> = values
        .map(|v| {
            producer.send(
                ProducerRecord::new(topic)
                    .partition(partition)
                    .value(v.to_string()),
            )
        })
        .collect();
    for s in sends {
        s.await.expect("produced");
    }
    producer.close(Duration::from_secs(10)).await.unwrap();
}

fn value(r: &ConsumerRecord) -> u32 {
    std::str::from_utf8(r.value.as_deref().unwrap())
        .unwrap()
        .parse()
        .unwrap()
}

/// Polls until `done` holds for what was read (by partition: offsets and
/// values in the order returned), failing after 60 s.
async fn poll_until(
    reader: &mut Reader,
    read: &mut BTreeMap<i32, Vec<(i64, u32)>>,
    what: &str,
    done: impl Fn(&BTreeMap<i32, Vec<(i64, u32)>>) -> bool,
) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done(read) {
        assert!(Instant::now() < deadline, "{what}: read {read:?}");
        for r in reader.poll(Duration::from_millis(200)).await.unwrap() {
            read.entry(r.partition)
                .or_default()
                .push((r.offset, value(&r)));
        }
    }
}

fn offsets(read: &BTreeMap<i32, Vec<(i64, u32)>>, p: i32) -> Vec<i64> {
    read.get(&p)
        .map(|v| v.iter().map(|(o, _)| *o).collect())
        .unwrap_or_default()
}

async fn leave_return_and_seek(kafka: &dyn Brokers) {
    let topic = &*unique_name("sessions");
    kafka.create_topic(topic, 2, 1).await;
    produce(kafka, topic, 0, 0..100).await;
    produce(kafka, topic, 1, 100..200).await;
    let cluster = Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
        .await
        .unwrap();
    let mut reader = Reader::new(
        cluster,
        ReaderConfig {
            isolation: IsolationLevel::ReadUncommitted,
            auto_offset_reset: AutoOffsetReset::Earliest,
            max_wait: Duration::from_millis(100),
            ..ReaderConfig::default()
        },
    );
    reader.assign(topic, &[0, 1]);
    let mut read = BTreeMap::new();
    poll_until(&mut reader, &mut read, "both partitions", |r| {
        offsets(r, 0).len() == 100 && offsets(r, 1).len() == 100
    })
    .await;
    assert_eq!(offsets(&read, 0), (0..100).collect::<Vec<_>>());
    assert_eq!(offsets(&read, 1), (0..100).collect::<Vec<_>>());

    // Partition 1 leaves; both get more records.
    reader.unassign(topic, &[1]);
    produce(kafka, topic, 0, 200..250).await;
    produce(kafka, topic, 1, 250..300).await;
    let mut later = BTreeMap::new();
    poll_until(&mut reader, &mut later, "partition 0's new records", |r| {
        offsets(r, 0).len() == 50
    })
    .await;
    assert_eq!(offsets(&later, 0), (100..150).collect::<Vec<_>>());
    assert!(!later.contains_key(&1), "an unassigned partition was read");

    // Partition 1 returns at offset 10: from there, each once, in order.
    reader.assign(topic, &[1]);
    reader.seek(topic, 1, Offset::At(10)).await.unwrap();
    let mut back = BTreeMap::new();
    poll_until(&mut reader, &mut back, "partition 1 from offset 10", |r| {
        offsets(r, 1).last() == Some(&149)
    })
    .await;
    assert_eq!(offsets(&back, 1), (10..150).collect::<Vec<_>>());
    let values: Vec<u32> = back[&1].iter().map(|(_, v)| *v).collect();
    let expected: Vec<u32> = (110..200).chain(250..300).collect();
    assert_eq!(values, expected);

    // A seek with the next Fetch in flight: nothing from before it after it.
    produce(kafka, topic, 0, 300..310).await;
    let mut before = BTreeMap::new();
    poll_until(
        &mut reader,
        &mut before,
        "partition 0's last records",
        |r| offsets(r, 0).last() == Some(&159),
    )
    .await;
    reader.seek(topic, 0, Offset::At(40)).await.unwrap();
    assert_eq!(reader.position(topic, 0), Some(40));
    let mut after = BTreeMap::new();
    poll_until(&mut reader, &mut after, "partition 0 again from 40", |r| {
        offsets(r, 0).last() == Some(&159)
    })
    .await;
    assert_eq!(offsets(&after, 0), (40..160).collect::<Vec<_>>());
    assert_eq!(reader.position(topic, 0), Some(160));
}

/// On the shared real Kafka 4.4 cluster.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partition_that_leaves_and_returns_is_read_from_its_new_offset_kafka_4_4_tv2() {
    let kafka = SharedKafka::Kafka44Tv2.cluster().await.expect("Kafka 4.4");
    leave_return_and_seek(kafka).await;
}

/// On kafka-mock (three brokers).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partition_that_leaves_and_returns_is_read_from_its_new_offset_on_kafka_mock() {
    let mock = mock().await;
    leave_return_and_seek(&mock).await;
}

/// Polls cancelled at seeded random moments (a `poll` future dropped after
/// up to `max_budget_us`, often mid-Fetch or while the next Fetches go
/// out; the mock answers faster than the broker, so its budgets are
/// smaller): every
/// record is still returned exactly once, in order per partition.
async fn cancelled_polls_lose_and_repeat_nothing(
    kafka: &dyn Brokers,
    seed: u64,
    max_budget_us: u64,
    n: usize,
) {
    let topic = &*unique_name("cancel");
    kafka.create_topic(topic, 3, 1).await;
    // One record per batch (each send awaited): many small Fetches.
    let producer = Producer::connect(ProducerConfig::new(&kafka.bootstrap()))
        .await
        .unwrap();
    for i in 0..n as u32 {
        for p in 0..3 {
            producer
                .send(
                    ProducerRecord::new(topic)
                        .partition(p)
                        .value((p as u32 * 1000 + i).to_string()),
                )
                .await
                .expect("produced");
        }
    }
    producer.close(Duration::from_secs(10)).await.unwrap();
    let cluster = Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
        .await
        .unwrap();
    let mut reader = Reader::new(
        cluster,
        ReaderConfig {
            isolation: IsolationLevel::ReadUncommitted,
            auto_offset_reset: AutoOffsetReset::Earliest,
            max_wait: Duration::from_millis(20),
            // One batch per partition per answer: many Fetches, many
            // moments to cancel at.
            partition_max_bytes: 1,
            ..ReaderConfig::default()
        },
    );
    reader.assign(topic, &[0, 1, 2]);
    let mut rng = kafka_testcontainers::SeededRng::new(seed);
    let mut read: BTreeMap<i32, Vec<(i64, u32)>> = BTreeMap::new();
    let (mut cancelled, mut completed) = (0u32, 0u32);
    let deadline = Instant::now() + Duration::from_secs(120);
    while (0..3).any(|p| offsets(&read, p).len() < n) {
        assert!(
            Instant::now() < deadline,
            "seed {seed}: stuck at {:?}",
            (0..3).map(|p| offsets(&read, p).len()).collect::<Vec<_>>()
        );
        // Mostly tiny budgets; one poll in four may finish (progress).
        let budget = if rng.below(4) == 0 {
            Duration::from_millis(100)
        } else {
            Duration::from_micros(rng.below(max_budget_us))
        };
        match tokio::time::timeout(budget, reader.poll(Duration::from_millis(50))).await {
            Err(_) => cancelled += 1,
            Ok(records) => {
                completed += 1;
                for r in records.unwrap() {
                    read.entry(r.partition)
                        .or_default()
                        .push((r.offset, value(&r)));
                }
                // Nothing skipped or repeated so far.
                for p in 0..3 {
                    let got = offsets(&read, p);
                    assert_eq!(
                        got,
                        (0..got.len() as i64).collect::<Vec<_>>(),
                        "seed {seed}: partition {p} after {cancelled} cancelled polls"
                    );
                }
            }
        }
    }
    for p in 0..3 {
        assert_eq!(
            offsets(&read, p),
            (0..n as i64).collect::<Vec<_>>(),
            "seed {seed}: partition {p} ({cancelled} polls cancelled, {completed} completed)"
        );
    }
    assert!(
        cancelled > 10,
        "seed {seed}: only {cancelled} polls cancelled"
    );
    eprintln!("seed {seed}: {cancelled} polls cancelled, {completed} completed");
}

/// On the shared real Kafka 4.4 cluster.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_polls_lose_and_repeat_nothing_kafka_4_4_tv2() {
    let kafka = SharedKafka::Kafka44Tv2.cluster().await.expect("Kafka 4.4");
    let seed = kafka_testcontainers::fresh_seed();
    eprintln!("seed {seed} (replay: EOS_SEED={seed})");
    cancelled_polls_lose_and_repeat_nothing(kafka, env_seed().unwrap_or(seed), 2_000, 200).await;
}

/// On kafka-mock (three brokers), with connections cut meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_polls_lose_and_repeat_nothing_on_kafka_mock() {
    let mock = mock().await;
    let seed = env_seed().unwrap_or_else(kafka_testcontainers::fresh_seed);
    eprintln!("seed {seed} (replay: EOS_SEED={seed})");
    // Connections cut every few milliseconds: the reader reconnects while
    // it sends the next Fetches, a moment a cancelled poll can hit.
    let nemesis = Nemesis::new(NemesisConfig {
        seed,
        kinds: vec![NemesisFault::CutConnections],
        pause: (Duration::from_millis(2), Duration::from_millis(10)),
        ..NemesisConfig::default()
    });
    let check = async {
        cancelled_polls_lose_and_repeat_nothing(&mock, seed, 200, 50).await;
        nemesis.stop();
    };
    tokio::join!(nemesis.run(&mock), check);
}

/// A three-broker kafka-mock cluster.
async fn mock() -> MockCluster {
    MockCluster::start(MockConfig {
        brokers: 3,
        ..MockConfig::default()
    })
    .await
    .expect("kafka-mock")
}

fn env_seed() -> Option<u64> {
    std::env::var("EOS_SEED").ok().and_then(|s| s.parse().ok())
}
