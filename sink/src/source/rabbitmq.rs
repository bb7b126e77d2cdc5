//! [`RabbitMqSource`]: a RabbitMQ queue consumer with acknowledgements on
//! checkpoint completion (Flink's `RMQSource`), on `lapin`.
//!
//! Differences from Flink's `RMQSource`, all toward fewer losses and
//! duplicates:
//!
//! * A duplicate (a correlation id already in the dedup set) is rejected
//!   with `requeue = false` when the checkpoint it was received in
//!   completes, not at once. This matters after a reconnect: the broker
//!   requeues every unacknowledged message, and rejecting the redelivered
//!   copy at once would drop the only broker copy of a message whose
//!   checkpoint may still fail.
//! * The source reconnects by itself after a connection or channel loss
//!   (broker restart): it re-declares the queue, re-subscribes, and drops the
//!   session ids (delivery tags) of the old channel. The correlation ids of
//!   messages emitted before the loss, and those restored from state, are
//!   kept as "awaiting redelivery": a redelivered copy is treated as a
//!   duplicate even if its checkpoint has completed meanwhile.
//! * A message without a correlation id in exactly-once mode is a typed
//!   error ([`RabbitMqSourceError::MissingCorrelationId`]); the message is
//!   left unacknowledged (never emitted, never acknowledged, never dropped).
//!
//! As in Flink, acknowledgements and rejections run inside an AMQP
//! transaction (`tx.select`), committed once per acknowledged snapshot, so a
//! successful [`notify_checkpoint_complete`](RabbitMqSource::notify_checkpoint_complete)
//! means the broker applied them.

use super::base::MessageAcknowledgingSource;
use super::multiple_ids::{AcknowledgeSessionIdsAsync, MultipleIdsMessageAcknowledgingSource};
use super::state::StateError;
use bytes::Bytes;
use futures_core::Stream;
use lapin::options::{
    BasicAckOptions, BasicConsumeOptions, BasicQosOptions, BasicRejectOptions, QueueDeclareOptions,
};
use lapin::types::FieldTable;
use lapin::{Channel, Connection, ConnectionProperties, Consumer};
use std::collections::{BTreeSet, HashSet};
use std::pin::Pin;
use std::time::{Duration, Instant};

/// The processing guarantee a [`RabbitMqSource`] provides (with checkpoints).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Guarantee {
    /// Correlation ids are required and deduplicated; a message without one
    /// is an error.
    #[default]
    ExactlyOnce,
    /// No deduplication: correlation ids are optional and ignored.
    AtLeastOnce,
}

/// How the delivery tags of a completed snapshot are acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AckMode {
    /// One `basic.ack(tag, multiple = false)` per message, as in Flink.
    #[default]
    PerTag,
    /// One `basic.ack(highest tag, multiple = true)` per snapshot; falls back
    /// to per-tag when an unacknowledged message without correlation id lies
    /// below the highest tag (it must not be acknowledged).
    Multiple,
}

/// Configuration of a [`RabbitMqSource`].
#[derive(Debug, Clone)]
pub struct RabbitMqSourceConfig {
    /// `amqp://user:password@host:port/vhost`.
    pub amqp_url: String,
    /// The queue to consume; declared (idempotently) on every (re)connect.
    pub queue: String,
    /// Exactly-once (default) or at-least-once.
    pub guarantee: Guarantee,
    /// `basic.qos` prefetch count, > 0. Messages stay unacknowledged until a
    /// checkpoint completes, so this bounds the messages per checkpoint.
    pub prefetch_count: u16,
    /// Whether the queue is declared durable (default `true`).
    pub durable_queue: bool,
    /// Per-tag (default) or cumulative acknowledgements.
    pub ack_mode: AckMode,
    /// The consumer tag; empty lets the broker choose.
    pub consumer_tag: String,
    /// How long to keep trying to (re)connect before failing.
    pub reconnect_timeout: Duration,
    /// Bound on one connection attempt (connect, channel, qos, declare,
    /// consume).
    pub connect_attempt_timeout: Duration,
}

