//! Transactions that earlier processes left behind: aborting lingering
//! ones (on a fresh start, or ids a restore does not finish) and what the
//! outcome of finishing a prepared one means for the sink.

use std::sync::Arc;
use std::time::Duration;

use kafka_admin::{self as admin, TransactionFilters};
use kafka_client::Cluster;
use kafka_producer::kafka_proto::ErrorCode;
use kafka_producer::txn::{ResumeOutcome, TransactionState};

use crate::two_phase::{CommitOutcome, PreCommitted};

use super::{KafkaSinkConfig, KafkaSinkError, KafkaTransaction};

/// Aborts whatever another process left open under `id`.
pub(super) async fn abort_lingering(
    cluster: &Cluster,
    timeout: Duration,
    id: &str,
) -> Result<(), KafkaSinkError> {
    admin::abort_lingering_transaction(cluster, id, timeout)
        .await
        .map(|_| ())
        .map_err(|e| KafkaSinkError::Recovery(format!("aborting {id}: {e}")))
}

/// Aborts the transactions of `ids` concurrently (one at a time makes a
/// fresh start with a large id range slow).
pub(super) async fn abort_all(
    cluster: &Arc<Cluster>,
    timeout: Duration,
    ids: impl IntoIterator<Item = String>,
) -> Result<(), KafkaSinkError> {
    let mut set = tokio::task::JoinSet::new();
    for id in ids {
        let cluster = cluster.clone();
        set.spawn(async move { abort_lingering(&cluster, timeout, &id).await });
    }
    let mut first = None;
    while let Some(r) = set.join_next().await {
        match r {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                first.get_or_insert(e);
            }
            Err(e) => {
                first.get_or_insert(KafkaSinkError::Recovery(e.to_string()));
            }
        }
    }
    first.map_or(Ok(()), Err)
}

/// Fresh start: abort the fixed range, then (subtask 0) every other open
/// transaction of the prefix the broker lists.
pub(super) async fn abort_on_fresh_start(
    cluster: &Arc<Cluster>,
    config: &KafkaSinkConfig,
) -> Result<(), KafkaSinkError> {
    let ids = config.ids();
    let timeout = config.recovery_timeout;
    abort_all(cluster, timeout, ids.generate_ids_to_abort()).await?;
    if config.subtask_index != 0 {
        return Ok(());
    }
    let filters = TransactionFilters::states(&[
        TransactionState::Ongoing.as_str(),
        TransactionState::PrepareCommit.as_str(),
        TransactionState::PrepareAbort.as_str(),
    ]);
    match admin::list_transactions(cluster, &filters).await {
        Ok(listed) => {
            let prefix = format!("{}-", ids.prefix);
            let lingering: Vec<String> = listed
                .into_iter()
                .filter_map(|t| {
                    let n: u64 = t.transactional_id.strip_prefix(&prefix)?.parse().ok()?;
                    (n >= ids.abort_range_end()).then_some(t.transactional_id)
                })
                .collect();
            if !lingering.is_empty() {
                tracing::warn!(?lingering, "aborting lingering transactions of the prefix");
            }
            abort_all(cluster, timeout, lingering).await
        }
        Err(e) => {
            tracing::warn!(error = %e, "ListTransactions unavailable; only the fixed id range was aborted");
            Ok(())
        }
    }
}

