//! kafka-mock serving this project's producer and reader end to end: each
//! test states the invariant a real broker guarantees and checks it on the
//! mock (the same scenarios run against real brokers in the tests crate).

use kafka_client::{Cluster, ClusterConfig};
use kafka_consumer::{AutoOffsetReset, ConsumerRecord, IsolationLevel, Reader, ReaderConfig};
use kafka_mock::{
    CoordinatorKind, Fault, FaultAction, KafkaRelease, MockCluster, MockConfig, TransactionVersion,
};
use kafka_producer::{Producer, ProducerConfig, ProducerRecord, TransactionalProducer};
use kafka_proto::ApiKey;
use std::collections::BTreeMap;
use std::time::Duration;

use crate::common;

async fn read(
    cluster: &MockCluster,
    topic: &str,
    partitions: &[i32],
    isolation: IsolationLevel,
) -> Vec<ConsumerRecord> {
    let c = Cluster::connect(ClusterConfig::new(&cluster.bootstrap()))
        .await
        .expect("connect");
    let mut reader = Reader::new(
        c,
        ReaderConfig {
            isolation,
            ..ReaderConfig::default()
        },
    );
    // A commit returns once the coordinator decided; the markers that move
    // the last stable offset may come after (the mock's `marker_delay`).
    reader
        .wait_until_stable(topic, partitions, Duration::from_secs(10))
        .await
        .expect("no transaction left open");
    reader
        .read_to_end(topic, partitions)
        .await
        .expect("read to end")
}

fn values(records: &[ConsumerRecord]) -> Vec<String> {
    records
        .iter()
        .map(|r| String::from_utf8(r.value.clone().unwrap().to_vec()).unwrap())
        .collect()
}

/// Per partition, the values in offset order.
fn by_partition(records: &[ConsumerRecord]) -> BTreeMap<i32, Vec<String>> {
    let mut out: BTreeMap<i32, Vec<(i64, String)>> = BTreeMap::new();
    for r in records {
        out.entry(r.partition).or_default().push((
            r.offset,
            String::from_utf8(r.value.clone().unwrap().to_vec()).unwrap(),
        ));
    }
    out.into_iter()
        .map(|(p, mut v)| {
            v.sort();
            (p, v.into_iter().map(|(_, s)| s).collect())
        })
        .collect()
}

/// A producer of `cluster` with the default config.
async fn default_producer(cluster: &MockCluster) -> Producer {
    let config = ProducerConfig::builder(&cluster.bootstrap())
        .build()
        .unwrap();
    Producer::connect(config).await.unwrap()
}

/// A transactional producer of `cluster` with transactional id `id`,
/// its transactions initialized.
async fn transactional_producer(cluster: &MockCluster, id: &str) -> TransactionalProducer {
    let config = ProducerConfig::builder(&cluster.bootstrap())
        .transactional_id(id)
        .build()
        .unwrap();
    let producer = TransactionalProducer::connect(config).await.unwrap();
    producer.init_transactions().await.unwrap();
    producer
}

async fn mock(brokers: usize, release: KafkaRelease, tv: TransactionVersion) -> MockCluster {
    MockCluster::start(MockConfig {
        brokers,
        release,
        transaction_version: tv,
        ..MockConfig::default()
    })
    .await
    .expect("start the mock")
}

/// Invariant: every record an idempotent producer had acknowledged is read
/// back exactly once, per key in send order, from partitions led by three
/// different brokers.
#[tokio::test]
async fn idempotent_records_come_back_once_in_send_order() {
    let cluster = mock(3, KafkaRelease::V4_4, TransactionVersion::V2).await;
    cluster.create_topic("orders", 3).unwrap();
    let leaders: std::collections::BTreeSet<_> = (0..3)
        .map(|p| cluster.leader("orders", p).unwrap())
        .collect();
    assert_eq!(leaders.len(), 3, "one leader per broker");
    let producer = Producer::connect(
        ProducerConfig::builder(&cluster.bootstrap())
            .linger(Duration::from_millis(2))
            .build()
            .unwrap(),
    )
    .await
    .unwrap();
    let sends: Vec<_> = (0..600)
        .map(|i| {
            producer.send(
                ProducerRecord::new("orders")
                    .key(format!("k{}", i % 3))
                    .value(format!("{i}")),
            )
        })
        .collect();
    for s in sends {
        s.await.expect("acknowledged");
    }
    producer.close(Duration::from_secs(5)).await.unwrap();
    let got = read(
        &cluster,
        "orders",
        &[0, 1, 2],
        IsolationLevel::ReadUncommitted,
    )
    .await;
    assert_eq!(got.len(), 600);
    for (_, vals) in by_partition(&got) {
        let nums: Vec<u32> = vals.iter().map(|v| v.parse().unwrap()).collect();
        assert!(nums.windows(2).all(|w| w[0] < w[1]), "send order: {nums:?}");
    }
}

