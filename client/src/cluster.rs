//! The cluster: bootstrap, metadata refresh (on demand and every
//! `metadata.max.age.ms`) and connections to brokers by node id.

use crate::backoff::ExponentialBackoff;
use crate::connection::{Connection, ConnectionConfig};
use crate::error::{ClusterError, ConnError};
use crate::metadata::{ClusterMetadata, DEFAULT_METADATA_MAX_AGE, MetadataUpdate};
use crate::pool::ConnectionPool;
use kafka_proto::messages::{MetadataRequest, MetadataRequestTopic, MetadataResponse};
use kafka_proto::{ErrorCode, Message};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// Settings of a [`Cluster`].
#[derive(Debug, Clone)]
pub struct ClusterConfig {
    /// Bootstrap addresses ("host:port"), tried in turn.
    pub bootstrap: Vec<String>,
    /// Settings of every broker connection.
    pub connection: ConnectionConfig,
    /// Reconnect backoff (`reconnect.backoff.ms` / `reconnect.backoff.max.ms`).
    pub reconnect_backoff: ExponentialBackoff,
    /// `metadata.max.age.ms` (default 5 min).
    pub metadata_max_age: Duration,
    /// Minimum time between two background refreshes (`retry.backoff.ms`, 100 ms).
    pub metadata_refresh_backoff: Duration,
    /// `allow.auto.create.topics` for Metadata requests (default false).
    pub allow_auto_topic_creation: bool,
    /// Highest Metadata version to use (default 13, the newest implemented).
    pub metadata_max_version: i16,
    /// How long [`Cluster::connect`] keeps trying when no bootstrap address
    /// answers (refused, timed out, closed): rounds over every address,
    /// `reconnect_backoff` apart, until one answers or this much time has
    /// passed. Zero (the default here) tries each address once. The
    /// producer sets it to `max.block.ms`, Java's bound on every wait for
    /// metadata, so that a service started before its brokers waits for
    /// them. An answer that retrying cannot change (a failed
    /// authentication, a TLS certificate refused, an unsupported broker)
    /// ends the wait at once.
    pub bootstrap_timeout: Duration,
}

impl ClusterConfig {
    /// Defaults with a comma-separated bootstrap list (`bootstrap.servers`;
    /// blanks around the commas are ignored). Change the other settings on the
    /// value returned:
    ///
    /// ```
    /// use kafka_client::ClusterConfig;
    /// use std::time::Duration;
    /// let mut config = ClusterConfig::new("broker-1:9092, broker-2:9092");
    /// config.metadata_max_age = Duration::from_secs(60);
    /// config.bootstrap_timeout = Duration::from_secs(30); // wait for brokers still starting
    /// ```
    pub fn new(bootstrap: &str) -> Self {
        Self {
            bootstrap: bootstrap
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect(),
            connection: ConnectionConfig::default(),
            reconnect_backoff: ExponentialBackoff::reconnect_default(),
            metadata_max_age: DEFAULT_METADATA_MAX_AGE,
            metadata_refresh_backoff: Duration::from_millis(100),
            allow_auto_topic_creation: false,
            metadata_max_version: MetadataRequest::VERSIONS.max,
            bootstrap_timeout: Duration::ZERO,
        }
    }
}

/// Which topics a metadata refresh asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TopicSelection {
    /// Every topic (a null topic array).
    All,
    /// Only these (an empty list asks for brokers only).
    Names(Vec<String>),
}

