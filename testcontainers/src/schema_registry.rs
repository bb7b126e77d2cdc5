//! [`SchemaRegistry`]: a private Apicurio Registry serving Confluent's Schema
//! Registry API (`/apis/ccompat/v7`), from Maven Central, as a child process
//! with an in-memory store.

use crate::Result;
use crate::class_archive::{ClassArchive, WhenToWrite};
use crate::error::{HarnessError, IoContext};
use crate::java::JavaRuntime;
use crate::process::{ManagedChild, spawn_tied};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Bound on the registry's readiness (about 5 s on two cores).
pub const SCHEMA_REGISTRY_STARTUP_TIMEOUT: Duration = Duration::from_secs(120);

/// The Apicurio Registry release the harness runs.
pub const APICURIO_VERSION: &str = "3.3.3";

/// The directory prefix of a registry's scratch directory.
pub(crate) const REGISTRY_DIR_PREFIX: &str = "kafka-eos-registry-";

/// The oldest Java the registry's classes run on.
const MIN_JAVA: u32 = 21;

/// The environment variable naming the file in which another process
/// describes the registry it shares (`kafka-dev --shared registry
/// --describe PATH`); see [`SchemaRegistry::shared`].
pub const SHARED_REGISTRY_ENV: &str = "KAFKA_EOS_SHARED_REGISTRY";

/// The main class of `quarkus-run.jar` (the name of its class archive).
const QUARKUS_MAIN_CLASS: &str = "io.quarkus.bootstrap.runner.QuarkusEntryPoint";

/// A running schema registry; killed and removed on drop.
///
/// ```no_run
/// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
/// use kafka_testcontainers::SchemaRegistry;
/// let registry = SchemaRegistry::start().await?;
/// let url = registry.url(); // "http://127.0.0.1:41234/apis/ccompat/v7"
/// # let _ = url;
/// # Ok(()) }
/// ```
///
/// Apicurio answers Confluent's API with these differences a test must
/// expect: the global compatibility level defaults to `NONE` (Confluent's to
/// `BACKWARD`), and `POST /subjects/{s}` (look-up) matches the exact schema
/// text, not the parsed schema.
#[derive(Debug)]
pub struct SchemaRegistry {
    port: u16,
    log: PathBuf,
    process: Mutex<Option<ManagedChild>>,
    /// The JVM's class archive (see [`ClassArchive`]): a registry that
    /// writes one is stopped with SIGTERM on drop, so that it can.
    archive: Option<ClassArchive>,
    // Declared last: removed after the JVM is gone.
    _dir: crate::scratch::ScratchDir,
}

/// Fetches the registry if needed (runs `fetch-apicurio.sh`); its directory.
pub async fn ensure_fetched() -> Result<PathBuf> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("fetch-apicurio.sh");
    let out = tokio::process::Command::new("bash")
        .arg(&script)
        .arg(APICURIO_VERSION)
        .stdin(Stdio::null())
        .output()
        .await
        .ctx(|| "running fetch-apicurio.sh".into())?;
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if !out.status.success() || !dir.join("quarkus-run.jar").is_file() {
        return Err(HarnessError::Process {
            what: "fetch-apicurio.sh".into(),
            message: format!("{}: {}", out.status, String::from_utf8_lossy(&out.stderr)),
        });
    }
    Ok(dir)
}

/// The Python interpreter of Confluent's own serializers (confluent-kafka
/// with its Schema Registry extras, in a virtual environment under
/// [`cache_dir`](crate::cache_dir)): the byte-exactness oracle of the
/// registry formats' tests. Installed on first use by
/// `install-confluent-python.sh` (idempotent; a few milliseconds once
/// installed).
///
/// ```no_run
/// let python = kafka_testcontainers::confluent_python()?;
/// assert!(python.ends_with("bin/python"));
/// # Ok::<(), kafka_testcontainers::HarnessError>(())
/// ```
pub fn confluent_python() -> Result<PathBuf> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("install-confluent-python.sh");
    let out = Command::new("bash")
        .arg(&script)
        .stdin(Stdio::null())
        .output()
        .ctx(|| "running install-confluent-python.sh".into())?;
    let python = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if !out.status.success() || !python.is_file() {
        return Err(HarnessError::Process {
            what: "install-confluent-python.sh".into(),
            message: format!("{}: {}", out.status, String::from_utf8_lossy(&out.stderr)),
        });
    }
    Ok(python)
}

/// A Java of at least version 21, the newest installed.
fn find_java() -> Result<JavaRuntime> {
    match crate::java::newest_at_least(MIN_JAVA) {
        Some(java) => Ok(java.clone()),
        None => Err(HarnessError::Process {
            what: "finding Java for the schema registry".into(),
            message: format!(
                "Apicurio Registry {APICURIO_VERSION} needs Java {MIN_JAVA} or newer; found: {}",
                crate::java::describe_installed()
            ),
        }),
    }
}

