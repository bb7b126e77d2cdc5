//! OffsetFetch on a group's coordinator: the committed offsets of one group,
//! for chosen partitions or for every topic the group has offsets for. The
//! admin client lists a group's offsets with it; the manually assigned
//! consumer resumes a group's partitions from it.
//!
//! The API has three shapes, handled here once:
//!
//! 1. v1–7: one group, `group_id` and `topics` at the top level (`topics`
//!    null, for every topic, from v2; `require_stable` from v7);
//! 2. v8–9: batched groups, each with its own nullable `topics`;
//! 3. v10: as v8, with topics named by id instead of by name (KIP-516);
//!    ids are resolved through the cluster's metadata, and a requested topic
//!    whose id the metadata does not know is asked for by name at v9.
//!
//! ```no_run
//! # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), kafka_client::RequestError> {
//! use kafka_client::requests::offset_fetch::{TopicPartitions, offset_fetch_on};
//! use kafka_client::{CoordinatorType, find_coordinator};
//! let c = find_coordinator(cluster, CoordinatorType::Group, "billing").await?;
//! let orders = [TopicPartitions { topic: "orders", partitions: &[0, 1] }];
//! let answer = offset_fetch_on(&c.connection, cluster, "billing", Some(&orders), true).await?;
//! for p in &answer.partitions {
//!     println!("{}: {:?} ({:?})", p.partition, p.offset, p.error);
//! }
//! # Ok(()) }
//! ```

use crate::error::{ClusterError, RequestError};
use crate::{Cluster, Connection, TopicPartition};
use kafka_proto::messages::{
    OffsetFetchRequest, OffsetFetchRequestGroup, OffsetFetchRequestTopic, OffsetFetchRequestTopics,
    OffsetFetchResponse,
};
use kafka_proto::primitives::Uuid;
use kafka_proto::{ApiKey, ErrorCode};
use std::collections::BTreeMap;

/// The partitions of one topic whose committed offsets to fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopicPartitions<'a> {
    /// The topic's name.
    pub topic: &'a str,
    /// Its partitions.
    pub partitions: &'a [i32],
}

/// One partition of an OffsetFetch answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommittedOffset {
    /// The partition (by name, at every version).
    pub partition: TopicPartition,
    /// The committed offset; `None` when the group has none (-1 on the wire).
    pub offset: Option<i64>,
    /// The leader epoch committed with it (v5+); `None` when unknown.
    pub leader_epoch: Option<i32>,
    /// The metadata committed with it.
    pub metadata: Option<String>,
    /// The partition's error code (`ErrorCode::None` when fine; e.g.
    /// UNSTABLE_OFFSET_COMMIT under `require_stable`).
    pub error: ErrorCode,
}

/// A group's committed offsets as its coordinator answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupOffsets {
    /// The OffsetFetch version used.
    pub version: i16,
    /// Every partition in the answer, in the answer's order. Under v10 a
    /// topic id the cluster's metadata does not know (a deleted topic) is
    /// left out.
    pub partitions: Vec<CommittedOffset>,
}

