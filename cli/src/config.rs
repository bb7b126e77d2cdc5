//! `config describe` and `config alter`: a topic's or a broker's configs
//! (DescribeConfigs, IncrementalAlterConfigs), as Kafka's `kafka-configs.sh`.

use crate::args::parse_kv;
use crate::common::Globals;
use crate::error::{CliError, CliResult};
use crate::group::table;
use kafka_admin::{ConfigOp, ConfigResource};
use kafka_client::requests::describe_configs::describe_config_entries;

/// Which resource (exactly one).
#[derive(Debug, clap::Args)]
#[group(required = true, multiple = false)]
pub struct ResourceArgs {
    /// A topic.
    #[arg(long)]
    pub topic: Option<String>,
    /// A broker, by id.
    #[arg(long)]
    pub broker: Option<i32>,
    /// The brokers' cluster-wide default.
    #[arg(long)]
    pub broker_default: bool,
}

impl ResourceArgs {
    fn resource(&self) -> ConfigResource {
        match (&self.topic, self.broker) {
            (Some(t), _) => ConfigResource::Topic(t.clone()),
            (None, Some(b)) => ConfigResource::Broker(b),
            (None, None) => ConfigResource::BrokerDefault,
        }
    }
}

/// `config` and its subcommands.
#[derive(Debug, clap::Args)]
pub struct ConfigArgs {
    /// The config command.
    #[command(subcommand)]
    pub command: ConfigCommand,
}

/// The `config` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum ConfigCommand {
    /// Print a topic's or a broker's configs: NAME VALUE SOURCE.
    #[command(after_help = CONFIG_DESCRIBE_HELP)]
    Describe {
        #[command(flatten)]
        resource: ResourceArgs,
        /// Only the configs set on the resource itself (not defaults).
        #[arg(long)]
        overrides: bool,
    },
    /// Change configs entry by entry; the others keep their values.
    #[command(after_help = CONFIG_ALTER_HELP)]
    Alter {
        #[command(flatten)]
        resource: ResourceArgs,
        /// Set KEY=VALUE (repeatable).
        #[arg(long, value_parser = parse_kv, value_name = "KEY=VALUE")]
        set: Vec<(String, String)>,
        /// Remove the override of KEY: back to the default (repeatable).
        #[arg(long, value_name = "KEY")]
        delete: Vec<String>,
        /// Add items to the list KEY (repeatable).
        #[arg(long, value_parser = parse_kv, value_name = "KEY=ITEMS")]
        append: Vec<(String, String)>,
        /// Remove items from the list KEY (repeatable).
        #[arg(long, value_parser = parse_kv, value_name = "KEY=ITEMS")]
        subtract: Vec<(String, String)>,
        /// Only check the changes.
        #[arg(long)]
        validate_only: bool,
    },
}

pub const CONFIG_HELP: &str = "\
Examples:
  kafka-eos config describe --topic orders --overrides
  kafka-eos config alter --topic orders --set retention.ms=86400000 --delete cleanup.policy
  kafka-eos config alter --broker 1 --set log.cleaner.threads=2";

pub const CONFIG_DESCRIBE_HELP: &str = "\
One line per config: NAME VALUE SOURCE (DescribeConfigs; a sensitive value
prints as <sensitive>). SOURCE is DYNAMIC_TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG,
DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG, ...

Examples:
  kafka-eos config describe --topic orders
  kafka-eos config describe --broker 1";

pub const CONFIG_ALTER_HELP: &str = "\
IncrementalAlterConfigs: --set, --delete, --append and --subtract change
only the named configs. Prints what changed; a refused change exits 1 with
the broker's reason.

Examples:
  kafka-eos config alter --topic orders --set retention.ms=86400000
  kafka-eos config alter --topic orders --append cleanup.policy=compact
  kafka-eos config alter --broker-default --delete log.retention.ms";

fn source_name(source: i8) -> &'static str {
    match source {
        1 => "DYNAMIC_TOPIC_CONFIG",
        2 => "DYNAMIC_BROKER_CONFIG",
        3 => "DYNAMIC_DEFAULT_BROKER_CONFIG",
        4 => "STATIC_BROKER_CONFIG",
        5 => "DEFAULT_CONFIG",
        6 => "DYNAMIC_BROKER_LOGGER_CONFIG",
        7 => "CLIENT_METRICS_CONFIG",
        8 => "GROUP_CONFIG",
        _ => "UNKNOWN",
    }
}

/// Runs a `config` subcommand.
pub async fn run(g: &Globals, command: ConfigCommand) -> CliResult<()> {
    let cluster = g.cluster().await?;
    match command {
        ConfigCommand::Describe {
            resource,
            overrides,
        } => {
            let resource = resource.resource();
            let (rt, name) = resource.wire();
            let conn = match resource {
                ConfigResource::Broker(id) => {
                    cluster.refresh().await?;
                    cluster.connection(id).await?
                }
                _ => cluster.any_connection().await?,
            };
            let mut entries = describe_config_entries(&conn, rt, &name, None).await?;
            entries.sort_by(|a, b| a.name.cmp(&b.name));
            let mut rows = vec![["NAME", "VALUE", "SOURCE"].map(String::from).to_vec()];
            for e in entries {
                let set_here = matches!(e.config_source, 1..=3);
                if overrides && !set_here {
                    continue;
                }
                let value = if e.is_sensitive {
                    "<sensitive>".to_string()
                } else {
                    e.value.unwrap_or_else(|| "-".into())
                };
                rows.push(vec![e.name, value, source_name(e.config_source).into()]);
            }
            print!("{}", table(&rows));
            Ok(())
        }
        ConfigCommand::Alter {
            resource,
            set,
            delete,
            append,
            subtract,
            validate_only,
        } => {
            let resource = resource.resource();
            let mut changes: Vec<(&str, ConfigOp)> = Vec::new();
            changes.extend(
                set.iter()
                    .map(|(k, v)| (k.as_str(), ConfigOp::Set(v.clone()))),
            );
            changes.extend(delete.iter().map(|k| (k.as_str(), ConfigOp::Delete)));
            changes.extend(
                append
                    .iter()
                    .map(|(k, v)| (k.as_str(), ConfigOp::Append(v.clone()))),
            );
            changes.extend(
                subtract
                    .iter()
                    .map(|(k, v)| (k.as_str(), ConfigOp::Subtract(v.clone()))),
            );
            if changes.is_empty() {
                return Err(CliError::usage(
                    "nothing to change: give --set, --delete, --append or --subtract",
                ));
            }
            kafka_admin::alter_configs(&cluster, &resource, &changes, validate_only).await?;
            let verb = if validate_only {
                "validated"
            } else {
                "altered"
            };
            for (k, op) in &changes {
                let what = match op {
                    ConfigOp::Set(v) => format!("set {k}={v}"),
                    ConfigOp::Delete => format!("deleted {k}"),
                    ConfigOp::Append(v) => format!("appended {v} to {k}"),
                    ConfigOp::Subtract(v) => format!("subtracted {v} from {k}"),
                };
                println!("{verb} {resource}: {what}");
            }
            Ok(())
        }
    }
}
