//! The persisted state of a two-phase-commit sink and its versioned binary
//! format.

use std::collections::BTreeMap;

use crate::codec::{Codec, StateDecodeError, StateReader, put_bytes, put_u8, put_u32, put_u64};

/// A transaction handle with the wall-clock time (ms since the Unix epoch)
/// at which it began (Flink's `TransactionHolder`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionHolder<T> {
    /// The user's transaction handle.
    pub handle: T,
    /// When the transaction began, in ms since the Unix epoch.
    pub start_time_ms: u64,
}

impl<T> TransactionHolder<T> {
    /// Wraps `handle` begun at `start_time_ms`.
    ///
    /// ```
    /// use kafka_sink::TransactionHolder;
    /// let h = TransactionHolder::new(7u64, 1_700_000_000_000);
    /// assert_eq!((h.handle, h.start_time_ms), (7, 1_700_000_000_000));
    /// ```
    pub fn new(handle: T, start_time_ms: u64) -> Self {
        TransactionHolder {
            handle,
            start_time_ms,
        }
    }

    /// Milliseconds since the transaction began (0 if `now_ms` is earlier).
    pub fn elapsed_ms(&self, now_ms: u64) -> u64 {
        now_ms.saturating_sub(self.start_time_ms)
    }

    fn as_ref(&self) -> TransactionHolder<&T> {
        TransactionHolder::new(&self.handle, self.start_time_ms)
    }
}

/// The state of one sink subtask at a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SinkState<T, C> {
    /// The transaction open at snapshot time; restored sinks abort it.
    pub current: Option<TransactionHolder<T>>,
    /// Pre-committed transactions by checkpoint id; restored sinks commit
    /// them in this order.
    pub pending: BTreeMap<u64, TransactionHolder<T>>,
    /// The user context, if the sink has one.
    pub context: Option<C>,
}

impl<T, C> Default for SinkState<T, C> {
    fn default() -> Self {
        SinkState {
            current: None,
            pending: BTreeMap::new(),
            context: None,
        }
    }
}

/// A borrowed view of a [`SinkState`], as produced by
/// [`TwoPhaseCommitSink::snapshot_state`](crate::TwoPhaseCommitSink::snapshot_state)
/// without cloning transaction handles.
#[derive(Debug, Clone)]
pub struct SinkStateRef<'a, T, C> {
    /// See [`SinkState::current`].
    pub current: Option<TransactionHolder<&'a T>>,
    /// See [`SinkState::pending`] (ascending checkpoint ids).
    pub pending: Vec<(u64, TransactionHolder<&'a T>)>,
    /// See [`SinkState::context`].
    pub context: Option<&'a C>,
}

impl<'a, T, C> From<&'a SinkState<T, C>> for SinkStateRef<'a, T, C> {
    fn from(s: &'a SinkState<T, C>) -> Self {
        SinkStateRef {
            current: s.current.as_ref().map(TransactionHolder::as_ref),
            pending: s.pending.iter().map(|(id, h)| (*id, h.as_ref())).collect(),
            context: s.context.as_ref(),
        }
    }
}

/// Encodes and decodes [`SinkState`] with a magic, a version byte and the
/// user's codecs for the transaction (`TC`) and context (`CC`) types.
///
/// [`SinkState`] is Flink's `TwoPhaseCommitSinkFunction.State`: the
/// transaction open at snapshot time, the pre-committed transactions waiting
/// for their checkpoint's completion (with checkpoint ids and start times) and
/// the user context.
///
/// # Format version 1
///
/// All integers are big-endian; `bytes` is a `u32` length followed by that
/// many bytes, decoded by the user's [`Codec`] from exactly that slice.
///
/// ```text
/// magic      4 bytes  "K2PC"
/// version    u8       1
/// current    u8 flag; if 1: start_time_ms u64, txn bytes
/// pending    u32 n;   n x (checkpoint_id u64, start_time_ms u64, txn bytes)
///                     (ascending checkpoint ids; a duplicate is an error)
/// context    u8 flag; if 1: ctx bytes
/// ```
///
/// Anything after the context, an unknown version or a wrong magic is a typed
/// [`StateDecodeError`]. `sink/tests/fixtures/sink_state_v1.hex` holds bytes written
/// by version 1; later versions must keep decoding it.
///
/// ```
/// use kafka_sink::codec::{StringCodec, StringSetCodec};
/// use kafka_sink::{SinkState, StateSerializer, TransactionHolder};
/// use std::collections::{BTreeMap, BTreeSet};
///
/// let serializer = StateSerializer::new(StringCodec, StringSetCodec);
/// let state: SinkState<String, BTreeSet<String>> = SinkState {
///     current: Some(TransactionHolder::new("sink-1".to_string(), 2_000)),
///     pending: BTreeMap::from([(7, TransactionHolder::new("sink-0".to_string(), 1_000))]),
///     context: Some(BTreeSet::from(["sink-0".to_string(), "sink-1".to_string()])),
/// };
/// let bytes = serializer.encode(&state);
/// assert_eq!(serializer.decode(&bytes).unwrap(), state);
/// ```
#[derive(Debug, Clone, Default)]
pub struct StateSerializer<TC, CC> {
    /// The codec of the transaction handles.
    txn: TC,
    /// The codec of the user context.
    ctx: CC,
}

