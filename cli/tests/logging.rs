//! Log output on stderr without a broker (an unreachable bootstrap): warnings
//! and errors only by default, `-v` info, `-vv` debug, `RUST_LOG` winning over
//! `-v` when set, and secret settings redacted in the debug output.

use std::process::{Command, Output, Stdio};

fn bin() -> String {
    std::env::var("KAFKA_EOS_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_kafka-eos").into())
}

/// A TCP port nothing listens on (bound, then released).
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// `kafka-eos <args> txn list` against a closed port, with `RUST_LOG` set
/// to `rust_log` (or removed); returns stderr after checking exit 3.
fn stderr_of(args: &[&str], rust_log: Option<&str>) -> String {
    let mut c = Command::new(bin());
    c.arg("--bootstrap")
        .arg(format!("127.0.0.1:{}", closed_port()))
        .args(args)
        .args(["txn", "list"])
        .env_remove("KAFKA_EOS_BOOTSTRAP")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null());
    if let Some(v) = rust_log {
        c.env("RUST_LOG", v);
    }
    let out: Output = c.output().expect("run kafka-eos");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(3), "{args:?}: {stderr}");
    assert!(stderr.contains("kafka-eos: error:"), "{stderr}");
    stderr
}

/// The CLI's info event before connecting, and its debug event listing the settings.
const INFO: &str = "connecting";
const DEBUG: &str = "client settings";

#[test]
fn default_is_warnings_and_errors_only() {
    let s = stderr_of(&[], None);
    assert!(!s.contains(INFO) && !s.contains(DEBUG), "{s}");
    assert!(!s.contains(" INFO ") && !s.contains(" DEBUG "), "{s}");
}

#[test]
fn v_adds_info_and_vv_adds_debug() {
    let s = stderr_of(&["-v"], None);
    assert!(s.contains(INFO) && !s.contains(DEBUG), "{s}");
    let s = stderr_of(&["-vv"], None);
    assert!(s.contains(INFO) && s.contains(DEBUG), "{s}");
}

#[test]
fn rust_log_wins_over_v() {
    let s = stderr_of(&["-vv"], Some("error"));
    assert!(!s.contains(INFO) && !s.contains(DEBUG), "{s}");
    let s = stderr_of(&[], Some("kafka_eos=debug"));
    assert!(s.contains(INFO) && s.contains(DEBUG), "{s}");
    // An empty RUST_LOG counts as unset.
    let s = stderr_of(&["-v"], Some(""));
    assert!(s.contains(INFO) && !s.contains(DEBUG), "{s}");
}

#[test]
fn debug_settings_redact_secrets() {
    let secret = "pw-7f3e9a-never-logged";
    let jaas = format!(
        "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"alice\" password=\"{secret}\";"
    );
    let s = stderr_of(
        &[
            "-vv",
            "-X",
            "security.protocol=SASL_PLAINTEXT",
            "-X",
            "sasl.mechanism=SCRAM-SHA-512",
            "-X",
            &format!("sasl.jaas.config={jaas}"),
        ],
        None,
    );
    assert!(s.contains("sasl.jaas.config=<redacted>"), "{s}");
    assert!(!s.contains(secret), "{s}");
    let s = stderr_of(
        &[
            "-vv",
            "-X",
            "security.protocol=SASL_PLAINTEXT",
            "-X",
            "sasl.username=alice",
            "-X",
            &format!("sasl.password={secret}"),
        ],
        None,
    );
    assert!(
        s.contains("sasl.password=<redacted>") && s.contains("sasl.username=alice"),
        "{s}"
    );
    assert!(!s.contains(secret), "{s}");
}
