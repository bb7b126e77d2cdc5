//! The command line (clap derive): [`Cli`] with the global options and the
//! examples of the main `--help`, the [`Command`]s, and the parsers and value
//! types several commands share. Each command's arguments and `--help`
//! examples sit beside its code: `ProduceArgs` and `PRODUCE_HELP` in
//! `produce.rs`, `TopicCommand` in `topic.rs`, and so on.

use crate::bench::{BENCH_HELP, BenchArgs};
use crate::bridge::{BRIDGE_HELP, BridgeArgs};
use crate::consume::{CONSUME_HELP, ConsumeArgs};
use crate::copy::{COPY_HELP, CopyArgs};
use crate::demo::{DEMO_HELP, DemoArgs, DemoWorkerArgs};
use crate::group::{GROUP_HELP, GroupArgs};
use crate::mock::{MOCK_HELP, MockArgs};
use crate::produce::{PRODUCE_HELP, ProduceArgs};
use crate::topic::{TOPIC_HELP, TopicArgs};
use crate::txn::{TXN_HELP, TxnArgs};
use clap::{Parser, Subcommand, ValueEnum};

const MAIN_HELP: &str = "\
Examples:
  export KAFKA_EOS_BOOTSTRAP=localhost:9092
  seq 1 1000 | kafka-eos produce --topic orders
  kafka-eos produce --topic orders --file orders.txt --key-separator ':' --transactional-id loader-1
  kafka-eos consume --topic orders --isolation-level read_committed --format json -e
  kafka-eos topic create orders --partitions 6
  kafka-eos txn list --state Ongoing
  kafka-eos group describe billing
  kafka-eos demo                      # local Kafka, kill -9, verify exactly once
  kafka-eos bench --records 100000
  kafka-eos bridge --amqp amqp://guest:guest@localhost:5672/%2f --queue orders \
            --topic orders --checkpoint-dir /var/lib/orders-bridge
  kafka-eos -X security.protocol=SASL_SSL -X ssl.truststore.location=ca.pem \\
            -X sasl.mechanism=SCRAM-SHA-512 -X sasl.username=alice -X sasl.password=secret txn list
  kafka-eos -vv consume --topic orders -e      # debug logs on stderr (or RUST_LOG)

Settings: -X takes the Java clients' property names (acks, linger.ms,
compression.type, enable.idempotence, transaction.timeout.ms, sasl.*, ...);
an unknown key or a bad value is an error naming the key. TLS:
security.protocol=SSL or SASL_SSL trusts the system's CA certificates, or
ssl.truststore.location (PEM or PKCS12, ssl.truststore.type/.password) or
ssl.truststore.certificates (PEM text); ssl.truststore.fallback=mozilla trusts
Mozilla's roots built in when the system has none. ssl.keystore.* (PEM or
PKCS12) and ssl.key.password (an encrypted PEM key) for a client certificate;
ssl.endpoint.identification.algorithm (https, the default, or empty: no host
name check).

Logs: warnings and errors on stderr; -v info, -vv debug, -vvv trace;
RUST_LOG (e.g. kafka_producer=debug), when set, wins. Secrets are never
logged.

Exit codes:
  0 success; 1 failure (delivery, broker error, bad input data);
  2 bad command line or setting; 3 no broker reachable at --bootstrap;
  4 authentication or authorization failed;
  5 a prepared transaction was aborted by the broker or fenced;
  6 a commit's outcome is unknown (see txn describe); 130 interrupted (after
  Ctrl-C no commit starts; the open transaction is aborted).";

/// The command line.
#[derive(Debug, Parser)]
#[command(
    name = "kafka-eos",
    version,
    about = "Exactly-once Kafka from the command line: produce, consume, transactions, demo, bridge, bench",
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
    /// More log output on stderr: -v info, -vv debug, -vvv trace (default:
    /// warnings and errors; RUST_LOG, when set, wins).
    #[arg(short = 'v', long = "verbose", global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
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
    /// Create, list, describe, alter and delete topics.
    #[command(after_help = TOPIC_HELP)]
    Topic(TopicArgs),
    /// Inspect and finish transactions.
    #[command(after_help = TXN_HELP)]
    Txn(TxnArgs),
    /// Run an exactly-once pipeline, SIGKILL it part-way, restart it and
    /// verify with read_committed that every record is there exactly once.
    #[command(after_help = DEMO_HELP)]
    Demo(DemoArgs),
    /// Move messages from a RabbitMQ queue to a Kafka topic exactly once.
    #[command(after_help = BRIDGE_HELP)]
    Bridge(BridgeArgs),
    /// Copy a topic into another exactly once, on a consumer group (any
    /// number of processes share the input partitions).
    #[command(after_help = COPY_HELP)]
    Copy(CopyArgs),
    /// List, describe (offsets and lag) and delete consumer groups; reset
    /// and delete their offsets.
    #[command(after_help = GROUP_HELP)]
    Group(GroupArgs),
    /// Delete the records of partitions below an offset.
    #[command(after_help = crate::records::RECORDS_HELP)]
    Records(crate::records::RecordsArgs),
    /// Describe and alter topic and broker configs.
    #[command(after_help = crate::config::CONFIG_HELP)]
    Config(crate::config::ConfigArgs),
    /// List, add and remove ACL bindings.
    #[command(after_help = crate::acl::ACL_HELP)]
    Acl(crate::acl::AclArgs),
    /// Describe the cluster: id, controller, brokers.
    #[command(after_help = crate::cluster::CLUSTER_HELP)]
    Cluster(crate::cluster::ClusterArgs),
    /// Producer benchmarks (idempotent, transactional), beside Java's
    /// ProducerPerformance when available.
    #[command(after_help = BENCH_HELP)]
    Bench(BenchArgs),
    /// Run an in-process Kafka cluster (kafka-mock) for tests: prints its
    /// bootstrap servers and serves until Ctrl-C or SIGTERM.
    #[command(after_help = MOCK_HELP)]
    Mock(MockArgs),
    /// The pipeline process of `demo` (internal: started and killed by it).
    #[command(hide = true)]
    DemoWorker(DemoWorkerArgs),
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

