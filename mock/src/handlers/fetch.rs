//! Fetch: batches as they were written, from the batch holding the fetch
//! offset, up to the partition's and the request's byte limits (the first
//! batch whole even when larger), below the high watermark — or below the
//! last stable offset for read_committed, with the aborted transactions
//! overlapping what is returned. With no data and `max_wait_ms` left, the
//! request waits (long poll) until a write or the deadline.
//!
//! Fetch sessions (KIP-227, v7+; see `state::fetch_sessions`), by the
//! request's session epoch:
//! - 0 opens a session with the request's partitions;
//! - a later epoch names the changed and forgotten partitions, and is
//!   answered with the partitions that have news;
//! - -1 closes the session named (a sessionless request).
//!
//! An unknown session gets FETCH_SESSION_ID_NOT_FOUND, a wrong epoch
//! INVALID_FETCH_SESSION_EPOCH.

use super::{Call, Handle, Reply, response_topic};
use crate::state::fetch_sessions::{CachedPartition, FetchSession, SessionKey};
use crate::state::{ClusterState, Ctx};
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;
use kafka_proto::primitives::Uuid;

fn partition_error(index: i32, code: ErrorCode) -> FetchResponsePartitionData {
    FetchResponsePartitionData {
        partition_index: index,
        error_code: code.code(),
        high_watermark: -1,
        last_stable_offset: -1,
        log_start_offset: -1,
        aborted_transactions: None,
        records: None,
        ..Default::default()
    }
}

/// One partition to read: from the request, or from the session.
#[derive(Debug, Clone)]
struct Item {
    /// The topic's name, when known.
    name: Option<String>,
    /// The topic as the request names it (by name before v13).
    wire_topic: String,
    topic_id: Uuid,
    partition: i32,
    fetch_offset: i64,
    leader_epoch: i32,
    /// The epoch of the last record the client read (KIP-320, v12+), -1
    /// when not given.
    last_fetched_epoch: i32,
    max_bytes: i32,
}

impl Item {
    /// What a fetch session caches for this item, before any answer.
    fn cached(&self) -> CachedPartition {
        CachedPartition {
            topic_id: self.topic_id,
            fetch_offset: self.fetch_offset,
            leader_epoch: self.leader_epoch,
            max_bytes: self.max_bytes,
            high_watermark: -1,
            last_stable_offset: -1,
            log_start_offset: -1,
        }
    }

    fn key(&self) -> SessionKey {
        let topic = self
            .name
            .clone()
            .unwrap_or_else(|| format!("{:?}", self.topic_id));
        (topic, self.partition)
    }
}

/// How the request relates to a fetch session.
enum Mode {
    /// No session; `close` names one to close (epoch -1).
    Sessionless { close: i32 },
    /// Epoch 0: a new session, replacing `close` if not 0.
    Full { close: i32 },
    /// A later epoch of session `id`, with the request applied.
    Incremental { id: i32, session: FetchSession },
}

fn request_items(state: &ClusterState, req: &FetchRequest, version: i16) -> Vec<Item> {
    let mut items = Vec::new();
    for t in &req.topics {
        let name = state.request_topic(version >= 13, &t.topic, &t.topic_id);
        for p in &t.partitions {
            items.push(Item {
                name: name.clone(),
                wire_topic: t.topic.clone(),
                topic_id: t.topic_id,
                partition: p.partition,
                fetch_offset: p.fetch_offset,
                leader_epoch: p.current_leader_epoch,
                last_fetched_epoch: if version >= 12 {
                    p.last_fetched_epoch
                } else {
                    -1
                },
                max_bytes: p.partition_max_bytes,
            });
        }
    }
    items
}

fn mode(
    state: &ClusterState,
    ctx: &Ctx,
    req: &FetchRequest,
    version: i16,
) -> Result<Mode, ErrorCode> {
    if version < 7 || req.session_epoch == -1 {
        return Ok(Mode::Sessionless {
            close: if version >= 7 { req.session_id } else { 0 },
        });
    }
    if req.session_epoch == 0 {
        return Ok(Mode::Full {
            close: req.session_id,
        });
    }
    let Some(session) = state.fetch_sessions.get(ctx.broker, req.session_id) else {
        return Err(ErrorCode::FetchSessionIdNotFound);
    };
    if session.next_epoch != req.session_epoch {
        return Err(ErrorCode::InvalidFetchSessionEpoch);
    }
    let mut session = session.clone();
    for item in request_items(state, req, version) {
        let key = item.key();
        let cached = item.cached();
        match session.partitions.iter_mut().find(|(k, _)| *k == key) {
            Some((_, c)) => {
                c.fetch_offset = cached.fetch_offset;
                c.leader_epoch = cached.leader_epoch;
                c.max_bytes = cached.max_bytes;
            }
            None => session.partitions.push((key, cached)),
        }
    }
    for f in &req.forgotten_topics_data {
        let name = if version >= 13 {
            state
                .topic_ids
                .get(&f.topic_id)
                .cloned()
                .unwrap_or_else(|| format!("{:?}", f.topic_id))
        } else {
            f.topic.clone()
        };
        session
            .partitions
            .retain(|((t, p), _)| !(*t == name && f.partitions.contains(p)));
    }
    Ok(Mode::Incremental {
        id: req.session_id,
        session,
    })
}

