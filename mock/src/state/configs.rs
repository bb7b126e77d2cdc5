//! Topic and broker configs the way IncrementalAlterConfigs changes them
//! and DescribeConfigs shows them (Kafka's `ConfigurationControlManager`):
//! a table of the topic configs Kafka knows with their defaults and types,
//! each topic's dynamic overrides, and the brokers' dynamic overrides
//! (cluster-wide under the empty name, or for one broker id).
//!
//! A config op is checked the way Kafka checks it: an unknown topic config
//! name or a value of the wrong type is INVALID_CONFIG; APPEND and SUBTRACT
//! apply to list configs only; DELETE of a config that is not set changes
//! nothing. Every op of a resource is checked before any is applied.

use super::ClusterState;
use kafka_proto::ErrorCode;
use std::collections::BTreeMap;

/// `config_operation` of IncrementalAlterConfigs.
const SET: i8 = 0;
const DELETE: i8 = 1;
const APPEND: i8 = 2;
const SUBTRACT: i8 = 3;

/// How a config's value parses (Kafka's `ConfigDef.Type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Long,
    Int,
    Double,
    Bool,
    Text,
    List,
}

/// A topic config Kafka knows: its name, type and default.
const TOPIC_CONFIGS: &[(&str, Kind, &str)] = &[
    ("cleanup.policy", Kind::List, "delete"),
    ("compression.type", Kind::Text, "producer"),
    ("delete.retention.ms", Kind::Long, "86400000"),
    ("file.delete.delay.ms", Kind::Long, "60000"),
    ("flush.messages", Kind::Long, "9223372036854775807"),
    ("flush.ms", Kind::Long, "9223372036854775807"),
    ("index.interval.bytes", Kind::Int, "4096"),
    ("max.compaction.lag.ms", Kind::Long, "9223372036854775807"),
    ("max.message.bytes", Kind::Int, "1048588"),
    ("message.timestamp.after.max.ms", Kind::Long, "3600000"),
    (
        "message.timestamp.before.max.ms",
        Kind::Long,
        "9223372036854775807",
    ),
    ("message.timestamp.type", Kind::Text, "CreateTime"),
    ("min.cleanable.dirty.ratio", Kind::Double, "0.5"),
    ("min.compaction.lag.ms", Kind::Long, "0"),
    ("min.insync.replicas", Kind::Int, "1"),
    ("preallocate", Kind::Bool, "false"),
    ("retention.bytes", Kind::Long, "-1"),
    ("retention.ms", Kind::Long, "604800000"),
    ("segment.bytes", Kind::Int, "1073741824"),
    ("segment.ms", Kind::Long, "604800000"),
    ("unclean.leader.election.enable", Kind::Bool, "false"),
];

/// One op of an IncrementalAlterConfigs resource.
#[derive(Debug, Clone)]
pub(crate) struct ConfigOp {
    /// The config's name.
    pub name: String,
    /// SET, DELETE, APPEND or SUBTRACT.
    pub op: i8,
    /// The value (ignored by DELETE).
    pub value: Option<String>,
}

/// The dynamic overrides the cluster holds.
#[derive(Debug, Default)]
pub(crate) struct Configs {
    /// Each topic's overrides, by topic name.
    topics: BTreeMap<String, BTreeMap<String, String>>,
    /// Broker overrides by resource name ("" for the cluster default).
    brokers: BTreeMap<String, BTreeMap<String, String>>,
}

impl Configs {
    /// A deleted topic's overrides go with it.
    pub(crate) fn remove_topic(&mut self, topic: &str) {
        self.topics.remove(topic);
    }

    /// Sets the configs a topic was created with (CreateTopics).
    pub(crate) fn create_topic(&mut self, topic: &str, configs: BTreeMap<String, String>) {
        if !configs.is_empty() {
            self.topics.insert(topic.to_string(), configs);
        }
    }

    /// `topic`'s value of `name` (its override, else the default).
    pub(crate) fn topic_value(&self, topic: &str, name: &str) -> Option<String> {
        self.topics
            .get(topic)
            .and_then(|t| t.get(name).cloned())
            .or_else(|| default_of(name).map(String::from))
    }

    /// Every topic config of `topic`: name, value, and whether it is a
    /// dynamic override (else the default).
    pub(crate) fn topic_entries(&self, topic: &str) -> Vec<(String, String, bool)> {
        let overrides = self.topics.get(topic);
        TOPIC_CONFIGS
            .iter()
            .map(
                |(name, _, default)| match overrides.and_then(|o| o.get(*name)) {
                    Some(v) => (name.to_string(), v.clone(), true),
                    None => (name.to_string(), default.to_string(), false),
                },
            )
            .collect()
    }

    /// The dynamic broker overrides of `resource` ("" for the cluster default).
    pub(crate) fn broker_overrides(&self, resource: &str) -> Option<&BTreeMap<String, String>> {
        self.brokers.get(resource)
    }
}

fn default_of(name: &str) -> Option<&'static str> {
    TOPIC_CONFIGS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, _, d)| *d)
}

fn kind_of(name: &str) -> Option<Kind> {
    TOPIC_CONFIGS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, k, _)| *k)
}

/// Kafka's `ConfigDef.parseType`: INVALID_CONFIG with its message.
fn check_value(name: &str, kind: Kind, value: &str) -> Result<(), (ErrorCode, String)> {
    let trimmed = value.trim();
    let ok = match kind {
        Kind::Long => trimmed.parse::<i64>().is_ok(),
        Kind::Int => trimmed.parse::<i32>().is_ok(),
        Kind::Double => trimmed.parse::<f64>().is_ok(),
        Kind::Bool => trimmed.eq_ignore_ascii_case("true") || trimmed.eq_ignore_ascii_case("false"),
        Kind::Text | Kind::List => true,
    };
    if ok {
        Ok(())
    } else {
        let expected = match kind {
            Kind::Long => "a number of type long",
            Kind::Int => "a number of type int",
            Kind::Double => "a number of type double",
            Kind::Bool => "either true or false",
            Kind::Text | Kind::List => "a string",
        };
        Err((
            ErrorCode::InvalidConfig,
            format!(
                "Invalid value {value} for configuration {name}: Expected value to be {expected}"
            ),
        ))
    }
}

