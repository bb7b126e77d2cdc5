//! `topic`: create, list, describe, alter (add partitions) and delete topics
//! (CreateTopics, Metadata, DescribeConfigs, CreatePartitions, DeleteTopics).

use crate::args::parse_kv;
use crate::common::{Globals, check_topic};
use crate::error::{CliError, CliResult, ExitCode};
use base64::Engine as _;
use kafka_admin::{self as admin, CreateTopicsOptions, NewTopic, TopicOutcome};
use kafka_client::{Cluster, TopicMetadata};
use std::time::Duration;

/// Kafka's text form of a topic id: URL-safe base64 without padding.
fn topic_id(id: &[u8; 16]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(id)
}

fn ids(v: &[i32]) -> String {
    v.iter().map(i32::to_string).collect::<Vec<_>>().join(",")
}

/// The `kafka-topics.sh --describe` lines of one topic.
fn describe_lines(t: &TopicMetadata, configs: &[(String, Option<String>)]) -> String {
    let rf = t.partitions.values().next().map_or(0, |p| p.replicas.len());
    let configs: Vec<String> = configs
        .iter()
        .map(|(k, v)| format!("{k}={}", v.as_deref().unwrap_or("<sensitive>")))
        .collect();
    let mut s = format!(
        "Topic: {}\tTopicId: {}\tPartitionCount: {}\tReplicationFactor: {rf}\tConfigs: {}\n",
        t.name,
        topic_id(&t.topic_id),
        t.partitions.len(),
        configs.join(",")
    );
    for p in t.partitions.values() {
        s.push_str(&format!(
            "\tTopic: {}\tPartition: {}\tLeader: {}\tReplicas: {}\tIsr: {}\n",
            t.name,
            p.partition,
            p.leader.map_or("none".to_string(), |l| l.to_string()),
            ids(&p.replicas),
            ids(&p.isr),
        ));
    }
    s
}

/// Every topic in the metadata, by name (internal ones unless excluded).
async fn all_topics(cluster: &Cluster, exclude_internal: bool) -> CliResult<Vec<TopicMetadata>> {
    cluster.refresh_all().await?;
    Ok(cluster
        .metadata()
        .topics()
        .values()
        .filter(|t| !(exclude_internal && t.is_internal))
        .cloned()
        .collect())
}

