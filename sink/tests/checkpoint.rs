//! The single-process checkpoint driver: durable files, restore, retention,
//! corruption fallback, interval triggering (paused tokio clock) and
//! exactly-once end to end with a source and the two-phase-commit sink over
//! the scripted store.

use crate::support;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use kafka_sink::codec::U64Codec;
use kafka_sink::{
    Checkpoint, CheckpointCoordinator, CheckpointError, CheckpointStorage, CheckpointedOperator,
    OperatorError, OperatorInfo, OperatorSnapshot, RestoredState,
};
use kafka_sink::{CheckpointedSink, ManualClock, RecordContext, TwoPhaseCommitSink};
use support::{MemoryStore, OwnedCodec, Status, StoreSink, serializer};
use tokio::sync::Mutex;

/// A replayable source: emits `data[pos..]`; its state is `pos`.
#[derive(Debug)]
struct VecSource {
    data: Vec<String>,
    pos: usize,
    snapshots: Vec<u64>,
    notified: Vec<u64>,
}

impl VecSource {
    fn new(n: usize) -> Self {
        VecSource {
            data: (0..n).map(|i| format!("r{i}")).collect(),
            pos: 0,
            snapshots: Vec::new(),
            notified: Vec::new(),
        }
    }
    fn next(&mut self) -> Option<String> {
        let v = self.data.get(self.pos).cloned();
        if v.is_some() {
            self.pos += 1;
        }
        v
    }
}

impl CheckpointedOperator for VecSource {
    async fn initialize_state(
        &mut self,
        restored: Option<RestoredState>,
    ) -> Result<(), OperatorError> {
        if let Some(bytes) = restored.and_then(|r| r.own.into_iter().next()) {
            self.pos = u64::from_be_bytes(bytes.as_slice().try_into()?) as usize;
        }
        Ok(())
    }
    async fn snapshot_state(&mut self, checkpoint_id: u64) -> Result<Vec<u8>, OperatorError> {
        self.snapshots.push(checkpoint_id);
        Ok((self.pos as u64).to_be_bytes().to_vec())
    }
    async fn notify_checkpoint_complete(
        &mut self,
        checkpoint_id: u64,
    ) -> Result<(), OperatorError> {
        self.notified.push(checkpoint_id);
        Ok(())
    }
}

type Sink = CheckpointedSink<StoreSink, U64Codec, OwnedCodec>;

struct Job {
    coordinator: CheckpointCoordinator,
    source: Arc<Mutex<VecSource>>,
    sink: Arc<Mutex<Sink>>,
}

fn job(dir: &Path, retain: usize, store: &MemoryStore, records: usize) -> Job {
    let source = Arc::new(Mutex::new(VecSource::new(records)));
    let sink = Arc::new(Mutex::new(CheckpointedSink::new(
        TwoPhaseCommitSink::new(StoreSink::new(store)).with_clock(Arc::new(ManualClock::new(0))),
        serializer(),
    )));
    let mut coordinator = CheckpointCoordinator::new(CheckpointStorage::open(dir, retain).unwrap());
    coordinator
        .register(OperatorInfo::new("source", 0, 1), source.clone())
        .unwrap();
    coordinator
        .register(OperatorInfo::new("sink", 0, 1), sink.clone())
        .unwrap();
    Job {
        coordinator,
        source,
        sink,
    }
}

/// Moves up to `n` records from the source to the sink, holding both locks
/// per record in registration order (the consistent-cut rule).
async fn process(job: &Job, n: usize) {
    for _ in 0..n {
        let mut src = job.source.lock().await;
        let mut sink = job.sink.lock().await;
        let Some(v) = src.next() else { return };
        sink.invoke(v, &RecordContext::default()).await.unwrap();
    }
}

fn records(range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|i| format!("r{i}")).collect()
}

#[tokio::test]
async fn crash_without_checkpoint_restores_and_stays_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = MemoryStore::new();

    let mut a = job(dir.path(), 3, &store, 10);
    assert_eq!(a.coordinator.restore().await.unwrap(), None);
    process(&a, 3).await;
    assert_eq!(a.coordinator.trigger_checkpoint().await.unwrap(), 1);
    assert_eq!(store.committed(), records(0..3));
    process(&a, 2).await; // r3, r4 go into the open transaction, then crash
    drop(a);

    let mut b = job(dir.path(), 3, &store, 10);
    assert_eq!(b.coordinator.restore().await.unwrap(), Some(1));
    assert_eq!(b.source.lock().await.pos, 3);
    assert_eq!(b.coordinator.next_checkpoint_id(), 2);
    process(&b, 100).await;
    assert_eq!(b.coordinator.trigger_checkpoint().await.unwrap(), 2);
    assert_eq!(store.committed(), records(0..10));
    // The crashed process's open transaction (r3, r4) was aborted on restore.
    assert_eq!(store.status(2), Some(Status::Aborted));
}

