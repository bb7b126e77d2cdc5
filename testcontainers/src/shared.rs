//! Clusters shared by many tests: one single-node Kafka cluster per
//! [`SharedKafka`] variant (Kafka 4.4 with transaction version 2, Kafka 4.4
//! with transaction version 1, Kafka 3.9), started once and used by every
//! test that neither stops its nodes nor needs settings of its own.

use crate::cluster::{KafkaClusterBuilder, Sharing};
use crate::error::IoContext;
use crate::{HarnessError, KafkaCluster, KafkaVersion, Result};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::OnceCell;

/// The environment variable naming the directory of shared cluster
/// descriptions.
pub const SHARED_KAFKA_ENV: &str = "KAFKA_EOS_SHARED_KAFKA";

/// The directory prefix of a cluster shared in-process (under the system
/// temporary directory); the ones of dead processes are removed.
pub(crate) const IN_PROCESS_DIR_PREFIX: &str = "kafka-eos-shared-";

/// A shared single-node cluster's Kafka release and transaction version.
///
/// A broker start costs a few CPU seconds; a test suite that starts one per
/// test spends most of its time there. With a shared cluster, a test pays
/// for its own topics only. Where the cluster comes from:
///
/// - **Another process**, when the environment variable
///   `KAFKA_EOS_SHARED_KAFKA` names a directory: each variant's cluster is
///   described in `<dir>/<variant>.cluster` by the process that owns it,
///   `kafka-dev --shared <variant> --describe <dir>/<variant>.cluster`
///   (the CI test runner starts the three before the test binaries and
///   stops them after).
/// - **This process** otherwise: started on first use and kept for the
///   process's life (its JVM dies with the process).
///
/// Tests on a shared cluster use names of their own ([`unique_name`]) for
/// topics, transactional ids and groups, and never assume that they are
/// alone on the broker (listings contain other tests' topics, groups and
/// transactions). [`KafkaCluster::kill`], `stop`, `restart` and
/// `start_node` refuse a shared cluster.
///
/// ```no_run
/// # async fn demo() -> Result<(), kafka_testcontainers::HarnessError> {
/// use kafka_testcontainers::{SharedKafka, unique_name};
/// let kafka = SharedKafka::Kafka44Tv2.cluster().await?;
/// let topic = unique_name("events");
/// kafka.create_topic(&topic, 3, 1).await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SharedKafka {
    /// Kafka 4.4 formatted with `transaction.version=2` (KIP-890).
    Kafka44Tv2,
    /// Kafka 4.4 formatted with `transaction.version=1`.
    Kafka44Tv1,
    /// Kafka 3.9 (transaction version 1 only; classic groups).
    Kafka39,
}

static CLUSTERS: [OnceCell<KafkaCluster>; 3] = [
    OnceCell::const_new(),
    OnceCell::const_new(),
    OnceCell::const_new(),
];

impl SharedKafka {
    /// Every variant.
    pub const ALL: [SharedKafka; 3] = [
        SharedKafka::Kafka44Tv2,
        SharedKafka::Kafka44Tv1,
        SharedKafka::Kafka39,
    ];

