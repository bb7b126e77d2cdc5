//! The KIP-848 group consumer against a real Kafka 4.4 broker.
//!
//! Invariants:
//! - a partition is owned by at most one member at a time: a member is
//!   assigned a partition only after its previous owner was told it is
//!   revoked (or lost);
//! - with offsets committed on every batch and on every revocation, two
//!   members that split a topic mid-stream consume every record exactly
//!   once between them;
//! - a member that stopped polling (a zombie) is removed from the group
//!   and its transactional offset commit is refused (KIP-447), while the
//!   live member that took over its partitions commits;
//! - commits made without waiting apply in the order they were made, and
//!   `enable.auto.commit` commits what poll returned: every interval,
//!   before a revocation is reported, and on close.
//!
//! Every test runs on the harness's shared Kafka 4.4 cluster (its KIP-848
//! heartbeat interval is 500 ms: faster rebalances than the 5 s default),
//! with topic, group and transactional id names of its own. The split and
//! zombie scenarios also run on kafka-mock (three brokers, the same
//! heartbeat interval): the same assertions hold there.

use kafka_admin as admin;
use kafka_client::{Cluster, ClusterConfig};
use kafka_consumer::ConsumerRecord;
use kafka_consumer::{ConsumerEvent, GroupConsumer, GroupError};
use kafka_mock::{MockCluster, MockConfig};
use kafka_producer::{ProducerConfig, ProducerRecord, TopicPartition, TransactionalProducer};
use kafka_testcontainers::KafkaCluster;
use kafka_testcontainers::{SharedKafka, unique_name};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support;
use support::brokers::Brokers;
use support::group_consumer::{Log, PARTITIONS, config, member, produce, wait_for};

/// The shared Kafka 4.4 cluster (other tests use it too: names are unique).
async fn kafka() -> &'static KafkaCluster {
    SharedKafka::Kafka44Tv2
        .cluster()
        .await
        .expect("shared Kafka 4.4")
}

/// A three-broker kafka-mock cluster as Kafka 4.4 with transaction version
/// 2, telling KIP-848 members to heartbeat every 500 ms like the shared
/// real cluster.
async fn mock() -> MockCluster {
    MockCluster::start(MockConfig {
        brokers: 3,
        consumer_group_heartbeat_interval: Duration::from_millis(500),
        ..MockConfig::default()
    })
    .await
    .expect("kafka-mock")
}

/// Two members split a topic mid-stream: every partition member 2 gets was
/// revoked from member 1 first, every record is consumed exactly once
/// between them, and everything consumed is committed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_members_split_a_topic_and_consume_each_record_once_kafka_4_4_tv2() {
    two_members_split_a_topic(kafka().await).await;
}

/// The same on kafka-mock.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_members_split_a_topic_and_consume_each_record_once_on_kafka_mock() {
    two_members_split_a_topic(&mock().await).await;
}

