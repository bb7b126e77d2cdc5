//! Jepsen-style delayed Produce / EndTxn check against a real broker
//! (Kafka 4.4 with transaction version 2 and with TV1), through the
//! harness's fault proxy.
//!
//! Kafka's transaction protocol assumes ordered delivery across connections
//! and retries; a Produce or EndTxn that arrives late can land in a later
//! transaction (Jepsen, Bufstream 0.1.0: aborted reads, lost writes, torn
//! transactions). The client's defence is to never guess an unknown outcome:
//! abort, and bump the epoch (TV1: InitProducerId(pid, epoch); TV2: EndTxn
//! v5) before the next transaction, so that a late request of the old epoch
//! is refused. Two fault rounds, between ordinary committed and aborted
//! transactions:
//!
//! - **lost responses**: the broker→client direction is paused while a
//!   transaction has records in flight; the broker writes them, the client
//!   sees only request timeouts until `delivery.timeout.ms` (outcome
//!   unknown) and the transaction becomes abortable. `abort_transaction`
//!   is called while still paused (its EndTxn answer is held too, so it
//!   returns `Timeout`), the proxy is resumed, and the same call completes
//!   the abort and the epoch bump.
//! - **delayed requests**: the client→broker direction is paused; Produce
//!   requests (and their retries) and then the abort's EndTxn sit in the
//!   proxy; on resume they reach the broker late and in any order, while
//!   the client completes the abort and bumps the epoch.
//!
//! Then more transactions. Finally our read_committed reader and the Java
//! console consumer must both return exactly the committed records, each
//! once: no record of an aborted transaction, no duplicate, no torn
//! transaction; read_uncommitted shows the records of the lost-responses
//! round, proving the broker had written what the client saw as unknown.

