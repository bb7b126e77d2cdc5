//! Seeded random faults: a [`Nemesis`] injects faults into a running
//! [`MockCluster`] at random moments, each choice drawn from one seed, until
//! it is stopped; then it heals the cluster (queued faults dropped, every
//! broker started and reachable) and reports what it did. The same seed
//! makes the same choices in the same order, so a failing run names the
//! seed that replays it.
//!
//! | kind | what |
//! |---|---|
//! | `Error` | the next 1-3 requests of one API answered with a retriable error that API can get (NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, CONCURRENT_TRANSACTIONS, ...), changing nothing |
//! | `LostAnswer` | one request applied, its answer lost: the client times out with the outcome unknown |
//! | `DisconnectAfter` | one request applied, then its connection closed before the answer |
//! | `DisconnectBefore` | one request's connection closed before it is applied |
//! | `Delay` | one request held 50 ms to twice the client's request timeout, then applied (it may land after the client gave up); InitProducerId at most half the timeout (a late InitProducerId fences and aborts whatever transaction its id began meanwhile, a loss no client can prevent) |
//! | `StopBroker` | a broker stopped for an outage (its partitions and coordinators fail over), then restarted |
//! | `Unreachable` | a broker unreachable for an outage, without a failover |
//! | `MoveLeader` | the leader of one of the target partitions moved |
//! | `MoveCoordinator` | a target transactional id's or group's coordinator moved |
//! | `CutConnections` | every connection of one broker closed |
//!
//! A request fault waits queued until a request of its API comes; at most
//! [`NemesisConfig::max_queued_per_api`] wait per API (one by default), so
//! that faults do not pile up for an API the client is not sending.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! use kafka_mock::{MockCluster, MockConfig, Nemesis, NemesisConfig, NemesisTargets};
//! let mock = MockCluster::start(MockConfig { brokers: 3, ..MockConfig::default() })
//!     .await
//!     .unwrap();
//! mock.create_topic("orders", 3).unwrap();
//! let nemesis = Nemesis::new(NemesisConfig { seed: 42, ..NemesisConfig::default() });
//! nemesis.set_targets(NemesisTargets {
//!     topics: vec![("orders".into(), 3)],
//!     ..NemesisTargets::default()
//! });
//! let faults = async {
//!     nemesis.run(&mock).await
//! };
//! let app = async {
//!     // ... the code under test runs against mock.bootstrap() here ...
//!     nemesis.stop();
//! };
//! let (report, ()) = tokio::join!(faults, app);
//! println!("seed 42 injected {:?}", report.counts);
//! # }
//! ```

use crate::{CoordinatorKind, Fault, FaultAction, MockCluster};
use kafka_proto::{ApiKey, ErrorCode};
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::{Notify, watch};

/// A kind of seeded fault (see the module table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NemesisFault {
    /// Retriable errors on the next requests of one API.
    Error,
    /// A request applied and its answer lost.
    LostAnswer,
    /// A request applied, then its connection closed.
    DisconnectAfter,
    /// A request's connection closed before it is applied.
    DisconnectBefore,
    /// A request held, then applied (possibly after the client gave up).
    Delay,
    /// A broker stopped and restarted.
    StopBroker,
    /// A broker unreachable for a while.
    Unreachable,
    /// A target partition's leader moved.
    MoveLeader,
    /// A target transactional id's or group's coordinator moved.
    MoveCoordinator,
    /// Every connection of a broker closed.
    CutConnections,
}

impl NemesisFault {
    /// Every kind.
    pub const ALL: [NemesisFault; 10] = [
        NemesisFault::Error,
        NemesisFault::LostAnswer,
        NemesisFault::DisconnectAfter,
        NemesisFault::DisconnectBefore,
        NemesisFault::Delay,
        NemesisFault::StopBroker,
        NemesisFault::Unreachable,
        NemesisFault::MoveLeader,
        NemesisFault::MoveCoordinator,
        NemesisFault::CutConnections,
    ];
}

/// The APIs a transactional producer, its consumers and its readers send.
pub const CLIENT_APIS: [ApiKey; 11] = [
    ApiKey::Produce,
    ApiKey::InitProducerId,
    ApiKey::AddPartitionsToTxn,
    ApiKey::AddOffsetsToTxn,
    ApiKey::TxnOffsetCommit,
    ApiKey::EndTxn,
    ApiKey::FindCoordinator,
    ApiKey::Metadata,
    ApiKey::Fetch,
    ApiKey::ListOffsets,
    ApiKey::OffsetFetch,
];

