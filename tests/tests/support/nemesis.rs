//! Seeded broker faults on a three-node cluster with fault proxies, for
//! the exactly-once checkers' faulted mode: one fault at a time, at seeded
//! moments, each healed before the next.
//!
//! | kind | what | healed by |
//! |---|---|---|
//! | `KillLeader` | SIGKILL of the leader of one of the schedule's partitions | a restart, then waiting for every replica in sync |
//! | `KillTxnCoordinator` | SIGKILL of the transactional id's coordinator | the same |
//! | `KillGroupCoordinator` | SIGKILL of the consumer group's coordinator (source offsets; skipped without a group) | the same |
//! | `PauseBroker` | SIGSTOP of a broker for longer than the client's `request.timeout.ms` | SIGCONT |
//! | `DelayConnections` | one broker's proxy adds 20-400 ms each way | latency back to 0 |
//! | `HoldRequests` | one broker's proxy holds every request past the client's request timeout, then delivers it (requests arriving after the client gave up) | resume |
//! | `BlackHole` | one broker's proxy accepts and never answers (the client partitioned from it) | black hole off |
//! | `CutConnections` | every connection through one broker's proxy reset mid-request | (instant) |
//! | `CpuHog` | two threads spinning beside the client | the threads stop |
//!
//! Kills are skipped (and counted as such) when the node to kill is not
//! known (metadata or FindCoordinator failed): a fault never waits on the
//! cluster it breaks.

