//! Offsets of partitions on their leaders: look them up ([`list_offsets`],
//! ListOffsets through [`kafka_client::requests::list_offsets`]) and delete
//! the records below them ([`delete_records`], DeleteRecords, Kafka's
//! `kafka-delete-records.sh`).
//!
//! Both route each partition to its leader from the metadata, and retry the
//! partitions answered with a retriable error (a moved leader, a leader
//! epoch the broker has not seen yet) after a metadata refresh, within 30 s.
//! A topic or partition the cluster does not have is the caller's error,
//! reported before anything is sent.

use crate::group_offsets::OffsetsError;
use kafka_client::requests::list_offsets::{OffsetSpec, PartitionQuery, list_offsets_on};
use kafka_client::{Cluster, RequestError, TopicPartition};
use kafka_proto::messages::{
    DeleteRecordsRequest, DeleteRecordsRequestPartition, DeleteRecordsRequestTopic,
    DeleteRecordsResponse,
};
use kafka_proto::{ApiKey, ErrorCode};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// How long a call retries partitions answered with a retriable error.
const RETRY_FOR: Duration = Duration::from_secs(30);

/// One partition's offset as its leader answered ListOffsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListedOffset {
    /// The offset; `None` when there is none (a timestamp after every
    /// record).
    pub offset: Option<i64>,
    /// The timestamp of the record at `offset`, when given.
    pub timestamp: Option<i64>,
    /// The leader epoch of the record at `offset`, when given.
    pub leader_epoch: Option<i32>,
}

/// The partitions, grouped by their leader's node id, with the leader epoch
/// the metadata knows; refreshes the metadata of their topics first. A
/// topic or partition the cluster does not have is an error; a partition
/// without a leader is left in the second list.
async fn by_leader(
    cluster: &Cluster,
    partitions: &[TopicPartition],
) -> Result<(BTreeMap<i32, Vec<PartitionQuery>>, Vec<TopicPartition>), OffsetsError> {
    let mut topics: Vec<&str> = partitions.iter().map(|tp| &*tp.topic).collect();
    topics.sort_unstable();
    topics.dedup();
    cluster
        .refresh_topics(&topics)
        .await
        .map_err(RequestError::from)?;
    let md = cluster.metadata();
    let mut out: BTreeMap<i32, Vec<PartitionQuery>> = BTreeMap::new();
    let mut leaderless = Vec::new();
    for tp in partitions {
        let Some(topic) = md.topic(&tp.topic) else {
            return Err(OffsetsError::UnknownTopic(tp.topic.to_string()));
        };
        match topic.partitions.get(&tp.partition) {
            None => return Err(OffsetsError::UnknownPartition(tp.clone())),
            Some(p) => match p.leader {
                Some(leader) => out.entry(leader).or_default().push(PartitionQuery {
                    partition: tp.clone(),
                    current_leader_epoch: p.leader_epoch,
                }),
                None => leaderless.push(tp.clone()),
            },
        }
    }
    Ok((out, leaderless))
}

/// True when a partition error goes away after a metadata refresh and a
/// retry (Java's `InvalidMetadataException`s and retriable errors).
fn retry_partition(error: ErrorCode) -> bool {
    error.is_retriable()
        || matches!(
            error,
            ErrorCode::NotLeaderOrFollower
                | ErrorCode::FencedLeaderEpoch
                | ErrorCode::UnknownLeaderEpoch
                | ErrorCode::LeaderNotAvailable
                | ErrorCode::OffsetNotAvailable
        )
}

