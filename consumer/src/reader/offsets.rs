//! Positions: seeks, ListOffsets at the reader's isolation level (the
//! earliest offset, the end, or the first offset at a timestamp), waiting
//! until no transaction is open below the end (`auto.offset.reset` is
//! applied in `reset.rs`).

use super::{IsolationLevel, ListedOffset, Offset, Reader, ReaderError, needs_metadata};
use kafka_proto::messages::{
    ListOffsetsRequest, ListOffsetsRequestPartition, ListOffsetsRequestTopic,
};
use kafka_proto::{ApiKey, ErrorCode};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

impl Reader {
    /// Moves an assigned partition's position; [`Offset::Earliest`],
    /// [`Offset::Latest`] and [`Offset::Timestamp`] are resolved with
    /// ListOffsets at the reader's isolation level (read_committed: Latest is
    /// the last stable offset). Returns the new position.
    ///
    /// ```no_run
    /// # async fn demo(reader: &mut kafka_consumer::Reader) -> Result<(), kafka_consumer::ReaderError> {
    /// use kafka_consumer::Offset;
    /// reader.assign("orders", &[0]);
    /// let end = reader.seek("orders", 0, Offset::Latest).await?; // the LSO under read_committed
    /// println!("only records after {end} will be read");
    /// # Ok(()) }
    /// ```
    pub async fn seek(
        &mut self,
        topic: &str,
        partition: i32,
        offset: Offset,
    ) -> Result<i64, ReaderError> {
        self.state_mut(topic, partition)?;
        let resolved = self.resolve(topic, &[partition], offset).await?;
        let at = resolved[&partition];
        self.forget_ready(topic, &[partition]);
        self.state_mut(topic, partition)?.seek_to(at);
        Ok(at)
    }

    /// Resolves `offset` for each partition; timestamp lookups with no match
    /// fall back to the end.
    pub(super) async fn resolve(
        &self,
        topic: &str,
        partitions: &[i32],
        offset: Offset,
    ) -> Result<BTreeMap<i32, i64>, ReaderError> {
        if let Offset::At(o) = offset {
            return Ok(partitions.iter().map(|p| (*p, o)).collect());
        }
        let listed = self.list_offsets(topic, partitions, offset).await?;
        let mut out = BTreeMap::new();
        let mut missing = Vec::new();
        for (p, l) in &listed {
            match l.offset {
                Some(o) => {
                    out.insert(*p, o);
                }
                None => missing.push(*p),
            }
        }
        if !missing.is_empty() {
            for (p, l) in self.list_offsets(topic, &missing, Offset::Latest).await? {
                out.insert(p, l.offset.unwrap_or(0));
            }
        }
        Ok(out)
    }

    /// ListOffsets for `partitions` of `topic` at the reader's isolation
    /// level, retried on retriable errors for up to `api_timeout`.
    /// [`Offset::At`] is returned as is.
    ///
    /// ```no_run
    /// # async fn demo(reader: &kafka_consumer::Reader) -> Result<(), kafka_consumer::ReaderError> {
    /// use kafka_consumer::Offset;
    /// let ends = reader.list_offsets("orders", &[0, 1, 2], Offset::Latest).await?;
    /// for (partition, listed) in &ends {
    ///     println!("orders-{partition} ends at {:?}", listed.offset);
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn list_offsets(
        &self,
        topic: &str,
        partitions: &[i32],
        offset: Offset,
    ) -> Result<BTreeMap<i32, ListedOffset>, ReaderError> {
        self.list_offsets_isolated(topic, partitions, offset, self.config.isolation)
            .await
    }

    /// Waits until no transaction is open on `partitions` of `topic`: on
    /// each, the last stable offset (the latest offset read_committed) has
    /// reached the high watermark (read_uncommitted), whatever the reader's
    /// own isolation level. A commit or abort returns once the transaction
    /// coordinator has logged the decision; the markers that end the
    /// transaction in each partition, and so move its last stable offset,
    /// are written after. A check that reads what a closed producer
    /// committed waits here first. [`ReaderError::Timeout`] after `timeout`,
    /// naming the partitions still open.
    ///
    /// ```no_run
    /// # async fn demo(reader: &kafka_consumer::Reader) -> Result<(), kafka_consumer::ReaderError> {
    /// use std::time::Duration;
    /// // After the transactional producer writing to orders-0..2 committed and closed:
    /// reader.wait_until_stable("orders", &[0, 1, 2], Duration::from_secs(30)).await?;
    /// # Ok(()) }
    /// ```
    pub async fn wait_until_stable(
        &self,
        topic: &str,
        partitions: &[i32],
        timeout: Duration,
    ) -> Result<(), ReaderError> {
        let deadline = Instant::now() + timeout;
        let mut backoff = Duration::from_millis(10);
        loop {
            let high = self
                .list_offsets_isolated(
                    topic,
                    partitions,
                    Offset::Latest,
                    IsolationLevel::ReadUncommitted,
                )
                .await?;
            let stable = self
                .list_offsets_isolated(
                    topic,
                    partitions,
                    Offset::Latest,
                    IsolationLevel::ReadCommitted,
                )
                .await?;
            let open: Vec<String> = partitions
                .iter()
                .filter_map(|p| {
                    let hw = high.get(p).and_then(|l| l.offset);
                    let lso = stable.get(p).and_then(|l| l.offset);
                    (lso != hw)
                        .then(|| format!("{topic}-{p} stable at {lso:?}, high watermark {hw:?}"))
                })
                .collect();
            if open.is_empty() {
                return Ok(());
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(ReaderError::Timeout {
                    what: format!("open transactions ending ({})", open.join(", ")),
                    after: timeout,
                    last_error: None,
                });
            }
            tokio::time::sleep(backoff.min(deadline - now)).await;
            backoff = (backoff * 2).min(Duration::from_millis(200));
        }
    }

