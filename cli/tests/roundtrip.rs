//! End-to-end CLI tests against the harness's shared Kafka 4.4 cluster (one
//! node, transaction version 2), spawning the built binary (or
//! `$KAFKA_EOS_BIN`, e.g. the static musl build), one scenario per test,
//! each with topics and transactional ids of its own:
//!
//! - `produce` 1,000 keyed lines with headers (idempotent), `consume` them
//!   back as values, key-value pairs and JSON: identical; our read_committed
//!   JSON agrees with the Java console consumer.
//! - `produce --transactional-id` commits every N records; read_committed
//!   sees everything, in order, as the Java console consumer does.
//! - A transactional `produce` killed mid-transaction: `txn list`,
//!   `txn describe` and `txn producers` show the lingering transaction, it
//!   is invisible to read_committed, `txn abort-lingering` aborts it and the
//!   id's next producer commits normally.
//! - `txn commit-prepared` of a persisted handle: Committed, then
//!   AlreadyCommitted; a handle whose transaction timed out: AbortedByBroker,
//!   exit 5.
//!
//! Other tests' transactions are on the broker too: `txn list` output is
//! checked for this test's own transactional ids only.

use kafka_client::{Cluster, ClusterConfig};
use kafka_consumer::{Reader, ReaderConfig};
use kafka_producer::{ProducerConfig, ProducerRecord, TransactionalProducer};
use kafka_testcontainers::{IsolationLevel as JavaIsolation, KafkaCluster};
use kafka_testcontainers::{SharedKafka, unique_name};
use serde_json::Value;
use std::collections::BTreeSet;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

/// The shared Kafka 4.4 cluster (other tests use it too: names are unique).
async fn kafka() -> &'static KafkaCluster {
    SharedKafka::Kafka44Tv2
        .cluster()
        .await
        .expect("shared Kafka 4.4")
}

/// Waits until no transaction is open on `partitions` of `topic`: a commit
/// returns once the coordinator logged it, its markers (which move the last
/// stable offset that `consume -e` stops at) come after.
async fn wait_until_stable(bootstrap: &str, topic: &str, partitions: &[i32]) {
    let cluster = Cluster::connect(ClusterConfig::new(bootstrap))
        .await
        .expect("connect");
    Reader::new(cluster, ReaderConfig::default())
        .wait_until_stable(topic, partitions, Duration::from_secs(60))
        .await
        .unwrap_or_else(|e| panic!("{topic}: {e}"));
}

fn bin() -> String {
    std::env::var("KAFKA_EOS_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_kafka-eos").into())
}

fn cmd(bootstrap: &str, args: &[&str]) -> Command {
    let mut c = Command::new(bin());
    c.arg("--bootstrap")
        .arg(bootstrap)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    c
}

/// Runs the CLI with `stdin` as input, bounded by 60 s; panics unless it exits 0.
async fn ok(bootstrap: &str, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let out = run(bootstrap, args, stdin).await;
    assert!(
        out.status.success(),
        "kafka-eos {args:?} failed: {:?}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

async fn run(bootstrap: &str, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut c = cmd(bootstrap, args);
    if stdin.is_some() {
        c.stdin(Stdio::piped());
    }
    let mut child = c.spawn().expect("spawn kafka-eos");
    if let Some(data) = stdin {
        let mut w = child.stdin.take().unwrap();
        w.write_all(data).await.unwrap();
        drop(w);
    }
    tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("kafka-eos {args:?} did not finish within 60 s"))
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn sorted_lines(b: &[u8]) -> Vec<String> {
    let mut v: Vec<String> = text(b).lines().map(String::from).collect();
    v.sort();
    v
}

/// (partition, offset, key, value, headers) of our JSON lines.
type Rec = (
    i32,
    i64,
    Option<Vec<u8>>,
    Option<Vec<u8>>,
    Vec<(String, Vec<u8>)>,
);

fn bytes_of(v: &Value) -> Option<Vec<u8>> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.as_bytes().to_vec()),
        other => panic!("expected a UTF-8 string, got {other}"),
    }
}

