//! Steering a group consumer against real brokers: seek, pause and resume,
//! `max.poll.records`, `committed()`, subscription by regular expression
//! and resubscription, under KIP-848 (Kafka 4.4) and the classic protocol
//! (Kafka 3.9).
//!
//! Invariants:
//! - a paused partition returns no record and keeps its position; a pause
//!   lasts across a rebalance for the partitions that stay assigned and is
//!   forgotten for those revoked; a seek decides where the partition is
//!   read from next, for this member and (through the positions committed
//!   on revocation) for the member that takes the partition over;
//! - a poll returns at most `max.poll.records` records, and committing the
//!   positions after each poll commits exactly what was returned: a member
//!   that stops halfway and its successor read every record exactly once;
//! - `committed()` returns what the group committed, `None` where nothing
//!   was;
//! - a pattern subscription reads every record of every matching topic
//!   exactly once, a topic created after the join included, and nothing of
//!   a topic that does not match;
//! - after a resubscription the old topics' partitions are revoked, the new
//!   ones assigned, and nothing more is read from the old topics.
//!
//! Every test runs on the harness's shared clusters with names of its own.

use kafka_client::TopicPartition;
use kafka_consumer::{ConsumerEvent, GroupConsumer, GroupError, Offset, Subscription};
use kafka_proto::ErrorCode;
use kafka_testcontainers::{KafkaCluster, SharedKafka, unique_name};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support;
use support::group_consumer::{config, produce};

/// How long any one condition is waited for.
const PATIENCE: Duration = Duration::from_secs(90);

async fn kafka(variant: SharedKafka) -> &'static KafkaCluster {
    variant
        .cluster()
        .await
        .unwrap_or_else(|e| panic!("shared Kafka {variant}: {e}"))
}

/// The classic protocol's settings: the broker's smallest session
/// timeout, heartbeats every 500 ms.
const CLASSIC: [(&str, &str); 3] = [
    ("group.protocol", "classic"),
    ("session.timeout.ms", "6000"),
    ("heartbeat.interval.ms", "500"),
];

fn deadline() -> Instant {
    Instant::now() + PATIENCE
}

fn check_time(deadline: Instant, what: &str) {
    assert!(Instant::now() < deadline, "timed out waiting for {what}");
}

async fn poll(c: &mut GroupConsumer) -> ConsumerEvent {
    c.poll(Duration::from_millis(200))
        .await
        .unwrap_or_else(|e| panic!("poll: {e}"))
}

/// Commits the positions; a classic member's commit refused because it is
/// rejoining is reported as false (made again after the next poll).
async fn commit(c: &GroupConsumer) -> bool {
    match c.commit_positions().await {
        Ok(()) => true,
        Err(GroupError::Commit {
            error: ErrorCode::RebalanceInProgress,
            ..
        }) => false,
        Err(e) => panic!("commit: {e}"),
    }
}

fn value(r: &kafka_consumer::ConsumerRecord) -> u32 {
    std::str::from_utf8(r.value.as_deref().expect("a value"))
        .expect("utf-8")
        .parse()
        .expect("a number")
}

fn sorted(mut v: Vec<TopicPartition>) -> Vec<TopicPartition> {
    v.sort();
    v
}

/// What a member reading in the background did.
#[derive(Default)]
struct Seen {
    /// Every record's (partition, offset).
    records: Vec<(i32, i64)>,
    /// The partitions it owns.
    owned: BTreeSet<TopicPartition>,
}

/// A member reading in the background into `seen`, committing after each
/// batch and before confirming a revocation; returns the consumer when
/// stopped.
fn background(
    mut c: GroupConsumer,
    seen: Arc<Mutex<Seen>>,
    stop: Arc<AtomicBool>,
) -> tokio::task::JoinHandle<GroupConsumer> {
    tokio::spawn(async move {
        let mut again = false;
        while !stop.load(Ordering::SeqCst) {
            let commit_now = match poll(&mut c).await {
                ConsumerEvent::Records(records) => {
                    let mut s = seen.lock().unwrap();
                    s.records
                        .extend(records.iter().map(|r| (r.partition, r.offset)));
                    !records.is_empty()
                }
                ConsumerEvent::Revoked(parts) => {
                    let mut s = seen.lock().unwrap();
                    for tp in &parts {
                        s.owned.remove(tp);
                    }
                    true
                }
                ConsumerEvent::Assigned(parts) => {
                    seen.lock().unwrap().owned.extend(parts);
                    false
                }
                ConsumerEvent::Lost(parts) => panic!("background member lost {parts:?}"),
            };
            if commit_now || again {
                again = !commit(&c).await;
            }
        }
        c
    })
}

