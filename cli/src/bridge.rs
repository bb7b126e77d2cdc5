//! `bridge`: the exactly-once RabbitMQ → Kafka bridge
//! ([`kafka_sink::pipeline::Bridge`]) from the command line, with a progress
//! line, a summary, and Ctrl-C/SIGTERM stopping after a final checkpoint.

use crate::args::{PartitionerArg, parse_partitioner};
use crate::common::{Globals, partition_count};
use crate::error::{CliError, CliResult, ExitCode};
use crate::output::{note, status};
use kafka_producer::PartitionerChoice;
use kafka_sink::kafka::KafkaSinkRecord;
use kafka_sink::pipeline::{Bridge, BridgeConfig, BridgeError, BridgeEvent, BridgeStats};
use kafka_sink::source::RabbitMqSourceError;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// `host:port` of an `amqp://[user[:password]@]host[:port][/vhost]` URI.
pub fn amqp_host_port(uri: &str) -> Result<String, String> {
    let rest = uri
        .strip_prefix("amqp://")
        .ok_or_else(|| format!("{uri:?} is not an amqp:// URI (amqps:// is not supported)"))?;
    let authority = rest.split(['/', '?']).next().unwrap_or("");
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (host, port) = match host_port.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || host_port.starts_with('[') => {
            let port: u16 = p
                .parse()
                .map_err(|_| format!("bad port {p:?} in {uri:?}"))?;
            (h, port)
        }
        _ => (host_port, 5672),
    };
    let host = if host.is_empty() { "localhost" } else { host };
    Ok(format!("{host}:{port}"))
}

fn counters(s: &BridgeStats) -> String {
    format!(
        "{} messages -> {} records, {} checkpoints, {} duplicates dropped, {} redelivered",
        s.messages,
        s.records,
        s.checkpoints,
        s.source.duplicates + s.published_duplicates,
        s.redelivered
    )
}

fn bridge_error(e: BridgeError, amqp: &str) -> CliError {
    match &e {
        BridgeError::Config(_) => CliError::usage(e.to_string()),
        BridgeError::Source(RabbitMqSourceError::Connect { .. }) => CliError::new(
            ExitCode::Unreachable,
            format!("{e}\nhint: check --amqp ({amqp}) and that RabbitMQ is running"),
        ),
        _ => CliError::failure(format!(
            "{e}\nhint: restart with the same --checkpoint-dir and --transactional-id-prefix \
             to resume from the last checkpoint"
        )),
    }
}

