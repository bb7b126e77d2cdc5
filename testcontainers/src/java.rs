//! The Java runtimes installed on the machine, and the choice of one for a
//! program: Kafka's JVMs run on the chosen Java ([`for_kafka`]), the schema
//! registry on the newest installed release it supports. A runtime's
//! release decides the kind of its class archives: from Java 25 on,
//! ahead-of-time caches ([`crate::class_archive`]).
//!
//! Candidates, each counted once (by resolved path): `$JAVA_HOME/bin/java`,
//! `java` on the path, then every JDK under `/usr/lib/jvm`. A runtime's
//! release comes from the `release` file of its home (`JAVA_VERSION="…"`),
//! or, where there is none, from `java -version`. The list is read once per
//! process.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// One installed Java runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct JavaRuntime {
    /// The `java` executable, resolved (no symbolic link).
    pub(crate) path: PathBuf,
    /// The feature release: 17 for "17.0.15", 8 for "1.8.0_402".
    pub(crate) major: u32,
}

/// The environment variable naming the Java home every Kafka JVM of the
/// harness runs on, instead of `JAVA_HOME`'s.
pub(crate) const KAFKA_JAVA_HOME_ENV: &str = "KAFKA_EOS_KAFKA_JAVA_HOME";

/// The runtime for the JVMs of Kafka (broker, storage tool, reference
/// tools): the Java home `KAFKA_EOS_KAFKA_JAVA_HOME` names, else
/// `$JAVA_HOME/bin/java`, else `java` on the path; its release read as for
/// every runtime (0 when unknown).
///
/// Not the newest installed one: Kafka 4.4's broker on Java 25 started
/// with less CPU, but in the CI suite its group coordinator once left a
/// group without a coordinator for a minute (OffsetFetch answered
/// NOT_COORDINATOR), which Java 17 never did.
///
/// Chosen once per process (a release without a `release` file is asked
/// with `java -version`, a JVM start of its own).
pub(crate) fn for_kafka() -> JavaRuntime {
    static CHOSEN: OnceLock<JavaRuntime> = OnceLock::new();
    CHOSEN
        .get_or_init(|| {
            let path = std::env::var_os(KAFKA_JAVA_HOME_ENV)
                .or_else(|| std::env::var_os("JAVA_HOME"))
                .map(|home| PathBuf::from(home).join("bin/java"))
                .filter(|java| java.is_file())
                .unwrap_or_else(|| PathBuf::from("java"));
            let major = resolve(&path)
                .and_then(|p| release_major(&p).or_else(|| banner_major(&p)))
                .unwrap_or(0);
            JavaRuntime { path, major }
        })
        .clone()
}

/// The newest installed runtime of release `min` or later; `None` when
/// there is none.
pub(crate) fn newest_at_least(min: u32) -> Option<&'static JavaRuntime> {
    installed()
        .iter()
        .filter(|java| java.major >= min)
        .max_by_key(|java| java.major)
}

/// What [`installed`] found, for an error message: "PATH is Java N, …".
pub(crate) fn describe_installed() -> String {
    let found: Vec<String> = installed()
        .iter()
        .map(|java| format!("{} is Java {}", java.path.display(), java.major))
        .collect();
    if found.is_empty() {
        "none".into()
    } else {
        found.join(", ")
    }
}

/// Every runtime found, in candidate order.
fn installed() -> &'static [JavaRuntime] {
    static INSTALLED: OnceLock<Vec<JavaRuntime>> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        let mut found: Vec<JavaRuntime> = Vec::new();
        for candidate in candidates() {
            let Some(path) = resolve(&candidate) else {
                continue;
            };
            if found.iter().any(|java| java.path == path) {
                continue;
            }
            if let Some(major) = release_major(&path).or_else(|| banner_major(&path)) {
                found.push(JavaRuntime { path, major });
            }
        }
        found
    })
}

fn candidates() -> Vec<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(home) = std::env::var_os("JAVA_HOME") {
        candidates.push(PathBuf::from(home).join("bin/java"));
    }
    candidates.push(PathBuf::from("java"));
    if let Ok(entries) = std::fs::read_dir("/usr/lib/jvm") {
        let mut jdks: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path().join("bin/java"))
            .collect();
        jdks.sort();
        candidates.extend(jdks);
    }
    candidates
}

/// The executable a candidate names, without symbolic links: a bare name
/// is looked up on the path.
pub(crate) fn resolve(candidate: &Path) -> Option<PathBuf> {
    let found = if candidate.components().count() > 1 {
        Some(candidate.to_path_buf())
    } else {
        std::env::split_paths(&std::env::var_os("PATH")?)
            .map(|dir| dir.join(candidate))
            .find(|p| p.is_file())
    };
    std::fs::canonicalize(found?).ok().filter(|p| p.is_file())
}

/// The release from `<home>/release`, `home` being two levels above
/// `bin/java`.
fn release_major(java: &Path) -> Option<u32> {
    let release = std::fs::read_to_string(java.parent()?.parent()?.join("release")).ok()?;
    let line = release
        .lines()
        .find_map(|l| l.strip_prefix("JAVA_VERSION="))?;
    major_of(line)
}

fn banner_major(java: &Path) -> Option<u32> {
    let out = Command::new(java).arg("-version").output().ok()?;
    major_of(&String::from_utf8_lossy(&out.stderr))
}

/// The feature release of the first quoted version in `text`
/// (`openjdk version "17.0.15"` -> 17, `"1.8.0_402"` -> 8).
fn major_of(text: &str) -> Option<u32> {
    let quoted = text.split('"').nth(1)?;
    let mut parts = quoted.split(['.', '-', '+', '_']);
    let first: u32 = parts.next()?.parse().ok()?;
    if first == 1 {
        parts.next()?.parse().ok()
    } else {
        Some(first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_release_is_read_from_old_and_new_version_strings() {
        assert_eq!(major_of("openjdk version \"17.0.15\" 2025-04-15"), Some(17));
        assert_eq!(major_of("openjdk version \"25\" 2025-09-16"), Some(25));
        assert_eq!(major_of("java version \"1.8.0_402\""), Some(8));
        assert_eq!(major_of("\"25.0.3\""), Some(25));
        assert_eq!(major_of("no version here"), None);
    }
}
