//! SSL client listener: generated CA, a real TLS handshake verified against
//! it (openssl s_client), plaintext refused, and the Java producer over TLS.

use kafka_testcontainers::wire::KafkaConnection;
use kafka_testcontainers::{KafkaCluster, ProducerPerfArgs};
use std::path::Path;
use std::process::{Command, Stdio};

/// `openssl s_client` against `port`, trusting `ca` and checking the IP
/// SAN; true when the handshake and the verification succeed.
fn s_client_verifies(port: u16, ca: &Path) -> (bool, String) {
    let out = Command::new("timeout")
        .args([
            "20",
            "openssl",
            "s_client",
            "-brief",
            "-verify_return_error",
        ])
        .args(["-verify_ip", "127.0.0.1", "-connect"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("-CAfile")
        .arg(ca)
        .stdin(Stdio::null())
        .output()
        .expect("run openssl s_client");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (
        out.status.success() && text.contains("Verification: OK"),
        text,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_cluster_serves_a_certificate_signed_by_its_ca() {
    let cluster = KafkaCluster::builder()
        .tls(true)
        .start()
        .await
        .expect("start with TLS");
    let ca = cluster.ca_pem_path().expect("a TLS cluster has a CA");
    assert!(ca.is_file(), "{}", ca.display());
    assert!(
        cluster
            .ca_pem()
            .unwrap()
            .starts_with(b"-----BEGIN CERTIFICATE-----")
    );
    let port = cluster.broker_addrs()[0].port();

    let (ok, out) = s_client_verifies(port, ca);
    assert!(ok, "TLS handshake verified against the cluster CA:\n{out}");

    // Another CA does not vouch for the broker.
    let other = tempfile::tempdir().unwrap();
    let other = kafka_testcontainers::tls::generate(other.path()).unwrap();
    let (ok, out) = s_client_verifies(port, &other.ca_pem_path);
    assert!(!ok, "a foreign CA must not verify:\n{out}");

    // Plaintext Kafka is refused on the TLS listener.
    let plain = async {
        let mut conn = KafkaConnection::connect(cluster.broker_addrs()[0]).await?;
        conn.set_io_timeout(std::time::Duration::from_secs(5));
        conn.api_versions().await
    };
    assert!(plain.await.is_err(), "plaintext ApiVersions on SSL");

    // INTERNAL stays plaintext (Java tools, readiness).
    assert!(cluster.api_versions(0).await.is_ok());

    // The Java producer over TLS with the harness's client properties.
    cluster.create_topic("tls", 1, 1).await.unwrap();
    let props = cluster.client_properties();
    assert!(props.contains(&("security.protocol".into(), "SSL".into())));
    let summary = cluster
        .producer_performance(&ProducerPerfArgs {
            topic: "tls".into(),
            num_records: 50,
            record_size: 10,
            throughput: -1,
            props,
            ..Default::default()
        })
        .await
        .expect("ProducerPerformance over SSL");
    assert_eq!(summary.records, 50);
}
