//! ApiVersions (key 18), versions 0–5, flexible from 3.
//!
//! The response carries the broker's version range per API and, from v3, the
//! supported and finalized features as tagged fields (tags 0–3). The response
//! header is always v0 (see [`crate::response_header_version`]).

use crate::describe::{message, nested};
use crate::{ApiKey, VersionRange};

message! {
    /// Asks a broker which API versions and features it supports.
    ///
    /// ```
    /// use kafka_proto::{Message, messages::ApiVersionsRequest};
    /// let req = ApiVersionsRequest {
    ///     client_software_name: "eos".into(),
    ///     client_software_version: "1".into(),
    ///     ..Default::default()
    /// };
    /// assert_eq!(
    ///     ApiVersionsRequest::decode(&req.encode_to_vec(4).unwrap(), 4).unwrap(),
    ///     req
    /// );
    /// ```
    pub struct ApiVersionsRequest [message ApiVersions, versions 0..=5, flexible 3, request ApiVersionsResponse] {
        /// The name of the client (v3+).
        client_software_name: String, versions 3..;
        /// The version of the client (v3+).
        client_software_version: String, versions 3..;
        /// The cluster id the client intends to connect to (v5+).
        cluster_id: Option<String>, versions 5.., nullable 5..;
        /// The node id the client intends to connect to (v5+), -1 if unknown.
        node_id: i32 = -1, versions 5..;
    }
}

message! {
    /// The broker's supported API versions and features.
    pub struct ApiVersionsResponse [message ApiVersions, versions 0..=5, flexible 3, response] {
        /// The top-level error code.
        error_code: i16;
        /// The APIs supported by the broker.
        api_keys: Vec<ApiVersion>;
        /// Throttle time (v1+).
        throttle_time_ms: i32, versions 1..;
        /// Features supported by the broker (v3+, tagged 0).
        supported_features: Vec<SupportedFeatureKey>, versions 3.., tag 0;
        /// Epoch of the finalized features, -1 if unknown (v3+, tagged 1).
        finalized_features_epoch: i64 = -1, versions 3.., tag 1;
        /// Cluster-wide finalized features (v3+, tagged 2).
        finalized_features: Vec<FinalizedFeatureKey>, versions 3.., tag 2;
        /// Set by a KRaft controller ready for ZK migration (v3+, tagged 3).
        zk_migration_ready: bool, versions 3.., tag 3;
    }
}

nested! {
    /// One API's supported version range.
    pub struct ApiVersion [in "api_keys.", flexible 3] {
        /// The API index.
        api_key: i16;
        /// The minimum supported version, inclusive.
        min_version: i16;
        /// The maximum supported version, inclusive.
        max_version: i16;
    }
}

nested! {
    /// A feature the broker supports (v3+, tag 0).
    pub struct SupportedFeatureKey [in "supported_features.", flexible 3] {
        /// The feature name.
        name: String, versions 3..;
        /// The minimum supported version.
        min_version: i16, versions 3..;
        /// The maximum supported version.
        max_version: i16, versions 3..;
    }
}

nested! {
    /// A cluster-wide finalized feature (v3+, tag 2), e.g. `transaction.version`.
    pub struct FinalizedFeatureKey [in "finalized_features.", flexible 3] {
        /// The feature name.
        name: String, versions 3..;
        /// The finalized maximum version level.
        max_version_level: i16, versions 3..;
        /// The finalized minimum version level.
        min_version_level: i16, versions 3..;
    }
}

impl ApiVersionsResponse {
    /// An answer listing `keys` as `(api, min version, max version)`, no
    /// error and no features: what a scripted broker in a test replies.
    pub fn listing(keys: &[(ApiKey, i16, i16)]) -> Self {
        ApiVersionsResponse {
            api_keys: keys
                .iter()
                .map(|&(api, min_version, max_version)| ApiVersion {
                    api_key: api.code(),
                    min_version,
                    max_version,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    /// The broker's range for `api`, if it supports it.
    pub fn range_of(&self, api: ApiKey) -> Option<VersionRange> {
        self.api_keys
            .iter()
            .find(|a| a.api_key == api.code())
            .map(|a| VersionRange::new(a.min_version, a.max_version))
    }
    /// The finalized max version level of feature `name`, if finalized.
    pub fn finalized_feature(&self, name: &str) -> Option<i16> {
        self.finalized_features
            .iter()
            .find(|f| f.name == name)
            .map(|f| f.max_version_level)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;
    use crate::testing::decode_fixture;

    /// A v3 response captured by hand from the layout in the schema:
    /// error 0, one API (Produce 3..11), throttle 0, finalized transaction.version=2 at epoch 5.
    #[test]
    fn v3_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, // error_code
            2, // compact array: 1 element
            0, 0, 0, 3, 0, 11, 0, // Produce 3..11, no tags
            0, 0, 0, 0, // throttle
            2, // two tagged fields
            1, 8, 0, 0, 0, 0, 0, 0, 0, 5, // tag 1 epoch = 5
            2, 26, 2, // tag 2, size 26, 1 element
            20, b't', b'r', b'a', b'n', b's', b'a', b'c', b't', b'i', b'o', b'n', b'.', b'v', b'e',
            b'r', b's', b'i', b'o', b'n', // name (19 chars)
            0, 2, 0, 2, 0, // max 2, min 2, no tags
        ];
        let resp: ApiVersionsResponse = decode_fixture(bytes, 3);
        assert_eq!(
            resp.range_of(ApiKey::Produce),
            Some(VersionRange::new(3, 11))
        );
        assert_eq!(resp.finalized_features_epoch, 5);
        assert_eq!(resp.finalized_feature("transaction.version"), Some(2));
    }

    #[test]
    fn v0_request_is_empty() {
        assert!(
            ApiVersionsRequest::default()
                .encode_to_vec(0)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn listing_lists_the_ranges_without_error() {
        use crate::{ApiKey, VersionRange, messages::ApiVersionsResponse};
        let resp =
            ApiVersionsResponse::listing(&[(ApiKey::Produce, 3, 13), (ApiKey::Metadata, 0, 13)]);
        assert_eq!(
            resp.range_of(ApiKey::Produce),
            Some(VersionRange::new(3, 13))
        );
        assert_eq!(resp.error_code, 0);
    }
}
