//! The classic-protocol group consumer (`group.protocol=classic`) against
//! real Kafka 3.9 brokers (where it is the only protocol) and 4.4 (which
//! still serves classic groups).
//!
//! Invariants:
//! - a partition is owned by at most one member at a time: a member is
//!   assigned a partition only after its previous owner was told it is
//!   revoked (eager `range`: everything before the join; incremental
//!   `cooperative-sticky`: only what moves, in two rebalances);
//! - with offsets committed on every batch and on every revocation, two
//!   members that split a topic mid-stream consume every record exactly
//!   once between them;
//! - a member that stopped polling (a zombie) leaves the group and its
//!   transactional offset commit, sent with its old generation, is refused
//!   (KIP-447), while the live member that took over its partitions commits.
//!
//! The tests run on the harness's shared Kafka 3.9 and 4.4 clusters (no
//! initial rebalance delay: a new group does not wait 3 s for more members),
//! with topic, group and transactional id names of their own, except the
//! eviction test, which cuts its member off with a fault proxy and so starts
//! a broker of its own. The zombie and static-member scenarios also run on
//! kafka-mock as Kafka 3.9 (three brokers): the same assertions hold there.

use kafka_admin::{self as admin, CreateTopicsOptions};
use kafka_client::{Cluster, ClusterConfig};
use kafka_consumer::{ConsumerEvent, GroupConsumer, GroupConsumerConfig, GroupError};
use kafka_mock::{KafkaRelease, MockCluster, MockConfig};
use kafka_producer::{ProducerConfig, ProducerRecord, TopicPartition, TransactionalProducer};
use kafka_testcontainers::{KafkaCluster, KafkaVersion};
use kafka_testcontainers::{SharedKafka, unique_name};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support;
use support::brokers::Brokers;
use support::group_consumer::{Log, PARTITIONS, member, produce, wait_for};

/// A three-broker kafka-mock cluster advertising Kafka 3.9 (classic
/// groups only).
async fn mock_3_9() -> MockCluster {
    MockCluster::start(MockConfig {
        brokers: 3,
        release: KafkaRelease::V3_9,
        ..MockConfig::default()
    })
    .await
    .expect("kafka-mock")
}

/// The shared cluster of `variant` (other tests use it too: names are
/// unique).
async fn kafka(variant: SharedKafka) -> &'static KafkaCluster {
    variant
        .cluster()
        .await
        .unwrap_or_else(|e| panic!("shared Kafka {variant}: {e}"))
}

/// The shared consumer settings under the classic protocol: the broker's
/// smallest session timeout, heartbeats every 500 ms.
fn config(kafka: &dyn Brokers, group: &str, extra: &[(&str, &str)]) -> GroupConsumerConfig {
    let mut props = vec![
        ("group.protocol", "classic"),
        ("session.timeout.ms", "6000"),
        ("heartbeat.interval.ms", "500"),
    ];
    props.extend_from_slice(extra);
    support::group_consumer::config(kafka, group, &props)
}

/// Two members split a topic mid-stream with `strategy`; every record is
/// consumed once and every partition moves only after its revocation. An
/// eager member revokes everything when the second one joins; a
/// cooperative one revokes only what moves to the newcomer.
async fn two_members_split_a_topic(variant: SharedKafka, strategy: &str, cooperative: bool) {
    let kafka = kafka(variant).await;
    let extra = [("partition.assignment.strategy", strategy)];
    let topic = &*unique_name("orders");
    let group = &*unique_name("split");
    kafka.create_topic(topic, PARTITIONS, 1).await.unwrap();
    produce(kafka, topic, PARTITIONS, 0..1000).await;

    let log = Arc::new(Mutex::new(Log::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let c1 = GroupConsumer::subscribe(config(kafka, group, &extra), [topic])
        .await
        .unwrap();
    let t1 = tokio::spawn(member(1, c1, log.clone(), stop.clone()));
    wait_for(
        "member 1 to own every partition and read phase 1",
        &log,
        |l| l.owner.len() == PARTITIONS as usize && l.consumed.len() >= 1000,
    )
    .await;

    let c2 = GroupConsumer::subscribe(config(kafka, group, &extra), [topic])
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
        let to_two: BTreeSet<i32> = l
            .assigned
            .iter()
            .filter(|(m, _)| *m == 2)
            .map(|(_, p)| *p)
            .collect();
        for p in &to_two {
            assert!(
                l.revoked.contains(&(1, *p)),
                "partition {p} moved without a revocation"
            );
        }
        let from_one: BTreeSet<i32> = l
            .revoked
            .iter()
            .filter(|(m, _)| *m == 1)
            .map(|(_, p)| *p)
            .collect();
        if cooperative {
            assert_eq!(from_one, to_two, "member 1 revoked only what moved");
            assert_eq!(to_two.len(), PARTITIONS as usize / 2, "balanced");
        } else {
            assert_eq!(
                from_one,
                (0..PARTITIONS).collect::<BTreeSet<_>>(),
                "an eager member revokes everything"
            );
        }
    }
    c1.close(Duration::from_secs(5)).await;
    c2.close(Duration::from_secs(5)).await;
}

/// Eager `range` members on Kafka 3.9: member 1 revokes every partition
/// when member 2 joins; every record consumed once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn range_members_split_a_topic_and_consume_each_record_once_on_3_9() {
    two_members_split_a_topic(SharedKafka::Kafka39, "range", false).await;
}

