//! No broker JVM outlives a test process that is SIGKILLed.

use crate::common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_the_test_process_kills_its_brokers() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kafka-dev"))
        .args(["--nodes", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn kafka-dev");
    let stdout = child.stdout.take().unwrap();
    // Blocking line reads until the cluster is ready (kafka-dev prints
    // DATA_DIR= then STARTED_IN_MS= once readiness passed).
    let data_dir = tokio::task::spawn_blocking(move || {
        let mut dir = None;
        for line in BufReader::new(stdout).lines() {
            let line = line.expect("read kafka-dev output");
            if let Some(d) = line.strip_prefix("DATA_DIR=") {
                dir = Some(d.to_string());
            }
            if line.starts_with("STARTED_IN_MS=") {
                break;
            }
        }
        dir.expect("kafka-dev printed no DATA_DIR")
    })
    .await
    .unwrap();
    assert!(
        !common::pids_with_cmdline(&data_dir).is_empty(),
        "the broker JVM should be running"
    );

    child.kill().expect("SIGKILL kafka-dev");
    child.wait().unwrap();

    common::wait_for(
        "broker JVMs of the killed process to exit",
        Duration::from_secs(30),
        || common::pids_with_cmdline(&data_dir).is_empty(),
    )
    .await;
    // The killed process could not clean up its directory.
    let _ = std::fs::remove_dir_all(&data_dir);
}
