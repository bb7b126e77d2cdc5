//! Command-line definitions (clap derive) with the examples shown by `--help`.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

const MAIN_HELP: &str = "\
Examples:
  export KAFKA_EOS_BOOTSTRAP=localhost:9092
  seq 1 1000 | kafka-eos produce --topic orders
  kafka-eos produce --topic orders --file orders.txt --key-separator ':' --transactional-id loader-1
  kafka-eos consume --topic orders --isolation read_committed --format json --timeout-ms 5000
  kafka-eos txn list --state Ongoing
  kafka-eos -X security.protocol=SASL_PLAINTEXT -X sasl.mechanism=SCRAM-SHA-512 \\
            -X sasl.username=alice -X sasl.password=secret txn list

Settings: -X takes the Java producer property names (acks, linger.ms,
compression.type, enable.idempotence, transaction.timeout.ms, sasl.*, ...);
an unknown key or a bad value is an error naming the key.

Exit codes:
  0 success; 1 failure (delivery, broker error, bad input data);
  2 bad command line or setting; 3 no broker reachable at --bootstrap;
  4 authentication or authorization failed;
  5 a prepared transaction was aborted by the broker or fenced; 130 interrupted.";

const PRODUCE_HELP: &str = "\
Input formats:
  lines             one record per line (\\n or \\r\\n); with --key-separator SEP
                    each line is KEY<SEP>VALUE (split at the first SEP; a line
                    without SEP is an error).
  length-delimited  each record is a 4-byte big-endian length then that many
                    bytes (length -1: a null value); --key-separator splits the
                    bytes at the first SEP as for lines.

Delivery: idempotent by default (acks=all, no duplicates on retries); every
record is awaited and the command fails (exit 1) if any delivery fails. With
--transactional-id the records are written in transactions committed every
--commit-every records or --commit-interval-ms, whichever comes first; Ctrl-C
aborts the open transaction.

Examples:
  seq 1 1000 | kafka-eos produce --topic numbers
  kafka-eos produce --topic orders --file orders.txt --key-separator ':' --header source=import
  kafka-eos produce --topic orders --partitioner round-robin -X linger.ms=20 -X compression.type=zstd
  kafka-eos produce --topic orders --partition 3 < one-partition.txt
  kafka-eos produce --topic orders --format length-delimited --file records.bin
  kafka-eos produce --topic orders --transactional-id loader-1 --commit-every 500 --commit-interval-ms 2000";

const CONSUME_HELP: &str = "\
Output formats:
  value      the value bytes then \\n (a null value prints an empty line)
  key-value  KEY<SEP>VALUE\\n with --key-separator (default TAB; null prints as empty)
  json       one JSON object per line: topic, partition, offset, timestamp,
             timestamp_type, key, value, headers [{key, value}]. key, value and
             header values are null, a string when the bytes are valid UTF-8,
             or {\"base64\": \"...\"} (standard alphabet, padded) otherwise.

The command stops after --count records, or once no record arrived for
--timeout-ms; without either it follows the topic until Ctrl-C. --from
defaults to earliest.

Examples:
  kafka-eos consume --topic orders --count 10
  kafka-eos consume --topic orders --isolation read_committed --format json --timeout-ms 5000
  kafka-eos consume --topic orders --partitions 0,1 --from latest --format key-value
  kafka-eos consume --topic orders --partitions 2 --from 1500 --count 100";

const TXN_HELP: &str = "\
Examples:
  kafka-eos txn list
  kafka-eos txn list --state Ongoing,PrepareCommit --pattern 'loader-.*'
  kafka-eos txn describe loader-1 loader-2
  kafka-eos txn producers --topic orders --partitions 0,1
  kafka-eos txn abort-lingering loader-1
  kafka-eos txn commit-prepared --handle checkpoint/txn-handle
  kafka-eos txn abort-prepared --handle checkpoint/txn-handle";

const LIST_HELP: &str = "\
States: Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit,
CompleteAbort, Dead, PrepareEpochFence. --pattern is a regular expression the
whole transactional id must match, e.g. 'loader-.*' (brokers without
ListTransactions v2 fall back to a substring match).

Examples:
  kafka-eos txn list
  kafka-eos txn list --state Ongoing
  kafka-eos txn list --pattern 'loader-.*'";

const DESCRIBE_HELP: &str = "\
Examples:
  kafka-eos txn describe loader-1
  kafka-eos txn describe loader-1 loader-2";

const PRODUCERS_HELP: &str = "\
Shows the active producers of each partition (DescribeProducers), with the
first offset of their open transaction, if any.

Examples:
  kafka-eos txn producers --topic orders
  kafka-eos txn producers --topic orders --partitions 0,3";

const ABORT_LINGERING_HELP: &str = "\
Aborts the open transaction of a transactional id whose producer is gone by
bumping its epoch (InitProducerId): the id's next producer is fenced as well.
Records of the aborted transaction stay invisible to read_committed readers.

Examples:
  kafka-eos txn abort-lingering loader-1
  kafka-eos txn abort-lingering loader-1 --timeout-ms 60000";

const PREPARED_HELP: &str = "\
FILE holds the bytes of an encoded PreparedTransaction (as persisted by a
checkpointing writer). The outcome is printed: Committed, AlreadyCommitted,
Aborted, AlreadyAborted, AbortedByBroker (the records are lost: exit 5) or
Fenced (the outcome is unknowable: exit 5).

