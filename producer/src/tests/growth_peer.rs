//! `batch.max.size` against kafka-mock: the open batch of a partition whose
//! leader connection has `max.in.flight` requests out grows past
//! `batch.size` up to the bound, and a batch the broker refuses as too
//! large (MESSAGE_TOO_LARGE) is split and sent again.

use super::until;
use crate::{Producer, ProducerConfig, ProducerRecord};
use kafka_mock::{FaultAction, HoldHandle, MockCluster, MockConfig};
use kafka_proto::messages::ProduceRequest;
use kafka_proto::{ApiKey, ErrorCode};
use std::sync::Arc;
use std::time::Duration;

/// The sizes of the Produce requests' batches the mock wrote, in log order,
/// with their record counts; and every record's value, in log order.
fn log(cluster: &MockCluster, topic: &str) -> (Vec<(usize, usize)>, Vec<String>) {
    let batches = cluster.batches(topic, 0).unwrap();
    let sizes = batches
        .iter()
        .map(|b| (b.encode_to_vec().unwrap().len(), b.records.len()))
        .collect();
    let values = batches
        .iter()
        .flat_map(|b| &b.records)
        .map(|r| String::from_utf8(r.value.as_deref().unwrap().to_vec()).unwrap())
        .collect();
    (sizes, values)
}

/// Invariant: while the partition's only in-flight slot is taken (the
/// broker holds the request), the records sent meanwhile go to one open
/// batch that grows past `batch.size` up to `batch.max.size` and no
/// further (the records beyond it start the next batch); once the slot
/// frees, every send resolves once, at the offset of its record, and the
/// log holds every record once, in send order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_waiting_for_an_in_flight_slot_grows_up_to_batch_max_size() {
    const TOPIC: &str = "growing";
    let cluster = MockCluster::start(MockConfig::default()).await.unwrap();
    cluster.create_topic(TOPIC, 1).unwrap();
    let config = ProducerConfig::builder(&cluster.bootstrap())
        .max_in_flight(1usize)
        .linger(Duration::ZERO)
        .batch_size(1_000usize)
        .batch_max_size(Some(4_000usize))
        .request_timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let producer = Producer::connect(config).await.unwrap();
    let acc = producer.accumulator().clone();
    let value = |i: usize| format!("{i:0>100}");
    // The producer learns the topic's max.message.bytes (DescribeConfigs,
    // on the connection the held requests would block).
    let first = producer.send(ProducerRecord::new(TOPIC).partition(0).value(value(0)));
    assert_eq!(first.await.unwrap().offset, Some(0));
    until("the topic's max.message.bytes is known", || {
        acc.lock().topics[TOPIC].max_batch_bytes == Some(1_048_588)
    })
    .await;
    let gate = HoldHandle::new();
    let hold = gate.clone();
    cluster.set_interceptor(Arc::new(move |r| {
        (r.api == ApiKey::Produce).then(|| FaultAction::Hold(hold.clone()))
    }));
    let mut sends = vec![producer.send(ProducerRecord::new(TOPIC).partition(0).value(value(1)))];
    tokio::time::timeout(Duration::from_secs(10), gate.wait_held(1))
        .await
        .expect("the first batch is sent");
    until(
        "the partition waits for its slot, its topic's limit known",
        || {
            let g = acc.lock();
            g.topics[TOPIC].grow.first() == Some(&true)
        },
    )
    .await;
    for i in 2..101 {
        sends.push(producer.send(ProducerRecord::new(TOPIC).partition(0).value(value(i))));
    }
    let queued: Vec<(usize, i32)> = {
        let g = acc.lock();
        g.topics[TOPIC].partitions[0]
            .iter()
            .map(|b| (b.size, b.records))
            .collect()
    };
    // 99 records of about 110 bytes: one batch up to the bound, the rest
    // in a second one still growing.
    assert_eq!(queued.len(), 3, "{queued:?}");
    assert!(
        queued[0].0 > 4_000 - 120 && queued[0].0 <= 4_000,
        "{queued:?}"
    );
    assert!(
        queued[1].0 > 4_000 - 120 && queued[1].0 <= 4_000,
        "{queued:?}"
    );
    assert_eq!(queued.iter().map(|q| q.1).sum::<i32>(), 99);
    assert!(queued[2].0 < 4_000, "{queued:?}");
    // The broker answers from now on: each grown batch goes out whole.
    cluster.set_interceptor(Arc::new(|_| None));
    gate.release_all();
    for (i, send) in sends.into_iter().enumerate() {
        let md = tokio::time::timeout(Duration::from_secs(10), send)
            .await
            .expect("every send resolves")
            .unwrap();
        assert_eq!(md.offset, Some(i as i64 + 1));
    }
    let (sizes, values) = log(&cluster, TOPIC);
    assert_eq!(values, (0..101).map(value).collect::<Vec<_>>());
    // The first two records alone, then the three batches queued behind
    // the held request.
    assert_eq!(sizes.len(), 5, "{sizes:?}");
    assert!(sizes[2].0 > 1_000 && sizes[2].0 <= 4_000, "{sizes:?}");
    assert!(sizes[3].0 > 1_000 && sizes[3].0 <= 4_000, "{sizes:?}");
    assert_eq!(producer.metrics().batch_splits, 0);
    producer.close(Duration::from_secs(5)).await.unwrap();
}

