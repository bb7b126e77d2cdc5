//! The group coordinator's offsets: committed offsets per group and
//! partition, and offsets written inside a transaction (TxnOffsetCommit),
//! which become committed when the transaction's commit marker is written
//! and are dropped when it aborts. While a group has transactional
//! offsets pending for a partition, OffsetFetch with `require_stable`
//! answers UNSTABLE_OFFSET_COMMIT for it (KIP-447).

use std::collections::{BTreeMap, BTreeSet, HashMap};

/// A committed offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CommittedOffset {
    /// The next offset the group reads.
    pub offset: i64,
    /// The leader epoch of the last record read, or -1.
    pub leader_epoch: i32,
    /// The committer's free-form metadata.
    pub metadata: Option<String>,
}

/// A topic and partition.
pub(crate) type Tp = (String, i32);

/// Every group's offsets.
#[derive(Debug, Default)]
pub(crate) struct Groups {
    /// Committed offsets by group id.
    committed: HashMap<String, BTreeMap<Tp, CommittedOffset>>,
    /// Transactional offsets by (group, producer id).
    pending: HashMap<(String, i64), BTreeMap<Tp, CommittedOffset>>,
}

impl Groups {
    /// Commits an offset outside a transaction.
    pub(crate) fn commit(&mut self, group: &str, tp: Tp, offset: CommittedOffset) {
        self.committed
            .entry(group.to_string())
            .or_default()
            .insert(tp, offset);
    }

    /// Records an offset of producer `pid`'s open transaction.
    pub(crate) fn txn_commit(&mut self, group: &str, pid: i64, tp: Tp, offset: CommittedOffset) {
        self.pending
            .entry((group.to_string(), pid))
            .or_default()
            .insert(tp, offset);
    }

    /// Applies (commit) or drops (abort) producer `pid`'s offsets for `group`.
    pub(crate) fn end_txn(&mut self, group: &str, pid: i64, commit: bool) {
        if let Some(offsets) = self.pending.remove(&(group.to_string(), pid))
            && commit
        {
            let g = self.committed.entry(group.to_string()).or_default();
            g.extend(offsets);
        }
    }

    /// The committed offset of `tp` in `group`.
    pub(crate) fn fetch(&self, group: &str, tp: &Tp) -> Option<&CommittedOffset> {
        self.committed.get(group).and_then(|g| g.get(tp))
    }

