//! The transactional producer against real brokers: Kafka 4.4 with
//! transaction version 2, 4.4 with TV1, and 3.9 (TV1), the harness's shared
//! single-node clusters (every name is unique: other tests use them too).
//! One test per case and variant:
//!
//! - commit/abort visibility: 9 transactions over 3 partitions, every 3rd
//!   aborted; our read_committed reader and the Java console consumer agree
//!   on exactly the committed records, read_uncommitted sees all; under TV2
//!   every EndTxn v5 bumps the epoch and sequences restart at 0.
//! - an empty transaction commits (and aborts) without EndTxn.
//! - a second producer with the same transactional id fences the first
//!   (typed fenced error on its next operations).
//! - consume-transform-produce with `send_offsets_to_transaction`: committed
//!   output and offsets appear together, an aborted round shows neither.
//! - `prepare_transaction` then `commit_prepared` without the producer;
//!   and a child process (`src/bin/txn_prepare_child.rs` of this package)
//!   that prepares, persists the PreparedTransaction and is SIGKILLed → a
//!   new process commits it: visible exactly once.
//! - a producer started while its bootstrap address does not answer waits
//!   for it (up to `max.block.ms`), then commits.
//!
//! Plus, on a 3-node 4.4 TV2 cluster of its own: kill -9 of the transaction
//! coordinator in the middle of a transaction; the commit completes (or
//! fails typed and abort works) and the next transaction works.

use kafka_admin as admin;
use kafka_client::{Cluster, ClusterConfig};
use kafka_consumer::{IsolationLevel, Reader, ReaderConfig};
use kafka_producer::txn::{
    GroupMetadata, ResumeOptions, ResumeOutcome, State, TransactionVersion, commit_prepared,
};
use kafka_producer::txn::{PreparedTransaction, TransactionError};
use kafka_producer::{
    ProduceError, Producer, ProducerConfig, ProducerRecord, TopicPartition, TransactionalProducer,
};
use kafka_testcontainers::{IsolationLevel as JavaIsolation, KafkaCluster, KafkaVersion, Proxy};
use kafka_testcontainers::{SharedKafka, unique_name, unique_topic};
use std::collections::BTreeMap;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::support;

/// Commits and aborts are visible exactly as decided: read_committed (ours
/// and Java's) returns the committed records only, read_uncommitted all of
/// them; TV2 bumps the epoch at every EndTxn, TV1 never without an error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commit_and_abort_visibility_kafka_4_4_tv2() {
    visibility(SharedKafka::Kafka44Tv2).await;
}

/// Commits and aborts are visible exactly as decided (TV1 on Kafka 4.4).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commit_and_abort_visibility_kafka_4_4_tv1() {
    visibility(SharedKafka::Kafka44Tv1).await;
}

/// Commits and aborts are visible exactly as decided (Kafka 3.9).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commit_and_abort_visibility_kafka_3_9() {
    visibility(SharedKafka::Kafka39).await;
}

/// A transaction without records commits and aborts without EndTxn (no
/// epoch bump under TV2), and a transaction with records follows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_transactions_send_no_end_txn_kafka_4_4_tv2() {
    empty_transactions(SharedKafka::Kafka44Tv2).await;
}

/// A transaction without records ends without EndTxn (TV1 on Kafka 4.4).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_transactions_send_no_end_txn_kafka_4_4_tv1() {
    empty_transactions(SharedKafka::Kafka44Tv1).await;
}

/// A transaction without records ends without EndTxn (Kafka 3.9).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_transactions_send_no_end_txn_kafka_3_9() {
    empty_transactions(SharedKafka::Kafka39).await;
}

/// A second producer with the same transactional id fences the first: its
/// commit, begin, abort and send fail with the typed fenced error, its
/// records stay invisible, and the successor's commit is visible.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn second_producer_fences_the_first_kafka_4_4_tv2() {
    fencing(SharedKafka::Kafka44Tv2).await;
}

/// A second producer with the same transactional id fences the first (TV1
/// on Kafka 4.4).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn second_producer_fences_the_first_kafka_4_4_tv1() {
    fencing(SharedKafka::Kafka44Tv1).await;
}

