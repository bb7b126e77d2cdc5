//! Command-line definitions (clap derive) with the examples shown by `--help`.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

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

Settings: -X takes the Java producer property names (acks, linger.ms,
compression.type, enable.idempotence, transaction.timeout.ms, sasl.*, ...);
an unknown key or a bad value is an error naming the key. TLS:
security.protocol=SSL or SASL_SSL with ssl.truststore.location (a PEM file)
or ssl.truststore.certificates (PEM text), ssl.endpoint.identification.algorithm
(https, the default, or empty: no host name check), ssl.keystore.* for a
client certificate.

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
Where to start (-o/--offset, in every partition read):
  beginning | end   the log start, or the end (read_committed: the last
                    stable offset); earliest/latest are accepted too
  N                 offset N
  -N                N records before the end (not before the log start)
  s@UNIX_MS         the first record with a timestamp at or after UNIX_MS
                    (ListOffsets by timestamp; the end if there is none)

With --group GROUP the command is a member of that consumer group: Kafka's
group coordinator splits the partitions between the members (run several),
each resumes at the group's committed offset (-o beginning|end for a
partition without one), and the offsets of the records written are committed
after each write and before a partition is given up (not -p, -e).

When to stop: -e/--exit-at-end stops at the end offsets read at start (the
high watermark, or the last stable offset under read_committed); -c/--count N
after N records; --timeout-ms once no record arrived for that long. Without
any of them the command follows the topic until Ctrl-C.

Output formats (--format):
  value             the value bytes then \\n (a null value prints an empty line)
  key-value         KEY<SEP>VALUE\\n, SEP from --key-separator (default TAB;
                    null prints as empty)
  json              one JSON object per line: topic, partition, offset,
                    timestamp, timestamp_type, key, value, headers [{key,
                    value}]. key, value and header values are null, a string
                    when the bytes are valid UTF-8, or {\"base64\": \"...\"}
                    (standard alphabet, padded) otherwise.
  length-delimited  what `produce --format length-delimited` reads: a 4-byte
                    big-endian length then the value (-1: a null value); with
                    --key-separator SEP the framed bytes are KEY<SEP>VALUE
  a template        as kcat's -f: %k key, %K key length (-1: null), %s value,
                    %S value length (-1: null), %R value length as 4-byte
                    big-endian, %t topic, %p partition, %o offset, %T timestamp
                    (ms), %h headers (k=v,k2=v2; a null value: k), %% a %;
                    escapes \\n \\r \\t \\\\ \\xHH. No newline is added.

Examples:
  kafka-eos consume --topic orders -e
  kafka-eos consume --topic orders --count 10 -o -10
  kafka-eos consume --topic orders --isolation-level read_uncommitted --format json -e
  kafka-eos consume --topic orders -o s@1764000000000 --format '%t/%p@%o %T key=%k headers=%h: %s\\n'
  kafka-eos consume --topic orders --partitions 0,1 -o end --format key-value
  kafka-eos consume --topic orders -e --format length-delimited > orders.bin
  kafka-eos consume --topic orders --partitions 2 -o 1500 --count 100 --timeout-ms 5000";

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
    /// List, describe (offsets and lag) and delete consumer groups.
    #[command(after_help = GROUP_HELP)]
    Group(GroupArgs),
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

const MOCK_HELP: &str = "\
Starts kafka-mock: --brokers brokers on free ports of 127.0.0.1 that speak
the Kafka protocol (produce, fetch, idempotence, transactions version 1 and
2, classic consumer groups and offsets; no KIP-848 groups, no replication,
no TLS or SASL), so that a program in any language can be tested without a
JVM broker. The
first line on stdout is BOOTSTRAP=host:port,...; the cluster lives until
Ctrl-C or SIGTERM. Topics are created on first use (--partitions each) or
with --topic NAME:PARTITIONS.

Examples:
  kafka-eos mock --brokers 3
  kafka-eos mock --transaction-version 1 --topic orders:6 --topic audit:1
  kafka-eos mock --kafka 3.9 --marker-delay-ms 200";

/// `mock` options.
#[derive(Debug, Args)]
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
}

