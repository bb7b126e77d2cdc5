//! kafka-mock serving this project's group consumer, with the KIP-848
//! protocol (`group.protocol=consumer`, the server assigning with
//! `uniform` or `range`) and the classic one (eager `range`, incremental
//! `cooperative-sticky`): two members split a topic mid-stream, then one
//! leaves and the other takes its partitions back. With offsets committed
//! on every batch and before every revocation, every record is consumed
//! exactly once and no partition has two owners at a time.
//!
//! A classic member's commit made while it rejoins (a cooperative member
//! reads its partitions meanwhile) or overtaken by its rejoin fails with
//! REBALANCE_IN_PROGRESS, as Java's `commitSync` throws
//! `RebalanceInProgressException`: the member polls and commits again.
//! Any other commit failure fails the test.

use kafka_consumer::{ConsumerEvent, GroupConsumer, GroupConsumerConfig, GroupError};
use kafka_mock::{MockCluster, MockConfig};
use kafka_producer::{Producer, ProducerConfig, ProducerRecord};
use kafka_proto::ErrorCode;
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
    /// Commits refused with REBALANCE_IN_PROGRESS (classic members).
    rebalance_refusals: usize,
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

/// How members join the group.
#[derive(Clone, Copy)]
enum Protocol {
    /// The classic protocol with this `partition.assignment.strategy`.
    Classic(&'static str),
    /// KIP-848 with this `group.remote.assignor`.
    Consumer(&'static str),
}

async fn consumer(bootstrap: &str, protocol: Protocol) -> GroupConsumer {
    let mut props = vec![
        ("bootstrap.servers", bootstrap),
        ("group.id", "splitters"),
        ("auto.offset.reset", "earliest"),
    ];
    match protocol {
        Protocol::Classic(strategy) => props.extend([
            ("group.protocol", "classic"),
            ("partition.assignment.strategy", strategy),
            ("session.timeout.ms", "6000"),
            ("heartbeat.interval.ms", "200"),
        ]),
        Protocol::Consumer(assignor) => props.extend([
            ("group.protocol", "consumer"),
            ("group.remote.assignor", assignor),
        ]),
    }
    let config = GroupConsumerConfig::from_properties(props).unwrap();
    GroupConsumer::subscribe(config, ["events"]).await.unwrap()
}

/// Polls until `stop`, logging ownership and values; commits after each
/// batch and on each revocation. A commit a rebalance refused is made again
/// after the next poll (and before the member stops).
async fn member(
    id: usize,
    mut c: GroupConsumer,
    protocol: Protocol,
    log: Arc<Mutex<Log>>,
    stop: Arc<AtomicBool>,
) {
    let mut commit_again = false;
    while !stop.load(Ordering::SeqCst) || commit_again {
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
        if commit || commit_again {
            match c.commit_positions().await {
                Ok(()) => commit_again = false,
                Err(GroupError::Commit {
                    error: ErrorCode::RebalanceInProgress,
                    ..
                }) if matches!(protocol, Protocol::Classic(_)) => {
                    log.lock().unwrap().rebalance_refusals += 1;
                    commit_again = true;
                }
                Err(e) => panic!("member {id} commit: {e}"),
            }
        }
    }
    // It reads nothing more: its partitions are free for the others from
    // here (close commits and leaves the group).
    log.lock().unwrap().owner.retain(|_, m| *m != id);
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

fn consumed_all(l: &Log, n: usize) -> bool {
    let mut seen = l.consumed.clone();
    seen.sort_unstable();
    seen.dedup();
    seen.len() == n
}

/// A three-broker cluster with the topic "events" holding `records`.
async fn cluster_with_events(records: std::ops::Range<u32>) -> MockCluster {
    let mock = MockCluster::start(MockConfig {
        brokers: 3,
        // Members learn of a rebalance at their next heartbeat.
        consumer_group_heartbeat_interval: Duration::from_millis(200),
        ..MockConfig::default()
    })
    .await
    .unwrap();
    mock.create_topic("events", PARTITIONS).unwrap();
    produce(&mock.bootstrap(), records).await;
    mock
}

async fn split_mid_stream(protocol: Protocol) {
    let mock = cluster_with_events(0..200).await;
    let bootstrap = mock.bootstrap();
    let log = Arc::new(Mutex::new(Log::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let stop_second = Arc::new(AtomicBool::new(false));
    let first = tokio::spawn(member(
        0,
        consumer(&bootstrap, protocol).await,
        protocol,
        log.clone(),
        stop.clone(),
    ));
    wait_for(&log, "the first member owns every partition", |l| {
        l.owner.len() == PARTITIONS as usize
    })
    .await;
    let second = tokio::spawn(member(
        1,
        consumer(&bootstrap, protocol).await,
        protocol,
        log.clone(),
        stop_second.clone(),
    ));
    wait_for(&log, "the second member owns some partitions", |l| {
        l.owner.values().any(|m| *m == 1)
    })
    .await;
    produce(&bootstrap, 200..400).await;
    wait_for(&log, "every record consumed", |l| consumed_all(l, 400)).await;
    // The second member leaves: the first takes every partition back.
    stop_second.store(true, Ordering::SeqCst);
    second.await.unwrap();
    wait_for(&log, "the first member owns every partition again", |l| {
        l.owner.len() == PARTITIONS as usize && l.owner.values().all(|m| *m == 0)
    })
    .await;
    produce(&bootstrap, 400..600).await;
    wait_for(&log, "every record consumed", |l| consumed_all(l, 600)).await;
    stop.store(true, Ordering::SeqCst);
    first.await.unwrap();
    let l = log.lock().unwrap();
    let mut consumed = l.consumed.clone();
    consumed.sort_unstable();
    assert_eq!(consumed, (0..600).collect::<Vec<u32>>(), "each record once");
    if l.rebalance_refusals > 0 {
        eprintln!(
            "{} commit(s) refused with REBALANCE_IN_PROGRESS, made again after a poll",
            l.rebalance_refusals
        );
    }
}

/// Classic eager `range`: everything is revoked before the second member
/// joins.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn range_members_split_a_topic_exactly_once() {
    split_mid_stream(Protocol::Classic("range")).await;
}

/// Classic incremental `cooperative-sticky`: only what moves is revoked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cooperative_sticky_members_split_a_topic_exactly_once() {
    split_mid_stream(Protocol::Classic("cooperative-sticky")).await;
}

/// KIP-848 with the `uniform` server assignor: a partition moves only
/// after its owner revoked it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kip848_uniform_members_split_a_topic_exactly_once() {
    split_mid_stream(Protocol::Consumer("uniform")).await;
}

/// KIP-848 with the `range` server assignor.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kip848_range_members_split_a_topic_exactly_once() {
    split_mid_stream(Protocol::Consumer("range")).await;
}

/// A cooperative classic member keeps reading its partitions while it
/// rejoins, and a commit made then would carry the generation its JoinGroup
/// is replacing: on a broker that OffsetCommit waits behind the JoinGroup
/// on the connection (a broker serves one request of a connection at a
/// time) and is refused with ILLEGAL_GENERATION once the join completed.
/// The member refuses it itself with REBALANCE_IN_PROGRESS, unsent (Java's
/// `commitSync` throws `RebalanceInProgressException`), and commits after
/// the polls that complete the rebalance. The first member's JoinGroup of
/// the rebalance the second member starts is held 3 s, so the commit falls
/// inside the rejoin every time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cooperative_commit_during_the_rejoin_is_refused_as_a_rebalance_in_progress() {
    use kafka_consumer::MemberState;
    use kafka_mock::FaultAction;
    use kafka_proto::ApiKey;
    use std::sync::atomic::AtomicUsize;
    let mock = cluster_with_events(0..100).await;
    let bootstrap = mock.bootstrap();
    let coop = Protocol::Classic("cooperative-sticky");
    let mut first = consumer(&bootstrap, coop).await;
    let mut read = 0;
    for _ in 0..300 {
        if let ConsumerEvent::Records(r) = first.poll(Duration::from_millis(100)).await.unwrap() {
            read += r.len();
        }
        if read == 100 && first.assignment().len() == PARTITIONS as usize {
            break;
        }
    }
    assert_eq!(read, 100);
    first.commit_positions().await.unwrap();
    let generation = first.group_metadata().generation_id;
    // JoinGroups from here: the second member's two (MEMBER_ID_REQUIRED,
    // then the one waiting for the first member), then the first
    // member's rejoin, held.
    let seen = AtomicUsize::new(0);
    mock.set_interceptor(Arc::new(move |r| {
        (r.api == ApiKey::JoinGroup && seen.fetch_add(1, Ordering::SeqCst) == 2)
            .then_some(FaultAction::Delay(Duration::from_secs(3)))
    }));
    let stop_second = Arc::new(AtomicBool::new(false));
    let second = tokio::spawn(member(
        1,
        consumer(&bootstrap, coop).await,
        coop,
        Arc::default(),
        stop_second.clone(),
    ));
    let mut rejoining = false;
    for _ in 0..300 {
        first.poll(Duration::from_millis(100)).await.unwrap();
        if first.state() == MemberState::Joining {
            rejoining = true;
            break;
        }
    }
    assert!(rejoining, "the first member rejoins");
    assert_eq!(first.assignment().len(), PARTITIONS as usize, "kept");
    let commits = |mock: &MockCluster| {
        mock.requests()
            .iter()
            .filter(|r| r.api == ApiKey::OffsetCommit)
            .count()
    };
    let sent_before = commits(&mock);
    match first.commit_positions().await {
        Err(GroupError::Commit {
            error: ErrorCode::RebalanceInProgress,
            ..
        }) => {}
        other => panic!("a commit during the rejoin: {other:?}"),
    }
    assert_eq!(commits(&mock), sent_before, "refused unsent");
    // Poll, then commit again: once the rebalance completed the commit
    // goes through in the new generation.
    let mut committed = false;
    for _ in 0..300 {
        let event = first.poll(Duration::from_millis(100)).await.unwrap();
        if let ConsumerEvent::Records(r) = &event {
            assert!(r.is_empty(), "nothing new to read");
        }
        let rejoined = first.state() == MemberState::Stable
            && first.group_metadata().generation_id > generation;
        match first.commit_positions().await {
            Ok(()) if rejoined => {
                committed = true;
                break;
            }
            Ok(()) => {}
            Err(GroupError::Commit {
                error: ErrorCode::RebalanceInProgress,
                ..
            }) if !matches!(event, ConsumerEvent::Revoked(_)) => {}
            Err(e) => panic!("commit after {event:?}: {e}"),
        }
    }
    assert!(committed, "a commit in the new generation");
    stop_second.store(true, Ordering::SeqCst);
    second.await.unwrap();
    first.close(Duration::from_secs(5)).await;
}