/// Member A reads a 4-partition topic, seeks every partition back to
/// offset 5 and pauses them all; member B joins. While paused A returns no
/// record; it commits the sought positions of the partitions it gives up;
/// afterwards exactly the partitions it kept are still paused. Resumed,
/// A and B read offsets 5..25 of every partition exactly once between them.
async fn seek_and_pause_survive_a_rebalance(variant: SharedKafka, extra: &[(&str, &str)]) {
    let kafka = kafka(variant).await;
    let topic = &*unique_name("steer");
    let group = &*unique_name("steer");
    kafka.create_topic(topic, 4, 1).await.expect("topic");
    produce(kafka, topic, 4, 0..100).await;
    let mut a = GroupConsumer::subscribe(config(kafka, group, extra), [topic])
        .await
        .expect("member A");
    let until = deadline();
    let mut read = 0;
    while read < 100 {
        check_time(until, "member A to read the topic");
        match poll(&mut a).await {
            ConsumerEvent::Records(r) => read += r.len(),
            ConsumerEvent::Assigned(_) => {}
            other => panic!("member A alone: {other:?}"),
        }
    }
    let all = sorted(a.assignment());
    assert_eq!(all.len(), 4);
    for tp in &all {
        assert_eq!(a.seek(tp, Offset::At(5)).await.expect("seek"), 5);
    }
    a.pause(&all).expect("pause");
    assert_eq!(sorted(a.paused()), all);
    assert!(
        a.positions().iter().all(|(_, p)| *p == 5),
        "positions after the seek: {:?}",
        a.positions()
    );

    let seen_b = Arc::new(Mutex::new(Seen::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let b = GroupConsumer::subscribe(config(kafka, group, extra), [topic])
        .await
        .expect("member B");
    let b_task = background(b, seen_b.clone(), stop.clone());
    // A goes on polling, paused, until the rebalance is done.
    let until = deadline();
    let mut revoked = Vec::new();
    loop {
        check_time(until, "the rebalance");
        match poll(&mut a).await {
            ConsumerEvent::Records(r) => assert!(r.is_empty(), "a paused partition returned {r:?}"),
            ConsumerEvent::Revoked(parts) => {
                for (tp, p) in a.positions() {
                    if parts.contains(&tp) {
                        assert_eq!(p, 5, "the sought position of {tp:?} is committed");
                    }
                }
                assert!(commit(&a).await, "commit on revocation");
                revoked.extend(parts);
            }
            ConsumerEvent::Assigned(parts) => assert!(parts.is_empty(), "A gained {parts:?}"),
            ConsumerEvent::Lost(parts) => panic!("A lost {parts:?}"),
        }
        let b_owns = seen_b.lock().unwrap().owned.len();
        if b_owns > 0 && a.assignment().len() + b_owns == 4 {
            break;
        }
    }
    let kept = sorted(a.assignment());
    assert!(
        !kept.is_empty() && !revoked.is_empty(),
        "kept {kept:?}, revoked {revoked:?}"
    );
    assert_eq!(
        sorted(a.paused()),
        kept,
        "pauses kept for what A kept, forgotten for what it gave up"
    );
    a.resume(&kept).expect("resume");
    assert!(a.paused().is_empty());

    let mut seen_a: Vec<(i32, i64)> = Vec::new();
    let until = deadline();
    loop {
        check_time(until, "offsets 5..25 of every partition");
        if let ConsumerEvent::Records(r) = poll(&mut a).await {
            seen_a.extend(r.iter().map(|r| (r.partition, r.offset)));
        }
        let total = seen_a.len() + seen_b.lock().unwrap().records.len();
        if total >= 80 {
            break;
        }
    }
    stop.store(true, Ordering::SeqCst);
    let b = b_task.await.expect("member B");
    let mut all_seen = seen_a.clone();
    all_seen.extend(seen_b.lock().unwrap().records.iter().copied());
    let unique: BTreeSet<(i32, i64)> = all_seen.iter().copied().collect();
    assert_eq!(unique.len(), all_seen.len(), "a record read twice");
    let expected: BTreeSet<(i32, i64)> =
        (0..4).flat_map(|p| (5..25).map(move |o| (p, o))).collect();
    assert_eq!(unique, expected);
    b.close(Duration::from_secs(10)).await;
    a.close(Duration::from_secs(10)).await;
}

/// Seek and pause across a KIP-848 rebalance.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seek_and_pause_survive_a_rebalance_kafka_4_4() {
    seek_and_pause_survive_a_rebalance(SharedKafka::Kafka44Tv2, &[]).await;
}

/// Seek and pause across a classic cooperative rebalance.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seek_and_pause_survive_a_cooperative_rebalance_kafka_3_9() {
    let mut extra = CLASSIC.to_vec();
    extra.push(("partition.assignment.strategy", "cooperative-sticky"));
    seek_and_pause_survive_a_rebalance(SharedKafka::Kafka39, &extra).await;
}

