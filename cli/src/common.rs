//! What every command shares: the bootstrap list, `-X` settings, building
//! the validated [`ProducerConfig`] and connecting to the cluster.

use crate::args::Cli;
use crate::error::{CliError, CliResult};
use kafka_client::Cluster;
use kafka_client::Properties;
use kafka_consumer::GroupConsumerConfig;
use kafka_producer::ProducerConfig;
use std::sync::Arc;
use std::time::Duration;

/// The global options, checked.
#[derive(Debug, Clone)]
pub struct Globals {
    /// `--bootstrap` (or `KAFKA_EOS_BOOTSTRAP`).
    pub bootstrap: String,
    /// `-X key=value`, in order.
    pub props: Vec<(String, String)>,
}

impl Globals {
    /// The bootstrap list from `--bootstrap`, `KAFKA_EOS_BOOTSTRAP` or
    /// `-X bootstrap.servers`, if any.
    pub fn bootstrap_of(cli: &Cli) -> Option<String> {
        let from_props = cli
            .props
            .iter()
            .rev()
            .find(|(k, _)| k == "bootstrap.servers")
            .map(|(_, v)| v.clone());
        cli.bootstrap
            .clone()
            .or(from_props)
            .filter(|b| !b.trim().is_empty())
    }

    /// Globals with an explicit bootstrap list (a local cluster's).
    pub fn with_bootstrap(cli: &Cli, bootstrap: String) -> Self {
        Self {
            bootstrap,
            props: cli.props.clone(),
        }
    }

    /// Checks that a bootstrap list was given.
    pub fn from_cli(cli: &Cli) -> CliResult<Self> {
        match Self::bootstrap_of(cli) {
            Some(b) => Ok(Self::with_bootstrap(cli, b)),
            None => Err(CliError::usage(
                "--bootstrap HOST:PORT is required (or set KAFKA_EOS_BOOTSTRAP)",
            )),
        }
    }

