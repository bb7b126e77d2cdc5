//! `records delete`: the records of partitions below an offset deleted
//! (DeleteRecords), as Kafka's `kafka-delete-records.sh`.

use crate::common::Globals;
use crate::error::CliResult;
use crate::group::table;
use kafka_client::TopicPartition;

/// `records` and its subcommands.
#[derive(Debug, clap::Args)]
pub struct RecordsArgs {
    /// The records command.
    #[command(subcommand)]
    pub command: RecordsCommand,
}

/// The `records` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum RecordsCommand {
    /// Delete the records of partitions below an offset: the log start
    /// offset moves there.
    #[command(after_help = RECORDS_DELETE_HELP)]
    Delete {
        /// The topic.
        #[arg(long)]
        topic: String,
        /// The partitions (repeatable, or comma-separated).
        #[arg(long, required = true, value_delimiter = ',')]
        partition: Vec<i32>,
        /// Delete below this offset; -1: up to the high watermark.
        #[arg(long, allow_negative_numbers = true)]
        offset: i64,
    },
}

pub const RECORDS_HELP: &str = "\
Examples:
  kafka-eos records delete --topic orders --partition 0 --offset 1000
  kafka-eos records delete --topic orders --partition 0,1,2 --offset -1";

pub const RECORDS_DELETE_HELP: &str = "\
Moves the log start offset of each partition to --offset (DeleteRecords on
its leader); the records below it can no longer be read. -1 deletes up to the
high watermark. Prints TOPIC PARTITION LOW-WATERMARK (the new log start).
An offset above the high watermark fails with OFFSET_OUT_OF_RANGE.

Examples:
  kafka-eos records delete --topic orders --partition 0 --offset 1000";

/// Runs a `records` subcommand.
pub async fn run(g: &Globals, command: RecordsCommand) -> CliResult<()> {
    match command {
        RecordsCommand::Delete {
            topic,
            partition,
            offset,
        } => {
            let cluster = g.cluster().await?;
            let cut: Vec<(TopicPartition, i64)> = partition
                .iter()
                .map(|p| (TopicPartition::new(topic.as_str(), *p), offset))
                .collect();
            let lows = kafka_admin::delete_records(&cluster, &cut).await?;
            let mut rows = vec![
                ["TOPIC", "PARTITION", "LOW-WATERMARK"]
                    .map(String::from)
                    .to_vec(),
            ];
            for (tp, low) in lows {
                rows.push(vec![
                    tp.topic.to_string(),
                    tp.partition.to_string(),
                    low.to_string(),
                ]);
            }
            print!("{}", table(&rows));
            Ok(())
        }
    }
}
