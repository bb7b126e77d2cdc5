//! # kafka-eos
//!
//! Exactly-once Apache Kafka for Rust, without librdkafka and without C in
//! the default build. Add this one crate; its modules are the parts of the
//! project, each its own crate underneath:
//!
//! | module | crate | what it holds |
//! |---|---|---|
//! | [`producer`] | `kafka-producer` | the idempotent [`Producer`](producer::Producer) and the [`TransactionalProducer`](producer::TransactionalProducer) with the Java client's semantics (KIP-98, 360, 588, 890); prepared transactions resumed after a crash |
//! | [`consumer`] | `kafka-consumer` | the manual-assign consumer [`Reader`](consumer::Reader) and the consumer-group member [`GroupConsumer`](consumer::GroupConsumer) (KIP-848 and classic; KIP-447 metadata for transactions) |
//! | [`admin`] | `kafka-admin` | topics, configs, consumer groups and their offsets, transactions and producers |
//! | [`sink`] | `kafka-sink` | the two-phase-commit sink layer (Flink's `TwoPhaseCommitSinkFunction`), the checkpoint driver, the exactly-once Kafka sink, message-acknowledging sources, exactly-once consume-transform-produce |
//! | [`client`] | `kafka-client` | the connection and cluster layer every client stands on: [`ClientConfig`](client::ClientConfig), [`Cluster`](client::Cluster), TLS and SASL, and the types and errors they share |
//! | [`proto`] | `kafka-proto` | the sans-IO wire codec: one table per message, RecordBatch v2, CRC-32C, compression |
//! | `schema_registry` | `kafka-schema-registry` | Confluent Schema Registry serdes (cargo features `schema-registry`, `avro`, `protobuf`, `json`): the wire format, a cached registry client, Avro, Protobuf and JSON Schema byte-identical with Confluent's serializers |
//!
//! Cargo features: `gzip`, `snappy`, `lz4`, `zstd` (on by default, pure
//! Rust), `tls` (rustls with `ring`, which contains C), `metrics` (the
//! producer's metrics through the `metrics` facade), `rabbitmq` (the RabbitMQ
//! source and bridge of the sink layer), `schema-registry`, `avro`,
//! `protobuf`, `json` (Confluent Schema Registry serdes, pure Rust).
//!
//! ## Producer: a transaction
//!
//! Records sent between `begin_transaction` and `commit_transaction` become
//! visible to read_committed readers together, or not at all.
//!
//! ```no_run
//! use kafka_eos::producer::{ProducerConfig, ProducerRecord, TransactionalProducer};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! let config = ProducerConfig::from_properties([
//!     ("bootstrap.servers", "127.0.0.1:9092"),
//!     ("transactional.id", "orders-writer-1"),
//! ])?;
//! let producer = TransactionalProducer::connect(config).await?;
//! producer.init_transactions().await?; // fences older producers with this id
//! producer.begin_transaction()?;
//! let sent = producer.send(ProducerRecord::new("orders").key("k").value("v"));
//! match producer.commit_transaction().await {
//!     Ok(()) => println!("offset {:?}", sent.await?.offset),
//!     Err(e) if e.is_abortable() => producer.abort_transaction().await?, // then redo the work
//!     Err(e) => return Err(e.into()), // fenced or fatal: close the producer
//! }
//! producer.close(std::time::Duration::from_secs(10)).await?;
//! # Ok(()) }
//! ```
//!
//! ## Consumer: a member of a consumer group
//!
//! ```no_run
//! use kafka_eos::consumer::{ConsumerEvent, GroupConsumer, GroupConsumerConfig};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! let config = GroupConsumerConfig::from_properties([
//!     ("bootstrap.servers", "127.0.0.1:9092"),
//!     ("group.id", "billing"),
//!     ("isolation.level", "read_committed"),
//! ])?;
//! let mut consumer = GroupConsumer::subscribe(config, ["orders"]).await?;
//! if let ConsumerEvent::Records(records) = consumer.poll(std::time::Duration::from_secs(1)).await? {
//!     println!("{} records", records.len());
//!     consumer.commit_positions().await?;
//! }
//! # Ok(()) }
//! ```
//!
//! ## Admin: a topic
//!
//! ```no_run
//! use kafka_eos::admin::{self, NewTopic};
//! use kafka_eos::client::{Cluster, ClusterConfig};
//! use std::time::Duration;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! let cluster = Cluster::connect(ClusterConfig::new("127.0.0.1:9092")).await?;
//! let topic = NewTopic::new("orders").with_partitions(6);
//! let t = admin::ensure_topic(&cluster, &topic, Duration::from_secs(30)).await?;
//! println!("created: {}", t.created);
//! # Ok(()) }
//! ```
//!
//! ## Sink: the two-phase-commit protocol
//!
//! A checkpoint pre-commits the open transaction; its completion commits
//! it. Here on the in-memory table (the Kafka sink, `sink::kafka`, runs the
//! same protocol on Kafka transactions):
//!
//! ```
//! use kafka_eos::sink::InMemoryTable;
//! use kafka_eos::sink::{RecordContext, TwoPhaseCommitSink};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! let mut sink = TwoPhaseCommitSink::new(InMemoryTable::new());
//! sink.initialize_state(None).await?;
//! sink.invoke("a", &RecordContext::default()).await?;
//! sink.snapshot_state(1).await?; // pre-committed, not visible yet
//! assert!(sink.handler().committed().is_empty());
//! sink.notify_checkpoint_complete(1).await?;
//! assert_eq!(sink.handler().committed(), ["a"]);
//! # Ok(()) }
//! ```
//!
//! ## Client: the settings every client shares
//!
//! ```
//! use kafka_eos::client::{ClientConfig, SecurityProtocol};
//!
//! let config = ClientConfig::from_properties([
//!     ("bootstrap.servers", "broker-1:9092,broker-2:9092"),
//!     ("client.id", "billing"),
//! ])
//! .unwrap();
//! assert_eq!(config.security_protocol, SecurityProtocol::Plaintext);
//! assert_eq!(config.cluster_config().bootstrap.len(), 2);
//! ```
//!
//! ## Proto: a message on the wire
//!
//! ```
//! use kafka_eos::proto::Message;
//! use kafka_eos::proto::messages::ApiVersionsRequest;
//!
//! let request = ApiVersionsRequest {
//!     client_software_name: "kafka-eos".into(),
//!     client_software_version: "0.1".into(),
//!     ..Default::default()
//! };
//! let bytes = request.encode_to_vec(3).unwrap();
//! assert_eq!(ApiVersionsRequest::decode(&bytes, 3).unwrap(), request);
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[doc(inline)]
pub use kafka_admin as admin;
#[doc(inline)]
pub use kafka_client as client;
#[doc(inline)]
pub use kafka_consumer as consumer;
#[doc(inline)]
pub use kafka_producer as producer;
#[doc(inline)]
pub use kafka_proto as proto;
#[cfg(feature = "schema-registry")]
#[doc(inline)]
pub use kafka_schema_registry as schema_registry;
#[doc(inline)]
pub use kafka_sink as sink;