impl RabbitMqSourceConfig {
    /// Defaults: exactly-once, prefetch 256, durable queue, per-tag acks,
    /// reconnect for up to 120 s with 10 s per attempt.
    ///
    /// ```
    /// use kafka_sink::source::{AckMode, Guarantee, RabbitMqSourceConfig};
    /// let mut config = RabbitMqSourceConfig::new("amqp://guest:guest@127.0.0.1:5672/%2f", "orders");
    /// // Publishers that set no correlation id: accept redelivered duplicates.
    /// config.guarantee = Guarantee::AtLeastOnce;
    /// // One cumulative basic.ack per checkpoint instead of one per message.
    /// config.ack_mode = AckMode::Multiple;
    /// ```
    pub fn new(amqp_url: impl Into<String>, queue: impl Into<String>) -> Self {
        RabbitMqSourceConfig {
            amqp_url: amqp_url.into(),
            queue: queue.into(),
            guarantee: Guarantee::ExactlyOnce,
            prefetch_count: 256,
            durable_queue: true,
            ack_mode: AckMode::PerTag,
            consumer_tag: String::new(),
            reconnect_timeout: Duration::from_secs(120),
            connect_attempt_timeout: Duration::from_secs(10),
        }
    }
}

/// A message returned by [`RabbitMqSource::next_message`]: never a duplicate
/// of one whose checkpoint is pending or restored.
///
/// ```
/// use kafka_sink::kafka::KafkaSinkRecord;
/// use kafka_sink::source::SourceMessage;
/// // A bridge transform: key the Kafka record by the correlation id.
/// let to_record = |m: SourceMessage| {
///     KafkaSinkRecord::keyed(m.correlation_id.unwrap_or_default(), m.body)
/// };
/// let message = SourceMessage {
///     correlation_id: Some("order-17".into()),
///     body: "{\"amount\":12}".into(),
///     headers: Default::default(),
///     redelivered: false,
///     delivery_tag: 1,
/// };
/// assert_eq!(to_record(message).key.as_deref(), Some(&b"order-17"[..]));
/// ```
#[derive(Debug, Clone)]
pub struct SourceMessage {
    /// The correlation id (the unique id); always `Some` in exactly-once mode.
    pub correlation_id: Option<String>,
    /// The payload.
    pub body: Bytes,
    /// The AMQP headers (empty when none).
    pub headers: FieldTable,
    /// Whether the broker flagged the delivery as a redelivery.
    pub redelivered: bool,
    /// The delivery tag on the current channel.
    pub delivery_tag: u64,
}

/// Counters of a [`RabbitMqSource`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RabbitMqSourceStats {
    /// Deliveries received.
    pub deliveries: u64,
    /// Messages returned by `next_message`.
    pub emitted: u64,
    /// Deliveries dropped as duplicates (rejected when their checkpoint
    /// completes).
    pub duplicates: u64,
    /// Deliveries without a correlation id in exactly-once mode.
    pub missing_correlation_id: u64,
    /// Delivery tags acknowledged (committed).
    pub acknowledged: u64,
    /// Duplicate delivery tags rejected (committed).
    pub rejected: u64,
    /// Successful reconnects after a lost session.
    pub reconnects: u64,
}

/// Errors of a [`RabbitMqSource`].
///
/// An invalid configuration is rejected before connecting:
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RabbitMqSourceError {
    /// Exactly-once mode and a message without a correlation id. The message
    /// is left unacknowledged; the broker redelivers it after the source
    /// reconnects or is dropped.
    #[error(
        "message with delivery tag {delivery_tag} (redelivered: {redelivered}) has no correlation id; \
         exactly-once needs a unique correlation id on every message"
    )]
    MissingCorrelationId {
        /// Its delivery tag on the current channel.
        delivery_tag: u64,
        /// The broker's redelivered flag.
        redelivered: bool,
    },
    /// An invalid configuration.
    #[error("invalid RabbitMQ source configuration: {0}")]
    Config(String),
    /// (Re)connecting failed for [`RabbitMqSourceConfig::reconnect_timeout`].
    #[error("could not connect to RabbitMQ queue {queue:?} within {elapsed:?}: {last}")]
    Connect {
        /// The queue.
        queue: String,
        /// Time spent.
        elapsed: Duration,
        /// The last attempt's error.
        last: String,
    },
    /// Acknowledging a completed checkpoint failed; it stays pending and the
    /// next notification retries it.
    #[error("acknowledging checkpoint {checkpoint_id} failed: {source}")]
    Acknowledge {
        /// The notified checkpoint.
        checkpoint_id: u64,
        /// The cause.
        source: AcknowledgeError,
    },
    /// [`RabbitMqSource::initialize_state`] after messages were received.
    #[error("initialize_state must run before the first message ({deliveries} received)")]
    InitializeAfterStart {
        /// Deliveries received so far.
        deliveries: u64,
    },
    /// Restoring or snapshotting the state failed.
    #[error(transparent)]
    State(#[from] StateError),
}

