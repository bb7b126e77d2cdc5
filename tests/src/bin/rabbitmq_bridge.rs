//! An exactly-once RabbitMQ queue → Kafka topic bridge
//! ([`kafka_sink::pipeline::Bridge`]) as a program that
//! `tests/tests/sink_bridge_soak.rs` SIGKILLs repeatedly. Needs `--features
//! rabbitmq`. (`examples/rabbitmq_kafka_bridge.rs` is the user-facing
//! example of the bridge; the CLI's `kafka-eos bridge` the ready-made tool.)
//!
//! ```text
//! rabbitmq_bridge --amqp URL --queue QUEUE --bootstrap HOST:PORT --topic TOPIC
//!                 --checkpoint-dir DIR [--interval-ms 1000] [--idle-exit-ms N]
//!                 [--prefetch 256] [--transactional-id-prefix P]
//!                 [--dedup-window 10000] [--transaction-timeout-ms 600000]
//! ```
//!
//! Each message becomes one record keyed by its correlation id with the
//! message body as value. Progress goes to stdout, one line per event:
//!
//! ```text
//! started restored=none
//! durable checkpoint=1
//! checkpoint=1 messages=.. records=.. duplicates=.. published_duplicates=.. redelivered=.. acknowledged=.. rejected=.. reconnects=..
//! stopping reason=Idle
//! done reason=Idle last_checkpoint=7 messages=.. ...
//! ```
//!
//! It exits 0 after `--idle-exit-ms` without deliveries or on SIGINT /
//! SIGTERM (both after a final checkpoint), 1 on an error (restart it on the
//! same checkpoint directory to recover), 2 on bad arguments.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use kafka_sink::kafka::KafkaSinkRecord;
use kafka_sink::pipeline::{Bridge, BridgeConfig, BridgeEvent, BridgeStats};

const USAGE: &str = "usage: rabbitmq_bridge --amqp URL --queue QUEUE --bootstrap HOST:PORT \
--topic TOPIC --checkpoint-dir DIR [--interval-ms MS] [--idle-exit-ms MS] [--prefetch N] \
[--transactional-id-prefix P] [--dedup-window N] [--transaction-timeout-ms MS]";

#[derive(Debug, Default)]
struct Args {
    amqp: Option<String>,
    queue: Option<String>,
    bootstrap: Option<String>,
    topic: Option<String>,
    checkpoint_dir: Option<String>,
    interval_ms: u64,
    idle_exit_ms: Option<u64>,
    prefetch: Option<u16>,
    prefix: Option<String>,
    dedup_window: Option<usize>,
    transaction_timeout_ms: Option<u64>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        interval_ms: 1000,
        ..Args::default()
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        fn num<T: std::str::FromStr>(flag: &str, v: String) -> Result<T, String> {
            v.parse().map_err(|_| format!("{flag}: not a number: {v}"))
        }
        match flag.as_str() {
            "--amqp" => args.amqp = Some(value()?),
            "--queue" => args.queue = Some(value()?),
            "--bootstrap" => args.bootstrap = Some(value()?),
            "--topic" => args.topic = Some(value()?),
            "--checkpoint-dir" => args.checkpoint_dir = Some(value()?),
            "--interval-ms" => args.interval_ms = num(&flag, value()?)?,
            "--idle-exit-ms" => args.idle_exit_ms = Some(num(&flag, value()?)?),
            "--prefetch" => args.prefetch = Some(num(&flag, value()?)?),
            "--transactional-id-prefix" => args.prefix = Some(value()?),
            "--dedup-window" => args.dedup_window = Some(num(&flag, value()?)?),
            "--transaction-timeout-ms" => args.transaction_timeout_ms = Some(num(&flag, value()?)?),
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(args)
}

/// One line to stdout, flushed at once (a supervisor may kill us any time).
fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn counters(s: &BridgeStats) -> String {
    format!(
        "messages={} records={} duplicates={} published_duplicates={} redelivered={} \
         acknowledged={} rejected={} reconnects={} acknowledge_retries={}",
        s.messages,
        s.records,
        s.source.duplicates,
        s.published_duplicates,
        s.redelivered,
        s.source.acknowledged,
        s.source.rejected,
        s.source.reconnects,
        s.acknowledge_retries,
    )
}

async fn shutdown_signal() {
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

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("{e}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let (Some(amqp), Some(queue), Some(bootstrap), Some(topic), Some(dir)) = (
        args.amqp,
        args.queue,
        args.bootstrap,
        args.topic,
        args.checkpoint_dir,
    ) else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let mut config = BridgeConfig::new(amqp, queue, &bootstrap, topic, dir);
    config.checkpoint_interval = Duration::from_millis(args.interval_ms.max(1));
    config.idle_timeout = args.idle_exit_ms.map(Duration::from_millis);
    if let Some(p) = args.prefetch {
        config.source.prefetch_count = p;
    }
    if let Some(p) = args.prefix {
        config.sink.transactional_id_prefix = Some(p);
    }
    if let Some(w) = args.dedup_window {
        config.dedup_window = w;
    }
    if let Some(ms) = args.transaction_timeout_ms {
        config.sink.transaction_timeout = Duration::from_millis(ms);
    }

    let bridge = Bridge::new(config, |m| {
        let key = m.correlation_id.unwrap_or_default();
        vec![KafkaSinkRecord::keyed(key, m.body)]
    })
    .on_event(|event| match event {
        BridgeEvent::Started { checkpoint_id } => say(&format!(
            "started restored={}",
            checkpoint_id.map_or("none".to_string(), |id| id.to_string())
        )),
        BridgeEvent::CheckpointDurable { checkpoint_id } => {
            say(&format!("durable checkpoint={checkpoint_id}"))
        }
        BridgeEvent::CheckpointComplete {
            checkpoint_id,
            stats,
        } => say(&format!("checkpoint={checkpoint_id} {}", counters(stats))),
        BridgeEvent::Stopping { reason } => say(&format!("stopping reason={reason:?}")),
        _ => {}
    });
    match bridge.run(shutdown_signal()).await {
        Ok(report) => {
            say(&format!(
                "done reason={:?} last_checkpoint={} {}",
                report.reason,
                report
                    .last_checkpoint
                    .map_or("none".to_string(), |id| id.to_string()),
                counters(&report.stats)
            ));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("rabbitmq_bridge failed: {e}");
            ExitCode::FAILURE
        }
    }
}
