//! The exactly-once checkers — the transactional producer's
//! (`producer_eos_checker`: same operations, same six invariants and
//! Jepsen's anomaly classes) and the EXACTLY_ONCE Kafka sink's
//! (`sink_eos_checker`: checkpoints, restores, failovers) — on kafka-mock
//! clusters of three brokers, with
//! many seeded faults per schedule at exact protocol moments
//! (kafka-mock's seeded `Nemesis`, driven by `support::mock_nemesis`:
//! retriable errors on every API the producer
//! and its readers send, answers lost after the request was applied,
//! connections closed before and after a request, requests delayed past
//! the client's timeout, brokers stopped and unreachable, leaders and
//! coordinators moved).
//!
//! Each schedule runs on a fresh mock (milliseconds to start), so schedules
//! are cheap, and `MOCK_EOS_PARALLEL` of them (8 by default) run at once:
//! CI runs `MOCK_EOS_SCHEDULES` per variant and checker (12 by default); a
//! soak sets thousands. Seeds are printed and `EOS_SEED=<seed>` replays one
//! schedule and its fault plan (the seed fixes the plan, not the
//! interleaving). A schedule that fails here is replayed on a real broker
//! (`EOS_SEED=<seed>` with the real-broker checkers) before the mock or the
//! client is blamed.
//!
//! Variants: Kafka 4.4 with transaction version 2, 4.4 with transaction
//! version 1, and 3.9's API versions; half the schedules also write their
//! markers 0-300 ms after EndTxn (CONCURRENT_TRANSACTIONS for the next
//! transaction meanwhile) and a third use a 3 s transaction timeout (the
//! coordinator aborts slow transactions).

use super::{producer_eos_checker, sink_eos_checker};
use crate::support::mock_nemesis::{self, MockFaultCounts};
use crate::support::nemesis::{Control, ScheduleSetup as Setup};
use kafka_client::{Cluster, ClusterConfig};
use kafka_mock::{KafkaRelease, MockCluster, MockConfig, TransactionVersion};
use kafka_testcontainers::{SeededRng as Rng, fresh_seed};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

/// The client's request timeout in these schedules: delayed and lost
/// answers outlast it.
const REQUEST_TIMEOUT: Duration = Duration::from_millis(1_500);

/// The producer checker, transaction version 2 (Kafka 4.4's default).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mock_4_4_tv2_producer_faulted_schedules_exactly_once() {
    run(
        KafkaRelease::V4_4,
        TransactionVersion::V2,
        Checker::Producer,
    )
    .await;
}

/// The producer checker, Kafka 4.4 with transaction version 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mock_4_4_tv1_producer_faulted_schedules_exactly_once() {
    run(
        KafkaRelease::V4_4,
        TransactionVersion::V1,
        Checker::Producer,
    )
    .await;
}

/// The producer checker, Kafka 3.9's API versions (transaction version 1).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mock_3_9_producer_faulted_schedules_exactly_once() {
    run(
        KafkaRelease::V3_9,
        TransactionVersion::V1,
        Checker::Producer,
    )
    .await;
}

/// The sink checker (EXACTLY_ONCE Kafka sink, checkpoints, restores),
/// transaction version 2.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mock_4_4_tv2_sink_faulted_schedules_exactly_once() {
    run(KafkaRelease::V4_4, TransactionVersion::V2, Checker::Sink).await;
}

/// The sink checker, Kafka 4.4 with transaction version 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mock_4_4_tv1_sink_faulted_schedules_exactly_once() {
    run(KafkaRelease::V4_4, TransactionVersion::V1, Checker::Sink).await;
}

/// The sink checker, Kafka 3.9's API versions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mock_3_9_sink_faulted_schedules_exactly_once() {
    run(KafkaRelease::V3_9, TransactionVersion::V1, Checker::Sink).await;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Checker {
    Producer,
    Sink,
}