/// Why an acknowledgement failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AcknowledgeError {
    /// No open channel to acknowledge on.
    #[error("no open channel")]
    NoChannel,
    /// The broker or connection failed.
    #[error(transparent)]
    Amqp(#[from] lapin::Error),
}

/// A delivery tag recorded in a snapshot group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SessionTag {
    tag: u64,
    /// A duplicate: rejected (requeue = false) instead of acknowledged.
    duplicate: bool,
}

struct Session {
    connection: Connection,
    channel: Channel,
    consumer: Consumer,
}

/// lapin connection properties running on the current tokio runtime (its
/// executor and reactor), instead of lapin's default async-io runtime: no
/// extra threads and no `-sys` crate in the build.
///
/// Must be called inside a tokio runtime.
///
/// ```no_run
/// # async fn f() -> Result<(), lapin::Error> {
/// let props = kafka_sink::source::connection_properties();
/// let conn = lapin::Connection::connect("amqp://127.0.0.1:5672/%2f", props).await?;
/// # drop(conn); Ok(()) }
/// ```
pub fn connection_properties() -> ConnectionProperties {
    ConnectionProperties::default()
        .with_executor(tokio_executor_trait::Tokio::current())
        .with_reactor(tokio_reactor_trait::Tokio::current())
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("channel", &self.channel.id())
            .field("connected", &self.alive())
            .finish()
    }
}

impl Session {
    fn alive(&self) -> bool {
        self.connection.status().connected() && self.channel.status().connected()
    }

    async fn open(config: &RabbitMqSourceConfig) -> Result<Session, lapin::Error> {
        let props =
            connection_properties().with_connection_name("kafka-eos-rabbitmq-source".into());
        let connection = Connection::connect(&config.amqp_url, props).await?;
        let channel = connection.create_channel().await?;
        channel
            .basic_qos(config.prefetch_count, BasicQosOptions { global: false })
            .await?;
        channel.tx_select().await?;
        channel
            .queue_declare(
                &config.queue,
                QueueDeclareOptions {
                    durable: config.durable_queue,
                    ..QueueDeclareOptions::default()
                },
                FieldTable::default(),
            )
            .await?;
        let consumer = channel
            .basic_consume(
                &config.queue,
                &config.consumer_tag,
                BasicConsumeOptions {
                    no_ack: false,
                    ..BasicConsumeOptions::default()
                },
                FieldTable::default(),
            )
            .await?;
        Ok(Session {
            connection,
            channel,
            consumer,
        })
    }
}

struct ChannelAcker<'a> {
    channel: Option<&'a Channel>,
    mode: AckMode,
    poison: &'a BTreeSet<u64>,
    stats: &'a mut RabbitMqSourceStats,
}

impl AcknowledgeSessionIdsAsync<SessionTag> for ChannelAcker<'_> {
    type Error = AcknowledgeError;

    async fn acknowledge_session_ids(
        &mut self,
        session_ids: &[SessionTag],
    ) -> Result<(), AcknowledgeError> {
        if session_ids.is_empty() {
            return Ok(());
        }
        let channel = self.channel.ok_or(AcknowledgeError::NoChannel)?;
        let mut rejected = 0;
        for t in session_ids.iter().filter(|t| t.duplicate) {
            channel
                .basic_reject(t.tag, BasicRejectOptions { requeue: false })
                .await?;
            rejected += 1;
        }
        let acks: Vec<u64> = session_ids
            .iter()
            .filter(|t| !t.duplicate)
            .map(|t| t.tag)
            .collect();
        let cumulative = match (self.mode, acks.iter().max()) {
            (AckMode::Multiple, Some(&max)) if self.poison.range(..max).next().is_none() => {
                Some(max)
            }
            _ => None,
        };
        if let Some(max) = cumulative {
            channel
                .basic_ack(max, BasicAckOptions { multiple: true })
                .await?;
        } else {
            for &tag in &acks {
                channel
                    .basic_ack(tag, BasicAckOptions { multiple: false })
                    .await?;
            }
        }
        channel.tx_commit().await?;
        self.stats.acknowledged += acks.len() as u64;
        self.stats.rejected += rejected;
        Ok(())
    }
}

