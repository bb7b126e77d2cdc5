//! How much a topic's batches compress, estimated from the batches already
//! compressed, so that `batch.size` counts compressed bytes (Java's
//! `CompressionRatioEstimator` and `MemoryRecordsBuilder.estimatedBytesWritten`).
//!
//! A compressed batch keeps its records until it is drained and compressed
//! then; while it fills, its compressed size is estimated as its
//! uncompressed size times the topic's ratio, with 5% to spare. The
//! estimate starts at 1 (no gain) and follows what each compressed batch
//! shows: down by at most 0.005 per batch when the batches compress better
//! than estimated, up by at least 0.05 (at once to the ratio seen) when
//! worse — slow to trust a gain, quick to take back an overestimate.
//!
//! A batch the broker refuses as too large (MESSAGE_TOO_LARGE) after an
//! estimate that was too low is split and sent again, as Java does, and
//! the estimate starts over from the larger of 1 and what that batch
//! showed ([`CompressionRatio::reset`]). Splits are rare because the bytes
//! a batch holds before compression are capped as well
//! ([`max_uncompressed`]): at half of `max.request.size`, up to 1 MiB,
//! whatever the estimate — even data that suddenly stops compressing then
//! fits the broker's default `message.max.bytes` (1 MiB).
//!
//! ```
//! use kafka_producer::internals::compression_ratio::CompressionRatio;
//! let r = CompressionRatio::default();
//! assert_eq!(r.get(), 1.0);
//! r.observe(0.1); // a batch compressed to a tenth
//! assert!((r.get() - 0.995).abs() < 1e-6, "one small step down");
//! r.observe(1.0); // and one that did not compress
//! assert!((r.get() - 1.045).abs() < 1e-6, "one large step up");
//! ```

use std::sync::atomic::{AtomicU32, Ordering};

/// The estimate's step down after a batch compressed better than estimated
/// (Java's `COMPRESSION_RATIO_IMPROVING_STEP`).
pub const IMPROVING_STEP: f32 = 0.005;
/// The estimate's least step up after a batch compressed worse than
/// estimated (Java's `COMPRESSION_RATIO_DETERIORATE_STEP`).
pub const DETERIORATING_STEP: f32 = 0.05;
/// The margin on an estimated compressed size (Java's
/// `COMPRESSION_RATE_ESTIMATION_FACTOR`).
pub const ESTIMATION_FACTOR: f32 = 1.05;

/// One topic's estimated compression ratio (compressed bytes over
/// uncompressed bytes), shared by its batches: each compressed batch
/// updates it when it is encoded.
///
/// ```
/// use kafka_producer::internals::compression_ratio::{CompressionRatio, uncompressed_limit};
/// let ratio = CompressionRatio::default();
/// for _ in 0..60 {
///     ratio.observe(0.25); // batches compressing to a quarter
/// }
/// // 60 steps of 0.005 down: a 16 KiB batch may now hold about 22 KiB.
/// assert_eq!(uncompressed_limit(16_384, 1_048_576, ratio.get()), 22_291);
/// ```
#[derive(Debug)]
pub struct CompressionRatio(AtomicU32);

impl Default for CompressionRatio {
    fn default() -> Self {
        Self(AtomicU32::new(1.0f32.to_bits()))
    }
}

impl CompressionRatio {
    /// The current estimate (1.0 until a batch was compressed).
    pub fn get(&self) -> f32 {
        f32::from_bits(self.0.load(Ordering::Relaxed))
    }

    /// Takes in the ratio a compressed batch showed (Java's
    /// `updateEstimation`); returns the new estimate.
    pub fn observe(&self, observed: f32) -> f32 {
        if !observed.is_finite() || observed <= 0.0 {
            return self.get();
        }
        let step = |current: f32| {
            if observed > current {
                (current + DETERIORATING_STEP).max(observed)
            } else {
                (current - IMPROVING_STEP).max(observed)
            }
        };
        let previous = self
            .0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |bits| {
                Some(step(f32::from_bits(bits)).to_bits())
            })
            .expect("the update always applies");
        step(f32::from_bits(previous))
    }
}

