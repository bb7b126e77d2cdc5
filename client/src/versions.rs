//! API version negotiation (sans-IO): what the broker advertised in
//! ApiVersions, which version of each API to use, and the ApiVersions
//! fallback rule of the Java `NetworkClient`.
//!
//! A connection negotiates once, right after connecting:
//! 1. send ApiVersions at [`API_VERSIONS_MAX`];
//! 2. decode the answer with [`decode_api_versions_body`] (an old broker
//!    answers in the v0 layout) and hand it to [`on_api_versions_response`];
//! 3. on [`ApiVersionsOutcome::Retry`] send again at the lower version, on
//!    [`ApiVersionsOutcome::Done`] keep the [`BrokerVersions`] and ask it the
//!    version of every request sent afterwards.
//!
//! ```
//! use kafka_client::internals::{on_api_versions_response, ApiVersionsOutcome, API_VERSIONS_MAX};
//! use kafka_proto::messages::{ApiVersion, ApiVersionsResponse, ProduceRequest};
//! # fn send_api_versions(_version: i16) -> ApiVersionsResponse {
//! #     ApiVersionsResponse {
//! #         api_keys: vec![ApiVersion { api_key: 0, min_version: 0, max_version: 13, ..Default::default() }],
//! #         ..Default::default()
//! #     }
//! # }
//! let mut version = API_VERSIONS_MAX;
//! let broker = loop {
//!     match on_api_versions_response(version, &send_api_versions(version)) {
//!         ApiVersionsOutcome::Done(broker) => break broker,
//!         ApiVersionsOutcome::Retry(lower) => version = lower,
//!         ApiVersionsOutcome::Failed(code) => panic!("ApiVersions failed: {code:?}"),
//!     }
//! };
//! // The highest Produce version both sides speak (an error if none).
//! assert_eq!(broker.version_for::<ProduceRequest>().unwrap(), 13);
//! ```

use kafka_proto::messages::*;
use kafka_proto::{ApiKey, ErrorCode, Message, VersionRange};
use std::collections::HashMap;

/// The ApiVersions version this client sends first. v5 adds cluster-id and
/// node-id checks (KIP-1242) that this client does not implement yet.
pub const API_VERSIONS_MAX: i16 = 4;

/// The lowest Produce version a broker really accepts, whatever it advertises
/// (Kafka 4.x still advertises 0, for older clients' sake, but removed
/// v0-2 in KIP-896).
pub const PRODUCE_MIN_VERSION: i16 = 3;

/// The versions this crate implements for `api` (from `kafka_proto`'s
/// `Message::VERSIONS`), `None` for APIs it has no codec for.
pub fn client_versions(api: ApiKey) -> Option<VersionRange> {
    Some(match api {
        ApiKey::Produce => ProduceRequest::VERSIONS,
        ApiKey::Fetch => FetchRequest::VERSIONS,
        ApiKey::ListOffsets => ListOffsetsRequest::VERSIONS,
        ApiKey::OffsetForLeaderEpoch => OffsetForLeaderEpochRequest::VERSIONS,
        ApiKey::Metadata => MetadataRequest::VERSIONS,
        ApiKey::OffsetFetch => OffsetFetchRequest::VERSIONS,
        ApiKey::FindCoordinator => FindCoordinatorRequest::VERSIONS,
        ApiKey::SaslHandshake => SaslHandshakeRequest::VERSIONS,
        ApiKey::ApiVersions => VersionRange::new(0, API_VERSIONS_MAX),
        ApiKey::CreateTopics => CreateTopicsRequest::VERSIONS,
        ApiKey::InitProducerId => InitProducerIdRequest::VERSIONS,
        ApiKey::AddPartitionsToTxn => AddPartitionsToTxnRequest::VERSIONS,
        ApiKey::AddOffsetsToTxn => AddOffsetsToTxnRequest::VERSIONS,
        ApiKey::EndTxn => EndTxnRequest::VERSIONS,
        ApiKey::TxnOffsetCommit => TxnOffsetCommitRequest::VERSIONS,
        ApiKey::DescribeConfigs => DescribeConfigsRequest::VERSIONS,
        ApiKey::SaslAuthenticate => SaslAuthenticateRequest::VERSIONS,
        ApiKey::DescribeProducers => DescribeProducersRequest::VERSIONS,
        ApiKey::DescribeTransactions => DescribeTransactionsRequest::VERSIONS,
        ApiKey::ListTransactions => ListTransactionsRequest::VERSIONS,
        ApiKey::OffsetCommit => OffsetCommitRequest::VERSIONS,
        ApiKey::JoinGroup => JoinGroupRequest::VERSIONS,
        ApiKey::Heartbeat => HeartbeatRequest::VERSIONS,
        ApiKey::LeaveGroup => LeaveGroupRequest::VERSIONS,
        ApiKey::SyncGroup => SyncGroupRequest::VERSIONS,
        ApiKey::DescribeGroups => DescribeGroupsRequest::VERSIONS,
        ApiKey::ListGroups => ListGroupsRequest::VERSIONS,
        ApiKey::DeleteTopics => DeleteTopicsRequest::VERSIONS,
        ApiKey::DeleteGroups => DeleteGroupsRequest::VERSIONS,
        ApiKey::CreatePartitions => CreatePartitionsRequest::VERSIONS,
        ApiKey::ConsumerGroupHeartbeat => ConsumerGroupHeartbeatRequest::VERSIONS,
        ApiKey::ConsumerGroupDescribe => ConsumerGroupDescribeRequest::VERSIONS,
        _ => return None,
    })
}

