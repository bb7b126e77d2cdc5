//! A topic and partition: the key of everything per partition.

use std::fmt;
use std::sync::Arc;

/// A topic and partition; displayed as Java prints it (`orders-3`), ordered
/// by topic then partition.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TopicPartition {
    /// Topic name (shared, cheap to clone).
    pub topic: Arc<str>,
    /// Partition index.
    pub partition: i32,
}

impl TopicPartition {
    /// `topic`-`partition`. The topic name is shared: clone one
    /// `Arc<str>` for every partition of a topic rather than copy the name.
    ///
    /// ```
    /// use kafka_client::TopicPartition;
    /// use std::sync::Arc;
    /// let topic: Arc<str> = "orders".into();
    /// let partitions: Vec<_> = (0..3).map(|p| TopicPartition::new(topic.clone(), p)).collect();
    /// assert_eq!(partitions[2].to_string(), "orders-2");
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_as_topic_dash_partition() {
        assert_eq!(TopicPartition::new("orders", 3).to_string(), "orders-3");
    }

    #[test]
    fn orders_by_topic_then_partition() {
        assert!(TopicPartition::new("orders", 2) < TopicPartition::new("orders", 3));
        assert!(TopicPartition::new("a", 9) < TopicPartition::new("b", 0));
    }
}
