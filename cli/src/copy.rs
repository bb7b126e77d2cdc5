//! `kafka-eos copy`: exactly-once topic → topic on a consumer group, the
//! input offsets committed in the output transaction
//! ([`kafka_sink::pipeline::ConsumeTransformProduce`]).

use crate::common::{Globals, check_topic, partition_count};
use crate::error::{CliError, CliResult, ExitCode};
use crate::formats::{Decoder, Encoder, Format, SchemaSource};
use kafka_client::Cluster;
use kafka_consumer::{ConsumerRecord, GroupError, IsolationLevel, Offset, Reader, ReaderConfig};
use kafka_producer::ProducerRecord;
use kafka_producer::txn::TransactionError;
use kafka_schema_registry::{RegistryTransform, RegistryTransformError};
use kafka_sink::pipeline::{
    ConsumeTransformProduce, PipelineConfig, PipelineError, PipelineStats, RecordTransform,
};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

fn unique_suffix() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("{}-{:x}", std::process::id(), nanos % (1 << 40))
}

fn copy_record(to: &Arc<str>) -> impl FnMut(&ConsumerRecord) -> Vec<ProducerRecord> + use<> {
    let to = to.clone();
    move |r: &ConsumerRecord| {
        let mut out = ProducerRecord::new(to.to_string());
        out.key = r.key.clone();
        out.value = r.value.clone();
        out.timestamp = Some(r.timestamp);
        out.headers = r
            .headers
            .iter()
            .map(|h| (h.key.clone(), h.value.clone()))
            .collect();
        vec![out]
    }
}

/// The identity map of a re-encoding copy: the document as it was read.
type SameDocument = fn(serde_json::Value) -> Result<serde_json::Value, std::convert::Infallible>;

/// What `copy` does with each record: copies its bytes, or re-encodes its
/// value (decoded in the input format, encoded in the output format).
enum CopyTransform<F> {
    /// Key, value and headers as they are.
    Bytes(F),
    /// The value re-encoded through the registry.
    Reencode(Box<RegistryTransform<Decoder, SameDocument, Encoder, serde_json::Value>>),
}

impl<F> RecordTransform for CopyTransform<F>
where
    F: FnMut(&ConsumerRecord) -> Vec<ProducerRecord> + Send,
{
    type Error = RegistryTransformError;

    async fn transform(
        &mut self,
        record: &ConsumerRecord,
    ) -> Result<Vec<ProducerRecord>, RegistryTransformError> {
        match self {
            CopyTransform::Bytes(f) => Ok(f(record)),
            CopyTransform::Reencode(t) => t.transform(record).await,
        }
    }
}

/// The re-encoding of `--input-value-format` / `--output-value-format`,
/// its registry settings taken from `props`; `None` without them.
fn reencode(
    a: &CopyArgs,
    props: &mut kafka_client::Properties,
) -> CliResult<Option<RegistryTransform<Decoder, SameDocument, Encoder, serde_json::Value>>> {
    let (input, output) = match (a.input_value_format, a.output_value_format) {
        (None, None) => return Ok(None),
        (Some(i), Some(o)) => (i, o),
        _ => {
            return Err(CliError::usage(
                "--input-value-format and --output-value-format go together",
            ));
        }
    };
    let decoder = Decoder::new(input, props)?;
    let encoder = Encoder::new(
        output,
        &SchemaSource {
            file: a.output_schema_file.as_deref(),
            message: a.output_message.as_deref(),
            flag: "--output-schema-file",
        },
        props,
    )?;
    let same: SameDocument = Ok;
    Ok(Some(RegistryTransform::new(
        decoder,
        same,
        encoder,
        a.to.as_str(),
    )))
}

/// Why the copy loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// SIGINT: exit 130.
    Interrupt,
    /// SIGTERM: a clean stop, exit 0.
    Terminate,
    /// `--idle-exit-ms` passed without input.
    Idle,
    /// `--exit-at-end`: the group committed the input up to its end.
    End,
}

/// The input's end when the copy started (the last stable offset of each
/// partition), and a reader to watch the group's committed offsets reach it.
struct InputEnd {
    reader: Reader,
    topic: String,
    group: String,
    /// partition -> (earliest, end) offsets.
    ends: BTreeMap<i32, (i64, i64)>,
}

impl InputEnd {
    async fn capture(cluster: Arc<Cluster>, topic: &str, group: &str) -> CliResult<Self> {
        let partitions: Vec<i32> = (0..partition_count(&cluster, topic).await?).collect();
        let reader = Reader::new(
            cluster,
            ReaderConfig {
                isolation: IsolationLevel::ReadCommitted,
                ..ReaderConfig::default()
            },
        );
        let failed = |e: kafka_consumer::ReaderError| {
            CliError::failure(format!("copy --exit-at-end: the input's offsets: {e}"))
        };
        let earliest = reader
            .list_offsets(topic, &partitions, Offset::Earliest)
            .await
            .map_err(failed)?;
        let latest = reader
            .list_offsets(topic, &partitions, Offset::Latest)
            .await
            .map_err(failed)?;
        let ends = partitions
            .iter()
            .map(|p| {
                let start = earliest.get(p).and_then(|l| l.offset).unwrap_or(0);
                let end = latest.get(p).and_then(|l| l.offset).unwrap_or(start);
                (*p, (start, end))
            })
            .collect();
        Ok(Self {
            reader,
            topic: topic.to_string(),
            group: group.to_string(),
            ends,
        })
    }

