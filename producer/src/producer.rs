//! The public producer handle.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use kafka_producer::{Producer, ProducerConfig, ProducerRecord};
//! use std::time::Duration;
//! let config = ProducerConfig::from_properties([
//!     ("bootstrap.servers", "127.0.0.1:9092"),
//!     ("linger.ms", "5"),
//! ])?;
//! let producer = Producer::connect(config).await?;
//! // `send` enqueues at once; the future resolves when the broker acknowledges.
//! let pending: Vec<_> = (0..1000)
//!     .map(|i| producer.send(ProducerRecord::new("orders").key(format!("k{i}")).value("v")))
//!     .collect();
//! for p in pending {
//!     let meta = p.await?;
//!     assert!(meta.offset.is_some());
//! }
//! producer.flush().await;
//! producer.close(Duration::from_secs(10)).await?;
//! # Ok(()) }
//! ```

use crate::accumulator::{AccConfig, Accumulator, Appended, Parked, ParkedState, record_result};
use crate::config::ProducerConfig;
use crate::metrics::{Metrics, MetricsSnapshot};
use crate::record::{ProduceError, ProducerRecord, RecordMetadata};
use crate::sender::{DrainGate, Sender, SenderConfig};
use crate::{Cluster, ClusterError};
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// An async, batching, idempotent Kafka producer. Cheap to clone; all
/// clones share one sender task. Dropping the last clone closes the
/// producer gracefully in the background (pending records are still sent).
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use kafka_producer::{Producer, ProducerConfig, ProducerRecord};
/// let producer = Producer::connect(ProducerConfig::builder("127.0.0.1:9092").build()?).await?;
/// let worker = producer.clone(); // shares the sender task
/// tokio::spawn(async move { worker.send(ProducerRecord::new("audit").value("started")).await });
/// let meta = producer.send(ProducerRecord::new("orders").key("customer-7").value("{}")).await?;
/// println!("written to {}-{} at {:?}", meta.topic, meta.partition, meta.offset);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Producer {
    inner: Arc<Handle>,
}

#[derive(Debug)]
struct Handle {
    acc: Arc<Accumulator>,
    cluster: Arc<Cluster>,
    config: ProducerConfig,
    sender: Mutex<Option<tokio::task::JoinHandle<()>>>,
    refresher: tokio::task::JoinHandle<()>,
}

impl Drop for Handle {
    fn drop(&mut self) {
        let mut g = self.acc.lock();
        if g.closed.is_none() {
            g.closed = Some(ProduceError::Closed(None));
        }
        drop(g);
        self.acc.wake_sender.notify_one();
        self.refresher.abort();
    }
}

impl Producer {
    /// Connects to the cluster (bootstrap metadata) and starts the sender
    /// task. With idempotence, the producer id is fetched by the sender
    /// before the first batch is sent.
    ///
    /// ```
    /// use kafka_producer::{ClusterError, Producer, ProducerConfig};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let config = ProducerConfig::builder("localhost").build().unwrap(); // no port
    /// let err = Producer::connect(config).await.unwrap_err();
    /// assert!(matches!(err, ClusterError::InvalidAddress(_)));
    /// # });
    /// ```
    pub async fn connect(config: ProducerConfig) -> Result<Self, ClusterError> {
        Self::connect_with_gate(config, None).await
    }

