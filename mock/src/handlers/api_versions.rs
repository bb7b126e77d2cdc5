//! ApiVersions: the APIs and versions the mock serves, as the configured
//! Kafka release advertises them (capped to what kafka-proto decodes), and
//! the `transaction.version` feature.

use super::{Call, Handle, Outcome, Reply};
use crate::config::{KafkaRelease, MockConfig, TransactionVersion};
use crate::state::ClusterState;
use kafka_proto::frame::encode_response_frame;
use kafka_proto::messages::*;
use kafka_proto::{ApiKey, ErrorCode, Message, VersionRange};

/// The range the mock advertises for `api`, `None` when it does not serve it.
pub(crate) fn advertised_range(config: &MockConfig, api: ApiKey) -> Option<VersionRange> {
    let old = config.release == KafkaRelease::V3_9;
    let cap = |r: VersionRange, max_4_4: i16, max_3_9: i16| {
        VersionRange::new(r.min, r.max.min(if old { max_3_9 } else { max_4_4 }))
    };
    // The lowest version the release still serves.
    let floor = |r: VersionRange, min_4_4: i16, min_3_9: i16| {
        VersionRange::new(r.min.max(if old { min_3_9 } else { min_4_4 }), r.max)
    };
    Some(match api {
        ApiKey::ApiVersions => cap(ApiVersionsRequest::VERSIONS, 5, 4),
        ApiKey::Metadata => cap(MetadataRequest::VERSIONS, 13, 12),
        ApiKey::Produce => cap(ProduceRequest::VERSIONS, 13, 11),
        ApiKey::Fetch => cap(FetchRequest::VERSIONS, 18, 17),
        ApiKey::ListOffsets => cap(ListOffsetsRequest::VERSIONS, 11, 9),
        ApiKey::FindCoordinator => cap(FindCoordinatorRequest::VERSIONS, 6, 6),
        // v6 (two-phase commit) is unstable in Kafka 4.4: not advertised.
        ApiKey::InitProducerId => cap(InitProducerIdRequest::VERSIONS, 5, 5),
        ApiKey::AddPartitionsToTxn => cap(AddPartitionsToTxnRequest::VERSIONS, 5, 5),
        ApiKey::AddOffsetsToTxn => cap(AddOffsetsToTxnRequest::VERSIONS, 4, 4),
        ApiKey::EndTxn => cap(EndTxnRequest::VERSIONS, 5, 4),
        ApiKey::TxnOffsetCommit => cap(TxnOffsetCommitRequest::VERSIONS, 6, 4),
        ApiKey::OffsetCommit => cap(OffsetCommitRequest::VERSIONS, 10, 9),
        ApiKey::OffsetFetch => cap(OffsetFetchRequest::VERSIONS, 10, 9),
        ApiKey::CreateTopics => cap(CreateTopicsRequest::VERSIONS, 7, 7),
        ApiKey::DescribeConfigs => cap(DescribeConfigsRequest::VERSIONS, 4, 4),
        // v2's transactional id pattern (a regex) is not served.
        ApiKey::ListTransactions => cap(ListTransactionsRequest::VERSIONS, 1, 1),
        ApiKey::DescribeTransactions => cap(DescribeTransactionsRequest::VERSIONS, 0, 0),
        ApiKey::DescribeProducers => cap(DescribeProducersRequest::VERSIONS, 0, 0),
        ApiKey::JoinGroup => cap(JoinGroupRequest::VERSIONS, 9, 9),
        ApiKey::SyncGroup => cap(SyncGroupRequest::VERSIONS, 5, 5),
        ApiKey::Heartbeat => cap(HeartbeatRequest::VERSIONS, 4, 4),
        ApiKey::LeaveGroup => cap(LeaveGroupRequest::VERSIONS, 5, 5),
        // Kafka 3.9 serves the KIP-848 protocol only when enabled
        // (`group.coordinator.rebalance.protocols`, `classic` by default).
        ApiKey::ConsumerGroupHeartbeat if !old => {
            cap(ConsumerGroupHeartbeatRequest::VERSIONS, 1, 1)
        }
        ApiKey::ConsumerGroupDescribe if !old => cap(ConsumerGroupDescribeRequest::VERSIONS, 1, 1),
        // Kafka 3.9 advertises DeleteTopics from v0 (kafka-proto decodes v1+).
        ApiKey::DeleteTopics => cap(DeleteTopicsRequest::VERSIONS, 6, 6),
        ApiKey::CreatePartitions => cap(CreatePartitionsRequest::VERSIONS, 3, 3),
        ApiKey::ListGroups => cap(ListGroupsRequest::VERSIONS, 5, 5),
        ApiKey::DescribeGroups => cap(DescribeGroupsRequest::VERSIONS, 6, 5),
        ApiKey::DeleteGroups => cap(DeleteGroupsRequest::VERSIONS, 3, 2),
        // Kafka 4.0 dropped v0-1 (KIP-896).
        ApiKey::OffsetForLeaderEpoch => {
            floor(cap(OffsetForLeaderEpochRequest::VERSIONS, 4, 4), 2, 0)
        }
        ApiKey::DeleteRecords => cap(DeleteRecordsRequest::VERSIONS, 2, 2),
        ApiKey::OffsetDelete => cap(OffsetDeleteRequest::VERSIONS, 0, 0),
        ApiKey::IncrementalAlterConfigs => cap(IncrementalAlterConfigsRequest::VERSIONS, 1, 1),
        ApiKey::DescribeCluster => cap(DescribeClusterRequest::VERSIONS, 2, 1),
        // Kafka 3.9 advertises the ACL APIs from v0 (kafka-proto decodes v1+).
        ApiKey::CreateAcls => cap(CreateAclsRequest::VERSIONS, 3, 3),
        ApiKey::DescribeAcls => cap(DescribeAclsRequest::VERSIONS, 3, 3),
        ApiKey::DeleteAcls => cap(DeleteAclsRequest::VERSIONS, 3, 3),
        _ => return None,
    })
}

