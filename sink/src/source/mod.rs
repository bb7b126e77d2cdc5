//! Message-acknowledging sources: messages carry unique ids, are
//! deduplicated against the ids of unacknowledged checkpoints, and are
//! acknowledged at the broker only when a checkpoint containing them
//! completes (Flink's `MessageAcknowledgingSourceBase`,
//! `MultipleIdsMessageAcknowledgingSourceBase` and `RMQSource`).
//!
//! * [`MessageAcknowledgingSource`]: unique ids per checkpoint, the dedup set,
//!   the pending-checkpoint queue and its versioned serializer
//!   ([`encode_pending`], [`decode_pending`]).
//! * [`MultipleIdsMessageAcknowledgingSource`]: plus per-session ids (e.g.
//!   delivery tags) that are acknowledged but never checkpointed.
//! * `RabbitMqSource` (feature `rabbitmq`): a RabbitMQ queue
//!   consumer on `lapin`.
//! * [`AcknowledgingOperator`]: both as [`CheckpointedOperator`](crate::CheckpointedOperator)s.

mod base;
mod multiple_ids;
mod operator;
#[cfg(feature = "rabbitmq")]
mod rabbitmq;
mod state;

pub use base::{AcknowledgeIds, MessageAcknowledgingSource};
pub use multiple_ids::{
    AcknowledgeSessionIds, AcknowledgeSessionIdsAsync, MultipleIdsMessageAcknowledgingSource,
};
pub use operator::AcknowledgingOperator;
#[cfg(feature = "rabbitmq")]
pub use rabbitmq::{
    AckMode, AcknowledgeError, Guarantee, RabbitMqSource, RabbitMqSourceConfig,
    RabbitMqSourceError, RabbitMqSourceStats, SourceMessage, connection_properties,
};
pub use state::{
    PendingCheckpoint, STATE_MAGIC, STATE_VERSION, StateError, UniqueId, decode_pending,
    encode_pending,
};
