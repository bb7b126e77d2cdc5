//! Flink's `FlinkKafkaProducerITCase` scenarios and the sink options
//! against a real broker (the harness's shared Kafka 4.4 cluster; every test
//! uses topics and transactional id prefixes of its own), one test each.
//!
//! Options: fixed / key-hash / custom partitioner, write timestamp, keyed
//! schema with per-record topic, log failures only (NONE), metrics off.
//!
//! Scenarios:
//! 1. fail before notify and resume work: the old instance is still alive,
//!    a restore commits its checkpoint, aborts the later transactions and
//!    fences it; read_committed readers are not blocked (LSO = HW);
//! 2. fail and recover the same checkpoint twice: no duplicate;
//! 3. scale down 5 → 1 before the first checkpoint: lingering transactions
//!    of the 5 subtasks are aborted;
//! 4. scale up after scaling down (4 → 2 → 3 → 1): no transactional id
//!    overlap (id sets), every value exactly once;
//! 5. run out of producers in the pool, then restore the checkpoint taken
//!    before the pool ran out;
//! 6. migrate AT_LEAST_ONCE → EXACTLY_ONCE, and EXACTLY_ONCE →
//!    AT_LEAST_ONCE, across a restore;
//! 7. default transactional id prefix; custom prefix changed on restore;
//! 8. transaction timeout above the broker maximum: clear error at start.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use kafka_admin::{self as admin, TransactionFilters};
use kafka_client::Cluster;
use kafka_consumer::{ConsumerRecord, IsolationLevel, Reader, ReaderConfig};
use kafka_producer::ProducerConfig;
use kafka_producer::partitioner::{Partitioner, partition_for_key};
use kafka_sink::kafka::{
    KEY_DISABLE_METRICS, KafkaSink, KafkaSinkConfig, KafkaSinkError, KafkaSinkRecord, Keyed,
    KeyedSerializationSchema, Semantic, SimpleStringSchema, SinkPartitioner, ValueOnly,
};
use kafka_sink::{Checkpoint, OperatorSnapshot};
use kafka_sink::{CheckpointedOperator, OperatorInfo, RecordContext, RestoredState};
use kafka_testcontainers::KafkaCluster;
use kafka_testcontainers::{SharedKafka, recent_timestamp, unique_name, unique_topic};

use crate::support;

/// The shared Kafka 4.4 cluster and a client of it.
async fn kafka() -> (&'static KafkaCluster, Arc<Cluster>) {
    support::shared::client(SharedKafka::Kafka44Tv2).await
}

/// A topic of this test's own (named after `name`) with `partitions`.
async fn topic(kafka: &KafkaCluster, name: &str, partitions: i32) -> String {
    unique_topic(kafka, name, partitions)
        .await
        .expect("create topic")
}

fn producer_props(kafka: &KafkaCluster) -> ProducerConfig {
    ProducerConfig::from_properties([
        ("bootstrap.servers", kafka.bootstrap().as_str()),
        ("max.block.ms", "30000"),
        ("linger.ms", "5"),
    ])
    .unwrap()
}

fn config(kafka: &KafkaCluster, topic: &str, prefix: &str, semantic: Semantic) -> KafkaSinkConfig {
    let mut c = KafkaSinkConfig::new(producer_props(kafka), topic);
    c.semantic = semantic;
    c.transactional_id_prefix = Some(prefix.into());
    c.transaction_timeout = Duration::from_secs(120);
    c.recovery_timeout = Duration::from_secs(30);
    c
}

fn subtask(mut c: KafkaSinkConfig, index: u32, parallelism: u32) -> KafkaSinkConfig {
    c.subtask_index = index;
    c.parallelism = parallelism;
    c
}

async fn connect(c: KafkaSinkConfig) -> KafkaSink<String> {
    KafkaSink::connect(c, ValueOnly(SimpleStringSchema))
        .await
        .expect("connect sink")
}

async fn write(s: &mut KafkaSink<String>, v: impl ToString) {
    s.invoke(v.to_string(), &RecordContext::default())
        .await
        .unwrap();
}

fn restored(id: u64, bytes: &[u8]) -> RestoredState {
    RestoredState {
        checkpoint_id: id,
        own: vec![bytes.to_vec()],
        union: vec![bytes.to_vec()],
        previous_parallelism: Some(1),
    }
}

async fn read(
    cluster: &Arc<Cluster>,
    topic: &str,
    partitions: &[i32],
    isolation: IsolationLevel,
) -> Vec<ConsumerRecord> {
    let mut r = Reader::new(
        cluster.clone(),
        ReaderConfig {
            isolation,
            ..Default::default()
        },
    );
    r.read_to_end(topic, partitions).await.expect("read")
}