/// How a [`Nemesis`] chooses its faults.
///
/// ```
/// use kafka_mock::{NemesisConfig, NemesisFault};
/// use std::time::Duration;
/// // Only lost answers and broker stops, aimed at a client whose
/// // request.timeout.ms is 2 s.
/// let config = NemesisConfig {
///     seed: 7,
///     kinds: vec![NemesisFault::LostAnswer, NemesisFault::StopBroker],
///     request_timeout: Duration::from_secs(2),
///     ..NemesisConfig::default()
/// };
/// # drop(config);
/// ```
#[derive(Debug, Clone)]
pub struct NemesisConfig {
    /// Every choice is drawn from this seed.
    pub seed: u64,
    /// The kinds to choose from (every kind by default).
    pub kinds: Vec<NemesisFault>,
    /// The APIs request faults aim at ([`CLIENT_APIS`] by default).
    pub apis: Vec<ApiKey>,
    /// The pause before each fault is drawn from this range (20-320 ms).
    pub pause: (Duration, Duration),
    /// A stopped or unreachable broker's outage is drawn from this range
    /// (100-1500 ms).
    pub outage: (Duration, Duration),
    /// The client's `request.timeout.ms`: delays reach up to twice it.
    pub request_timeout: Duration,
    /// At most this many request faults (`Error`, `LostAnswer`,
    /// `DisconnectAfter`, `DisconnectBefore`, `Delay`) wait queued for one
    /// API; one drawn beyond is skipped (1 by default; `usize::MAX`: no
    /// bound). A queued fault is hit only by a request of its API, and the
    /// nemesis draws them at a steady rate (about one every 7 s per API by
    /// default) whatever the client sends: without a bound they pile up for
    /// an API the client is not sending at the moment (InitProducerId,
    /// AddPartitionsToTxn and EndTxn between transactions, ListOffsets and
    /// Fetch between reads), and its next requests of that API meet them
    /// all in a row — a dozen or more after a few slow minutes, each
    /// costing a timeout or a backoff and a retry, so that a slow run grows
    /// slower the longer it runs.
    pub max_queued_per_api: usize,
}

impl Default for NemesisConfig {
    fn default() -> Self {
        Self {
            seed: 0,
            kinds: NemesisFault::ALL.to_vec(),
            apis: CLIENT_APIS.to_vec(),
            pause: (Duration::from_millis(20), Duration::from_millis(320)),
            outage: (Duration::from_millis(100), Duration::from_millis(1_500)),
            request_timeout: Duration::from_secs(30),
            max_queued_per_api: 1,
        }
    }
}

/// What faults aimed at names may hit: partitions whose leaders may move,
/// transactional ids and groups whose coordinators may move.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NemesisTargets {
    /// Topics with their partition counts.
    pub topics: Vec<(String, i32)>,
    /// Transactional ids.
    pub transactional_ids: Vec<String>,
    /// Consumer group ids.
    pub groups: Vec<String>,
}

/// What a [`Nemesis`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NemesisReport {
    /// Faults injected, by kind.
    pub counts: BTreeMap<NemesisFault, u64>,
    /// Every fault in order, with what it hit.
    pub log: Vec<(NemesisFault, String)>,
    /// Faults drawn but skipped (no target known yet, or
    /// [`NemesisConfig::max_queued_per_api`] request faults already queued
    /// for the API).
    pub skipped: u64,
}

/// Seeded random faults on a [`MockCluster`] (see the module docs).
#[derive(Debug)]
pub struct Nemesis {
    config: NemesisConfig,
    targets: Mutex<NemesisTargets>,
    stop: AtomicBool,
    stopped: Notify,
    /// Faults drawn so far in the current run (injected or skipped).
    drawn: watch::Sender<u64>,
}

impl Nemesis {
    /// A nemesis that has not started: [`set_targets`](Self::set_targets)
    /// names what it may hit, [`run`](Self::run) injects faults until
    /// [`stop`](Self::stop), then heals the cluster and reports.
    ///
    /// ```
    /// use kafka_mock::{Nemesis, NemesisConfig, NemesisTargets};
    /// // The seed a failing run printed replays its faults.
    /// let seed = std::env::var("NEMESIS_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(42);
    /// let nemesis = Nemesis::new(NemesisConfig { seed, ..NemesisConfig::default() });
    /// nemesis.set_targets(NemesisTargets {
    ///     topics: vec![("orders".into(), 6)],
    ///     transactional_ids: vec!["orders-writer".into()],
    ///     groups: vec!["billing".into()],
    /// });
    /// ```
    pub fn new(config: NemesisConfig) -> Self {
        Self {
            config,
            targets: Mutex::new(NemesisTargets::default()),
            stop: AtomicBool::new(false),
            stopped: Notify::new(),
            drawn: watch::Sender::new(0),
        }
    }

