//! The producer against real Kafka 4.4 brokers under faults.
//!
//! Every record's value carries its partition and a per-partition sequence
//! number (`p:seq:padding`), so what is read back (with our read_committed
//! [`Reader`], and once with the Java console consumer) shows order,
//! duplicates and gaps per partition.
//!
//! - One node behind the fault proxy: with idempotence on, resets,
//!   swallowed responses and latency leave every record exactly once and in
//!   order; with idempotence off, nothing is lost (duplicates are possible);
//!   corrupted responses give typed errors or recovery, never a panic, and
//!   sends work afterwards.
//! - Three nodes, a topic with replication factor 3 and min ISR 2,
//!   acks=all: the leader of a partition is killed (SIGKILL) mid-stream;
//!   every acknowledged record is read back, order per partition kept.
//!
//! Faults are injected when requests are in flight (waited for, not slept).
//!
//! The tests keep brokers of their own (the proxy's faults would hit every
//! other test of a shared cluster, and one test kills a node of three),
//! handed from test to test through one `slot::ClusterSlot`: the tests run
//! one at a time (tests beside each other cannot share a proxy: one's
//! faults would hit the other's requests); the proxied broker is started
//! once for the three tests through it, its proxy back to no fault and its
//! connections reset for each; the three-node cluster is another key (the
//! slot holds one cluster at a time: in name order, the proxied tests run
//! first, then the leader kill, two cluster starts in all).

use kafka_client::{Cluster, ClusterConfig};
use kafka_consumer::{ConsumerRecord, IsolationLevel, Reader, ReaderConfig};
use kafka_producer::{ProduceError, Producer, ProducerConfig, ProducerRecord, RecordMetadata};
use kafka_proto::ErrorCode;
use kafka_proto::messages::{CreateTopicsRequest, CreateTopicsRequestCreatableTopic};
use kafka_testcontainers::unique_name;
use kafka_testcontainers::{ClusterSlot, SlotGuard};
use kafka_testcontainers::{
    Direction, IsolationLevel as JavaIsolation, KafkaCluster, KafkaVersion, ProxyHandle,
};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

const PARTITIONS: i32 = 3;

type Outcome = (i32, u64, Result<RecordMetadata, ProduceError>);

/// Record `i` of a stream: partition `i % 3`, sequence `i / 3` in it.
fn record(topic: &str, i: u64) -> ProducerRecord {
    let p = (i % PARTITIONS as u64) as i32;
    let seq = i / PARTITIONS as u64;
    ProducerRecord::new(topic)
        .partition(p)
        .value(format!("{p}:{seq:08}:{}", "x".repeat(40)))
}

fn seq_of(value: &[u8]) -> u64 {
    let s = std::str::from_utf8(value).expect("utf-8");
    s.split(':')
        .nth(1)
        .and_then(|n| n.parse().ok())
        .expect("p:seq:pad")
}

/// Creates a topic with a CreateTopics request (no JVM) and waits until
/// every running node knows its leaders.
async fn create_topic(kafka: &KafkaCluster, name: &str, rf: i16) {
    let addrs: Vec<String> = kafka
        .direct_broker_addrs()
        .iter()
        .map(|a| a.to_string())
        .collect();
    let cluster = Cluster::connect(ClusterConfig::new(&addrs.join(",")))
        .await
        .expect("connect");
    let conn = cluster.any_connection().await.expect("a connection");
    let req = CreateTopicsRequest {
        topics: vec![CreateTopicsRequestCreatableTopic {
            name: name.into(),
            num_partitions: PARTITIONS,
            replication_factor: rf,
            ..Default::default()
        }],
        timeout_ms: 30_000,
        ..Default::default()
    };
    let resp = conn.send_negotiated(&req).await.expect("CreateTopics");
    let code = ErrorCode::from(resp.topics[0].error_code);
    assert!(code.is_ok(), "CreateTopics {name}: {code:?}");
    cluster.close();
    kafka
        .wait_for_topic(name, PARTITIONS, Duration::from_secs(60))
        .await
        .expect("topic ready");
}

