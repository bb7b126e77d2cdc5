//! TLS trust and key material as Java's clients take it, against a real
//! Kafka 4.4 broker whose CLIENT listener is `SSL` with
//! `ssl.client.auth=required` (a certificate from the harness's CA):
//! - no trust-store setting: the operating system's trust store, read at
//!   connection time (the test installs the harness's CA with
//!   `update-ca-certificates` and removes it afterwards; it runs as root);
//! - the client's certificate from a PKCS#12 key store, and from a PEM key
//!   store whose key is encrypted (`ssl.key.password`);
//! - a PKCS#12 trust store.
//!
//! One broker for the module, handed from test to test through a
//! `ClusterSlot` (one broker start in all).
#![cfg(feature = "tls")]

use kafka_client::{ClientConfig, ConnError, Connection, ConnectionConfig};
use kafka_producer::kafka_proto::messages::MetadataRequest;
use kafka_testcontainers::tls::TlsFiles;
use kafka_testcontainers::{ClusterSlot, KafkaCluster, SlotGuard};

use crate::support::system_ca::{InstalledCa, assert_system_store_is_read};

static SLOT: ClusterSlot = ClusterSlot::new();

/// One Kafka 4.4 node whose CLIENT listener is `SSL` and requires a client
/// certificate signed by the harness's CA.
async fn mtls_kafka() -> SlotGuard<'static> {
    SLOT.lock("Kafka 4.4, SSL with client authentication", || {
        KafkaCluster::builder().tls_client_auth(true)
    })
    .await
    .expect("start an SSL cluster with client auth")
}

/// The connection settings of Java properties `props` (plus
/// `bootstrap.servers` and `security.protocol=SSL`).
fn ssl_config(kafka: &KafkaCluster, props: &[(&str, String)]) -> ConnectionConfig {
    let mut all = vec![
        ("bootstrap.servers", kafka.bootstrap()),
        ("security.protocol", "SSL".to_string()),
    ];
    all.extend(props.iter().cloned());
    ClientConfig::from_properties(all)
        .expect("SSL properties")
        .connection_config()
}

/// The PKCS#12 client key store's properties.
fn pkcs12_key_store(files: &TlsFiles) -> Vec<(&'static str, String)> {
    vec![
        ("ssl.keystore.type", "PKCS12".into()),
        (
            "ssl.keystore.location",
            files.client_keystore_path.display().to_string(),
        ),
        (
            "ssl.keystore.password",
            files.client_keystore_password.clone(),
        ),
    ]
}

/// Connects and reads the cluster's metadata: one broker listed.
async fn metadata_over(kafka: &KafkaCluster, config: &ConnectionConfig) -> Result<(), ConnError> {
    let addr = kafka.broker_addrs()[0].to_string();
    let conn = Connection::connect(&addr, config).await?;
    let v = conn.versions().version_for::<MetadataRequest>().unwrap();
    let md = conn.send(&MetadataRequest::default(), v).await?;
    assert_eq!(md.brokers.len(), 1);
    conn.close();
    Ok(())
}

/// Invariant: with no trust-store setting a broker whose certificate is
/// signed by a CA the system store lacks is refused, fatally, with an
/// error that names the trust store used and the setting to change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn system_trust_store_refuses_an_unknown_ca() {
    assert_system_store_is_read();
    let kafka = mtls_kafka().await;
    let files = kafka.tls_files().unwrap().clone();
    let err = metadata_over(&kafka, &ssl_config(&kafka, &pkcs12_key_store(&files)))
        .await
        .expect_err("the harness's CA is in no system store");
    assert!(
        matches!(err, ConnError::Tls { .. }) && err.is_fatal(),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.contains("UnknownIssuer")
            && message.contains("operating system's trust store")
            && message.contains("ssl.truststore.location"),
        "{message}"
    );
}

/// Invariant: with no trust-store setting the client trusts the
/// operating system's store as it is at connection time: refused before
/// the broker's CA is installed there, connected (and the metadata read)
/// after `update-ca-certificates` installed it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn system_trust_store_is_read_at_connection_time() {
    assert_system_store_is_read();
    let kafka = mtls_kafka().await;
    let files = kafka.tls_files().unwrap().clone();
    let config = ssl_config(&kafka, &pkcs12_key_store(&files));
    assert!(
        metadata_over(&kafka, &config).await.is_err(),
        "trusted before the CA was installed"
    );
    let _installed = InstalledCa::install(&files.ca_pem);
    metadata_over(&kafka, &config)
        .await
        .expect("trusted through the system store");
}

/// Invariant: a PKCS#12 trust store and a PKCS#12 key store (the
/// certificate the broker requires) connect; without the key store the
/// broker refuses the handshake, so the certificate was the one used.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pkcs12_trust_and_key_stores_connect_with_client_auth() {
    let kafka = mtls_kafka().await;
    let files = kafka.tls_files().unwrap().clone();
    let trust = vec![
        ("ssl.truststore.type", "PKCS12".to_string()),
        (
            "ssl.truststore.location",
            files.truststore_path.display().to_string(),
        ),
        ("ssl.truststore.password", files.truststore_password.clone()),
    ];
    let with_key_store: Vec<_> = trust
        .iter()
        .cloned()
        .chain(pkcs12_key_store(&files))
        .collect();
    metadata_over(&kafka, &ssl_config(&kafka, &with_key_store))
        .await
        .expect("PKCS#12 trust and key stores");
    let err = metadata_over(&kafka, &ssl_config(&kafka, &trust))
        .await
        .expect_err("the broker requires a client certificate");
    assert!(
        err.is_fatal() || matches!(err, ConnError::Disconnected { .. }),
        "{err:?}"
    );
}

/// Invariant: a PEM key store file holding an encrypted PKCS#8 key and
/// its certificate, opened with `ssl.key.password`, presents the client
/// certificate the broker requires.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn encrypted_pem_key_connects_with_client_auth() {
    let kafka = mtls_kafka().await;
    let files = kafka.tls_files().unwrap().clone();
    let dir = tempfile::tempdir().unwrap();
    let key_store = dir.path().join("client-keystore.pem");
    let mut pem = std::fs::read(&files.client_key_encrypted_path).unwrap();
    assert!(pem.starts_with(b"-----BEGIN ENCRYPTED PRIVATE KEY-----"));
    pem.extend_from_slice(&files.client_cert_pem);
    std::fs::write(&key_store, pem).unwrap();
    let props = vec![
        ("ssl.truststore.type", "PEM".to_string()),
        (
            "ssl.truststore.location",
            files.ca_pem_path.display().to_string(),
        ),
        ("ssl.keystore.type", "PEM".to_string()),
        ("ssl.keystore.location", key_store.display().to_string()),
        ("ssl.key.password", files.client_key_password.clone()),
    ];
    metadata_over(&kafka, &ssl_config(&kafka, &props))
        .await
        .expect("encrypted PEM key");
}
