//! ListOffsets on one partition leader: the earliest offset, the end (high
//! watermark, or last stable offset under read_committed), the offset of
//! the record with the largest timestamp, or the first offset at or after a
//! timestamp. The admin client resolves offset specs with it
//! (`kafka-consumer-groups --reset-offsets`, Java's `Admin.listOffsets`).
//!
//! The version shapes are handled once: the isolation level is sent from
//! v2 (refused below it when read_committed is asked), the current leader
//! epoch from v4, max-timestamp needs v7, the tiered-storage timeout v10.
//! Partition errors are left in the answer for the caller to judge (and
//! retry, after a metadata refresh, when they are retriable).
//!
//! ```no_run
//! # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), Box<dyn std::error::Error>> {
//! use kafka_client::requests::list_offsets::{OffsetSpec, PartitionQuery, list_offsets_on};
//! use kafka_client::TopicPartition;
//! let (_, leader) = cluster.leader_connection("orders", 0).await?;
//! let q = [PartitionQuery::new(TopicPartition::new("orders", 0))];
//! let answer = list_offsets_on(&leader, &q, OffsetSpec::Latest, false, None).await?;
//! println!("orders-0 ends at {:?}", answer.partitions[0].offset);
//! # Ok(()) }
//! ```

use crate::error::RequestError;
use crate::{Connection, TopicPartition};
use kafka_proto::messages::{
    ListOffsetsRequest, ListOffsetsRequestPartition, ListOffsetsRequestTopic, ListOffsetsResponse,
};
use kafka_proto::{ApiKey, ErrorCode};
use std::collections::BTreeMap;
use std::time::Duration;

/// Which offset to look up (Java's `OffsetSpec`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OffsetSpec {
    /// The log start offset (timestamp -2).
    Earliest,
    /// The end: the high watermark, or the last stable offset under
    /// read_committed (timestamp -1).
    Latest,
    /// The offset of the record with the largest timestamp (timestamp -3,
    /// ListOffsets v7+, KIP-734).
    MaxTimestamp,
    /// The first offset whose record timestamp is at or after this many
    /// milliseconds since the epoch; none when every record is older.
    Timestamp(i64),
}

impl OffsetSpec {
    /// The wire timestamp: -2, -1, -3, or the timestamp itself.
    pub fn wire(self) -> i64 {
        match self {
            OffsetSpec::Earliest => -2,
            OffsetSpec::Latest => -1,
            OffsetSpec::MaxTimestamp => -3,
            OffsetSpec::Timestamp(t) => t,
        }
    }
}

/// One partition to look up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionQuery {
    /// The partition.
    pub partition: TopicPartition,
    /// The leader epoch the caller's metadata knows (sent from v4 so that a
    /// stale leader answers FENCED_LEADER_EPOCH); -1 when unknown.
    pub current_leader_epoch: i32,
}

impl PartitionQuery {
    /// A query without a known leader epoch.
    ///
    /// ```
    /// use kafka_client::requests::list_offsets::PartitionQuery;
    /// use kafka_client::TopicPartition;
    /// let q = PartitionQuery { current_leader_epoch: 4, ..PartitionQuery::new(TopicPartition::new("orders", 0)) };
    /// assert_eq!(q.partition.to_string(), "orders-0");
    /// ```
    pub fn new(partition: TopicPartition) -> Self {
        Self {
            partition,
            current_leader_epoch: -1,
        }
    }
}

/// One partition of a ListOffsets answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedPartition {
    /// The partition.
    pub partition: TopicPartition,
    /// The partition's error (`ErrorCode::None` when fine).
    pub error: ErrorCode,
    /// The offset found; `None` when there is none (-1 on the wire: no
    /// record at or after the timestamp).
    pub offset: Option<i64>,
    /// The timestamp of the record at `offset`, when the broker gives one.
    pub timestamp: Option<i64>,
    /// The leader epoch of the record at `offset` (v4+), when known.
    pub leader_epoch: Option<i32>,
}

