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

use super::{KafkaSinkConfig, KafkaSinkError};

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

/// What finishing a prepared transaction means for the sink.
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
        ResumeOutcome::Fenced { error, state } if age < timeout => {
            tracing::warn!(
                transactional_id = id,
                ?error,
                ?state,
                ?age,
                ?timeout,
                "a newer producer initialized the id of a transaction younger than its timeout: \
                 an earlier restore committed it"
            );
            CommitOutcome::AlreadyCommitted
        }
        ResumeOutcome::AbortedByBroker { error, state }
            if age < timeout
                && matches!(
                    error,
                    ErrorCode::ProducerFenced
                        | ErrorCode::InvalidProducerEpoch
                        | ErrorCode::InvalidProducerIdMapping
                ) =>
        {
            tracing::warn!(
                transactional_id = id,
                ?error,
                ?state,
                ?age,
                ?timeout,
                "the id's epoch is one above the transaction's and aborting, but the transaction \
                 is younger than its timeout, so the coordinator did not abort it: a later \
                 restore committed it, then aborted a transaction of its own under the id"
            );
            CommitOutcome::AlreadyCommitted
        }
        other => CommitOutcome::Lost {
            reason: format!("transaction {id} (age {age:?}, timeout {timeout:?}): {other:?}"),
        },
    }
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
