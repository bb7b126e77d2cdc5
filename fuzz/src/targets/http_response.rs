//! `kafka_client::http::ResponseParser` on arbitrary bytes delivered in
//! arbitrary pieces: never panics, gives the same outcome as a one-shot
//! parse of the same bytes, and never holds a body beyond its limit.
//!
//! Input: byte 0 → body limit (`16 * b`); byte 1 → piece-size seed; the
//! rest is what the connection delivers.

use kafka_client::http::{ParseError, Response, ResponseParser};

/// Feeds `bytes` in pieces from `sizes`; the outcome (a response, an
/// error, or the outcome at EOF).
fn parse(
    bytes: &[u8],
    limit: usize,
    mut sizes: impl FnMut() -> usize,
) -> Result<Response, ParseError> {
    let mut p = ResponseParser::new(limit);
    let mut rest = bytes;
    while !rest.is_empty() {
        let n = sizes().clamp(1, rest.len());
        let (piece, tail) = rest.split_at(n);
        rest = tail;
        if let Some(r) = p.feed(piece)? {
            return Ok(r);
        }
    }
    p.eof()
}

/// Runs one input through the target's checks; panics on a failed one.
pub fn run(data: &[u8]) {
    let [limit, seed, rest @ ..] = data else {
        return;
    };
    let limit = usize::from(*limit) * 16;
    let whole = parse(rest, limit, || usize::MAX);
    let mut state = u32::from(*seed) | 1;
    let pieces = parse(rest, limit, || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        (state % 17) as usize + 1
    });
    if let Ok(r) = &whole {
        assert!(r.body.len() <= limit, "a body beyond the limit");
    }
    assert_eq!(
        whole, pieces,
        "the outcome depends on how the bytes arrived"
    );
}
