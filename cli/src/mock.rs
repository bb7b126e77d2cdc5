//! `mock`: kafka-mock on the command line, for programs in any language.

use crate::args::MockArgs;
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
