//! KIP-392 fetching from the nearest replica (Java's `AbstractFetch.selectReadReplica`):
//! a Fetch to the leader carries `client.rack`; a leader whose
//! `replica.selector.class` prefers another replica answers with its id in
//! `preferred_read_replica` (and no records), and the partition is fetched
//! from that replica until
//!
//! - the replica answers with an error (not leader or follower, storage
//!   error, fenced epoch, offset not available, out of range — the follower
//!   may lag the leader's log start) or its connection fails,
//! - the partition's leader changes,
//! - `metadata.max.age.ms` passes (the leader is asked again), or
//! - the replica is no longer in the metadata or is offline,
//!
//! after which the partition goes back to its leader. ListOffsets and
//! OffsetForLeaderEpoch always go to the leader.

use kafka_client::PartitionMetadata;
use kafka_proto::ErrorCode;
use std::collections::BTreeMap;
use std::time::Instant;

/// The replica a leader named to fetch one partition from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Preferred {
    /// The replica's broker id.
    pub node: i32,
    /// When the choice lapses and the leader is asked again
    /// (`metadata.max.age.ms` after the leader named it).
    pub until: Instant,
}

/// The broker to fetch a partition from: its preferred replica while the
/// choice holds and the replica is known and online, else the leader. A
/// lapsed or unusable choice is forgotten (`preferred` set to `None`).
pub(super) fn fetch_node<B>(
    preferred: &mut Option<Preferred>,
    leader: i32,
    partition: &PartitionMetadata,
    brokers: &BTreeMap<i32, B>,
    now: Instant,
) -> i32 {
    let Some(p) = *preferred else {
        return leader;
    };
    let online = brokers.contains_key(&p.node) && !partition.offline_replicas.contains(&p.node);
    if now >= p.until || !online {
        if !online {
            tracing::debug!(
                replica = p.node,
                partition = partition.partition,
                "reader: preferred read replica unknown or offline; fetching from the leader"
            );
        }
        *preferred = None;
        return leader;
    }
    p.node
}

/// Partition errors after which Java stops fetching from a preferred
/// replica (it refreshes metadata for them too).
pub(super) fn drops_preferred(e: ErrorCode) -> bool {
    // Out of range too: a follower may lag the leader's log start.
    super::replica_out_of_date(e) || matches!(e, ErrorCode::OffsetOutOfRange)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn partition(offline: &[i32]) -> PartitionMetadata {
        PartitionMetadata {
            partition: 0,
            leader: Some(1),
            leader_epoch: 3,
            replicas: vec![1, 2, 3],
            isr: vec![1, 2, 3],
            offline_replicas: offline.to_vec(),
            error: ErrorCode::None,
        }
    }

    /// Invariant: a partition is fetched from its preferred replica only
    /// while the choice is fresh and the replica is known and online;
    /// otherwise from its leader, and the choice is forgotten.
    #[test]
    fn preferred_replica_until_it_lapses_or_goes_offline() {
        let now = Instant::now();
        let brokers: BTreeMap<i32, ()> = [(1, ()), (2, ()), (3, ())].into();
        let fresh = Some(Preferred {
            node: 2,
            until: now + Duration::from_secs(300),
        });
        let mut p = fresh;
        assert_eq!(fetch_node(&mut p, 1, &partition(&[]), &brokers, now), 2);
        assert_eq!(p, fresh);
        // Lapsed: back to the leader, forgotten.
        let later = now + Duration::from_secs(301);
        assert_eq!(fetch_node(&mut p, 1, &partition(&[]), &brokers, later), 1);
        assert_eq!(p, None);
        // Offline or unknown replica: the leader.
        let mut p = fresh;
        assert_eq!(fetch_node(&mut p, 1, &partition(&[2]), &brokers, now), 1);
        assert_eq!(p, None);
        let mut p = fresh;
        let without_2: BTreeMap<i32, ()> = [(1, ()), (3, ())].into();
        assert_eq!(fetch_node(&mut p, 1, &partition(&[]), &without_2, now), 1);
        // No choice: the leader.
        assert_eq!(fetch_node(&mut None, 1, &partition(&[]), &brokers, now), 1);
    }

    /// The errors a follower gives when it cannot serve the partition send
    /// the consumer back to the leader; others (e.g. authorization) do not.
    #[test]
    fn replica_errors_go_back_to_the_leader() {
        assert!(drops_preferred(ErrorCode::NotLeaderOrFollower));
        assert!(drops_preferred(ErrorCode::OffsetOutOfRange));
        assert!(drops_preferred(ErrorCode::OffsetNotAvailable));
        assert!(!drops_preferred(ErrorCode::TopicAuthorizationFailed));
    }
}
