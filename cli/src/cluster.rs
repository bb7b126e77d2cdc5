//! `cluster describe`: the cluster id, controller and brokers
//! (DescribeCluster).

use crate::common::Globals;
use crate::error::CliResult;
use crate::group::table;

/// `cluster` and its subcommands.
#[derive(Debug, clap::Args)]
pub struct ClusterArgs {
    /// The cluster command.
    #[command(subcommand)]
    pub command: ClusterCommand,
}

/// The `cluster` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum ClusterCommand {
    /// Print the cluster id, the controller and one line per broker.
    #[command(after_help = CLUSTER_HELP)]
    Describe,
}

pub const CLUSTER_HELP: &str = "\
Prints `Cluster: ID  Controller: N`, then ID HOST PORT RACK FENCED per
broker (DescribeCluster through any broker).

Examples:
  kafka-eos cluster describe";

/// The `cluster describe` text.
pub(crate) fn describe_text(d: &kafka_admin::ClusterDescription) -> String {
    let controller = d.controller.map_or("-".to_string(), |c| c.to_string());
    let mut rows = vec![
        ["ID", "HOST", "PORT", "RACK", "FENCED"]
            .map(String::from)
            .to_vec(),
    ];
    for b in &d.brokers {
        rows.push(vec![
            b.id.to_string(),
            b.host.clone(),
            b.port.to_string(),
            b.rack.clone().unwrap_or_else(|| "-".into()),
            b.fenced.to_string(),
        ]);
    }
    format!(
        "Cluster: {}\tController: {controller}\n\n{}",
        d.cluster_id,
        table(&rows)
    )
}

/// Runs a `cluster` subcommand.
pub async fn run(g: &Globals, command: ClusterCommand) -> CliResult<()> {
    match command {
        ClusterCommand::Describe => {
            let cluster = g.cluster().await?;
            let d = kafka_admin::describe_cluster(&cluster).await?;
            print!("{}", describe_text(&d));
            Ok(())
        }
    }
}
