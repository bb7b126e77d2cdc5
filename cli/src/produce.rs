//! `produce`: records from stdin or a file to a topic, idempotent by default
//! or in transactions with `--transactional-id`.
//!
//! A reader thread parses the input and hands records to the async loop over
//! a bounded channel, so time-based commits happen while the input is idle.
//! Every record's delivery is awaited; the first failure fails the command.

use crate::args::{PartitionerArg, parse_kv, parse_partitioner};
use crate::common::{Globals, partition_count, take_producer_config};
use crate::error::{CliError, CliResult, ExitCode};
use crate::formats::{Encoder, Format, SchemaSource};
use crate::output::{Counters, Progress, summary};
use bytes::Bytes;
use kafka_client::Properties;
use kafka_producer::txn::TransactionError;
use kafka_producer::{
    PartitionerChoice, ProduceError, Producer, ProducerRecord, RecordMetadata,
    TransactionalProducer,
};
use kafka_schema_registry::{RecordSerializer, SerializationContext};
use std::collections::VecDeque;
use std::future::Future;
use std::io::{BufRead, BufReader, Read};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::Poll;
use std::time::{Duration, Instant};

/// One parsed input record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// Key, when a key separator is used.
    pub key: Option<Bytes>,
    /// Value (`None`: a null value, length-delimited input only).
    pub value: Option<Bytes>,
}

/// Splits `rec` at the first occurrence of `sep`.
fn split_key(rec: &[u8], sep: &[u8]) -> Option<(Bytes, Bytes)> {
    if sep.is_empty() || rec.len() < sep.len() {
        return None;
    }
    let at = rec.windows(sep.len()).position(|w| w == sep)?;
    Some((
        Bytes::copy_from_slice(&rec[..at]),
        Bytes::copy_from_slice(&rec[at + sep.len()..]),
    ))
}

/// Parses records from `input` and calls `emit` for each; stops early when
/// `emit` returns false. Errors name the record (line) number.
pub fn parse_input(
    mut input: impl BufRead,
    format: InputFormat,
    sep: Option<&[u8]>,
    mut emit: impl FnMut(Parsed) -> bool,
) -> Result<(), String> {
    let mut n = 0u64;
    let mut buf = Vec::new();
    loop {
        n += 1;
        buf.clear();
        let value: Option<&[u8]> = match format {
            InputFormat::Lines => {
                let read = input
                    .read_until(b'\n', &mut buf)
                    .map_err(|e| format!("reading line {n}: {e}"))?;
                if read == 0 {
                    return Ok(());
                }
                if buf.last() == Some(&b'\n') {
                    buf.pop();
                    if buf.last() == Some(&b'\r') {
                        buf.pop();
                    }
                }
                Some(&buf)
            }
            InputFormat::LengthDelimited => {
                let mut len = [0u8; 4];
                let mut got = 0;
                while got < 4 {
                    match input.read(&mut len[got..]) {
                        Ok(0) if got == 0 => return Ok(()),
                        Ok(0) => {
                            return Err(format!("record {n}: truncated length prefix"));
                        }
                        Ok(k) => got += k,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(format!("reading record {n}: {e}")),
                    }
                }
                let len = i32::from_be_bytes(len);
                if len == -1 {
                    None
                } else if len < 0 {
                    return Err(format!("record {n}: invalid length {len}"));
                } else {
                    buf.resize(len as usize, 0);
                    input.read_exact(&mut buf).map_err(|e| {
                        format!("record {n}: truncated ({len} bytes announced): {e}")
                    })?;
                    Some(&buf)
                }
            }
        };
        let parsed = match (value, sep) {
            (None, _) => Parsed {
                key: None,
                value: None,
            },
            (Some(v), None) => Parsed {
                key: None,
                value: Some(Bytes::copy_from_slice(v)),
            },
            (Some(v), Some(sep)) => match split_key(v, sep) {
                Some((k, v)) => Parsed {
                    key: Some(k),
                    value: Some(v),
                },
                None => {
                    let what = match format {
                        InputFormat::Lines => "line",
                        InputFormat::LengthDelimited => "record",
                    };
                    return Err(format!(
                        "{what} {n} has no key separator {:?}",
                        String::from_utf8_lossy(sep)
                    ));
                }
            },
        };
        if !emit(parsed) {
            return Ok(());
        }
    }
}