/// Incremental `cooperative-sticky` members on Kafka 3.9: member 1 revokes
/// only the half that moves to member 2; every record consumed once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cooperative_sticky_members_split_a_topic_and_consume_each_record_once_on_3_9() {
    two_members_split_a_topic(
        SharedKafka::Kafka39,
        "org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
        true,
    )
    .await;
}

/// Classic members on Kafka 4.4 with Java's default assignor list: the
/// group picks `range`, the members are eager and revoke everything; every
/// record consumed once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn classic_members_split_a_topic_and_consume_each_record_once_on_4_4() {
    // Java's default list: the group picks range, the members are eager.
    two_members_split_a_topic(SharedKafka::Kafka44Tv2, "range,cooperative-sticky", false).await;
}

/// KIP-447: a member that stops polling is removed from the group; the
/// offsets its transaction sends with its (now stale) group metadata are
/// refused, so its transaction cannot commit; the member that took over
/// commits offsets and output in one transaction.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zombie_members_transaction_is_fenced_after_a_rebalance_on_3_9() {
    a_zombie_is_fenced(kafka(SharedKafka::Kafka39).await).await;
}

/// The same on kafka-mock.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zombie_members_transaction_is_fenced_after_a_rebalance_on_kafka_mock() {
    a_zombie_is_fenced(&mock_3_9().await).await;
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

    // A second member joins; the zombie, asked to revoke, misses
    // max.poll.interval.ms and sends LeaveGroup, and the partition moves to
    // the live member.
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

    // The zombie's offsets carry its old member id and generation: refused
    // (UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION).
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
    let offsets: Vec<(TopicPartition, i64, Option<String>)> = live
        .positions()
        .into_iter()
        .map(|(tp, o)| (tp, o, None))
        .collect();
    lp.send_offsets_to_transaction(&offsets, &live.group_metadata())
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

/// Static membership (KIP-345): a replacement process joining with the same
/// `group.instance.id` takes the zombie's place and its partitions without a
/// rebalance; the zombie's transactional offsets are refused
/// (FENCED_INSTANCE_ID), the zombie itself stops with a fatal
/// FENCED_INSTANCE_ID, and the replacement commits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_static_zombie_is_fenced_by_its_replacement_on_3_9() {
    a_static_zombie_is_fenced(kafka(SharedKafka::Kafka39).await).await;
}

/// The same on kafka-mock.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_static_zombie_is_fenced_by_its_replacement_on_kafka_mock() {
    a_static_zombie_is_fenced(&mock_3_9().await).await;
}