Examples:
  kafka-eos txn commit-prepared --handle checkpoint/txn-handle
  kafka-eos txn abort-prepared --handle checkpoint/txn-handle --timeout-ms 30000";

/// The command line.
#[derive(Debug, Parser)]
#[command(
    name = "kafka-eos",
    version,
    about = "Exactly-once Kafka from the command line: produce, consume, transactions",
    after_help = MAIN_HELP,
    propagate_version = true
)]
pub struct Cli {
    /// Bootstrap brokers, host:port[,host:port...].
    #[arg(
        long,
        global = true,
        env = "KAFKA_EOS_BOOTSTRAP",
        value_name = "HOST:PORT[,...]"
    )]
    pub bootstrap: Option<String>,
    /// A producer/client setting with its Java property name (repeatable).
    #[arg(short = 'X', global = true, value_name = "KEY=VALUE", value_parser = parse_kv)]
    pub props: Vec<(String, String)>,
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write records from stdin or a file to a topic.
    #[command(after_help = PRODUCE_HELP)]
    Produce(ProduceArgs),
    /// Read records of a topic to stdout.
    #[command(after_help = CONSUME_HELP)]
    Consume(ConsumeArgs),
    /// Inspect and finish transactions.
    #[command(after_help = TXN_HELP)]
    Txn(TxnArgs),
}

/// How `produce` reads its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InputFormat {
    /// One record per line.
    Lines,
    /// 4-byte big-endian length, then the bytes.
    LengthDelimited,
}

/// `--partitioner`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartitionerArg {
    /// murmur2 of the key; sticky partitions for null keys (Java's default).
    Default,
    /// Every record to the next partition.
    RoundRobin,
    /// murmur2 of the key for every record.
    KeyHash,
    /// Subtask index N modulo the partition count (Flink's fixed partitioner).
    Fixed(usize),
}

fn parse_partitioner(s: &str) -> Result<PartitionerArg, String> {
    match s {
        "default" => Ok(PartitionerArg::Default),
        "round-robin" => Ok(PartitionerArg::RoundRobin),
        "key-hash" => Ok(PartitionerArg::KeyHash),
        _ => match s.strip_prefix("fixed:").map(str::parse::<usize>) {
            Some(Ok(n)) => Ok(PartitionerArg::Fixed(n)),
            _ => Err("expected default, round-robin, key-hash or fixed:N".into()),
        },
    }
}

/// `key=value`.
pub fn parse_kv(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
        _ => Err(format!("expected KEY=VALUE, got {s:?}")),
    }
}

