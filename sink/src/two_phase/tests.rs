//! The sink's lifecycle as its accessors see it.

use super::*;
use crate::codec::{U64Codec, UnitCodec};
use crate::state::StateSerializer;
use crate::two_phase::memory::{InMemoryTable, TxnStatus};

type Sink = TwoPhaseCommitSink<InMemoryTable<&'static str>>;

async fn running() -> Sink {
    let mut sink = TwoPhaseCommitSink::new(InMemoryTable::new());
    sink.initialize_state(None).await.unwrap();
    sink
}

/// Invariant: the user context exists only once the sink is initialized.
#[tokio::test]
async fn user_context_is_set_by_initialization() {
    let mut sink: Sink = TwoPhaseCommitSink::new(InMemoryTable::new());
    assert_eq!(sink.user_context(), None);
    sink.initialize_state(None).await.unwrap();
    assert_eq!(sink.user_context(), Some(&()));
}

/// Invariant: a snapshot pre-commits the open transaction and opens the next.
#[tokio::test]
async fn snapshot_opens_the_next_transaction() {
    let mut sink = running().await;
    assert_eq!(sink.current_transaction().unwrap().handle, 1);
    sink.snapshot_state(1).await.unwrap();
    assert_eq!(sink.current_transaction().unwrap().handle, 2);
}

/// Invariant: pending checkpoints are ascending and a notification removes
/// those it commits.
#[tokio::test]
async fn pending_checkpoints_ascend_and_shrink_on_notification() {
    let mut sink = running().await;
    sink.snapshot_state(1).await.unwrap();
    sink.snapshot_state(2).await.unwrap();
    assert_eq!(sink.pending_checkpoints(), [1, 2]);
    sink.notify_checkpoint_complete(1).await.unwrap();
    assert_eq!(sink.pending_checkpoints(), [2]);
}

/// Invariant: initialization begins one transaction; a completed checkpoint
/// counts one commit and one more begin.
#[tokio::test]
async fn metrics_count_begins_and_commits() {
    let mut sink = running().await;
    assert_eq!(sink.metrics().begun, 1);
    sink.snapshot_state(1).await.unwrap();
    sink.notify_checkpoint_complete(1).await.unwrap();
    let m = sink.metrics();
    assert_eq!((m.begun, m.committed, m.commit_failures), (2, 1, 0));
}

/// Invariant: the sink runs from initialization until close.
#[tokio::test]
async fn is_running_from_initialization_until_close() {
    let mut sink: Sink = TwoPhaseCommitSink::new(InMemoryTable::new());
    assert!(!sink.is_running());
    sink.initialize_state(None).await.unwrap();
    assert!(sink.is_running());
    sink.close().await.unwrap();
    assert!(!sink.is_running());
}

/// Invariant: the borrowed state holds the pending transaction and the
/// newly opened one.
#[tokio::test]
async fn state_after_a_snapshot_has_one_pending_and_the_next_open() {
    let mut sink = running().await;
    sink.snapshot_state(1).await.unwrap();
    let state = sink.state();
    assert_eq!(state.pending.len(), 1);
    assert_eq!(state.current.map(|h| *h.handle), Some(2));
}

/// Invariant: the handler reached through the sink is the one it runs.
#[tokio::test]
async fn handler_mut_reconfigures_the_running_handler() {
    let mut sink: Sink = TwoPhaseCommitSink::new(InMemoryTable::new());
    assert!(sink.handler().committed().is_empty());
    sink.handler_mut().set_failing_commits(true);
    assert!(sink.handler().is_failing_commits());
    assert!(sink.into_handler().unfinished().is_empty());
}

/// Invariant: a restore commits the restored pre-committed transaction
/// through `recover_and_commit`.
#[tokio::test]
async fn restore_commits_the_pending_transaction() {
    let serializer = StateSerializer::new(U64Codec, UnitCodec);
    let mut sink = running().await;
    sink.invoke("a", &RecordContext::default()).await.unwrap();
    let bytes = serializer.encode(sink.snapshot_state(1).await.unwrap());
    let mut restored = TwoPhaseCommitSink::new(sink.into_handler());
    restored
        .initialize_state(Some(vec![serializer.decode(&bytes).unwrap()]))
        .await
        .unwrap();
    assert_eq!(restored.handler().committed(), ["a"]);
    assert_eq!(restored.metrics().recovered_commits, 1);
}

