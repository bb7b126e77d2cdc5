//! TLS (cargo feature `tls`) against a real Kafka 4.4 broker whose CLIENT
//! listener is `SSL` / `SASL_SSL` with a certificate from the harness's CA:
//! ApiVersions + Metadata, produce and read back over TLS, certificate and
//! host name verification failing fast with typed errors, SASL_SSL with
//! SCRAM-SHA-512 and a client certificate (mutual TLS).
//!
//! Each test starts a broker of its own (the shared clusters have no TLS
//! or SASL listener) and runs its cases in turn on it: a test per case
//! would start a broker per case.
#![cfg(feature = "tls")]

use kafka_producer::connection::TlsConfig;
use kafka_producer::kafka_proto::messages::MetadataRequest;
use kafka_producer::reader::{IsolationLevel, Reader, ReaderConfig};
use kafka_producer::{
    Cluster, ConnError, Connection, ConnectionConfig, Producer, ProducerConfig, ProducerRecord,
    SaslConfig,
};
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

/// Produces `n` records through `config` and reads them back over the same
/// security settings with the reader.
async fn produce_and_read_back(config: ProducerConfig, topic: &str, n: usize) {
    let cluster_config = config.cluster_config();
    let producer = Producer::connect(config).await.expect("producer over TLS");
    let futures: Vec<_> = (0..n)
        .map(|i| producer.send(ProducerRecord::new(topic).value(format!("tls-{i}"))))
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
    let got = reader.read_to_end(topic, &[0]).await.expect("read back");
    let values: Vec<String> = got
        .iter()
        .map(|r| String::from_utf8_lossy(r.value.as_deref().unwrap_or_default()).into_owned())
        .collect();
    let expected: Vec<String> = (0..n).map(|i| format!("tls-{i}")).collect();
    assert_eq!(values, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ssl_connect_verify_produce_and_read_back() {
    let kafka = KafkaCluster::builder()
        .tls(true)
        .start()
        .await
        .expect("start a TLS cluster");
    let addr = kafka.broker_addrs()[0].to_string();
    let ca = kafka.ca_pem().unwrap().to_vec();

    // ApiVersions + Metadata over TLS, the name being the IP SAN.
    let conn = Connection::connect(&addr, &tls_config(TlsConfig::new(ca.clone())))
        .await
        .expect("TLS connect");
    let v = conn.versions().version_for::<MetadataRequest>().unwrap();
    let md = conn.send(&MetadataRequest::default(), v).await.unwrap();
    assert_eq!(md.brokers.len(), 1);
    assert_eq!(md.brokers[0].port, kafka.broker_addrs()[0].port() as i32);
    conn.close();

    // The DNS SAN verifies too.
    let tls = TlsConfig::new(ca.clone()).server_name("localhost");
    Connection::connect(&addr, &tls_config(tls))
        .await
        .expect("server name localhost");

    // A name the certificate does not cover: refused, unless host name
    // verification is off (ssl.endpoint.identification.algorithm=).
    let tls = TlsConfig::new(ca.clone()).server_name("wrong.example");
    let started = Instant::now();
    let r = Connection::connect(&addr, &tls_config(tls.clone())).await;
    assert_tls_refused(r, started, "wrong server name");
    Connection::connect(&addr, &tls_config(tls.verify_hostname(false)))
        .await
        .expect("chain-only verification accepts a name mismatch");

    // A CA that did not sign the broker: refused, with or without host
    // name verification.
    let other_dir = kafka.data_dir().join("other-ca");
    std::fs::create_dir_all(&other_dir).unwrap();
    let other = kafka_testcontainers::tls::generate(&other_dir).unwrap();
    for verify_hostname in [true, false] {
        let tls = TlsConfig::new(other.ca_pem.clone()).verify_hostname(verify_hostname);
        let started = Instant::now();
        let r = Connection::connect(&addr, &tls_config(tls)).await;
        assert_tls_refused(r, started, "wrong CA");
    }

    // Garbage instead of a CA: a configuration error.
    let r = Connection::connect(&addr, &tls_config(TlsConfig::new(b"not pem".to_vec()))).await;
    assert!(
        matches!(r, Err(ConnError::InvalidTlsConfig { .. })),
        "{r:?}"
    );

    // Plaintext against the TLS listener fails (no hang past the timeout).
    let plain = ConnectionConfig {
        connect_timeout: Duration::from_secs(10),
        ..Default::default()
    };
    assert!(Connection::connect(&addr, &plain).await.is_err());

    // The producer from Java properties, and the reader, over TLS.
    kafka.create_topic("tls-produce", 1, 1).await.unwrap();
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
    produce_and_read_back(config, "tls-produce", 300).await;

    // A wrong CA through the properties: the producer cannot bootstrap.
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sasl_ssl_scram_with_a_client_certificate() {
    let kafka = KafkaCluster::builder()
        .sasl(HarnessSasl::new().user("alice", "alice-secret"))
        .tls_client_auth(true)
        .start()
        .await
        .expect("start a SASL_SSL cluster with client auth");
    let addr = kafka.broker_addrs()[0].to_string();
    let files = kafka.tls_files().unwrap().clone();
    let with_cert = TlsConfig::new(files.ca_pem.clone())
        .client_auth(files.client_cert_pem.clone(), files.client_key_pem.clone());

    // SCRAM-SHA-512 over mutual TLS.
    let cfg = ConnectionConfig {
        sasl: Some(SaslConfig::scram_sha512("alice", "alice-secret")),
        ..tls_config(with_cert.clone())
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

    // A wrong password is a SASL failure, after a good handshake.
    let cfg = ConnectionConfig {
        sasl: Some(SaslConfig::scram_sha512("alice", "wrong")),
        ..tls_config(with_cert.clone())
    };
    let err = Connection::connect(&addr, &cfg).await.unwrap_err();
    assert!(
        matches!(err, ConnError::AuthenticationFailed { .. }),
        "{err:?}"
    );

    // No client certificate: the broker rejects the handshake.
    let cfg = ConnectionConfig {
        sasl: Some(SaslConfig::scram_sha512("alice", "alice-secret")),
        ..tls_config(TlsConfig::new(files.ca_pem.clone()))
    };
    let started = Instant::now();
    let err = Connection::connect(&addr, &cfg).await.unwrap_err();
    assert!(
        !err.is_retriable() || matches!(err, ConnError::Disconnected { .. }),
        "{err:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(8), "{err:?}");

    // The producer from Java properties: SASL_SSL, SCRAM-SHA-512, PEM key
    // store given inline.
    kafka.create_topic("sasl-ssl", 1, 1).await.unwrap();
    let key = String::from_utf8(files.client_key_pem.clone()).unwrap();
    let chain = String::from_utf8(files.client_cert_pem.clone()).unwrap();
    let config = ProducerConfig::from_properties([
        ("bootstrap.servers", kafka.bootstrap().as_str()),
        ("security.protocol", "SASL_SSL"),
        ("sasl.mechanism", "SCRAM-SHA-512"),
        (
            "sasl.jaas.config",
            "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"alice\" password=\"alice-secret\";",
        ),
        ("ssl.truststore.type", "PEM"),
        (
            "ssl.truststore.location",
            kafka.ca_pem_path().unwrap().to_str().unwrap(),
        ),
        ("ssl.keystore.type", "PEM"),
        ("ssl.keystore.key", key.as_str()),
        ("ssl.keystore.certificate.chain", chain.as_str()),
    ])
    .expect("SASL_SSL properties");
    produce_and_read_back(config, "sasl-ssl", 100).await;
}