/// A second producer with the same transactional id fences the first
/// (Kafka 3.9).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn second_producer_fences_the_first_kafka_3_9() {
    fencing(SharedKafka::Kafka39).await;
}

/// Consume-transform-produce: a committed round's output and group offsets
/// appear together; an aborted round shows neither.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consume_transform_produce_commits_offsets_with_output_kafka_4_4_tv2() {
    consume_transform_produce(SharedKafka::Kafka44Tv2).await;
}

/// Consume-transform-produce: output and group offsets together (TV1 on
/// Kafka 4.4).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consume_transform_produce_commits_offsets_with_output_kafka_4_4_tv1() {
    consume_transform_produce(SharedKafka::Kafka44Tv1).await;
}

/// Consume-transform-produce: output and group offsets together (Kafka
/// 3.9).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consume_transform_produce_commits_offsets_with_output_kafka_3_9() {
    consume_transform_produce(SharedKafka::Kafka39).await;
}

/// A prepared transaction is committed by `commit_prepared` without its
/// producer, also one whose process was SIGKILLed after preparing: its
/// records are visible exactly once; a repeat reports AlreadyCommitted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepared_transaction_committed_without_its_producer_kafka_4_4_tv2() {
    prepared(SharedKafka::Kafka44Tv2).await;
}

/// A prepared transaction is committed without its producer (TV1 on Kafka
/// 4.4).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepared_transaction_committed_without_its_producer_kafka_4_4_tv1() {
    prepared(SharedKafka::Kafka44Tv1).await;
}

/// A prepared transaction is committed without its producer (Kafka 3.9).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepared_transaction_committed_without_its_producer_kafka_3_9() {
    prepared(SharedKafka::Kafka39).await;
}

/// The variant's shared cluster, a client of it, and the transaction
/// version it finalized (checked against the variant).
async fn setup(variant: SharedKafka) -> (&'static KafkaCluster, Arc<Cluster>, TransactionVersion) {
    support::shared::transactional_client(variant).await
}

/// A new topic named after `prefix`, with `partitions` partitions.
async fn new_topic(kafka: &KafkaCluster, prefix: &str, partitions: i32) -> String {
    unique_topic(kafka, prefix, partitions)
        .await
        .expect("create topic")
}

fn config(kafka: &KafkaCluster, txn_id: &str) -> ProducerConfig {
    ProducerConfig::from_properties([
        ("bootstrap.servers", kafka.bootstrap().as_str()),
        ("transactional.id", txn_id),
        ("max.block.ms", "30000"),
    ])
    .unwrap()
}

async fn producer(kafka: &KafkaCluster, txn_id: &str) -> TransactionalProducer {
    let p = TransactionalProducer::connect(config(kafka, txn_id))
        .await
        .unwrap();
    p.init_transactions().await.unwrap();
    assert_eq!(p.state(), State::Ready);
    p
}

async fn values(
    cluster: &Arc<Cluster>,
    topic: &str,
    partitions: &[i32],
    isolation: IsolationLevel,
) -> Vec<String> {
    let mut r = Reader::new(
        cluster.clone(),
        ReaderConfig {
            isolation,
            ..Default::default()
        },
    );
    let mut v: Vec<String> = r
        .read_to_end(topic, partitions)
        .await
        .expect("read")
        .iter()
        .map(|r| String::from_utf8_lossy(r.value.as_deref().unwrap_or_default()).into_owned())
        .collect();
    v.sort();
    v
}

/// Reads until the records equal `expected`: a commit returns once the
/// coordinator logged PrepareCommit; the markers (and so the last stable
/// offset) follow asynchronously.
async fn values_eventually(
    cluster: &Arc<Cluster>,
    topic: &str,
    partitions: &[i32],
    isolation: IsolationLevel,
    expected: &[String],
) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut backoff = Duration::from_millis(10);
    loop {
        let v = values(cluster, topic, partitions, isolation).await;
        if v == expected || Instant::now() >= deadline {
            return v;
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_millis(200));
    }
}

