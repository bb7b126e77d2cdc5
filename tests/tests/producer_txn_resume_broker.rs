//! Resume after a crash against real brokers: Kafka 4.4 with transaction
//! version 2, 4.4 with TV1, and 3.9 (TV1), the harness's shared single-node
//! clusters (every topic and transactional id is unique: other tests use
//! them too). One test per case and variant, each on a topic of its own:
//!
//! - commit: a Java producer (`tests/java/PreparedTxnWriter.java`) opens a
//!   transaction, writes to 2 partitions, flushes and blocks; we find its
//!   pid/epoch with `describe_transactions` / `describe_producers`, SIGKILL
//!   it and `commit_prepared` → our read_committed reader and the Java
//!   console consumer see the records; a second commit → AlreadyCommitted.
//! - abort: the same with `abort_prepared` → invisible under
//!   read_committed, visible under read_uncommitted.
//! - timeout: a transaction left past its 3 s timeout (the shared clusters
//!   look for timed-out transactions every 500 ms) → `commit_prepared`
//!   reports AbortedByBroker.
//! - lingering: `list_transactions` finds the open transaction of a killed
//!   producer and `abort_lingering_transaction` aborts it.

use kafka_admin::{self as admin, TransactionFilters, TransactionSnapshot};
use kafka_client::Cluster;
use kafka_client::TopicPartition;
use kafka_client::{CoordinatorType, find_coordinator};
use kafka_consumer::{IsolationLevel, Reader, ReaderConfig};
use kafka_producer::kafka_proto::ErrorCode;
use kafka_producer::kafka_proto::messages::EndTxnRequest;
use kafka_producer::txn::{
    PreparedTransaction, ResumeOptions, ResumeOutcome, TransactionState, TransactionVersion,
    abort_prepared, commit_prepared,
};
use kafka_testcontainers::{IsolationLevel as JavaIsolation, KafkaCluster};
use kafka_testcontainers::{SharedKafka, unique_name, unique_topic};
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::support;

const PER_TXN: usize = 6;

/// A transaction whose writer was SIGKILLed is committed from a new
/// process: visible once, to our reader and Java's; a repeat reports
/// AlreadyCommitted, the broker accepts a repeated EndTxn, and an abort
/// after it is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commit_prepared_after_the_writer_was_killed_kafka_4_4_tv2() {
    commit_after_kill(SharedKafka::Kafka44Tv2).await;
}

/// A killed writer's transaction is committed from a new process (TV1 on
/// Kafka 4.4).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commit_prepared_after_the_writer_was_killed_kafka_4_4_tv1() {
    commit_after_kill(SharedKafka::Kafka44Tv1).await;
}

/// A killed writer's transaction is committed from a new process (Kafka
/// 3.9).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commit_prepared_after_the_writer_was_killed_kafka_3_9() {
    commit_after_kill(SharedKafka::Kafka39).await;
}

/// A transaction whose writer was SIGKILLed is aborted from a new process:
/// invisible read_committed (ours and Java's), written read_uncommitted; a
/// repeat reports AlreadyAborted, a commit after it AbortedByBroker.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_prepared_after_the_writer_was_killed_kafka_4_4_tv2() {
    abort_after_kill(SharedKafka::Kafka44Tv2).await;
}

/// A killed writer's transaction is aborted from a new process (TV1 on
/// Kafka 4.4).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_prepared_after_the_writer_was_killed_kafka_4_4_tv1() {
    abort_after_kill(SharedKafka::Kafka44Tv1).await;
}

/// A killed writer's transaction is aborted from a new process (Kafka 3.9).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_prepared_after_the_writer_was_killed_kafka_3_9() {
    abort_after_kill(SharedKafka::Kafka39).await;
}

/// A killed writer's transaction left past its timeout is aborted by the
/// coordinator; `commit_prepared` then reports AbortedByBroker and nothing
/// is visible read_committed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commit_prepared_after_the_timeout_reports_aborted_by_broker_kafka_4_4_tv2() {
    timed_out(SharedKafka::Kafka44Tv2).await;
}

/// A timed-out transaction: `commit_prepared` reports AbortedByBroker (TV1
/// on Kafka 4.4).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commit_prepared_after_the_timeout_reports_aborted_by_broker_kafka_4_4_tv1() {
    timed_out(SharedKafka::Kafka44Tv1).await;
}

/// A timed-out transaction: `commit_prepared` reports AbortedByBroker
/// (Kafka 3.9).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commit_prepared_after_the_timeout_reports_aborted_by_broker_kafka_3_9() {
    timed_out(SharedKafka::Kafka39).await;
}

