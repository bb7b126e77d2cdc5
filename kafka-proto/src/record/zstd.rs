//! zstd compression of a batch's records section, pure Rust: a frame
//! encoder of our own, built for inputs the size of a producer batch.
//!
//! ruzstd stays our zstd decoder. Its encoder is built for streams and
//! costs more to set up than a 16 KiB batch costs to compress: per frame
//! it allocates and zero-fills a 128 KiB window and a suffix table of one
//! `Option<usize>` per input byte, and per block it builds each entropy
//! table as 256 freshly allocated vectors. Its match finder can be
//! replaced, but its block encoder writes match lengths above 65 538
//! wrongly and panics on some blocks a better match finder produces (more
//! than 1 KiB of literals of one byte value; sequences that all start
//! without literals). So the frame and its blocks are written here, with
//! the entropy coders in [`entropy`].
//!
//! # Frame
//!
//! One frame per input: no content size, no checksum (the batch's CRC-32C
//! covers the bytes), and an honest window: the smallest power of two
//! holding the input, from 1 KiB up to 512 KiB (zstd level 1's window).
//! Every block fits in it and every offset is below it, so any decoder
//! (zstd-jni in Kafka, ruzstd in [`super::compression`]) reads the frame
//! with at most that much history. The input is cut into blocks of
//! 128 KiB (zstd's maximum), so a batch of up to 128 KiB is one block.
//! A block of one repeated byte is an RLE block; a block that does not
//! shrink is stored raw.
//!
//! # Matches
//!
//! Greedy LZ77 in the style of zstd's "fast" strategy (level 1), over the
//! whole input (later blocks match into earlier ones, within the window):
//!
//! - The last offset is tried first (4 bytes suffice: a repeated offset
//!   costs almost nothing to code), then a hash table of positions keyed
//!   by the next [`MIN_MATCH`] bytes. A candidate is extended forwards 8
//!   bytes at a time and backwards over the pending literals; two positions
//!   inside each match are hashed for later matches. Where nothing matches
//!   the step grows with the literal run (1 + run / 64), so incompressible
//!   input is crossed quickly.
//! - The table has `2^k` `u32` slots for an input of up to `2^k` bytes
//!   (from 2^8 to 2^16). A slot holds `base + position`, where `base` grows
//!   by the input length at every frame: an entry written by an earlier
//!   frame reads as empty. The table is never cleared (only when the tags
//!   would overflow), and a frame depends only on its own input, whatever
//!   the thread compressed before.
//! - Offsets are coded with zstd's three repeat offsets.
//!
//! # Entropy coding
//!
//! - Literals: Huffman-coded (one stream under 256 literals, four above)
//!   when that is smaller, with the tree description FSE-compressed when
//!   that is smaller (or the only way, for bytes above 128); one repeated
//!   byte is an RLE literals section; fewer than 64 literals are stored raw.
//! - Sequences: each of the literal length, offset and match length codes
//!   with zstd's predefined distribution or, when cheaper, one built from
//!   the block's own codes.
//!
//! # Buffers
//!
//! The hash table, the literals, the sequences and a buffer for bit
//! streams are kept per thread and reused (at most about 1 MiB, for
//! inputs of 128 KiB and more), and the frame is written straight into
//! the caller's vector: once a thread has compressed a batch of some size,
//! compressing another allocates nothing.

mod entropy;

use entropy::{BitWriter, End, FseTable, Huffman, highbit, write_stream};
use std::cell::Cell;
use std::sync::OnceLock;

const MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];
/// Largest block zstd allows.
const MAX_BLOCK: usize = 128 * 1024;
/// Window bounds (log2): zstd's smallest, and level 1's.
const MIN_WINDOW_LOG: u32 = 10;
const MAX_WINDOW_LOG: u32 = 19;
/// Shortest match looked up in the hash table.
const MIN_MATCH: usize = 5;
/// Shortest match at the last offset.
const MIN_REP_MATCH: usize = 4;
/// Hash table size bounds (log2 of the slot count).
const MIN_HASH_LOG: u32 = 8;
const MAX_HASH_LOG: u32 = 16;
/// The step between probed positions grows by one every `2^SKIP_LOG`
/// bytes of literals.
const SKIP_LOG: u32 = 6;
/// Fewer literals are stored raw.
const MIN_HUFFMAN_LITERALS: usize = 64;
/// Inputs of this size or more are sent without matches (positions are
/// `u32` tags); never a Kafka batch.
const MAX_MATCHED_INPUT: usize = 1 << 31;

const BLOCK_RAW: u32 = 0;
const BLOCK_RLE: u32 = 1;
const BLOCK_COMPRESSED: u32 = 2;

/// Literal length codes: baselines and extra bits (RFC 8878, 3.1.1.3.2.1.1).
/// (Padded to 64 entries, so that masked indices need no bounds check.)
const LL_BASE: [u32; 64] = pad([
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 20, 22, 24, 28, 32, 40, 48, 64,
    128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536,
]);
const LL_BITS: [u8; 64] = pad([
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11,
    12, 13, 14, 15, 16,
]);
/// Match length codes: baselines and extra bits.
const ML_BASE: [u32; 64] = pad([
    3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27,
    28, 29, 30, 31, 32, 33, 34, 35, 37, 39, 41, 43, 47, 51, 59, 67, 83, 99, 131, 259, 515, 1027,
    2051, 4099, 8195, 16387, 32771, 65539,
]);
const ML_BITS: [u8; 64] = pad([
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
]);

