//! Fetching: one Fetch in flight per broker leading assigned partitions,
//! over its KIP-227 session; each answer's partitions are checked, filtered
//! (read_committed) and turned into records, and their positions moved.
//!
//! 1. `send_fetches` plans a Fetch per leader without one in flight (the
//!    broker's session decides what is sent in full or incrementally);
//! 2. `finish` hands each answer to its broker's session;
//! 3. `handle_fetch_response` turns the partitions into records, or into
//!    the retriable and fatal errors of the `Round`;
//! 4. `poll_inner` repeats this until records arrive or the time is up,
//!    sending the next Fetches before it hands the records out.

use super::filter::process_partition_records;
use super::replica;
use super::session::{self, PartitionFetch};
use super::validate::{Hold, Verdict};
use super::{ConsumerRecord, IsolationLevel, Key, Reader, ReaderError, needs_metadata};
use kafka_client::ConnError;
use kafka_client::TopicPartition;
use kafka_proto::messages::{
    FetchRequest, FetchRequestForgottenTopic, FetchRequestPartition, FetchRequestTopic,
    FetchResponse,
};
use kafka_proto::primitives::Uuid;
use kafka_proto::{ApiKey, ErrorCode};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A Fetch in flight: its broker and its `max_bytes`.
#[derive(Debug, Clone, Copy)]
pub(super) struct InFlight {
    /// The broker the Fetch went to.
    node: i32,
    /// The bytes it asked for (counted against `max_buffered_bytes`).
    max_bytes: i32,
}

/// A Fetch that came back (or failed).
#[derive(Debug)]
pub(super) struct Fetched {
    /// The broker the Fetch went to.
    node: i32,
    /// The Fetch version sent.
    version: i16,
    /// Every partition the broker's session fetches, at the offsets sent.
    targets: Vec<Target>,
    /// The topic ids sent (Fetch v13+ names topics by id), by topic name.
    ids: Arc<HashMap<Arc<str>, Uuid>>,
    /// The broker's answer, or why there is none.
    resp: Result<FetchResponse, ConnError>,
    /// The round trip.
    latency: Duration,
}

/// One partition of a planned Fetch.
#[derive(Debug, Clone)]
struct Target {
    /// The partition's topic.
    topic: Arc<str>,
    /// The partition.
    partition: i32,
    /// The offset fetched from.
    offset: i64,
    /// The leader epoch sent as `current_leader_epoch` (-1: unknown).
    leader_epoch: i32,
    /// The epoch of the last fetched batch sent as `last_fetched_epoch`
    /// (-1: unknown).
    last_fetched_epoch: i32,
}

/// The forgotten partitions of a session request, by name (before v13)
/// or topic id. A partition whose topic id is unknown (a deleted topic) is
/// left out: a zero id makes Kafka 3.9 fail the whole Fetch
/// (UNKNOWN_SERVER_ERROR), while a partition left in the session only
/// brings answers that are dropped, as for any unassigned partition.
fn forgotten(
    version: i16,
    keys: &[session::Key],
    ids: &HashMap<Arc<str>, Uuid>,
) -> Vec<FetchRequestForgottenTopic> {
    let mut out: Vec<FetchRequestForgottenTopic> = Vec::new();
    for (topic, p) in keys {
        let (name, id) = if version >= 13 {
            let Some(id) = ids.get(topic).copied().filter(|id| *id != Uuid::default()) else {
                tracing::debug!(%topic, partition = p, "reader: no topic id to forget the partition by");
                continue;
            };
            (String::new(), id)
        } else {
            (topic.to_string(), Uuid::default())
        };
        match out.iter_mut().find(|f| f.topic == name && f.topic_id == id) {
            Some(f) => f.partitions.push(*p),
            None => out.push(FetchRequestForgottenTopic {
                topic: name,
                topic_id: id,
                partitions: vec![*p],
                ..Default::default()
            }),
        }
    }
    out
}

/// What one round of fetches produced.
#[derive(Debug, Default)]
pub(super) struct Round {
    records: Vec<ConsumerRecord>,
    fatal: Option<ReaderError>,
    retriable: Option<String>,
}

impl Round {
    fn retry(&mut self, why: impl Into<String>) {
        let why = why.into();
        tracing::debug!(%why, "reader: retriable error");
        self.retriable = Some(why);
    }

