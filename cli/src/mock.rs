//! `mock`: kafka-mock on the command line, for programs in any language.

use crate::error::{CliError, CliResult};
use kafka_mock::{KafkaRelease, MockCluster, MockConfig, TransactionVersion};
use std::io::Write;
use std::time::Duration;

/// `NAME:PARTITIONS`.
fn parse_topic(spec: &str) -> CliResult<(String, i32)> {
    let bad = || {
        CliError::usage(format!(
            "--topic {spec}: expected NAME:PARTITIONS, e.g. orders:6"
        ))
    };
    let (name, n) = spec.rsplit_once(':').ok_or_else(bad)?;
    let n: i32 = n.parse().map_err(|_| bad())?;
    if name.is_empty() || n <= 0 {
        return Err(bad());
    }
    Ok((name.to_string(), n))
}

/// Runs `mock`.
pub async fn run(a: MockArgs) -> CliResult<()> {
    if a.brokers == 0 || a.partitions <= 0 {
        return Err(CliError::usage(
            "--brokers and --partitions must be at least 1",
        ));
    }
    let topics = a
        .topics
        .iter()
        .map(|t| parse_topic(t))
        .collect::<CliResult<Vec<_>>>()?;
    let config = MockConfig {
        brokers: a.brokers,
        release: if a.kafka == "3.9" {
            KafkaRelease::V3_9
        } else {
            KafkaRelease::V4_4
        },
        transaction_version: if a.transaction_version == 1 {
            TransactionVersion::V1
        } else {
            TransactionVersion::V2
        },
        default_partitions: a.partitions,
        marker_delay: Duration::from_millis(a.marker_delay_ms),
        acl_authorizer: a.acl_authorizer,
        ..MockConfig::default()
    };
    let cluster = MockCluster::start(config)
        .await
        .map_err(|e| CliError::failure(format!("mock: {e}")))?;
    for (name, n) in &topics {
        cluster
            .create_topic(name, *n)
            .map_err(|e| CliError::usage(format!("--topic {name}:{n}: {e}")))?;
    }
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "BOOTSTRAP={}", cluster.bootstrap());
    let _ = out.flush();
    drop(out);
    crate::bridge::shutdown_signal().await;
    Ok(())
}

pub const MOCK_HELP: &str = "\
Starts kafka-mock: --brokers brokers on free ports of 127.0.0.1 that speak
the Kafka protocol (produce, fetch, idempotence, transactions version 1 and
2, classic and KIP-848 consumer groups and offsets, and the operations APIs:
records delete, offset resets and deletes, config changes, cluster
describe, ACLs with --acl-authorizer; no replication, no TLS or SASL), so
that a program in any language can be tested without a JVM broker. The
first line on stdout is BOOTSTRAP=host:port,...; the cluster lives until
Ctrl-C or SIGTERM. Topics are created on first use (--partitions each) or
with --topic NAME:PARTITIONS.

Examples:
  kafka-eos mock --brokers 3
  kafka-eos mock --transaction-version 1 --topic orders:6 --topic audit:1
  kafka-eos mock --kafka 3.9 --marker-delay-ms 200
  kafka-eos mock --acl-authorizer        # acl add/list/remove are served";

/// `mock` options.
#[derive(Debug, clap::Args)]
pub struct MockArgs {
    /// How many brokers (node ids 1..=N).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub brokers: usize,
    /// The Kafka release whose API versions the brokers advertise.
    #[arg(long, default_value = "4.4", value_parser = ["4.4", "3.9"])]
    pub kafka: String,
    /// The finalized transaction version (4.4 only; 3.9 is always 1).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(1..=2))]
    pub transaction_version: u8,
    /// How long after EndTxn the transaction markers are written
    /// (CONCURRENT_TRANSACTIONS meanwhile).
    #[arg(long, default_value_t = 0, value_name = "MS")]
    pub marker_delay_ms: u64,
    /// Partitions of a topic created on first use.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub partitions: i32,
    /// A topic to create at start, NAME:PARTITIONS (repeatable).
    #[arg(long = "topic", value_name = "NAME:PARTITIONS")]
    pub topics: Vec<String>,
    /// Run as with an authorizer: ACLs are stored and listed (every request
    /// is still allowed). Without it, as Kafka by default, the ACL
    /// commands fail with SECURITY_DISABLED.
    #[arg(long)]
    pub acl_authorizer: bool,
}
