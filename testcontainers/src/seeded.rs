//! Seeded, replayable randomness for randomized schedules against the real
//! brokers: a small generator that gives the same sequence everywhere, and
//! the seeds of a run (`EOS_SEED` replays one, `EOS_SCHEDULES` sets how
//! many fresh ones).

/// SplitMix64: seedable and the same sequence on every platform.
///
/// A randomized test runs one schedule per seed and prints each seed first,
/// so that a failure can be replayed with `EOS_SEED=<seed>`:
///
/// ```
/// use kafka_testcontainers::{schedule_seeds, SeededRng};
/// let (seeds, _replay) = schedule_seeds(3);
/// for seed in seeds {
///     eprintln!("schedule seed {seed} (replay with EOS_SEED={seed})");
///     let mut rng = SeededRng::new(seed);
///     let victim = rng.below(3); // the node to kill, say
///     let fault = rng.pick(&["kill", "pause", "reset"]);
///     # let _ = (victim, fault);
/// }
/// ```
#[derive(Debug, Clone)]
pub struct SeededRng(u64);

impl SeededRng {
    /// A generator starting at `seed`: the same seed gives the same
    /// sequence, on every platform.
    ///
    /// ```
    /// use kafka_testcontainers::SeededRng;
    /// let (mut a, mut b) = (SeededRng::new(7), SeededRng::new(7));
    /// assert_eq!(a.next_u64(), b.next_u64());
    /// ```
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// True with probability `p` percent.
    pub fn percent(&mut self, p: u64) -> bool {
        self.below(100) < p
    }

    /// One of `items` (not empty).
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

/// A fresh seed from the clock (printed by the caller, so it can be
/// replayed).
pub fn fresh_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
        % 1_000_000_000_000
}

/// The seeds of a run: `EOS_SEED=<seed>` replays exactly that one (the
/// second value is then `true`); otherwise `EOS_SCHEDULES` fresh seeds
/// (`default` when unset).
pub fn schedule_seeds(default: u64) -> (Vec<u64>, bool) {
    if let Ok(s) = std::env::var("EOS_SEED") {
        return (vec![s.parse().expect("EOS_SEED is a u64")], true);
    }
    let n: u64 = std::env::var("EOS_SCHEDULES")
        .ok()
        .map(|s| s.parse().expect("EOS_SCHEDULES is a number"))
        .unwrap_or(default);
    let base = fresh_seed();
    ((0..n).map(|i| base.wrapping_add(i)).collect(), false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_gives_the_same_sequence() {
        let (mut a, mut b) = (SeededRng::new(7), SeededRng::new(7));
        for _ in 0..10 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }

    #[test]
    fn consecutive_draws_differ() {
        let mut rng = SeededRng::new(1);
        assert_ne!(rng.next_u64(), rng.next_u64());
    }

    #[test]
    fn below_stays_below_its_bound() {
        let mut rng = SeededRng::new(3);
        assert!((0..100).all(|_| rng.below(6) < 6));
    }

    #[test]
    fn percent_zero_is_never_and_hundred_always() {
        let mut rng = SeededRng::new(3);
        assert!((0..100).all(|_| !rng.percent(0) && rng.percent(100)));
    }

    #[test]
    fn pick_returns_one_of_the_items() {
        let mut rng = SeededRng::new(5);
        assert!((0..20).all(|_| [1, 2, 3].contains(&rng.pick(&[1, 2, 3]))));
    }

    #[test]
    fn fresh_seed_has_at_most_twelve_digits() {
        assert!(fresh_seed() < 1_000_000_000_000);
    }

    #[test]
    fn without_variables_schedule_seeds_are_default_many_fresh_ones() {
        if std::env::var("EOS_SEED").is_ok() || std::env::var("EOS_SCHEDULES").is_ok() {
            return;
        }
        let (seeds, replay) = schedule_seeds(3);
        assert_eq!((seeds.len(), replay), (3, false));
    }
}
