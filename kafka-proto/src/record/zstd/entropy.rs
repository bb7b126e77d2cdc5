//! Entropy coding of zstd blocks: the backward-read bit streams, FSE tables
//! (sequences and Huffman weights) and Huffman codes (literals), as the
//! Zstandard format (RFC 8878) defines them.

use std::cell::Cell;

/// A forward bit writer, least significant bit first, as zstd's bit streams
/// are written (decoders read them from the end). Bits gather in a 64-bit
/// accumulator that [`BitWriter::flush`] stores 8 bytes at a time into a
/// buffer (see [`write_stream`]): callers add at most 56 bits between
/// flushes. Writing past the buffer is not done but remembered, and the
/// stream reported as failed.
pub(super) struct BitWriter<'a> {
    buf: &'a mut [u8],
    pos: usize,
    acc: u64,
    bits: u32,
    overflow: bool,
}

impl BitWriter<'_> {
    /// Adds the low `n` bits of `value`; no more than 56 bits may be added
    /// between two flushes.
    #[inline]
    pub(super) fn add(&mut self, value: u64, n: u32) {
        debug_assert!(self.bits + n <= 63);
        self.acc |= (value & ((1u64 << n) - 1)) << self.bits;
        self.bits += n;
    }

    /// Bits in the accumulator.
    #[inline]
    pub(super) fn bits(&self) -> u32 {
        self.bits
    }

    /// Moves the whole bytes of the accumulator to the output.
    #[inline]
    pub(super) fn flush(&mut self) {
        match self.buf.get_mut(self.pos..self.pos + 8) {
            Some(dst) => dst.copy_from_slice(&self.acc.to_le_bytes()),
            None => {
                self.overflow = true;
                return;
            }
        }
        let bytes = self.bits >> 3;
        self.pos += bytes as usize;
        self.acc = self.acc.checked_shr(bytes * 8).unwrap_or(0);
        self.bits &= 7;
    }

    /// Adds then flushes.
    pub(super) fn put(&mut self, value: u64, n: u32) {
        self.add(value, n);
        self.flush();
    }
}

/// How a stream ends.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum End {
    /// A 1 bit, then zeros up to the byte boundary (bit streams read
    /// backwards).
    StopBit,
    /// Zeros up to the byte boundary (an FSE table description).
    Pad,
}

/// Appends a bit stream written by `write` to `out`. It is written into a
/// per-thread buffer of `room` bytes (its largest possible size, often
/// far more than it takes) and then copied, so that `out` grows only by
/// what the stream takes. Returns `false`, with `out` as it was, if the
/// stream did not fit.
pub(super) fn write_stream(
    out: &mut Vec<u8>,
    room: usize,
    end: End,
    write: impl FnOnce(&mut BitWriter<'_>),
) -> bool {
    thread_local! {
        static ROOM: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
    }
    let mut buf = ROOM.take();
    if buf.len() < room + 8 {
        buf.resize(room + 8, 0);
    }
    let mut w = BitWriter {
        buf: &mut buf[..room + 8],
        pos: 0,
        acc: 0,
        bits: 0,
        overflow: false,
    };
    write(&mut w);
    w.flush();
    if end == End::StopBit {
        w.put(1, 1);
    }
    // The partial last byte is already stored by the flush.
    let len = w.pos + usize::from(w.bits > 0);
    let fits = !w.overflow && len <= room;
    if fits {
        out.extend_from_slice(&buf[..len]);
    }
    ROOM.set(buf);
    fits
}

/// Index of the highest set bit (`v > 0`).
#[inline]
pub(super) fn highbit(v: u32) -> u32 {
    31 - v.leading_zeros()
}

/// Largest FSE table: 2^9 states (literal and match lengths).
const MAX_FSE_LOG: u32 = 9;
/// Largest FSE alphabet: the 53 match length codes (rounded up to a power
/// of two, so that masked indices need no bounds check).
const MAX_FSE_SYMBOLS: usize = 64;

/// An FSE encoding table built from a normalized distribution: for each
/// symbol, how to find the next state, and the states grouped by symbol.
#[derive(Clone)]
pub(super) struct FseTable {
    log: u32,
    /// Encoder states (`table size + decoder state`), grouped by symbol.
    states: [u16; 1 << MAX_FSE_LOG],
    /// Per symbol: `(delta_nb_bits, delta_find_state)`.
    symbols: [(u32, i32); MAX_FSE_SYMBOLS],
}

impl std::fmt::Debug for FseTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FseTable").field("log", &self.log).finish()
    }
}