/// Waits (bounded) until `cond` holds.
async fn wait_for(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while !cond() {
        if Instant::now() >= deadline {
            eprintln!("note: {what} not seen within {limit:?}");
            return false;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    true
}

/// The faults of window `w` (some windows run clean).
fn inject(proxy: &ProxyHandle, w: usize) -> &'static str {
    match w % 5 {
        0 => {
            proxy.reset_connections();
            "reset"
        }
        1 => {
            proxy.drop_nth_response(1);
            "drop 1st response"
        }
        2 => {
            proxy.set_latency(Direction::ServerToClient, Duration::from_millis(30));
            proxy.set_latency(Direction::ClientToServer, Duration::from_millis(10));
            "latency"
        }
        3 => {
            proxy.drop_nth_response(3);
            proxy.reset_connections();
            "reset + drop 3rd response"
        }
        _ => "none",
    }
}

/// Sends records `0..n` in windows of `window`, calling `between(w)` once
/// requests of window `w` are in flight, and awaits every send.
async fn stream(
    producer: &Producer,
    topic: &str,
    n: u64,
    window: u64,
    mut between: impl FnMut(usize) -> String,
) -> Vec<Outcome> {
    let mut out = Vec::with_capacity(n as usize);
    let mut faults = Vec::new();
    for (w, start) in (0..n).step_by(window as usize).enumerate() {
        let pending: Vec<_> = (start..(start + window).min(n))
            .map(|i| {
                let p = (i % PARTITIONS as u64) as i32;
                (p, i / PARTITIONS as u64, producer.send(record(topic, i)))
            })
            .collect();
        wait_for("a request in flight", Duration::from_secs(2), || {
            producer.metrics().in_flight_requests > 0
        })
        .await;
        faults.push(between(w));
        for (p, seq, f) in pending {
            out.push((p, seq, f.await));
        }
    }
    eprintln!("{topic}: faults per window: {faults:?}");
    out
}

async fn reader(bootstrap: &str) -> Reader {
    let cluster = Cluster::connect(ClusterConfig::new(bootstrap))
        .await
        .expect("connect reader");
    Reader::new(
        cluster,
        ReaderConfig {
            isolation: IsolationLevel::ReadCommitted,
            ..Default::default()
        },
    )
}

/// Our read_committed reader: every record of the topic.
async fn read_back(bootstrap: &str, topic: &str) -> Vec<ConsumerRecord> {
    let mut r = reader(bootstrap).await;
    let parts: Vec<i32> = (0..PARTITIONS).collect();
    r.read_to_end(topic, &parts).await.expect("read_to_end")
}

/// Sequences per partition in offset order.
fn sequences(records: &[ConsumerRecord]) -> BTreeMap<i32, Vec<(i64, u64)>> {
    let mut by: BTreeMap<i32, Vec<(i64, u64)>> = BTreeMap::new();
    for r in records {
        let v = r.value.as_deref().expect("value");
        let p: i32 = std::str::from_utf8(&v[..1]).unwrap().parse().unwrap();
        assert_eq!(p, r.partition, "record in the wrong partition");
        by.entry(r.partition)
            .or_default()
            .push((r.offset, seq_of(v)));
    }
    for v in by.values_mut() {
        v.sort_unstable();
    }
    by
}

/// Per partition: exactly `0..count` in offset order; every acknowledged
/// offset holds its record.
fn assert_exact(topic: &str, outcomes: &[Outcome], records: &[ConsumerRecord]) {
    let mut count: BTreeMap<i32, u64> = BTreeMap::new();
    for (p, _, r) in outcomes {
        if let Err(e) = r {
            panic!("{topic}: a send failed: {e}");
        }
        *count.entry(*p).or_default() += 1;
    }
    let by = sequences(records);
    for (p, n) in &count {
        let got: Vec<u64> = by
            .get(p)
            .map(|v| v.iter().map(|(_, s)| *s).collect())
            .unwrap_or_default();
        let want: Vec<u64> = (0..*n).collect();
        if got != want {
            let dupes = got.len() - got.iter().collect::<BTreeSet<_>>().len();
            panic!(
                "{topic}-{p}: {} records read, {dupes} duplicates, first difference at {:?}",
                got.len(),
                got.iter().zip(&want).position(|(a, b)| a != b)
            );
        }
    }
    let at: BTreeMap<(i32, i64), u64> = by
        .iter()
        .flat_map(|(p, v)| v.iter().map(move |(o, s)| ((*p, *o), *s)))
        .collect();
    for (p, seq, r) in outcomes {
        if let Some(o) = r.as_ref().unwrap().offset {
            assert_eq!(at.get(&(*p, o)), Some(seq), "{topic}-{p}: offset {o}");
        }
    }
}

fn fault_config(kafka: &KafkaCluster) -> kafka_producer::ProducerConfigBuilder {
    ProducerConfig::builder(&kafka.bootstrap())
        .linger(Duration::from_millis(5))
        .batch_size(16 * 1024)
        .retry_backoff(Duration::from_millis(20))
        // Swallowed responses cost one request timeout each.
        .request_timeout(Duration::from_millis(1500))
}

/// The tests' brokers, one cluster at a time, handed from test to test.
static SLOT: ClusterSlot = ClusterSlot::new();

/// One Kafka 4.4 node behind the fault proxy: the last proxied test's, its
/// proxy back to no fault and its connections reset, else a new one.
async fn proxied_broker() -> SlotGuard<'static> {
    let t0 = Instant::now();
    let kafka = SLOT
        .lock("Kafka 4.4, one node behind a proxy", || {
            KafkaCluster::builder()
                .version(KafkaVersion::V4_4)
                .nodes(1)
                .with_proxies(true)
        })
        .await
        .expect("start Kafka");
    eprintln!(
        "proxied broker ready after {:?} (handed on: {})",
        t0.elapsed(),
        kafka.reused()
    );
    kafka
}

