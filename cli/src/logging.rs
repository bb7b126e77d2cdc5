//! Log output: `tracing` events of the CLI and the client crates on stderr.
//!
//! Warnings and errors by default, `-v` adds info, `-vv` debug and `-vvv`
//! trace; `RUST_LOG` (an `EnvFilter` directive such as
//! `kafka_producer=debug,warn`), when set and not empty, wins over `-v`.
//! Secrets are never logged: settings are logged through [`redact`].

use tracing_subscriber::EnvFilter;

/// The level that `-v` repeated `verbose` times selects.
pub fn level(verbose: u8) -> &'static str {
    match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    }
}

/// Installs the stderr subscriber; a malformed `RUST_LOG` is reported and
/// the `-v` level used instead.
pub fn init(verbose: u8) {
    let fallback = level(verbose);
    let mut bad_env = None;
    let filter = match std::env::var("RUST_LOG") {
        Ok(s) if !s.trim().is_empty() => EnvFilter::try_new(&s).unwrap_or_else(|e| {
            bad_env = Some(format!("ignoring RUST_LOG={s:?} ({e}); using {fallback}"));
            EnvFilter::new(fallback)
        }),
        _ => EnvFilter::new(fallback),
    };
    let installed = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(crate::output::stderr_is_tty())
        .try_init();
    if installed.is_ok()
        && let Some(msg) = bad_env
    {
        tracing::warn!("{msg}");
    }
}

/// True for setting keys whose values are secrets (passwords, JAAS
/// configurations, private keys, tokens).
pub fn is_secret(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    ["password", "jaas", "secret", "token", "credential"]
        .iter()
        .any(|s| k.contains(s))
        || k == "ssl.keystore.key"
        || k.ends_with(".key")
        // The schema registry's `user:password` (Confluent's name).
        || k.ends_with("user.info")
}

/// `key=value` pairs for a log line, secret values replaced by `<redacted>`.
pub fn redact<'a>(props: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut out = String::new();
    for (k, v) in props {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(k);
        out.push('=');
        if is_secret(k) {
            out.push_str("<redacted>");
        } else {
            out.push_str(v);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels() {
        assert_eq!(
            [0, 1, 2, 3, 9].map(level),
            ["warn", "info", "debug", "trace", "trace"]
        );
    }

    #[test]
    fn secrets_are_redacted() {
        let line = redact([
            ("bootstrap.servers", "b:9092"),
            ("sasl.password", "hunter2"),
            ("sasl.jaas.config", "x password=\"hunter2\";"),
            ("ssl.keystore.key", "-----BEGIN PRIVATE KEY-----"),
            ("ssl.key.password", "hunter2"),
            ("sasl.username", "alice"),
            ("basic.auth.user.info", "fred:hunter2"),
            ("schema.registry.basic.auth.user.info", "fred:hunter2"),
            ("bearer.auth.token", "hunter2"),
        ]);
        assert!(
            !line.contains("hunter2") && !line.contains("PRIVATE"),
            "{line}"
        );
        assert!(line.contains("sasl.username=alice") && line.contains("bootstrap.servers=b:9092"));
    }
}
