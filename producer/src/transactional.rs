//! The transactional producer: the batching producer core driven by the
//! sans-IO [`TransactionManager`] (Java `KafkaProducer` with a
//! `transactional.id`).

use crate::accumulator::Accumulator;
use crate::config::{ConfigError, ProducerConfig};
use crate::hooks::SendHooks;
use crate::idempotence::BatchId;
use crate::metrics::MetricsSnapshot;
use crate::record::{ProduceError, ProducerRecord, RecordMetadata, TopicPartition};
use crate::txn::{
    GroupMetadata, NotPreparableReason, OffsetAndMetadata, OpTicket, PreparedTransaction,
    ProducerIdAndEpoch, State, TransactionError, TransactionManager, TransactionVersion, TxnConfig,
    TxnDriver, TxnEvent, TxnOp,
};
use crate::{Cluster, Producer};
use kafka_client::ClusterError;
use kafka_proto::ErrorCode;
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// Why [`TransactionalProducer::connect`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// The configuration has no `transactional.id`.
    #[error("transactional.id is not set: a TransactionalProducer needs one")]
    MissingTransactionalId,
    /// The configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The bootstrap failed.
    #[error(transparent)]
    Cluster(#[from] ClusterError),
}

fn lock(m: &Mutex<TransactionManager>) -> MutexGuard<'_, TransactionManager> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The producer-core side of the manager (see the module docs).
#[derive(Debug)]
struct TxnHooks {
    manager: Arc<Mutex<TransactionManager>>,
    transactional_id: String,
    /// The pid/epoch last handed to the sender; batches are drained only
    /// when it is the manager's current one.
    installed: Mutex<ProducerIdAndEpoch>,
    wake_driver: Arc<Notify>,
}

