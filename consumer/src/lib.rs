//! # kafka-consumer
//!
//! The Kafka consumers of kafka-eos. Most applications use them through the
//! `kafka-eos` crate's `consumer` module.
//!
//! - [`Reader`]: the manually assigned consumer — you name the
//!   partitions and offsets (Java's `KafkaConsumer` with `assign()`).
//!   Fetch to each leader, `read_committed` with Java's aborted-transaction
//!   filter, ListOffsets for seeks, a group's committed offsets.
//! - [`GroupConsumer`]: a member of a Kafka consumer group —
//!   the KIP-848 protocol (`group.protocol=consumer`, the broker assigns) or
//!   the classic one (JoinGroup / SyncGroup with the `range` and
//!   `cooperative-sticky` assignors), subscribed to topic names or a
//!   regular expression ([`Subscription`]), steerable as Java's consumer
//!   (`seek`, `pause` / `resume`, `committed`, `max.poll.records`,
//!   resubscription). Rebalances are [`ConsumerEvent`]s;
//!   offsets are committed through one ordered queue; its
//!   [`group_metadata`](GroupConsumer::group_metadata) and
//!   [`transaction_offsets`](GroupConsumer::transaction_offsets) feed a
//!   transactional producer (KIP-447).
//!
//! Kafka's own group coordinator splits the partitions between the members:
//! run more processes with the same `group.id` to share the work.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! use kafka_consumer::{ConsumerEvent, GroupConsumer, GroupConsumerConfig};
//! let config = GroupConsumerConfig::from_properties([
//!     ("bootstrap.servers", "127.0.0.1:9092"),
//!     ("group.id", "billing"),
//!     ("isolation.level", "read_committed"),
//! ])?;
//! let mut consumer = GroupConsumer::subscribe(config, ["orders"]).await?;
//! loop {
//!     match consumer.poll(std::time::Duration::from_secs(1)).await? {
//!         ConsumerEvent::Records(records) => {
//!             for r in &records {
//!                 println!("{}-{}@{}", r.topic, r.partition, r.offset);
//!             }
//!             consumer.commit_positions().await?;
//!         }
//!         other => println!("{other:?}"),
//!     }
//! }
//! # }
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

// The public interface is:
mod group;
pub use group::{
    Assignor, ConsumerEvent, EventStream, GroupConsumer, GroupConsumerConfig, GroupError,
    GroupProtocol, MemberError, MemberState, PendingCommit, Subscription,
};
mod metrics;
pub use metrics::{ConsumerMetrics, ConsumerMetricsSnapshot, names as metric_names};
mod reader;
pub use kafka_client::{self, GroupMetadata, OffsetAndMetadata, TopicPartition};
pub use kafka_proto;
pub use reader::{
    AutoOffsetReset, ConsumerRecord, IsolationLevel, ListedOffset, Offset, Reader, ReaderConfig,
    ReaderError,
};

/// The group members' sans-IO state machines and the read_committed
/// algorithm, for kafka-eos's own tests and benchmarks: not a stable API.
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod internals {
    pub use crate::group::commit;
    pub use crate::group::member::{classic, kip848};
    pub use crate::reader::{
        AbortedTransactionFilter, BatchVerdict, NO_PRODUCER_ID, ProcessedRecords,
        process_partition_records,
    };
}