/// `table` padded with its last value to 64 entries.
const fn pad<T: Copy, const N: usize>(table: [T; N]) -> [T; 64] {
    let mut t = [table[N - 1]; 64];
    let mut i = 0;
    while i < N {
        t[i] = table[i];
        i += 1;
    }
    t
}
/// The predefined distributions (RFC 8878, 3.1.1.3.2.2).
const LL_NORM: [i16; 36] = [
    4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1,
    -1, -1, -1, -1,
];
const ML_NORM: [i16; 53] = [
    1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1,
];
const OF_NORM: [i16; 29] = [
    1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1,
];
const LL_NORM_LOG: u32 = 6;
const ML_NORM_LOG: u32 = 6;
const OF_NORM_LOG: u32 = 5;

/// The code of each value below `N` for codes with the given baselines.
const fn code_table<const N: usize>(base: &[u32], first: u32) -> [u8; N] {
    let mut t = [0u8; N];
    let mut v = 0;
    while v < N {
        let mut c = 0;
        while c + 1 < base.len() && base[c + 1] <= v as u32 + first {
            c += 1;
        }
        t[v] = c as u8;
        v += 1;
    }
    t
}
const LL_CODE: [u8; 64] = code_table::<64>(LL_BASE.split_at(36).0, 0);
const ML_CODE: [u8; 128] = code_table::<128>(ML_BASE.split_at(53).0, 3);

fn ll_code(ll: u32) -> u8 {
    if ll < 64 {
        LL_CODE[ll as usize]
    } else {
        (highbit(ll) + 19) as u8
    }
}

fn ml_code(ml: u32) -> u8 {
    let base = ml - 3;
    if base < 128 {
        ML_CODE[base as usize]
    } else {
        (highbit(base) + 36) as u8
    }
}

fn of_code(off_value: u32) -> u8 {
    highbit(off_value) as u8
}

/// Compresses `input` as one zstd frame appended to `out`.
pub(crate) fn compress(input: &[u8], out: &mut Vec<u8>) {
    thread_local! {
        static ENCODER: Cell<Option<Encoder>> = const { Cell::new(None) };
    }
    ENCODER.with(|cell| {
        let mut encoder = cell.take().unwrap_or_default();
        encoder.frame(input, out);
        cell.set(Some(encoder));
    });
}

/// One sequence: `lit_len` literals, then `match_len` bytes from the
/// offset that `off_value` codes (1 to 3: a repeat offset; above: the
/// offset + 3); with the three codes.
#[derive(Debug, Clone, Copy)]
struct Seq {
    lit_len: u32,
    match_len: u32,
    off_value: u32,
    ll: u8,
    of: u8,
    ml: u8,
}

impl Seq {
    fn new(lit_len: u32, match_len: u32, off_value: u32) -> Self {
        Seq {
            lit_len,
            match_len,
            off_value,
            ll: ll_code(lit_len),
            of: of_code(off_value),
            ml: ml_code(match_len),
        }
    }
}

/// The three repeat offsets, most recent first (RFC 8878, 3.1.2.5).
#[derive(Debug, Clone, Copy)]
struct Reps([u32; 3]);

impl Default for Reps {
    fn default() -> Self {
        Reps([1, 4, 8])
    }
}

impl Reps {
    /// The offset value coding `offset` after `lit_len` literals, updating
    /// the history as the decoder will.
    fn code(&mut self, offset: u32, lit_len: u32) -> u32 {
        let r = self.0;
        let value = if lit_len > 0 {
            match offset {
                o if o == r[0] => 1,
                o if o == r[1] => 2,
                o if o == r[2] => 3,
                o => o + 3,
            }
        } else {
            match offset {
                o if o == r[1] => 1,
                o if o == r[2] => 2,
                o if o == r[0] - 1 => 3,
                o => o + 3,
            }
        };
        self.0 = match (value, lit_len > 0) {
            (1, true) => r,
            (2, true) | (1, false) => [r[1], r[0], r[2]],
            (3, true) | (2, false) => [r[2], r[0], r[1]],
            _ => [offset, r[0], r[1]],
        };
        value
    }
}

/// How often each literal length, offset and match length code occurs in
/// a block's sequences.
#[derive(Debug, Clone, Copy)]
struct Counts([[u32; 64]; 3]);

impl Default for Counts {
    fn default() -> Self {
        Counts([[0; 64]; 3])
    }
}

/// The encoder's state, kept per thread: see the module documentation.
#[derive(Debug, Default)]
struct Encoder {
    /// Tagged positions: `base + position`; below `base` means empty.
    table: Vec<u32>,
    hash_log: u32,
    /// Tag of position 0 in this frame, and in the next one.
    base: u32,
    next_base: u32,
    window: usize,
    matching: bool,
    reps: Reps,
    seqs: Vec<Seq>,
    lits: Vec<u8>,
    /// How often each literal length, offset and match length code occurs
    /// in `seqs`.
    counts: Counts,
    /// The block's own FSE tables, when chosen.
    tables: Option<Box<[FseTable; 3]>>,
}

fn read8(data: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&data[at..at + 8]);
    u64::from_le_bytes(b)
}

/// Hash of the low [`MIN_MATCH`] bytes of `v` into `hash_log` bits.
#[inline]
fn hash(v: u64, hash_log: u32) -> usize {
    const PRIME: u64 = 0x9E37_79B1_85EB_CA87;
    ((v << (64 - 8 * MIN_MATCH as u32)).wrapping_mul(PRIME) >> (64 - hash_log)) as usize
}

