//! Resume across a TV2 producer-id rollover, against a real broker (Kafka
//! 4.4, transaction version 2, one node).
//!
//! Under TV2 every EndTxn bumps the epoch. The coordinator counts an epoch
//! as exhausted at `i16::MAX - 1` (32766): the EndTxn of a transaction at
//! that epoch moves the transactional id to a **new producer id** at epoch
//! 0, and a retry of that EndTxn (old pid, epoch 32766) is recognised for as
//! long as the new pid is still at epoch 0.
//!
//! The epoch is walked to the edge cheaply with raw InitProducerId requests
//! (each a bump by one, no transaction; pipelined on one connection) up to
//! 32765; the producer's own `init_transactions` then takes it to 32766.
//! Three ids are walked concurrently (the time is printed):
//!
//! 1. `roll-commit`: a transaction prepared at epoch 32766, its producer
//!    gone, is committed by `commit_prepared` from a fresh client: the
//!    records are visible read_committed exactly once, the coordinator (and
//!    the answer to a repeated EndTxn) moved to a new producer id at epoch
//!    0, and a repeated `commit_prepared` reports `AlreadyCommitted`. Then a
//!    transaction prepared on the new producer id (epoch 1) resumes too.
//! 2. `roll-abort`: the same with `abort_prepared`: the records stay
//!    invisible to read_committed readers.
//! 3. `roll-live`: a live producer commits at epoch 32766 and adopts the new
//!    producer id/epoch 0 from EndTxn v5; its next transaction, prepared at
//!    (new pid, epoch 0), is committed by `commit_prepared`.

use kafka_admin::{self as admin, TransactionSnapshot};
use kafka_client::{Cluster, ClusterConfig};
use kafka_client::{CoordinatorType, find_coordinator};
use kafka_consumer::{IsolationLevel, Reader, ReaderConfig};
use kafka_producer::kafka_proto::ErrorCode;
use kafka_producer::kafka_proto::messages::{EndTxnRequest, InitProducerIdRequest};
use kafka_producer::txn::{
    PreparedTransaction, ProducerIdAndEpoch, ResumeOptions, ResumeOutcome, TransactionState,
    TransactionVersion, abort_prepared, commit_prepared,
};
use kafka_producer::{ProducerConfig, ProducerRecord, TransactionalProducer};
use kafka_testcontainers::{KafkaCluster, KafkaVersion};
use std::sync::Arc;
use std::time::{Duration, Instant};

const TOPIC: &str = "rollover";
/// The coordinator's exhaustion threshold (`epoch >= i16::MAX - 1`).
const EXHAUSTED: i16 = i16::MAX - 1;
const TIMEOUT_MS: i32 = 120_000;

