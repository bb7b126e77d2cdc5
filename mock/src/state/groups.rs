//! The group coordinator's offsets: committed offsets per group and
//! partition, and offsets written inside a transaction (TxnOffsetCommit),
//! which become committed when the transaction's commit marker is written
//! and are dropped when it aborts. While a group has transactional
//! offsets pending for a partition, OffsetFetch with `require_stable`
//! answers UNSTABLE_OFFSET_COMMIT for it (KIP-447).

use std::collections::{BTreeMap, HashMap};

/// A committed offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CommittedOffset {
    pub offset: i64,
    pub leader_epoch: i32,
    pub metadata: Option<String>,
}

/// A topic and partition.
pub(crate) type Tp = (String, i32);

/// Every group's offsets.
#[derive(Debug, Default)]
pub(crate) struct Groups {
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
}
