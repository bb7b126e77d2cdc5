//! One cluster handed from test to test, for the tests of a binary that
//! need a cluster of their own (fault proxies, TLS or SASL listeners, node
//! kills or settings the [`shared`](crate::shared) clusters do not have):
//! one test per scenario without one broker start per scenario.

use crate::{KafkaCluster, KafkaClusterBuilder, Result};
use std::ops::Deref;
use tokio::sync::{Mutex, MutexGuard};

/// The cluster held in a slot and the key it was built for.
#[derive(Debug)]
struct Held {
    key: String,
    cluster: KafkaCluster,
}

/// A place for one cluster, taken by one test at a time (the invariant
/// follows).
///
/// A test binary declares `static SLOT: ClusterSlot = ClusterSlot::new();`
/// and each test takes it with [`ClusterSlot::lock`], naming the cluster it
/// needs with a key (the key stands for everything its builder sets).
/// Invariant:
///
/// - **One test at a time.** The slot is a tokio mutex: a test waits until
///   the one before it dropped its [`SlotGuard`], so a test's faults,
///   kills and restarts never hit another test's requests.
/// - **Reused only when interchangeable.** A test gets the cluster held
///   there only when it was built for the same key and every node of it
///   still runs (a test that killed a node, or failed mid-restart, leaves
///   one that does not). Its fault proxies, if any, are back to no fault
///   (latency, pause, black hole, pending drop or corruption), their
///   connections reset.
/// - **Otherwise a new one.** The held cluster is dropped first (the slot
///   holds one cluster at a time), then one is started from the test's
///   builder.
/// - **A panicking test leaves nothing.** Its cluster is dropped with its
///   guard (printing the brokers' log tails, as a test's own cluster
///   does): the next test starts from a new one.
///
/// What a test created on a reused cluster stays (topics, groups,
/// transactions): the tests of one slot use names of their own
/// ([`unique_name`](crate::shared::unique_name)). The last cluster stays
/// in the static: its JVMs die with the process (`PR_SET_PDEATHSIG`) and
/// its scratch directory is removed by the next
/// [`remove_orphaned_scratch_dirs`](crate::remove_orphaned_scratch_dirs),
/// which the slot calls before every start.
///
/// ```no_run
/// use kafka_testcontainers::KafkaCluster;
/// use kafka_testcontainers::ClusterSlot;
///
/// static SLOT: ClusterSlot = ClusterSlot::new();
///
/// async fn proxied() -> kafka_testcontainers::SlotGuard<'static> {
///     SLOT.lock("4.4 proxied", || KafkaCluster::builder().with_proxies(true))
///         .await
///         .expect("a proxied cluster")
/// }
///
/// // #[tokio::test]
/// async fn idempotent_through_resets() {
///     let kafka = proxied().await; // waits for the slot
///     kafka.proxy(0).reset_connections();
///     // ...
/// } // the next test gets the same cluster, its proxy without faults
/// ```
#[derive(Debug, Default)]
pub struct ClusterSlot {
    held: Mutex<Option<Held>>,
}

impl ClusterSlot {
    /// An empty slot (nothing runs until the first [`lock`](Self::lock)).
    ///
    /// ```
    /// use kafka_testcontainers::ClusterSlot;
    /// static SLOT: ClusterSlot = ClusterSlot::new();
    /// # let _ = &SLOT;
    /// ```
    pub const fn new() -> ClusterSlot {
        ClusterSlot {
            held: Mutex::const_new(None),
        }
    }

    /// Takes the slot:
    /// 1. waits until no other test holds it;
    /// 2. if the cluster held there was built for `key` and every node runs,
    ///    gives it (its proxies cleared of faults, their connections reset);
    /// 3. else drops the held cluster and starts one from `builder()`.
    ///
    /// The slot is the caller's until the guard drops.
    ///
    /// Errors: the new cluster did not start (the slot is then empty).
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), kafka_testcontainers::HarnessError> {
    /// use kafka_testcontainers::ClusterSlot;
    /// use kafka_testcontainers::{KafkaCluster, KafkaVersion};
    /// static SLOT: ClusterSlot = ClusterSlot::new();
    /// let kafka = SLOT
    ///     .lock("3.9 three nodes", || {
    ///         KafkaCluster::builder().version(KafkaVersion::V3_9).nodes(3)
    ///     })
    ///     .await?;
    /// assert_eq!(kafka.node_count(), 3);
    /// # Ok(()) }
    /// ```
    pub async fn lock(
        &self,
        key: &str,
        builder: impl FnOnce() -> KafkaClusterBuilder,
    ) -> Result<SlotGuard<'_>> {
        let mut held = self.held.lock().await;
        let reusable = held.as_ref().is_some_and(|h| {
            h.key == key && (0..h.cluster.node_count()).all(|n| h.cluster.is_running(n))
        });
        if reusable {
            let cluster = &held.as_ref().expect("checked above").cluster;
            for proxy in cluster.proxy_handles() {
                proxy.clear_faults();
                proxy.reset_connections();
            }
        } else {
            // The held cluster stops before the next one starts.
            *held = None;
            crate::remove_orphaned_scratch_dirs();
            let cluster = builder().start().await?;
            *held = Some(Held {
                key: key.to_owned(),
                cluster,
            });
        }
        Ok(SlotGuard {
            held,
            reused: reusable,
        })
    }
}

/// A test's hold on a [`ClusterSlot`]: derefs to its [`KafkaCluster`];
/// the next test waits until it drops.
#[derive(Debug)]
pub struct SlotGuard<'a> {
    held: MutexGuard<'a, Option<Held>>,
    reused: bool,
}

impl SlotGuard<'_> {
    /// The cluster (what the guard derefs to).
    pub fn cluster(&self) -> &KafkaCluster {
        &self.held().cluster
    }

    /// Whether the cluster was handed on from an earlier test (false: this
    /// lock started it). A test that needs more than every node running
    /// (e.g. every partition in sync after another test's restarts) waits
    /// for it when true.
    pub fn reused(&self) -> bool {
        self.reused
    }

    /// The key the cluster was built for.
    pub fn key(&self) -> &str {
        &self.held().key
    }

    fn held(&self) -> &Held {
        self.held
            .as_ref()
            .expect("a guard is only handed out with a cluster")
    }
}

impl Deref for SlotGuard<'_> {
    type Target = KafkaCluster;

    fn deref(&self) -> &KafkaCluster {
        self.cluster()
    }
}

/// A test that panics while holding the slot leaves it empty: its cluster
/// (whatever state the failure left it in) is dropped, which prints the
/// brokers' log tails.
impl Drop for SlotGuard<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            *self.held = None;
        }
    }
}