/// Each poll returns at most `max.poll.records` (7) records; member A
/// commits its positions after every poll and stops after about half of
/// 600 records, with more fetched than returned; member B, in the same
/// group, reads the rest: every record exactly once between them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_poll_records_bounds_polls_and_commits_kafka_4_4() {
    let kafka = kafka(SharedKafka::Kafka44Tv2).await;
    let topic = &*unique_name("bounded");
    let group = &*unique_name("bounded");
    kafka.create_topic(topic, 3, 1).await.expect("topic");
    produce(kafka, topic, 3, 0..600).await;
    let extra = [("max.poll.records", "7")];
    let mut values = Vec::new();
    let mut a = GroupConsumer::subscribe(config(kafka, group, &extra), [topic])
        .await
        .expect("member A");
    let until = deadline();
    while values.len() < 300 {
        check_time(until, "member A's half");
        if let ConsumerEvent::Records(r) = poll(&mut a).await {
            assert!(r.len() <= 7, "a poll returned {} records", r.len());
            values.extend(r.iter().map(value));
            assert!(commit(&a).await);
        }
    }
    a.close(Duration::from_secs(10)).await;
    let mut b = GroupConsumer::subscribe(config(kafka, group, &extra), [topic])
        .await
        .expect("member B");
    // B reads until each partition's position is at its end (200), so a
    // record A's commits skipped shows as missing, not as a timeout.
    let until = deadline();
    let at_end = |b: &GroupConsumer| {
        let p = b.positions();
        p.len() == 3 && p.iter().all(|(_, o)| *o == 200)
    };
    while !at_end(&b) {
        check_time(until, "member B's half");
        if let ConsumerEvent::Records(r) = poll(&mut b).await {
            assert!(r.len() <= 7, "a poll returned {} records", r.len());
            values.extend(r.iter().map(value));
        }
    }
    let unique: BTreeSet<u32> = values.iter().copied().collect();
    assert_eq!(unique.len(), values.len(), "a record read twice");
    let missing: Vec<u32> = (0..600).filter(|v| !unique.contains(v)).collect();
    assert!(
        missing.is_empty(),
        "{} records never returned, first {:?}",
        missing.len(),
        &missing[..missing.len().min(10)]
    );
    b.close(Duration::from_secs(10)).await;
}

