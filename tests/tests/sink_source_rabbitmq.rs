//! `RabbitMqSource` against a real RabbitMQ broker (kafka-testcontainers),
//! one test per scenario, each on a queue of its own. The tests that leave
//! the broker running share one ([`shared_mq`]); the one that restarts it
//! starts its own. Needs `--features rabbitmq`.
#![cfg(feature = "rabbitmq")]

use kafka_sink::source::{
    AckMode, Guarantee, RabbitMqSource, RabbitMqSourceConfig, RabbitMqSourceError,
};
use kafka_testcontainers::RabbitMq;
use lapin::options::{BasicPublishOptions, ConfirmSelectOptions, QueueDeclareOptions};
use lapin::types::{AMQPValue, FieldTable};
use lapin::{BasicProperties, Connection, ConnectionProperties};
use std::collections::{BTreeSet, HashMap};
use std::future::Future;
use std::time::Duration;

/// Ready messages after a reject inside an uncommitted transaction.
const TX_REJECT_REQUEUED: u32 = 1;

const SCENARIO_TIMEOUT: Duration = Duration::from_secs(90);

async fn within<T>(what: &str, f: impl Future<Output = T>) -> T {
    tokio::time::timeout(SCENARIO_TIMEOUT, f)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within {SCENARIO_TIMEOUT:?}"))
}

/// The RabbitMQ broker of this test process (the harness's
/// [`RabbitMq::shared`]; each test has queues of its own).
async fn shared_mq() -> &'static RabbitMq {
    RabbitMq::shared().await.expect("start RabbitMQ")
}

fn id(i: usize) -> String {
    format!("msg-{i:04}")
}

/// Publishes persistent messages (with publisher confirms) to a durable queue.
/// `None` correlation id: the message has none.
async fn publish(url: &str, queue: &str, messages: &[(Option<String>, Vec<u8>, FieldTable)]) {
    let conn = Connection::connect(url, ConnectionProperties::default())
        .await
        .unwrap();
    let ch = conn.create_channel().await.unwrap();
    ch.confirm_select(ConfirmSelectOptions::default())
        .await
        .unwrap();
    declare(&ch, queue).await;
    let mut confirms = Vec::new();
    for (cid, body, headers) in messages {
        let mut props = BasicProperties::default()
            .with_delivery_mode(2)
            .with_headers(headers.clone());
        if let Some(cid) = cid {
            props = props.with_correlation_id(cid.as_str().into());
        }
        confirms.push(
            ch.basic_publish("", queue, BasicPublishOptions::default(), body, props)
                .await
                .unwrap(),
        );
    }
    for c in confirms {
        assert!(c.await.unwrap().is_ack(), "publish not confirmed");
    }
    conn.close(200, "published").await.unwrap();
}

async fn publish_ids(url: &str, queue: &str, range: std::ops::Range<usize>) {
    let msgs: Vec<_> = range
        .map(|i| {
            (
                Some(id(i)),
                format!("body {i}").into_bytes(),
                FieldTable::default(),
            )
        })
        .collect();
    publish(url, queue, &msgs).await;
}

async fn declare(ch: &lapin::Channel, queue: &str) -> u32 {
    ch.queue_declare(
        queue,
        QueueDeclareOptions {
            durable: true,
            ..QueueDeclareOptions::default()
        },
        FieldTable::default(),
    )
    .await
    .unwrap()
    .message_count()
}

/// Ready messages in the queue (passive declare; unacknowledged ones are not
/// counted, so close the consumers first).
async fn ready_count(url: &str, queue: &str) -> u32 {
    let conn = Connection::connect(url, ConnectionProperties::default())
        .await
        .unwrap();
    let ch = conn.create_channel().await.unwrap();
    let n = ch
        .queue_declare(
            queue,
            QueueDeclareOptions {
                passive: true,
                ..QueueDeclareOptions::default()
            },
            FieldTable::default(),
        )
        .await
        .unwrap()
        .message_count();
    let _ = conn.close(200, "counted").await;
    n
}

