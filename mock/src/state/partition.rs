//! One partition: its log of record batches kept as the producer wrote them
//! (only the base offset and the partition leader epoch are rewritten,
//! neither covered by the CRC), its offsets, open and aborted
//! transactions, and the producers' state.
//!
//! The mock has one copy of each partition: every append is immediately
//! "replicated", so the high watermark is the log end offset and `acks`
//! 1 and all behave alike. The last stable offset is the first offset of
//! the oldest open transaction, or the high watermark.

use super::producer_state::{self, Check, IncomingBatch, ProducerEntry};
use bytes::{Bytes, BytesMut};
use kafka_proto::ErrorCode;
use kafka_proto::record::{ControlRecord, RecordBatch, RecordBatchView};
use std::collections::{BTreeMap, HashMap};

/// A batch in the log.
#[derive(Debug, Clone)]
pub(crate) struct StoredBatch {
    /// Offset of its first record.
    pub base_offset: i64,
    /// Offset of its last record (the next batch starts after it).
    pub last_offset: i64,
    /// Its largest record timestamp (ListOffsets by time and `max_timestamp`).
    pub max_timestamp: i64,
    /// A transaction marker, not data.
    pub is_control: bool,
    /// The batch as written, base offset and leader epoch patched.
    pub bytes: Bytes,
}

/// An aborted transaction's span on this partition (for read_committed
/// fetches: the consumer drops the producer's records from `first_offset`
/// until the abort marker).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AbortedTxn {
    /// The producer whose records read_committed drops.
    pub producer_id: i64,
    /// Offset of its first record in this partition.
    pub first_offset: i64,
    /// Offset of its abort marker.
    pub last_offset: i64,
}

/// Where a batch went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Appended {
    /// Written at this base offset.
    At(i64),
    /// A duplicate of the batch written at this base offset.
    Duplicate(i64),
}

/// A refused append.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refused {
    /// The error the Produce response carries.
    pub code: ErrorCode,
    /// The error message beside it.
    pub message: String,
}

/// What a fetch reads.
#[derive(Debug, Clone, Default)]
pub(crate) struct Read {
    /// The batches read, concatenated as the Fetch response carries them.
    pub records: Bytes,
    /// The aborted transactions overlapping them (read_committed only).
    pub aborted: Vec<AbortedTxn>,
}

/// One partition's log and state.
#[derive(Debug, Clone)]
pub(crate) struct PartitionLog {
    /// The log, oldest first.
    batches: Vec<StoredBatch>,
    /// First offset kept (0: nothing is deleted).
    log_start_offset: i64,
    /// Offset of the next record written: the log end and the high watermark.
    next_offset: i64,
    /// Idempotence and transaction state per producer id.
    producers: HashMap<i64, ProducerEntry>,
    /// Open transactions: first offset -> producer id.
    open: BTreeMap<i64, i64>,
    /// Every aborted transaction on this partition, in marker order.
    aborted: Vec<AbortedTxn>,
    /// The broker that leads the partition.
    pub leader: i32,
    /// Bumped at every leader change.
    pub leader_epoch: i32,
    /// The leader epoch cache (Kafka's `LeaderEpochFileCache`): each
    /// epoch with the offset its leader started writing at, oldest first.
    epochs: Vec<(i32, i64)>,
}

impl PartitionLog {
    pub(crate) fn new(leader: i32) -> Self {
        Self {
            batches: Vec::new(),
            log_start_offset: 0,
            next_offset: 0,
            producers: HashMap::new(),
            open: BTreeMap::new(),
            aborted: Vec::new(),
            leader,
            leader_epoch: 0,
            epochs: vec![(0, 0)],
        }
    }

    /// A new leader: the epoch is bumped and starts at the log end, as a
    /// Kafka leader assigns its epoch's start offset on election.
    pub(crate) fn elect(&mut self, leader: i32) {
        self.leader = leader;
        self.leader_epoch += 1;
        self.epochs.push((self.leader_epoch, self.next_offset));
    }