const DEMO_HELP: &str = "\
Without --bootstrap a local one-node Kafka is started (kafka-testcontainers:
Maven jars and Java; the first run downloads about 55 MB; builds without the
default cargo feature local-kafka need --bootstrap). With --bootstrap
the demo runs against that cluster and creates its topic (a unique name per
run unless --topic is given; an existing topic must be empty).

The pipeline (a numbered source -> the EXACTLY_ONCE Kafka sink under the
checkpoint driver) runs as a child process (this binary re-executed), is
SIGKILLed --kills times part-way and restarted from its last checkpoint. A
read_committed read then checks the count, the set and the per-partition
order. Exit 0 when every record is there exactly once, 1 otherwise.

Examples:
  kafka-eos demo
  kafka-eos demo --records 50000 --kills 5 --checkpoint-interval-ms 100
  kafka-eos --bootstrap localhost:9092 demo --partitions 6
  kafka-eos --bootstrap localhost:9092 -X acks=all -X linger.ms=10 demo --topic eos-demo";

const BRIDGE_HELP: &str = "\
Each message becomes one record: key = its AMQP correlation id, value = its
body. Every message needs a unique correlation id (it drives de-duplication). Messages are acknowledged to RabbitMQ only after
the Kafka transaction holding them committed, and a checkpoint (a file in
--checkpoint-dir) ties both: restarted with the same --checkpoint-dir and
--transactional-id-prefix, the bridge resumes without loss or duplicates.
Ctrl-C (or SIGTERM) stops after a final checkpoint; a second Ctrl-C exits
at once (the open transaction is aborted by the next start).

Partitions: by default as Java's producer, murmur2 of the key (the
correlation id), so every message with one correlation id lands in the
same partition, and a Java producer would pick the same one. --partitioner
(or -X partitioner.class=..., e.g.
org.apache.kafka.clients.producer.RoundRobinPartitioner) chooses another;
a class this client does not implement is refused, and so is giving both.

Examples:
  kafka-eos --bootstrap localhost:9092 bridge --amqp amqp://guest:guest@localhost:5672/%2f \\
      --queue orders --topic orders --checkpoint-dir /var/lib/orders-bridge
  kafka-eos --bootstrap localhost:9092 -X compression.type=zstd bridge --amqp amqp://localhost \\
      --queue orders --topic orders --checkpoint-dir cp --checkpoint-interval-ms 500 --prefetch 1000
  kafka-eos --bootstrap localhost:9092 bridge --amqp amqp://localhost --queue q --topic t \\
      --checkpoint-dir cp --idle-exit-ms 10000
  kafka-eos --bootstrap localhost:9092 bridge --amqp amqp://localhost --queue q --topic t \\
      --checkpoint-dir cp --partitioner round-robin";

const BENCH_HELP: &str = "\
Measures, against one broker in one run: idempotent producer throughput;
transactional throughput committing every 100 ms and every 1 s, with commit
latency p50/p99; optionally (--sink) the Kafka sink by semantic. Beside each,
when Java is available and the cluster is the local one, Java's
ProducerPerformance with the same settings, and the ratio ours/Java. Without
--bootstrap a local one-node Kafka is started. -X settings apply to our
producers and to Java's.

Examples:
  kafka-eos bench
  kafka-eos bench --records 1000000 --record-size 1024
  kafka-eos --bootstrap localhost:9092 bench --records 100000 --sink
  kafka-eos bench --records 2000 --no-java";

