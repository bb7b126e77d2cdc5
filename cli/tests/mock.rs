//! `kafka-eos mock` serves other processes: the built binary (or
//! `$KAFKA_EOS_BIN`) is started as a three-broker mock cluster, prints its
//! bootstrap servers, and a second `kafka-eos` process writes through it
//! transactionally and reads back read_committed: what any program would
//! do against it. SIGTERM stops it.

use std::process::Stdio;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

use crate::common;
use common::{bin, start_mock};

async fn kafka_eos(bootstrap: &str, args: &[&str], stdin: Option<&[u8]>) -> std::process::Output {
    let mut c = Command::new(bin());
    c.arg("--bootstrap")
        .arg(bootstrap)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
    let mut child = c.spawn().expect("spawn kafka-eos");
    if let Some(data) = stdin {
        let mut w = child.stdin.take().unwrap();
        w.write_all(data).await.unwrap();
        drop(w);
    }
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("kafka-eos finishes")
        .unwrap();
    assert!(
        out.status.success(),
        "kafka-eos {args:?}: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Invariant: 300 lines produced with a commit every 100 through a
/// three-broker `kafka-eos mock` are read back read_committed, each once;
/// SIGTERM ends the mock with exit 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mock_serves_a_transactional_produce_and_a_read_committed_consume() {
    let (mut mock, bootstrap) = start_mock(&["--brokers", "3", "--topic", "lines:3"]).await;
    assert_eq!(bootstrap.split(',').count(), 3, "{bootstrap}");
    let input: String = (0..300).map(|i| format!("{i}\n")).collect();
    let out = kafka_eos(
        &bootstrap,
        &[
            "produce",
            "--topic",
            "lines",
            "--transactional-id",
            "mock-cli",
            "--commit-every",
            "100",
            "--partitioner",
            "round-robin",
        ],
        Some(input.as_bytes()),
    )
    .await;
    let summary = String::from_utf8_lossy(&out.stderr);
    assert!(summary.contains("in 3 committed transactions"), "{summary}");
    let out = kafka_eos(
        &bootstrap,
        &[
            "consume",
            "--topic",
            "lines",
            "--count",
            "300",
            "--timeout-ms",
            "15000",
        ],
        None,
    )
    .await;
    let mut values: Vec<u32> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(values.len(), 300);
    values.sort_unstable();
    assert_eq!(values, (0..300).collect::<Vec<u32>>());
    let pid = mock.id().unwrap();
    std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    let status = tokio::time::timeout(Duration::from_secs(10), mock.wait())
        .await
        .expect("the mock exits on SIGTERM")
        .unwrap();
    assert!(status.success(), "{status:?}");
}