/// A killed producer's open transaction is listed by `list_transactions`
/// and aborted by `abort_lingering_transaction`: no longer open, nothing
/// visible read_committed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lingering_transaction_listed_and_aborted_kafka_4_4_tv2() {
    lingering(SharedKafka::Kafka44Tv2).await;
}

/// A lingering transaction is listed and aborted (TV1 on Kafka 4.4).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lingering_transaction_listed_and_aborted_kafka_4_4_tv1() {
    lingering(SharedKafka::Kafka44Tv1).await;
}

/// A lingering transaction is listed and aborted (Kafka 3.9).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lingering_transaction_listed_and_aborted_kafka_3_9() {
    lingering(SharedKafka::Kafka39).await;
}

/// A test's shared cluster, client, transaction version (checked against
/// the variant) and topic of its own (2 partitions).
struct Setup {
    kafka: &'static KafkaCluster,
    cluster: Arc<Cluster>,
    tv: TransactionVersion,
    topic: String,
}

async fn setup(variant: SharedKafka) -> Setup {
    let (kafka, cluster, tv) = support::shared::transactional_client(variant).await;
    let topic = unique_topic(kafka, "resume", 2)
        .await
        .expect("create topic");
    // The writers' timeouts (up to 60 s) are below the broker's maximum.
    let max = admin::broker_config(&cluster, kafka.node_id(0), &["transaction.max.timeout.ms"])
        .await
        .unwrap();
    assert_eq!(max["transaction.max.timeout.ms"].as_deref(), Some("900000"));
    Setup {
        kafka,
        cluster,
        tv,
        topic,
    }
}

/// Starts PreparedTxnWriter and waits for "READY".
async fn writer(s: &Setup, txn_id: &str, timeout_ms: u32, tag: &str) -> Child {
    let kafka = s.kafka;
    let program = Path::new(env!("CARGO_MANIFEST_DIR")).join("java/PreparedTxnWriter.java");
    let stderr_path = kafka
        .data_dir()
        .join(format!("{}.stderr", unique_name(&format!("writer-{tag}"))));
    let stderr = std::fs::File::create(&stderr_path).unwrap();
    let mut child = Command::from(
        kafka
            .distribution()
            .java_command(&program.display().to_string()),
    )
    .arg(kafka.bootstrap())
    .arg(&s.topic)
    .arg(txn_id)
    .arg(timeout_ms.to_string())
    .arg(tag)
    .arg(PER_TXN.to_string())
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::from(stderr))
    .kill_on_drop(true)
    .spawn()
    .expect("spawn java");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let ready = tokio::time::timeout(Duration::from_secs(180), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.trim() == "READY" {
                return true;
            }
        }
        false
    })
    .await;
    if ready != Ok(true) {
        let err = std::fs::read_to_string(&stderr_path).unwrap_or_default();
        panic!("PreparedTxnWriter {tag} never got READY: {ready:?}\n{err}");
    }
    child
}

async fn sigkill(mut child: Child) {
    child.start_kill().expect("SIGKILL");
    child.wait().await.expect("reap");
}

/// Polls DescribeTransactions until `cond` holds (a condition wait, not a sleep).
async fn wait_txn(
    cluster: &Cluster,
    id: &str,
    what: &str,
    cond: impl Fn(&TransactionSnapshot) -> bool,
) -> TransactionSnapshot {
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut backoff = Duration::from_millis(20);
    loop {
        let last = match admin::describe_transactions(cluster, &[id]).await {
            Ok(mut d) if cond(&d[0].snapshot) => return d.remove(0).snapshot,
            Ok(d) => format!("{:?}", d[0]),
            Err(e) => e.to_string(),
        };
        assert!(
            Instant::now() < deadline,
            "{id}: timed out waiting for {what}; last: {last}"
        );
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_millis(250));
    }
}

fn prepared_from(d: &TransactionSnapshot, tv: TransactionVersion) -> PreparedTransaction {
    let p = PreparedTransaction {
        transactional_id: d.transactional_id.clone(),
        producer_id: d.producer_id,
        producer_epoch: d.producer_epoch,
        transaction_version: tv,
    };
    // What a real application persists and reads back.
    PreparedTransaction::decode(&p.encode()).unwrap()
}

async fn values(cluster: &Arc<Cluster>, topic: &str, isolation: IsolationLevel) -> Vec<String> {
    let mut r = Reader::new(
        cluster.clone(),
        ReaderConfig {
            isolation,
            ..Default::default()
        },
    );
    let mut v: Vec<String> = r
        .read_to_end(topic, &[0, 1])
        .await
        .expect("read")
        .iter()
        .map(|r| String::from_utf8_lossy(r.value.as_deref().unwrap_or_default()).into_owned())
        .collect();
    v.sort();
    v
}

