//! The registry formats of `produce`, `consume` and `copy` against the
//! shared Kafka 4.4 cluster and a real schema registry (Apicurio with
//! Confluent's API), the binary spawned as a user runs it; topics, subjects
//! (named after the topics), groups and transactional ids are each test's
//! own. One scenario per test; each states its invariant.

use crate::common::{kafka, ok, run};
use kafka_client::{Cluster, ClusterConfig};
use kafka_consumer::{Reader, ReaderConfig};
use kafka_testcontainers::{SchemaRegistry, unique_name};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::Duration;

async fn registry() -> String {
    SchemaRegistry::shared()
        .await
        .expect("the shared schema registry")
        .url()
}

/// Waits until no transaction is open on partition 0 of `topic` (markers
/// land after EndTxn returns; `consume -e` stops at the last stable offset).
async fn wait_until_stable(bootstrap: &str, topic: &str) {
    let cluster = Cluster::connect(ClusterConfig::new(bootstrap))
        .await
        .expect("connect");
    Reader::new(cluster, ReaderConfig::default())
        .wait_until_stable(topic, &[0], Duration::from_secs(60))
        .await
        .unwrap_or_else(|e| panic!("{topic}: {e}"));
}

/// A schema file in a directory kept for the test's length.
fn schema_file(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn lines(docs: &[Value]) -> Vec<u8> {
    docs.iter()
        .map(|d| format!("{d}\n"))
        .collect::<String>()
        .into_bytes()
}

fn parse_lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?}: {e}")))
        .collect()
}

/// `consume --value-format FORMAT -e` of partition 0 under `isolation`.
async fn consume(bootstrap: &str, topic: &str, extra: &[&str], isolation: &str) -> Vec<Value> {
    let url = registry().await;
    let mut args = vec![
        "consume",
        "--topic",
        topic,
        "-e",
        "--isolation-level",
        isolation,
        "--schema-registry",
        url.as_str(),
    ];
    args.extend_from_slice(extra);
    parse_lines(&ok(bootstrap, &args, None).await)
}

const ORDER_AVSC: &str = r#"{"type":"record","name":"Order","namespace":"shop","fields":[
    {"name":"id","type":"long"},
    {"name":"note","type":["null","string"],"default":null},
    {"name":"qty","type":["null","int","string"]},
    {"name":"tags","type":{"type":"array","items":"string"}},
    {"name":"kind","type":{"type":"enum","name":"Kind","symbols":["RETAIL","WHOLESALE"]}}
]}"#;

fn orders(n: i64) -> Vec<Value> {
    (0..n)
        .map(|i| {
            json!({
                "id": i,
                "note": if i % 2 == 0 { Value::Null } else { json!(format!("note {i}")) },
                "qty": if i % 3 == 0 { json!("many") } else { json!(i) },
                "tags": (0..i % 3).map(|t| format!("t{t}")).collect::<Vec<_>>(),
                "kind": if i % 2 == 0 { "RETAIL" } else { "WHOLESALE" },
            })
        })
        .collect()
}

/// Invariant: JSON lines produced as Avro (unions resolved by the value's
/// type, enums by symbol) consume back, decoded with the writer's schema
/// from the registry, to the same documents in the same order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn avro_json_lines_round_trip() {
    let kafka = kafka().await;
    let bootstrap = kafka.bootstrap();
    let url = registry().await;
    let topic = unique_name("sr-avro");
    kafka.create_topic(&topic, 1, 1).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let avsc = schema_file(&dir, "order.avsc", ORDER_AVSC);
    let docs = orders(20);
    let produce = [
        "produce",
        "--topic",
        &topic,
        "--value-format",
        "avro",
        "--schema-file",
        avsc.to_str().unwrap(),
        "--schema-registry",
        &url,
    ];
    ok(&bootstrap, &produce, Some(&lines(&docs))).await;
    let back = consume(
        &bootstrap,
        &topic,
        &["--value-format", "avro"],
        "read_committed",
    )
    .await;
    assert_eq!(back, docs);
}