/// `demo` options.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Records the pipeline writes.
    #[arg(long, default_value_t = 20_000, value_name = "N")]
    pub records: u64,
    /// Partitions of the demo topic.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub partitions: i32,
    /// SIGKILLs of the pipeline process before it may finish.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub kills: u32,
    /// Checkpoint (and transaction commit) interval.
    #[arg(long, default_value_t = 200, value_name = "MS")]
    pub checkpoint_interval_ms: u64,
    /// Source rate in records per second (0: unthrottled).
    #[arg(long, default_value_t = 4_000, value_name = "N")]
    pub rate: u64,
    /// The topic (default: kafka-eos-demo-RUNID, unique per run).
    #[arg(long, short = 't')]
    pub topic: Option<String>,
    /// Checkpoint directory (default: a temporary one, removed afterwards).
    #[arg(long, value_name = "DIR")]
    pub checkpoint_dir: Option<PathBuf>,
    /// Kafka version of the local cluster (without --bootstrap).
    #[arg(long, default_value = "4.4", value_name = "VERSION")]
    pub kafka_version: String,
}

/// The hidden `demo-worker` (the pipeline process).
#[derive(Debug, Args)]
pub struct DemoWorkerArgs {
    /// Topic.
    #[arg(long)]
    pub topic: String,
    /// Checkpoint directory.
    #[arg(long)]
    pub checkpoint_dir: PathBuf,
    /// Records to write in total.
    #[arg(long)]
    pub records: u64,
    /// Checkpoint interval.
    #[arg(long)]
    pub checkpoint_interval_ms: u64,
    /// Records per second (0: unthrottled).
    #[arg(long)]
    pub rate: u64,
    /// Transactional id prefix.
    #[arg(long)]
    pub transactional_id_prefix: String,
}

const COPY_HELP: &str = "\
Each input record becomes one output record with the same key, value and
headers (the output partition is chosen as Java's producer does: murmur2 of
the key). Input offsets are committed in the output transaction (the Kafka
Streams exactly-once model, KIP-447): a read_committed reader of --to sees
every input record exactly once, whatever happens to the copiers.

Run any number of copiers with the same --group: Kafka's group coordinator
splits the input partitions between them, and any of them may be killed
(even SIGKILL) and restarted at any moment. A killed copier's open
transaction is aborted by its transaction timeout (--transaction-timeout-ms)
and its input copied again by the next owner. A live copier whose open
transaction the coordinator rolled back (a coordinator failover longer than
the transaction timeout) starts a new producer with its transactional id
and copies that input again.

Ctrl-C or SIGTERM: the open transaction is aborted, the copier leaves the
group and prints its counts as one JSON line on stderr (records consumed and
committed, transactions committed and aborted, producer restarts, the time
elapsed, the committed records per second, and the mean and longest commit
in ms). Exit status 0 after
SIGTERM, --idle-exit-ms or --exit-at-end, 130 after Ctrl-C, 5 when its producer was fenced
again and again (another process uses its transactional id), 1 on any other
failure.

-X settings go to the consumer (group.*, isolation.level, auto.offset.reset,
max.poll.interval.ms, fetch.*) or to the producer; connection and security
settings to both. The consumer reads read_committed from the earliest
offset unless -X says otherwise.

Examples:
  kafka-eos copy --from orders --to orders-copy --group copier --transactional-id-prefix copier
  kafka-eos copy --from in --to out --group g --transactional-id-prefix g --enable-random-aborts";

