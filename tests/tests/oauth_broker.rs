//! SASL/OAUTHBEARER against a real Kafka 4.4 broker whose CLIENT listener
//! validates every token with Kafka's own `OAuthBearerValidatorCallbackHandler`
//! against a JWKS (RS256 keys made by the harness), with
//! `connections.max.reauth.ms` of 3 s (KIP-368). Tokens come from the
//! harness's OIDC token endpoint (client credentials, KIP-768), valid 4 s.
//!
//! One broker serves every test of this module.

use kafka_client::oauth::TokenError;
use kafka_client::{ClientConfig, Cluster, ClusterError, ConnError};
use kafka_consumer::{ConsumerEvent, GroupConsumer, GroupConsumerConfig};
use kafka_producer::{ProducerConfig, ProducerRecord, TransactionalProducer};
use kafka_testcontainers::oauth::{Behaviour, JwtIssuer, TokenEndpoint};
use kafka_testcontainers::{KafkaCluster, SaslConfig, unique_name};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::OnceCell;

/// The longest session the broker grants (`connections.max.reauth.ms`).
const MAX_REAUTH: Duration = Duration::from_secs(3);
/// The lifetime of the endpoint's tokens.
const TOKEN_LIFETIME: Duration = Duration::from_secs(4);
const CLIENT_ID: &str = "kafka-eos-test-client";
const CLIENT_SECRET: &str = "kafka-eos-test-secret";

struct OAuthKafka {
    issuer: Arc<JwtIssuer>,
    cluster: KafkaCluster,
}

/// The module's broker, started on first use.
async fn kafka() -> &'static OAuthKafka {
    static KAFKA: OnceCell<OAuthKafka> = OnceCell::const_new();
    KAFKA
        .get_or_init(|| async {
            let issuer = Arc::new(JwtIssuer::new().expect("RSA keys and JWKS"));
            let cluster = KafkaCluster::builder()
                .sasl(SaslConfig::default())
                .oauth_bearer(&issuer, Some(MAX_REAUTH))
                .start()
                .await
                .expect("a Kafka 4.4 broker with an OAUTHBEARER listener");
            OAuthKafka { issuer, cluster }
        })
        .await
}

/// A token endpoint of its own for a test.
async fn endpoint(kafka: &OAuthKafka) -> TokenEndpoint {
    TokenEndpoint::start(
        kafka.issuer.clone(),
        CLIENT_ID,
        CLIENT_SECRET,
        TOKEN_LIFETIME,
    )
    .await
    .expect("token endpoint")
}

