//! Seeded, replayable randomness for randomized schedules against the real
//! brokers: a small generator that gives the same sequence everywhere, and
//! the seeds of a run (`EOS_SEED` replays one, `EOS_SCHEDULES` sets how
//! many fresh ones).

/// SplitMix64: seedable and the same sequence on every platform.
///
/// ```
/// use kafka_testcontainers::seeded::SeededRng;
/// let (mut a, mut b) = (SeededRng::new(7), SeededRng::new(7));
/// assert_eq!(a.next_u64(), b.next_u64(), "same seed, same sequence");
/// assert!(a.below(10) < 10);
/// ```
#[derive(Debug, Clone)]
pub struct SeededRng(u64);

impl SeededRng {
    /// A generator starting at `seed`.
    ///
    /// ```
    /// let mut rng = kafka_testcontainers::seeded::SeededRng::new(42);
    /// let _ = rng.next_u64();
    /// ```
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    ///
    /// ```
    /// let mut rng = kafka_testcontainers::seeded::SeededRng::new(1);
    /// assert_ne!(rng.next_u64(), rng.next_u64());
    /// ```
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    ///
    /// ```
    /// let mut rng = kafka_testcontainers::seeded::SeededRng::new(3);
    /// assert!((0..100).all(|_| rng.below(6) < 6));
    /// ```
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// True with probability `p` percent.
    ///
    /// ```
    /// let mut rng = kafka_testcontainers::seeded::SeededRng::new(3);
    /// assert!(!rng.percent(0));
    /// assert!(rng.percent(100));
    /// ```
    pub fn percent(&mut self, p: u64) -> bool {
        self.below(100) < p
    }

    /// One of `items` (not empty).
    ///
    /// ```
    /// let mut rng = kafka_testcontainers::seeded::SeededRng::new(5);
    /// assert!([1, 2, 3].contains(&rng.pick(&[1, 2, 3])));
    /// ```
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

/// A fresh seed from the clock (printed by the caller, so it can be
/// replayed).
///
/// ```
/// let seed = kafka_testcontainers::seeded::fresh_seed();
/// assert!(seed < 1_000_000_000_000);
/// ```
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
///
/// ```
/// // With neither variable set: `default` fresh seeds, not a replay.
/// # if std::env::var("EOS_SEED").is_err() && std::env::var("EOS_SCHEDULES").is_err() {
/// let (seeds, replay) = kafka_testcontainers::seeded::schedule_seeds(3);
/// assert_eq!((seeds.len(), replay), (3, false));
/// # }
/// ```
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
