//! TLS (cargo feature `tls`) against a real Kafka 4.4 broker whose CLIENT
//! listener is `SSL` / `SASL_SSL` with a certificate from the harness's CA:
//! ApiVersions + Metadata, produce and read back over TLS, certificate and
//! host name verification failing fast with typed errors, SASL_SSL with
//! SCRAM-SHA-512 and a client certificate (mutual TLS).
//!
//! The tests keep brokers of their own (the shared clusters have no TLS or
//! SASL listener): one with an `SSL` listener, one with a `SASL_SSL`
//! listener that requires a client certificate. They run one at a time,
//! each broker handed from test to test through one `slot::ClusterSlot`
//! (in name order the SASL_SSL tests run first, then the SSL ones: two
//! broker starts in all).
#![cfg(feature = "tls")]

use kafka_client::TlsConfig;
use kafka_client::{Cluster, ConnError, Connection, ConnectionConfig, SaslConfig};
use kafka_consumer::{IsolationLevel, Reader, ReaderConfig};
use kafka_producer::kafka_proto::messages::MetadataRequest;
use kafka_producer::{Producer, ProducerConfig, ProducerRecord};
use kafka_testcontainers::unique_name;
use kafka_testcontainers::{ClusterSlot, SlotGuard};
use kafka_testcontainers::{KafkaCluster, SaslConfig as HarnessSasl};
use std::time::{Duration, Instant};

fn tls_config(tls: TlsConfig) -> ConnectionConfig {
    ConnectionConfig {
        tls: Some(tls),
        connect_timeout: Duration::from_secs(10),
        ..Default::default()
    }
}

/// A rustls refusal: typed, fatal, and fast (no hang until a timeout).
fn assert_tls_refused(r: Result<Connection, ConnError>, started: Instant, what: &str) {
    match r {
        Err(e @ ConnError::Tls { .. }) => {
            assert!(
                !e.is_retriable(),
                "{what}: certificate errors are fatal: {e}"
            );
            assert!(started.elapsed() < Duration::from_secs(5), "{what}: slow");
        }
        other => panic!("{what}: expected ConnError::Tls, got {other:?}"),
    }
}

/// Produces `n` records through `config` to partition 0 of `topic` and
/// reads them back over the same security settings with the reader.
async fn produce_and_read_back(config: ProducerConfig, topic: &str, n: usize) {
    produce_to_partition_and_read_back(config, topic, 0, n).await;
}

/// Produces `n` records through `config` to `partition` of `topic` and
/// reads them back over the same security settings with the reader.
async fn produce_to_partition_and_read_back(
    config: ProducerConfig,
    topic: &str,
    partition: i32,
    n: usize,
) {
    let cluster_config = config.cluster_config();
    let producer = Producer::connect(config).await.expect("producer over TLS");
    let futures: Vec<_> = (0..n)
        .map(|i| {
            producer.send(
                ProducerRecord::new(topic)
                    .partition(partition)
                    .value(format!("tls-{i}")),
            )
        })
        .collect();
    for (i, f) in futures.into_iter().enumerate() {
        let m = f.await.unwrap_or_else(|e| panic!("record {i}: {e}"));
        assert_eq!(m.offset, Some(i as i64));
    }
    producer.close(Duration::from_secs(10)).await.unwrap();

    let cluster = Cluster::connect(cluster_config)
        .await
        .expect("cluster over TLS");
    let mut reader = Reader::new(
        cluster,
        ReaderConfig {
            isolation: IsolationLevel::ReadUncommitted,
            ..Default::default()
        },
    );
    let got = reader
        .read_to_end(topic, &[partition])
        .await
        .expect("read back");
    let values: Vec<String> = got
        .iter()
        .map(|r| String::from_utf8_lossy(r.value.as_deref().unwrap_or_default()).into_owned())
        .collect();
    let expected: Vec<String> = (0..n).map(|i| format!("tls-{i}")).collect();
    assert_eq!(values, expected);
}

/// The tests' brokers (an SSL one, a SASL_SSL one with client
/// authentication), one at a time, each handed on to the next test of its
/// kind.
static SLOT: ClusterSlot = ClusterSlot::new();

