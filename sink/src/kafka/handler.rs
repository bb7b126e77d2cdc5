//! [`KafkaSinkHandler`], the [`TwoPhaseCommitHandler`] of the Kafka sink:
//! the pool of transactional producers (EXACTLY_ONCE) or the shared
//! idempotent producer (AT_LEAST_ONCE / NONE), record sends with
//! back-pressure, pre-commit, commit and abort, and recovery of restored
//! transactions.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kafka_client::Cluster;
use kafka_producer::txn::{ResumeOptions, abort_prepared};
use kafka_producer::txn::{TransactionError, commit_prepared};
use kafka_producer::{
    ProduceError, Producer, ProducerRecord, RecordMetadata, TransactionalProducer,
};

use crate::two_phase::{CommitOutcome, PreCommitted, RecordContext, TwoPhaseCommitHandler};

use super::recovery::{abort_all, abort_lingering, age_of, settle};
use super::{
    AsyncKafkaSerializationSchema, KafkaSerializationSchema, KafkaSinkConfig, KafkaSinkError,
    KafkaTransaction, NextTransactionalIdHint, Semantic,
};

type SendFuture = Pin<Box<dyn Future<Output = Result<RecordMetadata, ProduceError>> + Send>>;

/// The sink's serialization schema: synchronous ones are called as they are
/// (no future per record); asynchronous ones are awaited, and may fail.
pub(super) enum SinkSchema<T> {
    /// A [`KafkaSerializationSchema`]: infallible, no I/O.
    Sync(Arc<dyn KafkaSerializationSchema<T>>),
    /// An [`AsyncKafkaSerializationSchema`] (a schema registry's).
    Async(Arc<dyn AsyncKafkaSerializationSchema<T>>),
}

/// In-flight sends kept before awaiting the oldest (back-pressure).
const MAX_IN_FLIGHT: usize = 16_384;

/// The [`TwoPhaseCommitHandler`] of the Kafka sink (use it through
/// [`KafkaSink`](super::KafkaSink)).
///
/// ```no_run
/// # async fn example() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// use kafka_producer::ProducerConfig;
/// use kafka_sink::kafka::{KafkaSink, KafkaSinkConfig, KafkaSinkRecord, Semantic};
/// let mut config = KafkaSinkConfig::new(ProducerConfig::new("broker-1:9092"), "orders-out");
/// config.semantic = Semantic::ExactlyOnce;
/// let mut sink = KafkaSink::connect(config, |v: &String| KafkaSinkRecord::value(v.clone())).await?;
/// let handler = sink.sink().handler(); // a KafkaSinkHandler<String>
/// println!("{handler:?}"); // semantic, prefix, free ids, producers
/// # Ok(()) }
/// ```
pub struct KafkaSinkHandler<T> {
    /// The sink's options.
    pub(super) config: KafkaSinkConfig,
    /// Turns inputs into records.
    schema: SinkSchema<T>,
    /// The cluster (EXACTLY_ONCE: for recovery and admin calls).
    pub(super) cluster: Arc<Cluster>,
    /// The shared producer of AT_LEAST_ONCE / NONE.
    pub(super) shared: Option<Producer>,
    /// EXACTLY_ONCE: one producer per transactional id in use.
    pub(super) producers: HashMap<String, TransactionalProducer>,
    /// Ids of the pool free for the next transaction.
    available: VecDeque<String>,
    in_flight: VecDeque<SendFuture>,
    /// The first acknowledged offset per (topic, partition) of the open
    /// transaction's records (pre-commit stores them in the handle).
    first_offsets: Vec<(Arc<str>, i32, i64)>,
    /// The id hint restored or last written.
    pub(super) hint: NextTransactionalIdHint,
    resume: ResumeOptions,
    /// Send failures dropped under `log_failures_only`.
    pub(super) logged_failures: u64,
}

