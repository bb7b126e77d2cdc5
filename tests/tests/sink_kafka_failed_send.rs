//! The EXACTLY_ONCE Kafka sink when a record of a transaction fails (a
//! record larger than `max.request.size` in the middle of a transaction),
//! against a real broker (the harness's shared Kafka 4.4 cluster; every
//! test uses a topic and a transactional id prefix of its own).
//!
//! Invariant: a checkpoint never prepares a transaction whose sends have not
//! all succeeded. The failing checkpoint fails with a typed error, its
//! transaction is aborted at once (nothing stays open or prepared, so the
//! last stable offset reaches the high watermark), the sink refuses records
//! until the pipeline restores, the completed checkpoint before it is still
//! committed, and a restore from that checkpoint — by a new instance or
//! in-process by the same one — writes on: each committed value exactly
//! once.

use std::sync::Arc;
use std::time::{Duration, Instant};

use kafka_admin::{self as admin, TransactionFilters};
use kafka_client::{Cluster, ClusterConfig};
use kafka_consumer::{IsolationLevel, Offset, Reader, ReaderConfig};
use kafka_producer::ProducerConfig;
use kafka_sink::kafka::{KafkaSink, KafkaSinkConfig, Semantic, SimpleStringSchema, ValueOnly};
use kafka_sink::{CheckpointedOperator, RecordContext, RestoredState};
use kafka_testcontainers::KafkaCluster;
use kafka_testcontainers::{SharedKafka, unique_name};

/// The shared Kafka 4.4 cluster, a topic of one partition and a
/// transactional id prefix of this test's own (both named after `name`),
/// and a client of the cluster.
async fn start(name: &str) -> (&'static KafkaCluster, Arc<Cluster>, String, String) {
    let kafka = SharedKafka::Kafka44Tv2
        .cluster()
        .await
        .expect("shared Kafka 4.4");
    let topic = unique_name(name);
    kafka.create_topic(&topic, 1, 1).await.unwrap();
    let cluster = Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
        .await
        .unwrap();
    (kafka, cluster, topic, unique_name(name))
}

async fn connect_with_prefix(kafka: &KafkaCluster, topic: &str, prefix: &str) -> KafkaSink<String> {
    let props = ProducerConfig::from_properties([
        ("bootstrap.servers", kafka.bootstrap().as_str()),
        ("max.block.ms", "30000"),
        ("max.request.size", "100000"),
    ])
    .unwrap();
    let mut c = KafkaSinkConfig::new(props, topic);
    c.semantic = Semantic::ExactlyOnce;
    c.transactional_id_prefix = Some(prefix.into());
    c.transaction_timeout = Duration::from_secs(120);
    KafkaSink::connect(c, ValueOnly(SimpleStringSchema))
        .await
        .expect("connect sink")
}

