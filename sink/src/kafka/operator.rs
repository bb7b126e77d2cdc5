//! [`KafkaSink`], the [`CheckpointedOperator`] of the Kafka sink: connects
//! (checking the transaction timeout against the broker with
//! [`check_transaction_timeout`]), drives the [`TwoPhaseCommitSink`] over
//! [`KafkaSinkHandler`] and encodes its state with the id hint.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use kafka_admin as admin;
use kafka_client::Cluster;
use kafka_producer::Producer;
use kafka_producer::metrics::MetricsSnapshot;

use crate::checkpoint::{CheckpointedOperator, OperatorError, RestoredState};
use crate::codec::StringSetCodec;
use crate::state::StateSerializer;
use crate::two_phase::{RecordContext, TwoPhaseCommitError, TwoPhaseCommitSink};

use super::handler::SinkSchema;
use super::recovery::abort_on_fresh_start;
use super::state::{decode_operator_state, encode_operator_state};
use super::{
    AsyncKafkaSerializationSchema, KafkaSerializationSchema, KafkaSinkConfig, KafkaSinkError,
    KafkaSinkHandler, KafkaTransactionCodec, NextTransactionalIdHint, Semantic,
};

/// A Kafka sink subtask: [`TwoPhaseCommitSink`] over [`KafkaSinkHandler`],
/// with its state (and the [`NextTransactionalIdHint`]) encoded for the
/// [checkpoint driver](crate::CheckpointCoordinator) or a host engine.
///
/// Operator state format v1: magic `KSNK`, version 1, the sink state
/// ([`StateSerializer`] with [`KafkaTransactionCodec`] and
/// [`StringSetCodec`]) length-prefixed, then a flag and the hint (`u64`
/// next free id, `u32` last parallelism) — written by subtask 0 only.
///
/// ```no_run
/// # async fn example() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// use kafka_producer::ProducerConfig;
/// use kafka_sink::kafka::{KafkaSink, KafkaSinkConfig, KafkaSinkRecord, Semantic};
/// let mut config = KafkaSinkConfig::new(ProducerConfig::new("broker-1:9092"), "orders-out");
/// config.semantic = Semantic::ExactlyOnce;
/// let mut sink = KafkaSink::connect(config, |v: &String| KafkaSinkRecord::value(v.clone())).await?;
/// use kafka_sink::{CheckpointedOperator, RecordContext};
/// sink.initialize_state(None).await?;
/// sink.invoke("order-1".to_string(), &RecordContext::default()).await?;
/// let state = sink.snapshot_state(1).await?; // store durably, then:
/// sink.notify_checkpoint_complete(1).await?;
/// # let _ = state;
/// # Ok(()) }
/// ```
pub struct KafkaSink<T: Send + Sync + 'static> {
    sink: TwoPhaseCommitSink<KafkaSinkHandler<T>>,
    serializer: StateSerializer<KafkaTransactionCodec, StringSetCodec>,
}

impl<T: Send + Sync + 'static> fmt::Debug for KafkaSink<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KafkaSink")
            .field("sink", &self.sink)
            .finish_non_exhaustive()
    }
}

