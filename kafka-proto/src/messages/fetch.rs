//! Fetch (key 1), versions 4–18, flexible from 12.
//!
//! Used here to read back committed data (`isolation_level = 1`,
//! READ_COMMITTED) and to verify transactional outcomes. Up to v12 topics are
//! named; from v13 they are identified by topic id. Records are kept as raw
//! RecordBatch bytes (`Option<Bytes>`, nullable on the wire) for
//! [`crate::record`] to decode.
//!
//! Tagged fields: request `cluster_id` (tag 0, v12+), `replica_state` (tag 1,
//! v15+, replacing `replica_id`), partition `replica_directory_id` (tag 0, v17+)
//! and `high_watermark` (tag 1, v18+); response partition `diverging_epoch`,
//! `current_leader`, `snapshot_id` (tags 0–2, v12+) and top-level
//! `node_endpoints` (tag 0, v16+). `aborted_transactions` is a nullable array:
//! its schema default is an empty (non-null) list.

use crate::primitives::{
    Reader, TaggedFields, TaggedWriter, Uuid, put_array, put_nullable_array, put_nullable_bytes,
    put_nullable_string, put_string, put_unknown_tagged_fields, put_uuid,
};
use crate::{
    ApiKey, DecodeError, EncodeError, Message, Request, Response, VersionRange, check_field,
};
use bytes::{BufMut, Bytes};

/// Fetches records from partition leaders (or followers).
///
/// ```
/// use kafka_proto::{Message, messages::*};
/// let req = FetchRequest {
///     max_wait_ms: 500,
///     min_bytes: 1,
///     isolation_level: 1, // READ_COMMITTED
///     topics: vec![FetchRequestTopic {
///         topic: "orders".into(),
///         partitions: vec![FetchRequestPartition {
///             partition: 0,
///             fetch_offset: 0,
///             partition_max_bytes: 1 << 20,
///             ..Default::default()
///         }],
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// assert_eq!(req.max_bytes, i32::MAX);
/// assert_eq!(
///     FetchRequest::decode(&req.encode_to_vec(12).unwrap(), 12).unwrap(),
///     req
/// );
/// // v13+ identifies topics by id only.
/// assert!(req.encode_to_vec(13).is_err());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct FetchRequest {
    /// The clusterId if known. This is used to validate metadata fetches prior to broker registration (v12+, tagged 0, nullable).
    pub cluster_id: Option<String>,
    /// The broker ID of the follower, of -1 if this request is from a consumer (v4–14, default -1).
    pub replica_id: i32,
    /// The state of the replica in the follower (v15+, tagged 1).
    pub replica_state: FetchRequestReplicaState,
    /// The maximum time in milliseconds to wait for the response.
    pub max_wait_ms: i32,
    /// The minimum bytes to accumulate in the response.
    pub min_bytes: i32,
    /// The maximum bytes to fetch.  See KIP-74 for cases where this limit may not be honored (default 0x7fffffff).
    pub max_bytes: i32,
    /// This setting controls the visibility of transactional records. Using READ_UNCOMMITTED (isolation_level = 0) makes all records visible. With READ_COMMITTED (isolation_level = 1), non-transactional and COMMITTED transactional records are visible. To be more concrete, READ_COMMITTED returns all data from offsets smaller than the current LSO (last stable offset), and enables the inclusion of the list of aborted transactions in the result, which allows consumers to discard ABORTED transactional records.
    pub isolation_level: i8,
    /// The fetch session ID (v7+).
    pub session_id: i32,
    /// The fetch session epoch, which is used for ordering requests in a session (v7+, default -1).
    pub session_epoch: i32,
    /// The topics to fetch.
    pub topics: Vec<FetchRequestTopic>,
    /// In an incremental fetch request, the partitions to remove (v7+).
    pub forgotten_topics_data: Vec<FetchRequestForgottenTopic>,
    /// Rack ID of the consumer making this request (v11+).
    pub rack_id: String,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl Default for FetchRequest {
    fn default() -> Self {
        Self {
            cluster_id: None,
            replica_id: -1,
            replica_state: FetchRequestReplicaState::default(),
            max_wait_ms: 0,
            min_bytes: 0,
            max_bytes: i32::MAX,
            isolation_level: 0,
            session_id: 0,
            session_epoch: -1,
            topics: Vec::new(),
            forgotten_topics_data: Vec::new(),
            rack_id: String::new(),
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl Message for FetchRequest {
    const API_KEY: ApiKey = ApiKey::Fetch;
    const VERSIONS: VersionRange = VersionRange::new(4, 18);
    const FLEXIBLE_MIN: i16 = 12;

    fn encode_body<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let d = Self::default();
        let flex = Self::is_flexible(version);
        check_field(version >= 12, &self.cluster_id, &d.cluster_id, "cluster_id")?;
        check_field(version <= 14, &self.replica_id, &d.replica_id, "replica_id")?;
        check_field(
            version >= 15,
            &self.replica_state,
            &d.replica_state,
            "replica_state",
        )?;
        check_field(version >= 7, &self.session_id, &d.session_id, "session_id")?;
        check_field(
            version >= 7,
            &self.session_epoch,
            &d.session_epoch,
            "session_epoch",
        )?;
        check_field(
            version >= 7,
            &self.forgotten_topics_data,
            &d.forgotten_topics_data,
            "forgotten_topics_data",
        )?;
        check_field(version >= 11, &self.rack_id, &d.rack_id, "rack_id")?;
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &d.unknown_tagged_fields,
            "_tagged_fields",
        )?;
        if version <= 14 {
            buf.put_i32(self.replica_id);
        }
        buf.put_i32(self.max_wait_ms);
        buf.put_i32(self.min_bytes);
        buf.put_i32(self.max_bytes);
        buf.put_i8(self.isolation_level);
        if version >= 7 {
            buf.put_i32(self.session_id);
            buf.put_i32(self.session_epoch);
        }
        put_array(buf, "topics", &self.topics, flex, |b, x| {
            x.write(b, version)
        })?;
        if version >= 7 {
            put_array(
                buf,
                "forgotten_topics_data",
                &self.forgotten_topics_data,
                flex,
                |b, x| x.write(b, version),
            )?;
        }
        if version >= 11 {
            put_string(buf, "rack_id", &self.rack_id, flex)?;
        }
        if flex {
            let mut t = TaggedWriter::new();
            if self.cluster_id != d.cluster_id {
                t.field(0, |b| {
                    put_nullable_string(b, "cluster_id", self.cluster_id.as_deref(), true)?;
                    Ok(())
                })?;
            }
            if version >= 15 && self.replica_state != d.replica_state {
                t.field(1, |b| {
                    self.replica_state.write(b, version)?;
                    Ok(())
                })?;
            }
            t.finish(buf, &self.unknown_tagged_fields)?;
        }
        Ok(())
    }

    fn decode_body(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = Self::is_flexible(version);
        let mut m = Self::default();
        if version <= 14 {
            m.replica_id = r.i32("replica_id")?;
        }
        m.max_wait_ms = r.i32("max_wait_ms")?;
        m.min_bytes = r.i32("min_bytes")?;
        m.max_bytes = r.i32("max_bytes")?;
        m.isolation_level = r.i8("isolation_level")?;
        if version >= 7 {
            m.session_id = r.i32("session_id")?;
            m.session_epoch = r.i32("session_epoch")?;
        }
        m.topics = r.array("topics", flex, |r| FetchRequestTopic::read(r, version))?;
        if version >= 7 {
            m.forgotten_topics_data = r.array("forgotten_topics_data", flex, |r| {
                FetchRequestForgottenTopic::read(r, version)
            })?;
        }
        if version >= 11 {
            m.rack_id = r.string("rack_id", flex)?;
        }
        if flex {
            let unknown = r.tagged_fields("_tagged_fields", |tag, r| {
                match tag {
                    0 => m.cluster_id = r.nullable_string("cluster_id", true)?,
                    1 if version >= 15 => {
                        m.replica_state = FetchRequestReplicaState::read(r, version)?
                    }
                    _ => return Ok(false),
                }
                Ok(true)
            })?;
            m.unknown_tagged_fields = unknown;
        }
        Ok(m)
    }
}

impl Request for FetchRequest {
    type Response = FetchResponse;
}

/// The state of the replica in the follower.
///
/// ```
/// use kafka_proto::{Message, messages::*};
/// // A follower (KIP-903) describes itself in `replica_state` from v15 on.
/// let req = FetchRequest {
///     replica_state: FetchRequestReplicaState {
///         replica_id: 2,
///         replica_epoch: 7,
///         ..Default::default()
///     },
///     ..Default::default()
/// };
/// assert_eq!(
///     FetchRequest::decode(&req.encode_to_vec(15).unwrap(), 15).unwrap(),
///     req
/// );
/// assert!(req.encode_to_vec(14).is_err());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct FetchRequestReplicaState {
    /// The replica ID of the follower, or -1 if this request is from a consumer (v15+, default -1).
    pub replica_id: i32,
    /// The epoch of this follower, or -1 if not available (v15+, default -1).
    pub replica_epoch: i64,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl Default for FetchRequestReplicaState {
    fn default() -> Self {
        Self {
            replica_id: -1,
            replica_epoch: -1,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl FetchRequestReplicaState {
    fn write<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let d = Self::default();
        let flex = version >= 12;
        check_field(
            version >= 15,
            &self.replica_id,
            &d.replica_id,
            "replica_state.replica_id",
        )?;
        check_field(
            version >= 15,
            &self.replica_epoch,
            &d.replica_epoch,
            "replica_state.replica_epoch",
        )?;
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &d.unknown_tagged_fields,
            "replica_state._tagged_fields",
        )?;
        if version >= 15 {
            buf.put_i32(self.replica_id);
            buf.put_i64(self.replica_epoch);
        }
        if flex {
            put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
        }
        Ok(())
    }

    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 12;
        let mut m = Self::default();
        if version >= 15 {
            m.replica_id = r.i32("replica_state.replica_id")?;
            m.replica_epoch = r.i64("replica_state.replica_epoch")?;
        }
        if flex {
            m.unknown_tagged_fields = r.unknown_tagged_fields("replica_state._tagged_fields")?;
        }
        Ok(m)
    }
}

/// The topics to fetch.
///
/// ```
/// use kafka_proto::{Message, messages::*};
/// // Up to v12 a topic is named; from v13 it is identified by id.
/// let by_id = FetchRequestTopic {
///     topic_id: [7; 16],
///     partitions: vec![FetchRequestPartition {
///         partition: 0,
///         fetch_offset: 42,
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// let req = FetchRequest {
///     topics: vec![by_id],
///     ..Default::default()
/// };
/// assert_eq!(
///     FetchRequest::decode(&req.encode_to_vec(13).unwrap(), 13).unwrap(),
///     req
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FetchRequestTopic {
    /// The name of the topic to fetch (v4–12).
    pub topic: String,
    /// The unique topic ID (v13+).
    pub topic_id: Uuid,
    /// The partitions to fetch.
    pub partitions: Vec<FetchRequestPartition>,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl FetchRequestTopic {
    fn write<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let d = Self::default();
        let flex = version >= 12;
        check_field(version <= 12, &self.topic, &d.topic, "topics.topic")?;
        check_field(
            version >= 13,
            &self.topic_id,
            &d.topic_id,
            "topics.topic_id",
        )?;
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &d.unknown_tagged_fields,
            "topics._tagged_fields",
        )?;
        if version <= 12 {
            put_string(buf, "topics.topic", &self.topic, flex)?;
        }
        if version >= 13 {
            put_uuid(buf, &self.topic_id);
        }
        put_array(buf, "topics.partitions", &self.partitions, flex, |b, x| {
            x.write(b, version)
        })?;
        if flex {
            put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
        }
        Ok(())
    }

    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 12;
        let mut m = Self::default();
        if version <= 12 {
            m.topic = r.string("topics.topic", flex)?;
        }
        if version >= 13 {
            m.topic_id = r.uuid("topics.topic_id")?;
        }
        m.partitions = r.array("topics.partitions", flex, |r| {
            FetchRequestPartition::read(r, version)
        })?;
        if flex {
            m.unknown_tagged_fields = r.unknown_tagged_fields("topics._tagged_fields")?;
        }
        Ok(m)
    }
}

