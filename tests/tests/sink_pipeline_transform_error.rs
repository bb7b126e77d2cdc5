//! A `ConsumeTransformProduce` whose transform fails, against the shared
//! Kafka 4.4 cluster (topics and group of this test's own).
//!
//! Invariant: a transform error stops the pipeline with
//! `PipelineError::Transform` naming the record; the open transaction is
//! aborted (its output, written before the failing record, is invisible to
//! read_committed readers), no input offset past the failing record is
//! committed, and a pipeline restarted on the same group resumes at the
//! last committed offset: every input record's output is then visible
//! exactly once.

use kafka_client::{Cluster, ClusterConfig};
use kafka_consumer::{ConsumerRecord, GroupConsumerConfig, IsolationLevel, Reader, ReaderConfig};
use kafka_producer::{Producer, ProducerConfig, ProducerRecord, TransactionalProducer};
use kafka_sink::pipeline::{
    ConsumeTransformProduce, PipelineConfig, PipelineError, RecordTransform,
};
use kafka_testcontainers::{KafkaCluster, SharedKafka, unique_name};
use std::time::{Duration, Instant};

/// Upper-cases each value; a value `poison` fails while `refuse_poison`.
struct Upper {
    output: String,
    refuse_poison: bool,
}

impl RecordTransform for Upper {
    type Error = std::io::Error;

    async fn transform(&mut self, r: &ConsumerRecord) -> Result<Vec<ProducerRecord>, Self::Error> {
        let v = String::from_utf8_lossy(r.value.as_deref().unwrap_or_default()).to_uppercase();
        if self.refuse_poison && v == "POISON" {
            return Err(std::io::Error::other("poisoned record"));
        }
        Ok(vec![ProducerRecord::new(self.output.as_str()).value(v)])
    }
}

async fn start(
    kafka: &KafkaCluster,
    input: &str,
    output: &str,
    group: &str,
    refuse: bool,
) -> ConsumeTransformProduce<Upper> {
    let bootstrap = kafka.bootstrap();
    let consumer = GroupConsumerConfig::from_properties([
        ("bootstrap.servers", bootstrap.as_str()),
        ("group.id", group),
        ("isolation.level", "read_committed"),
        ("auto.offset.reset", "earliest"),
    ])
    .unwrap();
    let producer = ProducerConfig::from_properties([
        ("bootstrap.servers", bootstrap.as_str()),
        ("transactional.id", unique_name("upper-txn").as_str()),
        ("transaction.timeout.ms", "10000"),
    ])
    .unwrap();
    let transform = Upper {
        output: output.to_string(),
        refuse_poison: refuse,
    };
    ConsumeTransformProduce::connect_with(
        consumer,
        &[input],
        producer,
        transform,
        PipelineConfig::default(),
    )
    .await
    .expect("pipeline")
}

async fn produce(kafka: &KafkaCluster, topic: &str, values: &[&str]) {
    let producer = Producer::connect(
        ProducerConfig::from_properties([("bootstrap.servers", kafka.bootstrap().as_str())])
            .unwrap(),
    )
    .await
    .unwrap();
    for v in values {
        producer
            .send(ProducerRecord::new(topic).partition(0).value(v.to_string()))
            .await
            .expect("input record delivered");
    }
    producer.close(Duration::from_secs(10)).await.unwrap();
}

/// Writes `values` in one transaction: a read_committed pipeline sees them
/// together.
async fn produce_in_one_transaction(kafka: &KafkaCluster, topic: &str, values: &[&str]) {
    let producer = TransactionalProducer::connect(
        ProducerConfig::from_properties([
            ("bootstrap.servers", kafka.bootstrap().as_str()),
            ("transactional.id", unique_name("xf-input").as_str()),
        ])
        .unwrap(),
    )
    .await
    .unwrap();
    producer.init_transactions().await.unwrap();
    producer.begin_transaction().unwrap();
    for v in values {
        drop(producer.send(ProducerRecord::new(topic).partition(0).value(v.to_string())));
    }
    producer
        .commit_transaction()
        .await
        .expect("input committed");
    producer.close(Duration::from_secs(10)).await.unwrap();
}

async fn read(kafka: &KafkaCluster, topic: &str, isolation: IsolationLevel) -> Vec<String> {
    let cluster = Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
        .await
        .unwrap();
    let mut reader = Reader::new(
        cluster,
        ReaderConfig {
            isolation,
            ..Default::default()
        },
    );
    // Markers land after EndTxn returns: read once no transaction is open.
    reader
        .wait_until_stable(topic, &[0], Duration::from_secs(60))
        .await
        .expect("no open transaction on the output");
    reader
        .read_to_end(topic, &[0])
        .await
        .unwrap()
        .into_iter()
        .map(|r| String::from_utf8(r.value.unwrap().to_vec()).unwrap())
        .collect()
}