/// Invariant: a Produce applied by the broker whose answer was lost is
/// retried by the idempotent producer and answered as a duplicate: each
/// record is in the log once.
#[tokio::test]
async fn a_lost_produce_answer_is_retried_and_written_once() {
    let cluster = mock(1, KafkaRelease::V4_4, TransactionVersion::V2).await;
    cluster.create_topic("t", 1).unwrap();
    let config = common::producer_config(
        &cluster,
        &[("request.timeout.ms", "1000"), ("linger.ms", "0")],
    );
    let producer = Producer::connect(config).await.unwrap();
    producer
        .send(ProducerRecord::new("t").value("warm-up"))
        .await
        .unwrap();
    cluster.inject(Fault::new(FaultAction::DropResponse).api(ApiKey::Produce));
    producer
        .send(ProducerRecord::new("t").value("once"))
        .await
        .expect("acknowledged after the retry");
    producer.close(Duration::from_secs(5)).await.unwrap();
    let produces = cluster
        .requests()
        .iter()
        .filter(|r| r.api == ApiKey::Produce)
        .count();
    assert!(
        produces >= 3,
        "the lost one was sent again: {produces} Produce requests"
    );
    let got = read(&cluster, "t", &[0], IsolationLevel::ReadUncommitted).await;
    assert_eq!(values(&got), ["warm-up", "once"]);
}

/// Invariant: when a partition's leader stops, the producer follows the
/// new leader and nothing acknowledged is lost or written twice.
#[tokio::test]
async fn a_stopped_leader_fails_over_without_loss() {
    let cluster = mock(2, KafkaRelease::V4_4, TransactionVersion::V2).await;
    cluster.create_topic("t", 1).unwrap();
    let first = cluster.leader("t", 0).unwrap();
    let producer = default_producer(&cluster).await;
    for i in 0..50 {
        producer
            .send(ProducerRecord::new("t").value(format!("{i}")))
            .await
            .unwrap();
    }
    cluster.stop_broker(first).await.unwrap();
    assert_ne!(cluster.leader("t", 0), Some(first));
    for i in 50..100 {
        producer
            .send(ProducerRecord::new("t").value(format!("{i}")))
            .await
            .unwrap();
    }
    producer.close(Duration::from_secs(5)).await.unwrap();
    let got = read(&cluster, "t", &[0], IsolationLevel::ReadUncommitted).await;
    let want: Vec<String> = (0..100).map(|i| i.to_string()).collect();
    assert_eq!(values(&got), want);
}

/// Commits "a", aborts "b", commits "c" (one record per partition each
/// time) and checks what read_committed and read_uncommitted readers see.
async fn commit_abort_commit(
    release: KafkaRelease,
    tv: TransactionVersion,
    marker_delay: Duration,
) {
    let cluster = MockCluster::start(MockConfig {
        brokers: 3,
        release,
        transaction_version: tv,
        marker_delay,
        ..MockConfig::default()
    })
    .await
    .unwrap();
    cluster.create_topic("out", 2).unwrap();
    let producer = transactional_producer(&cluster, "writer-1").await;
    for (tag, commit) in [("a", true), ("b", false), ("c", true)] {
        producer.begin_transaction().unwrap();
        let sends: Vec<_> = (0..2)
            .map(|p| {
                producer.send(
                    ProducerRecord::new("out")
                        .partition(p)
                        .value(format!("{tag}{p}")),
                )
            })
            .collect();
        for s in sends {
            s.await.unwrap();
        }
        if commit {
            producer.commit_transaction().await.unwrap();
        } else {
            producer.abort_transaction().await.unwrap();
        }
    }
    producer.close(Duration::from_secs(5)).await.unwrap();
    let committed =
        by_partition(&read(&cluster, "out", &[0, 1], IsolationLevel::ReadCommitted).await);
    for p in 0..2 {
        assert_eq!(
            committed[&p],
            [format!("a{p}"), format!("c{p}")],
            "read_committed p{p}"
        );
    }
    let all = by_partition(&read(&cluster, "out", &[0, 1], IsolationLevel::ReadUncommitted).await);
    for p in 0..2 {
        assert_eq!(
            all[&p],
            [format!("a{p}"), format!("b{p}"), format!("c{p}")],
            "read_uncommitted p{p}"
        );
    }
    // Three markers per partition after the three records.
    assert_eq!(cluster.offsets("out", 0), Some((6, 6)));
}