/// The partitions to fetch.
///
/// ```
/// use kafka_proto::messages::FetchRequestPartition;
/// let p = FetchRequestPartition {
///     partition: 3,
///     fetch_offset: 1_000,
///     partition_max_bytes: 1 << 20,
///     ..Default::default()
/// };
/// assert_eq!(
///     (p.current_leader_epoch, p.log_start_offset),
///     (-1, -1),
///     "unknown by default"
/// );
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct FetchRequestPartition {
    /// The partition index.
    pub partition: i32,
    /// The current leader epoch of the partition (v9+, default -1).
    pub current_leader_epoch: i32,
    /// The message offset.
    pub fetch_offset: i64,
    /// The epoch of the last fetched record or -1 if there is none (v12+, default -1).
    pub last_fetched_epoch: i32,
    /// The earliest available offset of the follower replica.  The field is only used when the request is sent by the follower (v5+, default -1).
    pub log_start_offset: i64,
    /// The maximum bytes to fetch from this partition.  See KIP-74 for cases where this limit may not be honored.
    pub partition_max_bytes: i32,
    /// The directory id of the follower fetching (v17+, tagged 0).
    pub replica_directory_id: Uuid,
    /// The high-watermark known by the replica. -1 if the high-watermark is not known and 9223372036854775807 if the feature is not supported (v18+, tagged 1, default 9223372036854775807).
    pub high_watermark: i64,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl Default for FetchRequestPartition {
    fn default() -> Self {
        Self {
            partition: 0,
            current_leader_epoch: -1,
            fetch_offset: 0,
            last_fetched_epoch: -1,
            log_start_offset: -1,
            partition_max_bytes: 0,
            replica_directory_id: [0u8; 16],
            high_watermark: i64::MAX,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl FetchRequestPartition {
    fn write<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let d = Self::default();
        let flex = version >= 12;
        check_field(
            version >= 9,
            &self.current_leader_epoch,
            &d.current_leader_epoch,
            "topics.partitions.current_leader_epoch",
        )?;
        check_field(
            version >= 12,
            &self.last_fetched_epoch,
            &d.last_fetched_epoch,
            "topics.partitions.last_fetched_epoch",
        )?;
        check_field(
            version >= 5,
            &self.log_start_offset,
            &d.log_start_offset,
            "topics.partitions.log_start_offset",
        )?;
        check_field(
            version >= 17,
            &self.replica_directory_id,
            &d.replica_directory_id,
            "topics.partitions.replica_directory_id",
        )?;
        check_field(
            version >= 18,
            &self.high_watermark,
            &d.high_watermark,
            "topics.partitions.high_watermark",
        )?;
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &d.unknown_tagged_fields,
            "topics.partitions._tagged_fields",
        )?;
        buf.put_i32(self.partition);
        if version >= 9 {
            buf.put_i32(self.current_leader_epoch);
        }
        buf.put_i64(self.fetch_offset);
        if version >= 12 {
            buf.put_i32(self.last_fetched_epoch);
        }
        if version >= 5 {
            buf.put_i64(self.log_start_offset);
        }
        buf.put_i32(self.partition_max_bytes);
        if flex {
            let mut t = TaggedWriter::new();
            if version >= 17 && self.replica_directory_id != d.replica_directory_id {
                t.field(0, |b| {
                    put_uuid(b, &self.replica_directory_id);
                    Ok(())
                })?;
            }
            if version >= 18 && self.high_watermark != d.high_watermark {
                t.field(1, |b| {
                    b.put_i64(self.high_watermark);
                    Ok(())
                })?;
            }
            t.finish(buf, &self.unknown_tagged_fields)?;
        }
        Ok(())
    }

    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 12;
        let mut m = Self {
            partition: r.i32("topics.partitions.partition")?,
            ..Default::default()
        };
        if version >= 9 {
            m.current_leader_epoch = r.i32("topics.partitions.current_leader_epoch")?;
        }
        m.fetch_offset = r.i64("topics.partitions.fetch_offset")?;
        if version >= 12 {
            m.last_fetched_epoch = r.i32("topics.partitions.last_fetched_epoch")?;
        }
        if version >= 5 {
            m.log_start_offset = r.i64("topics.partitions.log_start_offset")?;
        }
        m.partition_max_bytes = r.i32("topics.partitions.partition_max_bytes")?;
        if flex {
            let unknown = r.tagged_fields("topics.partitions._tagged_fields", |tag, r| {
                match tag {
                    0 if version >= 17 => {
                        m.replica_directory_id = r.uuid("topics.partitions.replica_directory_id")?
                    }
                    1 if version >= 18 => {
                        m.high_watermark = r.i64("topics.partitions.high_watermark")?
                    }
                    _ => return Ok(false),
                }
                Ok(true)
            })?;
            m.unknown_tagged_fields = unknown;
        }
        Ok(m)
    }
}

/// In an incremental fetch request, the partitions to remove.
///
/// ```
/// use kafka_proto::{Message, messages::*};
/// // An incremental fetch session drops partition 1 of `orders`.
/// let req = FetchRequest {
///     session_id: 12,
///     session_epoch: 3,
///     forgotten_topics_data: vec![FetchRequestForgottenTopic {
///         topic: "orders".into(),
///         partitions: vec![1],
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// assert_eq!(
///     FetchRequest::decode(&req.encode_to_vec(7).unwrap(), 7).unwrap(),
///     req
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FetchRequestForgottenTopic {
    /// The topic name (v7–12).
    pub topic: String,
    /// The unique topic ID (v13+).
    pub topic_id: Uuid,
    /// The partitions indexes to forget (v7+).
    pub partitions: Vec<i32>,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl FetchRequestForgottenTopic {
    fn write<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let d = Self::default();
        let flex = version >= 12;
        check_field(
            (7..=12).contains(&version),
            &self.topic,
            &d.topic,
            "forgotten_topics_data.topic",
        )?;
        check_field(
            version >= 13,
            &self.topic_id,
            &d.topic_id,
            "forgotten_topics_data.topic_id",
        )?;
        check_field(
            version >= 7,
            &self.partitions,
            &d.partitions,
            "forgotten_topics_data.partitions",
        )?;
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &d.unknown_tagged_fields,
            "forgotten_topics_data._tagged_fields",
        )?;
        if (7..=12).contains(&version) {
            put_string(buf, "forgotten_topics_data.topic", &self.topic, flex)?;
        }
        if version >= 13 {
            put_uuid(buf, &self.topic_id);
        }
        if version >= 7 {
            put_array(
                buf,
                "forgotten_topics_data.partitions",
                &self.partitions,
                flex,
                |b, x| {
                    b.put_i32(*x);
                    Ok(())
                },
            )?;
        }
        if flex {
            put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
        }
        Ok(())
    }

    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 12;
        let mut m = Self::default();
        if (7..=12).contains(&version) {
            m.topic = r.string("forgotten_topics_data.topic", flex)?;
        }
        if version >= 13 {
            m.topic_id = r.uuid("forgotten_topics_data.topic_id")?;
        }
        if version >= 7 {
            m.partitions = r.array("forgotten_topics_data.partitions", flex, |r| {
                r.i32("forgotten_topics_data.partitions")
            })?;
        }
        if flex {
            m.unknown_tagged_fields =
                r.unknown_tagged_fields("forgotten_topics_data._tagged_fields")?;
        }
        Ok(m)
    }
}

