//! An exactly-once RabbitMQ → Kafka bridge (feature `rabbitmq`): a
//! [`RabbitMqSource`] queue, a user transform and a [`KafkaSink`] in
//! EXACTLY_ONCE, checkpointed by the crate's [`CheckpointCoordinator`].

use std::collections::{HashSet, VecDeque};
use std::fmt;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use kafka_producer::ProducerConfig;
use tokio::sync::Mutex;
use tokio::time::Instant;

use crate::checkpoint::{
    CheckpointCoordinator, CheckpointError, CheckpointStorage, CheckpointedOperator,
    DEFAULT_RETAINED_CHECKPOINTS, OperatorError, OperatorInfo, RestoredState,
};
use crate::codec::{StateDecodeError, StateReader, put_str, put_u8, put_u32};
use crate::kafka::{KafkaSink, KafkaSinkConfig, KafkaSinkError, KafkaSinkRecord, Semantic};
use crate::source::{
    RabbitMqSource, RabbitMqSourceConfig, RabbitMqSourceError, RabbitMqSourceStats, SourceMessage,
};
use crate::two_phase::{RecordContext, TwoPhaseCommitError};

/// Operator id of the Kafka sink in the bridge's checkpoints.
pub const SINK_UID: &str = "bridge-kafka-sink";
/// Operator id of the dedup window in the bridge's checkpoints.
pub const DEDUP_UID: &str = "bridge-dedup";
/// Operator id of the RabbitMQ source in the bridge's checkpoints.
pub const SOURCE_UID: &str = "bridge-rabbitmq-source";

/// Default [`BridgeConfig::checkpoint_interval`].
pub const DEFAULT_CHECKPOINT_INTERVAL: Duration = Duration::from_secs(1);
/// Default [`BridgeConfig::dedup_window`].
pub const DEFAULT_DEDUP_WINDOW: usize = 10_000;
/// Default Kafka transaction timeout of a bridge (below the brokers' default
/// `transaction.max.timeout.ms` of 15 minutes).
pub const DEFAULT_BRIDGE_TRANSACTION_TIMEOUT: Duration = Duration::from_secs(600);

/// The user transform: one RabbitMQ message to any number of Kafka records.
pub type Transform = Arc<dyn Fn(SourceMessage) -> Vec<KafkaSinkRecord> + Send + Sync>;

/// Called synchronously on every [`BridgeEvent`].
pub type EventHook = Arc<dyn Fn(&BridgeEvent) + Send + Sync>;

/// Configuration of a [`Bridge`].
///
/// ```
/// use kafka_sink::pipeline::BridgeConfig;
/// use std::time::Duration;
///
/// let mut config = BridgeConfig::new(
///     "amqp://guest:guest@127.0.0.1:5672/%2f",
///     "orders",
///     "127.0.0.1:9092",
///     "orders-out",
///     "/var/lib/orders-bridge",
/// );
/// config.checkpoint_interval = Duration::from_millis(500);
/// config.idle_timeout = Some(Duration::from_secs(30));
/// assert_eq!(config.sink.transactional_id_prefix.as_deref(), Some("rabbitmq-bridge-orders"));
/// ```
#[derive(Debug, Clone)]
pub struct BridgeConfig {
    /// The RabbitMQ source; its guarantee must be exactly-once (the default).
    pub source: RabbitMqSourceConfig,
    /// The Kafka sink; its semantic is forced to EXACTLY_ONCE. The
    /// transactional id prefix must be stable across restarts and unique
    /// per bridge. Partitions are the producer's choice
    /// (`sink.producer.partitioner`, by default murmur2 of the key as Java's
    /// producer) unless [`KafkaSinkConfig::partitioner`] names another.
    pub sink: KafkaSinkConfig,
    /// Where checkpoints are written; reuse it on restart to recover.
    pub checkpoint_dir: PathBuf,
    /// Complete checkpoints kept on disk.
    pub retained_checkpoints: usize,
    /// How often a checkpoint (one Kafka transaction, one batch of RabbitMQ
    /// acknowledgements) is taken while messages arrive.
    pub checkpoint_interval: Duration,
    /// Stop (after a final checkpoint) when no delivery arrived while the
    /// bridge waited this long for one, connected (time spent checkpointing
    /// or writing to Kafka does not count); `None` runs until the shutdown
    /// future completes.
    pub idle_timeout: Option<Duration>,
    /// Correlation ids of this many processed messages are remembered
    /// (and checkpointed) to drop messages published twice; 0 disables the
    /// window (then only the source's dedup of unacknowledged ids applies).
    pub dedup_window: usize,
    /// Exactly-once needs a correlation id on every message. `false` (the
    /// default): a message without one ends [`Bridge::run`] with
    /// [`BridgeError::Source`]. `true`: it is counted, logged and left
    /// unacknowledged (the broker redelivers it to the next consumer).
    pub skip_messages_without_correlation_id: bool,
}

