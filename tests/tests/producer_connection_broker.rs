//! Real-broker tests: Kafka 4.4 (KRaft) from the Maven jars via
//! `kafka-testcontainers`: version negotiation, pipelining, cluster
//! metadata and reconnects on the harness's shared Kafka 4.4 cluster (topic
//! names of each test's own); SASL on a broker of its own (a SASL listener
//! is a broker setting the shared clusters do not have), started once for
//! the SASL tests and handed from one to the next through a
//! `slot::ClusterSlot` (they run one at a time).

use kafka_client::{
    Cluster, ClusterConfig, ConnError, Connection, ConnectionConfig, SaslConfig, TopicSelection,
};
use kafka_proto::messages::{MetadataRequest, MetadataRequestTopic};
use kafka_proto::{ApiKey, ErrorCode};
use kafka_testcontainers::{ClusterSlot, SlotGuard};
use kafka_testcontainers::{KafkaCluster, KafkaVersion};
use kafka_testcontainers::{SharedKafka, unique_name};
use std::sync::Arc;

fn first_addr(cluster: &KafkaCluster) -> String {
    cluster.broker_addrs()[0].to_string()
}

/// The shared Kafka 4.4 cluster, formatted with transaction version 2
/// (other tests use it too: names are unique).
async fn kafka() -> &'static KafkaCluster {
    SharedKafka::Kafka44Tv2
        .cluster()
        .await
        .expect("shared Kafka 4.4")
}

/// Invariant: a connection to Kafka 4.4 negotiates ApiVersions v4 and the
/// highest versions both sides implement (Produce 13 with the broker's
/// minimum clamped to 3, Fetch 18, Metadata 13, EndTxn 5, SaslHandshake 1),
/// and reads the finalized transaction version (2) and features epoch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_negotiates_versions_and_features_kafka_4_4_tv2() {
    let kafka = kafka().await;
    let conn = Connection::connect(&first_addr(kafka), &ConnectionConfig::default())
        .await
        .expect("connect");
    let v = conn.versions();
    assert_eq!(v.api_versions_version(), 4);
    assert_eq!(conn.negotiated_version(ApiKey::Produce), Some(13));
    assert_eq!(
        v.broker_range(ApiKey::Produce).unwrap().min,
        3,
        "Produce v0-2 removed by KIP-896 though advertised: min clamped to 3"
    );
    assert_eq!(conn.negotiated_version(ApiKey::Fetch), Some(18));
    assert_eq!(conn.negotiated_version(ApiKey::Metadata), Some(13));
    assert_eq!(conn.negotiated_version(ApiKey::EndTxn), Some(5));
    assert_eq!(conn.negotiated_version(ApiKey::SaslHandshake), Some(1));
    assert_eq!(v.transaction_version(), Some(2), "4.4 defaults to TV2");
    assert!(v.finalized_features_epoch() >= 0);
}

/// Invariant: many requests in flight at once on one connection to a real
/// broker each get their own answer (matched by correlation id).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_pipelines_requests_kafka_4_4_tv2() {
    let kafka = kafka().await;
    let conn = Arc::new(
        Connection::connect(&first_addr(kafka), &ConnectionConfig::default())
            .await
            .expect("connect"),
    );
    let absent = unique_name("absent");
    let calls: Vec<_> = (0..20)
        .map(|i| {
            let conn = conn.clone();
            let name = format!("{absent}-{i}");
            tokio::spawn(async move {
                let req = MetadataRequest {
                    topics: Some(vec![MetadataRequestTopic::by_name(name.clone())]),
                    allow_auto_topic_creation: false,
                    ..Default::default()
                };
                (name, conn.send(&req, 12).await)
            })
        })
        .collect();
    for c in calls {
        let (name, r) = c.await.unwrap();
        let resp = r.expect("pipelined metadata");
        assert_eq!(resp.topics[0].name.as_deref(), Some(name.as_str()));
        assert_eq!(
            ErrorCode::from(resp.topics[0].error_code),
            ErrorCode::UnknownTopicOrPartition
        );
    }
}

/// A topic of 3 partitions created on the shared cluster, and a cluster
/// client bootstrapped through a dead address first (the next one must be
/// tried), its metadata refreshed for the topic.
async fn cluster_with_topic(kafka: &KafkaCluster) -> (Arc<Cluster>, String) {
    let topic = unique_name("orders");
    kafka
        .create_topic(&topic, 3, 1)
        .await
        .expect("create topic");
    let mut config = ClusterConfig::new(&kafka.bootstrap());
    let dead = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .to_string();
    config.bootstrap.insert(0, dead);
    let cluster = Cluster::connect(config).await.expect("bootstrap");
    let update = cluster
        .refresh_topics(&[topic.as_str()])
        .await
        .expect("refresh");
    assert!(update.topic_errors.is_empty(), "{update:?}");
    (cluster, topic)
}

