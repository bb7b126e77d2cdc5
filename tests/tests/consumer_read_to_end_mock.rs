//! `Reader::read_to_end` on kafka-mock when the log's start passes the
//! read's position while its Fetch is on the way (DeleteRecords here, as
//! retention does on a broker). Invariant: the read goes on from the log's
//! new start and returns every record the log still holds below the end,
//! whatever `auto.offset.reset` says (a jump to the latest offset would
//! skip records still there; `none` would fail a read that can finish).
//! Each test waits on conditions (a held Fetch), never on time.

use kafka_admin::delete_records;
use kafka_client::{Cluster, ClusterConfig, TopicPartition};
use kafka_consumer::{AutoOffsetReset, Reader, ReaderConfig};
use kafka_mock::{FaultAction, HoldHandle, MockCluster, MockConfig};
use kafka_producer::{Producer, ProducerConfig, ProducerRecord};
use kafka_proto::ApiKey;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

async fn bounded<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
        .expect("the awaited condition within 30 s")
}

/// Ten records in `t`-0; the reader's first Fetch (from offset 0) held
/// while DeleteRecords moves the log start to 4; the offsets read.
async fn offsets_read_past_a_moved_log_start(policy: AutoOffsetReset) -> Vec<i64> {
    let mock = MockCluster::start(MockConfig::default()).await.unwrap();
    mock.create_topic("t", 1).unwrap();
    let producer = Producer::connect(
        ProducerConfig::builder(&mock.bootstrap())
            .linger(Duration::ZERO)
            .build()
            .unwrap(),
    )
    .await
    .unwrap();
    for i in 0..10 {
        let record = ProducerRecord::new("t").partition(0).value(format!("v{i}"));
        producer.send(record).await.unwrap();
    }
    let gate = HoldHandle::new();
    let first_fetch = Arc::new(AtomicBool::new(true));
    mock.set_interceptor(Arc::new({
        let gate = gate.clone();
        move |r| {
            (r.api == ApiKey::Fetch && first_fetch.swap(false, Ordering::SeqCst))
                .then(|| FaultAction::Hold(gate.clone()))
        }
    }));
    let cluster = Cluster::connect(ClusterConfig::new(&mock.bootstrap()))
        .await
        .unwrap();
    let mut reader = Reader::new(
        cluster,
        ReaderConfig {
            auto_offset_reset: policy,
            ..Default::default()
        },
    );
    let read = tokio::spawn(async move { reader.read_to_end("t", &[0]).await });
    bounded(gate.wait_held(1)).await;
    // On a connection of its own: a broker answers a connection's requests
    // in order, and the held Fetch is on the reader's.
    let admin = Cluster::connect(ClusterConfig::new(&mock.bootstrap()))
        .await
        .unwrap();
    let tp = TopicPartition::new("t", 0);
    let low = delete_records(&admin, &[(tp.clone(), 4)]).await.unwrap();
    assert_eq!(low[&tp], 4, "the log now starts at 4");
    gate.release_all();
    let records = bounded(read)
        .await
        .unwrap()
        .expect("the read reaches the end");
    records.iter().map(|r| r.offset).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_to_end_under_latest_goes_on_from_the_new_log_start() {
    let offsets = offsets_read_past_a_moved_log_start(AutoOffsetReset::Latest).await;
    assert_eq!(offsets, (4..10).collect::<Vec<_>>());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_to_end_under_none_goes_on_from_the_new_log_start() {
    let offsets = offsets_read_past_a_moved_log_start(AutoOffsetReset::None).await;
    assert_eq!(offsets, (4..10).collect::<Vec<_>>());
}