/// Runs a `topic` subcommand.
pub async fn run(g: &Globals, command: TopicCommand) -> CliResult<()> {
    match command {
        TopicCommand::List { exclude_internal } => {
            let cluster = g.cluster().await?;
            for t in all_topics(&cluster, exclude_internal).await? {
                println!("{}", t.name);
            }
            Ok(())
        }
        TopicCommand::Describe {
            topics,
            exclude_internal,
        } => {
            for t in &topics {
                check_topic(t)?;
            }
            let cluster = g.cluster().await?;
            let found = if topics.is_empty() {
                all_topics(&cluster, exclude_internal).await?
            } else {
                cluster.refresh_topics(&topics).await?;
                let md = cluster.metadata();
                let mut found = Vec::new();
                for name in &topics {
                    match md.topic(name) {
                        Some(t) => found.push(t.clone()),
                        None => {
                            return Err(CliError::failure(format!(
                                "topic {name:?} does not exist"
                            )));
                        }
                    }
                }
                found
            };
            let mut out = String::new();
            for t in &found {
                let configs: Vec<(String, Option<String>)> =
                    admin::topic_config_overrides(&cluster, &t.name)
                        .await?
                        .into_iter()
                        .collect();
                out.push_str(&describe_lines(t, &configs));
            }
            print!("{out}");
            Ok(())
        }
        TopicCommand::Create {
            topic,
            partitions,
            replication_factor,
            configs,
            if_not_exists,
            validate_only,
            timeout_ms,
        } => {
            check_topic(&topic)?;
            let mut new = NewTopic::new(&topic);
            new.partitions = partitions;
            new.replication_factor = replication_factor;
            for (k, v) in configs {
                new = new.with_config(k, v);
            }
            let cluster = g.cluster().await?;
            let options = CreateTopicsOptions {
                timeout: Duration::from_millis(timeout_ms),
                validate_only,
                wait_for_leaders: !validate_only,
            };
            let result = admin::create_topics(&cluster, &[new], &options)
                .await?
                .pop()
                .expect("one result per topic");
            let shape = |d: &admin::TopicDetails| {
                let n = d.partitions.or(partitions);
                let rf = d.replication_factor.or(replication_factor);
                format!(
                    "{} partitions, replication factor {}",
                    n.map_or("default".into(), |n| n.to_string()),
                    rf.map_or("default".into(), |r| r.to_string())
                )
            };
            match result.outcome {
                Ok(TopicOutcome::Created(d)) => println!("created topic {topic} ({})", shape(&d)),
                Ok(TopicOutcome::Validated(d)) => {
                    println!(
                        "topic {topic} could be created ({}); not created",
                        shape(&d)
                    )
                }
                Ok(TopicOutcome::AlreadyExists { .. }) if if_not_exists => {
                    println!("topic {topic} exists already");
                }
                Ok(TopicOutcome::AlreadyExists { .. }) => {
                    return Err(CliError::failure(format!(
                        "topic {topic} exists already (--if-not-exists accepts that)"
                    )));
                }
                Err(e) => return Err(admin::AdminError::Topic(e).into()),
            }
            Ok(())
        }
        TopicCommand::Alter {
            topic,
            partitions,
            validate_only,
            timeout_ms,
        } => {
            check_topic(&topic)?;
            if partitions < 1 {
                return Err(CliError::usage("--partitions must be at least 1"));
            }
            let cluster = g.cluster().await?;
            let options = CreateTopicsOptions {
                timeout: Duration::from_millis(timeout_ms),
                validate_only,
                wait_for_leaders: !validate_only,
            };
            let result = admin::create_partitions(&cluster, &[(&topic, partitions)], &options)
                .await?
                .pop()
                .expect("one result per topic");
            match result.outcome {
                Ok(()) if validate_only => {
                    println!("topic {topic} could have {partitions} partitions; not changed")
                }
                Ok(()) => println!("topic {topic} now has {partitions} partitions"),
                Err(e) => return Err(change_error(e)),
            }
            Ok(())
        }
        TopicCommand::Delete {
            topics,
            if_exists,
            timeout_ms,
        } => {
            for t in &topics {
                check_topic(t)?;
            }
            let cluster = g.cluster().await?;
            let names: Vec<&str> = topics.iter().map(String::as_str).collect();
            let results =
                admin::delete_topics(&cluster, &names, Duration::from_millis(timeout_ms)).await?;
            let mut first_error = None;
            for r in results {
                match r.outcome {
                    Ok(()) => println!("deleted topic {}", r.name),
                    Err(e) if if_exists && e.is_unknown_topic() => {
                        println!("topic {} does not exist", r.name)
                    }
                    Err(e) => {
                        let e = change_error(e);
                        if first_error.is_none() {
                            first_error = Some(e);
                        } else {
                            eprintln!("kafka-eos: error: {}", e.message);
                        }
                    }
                }
            }
            first_error.map_or(Ok(()), Err)
        }
    }
}

/// A refused topic change: exit 4 for authorization errors, else 1.
fn change_error(e: admin::TopicChangeError) -> CliError {
    use kafka_proto::ErrorCode;
    let code = match e.error {
        ErrorCode::TopicAuthorizationFailed | ErrorCode::ClusterAuthorizationFailed => {
            ExitCode::Auth
        }
        _ => ExitCode::Failure,
    };
    CliError::new(code, e.to_string())
}

pub const TOPIC_HELP: &str = "\
Examples:
  kafka-eos topic create orders --partitions 6 --replication-factor 3 --config cleanup.policy=compact
  kafka-eos topic list --exclude-internal
  kafka-eos topic describe orders
  kafka-eos topic alter orders --partitions 12
  kafka-eos topic delete orders --if-exists";

/// `topic` and its subcommands.
#[derive(Debug, clap::Args)]
pub struct TopicArgs {
    /// The topic command.
    #[command(subcommand)]
    pub command: TopicCommand,
}

