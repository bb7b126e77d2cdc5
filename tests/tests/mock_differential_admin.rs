//! kafka-mock against the real broker for the operations APIs: the same
//! request sequences go to a one-broker kafka-mock and to the harness's
//! real single-node Kafka 4.4, and the answers a client acts on — error
//! codes, low watermarks, offsets, leader epochs, config values and their
//! sources — must be the same. Covered: ApiVersions of these APIs,
//! DeleteRecords (with the Fetch and ListOffsets that follow it),
//! ListOffsets by max timestamp and under read_committed,
//! OffsetForLeaderEpoch, OffsetDelete and an admin's OffsetCommit,
//! IncrementalAlterConfigs with DescribeConfigs, DescribeCluster, and the
//! ACL APIs of a broker without an authorizer (SECURITY_DISABLED).
//!
//! Each scenario uses names of its own and retries the answers of a broker
//! still settling (a new topic's leader not ready, a coordinator loading),
//! so only answers both must give are compared.

use bytes::{Bytes, BytesMut};
use kafka_client::{Connection, ConnectionConfig};
use kafka_mock::{KafkaRelease, MockCluster, MockConfig};
use kafka_proto::messages::*;
use kafka_proto::record::{Compression, Record, RecordBatchBuilder, RecordBatches};
use kafka_proto::{ApiKey, ErrorCode};
use kafka_testcontainers::{SharedKafka, recent_timestamp, unique_name};
use std::time::Duration;

/// One observation per line.
type Seen = Vec<String>;

fn code(c: i16) -> String {
    format!("{:?}", ErrorCode::from(c))
}

async fn connect(bootstrap: &str) -> Connection {
    let addr = bootstrap.split(',').next().unwrap();
    Connection::connect(addr, &ConnectionConfig::default())
        .await
        .expect("connect")
}

/// `n` records with timestamps `ts[i]`, plain or in producer `pid`'s
/// transaction.
fn batch(pid: i64, epoch: i16, seq: i32, ts: &[i64], txn: bool) -> Bytes {
    let mut b = RecordBatchBuilder::new(Compression::None)
        .producer(pid, epoch, seq)
        .transactional(txn);
    for (i, t) in ts.iter().enumerate() {
        b.push(Record::new(
            *t,
            None,
            Some(Bytes::from(format!("v{seq}-{i}"))),
        ));
    }
    let mut out = BytesMut::new();
    b.encode(&mut out).unwrap();
    out.freeze()
}

/// A transient answer of a broker still settling.
fn transient(c: i16) -> bool {
    matches!(
        ErrorCode::from(c),
        ErrorCode::ConcurrentTransactions
            | ErrorCode::CoordinatorLoadInProgress
            | ErrorCode::CoordinatorNotAvailable
            | ErrorCode::NotCoordinator
            | ErrorCode::NotLeaderOrFollower
            | ErrorCode::LeaderNotAvailable
            | ErrorCode::UnknownTopicOrPartition
    )
}

/// Sends until the answer is not transient; returns it.
async fn retry_transient<R, F>(mut send: F) -> R
where
    F: AsyncFnMut() -> (R, i16),
{
    let mut last = 0;
    for _ in 0..300 {
        let (resp, c) = send().await;
        if !transient(c) {
            return resp;
        }
        last = c;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "still {} after 300 tries of {}",
        code(last),
        std::any::type_name::<R>()
    );
}

