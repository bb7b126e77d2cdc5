//! The transactional producer's exactly-once checker under broker faults:
//! the seeded schedules of `producer_eos_checker` (same operations, same
//! invariants) on a three-node cluster of each variant — Kafka 4.4 with
//! transaction version 2, 4.4 formatted with transaction version 1, and
//! 3.9 — with replication factor 3 and `min.insync.replicas` 2, while a
//! seeded nemesis (`support::nemesis`) kills partition leaders and the
//! transaction and group coordinators with SIGKILL, pauses brokers with
//! SIGSTOP past the client's request timeout, delays, holds (and later
//! delivers), black-holes and cuts the client's connections through the
//! fault proxies, and starves the client of CPU.
//!
//! Invariant: the six invariants of `producer_eos_checker` after every
//! fault is healed, plus the anomaly classes of Jepsen's analyses of Kafka
//! transactions, checked on the history: lost write (a record of a
//! committed transaction missing), duplicate, aborted read (G1a: a record
//! of an aborted transaction visible read_committed, at the end or seen by
//! a reader watching during the schedule), inconsistent offsets (a
//! read_committed and a read_uncommitted record at one offset differ) and
//! precommitted read (a record visible read_committed before its commit
//! was called).
//!
//! Seeds are printed; `EOS_SEED=<seed>` replays one schedule and its faults
//! (the seed fixes the plan, not the interleaving), `EOS_SCHEDULES=<n>`
//! runs `n` per variant (2 by default, what CI runs; a soak sets more).
//! Each variant prints its totals: schedules, operations, records and
//! faults injected per kind.

use super::producer_eos_checker::{Setup, schedule};
use crate::support::nemesis::{self, Control, FaultCounts};
use kafka_client::{Cluster, ClusterConfig};
use kafka_testcontainers::KafkaCluster;
use kafka_testcontainers::seeded::schedule_seeds;
use kafka_testcontainers::shared::SharedKafka;
use kafka_testcontainers::slot::{ClusterSlot, SlotGuard};
use std::sync::Arc;
use std::time::{Duration, Instant};

static SLOT: ClusterSlot = ClusterSlot::new();

/// The client's request timeout in these schedules: pauses and held
/// requests outlast it.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// Kafka 4.4, transaction version 2.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faulted_schedules_exactly_once_kafka_4_4_tv2() {
    faulted(SharedKafka::Kafka44Tv2).await;
}

/// Kafka 4.4 formatted with transaction version 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faulted_schedules_exactly_once_kafka_4_4_tv1() {
    faulted(SharedKafka::Kafka44Tv1).await;
}

/// Kafka 3.9.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faulted_schedules_exactly_once_kafka_3_9() {
    faulted(SharedKafka::Kafka39).await;
}

/// A three-node cluster of the variant with fault proxies (the last one's,
/// handed on, when of the same variant and every node runs).
async fn three_nodes(variant: SharedKafka) -> SlotGuard<'static> {
    let key = format!("{variant} three nodes proxied");
    let kafka = SLOT
        .lock(&key, || {
            let b = KafkaCluster::builder()
                .version(variant.version())
                .nodes(3)
                .with_proxies(true)
                .broker_config("min.insync.replicas", "2")
                .broker_config("default.replication.factor", "3")
                .broker_config(
                    "transaction.abort.timed.out.transaction.cleanup.interval.ms",
                    "500",
                );
            match variant.transaction_version() {
                Some(tv) => b.transaction_version(tv),
                None => b,
            }
        })
        .await
        .expect("a three-node cluster");
    if kafka.reused() {
        nemesis::wait_healthy(&kafka).await;
    }
    kafka
}

async fn faulted(variant: SharedKafka) {
    let kafka = three_nodes(variant).await;
    let cluster = Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
        .await
        .unwrap();
    let (seeds, _) = schedule_seeds(2);
    eprintln!("{variant} (3 nodes, faults): schedule seeds {seeds:?}");
    let mut faults = FaultCounts::default();
    let (mut operations, mut records) = (0, 0);
    for seed in &seeds {
        let seed = *seed;
        let t = Instant::now();
        eprintln!("{variant} (faults): schedule seed={seed} starting");
        let control = Arc::new(Control::default());
        let heal = control.clone();
        let setup = Setup {
            replication: 3,
            producer_props: vec![
                (
                    "request.timeout.ms".into(),
                    REQUEST_TIMEOUT.as_millis().to_string(),
                ),
                ("max.block.ms".into(), "60000".into()),
            ],
            quiesce: Some(Arc::new(move || {
                let heal = heal.clone();
                Box::pin(async move { heal.heal().await })
            })),
            watch: true,
            targets: Some(control.clone()),
            pace: Duration::from_millis(100),
        };
        let run = async {
            let (stats, counts) = tokio::join!(
                schedule(&kafka, &cluster, seed, &setup),
                nemesis::run(&kafka, &control, seed ^ 0x5eed, REQUEST_TIMEOUT),
            );
            (stats, counts)
        };
        let (stats, counts) = tokio::time::timeout(Duration::from_secs(600), run)
            .await
            .unwrap_or_else(|_| {
                panic!("{variant}: faulted seed {seed} made no progress for 600 s (replay: EOS_SEED={seed})")
            });
        eprintln!(
            "{variant} (faults): schedule seed={seed} passed in {:?}: {stats:?}, faults {counts:?}",
            t.elapsed()
        );
        operations += stats.operations;
        records += stats.sent;
        faults.add(&counts);
    }
    eprintln!(
        "{variant} (3 nodes, faults): totals {} schedules, {operations} operations, {records} records, faults injected {:?} ({} kills skipped: target unknown), 0 violations",
        seeds.len(),
        faults.injected,
        faults.skipped
    );
}
