//! Sequence arithmetic matches Java's `DefaultRecordBatch.incrementSequence` /
//! `decrementSequence`, including for hostile inputs (found by the record_batch
//! fuzz target: a batch with a negative `last_offset_delta`).

use kafka_proto::record::{RecordBatch, decrement_sequence, increment_sequence};
use proptest::prelude::*;

proptest! {
    /// Invariant: never panics, for any pair of i32.
    #[test]
    fn any_input_is_total(seq in any::<i32>(), d in any::<i32>()) {
        let _ = increment_sequence(seq, d);
        let _ = decrement_sequence(seq, d);
    }

    /// Invariant: on valid sequences (0..=i32::MAX) and increments, decrement undoes increment
    /// and the result stays a valid sequence.
    #[test]
    fn increment_then_decrement_round_trips(seq in 0..=i32::MAX, inc in 0..=i32::MAX) {
        let next = increment_sequence(seq, inc);
        prop_assert!(next >= 0);
        prop_assert_eq!(decrement_sequence(next, inc), seq);
    }
}

/// The fuzz crash: base_sequence 0, last_offset_delta -1 must not panic.
#[test]
fn negative_last_offset_delta_does_not_panic() {
    let batch = RecordBatch {
        base_sequence: 0,
        last_offset_delta: -1,
        ..Default::default()
    };
    // Java: 0 > MAX - (-1) (wraps to MIN) is true, so -1 - (MAX - 0) - 1, which wraps to MAX.
    assert_eq!(batch.last_sequence(), i32::MAX);
}