/// Records and partition state returned by a fetch.
///
/// ```
/// use bytes::Bytes;
/// use kafka_proto::{Message, messages::*};
/// let resp = FetchResponse {
///     responses: vec![FetchResponseTopic {
///         topic_id: [7; 16],
///         partitions: vec![FetchResponsePartitionData {
///             high_watermark: 10,
///             last_stable_offset: 10,
///             aborted_transactions: None,
///             records: Some(Bytes::from_static(b"batches")),
///             ..Default::default()
///         }],
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// let back = FetchResponse::decode(&resp.encode_to_vec(16).unwrap(), 16).unwrap();
/// assert_eq!(back, resp);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FetchResponse {
    /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota.
    pub throttle_time_ms: i32,
    /// The top level response error code (v7+).
    pub error_code: i16,
    /// The fetch session ID, or 0 if this is not part of a fetch session (v7+).
    pub session_id: i32,
    /// The response topics.
    pub responses: Vec<FetchResponseTopic>,
    /// Endpoints for all current-leaders enumerated in PartitionData, with errors NOT_LEADER_OR_FOLLOWER & FENCED_LEADER_EPOCH (v16+, tagged 0).
    pub node_endpoints: Vec<FetchResponseNodeEndpoint>,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl Message for FetchResponse {
    const API_KEY: ApiKey = ApiKey::Fetch;
    const VERSIONS: VersionRange = VersionRange::new(4, 18);
    const FLEXIBLE_MIN: i16 = 12;

    fn encode_body<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let d = Self::default();
        let flex = Self::is_flexible(version);
        check_field(version >= 7, &self.error_code, &d.error_code, "error_code")?;
        check_field(version >= 7, &self.session_id, &d.session_id, "session_id")?;
        check_field(
            version >= 16,
            &self.node_endpoints,
            &d.node_endpoints,
            "node_endpoints",
        )?;
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &d.unknown_tagged_fields,
            "_tagged_fields",
        )?;
        buf.put_i32(self.throttle_time_ms);
        if version >= 7 {
            buf.put_i16(self.error_code);
            buf.put_i32(self.session_id);
        }
        put_array(buf, "responses", &self.responses, flex, |b, x| {
            x.write(b, version)
        })?;
        if flex {
            let mut t = TaggedWriter::new();
            if version >= 16 && self.node_endpoints != d.node_endpoints {
                t.field(0, |b| {
                    put_array(b, "node_endpoints", &self.node_endpoints, true, |b, x| {
                        x.write(b, version)
                    })?;
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
            throttle_time_ms: r.i32("throttle_time_ms")?,
            ..Default::default()
        };
        if version >= 7 {
            m.error_code = r.i16("error_code")?;
            m.session_id = r.i32("session_id")?;
        }
        m.responses = r.array("responses", flex, |r| FetchResponseTopic::read(r, version))?;
        if flex {
            let unknown = r.tagged_fields("_tagged_fields", |tag, r| {
                match tag {
                    0 if version >= 16 => {
                        m.node_endpoints = r.array("node_endpoints", true, |r| {
                            FetchResponseNodeEndpoint::read(r, version)
                        })?
                    }
                    _ => return Ok(false),
                }
                Ok(true)
            })?;
            m.unknown_tagged_fields = unknown;
        }
        Ok(m)
    }
}

impl Response for FetchResponse {}

/// The response topics.
///
/// ```
/// use kafka_proto::{Message, messages::*};
/// let resp = FetchResponse {
///     responses: vec![FetchResponseTopic {
///         topic: "orders".into(),
///         partitions: vec![FetchResponsePartitionData::default()],
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// let back = FetchResponse::decode(&resp.encode_to_vec(12).unwrap(), 12).unwrap();
/// assert_eq!(back.responses[0].topic, "orders");
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FetchResponseTopic {
    /// The topic name (v4–12).
    pub topic: String,
    /// The unique topic ID (v13+).
    pub topic_id: Uuid,
    /// The topic partitions.
    pub partitions: Vec<FetchResponsePartitionData>,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl FetchResponseTopic {
    fn write<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let d = Self::default();
        let flex = version >= 12;
        check_field(version <= 12, &self.topic, &d.topic, "responses.topic")?;
        check_field(
            version >= 13,
            &self.topic_id,
            &d.topic_id,
            "responses.topic_id",
        )?;
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &d.unknown_tagged_fields,
            "responses._tagged_fields",
        )?;
        if version <= 12 {
            put_string(buf, "responses.topic", &self.topic, flex)?;
        }
        if version >= 13 {
            put_uuid(buf, &self.topic_id);
        }
        put_array(
            buf,
            "responses.partitions",
            &self.partitions,
            flex,
            |b, x| x.write(b, version),
        )?;
        if flex {
            put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
        }
        Ok(())
    }

    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 12;
        let mut m = Self::default();
        if version <= 12 {
            m.topic = r.string("responses.topic", flex)?;
        }
        if version >= 13 {
            m.topic_id = r.uuid("responses.topic_id")?;
        }
        m.partitions = r.array("responses.partitions", flex, |r| {
            FetchResponsePartitionData::read(r, version)
        })?;
        if flex {
            m.unknown_tagged_fields = r.unknown_tagged_fields("responses._tagged_fields")?;
        }
        Ok(m)
    }
}