const ORDER_PROTO: &str = r#"syntax = "proto3";
package shop;
enum Status { NEW = 0; PAID = 1; }
message Order {
  int32 id = 1;
  string item = 2;
  repeated string tags = 3;
  Status status = 4;
}
message Other { string x = 1; }
"#;

/// Invariant: `{"key", "value"}` lines produced in transactions, the key as
/// a string and the value as the Protobuf message named by --message
/// (Protobuf's JSON mapping), are read back by read_committed as the same
/// envelopes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protobuf_keyed_lines_round_trip_in_transactions() {
    let kafka = kafka().await;
    let bootstrap = kafka.bootstrap();
    let url = registry().await;
    let topic = unique_name("sr-proto");
    kafka.create_topic(&topic, 1, 1).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let proto = schema_file(&dir, "order.proto", ORDER_PROTO);
    let docs: Vec<Value> = (1..=12)
        .map(|i| {
            json!({
                "key": format!("k{i}"),
                "value": {"id": i, "item": format!("item {i}"), "tags": ["a", "b"], "status": "PAID"},
            })
        })
        .collect();
    let txn = unique_name("sr-proto-txn");
    let produce = [
        "produce",
        "--topic",
        &topic,
        "--key-format",
        "string",
        "--value-format",
        "protobuf",
        "--schema-file",
        proto.to_str().unwrap(),
        "--message",
        "shop.Order",
        "--transactional-id",
        &txn,
        "--commit-every",
        "5",
        "-X",
        &format!("schema.registry.url={url}"),
    ];
    ok(&bootstrap, &produce, Some(&lines(&docs))).await;
    wait_until_stable(&bootstrap, &topic).await;
    let back = consume(
        &bootstrap,
        &topic,
        &["--key-format", "string", "--value-format", "protobuf"],
        "read_committed",
    )
    .await;
    assert_eq!(back, docs);
}

const ORDER_JSON_SCHEMA: &str = r#"{"title":"Order","type":"object",
  "properties":{"id":{"type":"integer"},"item":{"type":"string"}},
  "required":["id","item"],"additionalProperties":false}"#;

/// Invariant: JSON documents produced with a JSON Schema (validated) read
/// back as the same documents.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_schema_lines_round_trip() {
    let kafka = kafka().await;
    let bootstrap = kafka.bootstrap();
    let url = registry().await;
    let topic = unique_name("sr-json");
    kafka.create_topic(&topic, 1, 1).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let schema = schema_file(&dir, "order.json", ORDER_JSON_SCHEMA);
    let docs: Vec<Value> = (0..10)
        .map(|i| json!({"id": i, "item": format!("é {i} \"q\"")}))
        .collect();
    let produce = [
        "produce",
        "--topic",
        &topic,
        "--value-format",
        "json",
        "--schema-file",
        schema.to_str().unwrap(),
        "--schema-registry",
        &url,
    ];
    ok(&bootstrap, &produce, Some(&lines(&docs))).await;
    let back = consume(
        &bootstrap,
        &topic,
        &["--value-format", "json"],
        "read_committed",
    )
    .await;
    assert_eq!(back, docs);
}

/// Invariant: a line that does not fit the schema fails `produce` with
/// exit 1 and an error naming the line and the field; nothing of that line
/// is written, and the transaction the lines before it were in is aborted:
/// read_committed sees nothing, read_uncommitted only the line before it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_that_does_not_fit_fails_and_nothing_of_it_is_written() {
    let kafka = kafka().await;
    let bootstrap = kafka.bootstrap();
    let url = registry().await;
    let topic = unique_name("sr-misfit");
    kafka.create_topic(&topic, 1, 1).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let avsc = schema_file(&dir, "order.avsc", ORDER_AVSC);
    let mut docs = orders(3);
    docs[1]["id"] = json!("not a long");
    let txn = unique_name("sr-misfit-txn");
    let produce = [
        "produce",
        "--topic",
        &topic,
        "--value-format",
        "avro",
        "--schema-file",
        avsc.to_str().unwrap(),
        "--schema-registry",
        &url,
        "--transactional-id",
        &txn,
        // One transaction for all three lines, however slow the machine:
        // no commit is due before line 2 fails.
        "--commit-interval-ms",
        "600000",
    ];
    let out = run(&bootstrap, &produce, Some(&lines(&docs))).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr:\n{stderr}");
    assert!(
        stderr.contains("line 2") && stderr.contains("value.id"),
        "the error names the line and the field:\n{stderr}"
    );
    wait_until_stable(&bootstrap, &topic).await;
    let committed = consume(
        &bootstrap,
        &topic,
        &["--value-format", "avro"],
        "read_committed",
    )
    .await;
    assert_eq!(
        committed,
        Vec::<Value>::new(),
        "the transaction was aborted"
    );
    let uncommitted = consume(
        &bootstrap,
        &topic,
        &["--value-format", "avro"],
        "read_uncommitted",
    )
    .await;
    assert!(
        uncommitted.iter().all(|d| *d == docs[0]),
        "nothing of line 2 or after it reached the log: {uncommitted:?}"
    );
}

