//! The reader against a real three-broker Kafka 4.4 cluster with a rack per
//! broker (`broker.rack`) and `RackAwareReplicaSelector`, shared by the two
//! tests of this module (one at a time):
//!
//! - KIP-392: a reader in a follower's rack is sent to that follower by the
//!   leader (`preferred_read_replica`) and reads every record while the
//!   leader is unreachable to clients;
//! - KIP-320: an unclean leader election (the in-sync replica stopped, an
//!   out-of-sync one elected with `LeaderElectionCommand --election-type
//!   unclean`) truncates records a reader consumed; the reader detects it
//!   and moves back to the divergence point.

use kafka_client::{Cluster, ClusterConfig, Connection};
use kafka_consumer::{AutoOffsetReset, Offset, Reader, ReaderConfig};
use kafka_producer::{Producer, ProducerConfig, ProducerRecord};
use kafka_proto::messages::{FetchRequest, FetchRequestPartition, FetchRequestTopic};
use kafka_testcontainers::{KafkaCluster, unique_name};
use std::time::{Duration, Instant};
use tokio::sync::{Mutex, OnceCell};

static CLUSTER: OnceCell<KafkaCluster> = OnceCell::const_new();
static ONE_AT_A_TIME: Mutex<()> = Mutex::const_new(());

fn rack(node: usize) -> String {
    format!("rack-{node}")
}

async fn kafka() -> &'static KafkaCluster {
    CLUSTER
        .get_or_init(|| async {
            // Kafka's follower fetch wait: a follower learns the high
            // watermark from its fetch responses, and the readers here
            // fetch from followers.
            let mut b = KafkaCluster::builder()
                .nodes(3)
                .with_proxies(true)
                .quiet_idle(false)
                .broker_config(
                    "replica.selector.class",
                    "org.apache.kafka.common.replica.RackAwareReplicaSelector",
                )
                .broker_config("min.insync.replicas", "1");
            for i in 0..3 {
                b = b.node_config(i, "broker.rack", rack(i));
            }
            b.start().await.expect("three-node Kafka")
        })
        .await
}

async fn produce(kafka: &KafkaCluster, topic: &str, values: std::ops::Range<i64>) {
    let producer = Producer::connect(
        ProducerConfig::from_properties([("bootstrap.servers", kafka.bootstrap().as_str())])
            .unwrap(),
    )
    .await
    .unwrap();
    for i in values {
        producer
            .send(ProducerRecord::new(topic).partition(0).value(i.to_string()))
            .await
            .expect("produced");
    }
    producer.close(Duration::from_secs(10)).await.unwrap();
}

/// Runs a tool of the distribution; panics unless it succeeds.
async fn tool(kafka: &KafkaCluster, class: &str, args: &[&str]) {
    let mut all = vec!["--bootstrap-server".to_string(), kafka.bootstrap()];
    all.extend(args.iter().map(|a| a.to_string()));
    let out = kafka
        .run_java(class, &all, Duration::from_secs(60))
        .await
        .unwrap();
    assert!(
        out.success,
        "{class} {args:?}: {}\n{}",
        out.stdout_text(),
        out.stderr
    );
}