/// The topic partitions.
///
/// ```
/// use kafka_proto::{ErrorCode, messages::*};
/// let p = FetchResponsePartitionData {
///     partition_index: 0,
///     error_code: ErrorCode::OffsetOutOfRange.code(),
///     ..Default::default()
/// };
/// assert_eq!(ErrorCode::from(p.error_code), ErrorCode::OffsetOutOfRange);
/// assert_eq!(p.records, None);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct FetchResponsePartitionData {
    /// The partition index.
    pub partition_index: i32,
    /// The error code, or 0 if there was no fetch error.
    pub error_code: i16,
    /// The current high water mark.
    pub high_watermark: i64,
    /// The last stable offset (or LSO) of the partition. This is the last offset such that the state of all transactional records prior to this offset have been decided (ABORTED or COMMITTED) (default -1).
    pub last_stable_offset: i64,
    /// The current log start offset (v5+, default -1).
    pub log_start_offset: i64,
    /// In case divergence is detected based on the `LastFetchedEpoch` and `FetchOffset` in the request, this field indicates the largest epoch and its end offset such that subsequent records are known to diverge (v12+, tagged 0).
    pub diverging_epoch: FetchResponseEpochEndOffset,
    /// The current leader of the partition (v12+, tagged 1).
    pub current_leader: FetchResponseLeaderIdAndEpoch,
    /// In the case of fetching an offset less than the LogStartOffset, this is the end offset and epoch that should be used in the FetchSnapshot request (v12+, tagged 2).
    pub snapshot_id: FetchResponseSnapshotId,
    /// The aborted transactions (nullable).
    pub aborted_transactions: Option<Vec<FetchResponseAbortedTransaction>>,
    /// The preferred read replica for the consumer to use on its next fetch request (v11+, default -1).
    pub preferred_read_replica: i32,
    /// The record data (nullable).
    pub records: Option<Bytes>,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl Default for FetchResponsePartitionData {
    fn default() -> Self {
        Self {
            partition_index: 0,
            error_code: 0,
            high_watermark: 0,
            last_stable_offset: -1,
            log_start_offset: -1,
            diverging_epoch: FetchResponseEpochEndOffset::default(),
            current_leader: FetchResponseLeaderIdAndEpoch::default(),
            snapshot_id: FetchResponseSnapshotId::default(),
            aborted_transactions: Some(Vec::new()),
            preferred_read_replica: -1,
            records: None,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl FetchResponsePartitionData {
    fn write<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let d = Self::default();
        let flex = version >= 12;
        check_field(
            version >= 5,
            &self.log_start_offset,
            &d.log_start_offset,
            "responses.partitions.log_start_offset",
        )?;
        check_field(
            version >= 12,
            &self.diverging_epoch,
            &d.diverging_epoch,
            "responses.partitions.diverging_epoch",
        )?;
        check_field(
            version >= 12,
            &self.current_leader,
            &d.current_leader,
            "responses.partitions.current_leader",
        )?;
        check_field(
            version >= 12,
            &self.snapshot_id,
            &d.snapshot_id,
            "responses.partitions.snapshot_id",
        )?;
        check_field(
            version >= 11,
            &self.preferred_read_replica,
            &d.preferred_read_replica,
            "responses.partitions.preferred_read_replica",
        )?;
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &d.unknown_tagged_fields,
            "responses.partitions._tagged_fields",
        )?;
        buf.put_i32(self.partition_index);
        buf.put_i16(self.error_code);
        buf.put_i64(self.high_watermark);
        buf.put_i64(self.last_stable_offset);
        if version >= 5 {
            buf.put_i64(self.log_start_offset);
        }
        put_nullable_array(
            buf,
            "responses.partitions.aborted_transactions",
            self.aborted_transactions.as_deref(),
            flex,
            |b, x| x.write(b, version),
        )?;
        if version >= 11 {
            buf.put_i32(self.preferred_read_replica);
        }
        put_nullable_bytes(
            buf,
            "responses.partitions.records",
            self.records.as_deref(),
            flex,
        )?;
        if flex {
            let mut t = TaggedWriter::new();
            if self.diverging_epoch != d.diverging_epoch {
                t.field(0, |b| {
                    self.diverging_epoch.write(b, version)?;
                    Ok(())
                })?;
            }
            if self.current_leader != d.current_leader {
                t.field(1, |b| {
                    self.current_leader.write(b, version)?;
                    Ok(())
                })?;
            }
            if self.snapshot_id != d.snapshot_id {
                t.field(2, |b| {
                    self.snapshot_id.write(b, version)?;
                    Ok(())
                })?;
            }
            t.finish(buf, &self.unknown_tagged_fields)?;
        }
        Ok(())
    }

    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 12;
        let mut m = Self {
            partition_index: r.i32("responses.partitions.partition_index")?,
            error_code: r.i16("responses.partitions.error_code")?,
            high_watermark: r.i64("responses.partitions.high_watermark")?,
            last_stable_offset: r.i64("responses.partitions.last_stable_offset")?,
            ..Default::default()
        };
        if version >= 5 {
            m.log_start_offset = r.i64("responses.partitions.log_start_offset")?;
        }
        m.aborted_transactions =
            r.nullable_array("responses.partitions.aborted_transactions", flex, |r| {
                FetchResponseAbortedTransaction::read(r, version)
            })?;
        if version >= 11 {
            m.preferred_read_replica = r.i32("responses.partitions.preferred_read_replica")?;
        }
        m.records = r.nullable_bytes("responses.partitions.records", flex)?;
        if flex {
            let unknown = r.tagged_fields("responses.partitions._tagged_fields", |tag, r| {
                match tag {
                    0 => m.diverging_epoch = FetchResponseEpochEndOffset::read(r, version)?,
                    1 => m.current_leader = FetchResponseLeaderIdAndEpoch::read(r, version)?,
                    2 => m.snapshot_id = FetchResponseSnapshotId::read(r, version)?,
                    _ => return Ok(false),
                }
                Ok(true)
            })?;
            m.unknown_tagged_fields = unknown;
        }
        Ok(m)
    }
}

