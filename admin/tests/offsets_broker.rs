//! The offset operations against the harness's shared Kafka 4.4 (one node),
//! one scenario per test, each on a topic and group of its own:
//!
//! - `list_offsets`: earliest, latest, max timestamp and by timestamp
//!   answer the offsets of the records produced with chosen timestamps;
//!   after `delete_records` the earliest is the new log start, and a cut
//!   above the high watermark is refused as OFFSET_OUT_OF_RANGE.
//! - `alter_group_offsets` commits to an empty group what `committed_offsets`
//!   then reads; `delete_group_offsets` removes one partition's offset; a
//!   reset naming a topic that does not exist is `UnknownTopic`.

use kafka_admin::{self as admin, OffsetSpec, OffsetsError, ResetScope, ResetSpec};
use kafka_client::{Cluster, ClusterConfig, TopicPartition};
use kafka_producer::{Producer, ProducerConfig, ProducerRecord};
use kafka_proto::{ApiKey, ErrorCode};
use kafka_testcontainers::{SharedKafka, recent_timestamp, unique_name};
use std::collections::BTreeMap;
use std::sync::Arc;

async fn setup(prefix: &str, partitions: i32) -> (Arc<Cluster>, String, String) {
    let kafka = SharedKafka::Kafka44Tv2
        .cluster()
        .await
        .expect("shared Kafka 4.4");
    let topic = unique_name(prefix);
    kafka.create_topic(&topic, partitions, 1).await.unwrap();
    let cluster = Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
        .await
        .unwrap();
    (cluster, topic, kafka.bootstrap())
}

/// ListOffsets' four specs against records of known timestamps, then
/// DeleteRecords moving the log start. Invariant: the offsets named are
/// those of the records written, nothing in between.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_offsets_and_delete_records_follow_the_log() {
    let (cluster, topic, bootstrap) = setup("admin-offsets", 1).await;
    let t0 = recent_timestamp();
    let producer = Producer::connect(ProducerConfig::builder(&bootstrap).build().unwrap())
        .await
        .unwrap();
    for (i, ts) in [t0, t0 + 50, t0 + 10].into_iter().enumerate() {
        let m = producer
            .send(
                ProducerRecord::new(topic.as_str())
                    .partition(0)
                    .value(format!("{i}"))
                    .timestamp(ts),
            )
            .await
            .unwrap();
        assert_eq!(m.offset, Some(i as i64));
    }
    let tp = TopicPartition::new(topic.as_str(), 0);
    let one = |spec| {
        let (cluster, tp) = (cluster.clone(), tp.clone());
        async move {
            admin::list_offsets(&cluster, std::slice::from_ref(&tp), spec, false)
                .await
                .unwrap()[&tp]
        }
    };
    assert_eq!(one(OffsetSpec::Earliest).await.offset, Some(0));
    assert_eq!(one(OffsetSpec::Latest).await.offset, Some(3));
    let max = one(OffsetSpec::MaxTimestamp).await;
    assert_eq!((max.offset, max.timestamp), (Some(1), Some(t0 + 50)));
    let at = one(OffsetSpec::Timestamp(t0 + 5)).await;
    assert_eq!((at.offset, at.timestamp), (Some(1), Some(t0 + 50)));
    assert_eq!(one(OffsetSpec::Timestamp(t0 + 100)).await.offset, None);
    let committed_end = admin::list_offsets(
        &cluster,
        std::slice::from_ref(&tp),
        OffsetSpec::Latest,
        true,
    )
    .await
    .unwrap();
    assert_eq!(committed_end[&tp].offset, Some(3));

    let lows = admin::delete_records(&cluster, &[(tp.clone(), 2)])
        .await
        .unwrap();
    assert_eq!(lows[&tp], 2);
    assert_eq!(one(OffsetSpec::Earliest).await.offset, Some(2));
    match admin::delete_records(&cluster, &[(tp.clone(), 9)]).await {
        Err(OffsetsError::Partition {
            api: ApiKey::DeleteRecords,
            partition,
            error: ErrorCode::OffsetOutOfRange,
        }) => {
            assert_eq!(partition, tp)
        }
        other => panic!("expected OFFSET_OUT_OF_RANGE, got {other:?}"),
    }
}

/// A simple commit to an empty group is what OffsetFetch reads back;
/// OffsetDelete removes only the partition named; a missing topic is the
/// caller's error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_offsets_are_altered_and_deleted() {
    let (cluster, topic, _) = setup("admin-group-offsets", 2).await;
    let group = unique_name("admin-group");
    let (p0, p1) = (
        TopicPartition::new(topic.as_str(), 0),
        TopicPartition::new(topic.as_str(), 1),
    );
    // Offsets are not checked against the log by the coordinator.
    let offsets: BTreeMap<_, _> = [(p0.clone(), 0), (p1.clone(), 0)].into_iter().collect();
    admin::alter_group_offsets(&cluster, &group, &offsets)
        .await
        .unwrap();
    assert_eq!(
        admin::committed_offsets(&cluster, &group).await.unwrap(),
        offsets
    );

    let deleted = admin::delete_group_offsets(&cluster, &group, std::slice::from_ref(&p1))
        .await
        .unwrap();
    assert_eq!(deleted, BTreeMap::from([(p1.clone(), Ok(()))]));
    assert_eq!(
        admin::committed_offsets(&cluster, &group).await.unwrap(),
        BTreeMap::from([(p0, 0)])
    );

    let missing = ResetScope::Topics(vec![(unique_name("no-such-topic"), None)]);
    match admin::plan_offset_reset(&cluster, &group, &missing, ResetSpec::ToEarliest).await {
        Err(OffsetsError::UnknownTopic(_)) => {}
        other => panic!("expected UnknownTopic, got {other:?}"),
    }
}
