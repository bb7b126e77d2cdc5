//! Topic creation: [`create_topics`] (CreateTopics v2–7) with per-topic
//! results, and [`ensure_topic`] for "create unless it exists".
//!
//! CreateTopics goes to the controller named by the cached metadata (any
//! broker when none is named); a KRaft broker named there forwards it to the
//! active controller. A topic answered with NOT_CONTROLLER is retried after a
//! metadata refresh, THROTTLING_QUOTA_EXCEEDED after the throttle time, and a
//! retriable connection error after a refresh, all within
//! [`CreateTopicsOptions::timeout`].

use kafka_client::ExponentialBackoff;
use kafka_client::{Cluster, Connection, TopicSelection};
use kafka_client::{ClusterError, ConnError};
use kafka_proto::ErrorCode;
use kafka_proto::messages::{
    CreateTopicsRequest, CreateTopicsRequestCreatableTopic,
    CreateTopicsRequestCreatableTopicConfig, CreateTopicsResponseCreatableTopicResult,
};
use kafka_proto::primitives::Uuid;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The first CreateTopics version that accepts -1 (the broker's default) for
/// the partition count and the replication factor (KIP-464, Kafka 2.4).
const BROKER_DEFAULTS_MIN_VERSION: i16 = 4;

/// Extra client-side wait beyond the `timeout_ms` the broker is given.
pub(super) const RESPONSE_SLACK: Duration = Duration::from_secs(2);

/// A topic to create. `None` leaves the partition count or replication
/// factor to the broker (`num.partitions`, `default.replication.factor`),
/// which needs CreateTopics v4+ (Kafka 2.4+).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewTopic {
    /// The topic name.
    pub name: String,
    /// The partition count; `None`: the broker's `num.partitions`.
    pub partitions: Option<i32>,
    /// The replication factor; `None`: the broker's `default.replication.factor`.
    pub replication_factor: Option<i16>,
    /// Topic configs to set (`retention.ms`, `cleanup.policy`, ...).
    pub configs: BTreeMap<String, String>,
}

impl NewTopic {
    /// A topic with the broker's default partition count and replication
    /// factor and no configs.
    ///
    /// ```
    /// use kafka_admin::NewTopic;
    /// // Six partitions, the broker's replication factor, compacted.
    /// let orders = NewTopic::new("orders")
    ///     .with_partitions(6)
    ///     .with_config("cleanup.policy", "compact");
    /// assert_eq!(orders.replication_factor, None);
    /// ```
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            partitions: None,
            replication_factor: None,
            configs: BTreeMap::new(),
        }
    }

    /// Sets the partition count.
    pub fn with_partitions(mut self, partitions: i32) -> Self {
        self.partitions = Some(partitions);
        self
    }

    /// Sets the replication factor.
    pub fn with_replication_factor(mut self, replication_factor: i16) -> Self {
        self.replication_factor = Some(replication_factor);
        self
    }

    /// Sets one topic config (a later value for the same key replaces it).
    pub fn with_config(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.configs.insert(key.into(), value.into());
        self
    }

    fn to_request(&self) -> CreateTopicsRequestCreatableTopic {
        CreateTopicsRequestCreatableTopic {
            name: self.name.clone(),
            num_partitions: self.partitions.unwrap_or(-1),
            replication_factor: self.replication_factor.unwrap_or(-1),
            configs: self
                .configs
                .iter()
                .map(|(k, v)| CreateTopicsRequestCreatableTopicConfig {
                    name: k.clone(),
                    value: Some(v.clone()),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }
}

/// Options of [`create_topics`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateTopicsOptions {
    /// Bounds the whole call: the broker's `timeout_ms`, the retries
    /// (NOT_CONTROLLER, quota, connection errors) and the wait for leaders.
    /// Default 60 s.
    pub timeout: Duration,
    /// Only check that the topics could be created (the broker answers with
    /// what it would create); nothing is created. Default false.
    pub validate_only: bool,
    /// Return only once every created (or already existing) topic is in the
    /// metadata with a leader for each partition. Default false: the topic
    /// may not be usable yet on every broker when the call returns.
    pub wait_for_leaders: bool,
}

impl Default for CreateTopicsOptions {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(60),
            validate_only: false,
            wait_for_leaders: false,
        }
    }
}

