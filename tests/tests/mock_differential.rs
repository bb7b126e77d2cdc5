//! kafka-mock against the real broker, differentially: the same scripted
//! request sequences go to a one-broker kafka-mock and to the harness's
//! real single-node Kafka 4.4 (transaction version 2, and formatted with
//! transaction version 1), and what a client observes — error codes,
//! offsets, epochs, the last stable offset, visible records, aborted
//! transactions, committed offsets — must be the same. A difference is a
//! mock bug (fixed, or listed in kafka-mock's crate docs).
//!
//! Each scenario uses names of its own (fresh topics start at offset 0 on
//! both) and retries the answers of a broker still settling —
//! CONCURRENT_TRANSACTIONS and the coordinator errors (a real coordinator
//! answers them while its markers are in flight or while it loads; the
//! mock writes markers at once), NOT_LEADER_OR_FOLLOWER and
//! UNKNOWN_TOPIC_OR_PARTITION (a new topic's leader not ready yet) — so
//! only answers both must give are compared.

use bytes::{Bytes, BytesMut};
use kafka_client::{Connection, ConnectionConfig};
use kafka_mock::{MockCluster, MockConfig, TransactionVersion};
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;
use kafka_proto::record::{Compression, Record, RecordBatchBuilder, RecordBatches};
use kafka_testcontainers::{SharedKafka, recent_timestamp, unique_name};
use std::time::Duration;

/// One observation per line.
type Seen = Vec<String>;

fn code(c: i16) -> String {
    format!("{:?}", ErrorCode::from(c))
}

async fn connect(bootstrap: &str) -> Connection {
    let addr = bootstrap.split(',').next().unwrap();
    Connection::connect(addr, &ConnectionConfig::default())
        .await
        .expect("connect")
}

fn batch(pid: i64, epoch: i16, seq: i32, n: usize, txn: bool) -> Bytes {
    let mut b = RecordBatchBuilder::new(Compression::None)
        .producer(pid, epoch, seq)
        .transactional(txn);
    for i in 0..n {
        b.push(Record::new(
            recent_timestamp() + i as i64,
            None,
            Some(Bytes::from(format!("v{seq}-{i}"))),
        ));
    }
    let mut out = BytesMut::new();
    b.encode(&mut out).unwrap();
    out.freeze()
}