/// Invariant: with idempotence on, a stream of records while the proxy
/// resets connections, swallows responses and adds latency: every send
/// resolves Ok (and the faults caused retries), each partition holds
/// exactly the records sent to it in order, no duplicate, no gap, every
/// acknowledged offset holds its record, and the Java console consumer
/// reads the same records at the same offsets.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxy_faults_idempotent_exactly_once_in_order() {
    let kafka = proxied_broker().await;
    let proxy = kafka.proxy(0).clone();
    const N: u64 = 20_000;
    let t = Instant::now();
    let topic = unique_name("faults-idempotent");
    create_topic(&kafka, &topic, 1).await;
    let producer = Producer::connect(fault_config(&kafka).build().unwrap())
        .await
        .unwrap();
    let outcomes = stream(&producer, &topic, N, 1000, |w| {
        inject(&proxy, w).to_string()
    })
    .await;
    proxy.clear_faults();
    let m = producer.metrics();
    producer.close(Duration::from_secs(10)).await.unwrap();
    eprintln!("idempotent: {N} records in {:?}; {m:?}", t.elapsed());
    assert!(m.retries > 0, "the faults caused retries: {m:?}");
    let ours = read_back(&kafka.bootstrap(), &topic).await;
    assert_eq!(ours.len() as u64, N);
    assert_exact(&topic, &outcomes, &ours);
    // The Java console consumer reads the same records at the same offsets.
    let java = kafka
        .console_consume(
            &topic,
            JavaIsolation::ReadCommitted,
            N as usize,
            Duration::from_secs(20),
        )
        .await
        .expect("console consumer");
    let ours_set: BTreeSet<(i32, i64, Vec<u8>)> = ours
        .iter()
        .map(|r| (r.partition, r.offset, r.value.as_deref().unwrap().to_vec()))
        .collect();
    let java_set: BTreeSet<(i32, i64, Vec<u8>)> = java
        .iter()
        .map(|r| (r.partition, r.offset, r.value.clone().unwrap()))
        .collect();
    assert_eq!(ours_set, java_set, "our reader and the Java consumer agree");
    eprintln!(
        "idempotent: checked (incl. Java consumer) after {:?}",
        t.elapsed()
    );
}