impl BridgeConfig {
    /// Defaults: source and sink defaults with the sink in EXACTLY_ONCE,
    /// transactional id prefix `rabbitmq-bridge-<queue>`, a 10 min
    /// transaction timeout, a checkpoint every second, no idle timeout, a
    /// dedup window of 10 000 ids.
    ///
    /// ```
    /// use kafka_sink::pipeline::{
    ///     BridgeConfig, DEFAULT_BRIDGE_TRANSACTION_TIMEOUT, DEFAULT_DEDUP_WINDOW,
    /// };
    /// use kafka_sink::kafka::Semantic;
    /// let config = BridgeConfig::new(
    ///     "amqp://127.0.0.1:5672/%2f",
    ///     "payments",
    ///     "broker-1:9092",
    ///     "payments-out",
    ///     "/var/lib/bridge",
    /// );
    /// assert_eq!(config.sink.semantic, Semantic::ExactlyOnce);
    /// let prefix = config.sink.transactional_id_prefix.as_deref();
    /// assert_eq!(prefix, Some("rabbitmq-bridge-payments"));
    /// assert_eq!(config.sink.transaction_timeout, DEFAULT_BRIDGE_TRANSACTION_TIMEOUT);
    /// assert_eq!((config.dedup_window, config.idle_timeout), (DEFAULT_DEDUP_WINDOW, None));
    /// ```
    pub fn new(
        amqp_url: impl Into<String>,
        queue: impl Into<String>,
        bootstrap: &str,
        topic: impl Into<String>,
        checkpoint_dir: impl Into<PathBuf>,
    ) -> Self {
        let source = RabbitMqSourceConfig::new(amqp_url, queue);
        let mut sink = KafkaSinkConfig::new(ProducerConfig::new(bootstrap), topic);
        sink.semantic = Semantic::ExactlyOnce;
        sink.transactional_id_prefix = Some(format!("rabbitmq-bridge-{}", source.queue));
        sink.transaction_timeout = DEFAULT_BRIDGE_TRANSACTION_TIMEOUT;
        BridgeConfig {
            source,
            sink,
            checkpoint_dir: checkpoint_dir.into(),
            retained_checkpoints: DEFAULT_RETAINED_CHECKPOINTS,
            checkpoint_interval: DEFAULT_CHECKPOINT_INTERVAL,
            idle_timeout: None,
            dedup_window: DEFAULT_DEDUP_WINDOW,
            skip_messages_without_correlation_id: false,
        }
    }
}

/// Counters of one [`Bridge::run`] (this process only).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BridgeStats {
    /// Messages transformed and written.
    pub messages: u64,
    /// Kafka records written (committed once their checkpoint completes).
    pub records: u64,
    /// Messages dropped by the dedup window (published twice).
    pub published_duplicates: u64,
    /// Messages written that the broker flagged as redelivered (processed
    /// again after a crash or reconnect: their earlier writes were aborted).
    pub redelivered: u64,
    /// Messages without correlation id skipped (see
    /// [`BridgeConfig::skip_messages_without_correlation_id`]).
    pub missing_correlation_id: u64,
    /// Checkpoints completed.
    pub checkpoints: u64,
    /// Source acknowledgements that failed and are retried with the next
    /// checkpoint (e.g. during a broker restart).
    pub acknowledge_retries: u64,
    /// The source's counters; `source.duplicates` counts deliveries rejected
    /// as duplicates of messages whose checkpoint is pending or restored.
    pub source: RabbitMqSourceStats,
}

/// Why [`Bridge::run`] stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The shutdown future completed.
    Shutdown,
    /// No delivery for [`BridgeConfig::idle_timeout`].
    Idle,
}

