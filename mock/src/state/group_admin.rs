//! The group coordinator's admin view (Kafka 4.4's `GroupMetadataManager`
//! `listGroups`, `describeGroups` and `validateDeleteGroup` with
//! `GroupCoordinatorShard.deleteGroups`; 3.9's `GroupCoordinator` answers
//! the same for classic groups).
//!
//! A group is, by precedence:
//! 1. a KIP-848 consumer group with members;
//! 2. a classic group with members;
//! 3. an empty consumer group;
//! 4. an empty classic group;
//! 5. a group the offsets store alone knows, which Kafka keeps as an empty
//!    classic group without a protocol type (a standalone consumer's
//!    commits create it).

use super::consumer_group::ConsumerGroup;
use super::membership::{ClassicGroup, GroupState};
use super::{ClusterState, CoordinatorKind};
use crate::config::KafkaRelease;
use bytes::Bytes;
use kafka_proto::ErrorCode;

/// A group as the coordinator holds it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum GroupRef<'a> {
    /// A KIP-848 consumer group.
    Consumer(&'a ConsumerGroup),
    /// A classic group; `None` for a group with offsets only.
    Classic(Option<&'a ClassicGroup>),
}

impl GroupRef<'_> {
    /// ListGroups' group type.
    pub(crate) fn group_type(self) -> &'static str {
        match self {
            GroupRef::Consumer(_) => "consumer",
            GroupRef::Classic(_) => "classic",
        }
    }

    /// The state as Kafka names it.
    pub(crate) fn state_name(self) -> &'static str {
        match self {
            GroupRef::Consumer(g) => g.state().name(),
            GroupRef::Classic(Some(g)) => classic_state_name(g.state),
            GroupRef::Classic(None) => classic_state_name(GroupState::Empty),
        }
    }

    /// The protocol type: `consumer` for a consumer group, the members'
    /// for a classic one (kept once it is empty), "" for offsets only.
    pub(crate) fn protocol_type(self) -> String {
        match self {
            GroupRef::Consumer(_) => "consumer".into(),
            GroupRef::Classic(Some(g)) => g.protocol_type.clone(),
            GroupRef::Classic(None) => String::new(),
        }
    }

    fn has_members(self) -> bool {
        match self {
            GroupRef::Consumer(g) => !g.members.is_empty(),
            GroupRef::Classic(Some(g)) => g.state != GroupState::Empty,
            GroupRef::Classic(None) => false,
        }
    }
}

/// A classic group's state as Kafka's `ClassicGroupState` names it.
pub(crate) fn classic_state_name(state: GroupState) -> &'static str {
    match state {
        GroupState::Empty => "Empty",
        GroupState::PreparingRebalance => "PreparingRebalance",
        GroupState::CompletingRebalance => "CompletingRebalance",
        GroupState::Stable => "Stable",
    }
}

/// The state DescribeGroups gives a group that does not exist.
pub(crate) const DEAD: &str = "Dead";

/// One listed group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Listed {
    /// The group id.
    pub group_id: String,
    /// Its protocol type (`consumer` for a KIP-848 group, "" for offsets only).
    pub protocol_type: String,
    /// Its state as ListGroups names it.
    pub state: &'static str,
    /// `classic` or `consumer`.
    pub group_type: &'static str,
}

/// A member of a described classic group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DescribedMember {
    /// Its member id.
    pub member_id: String,
    /// Its `group.instance.id`, if static.
    pub instance_id: Option<String>,
    /// Its client id.
    pub client_id: String,
    /// Its address (`/127.0.0.1`).
    pub client_host: String,
    /// Its metadata for the group's protocol (Stable groups only).
    pub metadata: Bytes,
    /// Its assignment (Stable groups only).
    pub assignment: Bytes,
}

/// A described classic group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Described {
    /// Its state as DescribeGroups names it.
    pub state: &'static str,
    /// Its protocol type.
    pub protocol_type: String,
    /// The chosen protocol (Stable groups only, else "").
    pub protocol: String,
    /// Its members, by member id.
    pub members: Vec<DescribedMember>,
}