/// Invariant: a record that does not decode is never dropped silently:
/// `consume` names it on stderr as a typed error, prints the others, and
/// exits 1 at the end; with --stop-on-error it stops at it (exit 1)
/// having printed only the records before it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undecodable_records_are_reported_never_dropped() {
    let kafka = kafka().await;
    let bootstrap = kafka.bootstrap();
    let url = registry().await;
    let topic = unique_name("sr-undecodable");
    kafka.create_topic(&topic, 1, 1).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let avsc = schema_file(&dir, "order.avsc", ORDER_AVSC);
    let docs = orders(2);
    let avro = [
        "produce",
        "--topic",
        &topic,
        "--value-format",
        "avro",
        "--schema-file",
        avsc.to_str().unwrap(),
        "--schema-registry",
        &url,
    ];
    ok(&bootstrap, &avro, Some(&lines(&docs[..1]))).await;
    ok(
        &bootstrap,
        &["produce", "--topic", &topic],
        Some(b"plain text\n"),
    )
    .await;
    ok(&bootstrap, &avro, Some(&lines(&docs[1..]))).await;

    let consume = [
        "consume",
        "--topic",
        &topic,
        "-e",
        "--value-format",
        "avro",
        "--schema-registry",
        &url,
    ];
    let out = run(&bootstrap, &consume, None).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr:\n{stderr}");
    assert!(
        stderr.contains(&format!("record {topic}-0@1 does not decode: value:")),
        "the bad record is named:\n{stderr}"
    );
    assert!(stderr.contains("1 record(s) did not decode"), "{stderr}");
    assert_eq!(parse_lines(&String::from_utf8_lossy(&out.stdout)), docs);

    let mut stop = consume.to_vec();
    stop.push("--stop-on-error");
    let out = run(&bootstrap, &stop, None).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr:\n{stderr}");
    assert!(stderr.contains("@1 does not decode"), "{stderr}");
    assert_eq!(
        parse_lines(&String::from_utf8_lossy(&out.stdout)),
        docs[..1]
    );
}

const LENIENT_JSON_SCHEMA: &str = r#"{"title":"Order","type":"object",
  "properties":{"id":{"type":"integer"},"item":{"type":"string"}}}"#;

const ORDER_AVRO_STRICT: &str = r#"{"type":"record","name":"Order","fields":[
    {"name":"id","type":"long"},{"name":"item","type":"string"}]}"#;

const ORDER_AVRO_DEFAULTED: &str = r#"{"type":"record","name":"Order","fields":[
    {"name":"id","type":"long"},{"name":"item","type":"string","default":"none"}]}"#;

/// `copy` from `from` to `to` re-encoding JSON Schema to Avro.
async fn copy_json_to_avro(
    bootstrap: &str,
    from: &str,
    to: &str,
    group: &str,
    avsc: &std::path::Path,
) -> std::process::Output {
    let url = registry().await;
    let args = [
        "copy",
        "--from",
        from,
        "--to",
        to,
        "--group",
        group,
        "--transactional-id-prefix",
        group,
        "--input-value-format",
        "json",
        "--output-value-format",
        "avro",
        "--output-schema-file",
        avsc.to_str().unwrap(),
        "--schema-registry",
        &url,
        "--exit-at-end",
    ];
    run(bootstrap, &args, None).await
}

