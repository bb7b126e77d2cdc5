//! Three-node clusters (expensive: one test at a time).

use kafka_testcontainers::{KafkaCluster, KafkaVersion};
use std::time::Instant;

static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_4_4_three_nodes_survive_a_killed_node() {
    let _serial = SERIAL.lock().await;
    let t = Instant::now();
    let cluster = KafkaCluster::builder()
        .version(KafkaVersion::V4_4)
        .nodes(3)
        .transaction_version(2)
        .start()
        .await
        .expect("start 3 nodes");
    eprintln!("4.4 three nodes ready in {:?}", t.elapsed());
    assert_eq!(cluster.bootstrap().split(',').count(), 3);
    for node in 0..3 {
        assert_eq!(
            cluster
                .finalized_feature(node, "transaction.version")
                .await
                .unwrap(),
            Some(2)
        );
    }
    cluster.create_topic("replicated", 3, 3).await.unwrap();

    cluster.kill(1).unwrap();
    assert!(!cluster.is_running(1));
    let t = Instant::now();
    cluster.restart(1).await.expect("restart node 2");
    eprintln!("4.4 three nodes: node restart ready in {:?}", t.elapsed());
    assert!(cluster.is_running(1));
    cluster
        .wait_for_topic("replicated", 3, std::time::Duration::from_secs(60))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_4_4_tv1_and_3_9_three_nodes_start() {
    let _serial = SERIAL.lock().await;
    let t = Instant::now();
    let tv1 = KafkaCluster::builder()
        .version(KafkaVersion::V4_4)
        .nodes(3)
        .transaction_version(1)
        .start()
        .await
        .expect("start 4.4 TV1 3 nodes");
    eprintln!("4.4 TV1 three nodes ready in {:?}", t.elapsed());
    assert_eq!(
        tv1.finalized_feature(2, "transaction.version")
            .await
            .unwrap(),
        Some(1)
    );
    drop(tv1);

    let t = Instant::now();
    let c39 = KafkaCluster::builder()
        .version(KafkaVersion::V3_9)
        .nodes(3)
        .start()
        .await
        .expect("start 3.9 3 nodes");
    eprintln!("3.9 three nodes ready in {:?}", t.elapsed());
    c39.create_topic("replicated39", 2, 3).await.unwrap();
}