/// What finishing a prepared transaction means for the sink, from the
/// coordinator's answer alone: [`settle`] reads the log instead when the
/// answer is ambiguous and the transaction's first offsets are known; this
/// inference remains for states written before they were kept.
///
/// `Fenced` (the transactional id moved on: a newer producer initialized
/// it) is ambiguous on its own. Within its transaction timeout the
/// coordinator cannot have aborted the transaction, and the only producer
/// that initializes a pending transaction's id is a later run of this sink
/// that restored the same checkpoint, which commits it before it begins
/// anything (ids of a prefix belong to one sink, as in Flink). So a fenced
/// transaction younger than `timeout` was committed by an earlier restore
/// (FlinkKafkaProducer presumes the same on ProducerFenced). An older one may
/// have been aborted by the coordinator: it is reported lost.
///
/// `AbortedByBroker` read from a fencing error (the id's producer epoch is
/// one above ours and its transaction is aborting) is what a TV1 timeout
/// abort of this transaction leaves — and also what that later run leaves
/// when, after committing this transaction, it begins one of its own under
/// the id and aborts it (its InitProducerId bumped the epoch by one). Within
/// the timeout only the second can have happened: committed as well. From
/// INVALID_TXN_STATE (the coordinator holds this very epoch, aborted), or
/// older than the timeout, `AbortedByBroker` is lost.
pub(super) fn outcome(
    id: &str,
    r: ResumeOutcome,
    age: Duration,
    timeout: Duration,
) -> CommitOutcome {
    match r {
        ResumeOutcome::Committed => CommitOutcome::Committed,
        ResumeOutcome::AlreadyCommitted => CommitOutcome::AlreadyCommitted,
        ResumeOutcome::Fenced { error, state } if age < timeout => presumed_committed(
            id,
            error,
            state,
            age,
            timeout,
            "a newer producer initialized the id of a transaction younger than its timeout: \
             an earlier restore committed it",
        ),
        ResumeOutcome::AbortedByBroker { error, state }
            if age < timeout && epoch_moved_on(error) =>
        {
            presumed_committed(
                id,
                error,
                state,
                age,
                timeout,
                "the id's epoch is one above the transaction's and aborting, but the transaction \
                 is younger than its timeout, so the coordinator did not abort it: a later \
                 restore committed it, then aborted a transaction of its own under the id",
            )
        }
        other => CommitOutcome::Lost {
            reason: format!("transaction {id} (age {age:?}, timeout {timeout:?}): {other:?}"),
        },
    }
}

/// Whether EndTxn's `error` is a fencing error: the id's producer epoch
/// moved past the transaction's, so the coordinator no longer tells its
/// outcome.
fn epoch_moved_on(error: ErrorCode) -> bool {
    matches!(
        error,
        ErrorCode::ProducerFenced
            | ErrorCode::InvalidProducerEpoch
            | ErrorCode::InvalidProducerIdMapping
    )
}

/// Counts a transaction the coordinator can no longer vouch for as
/// committed, warning with `why` and what the coordinator answered.
fn presumed_committed(
    id: &str,
    error: ErrorCode,
    state: Option<TransactionState>,
    age: Duration,
    timeout: Duration,
    why: &str,
) -> CommitOutcome {
    tracing::warn!(
        transactional_id = id,
        ?error,
        ?state,
        ?age,
        ?timeout,
        "{why}"
    );
    CommitOutcome::AlreadyCommitted
}

/// Settles the commit of a prepared transaction. When the coordinator can
/// no longer tell its outcome (the id was fenced: the epoch moved on), the
/// inference of [`outcome`] assumes the fencing producer was a later
/// restore that committed the transaction first. A late InitProducerId
/// breaks that assumption: an earlier attempt of some producer's
/// `init_transactions` for the id (its answer lost, the client retried),
/// delivered after the transaction began, fences and aborts it. So when
/// the transaction's first offsets are known, the log decides: its first
/// record in a partition is visible read_committed iff it committed.
pub(super) async fn settle(
    cluster: &Arc<Cluster>,
    id: &str,
    r: ResumeOutcome,
    txn: &KafkaTransaction,
    age: Duration,
    timeout: Duration,
) -> Result<CommitOutcome, KafkaSinkError> {
    let ambiguous = match &r {
        ResumeOutcome::Fenced { .. } => true,
        ResumeOutcome::AbortedByBroker { error, .. } => epoch_moved_on(*error),
        _ => false,
    };
    let (Some(prepared), Some((topic, partition, offset))) =
        (&txn.prepared, txn.first_offsets.first())
    else {
        return Ok(outcome(id, r, age, timeout));
    };
    if !ambiguous {
        return Ok(outcome(id, r, age, timeout));
    }
    match first_record_committed(
        cluster,
        topic,
        *partition,
        *offset,
        prepared.producer_id,
        timeout,
    )
    .await
    {
        Ok(true) => {
            tracing::warn!(
                transactional_id = id,
                ?r,
                topic,
                partition,
                offset,
                "the id was fenced, and the log shows the transaction committed"
            );
            Ok(CommitOutcome::AlreadyCommitted)
        }
        Ok(false) => Ok(CommitOutcome::Lost {
            reason: format!(
                "transaction {id} ({r:?}): its first record, {topic}-{partition}@{offset}, is                  not visible read_committed: the transaction was aborted after it was prepared                  (a late InitProducerId for the id, or the coordinator's timeout, fenced it)"
            ),
        }),
        Err(e) => Err(KafkaSinkError::Recovery(format!(
            "reading {topic}-{partition}@{offset} to settle {id}: {e}"
        ))),
    }
}

