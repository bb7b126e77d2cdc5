//! CreateTopics (key 19), versions 2–7, flexible from 5.
//!
//! From v5 the response describes each created topic (partition count,
//! replication factor and configs, the latter nullable) and may carry a
//! `topic_config_error_code` as tagged field 0; from v7 it carries the topic id.

use super::read_tags;
use crate::primitives::{
    Reader, TaggedFields, TaggedWriter, Uuid, put_array, put_bool, put_nullable_array,
    put_nullable_string, put_string, put_unknown_tagged_fields, put_uuid,
};
use crate::{
    ApiKey, DecodeError, EncodeError, Message, Request, Response, VersionRange, check_field,
};
use bytes::BufMut;

/// Creates topics.
///
/// ```
/// use kafka_proto::{
///     Message,
///     messages::{CreateTopicsRequest, CreateTopicsRequestCreatableTopic},
/// };
/// let req = CreateTopicsRequest {
///     topics: vec![CreateTopicsRequestCreatableTopic {
///         name: "orders".into(),
///         num_partitions: 6,
///         replication_factor: 3,
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// assert_eq!(req.timeout_ms, 60_000);
/// let bytes = req.encode_to_vec(7).unwrap();
/// assert_eq!(CreateTopicsRequest::decode(&bytes, 7).unwrap(), req);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct CreateTopicsRequest {
    /// The topics to create.
    pub topics: Vec<CreateTopicsRequestCreatableTopic>,
    /// How long to wait in milliseconds before timing out the request (default 60000).
    pub timeout_ms: i32,
    /// If true, check that the topics can be created as specified, but don't create anything.
    pub validate_only: bool,
    /// Unknown tagged fields (v5+).
    pub unknown_tagged_fields: TaggedFields,
}

