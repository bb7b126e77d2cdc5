//! The consumer's metrics against a real broker (the shared Kafka 4.4
//! cluster).
//!
//! Invariant: a group member that reads every record of a topic and
//! commits counts exactly the records it returned, the Fetch requests and
//! bytes it received, one assignment and its commit, and ends with a lag of
//! zero on every partition it owns; a partition it no longer reads leaves
//! the lag table. With `metrics.enabled=false` everything stays zero.

use kafka_consumer::{ConsumerEvent, GroupConsumer};
use kafka_testcontainers::{KafkaCluster, SharedKafka, unique_name};
use std::time::{Duration, Instant};

use crate::support;
use support::group_consumer::{config, produce};

const PARTITIONS: i32 = 3;
const RECORDS: u32 = 300;

async fn kafka() -> &'static KafkaCluster {
    SharedKafka::Kafka44Tv2
        .cluster()
        .await
        .unwrap_or_else(|e| panic!("shared Kafka 4.4: {e}"))
}

/// Polls `consumer` until it returned `RECORDS` records (90 s at most).
async fn read_all(consumer: &mut GroupConsumer) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut got = 0u64;
    while got < u64::from(RECORDS) {
        assert!(Instant::now() < deadline, "read {got} of {RECORDS}");
        if let ConsumerEvent::Records(records) =
            consumer.poll(Duration::from_millis(200)).await.unwrap()
        {
            got += records.len() as u64;
        }
    }
    got
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_counts_what_it_read_and_ends_with_no_lag() {
    let kafka = kafka().await;
    let topic = &*unique_name("metrics");
    kafka.create_topic(topic, PARTITIONS, 1).await.unwrap();
    produce(kafka, topic, PARTITIONS, 0..RECORDS).await;
    let mut consumer =
        GroupConsumer::subscribe(config(kafka, &unique_name("metrics"), &[]), [topic])
            .await
            .unwrap();
    let got = read_all(&mut consumer).await;
    consumer.commit(&consumer.positions()).await.unwrap();
    let m = consumer.metrics();
    assert_eq!(m.records_consumed, got, "{m:?}");
    assert!(m.fetch_requests > 0 && m.bytes_consumed > 0, "{m:?}");
    assert!(m.fetch_latency_max_us >= m.fetch_latency_avg_us, "{m:?}");
    assert_eq!(
        (m.rebalances, m.commits, m.offset_resets),
        (1, 1, 0),
        "{m:?}"
    );
    assert_eq!(m.lag.len(), PARTITIONS as usize, "{m:?}");
    assert!(m.lag.values().all(|lag| *lag == 0), "{m:?}");
    consumer.close(Duration::from_secs(10)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disabled_metrics_stay_zero() {
    let kafka = kafka().await;
    let topic = &*unique_name("metrics-off");
    kafka.create_topic(topic, PARTITIONS, 1).await.unwrap();
    produce(kafka, topic, PARTITIONS, 0..RECORDS).await;
    let group = unique_name("metrics-off");
    let mut consumer = GroupConsumer::subscribe(
        config(kafka, &group, &[("metrics.enabled", "false")]),
        [topic],
    )
    .await
    .unwrap();
    read_all(&mut consumer).await;
    consumer.commit(&consumer.positions()).await.unwrap();
    assert_eq!(consumer.metrics(), Default::default());
    consumer.close(Duration::from_secs(10)).await;
}
