//! The plumbing the examples share, kept out of their way: command-line
//! options, topic creation, and reading back what a run wrote.
//!
//! ```no_run
//! # async fn demo() -> Result<(), kafka_eos_examples::support::BoxError> {
//! use kafka_eos_examples::support;
//! use kafka_eos::client::{Cluster, ClusterConfig};
//! let cluster = Cluster::connect(ClusterConfig::new(&support::bootstrap())).await?;
//! let partitions = support::ensure_topic(&cluster, "orders", 3).await?;
//! let start = support::end_offsets(&cluster, "orders", &partitions).await?;
//! // ... write to "orders" ...
//! let written = support::read_committed_from(&cluster, "orders", &start).await?;
//! println!("{} committed records", written.len());
//! # Ok(()) }
//! ```

use std::collections::BTreeMap;
use std::fmt::Display;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kafka_eos::admin::{self, NewTopic};
use kafka_eos::client::Cluster;
use kafka_eos::consumer::{ConsumerRecord, IsolationLevel, Offset, Reader, ReaderConfig};

/// The error type of the examples: anything, shown with its `Display`.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The broker used when neither `--bootstrap` nor `KAFKA_EOS_BOOTSTRAP` is given.
pub const DEFAULT_BOOTSTRAP: &str = "127.0.0.1:9092";

/// The environment variable read when `--bootstrap` is not given.
pub const BOOTSTRAP_ENV: &str = "KAFKA_EOS_BOOTSTRAP";

/// How long [`read_committed_from`] and [`ensure_topic`] wait for the
/// cluster to settle.
pub const SETTLE_TIMEOUT: Duration = Duration::from_secs(60);

/// The value of `--name VALUE` (or `--name=VALUE`) on the command line.
///
/// ```
/// // `cargo run --example x -- --records 10` gives Some("10").
/// assert_eq!(kafka_eos_examples::support::arg("no-such-option"), None);
/// ```
pub fn arg(name: &str) -> Option<String> {
    let flag = format!("--{name}");
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == flag {
            return args.next();
        }
        if let Some(v) = a.strip_prefix(&flag).and_then(|r| r.strip_prefix('=')) {
            return Some(v.to_string());
        }
    }
    None
}

/// `--name N` parsed as a number, `default` when absent.
///
/// ```
/// use kafka_eos_examples::support::number_arg;
/// assert_eq!(number_arg("no-such-option", 7u64).unwrap(), 7);
/// ```
pub fn number_arg<T: std::str::FromStr>(name: &str, default: T) -> Result<T, BoxError> {
    match arg(name) {
        None => Ok(default),
        Some(v) => v
            .parse()
            .map_err(|_| format!("--{name} {v}: expected a number").into()),
    }
}

/// The option that makes a run's broker-wide names its own: with
/// `--name-suffix SUFFIX`, [`name`] appends `-SUFFIX` to each topic, group,
/// transactional id and queue name, so that several runs can share one
/// broker (CI runs the examples on a cluster that tests use too).
///
/// ```
/// // `cargo run --example idempotent_producer -- --name-suffix run7` writes
/// // to the topic example-idempotent-run7.
/// assert_eq!(kafka_eos_examples::support::NAME_SUFFIX_OPTION, "name-suffix");
/// ```
pub const NAME_SUFFIX_OPTION: &str = "name-suffix";

/// A broker-wide name of this run: `base`, or `base-SUFFIX` with
/// `--name-suffix SUFFIX` ([`NAME_SUFFIX_OPTION`]).
///
/// ```
/// // Without --name-suffix on the command line, the name is the base.
/// assert_eq!(kafka_eos_examples::support::name("example-sink"), "example-sink");
/// ```
pub fn name(base: &str) -> String {
    match arg(NAME_SUFFIX_OPTION) {
        Some(suffix) if !suffix.is_empty() => format!("{base}-{suffix}"),
        _ => base.to_string(),
    }
}

/// The bootstrap servers: `--bootstrap`, else `$KAFKA_EOS_BOOTSTRAP`, else
/// [`DEFAULT_BOOTSTRAP`].
///
/// ```
/// let bootstrap = kafka_eos_examples::support::bootstrap();
/// assert!(!bootstrap.is_empty());
/// ```
pub fn bootstrap() -> String {
    arg("bootstrap")
        .or_else(|| std::env::var(BOOTSTRAP_ENV).ok().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| DEFAULT_BOOTSTRAP.to_string())
}

/// Turns an example's result into its exit status: 0, or 1 after printing
/// the error and its causes on stderr.
///
/// ```
/// use kafka_eos_examples::support::exit_code;
/// assert_eq!(exit_code(Ok(())), std::process::ExitCode::SUCCESS);
/// ```
pub fn exit_code(result: Result<(), BoxError>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            let mut source = e.source();
            while let Some(s) = source {
                eprintln!("  caused by: {s}");
                source = s.source();
            }
            ExitCode::FAILURE
        }
    }
}

/// `Ok(())` when `holds`, else an error saying what was expected.
///
/// ```
/// use kafka_eos_examples::support::check;
/// assert!(check(1 + 1 == 2, "arithmetic").is_ok());
/// assert_eq!(check(false, "3 records").unwrap_err().to_string(), "check failed: 3 records");
/// ```
pub fn check(holds: bool, what: impl Display) -> Result<(), BoxError> {
    if holds {
        Ok(())
    } else {
        Err(format!("check failed: {what}").into())
    }
}

