//! The `metrics` cargo feature against a real broker (Kafka 4.4, one node):
//! a transactional producer (`client.id=metrics-facade`) sends 40 records
//! and commits, then sends 10 more, waits for their acknowledgement and
//! aborts. The values an installed recorder (metrics-util's
//! `DebuggingRecorder`) received under the documented names, labelled with
//! the client id, are exactly the producer's: 50 records, their bytes and
//! batches as the in-process snapshot counts them, one commit with one
//! commit-latency sample, one abort, and retries and errors equal to the
//! snapshot's.

#![cfg(feature = "metrics")]

use kafka_producer::metrics::{MetricsSnapshot, names};
use kafka_producer::{ProducerConfig, ProducerRecord, TransactionalProducer};
use kafka_testcontainers::{SharedKafka, unique_name};
use metrics_util::MetricKind;
use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};

const CLIENT_ID: &str = "metrics-facade";

/// One emitted value: kind, name, labels, value.
type Value = (MetricKind, String, Vec<(String, String)>, DebugValue);

/// Counter `name` of our client (0 when never emitted), summed over its
/// other labels.
fn counter(values: &[Value], name: &str) -> u64 {
    values
        .iter()
        .filter(|(kind, n, _, _)| *kind == MetricKind::Counter && n == name)
        .map(|(_, _, _, v)| match v {
            DebugValue::Counter(c) => *c,
            other => panic!("{name}: not a counter: {other:?}"),
        })
        .sum()
}

/// Every value of `snapshotter` labelled with our client id.
fn ours(snapshotter: &Snapshotter) -> Vec<Value> {
    snapshotter
        .snapshot()
        .into_vec()
        .into_iter()
        .filter_map(|(key, _, _, value)| {
            let (kind, key) = key.into_parts();
            let labels: Vec<(String, String)> = key
                .labels()
                .map(|l| (l.key().to_string(), l.value().to_string()))
                .collect();
            labels
                .iter()
                .any(|(k, v)| k == names::CLIENT_ID_LABEL && v == CLIENT_ID)
                .then(|| (kind, key.name().to_string(), labels, value))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn facade_counters_match_a_committed_and_an_aborted_transaction() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    recorder
        .install()
        .expect("the only recorder of this test binary");

    let kafka = SharedKafka::Kafka44Tv2
        .cluster()
        .await
        .expect("shared Kafka 4.4");
    let topic = unique_name("metrics-facade");
    let txn_id = unique_name("metrics-facade-txn");
    kafka.create_topic(&topic, 2, 1).await.unwrap();
    let config = ProducerConfig::from_properties([
        ("bootstrap.servers", kafka.bootstrap().as_str()),
        ("transactional.id", txn_id.as_str()),
        ("client.id", CLIENT_ID),
        ("max.block.ms", "30000"),
    ])
    .unwrap();
    let producer = TransactionalProducer::connect(config).await.unwrap();
    producer.init_transactions().await.unwrap();

    producer.begin_transaction().unwrap();
    let sends: Vec<_> = (0..40)
        .map(|i| {
            producer.send(
                ProducerRecord::new(topic.as_str())
                    .key(format!("k{i}"))
                    .value(format!("committed {i}")),
            )
        })
        .collect();
    producer.commit_transaction().await.unwrap();
    for s in sends {
        s.await.unwrap();
    }

    producer.begin_transaction().unwrap();
    let sends: Vec<_> = (0..10)
        .map(|i| producer.send(ProducerRecord::new(topic.as_str()).value(format!("aborted {i}"))))
        .collect();
    for s in sends {
        s.await.unwrap(); // acknowledged, so counted as sent
    }
    producer.abort_transaction().await.unwrap();

    let snapshot: MetricsSnapshot = producer.metrics();
    let values = ours(&snapshotter);
    assert_eq!(snapshot.records_sent, 50, "{snapshot:?}");
    assert_eq!(counter(&values, names::RECORDS_SENT), 50, "{values:?}");
    assert!(snapshot.bytes_sent > 0 && snapshot.batches_sent >= 2);
    assert_eq!(counter(&values, names::BYTES_SENT), snapshot.bytes_sent);
    assert_eq!(counter(&values, names::BATCHES_SENT), snapshot.batches_sent);
    assert_eq!(counter(&values, names::REQUESTS), snapshot.requests);
    assert_eq!(counter(&values, names::RETRIES), snapshot.retries);
    assert_eq!(
        counter(&values, names::ERRORS),
        snapshot.errors_by_code.values().sum::<u64>()
    );
    assert_eq!(counter(&values, names::TRANSACTIONS_COMMITTED), 1);
    assert_eq!(counter(&values, names::TRANSACTIONS_ABORTED), 1);
    assert_eq!(
        (
            snapshot.transactions_committed,
            snapshot.transactions_aborted
        ),
        (1, 1)
    );
    let commit_latency: Vec<f64> = values
        .iter()
        .filter(|(kind, n, _, _)| {
            *kind == MetricKind::Histogram && n == names::TRANSACTION_COMMIT_LATENCY
        })
        .flat_map(|(_, _, _, v)| match v {
            DebugValue::Histogram(h) => h.iter().map(|x| x.into_inner()).collect::<Vec<_>>(),
            other => panic!("not a histogram: {other:?}"),
        })
        .collect();
    assert_eq!(commit_latency.len(), 1, "{values:?}");
    assert!(commit_latency[0] > 0.0);
    assert!(
        commit_latency[0] * 1e6 >= snapshot.commit_latency_max_us as f64 - 1.0,
        "the facade sample is the snapshot's commit: {commit_latency:?} vs {snapshot:?}"
    );
    producer
        .close(std::time::Duration::from_secs(30))
        .await
        .unwrap();
}