/// A RabbitMQ queue consumer whose messages are acknowledged only when a
/// checkpoint containing them completes, deduplicated by correlation id
/// across reconnects and restarts (Flink's `RMQSource` in exactly-once mode).
///
/// Use it from one task: pull messages with
/// [`next_message`](Self::next_message), take a snapshot with
/// [`snapshot_state`](Self::snapshot_state) when the checkpoint barrier
/// passes (persist the bytes with the checkpoint), and call
/// [`notify_checkpoint_complete`](Self::notify_checkpoint_complete) once the
/// checkpoint is durable everywhere. After a crash, start a new source with
/// the last completed checkpoint's bytes.
///
/// ```no_run
/// use kafka_sink::source::{RabbitMqSource, RabbitMqSourceConfig};
///
/// # async fn run(restored: Option<Vec<u8>>) -> Result<(), Box<dyn std::error::Error>> {
/// let config = RabbitMqSourceConfig::new("amqp://guest:guest@127.0.0.1:5672/%2f", "orders");
/// let mut source = RabbitMqSource::connect(config, restored.as_deref()).await?;
/// let mut checkpoint_id = source.last_snapshot_id().unwrap_or(0);
/// while let Some(message) = source.next_message().await? {
///     // ... process message.body; every 100 messages take a checkpoint:
///     # let _ = message;
///     if source.stats().emitted % 100 == 0 {
///         checkpoint_id += 1;
///         let state = source.snapshot_state(checkpoint_id)?;
///         // ... persist `state`, commit downstream, then:
///         # let _ = state;
///         source.notify_checkpoint_complete(checkpoint_id).await?;
///     }
/// }
/// # Ok(()) }
/// ```
///
/// # Cancel safety
///
/// `next_message` may be cancelled (e.g. by a timeout): no message is lost
/// and the state stays consistent. `notify_checkpoint_complete` should not
/// be cancelled; if it is, call it again.
#[derive(Debug)]
pub struct RabbitMqSource {
    /// The queue, guarantee, prefetch and reconnect settings.
    config: RabbitMqSourceConfig,
    /// Correlation ids per snapshot (checkpointed) and delivery tags per
    /// snapshot (per channel, never persisted).
    state: MultipleIdsMessageAcknowledgingSource<String, SessionTag>,
    /// The open connection, channel and consumer; `None` until (re)connected.
    session: Option<Session>,
    /// Correlation ids emitted (or restored) whose broker copy may come back
    /// on a new channel; a delivery with one of them is a duplicate.
    awaiting_redelivery: HashSet<String>,
    /// Delivery tags of messages without correlation id, left unacknowledged.
    poison: BTreeSet<u64>,
    /// The counters [`stats`](Self::stats) returns.
    stats: RabbitMqSourceStats,
    /// Whether a session was ever opened, so that a later one counts as a
    /// reconnect.
    connected_once: bool,
}

impl RabbitMqSource {
    /// Restores `restored_state` (the bytes of a completed checkpoint's
    /// [`snapshot_state`](Self::snapshot_state); `None` for a fresh start)
    /// and connects: declares the queue, sets the prefetch, enables AMQP
    /// transactions and subscribes with manual acknowledgements.
    ///
    /// ```no_run
    /// # async fn example(restored: Option<Vec<u8>>) -> Result<(), Box<dyn std::error::Error>> {
    /// use kafka_sink::source::{RabbitMqSource, RabbitMqSourceConfig};
    /// let config = RabbitMqSourceConfig::new("amqp://guest:guest@127.0.0.1:5672/%2f", "orders");
    /// // `restored`: the source's bytes in the last completed checkpoint.
    /// let source = RabbitMqSource::connect(config, restored.as_deref()).await?;
    /// assert!(source.is_connected());
    /// # Ok(()) }
    /// ```
    pub async fn connect(
        config: RabbitMqSourceConfig,
        restored_state: Option<&[u8]>,
    ) -> Result<RabbitMqSource, RabbitMqSourceError> {
        if config.prefetch_count == 0 {
            return Err(RabbitMqSourceError::Config(
                "prefetch_count must be > 0 (0 means unbounded)".into(),
            ));
        }
        if config.queue.is_empty() {
            return Err(RabbitMqSourceError::Config("queue must be named".into()));
        }
        let mut source = RabbitMqSource {
            config,
            state: MultipleIdsMessageAcknowledgingSource::new(),
            session: None,
            awaiting_redelivery: HashSet::new(),
            poison: BTreeSet::new(),
            stats: RabbitMqSourceStats::default(),
            connected_once: false,
        };
        source.initialize_state(restored_state)?;
        source.ensure_session().await?;
        Ok(source)
    }