impl Handle for FetchRequest {
    type Response = FetchResponse;

    fn handle(&self, state: &mut ClusterState, call: &Call) -> Reply<Self::Response> {
        let mode = match mode(state, &call.ctx, self, call.version) {
            Ok(m) => m,
            Err(code) => {
                return Reply::Now(FetchResponse {
                    error_code: code.code(),
                    ..Default::default()
                });
            }
        };
        let items: Vec<Item> = match &mode {
            Mode::Incremental { session, .. } => {
                // The epochs the request gives for the partitions it names.
                let given: Vec<(SessionKey, i32)> = request_items(state, self, call.version)
                    .into_iter()
                    .map(|i| (i.key(), i.last_fetched_epoch))
                    .collect();
                session
                    .partitions
                    .iter()
                    .map(|((topic, p), c)| Item {
                        // By id when the client named one (v13+): a topic deleted
                        // (or deleted and created again) is unknown, not re-read.
                        name: if c.topic_id != [0; 16] {
                            state.topic_ids.get(&c.topic_id).cloned()
                        } else {
                            state.topics.contains_key(topic).then(|| topic.clone())
                        },
                        wire_topic: topic.clone(),
                        topic_id: c.topic_id,
                        partition: *p,
                        fetch_offset: c.fetch_offset,
                        leader_epoch: c.leader_epoch,
                        last_fetched_epoch: given
                            .iter()
                            .find(|(k, _)| k.0 == *topic && k.1 == *p)
                            .map_or(-1, |(_, e)| *e),
                        max_bytes: c.max_bytes,
                    })
                    .collect()
            }
            _ => request_items(state, self, call.version),
        };
        let read_committed = self.isolation_level == 1;
        let mut budget = usize::try_from(self.max_bytes.max(0)).unwrap_or(0);
        let mut total = 0usize;
        let mut errors = false;
        let mut answers: Vec<(Item, FetchResponsePartitionData)> = Vec::with_capacity(items.len());
        for item in items {
            let data = read_partition(
                state,
                &call.ctx,
                &item,
                call.version,
                read_committed,
                &mut budget,
            );
            if data.error_code != 0 {
                errors = true;
            }
            total += data.records.as_ref().map_or(0, |r| r.len());
            answers.push((item, data));
        }
        if let Mode::Incremental { session, .. } = &mode {
            // Only the partitions with news.
            answers.retain(|(item, d)| {
                let cached = session.partitions.iter().find(|(k, _)| *k == item.key());
                d.error_code != 0
                    || d.records.as_ref().is_some_and(|r| !r.is_empty())
                    || cached.is_none_or(|(_, c)| {
                        c.high_watermark != d.high_watermark
                            || c.last_stable_offset != d.last_stable_offset
                            || c.log_start_offset != d.log_start_offset
                    })
            });
        }
        let wanted = usize::try_from(self.min_bytes.max(1)).unwrap_or(1);
        if !call.final_attempt && !errors && total < wanted && self.max_wait_ms > 0 {
            return Reply::Park {
                until_ms: call.ctx.now_ms + i64::from(self.max_wait_ms),
            };
        }
        let session_id = commit_session(state, &call.ctx, mode, &answers);
        let mut responses: Vec<FetchResponseTopic> = Vec::new();
        for (item, data) in answers {
            let (topic, topic_id) =
                response_topic(call.version >= 13, &item.wire_topic, &item.topic_id);
            match responses
                .last_mut()
                .filter(|r| r.topic == topic && r.topic_id == topic_id)
            {
                Some(r) => r.partitions.push(data),
                None => responses.push(FetchResponseTopic {
                    topic,
                    topic_id,
                    partitions: vec![data],
                    ..Default::default()
                }),
            }
        }
        Reply::Now(FetchResponse {
            session_id,
            responses,
            ..Default::default()
        })
    }

    fn error(&self, _state: &ClusterState, call: &Call, code: ErrorCode) -> Self::Response {
        FetchResponse {
            responses: self
                .topics
                .iter()
                .map(|t| {
                    let (topic, topic_id) =
                        response_topic(call.version >= 13, &t.topic, &t.topic_id);
                    FetchResponseTopic {
                        topic,
                        topic_id,
                        partitions: t
                            .partitions
                            .iter()
                            .map(|p| partition_error(p.partition, code))
                            .collect(),
                        ..Default::default()
                    }
                })
                .collect(),
            ..Default::default()
        }
    }
}

