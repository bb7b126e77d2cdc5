//! The read_committed filter (`AbortedTransactionFilter` and
//! `process_partition_records`) on hand-built Fetch partition data.

use bytes::{Bytes, BytesMut};
use kafka_consumer::IsolationLevel;
use kafka_consumer::internals::{
    AbortedTransactionFilter, BatchVerdict, ProcessedRecords, process_partition_records,
};
use kafka_proto::record::{
    Compression, ControlRecord, ControlRecordType, DecodeOptions, Record, RecordBatch,
    RecordBatchBuilder, TimestampType,
};
use std::sync::Arc;

use IsolationLevel::{ReadCommitted, ReadUncommitted};

/// A data batch of `n` records at `base`; `pid` -1 means not idempotent.
fn data(base: i64, pid: i64, transactional: bool, n: usize) -> RecordBatch {
    let mut b = RecordBatchBuilder::new(Compression::None)
        .producer(
            pid,
            if pid < 0 { -1 } else { 0 },
            if pid < 0 { -1 } else { 0 },
        )
        .transactional(transactional)
        .base_offset(base);
    for i in 0..n {
        let off = base + i as i64;
        b.push(
            Record::new(
                1_000 + off,
                Some(Bytes::from(format!("k{off}"))),
                Some(Bytes::from(format!("p{pid}-{off}"))),
            )
            .with_header("pid", Some(Bytes::from(pid.to_string()))),
        );
    }
    b.build()
}

fn commit(offset: i64, pid: i64) -> RecordBatch {
    RecordBatch::control(offset, pid, 0, 5_000, ControlRecord::commit(3))
}

fn abort(offset: i64, pid: i64) -> RecordBatch {
    RecordBatch::control(offset, pid, 0, 5_000, ControlRecord::abort(3))
}

fn blob(batches: &[RecordBatch]) -> Bytes {
    let mut buf = BytesMut::new();
    for b in batches {
        b.encode(&mut buf).unwrap();
    }
    buf.freeze()
}

fn run(
    isolation: IsolationLevel,
    fetch_offset: i64,
    aborted: &[(i64, i64)],
    records: Bytes,
) -> ProcessedRecords {
    process_partition_records(
        &Arc::from("t"),
        0,
        isolation,
        fetch_offset,
        aborted.iter().copied(),
        records,
        &DecodeOptions::default(),
    )
    .unwrap()
}

fn offsets(p: &ProcessedRecords) -> Vec<i64> {
    p.records.iter().map(|r| r.offset).collect()
}

#[test]
fn committed_transaction_is_delivered() {
    let log = blob(&[data(0, 1, true, 2), data(2, 1, true, 1), commit(3, 1)]);
    let p = run(ReadCommitted, 0, &[], log);
    assert_eq!(offsets(&p), vec![0, 1, 2]);
    assert_eq!(p.next_offset, 4);
    assert_eq!((p.batches, p.aborted_batches, p.control_batches), (3, 0, 1));
    assert!(
        p.records
            .iter()
            .all(|r| r.is_transactional && r.producer_id == 1)
    );
    assert_eq!(p.records[1].value.as_deref(), Some(&b"p1-1"[..]));
    assert_eq!(p.records[1].key.as_deref(), Some(&b"k1"[..]));
    assert_eq!(p.records[1].headers[0].key, "pid");
    assert_eq!(p.records[1].timestamp, 1_001);
    assert_eq!(p.records[1].timestamp_type, TimestampType::Create);
}

#[test]
fn aborted_transaction_is_skipped_but_visible_uncommitted() {
    let batches = [data(0, 1, true, 2), data(2, 1, true, 1), abort(3, 1)];
    let p = run(ReadCommitted, 0, &[(1, 0)], blob(&batches));
    assert!(p.records.is_empty(), "{:?}", offsets(&p));
    assert_eq!(p.next_offset, 4);
    assert_eq!((p.aborted_batches, p.control_batches), (2, 1));

    // read_uncommitted ignores the aborted list; the marker is still hidden.
    let p = run(ReadUncommitted, 0, &[(1, 0)], blob(&batches));
    assert_eq!(offsets(&p), vec![0, 1, 2]);
    assert_eq!(p.next_offset, 4);
}

#[test]
fn interleaved_producers_one_aborts_one_commits() {
    let batches = [
        data(0, 1, true, 2),   // pid 1, aborted txn
        data(2, 2, true, 2),   // pid 2, committed txn
        data(4, 1, true, 1),   // pid 1
        data(5, 2, true, 2),   // pid 2
        abort(7, 1),           //
        data(8, -1, false, 1), // plain producer in between
        commit(9, 2),          //
        data(10, 1, true, 2),  // pid 1, a new (committed) txn
        commit(12, 1),
    ];
    let p = run(ReadCommitted, 0, &[(1, 0)], blob(&batches));
    assert_eq!(offsets(&p), vec![2, 3, 5, 6, 8, 10, 11]);
    assert_eq!(p.next_offset, 13);
    assert_eq!((p.aborted_batches, p.control_batches), (2, 3));

    let p = run(ReadUncommitted, 0, &[], blob(&batches));
    assert_eq!(offsets(&p), vec![0, 1, 2, 3, 4, 5, 6, 8, 10, 11]);
    assert_eq!(p.next_offset, 13);
}