async fn committed_values(cluster: &Arc<Cluster>, topic: &str, expected: &[String]) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mut r = Reader::new(cluster.clone(), ReaderConfig::default());
        let v: Vec<String> = r
            .read_to_end(topic, &[0])
            .await
            .unwrap()
            .iter()
            .map(|r| String::from_utf8_lossy(r.value.as_deref().unwrap_or_default()).into_owned())
            .collect();
        if v == expected || Instant::now() >= deadline {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn lso_reaches_hw(cluster: &Arc<Cluster>, topic: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let rc = Reader::new(cluster.clone(), ReaderConfig::default());
        let ru = Reader::new(
            cluster.clone(),
            ReaderConfig {
                isolation: IsolationLevel::ReadUncommitted,
                ..Default::default()
            },
        );
        let lso = rc.list_offsets(topic, &[0], Offset::Latest).await.unwrap()[&0].offset;
        let hw = ru.list_offsets(topic, &[0], Offset::Latest).await.unwrap()[&0].offset;
        if lso == hw {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "LSO {lso:?} stuck below HW {hw:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Invariant (module documentation), recovered by a new instance: the
/// failing checkpoint fails, its transaction is aborted at once (nothing of
/// the prefix stays open), the sink refuses records until restored,
/// checkpoint 1 still commits, and the restored instance writes on: each
/// value once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_send_fails_the_checkpoint_and_never_prepares() {
    let (kafka, cluster, topic, prefix) = start("failed-send").await;
    let topic = topic.as_str();
    let ctx = RecordContext::default();

    let mut s = connect_with_prefix(kafka, topic, &prefix).await;
    s.initialize_state(None).await.unwrap();
    s.invoke("a".to_string(), &ctx).await.unwrap();
    let cp1 = s.snapshot_state(1).await.unwrap();
    s.invoke("b".to_string(), &ctx).await.unwrap();
    // Larger than max.request.size: this send fails.
    s.invoke("x".repeat(200_000), &ctx).await.unwrap();
    s.invoke("c".to_string(), &ctx).await.unwrap();
    let failed = s.snapshot_state(2).await;
    assert!(failed.is_err(), "checkpoint 2 must fail");
    // No more records until a restore.
    assert!(s.invoke("d".to_string(), &ctx).await.is_err());
    // Checkpoint 1 completed: its transaction commits.
    s.notify_checkpoint_complete(1).await.unwrap();
    assert_eq!(
        committed_values(&cluster, topic, &["a".into()]).await,
        ["a"]
    );
    // The failed transaction (holding "b") was aborted at once, not left
    // open or prepared: nothing blocks read_committed. The listing holds
    // every test's transactions: only this prefix's count.
    lso_reaches_hw(&cluster, topic).await;
    let own = format!("{prefix}-");
    let filters = TransactionFilters::states(&["Ongoing", "PrepareCommit", "PrepareAbort"]);
    let open: Vec<String> = admin::list_transactions(&cluster, &filters)
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.transactional_id)
        .filter(|id| id.starts_with(&own))
        .collect();
    assert!(
        open.is_empty(),
        "open transactions after the failed checkpoint: {open:?}"
    );
    drop(s);

    // The pipeline restores checkpoint 1 (its source replays b and c) and
    // writes on.
    let mut r = connect_with_prefix(kafka, topic, &prefix).await;
    r.initialize_state(Some(RestoredState {
        checkpoint_id: 1,
        own: vec![cp1.clone()],
        union: vec![cp1],
        previous_parallelism: Some(1),
    }))
    .await
    .unwrap();
    r.invoke("b".to_string(), &ctx).await.unwrap();
    r.invoke("c".to_string(), &ctx).await.unwrap();
    r.snapshot_state(2).await.unwrap();
    r.notify_checkpoint_complete(2).await.unwrap();
    r.close().await.unwrap();
    let expected: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
    assert_eq!(committed_values(&cluster, topic, &expected).await, expected);
    lso_reaches_hw(&cluster, topic).await;
}

/// The same scenario, recovered in-process: the failed sink instance itself
/// restores checkpoint 1 (not yet notified, so the failover commits its
/// transaction with the live producer), the replayed records are committed
/// by the next checkpoint, and nothing stays open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_send_then_an_in_process_failover_writes_each_value_once() {
    let (kafka, cluster, topic, prefix) = start("failed-send-failover").await;
    let topic = topic.as_str();
    let ctx = RecordContext::default();

    let mut s = connect_with_prefix(kafka, topic, &prefix).await;
    s.initialize_state(None).await.unwrap();
    s.invoke("a".to_string(), &ctx).await.unwrap();
    let cp1 = s.snapshot_state(1).await.unwrap();
    s.invoke("b".to_string(), &ctx).await.unwrap();
    s.invoke("x".repeat(200_000), &ctx).await.unwrap();
    assert!(s.snapshot_state(2).await.is_err(), "checkpoint 2 must fail");

    s.initialize_state(Some(RestoredState {
        checkpoint_id: 1,
        own: vec![cp1.clone()],
        union: vec![cp1],
        previous_parallelism: Some(1),
    }))
    .await
    .unwrap();
    assert_eq!(
        committed_values(&cluster, topic, &["a".into()]).await,
        ["a"]
    );
    s.invoke("b".to_string(), &ctx).await.unwrap();
    s.invoke("c".to_string(), &ctx).await.unwrap();
    s.snapshot_state(3).await.unwrap();
    s.notify_checkpoint_complete(3).await.unwrap();
    s.close().await.unwrap();
    let expected: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
    assert_eq!(committed_values(&cluster, topic, &expected).await, expected);
    lso_reaches_hw(&cluster, topic).await;
}
