//! kafka-mock serving this project's admin client for the operations an
//! operator runs on a live cluster — without a broker: deleting records,
//! resetting and deleting a group's offsets, changing topic configs,
//! describing the cluster, and ACLs on a mock run with an authorizer.
//! What the mock answers is checked against Kafka 4.4 by the differential
//! suite (tests/tests/mock_differential_admin.rs).

use kafka_admin::{
    self as admin, AclBinding, AclFilter, AclOperation, AclPermission, ConfigOp, ConfigResource,
    OffsetSpec, PatternType, ResourceType,
};
use kafka_client::{Cluster, ClusterConfig, TopicPartition};
use kafka_consumer::{AutoOffsetReset, Reader, ReaderConfig};
use kafka_mock::{MockCluster, MockConfig};
use kafka_producer::{Producer, ProducerRecord};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crate::common;

async fn cluster(mock: &MockCluster) -> Arc<Cluster> {
    Cluster::connect(ClusterConfig::new(&mock.bootstrap()))
        .await
        .unwrap()
}

async fn produce(mock: &MockCluster, topic: &str, n: usize) {
    let producer = Producer::connect(common::producer_config(mock, &[]))
        .await
        .unwrap();
    for i in 0..n {
        producer
            .send(ProducerRecord::new(topic).value(format!("v{i}")))
            .await
            .unwrap();
    }
    producer.flush().await;
}

/// Invariant: after DeleteRecords the records below the new log start are
/// gone for every reader: ListOffsets earliest answers the new start and a
/// reader from `earliest` gets exactly the records from it on.
#[tokio::test]
async fn deleted_records_are_gone_for_readers() {
    let mock = MockCluster::start(MockConfig::default()).await.unwrap();
    mock.create_topic("t", 1).unwrap();
    produce(&mock, "t", 5).await;
    let c = cluster(&mock).await;
    let tp = TopicPartition::new("t", 0);
    let low = admin::delete_records(&c, &[(tp.clone(), 3)]).await.unwrap();
    assert_eq!(low[&tp], 3);
    let earliest = admin::list_offsets(&c, std::slice::from_ref(&tp), OffsetSpec::Earliest, false)
        .await
        .unwrap();
    assert_eq!(earliest[&tp].offset, Some(3));
    let too_far = admin::delete_records(&c, &[(tp.clone(), 9)]).await;
    assert!(too_far.is_err(), "past the high watermark: {too_far:?}");

    let mut reader = Reader::new(
        c,
        ReaderConfig {
            auto_offset_reset: AutoOffsetReset::Earliest,
            ..ReaderConfig::default()
        },
    );
    reader.assign("t", &[0]);
    let mut offsets = Vec::new();
    while offsets.len() < 2 {
        for r in reader.poll(Duration::from_secs(5)).await.unwrap() {
            offsets.push(r.offset);
        }
    }
    assert_eq!(offsets, [3, 4]);
}

/// Invariant: an operator's offset reset of an empty group is what the
/// group reads from next; deleting the offsets leaves none committed.
#[tokio::test]
async fn an_empty_groups_offsets_are_reset_and_deleted() {
    let mock = MockCluster::start(MockConfig::default()).await.unwrap();
    mock.create_topic("t", 2).unwrap();
    let c = cluster(&mock).await;
    let p0 = TopicPartition::new("t", 0);
    let p1 = TopicPartition::new("t", 1);
    let offsets: BTreeMap<TopicPartition, i64> = [(p0.clone(), 0), (p1.clone(), 0)].into();
    admin::alter_group_offsets(&c, "billing", &offsets)
        .await
        .unwrap();
    let deleted = admin::delete_group_offsets(&c, "billing", std::slice::from_ref(&p1))
        .await
        .unwrap();
    assert_eq!(deleted[&p1], Ok(()));
    let committed = admin::committed_offsets(&c, "billing").await.unwrap();
    let partitions: Vec<&TopicPartition> = committed.keys().collect();
    assert_eq!(partitions, [&p0], "only partition 0 keeps an offset");
}