/// Invariant: a cluster client bootstraps past a dead address, and its
/// metadata has the cluster id, the broker at its address, a created
/// topic's partitions, id and leaders; the leader's connection is
/// negotiated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_metadata_lists_the_broker_and_a_topics_leaders_kafka_4_4_tv2() {
    let kafka = kafka().await;
    let (cluster, topic) = cluster_with_topic(kafka).await;
    {
        let md = cluster.metadata();
        assert_eq!(md.cluster_id(), Some(kafka.cluster_id()));
        let broker = md.broker(kafka.node_id(0)).expect("broker listed");
        assert_eq!(broker.addr(), first_addr(kafka));
        let t = md.topic(&topic).expect("topic listed");
        assert_eq!(t.partition_count(), 3);
        assert!(md.topic_id(&topic).is_some());
        for p in 0..3 {
            assert_eq!(md.leader(&topic, p), Some(kafka.node_id(0)));
        }
    }
    let (leader, lconn) = cluster.leader_connection(&topic, 2).await.unwrap();
    assert_eq!(leader, kafka.node_id(0));
    assert_eq!(lconn.negotiated_version(ApiKey::Produce), Some(13));
    cluster.close();
}

/// Invariant: a refresh for a topic that does not exist reports it as
/// UNKNOWN_TOPIC_OR_PARTITION, and an all-topics refresh lists a created
/// topic.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_reports_unknown_topics_and_lists_all_topics_kafka_4_4_tv2() {
    let kafka = kafka().await;
    let (cluster, topic) = cluster_with_topic(kafka).await;
    let missing = unique_name("no-such-topic");
    let update = cluster.refresh_topics(&[missing.as_str()]).await.unwrap();
    assert!(
        update
            .topic_errors
            .contains(&(missing.clone(), ErrorCode::UnknownTopicOrPartition))
    );
    cluster
        .refresh_selection(TopicSelection::All)
        .await
        .unwrap();
    assert!(cluster.metadata().topic(&topic).is_some());
    cluster.close();
}

/// Invariant: a closed connection is replaced lazily through the pool, and
/// an invalidated metadata cache is refreshed by the next `maybe_refresh`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_reconnects_after_a_disconnect_kafka_4_4_tv2() {
    let kafka = kafka().await;
    let (cluster, topic) = cluster_with_topic(kafka).await;
    let (leader, lconn) = cluster.leader_connection(&topic, 2).await.unwrap();
    lconn.close();
    let again = cluster.connection(leader).await.unwrap();
    assert!(!again.is_closed());
    cluster.invalidate();
    assert!(cluster.maybe_refresh().await.unwrap());
    cluster.close();
}

/// The SASL tests' broker (a SASL listener for user `alice`, every
/// mechanism), started by the first of them and handed on to the next.
static SASL_SLOT: ClusterSlot = ClusterSlot::new();

/// The SASL broker: one Kafka 4.4 node whose CLIENT listener is
/// SASL_PLAINTEXT, for `alice` / `alice-secret`.
async fn sasl_kafka() -> SlotGuard<'static> {
    SASL_SLOT
        .lock("Kafka 4.4, SASL_PLAINTEXT, alice", || {
            KafkaCluster::builder()
                .version(KafkaVersion::V4_4)
                .sasl(kafka_testcontainers::SaslConfig::new().user("alice", "alice-secret"))
        })
        .await
        .expect("start SASL Kafka")
}

/// The checks of one mechanism (`make` builds its client configuration
/// from a user and a password): the right password authenticates (a
/// connection that then gets metadata, and the cluster layer's
/// connections); a wrong password and an unknown user fail fatally.
async fn sasl_mechanism_authenticates(make: fn(&str, &str) -> SaslConfig) {
    let kafka = sasl_kafka().await;
    let addr = first_addr(&kafka);
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

/// Invariant: SASL/PLAIN authenticates with the right password (a
/// connection, then metadata; the cluster layer's connections), and fails
/// fatally (AuthenticationFailed) with a wrong password or an unknown user.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sasl_plain_authenticates_and_refuses_bad_credentials_kafka_4_4() {
    sasl_mechanism_authenticates(|user, pw| SaslConfig::plain(user, pw)).await;
}

/// Invariant: SASL/SCRAM-SHA-256 authenticates with the right password (a
/// connection, then metadata; the cluster layer's connections), and fails
/// fatally (AuthenticationFailed) with a wrong password or an unknown user.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sasl_scram_sha_256_authenticates_and_refuses_bad_credentials_kafka_4_4() {
    sasl_mechanism_authenticates(|user, pw| SaslConfig::scram_sha256(user, pw)).await;
}

/// Invariant: SASL/SCRAM-SHA-512 authenticates with the right password (a
/// connection, then metadata; the cluster layer's connections), and fails
/// fatally (AuthenticationFailed) with a wrong password or an unknown user.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sasl_scram_sha_512_authenticates_and_refuses_bad_credentials_kafka_4_4() {
    sasl_mechanism_authenticates(|user, pw| SaslConfig::scram_sha512(user, pw)).await;
}

/// Invariant: a connection without SASL gets no answer from the SASL
/// listener (it fails to connect, or its first request fails).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sasl_listener_gives_no_answer_without_sasl_kafka_4_4() {
    let kafka = sasl_kafka().await;
    let addr = first_addr(&kafka);
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
