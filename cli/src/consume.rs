//! `consume`: a topic's records to stdout with the read_committed-capable
//! [`Reader`].

use crate::args::{Isolation, OffsetArg, parse_offset};
use crate::common::{Globals, partitions, take_producer_config};
use crate::error::{CliError, CliResult, ExitCode};
use crate::formats::{Decoder, Format};
use crate::output::{Counters, Progress, json_bytes, json_str, summary};
use kafka_client::TopicPartition;
use kafka_consumer::{
    AutoOffsetReset, ConsumerRecord, IsolationLevel, Offset, Reader, ReaderConfig,
};
use kafka_consumer::{ConsumerEvent, GroupConsumer};
use kafka_proto::record::TimestampType;
use kafka_schema_registry::{Field, RecordDeserializer, SerializationContext};
use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `--value-format` / `--key-format`: each record printed as one JSON
/// line (the value's document, or `{"key": K, "value": V}` with
/// `--key-format`); a record that does not decode is reported on stderr
/// as a typed error naming it, and counted.
struct JsonOutput {
    /// The key's decoder (with it, lines are `{"key", "value"}` objects).
    key: Option<Decoder>,
    /// The value's decoder.
    value: Decoder,
    /// Records that did not decode.
    failed: u64,
    /// `--stop-on-error`.
    stop_on_error: bool,
}

impl JsonOutput {
    fn from_args(
        args: &ConsumeArgs,
        props: &mut kafka_client::Properties,
    ) -> CliResult<Option<Self>> {
        if args.value_format.is_none() && args.key_format.is_none() {
            return Ok(None);
        }
        let value = Decoder::new(args.value_format.unwrap_or(Format::String), props)?;
        let key = match args.key_format {
            Some(f) => Some(Decoder::new(f, props)?),
            None => None,
        };
        Ok(Some(Self {
            key,
            value,
            failed: 0,
            stop_on_error: args.stop_on_error,
        }))
    }

    async fn decode(
        decoder: &Decoder,
        r: &ConsumerRecord,
        field: Field,
        bytes: Option<&[u8]>,
    ) -> Result<serde_json::Value, kafka_schema_registry::SerdeError> {
        let Some(bytes) = bytes else {
            return Ok(serde_json::Value::Null);
        };
        let ctx = SerializationContext {
            topic: &r.topic,
            field,
            headers: &r.headers,
        };
        decoder.deserialize(&ctx, bytes).await
    }

    /// Appends `r` as a JSON line to `out`; a record that does not decode
    /// is reported (and fails the command under `--stop-on-error`).
    async fn write(&mut self, out: &mut Vec<u8>, r: &ConsumerRecord) -> CliResult<()> {
        let value = Self::decode(&self.value, r, Field::Value, r.value.as_deref()).await;
        let line = match (&self.key, value) {
            (None, Ok(v)) => Ok(v),
            (Some(k), Ok(v)) => match Self::decode(k, r, Field::Key, r.key.as_deref()).await {
                Ok(k) => Ok(serde_json::json!({"key": k, "value": v})),
                Err(e) => Err(format!("key: {e}")),
            },
            (_, Err(e)) => Err(format!("value: {e}")),
        };
        match line {
            Ok(doc) => {
                out.extend_from_slice(doc.to_string().as_bytes());
                out.push(b'\n');
                Ok(())
            }
            Err(e) => {
                self.failed += 1;
                let what = format!(
                    "record {}-{}@{} does not decode: {e}",
                    r.topic, r.partition, r.offset
                );
                if self.stop_on_error {
                    return Err(CliError::failure(what));
                }
                eprintln!("kafka-eos: {what}");
                Ok(())
            }
        }
    }
}

/// Appends `n` as decimal text.
fn push_num(out: &mut Vec<u8>, n: impl std::fmt::Display) {
    use std::io::Write as _;
    let _ = write!(out, "{n}");
}

fn len_or_null(b: Option<&[u8]>) -> i64 {
    b.map_or(-1, |b| b.len() as i64)
}