    /// Every partition's committed offset is at or past its end.
    async fn reached(&self) -> bool {
        let partitions: Vec<i32> = self.ends.keys().copied().collect();
        match self
            .reader
            .committed_offsets(&self.group, &self.topic, &partitions)
            .await
        {
            Ok(committed) => self.ends.iter().all(|(p, (start, end))| {
                committed.get(p).copied().flatten().unwrap_or(*start) >= *end
            }),
            Err(e) => {
                tracing::debug!(error = %e, "copy --exit-at-end: committed offsets");
                false
            }
        }
    }
}

/// Runs `copy` until a signal, `--idle-exit-ms` or `--exit-at-end`.
pub async fn run(globals: &Globals, a: CopyArgs) -> CliResult<()> {
    // First: a SIGTERM from now on is a clean stop, never the default kill.
    let sigint = Arc::new(AtomicBool::new(false));
    let sigterm = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGINT, sigint.clone())
        .map_err(|e| CliError::failure(format!("cannot install the SIGINT handler: {e}")))?;
    signal_hook::flag::register(signal_hook::consts::SIGTERM, sigterm.clone())
        .map_err(|e| CliError::failure(format!("cannot install the SIGTERM handler: {e}")))?;

    check_topic(&a.from)?;
    check_topic(&a.to)?;
    // Read committed from the earliest offset unless -X says otherwise.
    let txn_id = format!("{}-{}", a.transactional_id_prefix, unique_suffix());
    let timeout = a.transaction_timeout_ms.to_string();
    // One bag of settings: the consumer, the producer and the registry
    // formats each take theirs.
    let mut defaults = vec![
        ("isolation.level", "read_committed"),
        ("auto.offset.reset", "earliest"),
        ("group.id", a.group.as_str()),
    ];
    defaults.extend(Format::defaults(&[
        a.input_value_format,
        a.output_value_format,
    ]));
    let mut flags = vec![
        ("transactional.id", txn_id.as_str()),
        ("transaction.timeout.ms", timeout.as_str()),
    ];
    if let Some(url) = &a.schema_registry {
        flags.push(("schema.registry.url", url.as_str()));
    }
    let (consumer, producer, reencode) =
        globals.group_configs(&defaults, &flags, |props| reencode(&a, props))?;
    let cluster = globals.connect(&producer).await?;
    partition_count(&cluster, &a.from).await?;
    partition_count(&cluster, &a.to).await?;
    let input_end = if a.exit_at_end {
        Some(InputEnd::capture(cluster.clone(), &a.from, &a.group).await?)
    } else {
        None
    };
    drop(cluster);

    let seed = a.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
    });
    if a.enable_random_aborts {
        eprintln!("kafka-eos copy: random aborts with seed {seed}");
    }
    let config = PipelineConfig {
        commit_interval: Duration::from_millis(a.commit_interval_ms.max(1)),
        random_aborts: a.enable_random_aborts.then_some(seed),
    };
    let to: Arc<str> = Arc::from(a.to.as_str());
    let transform = match reencode {
        Some(t) => CopyTransform::Reencode(Box::new(t)),
        None => CopyTransform::Bytes(copy_record(&to)),
    };
    let mut pipeline =
        ConsumeTransformProduce::connect_with(consumer, &[&a.from], producer, transform, config)
            .await
            .map_err(|e| CliError::failure(format!("copy: {e}")))?;
    tracing::info!(transactional_id = %txn_id, group = %a.group, "copy: started");
    let idle = a.idle_exit_ms.map(Duration::from_millis);
    let started = Instant::now();
    let mut last_input = Instant::now();
    let mut consumed = 0;
    let mut next_end_check = Instant::now();
    let stopped_by = loop {
        if sigint.load(Ordering::SeqCst) {
            break Stop::Interrupt;
        }
        if sigterm.load(Ordering::SeqCst) {
            break Stop::Terminate;
        }
        if let Some(idle) = idle
            && last_input.elapsed() >= idle
        {
            break Stop::Idle;
        }
        if let Some(end) = &input_end
            && Instant::now() >= next_end_check
        {
            next_end_check = Instant::now() + Duration::from_millis(200);
            if end.reached().await {
                break Stop::End;
            }
        }
        if let Err(e) = pipeline.step(Duration::from_millis(200)).await {
            if matches!(e, PipelineError::Transform { .. }) {
                // The open transaction is already aborted: leave the group
                // at once, so that a restarted copier gets the partition
                // without waiting for the session to time out.
                if let Err(close) = pipeline.abort_and_close(Duration::from_secs(10)).await {
                    tracing::warn!(error = %close, "copy: closing after a transform error");
                }
            }
            return Err(pipeline_error(e));
        }
        let stats = pipeline.stats();
        if stats.consumed != consumed {
            consumed = stats.consumed;
            last_input = Instant::now();
        }
    };
    let close = Duration::from_secs(10);
    let stats = match stopped_by {
        // A signal: commit nothing more.
        Stop::Interrupt | Stop::Terminate => pipeline.abort_and_close(close).await,
        Stop::Idle | Stop::End => pipeline.close(close).await,
    }
    .map_err(pipeline_error)?;
    report(&txn_id, &stats, started.elapsed());
    match stopped_by {
        Stop::Interrupt => Err(CliError::new(
            ExitCode::Interrupted,
            "interrupted: the open transaction was aborted",
        )),
        _ => Ok(()),
    }
}