type Input = Result<Parsed, String>;

/// Starts the input thread: stdin or a file, parsed into records.
fn spawn_input(args: &ProduceArgs) -> CliResult<tokio::sync::mpsc::Receiver<Input>> {
    let source: Box<dyn Read + Send> = match &args.file {
        Some(p) if p.as_os_str() != "-" => Box::new(
            std::fs::File::open(p)
                .map_err(|e| CliError::usage(format!("cannot open {}: {e}", p.display())))?,
        ),
        _ => Box::new(std::io::stdin()),
    };
    let format = args.format;
    let sep = args.key_separator.clone().map(String::into_bytes);
    if sep.as_ref().is_some_and(|s| s.is_empty()) {
        return Err(CliError::usage("--key-separator must not be empty"));
    }
    let (tx, rx) = tokio::sync::mpsc::channel::<Input>(4096);
    std::thread::Builder::new()
        .name("kafka-eos-input".into())
        .spawn(move || {
            let reader = BufReader::with_capacity(256 * 1024, source);
            let r = parse_input(reader, format, sep.as_deref(), |p| {
                tx.blocking_send(Ok(p)).is_ok()
            });
            if let Err(e) = r {
                let _ = tx.blocking_send(Err(e));
            }
        })
        .map_err(|e| CliError::failure(format!("cannot start the input thread: {e}")))?;
    Ok(rx)
}

type SendFuture = Pin<Box<dyn Future<Output = Result<RecordMetadata, ProduceError>> + Send>>;
type Delivery = tokio::task::JoinHandle<Result<RecordMetadata, ProduceError>>;

/// Outstanding deliveries, awaited in send order.
///
/// Each send is polled once when made, so a send that must wait for buffer
/// memory takes its place in line (the producer's FIFO ticket) before the
/// next one; a send still pending then runs as its own task, so nothing the
/// producer needs (locks, tickets) is held by an unpolled future. The
/// records awaiting acknowledgement are bounded in count and bytes
/// (backpressure on the input).
#[derive(Debug)]
struct Deliveries {
    queue: VecDeque<(Delivery, u64)>,
    pending_bytes: u64,
    max_pending_bytes: u64,
    failed: u64,
    first_error: Option<ProduceError>,
}

/// Bound on records awaiting their acknowledgement.
const MAX_PENDING: usize = 100_000;

impl Deliveries {
    fn new(buffer_memory: usize) -> Self {
        Self {
            queue: VecDeque::new(),
            pending_bytes: 0,
            max_pending_bytes: (buffer_memory as u64 / 2).max(1 << 20),
            failed: 0,
            first_error: None,
        }
    }

    fn note(&mut self, r: Result<RecordMetadata, ProduceError>) {
        if let Err(e) = r {
            self.failed += 1;
            if self.first_error.is_none() {
                self.first_error = Some(e);
            }
        }
    }

    /// Queues a send of `size` bytes; `wait` awaits it at once (the first
    /// record, which also fetches the topic's metadata).
    async fn push(&mut self, mut fut: SendFuture, size: u64, wait: bool) {
        if wait {
            let r = fut.await;
            self.note(r);
            return;
        }
        let ready = std::future::poll_fn(|cx| {
            Poll::Ready(match fut.as_mut().poll(cx) {
                Poll::Ready(r) => Some(r),
                Poll::Pending => None,
            })
        })
        .await;
        match ready {
            Some(r) => self.note(r),
            None => {
                self.queue.push_back((tokio::spawn(fut), size));
                self.pending_bytes += size;
            }
        }
        while self.queue.len() > MAX_PENDING || self.pending_bytes > self.max_pending_bytes {
            if !self.pop().await {
                break;
            }
        }
    }

