//! Sans-IO read_committed filtering of one Fetch partition response, as the
//! Java consumer's `CompletedFetch` does it.
//!
//! A [`AbortedTransactionFilter`] is built per partition response from the
//! fetch offset and the response's `AbortedTransactions`, then fed the
//! decoded batches in order. [`process_partition_records`] drives it over a
//! whole `records` blob and turns the kept records into [`ConsumerRecord`]s.

use super::{ConsumerRecord, IsolationLevel};
use bytes::Bytes;
use kafka_proto::DecodeError;
use kafka_proto::record::{ControlRecord, ControlRecordType, Record, RecordBatch, RecordBatches};
use kafka_proto::record::{DecodeOptions, TimestampType};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};
use std::sync::Arc;

/// The producer id of a batch without one (`RecordBatch.NO_PRODUCER_ID`).
pub const NO_PRODUCER_ID: i64 = -1;

/// What to do with one batch of a fetch response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchVerdict {
    /// Deliver the batch's records from index `first` on (records below the
    /// fetch position are skipped; `first == records.len()` delivers none).
    Deliver {
        /// Index of the first record at or after the position.
        first: usize,
    },
    /// A transactional batch of an aborted transaction: skip it whole.
    Aborted,
    /// A control batch (transaction marker): never delivered, the position
    /// moves past it. `kind` is `None` when its key cannot be parsed.
    Control {
        /// The control record type of its first record.
        kind: Option<ControlRecordType>,
    },
}

/// Decides, batch by batch, what a consumer at a given isolation level
/// returns from one Fetch partition response, and tracks the next fetch
/// position. Follows `CompletedFetch.nextFetchedRecord` (Kafka 4.x):
///
/// - aborted transactions are kept in a min-heap by first offset; before each
///   batch that has a producer id, every entry with
///   `first_offset <= batch.last_offset()` moves into the set of aborted
///   producer ids;
/// - an ABORT marker removes its producer id from the set;
/// - a transactional batch whose producer id is in the set is skipped whole;
/// - control batches are never delivered;
/// - records below the position (the fetch offset, inside the first batch)
///   are skipped; the position advances past every delivered record, control
///   record and skipped batch, and to the end of the last batch seen.
///
/// Under read_uncommitted the aborted list is ignored (only control batches
/// and records below the position are dropped).
///
/// ```
/// use bytes::Bytes;
/// use kafka_consumer::IsolationLevel;
/// use kafka_consumer::internals::{AbortedTransactionFilter, BatchVerdict};
/// use kafka_proto::record::{Compression, ControlRecord, Record, RecordBatch, RecordBatchBuilder};
///
/// // Producer 7 wrote offsets 0..=1 in a transaction, then aborted it (marker at 2).
/// let mut b = RecordBatchBuilder::new(Compression::None).producer(7, 0, 0).transactional(true);
/// b.push(Record::new(0, None, Some(Bytes::from("a"))));
/// b.push(Record::new(0, None, Some(Bytes::from("b"))));
/// let data = b.build();
/// let marker = RecordBatch::control(2, 7, 0, 0, ControlRecord::abort(0));
///
/// let mut f = AbortedTransactionFilter::new(IsolationLevel::ReadCommitted, 0, [(7, 0)]);
/// assert_eq!(f.next_batch(&data), BatchVerdict::Aborted);
/// assert!(matches!(f.next_batch(&marker), BatchVerdict::Control { .. }));
/// assert_eq!(f.position(), 3);
/// ```
#[derive(Debug, Clone)]
pub struct AbortedTransactionFilter {
    isolation: IsolationLevel,
    /// (first_offset, producer_id), smallest first offset on top.
    aborted: BinaryHeap<Reverse<(i64, i64)>>,
    aborted_producer_ids: HashSet<i64>,
    position: i64,
}

impl AbortedTransactionFilter {
    /// A filter for a partition response fetched at `fetch_offset` with the
    /// response's aborted transactions as `(producer_id, first_offset)` pairs.
    pub fn new(
        isolation: IsolationLevel,
        fetch_offset: i64,
        aborted_transactions: impl IntoIterator<Item = (i64, i64)>,
    ) -> Self {
        let aborted = match isolation {
            IsolationLevel::ReadCommitted => aborted_transactions
                .into_iter()
                .map(|(pid, first)| Reverse((first, pid)))
                .collect(),
            IsolationLevel::ReadUncommitted => BinaryHeap::new(),
        };
        Self {
            isolation,
            aborted,
            aborted_producer_ids: HashSet::new(),
            position: fetch_offset,
        }
    }

    /// The next offset to fetch after the batches seen so far.
    pub fn position(&self) -> i64 {
        self.position
    }

    /// Producer ids whose aborted transaction is currently open in the batches seen.
    // Read by the filter's tests (through the `internals` feature), not by the reader.
    #[cfg_attr(not(feature = "internals"), allow(dead_code))]
    pub fn aborted_producer_ids(&self) -> &HashSet<i64> {
        &self.aborted_producer_ids
    }

    /// Aborted transactions not yet reached (first offset after every batch seen).
    #[cfg_attr(not(feature = "internals"), allow(dead_code))]
    pub fn pending_aborted(&self) -> usize {
        self.aborted.len()
    }

    /// Classifies the next batch (batches must come in log order) and
    /// advances the position past it.
    pub fn next_batch(&mut self, batch: &RecordBatch) -> BatchVerdict {
        let verdict = self.classify(batch);
        match verdict {
            BatchVerdict::Deliver { first } => {
                if let Some(last) = batch.records[first..].last() {
                    self.advance(last.offset.wrapping_add(1));
                }
            }
            BatchVerdict::Aborted => self.advance(batch.next_offset()),
            BatchVerdict::Control { .. } => {
                // Java advances per control record at or after the position.
                for r in &batch.records {
                    if r.offset >= self.position {
                        self.advance(r.offset.wrapping_add(1));
                    }
                }
            }
        }
        // Format v2 keeps the last offset even when compaction removed the
        // last record: continue after the batch, never inside it again.
        self.advance(batch.next_offset());
        verdict
    }

