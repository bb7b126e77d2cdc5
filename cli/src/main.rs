//! `kafka-eos`: exactly-once Kafka from the command line.
//!
//! - `produce`: lines or length-delimited records from stdin or a file;
//!   idempotent by default, transactional with `--transactional-id`.
//! - `consume`: read_committed (or read_uncommitted) reads as values,
//!   key/value pairs or JSON lines.
//! - `txn`: list/describe transactions and producers, abort a lingering
//!   transaction, finish a prepared transaction from its persisted handle.
//!
//! Exit codes: 0 success, 1 failure, 2 bad usage or setting, 3 no broker
//! reachable, 4 authentication/authorization failure, 5 a prepared
//! transaction was lost or fenced, 130 interrupted.

mod args;
mod common;
mod consume;
mod error;
mod output;
mod produce;
mod txn;

use clap::Parser as _;
use error::{CliError, ExitCode};

fn main() {
    let cli = args::Cli::parse();
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

async fn run(cli: args::Cli) -> error::CliResult<()> {
    let globals = common::Globals::from_cli(&cli)?;
    match cli.command {
        args::Command::Produce(a) => produce::run(&globals, a).await,
        args::Command::Consume(a) => consume::run(&globals, a).await,
        args::Command::Txn(t) => txn::run(&globals, t.command).await,
    }
}