/// `copy` options.
#[derive(Debug, Args)]
pub struct CopyArgs {
    /// The input topic.
    #[arg(long)]
    pub from: String,
    /// The output topic (must exist).
    #[arg(long)]
    pub to: String,
    /// The consumer group (group.id) the copiers share.
    #[arg(long)]
    pub group: String,
    /// Transactional id prefix; each process adds a unique suffix.
    #[arg(long, value_name = "PREFIX")]
    pub transactional_id_prefix: String,
    /// How long a transaction stays open.
    #[arg(long, default_value_t = 100, value_name = "MS")]
    pub commit_interval_ms: u64,
    /// transaction.timeout.ms of the copier's producer: how long a killed
    /// copier's open transaction blocks its partitions.
    #[arg(long, default_value_t = 10_000, value_name = "MS")]
    pub transaction_timeout_ms: u64,
    /// Abort about one transaction in three instead of committing it (a test
    /// of the abort path).
    #[arg(long)]
    pub enable_random_aborts: bool,
    /// Seed of the random aborts (default: from the clock; printed).
    #[arg(long, value_name = "SEED")]
    pub seed: Option<u64>,
    /// Stop (aborting nothing: the last transaction is committed) once no
    /// input record arrived for this long.
    #[arg(long, value_name = "MS")]
    pub idle_exit_ms: Option<u64>,
    /// Stop once the group has committed the input up to its end as it was
    /// when the copier started (the last stable offset of every input
    /// partition): with any number of copiers on the group, each exits
    /// once the whole input is copied. The last transaction is committed.
    #[arg(long)]
    pub exit_at_end: bool,
}

/// `bridge` options.
#[derive(Debug, Args)]
pub struct BridgeArgs {
    /// The RabbitMQ URI, amqp://user:password@host:port/vhost.
    #[arg(long, env = "KAFKA_EOS_AMQP", value_name = "URI")]
    pub amqp: String,
    /// The queue to consume (declared durable if missing).
    #[arg(long, short = 'q')]
    pub queue: String,
    /// The Kafka topic (must exist).
    #[arg(long, short = 't')]
    pub topic: String,
    /// Directory of the checkpoints; reuse it to resume.
    #[arg(long, value_name = "DIR")]
    pub checkpoint_dir: PathBuf,
    /// Transactional id prefix: stable across restarts, unique per bridge
    /// (default rabbitmq-bridge-QUEUE).
    #[arg(long, value_name = "PREFIX")]
    pub transactional_id_prefix: Option<String>,
    /// Checkpoint (transaction commit + acknowledgement) interval.
    #[arg(long, default_value_t = 1_000, value_name = "MS")]
    pub checkpoint_interval_ms: u64,
    /// RabbitMQ prefetch (unacknowledged messages in flight, > 0).
    #[arg(long, default_value_t = 256, value_name = "N")]
    pub prefetch: u16,
    /// Delivery guarantee; the bridge is exactly-once only (the Kafka
    /// sink's EXACTLY_ONCE semantic with RabbitMQ acknowledgements on
    /// checkpoint completion).
    #[arg(long, value_enum, default_value = "exactly-once")]
    pub semantic: BridgeSemantic,
    /// Stop (after a final checkpoint) once no message arrived for this long.
    #[arg(long, value_name = "MS")]
    pub idle_exit_ms: Option<u64>,
    /// Correlation ids remembered to drop messages published twice (0: off).
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    pub dedup_window: usize,
    /// Kafka transaction timeout (default 600000).
    #[arg(long, value_name = "MS")]
    pub transaction_timeout_ms: Option<u64>,
    /// How long to keep trying to (re)connect to RabbitMQ.
    #[arg(long, default_value_t = 120_000, value_name = "MS")]
    pub reconnect_timeout_ms: u64,
    /// How records are assigned to partitions: default (murmur2 of the key,
    /// as Java's producer), round-robin, key-hash, fixed:N (every record to
    /// partition N modulo the partition count). Default: -X
    /// partitioner.class if given, else default.
    #[arg(long, value_parser = parse_partitioner, value_name = "NAME")]
    pub partitioner: Option<PartitionerArg>,
}

/// `bridge --semantic`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BridgeSemantic {
    /// Kafka transactions committed per checkpoint; RabbitMQ acknowledged after.
    ExactlyOnce,
}