/// The mock refuses (MESSAGE_TOO_LARGE) every Produce request holding a
/// batch over `limit` bytes, as a topic's `max.message.bytes` would.
fn refuse_over(cluster: &MockCluster, limit: usize) {
    cluster.set_interceptor(Arc::new(move |r| {
        let produce = r.decode::<ProduceRequest>()?;
        let too_large = produce.topic_data.iter().any(|t| {
            t.partition_data
                .iter()
                .any(|p| p.records.as_ref().is_some_and(|b| b.len() > limit))
        });
        too_large.then_some(FaultAction::Error(ErrorCode::MessageTooLarge))
    }));
}

/// Invariant: batches the broker refuses as too large are split (again
/// and again, down to what it takes) and sent with the sequence numbers
/// they had: the idempotent producer writes every record once, in send
/// order, while five requests are in flight; every send resolves once, at
/// its record's offset, and no epoch is bumped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batches_refused_as_too_large_are_split_and_written_once_in_order() {
    for compression in ["none", "lz4"] {
        let topic = format!("too-large-{compression}");
        let cluster = MockCluster::start(MockConfig::default()).await.unwrap();
        cluster.create_topic(&topic, 1).unwrap();
        refuse_over(&cluster, 1_500);
        let config = ProducerConfig::from_properties([
            ("bootstrap.servers", cluster.bootstrap().as_str()),
            ("linger.ms", "2"),
            ("batch.size", "8000"),
            ("batch.max.size", "32000"),
            ("compression.type", compression),
        ])
        .unwrap();
        let producer = Producer::connect(config).await.unwrap();
        // Incompressible values: lz4 batches stay large too.
        let value = |i: usize| {
            let mut x = i as u64 ^ 0x9e37_79b9_7f4a_7c15;
            let noise: String = (0..40)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    char::from(b'a' + (x % 26) as u8)
                })
                .collect();
            format!("{i:06}-{noise}")
        };
        let sends: Vec<_> = (0..2_000)
            .map(|i| producer.send(ProducerRecord::new(&topic).partition(0).value(value(i))))
            .collect();
        for (i, send) in sends.into_iter().enumerate() {
            let md = tokio::time::timeout(Duration::from_secs(20), send)
                .await
                .expect("every send resolves")
                .unwrap_or_else(|e| panic!("{compression}: record {i}: {e}"));
            assert_eq!(md.offset, Some(i as i64), "{compression}");
        }
        let (sizes, values) = log(&cluster, &topic);
        assert_eq!(
            values,
            (0..2_000).map(value).collect::<Vec<_>>(),
            "{compression}"
        );
        assert!(
            sizes.iter().all(|(s, _)| *s <= 1_500 + 12),
            "{compression}: {sizes:?}"
        );
        let m = producer.metrics();
        assert!(m.batch_splits > 0, "{compression}: {m:?}");
        assert_eq!(m.epoch_bumps, 0, "{compression}");
        producer.close(Duration::from_secs(5)).await.unwrap();
    }
}

/// Invariant: a single record the broker refuses as too large cannot be
/// split: its send fails with MESSAGE_TOO_LARGE, once, and the records
/// around it are written once, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_single_record_refused_as_too_large_fails_and_the_others_are_written() {
    const TOPIC: &str = "one-too-large";
    let cluster = MockCluster::start(MockConfig::default()).await.unwrap();
    cluster.create_topic(TOPIC, 1).unwrap();
    refuse_over(&cluster, 2_000);
    let config = ProducerConfig::builder(&cluster.bootstrap())
        .linger(Duration::ZERO)
        .max_in_flight(1usize)
        .build()
        .unwrap();
    let producer = Producer::connect(config).await.unwrap();
    let before = producer
        .send(ProducerRecord::new(TOPIC).partition(0).value("before"))
        .await
        .unwrap();
    let big = producer
        .send(
            ProducerRecord::new(TOPIC)
                .partition(0)
                .value(vec![b'x'; 3_000]),
        )
        .await;
    let after = producer
        .send(ProducerRecord::new(TOPIC).partition(0).value("after"))
        .await
        .unwrap();
    let err = big.unwrap_err();
    assert_eq!(err.error_code(), Some(ErrorCode::MessageTooLarge), "{err}");
    assert_eq!((before.offset, after.offset), (Some(0), Some(1)));
    let (_, values) = log(&cluster, TOPIC);
    assert_eq!(values, ["before", "after"]);
    producer.close(Duration::from_secs(5)).await.unwrap();
}