    /// [`Self::connect`] with a [`DrainGate`] (used by the transactional
    /// producer to hold partitions back and tag requests).
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// use kafka_producer::sender::DrainGate;
    /// use kafka_producer::{Producer, ProducerConfig, TopicPartition};
    /// use std::sync::Arc;
    /// /// Holds back every partition of topic `paused`.
    /// #[derive(Debug)]
    /// struct Pause;
    /// impl DrainGate for Pause {
    ///     fn may_drain(&self, tp: &TopicPartition) -> bool {
    ///         &*tp.topic != "paused"
    ///     }
    /// }
    /// let config = ProducerConfig::builder("127.0.0.1:9092").build()?;
    /// let producer = Producer::connect_with_gate(config, Some(Arc::new(Pause))).await?;
    /// # Ok(()) }
    /// ```
    pub async fn connect_with_gate(
        config: ProducerConfig,
        gate: Option<Arc<dyn DrainGate>>,
    ) -> Result<Self, ClusterError> {
        let cluster = Cluster::connect(config.cluster_config()).await?;
        let refresher = cluster.spawn_metadata_refresher();
        let metrics = Arc::new(Metrics::new(config.metrics_enabled));
        let acc = Arc::new(Accumulator::new(
            AccConfig {
                batch_size: config.batch_size.max(1),
                buffer_memory: config.buffer_memory,
                compression: config.compression,
                max_request_size: config.max_request_size,
            },
            config.partitioner.build(),
            metrics,
        ));
        if let Some(g) = &gate {
            let _ = acc.gate.set(g.clone());
        }
        let sender = Sender::new(
            SenderConfig {
                acks: config.acks,
                linger: config.linger,
                retries: config.retries,
                retry_backoff: config.retry_backoff,
                delivery_timeout: config.delivery_timeout,
                request_timeout: config.request_timeout,
                max_request_size: config.max_request_size,
                max_in_flight: config.max_in_flight,
                idempotent: config.idempotence(),
                gate,
            },
            acc.clone(),
            cluster.clone(),
        );
        let task = tokio::spawn(sender.run());
        Ok(Self {
            inner: Arc::new(Handle {
                acc,
                cluster,
                config,
                sender: Mutex::new(Some(task)),
                refresher,
            }),
        })
    }

    /// The configuration.
    ///
    /// ```no_run
    /// # fn demo(producer: &kafka_producer::Producer) {
    /// println!("linger.ms = {:?}, idempotent: {}", producer.config().linger, producer.config().idempotence());
    /// # }
    /// ```
    pub fn config(&self) -> &ProducerConfig {
        &self.inner.config
    }

    /// The cluster connection layer.
    ///
    /// ```no_run
    /// # async fn demo(producer: &kafka_producer::Producer) -> Result<(), kafka_producer::ClusterError> {
    /// producer.cluster().refresh_topics(&["orders"]).await?;
    /// let partitions = producer.cluster().metadata().topic("orders").map(|t| t.partition_count());
    /// # Ok(()) }
    /// ```
    pub fn cluster(&self) -> &Arc<Cluster> {
        &self.inner.cluster
    }

