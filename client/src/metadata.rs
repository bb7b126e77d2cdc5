//! Cluster metadata bookkeeping (sans-IO): brokers, topics, partitions and
//! leaders, updated from Metadata responses and aged by `metadata.max.age.ms`.

use kafka_proto::ErrorCode;
use kafka_proto::messages::{MetadataResponse, MetadataResponseTopic};
use kafka_proto::primitives::Uuid;
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

/// Default `metadata.max.age.ms`: 5 minutes.
pub const DEFAULT_METADATA_MAX_AGE: Duration = Duration::from_secs(300);

/// A broker as listed by Metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerInfo {
    /// Node id.
    pub node_id: i32,
    /// Advertised host.
    pub host: String,
    /// Advertised port.
    pub port: i32,
    /// Rack, if configured.
    pub rack: Option<String>,
}

impl BrokerInfo {
    /// `host:port` (IPv6 hosts in brackets).
    pub fn addr(&self) -> String {
        if self.host.contains(':') && !self.host.starts_with('[') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// One partition's leadership and replicas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionMetadata {
    /// Partition index.
    pub partition: i32,
    /// Leader node id, `None` while there is no leader.
    pub leader: Option<i32>,
    /// Leader epoch (-1 if unknown).
    pub leader_epoch: i32,
    /// Replica node ids.
    pub replicas: Vec<i32>,
    /// In-sync replica node ids.
    pub isr: Vec<i32>,
    /// Offline replica node ids.
    pub offline_replicas: Vec<i32>,
    /// Partition-level error (e.g. LEADER_NOT_AVAILABLE).
    pub error: ErrorCode,
}

/// One topic's metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicMetadata {
    /// Topic name.
    pub name: String,
    /// Topic id (all zeros before Metadata v10).
    pub topic_id: Uuid,
    /// Internal topic (e.g. `__transaction_state`).
    pub is_internal: bool,
    /// Partitions by index.
    pub partitions: BTreeMap<i32, PartitionMetadata>,
}

impl TopicMetadata {
    /// Number of partitions.
    pub fn partition_count(&self) -> usize {
        self.partitions.len()
    }
}

/// What one Metadata response changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetadataUpdate {
    /// Topics the response reported with an error (they are not cached if the
    /// error is not retriable, e.g. UNKNOWN_TOPIC_OR_PARTITION).
    pub topic_errors: Vec<(String, ErrorCode)>,
    /// Partitions without a leader after the update.
    pub partitions_without_leader: usize,
    /// Partitions whose cached (newer) leader epoch was kept over a stale response.
    pub stale_partitions: usize,
}

/// Cached cluster metadata, a plain struct driven by
/// [`Self::handle_metadata_response`]; no IO.
///
/// The driver (the [`Cluster`](crate::Cluster)) owns the I/O:
/// 1. when [`ClusterMetadata::needs_refresh`] says so (never refreshed,
///    too old, or invalidated), it sends a Metadata request;
/// 2. it hands the response to [`ClusterMetadata::handle_metadata_response`],
///    whose [`MetadataUpdate`] says what was wrong with it;
/// 3. senders look leaders up, and [`ClusterMetadata::invalidate`] when a
///    broker says the metadata is stale (NOT_LEADER_OR_FOLLOWER).
///
/// ```
/// use kafka_client::ClusterMetadata;
/// use kafka_proto::messages::{MetadataResponse, MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic};
/// use std::time::{Duration, Instant};
/// let mut md = ClusterMetadata::new(Duration::from_secs(300));
/// let now = Instant::now();
/// assert!(md.needs_refresh(now));
/// md.handle_metadata_response(&MetadataResponse {
///     brokers: vec![MetadataResponseBroker { node_id: 1, host: "b1".into(), port: 9092, ..Default::default() }],
///     topics: vec![MetadataResponseTopic {
///         name: Some("orders".into()),
///         partitions: vec![MetadataResponsePartition { partition_index: 0, leader_id: 1, leader_epoch: 4, ..Default::default() }],
///         ..Default::default()
///     }],
///     ..Default::default()
/// }, now);
/// assert_eq!(md.leader("orders", 0), Some(1));
/// assert_eq!(md.leader_broker("orders", 0).unwrap().addr(), "b1:9092");
/// assert!(!md.needs_refresh(now));
/// md.invalidate();
/// assert!(md.needs_refresh(now));
/// ```
#[derive(Debug, Clone)]
pub struct ClusterMetadata {
    cluster_id: Option<String>,
    controller_id: Option<i32>,
    brokers: BTreeMap<i32, BrokerInfo>,
    topics: BTreeMap<String, TopicMetadata>,
    names_by_id: HashMap<Uuid, String>,
    last_refresh: Option<Instant>,
    need_update: bool,
    max_age: Duration,
    updates: u64,
    /// Topics the last response naming them refused for good
    /// (INVALID_TOPIC_EXCEPTION, TOPIC_AUTHORIZATION_FAILED): Java's
    /// `Metadata` keeps them as its invalid and unauthorized topics.
    refused_topics: HashMap<String, ErrorCode>,
}

