//! One round trip per request that more than one crate sends, on a
//! connection the caller chose: each helper builds the request for the
//! negotiated version, handles the version shapes once, and returns a plain
//! struct. Retries, deadlines and the caller's own error type stay with the
//! caller (the admin functions, the transactional producer, the consumers).
//!
//! - [`describe_configs`]: DescribeConfigs of a broker or a topic.
//! - [`describe_transactions`]: DescribeTransactions of one transactional id
//!   ([`TransactionSnapshot`](describe_transactions::TransactionSnapshot)).
//! - [`list_offsets`]: ListOffsets of partitions on their leader: earliest,
//!   latest, max timestamp or by timestamp
//!   ([`OffsetSpec`](list_offsets::OffsetSpec)).
//! - [`offset_fetch`]: OffsetFetch of a group's committed offsets, v1–7 (one
//!   group), v8+ (batched groups) and v10 (topic ids)
//!   ([`GroupOffsets`](offset_fetch::GroupOffsets)).
//!
//! Each failure is a [`RequestError`](crate::RequestError): the cluster's
//! error, or the broker's error code with the API and version.
//!
//! ```no_run
//! # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), kafka_client::RequestError> {
//! use kafka_client::requests::describe_transactions::describe_transaction_on;
//! use kafka_client::{CoordinatorType, find_coordinator};
//! let coordinator = find_coordinator(cluster, CoordinatorType::Transaction, "orders-sink-0").await?;
//! match describe_transaction_on(&coordinator.connection, "orders-sink-0").await? {
//!     Some(t) => println!("{} at epoch {}", t.state, t.producer_epoch),
//!     None => println!("unknown transactional id"),
//! }
//! # Ok(()) }
//! ```

pub mod describe_configs;
pub mod describe_transactions;
pub mod list_offsets;
pub mod offset_fetch;