/// Appends a 4-byte big-endian length then the bytes (-1 and nothing for null).
fn push_frame(out: &mut Vec<u8>, b: Option<&[u8]>) {
    match b {
        None => out.extend_from_slice(&(-1i32).to_be_bytes()),
        Some(b) => {
            out.extend_from_slice(&(b.len() as u32).to_be_bytes());
            out.extend_from_slice(b);
        }
    }
}

/// Formats one record into `out`: a line for the named text formats, a
/// frame for length-delimited, the template as written otherwise. `sep`
/// is the key separator (key-value, length-delimited).
pub fn format_record(
    out: &mut Vec<u8>,
    r: &ConsumerRecord,
    format: &OutputFormat,
    sep: Option<&[u8]>,
) {
    match format {
        OutputFormat::Value => {
            out.extend_from_slice(r.value.as_deref().unwrap_or_default());
        }
        OutputFormat::KeyValue => {
            out.extend_from_slice(r.key.as_deref().unwrap_or_default());
            out.extend_from_slice(sep.unwrap_or(b"\t"));
            out.extend_from_slice(r.value.as_deref().unwrap_or_default());
        }
        OutputFormat::Json => {
            let mut s = String::with_capacity(128);
            s.push_str("{\"topic\":");
            json_str(&mut s, &r.topic);
            s.push_str(&format!(
                ",\"partition\":{},\"offset\":{},\"timestamp\":{},\"timestamp_type\":\"{}\",\"key\":",
                r.partition,
                r.offset,
                r.timestamp,
                match r.timestamp_type {
                    TimestampType::Create => "create",
                    TimestampType::LogAppend => "log_append",
                }
            ));
            json_bytes(&mut s, r.key.as_deref());
            s.push_str(",\"value\":");
            json_bytes(&mut s, r.value.as_deref());
            s.push_str(",\"headers\":[");
            for (i, h) in r.headers.iter().enumerate() {
                if i > 0 {
                    s.push(',');
                }
                s.push_str("{\"key\":");
                json_str(&mut s, &h.key);
                s.push_str(",\"value\":");
                json_bytes(&mut s, h.value.as_deref());
                s.push('}');
            }
            s.push_str("]}");
            out.extend_from_slice(s.as_bytes());
        }
        OutputFormat::LengthDelimited => {
            match (sep, r.key.as_deref(), r.value.as_deref()) {
                // produce splits KEY<SEP>VALUE at the first SEP.
                (Some(sep), key, value) if key.is_some() || value.is_some() => {
                    let key = key.unwrap_or_default();
                    let value = value.unwrap_or_default();
                    let len = key.len() + sep.len() + value.len();
                    out.extend_from_slice(&(len as u32).to_be_bytes());
                    out.extend_from_slice(key);
                    out.extend_from_slice(sep);
                    out.extend_from_slice(value);
                }
                (_, _, value) => push_frame(out, value),
            }
            return;
        }
        OutputFormat::Template(pieces) => {
            for p in pieces {
                match p {
                    Piece::Literal(b) => out.extend_from_slice(b),
                    Piece::Key => out.extend_from_slice(r.key.as_deref().unwrap_or_default()),
                    Piece::KeyLen => push_num(out, len_or_null(r.key.as_deref())),
                    Piece::Value => out.extend_from_slice(r.value.as_deref().unwrap_or_default()),
                    Piece::ValueLen => push_num(out, len_or_null(r.value.as_deref())),
                    Piece::ValueLenBinary => {
                        let n = len_or_null(r.value.as_deref()) as i32;
                        out.extend_from_slice(&n.to_be_bytes());
                    }
                    Piece::Topic => out.extend_from_slice(r.topic.as_bytes()),
                    Piece::Partition => push_num(out, r.partition),
                    Piece::Offset => push_num(out, r.offset),
                    Piece::Timestamp => push_num(out, r.timestamp),
                    Piece::Headers => {
                        for (i, h) in r.headers.iter().enumerate() {
                            if i > 0 {
                                out.push(b',');
                            }
                            out.extend_from_slice(h.key.as_bytes());
                            if let Some(v) = &h.value {
                                out.push(b'=');
                                out.extend_from_slice(v);
                            }
                        }
                    }
                }
            }
            return;
        }
    }
    out.push(b'\n');
}

