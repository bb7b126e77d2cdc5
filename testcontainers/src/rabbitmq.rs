//! [`RabbitMq`]: a private RabbitMQ broker from the Debian `rabbitmq-server`
//! package, with its own node name, Erlang cookie, ports and data directory.

use crate::Result;
use crate::error::{HarnessError, IoContext};
use crate::process::{ManagedChild, spawn_tied};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// Bound on start and restart readiness.
pub const RABBITMQ_STARTUP_TIMEOUT: Duration = Duration::from_secs(120);

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// The directory prefix of a broker's scratch directory (under the system
/// temporary directory).
pub(crate) const RABBITMQ_DIR_PREFIX: &str = "kafka-eos-rabbitmq-";

const SERVER_CANDIDATES: &[&str] = &[
    "/usr/lib/rabbitmq/bin/rabbitmq-server",
    "/usr/lib/rabbitmq/sbin/rabbitmq-server",
];

/// A running RabbitMQ broker; killed and removed on drop.
///
/// ```no_run
/// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
/// use kafka_testcontainers::RabbitMq;
/// let mq = RabbitMq::start().await?;
/// let amqp_url = mq.amqp_url(); // e.g. "amqp://guest:guest@127.0.0.1:41234/%2f"
/// mq.restart().await?; // same port and data: durable queues survive
/// # let _ = amqp_url;
/// # Ok(()) }
/// ```
///
/// The package is installed on first use by `install-rabbitmq.sh` (which
/// keeps the system service from running). The shared `epmd` daemon may stay
/// up after the tests; no broker VM of ours does.
#[derive(Debug)]
pub struct RabbitMq {
    node_name: String,
    port: u16,
    dist_port: u16,
    server: PathBuf,
    log: PathBuf,
    process: Mutex<Option<ManagedChild>>,
    // Declared last: removed after the VM is gone.
    dir: crate::scratch::ScratchDir,
}