/// The seeds: `EOS_SEED` alone, or `MOCK_EOS_SCHEDULES` (default 12) from a
/// fresh base.
fn seeds() -> Vec<u64> {
    if let Ok(s) = std::env::var("EOS_SEED") {
        return vec![s.parse().expect("EOS_SEED is a number")];
    }
    let n: u64 = std::env::var("MOCK_EOS_SCHEDULES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12);
    let base = fresh_seed();
    (0..n).map(|i| base.wrapping_add(i)).collect()
}

async fn run(release: KafkaRelease, tv: TransactionVersion, checker: Checker) {
    // RUST_LOG=kafka_sink=warn,... shows a failing schedule's client side
    // (its transactional ids and topics carry its seed).
    crate::support::trace_to_stderr_under_rust_log();
    let label = format!("mock {release:?} {tv:?} {checker:?}");
    let seeds = seeds();
    eprintln!("{label}: {} schedules from seed {}", seeds.len(), seeds[0]);
    let started = Instant::now();
    let parallel: usize = std::env::var("MOCK_EOS_PARALLEL")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8);
    let mut faults = MockFaultCounts::new();
    let mut queue = seeds.iter().copied();
    let mut running: Vec<Pin<Box<dyn Future<Output = MockFaultCounts> + '_>>> = Vec::new();
    // At most `parallel` schedules at once, each on its own mock (they
    // mostly wait on timeouts), polled by this task.
    std::future::poll_fn(|cx| {
        loop {
            while running.len() < parallel.max(1) {
                match queue.next() {
                    Some(seed) => running.push(Box::pin(one(release, tv, checker, seed, &label))),
                    None => break,
                }
            }
            let before = running.len();
            running.retain_mut(|f| match f.as_mut().poll(cx) {
                Poll::Ready(counts) => {
                    for (k, n) in counts {
                        *faults.entry(k).or_default() += n;
                    }
                    false
                }
                Poll::Pending => true,
            });
            if running.is_empty() {
                return Poll::Ready(());
            }
            if running.len() == before {
                return Poll::Pending;
            }
        }
    })
    .await;
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "{label}: totals {} schedules in {secs:.1} s ({:.2} schedules/s), faults injected {faults:?}, 0 violations",
        seeds.len(),
        seeds.len() as f64 / secs
    );
}

async fn one(
    release: KafkaRelease,
    tv: TransactionVersion,
    checker: Checker,
    seed: u64,
    label: &str,
) -> MockFaultCounts {
    let mut rng = Rng::new(seed ^ 0x6d6f636b);
    let marker_delay = if rng.percent(50) {
        Duration::from_millis(rng.below(300))
    } else {
        Duration::ZERO
    };
    let transaction_timeout = if rng.percent(33) { 3_000 } else { 60_000 };
    let mock = MockCluster::start(MockConfig {
        brokers: 3,
        release,
        transaction_version: tv,
        marker_delay,
        seed,
        ..MockConfig::default()
    })
    .await
    .expect("start the mock");
    let cluster = Cluster::connect(ClusterConfig::new(&mock.bootstrap()))
        .await
        .expect("connect");
    let control = Arc::new(Control::default());
    let heal = control.clone();
    let setup = Setup {
        replication: 1,
        producer_props: vec![
            (
                "request.timeout.ms".into(),
                REQUEST_TIMEOUT.as_millis().to_string(),
            ),
            (
                "transaction.timeout.ms".into(),
                transaction_timeout.to_string(),
            ),
            ("max.block.ms".into(), "30000".into()),
        ],
        quiesce: Some(Arc::new(move || {
            let heal = heal.clone();
            Box::pin(async move { heal.heal().await })
        })),
        watch: checker == Checker::Producer,
        targets: Some(control.clone()),
        pace: Duration::from_millis(5),
        ..Setup::default()
    };
    let _dump = DumpOnPanic(&mock, seed);
    let t = Instant::now();
    let run = async {
        let work = async {
            match checker {
                Checker::Producer => {
                    let stats = producer_eos_checker::schedule(&mock, &cluster, seed, &setup).await;
                    format!("{stats:?}")
                }
                Checker::Sink => {
                    let (ops, n) = sink_eos_checker::schedule(&mock, &cluster, seed, &setup).await;
                    format!("{ops} operations, {n} records committed")
                }
            }
        };
        tokio::join!(
            work,
            mock_nemesis::run(&mock, &control, seed ^ 0x5eed, REQUEST_TIMEOUT),
        )
    };
    let (stats, counts) = tokio::time::timeout(Duration::from_secs(300), run)
        .await
        .unwrap_or_else(|_| {
            panic!(
                "{label}: seed {seed} did not finish within 300 s: stuck, or starved by the \
                 load beside it (replay alone: EOS_SEED={seed})"
            )
        });
    eprintln!(
        "{label} (faults): schedule seed={seed} passed in {:?} (marker delay {marker_delay:?}, transaction timeout {transaction_timeout} ms): {stats:?}, faults {counts:?}",
        t.elapsed()
    );
    cluster.close();
    counts
}

/// Prints the mock's state and its last requests when the schedule fails
/// (a panic unwinding through it), so that a failure that does not replay
/// still shows what the broker held.
struct DumpOnPanic<'a>(&'a MockCluster, u64);

impl Drop for DumpOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let requests = self.0.requests();
            let tail = &requests[requests.len().saturating_sub(300)..];
            eprintln!(
                "seed {}: kafka-mock state when the schedule stopped:\n{}\nlast {} requests: {tail:?}",
                self.1,
                self.0.describe(),
                tail.len()
            );
        }
    }
}
