//! JoinGroup (classic groups): see the membership state machine. The
//! answer waits (the request is parked) until the rebalance completes.

use super::{Call, Handle, Reply};
use crate::state::membership::{ClassicGroup, JoinOutcome, JoinRequest};
use crate::state::{ClusterState, Ctx};
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;

impl Handle for JoinGroupRequest {
    type Response = JoinGroupResponse;

    fn handle(&self, state: &mut ClusterState, call: &Call) -> Reply<Self::Response> {
        if self.group_id.is_empty() {
            return Reply::Now(self.error(state, call, ErrorCode::InvalidGroupId));
        }
        if self.session_timeout_ms < 6_000 || self.session_timeout_ms > 1_800_000 {
            // group.min.session.timeout.ms / group.max.session.timeout.ms.
            return Reply::Now(self.error(state, call, ErrorCode::InvalidSessionTimeout));
        }
        let join = JoinRequest {
            member_id: &self.member_id,
            protocol_type: &self.protocol_type,
            protocols: self
                .protocols
                .iter()
                .map(|p| (p.name.clone(), p.metadata.clone()))
                .collect(),
            session_timeout_ms: self.session_timeout_ms,
            rebalance_timeout_ms: if call.version >= 1 {
                self.rebalance_timeout_ms
            } else {
                self.session_timeout_ms
            },
            client_id: &call.ctx.client_id,
            instance_id: if call.version >= 5 {
                self.group_instance_id.as_deref()
            } else {
                None
            },
        };
        if state
            .consumer
            .get(&self.group_id)
            .is_some_and(|g| !g.members.is_empty())
        {
            // A KIP-848 group in use: Kafka lets a classic member join it;
            // the mock does not (listed in the crate docs).
            return Reply::Now(self.error(state, call, ErrorCode::InconsistentGroupProtocol));
        }
        let new_id = state.new_member_id("consumer");
        let group = state
            .classic
            .entry(self.group_id.clone())
            .or_insert_with(ClassicGroup::new);
        let before = group.fingerprint();
        let outcome = group.join(&join, call.ctx.now_ms, call.final_attempt, || new_id);
        record_host(group, &join, &call.ctx);
        if group.fingerprint() != before {
            state.appends += 1;
        }
        match outcome {
            JoinOutcome::MemberIdRequired(id) if call.version >= 4 => {
                Reply::Now(JoinGroupResponse {
                    error_code: ErrorCode::MemberIdRequired.code(),
                    member_id: id,
                    ..Default::default()
                })
            }
            JoinOutcome::MemberIdRequired(id) => {
                // Before v4 the member joins at once with the new id.
                let join = JoinRequest {
                    member_id: &id,
                    ..join
                };
                let group = state
                    .classic
                    .get_mut(&self.group_id)
                    .expect("created above");
                let before = group.fingerprint();
                let outcome = group.join(&join, call.ctx.now_ms, call.final_attempt, String::new);
                record_host(group, &join, &call.ctx);
                if group.fingerprint() != before {
                    state.appends += 1;
                }
                match outcome {
                    JoinOutcome::Waiting { until_ms } => Reply::Park { until_ms },
                    other => Reply::Now(answer(other, self, call.version)),
                }
            }
            JoinOutcome::Waiting { until_ms } => Reply::Park { until_ms },
            other => Reply::Now(answer(other, self, call.version)),
        }
    }

    fn error(&self, _state: &ClusterState, _call: &Call, code: ErrorCode) -> Self::Response {
        JoinGroupResponse {
            error_code: code.code(),
            member_id: self.member_id.clone(),
            ..Default::default()
        }
    }
}

/// Records the joining member's address for DescribeGroups (Kafka keeps
/// the host of the member's latest JoinGroup). A static member that joined
/// without a member id is found by its instance id.
fn record_host(group: &mut ClassicGroup, join: &JoinRequest<'_>, ctx: &Ctx) {
    let id = match (join.member_id, join.instance_id) {
        ("", Some(instance)) => group.static_member(instance),
        ("", None) => None,
        (id, _) => Some(id.to_string()),
    };
    if let Some(m) = id.and_then(|id| group.members.get_mut(&id)) {
        m.client_host = ctx.client_host.to_string();
    }
}

fn answer(outcome: JoinOutcome, req: &JoinGroupRequest, version: i16) -> JoinGroupResponse {
    match outcome {
        JoinOutcome::Joined(j) => JoinGroupResponse {
            generation_id: j.generation,
            protocol_type: (version >= 7).then(|| req.protocol_type.clone()),
            protocol_name: j.protocol,
            leader: j.leader,
            member_id: j.member_id,
            // Before v9 a static leader rejoining a Stable group is told
            // nothing to assign (it syncs and keeps its assignment).
            skip_assignment: version >= 9 && j.skip_assignment,
            members: if j.skip_assignment && version < 9 {
                Vec::new()
            } else {
                j.members
                    .into_iter()
                    .map(|(member_id, metadata, instance)| JoinGroupResponseMember {
                        member_id,
                        metadata,
                        group_instance_id: instance,
                        ..Default::default()
                    })
                    .collect()
            },
            ..Default::default()
        },
        JoinOutcome::Refused(code) => JoinGroupResponse {
            error_code: code.code(),
            member_id: req.member_id.clone(),
            ..Default::default()
        },
        JoinOutcome::MemberIdRequired(_) | JoinOutcome::Waiting { .. } => JoinGroupResponse {
            error_code: ErrorCode::UnknownServerError.code(),
            ..Default::default()
        },
    }
}
