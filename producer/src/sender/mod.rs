//! The sender: one tokio task per producer that drains ready batches from
//! the accumulator, groups them by leader into Produce requests, and applies
//! the responses (Java's `Sender`).
//!
//! Each pass of the sender:
//!
//! 1. fails the batches older than `delivery.timeout.ms`;
//! 2. runs the idempotence housekeeping
//!    ([`crate::idempotence::Idempotence::next_action`]: InitProducerId,
//!    header rewrites after an epoch bump);
//! 3. drains: per leader connection (partition p takes connection
//!    p mod `connections.per.broker` to its leader: the `dispatch` module), while
//!    it has fewer than `max.in.flight.requests.per.connection` requests in
//!    flight, at most one batch per partition and `max.request.size` bytes
//!    per request. A partition is ready when its first batch is full, has
//!    lingered `linger.ms`, is retried, or a flush or close is under way,
//!    and when the idempotence state machine and the [`SendHooks`] (for
//!    transactions) allow; sequences are assigned here;
//! 4. waits for a response, a new batch or the next deadline. While the
//!    leader connection of every queued partition is at `max.in.flight`, a
//!    new batch does not wake the sender: nothing could go before a
//!    response, which wakes it anyway (`Sender::saturated`).
//!
//! Responses are matched per partition. Retriable errors and disconnects
//! invalidate the metadata and requeue the batch (in sequence order) after
//! `retry.backoff.ms`, keeping its sequence.

use crate::Cluster;
use crate::accumulator::{Accumulator, Batch, BatchResult};
use crate::config::Acks;
use crate::hooks::SendHooks;
use crate::idempotence::{
    Action, BatchId, BatchSequence, Drain, ErrorDecision, Idempotence, Phase, ProducerIdAndEpoch,
};
use crate::metrics::Metrics;
use crate::record::{ProduceError, TopicPartition};
use kafka_proto::ErrorCode;
use kafka_proto::messages::{InitProducerIdRequest, ProduceResponse};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

mod dispatch;
use dispatch::{NodeQueue, NodeRequest, Route, lane_of, node_dispatcher};

/// Sender settings.
#[derive(Debug, Clone)]
pub(crate) struct SenderConfig {
    /// `acks`.
    pub acks: Acks,
    /// `linger.ms`.
    pub linger: Duration,
    /// `retries`.
    pub retries: i32,
    /// `retry.backoff.ms`.
    pub retry_backoff: Duration,
    /// `delivery.timeout.ms`.
    pub delivery_timeout: Duration,
    /// `request.timeout.ms`.
    pub request_timeout: Duration,
    /// `max.request.size`.
    pub max_request_size: usize,
    /// `max.in.flight.requests.per.connection`.
    pub max_in_flight: usize,
    /// Produce connections per broker (`connections.per.broker`).
    pub connections_per_broker: usize,
    /// `max.block.ms`.
    pub max_block: Duration,
    /// `enable.idempotence` (in effect).
    pub idempotent: bool,
    /// The transactional producer's hooks.
    pub hooks: Option<Arc<dyn SendHooks>>,
}

/// What wakes the sender besides the accumulator.
enum Event {
    /// A Produce request's answer, or its failure.
    Produce(RequestDone),
    /// The idempotent producer's InitProducerId answer.
    Init(Result<ProducerIdAndEpoch, InitError>),
    /// A topic's `max.message.bytes` (DescribeConfigs), or why it is unknown.
    TopicLimit {
        /// The topic.
        topic: Arc<str>,
        /// Its `max.message.bytes`.
        max_message_bytes: Result<usize, String>,
    },
}

/// Why an InitProducerId failed.
enum InitError {
    /// The broker's error code.
    Code(ErrorCode),
    /// No connection (retried).
    Conn(String),
    /// No retry can fix it.
    Fatal(String),
}

/// A Produce request's outcome, from its dispatcher.
struct RequestDone {
    /// The connection it went to.
    route: Route,
    /// The connection generation the request belonged to (see
    /// [`node_dispatcher`]).
    generation: u64,
    /// The batches it carried.
    batches: Vec<(TopicPartition, BatchId)>,
    /// The response (`None` for `acks=0`), or the error and whether it is fatal.
    result: Result<Option<ProduceResponse>, (String, bool)>,
    /// When it was written (for the request latency).
    sent_at: Instant,
}

/// The batches a pass drains for one [`Route`]: one Produce request.
#[derive(Default)]
struct RouteRequest {
    /// Their size on the wire, held under `max.request.size`.
    bytes: usize,
    /// The batches, each with the sequence it was given (idempotent producer).
    batches: Vec<(Batch, Option<BatchSequence>)>,
}

/// A batch out in a Produce request.
struct InFlight {
    /// The batch.
    batch: Batch,
    /// Past `delivery.timeout.ms` while in flight: failed when its answer comes.
    expired: bool,
    /// The broker connection and its generation the batch's request went to.
    route: Route,
    /// The generation of `route` the request went out on.
    generation: u64,
    /// Out on a connection the sender has since seen lost: its outcome is
    /// still to come (see [`Sender::stale_partitions`]).
    stale: bool,
}

