//! `bridge` honours the partitioner, against the harness's shared Kafka 4.4
//! cluster (one node) and a real RabbitMQ (one for the test process,
//! [`rabbit`]), spawning the built binary (or `$KAFKA_EOS_BIN`). One test per
//! choice, each with its own queue and 3-partition topic (named alike and
//! unique on the shared cluster, as are the bridge's transactional ids,
//! named after the queue):
//!
//! - default: every record (key = the message's correlation id) is in the
//!   partition Java's producer picks for its key,
//!   `to_positive(murmur2(key)) % 3` ([`partition_for_key`]), and the keys
//!   spread over all three partitions;
//! - `-X partitioner.class=org.apache.kafka.clients.producer.RoundRobinPartitioner`
//!   takes effect: the records are spread evenly, each partition's count
//!   within [`POOL_SIZE`] of every other's (each of the sink's pooled
//!   transactional producers has its own round-robin counter, as each Java
//!   producer has its own partitioner, and each leaves at most one record of
//!   imbalance between two partitions), and they are not where murmur2 of
//!   the key would put them (the setting was not ignored);
//! - a `partitioner.class` this client does not implement, or
//!   `--partitioner` together with `-X partitioner.class`, is refused with a
//!   usage error (exit 2) naming the setting before anything is connected
//!   to (so this test needs no RabbitMQ: `--amqp` names a closed port), and
//!   nothing is written.

use kafka_client::Cluster;
use kafka_consumer::{IsolationLevel, Reader, ReaderConfig};
use kafka_producer::ProducerConfig;
use kafka_producer::partitioner::partition_for_key;
use kafka_testcontainers::{KafkaCluster, RabbitMq};
use kafka_testcontainers::{SharedKafka, unique_name};
use std::collections::BTreeMap;
use std::process::{Output, Stdio};
use std::time::Duration;

const MESSAGES: usize = 300;
const PARTITIONS: i32 = 3;
/// The sink's default pool of transactional producers per subtask (one
/// round-robin counter each).
const POOL_SIZE: usize = kafka_sink::kafka::DEFAULT_KAFKA_PRODUCERS_POOL_SIZE;

/// The shared Kafka 4.4 cluster (other tests use it too: names are unique).
async fn kafka() -> &'static KafkaCluster {
    SharedKafka::Kafka44Tv2
        .cluster()
        .await
        .expect("shared Kafka 4.4")
}

/// The RabbitMQ broker of this test process (the harness's
/// [`RabbitMq::shared`]; each test has queues of its own).
async fn rabbit() -> &'static RabbitMq {
    RabbitMq::shared().await.expect("start RabbitMQ")
}

fn bin() -> String {
    std::env::var("KAFKA_EOS_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_kafka-eos").into())
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs the CLI (bounded by `limit`) and returns its output.
async fn run(args: &[&str], limit: Duration) -> Output {
    let child = tokio::process::Command::new(bin())
        .args(args)
        .env_remove("KAFKA_EOS_BOOTSTRAP")
        .env_remove("KAFKA_EOS_AMQP")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn kafka-eos");
    tokio::time::timeout(limit, child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("kafka-eos {args:?} did not finish within {limit:?}"))
        .unwrap()
}

/// Every committed record of `topic` as (key, partition), sorted by key.
async fn committed(bootstrap: &str, topic: &str) -> Vec<(String, i32)> {
    let cluster = Cluster::connect(ProducerConfig::new(bootstrap).cluster_config())
        .await
        .unwrap();
    cluster.refresh_topics(&[topic]).await.unwrap();
    let parts: Vec<i32> = (0..PARTITIONS).collect();
    let mut reader = Reader::new(
        cluster,
        ReaderConfig {
            isolation: IsolationLevel::ReadCommitted,
            ..ReaderConfig::default()
        },
    );
    let mut out: Vec<(String, i32)> = reader
        .read_to_end(topic, &parts)
        .await
        .unwrap()
        .into_iter()
        .map(|r| (text(r.key.as_deref().expect("keyed record")), r.partition))
        .collect();
    out.sort();
    out
}

/// The message ids of `queue`, in publishing order (which sorts by key).
fn ids(queue: &str) -> Vec<String> {
    (0..MESSAGES).map(|i| format!("{queue}-{i:04}")).collect()
}

