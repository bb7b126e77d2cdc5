//! Java's own clients against kafka-mock: Kafka 4.4's tools (their JVM and
//! jars from the harness's Kafka 4.4 distribution, run through the shared
//! cluster's tool runner; they talk only to the mock) write and read
//! through a three-broker mock, and what they see is what they see on
//! Kafka: every acknowledged record at the offset it was acknowledged
//! with, and read_committed showing exactly the committed transactions.

use kafka_client::{Cluster, ClusterConfig};
use kafka_consumer::{IsolationLevel, Reader, ReaderConfig};
use kafka_mock::{MockCluster, MockConfig, TransactionVersion};
use kafka_testcontainers::KafkaCluster;
use kafka_testcontainers::SharedKafka;
use kafka_testcontainers::parse_console_output;
use std::collections::BTreeMap;
use std::time::Duration;

/// The runner of Java's tools (the shared Kafka 4.4 cluster's distribution).
async fn java() -> &'static KafkaCluster {
    SharedKafka::Kafka44Tv2
        .cluster()
        .await
        .expect("the shared Kafka 4.4 cluster (Java's tools)")
}

async fn mock(tv: TransactionVersion) -> MockCluster {
    MockCluster::start(MockConfig {
        brokers: 3,
        transaction_version: tv,
        ..MockConfig::default()
    })
    .await
    .expect("start the mock")
}

/// Our read of `partitions` of `topic` on the mock: (partition, offset) -> value.
async fn ours(
    mock: &MockCluster,
    topic: &str,
    partitions: &[i32],
    isolation: IsolationLevel,
) -> BTreeMap<(i32, i64), String> {
    let cluster = Cluster::connect(ClusterConfig::new(&mock.bootstrap()))
        .await
        .unwrap();
    let mut reader = Reader::new(
        cluster,
        ReaderConfig {
            isolation,
            ..ReaderConfig::default()
        },
    );
    reader
        .wait_until_stable(topic, partitions, Duration::from_secs(30))
        .await
        .unwrap();
    reader
        .read_to_end(topic, partitions)
        .await
        .unwrap()
        .into_iter()
        .map(|r| {
            (
                (r.partition, r.offset),
                String::from_utf8(r.value.unwrap_or_default().to_vec()).unwrap(),
            )
        })
        .collect()
}