/// Invariant: a restore aborts the transaction that was open at the restored
/// checkpoint through `recover_and_abort`.
#[tokio::test]
async fn restore_aborts_the_transaction_open_at_the_checkpoint() {
    let serializer = StateSerializer::new(U64Codec, UnitCodec);
    let mut sink = running().await;
    let bytes = serializer.encode(sink.snapshot_state(1).await.unwrap()); // 2 is open
    let mut restored = TwoPhaseCommitSink::new(sink.into_handler());
    restored
        .initialize_state(Some(vec![serializer.decode(&bytes).unwrap()]))
        .await
        .unwrap();
    assert_eq!(restored.metrics().recovered_aborts, 1);
    assert_eq!(restored.handler().status(2), Some(TxnStatus::Aborted));
}

/// Invariant: every transaction begun gets its own handle.
#[tokio::test]
async fn begin_transaction_gives_distinct_handles() {
    let mut table = InMemoryTable::<&str>::new();
    let first = table.begin_transaction(&mut ()).await.unwrap();
    let second = table.begin_transaction(&mut ()).await.unwrap();
    assert_ne!(first, second);
}

/// A table with one open transaction holding the row `"row-1"`.
async fn table_with_open_row() -> (InMemoryTable<&'static str>, u64) {
    let mut table = InMemoryTable::new();
    let mut txn = table.begin_transaction(&mut ()).await.unwrap();
    table
        .invoke(&mut txn, "row-1", &RecordContext::default())
        .await
        .unwrap();
    (table, txn)
}

/// Invariant: rows written to an open transaction are not committed.
#[tokio::test]
async fn invoked_rows_stay_in_the_open_transaction() {
    let (table, txn) = table_with_open_row().await;
    assert_eq!(table.rows(txn), Some(&["row-1"][..]));
    assert!(table.committed().is_empty());
}

/// Invariant: an aborted transaction leaves nothing unfinished or committed.
#[tokio::test]
async fn abort_discards_the_open_transaction() {
    let (mut table, txn) = table_with_open_row().await;
    table.abort(txn, &mut ()).await.unwrap();
    assert!(table.unfinished().is_empty() && table.committed().is_empty());
}

/// Invariant: `with_timestamp` sets the timestamp and no watermark.
#[test]
fn record_context_with_timestamp_has_no_watermark() {
    let ctx = RecordContext::with_timestamp(1_700_000_000_000);
    assert_eq!(
        (ctx.timestamp, ctx.current_watermark),
        (Some(1_700_000_000_000), None)
    );
    assert_eq!(RecordContext::default().timestamp, None);
}

/// Invariant: a transaction's start time comes from the sink's clock.
#[tokio::test]
async fn with_clock_sets_transaction_start_times() {
    let clock = crate::clock::ManualClock::new(1_700_000_000_000);
    let mut sink: Sink = TwoPhaseCommitSink::new(InMemoryTable::new()).with_clock(Arc::new(clock));
    sink.initialize_state(None).await.unwrap();
    assert_eq!(
        sink.current_transaction().unwrap().start_time_ms,
        1_700_000_000_000
    );
}

/// Invariant: an aborted checkpoint's transaction stays pending and is
/// committed with the next completed checkpoint.
#[tokio::test]
async fn aborted_checkpoint_is_committed_with_the_next() {
    let mut sink = running().await;
    sink.invoke("a", &RecordContext::default()).await.unwrap();
    sink.snapshot_state(1).await.unwrap();
    sink.notify_checkpoint_aborted(1);
    sink.snapshot_state(2).await.unwrap();
    assert_eq!(sink.notify_checkpoint_complete(2).await.unwrap(), 2);
    assert_eq!(sink.handler().committed(), ["a"]);
}

/// Invariant: close aborts the open transaction and refuses later writes.
#[tokio::test]
async fn close_aborts_the_open_transaction_and_refuses_writes() {
    let mut sink = running().await;
    sink.invoke("a", &RecordContext::default()).await.unwrap();
    sink.close().await.unwrap();
    assert!(sink.handler().unfinished().is_empty());
    assert!(sink.handler().committed().is_empty());
    assert!(sink.invoke("b", &RecordContext::default()).await.is_err());
}