impl ClusterMetadata {
    /// Empty metadata that expires after `max_age` (`metadata.max.age.ms`).
    ///
    /// ```
    /// use kafka_client::ClusterMetadata;
    /// use std::time::{Duration, Instant};
    /// let md = ClusterMetadata::new(Duration::from_secs(60));
    /// // A background refresher sleeps this long before its next request
    /// // (zero now: never refreshed).
    /// assert_eq!(md.time_to_refresh(Instant::now()), Duration::ZERO);
    /// ```
    pub fn new(max_age: Duration) -> Self {
        Self {
            cluster_id: None,
            controller_id: None,
            brokers: BTreeMap::new(),
            topics: BTreeMap::new(),
            names_by_id: HashMap::new(),
            last_refresh: None,
            need_update: true,
            max_age,
            updates: 0,
            refused_topics: HashMap::new(),
        }
    }

    /// Applies a response for some topics: brokers are replaced, listed topics
    /// are replaced or added (a non-retriable topic error removes the topic),
    /// other cached topics are kept.
    pub fn handle_metadata_response(
        &mut self,
        resp: &MetadataResponse,
        now: Instant,
    ) -> MetadataUpdate {
        self.apply(resp, now, false)
    }

    /// Applies a response for **all** topics: topics absent from it are dropped.
    pub fn handle_full_metadata_response(
        &mut self,
        resp: &MetadataResponse,
        now: Instant,
    ) -> MetadataUpdate {
        self.apply(resp, now, true)
    }

    fn apply(&mut self, resp: &MetadataResponse, now: Instant, full: bool) -> MetadataUpdate {
        let mut update = MetadataUpdate::default();
        let mut need_update = false;
        self.brokers = resp
            .brokers
            .iter()
            .map(|b| {
                (
                    b.node_id,
                    BrokerInfo {
                        node_id: b.node_id,
                        host: b.host.clone(),
                        port: b.port,
                        rack: b.rack.clone(),
                    },
                )
            })
            .collect();
        if resp.cluster_id.is_some() {
            self.cluster_id = resp.cluster_id.clone();
        }
        self.controller_id = (resp.controller_id >= 0).then_some(resp.controller_id);
        let mut seen = Vec::new();
        for t in &resp.topics {
            let Some(name) = t
                .name
                .clone()
                .or_else(|| self.names_by_id.get(&t.topic_id).cloned())
            else {
                continue;
            };
            seen.push(name.clone());
            let error = ErrorCode::from(t.error_code);
            if matches!(
                error,
                ErrorCode::InvalidTopicException | ErrorCode::TopicAuthorizationFailed
            ) {
                self.refused_topics.insert(name.clone(), error);
            } else {
                self.refused_topics.remove(&name);
            }
            if !error.is_ok() {
                update.topic_errors.push((name.clone(), error));
                if error.is_retriable() {
                    need_update = true;
                } else {
                    self.remove_topic(&name);
                }
                continue;
            }
            let topic = self.merge_topic(&name, t, &mut update);
            if topic.partitions.values().any(|p| p.leader.is_none()) {
                need_update = true;
            }
        }
        if full {
            let stale: Vec<String> = self
                .topics
                .keys()
                .filter(|n| !seen.contains(n))
                .cloned()
                .collect();
            for n in stale {
                self.remove_topic(&n);
            }
        }
        update.partitions_without_leader = self
            .topics
            .values()
            .flat_map(|t| t.partitions.values())
            .filter(|p| p.leader.is_none())
            .count();
        if update.stale_partitions > 0 {
            need_update = true;
        }
        self.last_refresh = Some(now);
        self.need_update = need_update;
        self.updates += 1;
        update
    }