    fn fail(&mut self, e: ReaderError) {
        if self.fatal.is_none() {
            self.fatal = Some(e);
        }
    }
}

/// Errors retried without a metadata refresh.
fn retry_in_place(e: ErrorCode) -> bool {
    matches!(
        e,
        ErrorCode::UnknownLeaderEpoch | ErrorCode::UnknownServerError
    ) || e.is_retriable()
}

/// Room a Fetch response frame needs beyond its record data (librdkafka's
/// margin between `fetch.max.bytes` and `receive.message.max.bytes`).
const FETCH_RESPONSE_MARGIN: usize = 512;

impl Reader {
    /// `fetch.max.bytes` and `max.partition.fetch.bytes` as sent: each kept
    /// below the connection's largest accepted frame
    /// (`receive.message.max.bytes`) less [`FETCH_RESPONSE_MARGIN`], so that a
    /// response the broker sizes by them fits the frame cap.
    fn fetch_limits(&self) -> (i32, i32) {
        let frame = self.cluster.config().connection.max_frame_size;
        let room = i32::try_from(frame.saturating_sub(FETCH_RESPONSE_MARGIN))
            .unwrap_or(i32::MAX)
            .max(1);
        (
            self.config.max_bytes.min(room),
            self.config.partition_max_bytes.min(room),
        )
    }

    pub(super) async fn poll_inner(
        &mut self,
        only: Option<&BTreeSet<Key>>,
        timeout: Duration,
    ) -> Result<Vec<ConsumerRecord>, ReaderError> {
        if self.assignment.is_empty() {
            return Err(ReaderError::NoAssignment);
        }
        if only.is_some() {
            // A read of some partitions (read_to_end): answers prefetched
            // for the whole assignment are dropped unread (no position
            // moved), their sessions reopened.
            self.abandon_in_flight();
        } else if !self.ready.is_empty() {
            return Ok(std::mem::take(&mut self.ready));
        }
        let deadline = Instant::now() + timeout;
        loop {
            self.validate_positions().await?;
            self.ensure_positions(only).await?;
            let mut round = Round::default();
            self.send_fetches(only, &mut round).await;
            if self.in_flight.is_empty() {
                if let Some(e) = round.fatal {
                    return Err(e);
                }
                // Nothing to fetch from (no leader known): back off.
                let now = Instant::now();
                if now >= deadline {
                    return Ok(Vec::new());
                }
                if let Some(why) = &round.retriable {
                    self.last_error = Some(why.clone());
                }
                tokio::time::sleep(self.config.retry_backoff.min(deadline - now)).await;
                continue;
            }
            let first =
                tokio::time::timeout_at(deadline.into(), self.in_flight.join_next_with_id()).await;
            let Ok(Some(joined)) = first else {
                // The poll's time is up; the Fetches stay in flight.
                return Ok(Vec::new());
            };
            self.finish(joined, &mut round);
            // Whatever else already came back.
            while let Some(joined) = self.in_flight.try_join_next_with_id() {
                self.finish(joined, &mut round);
            }
            if let Some(why) = &round.retriable {
                self.last_error = Some(why.clone());
            }
            let failed_only = round.retriable.is_some() && round.records.is_empty();
            if only.is_none() && round.fatal.is_none() && !failed_only {
                // Prefetch: the next Fetch to each idle broker goes out
                // now, from the positions after these records, which wait
                // in `ready` across the await. (After a failure with
                // nothing to return, the retry waits for the backoff.)
                self.ready.append(&mut round.records);
                let mut ahead = Round::default();
                self.send_fetches(None, &mut ahead).await;
                round.records = std::mem::take(&mut self.ready);
                round.fatal = ahead.fatal;
            }
            match (round.fatal, round.records.is_empty()) {
                (Some(e), true) => return Err(e),
                (Some(e), false) => {
                    self.pending_error = Some(e);
                    return Ok(round.records);
                }
                (None, false) => return Ok(round.records),
                (None, true) => {}
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(Vec::new());
            }
            if round.retriable.is_some() {
                tokio::time::sleep(self.config.retry_backoff.min(deadline - now)).await;
            }
        }
    }

    /// Drops every Fetch in flight unread; their sessions start again.
    fn abandon_in_flight(&mut self) {
        self.in_flight.abort_all();
        for InFlight { node, .. } in std::mem::take(&mut self.busy).into_values() {
            if let Some(s) = self.sessions.get_mut(&node) {
                s.on_failure();
            }
        }
    }