fn free_port() -> Result<u16> {
    let l = crate::cluster::reserve_listener_port().ctx(|| "reserving a port".into())?;
    Ok(l.local_addr().ctx(|| "reading a port".into())?.port())
}

impl SchemaRegistry {
    /// Fetches Apicurio Registry if missing, starts it on a free loopback
    /// port with an in-memory store, and waits until it answers
    /// `GET /subjects`.
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// use kafka_testcontainers::SchemaRegistry;
    /// let registry = SchemaRegistry::start().await?;
    /// assert!(registry.url().ends_with("/apis/ccompat/v7"));
    /// # Ok(()) }
    /// ```
    pub async fn start() -> Result<SchemaRegistry> {
        SchemaRegistry::start_with(true).await
    }

    /// [`SchemaRegistry::start`]; `may_write_archive`: the registry will be
    /// dropped (not left to die with the process), so it may write a
    /// missing class archive.
    async fn start_with(may_write_archive: bool) -> Result<SchemaRegistry> {
        let dist = ensure_fetched().await?;
        let java = find_java()?;
        let dir = crate::scratch::ScratchDir::new(REGISTRY_DIR_PREFIX)
            .ctx(|| "creating the registry directory".into())?;
        let port = free_port()?;
        let management_port = free_port()?;
        let log = dir.path().join("registry.log");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .ctx(|| "opening the registry log".into())?;
        let file2 = file.try_clone().ctx(|| "cloning a log handle".into())?;
        let archive = ClassArchive::for_program(
            &format!("apicurio-{APICURIO_VERSION}"),
            &java,
            QUARKUS_MAIN_CLASS,
            if may_write_archive {
                WhenToWrite::FirstRun
            } else {
                WhenToWrite::Never
            },
        );
        let mut cmd = Command::new(&java.path);
        if let Some(a) = &archive {
            cmd.args(a.jvm_args());
        }
        cmd.arg("-Xmx512m")
            .arg("-XX:+UseSerialGC")
            .arg("-XX:-UsePerfData")
            .arg("-XX:TieredStopAtLevel=1")
            .arg("-Dquarkus.http.host=127.0.0.1")
            .arg(format!("-Dquarkus.http.port={port}"))
            .arg("-Dquarkus.management.host=127.0.0.1")
            .arg(format!("-Dquarkus.management.port={management_port}"))
            .arg(format!("-Djava.io.tmpdir={}", dir.path().display()))
            .arg("-jar")
            .arg(dist.join("quarkus-run.jar"))
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(file)
            .stderr(file2);
        let child = spawn_tied("apicurio-registry", cmd)?;
        let registry = SchemaRegistry {
            port,
            log,
            process: Mutex::new(Some(child)),
            archive,
            _dir: dir,
        };
        if let Err(e) = registry.wait_ready().await {
            eprintln!(
                "===== schema registry start failed; log tail =====\n{}",
                crate::cluster::tail(&registry.logs(), 60)
            );
            return Err(e);
        }
        Ok(registry)
    }