/// Runs `once` on the partitions left until none is left: partitions
/// answered with a retriable error (or without a leader) are tried again
/// after a metadata refresh until [`RETRY_FOR`] has passed.
async fn per_leader<T, F, Fut>(
    cluster: &Cluster,
    api: ApiKey,
    partitions: &[TopicPartition],
    mut once: F,
) -> Result<BTreeMap<TopicPartition, T>, OffsetsError>
where
    F: FnMut(i32, Vec<PartitionQuery>) -> Fut,
    Fut: std::future::Future<
            Output = Result<Vec<(TopicPartition, Result<T, ErrorCode>)>, RequestError>,
        >,
{
    let deadline = Instant::now() + RETRY_FOR;
    let mut out = BTreeMap::new();
    let mut todo: Vec<TopicPartition> = partitions.to_vec();
    todo.sort();
    todo.dedup();
    loop {
        let (leaders, mut again) = by_leader(cluster, &todo).await?;
        let mut last = None;
        for (node, queries) in leaders {
            let asked: Vec<TopicPartition> = queries.iter().map(|q| q.partition.clone()).collect();
            match once(node, queries).await {
                Ok(answers) => {
                    for (tp, r) in answers {
                        match r {
                            Ok(v) => {
                                out.insert(tp, v);
                            }
                            Err(e) if retry_partition(e) => {
                                last = Some(e);
                                again.push(tp);
                            }
                            Err(error) => {
                                return Err(OffsetsError::Partition {
                                    api,
                                    partition: tp,
                                    error,
                                });
                            }
                        }
                    }
                    // A partition the answer left out is asked again.
                    again.extend(asked.into_iter().filter(|tp| !out.contains_key(tp)));
                }
                Err(e) if e.is_retriable() => {
                    tracing::debug!(error = %e, node, ?api, "retry after a refresh");
                    again.extend(asked);
                }
                Err(e) => return Err(e.into()),
            }
        }
        again.sort();
        again.dedup();
        again.retain(|tp| !out.contains_key(tp));
        if again.is_empty() {
            return Ok(out);
        }
        if Instant::now() >= deadline {
            return Err(OffsetsError::Partition {
                api,
                partition: again[0].clone(),
                error: last.unwrap_or(ErrorCode::LeaderNotAvailable),
            });
        }
        cluster.invalidate();
        tokio::time::sleep(Duration::from_millis(100)).await;
        todo = again;
    }
}

/// The offsets of `partitions` for `spec` (Java's `Admin.listOffsets`):
/// ListOffsets on each partition's leader, read_committed or not (the end
/// is then the last stable offset). Partitions answered with a retriable
/// error are retried after a metadata refresh for up to 30 s.
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), kafka_admin::OffsetsError> {
/// use kafka_admin::OffsetSpec;
/// use kafka_client::TopicPartition;
/// let parts = [TopicPartition::new("orders", 0), TopicPartition::new("orders", 1)];
/// for (tp, end) in kafka_admin::list_offsets(cluster, &parts, OffsetSpec::Latest, false).await? {
///     println!("{tp} ends at {:?}", end.offset);
/// }
/// # Ok(()) }
/// ```
pub async fn list_offsets(
    cluster: &Cluster,
    partitions: &[TopicPartition],
    spec: OffsetSpec,
    read_committed: bool,
) -> Result<BTreeMap<TopicPartition, ListedOffset>, OffsetsError> {
    let timeout = cluster.config().connection.request_timeout;
    per_leader(
        cluster,
        ApiKey::ListOffsets,
        partitions,
        |node, queries| async move {
            let conn = cluster.connection(node).await?;
            let answer =
                list_offsets_on(&conn, &queries, spec, read_committed, Some(timeout)).await?;
            Ok(answer
                .partitions
                .into_iter()
                .map(|p| {
                    let r = if p.error.is_ok() {
                        Ok(ListedOffset {
                            offset: p.offset,
                            timestamp: p.timestamp,
                            leader_epoch: p.leader_epoch,
                        })
                    } else {
                        Err(p.error)
                    };
                    (p.partition, r)
                })
                .collect())
        },
    )
    .await
}

/// Deletes the records of each partition below its offset (DeleteRecords on
/// each partition's leader; Kafka's `kafka-delete-records.sh`, Java's
/// `Admin.deleteRecords`): the log start offset moves there and the records
/// below it can no longer be read. `-1` deletes up to the high watermark.
/// Returns each partition's new low watermark. An offset above the high
/// watermark is OFFSET_OUT_OF_RANGE ([`OffsetsError::Partition`]).
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), kafka_admin::OffsetsError> {
/// use kafka_client::TopicPartition;
/// let cut = [(TopicPartition::new("orders", 0), 1000)];
/// for (tp, low) in kafka_admin::delete_records(cluster, &cut).await? {
///     println!("{tp} now starts at {low}");
/// }
/// # Ok(()) }
/// ```
pub async fn delete_records(
    cluster: &Cluster,
    offsets: &[(TopicPartition, i64)],
) -> Result<BTreeMap<TopicPartition, i64>, OffsetsError> {
    if let Some((tp, o)) = offsets.iter().find(|(_, o)| *o < -1) {
        return Err(OffsetsError::InvalidSpec(format!(
            "cannot delete the records of {tp} below offset {o}: give an offset of 0 or more, or -1 for the high watermark"
        )));
    }
    let wanted: BTreeMap<TopicPartition, i64> = offsets.iter().cloned().collect();
    let partitions: Vec<TopicPartition> = wanted.keys().cloned().collect();
    let timeout = cluster.config().connection.request_timeout;
    let wanted = &wanted;
    per_leader(
        cluster,
        ApiKey::DeleteRecords,
        &partitions,
        |node, queries| async move {
            let conn = cluster.connection(node).await?;
            let version = conn.versions().version_for::<DeleteRecordsRequest>()?;
            let req = delete_records_request(&queries, wanted, timeout);
            let resp = conn.send(&req, version).await?;
            Ok(delete_records_answer(resp))
        },
    )
    .await
}

/// The DeleteRecords request for `queries`, each at its wanted offset.
fn delete_records_request(
    queries: &[PartitionQuery],
    wanted: &BTreeMap<TopicPartition, i64>,
    timeout: Duration,
) -> DeleteRecordsRequest {
    let mut by_topic: BTreeMap<&str, Vec<DeleteRecordsRequestPartition>> = BTreeMap::new();
    for q in queries {
        by_topic
            .entry(&q.partition.topic)
            .or_default()
            .push(DeleteRecordsRequestPartition {
                partition_index: q.partition.partition,
                offset: wanted.get(&q.partition).copied().unwrap_or(-1),
                ..Default::default()
            });
    }
    DeleteRecordsRequest {
        topics: by_topic
            .into_iter()
            .map(|(name, partitions)| DeleteRecordsRequestTopic {
                name: name.to_string(),
                partitions,
                ..Default::default()
            })
            .collect(),
        timeout_ms: i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX),
        ..Default::default()
    }
}

