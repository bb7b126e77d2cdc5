//! DescribeConfigs (key 32), versions 1–4, flexible from 4.
//!
//! Describes the configuration of topics, brokers and other resources. From v3
//! the request can ask for documentation and each config carries its type and
//! documentation.

use super::{check_tags, read_tags, write_tags};
use crate::primitives::{
    Reader, TaggedFields, put_array, put_bool, put_nullable_array, put_nullable_string, put_string,
};
use crate::{
    ApiKey, DecodeError, EncodeError, Message, Request, Response, VersionRange, check_field,
};
use bytes::BufMut;

/// Describes the configuration of resources.
///
/// ```
/// use kafka_proto::{
///     Message,
///     messages::{DescribeConfigsRequest, DescribeConfigsRequestDescribeConfigsResource},
/// };
/// let req = DescribeConfigsRequest {
///     resources: vec![DescribeConfigsRequestDescribeConfigsResource {
///         resource_type: 2, // TOPIC
///         resource_name: "orders".into(),
///         configuration_keys: Some(vec!["min.insync.replicas".into()]),
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// let bytes = req.encode_to_vec(4).unwrap();
/// assert_eq!(DescribeConfigsRequest::decode(&bytes, 4).unwrap(), req);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DescribeConfigsRequest {
    /// The resources whose configurations we want to describe.
    pub resources: Vec<DescribeConfigsRequestDescribeConfigsResource>,
    /// True if we should include all synonyms.
    pub include_synonyms: bool,
    /// True if we should include configuration documentation (v3+).
    pub include_documentation: bool,
    /// Unknown tagged fields (v4+).
    pub unknown_tagged_fields: TaggedFields,
}

/// One resource to describe.
///
/// ```
/// use kafka_proto::messages::DescribeConfigsRequestDescribeConfigsResource;
/// // Every configuration of broker 1.
/// let r = DescribeConfigsRequestDescribeConfigsResource {
///     resource_type: 4,
///     resource_name: "1".into(),
///     configuration_keys: None,
///     ..Default::default()
/// };
/// assert!(r.configuration_keys.is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DescribeConfigsRequestDescribeConfigsResource {
    /// The resource type (2 = topic, 4 = broker, 8 = broker logger, …).
    pub resource_type: i8,
    /// The resource name.
    pub resource_name: String,
    /// The configuration keys to list, or null to list all configuration keys.
    pub configuration_keys: Option<Vec<String>>,
    /// Unknown tagged fields (v4+).
    pub unknown_tagged_fields: TaggedFields,
}

impl Message for DescribeConfigsRequest {
    const API_KEY: ApiKey = ApiKey::DescribeConfigs;
    const VERSIONS: VersionRange = VersionRange::new(1, 4);
    const FLEXIBLE_MIN: i16 = 4;

    fn encode_body<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let d = Self::default();
        let flex = Self::is_flexible(version);
        check_field(
            version >= 3,
            &self.include_documentation,
            &d.include_documentation,
            "include_documentation",
        )?;
        check_tags(flex, &self.unknown_tagged_fields, "_tagged_fields")?;
        put_array(buf, "resources", &self.resources, flex, |b, res| {
            check_tags(flex, &res.unknown_tagged_fields, "resources._tagged_fields")?;
            b.put_i8(res.resource_type);
            put_string(b, "resources.resource_name", &res.resource_name, flex)?;
            put_nullable_array(
                b,
                "resources.configuration_keys",
                res.configuration_keys.as_deref(),
                flex,
                |b, k| put_string(b, "resources.configuration_keys", k, flex),
            )?;
            write_tags(b, flex, &res.unknown_tagged_fields);
            Ok(())
        })?;
        put_bool(buf, self.include_synonyms);
        if version >= 3 {
            put_bool(buf, self.include_documentation);
        }
        write_tags(buf, flex, &self.unknown_tagged_fields);
        Ok(())
    }

    fn decode_body(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = Self::is_flexible(version);
        let mut m = Self {
            resources: r.array("resources", flex, |r| {
                Ok(DescribeConfigsRequestDescribeConfigsResource {
                    resource_type: r.i8("resources.resource_type")?,
                    resource_name: r.string("resources.resource_name", flex)?,
                    configuration_keys: r.nullable_array(
                        "resources.configuration_keys",
                        flex,
                        |r| r.string("resources.configuration_keys", flex),
                    )?,
                    unknown_tagged_fields: read_tags(r, flex, "resources._tagged_fields")?,
                })
            })?,
            include_synonyms: r.bool("include_synonyms")?,
            ..Default::default()
        };
        if version >= 3 {
            m.include_documentation = r.bool("include_documentation")?;
        }
        m.unknown_tagged_fields = read_tags(r, flex, "_tagged_fields")?;
        Ok(m)
    }
}