/// `bench` options.
#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// Records per measurement.
    #[arg(long, default_value_t = 200_000, value_name = "N")]
    pub records: u64,
    /// Value size in bytes.
    #[arg(long, default_value_t = 100, value_name = "BYTES")]
    pub record_size: usize,
    /// Partitions of each benchmark topic.
    #[arg(long, default_value_t = 6, value_name = "N")]
    pub partitions: i32,
    /// Skip Java's ProducerPerformance.
    #[arg(long)]
    pub no_java: bool,
    /// Also measure the Kafka sink (none, at-least-once, exactly-once).
    #[arg(long)]
    pub sink: bool,
    /// Kafka version of the local cluster (without --bootstrap).
    #[arg(long, default_value = "4.4", value_name = "VERSION")]
    pub kafka_version: String,
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

/// One piece of a `consume --format` template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Bytes copied as they are (escapes resolved).
    Literal(Vec<u8>),
    /// `%k`: the key (nothing for a null key).
    Key,
    /// `%K`: the key's length, -1 for a null key.
    KeyLen,
    /// `%s`: the value (nothing for a null value).
    Value,
    /// `%S`: the value's length, -1 for a null value.
    ValueLen,
    /// `%R`: the value's length (-1 for null) as a 4-byte big-endian integer.
    ValueLenBinary,
    /// `%t`: the topic.
    Topic,
    /// `%p`: the partition.
    Partition,
    /// `%o`: the offset.
    Offset,
    /// `%T`: the timestamp (ms since the epoch).
    Timestamp,
    /// `%h`: the headers as `k=v,k2=v2` (a null value: `k` alone).
    Headers,
}

/// `consume --format`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputFormat {
    /// The value only.
    Value,
    /// Key, separator, value.
    KeyValue,
    /// JSON lines with metadata.
    Json,
    /// What `produce --format length-delimited` reads: a 4-byte big-endian
    /// length then the bytes (-1: a null value).
    LengthDelimited,
    /// A kcat-style template (`%k`, `%s`, ... and `\n`, `\t`, ...).
    Template(Vec<Piece>),
}

fn parse_format(s: &str) -> Result<OutputFormat, String> {
    match s {
        "value" => Ok(OutputFormat::Value),
        "key-value" => Ok(OutputFormat::KeyValue),
        "json" => Ok(OutputFormat::Json),
        "length-delimited" => Ok(OutputFormat::LengthDelimited),
        t if t.contains('%') || t.contains('\\') => parse_template(t).map(OutputFormat::Template),
        _ => Err(
            "expected value, key-value, json, length-delimited or a template with %k %s %t %p %o %T %h ..."
                .into(),
        ),
    }
}

/// Parses a kcat-style `-f` template: `%k %K %s %S %R %t %p %o %T %h %%`
/// and the escapes `\n \r \t \\ \xHH`.
pub fn parse_template(t: &str) -> Result<Vec<Piece>, String> {
    let mut pieces = Vec::new();
    let mut lit = Vec::new();
    let b = t.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                let Some(&c) = b.get(i + 1) else {
                    return Err("a template cannot end with %".into());
                };
                let piece = match c {
                    b'%' => {
                        lit.push(b'%');
                        None
                    }
                    b'k' => Some(Piece::Key),
                    b'K' => Some(Piece::KeyLen),
                    b's' => Some(Piece::Value),
                    b'S' => Some(Piece::ValueLen),
                    b'R' => Some(Piece::ValueLenBinary),
                    b't' => Some(Piece::Topic),
                    b'p' => Some(Piece::Partition),
                    b'o' => Some(Piece::Offset),
                    b'T' => Some(Piece::Timestamp),
                    b'h' => Some(Piece::Headers),
                    other => {
                        return Err(format!(
                            "unknown template field %{}: use %k %K %s %S %R %t %p %o %T %h or %%",
                            other as char
                        ));
                    }
                };
                if let Some(p) = piece {
                    if !lit.is_empty() {
                        pieces.push(Piece::Literal(std::mem::take(&mut lit)));
                    }
                    pieces.push(p);
                }
                i += 2;
            }
            b'\\' => {
                let Some(&c) = b.get(i + 1) else {
                    return Err("a template cannot end with \\".into());
                };
                i += 2;
                match c {
                    b'n' => lit.push(b'\n'),
                    b'r' => lit.push(b'\r'),
                    b't' => lit.push(b'\t'),
                    b'\\' => lit.push(b'\\'),
                    b'x' => {
                        let hex = t.get(i..i + 2).unwrap_or_default();
                        let v = u8::from_str_radix(hex, 16)
                            .map_err(|_| format!("\\x needs two hex digits, got {hex:?}"))?;
                        lit.push(v);
                        i += 2;
                    }
                    other => {
                        return Err(format!(
                            "unknown escape \\{}: use \\n \\r \\t \\\\ or \\xHH",
                            other as char
                        ));
                    }
                }
            }
            c => {
                lit.push(c);
                i += 1;
            }
        }
    }
    if !lit.is_empty() {
        pieces.push(Piece::Literal(lit));
    }
    Ok(pieces)
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