    async fn pop(&mut self) -> bool {
        let Some((h, size)) = self.queue.pop_front() else {
            return false;
        };
        self.pending_bytes -= size;
        let r = h
            .await
            .unwrap_or_else(|e| Err(ProduceError::Closed(Some(format!("send task: {e}").into()))));
        self.note(r);
        true
    }

    async fn drain(&mut self) {
        while self.pop().await {}
    }

    /// The first failure after a drain, as an error.
    fn check(&mut self, total: u64) -> CliResult<()> {
        match self.first_error.take() {
            None => Ok(()),
            Some(e) => {
                let failed = self.failed;
                Err(CliError::from(e).context(format!(
                    "{failed} of {total} record(s) were not delivered; first error"
                )))
            }
        }
    }
}

struct Template {
    topic: String,
    partition: Option<i32>,
    headers: Vec<(String, Option<Bytes>)>,
    header_bytes: u64,
}

impl Template {
    fn record(&self, p: Parsed) -> (ProducerRecord, u64) {
        let size = p.key.as_ref().map_or(0, |k| k.len()) + p.value.as_ref().map_or(0, |v| v.len());
        let r = ProducerRecord {
            topic: self.topic.clone(),
            partition: self.partition,
            key: p.key,
            value: p.value,
            headers: self.headers.clone(),
            timestamp: None,
        };
        (r, size as u64 + self.header_bytes)
    }
}

/// `--value-format` / `--key-format`: each input line is a JSON document
/// encoded before it is sent. A line that does not encode fails the
/// command before anything of it is sent.
struct JsonInput {
    /// The key's encoder; with it, each line is `{"key": K, "value": V}`.
    key: Option<Encoder>,
    /// The value's encoder.
    value: Encoder,
    /// The topic (the subjects follow it).
    topic: String,
}

impl JsonInput {
    /// The encoders of `args`, their settings taken from `props`; `None`
    /// without `--value-format` and `--key-format`.
    fn from_args(args: &ProduceArgs, props: &mut Properties) -> CliResult<Option<Self>> {
        if args.value_format.is_none() && args.key_format.is_none() {
            return Ok(None);
        }
        if args.format != InputFormat::Lines || args.key_separator.is_some() {
            return Err(CliError::usage(
                "--value-format/--key-format read JSON lines: --format length-delimited and --key-separator do not apply",
            ));
        }
        let value = Encoder::new(
            args.value_format.unwrap_or(Format::String),
            &SchemaSource {
                file: args.schema_file.as_deref(),
                message: args.message.as_deref(),
                flag: "--schema-file",
            },
            props,
        )?;
        let key = match args.key_format {
            None => None,
            Some(f) => Some(Encoder::new(
                f,
                &SchemaSource {
                    file: args.key_schema_file.as_deref(),
                    message: args.key_message.as_deref(),
                    flag: "--key-schema-file",
                },
                props,
            )?),
        };
        Ok(Some(Self {
            key,
            value,
            topic: args.topic.clone(),
        }))
    }

    /// Line `n` (its bytes in `p.value`) encoded: the key and value
    /// documents serialized, `null` staying null.
    async fn encode(&self, n: u64, p: Parsed) -> CliResult<Parsed> {
        let bad = |e: String| CliError::failure(format!("bad input: line {n}: {e}"));
        let line = p.value.unwrap_or_default();
        let doc: serde_json::Value =
            serde_json::from_slice(&line).map_err(|e| bad(format!("not JSON: {e}")))?;
        let (key, value) = match &self.key {
            None => (None, doc),
            Some(_) => match doc {
                serde_json::Value::Object(mut o)
                    if o.keys().all(|k| k == "key" || k == "value") =>
                {
                    (
                        Some(o.remove("key").unwrap_or_default()),
                        o.remove("value").unwrap_or_default(),
                    )
                }
                _ => {
                    return Err(bad(
                        "with --key-format each line is {\"key\": ..., \"value\": ...}".into(),
                    ));
                }
            },
        };
        let key = match (&self.key, key) {
            (Some(encoder), Some(k)) if !k.is_null() => Some(
                encoder
                    .serialize(&SerializationContext::key(&self.topic), &k)
                    .await
                    .map_err(|e| bad(format!("key: {e}")))?,
            ),
            _ => None,
        };
        let value = if value.is_null() {
            None
        } else {
            Some(
                self.value
                    .serialize(&SerializationContext::value(&self.topic), &value)
                    .await
                    .map_err(|e| bad(format!("value: {e}")))?,
            )
        };
        Ok(Parsed { key, value })
    }
}