/// The sender task's state (see the module docs).
pub(crate) struct Sender {
    /// Its settings.
    cfg: SenderConfig,
    /// Where the batches come from.
    acc: Arc<Accumulator>,
    /// Metadata and connections.
    cluster: Arc<Cluster>,
    /// The producer's metrics.
    metrics: Arc<Metrics>,
    /// The idempotence state machine (producer id, sequences), when idempotent.
    idem: Option<Idempotence>,
    /// The batches out in Produce requests.
    inflight: HashMap<BatchId, InFlight>,
    /// Requests in flight per broker connection.
    node_inflight: HashMap<Route, usize>,
    /// The dispatchers' and InitProducerId's way back (cloned for each).
    tx: mpsc::UnboundedSender<Event>,
    /// Their answers.
    rx: mpsc::UnboundedReceiver<Event>,
    /// The metadata update last applied to the accumulator's partition counts.
    metadata_seen: u64,
    /// InitProducerId failures in a row (the backoff grows with them).
    init_failures: u32,
    /// Epoch bumps already counted in the metrics.
    bumps_seen: u64,
    /// The dispatcher of each broker connection.
    node_queues: HashMap<Route, NodeQueue>,
    /// Topics whose `max.message.bytes` was asked for (batches grow only
    /// up to it: `batch.max.size` above `batch.size`).
    limits_asked: std::collections::HashSet<Arc<str>>,
    /// Whether some partition was last told to grow its open batch
    /// ([`Sender::publish_growth`]).
    growth_published: bool,
    /// Partitions with batches still out on a connection the sender has
    /// seen lost, and how many. Such a partition drains nothing until they
    /// are all back (failed and requeued in sequence order, or answered):
    /// the connection loss is learnt from one request's failure while the
    /// failures of the other requests on that connection are still on their
    /// way, and a batch drained meanwhile would reach the broker on the new
    /// connection ahead of them — out of sequence, or, to a broker without
    /// state for the producer, appended ahead of them. The Java client's
    /// `NetworkClient` fails every request of a lost connection at once
    /// before it sends again.
    stale_partitions: HashMap<TopicPartition, usize>,
}