fn parse_offset(s: &str) -> Result<OffsetArg, String> {
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

/// `consume` options.
#[derive(Debug, Args)]
pub struct ConsumeArgs {
    /// The topic.
    #[arg(long, short = 't')]
    pub topic: String,
    /// Partitions to read (default: all).
    #[arg(long, short = 'p', value_delimiter = ',', value_name = "P[,P...]")]
    pub partitions: Vec<i32>,
    /// Isolation level (Java's isolation.level).
    #[arg(
        long,
        alias = "isolation",
        value_enum,
        default_value = "read_committed"
    )]
    pub isolation_level: Isolation,
    /// Where to start in each partition: beginning, end, N, -N (N before the
    /// end) or s@UNIX_MS (the first record at or after that time).
    #[arg(
        long,
        short = 'o',
        alias = "from",
        value_parser = parse_offset,
        default_value = "beginning",
        value_name = "WHERE",
        allow_hyphen_values = true
    )]
    pub offset: OffsetArg,
    /// Stop at the end offsets read at start (the high watermark, or the
    /// last stable offset under read_committed).
    #[arg(long, short = 'e')]
    pub exit_at_end: bool,
    /// Stop after this many records.
    #[arg(long, short = 'c', short_alias = 'n', value_name = "N")]
    pub count: Option<u64>,
    /// Output format: value, key-value, json, length-delimited or a template
    /// (%k %s %t %p %o %T %h ...; see below).
    #[arg(long, value_parser = parse_format, default_value = "value", value_name = "FORMAT")]
    pub format: OutputFormat,
    /// Separator between key and value: key-value (default TAB) and
    /// length-delimited (default: the value alone).
    #[arg(long, value_name = "SEP")]
    pub key_separator: Option<String>,
    /// Stop once no record arrived for this long (ms).
    #[arg(long, value_name = "MS")]
    pub timeout_ms: Option<u64>,
    /// Read as a member of this consumer group (KIP-848): the group
    /// coordinator assigns the partitions, reading resumes at the group's
    /// committed offsets (-o beginning|end for partitions without one), and
    /// the offsets of the records written to stdout are committed.
    #[arg(long, short = 'G', value_name = "GROUP", conflicts_with_all = ["partitions", "exit_at_end"])]
    pub group: Option<String>,
}

const TOPIC_HELP: &str = "\
Examples:
  kafka-eos topic create orders --partitions 6 --replication-factor 3 --config cleanup.policy=compact
  kafka-eos topic list --exclude-internal
  kafka-eos topic describe orders
  kafka-eos topic alter orders --partitions 12
  kafka-eos topic delete orders --if-exists";

const TOPIC_CREATE_HELP: &str = "\
Without --partitions or --replication-factor the broker's num.partitions and
default.replication.factor apply. The command returns once every partition
has a leader. An existing topic is an error (exit 1) unless --if-not-exists.

