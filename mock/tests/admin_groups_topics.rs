//! kafka-mock serving this project's admin client for topics and groups:
//! DeleteTopics, CreatePartitions, ListGroups, DescribeGroups and
//! DeleteGroups, with the behaviour a Kafka 4.4 (or 3.9) broker has. Each
//! test states the invariant it checks; where the admin client does not
//! expose a detail (a filter, a version's answer), the request is sent raw.

use bytes::{Bytes, BytesMut};
use kafka_admin::{self as admin, CreateTopicsOptions, GroupState};
use kafka_client::{Cluster, ClusterConfig, CoordinatorType, find_coordinator};
use kafka_consumer::{GroupConsumer, GroupConsumerConfig};
use kafka_mock::{KafkaRelease, MockCluster, MockConfig};
use kafka_producer::{Producer, ProducerConfig, ProducerRecord, TopicPartition};
use kafka_producer::{RecordMetadata, TransactionalProducer};
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;
use kafka_proto::record::{Compression, Record, RecordBatchBuilder};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::common;

const CLIENT_ID: &str = "admin-test";

/// A cluster without automatic topic creation (with it on, a Metadata
/// request of a producer would create a deleted topic again, as Kafka's
/// `auto.create.topics.enable` does).
async fn mock(brokers: usize, release: KafkaRelease) -> MockCluster {
    MockCluster::start(MockConfig {
        brokers,
        release,
        auto_create_topics: false,
        ..MockConfig::default()
    })
    .await
    .unwrap()
}

async fn connect(mock: &MockCluster) -> Arc<Cluster> {
    let mut config = ClusterConfig::new(&mock.bootstrap());
    config.connection.client_id = Some(CLIENT_ID.into());
    Cluster::connect(config).await.unwrap()
}

fn one_record_batch(value: &'static str) -> Bytes {
    let mut b = RecordBatchBuilder::new(Compression::None);
    b.push(Record::new(
        0,
        None,
        Some(Bytes::from_static(value.as_bytes())),
    ));
    let mut out = BytesMut::new();
    b.encode(&mut out).unwrap();
    out.freeze()
}