    /// Replaces the state with `restored_state` (`None`: empty), as
    /// [`connect`](Self::connect) does; for a checkpoint driver that restores
    /// after the source was built. Fails once a message was received.
    pub fn initialize_state(
        &mut self,
        restored_state: Option<&[u8]>,
    ) -> Result<(), RabbitMqSourceError> {
        if self.stats.deliveries > 0 {
            return Err(RabbitMqSourceError::InitializeAfterStart {
                deliveries: self.stats.deliveries,
            });
        }
        self.state.initialize_state(restored_state)?;
        self.awaiting_redelivery.clear();
        if self.config.guarantee == Guarantee::ExactlyOnce {
            for cp in self.state.base().pending() {
                self.awaiting_redelivery.extend(cp.ids.iter().cloned());
            }
        }
        Ok(())
    }

    /// The next message that is not a duplicate. Reconnects (within
    /// [`RabbitMqSourceConfig::reconnect_timeout`]) when the connection or
    /// channel is lost. `Ok(None)` means the broker cancelled the consumer
    /// (e.g. the queue was deleted); calling again re-subscribes.
    ///
    /// In exactly-once mode a message without correlation id yields
    /// [`RabbitMqSourceError::MissingCorrelationId`]; later calls go on with
    /// the following messages.
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// # use kafka_sink::source::{RabbitMqSource, RabbitMqSourceConfig};
    /// # let config = RabbitMqSourceConfig::new("amqp://127.0.0.1:5672/%2f", "orders");
    /// # let mut source = RabbitMqSource::connect(config, None).await?;
    /// use kafka_sink::source::RabbitMqSourceError;
    /// match source.next_message().await {
    ///     Ok(Some(message)) => println!("{:?}: {:?}", message.correlation_id, message.body),
    ///     Ok(None) => println!("consumer cancelled; the next call re-subscribes"),
    ///     Err(RabbitMqSourceError::MissingCorrelationId { delivery_tag, .. }) => {
    ///         eprintln!("message {delivery_tag} has no correlation id; left unacknowledged");
    ///     }
    ///     Err(e) => return Err(e.into()),
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn next_message(&mut self) -> Result<Option<SourceMessage>, RabbitMqSourceError> {
        loop {
            let session = self.ensure_session().await?;
            let consumer = &mut session.consumer;
            let next = std::future::poll_fn(|cx| Pin::new(&mut *consumer).poll_next(cx)).await;
            match next {
                Some(Ok(delivery)) => {
                    if let Some(message) = self.accept(delivery)? {
                        return Ok(Some(message));
                    }
                }
                Some(Err(e)) => {
                    tracing::warn!(error = %e, queue = %self.config.queue, "RabbitMQ consumer failed; reconnecting");
                    self.end_session();
                }
                None => {
                    let alive = self.session.as_ref().is_some_and(Session::alive);
                    self.end_session();
                    if alive {
                        return Ok(None);
                    }
                    tracing::warn!(queue = %self.config.queue, "RabbitMQ connection lost; reconnecting");
                }
            }
        }
    }