fn values(records: &[ConsumerRecord]) -> Vec<String> {
    records
        .iter()
        .map(|r| String::from_utf8_lossy(r.value.as_deref().unwrap_or_default()).into_owned())
        .collect()
}

/// The committed records of `partitions`, waiting (bounded) until there
/// are `n` (commit markers are written after EndTxn returns).
async fn committed_n(
    cluster: &Arc<Cluster>,
    topic: &str,
    partitions: &[i32],
    n: usize,
) -> Vec<ConsumerRecord> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let v = read(cluster, topic, partitions, IsolationLevel::ReadCommitted).await;
        if v.len() >= n || Instant::now() >= deadline {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The committed values of partition 0, waiting (bounded) for `expected`:
/// commit markers are written asynchronously after EndTxn returns.
async fn committed_eventually(
    cluster: &Arc<Cluster>,
    topic: &str,
    expected: &[&str],
) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let v = values(&read(cluster, topic, &[0], IsolationLevel::ReadCommitted).await);
        if v == expected || Instant::now() >= deadline {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// read_committed readers are not blocked: the last stable offset reaches
/// the high watermark (no open transaction on the partitions).
async fn lso_reaches_hw(cluster: &Arc<Cluster>, topic: &str, partitions: &[i32]) {
    Reader::new(cluster.clone(), ReaderConfig::default())
        .wait_until_stable(topic, partitions, Duration::from_secs(30))
        .await
        .unwrap_or_else(|e| panic!("{topic}: LSO stuck below HW: {e}"));
}

/// Open transactions of `prefix-` the broker lists (the listing holds every
/// test's transactions: only this prefix's are kept).
async fn ongoing(cluster: &Cluster, prefix: &str) -> Vec<String> {
    let filters = TransactionFilters::states(&["Ongoing", "PrepareCommit", "PrepareAbort"]);
    admin::list_transactions(cluster, &filters)
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.transactional_id)
        .filter(|id| id.starts_with(&format!("{prefix}-")))
        .collect()
}

/// Waits until the broker lists no open transaction of `prefix-`, and
/// fails with the ones still open after 30 s. The partitions' markers are
/// written before the transaction coordinator records the transaction
/// complete, so a read_committed reader can see the outcome while the
/// listing still shows PrepareCommit or PrepareAbort for a moment.
async fn no_open_transactions_eventually(cluster: &Cluster, prefix: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let open = ongoing(cluster, prefix).await;
        if open.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "transactions of {prefix}- still open after 30 s: {open:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[derive(Debug)]
struct AlwaysLast;

impl Partitioner for AlwaysLast {
    fn partition(&self, _: &str, _: Option<&[u8]>, _: Option<&[u8]>, n: i32) -> i32 {
        n - 1
    }
}

/// Keyed records; values starting with "big" go to the topic it names.
struct Routed(String);

impl KeyedSerializationSchema<String> for Routed {
    fn serialize_key(&self, v: &String) -> Option<Bytes> {
        Some(Bytes::from(format!("key-{v}")))
    }
    fn serialize_value(&self, v: &String) -> Bytes {
        Bytes::from(v.clone())
    }
    fn target_topic(&self, v: &String) -> Option<String> {
        v.starts_with("big").then(|| self.0.clone())
    }
}

// --- Options -----------------------------------------------------------

/// Invariant: with the fixed partitioner (explicit), subtask 1 of 2 writes
/// every record to partition 1 of 3.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixed_partitioner_writes_a_subtask_to_its_partition() {
    let (kafka, cluster) = kafka().await;
    let topic = topic(kafka, "fixed", 3).await;
    let mut c = subtask(
        config(kafka, &topic, &unique_name("fixed"), Semantic::ExactlyOnce),
        1,
        2,
    );
    c.set_partitioner(SinkPartitioner::Fixed);
    let mut s = connect(c).await;
    s.initialize_state(None).await.unwrap();
    for i in 0..6 {
        write(&mut s, i).await;
    }
    s.snapshot_state(1).await.unwrap();
    s.notify_checkpoint_complete(1).await.unwrap();
    s.close().await.unwrap();
    let recs = committed_n(&cluster, &topic, &[0, 1, 2], 6).await;
    assert_eq!(recs.len(), 6);
    assert!(recs.iter().all(|r| r.partition == 1), "{recs:?}");
}

/// Invariant: with no sink partitioner (the default), a record goes to the
/// partition the Java client's murmur2 hash of its key picks, spreading
/// the keys over more than one partition.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_partitioner_hashes_keys_like_java() {
    let (kafka, cluster) = kafka().await;
    let topic = topic(kafka, "keyhash", 3).await;
    let c = config(
        kafka,
        &topic,
        &unique_name("keyhash"),
        Semantic::AtLeastOnce,
    );
    assert!(matches!(c.partitioner, SinkPartitioner::None));
    let mut s = KafkaSink::connect(c, |v: &String| KafkaSinkRecord::keyed(v.clone(), v.clone()))
        .await
        .unwrap();
    s.initialize_state(None).await.unwrap();
    for i in 0..12 {
        write(&mut s, format!("k{i}")).await;
    }
    s.snapshot_state(1).await.unwrap();
    s.close().await.unwrap();
    let recs = read(&cluster, &topic, &[0, 1, 2], IsolationLevel::ReadCommitted).await;
    assert_eq!(recs.len(), 12);
    for r in &recs {
        assert_eq!(r.partition, partition_for_key(r.key.as_deref().unwrap(), 3));
    }
    let used: BTreeSet<i32> = recs.iter().map(|r| r.partition).collect();
    assert!(used.len() > 1, "key hash spread: {used:?}");
}

