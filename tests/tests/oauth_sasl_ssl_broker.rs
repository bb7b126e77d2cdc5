//! SASL/OAUTHBEARER over TLS (`SASL_SSL`) against a real Kafka 4.4 broker
//! whose CLIENT listener validates every token with Kafka's own
//! `OAuthBearerValidatorCallbackHandler` (JWKS of the harness's issuer),
//! with `connections.max.reauth.ms` of 3 s (KIP-368). Tokens come from the
//! harness's OIDC token endpoint over **https**, presenting a certificate
//! of the harness's CA, which the client trusts:
//! - through `ssl.truststore.*` (the same settings as the brokers');
//! - through the operating system's trust store (the test installs the CA
//!   with `update-ca-certificates` and removes it afterwards; it runs as
//!   root), with no `ssl.*` setting at all.
//!
//! One broker serves every test of this module.
#![cfg(feature = "tls")]

use kafka_client::oauth::{ClientCredentialsConfig, ClientCredentialsProvider, TokenProvider};
use kafka_client::{ClientConfig, TlsConfig};
use kafka_consumer::{ConsumerEvent, GroupConsumer, GroupConsumerConfig};
use kafka_producer::{ProducerConfig, ProducerRecord, TransactionalProducer};
use kafka_testcontainers::oauth::{JwtIssuer, TokenEndpoint};
use kafka_testcontainers::tls::TlsFiles;
use kafka_testcontainers::{KafkaCluster, SaslConfig, unique_name};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::OnceCell;

use crate::support::system_ca::{InstalledCa, assert_system_store_is_read};

/// The longest session the broker grants (`connections.max.reauth.ms`).
const MAX_REAUTH: Duration = Duration::from_secs(3);
/// The lifetime of the endpoint's tokens.
const TOKEN_LIFETIME: Duration = Duration::from_secs(4);
const CLIENT_ID: &str = "kafka-eos-test-client";
const CLIENT_SECRET: &str = "kafka-eos-test-secret";

pub(crate) struct OAuthKafka {
    pub(crate) issuer: Arc<JwtIssuer>,
    pub(crate) cluster: KafkaCluster,
}

impl OAuthKafka {
    pub(crate) fn tls(&self) -> &TlsFiles {
        self.cluster.tls_files().expect("a TLS cluster")
    }
}

/// The module's broker (SASL_SSL CLIENT listener), started on first use.
pub(crate) async fn kafka() -> &'static OAuthKafka {
    static KAFKA: OnceCell<OAuthKafka> = OnceCell::const_new();
    KAFKA
        .get_or_init(|| async {
            let issuer = Arc::new(JwtIssuer::new().expect("RSA keys and JWKS"));
            let cluster = KafkaCluster::builder()
                .sasl(SaslConfig::default())
                .tls(true)
                .oauth_bearer(&issuer, Some(MAX_REAUTH))
                .start()
                .await
                .expect("a Kafka 4.4 broker with a SASL_SSL OAUTHBEARER listener");
            OAuthKafka { issuer, cluster }
        })
        .await
}

/// An https token endpoint of its own for a test.
pub(crate) async fn https_endpoint(kafka: &OAuthKafka) -> TokenEndpoint {
    TokenEndpoint::start_https(
        kafka.issuer.clone(),
        CLIENT_ID,
        CLIENT_SECRET,
        TOKEN_LIFETIME,
        kafka.tls(),
    )
    .await
    .expect("https token endpoint")
}

