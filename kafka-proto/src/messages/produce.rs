//! Produce (key 0), versions 3–13, flexible from 9.
//!
//! The request carries raw RecordBatch bytes per partition (decoded separately by
//! [`crate::record`]). Up to v12 topics are named; from v13 they are identified by
//! topic id (the name must then stay empty, the id must stay zero before v13).
//! The response adds per-record errors and an error message from v8, and from
//! v10 the new leader (tagged 0 per partition) and its endpoint (tagged 0 at the
//! top level) for `NOT_LEADER_OR_FOLLOWER` redirects.

use crate::primitives::{
    Reader, TaggedFields, TaggedWriter, Uuid, put_array, put_nullable_bytes, put_nullable_string,
    put_string, put_unknown_tagged_fields, put_uuid,
};
use crate::{
    ApiKey, DecodeError, EncodeError, Message, Request, Response, VersionRange, check_field,
};
use bytes::{BufMut, Bytes};

/// Writes record batches to partition leaders.
///
/// ```
/// use bytes::Bytes;
/// use kafka_proto::{Message, messages::*};
/// let req = ProduceRequest {
///     transactional_id: Some("txn-1".into()),
///     acks: -1,
///     timeout_ms: 30_000,
///     topic_data: vec![ProduceRequestTopicProduceData {
///         name: "orders".into(),
///         partition_data: vec![ProduceRequestPartitionProduceData {
///             index: 0,
///             records: Some(Bytes::from_static(b"batch")),
///             ..Default::default()
///         }],
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// assert_eq!(
///     ProduceRequest::decode(&req.encode_to_vec(11).unwrap(), 11).unwrap(),
///     req
/// );
/// // v13 identifies topics by id: a topic name cannot be carried.
/// assert!(req.encode_to_vec(13).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProduceRequest {
    /// The transactional ID, or null if the producer is not transactional (nullable).
    pub transactional_id: Option<String>,
    /// The number of acknowledgments the producer requires the leader to have received before considering a request complete. Allowed values: 0 for no acknowledgments, 1 for only the leader and -1 for the full ISR.
    pub acks: i16,
    /// The timeout to await a response in milliseconds.
    pub timeout_ms: i32,
    /// Each topic to produce to.
    pub topic_data: Vec<ProduceRequestTopicProduceData>,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl Message for ProduceRequest {
    const API_KEY: ApiKey = ApiKey::Produce;
    const VERSIONS: VersionRange = VersionRange::new(3, 13);
    const FLEXIBLE_MIN: i16 = 9;

    fn encode_body<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let d = Self::default();
        let flex = Self::is_flexible(version);
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &d.unknown_tagged_fields,
            "_tagged_fields",
        )?;
        put_nullable_string(
            buf,
            "transactional_id",
            self.transactional_id.as_deref(),
            flex,
        )?;
        buf.put_i16(self.acks);
        buf.put_i32(self.timeout_ms);
        put_array(buf, "topic_data", &self.topic_data, flex, |b, x| {
            x.write(b, version)
        })?;
        if flex {
            put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
        }
        Ok(())
    }

    fn decode_body(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = Self::is_flexible(version);
        let mut m = Self {
            transactional_id: r.nullable_string("transactional_id", flex)?,
            acks: r.i16("acks")?,
            timeout_ms: r.i32("timeout_ms")?,
            topic_data: r.array("topic_data", flex, |r| {
                ProduceRequestTopicProduceData::read(r, version)
            })?,
            ..Default::default()
        };
        if flex {
            m.unknown_tagged_fields = r.unknown_tagged_fields("_tagged_fields")?;
        }
        Ok(m)
    }
}

impl Request for ProduceRequest {
    type Response = ProduceResponse;
}