/// A Produce of one record to `partition` at broker `node`: by name at
/// `version` <= 12, by `topic_id` from 13; the partition's error code.
async fn produce_raw(
    cluster: &Cluster,
    node: i32,
    version: i16,
    topic: &str,
    topic_id: [u8; 16],
    partition: i32,
) -> ErrorCode {
    let conn = cluster.connection(node).await.unwrap();
    let by_id = version >= 13;
    let req = ProduceRequest {
        acks: -1,
        timeout_ms: 5_000,
        topic_data: vec![ProduceRequestTopicProduceData {
            name: if by_id { String::new() } else { topic.into() },
            topic_id: if by_id { topic_id } else { [0; 16] },
            partition_data: vec![ProduceRequestPartitionProduceData {
                index: partition,
                records: Some(one_record_batch("v")),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let resp = conn.send(&req, version).await.unwrap();
    ErrorCode::from(resp.responses[0].partition_responses[0].error_code)
}

/// A Fetch v12 (by name) of `topic`-`partition` at broker `node`.
async fn fetch_raw(cluster: &Cluster, node: i32, topic: &str, partition: i32) -> ErrorCode {
    let conn = cluster.connection(node).await.unwrap();
    let req = FetchRequest {
        max_wait_ms: 0,
        min_bytes: 1,
        topics: vec![FetchRequestTopic {
            topic: topic.into(),
            partitions: vec![FetchRequestPartition {
                partition,
                fetch_offset: 0,
                partition_max_bytes: 1 << 20,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let resp = conn.send(&req, 12).await.unwrap();
    ErrorCode::from(resp.responses[0].partitions[0].error_code)
}

/// Metadata for `topic` without creating it: its error code and id.
async fn metadata_raw(cluster: &Cluster, topic: &str) -> (ErrorCode, [u8; 16], usize) {
    let conn = cluster.any_connection().await.unwrap();
    let req = MetadataRequest {
        topics: Some(vec![MetadataRequestTopic {
            name: Some(topic.into()),
            ..Default::default()
        }]),
        allow_auto_topic_creation: false,
        ..Default::default()
    };
    let version = conn.versions().version_for::<MetadataRequest>().unwrap();
    let resp = conn.send(&req, version).await.unwrap();
    let t = &resp.topics[0];
    (
        ErrorCode::from(t.error_code),
        t.topic_id,
        t.partitions.len(),
    )
}

/// DeleteTopics v6 of topics by name, or by id where the name is `None`:
/// each answer's (name, error code), and the response.
async fn delete_raw(
    cluster: &Cluster,
    topics: &[(Option<&str>, [u8; 16])],
) -> (Vec<(Option<String>, ErrorCode)>, DeleteTopicsResponse) {
    let conn = cluster.any_connection().await.unwrap();
    let req = DeleteTopicsRequest {
        topics: topics
            .iter()
            .map(|(name, topic_id)| DeleteTopicsRequestDeleteTopicState {
                name: name.map(String::from),
                topic_id: *topic_id,
                ..Default::default()
            })
            .collect(),
        timeout_ms: 5_000,
        ..Default::default()
    };
    let resp = conn.send(&req, 6).await.unwrap();
    let answers = resp
        .responses
        .iter()
        .map(|r| (r.name.clone(), ErrorCode::from(r.error_code)))
        .collect();
    (answers, resp)
}

/// A standalone consumer's commit (no member, generation -1), which makes
/// a group that has offsets only.
async fn commit_standalone(cluster: &Cluster, group: &str, tps: &[(&str, i32, i64)]) {
    let c = find_coordinator(cluster, CoordinatorType::Group, group)
        .await
        .unwrap();
    let version = c
        .connection
        .versions()
        .version_for::<OffsetCommitRequest>()
        .unwrap()
        .min(9);
    let req = OffsetCommitRequest {
        group_id: group.into(),
        generation_id_or_member_epoch: -1,
        topics: tps
            .iter()
            .map(|(topic, partition, offset)| OffsetCommitRequestTopic {
                name: topic.to_string(),
                partitions: vec![OffsetCommitRequestPartition {
                    partition_index: *partition,
                    committed_offset: *offset,
                    ..Default::default()
                }],
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    let resp = c.connection.send(&req, version).await.unwrap();
    for t in resp.topics {
        for p in t.partitions {
            assert_eq!(ErrorCode::from(p.error_code), ErrorCode::None);
        }
    }
}

/// DescribeGroups of `group` at broker `node` at `version`.
async fn describe_raw(
    cluster: &Cluster,
    node: i32,
    group: &str,
    version: i16,
) -> DescribeGroupsResponseDescribedGroup {
    let conn = cluster.connection(node).await.unwrap();
    let req = DescribeGroupsRequest {
        groups: vec![group.into()],
        ..Default::default()
    };
    let mut resp = conn.send(&req, version).await.unwrap();
    resp.groups.remove(0)
}

/// ListGroups with filters on every broker, as (group id, state, type).
async fn list_raw(
    cluster: &Cluster,
    states: &[&str],
    types: &[&str],
) -> Vec<(String, String, String)> {
    cluster.refresh().await.unwrap();
    let nodes: Vec<i32> = cluster.metadata().brokers().keys().copied().collect();
    let mut out = Vec::new();
    for node in nodes {
        let conn = cluster.connection(node).await.unwrap();
        let req = ListGroupsRequest {
            states_filter: states.iter().map(|s| s.to_string()).collect(),
            types_filter: types.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        };
        let resp = conn.send(&req, 5).await.unwrap();
        assert_eq!(ErrorCode::from(resp.error_code), ErrorCode::None);
        out.extend(
            resp.groups
                .into_iter()
                .map(|g| (g.group_id, g.group_state, g.group_type)),
        );
    }
    out.sort();
    out
}

/// A group consumer that polls in the background until stopped (then it
/// closes: it leaves the group).
struct Member {
    stop: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl Member {
    async fn join(
        bootstrap: &str,
        group: &str,
        topic: &str,
        client_id: &str,
        classic: bool,
    ) -> Self {
        let mut props = vec![
            ("bootstrap.servers", bootstrap),
            ("group.id", group),
            ("client.id", client_id),
            ("auto.offset.reset", "earliest"),
        ];
        if classic {
            props.extend([
                ("group.protocol", "classic"),
                ("partition.assignment.strategy", "range"),
                ("session.timeout.ms", "6000"),
                ("heartbeat.interval.ms", "200"),
            ]);
        } else {
            props.push(("group.protocol", "consumer"));
        }
        let config = GroupConsumerConfig::from_properties(props).unwrap();
        let mut consumer = GroupConsumer::subscribe(config, [topic]).await.unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let task = tokio::spawn(async move {
            while !stopped.load(Ordering::SeqCst) {
                let _ = consumer.poll(Duration::from_millis(100)).await;
            }
            consumer.close(Duration::from_secs(5)).await;
        });
        Self { stop, task }
    }

    async fn leave(self) {
        self.stop.store(true, Ordering::SeqCst);
        self.task.await.unwrap();
    }
}

/// Describes `group` until `done` holds (30 s at most).
async fn describe_until(
    cluster: &Cluster,
    group: &str,
    what: &str,
    done: impl Fn(&admin::GroupDescription) -> bool,
) -> admin::GroupDescription {
    for _ in 0..300 {
        let d = admin::describe_group(cluster, group).await.unwrap();
        if done(&d) {
            return d;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{what}: not within 30 s");
}

fn owned(d: &admin::GroupDescription) -> BTreeSet<i32> {
    d.members
        .iter()
        .flat_map(|m| m.assignment.iter().map(|tp| tp.partition))
        .collect()
}

/// Invariant: once DeleteTopics answered, the topic is gone everywhere:
/// Metadata answers UNKNOWN_TOPIC_OR_PARTITION, a Produce by name
/// UNKNOWN_TOPIC_OR_PARTITION and by its old id UNKNOWN_TOPIC_ID, a Fetch
/// UNKNOWN_TOPIC_OR_PARTITION; the other topics are untouched.
#[tokio::test]
async fn a_deleted_topic_is_unknown_to_metadata_produce_and_fetch() {
    let mock = mock(2, KafkaRelease::V4_4).await;
    mock.create_topic("doomed", 2).unwrap();
    mock.create_topic("kept", 1).unwrap();
    let cluster = connect(&mock).await;
    let (code, doomed_id, _) = metadata_raw(&cluster, "doomed").await;
    assert_eq!(code, ErrorCode::None);
    let leader = mock.leader("doomed", 0).unwrap();
    assert_eq!(
        produce_raw(&cluster, leader, 12, "doomed", doomed_id, 0).await,
        ErrorCode::None
    );

    let results = admin::delete_topics(&cluster, &["doomed"], Duration::from_secs(10))
        .await
        .unwrap();
    results[0].outcome.clone().unwrap();

    assert_eq!(
        metadata_raw(&cluster, "doomed").await.0,
        ErrorCode::UnknownTopicOrPartition
    );
    assert_eq!(mock.leader("doomed", 0), None);
    for node in [1, 2] {
        assert_eq!(
            produce_raw(&cluster, node, 12, "doomed", doomed_id, 0).await,
            ErrorCode::UnknownTopicOrPartition
        );
        assert_eq!(
            produce_raw(&cluster, node, 13, "doomed", doomed_id, 0).await,
            ErrorCode::UnknownTopicId
        );
        assert_eq!(
            fetch_raw(&cluster, node, "doomed", 0).await,
            ErrorCode::UnknownTopicOrPartition
        );
    }
    let (code, _, partitions) = metadata_raw(&cluster, "kept").await;
    assert_eq!((code, partitions), (ErrorCode::None, 1));
    let kept_leader = mock.leader("kept", 0).unwrap();
    assert_eq!(
        produce_raw(&cluster, kept_leader, 12, "kept", [0; 16], 0).await,
        ErrorCode::None
    );
}

/// Invariant: each topic of a DeleteTopics gets its own answer: an unknown
/// name UNKNOWN_TOPIC_OR_PARTITION (the others are still deleted), an
/// unknown id UNKNOWN_TOPIC_ID with a null name (v6), a name given twice,
/// or a topic given by name and by id, INVALID_REQUEST (and is not
/// deleted).
#[tokio::test]
async fn deleting_unknown_or_duplicate_topics_is_refused_per_topic() {
    let mock = mock(1, KafkaRelease::V4_4).await;
    mock.create_topic("a", 1).unwrap();
    mock.create_topic("twice", 1).unwrap();
    let cluster = connect(&mock).await;
    let results = admin::delete_topics(&cluster, &["a", "missing"], Duration::from_secs(10))
        .await
        .unwrap();
    assert!(results[0].outcome.is_ok());
    let missing = results[1].outcome.clone().unwrap_err();
    assert_eq!(missing.error, ErrorCode::UnknownTopicOrPartition);
    assert!(missing.is_unknown_topic());
    // Deleting it again: it is unknown now.
    let again = admin::delete_topics(&cluster, &["a"], Duration::from_secs(10))
        .await
        .unwrap();
    assert!(again[0].outcome.as_ref().unwrap_err().is_unknown_topic());

    let (answers, resp) = delete_raw(
        &cluster,
        &[
            (None, [7; 16]),
            (Some("twice"), [0; 16]),
            (Some("twice"), [0; 16]),
        ],
    )
    .await;
    assert_eq!(
        answers,
        [
            (None, ErrorCode::UnknownTopicId),
            (Some("twice".into()), ErrorCode::InvalidRequest),
        ]
    );
    assert_eq!(resp.responses[0].topic_id, [7; 16]);
    assert_eq!(metadata_raw(&cluster, "twice").await.0, ErrorCode::None);

    // One topic by its id and by its name: the name is refused, the id
    // not answered (as `ControllerApis` does), and the topic stays.
    let (_, twice_id, _) = metadata_raw(&cluster, "twice").await;
    let (answers, _) = delete_raw(&cluster, &[(None, twice_id), (Some("twice"), [0; 16])]).await;
    assert_eq!(answers, [(Some("twice".into()), ErrorCode::InvalidRequest)]);
    assert_eq!(metadata_raw(&cluster, "twice").await.0, ErrorCode::None);
}

/// Invariant: a deleted topic takes the groups' committed offsets for its
/// partitions (Kafka 4.4's `OffsetMetadataManager.onTopicsDeleted`, 3.9's
/// `GroupCoordinator.handleDeletedPartitions`) and keeps the rest; the
/// group itself stays, Empty.
#[tokio::test]
async fn a_deleted_topic_takes_its_committed_offsets_and_the_group_stays() {
    let mock = mock(2, KafkaRelease::V4_4).await;
    mock.create_topic("t", 1).unwrap();
    mock.create_topic("u", 1).unwrap();
    let cluster = connect(&mock).await;
    commit_standalone(&cluster, "readers", &[("t", 0, 5), ("u", 0, 7)]).await;
    admin::delete_topics(&cluster, &["t"], Duration::from_secs(10))
        .await
        .unwrap()[0]
        .outcome
        .clone()
        .unwrap();
    let offsets = admin::committed_offsets(&cluster, "readers").await.unwrap();
    let offsets: Vec<(String, i32, i64)> = offsets
        .into_iter()
        .map(|(tp, o)| (tp.topic.to_string(), tp.partition, o))
        .collect();
    assert_eq!(offsets, [("u".to_string(), 0, 7)]);
    let listed = list_raw(&cluster, &[], &[]).await;
    assert_eq!(
        listed,
        [("readers".into(), "Empty".into(), "classic".into())]
    );
}

/// Invariant: a transaction that wrote to a topic deleted before it
/// commits still commits: its markers skip the deleted partition (as
/// Kafka's `TransactionMarkerChannelManager` skips a partition without a
/// leader) and make its records in the other topic visible.
#[tokio::test]
async fn a_transaction_spanning_a_deleted_topic_commits_the_rest() {
    let mock = mock(2, KafkaRelease::V4_4).await;
    mock.create_topic("gone", 1).unwrap();
    mock.create_topic("kept", 1).unwrap();
    let config = common::producer_config(&mock, &[("transactional.id", "spanning")]);
    let producer = TransactionalProducer::connect(config).await.unwrap();
    producer.init_transactions().await.unwrap();
    producer.begin_transaction().unwrap();
    for topic in ["gone", "kept"] {
        let sent: RecordMetadata = producer
            .send(ProducerRecord::new(topic).value("in-txn"))
            .await
            .unwrap();
        assert_eq!(sent.offset, Some(0));
    }
    assert_eq!(
        mock.offsets("kept", 0),
        Some((1, 0)),
        "held by the transaction"
    );
    let cluster = connect(&mock).await;
    admin::delete_topics(&cluster, &["gone"], Duration::from_secs(10))
        .await
        .unwrap()[0]
        .outcome
        .clone()
        .unwrap();
    producer.commit_transaction().await.unwrap();
    assert_eq!(
        mock.offsets("kept", 0),
        Some((2, 2)),
        "the commit marker reached the kept partition"
    );
    assert_eq!(
        mock.transaction_state("spanning"),
        Some(kafka_mock::TxnState::CompleteCommit)
    );
    producer.close(Duration::from_secs(5)).await.unwrap();
}

/// Invariant: after CreatePartitions the metadata shows the new count,
/// every new partition has a live leader, and a record produced to a new
/// partition is stored there at offset 0.
#[tokio::test]
async fn added_partitions_appear_in_metadata_and_take_records() {
    let mock = mock(3, KafkaRelease::V4_4).await;
    mock.create_topic("grow", 2).unwrap();
    let cluster = connect(&mock).await;
    let opts = CreateTopicsOptions {
        wait_for_leaders: true,
        timeout: Duration::from_secs(10),
        ..Default::default()
    };
    let results = admin::create_partitions(&cluster, &[("grow", 5)], &opts)
        .await
        .unwrap();
    results[0].outcome.clone().unwrap();
    let (code, _, partitions) = metadata_raw(&cluster, "grow").await;
    assert_eq!((code, partitions), (ErrorCode::None, 5));
    let leaders: BTreeSet<i32> = (0..5).map(|p| mock.leader("grow", p).unwrap()).collect();
    assert_eq!(
        leaders,
        BTreeSet::from([1, 2, 3]),
        "spread over the brokers"
    );

    let producer = Producer::connect(ProducerConfig::new(&mock.bootstrap()))
        .await
        .unwrap();
    let sent = producer
        .send(ProducerRecord::new("grow").partition(4).value("new"))
        .await
        .unwrap();
    assert_eq!((sent.partition, sent.offset), (4, Some(0)));
    producer.close(Duration::from_secs(5)).await.unwrap();
    assert_eq!(mock.offsets("grow", 4), Some((1, 1)));
}

/// Invariant: CreatePartitions refuses a count that is not an increase
/// (INVALID_PARTITIONS) and an unknown topic (UNKNOWN_TOPIC_OR_PARTITION),
/// and a validate-only request that would succeed changes nothing.
#[tokio::test]
async fn partition_refusals_and_validate_only_change_nothing() {
    let mock = mock(1, KafkaRelease::V3_9).await;
    mock.create_topic("t", 3).unwrap();
    let cluster = connect(&mock).await;
    let opts = CreateTopicsOptions {
        timeout: Duration::from_secs(10),
        ..Default::default()
    };
    let results = admin::create_partitions(&cluster, &[("t", 3), ("missing", 4)], &opts)
        .await
        .unwrap();
    let same = results[0].outcome.clone().unwrap_err();
    assert_eq!(same.error, ErrorCode::InvalidPartitions);
    assert_eq!(
        same.message.as_deref(),
        Some("Topic already has 3 partition(s).")
    );
    assert!(results[1].outcome.as_ref().unwrap_err().is_unknown_topic());
    let fewer = admin::create_partitions(&cluster, &[("t", 2)], &opts)
        .await
        .unwrap();
    assert_eq!(
        fewer[0].outcome.as_ref().unwrap_err().error,
        ErrorCode::InvalidPartitions
    );
    let validate = CreateTopicsOptions {
        validate_only: true,
        ..opts
    };
    let checked = admin::create_partitions(&cluster, &[("t", 9)], &validate)
        .await
        .unwrap();
    checked[0].outcome.clone().unwrap();
    assert_eq!(metadata_raw(&cluster, "t").await.2, 3);
    assert_eq!(mock.leader("t", 3), None);
}

/// Invariant: ListGroups names every group once, at its coordinator: a
/// classic group with its members' protocol type, a KIP-848 group as type
/// `consumer`, and a group with offsets only as an Empty classic group
/// with protocol type ""; the state and type filters match in any case.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_groups_names_classic_consumer_and_offsets_only_groups() {
    let mock = MockCluster::start(MockConfig {
        brokers: 3,
        auto_create_topics: false,
        consumer_group_heartbeat_interval: Duration::from_millis(200),
        ..MockConfig::default()
    })
    .await
    .unwrap();
    mock.create_topic("events", 2).unwrap();
    let bootstrap = mock.bootstrap();
    let cluster = connect(&mock).await;
    commit_standalone(&cluster, "offsets-only", &[("events", 0, 3)]).await;
    let classic = Member::join(&bootstrap, "classic-app", "events", "c1", true).await;
    let modern = Member::join(&bootstrap, "kip848-app", "events", "k1", false).await;
    describe_until(
        &cluster,
        "classic-app",
        "the classic group is Stable",
        |d| d.state == GroupState::Stable && owned(d).len() == 2,
    )
    .await;
    describe_until(&cluster, "kip848-app", "the KIP-848 group is Stable", |d| {
        d.state == GroupState::Stable && owned(d).len() == 2
    })
    .await;

    let groups = admin::list_groups(&cluster).await.unwrap();
    let seen: Vec<(&str, &str, Option<&str>, &str)> = groups
        .iter()
        .map(|g| {
            (
                g.group_id.as_str(),
                g.protocol_type.as_str(),
                g.state.as_ref().map(|s| s.as_str()),
                g.group_type.as_str(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("classic-app", "consumer", Some("Stable"), "classic"),
            ("kip848-app", "consumer", Some("Stable"), "consumer"),
            ("offsets-only", "", Some("Empty"), "classic"),
        ]
    );
    for g in &groups {
        let coordinator = find_coordinator(&cluster, CoordinatorType::Group, &g.group_id)
            .await
            .unwrap();
        assert_eq!(g.coordinator, coordinator.node_id, "{}", g.group_id);
    }
    let ids = |v: Vec<(String, String, String)>| v.into_iter().map(|g| g.0).collect::<Vec<_>>();
    assert_eq!(
        ids(list_raw(&cluster, &["EMPTY"], &[]).await),
        ["offsets-only"]
    );
    assert_eq!(
        ids(list_raw(&cluster, &[], &["Consumer"]).await),
        ["kip848-app"]
    );
    assert_eq!(
        ids(list_raw(&cluster, &["stable"], &["classic"]).await),
        ["classic-app"]
    );
    assert!(list_raw(&cluster, &[], &["share"]).await.is_empty());
    classic.leave().await;
    modern.leave().await;
    assert_eq!(
        ids(list_raw(&cluster, &["Empty"], &[]).await),
        ["classic-app", "kip848-app", "offsets-only"],
        "groups whose members left stay, Empty"
    );
}

/// Invariant: DescribeGroups of a classic group whose two members joined
/// through the consumer crate shows both, with their client ids, host,
/// the chosen protocol and assignments that split the topic between them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_group_shows_both_classic_members_and_their_assignments() {
    let mock = mock(2, KafkaRelease::V3_9).await;
    mock.create_topic("orders", 4).unwrap();
    let bootstrap = mock.bootstrap();
    let cluster = connect(&mock).await;
    let a = Member::join(&bootstrap, "billing", "orders", "member-a", true).await;
    let b = Member::join(&bootstrap, "billing", "orders", "member-b", true).await;
    let d = describe_until(&cluster, "billing", "both members own partitions", |d| {
        d.state == GroupState::Stable
            && d.members.len() == 2
            && d.members.iter().all(|m| !m.assignment.is_empty())
            && owned(d).len() == 4
    })
    .await;
    assert_eq!(
        (d.group_type.as_str(), d.assignor.as_str()),
        ("classic", "range")
    );
    let mut clients: Vec<&str> = d.members.iter().map(|m| m.client_id.as_str()).collect();
    clients.sort_unstable();
    assert_eq!(clients, ["member-a", "member-b"]);
    assert!(d.members.iter().all(|m| m.client_host == "/127.0.0.1"));
    let assigned: usize = d.members.iter().map(|m| m.assignment.len()).sum();
    assert_eq!(assigned, 4, "each partition owned once");
    assert_eq!(owned(&d), BTreeSet::from([0, 1, 2, 3]));
    a.leave().await;
    b.leave().await;
    let d = describe_until(&cluster, "billing", "the group is empty", |d| {
        d.state == GroupState::Empty
    })
    .await;
    assert!(d.members.is_empty());
}

/// Invariant: members are listed in every state of a classic group, but
/// the protocol and the members' metadata only when it is Stable; outside
/// Stable, Kafka 4.4 shows each member's assignment as last synced
/// (`GroupMetadataManager.describeGroups`, `ClassicGroupMember
/// .describeNoMetadata`); a group is described by its coordinator only
/// (NOT_COORDINATOR elsewhere).
#[tokio::test]
async fn describe_group_shows_metadata_only_when_stable() {
    let mock = mock(2, KafkaRelease::V4_4).await;
    let cluster = connect(&mock).await;
    let group = "raw-group";
    let c = find_coordinator(&cluster, CoordinatorType::Group, group)
        .await
        .unwrap();
    let join = |member_id: String| JoinGroupRequest {
        group_id: group.into(),
        session_timeout_ms: 30_000,
        rebalance_timeout_ms: 30_000,
        member_id,
        protocol_type: "consumer".into(),
        protocols: vec![JoinGroupRequestProtocol {
            name: "range".into(),
            metadata: Bytes::from_static(b"meta-range"),
            ..Default::default()
        }],
        ..Default::default()
    };
    let first = c.connection.send(&join(String::new()), 9).await.unwrap();
    assert_eq!(
        ErrorCode::from(first.error_code),
        ErrorCode::MemberIdRequired
    );
    let joined = c.connection.send(&join(first.member_id), 9).await.unwrap();
    assert_eq!(ErrorCode::from(joined.error_code), ErrorCode::None);

    let d = describe_raw(&cluster, c.node_id, group, 6).await;
    assert_eq!(
        (
            d.group_state.as_str(),
            d.protocol_type.as_str(),
            d.protocol_data.as_str()
        ),
        ("CompletingRebalance", "consumer", "")
    );
    assert_eq!(d.members.len(), 1);
    let m = &d.members[0];
    assert_eq!(
        (
            m.member_id.as_str(),
            m.client_id.as_str(),
            m.client_host.as_str()
        ),
        (joined.member_id.as_str(), CLIENT_ID, "/127.0.0.1")
    );
    assert!(m.member_metadata.is_empty() && m.member_assignment.is_empty());

    let sync = SyncGroupRequest {
        group_id: group.into(),
        generation_id: joined.generation_id,
        member_id: joined.member_id.clone(),
        protocol_type: Some("consumer".into()),
        protocol_name: Some("range".into()),
        assignments: vec![SyncGroupRequestAssignment {
            member_id: joined.member_id.clone(),
            assignment: Bytes::from_static(b"all-of-it"),
            ..Default::default()
        }],
        ..Default::default()
    };
    let synced = c.connection.send(&sync, 5).await.unwrap();
    assert_eq!(ErrorCode::from(synced.error_code), ErrorCode::None);
    let d = describe_raw(&cluster, c.node_id, group, 6).await;
    assert_eq!(
        (d.group_state.as_str(), d.protocol_data.as_str()),
        ("Stable", "range")
    );
    let m = &d.members[0];
    assert_eq!(&m.member_metadata[..], b"meta-range");
    assert_eq!(&m.member_assignment[..], b"all-of-it");

    // A second member joins (on connections of its own: its JoinGroup waits
    // for the first member to rejoin): a rebalance starts.
    let other = connect(&mock).await;
    let other_conn = other.connection(c.node_id).await.unwrap();
    let second = other_conn.send(&join(String::new()), 9).await.unwrap();
    let second_join = join(second.member_id);
    let parked = tokio::spawn(async move { other_conn.send(&second_join, 9).await });
    let mut d = describe_raw(&cluster, c.node_id, group, 6).await;
    for _ in 0..100 {
        if d.members.len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        d = describe_raw(&cluster, c.node_id, group, 6).await;
    }
    assert_eq!(
        (
            d.group_state.as_str(),
            d.protocol_data.as_str(),
            d.members.len()
        ),
        ("PreparingRebalance", "", 2)
    );
    let first = d
        .members
        .iter()
        .find(|m| m.member_id == joined.member_id)
        .unwrap();
    assert!(first.member_metadata.is_empty());
    assert_eq!(
        &first.member_assignment[..],
        b"all-of-it",
        "the assignment as last synced"
    );
    let rejoined = c
        .connection
        .send(&join(joined.member_id.clone()), 9)
        .await
        .unwrap();
    let second = parked.await.unwrap().unwrap();
    assert_eq!(
        (rejoined.generation_id, second.generation_id),
        (joined.generation_id + 1, joined.generation_id + 1)
    );

    let elsewhere = if c.node_id == 1 { 2 } else { 1 };
    let d = describe_raw(&cluster, elsewhere, group, 6).await;
    assert_eq!(ErrorCode::from(d.error_code), ErrorCode::NotCoordinator);
}

/// Invariant: a group that does not exist is described as Dead: with
/// error NONE before DescribeGroups v6 (and on Kafka 3.9), with
/// GROUP_ID_NOT_FOUND and a message from v6 (KIP-1043); a KIP-848 group
/// is not a classic group; a group with offsets only is Empty with
/// protocol type "".
#[tokio::test]
async fn describing_unknown_consumer_and_offsets_only_groups() {
    let mock = mock(1, KafkaRelease::V4_4).await;
    mock.create_topic("t", 1).unwrap();
    let cluster = connect(&mock).await;
    let v6 = describe_raw(&cluster, 1, "nobody", 6).await;
    assert_eq!(
        (ErrorCode::from(v6.error_code), v6.group_state.as_str()),
        (ErrorCode::GroupIdNotFound, "Dead")
    );
    assert_eq!(v6.error_message.as_deref(), Some("Group nobody not found."));
    let v5 = describe_raw(&cluster, 1, "nobody", 5).await;
    assert_eq!(
        (ErrorCode::from(v5.error_code), v5.group_state.as_str()),
        (ErrorCode::None, "Dead")
    );
    let through_admin = admin::describe_group(&cluster, "nobody").await.unwrap();
    assert_eq!(through_admin.state, GroupState::Dead);

    commit_standalone(&cluster, "standalone", &[("t", 0, 1)]).await;
    let d = describe_raw(&cluster, 1, "standalone", 6).await;
    assert_eq!(
        (
            ErrorCode::from(d.error_code),
            d.group_state.as_str(),
            d.protocol_type.as_str(),
            d.members.len()
        ),
        (ErrorCode::None, "Empty", "", 0)
    );

    let member = Member::join(&mock.bootstrap(), "modern", "t", "k", false).await;
    describe_until(&cluster, "modern", "the KIP-848 member joined", |d| {
        d.group_type == "consumer" && d.members.len() == 1
    })
    .await;
    let d = describe_raw(&cluster, 1, "modern", 6).await;
    assert_eq!(ErrorCode::from(d.error_code), ErrorCode::GroupIdNotFound);
    assert_eq!(
        d.error_message.as_deref(),
        Some("Group modern is not a classic group.")
    );
    member.leave().await;

    let old = mock_39_dead().await;
    assert_eq!(old, (ErrorCode::None, "Dead".to_string()));
}

/// DescribeGroups of an unknown group on a Kafka 3.9 cluster (v5 at most).
async fn mock_39_dead() -> (ErrorCode, String) {
    let mock = mock(1, KafkaRelease::V3_9).await;
    let cluster = connect(&mock).await;
    let conn = cluster.connection(1).await.unwrap();
    let version = conn
        .versions()
        .version_for::<DescribeGroupsRequest>()
        .unwrap();
    assert_eq!(version, 5, "Kafka 3.9 serves DescribeGroups up to v5");
    let d = describe_raw(&cluster, 1, "nobody", version).await;
    (ErrorCode::from(d.error_code), d.group_state)
}

/// Invariant: DeleteGroups refuses a group with members (NON_EMPTY_GROUP)
/// and an unknown one (GROUP_ID_NOT_FOUND); once the members left, the
/// group goes with its offsets: no committed offsets, not listed, Dead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_groups_refuses_members_and_removes_an_empty_group_with_its_offsets() {
    let mock = mock(2, KafkaRelease::V4_4).await;
    mock.create_topic("t", 2).unwrap();
    let cluster = connect(&mock).await;
    let member = Member::join(&mock.bootstrap(), "doomed", "t", "m", true).await;
    describe_until(&cluster, "doomed", "the member owns the topic", |d| {
        d.state == GroupState::Stable && owned(d).len() == 2
    })
    .await;
    commit_standalone(&cluster, "other", &[("t", 1, 9)]).await;
    let outcome = admin::delete_groups(&cluster, &["doomed", "nobody"])
        .await
        .unwrap();
    assert_eq!(
        outcome,
        [
            ("doomed".to_string(), Err(ErrorCode::NonEmptyGroup)),
            ("nobody".to_string(), Err(ErrorCode::GroupIdNotFound)),
        ]
    );
    member.leave().await;
    // The member may have committed nothing; commit for the group as a
    // standalone consumer would, so that there are offsets to remove.
    commit_standalone(&cluster, "doomed", &[("t", 0, 4)]).await;
    let outcome = admin::delete_groups(&cluster, &["doomed"]).await.unwrap();
    assert_eq!(outcome, [("doomed".to_string(), Ok(()))]);
    assert!(
        admin::committed_offsets(&cluster, "doomed")
            .await
            .unwrap()
            .is_empty()
    );
    let listed: Vec<String> = admin::list_groups(&cluster)
        .await
        .unwrap()
        .into_iter()
        .map(|g| g.group_id)
        .collect();
    assert_eq!(listed, ["other"]);
    assert_eq!(
        admin::describe_group(&cluster, "doomed")
            .await
            .unwrap()
            .state,
        GroupState::Dead
    );
    assert_eq!(
        admin::committed_offsets(&cluster, "other")
            .await
            .unwrap()
            .into_iter()
            .collect::<Vec<_>>(),
        [(TopicPartition::new("t", 1), 9)]
    );
    let again = admin::delete_groups(&cluster, &["doomed"]).await.unwrap();
    assert_eq!(
        again,
        [("doomed".to_string(), Err(ErrorCode::GroupIdNotFound))]
    );
}