impl Sender {
    pub fn new(cfg: SenderConfig, acc: Arc<Accumulator>, cluster: Arc<Cluster>) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        Self {
            idem: cfg.idempotent.then(|| {
                if cfg
                    .hooks
                    .as_ref()
                    .is_some_and(|g| g.transactional_id().is_some())
                {
                    Idempotence::new_transactional()
                } else {
                    Idempotence::new()
                }
            }),
            metrics: acc.metrics.clone(),
            cfg,
            acc,
            cluster,
            inflight: HashMap::new(),
            node_inflight: HashMap::new(),
            tx,
            rx,
            metadata_seen: u64::MAX,
            init_failures: 0,
            bumps_seen: 0,
            node_queues: HashMap::new(),
            limits_asked: Default::default(),
            growth_published: false,
            stale_partitions: HashMap::new(),
        }
    }

    pub async fn run(mut self) {
        loop {
            // Running: appends wake the sender again (see `saturated`).
            self.acc.set_sender_saturated(false);
            while let Ok(ev) = self.rx.try_recv() {
                self.handle_event(ev);
            }
            let now = Instant::now();
            self.sync_partition_counts();
            self.expire(now);
            self.idempotence_housekeeping();
            self.fail_undrained();
            let queued_deadline = self.acc.expire_queued(now, self.cfg.max_block);
            let (drained, mut wake_at) = self.drain(now);
            self.publish_growth();
            if let Some(t) = queued_deadline {
                wake_at = Some(wake_at.map_or(t, |w| w.min(t)));
            }
            let (closed, incomplete, parked) = {
                let g = self.acc.lock();
                (
                    g.closed.is_some(),
                    !g.incomplete.is_empty() || !g.waiting.is_empty(),
                    g.topics.values().any(|t| !t.parked.is_empty()),
                )
            };
            if parked {
                // Metadata refreshes do not wake the sender: look again soon.
                let t = now + self.cfg.retry_backoff.min(Duration::from_millis(50));
                wake_at = Some(wake_at.map_or(t, |w| w.min(t)));
            }
            if closed && !incomplete && !parked && self.inflight.is_empty() {
                tracing::debug!("producer sender finished");
                return;
            }
            if self.acc.lock().fail_pending {
                self.abort_all();
                return;
            }
            if drained {
                continue;
            }
            if wake_at.is_none() && closed {
                wake_at = Some(now + Duration::from_millis(50));
            }
            let sleep =
                tokio::time::sleep_until(wake_at.unwrap_or(now + Duration::from_secs(3600)).into());
            self.acc.set_sender_saturated(self.saturated());
            tokio::select! {
                ev = self.rx.recv() => {
                    if let Some(ev) = ev { self.handle_event(ev); }
                }
                _ = self.acc.wake_sender.notified() => {}
                _ = sleep => {}
            }
        }
    }

    /// Whether no new batch could be sent before an event: every partition
    /// of every topic in the accumulator has a known leader already at
    /// `max.in.flight` requests. Only a response (or a request's failure)
    /// lowers a count, and it reaches the sender as an event that wakes it;
    /// a topic without metadata is not counted (appends to it always wake
    /// the sender).
    fn saturated(&self) -> bool {
        if !self
            .node_inflight
            .values()
            .any(|&n| n >= self.cfg.max_in_flight)
        {
            return false;
        }
        // The drain's lock order: the accumulator, then the metadata.
        let g = self.acc.lock();
        let md = self.cluster.metadata();
        let lanes = self.cfg.connections_per_broker;
        let at_max = |leader: Option<i32>, lane: usize| {
            leader.is_some_and(|node| {
                self.node_inflight
                    .get(&Route { node, lane })
                    .copied()
                    .unwrap_or(0)
                    >= self.cfg.max_in_flight
            })
        };
        g.fatal.is_none()
            && g.closed.is_none()
            && g.topics.iter().all(|(topic, tq)| {
                // One lookup per topic, then its partitions by index.
                md.topic(topic).is_some_and(|t| {
                    (0..tq.partitions.len()).all(|p| {
                        at_max(
                            t.partitions.get(&(p as i32)).and_then(|pm| pm.leader),
                            lane_of(p, lanes),
                        )
                    })
                })
            })
    }

    fn sync_partition_counts(&mut self) {
        let parked = self.acc.parked_topics();
        if !parked.is_empty() {
            let names: Vec<&str> = parked.iter().map(|t| &**t).collect();
            self.cluster.track_topics(&names);
            let mut md = self.cluster.metadata();
            let refused: Vec<(Arc<str>, ErrorCode)> = parked
                .iter()
                .filter_map(|t| md.take_refused_topic(t).map(|e| (t.clone(), e)))
                .collect();
            let known: Vec<(Arc<str>, i32)> = parked
                .iter()
                .filter_map(|t| md.topic(t).map(|m| (t.clone(), m.partition_count() as i32)))
                .filter(|(_, n)| *n > 0)
                .collect();
            let unknown = known.len() + refused.len() < parked.len();
            drop(md);
            for (topic, error) in refused {
                tracing::warn!(%topic, ?error, "the broker refused the topic: failing its records");
                let e = ProduceError::TopicRefused {
                    topic: topic.clone(),
                    error,
                };
                self.acc.fail_parked(&topic, &e);
            }
            for (t, n) in known {
                self.acc.set_partitions(&t, n);
            }
            if unknown {
                self.cluster.invalidate();
            }
        }
        let counts: Vec<(String, i32)> = {
            let md = self.cluster.metadata();
            if md.update_count() == self.metadata_seen {
                return;
            }
            self.metadata_seen = md.update_count();
            md.topics()
                .values()
                .map(|t| (t.name.clone(), t.partition_count() as i32))
                .collect()
        };
        for (t, n) in counts {
            if n > 0 {
                let known = self.acc.lock().topics.contains_key(t.as_str());
                if known {
                    self.acc.set_partitions(&t, n);
                }
            }
        }
    }

    fn idempotence_housekeeping(&mut self) {
        let Some(idem) = self.idem.as_mut() else {
            return;
        };
        if let Some(hooks) = &self.cfg.hooks {
            while let Some((p, reset)) = hooks.producer_change() {
                tracing::debug!(
                    producer_id = p.producer_id,
                    epoch = p.epoch,
                    reset,
                    "producer id/epoch from the transaction manager"
                );
                idem.set_producer(p, reset);
            }
        }
        if let Some(Action::InitProducerId) = idem.next_action() {
            let cluster = self.cluster.clone();
            let tx = self.tx.clone();
            let backoff = if self.init_failures == 0 {
                Duration::ZERO
            } else {
                self.cfg.retry_backoff * self.init_failures.min(10)
            };
            tokio::spawn(async move {
                tokio::time::sleep(backoff).await;
                let _ = tx.send(Event::Init(init_producer_id(&cluster).await));
            });
        }
        let bumps = idem.epoch_bumps();
        while self.bumps_seen < bumps {
            self.bumps_seen += 1;
            self.metrics.epoch_bump();
        }
        let rewrites = idem.take_rewrites();
        if !rewrites.is_empty() {
            tracing::info!(producer = ?idem.producer(), batches = rewrites.len(), "epoch bumped; rewriting in-flight sequences");
            let mut g = self.acc.lock();
            for rw in rewrites {
                if let Some(f) = self.inflight.get_mut(&rw.batch) {
                    f.batch.rewrite(Some(rw.sequence));
                    continue;
                }
                for tq in g.topics.values_mut() {
                    for q in tq.partitions.iter_mut() {
                        for b in q.iter_mut().filter(|b| b.id == rw.batch) {
                            b.rewrite(Some(rw.sequence));
                        }
                    }
                }
            }
        }
        if let Phase::Fatal(code) = idem.phase() {
            let e = ProduceError::Fatal(format!("idempotent producer: {code:?}").into());
            self.fail_fatal(e);
        }
    }

    /// Fails every undrained batch when the hooks says the transaction must
    /// be (or is being) aborted (Java `abortUndrainedBatches`).
    ///
    /// A batch that was drained before and waits for its retry keeps its
    /// place and is sent again (as in Java, which aborts only batches
    /// without a sequence): its sequence is taken, and the broker may have
    /// written an earlier attempt. Failing it here would leave the
    /// partition's sequence unresolved — the batch pipelined behind it
    /// would then fail on OUT_OF_ORDER_SEQUENCE_NUMBER instead of being
    /// retried — and EndTxn would go out before the broker's answer to it.
    /// Only a fatal error fails those too.
    fn fail_undrained(&mut self) {
        if let Some((serial, e)) = self.cfg.hooks.as_ref().and_then(|g| g.undrained_queued()) {
            self.acc.fail_queued(Some(serial), &e);
        }
        let Some(e) = self.cfg.hooks.as_ref().and_then(|g| g.undrained_error()) else {
            return;
        };
        let fatal = !matches!(&e, ProduceError::Transaction(t) if t.is_abortable());
        let batches: Vec<Batch> = {
            let mut g = self.acc.lock();
            let mut out = Vec::new();
            for q in g
                .topics
                .values_mut()
                .flat_map(|tq| tq.partitions.iter_mut())
            {
                let (keep, fail): (VecDeque<Batch>, VecDeque<Batch>) =
                    q.drain(..).partition(|b| !fatal && b.sequence.is_some());
                *q = keep;
                out.extend(fail);
            }
            out
        };
        for b in batches {
            if let Some(idem) = self.idem.as_mut() {
                idem.handle_expired(&b.tp, b.id); // a drained, requeued batch: unknown
            }
            self.finish(b, Err(e.clone()));
        }
    }

    fn fail_fatal(&mut self, e: ProduceError) {
        let batches: Vec<Batch> = {
            let mut g = self.acc.lock();
            if g.fatal.is_none() {
                tracing::error!(error = %e, "producer failed fatally");
                g.fatal = Some(e.clone());
            }
            g.drain_queued()
        };
        for b in batches {
            self.finish(b, Err(e.clone()));
        }
        self.acc.fail_queued(None, &e);
    }

    fn abort_all(&mut self) {
        let e = ProduceError::Closed(Some("closed before the record was acknowledged".into()));
        self.acc.fail_queued(None, &e);
        let batches = self.acc.lock().drain_queued();
        for b in batches {
            self.finish(b, Err(e.clone()));
        }
        let ids: Vec<BatchId> = self.inflight.keys().copied().collect();
        for id in ids {
            if let Some(f) = self.take_inflight(id)
                && !f.expired
            {
                self.finish(f.batch, Err(e.clone()));
            }
        }
    }

    /// Completes a batch and returns its memory.
    fn finish(&self, b: Batch, r: Result<BatchResult, ProduceError>) {
        if r.is_ok() {
            self.metrics
                .record_sent(b.records as u64, b.wire_size() as u64);
        }
        b.completion.complete(r);
        self.acc.batch_done(b.root, b.memory);
    }

    fn expire(&mut self, now: Instant) {
        let dt = self.cfg.delivery_timeout;
        let mut expired = Vec::new();
        {
            let mut g = self.acc.lock();
            for tq in g.topics.values_mut() {
                for q in tq.partitions.iter_mut() {
                    if q.front().is_some_and(|b| now >= b.created + dt) {
                        let mut keep = std::collections::VecDeque::with_capacity(q.len());
                        for b in q.drain(..) {
                            if now >= b.created + dt {
                                expired.push(b);
                            } else {
                                keep.push_back(b);
                            }
                        }
                        *q = keep;
                    }
                }
            }
        }
        for b in expired {
            if let Some(idem) = self.idem.as_mut() {
                idem.handle_expired(&b.tp, b.id);
            }
            if let Some(hooks) = &self.cfg.hooks {
                hooks.batch_failed(&b.tp, None, b.sequence.is_some());
            }
            let e = ProduceError::DeliveryTimeout {
                tp: b.tp.clone(),
                records: b.records as usize,
                elapsed: now - b.created,
            };
            self.finish(b, Err(e));
        }
        let ids: Vec<BatchId> = self
            .inflight
            .iter()
            .filter(|(_, f)| !f.expired && now >= f.batch.created + dt)
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            let f = self.inflight.get_mut(&id).expect("present");
            f.expired = true;
            if let Some(idem) = self.idem.as_mut() {
                idem.handle_expired(&f.batch.tp, id);
            }
            if let Some(hooks) = &self.cfg.hooks {
                hooks.batch_failed(&f.batch.tp, None, true);
            }
            let e = ProduceError::DeliveryTimeout {
                tp: f.batch.tp.clone(),
                records: f.batch.records as usize,
                elapsed: now - f.batch.created,
            };
            f.batch.completion.complete(Err(e));
            self.acc.batch_done(f.batch.root, f.batch.memory);
        }
    }

    /// Drains ready batches into requests. Returns whether anything was sent
    /// and the next time something becomes ready.
    fn drain(&mut self, now: Instant) -> (bool, Option<Instant>) {
        let mut wake: Option<Instant> = None;
        let soon = |t: Instant, wake: &mut Option<Instant>| {
            *wake = Some(wake.map_or(t, |w| w.min(t)));
        };
        let mut per_route: HashMap<Route, RouteRequest> = HashMap::new();
        if self.cfg.hooks.as_ref().is_some_and(|g| g.hold_produce()) {
            return (false, None); // the hooks wakes the sender when done
        }
        let mut need_metadata = false;
        // Read from the hooks once per pass (each call takes the transaction
        // manager's lock), for the batches and every request of the pass.
        let transactional_id = self.cfg.hooks.as_ref().and_then(|g| g.transactional_id());
        let max_version = self
            .cfg
            .hooks
            .as_ref()
            .and_then(|g| g.max_produce_version());
        let transactional = transactional_id.is_some();
        if transactional && let Some(idem) = self.idem.as_mut() {
            // Transaction version 2 (Produce v12+): the broker checks that
            // every epoch starts at sequence 0.
            idem.set_broker_checks_epoch_start(max_version.is_none());
        }
        {
            let mut g = self.acc.lock();
            // Records waiting for buffer memory: send at once what holds
            // it (Java's "exhausted" readiness).
            let flushing = g.flushing > 0 || g.closed.is_some() || !g.waiting.is_empty();
            if g.fatal.is_some() {
                return (false, None);
            }
            let md = self.cluster.metadata();
            let lanes = self.cfg.connections_per_broker;
            for (topic, tq) in g.topics.iter_mut() {
                for (p, q) in tq.partitions.iter_mut().enumerate() {
                    let Some(first) = q.front() else { continue };
                    if let Some(t) = first.retry_at
                        && t > now
                    {
                        soon(t, &mut wake);
                        continue;
                    }
                    let linger_at = first.created + self.cfg.linger;
                    let ready = q.len() > 1
                        || first.is_full()
                        || now >= linger_at
                        || flushing
                        || first.attempts > 0;
                    if !ready {
                        soon(linger_at, &mut wake);
                        continue;
                    }
                    let Some(node) = md.leader(topic, p as i32) else {
                        need_metadata = true;
                        soon(now + self.cfg.retry_backoff, &mut wake);
                        continue;
                    };
                    let route = Route {
                        node,
                        lane: lane_of(p, lanes),
                    };
                    if self.node_inflight.get(&route).copied().unwrap_or(0)
                        >= self.cfg.max_in_flight
                    {
                        continue;
                    }
                    if per_route.get(&route).is_some_and(|r| {
                        !r.batches.is_empty()
                            && r.bytes + first.wire_size() > self.cfg.max_request_size
                    }) {
                        continue;
                    }
                    if let Some(hooks) = &self.cfg.hooks
                        && !hooks.may_drain(&first.tp)
                    {
                        continue;
                    }
                    if !self.stale_partitions.is_empty()
                        && self.stale_partitions.contains_key(&first.tp)
                    {
                        continue;
                    }
                    let seq = match self.idem.as_mut() {
                        None => None,
                        Some(idem) => match idem.may_drain(&first.tp, first.id) {
                            Drain::Stop => continue,
                            Drain::Retry(s) => Some(s),
                            Drain::New => Some(idem.assign(&first.tp, first.id, first.records)),
                        },
                    };
                    let b = q.pop_front().expect("front exists");
                    let request = per_route.entry(route).or_default();
                    request.bytes += b.wire_size();
                    request.batches.push((b, seq));
                }
            }
        }
        if need_metadata {
            self.cluster.invalidate();
        }
        if per_route.is_empty() {
            return (false, wake);
        }
        for (route, RouteRequest { batches, .. }) in per_route {
            let generation = self.node_queues.get(&route).map_or(0, |q| q.generation);
            let mut parts = Vec::with_capacity(batches.len());
            let mut ids = Vec::with_capacity(batches.len());
            for (mut b, seq) in batches {
                if let Err(e) = b.close_and_encode(seq, transactional) {
                    if let Some(idem) = self.idem.as_mut() {
                        idem.handle_local_failure(&b.tp, b.id);
                    }
                    if let Some(hooks) = &self.cfg.hooks {
                        hooks.batch_failed(&b.tp, None, false);
                    }
                    self.finish(b, Err(e));
                    continue;
                }
                if let Some(seq) = b.sequence {
                    tracing::trace!(
                        tp = %b.tp,
                        producer_id = seq.producer.producer_id,
                        epoch = seq.producer.epoch,
                        base_sequence = seq.base_sequence,
                        records = b.records,
                        attempt = b.attempts,
                        node = route.node,
                        lane = route.lane,
                        connection = generation,
                        "batch drained"
                    );
                }
                parts.push((b.tp.clone(), b.encoded.clone().expect("encoded")));
                ids.push((b.tp.clone(), b.id));
                self.inflight.insert(
                    b.id,
                    InFlight {
                        batch: b,
                        expired: false,
                        route,
                        generation,
                        stale: false,
                    },
                );
            }
            if parts.is_empty() {
                continue;
            }
            *self.node_inflight.entry(route).or_default() += 1;
            self.metrics.request_sent();
            let q = self.node_queues.entry(route).or_insert_with(|| {
                let (qtx, qrx) = mpsc::unbounded_channel();
                tokio::spawn(node_dispatcher(
                    self.cluster.clone(),
                    route,
                    qrx,
                    self.tx.clone(),
                ));
                NodeQueue {
                    requests: qtx,
                    generation: 0,
                }
            });
            debug_assert_eq!(q.generation, generation);
            let req = NodeRequest {
                generation,
                parts,
                ids,
                acks: self.cfg.acks,
                timeout_ms: self.cfg.request_timeout.as_millis().min(i32::MAX as u128) as i32,
                transactional_id: transactional_id.clone(),
                max_version,
            };
            if let Err(mpsc::error::SendError(req)) = q.requests.send(req) {
                let _ = self.tx.send(Event::Produce(RequestDone {
                    route,
                    generation: req.generation,
                    batches: req.ids,
                    result: Err(("dispatcher stopped".into(), false)),
                    sent_at: Instant::now(),
                }));
            }
        }
        (true, wake)
    }

    fn handle_event(&mut self, ev: Event) {
        match ev {
            Event::Init(r) => {
                let Some(idem) = self.idem.as_mut() else {
                    return;
                };
                match r {
                    Ok(p) => {
                        tracing::debug!(
                            producer_id = p.producer_id,
                            epoch = p.epoch,
                            "InitProducerId"
                        );
                        self.init_failures = 0;
                        idem.handle_init_producer_id(Ok(p));
                    }
                    Err(InitError::Code(c)) => {
                        tracing::warn!(error = ?c, "InitProducerId failed");
                        self.init_failures += 1;
                        idem.handle_init_producer_id(Err(c));
                    }
                    Err(InitError::Conn(m)) => {
                        tracing::warn!(error = %m, "InitProducerId failed");
                        self.init_failures += 1;
                        idem.handle_init_producer_id_disconnect();
                    }
                    Err(InitError::Fatal(m)) => {
                        idem.handle_init_producer_id(Err(ErrorCode::UnsupportedVersion));
                        self.fail_fatal(ProduceError::Fatal(m.into()));
                    }
                }
                self.acc.wake_sender.notify_one();
            }
            Event::Produce(done) => self.handle_produce(done),
            Event::TopicLimit {
                topic,
                max_message_bytes,
            } => {
                let max = match max_message_bytes {
                    Ok(max) => max,
                    Err(why) => {
                        // Batches may then grow up to batch.max.size; one
                        // the broker refuses is split.
                        tracing::info!(%topic, reason = %why, "max.message.bytes unknown: batches grow up to batch.max.size");
                        self.cfg.max_request_size
                    }
                };
                tracing::debug!(%topic, max, "batches of the topic grow up to its max.message.bytes");
                self.acc.set_max_batch_bytes(&topic, Some(max));
            }
        }
    }

    /// Tells the accumulator which partitions wait for an in-flight slot
    /// (their leader connection has `max.in.flight` requests out): their
    /// open batch grows past `batch.size`, up to `batch.max.size`, instead
    /// of a new batch being started behind it. Asks for the
    /// `max.message.bytes` of topics that do not know it yet. Nothing to
    /// do unless `batch.max.size` is above `batch.size`.
    fn publish_growth(&mut self) {
        if !self.acc.config.grows() {
            return;
        }
        let any_at_max = self
            .node_inflight
            .values()
            .any(|&n| n >= self.cfg.max_in_flight);
        let mut g = self.acc.lock();
        let mut ask = Vec::new();
        for (topic, tq) in g.topics.iter_mut() {
            if tq.max_batch_bytes.is_none()
                && tq.num_partitions > 0
                && !self.limits_asked.contains(topic)
            {
                ask.push(topic.clone());
            }
        }
        if !any_at_max && !self.growth_published {
            drop(g);
            self.ask_limits(ask);
            return;
        }
        let md = self.cluster.metadata();
        let lanes = self.cfg.connections_per_broker;
        let mut any = false;
        for (topic, tq) in g.topics.iter_mut() {
            let n = tq.partitions.len();
            tq.grow.resize(n, false);
            let t = md.topic(topic);
            for (p, grow) in tq.grow.iter_mut().enumerate() {
                *grow = any_at_max
                    && t.and_then(|t| t.partitions.get(&(p as i32)))
                        .and_then(|pm| pm.leader)
                        .is_some_and(|node| {
                            let route = Route {
                                node,
                                lane: lane_of(p, lanes),
                            };
                            self.node_inflight.get(&route).copied().unwrap_or(0)
                                >= self.cfg.max_in_flight
                        });
                any |= *grow;
            }
        }
        drop(md);
        drop(g);
        self.growth_published = any;
        self.ask_limits(ask);
    }

    /// Asks a broker for each topic's `max.message.bytes` (DescribeConfigs);
    /// the answers come back as [`Event::TopicLimit`].
    fn ask_limits(&mut self, topics: Vec<Arc<str>>) {
        for topic in topics {
            self.limits_asked.insert(topic.clone());
            let cluster = self.cluster.clone();
            let tx = self.tx.clone();
            tokio::spawn(async move {
                let max_message_bytes = topic_max_message_bytes(&cluster, &topic).await;
                let _ = tx.send(Event::TopicLimit {
                    topic,
                    max_message_bytes,
                });
            });
        }
    }

    fn handle_produce(&mut self, done: RequestDone) {
        let now = Instant::now();
        if let Some(n) = self.node_inflight.get_mut(&done.route) {
            *n = n.saturating_sub(1);
        }
        self.metrics.request_done();
        match done.result {
            Ok(None) => {
                // acks=0: written to the socket.
                for (_, id) in done.batches {
                    if let Some(f) = self.take_inflight(id)
                        && !f.expired
                    {
                        self.finish(
                            f.batch,
                            Ok(BatchResult {
                                base_offset: -1,
                                log_append_time: -1,
                            }),
                        );
                    }
                }
            }
            Ok(Some(resp)) => {
                self.metrics.request_latency(now - done.sent_at);
                let ids: HashMap<[u8; 16], String> = {
                    let md = self.cluster.metadata();
                    resp.responses
                        .iter()
                        .filter(|t| t.topic_id != [0; 16])
                        .filter_map(|t| {
                            md.topic_name(&t.topic_id)
                                .map(|n| (t.topic_id, n.to_string()))
                        })
                        .collect()
                };
                for (tp, id) in done.batches {
                    let pr = resp.responses.iter().find_map(|t| {
                        let name_ok = if t.topic_id != [0; 16] {
                            ids.get(&t.topic_id).map(String::as_str) == Some(&*tp.topic)
                        } else {
                            *t.name == *tp.topic
                        };
                        if !name_ok {
                            return None;
                        }
                        t.partition_responses
                            .iter()
                            .find(|p| p.index == tp.partition)
                    });
                    match pr {
                        Some(p) => {
                            let error = ErrorCode::from(p.error_code);
                            if error.is_ok() {
                                self.complete_ok(id, p.base_offset, p.log_append_time_ms);
                            } else {
                                let msg = p.error_message.clone().or_else(|| {
                                    p.record_errors
                                        .first()
                                        .and_then(|r| r.batch_index_error_message.clone())
                                });
                                self.complete_err(id, error, p.log_start_offset, msg, now);
                            }
                        }
                        None => self.complete_err(
                            id,
                            ErrorCode::NetworkException,
                            -1,
                            Some("partition missing from the Produce response".into()),
                            now,
                        ),
                    }
                }
            }
            Err((msg, fatal)) => {
                if fatal {
                    let e = ProduceError::Fatal(msg.into());
                    for (_, id) in done.batches {
                        if let Some(f) = self.take_inflight(id) {
                            if let Some(idem) = self.idem.as_mut() {
                                idem.handle_local_failure(&f.batch.tp, id);
                            }
                            if let Some(hooks) = &self.cfg.hooks {
                                hooks.batch_failed(&f.batch.tp, None, true);
                            }
                            if !f.expired {
                                self.finish(f.batch, Err(e.clone()));
                            }
                        }
                    }
                    self.fail_fatal(e);
                    return;
                }
                tracing::debug!(
                    node = done.route.node,
                    lane = done.route.lane,
                    error = %msg,
                    "Produce request failed; retrying"
                );
                // The connection of this generation is gone: batches drained
                // from now on may use a new one.
                if let Some(q) = self.node_queues.get_mut(&done.route) {
                    q.generation = q.generation.max(done.generation + 1);
                    let current = q.generation;
                    for f in self.inflight.values_mut() {
                        if f.route == done.route && f.generation < current && !f.stale {
                            f.stale = true;
                            *self.stale_partitions.entry(f.batch.tp.clone()).or_default() += 1;
                        }
                    }
                }
                self.cluster.invalidate();
                for (_, id) in done.batches {
                    self.complete_err(id, ErrorCode::NetworkException, -1, Some(msg.clone()), now);
                }
            }
        }
    }

    /// Removes batch `id` from the in-flight set, releasing its partition's
    /// stale count.
    fn take_inflight(&mut self, id: BatchId) -> Option<InFlight> {
        let f = self.inflight.remove(&id)?;
        if f.stale
            && let Some(n) = self.stale_partitions.get_mut(&f.batch.tp)
        {
            *n -= 1;
            if *n == 0 {
                self.stale_partitions.remove(&f.batch.tp);
            }
        }
        Some(f)
    }

    fn complete_ok(&mut self, id: BatchId, base_offset: i64, log_append_time: i64) {
        let Some(f) = self.take_inflight(id) else {
            return;
        };
        if let Some(idem) = self.idem.as_mut() {
            if f.expired {
                if let Some(seq) = f.batch.sequence {
                    idem.handle_late_completed(&f.batch.tp, seq, base_offset);
                }
            } else {
                idem.handle_completed(&f.batch.tp, id, base_offset);
            }
        }
        if !f.expired {
            self.finish(
                f.batch,
                Ok(BatchResult {
                    base_offset,
                    log_append_time,
                }),
            );
        }
    }

    fn complete_err(
        &mut self,
        id: BatchId,
        error: ErrorCode,
        log_start_offset: i64,
        message: Option<String>,
        now: Instant,
    ) {
        let Some(f) = self.take_inflight(id) else {
            return;
        };
        self.metrics.error(error);
        if let Some(seq) = f.batch.sequence {
            // Which state the broker refused, for diagnosing sequence and
            // epoch errors (OUT_OF_ORDER_SEQUENCE_NUMBER above all).
            tracing::debug!(
                tp = %f.batch.tp,
                ?error,
                producer_id = seq.producer.producer_id,
                epoch = seq.producer.epoch,
                base_sequence = seq.base_sequence,
                records = f.batch.records,
                attempt = f.batch.attempts,
                node = f.route.node,
                lane = f.route.lane,
                connection = f.generation,
                expired = f.expired,
                broker_message = message.as_deref().unwrap_or(""),
                "batch refused"
            );
        }
        if f.expired {
            return;
        }
        let mut b = f.batch;
        let expired = now >= b.created + self.cfg.delivery_timeout;
        if error == ErrorCode::MessageTooLarge && b.records > 1 && !expired {
            // Java's Sender.completeBatch: split and send again, whatever
            // the retries left (nothing of the batch was written).
            if self.split_refused(&b) {
                return; // its parts hold its records, memory and place
            }
        }
        let exhausted = b.attempts as i64 >= self.cfg.retries as i64;
        let decision = match self.idem.as_mut() {
            Some(idem) => idem.handle_error(&b.tp, id, error, log_start_offset, expired, exhausted),
            None if !expired && !exhausted && error.is_retriable() => ErrorDecision::Retry,
            None => ErrorDecision::Fail {
                fatal: matches!(
                    error,
                    ErrorCode::ClusterAuthorizationFailed | ErrorCode::UnsupportedVersion
                ),
            },
        };
        if error.is_retriable() {
            self.cluster.invalidate();
        }
        match decision {
            ErrorDecision::Retry => {
                tracing::debug!(tp = %b.tp, ?error, attempts = b.attempts + 1, "retrying batch");
                self.metrics.retry();
                b.attempts += 1;
                b.retry_at = Some(now + self.cfg.retry_backoff);
                self.reenqueue(b);
            }
            ErrorDecision::SucceedWithoutOffset => {
                self.finish(
                    b,
                    Ok(BatchResult {
                        base_offset: -1,
                        log_append_time: -1,
                    }),
                );
            }
            ErrorDecision::Fail { fatal } => {
                tracing::warn!(tp = %b.tp, ?error, "batch failed");
                // A lost connection or a timed-out request may have written the
                // batch: its outcome is unknown, and the transaction manager must
                // never guess (it aborts and bumps the epoch before going on).
                let outcome_unknown = matches!(
                    error,
                    ErrorCode::NetworkException | ErrorCode::RequestTimedOut
                );
                if let Some(hooks) = &self.cfg.hooks {
                    hooks.batch_failed(&b.tp, Some(error), outcome_unknown);
                }
                let e = ProduceError::Broker {
                    tp: b.tp.clone(),
                    error,
                    message: message.map(Into::into),
                };
                self.finish(b, Err(e.clone()));
                if fatal {
                    self.fail_fatal(ProduceError::Fatal(e.to_string().into()));
                }
            }
        }
    }

    /// Splits batch `b`, which the broker refused as too large
    /// (MESSAGE_TOO_LARGE), and queues the parts in its place (Java's
    /// `RecordAccumulator.splitAndReenqueue`): at most `batch.size` of
    /// records each, and at most half of `b`'s, so that a part refused
    /// again is split smaller, down to single records (which then fail
    /// with the broker's error). With idempotence the parts take over
    /// `b`'s sequence numbers ([`Idempotence::split`]): the broker wrote
    /// nothing of `b`, the batches pipelined behind it are refused out of
    /// order and retried after the parts, with their own sequences. Each
    /// record's send future follows its record to its part. False: the
    /// batch could not be split (it is failed as refused).
    fn split_refused(&mut self, b: &Batch) -> bool {
        b.distrust_ratio();
        if self.acc.config.grows() {
            // The topic's limit may have changed: ask again; its batches
            // grow no more until the answer comes.
            self.acc.set_max_batch_bytes(&b.tp.topic, None);
            self.limits_asked.remove(&b.tp.topic);
        }
        let max_part = self
            .acc
            .config
            .batch_size
            .saturating_sub(kafka_proto::record::BATCH_HEADER_LEN);
        let acc = self.acc.clone();
        let mut parts = match b.split(max_part, || acc.next_batch_id()) {
            Ok(parts) => parts,
            Err(e) => {
                tracing::warn!(tp = %b.tp, error = %e, "a batch refused as too large could not be split");
                return false;
            }
        };
        if let Some(idem) = self.idem.as_mut() {
            let counts: Vec<(BatchId, i32)> = parts.iter().map(|p| (p.id, p.records)).collect();
            if idem.split(&b.tp, b.id, &counts).is_none() {
                let in_flight: Vec<_> = idem
                    .partition(&b.tp)
                    .map(|p| p.inflight().collect())
                    .unwrap_or_default();
                tracing::warn!(
                    tp = %b.tp,
                    batch = b.id,
                    sequence = ?b.sequence,
                    records = b.records,
                    attempts = b.attempts,
                    ?in_flight,
                    "a batch refused as too large is not in flight: not split"
                );
                return false;
            }
        }
        if !b.hand_over(&parts) {
            return false;
        }
        self.acc.adopt_split(b, &mut parts);
        tracing::info!(
            tp = %b.tp,
            records = b.records,
            bytes = b.wire_size(),
            parts = parts.len(),
            "the broker refused a batch as too large (MESSAGE_TOO_LARGE): split into smaller batches"
        );
        self.metrics.batch_split();
        for part in parts {
            self.reenqueue(part);
        }
        true
    }

    /// Puts a retried batch back in its partition queue, in sequence
    /// (= creation, [`Batch::order_key`]) order ahead of newer batches.
    fn reenqueue(&mut self, b: Batch) {
        let mut g = self.acc.lock();
        let tq = g.topics.entry(b.tp.topic.clone()).or_default();
        let p = b.tp.partition as usize;
        if tq.partitions.len() <= p {
            tq.partitions.resize_with(p + 1, Default::default);
        }
        let q = &mut tq.partitions[p];
        let key = b.order_key();
        let pos = q
            .iter()
            .position(|x| x.order_key() > key)
            .unwrap_or(q.len());
        q.insert(pos, b);
    }
}