/// Invariant: a topic config changed by IncrementalAlterConfigs is what
/// DescribeConfigs shows (an override), a refused change changes nothing,
/// and DELETE restores the default.
#[tokio::test]
async fn topic_configs_change_and_show() {
    let mock = MockCluster::start(MockConfig::default()).await.unwrap();
    mock.create_topic("t", 1).unwrap();
    let c = cluster(&mock).await;
    let topic = ConfigResource::Topic("t".into());
    admin::alter_configs(
        &c,
        &topic,
        &[("retention.ms", ConfigOp::Set("3600000".into()))],
        false,
    )
    .await
    .unwrap();
    let bad = admin::alter_configs(
        &c,
        &topic,
        &[("retention.ms", ConfigOp::Set("soon".into()))],
        false,
    )
    .await;
    assert!(bad.is_err(), "{bad:?}");
    let overrides = admin::topic_config_overrides(&c, "t").await.unwrap();
    assert_eq!(overrides.get("retention.ms"), Some(&Some("3600000".into())));
    admin::alter_configs(&c, &topic, &[("retention.ms", ConfigOp::Delete)], false)
        .await
        .unwrap();
    let shown = admin::topic_config(&c, "t", &["retention.ms"])
        .await
        .unwrap();
    assert_eq!(shown["retention.ms"].as_deref(), Some("604800000"));
}

/// Invariant: DescribeCluster lists every live broker and names one of
/// them as the controller.
#[tokio::test]
async fn the_cluster_is_described() {
    let mock = common::cluster(3).await;
    let d = admin::describe_cluster(&*cluster(&mock).await)
        .await
        .unwrap();
    let ids: Vec<i32> = d.brokers.iter().map(|b| b.id).collect();
    assert_eq!(ids, [1, 2, 3]);
    assert!(d.controller.is_some_and(|c| ids.contains(&c)));
}

fn read_acl(name: &str, pattern: PatternType, principal: &str) -> AclBinding {
    AclBinding {
        resource_type: ResourceType::Topic,
        resource_name: name.into(),
        pattern_type: pattern,
        principal: principal.into(),
        host: "*".into(),
        operation: AclOperation::Read,
        permission: AclPermission::Allow,
    }
}

/// Invariant: with an authorizer, ACLs are stored once, a MATCH filter
/// finds the literal, wildcard and prefixed bindings that apply to a name,
/// and a deleted binding is gone; without one (Kafka's default) the APIs
/// are refused with SECURITY_DISABLED.
#[tokio::test]
async fn acls_are_stored_filtered_and_deleted_with_an_authorizer() {
    let mock = MockCluster::start(MockConfig {
        acl_authorizer: true,
        ..MockConfig::default()
    })
    .await
    .unwrap();
    let c = cluster(&mock).await;
    let bindings = [
        read_acl("orders", PatternType::Literal, "User:alice"),
        read_acl("*", PatternType::Literal, "User:bob"),
        read_acl("ord", PatternType::Prefixed, "User:carol"),
        read_acl("audit", PatternType::Literal, "User:dave"),
    ];
    admin::create_acls(&c, &bindings).await.unwrap();
    admin::create_acls(&c, &bindings[..1]).await.unwrap();
    assert_eq!(
        admin::describe_acls(&c, &AclFilter::any())
            .await
            .unwrap()
            .len(),
        4
    );
    let for_orders = AclFilter {
        resource_name: Some("orders".into()),
        pattern_type: PatternType::Match,
        ..AclFilter::any()
    };
    let mut principals: Vec<String> = admin::describe_acls(&c, &for_orders)
        .await
        .unwrap()
        .into_iter()
        .map(|b| b.principal)
        .collect();
    principals.sort();
    assert_eq!(principals, ["User:alice", "User:bob", "User:carol"]);
    let dave = AclFilter {
        principal: Some("User:dave".into()),
        ..AclFilter::any()
    };
    assert_eq!(
        admin::delete_acls(&c, &[dave]).await.unwrap(),
        [bindings[3].clone()]
    );
    assert_eq!(
        admin::describe_acls(&c, &AclFilter::any())
            .await
            .unwrap()
            .len(),
        3
    );

    let plain = MockCluster::start(MockConfig::default()).await.unwrap();
    let refused = admin::describe_acls(&*cluster(&plain).await, &AclFilter::any()).await;
    assert!(
        format!("{refused:?}").contains("SecurityDisabled"),
        "{refused:?}"
    );
}
