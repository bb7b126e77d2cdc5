//! Topic changes the controller makes (KRaft's `ReplicationControlManager`):
//! DeleteTopics and CreatePartitions.
//!
//! A deleted topic takes with it its partitions' logs, their idempotent
//! producers' state, its topic id and every group's committed and pending
//! offsets for it (Kafka 4.4's `OffsetMetadataManager.onTopicsDeleted`, 3.9's
//! `GroupCoordinator.handleDeletedPartitions`). A transaction that wrote to
//! it keeps the partition in its set until it ends; its markers skip a
//! partition that no longer exists, as Kafka's `TransactionMarkerChannelManager`
//! skips a partition without a leader ("likely deleted already").
//!
//! New partitions get their leaders the way CreateTopics places them: round
//! robin over the live brokers, continuing after the topic's existing
//! partitions.

use super::partition::PartitionLog;
use super::{ClusterState, Topic};
use kafka_proto::ErrorCode;
use kafka_proto::primitives::Uuid;

/// A refusal with Kafka's message.
pub(crate) type Refusal = (ErrorCode, Option<String>);

impl ClusterState {
    /// Deletes topic `name`; returns its id.
    pub(crate) fn delete_topic(&mut self, name: &str) -> Result<Uuid, ErrorCode> {
        let Some(Topic { id, .. }) = self.topics.remove(name) else {
            return Err(ErrorCode::UnknownTopicOrPartition);
        };
        self.topic_ids.remove(&id);
        self.groups.remove_topic(name);
        self.configs.remove_topic(name);
        // Parked fetches of its partitions look again (and find none).
        self.appends += 1;
        Ok(id)
    }

    /// Grows topic `name` to `count` partitions (CreatePartitions), the new
    /// ones on the brokers `assignments` names (the first live one leads)
    /// or placed as CreateTopics places them. `validate_only` checks
    /// everything and changes nothing.
    pub(crate) fn create_partitions(
        &mut self,
        name: &str,
        count: i32,
        assignments: Option<&[Vec<i32>]>,
        validate_only: bool,
    ) -> Result<(), Refusal> {
        let Some(topic) = self.topics.get(name) else {
            return Err((ErrorCode::UnknownTopicOrPartition, None));
        };
        let current = topic.partitions.len() as i32;
        if count == current {
            return Err((
                ErrorCode::InvalidPartitions,
                Some(format!("Topic already has {current} partition(s).")),
            ));
        }
        if count < current {
            return Err((
                ErrorCode::InvalidPartitions,
                Some(format!(
                    "The topic {name} currently has {current} partition(s); {count} would not be an increase."
                )),
            ));
        }
        let additional = (count - current) as usize;
        let alive = self.alive_brokers();
        let leaders: Vec<i32> = match assignments {
            Some(a) if a.len() != additional => {
                return Err((
                    ErrorCode::InvalidReplicaAssignment,
                    Some(format!(
                        "Attempted to add {additional} additional partition(s), but only {} assignment(s) were specified.",
                        a.len()
                    )),
                ));
            }
            Some(a) => a
                .iter()
                .enumerate()
                .map(|(i, replicas)| self.manual_leader(replicas, current as usize + i, &alive))
                .collect::<Result<_, _>>()?,
            None if alive.is_empty() => {
                return Err((
                    ErrorCode::InvalidReplicationFactor,
                    Some("Unable to replicate the partition: no broker is alive.".into()),
                ));
            }
            None => {
                // Continue CreateTopics' round robin from partition 0's leader.
                let start = topic
                    .partitions
                    .first()
                    .and_then(|p| alive.iter().position(|b| *b == p.leader))
                    .unwrap_or(0);
                (current as usize..count as usize)
                    .map(|p| alive[(start + p) % alive.len()])
                    .collect()
            }
        };
        if validate_only {
            return Ok(());
        }
        let topic = self.topics.get_mut(name).expect("checked above");
        topic
            .partitions
            .extend(leaders.into_iter().map(PartitionLog::new));
        self.appends += 1;
        Ok(())
    }