/// 9 transactions of 3 records per partition, every 3rd aborted.
async fn visibility(variant: SharedKafka) {
    let (kafka, cluster, tv) = setup(variant).await;
    let topic = new_topic(kafka, "vis", 3).await;
    let p = producer(kafka, &unique_name("vis-tx")).await;
    assert_eq!(p.transaction_version(), tv);
    let mut committed = Vec::new();
    let mut all = Vec::new();
    let mut epochs = Vec::new();
    for txn in 0..9 {
        let before = p.producer_id_and_epoch();
        p.begin_transaction().unwrap();
        let sends: Vec<_> = (0..9)
            .map(|i| {
                let v = format!("t{txn}-{i}");
                all.push(v.clone());
                p.send(
                    ProducerRecord::new(topic.as_str())
                        .partition(i % 3)
                        .value(v),
                )
            })
            .collect();
        let abort = txn % 3 == 2;
        if abort {
            // Written, then aborted: read_uncommitted sees them.
            p.flush().await;
            p.abort_transaction().await.unwrap();
        } else {
            p.commit_transaction().await.unwrap();
            committed.extend((0..9).map(|i| format!("t{txn}-{i}")));
        }
        for s in sends {
            let m = s.await.expect("acknowledged");
            assert!(m.offset.is_some());
        }
        let after = p.producer_id_and_epoch();
        assert_eq!(p.state(), State::Ready);
        if tv == TransactionVersion::V2 {
            // KIP-890: every EndTxn v5 bumps the epoch.
            assert_eq!(after.producer_id, before.producer_id);
            assert_eq!(after.epoch, before.epoch + 1, "txn {txn}");
        } else {
            assert_eq!(after, before, "TV1: no bump without an error");
        }
        epochs.push(before.epoch);
    }
    committed.sort();
    all.sort();
    let ours = values_eventually(
        &cluster,
        &topic,
        &[0, 1, 2],
        IsolationLevel::ReadCommitted,
        &committed,
    )
    .await;
    assert_eq!(
        ours, committed,
        "read_committed: exactly the committed records"
    );
    let uncommitted = values(
        &cluster,
        &topic,
        &[0, 1, 2],
        IsolationLevel::ReadUncommitted,
    )
    .await;
    assert_eq!(
        uncommitted, all,
        "read_uncommitted sees aborted records too"
    );
    let java = kafka
        .console_consume(
            &topic,
            JavaIsolation::ReadCommitted,
            1000,
            Duration::from_secs(5),
        )
        .await
        .unwrap();
    let mut java: Vec<String> = java
        .iter()
        .map(|r| String::from_utf8_lossy(r.value.as_deref().unwrap_or_default()).into_owned())
        .collect();
    java.sort();
    assert_eq!(java, ours, "Java read_committed vs ours");
    // Sequences: TV1 keeps counting under one epoch (9 × 3 records per
    // partition → 26). TV2: each transaction's first batch had to start at
    // sequence 0 under its new epoch (the broker refuses anything else for a
    // new epoch), and the epoch-bumping marker of the last EndTxn leaves no
    // sequence (-1).
    let parts: Vec<TopicPartition> = (0..3)
        .map(|i| TopicPartition::new(topic.as_str(), i))
        .collect();
    let states = admin::describe_producers(&cluster, &parts).await.unwrap();
    let pid = p.producer_id_and_epoch().producer_id;
    for tp in &parts {
        let s = states
            .iter()
            .find(|s| &s.partition == tp && s.producer_id == pid)
            .unwrap_or_else(|| panic!("{tp}: {states:?}"));
        let expect = if tv == TransactionVersion::V2 { -1 } else { 26 };
        assert_eq!(s.last_sequence, expect, "{tp}: {s:?}");
    }
    if tv == TransactionVersion::V2 {
        eprintln!("{variant}: TV2 epochs per transaction: {epochs:?}");
    }
    p.close(Duration::from_secs(10)).await.unwrap();
}

