//! Differential tests of `kafka-proto` against the generated `kafka-protocol` crate.
//!
//! For every message type and every version both crates implement, random values
//! from our version-aware strategies ([`VersionedArbitrary`]) are
//!
//! 1. encoded by us → bytes `A`;
//! 2. decoded by `kafka-protocol` (must succeed and consume all of `A`);
//! 3. re-encoded by `kafka-protocol` → bytes `B`, and `B == A` is asserted (its
//!    `compute_size` must also equal `A.len()`);
//! 4. decoded by us from `B`, which must give back the original value.
//!
//! Byte identity in step 3 means both decoders read the same values: any field one
//! crate reads at a different offset, width or version shifts or changes the bytes.
//!
//! Tagged fields: our strategies add unknown tagged fields (tags ≥ 16, ascending).
//! `kafka-protocol` keeps them in a `BTreeMap<i32, Bytes>` and writes known and
//! unknown tags merged in ascending order, as we do, so no normalisation is needed
//! and none is done. (An input with unknown tags out of order would not round-trip
//! byte for byte through `kafka-protocol`, but our strategies never produce one.)
//!
//! Only versions in both ranges are compared: `kafka-protocol` 0.18 lacks, at the
//! time of writing, ApiVersions v5, InitProducerId request v6, ListOffsets v11,
//! OffsetFetch request v10, OffsetCommit request v10, TxnOffsetCommit v6 and
//! DeleteGroups v3, which ours implements.
//!
//! The number of cases per version is 64, or `DIFF_CASES` from the environment.
//! Run with `cargo test -p kafka-eos-tests --test integration differential_kafka_protocol::`.

use bytes::{Bytes, BytesMut};
use kafka_proto::testing::VersionedArbitrary;
use kafka_proto::{ErrorCode, Message};
use kafka_protocol::protocol::{Decodable, Encodable, Message as TheirMessage};
use proptest::test_runner::{Config, TestCaseError, TestRunner};

/// Random values per message × version.
const DEFAULT_CASES: u32 = 64;