    /// Kafka's `validateManualPartitionAssignment`: the replicas of new
    /// partition `partition`, known brokers each once; the first live one
    /// leads.
    fn manual_leader(
        &self,
        replicas: &[i32],
        partition: usize,
        alive: &[i32],
    ) -> Result<i32, Refusal> {
        let invalid = |m: String| (ErrorCode::InvalidReplicaAssignment, Some(m));
        if replicas.is_empty() {
            return Err(invalid(
                "The manual partition assignment includes an empty replica list.".into(),
            ));
        }
        let mut sorted = replicas.to_vec();
        sorted.sort_unstable();
        for (i, b) in sorted.iter().enumerate() {
            if !self.brokers.contains_key(b) {
                return Err(invalid(format!(
                    "The manual partition assignment includes broker {b}, but no such broker is registered."
                )));
            }
            if i > 0 && sorted[i - 1] == *b {
                return Err(invalid(format!(
                    "The manual partition assignment includes the broker {b} more than once."
                )));
            }
        }
        replicas
            .iter()
            .copied()
            .find(|b| alive.contains(b))
            .ok_or_else(|| {
                invalid(format!(
                    "All brokers specified in the manual partition assignment for partition {partition} are fenced or in controlled shutdown."
                ))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::groups::CommittedOffset;
    use crate::state::test_cluster;
    use crate::state::txn::{TxnProducer, TxnState};
    use crate::state::{CoordinatorKind, Ctx};
    use bytes::{Bytes, BytesMut};
    use kafka_proto::record::{Compression, Record, RecordBatchBuilder, RecordBatchView};
    use std::sync::Arc;

    fn ctx(broker: i32) -> Ctx {
        Ctx {
            broker,
            now_ms: 0,
            client_host: Arc::from("/127.0.0.1"),
            client_id: Arc::from("test"),
        }
    }

    fn leaders(st: &ClusterState, topic: &str) -> Vec<i32> {
        st.topics[topic]
            .partitions
            .iter()
            .map(|p| p.leader)
            .collect()
    }

    /// Appends a transactional batch of producer `pid` to `topic`-`p`.
    fn append_txn(st: &mut ClusterState, topic: &str, p: i32, pid: i64, epoch: i16) {
        let mut b = RecordBatchBuilder::new(Compression::None)
            .producer(pid, epoch, 0)
            .transactional(true);
        b.push(Record::new(0, None, Some(Bytes::from_static(b"v"))));
        let mut raw = BytesMut::new();
        b.encode(&mut raw).unwrap();
        let view = RecordBatchView::decode(&raw).unwrap();
        st.partition_mut(topic, p)
            .unwrap()
            .append(&raw, &view, false)
            .unwrap();
    }

    /// Invariant: a deleted topic is gone by name and by id, with its
    /// logs and producers; the same name can be created again, empty and
    /// with a new id.
    #[test]
    fn a_deleted_topic_is_gone_and_can_be_created_again() {
        let mut st = test_cluster(1);
        let id = st.create_topic("t", 2).unwrap();
        append_txn(&mut st, "t", 0, 77, 0);
        assert_eq!(st.delete_topic("t"), Ok(id));
        assert!(st.partition("t", 0).is_none());
        assert!(!st.topic_ids.contains_key(&id));
        assert_eq!(
            st.delete_topic("t"),
            Err(ErrorCode::UnknownTopicOrPartition)
        );
        let again = st.create_topic("t", 1).unwrap();
        assert_ne!(again, id);
        let log = st.partition("t", 0).unwrap();
        assert_eq!((log.high_watermark(), log.producers().count()), (0, 0));
    }

    /// Invariant: a deleted topic takes every group's offsets for it,
    /// and only those.
    #[test]
    fn a_deleted_topic_takes_the_groups_offsets_for_it() {
        let mut st = test_cluster(1);
        st.create_topic("t", 1).unwrap();
        st.create_topic("u", 1).unwrap();
        let off = CommittedOffset {
            offset: 5,
            leader_epoch: -1,
            metadata: None,
        };
        st.groups.commit("g", ("t".into(), 0), off.clone());
        st.groups.commit("g", ("u".into(), 0), off.clone());
        st.delete_topic("t").unwrap();
        assert_eq!(st.groups.committed("g"), vec![(("u".into(), 0), off)]);
    }

    /// Invariant: a transaction that wrote to a deleted topic still
    /// commits; its markers skip the deleted partition and reach the
    /// others (the last stable offset moves past the marker).
    #[test]
    fn a_transaction_spanning_a_deleted_topic_commits_on_the_rest() {
        let mut st = test_cluster(1);
        st.create_topic("gone", 1).unwrap();
        st.create_topic("kept", 1).unwrap();
        let c = ctx(1);
        assert_eq!(st.coordinator(CoordinatorKind::Transaction, "tx"), Some(1));
        let (pid, epoch) = st
            .init_producer_id(&c, Some("tx"), 60_000, None, ErrorCode::ProducerFenced)
            .unwrap();
        let producer = TxnProducer {
            tid: "tx",
            pid,
            epoch,
            fenced: ErrorCode::ProducerFenced,
        };
        let tps = [("gone".to_string(), 0), ("kept".to_string(), 0)];
        st.add_to_txn(&c, producer, &tps, None, false, false)
            .unwrap();
        append_txn(&mut st, "gone", 0, pid, epoch);
        append_txn(&mut st, "kept", 0, pid, epoch);
        assert_eq!(st.partition("kept", 0).unwrap().last_stable_offset(), 0);
        st.delete_topic("gone").unwrap();
        st.end_txn(&c, producer, true, false).unwrap();
        assert_eq!(st.txns["tx"].state, TxnState::CompleteCommit);
        let kept = st.partition("kept", 0).unwrap();
        assert_eq!((kept.high_watermark(), kept.last_stable_offset()), (2, 2));
    }

    /// Invariant: new partitions continue CreateTopics' round robin over
    /// the live brokers; a count not above the current one, an unknown
    /// topic and a validate-only request change nothing.
    #[test]
    fn partitions_grow_round_robin_and_refusals_change_nothing() {
        let mut st = test_cluster(3);
        st.create_topic("t", 2).unwrap();
        assert_eq!(leaders(&st, "t"), [1, 2]);
        st.create_partitions("t", 5, None, false).unwrap();
        assert_eq!(leaders(&st, "t"), [1, 2, 3, 1, 2]);
        let refused = |r: Result<(), Refusal>| r.unwrap_err().0;
        assert_eq!(
            refused(st.create_partitions("t", 5, None, false)),
            ErrorCode::InvalidPartitions
        );
        assert_eq!(
            refused(st.create_partitions("t", 3, None, false)),
            ErrorCode::InvalidPartitions
        );
        assert_eq!(
            refused(st.create_partitions("nope", 9, None, false)),
            ErrorCode::UnknownTopicOrPartition
        );
        st.create_partitions("t", 9, None, true).unwrap();
        assert_eq!(st.topics["t"].partitions.len(), 5, "validate only");
    }

    /// Invariant: a manual assignment names one known-broker list per new
    /// partition; its first live broker leads.
    #[test]
    fn manual_assignments_are_checked_and_lead_by_their_first_live_broker() {
        let mut st = test_cluster(3);
        st.create_topic("t", 1).unwrap();
        st.set_alive(2, false);
        let refused = |st: &mut ClusterState, a: &[Vec<i32>]| {
            st.create_partitions("t", 1 + a.len() as i32, Some(a), false)
                .unwrap_err()
                .0
        };
        assert_eq!(
            st.create_partitions("t", 3, Some(&[vec![3]]), false)
                .unwrap_err()
                .0,
            ErrorCode::InvalidReplicaAssignment,
            "two new partitions, one assignment"
        );
        for bad in [vec![], vec![9], vec![3, 3], vec![2]] {
            assert_eq!(
                refused(&mut st, std::slice::from_ref(&bad)),
                ErrorCode::InvalidReplicaAssignment,
                "{bad:?}"
            );
        }
        st.create_partitions("t", 3, Some(&[vec![2, 3], vec![1]]), false)
            .unwrap();
        assert_eq!(leaders(&st, "t")[1..], [3, 1]);
    }
}