    /// Enqueues `record` and returns a future of its delivery.
    ///
    /// The record is appended to its partition's open batch **before** this
    /// returns when buffer memory and the topic's metadata are available (so
    /// records sent in sequence keep their order without awaiting each
    /// future). Otherwise the returned future waits — for memory freed by
    /// completed batches (FIFO with other waiting sends, so order is kept) or
    /// for the topic's metadata — at most `max.block.ms`, then fails with
    /// [`ProduceError::MaxBlockTimeout`]. Waiting sends append only while
    /// their future is polled.
    ///
    /// The future resolves when the batch is acknowledged (or fails). A send
    /// that appends at once allocates nothing per record (checked by
    /// `tests/producer_alloc.rs`); one that must wait boxes its waiting state.
    ///
    /// ```no_run
    /// # async fn demo(producer: &kafka_producer::Producer) -> Result<(), Box<dyn std::error::Error>> {
    /// use kafka_producer::ProducerRecord;
    /// // Enqueued in order now; awaited later.
    /// let a = producer.send(ProducerRecord::new("orders").key("customer-7").value("created"));
    /// let b = producer.send(ProducerRecord::new("orders").key("customer-7").value("paid"));
    /// let (a, b) = (a.await?, b.await?);
    /// assert!(a.offset < b.offset); // same key, same partition, in order
    /// # Ok(()) }
    /// ```
    pub fn send(
        &self,
        record: ProducerRecord,
    ) -> impl Future<Output = Result<RecordMetadata, ProduceError>> + Send + 'static + use<> {
        let ts = record.timestamp.unwrap_or_else(now_ms);
        let acc = self.inner.acc.clone();
        let first = acc.append(record, ts, None, Instant::now());
        let slow = match &first {
            Ok(Appended::Done { .. }) | Err(_) => None,
            _ => Some((
                self.inner.cluster.clone(),
                self.inner.config.max_block,
                self.inner.config.retry_backoff,
            )),
        };
        async move {
            match first {
                Ok(Appended::Done {
                    completion,
                    index,
                    partition,
                    topic,
                    timestamp,
                }) => record_result(completion, index, partition, topic, timestamp).await,
                Err(e) => Err(e),
                // The waiting paths are boxed (one allocation per send that
                // must wait): their state (timers, metadata refresh) would
                // otherwise make every `send` future ~3 KiB, copied on every
                // move by callers that keep many futures.
                Ok(Appended::Parked(slot)) => {
                    let (cluster, max_block, backoff) = slow.expect("slow path");
                    Box::pin(wait_parked(acc, cluster, slot, max_block, backoff)).await
                }
                Ok(Appended::NeedMemory(r)) | Ok(Appended::NeedMetadata(r)) => {
                    let (cluster, max_block, backoff) = slow.expect("slow path");
                    Box::pin(send_slow(acc, cluster, r, ts, max_block, backoff)).await
                }
            }
        }
    }

    /// Sends every record enqueued so far at once (ignoring `linger.ms`) and
    /// waits until all of them completed.
    ///
    /// ```no_run
    /// # async fn demo(producer: &kafka_producer::Producer) -> Result<(), kafka_producer::ProduceError> {
    /// use kafka_producer::ProducerRecord;
    /// let pending = producer.send(ProducerRecord::new("orders").value("v"));
    /// producer.flush().await; // sent without waiting for linger.ms, and completed
    /// let meta = pending.await?; // resolves at once
    /// # Ok(()) }
    /// ```
    pub async fn flush(&self) {
        let acc = &self.inner.acc;
        let target = {
            let mut g = acc.lock();
            g.flushing += 1;
            g.next_batch_id
        };
        acc.wake_sender.notify_one();
        loop {
            let n = acc.progress.notified();
            if acc.flushed(target) {
                break;
            }
            n.await;
        }
        acc.lock().flushing -= 1;
    }

    /// Stops accepting records, sends everything pending and waits up to
    /// `timeout` for it; records still pending then fail with
    /// [`ProduceError::Closed`]. Later sends fail with `Closed`.
    ///
    /// ```no_run
    /// # async fn demo(producer: kafka_producer::Producer) -> Result<(), Box<dyn std::error::Error>> {
    /// use kafka_producer::{ProduceError, ProducerRecord};
    /// producer.close(std::time::Duration::from_secs(10)).await?;
    /// let late = producer.send(ProducerRecord::new("orders").value("v")).await;
    /// assert!(matches!(late, Err(ProduceError::Closed(_))));
    /// # Ok(()) }
    /// ```
    pub async fn close(&self, timeout: Duration) -> Result<(), ProduceError> {
        let acc = &self.inner.acc;
        {
            let mut g = acc.lock();
            if g.closed.is_none() {
                g.closed = Some(ProduceError::Closed(None));
            }
        }
        acc.wake_sender.notify_one();
        let task = self
            .inner
            .sender
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        let Some(mut task) = task else { return Ok(()) };
        let done = tokio::time::timeout(timeout, &mut task).await.is_ok();
        let result = if done {
            Ok(())
        } else {
            acc.lock().closed = Some(ProduceError::Closed(Some("aborted".into())));
            acc.wake_sender.notify_one();
            let _ = tokio::time::timeout(Duration::from_secs(5), &mut task).await;
            task.abort();
            Err(ProduceError::Closed(Some(
                format!("close timed out after {timeout:?}; pending records failed").into(),
            )))
        };
        self.inner.cluster.close();
        result
    }

    /// The accumulator (for the transactional producer).
    pub(crate) fn accumulator(&self) -> &Arc<Accumulator> {
        &self.inner.acc
    }

    /// A snapshot of the metrics (all zero when disabled).
    ///
    /// ```no_run
    /// # fn demo(producer: &kafka_producer::Producer) {
    /// let m = producer.metrics();
    /// println!("{} records, {} retries, max latency {} µs", m.records_sent, m.retries, m.request_latency_max_us);
    /// # }
    /// ```
    pub fn metrics(&self) -> MetricsSnapshot {
        self.inner.acc.metrics.snapshot()
    }
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Waits for a parked record (unknown topic) to be appended, refreshing
/// the topic's metadata meanwhile; gives up after `max.block.ms`.
async fn wait_parked(
    acc: Arc<Accumulator>,
    cluster: Arc<Cluster>,
    slot: Arc<Parked>,
    max_block: Duration,
    backoff: Duration,
) -> Result<RecordMetadata, ProduceError> {
    let deadline = tokio::time::Instant::now() + max_block;
    let topic = acc
        .parked_topics()
        .into_iter()
        .next()
        .map(|t| t.to_string());
    loop {
        let notified = slot.notify.notified();
        let appended = {
            let st = slot.state.lock().unwrap_or_else(|p| p.into_inner());
            match &*st {
                ParkedState::Appended {
                    completion,
                    index,
                    partition,
                    topic,
                    timestamp,
                } => Some((
                    completion.clone(),
                    *index,
                    *partition,
                    topic.clone(),
                    *timestamp,
                )),
                ParkedState::Failed(e) => return Err(e.clone()),
                ParkedState::Cancelled => return Err(ProduceError::Closed(None)),
                ParkedState::Waiting => None,
            }
        };
        if let Some((c, i, p, t, ts)) = appended {
            return record_result(c, i, p, t, ts).await;
        }
        // Boxed (rare path): keeps the `send` future small.
        let refresh = Box::pin(async {
            for t in acc.parked_topics() {
                let _ = cluster.refresh_topics(&[&*t]).await;
                let n = cluster
                    .metadata()
                    .topic(&t)
                    .map_or(0, |m| m.partition_count() as i32);
                if n > 0 {
                    acc.set_partitions(&t, n);
                }
            }
            tokio::time::sleep(backoff).await;
        });
        tokio::select! {
            _ = notified => {}
            _ = refresh => {}
            _ = tokio::time::sleep_until(deadline) => {
                let mut st = slot.state.lock().unwrap_or_else(|p| p.into_inner());
                if matches!(*st, ParkedState::Waiting) {
                    *st = ParkedState::Cancelled;
                    return Err(ProduceError::MaxBlockTimeout {
                        waiting_for: format!(
                            "metadata of topic {}",
                            topic.as_deref().unwrap_or("?")
                        )
                        .into(),
                        after: max_block,
                    });
                }
            }
        }
    }
}