/// What the broker reported about a created or validated topic: the
/// resolved partition count, replication factor and configs (CreateTopics
/// v5+, Kafka 2.4+; `None` on older brokers) and the topic id (v7+).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TopicDetails {
    /// The topic id (v7+).
    pub topic_id: Option<Uuid>,
    /// The partition count (v5+).
    pub partitions: Option<i32>,
    /// The replication factor (v5+).
    pub replication_factor: Option<i16>,
    /// Every config of the topic, defaults included; a sensitive value is
    /// `None` (v5+; also `None` when `config_error` is set).
    pub configs: Option<BTreeMap<String, Option<String>>>,
    /// Why the configs are missing although the topic was created (e.g.
    /// TOPIC_AUTHORIZATION_FAILED: no DescribeConfigs permission).
    pub config_error: Option<ErrorCode>,
}

impl TopicDetails {
    fn from_response(r: &CreateTopicsResponseCreatableTopicResult) -> Self {
        let config_error = ErrorCode::from(r.topic_config_error_code);
        Self {
            topic_id: (r.topic_id != [0; 16]).then_some(r.topic_id),
            partitions: (r.num_partitions >= 0).then_some(r.num_partitions),
            replication_factor: (r.replication_factor >= 0).then_some(r.replication_factor),
            // Before v5 the response carries no configs (the schema's default,
            // an empty list); from v5 a broker lists every config of the
            // topic, so an empty list means none were returned.
            configs: r
                .configs
                .as_ref()
                .filter(|cs| config_error.is_ok() && !cs.is_empty())
                .map(|cs| {
                    cs.iter()
                        .map(|c| (c.name.clone(), c.value.clone()))
                        .collect()
                }),
            config_error: (!config_error.is_ok()).then_some(config_error),
        }
    }
}

/// The successful outcome of one topic of [`create_topics`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TopicOutcome {
    /// The topic was created.
    Created(TopicDetails),
    /// `validate_only`: the topic could be created as described; it was not.
    Validated(TopicDetails),
    /// The topic existed already (TOPIC_ALREADY_EXISTS); its settings were
    /// left as they are and may differ from those asked for.
    AlreadyExists {
        /// The broker's message.
        message: Option<String>,
    },
}

impl TopicOutcome {
    /// True for [`TopicOutcome::Created`].
    pub fn created(&self) -> bool {
        matches!(self, TopicOutcome::Created(_))
    }

    /// True when the topic exists now: created, or already there.
    pub fn exists(&self) -> bool {
        !matches!(self, TopicOutcome::Validated(_))
    }
}

/// One topic's result of [`create_topics`], in the order asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateTopicResult {
    /// The topic name.
    pub name: String,
    /// What happened, or the broker's error for this topic.
    pub outcome: Result<TopicOutcome, CreateTopicError>,
}

/// The broker refused to create one topic: its error code and message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot create topic {topic}: {}{}; {}", error.name(), message.as_deref().map(|m| format!(" ({m})")).unwrap_or_default(), self.hint())]
pub struct CreateTopicError {
    /// The topic.
    pub topic: String,
    /// The broker's error code.
    pub error: ErrorCode,
    /// The broker's message.
    pub message: Option<String>,
}

