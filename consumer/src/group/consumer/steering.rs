//! Steering a [`GroupConsumer`] as Java's `KafkaConsumer` allows: move the
//! position of an owned partition (`seek`), stop and restart fetching it
//! (`pause` / `resume`), read the group's committed offsets
//! (`committed`), and change the subscription while running.
//!
//! Positions and pauses belong to the partitions the consumer owns: a
//! partition revoked or lost forgets both, one that stays assigned across
//! a rebalance keeps both (Java's `SubscriptionState`). An eager classic
//! member (`range`) gives every partition up before each rebalance, so its
//! pauses end there, as in Java.

use super::{GroupConsumer, GroupError, Member, lock};
use crate::group::subscription::{Subscription, TopicPattern};
use crate::reader::{Offset, ReaderError};
use kafka_client::requests::offset_fetch::{TopicPartitions, offset_fetch_on};
use kafka_client::{OffsetAndMetadata, TopicPartition};
use kafka_proto::{ApiKey, ErrorCode};
use std::collections::BTreeMap;
use std::time::Instant;

impl GroupConsumer {
    /// [`GroupError::NotAssigned`] for the first of `parts` not owned.
    fn check_owned(&self, parts: &[TopicPartition]) -> Result<(), GroupError> {
        match parts.iter().find(|tp| !self.owned.contains(*tp)) {
            Some(tp) => Err(GroupError::NotAssigned {
                topic: tp.topic.to_string(),
                partition: tp.partition,
            }),
            None => Ok(()),
        }
    }

    /// Moves the position of an owned partition (Java's `seek`): the next
    /// [`poll`](Self::poll) returns its records from there, and what was
    /// fetched from the old position and not returned yet is dropped.
    /// [`Offset::Earliest`], [`Offset::Latest`] (the last stable offset
    /// under read_committed) and [`Offset::Timestamp`] (the first record at
    /// or after it, else the end) are looked up with ListOffsets. Returns
    /// the new position; [`GroupError::NotAssigned`] for a partition this
    /// consumer does not own. Committing is left to the application, as in
    /// Java.
    pub async fn seek(&mut self, tp: &TopicPartition, to: Offset) -> Result<i64, GroupError> {
        self.check_owned(std::slice::from_ref(tp))?;
        let at = self.reader.seek(&tp.topic, tp.partition, to).await?;
        self.buffer.drop_partition(tp);
        // The leader epoch of the new position is unknown.
        self.epochs.remove(tp);
        Ok(at)
    }

    /// [`Self::seek`] of each of `parts` to its log start offset (Java's
    /// `seekToBeginning`); none moves when one is not owned.
    pub async fn seek_to_beginning(&mut self, parts: &[TopicPartition]) -> Result<(), GroupError> {
        self.seek_all(parts, Offset::Earliest).await
    }

    /// [`Self::seek`] of each of `parts` to its end (Java's `seekToEnd`:
    /// the last stable offset under read_committed); none moves when one is
    /// not owned.
    pub async fn seek_to_end(&mut self, parts: &[TopicPartition]) -> Result<(), GroupError> {
        self.seek_all(parts, Offset::Latest).await
    }

    async fn seek_all(&mut self, parts: &[TopicPartition], to: Offset) -> Result<(), GroupError> {
        self.check_owned(parts)?;
        for tp in parts {
            self.seek(tp, to).await?;
        }
        Ok(())
    }

    /// Stops fetching `parts` (Java's `pause`) until [`Self::resume`]:
    /// [`poll`](Self::poll) returns none of their records, those already
    /// fetched wait (not lost), and their positions stay, so that
    /// [`Self::positions`] commits nothing they did not return. Group
    /// membership goes on. A pause lasts while the partition stays
    /// assigned, rebalances included; [`GroupError::NotAssigned`] (and
    /// nothing paused) when one of `parts` is not owned.
    pub fn pause(&mut self, parts: &[TopicPartition]) -> Result<(), GroupError> {
        self.check_owned(parts)?;
        for tp in parts {
            self.reader.pause(&tp.topic, &[tp.partition]);
        }
        Ok(())
    }

    /// Fetches `parts` again from their positions (Java's `resume`); the
    /// records held back come first. [`GroupError::NotAssigned`] (and
    /// nothing resumed) when one is not owned.
    pub fn resume(&mut self, parts: &[TopicPartition]) -> Result<(), GroupError> {
        self.check_owned(parts)?;
        for tp in parts {
            self.reader.resume(&tp.topic, &[tp.partition]);
        }
        Ok(())
    }

    /// The paused partitions (Java's `paused`).
    pub fn paused(&self) -> Vec<TopicPartition> {
        self.reader
            .paused()
            .into_iter()
            .map(|(t, p)| TopicPartition::new(t.as_str(), p))
            .collect()
    }