/// With `max.poll.records=5` the first poll leaves fetched records
/// buffered; pausing every partition then returns nothing and keeps the
/// positions; resumed, the held-back records come first and every record
/// is returned once, in offset order per partition.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paused_records_are_held_back_not_lost_kafka_4_4() {
    let kafka = kafka(SharedKafka::Kafka44Tv2).await;
    let topic = &*unique_name("held");
    let group = &*unique_name("held");
    kafka.create_topic(topic, 2, 1).await.expect("topic");
    produce(kafka, topic, 2, 0..200).await;
    let extra = [("max.poll.records", "5")];
    let mut c = GroupConsumer::subscribe(config(kafka, group, &extra), [topic])
        .await
        .expect("consumer");
    let mut got: Vec<(i32, i64)> = Vec::new();
    let until = deadline();
    while got.is_empty() {
        check_time(until, "the first records");
        if let ConsumerEvent::Records(r) = poll(&mut c).await {
            got.extend(r.iter().map(|r| (r.partition, r.offset)));
        }
    }
    let owned = sorted(c.assignment());
    assert_eq!(owned.len(), 2);
    c.pause(&owned).expect("pause");
    let before = c.positions();
    for _ in 0..5 {
        match poll(&mut c).await {
            ConsumerEvent::Records(r) => assert!(r.is_empty(), "paused, yet returned {r:?}"),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(
        c.positions(),
        before,
        "positions move only with what is returned"
    );
    c.resume(&owned).expect("resume");
    let until = deadline();
    while got.len() < 200 {
        check_time(until, "every record");
        if let ConsumerEvent::Records(r) = poll(&mut c).await {
            assert!(r.len() <= 5);
            got.extend(r.iter().map(|r| (r.partition, r.offset)));
        }
    }
    for p in 0..2 {
        let offsets: Vec<i64> = got
            .iter()
            .filter(|(q, _)| *q == p)
            .map(|(_, o)| *o)
            .collect();
        assert_eq!(offsets, (0..100).collect::<Vec<_>>(), "partition {p}");
    }
    c.close(Duration::from_secs(10)).await;
}

/// With records fetched ahead (`max.poll.records=5`), a seek makes the
/// next poll start at the new position: the records fetched from the old
/// one are dropped. Seeks to the beginning, the end and a timestamp past
/// every record behave as Java's; a partition not owned is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seek_drops_the_records_fetched_from_the_old_position_kafka_4_4() {
    let kafka = kafka(SharedKafka::Kafka44Tv2).await;
    let topic = &*unique_name("seek");
    let group = &*unique_name("seek");
    kafka.create_topic(topic, 1, 1).await.expect("topic");
    produce(kafka, topic, 1, 0..100).await;
    let extra = [("max.poll.records", "5")];
    let mut c = GroupConsumer::subscribe(config(kafka, group, &extra), [topic])
        .await
        .expect("consumer");
    let tp = TopicPartition::new(topic, 0);
    // The offsets of the next non-empty poll.
    async fn next_offsets(c: &mut GroupConsumer) -> Vec<i64> {
        let until = deadline();
        loop {
            check_time(until, "records");
            if let ConsumerEvent::Records(r) = poll(c).await
                && !r.is_empty()
            {
                return r.iter().map(|r| r.offset).collect();
            }
        }
    }
    assert_eq!(next_offsets(&mut c).await, [0, 1, 2, 3, 4]);
    assert_eq!(c.seek(&tp, Offset::At(50)).await.expect("seek"), 50);
    assert_eq!(c.positions(), [(tp.clone(), 50)]);
    assert_eq!(next_offsets(&mut c).await, [50, 51, 52, 53, 54]);
    c.seek_to_beginning(std::slice::from_ref(&tp))
        .await
        .expect("seek");
    assert_eq!(next_offsets(&mut c).await, [0, 1, 2, 3, 4]);
    c.seek_to_end(std::slice::from_ref(&tp))
        .await
        .expect("seek");
    assert_eq!(c.positions(), [(tp.clone(), 100)]);
    let far = Offset::Timestamp(i64::MAX / 2);
    assert_eq!(
        c.seek(&tp, far).await.expect("seek"),
        100,
        "no record that late: the end"
    );
    produce(kafka, topic, 1, 100..101).await;
    assert_eq!(next_offsets(&mut c).await, [100]);
    let stranger = TopicPartition::new(topic, 7);
    assert!(matches!(
        c.seek(&stranger, Offset::Earliest).await,
        Err(GroupError::NotAssigned { partition: 7, .. })
    ));
    assert!(matches!(
        c.pause(&[tp.clone(), stranger.clone()]),
        Err(GroupError::NotAssigned { partition: 7, .. })
    ));
    assert!(c.paused().is_empty(), "nothing paused when one is refused");
    c.close(Duration::from_secs(10)).await;
}

/// `committed()` gives `None` before any commit, then what was committed
/// for the partitions committed and still `None` for the others, owned or
/// not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn committed_returns_what_the_group_committed_kafka_4_4() {
    let kafka = kafka(SharedKafka::Kafka44Tv2).await;
    let topic = &*unique_name("committed");
    let other = &*unique_name("committed-other");
    let group = &*unique_name("committed");
    kafka.create_topic(topic, 2, 1).await.expect("topic");
    kafka.create_topic(other, 1, 1).await.expect("topic");
    produce(kafka, topic, 2, 0..10).await;
    let mut c = GroupConsumer::subscribe(config(kafka, group, &[]), [topic])
        .await
        .expect("consumer");
    let until = deadline();
    while c.assignment().len() < 2 {
        check_time(until, "the assignment");
        poll(&mut c).await;
    }
    let p0 = TopicPartition::new(topic, 0);
    let p1 = TopicPartition::new(topic, 1);
    let o0 = TopicPartition::new(other, 0);
    let asked = [p0.clone(), p1.clone(), o0.clone()];
    let before = c.committed(&asked).await.expect("committed");
    assert_eq!(before.len(), 3);
    assert!(before.values().all(Option::is_none), "{before:?}");
    c.commit(&[(p0.clone(), 3)]).await.expect("commit");
    let after = c.committed(&asked).await.expect("committed");
    assert_eq!(after[&p0].as_ref().map(|o| o.offset), Some(3));
    assert_eq!(after[&p1], None);
    assert_eq!(after[&o0], None);
    c.close(Duration::from_secs(10)).await;
}