impl<T: Send + Sync + 'static> KafkaSink<T> {
    /// Validates `config`, connects, and for EXACTLY_ONCE checks the
    /// transaction timeout against the broker's `transaction.max.timeout.ms`.
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    /// use kafka_producer::ProducerConfig;
    /// use kafka_sink::kafka::{KafkaSink, KafkaSinkConfig, Semantic, SimpleStringSchema, ValueOnly};
    /// use std::time::Duration;
    /// let mut config = KafkaSinkConfig::new(ProducerConfig::new("broker-1:9092"), "orders-out");
    /// config.semantic = Semantic::ExactlyOnce;
    /// config.transaction_timeout = Duration::from_secs(15 * 60); // <= transaction.max.timeout.ms
    /// let sink: KafkaSink<String> = KafkaSink::connect(config, ValueOnly(SimpleStringSchema)).await?;
    /// # Ok(()) }
    /// ```
    pub async fn connect(
        config: KafkaSinkConfig,
        schema: impl KafkaSerializationSchema<T> + 'static,
    ) -> Result<Self, KafkaSinkError> {
        Self::connect_with(config, SinkSchema::Sync(Arc::new(schema))).await
    }

    /// As [`Self::connect`], with an asynchronous, fallible schema (a
    /// schema registry's): `invoke` awaits it before the record is sent,
    /// and a value it cannot serialize fails that `invoke` with
    /// [`KafkaSinkError::Serialization`], nothing of it sent.
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    /// use bytes::Bytes;
    /// use kafka_producer::ProducerConfig;
    /// use kafka_sink::kafka::{AsyncKafkaSerializationSchema, KafkaSink, KafkaSinkConfig, KafkaSinkRecord, SerializeFuture};
    /// struct Upper;
    /// impl AsyncKafkaSerializationSchema<String> for Upper {
    ///     fn serialize<'a>(&'a self, v: &'a String, _topic: &'a str) -> SerializeFuture<'a> {
    ///         Box::pin(async move { Ok(KafkaSinkRecord::value(Bytes::from(v.to_uppercase()))) })
    ///     }
    /// }
    /// let config = KafkaSinkConfig::new(ProducerConfig::new("broker-1:9092"), "orders-out");
    /// let sink: KafkaSink<String> = KafkaSink::connect_async_schema(config, Upper).await?;
    /// # Ok(()) }
    /// ```
    pub async fn connect_async_schema(
        config: KafkaSinkConfig,
        schema: impl AsyncKafkaSerializationSchema<T> + 'static,
    ) -> Result<Self, KafkaSinkError> {
        Self::connect_with(config, SinkSchema::Async(Arc::new(schema))).await
    }

    async fn connect_with(
        config: KafkaSinkConfig,
        schema: SinkSchema<T>,
    ) -> Result<Self, KafkaSinkError> {
        config.validate()?;
        let base = config.effective_producer_config();
        let (cluster, shared) = if config.semantic == Semantic::ExactlyOnce {
            let cluster = Cluster::connect(base.cluster_config())
                .await
                .map_err(|e| KafkaSinkError::Connect(e.to_string()))?;
            (cluster, None)
        } else {
            let p = Producer::connect(base)
                .await
                .map_err(|e| KafkaSinkError::Connect(e.to_string()))?;
            (p.cluster().clone(), Some(p))
        };
        if config.semantic == Semantic::ExactlyOnce {
            check_transaction_timeout(&cluster, config.transaction_timeout).await?;
        }
        let timeout = config.transaction_timeout;
        let handler = KafkaSinkHandler::new(config, schema, cluster, shared);
        let mut sink = TwoPhaseCommitSink::new(handler);
        // A commit past the transaction timeout may fail silently (the
        // coordinator aborted the transaction); warn early.
        sink.set_transaction_timeout(timeout)
            .enable_transaction_timeout_warnings(0.8);
        Ok(KafkaSink {
            sink,
            serializer: StateSerializer::new(KafkaTransactionCodec, StringSetCodec),
        })
    }

    /// The generic sink (metrics, pending checkpoints, timeout options).
    pub fn sink(&self) -> &TwoPhaseCommitSink<KafkaSinkHandler<T>> {
        &self.sink
    }

    /// The generic sink, mutably.
    pub fn sink_mut(&mut self) -> &mut TwoPhaseCommitSink<KafkaSinkHandler<T>> {
        &mut self.sink
    }

    /// The transactional ids of this subtask's pool (the user context;
    /// empty unless EXACTLY_ONCE).
    pub fn transactional_ids(&self) -> BTreeSet<String> {
        self.sink.user_context().cloned().unwrap_or_default()
    }

    /// Send failures logged and dropped under
    /// [`log_failures_only`](KafkaSinkConfig::log_failures_only).
    pub fn logged_failures(&self) -> u64 {
        self.sink.handler().logged_failures
    }

    /// Metrics of every producer of this subtask, keyed by transactional id
    /// (`""` for the shared AT_LEAST_ONCE / NONE producer); all zero when
    /// metrics are [disabled](KafkaSinkConfig::disable_metrics).
    pub fn producer_metrics(&self) -> Vec<(String, MetricsSnapshot)> {
        let h = self.sink.handler();
        let mut out: Vec<(String, MetricsSnapshot)> = h
            .producers
            .iter()
            .map(|(id, p)| (id.clone(), p.metrics()))
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        if let Some(p) = &h.shared {
            out.insert(0, (String::new(), p.metrics()));
        }
        out
    }

    /// Writes one value.
    pub async fn invoke(
        &mut self,
        value: T,
        context: &RecordContext,
    ) -> Result<(), TwoPhaseCommitError<KafkaSinkError>> {
        self.sink.invoke(value, context).await
    }

    /// Aborts the open transaction and closes every producer (pre-committed
    /// transactions stay for a restore to commit).
    pub async fn close(&mut self) -> Result<(), TwoPhaseCommitError<KafkaSinkError>> {
        let r = self.sink.close().await;
        let h = self.sink.handler_mut();
        for (_, p) in h.producers.drain() {
            let _ = p.close(Duration::from_secs(5)).await;
        }
        if let Some(p) = h.shared.take() {
            let _ = p.close(Duration::from_secs(5)).await;
        }
        r
    }
}