impl<T> fmt::Debug for KafkaSinkHandler<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KafkaSinkHandler")
            .field("semantic", &self.config.semantic)
            .field("prefix", &self.config.prefix())
            .field("available", &self.available)
            .field("producers", &self.producers.keys().collect::<Vec<_>>())
            .field("in_flight", &self.in_flight.len())
            .field("hint", &self.hint)
            .finish_non_exhaustive()
    }
}

/// Runs `op` (`commit_transaction` or `abort_transaction`) again while it
/// times out, for at most `bound` in total. A timeout means only that
/// `max.block.ms` passed before the coordinator answered (a loaded broker):
/// the outcome is unknown and the producer requires the **same** operation
/// to be called again, which waits for that outcome. Past `bound` (the
/// transaction timeout) the last timeout is returned.
async fn retry_timeouts<F, Fut>(bound: Duration, mut op: F) -> Result<(), TransactionError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<(), TransactionError>>,
{
    let deadline = Instant::now() + bound;
    loop {
        match op().await {
            Err(e @ TransactionError::Timeout { .. }) if Instant::now() < deadline => {
                tracing::warn!(error = %e, "transaction operation timed out; calling it again");
            }
            r => return r,
        }
    }
}

fn txn_err(id: &str) -> impl FnOnce(TransactionError) -> KafkaSinkError + '_ {
    move |source| KafkaSinkError::Transaction {
        transactional_id: id.to_owned(),
        source,
    }
}

impl<T> KafkaSinkHandler<T> {
    /// A handler with an empty pool (filled by `initialize_user_context`);
    /// `shared` is the producer of AT_LEAST_ONCE / NONE.
    pub(super) fn new(
        config: KafkaSinkConfig,
        schema: SinkSchema<T>,
        cluster: Arc<Cluster>,
        shared: Option<Producer>,
    ) -> Self {
        KafkaSinkHandler {
            resume: ResumeOptions {
                timeout: config.recovery_timeout,
                ..ResumeOptions::default()
            },
            config,
            schema,
            cluster,
            shared,
            producers: HashMap::new(),
            available: VecDeque::new(),
            in_flight: VecDeque::new(),
            first_offsets: Vec::new(),
            hint: NextTransactionalIdHint::default(),
            logged_failures: 0,
        }
    }

    pub(super) fn exactly_once(&self) -> bool {
        self.config.semantic == Semantic::ExactlyOnce
    }

    async fn producer_for(&mut self, id: &str) -> Result<TransactionalProducer, KafkaSinkError> {
        if let Some(p) = self.producers.get(id) {
            return Ok(p.clone());
        }
        let mut config = self.config.effective_producer_config();
        config.transactional_id = Some(id.to_owned());
        config.transaction_timeout = self.config.transaction_timeout;
        let p = TransactionalProducer::connect(config)
            .await
            .map_err(|e| KafkaSinkError::Connect(e.to_string()))?;
        // Fences any earlier producer of this id and aborts its transaction.
        p.init_transactions().await.map_err(txn_err(id))?;
        self.producers.insert(id.to_owned(), p.clone());
        Ok(p)
    }

    fn recycle(&mut self, id: &str) {
        if !self.available.iter().any(|a| a == id) {
            self.available.push_back(id.to_owned());
        }
    }

    async fn drop_producer(&mut self, id: &str) {
        if let Some(p) = self.producers.remove(id) {
            let _ = p.close(Duration::ZERO).await;
        }
    }

