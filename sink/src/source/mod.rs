//! Message-acknowledging sources: messages carry unique ids, are
//! deduplicated against the ids of unacknowledged checkpoints, and are
//! acknowledged at the broker only when a checkpoint containing them
//! completes (Flink's `MessageAcknowledgingSourceBase`,
//! `MultipleIdsMessageAcknowledgingSourceBase` and `RMQSource`).
//!
//! * [`MessageAcknowledgingSource`]: unique ids per checkpoint, the dedup set,
//!   the pending-checkpoint queue and its versioned serializer ([`state`]).
//! * [`MultipleIdsMessageAcknowledgingSource`]: plus per-session ids (e.g.
//!   delivery tags) that are acknowledged but never checkpointed.
//! * `rabbitmq::RabbitMqSource` (feature `rabbitmq`): a RabbitMQ queue
//!   consumer on `lapin`.
//! * [`operator`]: both as [`CheckpointedOperator`](crate::checkpoint::CheckpointedOperator)s.

pub mod base;
pub mod multiple_ids;
pub mod operator;
#[cfg(feature = "rabbitmq")]
pub mod rabbitmq;
pub mod state;

pub use base::{AcknowledgeIds, MessageAcknowledgingSource};
pub use multiple_ids::{
    AcknowledgeSessionIds, AcknowledgeSessionIdsAsync, MultipleIdsMessageAcknowledgingSource,
};
#[cfg(feature = "rabbitmq")]
pub use rabbitmq::{RabbitMqSource, RabbitMqSourceConfig, RabbitMqSourceError, SourceMessage};
pub use state::{PendingCheckpoint, StateError, UniqueId, decode_pending, encode_pending};
