//! Offset commits of a [`GroupConsumer`](super::GroupConsumer), in order.
//!
//! Every commit, awaited ([`GroupConsumer::commit`](super::GroupConsumer::commit),
//! Java's `commitSync`) or not ([`GroupConsumer::commit_async`](super::GroupConsumer::commit_async),
//! Java's `commitAsync`), goes through one queue served by one task, which
//! sends one OffsetCommit at a time and retries a retriable error before it
//! takes the next. So the group coordinator applies the commits in the
//! order the application made them, and a later commit can never be
//! overwritten by an earlier one that was retried (the reason Java's
//! `commitAsync` does not retry; here the queue makes retrying safe). The
//! results complete in the same order. An awaited commit made after
//! un-awaited ones therefore returns only after they are done, as Java's
//! `commitSync` waits for the `commitAsync` calls before it.
//!
//! ```text
//!   commit / commit_async ──► queue (FIFO) ──► commit task: OffsetCommit, retry until
//!                                                 the commit's deadline, then the next
//!   PendingCommit ◄──────────── result ─────────┘
//! ```

use super::consumer::{GroupError, Member, Shared, lock};
use crate::metrics::ConsumerMetrics;
use kafka_client::TopicPartition;
use kafka_proto::ErrorCode;
use kafka_proto::messages::{
    OffsetCommitRequest, OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::sync::{Notify, mpsc, oneshot};

/// The outcome of a commit made with
/// [`GroupConsumer::commit_async`](super::GroupConsumer::commit_async):
/// await it for the result, or drop it (the commit still goes out, in
/// order; a failure of a dropped commit is logged as a warning).
///
/// ```no_run
/// # async fn demo(c: &kafka_consumer::GroupConsumer) -> Result<(), kafka_consumer::GroupError> {
/// let first = c.commit_positions_async();
/// let second = c.commit_positions_async();
/// // The coordinator applies `first` before `second`; results come in that order.
/// first.await?;
/// second.await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
#[must_use = "await the commit for its result, or drop it explicitly to ignore it"]
pub struct PendingCommit {
    /// The commit task's answer; a dropped sender reads as `Closed`.
    result: oneshot::Receiver<Result<(), GroupError>>,
}

impl PendingCommit {
    /// A commit that is already complete.
    fn ready(result: Result<(), GroupError>) -> Self {
        let (tx, rx) = oneshot::channel();
        let _ = tx.send(result);
        Self { result: rx }
    }
}

impl Future for PendingCommit {
    type Output = Result<(), GroupError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.result)
            .poll(cx)
            .map(|r| r.unwrap_or(Err(GroupError::Closed)))
    }
}

/// One queued commit.
struct Job {
    /// The next offsets to commit, per partition.
    offsets: Vec<(TopicPartition, i64)>,
    /// Retriable errors are retried until then; counted from the call, so
    /// the time spent behind earlier commits is part of it.
    deadline: Instant,
    /// Where the outcome goes (the caller's [`PendingCommit`]).
    done: oneshot::Sender<Result<(), GroupError>>,
}

/// The application's end of the commit queue.
#[derive(Debug)]
pub(super) struct CommitQueue {
    /// The commits waiting for the task, in call order.
    jobs: mpsc::UnboundedSender<Job>,
    /// `default.api.timeout.ms`: each job's deadline, counted from its call.
    api_timeout: Duration,
    /// The task that sends the commits one at a time.
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job")
            .field("offsets", &self.offsets.len())
            .finish_non_exhaustive()
    }
}

