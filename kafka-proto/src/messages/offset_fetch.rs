//! OffsetFetch (key 9), versions 1–10, flexible from 6.
//!
//! Two request/response shapes share this API:
//!
//! - v1–7 fetch the committed offsets of a **single group** (`group_id` and
//!   `topics` at the top level; `topics` may be null from v2 to mean all topics;
//!   the response has top-level `topics` and, from v2, `error_code`);
//! - v8+ fetch **several groups** at once (`groups`, each with its own nullable
//!   `topics`; the response has per-group `groups` with a group-level error).
//!
//! Fields of the other shape must stay at their defaults (an [`EncodeError`]
//! otherwise). v7 adds `require_stable`, v9 the KIP-848 member id and epoch, and
//! v10 replaces topic names with topic ids.

use super::{check_tags, read_tags, write_tags};
use crate::primitives::{
    Reader, TaggedFields, Uuid, put_array, put_bool, put_nullable_array, put_nullable_string,
    put_string, put_unknown_tagged_fields, put_uuid,
};
use crate::{
    ApiKey, DecodeError, EncodeError, EncodeErrorKind, Message, Request, Response, VersionRange,
    check_field,
};
use bytes::BufMut;

/// Writes an `[]int32` array.
fn put_i32s<B: BufMut>(
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

/// Fetches committed offsets of one group (v1–7) or several groups (v8+).
///
/// ```
/// use kafka_proto::Message;
/// use kafka_proto::messages::{
///     OffsetFetchRequest, OffsetFetchRequestGroup, OffsetFetchRequestTopic,
/// };
/// // v1–7: one group, top-level topics.
/// let single = OffsetFetchRequest {
///     group_id: "billing".into(),
///     topics: Some(vec![OffsetFetchRequestTopic {
///         name: "orders".into(),
///         partition_indexes: vec![0, 1],
///         ..Default::default()
///     }]),
///     require_stable: true,
///     ..Default::default()
/// };
/// assert_eq!(
///     OffsetFetchRequest::decode(&single.encode_to_vec(7).unwrap(), 7).unwrap(),
///     single
/// );
/// // v8+: batched groups; topics null means every topic.
/// let batched = OffsetFetchRequest {
///     groups: vec![OffsetFetchRequestGroup {
///         group_id: "billing".into(),
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// assert_eq!(
///     OffsetFetchRequest::decode(&batched.encode_to_vec(8).unwrap(), 8).unwrap(),
///     batched
/// );
/// assert!(single.encode_to_vec(8).is_err() && batched.encode_to_vec(7).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OffsetFetchRequest {
    /// The group to fetch offsets for (v1–7).
    pub group_id: String,
    /// The topics to fetch offsets for, or null for all topics (v1–7; null
    /// only from v2; default null).
    pub topics: Option<Vec<OffsetFetchRequestTopic>>,
    /// The groups to fetch offsets for (v8+).
    pub groups: Vec<OffsetFetchRequestGroup>,
    /// Whether the broker should hold back unstable offsets and return a
    /// retriable error for those partitions instead (v7+).
    pub require_stable: bool,
    /// Unknown tagged fields (v6+).
    pub unknown_tagged_fields: TaggedFields,
}

/// One topic of a single-group request (v1–7).
///
/// ```
/// use kafka_proto::{Message, messages::*};
/// let req = OffsetFetchRequest {
///     group_id: "orders-app".into(),
///     topics: Some(vec![OffsetFetchRequestTopic {
///         name: "orders".into(),
///         partition_indexes: vec![0, 1],
///         ..Default::default()
///     }]),
///     require_stable: true,
///     ..Default::default()
/// };
/// assert_eq!(
///     OffsetFetchRequest::decode(&req.encode_to_vec(7).unwrap(), 7).unwrap(),
///     req
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OffsetFetchRequestTopic {
    /// The topic name.
    pub name: String,
    /// The partition indexes to fetch offsets for.
    pub partition_indexes: Vec<i32>,
    /// Unknown tagged fields (v6+).
    pub unknown_tagged_fields: TaggedFields,
}