/// Invariant: with idempotence off and retries on, under the same faults
/// (resets, swallowed responses, latency), every send resolves Ok and no
/// record is lost; duplicates and reordering are possible without
/// idempotence (a written batch's response lost, the batch retried): the
/// test prints how many.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxy_faults_without_idempotence_lose_nothing() {
    let kafka = proxied_broker().await;
    let proxy = kafka.proxy(0).clone();
    const NB: u64 = 6_000;
    let t = Instant::now();
    let topic = unique_name("faults-plain");
    create_topic(&kafka, &topic, 1).await;
    let config = fault_config(&kafka)
        .enable_idempotence(false)
        .build()
        .unwrap();
    assert!(!config.idempotence());
    let producer = Producer::connect(config).await.unwrap();
    let outcomes = stream(&producer, &topic, NB, 500, |w| {
        inject(&proxy, w).to_string()
    })
    .await;
    proxy.clear_faults();
    producer.close(Duration::from_secs(10)).await.unwrap();
    let failed = outcomes.iter().filter(|o| o.2.is_err()).count();
    assert_eq!(failed, 0, "retries outlast the faults");
    let by = sequences(&read_back(&kafka.bootstrap(), &topic).await);
    let (mut duplicates, mut reordered) = (0, 0);
    for p in 0..PARTITIONS {
        let seqs: Vec<u64> = by[&p].iter().map(|(_, s)| *s).collect();
        let distinct: BTreeSet<u64> = seqs.iter().copied().collect();
        let sent = outcomes.iter().filter(|o| o.0 == p).count() as u64;
        assert_eq!(
            distinct,
            (0..sent).collect::<BTreeSet<_>>(),
            "{topic}-{p}: a record was lost"
        );
        duplicates += seqs.len() - distinct.len();
        reordered += seqs.windows(2).filter(|w| w[1] < w[0]).count();
    }
    eprintln!(
        "without idempotence: no record lost; {duplicates} duplicate(s) and \
         {reordered} out-of-order step(s) — duplicates are possible without \
         idempotence when a written batch's response is lost and the batch is retried \
         ({:?})",
        t.elapsed()
    );
}

/// Invariant: corrupted responses (1 to 5000 bytes XORed) give typed,
/// non-fatal errors or recovery, never a panic or a hung send; the
/// connection is closed (a NETWORK_EXCEPTION counted); sends work
/// afterwards; what is read back keeps each partition's order without
/// duplicates (exactly the records sent when no error surfaced).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxy_corrupt_responses_typed_errors_then_sends_work() {
    let kafka = proxied_broker().await;
    let proxy = kafka.proxy(0).clone();
    let t = Instant::now();
    let topic = unique_name("faults-corrupt");
    create_topic(&kafka, &topic, 1).await;
    let producer = Producer::connect(fault_config(&kafka).build().unwrap())
        .await
        .unwrap();
    let mut outcomes = stream(&producer, &topic, 300, 300, |_| String::new()).await;
    let mut next = 300;
    for bytes in [1u64, 4, 12, 200, 5000] {
        let pending: Vec<_> = (next..next + 300)
            .map(|i| {
                let p = (i % PARTITIONS as u64) as i32;
                (p, i / PARTITIONS as u64, producer.send(record(&topic, i)))
            })
            .collect();
        next += 300;
        proxy.corrupt_next(Direction::ServerToClient, bytes);
        for (p, seq, f) in pending {
            let r = tokio::time::timeout(Duration::from_secs(60), f)
                .await
                .expect("a corrupted response must not hang a send");
            if let Err(e) = &r {
                // Typed, and not a fatal producer error.
                assert!(!matches!(e, ProduceError::Fatal(_)), "{e}");
            }
            outcomes.push((p, seq, r));
        }
        proxy.clear_faults();
    }
    let errors: BTreeMap<String, usize> =
        outcomes
            .iter()
            .filter_map(|o| o.2.as_ref().err())
            .fold(BTreeMap::new(), |mut m, e| {
                *m.entry(e.to_string()).or_default() += 1;
                m
            });
    let m = producer.metrics();
    eprintln!("corrupt responses: errors surfaced {errors:?}; {m:?}");
    assert!(
        m.errors_by_code
            .contains_key(&ErrorCode::NetworkException.code()),
        "a corrupted response closes the connection: {m:?}"
    );
    // The producer still works.
    let after: Vec<_> = (next..next + 300)
        .map(|i| {
            let p = (i % PARTITIONS as u64) as i32;
            (p, i / PARTITIONS as u64, producer.send(record(&topic, i)))
        })
        .collect();
    for (p, seq, f) in after {
        let r = f.await;
        assert!(r.is_ok(), "sends work after corrupted responses: {r:?}");
        outcomes.push((p, seq, r));
    }
    producer.close(Duration::from_secs(10)).await.unwrap();
    let ours = read_back(&kafka.bootstrap(), &topic).await;
    if errors.is_empty() {
        assert_exact(&topic, &outcomes, &ours);
    } else {
        for (p, v) in sequences(&ours) {
            assert!(
                v.windows(2).all(|w| w[0].1 < w[1].1),
                "{topic}-{p}: order kept, no duplicates"
            );
        }
    }
    eprintln!("corrupt responses: done after {:?}", t.elapsed());
}