/// The OAUTHBEARER client properties: Java's keys, refreshing at half the
/// token's lifetime (as Kafka's own fast-refresh tests do).
fn oauth_props(kafka: &OAuthKafka, endpoint: &TokenEndpoint) -> Vec<(String, String)> {
    [
        ("bootstrap.servers", kafka.cluster.bootstrap().as_str()),
        ("security.protocol", "SASL_PLAINTEXT"),
        ("sasl.mechanism", "OAUTHBEARER"),
        ("sasl.oauthbearer.token.endpoint.url", endpoint.url()),
        ("sasl.oauthbearer.client.credentials.client.id", CLIENT_ID),
        (
            "sasl.oauthbearer.client.credentials.client.secret",
            CLIENT_SECRET,
        ),
        ("sasl.oauthbearer.scope", "kafka"),
        ("sasl.login.refresh.window.factor", "0.5"),
        ("sasl.login.refresh.window.jitter", "0"),
        ("sasl.login.refresh.min.period.seconds", "1"),
        ("sasl.login.refresh.buffer.seconds", "1"),
        ("sasl.login.retry.backoff.ms", "50"),
        ("sasl.login.retry.backoff.max.ms", "1000"),
        ("sasl.login.read.timeout.ms", "500"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

fn with(mut props: Vec<(String, String)>, extra: &[(&str, &str)]) -> Vec<(String, String)> {
    props.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    props
}

/// Polls a group member until it has read `n` records; returns each
/// record's value with how many times it was seen.
async fn read_all(mut consumer: GroupConsumer, n: usize) -> BTreeMap<String, usize> {
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut seen = BTreeMap::new();
    let mut total = 0;
    while total < n {
        assert!(Instant::now() < deadline, "read {total} of {n} records");
        match consumer.poll(Duration::from_millis(200)).await {
            Ok(ConsumerEvent::Records(records)) => {
                for r in records {
                    let v = String::from_utf8(r.value.expect("a value").to_vec()).unwrap();
                    *seen.entry(v).or_insert(0) += 1;
                    total += 1;
                }
            }
            Ok(_) => {}
            Err(e) => panic!("the group member failed: {e}"),
        }
    }
    // A little more polling: a duplicate would show up here.
    let settle = Instant::now() + Duration::from_secs(1);
    while Instant::now() < settle {
        if let Ok(ConsumerEvent::Records(records)) = consumer.poll(Duration::from_millis(200)).await
        {
            for r in records {
                let v = String::from_utf8(r.value.expect("a value").to_vec()).unwrap();
                *seen.entry(v).or_insert(0) += 1;
            }
        }
    }
    consumer.close(Duration::from_secs(5)).await;
    seen
}

/// Invariant: re-authentication (KIP-368) and token refresh happen between
/// requests without failing or reordering any: a transactional producer
/// commits 100 transactions over more than ten re-authentications and
/// token refreshes while a KIP-848 member and a classic member (groups of
/// their own) read the topic read_committed, and each reads every record
/// exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transactions_and_both_group_protocols_run_across_reauthentications() {
    let kafka = kafka().await;
    let endpoint = endpoint(kafka).await;
    let topic = unique_name("oauth-txn");
    kafka.cluster.create_topic(&topic, 2, 1).await.unwrap();
    let props = oauth_props(kafka, &endpoint);
    let reauths_before = kafka_client::internals::reauthentications();

    let mut members = Vec::new();
    for protocol in ["consumer", "classic"] {
        let group = unique_name(&format!("oauth-{protocol}"));
        let config = GroupConsumerConfig::from_properties(with(
            props.clone(),
            &[
                ("group.id", &group),
                ("group.protocol", protocol),
                ("auto.offset.reset", "earliest"),
                ("isolation.level", "read_committed"),
            ],
        ))
        .expect("consumer config");
        let consumer = GroupConsumer::subscribe(config, [topic.as_str()])
            .await
            .unwrap_or_else(|e| panic!("{protocol} member: {e}"));
        members.push((protocol, tokio::spawn(read_all(consumer, 1000))));
    }

    let producer = TransactionalProducer::connect(
        ProducerConfig::from_properties(with(
            props.clone(),
            &[("transactional.id", &unique_name("oauth-txn"))],
        ))
        .expect("producer config"),
    )
    .await
    .expect("a transactional producer over OAUTHBEARER");
    producer.init_transactions().await.expect("init");
    let started = Instant::now();
    for t in 0..100 {
        producer.begin_transaction().unwrap();
        let sends: Vec<_> = (0..10)
            .map(|i| producer.send(ProducerRecord::new(&topic).value(format!("{t}-{i}"))))
            .collect();
        for s in sends {
            s.await.unwrap_or_else(|e| panic!("transaction {t}: {e}"));
        }
        producer
            .commit_transaction()
            .await
            .unwrap_or_else(|e| panic!("commit {t}: {e}"));
        // Spread the transactions over several sessions and token lifetimes.
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let produced_for = started.elapsed();
    for (protocol, member) in members {
        let seen = member.await.expect("member task");
        assert_eq!(seen.len(), 1000, "{protocol}: distinct records");
        let dup: Vec<_> = seen.iter().filter(|(_, n)| **n != 1).collect();
        assert!(
            dup.is_empty(),
            "{protocol}: records seen more than once: {dup:?}"
        );
    }
    producer.close(Duration::from_secs(10)).await.ok();
    let reauths = kafka_client::internals::reauthentications() - reauths_before;
    let issued = endpoint.issued();
    eprintln!(
        "100 transactions in {produced_for:?}: {reauths} re-authentications, {issued} tokens issued"
    );
    assert!(reauths >= 10, "only {reauths} re-authentications");
    assert!(issued >= 10, "only {issued} tokens issued");
}

/// The connection error under a cluster connect's attempts.
fn token_error(e: &ClusterError) -> Option<&ConnError> {
    match e {
        ClusterError::NoBrokerAvailable { attempts } => attempts.first().map(|(_, e)| e),
        ClusterError::Conn(c) => Some(c),
        _ => None,
    }
}

/// Connects a client with the endpoint answering `behaviour`; the error.
async fn connect_with(behaviour: Behaviour) -> (ClusterError, u64) {
    let kafka = kafka().await;
    let endpoint = endpoint(kafka).await;
    endpoint.set_behaviour(behaviour);
    let config = ClientConfig::from_properties(oauth_props(kafka, &endpoint)).unwrap();
    let err = Cluster::connect(config.cluster_config())
        .await
        .expect_err("no usable token: no connection");
    (err, endpoint.requests())
}

/// Invariant: an identity provider answering 503 is retried within
/// `sasl.login.retry.backoff.max.ms`, then the connection fails with a
/// retriable typed token error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_token_endpoint_is_retried_then_a_retriable_error() {
    let (err, requests) = connect_with(Behaviour::Fail(503)).await;
    let conn = token_error(&err).unwrap_or_else(|| panic!("{err}"));
    assert!(
        matches!(
            conn,
            ConnError::Token {
                source: TokenError::Unavailable { .. },
                ..
            }
        ),
        "{conn}"
    );
    assert!(conn.is_retriable());
    assert!(requests >= 3, "retried: {requests} requests");
}

/// Invariant: refused client credentials (401) are not retried and fail
/// with a fatal typed error naming the endpoint's reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_credentials_are_a_fatal_error_without_retries() {
    let (err, requests) = connect_with(Behaviour::Fail(401)).await;
    let conn = token_error(&err).unwrap_or_else(|| panic!("{err}"));
    assert!(
        matches!(
            conn,
            ConnError::Token {
                source: TokenError::Refused { status: 401, .. },
                ..
            }
        ),
        "{conn}"
    );
    assert!(!conn.is_retriable());
    assert!(requests >= 1, "the endpoint was asked");
}

/// Invariant: an endpoint that never answers is cut off by
/// `sasl.login.read.timeout.ms` and retried; the error is retriable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_token_endpoint_times_out() {
    let (err, requests) = connect_with(Behaviour::Stall).await;
    let conn = token_error(&err).unwrap_or_else(|| panic!("{err}"));
    assert!(
        matches!(conn, ConnError::Token { source: TokenError::Unavailable { message }, .. } if message.contains("within")),
        "{conn}"
    );
    assert!(requests >= 2, "retried: {requests} requests");
}

