//! `consume` options against the harness's shared Kafka 4.4 cluster (one
//! node), one test per option, each on topics of its own:
//!
//! - `-e` stops at the end offsets read at start: the last stable offset
//!   under read_committed (an open transaction's records are not waited
//!   for), the high watermark under read_uncommitted (`--isolation` is an
//!   alias of `--isolation-level`).
//! - Start offsets: `-o N`, `-o -N` (from the end, clamped to the log
//!   start), `-o end`, `-o s@UNIX_MS` (first record at or after), and
//!   `--count`.
//! - Output: a kcat-style template shows topic, partition, offset,
//!   timestamp, key, headers and value; `--format length-delimited` gives
//!   back the bytes `produce --format length-delimited` read, with and
//!   without a key separator, null values included.

use kafka_producer::{Producer, ProducerConfig, ProducerRecord, TransactionalProducer};
use kafka_testcontainers::KafkaCluster;
use kafka_testcontainers::{SharedKafka, recent_timestamp, unique_name, unique_topic};
use std::process::{Output, Stdio};
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

/// The shared Kafka 4.4 cluster (other tests use it too: names are unique).
async fn kafka() -> &'static KafkaCluster {
    SharedKafka::Kafka44Tv2
        .cluster()
        .await
        .expect("shared Kafka 4.4")
}

/// A new topic of `partitions` partitions named after `prefix`.
async fn topic(kafka: &KafkaCluster, prefix: &str, partitions: i32) -> String {
    unique_topic(kafka, prefix, partitions)
        .await
        .expect("create topic")
}

/// An idempotent producer.
async fn producer(bootstrap: &str) -> Producer {
    Producer::connect(ProducerConfig::from_properties([("bootstrap.servers", bootstrap)]).unwrap())
        .await
        .unwrap()
}

fn bin() -> String {
    std::env::var("KAFKA_EOS_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_kafka-eos").into())
}

/// Runs the CLI with `stdin` as input, bounded by 60 s; panics unless it exits 0.
async fn ok(bootstrap: &str, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut c = Command::new(bin());
    c.arg("--bootstrap")
        .arg(bootstrap)
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = c.spawn().expect("spawn kafka-eos");
    if let Some(data) = stdin {
        let mut w = child.stdin.take().unwrap();
        w.write_all(data).await.unwrap();
        drop(w);
    }
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("kafka-eos {args:?} did not finish within 60 s"))
        .unwrap();
    assert!(
        out.status.success(),
        "kafka-eos {args:?} failed: {:?}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn lines(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(String::from)
        .collect()
}

fn range(prefix: &str, r: std::ops::Range<usize>) -> Vec<String> {
    r.map(|i| format!("{prefix}{i}")).collect()
}

/// One length-delimited frame (`None`: a null value).
fn frame(out: &mut Vec<u8>, b: Option<&[u8]>) {
    match b {
        None => out.extend_from_slice(&(-1i32).to_be_bytes()),
        Some(b) => {
            out.extend_from_slice(&(b.len() as i32).to_be_bytes());
            out.extend_from_slice(b);
        }
    }
}

/// `-e` stops at the end offsets read at start: under read_committed (the
/// default) the last stable offset, so a partition's open transaction is
/// not waited for and its records are not shown; under read_uncommitted
/// (`--isolation`) the high watermark, so they are; once aborted, they stay
/// invisible to read_committed (`--isolation-level`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_at_end_stops_at_the_last_stable_offset_or_the_high_watermark() {
    let kafka = kafka().await;
    let b = kafka.bootstrap();
    let b = b.as_str();
    let ends = topic(kafka, "ends", 2).await;
    let input: String = (0..100).map(|i| format!("c{i}\n")).collect();
    ok(
        b,
        &["produce", "--topic", &ends, "--partition", "0"],
        Some(input.as_bytes()),
    )
    .await;
    let transactional_id = unique_name("open-txn");
    let config = ProducerConfig::from_properties([
        ("bootstrap.servers", b),
        ("transactional.id", transactional_id.as_str()),
    ])
    .unwrap();
    let txn = TransactionalProducer::connect(config)
        .await
        .expect("txn producer");
    txn.init_transactions().await.expect("init transactions");
    txn.begin_transaction().unwrap();
    for i in 0..10 {
        let r = ProducerRecord::new(ends.as_str())
            .partition(1)
            .value(format!("open{i}"));
        txn.send(r).await.expect("open transaction record");
    }
    txn.flush().await;
    let committed = ok(b, &["consume", "-t", &ends, "-e"], None).await;
    let mut got = lines(&committed);
    got.sort();
    let mut want = range("c", 0..100);
    want.sort();
    assert_eq!(got, want, "read_committed -e stops at the LSO");
    let uncommitted = ok(
        b,
        &[
            "consume",
            "-t",
            &ends,
            "--exit-at-end",
            "--isolation",
            "read_uncommitted",
        ],
        None,
    )
    .await;
    let mut got = lines(&uncommitted);
    got.sort();
    want.extend(range("open", 0..10));
    want.sort();
    assert_eq!(got, want, "read_uncommitted -e stops at the HW");
    txn.abort_transaction().await.expect("abort");
    let after_abort = ok(
        b,
        &[
            "consume",
            "-t",
            &ends,
            "-e",
            "--isolation-level",
            "read_committed",
            "-p",
            "1",
        ],
        None,
    )
    .await;
    assert!(
        lines(&after_abort).is_empty(),
        "aborted records stay invisible"
    );
    txn.close(Duration::from_secs(10)).await.unwrap();
}

