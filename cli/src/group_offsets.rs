//! `group reset-offsets` and `group delete-offsets`: a group's committed
//! offsets changed as Kafka's `kafka-consumer-groups.sh --reset-offsets`
//! and `--delete-offsets` do (OffsetCommit, OffsetDelete, ListOffsets).

use crate::common::Globals;
use crate::error::{CliError, CliResult};
use crate::group::table;
use kafka_admin::{self as admin, ResetScope, ResetSpec};
use kafka_client::TopicPartition;

/// `group reset-offsets`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("scope").required(true).args(["topic", "all_topics"])))]
#[command(group(clap::ArgGroup::new("spec").required(true).args(["to_earliest", "to_latest", "to_offset", "shift_by", "to_datetime", "by_duration"])))]
pub struct ResetOffsetsArgs {
    /// The group id.
    #[arg(long)]
    pub group: String,
    /// A topic, or topic:partition,partition (repeatable).
    #[arg(long, value_name = "TOPIC[:PARTITIONS]")]
    pub topic: Vec<String>,
    /// Every partition the group has a committed offset for.
    #[arg(long)]
    pub all_topics: bool,
    /// To the log start offset.
    #[arg(long)]
    pub to_earliest: bool,
    /// To the high watermark.
    #[arg(long)]
    pub to_latest: bool,
    /// To this offset (clamped to the log).
    #[arg(long, value_name = "OFFSET", allow_negative_numbers = true)]
    pub to_offset: Option<i64>,
    /// The committed offset plus N (negative: back), clamped to the log.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub shift_by: Option<i64>,
    /// To the first record at or after YYYY-MM-DDTHH:mm:SS[.sss][Z|±HH:mm]
    /// (UTC without a zone).
    #[arg(long, value_name = "DATETIME")]
    pub to_datetime: Option<String>,
    /// To the first record at or after this long ago (ISO-8601, PT30M).
    #[arg(long, value_name = "DURATION")]
    pub by_duration: Option<String>,
    /// Only print the plan (the default).
    #[arg(long, conflicts_with = "execute")]
    pub dry_run: bool,
    /// Commit the plan.
    #[arg(long)]
    pub execute: bool,
}

pub const RESET_OFFSETS_HELP: &str = "\
Plans new committed offsets for the group's partitions and prints them
(GROUP TOPIC PARTITION NEW-OFFSET); with --execute commits them. The group
must have no members (stop its consumers first), as for Kafka's tool.
Offsets are kept within [log start, high watermark]; --to-datetime and
--by-duration go to the end for partitions with no record that late.

Examples:
  kafka-eos group reset-offsets --group billing --topic orders --to-earliest
  kafka-eos group reset-offsets --group billing --topic orders:0,1 --shift-by -100 --execute
  kafka-eos group reset-offsets --group billing --all-topics --to-datetime 2024-05-01T00:00:00Z --execute
  kafka-eos group reset-offsets --group billing --all-topics --by-duration PT1H --execute";

/// `group delete-offsets`.
#[derive(Debug, clap::Args)]
pub struct DeleteOffsetsArgs {
    /// The group id.
    #[arg(long)]
    pub group: String,
    /// A topic (all its partitions), or topic:partition,partition
    /// (repeatable).
    #[arg(long, required = true, value_name = "TOPIC[:PARTITIONS]")]
    pub topic: Vec<String>,
}

pub const DELETE_OFFSETS_HELP: &str = "\
Deletes the group's committed offsets of the partitions (OffsetDelete) and
prints TOPIC PARTITION STATUS for each. The group coordinator refuses topics
the group's members are subscribed to; exit 1 if any partition failed.

Examples:
  kafka-eos group delete-offsets --group billing --topic retired
  kafka-eos group delete-offsets --group billing --topic orders:3";

