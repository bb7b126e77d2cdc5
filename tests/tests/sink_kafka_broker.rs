//! The Kafka sink against a real broker (the harness's shared Kafka 4.4
//! cluster; every test uses topics and transactional ids of its own),
//! Flink's `FlinkKafkaProducerITCase` scenarios that the first version
//! covers, one test each (one failure hides no other scenario):
//!
//! - `notify_commits_partially`: notify of a completed checkpoint commits
//!   partially (EXACTLY_ONCE);
//! - `restore_commits_what_the_dead_process_pre_committed`: fail before
//!   notify, then restore: the restored process commits what the dead one
//!   pre-committed (`commit_prepared`), the open transaction is aborted and
//!   read_committed readers are not blocked;
//! - `recovering_a_committed_transaction_writes_no_duplicate`;
//! - `pool_exhaustion_asks_to_enlarge_the_pool`;
//! - `transaction_timeout_above_the_broker_maximum_fails_at_connect`;
//! - `at_least_once_snapshot_makes_records_visible`;
//! - `empty_transactions_are_never_committed`;
//! - `fresh_start_aborts_lingering_transactions`: fail before the first
//!   checkpoint: a fresh start aborts the lingering transactions of the
//!   prefix, both in the fixed id range and (found with ListTransactions)
//!   beyond it, so read_committed readers are not blocked;
//! - `driver_end_to_end_commits_a_written_checkpoint_once`: the checkpoint
//!   driver with durable files, a crash after a checkpoint was written but
//!   before it was notified, and a new process restoring from the files
//!   commits it exactly once.

use std::sync::Arc;
use std::time::{Duration, Instant};

use kafka_client::Cluster;
use kafka_consumer::{IsolationLevel, Reader, ReaderConfig};
use kafka_producer::ProducerConfig;
use kafka_sink::kafka::{KafkaSink, KafkaSinkConfig, KafkaSinkError, KafkaSinkRecord, Semantic};
use kafka_sink::{Checkpoint, CheckpointCoordinator, CheckpointStorage, OperatorSnapshot};
use kafka_sink::{CheckpointedOperator, OperatorInfo, RecordContext, RestoredState};
use kafka_testcontainers::KafkaCluster;
use kafka_testcontainers::{SharedKafka, unique_name, unique_topic};

use crate::support;
use tokio::sync::Mutex;

/// The shared Kafka 4.4 cluster, a topic of one partition and a
/// transactional id prefix of this test's own (both named after `name`),
/// and a client of the cluster.
async fn start(name: &str) -> (&'static KafkaCluster, Arc<Cluster>, String, String) {
    let (kafka, cluster) = support::shared::client(SharedKafka::Kafka44Tv2).await;
    let topic = unique_topic(kafka, name, 1).await.expect("create topic");
    (kafka, cluster, topic, unique_name(&format!("{name}-sink")))
}
fn config(kafka: &KafkaCluster, topic: &str, prefix: &str, semantic: Semantic) -> KafkaSinkConfig {
    let producer = ProducerConfig::from_properties([
        ("bootstrap.servers", kafka.bootstrap().as_str()),
        ("max.block.ms", "30000"),
        ("linger.ms", "5"),
    ])
    .unwrap();
    let mut c = KafkaSinkConfig::new(producer, topic);
    c.semantic = semantic;
    c.transactional_id_prefix = Some(prefix.into());
    c.transaction_timeout = Duration::from_secs(120);
    c.recovery_timeout = Duration::from_secs(30);
    c
}

async fn connect(c: KafkaSinkConfig) -> KafkaSink<String> {
    KafkaSink::connect(c, |v: &String| KafkaSinkRecord::value(v.clone()))
        .await
        .expect("connect sink")
}

async fn write(s: &mut KafkaSink<String>, v: &str) {
    s.invoke(v.to_string(), &RecordContext::default())
        .await
        .unwrap();
}

fn restored(id: u64, bytes: &[u8]) -> RestoredState {
    RestoredState {
        checkpoint_id: id,
        own: vec![bytes.to_vec()],
        union: vec![bytes.to_vec()],
        previous_parallelism: Some(1),
    }
}

async fn committed(cluster: &Arc<Cluster>, topic: &str) -> Vec<String> {
    let mut r = Reader::new(
        cluster.clone(),
        ReaderConfig {
            isolation: IsolationLevel::ReadCommitted,
            ..Default::default()
        },
    );
    r.read_to_end(topic, &[0])
        .await
        .expect("read")
        .iter()
        .map(|r| String::from_utf8_lossy(r.value.as_deref().unwrap_or_default()).into_owned())
        .collect()
}

