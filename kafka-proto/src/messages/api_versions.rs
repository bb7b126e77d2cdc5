//! ApiVersions (key 18), versions 0–5, flexible from 3.
//!
//! The response carries the broker's version range per API and, from v3, the
//! supported and finalized features as tagged fields (tags 0–3). The response
//! header is always v0 (see [`crate::header`]).

use crate::primitives::{
    Reader, TaggedFields, TaggedWriter, put_array, put_bool, put_nullable_string, put_string,
    put_unknown_tagged_fields,
};
use crate::{
    ApiKey, DecodeError, EncodeError, Message, Request, Response, VersionRange, check_field,
};
use bytes::BufMut;

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
#[derive(Debug, Clone, PartialEq)]
pub struct ApiVersionsRequest {
    /// The name of the client (v3+).
    pub client_software_name: String,
    /// The version of the client (v3+).
    pub client_software_version: String,
    /// The cluster id the client intends to connect to (v5+).
    pub cluster_id: Option<String>,
    /// The node id the client intends to connect to (v5+), -1 if unknown.
    pub node_id: i32,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl Default for ApiVersionsRequest {
    fn default() -> Self {
        Self {
            client_software_name: String::new(),
            client_software_version: String::new(),
            cluster_id: None,
            node_id: -1,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl Message for ApiVersionsRequest {
    const API_KEY: ApiKey = ApiKey::ApiVersions;
    const VERSIONS: VersionRange = VersionRange::new(0, 5);
    const FLEXIBLE_MIN: i16 = 3;

    fn encode_body<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let d = Self::default();
        let flex = Self::is_flexible(version);
        check_field(
            version >= 3,
            &self.client_software_name,
            &d.client_software_name,
            "client_software_name",
        )?;
        check_field(
            version >= 3,
            &self.client_software_version,
            &d.client_software_version,
            "client_software_version",
        )?;
        check_field(version >= 5, &self.cluster_id, &d.cluster_id, "cluster_id")?;
        check_field(version >= 5, &self.node_id, &d.node_id, "node_id")?;
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &d.unknown_tagged_fields,
            "_tagged_fields",
        )?;
        if version >= 3 {
            put_string(
                buf,
                "client_software_name",
                &self.client_software_name,
                flex,
            )?;
            put_string(
                buf,
                "client_software_version",
                &self.client_software_version,
                flex,
            )?;
        }
        if version >= 5 {
            put_nullable_string(buf, "cluster_id", self.cluster_id.as_deref(), flex)?;
            buf.put_i32(self.node_id);
        }
        if flex {
            put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
        }
        Ok(())
    }

    fn decode_body(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = Self::is_flexible(version);
        let mut m = Self::default();
        if version >= 3 {
            m.client_software_name = r.string("client_software_name", flex)?;
            m.client_software_version = r.string("client_software_version", flex)?;
        }
        if version >= 5 {
            m.cluster_id = r.nullable_string("cluster_id", flex)?;
            m.node_id = r.i32("node_id")?;
        }
        if flex {
            m.unknown_tagged_fields = r.unknown_tagged_fields("_tagged_fields")?;
        }
        Ok(m)
    }
}

impl Request for ApiVersionsRequest {
    type Response = ApiVersionsResponse;
}

/// One API's supported version range.
///
/// ```
/// use kafka_proto::{
///     ApiKey, Message,
///     messages::{ApiVersion, ApiVersionsResponse},
/// };
/// let resp = ApiVersionsResponse {
///     api_keys: vec![ApiVersion {
///         api_key: ApiKey::Produce.code(),
///         min_version: 3,
///         max_version: 13,
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// let back = ApiVersionsResponse::decode(&resp.encode_to_vec(4).unwrap(), 4).unwrap();
/// assert_eq!(back.api_keys[0].max_version, 13);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ApiVersion {
    /// The API index.
    pub api_key: i16,
    /// The minimum supported version, inclusive.
    pub min_version: i16,
    /// The maximum supported version, inclusive.
    pub max_version: i16,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

/// A feature the broker supports (v3+, tag 0).
///
/// ```
/// use kafka_proto::{
///     Message,
///     messages::{ApiVersionsResponse, SupportedFeatureKey},
/// };
/// let resp = ApiVersionsResponse {
///     supported_features: vec![SupportedFeatureKey {
///         name: "transaction.version".into(),
///         min_version: 0,
///         max_version: 2,
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// let back = ApiVersionsResponse::decode(&resp.encode_to_vec(3).unwrap(), 3).unwrap();
/// assert_eq!(back.supported_features, resp.supported_features);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SupportedFeatureKey {
    /// The feature name.
    pub name: String,
    /// The minimum supported version.
    pub min_version: i16,
    /// The maximum supported version.
    pub max_version: i16,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

/// A cluster-wide finalized feature (v3+, tag 2), e.g. `transaction.version`.
///
/// ```
/// use kafka_proto::messages::FinalizedFeatureKey;
/// let f = FinalizedFeatureKey {
///     name: "metadata.version".into(),
///     max_version_level: 27,
///     min_version_level: 27,
///     ..Default::default()
/// };
/// assert!(f.min_version_level <= f.max_version_level);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FinalizedFeatureKey {
    /// The feature name.
    pub name: String,
    /// The finalized maximum version level.
    pub max_version_level: i16,
    /// The finalized minimum version level.
    pub min_version_level: i16,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

/// The broker's supported API versions and features.
///
/// ```
/// use kafka_proto::{
///     Message,
///     messages::{ApiVersionsResponse, FinalizedFeatureKey},
/// };
/// let resp = ApiVersionsResponse {
///     finalized_features_epoch: 3,
///     finalized_features: vec![FinalizedFeatureKey {
///         name: "transaction.version".into(),
///         max_version_level: 2,
///         min_version_level: 2,
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// let back = ApiVersionsResponse::decode(&resp.encode_to_vec(3).unwrap(), 3).unwrap();
/// assert_eq!(back.finalized_feature("transaction.version"), Some(2));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ApiVersionsResponse {
    /// The top-level error code.
    pub error_code: i16,
    /// The APIs supported by the broker.
    pub api_keys: Vec<ApiVersion>,
    /// Throttle time (v1+).
    pub throttle_time_ms: i32,
    /// Features supported by the broker (v3+, tagged 0).
    pub supported_features: Vec<SupportedFeatureKey>,
    /// Epoch of the finalized features, -1 if unknown (v3+, tagged 1).
    pub finalized_features_epoch: i64,
    /// Cluster-wide finalized features (v3+, tagged 2).
    pub finalized_features: Vec<FinalizedFeatureKey>,
    /// Set by a KRaft controller ready for ZK migration (v3+, tagged 3).
    pub zk_migration_ready: bool,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl Default for ApiVersionsResponse {
    fn default() -> Self {
        Self {
            error_code: 0,
            api_keys: Vec::new(),
            throttle_time_ms: 0,
            supported_features: Vec::new(),
            finalized_features_epoch: -1,
            finalized_features: Vec::new(),
            zk_migration_ready: false,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl ApiVersionsResponse {
    /// The broker's range for `api`, if it supports it.
    ///
    /// ```
    /// # use kafka_proto::{messages::{ApiVersion, ApiVersionsResponse}, ApiKey, VersionRange};
    /// let resp = ApiVersionsResponse {
    ///     api_keys: vec![ApiVersion {
    ///         api_key: 22,
    ///         min_version: 0,
    ///         max_version: 5,
    ///         ..Default::default()
    ///     }],
    ///     ..Default::default()
    /// };
    /// assert_eq!(
    ///     resp.range_of(ApiKey::InitProducerId),
    ///     Some(VersionRange::new(0, 5))
    /// );
    /// assert_eq!(resp.range_of(ApiKey::EndTxn), None);
    /// ```
    pub fn range_of(&self, api: ApiKey) -> Option<VersionRange> {
        self.api_keys
            .iter()
            .find(|a| a.api_key == api.code())
            .map(|a| VersionRange::new(a.min_version, a.max_version))
    }

    /// The finalized max version level of feature `name`, if finalized.
    ///
    /// ```
    /// # use kafka_proto::messages::{ApiVersionsResponse, FinalizedFeatureKey};
    /// let resp = ApiVersionsResponse {
    ///     finalized_features: vec![FinalizedFeatureKey {
    ///         name: "transaction.version".into(),
    ///         max_version_level: 2,
    ///         ..Default::default()
    ///     }],
    ///     ..Default::default()
    /// };
    /// assert_eq!(resp.finalized_feature("transaction.version"), Some(2));
    /// assert_eq!(resp.finalized_feature("group.version"), None);
    /// ```
    pub fn finalized_feature(&self, name: &str) -> Option<i16> {
        self.finalized_features
            .iter()
            .find(|f| f.name == name)
            .map(|f| f.max_version_level)
    }
}

impl Message for ApiVersionsResponse {
    const API_KEY: ApiKey = ApiKey::ApiVersions;
    const VERSIONS: VersionRange = VersionRange::new(0, 5);
    const FLEXIBLE_MIN: i16 = 3;

    fn encode_body<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let d = Self::default();
        let flex = Self::is_flexible(version);
        check_field(
            version >= 1,
            &self.throttle_time_ms,
            &d.throttle_time_ms,
            "throttle_time_ms",
        )?;
        check_field(
            flex,
            &self.supported_features,
            &d.supported_features,
            "supported_features",
        )?;
        check_field(
            flex,
            &self.finalized_features_epoch,
            &d.finalized_features_epoch,
            "finalized_features_epoch",
        )?;
        check_field(
            flex,
            &self.finalized_features,
            &d.finalized_features,
            "finalized_features",
        )?;
        check_field(
            flex,
            &self.zk_migration_ready,
            &d.zk_migration_ready,
            "zk_migration_ready",
        )?;
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &d.unknown_tagged_fields,
            "_tagged_fields",
        )?;
        buf.put_i16(self.error_code);
        put_array(buf, "api_keys", &self.api_keys, flex, |b, a| {
            check_field(
                flex,
                &a.unknown_tagged_fields,
                &Vec::new(),
                "api_keys._tagged_fields",
            )?;
            b.put_i16(a.api_key);
            b.put_i16(a.min_version);
            b.put_i16(a.max_version);
            if flex {
                put_unknown_tagged_fields(b, &a.unknown_tagged_fields);
            }
            Ok(())
        })?;
        if version >= 1 {
            buf.put_i32(self.throttle_time_ms);
        }
        if flex {
            let mut t = TaggedWriter::new();
            if !self.supported_features.is_empty() {
                t.field(0, |b| {
                    put_array(
                        b,
                        "supported_features",
                        &self.supported_features,
                        true,
                        |b, f| {
                            put_string(b, "supported_features.name", &f.name, true)?;
                            b.put_i16(f.min_version);
                            b.put_i16(f.max_version);
                            put_unknown_tagged_fields(b, &f.unknown_tagged_fields);
                            Ok(())
                        },
                    )
                })?;
            }
            if self.finalized_features_epoch != -1 {
                t.field(1, |b| {
                    b.put_i64(self.finalized_features_epoch);
                    Ok(())
                })?;
            }
            if !self.finalized_features.is_empty() {
                t.field(2, |b| {
                    put_array(
                        b,
                        "finalized_features",
                        &self.finalized_features,
                        true,
                        |b, f| {
                            put_string(b, "finalized_features.name", &f.name, true)?;
                            b.put_i16(f.max_version_level);
                            b.put_i16(f.min_version_level);
                            put_unknown_tagged_fields(b, &f.unknown_tagged_fields);
                            Ok(())
                        },
                    )
                })?;
            }
            if self.zk_migration_ready {
                t.field(3, |b| {
                    put_bool(b, true);
                    Ok(())
                })?;
            }
            t.finish(buf, &self.unknown_tagged_fields)?;
        }
        Ok(())
    }

    fn decode_body(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = Self::is_flexible(version);
        let mut m = Self {
            error_code: r.i16("error_code")?,
            ..Default::default()
        };
        m.api_keys = r.array("api_keys", flex, |r| {
            Ok(ApiVersion {
                api_key: r.i16("api_keys.api_key")?,
                min_version: r.i16("api_keys.min_version")?,
                max_version: r.i16("api_keys.max_version")?,
                unknown_tagged_fields: if flex {
                    r.unknown_tagged_fields("api_keys._tagged_fields")?
                } else {
                    Vec::new()
                },
            })
        })?;
        if version >= 1 {
            m.throttle_time_ms = r.i32("throttle_time_ms")?;
        }
        if flex {
            let mut supported = Vec::new();
            let mut epoch = -1;
            let mut finalized = Vec::new();
            let mut zk = false;
            m.unknown_tagged_fields = r.tagged_fields("_tagged_fields", |tag, r| {
                match tag {
                    0 => {
                        supported = r.array("supported_features", true, |r| {
                            Ok(SupportedFeatureKey {
                                name: r.string("supported_features.name", true)?,
                                min_version: r.i16("supported_features.min_version")?,
                                max_version: r.i16("supported_features.max_version")?,
                                unknown_tagged_fields: r
                                    .unknown_tagged_fields("supported_features._tagged_fields")?,
                            })
                        })?
                    }
                    1 => epoch = r.i64("finalized_features_epoch")?,
                    2 => {
                        finalized = r.array("finalized_features", true, |r| {
                            Ok(FinalizedFeatureKey {
                                name: r.string("finalized_features.name", true)?,
                                max_version_level: r.i16("finalized_features.max_version_level")?,
                                min_version_level: r.i16("finalized_features.min_version_level")?,
                                unknown_tagged_fields: r
                                    .unknown_tagged_fields("finalized_features._tagged_fields")?,
                            })
                        })?
                    }
                    3 => zk = r.bool("zk_migration_ready")?,
                    _ => return Ok(false),
                }
                Ok(true)
            })?;
            m.supported_features = supported;
            m.finalized_features_epoch = epoch;
            m.finalized_features = finalized;
            m.zk_migration_ready = zk;
        }
        Ok(m)
    }
}

impl Response for ApiVersionsResponse {}

#[cfg(any(test, feature = "arbitrary"))]
mod arbitrary {
    use super::*;
    use crate::testing::{VersionedArbitrary, arb_string, arb_tagged, opt_nullable_string};
    use proptest::prelude::*;

    impl VersionedArbitrary for ApiVersionsRequest {
        fn arbitrary(version: i16) -> BoxedStrategy<Self> {
            let flex = version >= 3;
            (
                arb_string(version >= 3),
                arb_string(version >= 3),
                opt_nullable_string(version >= 5),
                if version >= 5 {
                    any::<i32>().boxed()
                } else {
                    Just(-1).boxed()
                },
                arb_tagged(flex),
            )
                .prop_map(|(a, b, c, d, t)| ApiVersionsRequest {
                    client_software_name: a,
                    client_software_version: b,
                    cluster_id: c,
                    node_id: d,
                    unknown_tagged_fields: t,
                })
                .boxed()
        }
    }

    impl VersionedArbitrary for ApiVersionsResponse {
        fn arbitrary(version: i16) -> BoxedStrategy<Self> {
            let flex = version >= 3;
            let api = (any::<i16>(), any::<i16>(), any::<i16>(), arb_tagged(flex)).prop_map(
                |(k, lo, hi, t)| ApiVersion {
                    api_key: k,
                    min_version: lo,
                    max_version: hi,
                    unknown_tagged_fields: t,
                },
            );
            let sup = (
                arb_string(true),
                any::<i16>(),
                any::<i16>(),
                arb_tagged(true),
            )
                .prop_map(|(n, lo, hi, t)| SupportedFeatureKey {
                    name: n,
                    min_version: lo,
                    max_version: hi,
                    unknown_tagged_fields: t,
                });
            let fin = (
                arb_string(true),
                any::<i16>(),
                any::<i16>(),
                arb_tagged(true),
            )
                .prop_map(|(n, hi, lo, t)| FinalizedFeatureKey {
                    name: n,
                    max_version_level: hi,
                    min_version_level: lo,
                    unknown_tagged_fields: t,
                });
            (
                any::<i16>(),
                proptest::collection::vec(api, 0..4),
                if version >= 1 {
                    any::<i32>().boxed()
                } else {
                    Just(0).boxed()
                },
                if flex {
                    proptest::collection::vec(sup, 0..3).boxed()
                } else {
                    Just(vec![]).boxed()
                },
                if flex {
                    any::<i64>().boxed()
                } else {
                    Just(-1i64).boxed()
                },
                if flex {
                    proptest::collection::vec(fin, 0..3).boxed()
                } else {
                    Just(vec![]).boxed()
                },
                if flex {
                    any::<bool>().boxed()
                } else {
                    Just(false).boxed()
                },
                arb_tagged(flex)
                    .prop_map(|t| t.into_iter().map(|(k, v)| (k + 4, v)).collect::<Vec<_>>()),
            )
                .prop_map(|(e, k, th, s, ep, f, zk, t)| ApiVersionsResponse {
                    error_code: e,
                    api_keys: k,
                    throttle_time_ms: th,
                    supported_features: s,
                    finalized_features_epoch: ep,
                    finalized_features: f,
                    zk_migration_ready: zk,
                    unknown_tagged_fields: t,
                })
                .boxed()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let resp = ApiVersionsResponse::decode(bytes, 3).unwrap();
        assert_eq!(
            resp.range_of(ApiKey::Produce),
            Some(VersionRange::new(3, 11))
        );
        assert_eq!(resp.finalized_features_epoch, 5);
        assert_eq!(resp.finalized_feature("transaction.version"), Some(2));
        assert_eq!(resp.encode_to_vec(3).unwrap(), bytes);
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
}

#[cfg(test)]
mod round_trip {
    use super::*;
    use crate::testing::{round_trip_all_versions, truncations_fail_cleanly};

    #[test]
    fn request_every_version() {
        round_trip_all_versions::<ApiVersionsRequest>(64);
        truncations_fail_cleanly::<ApiVersionsRequest>(8);
    }

    #[test]
    fn response_every_version() {
        round_trip_all_versions::<ApiVersionsResponse>(64);
        truncations_fail_cleanly::<ApiVersionsResponse>(8);
    }
}
