//! # kafka-admin
//!
//! Administration of a Kafka cluster for kafka-eos (franz-go's `kadm`, Java's
//! `Admin`): functions on a [`Cluster`]. Most applications use it through
//! the `kafka-eos` crate's `admin` module.
//!
//! Create, delete and grow topics ([`create_topics()`],
//! [`ensure_topic()`], [`delete_topics()`], [`create_partitions()`]),
//! list, describe and delete consumer groups ([`list_groups()`],
//! [`describe_group()`], [`delete_groups()`]), read a group's committed
//! offsets ([`committed_offsets()`]),
//! list and describe transactions and producers, abort a lingering
//! transaction, read broker and topic configs (CreateTopics, DeleteTopics,
//! CreatePartitions,
//! ListTransactions, DescribeTransactions, DescribeProducers,
//! InitProducerId, DescribeConfigs).
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use kafka_admin::{self as admin, TransactionFilters};
//! use kafka_client::{Cluster, ClusterConfig};
//! let cluster = Cluster::connect(ClusterConfig::new("127.0.0.1:9092")).await?;
//! let open = admin::list_transactions(&cluster, &TransactionFilters::states(&["Ongoing"])).await?;
//! for t in &open {
//!     let aborted = admin::abort_lingering_transaction(&cluster, &t.transactional_id, std::time::Duration::from_secs(30)).await?;
//!     println!("aborted {aborted:?}");
//! }
//! # Ok(()) }
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

use kafka_client::TopicPartition;
use kafka_client::backoff::ExponentialBackoff;
use kafka_client::describe_configs::describe_config_entries;
use kafka_client::{Cluster, Connection};
use kafka_client::{
    CoordinatorError, CoordinatorType, ProducerIdAndEpoch, TransactionState, find_coordinator,
};
use kafka_proto::messages::*;
use kafka_proto::{ApiKey, ErrorCode};
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

pub use kafka_client::describe_configs::{broker_config_on, describe_configs_on};

mod change;
mod groups;
mod topics;
pub use change::{TopicChangeError, TopicChangeResult, create_partitions, delete_topics};
pub use groups::{
    GroupDescription, GroupListing, GroupMember, GroupState, committed_offsets, delete_groups,
    describe_group, list_groups,
};
pub use topics::{
    AdminError, CreateTopicError, CreateTopicResult, CreateTopicsOptions, EnsuredTopic, NewTopic,
    TopicDetails, TopicOutcome, create_topics, ensure_topic,
};

/// Filters of [`list_transactions()`] (all empty: every transaction).
///
/// ```
/// use kafka_admin::TransactionFilters;
/// let filters = TransactionFilters {
///     producer_ids: vec![4001],
///     duration_filter: Some(std::time::Duration::from_secs(600)),
///     ..TransactionFilters::states(&["Ongoing"])
/// };
/// assert_eq!(filters.states, ["Ongoing"]);
/// assert!(TransactionFilters::default().states.is_empty());
/// ```
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
    ///
    /// ```
    /// use kafka_admin::TransactionFilters;
    /// let f = TransactionFilters::states(&["Ongoing", "PrepareCommit"]);
    /// assert_eq!(f.states, ["Ongoing", "PrepareCommit"]);
    /// assert!(f.producer_ids.is_empty() && f.duration_filter.is_none());
    /// ```
    pub fn states(states: &[&str]) -> Self {
        Self {
            states: states.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }
}

/// One entry of [`list_transactions()`].
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), Box<dyn std::error::Error>> {
/// use kafka_admin::{self as admin, TransactionFilters};
/// for t in admin::list_transactions(cluster, &TransactionFilters::default()).await? {
///     println!("{} (pid {}) on broker {}: {}", t.transactional_id, t.producer_id, t.coordinator, t.state);
/// }
/// # Ok(()) }
/// ```
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

/// One entry of [`describe_transactions()`].
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), Box<dyn std::error::Error>> {
/// for d in kafka_admin::describe_transactions(cluster, &["orders-sink-0"]).await? {
///     println!("{} at epoch {}, partitions {:?}", d.state, d.producer_epoch, d.partitions);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionDescription {
    /// The coordinator.
    pub coordinator: i32,
    /// Transactional id.
    pub transactional_id: String,
    /// The coordinator's state of the transaction.
    pub state: TransactionState,
    /// `transaction.timeout.ms`.
    pub timeout_ms: i32,
    /// Start of the open transaction (ms since the epoch; -1 if none).
    pub start_time_ms: i64,
    /// Producer id.
    pub producer_id: i64,
    /// Producer epoch.
    pub producer_epoch: i16,
    /// Partitions in the transaction.
    pub partitions: Vec<TopicPartition>,
}