/// A fenced producer that the pipeline could not replace (another live
/// process uses the transactional id) exits 5, as a fenced prepared
/// transaction does; anything else 1.
fn pipeline_error(e: PipelineError) -> CliError {
    match e {
        PipelineError::Transaction(TransactionError::Fenced { .. }) => {
            CliError::new(ExitCode::TransactionLost, format!("copy: {e}"))
        }
        PipelineError::Group(GroupError::Reader(r)) if r.is_position_lost() => {
            CliError::failure(format!(
                "copy stopped, nothing skipped (auto.offset.reset=none): {r}. The open transaction was aborted; the group's committed offset is unchanged. To go on, move the group's offset, or run with -X auto.offset.reset=earliest to skip the records that are gone"
            ))
        }
        e => CliError::failure(format!("copy: {e}")),
    }
}

fn report(txn_id: &str, s: &PipelineStats, elapsed: Duration) {
    let secs = elapsed.as_secs_f64();
    let rate = if secs > 0.0 {
        s.committed_records as f64 / secs
    } else {
        0.0
    };
    let commit_mean = if s.committed > 0 {
        s.commit_time_total.as_secs_f64() * 1e3 / s.committed as f64
    } else {
        0.0
    };
    eprintln!(
        "{{\"transactional_id\":\"{txn_id}\",\"consumed\":{},\"committed_records\":{},\"transactions_committed\":{},\"transactions_aborted\":{},\"producer_restarts\":{},\"elapsed_ms\":{},\"committed_records_per_second\":{rate:.0},\"commit_ms_mean\":{commit_mean:.1},\"commit_ms_max\":{:.1}}}",
        s.consumed,
        s.committed_records,
        s.committed,
        s.aborted,
        s.producer_restarts,
        elapsed.as_millis(),
        s.commit_time_max.as_secs_f64() * 1e3,
    );
}

pub const COPY_HELP: &str = "\
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

Re-encoding (--input-value-format and --output-value-format: avro,
protobuf, json, string, bytes; --output-schema-file): each value is decoded
with the writer's schema from the registry, turned into its JSON document
(as `consume --value-format` prints it) and encoded in the output format
(as `produce --value-format` reads it), in the same exactly-once
transaction; the key and headers are copied, except the value's schema-id
header. A value that does not decode or encode stops the copier with exit
1 naming the record: its open transaction is aborted, the group's committed
offset stays before that record, and a restarted copier begins there.
Registry settings as -X keys with Confluent's names (schema.registry.url,
basic.auth.user.info, bearer.auth.token, schema.registry.ssl.*,
auto.register.schemas, ...).

-X settings go to the consumer (group.*, isolation.level, auto.offset.reset,
max.poll.interval.ms, fetch.*) or to the producer; connection and security
settings to both. The consumer reads read_committed from the earliest
offset unless -X says otherwise. With -X auto.offset.reset=none a copier
whose input position left the log (retention or DeleteRecords passed it
before it was copied) or whose input log was truncated below it stops with
exit 1 and a message naming the partition and offsets, its open transaction
aborted: nothing is skipped silently. Under earliest (the default here),
latest or by_duration:<ISO-8601 duration> it moves on (logged at warn) and
the records it passed over are not copied.

Examples:
  kafka-eos copy --from orders --to orders-copy --group copier --transactional-id-prefix copier
  kafka-eos copy --from in --to out --group g --transactional-id-prefix g --enable-random-aborts
  kafka-eos copy --from orders-json --to orders-avro --group to-avro --transactional-id-prefix to-avro \\
            --input-value-format json --output-value-format avro --output-schema-file order.avsc \\
            --schema-registry http://localhost:8081 --exit-at-end";

/// `copy` options.
#[derive(Debug, clap::Args)]
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
    /// Re-encode: decode each input value in this format (see below).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub input_value_format: Option<Format>,
    /// Re-encode: write each value in this format.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub output_value_format: Option<Format>,
    /// The output value's schema (Avro, Protobuf or JSON Schema).
    #[arg(long, value_name = "FILE")]
    pub output_schema_file: Option<std::path::PathBuf>,
    /// The Protobuf message of the output value (default: the file's first).
    #[arg(long, value_name = "NAME")]
    pub output_message: Option<String>,
    /// The schema registry (Confluent's REST API): -X schema.registry.url.
    #[arg(long, value_name = "URL")]
    pub schema_registry: Option<String>,
}