/// How many bytes agree from `a` and from `b` (`a < b`), stopping at `end`.
#[inline]
fn common_len(data: &[u8], a: usize, b: usize, end: usize) -> usize {
    let (x, y) = (&data[a..end], &data[b..end]);
    let mut n = 0;
    for (p, q) in x.chunks_exact(8).zip(y.chunks_exact(8)) {
        let d = u64::from_le_bytes(p.try_into().unwrap_or_default())
            ^ u64::from_le_bytes(q.try_into().unwrap_or_default());
        if d != 0 {
            return n + (d.trailing_zeros() / 8) as usize;
        }
        n += 8;
    }
    n + x[n..]
        .iter()
        .zip(&y[n..])
        .take_while(|(p, q)| p == q)
        .count()
}

fn block_header(last: bool, kind: u32, size: usize) -> [u8; 3] {
    let v = u32::from(last) | (kind << 1) | ((size as u32) << 3);
    let b = v.to_le_bytes();
    [b[0], b[1], b[2]]
}

/// The window (log2) announced for an input of `len` bytes.
fn window_log(len: usize) -> u32 {
    len.next_power_of_two()
        .trailing_zeros()
        .clamp(MIN_WINDOW_LOG, MAX_WINDOW_LOG)
}

impl Encoder {
    fn frame(&mut self, input: &[u8], out: &mut Vec<u8>) {
        let len = input.len();
        let log = window_log(len);
        out.extend_from_slice(&MAGIC);
        // Frame header descriptor: no content size, not single segment,
        // no checksum, no dictionary; then the window descriptor.
        out.extend_from_slice(&[0, ((log - MIN_WINDOW_LOG) << 3) as u8]);
        if len == 0 {
            out.extend_from_slice(&block_header(true, BLOCK_RAW, 0));
            return;
        }
        self.start(len, 1 << log);
        let mut start = 0;
        while start < len {
            let end = (start + MAX_BLOCK).min(len);
            self.block(input, start, end, end == len, out);
            start = end;
        }
    }

    /// Prepares a frame of `len` bytes: window, repeat offsets, table tags.
    fn start(&mut self, len: usize, window: usize) {
        self.window = window;
        self.reps = Reps::default();
        self.matching = len < MAX_MATCHED_INPUT;
        if !self.matching {
            return;
        }
        self.hash_log = len
            .next_power_of_two()
            .trailing_zeros()
            .clamp(MIN_HASH_LOG, MAX_HASH_LOG);
        let slots = 1usize << self.hash_log;
        if self.table.len() < slots {
            self.table.resize(slots, 0);
        }
        // len < 2^31, so 1 + len always fits.
        if self.next_base == 0 || u64::from(self.next_base) + len as u64 >= u64::from(u32::MAX) {
            self.table.fill(0);
            self.next_base = 1;
        }
        self.base = self.next_base;
        self.next_base = self.base + len as u32;
    }

    /// Writes the block `input[start..end]`.
    fn block(&mut self, input: &[u8], start: usize, end: usize, last: bool, out: &mut Vec<u8>) {
        let block = &input[start..end];
        if block.iter().all(|&b| b == block[0]) {
            out.extend_from_slice(&block_header(last, BLOCK_RLE, block.len()));
            out.push(block[0]);
            return;
        }
        let reps = self.reps;
        self.find_sequences(input, start, end);
        let at = out.len();
        out.extend_from_slice(&[0; 3]);
        encode_literals(&self.lits, out);
        let tables = self
            .tables
            .get_or_insert_with(|| Box::new([FseTable::rle(), FseTable::rle(), FseTable::rle()]));
        let written = encode_sequences(&self.seqs, &self.counts.0, tables, out);
        let size = out.len() - at - 3;
        if written && size < block.len() {
            out[at..at + 3].copy_from_slice(&block_header(last, BLOCK_COMPRESSED, size));
        } else {
            // Raw blocks do not touch the decoder's repeat offsets.
            self.reps = reps;
            out.truncate(at);
            out.extend_from_slice(&block_header(last, BLOCK_RAW, block.len()));
            out.extend_from_slice(block);
        }
    }

