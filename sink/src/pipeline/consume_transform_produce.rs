//! Exactly-once Kafka → transform → Kafka, in the Kafka Streams EOS-v2
//! model: the input offsets are committed inside the output transaction.

use super::transform::RecordTransform;
use kafka_consumer::ConsumerRecord;
use kafka_consumer::{ConsumerEvent, GroupConsumer, GroupConsumerConfig, GroupError};
use kafka_producer::txn::TransactionError;
use kafka_producer::{ProducerConfig, ProducerRecord, TransactionalProducer};
use std::time::{Duration, Instant};

/// Settings of a [`ConsumeTransformProduce`] pipeline.
#[derive(Debug, Clone)]
pub struct PipelineConfig {
    /// How long a transaction stays open (Kafka Streams'
    /// `commit.interval.ms`, 100 ms under exactly-once; default 100 ms).
    pub commit_interval: Duration,
    /// Abort about one transaction in three instead of committing it,
    /// driven by this seed (a test of the abort path, as Kafka's
    /// `TransactionalMessageCopier --enable-random-aborts`).
    pub random_aborts: Option<u64>,
}

impl Default for PipelineConfig {
    fn default() -> Self {
        Self {
            commit_interval: Duration::from_millis(100),
            random_aborts: None,
        }
    }
}

/// What a pipeline did so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PipelineStats {
    /// Input records read (including those of aborted transactions).
    pub consumed: u64,
    /// Transactions committed.
    pub committed: u64,
    /// Transactions aborted (randomly, on a lost partition, or on an
    /// abortable error).
    pub aborted: u64,
    /// Input records whose output was committed.
    pub committed_records: u64,
    /// Times the transactional producer was replaced after its epoch was
    /// fenced while this process still owned its input (see the module
    /// docs); the input of the transaction open then was read again.
    pub producer_restarts: u64,
    /// Time spent committing, over every committed transaction: the flush
    /// of its records, the input offsets (TxnOffsetCommit) and EndTxn. The
    /// mean commit is this over [`Self::committed`].
    pub commit_time_total: Duration,
    /// The longest commit so far.
    pub commit_time_max: Duration,
}

/// How many times in a row, without a commit in between, a fenced producer
/// is replaced before the pipeline gives up (see the module docs).
pub const MAX_PRODUCER_RESTARTS: u32 = 3;