/// Fails when `timeout` exceeds the `transaction.max.timeout.ms` of a broker.
/// Asks the brokers of the metadata in turn until one answers (a dead or
/// unreachable broker is skipped: the check must not make the sink
/// unavailable while one broker of the cluster is down).
///
/// ```no_run
/// # async fn example() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// use kafka_client::Cluster;
/// use kafka_producer::ProducerConfig;
/// use kafka_sink::kafka::{KafkaSinkError, check_transaction_timeout};
/// use std::time::Duration;
/// let cluster = Cluster::connect(ProducerConfig::new("broker-1:9092").cluster_config()).await?;
/// match check_transaction_timeout(&cluster, Duration::from_secs(3600)).await {
///     Err(KafkaSinkError::TransactionTimeoutTooLarge { broker_max, .. }) => println!("use at most {broker_max:?}"),
///     other => other?,
/// }
/// # Ok(()) }
/// ```
pub async fn check_transaction_timeout(
    cluster: &Cluster,
    timeout: Duration,
) -> Result<(), KafkaSinkError> {
    cluster
        .refresh()
        .await
        .map_err(|e| KafkaSinkError::Connect(e.to_string()))?;
    let nodes: Vec<i32> = cluster.metadata().brokers().keys().copied().collect();
    let key = "transaction.max.timeout.ms";
    let mut last_error = KafkaSinkError::Connect("no broker in metadata".into());
    let mut configs = None;
    for node in nodes {
        match admin::broker_config(cluster, node, &[key]).await {
            Ok(c) => {
                configs = Some(c);
                break;
            }
            Err(e) => {
                last_error =
                    KafkaSinkError::Connect(format!("reading {key} from broker {node}: {e}"));
            }
        }
    }
    let Some(configs) = configs else {
        return Err(last_error);
    };
    if let Some(Some(v)) = configs.get(key)
        && let Ok(ms) = v.parse::<u64>()
    {
        let broker_max = Duration::from_millis(ms);
        if timeout > broker_max {
            return Err(KafkaSinkError::TransactionTimeoutTooLarge {
                configured: timeout,
                broker_max,
            });
        }
    }
    Ok(())
}

impl<T: Send + Sync + 'static> CheckpointedOperator for KafkaSink<T> {
    async fn initialize_state(
        &mut self,
        restored: Option<RestoredState>,
    ) -> Result<(), OperatorError> {
        let exactly_once = self.sink.handler().exactly_once();
        let mut hints = Vec::new();
        let mut states = None;
        if let Some(r) = &restored {
            for b in &r.union {
                if let (_, Some(h)) = decode_operator_state(b)? {
                    hints.push(h);
                }
            }
            let mut own = Vec::new();
            for b in &r.own {
                let (s, _) = decode_operator_state(b)?;
                own.push(self.serializer.decode(s)?);
            }
            states = Some(own);
        }
        if hints.len() > 1 {
            return Err(KafkaSinkError::MultipleHints(hints.len()).into());
        }
        let handler = self.sink.handler_mut();
        match hints.pop() {
            Some(h) => handler.hint = h,
            None => {
                handler.hint = NextTransactionalIdHint::default();
                if exactly_once {
                    // First run, or a failure before the first checkpoint.
                    abort_on_fresh_start(&handler.cluster, &handler.config).await?;
                }
            }
        }
        self.sink.initialize_state(states).await?;
        Ok(())
    }

    async fn snapshot_state(&mut self, checkpoint_id: u64) -> Result<Vec<u8>, OperatorError> {
        let state = self.sink.snapshot_state(checkpoint_id).await?;
        let bytes = self.serializer.encode(state);
        let h = self.sink.handler_mut();
        let hint = (h.config.subtask_index == 0 && h.exactly_once()).then(|| {
            let mut next = h.hint;
            if h.config.parallelism > next.last_parallelism {
                next.next_free_transactional_id +=
                    u64::from(h.config.parallelism) * h.config.pool_size as u64;
            }
            next.last_parallelism = h.config.parallelism;
            h.hint = next;
            next
        });
        Ok(encode_operator_state(&bytes, hint))
    }

    async fn notify_checkpoint_complete(
        &mut self,
        checkpoint_id: u64,
    ) -> Result<(), OperatorError> {
        self.sink.notify_checkpoint_complete(checkpoint_id).await?;
        Ok(())
    }
}
