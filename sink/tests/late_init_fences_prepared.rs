//! A prepared transaction that the coordinator aborted because its id was
//! fenced after pre-commit — what a late InitProducerId does (an earlier
//! `init_transactions` attempt for the id, its answer lost and retried by
//! the client, delivered after the transaction began) — must be reported
//! lost, never presumed committed. Found by the exactly-once sink checker
//! on kafka-mock (a delayed InitProducerId, transaction version 1: the
//! sink counted the fenced transaction as committed by an earlier restore
//! and two records were silently missing).
//!
//! Invariant: after the fence, the commit of checkpoint 1 fails, and a
//! restore of checkpoint 1 fails with the transaction lost (its records
//! are not visible read_committed); a transaction that a restore did
//! commit before its id moved on is still settled as committed.

use kafka_admin as admin;
use kafka_client::{Cluster, ClusterConfig};
use kafka_mock::{MockCluster, MockConfig, TransactionVersion};
use kafka_producer::ProducerConfig;
use kafka_sink::kafka::{KafkaSink, KafkaSinkConfig, Semantic, SimpleStringSchema, ValueOnly};
use kafka_sink::{CheckpointedOperator, RecordContext, RestoredState};
use std::time::Duration;

fn config(bootstrap: &str) -> KafkaSinkConfig {
    let props = ProducerConfig::from_properties([("bootstrap.servers", bootstrap)]).unwrap();
    let mut c = KafkaSinkConfig::new(props, "out");
    c.semantic = Semantic::ExactlyOnce;
    c.transactional_id_prefix = Some("fenced".into());
    c.transaction_timeout = Duration::from_secs(60);
    c.recovery_timeout = Duration::from_secs(10);
    c
}

fn restored(id: u64, state: &[u8]) -> Option<RestoredState> {
    Some(RestoredState {
        checkpoint_id: id,
        own: vec![state.to_vec()],
        union: vec![state.to_vec()],
        previous_parallelism: Some(1),
    })
}

async fn sink(bootstrap: &str) -> KafkaSink<String> {
    KafkaSink::connect(config(bootstrap), ValueOnly(SimpleStringSchema))
        .await
        .unwrap()
}

/// Pre-commits a transaction of `values` as checkpoint 1; returns the sink,
/// the checkpoint state and the transaction's id.
async fn prepared(mock: &MockCluster, values: &[&str]) -> (KafkaSink<String>, Vec<u8>, String) {
    let mut s = sink(&mock.bootstrap()).await;
    s.initialize_state(None).await.unwrap();
    for v in values {
        s.invoke(v.to_string(), &RecordContext::default())
            .await
            .unwrap();
    }
    let state = s.snapshot_state(1).await.unwrap();
    let cluster = Cluster::connect(ClusterConfig::new(&mock.bootstrap()))
        .await
        .unwrap();
    let open = admin::list_transactions(&cluster, &admin::TransactionFilters::states(&["Ongoing"]))
        .await
        .unwrap();
    // The pre-committed transaction, and the one begun after it (empty).
    let with_records = admin::describe_transactions(
        &cluster,
        &open
            .iter()
            .map(|t| t.transactional_id.as_str())
            .collect::<Vec<_>>(),
    )
    .await
    .unwrap()
    .into_iter()
    .find(|d| !d.snapshot.partitions.is_empty())
    .expect("the prepared transaction");
    (s, state, with_records.snapshot.transactional_id)
}

async fn visible(mock: &MockCluster) -> usize {
    let cluster = Cluster::connect(ClusterConfig::new(&mock.bootstrap()))
        .await
        .unwrap();
    let mut r = kafka_consumer::Reader::new(cluster, Default::default());
    r.wait_until_stable("out", &[0], Duration::from_secs(10))
        .await
        .unwrap();
    r.read_to_end("out", &[0]).await.unwrap().len()
}

async fn fenced_after_pre_commit_is_lost(tv: TransactionVersion) {
    let mock = MockCluster::start(MockConfig {
        transaction_version: tv,
        ..MockConfig::default()
    })
    .await
    .unwrap();
    mock.create_topic("out", 1).unwrap();
    let (mut s, state, id) = prepared(&mock, &["a", "b"]).await;
    // The late InitProducerId: fences the id and aborts its transaction.
    abort_lingering(&mock, &id).await;
    assert!(
        s.notify_checkpoint_complete(1).await.is_err(),
        "{tv:?}: the commit of the fenced transaction must not succeed"
    );
    drop(s);
    let mut restored_sink = sink(&mock.bootstrap()).await;
    let err = restored_sink
        .initialize_state(restored(1, &state))
        .await
        .expect_err("the restore must report the transaction lost");
    assert!(err.to_string().contains("lost"), "{tv:?}: {err}");
    assert_eq!(visible(&mock).await, 0, "{tv:?}: nothing of it is visible");
}

/// A late InitProducerId for `id`, as `admin::abort_lingering_transaction`
/// does: fences the id and aborts its open transaction.
async fn abort_lingering(mock: &MockCluster, id: &str) {
    let cluster = Cluster::connect(ClusterConfig::new(&mock.bootstrap()))
        .await
        .unwrap();
    admin::abort_lingering_transaction(&cluster, id, Duration::from_secs(10))
        .await
        .unwrap();
}

/// Transaction version 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prepared_transaction_fenced_by_a_late_init_is_reported_lost_tv1() {
    fenced_after_pre_commit_is_lost(TransactionVersion::V1).await;
}

/// Transaction version 2.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prepared_transaction_fenced_by_a_late_init_is_reported_lost_tv2() {
    fenced_after_pre_commit_is_lost(TransactionVersion::V2).await;
}

/// A restore that committed the transaction, then a later use of the id:
/// restoring the same checkpoint again finds the id fenced, and the log
/// shows the transaction committed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transaction_committed_before_its_id_moved_on_is_settled_committed() {
    let mock = MockCluster::start(MockConfig {
        transaction_version: TransactionVersion::V1,
        ..MockConfig::default()
    })
    .await
    .unwrap();
    mock.create_topic("out", 1).unwrap();
    let (s, state, id) = prepared(&mock, &["a", "b"]).await;
    drop(s);
    // The first restore commits it.
    let mut first = sink(&mock.bootstrap()).await;
    first.initialize_state(restored(1, &state)).await.unwrap();
    drop(first);
    // The id moves on (as when a later run reuses it and aborts).
    abort_lingering(&mock, &id).await;
    let mut again = sink(&mock.bootstrap()).await;
    again
        .initialize_state(restored(1, &state))
        .await
        .expect("committed before: restoring it again is harmless");
    assert_eq!(visible(&mock).await, 2);
}
