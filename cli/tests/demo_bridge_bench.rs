//! End-to-end tests of `demo`, `bridge` and `bench` against the harness's
//! shared Kafka 4.4 cluster (one node) and a real RabbitMQ, spawning the
//! built binary (or `$KAFKA_EOS_BIN`), one scenario per test, each with
//! topics and transactional ids of its own:
//!
//! - `demo --bootstrap`: the pipeline process is SIGKILLed twice and
//!   restarted; the command exits 0 and reports exactly once (0 duplicates,
//!   0 missing, increasing per partition), and our own read_committed read
//!   of its topic agrees: every number once. A demo into a topic that
//!   already has records is refused.
//! - `bridge`: messages published to RabbitMQ (with correlation ids) reach
//!   the Kafka topic exactly once, across two bridge runs sharing their
//!   checkpoint directory, with re-published messages dropped; the second
//!   run is stopped by Ctrl-C (SIGINT) after a final checkpoint. An
//!   unreachable RabbitMQ exits 3.
//! - `bench`: a tiny configuration prints its table with every row.
//! - With the `local-kafka` feature, `demo` also runs once without
//!   `--bootstrap` (it starts its own Kafka).
//!
//! The demo with kills, the two bridge runs and the local-Kafka demo run one
//! at a time ([`ONE_AT_A_TIME`]), as they did when they were the steps of
//! one test: each is a load of its own (the demo's worker processes, the
//! bridge's idle exit after 1.5 s without a message, a Kafka JVM of the
//! demo's own), and together they would make each other's timing tighter.

use kafka_client::Cluster;
use kafka_consumer::{IsolationLevel, Reader, ReaderConfig};
use kafka_producer::ProducerConfig;
use kafka_testcontainers::{KafkaCluster, RabbitMq};
use kafka_testcontainers::{SharedKafka, unique_name};
use std::collections::{BTreeMap, BTreeSet};
use std::process::{Output, Stdio};
use std::time::Duration;

/// Held by the tests that load the machine most (see the module doc).
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// How long any one CLI run may take (a hang guard, not a timing check).
const LIMIT: Duration = Duration::from_secs(180);

/// The shared Kafka 4.4 cluster (other tests use it too: names are unique).
async fn kafka() -> &'static KafkaCluster {
    SharedKafka::Kafka44Tv2
        .cluster()
        .await
        .expect("shared Kafka 4.4")
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

async fn ok(args: &[&str], limit: Duration) -> Output {
    let out = run(args, limit).await;
    assert!(
        out.status.success(),
        "kafka-eos {args:?}: {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
    out
}

/// Every record of `topic` under read_committed, by partition, in offset
/// order, as (key, value) strings.
async fn read_committed(bootstrap: &str, topic: &str) -> BTreeMap<i32, Vec<(String, String)>> {
    let cluster = Cluster::connect(ProducerConfig::new(bootstrap).cluster_config())
        .await
        .unwrap();
    cluster.refresh_topics(&[topic]).await.unwrap();
    let n = cluster.metadata().topic(topic).unwrap().partition_count() as i32;
    let parts: Vec<i32> = (0..n).collect();
    let mut reader = Reader::new(
        cluster,
        ReaderConfig {
            isolation: IsolationLevel::ReadCommitted,
            ..ReaderConfig::default()
        },
    );
    let mut out: BTreeMap<i32, Vec<(String, String)>> = BTreeMap::new();
    for r in reader.read_to_end(topic, &parts).await.unwrap() {
        let s = |b: Option<bytes::Bytes>| text(b.as_deref().unwrap_or_default());
        out.entry(r.partition)
            .or_default()
            .push((s(r.key), s(r.value)));
    }
    out
}

/// The value of `field` in the demo report (`  duplicates   0`).
fn report_field<'a>(report: &'a str, field: &str) -> &'a str {
    report
        .lines()
        .find_map(|l| l.trim().strip_prefix(field))
        .map(str::trim)
        .unwrap_or_else(|| panic!("no {field:?} in the report:\n{report}"))
}

/// Asserts the demo's report says exactly once with `kills` kills.
fn assert_demo_report(out: &Output, records: u64, kills: u32) -> String {
    let report = text(&out.stdout);
    assert!(report.contains("exactly once: OK"), "{report}");
    assert_eq!(report_field(&report, "duplicates"), "0", "{report}");
    assert_eq!(report_field(&report, "missing"), "0", "{report}");
    assert!(
        report_field(&report, "records").starts_with(&format!("{records} written, {records} read")),
        "{report}"
    );
    assert!(
        report_field(&report, "kills").starts_with(&format!("{kills} (SIGKILL)")),
        "{report}"
    );
    report
}