async fn two_members_split_a_topic(kafka: &dyn Brokers) {
    let topic = &*unique_name("orders");
    let group = &*unique_name("split");
    kafka.create_topic(topic, PARTITIONS, 1).await;
    produce(kafka, topic, PARTITIONS, 0..1000).await;

    let log = Arc::new(Mutex::new(Log::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let c1 = GroupConsumer::subscribe(config(kafka, group, &[]), [topic])
        .await
        .unwrap();
    let t1 = tokio::spawn(member(1, c1, log.clone(), stop.clone()));
    wait_for(
        "member 1 to own every partition and read phase 1",
        &log,
        |l| l.owner.len() == PARTITIONS as usize && l.consumed.len() >= 1000,
    )
    .await;

    let c2 = GroupConsumer::subscribe(config(kafka, group, &[]), [topic])
        .await
        .unwrap();
    let t2 = tokio::spawn(member(2, c2, log.clone(), stop.clone()));
    wait_for("the partitions to be split", &log, |l| {
        let mine = l.owner.values().filter(|o| **o == 2).count();
        mine > 0 && l.owner.len() == PARTITIONS as usize && mine < PARTITIONS as usize
    })
    .await;

    produce(kafka, topic, PARTITIONS, 1000..2000).await;
    wait_for("every record", &log, |l| l.consumed.len() >= 2000).await;
    stop.store(true, Ordering::SeqCst);
    let (c1, c2) = (t1.await.unwrap(), t2.await.unwrap());
    // Everything consumed is committed: a later member resumes at the end,
    // so no record is consumed again.
    let reader = kafka_consumer::Reader::new(
        kafka_client::Cluster::connect(kafka_client::ClusterConfig::new(&kafka.bootstrap()))
            .await
            .unwrap(),
        Default::default(),
    );
    let committed = reader
        .committed_offsets(group, topic, &(0..PARTITIONS).collect::<Vec<_>>())
        .await
        .unwrap();
    let per_partition = 2000 / PARTITIONS as i64;
    assert!(
        committed.values().all(|o| *o == Some(per_partition)),
        "{committed:?}"
    );

    {
        let l = log.lock().unwrap();
        assert!(l.violations.is_empty(), "{:?}", l.violations);
        let values: Vec<u32> = l.consumed.iter().map(|(v, _)| *v).collect();
        let unique: BTreeSet<u32> = values.iter().copied().collect();
        assert_eq!(unique, (0..2000).collect::<BTreeSet<_>>(), "every record");
        assert_eq!(values.len(), 2000, "no record twice");
        let by_two = l
            .consumed
            .iter()
            .filter(|(v, m)| *v >= 1000 && *m == 2)
            .count();
        assert!(by_two > 0, "member 2 consumed part of phase 2");
        // Every partition member 2 got had been revoked from member 1 first.
        for (m, p) in &l.assigned {
            if *m == 2 {
                assert!(
                    l.revoked.contains(&(1, *p)),
                    "partition {p} moved without a revocation"
                );
            }
        }
    }
    c1.close(Duration::from_secs(5)).await;
    c2.close(Duration::from_secs(5)).await;
}

/// KIP-447: a member that stops polling is removed from the group; the
/// offsets its transaction sends with its (now stale) group metadata are
/// refused, so its transaction cannot commit; the member that took over
/// commits offsets and output in one transaction.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zombie_members_transaction_is_fenced_after_a_rebalance_kafka_4_4_tv2() {
    a_zombie_is_fenced(kafka().await).await;
}

/// The same on kafka-mock.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zombie_members_transaction_is_fenced_after_a_rebalance_on_kafka_mock() {
    a_zombie_is_fenced(&mock().await).await;
}

