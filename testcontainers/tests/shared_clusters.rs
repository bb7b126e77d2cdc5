//! Shared clusters: one per variant and process, or another process's
//! attached to by its description; never stoppable by a test.

use crate::common;

use kafka_testcontainers::{SHARED_KAFKA_ENV, SharedKafka, unique_name};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

/// Invariant: without `KAFKA_EOS_SHARED_KAFKA`, every call in a process gets
/// the same running cluster, started by the process, formatted with the
/// variant's transaction version, and a test cannot stop it.
#[test]
fn a_process_shares_one_cluster_per_variant_and_no_test_stops_it() {
    // In a child without the variable (the CI runner sets it for every job).
    let child = Command::new(std::env::current_exe().unwrap())
        .args(["in_process_child", "--exact", "--ignored", "--nocapture"])
        .env_remove(SHARED_KAFKA_ENV)
        .status()
        .expect("run the child");
    assert!(child.success(), "the in-process child failed: {child:?}");
}

/// The child half of the in-process test.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run by a_process_shares_one_cluster_per_variant_and_no_test_stops_it"]
async fn in_process_child() {
    assert!(std::env::var_os(SHARED_KAFKA_ENV).is_none());
    let a = SharedKafka::Kafka44Tv1
        .cluster()
        .await
        .expect("shared cluster");
    let b = SharedKafka::Kafka44Tv1
        .cluster()
        .await
        .expect("shared cluster");
    assert!(std::ptr::eq(a, b), "one cluster per variant and process");
    assert!(a.is_shared());
    assert_eq!(
        a.finalized_feature(0, "transaction.version").await.unwrap(),
        Some(1)
    );
    assert!(a.kill(0).is_err(), "kill refused");
    assert!(a.stop(0).await.is_err(), "stop refused");
    assert!(a.restart(0).await.is_err(), "restart refused");
    assert!(a.is_running(0), "still running after the refusals");
    assert!(
        a.data_dir()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with(&format!("kafka-eos-shared-{}-", std::process::id())),
        "the process's own cluster: {}",
        a.data_dir().display()
    );
    let topic = unique_name("shared");
    a.create_topic(&topic, 2, 1).await.expect("create a topic");
}

/// The child half of the attach test: run by it with the environment set.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run by attaches_to_the_cluster_another_process_serves"]
async fn attached_child() {
    let expected = std::env::var("EXPECTED_BOOTSTRAP").expect("EXPECTED_BOOTSTRAP");
    let kafka = SharedKafka::Kafka44Tv2.cluster().await.expect("attach");
    assert_eq!(kafka.bootstrap(), expected);
    assert!(kafka.is_shared());
    assert!(kafka.is_running(0), "the owner's JVM is seen running");
    assert!(kafka.kill(0).is_err(), "kill refused");
    assert_eq!(
        kafka
            .finalized_feature(0, "transaction.version")
            .await
            .unwrap(),
        Some(2)
    );
    let topic = unique_name("attached");
    kafka
        .create_topic(&topic, 1, 1)
        .await
        .expect("create a topic");
    assert!(kafka.data_dir().is_dir());
}

/// Invariant: a process with `KAFKA_EOS_SHARED_KAFKA` set uses the cluster
/// that `kafka-dev --shared` serves (same addresses, running, not stoppable),
/// and leaves it running and its files in place when it exits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attaches_to_the_cluster_another_process_serves() {
    let dir = tempfile::tempdir().unwrap();
    let description = SharedKafka::Kafka44Tv2.description_path(dir.path());
    let mut owner = Command::new(env!("CARGO_BIN_EXE_kafka-dev"))
        .args(["--shared", "4.4-tv2", "--describe"])
        .arg(&description)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn kafka-dev");
    let stdout = owner.stdout.take().unwrap();
    let (bootstrap, data_dir) = tokio::task::spawn_blocking(move || {
        let (mut bootstrap, mut data_dir) = (None, None);
        for line in BufReader::new(stdout).lines() {
            let line = line.expect("read kafka-dev output");
            if let Some(b) = line.strip_prefix("BOOTSTRAP=") {
                bootstrap = Some(b.to_string());
            }
            if let Some(d) = line.strip_prefix("DATA_DIR=") {
                data_dir = Some(d.to_string());
            }
            if line.starts_with("STARTED_IN_MS=") {
                break;
            }
        }
        (bootstrap.expect("BOOTSTRAP"), data_dir.expect("DATA_DIR"))
    })
    .await
    .unwrap();
    assert!(description.is_file(), "described once ready");

    let child = Command::new(std::env::current_exe().unwrap())
        .args(["attached_child", "--exact", "--ignored", "--nocapture"])
        .env(SHARED_KAFKA_ENV, dir.path())
        .env("EXPECTED_BOOTSTRAP", &bootstrap)
        .status()
        .expect("run the child");
    let still_running = !common::pids_with_cmdline(&data_dir).is_empty();
    let _ = Command::new("kill")
        .args(["-INT", &owner.id().to_string()])
        .status();
    let owner_status = owner.wait().expect("wait for kafka-dev");
    assert!(child.success(), "the attached child failed: {child:?}");
    assert!(
        still_running,
        "the child's exit left the shared broker running"
    );
    assert!(
        owner_status.success(),
        "kafka-dev stopped cleanly: {owner_status:?}"
    );
    assert!(
        !std::path::Path::new(&data_dir).exists(),
        "the owner removed the cluster's files"
    );
}