/// Invariant: three nodes, a topic with replication factor 3 and min ISR
/// 2, an idempotent producer with acks=all: when the leader of a partition
/// is killed (SIGKILL) mid-stream, leadership moves, every send still
/// resolves Ok (retries outlast the failover), and every acknowledged
/// record is read back, each partition in order without duplicates.
///
/// Its cluster goes through the slot too (another key): it runs after the
/// proxied tests, never beside them, and leaves a killed node, so nothing
/// reuses it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_nodes_leader_killed_mid_stream_loses_nothing_acknowledged() {
    let t0 = Instant::now();
    let kafka = SLOT
        .lock("Kafka 4.4, three nodes, 2 s broker session", || {
            KafkaCluster::builder()
                .version(KafkaVersion::V4_4)
                .nodes(3)
                // Fence a dead broker (and shrink ISRs) after 2 s instead of 9 s.
                .broker_config("broker.session.timeout.ms", "2000")
                .broker_config("broker.heartbeat.interval.ms", "500")
        })
        .await
        .expect("start 3 Kafka nodes");
    eprintln!("3 nodes up after {:?}", t0.elapsed());
    let topic = unique_name("leader-kill");
    let topic = topic.as_str();
    create_topic(&kafka, topic, 3).await;
    let config = ProducerConfig::builder(&kafka.bootstrap())
        .linger(Duration::from_millis(5))
        .request_timeout(Duration::from_secs(5))
        .retry_backoff(Duration::from_millis(50))
        .build()
        .unwrap();
    assert!(config.idempotence());
    let producer = Producer::connect(config).await.unwrap();
    let mut killed = None;
    let outcomes = stream(&producer, topic, 9_000, 500, |w| {
        if w == 4 {
            let leader = producer
                .cluster()
                .metadata()
                .leader(topic, 0)
                .expect("a leader");
            let node = (leader - 1) as usize;
            kafka.kill(node).unwrap();
            killed = Some(leader);
            format!("killed node {leader} (leader of {topic}-0)")
        } else {
            String::new()
        }
    })
    .await;
    let m = producer.metrics();
    producer.close(Duration::from_secs(10)).await.unwrap();
    let killed = killed.expect("a leader was killed");
    let acked: Vec<&Outcome> = outcomes.iter().filter(|o| o.2.is_ok()).collect();
    let failed: Vec<String> = outcomes
        .iter()
        .filter_map(|o| o.2.as_ref().err().map(|e| e.to_string()))
        .collect();
    eprintln!(
        "killed node {killed}; {} acknowledged, {} failed {:?}; {m:?}",
        acked.len(),
        failed.len(),
        failed.iter().collect::<BTreeSet<_>>()
    );
    assert_ne!(
        producer.cluster().metadata().leader(topic, 0),
        Some(killed),
        "leadership moved"
    );
    let by = sequences(&read_back(&kafka.bootstrap(), topic).await);
    for p in 0..PARTITIONS {
        let seqs: Vec<u64> = by
            .get(&p)
            .map(|v| v.iter().map(|(_, s)| *s).collect())
            .unwrap_or_default();
        assert!(
            seqs.windows(2).all(|w| w[0] < w[1]),
            "{topic}-{p}: order kept, no duplicates"
        );
        let read: BTreeSet<u64> = seqs.into_iter().collect();
        for (_, seq, _) in acked.iter().filter(|o| o.0 == p) {
            assert!(read.contains(seq), "{topic}-{p}: acknowledged {seq} lost");
        }
    }
    assert!(failed.is_empty(), "idempotent retries outlast the failover");
    eprintln!("leader kill checked after {:?}", t0.elapsed());
}