struct Ticket {
    acc: Arc<Accumulator>,
    t: Option<u64>,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if let Some(t) = self.t.take() {
            self.acc.release_ticket(t);
        }
    }
}

async fn send_slow(
    acc: Arc<Accumulator>,
    cluster: Arc<Cluster>,
    mut r: ProducerRecord,
    ts: i64,
    max_block: Duration,
    backoff: Duration,
) -> Result<RecordMetadata, ProduceError> {
    let deadline = tokio::time::Instant::now() + max_block;
    let mut ticket = Ticket {
        acc: acc.clone(),
        t: None,
    };
    loop {
        let progress = acc.clone();
        let notified = progress.progress.notified();
        match acc.append(r, ts, ticket.t, Instant::now()) {
            Err(e) => return Err(e),
            Ok(Appended::Done {
                completion,
                index,
                partition,
                topic,
                timestamp,
            }) => {
                drop(ticket);
                return record_result(completion, index, partition, topic, timestamp).await;
            }
            Ok(Appended::NeedMemory(rec)) => {
                r = rec;
                if ticket.t.is_none() {
                    ticket.t = Some(acc.take_ticket());
                    continue;
                }
                if tokio::time::timeout_at(deadline, notified).await.is_err() {
                    return Err(ProduceError::MaxBlockTimeout {
                        waiting_for: "buffer memory".into(),
                        after: max_block,
                    });
                }
            }
            Ok(Appended::Parked(slot)) => {
                drop(ticket);
                return wait_parked(acc, cluster, slot, max_block, backoff).await;
            }
            Ok(Appended::NeedMetadata(rec)) => {
                r = rec;
                let topic = r.topic.clone();
                // Boxed (rare path): keeps the `send` future small.
                let refresh = Box::pin(async {
                    loop {
                        let _ = cluster.refresh_topics(&[topic.as_str()]).await;
                        let n = cluster
                            .metadata()
                            .topic(&topic)
                            .map_or(0, |t| t.partition_count() as i32);
                        if n > 0 {
                            acc.set_partitions(&topic, n);
                            return;
                        }
                        tokio::time::sleep(backoff).await;
                    }
                });
                if tokio::time::timeout_at(deadline, refresh).await.is_err() {
                    return Err(ProduceError::MaxBlockTimeout {
                        waiting_for: format!("metadata of topic {topic}").into(),
                        after: max_block,
                    });
                }
            }
        }
    }
}