impl CompressionRatio {
    /// Sets the estimate (after a batch the broker refused as too large
    /// was split, Java resets it to the larger of 1 and the ratio that batch
    /// showed: `RecordAccumulator.splitAndReenqueue`).
    pub fn reset(&self, ratio: f32) {
        if ratio.is_finite() && ratio > 0.0 {
            self.0.store(ratio.to_bits(), Ordering::Relaxed);
        }
    }
}

/// The most bytes a compressed batch holds before compression, whatever
/// the estimate: half of `max.request.size`, at most 1 MiB, and never less
/// than `batch.size` (see the module documentation).
pub fn max_uncompressed(batch_size: usize, max_request_size: usize) -> usize {
    (max_request_size.min(1 << 20) / 2).max(batch_size)
}

/// The uncompressed bytes at which a batch counts as full: `batch_size`
/// compressed bytes at the estimated `ratio` (with its margin), within
/// `batch_size ..= max_uncompressed`.
pub fn uncompressed_limit(batch_size: usize, max_request_size: usize, ratio: f32) -> usize {
    let estimated = (ratio * ESTIMATION_FACTOR).max(f32::MIN_POSITIVE);
    let limit = (batch_size as f64 / f64::from(estimated)) as usize;
    limit.clamp(batch_size, max_uncompressed(batch_size, max_request_size))
}

/// The estimated compressed size of `uncompressed` record bytes (plus the
/// uncompressed batch header) at `ratio`.
pub fn estimated_size(header: usize, uncompressed: usize, ratio: f32) -> usize {
    let records = uncompressed.saturating_sub(header) as f64;
    header + (records * f64::from(ratio * ESTIMATION_FACTOR)).ceil() as usize
}

#[cfg(test)]
mod tests {

    /// With no batch observed the ratio is 1: no compression assumed.
    #[test]
    fn the_ratio_starts_at_one() {
        assert_eq!(
            crate::compression_ratio::CompressionRatio::default().get(),
            1.0
        );
    }

    /// The ratio steps down by 0.005 a batch and up by at least 0.05 (Java's `CompressionRatioEstimator`).
    #[test]
    fn the_ratio_steps_down_slowly_and_up_fast() {
        use crate::compression_ratio::CompressionRatio;
        let r = CompressionRatio::default();
        for _ in 0..100 {
            r.observe(0.2);
        }
        assert!((r.get() - 0.5).abs() < 1e-3, "100 steps of 0.005 down");
        assert!(
            (r.observe(0.52) - 0.55).abs() < 1e-3,
            "at least one step of 0.05 up"
        );
    }

    /// The uncompressed bound is half of `max.request.size`, at most 1 MiB,
    /// and never below `batch.size`.
    #[test]
    fn max_uncompressed_is_capped_by_the_request_and_the_batch() {
        use crate::compression_ratio::max_uncompressed;
        assert_eq!(max_uncompressed(16_384, 1_048_576), 524_288);
        assert_eq!(max_uncompressed(16_384, 64 << 20), 524_288);
        assert_eq!(max_uncompressed(1 << 20, 1_048_576), 1 << 20);
    }

    /// The uncompressed limit grows as the ratio falls, up to the bound.
    #[test]
    fn the_uncompressed_limit_follows_the_ratio_up_to_the_bound() {
        use crate::compression_ratio::uncompressed_limit;
        assert_eq!(
            uncompressed_limit(16_384, 1_048_576, 1.0),
            16_384,
            "no estimate yet"
        );
        assert_eq!(uncompressed_limit(16_384, 1_048_576, 0.5), 31_207);
        assert_eq!(
            uncompressed_limit(16_384, 1_048_576, 0.001),
            524_288,
            "capped"
        );
    }

    /// The estimated size scales the records by the ratio, with a margin, not the header.
    #[test]
    fn the_estimate_scales_the_records_not_the_header() {
        use crate::compression_ratio::estimated_size;
        assert_eq!(estimated_size(61, 10_061, 0.5), 61 + 5_250);
    }
}