/// Invariant (transaction version 2): read_committed sees exactly the
/// committed transactions' records, read_uncommitted every record.
#[tokio::test]
async fn tv2_committed_records_are_visible_and_aborted_ones_hidden() {
    commit_abort_commit(KafkaRelease::V4_4, TransactionVersion::V2, Duration::ZERO).await;
}

/// The same invariant under transaction version 1 (AddPartitionsToTxn).
#[tokio::test]
async fn tv1_committed_records_are_visible_and_aborted_ones_hidden() {
    commit_abort_commit(KafkaRelease::V4_4, TransactionVersion::V1, Duration::ZERO).await;
}

/// The same invariant against Kafka 3.9's API versions.
#[tokio::test]
async fn kafka_3_9_committed_records_are_visible_and_aborted_ones_hidden() {
    commit_abort_commit(KafkaRelease::V3_9, TransactionVersion::V1, Duration::ZERO).await;
}

/// The same invariant while every transaction's markers take 200 ms to be
/// written: the next transaction's first Produce (version 2) meets
/// CONCURRENT_TRANSACTIONS and is retried.
#[tokio::test]
async fn tv2_slow_markers_delay_the_next_transaction_but_lose_nothing() {
    commit_abort_commit(
        KafkaRelease::V4_4,
        TransactionVersion::V2,
        Duration::from_millis(200),
    )
    .await;
}

/// Invariant: a coordinator that moves between two transactions is found
/// again (NOT_COORDINATOR, then FindCoordinator) and the commit holds.
#[tokio::test]
async fn a_moved_transaction_coordinator_is_found_again() {
    let cluster = mock(3, KafkaRelease::V4_4, TransactionVersion::V2).await;
    cluster.create_topic("out", 1).unwrap();
    let producer = transactional_producer(&cluster, "mover").await;
    let before = cluster
        .coordinator(CoordinatorKind::Transaction, "mover")
        .unwrap();
    let to = cluster
        .broker_ids()
        .into_iter()
        .find(|b| *b != before)
        .unwrap();
    producer.begin_transaction().unwrap();
    producer
        .send(ProducerRecord::new("out").value("x"))
        .await
        .unwrap();
    cluster
        .move_coordinator(CoordinatorKind::Transaction, "mover", to)
        .unwrap();
    producer.commit_transaction().await.unwrap();
    let got = read(&cluster, "out", &[0], IsolationLevel::ReadCommitted).await;
    assert_eq!(values(&got), ["x"]);
}

/// Invariant: `flush` returns once every record sent before it completed,
/// also when the coordinator aborted the transaction (its timeout) while a
/// record waited for buffer memory: the batch ahead of it is refused
/// (INVALID_PRODUCER_EPOCH), which fails the waiting record too (the
/// transaction must abort), and the flush is woken by that. It once waited
/// forever: the exactly-once checker's seed 839809706471 under load.
#[tokio::test]
async fn a_flush_returns_when_a_record_waiting_for_memory_fails() {
    let cluster = mock(1, KafkaRelease::V4_4, TransactionVersion::V2).await;
    cluster.create_topic("out", 1).unwrap();
    let config = common::producer_config(
        &cluster,
        &[
            ("transactional.id", "slow-writer"),
            ("transaction.timeout.ms", "1000"),
            ("buffer.memory", "32768"),
            ("batch.size", "4096"),
        ],
    );
    let producer = TransactionalProducer::connect(config).await.unwrap();
    producer.init_transactions().await.unwrap();
    producer.begin_transaction().unwrap();
    producer
        .send(ProducerRecord::new("out").value("first"))
        .await
        .unwrap();
    // The coordinator aborts the transaction (its timeout) and bumps the
    // epoch; the producer learns of it only from the next refusal.
    let aborted = async {
        while cluster.transaction_state("slow-writer") != Some(kafka_mock::TxnState::CompleteAbort)
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(30), aborted)
        .await
        .expect("the coordinator aborts the transaction after its timeout");
    // Room for one of them: the second waits for the first's memory.
    let big = || ProducerRecord::new("out").value(vec![b'x'; 16_384]);
    let (first, second) = (producer.send(big()), producer.send(big()));
    tokio::time::timeout(Duration::from_secs(10), producer.flush())
        .await
        .expect("the flush returns");
    assert!(first.await.is_err(), "refused: the transaction was aborted");
    assert!(second.await.is_err(), "never appended");
    producer.abort_transaction().await.unwrap();
}