/// A member subscribed to `<prefix>-.*` reads the matching topic, then a
/// matching topic created after it joined, every record once, and nothing
/// of `<prefix>_other`.
async fn a_pattern_picks_up_a_topic_created_later(variant: SharedKafka, extra: &[(&str, &str)]) {
    let kafka = kafka(variant).await;
    let prefix = unique_name("rx");
    let first = format!("{prefix}-a");
    let later = format!("{prefix}-b");
    let other = format!("{prefix}_other");
    let group = &*unique_name("rx");
    kafka.create_topic(&first, 2, 1).await.expect("topic");
    kafka.create_topic(&other, 1, 1).await.expect("topic");
    produce(kafka, &first, 2, 0..20).await;
    produce(kafka, &other, 1, 1000..1010).await;
    let pattern = Subscription::pattern(format!("{prefix}-.*"));
    let mut c = GroupConsumer::subscribe_to(config(kafka, group, extra), pattern.clone())
        .await
        .expect("consumer");
    assert_eq!(c.subscription(), &pattern);
    let mut values: Vec<(String, u32)> = Vec::new();
    // Commits after each batch and on each revocation (a classic member
    // rejoins when the matching topics change: an eager one revokes
    // everything first).
    async fn read(c: &mut GroupConsumer, values: &mut Vec<(String, u32)>, again: &mut bool) {
        let commit_now = match poll(c).await {
            ConsumerEvent::Records(r) => {
                values.extend(r.iter().map(|r| (r.topic.to_string(), value(r))));
                !r.is_empty()
            }
            ConsumerEvent::Revoked(_) => true,
            ConsumerEvent::Assigned(_) => false,
            ConsumerEvent::Lost(parts) => panic!("lost {parts:?}"),
        };
        if commit_now || *again {
            *again = !commit(c).await;
        }
    }
    let mut again = false;
    let until = deadline();
    while values.len() < 20 {
        check_time(until, "the first topic's records");
        read(&mut c, &mut values, &mut again).await;
    }
    kafka.create_topic(&later, 2, 1).await.expect("topic");
    produce(kafka, &later, 2, 100..120).await;
    let until = deadline();
    while values.len() < 40 {
        check_time(until, "the later topic's records");
        read(&mut c, &mut values, &mut again).await;
    }
    let unique: BTreeSet<(String, u32)> = values.iter().cloned().collect();
    assert_eq!(unique.len(), values.len(), "a record read twice");
    let expected: BTreeSet<(String, u32)> = (0..20)
        .map(|v| (first.clone(), v))
        .chain((100..120).map(|v| (later.clone(), v)))
        .collect();
    assert_eq!(unique, expected);
    let topics: BTreeSet<String> = c
        .assignment()
        .iter()
        .map(|tp| tp.topic.to_string())
        .collect();
    assert_eq!(topics, BTreeSet::from([first.clone(), later.clone()]));
    c.close(Duration::from_secs(10)).await;
}

/// KIP-848: an expression the broker cannot compile is fatal
/// (INVALID_REGULAR_EXPRESSION), reported by poll.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_pattern_is_fatal_kafka_4_4() {
    let kafka = kafka(SharedKafka::Kafka44Tv2).await;
    let group = &*unique_name("rx-bad");
    let mut c =
        GroupConsumer::subscribe_to(config(kafka, group, &[]), Subscription::pattern("orders-("))
            .await
            .expect("consumer");
    let until = deadline();
    let e = loop {
        check_time(until, "the broker's verdict");
        match c.poll(Duration::from_millis(200)).await {
            Err(e) => break e,
            Ok(ConsumerEvent::Records(r)) if r.is_empty() => {}
            Ok(other) => panic!("{other:?}"),
        }
    };
    assert!(
        matches!(&e, GroupError::Member(m) if m.error == ErrorCode::InvalidRegularExpression),
        "{e}"
    );
    assert!(e.is_fatal());
}

