//! Topic creation (a CreateTopics request, no JVM) and the Java reference
//! tools, run from the cluster's own jars: the console consumer (to check
//! what a producer wrote, with either isolation level) and
//! `ProducerPerformance` (the benchmark baseline).

use crate::Result;
use crate::cluster::{KafkaCluster, tail};
use crate::error::HarnessError;
use kafka_proto::ErrorCode;
use kafka_proto::messages::{
    CreateTopicsRequest, CreateTopicsRequestCreatableTopic, MetadataRequest, MetadataRequestTopic,
};
use std::time::{Duration, Instant};

/// Captured result of a Java tool run.
#[derive(Debug, Clone)]
pub struct ToolOutput {
    /// Exit status 0.
    pub success: bool,
    /// Exit code, if the process exited normally.
    pub exit_code: Option<i32>,
    /// The harness killed the tool at its deadline.
    pub timed_out: bool,
    /// Raw standard output.
    pub stdout: Vec<u8>,
    /// Standard error (logging goes here at WARN level).
    pub stderr: String,
}

impl ToolOutput {
    /// Standard output as (lossy) UTF-8.
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    fn into_error(self, what: &str) -> HarnessError {
        HarnessError::Process {
            what: what.to_string(),
            message: format!(
                "exit code {:?}{}\nstdout tail:\n{}\nstderr tail:\n{}",
                self.exit_code,
                if self.timed_out { " (timed out)" } else { "" },
                tail(&self.stdout_text(), 20),
                tail(&self.stderr, 30)
            ),
        }
    }
}

/// Consumer isolation level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IsolationLevel {
    /// `read_committed`: only committed transactional records (up to the LSO).
    ReadCommitted,
    /// `read_uncommitted`: everything up to the high watermark.
    ReadUncommitted,
}

impl IsolationLevel {
    /// The consumer property value.
    pub fn as_str(self) -> &'static str {
        match self {
            IsolationLevel::ReadCommitted => "read_committed",
            IsolationLevel::ReadUncommitted => "read_uncommitted",
        }
    }
}

/// One record printed by the console consumer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumedRecord {
    /// Partition index.
    pub partition: i32,
    /// Offset.
    pub offset: i64,
    /// Key bytes (`None` for a null key).
    pub key: Option<Vec<u8>>,
    /// Value bytes (`None` for a null value / tombstone).
    pub value: Option<Vec<u8>>,
    /// Headers in order (a null header value is an empty vector).
    pub headers: Vec<(String, Vec<u8>)>,
}

/// Arguments of [`producer_performance`].
#[derive(Debug, Clone, Default)]
pub struct ProducerPerfArgs {
    /// Topic to write to (must exist).
    pub topic: String,
    /// Number of records.
    pub num_records: u64,
    /// Value size in bytes.
    pub record_size: usize,
    /// Records per second limit; -1 for unthrottled.
    pub throughput: i64,
    /// Transactional id (enables transactions).
    pub transactional_id: Option<String>,
    /// Transaction length in ms (enables transactions; Kafka's default 3000).
    pub transaction_duration_ms: Option<u64>,
    /// Extra producer properties (`acks`, `linger.ms`, ...).
    pub props: Vec<(String, String)>,
}

/// The final summary line of `ProducerPerformance`.
#[derive(Debug, Clone, PartialEq)]
pub struct ProducerPerfSummary {
    /// Records sent.
    pub records: u64,
    /// Records per second.
    pub records_per_sec: f64,
    /// MiB per second.
    pub mb_per_sec: f64,
    /// Average latency (ms).
    pub avg_latency_ms: f64,
    /// Maximum latency (ms).
    pub max_latency_ms: f64,
    /// Median latency (ms).
    pub p50: f64,
    /// 95th percentile latency (ms).
    pub p95: f64,
    /// 99th percentile latency (ms).
    pub p99: f64,
    /// 99.9th percentile latency (ms).
    pub p999: f64,
}