/// Either kind of producer.
enum Sink {
    Idempotent(Producer),
    Transactional(TransactionalProducer),
}

impl Sink {
    fn send(&self, r: ProducerRecord) -> SendFuture {
        match self {
            Sink::Idempotent(p) => Box::pin(p.send(r)),
            Sink::Transactional(p) => Box::pin(p.send(r)),
        }
    }
}

/// Runs `produce`.
pub async fn run(g: &Globals, args: ProduceArgs) -> CliResult<()> {
    crate::common::check_topic(&args.topic)?;
    let mut extra = Vec::new();
    if let Some(id) = &args.transactional_id {
        extra.push(("transactional.id", id.as_str()));
    }
    if let Some(url) = &args.schema_registry {
        extra.push(("schema.registry.url", url.as_str()));
    }
    // One bag: the producer and the registry formats each take theirs.
    let mut props = g.properties(
        &Format::defaults(&[args.key_format, args.value_format]),
        &extra,
    );
    let mut config = take_producer_config(&mut props)?;
    let json_input = JsonInput::from_args(&args, &mut props)?;
    props.finish()?;
    if let Some(p) = args.partitioner {
        config.partitioner = match p {
            PartitionerArg::Default => PartitionerChoice::Default,
            PartitionerArg::RoundRobin => PartitionerChoice::RoundRobin,
            PartitionerArg::KeyHash => PartitionerChoice::KeyHash,
            PartitionerArg::Fixed(n) => PartitionerChoice::Fixed(n),
        };
    }
    let commit_every = args.commit_every.unwrap_or(10_000).max(1);
    let commit_interval = Duration::from_millis(args.commit_interval_ms.unwrap_or(1_000).max(1));
    let transactional = config.transactional_id.clone();
    let buffer_memory = config.buffer_memory;
    let template = Template {
        topic: args.topic.clone(),
        partition: args.partition,
        header_bytes: args
            .headers
            .iter()
            .map(|(k, v)| (k.len() + v.len()) as u64)
            .sum(),
        headers: args
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), Some(Bytes::from(v.clone().into_bytes()))))
            .collect(),
    };
    let started = Instant::now();
    let sink = match &transactional {
        None => Sink::Idempotent(
            Producer::connect(config)
                .await
                .map_err(|e| CliError::from(e).with_bootstrap(&g.bootstrap))?,
        ),
        Some(_) => Sink::Transactional(
            TransactionalProducer::connect(config)
                .await
                .map_err(|e| CliError::from(e).with_bootstrap(&g.bootstrap))?,
        ),
    };
    let cluster = match &sink {
        Sink::Idempotent(p) => p.cluster().clone(),
        Sink::Transactional(p) => p.cluster().clone(),
    };
    let n = partition_count(&cluster, &args.topic).await?;
    if let Some(p) = args.partition
        && (p < 0 || p >= n)
    {
        return Err(CliError::usage(format!(
            "partition {p} does not exist: topic {:?} has partitions 0..{}",
            args.topic,
            n - 1
        )));
    }
    if let Sink::Transactional(p) = &sink {
        p.init_transactions()
            .await
            .map_err(|e| CliError::from(e).context("init_transactions"))?;
    }
    // Set by the SIGINT handler itself, so a commit decision always sees a
    // Ctrl-C that arrived before it (the async `ctrl_c` below only wakes the
    // loop; it can be observed after the end of input).
    let sigint = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGINT, sigint.clone())
        .map_err(|e| CliError::failure(format!("cannot install the SIGINT handler: {e}")))?;
    let mut input = spawn_input(&args)?;
    let counters = Arc::new(Counters::default());
    let progress = Progress::start("produced", counters.clone());
    let mut deliveries = Deliveries::new(buffer_memory);
    let mut in_txn = 0u64;
    let mut txn_deadline = tokio::time::Instant::now();
    let mut commits = 0u64;
    let mut input_error = None;
    let mut interrupted = false;
    let is_txn = transactional.is_some();
    let mut line = 0u64;
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    let result: CliResult<()> = async {
        loop {
            let next = tokio::select! {
                biased;
                _ = &mut ctrl_c => { interrupted = true; break; }
                _ = tokio::time::sleep_until(txn_deadline), if is_txn && in_txn > 0 => None,
                m = input.recv() => match m {
                    None => break,
                    Some(Err(e)) => { input_error = Some(e); break; }
                    Some(Ok(p)) => Some(p),
                },
            };
            if let Some(p) = next {
                if let Sink::Transactional(tp) = &sink
                    && in_txn == 0
                {
                    tp.begin_transaction()?;
                    txn_deadline = tokio::time::Instant::now() + commit_interval;
                }
                line += 1;
                let p = match &json_input {
                    Some(input) => input.encode(line, p).await?,
                    None => p,
                };
                let (record, size) = template.record(p);
                let first = counters.get().0 == 0;
                deliveries.push(sink.send(record), size, first).await;
                counters.add(size);
                in_txn += 1;
            }
            if let Sink::Transactional(tp) = &sink {
                let due = in_txn >= commit_every
                    || (in_txn > 0 && tokio::time::Instant::now() >= txn_deadline);
                if due {
                    if sigint.load(Ordering::SeqCst) {
                        interrupted = true;
                        break;
                    }
                    commit(tp, &mut deliveries, counters.get().0, &sigint, &g.bootstrap).await?;
                    in_txn = 0;
                    commits += 1;
                }
            }
        }
        Ok(())
    }
    .await;
    drop(progress);
    let total = counters.get().0;
    match &sink {
        Sink::Idempotent(p) => {
            deliveries.drain().await;
            let closed = p.close(Duration::from_secs(30)).await;
            result?;
            deliveries.check(total)?;
            closed?;
        }
        Sink::Transactional(tp) => {
            interrupted |= sigint.load(Ordering::SeqCst);
            let finish_ok = result.is_ok() && input_error.is_none() && !interrupted;
            if let Err(e) = result {
                if e.code != ExitCode::TransactionOutcomeUnknown {
                    let _ = tp.abort_transaction().await;
                }
                return Err(e);
            }
            if in_txn > 0 {
                if finish_ok {
                    match commit(tp, &mut deliveries, total, &sigint, &g.bootstrap).await {
                        Ok(()) => commits += 1,
                        Err(e) if e.code == ExitCode::Interrupted => {
                            interrupted = true;
                            eprintln!(
                                "kafka-eos: aborted the open transaction ({in_txn} record(s))"
                            );
                        }
                        Err(e) => return Err(e),
                    }
                } else {
                    tp.abort_transaction()
                        .await
                        .map_err(|e| CliError::from(e).context("aborting the open transaction"))?;
                    eprintln!("kafka-eos: aborted the open transaction ({in_txn} record(s))");
                }
            }
            let _ = tp.close(Duration::from_secs(30)).await;
        }
    }
    if let Some(e) = input_error {
        return Err(CliError::failure(format!("bad input: {e}")));
    }
    let (records, bytes) = counters.get();
    let mut line = summary("produced", records, bytes, started.elapsed());
    if let Some(id) = &transactional {
        line.push_str(&format!(
            " in {commits} committed transaction{} (transactional.id {id})",
            if commits == 1 { "" } else { "s" }
        ));
    }
    if interrupted {
        return Err(CliError::new(
            ExitCode::Interrupted,
            format!("interrupted; {line}"),
        ));
    }
    eprintln!("{line}");
    Ok(())
}