/// Invariant: a custom partitioner picks every record's partition.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_partitioner_picks_the_partition() {
    let (kafka, cluster) = kafka().await;
    let topic = topic(kafka, "custom", 3).await;
    let mut c = config(kafka, &topic, &unique_name("custom"), Semantic::AtLeastOnce);
    c.set_partitioner(SinkPartitioner::Custom(Arc::new(AlwaysLast)));
    let mut s = connect(c).await;
    s.initialize_state(None).await.unwrap();
    for i in 0..4 {
        write(&mut s, i).await;
    }
    s.snapshot_state(1).await.unwrap();
    s.close().await.unwrap();
    let recs = read(&cluster, &topic, &[0, 1, 2], IsolationLevel::ReadCommitted).await;
    assert_eq!(recs.len(), 4);
    assert!(recs.iter().all(|r| r.partition == 2));
}

/// Invariant: with `write_timestamp_to_kafka` on, a record carries the
/// source's timestamp; off, the producer's create time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_timestamp_to_kafka_on_and_off() {
    let (kafka, cluster) = kafka().await;
    let topic = topic(kafka, "ts", 1).await;
    let prefix = unique_name("ts");
    let ts = recent_timestamp();
    for on in [true, false] {
        let mut c = config(kafka, &topic, &prefix, Semantic::AtLeastOnce);
        c.set_write_timestamp_to_kafka(on);
        let mut s = connect(c).await;
        s.initialize_state(None).await.unwrap();
        s.invoke(format!("{on}"), &RecordContext::with_timestamp(ts))
            .await
            .unwrap();
        s.snapshot_state(1).await.unwrap();
        s.close().await.unwrap();
    }
    Reader::new(cluster.clone(), ReaderConfig::default())
        .wait_until_stable(&topic, &[0], Duration::from_secs(60))
        .await
        .expect("the closed sink's transactions end");
    let recs = read(&cluster, &topic, &[0], IsolationLevel::ReadCommitted).await;
    assert_eq!(values(&recs), ["true", "false"]);
    assert_eq!(recs[0].timestamp, ts);
    assert!(recs[1].timestamp > ts, "create time: {}", recs[1].timestamp);
}

/// Invariant: a keyed schema with a target topic per record writes both
/// topics in one transaction, each record with its key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyed_schema_routes_records_to_their_topic() {
    let (kafka, cluster) = kafka().await;
    let keyed = topic(kafka, "keyed", 1).await;
    let routed_topic = topic(kafka, "routed", 1).await;
    let mut s = KafkaSink::connect(
        config(kafka, &keyed, &unique_name("keyed"), Semantic::ExactlyOnce),
        Keyed(Routed(routed_topic.clone())),
    )
    .await
    .unwrap();
    s.initialize_state(None).await.unwrap();
    for v in ["a", "big-b", "c", "big-d"] {
        write(&mut s, v).await;
    }
    s.snapshot_state(1).await.unwrap();
    s.notify_checkpoint_complete(1).await.unwrap();
    s.close().await.unwrap();
    assert_eq!(
        committed_eventually(&cluster, &keyed, &["a", "c"]).await,
        ["a", "c"]
    );
    let routed = committed_n(&cluster, &routed_topic, &[0], 2).await;
    assert_eq!(values(&routed), ["big-b", "big-d"]);
    assert_eq!(routed[0].key.as_deref(), Some(&b"key-big-b"[..]));
}