impl Request for DescribeConfigsRequest {
    type Response = DescribeConfigsResponse;
}

/// The configurations of the requested resources.
///
/// ```
/// use kafka_proto::Message;
/// use kafka_proto::messages::{
///     DescribeConfigsResponse, DescribeConfigsResponseDescribeConfigsResourceResult,
///     DescribeConfigsResponseDescribeConfigsResult,
/// };
/// let resp = DescribeConfigsResponse {
///     results: vec![DescribeConfigsResponseDescribeConfigsResult {
///         resource_type: 2,
///         resource_name: "orders".into(),
///         configs: vec![DescribeConfigsResponseDescribeConfigsResourceResult {
///             name: "min.insync.replicas".into(),
///             value: Some("2".into()),
///             ..Default::default()
///         }],
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// let back = DescribeConfigsResponse::decode(&resp.encode_to_vec(4).unwrap(), 4).unwrap();
/// assert_eq!(back.results[0].configs[0].value.as_deref(), Some("2"));
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DescribeConfigsResponse {
    /// Throttle time in milliseconds, or zero.
    pub throttle_time_ms: i32,
    /// The results for each resource.
    pub results: Vec<DescribeConfigsResponseDescribeConfigsResult>,
    /// Unknown tagged fields (v4+).
    pub unknown_tagged_fields: TaggedFields,
}

/// The result for one resource.
///
/// ```
/// use kafka_proto::{Message, messages::*};
/// let resp = DescribeConfigsResponse {
///     results: vec![DescribeConfigsResponseDescribeConfigsResult {
///         resource_type: 2,
///         resource_name: "orders".into(),
///         configs: vec![DescribeConfigsResponseDescribeConfigsResourceResult {
///             name: "min.insync.replicas".into(),
///             value: Some("2".into()),
///             ..Default::default()
///         }],
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// assert_eq!(
///     DescribeConfigsResponse::decode(&resp.encode_to_vec(4).unwrap(), 4).unwrap(),
///     resp
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DescribeConfigsResponseDescribeConfigsResult {
    /// The error code, or 0 if we were able to successfully describe the configurations.
    pub error_code: i16,
    /// The error message, or null.
    pub error_message: Option<String>,
    /// The resource type.
    pub resource_type: i8,
    /// The resource name.
    pub resource_name: String,
    /// Each listed configuration.
    pub configs: Vec<DescribeConfigsResponseDescribeConfigsResourceResult>,
    /// Unknown tagged fields (v4+).
    pub unknown_tagged_fields: TaggedFields,
}

/// One configuration entry.
///
/// ```
/// use kafka_proto::messages::DescribeConfigsResponseDescribeConfigsResourceResult as Entry;
/// let e = Entry {
///     name: "transaction.state.log.min.isr".into(),
///     value: Some("2".into()),
///     read_only: true,
///     ..Default::default()
/// };
/// assert_eq!(e.config_source, -1, "unknown source by default");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct DescribeConfigsResponseDescribeConfigsResourceResult {
    /// The configuration name.
    pub name: String,
    /// The configuration value.
    pub value: Option<String>,
    /// True if the configuration is read-only.
    pub read_only: bool,
    /// The configuration source (default -1).
    pub config_source: i8,
    /// True if this configuration is sensitive.
    pub is_sensitive: bool,
    /// The synonyms for this configuration key.
    pub synonyms: Vec<DescribeConfigsResponseDescribeConfigsSynonym>,
    /// The configuration data type (v3+): BOOLEAN, STRING, INT, SHORT, LONG, DOUBLE, LIST, CLASS, PASSWORD.
    pub config_type: i8,
    /// The configuration documentation (v3+).
    pub documentation: Option<String>,
    /// Unknown tagged fields (v4+).
    pub unknown_tagged_fields: TaggedFields,
}