/// What a [`Bridge`] reports to its [event hook](Bridge::on_event).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum BridgeEvent {
    /// Connected and restored; `checkpoint_id` is `None` on a fresh start.
    Started {
        /// The restored checkpoint.
        checkpoint_id: Option<u64>,
    },
    /// Checkpoint `checkpoint_id` is durable on disk; the Kafka commit and
    /// the RabbitMQ acknowledgements follow.
    CheckpointDurable {
        /// The checkpoint.
        checkpoint_id: u64,
    },
    /// Checkpoint `checkpoint_id` completed: committed and acknowledged.
    CheckpointComplete {
        /// The checkpoint.
        checkpoint_id: u64,
        /// The counters so far.
        stats: BridgeStats,
    },
    /// The run loop is stopping (the final checkpoint follows).
    Stopping {
        /// Why.
        reason: StopReason,
    },
}

/// The result of a [`Bridge::run`] that ended cleanly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BridgeReport {
    /// Why it stopped.
    pub reason: StopReason,
    /// The checkpoint restored at start (`None`: fresh start).
    pub restored_checkpoint: Option<u64>,
    /// The final checkpoint.
    pub last_checkpoint: Option<u64>,
    /// The counters.
    pub stats: BridgeStats,
}

/// Errors of a [`Bridge`].
///
/// A configuration the bridge cannot run is rejected before anything
/// connects:
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BridgeError {
    /// An invalid configuration.
    #[error("invalid bridge configuration: {0}")]
    Config(String),
    /// The RabbitMQ source failed (connect, missing correlation id...).
    #[error("RabbitMQ source: {0}")]
    Source(#[from] RabbitMqSourceError),
    /// Connecting the Kafka sink failed.
    #[error("Kafka sink: {0}")]
    Sink(#[from] KafkaSinkError),
    /// Writing a record failed (the open transaction is aborted by the next
    /// start).
    #[error("writing to Kafka: {0}")]
    Write(#[from] TwoPhaseCommitError<KafkaSinkError>),
    /// Restoring, taking or completing a checkpoint failed. A checkpoint
    /// that was written is committed by the next start.
    #[error("checkpoint: {0}")]
    Checkpoint(#[from] CheckpointError),
}

/// The Kafka sink, announcing [`BridgeEvent::CheckpointDurable`] before it
/// commits.
struct SinkOperator {
    /// The EXACTLY_ONCE Kafka sink.
    sink: KafkaSink<KafkaSinkRecord>,
    /// The bridge's event hook, told when a checkpoint is durable.
    events: Option<EventHook>,
}

impl CheckpointedOperator for SinkOperator {
    async fn initialize_state(
        &mut self,
        restored: Option<RestoredState>,
    ) -> Result<(), OperatorError> {
        self.sink.initialize_state(restored).await
    }

    async fn snapshot_state(&mut self, checkpoint_id: u64) -> Result<Vec<u8>, OperatorError> {
        self.sink.snapshot_state(checkpoint_id).await
    }

    async fn notify_checkpoint_complete(
        &mut self,
        checkpoint_id: u64,
    ) -> Result<(), OperatorError> {
        if let Some(hook) = &self.events {
            hook(&BridgeEvent::CheckpointDurable { checkpoint_id });
        }
        self.sink.notify_checkpoint_complete(checkpoint_id).await
    }
}

/// The correlation ids of the last `capacity` processed messages.
///
/// State format v1: magic `KBDD`, version 1, `u32` capacity, `u32` count,
/// then the ids oldest first (`u32` length + UTF-8).
#[derive(Debug, Default)]
struct DedupWindow {
    /// How many ids are remembered; 0 disables the window.
    capacity: usize,
    /// The remembered ids, oldest first (the eviction order).
    order: VecDeque<String>,
    /// The same ids, for lookups.
    ids: HashSet<String>,
}

const DEDUP_MAGIC: [u8; 4] = *b"KBDD";
const DEDUP_VERSION: u8 = 1;

impl DedupWindow {
    fn new(capacity: usize) -> Self {
        DedupWindow {
            capacity,
            ..DedupWindow::default()
        }
    }

    /// Records `id`; `false` if it is in the window already.
    fn insert(&mut self, id: &str) -> bool {
        if self.capacity == 0 {
            return true;
        }
        if self.ids.contains(id) {
            return false;
        }
        self.ids.insert(id.to_owned());
        self.order.push_back(id.to_owned());
        while self.order.len() > self.capacity {
            if let Some(old) = self.order.pop_front() {
                self.ids.remove(&old);
            }
        }
        true
    }

    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&DEDUP_MAGIC);
        put_u8(&mut out, DEDUP_VERSION);
        put_u32(&mut out, u32::try_from(self.capacity).unwrap_or(u32::MAX));
        put_u32(&mut out, self.order.len() as u32);
        for id in &self.order {
            put_str(&mut out, id);
        }
        out
    }

    fn restore(&mut self, bytes: &[u8]) -> Result<(), StateDecodeError> {
        let mut r = StateReader::new(bytes);
        let magic = r.take(4)?;
        if magic != DEDUP_MAGIC {
            return Err(StateDecodeError::BadMagic {
                expected: DEDUP_MAGIC.to_vec(),
                found: magic.to_vec(),
            });
        }
        r.version(DEDUP_VERSION)?;
        let _written_capacity = r.u32()?;
        let n = r.u32()?;
        self.order.clear();
        self.ids.clear();
        let mut ids = Vec::new();
        for _ in 0..n {
            ids.push(r.str()?.to_owned());
        }
        r.finish()?;
        // Keep the newest ids when the window shrank.
        let skip = ids.len().saturating_sub(self.capacity);
        for id in ids.into_iter().skip(skip) {
            self.ids.insert(id.clone());
            self.order.push_back(id);
        }
        Ok(())
    }
}

impl CheckpointedOperator for DedupWindow {
    async fn initialize_state(
        &mut self,
        restored: Option<RestoredState>,
    ) -> Result<(), OperatorError> {
        self.order.clear();
        self.ids.clear();
        if let Some(bytes) = restored.and_then(|r| r.own.into_iter().next()) {
            self.restore(&bytes)?;
        }
        Ok(())
    }

    async fn snapshot_state(&mut self, _checkpoint_id: u64) -> Result<Vec<u8>, OperatorError> {
        Ok(self.encode())
    }

    async fn notify_checkpoint_complete(&mut self, _id: u64) -> Result<(), OperatorError> {
        Ok(())
    }
}

/// An exactly-once RabbitMQ queue → Kafka topic bridge; the guarantee
/// follows.
///
/// ```no_run
/// use kafka_sink::pipeline::{Bridge, BridgeConfig, BridgeEvent};
/// use kafka_sink::kafka::KafkaSinkRecord;
/// use std::time::Duration;
///
/// # async fn demo() -> Result<(), kafka_sink::pipeline::BridgeError> {
/// let mut config = BridgeConfig::new(
///     "amqp://guest:guest@127.0.0.1:5672/%2f",
///     "orders",
///     "127.0.0.1:9092",
///     "orders-out",
///     "/var/lib/orders-bridge",
/// );
/// config.checkpoint_interval = Duration::from_millis(200);
/// config.idle_timeout = Some(Duration::from_secs(10));
///
/// // Key every record by the message's correlation id.
/// let bridge = Bridge::new(config, |m| {
///     let key = m.correlation_id.unwrap_or_default();
///     vec![KafkaSinkRecord::keyed(key, m.body)]
/// })
/// .on_event(|e| {
///     if let BridgeEvent::CheckpointComplete { checkpoint_id, stats } = e {
///         println!("checkpoint {checkpoint_id}: {} messages", stats.messages);
///     }
/// });
/// let report = bridge
///     .run(async {
///         let _ = tokio::signal::ctrl_c().await;
///     })
///     .await?;
/// println!("stopped ({:?}) after {} messages", report.reason, report.stats.messages);
/// # Ok(()) }
/// ```
///
/// # How the guarantee is kept
///
/// Three operators are registered with the coordinator, in this order (the
/// order of the checkpoint barrier and of the completion notifications):
///
/// 1. the Kafka sink (`bridge-kafka-sink`): one Kafka transaction per
///    checkpoint, pre-committed at the barrier, committed on completion
///    (and by a restarted process if the old one died in between);
/// 2. a dedup window (`bridge-dedup`, optional): the correlation ids of the
///    last [`BridgeConfig::dedup_window`] processed messages, checkpointed, so
///    a message *published* twice (a publisher retry) is written once even
///    when its first copy was acknowledged long ago;
/// 3. the RabbitMQ source (`bridge-rabbitmq-source`): manual
///    acknowledgements, sent only when the checkpoint holding the message
///    completes, after the Kafka commit; a copy redelivered after a crash or
///    reconnect whose checkpoint completed (or was restored) is rejected as a
///    duplicate.
///
/// One task runs everything. On start it restores the last complete
/// checkpoint:
/// 1. the sink commits what the dead process pre-committed and aborts the
///    rest;
/// 2. the source and the dedup window get their ids back;
/// 3. messages processed after that checkpoint come back from RabbitMQ (they
///    were never acknowledged) and are processed again, their earlier Kafka
///    writes having been aborted.
///
/// Then, in a loop, it:
/// 1. pulls a message, transforms it and writes the records, holding every
///    operator's lock for the whole message, so that no checkpoint falls
///    between reading and writing;
/// 2. triggers a checkpoint whenever [`BridgeConfig::checkpoint_interval`]
///    has elapsed and something was received since the last one.
///
/// [`Bridge::run`] returns when its shutdown future completes or when no
/// delivery arrived for [`BridgeConfig::idle_timeout`]; either way it takes
/// a final checkpoint first, so everything received is committed to Kafka
/// and acknowledged at RabbitMQ.
///
/// Losing the RabbitMQ connection (broker restart) is not an error: the
/// source reconnects and the broker redelivers the unacknowledged messages,
/// deduplicated as above. A failed Kafka write, pre-commit or commit ends
/// [`Bridge::run`] with an error; start a new bridge (a new process) on the
/// same checkpoint directory to recover.
pub struct Bridge {
    /// The source, sink and checkpoint settings.
    config: BridgeConfig,
    /// The user's transform of one message into records.
    transform: Transform,
    /// The event hook set by [`on_event`](Self::on_event).
    events: Option<EventHook>,
}

impl fmt::Debug for Bridge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Bridge")
            .field("config", &self.config)
            .field("events", &self.events.is_some())
            .finish_non_exhaustive()
    }
}

