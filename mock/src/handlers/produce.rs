//! Produce: each partition's batches checked (CRC, record count, the
//! producer's epoch and sequence), then appended at the leader.
//!
//! Transactional batches are checked against the transaction coordinator
//! first: from v12 (transaction version 2) the partition is added to the
//! transaction, as the partition leader does with AddPartitionsToTxn v5;
//! below v12 the partition must already be in the transaction
//! (KIP-890 part 1 verification). The coordinator's refusals reach the
//! producer as the leader maps them: CONCURRENT_TRANSACTIONS stays
//! retriable, a stale epoch is INVALID_PRODUCER_EPOCH (abortable), an
//! unknown coordinator NOT_ENOUGH_REPLICAS (retriable), a partition not in
//! the transaction TRANSACTION_ABORTABLE (v11+) or INVALID_TXN_STATE.

use super::{Call, Handle, Reply, response_topic};
use crate::state::partition::Appended;
use crate::state::txn::TxnProducer;
use crate::state::{ClusterState, Ctx};
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;
use kafka_proto::record::RecordBatchView;

/// One partition's answer.
struct Answer {
    code: ErrorCode,
    base_offset: i64,
    log_start_offset: i64,
    message: Option<String>,
    leader: Option<(i32, i32)>,
}

impl Answer {
    fn err(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            base_offset: -1,
            log_start_offset: -1,
            message: Some(message.into()),
            leader: None,
        }
    }
}

/// Splits concatenated batches; `None` when a length runs past the end.
fn split_batches(mut data: &[u8]) -> Option<Vec<&[u8]>> {
    let mut out = Vec::new();
    while !data.is_empty() {
        if data.len() < 12 {
            return None;
        }
        let len = i32::from_be_bytes([data[8], data[9], data[10], data[11]]);
        let total = 12usize.checked_add(usize::try_from(len).ok()?)?;
        if total > data.len() {
            return None;
        }
        out.push(&data[..total]);
        data = &data[total..];
    }
    Some(out)
}

fn map_coordinator_error(code: ErrorCode, version: i16) -> ErrorCode {
    match code {
        ErrorCode::ConcurrentTransactions => ErrorCode::ConcurrentTransactions,
        ErrorCode::ProducerFenced | ErrorCode::InvalidProducerEpoch => {
            ErrorCode::InvalidProducerEpoch
        }
        ErrorCode::NotCoordinator
        | ErrorCode::CoordinatorNotAvailable
        | ErrorCode::CoordinatorLoadInProgress => ErrorCode::NotEnoughReplicas,
        _ if version >= 11 => ErrorCode::TransactionAbortable,
        _ => ErrorCode::InvalidTxnState,
    }
}

fn produce_partition(
    state: &mut ClusterState,
    ctx: &Ctx,
    req: &ProduceRequest,
    version: i16,
    topic: &str,
    partition: i32,
    records: Option<&[u8]>,
) -> Answer {
    let Some(log) = state.partition(topic, partition) else {
        return Answer::err(ErrorCode::UnknownTopicOrPartition, "unknown partition");
    };
    if log.leader != ctx.broker {
        let mut a = Answer::err(ErrorCode::NotLeaderOrFollower, "not the leader");
        a.leader = Some((log.leader, log.leader_epoch));
        return a;
    }
    let Some(batches) = records.and_then(split_batches).filter(|b| !b.is_empty()) else {
        return Answer::err(
            ErrorCode::CorruptMessage,
            "no record batch, or a truncated one",
        );
    };
    let mut views = Vec::with_capacity(batches.len());
    for raw in &batches {
        match RecordBatchView::decode(raw) {
            Ok(v) => views.push(v),
            Err(e) => return Answer::err(ErrorCode::CorruptMessage, e.to_string()),
        }
    }
    // Kafka's `LogValidator.validateKey`: a compacted topic takes keyed
    // records only.
    let compacted = state
        .configs
        .topic_value(topic, "cleanup.policy")
        .is_some_and(|p| p.split(',').any(|x| x.trim() == "compact"));
    if compacted {
        let keyless = views
            .iter()
            .flat_map(|v| v.records())
            .any(|r| r.map_or(true, |r| r.key.is_none()));
        if keyless {
            return Answer::err(
                ErrorCode::InvalidRecord,
                format!(
                    "Compacted topic cannot accept message without key in topic partition {topic}-{partition}."
                ),
            );
        }
    }
    let tv2 = version >= 12;
    for v in &views {
        if !v.is_transactional {
            continue;
        }
        let Some(tid) = req.transactional_id.as_deref() else {
            return Answer::err(
                ErrorCode::InvalidRecord,
                "a transactional batch in a request without a transactional id",
            );
        };
        let producer = TxnProducer {
            tid,
            pid: v.producer_id,
            epoch: v.producer_epoch,
            fenced: ErrorCode::InvalidProducerEpoch,
        };
        // The coordinator is asked as if from its own broker (the leader
        // forwards the check).
        let coordinator = state.coordinator(crate::state::CoordinatorKind::Transaction, tid);
        let forwarded = Ctx {
            broker: coordinator.unwrap_or(-1),
            ..ctx.clone()
        };
        let tp = [(topic.to_string(), partition)];
        if let Err(code) = state.add_to_txn(&forwarded, producer, &tp, None, tv2, !tv2) {
            return Answer::err(
                map_coordinator_error(code, version),
                format!("the transaction coordinator refused the partition: {code:?}"),
            );
        }
    }
    let log = state
        .partition_mut(topic, partition)
        .expect("checked above");
    let mut first = None;
    for (raw, v) in batches.iter().zip(&views) {
        match log.append(raw, v, tv2) {
            Ok(Appended::At(o)) | Ok(Appended::Duplicate(o)) => {
                first.get_or_insert(o);
            }
            Err(r) => {
                let mut a = Answer::err(r.code, r.message);
                if carries_log_start_offset(r.code) {
                    a.log_start_offset = log.log_start_offset();
                }
                return a;
            }
        }
    }
    let log_start_offset = log.log_start_offset();
    state.appends += 1;
    Answer {
        code: ErrorCode::None,
        base_offset: first.unwrap_or(-1),
        log_start_offset,
        message: None,
        leader: None,
    }
}

