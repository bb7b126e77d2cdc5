//! Changing a consumer group's committed offsets: set them
//! ([`alter_group_offsets`], OffsetCommit as a simple commit), delete them
//! ([`delete_group_offsets`], OffsetDelete), and reset them the way Kafka's
//! `kafka-consumer-groups.sh --reset-offsets` does: plan first
//! ([`plan_offset_reset`], a dry run), then apply the plan
//! ([`execute_offset_reset`]).
//!
//! Offsets can only be changed while the group has no members, as in Java
//! (`Admin.alterConsumerGroupOffsets` gets UNKNOWN_MEMBER_ID from the
//! coordinator otherwise; the tool refuses unless the group is Empty or
//! Dead): a live consumer would overwrite them with its next commit. The
//! group is described first and a group with members is refused with
//! [`OffsetsError::GroupNotEmpty`], naming them; a member that joins between
//! that check and the commit makes the coordinator refuse the commit, which
//! is reported the same way.

use crate::groups::{GroupState, committed_offsets, describe_group};
use crate::partition_offsets::{ListedOffset, list_offsets};
use kafka_client::requests::list_offsets::OffsetSpec;
use kafka_client::{Cluster, CoordinatorType, RequestError, TopicPartition, find_coordinator};
use kafka_proto::messages::{
    OffsetCommitRequest, OffsetCommitRequestPartition, OffsetCommitRequestTopic,
    OffsetCommitResponse, OffsetDeleteRequest, OffsetDeleteRequestPartition,
    OffsetDeleteRequestTopic, OffsetDeleteResponse,
};
use kafka_proto::{ApiKey, ErrorCode};
use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Why a call on offsets failed, by blame.
#[derive(Debug, thiserror::Error)]
pub enum OffsetsError {
    /// The cluster could not be reached, or the broker refused the request
    /// as a whole.
    #[error(transparent)]
    Request(#[from] RequestError),
    /// The group has members: its offsets cannot be changed under them.
    #[error(
        "the offsets of group {group} can only be changed while it has no members, but it is {state} with members {members:?}: stop its consumers first"
    )]
    GroupNotEmpty {
        /// The group.
        group: String,
        /// Its state.
        state: GroupState,
        /// Its members, as `member-id (client-id@host)`.
        members: Vec<String>,
    },
    /// A topic the cluster does not have.
    #[error("topic {0} does not exist: check its name")]
    UnknownTopic(String),
    /// A partition the topic does not have.
    #[error("partition {0} does not exist: check the topic's partition count")]
    UnknownPartition(TopicPartition),
    /// The broker refused one partition.
    #[error("{api:?} refused {partition}: {}{}", error.name(), hint(*error))]
    Partition {
        /// The API.
        api: ApiKey,
        /// The partition.
        partition: TopicPartition,
        /// The broker's error code.
        error: ErrorCode,
    },
    /// The caller's input cannot be used (a date, a duration, a reset
    /// without partitions, a partition to shift without a committed offset).
    #[error("{0}")]
    InvalidSpec(String),
}

fn hint(error: ErrorCode) -> &'static str {
    match error {
        ErrorCode::OffsetOutOfRange => {
            " (the offset is above the high watermark: give a smaller one, or -1 for the high watermark)"
        }
        ErrorCode::GroupSubscribedToTopic => {
            " (the group's members are subscribed to the topic: stop them first)"
        }
        ErrorCode::TopicAuthorizationFailed | ErrorCode::GroupAuthorizationFailed => {
            " (grant the principal the ACL it needs)"
        }
        _ => "",
    }
}

