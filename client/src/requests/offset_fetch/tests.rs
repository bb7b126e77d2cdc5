//! The OffsetFetch shapes: requests encoded at each version boundary
//! (against kafka-proto's fixtures), canned answers decoded.

use super::*;
use kafka_proto::Message;
use kafka_proto::messages::{OffsetFetchResponseGroup, OffsetFetchResponseTopics};

const T: &[TopicPartitions<'static>] = &[TopicPartitions {
    topic: "t",
    partitions: &[0],
}];
const ID: Uuid = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16];

fn encoded(
    version: i16,
    topics: Option<&[TopicPartitions<'_>]>,
    ids: &[Option<Uuid>],
    stable: bool,
) -> Vec<u8> {
    request(version, "g", topics, ids, stable)
        .unwrap()
        .encode_to_vec(version)
        .unwrap()
}

/// v1 (one group, top-level topics): the bytes of kafka-proto's v1 fixture.
#[test]
fn v1_request_names_group_and_partitions_at_the_top_level() {
    let bytes = encoded(1, Some(T), &[], true);
    assert_eq!(
        bytes,
        [0, 1, b'g', 0, 0, 0, 1, 0, 1, b't', 0, 0, 0, 1, 0, 0, 0, 0],
        "require_stable is dropped below v7"
    );
}

/// Every topic (null topics) has no v1 form: refused before sending, with
/// the version and UNSUPPORTED_VERSION.
#[test]
fn every_topic_needs_v2() {
    let e = request(1, "g", None, &[], false).unwrap_err();
    assert!(matches!(
        e,
        RequestError::Broker {
            api: ApiKey::OffsetFetch,
            version: 1,
            error: ErrorCode::UnsupportedVersion,
            ..
        }
    ));
    assert_eq!(
        encoded(2, None, &[], false),
        [0, 1, b'g', 0xff, 0xff, 0xff, 0xff]
    );
}

/// v7 (last single-group version) carries require_stable: kafka-proto's v7
/// fixture.
#[test]
fn v7_request_carries_require_stable() {
    assert_eq!(encoded(7, None, &[], true), [2, b'g', 0, 1, 0]);
}

/// v8 (first batched version): the group moves into `groups`; kafka-proto's
/// v8 fixture.
#[test]
fn v8_request_batches_the_group() {
    assert_eq!(encoded(8, None, &[], true), [2, 2, b'g', 0, 0, 1, 0]);
    let named = OffsetFetchRequest::decode(&encoded(9, Some(T), &[], false), 9).unwrap();
    let topic = &named.groups[0].topics.as_ref().unwrap()[0];
    assert_eq!(
        (topic.name.as_str(), topic.partition_indexes.as_slice()),
        ("t", &[0][..])
    );
}

/// v10 names the topic by id only.
#[test]
fn v10_request_names_topics_by_id() {
    let req = OffsetFetchRequest::decode(&encoded(10, Some(T), &[Some(ID)], false), 10).unwrap();
    let topic = &req.groups[0].topics.as_ref().unwrap()[0];
    assert_eq!((topic.name.as_str(), topic.topic_id), ("", ID));
    assert_eq!(topic.partition_indexes, [0]);
}

/// kafka-proto's v1 response fixture: offset 100, no leader epoch (v5+),
/// empty metadata.
#[test]
fn v1_response_fixture() {
    let bytes: &[u8] = &[
        0, 0, 0, 1, 0, 1, b't', 0, 0, 0, 1, // topics [t: 1 partition]
        0, 0, 0, 0, // partition_index
        0, 0, 0, 0, 0, 0, 0, 100, // committed_offset
        0, 0, // metadata ""
        0, 0, // error_code
    ];
    let resp = OffsetFetchResponse::decode(bytes, 1).unwrap();
    let answer = group_offsets(1, "g", resp, &BTreeMap::new()).unwrap();
    assert_eq!(
        answer,
        GroupOffsets {
            version: 1,
            partitions: vec![CommittedOffset {
                partition: TopicPartition::new("t", 0),
                offset: Some(100),
                leader_epoch: None,
                metadata: Some(String::new()),
                error: ErrorCode::None,
            }],
        }
    );
}

/// kafka-proto's v5 response fixture: offset -1 is "no offset"; the leader
/// epoch is read.
#[test]
fn v5_response_fixture_without_offset() {
    let bytes: &[u8] = &[
        0, 0, 0, 7, 0, 0, 0, 1, 0, 1, b't', 0, 0, 0, 1, // throttle, topics [t: 1 partition]
        0, 0, 0, 2, // partition_index
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // committed_offset -1
        0, 0, 0, 4, // committed_leader_epoch
        0xff, 0xff, // metadata null
        0, 0, 0, 0, // error codes
    ];
    let resp = OffsetFetchResponse::decode(bytes, 5).unwrap();
    let p = &group_offsets(5, "g", resp, &BTreeMap::new())
        .unwrap()
        .partitions[0];
    assert_eq!(p.partition, TopicPartition::new("t", 2));
    assert_eq!(
        (p.offset, p.leader_epoch, p.metadata.as_deref()),
        (None, Some(4), None)
    );
}

/// kafka-proto's v10 response fixture: the topic id is named through the
/// metadata's ids; an id it does not know (a deleted topic) is left out.
#[test]
fn v10_response_fixture_names_topic_ids() {
    let bytes: &[u8] = &[
        0, 0, 0, 0, 2, 2, b'g', 2, // throttle, groups [g], topics: 1
        1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, // topic_id
        2, 0, 0, 0, 0, // partitions: 1, partition_index 0
        0, 0, 0, 0, 0, 0, 0, 100, // committed_offset
        0, 0, 0, 2, // committed_leader_epoch
        0, 0, 0, 0, 0, 0, 0, 0, 0, // metadata null, error, tags, group error, tags
    ];
    let resp = OffsetFetchResponse::decode(bytes, 10).unwrap();
    let names = BTreeMap::from([(ID, "t".to_string())]);
    let p = &group_offsets(10, "g", resp.clone(), &names)
        .unwrap()
        .partitions[0];
    assert_eq!(
        (p.partition.clone(), p.offset, p.leader_epoch),
        (TopicPartition::new("t", 0), Some(100), Some(2))
    );
    let unknown = group_offsets(10, "g", resp, &BTreeMap::new()).unwrap();
    assert!(unknown.partitions.is_empty());
}

/// A partition error stays in the answer for the caller; a group error is
/// the request's error.
#[test]
fn group_error_fails_partition_error_is_reported() {
    let answer = |group_error: ErrorCode| OffsetFetchResponse {
        groups: vec![OffsetFetchResponseGroup {
            group_id: "g".into(),
            error_code: group_error.code(),
            topics: vec![OffsetFetchResponseTopics {
                name: "t".into(),
                partitions: vec![kafka_proto::messages::OffsetFetchResponsePartitions {
                    error_code: ErrorCode::UnstableOffsetCommit.code(),
                    committed_offset: -1,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let ok = group_offsets(8, "g", answer(ErrorCode::None), &BTreeMap::new()).unwrap();
    assert_eq!(ok.partitions[0].error, ErrorCode::UnstableOffsetCommit);
    let e = group_offsets(
        8,
        "g",
        answer(ErrorCode::GroupAuthorizationFailed),
        &BTreeMap::new(),
    )
    .unwrap_err();
    assert!(matches!(
        e,
        RequestError::Broker { version: 8, error: ErrorCode::GroupAuthorizationFailed, message: Some(ref m), .. } if m == "group g"
    ));
}

/// A batched answer without the group asked for is retriable
/// (COORDINATOR_NOT_AVAILABLE): the callers ask again.
#[test]
fn answer_without_the_group_is_retriable() {
    let e = group_offsets(8, "g", OffsetFetchResponse::default(), &BTreeMap::new()).unwrap_err();
    assert!(e.is_retriable());
    assert_eq!(e.error_code(), Some(ErrorCode::CoordinatorNotAvailable));
}