impl FseTable {
    /// The table of a single symbol repeated (RLE mode): no state bits.
    pub(super) fn rle() -> Self {
        FseTable {
            log: 0,
            states: [0; 1 << MAX_FSE_LOG],
            symbols: [(0, 0); MAX_FSE_SYMBOLS],
        }
    }

    /// The table of `norm` (probabilities summing to `2^log`, `-1` for
    /// "less than one", which counts as one), with the symbol spreading
    /// every decoder uses.
    pub(super) fn new(norm: &[i16], log: u32) -> Self {
        debug_assert!(norm.len() <= MAX_FSE_SYMBOLS && (5..=MAX_FSE_LOG).contains(&log));
        let size = 1usize << log;
        let mask = size - 1;
        let step = (size >> 1) + (size >> 3) + 3;
        let mut symbol_at = [0u8; 1 << MAX_FSE_LOG];
        let mut high = size - 1;
        let mut cumul = [0usize; MAX_FSE_SYMBOLS + 1];
        for (s, &n) in norm.iter().enumerate() {
            if n == -1 {
                cumul[s + 1] = cumul[s] + 1;
                symbol_at[high] = s as u8;
                high -= 1;
            } else {
                cumul[s + 1] = cumul[s] + n.max(0) as usize;
            }
        }
        let mut pos = 0;
        for (s, &n) in norm.iter().enumerate() {
            for _ in 0..n.max(0) {
                symbol_at[pos] = s as u8;
                pos = (pos + step) & mask;
                while pos > high {
                    pos = (pos + step) & mask;
                }
            }
        }
        let mut table = FseTable {
            log,
            states: [0; 1 << MAX_FSE_LOG],
            symbols: [(0, 0); MAX_FSE_SYMBOLS],
        };
        let mut next = cumul;
        for (u, &s) in symbol_at[..size].iter().enumerate() {
            let s = usize::from(s);
            table.states[next[s]] = (size + u) as u16;
            next[s] += 1;
        }
        let mut total = 0i32;
        for (s, &n) in norm.iter().enumerate() {
            table.symbols[s] = match n {
                0 => (((log + 1) << 16) - size as u32, 0),
                -1 | 1 => {
                    let t = ((log << 16) - size as u32, total - 1);
                    total += 1;
                    t
                }
                n => {
                    let n = n as u32;
                    let max_bits_out = log - highbit(n - 1);
                    let t = ((max_bits_out << 16) - (n << max_bits_out), total - n as i32);
                    total += n as i32;
                    t
                }
            };
        }
        table
    }

    /// The first state, for the last symbol encoded (the first decoded):
    /// the symbol's state with the most bits, so that decoding it reads
    /// at least one bit whenever the symbol is not alone.
    #[inline]
    pub(super) fn init(&self, symbol: u8) -> u32 {
        let (dnb, dfs) = self.symbols[usize::from(symbol) & (MAX_FSE_SYMBOLS - 1)];
        let nb = (dnb + (1 << 15)) >> 16;
        let v = (nb << 16) - dnb;
        u32::from(self.states[((v >> nb) as i32 + dfs) as usize & ((1 << MAX_FSE_LOG) - 1)])
    }

    /// Encodes `symbol` from `state`, writing the state's low bits.
    #[inline]
    pub(super) fn encode(&self, w: &mut BitWriter<'_>, state: &mut u32, symbol: u8) {
        let (dnb, dfs) = self.symbols[usize::from(symbol) & (MAX_FSE_SYMBOLS - 1)];
        let nb = (*state + dnb) >> 16;
        w.add(u64::from(*state), nb);
        let next = ((*state >> nb) as i32 + dfs) as usize;
        *state = u32::from(self.states[next & ((1 << MAX_FSE_LOG) - 1)]);
    }

