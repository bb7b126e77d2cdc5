//! Kafka distributions: the broker and tools jars resolved from Maven Central
//! by `fetch-kafka.sh` into a shared cache directory.

use crate::Result;
use crate::error::HarnessError;
use std::fmt;
use std::path::{Path, PathBuf};

/// The pinned Kafka 4.4 release.
pub const KAFKA_4_4: &str = "4.4.0";
/// The pinned Kafka 3.9 release (the newest 3.9.x on Maven Central that resolves).
pub const KAFKA_3_9: &str = "3.9.2";

/// A Kafka release the harness can run.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum KafkaVersion {
    /// Kafka 4.4 ([`KAFKA_4_4`]): transaction version 1 or 2 selectable.
    #[default]
    V4_4,
    /// Kafka 3.9 ([`KAFKA_3_9`]): last 3.x line, transaction version 1 only.
    V3_9,
    /// Any other version string resolvable on Maven Central (e.g. "4.3.0").
    Other(String),
}

impl KafkaVersion {
    /// The full version string, e.g. "4.4.0".
    pub fn as_str(&self) -> &str {
        match self {
            KafkaVersion::V4_4 => KAFKA_4_4,
            KafkaVersion::V3_9 => KAFKA_3_9,
            KafkaVersion::Other(s) => s,
        }
    }

    /// Parses "4.4", "4.4.0", "3.9", "3.9.2" or any other "x.y.z".
    pub fn parse(s: &str) -> KafkaVersion {
        match s {
            "4.4" | KAFKA_4_4 => KafkaVersion::V4_4,
            "3.9" | KAFKA_3_9 => KafkaVersion::V3_9,
            other => KafkaVersion::Other(other.to_string()),
        }
    }

    /// The major version number.
    pub fn major(&self) -> u32 {
        self.as_str()
            .split('.')
            .next()
            .and_then(|m| m.parse().ok())
            .unwrap_or(4)
    }

    /// True for Kafka 4.x and later (log4j2, transaction.version feature).
    pub fn is_kafka4(&self) -> bool {
        self.major() >= 4
    }
}

impl fmt::Display for KafkaVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A resolved Kafka distribution on disk.
///
/// The cache is `${KAFKA_EOS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kafka-eos}`
/// ([`cache_dir`]);
/// each version lives in `kafka-VERSION/libs` and is complete once
/// `kafka-VERSION/.complete` exists. The first use downloads (about 55 MB,
/// ~15 s); later uses are offline and instant. Concurrent first uses are
/// serialised by the script's `flock`.
#[derive(Debug, Clone)]
pub struct Distribution {
    /// The version.
    pub version: KafkaVersion,
    /// `<cache>/kafka-VERSION`.
    pub dir: PathBuf,
}

impl Distribution {
    /// The directory holding every jar.
    pub fn libs(&self) -> PathBuf {
        self.dir.join("libs")
    }

    /// A JVM class path covering every jar (`<libs>/*`).
    pub fn classpath(&self) -> String {
        format!("{}/*", self.libs().display())
    }

    /// The class path and main class that run `program` on `java`: a main
    /// class with the release's jars, or a `.java` source file's compiled
    /// classes before them (compiled once, see [`crate::java_source`]; the
    /// file itself, for the source launcher, where it cannot be compiled).
    pub(crate) fn class_path_and_main(
        &self,
        java: &crate::java::JavaRuntime,
        program: &str,
    ) -> (String, String) {
        let compiled = crate::java_source::is_source_file(program)
            .then(|| crate::java_source::compiled(self, java, Path::new(program)))
            .flatten();
        match compiled {
            Some(c) => (
                format!("{}:{}", c.classes.display(), self.classpath()),
                c.main_class,
            ),
            None => (self.classpath(), program.to_string()),
        }
    }