async fn committed(kafka: &KafkaCluster, group: &str, topic: &str) -> Option<i64> {
    let cluster = Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
        .await
        .unwrap();
    let reader = Reader::new(cluster, ReaderConfig::default());
    reader
        .committed_offsets(group, topic, &[0])
        .await
        .unwrap()
        .get(&0)
        .copied()
        .flatten()
}

/// The invariant of the module documentation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transform_error_aborts_commits_nothing_past_it_and_a_restart_resumes_there() {
    let kafka = SharedKafka::Kafka44Tv2
        .cluster()
        .await
        .expect("shared Kafka 4.4");
    let (input, output, group) = (
        unique_name("xf-in"),
        unique_name("xf-out"),
        unique_name("xf-group"),
    );
    kafka.create_topic(&input, 1, 1).await.unwrap();
    kafka.create_topic(&output, 1, 1).await.unwrap();

    // Offsets 0..=2 are transformed and committed first.
    produce(kafka, &input, &["a", "b", "c"]).await;
    let mut p = start(kafka, &input, &output, &group, true).await;
    let deadline = Instant::now() + Duration::from_secs(120);
    while p.stats().committed_records < 3 {
        assert!(
            Instant::now() < deadline,
            "the first three records were not committed: {:?}",
            p.stats()
        );
        p.step(Duration::from_millis(200)).await.expect("step");
    }
    // Offsets 3..=5 arrive together: 3 enters the next transaction, 4
    // fails it.
    produce_in_one_transaction(kafka, &input, &["d", "poison", "e"]).await;
    let error = loop {
        assert!(
            Instant::now() < deadline,
            "the poisoned record never failed: {:?}",
            p.stats()
        );
        match p.step(Duration::from_millis(200)).await {
            Ok(()) => continue,
            Err(e) => break e,
        }
    };
    match &error {
        PipelineError::Transform {
            topic,
            partition,
            offset,
            source,
        } => {
            assert_eq!(
                (topic.as_str(), *partition, *offset),
                (input.as_str(), 0, 4),
                "{error}"
            );
            assert!(source.to_string().contains("poisoned"), "{error}");
        }
        other => panic!("expected a transform error, got {other}"),
    }
    let stats = p.stats();
    assert!(
        stats.aborted >= 1,
        "the open transaction was aborted: {stats:?}"
    );
    p.abort_and_close(Duration::from_secs(10))
        .await
        .expect("close");

    // No offset past the failing record (4); read_committed sees the output
    // of exactly the input below the committed offset (3, unless `d` was
    // polled and committed alone before the rest arrived: then 4).
    let at = committed(kafka, &group, &input)
        .await
        .expect("a committed offset");
    assert!(
        (3..=4).contains(&at),
        "committed offset {at}: past the failing record 4, or below the 3 committed before"
    );
    assert_eq!(
        stats.committed_records, at as u64,
        "the input committed is the input below the committed offset: {stats:?}"
    );
    let outputs = ["A", "B", "C", "D", "POISON", "E"];
    assert_eq!(
        read(kafka, &output, IsolationLevel::ReadCommitted).await,
        outputs[..at as usize]
    );
    let uncommitted = read(kafka, &output, IsolationLevel::ReadUncommitted).await;
    assert!(
        !uncommitted.iter().any(|v| v == "POISON" || v == "E"),
        "nothing of the failing record or after it was written: {uncommitted:?}"
    );

    // A restart (the transform fixed) resumes at the committed offset.
    let rest = 6 - at as u64;
    let mut p = start(kafka, &input, &output, &group, false).await;
    while p.stats().committed_records < rest {
        assert!(
            Instant::now() < deadline,
            "the restart did not finish: {:?}",
            p.stats()
        );
        p.step(Duration::from_millis(200))
            .await
            .expect("step after the restart");
    }
    let stats = p.close(Duration::from_secs(10)).await.expect("close");
    assert_eq!(
        stats.committed_records, rest,
        "the restart read from offset {at} on: {stats:?}"
    );
    assert_eq!(
        read(kafka, &output, IsolationLevel::ReadCommitted).await,
        outputs,
        "every input record's output exactly once"
    );
}
