//! Consumer groups: list them on every broker (ListGroups), describe one
//! through its coordinator (ConsumerGroupDescribe for KIP-848 groups,
//! DescribeGroups for classic ones), read all their committed offsets
//! (OffsetFetch for all topics), delete them (DeleteGroups).

use crate::broker_error;
use kafka_client::requests::offset_fetch::offset_fetch_on;
use kafka_client::{Cluster, CoordinatorType, RequestError, TopicPartition, find_coordinator};
use kafka_proto::messages::{
    ConsumerGroupDescribeRequest, ConsumerProtocolAssignment, DeleteGroupsRequest,
    DescribeGroupsRequest, ListGroupsRequest,
};
use kafka_proto::{ApiKey, ErrorCode};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The state of a group as its coordinator reports it (ListGroups v4+,
/// DescribeGroups, ConsumerGroupDescribe; Java's `GroupState`). Classic
/// groups use `Empty`, `PreparingRebalance`, `CompletingRebalance`,
/// `Stable`, `Dead`; KIP-848 consumer groups also `Assigning` and
/// `Reconciling`; other group types `NotReady`. A name this client does not
/// know (from a newer broker) is kept in [`GroupState::Unknown`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum GroupState {
    /// No members (offsets may remain).
    Empty,
    /// Members are stable on their assignment.
    Stable,
    /// Classic: a rebalance started; members must rejoin.
    PreparingRebalance,
    /// Classic: members joined; waiting for the leader's assignment.
    CompletingRebalance,
    /// The group is gone (or never existed).
    Dead,
    /// KIP-848: the coordinator is computing a new target assignment.
    Assigning,
    /// KIP-848: members are moving to the target assignment.
    Reconciling,
    /// Share and streams groups: not ready (e.g. topics missing).
    NotReady,
    /// A state name this client does not know, kept as sent (empty when the
    /// broker sent none).
    Unknown(String),
}

impl GroupState {
    /// The state named `name` (the wire string, any case as Java's
    /// `GroupState.parse`).
    pub fn parse(name: &str) -> Self {
        const KNOWN: [GroupState; 8] = [
            GroupState::Empty,
            GroupState::Stable,
            GroupState::PreparingRebalance,
            GroupState::CompletingRebalance,
            GroupState::Dead,
            GroupState::Assigning,
            GroupState::Reconciling,
            GroupState::NotReady,
        ];
        KNOWN
            .into_iter()
            .find(|s| s.as_str().eq_ignore_ascii_case(name))
            .unwrap_or_else(|| GroupState::Unknown(name.to_string()))
    }

    /// The wire name.
    pub fn as_str(&self) -> &str {
        match self {
            GroupState::Empty => "Empty",
            GroupState::Stable => "Stable",
            GroupState::PreparingRebalance => "PreparingRebalance",
            GroupState::CompletingRebalance => "CompletingRebalance",
            GroupState::Dead => "Dead",
            GroupState::Assigning => "Assigning",
            GroupState::Reconciling => "Reconciling",
            GroupState::NotReady => "NotReady",
            GroupState::Unknown(s) => s,
        }
    }
}

impl Default for GroupState {
    /// No state reported: `Unknown("")`.
    fn default() -> Self {
        GroupState::Unknown(String::new())
    }
}

impl std::fmt::Display for GroupState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One group as ListGroups reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupListing {
    /// The group id.
    pub group_id: String,
    /// The protocol type (`consumer` for consumer groups, empty for groups
    /// that only commit offsets).
    pub protocol_type: String,
    /// The state (ListGroups v4+; `None` before).
    pub state: Option<GroupState>,
    /// `consumer` (KIP-848) or `classic` (ListGroups v5+; empty before).
    pub group_type: String,
    /// The coordinator's node id.
    pub coordinator: i32,
}

/// Every group of the cluster: ListGroups on each broker (each lists the
/// groups it coordinates), sorted by id.
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), kafka_client::RequestError> {
/// for g in kafka_admin::list_groups(cluster).await? {
///     let state = g.state.as_ref().map_or("-", |s| s.as_str());
///     println!("{} {} {state}", g.group_id, g.group_type);
/// }
/// # Ok(()) }
/// ```
pub async fn list_groups(cluster: &Cluster) -> Result<Vec<GroupListing>, RequestError> {
    cluster.refresh().await?;
    let nodes: Vec<i32> = cluster.metadata().brokers().keys().copied().collect();
    let mut out = Vec::new();
    for node in nodes {
        let conn = cluster.connection(node).await?;
        let version = conn.versions().version_for::<ListGroupsRequest>()?;
        let resp = conn.send(&ListGroupsRequest::default(), version).await?;
        let error = ErrorCode::from(resp.error_code);
        if !error.is_ok() {
            return Err(broker_error(ApiKey::ListGroups, version, error, None));
        }
        out.extend(resp.groups.into_iter().map(|g| GroupListing {
            group_id: g.group_id,
            protocol_type: g.protocol_type,
            state: (!g.group_state.is_empty()).then(|| GroupState::parse(&g.group_state)),
            group_type: g.group_type,
            coordinator: node,
        }));
    }
    out.sort_by(|a, b| a.group_id.cmp(&b.group_id));
    Ok(out)
}

/// One member of a described group.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupMember {
    /// The member id.
    pub member_id: String,
    /// `group.instance.id`, for a static member.
    pub instance_id: Option<String>,
    /// `client.id`.
    pub client_id: String,
    /// The client's host as the broker saw it.
    pub client_host: String,
    /// The member epoch (KIP-848 groups; -1 for classic ones).
    pub member_epoch: i32,
    /// The partitions the member owns.
    pub assignment: Vec<TopicPartition>,
}

