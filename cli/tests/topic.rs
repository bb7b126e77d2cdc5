//! `kafka-eos topic` against one real broker (Kafka 4.4, one node), in one
//! test so the cluster is shared; each section states its invariant:
//!
//! 1. `create` makes a topic with the partitions and configs asked for and
//!    returns once it is usable; creating it again fails (exit 1) unless
//!    `--if-not-exists`; `--validate-only` creates nothing.
//! 2. `list` shows it (and internal topics unless `--exclude-internal`);
//!    `describe` shows its partitions, leaders, replicas and the config set
//!    on it.
//! 3. `alter --partitions` adds partitions that take records at once;
//!    fewer partitions are refused (exit 1, INVALID_PARTITIONS).
//! 4. `delete` removes it; deleting a missing topic fails (exit 1) unless
//!    `--if-exists`, and `describe` of it fails.

mod common;
use common::{ok, run};
use kafka_testcontainers::KafkaCluster;
use std::time::{Duration, Instant};

/// Runs the CLI; panics unless it exits 1; returns stderr.
async fn fails(bootstrap: &str, args: &[&str]) -> String {
    let out = run(bootstrap, args, None).await;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "kafka-eos {args:?}: {stderr}");
    stderr
}

async fn names(bootstrap: &str, extra: &[&str]) -> Vec<String> {
    let mut args = vec!["topic", "list"];
    args.extend_from_slice(extra);
    ok(bootstrap, &args, None)
        .await
        .lines()
        .map(String::from)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn topic_commands_against_a_broker() {
    let kafka = KafkaCluster::builder()
        .nodes(1)
        .start()
        .await
        .expect("start cluster");
    let b = kafka.bootstrap();
    let b = b.as_str();

    // ---- 1. create.
    let out = ok(
        b,
        &[
            "topic",
            "create",
            "orders",
            "--partitions",
            "3",
            "--config",
            "retention.ms=12345",
        ],
        None,
    )
    .await;
    assert_eq!(
        out,
        "created topic orders (3 partitions, replication factor 1)\n"
    );
    // Usable at once: a record to its last partition.
    ok(b, &["produce", "-t", "orders", "-p", "2"], Some(b"first\n")).await;
    let err = fails(b, &["topic", "create", "orders"]).await;
    assert!(err.contains("exists already"), "{err}");
    let out = ok(b, &["topic", "create", "orders", "--if-not-exists"], None).await;
    assert_eq!(out, "topic orders exists already\n");
    let out = ok(
        b,
        &[
            "topic",
            "create",
            "dry",
            "--partitions",
            "2",
            "--validate-only",
        ],
        None,
    )
    .await;
    assert!(out.contains("not created"), "{out}");

    // ---- 2. list and describe; a transactional produce makes
    // __transaction_state, an internal topic.
    ok(
        b,
        &[
            "produce",
            "-t",
            "orders",
            "--transactional-id",
            "topic-test",
        ],
        Some(b"x\n"),
    )
    .await;
    let all = names(b, &[]).await;
    assert!(all.contains(&"orders".to_string()), "{all:?}");
    assert!(all.contains(&"__transaction_state".to_string()), "{all:?}");
    assert!(
        !all.contains(&"dry".to_string()),
        "validate-only created it: {all:?}"
    );
    let external = names(b, &["--exclude-internal"]).await;
    assert_eq!(external, ["orders"]);
    let text = ok(b, &["topic", "describe", "orders"], None).await;
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(
        lines[0].starts_with("Topic: orders\tTopicId: ")
            && lines[0].ends_with(
                "\tPartitionCount: 3\tReplicationFactor: 1\tConfigs: retention.ms=12345"
            ),
        "{text}"
    );
    for (p, line) in lines[1..].iter().enumerate() {
        assert_eq!(
            *line,
            format!("\tTopic: orders\tPartition: {p}\tLeader: 1\tReplicas: 1\tIsr: 1"),
            "{text}"
        );
    }

    // ---- 3. alter: 3 -> 5 partitions; fewer refused.
    let out = ok(b, &["topic", "alter", "orders", "--partitions", "5"], None).await;
    assert_eq!(out, "topic orders now has 5 partitions\n");
    ok(
        b,
        &["produce", "-t", "orders", "-p", "4"],
        Some(b"in the new partition\n"),
    )
    .await;
    let read = ok(b, &["consume", "-t", "orders", "-p", "4", "-e"], None).await;
    assert_eq!(read, "in the new partition\n");
    let text = ok(b, &["topic", "describe", "orders"], None).await;
    assert!(text.contains("PartitionCount: 5"), "{text}");
    let err = fails(b, &["topic", "alter", "orders", "--partitions", "2"]).await;
    assert!(err.contains("INVALID_PARTITIONS"), "{err}");

    // ---- 4. delete.
    let out = ok(b, &["topic", "delete", "orders"], None).await;
    assert_eq!(out, "deleted topic orders\n");
    let deadline = Instant::now() + Duration::from_secs(30);
    while names(b, &[]).await.contains(&"orders".to_string()) {
        assert!(Instant::now() < deadline, "orders still listed after 30 s");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let err = fails(b, &["topic", "describe", "orders"]).await;
    assert!(err.contains("does not exist"), "{err}");
    let err = fails(b, &["topic", "delete", "orders"]).await;
    assert!(err.contains("UNKNOWN_TOPIC"), "{err}");
    let out = ok(b, &["topic", "delete", "orders", "--if-exists"], None).await;
    assert_eq!(out, "topic orders does not exist\n");
}