/// Waits (polling the broker) until the queue holds `expected` ready
/// messages: requeueing after a connection closes is asynchronous.
async fn wait_ready_count(url: &str, queue: &str, expected: u32) {
    let mut last = u32::MAX;
    for _ in 0..200 {
        last = ready_count(url, queue).await;
        if last == expected {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("queue {queue} holds {last} ready messages, expected {expected}");
}

fn config(mq: &RabbitMq, queue: &str, prefetch: u16) -> RabbitMqSourceConfig {
    let mut c = RabbitMqSourceConfig::new(mq.amqp_url(), queue);
    c.prefetch_count = prefetch;
    c
}

/// Pulls `n` messages, returning their correlation ids.
async fn take(source: &mut RabbitMqSource, n: usize) -> Vec<String> {
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let m = source
            .next_message()
            .await
            .unwrap()
            .expect("consumer cancelled");
        out.push(m.correlation_id.unwrap());
    }
    out
}

fn range_ids(r: std::ops::Range<usize>) -> Vec<String> {
    r.map(id).collect()
}

/// Invariant: with prefetch N, at most N messages are unacknowledged; a
/// snapshot alone acknowledges nothing, the completion of its checkpoint
/// acknowledges its messages; closing before completion returns them to the
/// queue, and a new source gets each of them again, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledges_on_checkpoint_completion_within_the_prefetch_bound() {
    let mq = shared_mq().await;
    let url = mq.amqp_url();
    within("acknowledgement on completion", async {
        let q = "acks";
        let mut first = vec![(
            Some(id(0)),
            b"body 0".to_vec(),
            FieldTable::from(std::collections::BTreeMap::from([(
                "origin".into(),
                AMQPValue::LongString("test".into()),
            )])),
        )];
        first.extend((1..100).map(|i| {
            (
                Some(id(i)),
                format!("body {i}").into_bytes(),
                FieldTable::default(),
            )
        }));
        publish(&url, q, &first).await;

        // Prefetch bounds the unacknowledged messages: 10 arrive, then
        // nothing until a checkpoint completes.
        let mut source = RabbitMqSource::connect(config(mq, q, 10), None)
            .await
            .unwrap();
        let m = source.next_message().await.unwrap().unwrap();
        assert_eq!(m.correlation_id.as_deref(), Some("msg-0000"));
        assert_eq!(&m.body[..], b"body 0");
        assert_eq!(
            m.headers.inner().get("origin"),
            Some(&AMQPValue::LongString("test".into()))
        );
        assert!(!m.redelivered);
        let mut got = vec![m.correlation_id.unwrap()];
        got.extend(take(&mut source, 9).await);
        assert!(
            tokio::time::timeout(Duration::from_millis(500), source.next_message())
                .await
                .is_err(),
            "an 11th message arrived with prefetch 10 and nothing acknowledged"
        );
        // A snapshot alone acknowledges nothing.
        source.snapshot_state(1).unwrap();
        assert!(
            tokio::time::timeout(Duration::from_millis(300), source.next_message())
                .await
                .is_err()
        );
        assert_eq!(source.notify_checkpoint_complete(1).await.unwrap(), 1);
        got.extend(take(&mut source, 10).await);
        // Without completion, closing returns the 10 to the queue.
        source.snapshot_state(2).unwrap();
        source.close().await.unwrap();
        wait_ready_count(&url, q, 90).await;

        // A new source (no state: checkpoint 2 never completed) gets them
        // again, then everything, acknowledging every 25 messages.
        let mut source = RabbitMqSource::connect(config(mq, q, 30), None)
            .await
            .unwrap();
        let mut all = Vec::new();
        let mut cp = 0;
        while all.len() < 90 {
            all.extend(take(&mut source, 15).await);
            cp += 1;
            source.snapshot_state(cp).unwrap();
            source.notify_checkpoint_complete(cp).await.unwrap();
        }
        assert_eq!(all, range_ids(10..100));
        assert!(got[10..].iter().eq(all[..10].iter()));
        assert_eq!(source.stats().acknowledged, 90);
        assert_eq!(source.stats().duplicates, 0);
        source.close().await.unwrap();
        wait_ready_count(&url, q, 0).await;
    })
    .await;
}

