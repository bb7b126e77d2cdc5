//! The reader against a real Kafka 4.4 broker (KRaft, from the Maven jars via
//! `kafka-testcontainers`), checked against the Java console consumer:
//!
//! - data from Java's `ProducerPerformance` (transactional with 100 ms
//!   transactions, then non-transactional) read at both isolation levels,
//!   by topic id (Fetch v13+) and by name (Fetch v12);
//! - interleaved transactions of two Java producers, one aborting every third
//!   (`tests/java/AbortingProducer.java`), with an open transaction held to
//!   check the last stable offset; committed group offsets; ListOffsets;
//!   OFFSET_OUT_OF_RANGE.

use kafka_client::{Cluster, ClusterConfig};
use kafka_consumer::{
    AutoOffsetReset, ConsumerRecord, IsolationLevel, Offset, Reader, ReaderConfig, ReaderError,
};
use kafka_testcontainers::{
    ConsumedRecord, IsolationLevel as JavaIsolation, KafkaCluster, ProducerPerfArgs,
};
use kafka_testcontainers::{SharedKafka, unique_name};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, Instant};

/// (partition, offset, key, value, headers) as the console consumer prints them.
type Row = (
    i32,
    i64,
    Option<Vec<u8>>,
    Option<Vec<u8>>,
    Vec<(String, Vec<u8>)>,
);

fn ours(records: &[ConsumerRecord]) -> BTreeSet<Row> {
    let rows: BTreeSet<Row> = records
        .iter()
        .map(|r| {
            (
                r.partition,
                r.offset,
                r.key.as_ref().map(|b| b.to_vec()),
                r.value.as_ref().map(|b| b.to_vec()),
                r.headers
                    .iter()
                    .map(|h| {
                        (
                            h.key.clone(),
                            h.value.as_ref().map(|v| v.to_vec()).unwrap_or_default(),
                        )
                    })
                    .collect(),
            )
        })
        .collect();
    assert_eq!(rows.len(), records.len(), "the reader returned duplicates");
    rows
}

fn java(records: &[ConsumedRecord]) -> BTreeSet<Row> {
    records
        .iter()
        .map(|r| {
            (
                r.partition,
                r.offset,
                r.key.clone(),
                r.value.clone(),
                r.headers.clone(),
            )
        })
        .collect()
}

fn value(r: &ConsumerRecord) -> String {
    String::from_utf8_lossy(r.value.as_deref().unwrap_or_default()).into_owned()
}

async fn reader(
    kafka: &KafkaCluster,
    isolation: IsolationLevel,
    fetch_max_version: Option<i16>,
) -> Reader {
    reader_resetting(
        kafka,
        isolation,
        fetch_max_version,
        AutoOffsetReset::Earliest,
    )
    .await
}

async fn reader_resetting(
    kafka: &KafkaCluster,
    isolation: IsolationLevel,
    fetch_max_version: Option<i16>,
    auto_offset_reset: AutoOffsetReset,
) -> Reader {
    let cluster = Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
        .await
        .expect("connect");
    let mut config = ReaderConfig {
        isolation,
        // Small fetches: many rounds, batches split across responses.
        partition_max_bytes: 16 * 1024,
        auto_offset_reset,
        ..Default::default()
    };
    if let Some(v) = fetch_max_version {
        config.fetch_max_version = v;
    }
    Reader::new(cluster, config)
}

async fn java_read(
    kafka: &KafkaCluster,
    topic: &str,
    isolation: JavaIsolation,
    n: usize,
) -> Vec<ConsumedRecord> {
    kafka
        .console_consume(topic, isolation, n, Duration::from_secs(30))
        .await
        .expect("console consumer")
}

/// Waits until no transaction is open on `partitions` (LSO = high
/// watermark): transaction markers are written after EndTxn returns.
async fn wait_stable(kafka: &KafkaCluster, topic: &str, partitions: &[i32]) {
    let rc = reader(kafka, IsolationLevel::ReadCommitted, None).await;
    let ru = reader(kafka, IsolationLevel::ReadUncommitted, None).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut backoff = Duration::from_millis(10);
    loop {
        let lso = rc
            .list_offsets(topic, partitions, Offset::Latest)
            .await
            .unwrap();
        let hw = ru
            .list_offsets(topic, partitions, Offset::Latest)
            .await
            .unwrap();
        if lso == hw {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{topic}: LSO {lso:?} never reached HW {hw:?}"
        );
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_millis(200));
    }
}