/// Everything [`Bridge::run`] works with.
struct Running {
    /// The Kafka sink operator (registered first).
    sink: Arc<Mutex<SinkOperator>>,
    /// The dedup window operator (registered second).
    dedup: Arc<Mutex<DedupWindow>>,
    /// The RabbitMQ source operator (registered last).
    source: Arc<Mutex<RabbitMqSource>>,
    /// Restores the three operators and takes the checkpoints.
    coordinator: CheckpointCoordinator,
    /// The counters reported in events and in the final report.
    stats: BridgeStats,
    /// The bridge's event hook.
    events: Option<EventHook>,
    /// Something happened since the last checkpoint (a delivery, a failed
    /// acknowledgement, a restore).
    dirty: bool,
    /// The last checkpoint completed (or restored), for the report.
    last_checkpoint: Option<u64>,
}

impl Running {
    fn emit(&self, event: BridgeEvent) {
        if let Some(hook) = &self.events {
            hook(&event);
        }
    }

    async fn checkpoint(&mut self) -> Result<(), BridgeError> {
        let result = self.coordinator.trigger_checkpoint().await;
        let id = match result {
            Ok(id) => {
                self.dirty = false;
                id
            }
            Err(CheckpointError::NotifyFailed {
                checkpoint_id,
                failures,
            }) if failures.iter().all(
                |f| matches!(f, CheckpointError::Operator { uid, .. } if uid == SOURCE_UID),
            ) =>
            {
                // The acknowledgements stay pending; the next checkpoint
                // retries them (the Kafka commit succeeded).
                for f in &failures {
                    tracing::warn!(error = %f, "acknowledging at RabbitMQ failed; retrying with the next checkpoint");
                }
                self.stats.acknowledge_retries += 1;
                self.dirty = true;
                checkpoint_id
            }
            Err(e) => return Err(e.into()),
        };
        self.last_checkpoint = Some(id);
        self.stats.checkpoints += 1;
        self.stats.source = self.source.lock().await.stats();
        self.emit(BridgeEvent::CheckpointComplete {
            checkpoint_id: id,
            stats: self.stats,
        });
        Ok(())
    }
}