/// Publishes `body of <id>` for each correlation id, confirmed by RabbitMQ.
async fn publish(rabbit: &RabbitMq, queue: &str, ids: &[String]) {
    let messages = ids
        .iter()
        .map(|id| (id.clone(), format!("body of {id}").into_bytes()));
    rabbit
        .publish_persistent(queue, messages)
        .await
        .expect("publish to RabbitMQ");
}

/// `demo --bootstrap` with two SIGKILLs of its pipeline process exits 0 and
/// reports exactly once (0 duplicates, 0 missing, every record written and
/// read, 2 kills); our own read_committed read of its topic agrees: every
/// number once, increasing per partition, keyed by the number modulo 8.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_with_two_kills_writes_every_number_exactly_once() {
    let _one = ONE_AT_A_TIME.lock().await;
    let bootstrap = kafka().await.bootstrap();
    let topic = unique_name("demo-e2e");
    const RECORDS: u64 = 6000;
    let out = ok(
        &[
            "--bootstrap",
            &bootstrap,
            "demo",
            "--records",
            &RECORDS.to_string(),
            "--kills",
            "2",
            "--rate",
            "3000",
            "--checkpoint-interval-ms",
            "100",
            "--topic",
            &topic,
        ],
        LIMIT,
    )
    .await;
    assert_demo_report(&out, RECORDS, 2);
    let by_partition = read_committed(&bootstrap, &topic).await;
    let mut all = BTreeSet::new();
    for (p, recs) in &by_partition {
        let values: Vec<u64> = recs.iter().map(|(_, v)| v.parse().unwrap()).collect();
        assert!(
            values.windows(2).all(|w| w[0] < w[1]),
            "partition {p} order"
        );
        for (k, v) in recs {
            let n: u64 = v.parse().unwrap();
            assert_eq!(k, &(n % 8).to_string());
            assert!(all.insert(n), "{n} twice");
        }
    }
    assert_eq!(all, (0..RECORDS).collect::<BTreeSet<u64>>());
}

/// `demo --topic` of a topic that already has records is refused: usage
/// error (exit 2) saying so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_refuses_a_topic_that_already_has_records() {
    let kafka = kafka().await;
    let bootstrap = kafka.bootstrap();
    let topic = unique_name("demo-nonempty");
    kafka.create_topic(&topic, 1, 1).await.unwrap();
    let mut produce = tokio::process::Command::new(bin())
        .args(["--bootstrap", &bootstrap, "produce", "--topic", &topic])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn kafka-eos produce");
    {
        use tokio::io::AsyncWriteExt;
        let mut stdin = produce.stdin.take().unwrap();
        stdin.write_all(b"0\n").await.unwrap();
    }
    let out = tokio::time::timeout(LIMIT, produce.wait_with_output())
        .await
        .expect("produce finishes")
        .unwrap();
    assert!(out.status.success(), "produce: {}", text(&out.stderr));
    let out = run(
        &["--bootstrap", &bootstrap, "demo", "--topic", &topic],
        LIMIT,
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("already has records"));
}

/// `bridge` with an unreachable RabbitMQ (Kafka is fine) exits 3, naming
/// the address and `--amqp`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bridge_exits_3_when_rabbitmq_is_unreachable() {
    let kafka = kafka().await;
    let bootstrap = kafka.bootstrap();
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let topic = unique_name("bridged");
    kafka.create_topic(&topic, 3, 1).await.unwrap();
    let nowhere = format!("amqp://guest:guest@127.0.0.1:{closed}/%2f");
    let out = run(
        &[
            "--bootstrap",
            &bootstrap,
            "bridge",
            "--amqp",
            &nowhere,
            "--queue",
            "q",
            "--topic",
            &topic,
            "--checkpoint-dir",
            std::env::temp_dir().to_str().unwrap(),
        ],
        LIMIT,
    )
    .await;
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains(&format!("127.0.0.1:{closed}")) && err.contains("--amqp"),
        "{err}"
    );
}