fn spec(a: &ResetOffsetsArgs) -> CliResult<ResetSpec> {
    Ok(if a.to_earliest {
        ResetSpec::ToEarliest
    } else if a.to_latest {
        ResetSpec::ToLatest
    } else if let Some(o) = a.to_offset {
        ResetSpec::ToOffset(o)
    } else if let Some(n) = a.shift_by {
        ResetSpec::ShiftBy(n)
    } else if let Some(d) = &a.to_datetime {
        ResetSpec::ToDatetime(admin::parse_datetime(d).map_err(|e| CliError::usage(e.to_string()))?)
    } else if let Some(d) = &a.by_duration {
        ResetSpec::ByDuration(
            admin::parse_iso_duration(d).map_err(|e| CliError::usage(e.to_string()))?,
        )
    } else {
        return Err(CliError::usage(
            "give one of --to-earliest, --to-latest, --to-offset, --shift-by, --to-datetime, --by-duration",
        ));
    })
}

/// The plan as Kafka's tool prints it.
pub(crate) fn plan_text(plan: &admin::ResetPlan) -> String {
    let mut rows = vec![
        ["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"]
            .map(String::from)
            .to_vec(),
    ];
    for r in &plan.offsets {
        rows.push(vec![
            plan.group.clone(),
            r.partition.topic.to_string(),
            r.partition.partition.to_string(),
            r.new_offset.to_string(),
        ]);
    }
    table(&rows)
}

/// Runs `group reset-offsets`.
pub async fn reset_offsets(g: &Globals, a: ResetOffsetsArgs) -> CliResult<()> {
    let spec = spec(&a)?;
    let scope = if a.all_topics {
        ResetScope::AllTopics
    } else {
        ResetScope::parse_topics(&a.topic).map_err(|e| CliError::usage(e.to_string()))?
    };
    let cluster = g.cluster().await?;
    let plan = admin::plan_offset_reset(&cluster, &a.group, &scope, spec).await?;
    if a.execute {
        admin::execute_offset_reset(&cluster, &plan).await?;
    } else {
        eprintln!("kafka-eos: dry run: nothing committed (add --execute to commit this plan)");
    }
    print!("{}", plan_text(&plan));
    Ok(())
}

/// Runs `group delete-offsets`.
pub async fn delete_offsets(g: &Globals, a: DeleteOffsetsArgs) -> CliResult<()> {
    let ResetScope::Topics(topics) =
        ResetScope::parse_topics(&a.topic).map_err(|e| CliError::usage(e.to_string()))?
    else {
        unreachable!("parse_topics gives topics")
    };
    let cluster = g.cluster().await?;
    let names: Vec<&str> = topics.iter().map(|(t, _)| t.as_str()).collect();
    cluster.refresh_topics(&names).await?;
    let mut partitions = Vec::new();
    {
        let md = cluster.metadata();
        for (topic, parts) in &topics {
            match (parts, md.topic(topic)) {
                (Some(ps), _) => {
                    partitions.extend(ps.iter().map(|p| TopicPartition::new(topic.as_str(), *p)))
                }
                (None, Some(t)) => partitions.extend(
                    t.partitions
                        .keys()
                        .map(|p| TopicPartition::new(topic.as_str(), *p)),
                ),
                (None, None) => {
                    return Err(CliError::failure(format!(
                        "topic {topic} does not exist: check its name"
                    )));
                }
            }
        }
    }
    let outcome = admin::delete_group_offsets(&cluster, &a.group, &partitions).await?;
    let mut rows = vec![["TOPIC", "PARTITION", "STATUS"].map(String::from).to_vec()];
    let mut failed = 0;
    for (tp, r) in &outcome {
        let status = match r {
            Ok(()) => "Successful".to_string(),
            Err(e) => {
                failed += 1;
                format!("Error: {}", e.name())
            }
        };
        rows.push(vec![tp.topic.to_string(), tp.partition.to_string(), status]);
    }
    print!("{}", table(&rows));
    if failed > 0 {
        return Err(CliError::failure(format!(
            "{failed} of {} partitions kept their offsets (GROUP_SUBSCRIBED_TO_TOPIC: the group's members still consume the topic; stop them first)",
            outcome.len()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plan prints as the tool's table.
    #[test]
    fn the_plan_prints_as_a_table() {
        let plan = admin::ResetPlan {
            group: "g".into(),
            offsets: vec![admin::PlannedOffset {
                partition: TopicPartition::new("orders", 0),
                current: Some(3),
                new_offset: 0,
            }],
        };
        assert_eq!(
            plan_text(&plan),
            "GROUP  TOPIC   PARTITION  NEW-OFFSET\ng      orders  0          0\n"
        );
    }
}