impl<TC, CC> StateSerializer<TC, CC> {
    /// The first bytes of every encoded state.
    pub const MAGIC: [u8; 4] = *b"K2PC";
    /// The format version this build writes (and the newest it reads).
    pub const VERSION: u8 = 1;

    /// A serializer with the given transaction and context codecs.
    ///
    /// ```
    /// use kafka_sink::TwoPhaseCommitSink;
    /// use kafka_sink::codec::{U64Codec, UnitCodec};
    /// use kafka_sink::StateSerializer;
    /// use kafka_sink::InMemoryTable;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    /// // The in-memory table's handles are u64 and it has no context.
    /// let serializer = StateSerializer::new(U64Codec, UnitCodec);
    /// let mut sink = TwoPhaseCommitSink::new(InMemoryTable::<&str>::new());
    /// sink.initialize_state(None).await?;
    /// let bytes = serializer.encode(sink.snapshot_state(1).await?); // persist these
    ///
    /// // After a crash: restore a new sink from the persisted bytes.
    /// let mut restored = TwoPhaseCommitSink::new(sink.into_handler());
    /// restored.initialize_state(Some(vec![serializer.decode(&bytes)?])).await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn new(txn_codec: TC, ctx_codec: CC) -> Self {
        StateSerializer {
            txn: txn_codec,
            ctx: ctx_codec,
        }
    }

    /// Encodes a state (owned [`SinkState`] or borrowed [`SinkStateRef`]) in
    /// the current format version.
    pub fn encode<'a, T: 'a, C: 'a>(&self, state: impl Into<SinkStateRef<'a, T, C>>) -> Vec<u8>
    where
        TC: Codec<T>,
        CC: Codec<C>,
    {
        let state = state.into();
        let mut out = Vec::with_capacity(64);
        out.extend_from_slice(&Self::MAGIC);
        put_u8(&mut out, Self::VERSION);
        let mut scratch = Vec::new();
        match &state.current {
            Some(h) => {
                put_u8(&mut out, 1);
                put_u64(&mut out, h.start_time_ms);
                self.put_value(&self.txn, h.handle, &mut scratch, &mut out);
            }
            None => put_u8(&mut out, 0),
        }
        let n = u32::try_from(state.pending.len()).expect("more than u32::MAX pending");
        put_u32(&mut out, n);
        for (id, h) in &state.pending {
            put_u64(&mut out, *id);
            put_u64(&mut out, h.start_time_ms);
            self.put_value(&self.txn, h.handle, &mut scratch, &mut out);
        }
        match state.context {
            Some(c) => {
                put_u8(&mut out, 1);
                self.put_value(&self.ctx, c, &mut scratch, &mut out);
            }
            None => put_u8(&mut out, 0),
        }
        out
    }

    fn put_value<V>(&self, codec: &impl Codec<V>, v: &V, scratch: &mut Vec<u8>, out: &mut Vec<u8>) {
        scratch.clear();
        codec.encode(v, scratch);
        put_bytes(out, scratch);
    }

    /// Decodes a state written by any supported format version.
    pub fn decode<T, C>(&self, bytes: &[u8]) -> Result<SinkState<T, C>, StateDecodeError>
    where
        TC: Codec<T>,
        CC: Codec<C>,
    {
        let mut r = StateReader::new(bytes);
        r.magic(&Self::MAGIC)?;
        match r.u8()? {
            1 => self.decode_v1(r),
            version => Err(StateDecodeError::UnsupportedVersion {
                version,
                supported: Self::VERSION,
            }),
        }
    }

    fn decode_v1<T, C>(&self, mut r: StateReader<'_>) -> Result<SinkState<T, C>, StateDecodeError>
    where
        TC: Codec<T>,
        CC: Codec<C>,
    {
        let current = if r.flag()? {
            let start = r.u64()?;
            Some(TransactionHolder::new(self.txn.decode(r.bytes()?)?, start))
        } else {
            None
        };
        let n = r.u32()?;
        let mut pending = BTreeMap::new();
        for _ in 0..n {
            let id = r.u64()?;
            let start = r.u64()?;
            let handle = self.txn.decode(r.bytes()?)?;
            if pending
                .insert(id, TransactionHolder::new(handle, start))
                .is_some()
            {
                return Err(StateDecodeError::DuplicateCheckpointId(id));
            }
        }
        let context = if r.flag()? {
            Some(self.ctx.decode(r.bytes()?)?)
        } else {
            None
        };
        r.finish()?;
        Ok(SinkState {
            current,
            pending,
            context,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{StringCodec, U64Codec, UnitCodec};

    fn sample() -> SinkState<u64, ()> {
        SinkState {
            current: Some(TransactionHolder::new(9, 90)),
            pending: BTreeMap::from([
                (3, TransactionHolder::new(7, 70)),
                (4, TransactionHolder::new(8, 80)),
            ]),
            context: Some(()),
        }
    }

    #[test]
    fn round_trip_and_empty_state() {
        let s = StateSerializer::new(U64Codec, UnitCodec);
        assert_eq!(s.decode(&s.encode(&sample())).unwrap(), sample());
        let empty = SinkState::<u64, ()>::default();
        assert_eq!(s.decode(&s.encode(&empty)).unwrap(), empty);
    }

    #[test]
    fn every_prefix_and_every_extension_is_a_typed_error() {
        let s = StateSerializer::new(U64Codec, UnitCodec);
        let bytes = s.encode(&sample());
        for cut in 0..bytes.len() {
            assert!(s.decode::<u64, ()>(&bytes[..cut]).is_err(), "prefix {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(
            s.decode::<u64, ()>(&longer),
            Err(StateDecodeError::TrailingBytes { count: 1 })
        );
    }

    #[test]
    fn unknown_version_and_magic() {
        let s = StateSerializer::new(StringCodec, UnitCodec);
        let mut bytes = s.encode(&SinkState::<String, ()>::default());
        bytes[4] = 2;
        assert_eq!(
            s.decode::<String, ()>(&bytes),
            Err(StateDecodeError::UnsupportedVersion {
                version: 2,
                supported: 1
            })
        );
        bytes[0] = b'X';
        assert!(matches!(
            s.decode::<String, ()>(&bytes),
            Err(StateDecodeError::BadMagic { .. })
        ));
    }

    #[test]
    fn duplicate_pending_id_rejected() {
        let s = StateSerializer::new(U64Codec, UnitCodec);
        let mut bytes = Vec::from(*b"K2PC");
        bytes.push(1);
        bytes.push(0);
        put_u32(&mut bytes, 2);
        for _ in 0..2 {
            put_u64(&mut bytes, 5);
            put_u64(&mut bytes, 0);
            put_bytes(&mut bytes, &1u64.to_be_bytes());
        }
        bytes.push(0);
        assert_eq!(
            s.decode::<u64, ()>(&bytes),
            Err(StateDecodeError::DuplicateCheckpointId(5))
        );
    }

    #[test]
    fn codec_must_consume_its_whole_value() {
        let s = StateSerializer::new(U64Codec, UnitCodec);
        let mut bytes = Vec::from(*b"K2PC");
        bytes.push(1);
        bytes.push(1);
        put_u64(&mut bytes, 0);
        put_bytes(&mut bytes, &[0; 9]);
        put_u32(&mut bytes, 0);
        bytes.push(0);
        assert_eq!(
            s.decode::<u64, ()>(&bytes),
            Err(StateDecodeError::TrailingBytes { count: 1 })
        );
    }

    /// Invariant: the empty state is the magic, version 1, no current, zero
    /// pending and no context.
    #[test]
    fn empty_state_encodes_to_the_v1_header_and_three_empty_fields() {
        let bytes =
            StateSerializer::new(U64Codec, UnitCodec).encode(&SinkState::<u64, ()>::default());
        assert_eq!(bytes, b"K2PC\x01\x00\x00\x00\x00\x00\x00");
    }

    /// Invariant: elapsed time saturates at 0 when the clock went back.
    #[test]
    fn elapsed_ms_saturates_when_the_clock_goes_back() {
        let h = TransactionHolder::new((), 10_000);
        assert_eq!(h.elapsed_ms(12_500), 2_500);
        assert_eq!(h.elapsed_ms(9_000), 0);
    }

    /// Invariant: the borrowed view lists pending transactions in ascending
    /// checkpoint order.
    #[test]
    fn borrowed_view_lists_pending_in_checkpoint_order() {
        let mut state = SinkState::<String, ()>::default();
        state
            .pending
            .insert(4, TransactionHolder::new("sink-1".into(), 40));
        state
            .pending
            .insert(2, TransactionHolder::new("sink-0".into(), 20));
        let view = SinkStateRef::from(&state);
        let ids: Vec<u64> = view.pending.iter().map(|(id, _)| *id).collect();
        assert_eq!(ids, [2, 4]);
        assert_eq!(view.pending[1].1.handle, "sink-1");
    }
}