/// What the commit task needs to build and send an OffsetCommit.
pub(super) struct Committer {
    /// The consumer's state shared with the driver: the member, the coordinator.
    pub(super) shared: Arc<Mutex<Shared>>,
    /// Wakes the group driver (which finds the coordinator).
    pub(super) wake_task: Arc<Notify>,
    /// `group.id`.
    pub(super) group_id: String,
    /// `group.instance.id`, for a static member.
    pub(super) instance_id: Option<String>,
    /// `retry.backoff.ms`: the wait between two tries of a commit.
    pub(super) retry_backoff: Duration,
    /// `default.api.timeout.ms`: how long a commit is retried.
    pub(super) api_timeout: Duration,
    /// Where successful commits and their latency are counted.
    pub(super) metrics: Arc<ConsumerMetrics>,
}

impl CommitQueue {
    /// Starts the commit task.
    pub(super) fn start(committer: Committer) -> Self {
        let (jobs, rx) = mpsc::unbounded_channel();
        let api_timeout = committer.api_timeout;
        let task = tokio::spawn(commit_task(committer, rx));
        Self {
            jobs,
            api_timeout,
            task,
        }
    }

    /// Queues a commit of `offsets` (nothing to send when empty; it still
    /// completes after the commits queued before it).
    pub(super) fn push(&self, offsets: Vec<(TopicPartition, i64)>) -> PendingCommit {
        let (done, result) = oneshot::channel();
        let job = Job {
            offsets,
            deadline: Instant::now() + self.api_timeout,
            done,
        };
        match self.jobs.send(job) {
            Ok(()) => PendingCommit { result },
            Err(_) => PendingCommit::ready(Err(GroupError::Closed)),
        }
    }
}

impl Drop for CommitQueue {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn commit_task(committer: Committer, mut jobs: mpsc::UnboundedReceiver<Job>) {
    while let Some(job) = jobs.recv().await {
        let result = if job.offsets.is_empty() {
            Ok(())
        } else {
            let started = Instant::now();
            let result = committer.commit(&job.offsets, job.deadline).await;
            if result.is_ok() {
                committer.metrics.committed(started.elapsed());
            }
            result
        };
        if let Err(Err(e)) = job.done.send(result) {
            tracing::warn!(group = %committer.group_id, error = %e, "group consumer: an asynchronous offset commit failed");
        }
    }
}

/// A retriable commit failure.
struct Retry(String);

impl Committer {
    /// Commits `offsets`, retrying retriable errors until `deadline`.
    async fn commit(
        &self,
        offsets: &[(TopicPartition, i64)],
        deadline: Instant,
    ) -> Result<(), GroupError> {
        loop {
            let why = match self.commit_once(offsets).await {
                Ok(result) => return result,
                Err(Retry(why)) => why,
            };
            tracing::debug!(%why, "group consumer: OffsetCommit retry");
            let now = Instant::now();
            if now >= deadline {
                return Err(GroupError::Timeout {
                    what: "OffsetCommit".into(),
                    after: self.api_timeout,
                    last_error: Some(why),
                });
            }
            tokio::time::sleep(self.retry_backoff.min(deadline - now)).await;
        }
    }

