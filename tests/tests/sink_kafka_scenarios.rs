//! Flink's `FlinkKafkaProducerITCase` scenarios and the sink options
//! against one real broker (Kafka 4.4, one node), in one test function so
//! the cluster starts once. Each step prints its result and elapsed time.
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
//! 6. migrate AT_LEAST_ONCE → EXACTLY_ONCE and back across a restore;
//! 7. default, custom and changed transactional id prefix;
//! 8. transaction timeout above the broker maximum: clear error at start.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use kafka_producer::admin::{self, TransactionFilters};
use kafka_producer::partitioner::{Partitioner, partition_for_key};
use kafka_producer::reader::{ConsumerRecord, IsolationLevel, Offset, Reader, ReaderConfig};
use kafka_producer::{Cluster, ClusterConfig, ProducerConfig};
use kafka_proto::ErrorCode;
use kafka_proto::messages::{CreateTopicsRequest, CreateTopicsRequestCreatableTopic};
use kafka_sink::checkpoint::{Checkpoint, OperatorSnapshot};
use kafka_sink::kafka::{
    KEY_DISABLE_METRICS, KafkaSink, KafkaSinkConfig, KafkaSinkError, KafkaSinkRecord, Keyed,
    KeyedSerializationSchema, Semantic, SimpleStringSchema, SinkPartitioner, ValueOnly,
};
use kafka_sink::{CheckpointedOperator, OperatorInfo, RecordContext, RestoredState};
use kafka_testcontainers::{KafkaCluster, KafkaVersion};

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

