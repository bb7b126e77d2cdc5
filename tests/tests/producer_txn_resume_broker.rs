//! Resume after a crash against real brokers: Kafka 4.4 with transaction
//! version 2, 4.4 with TV1, and 3.9 (TV1). One single-node cluster per
//! variant, shared by every case:
//!
//! 1. A Java producer (`tests/java/PreparedTxnWriter.java`) opens a
//!    transaction, writes to 2 partitions, flushes and blocks; we find its
//!    pid/epoch with `describe_transactions` / `describe_producers`, SIGKILL
//!    it and `commit_prepared` → our read_committed reader and the Java
//!    console consumer see the records; a second commit → AlreadyCommitted.
//! 2. Same, `abort_prepared` → invisible under read_committed, visible under
//!    read_uncommitted.
//! 3. A transaction left past its 3 s timeout (cleanup every 1 s) →
//!    `commit_prepared` reports AbortedByBroker.
//! 4. `list_transactions` finds the open transaction of a killed producer and
//!    `abort_lingering_transaction` aborts it.

use kafka_producer::admin::{self, TransactionDescription, TransactionFilters};
use kafka_producer::kafka_proto::ErrorCode;
use kafka_producer::kafka_proto::messages::EndTxnRequest;
use kafka_producer::reader::{IsolationLevel, Reader, ReaderConfig};
use kafka_producer::txn::{
    CoordinatorType, PreparedTransaction, ResumeOptions, ResumeOutcome, TransactionState,
    TransactionVersion, abort_prepared, commit_prepared, find_coordinator,
};
use kafka_producer::{Cluster, ClusterConfig, TopicPartition};
use kafka_testcontainers::{IsolationLevel as JavaIsolation, KafkaCluster, KafkaVersion};
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// One cluster at a time on the shared CI cores.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const TOPIC: &str = "resume";
const PER_TXN: usize = 6;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn txn_resume_kafka_4_4_tv2() {
    run(KafkaVersion::V4_4, Some(2)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn txn_resume_kafka_4_4_tv1() {
    run(KafkaVersion::V4_4, Some(1)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn txn_resume_kafka_3_9() {
    run(KafkaVersion::V3_9, None).await;
}

fn java_binary() -> String {
    match std::env::var("JAVA_HOME") {
        Ok(h) if Path::new(&h).join("bin/java").is_file() => format!("{h}/bin/java"),
        _ => "java".into(),
    }
}

/// Starts PreparedTxnWriter and waits for "READY".
async fn writer(kafka: &KafkaCluster, txn_id: &str, timeout_ms: u32, tag: &str) -> Child {
    let program = Path::new(env!("CARGO_MANIFEST_DIR")).join("java/PreparedTxnWriter.java");
    let stderr =
        std::fs::File::create(kafka.data_dir().join(format!("writer-{tag}.stderr"))).unwrap();
    let mut child = Command::new(java_binary())
        .arg("-Xmx256m")
        .arg("-XX:TieredStopAtLevel=1")
        .arg("-cp")
        .arg(kafka.distribution().classpath())
        .arg(&program)
        .arg(kafka.bootstrap())
        .arg(TOPIC)
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
        let err = std::fs::read_to_string(kafka.data_dir().join(format!("writer-{tag}.stderr")))
            .unwrap_or_default();
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
    cond: impl Fn(&TransactionDescription) -> bool,
) -> TransactionDescription {
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut backoff = Duration::from_millis(20);
    loop {
        let last = match admin::describe_transactions(cluster, &[id]).await {
            Ok(mut d) if cond(&d[0]) => return d.remove(0),
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

fn prepared_from(d: &TransactionDescription, tv: TransactionVersion) -> PreparedTransaction {
    let p = PreparedTransaction {
        transactional_id: d.transactional_id.clone(),
        producer_id: d.producer_id,
        producer_epoch: d.producer_epoch,
        transaction_version: tv,
    };
    // What a real application persists and reads back.
    PreparedTransaction::decode(&p.encode()).unwrap()
}

async fn values(cluster: &Arc<Cluster>, isolation: IsolationLevel) -> Vec<String> {
    let mut r = Reader::new(
        cluster.clone(),
        ReaderConfig {
            isolation,
            ..Default::default()
        },
    );
    let mut v: Vec<String> = r
        .read_to_end(TOPIC, &[0, 1])
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

async fn run(version: KafkaVersion, tv: Option<i16>) {
    let _serial = SERIAL.lock().await;
    let started = Instant::now();
    let mut b = KafkaCluster::builder()
        .version(version.clone())
        .nodes(1)
        .broker_config(
            "transaction.abort.timed.out.transaction.cleanup.interval.ms",
            "1000",
        );
    if let Some(tv) = tv {
        b = b.transaction_version(tv);
    }
    let kafka = b.start().await.expect("start cluster");
    let level = kafka
        .finalized_feature(0, "transaction.version")
        .await
        .unwrap()
        .unwrap_or(0);
    let txn_version = TransactionVersion::from_level(level);
    assert_eq!(
        txn_version == TransactionVersion::V2,
        tv == Some(2),
        "finalized transaction.version {level}"
    );
    kafka.create_topic(TOPIC, 2, 1).await.expect("create topic");
    let cluster = Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
        .await
        .unwrap();
    let opts = ResumeOptions::default();
    let parts = [TopicPartition::new(TOPIC, 0), TopicPartition::new(TOPIC, 1)];

    let max = admin::broker_config(&cluster, kafka.node_id(0), &["transaction.max.timeout.ms"])
        .await
        .unwrap();
    assert_eq!(max["transaction.max.timeout.ms"].as_deref(), Some("900000"));

    // ---- 1. commit from a new process
    let child = writer(&kafka, "rc-commit", 60_000, "commit").await;
    let d = wait_txn(&cluster, "rc-commit", "Ongoing on 2 partitions", |d| {
        d.state == TransactionState::Ongoing && d.partitions.len() == 2
    })
    .await;
    let producers = admin::describe_producers(&cluster, &parts).await.unwrap();
    for tp in &parts {
        let s = producers
            .iter()
            .find(|s| &s.partition == tp && s.producer_id == d.producer_id)
            .unwrap_or_else(|| {
                panic!("{tp}: producer {} not active: {producers:?}", d.producer_id)
            });
        assert!(s.current_txn_start_offset >= 0, "{s:?}");
        assert_eq!(s.producer_epoch, i32::from(d.producer_epoch), "{s:?}");
    }
    sigkill(child).await;
    let prepared = prepared_from(&d, txn_version);
    assert_eq!(
        commit_prepared(&cluster, &prepared, &opts).await.unwrap(),
        ResumeOutcome::Committed
    );
    let after = wait_txn(&cluster, "rc-commit", "CompleteCommit", |d| {
        d.state == TransactionState::CompleteCommit
    })
    .await;
    eprintln!(
        "{version} TV{level}: after commit {after:?} (prepared epoch {})",
        prepared.producer_epoch
    );
    // A repeat is harmless and reported as such.
    assert_eq!(
        commit_prepared(&cluster, &prepared, &opts).await.unwrap(),
        ResumeOutcome::AlreadyCommitted
    );
    // What the broker itself answers to the repeated EndTxn (TV2: the retry
    // rule epoch == stored - 1; TV1: CompleteCommit + commit).
    let coord = find_coordinator(&cluster, CoordinatorType::Transaction, "rc-commit")
        .await
        .unwrap();
    let v = txn_version.end_txn_max_version();
    let raw = coord
        .connection
        .send(
            &EndTxnRequest {
                transactional_id: "rc-commit".into(),
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
        "{version} TV{level}: repeated EndTxn v{v} -> {:?} pid {} epoch {}",
        ErrorCode::from(raw.error_code),
        raw.producer_id,
        raw.producer_epoch
    );
    assert_eq!(ErrorCode::from(raw.error_code), ErrorCode::None);
    // The opposite decision is refused.
    assert_eq!(
        abort_prepared(&cluster, &prepared, &opts).await.unwrap(),
        ResumeOutcome::AlreadyCommitted
    );

    // ---- 2. abort from a new process
    let child = writer(&kafka, "rc-abort", 60_000, "abort").await;
    let d = wait_txn(&cluster, "rc-abort", "Ongoing on 2 partitions", |d| {
        d.state == TransactionState::Ongoing && d.partitions.len() == 2
    })
    .await;
    sigkill(child).await;
    let prepared = prepared_from(&d, txn_version);
    assert_eq!(
        abort_prepared(&cluster, &prepared, &opts).await.unwrap(),
        ResumeOutcome::Aborted
    );
    wait_txn(&cluster, "rc-abort", "CompleteAbort", |d| {
        d.state == TransactionState::CompleteAbort
    })
    .await;
    assert_eq!(
        abort_prepared(&cluster, &prepared, &opts).await.unwrap(),
        ResumeOutcome::AlreadyAborted
    );
    let late = commit_prepared(&cluster, &prepared, &opts).await.unwrap();
    assert!(
        matches!(late, ResumeOutcome::AbortedByBroker { .. }),
        "commit after abort: {late:?}"
    );

    // ---- 3. left past its timeout: the coordinator aborts it
    let child = writer(&kafka, "rc-timeout", 3_000, "timeout").await;
    let d = wait_txn(&cluster, "rc-timeout", "Ongoing", |d| {
        d.state == TransactionState::Ongoing && d.partitions.len() == 2
    })
    .await;
    sigkill(child).await;
    let prepared = prepared_from(&d, txn_version);
    let aborted = wait_txn(&cluster, "rc-timeout", "the timeout abort", |d| {
        d.state == TransactionState::CompleteAbort
    })
    .await;
    eprintln!(
        "{version} TV{level}: after timeout {aborted:?} (prepared epoch {})",
        prepared.producer_epoch
    );
    let outcome = commit_prepared(&cluster, &prepared, &opts).await.unwrap();
    eprintln!("{version} TV{level}: commit after timeout -> {outcome:?}");
    assert!(
        matches!(outcome, ResumeOutcome::AbortedByBroker { .. }),
        "{outcome:?}"
    );

    // ---- 4. a lingering transaction of a killed producer
    let child = writer(&kafka, "rc-linger", 60_000, "linger").await;
    sigkill(child).await;
    let listed = admin::list_transactions(&cluster, &TransactionFilters::states(&["Ongoing"]))
        .await
        .unwrap();
    assert!(
        listed
            .iter()
            .any(|t| t.transactional_id == "rc-linger" && t.state == TransactionState::Ongoing),
        "{listed:?}"
    );
    let aborted =
        admin::abort_lingering_transaction(&cluster, "rc-linger", Duration::from_secs(60))
            .await
            .unwrap();
    assert_eq!(
        aborted.before.as_ref().map(|b| b.state.as_str()),
        Some("Ongoing")
    );
    let d = wait_txn(&cluster, "rc-linger", "aborted", |d| {
        !matches!(
            d.state,
            TransactionState::Ongoing
                | TransactionState::PrepareCommit
                | TransactionState::PrepareAbort
                | TransactionState::PrepareEpochFence
        )
    })
    .await;
    eprintln!("{version} TV{level}: lingering aborted: {aborted:?} now {d:?}");
    let still_open = admin::list_transactions(&cluster, &TransactionFilters::states(&["Ongoing"]))
        .await
        .unwrap();
    assert!(still_open.is_empty(), "{still_open:?}");

    // ---- visibility: ours and Java's read_committed agree
    let committed = values(&cluster, IsolationLevel::ReadCommitted).await;
    let uncommitted = values(&cluster, IsolationLevel::ReadUncommitted).await;
    assert_eq!(tagged(&committed, "commit"), PER_TXN, "{committed:?}");
    assert_eq!(
        committed.len(),
        PER_TXN,
        "only the committed transaction: {committed:?}"
    );
    for tag in ["commit", "abort", "timeout", "linger"] {
        assert_eq!(
            tagged(&uncommitted, tag),
            PER_TXN,
            "read_uncommitted {tag}: {uncommitted:?}"
        );
    }
    let java = kafka
        .console_consume(
            TOPIC,
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
    assert_eq!(java_values, committed, "Java read_committed vs ours");
    eprintln!(
        "{version} TV{level}: resume cases passed in {:?}",
        started.elapsed()
    );
}