/// Invariant: a response without a token is an invalid-token error,
/// not retried.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_token_response_is_an_invalid_token() {
    let (err, _) = connect_with(Behaviour::Malformed).await;
    let conn = token_error(&err).unwrap_or_else(|| panic!("{err}"));
    assert!(
        matches!(
            conn,
            ConnError::Token {
                source: TokenError::InvalidToken { .. },
                ..
            }
        ),
        "{conn}"
    );
    assert!(!conn.is_retriable());
}

/// Invariant: an expired token is refused by the client before it is sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_token_is_refused_by_the_client() {
    let (err, _) = connect_with(Behaviour::Expired).await;
    let conn = token_error(&err).unwrap_or_else(|| panic!("{err}"));
    assert!(
        matches!(conn, ConnError::Token { source: TokenError::InvalidToken { message }, .. } if message.contains("expired")),
        "{conn}"
    );
}

/// Invariant: a token signed by a key the broker does not trust is refused
/// by the broker (its `invalid_token` challenge, acknowledged, then
/// SASL_AUTHENTICATION_FAILED), and nothing is written: a transactional
/// producer cannot even start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrongly_signed_token_is_refused_by_the_broker() {
    let (err, _) = connect_with(Behaviour::WronglySigned).await;
    let conn = token_error(&err).unwrap_or_else(|| panic!("{err}"));
    match conn {
        ConnError::AuthenticationFailed { message } => {
            assert!(message.contains("invalid_token"), "{message}")
        }
        other => panic!("{other}"),
    }
    assert!(!conn.is_retriable());
    let kafka = kafka().await;
    let endpoint = endpoint(kafka).await;
    endpoint.set_behaviour(Behaviour::WronglySigned);
    let producer = TransactionalProducer::connect(
        ProducerConfig::from_properties(with(
            oauth_props(kafka, &endpoint),
            &[
                ("transactional.id", &unique_name("oauth-refused")),
                ("max.block.ms", "3000"),
            ],
        ))
        .unwrap(),
    )
    .await;
    assert!(producer.is_err(), "a producer started with a refused token");
}

/// Invariant: the broker applies `connections.max.reauth.ms` to PLAIN too,
/// and one PLAIN connection re-authenticates between requests: requests
/// pipelined from four tasks for 8 s (almost three sessions) all succeed
/// on the same connection, which re-authenticated at least twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_connection_reauthenticates_between_pipelined_requests() {
    use kafka_client::{Connection, ConnectionConfig, SaslConfig as ClientSasl};
    use kafka_proto::messages::MetadataRequest;
    let kafka = kafka().await;
    let config = ConnectionConfig {
        sasl: Some(ClientSasl::plain("alice", "alice-secret")),
        ..Default::default()
    };
    let conn = Arc::new(
        Connection::connect(&kafka.cluster.bootstrap(), &config)
            .await
            .expect("PLAIN connection"),
    );
    assert!(
        conn.session_expiry().is_some(),
        "the broker set a session lifetime"
    );
    let until = Instant::now() + Duration::from_secs(8);
    let mut tasks = Vec::new();
    for _ in 0..4 {
        let conn = conn.clone();
        tasks.push(tokio::spawn(async move {
            let mut n = 0u32;
            while Instant::now() < until {
                conn.send_negotiated(&MetadataRequest::default())
                    .await
                    .unwrap_or_else(|e| panic!("request {n}: {e}"));
                n += 1;
            }
            n
        }));
    }
    let mut total = 0;
    for t in tasks {
        total += t.await.expect("task");
    }
    assert!(!conn.is_closed());
    let reauths = conn.reauthentications();
    eprintln!("{total} requests, {reauths} re-authentications on one PLAIN connection");
    assert!(reauths >= 2, "{reauths} re-authentications");
}