/// In case divergence is detected based on the `LastFetchedEpoch` and `FetchOffset` in the request, this field indicates the largest epoch and its end offset such that subsequent records are known to diverge.
///
/// ```
/// use kafka_proto::{Message, messages::*};
/// let p = FetchResponsePartitionData {
///     diverging_epoch: FetchResponseEpochEndOffset {
///         epoch: 4,
///         end_offset: 990,
///         ..Default::default()
///     },
///     ..Default::default()
/// };
/// let resp = FetchResponse {
///     responses: vec![FetchResponseTopic {
///         topic_id: [1; 16],
///         partitions: vec![p],
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// let back = FetchResponse::decode(&resp.encode_to_vec(13).unwrap(), 13).unwrap();
/// assert_eq!(
///     back.responses[0].partitions[0].diverging_epoch.end_offset,
///     990
/// );
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct FetchResponseEpochEndOffset {
    /// The largest epoch (v12+, default -1).
    pub epoch: i32,
    /// The end offset of the epoch (v12+, default -1).
    pub end_offset: i64,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl Default for FetchResponseEpochEndOffset {
    fn default() -> Self {
        Self {
            epoch: -1,
            end_offset: -1,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl FetchResponseEpochEndOffset {
    fn write<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let d = Self::default();
        let flex = version >= 12;
        check_field(
            version >= 12,
            &self.epoch,
            &d.epoch,
            "responses.partitions.diverging_epoch.epoch",
        )?;
        check_field(
            version >= 12,
            &self.end_offset,
            &d.end_offset,
            "responses.partitions.diverging_epoch.end_offset",
        )?;
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &d.unknown_tagged_fields,
            "responses.partitions.diverging_epoch._tagged_fields",
        )?;
        if version >= 12 {
            buf.put_i32(self.epoch);
            buf.put_i64(self.end_offset);
        }
        if flex {
            put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
        }
        Ok(())
    }

    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 12;
        let mut m = Self::default();
        if version >= 12 {
            m.epoch = r.i32("responses.partitions.diverging_epoch.epoch")?;
            m.end_offset = r.i64("responses.partitions.diverging_epoch.end_offset")?;
        }
        if flex {
            m.unknown_tagged_fields =
                r.unknown_tagged_fields("responses.partitions.diverging_epoch._tagged_fields")?;
        }
        Ok(m)
    }
}

/// The current leader of the partition.
///
/// ```
/// use kafka_proto::messages::{FetchResponseLeaderIdAndEpoch, FetchResponsePartitionData};
/// let p = FetchResponsePartitionData::default();
/// assert_eq!(
///     p.current_leader,
///     FetchResponseLeaderIdAndEpoch {
///         leader_id: -1,
///         leader_epoch: -1,
///         ..Default::default()
///     }
/// );
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct FetchResponseLeaderIdAndEpoch {
    /// The ID of the current leader or -1 if the leader is unknown (v12+, default -1).
    pub leader_id: i32,
    /// The latest known leader epoch (v12+, default -1).
    pub leader_epoch: i32,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl Default for FetchResponseLeaderIdAndEpoch {
    fn default() -> Self {
        Self {
            leader_id: -1,
            leader_epoch: -1,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl FetchResponseLeaderIdAndEpoch {
    fn write<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let d = Self::default();
        let flex = version >= 12;
        check_field(
            version >= 12,
            &self.leader_id,
            &d.leader_id,
            "responses.partitions.current_leader.leader_id",
        )?;
        check_field(
            version >= 12,
            &self.leader_epoch,
            &d.leader_epoch,
            "responses.partitions.current_leader.leader_epoch",
        )?;
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &d.unknown_tagged_fields,
            "responses.partitions.current_leader._tagged_fields",
        )?;
        if version >= 12 {
            buf.put_i32(self.leader_id);
            buf.put_i32(self.leader_epoch);
        }
        if flex {
            put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
        }
        Ok(())
    }

    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 12;
        let mut m = Self::default();
        if version >= 12 {
            m.leader_id = r.i32("responses.partitions.current_leader.leader_id")?;
            m.leader_epoch = r.i32("responses.partitions.current_leader.leader_epoch")?;
        }
        if flex {
            m.unknown_tagged_fields =
                r.unknown_tagged_fields("responses.partitions.current_leader._tagged_fields")?;
        }
        Ok(m)
    }
}

/// In the case of fetching an offset less than the LogStartOffset, this is the end offset and epoch that should be used in the FetchSnapshot request.
///
/// ```
/// use kafka_proto::messages::FetchResponseSnapshotId;
/// let s = FetchResponseSnapshotId {
///     end_offset: 5_000,
///     epoch: 2,
///     ..Default::default()
/// };
/// assert_ne!(s, FetchResponseSnapshotId::default());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct FetchResponseSnapshotId {
    /// The end offset of the epoch (default -1).
    pub end_offset: i64,
    /// The largest epoch (default -1).
    pub epoch: i32,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl Default for FetchResponseSnapshotId {
    fn default() -> Self {
        Self {
            end_offset: -1,
            epoch: -1,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl FetchResponseSnapshotId {
    fn write<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let d = Self::default();
        let flex = version >= 12;
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &d.unknown_tagged_fields,
            "responses.partitions.snapshot_id._tagged_fields",
        )?;
        buf.put_i64(self.end_offset);
        buf.put_i32(self.epoch);
        if flex {
            put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
        }
        Ok(())
    }

    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 12;
        let mut m = Self {
            end_offset: r.i64("responses.partitions.snapshot_id.end_offset")?,
            epoch: r.i32("responses.partitions.snapshot_id.epoch")?,
            ..Default::default()
        };
        if flex {
            m.unknown_tagged_fields =
                r.unknown_tagged_fields("responses.partitions.snapshot_id._tagged_fields")?;
        }
        Ok(m)
    }
}

/// The aborted transactions.
///
/// ```
/// use kafka_proto::{Message, messages::*};
/// // A read_committed consumer skips producer 4000's batches from offset 17 on.
/// let p = FetchResponsePartitionData {
///     aborted_transactions: Some(vec![FetchResponseAbortedTransaction {
///         producer_id: 4000,
///         first_offset: 17,
///         ..Default::default()
///     }]),
///     ..Default::default()
/// };
/// let resp = FetchResponse {
///     responses: vec![FetchResponseTopic {
///         topic: "orders".into(),
///         partitions: vec![p],
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// assert_eq!(
///     FetchResponse::decode(&resp.encode_to_vec(4).unwrap(), 4).unwrap(),
///     resp
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FetchResponseAbortedTransaction {
    /// The producer id associated with the aborted transaction.
    pub producer_id: i64,
    /// The first offset in the aborted transaction.
    pub first_offset: i64,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl FetchResponseAbortedTransaction {
    fn write<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let d = Self::default();
        let flex = version >= 12;
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &d.unknown_tagged_fields,
            "responses.partitions.aborted_transactions._tagged_fields",
        )?;
        buf.put_i64(self.producer_id);
        buf.put_i64(self.first_offset);
        if flex {
            put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
        }
        Ok(())
    }

    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 12;
        let mut m = Self {
            producer_id: r.i64("responses.partitions.aborted_transactions.producer_id")?,
            first_offset: r.i64("responses.partitions.aborted_transactions.first_offset")?,
            ..Default::default()
        };
        if flex {
            m.unknown_tagged_fields = r.unknown_tagged_fields(
                "responses.partitions.aborted_transactions._tagged_fields",
            )?;
        }
        Ok(m)
    }
}