fn record_size(r: &ConsumerRecord) -> u64 {
    let h: usize = r
        .headers
        .iter()
        .map(|h| h.key.len() + h.value.as_ref().map_or(0, |v| v.len()))
        .sum();
    (r.key.as_ref().map_or(0, |k| k.len()) + r.value.as_ref().map_or(0, |v| v.len()) + h) as u64
}

/// The start position of each partition for `--offset`.
async fn start_offsets(
    reader: &Reader,
    topic: &str,
    parts: &[i32],
    arg: OffsetArg,
) -> CliResult<Vec<(i32, Offset)>> {
    let single = |o: Offset| parts.iter().map(|p| (*p, o)).collect();
    Ok(match arg {
        OffsetArg::Beginning => single(Offset::Earliest),
        OffsetArg::End => single(Offset::Latest),
        OffsetArg::At(o) => single(Offset::At(o)),
        OffsetArg::Timestamp(t) => single(Offset::Timestamp(t)),
        OffsetArg::FromEnd(n) => {
            let starts = reader.list_offsets(topic, parts, Offset::Earliest).await?;
            let ends = reader.list_offsets(topic, parts, Offset::Latest).await?;
            parts
                .iter()
                .map(|p| {
                    let start = starts.get(p).and_then(|l| l.offset).unwrap_or(0);
                    let end = ends.get(p).and_then(|l| l.offset).unwrap_or(0);
                    (*p, Offset::At(end.saturating_sub(n).max(start)))
                })
                .collect()
        }
    })
}

/// Runs `consume`.
/// How long the next poll may wait: at most 1 s, and no longer than what is
/// left of `--timeout-ms` since the last record; `None` once that passed.
fn next_wait(idle: Option<Duration>, last_record: Instant) -> Option<Duration> {
    let second = Duration::from_secs(1);
    match idle {
        Some(idle) => {
            let left = idle.saturating_sub(last_record.elapsed());
            (!left.is_zero()).then(|| left.min(second))
        }
        None => Some(second),
    }
}

