//! Ctrl-C wins over the end of input: a transactional `produce` that gets
//! SIGINT and then, right after it, the end of its piped stdin must not
//! commit. Invariant: after every trial, read_committed sees none of the
//! trial's records, and the CLI exits 130 (or died of the signal before its
//! handler was installed). `CLI_SIGINT_TRIALS` sets the number of trials
//! (20 by default). Runs on the harness's shared Kafka 4.4 cluster, each
//! trial with a topic and transactional id of its own.

use kafka_client::{Cluster, ClusterConfig};
use kafka_consumer::{IsolationLevel, Reader, ReaderConfig};
use kafka_producer::{ProducerConfig, ProducerRecord, TransactionalProducer};
use kafka_testcontainers::KafkaCluster;
use kafka_testcontainers::{SharedKafka, unique_name};
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

fn bin() -> String {
    std::env::var("KAFKA_EOS_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_kafka-eos").into())
}

async fn count(cluster: &Arc<Cluster>, topic: &str, isolation: IsolationLevel) -> usize {
    let mut r = Reader::new(
        cluster.clone(),
        ReaderConfig {
            isolation,
            ..Default::default()
        },
    );
    r.read_to_end(topic, &[0]).await.expect("read").len()
}

/// The read_committed records of `topic` before a marker record that the
/// transactional id's next producer commits: its `init_transactions`
/// completes whatever the interrupted one left, so once the marker is
/// visible every earlier transaction is resolved.
async fn committed_before_marker(
    kafka: &KafkaCluster,
    cluster: &Arc<Cluster>,
    topic: &str,
    transactional_id: &str,
) -> usize {
    let config = ProducerConfig::from_properties([
        ("bootstrap.servers", kafka.bootstrap().as_str()),
        ("transactional.id", transactional_id),
    ])
    .unwrap();
    let p = TransactionalProducer::connect(config).await.unwrap();
    p.init_transactions().await.unwrap();
    p.begin_transaction().unwrap();
    p.send(ProducerRecord::new(topic).value("marker"))
        .await
        .unwrap();
    p.commit_transaction().await.unwrap();
    p.close(Duration::from_secs(5)).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let mut r = Reader::new(
            cluster.clone(),
            ReaderConfig {
                isolation: IsolationLevel::ReadCommitted,
                ..Default::default()
            },
        );
        let records = r.read_to_end(topic, &[0]).await.expect("read");
        let marker = records
            .iter()
            .position(|r| r.value.as_deref() == Some(&b"marker"[..]));
        if let Some(i) = marker {
            return i;
        }
        assert!(
            Instant::now() < deadline,
            "{topic}: the marker never became visible"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Every trial: SIGINT, then at once the end of stdin, to a transactional
/// `produce` with its records written; it exits 130 (or dies of SIGINT)
/// and none of its records is ever committed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_then_end_of_input_never_commits() {
    let trials: usize = std::env::var("CLI_SIGINT_TRIALS")
        .ok()
        .map(|s| s.parse().expect("CLI_SIGINT_TRIALS is a number"))
        .unwrap_or(20);
    let kafka = SharedKafka::Kafka44Tv2
        .cluster()
        .await
        .expect("shared Kafka 4.4");
    let bootstrap = kafka.bootstrap();
    let cluster = Cluster::connect(ClusterConfig::new(&bootstrap))
        .await
        .unwrap();
    let mut exits = std::collections::BTreeMap::<String, usize>::new();
    for trial in 0..trials {
        let topic = unique_name(&format!("sigint-{trial}"));
        let transactional_id = unique_name(&format!("sigint-{trial}"));
        kafka.create_topic(&topic, 1, 1).await.unwrap();
        let mut child = Command::new(bin())
            .args([
                "--bootstrap",
                &bootstrap,
                "produce",
                "--topic",
                &topic,
                "--transactional-id",
                &transactional_id,
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
        let lines: String = (0..50).map(|i| format!("t{trial}-{i}\n")).collect();
        stdin.write_all(lines.as_bytes()).await.unwrap();
        stdin.flush().await.unwrap();
        // The records are in the log (uncommitted): the producer is running
        // its transaction, with its handler installed.
        let deadline = Instant::now() + Duration::from_secs(60);
        while count(&cluster, &topic, IsolationLevel::ReadUncommitted).await < 50 {
            assert!(
                Instant::now() < deadline,
                "trial {trial}: records never written"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let written = Instant::now();
        let pid = child.id().unwrap().to_string();
        let kill = std::process::Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap();
        assert!(kill.success());
        drop(stdin); // end of input right after the signal
        let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
            .await
            .expect("the CLI exits")
            .unwrap();
        let exit = match (out.status.code(), out.status.signal()) {
            (Some(c), _) => format!("exit {c}"),
            (None, Some(s)) => format!("signal {s}"),
            _ => "?".into(),
        };
        assert!(
            out.status.code() == Some(130) || out.status.signal() == Some(2),
            "trial {trial}: {exit}, stderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let exited = written.elapsed();
        *exits.entry(exit.clone()).or_default() += 1;
        assert_eq!(
            committed_before_marker(kafka, &cluster, &topic, &transactional_id).await,
            0,
            "trial {trial}: an interrupted produce committed"
        );
        eprintln!(
            "trial {trial}: {exit} after {exited:?}, resolved after {:?}",
            written.elapsed()
        );
    }
    eprintln!("{trials} trials, exits: {exits:?}");
}