use kafka_client::{Cluster, ClusterConfig};
use kafka_consumer::{IsolationLevel, Reader, ReaderConfig};
use kafka_producer::txn::TransactionError;
use kafka_producer::txn::{State, TransactionVersion, TxnOp};
use kafka_producer::{ProducerConfig, ProducerRecord, TransactionalProducer};
use kafka_testcontainers::{
    Direction, IsolationLevel as JavaIsolation, KafkaCluster, KafkaVersion,
};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One cluster at a time on the shared CI cores.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const TOPIC: &str = "jepsen";
const PARTITIONS: i32 = 3;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delayed_produce_and_end_txn_kafka_4_4_tv2() {
    run(2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delayed_produce_and_end_txn_kafka_4_4_tv1() {
    run(1).await;
}

#[derive(Default)]
struct History {
    committed: Vec<String>,
    aborted: Vec<String>,
    /// Records of the lost-responses round (written by the broker, aborted).
    lost_responses: Vec<String>,
}

fn record(txn: usize, i: i32) -> (ProducerRecord, String) {
    let v = format!("t{txn:02}-{i:02}");
    (
        ProducerRecord::new(TOPIC)
            .partition(i % PARTITIONS)
            .value(v.clone()),
        v,
    )
}

/// An ordinary transaction of 6 records (2 per partition).
async fn transaction(p: &TransactionalProducer, h: &mut History, txn: usize, commit: bool) {
    p.begin_transaction().unwrap();
    let mut values = Vec::new();
    let sends: Vec<_> = (0..6)
        .map(|i| {
            let (r, v) = record(txn, i);
            values.push(v);
            p.send(r)
        })
        .collect();
    if commit {
        p.commit_transaction().await.unwrap();
        for s in sends {
            s.await.expect("acknowledged");
        }
        h.committed.extend(values);
    } else {
        p.flush().await;
        p.abort_transaction().await.unwrap();
        for s in sends {
            let _ = s.await;
        }
        h.aborted.extend(values);
    }
    assert_eq!(p.state(), State::Ready);
}

/// One fault round: records acknowledged in the open transaction, then
/// `dir` paused while more are sent; they fail (outcome unknown), the abort
/// is started while paused and times out, the proxy resumes and the
/// repeated abort completes with an epoch bump.
async fn fault_round(
    kafka: &KafkaCluster,
    p: &TransactionalProducer,
    h: &mut History,
    txn: usize,
    dir: Direction,
) {
    let proxy = kafka.proxy(0);
    let before = p.producer_id_and_epoch();
    p.begin_transaction().unwrap();
    let mut values = Vec::new();
    // Acknowledged first: every partition is in the transaction.
    for i in 0..PARTITIONS {
        let (r, v) = record(txn, i);
        p.send(r).await.expect("acknowledged before the fault");
        values.push(v);
    }
    proxy.pause(dir);
    let t = Instant::now();
    let sends: Vec<_> = (PARTITIONS..2 * PARTITIONS)
        .map(|i| {
            let (r, v) = record(txn, i);
            values.push(v);
            p.send(r)
        })
        .collect();
    for s in sends {
        let e = s.await.expect_err("no answer can arrive while paused");
        eprintln!("  {dir:?} paused: send failed after {:?}: {e}", t.elapsed());
    }
    assert_eq!(p.state(), State::AbortableError);
    let e = p.commit_transaction().await.unwrap_err();
    assert!(e.is_abortable(), "{e:?}");
    // The abort's EndTxn (or its answer) is held as well.
    match p.abort_transaction().await {
        Err(TransactionError::Timeout {
            op: TxnOp::AbortTransaction,
            ..
        }) => {}
        other => panic!("abort while paused: {other:?}"),
    }
    assert_eq!(p.state(), State::AbortingTransaction);
    proxy.resume(dir);
    // The same call again; delayed requests and answers now flow.
    p.abort_transaction().await.unwrap();
    assert_eq!(p.state(), State::Ready);
    let after = p.producer_id_and_epoch();
    eprintln!("  {dir:?}: {before:?} -> {after:?} in {:?}", t.elapsed());
    assert!(
        after.producer_id != before.producer_id || after.epoch > before.epoch,
        "the epoch was bumped before the next transaction: {before:?} -> {after:?}"
    );
    if dir == Direction::ServerToClient {
        h.lost_responses.extend(values.iter().cloned());
    }
    h.aborted.extend(values);
}

async fn read(cluster: &Arc<Cluster>, isolation: IsolationLevel) -> Vec<String> {
    let mut r = Reader::new(
        cluster.clone(),
        ReaderConfig {
            isolation,
            ..Default::default()
        },
    );
    let parts: Vec<i32> = (0..PARTITIONS).collect();
    let mut v: Vec<String> = r
        .read_to_end(TOPIC, &parts)
        .await
        .expect("read")
        .iter()
        .map(|r| String::from_utf8_lossy(r.value.as_deref().unwrap_or_default()).into_owned())
        .collect();
    v.sort();
    v
}

/// Reads until `done` holds on the result (markers are written after the
/// commit returns), bounded.
async fn read_until(
    cluster: &Arc<Cluster>,
    isolation: IsolationLevel,
    done: impl Fn(&[String]) -> bool,
) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut backoff = Duration::from_millis(10);
    loop {
        let v = read(cluster, isolation).await;
        if done(&v) || Instant::now() >= deadline {
            return v;
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_millis(200));
    }
}

async fn run(tv: i16) {
    let _serial = SERIAL.lock().await;
    let started = Instant::now();
    let kafka = KafkaCluster::builder()
        .version(KafkaVersion::V4_4)
        .nodes(1)
        .transaction_version(tv)
        .with_proxies(true)
        .start()
        .await
        .expect("start cluster");
    kafka
        .create_topic(TOPIC, PARTITIONS, 1)
        .await
        .expect("create topic");
    let name = format!("4.4 TV{tv}");
    eprintln!("{name}: cluster up in {:?}", started.elapsed());

    let config = ProducerConfig::from_properties([
        ("bootstrap.servers", kafka.bootstrap().as_str()),
        ("transactional.id", "jepsen-tx"),
        ("request.timeout.ms", "1500"),
        ("delivery.timeout.ms", "3000"),
        ("max.block.ms", "5000"),
        ("retry.backoff.ms", "50"),
        ("transaction.timeout.ms", "60000"),
    ])
    .unwrap();
    let p = TransactionalProducer::connect(config).await.unwrap();
    p.init_transactions().await.unwrap();
    let expected = if tv >= 2 {
        TransactionVersion::V2
    } else {
        TransactionVersion::V1
    };
    assert_eq!(p.transaction_version(), expected);

    let mut h = History::default();
    transaction(&p, &mut h, 0, true).await;
    transaction(&p, &mut h, 1, true).await;
    transaction(&p, &mut h, 2, false).await;
    let t = Instant::now();
    fault_round(&kafka, &p, &mut h, 3, Direction::ServerToClient).await;
    eprintln!("{name}: lost-responses round in {:?}", t.elapsed());
    transaction(&p, &mut h, 4, true).await;
    let t = Instant::now();
    fault_round(&kafka, &p, &mut h, 5, Direction::ClientToServer).await;
    eprintln!("{name}: delayed-requests round in {:?}", t.elapsed());
    for (txn, commit) in [(6, true), (7, true), (8, false), (9, true)] {
        transaction(&p, &mut h, txn, commit).await;
    }
    p.close(Duration::from_secs(10)).await.unwrap();
    kafka.proxy(0).clear_faults();

    // The history check.
    let cluster = Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
        .await
        .unwrap();
    let mut committed = h.committed.clone();
    committed.sort();
    let ours = read_until(&cluster, IsolationLevel::ReadCommitted, |v| {
        v.len() >= committed.len()
    })
    .await;
    let aborted_read: Vec<&String> = ours.iter().filter(|v| h.aborted.contains(v)).collect();
    assert!(
        aborted_read.is_empty(),
        "G1a (aborted read): {aborted_read:?}"
    );
    let mut dedup = ours.clone();
    dedup.dedup();
    assert_eq!(dedup.len(), ours.len(), "duplicates: {ours:?}");
    let lost: Vec<&String> = committed.iter().filter(|v| !ours.contains(v)).collect();
    assert!(lost.is_empty(), "lost or torn committed writes: {lost:?}");
    assert_eq!(ours, committed);
    let uncommitted = read(&cluster, IsolationLevel::ReadUncommitted).await;
    for v in &h.lost_responses {
        assert!(
            uncommitted.contains(v),
            "{v}: the broker wrote it (the client only lost the answer)"
        );
    }
    let java = kafka
        .console_consume(
            TOPIC,
            JavaIsolation::ReadCommitted,
            10_000,
            Duration::from_secs(5),
        )
        .await
        .unwrap();
    let mut java: Vec<String> = java
        .iter()
        .map(|r| String::from_utf8_lossy(r.value.as_deref().unwrap_or_default()).into_owned())
        .collect();
    java.sort();
    assert_eq!(java, committed, "Java read_committed");
    eprintln!(
        "{name}: {} committed, {} aborted ({} written with lost answers), {} read_uncommitted; passed in {:?}",
        committed.len(),
        h.aborted.len(),
        h.lost_responses.len(),
        uncommitted.len(),
        started.elapsed()
    );
}