async fn create_topic(c: &Connection, name: &str, partitions: i32) {
    let req = CreateTopicsRequest {
        topics: vec![CreateTopicsRequestCreatableTopic {
            name: name.into(),
            num_partitions: partitions,
            replication_factor: 1,
            ..Default::default()
        }],
        timeout_ms: 30_000,
        ..Default::default()
    };
    let resp = c.send(&req, 7).await.unwrap();
    assert_eq!(resp.topics[0].error_code, 0, "create {name}");
    // Wait until the leader knows it.
    for _ in 0..200 {
        let md = c
            .send(
                &MetadataRequest {
                    topics: Some(vec![MetadataRequestTopic {
                        name: Some(name.into()),
                        ..Default::default()
                    }]),
                    allow_auto_topic_creation: false,
                    ..Default::default()
                },
                12,
            )
            .await
            .unwrap();
        if md.topics[0].error_code == 0 && md.topics[0].partitions.iter().all(|p| p.leader_id >= 0)
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("topic {name} never got a leader");
}

/// Sends `req` until the answer is not one of the transient coordinator
/// errors; returns the answer.
async fn retry_transient<R, F>(mut send: F) -> R
where
    F: AsyncFnMut() -> (R, i16),
{
    for _ in 0..300 {
        let (resp, c) = send().await;
        let e = ErrorCode::from(c);
        // Transient on a broker that is still settling (a new topic's
        // leader not ready yet, markers in flight, a coordinator loading).
        if !matches!(
            e,
            ErrorCode::ConcurrentTransactions
                | ErrorCode::CoordinatorLoadInProgress
                | ErrorCode::CoordinatorNotAvailable
                | ErrorCode::NotCoordinator
                | ErrorCode::NotLeaderOrFollower
                | ErrorCode::LeaderNotAvailable
                | ErrorCode::UnknownTopicOrPartition
        ) {
            return resp;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("still transient after 300 tries");
}

async fn produce(
    c: &Connection,
    version: i16,
    tid: Option<&str>,
    topic: &str,
    records: Bytes,
) -> (String, i64) {
    let req = ProduceRequest {
        transactional_id: tid.map(String::from),
        acks: -1,
        timeout_ms: 30_000,
        topic_data: vec![ProduceRequestTopicProduceData {
            name: topic.into(),
            partition_data: vec![ProduceRequestPartitionProduceData {
                index: 0,
                records: Some(records),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let resp = retry_transient(async || {
        let r = c.send(&req, version).await.unwrap();
        let c = r.responses[0].partition_responses[0].error_code;
        (r, c)
    })
    .await;
    let p = &resp.responses[0].partition_responses[0];
    (code(p.error_code), p.base_offset)
}

async fn init_pid(
    c: &Connection,
    tid: Option<&str>,
    expected: Option<(i64, i16)>,
) -> (String, i64, i16) {
    let mut req = match tid {
        Some(t) => InitProducerIdRequest::transactional(t, 60_000),
        None => InitProducerIdRequest::idempotent(),
    };
    if let Some((pid, epoch)) = expected {
        req.producer_id = pid;
        req.producer_epoch = epoch;
    }
    let r = retry_transient(async || {
        let r = c.send(&req, 5).await.unwrap();
        let e = r.error_code;
        (r, e)
    })
    .await;
    (code(r.error_code), r.producer_id, r.producer_epoch)
}

async fn end_txn(
    c: &Connection,
    version: i16,
    tid: &str,
    pid: i64,
    epoch: i16,
    commit: bool,
) -> (String, i16) {
    let req = EndTxnRequest {
        transactional_id: tid.into(),
        producer_id: pid,
        producer_epoch: epoch,
        committed: commit,
        ..Default::default()
    };
    let r = retry_transient(async || {
        let r = c.send(&req, version).await.unwrap();
        let e = r.error_code;
        (r, e)
    })
    .await;
    (code(r.error_code), r.producer_epoch)
}

/// HW, LSO and what a consumer of partition 0 sees, fetching from 0 until
/// the end (a broker may return fewer batches than it has: Kafka's first
/// answer sometimes holds only the first batch): the data records
/// (offset, value), the control batches' offsets and the aborted
/// transactions' first offsets.
async fn fetch_view(c: &Connection, topic: &str, read_committed: bool) -> String {
    let mut records = Vec::new();
    let mut controls = Vec::new();
    let mut aborted: Vec<i64> = Vec::new();
    let mut offset = 0i64;
    let mut last = String::new();
    for _ in 0..100 {
        let req = FetchRequest {
            max_wait_ms: 0,
            min_bytes: 0,
            max_bytes: 1 << 20,
            isolation_level: i8::from(read_committed),
            topics: vec![FetchRequestTopic {
                topic: topic.into(),
                partitions: vec![FetchRequestPartition {
                    partition: 0,
                    fetch_offset: offset,
                    partition_max_bytes: 1 << 20,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        let r = c.send(&req, 12).await.unwrap();
        let p = &r.responses[0].partitions[0];
        last = format!(
            "{} hw={} lso={}",
            code(p.error_code),
            p.high_watermark,
            p.last_stable_offset
        );
        for a in p.aborted_transactions.iter().flatten() {
            if !aborted.contains(&a.first_offset) {
                aborted.push(a.first_offset);
            }
        }
        let end = if read_committed {
            p.last_stable_offset
        } else {
            p.high_watermark
        };
        for b in RecordBatches::new(p.records.clone().unwrap_or_default()) {
            let b = b.unwrap();
            if b.is_control {
                controls.push(b.base_offset);
            } else {
                for r in &b.records {
                    records.push(format!(
                        "{}:{}{}",
                        r.offset,
                        String::from_utf8_lossy(r.value.as_deref().unwrap_or_default()),
                        if b.is_transactional { "(txn)" } else { "" }
                    ));
                }
            }
            offset = offset.max(b.base_offset + i64::from(b.last_offset_delta) + 1);
        }
        if p.error_code != 0 || offset >= end {
            break;
        }
    }
    aborted.sort_unstable();
    format!(
        "fetch rc={read_committed}: {last} records={records:?} markers={controls:?} aborted={aborted:?}"
    )
}

/// Idempotent produce: in order, a retried batch (a duplicate: the
/// original offset, no error), a gap (OUT_OF_ORDER_SEQUENCE_NUMBER), the
/// next in line.
async fn idempotent_sequences(bootstrap: &str) -> Seen {
    let c = connect(bootstrap).await;
    let topic = unique_name("diff-idem");
    create_topic(&c, &topic, 1).await;
    let (e, pid, epoch) = init_pid(&c, None, None).await;
    let mut seen = vec![format!("init: {e} epoch={epoch}")];
    for (what, seq, n) in [
        ("first", 0, 3),
        ("retry", 0, 3),
        ("gap", 5, 1),
        ("next", 3, 2),
        ("old", 1, 1),
    ] {
        let (e, off) = produce(&c, 11, None, &topic, batch(pid, epoch, seq, n, false)).await;
        seen.push(format!("{what} seq={seq}: {e} base={off}"));
    }
    seen.push(fetch_view(&c, &topic, false).await);
    seen
}

/// Transaction version 1: AddPartitionsToTxn, a committed and an aborted
/// transaction, EndTxn repeated (same and opposite outcome), a transactional
/// Produce to a partition not in the transaction, fencing by a second
/// InitProducerId, then what read_committed and read_uncommitted see.
async fn tv1_transactions(bootstrap: &str) -> Seen {
    let c = connect(bootstrap).await;
    let topic = unique_name("diff-tv1");
    let tid = unique_name("diff-tv1-txn");
    create_topic(&c, &topic, 1).await;
    let (e, pid, epoch) = init_pid(&c, Some(&tid), None).await;
    let mut seen = vec![format!("init: {e} epoch={epoch}")];
    let add = AddPartitionsToTxnRequest {
        v3_and_below_transactional_id: tid.clone(),
        v3_and_below_producer_id: pid,
        v3_and_below_producer_epoch: epoch,
        v3_and_below_topics: vec![AddPartitionsToTxnRequestTopic {
            name: topic.clone(),
            partitions: vec![0],
            ..Default::default()
        }],
        ..Default::default()
    };
    let mut seq = 0;
    for (i, commit) in [true, false].into_iter().enumerate() {
        let r = retry_transient(async || {
            let r = c.send(&add, 3).await.unwrap();
            let e = r.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code;
            (r, e)
        })
        .await;
        seen.push(format!(
            "txn{i} add: {}",
            code(r.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code)
        ));
        let (e, off) = produce(&c, 11, Some(&tid), &topic, batch(pid, epoch, seq, 2, true)).await;
        seq += 2;
        seen.push(format!("txn{i} produce: {e} base={off}"));
        let (e, _) = end_txn(&c, 4, &tid, pid, epoch, commit).await;
        seen.push(format!("txn{i} end commit={commit}: {e}"));
        let (e, _) = end_txn(&c, 4, &tid, pid, epoch, commit).await;
        seen.push(format!("txn{i} end again: {e}"));
        let (e, _) = end_txn(&c, 4, &tid, pid, epoch, !commit).await;
        seen.push(format!("txn{i} end opposite: {e}"));
    }
    let (e, off) = produce(&c, 11, Some(&tid), &topic, batch(pid, epoch, seq, 1, true)).await;
    seen.push(format!("produce outside the transaction: {e} base={off}"));
    let (e, _, epoch2) = init_pid(&c, Some(&tid), None).await;
    seen.push(format!("re-init: {e} epoch={epoch2}"));
    let (e, _) = end_txn(&c, 4, &tid, pid, epoch, true).await;
    seen.push(format!("end with the fenced epoch: {e}"));
    seen.push(fetch_view(&c, &topic, true).await);
    seen.push(fetch_view(&c, &topic, false).await);
    seen
}

/// Transaction version 2: the partition added by Produce v12, EndTxn v5
/// bumping the epoch, its retry with the previous epoch, the opposite
/// outcome, an abort of no transaction, a Produce with a stale epoch and
/// one starting a new epoch at a sequence other than 0.
async fn tv2_transactions(bootstrap: &str) -> Seen {
    let c = connect(bootstrap).await;
    let topic = unique_name("diff-tv2");
    let tid = unique_name("diff-tv2-txn");
    create_topic(&c, &topic, 1).await;
    let (e, pid, epoch) = init_pid(&c, Some(&tid), None).await;
    let mut seen = vec![format!("init: {e} epoch={epoch}")];
    let (e, off) = produce(&c, 12, Some(&tid), &topic, batch(pid, epoch, 0, 2, true)).await;
    seen.push(format!("produce: {e} base={off}"));
    let (e, next) = end_txn(&c, 5, &tid, pid, epoch, true).await;
    seen.push(format!("commit: {e} next epoch={}", next - epoch));
    let (e, again) = end_txn(&c, 5, &tid, pid, epoch, true).await;
    seen.push(format!("commit retry: {e} epoch={}", again - epoch));
    let (e, _) = end_txn(&c, 5, &tid, pid, epoch, false).await;
    seen.push(format!("abort with the previous epoch: {e}"));
    let (e, off) = produce(&c, 12, Some(&tid), &topic, batch(pid, epoch, 2, 1, true)).await;
    seen.push(format!("produce with the previous epoch: {e} base={off}"));
    let (e, off) = produce(&c, 12, Some(&tid), &topic, batch(pid, next, 4, 1, true)).await;
    seen.push(format!("produce new epoch at sequence 4: {e} base={off}"));
    let (e, off) = produce(&c, 12, Some(&tid), &topic, batch(pid, next, 0, 1, true)).await;
    seen.push(format!("produce new epoch at sequence 0: {e} base={off}"));
    let (e, after_abort) = end_txn(&c, 5, &tid, pid, next, false).await;
    seen.push(format!("abort: {e} next epoch={}", after_abort - epoch));
    let (e, bumped) = end_txn(&c, 5, &tid, pid, after_abort, false).await;
    seen.push(format!(
        "abort of no transaction: {e} next epoch={}",
        bumped - epoch
    ));
    seen.push(fetch_view(&c, &topic, true).await);
    seen.push(fetch_view(&c, &topic, false).await);
    seen
}

/// Group offsets: a plain commit, then a transactional one (TV1:
/// AddOffsetsToTxn, TxnOffsetCommit) seen as unstable by a require_stable
/// OffsetFetch until the commit, then committed.
async fn group_offsets(bootstrap: &str) -> Seen {
    let c = connect(bootstrap).await;
    let topic = unique_name("diff-offsets");
    let group = unique_name("diff-group");
    let tid = unique_name("diff-offsets-txn");
    create_topic(&c, &topic, 1).await;
    let fc = retry_transient(async || {
        let r = c
            .send(
                &FindCoordinatorRequest {
                    key_type: FindCoordinatorRequest::KEY_TYPE_GROUP,
                    coordinator_keys: vec![group.clone()],
                    ..Default::default()
                },
                4,
            )
            .await
            .unwrap();
        let e = r.coordinators[0].error_code;
        (r, e)
    })
    .await;
    let mut seen = vec![format!(
        "find coordinator: {}",
        code(fc.coordinators[0].error_code)
    )];
    let commit = OffsetCommitRequest {
        group_id: group.clone(),
        generation_id_or_member_epoch: -1,
        topics: vec![OffsetCommitRequestTopic {
            name: topic.clone(),
            partitions: vec![OffsetCommitRequestPartition {
                partition_index: 0,
                committed_offset: 5,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let r = retry_transient(async || {
        let r = c.send(&commit, 8).await.unwrap();
        let e = r.topics[0].partitions[0].error_code;
        (r, e)
    })
    .await;
    seen.push(format!(
        "commit 5: {}",
        code(r.topics[0].partitions[0].error_code)
    ));
    let fetch = async |stable: bool| {
        let r = c
            .send(
                &OffsetFetchRequest {
                    group_id: group.clone(),
                    topics: Some(vec![OffsetFetchRequestTopic {
                        name: topic.clone(),
                        partition_indexes: vec![0],
                        ..Default::default()
                    }]),
                    require_stable: stable,
                    ..Default::default()
                },
                7,
            )
            .await
            .unwrap();
        let p = &r.topics[0].partitions[0];
        format!("{} offset={}", code(p.error_code), p.committed_offset)
    };
    seen.push(format!("fetch: {}", fetch(false).await));
    let (e, pid, epoch) = init_pid(&c, Some(&tid), None).await;
    seen.push(format!("init: {e}"));
    let add = AddOffsetsToTxnRequest {
        transactional_id: tid.clone(),
        producer_id: pid,
        producer_epoch: epoch,
        group_id: group.clone(),
        ..Default::default()
    };
    let r = retry_transient(async || {
        let r = c.send(&add, 3).await.unwrap();
        let e = r.error_code;
        (r, e)
    })
    .await;
    seen.push(format!("add offsets: {}", code(r.error_code)));
    let txn_commit = TxnOffsetCommitRequest {
        transactional_id: tid.clone(),
        group_id: group.clone(),
        producer_id: pid,
        producer_epoch: epoch,
        topics: vec![TxnOffsetCommitRequestTopic {
            name: topic.clone(),
            partitions: vec![TxnOffsetCommitRequestPartition {
                partition_index: 0,
                committed_offset: 9,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let r = retry_transient(async || {
        let r = c.send(&txn_commit, 3).await.unwrap();
        let e = r.topics[0].partitions[0].error_code;
        (r, e)
    })
    .await;
    seen.push(format!(
        "txn offset commit 9: {}",
        code(r.topics[0].partitions[0].error_code)
    ));
    seen.push(format!("fetch require_stable: {}", fetch(true).await));
    seen.push(format!("fetch: {}", fetch(false).await));
    let (e, _) = end_txn(&c, 4, &tid, pid, epoch, true).await;
    seen.push(format!("commit: {e}"));
    // The offsets become visible once the marker is written.
    let mut after = String::new();
    for _ in 0..100 {
        after = fetch(true).await;
        if !after.starts_with("UnstableOffsetCommit") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    seen.push(format!("fetch after the commit: {after}"));
    seen
}

async fn compare(name: &str, real: Seen, mock: Seen) {
    let mut diff = Vec::new();
    for i in 0..real.len().max(mock.len()) {
        let (r, m) = (real.get(i), mock.get(i));
        if r != m {
            diff.push(format!("  real: {r:?}\n  mock: {m:?}"));
        }
    }
    assert!(
        diff.is_empty(),
        "{name}: kafka-mock differs from Kafka:\n{}\nreal:\n{}",
        diff.join("\n"),
        real.join("\n")
    );
    eprintln!(
        "{name}: {} observations agree:\n  {}",
        real.len(),
        real.join("\n  ")
    );
}

async fn mock(tv: TransactionVersion) -> MockCluster {
    MockCluster::start(MockConfig {
        transaction_version: tv,
        ..MockConfig::default()
    })
    .await
    .unwrap()
}

async fn real(variant: SharedKafka) -> String {
    variant.cluster().await.expect("shared cluster").bootstrap()
}

/// Idempotent sequences agree (Kafka 4.4, transaction version 2).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idempotent_sequences_agree() {
    let m = mock(TransactionVersion::V2).await;
    let r = real(SharedKafka::Kafka44Tv2).await;
    compare(
        "idempotent sequences",
        idempotent_sequences(&r).await,
        idempotent_sequences(&m.bootstrap()).await,
    )
    .await;
}

/// Transaction version 1 outcomes agree (Kafka 4.4 formatted with
/// transaction.version=1).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tv1_transactions_agree() {
    let m = mock(TransactionVersion::V1).await;
    let r = real(SharedKafka::Kafka44Tv1).await;
    compare(
        "TV1 transactions",
        tv1_transactions(&r).await,
        tv1_transactions(&m.bootstrap()).await,
    )
    .await;
}

/// Transaction version 2 outcomes agree (Kafka 4.4).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tv2_transactions_agree() {
    let m = mock(TransactionVersion::V2).await;
    let r = real(SharedKafka::Kafka44Tv2).await;
    compare(
        "TV2 transactions",
        tv2_transactions(&r).await,
        tv2_transactions(&m.bootstrap()).await,
    )
    .await;
}

/// Group offsets, plain and transactional, agree (Kafka 4.4, TV1 cluster:
/// AddOffsetsToTxn).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_offsets_agree() {
    let m = mock(TransactionVersion::V1).await;
    let r = real(SharedKafka::Kafka44Tv1).await;
    compare(
        "group offsets",
        group_offsets(&r).await,
        group_offsets(&m.bootstrap()).await,
    )
    .await;
}
