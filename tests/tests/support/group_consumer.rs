//! What the consumer-group broker tests share: the consumer settings, a
//! producer of numbered records, and a group member that logs ownership and
//! what it consumed, committing on every batch and revocation.

use super::brokers::Brokers;
use kafka_consumer::{ConsumerEvent, GroupConsumer, GroupConsumerConfig, GroupError};
use kafka_producer::{Producer, ProducerConfig, ProducerRecord};
use kafka_proto::ErrorCode;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const PARTITIONS: i32 = 4;

pub fn config(kafka: &dyn Brokers, group: &str, extra: &[(&str, &str)]) -> GroupConsumerConfig {
    let bootstrap = kafka.bootstrap();
    let mut props = vec![
        ("bootstrap.servers", bootstrap.as_str()),
        ("group.id", group),
        ("auto.offset.reset", "earliest"),
        ("isolation.level", "read_committed"),
    ];
    props.extend_from_slice(extra);
    GroupConsumerConfig::from_properties(props).expect("config")
}

pub async fn produce(
    kafka: &dyn Brokers,
    topic: &str,
    partitions: i32,
    range: std::ops::Range<u32>,
) {
    let producer = Producer::connect(
        ProducerConfig::from_properties([("bootstrap.servers", kafka.bootstrap().as_str())])
            .unwrap(),
    )
    .await
    .unwrap();
    let sends: Vec<_> = range
        .map(|i| {
            producer.send(
                ProducerRecord::new(topic)
                    .partition(i as i32 % partitions)
                    .value(i.to_string()),
            )
        })
        .collect();
    for s in sends {
        s.await.expect("produced");
    }
    producer.close(Duration::from_secs(10)).await.unwrap();
}

/// What the members did, shared by their tasks.
#[derive(Default)]
pub struct Log {
    /// partition -> the member owning it now.
    pub owner: BTreeMap<i32, usize>,
    /// Every value consumed, with the member that consumed it.
    pub consumed: Vec<(u32, usize)>,
    /// Events seen by each member.
    pub revoked: Vec<(usize, i32)>,
    pub assigned: Vec<(usize, i32)>,
    pub violations: Vec<String>,
}

/// Polls until `stop`; commits after every batch and before confirming a
/// revocation (a commit a rebalance refused is made again after the next
/// poll, and before the member stops); records ownership changes.
pub async fn member(
    id: usize,
    mut consumer: GroupConsumer,
    log: Arc<Mutex<Log>>,
    stop: Arc<AtomicBool>,
) -> GroupConsumer {
    let mut commit_again = false;
    while !stop.load(Ordering::SeqCst) || commit_again {
        let event = consumer.poll(Duration::from_millis(200)).await;
        let event = event.unwrap_or_else(|e| panic!("member {id}: {e}"));
        let commit = {
            let mut l = log.lock().unwrap();
            match event {
                ConsumerEvent::Records(records) => {
                    for r in &records {
                        if l.owner.get(&r.partition) != Some(&id) {
                            let v = format!(
                                "member {id} got a record of partition {} it does not own",
                                r.partition
                            );
                            l.violations.push(v);
                        }
                        let v: u32 = std::str::from_utf8(r.value.as_deref().unwrap())
                            .unwrap()
                            .parse()
                            .unwrap();
                        l.consumed.push((v, id));
                    }
                    !records.is_empty()
                }
                ConsumerEvent::Assigned(parts) => {
                    for tp in parts {
                        if let Some(other) = l.owner.insert(tp.partition, id) {
                            let v = format!(
                                "partition {} assigned to {id} while {other} owns it",
                                tp.partition
                            );
                            l.violations.push(v);
                        }
                        l.assigned.push((id, tp.partition));
                    }
                    false
                }
                ConsumerEvent::Revoked(parts) | ConsumerEvent::Lost(parts) => {
                    for tp in &parts {
                        if l.owner.remove(&tp.partition) != Some(id) {
                            let v = format!("member {id} released {} it did not own", tp.partition);
                            l.violations.push(v);
                        }
                        l.revoked.push((id, tp.partition));
                    }
                    // Commit what was consumed before the next poll confirms
                    // the revocation (a lost partition cannot be committed).
                    true
                }
            }
        };
        if commit || commit_again {
            // A classic member's commit made while it rejoins is refused
            // with REBALANCE_IN_PROGRESS (Java's
            // `RebalanceInProgressException`): made again after the next
            // poll. Any other failure fails the test.
            match consumer.commit_positions().await {
                Ok(()) => commit_again = false,
                Err(GroupError::Commit {
                    error: ErrorCode::RebalanceInProgress,
                    ..
                }) => commit_again = true,
                Err(e) => panic!("member {id} commit: {e}"),
            }
        }
    }
    consumer
}

pub async fn wait_for(what: &str, log: &Mutex<Log>, cond: impl Fn(&Log) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        {
            let l = log.lock().unwrap();
            assert!(l.violations.is_empty(), "{:?}", l.violations);
            if cond(&l) {
                return;
            }
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
