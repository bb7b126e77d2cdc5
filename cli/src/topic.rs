//! `topic`: create, list, describe, alter (add partitions) and delete topics
//! (CreateTopics, Metadata, DescribeConfigs, CreatePartitions, DeleteTopics).

use crate::args::TopicCommand;
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
