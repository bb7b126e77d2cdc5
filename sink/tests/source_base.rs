//! Pins the semantics of the message-acknowledging source bases against
//! Flink's `MessageAcknowledgingSourceBase` /
//! `MultipleIdsMessageAcknowledgingSourceBase`, and the v1 state format.

use bytes::Bytes;
use kafka_sink::source::{
    AcknowledgeSessionIdsAsync, MessageAcknowledgingSource, MultipleIdsMessageAcknowledgingSource,
    PendingCheckpoint, StateError, decode_pending, encode_pending,
};
use std::convert::Infallible;

type Src = MessageAcknowledgingSource<String>;

fn s(x: &str) -> String {
    x.to_string()
}

fn ids(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

/// Records every acknowledge_ids call.
fn recorder(
    log: &mut Vec<(u64, Vec<String>)>,
) -> impl FnMut(u64, &[String]) -> Result<(), Infallible> + '_ {
    move |cp, ids| {
        log.push((cp, ids.to_vec()));
        Ok(())
    }
}

/// Three snapshots: 1 = [a, b], 2 = [c], 3 = [d].
fn three_snapshots() -> Src {
    let mut src = Src::new();
    assert!(src.add_id(s("a")));
    assert!(src.add_id(s("b")));
    src.snapshot_state(1).unwrap();
    assert!(src.add_id(s("c")));
    src.snapshot_state(2).unwrap();
    assert!(src.add_id(s("d")));
    src.snapshot_state(3).unwrap();
    src
}

#[test]
fn add_id_returns_whether_new_and_groups_ids_per_checkpoint() {
    let mut src = Src::new();
    assert!(src.add_id(s("a")));
    assert!(!src.add_id(s("a")), "duplicate in the current group");
    assert!(src.add_id(s("b")));
    assert_eq!(src.current_ids(), ids(&["a", "b"]).as_slice());
    src.snapshot_state(10).unwrap();
    assert!(src.current_ids().is_empty());
    assert!(!src.add_id(s("b")), "duplicate of a pending id");
    assert!(src.add_id(s("c")));
    let pending: Vec<_> = src.pending().cloned().collect();
    assert_eq!(
        pending,
        vec![PendingCheckpoint {
            checkpoint_id: 10,
            ids: ids(&["a", "b"])
        }]
    );
    // Flink records the duplicate in the current group too.
    assert_eq!(src.current_ids(), ids(&["b", "c"]).as_slice());
    assert_eq!(src.unacknowledged_len(), 3);
}

#[test]
fn empty_snapshots_are_pending_too_and_ids_must_increase() {
    let mut src = Src::new();
    src.snapshot_state(1).unwrap();
    src.snapshot_state(2).unwrap();
    assert_eq!(src.pending().len(), 2);
    src.add_id(s("x"));
    let before: Vec<_> = src.pending().cloned().collect();
    assert_eq!(
        src.snapshot_state(2),
        Err(StateError::NonIncreasingCheckpointId {
            checkpoint_id: 2,
            previous: 2
        })
    );
    assert_eq!(src.pending().cloned().collect::<Vec<_>>(), before);
    assert_eq!(src.current_ids(), ids(&["x"]).as_slice(), "nothing changed");
    // Also after everything was acknowledged.
    notify(&mut src, 2, &mut Vec::new());
    assert!(src.snapshot_state(1).is_err());
    assert!(src.snapshot_state(3).is_ok());
}

#[test]
fn partial_acknowledgement_acks_only_checkpoints_up_to_the_notified_one() {
    let mut src = three_snapshots();
    let mut log = Vec::new();
    let n = notify(&mut src, 2, &mut log);
    assert_eq!(n, 2);
    // In order, and (as in Flink) with the notified checkpoint id.
    assert_eq!(log, vec![(2, ids(&["a", "b"])), (2, ids(&["c"]))]);
    let rest: Vec<_> = src.pending().map(|cp| cp.checkpoint_id).collect();
    assert_eq!(rest, [3]);
    assert!(!src.contains(&s("a")) && !src.contains(&s("c")));
    assert!(src.contains(&s("d")));
    // Acknowledged ids are new again; pending ones are not.
    assert!(src.add_id(s("a")));
    assert!(!src.add_id(s("d")));
}