/// Creates every topic with one CreateTopics request (no JVM per topic).
async fn create_topics(kafka: &KafkaCluster, cluster: &Cluster, topics: &[(&str, i32)]) {
    let conn = cluster.any_connection().await.expect("a connection");
    let req = CreateTopicsRequest {
        topics: topics
            .iter()
            .map(|(name, partitions)| CreateTopicsRequestCreatableTopic {
                name: (*name).into(),
                num_partitions: *partitions,
                replication_factor: 1,
                ..Default::default()
            })
            .collect(),
        timeout_ms: 30_000,
        ..Default::default()
    };
    let resp = conn.send_negotiated(&req).await.expect("CreateTopics");
    for t in &resp.topics {
        let code = ErrorCode::from(t.error_code);
        assert!(code.is_ok(), "CreateTopics {}: {code:?}", t.name);
    }
    for (name, partitions) in topics {
        kafka
            .wait_for_topic(name, *partitions, Duration::from_secs(60))
            .await
            .expect("topic ready");
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
/// the high watermark (no open transaction on the partition).
async fn lso_reaches_hw(cluster: &Arc<Cluster>, topic: &str, partitions: &[i32]) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let rc = Reader::new(cluster.clone(), ReaderConfig::default());
        let ru = Reader::new(
            cluster.clone(),
            ReaderConfig {
                isolation: IsolationLevel::ReadUncommitted,
                ..Default::default()
            },
        );
        let lso = rc
            .list_offsets(topic, partitions, Offset::Latest)
            .await
            .unwrap();
        let hw = ru
            .list_offsets(topic, partitions, Offset::Latest)
            .await
            .unwrap();
        let lso: Vec<_> = lso.values().map(|o| o.offset).collect();
        let hw: Vec<_> = hw.values().map(|o| o.offset).collect();
        if lso == hw {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{topic}: LSO {lso:?} stuck below HW {hw:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Open transactions of `prefix-` the broker lists.
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

#[derive(Debug)]
struct AlwaysLast;

impl Partitioner for AlwaysLast {
    fn partition(&self, _: &str, _: Option<&[u8]>, _: Option<&[u8]>, n: i32) -> i32 {
        n - 1
    }
}

/// Keyed records; values starting with "big" go to topic "routed".
struct Routed;

impl KeyedSerializationSchema<String> for Routed {
    fn serialize_key(&self, v: &String) -> Option<Bytes> {
        Some(Bytes::from(format!("key-{v}")))
    }
    fn serialize_value(&self, v: &String) -> Bytes {
        Bytes::from(v.clone())
    }
    fn target_topic(&self, v: &String) -> Option<String> {
        v.starts_with("big").then(|| "routed".to_string())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_sink_scenarios_against_kafka_4_4() {
    let started = Instant::now();
    let mut step = Instant::now();
    let mut done = |name: &str| {
        eprintln!(
            "{name}: ok ({:.1?}, total {:.1?})",
            step.elapsed(),
            started.elapsed()
        );
        step = Instant::now();
    };
    let kafka = KafkaCluster::builder()
        .version(KafkaVersion::V4_4)
        .nodes(1)
        .start()
        .await
        .expect("start cluster");
    let cluster = Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
        .await
        .unwrap();
    create_topics(
        &kafka,
        &cluster,
        &[
            ("fixed", 3),
            ("keyhash", 3),
            ("custom", 3),
            ("ts", 1),
            ("keyed", 1),
            ("routed", 1),
            ("logfail", 1),
            ("metrics", 1),
            ("resume", 1),
            ("twice", 1),
            ("scaledown", 1),
            ("scaleup", 1),
            ("pool", 1),
            ("alo2eo", 1),
            ("eo2alo", 1),
            ("prefix", 1),
        ],
    )
    .await;
    done("cluster and topics");

    // --- Options -------------------------------------------------------
    // Fixed partitioner (explicit): subtask 1 of 2 → partition 1 of 3.
    let mut c = subtask(
        config(&kafka, "fixed", "fixed", Semantic::ExactlyOnce),
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
    let recs = committed_n(&cluster, "fixed", &[0, 1, 2], 6).await;
    assert_eq!(recs.len(), 6);
    assert!(recs.iter().all(|r| r.partition == 1), "{recs:?}");
    done("option: fixed partitioner (subtask 1 → partition 1)");

    // No sink partitioner (the default): the Java client's murmur2 of the key.
    let c = config(&kafka, "keyhash", "keyhash", Semantic::AtLeastOnce);
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
    let recs = read(
        &cluster,
        "keyhash",
        &[0, 1, 2],
        IsolationLevel::ReadCommitted,
    )
    .await;
    assert_eq!(recs.len(), 12);
    for r in &recs {
        assert_eq!(r.partition, partition_for_key(r.key.as_deref().unwrap(), 3));
    }
    let used: BTreeSet<i32> = recs.iter().map(|r| r.partition).collect();
    assert!(used.len() > 1, "key hash spread: {used:?}");
    done("option: no partitioner, the default (key hash like Java)");

    // A custom partitioner.
    let mut c = config(&kafka, "custom", "custom", Semantic::AtLeastOnce);
    c.set_partitioner(SinkPartitioner::Custom(Arc::new(AlwaysLast)));
    let mut s = connect(c).await;
    s.initialize_state(None).await.unwrap();
    for i in 0..4 {
        write(&mut s, i).await;
    }
    s.snapshot_state(1).await.unwrap();
    s.close().await.unwrap();
    let recs = read(
        &cluster,
        "custom",
        &[0, 1, 2],
        IsolationLevel::ReadCommitted,
    )
    .await;
    assert_eq!(recs.len(), 4);
    assert!(recs.iter().all(|r| r.partition == 2));
    done("option: custom partitioner");

    // write_timestamp_to_kafka on and off.
    let ts = 1_600_000_000_000i64;
    for on in [true, false] {
        let mut c = config(&kafka, "ts", "ts", Semantic::AtLeastOnce);
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
        .wait_until_stable("ts", &[0], Duration::from_secs(60))
        .await
        .expect("the closed sink's transactions end");
    let recs = read(&cluster, "ts", &[0], IsolationLevel::ReadCommitted).await;
    assert_eq!(values(&recs), ["true", "false"]);
    assert_eq!(recs[0].timestamp, ts);
    assert!(recs[1].timestamp > ts, "create time: {}", recs[1].timestamp);
    done("option: write_timestamp_to_kafka");

    // Keyed schema with a target topic per record, in one transaction.
    let mut s = KafkaSink::connect(
        config(&kafka, "keyed", "keyed", Semantic::ExactlyOnce),
        Keyed(Routed),
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
        committed_eventually(&cluster, "keyed", &["a", "c"]).await,
        ["a", "c"]
    );
    let routed = committed_n(&cluster, "routed", &[0], 2).await;
    assert_eq!(values(&routed), ["big-b", "big-d"]);
    assert_eq!(routed[0].key.as_deref(), Some(&b"key-big-b"[..]));
    done("option: keyed schema, per-record topic");

    // log_failures_only: refused under EXACTLY_ONCE at connect; under NONE
    // a failed send is logged and counted, the checkpoint succeeds.
    let mut c = config(&kafka, "logfail", "logfail", Semantic::ExactlyOnce);
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
        let mut c = config(&kafka, "logfail", "logfail", Semantic::None);
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
        .wait_until_stable("logfail", &[0], Duration::from_secs(60))
        .await
        .expect("the closed sink's transactions end");
    let v = values(&read(&cluster, "logfail", &[0], IsolationLevel::ReadCommitted).await);
    assert_eq!(v, ["ok-true", "ok-false"]);
    done("option: log_failures_only (refused in EO; NONE logs and continues)");

    // Metrics: on by default, off by `flink.disable-metrics` or the option.
    let mut sent = Vec::new();
    for disable in [None, Some("true"), Some("false")] {
        let bootstrap = kafka.bootstrap();
        let mut props = vec![("bootstrap.servers", bootstrap.as_str())];
        if let Some(d) = disable {
            props.push((KEY_DISABLE_METRICS, d));
        }
        let mut c = KafkaSinkConfig::from_properties(props, "metrics").unwrap();
        c.semantic = Semantic::ExactlyOnce;
        c.transactional_id_prefix = Some("metrics".into());
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
    let mut c = config(&kafka, "metrics", "metrics-alo", Semantic::AtLeastOnce);
    c.set_disable_metrics(true);
    let mut s = connect(c).await;
    s.initialize_state(None).await.unwrap();
    write(&mut s, "m").await;
    s.snapshot_state(1).await.unwrap();
    sent.push(s.producer_metrics()[0].1.records_sent);
    s.close().await.unwrap();
    assert_eq!(sent, [1, 0, 1, 0], "records_sent per run");
    done("option: metrics off by flink.disable-metrics / typed option");

    // --- 1. fail before notify and resume work --------------------------
    let mut old = connect(config(&kafka, "resume", "resume", Semantic::ExactlyOnce)).await;
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
    let mut new = connect(config(&kafka, "resume", "resume", Semantic::ExactlyOnce)).await;
    new.initialize_state(Some(restored(1, &cp1))).await.unwrap();
    write(&mut new, 46).await;
    new.snapshot_state(3).await.unwrap();
    new.notify_checkpoint_complete(3).await.unwrap();
    assert_eq!(
        committed_eventually(&cluster, "resume", &["42", "43", "46"]).await,
        ["42", "43", "46"]
    );
    lso_reaches_hw(&cluster, "resume", &[0]).await;
    assert!(ongoing(&cluster, "resume").await.is_empty());
    // The old instance was fenced.
    assert!(old.notify_checkpoint_complete(2).await.is_err());
    drop(old);
    new.close().await.unwrap();
    done("1. fail before notify and resume work (44, 45 aborted; LSO = HW; old fenced)");

    // --- 2. fail and recover the same checkpoint twice -------------------
    let mut s = connect(config(&kafka, "twice", "twice", Semantic::ExactlyOnce)).await;
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
        let mut r = connect(config(&kafka, "twice", "twice", Semantic::ExactlyOnce)).await;
        r.initialize_state(Some(restored(1, &cp1))).await.unwrap();
        already.push(r.sink().metrics().already_committed);
        write(&mut r, lost).await; // fails before the next checkpoint
        drop(r);
    }
    assert_eq!(already, [0, 1], "the second restore finds 43 committed");
    let mut last = connect(config(&kafka, "twice", "twice", Semantic::ExactlyOnce)).await;
    last.initialize_state(Some(restored(1, &cp1)))
        .await
        .unwrap();
    last.close().await.unwrap();
    assert_eq!(
        committed_eventually(&cluster, "twice", &["42", "43"]).await,
        ["42", "43"]
    );
    lso_reaches_hw(&cluster, "twice", &[0]).await;
    done("2. fail and recover the same checkpoint twice (exactly [42, 43])");

    // --- 3. scale down 5 → 1 before the first checkpoint ----------------
    let mut five = Vec::new();
    for i in 0..5 {
        let mut s = connect(subtask(
            config(&kafka, "scaledown", "scaledown", Semantic::ExactlyOnce),
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
    let open_before = ongoing(&cluster, "scaledown").await.len();
    assert!(open_before >= 10, "lingering before: {open_before}");
    drop(five); // failure before the first completed checkpoint
    let mut one = connect(config(
        &kafka,
        "scaledown",
        "scaledown",
        Semantic::ExactlyOnce,
    ))
    .await;
    one.initialize_state(None).await.unwrap();
    write(&mut one, 46).await;
    one.snapshot_state(1).await.unwrap();
    one.notify_checkpoint_complete(1).await.unwrap();
    assert_eq!(
        committed_eventually(&cluster, "scaledown", &["46"]).await,
        ["46"]
    );
    lso_reaches_hw(&cluster, "scaledown", &[0]).await;
    assert!(ongoing(&cluster, "scaledown").await.is_empty());
    one.close().await.unwrap();
    done(&format!(
        "3. scale down 5 → 1 before the first checkpoint ({open_before} lingering aborted)"
    ));

    // --- 4. scale up after scaling down: 4 → 2 → 3 → 1 ------------------
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
                config(&kafka, "scaleup", "scaleup", Semantic::ExactlyOnce),
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
    let deadline = Instant::now() + Duration::from_secs(30);
    let got = loop {
        let mut got = values(&read(&cluster, "scaleup", &[0], IsolationLevel::ReadCommitted).await);
        got.sort_by_key(|v| v.parse::<u32>().unwrap());
        if got == expected || Instant::now() >= deadline {
            break got;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(got, expected, "every value exactly once");
    lso_reaches_hw(&cluster, "scaleup", &[0]).await;
    for (stage, ids) in stage_ids.iter().enumerate() {
        let ranges: Vec<String> = ids
            .iter()
            .map(|(i, s)| {
                format!(
                    "{i}:{}..{}",
                    s.first().unwrap().trim_start_matches("scaleup-"),
                    s.last().unwrap().trim_start_matches("scaleup-")
                )
            })
            .collect();
        eprintln!("   stage {stage} ids {ranges:?}");
    }
    done(&format!(
        "4. scale 4 → 2 → 3 → 1 ({} values exactly once, {} distinct ids, no overlap)",
        next_value,
        all_ids.len()
    ));

    // --- 5. run out of producers in the pool, restore before it ---------
    let mut s = connect(config(&kafka, "pool", "pool", Semantic::ExactlyOnce)).await;
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
    let mut r = connect(config(&kafka, "pool", "pool", Semantic::ExactlyOnce)).await;
    r.initialize_state(Some(restored(0, &cp0))).await.unwrap();
    assert_eq!(
        committed_eventually(&cluster, "pool", &["42"]).await,
        ["42"]
    );
    lso_reaches_hw(&cluster, "pool", &[0]).await;
    write(&mut r, 43).await;
    r.snapshot_state(1).await.unwrap();
    r.notify_checkpoint_complete(1).await.unwrap();
    assert_eq!(
        committed_eventually(&cluster, "pool", &["42", "43"]).await,
        ["42", "43"]
    );
    r.close().await.unwrap();
    done(
        "5. run out of producers (error at the 5th pending snapshot); restore after exceeding the pool",
    );

    // --- 6. migrate AT_LEAST_ONCE ↔ EXACTLY_ONCE ------------------------
    let mut alo = connect(config(&kafka, "alo2eo", "alo2eo", Semantic::AtLeastOnce)).await;
    alo.initialize_state(None).await.unwrap();
    write(&mut alo, 42).await;
    alo.snapshot_state(0).await.unwrap();
    alo.notify_checkpoint_complete(0).await.unwrap();
    write(&mut alo, 43).await;
    let st = alo.snapshot_state(1).await.unwrap();
    write(&mut alo, 44).await;
    alo.close().await.unwrap();
    let mut eo = connect(config(&kafka, "alo2eo", "alo2eo", Semantic::ExactlyOnce)).await;
    eo.initialize_state(Some(restored(1, &st))).await.unwrap();
    assert_eq!(eo.transactional_ids().len(), 5);
    write(&mut eo, 45).await;
    eo.snapshot_state(2).await.unwrap();
    eo.notify_checkpoint_complete(2).await.unwrap();
    eo.close().await.unwrap();
    assert_eq!(
        committed_eventually(&cluster, "alo2eo", &["42", "43", "44", "45"]).await,
        ["42", "43", "44", "45"]
    );

    let mut eo = connect(config(&kafka, "eo2alo", "eo2alo", Semantic::ExactlyOnce)).await;
    eo.initialize_state(None).await.unwrap();
    write(&mut eo, 42).await;
    eo.snapshot_state(0).await.unwrap();
    eo.notify_checkpoint_complete(0).await.unwrap();
    write(&mut eo, 43).await;
    let st = eo.snapshot_state(1).await.unwrap();
    write(&mut eo, 44).await;
    drop(eo);
    let mut alo = connect(config(&kafka, "eo2alo", "eo2alo", Semantic::AtLeastOnce)).await;
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
        committed_eventually(&cluster, "eo2alo", &["42", "43", "45", "46", "47"]).await,
        ["42", "43", "45", "46", "47"]
    );
    lso_reaches_hw(&cluster, "eo2alo", &[0]).await;
    done("6. migrate AT_LEAST_ONCE → EXACTLY_ONCE ([42..45]) and back ([42, 43, 45, 46, 47])");

    // --- 7. default, custom and changed transactional id prefix ---------
    let mut c = config(&kafka, "prefix", "unused", Semantic::ExactlyOnce);
    c.transactional_id_prefix = None;
    c.task_name = "Sink: orders".into();
    c.operator_id = "cbc357ccb763df2852fee8c4fc7d55f2".into();
    let mut s = connect(c).await;
    s.initialize_state(None).await.unwrap();
    assert!(
        s.transactional_ids()
            .iter()
            .all(|id| id.starts_with("Sink: orders-cbc357ccb763df2852fee8c4fc7d55f2-"))
    );
    s.close().await.unwrap();
    let mut old = connect(config(
        &kafka,
        "prefix",
        "old-prefix",
        Semantic::ExactlyOnce,
    ))
    .await;
    old.initialize_state(None).await.unwrap();
    assert!(
        old.transactional_ids()
            .iter()
            .all(|id| id.starts_with("old-prefix-"))
    );
    write(&mut old, 42).await;
    let cp0 = old.snapshot_state(0).await.unwrap();
    write(&mut old, 43).await;
    drop(old);
    let mut new = connect(config(
        &kafka,
        "prefix",
        "new-prefix",
        Semantic::ExactlyOnce,
    ))
    .await;
    new.initialize_state(Some(restored(0, &cp0))).await.unwrap();
    write(&mut new, 44).await;
    new.snapshot_state(1).await.unwrap();
    new.notify_checkpoint_complete(1).await.unwrap();
    assert_eq!(
        committed_eventually(&cluster, "prefix", &["42", "44"]).await,
        ["42", "44"]
    );
    lso_reaches_hw(&cluster, "prefix", &[0]).await;
    assert!(ongoing(&cluster, "old-prefix").await.is_empty());
    new.close().await.unwrap();
    done("7. default prefix task-operator, custom prefix, changed prefix on restore ([42, 44])");

    // --- 8. transaction timeout above the broker maximum ---------------
    let mut c = config(&kafka, "prefix", "big-timeout", Semantic::ExactlyOnce);
    c.transaction_timeout = kafka_sink::kafka::DEFAULT_KAFKA_TRANSACTION_TIMEOUT;
    match KafkaSink::<String>::connect(c, ValueOnly(SimpleStringSchema)).await {
        Err(e @ KafkaSinkError::TransactionTimeoutTooLarge { .. }) => {
            assert!(e.to_string().contains("transaction.max.timeout.ms"), "{e}");
        }
        other => panic!("expected TransactionTimeoutTooLarge, got {other:?}"),
    }
    done("8. transaction timeout > broker maximum: clear error at connect");
}