/// One Kafka 4.4 node whose CLIENT listener is `SSL` (no client
/// certificate asked for).
async fn ssl_kafka() -> SlotGuard<'static> {
    SLOT.lock("Kafka 4.4, SSL", || KafkaCluster::builder().tls(true))
        .await
        .expect("start a TLS cluster")
}

/// One Kafka 4.4 node whose CLIENT listener is `SASL_SSL` for `alice` /
/// `alice-secret`, a client certificate required (mutual TLS).
async fn sasl_ssl_kafka() -> SlotGuard<'static> {
    SLOT.lock("Kafka 4.4, SASL_SSL with client authentication", || {
        KafkaCluster::builder()
            .sasl(HarnessSasl::new().user("alice", "alice-secret"))
            .tls_client_auth(true)
    })
    .await
    .expect("start a SASL_SSL cluster with client auth")
}

/// A CA (and certificates) that did not sign the broker's, in a directory
/// that lives as long as the returned guard.
fn other_ca() -> (tempfile::TempDir, kafka_testcontainers::tls::TlsFiles) {
    let dir = tempfile::tempdir().unwrap();
    let files = kafka_testcontainers::tls::generate(dir.path()).unwrap();
    (dir, files)
}

/// Invariant: ApiVersions + Metadata work over TLS, the broker's
/// certificate verified against the harness's CA with the IP address as
/// the name (its IP SAN); the metadata lists the broker at its port.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ssl_connects_and_reads_metadata_verifying_the_ip_san() {
    let kafka = ssl_kafka().await;
    let addr = kafka.broker_addrs()[0].to_string();
    let ca = kafka.ca_pem().unwrap().to_vec();
    let conn = Connection::connect(&addr, &tls_config(TlsConfig::new(ca)))
        .await
        .expect("TLS connect");
    let v = conn.versions().version_for::<MetadataRequest>().unwrap();
    let md = conn.send(&MetadataRequest::default(), v).await.unwrap();
    assert_eq!(md.brokers.len(), 1);
    assert_eq!(md.brokers[0].port, kafka.broker_addrs()[0].port() as i32);
    conn.close();
}

/// Invariant: the certificate's DNS SAN (`localhost`) verifies as the
/// server name too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ssl_verifies_the_dns_san_localhost() {
    let kafka = ssl_kafka().await;
    let addr = kafka.broker_addrs()[0].to_string();
    let ca = kafka.ca_pem().unwrap().to_vec();
    let tls = TlsConfig::new(ca).server_name("localhost");
    Connection::connect(&addr, &tls_config(tls))
        .await
        .expect("server name localhost");
}

/// Invariant: a server name the certificate does not cover is refused
/// (typed, fatal, fast), unless host name verification is off
/// (`ssl.endpoint.identification.algorithm=`), which accepts it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ssl_refuses_a_wrong_server_name_unless_hostname_verification_is_off() {
    let kafka = ssl_kafka().await;
    let addr = kafka.broker_addrs()[0].to_string();
    let ca = kafka.ca_pem().unwrap().to_vec();
    let tls = TlsConfig::new(ca).server_name("wrong.example");
    let started = Instant::now();
    let r = Connection::connect(&addr, &tls_config(tls.clone())).await;
    assert_tls_refused(r, started, "wrong server name");
    Connection::connect(&addr, &tls_config(tls.verify_hostname(false)))
        .await
        .expect("chain-only verification accepts a name mismatch");
}

/// Invariant: a CA that did not sign the broker's certificate is refused
/// (typed, fatal, fast), with or without host name verification.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ssl_refuses_an_untrusted_ca_with_or_without_hostname_verification() {
    let kafka = ssl_kafka().await;
    let addr = kafka.broker_addrs()[0].to_string();
    let (_dir, other) = other_ca();
    for verify_hostname in [true, false] {
        let tls = TlsConfig::new(other.ca_pem.clone()).verify_hostname(verify_hostname);
        let started = Instant::now();
        let r = Connection::connect(&addr, &tls_config(tls)).await;
        assert_tls_refused(r, started, "wrong CA");
    }
}

