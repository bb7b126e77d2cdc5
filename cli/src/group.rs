//! `group`: list, describe and delete consumer groups (ListGroups,
//! ConsumerGroupDescribe / DescribeGroups, OffsetFetch for all topics,
//! ListOffsets, DeleteGroups), as Kafka's `kafka-consumer-groups.sh`.

use crate::args::Isolation;
use crate::common::Globals;
use crate::error::{CliError, CliResult};
use kafka_admin::{self as admin, GroupDescription, GroupMember};
use kafka_client::Cluster;
use kafka_client::RequestError;
use kafka_client::TopicPartition;
use kafka_consumer::{IsolationLevel, Offset, Reader, ReaderConfig};
use kafka_producer::kafka_proto::ErrorCode;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `call` retried while it fails with a retriable error (the group
/// coordinator loading or moving, `__consumer_offsets` being created), for
/// up to 30 s.
pub(crate) async fn retrying<T, F, Fut>(mut call: F) -> Result<T, RequestError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, RequestError>>,
{
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match call().await {
            Err(e) if e.is_retriable() && Instant::now() < deadline => {
                tracing::debug!(error = %e, "group: retrying");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            other => return other,
        }
    }
}

/// `-` for an empty text.
pub(crate) fn or_dash(s: &str) -> &str {
    if s.is_empty() { "-" } else { s }
}

/// Rows as left-aligned columns two spaces apart (no trailing blanks).
pub(crate) fn table(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            if c + 1 == row.len() {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<w$}  ", w = widths[c]));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// One `describe` line: a partition with its committed offset, end offset
/// and owner (each optional).
#[derive(Debug, Clone, PartialEq, Eq)]
struct PartitionRow {
    tp: TopicPartition,
    current: Option<i64>,
    end: Option<i64>,
    owner: Option<GroupMember>,
}

/// The `describe` text: the group header, then one line per partition.
fn describe_text(d: &GroupDescription, rows: &[PartitionRow]) -> String {
    let mut s = format!(
        "Group: {}\tState: {}\tType: {}\tAssignor: {}\tEpoch: {}\tCoordinator: {}\tMembers: {}\n\n",
        d.group_id,
        or_dash(d.state.as_str()),
        or_dash(&d.group_type),
        or_dash(&d.assignor),
        d.epoch,
        d.coordinator,
        d.members.len()
    );
    let mut lines = vec![
        [
            "GROUP",
            "TOPIC",
            "PARTITION",
            "CURRENT-OFFSET",
            "LOG-END-OFFSET",
            "LAG",
            "CONSUMER-ID",
            "HOST",
            "CLIENT-ID",
        ]
        .map(String::from)
        .to_vec(),
    ];
    let opt = |o: Option<i64>| o.map_or("-".to_string(), |v| v.to_string());
    for r in rows {
        let lag = match (r.current, r.end) {
            (Some(c), Some(e)) => Some((e - c).max(0)),
            _ => None,
        };
        let (member, host, client) = match &r.owner {
            Some(m) => (
                or_dash(&m.member_id).to_string(),
                or_dash(&m.client_host).to_string(),
                or_dash(&m.client_id).to_string(),
            ),
            None => ("-".into(), "-".into(), "-".into()),
        };
        lines.push(vec![
            d.group_id.clone(),
            r.tp.topic.to_string(),
            r.tp.partition.to_string(),
            opt(r.current),
            opt(r.end),
            opt(lag),
            member,
            host,
            client,
        ]);
    }
    s.push_str(&table(&lines));
    s
}

/// The end offsets of `partitions` (high watermark or last stable offset);
/// partitions of topics that no longer exist are left out.
async fn end_offsets(
    cluster: &Arc<Cluster>,
    partitions: &BTreeSet<TopicPartition>,
    isolation: IsolationLevel,
) -> CliResult<BTreeMap<TopicPartition, i64>> {
    let mut by_topic: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
    for tp in partitions {
        by_topic.entry(&tp.topic).or_default().push(tp.partition);
    }
    let topics: Vec<&str> = by_topic.keys().copied().collect();
    if topics.is_empty() {
        return Ok(BTreeMap::new());
    }
    cluster.refresh_topics(&topics).await?;
    let reader = Reader::new(
        cluster.clone(),
        ReaderConfig {
            isolation,
            ..ReaderConfig::default()
        },
    );
    let mut out = BTreeMap::new();
    for (topic, parts) in by_topic {
        let known: Vec<i32> = match cluster.metadata().topic(topic) {
            Some(t) => parts
                .into_iter()
                .filter(|p| t.partitions.contains_key(p))
                .collect(),
            None => continue,
        };
        if known.is_empty() {
            continue;
        }
        for (p, listed) in reader.list_offsets(topic, &known, Offset::Latest).await? {
            if let Some(o) = listed.offset {
                out.insert(TopicPartition::new(topic, p), o);
            }
        }
    }
    Ok(out)
}

/// The `describe` rows: every partition with a committed offset or an
/// owner, sorted by topic and partition.
fn rows(
    d: &GroupDescription,
    committed: &BTreeMap<TopicPartition, i64>,
    ends: &BTreeMap<TopicPartition, i64>,
) -> Vec<PartitionRow> {
    let mut owners: BTreeMap<TopicPartition, &GroupMember> = BTreeMap::new();
    for m in &d.members {
        for tp in &m.assignment {
            owners.insert(tp.clone(), m);
        }
    }
    let all: BTreeSet<TopicPartition> = committed.keys().chain(owners.keys()).cloned().collect();
    all.into_iter()
        .map(|tp| PartitionRow {
            current: committed.get(&tp).copied(),
            end: ends.get(&tp).copied(),
            owner: owners.get(&tp).map(|m| (*m).clone()),
            tp,
        })
        .collect()
}

/// Runs a `group` subcommand.
pub async fn run(g: &Globals, command: GroupCommand) -> CliResult<()> {
    match command {
        GroupCommand::List => {
            let cluster = g.cluster().await?;
            let groups = admin::list_groups(&cluster).await?;
            let mut lines = vec![
                ["GROUP", "TYPE", "STATE", "PROTOCOL-TYPE"]
                    .map(String::from)
                    .to_vec(),
            ];
            for l in groups {
                lines.push(vec![
                    l.group_id.clone(),
                    or_dash(&l.group_type).to_string(),
                    or_dash(l.state.as_ref().map_or("", |s| s.as_str())).to_string(),
                    or_dash(&l.protocol_type).to_string(),
                ]);
            }
            print!("{}", table(&lines));
            Ok(())
        }
        GroupCommand::Describe {
            group,
            isolation_level,
        } => {
            let cluster = g.cluster().await?;
            let d = retrying(|| admin::describe_group(&cluster, &group)).await?;
            let committed = admin::committed_offsets(&cluster, &group).await?;
            if d.state == admin::GroupState::Dead && d.members.is_empty() && committed.is_empty() {
                return Err(CliError::failure(format!(
                    "consumer group {group:?} does not exist"
                )));
            }
            let isolation = match isolation_level {
                Isolation::ReadCommitted => IsolationLevel::ReadCommitted,
                Isolation::ReadUncommitted => IsolationLevel::ReadUncommitted,
            };
            let partitions: BTreeSet<TopicPartition> = committed
                .keys()
                .cloned()
                .chain(d.members.iter().flat_map(|m| m.assignment.iter().cloned()))
                .collect();
            let ends = end_offsets(&cluster, &partitions, isolation).await?;
            print!("{}", describe_text(&d, &rows(&d, &committed, &ends)));
            Ok(())
        }
        GroupCommand::ResetOffsets(a) => crate::group_offsets::reset_offsets(g, a).await,
        GroupCommand::DeleteOffsets(a) => crate::group_offsets::delete_offsets(g, a).await,
        GroupCommand::Delete { groups } => {
            let cluster = g.cluster().await?;
            let ids: Vec<&str> = groups.iter().map(String::as_str).collect();
            let mut first_error = None;
            for (group, outcome) in retrying(|| admin::delete_groups(&cluster, &ids)).await? {
                let message = match outcome {
                    Ok(()) => {
                        println!("deleted group {group}");
                        continue;
                    }
                    Err(ErrorCode::NonEmptyGroup) => format!(
                        "group {group} is not empty: it still has members (stop its consumers, \
                         then delete it)"
                    ),
                    Err(ErrorCode::GroupIdNotFound) => format!("group {group} does not exist"),
                    Err(e) => format!("cannot delete group {group}: {}", e.name()),
                };
                if first_error.is_none() {
                    first_error = Some(CliError::failure(message));
                } else {
                    eprintln!("kafka-eos: error: {message}");
                }
            }
            first_error.map_or(Ok(()), Err)
        }
    }
}

pub const GROUP_HELP: &str = "\
Examples:
  kafka-eos group list
  kafka-eos group describe billing
  kafka-eos group describe billing --isolation-level read_committed
  kafka-eos group delete billing old-app
  kafka-eos group reset-offsets --group billing --topic orders --to-earliest --execute
  kafka-eos group delete-offsets --group billing --topic retired:0,1";

/// `group` and its subcommands.
#[derive(Debug, clap::Args)]
pub struct GroupArgs {
    /// The group command.
    #[command(subcommand)]
    pub command: GroupCommand,
}

/// The `group` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum GroupCommand {
    /// List the consumer groups of the cluster.
    #[command(after_help = GROUP_LIST_HELP)]
    List,
    /// Describe a group: members, committed offsets and lag per partition.
    #[command(after_help = GROUP_DESCRIBE_HELP)]
    Describe {
        /// The group id.
        #[arg(value_name = "GROUP")]
        group: String,
        /// The end offset the lag is measured to: the high watermark
        /// (read_uncommitted, as Kafka's tool) or the last stable offset.
        #[arg(
            long,
            alias = "isolation",
            value_enum,
            default_value = "read_uncommitted"
        )]
        isolation_level: Isolation,
    },
    /// Reset an inactive group's committed offsets (plan by default,
    /// commit with --execute), as kafka-consumer-groups.sh --reset-offsets.
    #[command(after_help = crate::group_offsets::RESET_OFFSETS_HELP)]
    ResetOffsets(crate::group_offsets::ResetOffsetsArgs),
    /// Delete a group's committed offsets of topics or partitions.
    #[command(after_help = crate::group_offsets::DELETE_OFFSETS_HELP)]
    DeleteOffsets(crate::group_offsets::DeleteOffsetsArgs),
    /// Delete empty groups and their committed offsets.
    #[command(after_help = GROUP_DELETE_HELP)]
    Delete {
        /// Group ids.
        #[arg(required = true, value_name = "GROUP")]
        groups: Vec<String>,
    },
}

