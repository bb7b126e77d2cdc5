//! The sender's saturation rule against kafka-mock holding every Produce
//! request until the test releases it.
//!
//! Invariant: a batch appended while every leader has `max.in.flight`
//! requests outstanding (appends then do not wake the sender) is sent as
//! soon as a response frees a slot, and every send resolves Ok at the
//! offset the broker gave it: no record waits for a wake-up that never
//! comes.

use super::until;
use crate::{Producer, ProducerConfig, ProducerRecord};
use kafka_mock::{FaultAction, HoldHandle, MockCluster, MockConfig};
use kafka_proto::ApiKey;
use std::sync::Arc;
use std::time::Duration;

const TOPIC: &str = "saturated";

/// Waits until the broker holds a Produce request.
async fn held(gate: &HoldHandle, what: &str) {
    tokio::time::timeout(Duration::from_secs(10), gate.wait_held(1))
        .await
        .unwrap_or_else(|_| panic!("timed out waiting until {what}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_appended_while_in_flight_is_full_is_sent_when_a_response_frees_a_slot() {
    let cluster = MockCluster::start(MockConfig::default()).await.unwrap();
    cluster.create_topic(TOPIC, 1).unwrap();
    let gate = HoldHandle::new();
    let hold = gate.clone();
    cluster.set_interceptor(Arc::new(move |r| {
        (r.api == ApiKey::Produce).then(|| FaultAction::Hold(hold.clone()))
    }));
    let config = ProducerConfig::builder(&cluster.bootstrap())
        .max_in_flight(1usize)
        .linger(Duration::ZERO)
        .request_timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let producer = Producer::connect(config).await.unwrap();
    let first = producer.send(ProducerRecord::new(TOPIC).partition(0).value("first"));
    held(&gate, "the first batch is sent").await;
    // One request outstanding on the only leader: the sender waits saturated.
    until("the sender waits saturated", || {
        producer.accumulator().sender_saturated()
    })
    .await;
    let second = producer.send(ProducerRecord::new(TOPIC).partition(0).value("second"));
    assert!(
        producer.accumulator().sender_saturated(),
        "the append woke the sender though it could not send"
    );
    let produce_requests = || {
        let requests = cluster.requests();
        requests.iter().filter(|r| r.api == ApiKey::Produce).count()
    };
    assert_eq!(
        produce_requests(),
        1,
        "a second request beyond max.in.flight"
    );
    assert!(gate.release_oldest().is_some());
    held(
        &gate,
        "the batch appended while saturated is sent once the slot is free",
    )
    .await;
    assert!(gate.release_oldest().is_some());
    let first = tokio::time::timeout(Duration::from_secs(10), first)
        .await
        .expect("first resolves")
        .unwrap();
    let second = tokio::time::timeout(Duration::from_secs(10), second)
        .await
        .expect("second resolves")
        .unwrap();
    assert_eq!((first.offset, second.offset), (Some(0), Some(1)));
    assert_eq!(produce_requests(), 2);
    producer.close(Duration::from_secs(5)).await.unwrap();
}
