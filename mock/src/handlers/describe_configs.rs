//! DescribeConfigs: a broker's settings that clients ask for
//! (`transaction.max.timeout.ms` first among them) and topics' defaults,
//! from a fixed table (the mock keeps no per-topic configs).

use super::Reply;
use crate::state::{ClusterState, Ctx};
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

const TOPIC: i8 = 2;
const BROKER: i8 = 4;
/// `ConfigSource` of a value the broker was started with / a default.
const STATIC_BROKER_CONFIG: i8 = 4;
const DEFAULT_CONFIG: i8 = 5;

fn broker_configs(state: &ClusterState) -> Vec<(&'static str, String)> {
    vec![
        (
            "transaction.max.timeout.ms",
            state.config.max_transaction_timeout_ms.to_string(),
        ),
        (
            "auto.create.topics.enable",
            state.config.auto_create_topics.to_string(),
        ),
        (
            "num.partitions",
            state.config.default_partitions.to_string(),
        ),
        ("default.replication.factor", "1".into()),
        ("min.insync.replicas", "1".into()),
        ("transactional.id.expiration.ms", "604800000".into()),
        ("message.max.bytes", "1048588".into()),
    ]
}

fn topic_configs() -> Vec<(&'static str, String)> {
    vec![
        ("cleanup.policy", "delete".into()),
        ("min.insync.replicas", "1".into()),
        ("retention.ms", "604800000".into()),
        ("max.message.bytes", "1048588".into()),
        ("message.timestamp.type", "CreateTime".into()),
    ]
}

pub(crate) fn handle(
    state: &mut ClusterState,
    ctx: &Ctx,
    req: &DescribeConfigsRequest,
    _version: i16,
    _final_attempt: bool,
) -> Reply<DescribeConfigsResponse> {
    let results = req
        .resources
        .iter()
        .map(|r| {
            let mut result = DescribeConfigsResponseDescribeConfigsResult {
                resource_type: r.resource_type,
                resource_name: r.resource_name.clone(),
                error_message: None,
                ..Default::default()
            };
            let (configs, source) = match r.resource_type {
                BROKER
                    if r.resource_name.is_empty() || r.resource_name == ctx.broker.to_string() =>
                {
                    (broker_configs(state), STATIC_BROKER_CONFIG)
                }
                BROKER => {
                    result.error_code = ErrorCode::InvalidRequest.code();
                    result.error_message = Some("ask the broker itself for its configs".into());
                    return result;
                }
                TOPIC if state.topics.contains_key(&r.resource_name) => {
                    (topic_configs(), DEFAULT_CONFIG)
                }
                TOPIC => {
                    result.error_code = ErrorCode::UnknownTopicOrPartition.code();
                    result.error_message = Some(format!("no topic {}", r.resource_name));
                    return result;
                }
                _ => {
                    result.error_code = ErrorCode::InvalidRequest.code();
                    result.error_message = Some("only topic and broker configs".into());
                    return result;
                }
            };
            result.configs = configs
                .into_iter()
                .filter(|(name, _)| {
                    r.configuration_keys
                        .as_ref()
                        .is_none_or(|keys| keys.is_empty() || keys.iter().any(|k| k == name))
                })
                .map(
                    |(name, value)| DescribeConfigsResponseDescribeConfigsResourceResult {
                        name: name.into(),
                        value: Some(value),
                        config_source: source,
                        ..Default::default()
                    },
                )
                .collect();
            result
        })
        .collect();
    Reply::Now(DescribeConfigsResponse {
        results,
        ..Default::default()
    })
}

pub(crate) fn error(
    _state: &ClusterState,
    req: &DescribeConfigsRequest,
    _version: i16,
    code: ErrorCode,
) -> DescribeConfigsResponse {
    DescribeConfigsResponse {
        results: req
            .resources
            .iter()
            .map(|r| DescribeConfigsResponseDescribeConfigsResult {
                error_code: code.code(),
                resource_type: r.resource_type,
                resource_name: r.resource_name.clone(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}