/// Invariant: `log_failures_only` is refused under EXACTLY_ONCE at
/// connect; under NONE a failed send is logged and counted and the
/// checkpoint succeeds, and without it the checkpoint fails; the records
/// that were sent are written either way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_failures_only_refused_in_exactly_once_and_logs_under_none() {
    let (kafka, cluster) = kafka().await;
    let topic = topic(kafka, "logfail", 1).await;
    let prefix = unique_name("logfail");
    let mut c = config(kafka, &topic, &prefix, Semantic::ExactlyOnce);
    c.log_failures_only = true;
    let err = KafkaSink::<String>::connect(c, ValueOnly(SimpleStringSchema))
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("only allowed with Semantic::None"),
        "{err}"
    );
    let too_big = "x".repeat(2 * 1024 * 1024);
    for log_only in [true, false] {
        let mut c = config(kafka, &topic, &prefix, Semantic::None);
        c.set_log_failures_only(log_only).unwrap();
        let mut s = connect(c).await;
        s.initialize_state(None).await.unwrap();
        write(&mut s, format!("ok-{log_only}")).await;
        write(&mut s, &too_big).await;
        let r = s.snapshot_state(1).await;
        if log_only {
            r.unwrap();
            assert_eq!(s.logged_failures(), 1);
        } else {
            let e = r.unwrap_err().to_string();
            assert!(!e.is_empty());
            assert_eq!(s.logged_failures(), 0);
        }
        let _ = s.close().await;
    }
    Reader::new(cluster.clone(), ReaderConfig::default())
        .wait_until_stable(&topic, &[0], Duration::from_secs(60))
        .await
        .expect("the closed sink's transactions end");
    let v = values(&read(&cluster, &topic, &[0], IsolationLevel::ReadCommitted).await);
    assert_eq!(v, ["ok-true", "ok-false"]);
}

/// Invariant: the producers' metrics are on by default and off with
/// `flink.disable-metrics=true` or the typed option (`records_sent` reads
/// 0 then).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_off_by_property_or_option() {
    let (kafka, _cluster) = kafka().await;
    let topic = topic(kafka, "metrics", 1).await;
    let prefix = unique_name("metrics");
    let mut sent = Vec::new();
    for disable in [None, Some("true"), Some("false")] {
        let bootstrap = kafka.bootstrap();
        let mut props = vec![("bootstrap.servers", bootstrap.as_str())];
        if let Some(d) = disable {
            props.push((KEY_DISABLE_METRICS, d));
        }
        let mut c = KafkaSinkConfig::from_properties(props, &topic).unwrap();
        c.semantic = Semantic::ExactlyOnce;
        c.transactional_id_prefix = Some(prefix.clone());
        c.transaction_timeout = Duration::from_secs(120);
        let mut s = connect(c).await;
        s.initialize_state(None).await.unwrap();
        write(&mut s, "m").await;
        s.snapshot_state(1).await.unwrap();
        s.notify_checkpoint_complete(1).await.unwrap();
        let m = s.producer_metrics();
        assert!(!m.is_empty());
        sent.push(m.iter().map(|(_, m)| m.records_sent).sum::<u64>());
        s.close().await.unwrap();
    }
    let mut c = config(
        kafka,
        &topic,
        &unique_name("metrics-alo"),
        Semantic::AtLeastOnce,
    );
    c.set_disable_metrics(true);
    let mut s = connect(c).await;
    s.initialize_state(None).await.unwrap();
    write(&mut s, "m").await;
    s.snapshot_state(1).await.unwrap();
    sent.push(s.producer_metrics()[0].1.records_sent);
    s.close().await.unwrap();
    assert_eq!(sent, [1, 0, 1, 0], "records_sent per run");
}

// --- Scenarios ---------------------------------------------------------