async fn produce_json(bootstrap: &str, topic: &str, dir: &tempfile::TempDir, docs: &[Value]) {
    let url = registry().await;
    let schema = schema_file(dir, "lenient.json", LENIENT_JSON_SCHEMA);
    let produce = [
        "produce",
        "--topic",
        topic,
        "--value-format",
        "json",
        "--schema-file",
        schema.to_str().unwrap(),
        "--schema-registry",
        &url,
    ];
    ok(bootstrap, &produce, Some(&lines(docs))).await;
}

/// Invariant: `copy` re-encodes JSON Schema input to Avro exactly once:
/// the output, read as Avro by read_committed, is the input's documents,
/// each once and in order; read_uncommitted holds no other record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_reencodes_json_to_avro_exactly_once() {
    let kafka = kafka().await;
    let bootstrap = kafka.bootstrap();
    let (from, to, group) = (
        unique_name("sr-copy-in"),
        unique_name("sr-copy-out"),
        unique_name("sr-copy"),
    );
    kafka.create_topic(&from, 1, 1).await.unwrap();
    kafka.create_topic(&to, 1, 1).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let docs: Vec<Value> = (0..50)
        .map(|i| json!({"id": i, "item": format!("i{i}")}))
        .collect();
    produce_json(&bootstrap, &from, &dir, &docs).await;
    let avsc = schema_file(&dir, "order.avsc", ORDER_AVRO_STRICT);
    let out = copy_json_to_avro(&bootstrap, &from, &to, &group, &avsc).await;
    assert!(
        out.status.success(),
        "copy: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    wait_until_stable(&bootstrap, &to).await;
    let committed = consume(
        &bootstrap,
        &to,
        &["--value-format", "avro"],
        "read_committed",
    )
    .await;
    assert_eq!(committed, docs);
    let uncommitted = consume(
        &bootstrap,
        &to,
        &["--value-format", "avro"],
        "read_uncommitted",
    )
    .await;
    assert_eq!(uncommitted, docs, "no stray record under read_uncommitted");
}

/// Invariant: a `copy` whose output schema refuses an input value stops
/// with exit 1 naming that record's offset; its open transaction is
/// aborted, so read_committed sees the output of exactly the input below
/// the group's committed offset, which is at most the refused record's, and
/// nothing of the refused record or after it is in the log. Resumed (the
/// output schema now giving the missing field a default), the copy begins
/// at that offset: every input record's output is visible exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_stopped_by_a_value_that_does_not_encode_resumes_there() {
    let kafka = kafka().await;
    let bootstrap = kafka.bootstrap();
    let (from, to, group) = (
        unique_name("sr-resume-in"),
        unique_name("sr-resume-out"),
        unique_name("sr-resume"),
    );
    kafka.create_topic(&from, 1, 1).await.unwrap();
    kafka.create_topic(&to, 1, 1).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut docs: Vec<Value> = (0..10)
        .map(|i| json!({"id": i, "item": format!("i{i}")}))
        .collect();
    docs[5] = json!({"id": 5});
    produce_json(&bootstrap, &from, &dir, &docs).await;

    let strict = schema_file(&dir, "strict.avsc", ORDER_AVRO_STRICT);
    let out = copy_json_to_avro(&bootstrap, &from, &to, &group, &strict).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr:\n{stderr}");
    assert!(
        stderr.contains(&format!("{from}-0 at offset 5")) && stderr.contains("value.item"),
        "the error names the record and the field:\n{stderr}"
    );
    let cluster = Cluster::connect(ClusterConfig::new(&bootstrap))
        .await
        .unwrap();
    let at = Reader::new(cluster, ReaderConfig::default())
        .committed_offsets(&group, &from, &[0])
        .await
        .unwrap()
        .get(&0)
        .copied()
        .flatten()
        .unwrap_or(0);
    assert!(
        at <= 5,
        "committed offset {at} is past the refused record 5"
    );
    wait_until_stable(&bootstrap, &to).await;
    let committed = consume(
        &bootstrap,
        &to,
        &["--value-format", "avro"],
        "read_committed",
    )
    .await;
    assert_eq!(committed, docs[..at as usize]);
    let uncommitted = consume(
        &bootstrap,
        &to,
        &["--value-format", "avro"],
        "read_uncommitted",
    )
    .await;
    assert!(
        uncommitted.iter().all(|d| d["id"].as_i64().unwrap() < 5),
        "nothing of the refused record or after it reached the log: {uncommitted:?}"
    );

    let defaulted = schema_file(&dir, "defaulted.avsc", ORDER_AVRO_DEFAULTED);
    let out = copy_json_to_avro(&bootstrap, &from, &to, &group, &defaulted).await;
    assert!(
        out.status.success(),
        "resumed copy: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    wait_until_stable(&bootstrap, &to).await;
    let mut expected = docs.clone();
    expected[5] = json!({"id": 5, "item": "none"});
    let committed = consume(
        &bootstrap,
        &to,
        &["--value-format", "avro"],
        "read_committed",
    )
    .await;
    assert_eq!(
        committed, expected,
        "every input record's output exactly once"
    );
}