/// An empty transaction commits and aborts locally, without EndTxn.
async fn empty_transactions(variant: SharedKafka) {
    let (kafka, cluster, tv) = setup(variant).await;
    let topic = new_topic(kafka, "empty", 1).await;
    let p = producer(kafka, &unique_name("empty-tx")).await;
    for commit in [true, false, true] {
        let before = p.producer_id_and_epoch();
        p.begin_transaction().unwrap();
        assert!(
            !p.transaction_manager()
                .lock()
                .unwrap()
                .transaction_started()
        );
        if commit {
            p.commit_transaction().await.unwrap();
        } else {
            p.abort_transaction().await.unwrap();
        }
        assert_eq!(p.state(), State::Ready);
        // Under TV2 an EndTxn v5 would have bumped the epoch.
        assert_eq!(p.producer_id_and_epoch(), before, "{tv:?}: no EndTxn");
    }
    // And a non-empty one afterwards works.
    p.begin_transaction().unwrap();
    p.send(ProducerRecord::new(topic.as_str()).value("empty-then-data"))
        .await
        .unwrap();
    p.commit_transaction().await.unwrap();
    p.close(Duration::from_secs(10)).await.unwrap();
    let expected = vec!["empty-then-data".to_string()];
    let v = values_eventually(
        &cluster,
        &topic,
        &[0],
        IsolationLevel::ReadCommitted,
        &expected,
    )
    .await;
    assert_eq!(v, expected);
}

/// A second producer with the same transactional id fences the first.
async fn fencing(variant: SharedKafka) {
    let (kafka, cluster, _) = setup(variant).await;
    let topic = new_topic(kafka, "fence", 1).await;
    let txn_id = unique_name("fence-tx");
    let p1 = producer(kafka, &txn_id).await;
    p1.begin_transaction().unwrap();
    p1.send(ProducerRecord::new(topic.as_str()).value("zombie"))
        .await
        .unwrap();
    let p2 = producer(kafka, &txn_id).await;
    assert!(
        p2.producer_id_and_epoch().epoch > p1.producer_id_and_epoch().epoch
            || p2.producer_id_and_epoch().producer_id != p1.producer_id_and_epoch().producer_id
    );
    let e = p1.commit_transaction().await.unwrap_err();
    assert!(
        matches!(e, TransactionError::Fenced { .. }),
        "commit of the fenced producer: {e:?}"
    );
    assert!(e.is_fatal());
    assert_eq!(p1.state(), State::FatalError);
    let e = p1.begin_transaction().unwrap_err();
    assert!(matches!(e, TransactionError::Fenced { .. }), "{e:?}");
    let e = p1.abort_transaction().await.unwrap_err();
    assert!(matches!(e, TransactionError::Fenced { .. }), "{e:?}");
    match p1
        .send(ProducerRecord::new(topic.as_str()).value("late"))
        .await
    {
        Err(ProduceError::Transaction(TransactionError::Fenced { .. })) => {}
        other => panic!("send of the fenced producer: {other:?}"),
    }
    p2.begin_transaction().unwrap();
    p2.send(ProducerRecord::new(topic.as_str()).value("successor"))
        .await
        .unwrap();
    p2.commit_transaction().await.unwrap();
    let expected = vec!["successor".to_string()];
    let v = values_eventually(
        &cluster,
        &topic,
        &[0],
        IsolationLevel::ReadCommitted,
        &expected,
    )
    .await;
    assert_eq!(v, expected);
    let _ = p1.close(Duration::from_secs(5)).await;
    p2.close(Duration::from_secs(10)).await.unwrap();
}

