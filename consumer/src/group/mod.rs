//! Consumer groups: membership under Kafka's group coordinator, which splits
//! the partitions of the subscribed topics between the members (no
//! coordinator of ours).
//!
//! - [`classic`]: the classic member (`group.protocol=classic`,
//!   JoinGroup/SyncGroup), a sans-IO state machine; the group leader runs a
//!   client-side [`assignor`](classic::assignor).
//! - [`membership`]: the KIP-848 member (`group.protocol=consumer`), a
//!   sans-IO state machine; the broker computes the assignment.
//! - [`GroupConsumer`]: the async consumer on top of it: heartbeats in a
//!   background task, rebalances as [`ConsumerEvent`]s, records through the
//!   [`Reader`](crate::reader::Reader), offset commits, and the group
//!   metadata a transactional producer needs (KIP-447).

pub mod classic;
pub mod commit;
pub mod consumer;
pub mod membership;

pub use commit::PendingCommit;
pub use consumer::{
    ConsumerEvent, EventStream, GroupConsumer, GroupConsumerConfig, GroupError, GroupProtocol,
};
