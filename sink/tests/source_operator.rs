//! The source base under the crate's checkpoint driver.

use kafka_sink::source::AcknowledgingOperator;
use kafka_sink::source::MessageAcknowledgingSource;
use kafka_sink::{CheckpointCoordinator, CheckpointError, CheckpointStorage, OperatorInfo};
use std::sync::{Arc, Mutex as StdMutex};
use tokio::sync::Mutex;

type Log = Arc<StdMutex<Vec<(u64, Vec<String>)>>>;

/// An acker that records calls and fails for ids starting with "fail".
fn acker(log: Log) -> impl FnMut(u64, &[String]) -> Result<(), std::io::Error> + Send {
    move |cp, ids| {
        if ids.iter().any(|i| i.starts_with("fail")) {
            return Err(std::io::Error::other("broker refused"));
        }
        log.lock().unwrap().push((cp, ids.to_vec()));
        Ok(())
    }
}

#[tokio::test]
async fn pending_ids_survive_a_restart_through_the_coordinator() {
    let dir = tempfile::tempdir().unwrap();
    let info = OperatorInfo::new("rabbit-source", 0, 1);
    let log: Log = Arc::default();

    let op = Arc::new(Mutex::new(AcknowledgingOperator {
        source: MessageAcknowledgingSource::<String>::new(),
        acker: acker(log.clone()),
    }));
    let mut coordinator =
        CheckpointCoordinator::new(CheckpointStorage::open(dir.path(), 3).unwrap());
    coordinator.register(info.clone(), op.clone()).unwrap();
    assert_eq!(coordinator.restore().await.unwrap(), None);
    {
        let mut g = op.lock().await;
        assert!(g.source.add_id("a".into()));
        assert!(g.source.add_id("b".into()));
    }
    let cp1 = coordinator.trigger_checkpoint().await.unwrap();
    assert_eq!(
        *log.lock().unwrap(),
        vec![(cp1, vec!["a".to_string(), "b".to_string()])]
    );
    assert!(op.lock().await.source.add_id("fail-c".into()));
    // Checkpoint 2 is durable but its acknowledgement fails.
    match coordinator.trigger_checkpoint().await {
        Err(CheckpointError::NotifyFailed { .. }) => {}
        other => panic!("expected NotifyFailed, got {other:?}"),
    }
    drop(coordinator);
    drop(op);

    // Restart: the pending id is restored and deduplicated.
    let op = Arc::new(Mutex::new(AcknowledgingOperator {
        source: MessageAcknowledgingSource::<String>::new(),
        acker: acker(log.clone()),
    }));
    let mut coordinator =
        CheckpointCoordinator::new(CheckpointStorage::open(dir.path(), 3).unwrap());
    coordinator.register(info, op.clone()).unwrap();
    let restored = coordinator.restore().await.unwrap().unwrap();
    {
        let mut g = op.lock().await;
        assert!(!g.source.add_id("fail-c".into()));
        assert!(!g.source.add_id("fail-c".into()));
        assert!(g.source.add_id("d".into()));
        assert_eq!(g.source.pending().len(), 1);
        assert_eq!(g.source.last_snapshot_id(), Some(restored));
    }
    // Still refused: stays pending, "d" goes into checkpoint 3's entry.
    assert!(coordinator.trigger_checkpoint().await.is_err());
    assert_eq!(op.lock().await.source.pending().len(), 2);
    assert!(op.lock().await.source.contains(&"d".to_string()));
}
