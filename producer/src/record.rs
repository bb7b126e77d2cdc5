//! Records handed to the producer, their delivery reports and errors.

pub use kafka_client::TopicPartition;

use bytes::Bytes;
use kafka_proto::ErrorCode;

use std::sync::Arc;
use std::time::Duration;

/// A record to send: topic, optional partition (else the partitioner
/// chooses), key, value, headers and timestamp (else the send time).
///
/// ```
/// use kafka_producer::ProducerRecord;
/// let tombstone = ProducerRecord::new("customers").key("customer-7"); // no value
/// assert_eq!(tombstone.value, None);
/// assert_eq!(tombstone.partition, None); // the partitioner chooses
/// ```
///
/// ```
/// use bytes::Bytes;
/// use kafka_producer::ProducerRecord;
/// let r = ProducerRecord::new("orders")
///     .key("customer-7")
///     .value(Bytes::from_static(b"{\"total\": 12}"))
///     .header("trace-id", Some("abc"))
///     .partition(3)
///     .timestamp(1_700_000_000_000);
/// assert_eq!(r.partition, Some(3));
/// assert_eq!(r.headers[0].0, "trace-id");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProducerRecord {
    /// Topic.
    pub topic: String,
    /// Explicit partition, or `None` for the partitioner.
    pub partition: Option<i32>,
    /// Key (`None` = null).
    pub key: Option<Bytes>,
    /// Value (`None` = null, a tombstone).
    pub value: Option<Bytes>,
    /// Headers in order (a `None` value is null).
    pub headers: Vec<(String, Option<Bytes>)>,
    /// Create time in ms since the epoch; `None` = now.
    pub timestamp: Option<i64>,
}

impl ProducerRecord {
    /// An empty record for `topic`.
    ///
    /// ```
    /// use kafka_producer::ProducerRecord;
    /// let r = ProducerRecord::new("orders");
    /// assert!(r.key.is_none() && r.value.is_none() && r.headers.is_empty() && r.timestamp.is_none());
    /// ```
    pub fn new(topic: impl Into<String>) -> Self {
        Self {
            topic: topic.into(),
            ..Default::default()
        }
    }

    /// Sets the key.
    pub fn key(mut self, key: impl Into<Bytes>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// Sets the value.
    pub fn value(mut self, value: impl Into<Bytes>) -> Self {
        self.value = Some(value.into());
        self
    }

    /// Sets the partition.
    pub fn partition(mut self, partition: i32) -> Self {
        self.partition = Some(partition);
        self
    }

    /// Sets the timestamp (ms since the epoch).
    pub fn timestamp(mut self, ts: i64) -> Self {
        self.timestamp = Some(ts);
        self
    }

    /// Appends a header.
    pub fn header(mut self, key: impl Into<String>, value: Option<impl Into<Bytes>>) -> Self {
        self.headers.push((key.into(), value.map(Into::into)));
        self
    }
}

/// Where a record was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordMetadata {
    /// Topic.
    pub topic: Arc<str>,
    /// Partition.
    pub partition: i32,
    /// Offset; `None` with `acks=0` or when the broker answered
    /// DUPLICATE_SEQUENCE_NUMBER (the record was written before, offset unknown).
    pub offset: Option<i64>,
    /// The record's create time, or the broker's log-append time when the
    /// topic uses `LogAppendTime`.
    pub timestamp: i64,
}