    /// [`Reader::list_offsets`] at isolation level `isolation`.
    async fn list_offsets_isolated(
        &self,
        topic: &str,
        partitions: &[i32],
        offset: Offset,
        isolation: IsolationLevel,
    ) -> Result<BTreeMap<i32, ListedOffset>, ReaderError> {
        let Some(timestamp) = offset.list_offsets_timestamp() else {
            let Offset::At(o) = offset else {
                unreachable!("only At has no ListOffsets timestamp")
            };
            return Ok(partitions
                .iter()
                .map(|p| {
                    let l = ListedOffset {
                        offset: Some(o),
                        timestamp: None,
                        leader_epoch: None,
                    };
                    (*p, l)
                })
                .collect());
        };
        let deadline = Instant::now() + self.config.api_timeout;
        let mut out = BTreeMap::new();
        let mut todo: BTreeSet<i32> = partitions.iter().copied().collect();
        let mut last_error: Option<String> = None;
        loop {
            if let Err(e) = self.ensure_metadata(&[topic]).await {
                if !e.is_retriable() {
                    return Err(e.into());
                }
                last_error = Some(e.to_string());
            }
            let mut by_leader: BTreeMap<i32, Vec<(i32, i32)>> = BTreeMap::new();
            {
                let md = self.cluster.metadata();
                for p in &todo {
                    match md.partition(topic, *p) {
                        Some(pm) if pm.leader.is_some() => by_leader
                            .entry(pm.leader.unwrap_or_default())
                            .or_default()
                            .push((*p, pm.leader_epoch)),
                        _ => last_error = Some(format!("no leader known for {topic}-{p}")),
                    }
                }
            }
            if by_leader.is_empty() && !todo.is_empty() {
                self.cluster.invalidate();
            }
            for (node, parts) in by_leader {
                match self
                    .list_offsets_on(node, topic, &parts, timestamp, isolation, &mut out)
                    .await
                {
                    Ok(()) => {}
                    Err(e) if e.is_retriable() => {
                        last_error = Some(e.to_string());
                    }
                    Err(e) => return Err(e),
                }
            }
            todo.retain(|p| !out.contains_key(p));
            if todo.is_empty() {
                return Ok(out);
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(ReaderError::Timeout {
                    what: format!("ListOffsets {topic} {todo:?}"),
                    after: self.config.api_timeout,
                    last_error,
                });
            }
            tokio::time::sleep(self.config.retry_backoff.min(deadline - now)).await;
        }
    }

    /// One ListOffsets request to `node`; fills `out` with the partitions
    /// answered without error; retriable partition errors invalidate the
    /// metadata and are reported as a retriable error.
    async fn list_offsets_on(
        &self,
        node: i32,
        topic: &str,
        parts: &[(i32, i32)],
        timestamp: i64,
        isolation: IsolationLevel,
        out: &mut BTreeMap<i32, ListedOffset>,
    ) -> Result<(), ReaderError> {
        let conn = self.connection(node).await?;
        let version = conn.versions().version_for::<ListOffsetsRequest>()?;
        let req = ListOffsetsRequest {
            replica_id: -1,
            isolation_level: if version >= 2 { isolation.wire() } else { 0 },
            topics: vec![ListOffsetsRequestTopic {
                name: topic.to_string(),
                partitions: parts
                    .iter()
                    .map(|(p, epoch)| ListOffsetsRequestPartition {
                        partition_index: *p,
                        current_leader_epoch: if version >= 4 { *epoch } else { -1 },
                        timestamp,
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }],
            timeout_ms: if version >= 10 {
                i32::try_from(self.cluster.config().connection.request_timeout.as_millis())
                    .unwrap_or(i32::MAX)
            } else {
                0
            },
            ..Default::default()
        };
        let resp = match conn.send(&req, version).await {
            Ok(r) => r,
            Err(e) => {
                self.cluster.invalidate();
                return Err(e.into());
            }
        };
        let mut retry: Option<ReaderError> = None;
        for t in resp.topics.iter().filter(|t| t.name == topic) {
            for p in &t.partitions {
                let error = ErrorCode::from(p.error_code);
                if error.is_ok() {
                    out.insert(
                        p.partition_index,
                        ListedOffset {
                            offset: (p.offset >= 0).then_some(p.offset),
                            timestamp: (p.timestamp >= 0).then_some(p.timestamp),
                            leader_epoch: (p.leader_epoch >= 0).then_some(p.leader_epoch),
                        },
                    );
                    continue;
                }
                let e = ReaderError::Partition {
                    api: ApiKey::ListOffsets,
                    version,
                    topic: topic.to_string(),
                    partition: p.partition_index,
                    error,
                };
                if needs_metadata(error) {
                    self.cluster.invalidate();
                }
                if !e.is_retriable() {
                    return Err(e);
                }
                retry = Some(e);
            }
        }
        retry.map_or(Ok(()), Err)
    }
}