pub async fn run(g: &Globals, args: ConsumeArgs) -> CliResult<()> {
    crate::common::check_topic(&args.topic)?;
    if args.key_separator.as_deref() == Some("") {
        return Err(CliError::usage("--key-separator must not be empty"));
    }
    if args.group.is_some() {
        return run_group(g, args).await;
    }
    let started = Instant::now();
    // One bag: the connection settings and the registry formats' settings.
    let registry_flags: Vec<(&str, &str)> = args
        .schema_registry
        .iter()
        .map(|url| ("schema.registry.url", url.as_str()))
        .collect();
    let mut props = g.properties(
        &Format::defaults(&[args.key_format, args.value_format]),
        &registry_flags,
    );
    let producer = take_producer_config(&mut props)?;
    let mut json_output = JsonOutput::from_args(&args, &mut props)?;
    props.finish()?;
    let cluster = g.connect(&producer).await?;
    let parts = partitions(&cluster, &args.topic, &args.partitions).await?;
    let isolation = match args.isolation_level {
        Isolation::ReadCommitted => IsolationLevel::ReadCommitted,
        Isolation::ReadUncommitted => IsolationLevel::ReadUncommitted,
    };
    // A position that leaves the log while reading (retention,
    // DeleteRecords) moves to the log start unless -X auto.offset.reset
    // says otherwise (`none`: stop with exit 1 naming the offsets).
    let auto_offset_reset = match g.props.iter().rev().find(|(k, _)| k == "auto.offset.reset") {
        Some((_, v)) => AutoOffsetReset::parse(v)
            .map_err(|e| CliError::usage(format!("-X auto.offset.reset={v}: {e}")))?,
        None => AutoOffsetReset::Earliest,
    };
    let config = ReaderConfig {
        isolation,
        auto_offset_reset,
        ..ReaderConfig::default()
    };
    let mut reader = Reader::new(cluster, config);
    reader.assign(&args.topic, &parts);
    for (p, offset) in start_offsets(&reader, &args.topic, &parts, args.offset).await? {
        let at = reader.seek(&args.topic, p, offset).await?;
        tracing::debug!(topic = %args.topic, partition = p, offset = at, "start");
    }
    // -e: the end of each partition now (HW, or LSO under read_committed);
    // a partition is done once its position reaches it.
    let mut ends: BTreeMap<i32, i64> = BTreeMap::new();
    if args.exit_at_end {
        for (p, l) in reader
            .list_offsets(&args.topic, &parts, Offset::Latest)
            .await?
        {
            ends.insert(p, l.offset.unwrap_or(0));
        }
        tracing::debug!(topic = %args.topic, ?ends, "end offsets");
    }
    let counters = Arc::new(Counters::default());
    let progress = Progress::start("consumed", counters.clone());
    let idle = args.timeout_ms.map(Duration::from_millis);
    let mut last_record = Instant::now();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(256 * 1024, stdout.lock());
    let mut buf = Vec::with_capacity(64 * 1024);
    let sep = args.key_separator.as_deref().map(str::as_bytes);
    let mut interrupted = false;
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    'outer: loop {
        if args.count.is_some_and(|c| counters.get().0 >= c) {
            break;
        }
        if args.exit_at_end {
            let done: Vec<i32> = ends
                .iter()
                .filter(|(p, end)| {
                    reader
                        .position(&args.topic, **p)
                        .is_some_and(|at| at >= **end)
                })
                .map(|(p, _)| *p)
                .collect();
            if !done.is_empty() {
                reader.unassign(&args.topic, &done);
                for p in &done {
                    ends.remove(p);
                }
            }
            if ends.is_empty() {
                break;
            }
        }
        let Some(wait) = next_wait(idle, last_record) else {
            break;
        };
        let records = tokio::select! {
            biased;
            _ = &mut ctrl_c => { interrupted = true; break; }
            r = reader.poll(wait) => r?,
        };
        if records.is_empty() {
            continue;
        }
        last_record = Instant::now();
        buf.clear();
        for r in &records {
            if args.count.is_some_and(|c| counters.get().0 >= c) {
                break;
            }
            if args.exit_at_end && ends.get(&r.partition).is_none_or(|end| r.offset >= *end) {
                // Past the end read at start (or of a partition already done).
                continue;
            }
            match &mut json_output {
                None => format_record(&mut buf, r, &args.format, sep),
                Some(o) => {
                    if let Err(e) = o.write(&mut buf, r).await {
                        // What was decoded before it is printed first.
                        let _ = out.write_all(&buf).and_then(|_| out.flush());
                        return Err(e);
                    }
                }
            }
            counters.add(record_size(r));
        }
        if let Err(e) = out.write_all(&buf).and_then(|_| out.flush()) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                break 'outer;
            }
            return Err(CliError::failure(format!("writing to stdout: {e}")));
        }
    }
    match out.flush() {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            return Err(CliError::failure(format!("writing to stdout: {e}")));
        }
        _ => {}
    }
    drop(progress);
    let (records, bytes) = counters.get();
    let line = summary("consumed", records, bytes, started.elapsed());
    if interrupted {
        return Err(CliError::new(
            ExitCode::Interrupted,
            format!("interrupted; {line}"),
        ));
    }
    eprintln!("{line}");
    if let Some(o) = json_output
        && o.failed > 0
    {
        return Err(CliError::failure(format!(
            "{} record(s) did not decode (each named above)",
            o.failed
        )));
    }
    Ok(())
}

