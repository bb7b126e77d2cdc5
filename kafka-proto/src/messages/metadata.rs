//! Metadata (key 3), versions 0–13, flexible from 9.
//!
//! The request lists the topics to describe: in v0 an empty array means "all
//! topics"; from v1 a **null** array means "all topics" and an empty one "none".
//! From v10 topics carry a topic id and the name may be null (usable from v12).
//! The response lists the brokers, the cluster id, the controller and, per topic,
//! its partitions with leader, epoch and replica sets; v13 adds a top-level error.

use crate::primitives::{
    Reader, TaggedFields, Uuid, put_array, put_bool, put_nullable_array, put_nullable_string,
    put_string, put_unknown_tagged_fields, put_uuid,
};
use crate::{
    ApiKey, DecodeError, EncodeError, EncodeErrorKind, Message, Request, Response, VersionRange,
    check_field,
};
use bytes::BufMut;

/// Fails with [`EncodeErrorKind::NullNotAllowed`] when `v` is null and the
/// version cannot carry a null.
fn check_nullable<T>(
    nullable: bool,
    v: &Option<T>,
    field: &'static str,
) -> Result<(), EncodeError> {
    if v.is_none() && !nullable {
        Err(EncodeError::new(field, EncodeErrorKind::NullNotAllowed))
    } else {
        Ok(())
    }
}

/// Writes an `[]int32` array.
fn put_i32_array<B: BufMut>(
    buf: &mut B,
    field: &'static str,
    v: &[i32],
    flex: bool,
) -> Result<(), EncodeError> {
    put_array(buf, field, v, flex, |b, x| {
        b.put_i32(*x);
        Ok(())
    })
}

/// Reads an `[]int32` array.
fn read_i32_array(
    r: &mut Reader<'_>,
    field: &'static str,
    flex: bool,
) -> Result<Vec<i32>, DecodeError> {
    r.array(field, flex, |r| r.i32(field))
}

// ---------------------------------------------------------------- request