/// Commit markers are written asynchronously after EndTxn returns.
async fn committed_eventually(
    cluster: &Arc<Cluster>,
    topic: &str,
    expected: &[&str],
) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let v = committed(cluster, topic).await;
        if v == expected || Instant::now() >= deadline {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Invariant: notifying checkpoint N commits exactly the transactions
/// pre-committed up to N (not the later ones, nor the open one), and
/// `close()` aborts the open transaction.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notify_commits_partially() {
    let (kafka, cluster, topic, prefix) = start("notify").await;
    let mut s = connect(config(kafka, &topic, &prefix, Semantic::ExactlyOnce)).await;
    s.initialize_state(None).await.unwrap();
    for (cp, v) in [(0, "42"), (1, "43"), (2, "44")] {
        write(&mut s, v).await;
        s.snapshot_state(cp).await.unwrap();
    }
    write(&mut s, "45").await;
    s.notify_checkpoint_complete(1).await.unwrap();
    assert_eq!(
        committed_eventually(&cluster, &topic, &["42", "43"]).await,
        ["42", "43"]
    );
    s.notify_checkpoint_complete(2).await.unwrap();
    assert_eq!(
        committed_eventually(&cluster, &topic, &["42", "43", "44"]).await,
        ["42", "43", "44"]
    );
    s.close().await.unwrap();
    // The aborted "45" never becomes visible.
    assert_eq!(committed(&cluster, &topic).await, ["42", "43", "44"]);
}

/// Invariant: a process restored from checkpoint 1 while the process that
/// wrote it is still alive commits what checkpoint 1 pre-committed, aborts
/// the dead process's open transaction (read_committed readers are not
/// blocked) and fences the dead process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restore_commits_what_the_dead_process_pre_committed() {
    let (kafka, cluster, topic, prefix) = start("restore").await;
    let mut dead = connect(config(kafka, &topic, &prefix, Semantic::ExactlyOnce)).await;
    dead.initialize_state(None).await.unwrap();
    write(&mut dead, "a").await;
    let cp1 = dead.snapshot_state(1).await.unwrap();
    write(&mut dead, "b").await;
    // `dead` stays alive: its producers still hold the open transaction.
    let mut alive = connect(config(kafka, &topic, &prefix, Semantic::ExactlyOnce)).await;
    alive
        .initialize_state(Some(restored(1, &cp1)))
        .await
        .unwrap();
    assert_eq!(committed_eventually(&cluster, &topic, &["a"]).await, ["a"]);
    assert_eq!(alive.sink().metrics().recovered_commits, 1);
    write(&mut alive, "c").await;
    alive.snapshot_state(2).await.unwrap();
    alive.notify_checkpoint_complete(2).await.unwrap();
    assert_eq!(
        committed_eventually(&cluster, &topic, &["a", "c"]).await,
        ["a", "c"]
    );
    // The old instance was fenced: it cannot complete another checkpoint.
    // Its pre-commit fails when its record "b" reached the broker after the
    // fence (InvalidProducerEpoch); when "b" was written before the fence
    // the pre-commit is local and succeeds, and the commit is refused.
    let fenced = match dead.snapshot_state(2).await {
        Err(_) => true,
        Ok(_) => dead.notify_checkpoint_complete(2).await.is_err(),
    };
    assert!(fenced, "the fenced process completed checkpoint 2");
    drop(dead);
    alive.close().await.unwrap();
    Reader::new(cluster.clone(), ReaderConfig::default())
        .wait_until_stable(&topic, &[0], Duration::from_secs(60))
        .await
        .expect("the closed sink's transactions end");
    // Nothing of the fenced process became visible.
    assert_eq!(committed(&cluster, &topic).await, ["a", "c"]);
}