    /// Greedy matching of `input[start..end]` into `seqs` and `lits`.
    fn find_sequences(&mut self, input: &[u8], start: usize, end: usize) {
        self.seqs.clear();
        self.lits.clear();
        self.counts = Counts::default();
        let Encoder {
            table,
            hash_log,
            base,
            window,
            matching,
            reps,
            seqs,
            lits,
            counts,
            ..
        } = self;
        let (hash_log, base, window) = (*hash_log, *base, *window);
        let mut anchor = start;
        if *matching && end - start >= 16 {
            let table = &mut table[..1 << hash_log];
            let slot = |v: u64| hash(v, hash_log);
            let mask = (1u64 << (8 * MIN_MATCH)) - 1;
            let rep_mask = (1u64 << (8 * MIN_REP_MATCH)) - 1;
            let mut rep = reps.0[0] as usize;
            let mut ip = start;
            while ip + 8 <= end {
                let v = read8(input, ip);
                let h = slot(v);
                let tag = table[h];
                table[h] = base + ip as u32;
                let (mut c, min) = if ip > anchor
                    && rep <= ip
                    && rep < window
                    && (read8(input, ip - rep) ^ v) & rep_mask == 0
                {
                    (ip - rep, MIN_REP_MATCH)
                } else {
                    let c = tag.wrapping_sub(base) as usize;
                    if tag < base
                        || c >= ip
                        || ip - c >= window
                        || (read8(input, c) ^ v) & mask != 0
                    {
                        ip += 1 + ((ip - anchor) >> SKIP_LOG);
                        continue;
                    }
                    (c, MIN_MATCH)
                };
                let mut len = min + common_len(input, c + min, ip + min, end);
                let mut s = ip;
                while s > anchor && c > 0 && input[s - 1] == input[c - 1] {
                    s -= 1;
                    c -= 1;
                    len += 1;
                }
                let offset = s - c;
                let lit_len = (s - anchor) as u32;
                lits.extend_from_slice(&input[anchor..s]);
                let seq = Seq::new(lit_len, len as u32, reps.code(offset as u32, lit_len));
                counts.0[0][usize::from(seq.ll) & 63] += 1;
                counts.0[1][usize::from(seq.of) & 63] += 1;
                counts.0[2][usize::from(seq.ml) & 63] += 1;
                seqs.push(seq);
                rep = offset;
                ip = s + len;
                anchor = ip;
                // Two positions inside the match, for later matches.
                for p in [s + 2, ip - 2] {
                    if p + 8 <= end {
                        table[slot(read8(input, p))] = base + p as u32;
                    }
                }
            }
        }
        lits.extend_from_slice(&input[anchor..end]);
    }
}

/// Writes a raw or RLE literals section header.
fn literals_header(kind: u8, n: usize, out: &mut Vec<u8>) {
    let n = n as u32;
    if n < 32 {
        out.push(kind | (n << 3) as u8);
    } else if n < 4096 {
        out.extend_from_slice(&(u32::from(kind) | (1 << 2) | (n << 4)).to_le_bytes()[..2]);
    } else {
        out.extend_from_slice(&(u32::from(kind) | (3 << 2) | (n << 4)).to_le_bytes()[..3]);
    }
}

/// The literals section: Huffman-coded, RLE or raw, whichever applies and
/// is smallest.
fn encode_literals(lits: &[u8], out: &mut Vec<u8>) {
    if lits.len() >= MIN_HUFFMAN_LITERALS {
        let mut counts = [0u32; 256];
        for &b in lits {
            counts[usize::from(b)] += 1;
        }
        if counts[usize::from(lits[0])] as usize == lits.len() {
            literals_header(1, lits.len(), out);
            out.push(lits[0]);
            return;
        }
        if huffman_literals(lits, &counts, out) {
            return;
        }
    }
    literals_header(0, lits.len(), out);
    out.extend_from_slice(lits);
}

/// A Huffman-coded literals section, if smaller than the raw one.
fn huffman_literals(lits: &[u8], counts: &[u32; 256], out: &mut Vec<u8>) -> bool {
    let n = lits.len();
    // No prefix code beats the entropy: skip the ones that cannot pay for
    // their tree description (some bits for every symbol up to the last
    // present, more for the present ones) and header.
    let last = counts.iter().rposition(|&c| c > 0).unwrap_or(0);
    let distinct = counts.iter().filter(|&&c| c > 0).count();
    if entropy::entropy_bits(counts, n) / 8 + last / 4 + distinct / 2 + 4 >= n {
        return false;
    }
    let huffman = Huffman::new(counts);
    if huffman.cost(counts) / 8 + 8 >= n {
        return false;
    }
    // One stream under 256 literals; the header's size fields as small as
    // the regenerated size allows (the compressed size is smaller).
    let single = n < 256;
    let (header_len, size_bits, format) = if single {
        (3, 10, 0u64)
    } else if n < 1024 {
        (3, 10, 1)
    } else if n < 16384 {
        (4, 14, 2)
    } else {
        (5, 18, 3)
    };
    let start = out.len();
    out.resize(start + header_len, 0);
    if !huffman.write_description(out) {
        out.truncate(start);
        return false;
    }
    let written = if single {
        huffman.encode_stream(lits, out)
    } else {
        let seg = n.div_ceil(4);
        let jump = out.len();
        out.extend_from_slice(&[0; 6]);
        (0..4).all(|i| {
            let before = out.len();
            let stream = &lits[(i * seg).min(n)..((i + 1) * seg).min(n)];
            if !huffman.encode_stream(stream, out) {
                return false;
            }
            if i < 3 {
                let Ok(size) = u16::try_from(out.len() - before) else {
                    return false;
                };
                out[jump + 2 * i..jump + 2 * i + 2].copy_from_slice(&size.to_le_bytes());
            }
            true
        })
    };
    let compressed = out.len() - start - header_len;
    if !written || compressed >= n {
        out.truncate(start);
        return false;
    }
    let header = 2 | (format << 2) | ((n as u64) << 4) | ((compressed as u64) << (4 + size_bits));
    out[start..start + header_len].copy_from_slice(&header.to_le_bytes()[..header_len]);
    true
}

/// A predefined distribution with its table.
struct Predefined {
    norm: &'static [i16],
    log: u32,
    table: FseTable,
}

/// The predefined tables: literal lengths, offsets, match lengths.
fn predefined() -> &'static [Predefined; 3] {
    static TABLES: OnceLock<[Predefined; 3]> = OnceLock::new();
    TABLES.get_or_init(|| {
        let make = |norm: &'static [i16], log| Predefined {
            norm,
            log,
            table: FseTable::new(norm, log),
        };
        [
            make(&LL_NORM, LL_NORM_LOG),
            make(&OF_NORM, OF_NORM_LOG),
            make(&ML_NORM, ML_NORM_LOG),
        ]
    })
}

