//! ConsumerGroupHeartbeat (KIP-848): join, heartbeat, reconcile and leave
//! a consumer group; see the state machine in `state::consumer_group`.
//! Served by Kafka 4.4 (v0-1); Kafka 3.9 does not enable the protocol by
//! default and does not advertise it.

use super::{Call, Handle, Reply};
use crate::state::consumer_group::{
    ConsumerGroup, Heartbeat, HeartbeatAnswer, LEAVE_EPOCH, Partitions, STATIC_LEAVE_EPOCH,
    TopicInfo,
};
use crate::state::{ClusterState, Ctx};
use kafka_proto::ErrorCode;
use kafka_proto::messages::*;
use std::collections::BTreeMap;

impl Handle for ConsumerGroupHeartbeatRequest {
    type Response = ConsumerGroupHeartbeatResponse;

    fn handle(&self, state: &mut ClusterState, call: &Call) -> Reply<Self::Response> {
        let hb = Heartbeat {
            member_id: &self.member_id,
            member_epoch: self.member_epoch,
            instance_id: self.instance_id.as_deref(),
            rack_id: self.rack_id.as_deref(),
            rebalance_timeout_ms: self.rebalance_timeout_ms,
            subscribed: self.subscribed_topic_names.clone(),
            regex: self.subscribed_topic_regex.as_deref(),
            assignor: self.server_assignor.as_deref(),
            owned: self.topic_partitions.as_ref().map(|tps| {
                let mut owned = Partitions::new();
                for tp in tps {
                    owned
                        .entry(tp.topic_id)
                        .or_default()
                        .extend(tp.partitions.iter().copied());
                }
                owned
            }),
            client_id: &call.ctx.client_id,
            client_host: &call.ctx.client_host,
        };
        match answer(state, &call.ctx, self, &hb, call.version) {
            Ok(a) => Reply::Now(ConsumerGroupHeartbeatResponse {
                member_id: Some(a.member_id),
                member_epoch: a.member_epoch,
                heartbeat_interval_ms: state.config.consumer_group_heartbeat_interval.as_millis()
                    as i32,
                assignment: a
                    .assignment
                    .map(|p| ConsumerGroupHeartbeatResponseAssignment {
                        topic_partitions: p
                            .into_iter()
                            .map(
                                |(topic_id, ps)| ConsumerGroupHeartbeatResponseTopicPartitions {
                                    topic_id,
                                    partitions: ps.into_iter().collect(),
                                    ..Default::default()
                                },
                            )
                            .collect(),
                        ..Default::default()
                    }),
                ..Default::default()
            }),
            Err(code) => Reply::Now(self.error(state, call, code)),
        }
    }

    fn error(&self, _state: &ClusterState, _call: &Call, code: ErrorCode) -> Self::Response {
        ConsumerGroupHeartbeatResponse {
            error_code: code.code(),
            ..Default::default()
        }
    }
}

fn answer(
    state: &mut ClusterState,
    ctx: &Ctx,
    req: &ConsumerGroupHeartbeatRequest,
    hb: &Heartbeat<'_>,
    version: i16,
) -> Result<HeartbeatAnswer, ErrorCode> {
    ConsumerGroup::validate(hb)?;
    if req.group_id.is_empty() || (version >= 1 && req.member_id.is_empty()) {
        // v1: the consumer generates its member id (KIP-1082).
        return Err(ErrorCode::InvalidRequest);
    }
    if state
        .classic
        .get(&req.group_id)
        .is_some_and(|g| !g.members.is_empty())
    {
        // A classic group in use: Kafka converts it when its members
        // allow; the mock does not (listed in the crate docs).
        return Err(ErrorCode::GroupIdNotFound);
    }
    let topics: BTreeMap<String, TopicInfo> = state
        .topics
        .iter()
        .map(|(name, t)| {
            (
                name.clone(),
                TopicInfo {
                    id: t.id,
                    partitions: t.partitions.len() as i32,
                },
            )
        })
        .collect();
    let new_id = state.new_member_id("consumer");
    let joining = hb.member_epoch == 0;
    if !joining && !state.consumer.contains_key(&req.group_id) {
        return Err(ErrorCode::GroupIdNotFound);
    }
    let group = state.consumer.entry(req.group_id.clone()).or_default();
    let before = group.fingerprint();
    let result = if hb.member_epoch == LEAVE_EPOCH || hb.member_epoch == STATIC_LEAVE_EPOCH {
        group.leave(hb)
    } else {
        group.heartbeat(hb, &topics, ctx.now_ms, || new_id)
    };
    if group.fingerprint() != before {
        state.appends += 1;
    }
    if joining && result.is_ok() {
        // An empty classic group of the same id gives way.
        state.classic.remove(&req.group_id);
    }
    result
}
