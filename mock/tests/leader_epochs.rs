//! The mock's partitions keep a leader epoch cache as Kafka's do: each
//! leader change starts a new epoch at the log end. OffsetForLeaderEpoch
//! answers each epoch's end offset, and a Fetch whose last fetched epoch
//! ends before its offset gets the diverging epoch (KIP-320), so that a
//! consumer's truncation detection can be tested against the mock.

use bytes::{Bytes, BytesMut};
use kafka_client::{Connection, ConnectionConfig};
use kafka_proto::messages::*;
use kafka_proto::record::{Compression, Record, RecordBatchBuilder};

use crate::common;

fn records(n: usize) -> Bytes {
    let mut b = RecordBatchBuilder::new(Compression::None);
    for i in 0..n {
        b.push(Record::new(
            1_000 + i as i64,
            None,
            Some(Bytes::from(format!("v{i}"))),
        ));
    }
    let mut out = BytesMut::new();
    b.encode(&mut out).unwrap();
    out.freeze()
}

async fn produce(c: &Connection, n: usize) {
    let req = ProduceRequest {
        acks: -1,
        timeout_ms: 5_000,
        topic_data: vec![ProduceRequestTopicProduceData {
            name: "t".into(),
            partition_data: vec![ProduceRequestPartitionProduceData {
                index: 0,
                records: Some(records(n)),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let r = c.send(&req, 11).await.unwrap();
    assert_eq!(r.responses[0].partition_responses[0].error_code, 0);
}

async fn end_offset(c: &Connection, epoch: i32) -> (i16, i32, i64) {
    let req = OffsetForLeaderEpochRequest {
        replica_id: -1,
        topics: vec![OffsetForLeaderEpochRequestTopic {
            topic: "t".into(),
            partitions: vec![OffsetForLeaderEpochRequestPartition {
                partition: 0,
                current_leader_epoch: 1,
                leader_epoch: epoch,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let r = c.send(&req, 4).await.unwrap();
    let p = &r.topics[0].partitions[0];
    (p.error_code, p.leader_epoch, p.end_offset)
}

async fn fetch(c: &Connection, offset: i64, last_fetched_epoch: i32) -> FetchResponsePartitionData {
    let req = FetchRequest {
        max_wait_ms: 0,
        max_bytes: 1 << 20,
        topics: vec![FetchRequestTopic {
            topic: "t".into(),
            partitions: vec![FetchRequestPartition {
                partition: 0,
                current_leader_epoch: 1,
                fetch_offset: offset,
                last_fetched_epoch,
                partition_max_bytes: 1 << 20,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let r = c.send(&req, 12).await.unwrap();
    r.responses[0].partitions[0].clone()
}

/// Invariant: epoch 0 ends where broker 2 took over (offset 3); a client
/// that read epoch 0 up to offset 5 is told its log diverged at 3, one
/// that read it up to 3 reads on.
#[tokio::test]
async fn each_epoch_ends_where_the_next_leader_started() {
    let mock = common::cluster(2).await;
    mock.create_topic("t", 1).unwrap();
    // Broker n's address is the n-th in the bootstrap list.
    let bootstrap = mock.bootstrap();
    let addrs: Vec<&str> = bootstrap.split(',').collect();
    let mut c = Connection::connect(addrs[0], &ConnectionConfig::default())
        .await
        .unwrap();
    produce(&c, 3).await;
    mock.move_leader("t", 0, 2).unwrap();
    c = Connection::connect(addrs[1], &ConnectionConfig::default())
        .await
        .unwrap();
    produce(&c, 2).await;
    assert_eq!(end_offset(&c, 0).await, (0, 0, 3));
    assert_eq!(end_offset(&c, 1).await, (0, 1, 5));
    assert_eq!(end_offset(&c, 2).await, (0, -1, -1));

    let diverged = fetch(&c, 5, 0).await;
    assert_eq!(diverged.error_code, 0);
    assert_eq!(
        (
            diverged.diverging_epoch.epoch,
            diverged.diverging_epoch.end_offset
        ),
        (0, 3)
    );
    assert!(diverged.records.is_none_or(|r| r.is_empty()));
    let on = fetch(&c, 3, 0).await;
    assert_eq!(on.diverging_epoch.epoch, -1);
    assert!(on.records.is_some_and(|r| !r.is_empty()));
}