/// An active producer on a partition ([`describe_producers()`]).
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), Box<dyn std::error::Error>> {
/// use kafka_client::TopicPartition;
/// use kafka_admin as admin;
/// for p in admin::describe_producers(cluster, &[TopicPartition::new("orders", 0)]).await? {
///     println!("pid {} epoch {} last seq {}", p.producer_id, p.producer_epoch, p.last_sequence);
/// }
/// # Ok(()) }
/// ```
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
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), Box<dyn std::error::Error>> {
/// use std::time::Duration;
/// let r = kafka_admin::abort_lingering_transaction(cluster, "orders-sink-0", Duration::from_secs(30)).await?;
/// if let Some(before) = &r.before {
///     println!("was {} at epoch {}", before.state, before.producer_epoch);
/// }
/// println!("now {:?}", r.new_producer);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AbortedTransaction {
    /// The coordinator's view before (None: unknown id).
    pub before: Option<TransactionDescription>,
    /// The new pid/epoch the id was initialised with (the fenced producer's
    /// successor); any open transaction is aborted.
    pub new_producer: ProducerIdAndEpoch,
}

fn broker_err(
    api: ApiKey,
    version: i16,
    error: ErrorCode,
    message: Option<String>,
) -> CoordinatorError {
    CoordinatorError::Broker {
        api,
        version,
        error,
        message,
    }
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
) -> Result<Vec<TransactionListing>, CoordinatorError> {
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
            return Err(broker_err(ApiKey::ListTransactions, version, error, None));
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
) -> Result<Vec<TransactionDescription>, CoordinatorError> {
    let mut out = Vec::new();
    for id in transactional_ids {
        let c = find_coordinator(cluster, CoordinatorType::Transaction, id).await?;
        match describe_on(&c.connection, c.node_id, id).await? {
            Some(d) => out.push(d),
            None => {
                return Err(broker_err(
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

async fn describe_on(
    conn: &Connection,
    node: i32,
    id: &str,
) -> Result<Option<TransactionDescription>, CoordinatorError> {
    let req = DescribeTransactionsRequest {
        transactional_ids: vec![id.to_string()],
        ..Default::default()
    };
    let resp = conn.send_negotiated(&req).await?;
    let Some(s) = resp.transaction_states.into_iter().next() else {
        return Ok(None);
    };
    match ErrorCode::from(s.error_code) {
        ErrorCode::None => Ok(Some(TransactionDescription {
            coordinator: node,
            transactional_id: s.transactional_id,
            state: TransactionState::parse(&s.transaction_state),
            timeout_ms: s.transaction_timeout_ms,
            start_time_ms: s.transaction_start_time_ms,
            producer_id: s.producer_id,
            producer_epoch: s.producer_epoch,
            partitions: s
                .topics
                .iter()
                .flat_map(|t| {
                    t.partitions
                        .iter()
                        .map(|p| TopicPartition::new(t.topic.as_str(), *p))
                })
                .collect(),
        })),
        ErrorCode::TransactionalIdNotFound => Ok(None),
        e => Err(broker_err(
            ApiKey::DescribeTransactions,
            0,
            e,
            Some(id.to_string()),
        )),
    }
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
) -> Result<Vec<ProducerState>, CoordinatorError> {
    let topics: Vec<String> = partitions.iter().map(|tp| tp.topic.to_string()).collect();
    cluster.refresh_topics(&topics).await?;
    let mut by_leader: BTreeMap<i32, BTreeMap<String, Vec<i32>>> = BTreeMap::new();
    for tp in partitions {
        let leader = cluster
            .metadata()
            .leader(&tp.topic, tp.partition)
            .ok_or_else(|| {
                broker_err(
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
                    return Err(broker_err(
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
/// producer instance would: InitProducerId with that id fences the old epoch
/// and aborts the transaction (CONCURRENT_TRANSACTIONS is retried with
/// backoff until the abort completes). Use it on ids whose producer is gone.
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), Box<dyn std::error::Error>> {
/// use std::time::Duration;
/// let aborted = kafka_admin::abort_lingering_transaction(cluster, "orders-sink-0", Duration::from_secs(30)).await?;
/// println!("fenced by {:?}", aborted.new_producer);
/// # Ok(()) }
/// ```
pub async fn abort_lingering_transaction(
    cluster: &Cluster,
    transactional_id: &str,
    timeout: Duration,
) -> Result<AbortedTransaction, CoordinatorError> {
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
                return Err(broker_err(
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
            before = describe_on(&c.connection, c.node_id, transactional_id)
                .await
                .ok()
                .flatten();
            described = true;
        }
        let version = c
            .connection
            .versions()
            .version_for::<InitProducerIdRequest>()?
            .min(5);
        let timeout_ms = before
            .as_ref()
            .map(|b| b.timeout_ms)
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
            e => return Err(broker_err(ApiKey::InitProducerId, version, e, None)),
        }
    }
}

/// DescribeConfigs of broker `node` (BROKER resource) for `keys`; a key the
/// broker does not know is absent; a null value is `None`.
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), Box<dyn std::error::Error>> {
/// let node = *cluster.metadata().brokers().keys().next().expect("a broker");
/// let cfg = kafka_admin::broker_config(cluster, node, &["transaction.max.timeout.ms"]).await?;
/// println!("max timeout: {:?}", cfg.get("transaction.max.timeout.ms"));
/// # Ok(()) }
/// ```
pub async fn broker_config(
    cluster: &Cluster,
    node: i32,
    keys: &[&str],
) -> Result<HashMap<String, Option<String>>, CoordinatorError> {
    let conn = cluster.connection(node).await?;
    broker_config_on(&conn, node, keys).await
}

/// DescribeConfigs of `topic` (TOPIC resource) on any broker: the values in
/// force, defaults included; `keys` empty: every config. A null (sensitive)
/// value is `None`.
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), kafka_client::CoordinatorError> {
/// let cfg = kafka_admin::topic_config(cluster, "orders", &["cleanup.policy", "retention.ms"]).await?;
/// println!("cleanup.policy = {:?}", cfg.get("cleanup.policy"));
/// # Ok(()) }
/// ```
pub async fn topic_config(
    cluster: &Cluster,
    topic: &str,
    keys: &[&str],
) -> Result<HashMap<String, Option<String>>, CoordinatorError> {
    let conn = cluster.any_connection().await?;
    let keys = (!keys.is_empty()).then_some(keys);
    describe_configs_on(&conn, 2, topic, keys).await // 2: TOPIC
}

/// DescribeConfigs of `topic` on any broker, only the configs set on the
/// topic itself (source DYNAMIC_TOPIC_CONFIG), as Kafka's `kafka-topics.sh
/// --describe` shows them. A sensitive value is `None`.
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), kafka_client::CoordinatorError> {
/// for (k, v) in kafka_admin::topic_config_overrides(cluster, "orders").await? {
///     println!("{k}={}", v.as_deref().unwrap_or("<sensitive>"));
/// }
/// # Ok(()) }
/// ```
pub async fn topic_config_overrides(
    cluster: &Cluster,
    topic: &str,
) -> Result<BTreeMap<String, Option<String>>, CoordinatorError> {
    const DYNAMIC_TOPIC_CONFIG: i8 = 1;
    let conn = cluster.any_connection().await?;
    Ok(describe_config_entries(&conn, 2, topic, None) // 2: TOPIC
        .await?
        .into_iter()
        .filter(|c| c.config_source == DYNAMIC_TOPIC_CONFIG)
        .map(|c| (c.name, c.value))
        .collect())
}
