//! `FrameDecoder` on an arbitrary byte stream delivered in chunks, with a small
//! maximum frame size, checked against a one-shot reference splitter: the same
//! frames in the same order, an error exactly when the reference meets a negative
//! or oversized length, and no buffer growth beyond what a bounded frame needs.
//!
//! Input: byte 0 → max frame size (`4 * b`, 0..=1020); byte 1 → chunk-size seed;
//! the rest is the stream.

use bytes::{Bytes, BytesMut};
use kafka_proto::frame::FrameDecoder;

/// Splits the whole stream at once: the frames and whether a bad length follows.
fn reference(stream: &[u8], max: usize) -> (Vec<&[u8]>, bool) {
    let mut frames = Vec::new();
    let mut pos = 0;
    while stream.len() - pos >= 4 {
        let n = i32::from_be_bytes(stream[pos..pos + 4].try_into().unwrap());
        if n < 0 || n as usize > max {
            return (frames, true);
        }
        let n = n as usize;
        if stream.len() - pos - 4 < n {
            break;
        }
        frames.push(&stream[pos + 4..pos + 4 + n]);
        pos += 4 + n;
    }
    (frames, false)
}

/// Runs one input through the target's checks; panics on a failed one.
pub fn run(data: &[u8]) {
    if data.len() < 2 {
        return;
    }
    let max = usize::from(data[0]) * 4;
    let seed = usize::from(data[1]);
    let stream = &data[2..];

    let mut dec = FrameDecoder::new(max);
    assert_eq!(dec.max_frame_size(), max);
    let mut buf = BytesMut::new();
    let mut got: Vec<Bytes> = Vec::new();
    let mut failed = false;
    let mut pos = 0;
    let mut i = 0;
    'stream: while pos < stream.len() {
        let len = (1 + (seed * (i + 1) * 7 + i) % 61).min(stream.len() - pos);
        buf.extend_from_slice(&stream[pos..pos + len]);
        pos += len;
        i += 1;
        loop {
            match dec.decode(&mut buf) {
                Ok(Some(frame)) => {
                    assert!(frame.len() <= max, "frame of {} > max {max}", frame.len());
                    got.push(frame);
                }
                Ok(None) => break,
                Err(e) => {
                    let _ = e.to_string();
                    failed = true;
                    break 'stream;
                }
            }
        }
        // Never reserve for more than one bounded frame (plus allocator slack and
        // BytesMut's kept original capacity, at most 64 KiB).
        assert!(
            buf.capacity() <= 2 * (max + 4 + 64 + buf.len()) + 128 * 1024,
            "capacity {} for max {max}, len {}",
            buf.capacity(),
            buf.len()
        );
    }
    let (want, want_err) = reference(stream, max);
    assert_eq!(failed, want_err, "error mismatch");
    assert_eq!(got.len(), want.len(), "frame count mismatch");
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g.as_ref(), *w);
    }
}