/// Read input, write transformed output + offsets, commit/abort.
async fn consume_transform_produce(variant: SharedKafka) {
    let (kafka, cluster, _) = setup(variant).await;
    let input_topic = new_topic(kafka, "ctp-in", 2).await;
    let output_topic = new_topic(kafka, "ctp-out", 2).await;
    let group_id = unique_name("ctp-group");
    let plain = Producer::connect(
        ProducerConfig::from_properties([("bootstrap.servers", kafka.bootstrap().as_str())])
            .unwrap(),
    )
    .await
    .unwrap();
    let sends: Vec<_> = (0..30)
        .map(|i| {
            plain.send(
                ProducerRecord::new(input_topic.as_str())
                    .partition(i % 2)
                    .value(format!("in-{i}")),
            )
        })
        .collect();
    for s in sends {
        s.await.unwrap();
    }
    plain.close(Duration::from_secs(10)).await.unwrap();
    let mut reader = Reader::new(cluster.clone(), ReaderConfig::default());
    let input = reader.read_to_end(&input_topic, &[0, 1]).await.unwrap();
    assert_eq!(input.len(), 30);
    let p = producer(kafka, &unique_name("ctp-tx")).await;
    let group = GroupMetadata::new(&group_id);
    // Three rounds of 5 records per partition: commit, abort, commit.
    let mut expected_out: Vec<String> = Vec::new();
    let mut expected_offsets: BTreeMap<i32, Option<i64>> = [(0, None), (1, None)].into();
    for (round, commit) in [(0usize, true), (1, false), (2, true)] {
        // An aborted round is redone by the next one (from the last commit).
        let start = if round == 2 { 1 } else { round };
        p.begin_transaction().unwrap();
        let mut offsets = Vec::new();
        let mut out = Vec::new();
        let mut pending = Vec::new();
        for part in 0..2 {
            let recs: Vec<_> = input
                .iter()
                .filter(|r| r.partition == part)
                .skip(start * 5)
                .take(5)
                .collect();
            for r in &recs {
                let v = format!(
                    "out-{}",
                    String::from_utf8_lossy(r.value.as_deref().unwrap_or_default())
                );
                out.push(v.clone());
                pending.push(
                    p.send(
                        ProducerRecord::new(output_topic.as_str())
                            .partition(part)
                            .value(v),
                    ),
                );
            }
            let next = recs.last().unwrap().offset + 1;
            offsets.push((
                TopicPartition::new(input_topic.as_str(), part),
                next,
                Some(format!("round-{round}")),
            ));
        }
        p.send_offsets_to_transaction(&offsets, &group)
            .await
            .unwrap();
        if commit {
            p.commit_transaction().await.unwrap();
            expected_out.extend(out);
            for (tp, o, _) in &offsets {
                expected_offsets.insert(tp.partition, Some(*o));
            }
        } else {
            p.flush().await;
            p.abort_transaction().await.unwrap();
        }
        for s in pending {
            assert!(s.await.unwrap().offset.is_some(), "round {round}");
        }
        expected_out.sort();
        let committed = reader
            .committed_offsets(&group_id, &input_topic, &[0, 1])
            .await
            .unwrap();
        assert_eq!(committed, expected_offsets, "round {round} offsets");
        let got = values_eventually(
            &cluster,
            &output_topic,
            &[0, 1],
            IsolationLevel::ReadCommitted,
            &expected_out,
        )
        .await;
        assert_eq!(got, expected_out, "round {round} output");
    }
    p.close(Duration::from_secs(10)).await.unwrap();
}

