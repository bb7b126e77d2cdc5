//! Changing configs of topics and brokers entry by entry
//! ([`alter_configs`], IncrementalAlterConfigs, KIP-339; Java's
//! `Admin.incrementalAlterConfigs`, `kafka-configs.sh --alter`): configs
//! not named keep their values.

use kafka_client::{Cluster, RequestError};
use kafka_proto::messages::{
    IncrementalAlterConfigsRequest, IncrementalAlterConfigsRequestConfig,
    IncrementalAlterConfigsRequestResource, IncrementalAlterConfigsResponse,
};
use kafka_proto::{ApiKey, ErrorCode};

/// A resource whose configs change.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ConfigResource {
    /// A topic.
    Topic(String),
    /// One broker (its dynamic per-broker configs).
    Broker(i32),
    /// The cluster-wide broker defaults.
    BrokerDefault,
}

impl ConfigResource {
    /// The wire resource type (2 topic, 4 broker) and name (the broker's id,
    /// empty for the cluster-wide default).
    pub fn wire(&self) -> (i8, String) {
        match self {
            ConfigResource::Topic(t) => (2, t.clone()),
            ConfigResource::Broker(id) => (4, id.to_string()),
            ConfigResource::BrokerDefault => (4, String::new()),
        }
    }
}

impl std::fmt::Display for ConfigResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConfigResource::Topic(t) => write!(f, "topic {t}"),
            ConfigResource::Broker(id) => write!(f, "broker {id}"),
            ConfigResource::BrokerDefault => f.write_str("the brokers' cluster-wide default"),
        }
    }
}

/// One change of one config (Java's `AlterConfigOp`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ConfigOp {
    /// Sets the value.
    Set(String),
    /// Removes the override: back to the default.
    Delete,
    /// Adds items to a list value.
    Append(String),
    /// Removes items from a list value.
    Subtract(String),
}

impl ConfigOp {
    fn wire(&self) -> (i8, Option<String>) {
        match self {
            ConfigOp::Set(v) => (0, Some(v.clone())),
            ConfigOp::Delete => (1, None),
            ConfigOp::Append(v) => (2, Some(v.clone())),
            ConfigOp::Subtract(v) => (3, Some(v.clone())),
        }
    }
}

/// Changes configs of `resource` (IncrementalAlterConfigs): a topic's on
/// any broker, a broker's on that broker, the cluster-wide broker default
/// on any broker. `validate_only` checks the changes without making them.
/// A refusal (INVALID_CONFIG, POLICY_VIOLATION, an unknown topic, an
/// authorization failure) is a [`RequestError::Broker`] with the broker's
/// message.
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), kafka_client::RequestError> {
/// use kafka_admin::{ConfigOp, ConfigResource};
/// let topic = ConfigResource::Topic("orders".into());
/// kafka_admin::alter_configs(cluster, &topic, &[("retention.ms", ConfigOp::Set("86400000".into()))], false).await?;
/// # Ok(()) }
/// ```
pub async fn alter_configs(
    cluster: &Cluster,
    resource: &ConfigResource,
    changes: &[(&str, ConfigOp)],
    validate_only: bool,
) -> Result<(), RequestError> {
    let conn = match resource {
        ConfigResource::Broker(id) => {
            cluster.refresh().await?;
            cluster.connection(*id).await?
        }
        _ => cluster.any_connection().await?,
    };
    let version = conn
        .versions()
        .version_for::<IncrementalAlterConfigsRequest>()?;
    let resp = conn
        .send(&alter_request(resource, changes, validate_only), version)
        .await?;
    alter_answer(version, resource, resp)
}

fn alter_request(
    resource: &ConfigResource,
    changes: &[(&str, ConfigOp)],
    validate_only: bool,
) -> IncrementalAlterConfigsRequest {
    let (resource_type, resource_name) = resource.wire();
    IncrementalAlterConfigsRequest {
        resources: vec![IncrementalAlterConfigsRequestResource {
            resource_type,
            resource_name,
            configs: changes
                .iter()
                .map(|(name, op)| {
                    let (config_operation, value) = op.wire();
                    IncrementalAlterConfigsRequestConfig {
                        name: name.to_string(),
                        config_operation,
                        value,
                        ..Default::default()
                    }
                })
                .collect(),
            ..Default::default()
        }],
        validate_only,
        ..Default::default()
    }
}

fn alter_answer(
    version: i16,
    resource: &ConfigResource,
    resp: IncrementalAlterConfigsResponse,
) -> Result<(), RequestError> {
    let r = resp
        .responses
        .into_iter()
        .next()
        .ok_or_else(|| RequestError::Broker {
            api: ApiKey::IncrementalAlterConfigs,
            version,
            error: ErrorCode::UnknownServerError,
            message: Some(format!("no result for {resource} in the answer")),
        })?;
    let error = ErrorCode::from(r.error_code);
    if error.is_ok() {
        return Ok(());
    }
    Err(RequestError::Broker {
        api: ApiKey::IncrementalAlterConfigs,
        version,
        error,
        message: Some(format!(
            "{resource}: {}",
            r.error_message.as_deref().unwrap_or("refused")
        )),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_proto::messages::IncrementalAlterConfigsResponseResource;

    /// Each operation's wire code and value; broker resources by id, the
    /// default as the empty name.
    #[test]
    fn the_request_carries_each_operation() {
        let changes = [
            ("a", ConfigOp::Set("1".into())),
            ("b", ConfigOp::Delete),
            ("c", ConfigOp::Append("x".into())),
            ("d", ConfigOp::Subtract("y".into())),
        ];
        let r = alter_request(&ConfigResource::Broker(3), &changes, true);
        assert!(r.validate_only);
        let res = &r.resources[0];
        assert_eq!((res.resource_type, res.resource_name.as_str()), (4, "3"));
        let got: Vec<(i8, Option<&str>)> = res
            .configs
            .iter()
            .map(|c| (c.config_operation, c.value.as_deref()))
            .collect();
        assert_eq!(
            got,
            [(0, Some("1")), (1, None), (2, Some("x")), (3, Some("y"))]
        );
        assert_eq!(ConfigResource::BrokerDefault.wire(), (4, String::new()));
        assert_eq!(ConfigResource::Topic("t".into()).wire(), (2, "t".into()));
    }

    /// A refusal names the resource and keeps the broker's message.
    #[test]
    fn a_refusal_is_a_broker_error_naming_the_resource() {
        let resp = |code: ErrorCode| IncrementalAlterConfigsResponse {
            responses: vec![IncrementalAlterConfigsResponseResource {
                error_code: code.code(),
                error_message: Some("bad value".into()),
                resource_type: 2,
                resource_name: "t".into(),
                ..Default::default()
            }],
            ..Default::default()
        };
        let topic = ConfigResource::Topic("t".into());
        assert!(alter_answer(1, &topic, resp(ErrorCode::None)).is_ok());
        let e = alter_answer(1, &topic, resp(ErrorCode::InvalidConfig)).unwrap_err();
        assert_eq!(e.error_code(), Some(ErrorCode::InvalidConfig));
        assert!(e.to_string().contains("topic t: bad value"), "{e}");
        let empty = IncrementalAlterConfigsResponse::default();
        assert!(alter_answer(1, &topic, empty).is_err());
    }
}
