//! The Produce requests' way to the brokers: one [`node_dispatcher`] task
//! per broker connection ([`Route`]: a broker and one of its
//! `connections.per.broker` lanes) writes the sender's requests in drain
//! order and hands the answers back as [`Event`]s.

use super::{Event, RequestDone};
use crate::Cluster;
use crate::config::Acks;
use crate::idempotence::BatchId;
use crate::record::TopicPartition;
use bytes::Bytes;
use kafka_proto::messages::{
    ProduceRequest, ProduceRequestPartitionProduceData, ProduceRequestTopicProduceData,
};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::mpsc;

/// Where a Produce request goes: a broker and one of its
/// `connections.per.broker` connections (its lane). A partition always takes
/// the same lane ([`lane_of`]), so its batches travel on one connection, in
/// order; `max.in.flight` counts per lane, as Java counts per connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct Route {
    /// The broker's node id.
    pub(super) node: i32,
    /// Which of its `connections.per.broker` connections.
    pub(super) lane: usize,
}

/// The lane of `partition` among `lanes`: partition p takes lane p mod
/// lanes. A topic's partitions on one broker spread over its lanes, and a
/// producer of partition 0 alone (a topic of one partition) keeps to lane 0,
/// the connection shared with metadata: no second connection is dialled
/// for it.
pub(super) fn lane_of(partition: usize, lanes: usize) -> usize {
    partition % lanes
}

/// The sender's end of one broker connection's [`node_dispatcher`].
pub(super) struct NodeQueue {
    /// The dispatcher's request queue.
    pub(super) requests: mpsc::UnboundedSender<NodeRequest>,
    /// Connection losses of this broker the sender has applied: requests
    /// drained from now on may go out on a new connection.
    pub(super) generation: u64,
}

/// One Produce request, as the sender drained it.
pub(super) struct NodeRequest {
    /// The connection generation the sender knew when it drained the batches.
    pub(super) generation: u64,
    /// The encoded batches, per partition.
    pub(super) parts: Vec<(TopicPartition, Bytes)>,
    /// The batches' ids, for the answer.
    pub(super) ids: Vec<(TopicPartition, BatchId)>,
    /// `acks` of the request.
    pub(super) acks: Acks,
    /// `request.timeout.ms`, the broker's wait for replicas.
    pub(super) timeout_ms: i32,
    /// The transactional id, for a transactional producer.
    pub(super) transactional_id: Option<String>,
    /// The highest Produce version the hooks allow.
    pub(super) max_version: Option<i16>,
}

/// Sends the Produce requests of one broker **in drain order**: each request
/// is written to the connection's queue (the first poll of
/// `Connection::send`) before the next one is looked at, so batches of a
/// partition reach the broker in sequence order; responses are awaited
/// concurrently (up to `max.in.flight` per broker).
///
/// Order also holds across a lost connection (as in the Java client, where
/// a disconnect fails every request on the connection before a new one is
/// made). The dispatcher pins one connection per *generation*; every request
/// carries the generation the sender knew when it drained the batches. Once
/// the pinned connection is lost, requests of that generation were drained
/// before the sender saw the loss: they may hold batches behind a lost one
/// and are failed unsent (retriable, same sequences) instead of overtaking
/// it on a new connection. The sender applies the failure, requeues the
/// batches in sequence order, and drains them under the next generation,
/// which dials afresh. Requests of the lost generation the dispatcher had
/// already written fail one by one as their answers do not come; until the
/// last of them is back, the sender drains nothing of their partitions
/// (`Sender::stale_partitions`).
pub(super) async fn node_dispatcher(
    cluster: Arc<Cluster>,
    route: Route,
    mut rx: mpsc::UnboundedReceiver<NodeRequest>,
    tx: mpsc::UnboundedSender<Event>,
) {
    let mut generation = 0u64;
    let mut pinned: Option<Arc<crate::Connection>> = None;
    // The answers awaited, polled here rather than by a task each: an
    // answer wakes this task, which hands it to the sender. When the sender
    // is gone (it holds the request queue and the event queue alike), so is
    // whoever would read the answers: the dispatcher stops.
    let mut answers: Vec<AwaitedAnswer> = Vec::new();
    loop {
        let r = match next_for_dispatcher(&mut rx, &mut answers).await {
            Some(DispatcherInput::Request(r)) => r,
            Some(DispatcherInput::Answer(ev)) => {
                let _ = tx.send(ev);
                continue;
            }
            None => return,
        };
        let sent_at = Instant::now();
        let request_generation = r.generation;
        let ids = r.ids;
        let done = move |result| {
            Event::Produce(RequestDone {
                route,
                generation: request_generation,
                batches: ids,
                result,
                sent_at,
            })
        };
        if request_generation > generation {
            // The sender saw a loss this dispatcher has not noticed yet.
            generation = request_generation;
            pinned = None;
        }
        let lost = pinned.as_ref().is_some_and(|c| c.is_closed());
        if request_generation < generation || lost {
            if lost {
                generation += 1;
                pinned = None;
            }
            let _ = tx.send(done(Err((
                format!(
                    "connection to node {} (lane {}) lost before the request was sent",
                    route.node, route.lane
                ),
                false,
            ))));
            continue;
        }
        let conn = match &pinned {
            Some(c) => c.clone(),
            None => match cluster.connection_lane(route.node, route.lane).await {
                Ok(c) => {
                    pinned = Some(c.clone());
                    c
                }
                Err(e) => {
                    generation += 1;
                    let fatal = matches!(&e, crate::ClusterError::Conn(c) if conn_fatal(c));
                    let _ = tx.send(done(Err((e.to_string(), fatal))));
                    continue;
                }
            },
        };
        let (version, req) = match prepare(
            &cluster,
            &conn,
            r.acks,
            r.timeout_ms,
            r.transactional_id,
            r.max_version,
            r.parts,
        ) {
            Ok(x) => x,
            Err(e) => {
                let _ = tx.send(done(Err(e)));
                continue;
            }
        };
        let acks0 = r.acks == Acks::Zero;
        let mut fut = Box::pin(async move {
            if acks0 {
                conn.send_no_response(&req, version)
                    .await
                    .map(|_| None)
                    .map_err(|e| (e.to_string(), conn_fatal(&e)))
            } else {
                conn.send(&req, version)
                    .await
                    .map(Some)
                    .map_err(|e| (e.to_string(), conn_fatal(&e)))
            }
        });
        // One poll writes the frame to the connection queue, in order.
        let early = tokio::select! {
            biased;
            r = &mut fut => Some(r),
            _ = std::future::ready(()) => None,
        };
        match early {
            Some(result) => {
                if result.is_err() {
                    generation += 1;
                    pinned = None;
                }
                let _ = tx.send(done(result));
            }
            None => answers.push(Box::pin(async move { done(fut.await) })),
        }
    }
}