/// Publishes [`ids`] of `queue`, runs the bridge over it into the
/// same-named topic until it is idle, and returns the committed records
/// (each message once).
async fn bridge(
    kafka: &KafkaCluster,
    rabbit: &RabbitMq,
    queue: &str,
    extra: &[&str],
) -> Vec<(String, i32)> {
    let bootstrap = kafka.bootstrap();
    kafka.create_topic(queue, PARTITIONS, 1).await.unwrap();
    let messages = ids(queue)
        .into_iter()
        .map(|id| (id.clone(), format!("body of {id}").into_bytes()));
    rabbit
        .publish_persistent(queue, messages)
        .await
        .expect("publish to RabbitMQ");
    let dir = tempfile::tempdir().unwrap();
    let url = rabbit.amqp_url();
    let mut args = vec!["--bootstrap", bootstrap.as_str()];
    args.extend_from_slice(extra);
    args.extend_from_slice(&[
        "bridge",
        "--amqp",
        &url,
        "--queue",
        queue,
        "--topic",
        queue,
        "--checkpoint-dir",
        dir.path().to_str().unwrap(),
        "--checkpoint-interval-ms",
        "100",
        "--idle-exit-ms",
        "1500",
    ]);
    let out = run(&args, Duration::from_secs(120)).await;
    let summary = text(&out.stdout);
    assert!(
        out.status.success(),
        "{args:?}: {:?}\n{summary}\n{}",
        out.status,
        text(&out.stderr)
    );
    let want = format!("{MESSAGES} messages -> {MESSAGES} records");
    assert!(summary.contains(&want), "{summary}");
    let records = committed(&bootstrap, queue).await;
    let keys: Vec<&String> = records.iter().map(|(k, _)| k).collect();
    assert_eq!(
        keys,
        ids(queue).iter().collect::<Vec<_>>(),
        "each message once"
    );
    records
}

fn per_partition(records: &[(String, i32)]) -> BTreeMap<i32, usize> {
    let mut counts = BTreeMap::new();
    for (_, p) in records {
        *counts.entry(*p).or_default() += 1;
    }
    counts
}

/// Default partitioner: every record (key = the message's correlation id)
/// is in the partition Java's producer picks for its key, and the keys
/// spread over all three partitions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bridge_places_keyed_records_where_javas_producer_does() {
    let kafka = kafka().await;
    let queue = unique_name("keyed");
    let records = bridge(kafka, rabbit().await, &queue, &[]).await;
    for (key, partition) in &records {
        assert_eq!(
            *partition,
            partition_for_key(key.as_bytes(), PARTITIONS),
            "{key}: not the partition Java's producer picks"
        );
    }
    let counts = per_partition(&records);
    assert_eq!(counts.len(), PARTITIONS as usize, "spread: {counts:?}");
    eprintln!("default (key hash): {counts:?}");
}

/// `-X partitioner.class=...RoundRobinPartitioner` takes effect: the records
/// are spread evenly (each partition's count within [`POOL_SIZE`] of every
/// other's) and not all where murmur2 of the key would put them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bridge_honours_partitioner_class_round_robin() {
    let kafka = kafka().await;
    let queue = unique_name("roundrobin");
    let class = "partitioner.class=org.apache.kafka.clients.producer.RoundRobinPartitioner";
    let records = bridge(kafka, rabbit().await, &queue, &["-X", class]).await;
    let counts = per_partition(&records);
    eprintln!("round robin: {counts:?}");
    assert_eq!(counts.len(), PARTITIONS as usize, "spread: {counts:?}");
    let (min, max) = (counts.values().min(), counts.values().max());
    assert!(
        max.unwrap() - min.unwrap() <= POOL_SIZE,
        "round robin is even: {counts:?}"
    );
    let hashed = records
        .iter()
        .filter(|(key, p)| *p == partition_for_key(key.as_bytes(), PARTITIONS))
        .count();
    assert!(hashed < records.len(), "placed by murmur2, not round robin");
}

/// A `partitioner.class` this client does not implement, or `--partitioner`
/// together with `-X partitioner.class`, is a usage error (exit 2) naming
/// `partitioner.class` and the offending choice, given before the bridge
/// connects to anything; nothing is written to the topic.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bridge_refuses_an_unknown_partitioner_class_or_two_partitioner_choices() {
    let kafka = kafka().await;
    let bootstrap = kafka.bootstrap();
    let refused = unique_name("refused");
    kafka.create_topic(&refused, PARTITIONS, 1).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    // A closed port: the refusal comes before any connection.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("amqp://guest:guest@127.0.0.1:{closed}/%2f");
    let bridge_args = [
        "bridge",
        "--amqp",
        &url,
        "--queue",
        &refused,
        "--topic",
        &refused,
        "--checkpoint-dir",
        dir.path().to_str().unwrap(),
        "--idle-exit-ms",
        "1500",
    ];
    let round_robin = "partitioner.class=org.apache.kafka.clients.producer.RoundRobinPartitioner";
    // (global options, bridge flags, what the error names)
    let cases: [(&[&str], &[&str], &str); 2] = [
        (
            &["-X", "partitioner.class=com.example.CustomPartitioner"],
            &[],
            "com.example.CustomPartitioner",
        ),
        (
            &["-X", round_robin],
            &["--partitioner", "key-hash"],
            "--partitioner",
        ),
    ];
    for (globals, flags, expect) in cases {
        let mut args = vec!["--bootstrap", bootstrap.as_str()];
        args.extend_from_slice(globals);
        args.extend_from_slice(&bridge_args);
        args.extend_from_slice(flags);
        let out = run(&args, Duration::from_secs(60)).await;
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("partitioner.class") && err.contains(expect),
            "{args:?}: {err}"
        );
    }
    assert!(committed(&bootstrap, &refused).await.is_empty());
}