/// Endpoints for all current-leaders enumerated in PartitionData, with errors NOT_LEADER_OR_FOLLOWER & FENCED_LEADER_EPOCH.
///
/// ```
/// use kafka_proto::{Message, messages::*};
/// let resp = FetchResponse {
///     node_endpoints: vec![FetchResponseNodeEndpoint {
///         node_id: 2,
///         host: "kafka-2".into(),
///         port: 9092,
///         rack: None,
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// assert_eq!(
///     FetchResponse::decode(&resp.encode_to_vec(16).unwrap(), 16).unwrap(),
///     resp
/// );
/// assert!(resp.encode_to_vec(15).is_err(), "node endpoints need v16+");
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FetchResponseNodeEndpoint {
    /// The ID of the associated node (v16+).
    pub node_id: i32,
    /// The node's hostname (v16+).
    pub host: String,
    /// The node's port (v16+).
    pub port: i32,
    /// The rack of the node, or null if it has not been assigned to a rack (v16+, nullable).
    pub rack: Option<String>,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl FetchResponseNodeEndpoint {
    fn write<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let d = Self::default();
        let flex = version >= 12;
        check_field(
            version >= 16,
            &self.node_id,
            &d.node_id,
            "node_endpoints.node_id",
        )?;
        check_field(version >= 16, &self.host, &d.host, "node_endpoints.host")?;
        check_field(version >= 16, &self.port, &d.port, "node_endpoints.port")?;
        check_field(version >= 16, &self.rack, &d.rack, "node_endpoints.rack")?;
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &d.unknown_tagged_fields,
            "node_endpoints._tagged_fields",
        )?;
        if version >= 16 {
            buf.put_i32(self.node_id);
            put_string(buf, "node_endpoints.host", &self.host, flex)?;
            buf.put_i32(self.port);
            put_nullable_string(buf, "node_endpoints.rack", self.rack.as_deref(), flex)?;
        }
        if flex {
            put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
        }
        Ok(())
    }

    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 12;
        let mut m = Self::default();
        if version >= 16 {
            m.node_id = r.i32("node_endpoints.node_id")?;
            m.host = r.string("node_endpoints.host", flex)?;
            m.port = r.i32("node_endpoints.port")?;
            m.rack = r.nullable_string("node_endpoints.rack", flex)?;
        }
        if flex {
            m.unknown_tagged_fields = r.unknown_tagged_fields("node_endpoints._tagged_fields")?;
        }
        Ok(m)
    }
}

#[cfg(any(test, feature = "arbitrary"))]
mod arbitrary {
    use super::*;
    use crate::testing::{
        VersionedArbitrary, arb_bytes, arb_string, arb_tagged, arb_uuid, arb_vec,
        opt_nullable_string,
    };
    use proptest::prelude::*;

    fn arb_fetch_request(version: i16) -> BoxedStrategy<FetchRequest> {
        let flex = version >= 12;
        (
            (
                if version >= 12 {
                    opt_nullable_string(true)
                } else {
                    Just(None).boxed()
                },
                if version <= 14 {
                    any::<i32>().boxed()
                } else {
                    Just(-1).boxed()
                },
                if version >= 15 {
                    arb_fetch_request_replica_state(version)
                } else {
                    Just(FetchRequestReplicaState::default()).boxed()
                },
                any::<i32>().boxed(),
                any::<i32>().boxed(),
            ),
            (
                any::<i32>().boxed(),
                any::<i8>().boxed(),
                if version >= 7 {
                    any::<i32>().boxed()
                } else {
                    Just(0).boxed()
                },
                if version >= 7 {
                    any::<i32>().boxed()
                } else {
                    Just(-1).boxed()
                },
                arb_vec(true, arb_fetch_request_topic(version)),
            ),
            (
                if version >= 7 {
                    arb_vec(true, arb_fetch_request_forgotten_topic(version))
                } else {
                    Just(Vec::new()).boxed()
                },
                if version >= 11 {
                    arb_string(true)
                } else {
                    Just(String::new()).boxed()
                },
                arb_tagged(flex),
            ),
        )
            .prop_map(
                |(
                    (cluster_id, replica_id, replica_state, max_wait_ms, min_bytes),
                    (max_bytes, isolation_level, session_id, session_epoch, topics),
                    (forgotten_topics_data, rack_id, unknown_tagged_fields),
                )| FetchRequest {
                    cluster_id,
                    replica_id,
                    replica_state,
                    max_wait_ms,
                    min_bytes,
                    max_bytes,
                    isolation_level,
                    session_id,
                    session_epoch,
                    topics,
                    forgotten_topics_data,
                    rack_id,
                    unknown_tagged_fields,
                },
            )
            .boxed()
    }

    fn arb_fetch_request_replica_state(version: i16) -> BoxedStrategy<FetchRequestReplicaState> {
        let flex = version >= 12;
        (
            if version >= 15 {
                any::<i32>().boxed()
            } else {
                Just(-1).boxed()
            },
            if version >= 15 {
                any::<i64>().boxed()
            } else {
                Just(-1).boxed()
            },
            arb_tagged(flex),
        )
            .prop_map(|(replica_id, replica_epoch, unknown_tagged_fields)| {
                FetchRequestReplicaState {
                    replica_id,
                    replica_epoch,
                    unknown_tagged_fields,
                }
            })
            .boxed()
    }

    fn arb_fetch_request_topic(version: i16) -> BoxedStrategy<FetchRequestTopic> {
        let flex = version >= 12;
        (
            if version <= 12 {
                arb_string(true)
            } else {
                Just(String::new()).boxed()
            },
            if version >= 13 {
                arb_uuid(true)
            } else {
                Just([0u8; 16]).boxed()
            },
            arb_vec(true, arb_fetch_request_partition(version)),
            arb_tagged(flex),
        )
            .prop_map(
                |(topic, topic_id, partitions, unknown_tagged_fields)| FetchRequestTopic {
                    topic,
                    topic_id,
                    partitions,
                    unknown_tagged_fields,
                },
            )
            .boxed()
    }

    fn arb_fetch_request_partition(version: i16) -> BoxedStrategy<FetchRequestPartition> {
        let flex = version >= 12;
        (
            (
                any::<i32>().boxed(),
                if version >= 9 {
                    any::<i32>().boxed()
                } else {
                    Just(-1).boxed()
                },
                any::<i64>().boxed(),
                if version >= 12 {
                    any::<i32>().boxed()
                } else {
                    Just(-1).boxed()
                },
                if version >= 5 {
                    any::<i64>().boxed()
                } else {
                    Just(-1).boxed()
                },
            ),
            (
                any::<i32>().boxed(),
                if version >= 17 {
                    arb_uuid(true)
                } else {
                    Just([0u8; 16]).boxed()
                },
                if version >= 18 {
                    any::<i64>().boxed()
                } else {
                    Just(i64::MAX).boxed()
                },
                arb_tagged(flex),
            ),
        )
            .prop_map(
                |(
                    (
                        partition,
                        current_leader_epoch,
                        fetch_offset,
                        last_fetched_epoch,
                        log_start_offset,
                    ),
                    (
                        partition_max_bytes,
                        replica_directory_id,
                        high_watermark,
                        unknown_tagged_fields,
                    ),
                )| FetchRequestPartition {
                    partition,
                    current_leader_epoch,
                    fetch_offset,
                    last_fetched_epoch,
                    log_start_offset,
                    partition_max_bytes,
                    replica_directory_id,
                    high_watermark,
                    unknown_tagged_fields,
                },
            )
            .boxed()
    }

    fn arb_fetch_request_forgotten_topic(
        version: i16,
    ) -> BoxedStrategy<FetchRequestForgottenTopic> {
        let flex = version >= 12;
        (
            if (7..=12).contains(&version) {
                arb_string(true)
            } else {
                Just(String::new()).boxed()
            },
            if version >= 13 {
                arb_uuid(true)
            } else {
                Just([0u8; 16]).boxed()
            },
            if version >= 7 {
                arb_vec(true, any::<i32>())
            } else {
                Just(Vec::new()).boxed()
            },
            arb_tagged(flex),
        )
            .prop_map(|(topic, topic_id, partitions, unknown_tagged_fields)| {
                FetchRequestForgottenTopic {
                    topic,
                    topic_id,
                    partitions,
                    unknown_tagged_fields,
                }
            })
            .boxed()
    }