/// Flushes, awaits every delivery of the open transaction, then commits —
/// unless SIGINT arrived first (then the transaction is aborted and the
/// error says `Interrupted`). A commit whose outcome is unknown is never
/// reported as aborted: it exits with `TransactionOutcomeUnknown` and the
/// command that finds out.
async fn commit(
    tp: &TransactionalProducer,
    deliveries: &mut Deliveries,
    total: u64,
    sigint: &AtomicBool,
    bootstrap: &str,
) -> CliResult<()> {
    tp.flush().await;
    deliveries.drain().await;
    if let Err(e) = deliveries.check(total) {
        return Err(abort_after(tp, e).await);
    }
    if sigint.load(Ordering::SeqCst) {
        let e = CliError::new(ExitCode::Interrupted, "interrupted before the commit");
        return Err(abort_after(tp, e).await);
    }
    // The same operation again after a timeout (Java semantics), then give up
    // with the outcome unknown.
    let mut attempts = 0;
    loop {
        attempts += 1;
        match tp.commit_transaction().await {
            Ok(()) => return Ok(()),
            Err(TransactionError::Timeout { .. }) if attempts < 3 => continue,
            Err(TransactionError::Timeout { .. }) => {
                return Err(unknown_outcome(tp, bootstrap, "the commit timed out"));
            }
            Err(e) if e.is_abortable() => {
                let e = CliError::from(e).context("commit failed");
                return Err(abort_after(tp, e).await);
            }
            // Fenced or fatal: EndTxn may have been sent.
            Err(e) => return Err(unknown_outcome(tp, bootstrap, &e.to_string())),
        }
    }
}

