//! The settings of a [`GroupConsumer`](super::GroupConsumer) under the Java
//! consumer's property names: group membership, commits, fetching and the
//! connection settings every client shares.

#[cfg(doc)]
use super::GroupConsumer;
use crate::group::member::classic::ClassicConfig;
use crate::group::member::classic::assignor::Assignor;
use crate::group::member::kip848::Kip848Config;
use crate::reader::{AutoOffsetReset, IsolationLevel, ReaderConfig};
use kafka_client::ClusterConfig;
use kafka_client::{ClientConfig, ConfigError, Properties};
use std::time::Duration;

/// Settings of a [`GroupConsumer`].
///
/// ```
/// use kafka_consumer::GroupConsumerConfig;
/// let c = GroupConsumerConfig::from_properties([
///     ("bootstrap.servers", "127.0.0.1:9092"),
///     ("group.id", "billing"),
///     ("isolation.level", "read_committed"),
///     ("auto.offset.reset", "earliest"),
/// ])
/// .unwrap();
/// assert_eq!(c.group_id, "billing");
/// assert_eq!(c.max_poll_interval.as_secs(), 300);
/// ```
#[derive(Debug, Clone)]
pub struct GroupConsumerConfig {
    /// `group.id`.
    pub group_id: String,
    /// `group.instance.id` (static membership).
    pub instance_id: Option<String>,
    /// `client.rack`: sent when joining (rack-aware assignors) and in every
    /// Fetch (KIP-392: a broker with a rack-aware `replica.selector.class`
    /// names a replica in this rack to fetch from).
    pub rack_id: Option<String>,
    /// `max.poll.interval.ms` (default 300 s): the most time between two
    /// [`GroupConsumer::poll`] calls before the member leaves the group.
    pub max_poll_interval: Duration,
    /// `group.remote.assignor`: the broker-side assignor to use (KIP-848
    /// only).
    pub server_assignor: Option<String>,
    /// `group.protocol`; `None` (not set): chosen when the consumer
    /// starts — KIP-848 when the brokers serve it (ConsumerGroupHeartbeat
    /// and the `group.version` feature: Kafka 4.0+), classic otherwise (see
    /// [`GroupConsumer::subscribe`]). Settings only one protocol accepts
    /// (`session.timeout.ms`, `heartbeat.interval.ms` and
    /// `partition.assignment.strategy`: classic; `group.remote.assignor`:
    /// KIP-848) choose it when `group.protocol` is not set.
    pub protocol: Option<GroupProtocol>,
    /// `session.timeout.ms` (classic only, default 45 s): the coordinator
    /// removes a member whose heartbeats stop for this long.
    pub session_timeout: Duration,
    /// `heartbeat.interval.ms` (classic only, default 3 s).
    pub heartbeat_interval: Duration,
    /// `partition.assignment.strategy` (classic only, default Java's
    /// `[range, cooperative-sticky]`), in order of preference.
    pub assignors: Vec<Assignor>,
    /// `retry.backoff.ms` (default 100 ms).
    pub retry_backoff: Duration,
    /// `retry.backoff.max.ms` (default 1 s).
    pub retry_backoff_max: Duration,
    /// `default.api.timeout.ms` (default 60 s): bound on commits and
    /// offset lookups.
    pub api_timeout: Duration,
    /// `auto.commit.interval.ms` when `enable.auto.commit=true`; `None`
    /// (the default here, unlike Java's) when the application commits, as
    /// a transactional pipeline must. With auto-commit, [`GroupConsumer::poll`]
    /// commits the positions (what earlier polls returned) every interval,
    /// and the positions of revoked partitions before reporting the
    /// revocation, and [`GroupConsumer::close`] commits them: at least
    /// once, as in Java.
    pub auto_commit_interval: Option<Duration>,
    /// `max.poll.records` (default 500): the most records one
    /// [`GroupConsumer::poll`] returns; the rest wait for the next poll,
    /// and the positions count only what was returned.
    pub max_poll_records: usize,
    /// Fetching: `isolation.level`, `auto.offset.reset`, `fetch.*`.
    pub reader: ReaderConfig,
    /// Connections: `bootstrap.servers`, `client.id`, security settings.
    pub connection: ClientConfig,
}