    /// A command running `program` against the release's jars: a `.java`
    /// source file (compiled once and cached) or a main class, on the Java
    /// the harness runs Kafka on (`KAFKA_EOS_KAFKA_JAVA_HOME`, else
    /// `JAVA_HOME`, else `java` on the path), with a 256 MiB heap and the
    /// quick-starting JIT (C1 only). The program's arguments follow.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), kafka_testcontainers::HarnessError> {
    /// use kafka_testcontainers::{KafkaVersion, ensure_distribution};
    /// let dist = ensure_distribution(&KafkaVersion::V4_4).await?;
    /// let out = dist
    ///     .java_command("tests/java/Murmur2Vectors.java")
    ///     .output()
    ///     .expect("java runs");
    /// # Ok(()) }
    /// ```
    pub fn java_command(&self, program: &str) -> std::process::Command {
        let java = crate::java::for_kafka();
        let mut cmd = std::process::Command::new(&java.path);
        cmd.arg("-Xmx256m")
            .arg("-XX:TieredStopAtLevel=1")
            .arg("-XX:+UseSerialGC")
            .arg("-XX:-UsePerfData");
        let (class_path, main) = self.class_path_and_main(&java, program);
        cmd.arg("-cp").arg(class_path).arg(main);
        cmd.env_remove("JAVA_TOOL_OPTIONS")
            .env_remove("CLASSPATH")
            .env_remove("KAFKA_OPTS");
        cmd
    }
}

/// The cache directory shared by every version.
pub fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("KAFKA_EOS_CACHE") {
        return PathBuf::from(dir);
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("kafka-eos")
}

/// Path of the fetch script shipped in this crate.
pub fn fetch_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fetch-kafka.sh")
}

/// Makes sure `version`'s jars are in the cache, downloading them on first
/// use. Safe to call concurrently from several processes.
///
/// ```no_run
/// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
/// use kafka_testcontainers::{KafkaVersion, ensure_distribution};
/// let dist = ensure_distribution(&KafkaVersion::V3_9).await?; // downloads once
/// assert!(dist.libs().is_dir());
/// # Ok(()) }
/// ```
pub async fn ensure_distribution(version: &KafkaVersion) -> Result<Distribution> {
    let dir = cache_dir().join(format!("kafka-{}", version.as_str()));
    let dist = Distribution {
        version: version.clone(),
        dir: dir.clone(),
    };
    if dir.join(".complete").is_file() {
        return Ok(dist);
    }
    tracing::info!(%version, "fetching Kafka jars from Maven Central");
    let out = tokio::process::Command::new("bash")
        .arg(fetch_script())
        .arg(version.as_str())
        .env("KAFKA_EOS_CACHE", cache_dir())
        .output()
        .await
        .map_err(|e| HarnessError::io("running fetch-kafka.sh", e))?;
    if !out.status.success() || !dir.join(".complete").is_file() {
        return Err(HarnessError::Fetch {
            version: version.to_string(),
            message: format!(
                "{}: {}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        });
    }
    Ok(dist)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_version_is_4_4() {
        assert_eq!(KafkaVersion::default(), KafkaVersion::V4_4);
    }

    #[test]
    fn versions_display_as_their_full_release() {
        assert_eq!(KafkaVersion::V3_9.to_string(), "3.9.2");
        assert_eq!(KafkaVersion::V4_4.as_str(), "4.4.0");
        assert_eq!(KafkaVersion::Other("4.3.0".into()).as_str(), "4.3.0");
    }

    #[test]
    fn parse_knows_the_pinned_releases_by_short_and_full_name() {
        assert_eq!(KafkaVersion::parse("3.9"), KafkaVersion::V3_9);
        assert_eq!(KafkaVersion::parse("4.4.0"), KafkaVersion::V4_4);
        assert_eq!(
            KafkaVersion::parse("4.1.1"),
            KafkaVersion::Other("4.1.1".into())
        );
    }

    #[test]
    fn major_and_is_kafka4() {
        assert_eq!(KafkaVersion::V3_9.major(), 3);
        assert_eq!(KafkaVersion::parse("5.0.0").major(), 5);
        assert!(KafkaVersion::V4_4.is_kafka4() && !KafkaVersion::V3_9.is_kafka4());
    }

    #[test]
    fn classpath_is_every_jar_of_libs() {
        let dist = Distribution {
            version: KafkaVersion::V4_4,
            dir: "/cache/kafka-4.4.0".into(),
        };
        assert_eq!(dist.libs(), Path::new("/cache/kafka-4.4.0/libs"));
        assert_eq!(dist.classpath(), "/cache/kafka-4.4.0/libs/*");
    }

    #[test]
    fn fetch_script_ships_with_the_crate() {
        assert!(fetch_script().ends_with("fetch-kafka.sh"));
        assert!(fetch_script().is_file());
    }
}
