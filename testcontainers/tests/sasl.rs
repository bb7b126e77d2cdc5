//! SASL_PLAINTEXT client listener with PLAIN and SCRAM users.

use kafka_testcontainers::wire::KafkaConnection;
use kafka_testcontainers::{HarnessError, KafkaCluster, SaslConfig};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sasl_rejects_a_wrong_password_and_accepts_the_right_one() {
    let cluster = KafkaCluster::builder()
        .sasl(
            SaslConfig::new()
                .user("alice", "alice-secret")
                .user("bob", "bob-secret"),
        )
        .start()
        .await
        .expect("start with SASL");
    let addr = cluster.broker_addrs()[0];

    let mut conn = KafkaConnection::connect(addr).await.unwrap();
    conn.api_versions().await.unwrap();
    match conn.sasl_plain("alice", "wrong").await {
        Err(HarnessError::Kafka { api, code, .. }) => {
            assert_eq!(api, "SaslAuthenticate");
            assert_eq!(code, 58, "SASL_AUTHENTICATION_FAILED");
        }
        other => panic!("wrong password accepted or odd error: {other:?}"),
    }

    for (user, password) in [("alice", "alice-secret"), ("bob", "bob-secret")] {
        let mut conn = KafkaConnection::connect(addr).await.unwrap();
        conn.api_versions().await.unwrap();
        conn.sasl_plain(user, password)
            .await
            .expect("right password");
        let versions = conn.api_versions().await.unwrap();
        let md = conn.metadata_brokers(&versions).await.unwrap();
        assert_eq!(md.brokers.len(), 1);
    }

    // The broker really requires authentication on the client listener.
    let mut conn = KafkaConnection::connect(addr).await.unwrap();
    let versions = conn.api_versions().await.unwrap();
    assert!(conn.metadata_brokers(&versions).await.is_err());

    // The Java producer authenticates with PLAIN through the harness too.
    cluster.create_topic("sasl", 1, 1).await.unwrap();
    let summary = cluster
        .producer_performance(&kafka_testcontainers::ProducerPerfArgs {
            topic: "sasl".into(),
            num_records: 50,
            record_size: 10,
            throughput: -1,
            ..Default::default()
        })
        .await
        .expect("ProducerPerformance over SASL");
    assert_eq!(summary.records, 50);
}