/// `produce` options.
#[derive(Debug, Args)]
pub struct ProduceArgs {
    /// The topic (must exist).
    #[arg(long, short = 't')]
    pub topic: String,
    /// Read from this file instead of stdin ("-" is stdin).
    #[arg(long, short = 'f', value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Input format.
    #[arg(long, value_enum, default_value = "lines")]
    pub format: InputFormat,
    /// Split each record into key and value at the first occurrence of SEP.
    #[arg(long, value_name = "SEP")]
    pub key_separator: Option<String>,
    /// A header added to every record (repeatable).
    #[arg(long = "header", value_name = "KEY=VALUE", value_parser = parse_kv)]
    pub headers: Vec<(String, String)>,
    /// Write every record to this partition.
    #[arg(long, short = 'p', conflicts_with = "partitioner")]
    pub partition: Option<i32>,
    /// How records are assigned to partitions: default, round-robin, key-hash, fixed:N.
    #[arg(long, value_parser = parse_partitioner, value_name = "NAME")]
    pub partitioner: Option<PartitionerArg>,
    /// Write in transactions with this transactional id.
    #[arg(long, value_name = "ID")]
    pub transactional_id: Option<String>,
    /// Commit after this many records (with --transactional-id; default 10000).
    #[arg(long, value_name = "N", requires = "transactional_id")]
    pub commit_every: Option<u64>,
    /// Commit at least this often, in ms (with --transactional-id; default 1000).
    #[arg(long, value_name = "MS", requires = "transactional_id")]
    pub commit_interval_ms: Option<u64>,
}

/// `--isolation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Isolation {
    /// Only committed transactional records (and non-transactional ones).
    #[value(name = "read_committed")]
    ReadCommitted,
    /// Everything up to the high watermark, aborted records included.
    #[value(name = "read_uncommitted")]
    ReadUncommitted,
}

/// `consume --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// The value only.
    Value,
    /// Key, separator, value.
    KeyValue,
    /// JSON lines with metadata.
    Json,
}

/// `--from`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FromArg {
    /// The log start.
    Earliest,
    /// The end (read_committed: the last stable offset).
    Latest,
    /// An offset, for every partition.
    Offset(i64),
}

fn parse_from(s: &str) -> Result<FromArg, String> {
    match s {
        "earliest" | "beginning" => Ok(FromArg::Earliest),
        "latest" | "end" => Ok(FromArg::Latest),
        _ => match s.parse::<i64>() {
            Ok(n) if n >= 0 => Ok(FromArg::Offset(n)),
            _ => Err("expected earliest, latest or a non-negative offset".into()),
        },
    }
}

/// `consume` options.
#[derive(Debug, Args)]
pub struct ConsumeArgs {
    /// The topic.
    #[arg(long, short = 't')]
    pub topic: String,
    /// Partitions to read (default: all).
    #[arg(long, short = 'p', value_delimiter = ',', value_name = "P[,P...]")]
    pub partitions: Vec<i32>,
    /// Isolation level.
    #[arg(long, value_enum, default_value = "read_committed")]
    pub isolation: Isolation,
    /// Where to start: earliest, latest or an offset.
    #[arg(long, value_parser = parse_from, default_value = "earliest", value_name = "WHERE")]
    pub from: FromArg,
    /// Stop after this many records.
    #[arg(long, short = 'n', value_name = "N")]
    pub count: Option<u64>,
    /// Output format.
    #[arg(long, value_enum, default_value = "value")]
    pub format: OutputFormat,
    /// Separator between key and value for --format key-value.
    #[arg(long, default_value = "\t", value_name = "SEP")]
    pub key_separator: String,
    /// Stop once no record arrived for this long (ms).
    #[arg(long, value_name = "MS")]
    pub timeout_ms: Option<u64>,
}

/// `txn` and its subcommands.
#[derive(Debug, Args)]
pub struct TxnArgs {
    /// The transaction command.
    #[command(subcommand)]
    pub command: TxnCommand,
}

/// The `txn` subcommands.
#[derive(Debug, Subcommand)]
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
        handle: PathBuf,
        /// Give up after this long (ms).
        #[arg(long, default_value_t = 60_000, value_name = "MS")]
        timeout_ms: u64,
    },
    /// Abort a prepared transaction from its persisted handle.
    #[command(after_help = PREPARED_HELP)]
    AbortPrepared {
        /// File with the encoded PreparedTransaction bytes.
        #[arg(long, value_name = "FILE")]
        handle: PathBuf,
        /// Give up after this long (ms).
        #[arg(long, default_value_t = 60_000, value_name = "MS")]
        timeout_ms: u64,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory as _;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn parsers() {
        assert_eq!(parse_partitioner("fixed:3"), Ok(PartitionerArg::Fixed(3)));
        assert!(parse_partitioner("fixed:x").is_err());
        assert_eq!(parse_from("42"), Ok(FromArg::Offset(42)));
        assert!(parse_from("-1").is_err());
        assert_eq!(parse_kv("a=b=c"), Ok(("a".into(), "b=c".into())));
        assert!(parse_kv("novalue").is_err());
    }
}