/// Asks a broker for cluster and topic metadata.
///
/// `topics: None` (v1+) asks for every topic; `Some(vec![])` asks for none (but
/// in v0 an empty array means every topic, and null cannot be sent).
///
/// ```
/// use kafka_proto::{
///     Message,
///     messages::{MetadataRequest, MetadataRequestTopic},
/// };
/// let req = MetadataRequest {
///     topics: Some(vec![MetadataRequestTopic::by_name("orders")]),
///     allow_auto_topic_creation: false,
///     ..Default::default()
/// };
/// let bytes = req.encode_to_vec(12).unwrap();
/// assert_eq!(MetadataRequest::decode(&bytes, 12).unwrap(), req);
/// // All topics: a null array, which v0 cannot express.
/// let all = MetadataRequest::all_topics();
/// assert!(all.encode_to_vec(0).is_err());
/// assert!(all.encode_to_vec(1).is_ok());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct MetadataRequest {
    /// The topics to fetch metadata for; null (v1+) for all topics. Defaults to
    /// an empty (non-null) array.
    pub topics: Option<Vec<MetadataRequestTopic>>,
    /// Whether the broker may auto-create requested topics that do not exist
    /// (v4+, default true).
    pub allow_auto_topic_creation: bool,
    /// Whether to include cluster authorized operations (v8–10).
    pub include_cluster_authorized_operations: bool,
    /// Whether to include topic authorized operations (v8+).
    pub include_topic_authorized_operations: bool,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl Default for MetadataRequest {
    fn default() -> Self {
        Self {
            topics: Some(Vec::new()),
            allow_auto_topic_creation: true,
            include_cluster_authorized_operations: false,
            include_topic_authorized_operations: false,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl MetadataRequest {
    /// A request for every topic (a null topic array, v1+).
    ///
    /// ```
    /// # use kafka_proto::{messages::MetadataRequest, Message};
    /// let req = MetadataRequest::all_topics();
    /// assert!(req.topics.is_none());
    /// assert!(
    ///     req.encode_to_vec(0).is_err(),
    ///     "v0 cannot ask for all topics"
    /// );
    /// assert_eq!(
    ///     MetadataRequest::decode(&req.encode_to_vec(12).unwrap(), 12).unwrap(),
    ///     req
    /// );
    /// ```
    pub fn all_topics() -> Self {
        Self {
            topics: None,
            ..Self::default()
        }
    }
}

/// A topic to fetch metadata for.
///
/// ```
/// use kafka_proto::{
///     Message,
///     messages::{MetadataRequest, MetadataRequestTopic},
/// };
/// let req = MetadataRequest {
///     topics: Some(vec![MetadataRequestTopic::by_name("orders")]),
///     ..Default::default()
/// };
/// assert_eq!(
///     MetadataRequest::decode(&req.encode_to_vec(9).unwrap(), 9).unwrap(),
///     req
/// );
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct MetadataRequestTopic {
    /// The topic id (v10+; all zeros when querying by name).
    pub topic_id: Uuid,
    /// The topic name; null only from v10 (to query by id). Defaults to `""`.
    pub name: Option<String>,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl Default for MetadataRequestTopic {
    fn default() -> Self {
        Self {
            topic_id: [0; 16],
            name: Some(String::new()),
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl MetadataRequestTopic {
    /// A topic queried by name.
    ///
    /// ```
    /// # use kafka_proto::messages::MetadataRequestTopic;
    /// let t = MetadataRequestTopic::by_name("orders");
    /// assert_eq!((t.name.as_deref(), t.topic_id), (Some("orders"), [0; 16]));
    /// ```
    pub fn by_name(name: impl Into<String>) -> Self {
        Self {
            name: Some(name.into()),
            ..Self::default()
        }
    }

    /// A topic queried by id (v10+; brokers honour it from v12).
    ///
    /// ```
    /// # use kafka_proto::{messages::{MetadataRequest, MetadataRequestTopic}, Message};
    /// let req = MetadataRequest {
    ///     topics: Some(vec![MetadataRequestTopic::by_id([7; 16])]),
    ///     ..Default::default()
    /// };
    /// assert!(req.encode_to_vec(9).is_err(), "ids need v10+");
    /// assert_eq!(
    ///     MetadataRequest::decode(&req.encode_to_vec(12).unwrap(), 12).unwrap(),
    ///     req
    /// );
    /// ```
    pub fn by_id(topic_id: Uuid) -> Self {
        Self {
            topic_id,
            name: None,
            ..Self::default()
        }
    }

    fn encode<B: BufMut>(&self, buf: &mut B, version: i16, flex: bool) -> Result<(), EncodeError> {
        check_field(version >= 10, &self.topic_id, &[0; 16], "topics.topic_id")?;
        check_nullable(version >= 10, &self.name, "topics.name")?;
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &Vec::new(),
            "topics._tagged_fields",
        )?;
        if version >= 10 {
            put_uuid(buf, &self.topic_id);
        }
        put_nullable_string(buf, "topics.name", self.name.as_deref(), flex)?;
        if flex {
            put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
        }
        Ok(())
    }

    fn decode(r: &mut Reader<'_>, version: i16, flex: bool) -> Result<Self, DecodeError> {
        let mut t = Self::default();
        if version >= 10 {
            t.topic_id = r.uuid("topics.topic_id")?;
            t.name = r.nullable_string("topics.name", flex)?;
        } else {
            t.name = Some(r.string("topics.name", flex)?);
        }
        if flex {
            t.unknown_tagged_fields = r.unknown_tagged_fields("topics._tagged_fields")?;
        }
        Ok(t)
    }
}

impl Message for MetadataRequest {
    const API_KEY: ApiKey = ApiKey::Metadata;
    const VERSIONS: VersionRange = VersionRange::new(0, 13);
    const FLEXIBLE_MIN: i16 = 9;

    fn encode_body<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let d = Self::default();
        let flex = Self::is_flexible(version);
        check_nullable(version >= 1, &self.topics, "topics")?;
        check_field(
            version >= 4,
            &self.allow_auto_topic_creation,
            &d.allow_auto_topic_creation,
            "allow_auto_topic_creation",
        )?;
        check_field(
            (8..=10).contains(&version),
            &self.include_cluster_authorized_operations,
            &d.include_cluster_authorized_operations,
            "include_cluster_authorized_operations",
        )?;
        check_field(
            version >= 8,
            &self.include_topic_authorized_operations,
            &d.include_topic_authorized_operations,
            "include_topic_authorized_operations",
        )?;
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &d.unknown_tagged_fields,
            "_tagged_fields",
        )?;
        put_nullable_array(buf, "topics", self.topics.as_deref(), flex, |b, t| {
            t.encode(b, version, flex)
        })?;
        if version >= 4 {
            put_bool(buf, self.allow_auto_topic_creation);
        }
        if (8..=10).contains(&version) {
            put_bool(buf, self.include_cluster_authorized_operations);
        }
        if version >= 8 {
            put_bool(buf, self.include_topic_authorized_operations);
        }
        if flex {
            put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
        }
        Ok(())
    }

    fn decode_body(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = Self::is_flexible(version);
        let mut m = Self::default();
        let item = |r: &mut Reader<'_>| MetadataRequestTopic::decode(r, version, flex);
        m.topics = if version >= 1 {
            r.nullable_array("topics", flex, item)?
        } else {
            Some(r.array("topics", flex, item)?)
        };
        if version >= 4 {
            m.allow_auto_topic_creation = r.bool("allow_auto_topic_creation")?;
        }
        if (8..=10).contains(&version) {
            m.include_cluster_authorized_operations =
                r.bool("include_cluster_authorized_operations")?;
        }
        if version >= 8 {
            m.include_topic_authorized_operations =
                r.bool("include_topic_authorized_operations")?;
        }
        if flex {
            m.unknown_tagged_fields = r.unknown_tagged_fields("_tagged_fields")?;
        }
        Ok(m)
    }
}

impl Request for MetadataRequest {
    type Response = MetadataResponse;
}

// ---------------------------------------------------------------- response

/// The brokers, controller and topic/partition layout of the cluster.
///
/// ```
/// use kafka_proto::{
///     Message,
///     messages::{MetadataResponse, MetadataResponseBroker},
/// };
/// let resp = MetadataResponse {
///     brokers: vec![MetadataResponseBroker {
///         node_id: 1,
///         host: "b1".into(),
///         port: 9092,
///         ..Default::default()
///     }],
///     controller_id: 1,
///     ..Default::default()
/// };
/// let bytes = resp.encode_to_vec(12).unwrap();
/// assert_eq!(MetadataResponse::decode(&bytes, 12).unwrap(), resp);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct MetadataResponse {
    /// Throttle time in milliseconds (v3+).
    pub throttle_time_ms: i32,
    /// The brokers present in the cluster.
    pub brokers: Vec<MetadataResponseBroker>,
    /// The cluster id (v2+, default null).
    pub cluster_id: Option<String>,
    /// The controller's broker id (v1+, default -1).
    pub controller_id: i32,
    /// Each topic in the response.
    pub topics: Vec<MetadataResponseTopic>,
    /// Cluster authorized operations bitfield (v8–10, default `i32::MIN`).
    pub cluster_authorized_operations: i32,
    /// The top-level error code (v13+).
    pub error_code: i16,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl Default for MetadataResponse {
    fn default() -> Self {
        Self {
            throttle_time_ms: 0,
            brokers: Vec::new(),
            cluster_id: None,
            controller_id: -1,
            topics: Vec::new(),
            cluster_authorized_operations: i32::MIN,
            error_code: 0,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl MetadataResponse {
    /// The broker with id `node_id`, if listed.
    ///
    /// ```
    /// # use kafka_proto::messages::{MetadataResponse, MetadataResponseBroker};
    /// let resp = MetadataResponse {
    ///     brokers: vec![MetadataResponseBroker {
    ///         node_id: 1,
    ///         host: "localhost".into(),
    ///         port: 9092,
    ///         ..Default::default()
    ///     }],
    ///     ..Default::default()
    /// };
    /// assert_eq!(resp.broker(1).map(|b| b.port), Some(9092));
    /// assert!(resp.broker(2).is_none());
    /// ```
    pub fn broker(&self, node_id: i32) -> Option<&MetadataResponseBroker> {
        self.brokers.iter().find(|b| b.node_id == node_id)
    }

    /// The topic named `name`, if listed.
    ///
    /// ```
    /// # use kafka_proto::messages::{MetadataResponse, MetadataResponseTopic};
    /// let resp = MetadataResponse {
    ///     topics: vec![MetadataResponseTopic {
    ///         name: Some("orders".into()),
    ///         ..Default::default()
    ///     }],
    ///     ..Default::default()
    /// };
    /// assert!(resp.topic("orders").is_some() && resp.topic("payments").is_none());
    /// ```
    pub fn topic(&self, name: &str) -> Option<&MetadataResponseTopic> {
        self.topics.iter().find(|t| t.name.as_deref() == Some(name))
    }
}

/// A broker in the cluster.
///
/// ```
/// use kafka_proto::{
///     Message,
///     messages::{MetadataResponse, MetadataResponseBroker},
/// };
/// let broker = MetadataResponseBroker {
///     node_id: 1,
///     host: "kafka-1".into(),
///     port: 9093,
///     rack: Some("eu-west-1a".into()),
///     ..Default::default()
/// };
/// let resp = MetadataResponse {
///     brokers: vec![broker],
///     ..Default::default()
/// };
/// assert_eq!(
///     MetadataResponse::decode(&resp.encode_to_vec(12).unwrap(), 12).unwrap(),
///     resp
/// );
/// assert!(resp.encode_to_vec(0).is_err(), "v0 has no rack");
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MetadataResponseBroker {
    /// The broker id.
    pub node_id: i32,
    /// The broker hostname.
    pub host: String,
    /// The broker port.
    pub port: i32,
    /// The broker's rack, or null (v1+, default null).
    pub rack: Option<String>,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl MetadataResponseBroker {
    fn encode<B: BufMut>(&self, buf: &mut B, version: i16, flex: bool) -> Result<(), EncodeError> {
        check_field(version >= 1, &self.rack, &None, "brokers.rack")?;
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &Vec::new(),
            "brokers._tagged_fields",
        )?;
        buf.put_i32(self.node_id);
        put_string(buf, "brokers.host", &self.host, flex)?;
        buf.put_i32(self.port);
        if version >= 1 {
            put_nullable_string(buf, "brokers.rack", self.rack.as_deref(), flex)?;
        }
        if flex {
            put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
        }
        Ok(())
    }

    fn decode(r: &mut Reader<'_>, version: i16, flex: bool) -> Result<Self, DecodeError> {
        let mut b = Self {
            node_id: r.i32("brokers.node_id")?,
            host: r.string("brokers.host", flex)?,
            port: r.i32("brokers.port")?,
            ..Default::default()
        };
        if version >= 1 {
            b.rack = r.nullable_string("brokers.rack", flex)?;
        }
        if flex {
            b.unknown_tagged_fields = r.unknown_tagged_fields("brokers._tagged_fields")?;
        }
        Ok(b)
    }
}

/// One topic's metadata.
///
/// ```
/// use kafka_proto::{ErrorCode, Message, messages::*};
/// let topic = MetadataResponseTopic {
///     error_code: ErrorCode::UnknownTopicOrPartition.code(),
///     name: Some("orders".into()),
///     ..Default::default()
/// };
/// let resp = MetadataResponse {
///     topics: vec![topic],
///     ..Default::default()
/// };
/// let back = MetadataResponse::decode(&resp.encode_to_vec(12).unwrap(), 12).unwrap();
/// assert!(ErrorCode::from(back.topic("orders").unwrap().error_code).is_retriable());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct MetadataResponseTopic {
    /// The topic error, or 0.
    pub error_code: i16,
    /// The topic name; null (v12+) for unknown topics queried by id. Defaults to `""`.
    pub name: Option<String>,
    /// The topic id (v10+); zero for unknown topics queried by name.
    pub topic_id: Uuid,
    /// True if the topic is internal (v1+).
    pub is_internal: bool,
    /// Each partition of the topic.
    pub partitions: Vec<MetadataResponsePartition>,
    /// Topic authorized operations bitfield (v8+, default `i32::MIN`).
    pub topic_authorized_operations: i32,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl Default for MetadataResponseTopic {
    fn default() -> Self {
        Self {
            error_code: 0,
            name: Some(String::new()),
            topic_id: [0; 16],
            is_internal: false,
            partitions: Vec::new(),
            topic_authorized_operations: i32::MIN,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl MetadataResponseTopic {
    fn encode<B: BufMut>(&self, buf: &mut B, version: i16, flex: bool) -> Result<(), EncodeError> {
        let d = Self::default();
        check_nullable(version >= 12, &self.name, "topics.name")?;
        check_field(
            version >= 10,
            &self.topic_id,
            &d.topic_id,
            "topics.topic_id",
        )?;
        check_field(
            version >= 1,
            &self.is_internal,
            &d.is_internal,
            "topics.is_internal",
        )?;
        check_field(
            version >= 8,
            &self.topic_authorized_operations,
            &d.topic_authorized_operations,
            "topics.topic_authorized_operations",
        )?;
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &d.unknown_tagged_fields,
            "topics._tagged_fields",
        )?;
        buf.put_i16(self.error_code);
        put_nullable_string(buf, "topics.name", self.name.as_deref(), flex)?;
        if version >= 10 {
            put_uuid(buf, &self.topic_id);
        }
        if version >= 1 {
            put_bool(buf, self.is_internal);
        }
        put_array(buf, "topics.partitions", &self.partitions, flex, |b, p| {
            p.encode(b, version, flex)
        })?;
        if version >= 8 {
            buf.put_i32(self.topic_authorized_operations);
        }
        if flex {
            put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
        }
        Ok(())
    }

    fn decode(r: &mut Reader<'_>, version: i16, flex: bool) -> Result<Self, DecodeError> {
        let mut t = Self {
            error_code: r.i16("topics.error_code")?,
            ..Default::default()
        };
        t.name = if version >= 12 {
            r.nullable_string("topics.name", flex)?
        } else {
            Some(r.string("topics.name", flex)?)
        };
        if version >= 10 {
            t.topic_id = r.uuid("topics.topic_id")?;
        }
        if version >= 1 {
            t.is_internal = r.bool("topics.is_internal")?;
        }
        t.partitions = r.array("topics.partitions", flex, |r| {
            MetadataResponsePartition::decode(r, version, flex)
        })?;
        if version >= 8 {
            t.topic_authorized_operations = r.i32("topics.topic_authorized_operations")?;
        }
        if flex {
            t.unknown_tagged_fields = r.unknown_tagged_fields("topics._tagged_fields")?;
        }
        Ok(t)
    }
}

/// One partition's metadata.
///
/// ```
/// use kafka_proto::{Message, messages::*};
/// let p = MetadataResponsePartition {
///     partition_index: 0,
///     leader_id: 1,
///     leader_epoch: 5,
///     replica_nodes: vec![1, 2],
///     isr_nodes: vec![1],
///     ..Default::default()
/// };
/// let topic = MetadataResponseTopic {
///     name: Some("orders".into()),
///     partitions: vec![p],
///     ..Default::default()
/// };
/// let resp = MetadataResponse {
///     topics: vec![topic],
///     ..Default::default()
/// };
/// let back = MetadataResponse::decode(&resp.encode_to_vec(12).unwrap(), 12).unwrap();
/// assert_eq!(back.topics[0].partitions[0].leader_epoch, 5);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct MetadataResponsePartition {
    /// The partition error, or 0.
    pub error_code: i16,
    /// The partition index.
    pub partition_index: i32,
    /// The leader's broker id.
    pub leader_id: i32,
    /// The leader epoch (v7+, default -1).
    pub leader_epoch: i32,
    /// All replicas of the partition.
    pub replica_nodes: Vec<i32>,
    /// The in-sync replicas.
    pub isr_nodes: Vec<i32>,
    /// The offline replicas (v5+).
    pub offline_replicas: Vec<i32>,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl Default for MetadataResponsePartition {
    fn default() -> Self {
        Self {
            error_code: 0,
            partition_index: 0,
            leader_id: 0,
            leader_epoch: -1,
            replica_nodes: Vec::new(),
            isr_nodes: Vec::new(),
            offline_replicas: Vec::new(),
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl MetadataResponsePartition {
    fn encode<B: BufMut>(&self, buf: &mut B, version: i16, flex: bool) -> Result<(), EncodeError> {
        check_field(
            version >= 7,
            &self.leader_epoch,
            &-1,
            "topics.partitions.leader_epoch",
        )?;
        check_field(
            version >= 5,
            &self.offline_replicas,
            &Vec::new(),
            "topics.partitions.offline_replicas",
        )?;
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &Vec::new(),
            "topics.partitions._tagged_fields",
        )?;
        buf.put_i16(self.error_code);
        buf.put_i32(self.partition_index);
        buf.put_i32(self.leader_id);
        if version >= 7 {
            buf.put_i32(self.leader_epoch);
        }
        put_i32_array(
            buf,
            "topics.partitions.replica_nodes",
            &self.replica_nodes,
            flex,
        )?;
        put_i32_array(buf, "topics.partitions.isr_nodes", &self.isr_nodes, flex)?;
        if version >= 5 {
            put_i32_array(
                buf,
                "topics.partitions.offline_replicas",
                &self.offline_replicas,
                flex,
            )?;
        }
        if flex {
            put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
        }
        Ok(())
    }

    fn decode(r: &mut Reader<'_>, version: i16, flex: bool) -> Result<Self, DecodeError> {
        let mut p = Self {
            error_code: r.i16("topics.partitions.error_code")?,
            partition_index: r.i32("topics.partitions.partition_index")?,
            leader_id: r.i32("topics.partitions.leader_id")?,
            ..Default::default()
        };
        if version >= 7 {
            p.leader_epoch = r.i32("topics.partitions.leader_epoch")?;
        }
        p.replica_nodes = read_i32_array(r, "topics.partitions.replica_nodes", flex)?;
        p.isr_nodes = read_i32_array(r, "topics.partitions.isr_nodes", flex)?;
        if version >= 5 {
            p.offline_replicas = read_i32_array(r, "topics.partitions.offline_replicas", flex)?;
        }
        if flex {
            p.unknown_tagged_fields =
                r.unknown_tagged_fields("topics.partitions._tagged_fields")?;
        }
        Ok(p)
    }
}

impl Message for MetadataResponse {
    const API_KEY: ApiKey = ApiKey::Metadata;
    const VERSIONS: VersionRange = VersionRange::new(0, 13);
    const FLEXIBLE_MIN: i16 = 9;

    fn encode_body<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let d = Self::default();
        let flex = Self::is_flexible(version);
        check_field(
            version >= 3,
            &self.throttle_time_ms,
            &d.throttle_time_ms,
            "throttle_time_ms",
        )?;
        check_field(version >= 2, &self.cluster_id, &d.cluster_id, "cluster_id")?;
        check_field(
            version >= 1,
            &self.controller_id,
            &d.controller_id,
            "controller_id",
        )?;
        check_field(
            (8..=10).contains(&version),
            &self.cluster_authorized_operations,
            &d.cluster_authorized_operations,
            "cluster_authorized_operations",
        )?;
        check_field(version >= 13, &self.error_code, &d.error_code, "error_code")?;
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &d.unknown_tagged_fields,
            "_tagged_fields",
        )?;
        if version >= 3 {
            buf.put_i32(self.throttle_time_ms);
        }
        put_array(buf, "brokers", &self.brokers, flex, |b, x| {
            x.encode(b, version, flex)
        })?;
        if version >= 2 {
            put_nullable_string(buf, "cluster_id", self.cluster_id.as_deref(), flex)?;
        }
        if version >= 1 {
            buf.put_i32(self.controller_id);
        }
        put_array(buf, "topics", &self.topics, flex, |b, t| {
            t.encode(b, version, flex)
        })?;
        if (8..=10).contains(&version) {
            buf.put_i32(self.cluster_authorized_operations);
        }
        if version >= 13 {
            buf.put_i16(self.error_code);
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
            m.throttle_time_ms = r.i32("throttle_time_ms")?;
        }
        m.brokers = r.array("brokers", flex, |r| {
            MetadataResponseBroker::decode(r, version, flex)
        })?;
        if version >= 2 {
            m.cluster_id = r.nullable_string("cluster_id", flex)?;
        }
        if version >= 1 {
            m.controller_id = r.i32("controller_id")?;
        }
        m.topics = r.array("topics", flex, |r| {
            MetadataResponseTopic::decode(r, version, flex)
        })?;
        if (8..=10).contains(&version) {
            m.cluster_authorized_operations = r.i32("cluster_authorized_operations")?;
        }
        if version >= 13 {
            m.error_code = r.i16("error_code")?;
        }
        if flex {
            m.unknown_tagged_fields = r.unknown_tagged_fields("_tagged_fields")?;
        }
        Ok(m)
    }
}

impl Response for MetadataResponse {}

#[cfg(any(test, feature = "arbitrary"))]
mod arbitrary {
    use super::*;
    use crate::testing::{
        VersionedArbitrary, arb_or, arb_string, arb_tagged, arb_uuid, arb_vec, opt_nullable_string,
    };
    use proptest::prelude::*;

    /// A name that may be null only when `nullable`.
    fn arb_name(nullable: bool) -> BoxedStrategy<Option<String>> {
        if nullable {
            opt_nullable_string(true)
        } else {
            arb_string(true).prop_map(Some).boxed()
        }
    }

    fn arb_request_topic(version: i16) -> BoxedStrategy<MetadataRequestTopic> {
        (
            arb_uuid(version >= 10),
            arb_name(version >= 10),
            arb_tagged(version >= 9),
        )
            .prop_map(|(topic_id, name, t)| MetadataRequestTopic {
                topic_id,
                name,
                unknown_tagged_fields: t,
            })
            .boxed()
    }

    impl VersionedArbitrary for MetadataRequest {
        fn arbitrary(version: i16) -> BoxedStrategy<Self> {
            let topics = proptest::collection::vec(arb_request_topic(version), 0..4);
            (
                if version >= 1 {
                    proptest::option::of(topics).boxed()
                } else {
                    topics.prop_map(Some).boxed()
                },
                arb_or(version >= 4, true),
                arb_or((8..=10).contains(&version), false),
                arb_or(version >= 8, false),
                arb_tagged(version >= 9),
            )
                .prop_map(|(topics, a, c, t, tags)| MetadataRequest {
                    topics,
                    allow_auto_topic_creation: a,
                    include_cluster_authorized_operations: c,
                    include_topic_authorized_operations: t,
                    unknown_tagged_fields: tags,
                })
                .boxed()
        }
    }

    fn arb_broker(version: i16) -> BoxedStrategy<MetadataResponseBroker> {
        (
            any::<i32>(),
            arb_string(true),
            any::<i32>(),
            opt_nullable_string(version >= 1),
            arb_tagged(version >= 9),
        )
            .prop_map(|(node_id, host, port, rack, t)| MetadataResponseBroker {
                node_id,
                host,
                port,
                rack,
                unknown_tagged_fields: t,
            })
            .boxed()
    }

    fn arb_partition(version: i16) -> BoxedStrategy<MetadataResponsePartition> {
        (
            any::<i16>(),
            any::<i32>(),
            any::<i32>(),
            arb_or(version >= 7, -1i32),
            arb_vec(true, any::<i32>()),
            arb_vec(true, any::<i32>()),
            arb_vec(version >= 5, any::<i32>()),
            arb_tagged(version >= 9),
        )
            .prop_map(
                |(e, i, l, ep, rep, isr, off, t)| MetadataResponsePartition {
                    error_code: e,
                    partition_index: i,
                    leader_id: l,
                    leader_epoch: ep,
                    replica_nodes: rep,
                    isr_nodes: isr,
                    offline_replicas: off,
                    unknown_tagged_fields: t,
                },
            )
            .boxed()
    }

    fn arb_topic(version: i16) -> BoxedStrategy<MetadataResponseTopic> {
        (
            any::<i16>(),
            arb_name(version >= 12),
            arb_uuid(version >= 10),
            arb_or(version >= 1, false),
            arb_vec(true, arb_partition(version)),
            arb_or(version >= 8, i32::MIN),
            arb_tagged(version >= 9),
        )
            .prop_map(
                |(e, name, id, internal, parts, ops, t)| MetadataResponseTopic {
                    error_code: e,
                    name,
                    topic_id: id,
                    is_internal: internal,
                    partitions: parts,
                    topic_authorized_operations: ops,
                    unknown_tagged_fields: t,
                },
            )
            .boxed()
    }

    impl VersionedArbitrary for MetadataResponse {
        fn arbitrary(version: i16) -> BoxedStrategy<Self> {
            (
                arb_or(version >= 3, 0i32),
                arb_vec(true, arb_broker(version)),
                opt_nullable_string(version >= 2),
                arb_or(version >= 1, -1i32),
                arb_vec(true, arb_topic(version)),
                arb_or((8..=10).contains(&version), i32::MIN),
                arb_or(version >= 13, 0i16),
                arb_tagged(version >= 9),
            )
                .prop_map(
                    |(th, brokers, cid, ctl, topics, ops, e, t)| MetadataResponse {
                        throttle_time_ms: th,
                        brokers,
                        cluster_id: cid,
                        controller_id: ctl,
                        topics,
                        cluster_authorized_operations: ops,
                        error_code: e,
                        unknown_tagged_fields: t,
                    },
                )
                .boxed()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v0_request_cannot_send_null_topics() {
        let e = MetadataRequest::all_topics().encode_to_vec(0).unwrap_err();
        assert_eq!(e.kind, EncodeErrorKind::NullNotAllowed);
        assert_eq!(e.field, "topics");
        // v0 "all topics" is an empty array.
        assert_eq!(
            MetadataRequest::default().encode_to_vec(0).unwrap(),
            [0, 0, 0, 0]
        );
        // v1 null array.
        assert_eq!(
            MetadataRequest::all_topics().encode_to_vec(1).unwrap(),
            [0xff, 0xff, 0xff, 0xff]
        );
    }

    #[test]
    fn fields_outside_their_versions_are_rejected() {
        let req = MetadataRequest {
            allow_auto_topic_creation: false,
            ..Default::default()
        };
        assert_eq!(
            req.encode_to_vec(3).unwrap_err().kind,
            EncodeErrorKind::FieldNotInVersion
        );
        let req = MetadataRequest {
            include_cluster_authorized_operations: true,
            ..Default::default()
        };
        assert!(req.encode_to_vec(10).is_ok());
        assert!(req.encode_to_vec(11).is_err());
        let by_id = MetadataRequest {
            topics: Some(vec![MetadataRequestTopic::by_id([1; 16])]),
            ..Default::default()
        };
        assert!(by_id.encode_to_vec(9).is_err());
        assert!(by_id.encode_to_vec(12).is_ok());
        let resp = MetadataResponse {
            topics: vec![MetadataResponseTopic {
                partitions: vec![MetadataResponsePartition {
                    leader_epoch: 4,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        let e = resp.encode_to_vec(6).unwrap_err();
        assert_eq!(e.field, "topics.partitions.leader_epoch");
        assert!(resp.encode_to_vec(7).is_ok());
        let tagged = MetadataRequest {
            unknown_tagged_fields: vec![(20, bytes::Bytes::from_static(b"x"))],
            ..Default::default()
        };
        assert!(tagged.encode_to_vec(8).is_err());
        assert!(tagged.encode_to_vec(9).is_ok());
    }

    /// A v12 request written out by hand from the schema: one topic by name,
    /// one by id (null name), no auto-creation, topic authorized operations.
    #[test]
    fn v12_request_fixture() {
        let mut bytes = vec![
            3, // compact array: 2 topics
        ];
        bytes.extend_from_slice(&[0; 16]); // topic_id zero
        bytes.extend_from_slice(&[4, b'a', b'b', b'c', 0]); // name "abc", no tags
        bytes.extend_from_slice(&[0xab; 16]); // topic_id
        bytes.extend_from_slice(&[0, 0]); // null name, no tags
        bytes.extend_from_slice(&[
            0, // allow_auto_topic_creation false
            1, // include_topic_authorized_operations true
            0, // no tags
        ]);
        let req = MetadataRequest::decode(&bytes, 12).unwrap();
        assert_eq!(
            req,
            MetadataRequest {
                topics: Some(vec![
                    MetadataRequestTopic::by_name("abc"),
                    MetadataRequestTopic::by_id([0xab; 16]),
                ]),
                allow_auto_topic_creation: false,
                include_topic_authorized_operations: true,
                ..Default::default()
            }
        );
        assert_eq!(req.encode_to_vec(12).unwrap(), bytes);
    }

    /// A v1 response written out by hand: one broker with rack "r1", controller 1,
    /// one internal topic "t" with one partition led by broker 1.
    #[test]
    fn v1_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 1, // brokers: 1
            0, 0, 0, 1, // node_id 1
            0, 2, b'h', b'1', // host "h1"
            0, 0, 0x23, 0x84, // port 9092
            0, 2, b'r', b'1', // rack "r1"
            0, 0, 0, 1, // controller_id 1
            0, 0, 0, 1, // topics: 1
            0, 0, // error_code
            0, 1, b't', // name "t"
            1,    // is_internal
            0, 0, 0, 1, // partitions: 1
            0, 9, // error_code 9 (REPLICA_NOT_AVAILABLE)
            0, 0, 0, 0, // partition_index 0
            0, 0, 0, 1, // leader_id 1
            0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2, // replicas [1, 2]
            0, 0, 0, 1, 0, 0, 0, 1, // isr [1]
        ];
        let resp = MetadataResponse::decode(bytes, 1).unwrap();
        assert_eq!(resp.controller_id, 1);
        let b = resp.broker(1).unwrap();
        assert_eq!((b.host.as_str(), b.port), ("h1", 9092));
        assert_eq!(b.rack.as_deref(), Some("r1"));
        let t = resp.topic("t").unwrap();
        assert!(t.is_internal);
        assert_eq!(t.partitions[0].error_code, 9);
        assert_eq!(t.partitions[0].leader_epoch, -1);
        assert_eq!(t.partitions[0].replica_nodes, [1, 2]);
        assert_eq!(t.partitions[0].isr_nodes, [1]);
        assert_eq!(resp.encode_to_vec(1).unwrap(), bytes);
    }

    /// A v13 response by hand: no brokers, null cluster id, one unknown topic
    /// queried by id (null name), top-level error 0.
    #[test]
    fn v13_response_fixture() {
        let mut bytes = vec![
            0, 0, 0, 5, // throttle 5
            1, // brokers: 0
            0, // cluster_id null
            0xff, 0xff, 0xff, 0xff, // controller -1
            2,    // topics: 1
            0, 100, // UNKNOWN_TOPIC_ID
            0,   // null name
        ];
        bytes.extend_from_slice(&[7; 16]);
        bytes.extend_from_slice(&[
            0, // is_internal
            1, // no partitions
            0x80, 0, 0, 0, // topic_authorized_operations MIN
            0, // topic tags
            0, 0, // error_code
            0, // tags
        ]);
        let resp = MetadataResponse::decode(&bytes, 13).unwrap();
        assert_eq!(resp.throttle_time_ms, 5);
        assert_eq!(resp.topics[0].name, None);
        assert_eq!(resp.topics[0].topic_id, [7; 16]);
        assert_eq!(resp.topics[0].error_code, 100);
        assert_eq!(resp.encode_to_vec(13).unwrap(), bytes);
        // A null name is not valid before v12.
        assert!(MetadataResponse::decode(&bytes, 11).is_err());
    }
}

#[cfg(test)]
mod round_trip {
    use super::*;
    use crate::testing::{round_trip_all_versions, truncations_fail_cleanly};

    #[test]
    fn request_every_version() {
        round_trip_all_versions::<MetadataRequest>(64);
        truncations_fail_cleanly::<MetadataRequest>(8);
    }

    #[test]
    fn response_every_version() {
        round_trip_all_versions::<MetadataResponse>(64);
        truncations_fail_cleanly::<MetadataResponse>(8);
    }
}