/// The group's members as `member-id (client-id@host)` when it has any.
async fn members_if_any(
    cluster: &Cluster,
    group: &str,
) -> Result<Option<(GroupState, Vec<String>)>, OffsetsError> {
    // The coordinator may be loading or moving: retried as in `on_coordinator`.
    let deadline = Instant::now() + Duration::from_secs(30);
    let d = loop {
        match describe_group(cluster, group).await {
            Err(e) if e.is_retriable() && Instant::now() < deadline => {
                tracing::debug!(error = %e, group, "describe retry");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            other => break other?,
        }
    };
    if d.members.is_empty() && matches!(d.state, GroupState::Empty | GroupState::Dead) {
        return Ok(None);
    }
    let members = d
        .members
        .iter()
        .map(|m| format!("{} ({}@{})", m.member_id, m.client_id, m.client_host))
        .collect();
    Ok(Some((d.state, members)))
}

/// [`OffsetsError::GroupNotEmpty`] when the group has members.
async fn refuse_if_active(cluster: &Cluster, group: &str) -> Result<(), OffsetsError> {
    match members_if_any(cluster, group).await? {
        None => Ok(()),
        Some((state, members)) => Err(OffsetsError::GroupNotEmpty {
            group: group.to_string(),
            state,
            members,
        }),
    }
}

/// Runs `once` against the group's coordinator, again after a new
/// FindCoordinator while the coordinator moves or loads, for up to 30 s.
async fn on_coordinator<T, F, Fut>(
    cluster: &Cluster,
    group: &str,
    mut once: F,
) -> Result<T, OffsetsError>
where
    F: FnMut(std::sync::Arc<kafka_client::Connection>) -> Fut,
    Fut: std::future::Future<Output = Result<T, RequestError>>,
{
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let r = match find_coordinator(cluster, CoordinatorType::Group, group).await {
            Ok(c) => once(c.connection).await,
            Err(e) => Err(e),
        };
        match r {
            Err(e) if e.is_retriable() && Instant::now() < deadline => {
                tracing::debug!(error = %e, group, "retry on the group's coordinator");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            other => return other.map_err(OffsetsError::from),
        }
    }
}

/// Sets the committed offsets of `group` (Java's
/// `Admin.alterConsumerGroupOffsets`): one OffsetCommit through its
/// coordinator, as a simple commit (no member, generation -1). Refused with
/// [`OffsetsError::GroupNotEmpty`] while the group has members; a group
/// that does not exist yet is created with these offsets.
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), kafka_admin::OffsetsError> {
/// use kafka_client::TopicPartition;
/// let offsets = [(TopicPartition::new("orders", 0), 1200)].into_iter().collect();
/// kafka_admin::alter_group_offsets(cluster, "billing", &offsets).await?;
/// # Ok(()) }
/// ```
pub async fn alter_group_offsets(
    cluster: &Cluster,
    group: &str,
    offsets: &BTreeMap<TopicPartition, i64>,
) -> Result<(), OffsetsError> {
    if let Some((tp, o)) = offsets.iter().find(|(_, o)| **o < 0) {
        return Err(OffsetsError::InvalidSpec(format!(
            "cannot commit offset {o} for {tp}: an offset is 0 or more"
        )));
    }
    refuse_if_active(cluster, group).await?;
    let outcome = on_coordinator(cluster, group, |conn| async move {
        // v10 names topics by id; a simple commit by name is v9 at most.
        let version = conn.versions().version_for::<OffsetCommitRequest>()?.min(9);
        let resp = conn
            .send(&offset_commit_request(group, offsets), version)
            .await?;
        commit_answer(version, resp)
    })
    .await?;
    match outcome {
        Ok(()) => Ok(()),
        Err((partition, error)) => {
            if matches!(
                error,
                ErrorCode::UnknownMemberId
                    | ErrorCode::IllegalGeneration
                    | ErrorCode::RebalanceInProgress
                    | ErrorCode::StaleMemberEpoch
            ) {
                // A member joined since the check: name it.
                if let Some((state, members)) = members_if_any(cluster, group).await? {
                    return Err(OffsetsError::GroupNotEmpty {
                        group: group.to_string(),
                        state,
                        members,
                    });
                }
            }
            Err(OffsetsError::Partition {
                api: ApiKey::OffsetCommit,
                partition,
                error,
            })
        }
    }
}

/// A simple commit (no member, generation -1) of `offsets`.
fn offset_commit_request(
    group: &str,
    offsets: &BTreeMap<TopicPartition, i64>,
) -> OffsetCommitRequest {
    let mut topics: Vec<OffsetCommitRequestTopic> = Vec::new();
    for (tp, offset) in offsets {
        if topics.last().is_none_or(|t| t.name != *tp.topic) {
            topics.push(OffsetCommitRequestTopic {
                name: tp.topic.to_string(),
                ..Default::default()
            });
        }
        if let Some(t) = topics.last_mut() {
            t.partitions.push(OffsetCommitRequestPartition {
                partition_index: tp.partition,
                committed_offset: *offset,
                ..Default::default()
            });
        }
    }
    OffsetCommitRequest {
        group_id: group.to_string(),
        generation_id_or_member_epoch: -1,
        topics,
        ..Default::default()
    }
}

/// The first refused partition of an OffsetCommit answer; a coordinator
/// error (the same on every partition) is a retriable [`RequestError`].
fn commit_answer(
    version: i16,
    resp: OffsetCommitResponse,
) -> Result<Result<(), (TopicPartition, ErrorCode)>, RequestError> {
    for t in resp.topics {
        for p in t.partitions {
            let error = ErrorCode::from(p.error_code);
            if error.is_ok() {
                continue;
            }
            if matches!(
                error,
                ErrorCode::CoordinatorNotAvailable
                    | ErrorCode::NotCoordinator
                    | ErrorCode::CoordinatorLoadInProgress
            ) {
                return Err(RequestError::Broker {
                    api: ApiKey::OffsetCommit,
                    version,
                    error,
                    message: None,
                });
            }
            return Ok(Err((TopicPartition::new(t.name, p.partition_index), error)));
        }
    }
    Ok(Ok(()))
}

/// Deletes the committed offsets of `group` for `partitions` (OffsetDelete;
/// Java's `Admin.deleteConsumerGroupOffsets`, `kafka-consumer-groups.sh
/// --delete-offsets`). The coordinator refuses, per partition, topics the
/// group's members are subscribed to (GROUP_SUBSCRIBED_TO_TOPIC); those
/// outcomes are returned per partition. A group that does not exist is a
/// [`RequestError`] (GROUP_ID_NOT_FOUND).
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), kafka_admin::OffsetsError> {
/// use kafka_client::TopicPartition;
/// let gone = [TopicPartition::new("retired-topic", 0)];
/// for (tp, outcome) in kafka_admin::delete_group_offsets(cluster, "billing", &gone).await? {
///     println!("{tp}: {outcome:?}");
/// }
/// # Ok(()) }
/// ```
pub async fn delete_group_offsets(
    cluster: &Cluster,
    group: &str,
    partitions: &[TopicPartition],
) -> Result<BTreeMap<TopicPartition, Result<(), ErrorCode>>, OffsetsError> {
    on_coordinator(cluster, group, |conn| async move {
        let version = conn.versions().version_for::<OffsetDeleteRequest>()?;
        let resp = conn
            .send(&offset_delete_request(group, partitions), version)
            .await?;
        offset_delete_answer(version, resp)
    })
    .await
}

fn offset_delete_request(group: &str, partitions: &[TopicPartition]) -> OffsetDeleteRequest {
    let mut by_topic: BTreeMap<&str, Vec<OffsetDeleteRequestPartition>> = BTreeMap::new();
    for tp in partitions {
        by_topic
            .entry(&tp.topic)
            .or_default()
            .push(OffsetDeleteRequestPartition {
                partition_index: tp.partition,
            });
    }
    OffsetDeleteRequest {
        group_id: group.to_string(),
        topics: by_topic
            .into_iter()
            .map(|(name, partitions)| OffsetDeleteRequestTopic {
                name: name.to_string(),
                partitions,
            })
            .collect(),
    }
}

fn offset_delete_answer(
    version: i16,
    resp: OffsetDeleteResponse,
) -> Result<BTreeMap<TopicPartition, Result<(), ErrorCode>>, RequestError> {
    let error = ErrorCode::from(resp.error_code);
    if !error.is_ok() {
        return Err(RequestError::Broker {
            api: ApiKey::OffsetDelete,
            version,
            error,
            message: None,
        });
    }
    Ok(resp
        .topics
        .into_iter()
        .flat_map(|t| {
            let topic: std::sync::Arc<str> = t.name.into();
            t.partitions.into_iter().map(move |p| {
                let e = ErrorCode::from(p.error_code);
                (
                    TopicPartition::new(topic.clone(), p.partition_index),
                    if e.is_ok() { Ok(()) } else { Err(e) },
                )
            })
        })
        .collect())
}

/// Where to move each offset (the spec options of `kafka-consumer-groups.sh
/// --reset-offsets`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResetSpec {
    /// `--to-earliest`: the log start offset.
    ToEarliest,
    /// `--to-latest`: the high watermark.
    ToLatest,
    /// `--to-offset`: this offset, clamped to [log start, high watermark].
    ToOffset(i64),
    /// `--shift-by`: the committed offset plus this (negative: back),
    /// clamped to [log start, high watermark]; a partition without a
    /// committed offset is an error.
    ShiftBy(i64),
    /// `--to-datetime`: the first offset whose record is at or after this
    /// time (milliseconds since the epoch; [`parse_datetime`]); the high
    /// watermark when every record is older.
    ToDatetime(i64),
    /// `--by-duration`: as `ToDatetime` at this long before now
    /// ([`parse_iso_duration`]).
    ByDuration(Duration),
}