/// Connections and metadata of one Kafka cluster. Share it behind an `Arc`.
///
/// ```no_run
/// # async fn demo() -> Result<(), kafka_client::ClusterError> {
/// use kafka_client::{Cluster, ClusterConfig};
/// let cluster = Cluster::connect(ClusterConfig::new("127.0.0.1:9092")).await?;
/// // Refreshes every `metadata.max.age.ms`, and soon after an invalidate.
/// let refresher = cluster.spawn_metadata_refresher();
/// cluster.track_topics(&["orders"]);
/// let (leader, conn) = cluster.leader_connection("orders", 0).await?;
/// println!("orders-0 is led by {leader} at {}", conn.addr());
/// // ... send; after a NOT_LEADER_OR_FOLLOWER answer:
/// cluster.invalidate();
/// // ... and at the end:
/// refresher.abort();
/// cluster.close();
/// # Ok(()) }
/// ```
///
/// A client uses it in four steps:
/// 1. [`Cluster::connect`] with a [`ClusterConfig`]: the first metadata;
/// 2. say which topics it needs ([`Cluster::track_topics`] or
///    [`Cluster::refresh_topics`]) and, for a long-lived client, start
///    [`Cluster::spawn_metadata_refresher`];
/// 3. look a partition's leader up ([`Cluster::metadata`]) and send on
///    [`Cluster::connection`] (or both at once: [`Cluster::leader_connection`]);
/// 4. on an answer that says the metadata is stale (NOT_LEADER_OR_FOLLOWER,
///    UNKNOWN_TOPIC_OR_PARTITION), [`Cluster::invalidate`] and retry.
///
/// ```no_run
/// # async fn demo() -> Result<(), kafka_client::ClusterError> {
/// use kafka_client::{Cluster, ClusterConfig};
/// let cluster = Cluster::connect(ClusterConfig::new("127.0.0.1:9092,127.0.0.1:9093")).await?;
/// cluster.refresh_topics(&["orders"]).await?;
/// let leader = cluster.metadata().leader("orders", 0);
/// if let Some(node) = leader {
///     let conn = cluster.connection(node).await?;
///     println!("leader of orders-0 is {}", conn.addr());
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Cluster {
    config: ClusterConfig,
    pool: ConnectionPool,
    metadata: Mutex<ClusterMetadata>,
    tracked: Mutex<BTreeSet<String>>,
    refresh_lock: tokio::sync::Mutex<()>,
    wake: Arc<Notify>,
}

impl Cluster {
    /// Connects to a cluster:
    /// 1. validates the bootstrap list (every address `host:port`), before
    ///    any connection is attempted;
    /// 2. fetches the first metadata (brokers only) from the first bootstrap
    ///    address that answers;
    /// 3. while none answers and every failure is retriable, tries again, the
    ///    reconnect backoff apart, for up to
    ///    [`ClusterConfig::bootstrap_timeout`]; then fails with
    ///    [`ClusterError::NoBrokerAvailable`] naming the last round's attempts.
    ///
    /// ```no_run
    /// # async fn demo() {
    /// use kafka_client::{Cluster, ClusterConfig, ClusterError};
    /// match Cluster::connect(ClusterConfig::new("broker-1:9092,broker-2:9092")).await {
    ///     Ok(cluster) => println!("{} brokers", cluster.metadata().brokers().len()),
    ///     Err(e @ ClusterError::NoBrokerAvailable { .. }) => eprintln!("retry later: {e}"),
    ///     Err(e) => panic!("fix the configuration: {e}"),
    /// }
    /// # }
    /// ```
    pub async fn connect(config: ClusterConfig) -> Result<Arc<Self>, ClusterError> {
        if config.bootstrap.is_empty() {
            return Err(ClusterError::InvalidAddress(String::new()));
        }
        for a in &config.bootstrap {
            match a.rsplit_once(':') {
                Some((h, p)) if !h.is_empty() && p.parse::<u16>().is_ok() => {}
                _ => return Err(ClusterError::InvalidAddress(a.clone())),
            }
        }
        let cluster = Arc::new(Self {
            pool: ConnectionPool::new(config.connection.clone(), config.reconnect_backoff),
            metadata: Mutex::new(ClusterMetadata::new(config.metadata_max_age)),
            tracked: Mutex::new(BTreeSet::new()),
            refresh_lock: tokio::sync::Mutex::new(()),
            wake: Arc::new(Notify::new()),
            config,
        });
        cluster.bootstrap().await?;
        Ok(cluster)
    }

