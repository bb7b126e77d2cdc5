//! Pipelines: a source, a transform and a sink run together with one
//! exactly-once guarantee.
//!
//! 1. Kafka → transform → Kafka on a consumer
//!    group, the input offsets committed in the output transaction (the
//!    Kafka Streams EOS-v2 model): [`ConsumeTransformProduce`].
//!    Each record goes through a [`RecordTransform`]: a closure, or
//!    kafka-schema-registry's `RegistryTransform`, which decodes with a
//!    schema registry, maps and encodes again.
//! 2. (feature `rabbitmq`): RabbitMQ → transform → Kafka,
//!    the acknowledgements sent once the checkpoint holding the messages is
//!    committed to Kafka: `Bridge`.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! use kafka_consumer::GroupConsumerConfig;
//! use kafka_producer::{ProducerConfig, ProducerRecord};
//! use kafka_sink::pipeline::{ConsumeTransformProduce, PipelineConfig};
//! use std::time::Duration;
//!
//! let consumer = GroupConsumerConfig::from_properties([
//!     ("bootstrap.servers", "127.0.0.1:9092"),
//!     ("group.id", "orders-copier"),
//!     ("isolation.level", "read_committed"),
//! ])?;
//! let producer = ProducerConfig::from_properties([
//!     ("bootstrap.servers", "127.0.0.1:9092"),
//!     ("transactional.id", "orders-copier-1"),
//! ])?;
//! let copy = |r: &kafka_consumer::ConsumerRecord| {
//!     vec![ProducerRecord::new("orders-copy").value(r.value.clone().unwrap_or_default())]
//! };
//! let mut pipeline =
//!     ConsumeTransformProduce::connect(consumer, &["orders"], producer, copy, PipelineConfig::default())
//!         .await?;
//! pipeline.step(Duration::from_millis(500)).await?;
//! # Ok(())
//! # }
//! ```

mod consume_transform_produce;
#[cfg(feature = "rabbitmq")]
mod rabbitmq_bridge;
mod transform;

pub use consume_transform_produce::{
    ConsumeTransformProduce, MAX_PRODUCER_RESTARTS, PipelineConfig, PipelineError, PipelineStats,
};
#[cfg(feature = "rabbitmq")]
pub use rabbitmq_bridge::{
    Bridge, BridgeConfig, BridgeError, BridgeEvent, BridgeReport, BridgeStats, DEDUP_UID,
    DEFAULT_BRIDGE_TRANSACTION_TIMEOUT, DEFAULT_CHECKPOINT_INTERVAL, DEFAULT_DEDUP_WINDOW,
    EventHook, SINK_UID, SOURCE_UID, StopReason, Transform,
};
pub use transform::RecordTransform;