impl CreateTopicError {
    /// What to do about it.
    pub fn hint(&self) -> &'static str {
        match self.error {
            ErrorCode::InvalidReplicationFactor => {
                "use a replication factor of at least 1 and at most the number of brokers"
            }
            ErrorCode::InvalidPartitions => "use a partition count of at least 1",
            ErrorCode::InvalidConfig => "fix or remove the rejected topic config",
            ErrorCode::InvalidTopicException => {
                "use a name of at most 249 characters from [a-zA-Z0-9._-], not \".\" or \"..\""
            }
            ErrorCode::PolicyViolation => {
                "change the topic to satisfy the broker's create.topic.policy"
            }
            ErrorCode::TopicAuthorizationFailed | ErrorCode::ClusterAuthorizationFailed => {
                "grant this principal CREATE on the topic or the cluster"
            }
            ErrorCode::RequestTimedOut => {
                "the controller did not finish in time: the topic may still appear; call again \
                 (an existing topic then reports AlreadyExists)"
            }
            ErrorCode::NotController | ErrorCode::ThrottlingQuotaExceeded => {
                "retried until the timeout ran out: call again with a longer timeout"
            }
            _ => "see the broker's message and log",
        }
    }
}

/// A failed [`create_topics`] or [`ensure_topic`] call as a whole (per-topic
/// refusals are in [`CreateTopicResult::outcome`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AdminError {
    /// No broker could be reached or a request failed on the connection.
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    /// The broker's CreateTopics is older than v4 (Kafka < 2.4) and cannot
    /// take the broker's default partition count or replication factor.
    #[error(
        "the broker speaks CreateTopics v{version} at most, which cannot leave the {setting} of topic {topic} to the broker's default (that needs v4+, Kafka 2.4+): set it explicitly"
    )]
    BrokerDefaultUnsupported {
        /// The topic.
        topic: String,
        /// `"partition count"` or `"replication factor"`.
        setting: &'static str,
        /// The negotiated CreateTopics version.
        version: i16,
    },
    /// A topic appears twice in one call.
    #[error("topic {0} is listed more than once; list each topic once")]
    DuplicateTopic(String),
    /// [`ensure_topic`]: the broker refused the topic.
    #[error(transparent)]
    Topic(#[from] CreateTopicError),
    /// `wait_for_leaders`: these topics exist but still have partitions
    /// without a leader at the deadline.
    #[error(
        "topics {topics:?} exist but have partitions without a leader after {waited:?}: check that the brokers are up, then call again with a longer timeout"
    )]
    NotReady {
        /// The topics not ready.
        topics: Vec<String>,
        /// How long the call waited.
        waited: Duration,
    },
}

impl From<ConnError> for AdminError {
    fn from(e: ConnError) -> Self {
        AdminError::Cluster(ClusterError::Conn(e))
    }
}

pub(super) fn retry_backoff() -> ExponentialBackoff {
    ExponentialBackoff {
        initial: Duration::from_millis(20),
        multiplier: 2.0,
        max: Duration::from_millis(500),
        jitter: 0.2,
    }
}

/// The controller named by the metadata, else any broker.
pub(super) async fn controller_connection(
    cluster: &Cluster,
) -> Result<Arc<Connection>, ClusterError> {
    let controller = cluster.metadata().controller_id();
    match controller {
        Some(id) => match cluster.connection(id).await {
            Ok(c) => Ok(c),
            Err(e) if e.is_retriable() => cluster.any_connection().await,
            Err(e) => Err(e),
        },
        None => cluster.any_connection().await,
    }
}

/// The pacing of a call's attempts at the controller: the first goes at
/// once, each later one after the retry backoff (or the longest throttle
/// the broker asked for since, if longer), none past the deadline.
pub(super) struct ControllerAttempts {
    /// No attempt starts after this.
    deadline: Instant,
    /// The pause before each later attempt (`retry.backoff.ms` growing).
    backoff: ExponentialBackoff,
    /// Attempts started so far.
    made: u32,
    /// The longest throttle the broker asked for since the last attempt.
    wait_at_least: Duration,
}

impl ControllerAttempts {
    /// Attempts until `deadline`.
    pub(super) fn until(deadline: Instant) -> Self {
        Self {
            deadline,
            backoff: retry_backoff(),
            made: 0,
            wait_at_least: Duration::ZERO,
        }
    }