fn parse_json(b: &[u8], topic: &str) -> Vec<Rec> {
    let mut out: Vec<Rec> = text(b)
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            assert_eq!(v["topic"], topic);
            assert!(v["timestamp"].as_i64().unwrap() > 0);
            let headers = v["headers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|h| {
                    (
                        h["key"].as_str().unwrap().to_string(),
                        bytes_of(&h["value"]).unwrap_or_default(),
                    )
                })
                .collect();
            (
                v["partition"].as_i64().unwrap() as i32,
                v["offset"].as_i64().unwrap(),
                bytes_of(&v["key"]),
                bytes_of(&v["value"]),
                headers,
            )
        })
        .collect();
    out.sort_by_key(|r| (r.0, r.1));
    out
}

async fn java(kafka: &KafkaCluster, topic: &str, isolation: JavaIsolation, max: usize) -> Vec<Rec> {
    let mut v: Vec<Rec> = kafka
        // The Java tool's own bound: it stops after `max` records; its JVM
        // alone can take tens of seconds to start on a loaded machine.
        .console_consume(topic, isolation, max, Duration::from_secs(60))
        .await
        .expect("console consumer")
        .into_iter()
        .map(|r| (r.partition, r.offset, r.key, r.value, r.headers))
        .collect();
    v.sort_by_key(|r| (r.0, r.1));
    v
}

