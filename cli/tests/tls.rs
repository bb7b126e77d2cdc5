//! TLS in the CLI's default build (cargo feature `tls`), against real Kafka
//! 4.4 brokers whose client listener is `SSL` or `SASL_SSL` with a
//! certificate from the harness's CA, configured through Java's
//! `security.protocol`, `ssl.*` and `sasl.*` keys given with `-X`. Runs the
//! built binary or `$KAFKA_EOS_BIN` (the static musl build in
//! cli/ci-musl.sh).
#![cfg(feature = "tls")]

use kafka_testcontainers::{KafkaCluster, SaslConfig};
use std::process::{Output, Stdio};
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

fn bin() -> String {
    std::env::var("KAFKA_EOS_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_kafka-eos").into())
}

/// Runs `kafka-eos --bootstrap B <args>` with `stdin` as input, bounded by 60 s.
async fn run(bootstrap: &str, args: &[String], stdin: Option<&[u8]>) -> Output {
    let mut c = Command::new(bin());
    c.arg("--bootstrap")
        .arg(bootstrap)
        .args(args)
        .env_remove("RUST_LOG")
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
    tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("kafka-eos {args:?} did not finish within 60 s"))
        .unwrap()
}

async fn ok(bootstrap: &str, args: &[String], stdin: Option<&[u8]>) -> Output {
    let out = run(bootstrap, args, stdin).await;
    assert!(
        out.status.success(),
        "kafka-eos {args:?} failed: {:?}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `-X k=v` for each setting, then `rest`.
fn args(props: &[(&str, String)], rest: &[&str]) -> Vec<String> {
    let mut v = Vec::new();
    for (k, val) in props {
        v.push("-X".to_string());
        v.push(format!("{k}={val}"));
    }
    v.extend(rest.iter().map(|s| s.to_string()));
    v
}

fn numbered(prefix: &str, n: usize) -> String {
    (0..n).map(|i| format!("{prefix}-{i}\n")).collect()
}

fn sorted_lines(b: &[u8]) -> Vec<String> {
    let mut v: Vec<String> = String::from_utf8_lossy(b)
        .lines()
        .map(String::from)
        .collect();
    v.sort();
    v
}

/// Invariant: over `security.protocol=SSL` the CLI writes and reads back
/// every record, trusting the broker through a PEM trust store given as a
/// file (`ssl.truststore.location`) or inline (`ssl.truststore.certificates`),
/// with host name verification; a trust store that did not sign the broker
/// fails the command without a hang.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ssl_produce_and_consume_round_trip() {
    let kafka = KafkaCluster::builder()
        .tls(true)
        .start()
        .await
        .expect("start a TLS cluster");
    kafka.create_topic("tls-rt", 2, 1).await.unwrap();
    let b = kafka.bootstrap();
    let ca_path = kafka.ca_pem_path().unwrap().display().to_string();
    let ca_inline = String::from_utf8(kafka.ca_pem().unwrap().to_vec()).unwrap();

    let by_file = [
        ("security.protocol", "SSL".to_string()),
        ("ssl.truststore.type", "PEM".to_string()),
        ("ssl.truststore.location", ca_path),
        ("ssl.endpoint.identification.algorithm", "https".to_string()),
    ];
    let input = numbered("tls", 300);
    ok(
        &b,
        &args(&by_file, &["produce", "--topic", "tls-rt"]),
        Some(input.as_bytes()),
    )
    .await;

    let inline = [
        ("security.protocol", "ssl".to_string()),
        ("ssl.truststore.certificates", ca_inline),
    ];
    let out = ok(
        &b,
        &args(&inline, &["consume", "--topic", "tls-rt", "--exit-at-end"]),
        None,
    )
    .await;
    assert_eq!(sorted_lines(&out.stdout), sorted_lines(input.as_bytes()));

    // A CA that did not sign the broker: refused, exit 3 (no broker usable).
    let dir = tempfile::tempdir().unwrap();
    let other = kafka_testcontainers::tls::generate(dir.path()).unwrap();
    let untrusted = [
        ("security.protocol", "SSL".to_string()),
        (
            "ssl.truststore.location",
            other.ca_pem_path.display().to_string(),
        ),
    ];
    let out = run(
        &b,
        &args(
            &untrusted,
            &["consume", "--topic", "tls-rt", "--exit-at-end"],
        ),
        None,
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && out.stdout.is_empty(), "{out:?}");
    assert!(stderr.contains("TLS"), "{stderr}");
}

/// Invariant: over `security.protocol=SASL_SSL` the CLI writes (SCRAM-SHA-512
/// from `sasl.jaas.config`) and reads back (PLAIN from `sasl.username` /
/// `sasl.password`) every record, and with `-vv` (debug logs of the CLI
/// and the client, SASL authentication included) the password appears
/// nowhere in the output.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sasl_ssl_round_trip_never_logs_the_password() {
    let password = "cli-Pa55-9d41c7-secret";
    let kafka = KafkaCluster::builder()
        .tls(true)
        .sasl(SaslConfig::new().user("cli-user", password))
        .start()
        .await
        .expect("start a SASL_SSL cluster");
    kafka.create_topic("sasl-ssl-rt", 2, 1).await.unwrap();
    let b = kafka.bootstrap();
    let ca_path = kafka.ca_pem_path().unwrap().display().to_string();

    let scram = [
        ("security.protocol", "SASL_SSL".to_string()),
        ("ssl.truststore.location", ca_path.clone()),
        ("sasl.mechanism", "SCRAM-SHA-512".to_string()),
        (
            "sasl.jaas.config",
            format!(
                "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"cli-user\" password=\"{password}\";"
            ),
        ),
    ];
    let input = numbered("sasl", 200);
    let produced = ok(
        &b,
        &args(&scram, &["-vv", "produce", "--topic", "sasl-ssl-rt"]),
        Some(input.as_bytes()),
    )
    .await;

    let plain = [
        ("security.protocol", "SASL_SSL".to_string()),
        ("ssl.truststore.location", ca_path),
        ("sasl.mechanism", "PLAIN".to_string()),
        ("sasl.username", "cli-user".to_string()),
        ("sasl.password", password.to_string()),
    ];
    let consumed = ok(
        &b,
        &args(
            &plain,
            &["-vv", "consume", "--topic", "sasl-ssl-rt", "--exit-at-end"],
        ),
        None,
    )
    .await;
    assert_eq!(
        sorted_lines(&consumed.stdout),
        sorted_lines(input.as_bytes())
    );

    for (what, out) in [("produce", &produced), ("consume", &consumed)] {
        let stderr = String::from_utf8_lossy(&out.stderr);
        // -vv did log at debug level, SASL authentication included.
        assert!(
            stderr.contains("DEBUG") && stderr.contains("SASL authenticated"),
            "{what}: {stderr}"
        );
        for stream in [&out.stdout, &out.stderr] {
            let text = String::from_utf8_lossy(stream);
            assert!(
                !text.contains(password),
                "{what} printed the password:\n{text}"
            );
        }
    }
}
