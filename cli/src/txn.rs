//! `txn`: list/describe transactions and producers, abort a lingering
//! transaction, commit or abort a prepared transaction from its handle.

use crate::common::{Globals, partitions};
use crate::error::{CliError, CliResult, ExitCode};
use kafka_admin::{self as admin, TransactionFilters};
use kafka_client::TopicPartition;
use kafka_producer::txn::{
    PreparedTransaction, ResumeOptions, ResumeOutcome, abort_prepared, commit_prepared,
};
use std::time::{Duration, Instant};

/// Prints rows as left-aligned columns under `header`.
fn table(header: &[&str], rows: &[Vec<String>]) {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.len());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, (c, w)) in cells.iter().zip(&widths).enumerate() {
            if i + 1 == cells.len() {
                s.push_str(c);
            } else {
                s.push_str(&format!("{c:<w$}  "));
            }
        }
        println!("{}", s.trim_end());
    };
    line(header.to_vec());
    for r in rows {
        line(r.iter().map(String::as_str).collect());
    }
}

fn done(what: &str, n: usize, started: Instant) {
    eprintln!("{what} {n} in {:.2} s", started.elapsed().as_secs_f64());
}

/// Runs a `txn` subcommand.
pub async fn run(g: &Globals, cmd: TxnCommand) -> CliResult<()> {
    let started = Instant::now();
    // A bad handle is a usage error, reported before any connection.
    let prepared = match &cmd {
        TxnCommand::CommitPrepared { handle, .. } | TxnCommand::AbortPrepared { handle, .. } => {
            Some(load_handle(handle)?)
        }
        _ => None,
    };
    let cluster = g.cluster().await?;
    match cmd {
        TxnCommand::List { states, pattern } => {
            let filters = TransactionFilters {
                states,
                transactional_id_pattern: pattern,
                ..TransactionFilters::default()
            };
            let mut list = admin::list_transactions(&cluster, &filters).await?;
            list.sort_by(|a, b| a.transactional_id.cmp(&b.transactional_id));
            let rows: Vec<Vec<String>> = list
                .iter()
                .map(|t| {
                    vec![
                        t.transactional_id.clone(),
                        t.producer_id.to_string(),
                        t.state.to_string(),
                        t.coordinator.to_string(),
                    ]
                })
                .collect();
            table(
                &["TRANSACTIONAL_ID", "PRODUCER_ID", "STATE", "COORDINATOR"],
                &rows,
            );
            done("listed transactions:", rows.len(), started);
        }
        TxnCommand::Describe { ids } => {
            let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
            let descs = admin::describe_transactions(&cluster, &refs).await?;
            for d in &descs {
                let (coordinator, d) = (d.coordinator, &d.snapshot);
                let parts: Vec<String> = d.partitions.iter().map(|p| p.to_string()).collect();
                println!("transactional.id: {}", d.transactional_id);
                println!("  state:          {}", d.state);
                println!(
                    "  producer:       id {} epoch {}",
                    d.producer_id, d.producer_epoch
                );
                println!("  coordinator:    {coordinator}");
                println!("  timeout:        {} ms", d.timeout_ms);
                if d.start_time_ms >= 0 {
                    let age = now_ms().saturating_sub(d.start_time_ms);
                    println!(
                        "  started:        {} ms since the epoch ({:.1} s ago)",
                        d.start_time_ms,
                        age as f64 / 1000.0
                    );
                } else {
                    println!("  started:        -");
                }
                println!(
                    "  partitions:     {}",
                    if parts.is_empty() {
                        "-".to_string()
                    } else {
                        parts.join(", ")
                    }
                );
            }
            done("described transactions:", descs.len(), started);
        }
        TxnCommand::Producers {
            topic,
            partitions: ps,
        } => {
            let ps = partitions(&cluster, &topic, &ps).await?;
            let tps: Vec<TopicPartition> = ps
                .iter()
                .map(|p| TopicPartition::new(topic.as_str(), *p))
                .collect();
            let mut states = admin::describe_producers(&cluster, &tps).await?;
            states.sort_by_key(|s| (s.partition.partition, s.producer_id));
            let rows: Vec<Vec<String>> = states
                .iter()
                .map(|s| {
                    vec![
                        s.partition.partition.to_string(),
                        s.producer_id.to_string(),
                        s.producer_epoch.to_string(),
                        s.last_sequence.to_string(),
                        s.last_timestamp.to_string(),
                        if s.current_txn_start_offset >= 0 {
                            s.current_txn_start_offset.to_string()
                        } else {
                            "-".into()
                        },
                    ]
                })
                .collect();
            table(
                &[
                    "PARTITION",
                    "PRODUCER_ID",
                    "EPOCH",
                    "LAST_SEQUENCE",
                    "LAST_TIMESTAMP",
                    "OPEN_TXN_START_OFFSET",
                ],
                &rows,
            );
            done("active producers:", rows.len(), started);
        }
        TxnCommand::AbortLingering { id, timeout_ms } => {
            let r = admin::abort_lingering_transaction(
                &cluster,
                &id,
                Duration::from_millis(timeout_ms),
            )
            .await
            .map_err(|e| CliError::from(e).context(format!("aborting {id}")))?;
            match r.before.as_ref().map(|b| &b.snapshot) {
                Some(b) => println!(
                    "{id}: was {} (producer id {} epoch {}, {} partition(s)); now aborted, new epoch {}",
                    b.state,
                    b.producer_id,
                    b.producer_epoch,
                    b.partitions.len(),
                    r.new_producer.epoch
                ),
                None => println!(
                    "{id}: aborted any open transaction; producer id {} epoch {}",
                    r.new_producer.producer_id, r.new_producer.epoch
                ),
            }
            done("aborted lingering transactions:", 1, started);
        }
        TxnCommand::CommitPrepared { timeout_ms, .. } => {
            let p = prepared.expect("loaded above");
            resume(&cluster, &p, timeout_ms, true, started).await?;
        }
        TxnCommand::AbortPrepared { timeout_ms, .. } => {
            let p = prepared.expect("loaded above");
            resume(&cluster, &p, timeout_ms, false, started).await?;
        }
    }
    Ok(())
}