/// Whether the record at `offset` of `topic`-`partition`, written by
/// `producer_id`, is visible read_committed. Waits (within `timeout`) until
/// the last stable offset is past it — its transaction ended (the
/// coordinator already said so; its markers may still be on their way) —
/// but not for later transactions.
async fn first_record_committed(
    cluster: &Arc<Cluster>,
    topic: &str,
    partition: i32,
    offset: i64,
    producer_id: i64,
    timeout: Duration,
) -> Result<bool, kafka_consumer::ReaderError> {
    use kafka_consumer::{IsolationLevel, Offset, Reader, ReaderConfig, ReaderError};
    let deadline = std::time::Instant::now() + timeout;
    let timed_out = |what: &str| ReaderError::Timeout {
        what: format!("{what} {topic}-{partition} past {offset}"),
        after: timeout,
        last_error: None,
    };
    let mut reader = Reader::new(
        cluster.clone(),
        ReaderConfig {
            isolation: IsolationLevel::ReadCommitted,
            partition_max_bytes: 64 * 1024,
            ..ReaderConfig::default()
        },
    );
    let end = loop {
        let stable = reader
            .list_offsets(topic, &[partition], Offset::Latest)
            .await?
            .get(&partition)
            .and_then(|o| o.offset)
            .unwrap_or(0);
        if stable > offset {
            break stable;
        }
        if std::time::Instant::now() >= deadline {
            return Err(timed_out("the last stable offset of"));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    reader.assign(topic, &[partition]);
    reader.seek(topic, partition, Offset::At(offset)).await?;
    while reader.position(topic, partition).is_some_and(|p| p < end) {
        if std::time::Instant::now() >= deadline {
            return Err(timed_out("reading"));
        }
        for r in reader.poll(Duration::from_millis(500)).await? {
            if r.partition == partition && r.offset >= offset {
                return Ok(r.offset == offset && r.producer_id == producer_id);
            }
        }
    }
    // Read past it: the record is not visible read_committed.
    Ok(false)
}

/// How long ago a pre-committed transaction began (wall clock).
pub(super) fn age_of<T>(txn: &PreCommitted<T>) -> Duration {
    let now = crate::clock::Clock::now_millis(&crate::clock::SystemClock);
    Duration::from_millis(now.saturating_sub(txn.start_time_ms()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Invariant: a fenced transaction counts as committed (by an earlier
    /// restore) only while younger than its timeout; an aborted one, or a
    /// fenced one past its timeout, is lost.
    #[test]
    fn resume_outcomes_for_the_sink() {
        let timeout = Duration::from_secs(60);
        let fenced = || ResumeOutcome::Fenced {
            error: ErrorCode::ProducerFenced,
            state: Some(TransactionState::Empty),
        };
        let young = Duration::from_secs(5);
        let old = Duration::from_secs(61);
        assert_eq!(
            outcome("t-0", fenced(), young, timeout),
            CommitOutcome::AlreadyCommitted
        );
        assert!(matches!(
            outcome("t-0", fenced(), old, timeout),
            CommitOutcome::Lost { .. }
        ));
        let aborted = ResumeOutcome::AbortedByBroker {
            error: ErrorCode::InvalidTxnState,
            state: Some(TransactionState::CompleteAbort),
        };
        assert!(matches!(
            outcome("t-0", aborted, young, timeout),
            CommitOutcome::Lost { .. }
        ));
        assert_eq!(
            outcome("t-0", ResumeOutcome::Committed, old, timeout),
            CommitOutcome::Committed
        );
    }

    /// Invariant: the id one epoch on and aborting (what a TV1 timeout abort
    /// leaves, and what a later restore leaves that committed the
    /// transaction, then aborted one of its own under the id) counts as
    /// committed while the transaction is younger than its timeout — the
    /// coordinator cannot have timed it out — and as lost after.
    #[test]
    fn an_id_one_epoch_on_and_aborting_is_a_later_restores_within_the_timeout() {
        let timeout = Duration::from_secs(120);
        for error in [
            ErrorCode::ProducerFenced,
            ErrorCode::InvalidProducerEpoch,
            ErrorCode::InvalidProducerIdMapping,
        ] {
            let aborted = || ResumeOutcome::AbortedByBroker {
                error,
                state: Some(TransactionState::PrepareAbort),
            };
            assert_eq!(
                outcome("t-0", aborted(), Duration::from_millis(219), timeout),
                CommitOutcome::AlreadyCommitted,
                "{error:?}"
            );
            assert!(
                matches!(
                    outcome("t-0", aborted(), Duration::from_secs(121), timeout),
                    CommitOutcome::Lost { .. }
                ),
                "{error:?}"
            );
        }
    }
}