/// How one attempt of a retried operation failed: worth another try, or not.
enum Attempt {
    Retriable(HarnessError),
    Fatal(HarnessError),
}

/// Runs `attempt` until it succeeds, fails fatally or `timeout` passes
/// (backing off from 20 to 250 ms); the timeout error names `what` and the
/// last retriable error.
async fn retry_for<T>(
    what: impl Fn() -> String,
    timeout: Duration,
    mut attempt: impl AsyncFnMut() -> std::result::Result<T, Attempt>,
) -> Result<T> {
    let started = Instant::now();
    let mut backoff = Duration::from_millis(20);
    loop {
        let last = match attempt().await {
            Ok(v) => return Ok(v),
            Err(Attempt::Fatal(e)) => return Err(e),
            Err(Attempt::Retriable(e)) => e.to_string(),
        };
        if started.elapsed() >= timeout {
            return Err(HarnessError::Timeout {
                what: what(),
                elapsed: started.elapsed(),
                last,
            });
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_millis(250));
    }
}

const NULL_SENTINEL: &str = "\u{1}kafka-eos-null\u{1}";
const NULL_ESCAPED: &str = "\\x01kafka-eos-null\\x01";
const HEADER_SEPARATOR: char = '\u{1e}';

impl KafkaCluster {
    /// Creates a topic with a CreateTopics request (to the first running
    /// node, which forwards it to the controller) and waits until every
    /// node's metadata shows a leader for every partition. Retriable errors
    /// (no controller yet, a node still starting) are retried for 60 s; any
    /// other error, such as TOPIC_ALREADY_EXISTS, is returned.
    pub async fn create_topic(&self, name: &str, partitions: i32, replication: i16) -> Result<()> {
        let timeout = Duration::from_secs(60);
        let started = Instant::now();
        retry_for(
            || format!("CreateTopics {name}"),
            timeout,
            async || self.create_topic_once(name, partitions, replication).await,
        )
        .await?;
        self.wait_for_topic(name, partitions, timeout - started.elapsed().min(timeout))
            .await
    }

    /// One CreateTopics round trip to the first running node.
    async fn create_topic_once(
        &self,
        name: &str,
        partitions: i32,
        replication: i16,
    ) -> std::result::Result<(), Attempt> {
        let node = (0..self.node_count())
            .find(|&i| self.is_running(i))
            .ok_or_else(|| {
                Attempt::Fatal(HarnessError::Config(
                    "no node of the cluster is running".into(),
                ))
            })?;
        let mut conn = self
            .internal_connection(node)
            .await
            .map_err(Attempt::Retriable)?;
        let versions = conn.api_versions().await.map_err(Attempt::Retriable)?;
        let v = crate::wire::negotiate::<CreateTopicsRequest>(&versions).ok_or_else(|| {
            Attempt::Fatal(HarnessError::Protocol("no CreateTopics version".into()))
        })?;
        let req = CreateTopicsRequest {
            topics: vec![CreateTopicsRequestCreatableTopic {
                name: name.to_string(),
                num_partitions: partitions,
                replication_factor: replication,
                ..Default::default()
            }],
            timeout_ms: 30_000,
            ..Default::default()
        };
        let resp = conn.request(&req, v).await.map_err(Attempt::Retriable)?;
        let result = resp.topics.iter().find(|t| t.name == name).ok_or_else(|| {
            Attempt::Fatal(HarnessError::Protocol(format!(
                "CreateTopics answered without topic {name}"
            )))
        })?;
        let code = ErrorCode::from(result.error_code);
        if code == ErrorCode::None {
            return Ok(());
        }
        let err = HarnessError::Kafka {
            api: "CreateTopics",
            code: result.error_code,
            message: Some(format!(
                "topic {name}: {}",
                result.error_message.as_deref().unwrap_or("")
            )),
        };
        // Retriable per the Java client's `RetriableException` subclasses
        // (NOT_CONTROLLER, REQUEST_TIMED_OUT, ...), plus a controller that
        // has not yet seen enough brokers to place the replicas.
        if code.is_retriable() || code == ErrorCode::InvalidReplicationFactor {
            Err(Attempt::Retriable(err))
        } else {
            Err(Attempt::Fatal(err))
        }
    }