    /// Hands a finished Fetch to its session and its records to `round`.
    fn finish(
        &mut self,
        joined: Result<(tokio::task::Id, Fetched), tokio::task::JoinError>,
        round: &mut Round,
    ) {
        let f = match joined {
            Ok((id, f)) => {
                self.busy.remove(&id);
                f
            }
            Err(e) => {
                // Aborted (abandoned: already let go) or panicked: the
                // broker's session starts again.
                if let Some(f) = self.busy.remove(&e.id())
                    && let Some(s) = self.sessions.get_mut(&f.node)
                {
                    s.on_failure();
                }
                if !e.is_cancelled() {
                    round.fail(ReaderError::Broker {
                        api: ApiKey::Fetch,
                        version: -1,
                        error: ErrorCode::UnknownServerError,
                        message: Some(format!("fetch task failed: {e}")),
                    });
                }
                return;
            }
        };
        let session = self.sessions.entry(f.node).or_default();
        match f.resp {
            Ok(resp) => {
                let top = ErrorCode::from(resp.error_code);
                if f.version >= 7 && session.on_answer(top, resp.session_id).is_err() {
                    round.retry(format!(
                        "fetch session {} with broker {}: {top:?}; fetching in full",
                        session.id(),
                        f.node
                    ));
                    return;
                }
                let records_before = round.records.len();
                let bytes =
                    self.handle_fetch_response(f.node, f.version, &f.targets, &f.ids, resp, round);
                self.metrics.fetched(
                    (round.records.len() - records_before) as u64,
                    bytes as u64,
                    f.latency,
                );
            }
            Err(e) => {
                session.on_failure();
                self.forget_replica(f.node, &f.targets);
                if e.is_retriable() {
                    self.cluster.invalidate();
                    round.retry(e.to_string());
                } else {
                    round.fail(e.into());
                }
            }
        }
    }

