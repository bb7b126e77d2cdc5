//! Transactions and their producers: list them on every broker
//! (ListTransactions), describe them through their coordinators
//! (DescribeTransactions), the producers active on partitions
//! (DescribeProducers), and abort a lingering one the way a new producer
//! instance would (InitProducerId).

use crate::broker_error;
use kafka_client::ExponentialBackoff;
use kafka_client::requests::describe_transactions::{TransactionSnapshot, describe_transaction_on};
use kafka_client::{
    Cluster, CoordinatorType, ProducerIdAndEpoch, RequestError, TopicPartition, TransactionState,
    find_coordinator,
};
use kafka_proto::messages::{
    DescribeProducersRequest, DescribeProducersRequestTopicRequest, InitProducerIdRequest,
    ListTransactionsRequest,
};
use kafka_proto::{ApiKey, ErrorCode};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Filters of [`list_transactions()`] (all empty: every transaction).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TransactionFilters {
    /// Only these states (`Ongoing`, `PrepareCommit`, `CompleteAbort`, ...).
    pub states: Vec<String>,
    /// Only these producer ids.
    pub producer_ids: Vec<i64>,
    /// Only transactions running longer than this (ListTransactions v1+).
    pub duration_filter: Option<Duration>,
    /// Only transactional ids matching this RE2/J regex (v2+, Kafka 4.1+).
    pub transactional_id_pattern: Option<String>,
}

impl TransactionFilters {
    /// Filters on states only.
    pub fn states(states: &[&str]) -> Self {
        Self {
            states: states.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }
}

/// One entry of [`list_transactions()`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionListing {
    /// The broker (coordinator) that listed it.
    pub coordinator: i32,
    /// Transactional id.
    pub transactional_id: String,
    /// Producer id.
    pub producer_id: i64,
    /// The coordinator's state of the transaction.
    pub state: TransactionState,
}

/// One entry of [`describe_transactions()`]: the coordinator's view of a
/// transactional id ([`TransactionSnapshot`]) and which broker coordinates it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionDescription {
    /// The coordinator's node id.
    pub coordinator: i32,
    /// The coordinator's view of the transaction.
    pub snapshot: TransactionSnapshot,
}

/// An active producer on a partition ([`describe_producers()`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProducerState {
    /// The partition.
    pub partition: TopicPartition,
    /// Producer id.
    pub producer_id: i64,
    /// Epoch.
    pub producer_epoch: i32,
    /// Last sequence written.
    pub last_sequence: i32,
    /// Last timestamp.
    pub last_timestamp: i64,
    /// Coordinator epoch of the last marker.
    pub coordinator_epoch: i32,
    /// First offset of the open transaction, -1 if none.
    pub current_txn_start_offset: i64,
}

/// What [`abort_lingering_transaction`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AbortedTransaction {
    /// The coordinator's view before (None: unknown id).
    pub before: Option<TransactionDescription>,
    /// The new pid/epoch the id was initialised with (the fenced producer's
    /// successor); any open transaction is aborted.
    pub new_producer: ProducerIdAndEpoch,
}