impl SendHooks for TxnHooks {
    fn may_drain(&self, tp: &TopicPartition) -> bool {
        let m = lock(&self.manager);
        m.may_drain(tp)
            && m.producer_id_and_epoch()
                == *self.installed.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn transactional_id(&self) -> Option<String> {
        Some(self.transactional_id.clone())
    }

    fn on_append(&self, tp: &TopicPartition) -> Result<(), ProduceError> {
        let mut m = lock(&self.manager);
        m.on_partition_used(tp).map_err(ProduceError::Transaction)?;
        if m.transaction_version() == TransactionVersion::V1
            && !m.partitions_in_transaction().contains(tp)
        {
            self.wake_driver.notify_one(); // AddPartitionsToTxn to send
        }
        Ok(())
    }

    fn on_append_to_batch(&self, tp: &TopicPartition, memo: &mut u64) -> Result<(), ProduceError> {
        let mut m = lock(&self.manager);
        let added = m
            .on_batch_partition_used(tp, memo)
            .map_err(ProduceError::Transaction)?;
        if added
            && m.transaction_version() == TransactionVersion::V1
            && !m.partitions_in_transaction().contains(tp)
        {
            self.wake_driver.notify_one(); // AddPartitionsToTxn to send
        }
        Ok(())
    }

    fn on_enqueue(&self) -> Result<u64, ProduceError> {
        lock(&self.manager)
            .on_record_queued()
            .map_err(ProduceError::Transaction)
    }

    fn on_append_queued(&self, tp: &TopicPartition, serial: u64) -> Result<(), ProduceError> {
        let mut m = lock(&self.manager);
        m.on_queued_partition_used(tp, serial)
            .map_err(ProduceError::Transaction)?;
        if m.transaction_version() == TransactionVersion::V1
            && !m.partitions_in_transaction().contains(tp)
        {
            self.wake_driver.notify_one(); // AddPartitionsToTxn to send
        }
        Ok(())
    }

    fn record_failed(&self, serial: Option<u64>, error: &ProduceError) {
        // The manager's own refusals (no transaction, must abort) and a
        // closed producer say nothing new about the transaction.
        if matches!(
            error,
            ProduceError::Transaction(_) | ProduceError::Closed(_) | ProduceError::Fatal(_)
        ) {
            return;
        }
        lock(&self.manager).record_failed(
            serial,
            format!("a record of the transaction failed: {error}"),
        );
        self.wake_driver.notify_one();
    }

    fn undrained_queued(&self) -> Option<(u64, ProduceError)> {
        let m = lock(&self.manager);
        m.undrained_batch_error()
            .map(|e| (m.transaction_serial(), ProduceError::Transaction(e)))
    }

    fn hold_produce(&self) -> bool {
        lock(&self.manager).has_in_flight_request()
    }

    fn undrained_error(&self) -> Option<ProduceError> {
        lock(&self.manager)
            .undrained_batch_error()
            .map(ProduceError::Transaction)
    }

    fn producer_change(&self) -> Option<(ProducerIdAndEpoch, bool)> {
        let mut m = lock(&self.manager);
        while let Some(ev) = m.poll_event() {
            if let TxnEvent::ProducerIdAndEpochChanged {
                producer,
                reset_sequences,
            } = ev
            {
                *self.installed.lock().unwrap_or_else(|p| p.into_inner()) = producer;
                return Some((producer, reset_sequences));
            }
        }
        None
    }

    fn batch_failed(&self, tp: &TopicPartition, error: Option<ErrorCode>, outcome_unknown: bool) {
        lock(&self.manager).produce_batch_failed(tp, error, outcome_unknown);
        self.wake_driver.notify_one();
    }

    fn max_produce_version(&self) -> Option<i16> {
        (lock(&self.manager).transaction_version() == TransactionVersion::V1).then_some(11)
    }
}

#[derive(Debug)]
struct Inner {
    producer: Producer,
    txn: Arc<TxnDriver>,
    manager: Arc<Mutex<TransactionManager>>,
    /// `transactional.id`.
    transactional_id: String,
    acc: Arc<Accumulator>,
    wake_driver: Arc<Notify>,
    results: Arc<Notify>,
    driver: tokio::task::JoinHandle<()>,
}

impl Drop for Inner {
    /// The last handle is gone: nobody can commit the open transaction any
    /// more, and without the coordinator driver its partitions can never be
    /// added (TV1). Every record not yet acknowledged fails now (with
    /// [`ProduceError::Closed`]) instead of waiting out
    /// `delivery.timeout.ms`; the coordinator aborts the transaction after
    /// `transaction.timeout.ms`, or the transactional id's next producer
    /// does at `init_transactions`.
    fn drop(&mut self) {
        self.driver.abort();
        {
            let mut inner = self.acc.lock();
            inner.closed = Some(ProduceError::Closed(Some("aborted".into())));
            inner.fail_pending = true;
        }
        self.acc.wake_sender.notify_one();
    }
}

/// A transactional Kafka producer (exactly-once writes, Java semantics).
///
/// Cheap to clone; clones share one producer. Operations that talk to the
/// transaction coordinator are bounded by `max.block.ms`; when
/// `init_transactions`, `commit_transaction` or `abort_transaction` time out
/// ([`TransactionError::Timeout`]), call the **same** operation again.
/// Errors are typed: [`TransactionError::Abortable`] → call
/// [`Self::abort_transaction`] and go on; [`TransactionError::Fenced`] /
/// [`TransactionError::Fatal`] → close the producer.
///
/// # Requests that arrive late
///
/// A request the producer gave up on (its connection timed out or broke)
/// may still reach the broker later, after the producer retried it and
/// went on to the next transaction. What such a late request can do:
///
/// - **Produce**: nothing. Under transaction version 2 every transaction
///   has a new epoch and the old one is refused; under version 1 the
///   batch's sequence number is one the partition already holds (a
///   duplicate, refused) — a batch is never written twice.
/// - **EndTxn**, transaction version 2: nothing; it belongs to an ended
///   epoch.
/// - **EndTxn**, transaction version 1: the next transaction runs under the
///   same epoch, so a late commit or abort could end it halfway. After an
///   EndTxn whose outcome was unknown, the producer therefore bumps its
///   epoch (KIP-360 `InitProducerId` with the current id and epoch) before
///   `commit_transaction` / `abort_transaction` returns: the late request
///   is fenced. (Brokers older than Kafka 2.5 cannot bump; there the
///   window stays open, as with Java's client.)
/// - After a Produce of unknown outcome the transaction is abortable and
///   the epoch is bumped at the abort (both versions).
///
/// Each case is tested against real brokers of both transaction versions.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use kafka_producer::TransactionalProducer;
/// use kafka_producer::txn::GroupMetadata;
/// use kafka_producer::{ProducerConfig, ProducerRecord, TopicPartition};
/// use kafka_producer::txn::{TransactionError};
/// use std::time::Duration;
/// let config = ProducerConfig::from_properties([
///     ("bootstrap.servers", "127.0.0.1:9092"),
///     ("transactional.id", "orders-writer-1"),
/// ])?;
/// let producer = TransactionalProducer::connect(config).await?;
/// producer.init_transactions().await?;
/// producer.begin_transaction()?;
/// let pending: Vec<_> = (0..10)
///     .map(|i| producer.send(ProducerRecord::new("orders").key(format!("k{i}")).value("v")))
///     .collect();
/// // Offsets of the consumed input, committed atomically with the output.
/// let offsets = [(TopicPartition::new("input", 0), 42, None)];
/// producer
///     .send_offsets_to_transaction(&offsets, &GroupMetadata::new("billing"))
///     .await?;
/// match producer.commit_transaction().await {
///     Ok(()) => {}
///     Err(e) if e.is_abortable() => producer.abort_transaction().await?,
///     Err(e) => return Err(e.into()), // fenced or fatal: close
/// }
/// for p in pending {
///     let _ = p.await; // each record's metadata (or the failure)
/// }
/// producer.close(Duration::from_secs(10)).await?;
/// # Ok(()) }
/// ```
///
/// How the pieces are wired (the hooks listed in [`crate::txn`]):
///
/// - One [`TransactionManager`] is shared (`Arc<Mutex<_>>`) by the
///   [`TxnDriver`], the sender task and the user handle.
/// - Every append calls `on_partition_used` under the accumulator lock
///   ([`SendHooks::on_append`]); an error fails that send with
///   [`ProduceError::Transaction`]. Because the check and the append are one
///   critical section, no record joins a transaction after its commit or
///   abort began.
/// - A record that cannot be appended at `send` time (buffer memory full,
///   topic metadata unknown) is queued by the producer with the serial of
///   the transaction it was sent in ([`SendHooks::on_enqueue`]); when the
///   sender appends it, a different serial fails it
///   ([`SendHooks::on_append_queued`]), so it never joins a later
///   transaction. `commit_transaction` and `prepare_transaction` start only
///   once no record is queued, checked under the accumulator lock; an abort
///   fails the queued records of its transaction.
/// - A record that will never be written (too large, `max.block.ms`, ...)
///   makes the transaction abortable ([`SendHooks::record_failed`]), as
///   Java's `KafkaProducer.send` does, so a commit cannot succeed without it.
/// - The sender drains a partition only when `may_drain` allows it (under
///   TV1: after AddPartitionsToTxn) and the producer id/epoch the manager
///   announced was installed in the sequence bookkeeping; while a
///   coordinator request is in flight it sends no produce data; when
///   `undrained_batch_error()` is set every undrained batch fails with it.
/// - Every `ProducerIdAndEpochChanged` event (InitProducerId, KIP-360 bumps,
///   and under TV2 every EndTxn v5) installs the new pid/epoch and restarts
///   all sequences at 0. Produce is capped at v11 under TV1 (v12+ would
///   register partitions implicitly) and carries the transactional id.
/// - Batches that finally fail are reported with `produce_batch_failed`
///   (outcome unknown for expired in-flight batches).
/// - A driver task executes the manager's coordinator requests
///   ([`TxnDriver::run_once`]) whenever it has some, waking on new
///   work, completed batches (a held EndTxn) and the manager's
///   `poll_timeout()`. EndTxn waits until no batch is incomplete.
///
/// Lock order: accumulator, then manager (never the reverse).
#[derive(Debug, Clone)]
pub struct TransactionalProducer {
    inner: Arc<Inner>,
}

impl TransactionalProducer {
    /// Connects (bootstrap metadata, waiting up to `bootstrap.timeout.ms`,
    /// by default `max.block.ms`, for a bootstrap address to answer) and
    /// starts the sender and the coordinator driver. The configuration must have a `transactional.id`
    /// (which implies idempotence: `acks=all`, retries > 0, at most 5 in
    /// flight). Call [`Self::init_transactions`] next.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// use kafka_producer::{ProducerConfig, TransactionalProducer};
    /// let config = ProducerConfig::from_properties([
    ///     ("bootstrap.servers", "127.0.0.1:9092"),
    ///     ("transactional.id", "orders-writer-1"),
    /// ])?;
    /// let producer = TransactionalProducer::connect(config).await?;
    /// producer.init_transactions().await?;
    /// # Ok(()) }
    /// ```
    pub async fn connect(config: ProducerConfig) -> Result<Self, ConnectError> {
        let config = config.validate()?;
        let id = config
            .transactional_id
            .clone()
            .ok_or(ConnectError::MissingTransactionalId)?;
        let mut tc = TxnConfig::new(id.clone());
        tc.transaction_timeout = config.transaction_timeout;
        tc.retry_backoff.initial = config.retry_backoff;
        tc.retry_backoff.max = tc.retry_backoff.max.max(config.retry_backoff);
        let manager = Arc::new(Mutex::new(TransactionManager::new(tc)));
        let wake_driver = Arc::new(Notify::new());
        let hooks = Arc::new(TxnHooks {
            manager: manager.clone(),
            transactional_id: id.clone(),
            installed: Mutex::new(ProducerIdAndEpoch::NONE),
            wake_driver: wake_driver.clone(),
        });
        let request_timeout = config.request_timeout;
        let producer = Producer::connect_with_hooks(config, Some(hooks)).await?;
        let acc = producer.accumulator().clone();
        let mut txn = TxnDriver::with_manager(producer.cluster().clone(), manager.clone());
        let probe = acc.clone();
        txn.set_incomplete_batches_probe(Arc::new(move || !probe.lock().incomplete.is_empty()));
        let txn = Arc::new(txn);
        let results = Arc::new(Notify::new());
        let driver = tokio::spawn(drive(
            txn.clone(),
            acc.clone(),
            wake_driver.clone(),
            results.clone(),
            request_timeout,
        ));
        Ok(Self {
            inner: Arc::new(Inner {
                producer,
                txn,
                manager,
                transactional_id: id,
                acc,
                wake_driver,
                results,
                driver,
            }),
        })
    }