/// The shared Kafka 4.4 cluster (other tests use it too: names are unique).
async fn kafka() -> &'static KafkaCluster {
    SharedKafka::Kafka44Tv2
        .cluster()
        .await
        .expect("shared Kafka 4.4")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reader_matches_the_java_consumer_on_producer_performance_data() {
    producer_performance_data(kafka().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reader_matches_the_java_consumer_on_aborted_transactions() {
    aborted_transactions(kafka().await).await;
}

async fn producer_performance_data(kafka: &KafkaCluster) {
    let topic = unique_name("perf");
    let topic = topic.as_str();
    kafka.create_topic(topic, 3, 1).await.expect("create topic");
    let (txn, plain) = (5000u64, 1000u64);
    let summary = kafka
        .producer_performance(&ProducerPerfArgs {
            topic: topic.into(),
            num_records: txn,
            record_size: 100,
            throughput: -1,
            transactional_id: Some(unique_name("perf-txn")),
            transaction_duration_ms: Some(100),
            props: vec![],
        })
        .await
        .expect("transactional ProducerPerformance");
    assert_eq!(summary.records, txn);
    kafka
        .producer_performance(&ProducerPerfArgs {
            topic: topic.into(),
            num_records: plain,
            record_size: 100,
            throughput: -1,
            props: vec![("acks".into(), "all".into())],
            ..Default::default()
        })
        .await
        .expect("non-transactional ProducerPerformance");
    let total = (txn + plain) as usize;
    let parts = [0, 1, 2];
    wait_stable(kafka, topic, &parts).await;

    let mut committed = reader(kafka, IsolationLevel::ReadCommitted, None).await;
    let rc = committed
        .read_to_end(topic, &parts)
        .await
        .expect("read_committed");
    assert_eq!(rc.len(), total);
    assert_eq!(
        rc.iter().filter(|r| r.is_transactional).count(),
        txn as usize
    );
    assert!(
        rc.iter()
            .all(|r| r.value.as_ref().is_some_and(|v| v.len() == 100)),
        "no control record"
    );

    // Every partition ends after the last record plus (transaction) markers.
    let mut markers = 0;
    for p in parts {
        let end = committed.position(topic, p).unwrap();
        let records = rc.iter().filter(|r| r.partition == p).count() as i64;
        assert!(end >= records);
        markers += end - records;
        let latest = committed
            .list_offsets(topic, &[p], Offset::Latest)
            .await
            .unwrap()[&p];
        assert_eq!(
            latest.offset,
            Some(end),
            "LSO = end once every transaction is done"
        );
        let earliest = committed
            .list_offsets(topic, &[p], Offset::Earliest)
            .await
            .unwrap()[&p];
        assert_eq!(earliest.offset, Some(0));
    }
    assert!(markers > 0, "transactions wrote control markers");

    let java_rc = java_read(kafka, topic, JavaIsolation::ReadCommitted, total).await;
    assert_eq!(
        ours(&rc),
        java(&java_rc),
        "read_committed differs from the Java consumer"
    );

    let mut uncommitted = reader(kafka, IsolationLevel::ReadUncommitted, None).await;
    let ru = uncommitted
        .read_to_end(topic, &parts)
        .await
        .expect("read_uncommitted");
    let java_ru = java_read(kafka, topic, JavaIsolation::ReadUncommitted, total).await;
    assert_eq!(
        ours(&ru),
        java(&java_ru),
        "read_uncommitted differs from the Java consumer"
    );
    assert_eq!(ours(&ru), ours(&rc));

    // Fetch v12 (topics by name) gives the same.
    let mut by_name = reader(kafka, IsolationLevel::ReadCommitted, Some(12)).await;
    let v12 = by_name.read_to_end(topic, &parts).await.expect("Fetch v12");
    assert_eq!(ours(&v12), ours(&rc));
}

/// Expected values of AbortingProducer's committed output for `txns` transactions.
fn expected_committed(txns: i32) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for t in 0..txns {
        for i in 0..4 {
            out.insert(format!("B;txn={t};i={i};commit"));
            if t % 3 != 2 {
                out.insert(format!("A;txn={t};i={i};commit"));
                out.insert(format!("A2;txn={t};i={i};commit"));
            }
        }
    }
    out
}

async fn aborted_transactions(kafka: &KafkaCluster) {
    let topic = unique_name("txns");
    let topic = topic.as_str();
    let group = unique_name("verify-group");
    let group = group.as_str();
    let txns = 9;
    kafka.create_topic(topic, 2, 1).await.expect("create topic");
    let release = kafka.data_dir().join(unique_name("release-held-txn"));
    let program = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("java/AbortingProducer.java")
        .display()
        .to_string();
    let args = vec![
        kafka.bootstrap(),
        topic.to_string(),
        txns.to_string(),
        group.to_string(),
        release.display().to_string(),
    ];
    let run = kafka.run_java(&program, &args, Duration::from_secs(300));
    let (out, ()) = tokio::join!(run, async {
        let held = held_transaction(kafka, topic).await;
        std::fs::write(&release, b"go").unwrap();
        held.unwrap();
    });
    let out = out.expect("run AbortingProducer");
    assert!(
        out.success && out.stdout_text().contains(&format!("DONE {txns}")),
        "AbortingProducer failed: {}\n{}",
        out.stdout_text(),
        out.stderr
    );

    // Everything is decided once the last abort's markers are written.
    let parts = [0, 1];
    wait_stable(kafka, topic, &parts).await;
    let mut rc = reader(kafka, IsolationLevel::ReadCommitted, None).await;
    let committed = rc.read_to_end(topic, &parts).await.expect("read_committed");
    let values: Vec<String> = committed.iter().map(value).collect();
    let distinct: BTreeSet<String> = values.iter().cloned().collect();
    assert_eq!(distinct.len(), values.len(), "duplicates");
    assert_eq!(distinct, expected_committed(txns));
    // Per partition, offsets increase and each producer's records come in write order.
    for p in parts {
        let mut last: BTreeMap<String, (i32, i32)> = BTreeMap::new();
        let mut prev = -1;
        for r in committed.iter().filter(|r| r.partition == p) {
            assert!(r.offset > prev);
            prev = r.offset;
            let v = value(r);
            let f: Vec<&str> = v.split(';').collect();
            let num = |s: &str| s.split('=').nth(1).unwrap().parse::<i32>().unwrap();
            let at = (num(f[1]), num(f[2]));
            if let Some(before) = last.insert(f[0].to_string(), at) {
                assert!(before < at, "{v} after {before:?}");
            }
        }
    }
    let java_rc = java_read(kafka, topic, JavaIsolation::ReadCommitted, committed.len()).await;
    assert_eq!(
        ours(&committed),
        java(&java_rc),
        "read_committed differs from Java"
    );

    let mut ru = reader(kafka, IsolationLevel::ReadUncommitted, None).await;
    let all = ru
        .read_to_end(topic, &parts)
        .await
        .expect("read_uncommitted");
    let all_values: BTreeSet<String> = all.iter().map(value).collect();
    assert_eq!(
        all.len(),
        txns as usize * 12 + 4,
        "every data record, no control record"
    );
    assert_eq!(all_values.len(), all.len());
    assert!(all_values.is_superset(&distinct));
    assert_eq!(
        all_values.iter().filter(|v| v.ends_with(";abort")).count(),
        3 * 8 + 4
    );
    let java_ru = java_read(kafka, topic, JavaIsolation::ReadUncommitted, all.len()).await;
    assert_eq!(
        ours(&all),
        java(&java_ru),
        "read_uncommitted differs from Java"
    );

    // Positions end at the same place at both levels (LSO = HW now).
    for p in parts {
        assert_eq!(rc.position(topic, p), ru.position(topic, p));
        assert_eq!(rc.high_watermark(topic, p), ru.position(topic, p));
    }

    // Committed group offsets: those of the last committed transaction (t = 7);
    // the aborted transactions' offsets never became visible.
    let offsets = rc
        .committed_offsets(group, topic, &parts)
        .await
        .expect("OffsetFetch");
    assert_eq!(offsets, BTreeMap::from([(0, Some(8)), (1, Some(16))]));
    let none = rc
        .committed_offsets("no-such-group", topic, &parts)
        .await
        .expect("OffsetFetch");
    assert_eq!(none, BTreeMap::from([(0, None), (1, None)]));

    // ListOffsets by timestamp.
    let first = rc
        .list_offsets(topic, &[0], Offset::Timestamp(0))
        .await
        .unwrap()[&0];
    assert_eq!(first.offset, Some(0));
    assert!(first.timestamp.is_some());
    let future = rc
        .list_offsets(topic, &[0], Offset::Timestamp(i64::MAX / 2))
        .await
        .unwrap()[&0];
    assert_eq!(future.offset, None);

    // poll(): seek to the end, nothing; back to the start, records arrive.
    // (auto.offset.reset=none: an out-of-range position is the
    // application's to move.)
    let mut r = reader_resetting(
        kafka,
        IsolationLevel::ReadCommitted,
        None,
        AutoOffsetReset::None,
    )
    .await;
    r.assign(topic, &[0]);
    let end = r.seek(topic, 0, Offset::Latest).await.unwrap();
    assert_eq!(Some(end), rc.position(topic, 0));
    assert!(r.poll(Duration::from_millis(200)).await.unwrap().is_empty());
    assert_eq!(r.position(topic, 0), Some(end));
    r.seek(topic, 0, Offset::At(0)).await.unwrap();
    let got = r.poll(Duration::from_secs(10)).await.unwrap();
    assert!(!got.is_empty() && got[0].offset == 0 && got.iter().all(|x| x.partition == 0));
    assert!(r.position(topic, 0).unwrap() > got.last().unwrap().offset);

    // Beyond the end under none: OFFSET_OUT_OF_RANGE, typed, naming the
    // log's end, position unchanged.
    r.seek(topic, 0, Offset::At(end + 1_000)).await.unwrap();
    match r.poll(Duration::from_secs(5)).await {
        Err(e @ ReaderError::OffsetOutOfRange { .. }) => {
            assert!(!e.is_retriable());
            assert!(
                matches!(e, ReaderError::OffsetOutOfRange { offset, end_offset: Some(at), .. } if offset == end + 1_000 && at == end),
                "{e}"
            );
            assert_eq!(
                e.error_code(),
                Some(kafka_proto::ErrorCode::OffsetOutOfRange)
            );
        }
        other => panic!("expected OFFSET_OUT_OF_RANGE, got {other:?}"),
    }
    assert_eq!(r.position(topic, 0), Some(end + 1_000));
}

/// While AbortingProducer holds its last transaction open: waits until its
/// records are visible to read_uncommitted, then checks that read_committed
/// stops at the last stable offset, i.e. at the held transaction's first
/// offset, while the high watermark is past it.
async fn held_transaction(kafka: &KafkaCluster, topic: &str) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(240);
    let mut ru = reader(kafka, IsolationLevel::ReadUncommitted, None).await;
    let mut rc = reader(kafka, IsolationLevel::ReadCommitted, None).await;
    loop {
        let why = match check_held(&mut ru, &mut rc, topic).await {
            Ok(()) => return Ok(()),
            Err(why) => why,
        };
        if Instant::now() > deadline {
            return Err(why);
        }
        // Wait for the log to move (a long poll: markers or records), not a sleep.
        ru.poll(Duration::from_millis(500))
            .await
            .map_err(|e| e.to_string())?;
    }
}