/// `consume --group`: a member of a consumer group; commits the offsets of
/// what it wrote (after each write, and before a revoked partition is
/// given up).
async fn run_group(g: &Globals, args: ConsumeArgs) -> CliResult<()> {
    let group = args.group.clone().unwrap_or_default();
    let reset = match args.offset {
        OffsetArg::Beginning => "earliest",
        OffsetArg::End => "latest",
        _ => {
            return Err(CliError::usage(
                "with --group, -o takes beginning or end (where a partition without a committed offset starts)",
            ));
        }
    };
    let isolation = match args.isolation_level {
        Isolation::ReadCommitted => "read_committed",
        Isolation::ReadUncommitted => "read_uncommitted",
    };
    let mut defaults = vec![
        ("group.id", group.as_str()),
        ("isolation.level", isolation),
        ("auto.offset.reset", reset),
    ];
    defaults.extend(Format::defaults(&[args.key_format, args.value_format]));
    let registry_flags: Vec<(&str, &str)> = args
        .schema_registry
        .iter()
        .map(|url| ("schema.registry.url", url.as_str()))
        .collect();
    let (config, producer, mut json_output) =
        g.group_configs(&defaults, &registry_flags, |props| {
            JsonOutput::from_args(&args, props)
        })?;
    let started = Instant::now();
    let cluster = g.connect(&producer).await?;
    partitions(&cluster, &args.topic, &[]).await?;
    drop(cluster);
    let mut consumer = GroupConsumer::subscribe(config, [args.topic.as_str()])
        .await
        .map_err(|e| CliError::failure(format!("joining group {group}: {e}")))?;
    let counters = Arc::new(Counters::default());
    let progress = Progress::start("consumed", counters.clone());
    let idle = args.timeout_ms.map(Duration::from_millis);
    let mut last_record = Instant::now();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(256 * 1024, stdout.lock());
    let mut buf = Vec::with_capacity(64 * 1024);
    let sep = args.key_separator.as_deref().map(str::as_bytes);
    let mut interrupted = false;
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    let failed = |e: kafka_consumer::GroupError| CliError::failure(format!("group {group}: {e}"));
    // Offsets of records written to stdout and not yet committed (a commit
    // made while the member rejoins the group is refused until the
    // rebalance completes).
    let mut uncommitted: BTreeMap<(Arc<str>, i32), i64> = BTreeMap::new();
    loop {
        if args.count.is_some_and(|c| counters.get().0 >= c) {
            break;
        }
        let Some(wait) = next_wait(idle, last_record) else {
            break;
        };
        let event = tokio::select! {
            biased;
            _ = &mut ctrl_c => { interrupted = true; break; }
            e = consumer.poll(wait) => e.map_err(failed)?,
        };
        match event {
            ConsumerEvent::Records(records) if !records.is_empty() => {
                last_record = Instant::now();
                buf.clear();
                // Past --count, the rest are not written and not committed.
                let mut written: BTreeMap<(Arc<str>, i32), i64> = BTreeMap::new();
                for r in &records {
                    if args.count.is_some_and(|c| counters.get().0 >= c) {
                        break;
                    }
                    if let Some(o) = &mut json_output {
                        if let Err(e) = o.write(&mut buf, r).await {
                            // --stop-on-error: what was printed before it
                            // is committed, the record itself is not.
                            let _ = out.write_all(&buf).and_then(|_| out.flush());
                            uncommitted.extend(written);
                            commit_written(&consumer, &mut uncommitted)
                                .await
                                .map_err(failed)?;
                            return Err(e);
                        }
                    } else {
                        format_record(&mut buf, r, &args.format, sep);
                    }
                    counters.add(record_size(r));
                    written.insert((r.topic.clone(), r.partition), r.offset + 1);
                }
                if let Err(e) = out.write_all(&buf).and_then(|_| out.flush()) {
                    if e.kind() == std::io::ErrorKind::BrokenPipe {
                        break;
                    }
                    return Err(CliError::failure(format!("writing to stdout: {e}")));
                }
                uncommitted.extend(written);
                commit_written(&consumer, &mut uncommitted)
                    .await
                    .map_err(failed)?;
            }
            ConsumerEvent::Assigned(parts) => {
                tracing::info!(?parts, "assigned");
                commit_written(&consumer, &mut uncommitted)
                    .await
                    .map_err(failed)?;
            }
            ConsumerEvent::Revoked(parts) => {
                // What was written of them is committed before the next
                // poll confirms the revocation.
                tracing::info!(?parts, "revoked");
                commit_written(&consumer, &mut uncommitted)
                    .await
                    .map_err(failed)?;
            }
            ConsumerEvent::Lost(parts) => {
                tracing::warn!(
                    ?parts,
                    "partitions lost (the member was fenced or missed max.poll.interval.ms)"
                );
                // Another member reads them from the committed offsets.
                for tp in &parts {
                    uncommitted.remove(&(tp.topic.clone(), tp.partition));
                }
            }
            ConsumerEvent::Records(_) => {
                commit_written(&consumer, &mut uncommitted)
                    .await
                    .map_err(failed)?;
            }
        }
    }
    if !uncommitted.is_empty()
        && let Err(e) = consumer.commit(&offsets_of(&uncommitted)).await
    {
        tracing::warn!(error = %e, "the last written records' offsets are not committed");
    }
    consumer.close(Duration::from_secs(5)).await;
    drop(progress);
    let (records, bytes) = counters.get();
    let line = summary("consumed", records, bytes, started.elapsed());
    if interrupted {
        return Err(CliError::new(
            ExitCode::Interrupted,
            format!("interrupted; {line}"),
        ));
    }
    eprintln!("{line}");
    if let Some(o) = json_output
        && o.failed > 0
    {
        return Err(CliError::failure(format!(
            "{} record(s) did not decode (each named above)",
            o.failed
        )));
    }
    Ok(())
}

