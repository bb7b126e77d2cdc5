//! Flink's `TwoPhaseCommitSinkFunctionTest` scenarios (and the
//! recovery scenarios of `FlinkKafkaProducerITCase` that do not need Kafka),
//! against the scripted in-memory store of `support`.

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use kafka_sink::SinkState;
use kafka_sink::{ManualClock, Operation, RecordContext, TwoPhaseCommitError, TwoPhaseCommitSink};
use support::{MemoryStore, Owned, Status, StoreError, StoreSink, serializer};

type Sink = TwoPhaseCommitSink<StoreSink>;
type State = SinkState<u64, Owned>;

fn sink(store: &MemoryStore, clock: &ManualClock) -> Sink {
    TwoPhaseCommitSink::new(StoreSink::new(store)).with_clock(Arc::new(clock.clone()))
}

async fn fresh(store: &MemoryStore, clock: &ManualClock) -> Sink {
    let mut s = sink(store, clock);
    s.initialize_state(None).await.unwrap();
    s
}

/// A store, its clock at 0 and a fresh sink writing to it.
async fn started() -> (MemoryStore, ManualClock, Sink) {
    let (store, clock) = (MemoryStore::new(), ManualClock::new(0));
    let s = fresh(&store, &clock).await;
    (store, clock, s)
}

async fn write(s: &mut Sink, v: &str) {
    s.invoke(v.to_string(), &RecordContext::default())
        .await
        .unwrap();
}

/// Snapshot and go through the byte encoding, as a durable checkpoint would.
async fn snapshot(s: &mut Sink, id: u64) -> Vec<u8> {
    let state = s.snapshot_state(id).await.unwrap();
    serializer().encode(state)
}

fn decode(bytes: &[u8]) -> State {
    serializer().decode(bytes).unwrap()
}