use kafka_client::{Cluster, ClusterConfig, CoordinatorType, find_coordinator};
use kafka_testcontainers::SeededRng as Rng;
use kafka_testcontainers::{Direction, KafkaCluster};
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A kind of fault (see the module table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FaultKind {
    KillLeader,
    KillTxnCoordinator,
    KillGroupCoordinator,
    PauseBroker,
    DelayConnections,
    HoldRequests,
    BlackHole,
    CutConnections,
    CpuHog,
}

const KINDS: [FaultKind; 9] = [
    FaultKind::KillLeader,
    FaultKind::KillTxnCoordinator,
    FaultKind::KillGroupCoordinator,
    FaultKind::PauseBroker,
    FaultKind::DelayConnections,
    FaultKind::HoldRequests,
    FaultKind::BlackHole,
    FaultKind::CutConnections,
    FaultKind::CpuHog,
];

/// What the faults aim at, known once the schedule created it.
#[derive(Debug, Clone, Default)]
pub struct Targets {
    /// Topics whose partition leaders may be killed, with partition counts.
    pub topics: Vec<(String, i32)>,
    /// The producer's transactional id.
    pub transactional_id: String,
    /// The consumer group whose offsets the transactions commit, if any.
    pub group: Option<String>,
}

/// Shared between the schedule (which fills in the targets and asks for
/// the faults to be healed) and the nemesis.
#[derive(Debug, Default)]
pub struct Control {
    targets: Mutex<Option<Targets>>,
    stop: AtomicBool,
    healed: tokio::sync::Notify,
    healed_flag: AtomicBool,
    changed: tokio::sync::Notify,
}

impl Control {
    /// The schedule's names: faults aimed at them may begin.
    pub fn set_targets(&self, t: Targets) {
        *self.targets.lock().unwrap() = Some(t);
        self.changed.notify_waiters();
    }

    /// Completes at the next [`Control::set_targets`] or
    /// [`Control::heal`] (create it before looking at the state).
    pub fn changes(&self) -> tokio::sync::futures::Notified<'_> {
        self.changed.notified()
    }

    /// The targets, once the schedule set them.
    pub fn targets(&self) -> Option<Targets> {
        self.targets.lock().unwrap().clone()
    }

    /// The schedule asked for the faults to stop.
    pub fn stop_requested(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// Tells [`Control::heal`] that every fault is healed.
    pub fn mark_healed(&self) {
        self.healed_flag.store(true, Ordering::SeqCst);
        self.healed.notify_waiters();
    }

    /// Stops the faults, and returns once every one is healed and the
    /// cluster is back in sync.
    pub async fn heal(&self) {
        self.stop.store(true, Ordering::SeqCst);
        self.changed.notify_waiters();
        loop {
            let notified = self.healed.notified();
            if self.healed_flag.load(Ordering::SeqCst) {
                return;
            }
            notified.await;
        }
    }
}

/// Faults injected, by kind; kills skipped because their target was unknown.
#[derive(Debug, Default, Clone)]
pub struct FaultCounts {
    pub injected: BTreeMap<FaultKind, u64>,
    pub skipped: u64,
}

impl FaultCounts {
    pub fn add(&mut self, other: &FaultCounts) {
        for (k, n) in &other.injected {
            *self.injected.entry(*k).or_default() += n;
        }
        self.skipped += other.skipped;
    }
}

/// Runs seeded faults on `kafka` until [`Control::heal`] is called, then
/// heals everything and waits until every node runs and every partition
/// has all its replicas in sync. `request_timeout` is the client's: pauses
/// and held requests outlast it.
pub async fn run(
    kafka: &KafkaCluster,
    control: &Control,
    seed: u64,
    request_timeout: Duration,
) -> FaultCounts {
    let mut rng = Rng::new(seed);
    let mut counts = FaultCounts::default();
    let cluster = Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
        .await
        .expect("the nemesis's client");
    while !control.stop.load(Ordering::SeqCst) {
        if !pause_unless_stopped(control, Duration::from_millis(200 + rng.below(1_300))).await {
            break;
        }
        let Some(targets) = control.targets.lock().unwrap().clone() else {
            continue;
        };
        let kind = rng.pick(&KINDS);
        let node = rng.below(kafka.node_count() as u64) as usize;
        let hold = Duration::from_millis(1_000 + rng.below(4_000));
        let applied = match kind {
            FaultKind::KillLeader
            | FaultKind::KillTxnCoordinator
            | FaultKind::KillGroupCoordinator => {
                match victim(kafka, &cluster, kind, &targets, &mut rng).await {
                    Some(index) => {
                        kafka.kill(index).expect("kill -9");
                        pause_unless_stopped(control, hold).await;
                        kafka.start_node(index).expect("restart the killed node");
                        wait_healthy(kafka).await;
                        true
                    }
                    None => false,
                }
            }
            FaultKind::PauseBroker => match kafka.pid(node) {
                Some(pid) => {
                    signal(pid, "-STOP");
                    let longer = request_timeout + Duration::from_millis(rng.below(3_000));
                    pause_unless_stopped(control, longer).await;
                    signal(pid, "-CONT");
                    wait_healthy(kafka).await;
                    true
                }
                None => false,
            },
            FaultKind::DelayConnections => {
                let latency = Duration::from_millis(20 + rng.below(380));
                let p = kafka.proxy(node);
                p.set_latency(Direction::ClientToServer, latency);
                p.set_latency(Direction::ServerToClient, latency);
                pause_unless_stopped(control, hold).await;
                p.set_latency(Direction::ClientToServer, Duration::ZERO);
                p.set_latency(Direction::ServerToClient, Duration::ZERO);
                true
            }
            FaultKind::HoldRequests => {
                let p = kafka.proxy(node);
                p.pause(Direction::ClientToServer);
                let longer = request_timeout + Duration::from_millis(rng.below(2_000));
                pause_unless_stopped(control, longer).await;
                p.resume(Direction::ClientToServer);
                true
            }
            FaultKind::BlackHole => {
                let p = kafka.proxy(node);
                p.set_black_hole(true);
                pause_unless_stopped(control, hold).await;
                p.set_black_hole(false);
                true
            }
            FaultKind::CutConnections => {
                kafka.proxy(node).reset_connections();
                true
            }
            FaultKind::CpuHog => {
                let spin = Arc::new(AtomicBool::new(true));
                let threads: Vec<_> = (0..2)
                    .map(|_| {
                        let spin = spin.clone();
                        std::thread::spawn(move || {
                            let mut x = 0u64;
                            while spin.load(Ordering::Relaxed) {
                                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
                            }
                        })
                    })
                    .collect();
                pause_unless_stopped(control, hold).await;
                spin.store(false, Ordering::Relaxed);
                for t in threads {
                    let _ = t.join();
                }
                true
            }
        };
        if applied {
            *counts.injected.entry(kind).or_default() += 1;
        } else {
            counts.skipped += 1;
        }
    }
    // Heal whatever a stop may have interrupted.
    for node in 0..kafka.node_count() {
        if let Some(pid) = kafka.pid(node) {
            signal(pid, "-CONT");
        }
        if !kafka.is_running(node) {
            kafka.start_node(node).expect("restart");
        }
        let p = kafka.proxy(node);
        p.clear_faults();
    }
    wait_healthy(kafka).await;
    cluster.close();
    control.mark_healed();
    counts
}

/// Sleeps `d`, or less when the faults are told to stop; false if stopped.
async fn pause_unless_stopped(control: &Control, d: Duration) -> bool {
    let until = Instant::now() + d;
    while Instant::now() < until {
        if control.stop.load(Ordering::SeqCst) {
            return false;
        }
        tokio::time::sleep((until - Instant::now()).min(Duration::from_millis(50))).await;
    }
    !control.stop.load(Ordering::SeqCst)
}

/// The node index to kill for `kind`, if it can be found in 5 s.
async fn victim(
    kafka: &KafkaCluster,
    cluster: &Cluster,
    kind: FaultKind,
    t: &Targets,
    rng: &mut Rng,
) -> Option<usize> {
    let node_id = tokio::time::timeout(Duration::from_secs(5), async {
        match kind {
            FaultKind::KillLeader => {
                let (topic, n) = t
                    .topics
                    .get(rng.below(t.topics.len().max(1) as u64) as usize)?;
                let p = rng.below((*n).max(1) as u64) as i32;
                let topics = [topic.as_str()];
                cluster.refresh_topics(&topics).await.ok()?;
                cluster.metadata().leader(topic, p)
            }
            FaultKind::KillTxnCoordinator => {
                find_coordinator(cluster, CoordinatorType::Transaction, &t.transactional_id)
                    .await
                    .ok()
                    .map(|c| c.node_id)
            }
            _ => find_coordinator(cluster, CoordinatorType::Group, t.group.as_deref()?)
                .await
                .ok()
                .map(|c| c.node_id),
        }
    })
    .await
    .ok()??;
    (0..kafka.node_count()).find(|i| kafka.node_id(*i) == node_id && kafka.is_running(*i))
}

fn signal(pid: u32, sig: &str) {
    let _ = std::process::Command::new("kill")
        .args([sig, &pid.to_string()])
        .status();
}

/// Every node ready and every partition (internal ones included) with all
/// its replicas in sync, within 180 s.
pub async fn wait_healthy(kafka: &KafkaCluster) {
    kafka.wait_until_ready().await.expect("every node ready");
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let in_sync = async {
            let cluster = Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
                .await
                .ok()?;
            cluster.refresh_all().await.ok()?;
            let ok = {
                let md = cluster.metadata();
                !md.topics().is_empty()
                    && md.topics().values().all(|t| {
                        t.partitions
                            .values()
                            .all(|p| p.leader.is_some() && p.isr.len() == p.replicas.len())
                    })
            };
            cluster.close();
            Some(ok)
        }
        .await
        .unwrap_or(false);
        if in_sync {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "partitions stayed under-replicated for 180 s after the faults"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Waits until the cluster may be read for the check (the faulted mode
/// heals every fault first).
pub type Quiesce = Arc<dyn Fn() -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// How an exactly-once checker's schedule runs: on the shared single-node
/// clusters by default; the faulted mode (`producer_eos_faults`,
/// `sink_eos_faults`) uses three nodes, replication 3, shorter client
/// timeouts, a read_committed reader watching during the schedule (the
/// producer checker), and heals its faults before the check.
#[derive(Clone, Default)]
pub struct ScheduleSetup {
    /// Replication factor of the schedule's topics (1 when 0).
    pub replication: i16,
    /// Producer settings added to (or replacing) the schedule's own.
    pub producer_props: Vec<(String, String)>,
    /// Called after the schedule, before the successor and the check.
    pub quiesce: Option<Quiesce>,
    /// Watch the output read_committed while the schedule runs, for
    /// precommitted reads (a record visible before its commit was called).
    pub watch: bool,
    /// Told the schedule's topics, transactional id and group once they
    /// exist (the faults aim at their leaders and coordinators).
    pub targets: Option<Arc<Control>>,
    /// A pause after every operation, so that faults land inside the
    /// schedule rather than after it.
    pub pace: Duration,
    /// The least time the operations spread over, whatever their number:
    /// the pause after each grows to `span / operations` when that is
    /// longer than `pace` (a schedule must outlive the broker's sessions
    /// for its connections to re-authenticate).
    pub span: Duration,
}

impl ScheduleSetup {
    /// The pause after each of `operations` operations: `pace`, or longer
    /// so that they spread over `span`.
    pub fn pause(&self, operations: usize) -> Duration {
        let spread = self.span / u32::try_from(operations.max(1)).unwrap_or(u32::MAX);
        self.pace.max(spread)
    }
}
