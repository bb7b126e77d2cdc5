//! The exactly-once RabbitMQ → Kafka bridge ([`Bridge`]): publish messages
//! (a few of them twice, as a publisher retry would) to a RabbitMQ queue,
//! run the bridge until the queue is idle, and check with a read_committed
//! reader that Kafka got each message exactly once.
//!
//! ```text
//! cargo run -p kafka-eos-examples --features rabbitmq --example rabbitmq_kafka_bridge -- \
//!     --bootstrap 127.0.0.1:9092 --amqp amqp://guest:guest@127.0.0.1:5672/%2f
//! ```
//!
//! The bootstrap defaults to `$KAFKA_EOS_BOOTSTRAP`, then `127.0.0.1:9092`;
//! the AMQP URL to `$KAFKA_EOS_AMQP`, then `amqp://guest:guest@127.0.0.1:5672/%2f`.
//! Queue and topic `example-bridge` (the topic has 1 partition, created when
//! missing; `--name-suffix S` makes both `example-bridge-S`), checkpoints in a fresh temporary directory. Exits with status 1
//! when anything fails or the check does not hold.
//!
//! Each message carries a correlation id (its unique id): the bridge
//! acknowledges a message to RabbitMQ only after the Kafka transaction that
//! holds it committed, and drops copies of ids it already wrote.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kafka_eos::client::{Cluster, ClusterConfig};
use kafka_eos::sink::kafka::KafkaSinkRecord;
use kafka_eos::sink::pipeline::{Bridge, BridgeConfig, BridgeEvent};
use kafka_eos_examples::support::{self, BoxError};
use lapin::options::{BasicPublishOptions, ConfirmSelectOptions, QueueDeclareOptions};
use lapin::types::FieldTable;
use lapin::{BasicProperties, Connection, ConnectionProperties};

const QUEUE: &str = "example-bridge";
const TOPIC: &str = "example-bridge";
const MESSAGES: usize = 50;
/// Messages published a second time (same correlation id).
const REPUBLISHED: usize = 5;

#[tokio::main]
async fn main() -> ExitCode {
    support::exit_code(run().await)
}

async fn run() -> Result<(), BoxError> {
    let bootstrap = support::bootstrap();
    let amqp = support::arg("amqp")
        .or_else(|| {
            std::env::var("KAFKA_EOS_AMQP")
                .ok()
                .filter(|s| !s.is_empty())
        })
        .unwrap_or_else(|| "amqp://guest:guest@127.0.0.1:5672/%2f".to_string());
    let (queue, topic) = (support::name(QUEUE), support::name(TOPIC));
    let cluster = Cluster::connect(ClusterConfig::new(&bootstrap)).await?;
    let partitions = support::ensure_topic(&cluster, &topic, 1).await?;
    let start = support::end_offsets(&cluster, &topic, &partitions).await?;

    // Unique ids for this run; the first REPUBLISHED are published twice.
    let run_id = SystemTime::now().duration_since(UNIX_EPOCH)?.as_millis();
    let ids: Vec<String> = (0..MESSAGES).map(|i| format!("{run_id}-{i:03}")).collect();
    let mut published = ids.clone();
    published.extend(ids.iter().take(REPUBLISHED).cloned());
    publish(&amqp, &queue, &published).await?;
    println!(
        "published {} messages ({REPUBLISHED} of them twice) to {queue}",
        published.len()
    );

    let dir = std::env::temp_dir().join(format!("kafka-eos-example-bridge-{}", std::process::id()));
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    let mut config = BridgeConfig::new(amqp, &queue, &bootstrap, &topic, &dir);
    config.checkpoint_interval = Duration::from_millis(200);
    config.idle_timeout = Some(Duration::from_secs(2));
    config.sink.transaction_timeout = Duration::from_secs(60);
    // One Kafka record per message: key = correlation id, value = body.
    let bridge = Bridge::new(config, |m| {
        vec![KafkaSinkRecord::keyed(
            m.correlation_id.unwrap_or_default(),
            m.body,
        )]
    })
    .on_event(|e| {
        if let BridgeEvent::CheckpointComplete {
            checkpoint_id,
            stats,
        } = e
        {
            println!(
                "checkpoint {checkpoint_id}: {} records written so far",
                stats.records
            );
        }
    });
    // Runs until no message arrived for 2 s, then takes a final checkpoint.
    let report = bridge.run(std::future::pending::<()>()).await?;
    std::fs::remove_dir_all(&dir)?;
    let stats = report.stats;
    println!(
        "bridge stopped ({:?}): {} messages written, {} duplicates dropped",
        report.reason,
        stats.messages,
        stats.published_duplicates + stats.source.duplicates
    );

    // Check: each id exactly once in Kafka.
    let read = support::read_committed_from(&cluster, &topic, &start).await?;
    let mut copies: BTreeMap<String, usize> = BTreeMap::new();
    for r in &read {
        let key = String::from_utf8_lossy(r.key.as_deref().unwrap_or_default()).into_owned();
        if key.starts_with(&format!("{run_id}-")) {
            *copies.entry(key).or_default() += 1;
        }
    }
    println!(
        "read_committed sees {} distinct ids of this run",
        copies.len()
    );
    support::check(
        copies.keys().eq(ids.iter()) && copies.values().all(|n| *n == 1),
        format!("each of the {MESSAGES} ids exactly once in {topic} (saw {copies:?})"),
    )?;
    println!("ok: {MESSAGES} messages, each in Kafka exactly once");
    Ok(())
}

/// Publishes persistent messages with publisher confirms to a durable queue.
async fn publish(url: &str, queue: &str, ids: &[String]) -> Result<(), BoxError> {
    let conn = Connection::connect(url, ConnectionProperties::default()).await?;
    let channel = conn.create_channel().await?;
    channel
        .confirm_select(ConfirmSelectOptions::default())
        .await?;
    let durable = QueueDeclareOptions {
        durable: true,
        ..QueueDeclareOptions::default()
    };
    channel
        .queue_declare(queue, durable, FieldTable::default())
        .await?;
    let mut confirms = Vec::new();
    for id in ids {
        let properties = BasicProperties::default()
            .with_delivery_mode(2) // persistent
            .with_correlation_id(id.as_str().into());
        let body = format!("payload of {id}");
        confirms.push(
            channel
                .basic_publish(
                    "",
                    queue,
                    BasicPublishOptions::default(),
                    body.as_bytes(),
                    properties,
                )
                .await?,
        );
    }
    for c in confirms {
        support::check(c.await?.is_ack(), "RabbitMQ confirmed the message")?;
    }
    conn.close(200, "published").await?;
    Ok(())
}
