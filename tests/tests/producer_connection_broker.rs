//! Real-broker tests: Kafka 4.4 (KRaft) from the Maven jars via
//! `kafka-testcontainers`. Each test starts its own cluster.

use kafka_producer::{
    Cluster, ClusterConfig, ConnError, Connection, ConnectionConfig, SaslConfig, TopicSelection,
};
use kafka_proto::messages::{MetadataRequest, MetadataRequestTopic};
use kafka_proto::{ApiKey, ErrorCode};
use kafka_testcontainers::{KafkaCluster, KafkaVersion};
use std::sync::Arc;

fn first_addr(cluster: &KafkaCluster) -> String {
    cluster.broker_addrs()[0].to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_4_4_negotiation_metadata_and_pipelining() {
    let kafka = KafkaCluster::builder()
        .version(KafkaVersion::V4_4)
        .nodes(1)
        .start()
        .await
        .expect("start Kafka 4.4");

    // Connect + negotiate.
    let conn = Arc::new(
        Connection::connect(&first_addr(&kafka), &ConnectionConfig::default())
            .await
            .expect("connect"),
    );
    let v = conn.versions();
    assert_eq!(v.api_versions_version(), 4);
    assert_eq!(conn.negotiated_version(ApiKey::Produce), Some(13));
    assert_eq!(
        v.broker_range(ApiKey::Produce).unwrap().min,
        3,
        "KAFKA-18659 clamp"
    );
    assert_eq!(conn.negotiated_version(ApiKey::Fetch), Some(18));
    assert_eq!(conn.negotiated_version(ApiKey::Metadata), Some(13));
    assert_eq!(conn.negotiated_version(ApiKey::EndTxn), Some(5));
    assert_eq!(conn.negotiated_version(ApiKey::SaslHandshake), Some(1));
    assert_eq!(v.transaction_version(), Some(2), "4.4 defaults to TV2");
    assert!(v.finalized_features_epoch() >= 0);

    // Pipelining against a real broker: many requests in flight at once.
    let calls: Vec<_> = (0..20)
        .map(|i| {
            let conn = conn.clone();
            tokio::spawn(async move {
                let req = MetadataRequest {
                    topics: Some(vec![MetadataRequestTopic::by_name(format!("absent-{i}"))]),
                    allow_auto_topic_creation: false,
                    ..Default::default()
                };
                (i, conn.send(&req, 12).await)
            })
        })
        .collect();
    for c in calls {
        let (i, r) = c.await.unwrap();
        let resp = r.expect("pipelined metadata");
        assert_eq!(
            resp.topics[0].name.as_deref(),
            Some(format!("absent-{i}").as_str())
        );
        assert_eq!(
            ErrorCode::from(resp.topics[0].error_code),
            ErrorCode::UnknownTopicOrPartition
        );
    }

    // Cluster metadata: brokers, a created topic's partitions and leaders.
    kafka
        .create_topic("orders", 3, 1)
        .await
        .expect("create topic");
    let mut config = ClusterConfig::new(&kafka.bootstrap());
    // A dead bootstrap address first: the next one must be tried.
    let dead = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .to_string();
    config.bootstrap.insert(0, dead);
    let cluster = Cluster::connect(config).await.expect("bootstrap");
    let update = cluster.refresh_topics(&["orders"]).await.expect("refresh");
    assert!(update.topic_errors.is_empty(), "{update:?}");
    {
        let md = cluster.metadata();
        assert_eq!(md.cluster_id(), Some(kafka.cluster_id()));
        let broker = md.broker(kafka.node_id(0)).expect("broker listed");
        assert_eq!(broker.addr(), first_addr(&kafka));
        let topic = md.topic("orders").expect("topic listed");
        assert_eq!(topic.partition_count(), 3);
        assert!(md.topic_id("orders").is_some());
        for p in 0..3 {
            assert_eq!(md.leader("orders", p), Some(kafka.node_id(0)));
        }
    }
    let (leader, lconn) = cluster.leader_connection("orders", 2).await.unwrap();
    assert_eq!(leader, kafka.node_id(0));
    assert_eq!(lconn.negotiated_version(ApiKey::Produce), Some(13));

    // Unknown topics are reported, all-topics refresh lists the topic.
    let update = cluster.refresh_topics(&["no-such-topic"]).await.unwrap();
    assert!(update.topic_errors.contains(&(
        "no-such-topic".to_string(),
        ErrorCode::UnknownTopicOrPartition
    )));
    cluster
        .refresh_selection(TopicSelection::All)
        .await
        .unwrap();
    assert!(cluster.metadata().topic("orders").is_some());

    // Disconnect → lazy reconnect through the pool.
    lconn.close();
    let again = cluster.connection(leader).await.unwrap();
    assert!(!again.is_closed());
    cluster.invalidate();
    assert!(cluster.maybe_refresh().await.unwrap());
    cluster.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sasl_plain_and_scram_against_kafka_4_4() {
    let users = kafka_testcontainers::SaslConfig::new().user("alice", "alice-secret");
    let kafka = KafkaCluster::builder()
        .version(KafkaVersion::V4_4)
        .sasl(users)
        .start()
        .await
        .expect("start SASL Kafka");
    let addr = first_addr(&kafka);

    let plain = |user: &str, pw: &str| SaslConfig::plain(user, pw);
    let s256 = |user: &str, pw: &str| SaslConfig::scram_sha256(user, pw);
    let s512 = |user: &str, pw: &str| SaslConfig::scram_sha512(user, pw);
    for make in [plain, s256, s512] {
        let good = make("alice", "alice-secret");
        let name = good.mechanism_name();
        let cfg = ConnectionConfig {
            sasl: Some(good.clone()),
            ..Default::default()
        };
        let conn = Connection::connect(&addr, &cfg)
            .await
            .unwrap_or_else(|e| panic!("{name} with the right password: {e}"));
        let md = conn
            .send_negotiated(&MetadataRequest::default())
            .await
            .unwrap_or_else(|e| panic!("{name}: metadata after auth: {e}"));
        assert_eq!(md.brokers.len(), 1);

        let bad = ConnectionConfig {
            sasl: Some(make("alice", "wrong-password")),
            ..Default::default()
        };
        let err = Connection::connect(&addr, &bad).await.unwrap_err();
        assert!(
            matches!(err, ConnError::AuthenticationFailed { .. }),
            "{name} with a wrong password: {err:?}"
        );
        assert!(err.is_fatal());

        let unknown = ConnectionConfig {
            sasl: Some(make("mallory", "alice-secret")),
            ..Default::default()
        };
        let err = Connection::connect(&addr, &unknown).await.unwrap_err();
        assert!(
            matches!(err, ConnError::AuthenticationFailed { .. }),
            "{name} with an unknown user: {err:?}"
        );

        // The cluster layer authenticates every connection it opens.
        let mut config = ClusterConfig::new(&kafka.bootstrap());
        config.connection.sasl = Some(good);
        let cluster = Cluster::connect(config).await.expect("SASL bootstrap");
        let conn = cluster.connection(kafka.node_id(0)).await.unwrap();
        assert!(!conn.is_closed());
    }

    // Without SASL the SASL listener drops the connection.
    let err = Connection::connect(&addr, &ConnectionConfig::default()).await;
    if let Ok(conn) = err {
        assert!(
            conn.send_negotiated(&MetadataRequest::default())
                .await
                .is_err()
        );
    }
}