    impl VersionedArbitrary for FetchRequest {
        fn arbitrary(version: i16) -> BoxedStrategy<Self> {
            arb_fetch_request(version)
        }
    }

    fn arb_fetch_response(version: i16) -> BoxedStrategy<FetchResponse> {
        let flex = version >= 12;
        (
            any::<i32>().boxed(),
            if version >= 7 {
                any::<i16>().boxed()
            } else {
                Just(0).boxed()
            },
            if version >= 7 {
                any::<i32>().boxed()
            } else {
                Just(0).boxed()
            },
            arb_vec(true, arb_fetch_response_topic(version)),
            if version >= 16 {
                arb_vec(true, arb_fetch_response_node_endpoint(version))
            } else {
                Just(Vec::new()).boxed()
            },
            arb_tagged(flex),
        )
            .prop_map(
                |(
                    throttle_time_ms,
                    error_code,
                    session_id,
                    responses,
                    node_endpoints,
                    unknown_tagged_fields,
                )| FetchResponse {
                    throttle_time_ms,
                    error_code,
                    session_id,
                    responses,
                    node_endpoints,
                    unknown_tagged_fields,
                },
            )
            .boxed()
    }

    fn arb_fetch_response_topic(version: i16) -> BoxedStrategy<FetchResponseTopic> {
        let flex = version >= 12;
        (
            if version <= 12 {
                arb_string(true)
            } else {
                Just(String::new()).boxed()
            },
            if version >= 13 {
                arb_uuid(true)
            } else {
                Just([0u8; 16]).boxed()
            },
            arb_vec(true, arb_fetch_response_partition_data(version)),
            arb_tagged(flex),
        )
            .prop_map(
                |(topic, topic_id, partitions, unknown_tagged_fields)| FetchResponseTopic {
                    topic,
                    topic_id,
                    partitions,
                    unknown_tagged_fields,
                },
            )
            .boxed()
    }

    fn arb_fetch_response_partition_data(
        version: i16,
    ) -> BoxedStrategy<FetchResponsePartitionData> {
        let flex = version >= 12;
        (
            (
                any::<i32>().boxed(),
                any::<i16>().boxed(),
                any::<i64>().boxed(),
                any::<i64>().boxed(),
                if version >= 5 {
                    any::<i64>().boxed()
                } else {
                    Just(-1).boxed()
                },
                if version >= 12 {
                    arb_fetch_response_epoch_end_offset(version)
                } else {
                    Just(FetchResponseEpochEndOffset::default()).boxed()
                },
            ),
            (
                if version >= 12 {
                    arb_fetch_response_leader_id_and_epoch(version)
                } else {
                    Just(FetchResponseLeaderIdAndEpoch::default()).boxed()
                },
                if version >= 12 {
                    arb_fetch_response_snapshot_id(version)
                } else {
                    Just(FetchResponseSnapshotId::default()).boxed()
                },
                proptest::option::of(arb_vec(
                    true,
                    arb_fetch_response_aborted_transaction(version),
                ))
                .boxed(),
                if version >= 11 {
                    any::<i32>().boxed()
                } else {
                    Just(-1).boxed()
                },
                proptest::option::of(arb_bytes(true)).boxed(),
                arb_tagged(flex),
            ),
        )
            .prop_map(
                |(
                    (
                        partition_index,
                        error_code,
                        high_watermark,
                        last_stable_offset,
                        log_start_offset,
                        diverging_epoch,
                    ),
                    (
                        current_leader,
                        snapshot_id,
                        aborted_transactions,
                        preferred_read_replica,
                        records,
                        unknown_tagged_fields,
                    ),
                )| FetchResponsePartitionData {
                    partition_index,
                    error_code,
                    high_watermark,
                    last_stable_offset,
                    log_start_offset,
                    diverging_epoch,
                    current_leader,
                    snapshot_id,
                    aborted_transactions,
                    preferred_read_replica,
                    records,
                    unknown_tagged_fields,
                },
            )
            .boxed()
    }

    fn arb_fetch_response_epoch_end_offset(
        version: i16,
    ) -> BoxedStrategy<FetchResponseEpochEndOffset> {
        let flex = version >= 12;
        (
            if version >= 12 {
                any::<i32>().boxed()
            } else {
                Just(-1).boxed()
            },
            if version >= 12 {
                any::<i64>().boxed()
            } else {
                Just(-1).boxed()
            },
            arb_tagged(flex),
        )
            .prop_map(
                |(epoch, end_offset, unknown_tagged_fields)| FetchResponseEpochEndOffset {
                    epoch,
                    end_offset,
                    unknown_tagged_fields,
                },
            )
            .boxed()
    }

    fn arb_fetch_response_leader_id_and_epoch(
        version: i16,
    ) -> BoxedStrategy<FetchResponseLeaderIdAndEpoch> {
        let flex = version >= 12;
        (
            if version >= 12 {
                any::<i32>().boxed()
            } else {
                Just(-1).boxed()
            },
            if version >= 12 {
                any::<i32>().boxed()
            } else {
                Just(-1).boxed()
            },
            arb_tagged(flex),
        )
            .prop_map(|(leader_id, leader_epoch, unknown_tagged_fields)| {
                FetchResponseLeaderIdAndEpoch {
                    leader_id,
                    leader_epoch,
                    unknown_tagged_fields,
                }
            })
            .boxed()
    }

    fn arb_fetch_response_snapshot_id(version: i16) -> BoxedStrategy<FetchResponseSnapshotId> {
        let flex = version >= 12;
        (any::<i64>().boxed(), any::<i32>().boxed(), arb_tagged(flex))
            .prop_map(
                |(end_offset, epoch, unknown_tagged_fields)| FetchResponseSnapshotId {
                    end_offset,
                    epoch,
                    unknown_tagged_fields,
                },
            )
            .boxed()
    }

    fn arb_fetch_response_aborted_transaction(
        version: i16,
    ) -> BoxedStrategy<FetchResponseAbortedTransaction> {
        let flex = version >= 12;
        (any::<i64>().boxed(), any::<i64>().boxed(), arb_tagged(flex))
            .prop_map(|(producer_id, first_offset, unknown_tagged_fields)| {
                FetchResponseAbortedTransaction {
                    producer_id,
                    first_offset,
                    unknown_tagged_fields,
                }
            })
            .boxed()
    }

    fn arb_fetch_response_node_endpoint(version: i16) -> BoxedStrategy<FetchResponseNodeEndpoint> {
        let flex = version >= 12;
        (
            if version >= 16 {
                any::<i32>().boxed()
            } else {
                Just(0).boxed()
            },
            if version >= 16 {
                arb_string(true)
            } else {
                Just(String::new()).boxed()
            },
            if version >= 16 {
                any::<i32>().boxed()
            } else {
                Just(0).boxed()
            },
            if version >= 16 {
                opt_nullable_string(true)
            } else {
                Just(None).boxed()
            },
            arb_tagged(flex),
        )
            .prop_map(|(node_id, host, port, rack, unknown_tagged_fields)| {
                FetchResponseNodeEndpoint {
                    node_id,
                    host,
                    port,
                    rack,
                    unknown_tagged_fields,
                }
            })
            .boxed()
    }