/// KIP-848: the broker matches the expression (SubscribedTopicRegex).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pattern_picks_up_a_topic_created_later_kafka_4_4() {
    a_pattern_picks_up_a_topic_created_later(SharedKafka::Kafka44Tv2, &[]).await;
}

/// Classic: the member matches the expression on each metadata refresh.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pattern_picks_up_a_topic_created_later_kafka_3_9() {
    let mut extra = CLASSIC.to_vec();
    extra.push(("metadata.max.age.ms", "500"));
    a_pattern_picks_up_a_topic_created_later(SharedKafka::Kafka39, &extra).await;
}

/// A member reading topic `a` resubscribes to topic `b`: `a`'s partitions
/// are revoked, `b`'s assigned; it reads all of `b` and none of the
/// records written to `a` after the revocation.
async fn resubscribe_moves_to_the_new_topics(variant: SharedKafka, extra: &[(&str, &str)]) {
    let kafka = kafka(variant).await;
    let a = &*unique_name("resub-a");
    let b = &*unique_name("resub-b");
    let group = &*unique_name("resub");
    kafka.create_topic(a, 2, 1).await.expect("topic");
    kafka.create_topic(b, 2, 1).await.expect("topic");
    produce(kafka, a, 2, 0..20).await;
    produce(kafka, b, 2, 100..120).await;
    let mut c = GroupConsumer::subscribe(config(kafka, group, extra), [a])
        .await
        .expect("consumer");
    let mut from_a = 0;
    let until = deadline();
    while from_a < 20 {
        check_time(until, "topic a's records");
        if let ConsumerEvent::Records(r) = poll(&mut c).await {
            assert!(r.iter().all(|r| &*r.topic == a));
            from_a += r.len();
            commit(&c).await;
        }
    }
    c.resubscribe(Subscription::topics([b]))
        .expect("resubscribe");
    assert_eq!(c.subscription(), &Subscription::topics([b]));
    let mut revoked: BTreeSet<TopicPartition> = BTreeSet::new();
    let mut values: BTreeMap<u32, usize> = BTreeMap::new();
    let mut wrote_late = false;
    let until = deadline();
    while values.len() < 20 {
        check_time(until, "topic b's records");
        match poll(&mut c).await {
            ConsumerEvent::Records(r) => {
                for rec in &r {
                    assert_eq!(&*rec.topic, b, "a record of the old topic after the switch");
                    *values.entry(value(rec)).or_default() += 1;
                }
            }
            ConsumerEvent::Revoked(parts) => {
                assert!(parts.iter().all(|tp| &*tp.topic == a), "revoked {parts:?}");
                revoked.extend(parts);
                commit(&c).await;
                if !wrote_late {
                    produce(kafka, a, 2, 20..30).await;
                    wrote_late = true;
                }
            }
            ConsumerEvent::Assigned(parts) => {
                assert!(parts.iter().all(|tp| &*tp.topic == b), "assigned {parts:?}")
            }
            ConsumerEvent::Lost(parts) => panic!("lost {parts:?}"),
        }
    }
    assert_eq!(
        revoked,
        BTreeSet::from([TopicPartition::new(a, 0), TopicPartition::new(a, 1)])
    );
    assert!(
        values.values().all(|n| *n == 1),
        "a record read twice: {values:?}"
    );
    assert_eq!(
        values.keys().copied().collect::<BTreeSet<_>>(),
        (100..120).collect()
    );
    assert_eq!(
        sorted(c.assignment()),
        vec![TopicPartition::new(b, 0), TopicPartition::new(b, 1)]
    );
    c.close(Duration::from_secs(10)).await;
}

/// KIP-848: the next heartbeat carries the new topics.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resubscribe_moves_to_the_new_topics_kafka_4_4() {
    resubscribe_moves_to_the_new_topics(SharedKafka::Kafka44Tv2, &[]).await;
}

/// Classic (Java's default assignors, eager): the member rejoins.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resubscribe_moves_to_the_new_topics_kafka_3_9() {
    resubscribe_moves_to_the_new_topics(SharedKafka::Kafka39, &CLASSIC).await;
}