    fn remove_topic(&mut self, name: &str) {
        if let Some(t) = self.topics.remove(name) {
            self.names_by_id.remove(&t.topic_id);
        }
    }

    fn merge_topic(
        &mut self,
        name: &str,
        t: &MetadataResponseTopic,
        update: &mut MetadataUpdate,
    ) -> &TopicMetadata {
        let old = self.topics.remove(name);
        if let Some(o) = &old {
            self.names_by_id.remove(&o.topic_id);
        }
        // A recreated topic (new id) must not inherit the old epochs.
        let old = old.filter(|o| o.topic_id == t.topic_id || t.topic_id == [0; 16]);
        let mut partitions = BTreeMap::new();
        for p in &t.partitions {
            let fresh = PartitionMetadata {
                partition: p.partition_index,
                leader: (p.leader_id >= 0).then_some(p.leader_id),
                leader_epoch: p.leader_epoch,
                replicas: p.replica_nodes.clone(),
                isr: p.isr_nodes.clone(),
                offline_replicas: p.offline_replicas.clone(),
                error: ErrorCode::from(p.error_code),
            };
            let cached = old
                .as_ref()
                .and_then(|o| o.partitions.get(&p.partition_index));
            let keep_cached = matches!(cached, Some(c) if c.leader_epoch >= 0 && fresh.leader_epoch >= 0 && c.leader_epoch > fresh.leader_epoch);
            let chosen = if keep_cached {
                update.stale_partitions += 1;
                cached.cloned().unwrap_or(fresh)
            } else {
                fresh
            };
            partitions.insert(p.partition_index, chosen);
        }
        if t.topic_id != [0; 16] {
            self.names_by_id.insert(t.topic_id, name.to_string());
        }
        self.topics.insert(
            name.to_string(),
            TopicMetadata {
                name: name.to_string(),
                topic_id: t.topic_id,
                is_internal: t.is_internal,
                partitions,
            },
        );
        &self.topics[name]
    }

    /// Requests a refresh (after NOT_LEADER_OR_FOLLOWER,
    /// UNKNOWN_TOPIC_OR_PARTITION, a disconnect, ...).
    pub fn invalidate(&mut self) {
        self.need_update = true;
    }

    /// True when invalidated, never refreshed, or older than the max age.
    pub fn needs_refresh(&self, now: Instant) -> bool {
        self.time_to_refresh(now).is_zero()
    }

    /// Time until the cache expires (zero if a refresh is due now).
    pub fn time_to_refresh(&self, now: Instant) -> Duration {
        match self.last_refresh {
            _ if self.need_update => Duration::ZERO,
            None => Duration::ZERO,
            Some(t) => (t + self.max_age).saturating_duration_since(now),
        }
    }

    /// When the last response was applied.
    pub fn last_refresh(&self) -> Option<Instant> {
        self.last_refresh
    }

    /// Number of responses applied.
    pub fn update_count(&self) -> u64 {
        self.updates
    }