/// Waits until the metadata of `topic`-0 satisfies `ok`; returns its
/// leader, leader epoch and ISR.
async fn wait_partition(
    cluster: &Cluster,
    topic: &str,
    what: &str,
    ok: impl Fn(Option<i32>, &[i32]) -> bool,
) -> (i32, i32, Vec<i32>) {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let _ = cluster.refresh_topics(&[topic]).await;
        if let Some(p) = cluster.metadata().partition(topic, 0)
            && ok(p.leader, &p.isr)
        {
            return (p.leader.unwrap_or(-1), p.leader_epoch, p.isr.clone());
        }
        assert!(Instant::now() < deadline, "{topic}-0: {what} within 90 s");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn index_of(kafka: &KafkaCluster, node_id: i32) -> usize {
    (0..kafka.node_count())
        .find(|i| kafka.node_id(*i) == node_id)
        .expect("a node of the cluster")
}

/// A raw Fetch of `topic`-0 from offset 0 to `conn`, in `rack`.
async fn raw_fetch(
    conn: &Connection,
    topic: &str,
    rack: &str,
) -> kafka_proto::messages::FetchResponsePartitionData {
    let req = FetchRequest {
        max_wait_ms: 100,
        min_bytes: 1,
        topics: vec![FetchRequestTopic {
            topic: topic.into(),
            partitions: vec![FetchRequestPartition {
                partition: 0,
                fetch_offset: 0,
                partition_max_bytes: 1 << 20,
                ..Default::default()
            }],
            ..Default::default()
        }],
        rack_id: rack.into(),
        ..Default::default()
    };
    let resp = conn.send(&req, 12).await.expect("Fetch v12");
    resp.responses[0].partitions[0].clone()
}

/// Invariant: with `client.rack` naming a follower's rack, the leader
/// answers the reader's Fetch with that follower as
/// `preferred_read_replica` (and no records); the reader follows it, and
/// records produced while the leader's client listener is a black hole are
/// read — once, in order — so the bytes came from the follower.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_in_a_followers_rack_fetches_from_that_follower() {
    let _one = ONE_AT_A_TIME.lock().await;
    let kafka = kafka().await;
    let topic = unique_name("rack");
    kafka.create_topic(&topic, 1, 3).await.unwrap();
    produce(kafka, &topic, 0..10).await;
    let cluster = Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
        .await
        .unwrap();
    let (leader, _, _) = wait_partition(&cluster, &topic, "all three in sync", |l, isr| {
        l.is_some() && isr.len() == 3
    })
    .await;
    let leader_index = index_of(kafka, leader);
    let follower_index = (leader_index + 1) % 3;
    let follower = kafka.node_id(follower_index);

    // The broker's side: asked from the follower's rack, the leader names
    // the follower and sends no records; the follower serves them.
    let to_leader = cluster.connection(leader).await.unwrap();
    let answer = raw_fetch(&to_leader, &topic, &rack(follower_index)).await;
    assert_eq!(answer.preferred_read_replica, follower);
    assert!(answer.records.as_ref().is_none_or(|r| r.is_empty()));
    let from_own_rack = raw_fetch(&to_leader, &topic, &rack(leader_index)).await;
    assert_eq!(from_own_rack.preferred_read_replica, -1);

    // The reader: sent to the follower, then the leader goes dark.
    let mut reader = Reader::new(
        cluster.clone(),
        ReaderConfig {
            client_rack: Some(rack(follower_index)),
            ..ReaderConfig::default()
        },
    );
    reader.assign(&topic, &[0]);
    reader.seek(&topic, 0, Offset::At(0)).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut got: Vec<i64> = Vec::new();
    while got.len() < 10 {
        assert!(Instant::now() < deadline, "records 0..10: {got:?}");
        got.extend(
            reader
                .poll(Duration::from_millis(200))
                .await
                .unwrap()
                .iter()
                .map(|r| r.offset),
        );
    }
    assert_eq!(reader.preferred_read_replica(&topic, 0), Some(follower));
    // The leader goes dark to clients; ten more records are written
    // through the brokers' internal listener. They can only reach the
    // reader from the follower.
    kafka.proxy(leader_index).set_black_hole(true);
    let producer = Producer::connect(
        ProducerConfig::from_properties([(
            "bootstrap.servers",
            kafka.internal_bootstrap().as_str(),
        )])
        .unwrap(),
    )
    .await
    .unwrap();
    for i in 10..20 {
        producer
            .send(
                ProducerRecord::new(topic.as_str())
                    .partition(0)
                    .value(i.to_string()),
            )
            .await
            .expect("produced");
    }
    producer.close(Duration::from_secs(10)).await.unwrap();
    while got.len() < 20 {
        assert!(
            Instant::now() < deadline,
            "records from the follower: {got:?}"
        );
        got.extend(
            reader
                .poll(Duration::from_millis(200))
                .await
                .unwrap()
                .iter()
                .map(|r| r.offset),
        );
    }
    kafka.proxy(leader_index).set_black_hole(false);
    assert_eq!(got, (0..20).collect::<Vec<_>>());
    assert_eq!(reader.preferred_read_replica(&topic, 0), Some(follower));
}

