//! Helpers shared by the harness tests.
#![allow(dead_code)]

use std::path::Path;
use std::time::{Duration, Instant};

/// Pids of live processes whose command line contains `needle`.
pub fn pids_with_cmdline(needle: &str) -> Vec<u32> {
    let mut pids = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return pids;
    };
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        // Zombies have an empty cmdline and are already dead.
        if String::from_utf8_lossy(&cmd).contains(needle) && !is_zombie(&e.path()) {
            pids.push(pid);
        }
    }
    pids
}

fn is_zombie(proc_dir: &Path) -> bool {
    std::fs::read_to_string(proc_dir.join("stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(true)
}

/// Polls `cond` (with a short backoff) until it holds or `timeout` passes.
pub async fn wait_for(what: &str, timeout: Duration, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    let mut backoff = Duration::from_millis(10);
    while !cond() {
        assert!(
            start.elapsed() < timeout,
            "timed out after {timeout:?} waiting for {what}"
        );
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_millis(200));
    }
}