    /// OffsetForLeaderEpoch (Kafka's `LeaderEpochFileCache.endOffsetFor`):
    /// the largest epoch at or below `epoch` with the start offset of the
    /// next epoch (the log end for the current one); `(-1, -1)` for an
    /// epoch above every known one or for -1. An epoch below every known
    /// one answers itself with the first known epoch's start.
    pub(crate) fn end_offset_for_epoch(&self, epoch: i32) -> (i32, i64) {
        if epoch < 0 {
            return (-1, -1);
        }
        if self.epochs.last().is_some_and(|(e, _)| *e == epoch) {
            return (epoch, self.next_offset);
        }
        let Some(higher) = self.epochs.iter().find(|(e, _)| *e > epoch) else {
            return (-1, -1);
        };
        match self.epochs.iter().rev().find(|(e, _)| *e <= epoch) {
            Some((floor, _)) => (*floor, higher.1),
            None => (epoch, higher.1),
        }
    }

    /// DeleteRecords: moves the log start up to `offset` (never down) and
    /// drops the batches wholly below it, the aborted transactions ended
    /// below it and the epochs that started before it (the last of them
    /// now starts at the new log start). Returns the new log start.
    pub(crate) fn delete_records_before(&mut self, offset: i64) -> i64 {
        if offset <= self.log_start_offset {
            return self.log_start_offset;
        }
        self.log_start_offset = offset;
        self.batches.retain(|b| b.last_offset >= offset);
        self.aborted.retain(|a| a.last_offset >= offset);
        let kept_from = self
            .epochs
            .iter()
            .rposition(|(_, start)| *start <= offset)
            .unwrap_or(0);
        self.epochs.drain(..kept_from);
        if let Some(first) = self.epochs.first_mut()
            && first.1 < offset
        {
            first.1 = offset;
        }
        offset
    }

    /// The batches in the log, oldest first.
    pub(crate) fn batches(&self) -> &[StoredBatch] {
        &self.batches
    }

    pub(crate) fn log_start_offset(&self) -> i64 {
        self.log_start_offset
    }

    /// The high watermark: the log end offset (one copy).
    pub(crate) fn high_watermark(&self) -> i64 {
        self.next_offset
    }

    /// The first offset of the oldest open transaction, or the high watermark.
    pub(crate) fn last_stable_offset(&self) -> i64 {
        self.open.keys().next().copied().unwrap_or(self.next_offset)
    }

    /// One line per batch (offsets, producer, epoch, sequence, kind), then
    /// the open and aborted transactions and the producers' state: what a
    /// failing test prints to show what the broker holds.
    pub(crate) fn describe(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        for b in &self.batches {
            let (pid, epoch, seq, txn) = match RecordBatchView::decode(&b.bytes) {
                Ok(v) => (
                    v.producer_id,
                    v.producer_epoch,
                    v.base_sequence,
                    v.is_transactional,
                ),
                Err(_) => (-1, -1, -1, false),
            };
            let kind = if b.is_control {
                match RecordBatch::decode(&b.bytes)
                    .ok()
                    .and_then(|c| c.control_record())
                    .and_then(Result::ok)
                {
                    Some(c) => format!("{:?}", c.kind),
                    None => "control?".into(),
                }
            } else if txn {
                "txn data".into()
            } else {
                "data".into()
            };
            let _ = writeln!(
                out,
                "  {}..={} pid={pid} epoch={epoch} seq={seq} {kind}",
                b.base_offset, b.last_offset
            );
        }
        let _ = writeln!(
            out,
            "  hw={} lso={} open={:?} aborted={:?}",
            self.high_watermark(),
            self.last_stable_offset(),
            self.open,
            self.aborted
        );
        let mut producers: Vec<_> = self.producers.iter().collect();
        producers.sort_by_key(|(p, _)| **p);
        for (pid, e) in producers {
            let _ = writeln!(
                out,
                "  producer {pid}: epoch={} last_seq={} txn_first_offset={:?}",
                e.epoch,
                e.last_seq(),
                e.txn_first_offset
            );
        }
        out
    }