impl Default for DescribeConfigsResponseDescribeConfigsResourceResult {
    fn default() -> Self {
        Self {
            name: String::new(),
            value: None,
            read_only: false,
            config_source: -1,
            is_sensitive: false,
            synonyms: Vec::new(),
            config_type: 0,
            documentation: None,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

/// A synonym of a configuration key.
///
/// ```
/// use kafka_proto::{Message, messages::*};
/// let entry = DescribeConfigsResponseDescribeConfigsResourceResult {
///     name: "retention.ms".into(),
///     synonyms: vec![DescribeConfigsResponseDescribeConfigsSynonym {
///         name: "log.retention.ms".into(),
///         value: Some("86400000".into()),
///         source: 5,
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// let resp = DescribeConfigsResponse {
///     results: vec![DescribeConfigsResponseDescribeConfigsResult {
///         configs: vec![entry],
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// let back = DescribeConfigsResponse::decode(&resp.encode_to_vec(1).unwrap(), 1).unwrap();
/// assert_eq!(
///     back.results[0].configs[0].synonyms[0].name,
///     "log.retention.ms"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DescribeConfigsResponseDescribeConfigsSynonym {
    /// The synonym name.
    pub name: String,
    /// The synonym value.
    pub value: Option<String>,
    /// The synonym source.
    pub source: i8,
    /// Unknown tagged fields (v4+).
    pub unknown_tagged_fields: TaggedFields,
}

impl DescribeConfigsResponseDescribeConfigsResourceResult {
    fn encode<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let d = Self::default();
        let flex = version >= 4;
        check_field(
            version >= 3,
            &self.config_type,
            &d.config_type,
            "results.configs.config_type",
        )?;
        check_field(
            version >= 3,
            &self.documentation,
            &d.documentation,
            "results.configs.documentation",
        )?;
        check_tags(
            flex,
            &self.unknown_tagged_fields,
            "results.configs._tagged_fields",
        )?;
        put_string(buf, "results.configs.name", &self.name, flex)?;
        put_nullable_string(buf, "results.configs.value", self.value.as_deref(), flex)?;
        put_bool(buf, self.read_only);
        buf.put_i8(self.config_source);
        put_bool(buf, self.is_sensitive);
        put_array(
            buf,
            "results.configs.synonyms",
            &self.synonyms,
            flex,
            |b, s| {
                check_tags(
                    flex,
                    &s.unknown_tagged_fields,
                    "results.configs.synonyms._tagged_fields",
                )?;
                put_string(b, "results.configs.synonyms.name", &s.name, flex)?;
                put_nullable_string(
                    b,
                    "results.configs.synonyms.value",
                    s.value.as_deref(),
                    flex,
                )?;
                b.put_i8(s.source);
                write_tags(b, flex, &s.unknown_tagged_fields);
                Ok(())
            },
        )?;
        if version >= 3 {
            buf.put_i8(self.config_type);
            put_nullable_string(
                buf,
                "results.configs.documentation",
                self.documentation.as_deref(),
                flex,
            )?;
        }
        write_tags(buf, flex, &self.unknown_tagged_fields);
        Ok(())
    }

    fn decode(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 4;
        let mut m = Self {
            name: r.string("results.configs.name", flex)?,
            value: r.nullable_string("results.configs.value", flex)?,
            read_only: r.bool("results.configs.read_only")?,
            config_source: r.i8("results.configs.config_source")?,
            is_sensitive: r.bool("results.configs.is_sensitive")?,
            synonyms: r.array("results.configs.synonyms", flex, |r| {
                Ok(DescribeConfigsResponseDescribeConfigsSynonym {
                    name: r.string("results.configs.synonyms.name", flex)?,
                    value: r.nullable_string("results.configs.synonyms.value", flex)?,
                    source: r.i8("results.configs.synonyms.source")?,
                    unknown_tagged_fields: read_tags(
                        r,
                        flex,
                        "results.configs.synonyms._tagged_fields",
                    )?,
                })
            })?,
            ..Default::default()
        };
        if version >= 3 {
            m.config_type = r.i8("results.configs.config_type")?;
            m.documentation = r.nullable_string("results.configs.documentation", flex)?;
        }
        m.unknown_tagged_fields = read_tags(r, flex, "results.configs._tagged_fields")?;
        Ok(m)
    }
}

impl Message for DescribeConfigsResponse {
    const API_KEY: ApiKey = ApiKey::DescribeConfigs;
    const VERSIONS: VersionRange = VersionRange::new(1, 4);
    const FLEXIBLE_MIN: i16 = 4;