    async fn commit_once(
        &self,
        offsets: &[(TopicPartition, i64)],
    ) -> Result<Result<(), GroupError>, Retry> {
        let (conn, epoch, member_id, classic) = {
            let s = lock(&self.shared);
            if s.closing {
                return Ok(Err(GroupError::Closed));
            }
            if let Member::Classic(m) = &s.member
                && m.rebalance_in_progress()
            {
                // Java's `generationIfStable`: the generation is being
                // replaced; the coordinator would refuse it.
                return Ok(Err(GroupError::Commit {
                    error: ErrorCode::RebalanceInProgress,
                    message: Some(format!(
                        "the member is rejoining the group (generation {} is being replaced): \
                         poll to complete the rebalance, then commit again",
                        m.generation()
                    )),
                }));
            }
            (
                s.coordinator.clone(),
                s.member.generation(),
                s.member.member_id().to_string(),
                matches!(s.member, Member::Classic(_)),
            )
        };
        let Some(conn) = conn else {
            self.wake_task.notify_one();
            return Err(Retry("no group coordinator yet".into()));
        };
        let version = match conn.versions().version_for::<OffsetCommitRequest>() {
            // A classic member may use any version (the generation is in
            // every one from v1).
            Ok(v) if v >= 9 || classic => v.min(9),
            Ok(v) => {
                return Ok(Err(GroupError::Commit {
                    error: ErrorCode::UnsupportedVersion,
                    message: Some(format!(
                        "OffsetCommit v{v}: a KIP-848 member needs v9 or newer"
                    )),
                }));
            }
            Err(e) => return Ok(Err(GroupError::Reader(e.into()))),
        };
        let mut topics: BTreeMap<&str, Vec<OffsetCommitRequestPartition>> = BTreeMap::new();
        for (tp, offset) in offsets {
            topics
                .entry(&tp.topic)
                .or_default()
                .push(OffsetCommitRequestPartition {
                    partition_index: tp.partition,
                    committed_offset: *offset,
                    ..Default::default()
                });
        }
        let req = OffsetCommitRequest {
            group_id: self.group_id.clone(),
            generation_id_or_member_epoch: epoch,
            member_id: member_id.clone(),
            group_instance_id: self.instance_id.clone(),
            topics: topics
                .into_iter()
                .map(|(name, partitions)| OffsetCommitRequestTopic {
                    name: name.to_string(),
                    partitions,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        let resp = match conn.send(&req, version).await {
            Ok(r) => r,
            Err(e) if e.is_retriable() => {
                self.coordinator_failed();
                return Err(Retry(e.to_string()));
            }
            Err(e) => return Ok(Err(GroupError::Reader(e.into()))),
        };
        let mut retry = None;
        for t in &resp.topics {
            for p in &t.partitions {
                let error = ErrorCode::from(p.error_code);
                match error {
                    ErrorCode::None => {}
                    ErrorCode::NotCoordinator | ErrorCode::CoordinatorNotAvailable => {
                        self.coordinator_failed();
                        retry = Some(format!("{}-{}: {error:?}", t.name, p.partition_index));
                    }
                    e if e.is_retriable() => {
                        retry = Some(format!("{}-{}: {e:?}", t.name, p.partition_index));
                    }
                    e => {
                        let mut message = format!("{}-{}", t.name, p.partition_index);
                        let error = if classic {
                            self.classic_refused(epoch, &member_id, e)
                        } else {
                            e
                        };
                        if error != e {
                            message = format!(
                                "{message}: {e:?} for generation {epoch}, which a rebalance \
                                 replaced while the commit was in flight: poll to complete \
                                 the rebalance, then commit again"
                            );
                        }
                        return Ok(Err(GroupError::Commit {
                            error,
                            message: Some(message),
                        }));
                    }
                }
            }
        }
        match retry {
            Some(why) => Err(Retry(why)),
            None => Ok(Ok(())),
        }
    }

    /// A classic member's commit, sent with `generation` and `member_id`,
    /// was refused with `error`: the member decides what the application
    /// is told and acts on it ([`ClassicMember::on_commit_refused`]); the
    /// task is woken for what it queued (a loss, a rejoin).
    ///
    /// [`ClassicMember::on_commit_refused`]: crate::group::member::classic::ClassicMember::on_commit_refused
    fn classic_refused(&self, generation: i32, member_id: &str, error: ErrorCode) -> ErrorCode {
        let reported = {
            let mut s = lock(&self.shared);
            match &mut s.member {
                Member::Classic(m) => {
                    m.on_commit_refused(Instant::now(), generation, member_id, error)
                }
                Member::Kip848(_) => error,
            }
        };
        self.wake_task.notify_one();
        reported
    }

    fn coordinator_failed(&self) {
        lock(&self.shared).coordinator = None;
        self.wake_task.notify_one();
    }
}

#[cfg(test)]
mod tests {
    //! The commit queue against a scripted coordinator that answers
    //! OffsetCommit as a script says and records the offsets it was asked
    //! to commit, in arrival order.
    use super::*;
    use crate::group::consumer::Shared;
    use crate::group::member::classic::{ClassicConfig, ClassicMember};
    use kafka_client::Connection;
    use kafka_client::internals::scripted_peer::{Seen, Step, api_versions, fast_config, peer};
    use kafka_proto::ApiKey;
    use kafka_proto::frame::{decode_request_frame, encode_response_frame};
    use kafka_proto::messages::{
        OffsetCommitResponse, OffsetCommitResponsePartition, OffsetCommitResponseTopic,
    };

    /// Offsets the coordinator was asked to commit, in arrival order.
    type Arrivals = Arc<Mutex<Vec<i64>>>;

    /// A coordinator whose `n`-th OffsetCommit (from 0) gets `answer(n)`.
    async fn coordinator(
        answer: impl Fn(usize) -> ErrorCode + Send + Sync + 'static,
    ) -> (Arc<Connection>, Arrivals) {
        let arrivals: Arrivals = Arc::default();
        let seen = arrivals.clone();
        let answer = Arc::new(answer);
        let (addr, _log) = peer(move || {
            let seen = seen.clone();
            let answer = answer.clone();
            move |s: Seen| match s.api {
                ApiKey::ApiVersions => {
                    let resp =
                        api_versions(&[(ApiKey::ApiVersions, 0, 4), (ApiKey::OffsetCommit, 2, 9)]);
                    Step::Reply(vec![
                        encode_response_frame(&resp, s.version, s.correlation_id).unwrap(),
                    ])
                }
                ApiKey::OffsetCommit => {
                    let (_, req) = decode_request_frame::<OffsetCommitRequest>(&s.body).unwrap();
                    let offset = req.topics[0].partitions[0].committed_offset;
                    let n = {
                        let mut seen = seen.lock().unwrap();
                        seen.push(offset);
                        seen.len() - 1
                    };
                    let resp = OffsetCommitResponse {
                        topics: vec![OffsetCommitResponseTopic {
                            name: req.topics[0].name.clone(),
                            partitions: vec![OffsetCommitResponsePartition {
                                partition_index: 0,
                                error_code: answer(n).code(),
                                ..Default::default()
                            }],
                            ..Default::default()
                        }],
                        ..Default::default()
                    };
                    Step::Reply(vec![
                        encode_response_frame(&resp, s.version, s.correlation_id).unwrap(),
                    ])
                }
                other => panic!("unexpected {other:?}"),
            }
        })
        .await;
        let conn = Arc::new(Connection::connect(&addr, &fast_config()).await.unwrap());
        (conn, arrivals)
    }

    /// A coordinator that answers `error` to the `refused`-th OffsetCommit
    /// it receives (from 0) and NONE to every other.
    async fn coordinator_refusing(refused: usize, error: ErrorCode) -> (Arc<Connection>, Arrivals) {
        coordinator(move |n| if n == refused { error } else { ErrorCode::None }).await
    }

    /// A commit queue of a classic member whose coordinator is `conn`.
    fn queue_with(conn: Arc<Connection>, api_timeout: Duration) -> CommitQueue {
        let member = ClassicMember::new(ClassicConfig::new("g"));
        queue_of(conn, member, api_timeout).0
    }

    /// A commit queue of `member`, and the state it shares with the
    /// member's task.
    fn queue_of(
        conn: Arc<Connection>,
        member: ClassicMember,
        api_timeout: Duration,
    ) -> (CommitQueue, Arc<Mutex<Shared>>) {
        let mut shared = Shared::new(Member::Classic(member));
        shared.coordinator = Some(conn);
        let shared = Arc::new(Mutex::new(shared));
        let queue = CommitQueue::start(Committer {
            shared: shared.clone(),
            wake_task: Arc::default(),
            group_id: "g".into(),
            instance_id: None,
            retry_backoff: Duration::from_millis(5),
            api_timeout,
            metrics: Arc::new(ConsumerMetrics::new(true)),
        });
        (queue, shared)
    }

    fn queue(conn: Arc<Connection>) -> CommitQueue {
        queue_with(conn, Duration::from_secs(10))
    }

    fn at(offset: i64) -> Vec<(TopicPartition, i64)> {
        vec![(TopicPartition::new("orders", 0), offset)]
    }

    /// Invariant: the coordinator receives the commits in the order they
    /// were made, a retried commit before any later one, so the last
    /// committed offset is the last one asked for; the results complete in
    /// that order.
    #[tokio::test]
    async fn unawaited_commits_reach_the_coordinator_in_order_across_a_retry() {
        // The first attempt is refused with a retriable error.
        let (conn, arrivals) = coordinator_refusing(0, ErrorCode::CoordinatorLoadInProgress).await;
        let q = queue(conn);
        let mut pending: Vec<PendingCommit> = (1..=20).map(|o| q.push(at(o))).collect();
        // The awaited commit returns after every earlier one completed.
        q.push(at(21)).await.unwrap();
        for (i, p) in pending.iter_mut().enumerate() {
            assert!(
                matches!(p.result.try_recv(), Ok(Ok(()))),
                "commit {} not complete when a later one returned",
                i + 1
            );
        }
        let mut expected = vec![1];
        expected.extend(1..=21);
        assert_eq!(*arrivals.lock().unwrap(), expected);
    }

    /// Invariant: a refused commit fails alone; the commits after it go
    /// out, in order, and succeed.
    #[tokio::test]
    async fn a_refused_commit_fails_without_holding_back_the_next() {
        let (conn, arrivals) = coordinator_refusing(1, ErrorCode::UnknownMemberId).await;
        let q = queue(conn);
        let first = q.push(at(1));
        let second = q.push(at(2));
        let third = q.push(at(3));
        assert!(matches!(third.await, Ok(())));
        assert!(matches!(first.await, Ok(())));
        assert!(matches!(
            second.await,
            Err(GroupError::Commit {
                error: ErrorCode::UnknownMemberId,
                ..
            })
        ));
        assert_eq!(*arrivals.lock().unwrap(), vec![1, 2, 3]);
    }

    /// Invariant: a commit that nobody awaits still goes out.
    #[tokio::test]
    async fn a_dropped_pending_commit_is_still_sent() {
        let (conn, arrivals) = coordinator(|_| ErrorCode::None).await;
        let q = queue(conn);
        drop(q.push(at(7)));
        q.push(Vec::new()).await.unwrap();
        assert_eq!(*arrivals.lock().unwrap(), vec![7]);
    }

    /// Invariant: a retriable error past the commit's deadline is reported
    /// as a timeout (outcome unknown), not as success.
    #[tokio::test]
    async fn retries_stop_at_the_deadline_with_a_timeout() {
        let (conn, _arrivals) = coordinator(|_| ErrorCode::CoordinatorLoadInProgress).await;
        let q = queue_with(conn, Duration::from_millis(200));
        assert!(matches!(
            q.push(at(1)).await,
            Err(GroupError::Timeout { .. })
        ));
    }

    /// A cooperative classic member, Stable in generation 1 as member "me"
    /// with partition 0 of "t".
    fn stable_classic() -> ClassicMember {
        use crate::group::member::classic::assignor::Assignor;
        crate::group::member::classic::tests::stable(&[Assignor::CooperativeSticky], &[0])
    }

    /// The coordinator asks `m` to rejoin (a heartbeat's
    /// REBALANCE_IN_PROGRESS): a cooperative member starts its JoinGroup
    /// keeping its partitions.
    fn rejoin(m: &mut ClassicMember) {
        use crate::group::member::classic::tests::{heartbeat, join_req};
        heartbeat(m, ErrorCode::RebalanceInProgress);
        assert!(m.rebalance_in_progress());
        join_req(m);
    }

    fn member_of(shared: &Mutex<Shared>) -> (crate::group::member::classic::ClassicState, i32) {
        let mut s = lock(shared);
        let m = s.member.classic();
        (m.state(), m.generation())
    }

    /// Invariant: a classic member's commit made while it rejoins the group
    /// (a cooperative member reads its partitions meanwhile) fails at once
    /// with REBALANCE_IN_PROGRESS without reaching the coordinator (Java's
    /// `generationIfStable`), which would refuse its generation with
    /// ILLEGAL_GENERATION once the join completed; the member keeps its
    /// partitions.
    #[tokio::test]
    async fn a_classic_commit_while_the_member_rejoins_fails_at_once_unsent() {
        use crate::group::member::classic::ClassicState;
        let (conn, arrivals) = coordinator(|_| ErrorCode::IllegalGeneration).await;
        let mut m = stable_classic();
        rejoin(&mut m);
        let (q, shared) = queue_of(conn, m, Duration::from_secs(10));
        match q.push(at(5)).await {
            Err(GroupError::Commit {
                error: ErrorCode::RebalanceInProgress,
                ..
            }) => {}
            other => panic!("expected REBALANCE_IN_PROGRESS, got {other:?}"),
        }
        assert!(arrivals.lock().unwrap().is_empty(), "nothing sent");
        assert_eq!(member_of(&shared), (ClassicState::Joining, 1));
        assert_eq!(lock(&shared).member.classic().owned()["t"].len(), 1);
    }

    /// Invariant: a classic commit sent in a stable generation that the
    /// member's own rejoin overtook (its JoinGroup reached the coordinator
    /// first: ILLEGAL_GENERATION) is reported as REBALANCE_IN_PROGRESS and
    /// leaves the member's rejoin alone.
    #[tokio::test]
    async fn a_classic_commit_overtaken_by_the_members_rejoin_is_a_rebalance_in_progress() {
        use crate::group::member::classic::ClassicState;
        let handle: Arc<std::sync::OnceLock<Arc<Mutex<Shared>>>> = Arc::default();
        let shared_at_answer = handle.clone();
        let (conn, arrivals) = coordinator(move |_| {
            // The member's task starts the rejoin while the commit is in
            // flight; the coordinator completes the join first.
            rejoin(lock(shared_at_answer.get().unwrap()).member.classic());
            ErrorCode::IllegalGeneration
        })
        .await;
        let (q, shared) = queue_of(conn, stable_classic(), Duration::from_secs(10));
        handle.set(shared.clone()).ok().unwrap();
        match q.push(at(5)).await {
            Err(GroupError::Commit {
                error: ErrorCode::RebalanceInProgress,
                ..
            }) => {}
            other => panic!("expected REBALANCE_IN_PROGRESS, got {other:?}"),
        }
        assert_eq!(*arrivals.lock().unwrap(), vec![5]);
        assert_eq!(member_of(&shared), (ClassicState::Joining, 1), "not fenced");
        assert_eq!(lock(&shared).member.classic().owned()["t"].len(), 1);
    }

    /// Invariant: ILLEGAL_GENERATION for a classic commit of the member's
    /// current generation is reported as it is (Java's
    /// `CommitFailedException`) and the member resets its generation (its
    /// partitions are lost; it rejoins), as Java's `resetStateOnResponseError`.
    #[tokio::test]
    async fn a_classic_commit_refused_for_its_current_generation_fences_the_member() {
        use crate::group::member::classic::ClassicState;
        let (conn, _arrivals) = coordinator(|_| ErrorCode::IllegalGeneration).await;
        let (q, shared) = queue_of(conn, stable_classic(), Duration::from_secs(10));
        assert!(matches!(
            q.push(at(5)).await,
            Err(GroupError::Commit {
                error: ErrorCode::IllegalGeneration,
                ..
            })
        ));
        assert_eq!(member_of(&shared), (ClassicState::Fenced, -1));
    }
}