    fn accept(
        &mut self,
        delivery: lapin::message::Delivery,
    ) -> Result<Option<SourceMessage>, RabbitMqSourceError> {
        self.stats.deliveries += 1;
        let tag = delivery.delivery_tag;
        let correlation_id = delivery
            .properties
            .correlation_id()
            .as_ref()
            .map(|c| c.as_str().to_owned());
        if self.config.guarantee == Guarantee::ExactlyOnce {
            let Some(id) = correlation_id.clone() else {
                self.stats.missing_correlation_id += 1;
                self.poison.insert(tag);
                return Err(RabbitMqSourceError::MissingCorrelationId {
                    delivery_tag: tag,
                    redelivered: delivery.redelivered,
                });
            };
            let awaited = self.awaiting_redelivery.remove(&id);
            // Always recorded in the current group, so the id stays in the
            // dedup set until the group holding this delivery is acknowledged.
            let new = self.state.add_id(id);
            if !new || awaited {
                self.stats.duplicates += 1;
                self.state.add_session_id(SessionTag {
                    tag,
                    duplicate: true,
                });
                return Ok(None);
            }
        }
        self.state.add_session_id(SessionTag {
            tag,
            duplicate: false,
        });
        self.stats.emitted += 1;
        Ok(Some(SourceMessage {
            correlation_id,
            headers: delivery.properties.headers().clone().unwrap_or_default(),
            body: Bytes::from(delivery.data),
            redelivered: delivery.redelivered,
            delivery_tag: tag,
        }))
    }

    /// Takes the snapshot of checkpoint `checkpoint_id` (strictly greater
    /// than the previous one): returns the bytes to persist with the
    /// checkpoint and to pass to [`connect`](Self::connect) on recovery.
    pub fn snapshot_state(&mut self, checkpoint_id: u64) -> Result<Bytes, RabbitMqSourceError> {
        Ok(self.state.snapshot_state(checkpoint_id)?)
    }

    /// Checkpoint `checkpoint_id` completed: acknowledges (and rejects
    /// duplicates of) every snapshot ≤ it in one AMQP transaction per
    /// snapshot and releases their correlation ids. Returns the number of
    /// snapshots acknowledged. On error the failing snapshot stays pending and
    /// the next call retries it.
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// # use kafka_sink::source::{RabbitMqSource, RabbitMqSourceConfig};
    /// # let config = RabbitMqSourceConfig::new("amqp://127.0.0.1:5672/%2f", "orders");
    /// # let mut source = RabbitMqSource::connect(config, None).await?;
    /// # let _ = source.next_message().await?;
    /// let state = source.snapshot_state(1)?;
    /// // ... persist `state`, commit the downstream writes of checkpoint 1, then:
    /// # let _ = state;
    /// let acknowledged = source.notify_checkpoint_complete(1).await?;
    /// assert_eq!(acknowledged, 1);
    /// # Ok(()) }
    /// ```
    pub async fn notify_checkpoint_complete(
        &mut self,
        checkpoint_id: u64,
    ) -> Result<usize, RabbitMqSourceError> {
        if self.session.as_ref().is_some_and(|s| !s.alive()) {
            // Its delivery tags are void: the broker requeued the messages.
            self.end_session();
        }
        let mut acker = ChannelAcker {
            channel: self.session.as_ref().map(|s| &s.channel),
            mode: self.config.ack_mode,
            poison: &self.poison,
            stats: &mut self.stats,
        };
        self.state
            .notify_checkpoint_complete_async(checkpoint_id, &mut acker)
            .await
            .map_err(|source| RabbitMqSourceError::Acknowledge {
                checkpoint_id,
                source,
            })
    }

    /// The id of the last snapshot taken or restored.
    pub fn last_snapshot_id(&self) -> Option<u64> {
        self.state.base().last_snapshot_id()
    }

    /// Counters since [`connect`](Self::connect).
    pub fn stats(&self) -> RabbitMqSourceStats {
        self.stats
    }

    /// The correlation-id state: pending checkpoints, current ids, dedup set.
    pub fn unique_ids(&self) -> &MessageAcknowledgingSource<String> {
        self.state.base()
    }

    /// How many correlation ids are awaiting a redelivered copy (emitted on a
    /// lost channel or restored from state).
    pub fn awaiting_redelivery_len(&self) -> usize {
        self.awaiting_redelivery.len()
    }

    /// Whether a connection and channel are open.
    pub fn is_connected(&self) -> bool {
        self.session.as_ref().is_some_and(Session::alive)
    }

    /// The configuration.
    pub fn config(&self) -> &RabbitMqSourceConfig {
        &self.config
    }