    fn encode_body<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let flex = Self::is_flexible(version);
        check_tags(flex, &self.unknown_tagged_fields, "_tagged_fields")?;
        buf.put_i32(self.throttle_time_ms);
        put_array(buf, "results", &self.results, flex, |b, res| {
            check_tags(flex, &res.unknown_tagged_fields, "results._tagged_fields")?;
            b.put_i16(res.error_code);
            put_nullable_string(
                b,
                "results.error_message",
                res.error_message.as_deref(),
                flex,
            )?;
            b.put_i8(res.resource_type);
            put_string(b, "results.resource_name", &res.resource_name, flex)?;
            put_array(b, "results.configs", &res.configs, flex, |b, c| {
                c.encode(b, version)
            })?;
            write_tags(b, flex, &res.unknown_tagged_fields);
            Ok(())
        })?;
        write_tags(buf, flex, &self.unknown_tagged_fields);
        Ok(())
    }

    fn decode_body(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = Self::is_flexible(version);
        Ok(Self {
            throttle_time_ms: r.i32("throttle_time_ms")?,
            results: r.array("results", flex, |r| {
                Ok(DescribeConfigsResponseDescribeConfigsResult {
                    error_code: r.i16("results.error_code")?,
                    error_message: r.nullable_string("results.error_message", flex)?,
                    resource_type: r.i8("results.resource_type")?,
                    resource_name: r.string("results.resource_name", flex)?,
                    configs: r.array("results.configs", flex, |r| {
                        DescribeConfigsResponseDescribeConfigsResourceResult::decode(r, version)
                    })?,
                    unknown_tagged_fields: read_tags(r, flex, "results._tagged_fields")?,
                })
            })?,
            unknown_tagged_fields: read_tags(r, flex, "_tagged_fields")?,
        })
    }
}

impl Response for DescribeConfigsResponse {}

#[cfg(any(test, feature = "arbitrary"))]
mod arbitrary {
    use super::*;
    use crate::testing::{
        VersionedArbitrary, arb_or, arb_string, arb_tagged, arb_vec, opt_nullable_string,
    };
    use proptest::prelude::*;

    impl VersionedArbitrary for DescribeConfigsRequest {
        fn arbitrary(version: i16) -> BoxedStrategy<Self> {
            let flex = version >= 4;
            let resource = (
                any::<i8>(),
                arb_string(true),
                proptest::option::of(arb_vec(true, arb_string(true))),
                arb_tagged(flex),
            )
                .prop_map(|(ty, name, keys, t)| {
                    DescribeConfigsRequestDescribeConfigsResource {
                        resource_type: ty,
                        resource_name: name,
                        configuration_keys: keys,
                        unknown_tagged_fields: t,
                    }
                });
            (
                arb_vec(true, resource),
                any::<bool>(),
                arb_or(version >= 3, false),
                arb_tagged(flex),
            )
                .prop_map(|(resources, syn, doc, t)| DescribeConfigsRequest {
                    resources,
                    include_synonyms: syn,
                    include_documentation: doc,
                    unknown_tagged_fields: t,
                })
                .boxed()
        }
    }

