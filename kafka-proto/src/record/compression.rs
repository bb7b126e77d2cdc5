//! Compression of the records section: gzip, snappy (xerial framing), LZ4 Frame
//! and zstd, each behind its cargo feature.
//!
//! Decompression is always bounded: output is read in chunks through
//! `Read::take(limit + 1)` (or checked block by block for snappy), so a hostile
//! stream can never make us allocate more than the configured limit, whatever
//! sizes it announces.

use super::Compression;
use crate::error::{DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind};

/// The xerial snappy-java stream magic (`SnappyCodec.MAGIC_HEADER`).
#[cfg_attr(not(feature = "snappy"), allow(dead_code))]
pub(crate) const XERIAL_MAGIC: [u8; 8] = [0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0];
/// Xerial header: magic, version 1, minimum compatible version 1.
#[cfg_attr(not(feature = "snappy"), allow(dead_code))]
pub(crate) const XERIAL_HEADER_LEN: usize = 16;
/// Java's `SnappyOutputStream` default block size.
#[cfg_attr(not(feature = "snappy"), allow(dead_code))]
pub(crate) const XERIAL_BLOCK_SIZE: usize = 32 * 1024;

const FIELD: &str = "record_batch.records";

#[allow(dead_code)]
fn encode_err(msg: impl Into<String>) -> EncodeError {
    EncodeError::new(FIELD, EncodeErrorKind::InvalidValue(msg.into()))
}

#[allow(dead_code)]
fn decomp_err(e: impl std::fmt::Display) -> DecodeError {
    DecodeError::new(FIELD, DecodeErrorKind::Decompression(e.to_string()))
}

fn too_large(limit: usize) -> DecodeError {
    DecodeError::new(FIELD, DecodeErrorKind::DecompressedTooLarge { limit })
}

/// Compresses `input` with `codec` at `level` (`None`: the codec's
/// default; otherwise one [`Compression::check_level`] accepts), appending
/// to `out`.
pub(crate) fn compress(
    codec: Compression,
    level: Option<i32>,
    input: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    #[allow(unused_imports)]
    use std::io::Write;
    if let Some(level) = level {
        codec
            .check_level(level)
            .map_err(|reason| encode_err(format!("compression level {level}: {reason}")))?;
    }
    match codec {
        Compression::None => {
            out.extend_from_slice(input);
            Ok(())
        }
        #[cfg(feature = "gzip")]
        Compression::Gzip => {
            // -1 is zlib's default level, 6 (Java's Deflater.DEFAULT_COMPRESSION).
            let level = match level {
                Some(l @ 1..=9) => flate2::Compression::new(l as u32),
                _ => flate2::Compression::default(),
            };
            let mut enc = flate2::write::GzEncoder::new(out, level);
            enc.write_all(input)
                .map_err(|e| encode_err(e.to_string()))?;
            enc.finish().map_err(|e| encode_err(e.to_string()))?;
            Ok(())
        }
        #[cfg(feature = "snappy")]
        Compression::Snappy => {
            out.extend_from_slice(&XERIAL_MAGIC);
            out.extend_from_slice(&1i32.to_be_bytes());
            out.extend_from_slice(&1i32.to_be_bytes());
            let mut enc = snap::raw::Encoder::new();
            for chunk in input.chunks(XERIAL_BLOCK_SIZE) {
                let len_at = out.len();
                out.extend_from_slice(&[0; 4]);
                let start = out.len();
                out.resize(start + snap::raw::max_compress_len(chunk.len()), 0);
                let n = enc
                    .compress(chunk, &mut out[start..])
                    .map_err(|e| encode_err(e.to_string()))?;
                out.truncate(start + n);
                out[len_at..start].copy_from_slice(&(n as i32).to_be_bytes());
            }
            Ok(())
        }
        #[cfg(feature = "lz4")]
        Compression::Lz4 => {
            lz4_frame(input, out);
            Ok(())
        }
        #[cfg(feature = "zstd")]
        Compression::Zstd => {
            zstd_compress(input, out);
            Ok(())
        }
        #[allow(unreachable_patterns)]
        other => Err(encode_err(format!(
            "compression codec {other:?} is not compiled in (enable the `{}` feature)",
            other.name()
        ))),
    }
}

/// The LZ4 frame header as Kafka's `KafkaLZ4BlockOutputStream` writes it:
/// 64 KiB independent blocks, no block or content checksum, no content size
/// (taken from lz4_flex's frame encoder once, so the header checksum is
/// its).
#[cfg(feature = "lz4")]
fn lz4_frame_header() -> &'static [u8] {
    static HEADER: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    HEADER.get_or_init(|| {
        use lz4_flex::frame::{BlockMode, BlockSize, FrameEncoder, FrameInfo};
        let info = FrameInfo::new()
            .block_size(BlockSize::Max64KB)
            .block_mode(BlockMode::Independent);
        let mut frame = FrameEncoder::with_frame_info(info, Vec::new())
            .finish()
            .expect("an empty frame encodes");
        frame.truncate(frame.len() - 4); // the end mark
        frame
    })
}

