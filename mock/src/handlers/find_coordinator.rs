//! FindCoordinator: the broker coordinating a group or a transactional id
//! (a hash of the key over the brokers, the next live one when that broker
//! is stopped, or where a test moved it).

use super::{Call, Handle, Reply};
use crate::state::{ClusterState, CoordinatorKind};
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

fn locate(state: &ClusterState, key_type: i8, key: &str) -> Result<(i32, String, i32), ErrorCode> {
    let kind = match key_type {
        FindCoordinatorRequest::KEY_TYPE_GROUP => CoordinatorKind::Group,
        FindCoordinatorRequest::KEY_TYPE_TRANSACTION => CoordinatorKind::Transaction,
        _ => return Err(ErrorCode::InvalidRequest),
    };
    let id = state
        .coordinator(kind, key)
        .ok_or(ErrorCode::CoordinatorNotAvailable)?;
    let b = &state.brokers[&id];
    Ok((id, b.host.clone(), b.port))
}

impl Handle for FindCoordinatorRequest {
    type Response = FindCoordinatorResponse;

    fn handle(&self, state: &mut ClusterState, call: &Call) -> Reply<Self::Response> {
        if call.version < 4 {
            let mut resp = FindCoordinatorResponse::default();
            match locate(state, self.key_type, &self.key) {
                Ok((node_id, host, port)) => {
                    resp.node_id = node_id;
                    resp.host = host;
                    resp.port = port;
                    if call.version >= 1 {
                        resp.error_message = None;
                    }
                }
                Err(code) => {
                    resp.error_code = code.code();
                    resp.node_id = -1;
                    resp.port = -1;
                }
            }
            return Reply::Now(resp);
        }
        Reply::Now(FindCoordinatorResponse {
            coordinators: self
                .coordinator_keys
                .iter()
                .map(|key| match locate(state, self.key_type, key) {
                    Ok((node_id, host, port)) => FindCoordinatorResponseCoordinator {
                        key: key.clone(),
                        node_id,
                        host,
                        port,
                        error_code: 0,
                        error_message: None,
                        ..Default::default()
                    },
                    Err(code) => refused(key, code),
                })
                .collect(),
            ..Default::default()
        })
    }

    fn error(&self, _state: &ClusterState, call: &Call, code: ErrorCode) -> Self::Response {
        if call.version < 4 {
            return FindCoordinatorResponse {
                error_code: code.code(),
                node_id: -1,
                port: -1,
                ..Default::default()
            };
        }
        FindCoordinatorResponse {
            coordinators: self
                .coordinator_keys
                .iter()
                .map(|key| refused(key, code))
                .collect(),
            ..Default::default()
        }
    }
}

/// The answer for `key` when its coordinator cannot be named.
fn refused(key: &str, code: ErrorCode) -> FindCoordinatorResponseCoordinator {
    FindCoordinatorResponseCoordinator {
        key: key.to_string(),
        node_id: -1,
        port: -1,
        error_code: code.code(),
        ..Default::default()
    }
}
