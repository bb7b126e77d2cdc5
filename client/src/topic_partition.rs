//! A topic and partition: the key of everything per partition.

use std::fmt;
use std::sync::Arc;

/// A topic and partition.
///
/// ```
/// use kafka_client::TopicPartition;
/// let tp = TopicPartition::new("orders", 3);
/// assert_eq!(tp.to_string(), "orders-3");
/// assert!(TopicPartition::new("orders", 2) < tp);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TopicPartition {
    /// Topic name (shared, cheap to clone).
    pub topic: Arc<str>,
    /// Partition index.
    pub partition: i32,
}

impl TopicPartition {
    /// `topic`-`partition`.
    ///
    /// ```
    /// use kafka_client::TopicPartition;
    /// let tp = TopicPartition::new(String::from("orders"), 0);
    /// assert_eq!((&*tp.topic, tp.partition), ("orders", 0));
    /// ```
    pub fn new(topic: impl Into<Arc<str>>, partition: i32) -> Self {
        Self {
            topic: topic.into(),
            partition,
        }
    }
}

impl fmt::Display for TopicPartition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.topic, self.partition)
    }
}