const SERVED: [ApiKey; 37] = [
    ApiKey::Produce,
    ApiKey::Fetch,
    ApiKey::ListOffsets,
    ApiKey::Metadata,
    ApiKey::OffsetCommit,
    ApiKey::OffsetFetch,
    ApiKey::FindCoordinator,
    ApiKey::ApiVersions,
    ApiKey::CreateTopics,
    ApiKey::InitProducerId,
    ApiKey::AddPartitionsToTxn,
    ApiKey::AddOffsetsToTxn,
    ApiKey::EndTxn,
    ApiKey::TxnOffsetCommit,
    ApiKey::DescribeConfigs,
    ApiKey::ListTransactions,
    ApiKey::DescribeTransactions,
    ApiKey::DescribeProducers,
    ApiKey::JoinGroup,
    ApiKey::SyncGroup,
    ApiKey::Heartbeat,
    ApiKey::LeaveGroup,
    ApiKey::ConsumerGroupHeartbeat,
    ApiKey::ConsumerGroupDescribe,
    ApiKey::DeleteTopics,
    ApiKey::CreatePartitions,
    ApiKey::ListGroups,
    ApiKey::DescribeGroups,
    ApiKey::DeleteGroups,
    ApiKey::OffsetForLeaderEpoch,
    ApiKey::DeleteRecords,
    ApiKey::OffsetDelete,
    ApiKey::IncrementalAlterConfigs,
    ApiKey::DescribeCluster,
    ApiKey::CreateAcls,
    ApiKey::DescribeAcls,
    ApiKey::DeleteAcls,
];

fn listing(config: &MockConfig) -> ApiVersionsResponse {
    let keys: Vec<(ApiKey, i16, i16)> = SERVED
        .iter()
        .filter_map(|api| advertised_range(config, *api).map(|r| (*api, r.min, r.max)))
        .collect();
    let mut resp = ApiVersionsResponse::listing(&keys);
    if config.release == KafkaRelease::V4_4 {
        let level = match config.transaction_version {
            TransactionVersion::V1 => 1,
            TransactionVersion::V2 => 2,
        };
        resp.supported_features = vec![SupportedFeatureKey {
            name: "transaction.version".into(),
            min_version: 0,
            max_version: 2,
            ..Default::default()
        }];
        resp.finalized_features_epoch = 1;
        resp.finalized_features = vec![FinalizedFeatureKey {
            name: "transaction.version".into(),
            max_version_level: level,
            min_version_level: level,
            ..Default::default()
        }];
    }
    resp
}

/// The v0 answer to an ApiVersions request of a version the mock does not know.
pub(crate) fn unsupported_version(config: &MockConfig, correlation_id: i32) -> Outcome {
    let mut resp = listing(config);
    resp.error_code = ErrorCode::UnsupportedVersion.code();
    resp.supported_features.clear();
    resp.finalized_features.clear();
    resp.finalized_features_epoch = -1;
    match encode_response_frame(&resp, 0, correlation_id) {
        Ok(f) => Outcome::Respond(f),
        Err(e) => Outcome::Close(format!("ApiVersions v0 answer: {e}")),
    }
}

impl Handle for ApiVersionsRequest {
    type Response = ApiVersionsResponse;

    fn handle(&self, state: &mut ClusterState, _call: &Call) -> Reply<Self::Response> {
        Reply::Now(listing(&state.config))
    }

    fn error(&self, _state: &ClusterState, _call: &Call, code: ErrorCode) -> Self::Response {
        ApiVersionsResponse {
            error_code: code.code(),
            ..Default::default()
        }
    }
}
