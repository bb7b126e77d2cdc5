//! A transactional `produce` whose commit gets no answer (the broker's proxy
//! holds the EndTxn request for longer than the test lasts) must not claim an
//! outcome. Invariant: it exits with the documented code 6, says the outcome
//! is unknown, prints the `txn describe` command that finds out, and never
//! says "aborted".
//!
//! Only the EndTxn is held: the records' acknowledgements flow, so the
//! commit starts with every record delivered, whenever the test gets there.

use kafka_client::{Cluster, ClusterConfig};
use kafka_consumer::{IsolationLevel, Reader, ReaderConfig};
use kafka_proto::ApiKey;
use kafka_testcontainers::KafkaCluster;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

fn bin() -> String {
    std::env::var("KAFKA_EOS_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_kafka-eos").into())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_without_an_answer_reports_an_unknown_outcome() {
    let kafka = KafkaCluster::builder()
        .nodes(1)
        .with_proxies(true)
        .start()
        .await
        .unwrap();
    let topic = "commit-unknown";
    kafka.create_topic(topic, 1, 1).await.unwrap();
    // The checking reader goes around the proxy.
    let direct = Cluster::connect(ClusterConfig::new(&kafka.internal_bootstrap()))
        .await
        .unwrap();
    let mut child = Command::new(bin())
        .args([
            "--bootstrap",
            &kafka.bootstrap(),
            "-X",
            "max.block.ms=2000",
            "produce",
            "--topic",
            topic,
            "--transactional-id",
            "commit-unknown",
            "--commit-every",
            "1000000",
            "--commit-interval-ms",
            "600000",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn kafka-eos");
    let mut stdin = child.stdin.take().unwrap();
    let lines: String = (0..20).map(|i| format!("r{i}\n")).collect();
    stdin.write_all(lines.as_bytes()).await.unwrap();
    stdin.flush().await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let mut r = Reader::new(
            direct.clone(),
            ReaderConfig {
                isolation: IsolationLevel::ReadUncommitted,
                ..Default::default()
            },
        );
        if r.read_to_end(topic, &[0]).await.unwrap().len() >= 20 {
            break;
        }
        assert!(Instant::now() < deadline, "the records were never written");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Written; the commit's EndTxn never reaches the broker (held an hour,
    // beyond the three 2 s max.block.ms attempts and the 30 s request timeout).
    kafka
        .proxy(0)
        .hold_next_request(ApiKey::EndTxn.code(), Duration::from_secs(3600));
    drop(stdin); // end of input: the CLI commits
    let out = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
        .await
        .expect("the CLI gives up within its max.block.ms bounds")
        .unwrap();
    assert_eq!(kafka.proxy(0).requests_held(), 1, "the commit sent EndTxn");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "stderr:\n{stderr}");
    assert!(
        stderr.contains("outcome of the transaction is unknown"),
        "{stderr}"
    );
    assert!(stderr.contains("txn describe commit-unknown"), "{stderr}");
    assert!(!stderr.contains("aborted"), "{stderr}");
}
