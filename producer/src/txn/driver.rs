//! The tokio driver of the [`TransactionManager`] (the sans-IO machine),
//! as quinn's `ConnectionDriver` drives its `Connection`: it executes the
//! manager's coordinator requests against a [`Cluster`] and feeds the
//! answers back.

use super::interface::{CoordinatorRequest, CoordinatorResponse, OpTicket, RequestBody, Target};
use super::{
    CoordinatorType, GroupMetadata, OffsetAndMetadata, ProducerIdAndEpoch, RequestError,
    TransactionError, TransactionManager, TransactionVersion, TxnConfig, TxnOp, find_coordinator,
};
use crate::Cluster;
use kafka_client::TopicPartition;
use kafka_client::{ClusterError, ConnError};
use kafka_proto::messages::*;
use kafka_proto::{ApiKey, ErrorCode};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Drives a [`TransactionManager`] against a [`Cluster`]: FindCoordinator,
/// InitProducerId (v<=5), AddPartitionsToTxn (v<=3), AddOffsetsToTxn (v<=4),
/// TxnOffsetCommit (to the group coordinator; v<=4 under TV1, v5 under TV2),
/// EndTxn (v<=4 TV1, v5 TV2). The manager is shared (`Arc<Mutex<_>>`) with
/// the producer core, which calls its hooks.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use kafka_producer::internals::{TxnConfig, TxnDriver};
/// use kafka_client::{Cluster, ClusterConfig};
/// use std::time::Duration;
/// let cluster = Cluster::connect(ClusterConfig::new("127.0.0.1:9092")).await?;
/// let driver = TxnDriver::new(cluster, TxnConfig::new("writer-1"));
/// driver.init_transactions(Duration::from_secs(60)).await?;
/// driver.begin_transaction()?;
/// // ... the producer core sends records, calling the manager's hooks ...
/// driver.commit_transaction(Duration::from_secs(60)).await?;
/// # Ok(()) }
/// ```
pub struct TxnDriver {
    cluster: Arc<Cluster>,
    manager: Arc<Mutex<TransactionManager>>,
    incomplete_batches: Arc<dyn Fn() -> bool + Send + Sync>,
    check_timeout: bool,
}

impl std::fmt::Debug for TxnDriver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TxnDriver")
            .field("manager", &self.manager)
            .finish_non_exhaustive()
    }
}

impl TxnDriver {
    /// A driver for a new manager with `config`.
    pub fn new(cluster: Arc<Cluster>, config: TxnConfig) -> Self {
        Self::with_manager(
            cluster,
            Arc::new(Mutex::new(TransactionManager::new(config))),
        )
    }

    /// A driver for an existing (shared) manager.
    pub fn with_manager(cluster: Arc<Cluster>, manager: Arc<Mutex<TransactionManager>>) -> Self {
        Self {
            cluster,
            manager,
            incomplete_batches: Arc::new(|| false),
            check_timeout: true,
        }
    }

    /// The producer core's "are transactional batches still incomplete?"
    /// probe: EndTxn is held while it returns true.
    pub fn set_incomplete_batches_probe(&mut self, probe: Arc<dyn Fn() -> bool + Send + Sync>) {
        self.incomplete_batches = probe;
    }

    /// Whether `init_transactions` checks `transaction.timeout.ms` against
    /// the broker's `transaction.max.timeout.ms` (default true).
    pub fn set_check_transaction_timeout(&mut self, on: bool) {
        self.check_timeout = on;
    }

    /// The shared manager.
    pub fn manager(&self) -> &Arc<Mutex<TransactionManager>> {
        &self.manager
    }

