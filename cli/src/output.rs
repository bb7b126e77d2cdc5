//! Output helpers: JSON lines written by hand (correct string escaping, bytes
//! as UTF-8 text or `{"base64": ...}`), the summary line and the TTY
//! progress line.

use base64::Engine as _;
use std::fmt::Write as _;
use std::io::IsTerminal as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Appends `s` as a JSON string literal (quotes included) to `out`.
pub fn json_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || c == '\u{7f}' || c == '\u{2028}' || c == '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Appends optional bytes as JSON: `null`, a string when the bytes are valid
/// UTF-8, else `{"base64":"..."}` (standard alphabet, padded).
pub fn json_bytes(out: &mut String, b: Option<&[u8]>) {
    match b {
        None => out.push_str("null"),
        Some(b) => match std::str::from_utf8(b) {
            Ok(s) => json_str(out, s),
            Err(_) => {
                out.push_str("{\"base64\":");
                json_str(out, &base64::engine::general_purpose::STANDARD.encode(b));
                out.push('}');
            }
        },
    }
}

/// `1.2 KiB`-style sizes.
pub fn human_bytes(n: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{v:.0} {}", UNITS[u])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// The summary line printed on stderr at the end of a command:
/// `<verb> N records (B) in T s (R records/s, S/s)`.
pub fn summary(verb: &str, records: u64, bytes: u64, elapsed: Duration) -> String {
    let secs = elapsed.as_secs_f64().max(1e-9);
    format!(
        "{verb} {records} record{} ({}) in {:.2} s ({:.0} records/s, {}/s)",
        if records == 1 { "" } else { "s" },
        human_bytes(bytes as f64),
        elapsed.as_secs_f64(),
        records as f64 / secs,
        human_bytes(bytes as f64 / secs),
    )
}

/// Counters shared with the progress line.
#[derive(Debug, Default)]
pub struct Counters {
    /// Records so far.
    pub records: AtomicU64,
    /// Payload bytes so far (keys, values and headers).
    pub bytes: AtomicU64,
}

impl Counters {
    /// Adds one record of `bytes` payload bytes.
    pub fn add(&self, bytes: u64) {
        self.records.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// (records, bytes).
    pub fn get(&self) -> (u64, u64) {
        (
            self.records.load(Ordering::Relaxed),
            self.bytes.load(Ordering::Relaxed),
        )
    }
}

/// A once-a-second progress line on stderr, only when stderr is a terminal;
/// stopped (and its line cleared) on drop.
#[derive(Debug)]
pub struct Progress {
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Progress {
    /// Starts the progress line for `verb` (e.g. `produced`).
    pub fn start(verb: &'static str, counters: Arc<Counters>) -> Self {
        if !std::io::stderr().is_terminal() {
            return Self { task: None };
        }
        let started = Instant::now();
        let task = tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            tick.tick().await;
            loop {
                tick.tick().await;
                let (r, b) = counters.get();
                eprint!("\r\x1b[K{}", summary(verb, r, b, started.elapsed()));
            }
        });
        Self { task: Some(task) }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(t) = self.task.take() {
            t.abort();
            eprint!("\r\x1b[K");
        }
    }
}

/// True when stderr is a terminal (progress lines are drawn in place).
pub fn stderr_is_tty() -> bool {
    std::io::stderr().is_terminal()
}

/// Redraws the in-place status line on stderr (terminals only).
pub fn status(text: &str) {
    if stderr_is_tty() {
        eprint!("\r\x1b[K{text}");
    }
}

/// Prints a line on stderr, clearing the status line first on a terminal.
pub fn note(text: &str) {
    if stderr_is_tty() {
        eprint!("\r\x1b[K");
    }
    eprintln!("{text}");
}

/// A `[#####.....]` bar of `width` cells for `fraction` (clamped to 0..=1).
pub fn bar(fraction: f64, width: usize) -> String {
    let filled = ((fraction.clamp(0.0, 1.0) * width as f64).round() as usize).min(width);
    format!("[{}{}]", "#".repeat(filled), ".".repeat(width - filled))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_escaping() {
        let mut s = String::new();
        json_str(&mut s, "a\"b\\c\nd\u{1}e\u{7f}é");
        assert_eq!(s, r#""a\"b\\c\nd\u0001e\u007fé""#);
        let mut s = String::new();
        json_bytes(&mut s, Some(&[0xff, 0x00]));
        assert_eq!(s, r#"{"base64":"/wA="}"#);
        let mut s = String::new();
        json_bytes(&mut s, None);
        assert_eq!(s, "null");
    }

    #[test]
    fn bars() {
        assert_eq!(bar(0.5, 4), "[##..]");
        assert_eq!(bar(2.0, 3), "[###]");
        assert_eq!(bar(-1.0, 2), "[..]");
    }

    #[test]
    fn summary_line() {
        let s = summary("produced", 1000, 2048, Duration::from_secs(2));
        assert_eq!(
            s,
            "produced 1000 records (2.0 KiB) in 2.00 s (500 records/s, 1.0 KiB/s)"
        );
    }
}