    /// Every committed partition of `group`.
    pub(crate) fn committed(&self, group: &str) -> Vec<(Tp, CommittedOffset)> {
        self.committed
            .get(group)
            .map(|g| g.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default()
    }

    /// `group` has committed offsets (Kafka keeps such a group as an
    /// empty classic group).
    pub(crate) fn has_offsets(&self, group: &str) -> bool {
        self.committed.get(group).is_some_and(|g| !g.is_empty())
    }

    /// Every group the offsets store knows: with committed offsets, with
    /// transactional offsets pending, or whose offsets were all removed with
    /// their topics. Kafka keeps each as a group (an empty classic group
    /// without a protocol type when nothing else made it) until DeleteGroups
    /// or its offsets expire.
    pub(crate) fn group_ids(&self) -> BTreeSet<String> {
        self.committed
            .keys()
            .chain(self.pending.keys().map(|(g, _)| g))
            .cloned()
            .collect()
    }

    /// The offsets store knows `group` (see [`Self::group_ids`]).
    pub(crate) fn knows(&self, group: &str) -> bool {
        self.committed.contains_key(group) || self.pending.keys().any(|(g, _)| g == group)
    }

    /// DeleteGroups: drops `group`'s committed offsets and its pending
    /// transactional ones (Kafka's `OffsetMetadataManager.deleteAllOffsets`
    /// writes a tombstone for both; a later commit marker of that
    /// transaction finds nothing to apply). Returns how many were dropped.
    pub(crate) fn delete_group(&mut self, group: &str) -> usize {
        let mut dropped = self.committed.remove(group).map_or(0, |g| g.len());
        self.pending.retain(|(g, _), offsets| {
            let keep = g != group;
            if !keep {
                dropped += offsets.len();
            }
            keep
        });
        dropped
    }

    /// A deleted topic: drops every group's committed and pending offsets
    /// of its partitions (Kafka 4.4's `OffsetMetadataManager.onTopicsDeleted`,
    /// 3.9's `GroupCoordinator.handleDeletedPartitions`). The groups stay.
    /// Returns how many offsets were dropped.
    pub(crate) fn remove_topic(&mut self, topic: &str) -> usize {
        let mut dropped = 0;
        let offsets = self.committed.values_mut().chain(self.pending.values_mut());
        for partitions in offsets {
            let before = partitions.len();
            partitions.retain(|(t, _), _| t != topic);
            dropped += before - partitions.len();
        }
        dropped
    }

    /// OffsetDelete of one partition's committed offset (the group stays).
    pub(crate) fn remove_offset(&mut self, group: &str, tp: &Tp) {
        if let Some(g) = self.committed.get_mut(group) {
            g.remove(tp);
        }
    }

    /// A transaction has offsets pending for `tp` in `group`.
    pub(crate) fn is_unstable(&self, group: &str, tp: &Tp) -> bool {
        self.pending
            .iter()
            .any(|((g, _), offsets)| g == group && offsets.contains_key(tp))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn off(o: i64) -> CommittedOffset {
        CommittedOffset {
            offset: o,
            leader_epoch: -1,
            metadata: None,
        }
    }

    #[test]
    fn transactional_offsets_apply_at_commit_and_vanish_at_abort() {
        let mut g = Groups::default();
        let tp = ("t".to_string(), 0);
        g.txn_commit("g", 1, tp.clone(), off(5));
        assert!(g.is_unstable("g", &tp));
        assert_eq!(g.fetch("g", &tp), None);
        g.end_txn("g", 1, false);
        assert_eq!((g.fetch("g", &tp), g.is_unstable("g", &tp)), (None, false));
        g.txn_commit("g", 1, tp.clone(), off(7));
        g.end_txn("g", 1, true);
        assert_eq!(g.fetch("g", &tp), Some(&off(7)));
    }

    /// Invariant: deleting a topic drops its committed and pending offsets
    /// in every group, keeps the other topics' offsets, and keeps the
    /// groups themselves (a later commit marker applies nothing for it).
    #[test]
    fn a_deleted_topic_takes_its_offsets_but_not_the_groups() {
        let mut g = Groups::default();
        let (t0, u0) = (("t".to_string(), 0), ("u".to_string(), 0));
        g.commit("a", t0.clone(), off(1));
        g.commit("a", u0.clone(), off(2));
        g.commit("b", t0.clone(), off(3));
        g.txn_commit("c", 7, t0.clone(), off(4));
        assert_eq!(g.remove_topic("t"), 3);
        assert_eq!(g.committed("a"), vec![(u0.clone(), off(2))]);
        assert!(g.committed("b").is_empty());
        assert!(!g.is_unstable("c", &t0));
        g.end_txn("c", 7, true);
        assert_eq!(g.fetch("c", &t0), None);
        let ids: Vec<String> = g.group_ids().into_iter().collect();
        assert_eq!(ids, ["a", "b", "c"], "the groups remain");
        assert!(g.knows("b") && !g.has_offsets("b"));
    }

    /// Invariant: deleting a group drops its committed and pending offsets
    /// and nothing of other groups; the group is then unknown.
    #[test]
    fn a_deleted_group_loses_committed_and_pending_offsets() {
        let mut g = Groups::default();
        let tp = ("t".to_string(), 0);
        g.commit("a", tp.clone(), off(1));
        g.txn_commit("a", 9, ("t".to_string(), 1), off(5));
        g.commit("b", tp.clone(), off(2));
        assert_eq!(g.delete_group("a"), 2);
        assert!(!g.knows("a"));
        g.end_txn("a", 9, true);
        assert!(g.committed("a").is_empty(), "the pending offsets are gone");
        assert_eq!(g.fetch("b", &tp), Some(&off(2)));
        assert_eq!(g.delete_group("a"), 0);
    }
}