    /// Every setting in one bag, later ones overriding earlier ones:
    /// `bootstrap.servers` from `--bootstrap`, then `defaults` (a command's
    /// defaults, which `-X` overrides), then every `-X`, then `flags` (a
    /// command's flags, which override `-X`).
    pub fn properties(&self, defaults: &[(&str, &str)], flags: &[(&str, &str)]) -> Properties {
        let mut props: Vec<(&str, &str)> = vec![("bootstrap.servers", self.bootstrap.as_str())];
        props.extend_from_slice(defaults);
        props.extend(self.props.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        props.extend_from_slice(flags);
        tracing::debug!(settings = %crate::logging::redact(props.iter().copied()), "client settings");
        Properties::new(props)
    }

    /// The validated producer configuration: `bootstrap.servers` from
    /// `--bootstrap`, then every `-X`, then `extra` (command flags); a key
    /// the producer does not take is refused.
    pub fn config(&self, extra: &[(&str, &str)]) -> CliResult<ProducerConfig> {
        let mut props = self.properties(&[], extra);
        let config = take_producer_config(&mut props)?;
        props.finish()?;
        Ok(config)
    }

    /// The validated configurations of a consumer-group member and a
    /// producer beside it, from one bag ([`Self::properties`]):
    /// `consumer_defaults` (which `-X` overrides), every `-X`, then
    /// `producer_flags`. Each takes its keys, both take the connection
    /// keys; `more` takes its own (the schema registry's); a key none of
    /// them takes is refused.
    pub fn group_configs<T>(
        &self,
        consumer_defaults: &[(&str, &str)],
        producer_flags: &[(&str, &str)],
        more: impl FnOnce(&mut Properties) -> CliResult<T>,
    ) -> CliResult<(GroupConsumerConfig, ProducerConfig, T)> {
        let mut props = self.properties(consumer_defaults, producer_flags);
        let mut consumer = GroupConsumerConfig::take_from(&mut props)?;
        consumer
            .connection
            .bootstrap_timeout
            .get_or_insert(Duration::ZERO);
        let producer = take_producer_config(&mut props)?;
        let more = more(&mut props)?;
        props.finish()?;
        Ok((consumer, producer, more))
    }

    /// Connects to the cluster (one metadata round trip) with the
    /// producer configuration of the `-X` settings.
    pub async fn cluster(&self) -> CliResult<Arc<Cluster>> {
        self.connect(&self.config(&[])?).await
    }

    /// Connects to the cluster (one metadata round trip) with `config`.
    pub async fn connect(&self, config: &ProducerConfig) -> CliResult<Arc<Cluster>> {
        tracing::info!(bootstrap = %self.bootstrap, protocol = ?config.security_protocol, "connecting");
        let cluster = Cluster::connect(config.cluster_config())
            .await
            .map_err(|e| CliError::from(e).with_bootstrap(&self.bootstrap))?;
        tracing::info!(brokers = cluster.metadata().brokers().len(), "connected");
        Ok(cluster)
    }
}

/// The validated producer configuration of `props`, failing fast: unless
/// `-X bootstrap.timeout.ms` says otherwise, connecting tries each bootstrap
/// address once, so that an unreachable cluster exits 3 at once instead of
/// after `max.block.ms` (the consumer's settings do the same).
pub fn producer_config<'a>(
    props: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> CliResult<ProducerConfig> {
    let mut props = Properties::new(props);
    let config = take_producer_config(&mut props)?;
    props.finish()?;
    Ok(config)
}

/// [`ProducerConfig::take_from`], failing fast as [`producer_config`].
pub fn take_producer_config(props: &mut Properties) -> CliResult<ProducerConfig> {
    let mut config = ProducerConfig::take_from(props)?;
    config.bootstrap_timeout.get_or_insert(Duration::ZERO);
    Ok(config)
}

/// A usage error when `topic` is not a legal Kafka topic name (checked
/// before any request: the broker would answer INVALID_TOPIC_EXCEPTION).
pub fn check_topic(topic: &str) -> CliResult<()> {
    kafka_producer::kafka_proto::topic::validate(topic)
        .map_err(|e| CliError::usage(format!("invalid topic name {topic:?}: {e}")))
}

/// The partition count of `topic` (refreshing its metadata); an error when
/// the topic does not exist.
pub async fn partition_count(cluster: &Cluster, topic: &str) -> CliResult<i32> {
    check_topic(topic)?;
    cluster.refresh_topics(&[topic]).await?;
    let n = cluster
        .metadata()
        .topic(topic)
        .map_or(0, |t| t.partition_count() as i32);
    if n <= 0 {
        return Err(CliError::failure(format!(
            "topic {topic:?} does not exist (or has no partitions)"
        )));
    }
    Ok(n)
}

/// `requested` checked against the topic's partitions, or all of them.
pub async fn partitions(cluster: &Cluster, topic: &str, requested: &[i32]) -> CliResult<Vec<i32>> {
    let n = partition_count(cluster, topic).await?;
    if requested.is_empty() {
        return Ok((0..n).collect());
    }
    for p in requested {
        if *p < 0 || *p >= n {
            return Err(CliError::usage(format!(
                "partition {p} does not exist: topic {topic:?} has partitions 0..{}",
                n - 1
            )));
        }
    }
    let mut v = requested.to_vec();
    v.sort_unstable();
    v.dedup();
    Ok(v)
}

/// Creates `topic` with `partitions` partitions and the broker's default
/// replication factor, then waits until the metadata shows a leader for every
/// partition ([`kafka_admin::ensure_topic`], 30 s). Returns false when the topic
/// already existed (its partition count is then whatever it has).
pub async fn create_topic(cluster: &Cluster, topic: &str, partitions: i32) -> CliResult<bool> {
    use kafka_admin::{self as admin, NewTopic};
    let new_topic = NewTopic::new(topic).with_partitions(partitions);
    let ensured =
        admin::ensure_topic(cluster, &new_topic, std::time::Duration::from_secs(30)).await?;
    Ok(ensured.created)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No keys beside the clients'.
    fn no_more(_: &mut Properties) -> CliResult<()> {
        Ok(())
    }
    use kafka_client::{ClientConfig, ConfigError};

    fn globals(props: &[(&str, &str)]) -> Globals {
        Globals {
            bootstrap: "127.0.0.1:9092".into(),
            props: props
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    /// One bag serves a consumer and a producer: each takes its own keys,
    /// both take the connection keys and `retry.backoff.ms`.
    #[test]
    fn one_bag_takes_producer_consumer_and_connection_keys() {
        let g = globals(&[
            ("linger.ms", "7"),
            ("fetch.min.bytes", "10"),
            ("client.id", "copier"),
            ("retry.backoff.ms", "50"),
            ("enable.auto.commit", "TRUE"),
        ]);
        let (consumer, producer, ()) = g
            .group_configs(&[("group.id", "g")], &[("transactional.id", "t")], no_more)
            .unwrap();
        assert_eq!(producer.linger, Duration::from_millis(7));
        assert_eq!(producer.transactional_id.as_deref(), Some("t"));
        assert_eq!(consumer.reader.min_bytes, 10);
        assert!(consumer.auto_commit_interval.is_some());
        assert_eq!(
            (
                consumer.connection.client_id.as_str(),
                producer.client_id.as_str()
            ),
            ("copier", "copier")
        );
        assert_eq!(consumer.retry_backoff, Duration::from_millis(50));
        assert_eq!(producer.retry_backoff, Duration::from_millis(50));
    }

    /// Every OAUTHBEARER key reaches both clients through `-X`.
    #[test]
    fn oauthbearer_keys_pass_through_x() {
        let g = globals(&[
            ("security.protocol", "SASL_PLAINTEXT"),
            ("sasl.mechanism", "OAUTHBEARER"),
            (
                "sasl.oauthbearer.token.endpoint.url",
                "http://127.0.0.1:8080/token",
            ),
            ("sasl.oauthbearer.client.credentials.client.id", "copier"),
            (
                "sasl.oauthbearer.client.credentials.client.secret",
                "s3cret",
            ),
            ("sasl.oauthbearer.scope", "kafka"),
            ("sasl.oauthbearer.sub.claim.name", "sub"),
            ("sasl.oauthbearer.scope.claim.name", "scope"),
            ("sasl.oauthbearer.header.urlencode", "false"),
            ("sasl.login.refresh.window.factor", "0.8"),
            ("sasl.login.refresh.window.jitter", "0.05"),
            ("sasl.login.refresh.min.period.seconds", "60"),
            ("sasl.login.refresh.buffer.seconds", "300"),
            ("sasl.login.connect.timeout.ms", "10000"),
            ("sasl.login.read.timeout.ms", "10000"),
            ("sasl.login.retry.backoff.ms", "100"),
            ("sasl.login.retry.backoff.max.ms", "10000"),
            (
                "sasl.login.callback.handler.class",
                "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
            ),
        ]);
        let (consumer, producer, ()) = g.group_configs(&[("group.id", "g")], &[], no_more).unwrap();
        assert!(consumer.connection.sasl_oauthbearer.is_some());
        assert!(producer.sasl_oauthbearer.is_some());
        let sasl = producer.connection_config().sasl.unwrap();
        assert_eq!(sasl.mechanism_name(), "OAUTHBEARER");
    }

    /// A key neither client takes is a usage error naming it.
    #[test]
    fn one_bag_refuses_a_key_nobody_takes() {
        let g = globals(&[("linger.ms", "7"), ("bogus.key", "1")]);
        let e = g
            .group_configs(&[("group.id", "g")], &[], no_more)
            .unwrap_err();
        assert_eq!(e.code, crate::error::ExitCode::Usage);
        assert!(e.message.contains("bogus.key"), "{}", e.message);
    }

    /// `-X` overrides a command's defaults; a command's flags override
    /// `-X`.
    #[test]
    fn flags_override_x_which_overrides_defaults() {
        let g = globals(&[("auto.offset.reset", "latest"), ("transactional.id", "x")]);
        let (consumer, producer, ()) = g
            .group_configs(
                &[("group.id", "g"), ("auto.offset.reset", "earliest")],
                &[("transactional.id", "flag")],
                no_more,
            )
            .unwrap();
        assert_eq!(
            consumer.reader.auto_offset_reset,
            kafka_consumer::AutoOffsetReset::Latest
        );
        assert_eq!(producer.transactional_id.as_deref(), Some("flag"));
    }

    /// A key every client reads fails with the same error from each.
    #[test]
    fn every_config_gives_the_same_range_error() {
        let base = [("bootstrap.servers", "127.0.0.1:9092"), ("group.id", "g")];
        for (key, value) in [("request.timeout.ms", "-1"), ("bootstrap.timeout.ms", "-5")] {
            let props = [base[0], (key, value)];
            let client = ClientConfig::from_properties(props).unwrap_err();
            let producer = ProducerConfig::from_properties(props).unwrap_err();
            let consumer =
                GroupConsumerConfig::from_properties([base[0], base[1], (key, value)]).unwrap_err();
            assert_eq!(client, producer, "{key}");
            assert_eq!(client, consumer, "{key}");
            assert!(
                client.to_string().ends_with("must be at least 0"),
                "{client}"
            );
        }
        let producer = ProducerConfig::from_properties([base[0], ("retry.backoff.ms", "-1")]);
        let consumer =
            GroupConsumerConfig::from_properties([base[0], base[1], ("retry.backoff.ms", "-1")]);
        let expected = ConfigError::InvalidValue {
            key: "retry.backoff.ms".into(),
            value: "-1".into(),
            reason: "must be at least 0".into(),
        };
        assert_eq!(producer.unwrap_err(), expected);
        assert_eq!(consumer.unwrap_err(), expected);
    }
}