/// Scenario 1, invariant: a restore from checkpoint 1 while the old
/// instance is still alive commits what checkpoint 1 pre-committed, aborts
/// the old instance's later transactions (44, 45: the LSO reaches the HW,
/// no transaction of the prefix stays open) and fences the old instance.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fail_before_notify_and_resume_work() {
    let (kafka, cluster) = kafka().await;
    let topic = topic(kafka, "resume", 1).await;
    let prefix = unique_name("resume");
    let mut old = connect(config(kafka, &topic, &prefix, Semantic::ExactlyOnce)).await;
    old.initialize_state(None).await.unwrap();
    write(&mut old, 42).await;
    old.snapshot_state(0).await.unwrap();
    old.notify_checkpoint_complete(0).await.unwrap();
    write(&mut old, 43).await;
    let cp1 = old.snapshot_state(1).await.unwrap();
    write(&mut old, 44).await;
    old.snapshot_state(2).await.unwrap();
    write(&mut old, 45).await;
    // `old` is not dead: its transactions of 44 and 45 stay open (the LSO
    // is stuck) until the restore aborts them.
    let mut new = connect(config(kafka, &topic, &prefix, Semantic::ExactlyOnce)).await;
    new.initialize_state(Some(restored(1, &cp1))).await.unwrap();
    write(&mut new, 46).await;
    new.snapshot_state(3).await.unwrap();
    new.notify_checkpoint_complete(3).await.unwrap();
    assert_eq!(
        committed_eventually(&cluster, &topic, &["42", "43", "46"]).await,
        ["42", "43", "46"]
    );
    lso_reaches_hw(&cluster, &topic, &[0]).await;
    no_open_transactions_eventually(&cluster, &prefix).await;
    // The old instance was fenced.
    assert!(old.notify_checkpoint_complete(2).await.is_err());
    drop(old);
    new.close().await.unwrap();
}

/// Scenario 2, invariant: restoring the same checkpoint twice (each
/// restored process failing before its next checkpoint) commits its
/// transaction once: the second restore finds it committed, and the topic
/// holds exactly [42, 43].
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recovering_the_same_checkpoint_twice_writes_no_duplicate() {
    let (kafka, cluster) = kafka().await;
    let topic = topic(kafka, "twice", 1).await;
    let prefix = unique_name("twice");
    let mut s = connect(config(kafka, &topic, &prefix, Semantic::ExactlyOnce)).await;
    s.initialize_state(None).await.unwrap();
    write(&mut s, 42).await;
    s.snapshot_state(0).await.unwrap();
    s.notify_checkpoint_complete(0).await.unwrap();
    write(&mut s, 43).await;
    let cp1 = s.snapshot_state(1).await.unwrap();
    write(&mut s, 44).await;
    drop(s);
    let mut already = Vec::new();
    for lost in ["45", "46"] {
        let mut r = connect(config(kafka, &topic, &prefix, Semantic::ExactlyOnce)).await;
        r.initialize_state(Some(restored(1, &cp1))).await.unwrap();
        already.push(r.sink().metrics().already_committed);
        write(&mut r, lost).await; // fails before the next checkpoint
        drop(r);
    }
    assert_eq!(already, [0, 1], "the second restore finds 43 committed");
    let mut last = connect(config(kafka, &topic, &prefix, Semantic::ExactlyOnce)).await;
    last.initialize_state(Some(restored(1, &cp1)))
        .await
        .unwrap();
    last.close().await.unwrap();
    assert_eq!(
        committed_eventually(&cluster, &topic, &["42", "43"]).await,
        ["42", "43"]
    );
    lso_reaches_hw(&cluster, &topic, &[0]).await;
}

/// Scenario 3, invariant: after 5 subtasks failed before the first
/// completed checkpoint (each with an open and two pre-committed, never
/// notified transactions), a fresh start with parallelism 1 aborts every
/// lingering transaction of the prefix: the topic holds only the new
/// commit and nothing of the prefix stays open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scale_down_before_the_first_checkpoint_aborts_the_lingering_transactions() {
    let (kafka, cluster) = kafka().await;
    let topic = topic(kafka, "scaledown", 1).await;
    let prefix = unique_name("scaledown");
    let mut five = Vec::new();
    for i in 0..5 {
        let mut s = connect(subtask(
            config(kafka, &topic, &prefix, Semantic::ExactlyOnce),
            i,
            5,
        ))
        .await;
        s.initialize_state(None).await.unwrap();
        write(&mut s, format!("lost-{i}")).await;
        // Two pre-committed, never notified checkpoints per subtask, too.
        s.snapshot_state(1).await.unwrap();
        write(&mut s, format!("lost-{i}b")).await;
        s.snapshot_state(2).await.unwrap();
        write(&mut s, format!("lost-{i}c")).await;
        five.push(s);
    }
    let open_before = ongoing(&cluster, &prefix).await.len();
    assert!(open_before >= 10, "lingering before: {open_before}");
    drop(five); // failure before the first completed checkpoint
    let mut one = connect(config(kafka, &topic, &prefix, Semantic::ExactlyOnce)).await;
    one.initialize_state(None).await.unwrap();
    write(&mut one, 46).await;
    one.snapshot_state(1).await.unwrap();
    one.notify_checkpoint_complete(1).await.unwrap();
    assert_eq!(
        committed_eventually(&cluster, &topic, &["46"]).await,
        ["46"]
    );
    lso_reaches_hw(&cluster, &topic, &[0]).await;
    no_open_transactions_eventually(&cluster, &prefix).await;
    one.close().await.unwrap();
    eprintln!("scale down 5 → 1: {open_before} lingering transactions aborted");
}