/// OffsetFetch of `group_id` on `conn` (the group's coordinator), once:
/// `topics` `None` asks for every topic the group has offsets for (v2+);
/// `require_stable` (honoured from v7) makes the broker answer
/// UNSTABLE_OFFSET_COMMIT for partitions with a pending transactional commit
/// (KIP-447). A group-level error code, and a v8+ answer without the group,
/// is a [`RequestError::Broker`]; partition-level error codes are left in
/// [`CommittedOffset::error`] for the caller to judge.
///
/// `cluster` gives the topic ids of v10: its metadata is refreshed when a
/// requested topic is missing from it, and fully when the answer to an
/// every-topic request names topics by id.
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster, coordinator: &kafka_client::Connection) -> Result<(), kafka_client::RequestError> {
/// use kafka_client::requests::offset_fetch::offset_fetch_on;
/// let all = offset_fetch_on(coordinator, cluster, "billing", None, false).await?;
/// println!("OffsetFetch v{}: {} partitions", all.version, all.partitions.len());
/// # Ok(()) }
/// ```
pub async fn offset_fetch_on(
    conn: &Connection,
    cluster: &Cluster,
    group_id: &str,
    topics: Option<&[TopicPartitions<'_>]>,
    require_stable: bool,
) -> Result<GroupOffsets, RequestError> {
    let mut version = conn.versions().version_for::<OffsetFetchRequest>()?;
    let mut ids = Vec::new();
    if let (Some(topics), true) = (topics, version >= 10) {
        let names: Vec<&str> = topics.iter().map(|t| t.topic).collect();
        ensure_metadata(cluster, &names).await?;
        let metadata = cluster.metadata();
        ids = names.iter().map(|n| metadata.topic_id(n)).collect();
        if ids.iter().any(Option::is_none) {
            version = 9;
        }
    }
    let req = request(version, group_id, topics, &ids, require_stable)?;
    let resp = conn.send(&req, version).await?;
    let names_by_id: BTreeMap<Uuid, String> = match topics {
        _ if version < 10 => BTreeMap::new(),
        Some(topics) => ids
            .iter()
            .zip(topics)
            .filter_map(|(id, t)| id.map(|id| (id, t.topic.to_string())))
            .collect(),
        None => {
            cluster.refresh_all().await?;
            cluster
                .metadata()
                .topics()
                .values()
                .map(|t| (t.topic_id, t.name.clone()))
                .collect()
        }
    };
    group_offsets(version, group_id, resp, &names_by_id)
}

/// Refreshes the metadata when it is stale or lacks one of `topics`.
async fn ensure_metadata(cluster: &Cluster, topics: &[&str]) -> Result<(), ClusterError> {
    let missing = {
        let metadata = cluster.metadata();
        topics.iter().any(|t| metadata.topic(t).is_none())
    };
    if missing {
        cluster.refresh_topics(topics).await?;
    } else {
        cluster.maybe_refresh().await?;
    }
    Ok(())
}

/// The request at `version`; `ids` holds each topic's id under v10.
fn request(
    version: i16,
    group_id: &str,
    topics: Option<&[TopicPartitions<'_>]>,
    ids: &[Option<Uuid>],
    require_stable: bool,
) -> Result<OffsetFetchRequest, RequestError> {
    if topics.is_none() && version < 2 {
        // v1 has no "every topic" form.
        return Err(RequestError::Broker {
            api: ApiKey::OffsetFetch,
            version,
            error: ErrorCode::UnsupportedVersion,
            message: Some("fetching the offsets of all topics needs OffsetFetch v2+".into()),
        });
    }
    let require_stable = require_stable && version >= 7;
    Ok(if version >= 8 {
        let topics = topics.map(|topics| {
            topics
                .iter()
                .enumerate()
                .map(|(i, t)| OffsetFetchRequestTopics {
                    name: if version >= 10 {
                        String::new()
                    } else {
                        t.topic.to_string()
                    },
                    topic_id: ids.get(i).copied().flatten().unwrap_or_default(),
                    partition_indexes: t.partitions.to_vec(),
                    ..Default::default()
                })
                .collect()
        });
        OffsetFetchRequest {
            groups: vec![OffsetFetchRequestGroup {
                group_id: group_id.to_string(),
                topics,
                ..Default::default()
            }],
            require_stable,
            ..Default::default()
        }
    } else {
        OffsetFetchRequest {
            group_id: group_id.to_string(),
            topics: topics.map(|topics| {
                topics
                    .iter()
                    .map(|t| OffsetFetchRequestTopic {
                        name: t.topic.to_string(),
                        partition_indexes: t.partitions.to_vec(),
                        ..Default::default()
                    })
                    .collect()
            }),
            require_stable,
            ..Default::default()
        }
    })
}

/// One partition's answer, with -1 read as "none".
fn committed(
    topic: &str,
    partition: i32,
    offset: i64,
    leader_epoch: i32,
    metadata: Option<String>,
    error: i16,
) -> CommittedOffset {
    CommittedOffset {
        partition: TopicPartition::new(topic, partition),
        offset: (offset >= 0).then_some(offset),
        leader_epoch: (leader_epoch >= 0).then_some(leader_epoch),
        metadata,
        error: ErrorCode::from(error),
    }
}

/// The answer for `group_id` in `resp` at `version`; under v10 topic ids
/// are named through `names_by_id` (unknown ids are left out).
fn group_offsets(
    version: i16,
    group_id: &str,
    resp: OffsetFetchResponse,
    names_by_id: &BTreeMap<Uuid, String>,
) -> Result<GroupOffsets, RequestError> {
    let broker = |error: ErrorCode, message: String| RequestError::Broker {
        api: ApiKey::OffsetFetch,
        version,
        error,
        message: Some(message),
    };
    let mut partitions = Vec::new();
    let group_error = if version >= 8 {
        let Some(group) = resp.groups.into_iter().find(|g| g.group_id == group_id) else {
            return Err(broker(
                ErrorCode::CoordinatorNotAvailable,
                format!("group {group_id}: not in the answer"),
            ));
        };
        for t in group.topics {
            let name = if version >= 10 {
                match names_by_id.get(&t.topic_id) {
                    Some(name) => name.clone(),
                    None => continue,
                }
            } else {
                t.name
            };
            for p in t.partitions {
                partitions.push(committed(
                    &name,
                    p.partition_index,
                    p.committed_offset,
                    p.committed_leader_epoch,
                    p.metadata,
                    p.error_code,
                ));
            }
        }
        group.error_code
    } else {
        for t in resp.topics {
            for p in t.partitions {
                partitions.push(committed(
                    &t.name,
                    p.partition_index,
                    p.committed_offset,
                    p.committed_leader_epoch,
                    p.metadata,
                    p.error_code,
                ));
            }
        }
        resp.error_code
    };
    let group_error = ErrorCode::from(group_error);
    if !group_error.is_ok() {
        return Err(broker(group_error, format!("group {group_id}")));
    }
    Ok(GroupOffsets {
        version,
        partitions,
    })
}

#[cfg(test)]
mod tests;
