//! OffsetFetch: a group's committed offsets (every committed partition
//! when the topics are null). With `require_stable` (v7+), a partition
//! with transactional offsets pending gets UNSTABLE_OFFSET_COMMIT (KIP-447).
//! v8+ asks for several groups at once.

use super::{Call, Handle, Reply};
use crate::state::{ClusterState, CoordinatorKind};
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

/// One partition's committed offset: (offset, leader epoch, metadata, error).
fn lookup(
    state: &ClusterState,
    group: &str,
    topic: &str,
    p: i32,
    stable: bool,
) -> (i64, i32, Option<String>, ErrorCode) {
    let tp = (topic.to_string(), p);
    if stable && state.groups.is_unstable(group, &tp) {
        return (-1, -1, Some(String::new()), ErrorCode::UnstableOffsetCommit);
    }
    match state.groups.fetch(group, &tp) {
        Some(o) => (
            o.offset,
            o.leader_epoch,
            o.metadata.clone(),
            ErrorCode::None,
        ),
        None => (-1, -1, Some(String::new()), ErrorCode::None),
    }
}

/// The partitions asked for, or every committed one.
fn wanted(
    state: &ClusterState,
    group: &str,
    topics: Option<Vec<(String, Vec<i32>)>>,
) -> Vec<(String, Vec<i32>)> {
    match topics {
        Some(t) => t,
        None => {
            let mut by_topic: std::collections::BTreeMap<String, Vec<i32>> = Default::default();
            for ((t, p), _) in state.groups.committed(group) {
                by_topic.entry(t).or_default().push(p);
            }
            by_topic.into_iter().collect()
        }
    }
}

/// v9+: a KIP-848 member names itself and its epoch
/// (`ConsumerGroup.validateOffsetFetch`): UNKNOWN_MEMBER_ID or
/// STALE_MEMBER_EPOCH when they do not match the group.
fn check_member(state: &ClusterState, g: &OffsetFetchRequestGroup) -> Result<(), ErrorCode> {
    let Some(member_id) = g.member_id.as_deref() else {
        return Ok(());
    };
    if g.member_epoch < 0 {
        return Ok(());
    }
    match state.consumer.get(&g.group_id) {
        None => Ok(()),
        Some(group) => match group.members.get(member_id) {
            None => Err(ErrorCode::UnknownMemberId),
            Some(m) if m.epoch != g.member_epoch => Err(ErrorCode::StaleMemberEpoch),
            Some(_) => Ok(()),
        },
    }
}

/// The topics and partitions a v0-7 request asks for (`None`: every
/// committed one).
fn asked_up_to_v7(req: &OffsetFetchRequest) -> Option<Vec<(String, Vec<i32>)>> {
    req.topics.as_ref().map(|ts| {
        ts.iter()
            .map(|t| (t.name.clone(), t.partition_indexes.clone()))
            .collect()
    })
}

/// A v0-7 response's topics: each partition of `topics` answered by
/// `answer` (given the topic's name).
fn topics_up_to_v7(
    topics: Vec<(String, Vec<i32>)>,
    mut answer: impl FnMut(&str, i32) -> OffsetFetchResponsePartition,
) -> Vec<OffsetFetchResponseTopic> {
    topics
        .into_iter()
        .map(|(name, parts)| OffsetFetchResponseTopic {
            partitions: parts.iter().map(|p| answer(&name, *p)).collect(),
            name,
            ..Default::default()
        })
        .collect()
}

/// A group of a v8+ request answered with `code` alone.
fn failed_group(group_id: &str, code: ErrorCode) -> OffsetFetchResponseGroup {
    OffsetFetchResponseGroup {
        group_id: group_id.to_string(),
        error_code: code.code(),
        ..Default::default()
    }
}

impl Handle for OffsetFetchRequest {
    type Response = OffsetFetchResponse;

    fn handle(&self, state: &mut ClusterState, call: &Call) -> Reply<Self::Response> {
        let stable = call.version >= 7 && self.require_stable;
        if call.version <= 7 {
            if let Err(code) =
                state.check_coordinator(&call.ctx, CoordinatorKind::Group, &self.group_id)
            {
                return Reply::Now(self.error(state, call, code));
            }
            let partitions = wanted(state, &self.group_id, asked_up_to_v7(self));
            let topics = topics_up_to_v7(partitions, |name, p| {
                let (offset, epoch, metadata, code) =
                    lookup(state, &self.group_id, name, p, stable);
                OffsetFetchResponsePartition {
                    partition_index: p,
                    committed_offset: offset,
                    committed_leader_epoch: if call.version >= 5 { epoch } else { -1 },
                    metadata,
                    error_code: code.code(),
                    ..Default::default()
                }
            });
            return Reply::Now(OffsetFetchResponse {
                topics,
                ..Default::default()
            });
        }
        let groups = self
            .groups
            .iter()
            .map(|g| {
                let checked = state
                    .check_coordinator(&call.ctx, CoordinatorKind::Group, &g.group_id)
                    .and_then(|()| check_member(state, g));
                if let Err(code) = checked {
                    return failed_group(&g.group_id, code);
                }
                let asked = g.topics.as_ref().map(|ts| {
                    ts.iter()
                        .map(|t| {
                            let name = state
                                .request_topic(call.version >= 10, &t.name, &t.topic_id)
                                .unwrap_or_default();
                            (name, t.partition_indexes.clone())
                        })
                        .collect()
                });
                let topics = wanted(state, &g.group_id, asked)
                    .into_iter()
                    .map(|(name, parts)| OffsetFetchResponseTopics {
                        topic_id: if call.version >= 10 {
                            state.topics.get(&name).map(|t| t.id).unwrap_or_default()
                        } else {
                            [0; 16]
                        },
                        partitions: parts
                            .iter()
                            .map(|p| {
                                let (offset, epoch, metadata, code) =
                                    lookup(state, &g.group_id, &name, *p, stable);
                                OffsetFetchResponsePartitions {
                                    partition_index: *p,
                                    committed_offset: offset,
                                    committed_leader_epoch: epoch,
                                    metadata,
                                    error_code: code.code(),
                                    ..Default::default()
                                }
                            })
                            .collect(),
                        name: if call.version >= 10 {
                            String::new()
                        } else {
                            name
                        },
                        ..Default::default()
                    })
                    .collect();
                OffsetFetchResponseGroup {
                    group_id: g.group_id.clone(),
                    topics,
                    ..Default::default()
                }
            })
            .collect();
        Reply::Now(OffsetFetchResponse {
            groups,
            ..Default::default()
        })
    }

    fn error(&self, _state: &ClusterState, call: &Call, code: ErrorCode) -> Self::Response {
        if call.version <= 7 {
            return OffsetFetchResponse {
                error_code: if call.version >= 2 { code.code() } else { 0 },
                topics: topics_up_to_v7(asked_up_to_v7(self).unwrap_or_default(), |_, p| {
                    OffsetFetchResponsePartition {
                        partition_index: p,
                        committed_offset: -1,
                        error_code: code.code(),
                        ..Default::default()
                    }
                }),
                ..Default::default()
            };
        }
        OffsetFetchResponse {
            groups: self
                .groups
                .iter()
                .map(|g| failed_group(&g.group_id, code))
                .collect(),
            ..Default::default()
        }
    }
}
