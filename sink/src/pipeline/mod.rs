//! Pipelines: a source, a transform and a sink run together with one
//! exactly-once guarantee.
//!
//! 1. [`consume_transform_produce`]: Kafka → transform → Kafka on a consumer
//!    group, the input offsets committed in the output transaction (the
//!    Kafka Streams EOS-v2 model): [`ConsumeTransformProduce`].
//! 2. `rabbitmq_bridge` (feature `rabbitmq`): RabbitMQ → transform → Kafka,
//!    the acknowledgements sent once the checkpoint holding the messages is
//!    committed to Kafka: `Bridge`.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! use kafka_consumer::GroupConsumerConfig;
//! use kafka_producer::{ProducerConfig, ProducerRecord};
//! use kafka_sink::{ConsumeTransformProduce, PipelineConfig};
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

pub mod consume_transform_produce;
#[cfg(feature = "rabbitmq")]
pub mod rabbitmq_bridge;

#[cfg(doc)]
use consume_transform_produce::ConsumeTransformProduce;