    fn lock(&self) -> MutexGuard<'_, TransactionManager> {
        lock(&self.inner.manager)
    }

    fn max_block(&self) -> Duration {
        self.inner.producer.config().max_block
    }

    fn wake(&self) {
        self.inner.acc.wake_sender.notify_one();
        self.inner.wake_driver.notify_one();
    }

    /// `initTransactions()`: checks `transaction.timeout.ms` against the
    /// broker's `transaction.max.timeout.ms`, finds the coordinator and gets
    /// a producer id/epoch — which fences older producers with this
    /// transactional id and aborts (or completes) their open transaction.
    ///
    /// ```no_run
    /// # async fn demo(producer: kafka_producer::TransactionalProducer) -> Result<(), Box<dyn std::error::Error>> {
    /// use kafka_producer::txn::TransactionError;
    /// loop {
    ///     match producer.init_transactions().await {
    ///         Ok(()) => break,
    ///         // Same operation again after a timeout (Java semantics).
    ///         Err(TransactionError::Timeout { .. }) => continue,
    ///         Err(e) => return Err(e.into()),
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn init_transactions(&self) -> Result<(), TransactionError> {
        let r = self.inner.txn.init_transactions(self.max_block()).await;
        self.wake();
        r
    }

    /// `beginTransaction()`.
    pub fn begin_transaction(&self) -> Result<(), TransactionError> {
        self.lock().begin_transaction()
    }