    /// The registry of this process's tests: another process's when
    /// `KAFKA_EOS_SHARED_REGISTRY` names its description (the CI test runner
    /// starts one for every test binary: a registry start costs about 10
    /// CPU seconds), else started by the first caller and kept for the
    /// process's life. Tests that share it use subjects of their own (a
    /// unique topic name gives a unique `<topic>-value` subject) and never
    /// change its global settings; [`SchemaRegistry::kill`] leaves another
    /// process's registry running.
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// use kafka_testcontainers::SchemaRegistry;
    /// let registry = SchemaRegistry::shared().await?;
    /// assert!(std::ptr::eq(registry, SchemaRegistry::shared().await?));
    /// # Ok(()) }
    /// ```
    pub async fn shared() -> Result<&'static SchemaRegistry> {
        static SHARED: tokio::sync::OnceCell<SchemaRegistry> = tokio::sync::OnceCell::const_new();
        SHARED
            .get_or_try_init(|| async {
                match std::env::var_os(SHARED_REGISTRY_ENV) {
                    Some(path) if !path.is_empty() => {
                        SchemaRegistry::attach(Path::new(&path)).await
                    }
                    _ => {
                        crate::remove_orphaned_scratch_dirs();
                        // Never dropped (it dies with the process): it
                        // writes no class archive.
                        SchemaRegistry::start_with(false).await
                    }
                }
            })
            .await
    }

    /// Starts a registry for other processes and writes its description
    /// to `description` (atomically, once it answers); the registry stops
    /// when the returned value is dropped. What `kafka-dev --shared
    /// registry --describe PATH` runs.
    pub async fn serve(description: &Path) -> Result<SchemaRegistry> {
        // Stopped at the end of a run: it writes no class archive then.
        let registry = SchemaRegistry::start_with(false).await?;
        crate::shared::write_description(
            description,
            &format!("port={}\nlog={}\n", registry.port, registry.log.display()),
        )?;
        Ok(registry)
    }

    /// Another process's registry, from the description it wrote at
    /// `description` (waited for: the CI runner starts it with the tests).
    async fn attach(description: &Path) -> Result<SchemaRegistry> {
        let text = crate::shared::wait_for_description(
            description,
            &format!(
                "the shared schema registry ({SHARED_REGISTRY_ENV} is set; \
                 its owner is `kafka-dev --shared registry`)"
            ),
        )
        .await?;
        let field = |key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
                .map(str::to_string)
        };
        let port =
            field("port")
                .and_then(|p| p.parse().ok())
                .ok_or_else(|| HarnessError::Process {
                    what: "attaching to the shared schema registry".into(),
                    message: format!("no port in {}: {text:?}", description.display()),
                })?;
        let dir = crate::scratch::ScratchDir::new(REGISTRY_DIR_PREFIX)
            .ctx(|| "creating the registry directory".into())?;
        Ok(SchemaRegistry {
            port,
            log: field("log").map(PathBuf::from).unwrap_or_default(),
            process: Mutex::new(None),
            archive: None,
            _dir: dir,
        })
    }

    /// The base URL of Confluent's API, for `schema.registry.url`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/apis/ccompat/v7", self.port)
    }

    /// The registry's port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The JVM's process id, while it runs (none for another process's).
    pub fn pid(&self) -> Option<u32> {
        let g = self.process.lock().unwrap_or_else(|e| e.into_inner());
        g.as_ref().and_then(|c| c.pid())
    }

    /// The registry's log so far.
    pub fn logs(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Kills the registry (a registry that is down, for the clients' error
    /// paths). It is not restarted: its in-memory store is gone. Another
    /// process's registry (see [`SchemaRegistry::shared`]) is left running.
    pub fn kill(&self) {
        let mut g = self.process.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(mut child) = g.take() {
            child.kill_now();
            if let Some(a) = &self.archive {
                a.finish(false);
            }
        }
    }

    fn is_running(&self) -> bool {
        let mut g = self.process.lock().unwrap_or_else(|e| e.into_inner());
        g.as_mut().map(|c| c.try_wait().is_none()).unwrap_or(false)
    }

    async fn wait_ready(&self) -> Result<()> {
        let started = Instant::now();
        loop {
            if !self.is_running() {
                return Err(HarnessError::Process {
                    what: "apicurio-registry".into(),
                    message: format!(
                        "exited during startup; log tail:\n{}",
                        crate::cluster::tail(&self.logs(), 40)
                    ),
                });
            }
            let last = match self.get_status("/apis/ccompat/v7/subjects").await {
                Ok(200) => return Ok(()),
                Ok(status) => format!("HTTP {status}"),
                Err(e) => e.to_string(),
            };
            if started.elapsed() >= SCHEMA_REGISTRY_STARTUP_TIMEOUT {
                return Err(HarnessError::Timeout {
                    what: "schema registry readiness".into(),
                    elapsed: started.elapsed(),
                    last,
                });
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// The status code of a `GET` of `path` (HTTP/1.0, no keep-alive).
    async fn get_status(&self, path: &str) -> std::io::Result<u16> {
        let mut s = tokio::net::TcpStream::connect(("127.0.0.1", self.port)).await?;
        s.write_all(format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").as_bytes())
            .await?;
        let mut head = [0u8; 12];
        s.read_exact(&mut head).await?;
        std::str::from_utf8(&head[9..12])
            .ok()
            .and_then(|c| c.parse().ok())
            .ok_or_else(|| std::io::Error::other("not an HTTP status line"))
    }
}

impl Drop for SchemaRegistry {
    /// A registry writing its class archive gets SIGTERM and up to 30 s to
    /// exit (Quarkus stops, then the JVM writes the archive); any other is
    /// killed.
    fn drop(&mut self) {
        let mut g = self.process.lock().unwrap_or_else(|e| e.into_inner());
        let Some(mut child) = g.take() else {
            return;
        };
        match self.archive.as_ref().filter(|a| a.writes()) {
            Some(archive) => {
                let exited = child.terminate_blocking(Duration::from_secs(30));
                child.kill_now();
                archive.finish(exited);
            }
            None => child.kill_now(),
        }
    }
}