    /// Writes the final state (read first by the decoder).
    #[inline]
    pub(super) fn flush(&self, w: &mut BitWriter<'_>, state: u32) {
        if self.log > 0 {
            w.add(u64::from(state), self.log);
        }
    }
}

/// Normalizes `counts` (at least two non-zero) to probabilities summing to
/// `2^log`, each present symbol getting at least 1. Returns `false` when
/// that is impossible (more symbols than states).
pub(super) fn normalize(counts: &[u32], log: u32, norm: &mut [i16]) -> bool {
    let size = 1i64 << log;
    let total: i64 = counts.iter().map(|&c| i64::from(c)).sum();
    if total == 0 {
        return false;
    }
    let mut sum = 0i64;
    for (n, &c) in norm.iter_mut().zip(counts) {
        *n = if c == 0 {
            0
        } else {
            ((i64::from(c) * size + total / 2) / total).max(1) as i16
        };
        sum += i64::from(*n);
    }
    let largest = |norm: &[i16]| {
        let mut best = 0;
        for (i, &n) in norm.iter().enumerate() {
            if n > norm[best] {
                best = i;
            }
        }
        best
    };
    while sum > size {
        let i = largest(norm);
        if norm[i] <= 1 {
            return false;
        }
        norm[i] -= 1;
        sum -= 1;
    }
    if sum < size {
        let i = largest(norm);
        norm[i] += (size - sum) as i16;
    }
    true
}

/// Appends an FSE table description: the normalized distribution `norm`
/// (up to its last non-zero symbol) of accuracy `log`, padded to a byte.
/// Returns `false` if it could not be written.
pub(super) fn write_distribution(out: &mut Vec<u8>, norm: &[i16], log: u32) -> bool {
    // At most 64 symbols of 10 bits, with zero-run flags.
    write_stream(out, 128, End::Pad, |w| distribution(w, norm, log))
}

fn distribution(w: &mut BitWriter<'_>, norm: &[i16], log: u32) {
    w.put(u64::from(log - 5), 4);
    let mut remaining: i32 = (1 << log) + 1;
    let mut threshold: i32 = 1 << log;
    let mut nb_bits = log + 1;
    let mut s = 0;
    let mut previous_zero = false;
    while remaining > 1 && s < norm.len() {
        if previous_zero {
            let start = s;
            while s < norm.len() && norm[s] == 0 {
                s += 1;
            }
            let mut run = s - start;
            while run >= 3 {
                w.put(3, 2);
                run -= 3;
            }
            w.put(run as u64, 2);
            if s == norm.len() {
                break;
            }
        }
        let count = i32::from(norm[s]);
        s += 1;
        let max = (2 * threshold - 1) - remaining;
        remaining -= count.abs();
        let mut value = count + 1;
        if value >= threshold {
            value += max;
        }
        let bits = if value < max { nb_bits - 1 } else { nb_bits };
        w.put(value as u64, bits);
        previous_zero = count == 0;
        while remaining < threshold {
            nb_bits -= 1;
            threshold >>= 1;
        }
    }
}

/// Longest Huffman code zstd allows.
const MAX_HUF_BITS: u32 = 11;

/// A Huffman code for the literals of one block.
pub(super) struct Huffman {
    codes: [u16; 256],
    lens: [u8; 256],
    /// Length of the longest code (the table log).
    max_bits: u32,
    /// Largest symbol present; its weight is implied.
    last: usize,
}

impl std::fmt::Debug for Huffman {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Huffman")
            .field("max_bits", &self.max_bits)
            .field("last", &self.last)
            .finish()
    }
}