    /// Waits until the next attempt may go; false when the deadline passed
    /// after an attempt (the call times out instead).
    pub(super) async fn next(&mut self) -> bool {
        if self.made > 0 {
            let now = Instant::now();
            if now >= self.deadline {
                return false;
            }
            let pause = self.backoff.backoff(self.made - 1).max(self.wait_at_least);
            tokio::time::sleep(pause.min(self.deadline - now)).await;
        }
        self.made += 1;
        self.wait_at_least = Duration::ZERO;
        true
    }

    /// The broker throttled the attempt for `throttle_ms`: the next waits
    /// at least that long.
    pub(super) fn throttled(&mut self, throttle_ms: i32) {
        let throttle = Duration::from_millis(throttle_ms.max(0) as u64);
        self.wait_at_least = self.wait_at_least.max(throttle);
    }

    /// The controller's connection for this attempt; `None` when getting it
    /// failed retriably before the deadline (the metadata is refreshed:
    /// attempt again).
    pub(super) async fn controller(
        &self,
        cluster: &Cluster,
    ) -> Result<Option<Arc<Connection>>, AdminError> {
        match controller_connection(cluster).await {
            Ok(c) => Ok(Some(c)),
            Err(e) if e.is_retriable() && Instant::now() < self.deadline => {
                let _ = cluster.refresh().await;
                Ok(None)
            }
            Err(e) => Err(e.into()),
        }
    }
}

