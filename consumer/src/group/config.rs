//! The settings of a [`GroupConsumer`](super::GroupConsumer) under the Java
//! consumer's property names: group membership, commits, fetching and the
//! connection settings every client shares.

#[cfg(doc)]
use super::GroupConsumer;
use crate::group::classic::ClassicConfig;
use crate::group::classic::assignor::Assignor;
use crate::group::membership::MembershipConfig;
use crate::reader::{IsolationLevel, Offset, ReaderConfig};
use kafka_client::ClusterConfig;
use kafka_client::config::{ClientConfig, ConfigError};
use std::time::Duration;

/// Settings of a [`GroupConsumer`].
///
/// ```
/// use kafka_consumer::group::GroupConsumerConfig;
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
    /// `client.rack`.
    pub rack_id: Option<String>,
    /// `max.poll.interval.ms` (default 300 s): the most time between two
    /// [`GroupConsumer::poll`] calls before the member leaves the group.
    pub max_poll_interval: Duration,
    /// `group.remote.assignor`: the broker-side assignor to use (KIP-848
    /// only).
    pub server_assignor: Option<String>,
    /// `group.protocol`.
    pub protocol: GroupProtocol,
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
    /// Fetching: `isolation.level`, `auto.offset.reset`, `fetch.*`.
    pub reader: ReaderConfig,
    /// Connections: `bootstrap.servers`, `client.id`, security settings.
    pub connection: ClientConfig,
}

/// `group.protocol`: who assigns the partitions.
///
/// ```
/// use kafka_consumer::group::{GroupConsumerConfig, GroupProtocol};
/// let c = GroupConsumerConfig::from_properties([
///     ("bootstrap.servers", "127.0.0.1:9092"),
///     ("group.id", "g"),
///     ("group.protocol", "classic"),
///     ("partition.assignment.strategy", "cooperative-sticky"),
/// ])
/// .unwrap();
/// assert_eq!(c.protocol, GroupProtocol::Classic);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum GroupProtocol {
    /// KIP-848 (`consumer`, the default of this client; Kafka 4.0+): the
    /// broker assigns, the member heartbeats and reconciles.
    #[default]
    Consumer,
    /// The classic protocol (`classic`): JoinGroup/SyncGroup, the group
    /// leader runs a client-side assignor.
    Classic,
}

pub use kafka_client::config::is_connection_property;

fn invalid(key: &str, value: &str, reason: &str) -> ConfigError {
    ConfigError::InvalidValue {
        key: key.into(),
        value: value.into(),
        reason: reason.into(),
    }
}

fn millis(key: &str, value: &str, min: u64) -> Result<Duration, ConfigError> {
    match value.parse::<u64>() {
        Ok(v) if v >= min && v <= i32::MAX as u64 => Ok(Duration::from_millis(v)),
        _ => Err(invalid(
            key,
            value,
            &format!("expected milliseconds >= {min}"),
        )),
    }
}

fn bytes(key: &str, value: &str) -> Result<i32, ConfigError> {
    match value.parse::<i32>() {
        Ok(v) if v >= 0 => Ok(v),
        _ => Err(invalid(key, value, "expected a non-negative byte count")),
    }
}

/// True for the properties [`GroupConsumerConfig::from_properties`] takes
/// that a producer does not (`group.id`, `isolation.level`, `fetch.*`, …):
/// a command line that passes one `-X` list to a consumer and a producer
/// splits it with this.
///
/// ```
/// use kafka_consumer::group::is_consumer_property;
/// assert!(is_consumer_property("isolation.level"));
/// assert!(!is_consumer_property("bootstrap.servers"));
/// assert!(!is_consumer_property("linger.ms"));
/// ```
pub fn is_consumer_property(key: &str) -> bool {
    matches!(
        key,
        "group.id"
            | "group.instance.id"
            | "group.protocol"
            | "group.remote.assignor"
            | "session.timeout.ms"
            | "heartbeat.interval.ms"
            | "partition.assignment.strategy"
            | "client.rack"
            | "enable.auto.commit"
            | "auto.commit.interval.ms"
            | "max.poll.interval.ms"
            | "retry.backoff.max.ms"
            | "default.api.timeout.ms"
            | "isolation.level"
            | "auto.offset.reset"
            | "fetch.max.bytes"
            | "max.partition.fetch.bytes"
            | "fetch.min.bytes"
            | "fetch.max.wait.ms"
    )
}