async fn restore(store: &MemoryStore, clock: &ManualClock, bytes: &[u8]) -> Sink {
    let mut s = sink(store, clock);
    s.initialize_state(Some(vec![decode(bytes)])).await.unwrap();
    s
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[tokio::test]
async fn notify_of_completed_checkpoint_commits_partially() {
    let (store, _, mut s) = started().await;
    write(&mut s, "42").await;
    snapshot(&mut s, 0).await;
    write(&mut s, "43").await;
    snapshot(&mut s, 1).await;
    write(&mut s, "44").await;
    snapshot(&mut s, 2).await;
    write(&mut s, "45").await;
    assert_eq!(s.pending_checkpoints(), [0, 1, 2]);

    assert_eq!(s.notify_checkpoint_complete(1).await.unwrap(), 2);
    assert_eq!(store.committed(), strings(&["42", "43"]));
    assert_eq!(s.pending_checkpoints(), [2]);

    assert_eq!(s.notify_checkpoint_complete(2).await.unwrap(), 1);
    assert_eq!(store.committed(), strings(&["42", "43", "44"]));
    s.close().await.unwrap();
    // 45 was in the open transaction: aborted by close, never visible.
    assert_eq!(store.committed(), strings(&["42", "43", "44"]));
    assert!(store.unfinished().is_empty());
}

#[tokio::test]
async fn subsumed_and_out_of_order_notifications() {
    let (store, _, mut s) = started().await;
    for (i, v) in ["42", "43", "44"].iter().enumerate() {
        write(&mut s, v).await;
        snapshot(&mut s, i as u64).await;
    }
    write(&mut s, "45").await;
    assert_eq!(s.notify_checkpoint_complete(2).await.unwrap(), 3);
    // The late notification of checkpoint 1 (and a repeat of 2) are harmless.
    assert_eq!(s.notify_checkpoint_complete(1).await.unwrap(), 0);
    assert_eq!(s.notify_checkpoint_complete(2).await.unwrap(), 0);
    assert_eq!(store.committed(), strings(&["42", "43", "44"]));
    assert_eq!(s.metrics().committed, 3);
}

#[tokio::test]
async fn notification_between_and_unknown_ids() {
    let (store, _, mut s) = started().await;
    write(&mut s, "a").await;
    snapshot(&mut s, 5).await;
    write(&mut s, "b").await;
    snapshot(&mut s, 7).await;
    // 6 was never snapshotted by this sink (declined elsewhere): commit <= 6.
    assert_eq!(s.notify_checkpoint_complete(6).await.unwrap(), 1);
    assert_eq!(s.pending_checkpoints(), [7]);
    // An id below everything pending commits nothing new.
    assert_eq!(s.notify_checkpoint_complete(3).await.unwrap(), 0);
    assert_eq!(s.notify_checkpoint_complete(u64::MAX).await.unwrap(), 1);
    assert_eq!(store.committed(), strings(&["a", "b"]));
}

#[tokio::test]
async fn fail_before_notify_then_restore_commits() {
    // testFailBeforeNotify: the pre-commit of checkpoint 2 fails; restoring
    // checkpoint 1 commits its data and aborts what came after it.
    let (store, clock, mut s) = started().await;
    write(&mut s, "42").await;
    let cp1 = snapshot(&mut s, 1).await;
    write(&mut s, "43").await;
    store.fail_next_pre_commit();
    let err = s.snapshot_state(2).await.unwrap_err();
    assert!(matches!(
        err,
        TwoPhaseCommitError::Hook {
            operation: Operation::PreCommit,
            ..
        }
    ));
    assert!(store.committed().is_empty());
    drop(s); // the job fails; nothing more happens in this process

    let restored = restore(&store, &clock, &cp1).await;
    assert_eq!(store.committed(), strings(&["42"]));
    // The transaction open at checkpoint 1 (holding 43) was aborted, and the
    // only unfinished transaction is the restored sink's new one.
    assert_eq!(store.status(2), Some(Status::Aborted));
    let current = restored.current_transaction().unwrap().handle;
    assert_eq!(store.unfinished(), [current]);
    assert_eq!(restored.metrics().recovered_commits, 1);
    assert_eq!(restored.metrics().recovered_aborts, 1);
}

#[tokio::test]
async fn recovered_commits_run_before_any_new_transaction_or_record() {
    let (store, clock, mut s) = started().await;
    write(&mut s, "42").await;
    let cp = snapshot(&mut s, 1).await;
    drop(s);
    let before = store.log().len();
    let mut r = sink(&store, &clock);
    assert!(matches!(
        r.invoke("too early".into(), &RecordContext::default())
            .await,
        Err(TwoPhaseCommitError::NotInitialized)
    ));
    r.initialize_state(Some(vec![decode(&cp)])).await.unwrap();
    let log = store.log()[before..].to_vec();
    // The transaction open at the checkpoint is aborted first (unlike
    // Flink, which commits first): it may hold the last stable offset that
    // settling a fenced commit reads past; its id is not a pending one.
    assert_eq!(log, ["abort 2", "commit 1", "finish [2, 1]", "begin 3"]);
    write(&mut r, "43").await;
}

#[tokio::test]
async fn recover_already_committed_transaction_is_not_duplicated() {
    // testRecoverCommittedTransaction: the notification arrived and committed
    // checkpoint 1; the process then died and restores checkpoint 1.
    let (store, clock, mut s) = started().await;
    write(&mut s, "42").await;
    let cp1 = snapshot(&mut s, 1).await;
    s.notify_checkpoint_complete(1).await.unwrap();
    write(&mut s, "43").await;
    drop(s);

    let r = restore(&store, &clock, &cp1).await;
    assert_eq!(store.committed(), strings(&["42"]));
    assert_eq!(r.metrics().already_committed, 1);
    assert_eq!(r.metrics().committed, 0);
}

#[tokio::test]
async fn fail_and_recover_same_checkpoint_twice() {
    let (store, clock, mut s) = started().await;
    write(&mut s, "42").await;
    write(&mut s, "43").await;
    let cp1 = snapshot(&mut s, 1).await;
    write(&mut s, "44").await;
    drop(s);

    let mut first = restore(&store, &clock, &cp1).await;
    write(&mut first, "45").await;
    drop(first); // fails again before its first checkpoint
    let mut second = restore(&store, &clock, &cp1).await;
    assert_eq!(store.committed(), strings(&["42", "43"]));
    assert_eq!(second.metrics().already_committed, 1);

    write(&mut second, "46").await;
    let _ = snapshot(&mut second, 2).await;
    second.notify_checkpoint_complete(2).await.unwrap();
    assert_eq!(store.committed(), strings(&["42", "43", "46"]));
    second.close().await.unwrap();
    // Only the first attempt's open transaction (45) is left, never visible:
    // checkpoint 1 cannot know it. This store has no id reuse; the Kafka
    // sink aborts such transactions by reusing transactional ids.
    assert_eq!(store.unfinished(), [3]);
    assert_eq!(store.status(3), Some(Status::Open));
}

#[tokio::test]
async fn commit_failures_surface_after_every_commit_was_attempted() {
    let (store, clock, mut s) = started().await;
    let mut states = Vec::new();
    for (cp, v) in [(1, "a"), (2, "b"), (3, "c")] {
        write(&mut s, v).await;
        states.push(snapshot(&mut s, cp).await);
    }
    // Transaction 2 holds "b" (checkpoint 2).
    store.fail_next_commit_of(2, 1);
    let err = s.notify_checkpoint_complete(3).await.unwrap_err();
    match &err {
        TwoPhaseCommitError::CommitFailed { failures } => {
            assert_eq!(failures.len(), 1);
            assert_eq!(failures[0].checkpoint_id, Some(2));
            assert_eq!(failures[0].operation, Operation::Commit);
            assert_eq!(failures[0].error, StoreError::Scripted("commit", 2));
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(err.to_string().contains("checkpoint 2"), "{err}");
    // Checkpoint 3 was committed although 2 failed before it.
    assert_eq!(store.committed(), strings(&["a", "c"]));
    // A failed commit stays pending: the next notification retries it.
    assert_eq!(s.pending_checkpoints(), [2]);
    drop(s);

    let r = restore(&store, &clock, &states[2]).await;
    assert_eq!(store.committed(), strings(&["a", "c", "b"]));
    assert_eq!(r.metrics().already_committed, 2);
    assert_eq!(r.metrics().committed, 1);
}

#[tokio::test]
async fn recovery_failure_attempts_everything_and_can_be_retried() {
    let (store, clock, mut s) = started().await;
    write(&mut s, "a").await;
    snapshot(&mut s, 1).await;
    write(&mut s, "b").await;
    let cp2 = snapshot(&mut s, 2).await;
    drop(s);

    store.fail_next_commit_of(1, 1);
    let mut r = sink(&store, &clock);
    let err = r
        .initialize_state(Some(vec![decode(&cp2)]))
        .await
        .unwrap_err();
    match err {
        TwoPhaseCommitError::RecoveryFailed { failures } => {
            assert_eq!(failures.len(), 1);
            assert_eq!(failures[0].operation, Operation::RecoverAndCommit);
            assert_eq!(failures[0].checkpoint_id, Some(1));
        }
        other => panic!("unexpected {other:?}"),
    }
    // Checkpoint 2's transaction was still committed.
    assert_eq!(store.committed(), strings(&["b"]));
    assert!(!r.is_running());
    // Retrying the restore (Flink: the next restart) finishes the job.
    r.initialize_state(Some(vec![decode(&cp2)])).await.unwrap();
    assert_eq!(store.committed(), strings(&["b", "a"]));
    assert!(r.is_running());
}

#[tokio::test]
async fn timeout_warnings_on_invoke_commit_and_recovery() {
    let (store, clock) = (MemoryStore::new(), ManualClock::new(0));
    let mut s = sink(&store, &clock);
    s.set_transaction_timeout(Duration::from_millis(1000))
        .enable_transaction_timeout_warnings(0.5);
    s.initialize_state(None).await.unwrap();

    clock.set_millis(400);
    write(&mut s, "a").await;
    assert_eq!(s.metrics().timeout_warnings, 0);
    clock.set_millis(600);
    write(&mut s, "b").await;
    assert_eq!(s.metrics().timeout_warnings, 1);
    write(&mut s, "c").await; // once per transaction on invoke
    assert_eq!(s.metrics().timeout_warnings, 1);
    let cp = snapshot(&mut s, 1).await; // next transaction starts at 600
    clock.set_millis(800);
    s.notify_checkpoint_complete(1).await.unwrap(); // 800 ms old: warn
    assert_eq!(s.metrics().timeout_warnings, 2);
    write(&mut s, "d").await; // 200 ms old: no warning
    assert_eq!(s.metrics().timeout_warnings, 2);

    // Recovery commit of a transaction 800 ms old warns too.
    let mut r = sink(&store, &clock);
    r.set_transaction_timeout(Duration::from_millis(1000))
        .enable_transaction_timeout_warnings(0.5);
    r.initialize_state(Some(vec![decode(&cp)])).await.unwrap();
    assert_eq!(r.metrics().timeout_warnings, 1);
}

#[tokio::test]
async fn default_warning_ratio_and_disabled_warnings() {
    let (store, clock) = (MemoryStore::new(), ManualClock::new(0));
    // No timeout set: no warnings however old.
    let mut none = fresh(&store, &clock).await;
    clock.set_millis(u64::MAX / 2);
    write(&mut none, "x").await;
    assert_eq!(none.metrics().timeout_warnings, 0);

    let clock = ManualClock::new(0);
    let mut s = sink(&store, &clock);
    s.set_transaction_timeout(Duration::from_millis(1000));
    s.initialize_state(None).await.unwrap();
    clock.set_millis(799);
    write(&mut s, "a").await;
    assert_eq!(s.metrics().timeout_warnings, 0);
    clock.set_millis(801);
    snapshot(&mut s, 1).await;
    write(&mut s, "b").await;
    s.notify_checkpoint_complete(1).await.unwrap();
    assert_eq!(s.metrics().timeout_warnings, 1, "default ratio is 0.8");

    let clock = ManualClock::new(0);
    let mut off = sink(&store, &clock);
    off.set_transaction_timeout(Duration::from_millis(1000))
        .disable_transaction_timeout_warnings();
    off.initialize_state(None).await.unwrap();
    clock.set_millis(5000);
    write(&mut off, "c").await;
    assert_eq!(off.metrics().timeout_warnings, 0);
}

/// A checkpoint whose pending transaction (checkpoint 1) started at t = 0.
async fn checkpoint_with_pending(store: &MemoryStore) -> Vec<u8> {
    let clock = ManualClock::new(0);
    let mut s = fresh(store, &clock).await;
    write(&mut s, "a").await;
    snapshot(&mut s, 1).await
}

async fn restore_with_failing_commit(
    store: &MemoryStore,
    cp: &[u8],
    now: u64,
    ignore: bool,
) -> Result<Sink, TwoPhaseCommitError<StoreError>> {
    store.fail_next_commit_of(1, 1);
    let clock = ManualClock::new(now);
    let mut r = sink(store, &clock);
    r.set_transaction_timeout(Duration::from_millis(1000));
    if ignore {
        r.ignore_failures_after_transaction_timeout();
    }
    r.initialize_state(Some(vec![decode(cp)])).await.map(|()| r)
}

#[tokio::test]
async fn ignore_failures_after_timeout_only_past_the_timeout() {
    let store = MemoryStore::new();
    let cp = checkpoint_with_pending(&store).await;
    // Within the timeout: the failure is not swallowed.
    let err = restore_with_failing_commit(&store, &cp, 1000, true)
        .await
        .unwrap_err();
    assert!(matches!(err, TwoPhaseCommitError::RecoveryFailed { .. }));
    // Past the timeout without the option: not swallowed either.
    let err = restore_with_failing_commit(&store, &cp, 1001, false)
        .await
        .unwrap_err();
    assert!(matches!(err, TwoPhaseCommitError::RecoveryFailed { .. }));
    // Past the timeout with the option: swallowed and counted.
    let r = restore_with_failing_commit(&store, &cp, 1001, true)
        .await
        .unwrap();
    assert_eq!(r.metrics().ignored_commit_failures, 1);
    assert!(r.is_running());
    assert!(store.committed().is_empty());
}

#[tokio::test]
async fn ignore_failures_after_timeout_never_applies_to_notifications() {
    let (store, clock) = (MemoryStore::new(), ManualClock::new(0));
    let mut s = sink(&store, &clock);
    s.set_transaction_timeout(Duration::from_millis(1000))
        .ignore_failures_after_transaction_timeout();
    s.initialize_state(None).await.unwrap();
    write(&mut s, "a").await;
    snapshot(&mut s, 1).await;
    store.fail_next_commit_of(1, 1);
    clock.set_millis(10_000);
    let err = s.notify_checkpoint_complete(1).await.unwrap_err();
    assert!(matches!(err, TwoPhaseCommitError::CommitFailed { .. }));
    assert_eq!(s.metrics().ignored_commit_failures, 0);
}

/// Invariant: a restored transaction that can no longer be committed (the
/// store aborted it) fails the restore with a typed error naming it, as
/// Flink fails the job; it is counted, and nothing of it becomes visible.
#[tokio::test]
async fn lost_transaction_fails_the_restore_by_default() {
    let (store, clock, mut s) = started().await;
    write(&mut s, "a").await;
    let cp = snapshot(&mut s, 1).await;
    drop(s);
    // The store expired (aborted) the prepared transaction meanwhile.
    store.inner().txns.get_mut(&1).unwrap().status = Status::Aborted;
    let mut r = sink(&store, &clock);
    let err = r
        .initialize_state(Some(vec![decode(&cp)]))
        .await
        .unwrap_err();
    let TwoPhaseCommitError::TransactionsLost { lost } = err else {
        panic!("expected TransactionsLost, got {err}")
    };
    assert_eq!((lost.len(), lost[0].checkpoint_id), (1, 1));
    assert_eq!(r.metrics().lost, 1);
    assert!(!r.is_running());
    assert!(store.committed().is_empty());
}

/// Invariant: with `ignore_failures_after_transaction_timeout`, a lost
/// transaction older than the timeout is only logged and counted; a younger
/// one still fails the restore.
#[tokio::test]
async fn lost_transaction_past_the_timeout_is_ignored_only_when_set() {
    let (store, clock, mut s) = started().await;
    write(&mut s, "a").await;
    let cp = snapshot(&mut s, 1).await;
    drop(s);
    store.inner().txns.get_mut(&1).unwrap().status = Status::Aborted;

    let ignoring = || {
        let mut s = sink(&store, &clock);
        s.set_transaction_timeout(Duration::from_secs(60))
            .ignore_failures_after_transaction_timeout();
        s
    };
    let mut young = ignoring();
    clock.advance(Duration::from_secs(30));
    assert!(matches!(
        young.initialize_state(Some(vec![decode(&cp)])).await,
        Err(TwoPhaseCommitError::TransactionsLost { .. })
    ));

    let mut old = ignoring();
    clock.advance(Duration::from_secs(31));
    old.initialize_state(Some(vec![decode(&cp)])).await.unwrap();
    assert_eq!(old.metrics().lost, 1);
    assert!(old.is_running());
    assert!(store.committed().is_empty());
}

/// Invariant: a pending transaction that comes back lost at a notification
/// is reported to the caller as `TransactionsLost`, and the sink carries on
/// with the next checkpoint.
#[tokio::test]
async fn lost_transaction_at_a_notification_is_an_error() {
    let (store, _, mut s) = started().await;
    write(&mut s, "a").await;
    snapshot(&mut s, 1).await;
    store.inner().txns.get_mut(&1).unwrap().status = Status::Aborted;
    assert!(matches!(
        s.notify_checkpoint_complete(1).await,
        Err(TwoPhaseCommitError::TransactionsLost { .. })
    ));
    write(&mut s, "b").await;
    snapshot(&mut s, 2).await;
    assert_eq!(s.notify_checkpoint_complete(2).await.unwrap(), 1);
    assert_eq!(store.committed(), strings(&["b"]));
}

#[tokio::test]
async fn rescaled_restore_commits_every_state_and_keeps_the_last_context() {
    let (store, clock) = (MemoryStore::new(), ManualClock::new(0));
    let mut a = fresh(&store, &clock).await;
    let mut b = fresh(&store, &clock).await;
    write(&mut a, "a1").await;
    write(&mut b, "b1").await;
    let sa = decode(&snapshot(&mut a, 1).await);
    let sb = decode(&snapshot(&mut b, 1).await);
    let last_ctx = sb.context.clone().unwrap();
    drop((a, b));

    let mut merged = sink(&store, &clock);
    merged.initialize_state(Some(vec![sa, sb])).await.unwrap();
    assert_eq!(store.committed(), strings(&["a1", "b1"]));
    let log = store.log();
    assert!(log.iter().any(|l| l.starts_with("finish [")), "{log:?}");
    // The context of the last state ({2, 4}) survived recovery; every
    // handled transaction left it and the new current one joined.
    assert!(last_ctx.contains(&2) && last_ctx.contains(&4));
    let current = merged.current_transaction().unwrap().handle;
    assert_eq!(merged.user_context().unwrap(), &Owned::from([current]));
    assert_eq!(store.unfinished(), [current]);
}

#[tokio::test]
async fn restored_with_no_state_initializes_a_fresh_context() {
    let (store, clock) = (MemoryStore::new(), ManualClock::new(0));
    let mut s = sink(&store, &clock);
    s.initialize_state(Some(vec![])).await.unwrap();
    assert_eq!(store.log(), ["init-context", "begin 1"]);
}

#[tokio::test]
async fn lifecycle_errors() {
    let (store, _, mut s) = started().await;
    snapshot(&mut s, 3).await;
    assert!(matches!(
        s.snapshot_state(3).await,
        Err(TwoPhaseCommitError::NonIncreasingCheckpoint {
            checkpoint_id: 3,
            last: 3
        })
    ));
    s.close().await.unwrap();
    s.close().await.unwrap();
    assert!(matches!(
        s.invoke("x".into(), &RecordContext::default()).await,
        Err(TwoPhaseCommitError::Closed)
    ));
    // Pending checkpoint 3 was left for a restore to commit.
    assert_eq!(store.status(1), Some(Status::Prepared));
    assert_eq!(store.status(2), Some(Status::Aborted));
    assert!(matches!(
        s.initialize_state(None).await,
        Err(TwoPhaseCommitError::Closed)
    ));
}

#[tokio::test]
async fn state_round_trips_through_bytes() {
    let (store, clock) = (MemoryStore::new(), ManualClock::new(77));
    let mut s = fresh(&store, &clock).await;
    write(&mut s, "a").await;
    let bytes = snapshot(&mut s, 1).await;
    let st = decode(&bytes);
    assert_eq!(st.current.as_ref().unwrap().handle, 2);
    assert_eq!(st.current.as_ref().unwrap().start_time_ms, 77);
    assert_eq!(st.pending.keys().copied().collect::<Vec<_>>(), [1]);
    assert_eq!(st.context, Some(Owned::from([1, 2])));
}

/// Invariant: a transaction whose pre-commit failed is aborted at once (it
/// never stays open or pre-committed), no record or checkpoint is accepted
/// until the pipeline restores, and the transactions of completed
/// checkpoints are still committed.
#[tokio::test]
async fn failed_pre_commit_aborts_its_transaction_and_requires_a_restore() {
    let (store, clock, mut s) = started().await;
    write(&mut s, "42").await;
    let cp1 = snapshot(&mut s, 1).await;
    write(&mut s, "43").await;
    store.fail_next_pre_commit();
    let err = s.snapshot_state(2).await.unwrap_err();
    assert!(matches!(
        err,
        TwoPhaseCommitError::Hook {
            operation: Operation::PreCommit,
            ..
        }
    ));
    assert_eq!(store.status(2), Some(Status::Aborted), "aborted at once");
    let refused = s
        .invoke("44".to_string(), &RecordContext::default())
        .await
        .unwrap_err();
    assert!(matches!(refused, TwoPhaseCommitError::RestoreRequired));
    assert!(matches!(
        s.snapshot_state(3).await.unwrap_err(),
        TwoPhaseCommitError::RestoreRequired
    ));
    // Checkpoint 1 completed: its transaction is still committed.
    assert_eq!(s.notify_checkpoint_complete(1).await.unwrap(), 1);
    assert_eq!(store.committed(), strings(&["42"]));
    drop(s);
    let restored = restore(&store, &clock, &cp1).await;
    assert_eq!(store.committed(), strings(&["42"]), "no duplicate");
    assert_eq!(restored.metrics().recovered_commits, 1);
}

/// Invariant: a commit that fails at a notification stays pending and is
/// committed by the next notification (Flink's pendingCommitTransactions),
/// exactly once.
#[tokio::test]
async fn failed_commit_is_retried_at_the_next_notification() {
    let (store, _, mut s) = started().await;
    write(&mut s, "a").await;
    snapshot(&mut s, 1).await;
    store.fail_next_commit_of(1, 1);
    assert!(matches!(
        s.notify_checkpoint_complete(1).await.unwrap_err(),
        TwoPhaseCommitError::CommitFailed { .. }
    ));
    assert_eq!(s.pending_checkpoints(), [1]);
    write(&mut s, "b").await;
    snapshot(&mut s, 2).await;
    assert_eq!(s.notify_checkpoint_complete(2).await.unwrap(), 2);
    assert_eq!(store.committed(), strings(&["a", "b"]));
    assert!(s.pending_checkpoints().is_empty());
    assert_eq!(s.metrics().commit_failures, 1);
}

/// Invariant (in-process failover after a failed pre-commit): the same sink
/// instance restores the last completed checkpoint without a process
/// restart. The transaction of that checkpoint is committed once (by the
/// live handle, not again by the restore), the failed one stays aborted, and
/// the replayed records are committed by the next checkpoint: every value
/// exactly once.
#[tokio::test]
async fn failover_after_a_failed_pre_commit_restores_in_process() {
    let (store, _, mut s) = started().await;
    write(&mut s, "42").await;
    let cp1 = snapshot(&mut s, 1).await;
    write(&mut s, "43").await;
    store.fail_next_pre_commit();
    s.snapshot_state(2).await.unwrap_err();

    s.initialize_state(Some(vec![decode(&cp1)])).await.unwrap();
    assert!(s.is_running());
    assert_eq!(store.committed(), strings(&["42"]));
    assert_eq!(s.metrics().committed, 1);
    assert_eq!(
        s.metrics().recovered_commits,
        0,
        "settled by the live handle"
    );
    // The source replays 43 from checkpoint 1's position.
    write(&mut s, "43").await;
    snapshot(&mut s, 3).await;
    s.notify_checkpoint_complete(3).await.unwrap();
    assert_eq!(store.committed(), strings(&["42", "43"]));
    let current = s.current_transaction().unwrap().handle;
    assert_eq!(store.unfinished(), [current]);
}

/// Invariant: a failover aborts the transactions this instance pre-committed
/// for checkpoints that never completed, and its open one, while committing
/// the restored checkpoint's; nothing else stays open or prepared.
#[tokio::test]
async fn failover_aborts_transactions_of_checkpoints_that_never_completed() {
    let (store, _, mut s) = started().await;
    write(&mut s, "a").await;
    let cp1 = snapshot(&mut s, 1).await; // completes (written), not notified
    write(&mut s, "b").await;
    snapshot(&mut s, 2).await; // never completes
    write(&mut s, "c").await;

    s.initialize_state(Some(vec![decode(&cp1)])).await.unwrap();
    assert_eq!(store.committed(), strings(&["a"]));
    assert_eq!(store.status(2), Some(Status::Aborted), "checkpoint 2's");
    assert_eq!(store.status(3), Some(Status::Aborted), "the open one");
    let current = s.current_transaction().unwrap().handle;
    assert_eq!(store.unfinished(), [current]);
    assert!(s.pending_checkpoints().is_empty());
}

/// Invariant: a failover with nothing to restore (no checkpoint completed)
/// commits nothing and aborts everything this instance began.
#[tokio::test]
async fn failover_with_nothing_to_restore_aborts_everything() {
    let (store, _, mut s) = started().await;
    write(&mut s, "a").await;
    snapshot(&mut s, 1).await;
    write(&mut s, "b").await;

    s.initialize_state(None).await.unwrap();
    assert!(store.committed().is_empty());
    assert_eq!(store.status(1), Some(Status::Aborted));
    assert_eq!(store.status(2), Some(Status::Aborted));
    // Checkpoint ids start over with the fresh run.
    write(&mut s, "a").await;
    snapshot(&mut s, 1).await;
    s.notify_checkpoint_complete(1).await.unwrap();
    assert_eq!(store.committed(), strings(&["a"]));
}

/// Invariant: when the live commit of the restored checkpoint's transaction
/// fails during a failover, the restore commits it (recover_and_commit):
/// exactly once, never dropped.
#[tokio::test]
async fn failover_leaves_a_failed_commit_to_the_restore() {
    let (store, _, mut s) = started().await;
    write(&mut s, "a").await;
    let cp1 = snapshot(&mut s, 1).await;
    store.fail_next_commit_of(1, 1);

    s.initialize_state(Some(vec![decode(&cp1)])).await.unwrap();
    assert_eq!(store.committed(), strings(&["a"]));
    assert_eq!(s.metrics().commit_failures, 1);
    assert_eq!(s.metrics().recovered_commits, 1);
    let current = s.current_transaction().unwrap().handle;
    assert_eq!(store.unfinished(), [current]);
}