/// Invariant (in-process failover): after a checkpoint fails (here the
/// sink's pre-commit), calling `restore` again on the same coordinator
/// rewinds the source to the last completed checkpoint and restores the
/// same sink instance; checkpoint ids keep increasing past the failed one,
/// and every record is committed exactly once — no process restart.
#[tokio::test]
async fn failed_checkpoint_then_in_process_failover_stays_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = MemoryStore::new();
    let mut a = job(dir.path(), 3, &store, 10);
    a.coordinator.restore().await.unwrap();
    process(&a, 3).await;
    assert_eq!(a.coordinator.trigger_checkpoint().await.unwrap(), 1);
    process(&a, 2).await; // r3, r4
    store.fail_next_pre_commit();
    assert!(a.coordinator.trigger_checkpoint().await.is_err());
    assert!(matches!(
        a.coordinator.trigger_checkpoint().await,
        Err(CheckpointError::Operator { .. })
    ));

    assert_eq!(a.coordinator.restore().await.unwrap(), Some(1));
    assert_eq!(a.source.lock().await.pos, 3, "the source rewound");
    assert_eq!(
        a.coordinator.next_checkpoint_id(),
        4,
        "ids 2 and 3 were used"
    );
    process(&a, 100).await;
    assert_eq!(a.coordinator.trigger_checkpoint().await.unwrap(), 4);
    assert_eq!(store.committed(), records(0..10));
    let current = a
        .sink
        .lock()
        .await
        .sink()
        .current_transaction()
        .unwrap()
        .handle;
    assert_eq!(store.unfinished(), [current]);
}

#[tokio::test]
async fn crash_after_durable_write_before_notify_commits_on_restore() {
    let dir = tempfile::tempdir().unwrap();
    let store = MemoryStore::new();
    let mut a = job(dir.path(), 3, &store, 5);
    a.coordinator.restore().await.unwrap();
    process(&a, 3).await;
    // Do what trigger_checkpoint does, but die before notifying.
    let id = a.coordinator.next_checkpoint_id();
    let mut src = a.source.lock().await;
    let mut sink = a.sink.lock().await;
    let checkpoint = Checkpoint {
        id,
        timestamp_ms: 0,
        operators: vec![
            OperatorSnapshot {
                uid: "source".into(),
                subtask_index: 0,
                parallelism: 1,
                state: src.snapshot_state(id).await.unwrap(),
            },
            OperatorSnapshot {
                uid: "sink".into(),
                subtask_index: 0,
                parallelism: 1,
                state: sink.snapshot_state(id).await.unwrap(),
            },
        ],
    };
    a.coordinator.storage().write(&checkpoint).unwrap();
    drop((src, sink));
    drop(a);
    assert!(store.committed().is_empty());

    let mut b = job(dir.path(), 3, &store, 5);
    assert_eq!(b.coordinator.restore().await.unwrap(), Some(id));
    assert_eq!(store.committed(), records(0..3));
    process(&b, 100).await;
    b.coordinator.trigger_checkpoint().await.unwrap();
    assert_eq!(store.committed(), records(0..5));
}

#[tokio::test]
async fn notify_failure_keeps_the_checkpoint_and_restore_commits() {
    let dir = tempfile::tempdir().unwrap();
    let store = MemoryStore::new();
    let mut a = job(dir.path(), 3, &store, 4);
    a.coordinator.restore().await.unwrap();
    process(&a, 2).await;
    let txn = a
        .sink
        .lock()
        .await
        .sink()
        .current_transaction()
        .unwrap()
        .handle;
    store.fail_next_commit_of(txn, 1);
    match a.coordinator.trigger_checkpoint().await {
        Err(CheckpointError::NotifyFailed {
            checkpoint_id: 1,
            failures,
        }) => assert_eq!(failures.len(), 1),
        other => panic!("unexpected {other:?}"),
    }
    // The source was still notified; the checkpoint is on disk.
    assert_eq!(a.source.lock().await.notified, [1]);
    assert!(store.committed().is_empty());
    drop(a);

    let mut b = job(dir.path(), 3, &store, 4);
    assert_eq!(b.coordinator.restore().await.unwrap(), Some(1));
    assert_eq!(store.committed(), records(0..2));
    process(&b, 100).await;
    b.coordinator.trigger_checkpoint().await.unwrap();
    assert_eq!(store.committed(), records(0..4));
}