/// `bridge`: messages published to RabbitMQ reach Kafka exactly once over
/// two runs sharing their checkpoint directory: the first (200 messages)
/// exits when idle; the second gets the other 100 and 20 re-published
/// ones, and once all 300 are committed Ctrl-C (SIGINT) stops it after a
/// final checkpoint, exit 0. The topic then holds each of the 300 messages
/// once, with its body.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bridge_moves_messages_exactly_once_across_two_runs() {
    let _one = ONE_AT_A_TIME.lock().await;
    let kafka = kafka().await;
    let bootstrap = kafka.bootstrap();
    let topic = unique_name("bridged");
    kafka.create_topic(&topic, 3, 1).await.unwrap();
    let prefix = unique_name("e2e-bridge");
    let rabbit = RabbitMq::start().await.expect("start RabbitMQ");
    let url = rabbit.amqp_url();
    let dir = tempfile::tempdir().unwrap();
    let cp = dir.path().to_str().unwrap().to_string();
    let bridge = [
        "--bootstrap",
        &bootstrap,
        "bridge",
        "--amqp",
        &url,
        "--queue",
        "orders",
        "--topic",
        &topic,
        "--checkpoint-dir",
        &cp,
        "--checkpoint-interval-ms",
        "100",
        "--idle-exit-ms",
        "1500",
        "--transactional-id-prefix",
        &prefix,
    ];
    let ids: Vec<String> = (0..300).map(|i| format!("m-{i:04}")).collect();
    publish(&rabbit, "orders", &ids[..200]).await;
    let out = ok(&bridge, LIMIT).await;
    let summary = text(&out.stdout);
    assert!(summary.contains("200 messages -> 200 records"), "{summary}");
    // Second run without an idle exit: the rest, plus 20 messages published
    // a second time; once all 300 are committed, Ctrl-C (SIGINT) stops it
    // after a final checkpoint, exit 0.
    let running: Vec<&str> = bridge
        .iter()
        .copied()
        .filter(|a| *a != "--idle-exit-ms" && *a != "1500")
        .collect();
    let child = tokio::process::Command::new(bin())
        .args(&running)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn bridge");
    let pid = child.id().unwrap().to_string();
    let mut second: Vec<String> = ids[200..].to_vec();
    second.extend(ids[180..200].iter().cloned());
    publish(&rabbit, "orders", &second).await;
    // Waits on the condition (bounded like every step, by `LIMIT`, only so
    // that a stuck bridge fails the test instead of hanging it).
    let deadline = std::time::Instant::now() + LIMIT;
    while read_committed(&bootstrap, &topic)
        .await
        .values()
        .map(Vec::len)
        .sum::<usize>()
        < 300
    {
        assert!(
            std::time::Instant::now() < deadline,
            "300 records not committed within {LIMIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let status = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap();
    assert!(status.success());
    let out = tokio::time::timeout(LIMIT, child.wait_with_output())
        .await
        .expect("bridge stops after Ctrl-C")
        .unwrap();
    let summary = text(&out.stdout);
    assert!(out.status.success(), "{summary}\n{}", text(&out.stderr));
    assert!(
        summary.contains("Shutdown") && summary.contains("resumed from"),
        "{summary}"
    );
    let keys: Vec<String> = read_committed(&bootstrap, &topic)
        .await
        .into_values()
        .flatten()
        .map(|(k, v)| {
            assert_eq!(v, format!("body of {k}"));
            k
        })
        .collect();
    let distinct: BTreeSet<&String> = keys.iter().collect();
    assert_eq!(keys.len(), 300, "exactly the 300 messages, no duplicate");
    assert_eq!(distinct, ids.iter().collect::<BTreeSet<_>>());
}

/// `bench`, tiny and without Java, prints its table with every row and a
/// positive rate in each (its topics and transactional ids are named after
/// its run).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bench_prints_a_table_with_every_row() {
    let bootstrap = kafka().await.bootstrap();
    let out = ok(
        &[
            "--bootstrap",
            &bootstrap,
            "bench",
            "--records",
            "300",
            "--partitions",
            "2",
            "--no-java",
            "--sink",
        ],
        LIMIT,
    )
    .await;
    let table = text(&out.stdout);
    for row in [
        "idempotent",
        "transactional, commit every 100 ms",
        "transactional, commit every 1 s",
        "sink NONE",
        "sink AT_LEAST_ONCE",
        "sink EXACTLY_ONCE",
    ] {
        let line = table
            .lines()
            .find(|l| l.starts_with(row))
            .unwrap_or_else(|| panic!("no {row:?} row:\n{table}"));
        let rate: f64 = line[row.len()..]
            .split_whitespace()
            .find_map(|c| c.parse().ok())
            .unwrap_or_else(|| panic!("no rate in {line:?}"));
        assert!(rate > 0.0, "{line}");
    }
    assert!(table.contains("Java: skipped (--no-java)"), "{table}");
}

/// With the local Kafka built in, `demo` without `--bootstrap` starts its
/// own Kafka, and with one SIGKILL reports exactly once.
#[cfg(feature = "local-kafka")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_without_bootstrap_starts_its_own_kafka() {
    let _one = ONE_AT_A_TIME.lock().await;
    let out = ok(
        &[
            "demo",
            "--records",
            "3000",
            "--kills",
            "1",
            "--rate",
            "3000",
        ],
        Duration::from_secs(300),
    )
    .await;
    let report = assert_demo_report(&out, 3000, 1);
    assert!(report.contains("local Kafka ready"), "{report}");
}