    /// The first metadata, in rounds over the bootstrap addresses until one
    /// answers, a failure is not retriable, or the bootstrap timeout passes.
    async fn bootstrap(&self) -> Result<MetadataUpdate, ClusterError> {
        let deadline = tokio::time::Instant::now() + self.config.bootstrap_timeout;
        let mut failed_rounds = 0u32;
        loop {
            let err = match self.refresh().await {
                Ok(update) => return Ok(update),
                Err(e) => e,
            };
            let every_attempt_retriable = match &err {
                ClusterError::NoBrokerAvailable { attempts } => {
                    attempts.iter().all(|(_, e)| e.is_retriable())
                }
                _ => false,
            };
            let wake_at =
                tokio::time::Instant::now() + self.config.reconnect_backoff.backoff(failed_rounds);
            if !every_attempt_retriable || wake_at >= deadline {
                return Err(err);
            }
            failed_rounds += 1;
            if failed_rounds == 1 {
                tracing::warn!(
                    error = %err,
                    timeout_ms = self.config.bootstrap_timeout.as_millis() as u64,
                    "no bootstrap address answered; retrying"
                );
            } else {
                tracing::debug!(error = %err, round = failed_rounds, "bootstrap round failed");
            }
            tokio::time::sleep_until(wake_at).await;
        }
    }

    /// The configuration.
    pub fn config(&self) -> &ClusterConfig {
        &self.config
    }

    /// The broker connection pool.
    pub fn pool(&self) -> &ConnectionPool {
        &self.pool
    }

    /// A view of the cached metadata (do not hold it across an `.await`).
    pub fn metadata(&self) -> MutexGuard<'_, ClusterMetadata> {
        self.metadata.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds topics to those every [`Self::refresh`] asks for.
    pub fn track_topics<S: AsRef<str>>(&self, topics: &[S]) {
        let mut t = self.tracked.lock().unwrap_or_else(|p| p.into_inner());
        for s in topics {
            t.insert(s.as_ref().to_string());
        }
    }

    /// The tracked topics.
    pub fn tracked_topics(&self) -> Vec<String> {
        self.tracked
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .cloned()
            .collect()
    }

    /// Marks the metadata stale (after NOT_LEADER_OR_FOLLOWER,
    /// UNKNOWN_TOPIC_OR_PARTITION or a disconnect) and wakes the background
    /// refresher, if any.
    pub fn invalidate(&self) {
        self.metadata().invalidate();
        self.wake.notify_one();
    }

    /// Refreshes the tracked topics (brokers only if none are tracked).
    pub async fn refresh(&self) -> Result<MetadataUpdate, ClusterError> {
        let topics = self.tracked_topics();
        self.refresh_selection(TopicSelection::Names(topics)).await
    }

    /// Tracks `topics` and refreshes them.
    pub async fn refresh_topics<S: AsRef<str>>(
        &self,
        topics: &[S],
    ) -> Result<MetadataUpdate, ClusterError> {
        self.track_topics(topics);
        self.refresh().await
    }

    /// Refreshes every topic in the cluster; topics no longer present are dropped.
    pub async fn refresh_all(&self) -> Result<MetadataUpdate, ClusterError> {
        self.refresh_selection(TopicSelection::All).await
    }

