//! Cluster metadata bookkeeping (sans-IO): brokers, topics, partitions and
//! leaders, updated from Metadata responses and aged by `metadata.max.age.ms`.
//!
//! ```
//! use kafka_client::ClusterMetadata;
//! use kafka_proto::messages::{MetadataResponse, MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic};
//! use std::time::{Duration, Instant};
//! let mut md = ClusterMetadata::new(Duration::from_secs(300));
//! let now = Instant::now();
//! assert!(md.needs_refresh(now));
//! md.handle_metadata_response(&MetadataResponse {
//!     brokers: vec![MetadataResponseBroker { node_id: 1, host: "b1".into(), port: 9092, ..Default::default() }],
//!     topics: vec![MetadataResponseTopic {
//!         name: Some("orders".into()),
//!         partitions: vec![MetadataResponsePartition { partition_index: 0, leader_id: 1, leader_epoch: 4, ..Default::default() }],
//!         ..Default::default()
//!     }],
//!     ..Default::default()
//! }, now);
//! assert_eq!(md.leader("orders", 0), Some(1));
//! assert_eq!(md.leader_broker("orders", 0).unwrap().addr(), "b1:9092");
//! assert!(!md.needs_refresh(now));
//! md.invalidate();
//! assert!(md.needs_refresh(now));
//! ```

use kafka_proto::ErrorCode;
use kafka_proto::messages::{MetadataResponse, MetadataResponseTopic};
use kafka_proto::primitives::Uuid;
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

/// Default `metadata.max.age.ms`: 5 minutes.
pub const DEFAULT_METADATA_MAX_AGE: Duration = Duration::from_secs(300);

/// A broker as listed by Metadata.
///
/// ```
/// # use kafka_client::ClusterMetadata;
/// # use kafka_proto::messages::{MetadataResponse as R, MetadataResponseBroker as B, MetadataResponsePartition as P, MetadataResponseTopic as T};
/// # let now = std::time::Instant::now();
/// # let mut md = ClusterMetadata::new(std::time::Duration::from_secs(300));
/// # let b = |id: i32| B { node_id: id, host: format!("broker-{id}"), port: 9092, ..Default::default() };
/// # let p = |i: i32, leader: i32| P { partition_index: i, leader_id: leader, leader_epoch: 4, replica_nodes: vec![1, 2], isr_nodes: vec![1, 2], ..Default::default() };
/// # let orders = T { name: Some("orders".into()), topic_id: [7; 16], partitions: vec![p(0, 1), p(1, 2)], ..Default::default() };
/// # md.handle_metadata_response(&R { cluster_id: Some("kafka-eos-test".into()), controller_id: 1, brokers: vec![b(1), b(2)], topics: vec![orders], ..Default::default() }, now);
/// let broker = md.broker(2).unwrap();
/// assert_eq!((broker.node_id, broker.host.as_str(), broker.port), (2, "broker-2", 9092));
/// assert_eq!(broker.rack, None);
/// ```
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
    ///
    /// ```
    /// let b = kafka_client::BrokerInfo { node_id: 1, host: "::1".into(), port: 9092, rack: None };
    /// assert_eq!(b.addr(), "[::1]:9092");
    /// ```
    pub fn addr(&self) -> String {
        if self.host.contains(':') && !self.host.starts_with('[') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// One partition's leadership and replicas.
///
/// ```
/// # use kafka_client::ClusterMetadata;
/// # use kafka_proto::messages::{MetadataResponse as R, MetadataResponseBroker as B, MetadataResponsePartition as P, MetadataResponseTopic as T};
/// # let now = std::time::Instant::now();
/// # let mut md = ClusterMetadata::new(std::time::Duration::from_secs(300));
/// # let b = |id: i32| B { node_id: id, host: format!("broker-{id}"), port: 9092, ..Default::default() };
/// # let p = |i: i32, leader: i32| P { partition_index: i, leader_id: leader, leader_epoch: 4, replica_nodes: vec![1, 2], isr_nodes: vec![1, 2], ..Default::default() };
/// # let orders = T { name: Some("orders".into()), topic_id: [7; 16], partitions: vec![p(0, 1), p(1, 2)], ..Default::default() };
/// # md.handle_metadata_response(&R { cluster_id: Some("kafka-eos-test".into()), controller_id: 1, brokers: vec![b(1), b(2)], topics: vec![orders], ..Default::default() }, now);
/// let p = md.partition("orders", 0).unwrap();
/// assert_eq!((p.leader, p.leader_epoch), (Some(1), 4));
/// assert_eq!(p.isr, [1, 2]);
/// assert!(p.error.is_ok());
/// ```
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
///
/// ```
/// # use kafka_client::ClusterMetadata;
/// # use kafka_proto::messages::{MetadataResponse as R, MetadataResponseBroker as B, MetadataResponsePartition as P, MetadataResponseTopic as T};
/// # let now = std::time::Instant::now();
/// # let mut md = ClusterMetadata::new(std::time::Duration::from_secs(300));
/// # let b = |id: i32| B { node_id: id, host: format!("broker-{id}"), port: 9092, ..Default::default() };
/// # let p = |i: i32, leader: i32| P { partition_index: i, leader_id: leader, leader_epoch: 4, replica_nodes: vec![1, 2], isr_nodes: vec![1, 2], ..Default::default() };
/// # let orders = T { name: Some("orders".into()), topic_id: [7; 16], partitions: vec![p(0, 1), p(1, 2)], ..Default::default() };
/// # md.handle_metadata_response(&R { cluster_id: Some("kafka-eos-test".into()), controller_id: 1, brokers: vec![b(1), b(2)], topics: vec![orders], ..Default::default() }, now);
/// let t = md.topic("orders").unwrap();
/// assert_eq!((t.name.as_str(), t.topic_id, t.is_internal), ("orders", [7; 16], false));
/// assert_eq!(t.partitions.keys().copied().collect::<Vec<_>>(), [0, 1]);
/// ```
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
    ///
    /// ```
    /// # use kafka_client::ClusterMetadata;
    /// # use kafka_proto::messages::{MetadataResponse as R, MetadataResponseBroker as B, MetadataResponsePartition as P, MetadataResponseTopic as T};
    /// # let now = std::time::Instant::now();
    /// # let mut md = ClusterMetadata::new(std::time::Duration::from_secs(300));
    /// # let b = |id: i32| B { node_id: id, host: format!("broker-{id}"), port: 9092, ..Default::default() };
    /// # let p = |i: i32, leader: i32| P { partition_index: i, leader_id: leader, leader_epoch: 4, replica_nodes: vec![1, 2], isr_nodes: vec![1, 2], ..Default::default() };
    /// # let orders = T { name: Some("orders".into()), topic_id: [7; 16], partitions: vec![p(0, 1), p(1, 2)], ..Default::default() };
    /// # md.handle_metadata_response(&R { cluster_id: Some("kafka-eos-test".into()), controller_id: 1, brokers: vec![b(1), b(2)], topics: vec![orders], ..Default::default() }, now);
    /// assert_eq!(md.topic("orders").unwrap().partition_count(), 2);
    /// ```
    pub fn partition_count(&self) -> usize {
        self.partitions.len()
    }
}

