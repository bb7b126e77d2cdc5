//! A group's committed offsets (FindCoordinator(GROUP), then OffsetFetch
//! through [`kafka_client::requests::offset_fetch`]), retried within the
//! reader's `api_timeout`.

use super::{IsolationLevel, Reader, ReaderError};
use kafka_client::Connection;
use kafka_client::requests::offset_fetch::{TopicPartitions, offset_fetch_on};
use kafka_client::{CoordinatorType, find_coordinator};
use kafka_proto::{ApiKey, ErrorCode};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

impl Reader {
    /// The committed offsets of `group_id` for `partitions` of `topic`
    /// (FindCoordinator(GROUP) then OffsetFetch; under read_committed with
    /// `require_stable`, so offsets of pending transactions are waited for).
    /// `None` where the group has no offset. Retried for up to `api_timeout`.
    ///
    /// ```no_run
    /// # async fn demo(reader: &kafka_consumer::Reader) -> Result<(), kafka_consumer::ReaderError> {
    /// let committed = reader.committed_offsets("billing", "orders", &[0, 1]).await?;
    /// println!("billing resumes orders-0 at {:?}", committed[&0]);
    /// # Ok(()) }
    /// ```
    pub async fn committed_offsets(
        &self,
        group_id: &str,
        topic: &str,
        partitions: &[i32],
    ) -> Result<BTreeMap<i32, Option<i64>>, ReaderError> {
        let deadline = Instant::now() + self.config.api_timeout;
        loop {
            let e = match self.committed_once(group_id, topic, partitions).await {
                Ok(r) => return Ok(r),
                Err(e) if e.is_retriable() => e,
                Err(e) => return Err(e),
            };
            tracing::debug!(error = %e, "reader: OffsetFetch retry");
            let now = Instant::now();
            if now >= deadline {
                return Err(ReaderError::Timeout {
                    what: format!("OffsetFetch {group_id} {topic} {partitions:?}"),
                    after: self.config.api_timeout,
                    last_error: Some(e.to_string()),
                });
            }
            tokio::time::sleep(self.config.retry_backoff.min(deadline - now)).await;
        }
    }

    /// The connection to `group_id`'s coordinator: FindCoordinator(GROUP)
    /// through [`kafka_client::find_coordinator`], once
    /// (a retriable error says so in [`ReaderError::is_retriable`]).
    pub async fn group_coordinator(&self, group_id: &str) -> Result<Arc<Connection>, ReaderError> {
        let found = find_coordinator(&self.cluster, CoordinatorType::Group, group_id).await?;
        Ok(found.connection)
    }

    async fn committed_once(
        &self,
        group_id: &str,
        topic: &str,
        partitions: &[i32],
    ) -> Result<BTreeMap<i32, Option<i64>>, ReaderError> {
        let conn = self.group_coordinator(group_id).await?;
        let wanted = [TopicPartitions { topic, partitions }];
        let require_stable = self.config.isolation == IsolationLevel::ReadCommitted;
        let answer = offset_fetch_on(
            &conn,
            &self.cluster,
            group_id,
            Some(&wanted),
            require_stable,
        )
        .await?;
        let mut out: BTreeMap<i32, Option<i64>> = partitions.iter().map(|p| (*p, None)).collect();
        for p in answer.partitions {
            if &*p.partition.topic != topic {
                continue;
            }
            match p.error {
                ErrorCode::None => {
                    out.insert(p.partition.partition, p.offset);
                }
                // Java logs and leaves the partition without an offset.
                ErrorCode::UnknownTopicOrPartition => {}
                error => {
                    return Err(ReaderError::Partition {
                        api: ApiKey::OffsetFetch,
                        version: answer.version,
                        topic: topic.to_string(),
                        partition: p.partition.partition,
                        error,
                    });
                }
            }
        }
        Ok(out)
    }
}