fn find_server() -> Option<PathBuf> {
    SERVER_CANDIDATES
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

/// Installs `rabbitmq-server` if needed (runs `install-rabbitmq.sh`).
pub async fn ensure_installed() -> Result<PathBuf> {
    if let Some(p) = find_server() {
        return Ok(p);
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("install-rabbitmq.sh");
    let out = tokio::process::Command::new("bash")
        .arg(&script)
        .output()
        .await
        .ctx(|| "running install-rabbitmq.sh".into())?;
    find_server().ok_or_else(|| HarnessError::Process {
        what: "install-rabbitmq.sh".into(),
        message: format!(
            "{}: {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    })
}

fn free_port() -> Result<u16> {
    // Below the ephemeral range, like the Kafka nodes' ports: released
    // before RabbitMQ binds it.
    let l = crate::cluster::reserve_listener_port().ctx(|| "reserving a port".into())?;
    Ok(l.local_addr().ctx(|| "reading a port".into())?.port())
}

impl RabbitMq {
    /// Installs RabbitMQ if missing, starts a broker and waits until an AMQP
    /// connection succeeds.
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// use kafka_testcontainers::RabbitMq;
    /// let mq = RabbitMq::start().await?;
    /// assert!(mq.pid().is_some());
    /// # Ok(()) }
    /// ```
    pub async fn start() -> Result<RabbitMq> {
        let server = ensure_installed().await?;
        let dir = crate::scratch::ScratchDir::new(RABBITMQ_DIR_PREFIX)
            .ctx(|| "creating the RabbitMQ directory".into())?;
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let node_name = format!("eos-{}-{n}@localhost", std::process::id());
        let port = free_port()?;
        let dist_port = free_port()?;
        let root = dir.path();
        for sub in ["home", "mnesia", "log"] {
            std::fs::create_dir_all(root.join(sub)).ctx(|| format!("creating {sub}"))?;
        }
        let cookie = root.join("home/.erlang.cookie");
        std::fs::write(&cookie, format!("KAFKAEOS{}X{n}COOKIE", std::process::id()))
            .ctx(|| "writing the Erlang cookie".into())?;
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&cookie, std::fs::Permissions::from_mode(0o400))
                .ctx(|| "chmod the Erlang cookie".into())?;
        }
        std::fs::write(
            root.join("rabbitmq.conf"),
            format!(
                "listeners.tcp.default = 127.0.0.1:{port}\n\
                 loopback_users = none\n\
                 disk_free_limit.absolute = 1MB\n\
                 log.console = true\n\
                 log.console.level = info\n\
                 log.file = false\n"
            ),
        )
        .ctx(|| "writing rabbitmq.conf".into())?;
        std::fs::write(root.join("enabled_plugins"), "[].\n")
            .ctx(|| "writing enabled_plugins".into())?;
        std::fs::write(root.join("rabbitmq-env.conf"), "")
            .ctx(|| "writing rabbitmq-env.conf".into())?;
        let mq = RabbitMq {
            node_name,
            port,
            dist_port,
            server,
            log: root.join("rabbitmq.log"),
            process: Mutex::new(None),
            dir,
        };
        mq.spawn()?;
        if let Err(e) = mq.wait_ready().await {
            eprintln!(
                "===== RabbitMQ start failed; log tail =====\n{}",
                crate::cluster::tail(&mq.logs(), 60)
            );
            return Err(e);
        }
        Ok(mq)
    }

    /// The RabbitMQ broker of this process: started by the first caller and
    /// kept for the process's life (a broker start costs several CPU
    /// seconds; tests that share it use queues of their own). Like every
    /// broker of the harness it dies with the process; its scratch
    /// directory, which a static never drops, is removed by a later
    /// process's first call ([`crate::remove_orphaned_scratch_dirs`]). A
    /// test that stops or restarts its broker starts one of its own.
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// use kafka_testcontainers::RabbitMq;
    /// let mq = RabbitMq::shared().await?;
    /// assert!(std::ptr::eq(mq, RabbitMq::shared().await?));
    /// # Ok(()) }
    /// ```
    pub async fn shared() -> Result<&'static RabbitMq> {
        static SHARED: tokio::sync::OnceCell<RabbitMq> = tokio::sync::OnceCell::const_new();
        SHARED
            .get_or_try_init(|| async {
                crate::remove_orphaned_scratch_dirs();
                RabbitMq::start().await
            })
            .await
    }

    fn spawn(&self) -> Result<()> {
        let root = self.dir.path();
        let mut cmd = Command::new(&self.server);
        cmd.env("HOME", root.join("home"))
            .env("RABBITMQ_NODENAME", &self.node_name)
            .env("RABBITMQ_NODE_IP_ADDRESS", "127.0.0.1")
            .env("RABBITMQ_NODE_PORT", self.port.to_string())
            .env("RABBITMQ_DIST_PORT", self.dist_port.to_string())
            .env("RABBITMQ_MNESIA_BASE", root.join("mnesia"))
            .env("RABBITMQ_LOG_BASE", root.join("log"))
            .env("RABBITMQ_LOGS", "-")
            .env("RABBITMQ_CONFIG_FILE", root.join("rabbitmq.conf"))
            .env(
                "RABBITMQ_ADVANCED_CONFIG_FILE",
                root.join("advanced.config"),
            )
            .env("RABBITMQ_CONF_ENV_FILE", root.join("rabbitmq-env.conf"))
            .env(
                "RABBITMQ_ENABLED_PLUGINS_FILE",
                root.join("enabled_plugins"),
            )
            .env("RABBITMQ_PID_FILE", root.join("rabbitmq.pid"))
            // Makes rabbitmq-server exec the Erlang VM instead of running it as
            // a background child of a shell, so the parent-death signal and
            // our SIGTERM/SIGKILL reach the VM itself.
            .env("RUNNING_UNDER_SYSTEMD", "true")
            // No busy waiting in the Erlang VM's schedulers (normal, dirty
            // CPU and dirty I/O): by default an idle scheduler spins before
            // it sleeps, which on a test machine takes CPU from the
            // processes under test for no throughput.
            .env(
                "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS",
                "+sbwt none +sbwtdcpu none +sbwtdio none",
            )
            .env_remove("RABBITMQ_ERLANG_COOKIE")
            .current_dir(root)
            .stdin(Stdio::null());
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .ctx(|| "opening the RabbitMQ log".into())?;
        let file2 = file.try_clone().ctx(|| "cloning a log handle".into())?;
        cmd.stdout(file).stderr(file2);
        let child = spawn_tied("rabbitmq-server", cmd)?;
        *self.process.lock().unwrap_or_else(|e| e.into_inner()) = Some(child);
        Ok(())
    }

    fn is_running(&self) -> bool {
        let mut g = self.process.lock().unwrap_or_else(|e| e.into_inner());
        g.as_mut().map(|c| c.try_wait().is_none()).unwrap_or(false)
    }

    async fn wait_ready(&self) -> Result<()> {
        let started = Instant::now();
        let mut backoff = Duration::from_millis(100);
        loop {
            if !self.is_running() {
                return Err(HarnessError::Process {
                    what: format!("rabbitmq-server {}", self.node_name),
                    message: format!(
                        "exited during startup; log tail:\n{}",
                        crate::cluster::tail(&self.logs(), 40)
                    ),
                });
            }
            let last = match self.check_connection().await {
                Ok(()) => return Ok(()),
                Err(e) => e.to_string(),
            };
            if started.elapsed() >= RABBITMQ_STARTUP_TIMEOUT {
                return Err(HarnessError::Timeout {
                    what: "RabbitMQ AMQP readiness".into(),
                    elapsed: started.elapsed(),
                    last,
                });
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_millis(500));
        }
    }

    /// Opens an AMQP connection and a channel, then closes them.
    pub async fn check_connection(&self) -> Result<()> {
        let conn = tokio::time::timeout(
            Duration::from_secs(10),
            lapin::Connection::connect(
                &self.amqp_url(),
                lapin::ConnectionProperties::default()
                    .with_executor(tokio_executor_trait::Tokio::current())
                    .with_reactor(tokio_reactor_trait::Tokio::current()),
            ),
        )
        .await
        .map_err(|_| HarnessError::Protocol("AMQP connect timed out".into()))?
        .map_err(|e| HarnessError::Protocol(format!("AMQP connect: {e}")))?;
        let channel = conn
            .create_channel()
            .await
            .map_err(|e| HarnessError::Protocol(format!("AMQP channel: {e}")))?;
        let _ = channel.close(200, "harness readiness").await;
        let _ = conn.close(200, "harness readiness").await;
        Ok(())
    }

    /// Publishes persistent messages (delivery mode 2), each with its
    /// correlation id, to the durable queue `queue` (declared if missing),
    /// and waits for the broker's publisher confirm of every one: when this
    /// returns `Ok`, RabbitMQ owns them all.
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// # let rabbit = kafka_testcontainers::RabbitMq::start().await?;
    /// let messages = (0..3).map(|i| (format!("id-{i}"), format!("body {i}").into_bytes()));
    /// rabbit.publish_persistent("orders", messages).await?;
    /// # Ok(()) }
    /// ```
    pub async fn publish_persistent(
        &self,
        queue: &str,
        messages: impl IntoIterator<Item = (String, Vec<u8>)>,
    ) -> Result<()> {
        use lapin::options::{BasicPublishOptions, ConfirmSelectOptions, QueueDeclareOptions};
        use lapin::types::FieldTable;
        let amqp =
            |what: &str, e: lapin::Error| HarnessError::Protocol(format!("AMQP {what}: {e}"));
        let conn = lapin::Connection::connect(
            &self.amqp_url(),
            lapin::ConnectionProperties::default()
                .with_executor(tokio_executor_trait::Tokio::current())
                .with_reactor(tokio_reactor_trait::Tokio::current()),
        )
        .await
        .map_err(|e| amqp("connect", e))?;
        let ch = conn
            .create_channel()
            .await
            .map_err(|e| amqp("channel", e))?;
        ch.confirm_select(ConfirmSelectOptions::default())
            .await
            .map_err(|e| amqp("confirm.select", e))?;
        let durable = QueueDeclareOptions {
            durable: true,
            ..QueueDeclareOptions::default()
        };
        ch.queue_declare(queue, durable, FieldTable::default())
            .await
            .map_err(|e| amqp("queue.declare", e))?;
        let mut confirms = Vec::new();
        for (correlation_id, body) in messages {
            let props = lapin::BasicProperties::default()
                .with_delivery_mode(2)
                .with_correlation_id(correlation_id.as_str().into());
            let publish = ch
                .basic_publish("", queue, BasicPublishOptions::default(), &body, props)
                .await
                .map_err(|e| amqp("basic.publish", e))?;
            confirms.push((correlation_id, publish));
        }
        for (correlation_id, confirm) in confirms {
            let confirmation = confirm.await.map_err(|e| amqp("publisher confirm", e))?;
            if !confirmation.is_ack() {
                return Err(HarnessError::Protocol(format!(
                    "RabbitMQ did not confirm message {correlation_id} to queue {queue}"
                )));
            }
        }
        let _ = conn.close(200, "published").await;
        Ok(())
    }

    /// `amqp://guest:guest@127.0.0.1:PORT/%2f`.
    pub fn amqp_url(&self) -> String {
        format!("amqp://guest:guest@127.0.0.1:{}/%2f", self.port)
    }

    /// The AMQP port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The Erlang node name (`eos-<pid>-<n>@localhost`).
    pub fn node_name(&self) -> &str {
        &self.node_name
    }

    /// The broker's private directory (part of the VM's command line, as
    /// its `-home`).
    pub fn data_dir(&self) -> &Path {
        self.dir.path()
    }

    /// The VM's pid, if running.
    pub fn pid(&self) -> Option<u32> {
        let g = self.process.lock().unwrap_or_else(|e| e.into_inner());
        g.as_ref().and_then(|c| c.pid())
    }

    /// The broker's log so far.
    pub fn logs(&self) -> String {
        std::fs::read(&self.log)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    }

    /// Stops the broker with SIGTERM (clean shutdown) and waits for the VM to
    /// exit (SIGKILL after 60 s).
    pub async fn stop(&self) -> Result<()> {
        let child = self
            .process
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(mut child) = child {
            child.terminate(Duration::from_secs(60)).await;
        }
        Ok(())
    }

    /// Kills the broker with SIGKILL.
    pub fn kill(&self) {
        let child = self
            .process
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(mut child) = child {
            child.kill_now();
        }
    }

    /// Starts the broker again (stopping it first if running) with the same
    /// node name, ports and data, and waits for an AMQP connection.
    pub async fn restart(&self) -> Result<()> {
        if self.is_running() {
            self.stop().await?;
        }
        self.spawn()?;
        self.wait_ready().await
    }
}

impl Drop for RabbitMq {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "===== test panicked: RabbitMQ {} log tail =====\n{}",
                self.node_name,
                crate::cluster::tail(&self.logs(), 60)
            );
        }
        self.kill();
    }
}