/// One group of a batched request (v8+).
///
/// ```
/// use kafka_proto::{Message, messages::*};
/// // v8+ batches groups; null topics asks for every committed offset of the group.
/// let req = OffsetFetchRequest {
///     groups: vec![OffsetFetchRequestGroup {
///         group_id: "orders-app".into(),
///         topics: None,
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// assert_eq!(
///     OffsetFetchRequest::decode(&req.encode_to_vec(8).unwrap(), 8).unwrap(),
///     req
/// );
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct OffsetFetchRequestGroup {
    /// The group id.
    pub group_id: String,
    /// The member id (v9+, default null).
    pub member_id: Option<String>,
    /// The member epoch with the KIP-848 consumer protocol (v9+, default -1).
    pub member_epoch: i32,
    /// The topics to fetch offsets for, or null for all topics (default null).
    pub topics: Option<Vec<OffsetFetchRequestTopics>>,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl Default for OffsetFetchRequestGroup {
    fn default() -> Self {
        Self {
            group_id: String::new(),
            member_id: None,
            member_epoch: -1,
            topics: None,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

/// One topic of a group in a batched request (v8+).
///
/// ```
/// use kafka_proto::{Message, messages::*};
/// let group = OffsetFetchRequestGroup {
///     group_id: "orders-app".into(),
///     topics: Some(vec![OffsetFetchRequestTopics {
///         topic_id: [3; 16],
///         partition_indexes: vec![0],
///         ..Default::default()
///     }]),
///     ..Default::default()
/// };
/// let req = OffsetFetchRequest {
///     groups: vec![group],
///     ..Default::default()
/// };
/// assert_eq!(
///     OffsetFetchRequest::decode(&req.encode_to_vec(10).unwrap(), 10).unwrap(),
///     req
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OffsetFetchRequestTopics {
    /// The topic name (v8–9).
    pub name: String,
    /// The topic id (v10+).
    pub topic_id: Uuid,
    /// The partition indexes to fetch offsets for.
    pub partition_indexes: Vec<i32>,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl OffsetFetchRequestTopic {
    fn encode<B: BufMut>(&self, b: &mut B, flex: bool) -> Result<(), EncodeError> {
        check_tags(flex, &self.unknown_tagged_fields, "topics._tagged_fields")?;
        put_string(b, "topics.name", &self.name, flex)?;
        put_i32s(b, "topics.partition_indexes", &self.partition_indexes, flex)?;
        write_tags(b, flex, &self.unknown_tagged_fields);
        Ok(())
    }

    fn decode(r: &mut Reader<'_>, flex: bool) -> Result<Self, DecodeError> {
        Ok(Self {
            name: r.string("topics.name", flex)?,
            partition_indexes: r.array("topics.partition_indexes", flex, |r| {
                r.i32("topics.partition_indexes")
            })?,
            unknown_tagged_fields: read_tags(r, flex, "topics._tagged_fields")?,
        })
    }
}

impl OffsetFetchRequestGroup {
    fn encode<B: BufMut>(&self, b: &mut B, version: i16) -> Result<(), EncodeError> {
        let d = Self::default();
        check_field(
            version >= 9,
            &self.member_id,
            &d.member_id,
            "groups.member_id",
        )?;
        check_field(
            version >= 9,
            &self.member_epoch,
            &d.member_epoch,
            "groups.member_epoch",
        )?;
        for t in self.topics.iter().flatten() {
            check_field(version <= 9, &t.name, &String::new(), "groups.topics.name")?;
            check_field(
                version >= 10,
                &t.topic_id,
                &[0; 16],
                "groups.topics.topic_id",
            )?;
        }
        put_string(b, "groups.group_id", &self.group_id, true)?;
        if version >= 9 {
            put_nullable_string(b, "groups.member_id", self.member_id.as_deref(), true)?;
            b.put_i32(self.member_epoch);
        }
        put_nullable_array(b, "groups.topics", self.topics.as_deref(), true, |b, t| {
            if version <= 9 {
                put_string(b, "groups.topics.name", &t.name, true)?;
            } else {
                put_uuid(b, &t.topic_id);
            }
            put_i32s(
                b,
                "groups.topics.partition_indexes",
                &t.partition_indexes,
                true,
            )?;
            put_unknown_tagged_fields(b, &t.unknown_tagged_fields);
            Ok(())
        })?;
        put_unknown_tagged_fields(b, &self.unknown_tagged_fields);
        Ok(())
    }

    fn decode(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let mut m = Self {
            group_id: r.string("groups.group_id", true)?,
            ..Default::default()
        };
        if version >= 9 {
            m.member_id = r.nullable_string("groups.member_id", true)?;
            m.member_epoch = r.i32("groups.member_epoch")?;
        }
        m.topics = r.nullable_array("groups.topics", true, |r| {
            let mut t = OffsetFetchRequestTopics::default();
            if version <= 9 {
                t.name = r.string("groups.topics.name", true)?;
            } else {
                t.topic_id = r.uuid("groups.topics.topic_id")?;
            }
            t.partition_indexes = r.array("groups.topics.partition_indexes", true, |r| {
                r.i32("groups.topics.partition_indexes")
            })?;
            t.unknown_tagged_fields = r.unknown_tagged_fields("groups.topics._tagged_fields")?;
            Ok(t)
        })?;
        m.unknown_tagged_fields = r.unknown_tagged_fields("groups._tagged_fields")?;
        Ok(m)
    }
}

impl Message for OffsetFetchRequest {
    const API_KEY: ApiKey = ApiKey::OffsetFetch;
    const VERSIONS: VersionRange = VersionRange::new(1, 10);
    const FLEXIBLE_MIN: i16 = 6;

    fn encode_body<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let d = Self::default();
        let flex = Self::is_flexible(version);
        check_field(version <= 7, &self.group_id, &d.group_id, "group_id")?;
        check_field(version <= 7, &self.topics, &d.topics, "topics")?;
        if version < 2 && self.topics.is_none() {
            return Err(EncodeError::new("topics", EncodeErrorKind::NullNotAllowed));
        }
        check_field(version >= 8, &self.groups, &d.groups, "groups")?;
        check_field(
            version >= 7,
            &self.require_stable,
            &d.require_stable,
            "require_stable",
        )?;
        check_tags(flex, &self.unknown_tagged_fields, "_tagged_fields")?;
        if version <= 7 {
            put_string(buf, "group_id", &self.group_id, flex)?;
            put_nullable_array(buf, "topics", self.topics.as_deref(), flex, |b, t| {
                t.encode(b, flex)
            })?;
        } else {
            put_array(buf, "groups", &self.groups, true, |b, g| {
                g.encode(b, version)
            })?;
        }
        if version >= 7 {
            put_bool(buf, self.require_stable);
        }
        write_tags(buf, flex, &self.unknown_tagged_fields);
        Ok(())
    }

    fn decode_body(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = Self::is_flexible(version);
        let mut m = Self::default();
        if version <= 7 {
            m.group_id = r.string("group_id", flex)?;
            m.topics = if version >= 2 {
                r.nullable_array("topics", flex, |r| OffsetFetchRequestTopic::decode(r, flex))?
            } else {
                Some(r.array("topics", flex, |r| OffsetFetchRequestTopic::decode(r, flex))?)
            };
        } else {
            m.groups = r.array("groups", true, |r| {
                OffsetFetchRequestGroup::decode(r, version)
            })?;
        }
        if version >= 7 {
            m.require_stable = r.bool("require_stable")?;
        }
        m.unknown_tagged_fields = read_tags(r, flex, "_tagged_fields")?;
        Ok(m)
    }
}

impl Request for OffsetFetchRequest {
    type Response = OffsetFetchResponse;
}

/// Committed offsets of one group (v1–7) or several groups (v8+).
///
/// ```
/// use kafka_proto::Message;
/// use kafka_proto::messages::{
///     OffsetFetchResponse, OffsetFetchResponseGroup, OffsetFetchResponsePartitions,
///     OffsetFetchResponseTopics,
/// };
/// let resp = OffsetFetchResponse {
///     groups: vec![OffsetFetchResponseGroup {
///         group_id: "billing".into(),
///         topics: vec![OffsetFetchResponseTopics {
///             name: "orders".into(),
///             partitions: vec![OffsetFetchResponsePartitions {
///                 partition_index: 0,
///                 committed_offset: 42,
///                 ..Default::default()
///             }],
///             ..Default::default()
///         }],
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// let back = OffsetFetchResponse::decode(&resp.encode_to_vec(9).unwrap(), 9).unwrap();
/// assert_eq!(back.groups[0].topics[0].partitions[0].committed_offset, 42);
/// assert_eq!(
///     back.groups[0].topics[0].partitions[0].committed_leader_epoch,
///     -1
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OffsetFetchResponse {
    /// Throttle time in milliseconds, or zero (v3+).
    pub throttle_time_ms: i32,
    /// The responses per topic (v1–7).
    pub topics: Vec<OffsetFetchResponseTopic>,
    /// The top-level error code, or 0 (v2–7).
    pub error_code: i16,
    /// The responses per group (v8+).
    pub groups: Vec<OffsetFetchResponseGroup>,
    /// Unknown tagged fields (v6+).
    pub unknown_tagged_fields: TaggedFields,
}

/// Offsets of one topic in a single-group response (v1–7).
///
/// ```
/// use kafka_proto::{Message, messages::*};
/// let resp = OffsetFetchResponse {
///     topics: vec![OffsetFetchResponseTopic {
///         name: "orders".into(),
///         partitions: vec![OffsetFetchResponsePartition {
///             partition_index: 0,
///             committed_offset: 100,
///             ..Default::default()
///         }],
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// let back = OffsetFetchResponse::decode(&resp.encode_to_vec(6).unwrap(), 6).unwrap();
/// assert_eq!(back.topics[0].partitions[0].committed_offset, 100);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OffsetFetchResponseTopic {
    /// The topic name.
    pub name: String,
    /// The responses per partition.
    pub partitions: Vec<OffsetFetchResponsePartition>,
    /// Unknown tagged fields (v6+).
    pub unknown_tagged_fields: TaggedFields,
}

/// The committed offset of one partition in a single-group response (v1–7).
///
/// ```
/// use kafka_proto::messages::OffsetFetchResponsePartition;
/// let none_committed = OffsetFetchResponsePartition {
///     partition_index: 2,
///     committed_offset: -1,
///     ..Default::default()
/// };
/// assert_eq!(
///     (
///         none_committed.committed_leader_epoch,
///         none_committed.metadata
///     ),
///     (-1, None)
/// );
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct OffsetFetchResponsePartition {
    /// The partition index.
    pub partition_index: i32,
    /// The committed message offset, or -1 if none.
    pub committed_offset: i64,
    /// The leader epoch (v5–7, default -1).
    pub committed_leader_epoch: i32,
    /// The partition metadata.
    pub metadata: Option<String>,
    /// The error code, or 0 if there was no error.
    pub error_code: i16,
    /// Unknown tagged fields (v6+).
    pub unknown_tagged_fields: TaggedFields,
}

impl Default for OffsetFetchResponsePartition {
    fn default() -> Self {
        Self {
            partition_index: 0,
            committed_offset: 0,
            committed_leader_epoch: -1,
            metadata: None,
            error_code: 0,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

/// Offsets of one group in a batched response (v8+).
///
/// ```
/// use kafka_proto::{ErrorCode, Message, messages::*};
/// let resp = OffsetFetchResponse {
///     groups: vec![OffsetFetchResponseGroup {
///         group_id: "orders-app".into(),
///         error_code: ErrorCode::CoordinatorLoadInProgress.code(),
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// let back = OffsetFetchResponse::decode(&resp.encode_to_vec(8).unwrap(), 8).unwrap();
/// assert!(ErrorCode::from(back.groups[0].error_code).is_retriable());
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OffsetFetchResponseGroup {
    /// The group id.
    pub group_id: String,
    /// The responses per topic.
    pub topics: Vec<OffsetFetchResponseTopics>,
    /// The group-level error code, or 0 if there was no error.
    pub error_code: i16,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

/// Offsets of one topic of a group in a batched response (v8+).
///
/// ```
/// use kafka_proto::{Message, messages::*};
/// let topic = OffsetFetchResponseTopics {
///     topic_id: [3; 16],
///     partitions: vec![OffsetFetchResponsePartitions {
///         partition_index: 0,
///         committed_offset: 7,
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// let resp = OffsetFetchResponse {
///     groups: vec![OffsetFetchResponseGroup {
///         group_id: "orders-app".into(),
///         topics: vec![topic],
///         ..Default::default()
///     }],
///     ..Default::default()
/// };
/// assert_eq!(
///     OffsetFetchResponse::decode(&resp.encode_to_vec(10).unwrap(), 10).unwrap(),
///     resp
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OffsetFetchResponseTopics {
    /// The topic name (v8–9).
    pub name: String,
    /// The topic id (v10+).
    pub topic_id: Uuid,
    /// The responses per partition.
    pub partitions: Vec<OffsetFetchResponsePartitions>,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

/// The committed offset of one partition in a batched response (v8+).
///
/// ```
/// use kafka_proto::messages::OffsetFetchResponsePartitions;
/// let p = OffsetFetchResponsePartitions {
///     partition_index: 1,
///     committed_offset: 250,
///     metadata: Some(String::new()),
///     ..Default::default()
/// };
/// assert_eq!(p.committed_leader_epoch, -1);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct OffsetFetchResponsePartitions {
    /// The partition index.
    pub partition_index: i32,
    /// The committed message offset, or -1 if none.
    pub committed_offset: i64,
    /// The leader epoch (default -1).
    pub committed_leader_epoch: i32,
    /// The partition metadata.
    pub metadata: Option<String>,
    /// The partition-level error code, or 0 if there was no error.
    pub error_code: i16,
    /// Unknown tagged fields.
    pub unknown_tagged_fields: TaggedFields,
}

impl Default for OffsetFetchResponsePartitions {
    fn default() -> Self {
        Self {
            partition_index: 0,
            committed_offset: 0,
            committed_leader_epoch: -1,
            metadata: None,
            error_code: 0,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl OffsetFetchResponseTopic {
    fn encode<B: BufMut>(&self, b: &mut B, version: i16) -> Result<(), EncodeError> {
        let flex = version >= 6;
        check_tags(flex, &self.unknown_tagged_fields, "topics._tagged_fields")?;
        put_string(b, "topics.name", &self.name, flex)?;
        put_array(b, "topics.partitions", &self.partitions, flex, |b, p| {
            check_field(
                version >= 5,
                &p.committed_leader_epoch,
                &-1,
                "topics.partitions.committed_leader_epoch",
            )?;
            check_tags(
                flex,
                &p.unknown_tagged_fields,
                "topics.partitions._tagged_fields",
            )?;
            b.put_i32(p.partition_index);
            b.put_i64(p.committed_offset);
            if version >= 5 {
                b.put_i32(p.committed_leader_epoch);
            }
            put_nullable_string(b, "topics.partitions.metadata", p.metadata.as_deref(), flex)?;
            b.put_i16(p.error_code);
            write_tags(b, flex, &p.unknown_tagged_fields);
            Ok(())
        })?;
        write_tags(b, flex, &self.unknown_tagged_fields);
        Ok(())
    }

    fn decode(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = version >= 6;
        Ok(Self {
            name: r.string("topics.name", flex)?,
            partitions: r.array("topics.partitions", flex, |r| {
                let mut p = OffsetFetchResponsePartition {
                    partition_index: r.i32("topics.partitions.partition_index")?,
                    committed_offset: r.i64("topics.partitions.committed_offset")?,
                    ..Default::default()
                };
                if version >= 5 {
                    p.committed_leader_epoch = r.i32("topics.partitions.committed_leader_epoch")?;
                }
                p.metadata = r.nullable_string("topics.partitions.metadata", flex)?;
                p.error_code = r.i16("topics.partitions.error_code")?;
                p.unknown_tagged_fields = read_tags(r, flex, "topics.partitions._tagged_fields")?;
                Ok(p)
            })?,
            unknown_tagged_fields: read_tags(r, flex, "topics._tagged_fields")?,
        })
    }
}

impl OffsetFetchResponseGroup {
    fn encode<B: BufMut>(&self, b: &mut B, version: i16) -> Result<(), EncodeError> {
        put_string(b, "groups.group_id", &self.group_id, true)?;
        put_array(b, "groups.topics", &self.topics, true, |b, t| {
            check_field(version <= 9, &t.name, &String::new(), "groups.topics.name")?;
            check_field(
                version >= 10,
                &t.topic_id,
                &[0; 16],
                "groups.topics.topic_id",
            )?;
            if version <= 9 {
                put_string(b, "groups.topics.name", &t.name, true)?;
            } else {
                put_uuid(b, &t.topic_id);
            }
            put_array(
                b,
                "groups.topics.partitions",
                &t.partitions,
                true,
                |b, p| {
                    b.put_i32(p.partition_index);
                    b.put_i64(p.committed_offset);
                    b.put_i32(p.committed_leader_epoch);
                    put_nullable_string(
                        b,
                        "groups.topics.partitions.metadata",
                        p.metadata.as_deref(),
                        true,
                    )?;
                    b.put_i16(p.error_code);
                    put_unknown_tagged_fields(b, &p.unknown_tagged_fields);
                    Ok(())
                },
            )?;
            put_unknown_tagged_fields(b, &t.unknown_tagged_fields);
            Ok(())
        })?;
        b.put_i16(self.error_code);
        put_unknown_tagged_fields(b, &self.unknown_tagged_fields);
        Ok(())
    }

    fn decode(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        Ok(Self {
            group_id: r.string("groups.group_id", true)?,
            topics: r.array("groups.topics", true, |r| {
                let mut t = OffsetFetchResponseTopics::default();
                if version <= 9 {
                    t.name = r.string("groups.topics.name", true)?;
                } else {
                    t.topic_id = r.uuid("groups.topics.topic_id")?;
                }
                t.partitions = r.array("groups.topics.partitions", true, |r| {
                    Ok(OffsetFetchResponsePartitions {
                        partition_index: r.i32("groups.topics.partitions.partition_index")?,
                        committed_offset: r.i64("groups.topics.partitions.committed_offset")?,
                        committed_leader_epoch: r
                            .i32("groups.topics.partitions.committed_leader_epoch")?,
                        metadata: r.nullable_string("groups.topics.partitions.metadata", true)?,
                        error_code: r.i16("groups.topics.partitions.error_code")?,
                        unknown_tagged_fields: r
                            .unknown_tagged_fields("groups.topics.partitions._tagged_fields")?,
                    })
                })?;
                t.unknown_tagged_fields =
                    r.unknown_tagged_fields("groups.topics._tagged_fields")?;
                Ok(t)
            })?,
            error_code: r.i16("groups.error_code")?,
            unknown_tagged_fields: r.unknown_tagged_fields("groups._tagged_fields")?,
        })
    }
}

impl Message for OffsetFetchResponse {
    const API_KEY: ApiKey = ApiKey::OffsetFetch;
    const VERSIONS: VersionRange = VersionRange::new(1, 10);
    const FLEXIBLE_MIN: i16 = 6;

    fn encode_body<B: BufMut>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let d = Self::default();
        let flex = Self::is_flexible(version);
        check_field(
            version >= 3,
            &self.throttle_time_ms,
            &d.throttle_time_ms,
            "throttle_time_ms",
        )?;
        check_field(version <= 7, &self.topics, &d.topics, "topics")?;
        check_field(
            (2..=7).contains(&version),
            &self.error_code,
            &d.error_code,
            "error_code",
        )?;
        check_field(version >= 8, &self.groups, &d.groups, "groups")?;
        check_tags(flex, &self.unknown_tagged_fields, "_tagged_fields")?;
        if version >= 3 {
            buf.put_i32(self.throttle_time_ms);
        }
        if version <= 7 {
            put_array(buf, "topics", &self.topics, flex, |b, t| {
                t.encode(b, version)
            })?;
            if version >= 2 {
                buf.put_i16(self.error_code);
            }
        } else {
            put_array(buf, "groups", &self.groups, true, |b, g| {
                g.encode(b, version)
            })?;
        }
        write_tags(buf, flex, &self.unknown_tagged_fields);
        Ok(())
    }

    fn decode_body(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        let flex = Self::is_flexible(version);
        let mut m = Self::default();
        if version >= 3 {
            m.throttle_time_ms = r.i32("throttle_time_ms")?;
        }
        if version <= 7 {
            m.topics = r.array("topics", flex, |r| {
                OffsetFetchResponseTopic::decode(r, version)
            })?;
            if version >= 2 {
                m.error_code = r.i16("error_code")?;
            }
        } else {
            m.groups = r.array("groups", true, |r| {
                OffsetFetchResponseGroup::decode(r, version)
            })?;
        }
        m.unknown_tagged_fields = read_tags(r, flex, "_tagged_fields")?;
        Ok(m)
    }
}

impl Response for OffsetFetchResponse {}

#[cfg(any(test, feature = "arbitrary"))]
mod arbitrary {
    use super::*;
    use crate::testing::{
        VersionedArbitrary, arb_or, arb_string, arb_tagged, arb_uuid, arb_vec, opt_nullable_string,
    };
    use proptest::prelude::*;

    impl VersionedArbitrary for OffsetFetchRequest {
        fn arbitrary(version: i16) -> BoxedStrategy<Self> {
            let flex = version >= 6;
            let single = version <= 7;
            let topic = (
                arb_string(true),
                arb_vec(true, any::<i32>()),
                arb_tagged(flex),
            )
                .prop_map(|(name, parts, t)| OffsetFetchRequestTopic {
                    name,
                    partition_indexes: parts,
                    unknown_tagged_fields: t,
                });
            let topics = if !single {
                Just(None).boxed()
            } else if version < 2 {
                arb_vec(true, topic).prop_map(Some).boxed()
            } else {
                proptest::option::of(arb_vec(true, topic)).boxed()
            };
            let group_topic = (
                arb_string(version <= 9),
                arb_uuid(version >= 10),
                arb_vec(true, any::<i32>()),
                arb_tagged(true),
            )
                .prop_map(|(name, id, parts, t)| OffsetFetchRequestTopics {
                    name,
                    topic_id: id,
                    partition_indexes: parts,
                    unknown_tagged_fields: t,
                });
            let group = (
                arb_string(true),
                opt_nullable_string(version >= 9),
                arb_or(version >= 9, -1i32),
                proptest::option::of(arb_vec(true, group_topic)),
                arb_tagged(true),
            )
                .prop_map(|(id, member, epoch, topics, t)| OffsetFetchRequestGroup {
                    group_id: id,
                    member_id: member,
                    member_epoch: epoch,
                    topics,
                    unknown_tagged_fields: t,
                });
            (
                arb_string(single),
                topics,
                arb_vec(!single, group),
                arb_or(version >= 7, false),
                arb_tagged(flex),
            )
                .prop_map(|(group_id, topics, groups, stable, t)| OffsetFetchRequest {
                    group_id,
                    topics,
                    groups,
                    require_stable: stable,
                    unknown_tagged_fields: t,
                })
                .boxed()
        }
    }

    impl VersionedArbitrary for OffsetFetchResponse {
        fn arbitrary(version: i16) -> BoxedStrategy<Self> {
            let flex = version >= 6;
            let single = version <= 7;
            let partition = (
                any::<i32>(),
                any::<i64>(),
                arb_or(version >= 5, -1i32),
                opt_nullable_string(true),
                any::<i16>(),
                arb_tagged(flex),
            )
                .prop_map(|(idx, off, epoch, meta, e, t)| {
                    OffsetFetchResponsePartition {
                        partition_index: idx,
                        committed_offset: off,
                        committed_leader_epoch: epoch,
                        metadata: meta,
                        error_code: e,
                        unknown_tagged_fields: t,
                    }
                });
            let topic = (arb_string(true), arb_vec(true, partition), arb_tagged(flex)).prop_map(
                |(name, partitions, t)| OffsetFetchResponseTopic {
                    name,
                    partitions,
                    unknown_tagged_fields: t,
                },
            );
            let partitions = (
                any::<i32>(),
                any::<i64>(),
                any::<i32>(),
                opt_nullable_string(true),
                any::<i16>(),
                arb_tagged(true),
            )
                .prop_map(|(idx, off, epoch, meta, e, t)| {
                    OffsetFetchResponsePartitions {
                        partition_index: idx,
                        committed_offset: off,
                        committed_leader_epoch: epoch,
                        metadata: meta,
                        error_code: e,
                        unknown_tagged_fields: t,
                    }
                });
            let topics = (
                arb_string(version <= 9),
                arb_uuid(version >= 10),
                arb_vec(true, partitions),
                arb_tagged(true),
            )
                .prop_map(|(name, id, partitions, t)| OffsetFetchResponseTopics {
                    name,
                    topic_id: id,
                    partitions,
                    unknown_tagged_fields: t,
                });
            let group = (
                arb_string(true),
                arb_vec(true, topics),
                any::<i16>(),
                arb_tagged(true),
            )
                .prop_map(|(id, topics, e, t)| OffsetFetchResponseGroup {
                    group_id: id,
                    topics,
                    error_code: e,
                    unknown_tagged_fields: t,
                });
            (
                arb_or(version >= 3, 0i32),
                arb_vec(single, topic),
                arb_or((2..=7).contains(&version), 0i16),
                arb_vec(!single, group),
                arb_tagged(flex),
            )
                .prop_map(|(th, topics, e, groups, t)| OffsetFetchResponse {
                    throttle_time_ms: th,
                    topics,
                    error_code: e,
                    groups,
                    unknown_tagged_fields: t,
                })
                .boxed()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// v1 request (classic, single group): group "g", topic "t", partition 0.
    #[test]
    fn v1_request_fixture() {
        let bytes: &[u8] = &[
            0, 1, b'g', // group_id
            0, 0, 0, 1, // topics: 1 element
            0, 1, b't', // name
            0, 0, 0, 1, 0, 0, 0, 0, // partition_indexes [0]
        ];
        let req = OffsetFetchRequest::decode(bytes, 1).unwrap();
        assert_eq!(req.group_id, "g");
        let topics = req.topics.as_ref().unwrap();
        assert_eq!(topics[0].name, "t");
        assert_eq!(topics[0].partition_indexes, [0]);
        assert_eq!(req.encode_to_vec(1).unwrap(), bytes);
        // Null topics (all topics) need v2+.
        let all = OffsetFetchRequest {
            topics: None,
            ..req
        };
        assert_eq!(
            all.encode_to_vec(1).unwrap_err().kind,
            EncodeErrorKind::NullNotAllowed
        );
        assert_eq!(
            all.encode_to_vec(2).unwrap(),
            [0, 1, b'g', 0xff, 0xff, 0xff, 0xff]
        );
        // A null array on the wire is rejected at v1.
        assert!(OffsetFetchRequest::decode(&[0, 1, b'g', 0xff, 0xff, 0xff, 0xff], 1).is_err());
    }

    /// v7 request (flexible, single group): null topics, require_stable.
    #[test]
    fn v7_request_fixture() {
        let bytes: &[u8] = &[2, b'g', 0, 1, 0];
        let req = OffsetFetchRequest::decode(bytes, 7).unwrap();
        assert_eq!(req.group_id, "g");
        assert_eq!(req.topics, None);
        assert!(req.require_stable);
        assert!(req.groups.is_empty());
        assert_eq!(req.encode_to_vec(7).unwrap(), bytes);
    }

    /// v10 request (batched): member id and epoch, one topic by id.
    #[test]
    fn v10_request_fixture() {
        let bytes: &[u8] = &[
            2, // groups: 1 element
            2, b'g', // group_id
            2, b'm', // member_id "m"
            0, 0, 0, 5, // member_epoch 5
            2, // topics: 1 element
            1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, // topic_id
            2, 0, 0, 0, 0, // partition_indexes [0]
            0, // topic tags
            0, // group tags
            0, // require_stable
            0, // tags
        ];
        let req = OffsetFetchRequest::decode(bytes, 10).unwrap();
        let g = &req.groups[0];
        assert_eq!(g.group_id, "g");
        assert_eq!(g.member_id.as_deref(), Some("m"));
        assert_eq!(g.member_epoch, 5);
        let t = &g.topics.as_ref().unwrap()[0];
        assert_eq!(t.topic_id[15], 16);
        assert_eq!(t.name, "");
        assert_eq!(t.partition_indexes, [0]);
        assert_eq!(req.encode_to_vec(10).unwrap(), bytes);
        // v9 cannot carry topic ids; v8 cannot carry member fields.
        assert_eq!(
            req.encode_to_vec(9).unwrap_err().field,
            "groups.topics.topic_id"
        );
        assert_eq!(req.encode_to_vec(8).unwrap_err().field, "groups.member_id");
    }

    /// v8 request: batched group with null topics (all topics).
    #[test]
    fn v8_request_fixture() {
        let bytes: &[u8] = &[2, 2, b'g', 0, 0, 1, 0];
        let req = OffsetFetchRequest::decode(bytes, 8).unwrap();
        assert_eq!(req.groups[0].group_id, "g");
        assert_eq!(req.groups[0].topics, None);
        assert_eq!(req.groups[0].member_epoch, -1);
        assert!(req.require_stable);
        assert_eq!(req.encode_to_vec(8).unwrap(), bytes);
    }

    /// v1 response: one partition with offset 100, empty metadata, no top-level error.
    #[test]
    fn v1_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 1, // topics: 1 element
            0, 1, b't', // name
            0, 0, 0, 1, // partitions: 1 element
            0, 0, 0, 0, // partition_index
            0, 0, 0, 0, 0, 0, 0, 100, // committed_offset
            0, 0, // metadata ""
            0, 0, // error_code
        ];
        let resp = OffsetFetchResponse::decode(bytes, 1).unwrap();
        let p = &resp.topics[0].partitions[0];
        assert_eq!(p.committed_offset, 100);
        assert_eq!(p.committed_leader_epoch, -1);
        assert_eq!(p.metadata.as_deref(), Some(""));
        assert_eq!(resp.encode_to_vec(1).unwrap(), bytes);
    }

    /// v5 response: throttle, leader epoch, null metadata, top-level error.
    #[test]
    fn v5_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 7, // throttle_time_ms
            0, 0, 0, 1, // topics
            0, 1, b't', // name
            0, 0, 0, 1, // partitions
            0, 0, 0, 2, // partition_index
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // committed_offset -1
            0, 0, 0, 4, // committed_leader_epoch
            0xff, 0xff, // metadata null
            0, 0, // error_code
            0, 0, // top-level error_code
        ];
        let resp = OffsetFetchResponse::decode(bytes, 5).unwrap();
        assert_eq!(resp.throttle_time_ms, 7);
        let p = &resp.topics[0].partitions[0];
        assert_eq!((p.partition_index, p.committed_offset), (2, -1));
        assert_eq!(p.committed_leader_epoch, 4);
        assert_eq!(p.metadata, None);
        assert_eq!(resp.encode_to_vec(5).unwrap(), bytes);
        assert_eq!(
            resp.encode_to_vec(4).unwrap_err().field,
            "topics.partitions.committed_leader_epoch"
        );
    }

    /// v10 response: one group, one topic by id, one partition.
    #[test]
    fn v10_response_fixture() {
        let bytes: &[u8] = &[
            0, 0, 0, 0, // throttle_time_ms
            2, // groups: 1 element
            2, b'g', // group_id
            2,    // topics: 1 element
            1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, // topic_id
            2,  // partitions: 1 element
            0, 0, 0, 0, // partition_index
            0, 0, 0, 0, 0, 0, 0, 100, // committed_offset
            0, 0, 0, 2, // committed_leader_epoch
            0, // metadata null
            0, 0, // error_code
            0, // partition tags
            0, // topic tags
            0, 0, // group error_code
            0, // group tags
            0, // tags
        ];
        let resp = OffsetFetchResponse::decode(bytes, 10).unwrap();
        let g = &resp.groups[0];
        assert_eq!(g.group_id, "g");
        let t = &g.topics[0];
        assert_eq!(t.topic_id[0], 1);
        let p = &t.partitions[0];
        assert_eq!((p.committed_offset, p.committed_leader_epoch), (100, 2));
        assert_eq!(p.metadata, None);
        assert_eq!(resp.encode_to_vec(10).unwrap(), bytes);
        assert_eq!(resp.encode_to_vec(7).unwrap_err().field, "groups");
    }
}

#[cfg(test)]
mod round_trip {
    use super::*;
    use crate::testing::{round_trip_all_versions, truncations_fail_cleanly};

    #[test]
    fn request_every_version() {
        round_trip_all_versions::<OffsetFetchRequest>(64);
        truncations_fail_cleanly::<OffsetFetchRequest>(8);
    }

    #[test]
    fn response_every_version() {
        round_trip_all_versions::<OffsetFetchResponse>(64);
        truncations_fail_cleanly::<OffsetFetchResponse>(8);
    }
}