    /// Sends a Fetch to every broker that leads partitions to fetch and
    /// has none in flight.
    async fn send_fetches(&mut self, only: Option<&BTreeSet<Key>>, round: &mut Round) {
        let topics: Vec<Arc<str>> = self.assignment.keys().cloned().collect();
        let topic_refs: Vec<&str> = topics.iter().map(|t| &**t).collect();
        if let Err(e) = self.ensure_metadata(&topic_refs).await {
            if e.is_retriable() {
                round.retry(e.to_string());
            } else {
                round.fail(e.into());
                return;
            }
        }
        self.track_leaders();
        // Plan: partitions grouped by the broker to fetch from (the leader
        // or a preferred read replica, KIP-392), for the idle brokers.
        let mut plan: BTreeMap<i32, Vec<Target>> = BTreeMap::new();
        let mut ids: HashMap<Arc<str>, Uuid> = HashMap::new();
        let now = Instant::now();
        {
            let md = self.cluster.metadata();
            for (t, ps) in self.assignment.iter_mut() {
                if let Some(id) = md.topic_id(t) {
                    ids.insert(t.clone(), id);
                }
                for (p, st) in ps.iter_mut() {
                    if only.is_some_and(|o| !o.contains(&(t.clone(), *p)))
                        || self.paused.contains(&(t.clone(), *p))
                    {
                        continue;
                    }
                    let Some(offset) = st.position else { continue };
                    if st.hold.is_some() {
                        continue; // a reset or a validation first
                    }
                    match md.partition(t, *p) {
                        Some(pm) if pm.leader.is_some() => {
                            let leader = pm.leader.unwrap_or_default();
                            let node = replica::fetch_node(
                                &mut st.preferred_replica,
                                leader,
                                pm,
                                md.brokers(),
                                now,
                            );
                            if self.busy.values().any(|b| b.node == node) {
                                continue;
                            }
                            plan.entry(node).or_default().push(Target {
                                topic: t.clone(),
                                partition: *p,
                                offset,
                                leader_epoch: pm.leader_epoch,
                                last_fetched_epoch: st.offset_epoch.unwrap_or(-1),
                            });
                        }
                        _ => {
                            round.retry(format!("no leader known for {t}-{p}"));
                        }
                    }
                }
            }
        }
        if round.retriable.is_some() {
            self.cluster.invalidate();
        }
        let ids = Arc::new(ids);
        // The buffered-bytes bound: what the Fetches in flight asked for is
        // taken; the rest is shared out between this round's brokers.
        let asked: i64 = self.busy.values().map(|b| i64::from(b.max_bytes)).sum();
        let budget = i64::from(self.config.max_buffered_bytes.max(1)) - asked;
        if budget <= 0 || plan.is_empty() {
            return;
        }
        let max_bytes = {
            let share = budget / plan.len() as i64;
            let (limit, _) = self.fetch_limits();
            i32::try_from(share).unwrap_or(i32::MAX).clamp(1, limit)
        };
        let request_timeout = self.cluster.config().connection.request_timeout;
        let max_wait = self.config.max_wait;
        self.rounds = self.rounds.wrapping_add(1);
        for (node, mut targets) in plan {
            let conn = match self.connection(node).await {
                Ok(c) => c,
                Err(e) if e.is_retriable() => {
                    round.retry(e.to_string());
                    continue;
                }
                Err(e) => {
                    round.fail(e);
                    continue;
                }
            };
            let version = match conn.versions().version_for::<FetchRequest>() {
                Ok(v) => v.min(self.config.fetch_max_version),
                Err(e) => {
                    round.fail(e.into());
                    continue;
                }
            };
            let by_id = version >= 13 && targets.iter().all(|t| ids.contains_key(&t.topic));
            let version = if version >= 13 && !by_id { 12 } else { version };
            let (_, partition_max_bytes) = self.fetch_limits();
            let req = if version >= 7 {
                // A session's request carries what changed; a full one
                // rotates the partition order (only the first partition
                // of an answer is sure to get a whole batch, KIP-74).
                let wanted: BTreeMap<session::Key, PartitionFetch> = targets
                    .iter()
                    .map(|t| {
                        (
                            (t.topic.clone(), t.partition),
                            PartitionFetch {
                                offset: t.offset,
                                leader_epoch: if version >= 9 { t.leader_epoch } else { -1 },
                                last_fetched_epoch: if version >= 12 {
                                    t.last_fetched_epoch
                                } else {
                                    -1
                                },
                                max_bytes: partition_max_bytes,
                            },
                        )
                    })
                    .collect();
                let plan = self.sessions.entry(node).or_default().build(&wanted);
                let mut sent: Vec<Target> = plan
                    .partitions
                    .iter()
                    .map(|(k, f)| Target {
                        topic: k.0.clone(),
                        partition: k.1,
                        offset: f.offset,
                        leader_epoch: f.leader_epoch,
                        last_fetched_epoch: f.last_fetched_epoch,
                    })
                    .collect();
                if plan.is_full() && !sent.is_empty() {
                    let n = sent.len();
                    sent.rotate_left(self.rounds % n);
                }
                let mut req = self.fetch_request(version, &sent, &ids, max_wait, max_bytes);
                req.session_id = plan.session_id;
                req.session_epoch = plan.session_epoch;
                // Topics no longer assigned (revoked, resubscribed) are
                // forgotten by the id the metadata still has.
                let forgotten_ids: HashMap<Arc<str>, Uuid> = {
                    let md = self.cluster.metadata();
                    plan.forgotten
                        .iter()
                        .filter_map(|(t, _)| {
                            let id = ids.get(t).copied().or_else(|| md.topic_id(t))?;
                            Some((t.clone(), id))
                        })
                        .collect()
                };
                req.forgotten_topics_data = forgotten(version, &plan.forgotten, &forgotten_ids);
                req
            } else {
                let n = targets.len();
                targets.rotate_left(self.rounds % n);
                self.fetch_request(version, &targets, &ids, max_wait, max_bytes)
            };
            let wait = request_timeout + max_wait;
            let ids = Arc::clone(&ids);
            let task = self.in_flight.spawn(async move {
                let sent = Instant::now();
                let resp = conn.send_with_timeout(&req, version, wait).await;
                Fetched {
                    node,
                    version,
                    targets,
                    ids,
                    resp,
                    latency: sent.elapsed(),
                }
            });
            self.busy.insert(task.id(), InFlight { node, max_bytes });
        }
    }

