//! CreatePartitions (v0-3), served by any broker (Kafka forwards it to the
//! KRaft controller): each topic grows to its new count, the new
//! partitions placed as CreateTopics places them, or on the brokers the
//! request assigns (see `state::topic_admin`). A count not above the
//! current one is INVALID_PARTITIONS, an unknown topic
//! UNKNOWN_TOPIC_OR_PARTITION, a topic named twice INVALID_REQUEST
//! (`ControllerApis.createPartitions`); `validate_only` checks and changes
//! nothing.

use super::{Call, Handle, Reply};
use crate::state::ClusterState;
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

fn result(
    name: &str,
    code: ErrorCode,
    message: Option<String>,
) -> CreatePartitionsResponseCreatePartitionsTopicResult {
    CreatePartitionsResponseCreatePartitionsTopicResult {
        name: name.to_string(),
        error_code: code.code(),
        error_message: message,
        ..Default::default()
    }
}

impl Handle for CreatePartitionsRequest {
    type Response = CreatePartitionsResponse;

    fn handle(&self, state: &mut ClusterState, _call: &Call) -> Reply<Self::Response> {
        let mut results = Vec::with_capacity(self.topics.len());
        let mut duplicates_answered: Vec<&str> = Vec::new();
        for t in &self.topics {
            let named = self.topics.iter().filter(|o| o.name == t.name).count();
            if named > 1 {
                if !duplicates_answered.contains(&t.name.as_str()) {
                    duplicates_answered.push(&t.name);
                    results.push(result(
                        &t.name,
                        ErrorCode::InvalidRequest,
                        Some("Duplicate topic name.".into()),
                    ));
                }
                continue;
            }
            let assignments: Option<Vec<Vec<i32>>> = t
                .assignments
                .as_ref()
                .map(|a| a.iter().map(|r| r.broker_ids.clone()).collect());
            let outcome = state.create_partitions(
                &t.name,
                t.count,
                assignments.as_deref(),
                self.validate_only,
            );
            results.push(match outcome {
                Ok(()) => result(&t.name, ErrorCode::None, None),
                Err((code, message)) => result(&t.name, code, message),
            });
        }
        Reply::Now(CreatePartitionsResponse {
            results,
            ..Default::default()
        })
    }

    fn error(&self, _state: &ClusterState, _call: &Call, code: ErrorCode) -> Self::Response {
        CreatePartitionsResponse {
            results: self
                .topics
                .iter()
                .map(|t| result(&t.name, code, None))
                .collect(),
            ..Default::default()
        }
    }
}