/// An LZ4 frame of `input` appended to `out`: the header, then each 64 KiB
/// block compressed straight into `out` (stored raw when it does not
/// shrink), then the end mark. Writes the frame lz4_flex's `FrameEncoder`
/// writes, without its per-frame buffers.
#[cfg(feature = "lz4")]
fn lz4_frame(input: &[u8], out: &mut Vec<u8>) {
    const BLOCK: usize = 64 * 1024;
    const RAW: u32 = 0x8000_0000;
    out.extend_from_slice(lz4_frame_header());
    for chunk in input.chunks(BLOCK) {
        let len_at = out.len();
        let start = len_at + 4;
        out.resize(
            start + lz4_flex::block::get_maximum_output_size(chunk.len()),
            0,
        );
        match lz4_flex::block::compress_into(chunk, &mut out[start..]) {
            Ok(n) if n < chunk.len() => {
                out.truncate(start + n);
                out[len_at..start].copy_from_slice(&(n as u32).to_le_bytes());
            }
            _ => {
                out.truncate(start);
                out.extend_from_slice(chunk);
                out[len_at..start].copy_from_slice(&(chunk.len() as u32 | RAW).to_le_bytes());
            }
        }
    }
    out.extend_from_slice(&0u32.to_le_bytes());
}

/// One zstd frame of `input` (no content checksum: the batch's CRC-32C
/// covers the bytes) appended to `out`: ruzstd's encoder with our match
/// finder sized to the input (see the `zstd` module).
#[cfg(feature = "zstd")]
fn zstd_compress(input: &[u8], out: &mut Vec<u8>) {
    super::zstd::compress(input, out);
}

/// Reads all of `r` into a vector of at most `limit` bytes, in chunks.
#[allow(dead_code)]
fn read_bounded<R: std::io::Read>(
    r: R,
    limit: usize,
    out: &mut Vec<u8>,
    size_hint: usize,
) -> Result<(), DecodeError> {
    use std::io::Read;
    let room = limit.saturating_sub(out.len());
    out.reserve(size_hint.min(room));
    let mut taken = r.take(room as u64 + 1);
    taken.read_to_end(out).map_err(decomp_err)?;
    if out.len() > limit {
        return Err(too_large(limit));
    }
    Ok(())
}

/// Reads all of `r` into a new vector of at most `limit` bytes, reserving
/// up to `size_hint` bytes up front.
#[cfg(any(feature = "gzip", feature = "lz4"))]
fn read_all_bounded<R: std::io::Read>(
    r: R,
    limit: usize,
    size_hint: usize,
) -> Result<Vec<u8>, DecodeError> {
    let mut out = Vec::new();
    read_bounded(r, limit, &mut out, size_hint)?;
    Ok(out)
}

/// Decompresses `input` (the records section) with `codec`, producing at most
/// `limit` bytes.
pub(crate) fn decompress(
    codec: Compression,
    input: &[u8],
    limit: usize,
) -> Result<Vec<u8>, DecodeError> {
    #[allow(unused_variables)]
    let hint = input.len().saturating_mul(4);
    match codec {
        Compression::None => {
            if input.len() > limit {
                return Err(too_large(limit));
            }
            Ok(input.to_vec())
        }
        #[cfg(feature = "gzip")]
        Compression::Gzip => {
            read_all_bounded(flate2::read::MultiGzDecoder::new(input), limit, hint)
        }
        #[cfg(feature = "snappy")]
        Compression::Snappy => snappy_decompress(input, limit),
        #[cfg(feature = "lz4")]
        Compression::Lz4 => {
            read_all_bounded(lz4_flex::frame::FrameDecoder::new(input), limit, hint)
        }
        #[cfg(feature = "zstd")]
        Compression::Zstd => zstd_decompress(input, limit),
        #[allow(unreachable_patterns)]
        other => Err(DecodeError::new(
            "record_batch.attributes",
            DecodeErrorKind::UnsupportedCompression(other.id()),
        )),
    }
}

/// Largest expansion of one raw snappy block: a 3-byte copy emits at most 64
/// bytes. Announced lengths beyond this are lies and are rejected up front.
#[cfg(feature = "snappy")]
const SNAPPY_MAX_RATIO: usize = 32;