/// The `topic` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum TopicCommand {
    /// Create a topic.
    #[command(after_help = TOPIC_CREATE_HELP)]
    Create {
        /// The topic.
        #[arg(value_name = "TOPIC")]
        topic: String,
        /// Partition count (default: the broker's num.partitions).
        #[arg(long, value_name = "N")]
        partitions: Option<i32>,
        /// Replication factor (default: the broker's default.replication.factor).
        #[arg(long, value_name = "N")]
        replication_factor: Option<i16>,
        /// A topic config (repeatable), e.g. retention.ms=86400000.
        #[arg(long = "config", value_name = "KEY=VALUE", value_parser = parse_kv)]
        configs: Vec<(String, String)>,
        /// Succeed when the topic exists already (left as it is).
        #[arg(long)]
        if_not_exists: bool,
        /// Only check that the topic could be created.
        #[arg(long)]
        validate_only: bool,
        /// Give up after this long (ms).
        #[arg(long, default_value_t = 60_000, value_name = "MS")]
        timeout_ms: u64,
    },
    /// List topic names.
    #[command(after_help = TOPIC_LIST_HELP)]
    List {
        /// Leave out internal topics (__consumer_offsets, __transaction_state).
        #[arg(long)]
        exclude_internal: bool,
    },
    /// Describe topics: partitions, leaders, replicas, configs.
    #[command(after_help = TOPIC_DESCRIBE_HELP)]
    Describe {
        /// Topics (default: all).
        #[arg(value_name = "TOPIC")]
        topics: Vec<String>,
        /// Leave out internal topics (without names).
        #[arg(long)]
        exclude_internal: bool,
    },
    /// Add partitions to a topic.
    #[command(after_help = TOPIC_ALTER_HELP)]
    Alter {
        /// The topic.
        #[arg(value_name = "TOPIC")]
        topic: String,
        /// The new partition count (more than the current one).
        #[arg(long, value_name = "N")]
        partitions: i32,
        /// Only check that the change could be made.
        #[arg(long)]
        validate_only: bool,
        /// Give up after this long (ms).
        #[arg(long, default_value_t = 60_000, value_name = "MS")]
        timeout_ms: u64,
    },
    /// Delete topics.
    #[command(after_help = TOPIC_DELETE_HELP)]
    Delete {
        /// Topics.
        #[arg(required = true, value_name = "TOPIC")]
        topics: Vec<String>,
        /// Succeed for topics that do not exist.
        #[arg(long)]
        if_exists: bool,
        /// Give up after this long (ms).
        #[arg(long, default_value_t = 60_000, value_name = "MS")]
        timeout_ms: u64,
    },
}

pub const TOPIC_CREATE_HELP: &str = "\
Without --partitions or --replication-factor the broker's num.partitions and
default.replication.factor apply. The command returns once every partition
has a leader. An existing topic is an error (exit 1) unless --if-not-exists.

Examples:
  kafka-eos topic create orders --partitions 6
  kafka-eos topic create audit --partitions 3 --replication-factor 3 --config retention.ms=604800000
  kafka-eos topic create orders --if-not-exists
  kafka-eos topic create orders --partitions 6 --validate-only";

pub const TOPIC_LIST_HELP: &str = "\
Prints the topic names, one per line, sorted.

Examples:
  kafka-eos topic list
  kafka-eos topic list --exclude-internal";

pub const TOPIC_DESCRIBE_HELP: &str = "\
Prints, as kafka-topics.sh --describe does, a line per topic (id, partition
count, replication factor, the configs set on the topic) then a line per
partition (leader, replicas, in-sync replicas). Without names: every topic.

Examples:
  kafka-eos topic describe orders
  kafka-eos topic describe orders audit
  kafka-eos topic describe --exclude-internal";

pub const TOPIC_ALTER_HELP: &str = "\
Raises the partition count to --partitions (CreatePartitions; Kafka never
lowers it). Keyed records of existing keys may map to other partitions
afterwards. Returns once every new partition has a leader.

Examples:
  kafka-eos topic alter orders --partitions 12
  kafka-eos topic alter orders --partitions 12 --validate-only";

pub const TOPIC_DELETE_HELP: &str = "\
Deletes the topics (DeleteTopics). A topic that does not exist is an error
(exit 1) unless --if-exists. The brokers may still list a deleted topic for
a moment.

Examples:
  kafka-eos topic delete orders
  kafka-eos topic delete orders audit --if-exists";

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_client::PartitionMetadata;
    use std::collections::BTreeMap;

    #[test]
    fn describe_format() {
        let p = |partition, leader| PartitionMetadata {
            partition,
            leader,
            leader_epoch: 0,
            replicas: vec![1, 2],
            isr: vec![1],
            offline_replicas: vec![],
            error: kafka_proto::ErrorCode::None,
        };
        let t = TopicMetadata {
            name: "orders".into(),
            topic_id: [0xff; 16],
            is_internal: false,
            partitions: BTreeMap::from([(0, p(0, Some(1))), (1, p(1, None))]),
        };
        let text = describe_lines(&t, &[("cleanup.policy".into(), Some("compact".into()))]);
        assert_eq!(
            text,
            "Topic: orders\tTopicId: _____________________w\tPartitionCount: 2\tReplicationFactor: 2\tConfigs: cleanup.policy=compact\n\
             \tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1\n\
             \tTopic: orders\tPartition: 1\tLeader: none\tReplicas: 1,2\tIsr: 1\n"
        );
    }
}