/// Invariant: restoring a checkpoint whose transaction was already
/// committed (notify ran, then the process died) counts it as already
/// committed and writes no duplicate.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recovering_a_committed_transaction_writes_no_duplicate() {
    let (kafka, cluster, topic, prefix) = start("recommit").await;
    let mut s = connect(config(kafka, &topic, &prefix, Semantic::ExactlyOnce)).await;
    s.initialize_state(None).await.unwrap();
    write(&mut s, "42").await;
    let cp = s.snapshot_state(1).await.unwrap();
    s.notify_checkpoint_complete(1).await.unwrap();
    write(&mut s, "43").await;
    drop(s);
    let mut again = connect(config(kafka, &topic, &prefix, Semantic::ExactlyOnce)).await;
    again
        .initialize_state(Some(restored(1, &cp)))
        .await
        .unwrap();
    assert_eq!(again.sink().metrics().already_committed, 1);
    write(&mut again, "44").await;
    again.snapshot_state(2).await.unwrap();
    again.notify_checkpoint_complete(2).await.unwrap();
    assert_eq!(
        committed_eventually(&cluster, &topic, &["42", "44"]).await,
        ["42", "44"]
    );
    again.close().await.unwrap();
}

/// Invariant: with every id of the pool in use (2 ids: 1 pending + 1 open)
/// a checkpoint fails with the "enlarge the pool" error, and notifying
/// frees ids so that the sink carries on, losing no record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pool_exhaustion_asks_to_enlarge_the_pool() {
    let (kafka, cluster, topic, prefix) = start("pool").await;
    let mut c = config(kafka, &topic, &prefix, Semantic::ExactlyOnce);
    c.pool_size = 2;
    let mut s = connect(c).await;
    s.initialize_state(None).await.unwrap();
    write(&mut s, "x").await;
    s.snapshot_state(1).await.unwrap();
    write(&mut s, "y").await;
    let err = s.snapshot_state(2).await.unwrap_err().to_string();
    assert!(
        err.contains("Increase the kafka producers pool size"),
        "{err}"
    );
    // Notifying frees ids; the sink carries on.
    s.notify_checkpoint_complete(2).await.unwrap();
    write(&mut s, "z").await;
    s.snapshot_state(3).await.unwrap();
    s.notify_checkpoint_complete(3).await.unwrap();
    assert_eq!(
        committed_eventually(&cluster, &topic, &["x", "y", "z"]).await,
        ["x", "y", "z"]
    );
    s.close().await.unwrap();
}

/// Invariant: a transaction timeout above the broker's
/// `transaction.max.timeout.ms` (the default 1 h against the broker's
/// 15 min) fails at connect with an error naming that setting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transaction_timeout_above_the_broker_maximum_fails_at_connect() {
    let (kafka, _cluster, topic, prefix) = start("big").await;
    let mut c = config(kafka, &topic, &prefix, Semantic::ExactlyOnce);
    c.transaction_timeout = kafka_sink::kafka::DEFAULT_KAFKA_TRANSACTION_TIMEOUT;
    match KafkaSink::<String>::connect(c, |v: &String| KafkaSinkRecord::value(v.clone())).await {
        Err(e @ KafkaSinkError::TransactionTimeoutTooLarge { .. }) => {
            assert!(e.to_string().contains("transaction.max.timeout.ms"), "{e}");
        }
        other => panic!("expected TransactionTimeoutTooLarge, got {other:?}"),
    }
}

/// Invariant: under AT_LEAST_ONCE the snapshot flushes, so every record
/// written before it is visible when it returns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_least_once_snapshot_makes_records_visible() {
    let (kafka, cluster, topic, prefix) = start("alo").await;
    let mut s = connect(config(kafka, &topic, &prefix, Semantic::AtLeastOnce)).await;
    s.initialize_state(None).await.unwrap();
    write(&mut s, "1").await;
    write(&mut s, "2").await;
    s.snapshot_state(1).await.unwrap();
    assert_eq!(committed(&cluster, &topic).await, ["1", "2"]);
    s.notify_checkpoint_complete(1).await.unwrap();
    s.close().await.unwrap();
}

/// Invariant: checkpoints of empty transactions neither fail nor commit
/// anything; the one non-empty transaction among them is committed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_transactions_are_never_committed() {
    let (kafka, cluster, topic, prefix) = start("empty").await;
    let mut s = connect(config(kafka, &topic, &prefix, Semantic::ExactlyOnce)).await;
    s.initialize_state(None).await.unwrap();
    s.snapshot_state(1).await.unwrap();
    s.notify_checkpoint_complete(1).await.unwrap();
    write(&mut s, "only").await;
    s.snapshot_state(2).await.unwrap();
    s.snapshot_state(3).await.unwrap();
    s.notify_checkpoint_complete(3).await.unwrap();
    assert_eq!(
        committed_eventually(&cluster, &topic, &["only"]).await,
        ["only"]
    );
    s.close().await.unwrap();
}