async fn a_static_zombie_is_fenced(kafka: &dyn Brokers) {
    let (input, output) = (&*unique_name("static-in"), &*unique_name("static-out"));
    let group = &*unique_name("static");
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
    let static_id = [("group.instance.id", "copier-1")];

    let mut zombie = GroupConsumer::subscribe(config(kafka, group, &static_id), [input])
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut read = 0;
    while read < 10 {
        assert!(Instant::now() < deadline, "the zombie never read its input");
        if let ConsumerEvent::Records(r) = zombie.poll(Duration::from_millis(200)).await.unwrap() {
            read += r.len();
        }
    }
    let zombie_meta = zombie.group_metadata();
    assert_eq!(zombie_meta.group_instance_id.as_deref(), Some("copier-1"));
    let zombie_positions = zombie.positions();

    // The replacement takes the zombie's place and its partition.
    let mut live = GroupConsumer::subscribe(config(kafka, group, &static_id), [input])
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        assert!(
            Instant::now() < deadline,
            "the replacement never got the partition"
        );
        let event = live.poll(Duration::from_millis(200)).await.unwrap();
        if matches!(&event, ConsumerEvent::Assigned(parts) if !parts.is_empty()) {
            break;
        }
    }
    assert_ne!(live.member_id(), zombie_meta.member_id);

    // The zombie's offsets, sent with its old member id: refused.
    let zp = TransactionalProducer::connect(txn(&unique_name("static-a")))
        .await
        .unwrap();
    zp.init_transactions().await.unwrap();
    zp.begin_transaction().unwrap();
    let offsets: Vec<(TopicPartition, i64, Option<String>)> = zombie_positions
        .iter()
        .map(|(tp, o)| (tp.clone(), *o, None))
        .collect();
    assert!(
        zp.send_offsets_to_transaction(&offsets, &zombie_meta)
            .await
            .is_err(),
        "the zombie's offsets were accepted"
    );
    zp.abort_transaction().await.expect("the zombie aborts");

    // The zombie's next heartbeat is fenced: fatal.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(Instant::now() < deadline, "the zombie was never fenced");
        match zombie.poll(Duration::from_millis(200)).await {
            Err(GroupError::Member(e)) => {
                assert_eq!(e.error, kafka_proto::ErrorCode::FencedInstanceId, "{e}");
                break;
            }
            Err(e) => panic!("the zombie: {e}"),
            Ok(_) => {}
        }
    }

    // The replacement reads from the beginning (nothing committed) and
    // commits its offsets in its transaction.
    let mut got = 0;
    let deadline = Instant::now() + Duration::from_secs(60);
    while got < 10 {
        assert!(Instant::now() < deadline, "the replacement read {got}");
        if let ConsumerEvent::Records(r) = live.poll(Duration::from_millis(200)).await.unwrap() {
            got += r.len();
        }
    }
    let lp = TransactionalProducer::connect(txn(&unique_name("static-b")))
        .await
        .unwrap();
    lp.init_transactions().await.unwrap();
    lp.begin_transaction().unwrap();
    let sent = lp.send(ProducerRecord::new(output).value("from the replacement"));
    let offsets: Vec<(TopicPartition, i64, Option<String>)> = live
        .positions()
        .into_iter()
        .map(|(tp, o)| (tp, o, None))
        .collect();
    lp.send_offsets_to_transaction(&offsets, &live.group_metadata())
        .await
        .expect("the replacement's offsets");
    lp.commit_transaction()
        .await
        .expect("the replacement commits");
    sent.await.expect("the replacement's record");
    let reader = kafka_consumer::Reader::new(
        kafka_client::Cluster::connect(kafka_client::ClusterConfig::new(&kafka.bootstrap()))
            .await
            .unwrap(),
        Default::default(),
    );
    let committed = reader.committed_offsets(group, input, &[0]).await.unwrap();
    assert_eq!(committed[&0], Some(10));
    live.close(Duration::from_secs(5)).await;
}