/// Largest accuracy of a block's own table: literal lengths, offsets,
/// match lengths.
const MAX_LOG: [u32; 3] = [9, 8, 9];

/// How one code is coded in a block.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Predefined = 0,
    /// One code for every sequence: no state bits.
    Rle = 1,
    /// The block's own distribution.
    Own = 2,
}

/// Chooses how to code the codes counted in `counts` (of `n` sequences):
/// the cheapest of the predefined distribution and the block's own, or RLE
/// for a single code. The description of an own distribution, or the RLE
/// code, is appended to `out` and its table built into `own`.
fn choose_mode(
    kind: usize,
    counts: &[u32],
    n: usize,
    own: &mut FseTable,
    out: &mut Vec<u8>,
) -> Mode {
    let last = counts.iter().rposition(|&c| c > 0).unwrap_or(0);
    let counts = &counts[..=last];
    let distinct = counts.iter().filter(|&&c| c > 0).count();
    if distinct == 1 {
        *own = FseTable::rle();
        out.push(last as u8);
        return Mode::Rle;
    }
    let pre = &predefined()[kind];
    let pre_cost = entropy::fse_cost(counts, pre.norm, pre.log);
    // Accuracy for the number of sequences (as zstd chooses it), enough
    // for every code present.
    let log = (highbit(n as u32).saturating_sub(2))
        .max(highbit(distinct as u32) + 2)
        .clamp(5, MAX_LOG[kind]);
    let mut norm = [0i16; 53];
    let norm = &mut norm[..counts.len()];
    if distinct > 1 << log || !entropy::normalize(counts, log, norm) {
        return Mode::Predefined;
    }
    let at = out.len();
    if !entropy::write_distribution(out, norm, log) {
        return Mode::Predefined;
    }
    let own_cost = entropy::fse_cost(counts, norm, log) + ((out.len() - at) as u64) * 8 * 256;
    if own_cost < pre_cost {
        *own = FseTable::new(norm, log);
        Mode::Own
    } else {
        out.truncate(at);
        Mode::Predefined
    }
}

/// The sequences section, given how often each code occurs; `own` holds
/// the block's own tables. Returns `false` if it could not be written (the
/// block is then stored raw).
fn encode_sequences(
    seqs: &[Seq],
    counts: &[[u32; 64]; 3],
    own: &mut [FseTable; 3],
    out: &mut Vec<u8>,
) -> bool {
    let n = seqs.len();
    if n < 128 {
        out.push(n as u8);
    } else if n < 0x7f00 {
        out.extend_from_slice(&[(n >> 8) as u8 + 0x80, n as u8]);
    } else {
        out.push(0xff);
        out.extend_from_slice(&((n - 0x7f00) as u16).to_le_bytes());
    }
    let Some((last, rest)) = seqs.split_last() else {
        return true;
    };
    let modes_at = out.len();
    out.push(0);
    let mut modes = [Mode::Predefined; 3];
    for (k, table) in own.iter_mut().enumerate() {
        modes[k] = choose_mode(k, &counts[k], n, table, out);
    }
    out[modes_at] = ((modes[0] as u8) << 6) | ((modes[1] as u8) << 4) | ((modes[2] as u8) << 2);
    let pre = predefined();
    let [ll_t, of_t, ml_t] = [0, 1, 2].map(|k| match modes[k] {
        Mode::Predefined => &pre[k].table,
        Mode::Rle | Mode::Own => &own[k],
    });
    // At most 26 bits of states and 16 + 16 + 19 extra bits a sequence.
    write_stream(out, n * 10 + 8, End::StopBit, |w| {
        let mut ll = ll_t.init(last.ll);
        let mut of = of_t.init(last.of);
        let mut ml = ml_t.init(last.ml);
        extra(last, w);
        for s in rest.iter().rev() {
            of_t.encode(w, &mut of, s.of);
            ml_t.encode(w, &mut ml, s.ml);
            ll_t.encode(w, &mut ll, s.ll);
            extra(s, w);
        }
        ml_t.flush(w, ml);
        of_t.flush(w, of);
        ll_t.flush(w, ll);
    })
}