#[cfg(feature = "snappy")]
fn snappy_block(
    dec: &mut snap::raw::Decoder,
    block: &[u8],
    out: &mut Vec<u8>,
    limit: usize,
) -> Result<(), DecodeError> {
    let n = snap::raw::decompress_len(block).map_err(decomp_err)?;
    if n > limit.saturating_sub(out.len()) {
        return Err(too_large(limit));
    }
    if n > block.len().saturating_mul(SNAPPY_MAX_RATIO) {
        return Err(decomp_err(format!(
            "snappy block of {} bytes announces {n} bytes",
            block.len()
        )));
    }
    let start = out.len();
    out.resize(start + n, 0);
    let got = dec
        .decompress(block, &mut out[start..])
        .map_err(decomp_err)?;
    if got != n {
        return Err(decomp_err("snappy block length mismatch"));
    }
    Ok(())
}

/// Xerial-framed snappy (as Java writes it), or a single raw snappy block (as
/// some other clients write it): the xerial magic tells them apart, as in
/// snappy-java's `SnappyInputStream`.
#[cfg(feature = "snappy")]
fn snappy_decompress(input: &[u8], limit: usize) -> Result<Vec<u8>, DecodeError> {
    let mut dec = snap::raw::Decoder::new();
    let mut out = Vec::new();
    if !input.starts_with(&XERIAL_MAGIC) {
        snappy_block(&mut dec, input, &mut out, limit)?;
        return Ok(out);
    }
    let mut rest = input;
    while !rest.is_empty() {
        // A (concatenated) stream header.
        if rest.starts_with(&XERIAL_MAGIC) {
            if rest.len() < XERIAL_HEADER_LEN {
                return Err(decomp_err("truncated xerial snappy header"));
            }
            rest = &rest[XERIAL_HEADER_LEN..];
            continue;
        }
        if rest.len() < 4 {
            return Err(decomp_err("truncated xerial snappy block length"));
        }
        let len = i32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]);
        rest = &rest[4..];
        let len = usize::try_from(len)
            .ok()
            .filter(|l| *l <= rest.len())
            .ok_or_else(|| decomp_err(format!("xerial snappy block length {len} out of range")))?;
        let (block, tail) = rest.split_at(len);
        snappy_block(&mut dec, block, &mut out, limit)?;
        rest = tail;
    }
    Ok(out)
}

/// Window size announced by a zstd frame header, if it is a regular frame.
#[cfg(feature = "zstd")]
fn zstd_window_size(src: &[u8]) -> Option<u64> {
    if src.len() < 6 || src[..4] != [0x28, 0xb5, 0x2f, 0xfd] {
        return None;
    }
    let fhd = src[4];
    let single_segment = fhd & 0x20 != 0;
    if !single_segment {
        let wd = src[5];
        let exp = u32::from(wd >> 3);
        let base = 1u64 << (10 + exp);
        return Some(base + (base / 8) * u64::from(wd & 7));
    }
    // Single segment: the window is the frame content size.
    let dict_len = [0usize, 1, 2, 4][usize::from(fhd & 3)];
    let fcs_len = [1usize, 2, 4, 8][usize::from(fhd >> 6)];
    let at = 5 + dict_len;
    let fcs = src.get(at..at + fcs_len)?;
    let mut v = [0u8; 8];
    v[..fcs_len].copy_from_slice(fcs);
    let mut size = u64::from_le_bytes(v);
    if fcs_len == 2 {
        size += 256;
    }
    Some(size)
}

/// zstd: one or more frames (skippable frames are skipped), bounded output.
#[cfg(feature = "zstd")]
fn zstd_decompress(input: &[u8], limit: usize) -> Result<Vec<u8>, DecodeError> {
    use ruzstd::decoding::StreamingDecoder;
    use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};
    // A frame may announce a window the decoder reserves up front: refuse
    // windows beyond the limit (but never below 8 MiB, what zstd levels up to
    // 19 use), so the reservation stays within the configured bound.
    let max_window = (limit as u64).max(8 << 20);
    let mut out = Vec::new();
    let mut src = input;
    while !src.is_empty() {
        if let Some(w) = zstd_window_size(src)
            && w > max_window
        {
            return Err(too_large(limit));
        }
        let before = src.len();
        match StreamingDecoder::new(&mut src) {
            Ok(dec) => read_bounded(dec, limit, &mut out, before.saturating_mul(4))?,
            Err(FrameDecoderError::ReadFrameHeaderError(ReadFrameHeaderError::SkipFrame {
                length,
                ..
            })) => {
                let length = length as usize;
                if length > src.len() {
                    return Err(decomp_err("truncated zstd skippable frame"));
                }
                src = &src[length..];
            }
            Err(e) => return Err(decomp_err(e)),
        }
        if src.len() == before {
            return Err(decomp_err("zstd decoder made no progress"));
        }
    }
    Ok(out)
}