/// Invariant: a reader whose ListOffsets and Fetch answers are lost times
/// out, reconnects and reads everything (a lost answer leaves its
/// connection silent, as a broker that stopped answering does).
#[tokio::test]
async fn a_reader_recovers_from_lost_answers() {
    let cluster = mock(1, KafkaRelease::V4_4, TransactionVersion::V2).await;
    cluster.create_topic("t", 1).unwrap();
    let producer = default_producer(&cluster).await;
    producer
        .send(ProducerRecord::new("t").value("v"))
        .await
        .unwrap();
    cluster.inject(Fault::new(FaultAction::DropResponse).api(ApiKey::ListOffsets));
    cluster.inject(Fault::new(FaultAction::DropResponse).api(ApiKey::Fetch));
    let mut config = ClusterConfig::new(&cluster.bootstrap());
    config.connection.request_timeout = Duration::from_millis(500);
    let c = Cluster::connect(config).await.unwrap();
    let mut reader = Reader::new(
        c,
        ReaderConfig {
            isolation: IsolationLevel::ReadUncommitted,
            ..ReaderConfig::default()
        },
    );
    let started = std::time::Instant::now();
    let got = reader.read_to_end("t", &[0]).await.expect("read to end");
    assert_eq!(values(&got), ["v"]);
    assert_eq!(cluster.pending_faults(), 0, "both answers were lost");
    eprintln!("recovered in {:?}", started.elapsed());
}

/// The largest bytes of values one `poll` returned while reading
/// `records` records of three partitions, and the values read per
/// partition, with `max_buffered_bytes` as given.
async fn poll_sizes(
    cluster: &MockCluster,
    max_buffered_bytes: i32,
    records: usize,
) -> (usize, BTreeMap<i32, Vec<String>>) {
    let c = Cluster::connect(ClusterConfig::new(&cluster.bootstrap()))
        .await
        .expect("connect");
    let mut reader = Reader::new(
        c,
        ReaderConfig {
            isolation: IsolationLevel::ReadUncommitted,
            max_buffered_bytes,
            auto_offset_reset: AutoOffsetReset::Earliest,
            ..ReaderConfig::default()
        },
    );
    reader.assign("wide", &[0, 1, 2]);
    let (mut largest, mut got) = (0, Vec::new());
    while got.len() < records {
        let polled =
            tokio::time::timeout(Duration::from_secs(10), reader.poll(Duration::from_secs(1)))
                .await
                .expect("a poll returns")
                .expect("poll");
        let bytes: usize = polled
            .iter()
            .map(|r| r.value.as_ref().map_or(0, |v| v.len()))
            .sum();
        largest = largest.max(bytes);
        got.extend(polled);
    }
    assert_eq!(got.len(), records, "nothing read twice");
    (largest, by_partition(&got))
}

/// Invariant: the reader holds at most `max_buffered_bytes` ahead of the
/// application, beyond the one whole batch a broker always returns
/// (KIP-74): with a 12,000-byte bound no poll hands out more than that plus
/// one batch of 4 KiB, where the default bound hands out the whole topic at
/// once; every record still arrives once, in order.
#[tokio::test]
async fn a_reader_holds_at_most_its_buffered_bytes() {
    let cluster = mock(1, KafkaRelease::V4_4, TransactionVersion::V2).await;
    cluster.create_topic("wide", 3).unwrap();
    let config = common::producer_config(&cluster, &[("batch.size", "4096"), ("linger.ms", "2")]);
    let producer = Producer::connect(config).await.unwrap();
    let sends: Vec<_> = (0..180)
        .map(|i| {
            let mut value = format!("{i:04}").into_bytes();
            value.resize(1_000, b'.');
            producer.send(ProducerRecord::new("wide").partition(i % 3).value(value))
        })
        .collect();
    for s in sends {
        s.await.expect("acknowledged");
    }
    producer.close(Duration::from_secs(5)).await.unwrap();

    let (largest, bounded) = poll_sizes(&cluster, 12_000, 180).await;
    assert!(
        largest <= 12_000 + 4_096,
        "a poll handed out {largest} bytes"
    );
    let (whole, unbounded) = poll_sizes(&cluster, 64 << 20, 180).await;
    assert!(
        whole > 12_000 + 4_096,
        "the control read only {whole} bytes at once"
    );
    assert_eq!(bounded, unbounded);
    for vals in bounded.values() {
        assert_eq!(vals.len(), 60);
        let nums: Vec<u32> = vals.iter().map(|v| v[..4].parse().unwrap()).collect();
        assert!(
            nums.windows(2).all(|w| w[0] < w[1]),
            "offset order: {nums:?}"
        );
    }
}
