//! Partitioners: which partition of a topic a record goes to.
//!
//! | Partitioner | Keyed records | Null-key records |
//! |---|---|---|
//! | [`DefaultPartitioner`] | `to_positive(murmur2(key)) % n` | sticky, rotated by [`Partitioner::on_new_batch`] |
//! | [`KeyHashPartitioner`] | same as [`DefaultPartitioner`] | same as [`DefaultPartitioner`] |
//! | [`StickyPartitioner`] | sticky (key ignored) | sticky |
//! | [`RoundRobinPartitioner`] | next partition of the topic (key ignored) | next partition |
//! | [`FixedPartitioner`] | `subtask_index % n` (key ignored) | `subtask_index % n` |
//!
//! [`DefaultPartitioner`] reproduces the Java client's built-in partitioner
//! (Kafka 3.3+, `partitioner.class` unset): a keyed record lands in exactly
//! the partition the Java producer would pick ([`murmur2`] and
//! [`to_positive`] are bit-for-bit `org.apache.kafka.common.utils.Utils`),
//! which is what keeps per-key ordering and co-partitioning intact when Java
//! and Rust producers share a topic.
//!
//! # Contract with the producer
//!
//! - [`Partitioner::partition`] is called only for records **without an
//!   explicit partition**; a record that names its partition is never passed
//!   to the partitioner. `num_partitions` is the topic's current partition
//!   count from cluster metadata (always at least 1; the producer waits for
//!   metadata first). The result must be in `0..num_partitions`.
//! - [`Partitioner::on_new_batch`] follows KIP-480 (the sticky partitioner):
//!   when appending a partitioner-routed record to `previous_partition`
//!   would need a **new batch** (the open batch of that partition is full, or
//!   there is none because it was closed and sent), the producer calls
//!   `on_new_batch(topic, num_partitions, previous_partition)` and then calls
//!   `partition` again for that record. A sticky implementation switches to
//!   another partition there, so null-key records fill one batch at a time
//!   and batches stay large even at low `linger.ms`. An implementation must
//!   treat a `previous_partition` that is not its current choice for the
//!   topic as a no-op: several batches can fill concurrently and only the
//!   first notification for the current sticky partition may move it.
//! - Both methods run on the send path of every record: the partitioners here
//!   are lock-light (a read lock plus one atomic operation once a topic has
//!   been seen) and allocate nothing per call; only the first record of a
//!   new topic allocates the topic's entry.
//!
//! Kafka 4.0 removed `onNewBatch` from Java's public `Partitioner` interface
//! (the built-in partitioner now switches partitions inside the accumulator
//! after `batch.size` bytes, KIP-794); here the hook stays on the trait so
//! custom partitioners can be sticky too.
//!
//! ```
//! use kafka_producer::partitioner::{DefaultPartitioner, Partitioner};
//! let p = DefaultPartitioner::new();
//! // Keyed: the Java client's choice (Kafka's own test vector for "21").
//! assert_eq!(p.partition("orders", Some(b"21"), None, 7), 3);
//! // Null key: sticky until a batch fills, then another partition.
//! let first = p.partition("orders", None, None, 7);
//! assert_eq!(p.partition("orders", None, Some(b"v"), 7), first);
//! p.on_new_batch("orders", 7, first);
//! assert_ne!(p.partition("orders", None, None, 7), first);
//! ```

use std::fmt;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

/// Chooses the partition of records that carry no explicit partition.
///
/// See the [module documentation](self) for the contract with the producer:
/// `partition` is called only for records without an explicit partition, and
/// `on_new_batch` when a partitioner-routed record would open a new batch on
/// `previous_partition` (KIP-480), after which `partition` is called again
/// for that record.
///
/// Implementations are shared by every task sending through the producer
/// (hence `Send + Sync`; use atomics or a lock for state) and run on the
/// send hot path, so they should not block or allocate per call.
///
/// # Example: a custom partitioner
///
/// Routes records whose key starts with `"vip:"` to partition 0 and hashes
/// every other keyed record over the remaining partitions like Java would,
/// leaving null keys to a sticky partitioner (which it forwards
/// `on_new_batch` to).
///
/// ```
/// use kafka_producer::partitioner::{
///     murmur2, to_positive, Partitioner, StickyPartitioner,
/// };
///
/// #[derive(Debug, Default)]
/// struct VipFirst {
///     sticky: StickyPartitioner,
/// }
///
/// impl Partitioner for VipFirst {
///     fn partition(
///         &self,
///         topic: &str,
///         key: Option<&[u8]>,
///         value: Option<&[u8]>,
///         num_partitions: i32,
///     ) -> i32 {
///         match key {
///             Some(k) if k.starts_with(b"vip:") || num_partitions == 1 => 0,
///             Some(k) => 1 + to_positive(murmur2(k)) % (num_partitions - 1),
///             None => self.sticky.partition(topic, None, value, num_partitions),
///         }
///     }
///
///     fn on_new_batch(&self, topic: &str, num_partitions: i32, previous_partition: i32) {
///         self.sticky.on_new_batch(topic, num_partitions, previous_partition);
///     }
/// }
///
/// let p = VipFirst::default();
/// assert_eq!(p.partition("t", Some(b"vip:alice"), None, 6), 0);
/// let bob = p.partition("t", Some(b"bob"), None, 6);
/// assert!((1..6).contains(&bob));
/// assert_eq!(p.partition("t", Some(b"bob"), Some(b"again"), 6), bob);
/// // Usable wherever the producer takes a boxed/shared partitioner.
/// let shared: std::sync::Arc<dyn Partitioner> = std::sync::Arc::new(p);
/// assert_eq!(shared.partition("t", Some(b"bob"), None, 6), bob);
/// ```
pub trait Partitioner: Send + Sync + fmt::Debug {
    /// The partition, in `0..num_partitions`, for a record of `topic` with
    /// serialized `key` and `value` (`None` = null). Called only for records
    /// without an explicit partition; `num_partitions` is at least 1.
    fn partition(
        &self,
        topic: &str,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        num_partitions: i32,
    ) -> i32;

    /// A partitioner-routed record of `topic` needs a new batch on
    /// `previous_partition` (its open batch filled up); `partition` is called
    /// again for that record right after (KIP-480). Sticky partitioners move
    /// to another partition here if `previous_partition` is still their
    /// current choice for `topic`, and ignore the call otherwise. The default
    /// does nothing.
    fn on_new_batch(&self, topic: &str, num_partitions: i32, previous_partition: i32) {
        let _ = (topic, num_partitions, previous_partition);
    }
}

impl<P: Partitioner + ?Sized> Partitioner for Arc<P> {
    fn partition(
        &self,
        topic: &str,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        num_partitions: i32,
    ) -> i32 {
        (**self).partition(topic, key, value, num_partitions)
    }

    fn on_new_batch(&self, topic: &str, num_partitions: i32, previous_partition: i32) {
        (**self).on_new_batch(topic, num_partitions, previous_partition)
    }
}

