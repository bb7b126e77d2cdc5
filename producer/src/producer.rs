//! The public producer handle.

use crate::accumulator::{AccConfig, Accumulator, Appended, queued_result, record_metadata};
use crate::config::ProducerConfig;
use crate::hooks::SendHooks;
use crate::metrics::{Metrics, MetricsSnapshot};
use crate::record::{ProduceError, ProducerRecord, RecordMetadata};
use crate::sender::{Sender, SenderConfig};
use crate::{Cluster, ClusterError};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

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
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use kafka_producer::{Producer, ProducerConfig, ProducerRecord};
/// use std::time::Duration;
/// let config = ProducerConfig::from_properties([
///     ("bootstrap.servers", "127.0.0.1:9092"),
///     ("linger.ms", "5"),
/// ])?;
/// let producer = Producer::connect(config).await?;
/// // `send` enqueues at once; the future resolves when the broker acknowledges.
/// let pending: Vec<_> = (0..1000)
///     .map(|i| producer.send(ProducerRecord::new("orders").key(format!("k{i}")).value("v")))
///     .collect();
/// for p in pending {
///     let meta = p.await?;
///     assert!(meta.offset.is_some());
/// }
/// producer.flush().await;
/// producer.close(Duration::from_secs(10)).await?;
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
    /// before the first batch is sent. While no bootstrap address answers,
    /// it keeps trying for up to `bootstrap.timeout.ms` (by default
    /// `max.block.ms`), then fails with [`ClusterError::NoBrokerAvailable`].
    ///
    /// ```
    /// use kafka_client::ClusterError;
    /// use kafka_producer::{Producer, ProducerConfig};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let config = ProducerConfig::builder("localhost").build().unwrap(); // no port
    /// let err = Producer::connect(config).await.unwrap_err();
    /// assert!(matches!(err, ClusterError::InvalidAddress(_)));
    /// # });
    /// ```
    pub async fn connect(config: ProducerConfig) -> Result<Self, ClusterError> {
        Self::connect_with_hooks(config, None).await
    }

    /// [`Self::connect`] with [`SendHooks`] (the transactional producer's:
    /// they hold partitions back and tag requests).
    pub(crate) async fn connect_with_hooks(
        config: ProducerConfig,
        hooks: Option<Arc<dyn SendHooks>>,
    ) -> Result<Self, ClusterError> {
        let cluster = Cluster::connect(config.cluster_config()).await?;
        let refresher = cluster.spawn_metadata_refresher();
        let metrics = Arc::new(Metrics::with_client_id(
            config.metrics_enabled,
            &config.client_id,
        ));
        let acc = Arc::new(Accumulator::new(
            AccConfig {
                batch_size: config.batch_size.max(1),
                batch_max_size: config.effective_batch_max_size(),
                buffer_memory: config.buffer_memory,
                compression: config.compression,
                compression_level: config.compression_level,
                max_request_size: config.max_request_size,
            },
            config.partitioner.build(),
            metrics,
        ));
        if let Some(h) = &hooks {
            let _ = acc.hooks.set(h.clone());
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
                connections_per_broker: config.connections_per_broker,
                max_block: config.max_block,
                idempotent: config.idempotence(),
                hooks,
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
    pub fn config(&self) -> &ProducerConfig {
        &self.inner.config
    }

    /// The cluster connection layer.
    pub fn cluster(&self) -> &Arc<Cluster> {
        &self.inner.cluster
    }

    /// Sends `record`: its place is taken **now**, and the returned future
    /// reports its delivery.
    ///
    /// The contract (Java's `KafkaProducer.send`):
    ///
    /// - **Order.** Per partition, records are written in the order `send`
    ///   was called, whether or not (and in whatever order) their futures
    ///   are polled.
    /// - **Ownership.** Once `send` returns, the producer owns the record: it
    ///   is written even if the future is dropped or never polled. `flush`
    ///   (and a transactional commit) covers every record sent before it.
    /// - **Backpressure.** A record that fits in `buffer.memory` (and whose
    ///   topic's metadata is known) is appended to its partition's batch
    ///   before `send` returns, with no allocation per record (checked by
    ///   `tests/producer_alloc.rs`). Otherwise it joins the producer's FIFO
    ///   queue, still in send order, and the sender appends it as memory is
    ///   freed (or the metadata arrives); if that takes longer than
    ///   `max.block.ms` from the `send` call, the future fails with
    ///   [`ProduceError::MaxBlockTimeout`] and the record is never written.
    ///   `send` itself never blocks, so queued records are memory beyond
    ///   `buffer.memory`: a caller that produces faster than the cluster
    ///   accepts should wait on its futures (a sliding window) or call
    ///   [`Self::wait_for_buffer`] before sending more.
    /// - **Outcome.** `Ok` only once the broker acknowledged the record (with
    ///   its offset when the broker reported one); every failure is an
    ///   `Err`, and a record that failed was not written unless the error
    ///   says the outcome is unknown ([`ProduceError::outcome_unknown`]).
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
        SendFuture::new(
            self.inner
                .acc
                .append(record, ts, crate::accumulator::LiveClock),
        )
    }

    /// Waits until no sent record is queued for buffer memory, or
    /// `max.block.ms` passed (then [`ProduceError::MaxBlockTimeout`]): the
    /// blocking point of Java's `send`, for callers that want memory bounded
    /// by `buffer.memory` without keeping a window of futures.
    ///
    /// ```no_run
    /// # async fn demo(producer: &kafka_producer::Producer) -> Result<(), kafka_producer::ProduceError> {
    /// use kafka_producer::ProducerRecord;
    /// for i in 0..1_000_000 {
    ///     producer.wait_for_buffer().await?; // backpressure
    ///     drop(producer.send(ProducerRecord::new("events").value(format!("{i}"))));
    /// }
    /// producer.flush().await;
    /// # Ok(()) }
    /// ```
    pub async fn wait_for_buffer(&self) -> Result<(), ProduceError> {
        let acc = &self.inner.acc;
        let max_block = self.inner.config.max_block;
        let deadline = tokio::time::Instant::now() + max_block;
        loop {
            let n = acc.progress.notified();
            if acc.lock().waiting.is_empty() {
                return Ok(());
            }
            if tokio::time::timeout_at(deadline, n).await.is_err() {
                return Err(ProduceError::MaxBlockTimeout {
                    waiting_for: "buffer memory".into(),
                    after: max_block,
                });
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
        let _flushing = Flushing::start(acc);
        // First every record queued before now (appended or failed) ...
        let queued = acc.lock().next_queue_seq;
        loop {
            let n = acc.progress.notified();
            if acc.lock().oldest_queued().is_none_or(|s| s >= queued) {
                break;
            }
            n.await;
        }
        // ... then every batch that holds one of them.
        let target = acc.lock().next_batch_id;
        acc.wait_flushed(target).await;
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
            {
                let mut inner = acc.lock();
                inner.closed = Some(ProduceError::Closed(Some("aborted".into())));
                inner.fail_pending = true;
            }
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

/// Marks a flush in progress (the sender ignores `linger.ms`) for as long
/// as it lives, also when the flush future is dropped.
struct Flushing<'a>(&'a Accumulator);

impl<'a> Flushing<'a> {
    fn start(acc: &'a Accumulator) -> Self {
        acc.lock().flushing += 1;
        acc.wake_sender.notify_one();
        Self(acc)
    }
}

impl Drop for Flushing<'_> {
    fn drop(&mut self) {
        let mut g = self.0.lock();
        g.flushing = g.flushing.saturating_sub(1);
    }
}

/// The future of one [`Producer::send`]: small (callers keep many of them,
/// and move each at least twice), so what a record rarely needs is boxed —
/// the wait for its batch when the batch is not complete at the first poll,
/// and the whole wait of a record queued for memory or metadata.
struct SendFuture {
    state: SendState,
}

type BoxedResult = Pin<Box<dyn Future<Output = Result<RecordMetadata, ProduceError>> + Send>>;

enum SendState {
    /// In a batch: its completion, the record's place in it.
    Appended {
        completion: Arc<crate::accumulator::Completion>,
        index: i32,
        partition: i32,
        topic: Arc<str>,
        timestamp: i64,
        /// Registered with the batch's completion (after a pending poll).
        waiting: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    },
    /// Queued for memory or metadata.
    Other(BoxedResult),
    /// Refused at `send`.
    Failed(Box<ProduceError>),
    /// The result was returned.
    Done,
}

impl SendFuture {
    fn new(first: Result<Appended, ProduceError>) -> Self {
        let state = match first {
            Ok(Appended::Done {
                completion,
                index,
                partition,
                topic,
                timestamp,
            }) => SendState::Appended {
                completion,
                index,
                partition,
                topic,
                timestamp,
                waiting: None,
            },
            Ok(Appended::Queued(slot)) => SendState::Other(Box::pin(queued_result(slot))),
            Err(e) => SendState::Failed(Box::new(e)),
        };
        Self { state }
    }
}

impl Future for SendFuture {
    type Output = Result<RecordMetadata, ProduceError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        match &mut this.state {
            SendState::Appended {
                completion,
                index,
                waiting,
                ..
            } => {
                if completion.record(*index).is_none() {
                    let w = waiting.get_or_insert_with(|| {
                        let (c, index) = (completion.clone(), *index);
                        Box::pin(async move {
                            c.wait_record(index).await;
                        })
                    });
                    if w.as_mut().poll(cx).is_pending() {
                        return Poll::Pending;
                    }
                }
            }
            SendState::Other(f) => return f.as_mut().poll(cx),
            SendState::Failed(_) | SendState::Done => {}
        }
        match std::mem::replace(&mut this.state, SendState::Done) {
            SendState::Appended {
                completion,
                index,
                partition,
                topic,
                timestamp,
                ..
            } => {
                let (result, index) = completion.record(index).expect("complete");
                Poll::Ready(record_metadata(result, index, partition, topic, timestamp))
            }
            SendState::Failed(e) => Poll::Ready(Err(*e)),
            SendState::Other(_) | SendState::Done => panic!("SendFuture polled after completion"),
        }
    }
}

#[cfg(test)]
mod send_future_tests {
    use super::*;
    use crate::accumulator::{BatchResult, Completion};
    use std::task::Waker;

    fn appended(completion: &Arc<Completion>, index: i32) -> SendFuture {
        SendFuture::new(Ok(Appended::Done {
            completion: completion.clone(),
            index,
            partition: 3,
            topic: Arc::from("orders"),
            timestamp: 1_700_000_000_000,
        }))
    }

    /// Callers keep one future per record in flight (windows of 100,000
    /// records are common) and move each at least twice: it stays within
    /// one cache line.
    #[test]
    fn the_send_future_stays_small() {
        let size = std::mem::size_of::<SendFuture>();
        assert!(size <= 64, "{size} bytes");
    }

    /// Invariant: a record's future is pending until its batch completes,
    /// then gives the record's own offset (the batch's base plus its index);
    /// a record whose batch completed before the first poll is ready at once.
    #[tokio::test]
    async fn a_record_waits_for_its_batch_and_gets_its_own_offset() {
        let completion = Arc::new(Completion::default());
        let mut first = appended(&completion, 2);
        let mut cx = Context::from_waker(Waker::noop());
        assert!(Pin::new(&mut first).poll(&mut cx).is_pending());
        let waiter = tokio::spawn(first);
        tokio::task::yield_now().await;
        completion.complete(Ok(BatchResult {
            base_offset: 40,
            log_append_time: -1,
        }));
        let m = waiter.await.unwrap().unwrap();
        assert_eq!((m.offset, m.partition, &*m.topic), (Some(42), 3, "orders"));
        assert_eq!(m.timestamp, 1_700_000_000_000);
        let late = appended(&completion, 5).await.unwrap();
        assert_eq!(late.offset, Some(45));
    }

    /// Invariant: a batch's failure is every record's, and a send refused
    /// at once gives its error.
    #[tokio::test]
    async fn a_failed_batch_or_send_fails_the_record() {
        let completion = Arc::new(Completion::default());
        let pending = appended(&completion, 0);
        completion.complete(Err(ProduceError::Closed(None)));
        assert!(matches!(pending.await, Err(ProduceError::Closed(None))));
        let refused = SendFuture::new(Err(ProduceError::InvalidRecord("too big".into())));
        assert!(matches!(refused.await, Err(ProduceError::InvalidRecord(_))));
    }
}