/// The highest version in both ranges, if they overlap.
pub fn highest_common(a: VersionRange, b: VersionRange) -> Option<i16> {
    let lo = a.min.max(b.min);
    let hi = a.max.min(b.max);
    (lo <= hi).then_some(hi)
}

/// What to do after an ApiVersions response arrived (Java
/// `NetworkClient.handleApiVersionsResponse`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiVersionsOutcome {
    /// Success: use these versions.
    Done(Box<BrokerVersions>),
    /// UNSUPPORTED_VERSION: send ApiVersions again at this (lower) version.
    Retry(i16),
    /// Any other error, or UNSUPPORTED_VERSION at v0: give up on this connection.
    Failed(ErrorCode),
}

/// Decides the next step after sending ApiVersions at `sent_version` and
/// receiving `resp`. On UNSUPPORTED_VERSION the broker still lists its own
/// ApiVersions range; retry at its maximum (clamped below what was sent and
/// into this client's range), else at v0. A failure at v0 is final.
///
/// ```
/// use kafka_client::internals::{on_api_versions_response, ApiVersionsOutcome};
/// use kafka_proto::messages::{ApiVersion, ApiVersionsResponse};
/// // A broker that speaks ApiVersions up to v2 refuses a v4 request...
/// let refused = ApiVersionsResponse {
///     error_code: 35, // UNSUPPORTED_VERSION
///     api_keys: vec![ApiVersion { api_key: 18, min_version: 0, max_version: 2, ..Default::default() }],
///     ..Default::default()
/// };
/// // ...and the client asks again at v2.
/// assert_eq!(on_api_versions_response(4, &refused), ApiVersionsOutcome::Retry(2));
/// ```
pub fn on_api_versions_response(
    sent_version: i16,
    resp: &ApiVersionsResponse,
) -> ApiVersionsOutcome {
    let error = ErrorCode::from(resp.error_code);
    if error.is_ok() {
        return ApiVersionsOutcome::Done(Box::new(BrokerVersions::from_response(
            resp,
            sent_version,
        )));
    }
    if error != ErrorCode::UnsupportedVersion || sent_version == 0 {
        return ApiVersionsOutcome::Failed(error);
    }
    let broker_max = resp
        .range_of(ApiKey::ApiVersions)
        .map(|r| r.max)
        .unwrap_or(0);
    // Never loop: the retry is strictly lower than what was sent.
    let next = broker_max.clamp(0, sent_version - 1);
    ApiVersionsOutcome::Retry(next)
}

/// Decodes an ApiVersions response body (after the v0 header), falling back
/// to the v0 layout: a broker that does not support the requested version
/// answers UNSUPPORTED_VERSION in the v0 layout (Java `ApiVersionsResponse.parse`).
pub fn decode_api_versions_body(
    body: &[u8],
    version: i16,
) -> Result<ApiVersionsResponse, kafka_proto::DecodeError> {
    match ApiVersionsResponse::decode(body, version) {
        Ok(r) => Ok(r),
        Err(e) if version != 0 => ApiVersionsResponse::decode(body, 0).map_err(|_| e),
        Err(e) => Err(e),
    }
}

/// The broker's advertised API ranges and features, as negotiated on one
/// connection.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BrokerVersions {
    api_versions_version: i16,
    ranges: HashMap<i16, VersionRange>,
    finalized_features: HashMap<String, (i16, i16)>,
    supported_features: HashMap<String, VersionRange>,
    finalized_features_epoch: i64,
}

