//! SASL over plaintext (`security.protocol=SASL_PLAINTEXT`) against a real
//! Kafka 4.4 broker: with `-vv` (debug logs of the CLI and the client, SASL
//! authentication included) a SCRAM-SHA-256 produce and a PLAIN consume
//! round-trip every record and print the password nowhere; a wrong
//! password exits 4 without echoing it.

use kafka_testcontainers::{KafkaCluster, SaslConfig};
use std::process::{Output, Stdio};
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

fn bin() -> String {
    std::env::var("KAFKA_EOS_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_kafka-eos").into())
}

/// `kafka-eos --bootstrap B -X k=v... <rest>` with `stdin`, bounded by 60 s.
async fn run(
    bootstrap: &str,
    props: &[(&str, &str)],
    rest: &[&str],
    stdin: Option<&[u8]>,
) -> Output {
    let mut c = Command::new(bin());
    c.arg("--bootstrap").arg(bootstrap);
    for (k, v) in props {
        c.arg("-X").arg(format!("{k}={v}"));
    }
    c.args(rest)
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
        .unwrap_or_else(|_| panic!("kafka-eos {rest:?} did not finish within 60 s"))
        .unwrap()
}

fn assert_ok(what: &str, out: &Output) {
    assert!(
        out.status.success(),
        "{what} failed: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

fn assert_never_printed(what: &str, out: &Output, secret: &str) {
    for stream in [&out.stdout, &out.stderr] {
        let text = String::from_utf8_lossy(stream);
        assert!(
            !text.contains(secret),
            "{what} printed the password:\n{text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sasl_plaintext_debug_logs_never_show_the_password() {
    let password = "sasl-pw-41b8e2-secret";
    let kafka = KafkaCluster::builder()
        .sasl(SaslConfig::new().user("cli-user", password))
        .start()
        .await
        .expect("start a SASL_PLAINTEXT cluster");
    kafka.create_topic("sasl-rt", 1, 1).await.unwrap();
    let b = kafka.bootstrap();
    let jaas = format!(
        "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"cli-user\" password=\"{password}\";"
    );
    let scram = [
        ("security.protocol", "SASL_PLAINTEXT"),
        ("sasl.mechanism", "SCRAM-SHA-256"),
        ("sasl.jaas.config", jaas.as_str()),
    ];
    let input: String = (0..50).map(|i| format!("s{i}\n")).collect();
    let produced = run(
        &b,
        &scram,
        &["-vv", "produce", "-t", "sasl-rt"],
        Some(input.as_bytes()),
    )
    .await;
    assert_ok("produce", &produced);

    let plain = [
        ("security.protocol", "SASL_PLAINTEXT"),
        ("sasl.mechanism", "PLAIN"),
        ("sasl.username", "cli-user"),
        ("sasl.password", password),
    ];
    let consumed = run(&b, &plain, &["-vv", "consume", "-t", "sasl-rt", "-e"], None).await;
    assert_ok("consume", &consumed);
    assert_eq!(String::from_utf8_lossy(&consumed.stdout), input);

    for (what, out) in [("produce", &produced), ("consume", &consumed)] {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("DEBUG") && stderr.contains("SASL authenticated"),
            "{what}: -vv logs SASL at debug level:\n{stderr}"
        );
        assert_never_printed(what, out, password);
    }

    // A wrong password: authentication failure, exit 4, not echoed.
    let wrong = "wrong-pw-c3a9f0";
    let bad = [
        ("security.protocol", "SASL_PLAINTEXT"),
        ("sasl.mechanism", "SCRAM-SHA-512"),
        ("sasl.username", "cli-user"),
        ("sasl.password", wrong),
    ];
    let out = run(&b, &bad, &["-vv", "topic", "list"], None).await;
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_never_printed("wrong password", &out, wrong);
}