#[test]
fn abort_marker_in_a_later_fetch() {
    // Fetch 1 (at 0) ends before pid 1's abort marker, mid-batch.
    let mut first = BytesMut::from(
        &blob(&[
            data(0, 1, true, 2),
            data(2, 7, false, 1),
            data(3, 1, true, 1),
        ])[..],
    );
    let next = blob(&[data(4, 1, true, 1)]);
    first.extend_from_slice(&next[..next.len() - 5]); // truncated last batch
    let p = run(ReadCommitted, 0, &[(1, 0)], first.freeze());
    assert_eq!(offsets(&p), vec![2]);
    assert_eq!(p.next_offset, 4, "the truncated batch is fetched again");
    assert!(p.truncated_bytes > 0);

    // Fetch 2 (at 4): the broker lists the same aborted transaction again
    // (its last offset, the marker, is past the fetch offset).
    let log = blob(&[
        data(4, 1, true, 1),
        abort(5, 1),
        data(6, 1, true, 2),
        commit(8, 1),
    ]);
    let p = run(ReadCommitted, 4, &[(1, 0)], log);
    assert_eq!(offsets(&p), vec![6, 7]);
    assert_eq!(p.next_offset, 9);
}

#[test]
fn aborted_entries_apply_only_from_their_first_offset() {
    // pid 1: committed txn at 0, aborted txn from 2, committed txn from 6.
    let log = blob(&[
        data(0, 1, true, 1),
        commit(1, 1),
        data(2, 1, true, 2),
        abort(4, 1),
        data(5, 2, true, 1),
        commit(6, 2),
        data(7, 1, true, 1),
        abort(8, 1),
        data(9, 1, true, 1),
        commit(10, 1),
    ]);
    let p = run(ReadCommitted, 0, &[(1, 7), (1, 2)], log);
    assert_eq!(offsets(&p), vec![0, 5, 9]);
    assert_eq!(p.next_offset, 11);
}

#[test]
fn non_transactional_batches_are_always_delivered() {
    // An idempotent (non-transactional) batch of a producer id listed as
    // aborted is still delivered: only transactional batches are skipped.
    let log = blob(&[
        data(0, -1, false, 2),
        data(2, 5, false, 2),
        data(4, 5, true, 1),
        abort(5, 5),
        data(6, 5, false, 1),
    ]);
    let p = run(ReadCommitted, 0, &[(5, 4)], log);
    assert_eq!(offsets(&p), vec![0, 1, 2, 3, 6]);
    assert!(p.records.iter().all(|r| !r.is_transactional));
    assert_eq!(p.next_offset, 7);
}

#[test]
fn control_batches_are_never_delivered_but_advance_the_position() {
    for isolation in [ReadCommitted, ReadUncommitted] {
        let p = run(isolation, 3, &[], blob(&[commit(3, 1)]));
        assert!(p.records.is_empty());
        assert_eq!(p.next_offset, 4);
        assert_eq!(p.control_batches, 1);

        let p = run(
            isolation,
            0,
            &[],
            blob(&[commit(0, 1), abort(1, 2), commit(2, 3)]),
        );
        assert!(p.records.is_empty());
        assert_eq!(p.next_offset, 3);
    }
    // The filter reports the marker type.
    let mut f = AbortedTransactionFilter::new(ReadCommitted, 0, []);
    assert_eq!(
        f.next_batch(&commit(0, 1)),
        BatchVerdict::Control {
            kind: Some(ControlRecordType::Commit)
        }
    );
    assert_eq!(f.position(), 1);
}

#[test]
fn records_before_the_fetch_offset_are_skipped() {
    // The broker returns the whole batch holding the fetch offset.
    let log = blob(&[data(10, 1, true, 5), commit(15, 1), data(16, -1, false, 2)]);
    let p = run(ReadCommitted, 12, &[], log.clone());
    assert_eq!(offsets(&p), vec![12, 13, 14, 16, 17]);
    assert_eq!(p.next_offset, 18);

    // Position past the whole first batch: nothing from it.
    let p = run(ReadUncommitted, 15, &[], log);
    assert_eq!(offsets(&p), vec![16, 17]);

    // And an aborted first batch that starts before the fetch offset.
    let log = blob(&[data(10, 1, true, 5), abort(15, 1)]);
    let p = run(ReadCommitted, 12, &[(1, 10)], log);
    assert!(p.records.is_empty());
    assert_eq!(p.next_offset, 16);
}

#[test]
fn compacted_batch_end_and_log_append_time() {
    // A batch whose last record was compacted away keeps its last offset
    // delta: the position continues after it.
    let mut b = data(0, -1, false, 2);
    b.last_offset_delta = 4;
    b.timestamp_type = TimestampType::LogAppend;
    b.max_timestamp = 77_000;
    let p = run(ReadCommitted, 0, &[], blob(&[b]));
    assert_eq!(offsets(&p), vec![0, 1]);
    assert_eq!(p.next_offset, 5);
    assert!(
        p.records
            .iter()
            .all(|r| r.timestamp == 77_000 && r.timestamp_type == TimestampType::LogAppend)
    );
}