/// The offsets of `written` as a commit takes them.
fn offsets_of(written: &BTreeMap<(Arc<str>, i32), i64>) -> Vec<(TopicPartition, i64)> {
    written
        .iter()
        .map(|((t, p), o)| (TopicPartition::new(t.clone(), *p), *o))
        .collect()
}

/// Commits the offsets of the records written so far, if any. A commit
/// refused with REBALANCE_IN_PROGRESS (a classic member rejoining the
/// group, as Java's `RebalanceInProgressException`) keeps them for the
/// commit after the next poll; any other failure is returned.
async fn commit_written(
    consumer: &GroupConsumer,
    written: &mut BTreeMap<(Arc<str>, i32), i64>,
) -> Result<(), kafka_consumer::GroupError> {
    if written.is_empty() {
        return Ok(());
    }
    match consumer.commit(&offsets_of(written)).await {
        Ok(()) => {
            written.clear();
            Ok(())
        }
        Err(kafka_consumer::GroupError::Commit {
            error: kafka_proto::ErrorCode::RebalanceInProgress,
            ..
        }) => {
            tracing::debug!("commit deferred: the member is rejoining the group");
            Ok(())
        }
        Err(e) => Err(e),
    }
}

pub const CONSUME_HELP: &str = "\
Where to start (-o/--offset, in every partition read):
  beginning | end   the log start, or the end (read_committed: the last
                    stable offset); earliest/latest are accepted too
  N                 offset N
  -N                N records before the end (not before the log start)
  s@UNIX_MS         the first record with a timestamp at or after UNIX_MS
                    (ListOffsets by timestamp; the end if there is none)

The default is the beginning, unlike kafka-console-consumer's (the end
unless --from-beginning). A position that leaves the log while reading
(retention or DeleteRecords passed it) moves to the log start, or as
-X auto.offset.reset=earliest|latest|by_duration:<ISO-8601>|none says; under
none the command stops with exit 1, naming the partition and offsets.

With --group GROUP the command is a member of that consumer group: Kafka's
group coordinator splits the partitions between the members (run several),
each resumes at the group's committed offset (-o beginning|end for a
partition without one), and the offsets of the records written are committed
after each write and before a partition is given up (not -p, -e).

When to stop: -e/--exit-at-end stops at the end offsets read at start (the
high watermark, or the last stable offset under read_committed); -c/--count N
after N records; --timeout-ms once no record arrived for that long. Without
any of them the command follows the topic until Ctrl-C.