    /// Waits until the running nemesis has drawn at least `n` faults: a
    /// test that needs some number of faults waits on this instead of a
    /// wall-clock time, which a loaded machine stretches. Returns at once
    /// when `n` are already drawn; never returns if no run draws them.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use kafka_mock::{MockCluster, MockConfig, Nemesis, NemesisConfig};
    /// use std::time::Duration;
    /// let mock = MockCluster::start(MockConfig::default()).await.unwrap();
    /// let nemesis = Nemesis::new(NemesisConfig {
    ///     seed: 9,
    ///     pause: (Duration::from_millis(1), Duration::from_millis(2)),
    ///     ..NemesisConfig::default()
    /// });
    /// let five = async {
    ///     nemesis.drawn_at_least(5).await;
    ///     nemesis.stop();
    /// };
    /// let (report, ()) = tokio::join!(nemesis.run(&mock), five);
    /// assert!(report.log.len() as u64 + report.skipped >= 5);
    /// # }
    /// ```
    pub async fn drawn_at_least(&self, n: u64) {
        let mut drawn = self.drawn.subscribe();
        // The sender lives as long as `self`, so the wait cannot fail.
        let _ = drawn.wait_for(|d| *d >= n).await;
    }

    /// Sets what faults aimed at names may hit (none until set).
    pub fn set_targets(&self, targets: NemesisTargets) {
        *self.targets.lock().unwrap() = targets;
    }

