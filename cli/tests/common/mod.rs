//! What the CLI's broker tests share: the binary under test, running it
//! against a broker, the shared Kafka cluster they run it against, and
//! `kafka-eos mock` as a broker of the test's own.
#![allow(dead_code)] // each test file uses its own subset

use kafka_testcontainers::KafkaCluster;
use kafka_testcontainers::SharedKafka;
use std::process::{Output, Stdio};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};

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

/// Starts `kafka-eos mock ARGS` and returns it (killed when dropped) with
/// its bootstrap servers.
pub async fn start_mock(args: &[&str]) -> (Child, String) {
    let mut child = Command::new(bin())
        .arg("mock")
        .args(args)
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn kafka-eos mock");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .expect("the mock prints its bootstrap servers")
        .unwrap()
        .expect("a first line");
    let bootstrap = first
        .strip_prefix("BOOTSTRAP=")
        .unwrap_or_else(|| panic!("unexpected first line: {first}"))
        .to_string();
    (child, bootstrap)
}

/// Polls `check` until it returns Some (the condition holds), up to a
/// generous hang guard.
pub async fn wait_for<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let guard = std::time::Instant::now() + Duration::from_secs(180);
    loop {
        if let Some(t) = check().await {
            return t;
        }
        assert!(
            std::time::Instant::now() < guard,
            "gave up waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
