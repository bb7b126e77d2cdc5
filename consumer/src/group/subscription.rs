//! What a [`GroupConsumer`](super::GroupConsumer) subscribes to: topic
//! names, or a regular expression over the cluster's topic names.
//!
//! - Under KIP-848 the broker matches the expression (its RE2/J dialect)
//!   against its topics and assigns the matching ones, topics created
//!   later included; the member sends the expression
//!   (`SubscribedTopicRegex`) and learns the names of the assigned topic
//!   ids from the cluster's metadata.
//! - Under the classic protocol the member matches it, as Java's pattern
//!   subscription does: on each refresh of every topic's metadata (every
//!   `metadata.max.age.ms`) the matching topic names, internal topics
//!   left out, become the subscription; a change makes the member rejoin.

use super::consumer::{GroupError, lock};
use super::driver::GroupDriver;
use kafka_client::ClusterMetadata;
use kafka_proto::primitives::Uuid;
use regex::Regex;
use std::collections::BTreeSet;
use std::time::Instant;

/// A subscription: topic names, or a regular expression matched against
/// whole topic names.
///
/// ```
/// use kafka_consumer::Subscription;
/// let names = Subscription::topics(["orders", "refunds"]);
/// let pattern = Subscription::pattern("orders-.*");
/// assert_ne!(names, pattern);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Subscription {
    /// These topics.
    Topics(BTreeSet<String>),
    /// Every topic whose whole name matches this regular expression
    /// (Java's `subscribe(Pattern)` / `subscribe(SubscriptionPattern)`).
    /// Under KIP-848 the broker evaluates it in the RE2/J dialect and an
    /// invalid one is fatal (INVALID_REGULAR_EXPRESSION); under the
    /// classic protocol this client evaluates it (the `regex` crate's
    /// syntax, close to RE2) and refuses an invalid one at once
    /// ([`GroupError::InvalidPattern`]).
    Pattern(String),
}

impl Subscription {
    /// A subscription to `topics`.
    pub fn topics<S: AsRef<str>>(topics: impl IntoIterator<Item = S>) -> Self {
        Subscription::Topics(topics.into_iter().map(|t| t.as_ref().to_string()).collect())
    }

    /// A subscription to the topics whose names match `regex`.
    pub fn pattern(regex: impl Into<String>) -> Self {
        Subscription::Pattern(regex.into())
    }
}

/// A regular expression matched by this client against whole topic names
/// (the classic protocol's pattern subscription).
#[derive(Debug, Clone)]
pub(super) struct TopicPattern {
    /// The expression as the application gave it.
    source: String,
    /// It, anchored at both ends.
    regex: Regex,
}

impl TopicPattern {
    /// Compiles `source`, refused with [`GroupError::InvalidPattern`].
    pub(super) fn new(source: &str) -> Result<Self, GroupError> {
        let regex =
            Regex::new(&format!("^(?:{source})$")).map_err(|e| GroupError::InvalidPattern {
                pattern: source.to_string(),
                reason: e.to_string(),
            })?;
        Ok(Self {
            source: source.to_string(),
            regex,
        })
    }

    /// The names of the topics in `md` that match, internal topics left
    /// out (Java's `exclude.internal.topics=true`).
    pub(super) fn matching(&self, md: &ClusterMetadata) -> BTreeSet<String> {
        md.topics()
            .values()
            .filter(|t| !t.is_internal && self.regex.is_match(&t.name))
            .map(|t| t.name.clone())
            .collect()
    }
}

impl GroupDriver {
    /// Looks up the names of topic ids the KIP-848 member was assigned:
    /// every topic's metadata under a regular expression (the topics are
    /// the broker's choice), else the tracked topics'. A topic just
    /// created may not be in the answering broker's metadata yet: tried
    /// three times, `retry.backoff.ms` apart; the member asks again for ids
    /// still unknown when the next assignment names them.
    pub(super) async fn resolve_topics(&self, ids: &[Uuid], all: bool) {
        for attempt in 0..3 {
            if attempt > 0 {
                tokio::time::sleep(self.retry_backoff).await;
            }
            let result = if all {
                self.cluster.refresh_all().await
            } else {
                self.cluster.refresh().await
            };
            if let Err(e) = result {
                tracing::debug!(error = %e, "group consumer: metadata refresh for topic ids");
                continue;
            }
            let md = self.cluster.metadata();
            let names: Vec<String> = ids
                .iter()
                .filter_map(|id| md.topic_name(id).map(str::to_string))
                .collect();
            drop(md);
            self.cluster.track_topics(&names);
            if names.len() == ids.len() {
                return;
            }
        }
        tracing::warn!(?ids, group = %self.group_id, "group consumer: assigned topic ids without a name in the metadata");
    }

    /// Classic pattern subscription: when due (every
    /// `metadata.max.age.ms`, or at once after a new pattern), refreshes
    /// every topic's metadata and subscribes the member to the matching
    /// topics; a change makes it rejoin.
    pub(super) async fn refresh_pattern_if_due(&self) {
        let due = {
            let s = lock(&self.shared);
            s.pattern.is_some()
                && !s.closing
                && s.pattern_check_at.is_none_or(|t| Instant::now() >= t)
        };
        if !due {
            return;
        }
        let result = self.cluster.refresh_all().await;
        let mut s = lock(&self.shared);
        let wait = match &result {
            Ok(_) => self.cluster.config().metadata_max_age,
            Err(_) => self.retry_backoff,
        };
        s.pattern_check_at = Some(Instant::now() + wait);
        if let Err(e) = result {
            tracing::debug!(error = %e, group = %self.group_id, "group consumer: metadata of every topic for the pattern");
            return;
        }
        if s.closing {
            return;
        }
        let Some((matched, source)) = s
            .pattern
            .as_ref()
            .map(|p| (p.matching(&self.cluster.metadata()), p.source.clone()))
        else {
            return;
        };
        if &matched != s.member.classic().topics() {
            tracing::info!(group = %self.group_id, pattern = %source, topics = ?matched, "group consumer: the topics matching the pattern changed");
            let names: Vec<&String> = matched.iter().collect();
            self.cluster.track_topics(&names);
            s.member.classic().subscribe(matched);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The classic member matches whole names: `orders-.*` takes
    /// `orders-eu` but not `old-orders-eu`; an expression that does not
    /// compile is refused by name.
    #[test]
    fn patterns_match_whole_names_and_bad_ones_are_refused() {
        let p = TopicPattern::new("orders-.*").unwrap();
        assert!(p.regex.is_match("orders-eu"));
        assert!(!p.regex.is_match("old-orders-eu"));
        let alt = TopicPattern::new("a|b").unwrap();
        assert!(alt.regex.is_match("b") && !alt.regex.is_match("ab"));
        match TopicPattern::new("orders-(") {
            Err(GroupError::InvalidPattern { pattern, .. }) => assert_eq!(pattern, "orders-("),
            other => panic!("{other:?}"),
        }
    }
}