fn tagged(values: &[String], tag: &str) -> usize {
    values
        .iter()
        .filter(|v| v.starts_with(&format!("{tag}-")))
        .count()
}

/// The topic holds the writer's `PER_TXN` records tagged `tag`: visible to
/// read_committed readers (ours and Java's, which agree) only if
/// `committed`, always to read_uncommitted ones.
async fn check_visibility(s: &Setup, variant: SharedKafka, tag: &str, committed: bool) {
    Reader::new(s.cluster.clone(), ReaderConfig::default())
        .wait_until_stable(&s.topic, &[0, 1], Duration::from_secs(30))
        .await
        .expect("no transaction left open on the topic");
    let read_committed = values(&s.cluster, &s.topic, IsolationLevel::ReadCommitted).await;
    let uncommitted = values(&s.cluster, &s.topic, IsolationLevel::ReadUncommitted).await;
    if committed {
        assert_eq!(
            tagged(&read_committed, tag),
            PER_TXN,
            "{variant}: {read_committed:?}"
        );
        assert_eq!(
            read_committed.len(),
            PER_TXN,
            "{variant}: only the committed transaction: {read_committed:?}"
        );
    } else {
        assert!(
            read_committed.is_empty(),
            "{variant}: {tag} must stay invisible to read_committed: {read_committed:?}"
        );
    }
    assert_eq!(
        tagged(&uncommitted, tag),
        PER_TXN,
        "{variant}: read_uncommitted {tag}: {uncommitted:?}"
    );
    let java = s
        .kafka
        .console_consume(
            &s.topic,
            JavaIsolation::ReadCommitted,
            100,
            Duration::from_secs(5),
        )
        .await
        .unwrap();
    let mut java_values: Vec<String> = java
        .iter()
        .map(|r| String::from_utf8_lossy(r.value.as_deref().unwrap_or_default()).into_owned())
        .collect();
    java_values.sort();
    assert_eq!(
        java_values, read_committed,
        "{variant}: Java read_committed vs ours"
    );
}

/// Commit from a new process.
async fn commit_after_kill(variant: SharedKafka) {
    let s = setup(variant).await;
    let cluster = &s.cluster;
    let opts = ResumeOptions::default();
    let parts = [
        TopicPartition::new(s.topic.as_str(), 0),
        TopicPartition::new(s.topic.as_str(), 1),
    ];
    let id = unique_name("rc-commit");
    let child = writer(&s, &id, 60_000, "commit").await;
    let d = wait_txn(cluster, &id, "Ongoing on 2 partitions", |d| {
        d.state == TransactionState::Ongoing && d.partitions.len() == 2
    })
    .await;
    let producers = admin::describe_producers(cluster, &parts).await.unwrap();
    for tp in &parts {
        let p = producers
            .iter()
            .find(|p| &p.partition == tp && p.producer_id == d.producer_id)
            .unwrap_or_else(|| {
                panic!("{tp}: producer {} not active: {producers:?}", d.producer_id)
            });
        assert!(p.current_txn_start_offset >= 0, "{p:?}");
        assert_eq!(p.producer_epoch, i32::from(d.producer_epoch), "{p:?}");
    }
    sigkill(child).await;
    let prepared = prepared_from(&d, s.tv);
    assert_eq!(
        commit_prepared(cluster, &prepared, &opts).await.unwrap(),
        ResumeOutcome::Committed
    );
    let after = wait_txn(cluster, &id, "CompleteCommit", |d| {
        d.state == TransactionState::CompleteCommit
    })
    .await;
    eprintln!(
        "{variant}: after commit {after:?} (prepared epoch {})",
        prepared.producer_epoch
    );
    // A repeat is harmless and reported as such.
    assert_eq!(
        commit_prepared(cluster, &prepared, &opts).await.unwrap(),
        ResumeOutcome::AlreadyCommitted
    );
    // What the broker itself answers to the repeated EndTxn (TV2: the retry
    // rule epoch == stored - 1; TV1: CompleteCommit + commit).
    let coord = find_coordinator(cluster, CoordinatorType::Transaction, &id)
        .await
        .unwrap();
    let v = s.tv.end_txn_max_version();
    let raw = coord
        .connection
        .send(
            &EndTxnRequest {
                transactional_id: id.clone(),
                producer_id: prepared.producer_id,
                producer_epoch: prepared.producer_epoch,
                committed: true,
                ..Default::default()
            },
            v,
        )
        .await
        .unwrap();
    eprintln!(
        "{variant}: repeated EndTxn v{v} -> {:?} pid {} epoch {}",
        ErrorCode::from(raw.error_code),
        raw.producer_id,
        raw.producer_epoch
    );
    assert_eq!(ErrorCode::from(raw.error_code), ErrorCode::None);
    // The opposite decision is refused.
    assert_eq!(
        abort_prepared(cluster, &prepared, &opts).await.unwrap(),
        ResumeOutcome::AlreadyCommitted
    );
    check_visibility(&s, variant, "commit", true).await;
}

