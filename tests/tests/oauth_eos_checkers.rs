//! The producer's and the sink's exactly-once checkers
//! (`producer_eos_checker`, `sink_eos_checker`: their invariants) on a
//! Kafka 4.4 broker whose CLIENT listener is `SASL_SSL` with OAUTHBEARER
//! (tokens validated by Kafka's `OAuthBearerValidatorCallbackHandler`,
//! fetched from an https token endpoint, 4 s long) and
//! `connections.max.reauth.ms` of 3 s, so that every connection of the
//! producers and readers re-authenticates (KIP-368) while the schedule
//! runs: operations are paced to span at least three sessions.
//!
//! Lean by default (one schedule each, the broker of
//! `oauth_sasl_ssl_broker`); `EOS_SCHEDULES=<n>` runs more with fresh
//! seeds, `EOS_SEED=<seed>` replays one.
#![cfg(feature = "tls")]

use crate::oauth_sasl_ssl_broker::{OAuthKafka, https_endpoint, kafka, oauth_props, truststore};
use crate::support::nemesis::ScheduleSetup;
use kafka_client::Cluster;
use kafka_producer::ProducerConfig;
use kafka_testcontainers::oauth::TokenEndpoint;
use kafka_testcontainers::schedule_seeds;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The pause after every operation, at least.
const PACE: Duration = Duration::from_millis(100);

/// The least time a schedule's operations spread over: three sessions of
/// 3 s, so that a schedule of only 20 operations still outlives the
/// sessions of its producers and readers (each re-authenticates at 85–95 %
/// of its session).
const SPAN: Duration = Duration::from_secs(9);

/// The broker, a token endpoint, the client settings (OAUTHBEARER over
/// SASL_SSL, the harness's trust store) and a cluster handle with them
/// for the checkers' readers.
async fn oauth_setup() -> (
    &'static OAuthKafka,
    TokenEndpoint,
    ScheduleSetup,
    Arc<Cluster>,
) {
    let kafka = kafka().await;
    let endpoint = https_endpoint(kafka).await;
    let mut props = oauth_props(kafka, &endpoint);
    props.extend(truststore(kafka.tls()));
    let config = ProducerConfig::from_properties(props.clone()).expect("client settings");
    let cluster = Cluster::connect(config.cluster_config())
        .await
        .expect("readers' cluster over SASL_SSL + OAUTHBEARER");
    let setup = ScheduleSetup {
        producer_props: props
            .into_iter()
            .filter(|(k, _)| k != "bootstrap.servers")
            .collect(),
        pace: PACE,
        span: SPAN,
        ..ScheduleSetup::default()
    };
    (kafka, endpoint, setup, cluster)
}

/// The producer checker's six invariants hold over SASL_SSL + OAUTHBEARER
/// while connections re-authenticate (seeds printed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn producer_checker_over_oauthbearer_sasl_ssl() {
    let (kafka, endpoint, setup, cluster) = oauth_setup().await;
    let (seeds, _) = schedule_seeds(1);
    eprintln!("OAUTHBEARER SASL_SSL: producer schedule seeds {seeds:?}");
    let reauths_before = kafka_client::internals::reauthentications();
    let (mut operations, mut records) = (0, 0);
    for seed in &seeds {
        let t = Instant::now();
        let stats = tokio::time::timeout(
            Duration::from_secs(240),
            crate::producer_eos_checker::schedule(&kafka.cluster, &cluster, *seed, &setup),
        )
        .await
        .unwrap_or_else(|_| {
            panic!("seed {seed} made no progress for 240 s (replay: EOS_SEED={seed})")
        });
        eprintln!(
            "OAUTHBEARER SASL_SSL: producer schedule seed={seed} passed in {:?}: {} operations, {} records",
            t.elapsed(),
            stats.operations,
            stats.sent
        );
        operations += stats.operations;
        records += stats.sent;
    }
    let reauths = kafka_client::internals::reauthentications() - reauths_before;
    eprintln!(
        "OAUTHBEARER SASL_SSL: producer totals: {} schedules, {operations} operations, {records} records, \
         0 violations, {reauths} re-authentications (process-wide), {} tokens issued",
        seeds.len(),
        endpoint.issued()
    );
    assert!(reauths >= 1, "no re-authentication during the schedules");
}

/// The sink checker's invariant holds over SASL_SSL + OAUTHBEARER while
/// connections re-authenticate (seeds printed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sink_checker_over_oauthbearer_sasl_ssl() {
    let (kafka, endpoint, setup, cluster) = oauth_setup().await;
    let (seeds, _) = schedule_seeds(1);
    eprintln!("OAUTHBEARER SASL_SSL: sink schedule seeds {seeds:?}");
    let reauths_before = kafka_client::internals::reauthentications();
    let (mut operations, mut records) = (0, 0);
    for seed in &seeds {
        let t = Instant::now();
        let (ops, n) =
            crate::sink_eos_checker::schedule(&kafka.cluster, &cluster, *seed, &setup).await;
        eprintln!(
            "OAUTHBEARER SASL_SSL: sink schedule seed={seed} passed in {:?}: {ops} operations, {n} records committed",
            t.elapsed()
        );
        operations += ops;
        records += n;
    }
    let reauths = kafka_client::internals::reauthentications() - reauths_before;
    eprintln!(
        "OAUTHBEARER SASL_SSL: sink totals: {} schedules, {operations} operations, {records} records, \
         0 violations, {reauths} re-authentications (process-wide), {} tokens issued",
        seeds.len(),
        endpoint.issued()
    );
    assert!(reauths >= 1, "no re-authentication during the schedules");
}