#[cfg(all(test, any(feature = "lz4", feature = "zstd", feature = "gzip")))]
mod tests {
    use super::*;

    /// Inputs of the shapes batches take: empty, tiny, text-like, one byte
    /// over a 64 KiB block, incompressible.
    fn inputs() -> Vec<Vec<u8>> {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let noise: Vec<u8> = (0..70_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let text: Vec<u8> = b"orders,42,EUR,shipped;".repeat(3000);
        vec![
            Vec::new(),
            b"k".to_vec(),
            text.clone(),
            text[..64 * 1024 + 1].to_vec(),
            noise,
        ]
    }

    #[cfg(feature = "lz4")]
    #[test]
    fn lz4_frames_decode_with_lz4_flex_and_carry_kafkas_header() {
        use std::io::Read;
        for input in inputs() {
            let mut ours = Vec::new();
            compress(Compression::Lz4, None, &input, &mut ours).unwrap();
            let mut back = Vec::new();
            lz4_flex::frame::FrameDecoder::new(&ours[..])
                .read_to_end(&mut back)
                .unwrap();
            assert_eq!(back, input, "lz4_flex reads our frame");
            assert_eq!(decompress(Compression::Lz4, &ours, 1 << 20).unwrap(), input);
            // The same header as lz4_flex's encoder with Kafka's settings.
            use lz4_flex::frame::{BlockMode, BlockSize, FrameEncoder, FrameInfo};
            let info = FrameInfo::new()
                .block_size(BlockSize::Max64KB)
                .block_mode(BlockMode::Independent);
            let mut enc = FrameEncoder::with_frame_info(info, Vec::new());
            std::io::Write::write_all(&mut enc, &input).unwrap();
            let theirs = enc.finish().unwrap();
            assert_eq!(ours[..7], theirs[..7], "frame header");
            assert_eq!(ours[ours.len() - 4..], [0, 0, 0, 0], "end mark");
        }
    }

    #[cfg(feature = "zstd")]
    #[test]
    fn zstd_frames_depend_only_on_their_input() {
        // Invariant: a frame depends only on its own input, whatever was
        // compressed before on the thread.
        let all = inputs();
        let mut first = Vec::new();
        for input in &all {
            let mut out = Vec::new();
            compress(Compression::Zstd, None, input, &mut out).unwrap();
            assert_eq!(
                decompress(Compression::Zstd, &out, 1 << 20).unwrap(),
                *input
            );
            first.push(out);
        }
        for (input, before) in all.iter().zip(&first).rev() {
            let mut out = Vec::new();
            compress(Compression::Zstd, None, input, &mut out).unwrap();
            assert_eq!(&out, before, "same input, same frame, in any order");
        }
    }

    #[cfg(feature = "gzip")]
    #[test]
    fn gzip_honours_its_level() {
        // Invariant: every gzip level Java accepts compresses to a frame
        // that decodes to the input, and level 1 (fastest) is not smaller
        // than level 9 (smallest) on compressible input.
        let text: Vec<u8> = (0..20_000u32)
            .flat_map(|i| format!("order-{},{};", i % 977, i % 13).into_bytes())
            .collect();
        let mut sizes = Vec::new();
        for level in [Some(-1), Some(1), Some(5), Some(9), None] {
            let mut out = Vec::new();
            compress(Compression::Gzip, level, &text, &mut out).unwrap();
            assert_eq!(decompress(Compression::Gzip, &out, 1 << 22).unwrap(), text);
            sizes.push(out.len());
        }
        assert!(
            sizes[1] > sizes[3],
            "level 1 {} vs level 9 {}",
            sizes[1],
            sizes[3]
        );
        assert_eq!(sizes[0], sizes[4], "-1 is the default level");
    }

    #[cfg(feature = "lz4")]
    #[test]
    fn a_level_the_codec_cannot_honour_fails_before_compressing() {
        // Invariant: no level is silently ignored: LZ4 HC levels and
        // levels of codecs without levels are errors, and nothing is
        // written.
        for (codec, level) in [
            (Compression::Lz4, 12),
            (Compression::Lz4, 1),
            (Compression::Snappy, 1),
            (Compression::Zstd, 4),
            (Compression::Gzip, 0),
            (Compression::Gzip, 10),
        ] {
            let mut out = Vec::new();
            let err = compress(codec, Some(level), b"abc", &mut out).unwrap_err();
            assert!(
                err.to_string().contains("level"),
                "{codec:?} {level}: {err}"
            );
            assert!(out.is_empty());
        }
        let mut out = Vec::new();
        compress(Compression::Lz4, Some(9), b"abc", &mut out).unwrap();
        assert_eq!(decompress(Compression::Lz4, &out, 1 << 10).unwrap(), b"abc");
    }
}