impl Default for CreateTopicsRequest {
    fn default() -> Self {
        Self {
            topics: Vec::new(),
            timeout_ms: 60000,
            validate_only: false,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

/// One topic to create.
///
/// ```
/// use kafka_proto::messages::{
///     CreateTopicsRequestCreatableTopic, CreateTopicsRequestCreatableTopicConfig,
/// };
/// let topic = CreateTopicsRequestCreatableTopic {
///     name: "orders".into(),
///     num_partitions: 3,
///     replication_factor: 1,
///     configs: vec![CreateTopicsRequestCreatableTopicConfig {
///         name: "min.insync.replicas".into(),
///         value: Some("1".into()),
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// assert_eq!(topic.configs[0].value.as_deref(), Some("1"));
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CreateTopicsRequestCreatableTopic {
    /// The topic name.
    pub name: String,
    /// The number of partitions, or -1 with a manual assignment or to use the broker default.
    pub num_partitions: i32,
    /// The replication factor, or -1 with a manual assignment or to use the broker default.
    pub replication_factor: i16,
    /// The manual partition assignment, or empty for automatic assignment.
    pub assignments: Vec<CreateTopicsRequestCreatableReplicaAssignment>,
    /// The custom topic configurations to set.
    pub configs: Vec<CreateTopicsRequestCreatableTopicConfig>,
    /// Unknown tagged fields (v5+).
    pub unknown_tagged_fields: TaggedFields,
}

/// A manual replica assignment for one partition.
///
/// ```
/// use kafka_proto::{Message, messages::*};
/// let topic = CreateTopicsRequestCreatableTopic {
///     name: "orders".into(),
///     num_partitions: -1,
///     replication_factor: -1,
///     assignments: vec![CreateTopicsRequestCreatableReplicaAssignment {
///         partition_index: 0,
///         broker_ids: vec![1, 2],
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// let req = CreateTopicsRequest {
///     topics: vec![topic],
///     ..Default::default()
/// };
/// assert_eq!(
///     CreateTopicsRequest::decode(&req.encode_to_vec(2).unwrap(), 2).unwrap(),
///     req
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CreateTopicsRequestCreatableReplicaAssignment {
    /// The partition index.
    pub partition_index: i32,
    /// The brokers to place the partition on.
    pub broker_ids: Vec<i32>,
    /// Unknown tagged fields (v5+).
    pub unknown_tagged_fields: TaggedFields,
}

/// A topic configuration to set at creation.
///
/// ```
/// use kafka_proto::messages::CreateTopicsRequestCreatableTopicConfig;
/// let c = CreateTopicsRequestCreatableTopicConfig {
///     name: "cleanup.policy".into(),
///     value: Some("compact".into()),
///     ..Default::default()
/// };
/// assert_eq!(c.name, "cleanup.policy");
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CreateTopicsRequestCreatableTopicConfig {
    /// The configuration name.
    pub name: String,
    /// The configuration value.
    pub value: Option<String>,
    /// Unknown tagged fields (v5+).
    pub unknown_tagged_fields: TaggedFields,
}

impl CreateTopicsRequestCreatableTopic {
    fn encode<B: BufMut>(&self, buf: &mut B, flex: bool) -> Result<(), EncodeError> {
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &Vec::new(),
            "topics._tagged_fields",
        )?;
        put_string(buf, "topics.name", &self.name, flex)?;
        buf.put_i32(self.num_partitions);
        buf.put_i16(self.replication_factor);
        put_array(
            buf,
            "topics.assignments",
            &self.assignments,
            flex,
            |b, a| {
                check_field(
                    flex,
                    &a.unknown_tagged_fields,
                    &Vec::new(),
                    "topics.assignments._tagged_fields",
                )?;
                b.put_i32(a.partition_index);
                put_array(
                    b,
                    "topics.assignments.broker_ids",
                    &a.broker_ids,
                    flex,
                    |b, id| {
                        b.put_i32(*id);
                        Ok(())
                    },
                )?;
                if flex {
                    put_unknown_tagged_fields(b, &a.unknown_tagged_fields);
                }
                Ok(())
            },
        )?;
        put_array(buf, "topics.configs", &self.configs, flex, |b, c| {
            check_field(
                flex,
                &c.unknown_tagged_fields,
                &Vec::new(),
                "topics.configs._tagged_fields",
            )?;
            put_string(b, "topics.configs.name", &c.name, flex)?;
            put_nullable_string(b, "topics.configs.value", c.value.as_deref(), flex)?;
            if flex {
                put_unknown_tagged_fields(b, &c.unknown_tagged_fields);
            }
            Ok(())
        })?;
        if flex {
            put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
        }
        Ok(())
    }

    fn decode(r: &mut Reader<'_>, flex: bool) -> Result<Self, DecodeError> {
        Ok(Self {
            name: r.string("topics.name", flex)?,
            num_partitions: r.i32("topics.num_partitions")?,
            replication_factor: r.i16("topics.replication_factor")?,
            assignments: r.array("topics.assignments", flex, |r| {
                Ok(CreateTopicsRequestCreatableReplicaAssignment {
                    partition_index: r.i32("topics.assignments.partition_index")?,
                    broker_ids: r.array("topics.assignments.broker_ids", flex, |r| {
                        r.i32("topics.assignments.broker_ids")
                    })?,
                    unknown_tagged_fields: read_tags(r, flex, "topics.assignments._tagged_fields")?,
                })
            })?,
            configs: r.array("topics.configs", flex, |r| {
                Ok(CreateTopicsRequestCreatableTopicConfig {
                    name: r.string("topics.configs.name", flex)?,
                    value: r.nullable_string("topics.configs.value", flex)?,
                    unknown_tagged_fields: read_tags(r, flex, "topics.configs._tagged_fields")?,
                })
            })?,
            unknown_tagged_fields: read_tags(r, flex, "topics._tagged_fields")?,
        })
    }
}

impl Message for CreateTopicsRequest {
    const API_KEY: ApiKey = ApiKey::CreateTopics;
    const VERSIONS: VersionRange = VersionRange::new(2, 7);
    const FLEXIBLE_MIN: i16 = 5;

    fn encode_body<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let flex = Self::is_flexible(version);
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &Vec::new(),
            "_tagged_fields",
        )?;
        put_array(buf, "topics", &self.topics, flex, |b, t| t.encode(b, flex))?;
        buf.put_i32(self.timeout_ms);
        put_bool(buf, self.validate_only);
        if flex {
            put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
        }
        Ok(())
    }

    fn decode_body(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = Self::is_flexible(version);
        Ok(Self {
            topics: r.array("topics", flex, |r| {
                CreateTopicsRequestCreatableTopic::decode(r, flex)
            })?,
            timeout_ms: r.i32("timeout_ms")?,
            validate_only: r.bool("validate_only")?,
            unknown_tagged_fields: read_tags(r, flex, "_tagged_fields")?,
        })
    }
}