/// Scenario 4, invariant: scaling 4 → 2 → 3 → 1 (each stage restoring the
/// previous stage's checkpoint, half of whose subtasks were not notified)
/// gives no two subtasks of a stage a common transactional id, no fresh
/// subtask an id used before, and commits every value exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scale_up_after_scaling_down_shares_no_ids_and_writes_each_value_once() {
    let (kafka, cluster) = kafka().await;
    let topic = topic(kafka, "scaleup", 1).await;
    let prefix = unique_name("scaleup");
    let mut checkpoint: Option<Checkpoint> = None;
    let mut next_value = 0u32;
    let mut all_ids: BTreeSet<String> = BTreeSet::new();
    let mut stage_ids = Vec::new();
    for (stage, parallelism) in [4u32, 2, 3, 1].into_iter().enumerate() {
        let last_stage = stage == 3;
        let cp_id = stage as u64 + 1;
        let mut subtasks = Vec::new();
        let mut ids: BTreeMap<u32, BTreeSet<String>> = BTreeMap::new();
        for i in 0..parallelism {
            let mut s = connect(subtask(
                config(kafka, &topic, &prefix, Semantic::ExactlyOnce),
                i,
                parallelism,
            ))
            .await;
            let info = OperatorInfo::new("sink", i, parallelism);
            let r = checkpoint.as_ref().map(|c| c.restored_state_for(&info));
            let fresh = r.as_ref().is_none_or(|r| r.own.is_empty());
            s.initialize_state(r).await.unwrap();
            let mine = s.transactional_ids();
            assert_eq!(mine.len(), 5);
            for (other, theirs) in &ids {
                assert!(
                    mine.is_disjoint(theirs),
                    "stage {stage}: subtasks {i} and {other} share ids"
                );
            }
            if fresh {
                assert!(
                    mine.is_disjoint(&all_ids),
                    "stage {stage}: fresh subtask {i} reuses ids {:?}",
                    mine.intersection(&all_ids).collect::<Vec<_>>()
                );
            }
            ids.insert(i, mine);
            subtasks.push(s);
        }
        let mut operators = Vec::new();
        for (i, s) in subtasks.iter_mut().enumerate() {
            if !last_stage {
                write(s, next_value).await;
                next_value += 1;
            }
            let state = s.snapshot_state(cp_id).await.unwrap();
            // Notify only every other subtask: the rest is committed by the
            // next stage's restore.
            if i % 2 == 0 || last_stage {
                s.notify_checkpoint_complete(cp_id).await.unwrap();
            }
            operators.push(OperatorSnapshot {
                uid: "sink".into(),
                subtask_index: i as u32,
                parallelism,
                state,
            });
        }
        for mut s in subtasks {
            s.close().await.unwrap();
        }
        for set in ids.values() {
            all_ids.extend(set.iter().cloned());
        }
        stage_ids.push(ids);
        checkpoint = Some(Checkpoint {
            id: cp_id,
            timestamp_ms: 0,
            operators,
        });
    }
    let expected: Vec<String> = (0..next_value).map(|v| v.to_string()).collect();
    // Every sink closed: once no transaction is open, read_committed holds
    // everything that was committed.
    lso_reaches_hw(&cluster, &topic, &[0]).await;
    let mut got = values(&read(&cluster, &topic, &[0], IsolationLevel::ReadCommitted).await);
    got.sort_by_key(|v| v.parse::<u32>().unwrap());
    assert_eq!(got, expected, "every value exactly once");
    let id_prefix = format!("{prefix}-");
    for (stage, ids) in stage_ids.iter().enumerate() {
        let ranges: Vec<String> = ids
            .iter()
            .map(|(i, s)| {
                format!(
                    "{i}:{}..{}",
                    s.first().unwrap().trim_start_matches(&id_prefix),
                    s.last().unwrap().trim_start_matches(&id_prefix)
                )
            })
            .collect();
        eprintln!("   stage {stage} ids {ranges:?}");
    }
    eprintln!(
        "scale 4 → 2 → 3 → 1: {next_value} values exactly once, {} distinct ids, no overlap",
        all_ids.len()
    );
}