fn partition_response(
    a: Answer,
    index: i32,
    version: i16,
) -> ProduceResponsePartitionProduceResponse {
    ProduceResponsePartitionProduceResponse {
        index,
        error_code: a.code.code(),
        base_offset: a.base_offset,
        log_append_time_ms: -1,
        log_start_offset: if version >= 5 { a.log_start_offset } else { -1 },
        record_errors: Vec::new(),
        error_message: if version >= 8 {
            a.message.filter(|_| !a.code.is_ok())
        } else {
            None
        },
        current_leader: match a.leader {
            Some((leader_id, leader_epoch)) if version >= 10 => ProduceResponseLeaderIdAndEpoch {
                leader_id,
                leader_epoch,
                ..Default::default()
            },
            _ => Default::default(),
        },
        ..Default::default()
    }
}

impl Handle for ProduceRequest {
    type Response = ProduceResponse;

    fn handle(&self, state: &mut ClusterState, call: &Call) -> Reply<Self::Response> {
        let acks_ok = matches!(self.acks, -1..=1);
        let mut responses = Vec::with_capacity(self.topic_data.len());
        for t in &self.topic_data {
            let name = state.request_topic(call.version >= 13, &t.name, &t.topic_id);
            let partition_responses = t
                .partition_data
                .iter()
                .map(|p| {
                    let a = match &name {
                        _ if !acks_ok => {
                            Answer::err(ErrorCode::InvalidRequiredAcks, "acks must be -1, 0 or 1")
                        }
                        None => Answer::err(ErrorCode::UnknownTopicId, "unknown topic id"),
                        Some(n) if state.refused_topics.contains_key(n.as_str()) => {
                            Answer::err(state.refused_topics[n.as_str()], "the topic is refused")
                        }
                        Some(n) => produce_partition(
                            state,
                            &call.ctx,
                            self,
                            call.version,
                            n,
                            p.index,
                            p.records.as_deref(),
                        ),
                    };
                    partition_response(a, p.index, call.version)
                })
                .collect();
            let (name, topic_id) = response_topic(call.version >= 13, &t.name, &t.topic_id);
            responses.push(ProduceResponseTopicProduceResponse {
                name,
                topic_id,
                partition_responses,
                ..Default::default()
            });
        }
        if self.acks == 0 {
            return Reply::Silent;
        }
        Reply::Now(ProduceResponse {
            responses,
            ..Default::default()
        })
    }

    fn error(&self, state: &ClusterState, call: &Call, code: ErrorCode) -> Self::Response {
        ProduceResponse {
            responses: self
                .topic_data
                .iter()
                .map(|t| {
                    let by_id = call.version >= 13;
                    let known = state.request_topic(by_id, &t.name, &t.topic_id);
                    let (name, topic_id) = response_topic(by_id, &t.name, &t.topic_id);
                    ProduceResponseTopicProduceResponse {
                        name,
                        topic_id,
                        partition_responses: t
                            .partition_data
                            .iter()
                            .map(|p| {
                                let mut a = Answer::err(code, "injected by kafka-mock");
                                if carries_log_start_offset(code) {
                                    a.log_start_offset = known
                                        .as_deref()
                                        .and_then(|n| state.partition(n, p.index))
                                        .map_or(-1, |log| log.log_start_offset());
                                }
                                partition_response(a, p.index, call.version)
                            })
                            .collect(),
                        ..Default::default()
                    }
                })
                .collect(),
            ..Default::default()
        }
    }
}

/// Whether Kafka answers `code` with the partition's log start offset:
/// `ReplicaManager` leaves it unknown (-1) only for the errors it meets
/// before the log (unknown partition, not the leader, too large, corrupt,
/// storage); any other refusal (a sequence, epoch or producer id error,
/// NOT_ENOUGH_REPLICAS...) carries it, which the producer reads to tell a
/// lost producer state from an unknown one (KIP-360).
fn carries_log_start_offset(code: ErrorCode) -> bool {
    !matches!(
        code,
        ErrorCode::UnknownTopicOrPartition
            | ErrorCode::NotLeaderOrFollower
            | ErrorCode::MessageTooLarge
            | ErrorCode::RecordListTooLarge
            | ErrorCode::CorruptMessage
            | ErrorCode::KafkaStorageError
            | ErrorCode::UnknownTopicId
    )
}