/// Invariant: after a crash between a durable checkpoint and its
/// completion, a source restored from that checkpoint rejects the
/// redelivered messages the checkpoint holds as duplicates and emits the
/// later ones again: each message exactly once downstream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_before_completion_restore_rejects_the_checkpointed_redeliveries() {
    let mq = shared_mq().await;
    let url = mq.amqp_url();
    within("crash before completion, restore and dedup", async {
        let q = "crash";
        publish_ids(&url, q, 0..100).await;
        let mut a = RabbitMqSource::connect(config(mq, q, 200), None)
            .await
            .unwrap();
        assert_eq!(take(&mut a, 40).await, range_ids(0..40));
        a.snapshot_state(1).unwrap();
        a.notify_checkpoint_complete(1).await.unwrap();
        assert_eq!(take(&mut a, 30).await, range_ids(40..70));
        let state2 = a.snapshot_state(2).unwrap();
        assert_eq!(take(&mut a, 10).await, range_ids(70..80));
        // Crash: checkpoint 2 is durable but its completion never reached
        // the source; messages 40..80 are unacknowledged.
        drop(a);

        let mut b = RabbitMqSource::connect(config(mq, q, 200), Some(&state2))
            .await
            .unwrap();
        assert_eq!(b.awaiting_redelivery_len(), 30);
        let mut emitted = Vec::new();
        let mut redelivered = BTreeSet::new();
        while emitted.len() < 30 || b.stats().duplicates < 30 {
            let m = b.next_message().await.unwrap().unwrap();
            let cid = m.correlation_id.unwrap();
            if m.redelivered {
                redelivered.insert(cid.clone());
            }
            emitted.push(cid);
        }
        // 40..70 were in checkpoint 2: rejected as duplicates. 70..80 were
        // after it: processed again (their downstream effects were not
        // committed). 0..40 were acknowledged: never redelivered.
        let mut sorted = emitted.clone();
        sorted.sort();
        assert_eq!(sorted, range_ids(70..100), "each message exactly once");
        // 70..80 were emitted by A, so redelivered (80..100 too if A had
        // prefetched them).
        assert!(range_ids(70..80).iter().all(|i| redelivered.contains(i)));
        assert_eq!(b.stats().duplicates, 30);
        assert_eq!(b.awaiting_redelivery_len(), 0);
        b.snapshot_state(3).unwrap();
        // Completes restored checkpoint 2 (no tags) and checkpoint 3.
        assert_eq!(b.notify_checkpoint_complete(3).await.unwrap(), 2);
        assert_eq!(b.stats().acknowledged, 30);
        assert_eq!(b.stats().rejected, 30);
        assert_eq!(b.unique_ids().unacknowledged_len(), 0);
        b.close().await.unwrap();
        wait_ready_count(&url, q, 0).await;
    })
    .await;
}

/// Invariant: a message published twice with one correlation id is
/// emitted once; a message without a correlation id is an error under
/// exactly-once that neither acknowledges nor drops it, and at-least-once
/// takes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publisher_duplicates_are_skipped_and_a_missing_correlation_id_is_kept() {
    let mq = shared_mq().await;
    let url = mq.amqp_url();
    within("publisher duplicates and missing correlation ids", async {
        let q = "poison";
        let none = FieldTable::default();
        publish(
            &url,
            q,
            &[
                (Some("a".into()), b"1".to_vec(), none.clone()),
                (None, b"no id".to_vec(), none.clone()),
                (Some("a".into()), b"1 again".to_vec(), none.clone()),
                (Some("b".into()), b"2".to_vec(), none.clone()),
            ],
        )
        .await;
        let mut cfg = config(mq, q, 10);
        cfg.ack_mode = AckMode::Multiple;
        let mut source = RabbitMqSource::connect(cfg, None).await.unwrap();
        let a = source.next_message().await.unwrap().unwrap();
        assert_eq!(a.correlation_id.as_deref(), Some("a"));
        match source.next_message().await {
            Err(RabbitMqSourceError::MissingCorrelationId { delivery_tag, .. }) => {
                assert_eq!(delivery_tag, 2)
            }
            other => panic!("expected MissingCorrelationId, got {other:?}"),
        }
        // The duplicate "a" is skipped; "b" comes next.
        let b = source.next_message().await.unwrap().unwrap();
        assert_eq!(b.correlation_id.as_deref(), Some("b"));
        assert_eq!(source.stats().duplicates, 1);
        assert_eq!(source.stats().missing_correlation_id, 1);
        source.snapshot_state(1).unwrap();
        source.notify_checkpoint_complete(1).await.unwrap();
        assert_eq!(source.stats().acknowledged, 2);
        assert_eq!(source.stats().rejected, 1);
        source.close().await.unwrap();
        // The message without id was neither acknowledged (not even by the
        // cumulative ack of tag 4) nor dropped.
        wait_ready_count(&url, q, 1).await;

        // At-least-once mode takes it.
        let mut cfg = config(mq, q, 10);
        cfg.guarantee = Guarantee::AtLeastOnce;
        let mut source = RabbitMqSource::connect(cfg, None).await.unwrap();
        let m = source.next_message().await.unwrap().unwrap();
        assert_eq!(m.correlation_id, None);
        assert_eq!(&m.body[..], b"no id");
        assert!(m.redelivered);
        source.snapshot_state(1).unwrap();
        source.notify_checkpoint_complete(1).await.unwrap();
        source.close().await.unwrap();
        wait_ready_count(&url, q, 0).await;
    })
    .await;
}