impl BrokerVersions {
    /// Builds from a successful ApiVersions response received at `version`.
    /// The Produce minimum is raised to [`PRODUCE_MIN_VERSION`].
    pub fn from_response(resp: &ApiVersionsResponse, version: i16) -> Self {
        let mut ranges = HashMap::new();
        for a in &resp.api_keys {
            let mut r = VersionRange::new(a.min_version, a.max_version);
            if ApiKey::from(a.api_key) == ApiKey::Produce {
                r.min = r.min.max(PRODUCE_MIN_VERSION);
            }
            ranges.insert(a.api_key, r);
        }
        Self {
            api_versions_version: version,
            ranges,
            finalized_features: resp
                .finalized_features
                .iter()
                .map(|f| (f.name.clone(), (f.min_version_level, f.max_version_level)))
                .collect(),
            supported_features: resp
                .supported_features
                .iter()
                .map(|f| {
                    (
                        f.name.clone(),
                        VersionRange::new(f.min_version, f.max_version),
                    )
                })
                .collect(),
            finalized_features_epoch: resp.finalized_features_epoch,
        }
    }

    /// The ApiVersions version that succeeded.
    pub fn api_versions_version(&self) -> i16 {
        self.api_versions_version
    }

    /// The broker's range for `api` (Produce minimum raised to 3), if advertised.
    pub fn broker_range(&self, api: ApiKey) -> Option<VersionRange> {
        self.ranges.get(&api.code()).copied()
    }

    /// The highest version both this client ([`client_versions`]) and the
    /// broker support, `None` if there is none or either side lacks the API.
    pub fn negotiated_version(&self, api: ApiKey) -> Option<i16> {
        highest_common(client_versions(api)?, self.broker_range(api)?)
    }

    /// Like [`Self::negotiated_version`] for a message type, with a typed error.
    pub fn version_for<M: Message>(&self) -> Result<i16, crate::ConnError> {
        let broker = self.broker_range(M::API_KEY);
        broker.and_then(|b| highest_common(M::VERSIONS, b)).ok_or(
            crate::ConnError::UnsupportedVersion {
                api: M::API_KEY,
                client: M::VERSIONS,
                broker,
            },
        )
    }

    /// The finalized `(min, max)` level of feature `name`, if finalized.
    pub fn finalized_feature(&self, name: &str) -> Option<(i16, i16)> {
        self.finalized_features.get(name).copied()
    }

    /// The finalized `transaction.version` level (0 or absent: TV0; 2: KIP-890 TV2).
    pub fn transaction_version(&self) -> Option<i16> {
        self.finalized_feature("transaction.version")
            .map(|(_, max)| max)
    }

    /// The broker's supported range of feature `name`.
    pub fn supported_feature(&self, name: &str) -> Option<VersionRange> {
        self.supported_features.get(name).copied()
    }