Examples:
  kafka-eos topic create orders --partitions 6
  kafka-eos topic create audit --partitions 3 --replication-factor 3 --config retention.ms=604800000
  kafka-eos topic create orders --if-not-exists
  kafka-eos topic create orders --partitions 6 --validate-only";

const TOPIC_LIST_HELP: &str = "\
Prints the topic names, one per line, sorted.

Examples:
  kafka-eos topic list
  kafka-eos topic list --exclude-internal";

const TOPIC_DESCRIBE_HELP: &str = "\
Prints, as kafka-topics.sh --describe does, a line per topic (id, partition
count, replication factor, the configs set on the topic) then a line per
partition (leader, replicas, in-sync replicas). Without names: every topic.

Examples:
  kafka-eos topic describe orders
  kafka-eos topic describe orders audit
  kafka-eos topic describe --exclude-internal";

const TOPIC_ALTER_HELP: &str = "\
Raises the partition count to --partitions (CreatePartitions; Kafka never
lowers it). Keyed records of existing keys may map to other partitions
afterwards. Returns once every new partition has a leader.

Examples:
  kafka-eos topic alter orders --partitions 12
  kafka-eos topic alter orders --partitions 12 --validate-only";

const TOPIC_DELETE_HELP: &str = "\
Deletes the topics (DeleteTopics). A topic that does not exist is an error
(exit 1) unless --if-exists. The brokers may still list a deleted topic for
a moment.

Examples:
  kafka-eos topic delete orders
  kafka-eos topic delete orders audit --if-exists";

/// `topic` and its subcommands.
#[derive(Debug, Args)]
pub struct TopicArgs {
    /// The topic command.
    #[command(subcommand)]
    pub command: TopicCommand,
}

/// The `topic` subcommands.
#[derive(Debug, Subcommand)]
pub enum TopicCommand {
    /// Create a topic.
    #[command(after_help = TOPIC_CREATE_HELP)]
    Create {
        /// The topic.
        #[arg(value_name = "TOPIC")]
        topic: String,
        /// Partition count (default: the broker's num.partitions).
        #[arg(long, value_name = "N")]
        partitions: Option<i32>,
        /// Replication factor (default: the broker's default.replication.factor).
        #[arg(long, value_name = "N")]
        replication_factor: Option<i16>,
        /// A topic config (repeatable), e.g. retention.ms=86400000.
        #[arg(long = "config", value_name = "KEY=VALUE", value_parser = parse_kv)]
        configs: Vec<(String, String)>,
        /// Succeed when the topic exists already (left as it is).
        #[arg(long)]
        if_not_exists: bool,
        /// Only check that the topic could be created.
        #[arg(long)]
        validate_only: bool,
        /// Give up after this long (ms).
        #[arg(long, default_value_t = 60_000, value_name = "MS")]
        timeout_ms: u64,
    },
    /// List topic names.
    #[command(after_help = TOPIC_LIST_HELP)]
    List {
        /// Leave out internal topics (__consumer_offsets, __transaction_state).
        #[arg(long)]
        exclude_internal: bool,
    },
    /// Describe topics: partitions, leaders, replicas, configs.
    #[command(after_help = TOPIC_DESCRIBE_HELP)]
    Describe {
        /// Topics (default: all).
        #[arg(value_name = "TOPIC")]
        topics: Vec<String>,
        /// Leave out internal topics (without names).
        #[arg(long)]
        exclude_internal: bool,
    },
    /// Add partitions to a topic.
    #[command(after_help = TOPIC_ALTER_HELP)]
    Alter {
        /// The topic.
        #[arg(value_name = "TOPIC")]
        topic: String,
        /// The new partition count (more than the current one).
        #[arg(long, value_name = "N")]
        partitions: i32,
        /// Only check that the change could be made.
        #[arg(long)]
        validate_only: bool,
        /// Give up after this long (ms).
        #[arg(long, default_value_t = 60_000, value_name = "MS")]
        timeout_ms: u64,
    },
    /// Delete topics.
    #[command(after_help = TOPIC_DELETE_HELP)]
    Delete {
        /// Topics.
        #[arg(required = true, value_name = "TOPIC")]
        topics: Vec<String>,
        /// Succeed for topics that do not exist.
        #[arg(long)]
        if_exists: bool,
        /// Give up after this long (ms).
        #[arg(long, default_value_t = 60_000, value_name = "MS")]
        timeout_ms: u64,
    },
}