/// Huffman code lengths of `counts` (at least two non-zero), none longer
/// than [`MAX_HUF_BITS`]; the code is complete (Kraft sum exactly 1), as
/// zstd's implied last weight requires.
fn code_lengths(counts: &[u32; 256], lens: &mut [u8; 256]) {
    // Present symbols by increasing count (ties by symbol).
    let mut sorted = [0u64; 256];
    let mut n = 0;
    for (s, &c) in counts.iter().enumerate() {
        if c > 0 {
            sorted[n & 255] = (u64::from(c) << 8) | s as u64;
            n += 1;
        }
    }
    let sorted = &mut sorted[..n];
    sorted.sort_unstable();
    let mut shift = 0;
    loop {
        // Two-queue Huffman: leaves in order (nodes 0..n), internal nodes
        // in creation order, which is also increasing (nodes n..2n-1).
        let mut weight = [0u64; 512];
        let mut parent = [0u16; 512];
        for (w, &l) in weight.iter_mut().zip(sorted.iter()) {
            // Flattened by `shift` when the tree was too deep.
            *w = ((l >> 8) >> shift).max(1);
        }
        let (mut leaf, mut node) = (0, n);
        for k in n..2 * n - 1 {
            let a = smallest(&weight, n, k, &mut leaf, &mut node);
            let b = smallest(&weight, n, k, &mut leaf, &mut node);
            weight[k & 511] = weight[a & 511] + weight[b & 511];
            parent[a & 511] = k as u16;
            parent[b & 511] = k as u16;
        }
        // Depths from the root down (a parent comes after its children).
        let mut depth = [0u8; 512];
        let mut longest = 0;
        for k in (0..2 * n - 2).rev() {
            depth[k & 511] = depth[usize::from(parent[k & 511]) & 511] + 1;
        }
        for &d in &depth[..n] {
            longest = longest.max(d);
        }
        if u32::from(longest) <= MAX_HUF_BITS {
            for (&l, &d) in sorted.iter().zip(&depth[..n]) {
                lens[(l & 0xff) as usize] = d;
            }
            return;
        }
        shift += 1;
    }
}

/// The lighter of the next leaf and the next internal node.
#[inline(always)]
fn smallest(weight: &[u64; 512], n: usize, k: usize, leaf: &mut usize, node: &mut usize) -> usize {
    if *leaf < n && (*node >= k || weight[*leaf & 511] <= weight[*node & 511]) {
        *leaf += 1;
        *leaf - 1
    } else {
        *node += 1;
        *node - 1
    }
}

impl Huffman {
    /// The code for `counts`, which must have at least two non-zero entries.
    pub(super) fn new(counts: &[u32; 256]) -> Self {
        let mut lens = [0u8; 256];
        code_lengths(counts, &mut lens);
        let last = lens.iter().rposition(|&l| l > 0).unwrap_or(0);
        let present = &lens[..=last];
        let max_bits = u32::from(present.iter().copied().max().unwrap_or(0));
        // Canonical codes as zstd assigns them: longest codes first, from
        // value 0, symbols in order within a length.
        // (Lengths are at most 11: indices masked to 16 entries.)
        let mut per_len = [0u16; 16];
        for &l in present {
            per_len[usize::from(l) & 15] += 1;
        }
        let mut next = [0u16; 16];
        let mut min = 0u16;
        for l in (1..=max_bits as usize & 15).rev() {
            next[l] = min;
            min = (min + per_len[l]) >> 1;
        }
        let mut codes = [0u16; 256];
        for (s, &l) in present.iter().enumerate() {
            if l > 0 {
                let l = usize::from(l) & 15;
                codes[s] = next[l];
                next[l] += 1;
            }
        }
        Huffman {
            codes,
            lens,
            max_bits,
            last,
        }
    }

    /// Size in bits of `counts` coded with this table.
    pub(super) fn cost(&self, counts: &[u32; 256]) -> usize {
        counts
            .iter()
            .zip(&self.lens)
            .map(|(&c, &l)| c as usize * usize::from(l))
            .sum()
    }

    fn weight(&self, s: usize) -> u8 {
        match self.lens[s] {
            0 => 0,
            l => (self.max_bits + 1 - u32::from(l)) as u8,
        }
    }

