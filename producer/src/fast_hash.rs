//! A fast hasher for the maps looked up on every send (the accumulator's
//! topic queues, the sticky partitioner's choice per topic).
//!
//! Their keys are the topic names the application sends to — never data
//! from the network — so the denial-of-service resistance of the standard
//! SipHash buys nothing there, and SipHash cost about 3% of a send. This is
//! the multiply-rotate word hash of rustc's `FxHasher`, written out here
//! (a dozen lines) instead of adding a dependency.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Multiply-rotate hasher over the length and the 8-byte words of the input
/// (little-endian, the last word zero-padded).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct FastHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FastHasher {
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        // The length first: zero padding alone would make "a" and "a\0" one.
        self.add(bytes.len() as u64);
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    fn finish(&self) -> u64 {
        self.hash
    }
}

/// A `HashMap` with [`FastHasher`].
pub(crate) type FastHashMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    fn hash(s: &str) -> u64 {
        BuildHasherDefault::<FastHasher>::default().hash_one(s)
    }

    #[test]
    fn distinct_topic_names_hash_apart_and_lookups_work() {
        // Names differing only after the first word, or by length (zero
        // padding), must not collide.
        let names = [
            "orders",
            "orders-1",
            "orders-2",
            "orders-10",
            "a",
            "a\0",
            "",
            "payments.eu",
            "payments.us",
        ];
        let hashes: std::collections::HashSet<u64> = names.iter().map(|n| hash(n)).collect();
        assert_eq!(hashes.len(), names.len());
        let mut m: FastHashMap<std::sync::Arc<str>, usize> = FastHashMap::default();
        for (i, n) in names.iter().enumerate() {
            m.insert((*n).into(), i);
        }
        for (i, n) in names.iter().enumerate() {
            assert_eq!(m.get(*n), Some(&i));
        }
    }
}