    /// Every producer with state here, by producer id.
    pub(crate) fn producers(&self) -> impl Iterator<Item = (i64, &ProducerEntry)> + '_ {
        self.producers.iter().map(|(p, e)| (*p, e))
    }

    /// Appends one data batch (`raw`, already CRC-checked as `view`).
    pub(crate) fn append(
        &mut self,
        raw: &[u8],
        view: &RecordBatchView<'_>,
        tv2: bool,
    ) -> Result<Appended, Refused> {
        let count = view.len() as i64;
        if count == 0 {
            return Err(Refused {
                code: ErrorCode::InvalidRecord,
                message: "a batch without records".into(),
            });
        }
        let idempotent = view.producer_id >= 0 && view.base_sequence >= 0;
        let incoming = IncomingBatch {
            epoch: view.producer_epoch,
            first_seq: view.base_sequence,
            last_seq: kafka_proto::record::increment_sequence(
                view.base_sequence,
                view.last_offset_delta,
            ),
            transactional: view.is_transactional,
            tv2,
        };
        if idempotent {
            match producer_state::check(
                view.producer_id,
                self.producers.get(&view.producer_id),
                &incoming,
            ) {
                Check::Append => {}
                Check::Duplicate { first_offset } => return Ok(Appended::Duplicate(first_offset)),
                Check::Refuse(code, message) => return Err(Refused { code, message }),
            }
        } else if view.is_transactional {
            return Err(Refused {
                code: ErrorCode::InvalidRecord,
                message: "a transactional batch without a producer id and sequence".into(),
            });
        }
        let base = self.next_offset;
        let last = base + i64::from(view.last_offset_delta);
        let mut bytes = BytesMut::from(raw);
        bytes[0..8].copy_from_slice(&base.to_be_bytes());
        bytes[12..16].copy_from_slice(&self.leader_epoch.to_be_bytes());
        self.batches.push(StoredBatch {
            base_offset: base,
            last_offset: last,
            max_timestamp: view.max_timestamp,
            is_control: false,
            bytes: bytes.freeze(),
        });
        self.next_offset = last + 1;
        if idempotent {
            let entry = self.producers.entry(view.producer_id).or_default();
            entry.record(&incoming, base, last);
            if view.is_transactional && entry.txn_first_offset.is_none() {
                entry.txn_first_offset = Some(base);
                self.open.insert(base, view.producer_id);
            }
        }
        Ok(Appended::At(base))
    }

    /// Writes a transaction marker for producer `pid` at `epoch`, ending
    /// its open transaction here (if any). Under transaction version 2 the
    /// marker's epoch must be above the producer's (a repeat of the last
    /// marker, with nothing open, is written again); under version 1 not
    /// below it.
    pub(crate) fn write_marker(
        &mut self,
        pid: i64,
        epoch: i16,
        commit: bool,
        coordinator_epoch: i32,
        tv2: bool,
        now_ms: i64,
    ) -> Result<i64, Refused> {
        let entry = self.producers.entry(pid).or_insert_with(|| ProducerEntry {
            epoch: -1,
            ..Default::default()
        });
        let stale = if tv2 {
            epoch <= entry.epoch && !(epoch == entry.epoch && entry.txn_first_offset.is_none())
        } else {
            epoch < entry.epoch
        };
        if stale {
            return Err(Refused {
                code: ErrorCode::InvalidProducerEpoch,
                message: format!(
                    "marker epoch {epoch} of producer {pid} is behind the partition's {}",
                    entry.epoch
                ),
            });
        }
        if entry.coordinator_epoch > coordinator_epoch {
            return Err(Refused {
                code: ErrorCode::TransactionCoordinatorFenced,
                message: format!(
                    "coordinator epoch {coordinator_epoch} is older than {}",
                    entry.coordinator_epoch
                ),
            });
        }
        let offset = self.next_offset;
        let marker = if commit {
            ControlRecord::commit(coordinator_epoch)
        } else {
            ControlRecord::abort(coordinator_epoch)
        };
        let mut batch = RecordBatch::control(offset, pid, epoch, now_ms, marker);
        batch.partition_leader_epoch = self.leader_epoch;
        let bytes = Bytes::from(
            batch
                .encode_to_vec()
                .expect("a control batch always encodes"),
        );
        self.batches.push(StoredBatch {
            base_offset: offset,
            last_offset: offset,
            max_timestamp: now_ms,
            is_control: true,
            bytes,
        });
        self.next_offset = offset + 1;
        if let Some(first) = entry.txn_first_offset.take() {
            self.open.remove(&first);
            if !commit {
                self.aborted.push(AbortedTxn {
                    producer_id: pid,
                    first_offset: first,
                    last_offset: offset,
                });
            }
        }
        entry.set_epoch(epoch);
        entry.coordinator_epoch = coordinator_epoch;
        Ok(offset)
    }

    /// The batches from `offset` on, up to `max_bytes` (the first batch is
    /// returned whole even when larger, as Kafka does), below the high
    /// watermark, or below the last stable offset for read_committed, with
    /// the aborted transactions that overlap them.
    pub(crate) fn read(&self, offset: i64, max_bytes: usize, read_committed: bool) -> Read {
        let upper = if read_committed {
            self.last_stable_offset()
        } else {
            self.high_watermark()
        };
        let start = self.batches.partition_point(|b| b.last_offset < offset);
        let mut out = BytesMut::new();
        let mut last_read = offset;
        for b in &self.batches[start..] {
            if b.base_offset >= upper {
                break;
            }
            if !out.is_empty() && out.len() + b.bytes.len() > max_bytes {
                break;
            }
            out.extend_from_slice(&b.bytes);
            last_read = b.last_offset;
        }
        let aborted = if read_committed && !out.is_empty() {
            self.aborted
                .iter()
                .filter(|a| a.last_offset >= offset && a.first_offset <= last_read)
                .copied()
                .collect()
        } else {
            Vec::new()
        };
        Read {
            records: out.freeze(),
            aborted,
        }
    }

    /// The offset of the first record with a timestamp at or after `ts`
    /// (with its timestamp), or `None` when there is none.
    pub(crate) fn offset_for_timestamp(&self, ts: i64, upper: i64) -> Option<(i64, i64)> {
        for b in &self.batches {
            if b.base_offset >= upper {
                break;
            }
            if b.is_control || b.max_timestamp < ts {
                continue;
            }
            let view = RecordBatchView::decode(&b.bytes).ok()?;
            for r in view.records() {
                let r = r.ok()?;
                if r.timestamp >= ts && r.offset < upper {
                    return Some((r.offset, r.timestamp));
                }
            }
        }
        None
    }

    /// The offset and timestamp of the record with the largest timestamp
    /// (the first of them), below `upper`.
    pub(crate) fn max_timestamp(&self, upper: i64) -> Option<(i64, i64)> {
        let mut best: Option<(i64, i64)> = None;
        for b in &self.batches {
            if b.base_offset >= upper {
                break;
            }
            if b.is_control || best.is_some_and(|(_, t)| b.max_timestamp <= t) {
                continue;
            }
            let view = RecordBatchView::decode(&b.bytes).ok()?;
            for r in view.records() {
                let r = r.ok()?;
                if r.offset < upper && best.is_none_or(|(_, t)| r.timestamp > t) {
                    best = Some((r.offset, r.timestamp));
                }
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_proto::record::{Compression, Record, RecordBatchBuilder};

    fn batch(pid: i64, epoch: i16, seq: i32, n: usize, txn: bool) -> Vec<u8> {
        let mut b = RecordBatchBuilder::new(Compression::None)
            .producer(pid, epoch, seq)
            .transactional(txn);
        for i in 0..n {
            b.push(Record::new(
                1_000 + i as i64,
                None,
                Some(Bytes::from(format!("v{i}"))),
            ));
        }
        let mut out = BytesMut::new();
        b.encode(&mut out).unwrap();
        out.to_vec()
    }

    fn append(log: &mut PartitionLog, raw: &[u8], tv2: bool) -> Result<Appended, Refused> {
        let view = RecordBatchView::decode(raw).unwrap();
        log.append(raw, &view, tv2)
    }

    #[test]
    fn offsets_are_assigned_and_patched_into_the_batch() {
        let mut log = PartitionLog::new(1);
        assert_eq!(
            append(&mut log, &batch(7, 0, 0, 3, false), false),
            Ok(Appended::At(0))
        );
        assert_eq!(
            append(&mut log, &batch(7, 0, 3, 2, false), false),
            Ok(Appended::At(3))
        );
        let read = log.read(4, 1 << 20, false);
        let view = RecordBatchView::decode(&read.records).unwrap();
        assert_eq!(view.base_offset, 3, "the batch holding offset 4");
        assert_eq!(log.high_watermark(), 5);
    }

    #[test]
    fn a_retried_batch_is_a_duplicate_at_its_first_offset() {
        let mut log = PartitionLog::new(1);
        let b = batch(7, 0, 0, 3, false);
        append(&mut log, &b, false).unwrap();
        assert_eq!(append(&mut log, &b, false), Ok(Appended::Duplicate(0)));
        assert_eq!(log.high_watermark(), 3);
    }

    #[test]
    fn an_open_transaction_holds_the_last_stable_offset_until_its_marker() {
        let mut log = PartitionLog::new(1);
        append(&mut log, &batch(1, 0, 0, 2, false), false).unwrap();
        append(&mut log, &batch(9, 0, 0, 2, true), false).unwrap();
        assert_eq!(log.last_stable_offset(), 2);
        assert!(log.read(2, 1 << 20, true).records.is_empty());
        let marker = log.write_marker(9, 0, false, 0, false, 5).unwrap();
        assert_eq!((marker, log.last_stable_offset()), (4, 5));
        let read = log.read(0, 1 << 20, true);
        assert_eq!(
            read.aborted,
            vec![AbortedTxn {
                producer_id: 9,
                first_offset: 2,
                last_offset: 4
            }]
        );
    }

    #[test]
    fn a_tv2_marker_must_raise_the_epoch() {
        let mut log = PartitionLog::new(1);
        append(&mut log, &batch(9, 3, 0, 1, true), true).unwrap();
        let err = log.write_marker(9, 3, true, 0, true, 0).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidProducerEpoch);
        log.write_marker(9, 4, true, 0, true, 0).unwrap();
        // The same marker again, with nothing open: written again (a retry).
        log.write_marker(9, 4, true, 0, true, 0).unwrap();
        // The next transaction's first batch starts at sequence 0.
        assert!(append(&mut log, &batch(9, 4, 1, 1, true), true).is_err());
        assert!(append(&mut log, &batch(9, 4, 0, 1, true), true).is_ok());
    }

    #[test]
    fn end_offsets_per_leader_epoch() {
        let mut log = PartitionLog::new(1);
        append(&mut log, &batch(1, 0, 0, 3, false), false).unwrap();
        log.elect(2);
        log.elect(1);
        append(&mut log, &batch(1, 0, 3, 2, false), false).unwrap();
        assert_eq!(log.end_offset_for_epoch(0), (0, 3));
        assert_eq!(log.end_offset_for_epoch(1), (1, 3));
        assert_eq!(log.end_offset_for_epoch(2), (2, 5));
        assert_eq!(log.end_offset_for_epoch(3), (-1, -1));
        assert_eq!(log.delete_records_before(4), 4);
        assert_eq!(
            log.end_offset_for_epoch(0),
            (0, 4),
            "below every epoch kept"
        );
        assert_eq!(log.log_start_offset(), 4);
        assert_eq!(
            log.delete_records_before(1),
            4,
            "the log start never moves back"
        );
    }

    #[test]
    fn offsets_by_timestamp() {
        let mut log = PartitionLog::new(1);
        append(&mut log, &batch(1, 0, 0, 3, false), false).unwrap();
        assert_eq!(log.offset_for_timestamp(1_001, 3), Some((1, 1_001)));
        assert_eq!(log.offset_for_timestamp(5_000, 3), None);
        assert_eq!(log.max_timestamp(3), Some((2, 1_002)));
    }
}