    /// Writes the tree description (the weights of symbols `0..last`):
    /// FSE-compressed when that is smaller or the only way, else direct.
    /// Returns `false` when neither fits (the caller stores raw literals).
    pub(super) fn write_description(&self, out: &mut Vec<u8>) -> bool {
        let n = self.last;
        let mut weights = [0u8; 255];
        for (s, w) in weights[..n].iter_mut().enumerate() {
            *w = self.weight(s);
        }
        let weights = &weights[..n];
        let direct_len = if n <= 128 {
            Some(1 + n.div_ceil(2))
        } else {
            None
        };
        let start = out.len();
        out.push(0);
        if compress_weights(weights, out) {
            let len = out.len() - start - 1;
            if len < 128 && direct_len.is_none_or(|d| len + 1 < d) {
                out[start] = len as u8;
                return true;
            }
        }
        out.truncate(start);
        if direct_len.is_none() {
            return false;
        }
        out.push(127 + n as u8);
        for pair in weights.chunks(2) {
            out.push((pair[0] << 4) | pair.get(1).copied().unwrap_or(0));
        }
        true
    }

    /// Appends one Huffman stream of `lits` (coded last symbol first).
    /// Returns `false` if it could not be written.
    pub(super) fn encode_stream(&self, lits: &[u8], out: &mut Vec<u8>) -> bool {
        let room = (lits.len() * MAX_HUF_BITS as usize).div_ceil(8) + 1;
        write_stream(out, room, End::StopBit, |w| {
            // At most 4 codes of 11 bits between flushes.
            for chunk in lits.rchunks(4) {
                for &b in chunk.iter().rev() {
                    let b = usize::from(b);
                    w.add(u64::from(self.codes[b]), u32::from(self.lens[b]));
                }
                w.flush();
            }
        })
    }
}

/// Appends Huffman weights FSE-compressed (two interleaved states, accuracy
/// 6) to `out`. Returns `false` when the weights cannot be (fewer than two
/// symbols, or only one weight value).
fn compress_weights(weights: &[u8], out: &mut Vec<u8>) -> bool {
    const LOG: u32 = 6;
    let n = weights.len();
    if n < 2 {
        return false;
    }
    let mut counts = [0u32; MAX_HUF_BITS as usize + 1];
    for &w in weights {
        counts[usize::from(w)] += 1;
    }
    let max_weight = counts.iter().rposition(|&c| c > 0).unwrap_or(0);
    if counts.iter().filter(|&&c| c > 0).count() < 2 {
        return false;
    }
    let counts = &counts[..=max_weight];
    let mut norm = [0i16; MAX_HUF_BITS as usize + 1];
    let norm = &mut norm[..counts.len()];
    if !normalize(counts, LOG, norm) {
        return false;
    }
    if !write_distribution(out, norm, LOG) {
        return false;
    }
    let table = FseTable::new(norm, LOG);
    // At most 255 weights of 6 bits, and two states.
    write_stream(out, 200, End::StopBit, |w| {
        // The decoder reads state 1 (even symbols) first, then state 2
        // (odd symbols), alternating, until the stream runs out; so encode
        // from the end, state 2 flushed first.
        let (mut s1, mut s2);
        let mut i;
        if n % 2 == 1 {
            s1 = table.init(weights[n - 1]);
            s2 = table.init(weights[n - 2]);
            table.encode(w, &mut s1, weights[n - 3]);
            w.flush();
            i = n - 3;
        } else {
            s2 = table.init(weights[n - 1]);
            s1 = table.init(weights[n - 2]);
            i = n - 2;
        }
        while i > 0 {
            table.encode(w, &mut s2, weights[i - 1]);
            table.encode(w, &mut s1, weights[i - 2]);
            w.flush();
            i -= 2;
        }
        table.flush(w, s2);
        table.flush(w, s1);
    })
}

/// `log2(x)` in 1/256 bits, approximated linearly between powers of two
/// (within 0.09 bit): for comparing coding costs.
fn log2_256(x: u32) -> u64 {
    let hb = highbit(x);
    (u64::from(hb) << 8) + ((u64::from(x - (1 << hb)) << 8) >> hb)
}

/// Approximate entropy, in bits, of `n` symbols counted in `counts`.
pub(super) fn entropy_bits(counts: &[u32], n: usize) -> usize {
    let log_n = log2_256(n as u32);
    let bits: u64 = counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| u64::from(c) * log_n.saturating_sub(log2_256(c)))
        .sum();
    (bits >> 8) as usize
}

