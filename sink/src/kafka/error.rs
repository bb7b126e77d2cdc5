//! The errors of the Kafka sink.

use std::time::Duration;

use kafka_producer::txn::TransactionError;
use kafka_producer::{ConfigError, ProduceError};

use crate::codec::StateDecodeError;

/// Errors of the Kafka sink.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KafkaSinkError {
    /// The pool has no free transactional id.
    #[error(
        "Too many ongoing snapshots: all {pool_size} transactional ids are in use. \
         Increase the kafka producers pool size or decrease the number of concurrent checkpoints."
    )]
    PoolExhausted {
        /// The pool size.
        pool_size: usize,
    },
    /// The transaction timeout exceeds the broker's maximum.
    #[error(
        "transaction timeout {configured:?} exceeds the broker's transaction.max.timeout.ms \
         ({broker_max:?}): lower KafkaSinkConfig::transaction_timeout or raise the broker setting"
    )]
    TransactionTimeoutTooLarge {
        /// The sink's timeout.
        configured: Duration,
        /// The broker's maximum.
        broker_max: Duration,
    },
    /// Invalid configuration: a property (or a field of
    /// [`KafkaSinkConfig`](super::KafkaSinkConfig)) and why; its
    /// [`ConfigError::key`] names it.
    #[error("invalid Kafka sink configuration: {0}")]
    Config(#[from] ConfigError),
    /// A transaction without its producer: a bug of the sink.
    #[error("no producer for transaction {transactional_id:?}")]
    NoProducer {
        /// The transaction's id (`None`: the sink's shared producer).
        transactional_id: Option<String>,
    },
    /// Connecting failed.
    #[error("connecting to Kafka failed: {0}")]
    Connect(String),
    /// A transactional operation failed.
    #[error("transaction {transactional_id}: {source}")]
    Transaction {
        /// The id.
        transactional_id: String,
        /// The error.
        #[source]
        source: TransactionError,
    },
    /// A record could not be written.
    #[error("sending a record failed: {0}")]
    Produce(#[from] ProduceError),
    /// An input could not be serialized (an
    /// [`AsyncKafkaSerializationSchema`](super::AsyncKafkaSerializationSchema)
    /// failed): nothing of it was sent. The job should fail: closing the
    /// sink (or restoring it) aborts the open transaction, so none of its
    /// records becomes visible to read_committed readers.
    #[error("serializing a record failed (nothing of it was sent): {0}")]
    Serialization(#[from] super::SerializationError),
    /// Finishing or aborting a transaction of another process failed.
    #[error("{0}")]
    Recovery(String),
    /// State could not be decoded.
    #[error("Kafka sink state: {0}")]
    State(#[from] StateDecodeError),
    /// More than one id hint in the restored union state.
    #[error("{0} NextTransactionalIdHints restored; expected at most one")]
    MultipleHints(usize),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_exhausted_message_says_what_to_do() {
        let msg = KafkaSinkError::PoolExhausted { pool_size: 5 }.to_string();
        assert!(msg.contains("Increase the kafka producers pool size"));
        assert!(msg.contains("decrease the number of concurrent checkpoints"));
    }
}