    /// The epoch of the finalized features (-1 if unknown).
    pub fn finalized_features_epoch(&self) -> i64 {
        self.finalized_features_epoch
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resp(keys: &[(i16, i16, i16)]) -> ApiVersionsResponse {
        ApiVersionsResponse {
            api_keys: keys
                .iter()
                .map(|&(k, lo, hi)| ApiVersion {
                    api_key: k,
                    min_version: lo,
                    max_version: hi,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn negotiates_highest_common() {
        let v = BrokerVersions::from_response(&resp(&[(0, 0, 11), (3, 0, 20), (22, 0, 5)]), 4);
        assert_eq!(v.negotiated_version(ApiKey::Produce), Some(11));
        assert_eq!(v.negotiated_version(ApiKey::Metadata), Some(13));
        assert_eq!(v.negotiated_version(ApiKey::InitProducerId), Some(5));
        assert_eq!(v.negotiated_version(ApiKey::EndTxn), None);
    }

    #[test]
    fn produce_min_is_never_below_three() {
        let v = BrokerVersions::from_response(&resp(&[(0, 0, 2)]), 4);
        assert_eq!(
            v.broker_range(ApiKey::Produce),
            Some(VersionRange::new(3, 2))
        );
        assert_eq!(v.negotiated_version(ApiKey::Produce), None);
        assert!(v.version_for::<ProduceRequest>().is_err());
    }

    #[test]
    fn fallback_never_goes_up() {
        let r = ApiVersionsResponse {
            error_code: 35,
            ..resp(&[(18, 0, 9)])
        };
        assert_eq!(
            on_api_versions_response(3, &r),
            ApiVersionsOutcome::Retry(2)
        );
        let other = ApiVersionsResponse {
            error_code: 42,
            ..Default::default()
        };
        assert_eq!(
            on_api_versions_response(3, &other),
            ApiVersionsOutcome::Failed(ErrorCode::from(42))
        );
    }

    #[test]
    fn v0_fallback_decoding() {
        // An UNSUPPORTED_VERSION answer in the v0 layout to a v4 request.
        let v0 = ApiVersionsResponse {
            error_code: 35,
            ..resp(&[(18, 0, 2)])
        };
        let bytes = v0.encode_to_vec(0).unwrap();
        let back = decode_api_versions_body(&bytes, 4).unwrap();
        assert_eq!(back, v0);
    }

    fn with_features() -> BrokerVersions {
        let r = ApiVersionsResponse {
            supported_features: vec![SupportedFeatureKey {
                name: "transaction.version".into(),
                min_version: 0,
                max_version: 2,
                ..Default::default()
            }],
            finalized_features: vec![FinalizedFeatureKey {
                name: "transaction.version".into(),
                min_version_level: 2,
                max_version_level: 2,
                ..Default::default()
            }],
            finalized_features_epoch: 42,
            ..resp(&[(0, 0, 13), (3, 0, 12)])
        };
        BrokerVersions::from_response(&r, 4)
    }

    #[test]
    fn client_versions_are_the_codecs_ranges_with_produce_from_three() {
        assert_eq!(
            client_versions(ApiKey::Produce),
            Some(VersionRange::new(3, 13))
        );
        assert_eq!(
            client_versions(ApiKey::Heartbeat),
            Some(VersionRange::new(0, 4))
        );
    }

    #[test]
    fn highest_common_is_the_lower_max_or_none_when_disjoint() {
        let common = highest_common(VersionRange::new(0, 5), VersionRange::new(2, 9));
        assert_eq!(common, Some(5));
        let disjoint = highest_common(VersionRange::new(0, 1), VersionRange::new(2, 9));
        assert_eq!(disjoint, None);
    }

    #[test]
    fn success_is_done_at_the_version_sent() {
        let ApiVersionsOutcome::Done(v) = on_api_versions_response(4, &resp(&[])) else {
            panic!("error 0 is success")
        };
        assert_eq!(v.api_versions_version(), 4);
    }

    #[test]
    fn error_other_than_unsupported_version_fails() {
        let denied = ApiVersionsResponse {
            error_code: ErrorCode::ClusterAuthorizationFailed.code(),
            ..Default::default()
        };
        assert!(matches!(
            on_api_versions_response(4, &denied),
            ApiVersionsOutcome::Failed(_)
        ));
    }

    #[test]
    fn unsupported_version_without_a_range_retries_at_v0_then_fails() {
        let empty = ApiVersionsResponse {
            error_code: 35,
            ..Default::default()
        };
        assert_eq!(
            on_api_versions_response(4, &empty),
            ApiVersionsOutcome::Retry(0)
        );
        assert!(matches!(
            on_api_versions_response(0, &empty),
            ApiVersionsOutcome::Failed(_)
        ));
    }

    #[test]
    fn advertised_produce_min_is_raised_to_three() {
        let v = BrokerVersions::from_response(&resp(&[(0, 0, 11)]), 3);
        assert_eq!(
            v.broker_range(ApiKey::Produce),
            Some(VersionRange::new(3, 11))
        );
    }

    #[test]
    fn api_not_advertised_has_no_range_and_no_version() {
        let v = with_features();
        assert_eq!(
            v.broker_range(ApiKey::Metadata),
            Some(VersionRange::new(0, 12))
        );
        assert_eq!(v.broker_range(ApiKey::Fetch), None);
        assert_eq!(v.negotiated_version(ApiKey::EndTxn), None);
        assert!(
            BrokerVersions::default()
                .version_for::<ProduceRequest>()
                .is_err()
        );
    }

    #[test]
    fn negotiated_version_is_capped_by_the_client() {
        let ours = client_versions(ApiKey::Metadata).unwrap().max;
        assert_eq!(
            with_features().negotiated_version(ApiKey::Metadata),
            Some(ours.min(12))
        );
    }

    #[test]
    fn features_and_their_epoch_are_kept() {
        let v = with_features();
        assert_eq!(v.finalized_feature("transaction.version"), Some((2, 2)));
        assert_eq!(v.finalized_feature("group.version"), None);
        assert_eq!(
            v.supported_feature("transaction.version"),
            Some(VersionRange::new(0, 2))
        );
        assert_eq!(v.finalized_features_epoch(), 42);
    }

    #[test]
    fn transaction_version_is_the_finalized_level_or_none() {
        assert_eq!(with_features().transaction_version(), Some(2));
        assert_eq!(BrokerVersions::default().transaction_version(), None);
    }
}