/// ListTransactions on every broker (each lists the transactions it
/// coordinates), merged.
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), Box<dyn std::error::Error>> {
/// use kafka_admin::{self as admin, TransactionFilters};
/// let filters = TransactionFilters {
///     duration_filter: Some(std::time::Duration::from_secs(15 * 60)),
///     ..TransactionFilters::states(&["Ongoing"])
/// };
/// let stale = admin::list_transactions(cluster, &filters).await?;
/// println!("{} transactions open for over 15 minutes", stale.len());
/// # Ok(()) }
/// ```
pub async fn list_transactions(
    cluster: &Cluster,
    filters: &TransactionFilters,
) -> Result<Vec<TransactionListing>, RequestError> {
    cluster.refresh().await?;
    let nodes: Vec<i32> = cluster.metadata().brokers().keys().copied().collect();
    let mut out = Vec::new();
    for node in nodes {
        let conn = cluster.connection(node).await?;
        let version = conn.versions().version_for::<ListTransactionsRequest>()?;
        let req = ListTransactionsRequest {
            state_filters: filters.states.clone(),
            producer_id_filters: filters.producer_ids.clone(),
            duration_filter: match filters.duration_filter {
                Some(d) if version >= 1 => d.as_millis() as i64,
                _ => -1,
            },
            transactional_id_pattern: if version >= 2 {
                filters.transactional_id_pattern.clone()
            } else {
                None
            },
            ..Default::default()
        };
        let resp = conn.send(&req, version).await?;
        let error = ErrorCode::from(resp.error_code);
        if !error.is_ok() {
            return Err(broker_error(ApiKey::ListTransactions, version, error, None));
        }
        for t in resp.transaction_states {
            if let Some(p) = &filters.transactional_id_pattern {
                // Older brokers cannot filter: keep exact/substring matches.
                if version < 2
                    && !t
                        .transactional_id
                        .contains(p.trim_matches(|c| c == '^' || c == '$' || c == '.' || c == '*'))
                {
                    continue;
                }
            }
            out.push(TransactionListing {
                coordinator: node,
                transactional_id: t.transactional_id,
                producer_id: t.producer_id,
                state: TransactionState::parse(&t.transaction_state),
            });
        }
    }
    Ok(out)
}

/// DescribeTransactions, each id sent to its coordinator.
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), Box<dyn std::error::Error>> {
/// let descs = kafka_admin::describe_transactions(cluster, &["orders-sink-0", "orders-sink-1"]).await?;
/// assert_eq!(descs.len(), 2);
/// # Ok(()) }
/// ```
pub async fn describe_transactions(
    cluster: &Cluster,
    transactional_ids: &[&str],
) -> Result<Vec<TransactionDescription>, RequestError> {
    let mut out = Vec::new();
    for id in transactional_ids {
        let c = find_coordinator(cluster, CoordinatorType::Transaction, id).await?;
        match describe_transaction_on(&c.connection, id).await? {
            Some(snapshot) => out.push(TransactionDescription {
                coordinator: c.node_id,
                snapshot,
            }),
            None => {
                return Err(broker_error(
                    ApiKey::DescribeTransactions,
                    0,
                    ErrorCode::TransactionalIdNotFound,
                    Some(id.to_string()),
                ));
            }
        }
    }
    Ok(out)
}

/// DescribeProducers, grouped by partition leader.
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), Box<dyn std::error::Error>> {
/// use kafka_client::TopicPartition;
/// use kafka_admin as admin;
/// let parts = [TopicPartition::new("orders", 0), TopicPartition::new("orders", 1)];
/// let open = admin::describe_producers(cluster, &parts).await?
///     .into_iter()
///     .filter(|p| p.current_txn_start_offset >= 0)
///     .count();
/// println!("{open} producers hold an open transaction");
/// # Ok(()) }
/// ```
pub async fn describe_producers(
    cluster: &Cluster,
    partitions: &[TopicPartition],
) -> Result<Vec<ProducerState>, RequestError> {
    let topics: Vec<String> = partitions.iter().map(|tp| tp.topic.to_string()).collect();
    cluster.refresh_topics(&topics).await?;
    let mut by_leader: BTreeMap<i32, BTreeMap<String, Vec<i32>>> = BTreeMap::new();
    for tp in partitions {
        let leader = cluster
            .metadata()
            .leader(&tp.topic, tp.partition)
            .ok_or_else(|| {
                broker_error(
                    ApiKey::Metadata,
                    -1,
                    ErrorCode::LeaderNotAvailable,
                    Some(tp.to_string()),
                )
            })?;
        by_leader
            .entry(leader)
            .or_default()
            .entry(tp.topic.to_string())
            .or_default()
            .push(tp.partition);
    }
    let mut out = Vec::new();
    for (leader, topics) in by_leader {
        let conn = cluster.connection(leader).await?;
        let req = DescribeProducersRequest {
            topics: topics
                .into_iter()
                .map(
                    |(name, partition_indexes)| DescribeProducersRequestTopicRequest {
                        name,
                        partition_indexes,
                        ..Default::default()
                    },
                )
                .collect(),
            ..Default::default()
        };
        let resp = conn.send_negotiated(&req).await?;
        for t in resp.topics {
            for p in t.partitions {
                let error = ErrorCode::from(p.error_code);
                if !error.is_ok() {
                    return Err(broker_error(
                        ApiKey::DescribeProducers,
                        0,
                        error,
                        p.error_message,
                    ));
                }
                for s in p.active_producers {
                    out.push(ProducerState {
                        partition: TopicPartition::new(t.name.as_str(), p.partition_index),
                        producer_id: s.producer_id,
                        producer_epoch: s.producer_epoch,
                        last_sequence: s.last_sequence,
                        last_timestamp: s.last_timestamp,
                        coordinator_epoch: s.coordinator_epoch,
                        current_txn_start_offset: s.current_txn_start_offset,
                    });
                }
            }
        }
    }
    Ok(out)
}

/// Aborts the open transaction of `transactional_id` (if any) the way a new
/// producer instance would. Use it on ids whose producer is gone:
/// 1. the transaction coordinator is looked up, and DescribeTransactions
///    records the transaction as it was (`before`);
/// 2. InitProducerId with that id fences the old epoch and makes the
///    coordinator abort the open transaction;
/// 3. CONCURRENT_TRANSACTIONS (the abort still under way) is retried with
///    backoff until the abort completes or `timeout` runs out.
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), Box<dyn std::error::Error>> {
/// use std::time::Duration;
/// let r = kafka_admin::abort_lingering_transaction(cluster, "orders-sink-0", Duration::from_secs(30)).await?;
/// if let Some(before) = &r.before {
///     println!("was {} at epoch {}", before.snapshot.state, before.snapshot.producer_epoch);
/// }
/// println!("fenced by {:?}", r.new_producer);
/// # Ok(()) }
/// ```
pub async fn abort_lingering_transaction(
    cluster: &Cluster,
    transactional_id: &str,
    timeout: Duration,
) -> Result<AbortedTransaction, RequestError> {
    let deadline = Instant::now() + timeout;
    let backoff = ExponentialBackoff {
        initial: Duration::from_millis(50),
        multiplier: 2.0,
        max: Duration::from_secs(1),
        jitter: 0.2,
    };
    let mut attempts = 0u32;
    let mut before = None;
    let mut described = false;
    let mut last_error = ErrorCode::None;
    loop {
        if attempts > 0 {
            if Instant::now() >= deadline {
                return Err(broker_error(
                    ApiKey::InitProducerId,
                    -1,
                    last_error,
                    Some(format!(
                        "lingering transaction of {transactional_id} not aborted within {timeout:?}"
                    )),
                ));
            }
            tokio::time::sleep(backoff.backoff(attempts - 1)).await;
        }
        attempts += 1;
        let c =
            match find_coordinator(cluster, CoordinatorType::Transaction, transactional_id).await {
                Ok(c) => c,
                Err(e) if e.is_retriable() => {
                    last_error = e.error_code().unwrap_or(ErrorCode::CoordinatorNotAvailable);
                    continue;
                }
                Err(e) => return Err(e),
            };
        if !described {
            before = describe_transaction_on(&c.connection, transactional_id)
                .await
                .ok()
                .flatten()
                .map(|snapshot| TransactionDescription {
                    coordinator: c.node_id,
                    snapshot,
                });
            described = true;
        }
        let version = c
            .connection
            .versions()
            .version_for::<InitProducerIdRequest>()?
            .min(5);
        let timeout_ms = before
            .as_ref()
            .map(|b| b.snapshot.timeout_ms)
            .filter(|t| *t > 0)
            .unwrap_or(60_000);
        let req = InitProducerIdRequest::transactional(transactional_id, timeout_ms);
        let resp = match c.connection.send(&req, version).await {
            Ok(r) => r,
            Err(e) if e.is_retriable() => continue,
            Err(e) => return Err(e.into()),
        };
        let error = ErrorCode::from(resp.error_code);
        match error {
            ErrorCode::None => {
                return Ok(AbortedTransaction {
                    before,
                    new_producer: ProducerIdAndEpoch {
                        producer_id: resp.producer_id,
                        epoch: resp.producer_epoch,
                    },
                });
            }
            e if e.is_retriable() => last_error = e,
            e => return Err(broker_error(ApiKey::InitProducerId, version, e, None)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `states` filters on the states only; the default lists every
    /// transaction.
    #[test]
    fn state_filters_leave_the_other_filters_empty() {
        let f = TransactionFilters::states(&["Ongoing", "PrepareCommit"]);
        assert_eq!(f.states, ["Ongoing", "PrepareCommit"]);
        assert!(f.producer_ids.is_empty() && f.duration_filter.is_none());
        assert!(TransactionFilters::default().states.is_empty());
    }
}