/// Bumps the epoch of `id` to `EXHAUSTED - 1` with InitProducerId(-1, -1)
/// (each fences the previous epoch: +1, no transaction), pipelined on one
/// connection: the broker handles a connection's requests one at a time, so
/// exactly one bump per request, and sending exactly the number missing
/// never overshoots into a rollover. Returns the producer at the edge.
async fn walk_to_edge(cluster: &Cluster, id: &str) -> ProducerIdAndEpoch {
    let c = find_coordinator(cluster, CoordinatorType::Transaction, id)
        .await
        .expect("coordinator");
    let conn = c.connection;
    let mut p = ProducerIdAndEpoch::NONE;
    while p.epoch < EXHAUSTED - 1 {
        let missing = if p.is_valid() {
            (EXHAUSTED - 1 - p.epoch) as usize
        } else {
            1
        };
        let mut set = tokio::task::JoinSet::new();
        for _ in 0..missing.min(512) {
            let conn = conn.clone();
            let req = InitProducerIdRequest::transactional(id, TIMEOUT_MS);
            set.spawn(async move { conn.send(&req, 5).await.expect("InitProducerId") });
        }
        let mut retry = false;
        while let Some(r) = set.join_next().await {
            let r = r.unwrap();
            match ErrorCode::from(r.error_code) {
                ErrorCode::None => {}
                // Coordinator still loading: not bumped, try again.
                e if e.is_retriable() => {
                    retry = true;
                    continue;
                }
                e => panic!("{id}: InitProducerId at {p:?}: {e:?}"),
            }
            if p.is_valid() {
                assert_eq!(r.producer_id, p.producer_id, "{id}: a bump keeps the pid");
            }
            if !p.is_valid() || r.producer_epoch > p.epoch {
                p = ProducerIdAndEpoch {
                    producer_id: r.producer_id,
                    epoch: r.producer_epoch,
                };
            }
        }
        if retry {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    assert_eq!(p.epoch, EXHAUSTED - 1, "{id}: no overshoot");
    p
}

async fn producer(bootstrap: &str, id: &str) -> TransactionalProducer {
    let config = ProducerConfig::from_properties([
        ("bootstrap.servers", bootstrap),
        ("transactional.id", id),
        ("transaction.timeout.ms", "120000"),
        ("max.block.ms", "30000"),
    ])
    .unwrap();
    TransactionalProducer::connect(config).await.unwrap()
}

/// Begins a transaction, writes `n` records `tag-i` and waits for them.
async fn write(p: &TransactionalProducer, tag: &str, n: usize) {
    p.begin_transaction().unwrap();
    let sends: Vec<_> = (0..n)
        .map(|i| p.send(ProducerRecord::new(TOPIC).value(format!("{tag}-{i}"))))
        .collect();
    for s in sends {
        s.await.expect("record acknowledged");
    }
}

/// What a crashed writer left: prepared, persisted, read back.
async fn prepare_and_crash(p: TransactionalProducer) -> PreparedTransaction {
    let prepared = p.prepare_transaction().await.unwrap();
    // The producer goes away without ending its transaction.
    p.close(Duration::from_secs(5)).await.unwrap();
    PreparedTransaction::decode(&prepared.encode()).unwrap()
}

async fn describe(cluster: &Cluster, id: &str) -> TransactionSnapshot {
    admin::describe_transactions(cluster, &[id])
        .await
        .unwrap()
        .remove(0)
        .snapshot
}

/// Waits until the coordinator has finished the transaction (markers
/// written), polling DescribeTransactions.
async fn completed(cluster: &Cluster, id: &str, state: TransactionState) -> TransactionSnapshot {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let d = describe(cluster, id).await;
        if d.state == state {
            return d;
        }
        assert!(
            Instant::now() < deadline,
            "{id}: never reached {state}: {d:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn values(cluster: &Arc<Cluster>, isolation: IsolationLevel, tag: &str) -> Vec<String> {
    let mut r = Reader::new(
        cluster.clone(),
        ReaderConfig {
            isolation,
            ..Default::default()
        },
    );
    let mut v: Vec<String> = r
        .read_to_end(TOPIC, &[0])
        .await
        .expect("read")
        .iter()
        .map(|r| String::from_utf8_lossy(r.value.as_deref().unwrap_or_default()).into_owned())
        .filter(|v| v.starts_with(&format!("{tag}-")))
        .collect();
    v.sort();
    v
}

fn expected(tag: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{tag}-{i}")).collect()
}

/// The raw answer to EndTxn v5 (pid, epoch, commit).
async fn end_txn(
    cluster: &Cluster,
    p: &PreparedTransaction,
    commit: bool,
) -> (ErrorCode, i64, i16) {
    let c = find_coordinator(cluster, CoordinatorType::Transaction, &p.transactional_id)
        .await
        .unwrap();
    let r = c
        .connection
        .send(
            &EndTxnRequest {
                transactional_id: p.transactional_id.clone(),
                producer_id: p.producer_id,
                producer_epoch: p.producer_epoch,
                committed: commit,
                ..Default::default()
            },
            5,
        )
        .await
        .unwrap();
    (
        ErrorCode::from(r.error_code),
        r.producer_id,
        r.producer_epoch,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_across_a_tv2_producer_id_rollover_kafka_4_4() {
    let started = Instant::now();
    let kafka = KafkaCluster::builder()
        .version(KafkaVersion::V4_4)
        .nodes(1)
        .transaction_version(2)
        // ~100k coordinator requests: the steady-state JIT pays for itself.
        .fast_jvm(false)
        .start()
        .await
        .expect("start cluster");
    kafka.create_topic(TOPIC, 1, 1).await.expect("create topic");
    eprintln!("cluster up ({:?})", started.elapsed());
    let bootstrap = kafka.bootstrap();
    let cluster = Cluster::connect(ClusterConfig::new(&bootstrap))
        .await
        .unwrap();
    let opts = ResumeOptions::default();

    // ---- the walk (three ids at once)
    let walk = Instant::now();
    let ids: [&'static str; 3] = ["roll-commit", "roll-abort", "roll-live"];
    let walked: Vec<ProducerIdAndEpoch> = {
        let mut set = tokio::task::JoinSet::new();
        for (i, id) in ids.into_iter().enumerate() {
            let cluster = cluster.clone();
            set.spawn(async move { (i, walk_to_edge(&cluster, id).await) });
        }
        let mut v = vec![ProducerIdAndEpoch::NONE; ids.len()];
        while let Some(r) = set.join_next().await {
            let (i, p) = r.unwrap();
            v[i] = p;
        }
        v
    };
    eprintln!(
        "walked {} ids to epoch {} in {:?} ({} InitProducerId each)",
        ids.len(),
        EXHAUSTED - 1,
        walk.elapsed(),
        EXHAUSTED
    );

    // ---- 1. commit_prepared across the rollover, then a repeat
    let p = producer(&bootstrap, "roll-commit").await;
    p.init_transactions().await.unwrap();
    let at_edge = ProducerIdAndEpoch {
        epoch: EXHAUSTED,
        ..walked[0]
    };
    assert_eq!(p.producer_id_and_epoch(), at_edge, "init bumps to 32766");
    assert_eq!(p.transaction_version(), TransactionVersion::V2);
    write(&p, "c1", 3).await;
    let prepared = prepare_and_crash(p).await;
    assert_eq!(prepared.producer(), at_edge);
    let fresh = Cluster::connect(ClusterConfig::new(&bootstrap))
        .await
        .unwrap();
    assert_eq!(
        commit_prepared(&fresh, &prepared, &opts).await.unwrap(),
        ResumeOutcome::Committed
    );
    let d = completed(&cluster, "roll-commit", TransactionState::CompleteCommit).await;
    assert_ne!(d.producer_id, prepared.producer_id, "rolled to a new pid");
    assert_eq!(d.producer_epoch, 0, "the new pid starts at epoch 0");
    assert_eq!(
        values(&cluster, IsolationLevel::ReadCommitted, "c1").await,
        expected("c1", 3),
        "visible once"
    );
    // A retry of the EndTxn: answered NONE with the new producer id.
    assert_eq!(
        end_txn(&fresh, &prepared, true).await,
        (ErrorCode::None, d.producer_id, 0)
    );
    assert_eq!(
        commit_prepared(&fresh, &prepared, &opts).await.unwrap(),
        ResumeOutcome::AlreadyCommitted
    );
    assert_eq!(
        values(&cluster, IsolationLevel::ReadCommitted, "c1").await,
        expected("c1", 3),
        "still exactly once"
    );
    // A transaction prepared on the new producer id resumes as well.
    let p = producer(&bootstrap, "roll-commit").await;
    p.init_transactions().await.unwrap();
    let after = ProducerIdAndEpoch {
        producer_id: d.producer_id,
        epoch: 1,
    };
    assert_eq!(p.producer_id_and_epoch(), after);
    write(&p, "c2", 2).await;
    let prepared = prepare_and_crash(p).await;
    assert_eq!(prepared.producer(), after);
    assert_eq!(
        commit_prepared(&fresh, &prepared, &opts).await.unwrap(),
        ResumeOutcome::Committed
    );
    completed(&cluster, "roll-commit", TransactionState::CompleteCommit).await;
    assert_eq!(
        values(&cluster, IsolationLevel::ReadCommitted, "c2").await,
        expected("c2", 2)
    );
    eprintln!(
        "1. commit across the rollover: ok ({:?})",
        started.elapsed()
    );

    // ---- 2. abort_prepared across the rollover
    let p = producer(&bootstrap, "roll-abort").await;
    p.init_transactions().await.unwrap();
    let at_edge = ProducerIdAndEpoch {
        epoch: EXHAUSTED,
        ..walked[1]
    };
    assert_eq!(p.producer_id_and_epoch(), at_edge);
    write(&p, "a1", 3).await;
    let prepared = prepare_and_crash(p).await;
    assert_eq!(
        abort_prepared(&fresh, &prepared, &opts).await.unwrap(),
        ResumeOutcome::Aborted
    );
    let d = completed(&cluster, "roll-abort", TransactionState::CompleteAbort).await;
    assert_ne!(d.producer_id, prepared.producer_id, "rolled to a new pid");
    assert_eq!(d.producer_epoch, 0);
    assert_eq!(
        values(&cluster, IsolationLevel::ReadCommitted, "a1").await,
        Vec::<String>::new(),
        "aborted: hidden from read_committed"
    );
    assert_eq!(
        values(&cluster, IsolationLevel::ReadUncommitted, "a1").await,
        expected("a1", 3),
        "but written"
    );
    assert_eq!(
        abort_prepared(&fresh, &prepared, &opts).await.unwrap(),
        ResumeOutcome::AlreadyAborted
    );
    eprintln!("2. abort across the rollover: ok ({:?})", started.elapsed());

    // ---- 3. a live producer crosses the rollover, then resumes
    let p = producer(&bootstrap, "roll-live").await;
    p.init_transactions().await.unwrap();
    assert_eq!(
        p.producer_id_and_epoch(),
        ProducerIdAndEpoch {
            epoch: EXHAUSTED,
            ..walked[2]
        }
    );
    write(&p, "l1", 2).await;
    p.commit_transaction().await.unwrap();
    let rolled = p.producer_id_and_epoch();
    assert_ne!(
        rolled.producer_id, walked[2].producer_id,
        "adopted the new pid"
    );
    assert_eq!(rolled.epoch, 0, "from EndTxn v5");
    let d = completed(&cluster, "roll-live", TransactionState::CompleteCommit).await;
    assert_eq!((d.producer_id, d.producer_epoch), (rolled.producer_id, 0));
    write(&p, "l2", 2).await;
    let prepared = prepare_and_crash(p).await;
    assert_eq!(prepared.producer(), rolled, "prepared at (new pid, 0)");
    assert_eq!(
        commit_prepared(&fresh, &prepared, &opts).await.unwrap(),
        ResumeOutcome::Committed
    );
    completed(&cluster, "roll-live", TransactionState::CompleteCommit).await;
    assert_eq!(
        values(&cluster, IsolationLevel::ReadCommitted, "l1").await,
        expected("l1", 2)
    );
    assert_eq!(
        values(&cluster, IsolationLevel::ReadCommitted, "l2").await,
        expected("l2", 2)
    );
    assert_eq!(
        commit_prepared(&fresh, &prepared, &opts).await.unwrap(),
        ResumeOutcome::AlreadyCommitted
    );
    eprintln!(
        "3. live producer across the rollover: ok ({:?})",
        started.elapsed()
    );
}