/// Invariant: garbage instead of a PEM CA is a configuration error
/// (`InvalidTlsConfig`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ssl_garbage_ca_is_a_configuration_error() {
    let kafka = ssl_kafka().await;
    let addr = kafka.broker_addrs()[0].to_string();
    let r = Connection::connect(&addr, &tls_config(TlsConfig::new(b"not pem".to_vec()))).await;
    assert!(
        matches!(r, Err(ConnError::InvalidTlsConfig { .. })),
        "{r:?}"
    );
}

/// Invariant: a plaintext connection to the TLS listener fails (no hang
/// past the connect timeout).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ssl_listener_refuses_plaintext() {
    let kafka = ssl_kafka().await;
    let addr = kafka.broker_addrs()[0].to_string();
    let plain = ConnectionConfig {
        connect_timeout: Duration::from_secs(10),
        ..Default::default()
    };
    assert!(Connection::connect(&addr, &plain).await.is_err());
}

/// Invariant: a producer configured from Java properties (`SSL`, PEM trust
/// store, host name verification on) produces over TLS, every record at
/// its offset, and the reader reads them back in order over the same
/// settings.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ssl_producer_from_java_properties_produces_and_reads_back() {
    let kafka = ssl_kafka().await;
    let topic = unique_name("tls-produce");
    kafka.create_topic(&topic, 1, 1).await.unwrap();
    let config = ProducerConfig::from_properties([
        ("bootstrap.servers", kafka.bootstrap().as_str()),
        ("security.protocol", "SSL"),
        ("ssl.truststore.type", "PEM"),
        (
            "ssl.truststore.location",
            kafka.ca_pem_path().unwrap().to_str().unwrap(),
        ),
        ("ssl.endpoint.identification.algorithm", "https"),
        ("linger.ms", "5"),
    ])
    .expect("SSL properties");
    produce_and_read_back(config, &topic, 300).await;
}

/// Invariant: with a trust store that did not sign the broker (Java
/// properties), the producer's cluster cannot bootstrap: a TLS handshake
/// error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ssl_producer_with_an_untrusted_ca_cannot_bootstrap() {
    let kafka = ssl_kafka().await;
    let (_dir, other) = other_ca();
    let config = ProducerConfig::from_properties([
        ("bootstrap.servers", kafka.bootstrap().as_str()),
        ("security.protocol", "SSL"),
        ("ssl.truststore.type", "PEM"),
        (
            "ssl.truststore.location",
            other.ca_pem_path.to_str().unwrap(),
        ),
    ])
    .unwrap();
    let err = Cluster::connect(config.cluster_config())
        .await
        .expect_err("untrusted broker");
    assert!(format!("{err}").contains("TLS handshake"), "{err}");
}

/// The harness's CA, and a TLS configuration trusting it with the
/// harness's client certificate.
fn with_client_cert(kafka: &KafkaCluster) -> (Vec<u8>, TlsConfig) {
    let files = kafka.tls_files().unwrap().clone();
    let tls = TlsConfig::new(files.ca_pem.clone())
        .client_auth(files.client_cert_pem.clone(), files.client_key_pem.clone());
    (files.ca_pem, tls)
}

/// Invariant: SCRAM-SHA-512 over mutual TLS (the client's certificate
/// presented) authenticates, and Metadata then lists the broker.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sasl_ssl_scram_sha_512_with_a_client_certificate_connects() {
    let kafka = sasl_ssl_kafka().await;
    let addr = kafka.broker_addrs()[0].to_string();
    let (_, with_cert) = with_client_cert(&kafka);
    let cfg = ConnectionConfig {
        sasl: Some(SaslConfig::scram_sha512("alice", "alice-secret")),
        ..tls_config(with_cert)
    };
    let conn = Connection::connect(&addr, &cfg).await.expect("SASL_SSL");
    let v = conn.versions().version_for::<MetadataRequest>().unwrap();
    assert_eq!(
        conn.send(&MetadataRequest::default(), v)
            .await
            .unwrap()
            .brokers
            .len(),
        1
    );
}