/// Invariant: records a reader consumed that an unclean leader election
/// then truncated are detected (KIP-320: OffsetForLeaderEpoch after the
/// leader change), reported (a counted truncation), and the reader moves
/// back to the divergence point, where it reads the new leader's records
/// once; under `auto.offset.reset=none` the same truncation is a typed
/// `LogTruncation` naming the position and the divergence offset.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unclean_election_truncating_consumed_records_is_detected() {
    let _one = ONE_AT_A_TIME.lock().await;
    let kafka = kafka().await;
    let topic = unique_name("truncated");
    // Two replicas, on nodes 1 and 2; node 0 stays up (with one of them it
    // keeps the controller quorum).
    let (a, b) = (1usize, 2usize);
    let assignment = format!("{}:{}", kafka.node_id(a), kafka.node_id(b));
    tool(
        kafka,
        "org.apache.kafka.tools.TopicCommand",
        &[
            "--create",
            "--topic",
            &topic,
            "--replica-assignment",
            &assignment,
            "--config",
            "unclean.leader.election.enable=true",
            "--config",
            "min.insync.replicas=1",
        ],
    )
    .await;
    let cluster = Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
        .await
        .unwrap();
    let a_id = kafka.node_id(a);
    let b_id = kafka.node_id(b);
    // Leader a (the first replica), both in sync.
    wait_partition(&cluster, &topic, "leader a, both in sync", |l, isr| {
        l == Some(a_id) && isr.len() == 2
    })
    .await;
    produce(kafka, &topic, 0..5).await;
    // b leaves; 5..10 are written to a only.
    kafka.stop(b).await.unwrap();
    wait_partition(&cluster, &topic, "b out of sync", |_, isr| isr == [a_id]).await;
    produce(kafka, &topic, 5..10).await;

    let reader_of = |reset: AutoOffsetReset| {
        let cluster = cluster.clone();
        let topic = topic.clone();
        async move {
            let mut r = Reader::new(
                cluster,
                ReaderConfig {
                    auto_offset_reset: reset,
                    ..ReaderConfig::default()
                },
            );
            r.assign(&topic, &[0]);
            r.seek(&topic, 0, Offset::At(0)).await.unwrap();
            let deadline = Instant::now() + Duration::from_secs(60);
            let mut got = 0;
            while got < 10 {
                assert!(Instant::now() < deadline, "reading 0..10");
                got += r.poll(Duration::from_millis(200)).await.unwrap().len();
            }
            assert_eq!(r.position(&topic, 0), Some(10));
            r
        }
    };
    let mut resetting = reader_of(AutoOffsetReset::Latest).await;
    let mut strict = reader_of(AutoOffsetReset::None).await;

    // a goes; b comes back out of sync and is elected uncleanly: its log
    // ends at 5, so 5..10 are gone.
    kafka.stop(a).await.unwrap();
    kafka.start_node(b).unwrap();
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let out = kafka
            .run_java(
                "org.apache.kafka.tools.LeaderElectionCommand",
                &[
                    "--bootstrap-server".into(),
                    kafka.bootstrap(),
                    "--election-type".into(),
                    "unclean".into(),
                    "--topic".into(),
                    topic.clone(),
                    "--partition".into(),
                    "0".into(),
                ],
                Duration::from_secs(60),
            )
            .await
            .unwrap();
        let _ = cluster.refresh_topics(&[topic.as_str()]).await;
        if cluster.metadata().leader(&topic, 0) == Some(b_id) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no unclean election of b: {}\n{}",
            out.stdout_text(),
            out.stderr
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    produce(kafka, &topic, 100..103).await; // offsets 5, 6, 7 in b's log

    // The resetting reader moves back to 5 and reads b's records there.
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut after: Vec<(i64, String)> = Vec::new();
    while after.len() < 3 {
        assert!(
            Instant::now() < deadline,
            "records after the truncation: {after:?}"
        );
        for r in resetting.poll(Duration::from_millis(200)).await.unwrap() {
            let v = String::from_utf8_lossy(r.value.as_deref().unwrap()).into_owned();
            after.push((r.offset, v));
        }
    }
    assert_eq!(
        after,
        vec![(5, "100".into()), (6, "101".into()), (7, "102".into())]
    );
    assert_eq!(resetting.metrics().log_truncations, 1);

    // The strict one reports it and stays.
    let e = loop {
        assert!(Instant::now() < deadline, "no LogTruncation");
        match strict.poll(Duration::from_millis(200)).await {
            Ok(r) => assert!(r.is_empty(), "records past a truncation: {r:?}"),
            Err(e) => break e,
        }
    };
    assert!(
        matches!(
            e,
            kafka_consumer::ReaderError::LogTruncation {
                position: 10,
                divergent_offset: Some(5),
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(strict.position(&topic, 0), Some(10));
    assert_eq!(strict.metrics().log_truncations, 0);

    // Heal: a rejoins (and truncates its own log to b's).
    kafka.start_node(a).unwrap();
    wait_partition(&cluster, &topic, "a back in sync", |_, isr| isr.len() == 2).await;
}
