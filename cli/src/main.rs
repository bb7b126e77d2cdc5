//! `kafka-eos`: exactly-once Kafka from the command line.
//!
//! - `produce`: lines or length-delimited records from stdin or a file;
//!   idempotent by default, transactional with `--transactional-id`.
//! - `consume`: read_committed (or read_uncommitted) reads from kcat-style
//!   start offsets, to the end (`-e`) or a count, as values, key/value
//!   pairs, JSON lines, length-delimited records or a kcat-style template.
//! - `topic`: create, list, describe, alter (add partitions) and delete
//!   topics.
//! - `txn`: list/describe transactions and producers, abort a lingering
//!   transaction, finish a prepared transaction from its persisted handle.
//! - `demo`: an exactly-once pipeline SIGKILLed part-way and restarted,
//!   verified with read_committed (a local Kafka without `--bootstrap`).
//! - `bridge`: the exactly-once RabbitMQ → Kafka bridge.
//! - `copy`: exactly-once topic → topic on a consumer group (KIP-447).
//! - `group`: list, describe (offsets and lag) and delete consumer groups,
//!   reset and delete their offsets.
//! - `records`: delete records below an offset.
//! - `config`: describe and alter topic and broker configs.
//! - `acl`: list, add and remove ACL bindings.
//! - `cluster`: describe the cluster.
//! - `bench`: producer benchmarks, beside Java's ProducerPerformance.
//!
//! Exit codes: 0 success, 1 failure, 2 bad usage or setting, 3 no broker
//! reachable, 4 authentication/authorization failure, 5 a prepared
//! transaction was lost or fenced, 130 interrupted.

mod acl;
mod args;
mod bench;
mod bridge;
mod cluster;
mod common;
mod config;
mod consume;
mod copy;
mod demo;
mod error;
mod formats;
mod group;
mod group_offsets;
mod local;
mod logging;
mod mock;
mod output;
mod produce;
#[cfg(test)]
mod readme_recipes;
mod records;
mod topic;
mod txn;

use clap::Parser as _;
use error::{CliError, ExitCode};
use std::time::Duration;

fn main() {
    let cli = args::Cli::parse();
    logging::init(cli.verbose);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => exit_with(CliError::failure(format!("cannot start the runtime: {e}"))),
    };
    let result = runtime.block_on(run(cli));
    // Do not wait for lingering background tasks (metadata refreshers).
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    if let Err(e) = result {
        exit_with(e);
    }
}

fn exit_with(e: CliError) -> ! {
    if e.code != ExitCode::Interrupted {
        eprintln!("kafka-eos: error: {}", e.message);
    } else {
        eprintln!("kafka-eos: {}", e.message);
    }
    std::process::exit(e.code as i32)
}

/// The globals of `demo` and `bench`: `--bootstrap` if given, else a
/// local Kafka `version` (kept running until the command ends) and its
/// start-up time.
async fn globals_or_local(
    cli: &args::Cli,
    version: &str,
) -> error::CliResult<(common::Globals, Option<local::LocalKafka>, Option<Duration>)> {
    if let Some(b) = common::Globals::bootstrap_of(cli) {
        return Ok((common::Globals::with_bootstrap(cli, b), None, None));
    }
    // Bad -X settings fail before a cluster is started.
    common::Globals::with_bootstrap(cli, "localhost:9092".into()).config(&[])?;
    let started = std::time::Instant::now();
    let kafka = local::LocalKafka::start(version).await?;
    let globals = common::Globals::with_bootstrap(cli, kafka.bootstrap());
    Ok((globals, Some(kafka), Some(started.elapsed())))
}

async fn run(cli: args::Cli) -> error::CliResult<()> {
    match &cli.command {
        args::Command::Demo(a) => {
            let (globals, _kafka, startup) = globals_or_local(&cli, &a.kafka_version).await?;
            let args::Command::Demo(a) = cli.command else {
                unreachable!()
            };
            return demo::run(&globals, a, startup).await;
        }
        args::Command::Bench(a) => {
            let (globals, kafka, _) = globals_or_local(&cli, &a.kafka_version).await?;
            let args::Command::Bench(a) = cli.command else {
                unreachable!()
            };
            return bench::run(&globals, a, kafka.as_ref()).await;
        }
        args::Command::Mock(_) => {
            let args::Command::Mock(a) = cli.command else {
                unreachable!()
            };
            return mock::run(a).await;
        }
        _ => {}
    }
    let globals = common::Globals::from_cli(&cli)?;
    match cli.command {
        args::Command::Produce(a) => produce::run(&globals, a).await,
        args::Command::Consume(a) => consume::run(&globals, a).await,
        args::Command::Topic(t) => topic::run(&globals, t.command).await,
        args::Command::Txn(t) => txn::run(&globals, t.command).await,
        args::Command::Bridge(a) => bridge::run(&globals, a).await,
        args::Command::Copy(a) => copy::run(&globals, a).await,
        args::Command::Group(a) => group::run(&globals, a.command).await,
        args::Command::Records(a) => records::run(&globals, a.command).await,
        args::Command::Config(a) => config::run(&globals, a.command).await,
        args::Command::Acl(a) => acl::run(&globals, a.command).await,
        args::Command::Cluster(a) => cluster::run(&globals, a.command).await,
        args::Command::DemoWorker(a) => demo::run_worker(&globals, a).await,
        args::Command::Demo(_) | args::Command::Bench(_) | args::Command::Mock(_) => {
            unreachable!("handled above")
        }
    }
}