    /// The group's committed offsets of `parts` (Java's `committed`), owned
    /// or not: `None` where the group has none. OffsetFetch with
    /// `RequireStable`, so an offset a transaction is still committing is
    /// waited for; retriable errors are retried for up to
    /// `default.api.timeout.ms`.
    pub async fn committed(
        &self,
        parts: &[TopicPartition],
    ) -> Result<BTreeMap<TopicPartition, Option<OffsetAndMetadata>>, GroupError> {
        let deadline = Instant::now() + self.config.api_timeout;
        loop {
            let e = match self.committed_once(parts).await {
                Ok(m) => return Ok(m),
                Err(e) if e.is_retriable() => e,
                Err(e) => return Err(e.into()),
            };
            tracing::debug!(error = %e, group = %self.config.group_id, "group consumer: OffsetFetch retry");
            let now = Instant::now();
            if now >= deadline {
                return Err(GroupError::Timeout {
                    what: format!("OffsetFetch of group {}", self.config.group_id),
                    after: self.config.api_timeout,
                    last_error: Some(e.to_string()),
                });
            }
            tokio::time::sleep(self.config.retry_backoff.min(deadline - now)).await;
        }
    }

    async fn committed_once(
        &self,
        parts: &[TopicPartition],
    ) -> Result<BTreeMap<TopicPartition, Option<OffsetAndMetadata>>, ReaderError> {
        let mut by_topic: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
        for tp in parts {
            by_topic.entry(&tp.topic).or_default().push(tp.partition);
        }
        let wanted: Vec<TopicPartitions<'_>> = by_topic
            .iter()
            .map(|(topic, partitions)| TopicPartitions { topic, partitions })
            .collect();
        let group = &self.config.group_id;
        let conn = self.reader.group_coordinator(group).await?;
        let answer = offset_fetch_on(&conn, &self.cluster, group, Some(&wanted), true).await?;
        let mut out: BTreeMap<TopicPartition, Option<OffsetAndMetadata>> =
            parts.iter().map(|tp| (tp.clone(), None)).collect();
        for p in answer.partitions {
            match p.error {
                ErrorCode::None => {
                    if let (Some(slot), Some(offset)) = (out.get_mut(&p.partition), p.offset) {
                        *slot = Some(OffsetAndMetadata {
                            offset,
                            leader_epoch: p.leader_epoch,
                            metadata: p.metadata,
                        });
                    }
                }
                // A topic the broker does not know has no offsets (Java
                // logs and leaves it out).
                ErrorCode::UnknownTopicOrPartition => {}
                error => {
                    return Err(ReaderError::Partition {
                        api: ApiKey::OffsetFetch,
                        version: answer.version,
                        topic: p.partition.topic.to_string(),
                        partition: p.partition.partition,
                        error,
                    });
                }
            }
        }
        Ok(out)
    }

    /// The subscription in force.
    pub fn subscription(&self) -> &Subscription {
        &self.subscription
    }

    /// Replaces the subscription while running (Java's `subscribe` again).
    /// Under KIP-848 the next heartbeat, sent at once, carries it and the
    /// broker moves the assignment; under the classic protocol the member
    /// rejoins (for a pattern, once it matched every topic's metadata,
    /// fetched at once). Either way partitions of topics no longer
    /// subscribed come back [`Revoked`](super::ConsumerEvent::Revoked) and
    /// new ones [`Assigned`](super::ConsumerEvent::Assigned) from later
    /// polls. [`GroupError::InvalidPattern`] for a pattern the classic
    /// member cannot compile.
    pub fn resubscribe(&mut self, subscription: Subscription) -> Result<(), GroupError> {
        let pattern = match (&subscription, self.protocol()) {
            (Subscription::Pattern(p), super::GroupProtocol::Classic) => {
                Some(TopicPattern::new(p)?)
            }
            _ => None,
        };
        if let Subscription::Topics(topics) = &subscription {
            let names: Vec<&String> = topics.iter().collect();
            self.cluster.track_topics(&names);
        }
        {
            let mut guard = lock(&self.shared);
            let s = &mut *guard;
            if s.closing {
                return Err(GroupError::Closed);
            }
            if let Some(e) = &s.fatal {
                return Err(GroupError::Member(e.clone()));
            }
            match (&subscription, &mut s.member) {
                (Subscription::Topics(t), Member::Kip848(m)) => m.subscribe(t.iter().cloned()),
                (Subscription::Pattern(p), Member::Kip848(m)) => m.subscribe_pattern(p.clone()),
                (Subscription::Topics(t), Member::Classic(m)) => {
                    s.pattern = None;
                    s.pattern_check_at = None;
                    m.subscribe(t.iter().cloned());
                }
                (Subscription::Pattern(_), Member::Classic(_)) => {
                    // The driver matches it at once.
                    s.pattern = pattern;
                    s.pattern_check_at = None;
                }
            }
        }
        self.subscription = subscription;
        self.wake_task.notify_one();
        Ok(())
    }
}