impl Request for CreateTopicsRequest {
    type Response = CreateTopicsResponse;
}

/// The result of a [`CreateTopicsRequest`].
///
/// ```
/// use kafka_proto::{
///     Message,
///     messages::{CreateTopicsResponse, CreateTopicsResponseCreatableTopicResult},
/// };
/// let resp = CreateTopicsResponse {
///     topics: vec![CreateTopicsResponseCreatableTopicResult {
///         name: "orders".into(),
///         error_code: 36, // TOPIC_ALREADY_EXISTS
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// let back = CreateTopicsResponse::decode(&resp.encode_to_vec(2).unwrap(), 2).unwrap();
/// assert_eq!(back.topics[0].error_code, 36);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CreateTopicsResponse {
    /// Throttle time in milliseconds, or zero.
    pub throttle_time_ms: i32,
    /// Results for each topic we tried to create.
    pub topics: Vec<CreateTopicsResponseCreatableTopicResult>,
    /// Unknown tagged fields (v5+).
    pub unknown_tagged_fields: TaggedFields,
}

/// The result for one topic.
///
/// ```
/// use kafka_proto::{ErrorCode, Message, messages::*};
/// let resp = CreateTopicsResponse {
///     topics: vec![CreateTopicsResponseCreatableTopicResult {
///         name: "orders".into(),
///         error_code: ErrorCode::TopicAlreadyExists.code(),
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// let back = CreateTopicsResponse::decode(&resp.encode_to_vec(7).unwrap(), 7).unwrap();
/// assert_eq!(
///     ErrorCode::from(back.topics[0].error_code),
///     ErrorCode::TopicAlreadyExists
/// );
/// assert_eq!(
///     back.topics[0].num_partitions, -1,
///     "default when not described"
/// );
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct CreateTopicsResponseCreatableTopicResult {
    /// The topic name.
    pub name: String,
    /// The unique topic id (v7+).
    pub topic_id: Uuid,
    /// The error code, or 0 if there was no error.
    pub error_code: i16,
    /// The error message, or null if there was no error.
    pub error_message: Option<String>,
    /// Optional topic config error returned if configs are not returned (v5+, tagged 0).
    pub topic_config_error_code: i16,
    /// Number of partitions of the topic (v5+, default -1).
    pub num_partitions: i32,
    /// Replication factor of the topic (v5+, default -1).
    pub replication_factor: i16,
    /// Configuration of the topic, or null (v5+).
    pub configs: Option<Vec<CreateTopicsResponseCreatableTopicConfigs>>,
    /// Unknown tagged fields (v5+).
    pub unknown_tagged_fields: TaggedFields,
}