/// The OAUTHBEARER client properties over SASL_SSL (trust settings
/// apart): Java's keys, refreshing at half the token's lifetime.
pub(crate) fn oauth_props(kafka: &OAuthKafka, endpoint: &TokenEndpoint) -> Vec<(String, String)> {
    assert!(endpoint.url().starts_with("https://"));
    [
        ("bootstrap.servers", kafka.cluster.bootstrap().as_str()),
        ("security.protocol", "SASL_SSL"),
        ("sasl.mechanism", "OAUTHBEARER"),
        (
            "sasl.login.callback.handler.class",
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
        ),
        ("sasl.oauthbearer.token.endpoint.url", endpoint.url()),
        ("sasl.oauthbearer.client.credentials.client.id", CLIENT_ID),
        (
            "sasl.oauthbearer.client.credentials.client.secret",
            CLIENT_SECRET,
        ),
        ("sasl.login.refresh.window.factor", "0.5"),
        ("sasl.login.refresh.window.jitter", "0"),
        ("sasl.login.refresh.min.period.seconds", "1"),
        ("sasl.login.refresh.buffer.seconds", "1"),
        ("sasl.login.read.timeout.ms", "2000"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// The harness's PKCS#12 trust store as `ssl.truststore.*`.
pub(crate) fn truststore(tls: &TlsFiles) -> Vec<(String, String)> {
    vec![
        ("ssl.truststore.type".into(), "PKCS12".into()),
        (
            "ssl.truststore.location".into(),
            tls.truststore_path.display().to_string(),
        ),
        (
            "ssl.truststore.password".into(),
            tls.truststore_password.clone(),
        ),
    ]
}

fn with(mut props: Vec<(String, String)>, extra: &[(&str, &str)]) -> Vec<(String, String)> {
    props.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    props
}

/// Commits `transactions` transactions of ten records while a KIP-848
/// member reads them read_committed; returns how many times the member
/// saw each record, and the re-authentications counted meanwhile.
async fn transactions_read_back(
    props: Vec<(String, String)>,
    topic: &str,
    transactions: usize,
) -> (BTreeMap<String, usize>, u64) {
    let reauths_before = kafka_client::internals::reauthentications();
    let config = GroupConsumerConfig::from_properties(with(
        props.clone(),
        &[
            ("group.id", &unique_name("oauth-ssl")),
            ("auto.offset.reset", "earliest"),
            ("isolation.level", "read_committed"),
        ],
    ))
    .expect("consumer config");
    let mut consumer = GroupConsumer::subscribe(config, [topic])
        .await
        .expect("a group member over SASL_SSL + OAUTHBEARER");
    let producer = TransactionalProducer::connect(
        ProducerConfig::from_properties(with(
            props,
            &[("transactional.id", &unique_name("oauth-ssl-txn"))],
        ))
        .expect("producer config"),
    )
    .await
    .expect("a transactional producer over SASL_SSL + OAUTHBEARER");
    producer.init_transactions().await.expect("init");
    let reader = tokio::spawn(async move {
        let n = transactions * 10;
        let deadline = Instant::now() + Duration::from_secs(120);
        let mut seen = BTreeMap::new();
        let mut total = 0;
        while total < n {
            assert!(Instant::now() < deadline, "read {total} of {n} records");
            match consumer.poll(Duration::from_millis(200)).await {
                Ok(ConsumerEvent::Records(records)) => {
                    for r in records {
                        let v = String::from_utf8(r.value.expect("a value").to_vec()).unwrap();
                        *seen.entry(v).or_insert(0usize) += 1;
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
            if let Ok(ConsumerEvent::Records(records)) =
                consumer.poll(Duration::from_millis(200)).await
            {
                for r in records {
                    let v = String::from_utf8(r.value.expect("a value").to_vec()).unwrap();
                    *seen.entry(v).or_insert(0) += 1;
                }
            }
        }
        consumer.close(Duration::from_secs(5)).await;
        seen
    });
    for t in 0..transactions {
        producer.begin_transaction().unwrap();
        let sends: Vec<_> = (0..10)
            .map(|i| producer.send(ProducerRecord::new(topic).value(format!("{t}-{i}"))))
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
    let seen = reader.await.expect("member task");
    producer.close(Duration::from_secs(10)).await.ok();
    let reauths = kafka_client::internals::reauthentications() - reauths_before;
    (seen, reauths)
}

fn assert_each_once(seen: &BTreeMap<String, usize>, n: usize) {
    assert_eq!(seen.len(), n, "distinct records");
    let dup: Vec<_> = seen.iter().filter(|(_, c)| **c != 1).collect();
    assert!(dup.is_empty(), "records seen more than once: {dup:?}");
}

/// Invariant: over SASL_SSL, with tokens from an https endpoint trusted
/// through `ssl.truststore.*`, a transactional producer's records are
/// each read exactly once by a read_committed group member while the
/// connections re-authenticate (KIP-368) with refreshed tokens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sasl_ssl_transactions_with_an_https_endpoint_trusted_by_the_truststore() {
    let kafka = kafka().await;
    let endpoint = https_endpoint(kafka).await;
    let topic = unique_name("oauth-ssl");
    kafka.cluster.create_topic(&topic, 2, 1).await.unwrap();
    let mut props = oauth_props(kafka, &endpoint);
    props.extend(truststore(kafka.tls()));
    let (seen, reauths) = transactions_read_back(props, &topic, 30).await;
    assert_each_once(&seen, 300);
    let issued = endpoint.issued();
    eprintln!(
        "SASL_SSL: 30 transactions, {reauths} re-authentications, {issued} tokens over https"
    );
    assert!(reauths >= 3, "only {reauths} re-authentications");
    assert!(issued >= 2, "only {issued} tokens issued");
}

/// Invariant: the token endpoint's certificate is checked against the
/// configured trust: a client trusting another CA gets no token (and the
/// endpoint issues none), one trusting the harness's CA gets one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_https_endpoint_is_trusted_only_through_the_configured_ca() {
    let kafka = kafka().await;
    let endpoint = https_endpoint(kafka).await;
    let provider = |tls: TlsConfig| {
        let mut c = ClientCredentialsConfig::new(endpoint.url(), CLIENT_ID, CLIENT_SECRET);
        c.tls = Some(tls);
        c.retry_backoff_max = Duration::ZERO;
        ClientCredentialsProvider::new(c)
    };
    let other_ca = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../client/src/connection/fixtures/ca.pem"
    ))
    .expect("the client crate's fixture CA");
    let refused = provider(TlsConfig::new(other_ca)).token().await;
    assert!(
        refused.is_err(),
        "a token through an untrusted certificate: {refused:?}"
    );
    assert_eq!(endpoint.issued(), 0);
    let trusted = ClientConfig::from_properties(with(
        truststore(kafka.tls()),
        &[
            ("bootstrap.servers", "unused:9092"),
            ("security.protocol", "SSL"),
        ],
    ))
    .expect("trust store settings")
    .tls
    .expect("TLS settings");
    let token = provider(trusted).token().await.expect("a token over https");
    assert_eq!(token.principal(), "kafka-eos-client");
    assert_eq!(endpoint.issued(), 1);
}

/// Invariant: with no `ssl.*` setting both the brokers and the https
/// token endpoint are trusted through the operating system's store (as
/// Java's login callback uses the JVM's default trust store): with the
/// harness's CA installed there, every record is read exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sasl_ssl_with_the_system_trust_store_for_brokers_and_endpoint() {
    assert_system_store_is_read();
    let kafka = kafka().await;
    let endpoint = https_endpoint(kafka).await;
    let topic = unique_name("oauth-ssl-system");
    kafka.cluster.create_topic(&topic, 1, 1).await.unwrap();
    let _ca = InstalledCa::install(&kafka.tls().ca_pem);
    let (seen, _) = transactions_read_back(oauth_props(kafka, &endpoint), &topic, 3).await;
    assert_each_once(&seen, 30);
    assert!(endpoint.issued() >= 1);
}