/// Each partition's new low watermark, or its error.
fn delete_records_answer(
    resp: DeleteRecordsResponse,
) -> Vec<(TopicPartition, Result<i64, ErrorCode>)> {
    resp.topics
        .into_iter()
        .flat_map(|t| {
            let topic: std::sync::Arc<str> = t.name.into();
            t.partitions.into_iter().map(move |p| {
                let error = ErrorCode::from(p.error_code);
                let r = if error.is_ok() {
                    Ok(p.low_watermark)
                } else {
                    Err(error)
                };
                (TopicPartition::new(topic.clone(), p.partition_index), r)
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_proto::messages::{DeleteRecordsResponsePartition, DeleteRecordsResponseTopic};

    /// The request carries each partition's own offset, grouped by topic.
    #[test]
    fn delete_records_request_groups_by_topic() {
        let q = |t: &str, p| PartitionQuery::new(TopicPartition::new(t, p));
        let wanted: BTreeMap<_, _> = [
            (TopicPartition::new("a", 0), 5),
            (TopicPartition::new("a", 1), -1),
            (TopicPartition::new("b", 0), 9),
        ]
        .into_iter()
        .collect();
        let req = delete_records_request(
            &[q("a", 0), q("b", 0), q("a", 1)],
            &wanted,
            Duration::from_secs(3),
        );
        assert_eq!(req.timeout_ms, 3000);
        let got: Vec<(String, i32, i64)> = req
            .topics
            .iter()
            .flat_map(|t| {
                t.partitions
                    .iter()
                    .map(|p| (t.name.clone(), p.partition_index, p.offset))
            })
            .collect();
        assert_eq!(
            got,
            [("a".into(), 0, 5), ("a".into(), 1, -1), ("b".into(), 0, 9)]
        );
    }

    /// The answer gives the low watermark, or the partition's error.
    #[test]
    fn delete_records_answer_keeps_watermarks_and_errors() {
        let resp = DeleteRecordsResponse {
            topics: vec![DeleteRecordsResponseTopic {
                name: "a".into(),
                partitions: vec![
                    DeleteRecordsResponsePartition {
                        partition_index: 0,
                        low_watermark: 5,
                        ..Default::default()
                    },
                    DeleteRecordsResponsePartition {
                        partition_index: 1,
                        low_watermark: -1,
                        error_code: ErrorCode::OffsetOutOfRange.code(),
                        ..Default::default()
                    },
                ],
                ..Default::default()
            }],
            ..Default::default()
        };
        let a = delete_records_answer(resp);
        assert_eq!(a[0], (TopicPartition::new("a", 0), Ok(5)));
        assert_eq!(
            a[1],
            (
                TopicPartition::new("a", 1),
                Err(ErrorCode::OffsetOutOfRange)
            )
        );
    }

    /// Leader moves and epoch races are retried; a refusal is not.
    #[test]
    fn only_metadata_errors_are_retried() {
        assert!(retry_partition(ErrorCode::NotLeaderOrFollower));
        assert!(retry_partition(ErrorCode::FencedLeaderEpoch));
        assert!(retry_partition(ErrorCode::UnknownLeaderEpoch));
        assert!(!retry_partition(ErrorCode::OffsetOutOfRange));
        assert!(!retry_partition(ErrorCode::TopicAuthorizationFailed));
    }
}