#[test]
fn notifying_the_first_checkpoint_acks_only_it() {
    let mut src = three_snapshots();
    let mut log = Vec::new();
    assert_eq!(notify(&mut src, 1, &mut log), 1);
    assert_eq!(log, vec![(1, ids(&["a", "b"]))]);
    assert_eq!(src.pending().len(), 2);
}

#[test]
fn subsumed_and_out_of_order_notifications_are_no_ops() {
    let mut src = three_snapshots();
    let mut log = Vec::new();
    assert_eq!(notify(&mut src, 3, &mut log), 3);
    assert_eq!(log.len(), 3);
    // notify(2) after notify(3): already subsumed, nothing happens.
    assert_eq!(notify(&mut src, 2, &mut log), 0);
    assert_eq!(notify(&mut src, 3, &mut log), 0);
    assert_eq!(log.len(), 3);
    assert_eq!(src.unacknowledged_len(), 0);
}

#[test]
fn notification_between_pending_ids_stops_at_the_first_larger_one() {
    let mut src = Src::new();
    src.add_id(s("a"));
    src.snapshot_state(3).unwrap();
    src.add_id(s("b"));
    src.snapshot_state(7).unwrap();
    let mut log = Vec::new();
    // An id that was never snapshotted here (e.g. 5) completes 3 only.
    assert_eq!(notify(&mut src, 5, &mut log), 1);
    assert_eq!(log, vec![(5, ids(&["a"]))]);
    assert_eq!(notify(&mut src, 1, &mut log), 0);
    assert_eq!(src.pending().next().unwrap().checkpoint_id, 7);
}

#[test]
fn acknowledgement_failure_surfaces_and_keeps_the_failing_checkpoint() {
    let mut src = three_snapshots();
    let mut calls = 0;
    let err = src
        .notify_checkpoint_complete(3, |_cp: u64, ids: &[String]| {
            calls += 1;
            if ids.contains(&s("c")) {
                Err("broker down")
            } else {
                Ok(())
            }
        })
        .unwrap_err();
    assert_eq!(err, "broker down");
    assert_eq!(calls, 2, "stops at the first failure");
    // cp1 was acknowledged before the failure and stays released...
    assert!(!src.contains(&s("a")));
    // ...cp2 (failed) and cp3 (not attempted) stay pending and deduplicated.
    let rest: Vec<_> = src.pending().map(|cp| cp.checkpoint_id).collect();
    assert_eq!(rest, [2, 3]);
    assert!(!src.add_id(s("c")));
    assert!(!src.add_id(s("d")));
    // The next notification retries them.
    let mut log = Vec::new();
    assert_eq!(notify(&mut src, 3, &mut log), 2);
    assert_eq!(log, vec![(3, ids(&["c"])), (3, ids(&["d"]))]);
}

#[test]
fn restore_rebuilds_pending_and_the_dedup_set() {
    let mut src = Src::new();
    src.add_id(s("a"));
    src.add_id(s("b"));
    src.snapshot_state(1).unwrap();
    src.add_id(s("c"));
    let state = src.snapshot_state(2).unwrap();
    src.add_id(s("after-snapshot"));

    let mut restored = Src::restore(&state).unwrap();
    assert_eq!(
        restored.pending().cloned().collect::<Vec<_>>(),
        src.pending().cloned().collect::<Vec<_>>()
    );
    assert_eq!(restored.last_snapshot_id(), Some(2));
    assert!(restored.current_ids().is_empty());
    // Duplicates of restored ids are rejected...
    assert!(!restored.add_id(s("a")));
    assert!(!restored.add_id(s("c")));
    // ...an id emitted after the snapshot is not in the state: reprocessed.
    assert!(restored.add_id(s("after-snapshot")));
    // Snapshot ids continue after the restored ones.
    assert!(restored.snapshot_state(2).is_err());
    // Acknowledging the restored checkpoints releases their ids.
    let mut log = Vec::new();
    notify(&mut restored, 2, &mut log);
    assert_eq!(log, vec![(2, ids(&["a", "b"])), (2, ids(&["c"]))]);
    assert!(restored.add_id(s("b")));
}