    /// Sends `record` in the current transaction, with the contract of
    /// [`Producer::send`](crate::Producer::send) (place and order taken now,
    /// the producer owns the record, the future reports the delivery) plus:
    ///
    /// - The record belongs to the transaction in which `send` was called.
    ///   A record queued for buffer memory or metadata keeps that
    ///   transaction: [`Self::commit_transaction`] waits until it is
    ///   appended and acknowledged, and it can never be carried into a later
    ///   transaction (if its transaction ends first, it fails).
    /// - A record that fails (too large, `max.block.ms`, a broker error)
    ///   makes the transaction abortable, so a commit either includes every
    ///   record sent before it or fails with [`TransactionError::Abortable`]
    ///   (Java semantics). Outside a transaction, or when it must be aborted,
    ///   the future fails with [`ProduceError::Transaction`].
    ///
    /// Records are visible to read_committed readers only once the
    /// transaction commits.
    ///
    /// ```no_run
    /// # async fn demo(producer: kafka_producer::TransactionalProducer) -> Result<(), Box<dyn std::error::Error>> {
    /// use kafka_producer::ProducerRecord;
    /// producer.begin_transaction()?;
    /// // Appended now; awaited later (or never: commit waits for every record).
    /// let pending: Vec<_> = (0..3)
    ///     .map(|i| producer.send(ProducerRecord::new("orders").key(format!("k{i}")).value("v")))
    ///     .collect();
    /// producer.commit_transaction().await?;
    /// for p in pending {
    ///     let md = p.await?;
    ///     println!("{}-{} @ {:?}", md.topic, md.partition, md.offset);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn send(
        &self,
        record: ProducerRecord,
    ) -> impl Future<Output = Result<RecordMetadata, ProduceError>> + Send + 'static + use<> {
        self.inner.producer.send(record)
    }

    /// Waits until no sent record is queued for buffer memory (at most
    /// `max.block.ms`): the blocking point of Java's `send`, see
    /// [`Producer::wait_for_buffer`](crate::Producer::wait_for_buffer).
    ///
    /// ```no_run
    /// # async fn demo(producer: kafka_producer::TransactionalProducer) -> Result<(), Box<dyn std::error::Error>> {
    /// use kafka_producer::ProducerRecord;
    /// producer.begin_transaction()?;
    /// for i in 0..100_000 {
    ///     producer.wait_for_buffer().await?; // memory stays within buffer.memory
    ///     drop(producer.send(ProducerRecord::new("events").value(format!("{i}"))));
    /// }
    /// producer.commit_transaction().await?; // covers every record sent above
    /// # Ok(()) }
    /// ```
    pub async fn wait_for_buffer(&self) -> Result<(), ProduceError> {
        self.inner.producer.wait_for_buffer().await
    }

    /// `sendOffsetsToTransaction(Map<TopicPartition, OffsetAndMetadata>,
    /// groupMetadata)`: as [`Self::send_offsets_to_transaction`], with each
    /// offset's leader epoch (the epoch of the last consumed record, stored
    /// with the committed offset so that the next owner can detect a log
    /// truncation, KIP-320) — what
    /// `GroupConsumer::transaction_offsets` (`kafka-consumer`)
    /// returns.
    ///
    /// ```no_run
    /// # async fn demo(producer: kafka_producer::TransactionalProducer) -> Result<(), Box<dyn std::error::Error>> {
    /// use kafka_producer::TopicPartition;
    /// use kafka_producer::txn::{GroupMetadata, OffsetAndMetadata};
    /// // What a group consumer's `transaction_offsets()` and `group_metadata()` return:
    /// let offsets = [(
    ///     TopicPartition::new("orders", 0),
    ///     OffsetAndMetadata { offset: 42, leader_epoch: Some(3), metadata: None },
    /// )];
    /// let group = GroupMetadata::new("billing");
    /// producer.begin_transaction()?;
    /// producer.send_offsets_and_metadata_to_transaction(offsets, &group).await?;
    /// producer.commit_transaction().await?;
    /// # Ok(()) }
    /// ```
    pub async fn send_offsets_and_metadata_to_transaction(
        &self,
        offsets: impl IntoIterator<Item = (TopicPartition, OffsetAndMetadata)>,
        group: &GroupMetadata,
    ) -> Result<(), TransactionError> {
        let map: BTreeMap<TopicPartition, OffsetAndMetadata> = offsets.into_iter().collect();
        let ticket = self
            .lock()
            .send_offsets_to_transaction(map, group.clone())?;
        self.wake();
        self.wait(ticket, TxnOp::SendOffsets, self.max_block())
            .await
    }

    /// `sendOffsetsToTransaction(offsets, groupMetadata)`: commits the
    /// consumer offsets `(partition, next offset to consume, metadata)` of
    /// `group` as part of the transaction (TV1: AddOffsetsToTxn then
    /// TxnOffsetCommit; TV2: TxnOffsetCommit v5).
    ///
    /// ```no_run
    /// # async fn demo(producer: kafka_producer::TransactionalProducer) -> Result<(), Box<dyn std::error::Error>> {
    /// use kafka_producer::txn::GroupMetadata;
    /// use kafka_client::TopicPartition;
    /// producer.begin_transaction()?;
    /// // ... records derived from input offsets 0..42 of input-0 ...
    /// let offsets = [(TopicPartition::new("input", 0), 42, None)];
    /// producer
    ///     .send_offsets_to_transaction(&offsets, &GroupMetadata::new("billing"))
    ///     .await?;
    /// producer.commit_transaction().await?;
    /// # Ok(()) }
    /// ```
    pub async fn send_offsets_to_transaction(
        &self,
        offsets: &[(TopicPartition, i64, Option<String>)],
        group: &GroupMetadata,
    ) -> Result<(), TransactionError> {
        let map: BTreeMap<TopicPartition, OffsetAndMetadata> = offsets
            .iter()
            .map(|(tp, offset, metadata)| {
                (
                    tp.clone(),
                    OffsetAndMetadata {
                        offset: *offset,
                        leader_epoch: None,
                        metadata: metadata.clone(),
                    },
                )
            })
            .collect();
        let ticket = self
            .lock()
            .send_offsets_to_transaction(map, group.clone())?;
        self.wake();
        self.wait(ticket, TxnOp::SendOffsets, self.max_block())
            .await
    }

    /// `commitTransaction()`: flushes, waits for every record of the
    /// transaction, then EndTxn(commit) (none for an empty transaction).
    /// Fails with [`TransactionError::Abortable`] when a record of the
    /// transaction failed (then call [`Self::abort_transaction`]).
    ///
    /// ```no_run
    /// # async fn demo(producer: kafka_producer::TransactionalProducer) -> Result<(), Box<dyn std::error::Error>> {
    /// match producer.commit_transaction().await {
    ///     Ok(()) => {}
    ///     Err(e) if e.is_abortable() => producer.abort_transaction().await?,
    ///     Err(e) => return Err(e.into()), // fenced or fatal: close the producer
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn commit_transaction(&self) -> Result<(), TransactionError> {
        let started = Instant::now();
        let result = self.commit_transaction_inner().await;
        if result.is_ok() {
            self.inner
                .acc
                .metrics
                .transaction_committed(started.elapsed());
        }
        result
    }

    async fn commit_transaction_inner(&self) -> Result<(), TransactionError> {
        let op = TxnOp::CommitTransaction;
        let deadline = Instant::now() + self.max_block();
        // Every record sent before this call is part of the commit: wait
        // until none is queued (for memory or metadata), and start the commit
        // under the accumulator lock, so that no send slips in between.
        let ticket = self
            .when_nothing_queued(op, deadline, |m| m.commit_transaction())
            .await?;
        self.wake();
        if tokio::time::timeout_at(deadline.into(), self.inner.producer.flush())
            .await
            .is_err()
        {
            return Err(TransactionError::Timeout {
                op,
                outcome_unknown: true,
            });
        }
        self.wait(
            ticket,
            op,
            deadline.saturating_duration_since(Instant::now()),
        )
        .await
    }

    /// `abortTransaction()`: fails the records not yet sent, waits for those
    /// in flight, then EndTxn(abort) (none for an empty transaction), and
    /// bumps the epoch when an error requires it (KIP-360). The producer is
    /// then ready for the next transaction.
    ///
    /// ```no_run
    /// # async fn demo(producer: kafka_producer::TransactionalProducer) -> Result<(), Box<dyn std::error::Error>> {
    /// use kafka_producer::ProducerRecord;
    /// producer.begin_transaction()?;
    /// let r = producer.send(ProducerRecord::new("orders").value("draft"));
    /// producer.abort_transaction().await?; // the record is never visible read_committed
    /// let _ = r.await; // failed, or written and aborted
    /// producer.begin_transaction()?; // ready for the next one
    /// # Ok(()) }
    /// ```
    pub async fn abort_transaction(&self) -> Result<(), TransactionError> {
        let (ticket, serial) = {
            let mut m = self.lock();
            (m.abort_transaction()?, m.transaction_serial())
        };
        // Records of this transaction still queued are never written.
        let e = ProduceError::Transaction(TransactionError::Abortable {
            api: None,
            version: -1,
            error: None,
            message: "the transaction was aborted before the record was appended".into(),
        });
        self.inner.acc.fail_queued(Some(serial), &e);
        self.wake();
        self.wait(ticket, TxnOp::AbortTransaction, self.max_block())
            .await?;
        self.inner.acc.metrics.transaction_aborted();
        Ok(())
    }

    /// Pre-commit for resume after a crash: flushes, waits until every
    /// partition and offset is registered with the coordinator, and returns
    /// the [`PreparedTransaction`] to persist. The transaction stays open for
    /// [`crate::txn::commit_prepared`] / [`crate::txn::abort_prepared`] (from
    /// any process) or for [`Self::commit_transaction`] /
    /// [`Self::abort_transaction`] here. Fails with
    /// [`TransactionError::NotPreparable`] for an empty transaction.
    ///
    /// ```no_run
    /// # async fn demo(producer: kafka_producer::TransactionalProducer) -> Result<(), Box<dyn std::error::Error>> {
    /// use kafka_producer::ProducerRecord;
    /// producer.begin_transaction()?;
    /// producer.send(ProducerRecord::new("orders").value("o-1")).await?;
    /// let prepared = producer.prepare_transaction().await?;
    /// std::fs::write("checkpoint/txn", prepared.encode())?; // durable first
    /// producer.commit_transaction().await?; // or, after a crash: txn::commit_prepared
    /// # Ok(()) }
    /// ```
    pub async fn prepare_transaction(&self) -> Result<PreparedTransaction, TransactionError> {
        let op = TxnOp::PrepareTransaction;
        let deadline = Instant::now() + self.max_block();
        if tokio::time::timeout_at(deadline.into(), self.inner.producer.flush())
            .await
            .is_err()
        {
            return Err(TransactionError::Timeout {
                op,
                outcome_unknown: false,
            });
        }
        loop {
            let notified = self.inner.results.notified();
            let prepared = self
                .when_nothing_queued(op, deadline, |m| m.prepare_transaction())
                .await;
            match prepared {
                Err(TransactionError::NotPreparable {
                    reason: NotPreparableReason::PartitionsPending,
                }) => {}
                other => return other,
            }
            self.wake();
            if tokio::time::timeout_at(deadline.into(), notified)
                .await
                .is_err()
            {
                return Err(TransactionError::Timeout {
                    op,
                    outcome_unknown: false,
                });
            }
        }
    }

    /// Sends every record enqueued so far (ignoring `linger.ms`) and waits
    /// until each completed.
    pub async fn flush(&self) {
        self.inner.producer.flush().await;
    }

    /// Closes the producer: pending records are sent (up to `timeout`), then
    /// the connections close. An open transaction is **not** aborted (the
    /// coordinator aborts it after `transaction.timeout.ms`, unless it was
    /// prepared and is finished with `commit_prepared`/`abort_prepared`).
    pub async fn close(&self, timeout: Duration) -> Result<(), ProduceError> {
        let r = self.inner.producer.close(timeout).await;
        self.inner.driver.abort();
        r
    }

    /// The manager's state.
    pub fn state(&self) -> State {
        self.lock().state()
    }

    /// The current producer id and epoch.
    pub fn producer_id_and_epoch(&self) -> ProducerIdAndEpoch {
        self.lock().producer_id_and_epoch()
    }

    /// The transaction version in use (decided at `init_transactions`).
    pub fn transaction_version(&self) -> TransactionVersion {
        self.lock().transaction_version()
    }

    /// The producer's `transactional.id`.
    pub fn transactional_id(&self) -> &str {
        &self.inner.transactional_id
    }

    /// The shared transaction manager, for kafka-eos's own tests (the
    /// `internals` feature).
    #[cfg(feature = "internals")]
    pub fn transaction_manager(&self) -> &Arc<Mutex<TransactionManager>> {
        &self.inner.manager
    }

    /// The cluster connection layer.
    pub fn cluster(&self) -> &Arc<Cluster> {
        self.inner.producer.cluster()
    }

    /// A snapshot of the producer metrics.
    pub fn metrics(&self) -> MetricsSnapshot {
        self.inner.producer.metrics()
    }

    /// Runs `start` on the manager once no sent record is queued (waiting
    /// for memory or metadata), under the accumulator lock: a record sent
    /// before is then in a batch (and the transaction), one sent after sees
    /// the new state.
    async fn when_nothing_queued<T>(
        &self,
        op: TxnOp,
        deadline: Instant,
        mut start: impl FnMut(&mut TransactionManager) -> Result<T, TransactionError>,
    ) -> Result<T, TransactionError> {
        let acc = &self.inner.acc;
        loop {
            let progress = acc.progress.notified();
            {
                let g = acc.lock();
                if !g.has_queued() {
                    return start(&mut self.lock());
                }
            }
            acc.wake_sender.notify_one();
            if tokio::time::timeout_at(deadline.into(), progress)
                .await
                .is_err()
            {
                return Err(TransactionError::Timeout {
                    op,
                    outcome_unknown: false,
                });
            }
        }
    }

    /// Waits for the outcome of `ticket` (the driver task does the IO).
    async fn wait(
        &self,
        ticket: OpTicket,
        op: TxnOp,
        timeout: Duration,
    ) -> Result<(), TransactionError> {
        let deadline = Instant::now() + timeout;
        loop {
            let notified = self.inner.results.notified();
            if let Some(r) = self.lock().poll_result(ticket) {
                self.inner.acc.wake_sender.notify_one();
                return r;
            }
            self.inner.wake_driver.notify_one();
            if tokio::time::timeout_at(deadline.into(), notified)
                .await
                .is_err()
            {
                // The operation's requests go on in the background: it
                // may still complete (offsets sent with a timed-out
                // send_offsets_to_transaction are committed by a later
                // commit once they arrive).
                return Err(TransactionError::Timeout {
                    op,
                    outcome_unknown: true,
                });
            }
        }
    }
}