    /// Refreshes if the cache is invalidated or older than the max age.
    /// Returns whether a refresh happened.
    pub async fn maybe_refresh(&self) -> Result<bool, ClusterError> {
        if self.metadata().needs_refresh(Instant::now()) {
            self.refresh().await?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// Sends a Metadata request for `selection` to any reachable broker and
    /// applies the response.
    pub async fn refresh_selection(
        &self,
        selection: TopicSelection,
    ) -> Result<MetadataUpdate, ClusterError> {
        let _single_flight = self.refresh_lock.lock().await;
        let mut attempts = Vec::new();
        for candidate in self.candidates() {
            let conn = match candidate.connect(self).await {
                Ok(c) => c,
                Err(e) => {
                    attempts.push((candidate.addr(self), e));
                    continue;
                }
            };
            match self.fetch_metadata(&conn, &selection).await {
                Ok(resp) => {
                    if let Candidate::Bootstrap(_) = candidate {
                        conn.close();
                    }
                    return Ok(self.apply(&resp, &selection));
                }
                Err(ClusterError::Conn(e)) if e.is_retriable() => {
                    attempts.push((conn.addr().to_string(), e));
                }
                Err(e) => return Err(e),
            }
        }
        Err(ClusterError::NoBrokerAvailable { attempts })
    }

    fn apply(&self, resp: &MetadataResponse, selection: &TopicSelection) -> MetadataUpdate {
        let now = Instant::now();
        let update = {
            let mut md = self.metadata();
            match selection {
                TopicSelection::All => md.handle_full_metadata_response(resp, now),
                TopicSelection::Names(_) => md.handle_metadata_response(resp, now),
            }
        };
        let ids: Vec<i32> = resp.brokers.iter().map(|b| b.node_id).collect();
        for b in self.metadata().brokers().values() {
            self.pool.set_address(b.node_id, &b.addr());
        }
        self.pool.retain(&ids);
        if !update.topic_errors.is_empty() {
            tracing::debug!(errors = ?update.topic_errors, "metadata topic errors");
        }
        update
    }

    /// Known brokers (a live connection first, then the rest), then the
    /// bootstrap addresses.
    fn candidates(&self) -> Vec<Candidate> {
        let mut v = Vec::new();
        let live = self.pool.any_live().map(|(id, _)| id);
        if let Some(id) = live {
            v.push(Candidate::Node(id));
        }
        let mut ids = self.pool.node_ids();
        if !ids.is_empty() {
            // Spread load: start at a random broker.
            let start = rand::random_range(0..ids.len());
            ids.rotate_left(start);
        }
        v.extend(
            ids.into_iter()
                .filter(|id| Some(*id) != live)
                .map(Candidate::Node),
        );
        v.extend(
            self.config
                .bootstrap
                .iter()
                .cloned()
                .map(Candidate::Bootstrap),
        );
        v
    }

    async fn fetch_metadata(
        &self,
        conn: &Connection,
        selection: &TopicSelection,
    ) -> Result<MetadataResponse, ClusterError> {
        let version = conn
            .versions()
            .version_for::<MetadataRequest>()?
            .min(self.config.metadata_max_version);
        let mut req = match selection {
            TopicSelection::All if version >= 1 => MetadataRequest::all_topics(),
            TopicSelection::All => MetadataRequest::default(), // v0: empty = all
            TopicSelection::Names(names) => MetadataRequest {
                topics: Some(
                    names
                        .iter()
                        .map(|n| MetadataRequestTopic::by_name(n.clone()))
                        .collect(),
                ),
                ..Default::default()
            },
        };
        if version >= 4 {
            req.allow_auto_topic_creation = self.config.allow_auto_topic_creation;
        }
        let resp = conn.send(&req, version).await?;
        let error = ErrorCode::from(resp.error_code);
        if !error.is_ok() {
            return Err(ClusterError::Metadata { version, error });
        }
        Ok(resp)
    }

    /// A live (or new) connection to broker `node_id`.
    pub async fn connection(&self, node_id: i32) -> Result<Arc<Connection>, ClusterError> {
        let r = self.pool.connection(node_id).await;
        if matches!(&r, Err(ClusterError::UnknownBroker(_))) {
            self.invalidate();
        }
        r
    }

    /// A live (or new) connection of `lane` to broker `node_id`: lane 0 is
    /// [`Self::connection`]'s, lanes 1.. are connections of their own (the
    /// producer's `produce.connections.per.broker`).
    pub async fn connection_lane(
        &self,
        node_id: i32,
        lane: usize,
    ) -> Result<Arc<Connection>, ClusterError> {
        let r = self.pool.connection_lane(node_id, lane).await;
        if matches!(&r, Err(ClusterError::UnknownBroker(_))) {
            self.invalidate();
        }
        r
    }

    /// The leader of `topic`/`partition` and a connection to it; refreshes the
    /// metadata once if the leader is unknown.
    pub async fn leader_connection(
        &self,
        topic: &str,
        partition: i32,
    ) -> Result<(i32, Arc<Connection>), ClusterError> {
        let mut leader = self.metadata().leader(topic, partition);
        if leader.is_none() {
            self.refresh_topics(&[topic]).await?;
            leader = self.metadata().leader(topic, partition);
        }
        let node = leader.ok_or(ClusterError::Metadata {
            version: -1,
            error: ErrorCode::LeaderNotAvailable,
        })?;
        Ok((node, self.connection(node).await?))
    }

    /// Any usable connection: a live one, else the first broker (or bootstrap
    /// address) that accepts one.
    pub async fn any_connection(&self) -> Result<Arc<Connection>, ClusterError> {
        let mut attempts = Vec::new();
        for c in self.candidates() {
            match c.connect(self).await {
                Ok(conn) => return Ok(conn),
                Err(e) => attempts.push((c.addr(self), e)),
            }
        }
        Err(ClusterError::NoBrokerAvailable { attempts })
    }

    /// Starts a task that refreshes the metadata every `metadata.max.age.ms`
    /// and soon after each [`Self::invalidate`]; it stops when the last `Arc`
    /// to the cluster is dropped or the handle is aborted.
    pub fn spawn_metadata_refresher(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            loop {
                let Some(cluster) = weak.upgrade() else {
                    return;
                };
                let wait = cluster.metadata().time_to_refresh(Instant::now());
                if !wait.is_zero() {
                    // Do not keep the cluster alive while sleeping.
                    let wake = cluster.wake.clone();
                    drop(cluster);
                    tokio::select! {
                        _ = tokio::time::sleep(wait) => {}
                        _ = wake.notified() => {}
                    }
                    continue;
                }
                if let Err(e) = cluster.refresh().await {
                    tracing::debug!(error = %e, "background metadata refresh failed");
                }
                let backoff = cluster.config.metadata_refresh_backoff;
                drop(cluster);
                tokio::time::sleep(backoff).await;
            }
        })
    }