#[test]
fn restore_with_none_is_a_fresh_start_and_failed_restore_changes_nothing() {
    let mut src = three_snapshots();
    assert!(src.initialize_state(Some(b"garbage-garbage")).is_err());
    assert_eq!(src.pending().len(), 3);
    src.initialize_state(None).unwrap();
    assert_eq!(src.pending().len(), 0);
    assert_eq!(src.unacknowledged_len(), 0);
    assert_eq!(src.last_snapshot_id(), None);
}

#[test]
fn duplicate_recorded_in_a_later_group_stays_deduplicated_until_that_group_is_acked() {
    // Live source.
    let mut live = Src::new();
    live.add_id(s("a"));
    live.snapshot_state(1).unwrap();
    assert!(!live.add_id(s("a"))); // duplicate, recorded in group 2
    let state = live.snapshot_state(2).unwrap();
    notify(&mut live, 1, &mut Vec::new());
    // Flink's removeAll would forget "a" here; it is still held by group 2.
    assert!(live.contains(&s("a")));
    // A source restored from the same state agrees.
    let restored = Src::restore(&state).unwrap();
    assert!(restored.contains(&s("a")));
    notify(&mut live, 2, &mut Vec::new());
    assert!(!live.contains(&s("a")));
}

/// Notifies `src` that `checkpoint_id` completed, recording every
/// acknowledgement in `log`; returns how many checkpoints it completed.
fn notify(src: &mut Src, checkpoint_id: u64, log: &mut Vec<(u64, Vec<String>)>) -> usize {
    src.notify_checkpoint_complete(checkpoint_id, recorder(log))
        .unwrap()
}