async fn a_zombie_is_fenced(kafka: &dyn Brokers) {
    let (input, output) = (&*unique_name("zombie-in"), &*unique_name("zombie-out"));
    let group = &*unique_name("copy");
    kafka.create_topic(input, 1, 1).await;
    kafka.create_topic(output, 1, 1).await;
    produce(kafka, input, 1, 0..10).await;

    let txn = |id: &str| {
        ProducerConfig::from_properties([
            ("bootstrap.servers", kafka.bootstrap().as_str()),
            ("transactional.id", id),
        ])
        .unwrap()
    };
    // The zombie: owns the partition, opens a transaction, then stops polling.
    let mut zombie = GroupConsumer::subscribe(
        config(kafka, group, &[("max.poll.interval.ms", "2000")]),
        [input],
    )
    .await
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut read = Vec::new();
    while read.len() < 10 {
        assert!(Instant::now() < deadline, "the zombie never read its input");
        if let ConsumerEvent::Records(r) = zombie.poll(Duration::from_millis(200)).await.unwrap() {
            read.extend(r);
        }
    }
    let zombie_meta = zombie.group_metadata();
    assert!(zombie_meta.generation_id > 0);
    let zombie_positions = zombie.positions();
    let zp = TransactionalProducer::connect(txn(&unique_name("copier-a")))
        .await
        .unwrap();
    zp.init_transactions().await.unwrap();
    zp.begin_transaction().unwrap();
    let zombie_output = zp.send(ProducerRecord::new(output).value("from the zombie"));

    // A second member joins; the zombie misses max.poll.interval.ms, leaves,
    // and the partition moves to the live member.
    let mut live = GroupConsumer::subscribe(config(kafka, group, &[]), [input])
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        assert!(
            Instant::now() < deadline,
            "the live member never got the partition"
        );
        let event = live.poll(Duration::from_millis(200)).await.unwrap();
        if matches!(&event, ConsumerEvent::Assigned(parts) if !parts.is_empty()) {
            break;
        }
    }

    // The zombie's offsets carry its old member id and epoch: refused.
    let offsets: Vec<(TopicPartition, i64, Option<String>)> = zombie_positions
        .iter()
        .map(|(tp, o)| (tp.clone(), *o, None))
        .collect();
    let fenced = zp.send_offsets_to_transaction(&offsets, &zombie_meta).await;
    assert!(fenced.is_err(), "the zombie's offsets were accepted");
    assert!(
        zp.commit_transaction().await.is_err(),
        "the zombie's transaction committed"
    );
    zp.abort_transaction().await.expect("the zombie aborts");
    // Written to the log or not, the record belongs to an aborted transaction.
    let _ = zombie_output.await;

    // The live member reads from the committed offset (none: the beginning)
    // and commits its output with its offsets.
    let mut got = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while got.len() < 10 {
        assert!(
            Instant::now() < deadline,
            "the live member read {}",
            got.len()
        );
        if let ConsumerEvent::Records(r) = live.poll(Duration::from_millis(200)).await.unwrap() {
            got.extend(r);
        }
    }
    let lp = TransactionalProducer::connect(txn(&unique_name("copier-b")))
        .await
        .unwrap();
    lp.init_transactions().await.unwrap();
    lp.begin_transaction().unwrap();
    let live_output = lp.send(ProducerRecord::new(output).value("from the live member"));
    // The offsets carry the leader epoch of the last record read (KIP-320).
    let offsets = live.transaction_offsets();
    assert_eq!(offsets.len(), 1);
    assert_eq!(
        (offsets[0].1.offset, offsets[0].1.leader_epoch),
        (10, Some(0))
    );
    lp.send_offsets_and_metadata_to_transaction(offsets, &live.group_metadata())
        .await
        .expect("the live member's offsets");
    lp.commit_transaction()
        .await
        .expect("the live member commits");
    live_output.await.expect("the live member's record");

    // read_committed sees the live member's output only. A commit returns
    // once the coordinator decided it; the markers that move the last stable
    // offset past the record follow: the reader waits until no transaction
    // is open on the partition, then reads all there is.
    let mut reader = kafka_consumer::Reader::new(
        kafka_client::Cluster::connect(kafka_client::ClusterConfig::new(&kafka.bootstrap()))
            .await
            .unwrap(),
        Default::default(),
    );
    reader
        .wait_until_stable(output, &[0], Duration::from_secs(30))
        .await
        .expect("the zombie's abort and the live member's commit end");
    let visible: Vec<_> = reader
        .read_to_end(output, &[0])
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.value.unwrap())
        .collect();
    assert_eq!(visible, [bytes::Bytes::from("from the live member")]);

    // A commit by the zombie consumer itself is refused too.
    match zombie.commit(&[(TopicPartition::new(input, 0), 10)]).await {
        Err(GroupError::Commit { .. }) | Err(GroupError::Member(_)) => {}
        other => panic!("the zombie's own commit: {other:?}"),
    }
    live.close(Duration::from_secs(5)).await;
}