    /// Asks [`Nemesis::run`] to heal the cluster and return.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        self.stopped.notify_waiters();
    }

    /// Sleeps `d`; false when stopped meanwhile.
    async fn pause(&self, d: Duration) -> bool {
        let stopped = self.stopped.notified();
        tokio::pin!(stopped);
        stopped.as_mut().enable();
        if self.stop.load(Ordering::SeqCst) {
            return false;
        }
        tokio::select! {
            _ = stopped => false,
            _ = tokio::time::sleep(d) => !self.stop.load(Ordering::SeqCst),
        }
    }

    /// Injects faults into `mock` until [`Nemesis::stop`], then heals it.
    pub async fn run(&self, mock: &MockCluster) -> NemesisReport {
        let c = &self.config;
        let mut rng = SplitMix64(c.seed);
        let mut report = NemesisReport::default();
        self.drawn.send_replace(0);
        let brokers = mock.broker_ids();
        let apis: &[ApiKey] = if c.apis.is_empty() {
            &CLIENT_APIS
        } else {
            &c.apis
        };
        let between = |rng: &mut SplitMix64, (lo, hi): (Duration, Duration)| {
            let span = hi.saturating_sub(lo).as_millis() as u64;
            lo + Duration::from_millis(rng.below(span.max(1)))
        };
        while !c.kinds.is_empty() && self.pause(between(&mut rng, c.pause)).await {
            // The same draws every round, whatever the fault: the choices
            // depend on the seed alone, not on targets or timing.
            let kind = *rng.pick(&c.kinds);
            let api = *rng.pick(apis);
            let broker = *rng.pick(&brokers);
            let outage = between(&mut rng, c.outage);
            let (x, y) = (rng.next(), rng.next());
            let targets = self.targets.lock().unwrap().clone();
            let request_fault = matches!(
                kind,
                NemesisFault::Error
                    | NemesisFault::LostAnswer
                    | NemesisFault::DisconnectAfter
                    | NemesisFault::DisconnectBefore
                    | NemesisFault::Delay
            );
            let done: Option<String> = match kind {
                // Faults do not pile up for an API the client is not
                // sending (see `NemesisConfig::max_queued_per_api`).
                _ if request_fault && mock.pending_faults_for(api) >= c.max_queued_per_api => None,
                NemesisFault::Error => {
                    let errors = errors_for(api);
                    let code = errors[(x % errors.len() as u64) as usize];
                    let times = 1 + (y % 3) as u32;
                    mock.inject(Fault::new(FaultAction::Error(code)).api(api).times(times));
                    Some(format!("{api:?} x{times} {code:?}"))
                }
                NemesisFault::LostAnswer => {
                    mock.inject(Fault::new(FaultAction::DropResponse).api(api));
                    Some(format!("{api:?}"))
                }
                NemesisFault::DisconnectAfter => {
                    mock.inject(Fault::new(FaultAction::DisconnectAfter).api(api));
                    Some(format!("{api:?}"))
                }
                NemesisFault::DisconnectBefore => {
                    mock.inject(Fault::new(FaultAction::DisconnectBefore).api(api));
                    Some(format!("{api:?}"))
                }
                NemesisFault::Delay => {
                    let timeout = c.request_timeout.as_millis() as u64;
                    let max = if api == ApiKey::InitProducerId {
                        timeout / 2
                    } else {
                        timeout * 2
                    };
                    let d = Duration::from_millis(50 + x % max.max(1));
                    mock.inject(Fault::new(FaultAction::Delay(d)).api(api));
                    Some(format!("{api:?} {d:?}"))
                }
                NemesisFault::StopBroker => {
                    if mock.stop_broker(broker).await.is_ok() {
                        self.pause(outage).await;
                        let _ = mock.start_broker(broker);
                        Some(format!("broker {broker} for {outage:?}"))
                    } else {
                        None
                    }
                }
                NemesisFault::Unreachable => {
                    if mock.set_reachable(broker, false).is_ok() {
                        self.pause(outage).await;
                        let _ = mock.set_reachable(broker, true);
                        Some(format!("broker {broker} for {outage:?}"))
                    } else {
                        None
                    }
                }
                NemesisFault::MoveLeader if !targets.topics.is_empty() => {
                    let (topic, n) = &targets.topics[(x % targets.topics.len() as u64) as usize];
                    let p = (y % (*n).max(1) as u64) as i32;
                    mock.move_leader(topic, p, broker)
                        .ok()
                        .map(|()| format!("{topic}-{p} to broker {broker}"))
                }
                NemesisFault::MoveCoordinator
                    if !targets.transactional_ids.is_empty() || !targets.groups.is_empty() =>
                {
                    let group = targets.transactional_ids.is_empty()
                        || (!targets.groups.is_empty() && x % 2 == 1);
                    let (kind, keys) = if group {
                        (CoordinatorKind::Group, &targets.groups)
                    } else {
                        (CoordinatorKind::Transaction, &targets.transactional_ids)
                    };
                    let key = &keys[(y % keys.len() as u64) as usize];
                    mock.move_coordinator(kind, key, broker)
                        .ok()
                        .map(|()| format!("{kind:?} {key} to broker {broker}"))
                }
                NemesisFault::MoveLeader | NemesisFault::MoveCoordinator => None,
                NemesisFault::CutConnections => mock
                    .cut_connections(broker)
                    .ok()
                    .map(|()| format!("broker {broker}")),
            };
            match done {
                Some(what) => {
                    *report.counts.entry(kind).or_default() += 1;
                    report.log.push((kind, what));
                }
                None => report.skipped += 1,
            }
            self.drawn.send_modify(|d| *d += 1);
        }
        mock.clear_faults();
        for b in &brokers {
            let _ = mock.start_broker(*b);
            let _ = mock.set_reachable(*b, true);
        }
        report
    }
}

/// Retriable errors Kafka answers `api` with.
fn errors_for(api: ApiKey) -> &'static [ErrorCode] {
    match api {
        ApiKey::Produce => &[
            ErrorCode::NotLeaderOrFollower,
            ErrorCode::NotEnoughReplicas,
            ErrorCode::RequestTimedOut,
        ],
        ApiKey::InitProducerId
        | ApiKey::AddPartitionsToTxn
        | ApiKey::AddOffsetsToTxn
        | ApiKey::EndTxn => &[
            ErrorCode::NotCoordinator,
            ErrorCode::CoordinatorNotAvailable,
            ErrorCode::CoordinatorLoadInProgress,
            ErrorCode::ConcurrentTransactions,
        ],
        ApiKey::TxnOffsetCommit
        | ApiKey::OffsetFetch
        | ApiKey::OffsetCommit
        | ApiKey::JoinGroup
        | ApiKey::SyncGroup
        | ApiKey::Heartbeat
        | ApiKey::ConsumerGroupHeartbeat => &[
            ErrorCode::NotCoordinator,
            ErrorCode::CoordinatorNotAvailable,
            ErrorCode::CoordinatorLoadInProgress,
        ],
        ApiKey::FindCoordinator => &[ErrorCode::CoordinatorNotAvailable],
        ApiKey::Metadata => &[ErrorCode::LeaderNotAvailable],
        _ => &[ErrorCode::NotLeaderOrFollower],
    }
}

/// A small seeded generator (SplitMix64): the same seed, the same choices.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n` > 0).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}