    /// The variant's name: `4.4-tv2`, `4.4-tv1` or `3.9`.
    pub fn name(self) -> &'static str {
        match self {
            SharedKafka::Kafka44Tv2 => "4.4-tv2",
            SharedKafka::Kafka44Tv1 => "4.4-tv1",
            SharedKafka::Kafka39 => "3.9",
        }
    }

    /// The variant named `name` ([`SharedKafka::name`]).
    pub fn parse(name: &str) -> Option<SharedKafka> {
        SharedKafka::ALL.into_iter().find(|v| v.name() == name)
    }

    /// The Kafka release.
    pub fn version(self) -> KafkaVersion {
        match self {
            SharedKafka::Kafka44Tv2 | SharedKafka::Kafka44Tv1 => KafkaVersion::V4_4,
            SharedKafka::Kafka39 => KafkaVersion::V3_9,
        }
    }

    /// The transaction version the cluster is formatted with (`None`: the
    /// release's only one, 1).
    pub fn transaction_version(self) -> Option<i16> {
        match self {
            SharedKafka::Kafka44Tv2 => Some(2),
            SharedKafka::Kafka44Tv1 => Some(1),
            SharedKafka::Kafka39 => None,
        }
    }

    /// The settings every shared cluster of this variant has:
    /// 1. one node, with the harness's defaults (among them no initial
    ///    rebalance delay for classic groups);
    /// 2. KIP-848 heartbeats every 500 ms (faster rebalances than the 5 s
    ///    default);
    /// 3. a 10 s KIP-848 session: a crashed member's partitions move after
    ///    10 s instead of the default 45 s, and twenty heartbeats may be
    ///    missed before a live member is fenced;
    /// 4. timed-out transactions aborted within half a second of their
    ///    timeout (the 10 s default check interval would stretch every test
    ///    that lets a transaction time out).
    ///
    /// None of these changes what a test may observe, only how soon. A test
    /// that needs a cluster of its own with the same settings starts from
    /// this builder:
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), kafka_testcontainers::HarnessError> {
    /// use kafka_testcontainers::SharedKafka;
    /// // A private cluster like the shared one, whose node this test may kill.
    /// let kafka = SharedKafka::Kafka44Tv2.builder().with_proxies(true).start().await?;
    /// kafka.kill(0)?;
    /// # Ok(()) }
    /// ```
    pub fn builder(self) -> KafkaClusterBuilder {
        let mut b = KafkaCluster::builder()
            .version(self.version())
            .nodes(1)
            .broker_config("group.consumer.min.heartbeat.interval.ms", "500")
            .broker_config("group.consumer.heartbeat.interval.ms", "500")
            .broker_config("group.consumer.min.session.timeout.ms", "10000")
            .broker_config("group.consumer.session.timeout.ms", "10000")
            .broker_config(
                "transaction.abort.timed.out.transaction.cleanup.interval.ms",
                "500",
            );
        if let Some(tv) = self.transaction_version() {
            b = b.transaction_version(tv);
        }
        b
    }

    /// The shared cluster of this variant: attached to by the description
    /// in `$KAFKA_EOS_SHARED_KAFKA/<name>.cluster` when that variable is
    /// set, else started in this process on first use.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), kafka_testcontainers::HarnessError> {
    /// use kafka_testcontainers::SharedKafka;
    /// let kafka = SharedKafka::Kafka39.cluster().await?;
    /// println!("{}", kafka.bootstrap());
    /// # Ok(()) }
    /// ```
    pub async fn cluster(self) -> Result<&'static KafkaCluster> {
        let cell = &CLUSTERS[self as usize];
        cell.get_or_try_init(|| async move {
            match std::env::var_os(SHARED_KAFKA_ENV) {
                Some(dir) if !dir.is_empty() => {
                    let path = self.description_path(Path::new(&dir));
                    let text = wait_for_description(
                        &path,
                        &format!(
                            "the shared cluster {self} ({SHARED_KAFKA_ENV} is set; \
                             its owner is `kafka-dev --shared {self}`)"
                        ),
                    )
                    .await?;
                    KafkaCluster::attach(self.builder(), &text).await
                }
                _ => {
                    crate::remove_orphaned_scratch_dirs();
                    self.builder().sharing(Sharing::InProcess).start().await
                }
            }
        })
        .await
    }

    /// Starts this variant's cluster for other processes and writes its
    /// description to `description` (atomically, once it is ready); the
    /// cluster stops when the returned value is dropped. What
    /// `kafka-dev --shared` runs.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), kafka_testcontainers::HarnessError> {
    /// use kafka_testcontainers::SharedKafka;
    /// let dir = std::path::Path::new("/tmp/shared-kafka");
    /// let kafka = SharedKafka::Kafka44Tv2.serve(&SharedKafka::Kafka44Tv2.description_path(dir)).await?;
    /// // ... run tests with KAFKA_EOS_SHARED_KAFKA=/tmp/shared-kafka ...
    /// drop(kafka);
    /// # Ok(()) }
    /// ```
    pub async fn serve(self, description: &Path) -> Result<KafkaCluster> {
        let cluster = self.builder().sharing(Sharing::Served).start().await?;
        write_description(description, &cluster.description())?;
        Ok(cluster)
    }

    /// Where this variant's description lives in the directory `dir`.
    pub fn description_path(self, dir: &Path) -> PathBuf {
        dir.join(format!("{}.cluster", self.name()))
    }
}

/// How long a test waits for the owner of a shared cluster to describe it
/// (the CI runner starts the shared clusters and the first tests together).
const DESCRIPTION_WAIT: Duration = Duration::from_secs(300);

/// Writes a shared service's description to `path` atomically (a temporary
/// file renamed over it): a process waiting for it never reads half of it.
pub(crate) fn write_description(path: &Path, text: &str) -> Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).ctx(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).ctx(|| format!("renaming {} to {}", tmp.display(), path.display()))
}

