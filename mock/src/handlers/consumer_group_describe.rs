//! ConsumerGroupDescribe (KIP-848): a consumer group's epochs, assignor,
//! and each member's subscription, assignment and target assignment.

use super::{Call, Handle, Reply};
use crate::state::consumer_group::ConsumerGroup;
use crate::state::{ClusterState, CoordinatorKind};
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;
use kafka_proto::primitives::Uuid;
use std::collections::BTreeSet;

/// The operations allowed on a group without an authorizer: READ,
/// DELETE, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS (`AclOperation`
/// codes as bits).
pub(crate) const GROUP_OPERATIONS: i32 = 1 << 3 | 1 << 6 | 1 << 8 | 1 << 10 | 1 << 11;

impl Handle for ConsumerGroupDescribeRequest {
    type Response = ConsumerGroupDescribeResponse;

    fn handle(&self, state: &mut ClusterState, call: &Call) -> Reply<Self::Response> {
        let groups = self
            .group_ids
            .iter()
            .map(|id| {
                if let Err(code) = state.check_coordinator(&call.ctx, CoordinatorKind::Group, id) {
                    return failed(id, code, None);
                }
                match state.consumer.get(id) {
                    Some(g) => describe(state, id, g, self.include_authorized_operations),
                    None if state.classic.contains_key(id) => failed(
                        id,
                        ErrorCode::GroupIdNotFound,
                        Some(format!("Group {id} is not a consumer group.")),
                    ),
                    None => failed(
                        id,
                        ErrorCode::GroupIdNotFound,
                        Some(format!("Group {id} not found.")),
                    ),
                }
            })
            .collect();
        Reply::Now(ConsumerGroupDescribeResponse {
            groups,
            ..Default::default()
        })
    }

    fn error(&self, _state: &ClusterState, _call: &Call, code: ErrorCode) -> Self::Response {
        ConsumerGroupDescribeResponse {
            groups: self
                .group_ids
                .iter()
                .map(|id| failed(id, code, None))
                .collect(),
            ..Default::default()
        }
    }
}

fn describe(
    state: &ClusterState,
    id: &str,
    g: &ConsumerGroup,
    operations: bool,
) -> ConsumerGroupDescribeResponseDescribedGroup {
    let assignment = |tps: &BTreeSet<(Uuid, i32)>| {
        let mut out: Vec<ConsumerGroupDescribeResponseTopicPartitions> = Vec::new();
        for (topic_id, p) in tps {
            match out.last_mut() {
                Some(last) if last.topic_id == *topic_id => last.partitions.push(*p),
                _ => out.push(ConsumerGroupDescribeResponseTopicPartitions {
                    topic_id: *topic_id,
                    topic_name: state.topic_ids.get(topic_id).cloned().unwrap_or_default(),
                    partitions: vec![*p],
                    ..Default::default()
                }),
            }
        }
        ConsumerGroupDescribeResponseAssignment {
            topic_partitions: out,
            ..Default::default()
        }
    };
    ConsumerGroupDescribeResponseDescribedGroup {
        group_id: id.to_string(),
        group_state: g.state().name().to_string(),
        group_epoch: g.group_epoch,
        assignment_epoch: g.assignment_epoch,
        assignor_name: g.assignor().to_string(),
        members: g
            .members
            .iter()
            .map(|(member_id, m)| ConsumerGroupDescribeResponseMember {
                member_id: member_id.clone(),
                instance_id: m.instance_id.clone(),
                rack_id: m.rack_id.clone(),
                member_epoch: m.epoch,
                client_id: m.client_id.clone(),
                client_host: m.client_host.clone(),
                subscribed_topic_names: m.subscribed.clone(),
                subscribed_topic_regex: m.regex.clone(),
                assignment: assignment(&m.assigned.keys().copied().collect()),
                target_assignment: assignment(
                    &g.target.get(member_id).cloned().unwrap_or_default(),
                ),
                // The consumer protocol.
                member_type: 1,
                ..Default::default()
            })
            .collect(),
        authorized_operations: if operations {
            GROUP_OPERATIONS
        } else {
            i32::MIN
        },
        ..Default::default()
    }
}

fn failed(
    id: &str,
    code: ErrorCode,
    message: Option<String>,
) -> ConsumerGroupDescribeResponseDescribedGroup {
    ConsumerGroupDescribeResponseDescribedGroup {
        group_id: id.to_string(),
        error_code: code.code(),
        error_message: message,
        ..Default::default()
    }
}