/// Scenario 5, invariant: with the pool of 5 ids exhausted (one open, four
/// pending) the fifth pending snapshot fails asking to enlarge the pool;
/// a restore from the checkpoint taken before commits it, aborts the rest,
/// and the sink writes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pool_exhaustion_then_a_restore_from_before_it() {
    let (kafka, cluster) = kafka().await;
    let topic = topic(kafka, "pool", 1).await;
    let prefix = unique_name("pool");
    let mut s = connect(config(kafka, &topic, &prefix, Semantic::ExactlyOnce)).await;
    s.initialize_state(None).await.unwrap();
    write(&mut s, 42).await;
    let cp0 = s.snapshot_state(0).await.unwrap();
    let mut failed_at = None;
    for cp in 1..10 {
        write(&mut s, format!("x{cp}")).await;
        match s.snapshot_state(cp).await {
            Ok(_) => {}
            Err(e) => {
                let msg = e.to_string();
                assert!(
                    msg.contains("Increase the kafka producers pool size"),
                    "{msg}"
                );
                failed_at = Some(cp);
                break;
            }
        }
    }
    // Pool 5: one open + four pending; the fifth snapshot needs a sixth id.
    assert_eq!(failed_at, Some(4));
    drop(s);
    let mut r = connect(config(kafka, &topic, &prefix, Semantic::ExactlyOnce)).await;
    r.initialize_state(Some(restored(0, &cp0))).await.unwrap();
    assert_eq!(
        committed_eventually(&cluster, &topic, &["42"]).await,
        ["42"]
    );
    lso_reaches_hw(&cluster, &topic, &[0]).await;
    write(&mut r, 43).await;
    r.snapshot_state(1).await.unwrap();
    r.notify_checkpoint_complete(1).await.unwrap();
    assert_eq!(
        committed_eventually(&cluster, &topic, &["42", "43"]).await,
        ["42", "43"]
    );
    r.close().await.unwrap();
}

/// Scenario 6a, invariant: an EXACTLY_ONCE sink restored from an
/// AT_LEAST_ONCE checkpoint starts its id pool and keeps everything the
/// AT_LEAST_ONCE run wrote ([42, 43, 44, 45]).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_at_least_once_to_exactly_once() {
    let (kafka, cluster) = kafka().await;
    let topic = topic(kafka, "alo2eo", 1).await;
    let prefix = unique_name("alo2eo");
    let mut alo = connect(config(kafka, &topic, &prefix, Semantic::AtLeastOnce)).await;
    alo.initialize_state(None).await.unwrap();
    write(&mut alo, 42).await;
    alo.snapshot_state(0).await.unwrap();
    alo.notify_checkpoint_complete(0).await.unwrap();
    write(&mut alo, 43).await;
    let st = alo.snapshot_state(1).await.unwrap();
    write(&mut alo, 44).await;
    alo.close().await.unwrap();
    let mut eo = connect(config(kafka, &topic, &prefix, Semantic::ExactlyOnce)).await;
    eo.initialize_state(Some(restored(1, &st))).await.unwrap();
    assert_eq!(eo.transactional_ids().len(), 5);
    write(&mut eo, 45).await;
    eo.snapshot_state(2).await.unwrap();
    eo.notify_checkpoint_complete(2).await.unwrap();
    eo.close().await.unwrap();
    assert_eq!(
        committed_eventually(&cluster, &topic, &["42", "43", "44", "45"]).await,
        ["42", "43", "44", "45"]
    );
}

/// Scenario 6b, invariant: an AT_LEAST_ONCE sink restored from an
/// EXACTLY_ONCE checkpoint commits the checkpoint's transaction, uses no
/// transactional id, loses the uncheckpointed 44 and writes on
/// ([42, 43, 45, 46, 47]); no transaction stays open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_exactly_once_to_at_least_once() {
    let (kafka, cluster) = kafka().await;
    let topic = topic(kafka, "eo2alo", 1).await;
    let prefix = unique_name("eo2alo");
    let mut eo = connect(config(kafka, &topic, &prefix, Semantic::ExactlyOnce)).await;
    eo.initialize_state(None).await.unwrap();
    write(&mut eo, 42).await;
    eo.snapshot_state(0).await.unwrap();
    eo.notify_checkpoint_complete(0).await.unwrap();
    write(&mut eo, 43).await;
    let st = eo.snapshot_state(1).await.unwrap();
    write(&mut eo, 44).await;
    drop(eo);
    let mut alo = connect(config(kafka, &topic, &prefix, Semantic::AtLeastOnce)).await;
    alo.initialize_state(Some(restored(1, &st))).await.unwrap();
    assert!(alo.transactional_ids().is_empty());
    for v in [45, 46] {
        write(&mut alo, v).await;
    }
    alo.snapshot_state(2).await.unwrap();
    alo.notify_checkpoint_complete(2).await.unwrap();
    write(&mut alo, 47).await;
    alo.close().await.unwrap();
    assert_eq!(
        committed_eventually(&cluster, &topic, &["42", "43", "45", "46", "47"]).await,
        ["42", "43", "45", "46", "47"]
    );
    lso_reaches_hw(&cluster, &topic, &[0]).await;
}

