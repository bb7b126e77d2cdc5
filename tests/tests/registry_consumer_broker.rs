//! Typed consuming (`RecordDecoder` of kafka-schema-registry) with a real
//! registry (Apicurio with Confluent's API) and the shared Kafka 4.4
//! cluster: a corrupt record written with a plain producer among records of
//! the Avro serializer. One scenario each:
//!
//! - keep going (the default policy): the good records decode, the corrupt
//!   one is a typed per-record error at its offset with its bytes kept,
//!   none is dropped;
//! - stop the partition: the reader stops at the corrupt record (handed
//!   over with its error, the reader rewound to it, returned again by the
//!   next poll) until the application seeks past it; then the rest follows,
//!   none dropped;
//! - the same for a consumer-group member (`poll_group`, rewound with the
//!   member's `seek`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use kafka_client::Cluster;
use kafka_consumer::{Offset, Reader, ReaderConfig};
use kafka_producer::{Producer, ProducerConfig, ProducerRecord};
use kafka_schema_registry::{
    DecodeErrorPolicy, DecodedRecords, RecordSerializer, SerdeError, SerializationContext,
};
use kafka_testcontainers::{SchemaRegistry, SharedKafka, unique_topic};

use crate::support;
use crate::support::registry::{ORDER, decoder, order, serializer};

/// The corrupt record's value: not a registry frame (magic byte `n`).
const CORRUPT: &[u8] = b"not avro";

/// A topic of one partition holding, at offsets 0..5: orders 0 and 1, the
/// corrupt record, orders 3 and 4.
async fn topic_with_a_corrupt_record(name: &str, url: &str) -> (Arc<Cluster>, String) {
    let (kafka, cluster) = support::shared::client(SharedKafka::Kafka44Tv2).await;
    let topic = unique_topic(kafka, name, 1).await.expect("create topic");
    let ser = serializer(url, ORDER);
    let producer = Producer::connect(
        ProducerConfig::from_properties([("bootstrap.servers", kafka.bootstrap().as_str())])
            .unwrap(),
    )
    .await
    .unwrap();
    let ctx = SerializationContext::value(&topic);
    for id in 0..5 {
        let value = if id == 2 {
            Bytes::from_static(CORRUPT)
        } else {
            ser.serialize(&ctx, &order(id)).await.unwrap()
        };
        let md = producer
            .send(ProducerRecord::new(topic.as_str()).value(value))
            .await
            .expect("written");
        assert_eq!(md.offset, Some(id));
    }
    producer.close(Duration::from_secs(5)).await.ok();
    (cluster, topic)
}

fn reader(cluster: &Arc<Cluster>, topic: &str) -> Reader {
    let mut r = Reader::new(cluster.clone(), ReaderConfig::default());
    r.assign(topic, &[0]);
    r
}

/// Polls until `done` holds for what was polled so far (a bounded wait on
/// a condition, never a sleep).
async fn poll_until<K, V>(
    mut poll: impl AsyncFnMut() -> DecodedRecords<K, V>,
    done: impl Fn(&[DecodedRecords<K, V>]) -> bool,
) -> Vec<DecodedRecords<K, V>> {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut polls = Vec::new();
    while !done(&polls) {
        assert!(Instant::now() < deadline, "condition not reached in 60 s");
        polls.push(poll().await);
    }
    polls
}

/// Invariant: under the default policy every record is handed over once,
/// in offset order: the good ones decoded to the values written, the
/// corrupt one as a typed wire error at offset 2 with its bytes intact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupt_record_is_a_typed_error_and_none_is_dropped() {
    let registry = SchemaRegistry::shared().await.expect("registry");
    let url = registry.url();
    let (cluster, topic) = topic_with_a_corrupt_record("sr-corrupt", &url).await;
    let mut r = reader(&cluster, &topic);
    r.seek(&topic, 0, Offset::Earliest).await.unwrap();
    let dec = decoder(&url);
    assert_eq!(dec.policy(), DecodeErrorPolicy::Continue);
    let polls = poll_until(
        async || {
            dec.poll_reader(&mut r, Duration::from_millis(500))
                .await
                .unwrap()
        },
        |p| p.iter().map(|d| d.records.len()).sum::<usize>() >= 5,
    )
    .await;
    let records: Vec<_> = polls
        .into_iter()
        .flat_map(|d| {
            assert!(d.stopped.is_empty());
            d.records
        })
        .collect();
    assert_eq!(
        records.iter().map(|r| r.record.offset).collect::<Vec<_>>(),
        [0, 1, 2, 3, 4]
    );
    for r in &records {
        if r.record.offset == 2 {
            assert!(matches!(r.value, Err(SerdeError::Wire(_))), "{:?}", r.value);
            assert_eq!(r.record.value.as_deref(), Some(CORRUPT));
        } else {
            assert_eq!(
                r.value.as_ref().unwrap().as_ref(),
                Some(&order(r.record.offset))
            );
        }
    }
}