/// How long the run loop waited for a delivery since the last one (or the
/// last reconnect): only time spent waiting counts, so a checkpoint or a
/// sink write slower than the idle timeout (a loaded broker) does not end
/// the run while deliveries wait in the prefetch.
#[derive(Debug, Default)]
struct IdleClock {
    waited: Duration,
}

impl IdleClock {
    /// A delivery arrived (or the source reconnects): not idle.
    fn activity(&mut self) {
        self.waited = Duration::ZERO;
    }

    /// A wait of `d` for a delivery ended without one.
    fn waited_in_vain(&mut self, d: Duration) {
        self.waited += d;
    }

    /// True once the waits without a delivery reached `timeout`.
    fn is_idle(&self, timeout: Option<Duration>) -> bool {
        timeout.is_some_and(|t| self.waited >= t)
    }
}

/// What one step of the run loop produced.
enum Step {
    Message(Box<SourceMessage>),
    Nothing,
    Stop(StopReason),
}

impl Bridge {
    /// A bridge from `config` writing what `transform` makes of each message.
    /// Nothing connects before [`run`](Self::run).
    ///
    /// ```
    /// use kafka_sink::pipeline::{Bridge, BridgeConfig};
    /// use kafka_sink::kafka::KafkaSinkRecord;
    /// let config = BridgeConfig::new(
    ///     "amqp://127.0.0.1:5672/%2f",
    ///     "orders",
    ///     "broker-1:9092",
    ///     "orders-out",
    ///     "/var/lib/bridge",
    /// );
    /// // One Kafka record per message, its body as the value.
    /// let bridge = Bridge::new(config, |m| vec![KafkaSinkRecord::value(m.body)]);
    /// assert_eq!(bridge.config().sink.default_topic, "orders-out");
    /// ```
    pub fn new(
        config: BridgeConfig,
        transform: impl Fn(SourceMessage) -> Vec<KafkaSinkRecord> + Send + Sync + 'static,
    ) -> Self {
        Bridge {
            config,
            transform: Arc::new(transform),
            events: None,
        }
    }