impl ClusterState {
    /// The group `id`, if the coordinator holds one.
    pub(crate) fn group_ref(&self, id: &str) -> Option<GroupRef<'_>> {
        let consumer = self.consumer.get(id).map(GroupRef::Consumer);
        let classic = self.classic.get(id).map(|g| GroupRef::Classic(Some(g)));
        let busy = |g: &Option<GroupRef<'_>>| g.is_some_and(|g| g.has_members());
        if busy(&consumer) {
            consumer
        } else if busy(&classic) {
            classic
        } else {
            consumer
                .or(classic)
                .or_else(|| self.groups.knows(id).then_some(GroupRef::Classic(None)))
        }
    }

    /// ListGroups at `broker`: the groups it coordinates, filtered by state
    /// (any case, trimmed) and type (any case); an empty filter passes all.
    pub(crate) fn list_groups(
        &self,
        broker: i32,
        states: &[String],
        types: &[String],
    ) -> Vec<Listed> {
        let states: Vec<String> = states.iter().map(|s| s.trim().to_lowercase()).collect();
        let types: Vec<String> = types.iter().map(|t| t.to_lowercase()).collect();
        let mut ids: Vec<&String> = self.classic.keys().chain(self.consumer.keys()).collect();
        let offsets_only = self.groups.group_ids();
        ids.extend(offsets_only.iter());
        ids.sort_unstable();
        ids.dedup();
        ids.into_iter()
            .filter(|id| self.coordinator(CoordinatorKind::Group, id) == Some(broker))
            .filter_map(|id| Some((id, self.group_ref(id)?)))
            .filter(|(_, g)| states.is_empty() || states.contains(&g.state_name().to_lowercase()))
            .filter(|(_, g)| types.is_empty() || types.iter().any(|t| t == g.group_type()))
            .map(|(id, g)| Listed {
                group_id: id.clone(),
                protocol_type: g.protocol_type(),
                state: g.state_name(),
                group_type: g.group_type(),
            })
            .collect()
    }

    /// DescribeGroups of one classic group; `Err` with Kafka's message when
    /// there is none (or it is a consumer group). Members are listed in
    /// every state; the protocol and their metadata only when Stable. In
    /// the other states Kafka 4.4 still shows each member's assignment as
    /// last synced (`ClassicGroupMember.describeNoMetadata`), Kafka 3.9 none
    /// (`MemberMetadata.summaryNoMetadata`).
    pub(crate) fn describe_classic_group(&self, id: &str) -> Result<Described, String> {
        let group = match self.group_ref(id) {
            None => return Err(format!("Group {id} not found.")),
            Some(GroupRef::Consumer(_)) => {
                return Err(format!("Group {id} is not a classic group."));
            }
            Some(GroupRef::Classic(g)) => g,
        };
        let Some(g) = group else {
            return Ok(Described {
                state: classic_state_name(GroupState::Empty),
                protocol_type: String::new(),
                protocol: String::new(),
                members: Vec::new(),
            });
        };
        let stable = g.state == GroupState::Stable;
        let protocol = if stable {
            g.protocol.clone().unwrap_or_default()
        } else {
            String::new()
        };
        let members = g
            .members
            .iter()
            .map(|(member_id, m)| {
                let (metadata, assignment) = if stable {
                    let metadata = m
                        .protocols
                        .iter()
                        .find(|(name, _)| *name == protocol)
                        .map(|(_, b)| b.clone())
                        .unwrap_or_default();
                    (metadata, m.assignment.clone())
                } else if self.config.release == KafkaRelease::V4_4 {
                    (Bytes::new(), m.assignment.clone())
                } else {
                    (Bytes::new(), Bytes::new())
                };
                DescribedMember {
                    member_id: member_id.clone(),
                    instance_id: m.instance_id.clone(),
                    client_id: m.client_id.clone(),
                    client_host: m.client_host.clone(),
                    metadata,
                    assignment,
                }
            })
            .collect();
        Ok(Described {
            state: classic_state_name(g.state),
            protocol_type: g.protocol_type.clone(),
            protocol,
            members,
        })
    }

    /// DeleteGroups of one group: GROUP_ID_NOT_FOUND when there is none,
    /// NON_EMPTY_GROUP while it has members, else the group and all its
    /// offsets (committed and pending) are removed.
    pub(crate) fn delete_group(&mut self, id: &str) -> Result<(), ErrorCode> {
        match self.group_ref(id) {
            None => return Err(ErrorCode::GroupIdNotFound),
            Some(g) if g.has_members() => return Err(ErrorCode::NonEmptyGroup),
            Some(_) => {}
        }
        self.classic.remove(id);
        self.consumer.remove(id);
        self.groups.delete_group(id);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::groups::CommittedOffset;
    use crate::state::membership::{JoinOutcome, JoinRequest};
    use crate::state::test_cluster;

    fn commit(st: &mut ClusterState, group: &str) {
        let off = CommittedOffset {
            offset: 1,
            leader_epoch: -1,
            metadata: None,
        };
        st.groups.commit(group, ("t".into(), 0), off);
    }

    fn join<'a>(id: &'a str, client: &'a str) -> JoinRequest<'a> {
        JoinRequest {
            member_id: id,
            protocol_type: "consumer",
            protocols: vec![
                ("range".into(), Bytes::from_static(b"r")),
                ("roundrobin".into(), Bytes::from_static(b"rr")),
            ],
            session_timeout_ms: 10_000,
            rebalance_timeout_ms: 10_000,
            client_id: client,
            instance_id: None,
        }
    }

    /// A classic group "g" whose members "a" and "b" joined the same
    /// generation (CompletingRebalance until the leader syncs).
    fn two_members(st: &mut ClusterState) {
        let mut g = ClassicGroup::new();
        for (id, client) in [("a", "ca"), ("b", "cb")] {
            let JoinOutcome::MemberIdRequired(id) =
                g.join(&join("", client), 0, false, || id.into())
            else {
                panic!("a member id is required first")
            };
            g.join(&join(&id, client), 0, false, String::new);
            g.members.get_mut(&id).unwrap().client_host = format!("/10.0.0.{}", client.len());
        }
        let _ = g.join(&join("a", "ca"), 0, false, String::new);
        assert_eq!(g.state, GroupState::CompletingRebalance);
        st.classic.insert("g".into(), g);
    }

    /// Invariant: a group with offsets only is an empty classic group
    /// without a protocol type; a classic group carries its protocol type
    /// and state; filters match states and types in any case.
    #[test]
    fn listing_names_states_types_and_protocol_types() {
        let mut st = test_cluster(1);
        commit(&mut st, "offsets-only");
        two_members(&mut st);
        let all = st.list_groups(1, &[], &[]);
        assert_eq!(
            all,
            [
                Listed {
                    group_id: "g".into(),
                    protocol_type: "consumer".into(),
                    state: "CompletingRebalance",
                    group_type: "classic",
                },
                Listed {
                    group_id: "offsets-only".into(),
                    protocol_type: String::new(),
                    state: "Empty",
                    group_type: "classic",
                },
            ]
        );
        let empty = st.list_groups(1, &[" empty ".into()], &["CLASSIC".into()]);
        assert_eq!(empty.len(), 1);
        assert_eq!(empty[0].group_id, "offsets-only");
        assert!(st.list_groups(1, &[], &["consumer".into()]).is_empty());
        assert!(st.list_groups(1, &[], &["share".into()]).is_empty());
    }

    /// Invariant: each broker lists only the groups it coordinates; every
    /// group is listed by exactly one broker.
    #[test]
    fn each_group_is_listed_by_its_coordinator_only() {
        let mut st = test_cluster(3);
        let ids: Vec<String> = (0..12).map(|i| format!("group-{i}")).collect();
        for id in &ids {
            commit(&mut st, id);
        }
        let mut seen: Vec<String> = Vec::new();
        for broker in 1..=3 {
            for l in st.list_groups(broker, &[], &[]) {
                assert_eq!(
                    st.coordinator(CoordinatorKind::Group, &l.group_id),
                    Some(broker)
                );
                seen.push(l.group_id);
            }
        }
        seen.sort();
        let mut want = ids.clone();
        want.sort();
        assert_eq!(seen, want);
    }

    /// Invariant: members are described in every state, with the protocol
    /// and their metadata only once the group is Stable, their assignment
    /// as last synced on Kafka 4.4 (none on 3.9); an unknown group and a
    /// consumer group are not classic groups.
    #[test]
    fn describing_shows_metadata_only_when_stable() {
        let mut st = test_cluster(1);
        two_members(&mut st);
        let d = st.describe_classic_group("g").unwrap();
        assert_eq!((d.state, d.protocol.as_str()), ("CompletingRebalance", ""));
        assert_eq!(d.members.len(), 2);
        assert!(d.members.iter().all(|m| m.metadata.is_empty()));
        let g = st.classic.get_mut("g").unwrap();
        let (leader, generation) = (g.leader.clone().unwrap(), g.generation);
        let assign = [
            ("a".to_string(), Bytes::from_static(b"pa")),
            ("b".to_string(), Bytes::from_static(b"pb")),
        ];
        g.sync(&leader, None, generation, &assign, 1).unwrap();
        let d = st.describe_classic_group("g").unwrap();
        assert_eq!(
            (d.state, d.protocol.as_str(), d.protocol_type.as_str()),
            ("Stable", "range", "consumer")
        );
        let b = &d.members[1];
        assert_eq!(
            (
                b.member_id.as_str(),
                b.client_id.as_str(),
                b.client_host.as_str()
            ),
            ("b", "cb", "/10.0.0.2")
        );
        assert_eq!(
            (&b.metadata[..], &b.assignment[..]),
            (&b"r"[..], &b"pb"[..])
        );
        // A third member starts a rebalance: no protocol nor metadata, the
        // assignments as last synced (Kafka 4.4), or none (Kafka 3.9).
        let g = st.classic.get_mut("g").unwrap();
        let JoinOutcome::MemberIdRequired(c) = g.join(&join("", "cc"), 2, false, || "c".into())
        else {
            panic!("a member id is required first")
        };
        g.join(&join(&c, "cc"), 2, false, String::new);
        assert_eq!(g.state, GroupState::PreparingRebalance);
        let d = st.describe_classic_group("g").unwrap();
        assert_eq!((d.state, d.protocol.as_str()), ("PreparingRebalance", ""));
        let shown: Vec<(&str, &[u8], &[u8])> = d
            .members
            .iter()
            .map(|m| (m.member_id.as_str(), &m.metadata[..], &m.assignment[..]))
            .collect();
        assert_eq!(
            shown,
            [
                ("a", &b""[..], &b"pa"[..]),
                ("b", &b""[..], &b"pb"[..]),
                ("c", &b""[..], &b""[..])
            ]
        );
        st.config.release = KafkaRelease::V3_9;
        let d = st.describe_classic_group("g").unwrap();
        assert!(d.members.iter().all(|m| m.assignment.is_empty()));
        st.config.release = KafkaRelease::V4_4;
        assert_eq!(
            st.describe_classic_group("nope"),
            Err("Group nope not found.".into())
        );
        st.consumer
            .insert("kip848".into(), ConsumerGroup::default());
        assert_eq!(
            st.describe_classic_group("kip848"),
            Err("Group kip848 is not a classic group.".into())
        );
    }

    /// Invariant: a group with members cannot be deleted; an unknown one is
    /// GROUP_ID_NOT_FOUND; an empty one goes with all its offsets and is
    /// then unknown.
    #[test]
    fn deleting_refuses_members_and_removes_empty_groups_with_their_offsets() {
        let mut st = test_cluster(1);
        two_members(&mut st);
        commit(&mut st, "g");
        assert_eq!(st.delete_group("g"), Err(ErrorCode::NonEmptyGroup));
        assert_eq!(st.delete_group("nope"), Err(ErrorCode::GroupIdNotFound));
        let g = st.classic.get_mut("g").unwrap();
        g.leave("a", 1).unwrap();
        g.leave("b", 1).unwrap();
        assert_eq!(g.state, GroupState::Empty);
        assert_eq!(st.delete_group("g"), Ok(()));
        assert!(st.groups.committed("g").is_empty());
        assert!(st.group_ref("g").is_none());
        assert_eq!(st.delete_group("g"), Err(ErrorCode::GroupIdNotFound));
        commit(&mut st, "standalone");
        assert_eq!(st.delete_group("standalone"), Ok(()));
        assert!(st.list_groups(1, &[], &[]).is_empty());
    }
}