/// The leader watches the partition counts it assigned from: partitions
/// added to the topic trigger a rebalance that assigns them (Java's
/// `ConsumerCoordinator` metadata snapshot), and their records are read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_leader_assigns_partitions_added_to_the_topic_on_3_9() {
    let kafka = kafka(SharedKafka::Kafka39).await;
    let topic = &*unique_name("growing");
    kafka.create_topic(topic, 2, 1).await.unwrap();
    produce(kafka, topic, 2, 0..100).await;
    let log = Arc::new(Mutex::new(Log::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let c = GroupConsumer::subscribe(
        config(
            kafka,
            &unique_name("grow"),
            &[("metadata.max.age.ms", "500")],
        ),
        [topic],
    )
    .await
    .unwrap();
    let task = tokio::spawn(member(1, c, log.clone(), stop.clone()));
    wait_for("the first two partitions", &log, |l| {
        l.owner.len() == 2 && l.consumed.len() >= 100
    })
    .await;

    // CreatePartitions from our admin client (the Java TopicCommand would
    // cost a JVM start).
    let admin_client = Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
        .await
        .expect("connect");
    let options = CreateTopicsOptions {
        timeout: Duration::from_secs(60),
        wait_for_leaders: true,
        ..Default::default()
    };
    let grown = admin::create_partitions(&admin_client, &[(topic, 4)], &options)
        .await
        .unwrap();
    assert_eq!(grown[0].outcome, Ok(()), "{topic} grown to 4 partitions");
    kafka
        .wait_for_topic(topic, 4, Duration::from_secs(60))
        .await
        .unwrap();
    produce(kafka, topic, 4, 100..200).await;

    wait_for("every record of the four partitions", &log, |l| {
        l.owner.len() == 4 && l.consumed.len() >= 200
    })
    .await;
    stop.store(true, Ordering::SeqCst);
    let c = task.await.unwrap();
    {
        let l = log.lock().unwrap();
        let values: BTreeSet<u32> = l.consumed.iter().map(|(v, _)| *v).collect();
        assert_eq!(values, (0..200).collect::<BTreeSet<_>>());
        assert_eq!(l.consumed.len(), 200, "no record twice");
        assert!(l.assigned.contains(&(1, 3)), "{:?}", l.assigned);
    }
    c.close(Duration::from_secs(5)).await;
}

/// Number of members of `group`, asked from the broker directly (not
/// through the proxy).
async fn group_members(kafka: &KafkaCluster, group: &str) -> usize {
    let addr = kafka.direct_broker_addrs()[0].to_string();
    let conn = kafka_client::Connection::connect(&addr, &Default::default())
        .await
        .expect("direct connection");
    let resp = conn
        .send_negotiated(&kafka_proto::messages::DescribeGroupsRequest {
            groups: vec![group.to_string()],
            ..Default::default()
        })
        .await
        .expect("DescribeGroups");
    conn.close();
    resp.groups[0].members.len()
}

/// A Kafka 3.9 node of the test's own behind the harness's fault proxy
/// (no initial rebalance delay).
async fn proxied_3_9() -> KafkaCluster {
    KafkaCluster::builder()
        .version(KafkaVersion::V3_9)
        .nodes(1)
        .with_proxies(true)
        .broker_config("group.initial.rebalance.delay.ms", "0")
        .start()
        .await
        .expect("start Kafka")
}

/// A member cut off from the coordinator for longer than
/// `session.timeout.ms` is removed from the group; when it reaches the
/// coordinator again, its heartbeat is refused (UNKNOWN_MEMBER_ID), its
/// partitions are reported lost (not revoked), and it rejoins and reads
/// them again from the committed offsets.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_evicted_member_loses_its_partitions_and_rejoins_on_3_9() {
    let kafka = proxied_3_9().await;
    let topic = "evicted";
    kafka.create_topic(topic, 2, 1).await.unwrap();
    produce(&kafka, topic, 2, 0..50).await;

    let mut c = GroupConsumer::subscribe(
        config(&kafka, "evict", &[("request.timeout.ms", "3000")]),
        [topic],
    )
    .await
    .unwrap();
    let mut seen = BTreeSet::new();
    let mut events = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while seen.len() < 50 {
        assert!(Instant::now() < deadline, "read {} of 50", seen.len());
        if let ConsumerEvent::Records(r) = c.poll(Duration::from_millis(200)).await.unwrap() {
            for rec in &r {
                seen.insert(rec.value.clone().unwrap());
            }
            c.commit_positions().await.unwrap();
        }
    }
    assert_eq!(group_members(&kafka, "evict").await, 1);

    // Cut the member off until the coordinator removed it.
    kafka.proxy(0).set_black_hole(true);
    let deadline = Instant::now() + Duration::from_secs(90);
    while group_members(&kafka, "evict").await > 0 {
        assert!(
            Instant::now() < deadline,
            "the member was never removed from the group"
        );
        // Polls keep the member within max.poll.interval.ms; fetches fail.
        match c.poll(Duration::from_millis(200)).await {
            Ok(e) => events.push(e),
            Err(e) => assert!(!e.is_fatal(), "{e}"),
        }
    }
    kafka.proxy(0).set_black_hole(false);
    kafka.proxy(0).reset_connections();

    // Back in touch: lost, then assigned again.
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut reassigned = false;
    while !reassigned {
        assert!(Instant::now() < deadline, "events: {events:?}");
        match c.poll(Duration::from_millis(200)).await {
            Ok(ConsumerEvent::Assigned(p)) if !p.is_empty() => {
                reassigned = true;
                events.push(ConsumerEvent::Assigned(p));
            }
            Ok(e) => events.push(e),
            Err(e) => assert!(!e.is_fatal(), "{e}"),
        }
    }
    let lost: BTreeSet<i32> = events
        .iter()
        .filter_map(|e| match e {
            ConsumerEvent::Lost(p) => Some(p.iter().map(|tp| tp.partition)),
            _ => None,
        })
        .flatten()
        .collect();
    assert_eq!(lost, BTreeSet::from([0, 1]), "events: {events:?}");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, ConsumerEvent::Revoked(p) if !p.is_empty())),
        "lost, not revoked: {events:?}"
    );

    // It goes on from the committed offsets.
    produce(&kafka, topic, 2, 50..100).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    while seen.len() < 100 {
        assert!(Instant::now() < deadline, "read {} of 100", seen.len());
        if let ConsumerEvent::Records(r) = c.poll(Duration::from_millis(200)).await.unwrap() {
            for rec in &r {
                seen.insert(rec.value.clone().unwrap());
            }
            c.commit_positions().await.unwrap();
        }
    }
    assert_eq!(group_members(&kafka, "evict").await, 1);
    c.close(Duration::from_secs(5)).await;
}

