//! What the CLI's broker tests share: the binary under test, running it
//! against a broker, and the shared Kafka cluster they run it against.
#![allow(dead_code)] // each test file uses its own subset

use kafka_testcontainers::KafkaCluster;
use kafka_testcontainers::SharedKafka;
use std::process::{Output, Stdio};
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

/// The `kafka-eos` binary: `KAFKA_EOS_BIN` (the musl build in CI) or this
/// build's.
pub fn bin() -> String {
    std::env::var("KAFKA_EOS_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_kafka-eos").into())
}

/// The harness's shared single-node Kafka 4.4 (transaction version 2, KIP-848
/// heartbeats every 500 ms). Other tests use it too: every topic, group and
/// transactional id a test creates comes from `unique_name`, and listings
/// are filtered by those names.
pub async fn kafka() -> &'static KafkaCluster {
    SharedKafka::Kafka44Tv2
        .cluster()
        .await
        .expect("shared Kafka 4.4")
}

/// Runs the CLI against `bootstrap` with `args` (and `stdin`), at most 120 s.
pub async fn run(bootstrap: &str, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut c = Command::new(bin());
    c.arg("--bootstrap")
        .arg(bootstrap)
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = c.spawn().expect("spawn kafka-eos");
    if let Some(data) = stdin {
        let mut w = child.stdin.take().unwrap();
        w.write_all(data).await.unwrap();
        drop(w);
    }
    tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("kafka-eos {args:?} did not finish within 120 s"))
        .unwrap()
}

/// Runs the CLI; panics unless it exits 0; returns stdout.
pub async fn ok(bootstrap: &str, args: &[&str], stdin: Option<&[u8]>) -> String {
    let out = run(bootstrap, args, stdin).await;
    assert!(
        out.status.success(),
        "kafka-eos {args:?} failed: {:?}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