/// A Produce request's answer (or failure) as the sender's event.
type AwaitedAnswer = std::pin::Pin<Box<dyn std::future::Future<Output = Event> + Send>>;

/// What a node dispatcher handles next.
enum DispatcherInput {
    /// A request from the sender, to write in drain order.
    Request(NodeRequest),
    /// An awaited answer has come (or its request failed).
    Answer(Event),
}

/// Waits for the next answer among `answers` (removing it) or the next
/// request, whichever comes first (answers first when both are ready);
/// `None` once the sender has dropped the request queue. At most
/// `max.in.flight` answers are awaited.
async fn next_for_dispatcher(
    rx: &mut mpsc::UnboundedReceiver<NodeRequest>,
    answers: &mut Vec<AwaitedAnswer>,
) -> Option<DispatcherInput> {
    use std::task::Poll;
    std::future::poll_fn(|cx| {
        for i in 0..answers.len() {
            if let Poll::Ready(ev) = answers[i].as_mut().poll(cx) {
                drop(answers.swap_remove(i));
                return Poll::Ready(Some(DispatcherInput::Answer(ev)));
            }
        }
        rx.poll_recv(cx).map(|r| r.map(DispatcherInput::Request))
    })
    .await
}

/// Connection errors no retry can fix. A corrupt response (decode error)
/// is not among them: the connection is closed and the batches retried.
fn conn_fatal(e: &kafka_client::ConnError) -> bool {
    matches!(
        e,
        kafka_client::ConnError::UnsupportedVersion { .. }
            | kafka_client::ConnError::AuthenticationFailed { .. }
            | kafka_client::ConnError::UnsupportedSaslMechanism { .. }
            | kafka_client::ConnError::Encode(_)
    )
}

/// Builds the Produce request for `conn` at the highest negotiated version
/// (topic ids from v13); `Err((message, fatal))`.
fn prepare(
    cluster: &Cluster,
    conn: &crate::Connection,
    acks: Acks,
    timeout_ms: i32,
    transactional_id: Option<String>,
    max_version: Option<i16>,
    parts: Vec<(TopicPartition, Bytes)>,
) -> Result<(i16, ProduceRequest), (String, bool)> {
    let mut version = conn
        .versions()
        .version_for::<ProduceRequest>()
        .map_err(|e| (e.to_string(), true))?;
    if let Some(max) = max_version {
        version = version.min(max);
    }
    let mut topics: Vec<ProduceRequestTopicProduceData> = Vec::new();
    if version >= 13 {
        let md = cluster.metadata();
        if parts.iter().any(|(tp, _)| md.topic_id(&tp.topic).is_none()) {
            version = 12;
        }
    }
    {
        let md = cluster.metadata();
        for (tp, bytes) in parts {
            let pd = ProduceRequestPartitionProduceData {
                index: tp.partition,
                records: Some(bytes),
                ..Default::default()
            };
            let id = if version >= 13 {
                md.topic_id(&tp.topic).unwrap_or_default()
            } else {
                [0; 16]
            };
            let name = if version >= 13 {
                String::new()
            } else {
                tp.topic.to_string()
            };
            match topics
                .iter_mut()
                .find(|t| t.name == name && t.topic_id == id)
            {
                Some(t) => t.partition_data.push(pd),
                None => topics.push(ProduceRequestTopicProduceData {
                    name,
                    topic_id: id,
                    partition_data: vec![pd],
                    ..Default::default()
                }),
            }
        }
    }
    let req = ProduceRequest {
        transactional_id,
        acks: acks.wire(),
        timeout_ms,
        topic_data: topics,
        ..Default::default()
    };
    Ok((version, req))
}