    fn fetch_request(
        &self,
        version: i16,
        targets: &[Target],
        ids: &HashMap<Arc<str>, Uuid>,
        max_wait: Duration,
        max_bytes: i32,
    ) -> FetchRequest {
        let (_, partition_max_bytes) = self.fetch_limits();
        let mut topics: Vec<FetchRequestTopic> = Vec::new();
        for t in targets {
            let part = FetchRequestPartition {
                partition: t.partition,
                current_leader_epoch: if version >= 9 { t.leader_epoch } else { -1 },
                fetch_offset: t.offset,
                last_fetched_epoch: if version >= 12 {
                    t.last_fetched_epoch
                } else {
                    -1
                },
                partition_max_bytes,
                ..Default::default()
            };
            let (name, id) = if version >= 13 {
                (
                    String::new(),
                    ids.get(&t.topic).copied().unwrap_or_default(),
                )
            } else {
                (t.topic.to_string(), Uuid::default())
            };
            match topics
                .iter_mut()
                .find(|x| x.topic == name && x.topic_id == id)
            {
                Some(x) => x.partitions.push(part),
                None => topics.push(FetchRequestTopic {
                    topic: name,
                    topic_id: id,
                    partitions: vec![part],
                    ..Default::default()
                }),
            }
        }
        FetchRequest {
            max_wait_ms: i32::try_from(max_wait.as_millis()).unwrap_or(i32::MAX),
            min_bytes: self.config.min_bytes,
            max_bytes,
            isolation_level: self.config.isolation.wire(),
            topics,
            rack_id: match (&self.config.client_rack, version >= 11) {
                (Some(rack), true) => rack.clone(),
                _ => String::new(),
            },
            ..Default::default()
        }
    }

    /// Forgets the preferred read replica `node` of `targets` after its
    /// Fetch failed: they go back to their leaders (Java clears the
    /// preferred replica of every partition of the failed fetch session).
    fn forget_replica(&mut self, node: i32, targets: &[Target]) {
        for t in targets {
            if let Ok(st) = self.state_mut(&t.topic, t.partition)
                && st.preferred_replica.is_some_and(|r| r.node == node)
            {
                st.preferred_replica = None;
            }
        }
    }

