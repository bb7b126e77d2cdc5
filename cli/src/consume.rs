//! `consume`: a topic's records to stdout with the read_committed-capable
//! [`Reader`].

use crate::args::{ConsumeArgs, FromArg, Isolation, OutputFormat};
use crate::common::{Globals, partitions};
use crate::error::{CliError, CliResult, ExitCode};
use crate::output::{Counters, Progress, json_bytes, json_str, summary};
use kafka_producer::reader::{ConsumerRecord, IsolationLevel, Offset, Reader, ReaderConfig};
use kafka_proto::record::TimestampType;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Formats one record (with its trailing newline) into `out`.
pub fn format_record(out: &mut Vec<u8>, r: &ConsumerRecord, format: OutputFormat, sep: &[u8]) {
    match format {
        OutputFormat::Value => {
            out.extend_from_slice(r.value.as_deref().unwrap_or_default());
        }
        OutputFormat::KeyValue => {
            out.extend_from_slice(r.key.as_deref().unwrap_or_default());
            out.extend_from_slice(sep);
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

/// Runs `consume`.
pub async fn run(g: &Globals, args: ConsumeArgs) -> CliResult<()> {
    crate::common::check_topic(&args.topic)?;
    let started = Instant::now();
    let cluster = g.cluster().await?;
    let parts = partitions(&cluster, &args.topic, &args.partitions).await?;
    let isolation = match args.isolation {
        Isolation::ReadCommitted => IsolationLevel::ReadCommitted,
        Isolation::ReadUncommitted => IsolationLevel::ReadUncommitted,
    };
    let offset = match args.from {
        FromArg::Earliest => Offset::Earliest,
        FromArg::Latest => Offset::Latest,
        FromArg::Offset(o) => Offset::At(o),
    };
    let config = ReaderConfig {
        isolation,
        auto_offset_reset: Some(offset),
        ..ReaderConfig::default()
    };
    let mut reader = Reader::new(cluster, config);
    reader.assign(&args.topic, &parts);
    for p in &parts {
        reader.seek(&args.topic, *p, offset).await?;
    }
    let counters = Arc::new(Counters::default());
    let progress = Progress::start("consumed", counters.clone());
    let idle = args.timeout_ms.map(Duration::from_millis);
    let mut last_record = Instant::now();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(256 * 1024, stdout.lock());
    let mut buf = Vec::with_capacity(64 * 1024);
    let sep = args.key_separator.as_bytes();
    let mut interrupted = false;
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    'outer: loop {
        if args.count.is_some_and(|c| counters.get().0 >= c) {
            break;
        }
        let wait = match idle {
            Some(idle) => {
                let left = idle.saturating_sub(last_record.elapsed());
                if left.is_zero() {
                    break;
                }
                left.min(Duration::from_secs(1))
            }
            None => Duration::from_secs(1),
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
            format_record(&mut buf, r, args.format, sep);
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
    Ok(())
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
        format_record(&mut b, &r, OutputFormat::Json, b"\t");
        assert_eq!(
            String::from_utf8(b).unwrap(),
            "{\"topic\":\"t\\\"\",\"partition\":1,\"offset\":7,\"timestamp\":99,\"timestamp_type\":\"create\",\"key\":\"k\",\"value\":{\"base64\":\"/w==\"},\"headers\":[{\"key\":\"h\",\"value\":null}]}\n"
        );
        let mut b = Vec::new();
        format_record(&mut b, &r, OutputFormat::KeyValue, b"=");
        assert_eq!(b, b"k=\xff\n");
    }
}