/// Stores what the answer told the client in its session (opening,
/// advancing or closing it); returns the session id to answer with.
fn commit_session(
    state: &mut ClusterState,
    ctx: &Ctx,
    mode: Mode,
    answers: &[(Item, FetchResponsePartitionData)],
) -> i32 {
    let told = |c: &mut CachedPartition, d: &FetchResponsePartitionData| {
        c.high_watermark = d.high_watermark;
        c.last_stable_offset = d.last_stable_offset;
        c.log_start_offset = d.log_start_offset;
    };
    match mode {
        Mode::Sessionless { close } => {
            if close != 0 {
                state.fetch_sessions.close(ctx.broker, close);
            }
            0
        }
        Mode::Full { close } => {
            if close != 0 {
                state.fetch_sessions.close(ctx.broker, close);
            }
            let partitions = answers
                .iter()
                .map(|(item, d)| {
                    let mut c = item.cached();
                    told(&mut c, d);
                    (item.key(), c)
                })
                .collect();
            state.fetch_sessions.put(
                ctx.broker,
                0,
                FetchSession {
                    next_epoch: 1,
                    partitions,
                    last_used_ms: ctx.now_ms,
                },
            )
        }
        Mode::Incremental { id, mut session } => {
            for (item, d) in answers {
                let key = item.key();
                if let Some((_, c)) = session.partitions.iter_mut().find(|(k, _)| *k == key) {
                    told(c, d);
                }
            }
            session.next_epoch = if session.next_epoch == i32::MAX {
                1
            } else {
                session.next_epoch + 1
            };
            session.last_used_ms = ctx.now_ms;
            state.fetch_sessions.put(ctx.broker, id, session)
        }
    }
}

/// One partition's answer, spending `budget` (the request's byte limit).
fn read_partition(
    state: &ClusterState,
    ctx: &Ctx,
    item: &Item,
    version: i16,
    read_committed: bool,
    budget: &mut usize,
) -> FetchResponsePartitionData {
    let Some(name) = &item.name else {
        return partition_error(item.partition, ErrorCode::UnknownTopicId);
    };
    let Some(log) = state.partition(name, item.partition) else {
        return partition_error(item.partition, ErrorCode::UnknownTopicOrPartition);
    };
    if log.leader != ctx.broker {
        return partition_error(item.partition, ErrorCode::NotLeaderOrFollower);
    }
    if version >= 9 && item.leader_epoch >= 0 {
        if item.leader_epoch > log.leader_epoch {
            return partition_error(item.partition, ErrorCode::UnknownLeaderEpoch);
        }
        if item.leader_epoch < log.leader_epoch {
            return partition_error(item.partition, ErrorCode::FencedLeaderEpoch);
        }
    }
    let hw = log.high_watermark();
    let log_start = if version >= 5 {
        log.log_start_offset()
    } else {
        -1
    };
    if item.last_fetched_epoch >= 0 {
        // KIP-320 (Kafka's `Partition.readRecords`): the client's last
        // epoch ends before its fetch offset here, or is unknown: its log
        // diverged; it truncates to the epoch's end before reading on.
        let (epoch, end_offset) = log.end_offset_for_epoch(item.last_fetched_epoch);
        if epoch < item.last_fetched_epoch || end_offset < item.fetch_offset {
            return FetchResponsePartitionData {
                partition_index: item.partition,
                high_watermark: hw,
                last_stable_offset: log.last_stable_offset(),
                log_start_offset: log_start,
                diverging_epoch: FetchResponseEpochEndOffset {
                    epoch,
                    end_offset,
                    ..Default::default()
                },
                records: None,
                ..Default::default()
            };
        }
    }
    if item.fetch_offset > hw || item.fetch_offset < log.log_start_offset() {
        // Kafka answers the error with unknown offsets (-1) throughout.
        return partition_error(item.partition, ErrorCode::OffsetOutOfRange);
    }
    let limit = usize::try_from(item.max_bytes.max(0))
        .unwrap_or(0)
        .min(*budget);
    let read = log.read(item.fetch_offset, limit, read_committed);
    *budget = budget.saturating_sub(read.records.len());
    FetchResponsePartitionData {
        partition_index: item.partition,
        error_code: 0,
        high_watermark: hw,
        last_stable_offset: log.last_stable_offset(),
        log_start_offset: log_start,
        aborted_transactions: read_committed.then(|| {
            read.aborted
                .iter()
                .map(|a| FetchResponseAbortedTransaction {
                    producer_id: a.producer_id,
                    first_offset: a.first_offset,
                    ..Default::default()
                })
                .collect()
        }),
        records: Some(read.records),
        ..Default::default()
    }
}