fn fixture() -> Vec<u8> {
    let text = include_str!("source_state_v1.hex");
    let hex: String = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .flat_map(|l| l.chars())
        .filter(|c| !c.is_whitespace())
        .collect();
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

fn fixture_pending() -> Vec<PendingCheckpoint<String>> {
    vec![
        PendingCheckpoint {
            checkpoint_id: 3,
            ids: ids(&["order-1", "order-2"]),
        },
        PendingCheckpoint {
            checkpoint_id: 4,
            ids: vec![],
        },
        PendingCheckpoint {
            checkpoint_id: 7,
            ids: vec![s("caf\u{e9}")],
        },
    ]
}

#[test]
fn v1_fixture_decodes_and_encoding_is_stable() {
    let bytes = fixture();
    assert_eq!(&bytes[..6], b"KEAS\x01\x01");
    assert_eq!(decode_pending::<String>(&bytes).unwrap(), fixture_pending());
    assert_eq!(
        encode_pending(&fixture_pending()).as_ref(),
        bytes.as_slice()
    );
    // Restoring from the fixture.
    let mut src = Src::restore(&bytes).unwrap();
    assert!(!src.add_id(s("order-2")));
    assert!(!src.add_id(s("caf\u{e9}")));
    assert_eq!(src.last_snapshot_id(), Some(7));
    assert_eq!(src.serialized_pending().as_ref(), bytes.as_slice());
}

#[test]
fn corrupt_states_are_typed_errors() {
    let good = fixture();
    let mut bad_magic = good.clone();
    bad_magic[0] = b'X';
    assert!(matches!(
        decode_pending::<String>(&bad_magic),
        Err(StateError::BadMagic { .. })
    ));
    let mut v2 = good.clone();
    v2[4] = 2;
    assert_eq!(
        decode_pending::<String>(&v2),
        Err(StateError::UnsupportedVersion(2))
    );
    let mut flipped = good.clone();
    flipped[20] ^= 0x40;
    assert!(matches!(
        decode_pending::<String>(&flipped),
        Err(StateError::ChecksumMismatch { .. })
    ));
    assert!(matches!(
        decode_pending::<String>(&good[..good.len() - 1]),
        Err(StateError::ChecksumMismatch { .. })
    ));
    assert!(matches!(
        decode_pending::<String>(&good[..7]),
        Err(StateError::Truncated { .. })
    ));
    assert!(matches!(
        decode_pending::<String>(&[]),
        Err(StateError::BadMagic { .. })
    ));
    assert_eq!(
        decode_pending::<u64>(&good),
        Err(StateError::IdKindMismatch {
            expected: 2,
            found: 1
        })
    );
}

#[test]
fn other_id_types_round_trip() {
    let p = vec![PendingCheckpoint {
        checkpoint_id: u64::MAX,
        ids: vec![0u64, 42, u64::MAX],
    }];
    assert_eq!(decode_pending::<u64>(&encode_pending(&p)).unwrap(), p);
    let b = vec![PendingCheckpoint {
        checkpoint_id: 1,
        ids: vec![Bytes::from_static(b"\x00\xff"), Bytes::new()],
    }];
    assert_eq!(decode_pending::<Bytes>(&encode_pending(&b)).unwrap(), b);
    // Bytes and Vec<u8> share the encoding.
    assert_eq!(
        decode_pending::<Vec<u8>>(&encode_pending(&b)).unwrap()[0].ids[0],
        vec![0u8, 0xff]
    );
}

// ---------------------------------------------------------------------------
// Multiple ids

type Multi = MultipleIdsMessageAcknowledgingSource<String, u64>;

/// Emits `id` with delivery tag `tag` the way RMQSource does: the session id
/// is recorded only for new ids.
fn deliver(src: &mut Multi, id: &str, tag: u64) -> bool {
    let new = src.add_id(s(id));
    if new {
        src.add_session_id(tag);
    }
    new
}

/// Notifies `src` that `checkpoint_id` completed, recording each session-id
/// group it acknowledges in `groups`; returns how many checkpoints it
/// completed.
fn notify_groups(src: &mut Multi, checkpoint_id: u64, groups: &mut Vec<Vec<u64>>) -> usize {
    src.notify_checkpoint_complete(checkpoint_id, |tags: &[u64]| {
        groups.push(tags.to_vec());
        Ok::<(), Infallible>(())
    })
    .unwrap()
}

/// A source that delivered "a" (tag 1), snapshotted checkpoint 1, then
/// delivered "b" (tag 2).
fn a_in_checkpoint_1_then_b() -> Multi {
    let mut src = Multi::new();
    deliver(&mut src, "a", 1);
    src.snapshot_state(1).unwrap();
    deliver(&mut src, "b", 2);
    src
}

#[test]
fn session_ids_are_grouped_per_snapshot_and_acked_on_completion() {
    let mut src = Multi::new();
    deliver(&mut src, "a", 1);
    deliver(&mut src, "b", 2);
    src.snapshot_state(1).unwrap();
    src.snapshot_state(2).unwrap(); // empty group
    deliver(&mut src, "c", 3);
    assert!(!deliver(&mut src, "a", 4), "duplicate: no session id");
    src.snapshot_state(3).unwrap();
    deliver(&mut src, "d", 5);

    let mut acked: Vec<Vec<u64>> = Vec::new();
    let n = notify_groups(&mut src, 2, &mut acked);
    assert_eq!(n, 2);
    // One call per snapshot group, empty ones included (Flink commits a
    // transaction for each).
    assert_eq!(acked, vec![vec![1, 2], vec![]]);
    assert_eq!(
        src.pending_session_ids().collect::<Vec<_>>(),
        vec![(3, &[3u64][..])]
    );
    assert_eq!(src.current_session_ids(), &[5]);
    // Subsumed notification.
    assert_eq!(
        src.notify_checkpoint_complete(1, |_: &[u64]| Err("must not be called"))
            .unwrap(),
        0
    );
}

#[test]
fn session_ack_failure_keeps_the_failing_group_and_its_unique_ids() {
    let mut src = a_in_checkpoint_1_then_b();
    src.snapshot_state(2).unwrap();
    let mut seen = Vec::new();
    let err = src
        .notify_checkpoint_complete(2, |tags: &[u64]| {
            seen.push(tags.to_vec());
            if tags == [2] {
                Err("channel closed")
            } else {
                Ok(())
            }
        })
        .unwrap_err();
    assert_eq!(err, "channel closed");
    // Flink's sequence: the first pending checkpoint's acknowledgeIDs acks
    // all session groups ≤ 2; the failure at group 2 happens while
    // processing pending checkpoint 1, so both unique-id checkpoints stay.
    assert_eq!(seen, vec![vec![1], vec![2]]);
    assert_eq!(
        src.pending_session_ids().collect::<Vec<_>>(),
        vec![(2, &[2u64][..])]
    );
    assert_eq!(src.base().pending().len(), 2);
    assert!(src.base().contains(&s("a")));
    // Retry.
    let mut retried = Vec::new();
    notify_groups(&mut src, 2, &mut retried);
    assert_eq!(retried, vec![vec![2]]);
    assert_eq!(src.base().pending().len(), 0);
}

#[test]
fn restore_starts_a_new_session_without_old_session_ids() {
    let mut src = Multi::new();
    deliver(&mut src, "a", 1);
    let state = src.snapshot_state(1).unwrap();
    deliver(&mut src, "b", 2);

    let mut restored = Multi::restore(&state).unwrap();
    assert_eq!(restored.pending_session_ids().len(), 0);
    assert!(restored.current_session_ids().is_empty());
    // The redelivered "a" (new tag 1 on a new channel) is a duplicate.
    assert!(!deliver(&mut restored, "a", 1));
    assert!(deliver(&mut restored, "b", 2));
    restored.snapshot_state(2).unwrap();
    let mut acked = Vec::new();
    notify_groups(&mut restored, 2, &mut acked);
    // Checkpoint 1 (restored) has no session ids left; checkpoint 2's tags
    // are acknowledged.
    assert_eq!(acked, vec![vec![2]]);
    assert_eq!(restored.base().unacknowledged_len(), 0);
}

#[test]
fn discarding_session_ids_keeps_unique_ids() {
    let mut src = a_in_checkpoint_1_then_b();
    assert_eq!(src.discard_session_ids(), 2);
    assert!(src.base().contains(&s("a")) && src.base().contains(&s("b")));
    assert_eq!(src.pending_session_ids().len(), 0);
    src.snapshot_state(2).unwrap();
    // Only checkpoint 2's (empty) group is left to acknowledge.
    let mut groups = Vec::new();
    let n = notify_groups(&mut src, 2, &mut groups);
    assert_eq!(n, 2);
    assert_eq!(groups, vec![Vec::<u64>::new()]);
}

struct AsyncAcker {
    acked: Vec<u64>,
    fail_on: Option<u64>,
}

impl AcknowledgeSessionIdsAsync<u64> for AsyncAcker {
    type Error = String;
    async fn acknowledge_session_ids(&mut self, ids: &[u64]) -> Result<(), String> {
        tokio::task::yield_now().await;
        if let Some(bad) = self.fail_on
            && ids.contains(&bad)
        {
            return Err(format!("tag {bad}"));
        }
        self.acked.extend_from_slice(ids);
        Ok(())
    }
}

#[tokio::test]
async fn async_notification_follows_the_same_sequence() {
    let mut src = Multi::new();
    for (i, id) in ["a", "b", "c"].iter().enumerate() {
        deliver(&mut src, id, i as u64 + 1);
        src.snapshot_state(i as u64 + 1).unwrap();
    }
    let mut acker = AsyncAcker {
        acked: vec![],
        fail_on: Some(2),
    };
    let err = src
        .notify_checkpoint_complete_async(3, &mut acker)
        .await
        .unwrap_err();
    assert_eq!(err, "tag 2");
    assert_eq!(acker.acked, [1]);
    acker.fail_on = None;
    assert_eq!(
        src.notify_checkpoint_complete_async(3, &mut acker)
            .await
            .unwrap(),
        3
    );
    assert_eq!(acker.acked, [1, 2, 3]);
    assert_eq!(src.base().unacknowledged_len(), 0);
}
