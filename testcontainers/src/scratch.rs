//! Scratch directories for clusters, brokers and tool runs: created with a
//! unique name, removed with everything inside when dropped.
//!
//! A small in-crate replacement for `tempfile::TempDir`, which pulled
//! `rustix`/`linux-raw-sys` into every crate that starts a local Kafka (the
//! CLI's `demo` among them, whose default build must show no `-sys` crate).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A directory removed (recursively) when dropped.
#[derive(Debug)]
pub(crate) struct ScratchDir {
    path: PathBuf,
    /// Whether drop removes the directory (false for another process's).
    owned: bool,
}

impl ScratchDir {
    /// Creates `<system temp dir>/<prefix><unique>`.
    pub(crate) fn new(prefix: &str) -> io::Result<ScratchDir> {
        Self::new_in(&std::env::temp_dir(), prefix)
    }

    /// Creates `<parent>/<prefix><unique>`; `parent` must exist. The name
    /// mixes the process id, a process-wide counter and the clock, and
    /// `create_dir` refuses an existing path, so two callers never share a
    /// directory.
    pub(crate) fn new_in(parent: &Path, prefix: &str) -> io::Result<ScratchDir> {
        let pid = std::process::id();
        for _ in 0..64 {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let nanos = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0);
            let path = parent.join(format!("{prefix}{pid}-{n}-{nanos:08x}"));
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(ScratchDir { path, owned: true }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("no free scratch directory name under {}", parent.display()),
        ))
    }

    /// An existing directory that another process owns: never removed here.
    pub(crate) fn borrowed(path: PathBuf) -> ScratchDir {
        ScratchDir { path, owned: false }
    }

    /// Removes the directories `<parent>/<prefix><pid>-…` left by
    /// processes that are gone (a process killed, or one that never drops
    /// what it created, leaves its own behind).
    pub(crate) fn remove_orphans(parent: &Path, prefix: &str) {
        let Ok(entries) = std::fs::read_dir(parent) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(prefix)) else {
                continue;
            };
            let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
                continue;
            };
            if !crate::process::process_exists(pid) {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }

    /// The directory.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        if self.owned {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Invariant: every scratch directory is distinct, exists while held, and
    /// is gone with its contents after drop.
    #[test]
    fn unique_and_removed_on_drop() {
        let a = ScratchDir::new("kafka-eos-scratch-test-").unwrap();
        let b = ScratchDir::new_in(a.path(), "inner-").unwrap();
        let c = ScratchDir::new_in(a.path(), "inner-").unwrap();
        assert_ne!(b.path(), c.path());
        std::fs::write(b.path().join("f"), b"x").unwrap();
        let (pa, pb) = (a.path().to_path_buf(), b.path().to_path_buf());
        assert!(pb.is_dir());
        drop(b);
        assert!(!pb.exists());
        drop(c);
        drop(a);
        assert!(!pa.exists());
    }
}