/// Invariant: with `StopPartition` the partition stops at the corrupt
/// record: it is handed over with its error and the reader is rewound to
/// it, so the next poll stops there again and no later record is handed
/// over (nor lost); after the application seeks past it, orders 3 and 4
/// follow. Every good record is handed over exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_policy_holds_the_partition_at_the_corrupt_record_until_skipped() {
    let registry = SchemaRegistry::shared().await.expect("registry");
    let url = registry.url();
    let (cluster, topic) = topic_with_a_corrupt_record("sr-stop", &url).await;
    let mut r = reader(&cluster, &topic);
    r.seek(&topic, 0, Offset::Earliest).await.unwrap();
    let dec = decoder(&url).with_policy(DecodeErrorPolicy::StopPartition);
    let mut good = Vec::new();
    // Until the first stop.
    let polls = poll_until(
        async || {
            dec.poll_reader(&mut r, Duration::from_millis(500))
                .await
                .unwrap()
        },
        |p| p.last().is_some_and(|d| !d.stopped.is_empty()),
    )
    .await;
    for d in polls {
        for rec in d.records {
            if rec.record.offset == 2 {
                assert!(matches!(rec.value, Err(SerdeError::Wire(_))));
            } else {
                good.push(rec.record.offset);
            }
        }
        if let Some(stop) = d.stopped.first() {
            assert_eq!((stop.partition.partition, stop.offset), (0, 2));
            assert!(stop.held_back.is_empty(), "the reader refetches them");
        }
    }
    assert_eq!(good, [0, 1]);
    assert_eq!(
        r.position(&topic, 0),
        Some(2),
        "rewound to the corrupt record"
    );
    // The next poll stops at it again.
    let again = poll_until(
        async || {
            dec.poll_reader(&mut r, Duration::from_millis(500))
                .await
                .unwrap()
        },
        |p| p.last().is_some_and(|d| !d.records.is_empty()),
    )
    .await;
    let last = again.last().unwrap();
    assert_eq!(last.records.len(), 1);
    assert_eq!(last.records[0].record.offset, 2);
    assert_eq!(last.stopped[0].offset, 2);
    // Skip it.
    let skip = last.stopped[0].skip_to();
    r.seek(&topic, 0, Offset::At(skip)).await.unwrap();
    let rest = poll_until(
        async || {
            dec.poll_reader(&mut r, Duration::from_millis(500))
                .await
                .unwrap()
        },
        |p| p.iter().map(|d| d.records.len()).sum::<usize>() >= 2,
    )
    .await;
    for d in rest {
        assert!(d.stopped.is_empty());
        for rec in d.records {
            assert_eq!(
                rec.value.as_ref().unwrap().as_ref(),
                Some(&order(rec.record.offset))
            );
            good.push(rec.record.offset);
        }
    }
    assert_eq!(good, [0, 1, 3, 4]);
}

/// Invariant: a group member under `StopPartition` stops at the corrupt
/// record as a reader does: [`RecordDecoder::poll_group`] rewinds the
/// member to it (nothing held back, nothing lost), the next polls stop
/// there again, and after the application seeks past it orders 3 and 4
/// follow; every good record is handed over exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_policy_rewinds_a_group_member_to_the_corrupt_record() {
    use kafka_consumer::GroupConsumer;
    use kafka_schema_registry::DecodedEvent;
    let registry = SchemaRegistry::shared().await.expect("registry");
    let url = registry.url();
    let (_cluster, topic) = topic_with_a_corrupt_record("sr-group-stop", &url).await;
    let (kafka, _) = support::shared::client(SharedKafka::Kafka44Tv2).await;
    let group = kafka_testcontainers::unique_name("sr-group-stop");
    let mut consumer = GroupConsumer::subscribe(
        support::group_consumer::config(kafka, &group, &[]),
        [topic.as_str()],
    )
    .await
    .expect("subscribe");
    let dec = decoder(&url).with_policy(DecodeErrorPolicy::StopPartition);
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut good = Vec::new();
    // Polls until the partition has stopped at the corrupt record twice
    // (the rewind makes the second poll return it again).
    let mut stops = Vec::new();
    while stops.len() < 2 {
        assert!(Instant::now() < deadline, "two stops not seen in 60 s");
        if let DecodedEvent::Records(d) = dec
            .poll_group(&mut consumer, Duration::from_millis(500))
            .await
            .unwrap()
        {
            for rec in d.records {
                if rec.record.offset == 2 {
                    assert!(matches!(rec.value, Err(SerdeError::Wire(_))));
                } else {
                    good.push(rec.record.offset);
                }
            }
            for stop in d.stopped {
                assert_eq!((stop.partition.partition, stop.offset), (0, 2));
                assert!(stop.held_back.is_empty(), "the member refetches them");
                stops.push(stop);
            }
        }
    }
    assert_eq!(good, [0, 1], "nothing past the corrupt record yet");
    consumer
        .seek(&stops[0].partition, Offset::At(stops[0].skip_to()))
        .await
        .unwrap();
    while good.len() < 4 {
        assert!(Instant::now() < deadline, "orders 3 and 4 not seen in 60 s");
        if let DecodedEvent::Records(d) = dec
            .poll_group(&mut consumer, Duration::from_millis(500))
            .await
            .unwrap()
        {
            assert!(d.stopped.is_empty());
            for rec in d.records {
                assert_eq!(
                    rec.value.as_ref().unwrap().as_ref(),
                    Some(&order(rec.record.offset))
                );
                good.push(rec.record.offset);
            }
        }
    }
    assert_eq!(good, [0, 1, 3, 4]);
    consumer.close(Duration::from_secs(5)).await;
}
