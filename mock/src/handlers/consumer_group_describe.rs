//! ConsumerGroupDescribe (KIP-848): a consumer group's epochs, assignor,
//! and each member's subscription, assignment and target assignment.

use super::answer_each;
use crate::state::ClusterState;
use crate::state::consumer_group::ConsumerGroup;
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;
use kafka_proto::primitives::Uuid;
use std::collections::BTreeSet;

/// The operations allowed on a group without an authorizer: READ,
/// DELETE, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS (`AclOperation`
/// codes as bits).
pub(crate) const GROUP_OPERATIONS: i32 = 1 << 3 | 1 << 6 | 1 << 8 | 1 << 10 | 1 << 11;

answer_each! {
    ConsumerGroupDescribeRequest.group_ids => ConsumerGroupDescribeResponse.groups,
    at_coordinator: Group,
    answer: |req, state, _call, id| match state.consumer.get(id) {
        Some(g) => describe(state, id, g, req.include_authorized_operations),
        None if state.classic.contains_key(id) => failed_with(
            id,
            ErrorCode::GroupIdNotFound,
            Some(format!("Group {id} is not a consumer group.")),
        ),
        None => failed_with(
            id,
            ErrorCode::GroupIdNotFound,
            Some(format!("Group {id} not found.")),
        ),
    },
    failed: failed,
}

/// A consumer group's description.
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

/// A group answered with `code` alone.
fn failed(id: &str, code: ErrorCode) -> ConsumerGroupDescribeResponseDescribedGroup {
    failed_with(id, code, None)
}

/// A group answered with `code` and `message`.
fn failed_with(
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
