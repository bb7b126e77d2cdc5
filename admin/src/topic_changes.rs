//! Deleting topics ([`delete_topics`], DeleteTopics v1–6) and adding
//! partitions ([`create_partitions`], CreatePartitions v0–3), with per-topic
//! results, retried as [`create_topics`](super::create_topics()) is, all
//! within the call's timeout:
//! 1. the request goes to the controller named by the metadata (any broker
//!    when none is named);
//! 2. a topic answered with NOT_CONTROLLER is retried after a metadata
//!    refresh;
//! 3. a topic answered with THROTTLING_QUOTA_EXCEEDED is retried after the
//!    throttle time;
//! 4. a retriable connection error sends the request again after a refresh.

use crate::topics::{
    AdminError, ControllerAttempts, CreateTopicsOptions, RESPONSE_SLACK, wait_for_leaders,
};
use kafka_client::Cluster;
use kafka_client::ConnError;
use kafka_proto::messages::{
    CreatePartitionsRequest, CreatePartitionsRequestCreatePartitionsTopic, DeleteTopicsRequest,
    DeleteTopicsRequestDeleteTopicState,
};
use kafka_proto::{ApiKey, ErrorCode};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The broker refused to delete one topic or to add partitions to it: the
/// API, the topic, the error code and message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot {} {topic}: {}{}; {}", self.action(), error.name(), message.as_deref().map(|m| format!(" ({m})")).unwrap_or_default(), self.hint())]
pub struct TopicChangeError {
    /// DeleteTopics or CreatePartitions.
    pub api: ApiKey,
    /// The topic.
    pub topic: String,
    /// The broker's error code.
    pub error: ErrorCode,
    /// The broker's message.
    pub message: Option<String>,
}

impl TopicChangeError {
    fn action(&self) -> &'static str {
        match self.api {
            ApiKey::DeleteTopics => "delete topic",
            _ => "add partitions to topic",
        }
    }

    /// True when the topic does not exist (UNKNOWN_TOPIC_OR_PARTITION, or
    /// UNKNOWN_TOPIC_ID).
    pub fn is_unknown_topic(&self) -> bool {
        matches!(
            self.error,
            ErrorCode::UnknownTopicOrPartition | ErrorCode::UnknownTopicId
        )
    }

    /// What to do about it.
    pub fn hint(&self) -> &'static str {
        match self.error {
            ErrorCode::UnknownTopicOrPartition | ErrorCode::UnknownTopicId => {
                "the topic does not exist: check its name"
            }
            ErrorCode::TopicDeletionDisabled => {
                "the brokers refuse deletions (delete.topic.enable=false)"
            }
            ErrorCode::InvalidPartitions => {
                "the new partition count must be greater than the current one"
            }
            ErrorCode::InvalidReplicaAssignment => {
                "name as many live brokers for each new partition as the replication factor"
            }
            ErrorCode::PolicyViolation => "change the request to satisfy the broker's policy",
            ErrorCode::TopicAuthorizationFailed | ErrorCode::ClusterAuthorizationFailed => {
                "grant this principal DELETE (deletion) or ALTER (partitions) on the topic"
            }
            ErrorCode::InvalidTopicException => {
                "internal topics cannot be deleted and names must be legal topic names"
            }
            ErrorCode::RequestTimedOut => {
                "the controller did not finish in time: the change may still happen; describe the topic before calling again"
            }
            ErrorCode::NotController | ErrorCode::ThrottlingQuotaExceeded => {
                "retried until the timeout ran out: call again with a longer timeout"
            }
            _ => "see the broker's message and log",
        }
    }
}