    fn handle_fetch_response(
        &mut self,
        node: i32,
        version: i16,
        targets: &[Target],
        ids: &HashMap<Arc<str>, Uuid>,
        resp: FetchResponse,
        round: &mut Round,
    ) -> usize {
        // Counted while a partition's state is borrowed.
        let metrics = Arc::clone(&self.metrics);
        let mut batch_bytes = 0;
        let top = ErrorCode::from(resp.error_code);
        if !top.is_ok() {
            metrics.error(top);
            let e = ReaderError::Broker {
                api: ApiKey::Fetch,
                version,
                error: top,
                message: None,
            };
            if top.is_retriable() || top == ErrorCode::FetchSessionIdNotFound {
                round.retry(e.to_string());
            } else {
                round.fail(e);
            }
            return 0;
        }
        let isolation = self.config.isolation;
        let decode = self.config.decode;
        let mut first_in_answer = true;
        for rt in resp.responses {
            let topic: Option<Arc<str>> = if version >= 13 {
                ids.iter()
                    .find(|(_, id)| **id == rt.topic_id)
                    .map(|(t, _)| t.clone())
            } else {
                targets
                    .iter()
                    .find(|t| *t.topic == *rt.topic)
                    .map(|t| t.topic.clone())
            };
            let Some(topic) = topic else { continue };
            for pd in rt.partitions {
                let is_first = std::mem::replace(&mut first_in_answer, false);
                let Some(target) = targets
                    .iter()
                    .find(|t| t.topic == topic && t.partition == pd.partition_index)
                else {
                    continue;
                };
                let error = ErrorCode::from(pd.error_code);
                let partition = pd.partition_index;
                let replica_until = Instant::now() + self.cluster.config().metadata_max_age;
                let Ok(state) = self.state_mut(&topic, partition) else {
                    continue;
                };
                if state.position != Some(target.offset) {
                    continue; // moved by a seek meanwhile
                }
                let from_replica = state.preferred_replica.is_some_and(|r| r.node == node);
                if !error.is_ok() {
                    metrics.error(error);
                    if from_replica && replica::drops_preferred(error) {
                        // Back to the leader (Java: an out-of-range
                        // follower is not a reason to reset).
                        tracing::debug!(topic = %topic, partition, replica = node, error = error.name(), "reader: preferred read replica failed; fetching from the leader");
                        state.preferred_replica = None;
                    }
                    if error == ErrorCode::OffsetOutOfRange {
                        if !from_replica {
                            // auto.offset.reset (or the typed error under
                            // none) before the next Fetch: `ensure_positions`.
                            tracing::debug!(topic = %topic, partition, offset = target.offset, "reader: fetch position out of range");
                            state.hold = Some(Hold::Reset);
                        }
                        continue;
                    }
                    let e = ReaderError::Partition {
                        api: ApiKey::Fetch,
                        version,
                        topic: topic.to_string(),
                        partition,
                        error,
                    };
                    if needs_metadata(error) {
                        self.cluster.invalidate();
                        round.retry(e.to_string());
                    } else if retry_in_place(error) {
                        round.retry(e.to_string());
                    } else {
                        round.fail(e);
                    }
                    continue;
                }
                if pd.preferred_read_replica >= 0 {
                    if state.preferred_replica.map(|r| r.node) != Some(pd.preferred_read_replica) {
                        tracing::debug!(topic = %topic, partition, replica = pd.preferred_read_replica, from = node, "reader: fetching from the preferred read replica");
                    }
                    state.preferred_replica = Some(replica::Preferred {
                        node: pd.preferred_read_replica,
                        until: replica_until,
                    });
                }
                if version >= 12 && pd.diverging_epoch.epoch >= 0 {
                    // KIP-320: the leader's log for `last_fetched_epoch`
                    // ends below the fetch offset.
                    let verdict = Verdict::of(
                        target.offset,
                        pd.diverging_epoch.epoch,
                        pd.diverging_epoch.end_offset,
                    );
                    if let Err(e) = self.apply_verdict(&topic, partition, target.offset, verdict) {
                        round.fail(e);
                    }
                    continue;
                }
                let Ok(state) = self.state_mut(&topic, partition) else {
                    continue;
                };
                if pd.high_watermark >= 0 {
                    state.high_watermark = Some(pd.high_watermark);
                }
                if pd.last_stable_offset >= 0 {
                    state.last_stable_offset = Some(pd.last_stable_offset);
                }
                if pd.log_start_offset >= 0 {
                    state.log_start_offset = Some(pd.log_start_offset);
                }
                // Lag against the end a reader of this isolation can reach
                // (Java's `records-lag`: the last stable offset under
                // read_committed), from the position the answer leaves.
                let end = match isolation {
                    IsolationLevel::ReadCommitted => state.last_stable_offset,
                    IsolationLevel::ReadUncommitted => state.high_watermark,
                }
                .filter(|_| metrics.enabled());
                let Some(records) = pd.records.filter(|r| !r.is_empty()) else {
                    if let Some(end) = end {
                        metrics.set_lag(
                            &TopicPartition::new(&*topic, partition),
                            end - target.offset,
                        );
                    }
                    continue;
                };
                let bytes = records.len();
                batch_bytes += bytes;
                let aborted = pd
                    .aborted_transactions
                    .unwrap_or_default()
                    .into_iter()
                    .map(|a| (a.producer_id, a.first_offset));
                match process_partition_records(
                    &topic,
                    partition,
                    isolation,
                    target.offset,
                    aborted,
                    records,
                    &decode,
                ) {
                    Ok(done) => {
                        if done.batches == 0 {
                            // Only part of a batch: the response's byte budget
                            // ran out. Fatal only for the answer's first
                            // partition, which brokers always give a whole
                            // batch (KIP-74).
                            if is_first {
                                round.fail(ReaderError::RecordTooLarge {
                                    topic: topic.to_string(),
                                    partition,
                                    offset: target.offset,
                                    bytes,
                                });
                            }
                            continue;
                        }
                        state.position = Some(done.next_offset);
                        if done.last_epoch.is_some() {
                            state.offset_epoch = done.last_epoch;
                        }
                        if let Some(end) = end {
                            metrics.set_lag(
                                &TopicPartition::new(&*topic, partition),
                                end - done.next_offset,
                            );
                        }
                        round.records.extend(done.records);
                    }
                    Err((offset, source)) => round.fail(ReaderError::Corrupt {
                        topic: topic.to_string(),
                        partition,
                        offset,
                        source,
                    }),
                }
            }
        }
        batch_bytes
    }
}