impl Default for CreateTopicsResponseCreatableTopicResult {
    fn default() -> Self {
        Self {
            name: String::new(),
            topic_id: [0; 16],
            error_code: 0,
            error_message: None,
            topic_config_error_code: 0,
            num_partitions: -1,
            replication_factor: -1,
            configs: None,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

/// One configuration of a created topic (v5+).
///
/// ```
/// use kafka_proto::{Message, messages::*};
/// let result = CreateTopicsResponseCreatableTopicResult {
///     name: "orders".into(),
///     configs: Some(vec![CreateTopicsResponseCreatableTopicConfigs {
///         name: "retention.ms".into(),
///         value: Some("604800000".into()),
///         ..Default::default()
///     }]),
///     ..Default::default()
/// };
/// let resp = CreateTopicsResponse {
///     topics: vec![result],
///     ..Default::default()
/// };
/// assert_eq!(
///     CreateTopicsResponse::decode(&resp.encode_to_vec(5).unwrap(), 5).unwrap(),
///     resp
/// );
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct CreateTopicsResponseCreatableTopicConfigs {
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
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl Default for CreateTopicsResponseCreatableTopicConfigs {
    fn default() -> Self {
        Self {
            name: String::new(),
            value: None,
            read_only: false,
            config_source: -1,
            is_sensitive: false,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl CreateTopicsResponseCreatableTopicResult {
    fn encode<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let d = Self::default();
        let flex = version >= 5;
        check_field(version >= 7, &self.topic_id, &d.topic_id, "topics.topic_id")?;
        check_field(
            version >= 5,
            &self.topic_config_error_code,
            &d.topic_config_error_code,
            "topics.topic_config_error_code",
        )?;
        check_field(
            version >= 5,
            &self.num_partitions,
            &d.num_partitions,
            "topics.num_partitions",
        )?;
        check_field(
            version >= 5,
            &self.replication_factor,
            &d.replication_factor,
            "topics.replication_factor",
        )?;
        check_field(version >= 5, &self.configs, &d.configs, "topics.configs")?;
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &d.unknown_tagged_fields,
            "topics._tagged_fields",
        )?;
        put_string(buf, "topics.name", &self.name, flex)?;
        if version >= 7 {
            put_uuid(buf, &self.topic_id);
        }
        buf.put_i16(self.error_code);
        put_nullable_string(
            buf,
            "topics.error_message",
            self.error_message.as_deref(),
            flex,
        )?;
        if version >= 5 {
            buf.put_i32(self.num_partitions);
            buf.put_i16(self.replication_factor);
            put_nullable_array(
                buf,
                "topics.configs",
                self.configs.as_deref(),
                flex,
                |b, c| {
                    check_field(
                        flex,
                        &c.unknown_tagged_fields,
                        &Vec::new(),
                        "topics.configs._tagged_fields",
                    )?;
                    put_string(b, "topics.configs.name", &c.name, flex)?;
                    put_nullable_string(b, "topics.configs.value", c.value.as_deref(), flex)?;
                    put_bool(b, c.read_only);
                    b.put_i8(c.config_source);
                    put_bool(b, c.is_sensitive);
                    put_unknown_tagged_fields(b, &c.unknown_tagged_fields);
                    Ok(())
                },
            )?;
        }
        if flex {
            let mut t = TaggedWriter::new();
            if self.topic_config_error_code != 0 {
                t.field(0, |b| {
                    b.put_i16(self.topic_config_error_code);
                    Ok(())
                })?;
            }
            t.finish(buf, &self.unknown_tagged_fields)?;
        }
        Ok(())
    }

    fn decode(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 5;
        let mut m = Self {
            name: r.string("topics.name", flex)?,
            ..Default::default()
        };
        if version >= 7 {
            m.topic_id = r.uuid("topics.topic_id")?;
        }
        m.error_code = r.i16("topics.error_code")?;
        m.error_message = r.nullable_string("topics.error_message", flex)?;
        if version >= 5 {
            m.num_partitions = r.i32("topics.num_partitions")?;
            m.replication_factor = r.i16("topics.replication_factor")?;
            m.configs = r.nullable_array("topics.configs", flex, |r| {
                Ok(CreateTopicsResponseCreatableTopicConfigs {
                    name: r.string("topics.configs.name", flex)?,
                    value: r.nullable_string("topics.configs.value", flex)?,
                    read_only: r.bool("topics.configs.read_only")?,
                    config_source: r.i8("topics.configs.config_source")?,
                    is_sensitive: r.bool("topics.configs.is_sensitive")?,
                    unknown_tagged_fields: r
                        .unknown_tagged_fields("topics.configs._tagged_fields")?,
                })
            })?;
        }
        if flex {
            let mut config_error = 0;
            m.unknown_tagged_fields = r.tagged_fields("topics._tagged_fields", |tag, r| {
                match tag {
                    0 => config_error = r.i16("topics.topic_config_error_code")?,
                    _ => return Ok(false),
                }
                Ok(true)
            })?;
            m.topic_config_error_code = config_error;
        }
        Ok(m)
    }
}

impl Message for CreateTopicsResponse {
    const API_KEY: ApiKey = ApiKey::CreateTopics;
    const VERSIONS: VersionRange = VersionRange::new(2, 7);
    const FLEXIBLE_MIN: i16 = 5;

    fn encode_body<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let flex = Self::is_flexible(version);
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &Vec::new(),
            "_tagged_fields",
        )?;
        buf.put_i32(self.throttle_time_ms);
        put_array(buf, "topics", &self.topics, flex, |b, t| {
            t.encode(b, version)
        })?;
        if flex {
            put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
        }
        Ok(())
    }

    fn decode_body(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = Self::is_flexible(version);
        Ok(Self {
            throttle_time_ms: r.i32("throttle_time_ms")?,
            topics: r.array("topics", flex, |r| {
                CreateTopicsResponseCreatableTopicResult::decode(r, version)
            })?,
            unknown_tagged_fields: read_tags(r, flex, "_tagged_fields")?,
        })
    }
}

impl Response for CreateTopicsResponse {}

#[cfg(any(test, feature = "arbitrary"))]
mod arbitrary {
    use super::*;
    use crate::testing::{
        VersionedArbitrary, arb_or, arb_string, arb_tagged, arb_uuid, arb_vec, opt_nullable_string,
    };
    use proptest::prelude::*;

    impl VersionedArbitrary for CreateTopicsRequest {
        fn arbitrary(version: i16) -> BoxedStrategy<Self> {
            let flex = version >= 5;
            let assignment = (any::<i32>(), arb_vec(true, any::<i32>()), arb_tagged(flex))
                .prop_map(
                    |(p, ids, t)| CreateTopicsRequestCreatableReplicaAssignment {
                        partition_index: p,
                        broker_ids: ids,
                        unknown_tagged_fields: t,
                    },
                );
            let config = (
                arb_string(true),
                opt_nullable_string(true),
                arb_tagged(flex),
            )
                .prop_map(|(n, v, t)| CreateTopicsRequestCreatableTopicConfig {
                    name: n,
                    value: v,
                    unknown_tagged_fields: t,
                });
            let topic = (
                arb_string(true),
                any::<i32>(),
                any::<i16>(),
                arb_vec(true, assignment),
                arb_vec(true, config),
                arb_tagged(flex),
            )
                .prop_map(|(n, np, rf, a, c, t)| CreateTopicsRequestCreatableTopic {
                    name: n,
                    num_partitions: np,
                    replication_factor: rf,
                    assignments: a,
                    configs: c,
                    unknown_tagged_fields: t,
                });
            (
                arb_vec(true, topic),
                any::<i32>(),
                any::<bool>(),
                arb_tagged(flex),
            )
                .prop_map(|(topics, timeout, validate, t)| CreateTopicsRequest {
                    topics,
                    timeout_ms: timeout,
                    validate_only: validate,
                    unknown_tagged_fields: t,
                })
                .boxed()
        }
    }

    impl VersionedArbitrary for CreateTopicsResponse {
        fn arbitrary(version: i16) -> BoxedStrategy<Self> {
            let flex = version >= 5;
            let config = (
                arb_string(true),
                opt_nullable_string(true),
                any::<bool>(),
                any::<i8>(),
                any::<bool>(),
                arb_tagged(true),
            )
                .prop_map(|(n, v, ro, src, sens, t)| {
                    CreateTopicsResponseCreatableTopicConfigs {
                        name: n,
                        value: v,
                        read_only: ro,
                        config_source: src,
                        is_sensitive: sens,
                        unknown_tagged_fields: t,
                    }
                });
            let configs = if flex {
                proptest::option::of(arb_vec(true, config)).boxed()
            } else {
                Just(None).boxed()
            };
            let topic = (
                arb_string(true),
                arb_uuid(version >= 7),
                any::<i16>(),
                opt_nullable_string(true),
                arb_or(flex, 0i16),
                arb_or(flex, -1i32),
                arb_or(flex, -1i16),
                configs,
                arb_tagged(flex),
            )
                .prop_map(|(n, id, e, msg, ce, np, rf, c, t)| {
                    CreateTopicsResponseCreatableTopicResult {
                        name: n,
                        topic_id: id,
                        error_code: e,
                        error_message: msg,
                        topic_config_error_code: ce,
                        num_partitions: np,
                        replication_factor: rf,
                        configs: c,
                        unknown_tagged_fields: t,
                    }
                });
            (any::<i32>(), arb_vec(true, topic), arb_tagged(flex))
                .prop_map(|(th, topics, t)| CreateTopicsResponse {
                    throttle_time_ms: th,
                    topics,
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

    /// v5 request: one topic with a manual assignment and one config.
    #[test]
    fn v5_request_fixture() {
        let bytes: &[u8] = &[
            2, // topics: 1 element
            2, b't', // name "t"
            0xff, 0xff, 0xff, 0xff, // num_partitions -1
            0xff, 0xff, // replication_factor -1
            2,    // assignments: 1 element
            0, 0, 0, 0, // partition_index 0
            3, 0, 0, 0, 1, 0, 0, 0, 2, // broker_ids [1, 2]
            0, // assignment tags
            2, // configs: 1 element
            15, b'c', b'l', b'e', b'a', b'n', b'u', b'p', b'.', b'p', b'o', b'l', b'i', b'c',
            b'y', // "cleanup.policy"
            8, b'c', b'o', b'm', b'p', b'a', b'c', b't', // "compact"
            0,    // config tags
            0,    // topic tags
            0, 0, 0x75, 0x30, // timeout_ms 30000
            1,    // validate_only
            0,    // tags
        ];
        let req = CreateTopicsRequest::decode(bytes, 5).unwrap();
        assert_eq!(req.timeout_ms, 30000);
        assert!(req.validate_only);
        let t = &req.topics[0];
        assert_eq!(t.name, "t");
        assert_eq!((t.num_partitions, t.replication_factor), (-1, -1));
        assert_eq!(t.assignments[0].broker_ids, [1, 2]);
        assert_eq!(t.configs[0].name, "cleanup.policy");
        assert_eq!(t.configs[0].value.as_deref(), Some("compact"));
        assert_eq!(req.encode_to_vec(5).unwrap(), bytes);
    }

    /// v7 response: topic id, null message, null configs, tagged config error.
    #[test]
    fn v7_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 0, // throttle_time_ms
            2, // topics: 1 element
            2, b't', // name "t"
            1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, // topic_id
            0, 0, // error_code
            0, // error_message null
            0, 0, 0, 3, // num_partitions 3
            0, 1, // replication_factor 1
            0, // configs null
            1, 0, 2, 0, 29, // tag 0: topic_config_error_code 29
            0,  // tags
        ];
        let resp = CreateTopicsResponse::decode(bytes, 7).unwrap();
        let t = &resp.topics[0];
        assert_eq!(
            t.topic_id,
            [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]
        );
        assert_eq!(t.error_message, None);
        assert_eq!((t.num_partitions, t.replication_factor), (3, 1));
        assert_eq!(t.configs, None);
        assert_eq!(t.topic_config_error_code, 29);
        assert!(t.unknown_tagged_fields.is_empty());
        assert_eq!(resp.encode_to_vec(7).unwrap(), bytes);
    }

    /// v2 response is classic: no topic id, no v5 fields.
    #[test]
    fn v2_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 5, // throttle_time_ms 5
            0, 0, 0, 1, // topics: 1 element
            0, 1, b't', // name
            0, 36, // TOPIC_ALREADY_EXISTS
            0, 2, b'n', b'o', // error_message "no"
        ];
        let resp = CreateTopicsResponse::decode(bytes, 2).unwrap();
        assert_eq!(resp.throttle_time_ms, 5);
        assert_eq!(resp.topics[0].error_code, 36);
        assert_eq!(resp.topics[0].num_partitions, -1);
        assert_eq!(resp.encode_to_vec(2).unwrap(), bytes);
    }

    #[test]
    fn v5_fields_rejected_before_v5() {
        let resp = CreateTopicsResponse {
            topics: vec![CreateTopicsResponseCreatableTopicResult {
                num_partitions: 3,
                ..Default::default()
            }],
            ..Default::default()
        };
        let e = resp.encode_to_vec(4).unwrap_err();
        assert_eq!(e.kind, EncodeErrorKind::FieldNotInVersion);
        assert_eq!(e.field, "topics.num_partitions");
        let resp = CreateTopicsResponse {
            topics: vec![CreateTopicsResponseCreatableTopicResult {
                topic_id: [1; 16],
                ..Default::default()
            }],
            ..Default::default()
        };
        assert!(resp.encode_to_vec(6).is_err());
        assert!(resp.encode_to_vec(7).is_ok());
    }
}

#[cfg(test)]
mod round_trip {
    use super::*;
    use crate::testing::{round_trip_all_versions, truncations_fail_cleanly};

    #[test]
    fn request_every_version() {
        round_trip_all_versions::<CreateTopicsRequest>(64);
        truncations_fail_cleanly::<CreateTopicsRequest>(8);
    }

    #[test]
    fn response_every_version() {
        round_trip_all_versions::<CreateTopicsResponse>(64);
        truncations_fail_cleanly::<CreateTopicsResponse>(8);
    }
}