/// The consumer as a `Stream`: the assignment comes first, then every
/// record once, in order; between items the consumer is free to commit,
/// and nothing is fetched ahead of what the stream handed out (the position
/// is right after the last record returned).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_event_stream_yields_the_assignment_then_each_record_on_demand_kafka_4_4_tv2() {
    use std::future::poll_fn;
    use std::pin::Pin;
    async fn next(
        events: &mut kafka_consumer::EventStream,
    ) -> Option<Result<ConsumerEvent, GroupError>> {
        poll_fn(|cx| futures_core::Stream::poll_next(Pin::new(&mut *events), cx)).await
    }
    let kafka = kafka().await;
    let topic = &*unique_name("streamed");
    kafka.create_topic(topic, 1, 1).await.unwrap();
    produce(kafka, topic, 1, 0..300).await;
    let consumer = GroupConsumer::subscribe(config(kafka, &unique_name("stream"), &[]), [topic])
        .await
        .unwrap();
    let mut events = consumer.into_stream(Duration::from_millis(200));
    let first = tokio::time::timeout(Duration::from_secs(60), next(&mut events))
        .await
        .expect("an event")
        .expect("not the end")
        .expect("no error");
    assert_eq!(
        first,
        ConsumerEvent::Assigned(vec![TopicPartition::new(topic, 0)])
    );
    let mut values = Vec::new();
    while values.len() < 300 {
        let event = tokio::time::timeout(Duration::from_secs(60), next(&mut events))
            .await
            .expect("an event")
            .expect("not the end")
            .expect("no error");
        let ConsumerEvent::Records(records) = event else {
            panic!("unexpected {event:?}");
        };
        let last = records.last().expect("no empty item").offset;
        values.extend(records.iter().map(|r| r.value.clone().unwrap()));
        let c = events.consumer().expect("between items");
        assert_eq!(c.positions(), [(TopicPartition::new(topic, 0), last + 1)]);
        c.commit_positions().await.unwrap();
    }
    let want: Vec<bytes::Bytes> = (0..300).map(|i: u32| i.to_string().into()).collect();
    assert_eq!(values, want);
    events
        .into_consumer()
        .expect("between items")
        .close(Duration::from_secs(5))
        .await;
}

/// The group's committed offset of each partition of `topic`.
async fn committed(kafka: &KafkaCluster, group: &str, topic: &str) -> BTreeMap<i32, i64> {
    let cluster = Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
        .await
        .unwrap();
    admin::committed_offsets(&cluster, group)
        .await
        .unwrap()
        .into_iter()
        .filter(|(tp, _)| &*tp.topic == topic)
        .map(|(tp, o)| (tp.partition, o))
        .collect()
}

/// Polls `consumer` until it returned `n` records (the assignment first).
async fn consume(consumer: &mut GroupConsumer, n: usize) -> Vec<ConsumerRecord> {
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut got = Vec::new();
    while got.len() < n {
        assert!(Instant::now() < deadline, "{} of {n} records", got.len());
        if let ConsumerEvent::Records(r) = consumer.poll(Duration::from_millis(200)).await.unwrap()
        {
            got.extend(r);
        }
    }
    got
}

/// Invariant (Java's `commitAsync` ordering): commits made without waiting
/// reach the coordinator in the order they were made, so after a burst of
/// 400 of them, one per record, the group's committed offset is the last
/// one, and every commit succeeded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_async_commits_leaves_the_last_offset_committed_kafka_4_4_tv2() {
    let kafka = kafka().await;
    let topic = &*unique_name("async-commits");
    let group = &*unique_name("async");
    kafka.create_topic(topic, 1, 1).await.unwrap();
    produce(kafka, topic, 1, 0..400).await;
    let mut consumer = GroupConsumer::subscribe(config(kafka, group, &[]), [topic])
        .await
        .unwrap();
    let records = consume(&mut consumer, 400).await;
    let tp = TopicPartition::new(topic, 0);
    let pending: Vec<_> = records
        .iter()
        .map(|r| consumer.commit_async(&[(tp.clone(), r.offset + 1)]))
        .collect();
    for (i, p) in pending.into_iter().enumerate() {
        p.await.unwrap_or_else(|e| panic!("commit {i}: {e}"));
    }
    assert_eq!(
        committed(kafka, group, topic).await,
        BTreeMap::from([(0, 400)])
    );
    consumer.close(Duration::from_secs(5)).await;
}