/// Java's console consumer on one partition (manual assignment: the mock
/// has no group membership): (offset, value) of up to `max` records.
async fn java_console(
    java: &KafkaCluster,
    bootstrap: &str,
    topic: &str,
    partition: i32,
    isolation: &str,
    max: usize,
) -> Vec<(i64, String)> {
    let mut args: Vec<String> = [
        "--bootstrap-server",
        bootstrap,
        "--topic",
        topic,
        "--partition",
        &partition.to_string(),
        "--offset",
        "earliest",
        "--max-messages",
        &max.to_string(),
        "--timeout-ms",
        "10000",
        "--command-property",
        &format!("isolation.level={isolation}"),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for p in [
        "print.partition=true",
        "print.offset=true",
        "print.headers=true",
        "print.key=true",
        "print.value=true",
        "print.timestamp=false",
        "key.separator=\t",
        "line.separator=\n",
    ] {
        args.push("--formatter-property".into());
        args.push(p.into());
    }
    let out = java
        .run_java(
            "org.apache.kafka.tools.consumer.ConsoleConsumer",
            &args,
            Duration::from_secs(120),
        )
        .await
        .expect("run the console consumer");
    let records = parse_console_output(&out.stdout_text())
        .unwrap_or_else(|e| panic!("console consumer output: {e}\nstderr:\n{}", out.stderr));
    records
        .into_iter()
        .map(|r| {
            (
                r.offset,
                String::from_utf8(r.value.unwrap_or_default()).unwrap(),
            )
        })
        .collect()
}

/// Invariant: every record Java's idempotent producer (VerifiableProducer,
/// acks=all) had acknowledged is on the mock at the partition and offset
/// of its acknowledgement, once; Java's console consumer and ours read
/// the same records.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn java_idempotent_producer_and_console_consumer_on_the_mock() {
    let java = java().await;
    let mock = mock(TransactionVersion::V2).await;
    mock.create_topic("java-idem", 3).unwrap();
    let args: Vec<String> = [
        "--bootstrap-server",
        &mock.bootstrap(),
        "--topic",
        "java-idem",
        "--max-messages",
        "1000",
        "--acks",
        "-1",
        "--command-config",
        "/dev/null",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let out = java
        .run_java(
            "org.apache.kafka.tools.VerifiableProducer",
            &args,
            Duration::from_secs(120),
        )
        .await
        .expect("run VerifiableProducer");
    let mut acked: BTreeMap<(i32, i64), String> = BTreeMap::new();
    for line in out.stdout_text().lines() {
        if !line.contains("\"producer_send_success\"") {
            continue;
        }
        let field = |name: &str| -> String {
            let start = line.find(&format!("\"{name}\":")).unwrap() + name.len() + 3;
            line[start..]
                .trim_start_matches('"')
                .split(['"', ',', '}'])
                .next()
                .unwrap()
                .to_string()
        };
        let partition: i32 = field("partition").parse().unwrap();
        let offset: i64 = field("offset").parse().unwrap();
        assert!(
            acked.insert((partition, offset), field("value")).is_none(),
            "two acknowledgements at {partition}@{offset}"
        );
    }
    assert_eq!(acked.len(), 1000, "acknowledged\nstderr:\n{}", out.stderr);
    let read = ours(
        &mock,
        "java-idem",
        &[0, 1, 2],
        IsolationLevel::ReadUncommitted,
    )
    .await;
    assert_eq!(
        read, acked,
        "our reader sees each acknowledged record at its offset"
    );
    let p0: Vec<(i64, String)> = read
        .iter()
        .filter(|((p, _), _)| *p == 0)
        .map(|((_, o), v)| (*o, v.clone()))
        .collect();
    let console = java_console(
        java,
        &mock.bootstrap(),
        "java-idem",
        0,
        "read_uncommitted",
        p0.len(),
    )
    .await;
    assert_eq!(console, p0, "Java's console consumer agrees on partition 0");
}

/// Invariant: with Java's transactional producer (ProducerPerformance,
/// a transaction every 50 ms) every committed record is visible
/// read_committed, to Java's console consumer and to ours alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn java_transactional_producer_and_read_committed_consumer_on_the_mock() {
    let java = java().await;
    for tv in [TransactionVersion::V2, TransactionVersion::V1] {
        let mock = mock(tv).await;
        mock.create_topic("java-txn", 1).unwrap();
        let props = std::env::temp_dir().join(format!(
            "mock-java-txn-{}-{tv:?}.properties",
            std::process::id()
        ));
        std::fs::write(
            &props,
            format!("bootstrap.servers={}\nlinger.ms=5\n", mock.bootstrap()),
        )
        .unwrap();
        let args: Vec<String> = [
            "--topic",
            "java-txn",
            "--num-records",
            "3000",
            "--record-size",
            "20",
            "--throughput",
            "-1",
            "--transactional-id",
            "java-perf",
            "--transaction-duration-ms",
            "50",
            "--producer.config",
            props.to_str().unwrap(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let out = java
            .run_java(
                "org.apache.kafka.tools.ProducerPerformance",
                &args,
                Duration::from_secs(120),
            )
            .await
            .expect("run ProducerPerformance");
        let _ = std::fs::remove_file(&props);
        assert!(
            out.success && out.stdout_text().contains("3000 records sent"),
            "{tv:?}: ProducerPerformance\nstdout:\n{}\nstderr:\n{}",
            out.stdout_text(),
            out.stderr
        );
        let read = ours(&mock, "java-txn", &[0], IsolationLevel::ReadCommitted).await;
        assert_eq!(read.len(), 3000, "{tv:?}: our read_committed reader");
        let console = java_console(
            java,
            &mock.bootstrap(),
            "java-txn",
            0,
            "read_committed",
            3000,
        )
        .await;
        let ours_list: Vec<(i64, String)> =
            read.iter().map(|((_, o), v)| (*o, v.clone())).collect();
        assert_eq!(
            console, ours_list,
            "{tv:?}: Java's read_committed console consumer agrees"
        );
    }
}