/// Applies `ops` to `current` (the resource's overrides), each checked
/// with `kind` (None: an unknown name); the first refusal wins.
fn apply(
    current: &BTreeMap<String, String>,
    ops: &[ConfigOp],
    kind: impl Fn(&str) -> Result<Kind, (ErrorCode, String)>,
    default: impl Fn(&str) -> Option<String>,
) -> Result<BTreeMap<String, String>, (ErrorCode, String)> {
    let mut next = current.clone();
    for op in ops {
        let k = kind(&op.name)?;
        match op.op {
            SET => {
                let value = op.value.clone().unwrap_or_default();
                check_value(&op.name, k, &value)?;
                next.insert(op.name.clone(), value);
            }
            DELETE => {
                next.remove(&op.name);
            }
            APPEND | SUBTRACT => {
                if k != Kind::List {
                    return Err((
                        ErrorCode::InvalidConfig,
                        format!(
                            "Config value append is not allowed for config key: {}",
                            op.name
                        ),
                    ));
                }
                let now = next
                    .get(&op.name)
                    .cloned()
                    .or_else(|| default(&op.name))
                    .unwrap_or_default();
                let mut items: Vec<String> = now
                    .split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect();
                let given = op.value.clone().unwrap_or_default();
                for v in given.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                    if op.op == APPEND {
                        if !items.iter().any(|i| i == v) {
                            items.push(v.to_string());
                        }
                    } else {
                        items.retain(|i| i != v);
                    }
                }
                next.insert(op.name.clone(), items.join(","));
            }
            other => {
                return Err((
                    ErrorCode::InvalidRequest,
                    format!("Unknown config operation {other}"),
                ));
            }
        }
    }
    Ok(next)
}

impl ClusterState {
    /// IncrementalAlterConfigs of topic `name`.
    pub(crate) fn alter_topic_configs(
        &mut self,
        name: &str,
        ops: &[ConfigOp],
        validate_only: bool,
    ) -> Result<(), (ErrorCode, String)> {
        if !self.topics.contains_key(name) {
            return Err((
                ErrorCode::UnknownTopicOrPartition,
                format!("The topic '{name}' does not exist."),
            ));
        }
        let empty = BTreeMap::new();
        let current = self.configs.topics.get(name).unwrap_or(&empty);
        let next = apply(
            current,
            ops,
            |n| {
                kind_of(n).ok_or_else(|| {
                    (
                        ErrorCode::InvalidConfig,
                        format!("Unknown topic config name: {n}"),
                    )
                })
            },
            |n| default_of(n).map(String::from),
        )?;
        if !validate_only {
            if next.is_empty() {
                self.configs.topics.remove(name);
            } else {
                self.configs.topics.insert(name.to_string(), next);
            }
        }
        Ok(())
    }

    /// IncrementalAlterConfigs of broker `resource` (a broker id, or ""
    /// for the cluster-wide default). The mock takes any broker config name
    /// as dynamic and checks values as text.
    pub(crate) fn alter_broker_configs(
        &mut self,
        resource: &str,
        ops: &[ConfigOp],
        validate_only: bool,
    ) -> Result<(), (ErrorCode, String)> {
        if !resource.is_empty() {
            let known = resource
                .parse::<i32>()
                .ok()
                .is_some_and(|id| self.brokers.contains_key(&id));
            if !known {
                return Err((
                    ErrorCode::InvalidRequest,
                    format!("Invalid broker name {resource}"),
                ));
            }
        }
        let empty = BTreeMap::new();
        let current = self.configs.brokers.get(resource).unwrap_or(&empty);
        let next = apply(current, ops, |_| Ok(Kind::Text), |_| None)?;
        if !validate_only {
            self.configs.brokers.insert(resource.to_string(), next);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(name: &str, op: i8, value: &str) -> ConfigOp {
        ConfigOp {
            name: name.into(),
            op,
            value: Some(value.into()),
        }
    }

    #[test]
    fn ops_are_checked_then_applied_together() {
        let none = BTreeMap::new();
        let kind = |n: &str| kind_of(n).ok_or((ErrorCode::InvalidConfig, String::new()));
        let default = |n: &str| default_of(n).map(String::from);
        let next = apply(
            &none,
            &[
                op("retention.ms", SET, "1000"),
                op("cleanup.policy", APPEND, "compact"),
            ],
            kind,
            default,
        )
        .unwrap();
        assert_eq!(next["retention.ms"], "1000");
        assert_eq!(next["cleanup.policy"], "delete,compact");
        let bad = apply(&next, &[op("retention.ms", SET, "soon")], kind, default);
        assert_eq!(bad.unwrap_err().0, ErrorCode::InvalidConfig);
        let bad = apply(&next, &[op("retention.ms", APPEND, "1")], kind, default);
        assert_eq!(bad.unwrap_err().0, ErrorCode::InvalidConfig);
        let bad = apply(&next, &[op("retention.forever", SET, "1")], kind, default);
        assert_eq!(bad.unwrap_err().0, ErrorCode::InvalidConfig);
        let gone = apply(&next, &[op("retention.ms", DELETE, "")], kind, default).unwrap();
        assert!(!gone.contains_key("retention.ms"));
    }
}