/// Approximate cost, in 1/256 bits, of coding `counts` with the FSE
/// distribution `norm` of accuracy `log` (`u64::MAX` if a counted symbol
/// has no probability).
pub(super) fn fse_cost(counts: &[u32], norm: &[i16], log: u32) -> u64 {
    let mut cost = 0u64;
    for (s, &c) in counts.iter().enumerate() {
        if c == 0 {
            continue;
        }
        let p = match norm.get(s) {
            Some(&-1) => 1,
            Some(&p) if p > 0 => p as u32,
            _ => return u64::MAX,
        };
        cost += u64::from(c) * ((u64::from(log) << 8) - log2_256(p));
    }
    cost
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bits_are_written_least_significant_first() {
        let mut out = vec![0xaa];
        assert!(write_stream(&mut out, 5, End::StopBit, |w| {
            w.add(0b101, 3);
            w.add(0xffff_ffff, 32);
            w.add(0, 2);
        }));
        assert_eq!(out.remove(0), 0xaa, "appended");
        // 3 + 32 + 2 bits, the stop bit at bit 37, padded to 5 bytes.
        assert_eq!(out, [0xfd, 0xff, 0xff, 0xff, 0x27]);
    }

    #[test]
    fn a_stream_beyond_its_room_fails_and_leaves_the_output_alone() {
        let mut out = vec![1, 2];
        assert!(!write_stream(&mut out, 4, End::Pad, |w| {
            for _ in 0..10 {
                w.put(0xff, 8);
            }
        }));
        assert_eq!(out, [1, 2]);
    }

    #[test]
    fn the_spec_example_code_is_canonical() {
        // Lengths 1, 2, 3, 0, 4, 4 give the codes 1, 01, 001, -, 0000, 0001.
        let mut counts = [0u32; 256];
        counts[..6].copy_from_slice(&[8, 4, 2, 0, 1, 1]);
        let h = Huffman::new(&counts);
        assert_eq!(h.lens[..6], [1, 2, 3, 0, 4, 4]);
        assert_eq!(h.codes[..6], [1, 1, 1, 0, 0, 1]);
        assert_eq!((h.max_bits, h.last), (4, 5));
        assert_eq!(h.weight(0), 4);
    }

    proptest! {
        #[test]
        fn huffman_codes_are_complete_and_at_most_11_bits(
            counts in proptest::collection::vec(0u32..100_000, 256),
            fib in any::<bool>(),
        ) {
            let mut c = [0u32; 256];
            c.copy_from_slice(&counts);
            if fib {
                // Fibonacci counts make the deepest unlimited trees.
                let (mut a, mut b) = (1u32, 1u32);
                for x in c.iter_mut().take(40) {
                    *x = a;
                    (a, b) = (b, a.saturating_add(b));
                }
            }
            c[0] = c[0].max(1);
            c[255] = c[255].max(1);
            let h = Huffman::new(&c);
            let kraft: u64 = h.lens.iter().filter(|&&l| l > 0).map(|&l| 1u64 << (11 - l)).sum();
            prop_assert_eq!(kraft, 1 << 11);
            prop_assert!(h.max_bits <= MAX_HUF_BITS);
            for (s, &n) in c.iter().enumerate() {
                prop_assert_eq!(n > 0, h.lens[s] > 0);
            }
        }

        #[test]
        fn normalized_counts_sum_to_the_table_size(
            counts in proptest::collection::vec(0u32..10_000, 2..53),
            log in 5u32..=9,
        ) {
            let mut counts = counts;
            counts[0] += 1;
            counts[1] += 1;
            prop_assume!(counts.iter().filter(|&&c| c > 0).count() <= 1 << log);
            let mut norm = vec![0i16; counts.len()];
            prop_assert!(normalize(&counts, log, &mut norm));
            prop_assert_eq!(norm.iter().map(|&n| i64::from(n)).sum::<i64>(), 1 << log);
            for (&c, &n) in counts.iter().zip(&norm) {
                prop_assert_eq!(c > 0, n > 0);
            }
        }
    }
}