    async fn await_sends(&mut self, keep: usize) -> Result<(), KafkaSinkError> {
        let mut first_error = None;
        while self.in_flight.len() > keep {
            let Some(f) = self.in_flight.pop_front() else {
                break;
            };
            let r = f.await;
            if let Ok(m) = &r
                && let Some(offset) = m.offset
            {
                // A few partitions per transaction: a scan, no allocation
                // per record.
                match self
                    .first_offsets
                    .iter_mut()
                    .find(|(t, p, _)| *p == m.partition && **t == *m.topic)
                {
                    Some((_, _, first)) => *first = (*first).min(offset),
                    None => self
                        .first_offsets
                        .push((m.topic.clone(), m.partition, offset)),
                }
            }
            if let Err(e) = r {
                if self.config.log_failures_only {
                    self.logged_failures += 1;
                    tracing::error!(error = %e, "error while sending record to Kafka (log_failures_only: the record is lost)");
                } else {
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }
}

impl<T: Send + Sync + 'static> TwoPhaseCommitHandler for KafkaSinkHandler<T> {
    type Value = T;
    type Txn = KafkaTransaction;
    type Ctx = BTreeSet<String>;
    type Error = KafkaSinkError;

    async fn begin_transaction(
        &mut self,
        _ctx: &mut BTreeSet<String>,
    ) -> Result<KafkaTransaction, KafkaSinkError> {
        if !self.exactly_once() {
            return Ok(KafkaTransaction::default());
        }
        let Some(id) = self.available.pop_front() else {
            return Err(KafkaSinkError::PoolExhausted {
                pool_size: self.config.pool_size,
            });
        };
        let producer = match self.producer_for(&id).await {
            Ok(p) => p,
            Err(e) => {
                self.available.push_front(id);
                return Err(e);
            }
        };
        producer.begin_transaction().map_err(txn_err(&id))?;
        self.first_offsets.clear();
        Ok(KafkaTransaction {
            transactional_id: Some(id),
            prepared: None,
            records: 0,
            first_offsets: Vec::new(),
        })
    }

    async fn invoke(
        &mut self,
        txn: &mut KafkaTransaction,
        value: T,
        context: &RecordContext,
    ) -> Result<(), KafkaSinkError> {
        // Serialized before anything is sent: a value that fails (an
        // asynchronous schema's error) fails this invoke with nothing of it
        // enqueued, and the open transaction stays abortable.
        let r = match &self.schema {
            SinkSchema::Sync(s) => s.serialize(&value),
            SinkSchema::Async(s) => s.serialize(&value, &self.config.default_topic).await?,
        };
        let mut record =
            ProducerRecord::new(r.topic.unwrap_or_else(|| self.config.default_topic.clone()))
                .value(r.value);
        if let Some(k) = r.key {
            record = record.key(k);
        }
        if self.config.write_timestamp_to_kafka
            && let Some(ts) = context.timestamp
        {
            record = record.timestamp(ts);
        }
        let fut: SendFuture = match (&txn.transactional_id, &self.shared) {
            (Some(id), _) => {
                let p = self
                    .producers
                    .get(id)
                    .ok_or_else(|| no_producer(Some(id)))?;
                Box::pin(p.send(record))
            }
            (None, Some(p)) => Box::pin(p.send(record)),
            (None, None) => {
                return Err(no_producer(None));
            }
        };
        self.in_flight.push_back(fut);
        txn.records += 1;
        if self.in_flight.len() >= MAX_IN_FLIGHT {
            self.await_sends(MAX_IN_FLIGHT / 2).await?;
        }
        Ok(())
    }

    async fn pre_commit(&mut self, txn: &mut KafkaTransaction) -> Result<(), KafkaSinkError> {
        // Every record of the transaction must have succeeded before it is
        // prepared: a prepared transaction missing a record could be
        // committed by a restore.
        if !self.exactly_once() {
            if self.config.semantic == Semantic::AtLeastOnce
                && let Some(p) = &self.shared
            {
                p.flush().await;
            }
            return self.await_sends(0).await;
        }
        if let Some(p) = txn
            .transactional_id
            .as_ref()
            .and_then(|id| self.producers.get(id))
        {
            p.flush().await; // ignores linger.ms
        }
        self.await_sends(0).await?;
        match (&txn.transactional_id, self.config.semantic) {
            // An empty transaction is never prepared (nor committed).
            (Some(id), Semantic::ExactlyOnce) if txn.records > 0 => {
                let id = id.clone();
                let p = self
                    .producers
                    .get(&id)
                    .cloned()
                    .ok_or_else(|| no_producer(Some(&id)))?;
                let prepared = p.prepare_transaction().await.map_err(txn_err(&id))?;
                txn.prepared = Some(prepared);
                txn.first_offsets = std::mem::take(&mut self.first_offsets)
                    .into_iter()
                    .map(|(topic, partition, offset)| (topic.to_string(), partition, offset))
                    .collect();
            }
            _ => {}
        }
        Ok(())
    }

    async fn commit(
        &mut self,
        txn: PreCommitted<KafkaTransaction>,
        _ctx: &mut BTreeSet<String>,
    ) -> Result<CommitOutcome, KafkaSinkError> {
        let Some(id) = txn.handle().transactional_id.clone() else {
            return Ok(CommitOutcome::Committed);
        };
        let bound = self.config.transaction_timeout;
        let result = match (&txn.handle().prepared, self.producers.get(&id).cloned()) {
            // Empty: never committed; the producer's local transaction ends.
            (None, Some(p)) => retry_timeouts(bound, || p.abort_transaction())
                .await
                .map(|()| CommitOutcome::Committed)
                .map_err(txn_err(&id)),
            (None, None) => Ok(CommitOutcome::Committed),
            (Some(_), Some(p)) => retry_timeouts(bound, || p.commit_transaction())
                .await
                .map(|()| CommitOutcome::Committed)
                .map_err(txn_err(&id)),
            (Some(prepared), None) => {
                match commit_prepared(&self.cluster, prepared, &self.resume).await {
                    Ok(o) => {
                        settle(
                            &self.cluster,
                            &id,
                            o,
                            txn.handle(),
                            age_of(&txn),
                            self.config.transaction_timeout,
                        )
                        .await
                    }
                    Err(e) => Err(KafkaSinkError::Recovery(format!("committing {id}: {e}"))),
                }
            }
        };
        match &result {
            Ok(_) => self.recycle(&id),
            Err(_) => {
                // The transaction may still be prepared: keep its id out of
                // the pool (reusing it would abort the transaction) until a
                // restore commits it; drop the producer, whose state is
                // unknown.
                self.drop_producer(&id).await;
            }
        }
        result
    }

    async fn abort(
        &mut self,
        txn: KafkaTransaction,
        _ctx: &mut BTreeSet<String>,
    ) -> Result<(), KafkaSinkError> {
        let Some(id) = txn.transactional_id else {
            return Ok(());
        };
        // Records of an aborted transaction fail; their errors do not matter.
        self.in_flight.clear();
        self.first_offsets.clear();
        let r = match self.producers.get(&id).cloned() {
            Some(p) => retry_timeouts(self.config.transaction_timeout, || p.abort_transaction())
                .await
                .map_err(txn_err(&id)),
            None => Ok(()),
        };
        if r.is_err() {
            self.drop_producer(&id).await;
        }
        self.recycle(&id);
        r
    }

    async fn recover_and_commit(
        &mut self,
        txn: PreCommitted<KafkaTransaction>,
        _ctx: &mut BTreeSet<String>,
    ) -> Result<CommitOutcome, KafkaSinkError> {
        let (Some(id), Some(prepared)) = (&txn.handle().transactional_id, &txn.handle().prepared)
        else {
            return Ok(CommitOutcome::Committed); // empty or non-transactional
        };
        match commit_prepared(&self.cluster, prepared, &self.resume).await {
            Ok(o) => {
                settle(
                    &self.cluster,
                    id,
                    o,
                    txn.handle(),
                    age_of(&txn),
                    self.config.transaction_timeout,
                )
                .await
            }
            Err(e) => Err(KafkaSinkError::Recovery(format!("committing {id}: {e}"))),
        }
    }

    async fn recover_and_abort(
        &mut self,
        txn: KafkaTransaction,
        _ctx: &mut BTreeSet<String>,
    ) -> Result<(), KafkaSinkError> {
        match (&txn.transactional_id, &txn.prepared) {
            (_, Some(prepared)) => abort_prepared(&self.cluster, prepared, &self.resume)
                .await
                .map(|_| ())
                .map_err(|e| KafkaSinkError::Recovery(e.to_string())),
            (Some(id), None) => {
                abort_lingering(&self.cluster, self.config.recovery_timeout, id).await
            }
            (None, None) => Ok(()),
        }
    }

    async fn initialize_user_context(&mut self) -> Result<BTreeSet<String>, KafkaSinkError> {
        if !self.exactly_once() {
            return Ok(BTreeSet::new());
        }
        let ids = self
            .config
            .ids()
            .generate_ids_to_use(self.hint.next_free_transactional_id);
        self.available = ids.iter().cloned().collect();
        Ok(ids)
    }

    async fn finish_recovering_and_committing(
        &mut self,
        ctx: &mut BTreeSet<String>,
        handled: &[KafkaTransaction],
    ) -> Result<(), KafkaSinkError> {
        if !self.exactly_once() {
            ctx.clear();
            return Ok(());
        }
        if ctx.is_empty() {
            // Restored from AT_LEAST_ONCE/NONE state: a fresh pool.
            *ctx = self.initialize_user_context().await?;
            return Ok(());
        }
        let handled: BTreeSet<&str> = handled
            .iter()
            .filter_map(|t| t.transactional_id.as_deref())
            .collect();
        let unhandled: Vec<String> = ctx
            .iter()
            .filter(|id| !handled.contains(id.as_str()))
            .cloned()
            .collect();
        abort_all(&self.cluster, self.config.recovery_timeout, unhandled).await?;
        self.available = ctx.iter().cloned().collect();
        Ok(())
    }

    async fn release_after_failover(
        &mut self,
        _ctx: &mut BTreeSet<String>,
    ) -> Result<(), KafkaSinkError> {
        // Every transaction of the old run was committed or aborted (or is
        // left to the restore); the restore may fence these producers, so
        // the next run connects new ones. Closing never aborts.
        self.in_flight.clear();
        self.available.clear();
        for (_, p) in self.producers.drain() {
            let _ = p.close(Duration::ZERO).await;
        }
        Ok(())
    }
}

/// The error of a transaction whose producer is missing.
fn no_producer(id: Option<&String>) -> KafkaSinkError {
    KafkaSinkError::NoProducer {
        transactional_id: id.cloned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_producer::txn::TxnOp;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn timeout() -> TransactionError {
        TransactionError::Timeout {
            op: TxnOp::AbortTransaction,
            outcome_unknown: true,
        }
    }

    /// Invariant: a commit or abort that timed out (a loaded coordinator)
    /// is called again until it completes, within the bound.
    #[tokio::test]
    async fn timed_out_operations_are_called_again_until_they_complete() {
        let calls = AtomicU32::new(0);
        let r = retry_timeouts(Duration::from_secs(3600), || async {
            match calls.fetch_add(1, Ordering::SeqCst) {
                0 | 1 => Err(timeout()),
                _ => Ok(()),
            }
        })
        .await;
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }

    /// Invariant: past the bound the timeout is returned, and any other
    /// error is returned at once (never retried).
    #[tokio::test]
    async fn other_errors_and_timeouts_past_the_bound_are_returned() {
        let calls = AtomicU32::new(0);
        let r = retry_timeouts(Duration::ZERO, || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err(timeout())
        })
        .await;
        assert!(matches!(r, Err(TransactionError::Timeout { .. })), "{r:?}");
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        let calls = AtomicU32::new(0);
        let r = retry_timeouts(Duration::from_secs(3600), || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err(TransactionError::InvalidState {
                from: kafka_producer::internals::State::Ready,
                op: TxnOp::AbortTransaction,
            })
        })
        .await;
        assert!(
            matches!(r, Err(TransactionError::InvalidState { .. })),
            "{r:?}"
        );
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }
}