/// Creates `topics` (CreateTopics) and returns one result per topic, in
/// order. A topic that exists already is `Ok(TopicOutcome::AlreadyExists)`;
/// a topic the broker refuses is `Err(CreateTopicError)` with its error code
/// and message; the other topics of the call are unaffected. The call as a
/// whole fails only when no broker answers within `options.timeout`, on a
/// duplicate name, or when a broker default is asked of a pre-2.4 broker.
///
/// After a lost connection the request is sent again: a topic the lost
/// attempt created then reports `AlreadyExists`.
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), kafka_admin::AdminError> {
/// use kafka_admin::{self as admin, CreateTopicsOptions, NewTopic, TopicOutcome};
/// let topics = [NewTopic::new("orders").with_partitions(6).with_replication_factor(3)];
/// let opts = CreateTopicsOptions { wait_for_leaders: true, ..Default::default() };
/// for r in admin::create_topics(cluster, &topics, &opts).await? {
///     match r.outcome? {
///         TopicOutcome::Created(d) => println!("created {} with id {:?}", r.name, d.topic_id),
///         TopicOutcome::AlreadyExists { .. } => println!("{} was there already", r.name),
///         TopicOutcome::Validated(_) => unreachable!("validate_only is off"),
///     }
/// }
/// # Ok(()) }
/// ```
pub async fn create_topics(
    cluster: &Cluster,
    topics: &[NewTopic],
    options: &CreateTopicsOptions,
) -> Result<Vec<CreateTopicResult>, AdminError> {
    let started = Instant::now();
    let deadline = started + options.timeout;
    let mut seen = BTreeSet::new();
    for t in topics {
        if !seen.insert(t.name.as_str()) {
            return Err(AdminError::DuplicateTopic(t.name.clone()));
        }
    }
    let mut results: Vec<Option<Result<TopicOutcome, CreateTopicError>>> = vec![None; topics.len()];
    // (index, last retriable error) of the topics still to send.
    let mut pending: Vec<(usize, Option<CreateTopicError>)> =
        (0..topics.len()).map(|i| (i, None)).collect();
    let mut attempts = ControllerAttempts::until(deadline);
    while !pending.is_empty() {
        if !attempts.next().await {
            for (i, last) in pending.drain(..) {
                results[i] = Some(Err(last.unwrap_or_else(|| CreateTopicError {
                    topic: topics[i].name.clone(),
                    error: ErrorCode::RequestTimedOut,
                    message: Some(format!("no answer within {:?}", options.timeout)),
                })));
            }
            break;
        }
        let Some(conn) = attempts.controller(cluster).await? else {
            continue;
        };
        let version = conn.versions().version_for::<CreateTopicsRequest>()?;
        if version < BROKER_DEFAULTS_MIN_VERSION {
            for (i, _) in &pending {
                let t = &topics[*i];
                let setting = if t.partitions.is_none() {
                    "partition count"
                } else if t.replication_factor.is_none() {
                    "replication factor"
                } else {
                    continue;
                };
                return Err(AdminError::BrokerDefaultUnsupported {
                    topic: t.name.clone(),
                    setting,
                    version,
                });
            }
        }
        let left = deadline.saturating_duration_since(Instant::now());
        let req = CreateTopicsRequest {
            topics: pending
                .iter()
                .map(|(i, _)| topics[*i].to_request())
                .collect(),
            timeout_ms: left.as_millis().clamp(1, i32::MAX as u128) as i32,
            validate_only: options.validate_only,
            ..Default::default()
        };
        let resp = match conn
            .send_with_timeout(&req, version, left + RESPONSE_SLACK)
            .await
        {
            Ok(r) => r,
            Err(e) if e.is_retriable() && Instant::now() < deadline => {
                let _ = cluster.refresh().await;
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let mut by_name: BTreeMap<&str, &CreateTopicsResponseCreatableTopicResult> =
            resp.topics.iter().map(|r| (r.name.as_str(), r)).collect();
        let mut retry = Vec::new();
        let mut stale_controller = false;
        for (i, _) in pending.drain(..) {
            let name = &topics[i].name;
            let Some(r) = by_name.remove(name.as_str()) else {
                results[i] = Some(Err(CreateTopicError {
                    topic: name.clone(),
                    error: ErrorCode::UnknownServerError,
                    message: Some("the broker's answer did not mention this topic".into()),
                }));
                continue;
            };
            let error = ErrorCode::from(r.error_code);
            let refused = || CreateTopicError {
                topic: name.clone(),
                error,
                message: r.error_message.clone(),
            };
            match error {
                ErrorCode::None if options.validate_only => {
                    results[i] = Some(Ok(TopicOutcome::Validated(TopicDetails::from_response(r))));
                }
                ErrorCode::None => {
                    results[i] = Some(Ok(TopicOutcome::Created(TopicDetails::from_response(r))));
                }
                ErrorCode::TopicAlreadyExists => {
                    results[i] = Some(Ok(TopicOutcome::AlreadyExists {
                        message: r.error_message.clone(),
                    }));
                }
                ErrorCode::NotController => {
                    stale_controller = true;
                    retry.push((i, Some(refused())));
                }
                ErrorCode::ThrottlingQuotaExceeded => {
                    attempts.throttled(resp.throttle_time_ms);
                    retry.push((i, Some(refused())));
                }
                _ => results[i] = Some(Err(refused())),
            }
        }
        if stale_controller {
            cluster.invalidate();
            let _ = cluster.refresh().await;
        }
        pending = retry;
    }
    let results: Vec<CreateTopicResult> = topics
        .iter()
        .zip(results)
        .map(|(t, r)| CreateTopicResult {
            name: t.name.clone(),
            outcome: r.expect("every topic is answered or timed out"),
        })
        .collect();
    if options.wait_for_leaders && !options.validate_only {
        let existing: Vec<(String, Option<i32>)> = results
            .iter()
            .zip(topics)
            .filter_map(|(r, t)| match &r.outcome {
                Ok(TopicOutcome::Created(d)) => {
                    Some((r.name.clone(), d.partitions.or(t.partitions)))
                }
                Ok(TopicOutcome::AlreadyExists { .. }) => Some((r.name.clone(), None)),
                _ => None,
            })
            .collect();
        wait_for_leaders(cluster, &existing, started, deadline).await?;
    }
    Ok(results)
}

/// True when `topic` is in the cached metadata with `partitions` partitions
/// (if known; else at least one), each with a leader.
fn has_leaders(cluster: &Cluster, topic: &str, partitions: Option<i32>) -> bool {
    let md = cluster.metadata();
    md.topic(topic).is_some_and(|t| {
        let enough = match partitions {
            Some(n) => t.partitions.len() >= n as usize,
            None => !t.partitions.is_empty(),
        };
        enough && t.partitions.values().all(|p| p.leader.is_some())
    })
}

/// Refreshes the metadata of `topics` until each has a leader for every
/// partition, or fails with [`AdminError::NotReady`] at `deadline`.
pub(super) async fn wait_for_leaders(
    cluster: &Cluster,
    topics: &[(String, Option<i32>)],
    started: Instant,
    deadline: Instant,
) -> Result<(), AdminError> {
    let backoff = retry_backoff();
    let mut attempts = 0u32;
    loop {
        let names: Vec<String> = topics
            .iter()
            .filter(|(n, p)| !has_leaders(cluster, n, *p))
            .map(|(n, _)| n.clone())
            .collect();
        if names.is_empty() {
            return Ok(());
        }
        if attempts > 0 {
            let now = Instant::now();
            if now >= deadline {
                return Err(AdminError::NotReady {
                    topics: names,
                    waited: now - started,
                });
            }
            tokio::time::sleep(backoff.backoff(attempts - 1).min(deadline - now)).await;
        }
        attempts += 1;
        match cluster
            .refresh_selection(TopicSelection::Names(names))
            .await
        {
            Ok(_) => {}
            Err(e) if e.is_retriable() => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// What [`ensure_topic`] found or did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnsuredTopic {
    /// True if this call created it; false if it existed already (with
    /// whatever settings it has).
    pub created: bool,
    /// Its partitions, each with a leader.
    pub partitions: Vec<i32>,
}

/// Creates `topic` unless it exists, then waits until every partition has a
/// leader (all within `timeout`). An existing topic is left as it is, even
/// if its partition count or configs differ from `topic`'s.
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), kafka_admin::AdminError> {
/// use kafka_admin::{self as admin, NewTopic};
/// use std::time::Duration;
/// let orders = NewTopic::new("orders").with_partitions(3).with_config("min.insync.replicas", "1");
/// let t = admin::ensure_topic(cluster, &orders, Duration::from_secs(30)).await?;
/// assert!(!t.partitions.is_empty());
/// # Ok(()) }
/// ```
pub async fn ensure_topic(
    cluster: &Cluster,
    topic: &NewTopic,
    timeout: Duration,
) -> Result<EnsuredTopic, AdminError> {
    let options = CreateTopicsOptions {
        timeout,
        validate_only: false,
        wait_for_leaders: true,
    };
    let result = create_topics(cluster, std::slice::from_ref(topic), &options)
        .await?
        .pop()
        .expect("one result per topic");
    let created = result.outcome?.created();
    let partitions = cluster
        .metadata()
        .topic(&topic.name)
        .map(|t| t.partitions.keys().copied().collect())
        .unwrap_or_default();
    Ok(EnsuredTopic {
        created,
        partitions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_proto::messages::CreateTopicsResponseCreatableTopicConfigs;

    /// `None` is sent as -1 (the broker's default); configs go as given.
    #[test]
    fn new_topic_request_fields() {
        let req = NewTopic::new("orders")
            .with_replication_factor(3)
            .with_config("retention.ms", "1000")
            .to_request();
        assert_eq!(req.name, "orders");
        assert_eq!((req.num_partitions, req.replication_factor), (-1, 3));
        assert_eq!(req.configs.len(), 1);
        assert_eq!(req.configs[0].name, "retention.ms");
        assert_eq!(req.configs[0].value.as_deref(), Some("1000"));
        assert!(req.assignments.is_empty());
    }

    /// Pre-v5 answers (-1, no configs) give `None`s; a config error hides
    /// the configs and is reported.
    #[test]
    fn details_from_response() {
        let old = TopicDetails::from_response(&CreateTopicsResponseCreatableTopicResult {
            name: "orders".into(),
            ..Default::default()
        });
        assert_eq!(old, TopicDetails::default());
        let config = CreateTopicsResponseCreatableTopicConfigs {
            name: "cleanup.policy".into(),
            value: Some("compact".into()),
            ..Default::default()
        };
        let mut r = CreateTopicsResponseCreatableTopicResult {
            name: "orders".into(),
            topic_id: [9; 16],
            num_partitions: 3,
            replication_factor: 1,
            configs: Some(vec![config]),
            ..Default::default()
        };
        let d = TopicDetails::from_response(&r);
        assert_eq!(d.topic_id, Some([9; 16]));
        assert_eq!((d.partitions, d.replication_factor), (Some(3), Some(1)));
        assert_eq!(
            d.configs.unwrap()["cleanup.policy"].as_deref(),
            Some("compact")
        );
        r.topic_config_error_code = ErrorCode::TopicAuthorizationFailed.code();
        let d = TopicDetails::from_response(&r);
        assert_eq!(d.configs, None);
        assert_eq!(d.config_error, Some(ErrorCode::TopicAuthorizationFailed));
    }

    /// Each builder step sets its field; configs accumulate.
    #[test]
    fn new_topic_builder_sets_its_fields() {
        let t = NewTopic::new("orders");
        assert_eq!((t.partitions, t.replication_factor), (None, None));
        assert!(t.configs.is_empty());
        let t = t
            .with_partitions(6)
            .with_replication_factor(3)
            .with_config("retention.ms", "86400000")
            .with_config("cleanup.policy", "compact");
        assert_eq!((t.partitions, t.replication_factor), (Some(6), Some(3)));
        assert_eq!(t.configs.len(), 2);
        assert_eq!(t.configs["cleanup.policy"], "compact");
    }

    /// By default: a 60 s timeout, topics really created.
    #[test]
    fn create_topics_options_defaults() {
        let o = CreateTopicsOptions::default();
        assert_eq!(o.timeout, Duration::from_secs(60));
        assert!(!o.validate_only);
    }

    /// Created and AlreadyExists mean the topic exists; Validated does not.
    #[test]
    fn only_created_and_already_exists_mean_the_topic_exists() {
        assert!(TopicOutcome::Created(TopicDetails::default()).created());
        assert!(TopicOutcome::Created(TopicDetails::default()).exists());
        let there = TopicOutcome::AlreadyExists {
            message: Some("Topic 'orders' already exists.".into()),
        };
        assert!(there.exists() && !there.created());
        let validated = TopicOutcome::Validated(TopicDetails::default());
        assert!(!validated.created() && !validated.exists());
    }

    /// The message names the topic and the code, then what to do.
    #[test]
    fn create_error_message_names_the_topic_and_hints() {
        let e = CreateTopicError {
            topic: "orders".into(),
            error: ErrorCode::InvalidReplicationFactor,
            message: Some("only 1 broker(s) are registered.".into()),
        };
        assert!(
            e.to_string()
                .starts_with("cannot create topic orders: INVALID_REPLICATION_FACTOR")
        );
        assert!(e.hint().contains("number of brokers"));
        let e = CreateTopicError {
            topic: "orders".into(),
            error: ErrorCode::InvalidConfig,
            message: None,
        };
        assert!(e.hint().contains("config"));
    }

    /// A topic listed twice is refused before any request.
    #[test]
    fn duplicate_topic_message() {
        let e = AdminError::DuplicateTopic("orders".into());
        assert_eq!(
            e.to_string(),
            "topic orders is listed more than once; list each topic once"
        );
    }
}
