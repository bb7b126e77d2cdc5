//! A local one-node Kafka for `demo` and `bench` without `--bootstrap`,
//! started through kafka-testcontainers (feature `local-kafka`): the jars
//! come from Maven Central on first use (`fetch-kafka.sh`, with a progress
//! bar measured on the Maven repository's growth), then a KRaft broker runs
//! as a child process of this one and dies with it.

#[cfg(not(feature = "local-kafka"))]
use crate::error::{CliError, CliResult};

/// A running local cluster (stopped on drop).
#[derive(Debug)]
pub struct LocalKafka {
    #[cfg(feature = "local-kafka")]
    cluster: kafka_testcontainers::KafkaCluster,
}

#[cfg(not(feature = "local-kafka"))]
impl LocalKafka {
    /// Always fails: this build has no local Kafka.
    pub async fn start(_version: &str) -> CliResult<LocalKafka> {
        Err(CliError::usage(
            "this kafka-eos was built without a local Kafka (cargo feature local-kafka)\n\
             hint: pass --bootstrap HOST:PORT (or set KAFKA_EOS_BOOTSTRAP), or run from the \
             source tree: cargo run -p kafka-eos-cli -- demo",
        ))
    }

    /// The bootstrap list.
    pub fn bootstrap(&self) -> String {
        unreachable!("no local Kafka in this build")
    }
}

#[cfg(feature = "local-kafka")]
mod imp {
    use super::LocalKafka;
    use crate::error::{CliError, CliResult, ExitCode};
    use crate::output::{bar, human_bytes, note, status, stderr_is_tty};
    use kafka_testcontainers::{KafkaCluster, KafkaVersion, cache_dir, fetch_script};
    use std::path::{Path, PathBuf};
    use std::time::{Duration, Instant};

    /// Rough size of one Kafka distribution's jars (for the bar only).
    const EXPECTED_DOWNLOAD: u64 = 55 << 20;

    fn on_path(program: &str) -> bool {
        std::env::var_os("PATH")
            .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(program).is_file()))
    }

    /// Bytes of regular files under `dir` (0 when it does not exist).
    fn tree_size(dir: &Path) -> u64 {
        let mut total = 0;
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in entries.flatten() {
                match e.file_type() {
                    Ok(t) if t.is_dir() => stack.push(e.path()),
                    Ok(t) if t.is_file() => total += e.metadata().map_or(0, |m| m.len()),
                    _ => {}
                }
            }
        }
        total
    }

    /// Maven's local repository: `-Dmaven.repo.local=` in `MAVEN_OPTS`, else
    /// `~/.m2/repository`.
    fn maven_repository() -> PathBuf {
        let from_opts = std::env::var("MAVEN_OPTS").ok().and_then(|o| {
            o.split_whitespace()
                .find_map(|a| a.strip_prefix("-Dmaven.repo.local=").map(PathBuf::from))
        });
        if let Some(p) = from_opts {
            return p;
        }
        std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(std::env::temp_dir)
            .join(".m2/repository")
    }

    fn harness_error(what: &str, e: kafka_testcontainers::HarnessError) -> CliError {
        CliError::failure(format!(
            "{what}: {e}\nhint: pass --bootstrap HOST:PORT to use a running cluster instead"
        ))
    }

    /// Downloads the distribution if needed, showing how much Maven fetched.
    async fn ensure_distribution(version: &KafkaVersion) -> CliResult<()> {
        let complete = cache_dir()
            .join(format!("kafka-{version}"))
            .join(".complete");
        if complete.is_file() {
            return Ok(());
        }
        let script = fetch_script();
        if !script.is_file() {
            return Err(CliError::usage(format!(
                "Kafka {version} is not downloaded yet and its fetch script {} is missing \
                 (this binary runs outside the kafka-eos source tree it was built in)\n\
                 hint: pass --bootstrap HOST:PORT, or run from the source tree \
                 (cargo run -p kafka-eos-cli -- demo)",
                script.display()
            )));
        }
        if !on_path("mvn") {
            return Err(CliError::usage(format!(
                "downloading Kafka {version} needs Maven (mvn), which is not on PATH\n\
                 hint: install Maven, or pass --bootstrap HOST:PORT"
            )));
        }
        let repo = maven_repository();
        let base = tree_size(&repo);
        let started = Instant::now();
        note(&format!(
            "downloading Kafka {version} from Maven Central (first use, about {})",
            human_bytes(EXPECTED_DOWNLOAD as f64)
        ));
        let fetch = kafka_testcontainers::ensure_distribution(version);
        tokio::pin!(fetch);
        let mut tick = tokio::time::interval(Duration::from_millis(500));
        let mut last_line = Instant::now();
        loop {
            tokio::select! {
                r = &mut fetch => {
                    r.map_err(|e| harness_error("downloading Kafka", e))?;
                    break;
                }
                _ = tick.tick() => {
                    let got = tree_size(&repo).saturating_sub(base);
                    let line = format!(
                        "{} {} of ~{} ({:.0} s)",
                        bar(got as f64 / EXPECTED_DOWNLOAD as f64, 30),
                        human_bytes(got as f64),
                        human_bytes(EXPECTED_DOWNLOAD as f64),
                        started.elapsed().as_secs_f64()
                    );
                    if stderr_is_tty() {
                        status(&line);
                    } else if last_line.elapsed() >= Duration::from_secs(5) {
                        note(&line);
                        last_line = Instant::now();
                    }
                }
            }
        }
        note(&format!(
            "downloaded Kafka {version} in {:.1} s",
            started.elapsed().as_secs_f64()
        ));
        Ok(())
    }

    impl LocalKafka {
        /// Starts a one-node Kafka `version` ("4.4", "3.9" or "x.y.z"),
        /// downloading it on first use.
        pub async fn start(version: &str) -> CliResult<LocalKafka> {
            if !on_path("java") {
                return Err(CliError::usage(
                    "a local Kafka needs Java (java is not on PATH)\n\
                     hint: install a JRE 17+, or pass --bootstrap HOST:PORT",
                ));
            }
            let version = KafkaVersion::parse(version);
            ensure_distribution(&version).await?;
            let started = Instant::now();
            status(&format!("starting a local Kafka {version} ..."));
            let cluster = KafkaCluster::builder()
                .version(version.clone())
                .nodes(1)
                .start()
                .await
                .map_err(|e| harness_error("starting a local Kafka", e))?;
            note(&format!(
                "local Kafka {version} at {} (started in {:.1} s)",
                cluster.bootstrap(),
                started.elapsed().as_secs_f64()
            ));
            Ok(LocalKafka { cluster })
        }

        /// The bootstrap list.
        pub fn bootstrap(&self) -> String {
            self.cluster.bootstrap()
        }

        /// The harness cluster (Java tools).
        pub fn cluster(&self) -> &KafkaCluster {
            &self.cluster
        }
    }

    impl From<kafka_testcontainers::HarnessError> for CliError {
        fn from(e: kafka_testcontainers::HarnessError) -> Self {
            CliError::new(ExitCode::Failure, e.to_string())
        }
    }
}