pub fn parse_partitioner(s: &str) -> Result<PartitionerArg, String> {
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

/// `--isolation-level`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Isolation {
    /// Only committed transactional records (and non-transactional ones).
    #[value(name = "read_committed")]
    ReadCommitted,
    /// Everything up to the high watermark, aborted records included.
    #[value(name = "read_uncommitted")]
    ReadUncommitted,
}

/// `--offset`: where `consume` starts in each partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OffsetArg {
    /// The log start.
    Beginning,
    /// The end (read_committed: the last stable offset).
    End,
    /// An offset, for every partition.
    At(i64),
    /// N records before the end of each partition (not before its start).
    FromEnd(i64),
    /// The first offset whose timestamp is at or after this (ms since the epoch).
    Timestamp(i64),
}

pub fn parse_offset(s: &str) -> Result<OffsetArg, String> {
    const EXPECTED: &str =
        "expected beginning, end, an offset N, -N (N before the end) or s@UNIX_MS";
    match s {
        "earliest" | "beginning" => Ok(OffsetArg::Beginning),
        "latest" | "end" => Ok(OffsetArg::End),
        _ => {
            if let Some(ts) = s.strip_prefix("s@") {
                return match ts.parse::<i64>() {
                    Ok(t) if t >= 0 => Ok(OffsetArg::Timestamp(t)),
                    _ => Err(format!("{EXPECTED}: bad timestamp {ts:?}")),
                };
            }
            match s.parse::<i64>() {
                Ok(n) if n >= 0 && !s.starts_with('-') => Ok(OffsetArg::At(n)),
                Ok(n) if n < 0 => Ok(OffsetArg::FromEnd(-n)),
                Ok(_) => Ok(OffsetArg::FromEnd(0)),
                Err(_) => Err(EXPECTED.into()),
            }
        }
    }
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
    fn demo_defaults_are_small() {
        let cli = Cli::try_parse_from(["kafka-eos", "demo"]).unwrap();
        let Command::Demo(d) = cli.command else {
            panic!("not demo")
        };
        assert!(cli.bootstrap.is_none() || std::env::var_os("KAFKA_EOS_BOOTSTRAP").is_some());
        assert_eq!((d.records, d.kills, d.partitions), (20_000, 3, 3));
    }

    #[test]
    fn parsers() {
        assert_eq!(parse_partitioner("fixed:3"), Ok(PartitionerArg::Fixed(3)));
        assert!(parse_partitioner("fixed:x").is_err());
        assert_eq!(parse_offset("42"), Ok(OffsetArg::At(42)));
        assert_eq!(parse_offset("-10"), Ok(OffsetArg::FromEnd(10)));
        assert_eq!(
            parse_offset("s@1764000000000"),
            Ok(OffsetArg::Timestamp(1_764_000_000_000))
        );
        assert_eq!(parse_offset("earliest"), Ok(OffsetArg::Beginning));
        assert_eq!(parse_offset("end"), Ok(OffsetArg::End));
        assert!(parse_offset("s@x").is_err() && parse_offset("soon").is_err());
        assert_eq!(parse_kv("a=b=c"), Ok(("a".into(), "b=c".into())));
        assert!(parse_kv("novalue").is_err());
    }

    #[test]
    fn consume_aliases() {
        let cli = Cli::try_parse_from([
            "kafka-eos",
            "consume",
            "-t",
            "x",
            "--isolation",
            "read_uncommitted",
            "--from",
            "-5",
            "-n",
            "3",
            "-e",
        ])
        .unwrap();
        let Command::Consume(c) = cli.command else {
            panic!("not consume")
        };
        assert_eq!(c.isolation_level, Isolation::ReadUncommitted);
        assert_eq!(
            (c.offset, c.count, c.exit_at_end),
            (OffsetArg::FromEnd(5), Some(3), true)
        );
        let cli = Cli::try_parse_from(["kafka-eos", "consume", "-t", "x", "-o", "-5", "-c", "2"])
            .unwrap();
        let Command::Consume(c) = cli.command else {
            panic!("not consume")
        };
        assert_eq!((c.offset, c.count), (OffsetArg::FromEnd(5), Some(2)));
    }
}
