//! Transactional id allocation (Flink's `TransactionalIdsGenerator`):
//! disjoint id ranges per subtask, the range a fresh start aborts, and the
//! [`NextTransactionalIdHint`] that moves the ranges past every id in use
//! when the parallelism grows.

use std::collections::BTreeSet;

/// How far the parallelism may shrink before the first checkpoint with
/// every lingering transaction still found by the fixed-range abort.
pub const SAFE_SCALE_DOWN_FACTOR: u64 = 5;

/// Flink's `TransactionalIdsGenerator`: disjoint id ranges per subtask.
///
/// ```
/// use kafka_sink::kafka::TransactionalIdsGenerator;
/// let g = TransactionalIdsGenerator { prefix: "p".into(), subtask_index: 1, parallelism: 2, pool_size: 3, safe_scale_down_factor: 5 };
/// assert_eq!(g.generate_ids_to_use(0).into_iter().collect::<Vec<_>>(), ["p-3", "p-4", "p-5"]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionalIdsGenerator {
    /// Id prefix.
    pub prefix: String,
    /// This subtask.
    pub subtask_index: u32,
    /// Subtasks.
    pub parallelism: u32,
    /// Ids per subtask.
    pub pool_size: u64,
    /// [`SAFE_SCALE_DOWN_FACTOR`].
    pub safe_scale_down_factor: u64,
}

impl TransactionalIdsGenerator {
    /// `prefix-n`.
    ///
    /// ```
    /// use kafka_sink::kafka::TransactionalIdsGenerator;
    /// let g = TransactionalIdsGenerator { prefix: "orders".into(), subtask_index: 0, parallelism: 1, pool_size: 5, safe_scale_down_factor: 5 };
    /// assert_eq!(g.id(12), "orders-12");
    /// ```
    pub fn id(&self, n: u64) -> String {
        format!("{}-{n}", self.prefix)
    }

    /// `{ next_free + subtask × pool + i | i < pool }`.
    ///
    /// ```
    /// use kafka_sink::kafka::TransactionalIdsGenerator;
    /// let g = TransactionalIdsGenerator { prefix: "p".into(), subtask_index: 0, parallelism: 2, pool_size: 2, safe_scale_down_factor: 5 };
    /// // After a restore whose hint says ids below 10 may be in use:
    /// assert_eq!(g.generate_ids_to_use(10).into_iter().collect::<Vec<_>>(), ["p-10", "p-11"]);
    /// ```
    pub fn generate_ids_to_use(&self, next_free: u64) -> BTreeSet<String> {
        let start = next_free + u64::from(self.subtask_index) * self.pool_size;
        (start..start + self.pool_size)
            .map(|n| self.id(n))
            .collect()
    }

    /// This subtask's share of `[0, parallelism × pool × factor)`.
    ///
    /// ```
    /// use kafka_sink::kafka::TransactionalIdsGenerator;
    /// let g = TransactionalIdsGenerator { prefix: "p".into(), subtask_index: 0, parallelism: 1, pool_size: 2, safe_scale_down_factor: 2 };
    /// assert_eq!(g.generate_ids_to_abort().into_iter().collect::<Vec<_>>(), ["p-0", "p-1", "p-2", "p-3"]);
    /// ```
    pub fn generate_ids_to_abort(&self) -> BTreeSet<String> {
        (0..self.safe_scale_down_factor)
            .flat_map(|i| {
                self.generate_ids_to_use(i * self.pool_size * u64::from(self.parallelism))
            })
            .collect()
    }

    /// The end of the fixed abort range (exclusive).
    ///
    /// ```
    /// use kafka_sink::kafka::TransactionalIdsGenerator;
    /// let g = TransactionalIdsGenerator { prefix: "p".into(), subtask_index: 0, parallelism: 2, pool_size: 3, safe_scale_down_factor: 5 };
    /// assert_eq!(g.abort_range_end(), 30); // 2 subtasks × 3 ids × 5
    /// ```
    pub fn abort_range_end(&self) -> u64 {
        u64::from(self.parallelism) * self.pool_size * self.safe_scale_down_factor
    }
}

/// Where the next free transactional id starts (Flink's
/// `NextTransactionalIdHint`, union state written by subtask 0).
///
/// ```
/// use kafka_sink::kafka::{NextTransactionalIdHint, TransactionalIdsGenerator};
/// // Written by subtask 0 of a job with parallelism 2 and pool size 5.
/// let hint = NextTransactionalIdHint { last_parallelism: 2, next_free_transactional_id: 10 };
/// let g = TransactionalIdsGenerator { prefix: "p".into(), subtask_index: 0, parallelism: 3, pool_size: 5, safe_scale_down_factor: 5 };
/// assert!(g.generate_ids_to_use(hint.next_free_transactional_id).contains("p-10"));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NextTransactionalIdHint {
    /// Parallelism when the hint was written.
    pub last_parallelism: u32,
    /// First id not used by any subtask.
    pub next_free_transactional_id: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_never_clash_across_subtasks() {
        let ids_for = |s, p| TransactionalIdsGenerator {
            prefix: "p".into(),
            subtask_index: s,
            parallelism: p,
            pool_size: 5,
            safe_scale_down_factor: 5,
        };
        for p in 1..6 {
            let mut use_all = BTreeSet::new();
            let mut abort_all = BTreeSet::new();
            for s in 0..p {
                for id in ids_for(s, p).generate_ids_to_use(0) {
                    assert!(use_all.insert(id));
                }
                for id in ids_for(s, p).generate_ids_to_abort() {
                    assert!(abort_all.insert(id));
                }
            }
            let expected: BTreeSet<String> =
                (0..u64::from(p) * 25).map(|n| format!("p-{n}")).collect();
            assert_eq!(abort_all, expected);
        }
    }
}