/// Reads and decodes a persisted [`PreparedTransaction`].
fn load_handle(handle: &std::path::Path) -> CliResult<PreparedTransaction> {
    let bytes = std::fs::read(handle)
        .map_err(|e| CliError::usage(format!("cannot read {}: {e}", handle.display())))?;
    PreparedTransaction::decode(&bytes).map_err(|e| {
        CliError::usage(format!(
            "{} is not a prepared-transaction handle: {e}",
            handle.display()
        ))
    })
}

async fn resume(
    cluster: &kafka_client::Cluster,
    prepared: &PreparedTransaction,
    timeout_ms: u64,
    commit: bool,
    started: Instant,
) -> CliResult<()> {
    let options = ResumeOptions {
        timeout: Duration::from_millis(timeout_ms),
        ..ResumeOptions::default()
    };
    let outcome = if commit {
        commit_prepared(cluster, prepared, &options).await?
    } else {
        abort_prepared(cluster, prepared, &options).await?
    };
    let who = format!(
        "{} (producer id {} epoch {}, {:?})",
        prepared.transactional_id,
        prepared.producer_id,
        prepared.producer_epoch,
        prepared.transaction_version
    );
    match &outcome {
        ResumeOutcome::Committed => println!("Committed: {who}"),
        ResumeOutcome::AlreadyCommitted => println!("AlreadyCommitted: {who}"),
        ResumeOutcome::Aborted => println!("Aborted: {who}"),
        ResumeOutcome::AlreadyAborted => println!("AlreadyAborted: {who}"),
        ResumeOutcome::AbortedByBroker { error, state } => {
            println!("AbortedByBroker: {who}");
            return Err(CliError::new(
                ExitCode::TransactionLost,
                format!(
                    "DATA LOST: the broker aborted transaction {who} before it could be \
                     committed ({}; coordinator state {}); its records will never be \
                     visible to read_committed readers",
                    error.name(),
                    state.as_ref().map_or("unknown", |s| s.as_str())
                ),
            ));
        }
        ResumeOutcome::Fenced { error, state } => {
            println!("Fenced: {who}");
            return Err(CliError::new(
                ExitCode::TransactionLost,
                format!(
                    "FENCED: transaction {who} was fenced by a newer producer ({}; coordinator \
                     state {}); its outcome cannot be known from this handle",
                    error.name(),
                    state.as_ref().map_or("unknown", |s| s.as_str())
                ),
            ));
        }
    }
    done(
        if commit {
            "committed prepared transactions:"
        } else {
            "aborted prepared transactions:"
        },
        1,
        started,
    );
    Ok(())
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

pub const TXN_HELP: &str = "\
Examples:
  kafka-eos txn list
  kafka-eos txn list --state Ongoing,PrepareCommit --pattern 'loader-.*'
  kafka-eos txn describe loader-1 loader-2
  kafka-eos txn producers --topic orders --partitions 0,1
  kafka-eos txn abort-lingering loader-1
  kafka-eos txn commit-prepared --handle checkpoint/txn-handle
  kafka-eos txn abort-prepared --handle checkpoint/txn-handle";

/// `txn` and its subcommands.
#[derive(Debug, clap::Args)]
pub struct TxnArgs {
    /// The transaction command.
    #[command(subcommand)]
    pub command: TxnCommand,
}

/// The `txn` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum TxnCommand {
    /// List transactions known to the coordinators.
    #[command(after_help = LIST_HELP)]
    List {
        /// Only these states (comma-separated or repeated).
        #[arg(long = "state", value_delimiter = ',', value_name = "STATE")]
        states: Vec<String>,
        /// Only transactional ids this regular expression matches entirely.
        #[arg(long, value_name = "REGEX")]
        pattern: Option<String>,
    },
    /// Describe transactions by transactional id.
    #[command(after_help = DESCRIBE_HELP)]
    Describe {
        /// Transactional ids.
        #[arg(required = true, value_name = "ID")]
        ids: Vec<String>,
    },
    /// Show the active producers of a topic's partitions.
    #[command(after_help = PRODUCERS_HELP)]
    Producers {
        /// The topic.
        #[arg(long, short = 't')]
        topic: String,
        /// Partitions (default: all).
        #[arg(long, short = 'p', value_delimiter = ',', value_name = "P[,P...]")]
        partitions: Vec<i32>,
    },
    /// Abort the open transaction of a transactional id whose producer is gone.
    #[command(after_help = ABORT_LINGERING_HELP)]
    AbortLingering {
        /// The transactional id.
        #[arg(value_name = "ID")]
        id: String,
        /// Give up after this long (ms).
        #[arg(long, default_value_t = 30_000, value_name = "MS")]
        timeout_ms: u64,
    },
    /// Commit a prepared transaction from its persisted handle.
    #[command(after_help = PREPARED_HELP)]
    CommitPrepared {
        /// File with the encoded PreparedTransaction bytes.
        #[arg(long, value_name = "FILE")]
        handle: std::path::PathBuf,
        /// Give up after this long (ms).
        #[arg(long, default_value_t = 60_000, value_name = "MS")]
        timeout_ms: u64,
    },
    /// Abort a prepared transaction from its persisted handle.
    #[command(after_help = PREPARED_HELP)]
    AbortPrepared {
        /// File with the encoded PreparedTransaction bytes.
        #[arg(long, value_name = "FILE")]
        handle: std::path::PathBuf,
        /// Give up after this long (ms).
        #[arg(long, default_value_t = 60_000, value_name = "MS")]
        timeout_ms: u64,
    },
}