/// `group.protocol`: who assigns the partitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GroupProtocol {
    /// KIP-848 (`consumer`; Kafka 4.0+): the broker assigns, the member
    /// heartbeats and reconciles.
    Consumer,
    /// The classic protocol (`classic`): JoinGroup/SyncGroup, the group
    /// leader runs a client-side assignor.
    Classic,
}

impl GroupConsumerConfig {
    /// The cluster settings of this consumer: its connection settings, and
    /// a bootstrap wait of `bootstrap.timeout.ms`, by default
    /// `default.api.timeout.ms` (Java's consumer bounds its blocking calls
    /// by it and waits for brokers that do not answer yet).
    pub fn cluster_config(&self) -> ClusterConfig {
        let mut c = self.connection.cluster_config();
        c.bootstrap_timeout = self
            .connection
            .bootstrap_timeout
            .unwrap_or(self.api_timeout);
        c
    }

    /// Settings from Java consumer property names. `group.id` and
    /// `bootstrap.servers` are required. `group.protocol` is `consumer`
    /// (KIP-848) or `classic`; not set, the consumer uses KIP-848 when the
    /// brokers serve it and classic otherwise (Java 4.x defaults to
    /// classic, which every broker serves). As in Java,
    /// `session.timeout.ms`, `heartbeat.interval.ms` and
    /// `partition.assignment.strategy` (short names or Java class names of
    /// `range` and `cooperative-sticky`) are refused under `consumer`, and
    /// `group.remote.assignor` under `classic`. `enable.auto.commit`
    /// defaults to false (Java's default is true): offsets are committed by
    /// the application ([`GroupConsumer::commit`]) or in its transaction;
    /// `true` commits every `auto.commit.interval.ms` (default 5 s). Any
    /// other key is refused, so that no setting is silently ignored.
    ///
    /// ```
    /// use kafka_consumer::GroupConsumerConfig;
    /// let err = GroupConsumerConfig::from_properties([
    ///     ("bootstrap.servers", "127.0.0.1:9092"),
    ///     ("group.id", "g"),
    ///     ("linger.ms", "5"),
    /// ])
    /// .unwrap_err();
    /// assert_eq!(err.key(), "linger.ms");
    /// // Classic-only settings under KIP-848 are refused, as in Java.
    /// let err = GroupConsumerConfig::from_properties([
    ///     ("bootstrap.servers", "127.0.0.1:9092"),
    ///     ("group.id", "g"),
    ///     ("group.protocol", "consumer"),
    ///     ("session.timeout.ms", "10000"),
    /// ])
    /// .unwrap_err();
    /// assert_eq!(err.key(), "session.timeout.ms");
    /// ```
    pub fn from_properties<I, K, V>(props: I) -> Result<Self, ConfigError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut props = Properties::new(props);
        let config = Self::take_from(&mut props)?;
        props.finish()?;
        Ok(config)
    }

    /// Takes the group consumer's keys (its own and the connection keys
    /// every client shares) from `props`, and checks them as
    /// [`Self::from_properties`] does. Other keys stay in the bag, for a
    /// producer beside the consumer; [`Properties::finish`] refuses those
    /// nobody took.
    ///
    /// ```
    /// use kafka_client::Properties;
    /// use kafka_consumer::GroupConsumerConfig;
    /// let mut props = Properties::new([
    ///     ("bootstrap.servers", "127.0.0.1:9092"),
    ///     ("group.id", "billing"),
    ///     ("enable.auto.commit", "TRUE"), // booleans ignore case, as in Java
    ///     ("linger.ms", "5"),             // a producer's key
    /// ]);
    /// let consumer = GroupConsumerConfig::take_from(&mut props).unwrap();
    /// assert!(consumer.auto_commit_interval.is_some());
    /// // A producer's configuration would take linger.ms here.
    /// assert_eq!(props.finish().unwrap_err().key(), "linger.ms");
    /// ```
    pub fn take_from(props: &mut Properties) -> Result<Self, ConfigError> {
        let mut connection = ClientConfig {
            client_id: "kafka-eos-consumer".into(),
            ..ClientConfig::new("")
        };
        connection.update_from(props)?;
        let mut c = Self {
            group_id: String::new(),
            instance_id: None,
            rack_id: None,
            max_poll_interval: Duration::from_secs(300),
            server_assignor: None,
            protocol: None,
            session_timeout: Duration::from_secs(45),
            heartbeat_interval: Duration::from_secs(3),
            assignors: Assignor::DEFAULT.to_vec(),
            retry_backoff: Duration::from_millis(100),
            retry_backoff_max: Duration::from_secs(1),
            api_timeout: Duration::from_secs(60),
            auto_commit_interval: None,
            max_poll_records: 500,
            reader: ReaderConfig::default(),
            connection,
        };
        let int_max = i64::from(i32::MAX);
        let group_id = props.non_empty("group.id")?;
        c.instance_id = props.non_empty("group.instance.id")?;
        c.rack_id = props.string("client.rack").filter(|r| !r.is_empty());
        c.reader.client_rack = c.rack_id.clone();
        if let Some(p) = props.one_of_ignoring_case(
            "group.protocol",
            &[
                ("consumer", GroupProtocol::Consumer),
                ("classic", GroupProtocol::Classic),
            ],
        )? {
            c.protocol = Some(p);
        }
        // The settings only one protocol accepts, as given.
        let mut consumer_only = Vec::new();
        let mut classic_only = Vec::new();
        if let Some(v) = props.string("group.remote.assignor") {
            consumer_only.push(("group.remote.assignor", v.clone()));
            c.server_assignor = Some(v);
        }
        if let Some(v) = props.millis("session.timeout.ms", 1..=int_max)? {
            c.session_timeout = v;
            classic_only.push(("session.timeout.ms", v.as_millis().to_string()));
        }
        if let Some(v) = props.millis("heartbeat.interval.ms", 1..=int_max)? {
            c.heartbeat_interval = v;
            classic_only.push(("heartbeat.interval.ms", v.as_millis().to_string()));
        }
        let key = "partition.assignment.strategy";
        if let Some(value) = props.string(key) {
            c.assignors = assignors(key, &value)?;
            classic_only.push((key, value));
        }
        let auto_commit = props.bool("enable.auto.commit")?.unwrap_or(false);
        let auto_commit_interval = props
            .millis("auto.commit.interval.ms", 0..=int_max)?
            .unwrap_or(Duration::from_secs(5));
        if let Some(v) = props.int("max.poll.records", 1..=i32::MAX)? {
            c.max_poll_records = usize::try_from(v).unwrap_or(usize::MAX);
        }
        if let Some(v) = props.millis("max.poll.interval.ms", 1..=int_max)? {
            c.max_poll_interval = v;
        }
        if let Some(v) = props.millis("retry.backoff.ms", 0..=int_max)? {
            c.retry_backoff = v;
        }
        if let Some(v) = props.millis("retry.backoff.max.ms", 0..=int_max)? {
            c.retry_backoff_max = v;
        }
        if let Some(v) = props.millis("default.api.timeout.ms", 0..=int_max)? {
            c.api_timeout = v;
            c.reader.api_timeout = v;
        }
        if let Some(v) = props.one_of(
            "isolation.level",
            &[
                ("read_committed", IsolationLevel::ReadCommitted),
                ("read_uncommitted", IsolationLevel::ReadUncommitted),
            ],
        )? {
            c.reader.isolation = v;
        }
        if let Some(v) = props.bool("metrics.enabled")? {
            c.reader.metrics_enabled = v;
        }
        if let Some(v) = props.string("auto.offset.reset") {
            c.reader.auto_offset_reset = AutoOffsetReset::parse(&v)
                .map_err(|e| ConfigError::invalid_value("auto.offset.reset", &v, &e))?;
        }
        if let Some(v) = props.int("fetch.max.bytes", 0..=i32::MAX)? {
            c.reader.max_bytes = v;
        }
        if let Some(v) = props.int("max.partition.fetch.bytes", 0..=i32::MAX)? {
            c.reader.partition_max_bytes = v;
        }
        if let Some(v) = props.int("fetch.min.bytes", 0..=i32::MAX)? {
            c.reader.min_bytes = v;
        }
        if let Some(v) = props.millis("fetch.max.wait.ms", 0..=int_max)? {
            c.reader.max_wait = v;
        }
        c.group_id = group_id.ok_or_else(|| ConfigError::Missing("group.id".into()))?;
        c.auto_commit_interval = auto_commit.then_some(auto_commit_interval);
        // Not set: the settings of one protocol choose it.
        if c.protocol.is_none() {
            c.protocol = match (classic_only.first(), consumer_only.first()) {
                (Some(_), None) => Some(GroupProtocol::Classic),
                (None, Some(_)) => Some(GroupProtocol::Consumer),
                (Some((classic_key, _)), Some((k, v))) => {
                    return Err(ConfigError::invalid_value(
                        k,
                        v,
                        &format!(
                            "only supported with group.protocol=consumer, and {classic_key} only with group.protocol=classic: set group.protocol and remove the other protocol's setting"
                        ),
                    ));
                }
                (None, None) => None,
            };
        }
        match (c.protocol, classic_only.first(), consumer_only.first()) {
            (Some(GroupProtocol::Consumer), Some((k, v)), _) => {
                return Err(ConfigError::invalid_value(
                    k,
                    v,
                    "not supported with group.protocol=consumer (the broker sets it): remove it or set group.protocol=classic",
                ));
            }
            (Some(GroupProtocol::Classic), _, Some((k, v))) => {
                return Err(ConfigError::invalid_value(
                    k,
                    v,
                    "only supported with group.protocol=consumer: use partition.assignment.strategy",
                ));
            }
            _ => {}
        }
        if c.protocol != Some(GroupProtocol::Consumer) && c.heartbeat_interval >= c.session_timeout
        {
            return Err(ConfigError::invalid_value(
                "heartbeat.interval.ms",
                &c.heartbeat_interval.as_millis().to_string(),
                "must be lower than session.timeout.ms",
            ));
        }
        c.reader.retry_backoff = c.retry_backoff;
        c.connection = c.connection.validate()?;
        Ok(c)
    }

    pub(super) fn membership(&self, member_id: String) -> Kip848Config {
        let mut m = Kip848Config::new(self.group_id.clone(), member_id);
        m.instance_id = self.instance_id.clone();
        m.rack_id = self.rack_id.clone();
        m.rebalance_timeout = self.max_poll_interval;
        m.server_assignor = self.server_assignor.clone();
        m.retry_backoff = self.retry_backoff;
        m.retry_backoff_max = self.retry_backoff_max;
        m
    }

    pub(super) fn classic(&self) -> ClassicConfig {
        let mut c = ClassicConfig::new(self.group_id.clone());
        c.instance_id = self.instance_id.clone();
        c.rack_id = self.rack_id.clone();
        c.session_timeout = self.session_timeout;
        c.rebalance_timeout = self.max_poll_interval;
        c.heartbeat_interval = self.heartbeat_interval;
        c.assignors = self.assignors.clone();
        c.retry_backoff = self.retry_backoff;
        c
    }
}