    impl VersionedArbitrary for FetchResponse {
        fn arbitrary(version: i16) -> BoxedStrategy<Self> {
            arb_fetch_response(version)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EncodeErrorKind;

    /// A v4 (oldest, classic) READ_COMMITTED request written from the schema.
    #[test]
    fn v4_request_fixture() {
        let bytes: &[u8] = &[
            0xff, 0xff, 0xff, 0xff, // replica_id -1
            0, 0, 0x01, 0xf4, // max_wait_ms 500
            0, 0, 0, 1, // min_bytes 1
            0x7f, 0xff, 0xff, 0xff, // max_bytes i32::MAX
            1,    // isolation_level READ_COMMITTED
            0, 0, 0, 1, // topics: 1
            0, 1, b'a', // topic "a"
            0, 0, 0, 1, // partitions: 1
            0, 0, 0, 0, // partition 0
            0, 0, 0, 0, 0, 0, 0, 5, // fetch_offset 5
            0, 0x10, 0, 0, // partition_max_bytes 1 MiB
        ];
        let req = FetchRequest::decode(bytes, 4).unwrap();
        assert_eq!(req.replica_id, -1);
        assert_eq!(req.max_bytes, i32::MAX);
        assert_eq!(req.isolation_level, 1);
        assert_eq!(req.topics[0].topic, "a");
        let p = &req.topics[0].partitions[0];
        assert_eq!(
            (p.partition, p.fetch_offset, p.partition_max_bytes),
            (0, 5, 1 << 20)
        );
        assert_eq!(p.current_leader_epoch, -1);
        assert_eq!(req.encode_to_vec(4).unwrap(), bytes);
    }

    /// A v17 request: topic ids, `replica_state` (tag 1) instead of
    /// `replica_id`, `cluster_id` (tag 0) and a partition `replica_directory_id` (tag 0).
    #[test]
    fn v17_request_fixture() {
        let mut bytes: Vec<u8> = vec![
            0, 0, 0x01, 0xf4, // max_wait_ms 500
            0, 0, 0, 1, // min_bytes 1
            0x7f, 0xff, 0xff, 0xff, // max_bytes
            0,    // isolation_level
            0, 0, 0, 0, // session_id 0
            0xff, 0xff, 0xff, 0xff, // session_epoch -1
            2,    // topics: 1
        ];
        bytes.extend([0x11; 16]); // topic_id
        bytes.extend([
            2, // partitions: 1
            0, 0, 0, 3, // partition 3
            0, 0, 0, 4, // current_leader_epoch 4
            0, 0, 0, 0, 0, 0, 0, 10, // fetch_offset 10
            0xff, 0xff, 0xff, 0xff, // last_fetched_epoch -1
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // log_start_offset -1
            0, 0x10, 0, 0, // partition_max_bytes
            1, 0, 16, // one tag: 0 (replica_directory_id), 16 bytes
        ]);
        bytes.extend([0x22; 16]);
        bytes.extend([
            0, // topic tags
            1, // forgotten_topics_data: empty
            1, // rack_id ""
            2, // two tags
            0, 2, 2, b'c', // tag 0: cluster_id "c"
            1, 13, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, // tag 1: replica 1, epoch 2
        ]);
        let req = FetchRequest::decode(&bytes, 17).unwrap();
        assert_eq!(req.cluster_id.as_deref(), Some("c"));
        assert_eq!(req.replica_id, -1);
        assert_eq!(req.replica_state.replica_id, 1);
        assert_eq!(req.replica_state.replica_epoch, 2);
        assert_eq!(req.session_epoch, -1);
        let t = &req.topics[0];
        assert_eq!(t.topic_id, [0x11; 16]);
        assert_eq!(t.partitions[0].replica_directory_id, [0x22; 16]);
        assert_eq!(t.partitions[0].high_watermark, i64::MAX);
        assert_eq!(req.encode_to_vec(17).unwrap(), bytes);
        // v14 has no replica_state, and no topic ids.
        let err = req.encode_to_vec(14).unwrap_err();
        assert_eq!(err.kind, EncodeErrorKind::FieldNotInVersion);
    }

    /// A v4 response with null aborted transactions and null records.
    #[test]
    fn v4_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 0, // throttle_time_ms
            0, 0, 0, 1, // responses: 1
            0, 1, b'a', // topic "a"
            0, 0, 0, 1, // partitions: 1
            0, 0, 0, 2, // partition_index 2
            0, 1, // error_code OFFSET_OUT_OF_RANGE
            0, 0, 0, 0, 0, 0, 0, 9, // high_watermark 9
            0, 0, 0, 0, 0, 0, 0, 8, // last_stable_offset 8
            0xff, 0xff, 0xff, 0xff, // aborted_transactions null
            0xff, 0xff, 0xff, 0xff, // records null
        ];
        let resp = FetchResponse::decode(bytes, 4).unwrap();
        let p = &resp.responses[0].partitions[0];
        assert_eq!(p.partition_index, 2);
        assert_eq!(
            crate::ErrorCode::from(p.error_code),
            crate::ErrorCode::OffsetOutOfRange
        );
        assert_eq!((p.high_watermark, p.last_stable_offset), (9, 8));
        assert_eq!(p.aborted_transactions, None);
        assert_eq!(p.records, None);
        assert_eq!(resp.encode_to_vec(4).unwrap(), bytes);
    }

    /// A v12 (first flexible) response: an aborted transaction, records, and
    /// the `diverging_epoch` (tag 0) and `current_leader` (tag 1) tagged structs.
    #[test]
    fn v12_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 0, // throttle_time_ms
            0, 0, // error_code
            0, 0, 0, 9, // session_id 9
            2, // responses: 1
            2, b'a', // topic "a"
            2,    // partitions: 1
            0, 0, 0, 0, // partition_index 0
            0, 0, // error_code
            0, 0, 0, 0, 0, 0, 0, 10, // high_watermark 10
            0, 0, 0, 0, 0, 0, 0, 8, // last_stable_offset 8
            0, 0, 0, 0, 0, 0, 0, 0, // log_start_offset 0
            2, // aborted_transactions: 1
            0, 0, 0, 0, 0, 0, 0, 7, // producer_id 7
            0, 0, 0, 0, 0, 0, 0, 5, // first_offset 5
            0, // aborted transaction tags
            0xff, 0xff, 0xff, 0xff, // preferred_read_replica -1
            4, 1, 2, 3, // records: 3 bytes
            2, // two tags
            0, 13, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 100, 0, // diverging epoch 2 @ 100
            1, 9, 0, 0, 0, 1, 0, 0, 0, 5, 0, // current leader 1, epoch 5
            0, // topic tags
            0, // response tags
        ];
        let resp = FetchResponse::decode(bytes, 12).unwrap();
        assert_eq!(resp.session_id, 9);
        let p = &resp.responses[0].partitions[0];
        assert_eq!(p.high_watermark, 10);
        let aborted = p.aborted_transactions.as_ref().unwrap();
        assert_eq!((aborted[0].producer_id, aborted[0].first_offset), (7, 5));
        assert_eq!(p.records.as_deref(), Some(&[1u8, 2, 3][..]));
        assert_eq!(p.diverging_epoch.epoch, 2);
        assert_eq!(p.diverging_epoch.end_offset, 100);
        assert_eq!(p.current_leader.leader_id, 1);
        assert_eq!(p.current_leader.leader_epoch, 5);
        assert_eq!(p.snapshot_id, FetchResponseSnapshotId::default());
        assert_eq!(p.preferred_read_replica, -1);
        assert_eq!(resp.encode_to_vec(12).unwrap(), bytes);
    }
}

#[cfg(test)]
mod round_trip {
    use super::*;
    use crate::testing::{round_trip_all_versions, truncations_fail_cleanly};

    #[test]
    fn request_every_version() {
        round_trip_all_versions::<FetchRequest>(64);
        truncations_fail_cleanly::<FetchRequest>(8);
    }

    #[test]
    fn response_every_version() {
        round_trip_all_versions::<FetchResponse>(64);
        truncations_fail_cleanly::<FetchResponse>(8);
    }
}