/// Executes the manager's coordinator requests, one at a time.
async fn drive(
    txn: Arc<TxnDriver>,
    acc: Arc<Accumulator>,
    wake: Arc<Notify>,
    results: Arc<Notify>,
    request_timeout: Duration,
) {
    loop {
        let woken = wake.notified();
        // Outcomes and events may have changed (also through the sender's
        // hooks): let waiters and the sender look.
        results.notify_waiters();
        acc.wake_sender.notify_one();
        if !txn.lock().has_pending_requests() {
            woken.await;
            continue;
        }
        if txn.run_once(Instant::now() + request_timeout).await {
            continue;
        }
        // An EndTxn of an empty transaction completes without a request:
        // its waiter need not wait for the next round.
        results.notify_waiters();
        // Nothing sendable: a backoff, a held EndTxn (incomplete batches) or
        // a request in flight from `init_transactions`.
        let until = txn
            .lock()
            .poll_timeout()
            .unwrap_or_else(|| Instant::now() + Duration::from_millis(10));
        // A held EndTxn waits for the last incomplete batch, not for each.
        let batches_done = async {
            if acc.flushed(BatchId::MAX) {
                std::future::pending::<()>().await;
            }
            acc.wait_flushed(BatchId::MAX).await;
        };
        tokio::select! {
            _ = woken => {}
            _ = batches_done => {}
            _ = tokio::time::sleep_until(until.into()) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::idempotence::{Drain, ErrorDecision, Idempotence, Phase, ProducerIdAndEpoch};
    use kafka_client::TopicPartition;
    use kafka_proto::ErrorCode;

    const P: ProducerIdAndEpoch = ProducerIdAndEpoch {
        producer_id: 7,
        epoch: 3,
    };

    #[test]
    fn transactional_sequences_follow_the_manager() {
        let mut st = Idempotence::new_transactional();
        let tp = TopicPartition::new("t", 0);
        assert_eq!(st.next_action(), None, "no InitProducerId of its own");
        assert_eq!(st.may_drain(&tp, 1), Drain::Stop, "no pid yet");
        st.set_producer(P, true);
        assert_eq!(st.phase(), Phase::Ready);
        assert_eq!(st.assign(&tp, 1, 5).base_sequence, 0);
        st.handle_completed(&tp, 1, 100);
        assert_eq!(st.assign(&tp, 2, 5).base_sequence, 5);
        st.handle_completed(&tp, 2, 105);
        // TV2 EndTxn: a new epoch, every sequence restarts at 0.
        let next = ProducerIdAndEpoch { epoch: 4, ..P };
        st.set_producer(next, true);
        let s = st.assign(&tp, 3, 2);
        assert_eq!((s.base_sequence, s.producer), (0, next));
    }

    #[test]
    fn transactional_errors_fail_the_batch_without_a_local_bump() {
        let mut st = Idempotence::new_transactional();
        let tp = TopicPartition::new("t", 0);
        st.set_producer(P, true);
        st.assign(&tp, 1, 5);
        // OUT_OF_ORDER_SEQUENCE_NUMBER of the batch next in line: abortable,
        // and the epoch is not bumped locally.
        let d = st.handle_error(
            &tp,
            1,
            ErrorCode::OutOfOrderSequenceNumber,
            -1,
            false,
            false,
        );
        assert_eq!(d, ErrorDecision::Fail { fatal: false });
        assert_eq!(st.next_action(), None);
        assert_eq!(st.producer(), P);
        assert_eq!(st.epoch_bumps(), 0);
        // UNKNOWN_PRODUCER_ID with a known log start offset: not retried.
        st.assign(&tp, 2, 1);
        let d = st.handle_error(&tp, 2, ErrorCode::UnknownProducerId, 10, false, false);
        assert_eq!(d, ErrorDecision::Fail { fatal: false });
        assert_eq!(st.producer(), P);
        // ... and retried when the log start offset is unknown.
        st.assign(&tp, 3, 1);
        let d = st.handle_error(&tp, 3, ErrorCode::UnknownProducerId, -1, false, false);
        assert_eq!(d, ErrorDecision::Retry);
        // PRODUCER_FENCED is fatal.
        let d = st.handle_error(&tp, 3, ErrorCode::ProducerFenced, -1, false, false);
        assert_eq!(d, ErrorDecision::Fail { fatal: true });
    }

    /// `connect` refuses a configuration without `transactional.id`, and
    /// says which key is missing.
    #[tokio::test(flavor = "current_thread")]
    async fn connect_without_a_transactional_id_is_refused() {
        use crate::ProducerConfig;
        use crate::transactional::{ConnectError, TransactionalProducer};
        let config =
            ProducerConfig::from_properties([("bootstrap.servers", "127.0.0.1:9092")]).unwrap();
        match TransactionalProducer::connect(config).await {
            Err(e @ ConnectError::MissingTransactionalId) => {
                assert!(e.to_string().contains("transactional.id"))
            }
            other => panic!("{other:?}"),
        }
    }
}