/// A described group.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupDescription {
    /// The group id.
    pub group_id: String,
    /// `consumer` (KIP-848) or `classic`.
    pub group_type: String,
    /// The state.
    pub state: GroupState,
    /// The group epoch (KIP-848) or -1.
    pub epoch: i32,
    /// The assignor (the server's under KIP-848, the chosen protocol of a
    /// classic group).
    pub assignor: String,
    /// The coordinator's node id.
    pub coordinator: i32,
    /// The members.
    pub members: Vec<GroupMember>,
}

/// Each of `partitions` of `topic`, as a [`TopicPartition`].
fn partitions_of(topic: String, partitions: Vec<i32>) -> impl Iterator<Item = TopicPartition> {
    partitions
        .into_iter()
        .map(move |p| TopicPartition::new(topic.clone(), p))
}

/// The group of an answer about one group (`api` at `version`); an
/// UNKNOWN_SERVER_ERROR when the broker left it out.
fn the_one_group<G>(groups: Vec<G>, api: ApiKey, version: i16) -> Result<G, RequestError> {
    groups.into_iter().next().ok_or_else(|| {
        broker_error(
            api,
            version,
            ErrorCode::UnknownServerError,
            Some("no group in the answer".into()),
        )
    })
}

/// Describes `group_id` through its coordinator: ConsumerGroupDescribe,
/// then DescribeGroups when the group is a classic one (or the broker has no
/// KIP-848). A group that does not exist is described as `Dead` with no
/// members, as Kafka's tools do.
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), kafka_client::RequestError> {
/// let d = kafka_admin::describe_group(cluster, "billing").await?;
/// for m in &d.members {
///     println!("{} owns {:?}", m.member_id, m.assignment);
/// }
/// # Ok(()) }
/// ```
pub async fn describe_group(
    cluster: &Cluster,
    group_id: &str,
) -> Result<GroupDescription, RequestError> {
    let coordinator = find_coordinator(cluster, CoordinatorType::Group, group_id).await?;
    let conn = coordinator.connection;
    if let Ok(version) = conn
        .versions()
        .version_for::<ConsumerGroupDescribeRequest>()
    {
        let req = ConsumerGroupDescribeRequest {
            group_ids: vec![group_id.to_string()],
            ..Default::default()
        };
        let resp = conn.send(&req, version).await?;
        let g = the_one_group(resp.groups, ApiKey::ConsumerGroupDescribe, version)?;
        match ErrorCode::from(g.error_code) {
            ErrorCode::None => {
                return Ok(GroupDescription {
                    group_id: g.group_id,
                    group_type: "consumer".into(),
                    state: GroupState::parse(&g.group_state),
                    epoch: g.group_epoch,
                    assignor: g.assignor_name,
                    coordinator: coordinator.node_id,
                    members: g
                        .members
                        .into_iter()
                        .map(|m| GroupMember {
                            member_id: m.member_id,
                            instance_id: m.instance_id,
                            client_id: m.client_id,
                            client_host: m.client_host,
                            member_epoch: m.member_epoch,
                            assignment: m
                                .assignment
                                .topic_partitions
                                .into_iter()
                                .flat_map(|t| partitions_of(t.topic_name, t.partitions))
                                .collect(),
                        })
                        .collect(),
                });
            }
            // A classic group (or none): DescribeGroups tells.
            ErrorCode::GroupIdNotFound => {}
            e => {
                return Err(broker_error(
                    ApiKey::ConsumerGroupDescribe,
                    version,
                    e,
                    g.error_message,
                ));
            }
        }
    }
    let version = conn.versions().version_for::<DescribeGroupsRequest>()?;
    let req = DescribeGroupsRequest {
        groups: vec![group_id.to_string()],
        ..Default::default()
    };
    let resp = conn.send(&req, version).await?;
    let g = the_one_group(resp.groups, ApiKey::DescribeGroups, version)?;
    let error = ErrorCode::from(g.error_code);
    if error == ErrorCode::GroupIdNotFound {
        // DescribeGroups v6+ says so; older versions answer Dead.
        return Ok(GroupDescription {
            group_id: g.group_id,
            group_type: String::new(),
            state: GroupState::Dead,
            epoch: -1,
            assignor: String::new(),
            coordinator: coordinator.node_id,
            members: Vec::new(),
        });
    }
    if !error.is_ok() {
        return Err(broker_error(
            ApiKey::DescribeGroups,
            version,
            error,
            g.error_message,
        ));
    }
    let members = g
        .members
        .into_iter()
        .map(|m| {
            // The assignment bytes of a consumer group are the consumer
            // protocol's; others (or a broken leader's) read as none.
            let assignment = if g.protocol_type == "consumer" {
                ConsumerProtocolAssignment::decode_prefixed(&m.member_assignment)
                    .map(|(_, a)| {
                        a.assigned_partitions
                            .into_iter()
                            .flat_map(|t| partitions_of(t.topic, t.partitions))
                            .collect()
                    })
                    .unwrap_or_default()
            } else {
                Vec::new()
            };
            GroupMember {
                member_id: m.member_id,
                instance_id: m.group_instance_id,
                client_id: m.client_id,
                client_host: m.client_host,
                member_epoch: -1,
                assignment,
            }
        })
        .collect();
    Ok(GroupDescription {
        group_id: g.group_id,
        group_type: "classic".into(),
        state: GroupState::parse(&g.group_state),
        epoch: -1,
        assignor: g.protocol_data,
        coordinator: coordinator.node_id,
        members,
    })
}

/// Deletes empty groups (DeleteGroups through each group's coordinator);
/// returns each group's outcome: `Ok` or the broker's error
/// (NON_EMPTY_GROUP while members remain, GROUP_ID_NOT_FOUND).
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), kafka_client::RequestError> {
/// for (group, outcome) in kafka_admin::delete_groups(cluster, &["old-app"]).await? {
///     println!("{group}: {outcome:?}");
/// }
/// # Ok(()) }
/// ```
pub async fn delete_groups(
    cluster: &Cluster,
    group_ids: &[&str],
) -> Result<Vec<(String, Result<(), ErrorCode>)>, RequestError> {
    let mut out = Vec::new();
    for group in group_ids {
        let coordinator = find_coordinator(cluster, CoordinatorType::Group, group).await?;
        let conn = coordinator.connection;
        let version = conn.versions().version_for::<DeleteGroupsRequest>()?;
        let req = DeleteGroupsRequest {
            groups_names: vec![group.to_string()],
            ..Default::default()
        };
        let resp = conn.send(&req, version).await?;
        for r in resp.results {
            let e = ErrorCode::from(r.error_code);
            out.push((r.group_id, if e.is_ok() { Ok(()) } else { Err(e) }));
        }
    }
    Ok(out)
}

/// Every committed offset of `group_id`: OffsetFetch through the group's
/// coordinator with the topics left null, which asks for all the topics the
/// group has offsets for (v8+ `groups[].topics`, v2-7 `topics`). Partitions
/// without an offset are left out. Under v10 the answer names topics by id;
/// ids no longer in the cluster's metadata (deleted topics) are left out.
/// Retriable errors (the coordinator loading or moving) are retried for up
/// to 30 s; a group without offsets (or unknown) gives an empty map.
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), kafka_client::RequestError> {
/// for (tp, offset) in kafka_admin::committed_offsets(cluster, "billing").await? {
///     println!("{}-{} resumes at {offset}", tp.topic, tp.partition);
/// }
/// # Ok(()) }
/// ```
pub async fn committed_offsets(
    cluster: &Cluster,
    group_id: &str,
) -> Result<BTreeMap<TopicPartition, i64>, RequestError> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match committed_offsets_once(cluster, group_id).await {
            Err(e) if e.is_retriable() && Instant::now() < deadline => {
                tracing::debug!(error = %e, group = group_id, "OffsetFetch retry");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            other => return other,
        }
    }
}