/// Which partitions to reset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResetScope {
    /// `--all-topics`: every partition the group has a committed offset for.
    AllTopics,
    /// `--topic` (repeatable): each topic, with chosen partitions
    /// (`topic:0,1`) or all of them (`topic`).
    Topics(Vec<(String, Option<Vec<i32>>)>),
}

impl ResetScope {
    /// Parses `--topic` values: `orders` (every partition) or
    /// `orders:0,2` (partitions 0 and 2).
    ///
    /// ```
    /// use kafka_admin::ResetScope;
    /// let s = ResetScope::parse_topics(&["orders:0,2", "audit"]).unwrap();
    /// assert_eq!(s, ResetScope::Topics(vec![("orders".into(), Some(vec![0, 2])), ("audit".into(), None)]));
    /// ```
    pub fn parse_topics<S: AsRef<str>>(values: &[S]) -> Result<Self, OffsetsError> {
        let mut out = Vec::new();
        for v in values {
            let v = v.as_ref();
            let (topic, parts) = match v.split_once(':') {
                None => (v, None),
                Some((t, ps)) => {
                    let parts = ps
                        .split(',')
                        .map(|p| p.trim().parse::<i32>().ok().filter(|p| *p >= 0))
                        .collect::<Option<Vec<i32>>>()
                        .ok_or_else(|| {
                            OffsetsError::InvalidSpec(format!(
                                "--topic {v}: write topic:partition,partition with partitions as numbers 0 or more"
                            ))
                        })?;
                    (t, Some(parts))
                }
            };
            if topic.is_empty() {
                return Err(OffsetsError::InvalidSpec(format!(
                    "--topic {v}: the topic name is empty"
                )));
            }
            out.push((topic.to_string(), parts));
        }
        Ok(ResetScope::Topics(out))
    }
}