pub const GROUP_LIST_HELP: &str = "\
One line per group of the cluster, sorted by id: GROUP TYPE STATE
PROTOCOL-TYPE. TYPE is consumer (KIP-848) or classic; PROTOCOL-TYPE is
consumer for consumer groups and empty for groups that only commit offsets.

Examples:
  kafka-eos group list";

pub const GROUP_DESCRIBE_HELP: &str = "\
Prints the group's state, type, assignor, epoch and coordinator, then one
line per partition that has a committed offset or is assigned to a member:
GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST
CLIENT-ID (- where there is none). LOG-END-OFFSET is the high watermark as
for kafka-consumer-groups.sh, or with --isolation-level read_committed the
last stable offset (what a read_committed member can reach).

Examples:
  kafka-eos group describe billing
  kafka-eos group describe billing --isolation-level read_committed";

pub const GROUP_DELETE_HELP: &str = "\
Deletes groups and their committed offsets (DeleteGroups). A group that still
has members cannot be deleted (NON_EMPTY_GROUP): stop its consumers first.

Examples:
  kafka-eos group delete billing
  kafka-eos group delete billing old-app";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describe_lists_committed_and_owned_partitions_with_lag() {
        let member = GroupMember {
            member_id: "m-1".into(),
            client_id: "kafka-eos".into(),
            client_host: "/127.0.0.1".into(),
            assignment: vec![TopicPartition::new("orders", 1)],
            ..Default::default()
        };
        let d = GroupDescription {
            group_id: "billing".into(),
            group_type: "consumer".into(),
            state: admin::GroupState::Stable,
            epoch: 3,
            assignor: "uniform".into(),
            coordinator: 1,
            members: vec![member],
        };
        let committed = BTreeMap::from([(TopicPartition::new("orders", 0), 5)]);
        let ends = BTreeMap::from([
            (TopicPartition::new("orders", 0), 8),
            (TopicPartition::new("orders", 1), 2),
        ]);
        let text = describe_text(&d, &rows(&d, &committed, &ends));
        assert_eq!(
            text,
            "Group: billing\tState: Stable\tType: consumer\tAssignor: uniform\tEpoch: 3\tCoordinator: 1\tMembers: 1\n\
             \n\
             GROUP    TOPIC   PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG  CONSUMER-ID  HOST        CLIENT-ID\n\
             billing  orders  0          5               8               3    -            -           -\n\
             billing  orders  1          -               2               -    m-1          /127.0.0.1  kafka-eos\n"
        );
    }
}