/// The topic's `max.message.bytes` as a broker reports it (the topic's own
/// value, or the brokers' `message.max.bytes` it defaults to).
async fn topic_max_message_bytes(cluster: &Cluster, topic: &str) -> Result<usize, String> {
    const TOPIC: i8 = 2;
    let conn = cluster.any_connection().await.map_err(|e| e.to_string())?;
    let configs = kafka_client::requests::describe_configs::describe_configs_on(
        &conn,
        TOPIC,
        topic,
        Some(&["max.message.bytes"]),
    )
    .await
    .map_err(|e| e.to_string())?;
    let value = configs
        .get("max.message.bytes")
        .cloned()
        .flatten()
        .ok_or_else(|| "the broker did not report max.message.bytes".to_string())?;
    value
        .parse::<usize>()
        .map_err(|e| format!("max.message.bytes {value:?}: {e}"))
}

async fn init_producer_id(cluster: &Cluster) -> Result<ProducerIdAndEpoch, InitError> {
    let conn = cluster
        .any_connection()
        .await
        .map_err(|e| InitError::Conn(e.to_string()))?;
    let v = conn
        .versions()
        .version_for::<InitProducerIdRequest>()
        .map_err(|e| InitError::Fatal(e.to_string()))?;
    let req = InitProducerIdRequest {
        transactional_id: None,
        transaction_timeout_ms: i32::MAX,
        producer_id: -1,
        producer_epoch: -1,
        ..Default::default()
    };
    let resp = conn
        .send(&req, v)
        .await
        .map_err(|e| InitError::Conn(e.to_string()))?;
    match ErrorCode::from(resp.error_code) {
        ErrorCode::None => Ok(ProducerIdAndEpoch {
            producer_id: resp.producer_id,
            epoch: resp.producer_epoch,
        }),
        c => Err(InitError::Code(c)),
    }
}