/// Completes on the first Ctrl-C or SIGTERM.
pub(crate) async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// Runs `bridge`.
pub async fn run(g: &Globals, a: BridgeArgs) -> CliResult<()> {
    crate::common::check_topic(&a.topic)?;
    let started = Instant::now();
    if a.prefetch == 0 {
        return Err(CliError::usage("--prefetch must be at least 1"));
    }
    if a.checkpoint_interval_ms == 0 {
        return Err(CliError::usage(
            "--checkpoint-interval-ms must be at least 1",
        ));
    }
    let mut producer = g.config(&[])?;
    if let Some(p) = a.partitioner {
        // Both would choose the partitioner: refuse rather than drop one.
        if let Some((k, v)) = g
            .props
            .iter()
            .find(|(k, _)| k == "partitioner.class" || k == "partitioner.ignore.keys")
        {
            return Err(CliError::usage(format!(
                "--partitioner and -X {k}={v} both choose the partitioner; give only one"
            )));
        }
        producer.partitioner = match p {
            PartitionerArg::Default => PartitionerChoice::Default,
            PartitionerArg::RoundRobin => PartitionerChoice::RoundRobin,
            PartitionerArg::KeyHash => PartitionerChoice::KeyHash,
            PartitionerArg::Fixed(n) => PartitionerChoice::Fixed(n),
        };
    }
    let addr = amqp_host_port(&a.amqp).map_err(|e| CliError::usage(format!("--amqp: {e}")))?;
    // Kafka first: an unreachable broker or a missing topic fails fast.
    let cluster = g.cluster().await?;
    partition_count(&cluster, &a.topic).await?;
    cluster.close();
    // RabbitMQ: a plain TCP check so a wrong address fails in seconds, not
    // after the source's reconnect timeout.
    match tokio::time::timeout(
        Duration::from_secs(5),
        tokio::net::TcpStream::connect(&addr),
    )
    .await
    {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => {
            return Err(CliError::new(
                ExitCode::Unreachable,
                format!(
                    "cannot reach RabbitMQ at {addr}: {e}\nhint: check --amqp (or \
                     KAFKA_EOS_AMQP) and that RabbitMQ is running"
                ),
            ));
        }
        Err(_) => {
            return Err(CliError::new(
                ExitCode::Unreachable,
                format!("cannot reach RabbitMQ at {addr}: timed out after 5 s\nhint: check --amqp"),
            ));
        }
    }

    let mut config = BridgeConfig::new(
        a.amqp.clone(),
        a.queue.clone(),
        &g.bootstrap,
        a.topic.clone(),
        a.checkpoint_dir.clone(),
    );
    // The only semantic: the bridge runs the sink in EXACTLY_ONCE.
    let BridgeSemantic::ExactlyOnce = a.semantic;
    let prefix = config.sink.transactional_id_prefix.clone();
    let timeout = config.sink.transaction_timeout;
    config.sink.producer = producer;
    config.sink.transactional_id_prefix = a.transactional_id_prefix.clone().or(prefix);
    config.sink.transaction_timeout = a
        .transaction_timeout_ms
        .map_or(timeout, Duration::from_millis);
    config.checkpoint_interval = Duration::from_millis(a.checkpoint_interval_ms);
    config.idle_timeout = a.idle_exit_ms.map(Duration::from_millis);
    config.dedup_window = a.dedup_window;
    config.source.prefetch_count = a.prefetch;
    config.source.reconnect_timeout = Duration::from_millis(a.reconnect_timeout_ms);
    let prefix = config
        .sink
        .transactional_id_prefix
        .clone()
        .unwrap_or_default();
    note(&format!(
        "bridge: RabbitMQ {addr} queue {:?} -> Kafka {} topic {:?}, exactly once \
         (transactional ids {prefix}-*, checkpoints in {}, every {} ms, partitioner {:?}); \
         Ctrl-C stops after a final checkpoint",
        a.queue,
        g.bootstrap,
        a.topic,
        a.checkpoint_dir.display(),
        a.checkpoint_interval_ms,
        config.sink.producer.partitioner
    ));

    let latest: Arc<Mutex<Option<(u64, BridgeStats)>>> = Arc::default();
    let seen = latest.clone();
    let bridge = Bridge::new(config, |m| {
        let key = m.correlation_id.unwrap_or_default();
        vec![KafkaSinkRecord::keyed(key, m.body)]
    })
    .on_event(move |event| match event {
        BridgeEvent::Started { checkpoint_id } => note(&format!(
            "bridge: started ({})",
            checkpoint_id.map_or("fresh start".to_string(), |id| format!(
                "resumed from checkpoint {id}"
            ))
        )),
        BridgeEvent::CheckpointComplete {
            checkpoint_id,
            stats,
        } => {
            status(&format!(
                "checkpoint {checkpoint_id}: {} ({:.0} s)",
                counters(stats),
                started.elapsed().as_secs_f64()
            ));
            if let Ok(mut l) = seen.lock() {
                *l = Some((*checkpoint_id, *stats));
            }
        }
        BridgeEvent::Stopping { reason } => note(&format!(
            "bridge: stopping ({reason:?}), taking a final checkpoint"
        )),
        _ => {}
    });

    // A second Ctrl-C while the final checkpoint runs exits at once.
    let (stopping_tx, stopping_rx) = tokio::sync::oneshot::channel::<()>();
    let shutdown = async move {
        shutdown_signal().await;
        let _ = stopping_tx.send(());
    };
    let second = async move {
        if stopping_rx.await.is_ok() {
            let _ = tokio::signal::ctrl_c().await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    let result = tokio::select! {
        r = bridge.run(shutdown) => r,
        _ = second => {
            return Err(CliError::new(
                ExitCode::Interrupted,
                "interrupted during the final checkpoint; the next start with the same \
                 --checkpoint-dir recovers",
            ));
        }
    };
    status("");
    let report = result.map_err(|e| {
        let last = latest.lock().ok().and_then(|l| {
            l.as_ref()
                .map(|(id, s)| format!(" (last checkpoint {id}: {})", counters(s)))
        });
        let mut err = bridge_error(e, &a.amqp);
        if let Some(l) = last {
            err.message.push_str(&l);
        }
        err
    })?;
    println!(
        "bridge stopped ({:?}) after {:.1} s: {}; {}last checkpoint {}",
        report.reason,
        started.elapsed().as_secs_f64(),
        counters(&report.stats),
        report
            .restored_checkpoint
            .map_or(String::new(), |id| format!("resumed from {id}, ")),
        report
            .last_checkpoint
            .map_or("none".to_string(), |id| id.to_string()),
    );
    Ok(())
}

pub const BRIDGE_HELP: &str = "\
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

/// `bridge` options.
#[derive(Debug, clap::Args)]
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
    pub checkpoint_dir: std::path::PathBuf,
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BridgeSemantic {
    /// Kafka transactions committed per checkpoint; RabbitMQ acknowledged after.
    ExactlyOnce,
}

#[cfg(test)]
mod tests {
    use super::amqp_host_port;

    #[test]
    fn amqp_addresses() {
        assert_eq!(
            amqp_host_port("amqp://guest:guest@127.0.0.1:5673/%2f").unwrap(),
            "127.0.0.1:5673"
        );
        assert_eq!(amqp_host_port("amqp://rabbit").unwrap(), "rabbit:5672");
        assert_eq!(amqp_host_port("amqp://u@h:1?x=y").unwrap(), "h:1");
        assert!(amqp_host_port("http://h").is_err());
        assert!(amqp_host_port("amqp://h:port").is_err());
    }
}