    /// Calls `hook` on every [`BridgeEvent`] (on the run loop's task: keep
    /// it short).
    pub fn on_event(mut self, hook: impl Fn(&BridgeEvent) + Send + Sync + 'static) -> Self {
        self.events = Some(Arc::new(hook));
        self
    }

    /// The configuration.
    pub fn config(&self) -> &BridgeConfig {
        &self.config
    }

    /// Connects to Kafka and RabbitMQ, restores the last complete checkpoint,
    /// then moves messages until `shutdown` completes or the bridge is idle
    /// for [`BridgeConfig::idle_timeout`]; takes a final checkpoint and
    /// closes both ends.
    ///
    /// On error nothing is closed cleanly on purpose: the next start on the
    /// same checkpoint directory recovers (commits what a written checkpoint
    /// pre-committed, aborts the rest; RabbitMQ redelivers what was not
    /// acknowledged).
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// use kafka_sink::pipeline::{Bridge, BridgeConfig, StopReason};
    /// use kafka_sink::kafka::KafkaSinkRecord;
    /// use std::time::Duration;
    /// # let mut config = BridgeConfig::new("amqp://127.0.0.1:5672/%2f", "orders", "broker-1:9092", "orders-out", "/var/lib/bridge");
    /// config.idle_timeout = Some(Duration::from_secs(30)); // drain the queue, then stop
    /// let bridge = Bridge::new(config, |m| vec![KafkaSinkRecord::value(m.body)]);
    /// let report = bridge.run(std::future::pending()).await?;
    /// assert_eq!(report.reason, StopReason::Idle);
    /// # Ok(()) }
    /// ```
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()>,
    ) -> Result<BridgeReport, BridgeError> {
        let Bridge {
            mut config,
            transform,
            events,
        } = self;
        if config.checkpoint_interval.is_zero() {
            return Err(BridgeError::Config(
                "checkpoint_interval must be > 0".into(),
            ));
        }
        if config.source.guarantee != crate::source::Guarantee::ExactlyOnce {
            return Err(BridgeError::Config(
                "the bridge needs the source's exactly-once guarantee".into(),
            ));
        }
        config.sink.semantic = Semantic::ExactlyOnce;
        if config.sink.transactional_id_prefix.is_none() {
            config.sink.transactional_id_prefix =
                Some(format!("rabbitmq-bridge-{}", config.source.queue));
        }

        let storage = CheckpointStorage::open(&config.checkpoint_dir, config.retained_checkpoints)?;
        let kafka =
            KafkaSink::connect(config.sink.clone(), |r: &KafkaSinkRecord| r.clone()).await?;
        let source = RabbitMqSource::connect(config.source.clone(), None).await?;
        let sink = Arc::new(Mutex::new(SinkOperator {
            sink: kafka,
            events: events.clone(),
        }));
        let dedup = Arc::new(Mutex::new(DedupWindow::new(config.dedup_window)));
        let source = Arc::new(Mutex::new(source));
        let mut coordinator = CheckpointCoordinator::new(storage);
        coordinator.register(OperatorInfo::new(SINK_UID, 0, 1), sink.clone())?;
        coordinator.register(OperatorInfo::new(DEDUP_UID, 0, 1), dedup.clone())?;
        coordinator.register(OperatorInfo::new(SOURCE_UID, 0, 1), source.clone())?;
        let restored_checkpoint = coordinator.restore().await?;
        let mut running = Running {
            sink,
            dedup,
            source,
            coordinator,
            stats: BridgeStats::default(),
            events,
            dirty: true,
            last_checkpoint: restored_checkpoint,
        };
        running.emit(BridgeEvent::Started {
            checkpoint_id: restored_checkpoint,
        });

        let interval = config.checkpoint_interval;
        let mut next_checkpoint = Instant::now() + interval;
        let mut last_deliveries = 0;
        let mut idle = IdleClock::default();
        tokio::pin!(shutdown);
        let reason = loop {
            let now = Instant::now();
            if now >= next_checkpoint {
                if running.dirty {
                    running.checkpoint().await?;
                }
                next_checkpoint = Instant::now() + interval;
            }
            if idle.is_idle(config.idle_timeout) {
                break StopReason::Idle;
            }

            // The barrier rule: every operator's lock, in registration
            // order, for the whole message.
            let mut sink = running.sink.lock().await;
            let mut dedup = running.dedup.lock().await;
            let mut source = running.source.lock().await;
            // A reconnect must not be cut short by the checkpoint deadline
            // (each attempt would restart): give it one attempt's time.
            let deadline = if source.is_connected() {
                next_checkpoint
            } else {
                next_checkpoint.max(Instant::now() + config.source.connect_attempt_timeout)
            };
            let waiting_since = Instant::now();
            let step = tokio::select! {
                biased;
                () = &mut shutdown => Step::Stop(StopReason::Shutdown),
                next = tokio::time::timeout_at(deadline, source.next_message()) => match next {
                    Err(_elapsed) => Step::Nothing,
                    Ok(Ok(Some(message))) => Step::Message(Box::new(message)),
                    // The consumer was cancelled; the next call re-subscribes.
                    Ok(Ok(None)) => Step::Nothing,
                    Ok(Err(RabbitMqSourceError::MissingCorrelationId { delivery_tag, redelivered }))
                        if config.skip_messages_without_correlation_id =>
                    {
                        tracing::warn!(delivery_tag, redelivered, "skipping a message without correlation id (left unacknowledged)");
                        running.stats.missing_correlation_id += 1;
                        Step::Nothing
                    }
                    Ok(Err(e)) => return Err(e.into()),
                },
            };
            let deliveries = source.stats().deliveries;
            // Not idle while reconnecting (e.g. a broker restart).
            if deliveries != last_deliveries || !source.is_connected() {
                last_deliveries = deliveries;
                idle.activity();
                running.dirty = true;
            } else if matches!(step, Step::Nothing) {
                idle.waited_in_vain(waiting_since.elapsed());
            }
            match step {
                Step::Stop(reason) => break reason,
                Step::Nothing => {}
                Step::Message(message) => {
                    let id = message.correlation_id.clone().unwrap_or_default();
                    if !dedup.insert(&id) {
                        running.stats.published_duplicates += 1;
                        continue;
                    }
                    running.stats.messages += 1;
                    if message.redelivered {
                        running.stats.redelivered += 1;
                    }
                    for record in transform(*message) {
                        sink.sink.invoke(record, &RecordContext::default()).await?;
                        running.stats.records += 1;
                    }
                }
            }
            drop((sink, dedup, source));
        };

        running.emit(BridgeEvent::Stopping { reason });
        running.checkpoint().await?;
        running.stats.source = running.source.lock().await.stats();
        let report = BridgeReport {
            reason,
            restored_checkpoint,
            last_checkpoint: running.last_checkpoint,
            stats: running.stats,
        };
        running.sink.lock().await.sink.close().await?;
        let Running {
            source,
            coordinator,
            ..
        } = running;
        drop(coordinator);
        match Arc::try_unwrap(source) {
            Ok(source) => source.into_inner().close().await?,
            // Not expected: the coordinator was the only other owner.
            Err(_) => tracing::warn!("the RabbitMQ source is still shared; dropping it unclosed"),
        }
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Invariant: the bridge is idle only after waiting `timeout` in total
    /// without a delivery; time not spent waiting (a slow checkpoint) does
    /// not count, and a delivery starts the count again.
    #[test]
    fn idle_counts_only_waits_without_a_delivery() {
        let timeout = Some(Duration::from_millis(1500));
        let mut idle = IdleClock::default();
        assert!(!idle.is_idle(None));
        assert!(!idle.is_idle(timeout));
        // Two waits in vain around a checkpoint (of any length: only the
        // waits are counted): not idle yet.
        idle.waited_in_vain(Duration::from_millis(100));
        idle.waited_in_vain(Duration::from_millis(100));
        assert!(!idle.is_idle(timeout));
        idle.waited_in_vain(Duration::from_millis(1300));
        assert!(idle.is_idle(timeout));
        idle.activity();
        assert!(!idle.is_idle(timeout));
        assert!(!idle.is_idle(None));
    }

    #[test]
    fn dedup_window_evicts_oldest_and_round_trips() {
        let mut w = DedupWindow::new(3);
        for id in ["a", "b", "c"] {
            assert!(w.insert(id));
        }
        assert!(!w.insert("a"));
        assert!(w.insert("d")); // evicts "a"
        assert!(w.insert("a")); // evicts "b"
        let bytes = w.encode();
        let mut back = DedupWindow::new(2);
        back.restore(&bytes).unwrap();
        // Shrunk to the newest two: "d", "a".
        assert_eq!(back.order, ["d", "a"]);
        assert!(!back.insert("a"));
        assert!(back.insert("c"));
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(DedupWindow::new(3).restore(&longer).is_err());
        assert!(DedupWindow::new(3).restore(b"XXXX").is_err());
    }

    #[test]
    fn disabled_window_keeps_nothing() {
        let mut w = DedupWindow::new(0);
        assert!(w.insert("a"));
        assert!(w.insert("a"));
        assert!(w.order.is_empty());
    }

    fn orders_config() -> BridgeConfig {
        BridgeConfig::new(
            "amqp://127.0.0.1:5672/%2f",
            "payments",
            "broker-1:9092",
            "payments-out",
            "/var/lib/bridge",
        )
    }

    /// Invariant: the sink runs EXACTLY_ONCE with the prefix
    /// `rabbitmq-bridge-<queue>` and the bridge's 10 min transaction timeout;
    /// the dedup window holds 10 000 ids and there is no idle timeout.
    #[test]
    fn config_defaults() {
        let config = orders_config();
        assert_eq!(config.sink.semantic, Semantic::ExactlyOnce);
        assert_eq!(
            config.sink.transactional_id_prefix.as_deref(),
            Some("rabbitmq-bridge-payments")
        );
        assert_eq!(
            config.sink.transaction_timeout,
            DEFAULT_BRIDGE_TRANSACTION_TIMEOUT
        );
        assert_eq!(
            (config.dedup_window, config.idle_timeout),
            (DEFAULT_DEDUP_WINDOW, None)
        );
    }

    /// Invariant: a zero checkpoint interval is refused before anything
    /// connects.
    #[tokio::test]
    async fn zero_checkpoint_interval_is_a_config_error() {
        let mut config = orders_config();
        config.checkpoint_interval = Duration::ZERO;
        let err = Bridge::new(config, |_| Vec::new())
            .run(async {})
            .await
            .unwrap_err();
        assert!(matches!(err, BridgeError::Config(_)), "{err}");
    }

    /// Invariant: `new` keeps the configuration and `on_event` installs the
    /// hook.
    #[test]
    fn new_keeps_the_config_and_on_event_sets_the_hook() {
        let bridge = Bridge::new(orders_config(), |_| Vec::new());
        assert_eq!(bridge.config().source.queue, "payments");
        assert_eq!(bridge.config().sink.default_topic, "payments-out");
        assert!(format!("{bridge:?}").contains("events: false"));
        let bridge = bridge.on_event(|_| {});
        assert!(format!("{bridge:?}").contains("events: true"));
    }
}