#[test]
fn empty_and_corrupt_blobs() {
    let p = run(ReadCommitted, 42, &[], Bytes::new());
    assert_eq!((p.batches, p.next_offset), (0, 42));

    let mut bad = BytesMut::from(&blob(&[data(0, -1, false, 1), data(1, -1, false, 1)])[..]);
    let n = bad.len();
    bad[n - 1] ^= 0xff; // break the second batch's CRC
    let err = process_partition_records(
        &Arc::from("t"),
        0,
        ReadCommitted,
        0,
        [],
        bad.freeze(),
        &DecodeOptions::default(),
    )
    .unwrap_err();
    assert_eq!(err.0, 1, "position reached before the corrupt batch");
}

// The read_committed pitfalls other clients shipped, each as its own case.

/// An aborted-transactions list out of offset order (one broker sent it so;
/// a client that trusted the order delivered aborted records): every
/// aborted transaction is still dropped.
#[test]
fn an_unsorted_aborted_list_still_drops_every_aborted_transaction() {
    let log = blob(&[
        data(0, 1, true, 2),
        abort(2, 1),
        data(3, 2, true, 2),
        abort(5, 2),
        data(6, 3, true, 1),
        commit(7, 3),
    ]);
    let p = run(ReadCommitted, 0, &[(2, 3), (1, 0)], log);
    assert_eq!(offsets(&p), vec![6]);
    assert_eq!(p.next_offset, 8);
}

/// A control batch with two abort markers (one client panicked on it): no
/// record of it is delivered, nothing fails, the position moves past both.
#[test]
fn a_control_batch_with_two_abort_markers() {
    let mut markers = abort(2, 1);
    let mut second = markers.records[0].clone();
    second.offset = 3;
    markers.records.push(second);
    markers.last_offset_delta = 1;
    let log = blob(&[data(0, 1, true, 2), markers, data(4, -1, false, 1)]);
    let p = run(ReadCommitted, 0, &[(1, 0)], log);
    assert_eq!(offsets(&p), vec![4]);
    assert_eq!(p.next_offset, 5);
}

/// Aborted batches that are compressed are dropped like uncompressed ones
/// (one client delivered them), and delivered under read_uncommitted.
#[test]
fn compressed_aborted_batches_are_dropped() {
    let mut b = RecordBatchBuilder::new(Compression::Gzip)
        .producer(1, 0, 0)
        .transactional(true)
        .base_offset(0);
    for i in 0..3 {
        b.push(Record::new(
            1_000 + i,
            None,
            Some(Bytes::from(format!("v{i}"))),
        ));
    }
    let log = blob(&[b.build(), abort(3, 1), data(4, -1, false, 1)]);
    let committed = run(ReadCommitted, 0, &[(1, 0)], log.clone());
    assert_eq!(offsets(&committed), vec![4]);
    assert_eq!(committed.aborted_batches, 1);
    let uncommitted = run(ReadUncommitted, 0, &[(1, 0)], log);
    assert_eq!(offsets(&uncommitted), vec![0, 1, 2, 4]);
}

/// An answer made only of aborted records and their marker (one client
/// raised a size error on it): nothing delivered, no error, and the
/// position is past the marker, so the next fetch goes on.
#[test]
fn an_answer_of_only_aborted_records_moves_past_them() {
    let log = blob(&[data(10, 7, true, 3), data(13, 7, true, 2), abort(15, 7)]);
    let p = run(ReadCommitted, 10, &[(7, 10)], log);
    assert!(p.records.is_empty());
    assert_eq!(p.next_offset, 16);
    assert_eq!((p.aborted_batches, p.control_batches), (2, 1));
}

/// Compaction removed an aborted transaction's first batches (its listed
/// first offset is gone from the log): its remaining batches are still
/// dropped, and the gaps compaction left do not stop the position.
#[test]
fn an_aborted_transaction_whose_first_offset_was_compacted_away() {
    let log = blob(&[data(7, 1, true, 1), abort(9, 1), data(12, -1, false, 1)]);
    let p = run(ReadCommitted, 5, &[(1, 3)], log);
    assert_eq!(offsets(&p), vec![12]);
    assert_eq!(p.next_offset, 13);
}

/// The position after a transaction's final commit marker is the offset
/// after the marker (not the marker's: a consumer stuck one short would
/// show a lag of 1 forever).
#[test]
fn the_position_after_a_final_commit_marker_is_past_it() {
    let log = blob(&[data(0, 4, true, 2), commit(2, 4)]);
    for isolation in [ReadCommitted, ReadUncommitted] {
        let p = run(isolation, 0, &[], log.clone());
        assert_eq!((offsets(&p), p.next_offset), (vec![0, 1], 3));
    }
}