async fn create_topic(c: &Connection, name: &str, partitions: i32, configs: &[(&str, &str)]) {
    let req = CreateTopicsRequest {
        topics: vec![CreateTopicsRequestCreatableTopic {
            name: name.into(),
            num_partitions: partitions,
            replication_factor: 1,
            configs: configs
                .iter()
                .map(|(k, v)| CreateTopicsRequestCreatableTopicConfig {
                    name: (*k).into(),
                    value: Some((*v).into()),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }],
        timeout_ms: 30_000,
        ..Default::default()
    };
    let resp = c.send(&req, 7).await.unwrap();
    assert_eq!(resp.topics[0].error_code, 0, "create {name}");
    // Wait until the leader serves the partitions.
    retry_transient(async || {
        let r = list_offset(c, name, 0, -1, false).await;
        (r.clone(), r.error_code)
    })
    .await;
}

async fn produce(c: &Connection, tid: Option<&str>, topic: &str, records: Bytes) -> (String, i64) {
    let req = ProduceRequest {
        transactional_id: tid.map(String::from),
        acks: -1,
        timeout_ms: 30_000,
        topic_data: vec![ProduceRequestTopicProduceData {
            name: topic.into(),
            partition_data: vec![ProduceRequestPartitionProduceData {
                index: 0,
                records: Some(records),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let resp = retry_transient(async || {
        let r = c.send(&req, 12).await.unwrap();
        let e = r.responses[0].partition_responses[0].error_code;
        (r, e)
    })
    .await;
    let p = &resp.responses[0].partition_responses[0];
    (code(p.error_code), p.base_offset)
}

async fn list_offset(
    c: &Connection,
    topic: &str,
    partition: i32,
    timestamp: i64,
    read_committed: bool,
) -> ListOffsetsResponsePartition {
    let req = ListOffsetsRequest {
        replica_id: -1,
        isolation_level: i8::from(read_committed),
        topics: vec![ListOffsetsRequestTopic {
            name: topic.into(),
            partitions: vec![ListOffsetsRequestPartition {
                partition_index: partition,
                timestamp,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let r = c.send(&req, 9).await.unwrap();
    r.topics[0].partitions[0].clone()
}

fn list_offset_line(what: &str, p: &ListOffsetsResponsePartition) -> String {
    format!(
        "{what}: {} offset={} timestamp={} epoch={}",
        code(p.error_code),
        p.offset,
        p.timestamp,
        p.leader_epoch
    )
}

/// A Fetch of partition 0 from `offset`: the error, the log start and the
/// first record's offset.
async fn fetch_from(c: &Connection, topic: &str, offset: i64) -> String {
    let req = FetchRequest {
        max_wait_ms: 0,
        min_bytes: 0,
        max_bytes: 1 << 20,
        topics: vec![FetchRequestTopic {
            topic: topic.into(),
            partitions: vec![FetchRequestPartition {
                partition: 0,
                fetch_offset: offset,
                partition_max_bytes: 1 << 20,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let r = c.send(&req, 12).await.unwrap();
    let p = &r.responses[0].partitions[0];
    let first = RecordBatches::new(p.records.clone().unwrap_or_default())
        .filter_map(Result::ok)
        .flat_map(|b| b.records)
        .map(|r| r.offset)
        .find(|o| *o >= offset);
    format!(
        "fetch from {offset}: {} log_start={} hw={} first={first:?}",
        code(p.error_code),
        p.log_start_offset,
        p.high_watermark
    )
}

async fn delete_records(c: &Connection, topic: &str, partition: i32, offset: i64) -> String {
    let req = DeleteRecordsRequest {
        topics: vec![DeleteRecordsRequestTopic {
            name: topic.into(),
            partitions: vec![DeleteRecordsRequestPartition {
                partition_index: partition,
                offset,
                ..Default::default()
            }],
            ..Default::default()
        }],
        timeout_ms: 30_000,
        ..Default::default()
    };
    let r = c.send(&req, 2).await.unwrap();
    let p = &r.topics[0].partitions[0];
    format!(
        "delete records p{partition} before {offset}: {} low_watermark={}",
        code(p.error_code),
        p.low_watermark
    )
}

async fn compare(name: &str, real: Seen, mock: Seen) {
    let mut diff = Vec::new();
    for i in 0..real.len().max(mock.len()) {
        let (r, m) = (real.get(i), mock.get(i));
        if r != m {
            diff.push(format!("  real: {r:?}\n  mock: {m:?}"));
        }
    }
    assert!(
        diff.is_empty(),
        "{name}: kafka-mock differs from Kafka:\n{}\nreal:\n{}",
        diff.join("\n"),
        real.join("\n")
    );
    eprintln!(
        "{name}: {} observations agree:\n  {}",
        real.len(),
        real.join("\n  ")
    );
}

async fn mock() -> MockCluster {
    MockCluster::start(MockConfig::default()).await.unwrap()
}

async fn real() -> String {
    SharedKafka::Kafka44Tv2
        .cluster()
        .await
        .expect("shared cluster")
        .bootstrap()
}

/// The version ranges of the operations APIs.
async fn api_versions(bootstrap: &str) -> Seen {
    let c = connect(bootstrap).await;
    let req = ApiVersionsRequest {
        client_software_name: "kafka-eos-tests".into(),
        client_software_version: "1".into(),
        ..Default::default()
    };
    let r = c.send(&req, 3).await.unwrap();
    let mut seen = vec![format!("error: {}", code(r.error_code))];
    let wanted = [
        ApiKey::ApiVersions,
        ApiKey::OffsetForLeaderEpoch,
        ApiKey::DeleteRecords,
        ApiKey::OffsetDelete,
        ApiKey::IncrementalAlterConfigs,
        ApiKey::DescribeCluster,
        ApiKey::CreateAcls,
        ApiKey::DescribeAcls,
        ApiKey::DeleteAcls,
        ApiKey::ListOffsets,
        ApiKey::DescribeConfigs,
        ApiKey::OffsetCommit,
    ];
    seen.extend(wanted.iter().map(|api| {
        let range = r
            .api_keys
            .iter()
            .find(|k| k.api_key == api.code())
            .map(|k| format!("{}..={}", k.min_version, k.max_version));
        format!("{api:?}: {range:?}")
    }));
    seen
}

/// DeleteRecords moves the log start: below it a Fetch is
/// OFFSET_OUT_OF_RANGE and ListOffsets earliest answers it; it never moves
/// back; past the high watermark is refused; -1 means the high watermark;
/// a compacted topic refuses (POLICY_VIOLATION); a partition that does not
/// exist is UNKNOWN_TOPIC_OR_PARTITION.
async fn delete_records_scenario(bootstrap: &str) -> Seen {
    let c = connect(bootstrap).await;
    let topic = unique_name("diff-delrec");
    let compacted = unique_name("diff-delrec-compact");
    create_topic(&c, &topic, 1, &[]).await;
    create_topic(&c, &compacted, 1, &[("cleanup.policy", "compact")]).await;
    let t0 = recent_timestamp();
    let ts = [t0, t0 + 1, t0 + 2];
    let mut seen = Vec::new();
    for i in 0..2 {
        let (e, off) = produce(&c, None, &topic, batch(-1, -1, -1, &ts, false)).await;
        seen.push(format!("produce {i}: {e} base={off}"));
    }
    seen.push(delete_records(&c, &topic, 0, 4).await);
    seen.push(fetch_from(&c, &topic, 2).await);
    seen.push(fetch_from(&c, &topic, 4).await);
    seen.push(list_offset_line(
        "earliest",
        &list_offset(&c, &topic, 0, -2, false).await,
    ));
    seen.push(delete_records(&c, &topic, 0, 1).await);
    seen.push(delete_records(&c, &topic, 0, 7).await);
    seen.push(delete_records(&c, &topic, 0, -1).await);
    seen.push(list_offset_line(
        "earliest",
        &list_offset(&c, &topic, 0, -2, false).await,
    ));
    seen.push(list_offset_line(
        "latest",
        &list_offset(&c, &topic, 0, -1, false).await,
    ));
    seen.push(delete_records(&c, &topic, 3, 0).await);
    let (e, _) = produce(&c, None, &compacted, batch(-1, -1, -1, &ts, false)).await;
    seen.push(format!("produce to the compacted topic: {e}"));
    seen.push(delete_records(&c, &compacted, 0, 1).await);
    seen
}

/// ListOffsets by max timestamp and latest, read_uncommitted and
/// read_committed, with a transaction open above committed records.
async fn list_offsets_scenario(bootstrap: &str) -> Seen {
    let c = connect(bootstrap).await;
    let topic = unique_name("diff-listoff");
    let tid = unique_name("diff-listoff-txn");
    create_topic(&c, &topic, 1, &[]).await;
    let t0 = recent_timestamp();
    let mut seen = Vec::new();
    let (e, off) = produce(
        &c,
        None,
        &topic,
        batch(-1, -1, -1, &[t0 + 5, t0 + 9, t0 + 1], false),
    )
    .await;
    seen.push(format!("produce: {e} base={off}"));
    let init = retry_transient(async || {
        let r = c
            .send(&InitProducerIdRequest::transactional(&tid, 60_000), 5)
            .await
            .unwrap();
        let e = r.error_code;
        (r, e)
    })
    .await;
    let (e, off) = produce(
        &c,
        Some(&tid),
        &topic,
        batch(
            init.producer_id,
            init.producer_epoch,
            0,
            &[t0 + 20, t0 + 3],
            true,
        ),
    )
    .await;
    seen.push(format!("transactional produce: {e} base={off}"));
    for rc in [false, true] {
        for (what, ts) in [
            ("latest", -1),
            ("max timestamp", -3),
            ("at t0 + 4", t0 + 4),
            ("at t0 + 10", t0 + 10),
        ] {
            let p = list_offset(&c, &topic, 0, ts, rc).await;
            seen.push(list_offset_line(&format!("{what} read_committed={rc}"), &p));
        }
    }
    seen
}

async fn offsets_for_epoch(c: &Connection, topic: &str, current: i32, epoch: i32) -> String {
    let req = OffsetForLeaderEpochRequest {
        replica_id: -1,
        topics: vec![OffsetForLeaderEpochRequestTopic {
            topic: topic.into(),
            partitions: vec![OffsetForLeaderEpochRequestPartition {
                partition: 0,
                current_leader_epoch: current,
                leader_epoch: epoch,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let r = c.send(&req, 4).await.unwrap();
    let p = &r.topics[0].partitions[0];
    format!(
        "epoch {epoch} (current {current}): {} leader_epoch={} end_offset={}",
        code(p.error_code),
        p.leader_epoch,
        p.end_offset
    )
}

/// OffsetForLeaderEpoch on a partition that never changed leader: its
/// epoch ends at the log end, a later epoch is unknown (-1, -1), the
/// current leader epoch is checked (older fenced, newer unknown), and the
/// log start moved by DeleteRecords is the start of the first epoch.
async fn leader_epochs_scenario(bootstrap: &str) -> Seen {
    let c = connect(bootstrap).await;
    let topic = unique_name("diff-epochs");
    create_topic(&c, &topic, 1, &[]).await;
    let mut seen = Vec::new();
    seen.push(offsets_for_epoch(&c, &topic, -1, 0).await);
    let (e, off) = produce(&c, None, &topic, batch(-1, -1, -1, &[1, 2, 3], false)).await;
    seen.push(format!("produce: {e} base={off}"));
    let epoch = list_offset(&c, &topic, 0, -1, false).await.leader_epoch;
    seen.push(format!("leader epoch: {epoch}"));
    seen.push(offsets_for_epoch(&c, &topic, epoch, epoch).await);
    seen.push(offsets_for_epoch(&c, &topic, -1, epoch + 1).await);
    seen.push(offsets_for_epoch(&c, &topic, epoch + 1, epoch).await);
    seen.push(offsets_for_epoch(&c, &topic, -1, -1).await);
    seen.push(delete_records(&c, &topic, 0, 2).await);
    seen.push(offsets_for_epoch(&c, &topic, epoch, epoch).await);
    seen
}

/// FindCoordinator of `group`, as clients do first: on a fresh broker it
/// creates the offsets topic, and until then every group API is
/// NOT_COORDINATOR.
async fn find_coordinator(c: &Connection, group: &str) -> String {
    let fc = retry_transient(async || {
        let r = c
            .send(
                &FindCoordinatorRequest {
                    key_type: FindCoordinatorRequest::KEY_TYPE_GROUP,
                    coordinator_keys: vec![group.to_string()],
                    ..Default::default()
                },
                4,
            )
            .await
            .unwrap();
        let e = r.coordinators[0].error_code;
        (r, e)
    })
    .await;
    format!("find coordinator: {}", code(fc.coordinators[0].error_code))
}

async fn commit(c: &Connection, group: &str, topic: &str, offset: i64) -> String {
    let req = OffsetCommitRequest {
        group_id: group.into(),
        generation_id_or_member_epoch: -1,
        topics: vec![OffsetCommitRequestTopic {
            name: topic.into(),
            partitions: vec![OffsetCommitRequestPartition {
                partition_index: 0,
                committed_offset: offset,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let r = retry_transient(async || {
        let r = c.send(&req, 9).await.unwrap();
        let e = r.topics[0].partitions[0].error_code;
        (r, e)
    })
    .await;
    format!(
        "admin commit {offset} to {}: {}",
        if topic.contains("other") {
            "other"
        } else {
            "topic"
        },
        code(r.topics[0].partitions[0].error_code)
    )
}

async fn committed(c: &Connection, group: &str, topic: &str) -> String {
    let r = c
        .send(
            &OffsetFetchRequest {
                group_id: group.into(),
                topics: Some(vec![OffsetFetchRequestTopic {
                    name: topic.into(),
                    partition_indexes: vec![0],
                    ..Default::default()
                }]),
                ..Default::default()
            },
            7,
        )
        .await
        .unwrap();
    let p = &r.topics[0].partitions[0];
    format!(
        "committed: {} offset={}",
        code(p.error_code),
        p.committed_offset
    )
}

async fn offset_delete(c: &Connection, group: &str, topic: &str) -> String {
    let req = OffsetDeleteRequest {
        group_id: group.into(),
        topics: vec![OffsetDeleteRequestTopic {
            name: topic.into(),
            partitions: vec![OffsetDeleteRequestPartition { partition_index: 0 }],
        }],
    };
    let mut r = c.send(&req, 0).await.unwrap();
    for _ in 0..100 {
        let settling = matches!(
            ErrorCode::from(r.error_code),
            ErrorCode::CoordinatorLoadInProgress
                | ErrorCode::CoordinatorNotAvailable
                | ErrorCode::NotCoordinator
        );
        if !settling {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        r = c.send(&req, 0).await.unwrap();
    }
    let partitions: Vec<String> = r
        .topics
        .iter()
        .flat_map(|t| t.partitions.iter().map(|p| code(p.error_code)))
        .collect();
    format!(
        "offset delete of {}: {} partitions={partitions:?}",
        if topic.contains("other") {
            "other"
        } else {
            "topic"
        },
        code(r.error_code)
    )
}

async fn heartbeat(
    c: &Connection,
    group: &str,
    member: &str,
    epoch: i32,
    topic: &str,
) -> (String, i32) {
    let req = ConsumerGroupHeartbeatRequest {
        group_id: group.into(),
        member_id: member.into(),
        member_epoch: epoch,
        rebalance_timeout_ms: if epoch == 0 { 30_000 } else { -1 },
        subscribed_topic_names: (epoch == 0).then(|| vec![topic.to_string()]),
        topic_partitions: (epoch == 0).then(Vec::new),
        ..Default::default()
    };
    let r = retry_transient(async || {
        let r = c.send(&req, 1).await.unwrap();
        let e = r.error_code;
        (r, e)
    })
    .await;
    (code(r.error_code), r.member_epoch)
}

/// An admin's commit (no member, generation -1) to an empty group, then
/// OffsetDelete: GROUP_ID_NOT_FOUND for a group that does not exist,
/// GROUP_SUBSCRIBED_TO_TOPIC for a topic a KIP-848 member subscribes to
/// (the offset stays), NONE (and the offset gone) for another topic and
/// once the member left.
async fn offset_delete_scenario(bootstrap: &str) -> Seen {
    let c = connect(bootstrap).await;
    let topic = unique_name("diff-offdel");
    let other = unique_name("diff-offdel-other");
    let group = unique_name("diff-offdel-group");
    let member = unique_name("member");
    create_topic(&c, &topic, 1, &[]).await;
    create_topic(&c, &other, 1, &[]).await;
    let mut seen = vec![find_coordinator(&c, &group).await];
    seen.push(offset_delete(&c, &group, &topic).await);
    seen.push(commit(&c, &group, &topic, 3).await);
    seen.push(commit(&c, &group, &other, 4).await);
    // The member epoch itself differs (Kafka 4.4 answers 2 to a first
    // join, the mock 1: listed in kafka-mock's crate docs).
    let (e, epoch) = heartbeat(&c, &group, &member, 0, &topic).await;
    seen.push(format!("join: {e} member epoch>0={}", epoch > 0));
    seen.push(offset_delete(&c, &group, &topic).await);
    seen.push(committed(&c, &group, &topic).await);
    seen.push(offset_delete(&c, &group, &other).await);
    seen.push(committed(&c, &group, &other).await);
    seen.push(commit(&c, &group, &topic, 5).await);
    let (e, _) = heartbeat(&c, &group, &member, epoch, &topic).await;
    seen.push(format!("heartbeat: {e}"));
    let (e, epoch) = heartbeat(&c, &group, &member, -1, &topic).await;
    seen.push(format!("leave: {e} epoch={epoch}"));
    seen.push(commit(&c, &group, &topic, 6).await);
    seen.push(offset_delete(&c, &group, &topic).await);
    seen.push(committed(&c, &group, &topic).await);
    seen
}

async fn alter(
    c: &Connection,
    resource_type: i8,
    name: &str,
    ops: &[(&str, i8, &str)],
    validate_only: bool,
) -> String {
    let req = IncrementalAlterConfigsRequest {
        resources: vec![IncrementalAlterConfigsRequestResource {
            resource_type,
            resource_name: name.into(),
            configs: ops
                .iter()
                .map(|(k, op, v)| IncrementalAlterConfigsRequestConfig {
                    name: (*k).into(),
                    config_operation: *op,
                    value: Some((*v).into()),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }],
        validate_only,
        ..Default::default()
    };
    let r = c.send(&req, 1).await.unwrap();
    format!(
        "alter {ops:?} validate_only={validate_only}: {}",
        code(r.responses[0].error_code)
    )
}

async fn describe_topic_config(c: &Connection, topic: &str, key: &str) -> String {
    let req = DescribeConfigsRequest {
        resources: vec![DescribeConfigsRequestDescribeConfigsResource {
            resource_type: 2,
            resource_name: topic.into(),
            configuration_keys: Some(vec![key.into()]),
            ..Default::default()
        }],
        ..Default::default()
    };
    let r = c.send(&req, 4).await.unwrap();
    let res = &r.results[0];
    let configs: Vec<String> = res
        .configs
        .iter()
        .map(|c| format!("{}={:?} source={}", c.name, c.value, c.config_source))
        .collect();
    format!("describe {key}: {} {configs:?}", code(res.error_code))
}

/// DescribeConfigs of `key` until it differs from `before`: a broker
/// learns a config change from the controller a moment after the change is
/// acknowledged.
async fn describe_changed(c: &Connection, topic: &str, key: &str, before: &str) -> String {
    let mut now = describe_topic_config(c, topic, key).await;
    for _ in 0..100 {
        if now != before {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        now = describe_topic_config(c, topic, key).await;
    }
    now
}

/// IncrementalAlterConfigs of a topic: SET shows as a dynamic topic config
/// in DescribeConfigs, APPEND and SUBTRACT edit a list, DELETE restores the
/// default, validate_only changes nothing; a bad value, an unknown name,
/// APPEND to a non-list and an unknown topic are refused. Broker configs
/// are only validated (the broker is shared).
async fn configs_scenario(bootstrap: &str) -> Seen {
    let c = connect(bootstrap).await;
    let topic = unique_name("diff-configs");
    create_topic(&c, &topic, 1, &[("retention.ms", "7200000")]).await;
    let retention = describe_topic_config(&c, &topic, "retention.ms").await;
    let policy = describe_topic_config(&c, &topic, "cleanup.policy").await;
    let mut seen = vec![retention.clone(), policy.clone()];
    seen.push(describe_topic_config(&c, &topic, "segment.ms").await);
    seen.push(alter(&c, 2, &topic, &[("retention.ms", 0, "3600000")], false).await);
    let retention = describe_changed(&c, &topic, "retention.ms", &retention).await;
    seen.push(retention.clone());
    seen.push(alter(&c, 2, &topic, &[("retention.ms", 0, "60000")], true).await);
    seen.push(describe_topic_config(&c, &topic, "retention.ms").await);
    seen.push(alter(&c, 2, &topic, &[("cleanup.policy", 2, "compact")], false).await);
    let policy = describe_changed(&c, &topic, "cleanup.policy", &policy).await;
    seen.push(policy.clone());
    seen.push(alter(&c, 2, &topic, &[("cleanup.policy", 3, "delete")], false).await);
    seen.push(describe_changed(&c, &topic, "cleanup.policy", &policy).await);
    seen.push(alter(&c, 2, &topic, &[("retention.ms", 1, "")], false).await);
    seen.push(describe_changed(&c, &topic, "retention.ms", &retention).await);
    seen.push(alter(&c, 2, &topic, &[("retention.ms", 0, "soon")], false).await);
    seen.push(alter(&c, 2, &topic, &[("retention.forever", 0, "1")], false).await);
    seen.push(alter(&c, 2, &topic, &[("retention.ms", 2, "1")], false).await);
    seen.push(
        alter(
            &c,
            2,
            &unique_name("diff-nosuch"),
            &[("retention.ms", 0, "1")],
            false,
        )
        .await,
    );
    seen.push(alter(&c, 4, "", &[("log.retention.ms", 0, "3600000")], true).await);
    seen.push(alter(&c, 4, "1", &[("log.retention.ms", 0, "3600000")], true).await);
    seen
}

/// DescribeCluster: no error, one broker that is also the controller id
/// answered, the cluster's authorized operations when asked (every cluster
/// operation without an authorizer).
async fn describe_cluster_scenario(bootstrap: &str) -> Seen {
    let c = connect(bootstrap).await;
    let mut seen = Vec::new();
    for (version, include) in [(0, false), (1, true), (2, false)] {
        let r = c
            .send(
                &DescribeClusterRequest {
                    include_cluster_authorized_operations: include,
                    ..Default::default()
                },
                version,
            )
            .await
            .unwrap();
        let ids: Vec<i32> = r.brokers.iter().map(|b| b.broker_id).collect();
        seen.push(format!(
            "v{version}: {} endpoint_type={} brokers={ids:?} controller_listed={} racks={:?} fenced={:?} ops={}",
            code(r.error_code),
            r.endpoint_type,
            ids.contains(&r.controller_id),
            r.brokers.iter().map(|b| b.rack.clone()).collect::<Vec<_>>(),
            r.brokers.iter().map(|b| b.is_fenced).collect::<Vec<_>>(),
            r.cluster_authorized_operations
        ));
    }
    seen
}

/// The ACL APIs on a broker without an authorizer: SECURITY_DISABLED with
/// Kafka's message.
async fn acls_scenario(bootstrap: &str) -> Seen {
    let c = connect(bootstrap).await;
    let topic = unique_name("diff-acls");
    let create = CreateAclsRequest {
        creations: vec![CreateAclsRequestCreation {
            resource_type: 2,
            resource_name: topic.clone(),
            resource_pattern_type: 3,
            principal: "User:alice".into(),
            host: "*".into(),
            operation: 3,
            permission_type: 3,
            ..Default::default()
        }],
        ..Default::default()
    };
    let r = c.send(&create, 3).await.unwrap();
    let mut seen = vec![format!(
        "create: {} {:?}",
        code(r.results[0].error_code),
        r.results[0].error_message
    )];
    let r = c
        .send(
            &DescribeAclsRequest {
                resource_type_filter: 1,
                resource_name_filter: None,
                pattern_type_filter: 1,
                principal_filter: None,
                host_filter: None,
                operation: 1,
                permission_type: 1,
                ..Default::default()
            },
            3,
        )
        .await
        .unwrap();
    seen.push(format!(
        "describe: {} {:?} resources={}",
        code(r.error_code),
        r.error_message,
        r.resources.len()
    ));
    let r = c
        .send(
            &DeleteAclsRequest {
                filters: vec![DeleteAclsRequestFilter {
                    resource_type_filter: 2,
                    resource_name_filter: Some(topic),
                    pattern_type_filter: 3,
                    principal_filter: None,
                    host_filter: None,
                    operation: 1,
                    permission_type: 1,
                    ..Default::default()
                }],
                ..Default::default()
            },
            3,
        )
        .await
        .unwrap();
    seen.push(format!(
        "delete: {} {:?} matching={}",
        code(r.filter_results[0].error_code),
        r.filter_results[0].error_message,
        r.filter_results[0].matching_acls.len()
    ));
    seen
}

/// A KIP-848 member subscribed by regex: heartbeats (acknowledging what
/// it was given) until its assignment covers `want` topics, or 30 s pass;
/// returns the member epoch and the assigned topic ids.
async fn heartbeat_until(
    c: &Connection,
    group: &str,
    member: &str,
    mut epoch: i32,
    owned: &mut Vec<ConsumerGroupHeartbeatRequestTopicPartitions>,
    want: usize,
) -> i32 {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while owned.len() < want && std::time::Instant::now() < deadline {
        let r = c
            .send(
                &ConsumerGroupHeartbeatRequest {
                    group_id: group.into(),
                    member_id: member.into(),
                    member_epoch: epoch,
                    topic_partitions: Some(owned.clone()),
                    ..Default::default()
                },
                1,
            )
            .await
            .unwrap();
        assert_eq!(r.error_code, 0, "heartbeat: {}", code(r.error_code));
        epoch = r.member_epoch;
        if let Some(a) = r.assignment {
            *owned = a
                .topic_partitions
                .into_iter()
                .map(|tp| ConsumerGroupHeartbeatRequestTopicPartitions {
                    topic_id: tp.topic_id,
                    partitions: tp.partitions,
                    ..Default::default()
                })
                .collect();
        }
        if owned.len() < want {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    epoch
}

/// The names of the topics `owned` names by id.
async fn topic_names(
    c: &Connection,
    prefix: &str,
    owned: &[ConsumerGroupHeartbeatRequestTopicPartitions],
) -> Vec<String> {
    let md = c
        .send(
            &MetadataRequest {
                topics: None,
                allow_auto_topic_creation: false,
                ..Default::default()
            },
            12,
        )
        .await
        .unwrap();
    let mut names: Vec<String> = owned
        .iter()
        .filter_map(|tp| {
            md.topics
                .iter()
                .find(|t| t.topic_id == tp.topic_id)
                .and_then(|t| t.name.clone())
        })
        .map(|n| n.replacen(prefix, "P", 1))
        .collect();
    names.sort();
    names
}

/// KIP-848 regex subscription: the member is assigned the topics whose
/// whole name matches, then also a matching topic created later; OffsetDelete
/// sees a regex-matched topic as subscribed; a regex that does not compile
/// is INVALID_REGULAR_EXPRESSION.
async fn regex_scenario(bootstrap: &str) -> Seen {
    let c = connect(bootstrap).await;
    let prefix = unique_name("diff-re");
    let group = unique_name("diff-re-group");
    let member = unique_name("member");
    for t in ["a", "b", "a-x"] {
        create_topic(&c, &format!("{prefix}-{t}"), 1, &[]).await;
    }
    let regex = format!("{prefix}-[a-z]");
    let mut seen = vec![find_coordinator(&c, &group).await];
    let join = ConsumerGroupHeartbeatRequest {
        group_id: group.clone(),
        member_id: member.clone(),
        member_epoch: 0,
        rebalance_timeout_ms: 30_000,
        subscribed_topic_regex: Some(regex.clone()),
        topic_partitions: Some(Vec::new()),
        ..Default::default()
    };
    let r = retry_transient(async || {
        let r = c.send(&join, 1).await.unwrap();
        let e = r.error_code;
        (r, e)
    })
    .await;
    seen.push(format!("join: {}", code(r.error_code)));
    let mut owned: Vec<ConsumerGroupHeartbeatRequestTopicPartitions> = r
        .assignment
        .map(|a| {
            a.topic_partitions
                .into_iter()
                .map(|tp| ConsumerGroupHeartbeatRequestTopicPartitions {
                    topic_id: tp.topic_id,
                    partitions: tp.partitions,
                    ..Default::default()
                })
                .collect()
        })
        .unwrap_or_default();
    let epoch = heartbeat_until(&c, &group, &member, r.member_epoch, &mut owned, 2).await;
    seen.push(format!(
        "assigned: {:?}",
        topic_names(&c, &prefix, &owned).await
    ));
    create_topic(&c, &format!("{prefix}-c"), 1, &[]).await;
    heartbeat_until(&c, &group, &member, epoch, &mut owned, 3).await;
    seen.push(format!(
        "after a matching topic was created: {:?}",
        topic_names(&c, &prefix, &owned).await
    ));
    seen.push(offset_delete(&c, &group, &format!("{prefix}-c")).await);
    seen.push(offset_delete(&c, &group, &format!("{prefix}-a-x")).await);
    let bad = ConsumerGroupHeartbeatRequest {
        member_id: unique_name("member"),
        subscribed_topic_regex: Some(format!("{prefix}-(")),
        ..join.clone()
    };
    let r = c.send(&bad, 1).await.unwrap();
    seen.push(format!("join with a broken regex: {}", code(r.error_code)));
    seen
}

/// KIP-848 regex subscriptions agree.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regex_subscriptions_agree() {
    let m = mock().await;
    let r = real().await;
    compare(
        "regex subscription",
        regex_scenario(&r).await,
        regex_scenario(&m.bootstrap()).await,
    )
    .await;
}

/// The operations APIs are advertised with Kafka 4.4's version ranges.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_versions_agree() {
    let m = mock().await;
    let r = real().await;
    compare(
        "ApiVersions",
        api_versions(&r).await,
        api_versions(&m.bootstrap()).await,
    )
    .await;
}

/// Every API version range the mock advertises, for each release it
/// emulates.
async fn advertised(bootstrap: &str) -> Vec<(i16, i16, i16)> {
    let c = connect(bootstrap).await;
    let req = ApiVersionsRequest {
        client_software_name: "kafka-eos-tests".into(),
        client_software_version: "1".into(),
        ..Default::default()
    };
    let r = c.send(&req, 3).await.unwrap();
    r.api_keys
        .iter()
        .map(|k| (k.api_key, k.min_version, k.max_version))
        .collect()
}

/// The oldest version of `api` kafka-proto decodes.
fn decoded_from(api: ApiKey) -> i16 {
    use kafka_proto::Message;
    match api {
        ApiKey::Produce => ProduceRequest::VERSIONS.min,
        ApiKey::Fetch => FetchRequest::VERSIONS.min,
        ApiKey::ListOffsets => ListOffsetsRequest::VERSIONS.min,
        ApiKey::Metadata => MetadataRequest::VERSIONS.min,
        ApiKey::OffsetCommit => OffsetCommitRequest::VERSIONS.min,
        ApiKey::OffsetFetch => OffsetFetchRequest::VERSIONS.min,
        ApiKey::FindCoordinator => FindCoordinatorRequest::VERSIONS.min,
        ApiKey::JoinGroup => JoinGroupRequest::VERSIONS.min,
        ApiKey::Heartbeat => HeartbeatRequest::VERSIONS.min,
        ApiKey::LeaveGroup => LeaveGroupRequest::VERSIONS.min,
        ApiKey::SyncGroup => SyncGroupRequest::VERSIONS.min,
        ApiKey::DescribeGroups => DescribeGroupsRequest::VERSIONS.min,
        ApiKey::ListGroups => ListGroupsRequest::VERSIONS.min,
        ApiKey::ApiVersions => ApiVersionsRequest::VERSIONS.min,
        ApiKey::CreateTopics => CreateTopicsRequest::VERSIONS.min,
        ApiKey::DeleteTopics => DeleteTopicsRequest::VERSIONS.min,
        ApiKey::DeleteRecords => DeleteRecordsRequest::VERSIONS.min,
        ApiKey::InitProducerId => InitProducerIdRequest::VERSIONS.min,
        ApiKey::OffsetForLeaderEpoch => OffsetForLeaderEpochRequest::VERSIONS.min,
        ApiKey::AddPartitionsToTxn => AddPartitionsToTxnRequest::VERSIONS.min,
        ApiKey::AddOffsetsToTxn => AddOffsetsToTxnRequest::VERSIONS.min,
        ApiKey::EndTxn => EndTxnRequest::VERSIONS.min,
        ApiKey::TxnOffsetCommit => TxnOffsetCommitRequest::VERSIONS.min,
        ApiKey::DescribeAcls => DescribeAclsRequest::VERSIONS.min,
        ApiKey::CreateAcls => CreateAclsRequest::VERSIONS.min,
        ApiKey::DeleteAcls => DeleteAclsRequest::VERSIONS.min,
        ApiKey::DescribeConfigs => DescribeConfigsRequest::VERSIONS.min,
        ApiKey::CreatePartitions => CreatePartitionsRequest::VERSIONS.min,
        ApiKey::DeleteGroups => DeleteGroupsRequest::VERSIONS.min,
        ApiKey::IncrementalAlterConfigs => IncrementalAlterConfigsRequest::VERSIONS.min,
        ApiKey::OffsetDelete => OffsetDeleteRequest::VERSIONS.min,
        ApiKey::DescribeCluster => DescribeClusterRequest::VERSIONS.min,
        ApiKey::DescribeProducers => DescribeProducersRequest::VERSIONS.min,
        ApiKey::DescribeTransactions => DescribeTransactionsRequest::VERSIONS.min,
        ApiKey::ListTransactions => ListTransactionsRequest::VERSIONS.min,
        ApiKey::ConsumerGroupHeartbeat => ConsumerGroupHeartbeatRequest::VERSIONS.min,
        ApiKey::ConsumerGroupDescribe => ConsumerGroupDescribeRequest::VERSIONS.min,
        _ => 0,
    }
}

/// For each release the mock emulates, every API it serves is advertised
/// with the real broker's range, from the oldest version kafka-proto
/// decodes, but where the mock serves less (listed here with the reason).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_served_api_is_advertised_as_each_release_does() {
    for (release, variant) in [
        (KafkaRelease::V4_4, SharedKafka::Kafka44Tv2),
        (KafkaRelease::V3_9, SharedKafka::Kafka39),
    ] {
        let m = MockCluster::start(MockConfig {
            release,
            ..MockConfig::default()
        })
        .await
        .unwrap();
        let real = advertised(&variant.cluster().await.unwrap().bootstrap()).await;
        let mut differences = Vec::new();
        for (key, min, max) in advertised(&m.bootstrap()).await {
            let api = ApiKey::from(key);
            let Some((_, rmin, rmax)) = real.iter().find(|(k, _, _)| *k == key) else {
                differences.push(format!("{api:?}: not served by Kafka {release:?}"));
                continue;
            };
            // Older versions than kafka-proto decodes are not served.
            let decoded_from = decoded_from(api);
            // ListTransactions v2's transactional id regex is not served.
            let fewer = api == ApiKey::ListTransactions;
            let min_ok = min == (*rmin).max(decoded_from);
            let max_ok = max == *rmax || (fewer && max < *rmax);
            if !min_ok || !max_ok {
                differences.push(format!(
                    "{api:?}: mock {min}..={max}, Kafka {rmin}..={rmax}"
                ));
            }
        }
        assert!(
            differences.is_empty(),
            "Kafka {release:?}:\n{}",
            differences.join("\n")
        );
    }
}

/// DeleteRecords and the log start it moves agree.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_records_agree() {
    let m = mock().await;
    let r = real().await;
    compare(
        "DeleteRecords",
        delete_records_scenario(&r).await,
        delete_records_scenario(&m.bootstrap()).await,
    )
    .await;
}

/// ListOffsets by max timestamp and under read_committed agrees.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_offsets_agree() {
    let m = mock().await;
    let r = real().await;
    compare(
        "ListOffsets",
        list_offsets_scenario(&r).await,
        list_offsets_scenario(&m.bootstrap()).await,
    )
    .await;
}

/// OffsetForLeaderEpoch agrees.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leader_epochs_agree() {
    let m = mock().await;
    let r = real().await;
    compare(
        "OffsetForLeaderEpoch",
        leader_epochs_scenario(&r).await,
        leader_epochs_scenario(&m.bootstrap()).await,
    )
    .await;
}

/// OffsetDelete and an admin's OffsetCommit agree.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offset_delete_agrees() {
    let m = mock().await;
    let r = real().await;
    compare(
        "OffsetDelete",
        offset_delete_scenario(&r).await,
        offset_delete_scenario(&m.bootstrap()).await,
    )
    .await;
}

/// IncrementalAlterConfigs and DescribeConfigs agree.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configs_agree() {
    let m = mock().await;
    let r = real().await;
    compare(
        "IncrementalAlterConfigs",
        configs_scenario(&r).await,
        configs_scenario(&m.bootstrap()).await,
    )
    .await;
}

/// DescribeCluster agrees.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_cluster_agrees() {
    let m = mock().await;
    let r = real().await;
    compare(
        "DescribeCluster",
        describe_cluster_scenario(&r).await,
        describe_cluster_scenario(&m.bootstrap()).await,
    )
    .await;
}

/// The ACL APIs without an authorizer agree.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acls_without_authorizer_agree() {
    let m = mock().await;
    let r = real().await;
    compare(
        "ACLs",
        acls_scenario(&r).await,
        acls_scenario(&m.bootstrap()).await,
    )
    .await;
}