    /// Polls Metadata on every running node until topic `name` has
    /// `partitions` partitions, each with a leader.
    pub async fn wait_for_topic(
        &self,
        name: &str,
        partitions: i32,
        timeout: Duration,
    ) -> Result<()> {
        retry_for(
            || format!("topic {name} leaders"),
            timeout,
            async || {
                self.topic_ready_everywhere(name, partitions)
                    .await
                    .map_err(Attempt::Retriable)
            },
        )
        .await
    }

    async fn topic_ready_everywhere(&self, name: &str, partitions: i32) -> Result<()> {
        for (i, addr) in self.internal_bootstrap().split(',').enumerate() {
            if !self.is_running(i) {
                continue;
            }
            let mut conn = self.internal_connection(i).await?;
            let versions = conn.api_versions().await?;
            let v = crate::wire::negotiate::<MetadataRequest>(&versions)
                .ok_or_else(|| HarnessError::Protocol("no Metadata version".into()))?;
            let req = MetadataRequest {
                topics: Some(vec![MetadataRequestTopic {
                    name: Some(name.to_string()),
                    ..Default::default()
                }]),
                ..Default::default()
            };
            let md = conn.request(&req, v).await?;
            let t = md
                .topics
                .iter()
                .find(|t| t.name.as_deref() == Some(name))
                .ok_or_else(|| HarnessError::Protocol(format!("{addr}: topic {name} missing")))?;
            if t.error_code != 0 {
                return Err(HarnessError::Kafka {
                    api: "Metadata",
                    code: t.error_code,
                    message: Some(format!("{addr}: topic {name}")),
                });
            }
            let led = t
                .partitions
                .iter()
                .filter(|p| p.error_code == 0 && p.leader_id >= 0)
                .count();
            if led != partitions as usize {
                return Err(HarnessError::Protocol(format!(
                    "{addr}: {led}/{partitions} partitions of {name} have a leader"
                )));
            }
        }
        Ok(())
    }

    /// See [`console_consume`].
    pub async fn console_consume(
        &self,
        topic: &str,
        isolation: IsolationLevel,
        max_messages: usize,
        timeout: Duration,
    ) -> Result<Vec<ConsumedRecord>> {
        console_consume(self, topic, isolation, max_messages, timeout).await
    }

    /// See [`producer_performance`].
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// use kafka_testcontainers::ProducerPerfArgs;
    /// # let cluster = kafka_testcontainers::KafkaCluster::builder().start().await?;
    /// let args = ProducerPerfArgs {
    ///     topic: "bench".into(),
    ///     num_records: 10_000,
    ///     record_size: 100,
    ///     throughput: -1,
    ///     ..Default::default()
    /// };
    /// let summary = cluster.producer_performance(&args).await?;
    /// assert_eq!(summary.records, 10_000);
    /// # Ok(()) }
    /// ```
    pub async fn producer_performance(
        &self,
        args: &ProducerPerfArgs,
    ) -> Result<ProducerPerfSummary> {
        producer_performance(self, args).await
    }
}