/// Prepare, then finish the transaction without the producer.
async fn prepared(variant: SharedKafka) {
    let (kafka, cluster, tv) = setup(variant).await;
    let prep_topic = new_topic(kafka, "prep", 2).await;
    let p = producer(kafka, &unique_name("prep-tx")).await;
    // An empty transaction cannot be prepared.
    p.begin_transaction().unwrap();
    let e = p.prepare_transaction().await.unwrap_err();
    assert!(matches!(e, TransactionError::NotPreparable { .. }), "{e:?}");
    p.abort_transaction().await.unwrap();
    p.begin_transaction().unwrap();
    let pending: Vec<_> = (0..4)
        .map(|i| {
            p.send(
                ProducerRecord::new(prep_topic.as_str())
                    .partition(i % 2)
                    .value(format!("prep-{i}")),
            )
        })
        .collect();
    let prepared = p.prepare_transaction().await.unwrap();
    for s in pending {
        assert!(s.await.unwrap().offset.is_some(), "prepare flushed");
    }
    assert_eq!(p.state(), State::PreparedTransaction);
    assert_eq!(prepared.transaction_version, tv);
    assert_eq!(prepared.producer(), p.producer_id_and_epoch());
    // The application persists it; the producer goes away without aborting.
    let bytes = prepared.encode();
    p.close(Duration::from_secs(10)).await.unwrap();
    drop(p);
    assert!(
        values(
            &cluster,
            &prep_topic,
            &[0, 1],
            IsolationLevel::ReadCommitted
        )
        .await
        .is_empty()
    );
    let restored = PreparedTransaction::decode(&bytes).unwrap();
    let fresh = Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
        .await
        .unwrap();
    assert_eq!(
        commit_prepared(&fresh, &restored, &ResumeOptions::default())
            .await
            .unwrap(),
        ResumeOutcome::Committed
    );
    let expected: Vec<String> = (0..4).map(|i| format!("prep-{i}")).collect();
    let v = values_eventually(
        &cluster,
        &prep_topic,
        &[0, 1],
        IsolationLevel::ReadCommitted,
        &expected,
    )
    .await;
    assert_eq!(v, expected);

    // A real child process, SIGKILLed after pre-commit.
    let child_topic = new_topic(kafka, "child", 2).await;
    let child_txn_id = unique_name("child-tx");
    let out = kafka
        .data_dir()
        .join(format!("{}.bin", unique_name("child-prepared")));
    let mut child = tokio::process::Command::new(child_binary())
        .arg(kafka.bootstrap())
        .arg(&child_topic)
        .arg(&child_txn_id)
        .arg(&out)
        .arg("6")
        .arg("child")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn txn_prepare_child");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let ready = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.trim() == "READY" {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(ready, Ok(true), "txn_prepare_child never got READY");
    child.start_kill().expect("SIGKILL");
    child.wait().await.expect("reap");
    let prepared = PreparedTransaction::decode(&std::fs::read(&out).unwrap()).unwrap();
    let _ = std::fs::remove_file(&out);
    assert_eq!(prepared.transactional_id, child_txn_id);
    assert_eq!(prepared.transaction_version, tv);
    assert!(
        values(
            &cluster,
            &child_topic,
            &[0, 1],
            IsolationLevel::ReadCommitted
        )
        .await
        .is_empty()
    );
    assert_eq!(
        commit_prepared(&fresh, &prepared, &ResumeOptions::default())
            .await
            .unwrap(),
        ResumeOutcome::Committed
    );
    assert_eq!(
        commit_prepared(&fresh, &prepared, &ResumeOptions::default())
            .await
            .unwrap(),
        ResumeOutcome::AlreadyCommitted
    );
    let mut expected: Vec<String> = (0..6).map(|i| format!("child-{i}")).collect();
    expected.sort();
    let v = values_eventually(
        &cluster,
        &child_topic,
        &[0, 1],
        IsolationLevel::ReadCommitted,
        &expected,
    )
    .await;
    assert_eq!(v, expected, "exactly once");
}

/// The `txn_prepare_child` program of this package (cargo builds a
/// package's binaries before its integration tests).
fn child_binary() -> &'static str {
    env!("CARGO_BIN_EXE_txn_prepare_child")
}