/// Start offsets over 100 records with timestamps 1e12 + 1000 * i: `-o -10`
/// reads the last 10, `-o -1000` is clamped to the log start, `-o 95` reads
/// from offset 95, `-o end` reads nothing, `-o s@MS` starts at the first
/// record at or after MS; `--from 10 -c 5` reads 5 records without `-e`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_offsets_and_count_select_the_records() {
    let kafka = kafka().await;
    let b = kafka.bootstrap();
    let b = b.as_str();
    let offsets = topic(kafka, "offsets", 1).await;
    let producer = producer(b).await;
    let base: i64 = recent_timestamp();
    let sends: Vec<_> = (0..100)
        .map(|i| {
            producer.send(
                ProducerRecord::new(offsets.as_str())
                    .value(format!("o{i}"))
                    .timestamp(base + 1000 * i as i64),
            )
        })
        .collect();
    for s in sends {
        s.await.expect("delivered");
    }
    producer.close(Duration::from_secs(10)).await.unwrap();
    let t = offsets.as_str();
    let read = |from: String| async move {
        lines(&ok(b, &["consume", "-t", t, "-e", "-o", &from], None).await)
    };
    assert_eq!(read("-10".into()).await, range("o", 90..100), "-o -N");
    assert_eq!(
        read("-1000".into()).await,
        range("o", 0..100),
        "-o -N clamped"
    );
    assert_eq!(read("95".into()).await, range("o", 95..100), "-o N");
    assert_eq!(read("end".into()).await, Vec::<String>::new(), "-o end");
    let at = format!("s@{}", base + 30_500);
    assert_eq!(read(at).await, range("o", 31..100), "-o s@ms");
    let count = ok(b, &["consume", "-t", t, "--from", "10", "-c", "5"], None).await;
    assert_eq!(lines(&count), range("o", 10..15), "--count without -e");
}

/// A kcat-style template prints every field of every record: topic,
/// partition, offset, timestamp, key and key length (-1 for none), headers
/// (a null header without `=`), value and value length.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_template_prints_every_field_of_every_record() {
    let kafka = kafka().await;
    let b = kafka.bootstrap();
    let b = b.as_str();
    let fmt = topic(kafka, "fmt", 1).await;
    let producer = producer(b).await;
    let ts: i64 = recent_timestamp() + 123;
    let sends = vec![
        producer.send(
            ProducerRecord::new(fmt.as_str())
                .key("k1")
                .value("v1")
                .timestamp(ts)
                .header("h", Some("x"))
                .header("n", None::<&str>),
        ),
        producer.send(
            ProducerRecord::new(fmt.as_str())
                .value("v2")
                .timestamp(ts + 1),
        ),
    ];
    for s in sends {
        s.await.expect("delivered");
    }
    producer.close(Duration::from_secs(10)).await.unwrap();
    let out = ok(
        b,
        &[
            "consume",
            "-t",
            &fmt,
            "-e",
            "--format",
            r"%t/%p@%o %T [%k|%K] {%h} %s (%S)\n",
        ],
        None,
    )
    .await;
    assert_eq!(
        lines(&out),
        vec![
            format!("{fmt}/0@0 {ts} [k1|2] {{h=x,n}} v1 (2)"),
            format!("{fmt}/0@1 {} [|-1] {{}} v2 (2)", ts + 1),
        ]
    );
}

/// `consume --format length-delimited` gives back, byte for byte, the
/// frames `produce --format length-delimited` read: a value with a newline,
/// a null value, non-UTF-8 bytes and an empty value.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn length_delimited_values_round_trip_byte_for_byte() {
    let kafka = kafka().await;
    let b = kafka.bootstrap();
    let b = b.as_str();
    let bin_topic = topic(kafka, "bin", 1).await;
    let mut input = Vec::new();
    for v in [
        Some(&b"a\nb"[..]),
        None,
        Some(&[0xff, 0x00][..]),
        Some(&b""[..]),
    ] {
        frame(&mut input, v);
    }
    ok(
        b,
        &["produce", "-t", &bin_topic, "--format", "length-delimited"],
        Some(&input),
    )
    .await;
    let out = ok(
        b,
        &[
            "consume",
            "-t",
            &bin_topic,
            "-e",
            "--format",
            "length-delimited",
        ],
        None,
    )
    .await;
    assert_eq!(out.stdout, input, "values and a null value, byte for byte");
}

/// With `--key-separator ::`, length-delimited KEY::VALUE frames (an empty
/// key, an empty value, a value holding the separator) come back byte for
/// byte.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn length_delimited_key_value_frames_round_trip_byte_for_byte() {
    let kafka = kafka().await;
    let b = kafka.bootstrap();
    let b = b.as_str();
    let bin_kv = topic(kafka, "bin-kv", 1).await;
    let mut input = Vec::new();
    for kv in [&b"k1::v1"[..], b"::empty key", b"k3::", b"k4::x::y"] {
        frame(&mut input, Some(kv));
    }
    let kv_args = ["--format", "length-delimited", "--key-separator", "::"];
    let mut args = vec!["produce", "-t", &bin_kv];
    args.extend(kv_args);
    ok(b, &args, Some(&input)).await;
    let mut args = vec!["consume", "-t", &bin_kv, "-e"];
    args.extend(kv_args);
    let out = ok(b, &args, None).await;
    assert_eq!(out.stdout, input, "KEY::VALUE frames, byte for byte");
}
