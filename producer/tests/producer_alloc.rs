//! The send path makes no per-record heap allocation beyond the record's
//! own bytes. Checked with a counting global allocator.
//!
//! The producer runs on a current-thread runtime on the test thread (its
//! sender, dispatcher and connection tasks included); kafka-mock runs on a
//! separate thread with its own runtime. Allocations are
//! counted per thread, so only the producer's are seen. Records are built
//! before the measurement (topic `String`, value a `Bytes::from_static`:
//! sending them moves them, no copy), so what is counted is the producer's
//! own work. Two numbers are measured in steady state (after a warm-up):
//!
//! - inside the `send` calls (the append to the open batch; the sender task
//!   cannot run during a synchronous call on a current-thread runtime);
//! - everything on the producer's thread while the records are sent and
//!   acknowledged: sends, awaiting the futures, the sender task (drain,
//!   encode, request building), the connection (framing, response decoding)
//!   and completion.
//!
//! See the bounds and why at the assertions.

use bytes::Bytes;
use kafka_mock::{MockCluster, MockConfig};
use kafka_producer::{Producer, ProducerConfig, ProducerRecord};
use std::time::Duration;

mod counting_alloc;
use counting_alloc::allocations;

const TOPIC: &str = "alloc";
const PARTITIONS: i32 = 3;
static VALUE: [u8; 100] = [b'v'; 100];

/// kafka-mock with the topic's partitions, on its own thread and runtime:
/// its work (decoding and checking every batch, keeping the log) allocates
/// on that thread, outside the count.
fn start_broker() -> String {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let cluster = MockCluster::start(MockConfig::default()).await.unwrap();
            cluster.create_topic(TOPIC, PARTITIONS).unwrap();
            tx.send(cluster.bootstrap()).unwrap();
            // Serves until the test process ends.
            std::future::pending::<()>().await;
        });
    });
    rx.recv().unwrap()
}

fn records(n: usize) -> Vec<ProducerRecord> {
    (0..n)
        .map(|i| {
            ProducerRecord::new(TOPIC)
                .partition(i as i32 % PARTITIONS)
                .value(Bytes::from_static(&VALUE))
        })
        .collect()
}

/// Sends `records` in windows of `window` futures (a reused `Vec`);
/// returns the allocations made inside the `send` calls.
async fn send_all(producer: &Producer, records: Vec<ProducerRecord>, window: usize) -> u64 {
    let mut in_send = 0;
    let mut pending = Vec::with_capacity(window);
    for r in records {
        let before = allocations();
        let f = producer.send(r);
        in_send += allocations() - before;
        pending.push(f);
        if pending.len() == window {
            for f in pending.drain(..) {
                f.await.expect("sent");
            }
        }
    }
    for f in pending.drain(..) {
        f.await.expect("sent");
    }
    in_send
}

#[test]
fn send_path_allocates_per_batch_not_per_record() {
    let addr = start_broker();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let config = ProducerConfig::builder(&addr)
            .linger(Duration::from_millis(5))
            .batch_size(16384)
            .build()
            .unwrap();
        let producer = Producer::connect(config).await.unwrap();
        // Warm-up: metadata, producer id, connection, partition state,
        // queues and channels at their steady-state capacity.
        send_all(&producer, records(20_000), 1000).await;

        const N: usize = 100_000;
        let input = records(N);
        let batches_before = producer.metrics().batches_sent;
        let requests_before = producer.metrics().requests;
        let before = allocations();
        let in_send = send_all(&producer, input, 1000).await;
        let total = allocations() - before;
        let m = producer.metrics();
        let batches = m.batches_sent - batches_before;
        let requests = m.requests - requests_before;
        eprintln!(
            "{N} sends: {batches} batches, {requests} requests; allocations: {in_send} in send \
             ({:.3}/record, {:.2}/batch), {total} in total ({:.3}/record, {:.2}/batch, {:.2}/request)",
            in_send as f64 / N as f64,
            in_send as f64 / batches as f64,
            total as f64 / N as f64,
            total as f64 / batches as f64,
            total as f64 / requests as f64,
        );
        assert!(batches > 0 && batches < N as u64 / 50, "batched: {batches}");
        // In `send` the only allocations are those of a new batch: its
        // buffer (`BytesMut` of batch.size, never grown: records are
        // encoded in place) and its shared completion (`Arc`) — 2 per batch
        // measured — plus the rare growth of a partition's queue (the slack).
        // Nothing per record.
        assert!(
            in_send <= 2 * batches + 16,
            "send allocates per record: {in_send} allocations for {batches} batches"
        );
        // Everything else is per request (sender drain maps and vectors,
        // the Produce request and its frame, the awaited answer, response
        // decoding, the completion wake-ups): measured ~28 per request,
        // whether a request carries 3 batches (one connection to the broker)
        // or 1.5 (two, `connections.per.broker` 2), i.e. < 0.3 per
        // record at ~110 records per batch. The bound, 40 per request, fails
        // as soon as anything allocates once per record (that alone would be
        // ~110 per batch, and a request carries at least one).
        assert!(
            requests > 0 && requests <= batches,
            "{requests} requests for {batches} batches"
        );
        assert!(
            total <= 40 * requests,
            "the pipeline allocates per record: {total} allocations for {batches} batches \
             in {requests} requests"
        );
        producer.close(Duration::from_secs(5)).await.unwrap();
    });
}
