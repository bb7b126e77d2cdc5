//! Metadata: the live brokers, and the topics asked for (every topic when
//! the list is null), creating unknown ones when automatic creation is on
//! and the request allows it. Every broker is listed as a replica of every
//! partition and the live ones as in sync (the mock keeps one copy).

use super::{Call, Handle, Reply};
use crate::state::ClusterState;
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

fn topic_entry(state: &ClusterState, name: &str, version: i16) -> MetadataResponseTopic {
    let Some(t) = state.topics.get(name) else {
        return MetadataResponseTopic {
            error_code: ErrorCode::UnknownTopicOrPartition.code(),
            name: Some(name.to_string()),
            ..Default::default()
        };
    };
    let replicas: Vec<i32> = state.brokers.keys().copied().collect();
    let alive = state.alive_brokers();
    MetadataResponseTopic {
        error_code: 0,
        name: Some(name.to_string()),
        topic_id: if version >= 10 { t.id } else { [0; 16] },
        is_internal: false,
        partitions: t
            .partitions
            .iter()
            .enumerate()
            .map(|(i, log)| {
                let leader_alive = alive.contains(&log.leader);
                let mut replica_nodes = vec![log.leader];
                replica_nodes.extend(replicas.iter().filter(|r| **r != log.leader));
                let isr_nodes = replica_nodes
                    .iter()
                    .copied()
                    .filter(|r| alive.contains(r))
                    .collect();
                MetadataResponsePartition {
                    error_code: if leader_alive {
                        0
                    } else {
                        ErrorCode::LeaderNotAvailable.code()
                    },
                    partition_index: i as i32,
                    leader_id: if leader_alive { log.leader } else { -1 },
                    leader_epoch: if version >= 7 { log.leader_epoch } else { -1 },
                    replica_nodes,
                    isr_nodes,
                    offline_replicas: Vec::new(),
                    ..Default::default()
                }
            })
            .collect(),
        ..Default::default()
    }
}

/// A topic answered with an error and nothing else.
fn refused_entry(name: &str, code: ErrorCode) -> MetadataResponseTopic {
    MetadataResponseTopic {
        error_code: code.code(),
        name: Some(name.to_string()),
        ..Default::default()
    }
}

impl Handle for MetadataRequest {
    type Response = MetadataResponse;

    fn handle(&self, state: &mut ClusterState, call: &Call) -> Reply<Self::Response> {
        let topics = match &self.topics {
            None => state
                .topics
                .keys()
                .map(|n| topic_entry(state, n, call.version))
                .collect(),
            Some(list) => list
                .iter()
                .map(|t| match &t.name {
                    Some(name) if state.refused_topics.contains_key(name.as_str()) => {
                        refused_entry(name, state.refused_topics[name.as_str()])
                    }
                    Some(name) if !name.is_empty() || t.topic_id == [0; 16] => {
                        let create = state.config.auto_create_topics
                            && (call.version < 4 || self.allow_auto_topic_creation)
                            && !state.topics.contains_key(name.as_str());
                        if create {
                            let partitions = state.config.default_partitions;
                            if let Err(code) = state.create_topic(name, partitions) {
                                return refused_entry(name, code);
                            }
                        }
                        topic_entry(state, name, call.version)
                    }
                    _ => match state.topic_ids.get(&t.topic_id).cloned() {
                        Some(name) => topic_entry(state, &name, call.version),
                        None => MetadataResponseTopic {
                            error_code: ErrorCode::UnknownTopicId.code(),
                            name: None,
                            topic_id: t.topic_id,
                            ..Default::default()
                        },
                    },
                })
                .collect(),
        };
        let alive = state.alive_brokers();
        Reply::Now(MetadataResponse {
            brokers: brokers(state, &alive),
            cluster_id: Some(state.config.cluster_id.clone()),
            controller_id: alive.first().copied().unwrap_or(-1),
            topics,
            ..Default::default()
        })
    }

    fn error(&self, state: &ClusterState, call: &Call, code: ErrorCode) -> Self::Response {
        // The brokers are listed as always (a client must still find them);
        // every topic asked for carries the error, without partitions.
        let alive = state.alive_brokers();
        MetadataResponse {
            brokers: brokers(state, &alive),
            cluster_id: Some(state.config.cluster_id.clone()),
            controller_id: alive.first().copied().unwrap_or(-1),
            topics: self
                .topics
                .iter()
                .flatten()
                .map(|t| MetadataResponseTopic {
                    error_code: code.code(),
                    name: t.name.clone(),
                    topic_id: if call.version >= 10 {
                        t.topic_id
                    } else {
                        [0; 16]
                    },
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }
}

/// The `alive` brokers as listed in a response (no racks).
fn brokers(state: &ClusterState, alive: &[i32]) -> Vec<MetadataResponseBroker> {
    alive
        .iter()
        .map(|id| {
            let b = &state.brokers[id];
            MetadataResponseBroker {
                node_id: *id,
                host: b.host.clone(),
                port: b.port,
                rack: None,
                ..Default::default()
            }
        })
        .collect()
}