/// A counter operator for storage tests.
#[derive(Debug, Default)]
struct Counter {
    n: u64,
    restored_from: Option<u64>,
}

impl CheckpointedOperator for Counter {
    async fn initialize_state(
        &mut self,
        restored: Option<RestoredState>,
    ) -> Result<(), OperatorError> {
        if let Some(r) = restored {
            self.restored_from = Some(r.checkpoint_id);
            if let Some(b) = r.own.first() {
                self.n = u64::from_be_bytes(b.as_slice().try_into()?);
            }
        }
        Ok(())
    }
    async fn snapshot_state(&mut self, _checkpoint_id: u64) -> Result<Vec<u8>, OperatorError> {
        Ok(self.n.to_be_bytes().to_vec())
    }
    async fn notify_checkpoint_complete(
        &mut self,
        _checkpoint_id: u64,
    ) -> Result<(), OperatorError> {
        Ok(())
    }
}

fn counter_job(dir: &Path, retain: usize) -> (CheckpointCoordinator, Arc<Mutex<Counter>>) {
    let counter = Arc::new(Mutex::new(Counter::default()));
    let mut c = CheckpointCoordinator::new(CheckpointStorage::open(dir, retain).unwrap());
    c.register(OperatorInfo::new("counter", 0, 1), counter.clone())
        .unwrap();
    (c, counter)
}

fn ids(storage: &CheckpointStorage) -> Vec<u64> {
    storage
        .list()
        .unwrap()
        .into_iter()
        .map(|(id, _)| id)
        .collect()
}

#[tokio::test]
async fn keeps_the_last_n_checkpoints() {
    let dir = tempfile::tempdir().unwrap();
    let (mut c, counter) = counter_job(dir.path(), 2);
    c.restore().await.unwrap();
    for i in 1..=5 {
        counter.lock().await.n = i * 10;
        assert_eq!(c.trigger_checkpoint().await.unwrap(), i);
    }
    assert_eq!(ids(c.storage()), [4, 5]);
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty());

    let (mut again, restored) = counter_job(dir.path(), 2);
    assert_eq!(again.restore().await.unwrap(), Some(5));
    assert_eq!(restored.lock().await.n, 50);
}

#[tokio::test]
async fn corrupt_or_torn_latest_file_falls_back_to_the_previous_one() {
    for damage in ["truncate", "flip", "garbage"] {
        let dir = tempfile::tempdir().unwrap();
        let (mut c, counter) = counter_job(dir.path(), 3);
        c.restore().await.unwrap();
        for i in 1..=3 {
            counter.lock().await.n = i;
            c.trigger_checkpoint().await.unwrap();
        }
        let latest = c.storage().path_for(3);
        let mut bytes = std::fs::read(&latest).unwrap();
        match damage {
            "truncate" => bytes.truncate(bytes.len() - 3),
            "flip" => {
                let mid = bytes.len() / 2;
                bytes[mid] ^= 0x40;
            }
            _ => bytes = b"not a checkpoint".to_vec(),
        }
        std::fs::write(&latest, &bytes).unwrap();
        // A temp file of an interrupted write is ignored and cleaned up.
        std::fs::write(dir.path().join(".chk-00000000000000000004.tmp"), b"torn").unwrap();

        assert!(matches!(
            c.storage().read(&latest),
            Err(CheckpointError::Corrupt { .. })
        ));
        let (mut again, restored) = counter_job(dir.path(), 3);
        assert_eq!(again.restore().await.unwrap(), Some(2), "{damage}");
        assert_eq!(restored.lock().await.n, 2);
        assert_eq!(restored.lock().await.restored_from, Some(2));
        // New ids continue above the corrupt file's id.
        assert_eq!(again.next_checkpoint_id(), 4);
        assert!(!dir.path().join(".chk-00000000000000000004.tmp").exists());
        assert_eq!(again.trigger_checkpoint().await.unwrap(), 4);
    }
}

#[tokio::test]
async fn no_valid_checkpoint_is_a_fresh_start() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("chk-00000000000000000007.ckpt"), b"junk").unwrap();
    let (mut c, counter) = counter_job(dir.path(), 3);
    assert_eq!(c.restore().await.unwrap(), None);
    assert_eq!(counter.lock().await.restored_from, None);
    assert_eq!(c.next_checkpoint_id(), 8);
}

