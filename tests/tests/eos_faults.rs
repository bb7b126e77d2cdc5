//! The exactly-once checkers under broker faults: the seeded schedules of
//! `producer_eos_checker` (the transactional producer) and of
//! `sink_eos_checker` (the EXACTLY_ONCE Kafka sink with checkpoints,
//! restores and failovers) — same operations, same invariants — on a
//! three-node cluster of each variant (Kafka 4.4 with transaction version
//! 2, 4.4 formatted with transaction version 1, and 3.9) with replication
//! factor 3 and `min.insync.replicas` 2, while a seeded nemesis
//! (`support::nemesis`) kills partition leaders and the transaction and
//! group coordinators with SIGKILL, pauses brokers with SIGSTOP past the
//! client's request timeout, delays, holds (and later delivers),
//! black-holes and cuts the client's connections through the fault
//! proxies, and starves the client of CPU.
//!
//! Invariant: each checker's invariants once every fault is healed; for
//! the producer, also the anomaly classes of Jepsen's analyses of Kafka
//! transactions, checked on the history: lost write (a record of a
//! committed transaction missing), duplicate, aborted read (G1a: a record
//! of an aborted transaction visible read_committed, at the end or seen by
//! a reader watching during the schedule), inconsistent offsets (a
//! read_committed and a read_uncommitted record at one offset differ) and
//! precommitted read (a record visible read_committed before its commit
//! was called). The sink's invariant (exactly the records of its last
//! checkpoint, each once, in order) covers lost writes, duplicates and
//! aborted reads of its own.
//!
//! Seeds are printed; `EOS_SEED=<seed>` replays one schedule and its faults
//! (the seed fixes the plan, not the interleaving), `EOS_SCHEDULES=<n>`
//! runs `n` per variant and checker (1 by default, what CI runs; a soak
//! sets more). Each test prints its totals: schedules, operations, records
//! and faults injected per kind. The tests of one process share one cluster
//! slot: one three-node cluster at a time, handed on between the producer
//! and the sink test of one variant (their names sort them together). CI
//! runs each variant's tests as a process of its own, the variants side by
//! side.

use super::{producer_eos_checker, sink_eos_checker};
use crate::support::nemesis::ScheduleSetup as Setup;
use crate::support::nemesis::{self, Control, FaultCounts};
use kafka_client::{Cluster, ClusterConfig};
use kafka_testcontainers::KafkaCluster;
use kafka_testcontainers::SharedKafka;
use kafka_testcontainers::schedule_seeds;
use kafka_testcontainers::{ClusterSlot, SlotGuard};
use std::sync::Arc;
use std::time::{Duration, Instant};

static SLOT: ClusterSlot = ClusterSlot::new();

/// The client's request timeout in these schedules: pauses and held
/// requests outlast it.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// The producer checker, Kafka 4.4, transaction version 2.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_4_4_tv2_producer_faulted_schedules_exactly_once() {
    faulted(SharedKafka::Kafka44Tv2, Checker::Producer).await;
}

/// The producer checker, Kafka 4.4 formatted with transaction version 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_4_4_tv1_producer_faulted_schedules_exactly_once() {
    faulted(SharedKafka::Kafka44Tv1, Checker::Producer).await;
}

/// The producer checker, Kafka 3.9.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_3_9_producer_faulted_schedules_exactly_once() {
    faulted(SharedKafka::Kafka39, Checker::Producer).await;
}

/// The sink checker, Kafka 4.4, transaction version 2.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_4_4_tv2_sink_faulted_schedules_exactly_once() {
    faulted(SharedKafka::Kafka44Tv2, Checker::Sink).await;
}

/// The sink checker, Kafka 4.4 formatted with transaction version 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_4_4_tv1_sink_faulted_schedules_exactly_once() {
    faulted(SharedKafka::Kafka44Tv1, Checker::Sink).await;
}