/// The description at `path` once its owner has written it; `owner` says
/// what is shared, the variable naming the description and who writes it,
/// for the error.
pub(crate) async fn wait_for_description(path: &Path, owner: &str) -> Result<String> {
    let started = Instant::now();
    loop {
        match std::fs::read_to_string(path) {
            Ok(text) => return Ok(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if started.elapsed() >= DESCRIPTION_WAIT {
                    return Err(HarnessError::Timeout {
                        what: format!("the description {} of {owner}", path.display()),
                        elapsed: started.elapsed(),
                        last: e.to_string(),
                    });
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => {
                return Err(e).ctx(|| format!("reading {}", path.display()));
            }
        }
    }
}

impl std::fmt::Display for SharedKafka {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A record timestamp (milliseconds since the epoch) for tests that set
/// their records' create time and compare it after: an hour before this
/// process first asked, on a whole second, the same for every call.
///
/// A fixed date years back is deleted under the test: with Kafka's default
/// `retention.ms` (7 days) the broker's retention check (30 s after it
/// starts, then every 5 minutes) deletes every segment whose newest record
/// is older, the active one included, and a read from offset 0 then finds
/// an empty log (OFFSET_OUT_OF_RANGE). An hour back stays clear of it, and
/// of a broker's bound on timestamps in the future.
///
/// ```
/// let t0 = kafka_testcontainers::recent_timestamp();
/// assert_eq!(t0, kafka_testcontainers::recent_timestamp());
/// assert_eq!(t0 % 1000, 0);
/// ```
pub fn recent_timestamp() -> i64 {
    static BASE: std::sync::OnceLock<i64> = std::sync::OnceLock::new();
    *BASE.get_or_init(|| (since_epoch().as_secs() as i64 - 3600) * 1000)
}

/// The wall clock as time since the Unix epoch (zero before it).
fn since_epoch() -> Duration {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
}

/// A name no other test uses: `prefix`, a tag of this process (its id and
/// the time it first asked, so a process id the kernel reuses later in the
/// same run gets other names) and a counter — for topics, transactional ids
/// and groups on a shared cluster.
pub fn unique_name(prefix: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    static PROCESS_TAG: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let tag = PROCESS_TAG.get_or_init(|| {
        // Milliseconds within a day: a reused pid gets the same tag only if
        // its first name is taken in the same millisecond of a later day.
        let millis = since_epoch().as_millis() % 86_400_000;
        format!("{}x{millis:x}", std::process::id())
    });
    format!("{prefix}-{tag}-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Creates a topic of `partitions` partitions (replication factor 1) named
/// after `prefix` ([`unique_name`]) and returns its name: a test's own topic
/// on a shared cluster.
///
/// ```no_run
/// # async fn demo() -> Result<(), kafka_testcontainers::HarnessError> {
/// use kafka_testcontainers::{SharedKafka, unique_topic};
/// let kafka = SharedKafka::Kafka44Tv2.cluster().await?;
/// let topic = unique_topic(kafka, "orders", 3).await?;
/// assert!(topic.starts_with("orders-"));
/// # Ok(()) }
/// ```
pub async fn unique_topic(kafka: &KafkaCluster, prefix: &str, partitions: i32) -> Result<String> {
    let topic = unique_name(prefix);
    kafka.create_topic(&topic, partitions, 1).await?;
    Ok(topic)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_variable_name_is_stable() {
        assert_eq!(SHARED_KAFKA_ENV, "KAFKA_EOS_SHARED_KAFKA");
    }

    #[test]
    fn every_variant_parses_back_from_its_name() {
        for v in SharedKafka::ALL {
            assert_eq!(SharedKafka::parse(v.name()), Some(v));
            assert_eq!(v.to_string(), v.name());
        }
        assert_eq!(SharedKafka::parse("4.4-tv1"), Some(SharedKafka::Kafka44Tv1));
        assert_eq!(SharedKafka::parse("2.8"), None);
    }

    #[test]
    fn variants_map_to_their_release_and_transaction_version() {
        assert_eq!(SharedKafka::Kafka44Tv1.version(), KafkaVersion::V4_4);
        assert_eq!(SharedKafka::Kafka44Tv2.transaction_version(), Some(2));
        assert_eq!(SharedKafka::Kafka44Tv1.transaction_version(), Some(1));
        assert_eq!(SharedKafka::Kafka39.transaction_version(), None);
    }

    #[test]
    fn description_path_is_the_variant_name_dot_cluster() {
        let path = SharedKafka::Kafka39.description_path("/tmp/s".as_ref());
        assert_eq!(path, Path::new("/tmp/s/3.9.cluster"));
    }

    #[test]
    fn unique_names_keep_the_prefix_and_differ() {
        let (a, b) = (unique_name("events"), unique_name("events"));
        assert!(a.starts_with("events-"));
        assert_ne!(a, b);
    }
}