    impl VersionedArbitrary for DescribeConfigsResponse {
        fn arbitrary(version: i16) -> BoxedStrategy<Self> {
            let flex = version >= 4;
            let synonym = (
                arb_string(true),
                opt_nullable_string(true),
                any::<i8>(),
                arb_tagged(flex),
            )
                .prop_map(|(name, value, source, t)| {
                    DescribeConfigsResponseDescribeConfigsSynonym {
                        name,
                        value,
                        source,
                        unknown_tagged_fields: t,
                    }
                });
            let config = (
                arb_string(true),
                opt_nullable_string(true),
                any::<bool>(),
                any::<i8>(),
                any::<bool>(),
                arb_vec(true, synonym),
                arb_or(version >= 3, 0i8),
                opt_nullable_string(version >= 3),
                arb_tagged(flex),
            )
                .prop_map(|(name, value, ro, src, sens, syn, ty, doc, t)| {
                    DescribeConfigsResponseDescribeConfigsResourceResult {
                        name,
                        value,
                        read_only: ro,
                        config_source: src,
                        is_sensitive: sens,
                        synonyms: syn,
                        config_type: ty,
                        documentation: doc,
                        unknown_tagged_fields: t,
                    }
                });
            let result = (
                any::<i16>(),
                opt_nullable_string(true),
                any::<i8>(),
                arb_string(true),
                arb_vec(true, config),
                arb_tagged(flex),
            )
                .prop_map(|(e, msg, ty, name, configs, t)| {
                    DescribeConfigsResponseDescribeConfigsResult {
                        error_code: e,
                        error_message: msg,
                        resource_type: ty,
                        resource_name: name,
                        configs,
                        unknown_tagged_fields: t,
                    }
                });
            (any::<i32>(), arb_vec(true, result), arb_tagged(flex))
                .prop_map(|(th, results, t)| DescribeConfigsResponse {
                    throttle_time_ms: th,
                    results,
                    unknown_tagged_fields: t,
                })
                .boxed()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EncodeErrorKind;

    /// v4 request: one topic resource, all keys (null), synonyms and docs.
    #[test]
    fn v4_request_fixture() {
        let bytes: &[u8] = &[
            2, // resources: 1 element
            2, // resource_type TOPIC
            2, b't', // resource_name "t"
            0,    // configuration_keys null
            0,    // resource tags
            1,    // include_synonyms
            1,    // include_documentation
            0,    // tags
        ];
        let req = DescribeConfigsRequest::decode(bytes, 4).unwrap();
        assert_eq!(req.resources[0].resource_type, 2);
        assert_eq!(req.resources[0].resource_name, "t");
        assert_eq!(req.resources[0].configuration_keys, None);
        assert!(req.include_synonyms && req.include_documentation);
        assert_eq!(req.encode_to_vec(4).unwrap(), bytes);
        let e = req.encode_to_vec(2).unwrap_err();
        assert_eq!(e.kind, EncodeErrorKind::FieldNotInVersion);
    }

    /// v1 response: one topic, one config with one synonym.
    #[test]
    fn v1_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 0, // throttle_time_ms
            0, 0, 0, 1, // results: 1 element
            0, 0, // error_code
            0xff, 0xff, // error_message null
            2,    // resource_type
            0, 1, b't', // resource_name "t"
            0, 0, 0, 1, // configs: 1 element
            0, 3, b'm', b'i', b'r', // name "mir"
            0, 1, b'2', // value "2"
            0,    // read_only
            1,    // config_source DYNAMIC_TOPIC_CONFIG
            0,    // is_sensitive
            0, 0, 0, 1, // synonyms: 1 element
            0, 3, b'm', b'i', b'r', // name
            0, 1, b'2', // value
            1,    // source
        ];
        let resp = DescribeConfigsResponse::decode(bytes, 1).unwrap();
        let res = &resp.results[0];
        assert_eq!(res.error_message, None);
        assert_eq!(res.resource_name, "t");
        let c = &res.configs[0];
        assert_eq!(c.name, "mir");
        assert_eq!(c.value.as_deref(), Some("2"));
        assert_eq!(c.config_source, 1);
        assert_eq!(c.synonyms[0].source, 1);
        assert_eq!(c.config_type, 0);
        assert_eq!(c.documentation, None);
        assert_eq!(resp.encode_to_vec(1).unwrap(), bytes);
    }

    /// v3 adds config_type and documentation after the synonyms.
    #[test]
    fn v3_config_type_and_documentation() {
        let bytes: &[u8] = &[
            0, 0, 0, 0, // throttle_time_ms
            0, 0, 0, 1, // results
            0, 0, 0xff, 0xff, 2, 0, 1, b't', // error, null message, TOPIC, "t"
            0, 0, 0, 1, // configs
            0, 1, b'x', // name
            0xff, 0xff, // value null
            1, 5, 1, // read_only, source DEFAULT_CONFIG, sensitive
            0, 0, 0, 0, // synonyms: empty
            3, // config_type INT
            0, 2, b'h', b'i', // documentation "hi"
        ];
        let resp = DescribeConfigsResponse::decode(bytes, 3).unwrap();
        let c = &resp.results[0].configs[0];
        assert_eq!(c.value, None);
        assert!(c.read_only && c.is_sensitive);
        assert_eq!(c.config_type, 3);
        assert_eq!(c.documentation.as_deref(), Some("hi"));
        assert_eq!(resp.encode_to_vec(3).unwrap(), bytes);
        assert_eq!(
            resp.encode_to_vec(2).unwrap_err().field,
            "results.configs.config_type"
        );
    }
}

#[cfg(test)]
mod round_trip {
    use super::*;
    use crate::testing::{round_trip_all_versions, truncations_fail_cleanly};

    #[test]
    fn request_every_version() {
        round_trip_all_versions::<DescribeConfigsRequest>(64);
        truncations_fail_cleanly::<DescribeConfigsRequest>(8);
    }

    #[test]
    fn response_every_version() {
        round_trip_all_versions::<DescribeConfigsResponse>(64);
        truncations_fail_cleanly::<DescribeConfigsResponse>(8);
    }
}