fn cases() -> u32 {
    std::env::var("DIFF_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_CASES)
}

/// The versions both crates implement for one message.
fn common_versions<O: Message, T: TheirMessage>() -> Vec<i16> {
    let lo = O::VERSIONS.min.max(T::VERSIONS.min);
    let hi = O::VERSIONS.max.min(T::VERSIONS.max);
    (lo..=hi).collect()
}

/// One case: ours → theirs → ours, as described in the module docs.
fn check_one<O, T>(ours: &O, version: i16) -> Result<(), TestCaseError>
where
    O: Message,
    T: Encodable + Decodable + std::fmt::Debug,
{
    let a = ours
        .encode_to_vec(version)
        .map_err(|e| TestCaseError::fail(format!("our encode failed: {e}")))?;
    let mut input = Bytes::from(a.clone());
    let theirs = T::decode(&mut input, version).map_err(|e| {
        TestCaseError::fail(format!(
            "kafka-protocol rejected our v{version} encoding {a:02x?}: {e:#}"
        ))
    })?;
    if !input.is_empty() {
        return Err(TestCaseError::fail(format!(
            "kafka-protocol left {} of {} bytes unread: {theirs:?}",
            input.len(),
            a.len()
        )));
    }
    let size = theirs
        .compute_size(version)
        .map_err(|e| TestCaseError::fail(format!("kafka-protocol compute_size: {e:#}")))?;
    let mut b = BytesMut::new();
    theirs
        .encode(&mut b, version)
        .map_err(|e| TestCaseError::fail(format!("kafka-protocol encode: {e:#}")))?;
    if b.as_ref() != a.as_slice() {
        return Err(TestCaseError::fail(format!(
            "bytes differ at v{version}\n ours:   {a:02x?}\n theirs: {:02x?}\n value: {theirs:?}",
            b.as_ref()
        )));
    }
    if size != a.len() {
        return Err(TestCaseError::fail(format!(
            "kafka-protocol compute_size {size} != encoded length {}",
            a.len()
        )));
    }
    let back = O::decode(&b, version)
        .map_err(|e| TestCaseError::fail(format!("our decode of their bytes: {e}")))?;
    if &back != ours {
        return Err(TestCaseError::fail(format!(
            "value changed through kafka-protocol:\n before: {ours:?}\n after:  {back:?}"
        )));
    }
    Ok(())
}

/// Runs [`check_one`] for every common version of `O` / `T`; returns the versions
/// compared. Panics with the minimal failing value on a mismatch.
fn compare<O, T>(name: &str) -> Vec<i16>
where
    O: VersionedArbitrary,
    T: TheirMessage + Encodable + Decodable + std::fmt::Debug,
{
    let versions = common_versions::<O, T>();
    assert!(
        !versions.is_empty(),
        "{name}: no common version (ours {:?}, theirs {}..={})",
        O::VERSIONS,
        T::VERSIONS.min,
        T::VERSIONS.max
    );
    for &version in &versions {
        let mut runner = TestRunner::new(Config {
            cases: cases(),
            failure_persistence: None,
            ..Config::default()
        });
        if let Err(e) = runner.run(&O::arbitrary(version), |m| check_one::<O, T>(&m, version)) {
            panic!("{name} v{version}: {e}");
        }
    }
    eprintln!(
        "{name}: compared v{}..=v{} (ours {}..={}, kafka-protocol {}..={})",
        versions[0],
        versions[versions.len() - 1],
        O::VERSIONS.min,
        O::VERSIONS.max,
        T::VERSIONS.min,
        T::VERSIONS.max
    );
    versions
}

/// One `#[test]` per line: `test_name: OurType => TheirType;`. Adding a message
/// is one line.
macro_rules! differential {
    ($($test:ident: $ours:ident => $theirs:ident;)*) => {
        $(
            #[test]
            fn $test() {
                compare::<kafka_proto::messages::$ours, kafka_protocol::messages::$theirs>(
                    stringify!($ours),
                );
            }
        )*
    };
}

differential! {
    api_versions_request: ApiVersionsRequest => ApiVersionsRequest;
    api_versions_response: ApiVersionsResponse => ApiVersionsResponse;
    metadata_request: MetadataRequest => MetadataRequest;
    metadata_response: MetadataResponse => MetadataResponse;
    find_coordinator_request: FindCoordinatorRequest => FindCoordinatorRequest;
    find_coordinator_response: FindCoordinatorResponse => FindCoordinatorResponse;
    init_producer_id_request: InitProducerIdRequest => InitProducerIdRequest;
    init_producer_id_response: InitProducerIdResponse => InitProducerIdResponse;
    add_partitions_to_txn_request: AddPartitionsToTxnRequest => AddPartitionsToTxnRequest;
    add_partitions_to_txn_response: AddPartitionsToTxnResponse => AddPartitionsToTxnResponse;
    add_offsets_to_txn_request: AddOffsetsToTxnRequest => AddOffsetsToTxnRequest;
    add_offsets_to_txn_response: AddOffsetsToTxnResponse => AddOffsetsToTxnResponse;
    end_txn_request: EndTxnRequest => EndTxnRequest;
    end_txn_response: EndTxnResponse => EndTxnResponse;
    produce_request: ProduceRequest => ProduceRequest;
    produce_response: ProduceResponse => ProduceResponse;
    fetch_request: FetchRequest => FetchRequest;
    fetch_response: FetchResponse => FetchResponse;
    list_offsets_request: ListOffsetsRequest => ListOffsetsRequest;
    list_offsets_response: ListOffsetsResponse => ListOffsetsResponse;
    offset_for_leader_epoch_request: OffsetForLeaderEpochRequest => OffsetForLeaderEpochRequest;
    offset_for_leader_epoch_response: OffsetForLeaderEpochResponse => OffsetForLeaderEpochResponse;
    txn_offset_commit_request: TxnOffsetCommitRequest => TxnOffsetCommitRequest;
    txn_offset_commit_response: TxnOffsetCommitResponse => TxnOffsetCommitResponse;
    offset_fetch_request: OffsetFetchRequest => OffsetFetchRequest;
    offset_fetch_response: OffsetFetchResponse => OffsetFetchResponse;
    describe_configs_request: DescribeConfigsRequest => DescribeConfigsRequest;
    describe_configs_response: DescribeConfigsResponse => DescribeConfigsResponse;
    create_topics_request: CreateTopicsRequest => CreateTopicsRequest;
    create_topics_response: CreateTopicsResponse => CreateTopicsResponse;
    list_transactions_request: ListTransactionsRequest => ListTransactionsRequest;
    list_transactions_response: ListTransactionsResponse => ListTransactionsResponse;
    describe_transactions_request: DescribeTransactionsRequest => DescribeTransactionsRequest;
    describe_transactions_response: DescribeTransactionsResponse => DescribeTransactionsResponse;
    describe_producers_request: DescribeProducersRequest => DescribeProducersRequest;
    describe_producers_response: DescribeProducersResponse => DescribeProducersResponse;
    sasl_handshake_request: SaslHandshakeRequest => SaslHandshakeRequest;
    sasl_handshake_response: SaslHandshakeResponse => SaslHandshakeResponse;
    sasl_authenticate_request: SaslAuthenticateRequest => SaslAuthenticateRequest;
    sasl_authenticate_response: SaslAuthenticateResponse => SaslAuthenticateResponse;
    delete_topics_request: DeleteTopicsRequest => DeleteTopicsRequest;
    delete_topics_response: DeleteTopicsResponse => DeleteTopicsResponse;
    create_partitions_request: CreatePartitionsRequest => CreatePartitionsRequest;
    create_partitions_response: CreatePartitionsResponse => CreatePartitionsResponse;
    join_group_request: JoinGroupRequest => JoinGroupRequest;
    join_group_response: JoinGroupResponse => JoinGroupResponse;
    sync_group_request: SyncGroupRequest => SyncGroupRequest;
    sync_group_response: SyncGroupResponse => SyncGroupResponse;
    heartbeat_request: HeartbeatRequest => HeartbeatRequest;
    heartbeat_response: HeartbeatResponse => HeartbeatResponse;
    leave_group_request: LeaveGroupRequest => LeaveGroupRequest;
    leave_group_response: LeaveGroupResponse => LeaveGroupResponse;
    offset_commit_request: OffsetCommitRequest => OffsetCommitRequest;
    offset_commit_response: OffsetCommitResponse => OffsetCommitResponse;
    consumer_group_heartbeat_request: ConsumerGroupHeartbeatRequest => ConsumerGroupHeartbeatRequest;
    consumer_group_heartbeat_response: ConsumerGroupHeartbeatResponse => ConsumerGroupHeartbeatResponse;
    consumer_group_describe_request: ConsumerGroupDescribeRequest => ConsumerGroupDescribeRequest;
    consumer_group_describe_response: ConsumerGroupDescribeResponse => ConsumerGroupDescribeResponse;
    describe_groups_request: DescribeGroupsRequest => DescribeGroupsRequest;
    describe_groups_response: DescribeGroupsResponse => DescribeGroupsResponse;
    list_groups_request: ListGroupsRequest => ListGroupsRequest;
    list_groups_response: ListGroupsResponse => ListGroupsResponse;
    delete_groups_request: DeleteGroupsRequest => DeleteGroupsRequest;
    delete_groups_response: DeleteGroupsResponse => DeleteGroupsResponse;
    offset_delete_request: OffsetDeleteRequest => OffsetDeleteRequest;
    offset_delete_response: OffsetDeleteResponse => OffsetDeleteResponse;
    delete_records_request: DeleteRecordsRequest => DeleteRecordsRequest;
    delete_records_response: DeleteRecordsResponse => DeleteRecordsResponse;
    incremental_alter_configs_request: IncrementalAlterConfigsRequest => IncrementalAlterConfigsRequest;
    incremental_alter_configs_response: IncrementalAlterConfigsResponse => IncrementalAlterConfigsResponse;
    describe_cluster_request: DescribeClusterRequest => DescribeClusterRequest;
    describe_cluster_response: DescribeClusterResponse => DescribeClusterResponse;
    create_acls_request: CreateAclsRequest => CreateAclsRequest;
    create_acls_response: CreateAclsResponse => CreateAclsResponse;
    describe_acls_request: DescribeAclsRequest => DescribeAclsRequest;
    describe_acls_response: DescribeAclsResponse => DescribeAclsResponse;
    delete_acls_request: DeleteAclsRequest => DeleteAclsRequest;
    delete_acls_response: DeleteAclsResponse => DeleteAclsResponse;
}

/// The consumer protocol's version-prefixed data (embedded in JoinGroup and
/// SyncGroup): our INT16 version prefix, then a body `kafka-protocol` must
/// read whole and re-encode byte for byte; our decoder must give back the
/// value from the prefix and their bytes. One `#[test]` per line, as in
/// [`differential!`].
macro_rules! differential_prefixed {
    ($($test:ident: $ours:ident => $theirs:ident;)*) => {
        $(
            #[test]
            fn $test() {
                use kafka_proto::messages::$ours as Ours;
                type Theirs = kafka_protocol::messages::$theirs;
                let lo = Ours::VERSIONS.min.max(<Theirs as TheirMessage>::VERSIONS.min);
                let hi = Ours::VERSIONS.max.min(<Theirs as TheirMessage>::VERSIONS.max);
                assert!(lo <= hi, "{}: no common version", stringify!($ours));
                for version in lo..=hi {
                    let mut runner = TestRunner::new(Config {
                        cases: cases(),
                        failure_persistence: None,
                        ..Config::default()
                    });
                    let result = runner.run(&Ours::arbitrary(version), |ours| {
                        let prefixed = ours
                            .encode_prefixed(version)
                            .map_err(|e| TestCaseError::fail(format!("our encode failed: {e}")))?;
                        let (prefix, a) = prefixed.split_at(2);
                        if prefix != version.to_be_bytes() {
                            return Err(TestCaseError::fail(format!("prefix {prefix:02x?} for v{version}")));
                        }
                        let mut input = Bytes::copy_from_slice(a);
                        let theirs = Theirs::decode(&mut input, version).map_err(|e| {
                            TestCaseError::fail(format!("kafka-protocol rejected our v{version} body {a:02x?}: {e:#}"))
                        })?;
                        if !input.is_empty() {
                            return Err(TestCaseError::fail(format!("kafka-protocol left {} bytes unread", input.len())));
                        }
                        let mut b = BytesMut::new();
                        theirs
                            .encode(&mut b, version)
                            .map_err(|e| TestCaseError::fail(format!("kafka-protocol encode: {e:#}")))?;
                        if b.as_ref() != a {
                            return Err(TestCaseError::fail(format!(
                                "bytes differ at v{version}\n ours:   {a:02x?}\n theirs: {:02x?}",
                                b.as_ref()
                            )));
                        }
                        let mut again = prefix.to_vec();
                        again.extend_from_slice(&b);
                        let back = Ours::decode_prefixed(&again)
                            .map_err(|e| TestCaseError::fail(format!("our decode of their bytes: {e}")))?;
                        if back != (version, ours.clone()) {
                            return Err(TestCaseError::fail(format!("value changed: {ours:?} -> {back:?}")));
                        }
                        Ok(())
                    });
                    if let Err(e) = result {
                        panic!("{} v{version}: {e}", stringify!($ours));
                    }
                }
            }
        )*
    };
}

differential_prefixed! {
    consumer_protocol_subscription: ConsumerProtocolSubscription => ConsumerProtocolSubscription;
    consumer_protocol_assignment: ConsumerProtocolAssignment => ConsumerProtocolAssignment;
}

/// A documented difference, not a wire divergence: `kafka-protocol`'s
/// `ResponseError::ConcurrentTransactions.is_retriable()` is `false`, but in Kafka
/// `ConcurrentTransactionsException` extends `RetriableException`; ours follows Kafka.
#[test]
fn concurrent_transactions_is_retriable_unlike_kafka_protocol() {
    use kafka_protocol::error::ResponseError;
    let theirs = ResponseError::try_from_code(51);
    assert_eq!(ErrorCode::from(51), ErrorCode::ConcurrentTransactions);
    assert!(ErrorCode::ConcurrentTransactions.is_retriable());
    assert_eq!(theirs, Some(ResponseError::ConcurrentTransactions));
    assert!(!ResponseError::ConcurrentTransactions.is_retriable());
}