/// Aborts the open transaction after `e` and says how that went.
async fn abort_after(tp: &TransactionalProducer, e: CliError) -> CliError {
    match tp.abort_transaction().await {
        Ok(()) => e.context("transaction aborted"),
        Err(abort) => e.context(format!(
            "aborting the transaction failed too ({abort}); the coordinator aborts it after \
             transaction.timeout.ms"
        )),
    }
}

fn unknown_outcome(tp: &TransactionalProducer, bootstrap: &str, why: &str) -> CliError {
    let id = tp.transactional_id();
    CliError::new(
        ExitCode::TransactionOutcomeUnknown,
        format!(
            "{why}: the outcome of the transaction is unknown (it may have committed); \
             find out with: kafka-eos --bootstrap {bootstrap} txn describe {id}"
        ),
    )
}

pub const PRODUCE_HELP: &str = "\
Input formats:
  lines             one record per line (\\n or \\r\\n); with --key-separator SEP
                    each line is KEY<SEP>VALUE (split at the first SEP; a line
                    without SEP is an error).
  length-delimited  each record is a 4-byte big-endian length then that many
                    bytes (length -1: a null value); --key-separator splits the
                    bytes at the first SEP as for lines.

Registry formats (--value-format, --key-format: avro, protobuf, json, string,
bytes): each line is one JSON document, the value; with --key-format each
line is {\"key\": K, \"value\": V} (kcat's JSON envelope; a null or missing part
stays null, a null value is a tombstone). Avro takes the plain document
(a union takes the bare value, resolved by its type in the schema's order;
bytes and fixed are strings of U+0000..U+00FF); Protobuf takes the Protobuf
JSON mapping of --message (default: the file's first message); JSON Schema
takes the document as it is and validates it (-X json.fail.invalid.schema
=false to skip); string takes a JSON string, bytes a base64 string. The
registry comes from --schema-registry or -X schema.registry.url, with
Confluent's settings as -X keys: basic.auth.credentials.source,
basic.auth.user.info, bearer.auth.token, schema.registry.ssl.*,
auto.register.schemas, use.latest.version, use.schema.id,
value.subject.name.strategy, ... A line that is not JSON or does not fit its
schema (or a registry that refuses) fails the command with exit 1 naming the
line, before anything of that line is sent; with --transactional-id the open
transaction is aborted.

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
  kafka-eos produce --topic orders --transactional-id loader-1 --commit-every 500 --commit-interval-ms 2000
  kafka-eos produce --topic orders --value-format avro --schema-file order.avsc \\
            --schema-registry http://localhost:8081 < orders.jsonl
  kafka-eos produce --topic orders --key-format string --value-format protobuf --schema-file order.proto \\
            --message shop.Order -X basic.auth.credentials.source=USER_INFO -X basic.auth.user.info=me:secret";

/// `produce` options.
#[derive(Debug, clap::Args)]
pub struct ProduceArgs {
    /// The topic (must exist).
    #[arg(long, short = 't')]
    pub topic: String,
    /// Read from this file instead of stdin ("-" is stdin).
    #[arg(long, short = 'f', value_name = "FILE")]
    pub file: Option<std::path::PathBuf>,
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
    /// Each line is a JSON document written in this format (see below).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub value_format: Option<Format>,
    /// The value's schema: Avro `.avsc`, Protobuf `.proto` or a JSON Schema.
    #[arg(long, value_name = "FILE")]
    pub schema_file: Option<std::path::PathBuf>,
    /// The Protobuf message of the value (full name; default: the file's first).
    #[arg(long, value_name = "NAME")]
    pub message: Option<String>,
    /// Each line is {"key": K, "value": V}, K written in this format.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub key_format: Option<Format>,
    /// The key's schema file.
    #[arg(long, value_name = "FILE")]
    pub key_schema_file: Option<std::path::PathBuf>,
    /// The Protobuf message of the key.
    #[arg(long, value_name = "NAME")]
    pub key_message: Option<String>,
    /// The schema registry (Confluent's REST API): -X schema.registry.url.
    #[arg(long, value_name = "URL")]
    pub schema_registry: Option<String>,
}

/// How `produce` reads its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum InputFormat {
    /// One record per line.
    Lines,
    /// 4-byte big-endian length, then the bytes.
    LengthDelimited,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(input: &[u8], format: InputFormat, sep: Option<&str>) -> Result<Vec<Parsed>, String> {
        let mut out = Vec::new();
        parse_input(input, format, sep.map(str::as_bytes), |p| {
            out.push(p);
            true
        })?;
        Ok(out)
    }

    fn rec(k: Option<&str>, v: Option<&str>) -> Parsed {
        Parsed {
            key: k.map(|k| Bytes::copy_from_slice(k.as_bytes())),
            value: v.map(|v| Bytes::copy_from_slice(v.as_bytes())),
        }
    }

    #[test]
    fn lines_with_and_without_keys() {
        assert_eq!(
            parse(b"a\r\nb\n\nc", InputFormat::Lines, None).unwrap(),
            vec![
                rec(None, Some("a")),
                rec(None, Some("b")),
                rec(None, Some("")),
                rec(None, Some("c"))
            ]
        );
        assert_eq!(
            parse(b"k1::v:1\nk2::\n", InputFormat::Lines, Some("::")).unwrap(),
            vec![rec(Some("k1"), Some("v:1")), rec(Some("k2"), Some(""))]
        );
        let e = parse(b"k:v\nnokey\n", InputFormat::Lines, Some(":")).unwrap_err();
        assert!(e.contains("line 2"), "{e}");
    }

    #[test]
    fn length_delimited() {
        let mut b = Vec::new();
        b.extend_from_slice(&3i32.to_be_bytes());
        b.extend_from_slice(b"a\nb");
        b.extend_from_slice(&(-1i32).to_be_bytes());
        b.extend_from_slice(&0i32.to_be_bytes());
        assert_eq!(
            parse(&b, InputFormat::LengthDelimited, None).unwrap(),
            vec![
                rec(None, Some("a\nb")),
                rec(None, None),
                rec(None, Some(""))
            ]
        );
        b.extend_from_slice(&5i32.to_be_bytes());
        b.extend_from_slice(b"ab");
        assert!(
            parse(&b, InputFormat::LengthDelimited, None)
                .unwrap_err()
                .contains("record 4")
        );
    }
}