/// The kafka-mock scenario of a cooperative commit made during the
/// member's own rejoin, replayed on a real Kafka 3.9 broker: a cooperative
/// member keeps reading its partitions while it rejoins, and a commit made
/// then would carry the generation its JoinGroup is replacing. The member
/// refuses it itself, unsent, with REBALANCE_IN_PROGRESS (Java's
/// `commitSync` throws `RebalanceInProgressException`), and a commit after
/// the polls that complete the rebalance goes through in the new
/// generation. The first member reaches the broker through the harness's
/// proxy, which holds its rejoining JoinGroup 3 s; the second member
/// bypasses the proxy (the broker's internal listener), so the held
/// JoinGroup can only be the first member's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cooperative_commit_during_the_rejoin_is_refused_unsent_on_3_9() {
    use kafka_consumer::MemberState;
    use kafka_proto::ErrorCode;
    const JOIN_GROUP: i16 = 11;
    let kafka = proxied_3_9().await;
    let topic = "rejoin";
    kafka.create_topic(topic, PARTITIONS, 1).await.unwrap();
    produce(&kafka, topic, PARTITIONS, 0..100).await;
    let coop = [("partition.assignment.strategy", "cooperative-sticky")];
    let mut first = GroupConsumer::subscribe(config(&kafka, "rejoin", &coop), [topic])
        .await
        .unwrap();
    let mut read = 0;
    let deadline = Instant::now() + Duration::from_secs(60);
    while read < 100 || first.assignment().len() < PARTITIONS as usize {
        assert!(Instant::now() < deadline, "read {read} of 100");
        if let ConsumerEvent::Records(r) = first.poll(Duration::from_millis(200)).await.unwrap() {
            read += r.len();
        }
    }
    first.commit_positions().await.unwrap();
    let generation = first.group_metadata().generation_id;

    // The only JoinGroup through the proxy from here is the first
    // member's rejoin: held 3 s.
    kafka
        .proxy(0)
        .hold_next_request(JOIN_GROUP, Duration::from_secs(3));
    let internal = kafka.internal_bootstrap();
    let second = GroupConsumer::subscribe(
        config(
            &kafka,
            "rejoin",
            &[coop[0], ("bootstrap.servers", &internal)],
        ),
        [topic],
    )
    .await
    .unwrap();
    let stop_second = Arc::new(AtomicBool::new(false));
    let second = tokio::spawn(member(
        1,
        second,
        Arc::new(Mutex::new(Log::default())),
        stop_second.clone(),
    ));
    let deadline = Instant::now() + Duration::from_secs(60);
    while first.state() != MemberState::Joining {
        assert!(Instant::now() < deadline, "the first member never rejoined");
        first.poll(Duration::from_millis(50)).await.unwrap();
    }
    assert_eq!(
        first.assignment().len(),
        PARTITIONS as usize,
        "kept while rejoining"
    );
    match first.commit_positions().await {
        Err(GroupError::Commit {
            error: ErrorCode::RebalanceInProgress,
            ..
        }) => {}
        other => panic!(
            "a commit during the rejoin: {other:?}; now {:?} in generation {}, JoinGroups held {} and released {}",
            first.state(),
            first.group_metadata().generation_id,
            kafka.proxy(0).requests_held(),
            kafka.proxy(0).held_requests_delivered()
        ),
    }
    assert_eq!(
        kafka.proxy(0).held_requests_delivered(),
        0,
        "refused while its JoinGroup was still held"
    );

    // Poll, then commit again: once the rebalance completed the commit goes
    // through in the new generation.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(Instant::now() < deadline, "no commit in a new generation");
        let event = first.poll(Duration::from_millis(100)).await.unwrap();
        if let ConsumerEvent::Records(r) = &event {
            assert!(r.is_empty(), "nothing new to read: {r:?}");
        }
        let rejoined = first.state() == MemberState::Stable
            && first.group_metadata().generation_id > generation;
        match first.commit_positions().await {
            Ok(()) if rejoined => break,
            Ok(()) => {}
            Err(GroupError::Commit {
                error: ErrorCode::RebalanceInProgress,
                ..
            }) => {}
            Err(e) => panic!("commit after {event:?}: {e}"),
        }
    }
    assert_eq!(kafka.proxy(0).requests_held(), 1);
    stop_second.store(true, Ordering::SeqCst);
    second.await.unwrap().close(Duration::from_secs(5)).await;
    first.close(Duration::from_secs(5)).await;
}