/// Polls `txn describe` until its output contains `needle`.
async fn wait_describe(bootstrap: &str, id: &str, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let out = run(bootstrap, &["txn", "describe", id], None).await;
        let s = text(&out.stdout);
        if out.status.success() && s.contains(needle) {
            return s;
        }
        assert!(
            Instant::now() < deadline,
            "{id} never showed {needle:?}: {s}\n{}",
            text(&out.stderr)
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// 1,000 keyed lines with headers, produced idempotently (lz4, linger):
/// `consume` gives back the same values, the same key-value pairs and, as
/// JSON under read_committed, the same keys, values and headers spread over
/// the three partitions, exactly as the Java console consumer reads them;
/// `--partitions 0 --from 1 --exit-at-end` reads partition 0 but its first
/// record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idempotent_produce_reads_back_as_values_key_values_and_json() {
    let kafka = kafka().await;
    let b = kafka.bootstrap();
    let b = b.as_str();
    let rt = unique_name("rt");
    kafka.create_topic(&rt, 3, 1).await.expect("create topic");

    let mut input = String::new();
    for i in 0..1000 {
        input.push_str(&format!("key-{i}\tvalue {i} \"é\"\r\n"));
    }
    let out = ok(
        b,
        &[
            "produce",
            "--topic",
            &rt,
            "--key-separator",
            "\t",
            "--header",
            "source=cli",
            "--header",
            "n=1",
            "-X",
            "linger.ms=10",
            "-X",
            "compression.type=lz4",
        ],
        Some(input.as_bytes()),
    )
    .await;
    let summary = text(&out.stderr);
    assert!(summary.contains("produced 1000 records"), "{summary}");
    assert!(summary.contains("records/s"), "{summary}");

    let expected_values: Vec<String> = {
        let mut v: Vec<String> = (0..1000).map(|i| format!("value {i} \"é\"")).collect();
        v.sort();
        v
    };
    let expected_kv: Vec<String> = {
        let mut v: Vec<String> = (0..1000)
            .map(|i| format!("key-{i}|value {i} \"é\""))
            .collect();
        v.sort();
        v
    };
    let base = [
        "consume",
        "--topic",
        &rt,
        "--count",
        "1000",
        "--timeout-ms",
        "15000",
    ];
    let values = ok(b, &base, None).await;
    assert_eq!(sorted_lines(&values.stdout), expected_values);
    assert!(text(&values.stderr).contains("consumed 1000 records"));
    let mut args = base.to_vec();
    args.extend(["--format", "key-value", "--key-separator", "|"]);
    let kv = ok(b, &args, None).await;
    assert_eq!(sorted_lines(&kv.stdout), expected_kv);
    let mut args = base.to_vec();
    args.extend(["--format", "json", "--isolation", "read_committed"]);
    let json = parse_json(&ok(b, &args, None).await.stdout, &rt);
    assert_eq!(json.len(), 1000);
    let headers = vec![
        ("source".to_string(), b"cli".to_vec()),
        ("n".to_string(), b"1".to_vec()),
    ];
    for r in &json {
        let k = String::from_utf8(r.2.clone().unwrap()).unwrap();
        let i: usize = k.strip_prefix("key-").unwrap().parse().unwrap();
        assert_eq!(r.3.as_deref(), Some(format!("value {i} \"é\"").as_bytes()));
        assert_eq!(r.4, headers);
    }
    let partitions: BTreeSet<i32> = json.iter().map(|r| r.0).collect();
    assert_eq!(partitions.len(), 3, "keys spread over the partitions");
    assert_eq!(
        json,
        java(kafka, &rt, JavaIsolation::ReadCommitted, 1000).await
    );
    // --partitions and --from OFFSET.
    let p0 = json.iter().filter(|r| r.0 == 0).count();
    let out = ok(
        b,
        &[
            "consume",
            "--topic",
            &rt,
            "--partitions",
            "0",
            "--from",
            "1",
            "--exit-at-end",
        ],
        None,
    )
    .await;
    assert_eq!(text(&out.stdout).lines().count(), p0 - 1);
}

/// `produce --transactional-id --commit-every 100` of 450 lines (round
/// robin over two partitions) commits 5 transactions; read_committed sees
/// every value once, in order within each partition, as the Java console
/// consumer does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transactional_produce_commits_every_n_records() {
    let kafka = kafka().await;
    let b = kafka.bootstrap();
    let b = b.as_str();
    let tx = unique_name("tx");
    kafka.create_topic(&tx, 2, 1).await.expect("create topic");
    let transactional_id = unique_name("cli-tx");
    let input: String = (0..450).map(|i| format!("{i}\n")).collect();
    let out = ok(
        b,
        &[
            "produce",
            "--topic",
            &tx,
            "--transactional-id",
            &transactional_id,
            "--commit-every",
            "100",
            "--partitioner",
            "round-robin",
        ],
        Some(input.as_bytes()),
    )
    .await;
    let summary = text(&out.stderr);
    assert!(
        summary.contains("produced 450 records") && summary.contains("in 5 committed transactions"),
        "{summary}"
    );
    let out = ok(
        b,
        &[
            "consume",
            "--topic",
            &tx,
            "--format",
            "json",
            "--count",
            "450",
            "--timeout-ms",
            "15000",
        ],
        None,
    )
    .await;
    let ours = parse_json(&out.stdout, &tx);
    let mut values: Vec<u32> = ours
        .iter()
        .map(|r| {
            String::from_utf8(r.3.clone().unwrap())
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    for p in [0, 1] {
        let in_p: Vec<u32> = ours
            .iter()
            .filter(|r| r.0 == p)
            .map(|r| {
                String::from_utf8(r.3.clone().unwrap())
                    .unwrap()
                    .parse()
                    .unwrap()
            })
            .collect();
        assert!(in_p.windows(2).all(|w| w[0] < w[1]), "order within {p}");
    }
    values.sort_unstable();
    assert_eq!(values, (0..450).collect::<Vec<u32>>());
    assert_eq!(
        ours,
        java(kafka, &tx, JavaIsolation::ReadCommitted, 450).await
    );
}

/// A transactional `produce` killed with its transaction open: `txn list
/// --state Ongoing` lists the id as Ongoing, `txn list --pattern` lists it
/// beside a completed id of the same pattern, `txn describe` shows it
/// Ongoing on the topic's partition, `txn producers` shows an open
/// transaction from offset 0, and read_committed sees none of its records
/// (read_uncommitted sees all). `txn abort-lingering` aborts it; the id's
/// next producer commits normally and only its records are visible to
/// read_committed (ours and Java's).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_transactional_produce_lingers_until_abort_lingering() {
    let kafka = kafka().await;
    let b = kafka.bootstrap();
    let b = b.as_str();
    let linger = unique_name("linger");
    let done_topic = unique_name("linger-done");
    kafka
        .create_topic(&linger, 1, 1)
        .await
        .expect("create topic");
    kafka
        .create_topic(&done_topic, 1, 1)
        .await
        .expect("create topic");
    // Two ids of one pattern: one completed, one left lingering.
    let base = unique_name("cli");
    let (done_id, linger_id) = (format!("{base}-done"), format!("{base}-linger"));
    ok(
        b,
        &[
            "produce",
            "--topic",
            &done_topic,
            "--transactional-id",
            &done_id,
        ],
        Some(b"done\n"),
    )
    .await;

    let mut child = cmd(
        b,
        &[
            "produce",
            "--topic",
            &linger,
            "--transactional-id",
            &linger_id,
            "--commit-every",
            "1000000",
            "--commit-interval-ms",
            "600000",
            "-X",
            "transaction.timeout.ms=600000",
            "-X",
            "linger.ms=0",
        ],
    )
    .stdin(Stdio::piped())
    .spawn()
    .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let lines: String = (0..50).map(|i| format!("lost-{i}\n")).collect();
    stdin.write_all(lines.as_bytes()).await.unwrap();
    stdin.flush().await.unwrap();
    wait_describe(b, &linger_id, "Ongoing").await;
    // Every record is written (read_uncommitted sees them) before the kill.
    let out = ok(
        b,
        &[
            "consume",
            "--topic",
            &linger,
            "--isolation",
            "read_uncommitted",
            "--count",
            "50",
            "--timeout-ms",
            "15000",
        ],
        None,
    )
    .await;
    assert_eq!(text(&out.stdout), lines);
    child.start_kill().unwrap();
    child.wait().await.unwrap();
    drop(stdin);

    let list = text(
        &ok(b, &["txn", "list", "--state", "Ongoing"], None)
            .await
            .stdout,
    );
    let row = list
        .lines()
        .find(|l| l.starts_with(&format!("{linger_id} ")))
        .unwrap_or_else(|| panic!("{linger_id} not listed:\n{list}"));
    assert!(row.contains("Ongoing"), "{row}");
    assert!(list.starts_with("TRANSACTIONAL_ID"), "{list}");
    let pattern = format!("{base}-.*");
    let all = text(
        &ok(b, &["txn", "list", "--pattern", &pattern], None)
            .await
            .stdout,
    );
    assert!(all.contains(&done_id) && all.contains(&linger_id), "{all}");
    let desc = text(&ok(b, &["txn", "describe", &linger_id], None).await.stdout);
    assert!(
        desc.contains("state:          Ongoing") && desc.contains(&format!("{linger}-0")),
        "{desc}"
    );
    let producers = text(
        &ok(b, &["txn", "producers", "--topic", &linger], None)
            .await
            .stdout,
    );
    let open: Vec<&str> = producers.lines().skip(1).collect();
    assert!(
        open.iter().any(|l| l.trim_end().ends_with(" 0")),
        "an open transaction starting at offset 0:\n{producers}"
    );
    // Invisible to read_committed (the LSO is held at its first offset:
    // -e stops there).
    let out = ok(b, &["consume", "--topic", &linger, "-e"], None).await;
    assert_eq!(text(&out.stdout), "");

    let out = ok(b, &["txn", "abort-lingering", &linger_id], None).await;
    let msg = text(&out.stdout);
    assert!(
        msg.contains("was Ongoing") && msg.contains("now aborted"),
        "{msg}"
    );
    // InitProducerId returns once the abort is complete: the id is idle.
    wait_describe(b, &linger_id, "state:          Empty").await;
    // The id's next producer commits normally; only that is visible.
    let out = ok(
        b,
        &[
            "produce",
            "--topic",
            &linger,
            "--transactional-id",
            &linger_id,
        ],
        Some(b"kept-1\nkept-2\n"),
    )
    .await;
    assert!(text(&out.stderr).contains("in 1 committed transaction"));
    wait_until_stable(b, &linger, &[0]).await;
    let out = ok(b, &["consume", "--topic", &linger, "-e"], None).await;
    assert_eq!(text(&out.stdout), "kept-1\nkept-2\n");
    let java_rc = java(kafka, &linger, JavaIsolation::ReadCommitted, 2).await;
    let java_values: Vec<&[u8]> = java_rc.iter().map(|r| r.3.as_deref().unwrap()).collect();
    assert_eq!(java_values, vec![&b"kept-1"[..], b"kept-2"]);
    let out = ok(
        b,
        &[
            "consume",
            "--topic",
            &linger,
            "--isolation",
            "read_uncommitted",
            "-e",
        ],
        None,
    )
    .await;
    assert_eq!(text(&out.stdout), format!("{lines}kept-1\nkept-2\n"));
}

/// `txn commit-prepared` of a persisted handle of a prepared transaction
/// commits it (Committed), a second time finds it done (AlreadyCommitted),
/// and read_committed then sees its records.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commit_prepared_commits_a_persisted_handle_once() {
    let kafka = kafka().await;
    let b = kafka.bootstrap();
    let b = b.as_str();
    let prep = unique_name("prep");
    kafka.create_topic(&prep, 1, 1).await.expect("create topic");
    let dir = tempfile::tempdir().unwrap();
    let transactional_id = unique_name("cli-prep");
    let prepared = prepare(b, &prep, &transactional_id, 60_000, 3).await;
    let handle = dir.path().join("handle");
    std::fs::write(&handle, prepared.encode()).unwrap();
    let h = handle.to_str().unwrap();
    let out = ok(b, &["txn", "commit-prepared", "--handle", h], None).await;
    assert!(
        text(&out.stdout).starts_with(&format!("Committed: {transactional_id}")),
        "{out:?}"
    );
    let out = ok(b, &["txn", "commit-prepared", "--handle", h], None).await;
    assert!(text(&out.stdout).starts_with("AlreadyCommitted"), "{out:?}");
    wait_until_stable(b, &prep, &[0]).await;
    let out = ok(b, &["consume", "--topic", &prep, "-e"], None).await;
    assert_eq!(text(&out.stdout), "prep-0\nprep-1\nprep-2\n");
}