/// `partition.assignment.strategy`: assignors in order of preference,
/// by short name or Java class name, each once.
fn assignors(key: &str, value: &str) -> Result<Vec<Assignor>, ConfigError> {
    let mut list = Vec::new();
    for name in value.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        match Assignor::from_config(name) {
            Some(a) if !list.contains(&a) => list.push(a),
            Some(_) => {}
            None => {
                return Err(ConfigError::invalid_value(
                    key,
                    value,
                    "expected range or cooperative-sticky (or their Java class names)",
                ));
            }
        }
    }
    if list.is_empty() {
        return Err(ConfigError::invalid_value(
            key,
            value,
            "at least one assignor is needed",
        ));
    }
    Ok(list)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(extra: &[(&str, &str)]) -> Result<GroupConsumerConfig, ConfigError> {
        let mut props = vec![("bootstrap.servers", "127.0.0.1:9092"), ("group.id", "g")];
        props.extend_from_slice(extra);
        GroupConsumerConfig::from_properties(props)
    }

    /// The key named by the error of a configuration [`parse`] refuses.
    fn refused_key(extra: &[(&str, &str)]) -> String {
        parse(extra).unwrap_err().key().to_string()
    }

    #[test]
    fn classic_settings_are_parsed_with_java_names() {
        let c = parse(&[
            ("group.protocol", "classic"),
            ("session.timeout.ms", "10000"),
            ("heartbeat.interval.ms", "1000"),
            (
                "partition.assignment.strategy",
                "org.apache.kafka.clients.consumer.CooperativeStickyAssignor, range",
            ),
        ])
        .unwrap();
        assert_eq!(c.protocol, Some(GroupProtocol::Classic));
        assert_eq!(c.session_timeout, Duration::from_secs(10));
        assert_eq!(c.heartbeat_interval, Duration::from_secs(1));
        assert_eq!(c.assignors, [Assignor::CooperativeSticky, Assignor::Range]);
    }

    /// `auto.offset.reset` defaults to Java's `latest`; `by_duration`
    /// (KIP-1106) and `none` parse; a bad value is refused by name;
    /// `client.rack` reaches the fetches.
    #[test]
    fn auto_offset_reset_defaults_to_latest() {
        use crate::reader::AutoOffsetReset;
        assert_eq!(
            parse(&[]).unwrap().reader.auto_offset_reset,
            AutoOffsetReset::Latest
        );
        let c = parse(&[
            ("auto.offset.reset", "by_duration:PT15M"),
            ("client.rack", "eu-1a"),
        ])
        .unwrap();
        assert_eq!(
            c.reader.auto_offset_reset,
            AutoOffsetReset::ByDuration(Duration::from_secs(900))
        );
        assert_eq!(c.reader.client_rack.as_deref(), Some("eu-1a"));
        assert_eq!(
            parse(&[("auto.offset.reset", "none")])
                .unwrap()
                .reader
                .auto_offset_reset,
            AutoOffsetReset::None
        );
        let e = parse(&[("auto.offset.reset", "smallest")]).unwrap_err();
        assert!(e.to_string().contains("auto.offset.reset"), "{e}");
    }

    #[test]
    fn classic_defaults_are_javas() {
        let c = parse(&[("group.protocol", "CLASSIC")]).unwrap();
        assert_eq!(c.session_timeout, Duration::from_secs(45));
        assert_eq!(c.heartbeat_interval, Duration::from_secs(3));
        assert_eq!(c.assignors, Assignor::DEFAULT);
    }

    #[test]
    fn classic_only_settings_are_refused_under_the_consumer_protocol_whatever_the_order() {
        for key in [
            "session.timeout.ms",
            "heartbeat.interval.ms",
            "partition.assignment.strategy",
        ] {
            let value = if key.ends_with("strategy") {
                "range"
            } else {
                "1000"
            };
            assert_eq!(
                refused_key(&[(key, value), ("group.protocol", "consumer")]),
                key
            );
            // A session of 1 s would be shorter than the default heartbeat.
            let value = if key == "session.timeout.ms" {
                "10000"
            } else {
                value
            };
            assert_eq!(
                parse(&[(key, value)]).unwrap().protocol,
                Some(GroupProtocol::Classic),
                "{key} chooses classic when group.protocol is not set"
            );
        }
    }

    #[test]
    fn the_remote_assignor_is_refused_under_classic() {
        assert_eq!(
            refused_key(&[
                ("group.remote.assignor", "uniform"),
                ("group.protocol", "classic"),
            ]),
            "group.remote.assignor"
        );
    }

    #[test]
    fn unknown_assignors_and_protocols_are_refused() {
        assert_eq!(
            refused_key(&[
                ("group.protocol", "classic"),
                ("partition.assignment.strategy", "roundrobin"),
            ]),
            "partition.assignment.strategy"
        );
        assert_eq!(
            refused_key(&[("group.protocol", "streams")]),
            "group.protocol"
        );
    }

    #[test]
    fn the_heartbeat_must_be_shorter_than_the_session() {
        assert_eq!(
            refused_key(&[
                ("group.protocol", "classic"),
                ("session.timeout.ms", "6000"),
                ("heartbeat.interval.ms", "6000"),
            ]),
            "heartbeat.interval.ms"
        );
    }

    #[test]
    fn auto_commit_is_off_by_default_and_on_with_javas_interval() {
        assert_eq!(parse(&[]).unwrap().auto_commit_interval, None);
        assert_eq!(
            parse(&[("enable.auto.commit", "false")])
                .unwrap()
                .auto_commit_interval,
            None
        );
        assert_eq!(
            parse(&[("enable.auto.commit", "true")])
                .unwrap()
                .auto_commit_interval,
            Some(Duration::from_secs(5))
        );
        // The interval applies whatever the order of the keys.
        let c = parse(&[
            ("auto.commit.interval.ms", "250"),
            ("enable.auto.commit", "true"),
        ])
        .unwrap();
        assert_eq!(c.auto_commit_interval, Some(Duration::from_millis(250)));
        assert_eq!(
            refused_key(&[("enable.auto.commit", "yes")]),
            "enable.auto.commit"
        );
    }

    /// Java's `ConfigDef` compares booleans ignoring case, so
    /// `enable.auto.commit` takes `TRUE` and `False` as the producer's
    /// booleans do.
    #[test]
    fn enable_auto_commit_ignores_case() {
        let on = parse(&[("enable.auto.commit", "TRUE")]).unwrap();
        assert_eq!(on.auto_commit_interval, Some(Duration::from_secs(5)));
        let off = parse(&[("enable.auto.commit", "False")]).unwrap();
        assert_eq!(off.auto_commit_interval, None);
    }

    /// A value out of range reads as every client's range error: the bound
    /// crossed, in Java's words.
    #[test]
    fn range_errors_name_the_bound_crossed() {
        let e = parse(&[("fetch.max.wait.ms", "-1")]).unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"invalid value "-1" for fetch.max.wait.ms: must be at least 0"#
        );
        let e = parse(&[("fetch.min.bytes", "-1")]).unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"invalid value "-1" for fetch.min.bytes: must be at least 0"#
        );
    }

    /// `max.poll.records` is Java's key with Java's default (500) and
    /// lower bound (1).
    #[test]
    fn max_poll_records_defaults_to_500_and_must_be_positive() {
        assert_eq!(parse(&[]).unwrap().max_poll_records, 500);
        assert_eq!(
            parse(&[("max.poll.records", "7")])
                .unwrap()
                .max_poll_records,
            7
        );
        assert_eq!(
            refused_key(&[("max.poll.records", "0")]),
            "max.poll.records"
        );
    }

    /// A key nobody takes is refused once, by name, however often given.
    #[test]
    fn an_unknown_key_is_reported_once_by_name() {
        let e = parse(&[("linger.ms", "5"), ("linger.ms", "6")]).unwrap_err();
        assert_eq!(e, ConfigError::UnknownKey("linger.ms".into()));
    }

    /// `take_from` leaves a producer's keys in the bag for the producer.
    #[test]
    fn take_from_leaves_other_clients_keys() {
        let mut bag = Properties::new([
            ("bootstrap.servers", "127.0.0.1:9092"),
            ("group.id", "g"),
            ("fetch.min.bytes", "10"),
            ("linger.ms", "5"),
        ]);
        let c = GroupConsumerConfig::take_from(&mut bag).unwrap();
        assert_eq!(c.reader.min_bytes, 10);
        assert_eq!(
            bag.finish(),
            Err(ConfigError::UnknownKey("linger.ms".into()))
        );
    }

    /// `default.api.timeout.ms` also bounds the cluster's bootstrap.
    #[test]
    fn default_api_timeout_bounds_the_bootstrap() {
        let c = parse(&[("default.api.timeout.ms", "20000")]).unwrap();
        assert_eq!(
            c.cluster_config().bootstrap_timeout,
            Duration::from_secs(20)
        );
    }

    /// Not set, `group.protocol` is left to the consumer's start (the
    /// brokers' ApiVersions decide) unless one protocol's settings choose
    /// it; settings of both protocols without `group.protocol` are refused.
    #[test]
    fn an_unset_group_protocol_is_chosen_by_the_settings_or_at_start() {
        assert_eq!(parse(&[]).unwrap().protocol, None);
        assert_eq!(
            parse(&[("group.remote.assignor", "uniform")])
                .unwrap()
                .protocol,
            Some(GroupProtocol::Consumer)
        );
        let both = parse(&[
            ("session.timeout.ms", "10000"),
            ("group.remote.assignor", "uniform"),
        ])
        .unwrap_err();
        assert_eq!(both.key(), "group.remote.assignor");
        assert!(both.to_string().contains("session.timeout.ms"), "{both}");
    }

    /// `metrics.enabled` (the producer's kafka-eos key) turns the
    /// consumer's metrics off; they are on by default.
    #[test]
    fn metrics_are_on_unless_disabled() {
        assert!(parse(&[]).unwrap().reader.metrics_enabled);
        assert!(
            !parse(&[("metrics.enabled", "FALSE")])
                .unwrap()
                .reader
                .metrics_enabled
        );
    }
}