impl<P: Partitioner + ?Sized> Partitioner for Box<P> {
    fn partition(
        &self,
        topic: &str,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        num_partitions: i32,
    ) -> i32 {
        (**self).partition(topic, key, value, num_partitions)
    }

    fn on_new_batch(&self, topic: &str, num_partitions: i32, previous_partition: i32) {
        (**self).on_new_batch(topic, num_partitions, previous_partition)
    }
}

/// Java's `Utils.murmur2`: the 32-bit MurmurHash2 variant Kafka hashes keys
/// with (seed `0x9747b28c`, `m = 0x5bd1e995`, `r = 24`, little-endian 4-byte
/// blocks, then the 1–3 byte tail), returned as Java's signed `int`.
pub fn murmur2(data: &[u8]) -> i32 {
    const SEED: u32 = 0x9747_b28c;
    const M: u32 = 0x5bd1_e995;
    const R: u32 = 24;
    // Java's `int length`: arrays never exceed i32::MAX, the truncation only
    // matters for slices Java could not hold.
    let mut h = SEED ^ (data.len() as u32);
    let mut blocks = data.chunks_exact(4);
    for block in &mut blocks {
        let mut k = u32::from_le_bytes([block[0], block[1], block[2], block[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    // Java's fall-through `switch (length % 4)`.
    let tail = blocks.remainder();
    if tail.len() >= 3 {
        h ^= u32::from(tail[2]) << 16;
    }
    if tail.len() >= 2 {
        h ^= u32::from(tail[1]) << 8;
    }
    if !tail.is_empty() {
        h ^= u32::from(tail[0]);
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^= h >> 15;
    h as i32
}

/// Java's `Utils.toPositive`: clears the sign bit (`n & 0x7fffffff`), so
/// `i32::MIN` maps to 0 (unlike `abs`).
pub const fn to_positive(n: i32) -> i32 {
    n & 0x7fff_ffff
}

/// The partition Java's default producer picks for a record with a non-null
/// serialized `key` (`BuiltInPartitioner.partitionForKey`):
/// `to_positive(murmur2(key)) % num_partitions`. An empty key is still a key.
/// Returns 0 when `num_partitions` is not positive.
pub fn partition_for_key(key: &[u8], num_partitions: i32) -> i32 {
    if num_partitions <= 0 {
        return 0;
    }
    to_positive(murmur2(key)) % num_partitions
}

/// Per-topic state: a read-locked map once the topic is known (lookup by
/// `&str`, no allocation), a write lock only to add a new topic.
struct TopicMap<V> {
    map: RwLock<crate::fast_hash::FastHashMap<Box<str>, V>>,
}

impl<V> Default for TopicMap<V> {
    fn default() -> Self {
        TopicMap {
            map: RwLock::new(Default::default()),
        }
    }
}

impl<V: fmt::Debug> fmt::Debug for TopicMap<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.map.try_read() {
            Ok(map) => f.debug_map().entries(map.iter()).finish(),
            Err(_) => f.write_str("<locked>"),
        }
    }
}

impl<V> TopicMap<V> {
    /// Runs `f` on `topic`'s value, creating it with `init` first if absent.
    fn with<R>(&self, topic: &str, init: impl FnOnce() -> V, f: impl FnOnce(&V) -> R) -> R {
        {
            let map = self.map.read().unwrap_or_else(PoisonError::into_inner);
            if let Some(v) = map.get(topic) {
                return f(v);
            }
        }
        let mut map = self.map.write().unwrap_or_else(PoisonError::into_inner);
        if !map.contains_key(topic) {
            map.insert(topic.into(), init());
        }
        f(&map[topic])
    }

    /// Runs `f` on `topic`'s value if present.
    fn get<R>(&self, topic: &str, f: impl FnOnce(&V) -> R) -> Option<R> {
        let map = self.map.read().unwrap_or_else(PoisonError::into_inner);
        map.get(topic).map(f)
    }
}

/// No sticky partition chosen yet.
const UNSET: i32 = -1;

/// A uniformly random partition in `0..n` (`n >= 1`) other than `avoid`
/// when there is another one (`avoid` outside `0..n` avoids nothing).
fn random_partition_except(n: i32, avoid: i32) -> i32 {
    if n <= 1 {
        return 0;
    }
    if (0..n).contains(&avoid) {
        let r = rand::random_range(0..n - 1);
        if r >= avoid { r + 1 } else { r }
    } else {
        rand::random_range(0..n)
    }
}

/// Uniform sticky partitioning (KIP-480), keys ignored: every record of a
/// topic goes to one partition, chosen at random, until
/// [`Partitioner::on_new_batch`] reports that partition's batch full; then a
/// random *different* partition is chosen (when the topic has more than one).
///
/// This is Java's `UniformStickyPartitioner` / `partitioner.ignore.keys=true`
/// with the `onNewBatch` switching of Kafka 2.4–3.2; partition availability
/// (leaderless partitions) is not considered. [`DefaultPartitioner`] uses it
/// for null keys.
///
/// If `num_partitions` shrinks below the current choice (a caller passing a
/// different count), a new partition is chosen.
#[derive(Debug, Default)]
pub struct StickyPartitioner {
    current: TopicMap<AtomicI32>,
}

impl StickyPartitioner {
    /// A partitioner with no topic seen yet.
    ///
    /// ```
    /// use kafka_producer::partitioner::StickyPartitioner;
    /// assert_eq!(StickyPartitioner::new().sticky_partition("orders"), None);
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// The current sticky partition of `topic`, if one has been chosen.
    pub fn sticky_partition(&self, topic: &str) -> Option<i32> {
        self.current
            .get(topic, |slot| slot.load(Ordering::Relaxed))
            .filter(|&p| p != UNSET)
    }

    /// The sticky partition of `topic`, choosing one if there is none (or it
    /// is out of `0..num_partitions`).
    fn sticky(&self, topic: &str, num_partitions: i32) -> i32 {
        if num_partitions <= 0 {
            return 0;
        }
        self.current.with(
            topic,
            || AtomicI32::new(UNSET),
            |slot| {
                let cur = slot.load(Ordering::Relaxed);
                if (0..num_partitions).contains(&cur) {
                    return cur;
                }
                let new = random_partition_except(num_partitions, UNSET);
                match slot.compare_exchange(cur, new, Ordering::AcqRel, Ordering::Relaxed) {
                    Ok(_) => new,
                    // Another thread chose first: use its choice if valid.
                    Err(other) if (0..num_partitions).contains(&other) => other,
                    Err(_) => new,
                }
            },
        )
    }

    /// KIP-480 `nextPartition`: moves `topic` off `previous_partition` if that
    /// is still its sticky partition (or none is set).
    fn next(&self, topic: &str, num_partitions: i32, previous_partition: i32) {
        if num_partitions <= 0 {
            return;
        }
        self.current.with(
            topic,
            || AtomicI32::new(UNSET),
            |slot| {
                let cur = slot.load(Ordering::Relaxed);
                let stale = !(0..num_partitions).contains(&cur);
                if stale || cur == previous_partition {
                    let new = random_partition_except(num_partitions, previous_partition);
                    // Losing the race means another batch already moved it.
                    let _ = slot.compare_exchange(cur, new, Ordering::AcqRel, Ordering::Relaxed);
                }
            },
        )
    }
}

impl Partitioner for StickyPartitioner {
    fn partition(
        &self,
        topic: &str,
        _key: Option<&[u8]>,
        _value: Option<&[u8]>,
        num_partitions: i32,
    ) -> i32 {
        self.sticky(topic, num_partitions)
    }

    fn on_new_batch(&self, topic: &str, num_partitions: i32, previous_partition: i32) {
        self.next(topic, num_partitions, previous_partition)
    }
}

/// The Java producer's default partitioning (Kafka 3.3+ built-in
/// partitioner, `partitioner.class` unset):
///
/// - a record with a key (even an empty one) goes to
///   [`partition_for_key`]`(key, num_partitions)` =
///   `to_positive(murmur2(key)) % num_partitions`, exactly the partition Java
///   picks, so mixed Java/Rust producers keep per-key ordering;
/// - a record with a null key is sticky ([`StickyPartitioner`]): one
///   partition per topic until [`Partitioner::on_new_batch`] reports its
///   batch full, then a random different partition.
///
/// Difference from Java for null keys: Java 3.3+ switches the sticky
/// partition after `batch.size` bytes inside its accumulator (KIP-794) and
/// weighs partitions by queue size ("adaptive partitioning", skipping
/// unavailable leaders); here the switch happens on `on_new_batch` with a
/// uniform choice and availability is ignored. Null-key placement is random
/// in both clients, so no compatibility property depends on it.
#[derive(Debug, Default)]
pub struct DefaultPartitioner {
    sticky: StickyPartitioner,
}

impl DefaultPartitioner {
    /// A partitioner with no topic seen yet.
    ///
    /// ```
    /// use kafka_producer::partitioner::DefaultPartitioner;
    /// assert_eq!(DefaultPartitioner::new().sticky_partition("orders"), None);
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// The current null-key sticky partition of `topic`, if chosen yet.
    pub fn sticky_partition(&self, topic: &str) -> Option<i32> {
        self.sticky.sticky_partition(topic)
    }
}

impl Partitioner for DefaultPartitioner {
    fn partition(
        &self,
        topic: &str,
        key: Option<&[u8]>,
        _value: Option<&[u8]>,
        num_partitions: i32,
    ) -> i32 {
        match key {
            Some(key) => partition_for_key(key, num_partitions),
            None => self.sticky.sticky(topic, num_partitions),
        }
    }

    fn on_new_batch(&self, topic: &str, num_partitions: i32, previous_partition: i32) {
        self.sticky.next(topic, num_partitions, previous_partition)
    }
}

/// Key hashing as Java's producer: keyed records go to
/// `to_positive(murmur2(key)) % num_partitions`, null keys fall back to the
/// sticky partitioner. The same assignment as [`DefaultPartitioner`], under
/// a name for configurations that pick it explicitly (for example a sink
/// whose default is [`FixedPartitioner`], as Flink's legacy producer).
#[derive(Debug, Default)]
pub struct KeyHashPartitioner {
    inner: DefaultPartitioner,
}

impl KeyHashPartitioner {
    /// A partitioner with no topic seen yet.
    ///
    /// ```
    /// use kafka_producer::partitioner::{KeyHashPartitioner, Partitioner, partition_for_key};
    /// let p = KeyHashPartitioner::new();
    /// assert_eq!(p.partition("orders", Some(b"customer-7"), None, 12), partition_for_key(b"customer-7", 12));
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// The current null-key sticky partition of `topic`, if chosen yet.
    pub fn sticky_partition(&self, topic: &str) -> Option<i32> {
        self.inner.sticky_partition(topic)
    }
}

impl Partitioner for KeyHashPartitioner {
    fn partition(
        &self,
        topic: &str,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        num_partitions: i32,
    ) -> i32 {
        self.inner.partition(topic, key, value, num_partitions)
    }

    fn on_new_batch(&self, topic: &str, num_partitions: i32, previous_partition: i32) {
        self.inner
            .on_new_batch(topic, num_partitions, previous_partition)
    }
}

/// Java's `RoundRobinPartitioner`: a per-topic counter starting at 0, each
/// record (keyed or not) going to `to_positive(counter++) % num_partitions`.
///
/// The KIP-480 new-batch hook does not skip partitions (Java's class once
/// did, when the second call moved its counter again; it no longer does): [`Partitioner::on_new_batch`] remembers
/// `previous_partition`, and the next `partition` call for the topic (the
/// producer's second call for the same record) returns it without moving the
/// counter, so the record opens its new batch where round robin put it.
/// Without this, a record meeting no open batch would take two counter
/// values, and with three partitions one of them would never be chosen.
/// Partition availability is ignored. Round robin spreads records evenly but
/// makes small batches: one record per partition per cycle.
#[derive(Debug, Default)]
pub struct RoundRobinPartitioner {
    counters: TopicMap<RoundRobinSlot>,
}

/// A topic's round-robin state: the counter, and the partition a new-batch
/// notification asked to keep for the next call ([`UNSET`] when none).
#[derive(Debug)]
struct RoundRobinSlot {
    next: AtomicI32,
    pending: AtomicI32,
}

impl Default for RoundRobinSlot {
    fn default() -> Self {
        RoundRobinSlot {
            next: AtomicI32::new(0),
            pending: AtomicI32::new(UNSET),
        }
    }
}

impl RoundRobinPartitioner {
    /// A partitioner with every counter at 0.
    ///
    /// ```
    /// use kafka_producer::partitioner::{Partitioner, RoundRobinPartitioner};
    /// let p = RoundRobinPartitioner::new();
    /// assert_eq!(p.partition("orders", None, None, 4), 0);
    /// ```
    pub fn new() -> Self {
        Self::default()
    }
}

impl Partitioner for RoundRobinPartitioner {
    fn partition(
        &self,
        topic: &str,
        _key: Option<&[u8]>,
        _value: Option<&[u8]>,
        num_partitions: i32,
    ) -> i32 {
        if num_partitions <= 0 {
            return 0;
        }
        self.counters.with(topic, RoundRobinSlot::default, |slot| {
            let pending = slot.pending.swap(UNSET, Ordering::AcqRel);
            if (0..num_partitions).contains(&pending) {
                return pending;
            }
            // Java's AtomicInteger.getAndIncrement wraps too.
            to_positive(slot.next.fetch_add(1, Ordering::Relaxed)) % num_partitions
        })
    }

    fn on_new_batch(&self, topic: &str, num_partitions: i32, previous_partition: i32) {
        if (0..num_partitions).contains(&previous_partition) {
            self.counters.get(topic, |slot| {
                slot.pending.store(previous_partition, Ordering::Release)
            });
        }
    }
}

/// Flink's `FlinkFixedPartitioner`: every record written by parallel subtask
/// `subtask_index` goes to partition `subtask_index % num_partitions`
/// (Flink: `partitions[parallelInstanceId % partitions.length]` over the
/// sorted partition ids `0..n`), keys ignored.
///
/// With fewer subtasks than partitions some partitions receive nothing; with
/// more, several subtasks share a partition (subtask `i` and `i + n`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FixedPartitioner {
    subtask_index: usize,
}

impl FixedPartitioner {
    /// The partitioner of parallel subtask `subtask_index` (0-based, Flink's
    /// `parallelInstanceId`).
    ///
    /// ```
    /// use kafka_producer::partitioner::{FixedPartitioner, Partitioner};
    /// // Subtask 2 of a Flink-style sink with parallelism 4, topic with 3 partitions:
    /// assert_eq!(FixedPartitioner::new(2).partition("orders", None, None, 3), 2);
    /// ```
    pub fn new(subtask_index: usize) -> Self {
        FixedPartitioner { subtask_index }
    }

    /// The subtask index this partitioner was created with.
    pub fn subtask_index(&self) -> usize {
        self.subtask_index
    }
}

impl Partitioner for FixedPartitioner {
    fn partition(
        &self,
        _topic: &str,
        _key: Option<&[u8]>,
        _value: Option<&[u8]>,
        num_partitions: i32,
    ) -> i32 {
        if num_partitions <= 0 {
            return 0;
        }
        // `num_partitions` is positive, so both conversions are lossless.
        (self.subtask_index % num_partitions as usize) as i32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// Output of `tests/java/Murmur2Vectors.java` (kept in the repo
    /// so these vectors are reproducible) run against kafka-clients 4.4.0:
    /// `java -cp "$HOME/.cache/kafka-eos/kafka-4.4.0/libs/*"
    /// tests/java/Murmur2Vectors.java`. Columns: key as hex ("-" =
    /// empty), `Utils.murmur2(key)`, then `Utils.toPositive(murmur2) % n` for
    /// each n of [`PARTITION_COUNTS`]. `tests/tests/producer_partitioner_java.rs` reruns the
    /// program at test time and compares every line with this module.
    const JAVA_VECTORS: &str = "\
-	275646681	0,1,0,2,9,81,681
41	1592744578	0,0,1,5,2,78,578
ff	-311467685	0,1,0,5,11,63,963
4142	-556062482	0,0,0,6,14,66,166
ffee	1750061758	0,0,1,4,14,58,758
414243	2103866058	0,0,0,0,10,58,58
ffeedd	2053089151	0,1,1,1,15,51,151
41424344	1790169069	0,1,0,3,13,69,69
ffeeddcc	705638213	0,1,2,0,5,13,213
4142434445	-554406335	0,1,0,2,1,13,313
ffeeddccbb	-435349888	0,0,1,1,0,60,760
414243444546	-867988839	0,1,2,5,9,9,809
ffeeddccbbaa	-1576922666	0,0,0,5,6,82,982
41424344454647	434209470	0,0,0,2,14,70,470
ffeeddccbbaa99	-1046235303	0,1,2,1,9,45,345
6b61666b61	-798503068	0,0,1,3,4,80,580
3231	-973932308	0,0,0,3,12,40,340
666f6f626172	-790332482	0,0,0,0,14,66,166
612d6c6974746c652d6269742d6c6f6e672d737472696e67	-985981536	0,0,2,1,0,12,112
68c3a96c6c6f2077c3b6726c6420e697a5e69cace8aa9e20f09fa680	-926754474	0,0,2,0,6,74,174
c3bcc3b1c3aec3a7c3b864c3a9	-1015128564	0,0,2,0,12,84,84
1281d41626059d94fd1463ab5b4b	1291423475	0,1,2,6,3,75,475
42114cc9250cc5c8bdb28cf2af445c832cd67d8d27bc4b77f42ffeacf955dc5282d2331a0e01	-1525384151	0,1,0,5,9,97,497
0bc682713b9de9	1794183644	0,0,2,1,12,44,644
-	275646681	0,1,0,2,9,81,681
33625da12048af	-439257527	0,1,0,0,9,21,121
d878e5a744f9d3c87af5629d7c57c446d98c7f4de10305f80c9501d6d87b15c584dff056	1129190444	0,0,2,4,12,44,444
43fc11ce2ffa6f06aabe605e979e53a4abcdacda85286e526fd27e77d4b6d4cca5e3d67c53eda4c6	947778945	0,1,0,1,1,45,945
2c09d22657320b54	-1915056591	0,1,2,2,1,57,57
332cd3e5f98fd1c2e3542ca6089eda2bc31291213b328bb8da39e57a5d742351fea4062e9881d3e6f2a203dd0e73761108e57c	-995191553	0,1,0,3,15,95,95
f76bce652b5d159b1171a5ae6041bfa6ffcc04	1103495832	0,0,0,5,8,32,832
a5b262d3083c5013e10b53e1fa4b7d12422f13fc	62101183	0,1,1,4,15,83,183
e750dcf44df8dd852acee8c74f1970d2c29240cfd6d6e5827b270ebac95b7e21becd802fbeba04ef7c30e9e42667c83636fa	1774218325	0,1,1,5,5,25,325
38d9ebb1df6093af4976	-587798952	0,0,2,3,8,96,696
516f5872795e0704cdd6d0bc59f0a1720dda68650bf24d20835376115e6b00f1b403	-1463616058	0,0,1,0,6,90,590
8c42e0940cec2c5c1e0426bf143f98b91c572f8f1d23d65887e0489eab8f06286c979e	-17218112	0,0,0,0,0,36,536
a5f42ccb417fab48f53df7216d66e5b0fc58876b3aeb91fddaf9c48be1a2831670da15	-821470341	0,1,2,3,11,7,307
a542a9cc2ffbc4e81c579154ac8cee4436b3e3bde985f0	-1078442247	0,1,2,1,9,1,401
c376bdc1f79f101c6b755a9340e2898dc367da06545c7e8441e208d0ec1f133b	-496577095	0,1,1,2,9,53,553
6ae38cc8ca57f0699af5248986b94bca	-1938584892	0,0,2,3,4,56,756
18075a	432863174	0,0,2,2,6,74,174
2ad4816db00ffe07	597026399	0,1,2,4,15,99,399
ada6dabbc16ccf236f1d1529fd3088a58e01925b6543985e2f8f2243cebbcf9fd19be89a828e9fd7d9d22997635211cef42ddd7d50abc00a83f6d05c7b	-1325392169	0,1,0,6,7,79,479
-	275646681	0,1,0,2,9,81,681
e0b729e8246c70f493e50fe1d0d502d6fa96b75c5d24b5c8ccb69cb42928	1049372135	0,1,2,0,7,35,135
fb75232545288d284db8c2f816e18b1a	1139027275	0,1,1,1,11,75,275
f7873744015e85769dbd749308d755df783bd4	1442402566	0,0,1,3,6,66,566
0f97d379d618606ed810db7b44d70f2960fb17e9506e3158ae48a485	64348686	0,0,0,3,14,86,686
4ecfb1e198f54d076dad4768d64f	-634981473	0,1,2,2,15,75,175
3b2b1837fb	-913317970	0,0,1,4,14,78,678
f3c661dfddba74c184a128bbddb0668d742f5f6f143648298a521077700d5a715184494d94d5dede40bf117c44f5863a0ca7f6558da8ac391809913718	-1342655297	0,1,0,5,15,51,351
50d6d6009a5d1bf43b1e98d771e67e3a	1885734545	0,1,2,2,1,45,545
779ada9b092727cb82d65414c7c1c2e8de	-125124790	0,0,1,2,10,58,858
e8f2719a0f258cd70d	55589969	0,1,2,1,1,69,969
7f7c171253f1e8ad2a079406e86caa72aa391bceed75ec3752d62e9f5d39f01787	2052477561	0,1,0,1,9,61,561
f26236aad12c28af631a9904121dc570567f97f1d70e09227049d3fb445caf8e7ffd0b5aae5ee619b5419539a26a40	1064125901	0,1,2,6,13,1,901
c5b9ff8445ecacc112b657e76b27e8a981a681e2b3d3bdf627c3b13ab0ba9bdc3ec7818fc4	-2113158793	0,1,1,5,7,55,855
260df73594b95c1b6666492a0b48d68786c744eddb257cb3e18c6edb6d	753745209	0,1,0,0,9,9,209
f0c2efd14ccc0f7b1f1052bf1847ab343852ac5f41	-1807447251	0,1,2,1,13,97,397
ed3f3936e4d7ef86d4ae014a17f06b5e	-1850322181	0,1,1,1,11,67,467
76937a24c024a83e815767577c1bac14847c4083e3f8	-906694439	0,1,0,2,9,9,209
cc943a15bc472f3eec2092a13fcab23ee1acb0082738e17252	-1883368600	0,0,1,1,8,48,48
0d4e0e8bb140d50e879a1c4790a810332fedadb9e93949e36de58d483dc1823f489d5e1b04305b4a0843e4ccb895c4af4e48d3e0270de3be75c3e4df1f0f94	-1373633807	0,1,0,2,1,41,841
e523c6971bc8d9291b4f5b457a	474991612	0,0,1,4,12,12,612
1f05c2e44586726b4ab30140891387321da6e9c1c54c3ecdc2b3604eebcdadfe148aa4f83c614880cfa54135a97b45a7a0cadb16e3f1ea	-1921009711	0,1,1,4,1,37,937
04d8362c6f02	286228934	0,0,2,5,6,34,934
cd52ece8030bb11fed069577484dafad09	2082018408	0,0,0,1,8,8,408
4209e3274154544657fa9995d85e2cd17d52244ae9690e00cc3bf8584cb34faa110fe6d45b72296b11f1a18d6ccf620a7fdd45f0612f2e1431	445845608	0,0,2,5,8,8,608
54145df75e415894b41e29c68a4c1b0c56f345d16ed2f096ed699d6389a70385fa33a668cb4f060090cc118dfe49da5118ad6dc772d59b05875c1d24f0	-1103297522	0,0,0,4,14,26,126
0530f13005c4a64618bc242f1074630af3982e7cdab43be5a1a822c15fa14a4ed590cd17	1531100258	0,0,2,2,2,58,258
2f2476ae3c5429b31b7cca7497	1143588767	0,1,2,6,15,67,767
bce7b296e7e540	-95796318	0,0,2,0,2,30,330
1cad3b6fcf1ea321388dce52c1f74c4ac076f51cb5fe3d9b4ba037797803e91cbb5766d8b0	1653856324	0,0,1,1,4,24,324
2f	-1456486640	0,0,0,2,0,8,8
fb129326f5f699f232ac2bc16e376655fa10161240f19e100d33dc414c2e09edb2bae7553c3fa1d01a1a192399bea07b7a4b6c43fae090	-817029838	0,0,1,0,2,10,810
270bcb3bf22f10a85fd54fc98917beab271bb4e6348b13ef4a89f6036c5c1965f1d7fe024a5b6cf7fb94cd766d84c2c003a31952dff0	-773101381	0,1,1,6,11,67,267
69e553f94ac8371b38ae7bef96e1aaabc7f496b4a050f9f66441087bd8abd90bcc2e812b96	1384653557	0,1,2,0,5,57,557
183f4cac2d9f477a724f407d63b8260d07b0d67ee5dec9	1783682613	0,1,0,6,5,13,613
a00ce6f74c7a00f4499b4ece	-320081882	0,0,0,1,6,66,766
adaab950ab51836359fa9878642171ef5fb6b705646183ba5770ff969f9ebf77cbf8e70cd99d014e9ddaa13f01a775df3f29	-2008615839	0,1,2,3,1,9,809
abf36538780b4a117651fd23c42552a27f743e50c57f17f806c1139af0b55dab2977b278828b82381d449aed49df6a399eeedf7267071f626c91364039	348884294	0,0,2,3,6,94,294
c8aa19406223e4de649519d1ed878b7e616daece9df0e1390d9d9c881f7ceb0b56c1fc5f9db7de32b9e893de34ce9dd674e956a4bad1f16c1178e2a4	751143560	0,0,2,6,8,60,560
bcef391857c159a00ce0d6b58f244e40	-228063541	0,1,1,3,11,7,107
58efd87d4d2dce53f7601c2e922bb788d04b1caec908385aed99ac0933d76270ffc51e28ac02a690f9d0aeffee5b0ebf7bcf37e17d27cab6920f1439	941763067	0,1,1,0,11,67,67
ac5eb2997f43e727acf09626ef8520147d24add45a78776f95af4aa1ebee12994fe9db68fb08f4ed01d00b	-1080887572	0,0,1,0,12,76,76
3145cd44b77ff3f563b3ca43f679a1694e27d72bb69281357daf598f68eca10ca6e0ff3b8e6ae60f3a7aed5f27738f5e00a660d02e2f49e7bbfe173d	-1300404398	0,0,0,3,2,50,250
1fbdd9d9fdfef385afeff2ea1a4a92a233c9bf9042b4bd8ae7aab04a346bf7f592eaaca0c61c804529421ff2ae5aaae1a7a517cbb7	1347963622	0,0,1,5,6,22,622
ade734ab2ac5fcd0cecd52d963e9689587b1125d91ab080fb437c9d7a549aa62cd8ecca4c6c77f1da1e67dbfeefc70	2146822444	0,0,1,4,12,44,444
1921ed6c46a36e1af7acf7c9ce55ff4b772e99edec3626cdacdabfb465e392e2dc6c3a71ddb208a1b61b60efecf39c7606697477024a1283561d8095	-113677833	0,1,2,6,7,15,815
6a30d13dcda07725748011c5e99ef0296b5d2c3659b720f0f7e23182	-770752867	0,1,1,6,13,81,781
c93246e2ced1e58f57aa136189d7d882577aa8a30a0308816f6310cfa768f75ef01a6e6b7d3dd50c97cbe0c217465c77ab9919a954	-1393015722	0,0,2,2,6,26,926
5b9076084dfab521d96641d304481fcbdf	-416756415	0,1,2,4,1,33,233
1918451186ac39a1394608	1656096022	0,0,1,0,6,22,22
c6e4d7327dd356eab1c6d0691c5ee9	-615698422	0,0,1,6,10,26,226
88103dee043fe0259ee790648d7a89c07a	472963931	0,1,2,6,11,31,931
82254259d0e9319528c3a9fec498013d2e6b	-793310774	0,0,0,5,10,74,874
835e64325124c6fbe3a8fca23ae81cc2e83e131a433f61882f96f377bd5b7326b6c894f4d50e39e5a68f5f42104304c2212ffa8890604092d11bce	-716743003	0,1,1,5,5,45,645
4584dcf1cf7a10b7654bb4bbe8c489d57d366abe80f1b0b5b7685cfa79af5902f68e3ebc278381bf6faaba2efb68ee537e051ae428	1429359576	0,0,0,1,8,76,576
66d2c4c0a17dab6d458e16	-1277903071	0,1,1,5,1,77,577
a94be241f6c0079964a2b31f2ad9abc012813e89b6ca6d7895ba53dd237a9967f22a322b8db8cbf754161b1b	-322375565	0,1,0,1,3,83,83
80a31fa4b47461a20a5bcca16dddaa48fd7674073f6d1ba7d91a8e96bdc8d8bb195271b5b3ec105b	57151941	0,1,0,0,5,41,941
469e0fe395f21714dbe736cc1c7a6242	-500951815	0,1,1,2,9,33,833
28fe74bbdb5411c6b9a5717efe5f64b6a7e375b8855f3a340830bda6e6cf58f45f2ad9c9eb0e38e4ea3c292d9da19b6bc5d3c9ba34308eeecb5eb5bac2083f	487314387	0,1,0,0,3,87,387
b39a833f2a8b14c15e0032e0a6e030473521efdf595331ec588e3c70f5a7	-155864848	0,0,1,3,0,0,800
8165b69a2e4ab829a39c128ca6fbc88ae999af8fe21abe602ab238f01824bd0f7710d8653160	1882744455	0,1,0,4,7,55,455
fc70dd6676226ea30afbff182d0f12b53dea3b46	1329384764	0,0,2,1,12,64,764
3ee961f491e500847d5171a73f75a10d7368bac7241879bd2900daea	1005154720	0,0,1,3,0,20,720
5ed49f06eaa22ea3c7127a3c47f7ad0130b40ef6975a391d9175a871a9015a	-1796507504	0,0,0,1,0,44,144
30216e2b47a68530d53e95044b41ff89f14004cf413f3c7d46f8b80008b5f51971117b86	-2047979811	0,1,2,6,13,37,837
f677091d404ffc50034b52de944556226b2412ed2ce8a02f60ac6945d1ab6ebef6d8d8177f944f1282d6025afe	2141587224	0,0,0,0,8,24,224
96ade57ad282aa7e5d5601	-1270354442	0,0,0,2,6,6,206
eda8	958180829	0,1,2,4,13,29,829
-	275646681	0,1,0,2,9,81,681
-	275646681	0,1,0,2,9,81,681
d572be1042de87ed272109462a4a0b4363408c3707e14f903d0e1c50ed0a843dab0c7c9a4db1be5243ea784ecff2d6302e35c8166b5d9f90d99dd2db28	-1704548260	0,0,1,0,12,88,388
3718152897a2c31e3a4daefd8d620ee9f2d6cce61a15f921b91c97052e143ac865691053605434128dc66d37374f	1305362029	0,1,1,6,13,29,29
55c2f664d5dfa00ae305a589e1d52c25ad79d00b2fe13ba6d2a735e6f4acd9d8f40c84de367a3bae424939f2da9938a2e2a2be0e4b19d5e77d89c725ea29	1501075460	0,0,2,3,4,60,460
98ab481f92ec722e20bdb4b7376d6b3552d9bf1d479c2ab6fde5f0b9	-415933875	0,1,2,2,13,73,773
3d422ecc4dc4c2	-854788639	0,1,1,4,1,9,9
37c9e6a2757e5a7db5fd29f9661ad945f1ff	-61407122	0,0,0,2,14,26,526
a27dc5bc16ae3bc14291333f2c6df5bc40fbd4543fa367664ecbcf6de8fb05f8f4805a3e1d2ae37f0b7083acb135	-708912782	0,0,0,5,2,66,866
";

    /// The partition counts of [`JAVA_VECTORS`]' last column.
    const PARTITION_COUNTS: [i32; 7] = [1, 2, 3, 7, 16, 100, 1000];

    fn unhex(s: &str) -> Vec<u8> {
        if s == "-" {
            return Vec::new();
        }
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn java_vectors() -> Vec<(Vec<u8>, i32, Vec<i32>)> {
        JAVA_VECTORS
            .lines()
            .map(|line| {
                let f: Vec<&str> = line.split('\t').collect();
                assert_eq!(f.len(), 3, "{line:?}");
                let parts = f[2].split(',').map(|p| p.parse().unwrap()).collect();
                (unhex(f[0]), f[1].parse().unwrap(), parts)
            })
            .collect()
    }

    #[test]
    fn murmur2_matches_the_java_client() {
        let vectors = java_vectors();
        assert_eq!(vectors.len(), 121);
        // Every tail length, including the empty key.
        let lens: HashSet<usize> = vectors.iter().map(|(k, _, _)| k.len() % 4).collect();
        assert_eq!(lens.len(), 4);
        assert!(vectors.iter().any(|(k, _, _)| k.is_empty()));
        let p = DefaultPartitioner::new();
        for (key, hash, parts) in &vectors {
            assert_eq!(murmur2(key), *hash, "murmur2({key:02x?})");
            for (&n, &want) in PARTITION_COUNTS.iter().zip(parts) {
                assert_eq!(to_positive(murmur2(key)) % n, want, "{key:02x?} n={n}");
                assert_eq!(partition_for_key(key, n), want, "{key:02x?} n={n}");
                assert_eq!(p.partition("t", Some(key), None, n), want);
                assert_eq!(
                    KeyHashPartitioner::new().partition("t", Some(key), None, n),
                    want
                );
            }
        }
    }

    #[test]
    fn kafka_utils_test_vectors() {
        // org.apache.kafka.common.utils.UtilsTest#testMurmur2.
        assert_eq!(murmur2(b"21"), -973932308);
        assert_eq!(murmur2(b"foobar"), -790332482);
        assert_eq!(murmur2(b"a-little-bit-long-string"), -985981536);
        assert_eq!(murmur2(b"a-little-bit-longer-string"), -1486304829);
        assert_eq!(
            murmur2(b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8"),
            -58897971
        );
        assert_eq!(murmur2(b"abc"), 479470107);
    }

    #[test]
    fn to_positive_clears_the_sign_bit() {
        assert_eq!(to_positive(0), 0);
        assert_eq!(to_positive(7), 7);
        assert_eq!(to_positive(-1), i32::MAX);
        assert_eq!(to_positive(i32::MIN), 0);
        assert_eq!(to_positive(i32::MIN + 5), 5);
        assert_eq!(to_positive(i32::MAX), i32::MAX);
    }

    #[test]
    fn sticky_stays_until_new_batch_then_moves() {
        for p in [
            &DefaultPartitioner::new() as &dyn Partitioner,
            &KeyHashPartitioner::new(),
            &StickyPartitioner::new(),
        ] {
            let n = 5;
            let mut current = p.partition("t", None, None, n);
            assert!((0..n).contains(&current));
            for _round in 0..200 {
                for _ in 0..10 {
                    assert_eq!(p.partition("t", None, Some(b"v"), n), current);
                }
                // A batch of another partition filling up changes nothing.
                p.on_new_batch("t", n, (current + 1) % n);
                assert_eq!(p.partition("t", None, None, n), current);
                p.on_new_batch("t", n, current);
                let next = p.partition("t", None, None, n);
                assert_ne!(next, current, "{p:?}");
                assert!((0..n).contains(&next));
                // A second notification for the old partition (another
                // batch of it filling concurrently) must not move it again.
                p.on_new_batch("t", n, current);
                assert_eq!(p.partition("t", None, None, n), next);
                current = next;
            }
        }
    }

    #[test]
    fn sticky_rotation_visits_every_partition() {
        let p = StickyPartitioner::new();
        let n = 6;
        let mut seen = HashSet::new();
        let mut counts = [0u32; 6];
        let mut current = p.partition("t", None, None, n);
        for _ in 0..6000 {
            seen.insert(current);
            counts[current as usize] += 1;
            p.on_new_batch("t", n, current);
            current = p.partition("t", None, None, n);
        }
        assert_eq!(seen.len(), 6);
        // Uniform over the other 5: each partition about 1000 times.
        assert!(
            counts.iter().all(|&c| (700..1300).contains(&c)),
            "{counts:?}"
        );
    }

    #[test]
    fn sticky_edge_cases() {
        let p = DefaultPartitioner::new();
        assert_eq!(p.sticky_partition("t"), None);
        // One partition: always 0, even after new batches.
        assert_eq!(p.partition("single", None, None, 1), 0);
        p.on_new_batch("single", 1, 0);
        assert_eq!(p.partition("single", None, None, 1), 0);
        // Topics are independent.
        let a = p.partition("a", None, None, 1000);
        let b = p.partition("b", None, None, 1000);
        p.on_new_batch("a", 1000, a);
        assert_eq!(p.partition("b", None, None, 1000), b);
        assert_eq!(p.sticky_partition("b"), Some(b));
        // on_new_batch before any partition() picks one (not `previous`).
        p.on_new_batch("fresh", 2, 0);
        assert_eq!(p.sticky_partition("fresh"), Some(1));
        // Fewer partitions than the sticky choice: a valid one is chosen.
        let big = p.partition("shrink", None, None, 1000);
        let small = p.partition("shrink", None, None, 2);
        assert!((0..2).contains(&small));
        if big < 2 {
            assert_eq!(small, big, "still valid: kept");
        }
        assert_eq!(p.partition("shrink", None, None, 2), small, "then sticky");
        // Keyed records, including the empty key, are hashed, never sticky.
        assert_eq!(p.partition("t", Some(b""), None, 16), 9);
        assert_eq!(p.sticky_partition("t"), None);
        // Nonsensical counts do not panic.
        for q in [
            &p as &dyn Partitioner,
            &StickyPartitioner::new(),
            &RoundRobinPartitioner::new(),
            &FixedPartitioner::new(3),
        ] {
            assert_eq!(q.partition("t", None, None, 0), 0);
            assert_eq!(q.partition("t", Some(b"k"), None, -3), 0);
            q.on_new_batch("t", 0, 0);
        }
    }

    /// The producer's call pattern when no partition has an open batch (each
    /// batch sent before the next record): `partition`, `on_new_batch`,
    /// `partition` again for every record. Every partition still gets its
    /// turn, in order.
    #[test]
    fn round_robin_new_batch_for_every_record_skips_no_partition() {
        let p = RoundRobinPartitioner::new();
        let got: Vec<i32> = (0..9)
            .map(|_| {
                let first = p.partition("t", None, None, 3);
                p.on_new_batch("t", 3, first);
                p.partition("t", None, None, 3)
            })
            .collect();
        assert_eq!(got, [0, 1, 2, 0, 1, 2, 0, 1, 2]);
    }

    #[test]
    fn round_robin_cycles_per_topic() {
        let p = RoundRobinPartitioner::new();
        let got: Vec<i32> = (0..10)
            .map(|i| p.partition("t", Some(format!("{i}").as_bytes()), None, 4))
            .collect();
        assert_eq!(got, [0, 1, 2, 3, 0, 1, 2, 3, 0, 1]);
        let other: Vec<i32> = (0..4).map(|_| p.partition("u", None, None, 3)).collect();
        assert_eq!(other, [0, 1, 2, 0]);
        // The producer's second call after on_new_batch keeps the record's
        // partition, so no partition is skipped.
        p.on_new_batch("t", 4, 1);
        assert_eq!(p.partition("t", None, None, 4), 1);
        assert_eq!(p.partition("t", None, None, 4), 2);
        // Wrap-around as Java's int counter: toPositive(MIN_VALUE) == 0.
        p.counters.with("w", RoundRobinSlot::default, |c| {
            c.next.store(i32::MAX - 1, Ordering::Relaxed)
        });
        let wrapped: Vec<i32> = (0..4).map(|_| p.partition("w", None, None, 10)).collect();
        assert_eq!(wrapped, [(i32::MAX - 1) % 10, i32::MAX % 10, 0, 1]);
    }

    #[test]
    fn fixed_maps_subtasks_like_flink() {
        // FlinkFixedPartitionerTest: partitions[parallelInstanceId % len].
        for n in 1..=8 {
            for subtask in 0..20usize {
                let p = FixedPartitioner::new(subtask);
                assert_eq!(p.subtask_index(), subtask);
                let want = (subtask % n as usize) as i32;
                for key in [None, Some(&b"k"[..]), Some(&b"other"[..])] {
                    assert_eq!(p.partition("t", key, None, n), want);
                }
                p.on_new_batch("t", n, want);
                assert_eq!(p.partition("t", None, None, n), want);
            }
        }
        // Fewer subtasks than partitions: 2 subtasks, 3 partitions -> 0, 1.
        let two: Vec<i32> = (0..2)
            .map(|i| FixedPartitioner::new(i).partition("t", None, None, 3))
            .collect();
        assert_eq!(two, [0, 1]);
        // More subtasks than partitions: 5 subtasks, 2 partitions.
        let five: Vec<i32> = (0..5)
            .map(|i| FixedPartitioner::new(i).partition("t", None, None, 2))
            .collect();
        assert_eq!(five, [0, 1, 0, 1, 0]);
    }

    #[test]
    fn shared_concurrent_use() {
        let p: Arc<dyn Partitioner> = Arc::new(DefaultPartitioner::new());
        let rr: Arc<dyn Partitioner> = Arc::new(RoundRobinPartitioner::new());
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let p = p.clone();
                let rr = rr.clone();
                std::thread::spawn(move || {
                    let mut hist = [0u32; 7];
                    for i in 0..5000 {
                        let topic = ["a", "b", "c"][i % 3];
                        let q = p.partition(topic, None, None, 7);
                        assert!((0..7).contains(&q));
                        if i % 17 == t {
                            p.on_new_batch(topic, 7, q);
                        }
                        hist[rr.partition("rr", None, None, 7) as usize] += 1;
                    }
                    hist
                })
            })
            .collect();
        let mut total = [0u32; 7];
        for t in threads {
            for (s, h) in total.iter_mut().zip(t.join().unwrap()) {
                *s += h;
            }
        }
        // 20000 round-robin picks: every partition exactly 20000 / 7 or +1.
        assert_eq!(total.iter().sum::<u32>(), 20000);
        assert!(total.iter().all(|&c| c == 2857 || c == 2858), "{total:?}");
        let boxed: Box<dyn Partitioner> = Box::new(FixedPartitioner::new(9));
        assert_eq!(boxed.partition("t", None, None, 4), 1);
        assert!(format!("{p:?}").contains("DefaultPartitioner"));
    }

    /// The default partitioner sends a keyed record to `partition_for_key`'s partition.
    #[test]
    fn a_keyed_record_goes_to_its_keys_partition() {
        use crate::partitioner::{DefaultPartitioner, Partitioner, partition_for_key};
        let p = DefaultPartitioner::new();
        assert_eq!(
            p.partition("orders", Some(b"customer-7"), None, 12),
            partition_for_key(b"customer-7", 12)
        );
    }

    /// `on_new_batch` on the sticky partition moves it on.
    #[test]
    fn a_full_batch_moves_the_sticky_partition_on() {
        use crate::partitioner::{Partitioner, StickyPartitioner};
        let p = StickyPartitioner::new();
        let first = p.partition("orders", None, None, 6);
        p.on_new_batch("orders", 6, first); // its batch is full: move on
        assert_ne!(p.partition("orders", None, None, 6), first);
    }

    /// `partition_for_key` picks Java's partition for a key.
    #[test]
    fn partition_for_key_is_javas() {
        use crate::partitioner::partition_for_key;
        assert_eq!(partition_for_key(b"kafka", 7), 3);
    }

    /// The sticky partitioner ignores keys, and a new batch on a partition other than its choice.
    #[test]
    fn the_sticky_partitioner_ignores_keys_and_other_partitions_batches() {
        use crate::partitioner::{Partitioner, StickyPartitioner};
        let p = StickyPartitioner::new();
        let a = p.partition("t", Some(b"k1"), None, 4);
        assert_eq!(p.partition("t", Some(b"k2"), None, 4), a); // keys ignored
        p.on_new_batch("t", 4, (a + 1) % 4); // not the sticky partition: no-op
        assert_eq!(p.sticky_partition("t"), Some(a));
        p.on_new_batch("t", 4, a);
        assert_ne!(p.partition("t", None, None, 4), a);
    }

    /// The sticky partition chosen for a topic is the one reported.
    #[test]
    fn the_sticky_choice_is_readable() {
        use crate::partitioner::{Partitioner, StickyPartitioner};
        let p = StickyPartitioner::new();
        let chosen = p.partition("orders", None, None, 6);
        assert_eq!(p.sticky_partition("orders"), Some(chosen));
    }

    /// The default partitioner hashes keys as Java and sticks to one partition for null keys.
    #[test]
    fn the_default_partitioner_hashes_keys_and_sticks_for_null_keys() {
        use crate::partitioner::{DefaultPartitioner, Partitioner};
        let p = DefaultPartitioner::new();
        assert_eq!(p.partition("t", Some(b"21"), None, 7), 3); // Java picks 3 too
        let sticky = p.partition("t", None, None, 7); // null key
        assert_eq!(p.partition("t", None, Some(b"next"), 7), sticky);
    }

    /// Keyed records make no sticky choice; a null-key record does.
    #[test]
    fn keyed_records_make_no_sticky_choice() {
        use crate::partitioner::{DefaultPartitioner, Partitioner};
        let p = DefaultPartitioner::new();
        p.partition("orders", Some(b"k"), None, 6); // keyed: no sticky choice
        assert_eq!(p.sticky_partition("orders"), None);
        let chosen = p.partition("orders", None, None, 6);
        assert_eq!(p.sticky_partition("orders"), Some(chosen));
    }

    /// The key-hash partitioner picks Java's partition for a key.
    #[test]
    fn the_key_hash_partitioner_hashes_as_java() {
        use crate::partitioner::{KeyHashPartitioner, Partitioner};
        let p = KeyHashPartitioner::new();
        assert_eq!(p.partition("t", Some(b"21"), None, 7), 3);
    }

    /// The key-hash partitioner keeps a sticky partition for null keys.
    #[test]
    fn the_key_hash_partitioner_sticks_for_null_keys() {
        use crate::partitioner::{KeyHashPartitioner, Partitioner};
        let p = KeyHashPartitioner::new();
        let chosen = p.partition("orders", None, None, 6);
        assert_eq!(p.sticky_partition("orders"), Some(chosen));
    }

    /// Round robin cycles per topic, and the second call for a record needing a new batch keeps its partition.
    #[test]
    fn round_robin_cycles_per_topic_and_keeps_a_records_second_call() {
        use crate::partitioner::{Partitioner, RoundRobinPartitioner};
        let p = RoundRobinPartitioner::new();
        let got: Vec<i32> = (0..5)
            .map(|_| p.partition("t", Some(b"k"), None, 3))
            .collect();
        assert_eq!(got, [0, 1, 2, 0, 1]);
        assert_eq!(p.partition("other", None, None, 3), 0); // counters are per topic
        // The producer's second call for a record that needs a new batch keeps it.
        let first = p.partition("t", None, None, 3);
        p.on_new_batch("t", 3, first);
        assert_eq!(p.partition("t", None, None, 3), first);
        assert_eq!(p.partition("t", None, None, 3), (first + 1) % 3);
    }

    /// The fixed partitioner writes to the subtask index modulo the partition count.
    #[test]
    fn fixed_takes_the_subtask_index_modulo_partitions() {
        use crate::partitioner::{FixedPartitioner, Partitioner};
        let p = FixedPartitioner::new(5);
        assert_eq!(p.partition("t", Some(b"any"), None, 3), 2);
        assert_eq!(p.partition("t", None, None, 8), 5);
    }

    /// The fixed partitioner reports its subtask index.
    #[test]
    fn fixed_reports_its_subtask_index() {
        use crate::partitioner::FixedPartitioner;
        assert_eq!(FixedPartitioner::new(3).subtask_index(), 3);
    }
}
