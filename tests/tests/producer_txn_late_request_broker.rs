//! A transactional request that reaches the broker after its client gave
//! up on it and went on — Jepsen's delayed EndTxn and delayed Produce — on
//! a real broker of each variant (Kafka 4.4 with transaction version 2,
//! 4.4 formatted with version 1, 3.9), through the harness's proxy
//! ([`ProxyHandle::hold_next_request`](kafka_testcontainers::ProxyHandle::hold_next_request):
//! that one request is held on its connection while the client's new
//! connections flow).
//!
//! The scenario: transaction T1 writes three records and commits while one
//! of its requests — the EndTxn, or separately the first Produce — is held
//! past the client's `request.timeout.ms`. The client closes that
//! connection, retries on a new one and commits T1; T2 begins and writes.
//! Then the held request reaches the broker, inside T2. T2 is aborted, T3
//! commits one record.
//!
//! Invariant: read_committed shows T1's three records and T3's one, each
//! once, and nothing of T2; read_uncommitted shows each of T1's records
//! once (the late Produce wrote nothing twice); T2 stays open until the
//! client aborts it (the late EndTxn did not end it).
//!
//! What keeps it so:
//! - **Transaction version 2**: every EndTxn bumps the epoch, so T2 runs
//!   under epoch e+1; the late EndTxn(e) and Produce(e) belong to an
//!   ended epoch and are refused.
//! - **Transaction version 1** (4.4 TV1 and 3.9): the epoch does not change
//!   between transactions. A late Produce is a duplicate of a sequence the
//!   broker holds (refused, never written twice). A late EndTxn(commit, e)
//!   would commit T2 halfway — so after an EndTxn of unknown outcome the
//!   producer bumps the epoch (KIP-360 InitProducerId(pid, e)) before
//!   `commit_transaction` returns: the late request is fenced.

use kafka_client::{Cluster, ClusterConfig, TransactionState};
use kafka_consumer::{IsolationLevel, Reader, ReaderConfig};
use kafka_producer::txn::TransactionError;
use kafka_producer::{ProducerConfig, ProducerRecord, TransactionalProducer};
use kafka_testcontainers::KafkaCluster;
use kafka_testcontainers::{ClusterSlot, SlotGuard};
use kafka_testcontainers::{SharedKafka, unique_name};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

static SLOT: ClusterSlot = ClusterSlot::new();