async fn check_held(ru: &mut Reader, rc: &mut Reader, topic: &str) -> Result<(), String> {
    let parts = [0, 1];
    let all = ru
        .read_to_end(topic, &parts)
        .await
        .map_err(|e| e.to_string())?;
    let held: Vec<&ConsumerRecord> = all
        .iter()
        .filter(|r| value(r).starts_with("HELD;"))
        .collect();
    if held.len() != 4 {
        return Err(format!("{} held records visible", held.len()));
    }
    let lso = rc
        .list_offsets(topic, &parts, Offset::Latest)
        .await
        .map_err(|e| e.to_string())?;
    let hw = ru
        .list_offsets(topic, &parts, Offset::Latest)
        .await
        .map_err(|e| e.to_string())?;
    let committed = rc
        .read_to_end(topic, &parts)
        .await
        .map_err(|e| e.to_string())?;
    for p in parts {
        let first = held
            .iter()
            .filter(|r| r.partition == p)
            .map(|r| r.offset)
            .min()
            .unwrap();
        let (lso, hw) = (lso[&p].offset.unwrap(), hw[&p].offset.unwrap());
        // Until the earlier transactions' markers are written, the LSO is lower.
        if lso != first || hw <= lso || rc.position(topic, p) != Some(lso) {
            return Err(format!(
                "partition {p}: LSO {lso}, HW {hw}, held from {first}, read_committed at {:?}",
                rc.position(topic, p)
            ));
        }
        assert_eq!(rc.last_stable_offset(topic, p), Some(lso), "Fetch LSO");
    }
    assert!(
        !committed
            .iter()
            .any(|r| value(r).contains("HELD") || value(r).ends_with(";abort")),
        "read_committed returned uncommitted data"
    );
    let got: BTreeSet<String> = committed.iter().map(value).collect();
    assert_eq!(got, expected_committed(9), "read_committed below the LSO");
    Ok(())
}