/// A ListOffsets answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedOffsets {
    /// The version used.
    pub version: i16,
    /// Every partition in the answer, in the answer's order.
    pub partitions: Vec<ListedPartition>,
}

/// ListOffsets of `partitions` (all led by the broker behind `conn`) for
/// `spec`, once. `read_committed` asks for the last stable offset as the end
/// (v2+; a broker below v2 gives an error rather than a wrong answer);
/// `timeout` is the tiered-storage wait (v10+). Request-level failures are
/// [`RequestError`]s; partition errors stay in the answer.
///
/// ```no_run
/// # async fn demo(conn: &kafka_client::Connection) -> Result<(), kafka_client::RequestError> {
/// use kafka_client::requests::list_offsets::{OffsetSpec, PartitionQuery, list_offsets_on};
/// use kafka_client::TopicPartition;
/// let q = [PartitionQuery::new(TopicPartition::new("orders", 0))];
/// let a = list_offsets_on(conn, &q, OffsetSpec::Timestamp(1_700_000_000_000), true, None).await?;
/// println!("{:?}", a.partitions[0].offset);
/// # Ok(()) }
/// ```
pub async fn list_offsets_on(
    conn: &Connection,
    partitions: &[PartitionQuery],
    spec: OffsetSpec,
    read_committed: bool,
    timeout: Option<Duration>,
) -> Result<ListedOffsets, RequestError> {
    let version = conn.versions().version_for::<ListOffsetsRequest>()?;
    let req = request(version, partitions, spec, read_committed, timeout)?;
    let resp = conn.send(&req, version).await?;
    Ok(answer(version, resp))
}

/// The request at `version`; a spec or isolation level the version cannot
/// carry is an UNSUPPORTED_VERSION error naming what is missing.
pub(crate) fn request(
    version: i16,
    partitions: &[PartitionQuery],
    spec: OffsetSpec,
    read_committed: bool,
    timeout: Option<Duration>,
) -> Result<ListOffsetsRequest, RequestError> {
    let unsupported = |what: &str| RequestError::Broker {
        api: ApiKey::ListOffsets,
        version,
        error: ErrorCode::UnsupportedVersion,
        message: Some(format!("{what} needs a newer broker")),
    };
    if read_committed && version < 2 {
        return Err(unsupported("read_committed (ListOffsets v2)"));
    }
    if spec == OffsetSpec::MaxTimestamp && version < 7 {
        return Err(unsupported("the max-timestamp offset (ListOffsets v7)"));
    }
    let mut by_topic: BTreeMap<&str, Vec<ListOffsetsRequestPartition>> = BTreeMap::new();
    for q in partitions {
        by_topic
            .entry(&q.partition.topic)
            .or_default()
            .push(ListOffsetsRequestPartition {
                partition_index: q.partition.partition,
                current_leader_epoch: if version >= 4 {
                    q.current_leader_epoch
                } else {
                    -1
                },
                timestamp: spec.wire(),
                ..Default::default()
            });
    }
    Ok(ListOffsetsRequest {
        replica_id: -1,
        isolation_level: i8::from(read_committed && version >= 2),
        topics: by_topic
            .into_iter()
            .map(|(name, partitions)| ListOffsetsRequestTopic {
                name: name.to_string(),
                partitions,
                ..Default::default()
            })
            .collect(),
        timeout_ms: match (version >= 10, timeout) {
            (true, Some(t)) => i32::try_from(t.as_millis()).unwrap_or(i32::MAX),
            _ => 0,
        },
        ..Default::default()
    })
}