/// The sink checker, Kafka 3.9.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_3_9_sink_faulted_schedules_exactly_once() {
    faulted(SharedKafka::Kafka39, Checker::Sink).await;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Checker {
    Producer,
    Sink,
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

async fn faulted(variant: SharedKafka, checker: Checker) {
    let kafka = three_nodes(variant).await;
    let cluster = Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
        .await
        .unwrap();
    let (seeds, _) = schedule_seeds(1);
    eprintln!("{variant} {checker:?} (3 nodes, faults): schedule seeds {seeds:?}");
    let mut faults = FaultCounts::default();
    for seed in &seeds {
        let seed = *seed;
        let t = Instant::now();
        eprintln!("{variant} {checker:?} (faults): schedule seed={seed} starting");
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
            watch: checker == Checker::Producer,
            targets: Some(control.clone()),
            pace: Duration::from_millis(100),
            ..Setup::default()
        };
        let run = async {
            let work = async {
                match checker {
                    Checker::Producer => {
                        let stats =
                            producer_eos_checker::schedule(&*kafka, &cluster, seed, &setup).await;
                        format!("{stats:?}")
                    }
                    Checker::Sink => {
                        let (ops, n) =
                            sink_eos_checker::schedule(&*kafka, &cluster, seed, &setup).await;
                        format!("{ops} operations, {n} records committed")
                    }
                }
            };
            tokio::join!(
                work,
                nemesis::run(&kafka, &control, seed ^ 0x5eed, REQUEST_TIMEOUT),
            )
        };
        let (stats, counts) = tokio::time::timeout(Duration::from_secs(600), run)
            .await
            .unwrap_or_else(|_| {
                panic!("{variant} {checker:?}: faulted seed {seed} made no progress for 600 s (replay: EOS_SEED={seed})")
            });
        eprintln!(
            "{variant} {checker:?} (faults): schedule seed={seed} passed in {:?}: {stats}, faults {counts:?}",
            t.elapsed()
        );
        faults.add(&counts);
    }
    eprintln!(
        "{variant} {checker:?} (3 nodes, faults): totals {} schedules, faults injected {:?} ({} kills skipped: no target), 0 violations",
        seeds.len(),
        faults.injected,
        faults.skipped
    );
}

/// Invariant: the EXACTLY_ONCE Kafka sink starts while one broker of the
/// cluster is dead (killed, still listed in metadata until the controller
/// fences it): its check of `transaction.max.timeout.ms` asks the next
/// broker. Found by the faulted sink schedules (seed 583780129196 on 4.4
/// TV2), where every restore failed while the first broker was down.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_4_4_tv2_sink_connects_while_a_broker_is_dead() {
    use kafka_producer::ProducerConfig;
    use kafka_sink::kafka::{KafkaSink, KafkaSinkConfig, Semantic, SimpleStringSchema, ValueOnly};
    let kafka = three_nodes(SharedKafka::Kafka44Tv2).await;
    let topic = kafka_testcontainers::unique_name("sink-dead-broker");
    kafka.create_topic(&topic, 1, 3).await.unwrap();
    // The broker the check asked first: the lowest node id.
    let first = (0..kafka.node_count())
        .min_by_key(|i| kafka.node_id(*i))
        .unwrap();
    kafka.kill(first).unwrap();
    let props = ProducerConfig::from_properties([
        ("bootstrap.servers", kafka.bootstrap().as_str()),
        ("request.timeout.ms", "5000"),
    ])
    .unwrap();
    let mut config = KafkaSinkConfig::new(props, topic.as_str());
    config.semantic = Semantic::ExactlyOnce;
    config.transactional_id_prefix = Some(kafka_testcontainers::unique_name("dead"));
    config.transaction_timeout = Duration::from_secs(60);
    let connected = KafkaSink::connect(config, ValueOnly(SimpleStringSchema)).await;
    kafka.start_node(first).unwrap();
    nemesis::wait_healthy(&kafka).await;
    let sink: KafkaSink<String> = connected.expect("the sink connects with one broker dead");
    drop(sink);
}