/// Invariant (observed RabbitMQ behaviour the source relies on): a
/// `basic.reject` inside an AMQP transaction (`tx.select`) does not take
/// effect without `tx.commit`: the message returns to the queue.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn basic_reject_under_tx_select_requeues_without_commit() {
    let mq = shared_mq().await;
    let url = mq.amqp_url();
    within("basic.reject under tx.select", async {
        // The reference leaves open whether a reject inside an AMQP
        // transaction takes effect before tx.commit. Observed: it does not;
        // without the commit the message returns to the queue.
        let q = "tx-reject";
        publish_ids(&url, q, 0..1).await;
        let conn = Connection::connect(&url, ConnectionProperties::default())
            .await
            .unwrap();
        let ch = conn.create_channel().await.unwrap();
        ch.tx_select().await.unwrap();
        let got = ch
            .basic_get(q, lapin::options::BasicGetOptions { no_ack: false })
            .await
            .unwrap()
            .expect("one message");
        ch.basic_reject(
            got.delivery.delivery_tag,
            lapin::options::BasicRejectOptions { requeue: false },
        )
        .await
        .unwrap();
        // A synchronous method on the same channel: the reject was processed.
        assert_eq!(declare(&ch, q).await, 0);
        conn.close(200, "no commit").await.unwrap();
        wait_ready_count(&url, q, TX_REJECT_REQUEUED).await;
    })
    .await;
}

/// Invariant: a RabbitMQ restart in the middle of a run (a checkpoint
/// snapshotted before it, completed after it) loses no message and emits
/// none twice: the void delivery tags' messages come back and are
/// recognised as duplicates. The broker is this test's own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broker_restart_mid_run_loses_nothing_and_duplicates_nothing() {
    let mq = RabbitMq::start().await.expect("start RabbitMQ");
    let url = mq.amqp_url();
    let q = "restart";
    const N: usize = 200;
    publish_ids(&url, q, 0..N).await;

    let mut source = RabbitMqSource::connect(config(&mq, q, 50), None)
        .await
        .unwrap();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut record = |ids: Vec<String>| {
        for i in ids {
            *seen.entry(i).or_default() += 1;
        }
    };
    // Checkpoints 1 and 2 complete; 3 is snapshotted but its completion only
    // arrives after the restart; 10 more messages are in the current group.
    record(within("first part", take(&mut source, 20)).await);
    source.snapshot_state(1).unwrap();
    source.notify_checkpoint_complete(1).await.unwrap();
    record(within("first part", take(&mut source, 20)).await);
    source.snapshot_state(2).unwrap();
    source.notify_checkpoint_complete(2).await.unwrap();
    record(within("first part", take(&mut source, 20)).await);
    source.snapshot_state(3).unwrap();
    record(within("first part", take(&mut source, 10)).await);

    within("broker restart", mq.restart()).await.unwrap();
    // The channel is gone: checkpoint 3's delivery tags are void, its
    // messages come back and must be recognised as duplicates even though
    // checkpoint 3 completes before they do.
    source.notify_checkpoint_complete(3).await.unwrap();
    assert!(!source.is_connected());

    let mut cp = 3;
    within("consuming after the restart", async {
        while seen.len() < N || source.awaiting_redelivery_len() > 0 {
            let m = source.next_message().await.unwrap().unwrap();
            *seen.entry(m.correlation_id.unwrap()).or_default() += 1;
            if source.stats().emitted % 25 == 0 {
                cp += 1;
                source.snapshot_state(cp).unwrap();
                source.notify_checkpoint_complete(cp).await.unwrap();
            }
        }
        cp += 1;
        source.snapshot_state(cp).unwrap();
        source.notify_checkpoint_complete(cp).await.unwrap();
    })
    .await;
    let stats = source.stats();
    assert!(stats.reconnects >= 1, "{stats:?}");
    assert_eq!(seen.len(), N);
    let twice: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "emitted more than once: {twice:?}");
    assert_eq!(stats.emitted as usize, N);
    assert!(stats.duplicates >= 30, "{stats:?}");
    source.close().await.unwrap();
    wait_ready_count(&url, q, 0).await;
    mq.stop().await.unwrap();
}
