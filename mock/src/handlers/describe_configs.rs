//! DescribeConfigs: a broker's settings that clients ask for
//! (`transaction.max.timeout.ms` first among them) with its dynamic
//! overrides, and each topic's configs: the defaults Kafka's table gives,
//! with the overrides set at creation or by IncrementalAlterConfigs.

use super::answer_each;
use crate::state::ClusterState;
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

const TOPIC: i8 = 2;
const BROKER: i8 = 4;
/// `ConfigSource` of a topic override, a broker's dynamic override, the
/// cluster-wide dynamic default, a value the broker was started with, a
/// default.
const DYNAMIC_TOPIC_CONFIG: i8 = 1;
const DYNAMIC_BROKER_CONFIG: i8 = 2;
const DYNAMIC_DEFAULT_BROKER_CONFIG: i8 = 3;
const STATIC_BROKER_CONFIG: i8 = 4;
const DEFAULT_CONFIG: i8 = 5;

/// The broker's static configs, then the cluster-wide and its own
/// dynamic overrides on top, each with its source.
fn broker_configs(state: &ClusterState, broker: i32) -> Vec<(String, String, i8)> {
    let mut out: Vec<(String, String, i8)> = static_broker_configs(state)
        .into_iter()
        .map(|(n, v)| (n.to_string(), v, STATIC_BROKER_CONFIG))
        .collect();
    let layers = [
        ("".to_string(), DYNAMIC_DEFAULT_BROKER_CONFIG),
        (broker.to_string(), DYNAMIC_BROKER_CONFIG),
    ];
    for (resource, source) in layers {
        for (name, value) in state
            .configs
            .broker_overrides(&resource)
            .into_iter()
            .flatten()
        {
            match out.iter_mut().find(|(n, _, _)| n == name) {
                Some(entry) => *entry = (name.clone(), value.clone(), source),
                None => out.push((name.clone(), value.clone(), source)),
            }
        }
    }
    out
}

fn static_broker_configs(state: &ClusterState) -> Vec<(&'static str, String)> {
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

fn topic_configs(state: &ClusterState, topic: &str) -> Vec<(String, String, i8)> {
    state
        .configs
        .topic_entries(topic)
        .into_iter()
        .map(|(name, value, dynamic)| {
            let source = if dynamic {
                DYNAMIC_TOPIC_CONFIG
            } else {
                DEFAULT_CONFIG
            };
            (name, value, source)
        })
        .collect()
}

answer_each! {
    DescribeConfigsRequest.resources => DescribeConfigsResponse.results,
    answer: |req, state, call, r| {
        let mut result = DescribeConfigsResponseDescribeConfigsResult {
            resource_type: r.resource_type,
            resource_name: r.resource_name.clone(),
            error_message: None,
            ..Default::default()
        };
        let configs = match r.resource_type {
            BROKER
                if r.resource_name.is_empty()
                    || r.resource_name == call.ctx.broker.to_string() =>
            {
                broker_configs(state, call.ctx.broker)
            }
            BROKER => {
                result.error_code = ErrorCode::InvalidRequest.code();
                result.error_message = Some("ask the broker itself for its configs".into());
                return result;
            }
            TOPIC if state.topics.contains_key(&r.resource_name) => {
                topic_configs(state, &r.resource_name)
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
            .filter(|(name, _, _)| {
                r.configuration_keys
                    .as_ref()
                    .is_none_or(|keys| keys.is_empty() || keys.iter().any(|k| k == name))
            })
            .map(|(name, value, source)| {
                DescribeConfigsResponseDescribeConfigsResourceResult {
                    name,
                    value: Some(value),
                    config_source: source,
                    ..Default::default()
                }
            })
            .collect();
        result
    },
    failed: failed,
}

/// A resource answered with `code` alone.
fn failed(
    r: &DescribeConfigsRequestDescribeConfigsResource,
    code: ErrorCode,
) -> DescribeConfigsResponseDescribeConfigsResult {
    DescribeConfigsResponseDescribeConfigsResult {
        error_code: code.code(),
        resource_type: r.resource_type,
        resource_name: r.resource_name.clone(),
        ..Default::default()
    }
}
