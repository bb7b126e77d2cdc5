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
    pub fn id(&self, n: u64) -> String {
        format!("{}-{n}", self.prefix)
    }

    /// `{ next_free + subtask × pool + i | i < pool }`: after a restore,
    /// `next_free` comes from the [`NextTransactionalIdHint`], so that no id
    /// below it (possibly in use by an older, larger job) is reused.
    pub fn generate_ids_to_use(&self, next_free: u64) -> BTreeSet<String> {
        let start = next_free + u64::from(self.subtask_index) * self.pool_size;
        (start..start + self.pool_size)
            .map(|n| self.id(n))
            .collect()
    }

    /// This subtask's share of `[0, parallelism × pool × factor)`.
    pub fn generate_ids_to_abort(&self) -> BTreeSet<String> {
        (0..self.safe_scale_down_factor)
            .flat_map(|i| {
                self.generate_ids_to_use(i * self.pool_size * u64::from(self.parallelism))
            })
            .collect()
    }

    /// The end of the fixed abort range (exclusive).
    pub fn abort_range_end(&self) -> u64 {
        u64::from(self.parallelism) * self.pool_size * self.safe_scale_down_factor
    }
}

/// Where the next free transactional id starts (Flink's
/// `NextTransactionalIdHint`, union state written by subtask 0).
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

    fn generator(
        subtask_index: u32,
        parallelism: u32,
        pool_size: u64,
        factor: u64,
    ) -> TransactionalIdsGenerator {
        TransactionalIdsGenerator {
            prefix: "p".into(),
            subtask_index,
            parallelism,
            pool_size,
            safe_scale_down_factor: factor,
        }
    }

    /// Invariant: an id is `prefix-n`.
    #[test]
    fn id_is_prefix_dash_number() {
        assert_eq!(generator(0, 1, 5, 5).id(12), "p-12");
    }

    /// Invariant: the ids to use start at the hint's next free id.
    #[test]
    fn ids_to_use_start_at_next_free() {
        let ids: Vec<String> = generator(0, 2, 2, 5)
            .generate_ids_to_use(10)
            .into_iter()
            .collect();
        assert_eq!(ids, ["p-10", "p-11"]);
    }

    /// Invariant: a fresh start aborts `factor` pools of this subtask.
    #[test]
    fn ids_to_abort_cover_factor_pools() {
        let ids: Vec<String> = generator(0, 1, 2, 2)
            .generate_ids_to_abort()
            .into_iter()
            .collect();
        assert_eq!(ids, ["p-0", "p-1", "p-2", "p-3"]);
    }

    /// Invariant: the abort range ends at parallelism × pool × factor.
    #[test]
    fn abort_range_end_is_parallelism_times_pool_times_factor() {
        assert_eq!(generator(0, 2, 3, 5).abort_range_end(), 30);
    }
}
