//! KIP-320 log-truncation detection (Java's
//! `SubscriptionState.maybeValidatePositionForCurrentLeader`,
//! `maybeCompleteValidation` and `OffsetsForLeaderEpochUtils`).
//!
//! Each position keeps the leader epoch of the batch it was read from
//! (`offset_epoch`) and the leader epoch it was last fetched under
//! (`leader_epoch`). Two ways find out that the log below a position was
//! truncated (an unclean leader election elected a replica that lacked
//! records the consumer read):
//!
//! - a Fetch (v12+) carries `last_fetched_epoch`; the leader answers
//!   `diverging_epoch` when its log for that epoch ends below the fetch
//!   offset;
//! - when the metadata names a new leader epoch, the position is held
//!   (not fetched) until an OffsetForLeaderEpoch to the leader (v3+; a
//!   broker serving less is not asked) gives the end offset of
//!   `offset_epoch` in the new leader's log.
//!
//! Either answer is a [`Verdict`]. A truncation moves the position back to
//! the first offset known to diverge and is reported (warn log and
//! [`ConsumerMetricsSnapshot::log_truncations`](crate::ConsumerMetricsSnapshot)); under
//! `auto.offset.reset=none` it is [`ReaderError::LogTruncation`] instead
//! and the position stays for the application to seek from. A truncation
//! whose divergence point the leader does not know is left to
//! `auto.offset.reset`.

use super::{AutoOffsetReset, Reader, ReaderError, needs_metadata};
use kafka_proto::messages::{
    OffsetForLeaderEpochRequest, OffsetForLeaderEpochRequestPartition,
    OffsetForLeaderEpochRequestTopic,
};
use kafka_proto::{ApiKey, ErrorCode};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Why a position is not fetched from until the reader acts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Hold {
    /// Move it by `auto.offset.reset` first: Fetch answered
    /// OFFSET_OUT_OF_RANGE, or the log was truncated at an unknown point.
    Reset,
    /// Check it with OffsetForLeaderEpoch first: the leader changed since
    /// its batch was fetched.
    Validate,
}

/// The oldest OffsetForLeaderEpoch version a consumer may use (v3 adds
/// `replica_id`; Java's `hasUsableOffsetForLeaderEpochVersion`).
const MIN_VALIDATION_VERSION: i16 = 3;

/// What a leader's end offset for a position's epoch says about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verdict {
    /// The leader's log holds everything below the position.
    Valid,
    /// The log was truncated: it diverges from `offset`, the end of
    /// `epoch` in the leader's log.
    Diverged {
        /// The first offset known to diverge.
        offset: i64,
        /// The largest epoch at or below the position's in the leader's log.
        epoch: i32,
    },
    /// The leader knows no end offset for the epoch.
    Unknown,
}

impl Verdict {
    /// Judges `position` by the leader's `end_offset` of `epoch` (both
    /// -1 when undefined).
    pub(super) fn of(position: i64, epoch: i32, end_offset: i64) -> Self {
        if epoch < 0 || end_offset < 0 {
            Verdict::Unknown
        } else if end_offset < position {
            Verdict::Diverged {
                offset: end_offset,
                epoch,
            }
        } else {
            Verdict::Valid
        }
    }
}

impl Reader {
    /// Notes each partition leader's epoch from the metadata; a position
    /// that has an `offset_epoch` and was fetched under an older leader
    /// epoch is held for validation, and a preferred read replica is
    /// forgotten on any leader change. Metadata older than what the
    /// position saw is ignored.
    pub(super) fn track_leaders(&mut self) {
        let md = self.cluster.metadata();
        for (t, ps) in self.assignment.iter_mut() {
            for (p, st) in ps.iter_mut() {
                let Some(pm) = md.partition(t, *p) else {
                    continue;
                };
                if pm.leader.is_none() || pm.leader_epoch < 0 || st.position.is_none() {
                    continue;
                }
                match st.leader_epoch {
                    Some(e) if e >= pm.leader_epoch => {}
                    None => st.leader_epoch = Some(pm.leader_epoch),
                    Some(old) => {
                        tracing::debug!(topic = %t, partition = p, old_epoch = old, new_epoch = pm.leader_epoch, "reader: leader changed");
                        st.leader_epoch = Some(pm.leader_epoch);
                        st.preferred_replica = None;
                        if st.offset_epoch.is_some() && st.hold.is_none() {
                            st.hold = Some(Hold::Validate);
                        }
                    }
                }
            }
        }
    }

    /// Applies a [`Verdict`] on the position `position` of a partition:
    /// see the module docs.
    pub(super) fn apply_verdict(
        &mut self,
        topic: &str,
        partition: i32,
        position: i64,
        verdict: Verdict,
    ) -> Result<(), ReaderError> {
        let none = self.config.auto_offset_reset == AutoOffsetReset::None;
        let state = self.state_mut(topic, partition)?;
        if state.position != Some(position) {
            return Ok(()); // moved meanwhile
        }
        match verdict {
            Verdict::Valid => {
                state.hold = None;
                Ok(())
            }
            Verdict::Diverged { .. } | Verdict::Unknown if none => {
                let divergent_offset = offset_of(verdict);
                tracing::warn!(
                    topic,
                    partition,
                    position,
                    ?divergent_offset,
                    "reader: log truncation detected; auto.offset.reset=none: the application must seek"
                );
                Err(ReaderError::LogTruncation {
                    topic: topic.to_string(),
                    partition,
                    position,
                    divergent_offset,
                })
            }
            Verdict::Diverged { offset, epoch } => {
                state.position = Some(offset);
                state.offset_epoch = Some(epoch);
                state.hold = None;
                self.metrics.log_truncation();
                tracing::warn!(
                    topic,
                    partition,
                    old_position = position,
                    new_position = offset,
                    "reader: log truncation detected; moved back to the first offset known to diverge"
                );
                Ok(())
            }
            Verdict::Unknown => {
                tracing::warn!(
                    topic,
                    partition,
                    position,
                    "reader: log truncation detected without a divergence point; resetting by auto.offset.reset"
                );
                state.hold = Some(Hold::Reset);
                Ok(())
            }
        }
    }