    /// Closes every connection.
    pub fn close(&self) {
        self.pool.close_all();
    }
}

#[derive(Debug, Clone)]
enum Candidate {
    Node(i32),
    Bootstrap(String),
}

impl Candidate {
    async fn connect(&self, cluster: &Cluster) -> Result<Arc<Connection>, ConnError> {
        match self {
            Candidate::Node(id) => match cluster.pool.connection(*id).await {
                Ok(c) => Ok(c),
                Err(ClusterError::Conn(e)) => Err(e),
                Err(e) => Err(ConnError::Disconnected {
                    addr: format!("node {id}"),
                    api: None,
                    reason: e.to_string(),
                }),
            },
            Candidate::Bootstrap(addr) => Connection::connect(addr, &cluster.config.connection)
                .await
                .map(Arc::new),
        }
    }

    fn addr(&self, cluster: &Cluster) -> String {
        match self {
            Candidate::Node(id) => cluster
                .pool
                .broker(*id)
                .map(|b| b.addr())
                .unwrap_or_else(|| format!("node {id}")),
            Candidate::Bootstrap(a) => a.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bootstrap_list_is_split_on_commas_and_trimmed() {
        let c = ClusterConfig::new("a:9092, b:9092");
        assert_eq!(
            c.bootstrap,
            vec!["a:9092".to_string(), "b:9092".to_string()]
        );
        assert!(ClusterConfig::new(" , ").bootstrap.is_empty());
    }

    #[test]
    fn metadata_max_age_defaults_to_five_minutes() {
        assert_eq!(
            ClusterConfig::new("a:9092").metadata_max_age,
            Duration::from_secs(300)
        );
    }

    #[tokio::test]
    async fn invalid_address_is_refused_before_connecting_and_named() {
        let err = Cluster::connect(ClusterConfig::new("localhost"))
            .await
            .unwrap_err();
        assert!(matches!(err, ClusterError::InvalidAddress(a) if a == "localhost"));
    }
}