/// Invariant (`enable.auto.commit=true`): the positions of what `poll`
/// returned are committed within an interval of a later poll, with no
/// commit call from the application.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_commit_commits_the_positions_of_returned_records_kafka_4_4_tv2() {
    let kafka = kafka().await;
    let topic = &*unique_name("auto-commit");
    let group = &*unique_name("auto");
    kafka.create_topic(topic, 2, 1).await.unwrap();
    produce(kafka, topic, 2, 0..300).await;
    let settings = [
        ("enable.auto.commit", "true"),
        ("auto.commit.interval.ms", "100"),
    ];
    let mut consumer = GroupConsumer::subscribe(config(kafka, group, &settings), [topic])
        .await
        .unwrap();
    consume(&mut consumer, 300).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        consumer.poll(Duration::from_millis(150)).await.unwrap();
        let c = committed(kafka, group, topic).await;
        if c == BTreeMap::from([(0, 150), (1, 150)]) {
            break;
        }
        assert!(Instant::now() < deadline, "committed {c:?}");
    }
    consumer.close(Duration::from_secs(5)).await;
}

/// Invariant (`enable.auto.commit=true`): closing commits the positions,
/// even when the interval has not passed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_commit_commits_the_positions_on_close_kafka_4_4_tv2() {
    let kafka = kafka().await;
    let topic = &*unique_name("auto-commit-close");
    let group = &*unique_name("auto-close");
    kafka.create_topic(topic, 1, 1).await.unwrap();
    produce(kafka, topic, 1, 0..100).await;
    let settings = [
        ("enable.auto.commit", "true"),
        ("auto.commit.interval.ms", "3600000"),
    ];
    let mut consumer = GroupConsumer::subscribe(config(kafka, group, &settings), [topic])
        .await
        .unwrap();
    consume(&mut consumer, 100).await;
    assert_eq!(committed(kafka, group, topic).await, BTreeMap::new());
    consumer.close(Duration::from_secs(10)).await;
    assert_eq!(
        committed(kafka, group, topic).await,
        BTreeMap::from([(0, 100)])
    );
}

/// Invariant (`enable.auto.commit=true`): when a partition is revoked,
/// its position is committed before the revocation is reported, so the
/// next owner starts after the records the first member consumed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_commit_commits_a_revoked_partition_before_reporting_it_kafka_4_4_tv2() {
    let kafka = kafka().await;
    let topic = &*unique_name("auto-commit-revoke");
    kafka.create_topic(topic, 2, 1).await.unwrap();
    produce(kafka, topic, 2, 0..200).await;
    let settings = [
        ("enable.auto.commit", "true"),
        ("auto.commit.interval.ms", "3600000"),
    ];
    let group = &*unique_name("auto-revoke");
    let mut first = GroupConsumer::subscribe(config(kafka, group, &settings), [topic])
        .await
        .unwrap();
    consume(&mut first, 200).await;
    let second = GroupConsumer::subscribe(config(kafka, group, &settings), [topic])
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(90);
    let revoked = loop {
        assert!(Instant::now() < deadline, "no revocation");
        if let ConsumerEvent::Revoked(parts) = first.poll(Duration::from_millis(200)).await.unwrap()
        {
            break parts;
        }
    };
    assert_eq!(revoked.len(), 1, "{revoked:?}");
    let c = committed(kafka, group, topic).await;
    assert_eq!(c, BTreeMap::from([(revoked[0].partition, 100)]));
    second.close(Duration::from_secs(5)).await;
    first.close(Duration::from_secs(5)).await;
}
