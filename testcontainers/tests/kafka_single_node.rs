//! Single-node clusters: Kafka 4.4 with transaction version 2 and 1, and 3.9.

use crate::common;

use kafka_testcontainers::{IsolationLevel, KafkaCluster, KafkaVersion, ProducerPerfArgs};
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_4_4_tv2_single_node_serves_restarts_and_runs_tools() {
    let t = Instant::now();
    let cluster = KafkaCluster::builder()
        .version(KafkaVersion::V4_4)
        .nodes(1)
        .transaction_version(2)
        .start()
        .await
        .expect("start 4.4 TV2");
    eprintln!("4.4 TV2 single node ready in {:?}", t.elapsed());
    assert_eq!(
        cluster
            .finalized_feature(0, "transaction.version")
            .await
            .unwrap(),
        Some(2)
    );
    assert_eq!(cluster.bootstrap().split(',').count(), 1);

    cluster
        .create_topic("perf", 2, 1)
        .await
        .expect("create topic");
    let summary = cluster
        .producer_performance(&ProducerPerfArgs {
            topic: "perf".into(),
            num_records: 500,
            record_size: 64,
            throughput: -1,
            transactional_id: Some("perf-txn".into()),
            transaction_duration_ms: Some(100),
            props: vec![("acks".into(), "all".into())],
        })
        .await
        .expect("producer performance");
    assert_eq!(summary.records, 500);
    assert!(summary.records_per_sec > 0.0);

    let records = cluster
        .console_consume(
            "perf",
            IsolationLevel::ReadCommitted,
            500,
            Duration::from_secs(10),
        )
        .await
        .expect("console consume");
    assert_eq!(records.len(), 500);
    assert!(records.iter().all(|r| r.key.is_none()
        && r.value.as_ref().map(|v| v.len()) == Some(64)
        && r.headers.is_empty()));

    // SIGKILL the node, then bring it back and see it serve again.
    let pid = cluster.pid(0).unwrap();
    cluster.kill(0).unwrap();
    assert!(!cluster.is_running(0));
    assert!(
        common::pids_with_cmdline(&cluster.data_dir().display().to_string())
            .iter()
            .all(|&p| p != pid)
    );
    let t = Instant::now();
    cluster.restart(0).await.expect("restart after kill");
    eprintln!(
        "4.4 single node restart after SIGKILL ready in {:?}",
        t.elapsed()
    );
    let again = cluster
        .console_consume(
            "perf",
            IsolationLevel::ReadUncommitted,
            500,
            Duration::from_secs(10),
        )
        .await
        .unwrap();
    assert_eq!(again.len(), 500);

    // A clean stop (SIGTERM) and restart too.
    cluster.stop(0).await.unwrap();
    assert!(!cluster.is_running(0));
    cluster.restart(0).await.expect("restart after stop");
    assert!(cluster.logs(0).contains("Kafka Server started"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_4_4_tv1_single_node_reports_transaction_version_1() {
    let t = Instant::now();
    let cluster = KafkaCluster::builder()
        .version(KafkaVersion::V4_4)
        .transaction_version(1)
        .start()
        .await
        .expect("start 4.4 TV1");
    eprintln!("4.4 TV1 single node ready in {:?}", t.elapsed());
    assert_eq!(
        cluster
            .finalized_feature(0, "transaction.version")
            .await
            .unwrap(),
        Some(1)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_3_9_single_node_serves_and_runs_tools() {
    let t = Instant::now();
    let cluster = KafkaCluster::builder()
        .version(KafkaVersion::V3_9)
        .start()
        .await
        .expect("start 3.9");
    eprintln!("3.9 single node ready in {:?}", t.elapsed());
    let versions = cluster.api_versions(0).await.unwrap();
    assert_eq!(
        kafka_testcontainers::wire::finalized_feature(&versions, "transaction.version")
            .unwrap_or(0),
        0,
        "3.9 has no transaction.version feature"
    );
    cluster.create_topic("t39", 1, 1).await.unwrap();
    let summary = cluster
        .producer_performance(&ProducerPerfArgs {
            topic: "t39".into(),
            num_records: 100,
            record_size: 10,
            throughput: -1,
            transactional_id: Some("perf-39".into()),
            transaction_duration_ms: Some(50),
            props: vec![],
        })
        .await
        .expect("producer performance on 3.9");
    assert_eq!(summary.records, 100);
    let records = cluster
        .console_consume(
            "t39",
            IsolationLevel::ReadCommitted,
            100,
            Duration::from_secs(10),
        )
        .await
        .expect("console consume on 3.9");
    assert_eq!(records.len(), 100);
    assert!(records[99].offset >= 99);
}

#[tokio::test]
async fn transaction_version_2_is_rejected_on_3_9() {
    let err = KafkaCluster::builder()
        .version(KafkaVersion::V3_9)
        .transaction_version(2)
        .start()
        .await
        .unwrap_err();
    assert!(err.to_string().contains("transaction.version"), "{err}");
}