    fn advance(&mut self, to: i64) {
        self.position = self.position.max(to);
    }

    fn classify(&mut self, batch: &RecordBatch) -> BatchVerdict {
        if self.isolation == IsolationLevel::ReadCommitted && batch.producer_id != NO_PRODUCER_ID {
            let last = batch.last_offset();
            while let Some(Reverse((first, pid))) = self.aborted.peek().copied() {
                if first > last {
                    break;
                }
                self.aborted.pop();
                self.aborted_producer_ids.insert(pid);
            }
            if control_kind(batch) == Some(ControlRecordType::Abort) {
                self.aborted_producer_ids.remove(&batch.producer_id);
            } else if batch.is_transactional
                && self.aborted_producer_ids.contains(&batch.producer_id)
            {
                return BatchVerdict::Aborted;
            }
        }
        if batch.is_control {
            return BatchVerdict::Control {
                kind: control_kind(batch),
            };
        }
        let position = self.position;
        BatchVerdict::Deliver {
            first: batch.records.partition_point(|r| r.offset < position),
        }
    }
}

/// The control type of a control batch's first record (key only, as Java's
/// `ControlRecordType.parse`); `None` for a data batch or an unparsable key.
fn control_kind(batch: &RecordBatch) -> Option<ControlRecordType> {
    if !batch.is_control {
        return None;
    }
    let key = batch.records.first()?.key.as_ref()?;
    ControlRecord::decode_key(key).ok().map(|(_, kind)| kind)
}

/// What one partition's records blob yielded.
#[derive(Debug, Clone, Default)]
pub struct ProcessedRecords {
    /// The records to return to the application, in offset order.
    pub records: Vec<ConsumerRecord>,
    /// The next fetch position (the fetch offset if no complete batch came).
    pub next_offset: i64,
    /// Complete batches decoded.
    pub batches: usize,
    /// Transactional batches skipped as aborted.
    pub aborted_batches: usize,
    /// Control batches passed over.
    pub control_batches: usize,
    /// Bytes of an incomplete trailing batch (ignored, fetched again next time).
    pub truncated_bytes: usize,
    /// The partition leader epoch of the last complete batch (control and
    /// aborted ones included), if it has one: the epoch of the next
    /// position (Java's `lastEpoch`, sent as Fetch's `last_fetched_epoch`).
    pub last_epoch: Option<i32>,
}

/// Decodes a Fetch partition's `records` blob fetched at `fetch_offset` and
/// applies [`AbortedTransactionFilter`]. `aborted` are the response's
/// `(producer_id, first_offset)` pairs (ignored under read_uncommitted).
///
/// On a corrupt batch, returns the decode error and the offset of the
/// position reached before it.
pub fn process_partition_records(
    topic: &Arc<str>,
    partition: i32,
    isolation: IsolationLevel,
    fetch_offset: i64,
    aborted: impl IntoIterator<Item = (i64, i64)>,
    records: Bytes,
    opts: &DecodeOptions,
) -> Result<ProcessedRecords, (i64, DecodeError)> {
    let mut filter = AbortedTransactionFilter::new(isolation, fetch_offset, aborted);
    let mut out = ProcessedRecords {
        next_offset: fetch_offset,
        ..Default::default()
    };
    let mut it = RecordBatches::with_options(records, *opts);
    for batch in it.by_ref() {
        let batch = batch.map_err(|e| (filter.position(), e))?;
        out.batches += 1;
        if batch.partition_leader_epoch >= 0 {
            out.last_epoch = Some(batch.partition_leader_epoch);
        }
        match filter.next_batch(&batch) {
            BatchVerdict::Deliver { first } => {
                let log_append = batch.timestamp_type == TimestampType::LogAppend;
                let leader_epoch =
                    (batch.partition_leader_epoch >= 0).then_some(batch.partition_leader_epoch);
                for r in batch.records.into_iter().skip(first) {
                    out.records.push(to_consumer_record(
                        topic,
                        partition,
                        r,
                        &BatchInfo {
                            log_append_time: log_append.then_some(batch.max_timestamp),
                            timestamp_type: batch.timestamp_type,
                            producer_id: batch.producer_id,
                            producer_epoch: batch.producer_epoch,
                            is_transactional: batch.is_transactional,
                            leader_epoch,
                        },
                    ));
                }
            }
            BatchVerdict::Aborted => out.aborted_batches += 1,
            BatchVerdict::Control { .. } => out.control_batches += 1,
        }
    }
    out.truncated_bytes = it.truncated_bytes();
    out.next_offset = filter.position();
    Ok(out)
}

struct BatchInfo {
    log_append_time: Option<i64>,
    timestamp_type: TimestampType,
    producer_id: i64,
    producer_epoch: i16,
    is_transactional: bool,
    leader_epoch: Option<i32>,
}

fn to_consumer_record(
    topic: &Arc<str>,
    partition: i32,
    r: Record,
    b: &BatchInfo,
) -> ConsumerRecord {
    ConsumerRecord {
        topic: topic.clone(),
        partition,
        offset: r.offset,
        timestamp: b.log_append_time.unwrap_or(r.timestamp),
        timestamp_type: b.timestamp_type,
        key: r.key,
        value: r.value,
        headers: r.headers,
        producer_id: b.producer_id,
        producer_epoch: b.producer_epoch,
        is_transactional: b.is_transactional,
        leader_epoch: b.leader_epoch,
    }
}