    /// Locks the manager.
    pub fn lock(&self) -> MutexGuard<'_, TransactionManager> {
        self.manager.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `initTransactions`: checks `transaction.timeout.ms` against the
    /// coordinator's `transaction.max.timeout.ms` (DescribeConfigs), then
    /// FindCoordinator + InitProducerId. On timeout call it again.
    pub async fn init_transactions(&self, timeout: Duration) -> Result<(), TransactionError> {
        let (first, requested, id) = {
            let m = self.lock();
            (
                m.state() == super::State::Uninitialized,
                m.config().transaction_timeout.as_millis() as i64,
                m.config().transactional_id.clone(),
            )
        };
        if first && self.check_timeout {
            self.check_transaction_timeout(&id, requested).await?;
        }
        let ticket = self.lock().init_transactions()?;
        self.wait(ticket, TxnOp::InitTransactions, timeout).await
    }

    async fn check_transaction_timeout(
        &self,
        id: &str,
        requested_ms: i64,
    ) -> Result<(), TransactionError> {
        let coord = match find_coordinator(&self.cluster, CoordinatorType::Transaction, id).await {
            Ok(c) => c,
            Err(e) => {
                tracing::debug!(error = %e, "cannot check transaction.max.timeout.ms yet");
                return Ok(());
            }
        };
        match kafka_client::requests::describe_configs::broker_config_on(
            &coord.connection,
            coord.node_id,
            &["transaction.max.timeout.ms"],
        )
        .await
        {
            Ok(cfg) => {
                if let Some(max) = cfg
                    .get("transaction.max.timeout.ms")
                    .and_then(|v| v.as_deref())
                    .and_then(|v| v.parse::<i64>().ok())
                    && requested_ms > max
                {
                    return Err(TransactionError::TransactionTimeoutTooLarge {
                        requested_ms,
                        broker_max_ms: max,
                    });
                }
                Ok(())
            }
            Err(e) => {
                tracing::warn!(error = %e, "DescribeConfigs transaction.max.timeout.ms failed; not checked");
                Ok(())
            }
        }
    }

    /// `beginTransaction`.
    pub fn begin_transaction(&self) -> Result<(), TransactionError> {
        self.lock().begin_transaction()
    }

    /// `sendOffsetsToTransaction`.
    pub async fn send_offsets_to_transaction(
        &self,
        offsets: BTreeMap<TopicPartition, OffsetAndMetadata>,
        group: GroupMetadata,
        timeout: Duration,
    ) -> Result<(), TransactionError> {
        let ticket = self.lock().send_offsets_to_transaction(offsets, group)?;
        self.wait(ticket, TxnOp::SendOffsets, timeout).await
    }

    /// `commitTransaction`. On timeout call it again (same operation).
    pub async fn commit_transaction(&self, timeout: Duration) -> Result<(), TransactionError> {
        let ticket = self.lock().commit_transaction()?;
        self.wait(ticket, TxnOp::CommitTransaction, timeout).await
    }

    /// `abortTransaction`. On timeout call it again (same operation).
    pub async fn abort_transaction(&self, timeout: Duration) -> Result<(), TransactionError> {
        let ticket = self.lock().abort_transaction()?;
        self.wait(ticket, TxnOp::AbortTransaction, timeout).await
    }