    /// The cluster id, if reported (v2+).
    pub fn cluster_id(&self) -> Option<&str> {
        self.cluster_id.as_deref()
    }

    /// The controller's node id, if reported.
    pub fn controller_id(&self) -> Option<i32> {
        self.controller_id
    }

    /// Brokers by node id.
    pub fn brokers(&self) -> &BTreeMap<i32, BrokerInfo> {
        &self.brokers
    }

    /// One broker.
    pub fn broker(&self, node_id: i32) -> Option<&BrokerInfo> {
        self.brokers.get(&node_id)
    }

    /// Cached topics by name.
    pub fn topics(&self) -> &BTreeMap<String, TopicMetadata> {
        &self.topics
    }

    /// One topic.
    pub fn topic(&self, name: &str) -> Option<&TopicMetadata> {
        self.topics.get(name)
    }

    /// The error with which the last response naming `name` refused the
    /// topic for good: INVALID_TOPIC_EXCEPTION or TOPIC_AUTHORIZATION_FAILED
    /// (Java's `Metadata.maybeThrowExceptionForTopic`). Records waiting for
    /// its metadata fail with it instead of waiting out `max.block.ms`.
    pub fn refused_topic(&self, name: &str) -> Option<ErrorCode> {
        self.refused_topics.get(name).copied()
    }

    /// Takes the refusal of `name` once it has been reported to the records
    /// waiting for it, so that a later send asks the broker again (Java clears
    /// the invalid and unauthorized topics once it has thrown them).
    pub fn take_refused_topic(&mut self, name: &str) -> Option<ErrorCode> {
        self.refused_topics.remove(name)
    }

    /// A topic's name from its id.
    pub fn topic_name(&self, id: &Uuid) -> Option<&str> {
        self.names_by_id.get(id).map(String::as_str)
    }

    /// A topic's id (`None` if unknown or all zeros).
    pub fn topic_id(&self, name: &str) -> Option<Uuid> {
        self.topics
            .get(name)
            .map(|t| t.topic_id)
            .filter(|id| *id != [0; 16])
    }

    /// One partition.
    pub fn partition(&self, topic: &str, partition: i32) -> Option<&PartitionMetadata> {
        self.topics.get(topic)?.partitions.get(&partition)
    }

    /// The leader's node id of a partition.
    pub fn leader(&self, topic: &str, partition: i32) -> Option<i32> {
        self.partition(topic, partition)?.leader
    }

    /// The leader broker of a partition.
    pub fn leader_broker(&self, topic: &str, partition: i32) -> Option<&BrokerInfo> {
        self.brokers.get(&self.leader(topic, partition)?)
    }
}