const GROUP_HELP: &str = "\
Examples:
  kafka-eos group list
  kafka-eos group describe billing
  kafka-eos group describe billing --isolation-level read_committed
  kafka-eos group delete billing old-app";

const GROUP_LIST_HELP: &str = "\
One line per group of the cluster, sorted by id: GROUP TYPE STATE
PROTOCOL-TYPE. TYPE is consumer (KIP-848) or classic; PROTOCOL-TYPE is
consumer for consumer groups and empty for groups that only commit offsets.

Examples:
  kafka-eos group list";

const GROUP_DESCRIBE_HELP: &str = "\
Prints the group's state, type, assignor, epoch and coordinator, then one
line per partition that has a committed offset or is assigned to a member:
GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST
CLIENT-ID (- where there is none). LOG-END-OFFSET is the high watermark as
for kafka-consumer-groups.sh, or with --isolation-level read_committed the
last stable offset (what a read_committed member can reach).

Examples:
  kafka-eos group describe billing
  kafka-eos group describe billing --isolation-level read_committed";

const GROUP_DELETE_HELP: &str = "\
Deletes groups and their committed offsets (DeleteGroups). A group that still
has members cannot be deleted (NON_EMPTY_GROUP): stop its consumers first.

Examples:
  kafka-eos group delete billing
  kafka-eos group delete billing old-app";

/// `group` and its subcommands.
#[derive(Debug, Args)]
pub struct GroupArgs {
    /// The group command.
    #[command(subcommand)]
    pub command: GroupCommand,
}

/// The `group` subcommands.
#[derive(Debug, Subcommand)]
pub enum GroupCommand {
    /// List the consumer groups of the cluster.
    #[command(after_help = GROUP_LIST_HELP)]
    List,
    /// Describe a group: members, committed offsets and lag per partition.
    #[command(after_help = GROUP_DESCRIBE_HELP)]
    Describe {
        /// The group id.
        #[arg(value_name = "GROUP")]
        group: String,
        /// The end offset the lag is measured to: the high watermark
        /// (read_uncommitted, as Kafka's tool) or the last stable offset.
        #[arg(
            long,
            alias = "isolation",
            value_enum,
            default_value = "read_uncommitted"
        )]
        isolation_level: Isolation,
    },
    /// Delete empty groups and their committed offsets.
    #[command(after_help = GROUP_DELETE_HELP)]
    Delete {
        /// Group ids.
        #[arg(required = true, value_name = "GROUP")]
        groups: Vec<String>,
    },
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
    fn templates() {
        assert_eq!(
            parse_template("%t/%p@%o %k=%s 100%%\\n\\x41").unwrap(),
            vec![
                Piece::Topic,
                Piece::Literal(b"/".to_vec()),
                Piece::Partition,
                Piece::Literal(b"@".to_vec()),
                Piece::Offset,
                Piece::Literal(b" ".to_vec()),
                Piece::Key,
                Piece::Literal(b"=".to_vec()),
                Piece::Value,
                Piece::Literal(b" 100%\nA".to_vec()),
            ]
        );
        assert!(parse_template("%q").unwrap_err().contains("%q"));
        assert!(parse_template("50%").is_err() && parse_template("\\xZZ").is_err());
        assert_eq!(parse_format("json"), Ok(OutputFormat::Json));
        assert!(parse_format("yaml").is_err());
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