/// Invariant: a fresh start (a failure before the first checkpoint) aborts
/// the lingering transactions of its prefix, both in the fixed id range
/// (the dead sink's own) and beyond it (an id of a 6x larger earlier run,
/// found by ListTransactions), so read_committed readers see the new
/// commit and none of the lost records.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fresh_start_aborts_lingering_transactions() {
    let (kafka, cluster, topic, prefix) = start("linger").await;
    let mut dead = connect(config(kafka, &topic, &prefix, Semantic::ExactlyOnce)).await;
    dead.initialize_state(None).await.unwrap();
    write(&mut dead, "lost-1").await;
    let far = kafka_producer::TransactionalProducer::connect(
        ProducerConfig::from_properties([
            ("bootstrap.servers", kafka.bootstrap().as_str()),
            ("transactional.id", format!("{prefix}-100").as_str()),
            ("max.block.ms", "30000"),
        ])
        .unwrap(),
    )
    .await
    .unwrap();
    far.init_transactions().await.unwrap();
    far.begin_transaction().unwrap();
    far.send(kafka_producer::ProducerRecord::new(topic.as_str()).value("lost-2"))
        .await
        .unwrap();
    let mut fresh = connect(config(kafka, &topic, &prefix, Semantic::ExactlyOnce)).await;
    fresh.initialize_state(None).await.unwrap();
    write(&mut fresh, "kept").await;
    fresh.snapshot_state(1).await.unwrap();
    fresh.notify_checkpoint_complete(1).await.unwrap();
    assert_eq!(
        committed_eventually(&cluster, &topic, &["kept"]).await,
        ["kept"]
    );
    drop((dead, far));
    fresh.close().await.unwrap();
}

/// Invariant: with the checkpoint driver and durable files, a crash after
/// checkpoint 2 was written but before it was notified loses nothing and
/// duplicates nothing: a new process restoring from the files commits
/// checkpoint 2 exactly once, and the record written after it is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn driver_end_to_end_commits_a_written_checkpoint_once() {
    let (kafka, cluster, topic, prefix) = start("e2e").await;
    let dir = tempfile::tempdir().unwrap();
    let e2e = || config(kafka, &topic, &prefix, Semantic::ExactlyOnce);
    let sink = Arc::new(Mutex::new(connect(e2e()).await));
    let mut driver = CheckpointCoordinator::new(CheckpointStorage::open(dir.path(), 3).unwrap());
    driver
        .register(OperatorInfo::new("sink", 0, 1), sink.clone())
        .unwrap();
    assert_eq!(driver.restore().await.unwrap(), None);
    write(&mut *sink.lock().await, "e1").await;
    assert_eq!(driver.trigger_checkpoint().await.unwrap(), 1);
    assert_eq!(
        committed_eventually(&cluster, &topic, &["e1"]).await,
        ["e1"]
    );
    write(&mut *sink.lock().await, "e2").await;
    // Checkpoint 2 is written durably, then the process dies.
    let state = sink.lock().await.snapshot_state(2).await.unwrap();
    driver
        .storage()
        .write(&Checkpoint {
            id: 2,
            timestamp_ms: 0,
            operators: vec![OperatorSnapshot {
                uid: "sink".into(),
                subtask_index: 0,
                parallelism: 1,
                state,
            }],
        })
        .unwrap();
    write(&mut *sink.lock().await, "e3-lost").await;
    drop((driver, sink));

    let sink = Arc::new(Mutex::new(connect(e2e()).await));
    let mut driver = CheckpointCoordinator::new(CheckpointStorage::open(dir.path(), 3).unwrap());
    driver
        .register(OperatorInfo::new("sink", 0, 1), sink.clone())
        .unwrap();
    assert_eq!(driver.restore().await.unwrap(), Some(2));
    assert_eq!(
        committed_eventually(&cluster, &topic, &["e1", "e2"]).await,
        ["e1", "e2"]
    );
    write(&mut *sink.lock().await, "e4").await;
    assert_eq!(driver.trigger_checkpoint().await.unwrap(), 3);
    assert_eq!(
        committed_eventually(&cluster, &topic, &["e1", "e2", "e4"]).await,
        ["e1", "e2", "e4"]
    );
    sink.lock().await.close().await.unwrap();
}