/// Reads up to `max_messages` records of `topic` from the beginning with the
/// Java console consumer (`org.apache.kafka.tools.consumer.ConsoleConsumer`)
/// at `isolation`, stopping early when no record arrives for `timeout`.
/// Uses the INTERNAL listener (no SASL, no proxy).
///
/// Output is parsed unambiguously for keys and values (bytes are printed with
/// `BytesDeserializer`, i.e. printable ASCII except `\` verbatim and every
/// other byte as `\xHH`); a key or value equal to the bytes
/// `\x01kafka-eos-null\x01` reads back as `None`. Header keys are printed raw
/// and must not contain `:`, tab, newline or `\x1e`.
///
/// ```no_run
/// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
/// use kafka_testcontainers::{IsolationLevel, console_consume};
/// # use std::time::Duration;
/// # let cluster = kafka_testcontainers::KafkaCluster::builder().start().await?;
/// cluster.create_topic("orders", 1, 1).await?;
/// // ... a transactional producer writes and aborts ...
/// let visible = console_consume(
///     &cluster,
///     "orders",
///     IsolationLevel::ReadCommitted,
///     10,
///     Duration::from_secs(5),
/// )
/// .await?;
/// assert!(
///     visible.is_empty(),
///     "aborted records are invisible to read_committed"
/// );
/// # Ok(()) }
/// ```
pub async fn console_consume(
    cluster: &KafkaCluster,
    topic: &str,
    isolation: IsolationLevel,
    max_messages: usize,
    timeout: Duration,
) -> Result<Vec<ConsumedRecord>> {
    let kafka4 = cluster.version().is_kafka4();
    let (consumer_prop, formatter_prop) = if kafka4 {
        ("--command-property", "--formatter-property")
    } else {
        ("--consumer-property", "--property")
    };
    let bytes_de = "org.apache.kafka.common.serialization.BytesDeserializer";
    let mut args: Vec<String> = vec![
        "--bootstrap-server".into(),
        cluster.internal_bootstrap(),
        "--topic".into(),
        topic.into(),
        "--from-beginning".into(),
        "--max-messages".into(),
        max_messages.to_string(),
        "--timeout-ms".into(),
        timeout.as_millis().to_string(),
        consumer_prop.into(),
        format!("isolation.level={}", isolation.as_str()),
        consumer_prop.into(),
        "auto.offset.reset=earliest".into(),
    ];
    for p in [
        "print.partition=true".to_string(),
        "print.offset=true".into(),
        "print.headers=true".into(),
        "print.key=true".into(),
        "print.value=true".into(),
        "print.timestamp=false".into(),
        "key.separator=\t".into(),
        "line.separator=\n".into(),
        format!("headers.separator={HEADER_SEPARATOR}"),
        format!("null.literal={NULL_SENTINEL}"),
        format!("key.deserializer={bytes_de}"),
        format!("value.deserializer={bytes_de}"),
        format!("headers.deserializer={bytes_de}"),
    ] {
        args.push(formatter_prop.into());
        args.push(p);
    }
    let out = cluster
        .run_java(
            "org.apache.kafka.tools.consumer.ConsoleConsumer",
            &args,
            timeout + Duration::from_secs(60),
        )
        .await?;
    let text = out.stdout_text();
    let records = parse_console_output(&text)?;
    let timed_out_normally = out.stderr.contains("TimeoutException");
    if !out.success && !timed_out_normally {
        return Err(out.into_error(&format!("ConsoleConsumer {topic}")));
    }
    Ok(records)
}