/// A record's value as text (empty for a tombstone).
///
/// ```
/// # fn demo(record: &kafka_eos::consumer::ConsumerRecord) {
/// println!("{}", kafka_eos_examples::support::value(record));
/// # }
/// ```
pub fn value(record: &ConsumerRecord) -> String {
    String::from_utf8_lossy(record.value.as_deref().unwrap_or_default()).into_owned()
}

/// Creates `topic` with `partitions` partitions (the broker's default
/// replication factor) unless it exists, waits until every partition has a
/// leader, and returns its partitions: [`admin::ensure_topic`] within
/// [`SETTLE_TIMEOUT`].
///
/// ```no_run
/// # async fn demo(cluster: &kafka_eos::client::Cluster) -> Result<(), kafka_eos_examples::support::BoxError> {
/// let partitions = kafka_eos_examples::support::ensure_topic(cluster, "orders", 3).await?;
/// assert!(!partitions.is_empty());
/// # Ok(()) }
/// ```
pub async fn ensure_topic(
    cluster: &Cluster,
    topic: &str,
    partitions: i32,
) -> Result<Vec<i32>, BoxError> {
    let new_topic = NewTopic::new(topic).with_partitions(partitions);
    Ok(admin::ensure_topic(cluster, &new_topic, SETTLE_TIMEOUT)
        .await?
        .partitions)
}

/// The read_committed end of each partition (its last stable offset): where
/// the records a run is about to write will start.
///
/// ```no_run
/// # async fn demo(cluster: &std::sync::Arc<kafka_eos::client::Cluster>) -> Result<(), kafka_eos_examples::support::BoxError> {
/// let start = kafka_eos_examples::support::end_offsets(cluster, "orders", &[0, 1, 2]).await?;
/// println!("orders-0 ends at {}", start[&0]);
/// # Ok(()) }
/// ```
pub async fn end_offsets(
    cluster: &Arc<Cluster>,
    topic: &str,
    partitions: &[i32],
) -> Result<BTreeMap<i32, i64>, BoxError> {
    let reader = Reader::new(cluster.clone(), ReaderConfig::default());
    list_ends(&reader, topic, partitions).await
}

async fn list_ends(
    reader: &Reader,
    topic: &str,
    partitions: &[i32],
) -> Result<BTreeMap<i32, i64>, BoxError> {
    Ok(reader
        .list_offsets(topic, partitions, Offset::Latest)
        .await?
        .into_iter()
        .map(|(p, l)| (p, l.offset.unwrap_or(0)))
        .collect())
}

/// Waits until no transaction is open on the partitions of `from` (the last
/// stable offset equals the high watermark: every commit and abort marker is
/// written), then returns every committed record from `from` (partition →
/// first offset) to the end, in offset order per partition, with a
/// read_committed [`Reader`].
///
/// ```no_run
/// # async fn demo(cluster: &std::sync::Arc<kafka_eos::client::Cluster>) -> Result<(), kafka_eos_examples::support::BoxError> {
/// use kafka_eos_examples::support;
/// let start = support::end_offsets(cluster, "orders", &[0]).await?;
/// // ... commit some transactions ...
/// for r in support::read_committed_from(cluster, "orders", &start).await? {
///     println!("orders-{}@{}: {}", r.partition, r.offset, support::value(&r));
/// }
/// # Ok(()) }
/// ```
pub async fn read_committed_from(
    cluster: &Arc<Cluster>,
    topic: &str,
    from: &BTreeMap<i32, i64>,
) -> Result<Vec<ConsumerRecord>, BoxError> {
    let partitions: Vec<i32> = from.keys().copied().collect();
    let mut committed = Reader::new(cluster.clone(), ReaderConfig::default());
    let uncommitted = Reader::new(
        cluster.clone(),
        ReaderConfig {
            isolation: IsolationLevel::ReadUncommitted,
            ..ReaderConfig::default()
        },
    );
    let deadline = Instant::now() + SETTLE_TIMEOUT;
    let mut backoff = Duration::from_millis(10);
    let ends = loop {
        let stable = list_ends(&committed, topic, &partitions).await?;
        let high = list_ends(&uncommitted, topic, &partitions).await?;
        if stable == high {
            break stable;
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "{topic}: a transaction is still open after {SETTLE_TIMEOUT:?} (last stable \
                 offsets {stable:?}, high watermarks {high:?}); abort it with `kafka-eos txn \
                 abort-lingering` or wait for its transaction timeout"
            )
            .into());
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_millis(200));
    };
    committed.assign(topic, &partitions);
    for (p, offset) in from {
        committed.seek(topic, *p, Offset::At(*offset)).await?;
    }
    let mut out: Vec<ConsumerRecord> = Vec::new();
    loop {
        let behind = ends
            .iter()
            .any(|(p, end)| committed.position(topic, *p).is_some_and(|pos| pos < *end));
        if !behind {
            break;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(format!("{topic}: not read to {ends:?} within {SETTLE_TIMEOUT:?}").into());
        }
        let records = committed.poll(left.min(Duration::from_secs(1))).await?;
        out.extend(
            records
                .into_iter()
                .filter(|r| r.offset < ends[&r.partition]),
        );
    }
    out.sort_by_key(|r| (r.partition, r.offset));
    Ok(out)
}