/// What one Metadata response changed.
///
/// ```
/// # use kafka_client::ClusterMetadata;
/// # use kafka_proto::messages::{MetadataResponse as R, MetadataResponseBroker as B, MetadataResponsePartition as P, MetadataResponseTopic as T};
/// # let now = std::time::Instant::now();
/// # let mut md = ClusterMetadata::new(std::time::Duration::from_secs(300));
/// # let b = |id: i32| B { node_id: id, host: format!("broker-{id}"), port: 9092, ..Default::default() };
/// # let p = |i: i32, leader: i32| P { partition_index: i, leader_id: leader, leader_epoch: 4, replica_nodes: vec![1, 2], isr_nodes: vec![1, 2], ..Default::default() };
/// # let orders = T { name: Some("orders".into()), topic_id: [7; 16], partitions: vec![p(0, 1), p(1, 2)], ..Default::default() };
/// # md.handle_metadata_response(&R { cluster_id: Some("kafka-eos-test".into()), controller_id: 1, brokers: vec![b(1), b(2)], topics: vec![orders], ..Default::default() }, now);
/// use kafka_proto::ErrorCode;
/// let missing = T { name: Some("typo".into()), error_code: ErrorCode::UnknownTopicOrPartition.code(), ..Default::default() };
/// let update = md.handle_metadata_response(&R { brokers: vec![b(1)], topics: vec![missing], ..Default::default() }, now);
/// assert_eq!(update.topic_errors, [("typo".to_string(), ErrorCode::UnknownTopicOrPartition)]);
/// assert_eq!(update.partitions_without_leader, 0);
/// ```
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
/// ```
/// # use kafka_client::ClusterMetadata;
/// # use kafka_proto::messages::{MetadataResponse as R, MetadataResponseBroker as B, MetadataResponsePartition as P, MetadataResponseTopic as T};
/// # let now = std::time::Instant::now();
/// # let mut md = ClusterMetadata::new(std::time::Duration::from_secs(300));
/// # let b = |id: i32| B { node_id: id, host: format!("broker-{id}"), port: 9092, ..Default::default() };
/// # let p = |i: i32, leader: i32| P { partition_index: i, leader_id: leader, leader_epoch: 4, replica_nodes: vec![1, 2], isr_nodes: vec![1, 2], ..Default::default() };
/// # let orders = T { name: Some("orders".into()), topic_id: [7; 16], partitions: vec![p(0, 1), p(1, 2)], ..Default::default() };
/// # md.handle_metadata_response(&R { cluster_id: Some("kafka-eos-test".into()), controller_id: 1, brokers: vec![b(1), b(2)], topics: vec![orders], ..Default::default() }, now);
/// assert_eq!(md.leader("orders", 1), Some(2));
/// assert_eq!(md.leader_broker("orders", 1).unwrap().addr(), "broker-2:9092");
/// assert!(md.leader("orders", 9).is_none());
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
    /// let md = ClusterMetadata::new(std::time::Duration::from_secs(60));
    /// assert!(md.needs_refresh(std::time::Instant::now())); // never refreshed
    /// assert!(md.brokers().is_empty());
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
    ///
    /// ```
    /// # use kafka_client::ClusterMetadata;
    /// # use kafka_proto::messages::{MetadataResponse as R, MetadataResponseBroker as B, MetadataResponsePartition as P, MetadataResponseTopic as T};
    /// # let now = std::time::Instant::now();
    /// # let mut md = ClusterMetadata::new(std::time::Duration::from_secs(300));
    /// # let b = |id: i32| B { node_id: id, host: format!("broker-{id}"), port: 9092, ..Default::default() };
    /// # let p = |i: i32, leader: i32| P { partition_index: i, leader_id: leader, leader_epoch: 4, replica_nodes: vec![1, 2], isr_nodes: vec![1, 2], ..Default::default() };
    /// # let orders = T { name: Some("orders".into()), topic_id: [7; 16], partitions: vec![p(0, 1), p(1, 2)], ..Default::default() };
    /// # md.handle_metadata_response(&R { cluster_id: Some("kafka-eos-test".into()), controller_id: 1, brokers: vec![b(1), b(2)], topics: vec![orders], ..Default::default() }, now);
    /// // A later response listing only the brokers keeps the cached topics.
    /// md.handle_metadata_response(&R { brokers: vec![b(1), b(2), b(3)], ..Default::default() }, now);
    /// assert_eq!(md.brokers().len(), 3);
    /// assert!(md.topic("orders").is_some());
    /// ```
    pub fn handle_metadata_response(
        &mut self,
        resp: &MetadataResponse,
        now: Instant,
    ) -> MetadataUpdate {
        self.apply(resp, now, false)
    }

    /// Applies a response for **all** topics: topics absent from it are dropped.
    ///
    /// ```
    /// use kafka_client::ClusterMetadata;
    /// use kafka_proto::messages::{MetadataResponse, MetadataResponseTopic};
    /// let mut md = ClusterMetadata::new(std::time::Duration::from_secs(1));
    /// let t = |n: &str| MetadataResponseTopic { name: Some(n.into()), ..Default::default() };
    /// let now = std::time::Instant::now();
    /// md.handle_metadata_response(&MetadataResponse { topics: vec![t("a"), t("b")], ..Default::default() }, now);
    /// md.handle_full_metadata_response(&MetadataResponse { topics: vec![t("b")], ..Default::default() }, now);
    /// assert!(md.topic("a").is_none() && md.topic("b").is_some());
    /// ```
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
    ///
    /// ```
    /// # use kafka_client::ClusterMetadata;
    /// # use kafka_proto::messages::{MetadataResponse as R, MetadataResponseBroker as B, MetadataResponsePartition as P, MetadataResponseTopic as T};
    /// # let now = std::time::Instant::now();
    /// # let mut md = ClusterMetadata::new(std::time::Duration::from_secs(300));
    /// # let b = |id: i32| B { node_id: id, host: format!("broker-{id}"), port: 9092, ..Default::default() };
    /// # let p = |i: i32, leader: i32| P { partition_index: i, leader_id: leader, leader_epoch: 4, replica_nodes: vec![1, 2], isr_nodes: vec![1, 2], ..Default::default() };
    /// # let orders = T { name: Some("orders".into()), topic_id: [7; 16], partitions: vec![p(0, 1), p(1, 2)], ..Default::default() };
    /// # md.handle_metadata_response(&R { cluster_id: Some("kafka-eos-test".into()), controller_id: 1, brokers: vec![b(1), b(2)], topics: vec![orders], ..Default::default() }, now);
    /// assert!(!md.needs_refresh(now));
    /// md.invalidate(); // e.g. after NOT_LEADER_OR_FOLLOWER
    /// assert!(md.needs_refresh(now));
    /// ```
    pub fn invalidate(&mut self) {
        self.need_update = true;
    }

    /// True when invalidated, never refreshed, or older than the max age.
    ///
    /// ```
    /// # use kafka_client::ClusterMetadata;
    /// # use kafka_proto::messages::{MetadataResponse as R, MetadataResponseBroker as B, MetadataResponsePartition as P, MetadataResponseTopic as T};
    /// # let now = std::time::Instant::now();
    /// # let mut md = ClusterMetadata::new(std::time::Duration::from_secs(300));
    /// # let b = |id: i32| B { node_id: id, host: format!("broker-{id}"), port: 9092, ..Default::default() };
    /// # let p = |i: i32, leader: i32| P { partition_index: i, leader_id: leader, leader_epoch: 4, replica_nodes: vec![1, 2], isr_nodes: vec![1, 2], ..Default::default() };
    /// # let orders = T { name: Some("orders".into()), topic_id: [7; 16], partitions: vec![p(0, 1), p(1, 2)], ..Default::default() };
    /// # md.handle_metadata_response(&R { cluster_id: Some("kafka-eos-test".into()), controller_id: 1, brokers: vec![b(1), b(2)], topics: vec![orders], ..Default::default() }, now);
    /// use std::time::Duration;
    /// assert!(!md.needs_refresh(now));
    /// assert!(md.needs_refresh(now + Duration::from_secs(300))); // metadata.max.age.ms elapsed
    /// ```
    pub fn needs_refresh(&self, now: Instant) -> bool {
        self.time_to_refresh(now).is_zero()
    }

    /// Time until the cache expires (zero if a refresh is due now).
    ///
    /// ```
    /// # use kafka_client::ClusterMetadata;
    /// # use kafka_proto::messages::{MetadataResponse as R, MetadataResponseBroker as B, MetadataResponsePartition as P, MetadataResponseTopic as T};
    /// # let now = std::time::Instant::now();
    /// # let mut md = ClusterMetadata::new(std::time::Duration::from_secs(300));
    /// # let b = |id: i32| B { node_id: id, host: format!("broker-{id}"), port: 9092, ..Default::default() };
    /// # let p = |i: i32, leader: i32| P { partition_index: i, leader_id: leader, leader_epoch: 4, replica_nodes: vec![1, 2], isr_nodes: vec![1, 2], ..Default::default() };
    /// # let orders = T { name: Some("orders".into()), topic_id: [7; 16], partitions: vec![p(0, 1), p(1, 2)], ..Default::default() };
    /// # md.handle_metadata_response(&R { cluster_id: Some("kafka-eos-test".into()), controller_id: 1, brokers: vec![b(1), b(2)], topics: vec![orders], ..Default::default() }, now);
    /// use std::time::Duration;
    /// assert_eq!(md.time_to_refresh(now + Duration::from_secs(100)), Duration::from_secs(200));
    /// ```
    pub fn time_to_refresh(&self, now: Instant) -> Duration {
        match self.last_refresh {
            _ if self.need_update => Duration::ZERO,
            None => Duration::ZERO,
            Some(t) => (t + self.max_age).saturating_duration_since(now),
        }
    }

    /// When the last response was applied.
    ///
    /// ```
    /// # use kafka_client::ClusterMetadata;
    /// # use kafka_proto::messages::{MetadataResponse as R, MetadataResponseBroker as B, MetadataResponsePartition as P, MetadataResponseTopic as T};
    /// # let now = std::time::Instant::now();
    /// # let mut md = ClusterMetadata::new(std::time::Duration::from_secs(300));
    /// # let b = |id: i32| B { node_id: id, host: format!("broker-{id}"), port: 9092, ..Default::default() };
    /// # let p = |i: i32, leader: i32| P { partition_index: i, leader_id: leader, leader_epoch: 4, replica_nodes: vec![1, 2], isr_nodes: vec![1, 2], ..Default::default() };
    /// # let orders = T { name: Some("orders".into()), topic_id: [7; 16], partitions: vec![p(0, 1), p(1, 2)], ..Default::default() };
    /// # md.handle_metadata_response(&R { cluster_id: Some("kafka-eos-test".into()), controller_id: 1, brokers: vec![b(1), b(2)], topics: vec![orders], ..Default::default() }, now);
    /// assert_eq!(md.last_refresh(), Some(now));
    /// ```
    pub fn last_refresh(&self) -> Option<Instant> {
        self.last_refresh
    }

    /// Number of responses applied.
    ///
    /// ```
    /// # use kafka_client::ClusterMetadata;
    /// # use kafka_proto::messages::{MetadataResponse as R, MetadataResponseBroker as B, MetadataResponsePartition as P, MetadataResponseTopic as T};
    /// # let now = std::time::Instant::now();
    /// # let mut md = ClusterMetadata::new(std::time::Duration::from_secs(300));
    /// # let b = |id: i32| B { node_id: id, host: format!("broker-{id}"), port: 9092, ..Default::default() };
    /// # let p = |i: i32, leader: i32| P { partition_index: i, leader_id: leader, leader_epoch: 4, replica_nodes: vec![1, 2], isr_nodes: vec![1, 2], ..Default::default() };
    /// # let orders = T { name: Some("orders".into()), topic_id: [7; 16], partitions: vec![p(0, 1), p(1, 2)], ..Default::default() };
    /// # md.handle_metadata_response(&R { cluster_id: Some("kafka-eos-test".into()), controller_id: 1, brokers: vec![b(1), b(2)], topics: vec![orders], ..Default::default() }, now);
    /// assert_eq!(md.update_count(), 1);
    /// ```
    pub fn update_count(&self) -> u64 {
        self.updates
    }

    /// The cluster id, if reported (v2+).
    ///
    /// ```
    /// # use kafka_client::ClusterMetadata;
    /// # use kafka_proto::messages::{MetadataResponse as R, MetadataResponseBroker as B, MetadataResponsePartition as P, MetadataResponseTopic as T};
    /// # let now = std::time::Instant::now();
    /// # let mut md = ClusterMetadata::new(std::time::Duration::from_secs(300));
    /// # let b = |id: i32| B { node_id: id, host: format!("broker-{id}"), port: 9092, ..Default::default() };
    /// # let p = |i: i32, leader: i32| P { partition_index: i, leader_id: leader, leader_epoch: 4, replica_nodes: vec![1, 2], isr_nodes: vec![1, 2], ..Default::default() };
    /// # let orders = T { name: Some("orders".into()), topic_id: [7; 16], partitions: vec![p(0, 1), p(1, 2)], ..Default::default() };
    /// # md.handle_metadata_response(&R { cluster_id: Some("kafka-eos-test".into()), controller_id: 1, brokers: vec![b(1), b(2)], topics: vec![orders], ..Default::default() }, now);
    /// assert_eq!(md.cluster_id(), Some("kafka-eos-test"));
    /// ```
    pub fn cluster_id(&self) -> Option<&str> {
        self.cluster_id.as_deref()
    }

    /// The controller's node id, if reported.
    ///
    /// ```
    /// # use kafka_client::ClusterMetadata;
    /// # use kafka_proto::messages::{MetadataResponse as R, MetadataResponseBroker as B, MetadataResponsePartition as P, MetadataResponseTopic as T};
    /// # let now = std::time::Instant::now();
    /// # let mut md = ClusterMetadata::new(std::time::Duration::from_secs(300));
    /// # let b = |id: i32| B { node_id: id, host: format!("broker-{id}"), port: 9092, ..Default::default() };
    /// # let p = |i: i32, leader: i32| P { partition_index: i, leader_id: leader, leader_epoch: 4, replica_nodes: vec![1, 2], isr_nodes: vec![1, 2], ..Default::default() };
    /// # let orders = T { name: Some("orders".into()), topic_id: [7; 16], partitions: vec![p(0, 1), p(1, 2)], ..Default::default() };
    /// # md.handle_metadata_response(&R { cluster_id: Some("kafka-eos-test".into()), controller_id: 1, brokers: vec![b(1), b(2)], topics: vec![orders], ..Default::default() }, now);
    /// assert_eq!(md.controller_id(), Some(1));
    /// ```
    pub fn controller_id(&self) -> Option<i32> {
        self.controller_id
    }

    /// Brokers by node id.
    ///
    /// ```
    /// # use kafka_client::ClusterMetadata;
    /// # use kafka_proto::messages::{MetadataResponse as R, MetadataResponseBroker as B, MetadataResponsePartition as P, MetadataResponseTopic as T};
    /// # let now = std::time::Instant::now();
    /// # let mut md = ClusterMetadata::new(std::time::Duration::from_secs(300));
    /// # let b = |id: i32| B { node_id: id, host: format!("broker-{id}"), port: 9092, ..Default::default() };
    /// # let p = |i: i32, leader: i32| P { partition_index: i, leader_id: leader, leader_epoch: 4, replica_nodes: vec![1, 2], isr_nodes: vec![1, 2], ..Default::default() };
    /// # let orders = T { name: Some("orders".into()), topic_id: [7; 16], partitions: vec![p(0, 1), p(1, 2)], ..Default::default() };
    /// # md.handle_metadata_response(&R { cluster_id: Some("kafka-eos-test".into()), controller_id: 1, brokers: vec![b(1), b(2)], topics: vec![orders], ..Default::default() }, now);
    /// let addrs: Vec<String> = md.brokers().values().map(|b| b.addr()).collect();
    /// assert_eq!(addrs, ["broker-1:9092", "broker-2:9092"]);
    /// ```
    pub fn brokers(&self) -> &BTreeMap<i32, BrokerInfo> {
        &self.brokers
    }

    /// One broker.
    ///
    /// ```
    /// # use kafka_client::ClusterMetadata;
    /// # use kafka_proto::messages::{MetadataResponse as R, MetadataResponseBroker as B, MetadataResponsePartition as P, MetadataResponseTopic as T};
    /// # let now = std::time::Instant::now();
    /// # let mut md = ClusterMetadata::new(std::time::Duration::from_secs(300));
    /// # let b = |id: i32| B { node_id: id, host: format!("broker-{id}"), port: 9092, ..Default::default() };
    /// # let p = |i: i32, leader: i32| P { partition_index: i, leader_id: leader, leader_epoch: 4, replica_nodes: vec![1, 2], isr_nodes: vec![1, 2], ..Default::default() };
    /// # let orders = T { name: Some("orders".into()), topic_id: [7; 16], partitions: vec![p(0, 1), p(1, 2)], ..Default::default() };
    /// # md.handle_metadata_response(&R { cluster_id: Some("kafka-eos-test".into()), controller_id: 1, brokers: vec![b(1), b(2)], topics: vec![orders], ..Default::default() }, now);
    /// assert_eq!(md.broker(1).unwrap().addr(), "broker-1:9092");
    /// assert!(md.broker(3).is_none());
    /// ```
    pub fn broker(&self, node_id: i32) -> Option<&BrokerInfo> {
        self.brokers.get(&node_id)
    }

    /// Cached topics by name.
    ///
    /// ```
    /// # use kafka_client::ClusterMetadata;
    /// # use kafka_proto::messages::{MetadataResponse as R, MetadataResponseBroker as B, MetadataResponsePartition as P, MetadataResponseTopic as T};
    /// # let now = std::time::Instant::now();
    /// # let mut md = ClusterMetadata::new(std::time::Duration::from_secs(300));
    /// # let b = |id: i32| B { node_id: id, host: format!("broker-{id}"), port: 9092, ..Default::default() };
    /// # let p = |i: i32, leader: i32| P { partition_index: i, leader_id: leader, leader_epoch: 4, replica_nodes: vec![1, 2], isr_nodes: vec![1, 2], ..Default::default() };
    /// # let orders = T { name: Some("orders".into()), topic_id: [7; 16], partitions: vec![p(0, 1), p(1, 2)], ..Default::default() };
    /// # md.handle_metadata_response(&R { cluster_id: Some("kafka-eos-test".into()), controller_id: 1, brokers: vec![b(1), b(2)], topics: vec![orders], ..Default::default() }, now);
    /// assert_eq!(md.topics().keys().collect::<Vec<_>>(), ["orders"]);
    /// ```
    pub fn topics(&self) -> &BTreeMap<String, TopicMetadata> {
        &self.topics
    }

    /// One topic.
    ///
    /// ```
    /// # use kafka_client::ClusterMetadata;
    /// # use kafka_proto::messages::{MetadataResponse as R, MetadataResponseBroker as B, MetadataResponsePartition as P, MetadataResponseTopic as T};
    /// # let now = std::time::Instant::now();
    /// # let mut md = ClusterMetadata::new(std::time::Duration::from_secs(300));
    /// # let b = |id: i32| B { node_id: id, host: format!("broker-{id}"), port: 9092, ..Default::default() };
    /// # let p = |i: i32, leader: i32| P { partition_index: i, leader_id: leader, leader_epoch: 4, replica_nodes: vec![1, 2], isr_nodes: vec![1, 2], ..Default::default() };
    /// # let orders = T { name: Some("orders".into()), topic_id: [7; 16], partitions: vec![p(0, 1), p(1, 2)], ..Default::default() };
    /// # md.handle_metadata_response(&R { cluster_id: Some("kafka-eos-test".into()), controller_id: 1, brokers: vec![b(1), b(2)], topics: vec![orders], ..Default::default() }, now);
    /// assert_eq!(md.topic("orders").map(|t| t.partition_count()), Some(2));
    /// assert!(md.topic("payments").is_none());
    /// ```
    pub fn topic(&self, name: &str) -> Option<&TopicMetadata> {
        self.topics.get(name)
    }

    /// The error with which the last response naming `name` refused the
    /// topic for good: INVALID_TOPIC_EXCEPTION or TOPIC_AUTHORIZATION_FAILED
    /// (Java's `Metadata.maybeThrowExceptionForTopic`). Records waiting for
    /// its metadata fail with it instead of waiting out `max.block.ms`.
    ///
    /// ```
    /// use kafka_client::ClusterMetadata;
    /// use kafka_proto::ErrorCode;
    /// use kafka_proto::messages::{MetadataResponse, MetadataResponseTopic};
    /// let mut md = ClusterMetadata::new(std::time::Duration::from_secs(300));
    /// let denied = MetadataResponseTopic {
    ///     name: Some("payroll".into()),
    ///     error_code: ErrorCode::TopicAuthorizationFailed.code(),
    ///     ..Default::default()
    /// };
    /// let now = std::time::Instant::now();
    /// md.handle_metadata_response(&MetadataResponse { topics: vec![denied], ..Default::default() }, now);
    /// assert_eq!(md.refused_topic("payroll"), Some(ErrorCode::TopicAuthorizationFailed));
    /// assert_eq!(md.refused_topic("orders"), None);
    /// ```
    pub fn refused_topic(&self, name: &str) -> Option<ErrorCode> {
        self.refused_topics.get(name).copied()
    }

    /// Takes the refusal of `name` once it has been reported to the records
    /// waiting for it, so that a later send asks the broker again (Java clears
    /// the invalid and unauthorized topics once it has thrown them).
    ///
    /// ```
    /// use kafka_client::ClusterMetadata;
    /// use kafka_proto::ErrorCode;
    /// use kafka_proto::messages::{MetadataResponse, MetadataResponseTopic};
    /// let mut md = ClusterMetadata::new(std::time::Duration::from_secs(300));
    /// let bad = MetadataResponseTopic {
    ///     name: Some("x".into()),
    ///     error_code: ErrorCode::InvalidTopicException.code(),
    ///     ..Default::default()
    /// };
    /// md.handle_metadata_response(&MetadataResponse { topics: vec![bad], ..Default::default() }, std::time::Instant::now());
    /// assert_eq!(md.take_refused_topic("x"), Some(ErrorCode::InvalidTopicException));
    /// assert_eq!(md.refused_topic("x"), None);
    /// ```
    pub fn take_refused_topic(&mut self, name: &str) -> Option<ErrorCode> {
        self.refused_topics.remove(name)
    }

    /// A topic's name from its id.
    ///
    /// ```
    /// # use kafka_client::ClusterMetadata;
    /// # use kafka_proto::messages::{MetadataResponse as R, MetadataResponseBroker as B, MetadataResponsePartition as P, MetadataResponseTopic as T};
    /// # let now = std::time::Instant::now();
    /// # let mut md = ClusterMetadata::new(std::time::Duration::from_secs(300));
    /// # let b = |id: i32| B { node_id: id, host: format!("broker-{id}"), port: 9092, ..Default::default() };
    /// # let p = |i: i32, leader: i32| P { partition_index: i, leader_id: leader, leader_epoch: 4, replica_nodes: vec![1, 2], isr_nodes: vec![1, 2], ..Default::default() };
    /// # let orders = T { name: Some("orders".into()), topic_id: [7; 16], partitions: vec![p(0, 1), p(1, 2)], ..Default::default() };
    /// # md.handle_metadata_response(&R { cluster_id: Some("kafka-eos-test".into()), controller_id: 1, brokers: vec![b(1), b(2)], topics: vec![orders], ..Default::default() }, now);
    /// assert_eq!(md.topic_name(&[7; 16]), Some("orders")); // e.g. from a Fetch v13+ response
    /// ```
    pub fn topic_name(&self, id: &Uuid) -> Option<&str> {
        self.names_by_id.get(id).map(String::as_str)
    }

    /// A topic's id (`None` if unknown or all zeros).
    ///
    /// ```
    /// # use kafka_client::ClusterMetadata;
    /// # use kafka_proto::messages::{MetadataResponse as R, MetadataResponseBroker as B, MetadataResponsePartition as P, MetadataResponseTopic as T};
    /// # let now = std::time::Instant::now();
    /// # let mut md = ClusterMetadata::new(std::time::Duration::from_secs(300));
    /// # let b = |id: i32| B { node_id: id, host: format!("broker-{id}"), port: 9092, ..Default::default() };
    /// # let p = |i: i32, leader: i32| P { partition_index: i, leader_id: leader, leader_epoch: 4, replica_nodes: vec![1, 2], isr_nodes: vec![1, 2], ..Default::default() };
    /// # let orders = T { name: Some("orders".into()), topic_id: [7; 16], partitions: vec![p(0, 1), p(1, 2)], ..Default::default() };
    /// # md.handle_metadata_response(&R { cluster_id: Some("kafka-eos-test".into()), controller_id: 1, brokers: vec![b(1), b(2)], topics: vec![orders], ..Default::default() }, now);
    /// assert_eq!(md.topic_id("orders"), Some([7; 16]));
    /// ```
    pub fn topic_id(&self, name: &str) -> Option<Uuid> {
        self.topics
            .get(name)
            .map(|t| t.topic_id)
            .filter(|id| *id != [0; 16])
    }

    /// One partition.
    ///
    /// ```
    /// # use kafka_client::ClusterMetadata;
    /// # use kafka_proto::messages::{MetadataResponse as R, MetadataResponseBroker as B, MetadataResponsePartition as P, MetadataResponseTopic as T};
    /// # let now = std::time::Instant::now();
    /// # let mut md = ClusterMetadata::new(std::time::Duration::from_secs(300));
    /// # let b = |id: i32| B { node_id: id, host: format!("broker-{id}"), port: 9092, ..Default::default() };
    /// # let p = |i: i32, leader: i32| P { partition_index: i, leader_id: leader, leader_epoch: 4, replica_nodes: vec![1, 2], isr_nodes: vec![1, 2], ..Default::default() };
    /// # let orders = T { name: Some("orders".into()), topic_id: [7; 16], partitions: vec![p(0, 1), p(1, 2)], ..Default::default() };
    /// # md.handle_metadata_response(&R { cluster_id: Some("kafka-eos-test".into()), controller_id: 1, brokers: vec![b(1), b(2)], topics: vec![orders], ..Default::default() }, now);
    /// assert_eq!(md.partition("orders", 1).unwrap().replicas, [1, 2]);
    /// assert!(md.partition("orders", 2).is_none());
    /// ```
    pub fn partition(&self, topic: &str, partition: i32) -> Option<&PartitionMetadata> {
        self.topics.get(topic)?.partitions.get(&partition)
    }

    /// The leader's node id of a partition.
    ///
    /// ```
    /// # use kafka_client::ClusterMetadata;
    /// # use kafka_proto::messages::{MetadataResponse as R, MetadataResponseBroker as B, MetadataResponsePartition as P, MetadataResponseTopic as T};
    /// # let now = std::time::Instant::now();
    /// # let mut md = ClusterMetadata::new(std::time::Duration::from_secs(300));
    /// # let b = |id: i32| B { node_id: id, host: format!("broker-{id}"), port: 9092, ..Default::default() };
    /// # let p = |i: i32, leader: i32| P { partition_index: i, leader_id: leader, leader_epoch: 4, replica_nodes: vec![1, 2], isr_nodes: vec![1, 2], ..Default::default() };
    /// # let orders = T { name: Some("orders".into()), topic_id: [7; 16], partitions: vec![p(0, 1), p(1, 2)], ..Default::default() };
    /// # md.handle_metadata_response(&R { cluster_id: Some("kafka-eos-test".into()), controller_id: 1, brokers: vec![b(1), b(2)], topics: vec![orders], ..Default::default() }, now);
    /// assert_eq!(md.leader("orders", 0), Some(1));
    /// ```
    pub fn leader(&self, topic: &str, partition: i32) -> Option<i32> {
        self.partition(topic, partition)?.leader
    }

    /// The leader broker of a partition.
    ///
    /// ```
    /// # use kafka_client::ClusterMetadata;
    /// # use kafka_proto::messages::{MetadataResponse as R, MetadataResponseBroker as B, MetadataResponsePartition as P, MetadataResponseTopic as T};
    /// # let now = std::time::Instant::now();
    /// # let mut md = ClusterMetadata::new(std::time::Duration::from_secs(300));
    /// # let b = |id: i32| B { node_id: id, host: format!("broker-{id}"), port: 9092, ..Default::default() };
    /// # let p = |i: i32, leader: i32| P { partition_index: i, leader_id: leader, leader_epoch: 4, replica_nodes: vec![1, 2], isr_nodes: vec![1, 2], ..Default::default() };
    /// # let orders = T { name: Some("orders".into()), topic_id: [7; 16], partitions: vec![p(0, 1), p(1, 2)], ..Default::default() };
    /// # md.handle_metadata_response(&R { cluster_id: Some("kafka-eos-test".into()), controller_id: 1, brokers: vec![b(1), b(2)], topics: vec![orders], ..Default::default() }, now);
    /// assert_eq!(md.leader_broker("orders", 0).map(|b| b.addr()), Some("broker-1:9092".into()));
    /// ```
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
}
