//! Shared by the RecordBatch benches: the batch under test and a memcpy
//! destination that does not flatter the codec.

use bytes::Bytes;
use kafka_proto::record::{Compression, Record, RecordBatch, RecordBatchBuilder};

/// Records per batch.
pub const RECORDS: usize = 1000;

/// An uncompressed transactional batch of [`RECORDS`] records: 10-byte keys
/// and values of `value_size` bytes.
pub fn batch(value_size: usize) -> RecordBatch {
    let mut b = RecordBatchBuilder::new(Compression::None)
        .producer(1000, 5, 0)
        .transactional(true);
    for i in 0..RECORDS {
        let key = Bytes::from(format!("key-{i:06}"));
        let value = Bytes::from(vec![(i % 251) as u8; value_size]);
        b.push(Record::new(
            1_700_000_000_000 + i as i64,
            Some(key),
            Some(value),
        ));
    }
    b.build()
}

/// A destination for `src.len()` bytes at the same offset within a 4 KiB
/// page as `src`. glibc copies these sizes with `rep movsb`, which on this
/// machine's AMD CPU runs ~17× slower when the destination sits just past the
/// source modulo 4 KiB (e.g. 16 bytes: two heap blocks with the same
/// alignment) — so pin the fast case, never flatter the codec with a slow
/// baseline.
pub fn same_page_offset_dst(src: &[u8]) -> (Vec<u8>, usize) {
    let dst = vec![0u8; src.len() + 4096];
    let off = (src.as_ptr() as usize).wrapping_sub(dst.as_ptr() as usize) % 4096;
    (dst, off)
}