/// The answer as plain values: -1 offsets, timestamps and epochs are `None`.
pub(crate) fn answer(version: i16, resp: ListOffsetsResponse) -> ListedOffsets {
    let partitions = resp
        .topics
        .into_iter()
        .flat_map(|t| {
            let topic: std::sync::Arc<str> = t.name.into();
            t.partitions.into_iter().map(move |p| ListedPartition {
                partition: TopicPartition::new(topic.clone(), p.partition_index),
                error: ErrorCode::from(p.error_code),
                offset: (p.offset >= 0).then_some(p.offset),
                timestamp: (p.timestamp >= 0).then_some(p.timestamp),
                leader_epoch: (p.leader_epoch >= 0).then_some(p.leader_epoch),
            })
        })
        .collect();
    ListedOffsets {
        version,
        partitions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_proto::messages::{ListOffsetsResponsePartition, ListOffsetsResponseTopic};

    fn q(topic: &str, p: i32, epoch: i32) -> PartitionQuery {
        PartitionQuery {
            partition: TopicPartition::new(topic, p),
            current_leader_epoch: epoch,
        }
    }

    /// Partitions are grouped by topic; the spec becomes the wire
    /// timestamp; the leader epoch goes only from v4, the isolation level
    /// from v2, the timeout from v10.
    #[test]
    fn the_request_follows_the_version() {
        let parts = [q("a", 1, 7), q("b", 0, 3), q("a", 0, 7)];
        let r = request(
            10,
            &parts,
            OffsetSpec::Earliest,
            true,
            Some(Duration::from_secs(5)),
        )
        .unwrap();
        assert_eq!(r.isolation_level, 1);
        assert_eq!(r.timeout_ms, 5000);
        assert_eq!(r.topics.len(), 2);
        assert_eq!(r.topics[0].name, "a");
        let a: Vec<(i32, i32, i64)> = r.topics[0]
            .partitions
            .iter()
            .map(|p| (p.partition_index, p.current_leader_epoch, p.timestamp))
            .collect();
        assert_eq!(a, [(1, 7, -2), (0, 7, -2)]);
        let old = request(3, &parts, OffsetSpec::Timestamp(99), true, None).unwrap();
        assert_eq!(old.topics[0].partitions[0].current_leader_epoch, -1);
        assert_eq!(old.topics[0].partitions[0].timestamp, 99);
        assert_eq!(old.timeout_ms, 0);
    }

    /// What an old broker cannot answer is refused before sending, as
    /// UNSUPPORTED_VERSION naming the feature.
    #[test]
    fn old_versions_refuse_what_they_cannot_carry() {
        let parts = [q("a", 0, -1)];
        let e = request(1, &parts, OffsetSpec::Latest, true, None).unwrap_err();
        assert_eq!(e.error_code(), Some(ErrorCode::UnsupportedVersion));
        assert!(e.to_string().contains("read_committed"), "{e}");
        let e = request(6, &parts, OffsetSpec::MaxTimestamp, false, None).unwrap_err();
        assert!(e.to_string().contains("max-timestamp"), "{e}");
        assert!(request(7, &parts, OffsetSpec::MaxTimestamp, false, None).is_ok());
    }

    /// -1 in the answer means "none"; partition errors are kept.
    #[test]
    fn the_answer_maps_minus_one_to_none_and_keeps_errors() {
        let resp = ListOffsetsResponse {
            topics: vec![ListOffsetsResponseTopic {
                name: "a".into(),
                partitions: vec![
                    ListOffsetsResponsePartition {
                        partition_index: 0,
                        offset: 42,
                        timestamp: 1000,
                        leader_epoch: 2,
                        ..Default::default()
                    },
                    ListOffsetsResponsePartition {
                        partition_index: 1,
                        offset: -1,
                        ..Default::default()
                    },
                    ListOffsetsResponsePartition {
                        partition_index: 2,
                        error_code: ErrorCode::NotLeaderOrFollower.code(),
                        ..Default::default()
                    },
                ],
                ..Default::default()
            }],
            ..Default::default()
        };
        let a = answer(9, resp);
        assert_eq!(a.partitions[0].offset, Some(42));
        assert_eq!(a.partitions[0].timestamp, Some(1000));
        assert_eq!(a.partitions[0].leader_epoch, Some(2));
        assert_eq!(a.partitions[1].offset, None);
        assert_eq!(a.partitions[1].timestamp, None);
        assert_eq!(a.partitions[2].error, ErrorCode::NotLeaderOrFollower);
        assert_eq!(a.partitions[2].partition.to_string(), "a-2");
    }
}
