//! The idempotent producers' state of one partition, as the partition
//! leader keeps it (Kafka's `ProducerStateEntry` and `ProducerAppendInfo`):
//! per producer id, its epoch, the metadata of its last five batches (for
//! duplicate detection) and the first offset of its open transaction.
//!
//! The checks of an append, in the broker's order:
//! 1. a batch equal (epoch, first and last sequence) to one of the last five
//!    is a duplicate: the broker answers with the original offset;
//! 2. an epoch below the current one: `INVALID_PRODUCER_EPOCH`;
//! 3. transaction version 2, transactional, no batch of the producer on the
//!    partition and a first sequence other than 0: `OUT_OF_ORDER_SEQUENCE_NUMBER`
//!    ("expected sequence 0 for transactions v2 idempotent producer with no
//!    existing state");
//! 4. a new epoch must start at sequence 0; the same epoch must continue
//!    the last sequence (with the `i32::MAX` to 0 wrap):
//!    `OUT_OF_ORDER_SEQUENCE_NUMBER` otherwise;
//! 5. a non-transactional batch while the producer's transaction is open:
//!    `INVALID_TXN_STATE`.
//!
//! A producer the partition has no state for may start at any sequence
//! (except rule 3), as Kafka does since KIP-360.

use kafka_proto::ErrorCode;
use std::collections::VecDeque;

/// How many batches per producer the broker remembers for duplicate
/// detection (Kafka's `NUM_BATCHES_TO_RETAIN`).
pub(crate) const BATCHES_RETAINED: usize = 5;

/// One remembered batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BatchMeta {
    /// Sequence of its first record.
    pub first_seq: i32,
    /// Sequence of its last record.
    pub last_seq: i32,
    /// Offset it was written at (answered again to a duplicate).
    pub first_offset: i64,
    /// Offset of its last record.
    pub last_offset: i64,
}

/// A producer id's state on one partition.
#[derive(Debug, Clone, Default)]
pub(crate) struct ProducerEntry {
    /// The producer epoch last written; an older one is fenced.
    pub epoch: i16,
    /// The last `BATCHES_RETAINED` batches, oldest first, to spot duplicates and gaps.
    pub batches: VecDeque<BatchMeta>,
    /// First offset of the open transaction on this partition.
    pub txn_first_offset: Option<i64>,
    /// Coordinator epoch of the last marker; a marker with an older one is refused.
    pub coordinator_epoch: i32,
}

/// What an incoming data batch is, for the producer state.
#[derive(Debug, Clone, Copy)]
pub(crate) struct IncomingBatch {
    /// Its producer epoch.
    pub epoch: i16,
    /// Sequence of its first record.
    pub first_seq: i32,
    /// Sequence of its last record.
    pub last_seq: i32,
    /// Written in a transaction (opens one on this partition if none is).
    pub transactional: bool,
    /// Written under transaction version 2 (Produce v12+).
    pub tv2: bool,
}

/// The outcome of checking a batch against the producer's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Check {
    /// Append it.
    Append,
    /// Already written: answer with this first offset, append nothing.
    Duplicate { first_offset: i64 },
    /// Refuse it.
    Refuse(ErrorCode, String),
}

fn in_sequence(last: i32, next: i32) -> bool {
    i64::from(next) == i64::from(last) + 1 || (next == 0 && last == i32::MAX)
}

impl ProducerEntry {
    /// The last sequence written under the current epoch, or −1.
    pub(crate) fn last_seq(&self) -> i32 {
        self.batches.back().map_or(-1, |b| b.last_seq)
    }

    /// Moves to `epoch`, forgetting the batches of the previous one.
    pub(crate) fn set_epoch(&mut self, epoch: i16) {
        if self.epoch != epoch {
            self.epoch = epoch;
            self.batches.clear();
        }
    }

    /// Records a written batch.
    pub(crate) fn record(&mut self, b: &IncomingBatch, first_offset: i64, last_offset: i64) {
        self.set_epoch(b.epoch);
        self.batches.push_back(BatchMeta {
            first_seq: b.first_seq,
            last_seq: b.last_seq,
            first_offset,
            last_offset,
        });
        while self.batches.len() > BATCHES_RETAINED {
            self.batches.pop_front();
        }
    }
}