/// Invariant: over mutual TLS, a wrong password is a SASL failure
/// (`AuthenticationFailed`), after a good handshake.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sasl_ssl_wrong_password_is_an_authentication_failure() {
    let kafka = sasl_ssl_kafka().await;
    let addr = kafka.broker_addrs()[0].to_string();
    let (_, with_cert) = with_client_cert(&kafka);
    let cfg = ConnectionConfig {
        sasl: Some(SaslConfig::scram_sha512("alice", "wrong")),
        ..tls_config(with_cert)
    };
    let err = Connection::connect(&addr, &cfg).await.unwrap_err();
    assert!(
        matches!(err, ConnError::AuthenticationFailed { .. }),
        "{err:?}"
    );
}

/// Invariant: without a client certificate the broker rejects the
/// handshake: a fatal error (or a disconnect), within 8 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sasl_ssl_without_a_client_certificate_is_refused_fast() {
    let kafka = sasl_ssl_kafka().await;
    let addr = kafka.broker_addrs()[0].to_string();
    let (ca, _) = with_client_cert(&kafka);
    let cfg = ConnectionConfig {
        sasl: Some(SaslConfig::scram_sha512("alice", "alice-secret")),
        ..tls_config(TlsConfig::new(ca))
    };
    let started = Instant::now();
    let err = Connection::connect(&addr, &cfg).await.unwrap_err();
    assert!(
        !err.is_retriable() || matches!(err, ConnError::Disconnected { .. }),
        "{err:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(8), "{err:?}");
}

/// Invariant: a producer configured from Java properties (`SASL_SSL`,
/// SCRAM-SHA-512, PEM trust store, PEM key store given inline) produces
/// over mutual TLS, every record at its offset, and the reader reads them
/// back in order over the same settings.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sasl_ssl_producer_from_java_properties_produces_and_reads_back() {
    let kafka = sasl_ssl_kafka().await;
    let topic = unique_name("sasl-ssl");
    kafka.create_topic(&topic, 1, 1).await.unwrap();
    let config = sasl_ssl_producer_config(&kafka, &[]);
    produce_and_read_back(config, &topic, 100).await;
}

/// Invariant: with `connections.per.broker` 2, partition 1's Produce
/// requests take the producer's second connection to the broker, which
/// makes its own TLS handshake with the client certificate and its own
/// SCRAM authentication: every record lands at its offset and reads back
/// in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sasl_ssl_producer_on_a_second_connection_produces_and_reads_back() {
    let kafka = sasl_ssl_kafka().await;
    let topic = unique_name("sasl-ssl-two");
    kafka.create_topic(&topic, 2, 1).await.unwrap();
    let config = sasl_ssl_producer_config(&kafka, &[("connections.per.broker", "2")]);
    assert_eq!(config.connections_per_broker, 2);
    produce_to_partition_and_read_back(config, &topic, 1, 100).await;
}

/// The SASL_SSL producer's Java properties (SCRAM-SHA-512, PEM trust store,
/// PEM key store given inline), plus `extra`.
fn sasl_ssl_producer_config(kafka: &KafkaCluster, extra: &[(&str, &str)]) -> ProducerConfig {
    let files = kafka.tls_files().unwrap().clone();
    let key = String::from_utf8(files.client_key_pem.clone()).unwrap();
    let chain = String::from_utf8(files.client_cert_pem.clone()).unwrap();
    let bootstrap = kafka.bootstrap();
    let ca = kafka.ca_pem_path().unwrap();
    let mut props = vec![
        ("bootstrap.servers", bootstrap.as_str()),
        ("security.protocol", "SASL_SSL"),
        ("sasl.mechanism", "SCRAM-SHA-512"),
        (
            "sasl.jaas.config",
            "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"alice\" password=\"alice-secret\";",
        ),
        ("ssl.truststore.type", "PEM"),
        ("ssl.truststore.location", ca.to_str().unwrap()),
        ("ssl.keystore.type", "PEM"),
        ("ssl.keystore.key", key.as_str()),
        ("ssl.keystore.certificate.chain", chain.as_str()),
    ];
    props.extend_from_slice(extra);
    ProducerConfig::from_properties(props).expect("SASL_SSL properties")
}