    /// Drives coordinator requests until `ticket` completes or `timeout`
    /// elapses ([`TransactionError::Timeout`]; the operation stays pending).
    pub async fn wait(
        &self,
        ticket: OpTicket,
        op: TxnOp,
        timeout: Duration,
    ) -> Result<(), TransactionError> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(r) = self.lock().poll_result(ticket) {
                return r;
            }
            let now = Instant::now();
            if now >= deadline {
                // Still pending: it may complete in the background.
                return Err(TransactionError::Timeout {
                    op,
                    outcome_unknown: true,
                });
            }
            if !self.run_once(deadline).await {
                let wake = self.lock().poll_timeout();
                let until = wake.unwrap_or(now + Duration::from_millis(5)).min(deadline);
                tokio::time::sleep_until(until.into()).await;
            }
        }
    }

    /// Sends at most one coordinator request and feeds its answer back.
    /// Returns false when nothing was ready to send.
    pub async fn run_once(&self, deadline: Instant) -> bool {
        // "No incomplete batch" is final only once no record can join the
        // transaction any more (commit/abort began: `on_partition_used`
        // refuses). So the state is read before the probe: a record appended
        // and a commit begun between the two are then seen by the probe, or
        // the EndTxn waits for the next round. Probing first could release
        // an EndTxn ahead of a batch appended just after the probe.
        let completing = matches!(
            self.lock().state(),
            super::State::CommittingTransaction | super::State::AbortingTransaction
        );
        let incomplete = (self.incomplete_batches)();
        let Some(req) = self
            .lock()
            .poll_request(Instant::now(), incomplete || !completing)
        else {
            return false;
        };
        let id = req.id;
        // Cancel safety: if this future is dropped with the request in
        // flight (a caller's timeout around `init_transactions`, the driver
        // task aborted), the request counts as disconnected and is retried;
        // otherwise the manager would wait for its answer forever.
        let mut guard = InFlight {
            driver: self,
            id: Some(id),
        };
        let remaining = deadline.saturating_duration_since(Instant::now());
        let fut = self.execute(req);
        // Do not hold the request past the caller's deadline: a late answer
        // counts as a disconnect (the same request is retried).
        let outcome = match tokio::time::timeout(remaining.max(Duration::from_millis(1)), fut).await
        {
            Ok(o) => o,
            Err(_) => Outcome::Disconnected("deadline".into()),
        };
        guard.id = None;
        let mut m = self.lock();
        let now = Instant::now();
        match outcome {
            Outcome::Response(version, resp) => m.handle_response(id, version, resp, now),
            Outcome::Disconnected(why) => {
                tracing::debug!(why, "coordinator request failed; rediscovering");
                m.handle_disconnect(id, now)
            }
            Outcome::VersionMismatch(why) => m.handle_version_mismatch(id, &why),
        }
        true
    }

    async fn execute(&self, req: CoordinatorRequest) -> Outcome {
        match self.execute_inner(req).await {
            Ok((v, r)) => Outcome::Response(v, r),
            Err(ExecError::Version(s)) => Outcome::VersionMismatch(s),
            Err(ExecError::Io(s)) => Outcome::Disconnected(s),
        }
    }

    async fn execute_inner(
        &self,
        req: CoordinatorRequest,
    ) -> Result<(i16, CoordinatorResponse), ExecError> {
        let conn = match req.target {
            Target::AnyBroker => self
                .cluster
                .any_connection()
                .await
                .map_err(ExecError::from_cluster)?,
            Target::Node(n) => self
                .cluster
                .connection(n)
                .await
                .map_err(ExecError::from_cluster)?,
        };
        if let (Target::Node(_), RequestBody::InitProducerId { .. } | RequestBody::EndTxn { .. }) =
            (&req.target, &req.body)
        {
            let v = conn.versions();
            let at_least = |api, min| v.negotiated_version(api).is_some_and(|x| x >= min);
            let tv2 = v.transaction_version().unwrap_or(0) >= 2
                && at_least(ApiKey::Produce, 12)
                && at_least(ApiKey::EndTxn, 5)
                && at_least(ApiKey::TxnOffsetCommit, 5);
            self.lock()
                .set_coordinator_capabilities(at_least(ApiKey::InitProducerId, 3), tv2);
        }
        let neg = |api: ApiKey| -> Result<i16, ExecError> {
            conn.negotiated_version(api)
                .ok_or_else(|| ExecError::Version(format!("no common version of {api:?}")))
        };
        match req.body {
            RequestBody::FindCoordinator { key_type, key } => {
                let kafka_client::CoordinatorAnswer {
                    version,
                    error,
                    node_id,
                    host,
                    port,
                    ..
                } = kafka_client::find_coordinator_on(&conn, key_type, &key)
                    .await
                    .map_err(ExecError::from_coord)?;
                if error.is_ok() && self.cluster.metadata().broker(node_id).is_none() {
                    self.cluster
                        .pool()
                        .set_address(node_id, &format!("{host}:{port}"));
                }
                Ok((
                    version,
                    CoordinatorResponse::FindCoordinator { error, node_id },
                ))
            }
            RequestBody::InitProducerId {
                transactional_id,
                transaction_timeout_ms,
                producer,
            } => {
                let version = neg(ApiKey::InitProducerId)?.min(5);
                if producer.is_valid() && version < 3 {
                    return Err(ExecError::Version(format!(
                        "InitProducerId v{version} cannot bump an epoch (needs v3)"
                    )));
                }
                let r = conn
                    .send(
                        &InitProducerIdRequest {
                            transactional_id: Some(transactional_id),
                            transaction_timeout_ms,
                            producer_id: if version >= 3 {
                                producer.producer_id
                            } else {
                                -1
                            },
                            producer_epoch: if version >= 3 { producer.epoch } else { -1 },
                            ..Default::default()
                        },
                        version,
                    )
                    .await
                    .map_err(ExecError::from_conn)?;
                Ok((
                    version,
                    CoordinatorResponse::InitProducerId {
                        error: ErrorCode::from(r.error_code),
                        producer: ProducerIdAndEpoch {
                            producer_id: r.producer_id,
                            epoch: r.producer_epoch,
                        },
                    },
                ))
            }
            RequestBody::AddPartitionsToTxn {
                transactional_id,
                producer,
                partitions,
            } => {
                let version = neg(ApiKey::AddPartitionsToTxn)?.min(3);
                let mut topics: BTreeMap<String, Vec<i32>> = BTreeMap::new();
                for tp in &partitions {
                    topics
                        .entry(tp.topic.to_string())
                        .or_default()
                        .push(tp.partition);
                }
                let r = conn
                    .send(
                        &AddPartitionsToTxnRequest {
                            v3_and_below_transactional_id: transactional_id,
                            v3_and_below_producer_id: producer.producer_id,
                            v3_and_below_producer_epoch: producer.epoch,
                            v3_and_below_topics: topics
                                .into_iter()
                                .map(|(name, partitions)| AddPartitionsToTxnRequestTopic {
                                    name,
                                    partitions,
                                    ..Default::default()
                                })
                                .collect(),
                            ..Default::default()
                        },
                        version,
                    )
                    .await
                    .map_err(ExecError::from_conn)?;
                let mut results = Vec::new();
                for t in &r.results_by_topic_v3_and_below {
                    for p in &t.results_by_partition {
                        results.push((
                            TopicPartition::new(t.name.as_str(), p.partition_index),
                            ErrorCode::from(p.partition_error_code),
                        ));
                    }
                }
                Ok((version, CoordinatorResponse::AddPartitionsToTxn { results }))
            }
            RequestBody::AddOffsetsToTxn {
                transactional_id,
                producer,
                group_id,
            } => {
                let version = neg(ApiKey::AddOffsetsToTxn)?.min(4);
                let r = conn
                    .send(
                        &AddOffsetsToTxnRequest {
                            transactional_id,
                            producer_id: producer.producer_id,
                            producer_epoch: producer.epoch,
                            group_id,
                            ..Default::default()
                        },
                        version,
                    )
                    .await
                    .map_err(ExecError::from_conn)?;
                Ok((
                    version,
                    CoordinatorResponse::AddOffsetsToTxn {
                        error: ErrorCode::from(r.error_code),
                    },
                ))
            }
            RequestBody::TxnOffsetCommit {
                transactional_id,
                producer,
                group,
                offsets,
                transaction_version,
            } => {
                let max = neg(ApiKey::TxnOffsetCommit)?;
                let version = match transaction_version {
                    TransactionVersion::V1 => max.min(4),
                    TransactionVersion::V2 if max >= 5 => 5,
                    TransactionVersion::V2 => {
                        return Err(ExecError::Version(
                            "TxnOffsetCommit v5 needed under TV2".into(),
                        ));
                    }
                };
                let mut topics: BTreeMap<String, Vec<TxnOffsetCommitRequestPartition>> =
                    BTreeMap::new();
                for (tp, o) in &offsets {
                    topics.entry(tp.topic.to_string()).or_default().push(
                        TxnOffsetCommitRequestPartition {
                            partition_index: tp.partition,
                            committed_offset: o.offset,
                            committed_leader_epoch: o.leader_epoch.unwrap_or(-1),
                            committed_metadata: o.metadata.clone(),
                            ..Default::default()
                        },
                    );
                }
                let mut msg = TxnOffsetCommitRequest {
                    transactional_id,
                    group_id: group.group_id.clone(),
                    producer_id: producer.producer_id,
                    producer_epoch: producer.epoch,
                    topics: topics
                        .into_iter()
                        .map(|(name, partitions)| TxnOffsetCommitRequestTopic {
                            name,
                            partitions,
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                };
                if version >= 3 {
                    msg.generation_id_or_member_epoch = group.generation_id;
                    msg.member_id = group.member_id.clone();
                    msg.group_instance_id = group.group_instance_id.clone();
                }
                let r = conn
                    .send(&msg, version)
                    .await
                    .map_err(ExecError::from_conn)?;
                let mut results = Vec::new();
                for t in &r.topics {
                    for p in &t.partitions {
                        results.push((
                            TopicPartition::new(t.name.as_str(), p.partition_index),
                            ErrorCode::from(p.error_code),
                        ));
                    }
                }
                Ok((version, CoordinatorResponse::TxnOffsetCommit { results }))
            }
            RequestBody::EndTxn {
                transactional_id,
                producer,
                committed,
                transaction_version,
            } => {
                let max = neg(ApiKey::EndTxn)?;
                let version = match transaction_version {
                    TransactionVersion::V1 => max.min(4),
                    TransactionVersion::V2 if max >= 5 => 5,
                    TransactionVersion::V2 => {
                        return Err(ExecError::Version("EndTxn v5 needed under TV2".into()));
                    }
                };
                let r = conn
                    .send(
                        &EndTxnRequest {
                            transactional_id,
                            producer_id: producer.producer_id,
                            producer_epoch: producer.epoch,
                            committed,
                            ..Default::default()
                        },
                        version,
                    )
                    .await
                    .map_err(ExecError::from_conn)?;
                Ok((
                    version,
                    CoordinatorResponse::EndTxn {
                        error: ErrorCode::from(r.error_code),
                        producer: (version >= 5).then_some(ProducerIdAndEpoch {
                            producer_id: r.producer_id,
                            epoch: r.producer_epoch,
                        }),
                    },
                ))
            }
        }
    }
}

/// Puts a request back when `run_once` is dropped while it is in flight.
struct InFlight<'a> {
    driver: &'a TxnDriver,
    id: Option<u64>,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            tracing::debug!(id, "coordinator request abandoned; it will be retried");
            self.driver.lock().handle_disconnect(id, Instant::now());
        }
    }
}

enum Outcome {
    Response(i16, CoordinatorResponse),
    Disconnected(String),
    VersionMismatch(String),
}

enum ExecError {
    Io(String),
    Version(String),
}

impl ExecError {
    fn from_conn(e: ConnError) -> Self {
        match e {
            ConnError::UnsupportedVersion { .. } | ConnError::Encode(_) => {
                ExecError::Version(e.to_string())
            }
            e => ExecError::Io(e.to_string()),
        }
    }

    fn from_cluster(e: ClusterError) -> Self {
        match e {
            ClusterError::Conn(c) => Self::from_conn(c),
            e => ExecError::Io(e.to_string()),
        }
    }

    fn from_coord(e: RequestError) -> Self {
        match e {
            RequestError::Cluster(c) => Self::from_cluster(c),
            e => ExecError::Io(e.to_string()),
        }
    }
}