/// One topic's result of [`delete_topics`] or [`create_partitions`], in the
/// order asked for.
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), kafka_admin::AdminError> {
/// use kafka_admin as admin;
/// for r in admin::delete_topics(cluster, &["orders", "audit"], std::time::Duration::from_secs(30)).await? {
///     match r.outcome {
///         Ok(()) => println!("deleted {}", r.name),
///         Err(e) if e.is_unknown_topic() => println!("{} did not exist", r.name),
///         Err(e) => eprintln!("{e}"),
///     }
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicChangeResult {
    /// The topic name.
    pub name: String,
    /// Done, or the broker's refusal for this topic.
    pub outcome: Result<(), TopicChangeError>,
}

/// One answer of a round: (topic, error code, message), and the throttle time.
type Answers = (Vec<(String, i16, Option<String>)>, i32);

/// Sends `round(conn, pending names, time left)` to the controller until
/// every topic is answered with something other than NOT_CONTROLLER or
/// THROTTLING_QUOTA_EXCEEDED, or `timeout` passes.
async fn per_topic_rounds<F, Fut>(
    cluster: &Cluster,
    api: ApiKey,
    names: &[&str],
    timeout: Duration,
    mut round: F,
) -> Result<Vec<TopicChangeResult>, AdminError>
where
    F: FnMut(Arc<kafka_client::Connection>, Vec<String>, Duration) -> Fut,
    Fut: Future<Output = Result<Answers, ConnError>>,
{
    let deadline = Instant::now() + timeout;
    let mut seen = BTreeSet::new();
    for n in names {
        if !seen.insert(*n) {
            return Err(AdminError::DuplicateTopic(n.to_string()));
        }
    }
    let refused = |topic: &str, error: ErrorCode, message: Option<String>| TopicChangeError {
        api,
        topic: topic.to_string(),
        error,
        message,
    };
    let mut results: BTreeMap<String, Result<(), TopicChangeError>> = BTreeMap::new();
    let mut pending: BTreeMap<String, Option<TopicChangeError>> =
        names.iter().map(|n| (n.to_string(), None)).collect();
    let mut attempts = ControllerAttempts::until(deadline);
    while !pending.is_empty() {
        if !attempts.next().await {
            for (name, last) in std::mem::take(&mut pending) {
                let e = last.unwrap_or_else(|| {
                    let why = format!("no answer within {timeout:?}");
                    refused(&name, ErrorCode::RequestTimedOut, Some(why))
                });
                results.insert(name, Err(e));
            }
            break;
        }
        let Some(conn) = attempts.controller(cluster).await? else {
            continue;
        };
        let left = deadline.saturating_duration_since(Instant::now());
        let (answers, throttle_ms) =
            match round(conn, pending.keys().cloned().collect(), left).await {
                Ok(r) => r,
                Err(e) if e.is_retriable() && Instant::now() < deadline => {
                    let _ = cluster.refresh().await;
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
        let mut stale_controller = false;
        let mut unanswered: BTreeSet<String> = pending.keys().cloned().collect();
        for (name, code, message) in answers {
            if !unanswered.remove(&name) {
                continue;
            }
            let error = ErrorCode::from(code);
            match error {
                ErrorCode::None => {
                    pending.remove(&name);
                    results.insert(name, Ok(()));
                }
                ErrorCode::NotController | ErrorCode::ThrottlingQuotaExceeded => {
                    if error == ErrorCode::NotController {
                        stale_controller = true;
                    } else {
                        attempts.throttled(throttle_ms);
                    }
                    let e = refused(&name, error, message);
                    pending.insert(name, Some(e));
                }
                _ => {
                    pending.remove(&name);
                    let e = refused(&name, error, message);
                    results.insert(name, Err(e));
                }
            }
        }
        // A topic the answer did not mention: an error, not a retry forever.
        for name in unanswered {
            pending.remove(&name);
            let why = Some("the broker's answer did not mention this topic".to_string());
            results.insert(
                name.clone(),
                Err(refused(&name, ErrorCode::UnknownServerError, why)),
            );
        }
        if stale_controller {
            cluster.invalidate();
            let _ = cluster.refresh().await;
        }
    }
    Ok(names
        .iter()
        .map(|n| TopicChangeResult {
            name: n.to_string(),
            outcome: results
                .remove(*n)
                .expect("every topic is answered or timed out"),
        })
        .collect())
}

/// Deletes `topics` (DeleteTopics, by name) and returns one result per
/// topic, in order. A topic that does not exist is an `Err` for which
/// [`TopicChangeError::is_unknown_topic`] is true; the other topics of the
/// call are unaffected. The call as a whole fails only when no broker
/// answers within `timeout` or on a duplicate name. The brokers may list a
/// deleted topic in their metadata for a short while after the call returns.
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), Box<dyn std::error::Error>> {
/// use kafka_admin as admin;
/// let results = admin::delete_topics(cluster, &["orders"], std::time::Duration::from_secs(30)).await?;
/// results[0].outcome.clone()?;
/// # Ok(()) }
/// ```
pub async fn delete_topics(
    cluster: &Cluster,
    topics: &[&str],
    timeout: Duration,
) -> Result<Vec<TopicChangeResult>, AdminError> {
    per_topic_rounds(
        cluster,
        ApiKey::DeleteTopics,
        topics,
        timeout,
        |conn, names, left| async move {
            let version = conn.versions().version_for::<DeleteTopicsRequest>()?;
            let mut req = DeleteTopicsRequest {
                timeout_ms: left.as_millis().clamp(1, i32::MAX as u128) as i32,
                ..Default::default()
            };
            if version >= 6 {
                req.topics = names
                    .into_iter()
                    .map(|n| DeleteTopicsRequestDeleteTopicState {
                        name: Some(n),
                        ..Default::default()
                    })
                    .collect();
            } else {
                req.topic_names = names;
            }
            let resp = conn
                .send_with_timeout(&req, version, left + RESPONSE_SLACK)
                .await?;
            let answers = resp
                .responses
                .into_iter()
                .filter_map(|r| Some((r.name?, r.error_code, r.error_message)))
                .collect();
            Ok((answers, resp.throttle_time_ms))
        },
    )
    .await
}

/// Raises the partition count of each topic to the given total
/// (CreatePartitions; the controller places the new partitions) and returns
/// one result per topic, in order. A count not above the current one is
/// refused with INVALID_PARTITIONS. `options` are those of
/// [`create_topics`](super::create_topics()): the timeout bounds the call,
/// `validate_only` only checks, `wait_for_leaders` returns once the
/// metadata shows every new partition with a leader.
///
/// ```no_run
/// # async fn demo(cluster: &kafka_client::Cluster) -> Result<(), Box<dyn std::error::Error>> {
/// use kafka_admin::{self as admin, CreateTopicsOptions};
/// let opts = CreateTopicsOptions { wait_for_leaders: true, ..Default::default() };
/// for r in admin::create_partitions(cluster, &[("orders", 12)], &opts).await? {
///     r.outcome?;
/// }
/// # Ok(()) }
/// ```
pub async fn create_partitions(
    cluster: &Cluster,
    increases: &[(&str, i32)],
    options: &CreateTopicsOptions,
) -> Result<Vec<TopicChangeResult>, AdminError> {
    let started = Instant::now();
    let counts: BTreeMap<String, i32> =
        increases.iter().map(|(n, c)| (n.to_string(), *c)).collect();
    let names: Vec<&str> = increases.iter().map(|(n, _)| *n).collect();
    let validate_only = options.validate_only;
    let results = per_topic_rounds(
        cluster,
        ApiKey::CreatePartitions,
        &names,
        options.timeout,
        |conn, pending, left| {
            let counts = &counts;
            async move {
                let version = conn.versions().version_for::<CreatePartitionsRequest>()?;
                let req = CreatePartitionsRequest {
                    topics: pending
                        .into_iter()
                        .map(|name| CreatePartitionsRequestCreatePartitionsTopic {
                            count: counts[&name],
                            name,
                            assignments: None,
                            ..Default::default()
                        })
                        .collect(),
                    timeout_ms: left.as_millis().clamp(1, i32::MAX as u128) as i32,
                    validate_only,
                    ..Default::default()
                };
                let resp = conn
                    .send_with_timeout(&req, version, left + RESPONSE_SLACK)
                    .await?;
                let answers = resp
                    .results
                    .into_iter()
                    .map(|r| (r.name, r.error_code, r.error_message))
                    .collect();
                Ok((answers, resp.throttle_time_ms))
            }
        },
    )
    .await?;
    if options.wait_for_leaders && !validate_only {
        let grown: Vec<(String, Option<i32>)> = results
            .iter()
            .filter(|r| r.outcome.is_ok())
            .map(|r| (r.name.clone(), Some(counts[&r.name])))
            .collect();
        let deadline = started + options.timeout;
        wait_for_leaders(cluster, &grown, started, deadline).await?;
    }
    Ok(results)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(api: ApiKey, error: ErrorCode) -> TopicChangeError {
        TopicChangeError {
            api,
            topic: "orders".into(),
            error,
            message: None,
        }
    }

    /// The message names the change, the topic and the code.
    #[test]
    fn the_message_names_the_change_and_the_topic() {
        let e = error(ApiKey::DeleteTopics, ErrorCode::UnknownTopicOrPartition);
        assert!(
            e.to_string()
                .starts_with("cannot delete topic orders: UNKNOWN_TOPIC_OR_PARTITION")
        );
    }

    /// Only UNKNOWN_TOPIC_OR_PARTITION and UNKNOWN_TOPIC_ID mean the topic
    /// does not exist.
    #[test]
    fn unknown_topic_is_told_apart() {
        assert!(error(ApiKey::DeleteTopics, ErrorCode::UnknownTopicOrPartition).is_unknown_topic());
        assert!(error(ApiKey::DeleteTopics, ErrorCode::UnknownTopicId).is_unknown_topic());
        assert!(!error(ApiKey::CreatePartitions, ErrorCode::InvalidPartitions).is_unknown_topic());
    }

    /// Refused deletions point at the broker setting that refuses them.
    #[test]
    fn disabled_deletion_hints_at_the_broker_setting() {
        let e = error(ApiKey::DeleteTopics, ErrorCode::TopicDeletionDisabled);
        assert!(e.hint().contains("delete.topic.enable"));
    }
}