impl GroupConsumerConfig {
    /// The cluster settings of this consumer: its connection settings, and
    /// a bootstrap wait of `bootstrap.timeout.ms`, by default
    /// `default.api.timeout.ms` (Java's consumer bounds its blocking calls
    /// by it and waits for brokers that do not answer yet).
    ///
    /// ```
    /// use kafka_consumer::group::GroupConsumerConfig;
    /// use std::time::Duration;
    /// let c = GroupConsumerConfig::from_properties([
    ///     ("bootstrap.servers", "broker-1:9092"),
    ///     ("group.id", "billing"),
    ///     ("default.api.timeout.ms", "20000"),
    /// ])
    /// .unwrap();
    /// assert_eq!(c.cluster_config().bootstrap_timeout, Duration::from_secs(20));
    /// ```
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
    /// (KIP-848, the default) or `classic`; as in Java,
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
    /// use kafka_consumer::group::GroupConsumerConfig;
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
        let mut connection = Vec::new();
        let mut group_id = None;
        // (key, value) of the last setting that only one protocol accepts.
        let mut classic_only: Option<(String, String)> = None;
        let mut consumer_only: Option<(String, String)> = None;
        let mut auto_commit = false;
        let mut auto_commit_interval = Duration::from_secs(5);
        let mut c = Self {
            group_id: String::new(),
            instance_id: None,
            rack_id: None,
            max_poll_interval: Duration::from_secs(300),
            server_assignor: None,
            protocol: GroupProtocol::Consumer,
            session_timeout: Duration::from_secs(45),
            heartbeat_interval: Duration::from_secs(3),
            assignors: Assignor::DEFAULT.to_vec(),
            retry_backoff: Duration::from_millis(100),
            retry_backoff_max: Duration::from_secs(1),
            api_timeout: Duration::from_secs(60),
            auto_commit_interval: None,
            reader: ReaderConfig::default(),
            connection: ClientConfig {
                client_id: "kafka-eos-consumer".into(),
                ..ClientConfig::new("")
            },
        };
        for (k, v) in props {
            let (key, value) = (k.as_ref().trim(), v.as_ref().trim());
            match key {
                k if is_connection_property(k) => {
                    connection.push((k.to_string(), value.to_string()))
                }
                "group.id" if !value.is_empty() => group_id = Some(value.to_string()),
                "group.id" => return Err(invalid(key, value, "must not be empty")),
                "group.instance.id" if !value.is_empty() => c.instance_id = Some(value.into()),
                "group.instance.id" => return Err(invalid(key, value, "must not be empty")),
                "client.rack" => c.rack_id = Some(value.into()).filter(|r: &String| !r.is_empty()),
                "group.remote.assignor" => {
                    c.server_assignor = Some(value.into());
                    consumer_only = Some((key.into(), value.into()));
                }
                "group.protocol" => {
                    c.protocol = if value.eq_ignore_ascii_case("consumer") {
                        GroupProtocol::Consumer
                    } else if value.eq_ignore_ascii_case("classic") {
                        GroupProtocol::Classic
                    } else {
                        return Err(invalid(key, value, "expected consumer or classic"));
                    }
                }
                "session.timeout.ms" => {
                    c.session_timeout = millis(key, value, 1)?;
                    classic_only = Some((key.into(), value.into()));
                }
                "heartbeat.interval.ms" => {
                    c.heartbeat_interval = millis(key, value, 1)?;
                    classic_only = Some((key.into(), value.into()));
                }
                "partition.assignment.strategy" => {
                    let mut list = Vec::new();
                    for name in value.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                        match Assignor::from_config(name) {
                            Some(a) if !list.contains(&a) => list.push(a),
                            Some(_) => {}
                            None => {
                                return Err(invalid(
                                    key,
                                    value,
                                    "expected range or cooperative-sticky (or their Java class names)",
                                ));
                            }
                        }
                    }
                    if list.is_empty() {
                        return Err(invalid(key, value, "at least one assignor is needed"));
                    }
                    c.assignors = list;
                    classic_only = Some((key.into(), value.into()));
                }
                "enable.auto.commit" => {
                    auto_commit = match value {
                        "true" => true,
                        "false" => false,
                        _ => return Err(invalid(key, value, "expected true or false")),
                    }
                }
                "auto.commit.interval.ms" => auto_commit_interval = millis(key, value, 0)?,
                "max.poll.interval.ms" => c.max_poll_interval = millis(key, value, 1)?,
                "retry.backoff.ms" => c.retry_backoff = millis(key, value, 0)?,
                "retry.backoff.max.ms" => c.retry_backoff_max = millis(key, value, 0)?,
                "default.api.timeout.ms" => {
                    c.api_timeout = millis(key, value, 0)?;
                    c.reader.api_timeout = c.api_timeout;
                }
                "isolation.level" => {
                    c.reader.isolation = match value {
                        "read_committed" => IsolationLevel::ReadCommitted,
                        "read_uncommitted" => IsolationLevel::ReadUncommitted,
                        _ => {
                            return Err(invalid(
                                key,
                                value,
                                "expected read_committed or read_uncommitted",
                            ));
                        }
                    }
                }
                "auto.offset.reset" => {
                    c.reader.auto_offset_reset = match value {
                        "earliest" => Some(Offset::Earliest),
                        "latest" => Some(Offset::Latest),
                        "none" => None,
                        _ => return Err(invalid(key, value, "expected earliest, latest or none")),
                    }
                }
                "fetch.max.bytes" => c.reader.max_bytes = bytes(key, value)?,
                "max.partition.fetch.bytes" => c.reader.partition_max_bytes = bytes(key, value)?,
                "fetch.min.bytes" => c.reader.min_bytes = bytes(key, value)?,
                "fetch.max.wait.ms" => c.reader.max_wait = millis(key, value, 0)?,
                other => return Err(ConfigError::UnknownKey(other.to_string())),
            }
        }
        c.group_id = group_id.ok_or_else(|| ConfigError::Missing("group.id".into()))?;
        c.auto_commit_interval = auto_commit.then_some(auto_commit_interval);
        match (c.protocol, classic_only, consumer_only) {
            (GroupProtocol::Consumer, Some((k, v)), _) => {
                return Err(invalid(
                    &k,
                    &v,
                    "not supported with group.protocol=consumer (the broker sets it): remove it or set group.protocol=classic",
                ));
            }
            (GroupProtocol::Classic, _, Some((k, v))) => {
                return Err(invalid(
                    &k,
                    &v,
                    "only supported with group.protocol=consumer: use partition.assignment.strategy",
                ));
            }
            _ => {}
        }
        if c.protocol == GroupProtocol::Classic && c.heartbeat_interval >= c.session_timeout {
            return Err(invalid(
                "heartbeat.interval.ms",
                &c.heartbeat_interval.as_millis().to_string(),
                "must be lower than session.timeout.ms",
            ));
        }
        c.reader.retry_backoff = c.retry_backoff;
        c.connection = c.connection.with_properties(connection)?;
        Ok(c)
    }

    pub(super) fn membership(&self, member_id: String) -> MembershipConfig {
        let mut m = MembershipConfig::new(self.group_id.clone(), member_id);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(extra: &[(&str, &str)]) -> Result<GroupConsumerConfig, ConfigError> {
        let mut props = vec![("bootstrap.servers", "127.0.0.1:9092"), ("group.id", "g")];
        props.extend_from_slice(extra);
        GroupConsumerConfig::from_properties(props)
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
        assert_eq!(c.protocol, GroupProtocol::Classic);
        assert_eq!(c.session_timeout, Duration::from_secs(10));
        assert_eq!(c.heartbeat_interval, Duration::from_secs(1));
        assert_eq!(c.assignors, [Assignor::CooperativeSticky, Assignor::Range]);
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
            let err = parse(&[(key, value), ("group.protocol", "consumer")]).unwrap_err();
            assert_eq!(err.key(), key);
            assert_eq!(
                parse(&[(key, value)]).unwrap_err().key(),
                key,
                "default protocol"
            );
        }
    }

    #[test]
    fn the_remote_assignor_is_refused_under_classic() {
        let err = parse(&[
            ("group.remote.assignor", "uniform"),
            ("group.protocol", "classic"),
        ])
        .unwrap_err();
        assert_eq!(err.key(), "group.remote.assignor");
    }

    #[test]
    fn unknown_assignors_and_protocols_are_refused() {
        let err = parse(&[
            ("group.protocol", "classic"),
            ("partition.assignment.strategy", "roundrobin"),
        ])
        .unwrap_err();
        assert_eq!(err.key(), "partition.assignment.strategy");
        assert_eq!(
            parse(&[("group.protocol", "streams")]).unwrap_err().key(),
            "group.protocol"
        );
    }

    #[test]
    fn the_heartbeat_must_be_shorter_than_the_session() {
        let err = parse(&[
            ("group.protocol", "classic"),
            ("session.timeout.ms", "6000"),
            ("heartbeat.interval.ms", "6000"),
        ])
        .unwrap_err();
        assert_eq!(err.key(), "heartbeat.interval.ms");
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
        let err = parse(&[("enable.auto.commit", "yes")]).unwrap_err();
        assert_eq!(err.key(), "enable.auto.commit");
    }
}