/// Parses the console consumer's lines as configured by [`console_consume`].
pub fn parse_console_output(text: &str) -> Result<Vec<ConsumedRecord>> {
    let mut records = Vec::new();
    for line in text.lines() {
        if line.is_empty() || !line.starts_with("Partition:") {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        if fields.len() != 5 {
            return Err(HarnessError::Parse(format!(
                "expected 5 tab-separated fields, got {}: {line:?}",
                fields.len()
            )));
        }
        let partition = fields[0]
            .strip_prefix("Partition:")
            .and_then(|p| p.parse().ok())
            .ok_or_else(|| HarnessError::Parse(format!("bad partition in {line:?}")))?;
        let offset = fields[1]
            .strip_prefix("Offset:")
            .and_then(|p| p.parse().ok())
            .ok_or_else(|| HarnessError::Parse(format!("bad offset in {line:?}")))?;
        let mut headers = Vec::new();
        if fields[2] != "NO_HEADERS" {
            for h in fields[2].split(HEADER_SEPARATOR) {
                let (k, v) = h
                    .split_once(':')
                    .ok_or_else(|| HarnessError::Parse(format!("bad header {h:?}")))?;
                headers.push((k.to_string(), unescape(v)?.unwrap_or_default()));
            }
        }
        records.push(ConsumedRecord {
            partition,
            offset,
            key: unescape(fields[3])?,
            value: unescape(fields[4])?,
            headers,
        });
    }
    Ok(records)
}

/// Reverses Kafka's `Bytes.toString` escaping; the null sentinel is `None`.
fn unescape(s: &str) -> Result<Option<Vec<u8>>> {
    if s == NULL_ESCAPED {
        return Ok(None);
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' {
            let hex = b
                .get(i + 2..i + 4)
                .filter(|_| b.get(i + 1) == Some(&b'x'))
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| HarnessError::Parse(format!("bad escape in {s:?}")))?;
            out.push(hex);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Ok(Some(out))
}

/// Runs `org.apache.kafka.tools.ProducerPerformance` against the cluster's
/// client listener (the same path as a Rust producer using
/// [`KafkaCluster::bootstrap`]; SASL PLAIN settings are added automatically)
/// and parses its final summary line. The tool's JVM runs with the full JIT.
pub async fn producer_performance(
    cluster: &KafkaCluster,
    a: &ProducerPerfArgs,
) -> Result<ProducerPerfSummary> {
    let kafka4 = cluster.version().is_kafka4();
    let mut props = vec![format!("bootstrap.servers={}", cluster.bootstrap())];
    if let Some(sasl) = cluster.sasl() {
        let u = &sasl.users[0];
        props.push("security.protocol=SASL_PLAINTEXT".into());
        props.push("sasl.mechanism=PLAIN".into());
        props.push(format!(
            "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"{}\" password=\"{}\";",
            u.name, u.password
        ));
    }
    for (k, v) in &a.props {
        props.push(format!("{k}={v}"));
    }
    let mut args: Vec<String> = vec![
        "--topic".into(),
        a.topic.clone(),
        "--num-records".into(),
        a.num_records.to_string(),
        "--record-size".into(),
        a.record_size.to_string(),
        "--throughput".into(),
        a.throughput.to_string(),
    ];
    if let Some(id) = &a.transactional_id {
        args.push("--transactional-id".into());
        args.push(id.clone());
    }
    if let Some(ms) = a.transaction_duration_ms {
        args.push("--transaction-duration-ms".into());
        args.push(ms.to_string());
    }
    // Properties go through a file: the tool's `k=v` argument parser rejects
    // values containing '=' (such as sasl.jaas.config).
    static PERF_RUNS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = PERF_RUNS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let config = cluster
        .data_dir()
        .join(format!("producer-perf-{n}.properties"));
    let mut text = String::new();
    for p in &props {
        text.push_str(p);
        text.push('\n');
    }
    std::fs::write(&config, text).map_err(|e| HarnessError::io("writing producer config", e))?;
    args.push(if kafka4 {
        "--command-config".into()
    } else {
        "--producer.config".into()
    });
    args.push(config.display().to_string());
    let out = cluster
        .run_java_with(
            "org.apache.kafka.tools.ProducerPerformance",
            &args,
            Duration::from_secs(1800),
            false,
            "1g",
        )
        .await?;
    if !out.success {
        return Err(out.into_error("ProducerPerformance"));
    }
    let text = out.stdout_text();
    text.lines()
        .rev()
        .find(|l| l.contains("99.9th"))
        .ok_or_else(|| HarnessError::Parse(format!("no summary line in:\n{}", tail(&text, 10))))
        .and_then(parse_perf_summary)
}

/// Parses `N records sent, R records/sec (M MB/sec), A ms avg latency, X ms
/// max latency, P ms 50th, P ms 95th, P ms 99th, P ms 99.9th.`
pub fn parse_perf_summary(line: &str) -> Result<ProducerPerfSummary> {
    let bad = || HarnessError::Parse(format!("unexpected summary line {line:?}"));
    let num = |part: &str| -> Result<f64> {
        part.trim()
            .trim_start_matches('(')
            .split_whitespace()
            .next()
            .and_then(|n| n.parse::<f64>().ok())
            .ok_or_else(bad)
    };
    let parts: Vec<&str> = line.trim().trim_end_matches('.').split(", ").collect();
    if parts.len() != 8 {
        return Err(bad());
    }
    let (rate, mb) = parts[1].split_once('(').ok_or_else(bad)?;
    Ok(ProducerPerfSummary {
        records: num(parts[0])? as u64,
        records_per_sec: num(rate)?,
        mb_per_sec: num(mb)?,
        avg_latency_ms: num(parts[2])?,
        max_latency_ms: num(parts[3])?,
        p50: num(parts[4])?,
        p95: num(parts[5])?,
        p99: num(parts[6])?,
        p999: num(parts[7])?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_final_summary() {
        let s = parse_perf_summary("1000 records sent, 1858.736059 records/sec (0.18 MB/sec), 145.95 ms avg latency, 209.00 ms max latency, 169 ms 50th, 178 ms 95th, 209 ms 99th, 209 ms 99.9th.").unwrap();
        assert_eq!(s.records, 1000);
        assert!((s.records_per_sec - 1858.736059).abs() < 1e-6);
        assert!((s.mb_per_sec - 0.18).abs() < 1e-9);
        assert_eq!((s.avg_latency_ms, s.max_latency_ms), (145.95, 209.0));
        assert_eq!((s.p50, s.p95, s.p99, s.p999), (169.0, 178.0, 209.0, 209.0));
        assert!(parse_perf_summary("500 records sent, 99.9 records/sec").is_err());
    }

    #[test]
    fn parses_console_lines() {
        let text = "Partition:2\tOffset:7\tNO_HEADERS\t\\x01kafka-eos-null\\x01\tab\\x5Cc\\x0A\n\
                    Partition:0\tOffset:0\th1:v\\x00\u{1e}h2:\\x01kafka-eos-null\\x01\tk\t\n\
                    Processed a total of 2 messages\n";
        let r = parse_console_output(text).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].partition, 2);
        assert_eq!(r[0].offset, 7);
        assert_eq!(r[0].key, None);
        assert_eq!(r[0].value.as_deref(), Some(&b"ab\\c\n"[..]));
        assert_eq!(
            r[1].headers,
            vec![
                ("h1".to_string(), vec![b'v', 0]),
                ("h2".to_string(), vec![])
            ]
        );
        assert_eq!(r[1].key.as_deref(), Some(&b"k"[..]));
        assert_eq!(r[1].value.as_deref(), Some(&b""[..]));
    }

    #[test]
    fn a_null_value_is_a_tombstone() {
        let text = "Partition:1\tOffset:0\th1:v\tkey\t\\x01kafka-eos-null\\x01\n\
                    Processed a total of 1 messages\n";
        let records = parse_console_output(text).unwrap();
        assert_eq!(records.len(), 1);
        assert_eq!(records[0].headers, [("h1".to_string(), b"v".to_vec())]);
        assert_eq!(records[0].value, None);
    }

    #[test]
    fn stdout_text_is_the_captured_bytes_as_text() {
        let out = ToolOutput {
            success: true,
            exit_code: Some(0),
            timed_out: false,
            stdout: b"orders\n".to_vec(),
            stderr: String::new(),
        };
        assert_eq!(out.stdout_text(), "orders\n");
    }

    #[test]
    fn isolation_levels_are_javas_property_values() {
        assert_eq!(IsolationLevel::ReadCommitted.as_str(), "read_committed");
        assert_eq!(IsolationLevel::ReadUncommitted.as_str(), "read_uncommitted");
    }

    #[test]
    fn perf_args_leave_the_transaction_duration_to_kafka() {
        assert_eq!(ProducerPerfArgs::default().transaction_duration_ms, None);
    }
}