/// Confluent's Python serializers (the oracle), installed on first use.
fn oracle_python() -> PathBuf {
    kafka_testcontainers::confluent_python().unwrap_or_else(|e| {
        panic!("Confluent's Python serializers (the byte-exactness oracle): {e}")
    })
}

/// Produces `docs` with Confluent's Python serializer of `format`.
async fn produce_with_confluent(
    bootstrap: &str,
    topic: &str,
    format: &str,
    schema: &std::path::Path,
    docs: &[Value],
) {
    let url = registry().await;
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/oracle/produce_confluent.py"
    );
    let mut child = tokio::process::Command::new(oracle_python())
        .args([
            script,
            bootstrap,
            url.as_str(),
            topic,
            format,
            schema.to_str().unwrap(),
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the oracle");
    let mut stdin = child.stdin.take().unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut stdin, &lines(docs))
        .await
        .unwrap();
    drop(stdin);
    let out = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
        .await
        .expect("the oracle finishes within 120 s")
        .unwrap();
    assert!(
        out.status.success(),
        "the oracle failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Invariant: records written by Confluent's own Python serializers (Avro
/// and JSON Schema, through the same registry) decode with
/// `kafka-eos consume` to the documents they were given.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consume_decodes_what_confluents_serializers_wrote() {
    let kafka = kafka().await;
    let bootstrap = kafka.bootstrap();
    let dir = tempfile::tempdir().unwrap();
    let avsc = schema_file(&dir, "order.avsc", ORDER_AVSC);
    let topic = unique_name("sr-oracle-avro");
    kafka.create_topic(&topic, 1, 1).await.unwrap();
    let docs = orders(10);
    produce_with_confluent(&bootstrap, &topic, "avro", &avsc, &docs).await;
    let back = consume(
        &bootstrap,
        &topic,
        &["--value-format", "avro"],
        "read_committed",
    )
    .await;
    assert_eq!(back, docs, "Avro");

    let schema = schema_file(&dir, "order.json", ORDER_JSON_SCHEMA);
    let topic = unique_name("sr-oracle-json");
    kafka.create_topic(&topic, 1, 1).await.unwrap();
    let docs: Vec<Value> = (0..10)
        .map(|i| json!({"id": i, "item": format!("i{i}")}))
        .collect();
    produce_with_confluent(&bootstrap, &topic, "json", &schema, &docs).await;
    let back = consume(
        &bootstrap,
        &topic,
        &["--value-format", "json"],
        "read_committed",
    )
    .await;
    assert_eq!(back, docs, "JSON Schema");
}

/// Invariant: the registry's credentials are `-X` settings with Confluent's
/// names in the one settings bag: accepted beside the clients' keys (the
/// test registry takes any), never printed in the logs, and a malformed one
/// refused before anything is sent (exit 2, naming the key).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registry_credentials_are_x_settings() {
    let kafka = kafka().await;
    let bootstrap = kafka.bootstrap();
    let url = registry().await;
    let topic = unique_name("sr-credentials");
    kafka.create_topic(&topic, 1, 1).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let avsc = schema_file(&dir, "order.avsc", ORDER_AVSC);
    let docs = orders(2);
    let x_url = format!("schema.registry.url={url}");
    let produce = |info: &'static str| {
        vec![
            "-vv".to_string(),
            "produce".into(),
            "--topic".into(),
            topic.clone(),
            "--value-format".into(),
            "avro".into(),
            "--schema-file".into(),
            avsc.to_str().unwrap().into(),
            "-X".into(),
            x_url.clone(),
            "-X".into(),
            "basic.auth.credentials.source=USER_INFO".into(),
            "-X".into(),
            format!("basic.auth.user.info={info}"),
        ]
    };
    let good = produce("fred:hunter2");
    let good: Vec<&str> = good.iter().map(String::as_str).collect();
    let out = run(&bootstrap, &good, Some(&lines(&docs))).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        !stderr.contains("hunter2"),
        "a secret in the logs:\n{stderr}"
    );
    let back = consume(
        &bootstrap,
        &topic,
        &["--value-format", "avro"],
        "read_committed",
    )
    .await;
    assert_eq!(back, docs);

    let bad = produce("no-colon");
    let bad: Vec<&str> = bad.iter().map(String::as_str).collect();
    let out = run(&bootstrap, &bad, Some(&lines(&docs))).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("basic.auth.user.info"), "{stderr}");
    assert!(
        !stderr.contains("no-colon"),
        "the bad secret is not printed:\n{stderr}"
    );
}

