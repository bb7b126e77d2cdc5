//! The records a [`GroupConsumer`](super::GroupConsumer) fetched and has
//! not returned yet. A poll returns at most `max.poll.records` of them
//! (Java's `FetchCollector`): the rest wait here for the next poll, so the
//! position the application may commit for a partition is the offset of
//! its first record still waiting here, never past a record it did not
//! get. Records of paused partitions wait until the partition is resumed;
//! a seek, a revocation or a rewind drops a partition's records.

use crate::reader::ConsumerRecord;
use kafka_client::TopicPartition;
use std::collections::{BTreeMap, VecDeque};

/// Fetched records not yet returned, per partition, drained in the order
/// the partitions' records arrived.
#[derive(Debug, Default)]
pub(super) struct RecordBuffer {
    /// Each partition's waiting records, in offset order.
    parts: BTreeMap<TopicPartition, VecDeque<ConsumerRecord>>,
    /// The partitions with waiting records, oldest arrival first: a poll
    /// drains them in this order, one partition after the other.
    order: VecDeque<TopicPartition>,
}

impl RecordBuffer {
    /// Appends what a fetch returned (offset order per partition).
    pub(super) fn push(&mut self, records: Vec<ConsumerRecord>) {
        for r in records {
            let tp = TopicPartition {
                topic: r.topic.clone(),
                partition: r.partition,
            };
            let queue = self.parts.entry(tp.clone()).or_default();
            if queue.is_empty() {
                self.order.push_back(tp);
            }
            queue.push_back(r);
        }
    }

    /// Takes at most `max` records of the partitions `held` does not hold
    /// back, partition after partition in arrival order.
    pub(super) fn take(
        &mut self,
        max: usize,
        held: impl Fn(&TopicPartition) -> bool,
    ) -> Vec<ConsumerRecord> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < self.order.len() && out.len() < max {
            let tp = &self.order[i];
            if held(tp) {
                i += 1;
                continue;
            }
            let Some(queue) = self.parts.get_mut(tp) else {
                self.order.remove(i);
                continue;
            };
            let n = queue.len().min(max - out.len());
            out.extend(queue.drain(..n));
            if queue.is_empty() {
                self.parts.remove(tp);
                self.order.remove(i);
            } else {
                i += 1;
            }
        }
        out
    }

    /// The offset of the partition's first waiting record: the position
    /// of what the application got.
    pub(super) fn first_offset(&self, tp: &TopicPartition) -> Option<i64> {
        self.parts.get(tp)?.front().map(|r| r.offset)
    }

    /// Drops the partition's waiting records.
    pub(super) fn drop_partition(&mut self, tp: &TopicPartition) {
        if self.parts.remove(tp).is_some() {
            self.order.retain(|t| t != tp);
        }
    }

    /// The number of waiting records.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.parts.values().map(VecDeque::len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_proto::record::TimestampType;
    use std::sync::Arc;

    fn record(topic: &Arc<str>, partition: i32, offset: i64) -> ConsumerRecord {
        ConsumerRecord {
            topic: topic.clone(),
            partition,
            offset,
            timestamp: 0,
            timestamp_type: TimestampType::Create,
            key: None,
            value: None,
            headers: Vec::new(),
            producer_id: -1,
            producer_epoch: -1,
            is_transactional: false,
            leader_epoch: None,
        }
    }

    fn offsets(records: &[ConsumerRecord]) -> Vec<(i32, i64)> {
        records.iter().map(|r| (r.partition, r.offset)).collect()
    }

    /// A poll takes at most `max` records; the rest come next, in order,
    /// none twice and none skipped, and the position of a partition is its
    /// first record not taken.
    #[test]
    fn takes_at_most_max_and_keeps_the_rest_in_order() {
        let t: Arc<str> = Arc::from("t");
        let mut b = RecordBuffer::default();
        b.push((0..5).map(|o| record(&t, 0, o)).collect());
        b.push((10..13).map(|o| record(&t, 1, o)).collect());
        let tp0 = TopicPartition::new("t", 0);
        let first = b.take(3, |_| false);
        assert_eq!(offsets(&first), [(0, 0), (0, 1), (0, 2)]);
        assert_eq!(b.first_offset(&tp0), Some(3));
        let second = b.take(3, |_| false);
        assert_eq!(offsets(&second), [(0, 3), (0, 4), (1, 10)]);
        assert_eq!(b.first_offset(&tp0), None);
        let third = b.take(3, |_| false);
        assert_eq!(offsets(&third), [(1, 11), (1, 12)]);
        assert_eq!(b.len(), 0);
    }

    /// Records of a held-back (paused) partition stay until it is let go;
    /// the other partitions' records are taken meanwhile.
    #[test]
    fn held_partitions_keep_their_records() {
        let t: Arc<str> = Arc::from("t");
        let mut b = RecordBuffer::default();
        b.push(vec![record(&t, 0, 0), record(&t, 1, 0), record(&t, 0, 1)]);
        let tp0 = TopicPartition::new("t", 0);
        let got = b.take(10, |tp| *tp == tp0);
        assert_eq!(offsets(&got), [(1, 0)]);
        assert_eq!(b.first_offset(&tp0), Some(0));
        assert!(b.take(10, |tp| *tp == tp0).is_empty());
        assert_eq!(offsets(&b.take(10, |_| false)), [(0, 0), (0, 1)]);
    }

    /// Dropping a partition (seek, revocation) removes only its records.
    #[test]
    fn dropping_a_partition_keeps_the_others() {
        let t: Arc<str> = Arc::from("t");
        let mut b = RecordBuffer::default();
        b.push(vec![record(&t, 0, 7), record(&t, 1, 8)]);
        b.drop_partition(&TopicPartition::new("t", 0));
        assert_eq!(b.first_offset(&TopicPartition::new("t", 0)), None);
        assert_eq!(offsets(&b.take(10, |_| false)), [(1, 8)]);
    }
}