#[tokio::test(start_paused = true)]
async fn interval_triggering_with_a_paused_clock() {
    let dir = tempfile::tempdir().unwrap();
    let source = Arc::new(Mutex::new(VecSource::new(0)));
    let mut c = CheckpointCoordinator::new(CheckpointStorage::open(dir.path(), 10).unwrap());
    c.register(OperatorInfo::new("source", 0, 1), source.clone())
        .unwrap();
    c.restore().await.unwrap();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        c.run_periodic(Duration::from_millis(100), async {
            let _ = stop_rx.await;
        })
        .await
        .map(|()| c)
    });

    async fn settle() {
        for _ in 0..50 {
            tokio::task::yield_now().await;
        }
    }
    settle().await;
    assert!(
        source.lock().await.snapshots.is_empty(),
        "no checkpoint at t=0"
    );
    tokio::time::advance(Duration::from_millis(99)).await;
    settle().await;
    assert!(
        source.lock().await.snapshots.is_empty(),
        "none before 100 ms"
    );
    tokio::time::advance(Duration::from_millis(1)).await;
    settle().await;
    assert_eq!(source.lock().await.snapshots, [1]);
    for _ in 0..3 {
        tokio::time::advance(Duration::from_millis(100)).await;
        settle().await;
    }
    assert_eq!(source.lock().await.snapshots, [1, 2, 3, 4]);
    assert_eq!(source.lock().await.notified, [1, 2, 3, 4]);

    stop_tx.send(()).unwrap();
    let c = task.await.unwrap().unwrap();
    assert_eq!(c.last_completed(), Some(4));
    assert_eq!(ids(c.storage()), [1, 2, 3, 4]);
}

#[tokio::test]
async fn registration_and_ordering_errors() {
    let dir = tempfile::tempdir().unwrap();
    let (mut c, _counter) = counter_job(dir.path(), 3);
    assert!(matches!(
        c.register(
            OperatorInfo::new("counter", 0, 1),
            Arc::new(Mutex::new(Counter::default()))
        ),
        Err(CheckpointError::DuplicateOperator { .. })
    ));
    assert!(matches!(
        c.register(
            OperatorInfo::new("x", 2, 2),
            Arc::new(Mutex::new(Counter::default()))
        ),
        Err(CheckpointError::InvalidOperatorInfo(_))
    ));
    assert!(matches!(
        c.trigger_checkpoint().await,
        Err(CheckpointError::NotRestored)
    ));
    c.restore().await.unwrap();
    assert!(matches!(
        c.register(
            OperatorInfo::new("late", 0, 1),
            Arc::new(Mutex::new(Counter::default()))
        ),
        Err(CheckpointError::AlreadyRestored)
    ));
}

#[tokio::test]
async fn scale_down_two_sink_subtasks_to_one() {
    let dir = tempfile::tempdir().unwrap();
    let store = MemoryStore::new();
    let new_sink = || {
        Arc::new(Mutex::new(CheckpointedSink::new(
            TwoPhaseCommitSink::new(StoreSink::new(&store)),
            serializer(),
        )))
    };
    let (s0, s1) = (new_sink(), new_sink());
    let mut c = CheckpointCoordinator::new(CheckpointStorage::open(dir.path(), 3).unwrap());
    c.register(OperatorInfo::new("sink", 0, 2), s0.clone())
        .unwrap();
    c.register(OperatorInfo::new("sink", 1, 2), s1.clone())
        .unwrap();
    c.restore().await.unwrap();
    s0.lock()
        .await
        .invoke("a".into(), &RecordContext::default())
        .await
        .unwrap();
    s1.lock()
        .await
        .invoke("b".into(), &RecordContext::default())
        .await
        .unwrap();
    // Write checkpoint 1 but crash before notifying.
    let mut ops = Vec::new();
    for (i, s) in [&s0, &s1].into_iter().enumerate() {
        ops.push(OperatorSnapshot {
            uid: "sink".into(),
            subtask_index: i as u32,
            parallelism: 2,
            state: s.lock().await.snapshot_state(1).await.unwrap(),
        });
    }
    c.storage()
        .write(&Checkpoint {
            id: 1,
            timestamp_ms: 0,
            operators: ops,
        })
        .unwrap();
    drop((c, s0, s1));

    let single = new_sink();
    let mut c = CheckpointCoordinator::new(CheckpointStorage::open(dir.path(), 3).unwrap());
    c.register(OperatorInfo::new("sink", 0, 1), single.clone())
        .unwrap();
    assert_eq!(c.restore().await.unwrap(), Some(1));
    let mut committed = store.committed();
    committed.sort();
    assert_eq!(committed, ["a", "b"]);
    let current = single
        .lock()
        .await
        .sink()
        .current_transaction()
        .unwrap()
        .handle;
    assert_eq!(store.unfinished(), [current]);
}
