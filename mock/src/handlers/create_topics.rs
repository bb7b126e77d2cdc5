//! CreateTopics: topics with their partition count (or the default), any
//! replication factor up to the broker count (the mock keeps one copy),
//! and their configs kept as the topic's overrides (DescribeConfigs shows
//! them).

use super::answer_each;
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

answer_each! {
    CreateTopicsRequest.topics => CreateTopicsResponse.topics,
    answer: |req, state, call, t| {
        let brokers = state.brokers.len() as i16;
        let partitions = if !t.assignments.is_empty() {
            t.assignments.len() as i32
        } else if t.num_partitions == -1 {
            state.config.default_partitions
        } else {
            t.num_partitions
        };
        let rf = if t.replication_factor == -1 {
            brokers.min(3)
        } else {
            t.replication_factor
        };
        let mut result = CreateTopicsResponseCreatableTopicResult {
            name: t.name.clone(),
            ..Default::default()
        };
        let outcome = if rf <= 0 || rf > brokers {
            Err(ErrorCode::InvalidReplicationFactor)
        } else if req.validate_only {
            if state.topics.contains_key(&t.name) {
                Err(ErrorCode::TopicAlreadyExists)
            } else {
                Ok([0; 16])
            }
        } else {
            let created = state.create_topic(&t.name, partitions);
            if created.is_ok() {
                let configs = t
                    .configs
                    .iter()
                    .filter_map(|c| Some((c.name.clone(), c.value.clone()?)))
                    .collect();
                state.configs.create_topic(&t.name, configs);
            }
            created
        };
        match outcome {
            Ok(id) => {
                if call.version >= 7 {
                    result.topic_id = id;
                }
                if call.version >= 5 {
                    result.num_partitions = partitions;
                    result.replication_factor = rf;
                }
                result.error_message = None;
            }
            Err(code) => {
                result.error_code = code.code();
                result.error_message = Some(format!("{code:?}"));
            }
        }
        result
    },
    failed: failed,
}

/// A topic answered with `code` alone.
fn failed(
    t: &CreateTopicsRequestCreatableTopic,
    code: ErrorCode,
) -> CreateTopicsResponseCreatableTopicResult {
    CreateTopicsResponseCreatableTopicResult {
        name: t.name.clone(),
        error_code: code.code(),
        ..Default::default()
    }
}