/// Each topic to produce to.
///
/// ```
/// use bytes::Bytes;
/// use kafka_proto::{Message, messages::*};
/// // v13 addresses the topic by id.
/// let topic = ProduceRequestTopicProduceData {
///     topic_id: [9; 16],
///     partition_data: vec![ProduceRequestPartitionProduceData {
///         index: 1,
///         records: Some(Bytes::from_static(b"batch")),
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// let req = ProduceRequest {
///     acks: -1,
///     timeout_ms: 30_000,
///     topic_data: vec![topic],
///     ..Default::default()
/// };
/// assert_eq!(
///     ProduceRequest::decode(&req.encode_to_vec(13).unwrap(), 13).unwrap(),
///     req
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProduceRequestTopicProduceData {
    /// The topic name (v3–12).
    pub name: String,
    /// The unique topic ID (v13+).
    pub topic_id: Uuid,
    /// Each partition to produce to.
    pub partition_data: Vec<ProduceRequestPartitionProduceData>,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl ProduceRequestTopicProduceData {
    fn write<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let d = Self::default();
        let flex = version >= 9;
        check_field(version <= 12, &self.name, &d.name, "topic_data.name")?;
        check_field(
            version >= 13,
            &self.topic_id,
            &d.topic_id,
            "topic_data.topic_id",
        )?;
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &d.unknown_tagged_fields,
            "topic_data._tagged_fields",
        )?;
        if version <= 12 {
            put_string(buf, "topic_data.name", &self.name, flex)?;
        }
        if version >= 13 {
            put_uuid(buf, &self.topic_id);
        }
        put_array(
            buf,
            "topic_data.partition_data",
            &self.partition_data,
            flex,
            |b, x| x.write(b, version),
        )?;
        if flex {
            put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
        }
        Ok(())
    }

    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 9;
        let mut m = Self::default();
        if version <= 12 {
            m.name = r.string("topic_data.name", flex)?;
        }
        if version >= 13 {
            m.topic_id = r.uuid("topic_data.topic_id")?;
        }
        m.partition_data = r.array("topic_data.partition_data", flex, |r| {
            ProduceRequestPartitionProduceData::read(r, version)
        })?;
        if flex {
            m.unknown_tagged_fields = r.unknown_tagged_fields("topic_data._tagged_fields")?;
        }
        Ok(m)
    }
}

/// Each partition to produce to.
///
/// ```
/// use bytes::Bytes;
/// use kafka_proto::messages::ProduceRequestPartitionProduceData;
/// let p = ProduceRequestPartitionProduceData {
///     index: 0,
///     records: Some(Bytes::from_static(b"encoded RecordBatch")),
///     ..Default::default()
/// };
/// assert!(p.records.is_some());
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProduceRequestPartitionProduceData {
    /// The partition index.
    pub index: i32,
    /// The record data to be produced (nullable).
    pub records: Option<Bytes>,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl ProduceRequestPartitionProduceData {
    fn write<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let d = Self::default();
        let flex = version >= 9;
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &d.unknown_tagged_fields,
            "topic_data.partition_data._tagged_fields",
        )?;
        buf.put_i32(self.index);
        put_nullable_bytes(
            buf,
            "topic_data.partition_data.records",
            self.records.as_deref(),
            flex,
        )?;
        if flex {
            put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
        }
        Ok(())
    }

    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 9;
        let mut m = Self {
            index: r.i32("topic_data.partition_data.index")?,
            records: r.nullable_bytes("topic_data.partition_data.records", flex)?,
            ..Default::default()
        };
        if flex {
            m.unknown_tagged_fields =
                r.unknown_tagged_fields("topic_data.partition_data._tagged_fields")?;
        }
        Ok(m)
    }
}