/// Why a pipeline stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PipelineError {
    /// The consumer failed fatally.
    #[error("consumer: {0}")]
    Group(#[from] GroupError),
    /// The producer failed fatally (fenced by a newer producer with the
    /// same transactional id, or a fatal broker error).
    #[error("producer: {0}")]
    Transaction(#[from] TransactionError),
    /// The transactional producer could not start.
    #[error("producer: {0}")]
    Connect(#[from] kafka_producer::ConnectError),
    /// `enable.auto.commit=true` in the consumer's settings: the input
    /// offsets are committed in the output's transaction, and an automatic
    /// commit beside it would mark input done whose output may yet be
    /// aborted (Kafka Streams forces it off).
    #[error(
        "enable.auto.commit must be false: the pipeline commits the input offsets in its transaction"
    )]
    AutoCommit,
    /// The transform failed on an input record (a value that does not
    /// decode, a registry that refused a schema, ...). The open
    /// transaction was aborted: none of its output is visible to
    /// read_committed readers, and the committed input offset of that
    /// partition is at most `offset`, so the next run reads this record
    /// again. Fix the record's cause (or the transform) and restart.
    #[error("transform failed on {topic}-{partition} at offset {offset}: {source}")]
    Transform {
        /// The input record's topic.
        topic: String,
        /// Its partition.
        partition: i32,
        /// Its offset.
        offset: i64,
        /// The transform's error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// Exactly-once consume-transform-produce (see the module docs).
///
/// ```no_run
/// # async fn demo(p: &mut kafka_sink::pipeline::ConsumeTransformProduce<fn(&kafka_consumer::ConsumerRecord) -> Vec<kafka_producer::ProducerRecord>>) -> Result<(), kafka_sink::pipeline::PipelineError> {
/// p.step(std::time::Duration::from_millis(200)).await?;
/// println!("{:?}", p.stats());
/// # Ok(()) }
/// ```
///
/// [`ConsumeTransformProduce`] reads the partitions Kafka's group
/// coordinator gives this process ([`GroupConsumer`]), writes the
/// transformed records in a transaction of one transactional producer, and
/// commits that transaction together with the consumed positions
/// (`send_offsets_to_transaction` with the consumer's group metadata, so a
/// member fenced by a rebalance cannot commit — KIP-447). Any number of
/// processes may run with the same group: Kafka splits the input partitions
/// between them.
///
/// Each [`step`](ConsumeTransformProduce::step) of the loop:
/// 1. polls the consumer, waiting at most until the open transaction's
///    commit interval ends;
/// 2. on records: begins a transaction if none is open, and sends each
///    record's transformed output in it (the transform is awaited per
///    record; its output is sent only once it returned whole);
/// 3. on a revocation: commits the open transaction before the revocation is
///    confirmed; on lost partitions or a consumer error that is not fatal:
///    aborts it and rewinds;
/// 4. commits (output and input offsets together) once the commit interval
///    has passed.
///
/// The invariant: every input record's output is visible to read_committed
/// readers exactly once. It holds across crashes and rebalances because
/// output and input offsets are one transaction:
///
/// - **commit** every `commit_interval`, and before a revocation is
///   confirmed (the transaction holds the offsets of the partitions being
///   revoked, so the next owner starts exactly after them);
/// - **abort** on a lost partition (the member was fenced, its offsets can no
///   longer be committed) or an abortable error, then rewind every owned
///   partition to its committed offset and read again;
/// - **stop** when the transform fails on a record
///   ([`RecordTransform`]: a value that does not decode, a registry that
///   refuses a schema): nothing of that record was sent, the open
///   transaction is aborted, every owned partition is rewound to its
///   committed offset, and [`step`](ConsumeTransformProduce::step) returns
///   [`PipelineError::Transform`] naming the record. No offset past it is
///   committed, so the next run (with the cause fixed) begins at or before
///   it;
/// - **stop** when an input position left the log (retention or
///   DeleteRecords passed it) or the log below it was truncated, under
///   `auto.offset.reset=none`: the open transaction is aborted and
///   [`step`](ConsumeTransformProduce::step) returns the consumer's
///   `OffsetOutOfRange` / `LogTruncation` error naming the partition and
///   offsets, so that nothing is skipped silently. Under `earliest`,
///   `latest` or `by_duration` the consumer moves the position itself
///   (logged at warn, counted in `GroupConsumer::metrics`) and the
///   records it skips are never copied;
/// - a crashed process's open transaction is aborted by its transaction
///   timeout (or fenced by a restart with the same transactional id); until
///   then its offsets are pending, and the next owner waits for them
///   (OffsetFetch `RequireStable`) before it reads;
/// - a **live** process whose producer epoch was fenced (the transaction
///   coordinator rolled its transaction back after `transaction.timeout.ms`,
///   as happens when the coordinator's broker dies and its successor takes
///   longer than the timeout to load the transaction log) replaces its
///   producer, as Kafka Streams does on "task migrated":
///   1. a new producer with the same `transactional.id` runs
///      `InitProducerId`, which fences every request of the old epoch still
///      on its way;
///   2. every owned partition is read again from its committed offset.
///      Whatever the coordinator decided for the transaction open at that
///      moment, the committed offsets say which input is done, so nothing is
///      lost or written twice.
///
///   A producer fenced again before it committed anything
///   ([`MAX_PRODUCER_RESTARTS`] times in a row) means another live process
///   uses the same `transactional.id`: the pipeline stops with
///   [`PipelineError::Transaction`].
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// use kafka_consumer::GroupConsumerConfig;
/// use kafka_producer::{ProducerConfig, ProducerRecord};
/// use kafka_sink::pipeline::{ConsumeTransformProduce, PipelineConfig};
/// use std::time::Duration;
///
/// let consumer = GroupConsumerConfig::from_properties([
///     ("bootstrap.servers", "127.0.0.1:9092"),
///     ("group.id", "orders-enricher"),
///     ("isolation.level", "read_committed"),
/// ])?;
/// let producer = ProducerConfig::from_properties([
///     ("bootstrap.servers", "127.0.0.1:9092"),
///     ("transactional.id", "orders-enricher-1"),
/// ])?;
/// let mut pipeline = ConsumeTransformProduce::connect(
///     consumer,
///     &["orders"],
///     producer,
///     |r| vec![ProducerRecord::new("orders-enriched").value(r.value.clone().unwrap_or_default())],
///     PipelineConfig::default(),
/// )
/// .await?;
/// loop {
///     pipeline.step(Duration::from_millis(500)).await?;
/// }
/// # }
/// ```
#[derive(Debug)]
pub struct ConsumeTransformProduce<F> {
    /// The group member reading the input; its positions are the offsets
    /// committed in each transaction.
    consumer: GroupConsumer,
    /// The transactional producer writing the output (replaced when fenced).
    producer: TransactionalProducer,
    /// The producer's settings, for a replacement after fencing.
    producer_config: ProducerConfig,
    /// Replacements since the last commit.
    restarts_in_a_row: u32,
    /// The user's transform: one input record to its output records
    /// (a closure, or any [`RecordTransform`]).
    transform: F,
    /// The commit interval and the random-abort seed.
    config: PipelineConfig,
    /// When the open transaction began; `None` when none is open.
    open: Option<Instant>,
    /// Input records in the open transaction.
    pending_records: u64,
    /// The xorshift state deciding the random aborts.
    rng: u64,
    /// The counters [`stats`](Self::stats) returns.
    stats: PipelineStats,
}

impl<F> ConsumeTransformProduce<F>
where
    F: FnMut(&ConsumerRecord) -> Vec<ProducerRecord> + Send,
{
    /// Starts the transactional producer (`transactional.id` required;
    /// fences older producers with that id) and joins the group.
    ///
    /// ```no_run
    /// # async fn demo(c: kafka_consumer::GroupConsumerConfig, p: kafka_producer::ProducerConfig) -> Result<(), kafka_sink::pipeline::PipelineError> {
    /// use kafka_sink::pipeline::{ConsumeTransformProduce, PipelineConfig};
    /// let pipeline = ConsumeTransformProduce::connect(c, &["in"], p, |_r| vec![], PipelineConfig::default()).await?;
    /// # let _ = pipeline; Ok(()) }
    /// ```
    pub async fn connect(
        consumer: GroupConsumerConfig,
        topics: &[&str],
        producer: ProducerConfig,
        transform: F,
        config: PipelineConfig,
    ) -> Result<Self, PipelineError> {
        Self::connect_with(consumer, topics, producer, transform, config).await
    }
}

impl<F> ConsumeTransformProduce<F>
where
    F: RecordTransform,
{
    /// [`connect`](Self::connect) with any [`RecordTransform`]: an
    /// asynchronous, fallible transform (decoding with a schema registry,
    /// looking something up). A transform error stops the pipeline (see
    /// [`PipelineError::Transform`]).
    ///
    /// ```no_run
    /// # async fn demo(c: kafka_consumer::GroupConsumerConfig, p: kafka_producer::ProducerConfig) -> Result<(), kafka_sink::pipeline::PipelineError> {
    /// use kafka_consumer::ConsumerRecord;
    /// use kafka_producer::ProducerRecord;
    /// use kafka_sink::pipeline::{ConsumeTransformProduce, PipelineConfig, RecordTransform};
    ///
    /// /// Copies values that are UTF-8; stops at the first that is not.
    /// struct Utf8Only;
    ///
    /// impl RecordTransform for Utf8Only {
    ///     type Error = std::str::Utf8Error;
    ///     async fn transform(&mut self, r: &ConsumerRecord) -> Result<Vec<ProducerRecord>, Self::Error> {
    ///         let text = std::str::from_utf8(r.value.as_deref().unwrap_or_default())?;
    ///         Ok(vec![ProducerRecord::new("out").value(text.to_string())])
    ///     }
    /// }
    ///
    /// let pipeline = ConsumeTransformProduce::connect_with(c, &["in"], p, Utf8Only, PipelineConfig::default()).await?;
    /// # let _ = pipeline; Ok(()) }
    /// ```
    pub async fn connect_with(
        consumer: GroupConsumerConfig,
        topics: &[&str],
        producer: ProducerConfig,
        transform: F,
        config: PipelineConfig,
    ) -> Result<Self, PipelineError> {
        if consumer.auto_commit_interval.is_some() {
            return Err(PipelineError::AutoCommit);
        }
        let producer_config = producer;
        let producer = TransactionalProducer::connect(producer_config.clone()).await?;
        producer.init_transactions().await?;
        let consumer = GroupConsumer::subscribe(consumer, topics.iter().copied()).await?;
        Ok(Self {
            consumer,
            producer,
            producer_config,
            restarts_in_a_row: 0,
            transform,
            rng: config.random_aborts.unwrap_or(0) | 1,
            config,
            open: None,
            pending_records: 0,
            stats: PipelineStats::default(),
        })
    }

    /// What the pipeline did so far.
    pub fn stats(&self) -> PipelineStats {
        self.stats
    }

    /// The consumer (its assignment, member id, state).
    pub fn consumer(&self) -> &GroupConsumer {
        &self.consumer
    }

    /// One round of the loop (see [`ConsumeTransformProduce`] for its steps):
    /// waits up to `timeout` (bounded by the commit interval) for a consumer
    /// event, handles it, and commits when the interval passed. A producer
    /// fenced while this process owns its input is replaced within the round
    /// (counted in [`PipelineStats::producer_restarts`]). Call it in a loop.
    pub async fn step(&mut self, timeout: Duration) -> Result<(), PipelineError> {
        match self.step_once(timeout).await {
            Err(PipelineError::Transaction(e @ TransactionError::Fenced { .. }))
                if self.restarts_in_a_row < MAX_PRODUCER_RESTARTS =>
            {
                self.replace_fenced_producer(e).await
            }
            other => other,
        }
    }

    /// A new producer with the same `transactional.id` in place of one
    /// whose epoch was fenced, then every owned partition rewound to its
    /// committed offset (see the module docs).
    async fn replace_fenced_producer(
        &mut self,
        cause: TransactionError,
    ) -> Result<(), PipelineError> {
        tracing::warn!(
            error = %cause,
            "pipeline: producer fenced while owning its input; replacing it and reading again from the committed offsets"
        );
        self.restarts_in_a_row += 1;
        self.open = None;
        self.pending_records = 0;
        // The old producer's pending records fail at once; its epoch is
        // fenced, so nothing of it can be written any more.
        self.producer = TransactionalProducer::connect(self.producer_config.clone()).await?;
        // InitProducerId: bumps the epoch past every request of the old
        // producer and lets the coordinator finish the old transaction.
        self.producer.init_transactions().await?;
        self.stats.producer_restarts += 1;
        self.consumer.rewind_to_committed().await?;
        Ok(())
    }

    async fn step_once(&mut self, timeout: Duration) -> Result<(), PipelineError> {
        let wait = match self.open {
            Some(at) => timeout
                .min((at + self.config.commit_interval).saturating_duration_since(Instant::now())),
            None => timeout,
        };
        match self.consumer.poll(wait).await {
            Ok(ConsumerEvent::Records(records)) => {
                if !records.is_empty() {
                    self.write(&records).await?;
                }
            }
            Ok(ConsumerEvent::Revoked(parts)) => {
                // The offsets of the revoked partitions are still part of
                // the positions: commit before the next poll gives them up.
                if self.open.is_some() {
                    tracing::debug!(?parts, "pipeline: committing before a revocation");
                    self.end_transaction(false).await?;
                }
            }
            Ok(ConsumerEvent::Lost(parts)) => {
                if self.open.is_some() {
                    tracing::warn!(
                        ?parts,
                        "pipeline: partitions lost; aborting the open transaction"
                    );
                    self.end_transaction(true).await?;
                }
            }
            Ok(ConsumerEvent::Assigned(_)) => {}
            Err(e) if e.is_fatal() => return Err(e.into()),
            Err(GroupError::Reader(e)) if e.is_position_lost() => {
                // auto.offset.reset=none: a position left the log (or the
                // log was truncated below it). Reading on would skip or
                // re-read records silently: stop, the open transaction
                // aborted, and let the operator decide where to go on.
                tracing::error!(error = %e, "pipeline: input position lost; stopping");
                if self.open.is_some() {
                    self.end_transaction(true).await?;
                }
                return Err(PipelineError::Group(GroupError::Reader(e)));
            }
            Err(e) => {
                tracing::warn!(error = %e, "pipeline: consumer error");
                if self.open.is_some() {
                    self.end_transaction(true).await?;
                }
            }
        }
        if self
            .open
            .is_some_and(|at| at.elapsed() >= self.config.commit_interval)
        {
            let abort = self.config.random_aborts.is_some() && self.next_random().is_multiple_of(3);
            self.end_transaction(abort).await?;
        }
        Ok(())
    }

    /// Commits the open transaction now, without waiting for the commit
    /// interval (at the end of a bounded input, or before the process
    /// pauses): the output written so far and the input offsets become
    /// visible together. Nothing happens when no transaction is open. An
    /// abortable failure aborts and rewinds, as at the interval.
    ///
    /// ```no_run
    /// # async fn demo(p: &mut kafka_sink::pipeline::ConsumeTransformProduce<fn(&kafka_consumer::ConsumerRecord) -> Vec<kafka_producer::ProducerRecord>>) -> Result<(), kafka_sink::pipeline::PipelineError> {
    /// p.step(std::time::Duration::from_millis(200)).await?;
    /// p.commit_open_transaction().await?;
    /// println!("{} input records committed", p.stats().committed_records);
    /// # Ok(()) }
    /// ```
    pub async fn commit_open_transaction(&mut self) -> Result<(), PipelineError> {
        self.end_transaction(false).await
    }

    fn next_random(&mut self) -> u64 {
        // xorshift64: deterministic for a given seed.
        let mut x = self.rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng = x;
        x
    }

    async fn write(&mut self, records: &[ConsumerRecord]) -> Result<(), PipelineError> {
        if self.open.is_none() {
            self.producer.begin_transaction()?;
            self.open = Some(Instant::now());
        }
        for r in records {
            let outputs = match self.transform.transform(r).await {
                Ok(outputs) => outputs,
                Err(e) => {
                    // Nothing of this record was sent. The records before
                    // it in the open transaction are aborted with it, and
                    // the positions are rewound to the committed offsets:
                    // no offset past this record is ever committed.
                    tracing::error!(
                        topic = %r.topic,
                        partition = r.partition,
                        offset = r.offset,
                        error = %e,
                        "pipeline: transform failed; aborting the open transaction and stopping"
                    );
                    self.end_transaction(true).await?;
                    return Err(PipelineError::Transform {
                        topic: r.topic.to_string(),
                        partition: r.partition,
                        offset: r.offset,
                        source: Box::new(e),
                    });
                }
            };
            self.stats.consumed += 1;
            self.pending_records += 1;
            for out in outputs {
                // The producer owns the record from here; a failed send
                // makes the commit fail (abortable), so the future is not
                // needed.
                drop(self.producer.send(out));
            }
        }
        Ok(())
    }

    /// Commits (output and input offsets) or aborts the open transaction.
    /// An abortable failure aborts; after any abort every owned partition
    /// is read again from its committed offset.
    async fn end_transaction(&mut self, abort: bool) -> Result<(), PipelineError> {
        if self.open.take().is_none() {
            return Ok(());
        }
        let records = std::mem::take(&mut self.pending_records);
        if !abort {
            let started = Instant::now();
            match self.commit().await {
                Ok(()) => {
                    let took = started.elapsed();
                    self.stats.commit_time_total += took;
                    self.stats.commit_time_max = self.stats.commit_time_max.max(took);
                    self.stats.committed += 1;
                    self.stats.committed_records += records;
                    self.restarts_in_a_row = 0;
                    return Ok(());
                }
                Err(e) if e.is_abortable() => {
                    tracing::warn!(error = %e, "pipeline: commit failed; aborting");
                }
                Err(e) => return Err(e.into()),
            }
        }
        self.producer.abort_transaction().await?;
        self.stats.aborted += 1;
        self.consumer.rewind_to_committed().await?;
        Ok(())
    }

    async fn commit(&mut self) -> Result<(), TransactionError> {
        let offsets = self.consumer.transaction_offsets();
        if !offsets.is_empty() {
            let group = self.consumer.group_metadata();
            self.producer
                .send_offsets_and_metadata_to_transaction(offsets, &group)
                .await?;
        }
        self.producer.commit_transaction().await
    }

    /// Aborts the open transaction (its input is read again by the next
    /// owner of the partitions), leaves the group and closes the producer:
    /// a stop that commits nothing more.
    pub async fn abort_and_close(
        mut self,
        timeout: Duration,
    ) -> Result<PipelineStats, PipelineError> {
        if self.open.take().is_some() {
            self.pending_records = 0;
            self.producer.abort_transaction().await?;
            self.stats.aborted += 1;
        }
        self.consumer.close(timeout).await;
        if let Err(e) = self.producer.close(timeout).await {
            tracing::warn!(error = %e, "pipeline: producer close");
        }
        Ok(self.stats)
    }

    /// Commits the open transaction, leaves the group and closes the
    /// producer.
    pub async fn close(mut self, timeout: Duration) -> Result<PipelineStats, PipelineError> {
        self.end_transaction(false).await?;
        self.consumer.close(timeout).await;
        if let Err(e) = self.producer.close(timeout).await {
            tracing::warn!(error = %e, "pipeline: producer close");
        }
        Ok(self.stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Invariant: a consumer failure reads as the consumer's, with its
    /// message.
    #[test]
    fn group_error_reads_as_the_consumers() {
        let e = PipelineError::from(GroupError::Closed);
        assert!(e.to_string().starts_with("consumer: "), "{e}");
        assert!(e.to_string().contains("closed"), "{e}");
    }

    /// Invariant: transactions stay open 100 ms by default (Kafka Streams'
    /// exactly-once `commit.interval.ms`), with no random aborts.
    #[test]
    fn default_commit_interval_is_100_ms() {
        let c = PipelineConfig::default();
        assert_eq!(c.commit_interval, Duration::from_millis(100));
        assert!(c.random_aborts.is_none());
    }
}