impl Default for ClusterMetadata {
    fn default() -> Self {
        Self::new(DEFAULT_METADATA_MAX_AGE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_proto::messages::{MetadataResponseBroker, MetadataResponsePartition};

    fn resp(leader: i32, epoch: i32, id: u8) -> MetadataResponse {
        MetadataResponse {
            brokers: vec![
                MetadataResponseBroker {
                    node_id: 1,
                    host: "h1".into(),
                    port: 1,
                    ..Default::default()
                },
                MetadataResponseBroker {
                    node_id: 2,
                    host: "h2".into(),
                    port: 2,
                    ..Default::default()
                },
            ],
            cluster_id: Some("c".into()),
            controller_id: 1,
            topics: vec![MetadataResponseTopic {
                name: Some("t".into()),
                topic_id: [id; 16],
                partitions: vec![
                    MetadataResponsePartition {
                        partition_index: 0,
                        leader_id: leader,
                        leader_epoch: epoch,
                        replica_nodes: vec![1, 2],
                        isr_nodes: vec![1, 2],
                        ..Default::default()
                    },
                    MetadataResponsePartition {
                        partition_index: 1,
                        leader_id: 2,
                        leader_epoch: 0,
                        ..Default::default()
                    },
                ],
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn leaders_ids_and_brokers() {
        let mut md = ClusterMetadata::default();
        let now = Instant::now();
        let u = md.handle_metadata_response(&resp(1, 5, 7), now);
        assert_eq!(u, MetadataUpdate::default());
        assert_eq!(md.leader("t", 0), Some(1));
        assert_eq!(md.leader("t", 1), Some(2));
        assert_eq!(md.topic("t").unwrap().partition_count(), 2);
        assert_eq!(md.topic_name(&[7; 16]), Some("t"));
        assert_eq!(md.topic_id("t"), Some([7; 16]));
        assert_eq!(md.brokers().len(), 2);
        assert_eq!(md.cluster_id(), Some("c"));
        assert_eq!(md.controller_id(), Some(1));
        assert!(!md.needs_refresh(now));
        assert!(md.needs_refresh(now + DEFAULT_METADATA_MAX_AGE));
        assert_eq!(
            md.time_to_refresh(now + Duration::from_secs(100)),
            Duration::from_secs(200)
        );
    }

    #[test]
    fn stale_leader_epoch_is_ignored() {
        let mut md = ClusterMetadata::default();
        let now = Instant::now();
        md.handle_metadata_response(&resp(1, 5, 7), now);
        let u = md.handle_metadata_response(&resp(2, 4, 7), now);
        assert_eq!(u.stale_partitions, 1);
        assert_eq!(md.leader("t", 0), Some(1));
        assert!(md.needs_refresh(now));
        md.handle_metadata_response(&resp(2, 6, 7), now);
        assert_eq!(md.leader("t", 0), Some(2));
        // A recreated topic (new id) starts afresh even with a lower epoch.
        md.handle_metadata_response(&resp(1, 0, 8), now);
        assert_eq!(md.leader("t", 0), Some(1));
        assert_eq!(md.topic_name(&[7; 16]), None);
    }

    #[test]
    fn missing_leader_and_topic_errors() {
        let mut md = ClusterMetadata::default();
        let now = Instant::now();
        let u = md.handle_metadata_response(&resp(-1, 5, 7), now);
        assert_eq!(u.partitions_without_leader, 1);
        assert_eq!(md.leader("t", 0), None);
        assert!(md.needs_refresh(now));

        let mut gone = resp(1, 6, 7);
        gone.topics[0].error_code = ErrorCode::UnknownTopicOrPartition.code();
        let u = md.handle_metadata_response(&gone, now);
        assert_eq!(
            u.topic_errors,
            vec![("t".to_string(), ErrorCode::UnknownTopicOrPartition)]
        );
        // UNKNOWN_TOPIC_OR_PARTITION is retriable in Kafka: the topic may be
        // being created; it stays cached and a refresh is requested.
        assert!(md.needs_refresh(now));

        let mut invalid = resp(1, 6, 7);
        invalid.topics[0].error_code = ErrorCode::InvalidTopicException.code();
        md.handle_metadata_response(&invalid, now);
        assert!(md.topic("t").is_none());
        assert_eq!(
            md.refused_topic("t"),
            Some(ErrorCode::InvalidTopicException)
        );
        // A later answer without the error forgets the refusal.
        md.handle_metadata_response(&resp(1, 6, 7), now);
        assert_eq!(md.refused_topic("t"), None);
        assert!(md.topic("t").is_some());
    }

    fn topic(name: &str, error: ErrorCode) -> MetadataResponseTopic {
        MetadataResponseTopic {
            name: Some(name.into()),
            error_code: error.code(),
            ..Default::default()
        }
    }

    fn topics(list: Vec<MetadataResponseTopic>) -> MetadataResponse {
        MetadataResponse {
            topics: list,
            ..Default::default()
        }
    }

    #[test]
    fn new_metadata_is_empty_and_needs_a_refresh() {
        let md = ClusterMetadata::new(Duration::from_secs(60));
        assert!(md.needs_refresh(Instant::now()));
        assert_eq!(md.time_to_refresh(Instant::now()), Duration::ZERO);
        assert!(md.brokers().is_empty() && md.topics().is_empty());
        assert_eq!((md.last_refresh(), md.update_count()), (None, 0));
    }

    #[test]
    fn a_response_records_the_refresh_time_and_count() {
        let mut md = ClusterMetadata::default();
        let now = Instant::now();
        md.handle_metadata_response(&resp(1, 5, 7), now);
        assert_eq!((md.last_refresh(), md.update_count()), (Some(now), 1));
    }

    #[test]
    fn partition_keeps_its_replicas_isr_and_epoch() {
        let mut md = ClusterMetadata::default();
        md.handle_metadata_response(&resp(1, 5, 7), Instant::now());
        let p = md.partition("t", 0).unwrap();
        assert_eq!((p.leader, p.leader_epoch), (Some(1), 5));
        assert_eq!(
            (p.replicas.as_slice(), p.isr.as_slice()),
            (&[1, 2][..], &[1, 2][..])
        );
        assert!(p.error.is_ok());
        assert!(md.partition("t", 2).is_none());
    }

    #[test]
    fn leader_broker_is_the_leaders_address() {
        let mut md = ClusterMetadata::default();
        md.handle_metadata_response(&resp(1, 5, 7), Instant::now());
        assert_eq!(
            md.leader_broker("t", 1).map(|b| b.addr()),
            Some("h2:2".into())
        );
        assert!(md.leader("t", 9).is_none() && md.broker(3).is_none());
    }

    #[test]
    fn ipv6_broker_address_is_bracketed() {
        let b = BrokerInfo {
            node_id: 1,
            host: "::1".into(),
            port: 9092,
            rack: None,
        };
        assert_eq!(b.addr(), "[::1]:9092");
    }

    #[test]
    fn brokers_only_response_keeps_the_cached_topics() {
        let mut md = ClusterMetadata::default();
        let now = Instant::now();
        md.handle_metadata_response(&resp(1, 5, 7), now);
        let brokers_only = MetadataResponse {
            topics: vec![],
            ..resp(1, 5, 7)
        };
        md.handle_metadata_response(&brokers_only, now);
        assert!(md.topic("t").is_some());
    }

    #[test]
    fn full_response_drops_the_topics_it_does_not_list() {
        let mut md = ClusterMetadata::default();
        let now = Instant::now();
        let a = topic("a", ErrorCode::None);
        let b = topic("b", ErrorCode::None);
        md.handle_metadata_response(&topics(vec![a, b.clone()]), now);
        md.handle_full_metadata_response(&topics(vec![b]), now);
        assert!(md.topic("a").is_none() && md.topic("b").is_some());
    }

    #[test]
    fn invalidate_asks_for_a_refresh() {
        let mut md = ClusterMetadata::default();
        let now = Instant::now();
        md.handle_metadata_response(&resp(1, 5, 7), now);
        assert!(!md.needs_refresh(now));
        md.invalidate();
        assert!(md.needs_refresh(now));
    }

    /// Metadata after a response refusing topic `name` with `error`.
    fn refusing(name: &str, error: ErrorCode) -> ClusterMetadata {
        let mut md = ClusterMetadata::default();
        md.handle_metadata_response(&topics(vec![topic(name, error)]), Instant::now());
        md
    }

    #[test]
    fn unauthorized_topic_is_refused_and_reported() {
        let md = refusing("payroll", ErrorCode::TopicAuthorizationFailed);
        assert_eq!(
            md.refused_topic("payroll"),
            Some(ErrorCode::TopicAuthorizationFailed)
        );
        assert_eq!(md.refused_topic("orders"), None);
    }

    #[test]
    fn take_refused_topic_forgets_the_refusal() {
        let mut md = refusing("x", ErrorCode::InvalidTopicException);
        assert_eq!(
            md.take_refused_topic("x"),
            Some(ErrorCode::InvalidTopicException)
        );
        assert_eq!(md.refused_topic("x"), None);
    }
}
