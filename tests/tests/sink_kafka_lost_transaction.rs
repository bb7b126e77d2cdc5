//! The EXACTLY_ONCE Kafka sink restoring a pre-committed transaction that
//! the broker has meanwhile aborted (its transaction timeout passed while
//! the process was down), against a real broker (the harness's shared
//! Kafka 4.4 cluster, whose coordinator aborts a timed-out transaction
//! within half a second of its timeout; every test uses a topic and a
//! transactional id prefix of its own).
//!
//! Invariant: the records of such a transaction are lost, and that is never
//! only a log line. By default the restore fails with
//! `TwoPhaseCommitError::TransactionsLost` naming the checkpoint, as Flink
//! fails the job; with `ignore_failures_after_transaction_timeout` (and a
//! transaction older than the timeout) the restore goes on, the loss is
//! logged and counted in the sink's metrics. Nothing of the transaction is
//! ever visible to read_committed.

use std::sync::Arc;
use std::time::{Duration, Instant};

use kafka_admin::{self as admin, TransactionFilters};
use kafka_client::{Cluster, ClusterConfig};
use kafka_consumer::{Reader, ReaderConfig};
use kafka_producer::ProducerConfig;
use kafka_sink::kafka::{
    KafkaSink, KafkaSinkConfig, KafkaSinkError, Semantic, SimpleStringSchema, ValueOnly,
};
use kafka_sink::{CheckpointedOperator, RecordContext, RestoredState, TwoPhaseCommitError};
use kafka_testcontainers::KafkaCluster;
use kafka_testcontainers::{SharedKafka, unique_name};

const TIMEOUT: Duration = Duration::from_secs(3);

/// The shared Kafka 4.4 cluster (its
/// `transaction.abort.timed.out.transaction.cleanup.interval.ms` is 500).
async fn start() -> &'static KafkaCluster {
    SharedKafka::Kafka44Tv2
        .cluster()
        .await
        .expect("shared Kafka 4.4")
}

async fn connect(kafka: &KafkaCluster, topic: &str, prefix: &str) -> KafkaSink<String> {
    let props =
        ProducerConfig::from_properties([("bootstrap.servers", kafka.bootstrap().as_str())])
            .unwrap();
    let mut c = KafkaSinkConfig::new(props, topic);
    c.semantic = Semantic::ExactlyOnce;
    c.transactional_id_prefix = Some(prefix.into());
    c.transaction_timeout = TIMEOUT;
    KafkaSink::connect(c, ValueOnly(SimpleStringSchema))
        .await
        .expect("connect sink")
}

/// Writes "a" in checkpoint 1's transaction, takes the checkpoint, and
/// "crashes" (drops the sink); then waits until the broker has aborted the
/// transaction after its timeout. Returns checkpoint 1's state.
async fn checkpoint_then_broker_abort(
    kafka: &KafkaCluster,
    cluster: &Arc<Cluster>,
    topic: &str,
    prefix: &str,
) -> Vec<u8> {
    let mut s = connect(kafka, topic, prefix).await;
    s.initialize_state(None).await.unwrap();
    s.invoke("a".to_string(), &RecordContext::default())
        .await
        .unwrap();
    let state = s.snapshot_state(1).await.unwrap();
    drop(s);
    // The listing holds every test's transactions: only this prefix's count.
    let open = TransactionFilters::states(&["Ongoing", "PrepareCommit", "PrepareAbort"]);
    let own = format!("{prefix}-");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let still_open = admin::list_transactions(cluster, &open)
            .await
            .unwrap()
            .iter()
            .any(|t| t.transactional_id.starts_with(&own));
        if !still_open {
            break state;
        }
        assert!(
            Instant::now() < deadline,
            "the broker never aborted the timed-out transaction"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn restored(state: Vec<u8>) -> Option<RestoredState> {
    Some(RestoredState {
        checkpoint_id: 1,
        own: vec![state.clone()],
        union: vec![state],
        previous_parallelism: Some(1),
    })
}

async fn committed(cluster: &Arc<Cluster>, topic: &str) -> usize {
    let mut r = Reader::new(cluster.clone(), ReaderConfig::default());
    r.read_to_end(topic, &[0]).await.unwrap().len()
}

/// Invariant: by default, restoring a checkpoint whose transaction the
/// broker aborted fails with `TransactionsLost` naming checkpoint 1, counts
/// the loss, and nothing of the transaction is visible.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broker_aborted_transaction_fails_the_restore() {
    let kafka = start().await;
    let topic = &unique_name("lost-default");
    let prefix = &unique_name("lost-default");
    kafka.create_topic(topic, 1, 1).await.unwrap();
    let cluster = Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
        .await
        .unwrap();
    let state = checkpoint_then_broker_abort(kafka, &cluster, topic, prefix).await;

    let mut r = connect(kafka, topic, prefix).await;
    let err = r.initialize_state(restored(state)).await.unwrap_err();
    let typed = err
        .downcast_ref::<TwoPhaseCommitError<KafkaSinkError>>()
        .unwrap_or_else(|| panic!("expected the sink's typed error, got {err}"));
    let TwoPhaseCommitError::TransactionsLost { lost } = typed else {
        panic!("expected TransactionsLost, got {typed}")
    };
    eprintln!("restore failed as expected: {typed}");
    assert_eq!((lost.len(), lost[0].checkpoint_id), (1, 1));
    assert_eq!(r.sink().metrics().lost, 1);
    assert_eq!(committed(&cluster, topic).await, 0);
}

/// Invariant: with `ignore_failures_after_transaction_timeout`, the
/// restore goes on, counts the loss, and the sink writes on: read_committed
/// holds only the new checkpoint's record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broker_aborted_transaction_is_only_logged_when_ignoring_after_the_timeout() {
    let kafka = start().await;
    let topic = &unique_name("lost-ignored");
    let prefix = &unique_name("lost-ignored");
    kafka.create_topic(topic, 1, 1).await.unwrap();
    let cluster = Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
        .await
        .unwrap();
    let state = checkpoint_then_broker_abort(kafka, &cluster, topic, prefix).await;

    let mut r = connect(kafka, topic, prefix).await;
    r.sink_mut().ignore_failures_after_transaction_timeout();
    r.initialize_state(restored(state)).await.unwrap();
    assert_eq!(r.sink().metrics().lost, 1);
    // The sink writes on.
    r.invoke("b".to_string(), &RecordContext::default())
        .await
        .unwrap();
    r.snapshot_state(2).await.unwrap();
    r.notify_checkpoint_complete(2).await.unwrap();
    r.close().await.unwrap();
    Reader::new(cluster.clone(), ReaderConfig::default())
        .wait_until_stable(topic, &[0], Duration::from_secs(60))
        .await
        .expect("the closed sink's transactions end");
    let mut reader = Reader::new(cluster.clone(), ReaderConfig::default());
    let values: Vec<Vec<u8>> = reader
        .read_to_end(topic, &[0])
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.value.map(|v| v.to_vec()).unwrap_or_default())
        .collect();
    assert_eq!(values, [b"b".to_vec()], "only the new checkpoint's record");
}