/// The outcome of a produce request, per partition.
///
/// ```
/// use kafka_proto::{ErrorCode, Message, messages::*};
/// let resp = ProduceResponse {
///     responses: vec![ProduceResponseTopicProduceResponse {
///         name: "orders".into(),
///         partition_responses: vec![ProduceResponsePartitionProduceResponse {
///             index: 0,
///             base_offset: 42,
///             ..Default::default()
///         }],
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// let back = ProduceResponse::decode(&resp.encode_to_vec(9).unwrap(), 9).unwrap();
/// let p = &back.responses[0].partition_responses[0];
/// assert_eq!(ErrorCode::from(p.error_code), ErrorCode::None);
/// assert_eq!(p.log_append_time_ms, -1);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProduceResponse {
    /// Each produce response.
    pub responses: Vec<ProduceResponseTopicProduceResponse>,
    /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota.
    pub throttle_time_ms: i32,
    /// Endpoints for all current-leaders enumerated in PartitionProduceResponses, with errors NOT_LEADER_OR_FOLLOWER (v10+, tagged 0).
    pub node_endpoints: Vec<ProduceResponseNodeEndpoint>,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl Message for ProduceResponse {
    const API_KEY: ApiKey = ApiKey::Produce;
    const VERSIONS: VersionRange = VersionRange::new(3, 13);
    const FLEXIBLE_MIN: i16 = 9;

    fn encode_body<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let d = Self::default();
        let flex = Self::is_flexible(version);
        check_field(
            version >= 10,
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
        put_array(buf, "responses", &self.responses, flex, |b, x| {
            x.write(b, version)
        })?;
        buf.put_i32(self.throttle_time_ms);
        if flex {
            let mut t = TaggedWriter::new();
            if version >= 10 && self.node_endpoints != d.node_endpoints {
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
            responses: r.array("responses", flex, |r| {
                ProduceResponseTopicProduceResponse::read(r, version)
            })?,
            throttle_time_ms: r.i32("throttle_time_ms")?,
            ..Default::default()
        };
        if flex {
            let unknown = r.tagged_fields("_tagged_fields", |tag, r| {
                match tag {
                    0 if version >= 10 => {
                        m.node_endpoints = r.array("node_endpoints", true, |r| {
                            ProduceResponseNodeEndpoint::read(r, version)
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

impl Response for ProduceResponse {}

/// Each produce response.
///
/// ```
/// use kafka_proto::{Message, messages::*};
/// let resp = ProduceResponse {
///     responses: vec![ProduceResponseTopicProduceResponse {
///         name: "orders".into(),
///         partition_responses: vec![ProduceResponsePartitionProduceResponse {
///             index: 0,
///             base_offset: 500,
///             ..Default::default()
///         }],
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// let back = ProduceResponse::decode(&resp.encode_to_vec(9).unwrap(), 9).unwrap();
/// assert_eq!(back.responses[0].partition_responses[0].base_offset, 500);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProduceResponseTopicProduceResponse {
    /// The topic name (v3–12).
    pub name: String,
    /// The unique topic ID (v13+).
    pub topic_id: Uuid,
    /// Each partition that we produced to within the topic.
    pub partition_responses: Vec<ProduceResponsePartitionProduceResponse>,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl ProduceResponseTopicProduceResponse {
    fn write<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let d = Self::default();
        let flex = version >= 9;
        check_field(version <= 12, &self.name, &d.name, "responses.name")?;
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
            put_string(buf, "responses.name", &self.name, flex)?;
        }
        if version >= 13 {
            put_uuid(buf, &self.topic_id);
        }
        put_array(
            buf,
            "responses.partition_responses",
            &self.partition_responses,
            flex,
            |b, x| x.write(b, version),
        )?;
        if flex {
            put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
        }
        Ok(())
    }

    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 9;
        let mut m = Self::default();
        if version <= 12 {
            m.name = r.string("responses.name", flex)?;
        }
        if version >= 13 {
            m.topic_id = r.uuid("responses.topic_id")?;
        }
        m.partition_responses = r.array("responses.partition_responses", flex, |r| {
            ProduceResponsePartitionProduceResponse::read(r, version)
        })?;
        if flex {
            m.unknown_tagged_fields = r.unknown_tagged_fields("responses._tagged_fields")?;
        }
        Ok(m)
    }
}

/// Each partition that we produced to within the topic.
///
/// ```
/// use kafka_proto::{
///     ErrorCode, error_code::TxnHandling, messages::ProduceResponsePartitionProduceResponse,
/// };
/// let p = ProduceResponsePartitionProduceResponse {
///     index: 0,
///     error_code: ErrorCode::DuplicateSequenceNumber.code(),
///     ..Default::default()
/// };
/// assert_eq!(
///     ErrorCode::from(p.error_code).txn_handling(),
///     TxnHandling::DuplicateSuccess
/// );
/// assert_eq!(p.log_append_time_ms, -1);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ProduceResponsePartitionProduceResponse {
    /// The partition index.
    pub index: i32,
    /// The error code, or 0 if there was no error.
    pub error_code: i16,
    /// The base offset.
    pub base_offset: i64,
    /// The timestamp returned by broker after appending the messages. If CreateTime is used for the topic, the timestamp will be -1.  If LogAppendTime is used for the topic, the timestamp will be the broker local time when the messages are appended (default -1).
    pub log_append_time_ms: i64,
    /// The log start offset (v5+, default -1).
    pub log_start_offset: i64,
    /// The batch indices of records that caused the batch to be dropped (v8+).
    pub record_errors: Vec<ProduceResponseBatchIndexAndErrorMessage>,
    /// The global error message summarizing the common root cause of the records that caused the batch to be dropped (v8+, nullable).
    pub error_message: Option<String>,
    /// The leader broker that the producer should use for future requests (v10+, tagged 0).
    pub current_leader: ProduceResponseLeaderIdAndEpoch,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl Default for ProduceResponsePartitionProduceResponse {
    fn default() -> Self {
        Self {
            index: 0,
            error_code: 0,
            base_offset: 0,
            log_append_time_ms: -1,
            log_start_offset: -1,
            record_errors: Vec::new(),
            error_message: None,
            current_leader: ProduceResponseLeaderIdAndEpoch::default(),
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl ProduceResponsePartitionProduceResponse {
    fn write<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let d = Self::default();
        let flex = version >= 9;
        check_field(
            version >= 5,
            &self.log_start_offset,
            &d.log_start_offset,
            "responses.partition_responses.log_start_offset",
        )?;
        check_field(
            version >= 8,
            &self.record_errors,
            &d.record_errors,
            "responses.partition_responses.record_errors",
        )?;
        check_field(
            version >= 8,
            &self.error_message,
            &d.error_message,
            "responses.partition_responses.error_message",
        )?;
        check_field(
            version >= 10,
            &self.current_leader,
            &d.current_leader,
            "responses.partition_responses.current_leader",
        )?;
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &d.unknown_tagged_fields,
            "responses.partition_responses._tagged_fields",
        )?;
        buf.put_i32(self.index);
        buf.put_i16(self.error_code);
        buf.put_i64(self.base_offset);
        buf.put_i64(self.log_append_time_ms);
        if version >= 5 {
            buf.put_i64(self.log_start_offset);
        }
        if version >= 8 {
            put_array(
                buf,
                "responses.partition_responses.record_errors",
                &self.record_errors,
                flex,
                |b, x| x.write(b, version),
            )?;
            put_nullable_string(
                buf,
                "responses.partition_responses.error_message",
                self.error_message.as_deref(),
                flex,
            )?;
        }
        if flex {
            let mut t = TaggedWriter::new();
            if version >= 10 && self.current_leader != d.current_leader {
                t.field(0, |b| {
                    self.current_leader.write(b, version)?;
                    Ok(())
                })?;
            }
            t.finish(buf, &self.unknown_tagged_fields)?;
        }
        Ok(())
    }

    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 9;
        let mut m = Self {
            index: r.i32("responses.partition_responses.index")?,
            error_code: r.i16("responses.partition_responses.error_code")?,
            base_offset: r.i64("responses.partition_responses.base_offset")?,
            log_append_time_ms: r.i64("responses.partition_responses.log_append_time_ms")?,
            ..Default::default()
        };
        if version >= 5 {
            m.log_start_offset = r.i64("responses.partition_responses.log_start_offset")?;
        }
        if version >= 8 {
            m.record_errors =
                r.array("responses.partition_responses.record_errors", flex, |r| {
                    ProduceResponseBatchIndexAndErrorMessage::read(r, version)
                })?;
            m.error_message =
                r.nullable_string("responses.partition_responses.error_message", flex)?;
        }
        if flex {
            let unknown =
                r.tagged_fields("responses.partition_responses._tagged_fields", |tag, r| {
                    match tag {
                        0 if version >= 10 => {
                            m.current_leader = ProduceResponseLeaderIdAndEpoch::read(r, version)?
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

/// The batch indices of records that caused the batch to be dropped.
///
/// ```
/// use kafka_proto::{ErrorCode, Message, messages::*};
/// let p = ProduceResponsePartitionProduceResponse {
///     error_code: ErrorCode::InvalidRecord.code(),
///     record_errors: vec![ProduceResponseBatchIndexAndErrorMessage {
///         batch_index: 3,
///         batch_index_error_message: Some("key required".into()),
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// let resp = ProduceResponse {
///     responses: vec![ProduceResponseTopicProduceResponse {
///         name: "orders".into(),
///         partition_responses: vec![p],
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// assert_eq!(
///     ProduceResponse::decode(&resp.encode_to_vec(8).unwrap(), 8).unwrap(),
///     resp
/// );
/// assert!(resp.encode_to_vec(7).is_err(), "record errors need v8+");
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProduceResponseBatchIndexAndErrorMessage {
    /// The batch index of the record that caused the batch to be dropped (v8+).
    pub batch_index: i32,
    /// The error message of the record that caused the batch to be dropped (v8+, nullable).
    pub batch_index_error_message: Option<String>,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl ProduceResponseBatchIndexAndErrorMessage {
    fn write<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let d = Self::default();
        let flex = version >= 9;
        check_field(
            version >= 8,
            &self.batch_index,
            &d.batch_index,
            "responses.partition_responses.record_errors.batch_index",
        )?;
        check_field(
            version >= 8,
            &self.batch_index_error_message,
            &d.batch_index_error_message,
            "responses.partition_responses.record_errors.batch_index_error_message",
        )?;
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &d.unknown_tagged_fields,
            "responses.partition_responses.record_errors._tagged_fields",
        )?;
        if version >= 8 {
            buf.put_i32(self.batch_index);
            put_nullable_string(
                buf,
                "responses.partition_responses.record_errors.batch_index_error_message",
                self.batch_index_error_message.as_deref(),
                flex,
            )?;
        }
        if flex {
            put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
        }
        Ok(())
    }

    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 9;
        let mut m = Self::default();
        if version >= 8 {
            m.batch_index = r.i32("responses.partition_responses.record_errors.batch_index")?;
            m.batch_index_error_message = r.nullable_string(
                "responses.partition_responses.record_errors.batch_index_error_message",
                flex,
            )?;
        }
        if flex {
            m.unknown_tagged_fields = r.unknown_tagged_fields(
                "responses.partition_responses.record_errors._tagged_fields",
            )?;
        }
        Ok(m)
    }
}

/// The leader broker that the producer should use for future requests.
///
/// ```
/// use kafka_proto::messages::{
///     ProduceResponseLeaderIdAndEpoch, ProduceResponsePartitionProduceResponse,
/// };
/// let p = ProduceResponsePartitionProduceResponse {
///     current_leader: ProduceResponseLeaderIdAndEpoch {
///         leader_id: 2,
///         leader_epoch: 8,
///         ..Default::default()
///     },
///     ..Default::default()
/// };
/// assert_eq!(p.current_leader.leader_id, 2);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ProduceResponseLeaderIdAndEpoch {
    /// The ID of the current leader or -1 if the leader is unknown (v10+, default -1).
    pub leader_id: i32,
    /// The latest known leader epoch (v10+, default -1).
    pub leader_epoch: i32,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl Default for ProduceResponseLeaderIdAndEpoch {
    fn default() -> Self {
        Self {
            leader_id: -1,
            leader_epoch: -1,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl ProduceResponseLeaderIdAndEpoch {
    fn write<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let d = Self::default();
        let flex = version >= 9;
        check_field(
            version >= 10,
            &self.leader_id,
            &d.leader_id,
            "responses.partition_responses.current_leader.leader_id",
        )?;
        check_field(
            version >= 10,
            &self.leader_epoch,
            &d.leader_epoch,
            "responses.partition_responses.current_leader.leader_epoch",
        )?;
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &d.unknown_tagged_fields,
            "responses.partition_responses.current_leader._tagged_fields",
        )?;
        if version >= 10 {
            buf.put_i32(self.leader_id);
            buf.put_i32(self.leader_epoch);
        }
        if flex {
            put_unknown_tagged_fields(buf, &self.unknown_tagged_fields);
        }
        Ok(())
    }

    fn read(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 9;
        let mut m = Self::default();
        if version >= 10 {
            m.leader_id = r.i32("responses.partition_responses.current_leader.leader_id")?;
            m.leader_epoch = r.i32("responses.partition_responses.current_leader.leader_epoch")?;
        }
        if flex {
            m.unknown_tagged_fields = r.unknown_tagged_fields(
                "responses.partition_responses.current_leader._tagged_fields",
            )?;
        }
        Ok(m)
    }
}

/// Endpoints for all current-leaders enumerated in PartitionProduceResponses, with errors NOT_LEADER_OR_FOLLOWER.
///
/// ```
/// use kafka_proto::{Message, messages::*};
/// let resp = ProduceResponse {
///     node_endpoints: vec![ProduceResponseNodeEndpoint {
///         node_id: 2,
///         host: "kafka-2".into(),
///         port: 9092,
///         rack: None,
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// assert_eq!(
///     ProduceResponse::decode(&resp.encode_to_vec(10).unwrap(), 10).unwrap(),
///     resp
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProduceResponseNodeEndpoint {
    /// The ID of the associated node (v10+).
    pub node_id: i32,
    /// The node's hostname (v10+).
    pub host: String,
    /// The node's port (v10+).
    pub port: i32,
    /// The rack of the node, or null if it has not been assigned to a rack (v10+, nullable).
    pub rack: Option<String>,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl ProduceResponseNodeEndpoint {
    fn write<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let d = Self::default();
        let flex = version >= 9;
        check_field(
            version >= 10,
            &self.node_id,
            &d.node_id,
            "node_endpoints.node_id",
        )?;
        check_field(version >= 10, &self.host, &d.host, "node_endpoints.host")?;
        check_field(version >= 10, &self.port, &d.port, "node_endpoints.port")?;
        check_field(version >= 10, &self.rack, &d.rack, "node_endpoints.rack")?;
        check_field(
            flex,
            &self.unknown_tagged_fields,
            &d.unknown_tagged_fields,
            "node_endpoints._tagged_fields",
        )?;
        if version >= 10 {
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
        let flex = version >= 9;
        let mut m = Self::default();
        if version >= 10 {
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

    fn arb_produce_request(version: i16) -> BoxedStrategy<ProduceRequest> {
        let flex = version >= 9;
        (
            opt_nullable_string(true),
            any::<i16>().boxed(),
            any::<i32>().boxed(),
            arb_vec(true, arb_produce_request_topic_produce_data(version)),
            arb_tagged(flex),
        )
            .prop_map(
                |(transactional_id, acks, timeout_ms, topic_data, unknown_tagged_fields)| {
                    ProduceRequest {
                        transactional_id,
                        acks,
                        timeout_ms,
                        topic_data,
                        unknown_tagged_fields,
                    }
                },
            )
            .boxed()
    }

    fn arb_produce_request_topic_produce_data(
        version: i16,
    ) -> BoxedStrategy<ProduceRequestTopicProduceData> {
        let flex = version >= 9;
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
            arb_vec(true, arb_produce_request_partition_produce_data(version)),
            arb_tagged(flex),
        )
            .prop_map(|(name, topic_id, partition_data, unknown_tagged_fields)| {
                ProduceRequestTopicProduceData {
                    name,
                    topic_id,
                    partition_data,
                    unknown_tagged_fields,
                }
            })
            .boxed()
    }

    fn arb_produce_request_partition_produce_data(
        version: i16,
    ) -> BoxedStrategy<ProduceRequestPartitionProduceData> {
        let flex = version >= 9;
        (
            any::<i32>().boxed(),
            proptest::option::of(arb_bytes(true)).boxed(),
            arb_tagged(flex),
        )
            .prop_map(|(index, records, unknown_tagged_fields)| {
                ProduceRequestPartitionProduceData {
                    index,
                    records,
                    unknown_tagged_fields,
                }
            })
            .boxed()
    }

    impl VersionedArbitrary for ProduceRequest {
        fn arbitrary(version: i16) -> BoxedStrategy<Self> {
            arb_produce_request(version)
        }
    }

    fn arb_produce_response(version: i16) -> BoxedStrategy<ProduceResponse> {
        let flex = version >= 9;
        (
            arb_vec(true, arb_produce_response_topic_produce_response(version)),
            any::<i32>().boxed(),
            if version >= 10 {
                arb_vec(true, arb_produce_response_node_endpoint(version))
            } else {
                Just(Vec::new()).boxed()
            },
            arb_tagged(flex),
        )
            .prop_map(
                |(responses, throttle_time_ms, node_endpoints, unknown_tagged_fields)| {
                    ProduceResponse {
                        responses,
                        throttle_time_ms,
                        node_endpoints,
                        unknown_tagged_fields,
                    }
                },
            )
            .boxed()
    }

    fn arb_produce_response_topic_produce_response(
        version: i16,
    ) -> BoxedStrategy<ProduceResponseTopicProduceResponse> {
        let flex = version >= 9;
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
            arb_vec(
                true,
                arb_produce_response_partition_produce_response(version),
            ),
            arb_tagged(flex),
        )
            .prop_map(
                |(name, topic_id, partition_responses, unknown_tagged_fields)| {
                    ProduceResponseTopicProduceResponse {
                        name,
                        topic_id,
                        partition_responses,
                        unknown_tagged_fields,
                    }
                },
            )
            .boxed()
    }

    fn arb_produce_response_partition_produce_response(
        version: i16,
    ) -> BoxedStrategy<ProduceResponsePartitionProduceResponse> {
        let flex = version >= 9;
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
            ),
            (
                if version >= 8 {
                    arb_vec(
                        true,
                        arb_produce_response_batch_index_and_error_message(version),
                    )
                } else {
                    Just(Vec::new()).boxed()
                },
                if version >= 8 {
                    opt_nullable_string(true)
                } else {
                    Just(None).boxed()
                },
                if version >= 10 {
                    arb_produce_response_leader_id_and_epoch(version)
                } else {
                    Just(ProduceResponseLeaderIdAndEpoch::default()).boxed()
                },
                arb_tagged(flex),
            ),
        )
            .prop_map(
                |(
                    (index, error_code, base_offset, log_append_time_ms, log_start_offset),
                    (record_errors, error_message, current_leader, unknown_tagged_fields),
                )| ProduceResponsePartitionProduceResponse {
                    index,
                    error_code,
                    base_offset,
                    log_append_time_ms,
                    log_start_offset,
                    record_errors,
                    error_message,
                    current_leader,
                    unknown_tagged_fields,
                },
            )
            .boxed()
    }

    fn arb_produce_response_batch_index_and_error_message(
        version: i16,
    ) -> BoxedStrategy<ProduceResponseBatchIndexAndErrorMessage> {
        let flex = version >= 9;
        (
            if version >= 8 {
                any::<i32>().boxed()
            } else {
                Just(0).boxed()
            },
            if version >= 8 {
                opt_nullable_string(true)
            } else {
                Just(None).boxed()
            },
            arb_tagged(flex),
        )
            .prop_map(
                |(batch_index, batch_index_error_message, unknown_tagged_fields)| {
                    ProduceResponseBatchIndexAndErrorMessage {
                        batch_index,
                        batch_index_error_message,
                        unknown_tagged_fields,
                    }
                },
            )
            .boxed()
    }

    fn arb_produce_response_leader_id_and_epoch(
        version: i16,
    ) -> BoxedStrategy<ProduceResponseLeaderIdAndEpoch> {
        let flex = version >= 9;
        (
            if version >= 10 {
                any::<i32>().boxed()
            } else {
                Just(-1).boxed()
            },
            if version >= 10 {
                any::<i32>().boxed()
            } else {
                Just(-1).boxed()
            },
            arb_tagged(flex),
        )
            .prop_map(|(leader_id, leader_epoch, unknown_tagged_fields)| {
                ProduceResponseLeaderIdAndEpoch {
                    leader_id,
                    leader_epoch,
                    unknown_tagged_fields,
                }
            })
            .boxed()
    }

    fn arb_produce_response_node_endpoint(
        version: i16,
    ) -> BoxedStrategy<ProduceResponseNodeEndpoint> {
        let flex = version >= 9;
        (
            if version >= 10 {
                any::<i32>().boxed()
            } else {
                Just(0).boxed()
            },
            if version >= 10 {
                arb_string(true)
            } else {
                Just(String::new()).boxed()
            },
            if version >= 10 {
                any::<i32>().boxed()
            } else {
                Just(0).boxed()
            },
            if version >= 10 {
                opt_nullable_string(true)
            } else {
                Just(None).boxed()
            },
            arb_tagged(flex),
        )
            .prop_map(|(node_id, host, port, rack, unknown_tagged_fields)| {
                ProduceResponseNodeEndpoint {
                    node_id,
                    host,
                    port,
                    rack,
                    unknown_tagged_fields,
                }
            })
            .boxed()
    }

    impl VersionedArbitrary for ProduceResponse {
        fn arbitrary(version: i16) -> BoxedStrategy<Self> {
            arb_produce_response(version)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EncodeErrorKind;

    /// A v9 (first flexible) request written by hand from the schema layout.
    #[test]
    fn v9_request_fixture() {
        let bytes: &[u8] = &[
            2, b't', // transactional_id "t" (compact)
            0xff, 0xff, // acks -1
            0, 0, 0x03, 0xe8, // timeout_ms 1000
            2,    // topic_data: 1 element
            2, b'a', // name "a"
            2,    // partition_data: 1 element
            0, 0, 0, 0, // index 0
            4, 1, 2, 3, // records: 3 bytes
            0, // partition tags
            0, // topic tags
            0, // request tags
        ];
        let req = ProduceRequest::decode(bytes, 9).unwrap();
        assert_eq!(req.transactional_id.as_deref(), Some("t"));
        assert_eq!(req.acks, -1);
        assert_eq!(req.timeout_ms, 1000);
        assert_eq!(req.topic_data[0].name, "a");
        let p = &req.topic_data[0].partition_data[0];
        assert_eq!(p.index, 0);
        assert_eq!(p.records.as_deref(), Some(&[1u8, 2, 3][..]));
        assert_eq!(req.encode_to_vec(9).unwrap(), bytes);
    }

    /// A v3 (classic) request: int16 strings, int32 lengths, null records.
    #[test]
    fn v3_request_fixture() {
        let bytes: &[u8] = &[
            0xff, 0xff, // transactional_id null
            0, 1, // acks 1
            0, 0, 0, 10, // timeout_ms 10
            0, 0, 0, 1, // topic_data: 1 element
            0, 1, b'a', // name "a"
            0, 0, 0, 1, // partition_data: 1 element
            0, 0, 0, 7, // index 7
            0xff, 0xff, 0xff, 0xff, // records null
        ];
        let req = ProduceRequest::decode(bytes, 3).unwrap();
        assert_eq!(req.transactional_id, None);
        assert_eq!(req.topic_data[0].partition_data[0].index, 7);
        assert_eq!(req.topic_data[0].partition_data[0].records, None);
        assert_eq!(req.encode_to_vec(3).unwrap(), bytes);
    }

    /// v13 carries a topic id in place of the name.
    #[test]
    fn v13_request_uses_topic_id() {
        let mut bytes: Vec<u8> = vec![0, 0xff, 0xff, 0, 0, 0, 5, 2];
        bytes.extend(1..=16u8); // topic_id
        bytes.extend([1, 0, 0]); // no partitions, topic tags, request tags
        let req = ProduceRequest::decode(&bytes, 13).unwrap();
        assert_eq!(req.transactional_id, None);
        assert_eq!(req.topic_data[0].topic_id[0], 1);
        assert_eq!(req.topic_data[0].topic_id[15], 16);
        assert!(req.topic_data[0].name.is_empty());
        assert_eq!(req.encode_to_vec(13).unwrap(), bytes);
        // The id cannot be carried by v12, nor a name by v13.
        let err = req.encode_to_vec(12).unwrap_err();
        assert_eq!(err.kind, EncodeErrorKind::FieldNotInVersion);
        assert_eq!(err.field, "topic_data.topic_id");
    }

    /// A v10 response with a NOT_LEADER_OR_FOLLOWER partition, its new leader
    /// (partition tag 0) and the leader's endpoint (top-level tag 0).
    #[test]
    fn v10_response_fixture() {
        let bytes: &[u8] = &[
            2, // responses: 1 element
            2, b'a', // name "a"
            2,    // partition_responses: 1 element
            0, 0, 0, 1, // index 1
            0, 6, // error_code NOT_LEADER_OR_FOLLOWER
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // base_offset -1
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // log_append_time_ms -1
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // log_start_offset -1
            1,    // record_errors: empty
            0,    // error_message null
            1, 0, 9, // one tag: 0 (current_leader), 9 bytes
            0, 0, 0, 2, 0, 0, 0, 7, 0, // leader 2, epoch 7, no tags
            0, // topic tags
            0, 0, 0, 0, // throttle_time_ms
            1, 0, 14, // one tag: 0 (node_endpoints), 14 bytes
            2, 0, 0, 0, 2, 3, b'b', b'1', 0, 0, 0x23, 0x84, 0,
            0, // node 2 "b1":9092, rack null
        ];
        let resp = ProduceResponse::decode(bytes, 10).unwrap();
        let p = &resp.responses[0].partition_responses[0];
        assert_eq!(
            crate::ErrorCode::from(p.error_code),
            crate::ErrorCode::NotLeaderOrFollower
        );
        assert_eq!(p.base_offset, -1);
        assert_eq!(p.error_message, None);
        assert_eq!(p.current_leader.leader_id, 2);
        assert_eq!(p.current_leader.leader_epoch, 7);
        let n = &resp.node_endpoints[0];
        assert_eq!((n.node_id, n.host.as_str(), n.port), (2, "b1", 9092));
        assert_eq!(n.rack, None);
        assert_eq!(resp.encode_to_vec(10).unwrap(), bytes);
        // v9 is flexible but cannot carry the leader hints.
        assert_eq!(
            resp.encode_to_vec(9).unwrap_err().kind,
            EncodeErrorKind::FieldNotInVersion
        );
    }
}

#[cfg(test)]
mod round_trip {
    use super::*;
    use crate::testing::{round_trip_all_versions, truncations_fail_cleanly};

    #[test]
    fn request_every_version() {
        round_trip_all_versions::<ProduceRequest>(64);
        truncations_fail_cleanly::<ProduceRequest>(8);
    }

    #[test]
    fn response_every_version() {
        round_trip_all_versions::<ProduceResponse>(64);
        truncations_fail_cleanly::<ProduceResponse>(8);
    }
}