async fn committed_offsets_once(
    cluster: &Cluster,
    group_id: &str,
) -> Result<BTreeMap<TopicPartition, i64>, RequestError> {
    let coordinator = find_coordinator(cluster, CoordinatorType::Group, group_id).await?;
    let answer = offset_fetch_on(&coordinator.connection, cluster, group_id, None, false).await?;
    let mut out = BTreeMap::new();
    for p in answer.partitions {
        if !p.error.is_ok() {
            return Err(broker_error(
                ApiKey::OffsetFetch,
                answer.version,
                p.error,
                Some(format!("group {group_id}, {}", p.partition)),
            ));
        }
        if let Some(offset) = p.offset {
            out.insert(p.partition, offset);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// State names are read in any case (Java's `GroupState.parse`); an
    /// unknown name is kept as reported.
    #[test]
    fn group_states_parse_in_any_case_and_keep_unknown_names() {
        assert_eq!(GroupState::parse("Stable"), GroupState::Stable);
        assert_eq!(GroupState::parse("stable"), GroupState::Stable);
        assert_eq!(
            GroupState::parse("PreparingRebalance"),
            GroupState::PreparingRebalance
        );
        assert_eq!(
            GroupState::parse("Frozen"),
            GroupState::Unknown("Frozen".into())
        );
    }

    /// A state prints as its wire name.
    #[test]
    fn group_states_print_their_wire_names() {
        assert_eq!(GroupState::Reconciling.to_string(), "Reconciling");
        assert_eq!(
            GroupState::CompletingRebalance.as_str(),
            "CompletingRebalance"
        );
    }
}
