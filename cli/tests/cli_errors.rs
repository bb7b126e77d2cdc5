//! CLI behaviour that needs no broker: help with examples, bad settings
//! (exit 2 naming the key) and an unreachable broker (exit 3, quickly).

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn bin() -> String {
    std::env::var("KAFKA_EOS_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_kafka-eos").into())
}

fn run(args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .env_remove("KAFKA_EOS_BOOTSTRAP")
        .env_remove("KAFKA_EOS_AMQP")
        .stdin(Stdio::null())
        .output()
        .expect("run kafka-eos")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A TCP port nothing listens on (bound, then released).
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[test]
fn help_of_every_subcommand_has_examples() {
    for args in [
        vec!["--help"],
        vec!["produce", "--help"],
        vec!["consume", "--help"],
        vec!["topic", "--help"],
        vec!["topic", "create", "--help"],
        vec!["topic", "list", "--help"],
        vec!["topic", "describe", "--help"],
        vec!["topic", "alter", "--help"],
        vec!["topic", "delete", "--help"],
        vec!["txn", "--help"],
        vec!["txn", "list", "--help"],
        vec!["txn", "describe", "--help"],
        vec!["txn", "producers", "--help"],
        vec!["txn", "abort-lingering", "--help"],
        vec!["txn", "commit-prepared", "--help"],
        vec!["txn", "abort-prepared", "--help"],
        vec!["demo", "--help"],
        vec!["bridge", "--help"],
        vec!["bench", "--help"],
    ] {
        let out = run(&args);
        let stdout = text(&out.stdout);
        assert!(out.status.success(), "{args:?}: {out:?}");
        assert!(stdout.contains("Examples:"), "{args:?}:\n{stdout}");
        assert!(stdout.contains("kafka-eos "), "{args:?}:\n{stdout}");
    }
    let top = text(&run(&["--help"]).stdout);
    assert!(
        top.contains("Exit codes:") && top.contains("-X <KEY=VALUE>"),
        "{top}"
    );
}

#[test]
fn unknown_setting_exits_2_naming_the_key() {
    let port = closed_port().to_string();
    let bootstrap = format!("127.0.0.1:{port}");
    for cmd in [
        vec!["consume", "--topic", "t"],
        vec!["produce", "--topic", "t"],
        vec!["txn", "list"],
        vec!["demo"],
        vec!["bench"],
        vec![
            "bridge",
            "--amqp",
            "amqp://localhost",
            "--queue",
            "q",
            "--topic",
            "t",
            "--checkpoint-dir",
            "cp",
        ],
    ] {
        let mut args = vec!["--bootstrap", &bootstrap, "-X", "bogus.key=1"];
        args.extend(cmd.iter().copied());
        let out = run(&args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("bogus.key"), "{err}");
    }
    // A bad value names its key too.
    let out = run(&[
        "--bootstrap",
        &bootstrap,
        "-X",
        "linger.ms=soon",
        "txn",
        "list",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("linger.ms"));
    // Malformed -X, missing --bootstrap, bad flag values: usage errors.
    assert_eq!(
        run(&["-X", "novalue", "txn", "list"]).status.code(),
        Some(2)
    );
    let out = run(&["txn", "list"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--bootstrap"));
    let out = run(&[
        "--bootstrap",
        &bootstrap,
        "consume",
        "--topic",
        "t",
        "--isolation",
        "dirty",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let out = run(&[
        "--bootstrap",
        &bootstrap,
        "produce",
        "--topic",
        "t",
        "--partitioner",
        "fixed:x",
    ]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn unreachable_broker_exits_3_quickly() {
    let bootstrap = format!("127.0.0.1:{}", closed_port());
    let cp = std::env::temp_dir();
    let cp = cp.to_str().unwrap();
    for cmd in [
        vec!["consume", "--topic", "t", "--timeout-ms", "1000"],
        vec!["produce", "--topic", "t"],
        vec!["txn", "list"],
        vec!["demo"],
        vec!["bench", "--records", "10"],
        vec![
            "bridge",
            "--amqp",
            "amqp://localhost",
            "--queue",
            "q",
            "--topic",
            "t",
            "--checkpoint-dir",
            cp,
        ],
    ] {
        let started = Instant::now();
        let mut args = vec!["--bootstrap", bootstrap.as_str()];
        args.extend(cmd.iter().copied());
        let out = run(&args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
        assert!(
            err.contains(&bootstrap) && err.contains("--bootstrap"),
            "{err}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "took {:?}",
            started.elapsed()
        );
    }
    // The environment variable works as --bootstrap.
    let out = Command::new(bin())
        .args(["txn", "list"])
        .env("KAFKA_EOS_BOOTSTRAP", &bootstrap)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
}

/// Bad flags of `demo`, `bench` and `bridge` are usage errors (exit 2),
/// found before anything connects or starts.
#[test]
fn demo_bridge_bench_flags_exit_2() {
    let bootstrap = format!("127.0.0.1:{}", closed_port());
    let b = bootstrap.as_str();
    let bridge = |extra: &[&'static str]| {
        let mut v = vec![
            "--bootstrap",
            b,
            "bridge",
            "--queue",
            "q",
            "--topic",
            "t",
            "--checkpoint-dir",
            "cp",
        ];
        v.extend_from_slice(extra);
        v
    };
    for (args, needle) in [
        (
            vec!["--bootstrap", b, "demo", "--records", "0"],
            "--records",
        ),
        (vec!["--bootstrap", b, "demo", "--kills", "many"], "--kills"),
        (
            vec!["--bootstrap", b, "bench", "--records", "0"],
            "--records",
        ),
        (bridge(&["--amqp", "http://rabbit"]), "amqp://"),
        (
            bridge(&["--amqp", "amqp://h", "--prefetch", "0"]),
            "--prefetch",
        ),
        (
            bridge(&["--amqp", "amqp://h", "--semantic", "at-least-once"]),
            "--semantic",
        ),
        (bridge(&[]), "--amqp"),
    ] {
        let out = run(&args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    // Without --bootstrap and without the local Kafka built in, `demo`
    // says what to do instead.
    if !cfg!(feature = "local-kafka") {
        let out = run(&["demo"]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("--bootstrap"), "{err}");
    }
}

#[test]
fn bad_handle_is_a_usage_error() {
    let dir = std::env::temp_dir().join(format!("kafka-eos-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("handle");
    std::fs::write(&f, b"not a handle").unwrap();
    // Checked before connecting (the port is closed).
    let bootstrap = format!("127.0.0.1:{}", closed_port());
    let out = run(&[
        "--bootstrap",
        &bootstrap,
        "txn",
        "commit-prepared",
        "--handle",
        f.to_str().unwrap(),
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("not a prepared-transaction handle"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Illegal topic names are usage errors (exit 2) that say why, before any
/// request: nothing listens on the bootstrap port, so a request would have
/// failed with exit 3 instead.
#[test]
fn illegal_topic_names_exit_2_before_any_request() {
    let bootstrap = format!("127.0.0.1:{}", closed_port());
    let long = "t".repeat(250);
    for (topic, why) in [
        ("bad topic!", "may only contain"),
        (long.as_str(), "at most 249"),
        ("..", "cannot be"),
    ] {
        for cmd in ["produce", "consume"] {
            let out = run(&[cmd, "--bootstrap", &bootstrap, "--topic", topic]);
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{cmd} {topic:?}: {err}");
            assert!(
                err.contains("invalid topic name") && err.contains(why),
                "{cmd} {topic:?}: {err}"
            );
        }
    }
}