    /// Validates every position held for it with OffsetForLeaderEpoch to
    /// its leader (one request per leader). Retriable failures leave the
    /// positions held (tried again next round); a broker without v3+ is not
    /// asked (the positions are fetched unvalidated, as in Java).
    pub(super) async fn validate_positions(&mut self) -> Result<(), ReaderError> {
        // leader -> topic -> [(partition, position, offset epoch, leader epoch)]
        type Ask = (i32, i64, i32, i32);
        let mut by_leader: BTreeMap<i32, BTreeMap<Arc<str>, Vec<Ask>>> = BTreeMap::new();
        {
            let md = self.cluster.metadata();
            for (t, ps) in &self.assignment {
                for (p, st) in ps {
                    let (Some(Hold::Validate), Some(pos), Some(oe)) =
                        (st.hold, st.position, st.offset_epoch)
                    else {
                        continue;
                    };
                    let Some(leader) = md.partition(t, *p).and_then(|pm| pm.leader) else {
                        continue;
                    };
                    by_leader
                        .entry(leader)
                        .or_default()
                        .entry(t.clone())
                        .or_default()
                        .push((*p, pos, oe, st.leader_epoch.unwrap_or(-1)));
                }
            }
        }
        let mut first_error: Option<ReaderError> = None;
        for (node, topics) in by_leader {
            let conn = match self.connection(node).await {
                Ok(c) => c,
                Err(e) if e.is_retriable() => continue,
                Err(e) => return Err(e),
            };
            let version = conn
                .versions()
                .version_for::<OffsetForLeaderEpochRequest>()
                .ok()
                .filter(|v| *v >= MIN_VALIDATION_VERSION);
            let Some(version) = version else {
                // Java's updatePositionLeaderNoValidation.
                for (t, parts) in &topics {
                    for (p, ..) in parts {
                        if let Ok(st) = self.state_mut(t, *p) {
                            st.hold = None;
                        }
                    }
                }
                continue;
            };
            let req = OffsetForLeaderEpochRequest {
                replica_id: -1,
                topics: topics
                    .iter()
                    .map(|(t, parts)| OffsetForLeaderEpochRequestTopic {
                        topic: t.to_string(),
                        partitions: parts
                            .iter()
                            .map(|(p, _, oe, le)| OffsetForLeaderEpochRequestPartition {
                                partition: *p,
                                current_leader_epoch: *le,
                                leader_epoch: *oe,
                                ..Default::default()
                            })
                            .collect(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            };
            let resp = match conn.send(&req, version).await {
                Ok(r) => r,
                Err(e) => {
                    self.cluster.invalidate();
                    if e.is_retriable() {
                        self.last_error = Some(e.to_string());
                        continue;
                    }
                    return Err(e.into());
                }
            };
            for rt in resp.topics {
                let Some((topic, parts)) = topics.iter().find(|(t, _)| ***t == *rt.topic) else {
                    continue;
                };
                for rp in rt.partitions {
                    let Some(&(p, pos, _, _)) = parts.iter().find(|a| a.0 == rp.partition) else {
                        continue;
                    };
                    let error = ErrorCode::from(rp.error_code);
                    if error.is_ok() {
                        let verdict = Verdict::of(pos, rp.leader_epoch, rp.end_offset);
                        tracing::debug!(topic = %topic, partition = p, position = pos, ?verdict, "reader: position validated");
                        if let Err(e) = self.apply_verdict(topic, p, pos, verdict) {
                            first_error.get_or_insert(e);
                        }
                        continue;
                    }
                    let e = ReaderError::Partition {
                        api: ApiKey::OffsetForLeaderEpoch,
                        version,
                        topic: topic.to_string(),
                        partition: p,
                        error,
                    };
                    if needs_metadata(error) {
                        self.cluster.invalidate();
                    }
                    if error.is_retriable() || error == ErrorCode::UnknownLeaderEpoch {
                        self.last_error = Some(e.to_string());
                    } else {
                        first_error.get_or_insert(e);
                    }
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

/// The divergence offset a verdict names, if any.
fn offset_of(v: Verdict) -> Option<i64> {
    match v {
        Verdict::Diverged { offset, .. } => Some(offset),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Invariant (Java's `maybeCompleteValidation`): a position is valid
    /// while the leader's log for its epoch reaches it; below it the log
    /// diverges at the leader's end offset; an undefined answer is a
    /// truncation at an unknown point.
    #[test]
    fn verdicts() {
        assert_eq!(Verdict::of(100, 3, 100), Verdict::Valid);
        assert_eq!(Verdict::of(100, 3, 250), Verdict::Valid);
        assert_eq!(
            Verdict::of(100, 2, 80),
            Verdict::Diverged {
                offset: 80,
                epoch: 2
            }
        );
        assert_eq!(Verdict::of(100, -1, -1), Verdict::Unknown);
        assert_eq!(Verdict::of(100, 3, -1), Verdict::Unknown);
        assert_eq!(offset_of(Verdict::of(100, 2, 80)), Some(80));
    }
}