/// Scenario 7a, invariant: without a configured prefix the transactional
/// ids are `<task name>-<operator id>-<n>`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn default_prefix_is_task_name_and_operator_id() {
    let (kafka, _cluster) = kafka().await;
    let topic = topic(kafka, "prefix", 1).await;
    let mut c = config(kafka, &topic, "unused", Semantic::ExactlyOnce);
    c.transactional_id_prefix = None;
    // A task name of this test's own: the ids are broker-wide.
    let task = unique_name("Sink: orders");
    c.task_name = task.clone();
    c.operator_id = "cbc357ccb763df2852fee8c4fc7d55f2".into();
    let mut s = connect(c).await;
    s.initialize_state(None).await.unwrap();
    let expected = format!("{task}-cbc357ccb763df2852fee8c4fc7d55f2-");
    let ids = s.transactional_ids();
    assert!(!ids.is_empty());
    assert!(
        ids.iter().all(|id| id.starts_with(&expected)),
        "{ids:?} do not all start with {expected:?}"
    );
    s.close().await.unwrap();
}

/// Scenario 7b, invariant: a custom prefix names the ids; a process
/// restored with another prefix commits the old prefix's checkpoint (42),
/// aborts its open transaction (43) and leaves no transaction of the old
/// prefix open ([42, 44]).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changed_prefix_on_restore_commits_the_old_checkpoint() {
    let (kafka, cluster) = kafka().await;
    let topic = topic(kafka, "prefix", 1).await;
    let old_prefix = unique_name("old-prefix");
    let mut old = connect(config(kafka, &topic, &old_prefix, Semantic::ExactlyOnce)).await;
    old.initialize_state(None).await.unwrap();
    assert!(
        old.transactional_ids()
            .iter()
            .all(|id| id.starts_with(&format!("{old_prefix}-")))
    );
    write(&mut old, 42).await;
    let cp0 = old.snapshot_state(0).await.unwrap();
    write(&mut old, 43).await;
    drop(old);
    let mut new = connect(config(
        kafka,
        &topic,
        &unique_name("new-prefix"),
        Semantic::ExactlyOnce,
    ))
    .await;
    new.initialize_state(Some(restored(0, &cp0))).await.unwrap();
    write(&mut new, 44).await;
    new.snapshot_state(1).await.unwrap();
    new.notify_checkpoint_complete(1).await.unwrap();
    assert_eq!(
        committed_eventually(&cluster, &topic, &["42", "44"]).await,
        ["42", "44"]
    );
    lso_reaches_hw(&cluster, &topic, &[0]).await;
    no_open_transactions_eventually(&cluster, &old_prefix).await;
    new.close().await.unwrap();
}

/// Scenario 8, invariant: a transaction timeout above the broker's
/// `transaction.max.timeout.ms` (the default 1 h against the broker's
/// 15 min) fails at connect with an error naming that setting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transaction_timeout_above_the_broker_maximum_fails_at_connect() {
    let (kafka, _cluster) = kafka().await;
    let topic = topic(kafka, "prefix", 1).await;
    let mut c = config(
        kafka,
        &topic,
        &unique_name("big-timeout"),
        Semantic::ExactlyOnce,
    );
    c.transaction_timeout = kafka_sink::kafka::DEFAULT_KAFKA_TRANSACTION_TIMEOUT;
    match KafkaSink::<String>::connect(c, ValueOnly(SimpleStringSchema)).await {
        Err(e @ KafkaSinkError::TransactionTimeoutTooLarge { .. }) => {
            assert!(e.to_string().contains("transaction.max.timeout.ms"), "{e}");
        }
        other => panic!("expected TransactionTimeoutTooLarge, got {other:?}"),
    }
}
