//! The two ways a test steers one request: an interceptor that reads the
//! decoded request and chooses its fault, and a hold that keeps a request
//! unserved until the test releases it. Each test waits on conditions
//! (a held request, a resolved send), never on time.

use kafka_mock::{FaultAction, HoldHandle, Interceptor, MockCluster, MockConfig};
use kafka_producer::{ProduceError, Producer, ProducerConfig, ProducerRecord, RecordMetadata};
use kafka_proto::messages::ProduceRequest;
use kafka_proto::{ApiKey, ErrorCode};
use std::sync::Arc;
use std::time::Duration;

async fn producer(cluster: &MockCluster, request_timeout: Duration) -> Producer {
    Producer::connect(
        ProducerConfig::builder(&cluster.bootstrap())
            .linger(Duration::ZERO)
            .request_timeout(request_timeout)
            .retry_backoff(Duration::from_millis(10))
            .build()
            .unwrap(),
    )
    .await
    .unwrap()
}

async fn bounded<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
        .expect("the awaited condition within 30 s")
}

/// An interceptor that holds every Produce request on `gate`.
fn hold_produce(gate: &HoldHandle) -> Interceptor {
    let gate = gate.clone();
    Arc::new(move |r| (r.api == ApiKey::Produce).then(|| FaultAction::Hold(gate.clone())))
}

/// A cluster holding every Produce request, and a producer whose one send
/// ("v" to partition 0 of "t") is in flight.
struct Held {
    cluster: MockCluster,
    gate: HoldHandle,
    producer: Producer,
    sent: tokio::task::JoinHandle<Result<RecordMetadata, ProduceError>>,
}

async fn one_send_held(request_timeout: Duration) -> Held {
    let cluster = MockCluster::start(MockConfig::default()).await.unwrap();
    cluster.create_topic("t", 1).unwrap();
    let gate = HoldHandle::new();
    cluster.set_interceptor(hold_produce(&gate));
    let producer = producer(&cluster, request_timeout).await;
    let sent = tokio::spawn(producer.send(ProducerRecord::new("t").value("v")));
    Held {
        cluster,
        gate,
        producer,
        sent,
    }
}

/// Invariant: the interceptor sees the request's body, so it can fault
/// the writes to one partition and let the others through.
#[tokio::test]
async fn interceptor_faults_by_the_decoded_request() {
    let cluster = MockCluster::start(MockConfig::default()).await.unwrap();
    cluster.create_topic("t", 2).unwrap();
    cluster.set_interceptor(Arc::new(|r| {
        let produce = r.decode::<ProduceRequest>()?;
        let to_partition_1 = produce
            .topic_data
            .iter()
            .any(|t| t.partition_data.iter().any(|p| p.index == 1));
        to_partition_1.then_some(FaultAction::Error(ErrorCode::TopicAuthorizationFailed))
    }));
    let producer = producer(&cluster, Duration::from_secs(5)).await;
    let written = producer
        .send(ProducerRecord::new("t").partition(0).value("a"))
        .await
        .expect("partition 0 is not faulted");
    assert_eq!(written.offset, Some(0));
    let refused = producer
        .send(ProducerRecord::new("t").partition(1).value("b"))
        .await
        .expect_err("every write to partition 1 is refused");
    assert_eq!(
        refused.error_code(),
        Some(ErrorCode::TopicAuthorizationFailed),
        "{refused:?}"
    );
    assert_eq!(cluster.offsets("t", 0), Some((1, 1)));
    assert_eq!(cluster.offsets("t", 1), Some((0, 0)), "nothing written");
}

/// Invariant: a held request is not served (nothing written, no answer)
/// until the test releases it; then it is served as usual.
#[tokio::test]
async fn held_request_is_served_only_after_release() {
    let held = one_send_held(Duration::from_secs(30)).await;
    let waiting = bounded(held.gate.wait_held(1)).await;
    assert_eq!((waiting.len(), waiting[0].api), (1, ApiKey::Produce));
    assert_eq!(
        held.cluster.offsets("t", 0),
        Some((0, 0)),
        "not served while held"
    );
    assert!(!held.sent.is_finished(), "not answered while held");
    assert_eq!(held.gate.release_oldest(), Some(waiting[0]));
    let metadata = held.sent.await.unwrap().expect("served once released");
    assert_eq!(metadata.offset, Some(0));
    assert_eq!(held.cluster.offsets("t", 0), Some((1, 1)));
    assert!(held.gate.held().is_empty());
}

/// Invariant: a held request whose connection closes is dropped unserved:
/// after the client's request timeout, only its retry (on a new
/// connection) is held, and releasing it writes the record once.
#[tokio::test]
async fn held_request_of_a_closed_connection_is_dropped_unserved() {
    let held = one_send_held(Duration::from_millis(300)).await;
    let first = bounded(held.gate.wait_held(1)).await[0];
    // The retry arrives once the first attempt timed out and its
    // connection closed.
    let retry = bounded(held.gate.wait_for(|held| held.iter().any(|r| *r != first))).await;
    assert_eq!(retry.len(), 1, "the timed-out attempt is no longer held");
    held.cluster.clear_faults();
    assert_eq!(held.gate.release_all(), 1);
    let metadata = held.sent.await.unwrap().expect("the retry is served");
    assert_eq!(metadata.offset, Some(0));
    let batches = held.cluster.batches("t", 0).unwrap();
    assert_eq!(batches.len(), 1, "the dropped attempt wrote nothing");
    assert_eq!(batches[0].records[0].value.as_deref(), Some(&b"v"[..]));
}

/// Invariant: a request released with a fault gets that fault, not
/// service: released with an error, it is answered with it (only then) and
/// writes nothing; the client's retry, not held, is served.
#[tokio::test]
async fn held_request_released_with_an_error_is_answered_with_it() {
    let held = one_send_held(Duration::from_secs(30)).await;
    bounded(held.gate.wait_held(1)).await;
    held.cluster.clear_faults();
    let refused = FaultAction::Error(ErrorCode::NotEnoughReplicas);
    assert!(held.gate.release_oldest_with(refused).is_some());
    let metadata = held.sent.await.unwrap().expect("the retry is served");
    assert_eq!(metadata.offset, Some(0));
    let m = held.producer.metrics();
    let refusals = m.errors_by_code.get(&ErrorCode::NotEnoughReplicas.code());
    assert_eq!(refusals, Some(&1), "{m:?}");
    assert_eq!(
        held.cluster.batches("t", 0).unwrap().len(),
        1,
        "written once"
    );
}