/// `txn commit-prepared` of a handle whose transaction the broker aborted
/// at its timeout (1 s) reports AbortedByBroker and DATA LOST, exit 5.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commit_prepared_of_a_timed_out_transaction_reports_data_lost() {
    let kafka = kafka().await;
    let b = kafka.bootstrap();
    let b = b.as_str();
    let prep = unique_name("prep-late");
    kafka.create_topic(&prep, 1, 1).await.expect("create topic");
    let dir = tempfile::tempdir().unwrap();
    let transactional_id = unique_name("cli-prep-late");
    let prepared = prepare(b, &prep, &transactional_id, 1_000, 2).await;
    let handle = dir.path().join("handle");
    std::fs::write(&handle, prepared.encode()).unwrap();
    let h = handle.to_str().unwrap();
    wait_describe(b, &transactional_id, "CompleteAbort").await;
    let out = run(b, &["txn", "commit-prepared", "--handle", h], None).await;
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{out:?}");
    assert!(text(&out.stdout).starts_with("AbortedByBroker"), "{out:?}");
    assert!(err.contains("DATA LOST"), "{err}");
}

/// Writes `n` records to `topic` in a transaction, prepares it and drops
/// the producer without finishing it.
async fn prepare(
    bootstrap: &str,
    topic: &str,
    id: &str,
    timeout_ms: u32,
    n: usize,
) -> kafka_producer::txn::PreparedTransaction {
    let config = ProducerConfig::from_properties([
        ("bootstrap.servers", bootstrap),
        ("transactional.id", id),
        ("transaction.timeout.ms", &timeout_ms.to_string()),
    ])
    .unwrap();
    let p = TransactionalProducer::connect(config).await.unwrap();
    p.init_transactions().await.unwrap();
    p.begin_transaction().unwrap();
    let sends: Vec<_> = (0..n)
        .map(|i| p.send(ProducerRecord::new(topic).value(format!("prep-{i}"))))
        .collect();
    let prepared = p.prepare_transaction().await.unwrap();
    for s in sends {
        s.await.unwrap();
    }
    p.close(Duration::from_secs(10)).await.unwrap();
    prepared
}
