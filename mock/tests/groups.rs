//! kafka-mock serving this project's classic-protocol group consumer
//! (`group.protocol=classic`): two members split a topic mid-stream
//! (eager `range`, and incremental `cooperative-sticky`); with offsets
//! committed on every batch and before every revocation, every record is
//! consumed exactly once and no partition has two owners at a time.

use kafka_consumer::group::{ConsumerEvent, GroupConsumer, GroupConsumerConfig};
use kafka_mock::{MockCluster, MockConfig};
use kafka_producer::{Producer, ProducerConfig, ProducerRecord};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const PARTITIONS: i32 = 4;

#[derive(Default)]
struct Log {
    owner: BTreeMap<i32, usize>,
    consumed: Vec<u32>,
    violations: Vec<String>,
}

async fn produce(bootstrap: &str, range: std::ops::Range<u32>) {
    let producer = Producer::connect(ProducerConfig::new(bootstrap))
        .await
        .unwrap();
    let sends: Vec<_> = range
        .map(|i| {
            producer.send(
                ProducerRecord::new("events")
                    .partition(i as i32 % PARTITIONS)
                    .value(i.to_string()),
            )
        })
        .collect();
    for s in sends {
        s.await.unwrap();
    }
    producer.close(Duration::from_secs(5)).await.unwrap();
}

async fn consumer(bootstrap: &str, strategy: &str) -> GroupConsumer {
    let config = GroupConsumerConfig::from_properties([
        ("bootstrap.servers", bootstrap),
        ("group.id", "splitters"),
        ("group.protocol", "classic"),
        ("partition.assignment.strategy", strategy),
        ("auto.offset.reset", "earliest"),
        ("session.timeout.ms", "6000"),
        ("heartbeat.interval.ms", "200"),
    ])
    .unwrap();
    GroupConsumer::subscribe(config, ["events"]).await.unwrap()
}

/// Polls until `stop`, logging ownership and values; commits after each
/// batch and on each revocation.
async fn member(id: usize, mut c: GroupConsumer, log: Arc<Mutex<Log>>, stop: Arc<AtomicBool>) {
    while !stop.load(Ordering::SeqCst) {
        let event = c
            .poll(Duration::from_millis(100))
            .await
            .unwrap_or_else(|e| panic!("member {id}: {e}"));
        let commit = {
            let mut l = log.lock().unwrap();
            match event {
                ConsumerEvent::Records(records) => {
                    for r in &records {
                        if l.owner.get(&r.partition) != Some(&id) {
                            l.violations.push(format!(
                                "{id} read partition {} it does not own",
                                r.partition
                            ));
                        }
                        let v = std::str::from_utf8(r.value.as_deref().unwrap())
                            .unwrap()
                            .parse()
                            .unwrap();
                        l.consumed.push(v);
                    }
                    !records.is_empty()
                }
                ConsumerEvent::Assigned(parts) => {
                    for tp in parts {
                        if let Some(other) = l.owner.insert(tp.partition, id) {
                            l.violations.push(format!(
                                "{} assigned to {id} while {other} owns it",
                                tp.partition
                            ));
                        }
                    }
                    false
                }
                ConsumerEvent::Revoked(parts) | ConsumerEvent::Lost(parts) => {
                    for tp in &parts {
                        l.owner.remove(&tp.partition);
                    }
                    true
                }
            }
        };
        if commit {
            c.commit_positions()
                .await
                .unwrap_or_else(|e| panic!("member {id} commit: {e}"));
        }
    }
    c.close(Duration::from_secs(5)).await;
}

async fn wait_for(log: &Mutex<Log>, what: &str, cond: impl Fn(&Log) -> bool) {
    for _ in 0..600 {
        {
            let l = log.lock().unwrap();
            assert!(l.violations.is_empty(), "{:?}", l.violations);
            if cond(&l) {
                return;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what}: not within 30 s");
}

async fn split_mid_stream(strategy: &str) {
    let mock = MockCluster::start(MockConfig {
        brokers: 3,
        ..MockConfig::default()
    })
    .await
    .unwrap();
    mock.create_topic("events", PARTITIONS).unwrap();
    let bootstrap = mock.bootstrap();
    produce(&bootstrap, 0..200).await;
    let log = Arc::new(Mutex::new(Log::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let first = tokio::spawn(member(
        0,
        consumer(&bootstrap, strategy).await,
        log.clone(),
        stop.clone(),
    ));
    wait_for(&log, "the first member owns every partition", |l| {
        l.owner.len() == PARTITIONS as usize
    })
    .await;
    let second = tokio::spawn(member(
        1,
        consumer(&bootstrap, strategy).await,
        log.clone(),
        stop.clone(),
    ));
    wait_for(&log, "the second member owns some partitions", |l| {
        l.owner.values().any(|m| *m == 1)
    })
    .await;
    produce(&bootstrap, 200..400).await;
    wait_for(&log, "every record consumed", |l| {
        let mut seen = l.consumed.clone();
        seen.sort_unstable();
        seen.dedup();
        seen.len() == 400
    })
    .await;
    stop.store(true, Ordering::SeqCst);
    first.await.unwrap();
    second.await.unwrap();
    let l = log.lock().unwrap();
    let mut consumed = l.consumed.clone();
    consumed.sort_unstable();
    assert_eq!(consumed, (0..400).collect::<Vec<u32>>(), "each record once");
}

/// Eager `range`: everything is revoked before the second member joins.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn range_members_split_a_topic_exactly_once() {
    split_mid_stream("range").await;
}

/// Incremental `cooperative-sticky`: only what moves is revoked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cooperative_sticky_members_split_a_topic_exactly_once() {
    split_mid_stream("cooperative-sticky").await;
}