/// Checks `b` from producer `pid` against its state on the partition
/// (`None`: the partition knows nothing of it).
pub(crate) fn check(pid: i64, entry: Option<&ProducerEntry>, b: &IncomingBatch) -> Check {
    let Some(e) = entry else {
        if b.transactional && b.tv2 && b.first_seq != 0 {
            return Check::Refuse(
                ErrorCode::OutOfOrderSequenceNumber,
                format!(
                    "Invalid sequence number for producer {pid}: {} (incoming seq. number). Expected sequence 0 for transactions v2 idempotent producer with no existing state.",
                    b.first_seq
                ),
            );
        }
        return Check::Append;
    };
    if b.epoch == e.epoch
        && let Some(d) = e
            .batches
            .iter()
            .find(|d| d.first_seq == b.first_seq && d.last_seq == b.last_seq)
    {
        return Check::Duplicate {
            first_offset: d.first_offset,
        };
    }
    if b.epoch < e.epoch {
        return Check::Refuse(
            ErrorCode::InvalidProducerEpoch,
            format!(
                "Epoch of producer {pid} is {}, which is smaller than the last seen epoch {}",
                b.epoch, e.epoch
            ),
        );
    }
    if b.epoch != e.epoch {
        if b.first_seq != 0 {
            return Check::Refuse(
                ErrorCode::OutOfOrderSequenceNumber,
                format!(
                    "Invalid sequence number for new epoch of producer {pid}: {} (request epoch), {} (seq. number), {} (current producer epoch)",
                    b.epoch, b.first_seq, e.epoch
                ),
            );
        }
    } else if !in_sequence(e.last_seq(), b.first_seq) {
        return Check::Refuse(
            ErrorCode::OutOfOrderSequenceNumber,
            format!(
                "Out of order sequence number for producer {pid}: {} (incoming seq. number), {} (current end sequence number)",
                b.first_seq,
                e.last_seq()
            ),
        );
    }
    if e.txn_first_offset.is_some() && !b.transactional {
        return Check::Refuse(
            ErrorCode::InvalidTxnState,
            format!("Expected transactional write from producer {pid}"),
        );
    }
    Check::Append
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(epoch: i16, first: i32, last: i32) -> IncomingBatch {
        IncomingBatch {
            epoch,
            first_seq: first,
            last_seq: last,
            transactional: false,
            tv2: false,
        }
    }

    fn entry_with(epoch: i16, batches: &[(i32, i32, i64)]) -> ProducerEntry {
        let mut e = ProducerEntry {
            epoch,
            ..Default::default()
        };
        for &(f, l, o) in batches {
            e.record(&batch(epoch, f, l), o, o + i64::from(l - f));
        }
        e
    }

    #[test]
    fn next_in_line_appends_and_a_gap_is_out_of_order() {
        let e = entry_with(0, &[(0, 9, 0)]);
        assert_eq!(check(1, Some(&e), &batch(0, 10, 19)), Check::Append);
        assert!(matches!(
            check(1, Some(&e), &batch(0, 11, 19)),
            Check::Refuse(ErrorCode::OutOfOrderSequenceNumber, _)
        ));
    }

    #[test]
    fn one_of_the_last_five_is_a_duplicate_with_its_offset() {
        let e = entry_with(
            0,
            &[
                (0, 0, 5),
                (1, 1, 6),
                (2, 2, 7),
                (3, 3, 8),
                (4, 4, 9),
                (5, 5, 10),
            ],
        );
        assert_eq!(
            check(1, Some(&e), &batch(0, 1, 1)),
            Check::Duplicate { first_offset: 6 }
        );
        // The sixth-last is forgotten: out of order.
        assert!(matches!(
            check(1, Some(&e), &batch(0, 0, 0)),
            Check::Refuse(ErrorCode::OutOfOrderSequenceNumber, _)
        ));
    }

    #[test]
    fn an_older_epoch_is_refused_and_a_new_one_starts_at_zero() {
        let e = entry_with(3, &[(0, 4, 0)]);
        assert!(matches!(
            check(1, Some(&e), &batch(2, 5, 5)),
            Check::Refuse(ErrorCode::InvalidProducerEpoch, _)
        ));
        assert_eq!(check(1, Some(&e), &batch(4, 0, 3)), Check::Append);
        assert!(matches!(
            check(1, Some(&e), &batch(4, 5, 6)),
            Check::Refuse(ErrorCode::OutOfOrderSequenceNumber, _)
        ));
    }

    #[test]
    fn sequences_wrap_at_i32_max() {
        let e = entry_with(0, &[(i32::MAX - 1, i32::MAX, 0)]);
        assert_eq!(check(1, Some(&e), &batch(0, 0, 3)), Check::Append);
    }

    #[test]
    fn unknown_producer_starts_anywhere_except_transactional_tv2() {
        assert_eq!(check(1, None, &batch(0, 42, 43)), Check::Append);
        let tv2 = IncomingBatch {
            transactional: true,
            tv2: true,
            ..batch(0, 42, 43)
        };
        assert!(matches!(
            check(1, None, &tv2),
            Check::Refuse(ErrorCode::OutOfOrderSequenceNumber, _)
        ));
    }
}
