//! DeleteTopics (v1-6), served by any broker (Kafka forwards it to the
//! KRaft controller): topics by name (v1-5) or by name or id (v6), checked
//! as `ControllerApis.deleteTopics` checks them (INVALID_REQUEST for a
//! topic named twice, named by both name and id, or by neither), then
//! deleted (see `state::topic_admin`). An unknown name answers
//! UNKNOWN_TOPIC_OR_PARTITION, an unknown id UNKNOWN_TOPIC_ID. Answers
//! follow the request's order (Kafka shuffles them).

use super::{Call, Handle, Reply};
use crate::state::ClusterState;
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;
use kafka_proto::primitives::Uuid;
use std::collections::{BTreeMap, HashMap};

const ZERO: Uuid = [0; 16];

/// The topics as the request names them: (name, id), one of them set.
fn asked(req: &DeleteTopicsRequest, version: i16) -> Vec<(Option<String>, Uuid)> {
    if version >= 6 {
        req.topics
            .iter()
            .map(|t| (t.name.clone(), t.topic_id))
            .collect()
    } else {
        req.topic_names
            .iter()
            .map(|n| (Some(n.clone()), ZERO))
            .collect()
    }
}

fn result(
    name: Option<String>,
    topic_id: Uuid,
    code: ErrorCode,
    message: Option<&str>,
) -> DeleteTopicsResponseDeletableTopicResult {
    DeleteTopicsResponseDeletableTopicResult {
        name,
        topic_id,
        error_code: code.code(),
        error_message: message.map(str::to_string),
        ..Default::default()
    }
}

impl Handle for DeleteTopicsRequest {
    type Response = DeleteTopicsResponse;

    fn handle(&self, state: &mut ClusterState, call: &Call) -> Reply<Self::Response> {
        let asked = asked(self, call.version);
        let mut names: BTreeMap<String, usize> = BTreeMap::new();
        let mut ids: HashMap<Uuid, usize> = HashMap::new();
        for (name, id) in &asked {
            match (name, *id == ZERO) {
                (Some(n), true) => *names.entry(n.clone()).or_default() += 1,
                (None, false) => *ids.entry(*id).or_default() += 1,
                _ => {}
            }
        }
        let mut responses = Vec::with_capacity(asked.len());
        let mut answered_duplicates: Vec<(Option<String>, Uuid)> = Vec::new();
        // Topics named by name whose id the request also names: neither is
        // deleted (`ControllerApis` answers the name, and drops the id).
        let conflicting: Vec<Uuid> = names
            .iter()
            .filter(|(_, count)| **count == 1)
            .filter_map(|(n, _)| state.topics.get(n).map(|t| t.id))
            .filter(|id| ids.contains_key(id))
            .collect();
        for (name, id) in asked {
            let duplicate = match (&name, id == ZERO) {
                (Some(n), true) => names[n] > 1,
                (None, false) => ids[&id] > 1,
                _ => false,
            };
            if duplicate {
                let key = (name.clone(), id);
                if !answered_duplicates.contains(&key) {
                    answered_duplicates.push(key);
                    let what = if name.is_some() { "name" } else { "id" };
                    let message = format!("Duplicate topic {what}.");
                    responses.push(result(name, id, ErrorCode::InvalidRequest, Some(&message)));
                }
                continue;
            }
            let outcome = match (name, id == ZERO) {
                (None, true) => result(
                    None,
                    ZERO,
                    ErrorCode::InvalidRequest,
                    Some("Neither topic name nor id were specified."),
                ),
                (Some(n), false) => result(
                    Some(n),
                    id,
                    ErrorCode::InvalidRequest,
                    Some("You may not specify both topic name and topic id."),
                ),
                (None, false) if conflicting.contains(&id) => continue,
                (None, false) => match state.topic_ids.get(&id).cloned() {
                    None => result(
                        None,
                        id,
                        ErrorCode::UnknownTopicId,
                        Some("This server does not host this topic ID."),
                    ),
                    Some(n) => match state.delete_topic(&n) {
                        Ok(_) => result(Some(n), id, ErrorCode::None, None),
                        Err(code) => result(Some(n), id, code, None),
                    },
                },
                (Some(n), true) => match state.topics.get(&n).map(|t| t.id) {
                    None => result(
                        Some(n),
                        ZERO,
                        ErrorCode::UnknownTopicOrPartition,
                        Some("This server does not host this topic-partition."),
                    ),
                    Some(tid) if conflicting.contains(&tid) => result(
                        Some(n),
                        tid,
                        ErrorCode::InvalidRequest,
                        Some("The provided topic name maps to an ID that was already supplied."),
                    ),
                    Some(_) => match state.delete_topic(&n) {
                        Ok(tid) => result(Some(n), tid, ErrorCode::None, None),
                        Err(code) => result(Some(n), ZERO, code, None),
                    },
                },
            };
            responses.push(outcome);
        }
        Reply::Now(DeleteTopicsResponse {
            responses,
            ..Default::default()
        })
    }

    fn error(&self, _state: &ClusterState, call: &Call, code: ErrorCode) -> Self::Response {
        DeleteTopicsResponse {
            responses: asked(self, call.version)
                .into_iter()
                .map(|(name, id)| {
                    // A null name is refused before v6.
                    let name = if call.version >= 6 {
                        name
                    } else {
                        Some(name.unwrap_or_default())
                    };
                    result(name, id, code, None)
                })
                .collect(),
            ..Default::default()
        }
    }
}