const PRODUCE: i16 = 0;
const END_TXN: i16 = 26;
/// The client's request timeout; the held request waits [`HOLD`].
const REQUEST_TIMEOUT_MS: u64 = 1_500;
const HOLD: Duration = Duration::from_secs(6);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn late_end_txn_cannot_end_the_next_transaction_kafka_4_4_tv2() {
    late(SharedKafka::Kafka44Tv2, END_TXN).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn late_end_txn_cannot_end_the_next_transaction_kafka_4_4_tv1() {
    late(SharedKafka::Kafka44Tv1, END_TXN).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn late_end_txn_cannot_end_the_next_transaction_kafka_3_9() {
    late(SharedKafka::Kafka39, END_TXN).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn late_produce_writes_nothing_twice_kafka_4_4_tv2() {
    late(SharedKafka::Kafka44Tv2, PRODUCE).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn late_produce_writes_nothing_twice_kafka_4_4_tv1() {
    late(SharedKafka::Kafka44Tv1, PRODUCE).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn late_produce_writes_nothing_twice_kafka_3_9() {
    late(SharedKafka::Kafka39, PRODUCE).await;
}

/// A single-node cluster of the variant behind a fault proxy.
async fn proxied(variant: SharedKafka) -> SlotGuard<'static> {
    SLOT.lock(&format!("{variant} proxied"), || {
        let b = KafkaCluster::builder()
            .version(variant.version())
            .nodes(1)
            .with_proxies(true);
        match variant.transaction_version() {
            Some(tv) => b.transaction_version(tv),
            None => b,
        }
    })
    .await
    .expect("a proxied cluster")
}

async fn send_all(p: &TransactionalProducer, topic: &str, values: &[String]) {
    let sends: Vec<_> = values
        .iter()
        .map(|v| p.send(ProducerRecord::new(topic).partition(0).value(v.clone())))
        .collect();
    for s in sends {
        s.await.expect("a record of an open transaction");
    }
}

/// Calls `commit_transaction` again after a `Timeout` (the documented way).
async fn commit(p: &TransactionalProducer) {
    for _ in 0..5 {
        match p.commit_transaction().await {
            Ok(()) => return,
            Err(TransactionError::Timeout { .. }) => continue,
            Err(e) => panic!("commit: {e}"),
        }
    }
    panic!("commit kept timing out");
}

async fn read(
    cluster: &std::sync::Arc<Cluster>,
    topic: &str,
    isolation: IsolationLevel,
) -> Vec<String> {
    let mut r = Reader::new(
        cluster.clone(),
        ReaderConfig {
            isolation,
            ..Default::default()
        },
    );
    if isolation == IsolationLevel::ReadCommitted {
        r.wait_until_stable(topic, &[0], Duration::from_secs(60))
            .await
            .expect("no open transaction left on the topic");
    }
    r.read_to_end(topic, &[0])
        .await
        .expect("read")
        .into_iter()
        .map(|rec| String::from_utf8(rec.value.unwrap().to_vec()).unwrap())
        .collect()
}

async fn state(cluster: &Cluster, txn_id: &str) -> (TransactionState, i16) {
    let d = kafka_admin::describe_transactions(cluster, &[txn_id])
        .await
        .expect("DescribeTransactions");
    (d[0].snapshot.state.clone(), d[0].snapshot.producer_epoch)
}

async fn late(variant: SharedKafka, api: i16) {
    let what = if api == END_TXN { "EndTxn" } else { "Produce" };
    let kafka = proxied(variant).await;
    let proxy = kafka.proxy(0);
    let topic = unique_name("late");
    kafka.create_topic(&topic, 1, 1).await.unwrap();
    let txn_id = unique_name("late");
    let bootstrap = kafka.bootstrap();
    let config = ProducerConfig::from_properties([
        ("bootstrap.servers", bootstrap.as_str()),
        ("transactional.id", txn_id.as_str()),
        ("request.timeout.ms", &REQUEST_TIMEOUT_MS.to_string()),
        ("delivery.timeout.ms", "60000"),
        ("max.block.ms", "30000"),
        ("linger.ms", "0"),
    ])
    .unwrap();
    let p = TransactionalProducer::connect(config).await.unwrap();
    p.init_transactions().await.unwrap();
    let cluster = Cluster::connect(ClusterConfig::new(&bootstrap))
        .await
        .unwrap();
    let t1: Vec<String> = (0..3).map(|i| format!("t1-{i}")).collect();
    let t2: Vec<String> = (0..3).map(|i| format!("t2-{i}")).collect();

    // T1, with its first Produce or its EndTxn held past the request timeout.
    p.begin_transaction().unwrap();
    let epoch_t1 = p.producer_id_and_epoch().epoch;
    let held_at = Instant::now();
    if api == PRODUCE {
        proxy.hold_next_request(PRODUCE, HOLD);
    }
    send_all(&p, &topic, &t1).await;
    if api == END_TXN {
        proxy.hold_next_request(END_TXN, HOLD);
    }
    commit(&p).await;
    assert_eq!(proxy.requests_held(), 1, "the {what} was held");
    assert_eq!(
        proxy.held_requests_delivered(),
        0,
        "T1 completed while its held {what} was still on its way ({:?}): the test needs a longer hold",
        held_at.elapsed()
    );
    let epoch_t2 = p.producer_id_and_epoch().epoch;
    eprintln!("{variant}: T1 under epoch {epoch_t1} committed; T2 runs under epoch {epoch_t2}");

    // T2 opens; the held request reaches the broker inside it.
    p.begin_transaction().unwrap();
    send_all(&p, &topic, &t2[..2]).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while proxy.held_requests_delivered() == 0 {
        assert!(
            Instant::now() < deadline,
            "the held {what} was never delivered"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    eprintln!(
        "{variant}: the held {what} (epoch {epoch_t1}) reached the broker {:?} after it was sent, inside T2",
        held_at.elapsed()
    );
    // Watch T2 for two seconds: the late request must not end it.
    let watch_until = Instant::now() + Duration::from_secs(2);
    while Instant::now() < watch_until {
        let (s, e) = state(&cluster, &txn_id).await;
        assert_eq!(
            s,
            TransactionState::Ongoing,
            "{variant}: T2 (epoch {epoch_t2}) ended by the late {what}: coordinator at {s:?}, epoch {e}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    send_all(&p, &topic, &t2[2..]).await;
    p.abort_transaction().await.expect("T2 aborts");

    p.begin_transaction().unwrap();
    send_all(&p, &topic, &["t3-0".to_string()]).await;
    commit(&p).await;
    p.close(Duration::from_secs(5)).await.unwrap();

    let committed = read(&cluster, &topic, IsolationLevel::ReadCommitted).await;
    let mut want = t1.clone();
    want.push("t3-0".into());
    assert_eq!(
        committed, want,
        "{variant}: read_committed after a late {what}"
    );
    let all = read(&cluster, &topic, IsolationLevel::ReadUncommitted).await;
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for v in &all {
        *counts.entry(v.as_str()).or_default() += 1;
    }
    for v in &t1 {
        assert_eq!(
            counts.get(v.as_str()),
            Some(&1),
            "{variant}: {v} written {:?} times (read_uncommitted: {all:?})",
            counts.get(v.as_str())
        );
    }
    eprintln!("{variant}: late {what}: read_committed {committed:?}; read_uncommitted {all:?}");
}