/// One partition of a reset plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedOffset {
    /// The partition.
    pub partition: TopicPartition,
    /// The group's committed offset now, if any.
    pub current: Option<i64>,
    /// The offset the reset commits.
    pub new_offset: i64,
}

/// What a reset would commit (the tool's dry run), partition by partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResetPlan {
    /// The group.
    pub group: String,
    /// One row per partition, sorted.
    pub offsets: Vec<PlannedOffset>,
}

/// Plans a reset of `group`'s offsets (a dry run: nothing is committed).
/// Refused with [`OffsetsError::GroupNotEmpty`] while the group has
/// members, as the tool refuses.
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), kafka_admin::OffsetsError> {
/// use kafka_admin::{ResetScope, ResetSpec};
/// let scope = ResetScope::parse_topics(&["orders"])?;
/// let plan = kafka_admin::plan_offset_reset(cluster, "billing", &scope, ResetSpec::ShiftBy(-100)).await?;
/// for row in &plan.offsets {
///     println!("{} {:?} -> {}", row.partition, row.current, row.new_offset);
/// }
/// kafka_admin::execute_offset_reset(cluster, &plan).await?;
/// # Ok(()) }
/// ```
pub async fn plan_offset_reset(
    cluster: &Cluster,
    group: &str,
    scope: &ResetScope,
    spec: ResetSpec,
) -> Result<ResetPlan, OffsetsError> {
    refuse_if_active(cluster, group).await?;
    let current = committed_offsets(cluster, group).await?;
    let partitions = scope_partitions(cluster, scope, &current).await?;
    if partitions.is_empty() {
        return Err(OffsetsError::InvalidSpec(format!(
            "group {group} has no committed offsets to reset: name the topics with --topic"
        )));
    }
    let earliest = list_offsets(cluster, &partitions, OffsetSpec::Earliest, false).await?;
    let latest = list_offsets(cluster, &partitions, OffsetSpec::Latest, false).await?;
    let at_time = match spec {
        ResetSpec::ToDatetime(t) => {
            Some(list_offsets(cluster, &partitions, OffsetSpec::Timestamp(t), false).await?)
        }
        ResetSpec::ByDuration(d) => {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default();
            let t = i64::try_from(now.saturating_sub(d).as_millis()).unwrap_or(i64::MAX);
            Some(list_offsets(cluster, &partitions, OffsetSpec::Timestamp(t), false).await?)
        }
        _ => None,
    };
    let offsets = plan_rows(
        &partitions,
        spec,
        &current,
        &earliest,
        &latest,
        at_time.as_ref(),
    )?;
    Ok(ResetPlan {
        group: group.to_string(),
        offsets,
    })
}

/// Commits a plan made by [`plan_offset_reset`] (the tool's `--execute`),
/// refused if the group gained members meanwhile.
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster, plan: &kafka_admin::ResetPlan) -> Result<(), kafka_admin::OffsetsError> {
/// kafka_admin::execute_offset_reset(cluster, plan).await?;
/// # Ok(()) }
/// ```
pub async fn execute_offset_reset(cluster: &Cluster, plan: &ResetPlan) -> Result<(), OffsetsError> {
    let offsets = plan
        .offsets
        .iter()
        .map(|r| (r.partition.clone(), r.new_offset))
        .collect();
    alter_group_offsets(cluster, &plan.group, &offsets).await
}

/// The partitions `scope` names: the committed ones, or each topic's chosen
/// (or every) partition from the metadata.
async fn scope_partitions(
    cluster: &Cluster,
    scope: &ResetScope,
    current: &BTreeMap<TopicPartition, i64>,
) -> Result<Vec<TopicPartition>, OffsetsError> {
    let ResetScope::Topics(topics) = scope else {
        return Ok(current.keys().cloned().collect());
    };
    let names: Vec<&str> = topics.iter().map(|(t, _)| t.as_str()).collect();
    cluster
        .refresh_topics(&names)
        .await
        .map_err(RequestError::from)?;
    let md = cluster.metadata();
    let mut out = Vec::new();
    for (topic, parts) in topics {
        let Some(t) = md.topic(topic) else {
            return Err(OffsetsError::UnknownTopic(topic.clone()));
        };
        let name: std::sync::Arc<str> = topic.as_str().into();
        match parts {
            None => out.extend(
                t.partitions
                    .keys()
                    .map(|p| TopicPartition::new(name.clone(), *p)),
            ),
            Some(ps) => {
                for p in ps {
                    let tp = TopicPartition::new(name.clone(), *p);
                    if !t.partitions.contains_key(p) {
                        return Err(OffsetsError::UnknownPartition(tp));
                    }
                    out.push(tp);
                }
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// The new offset of each partition, clamped to [log start, high
/// watermark] as Java's `checkOffsetsRange` does.
fn plan_rows(
    partitions: &[TopicPartition],
    spec: ResetSpec,
    current: &BTreeMap<TopicPartition, i64>,
    earliest: &BTreeMap<TopicPartition, ListedOffset>,
    latest: &BTreeMap<TopicPartition, ListedOffset>,
    at_time: Option<&BTreeMap<TopicPartition, ListedOffset>>,
) -> Result<Vec<PlannedOffset>, OffsetsError> {
    let mut out = Vec::new();
    for tp in partitions {
        let start = earliest.get(tp).and_then(|l| l.offset).unwrap_or(0);
        let end = latest
            .get(tp)
            .and_then(|l| l.offset)
            .unwrap_or(start)
            .max(start);
        let cur = current.get(tp).copied();
        let new_offset = match spec {
            ResetSpec::ToEarliest => start,
            ResetSpec::ToLatest => end,
            ResetSpec::ToOffset(o) => o.clamp(start, end),
            ResetSpec::ShiftBy(n) => {
                let Some(c) = cur else {
                    return Err(OffsetsError::InvalidSpec(format!(
                        "cannot shift the offset of {tp}: the group has no committed offset for it (reset it --to-earliest, --to-latest or --to-offset first)"
                    )));
                };
                c.saturating_add(n).clamp(start, end)
            }
            ResetSpec::ToDatetime(_) | ResetSpec::ByDuration(_) => at_time
                .and_then(|m| m.get(tp))
                .and_then(|l| l.offset)
                .unwrap_or(end)
                .clamp(start, end),
        };
        out.push(PlannedOffset {
            partition: tp.clone(),
            current: cur,
            new_offset,
        });
    }
    Ok(out)
}

/// Parses a date and time as the tool's `--to-datetime` takes it,
/// `YYYY-MM-DDTHH:mm:SS[.sss][Z|±HH:mm|±HHmm]`, into milliseconds since the
/// epoch. Without a zone the time is UTC (Java takes the JVM's zone).
///
/// ```
/// assert_eq!(kafka_admin::parse_datetime("1970-01-02T00:00:00.500Z").unwrap(), 86_400_500);
/// assert_eq!(kafka_admin::parse_datetime("1970-01-01T01:00:00+01:00").unwrap(), 0);
/// ```
pub fn parse_datetime(s: &str) -> Result<i64, OffsetsError> {
    let bad = || {
        OffsetsError::InvalidSpec(format!(
            "--to-datetime {s}: write YYYY-MM-DDTHH:mm:SS[.sss] with an optional Z or ±HH:mm zone"
        ))
    };
    let (date, time) = s.split_once('T').ok_or_else(bad)?;
    let mut d = date.split('-');
    let (Some(y), Some(mo), Some(da), None) = (d.next(), d.next(), d.next(), d.next()) else {
        return Err(bad());
    };
    let num = |x: &str, max: i64| -> Result<i64, OffsetsError> {
        (!x.is_empty() && x.bytes().all(|b| b.is_ascii_digit()))
            .then(|| x.parse::<i64>().ok())
            .flatten()
            .filter(|v| *v <= max)
            .ok_or_else(bad)
    };
    let (y, mo, da) = (num(y, 9999)?, num(mo, 12)?, num(da, 31)?);
    if mo == 0 || da == 0 {
        return Err(bad());
    }
    // The zone: Z, or a sign after the seconds.
    let (clock, offset_min) = if let Some(c) = time.strip_suffix('Z') {
        (c, 0)
    } else if let Some(i) = time.rfind(['+', '-']) {
        let (c, z) = time.split_at(i);
        let sign = if z.starts_with('-') { -1 } else { 1 };
        let z = z[1..].replace(':', "");
        if z.len() != 4 {
            return Err(bad());
        }
        (c, sign * (num(&z[..2], 23)? * 60 + num(&z[2..], 59)?))
    } else {
        (time, 0)
    };
    let (hms, millis) = match clock.split_once('.') {
        None => (clock, 0),
        Some((hms, frac)) => {
            let digits: String = frac.chars().take(3).collect();
            let scale = 10i64.pow(3 - u32::try_from(digits.len()).unwrap_or(3));
            (hms, num(&digits, 999)? * scale)
        }
    };
    let mut t = hms.split(':');
    let (Some(h), Some(mi), Some(se), None) = (t.next(), t.next(), t.next(), t.next()) else {
        return Err(bad());
    };
    let (h, mi, se) = (num(h, 23)?, num(mi, 59)?, num(se, 59)?);
    let days = days_from_civil(y, mo, da);
    Ok((((days * 24 + h) * 60 + mi - offset_min) * 60 + se) * 1000 + millis)
}

/// Days from 1970-01-01 to the proleptic Gregorian date (Howard Hinnant's
/// algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Parses an ISO-8601 duration as the tool's `--by-duration` takes it
/// (`PnDTnHnMn.nS`, e.g. `PT30M`, `P1DT12H`).
///
/// ```
/// use std::time::Duration;
/// assert_eq!(kafka_admin::parse_iso_duration("P1DT2H3M4.5S").unwrap(), Duration::from_millis(93_784_500));
/// assert_eq!(kafka_admin::parse_iso_duration("PT15M").unwrap(), Duration::from_secs(900));
/// ```
pub fn parse_iso_duration(s: &str) -> Result<Duration, OffsetsError> {
    let bad = || {
        OffsetsError::InvalidSpec(format!(
            "--by-duration {s}: write an ISO-8601 duration such as PT30M, PT1H or P1DT12H"
        ))
    };
    let rest = s
        .strip_prefix('P')
        .or_else(|| s.strip_prefix('p'))
        .ok_or_else(bad)?;
    let (date, time) = match rest.split_once(['T', 't']) {
        Some((d, t)) => (d, Some(t)),
        None => (rest, None),
    };
    let mut millis: f64 = 0.0;
    let mut any = false;
    let mut take = |part: &str, units: &[(char, f64)]| -> Result<(), OffsetsError> {
        let mut num = String::new();
        let mut allowed = units.iter();
        for c in part.chars() {
            if c.is_ascii_digit() || c == '.' {
                num.push(c);
                continue;
            }
            let c = c.to_ascii_uppercase();
            let (_, scale) = allowed.by_ref().find(|(u, _)| *u == c).ok_or_else(bad)?;
            let v: f64 = num.parse().map_err(|_| bad())?;
            millis += v * scale;
            num.clear();
            any = true;
        }
        if num.is_empty() { Ok(()) } else { Err(bad()) }
    };
    take(date, &[('D', 86_400_000.0)])?;
    if let Some(t) = time {
        if t.is_empty() {
            return Err(bad());
        }
        take(t, &[('H', 3_600_000.0), ('M', 60_000.0), ('S', 1000.0)])?;
    }
    if !any || !millis.is_finite() {
        return Err(bad());
    }
    Ok(Duration::from_millis(millis.round() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_proto::messages::{
        OffsetCommitResponsePartition, OffsetCommitResponseTopic, OffsetDeleteResponsePartition,
        OffsetDeleteResponseTopic,
    };

    fn tp(t: &str, p: i32) -> TopicPartition {
        TopicPartition::new(t, p)
    }

    fn listed(m: &[(TopicPartition, Option<i64>)]) -> BTreeMap<TopicPartition, ListedOffset> {
        m.iter()
            .map(|(t, o)| {
                (
                    t.clone(),
                    ListedOffset {
                        offset: *o,
                        timestamp: None,
                        leader_epoch: None,
                    },
                )
            })
            .collect()
    }

    /// Every spec lands inside [log start, high watermark]: to-offset and
    /// shift-by are clamped, a timestamp after every record goes to the
    /// end, shift-by needs a committed offset.
    #[test]
    fn reset_rows_are_clamped_to_the_log() {
        let parts = [tp("a", 0), tp("a", 1)];
        let earliest = listed(&[(tp("a", 0), Some(10)), (tp("a", 1), Some(0))]);
        let latest = listed(&[(tp("a", 0), Some(50)), (tp("a", 1), Some(5))]);
        let current: BTreeMap<_, _> = [(tp("a", 0), 20), (tp("a", 1), 4)].into_iter().collect();
        let rows = |spec, at: Option<&BTreeMap<_, _>>| {
            plan_rows(&parts, spec, &current, &earliest, &latest, at)
                .unwrap()
                .iter()
                .map(|r| r.new_offset)
                .collect::<Vec<_>>()
        };
        assert_eq!(rows(ResetSpec::ToEarliest, None), [10, 0]);
        assert_eq!(rows(ResetSpec::ToLatest, None), [50, 5]);
        assert_eq!(rows(ResetSpec::ToOffset(3), None), [10, 3]);
        assert_eq!(rows(ResetSpec::ToOffset(99), None), [50, 5]);
        assert_eq!(rows(ResetSpec::ShiftBy(-15), None), [10, 0]);
        assert_eq!(rows(ResetSpec::ShiftBy(2), None), [22, 5]);
        let at = listed(&[(tp("a", 0), Some(30)), (tp("a", 1), None)]);
        assert_eq!(rows(ResetSpec::ToDatetime(0), Some(&at)), [30, 5]);
        let rows = plan_rows(
            &parts,
            ResetSpec::ToEarliest,
            &current,
            &earliest,
            &latest,
            None,
        )
        .unwrap();
        assert_eq!(rows[0].current, Some(20));

        let no_commit = BTreeMap::new();
        let e = plan_rows(
            &parts,
            ResetSpec::ShiftBy(1),
            &no_commit,
            &earliest,
            &latest,
            None,
        )
        .unwrap_err();
        assert!(
            matches!(e, OffsetsError::InvalidSpec(ref m) if m.contains("a-0")),
            "{e}"
        );
    }

    /// `--topic` values: a topic, or a topic with a partition list.
    #[test]
    fn topic_scopes_parse_and_refuse_bad_partitions() {
        assert_eq!(
            ResetScope::parse_topics(&["t:1, 2"]).unwrap(),
            ResetScope::Topics(vec![("t".into(), Some(vec![1, 2]))])
        );
        assert!(ResetScope::parse_topics(&["t:x"]).is_err());
        assert!(ResetScope::parse_topics(&["t:-1"]).is_err());
        assert!(ResetScope::parse_topics(&[":1"]).is_err());
    }

    /// Dates as the tool writes them, with and without zone and millis.
    #[test]
    fn datetimes_parse_with_zones_and_fractions() {
        assert_eq!(parse_datetime("1970-01-01T00:00:00").unwrap(), 0);
        assert_eq!(
            parse_datetime("2024-02-29T12:30:15.250Z").unwrap(),
            1_709_209_815_250
        );
        assert_eq!(
            parse_datetime("2024-02-29T13:30:15.25+0100").unwrap(),
            1_709_209_815_250
        );
        assert_eq!(
            parse_datetime("2024-02-29T07:30:15.250-05:00").unwrap(),
            1_709_209_815_250
        );
        for bad in [
            "2024-02-29",
            "2024-13-01T00:00:00",
            "x",
            "2024-01-01T25:00:00",
            "2024-01-01T00:00:00+1",
        ] {
            assert!(parse_datetime(bad).is_err(), "{bad}");
        }
    }

    /// ISO-8601 durations; anything else is refused.
    #[test]
    fn iso_durations_parse() {
        assert_eq!(
            parse_iso_duration("PT1H").unwrap(),
            Duration::from_secs(3600)
        );
        assert_eq!(
            parse_iso_duration("P2D").unwrap(),
            Duration::from_secs(172_800)
        );
        assert_eq!(
            parse_iso_duration("PT0.5S").unwrap(),
            Duration::from_millis(500)
        );
        for bad in ["", "P", "PT", "1H", "PT1X", "PT1", "P1H"] {
            assert!(parse_iso_duration(bad).is_err(), "{bad}");
        }
    }

    /// A simple commit: generation -1, no member, one topic entry per topic.
    #[test]
    fn simple_commit_request() {
        let offsets: BTreeMap<_, _> = [(tp("a", 0), 5), (tp("a", 1), 6), (tp("b", 0), 7)]
            .into_iter()
            .collect();
        let r = offset_commit_request("g", &offsets);
        assert_eq!(r.generation_id_or_member_epoch, -1);
        assert_eq!(r.member_id, "");
        assert_eq!(r.topics.len(), 2);
        assert_eq!(r.topics[0].partitions[1].committed_offset, 6);
    }

    /// Coordinator errors are retriable request errors; a member error is
    /// the refused partition.
    #[test]
    fn commit_answers_split_coordinator_and_partition_errors() {
        let resp = |e: ErrorCode| OffsetCommitResponse {
            topics: vec![OffsetCommitResponseTopic {
                name: "a".into(),
                partitions: vec![OffsetCommitResponsePartition {
                    partition_index: 0,
                    error_code: e.code(),
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        assert!(matches!(
            commit_answer(9, resp(ErrorCode::None)),
            Ok(Ok(()))
        ));
        let e = commit_answer(9, resp(ErrorCode::NotCoordinator)).unwrap_err();
        assert!(e.is_retriable());
        assert_eq!(
            commit_answer(9, resp(ErrorCode::UnknownMemberId)).unwrap(),
            Err((tp("a", 0), ErrorCode::UnknownMemberId))
        );
    }

    /// OffsetDelete: a group error fails the call, partition errors are
    /// per partition.
    #[test]
    fn offset_delete_answers() {
        let req = offset_delete_request("g", &[tp("a", 1), tp("a", 0)]);
        assert_eq!(req.topics[0].partitions.len(), 2);
        let resp = OffsetDeleteResponse {
            topics: vec![OffsetDeleteResponseTopic {
                name: "a".into(),
                partitions: vec![
                    OffsetDeleteResponsePartition {
                        partition_index: 0,
                        error_code: 0,
                    },
                    OffsetDeleteResponsePartition {
                        partition_index: 1,
                        error_code: ErrorCode::GroupSubscribedToTopic.code(),
                    },
                ],
            }],
            ..Default::default()
        };
        let a = offset_delete_answer(0, resp).unwrap();
        assert_eq!(a[&tp("a", 0)], Ok(()));
        assert_eq!(a[&tp("a", 1)], Err(ErrorCode::GroupSubscribedToTopic));
        let missing = OffsetDeleteResponse {
            error_code: ErrorCode::GroupIdNotFound.code(),
            ..Default::default()
        };
        let e = offset_delete_answer(0, missing).unwrap_err();
        assert_eq!(e.error_code(), Some(ErrorCode::GroupIdNotFound));
    }
}