pub const LIST_HELP: &str = "\
States: Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit,
CompleteAbort, Dead, PrepareEpochFence. --pattern is a regular expression the
whole transactional id must match, e.g. 'loader-.*' (brokers without
ListTransactions v2 fall back to a substring match).

Examples:
  kafka-eos txn list
  kafka-eos txn list --state Ongoing
  kafka-eos txn list --pattern 'loader-.*'";

pub const DESCRIBE_HELP: &str = "\
Examples:
  kafka-eos txn describe loader-1
  kafka-eos txn describe loader-1 loader-2";

pub const PRODUCERS_HELP: &str = "\
Shows the active producers of each partition (DescribeProducers), with the
first offset of their open transaction, if any.

Examples:
  kafka-eos txn producers --topic orders
  kafka-eos txn producers --topic orders --partitions 0,3";

pub const ABORT_LINGERING_HELP: &str = "\
Aborts the open transaction of a transactional id whose producer is gone by
bumping its epoch (InitProducerId): the id's next producer is fenced as well.
Records of the aborted transaction stay invisible to read_committed readers.

Examples:
  kafka-eos txn abort-lingering loader-1
  kafka-eos txn abort-lingering loader-1 --timeout-ms 60000";

pub const PREPARED_HELP: &str = "\
FILE holds the bytes of an encoded PreparedTransaction (as persisted by a
checkpointing writer). The outcome is printed: Committed, AlreadyCommitted,
Aborted, AlreadyAborted, AbortedByBroker (the records are lost: exit 5) or
Fenced (the outcome is unknowable: exit 5).

Examples:
  kafka-eos txn commit-prepared --handle checkpoint/txn-handle
  kafka-eos txn abort-prepared --handle checkpoint/txn-handle --timeout-ms 30000";