/// 3 nodes (a cluster of its own: a shared one is single-node and refuses
/// kill): kill -9 the transaction coordinator in the middle of a
/// transaction; the commit completes on the new coordinator, or fails with a
/// typed error after which abort + a new transaction work.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn txn_producer_coordinator_kill_9_kafka_4_4_tv2() {
    let started = Instant::now();
    let kafka = KafkaCluster::builder()
        .version(KafkaVersion::V4_4)
        .transaction_version(2)
        .nodes(3)
        .start()
        .await
        .expect("start cluster");
    kafka
        .create_topic("kill", 3, 3)
        .await
        .expect("create topic");
    let cluster = Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
        .await
        .unwrap();
    eprintln!("3 nodes up in {:?}", started.elapsed());
    let p = producer(&kafka, "kill-tx").await;
    let mut expected: Vec<String> = Vec::new();
    // A committed transaction first.
    p.begin_transaction().unwrap();
    for i in 0..6 {
        let v = format!("before-{i}");
        expected.push(v.clone());
        p.send(ProducerRecord::new("kill").partition(i % 3).value(v))
            .await
            .unwrap();
    }
    p.commit_transaction().await.unwrap();
    // The transaction in flight when the coordinator dies.
    p.begin_transaction().unwrap();
    let sends: Vec<_> = (0..6)
        .map(|i| {
            p.send(
                ProducerRecord::new("kill")
                    .partition(i % 3)
                    .value(format!("during-{i}")),
            )
        })
        .collect();
    p.flush().await;
    let mut during = Vec::new();
    for (i, s) in sends.into_iter().enumerate() {
        s.await.expect("acknowledged before the kill");
        during.push(format!("during-{i}"));
    }
    let coord = kafka_client::find_coordinator(
        &cluster,
        kafka_client::CoordinatorType::Transaction,
        "kill-tx",
    )
    .await
    .unwrap()
    .node_id;
    let index = (0..3).find(|i| kafka.node_id(*i) == coord).unwrap();
    kafka.kill(index).unwrap();
    eprintln!("killed coordinator node {coord} (index {index})");
    let t = Instant::now();
    let outcome = p.commit_transaction().await;
    eprintln!("commit after kill -9: {outcome:?} in {:?}", t.elapsed());
    match outcome {
        Ok(()) => expected.extend(during.iter().cloned()),
        Err(TransactionError::Timeout { .. }) => {
            // Outcome unknown: the same operation must be repeated.
            p.commit_transaction().await.unwrap();
            expected.extend(during.iter().cloned());
        }
        Err(e) if e.is_abortable() => p.abort_transaction().await.unwrap(),
        Err(e) => panic!("commit after coordinator kill: {e:?}"),
    }
    assert_eq!(p.state(), State::Ready);
    // And the producer goes on.
    p.begin_transaction().unwrap();
    for i in 0..6 {
        let v = format!("after-{i}");
        expected.push(v.clone());
        p.send(ProducerRecord::new("kill").partition(i % 3).value(v))
            .await
            .unwrap();
    }
    p.commit_transaction().await.unwrap();
    expected.sort();
    let v = values_eventually(
        &cluster,
        "kill",
        &[0, 1, 2],
        IsolationLevel::ReadCommitted,
        &expected,
    )
    .await;
    assert_eq!(v, expected);
    p.close(Duration::from_secs(10)).await.unwrap();
    eprintln!("coordinator kill -9 case passed in {:?}", started.elapsed());
}

/// Invariant: a transactional producer started while no bootstrap address
/// answers (the harness's proxy in front of the broker, black-holed: it
/// accepts connections and never answers) keeps trying, up to
/// `max.block.ms`, instead of failing; once the broker answers, it
/// initializes and commits, and a read_committed reader sees each of its
/// records once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_producer_started_before_its_broker_answers_waits_for_it_kafka_4_4_tv2() {
    let (kafka, cluster, _) = setup(SharedKafka::Kafka44Tv2).await;
    let topic = new_topic(kafka, "late-broker", 2).await;
    let proxy = Proxy::start(kafka.broker_addrs()[0]).expect("start the proxy");
    proxy.set_black_hole(true);
    let bootstrap = proxy.listen_addr().to_string();
    let txn_id = unique_name("late-broker-tx");
    let config = ProducerConfig::from_properties([
        ("bootstrap.servers", bootstrap.as_str()),
        ("transactional.id", txn_id.as_str()),
        ("max.block.ms", "60000"),
        ("socket.connection.setup.timeout.ms", "300"),
        ("socket.connection.setup.timeout.max.ms", "300"),
    ])
    .unwrap();
    let connecting = tokio::spawn(TransactionalProducer::connect(config));
    // Three unanswered bootstrap attempts: still waiting, not failed.
    while proxy.accepted_connections() < 3 {
        assert!(
            !connecting.is_finished(),
            "connect returned while no broker answered: {:?}",
            connecting.await.unwrap().err()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    proxy.set_black_hole(false);
    let p = connecting
        .await
        .unwrap()
        .expect("connects once the broker answers");
    p.init_transactions().await.unwrap();
    p.begin_transaction().unwrap();
    let expected: Vec<String> = (0..10).map(|i| format!("late-{i}")).collect();
    let sends: Vec<_> = expected
        .iter()
        .enumerate()
        .map(|(i, v)| {
            p.send(
                ProducerRecord::new(topic.as_str())
                    .partition(i as i32 % 2)
                    .value(v.clone().into_bytes()),
            )
        })
        .collect();
    for s in sends {
        s.await.expect("acknowledged");
    }
    p.commit_transaction().await.unwrap();
    let seen = values_eventually(
        &cluster,
        &topic,
        &[0, 1],
        IsolationLevel::ReadCommitted,
        &expected,
    )
    .await;
    assert_eq!(seen, expected);
    p.close(Duration::from_secs(10)).await.unwrap();
}
