//! `kafka-eos topic` against the harness's shared Kafka 4.4 cluster (one
//! node), one test per command, each on topics of its own:
//!
//! - `create` makes a topic with the partitions and configs asked for and
//!   returns once it is usable; creating it again fails (exit 1) unless
//!   `--if-not-exists`; `--validate-only` creates nothing.
//! - `list` shows it (and internal topics unless `--exclude-internal`);
//!   `describe` shows its partitions, leaders, replicas and the config set
//!   on it.
//! - `alter --partitions` adds partitions that take records at once;
//!   fewer partitions are refused (exit 1, INVALID_PARTITIONS).
//! - `delete` removes it; deleting a missing topic fails (exit 1) unless
//!   `--if-exists`, and `describe` of it fails.
//!
//! Other tests' topics are on the broker too: listings are checked for this
//! test's own names only.

use crate::common;
use common::{kafka, ok, run};
use kafka_testcontainers::unique_name;
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

/// `topic create NAME --partitions N` (and `extra`), asserted to succeed.
async fn create(bootstrap: &str, topic: &str, partitions: u32, extra: &[&str]) -> String {
    let partitions = partitions.to_string();
    let mut args = vec!["topic", "create", topic, "--partitions", &partitions];
    args.extend_from_slice(extra);
    ok(bootstrap, &args, None).await
}

/// `create` makes the topic with its partitions and config, usable at once
/// (a record to its last partition); a second `create` fails with exit 1
/// unless `--if-not-exists`, which reports the existing topic.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_makes_a_usable_topic_and_refuses_to_make_it_twice() {
    let b = kafka().await.bootstrap();
    let b = b.as_str();
    let orders = unique_name("orders");
    let out = create(b, &orders, 3, &["--config", "retention.ms=12345"]).await;
    assert_eq!(
        out,
        format!("created topic {orders} (3 partitions, replication factor 1)\n")
    );
    ok(b, &["produce", "-t", &orders, "-p", "2"], Some(b"first\n")).await;
    let err = fails(b, &["topic", "create", &orders]).await;
    assert!(err.contains("exists already"), "{err}");
    let out = ok(b, &["topic", "create", &orders, "--if-not-exists"], None).await;
    assert_eq!(out, format!("topic {orders} exists already\n"));
}

/// `create --validate-only` reports that the topic could be created and
/// creates nothing: the topic is not listed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_validate_only_creates_nothing() {
    let b = kafka().await.bootstrap();
    let b = b.as_str();
    let dry = unique_name("dry");
    let out = create(b, &dry, 2, &["--validate-only"]).await;
    assert!(out.contains("not created"), "{out}");
    let all = names(b, &[]).await;
    assert!(!all.contains(&dry), "validate-only created it: {all:?}");
}

/// `list` shows the topic and internal topics (a transactional produce
/// makes `__transaction_state`), `--exclude-internal` leaves the internal
/// ones out; `describe` shows the topic id, partition count, replication
/// factor, the config set on it, and each partition's leader, replicas and
/// ISR.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_and_describe_show_the_topic_its_partitions_and_configs() {
    let b = kafka().await.bootstrap();
    let b = b.as_str();
    let orders = unique_name("orders");
    create(b, &orders, 3, &["--config", "retention.ms=12345"]).await;
    let transactional_id = unique_name("topic-test");
    ok(
        b,
        &[
            "produce",
            "-t",
            &orders,
            "--transactional-id",
            &transactional_id,
        ],
        Some(b"x\n"),
    )
    .await;
    let all = names(b, &[]).await;
    assert!(all.contains(&orders), "{all:?}");
    assert!(all.contains(&"__transaction_state".to_string()), "{all:?}");
    let external = names(b, &["--exclude-internal"]).await;
    let ours: Vec<&String> = external.iter().filter(|n| **n == orders).collect();
    assert_eq!(ours, [&orders], "listed once: {external:?}");
    let internal: Vec<&String> = external
        .iter()
        .filter(|n| *n == "__transaction_state" || *n == "__consumer_offsets")
        .collect();
    assert!(internal.is_empty(), "internal topics listed: {external:?}");
    let text = ok(b, &["topic", "describe", &orders], None).await;
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(
        lines[0].starts_with(&format!("Topic: {orders}\tTopicId: "))
            && lines[0].ends_with(
                "\tPartitionCount: 3\tReplicationFactor: 1\tConfigs: retention.ms=12345"
            ),
        "{text}"
    );
    for (p, line) in lines[1..].iter().enumerate() {
        assert_eq!(
            *line,
            format!("\tTopic: {orders}\tPartition: {p}\tLeader: 1\tReplicas: 1\tIsr: 1"),
            "{text}"
        );
    }
}

/// `alter --partitions 5` on a 3-partition topic: the new partitions take
/// records at once and `describe` shows 5; `alter --partitions 2` is
/// refused with exit 1 (INVALID_PARTITIONS).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alter_adds_partitions_that_take_records_and_refuses_fewer() {
    let b = kafka().await.bootstrap();
    let b = b.as_str();
    let orders = unique_name("orders");
    create(b, &orders, 3, &[]).await;
    let out = ok(b, &["topic", "alter", &orders, "--partitions", "5"], None).await;
    assert_eq!(out, format!("topic {orders} now has 5 partitions\n"));
    ok(
        b,
        &["produce", "-t", &orders, "-p", "4"],
        Some(b"in the new partition\n"),
    )
    .await;
    let read = ok(b, &["consume", "-t", &orders, "-p", "4", "-e"], None).await;
    assert_eq!(read, "in the new partition\n");
    let text = ok(b, &["topic", "describe", &orders], None).await;
    assert!(text.contains("PartitionCount: 5"), "{text}");
    let err = fails(b, &["topic", "alter", &orders, "--partitions", "2"]).await;
    assert!(err.contains("INVALID_PARTITIONS"), "{err}");
}

/// `delete` removes the topic (no longer listed, `describe` fails with exit
/// 1); deleting it again fails with exit 1 (UNKNOWN_TOPIC) unless
/// `--if-exists`, which reports that it does not exist.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_removes_the_topic_and_refuses_a_missing_one_unless_if_exists() {
    let b = kafka().await.bootstrap();
    let b = b.as_str();
    let orders = unique_name("orders");
    create(b, &orders, 3, &[]).await;
    let out = ok(b, &["topic", "delete", &orders], None).await;
    assert_eq!(out, format!("deleted topic {orders}\n"));
    let deadline = Instant::now() + Duration::from_secs(30);
    while names(b, &[]).await.contains(&orders) {
        assert!(
            Instant::now() < deadline,
            "{orders} still listed after 30 s"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let err = fails(b, &["topic", "describe", &orders]).await;
    assert!(err.contains("does not exist"), "{err}");
    let err = fails(b, &["topic", "delete", &orders]).await;
    assert!(err.contains("UNKNOWN_TOPIC"), "{err}");
    let out = ok(b, &["topic", "delete", &orders, "--if-exists"], None).await;
    assert_eq!(out, format!("topic {orders} does not exist\n"));
}