/// A member with `group.protocol` not set on `variant` uses `expected`
/// (chosen from the brokers' ApiVersions) and reads every record of a
/// topic once.
async fn unset_group_protocol_is_chosen_by_the_broker(
    variant: SharedKafka,
    expected: kafka_consumer::GroupProtocol,
) {
    let kafka = kafka(variant).await;
    let topic = &*unique_name("auto-protocol");
    let group = &*unique_name("auto-protocol");
    kafka.create_topic(topic, PARTITIONS, 1).await.unwrap();
    produce(kafka, topic, PARTITIONS, 0..200).await;
    let config = support::group_consumer::config(kafka, group, &[]);
    assert_eq!(config.protocol, None);
    let consumer = GroupConsumer::subscribe(config, [topic]).await.unwrap();
    assert_eq!(consumer.protocol(), expected);
    let log = Arc::new(Mutex::new(Log::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let task = tokio::spawn(member(1, consumer, log.clone(), stop.clone()));
    wait_for("every record", &log, |l| l.consumed.len() >= 200).await;
    stop.store(true, Ordering::SeqCst);
    task.await.unwrap().close(Duration::from_secs(10)).await;
    let log = log.lock().unwrap();
    let distinct: BTreeSet<u32> = log.consumed.iter().map(|(v, _)| *v).collect();
    assert_eq!(
        (log.consumed.len(), distinct.len()),
        (200, 200),
        "each record once"
    );
}

/// Invariant: with `group.protocol` not set, a Kafka 3.9 cluster (no
/// ConsumerGroupHeartbeat) gets a classic member, which reads every record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_3_9_unset_group_protocol_is_classic() {
    unset_group_protocol_is_chosen_by_the_broker(
        SharedKafka::Kafka39,
        kafka_consumer::GroupProtocol::Classic,
    )
    .await;
}

/// Invariant: with `group.protocol` not set, a Kafka 4.4 cluster gets a
/// KIP-848 member, which reads every record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_4_4_unset_group_protocol_is_kip_848() {
    unset_group_protocol_is_chosen_by_the_broker(
        SharedKafka::Kafka44Tv2,
        kafka_consumer::GroupProtocol::Consumer,
    )
    .await;
}