/// Abort from a new process.
async fn abort_after_kill(variant: SharedKafka) {
    let s = setup(variant).await;
    let cluster = &s.cluster;
    let opts = ResumeOptions::default();
    let id = unique_name("rc-abort");
    let child = writer(&s, &id, 60_000, "abort").await;
    let d = wait_txn(cluster, &id, "Ongoing on 2 partitions", |d| {
        d.state == TransactionState::Ongoing && d.partitions.len() == 2
    })
    .await;
    sigkill(child).await;
    let prepared = prepared_from(&d, s.tv);
    assert_eq!(
        abort_prepared(cluster, &prepared, &opts).await.unwrap(),
        ResumeOutcome::Aborted
    );
    wait_txn(cluster, &id, "CompleteAbort", |d| {
        d.state == TransactionState::CompleteAbort
    })
    .await;
    assert_eq!(
        abort_prepared(cluster, &prepared, &opts).await.unwrap(),
        ResumeOutcome::AlreadyAborted
    );
    let late = commit_prepared(cluster, &prepared, &opts).await.unwrap();
    assert!(
        matches!(late, ResumeOutcome::AbortedByBroker { .. }),
        "commit after abort: {late:?}"
    );
    check_visibility(&s, variant, "abort", false).await;
}

/// Left past its timeout: the coordinator aborts it.
async fn timed_out(variant: SharedKafka) {
    let s = setup(variant).await;
    let cluster = &s.cluster;
    let opts = ResumeOptions::default();
    let id = unique_name("rc-timeout");
    let child = writer(&s, &id, 3_000, "timeout").await;
    let d = wait_txn(cluster, &id, "Ongoing", |d| {
        d.state == TransactionState::Ongoing && d.partitions.len() == 2
    })
    .await;
    sigkill(child).await;
    let prepared = prepared_from(&d, s.tv);
    let aborted = wait_txn(cluster, &id, "the timeout abort", |d| {
        d.state == TransactionState::CompleteAbort
    })
    .await;
    eprintln!(
        "{variant}: after timeout {aborted:?} (prepared epoch {})",
        prepared.producer_epoch
    );
    let outcome = commit_prepared(cluster, &prepared, &opts).await.unwrap();
    eprintln!("{variant}: commit after timeout -> {outcome:?}");
    assert!(
        matches!(outcome, ResumeOutcome::AbortedByBroker { .. }),
        "{outcome:?}"
    );
    check_visibility(&s, variant, "timeout", false).await;
}

/// A lingering transaction of a killed producer.
async fn lingering(variant: SharedKafka) {
    let s = setup(variant).await;
    let cluster = &s.cluster;
    let id = unique_name("rc-linger");
    let child = writer(&s, &id, 60_000, "linger").await;
    sigkill(child).await;
    // Other tests' transactions are listed too: only ours is looked at.
    let listed = admin::list_transactions(cluster, &TransactionFilters::states(&["Ongoing"]))
        .await
        .unwrap();
    assert!(
        listed
            .iter()
            .any(|t| t.transactional_id == id && t.state == TransactionState::Ongoing),
        "{id}: {listed:?}"
    );
    let aborted = admin::abort_lingering_transaction(cluster, &id, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(
        aborted.before.as_ref().map(|b| b.snapshot.state.as_str()),
        Some("Ongoing")
    );
    let d = wait_txn(cluster, &id, "aborted", |d| {
        !matches!(
            d.state,
            TransactionState::Ongoing
                | TransactionState::PrepareCommit
                | TransactionState::PrepareAbort
                | TransactionState::PrepareEpochFence
        )
    })
    .await;
    eprintln!("{variant}: lingering aborted: {aborted:?} now {d:?}");
    let still_open: Vec<_> =
        admin::list_transactions(cluster, &TransactionFilters::states(&["Ongoing"]))
            .await
            .unwrap()
            .into_iter()
            .filter(|t| t.transactional_id == id)
            .collect();
    assert!(still_open.is_empty(), "{still_open:?}");
    check_visibility(&s, variant, "linger", false).await;
}