Registry formats (--value-format, --key-format: avro, protobuf, json, string,
bytes): each record prints as one JSON line, what `produce --value-format`
reads: the decoded value (null for a tombstone), or {\"key\": K, \"value\": V}
with --key-format. Avro prints the plain document (a union as its value,
bytes as U+0000..U+00FF characters); Protobuf the Protobuf JSON mapping
with the .proto's field names, 64-bit integers as numbers and default values
included; string a JSON string; bytes base64. The writer's schema is fetched
by the id in each record (--schema-registry URL or -X schema.registry.url,
with Confluent's settings as -X keys: basic.auth.user.info,
bearer.auth.token, schema.registry.ssl.*, ...). A record that does not decode
(unknown schema id, not a registry frame, bytes that do not match their
schema, the registry unreachable) is reported on stderr as a typed error
naming its topic, partition and offset; reading goes on, and the command
exits 1 at the end saying how many failed. --stop-on-error stops at the
first one (exit 1; with --group the records printed before it are
committed, that record is not).

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

/// `consume` options.
#[derive(Debug, clap::Args)]
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
    /// Decode each value in this format and print it as one JSON line
    /// (see below).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub value_format: Option<Format>,
    /// Decode each key in this format; each line is then {"key": K, "value": V}.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub key_format: Option<Format>,
    /// The schema registry (Confluent's REST API): -X schema.registry.url.
    #[arg(long, value_name = "URL")]
    pub schema_registry: Option<String>,
    /// Stop (exit 1) at the first record that does not decode, instead of
    /// reporting it on stderr and going on.
    #[arg(long)]
    pub stop_on_error: bool,
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

pub fn parse_format(s: &str) -> Result<OutputFormat, String> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use kafka_proto::record::RecordHeader;

    #[test]
    fn formats() {
        let r = ConsumerRecord {
            topic: "t\"".into(),
            partition: 1,
            offset: 7,
            timestamp: 99,
            timestamp_type: TimestampType::Create,
            key: Some(Bytes::from_static(b"k")),
            value: Some(Bytes::from_static(&[0xff])),
            headers: vec![RecordHeader {
                key: "h".into(),
                value: None,
            }],
            producer_id: -1,
            producer_epoch: -1,
            is_transactional: false,
            leader_epoch: None,
        };
        let mut b = Vec::new();
        format_record(&mut b, &r, &OutputFormat::Json, None);
        assert_eq!(
            String::from_utf8(b).unwrap(),
            "{\"topic\":\"t\\\"\",\"partition\":1,\"offset\":7,\"timestamp\":99,\"timestamp_type\":\"create\",\"key\":\"k\",\"value\":{\"base64\":\"/w==\"},\"headers\":[{\"key\":\"h\",\"value\":null}]}\n"
        );
        let mut b = Vec::new();
        format_record(&mut b, &r, &OutputFormat::KeyValue, Some(b"="));
        assert_eq!(b, b"k=\xff\n");
        let mut b = Vec::new();
        format_record(&mut b, &r, &OutputFormat::LengthDelimited, None);
        assert_eq!(b, b"\0\0\0\x01\xff");
        let mut b = Vec::new();
        format_record(&mut b, &r, &OutputFormat::LengthDelimited, Some(b"::"));
        assert_eq!(b, b"\0\0\0\x04k::\xff");
        let null = ConsumerRecord {
            key: None,
            value: None,
            ..r.clone()
        };
        let mut b = Vec::new();
        format_record(&mut b, &null, &OutputFormat::LengthDelimited, Some(b"::"));
        assert_eq!(b, (-1i32).to_be_bytes());
        let t = parse_template("%t|%p|%o|%T|%k|%K|%s|%S|%h|%R\\n").unwrap();
        let mut b = Vec::new();
        format_record(&mut b, &r, &OutputFormat::Template(t.clone()), None);
        assert_eq!(b, b"t\"|1|7|99|k|1|\xff|1|h|\0\0\0\x01\n");
        let mut b = Vec::new();
        format_record(&mut b, &null, &OutputFormat::Template(t), None);
        assert_eq!(b, b"t\"|1|7|99||-1||-1|h|\xff\xff\xff\xff\n");
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
}