/// Why a record was not (or not knowingly) delivered. Cheap to clone: one
/// error is shared by every record of a batch.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ProduceError {
    /// The broker rejected the batch with a non-retriable error, or a
    /// retriable error outlived `retries`.
    #[error("{tp}: broker error {error:?}{}", message.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    Broker {
        /// Partition.
        tp: TopicPartition,
        /// Error code.
        error: ErrorCode,
        /// The broker's message, if any.
        message: Option<Arc<str>>,
    },
    /// The batch was not acknowledged within `delivery.timeout.ms`; it may
    /// or may not have been written.
    #[error(
        "{tp}: {records} record(s) expired: {elapsed:?} passed since batch creation (delivery.timeout.ms)"
    )]
    DeliveryTimeout {
        /// Partition.
        tp: TopicPartition,
        /// Records in the batch.
        records: usize,
        /// Time since the batch was created.
        elapsed: Duration,
    },
    /// `send` waited longer than `max.block.ms` for buffer memory or metadata.
    #[error("send blocked longer than max.block.ms ({after:?}) waiting for {waiting_for}")]
    MaxBlockTimeout {
        /// `buffer memory` or `metadata of <topic>`.
        waiting_for: Arc<str>,
        /// The bound.
        after: Duration,
    },
    /// The record is larger than `max.request.size` or `buffer.memory`.
    #[error("record of {size} bytes exceeds {limit_name} ({limit})")]
    RecordTooLarge {
        /// Serialized size estimate.
        size: usize,
        /// The limit.
        limit: usize,
        /// Which limit.
        limit_name: &'static str,
    },
    /// The record is invalid (e.g. partition out of range).
    #[error("invalid record: {0}")]
    InvalidRecord(Arc<str>),
    /// The topic name is not one Kafka accepts (the broker would answer
    /// INVALID_TOPIC_EXCEPTION, 17); checked before any request, the first
    /// time a topic is sent to.
    #[error("invalid topic name {topic:?}: {reason}")]
    InvalidTopic {
        /// The name.
        topic: Arc<str>,
        /// What is wrong with it.
        reason: kafka_proto::topic::InvalidTopicName,
    },
    /// The broker refused the topic for good when asked for its metadata:
    /// INVALID_TOPIC_EXCEPTION (17) or TOPIC_AUTHORIZATION_FAILED (29), as
    /// Java's `KafkaProducer.send` fails with `InvalidTopicException` or
    /// `TopicAuthorizationException`. The record was never written.
    #[error("topic {topic:?} refused by the broker: {error:?}")]
    TopicRefused {
        /// The topic.
        topic: Arc<str>,
        /// INVALID_TOPIC_EXCEPTION or TOPIC_AUTHORIZATION_FAILED.
        error: ErrorCode,
    },
    /// The producer hit a fatal error (e.g. PRODUCER_FENCED, authorization,
    /// unsupported version); every later send fails with it.
    #[error("producer failed fatally: {0}")]
    Fatal(Arc<str>),
    /// The producer is closed (or was closed before the record was sent).
    #[error("producer closed{}", .0.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    Closed(Option<Arc<str>>),
    /// A request could not be built (a bug or a record no version can carry).
    #[error("cannot encode: {0}")]
    Encode(Arc<str>),
    /// Transactional producer: the record cannot join the transaction (not
    /// in a transaction, or the transaction must be aborted / the producer
    /// was fenced).
    #[error("transaction: {0}")]
    Transaction(crate::txn::TransactionError),
}

impl ProduceError {
    /// The broker error code, if the broker answered with one.
    pub fn error_code(&self) -> Option<ErrorCode> {
        match self {
            ProduceError::Broker { error, .. } => Some(*error),
            ProduceError::InvalidTopic { .. } => Some(ErrorCode::InvalidTopicException),
            ProduceError::TopicRefused { error, .. } => Some(*error),
            _ => None,
        }
    }

    /// True when the record may have been written although this error was
    /// reported (a delivery timeout after the batch was sent).
    pub fn outcome_unknown(&self) -> bool {
        matches!(self, ProduceError::DeliveryTimeout { .. })
    }
}

#[cfg(test)]
mod tests {

    /// Headers are kept in order, a null value as `None`.
    #[test]
    fn headers_keep_their_order_and_null_values() {
        use crate::ProducerRecord;
        let r = ProducerRecord::new("orders")
            .header("trace-id", Some("4bf92f35"))
            .header("retry", None::<&str>); // a null header value
        assert_eq!(r.headers.len(), 2);
        assert_eq!(r.headers[1], ("retry".to_string(), None));
    }

    /// A broker error carries its code, and its message names the partition.
    #[test]
    fn a_broker_error_carries_its_code_and_partition() {
        use crate::{ProduceError, TopicPartition};
        use kafka_proto::ErrorCode;
        let e = ProduceError::Broker {
            tp: TopicPartition::new("orders", 0),
            error: ErrorCode::MessageTooLarge,
            message: None,
        };
        assert_eq!(e.error_code(), Some(ErrorCode::MessageTooLarge));
        assert!(e.to_string().starts_with("orders-0: broker error"));
    }

    /// An error that is not a broker answer has no error code.
    #[test]
    fn a_local_timeout_has_no_error_code() {
        use crate::ProduceError;
        use std::time::Duration;
        let e = ProduceError::MaxBlockTimeout {
            waiting_for: "buffer memory".into(),
            after: Duration::from_secs(60),
        };
        assert_eq!(e.error_code(), None); // not a broker answer
    }

    /// A delivery timeout leaves the outcome unknown (the batch may have been written); a closed producer's does not.
    #[test]
    fn only_an_expired_batchs_outcome_is_unknown() {
        use crate::{ProduceError, TopicPartition};
        use std::time::Duration;
        let expired = ProduceError::DeliveryTimeout {
            tp: TopicPartition::new("orders", 0),
            records: 12,
            elapsed: Duration::from_secs(120),
        };
        assert!(expired.outcome_unknown()); // may have been written: check before resending
        assert!(!ProduceError::Closed(None).outcome_unknown());
    }
}
