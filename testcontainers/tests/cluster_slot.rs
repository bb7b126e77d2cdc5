//! `slot::ClusterSlot`: a test gets the cluster held in the slot when it was
//! built for the same key and every node runs, a new one otherwise (the
//! held one stopped first); a reused cluster's proxies have no fault left.
//!
//! Single-node clusters; the tests share one slot, as the tests of a binary
//! would, and each holds `SERIAL` across its two locks so that no other
//! test takes the slot in between (four cluster starts in name order).

use crate::common;

use kafka_testcontainers::ClusterSlot;
use kafka_testcontainers::wire::KafkaConnection;
use kafka_testcontainers::{Direction, KafkaCluster, KafkaClusterBuilder};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

static SLOT: ClusterSlot = ClusterSlot::new();
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn plain() -> KafkaClusterBuilder {
    KafkaCluster::builder()
}

fn proxied() -> KafkaClusterBuilder {
    KafkaCluster::builder().with_proxies(true)
}

fn not_started() -> KafkaClusterBuilder {
    panic!("the held cluster is handed on: nothing starts")
}

/// Invariant: a cluster with a node that does not run (a test stopped it
/// and failed before starting it again) is not handed on: the next lock
/// for the same key starts a new one, every node running.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_with_a_stopped_node_is_replaced() {
    let _serial = SERIAL.lock().await;
    let kafka = SLOT.lock("plain", plain).await.expect("a cluster");
    let before = kafka.data_dir().to_path_buf();
    kafka.stop(0).await.expect("stop the node");
    drop(kafka);

    let kafka = SLOT.lock("plain", plain).await.expect("a new cluster");
    assert!(!kafka.reused(), "a cluster with a stopped node is replaced");
    assert!(kafka.is_running(0));
    assert_ne!(kafka.data_dir(), before);
    assert!(!before.exists(), "the replaced cluster's directory is gone");
}

/// Invariant: a test that panics while it holds the slot leaves it empty:
/// its cluster is stopped and removed, and the next lock starts a new one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_test_leaves_the_slot_empty() {
    let _serial = SERIAL.lock().await;
    let dir: Arc<Mutex<Option<PathBuf>>> = Arc::default();
    let seen = dir.clone();
    let failed = tokio::spawn(async move {
        let kafka = SLOT.lock("plain", plain).await.expect("a cluster");
        *seen.lock().unwrap() = Some(kafka.data_dir().to_path_buf());
        panic!("a failing test (expected by a_panicking_test_leaves_the_slot_empty)");
    })
    .await;
    assert!(failed.unwrap_err().is_panic());
    let before = dir.lock().unwrap().clone().expect("the task got a cluster");
    assert!(!before.exists(), "the panicking test's cluster is gone");
    assert!(
        common::pids_with_cmdline(before.to_str().unwrap()).is_empty(),
        "its broker is stopped"
    );

    let kafka = SLOT.lock("plain", plain).await.expect("a new cluster");
    assert!(!kafka.reused());
    assert!(kafka.is_running(0));
}

/// Invariant: a lock for another key stops the held cluster (its JVM gone,
/// its directory removed) before it starts the new one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_key_stops_the_held_cluster_and_starts_a_new_one() {
    let _serial = SERIAL.lock().await;
    let kafka = SLOT.lock("plain", plain).await.expect("a cluster");
    let before = kafka.data_dir().to_path_buf();
    let bootstrap = kafka.bootstrap();
    drop(kafka);

    let kafka = SLOT.lock("proxied", proxied).await.expect("a new cluster");
    assert!(!kafka.reused(), "another key gets a new cluster");
    assert_eq!(kafka.key(), "proxied");
    assert_ne!(kafka.bootstrap(), bootstrap);
    assert_eq!(kafka.bootstrap(), kafka.proxy(0).listen_addr().to_string());
    assert!(!before.exists(), "the held cluster's directory is gone");
    assert!(
        common::pids_with_cmdline(before.to_str().unwrap()).is_empty(),
        "the held cluster's broker is stopped"
    );
}

/// Invariant: a reused cluster's proxies have none of the faults the last
/// test left on (black hole, pause, latency, pending drop, corruption), and
/// the connections that test left open through them are reset.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxies_of_a_reused_cluster_have_no_faults_left() {
    let _serial = SERIAL.lock().await;
    let kafka = SLOT.lock("proxied", proxied).await.expect("a cluster");
    let proxy = kafka.proxy(0).clone();
    let mut left_open = KafkaConnection::connect(kafka.broker_addrs()[0])
        .await
        .expect("connect through the proxy");
    left_open.api_versions().await.expect("no fault yet");
    proxy.set_black_hole(true);
    proxy.pause(Direction::ClientToServer);
    proxy.set_latency(Direction::ServerToClient, Duration::from_secs(30));
    proxy.drop_nth_response(1);
    proxy.corrupt_next(Direction::ServerToClient, 1000);
    drop(kafka);

    let kafka = SLOT
        .lock("proxied", not_started)
        .await
        .expect("the held cluster");
    assert!(kafka.reused());
    common::wait_for(
        "the last test's connection to be reset",
        Duration::from_secs(10),
        || proxy.active_connections() == 0,
    )
    .await;
    let dropped = proxy.responses_dropped();
    let mut conn = KafkaConnection::connect(kafka.broker_addrs()[0])
        .await
        .expect("connect through the proxy");
    conn.set_io_timeout(Duration::from_secs(5));
    let versions = conn.api_versions().await.expect("an answer, unharmed");
    assert_eq!(versions.error_code, 0);
    assert_eq!(proxy.responses_dropped(), dropped, "no response dropped");
}

/// Invariant: a lock for the key the held cluster was built for, every
/// node running, gets that cluster (same bootstrap, same broker process)
/// without calling the builder.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_key_gets_the_held_cluster() {
    let _serial = SERIAL.lock().await;
    let kafka = SLOT.lock("proxied", proxied).await.expect("a cluster");
    let (bootstrap, pid) = (kafka.bootstrap(), kafka.pid(0));
    drop(kafka);

    let kafka = SLOT
        .lock("proxied", not_started)
        .await
        .expect("the held cluster");
    assert!(kafka.reused());
    assert_eq!(kafka.key(), "proxied");
    assert_eq!(kafka.bootstrap(), bootstrap);
    assert_eq!(kafka.pid(0), pid);
    assert!(pid.is_some());
}