    /// Closes the channel and connection; unacknowledged messages return to
    /// the queue.
    pub async fn close(mut self) -> Result<(), RabbitMqSourceError> {
        if let Some(s) = self.session.take() {
            let _ = s.channel.close(200, "source closed").await;
            let _ = s.connection.close(200, "source closed").await;
        }
        Ok(())
    }

    /// Ends the current session: its delivery tags become void.
    fn end_session(&mut self) {
        if self.session.take().is_none() {
            return;
        }
        self.state.discard_session_ids();
        self.poison.clear();
        if self.config.guarantee == Guarantee::ExactlyOnce {
            let base = self.state.base();
            let ids = base
                .pending()
                .flat_map(|cp| cp.ids.iter())
                .chain(base.current_ids().iter());
            self.awaiting_redelivery.extend(ids.cloned());
        }
    }

    async fn ensure_session(&mut self) -> Result<&mut Session, RabbitMqSourceError> {
        if self.session.as_ref().is_some_and(|s| !s.alive()) {
            self.end_session();
        }
        if self.session.is_none() {
            let session = self.open_with_retry().await?;
            if self.connected_once {
                self.stats.reconnects += 1;
            }
            self.connected_once = true;
            self.session = Some(session);
        }
        Ok(self.session.as_mut().expect("session just ensured"))
    }

    async fn open_with_retry(&self) -> Result<Session, RabbitMqSourceError> {
        let started = Instant::now();
        let mut backoff = Duration::from_millis(50);
        loop {
            let last = match tokio::time::timeout(
                self.config.connect_attempt_timeout,
                Session::open(&self.config),
            )
            .await
            {
                Ok(Ok(session)) => return Ok(session),
                Ok(Err(e)) => e.to_string(),
                Err(_) => format!(
                    "attempt timed out after {:?}",
                    self.config.connect_attempt_timeout
                ),
            };
            if started.elapsed() >= self.config.reconnect_timeout {
                return Err(RabbitMqSourceError::Connect {
                    queue: self.config.queue.clone(),
                    elapsed: started.elapsed(),
                    last,
                });
            }
            tracing::debug!(%last, "RabbitMQ connect attempt failed; retrying");
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_secs(1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Invariant: a prefetch count of 0 (unbounded) is refused before
    /// connecting.
    #[tokio::test]
    async fn zero_prefetch_is_a_config_error() {
        let mut config = RabbitMqSourceConfig::new("amqp://127.0.0.1:5672/%2f", "orders");
        config.prefetch_count = 0;
        let err = RabbitMqSource::connect(config, None).await.unwrap_err();
        assert!(matches!(err, RabbitMqSourceError::Config(_)), "{err}");
    }

    /// Invariant: an unnamed queue is refused before connecting.
    #[tokio::test]
    async fn unnamed_queue_is_a_config_error() {
        let config = RabbitMqSourceConfig::new("amqp://127.0.0.1:5672/%2f", "");
        let err = RabbitMqSource::connect(config, None).await.unwrap_err();
        assert!(matches!(err, RabbitMqSourceError::Config(_)), "{err}");
    }

    /// Invariant: an acknowledgement error names the notified checkpoint and
    /// its cause.
    #[test]
    fn acknowledge_error_names_the_checkpoint_and_the_cause() {
        let err = RabbitMqSourceError::Acknowledge {
            checkpoint_id: 7,
            source: AcknowledgeError::NoChannel,
        };
        assert_eq!(
            err.to_string(),
            "acknowledging checkpoint 7 failed: no open channel"
        );
    }

    /// Invariant: the defaults are exactly-once, prefetch 256, a durable
    /// queue, per-tag acknowledgements, 120 s to reconnect and 10 s per
    /// attempt.
    #[test]
    fn config_defaults() {
        let config = RabbitMqSourceConfig::new("amqp://127.0.0.1:5672/%2f", "orders");
        assert_eq!(config.guarantee, Guarantee::ExactlyOnce);
        assert_eq!((config.prefetch_count, config.durable_queue), (256, true));
        assert_eq!(config.ack_mode, AckMode::PerTag);
        assert_eq!(config.reconnect_timeout, Duration::from_secs(120));
        assert_eq!(config.connect_attempt_timeout, Duration::from_secs(10));
    }
}