/// Invariant: `consume --group` with a registry format never commits past
/// a record it did not report: under --stop-on-error it commits the
/// records printed before the undecodable one and not that one, so the
/// group's next member begins at it, names it on stderr, and goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_consume_commits_nothing_past_an_unreported_record() {
    let kafka = kafka().await;
    let bootstrap = kafka.bootstrap();
    let url = registry().await;
    let topic = unique_name("sr-group");
    let group = unique_name("sr-group-g");
    kafka.create_topic(&topic, 1, 1).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let avsc = schema_file(&dir, "order.avsc", ORDER_AVSC);
    let docs = orders(2);
    let avro = [
        "produce",
        "--topic",
        &topic,
        "--value-format",
        "avro",
        "--schema-file",
        avsc.to_str().unwrap(),
        "--schema-registry",
        &url,
    ];
    ok(&bootstrap, &avro, Some(&lines(&docs[..1]))).await;
    ok(
        &bootstrap,
        &["produce", "--topic", &topic],
        Some(b"plain text\n"),
    )
    .await;
    ok(&bootstrap, &avro, Some(&lines(&docs[1..]))).await;

    let consume = |more: &[&str]| {
        let mut args = vec![
            "consume",
            "--topic",
            topic.as_str(),
            "--group",
            group.as_str(),
            "--value-format",
            "avro",
            "--schema-registry",
            url.as_str(),
        ];
        args.extend_from_slice(more);
        args.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let first = consume(&["--stop-on-error"]);
    let first: Vec<&str> = first.iter().map(String::as_str).collect();
    let out = run(&bootstrap, &first, None).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr:\n{stderr}");
    assert!(
        stderr.contains(&format!("{topic}-0@1 does not decode")),
        "{stderr}"
    );
    assert_eq!(
        parse_lines(&String::from_utf8_lossy(&out.stdout)),
        docs[..1]
    );
    let cluster = Cluster::connect(ClusterConfig::new(&bootstrap))
        .await
        .unwrap();
    let committed = Reader::new(cluster, ReaderConfig::default())
        .committed_offsets(&group, &topic, &[0])
        .await
        .unwrap();
    assert_eq!(
        committed.get(&0).copied().flatten(),
        Some(1),
        "record 0 committed, record 1 not"
    );

    let second = consume(&["--count", "2"]);
    let second: Vec<&str> = second.iter().map(String::as_str).collect();
    let out = run(&bootstrap, &second, None).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr:\n{stderr}");
    assert!(
        stderr.contains(&format!("{topic}-0@1 does not decode")),
        "{stderr}"
    );
    assert_eq!(
        parse_lines(&String::from_utf8_lossy(&out.stdout)),
        docs[1..]
    );
}