/// A sequence's extra bits: literal length, match length, offset (the
/// decoder reads them in reverse).
#[inline]
fn extra(s: &Seq, w: &mut BitWriter<'_>) {
    // At most 26 bits of states before, 16 here.
    let ll = usize::from(s.ll) & 63;
    w.add(u64::from(s.lit_len - LL_BASE[ll]), u32::from(LL_BITS[ll]));
    // Then at most 16 + 19 bits (offsets are below 2^19 + 3).
    if w.bits() > 63 - 35 {
        w.flush();
    }
    let ml = usize::from(s.ml) & 63;
    w.add(u64::from(s.match_len - ML_BASE[ml]), u32::from(ML_BITS[ml]));
    w.add(u64::from(s.off_value - (1 << s.of)), u32::from(s.of));
    w.flush();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Compression;
    use crate::record::compression::decompress;
    use proptest::prelude::*;

    fn rng(mut x: u64) -> impl FnMut() -> u64 {
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    fn noise(len: usize, seed: u64) -> Vec<u8> {
        let mut next = rng(seed);
        (0..len).map(|_| next() as u8).collect()
    }

    /// Record-like text: JSON objects of words from a small vocabulary,
    /// with numbers.
    fn text(len: usize, seed: u64) -> Vec<u8> {
        const WORDS: &[&str] = &[
            "order",
            "customer",
            "shipped",
            "pending",
            "EUR",
            "USD",
            "the",
            "quick",
            "brown",
            "fox",
            "jumps",
            "over",
            "lazy",
            "dog",
            "payment",
            "refund",
            "warehouse",
            "Berlin",
            "Paris",
            "London",
            "item",
            "quantity",
            "price",
            "discount",
            "status",
            "created",
        ];
        let mut next = rng(seed);
        let mut v = Vec::with_capacity(len + 64);
        while v.len() < len {
            v.extend_from_slice(format!("{{\"id\":{},\"text\":\"", next() % 1_000_000).as_bytes());
            for _ in 0..20 {
                v.extend_from_slice(WORDS[(next() % WORDS.len() as u64) as usize].as_bytes());
                if next().is_multiple_of(5) {
                    v.extend_from_slice(format!(" {}", next() % 10_000).as_bytes());
                }
                v.push(b' ');
            }
            v.extend_from_slice(b"\"}\n");
        }
        v.truncate(len);
        v
    }

    fn ours(input: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        compress(input, &mut out);
        out
    }

    fn ruzstd_decode(frame: &[u8]) -> Vec<u8> {
        use std::io::Read;
        let mut back = Vec::new();
        ruzstd::decoding::StreamingDecoder::new(frame)
            .expect("frame header")
            .read_to_end(&mut back)
            .expect("frame body");
        back
    }

    /// The frame's window and its blocks as (type, size field, last).
    fn frame_layout(frame: &[u8]) -> (u64, Vec<(u8, usize, bool)>) {
        assert_eq!(frame[..4], [0x28, 0xb5, 0x2f, 0xfd], "magic");
        assert_eq!(frame[4], 0, "descriptor: window, no checksum, no size");
        let window = 1u64 << (10 + (frame[5] >> 3));
        let mut at = 6;
        let mut blocks = Vec::new();
        loop {
            let h = u32::from_le_bytes([frame[at], frame[at + 1], frame[at + 2], 0]);
            let (last, kind, size) = (h & 1 == 1, ((h >> 1) & 3) as u8, (h >> 3) as usize);
            blocks.push((kind, size, last));
            at += 3 + if kind == 1 { 1 } else { size };
            if last {
                break;
            }
        }
        assert_eq!(at, frame.len(), "nothing after the last block");
        (window, blocks)
    }

    /// Compresses `input`, checks that both decoders give it back and that
    /// the window holds every block; returns the frame.
    fn round_trip(input: &[u8]) -> Vec<u8> {
        let frame = ours(input);
        assert_eq!(ruzstd_decode(&frame), input, "ruzstd's decoder");
        let limit = input.len().max(1);
        assert_eq!(
            decompress(Compression::Zstd, &frame, limit).unwrap(),
            input,
            "our decompress"
        );
        let (window, blocks) = frame_layout(&frame);
        assert!((1 << MIN_WINDOW_LOG..=1 << MAX_WINDOW_LOG).contains(&window));
        assert!(
            window >= input.len().min(MAX_BLOCK) as u64,
            "blocks fit the window"
        );
        assert_eq!(
            blocks.len(),
            input.len().div_ceil(MAX_BLOCK).max(1),
            "{blocks:?}"
        );
        frame
    }

    #[test]
    fn empty_input_is_one_empty_raw_block() {
        let frame = round_trip(b"");
        assert_eq!(frame_layout(&frame).1, [(0, 0, true)]);
    }

    #[test]
    fn one_byte_round_trips() {
        round_trip(b"k");
    }

    #[test]
    fn tiny_inputs_round_trip() {
        for len in 2..64 {
            round_trip(&text(len, len as u64));
        }
    }

    #[test]
    fn text_round_trips_in_one_compressed_block() {
        let input = text(15 * 1024, 7);
        let frame = round_trip(&input);
        let (window, blocks) = frame_layout(&frame);
        assert_eq!(window, 16 * 1024);
        assert_eq!(blocks.len(), 1);
        assert_eq!(blocks[0].0, 2, "a compressed block");
        assert!(frame.len() < input.len() / 2, "{} bytes", frame.len());
    }

    #[test]
    fn a_run_of_one_byte_is_an_rle_block() {
        let frame = round_trip(&[b'x'; 100_000]);
        assert_eq!(frame_layout(&frame).1, [(1, 100_000, true)]);
    }

    #[test]
    fn incompressible_input_is_stored_raw() {
        let input = noise(100_000, 3);
        let frame = round_trip(&input);
        assert_eq!(frame_layout(&frame).1, [(0, 100_000, true)]);
    }

    #[test]
    fn exactly_one_block_round_trips() {
        round_trip(&text(MAX_BLOCK, 11));
    }

    #[test]
    fn one_byte_over_a_block_is_two_blocks() {
        let frame = round_trip(&text(MAX_BLOCK + 1, 12));
        let blocks = frame_layout(&frame).1;
        assert_eq!(blocks.len(), 2);
        assert!(!blocks[0].2 && blocks[1].2);
    }

    #[test]
    fn a_mebibyte_round_trips_with_the_largest_window() {
        let input = text(1 << 20, 13);
        let frame = round_trip(&input);
        assert_eq!(frame_layout(&frame).0, 1 << MAX_WINDOW_LOG);
        assert!(frame.len() < input.len() / 2, "{} bytes", frame.len());
    }

    #[test]
    fn whole_block_matches_round_trip() {
        // Period-2 and period-26 input: single matches of a whole block.
        round_trip(&b"ab".repeat(200_000));
        round_trip(&b"abcdefghijklmnopqrstuvwxyz".repeat(20_000));
        let mut runs = vec![b'a'; 300_000];
        runs.push(b'b');
        round_trip(&runs);
    }

    #[test]
    fn a_later_block_of_one_literal_value_round_trips() {
        // A second block made of 32-byte pieces of the first, each followed
        // by 'z': its literals are thousands of 'z's and nothing else.
        let first = noise(MAX_BLOCK, 5);
        let mut input = first.clone();
        let mut next = rng(9);
        while input.len() < 2 * MAX_BLOCK {
            let at = (next() as usize) % (first.len() - 32);
            input.extend_from_slice(&first[at..at + 32]);
            input.push(b'z');
        }
        round_trip(&input);
    }

    #[test]
    fn literals_of_every_alphabet_size_round_trip() {
        for symbols in 2..=256u64 {
            let mut next = rng(symbols);
            let input: Vec<u8> = (0..3000).map(|_| (next() % symbols) as u8).collect();
            round_trip(&input);
        }
    }

    #[test]
    fn bytes_above_128_use_fse_compressed_huffman_weights() {
        // Skewed bytes from 128 up: Huffman pays, and the weights of 200
        // symbols need the FSE-compressed description.
        let mut next = rng(41);
        let lits: Vec<u8> = (0..20_000)
            .map(|_| 128 + (next().trailing_zeros() * 5 % 72) as u8)
            .collect();
        let mut out = Vec::new();
        encode_literals(&lits, &mut out);
        assert_eq!(out[0] & 3, 2, "Huffman-coded literals");
        assert_eq!((out[0] >> 2) & 3, 3, "four streams, 18-bit sizes");
        assert!(out[5] < 128, "FSE-compressed weights: header {}", out[5]);
        assert!(out.len() < lits.len() / 2, "{} bytes", out.len());
        round_trip(&lits);
    }

    /// The offset an offset value stands for, as the decoder resolves it,
    /// updating `reps` (RFC 8878, 3.1.2.5).
    fn resolve(value: u32, lit_len: u32, reps: &mut [u32; 3]) -> u32 {
        let r = *reps;
        let (offset, used) = match (value, lit_len > 0) {
            (v, _) if v > 3 => (v - 3, None),
            (1, true) => (r[0], Some(0)),
            (2, true) | (1, false) => (r[1], Some(1)),
            (3, true) | (2, false) => (r[2], Some(2)),
            _ => (r[0] - 1, None),
        };
        *reps = match used {
            Some(0) => r,
            Some(1) => [r[1], r[0], r[2]],
            Some(_) => [r[2], r[0], r[1]],
            None => [offset, r[0], r[1]],
        };
        offset
    }

    #[test]
    fn sequences_rebuild_the_input_with_offsets_inside_the_window() {
        // Invariant: executing each block's sequences as a decoder does
        // (repeat offsets included) gives the input back, and no offset
        // reaches before the frame or as far as the window.
        let mut inputs = varied_inputs(40);
        inputs.push(text(1 << 20, 8));
        let mut e = Encoder::default();
        for input in &inputs {
            let log = window_log(input.len());
            if input.is_empty() {
                continue;
            }
            e.start(input.len(), 1 << log);
            let mut reps = [1, 4, 8];
            let mut back = Vec::new();
            for start in (0..input.len()).step_by(MAX_BLOCK) {
                let end = (start + MAX_BLOCK).min(input.len());
                e.find_sequences(input, start, end);
                let mut lits = &e.lits[..];
                for s in &e.seqs {
                    let (l, rest) = lits.split_at(s.lit_len as usize);
                    back.extend_from_slice(l);
                    lits = rest;
                    let offset = resolve(s.off_value, s.lit_len, &mut reps) as usize;
                    assert!(offset <= back.len() && offset < 1 << log, "offset {offset}");
                    for _ in 0..s.match_len {
                        back.push(back[back.len() - offset]);
                    }
                    assert_eq!((s.ll, s.of, s.ml), {
                        let c = Seq::new(s.lit_len, s.match_len, s.off_value);
                        (c.ll, c.of, c.ml)
                    });
                }
                back.extend_from_slice(lits);
                assert_eq!(back.len(), end, "block {start}..{end}");
            }
            assert!(back == *input, "{} bytes", input.len());
        }
    }

    #[test]
    fn frames_depend_only_on_their_input() {
        // Invariant: the frame of an input is the same whatever the thread
        // compressed before, and on any thread.
        let inputs: Vec<Vec<u8>> = vec![
            text(15 * 1024, 1),
            Vec::new(),
            b"k".to_vec(),
            text(100, 2),
            noise(20_000, 3),
            text(MAX_BLOCK + 1, 4),
            text(300_000, 5),
            text(1500, 6),
            vec![7; 5000],
            text(15 * 1024, 1),
        ];
        let first: Vec<Vec<u8>> = inputs.iter().map(|i| ours(i)).collect();
        assert_eq!(first[0], first[9], "the same input twice");
        let reversed: Vec<Vec<u8>> = inputs.iter().rev().map(|i| ours(i)).collect();
        let fresh: Vec<Vec<u8>> = inputs
            .iter()
            .map(|i| {
                let i = i.clone();
                std::thread::spawn(move || ours(&i)).join().unwrap()
            })
            .collect();
        for (k, frame) in first.iter().enumerate() {
            assert_eq!(
                frame,
                &reversed[inputs.len() - 1 - k],
                "input {k} after others"
            );
            assert_eq!(frame, &fresh[k], "input {k} on a fresh thread");
        }
    }

    #[test]
    fn text_compresses_about_as_well_as_ruzstd_fastest() {
        let input = text(15 * 1024, 21);
        let theirs = ruzstd::encoding::compress_to_vec(
            &input[..],
            ruzstd::encoding::CompressionLevel::Fastest,
        );
        let frame = ours(&input);
        assert!(
            frame.len() * 10 <= theirs.len() * 13,
            "ours {} bytes, ruzstd {} bytes",
            frame.len(),
            theirs.len()
        );
    }

    /// Inputs of many shapes for the reference decoder: random bytes, small
    /// alphabets, text, skewed bytes above 128, mutated repeats, and
    /// concatenations of them over several blocks.
    fn varied_inputs(count: usize) -> Vec<Vec<u8>> {
        let mut next = rng(0x5eed);
        let one = |next: &mut dyn FnMut() -> u64, kind: u64| -> Vec<u8> {
            let len = (next() % 70_000) as usize;
            match kind {
                0 => noise(len % 5000, next()),
                1 => {
                    let k = 1 + next() % 8;
                    (0..len).map(|_| (next() % k) as u8 + b'a').collect()
                }
                2 => text(len, next()),
                3 => (0..len)
                    .map(|_| 128 + (next().trailing_zeros() * 7) as u8 % 128)
                    .collect(),
                _ => {
                    let chunk = noise(1 + (next() % 300) as usize, next());
                    let mut v = Vec::new();
                    while v.len() < len {
                        v.extend_from_slice(&chunk);
                        let at = (next() as usize) % v.len();
                        v[at] ^= next() as u8;
                    }
                    v
                }
            }
        };
        (0..count)
            .map(|i| {
                if i % 10 == 9 {
                    let mut v = Vec::new();
                    while v.len() < 300_000 {
                        let kind = next() % 5;
                        v.extend(one(&mut next, kind));
                    }
                    v
                } else {
                    let kind = next() % 5;
                    one(&mut next, kind)
                }
            })
            .collect()
    }

    /// Run with `--ignored` where the reference `zstd` command (the C
    /// library zstd-jni wraps) is installed: it must read every frame.
    #[test]
    #[ignore = "needs the zstd command"]
    fn the_reference_decoder_reads_our_frames() {
        let mut skewed = rng(77);
        let mut inputs: Vec<Vec<u8>> = vec![
            Vec::new(),
            b"k".to_vec(),
            text(40, 1),
            text(15 * 1024, 2),
            vec![b'x'; 100_000],
            noise(100_000, 3),
            text(MAX_BLOCK, 4),
            text(MAX_BLOCK + 1, 5),
            text(1 << 20, 6),
            b"ab".repeat(200_000),
            (0..50_000)
                .map(|_| (skewed().trailing_zeros() * 9 + 100) as u8)
                .collect(),
        ];
        inputs.extend(varied_inputs(600));
        // zstd decodes concatenated frames into the concatenated inputs.
        let frames: Vec<u8> = inputs.iter().flat_map(|i| ours(i)).collect();
        let mut child = std::process::Command::new("zstd")
            .args(["-d", "-c", "-q"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("the zstd command");
        let mut stdin = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || std::io::Write::write_all(&mut stdin, &frames));
        let out = child.wait_with_output().unwrap();
        writer.join().unwrap().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut rest = &out.stdout[..];
        for (k, input) in inputs.iter().enumerate() {
            assert!(rest.starts_with(input), "input {k} ({} bytes)", input.len());
            rest = &rest[input.len()..];
        }
        assert!(rest.is_empty());
    }

    #[test]
    fn varied_inputs_round_trip() {
        for input in varied_inputs(60) {
            let frame = ours(&input);
            assert!(ruzstd_decode(&frame) == input, "{} bytes", input.len());
            let back = decompress(Compression::Zstd, &frame, input.len().max(1)).unwrap();
            assert!(back == input, "{} bytes", input.len());
        }
    }

    proptest! {
        #[test]
        fn repeat_offsets_resolve_to_the_offset_coded(
            seqs in proptest::collection::vec((1u32..20, 0u32..3), 1..200),
        ) {
            // Small offsets, often repeated, with and without literals.
            let mut ours = Reps::default();
            let mut theirs = [1, 4, 8];
            for (offset, lit_len) in seqs {
                let value = ours.code(offset, lit_len);
                prop_assert_eq!(resolve(value, lit_len, &mut theirs), offset);
                prop_assert_eq!(ours.0, theirs);
            }
        }

        #[test]
        fn arbitrary_bytes_round_trip(input in proptest::collection::vec(any::<u8>(), 0..4096)) {
            let frame = ours(&input);
            prop_assert_eq!(&ruzstd_decode(&frame), &input);
            prop_assert_eq!(&decompress(Compression::Zstd, &frame, 1 << 20).unwrap(), &input);
        }

        #[test]
        fn repetitive_bytes_round_trip(
            input in proptest::collection::vec(0u8..4, 0..20_000),
        ) {
            let frame = ours(&input);
            prop_assert_eq!(&ruzstd_decode(&frame), &input);
            prop_assert_eq!(&decompress(Compression::Zstd, &frame, 1 << 20).unwrap(), &input);
        }
    }
}
