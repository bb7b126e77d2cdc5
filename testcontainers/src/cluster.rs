//! [`KafkaCluster`]: KRaft clusters of combined broker + controller nodes.

use crate::Result;
use crate::class_archive::{ClassArchive, WhenToWrite};
use crate::dist::{Distribution, KafkaVersion, ensure_distribution};
use crate::error::{HarnessError, IoContext};
use crate::process::{ManagedChild, spawn_tied};
use crate::proxy::{Proxy, ProxyHandle};
use crate::storage_template::StorageTemplate;
use crate::tls::TlsFiles;
use crate::wire::{KafkaConnection, finalized_feature};
use std::fmt::Write as _;
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The directory prefix of a private cluster's scratch directory (under
/// the system temporary directory).
pub(crate) const PRIVATE_DIR_PREFIX: &str = "kafka-eos-cluster-";

/// Default bound on cluster start and node restart.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(120);

/// A SASL mechanism enabled on the CLIENT listener: `PLAIN` (users from the
/// listener's JAAS config) or SCRAM (credentials stored at format time). The
/// same type as `kafka_client::SaslMechanism`, defined in the protocol
/// crate, which both depend on.
pub use kafka_proto::messages::SaslMechanism;

/// A SASL user (name and password must not contain `"`, `,`, `=`, `[` or `]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaslUser {
    /// User name.
    pub name: String,
    /// Password.
    pub password: String,
}

/// SASL settings for the CLIENT listener (`SASL_PLAINTEXT`). Every user can
/// authenticate with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaslConfig {
    /// The users; the first one is used for the readiness check.
    pub users: Vec<SaslUser>,
}

impl Default for SaslConfig {
    /// One user, `alice` / `alice-secret`.
    fn default() -> Self {
        SaslConfig::new().user("alice", "alice-secret")
    }
}

impl SaslConfig {
    /// No users yet.
    ///
    /// [`SaslConfig::default`] has one user, `alice`; start from `new` for
    /// a test that needs other or several principals:
    ///
    /// ```
    /// use kafka_testcontainers::{KafkaCluster, SaslConfig};
    /// let sasl = SaslConfig::new()
    ///     .user("producer", "p-secret") // the first user: the readiness check's
    ///     .user("reader", "r-secret");
    /// let builder = KafkaCluster::builder().sasl(sasl);
    /// # let _ = builder;
    /// ```
    pub fn new() -> Self {
        SaslConfig { users: Vec::new() }
    }

    /// Adds a user.
    pub fn user(mut self, name: impl Into<String>, password: impl Into<String>) -> Self {
        self.users.push(SaslUser {
            name: name.into(),
            password: password.into(),
        });
        self
    }

    /// The mechanisms enabled on the broker.
    pub fn mechanisms(&self) -> [SaslMechanism; 3] {
        [
            SaslMechanism::Plain,
            SaslMechanism::ScramSha256,
            SaslMechanism::ScramSha512,
        ]
    }
}

/// Configures and starts a [`KafkaCluster`].
#[derive(Debug, Clone)]
pub struct KafkaClusterBuilder {
    version: KafkaVersion,
    nodes: usize,
    transaction_version: Option<i16>,
    broker_config: Vec<(String, String)>,
    node_config: Vec<(usize, String, String)>,
    sasl: Option<SaslConfig>,
    tls: bool,
    tls_client_auth: bool,
    proxies: bool,
    heap: String,
    fast_jvm: bool,
    quiet_idle: bool,
    jvm_args: Vec<String>,
    startup_timeout: Duration,
    sharing: Sharing,
}

/// Who may stop a cluster: the test that started it, or nobody because
/// tests share it (see [`SharedKafka`](crate::SharedKafka)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sharing {
    /// Started for one test, which may kill, stop and restart its nodes.
    Private,
    /// Shared by the tests of this process; never dropped (its JVM dies
    /// with the process, through `PR_SET_PDEATHSIG`).
    InProcess,
    /// Shared with other processes, which attach to it; dropped by its
    /// owner (`kafka-dev --shared`) at the end.
    Served,
    /// Another process's shared cluster, attached to by its description.
    Attached,
}

impl Default for KafkaClusterBuilder {
    fn default() -> Self {
        KafkaClusterBuilder {
            version: KafkaVersion::V4_4,
            nodes: 1,
            transaction_version: None,
            broker_config: Vec::new(),
            node_config: Vec::new(),
            sasl: None,
            tls: false,
            tls_client_auth: false,
            proxies: false,
            heap: "512m".into(),
            fast_jvm: true,
            quiet_idle: true,
            jvm_args: Vec::new(),
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            sharing: Sharing::Private,
        }
    }
}

impl KafkaClusterBuilder {
    /// Kafka release (default [`KafkaVersion::V4_4`]).
    pub fn version(mut self, version: KafkaVersion) -> Self {
        self.version = version;
        self
    }

    /// Number of combined broker + controller nodes: 1 (replication factors 1)
    /// or 3 (replication factor 3, min ISR 2). Default 1.
    pub fn nodes(mut self, nodes: usize) -> Self {
        self.nodes = nodes;
        self
    }

    /// `transaction.version` feature level set at format time (Kafka 4.x:
    /// 1 or 2; 4.4 defaults to 2). Kafka 3.9 only supports 1.
    pub fn transaction_version(mut self, level: i16) -> Self {
        self.transaction_version = Some(level);
        self
    }

    /// Adds (or overrides) a broker property on every node.
    pub fn broker_config(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.broker_config.push((key.into(), value.into()));
        self
    }

    /// Adds (or overrides) a broker property on one node (index `node`, as
    /// in [`KafkaCluster::kill`]), after the every-node ones: e.g. a
    /// `broker.rack` per broker.
    ///
    /// ```no_run
    /// # async fn demo() -> kafka_testcontainers::Result<()> {
    /// use kafka_testcontainers::KafkaCluster;
    /// let kafka = KafkaCluster::builder()
    ///     .nodes(3)
    ///     .node_config(0, "broker.rack", "a")
    ///     .node_config(1, "broker.rack", "b")
    ///     .node_config(2, "broker.rack", "c")
    ///     .start()
    ///     .await?;
    /// # let _ = kafka; Ok(()) }
    /// ```
    pub fn node_config(
        mut self,
        node: usize,
        key: impl Into<String>,
        value: impl Into<String>,
    ) -> Self {
        self.node_config.push((node, key.into(), value.into()));
        self
    }

    /// Makes the CLIENT listener `SASL_PLAINTEXT` with these users.
    pub fn sasl(mut self, sasl: SaslConfig) -> Self {
        self.sasl = Some(sasl);
        self
    }

    /// Makes the CLIENT listener `SSL` (`SASL_SSL` with [`Self::sasl`]) with
    /// a fresh CA and a broker certificate for `127.0.0.1` / `localhost`
    /// ([`crate::tls::generate`]; needs `openssl`).
    pub fn tls(mut self, on: bool) -> Self {
        self.tls = on;
        self
    }

    /// Requires a client certificate signed by the cluster's CA on the TLS
    /// CLIENT listener (`ssl.client.auth=required`; implies [`Self::tls`]).
    /// [`KafkaCluster::tls_files`] has one.
    pub fn tls_client_auth(mut self, on: bool) -> Self {
        self.tls_client_auth = on;
        if on {
            self.tls = true;
        }
        self
    }

    /// Puts a fault [`Proxy`] in front of every node's CLIENT listener and
    /// makes the node advertise the proxy's address.
    pub fn with_proxies(mut self, on: bool) -> Self {
        self.proxies = on;
        self
    }

    /// Maximum JVM heap per node, e.g. "512m" (default).
    pub fn heap(mut self, heap: impl Into<String>) -> Self {
        self.heap = heap.into();
        self
    }

    /// Faster JVM start (`-XX:TieredStopAtLevel=1`, C1 only) at the cost of
    /// slower steady-state brokers. Default true; turn off for benchmarks.
    pub fn fast_jvm(mut self, on: bool) -> Self {
        self.fast_jvm = on;
        self
    }

    /// Quieter idle nodes (default true): the active controller appends its
    /// no-op metadata record after 5 s of quiet instead of 500 ms
    /// (`metadata.max.idle.interval.ms`), and a follower's fetch waits up to
    /// 5 s for new records instead of 500 ms (`replica.fetch.wait.max.ms`;
    /// it still returns as soon as records arrive, so `acks=all` is not
    /// slower). An idle node then takes about half the CPU: 3.5 against 2.2 %
    /// of a core for one node, 20 against 9.5 % for three. Turn it off for
    /// Kafka's own intervals (benchmarks; a follower's high watermark reaches
    /// it only with its next fetch response, so a reader fetching from a
    /// follower sees new records up to 5 s late with it on).
    pub fn quiet_idle(mut self, on: bool) -> Self {
        self.quiet_idle = on;
        self
    }

    /// Adds a raw JVM argument for the broker processes.
    pub fn jvm_arg(mut self, arg: impl Into<String>) -> Self {
        self.jvm_args.push(arg.into());
        self
    }

    /// Bound on start and restart readiness (default 120 s).
    pub fn startup_timeout(mut self, timeout: Duration) -> Self {
        self.startup_timeout = timeout;
        self
    }

    /// Fetches the jars if needed, formats and starts every node, and waits
    /// until the cluster is ready.
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// use kafka_testcontainers::KafkaCluster;
    /// let cluster = KafkaCluster::builder().nodes(3).start().await?;
    /// // Dropping `cluster` kills every node and removes its files.
    /// # Ok(()) }
    /// ```
    pub async fn start(self) -> Result<KafkaCluster> {
        KafkaCluster::start(self).await
    }

    pub(crate) fn sharing(mut self, sharing: Sharing) -> Self {
        self.sharing = sharing;
        self
    }
}

#[derive(Debug)]
struct Node {
    id: i32,
    client_port: u16,
    internal_port: u16,
    controller_port: u16,
    dir: PathBuf,
    config: PathBuf,
    log: PathBuf,
    process: Mutex<Option<ManagedChild>>,
    /// The class archive the running process writes, if it writes one.
    writing_archive: Mutex<Option<ClassArchive>>,
    /// The JVM's pid when another process started it (an attached shared
    /// cluster).
    external_pid: Option<u32>,
}

/// A running Kafka cluster; every node is killed and its files removed on
/// drop. Nodes are addressed by index `0..nodes()` (node id = index + 1).
///
/// ```no_run
/// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
/// use kafka_testcontainers::KafkaCluster;
/// let cluster = KafkaCluster::builder().nodes(3).start().await?;
/// cluster.create_topic("orders", 3, 3).await?;
/// let bootstrap_servers = cluster.bootstrap(); // e.g. "127.0.0.1:41234"
/// // ... run clients against it; crash a node and bring it back:
/// cluster.kill(1)?; // no controlled shutdown
/// cluster.restart(1).await?; // data survives; waits until ready
/// # let _ = bootstrap_servers;
/// # Ok(()) }
/// ```
///
/// Each node listens on three loopback ports:
///
/// - `CLIENT`: what [`KafkaCluster::bootstrap`] returns; `PLAINTEXT`, or
///   `SASL_PLAINTEXT` with [`KafkaClusterBuilder::sasl`], `SSL` with
///   [`KafkaClusterBuilder::tls`] (certificates from [`crate::tls`], CA at
///   [`KafkaCluster::ca_pem_path`]), `SASL_SSL` with both. With
///   [`KafkaClusterBuilder::with_proxies`] the node advertises its proxy's
///   address on this listener, so every client connection crosses the proxy.
/// - `INTERNAL`: `PLAINTEXT`, used between brokers and by the Java tools
///   ([`KafkaCluster::internal_bootstrap`]); never proxied.
/// - `CONTROLLER`: `PLAINTEXT`, the KRaft quorum (static voters).
///
/// Readiness is a protocol round trip, never a log grep. A cluster is ready
/// when:
/// 1. ApiVersions answers (and, on 4.x, reports the requested
///    `transaction.version` feature level);
/// 2. Metadata lists every running node as a broker;
/// 3. FindCoordinator for a transactional id answers without error;
/// 4. on a SASL cluster, a SaslHandshake + SaslAuthenticate (PLAIN) exchange
///    on the CLIENT listener succeeds.
///
/// On a TLS cluster the checks run on INTERNAL, and CLIENT only has to accept
/// TCP connections (the harness has no TLS client; the producer's TLS tests
/// are the end-to-end proof).
///
/// ```no_run
/// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
/// use kafka_testcontainers::{KafkaCluster, SaslConfig};
/// let cluster = KafkaCluster::builder().sasl(SaslConfig::default()).start().await?;
/// // `bootstrap.servers` plus `security.protocol` and the SASL credentials:
/// let mut props = vec![("bootstrap.servers".to_string(), cluster.bootstrap())];
/// props.extend(cluster.client_properties());
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct KafkaCluster {
    builder: KafkaClusterBuilder,
    dist: Distribution,
    cluster_id: String,
    nodes: Vec<Node>,
    proxies: Vec<Proxy>,
    tls: Option<TlsFiles>,
    // Declared last: removed after the processes are gone.
    dir: crate::scratch::ScratchDir,
}

impl KafkaCluster {
    /// A builder with the defaults (Kafka 4.4, one node, no SASL, no proxies).
    ///
    /// ```
    /// use kafka_testcontainers::{KafkaCluster, KafkaVersion, SaslConfig};
    /// use std::time::Duration;
    /// let builder = KafkaCluster::builder() // nothing runs until `start`
    ///     .version(KafkaVersion::V4_4)
    ///     .transaction_version(1) // the pre-KIP-890 transaction protocol
    ///     .nodes(3)
    ///     .broker_config("transaction.state.log.num.partitions", "4")
    ///     .sasl(SaslConfig::default())
    ///     .tls(true) // SASL_SSL on the CLIENT listener
    ///     .with_proxies(true) // faults between clients and brokers
    ///     .startup_timeout(Duration::from_secs(300));
    /// # let _ = builder;
    /// ```
    pub fn builder() -> KafkaClusterBuilder {
        KafkaClusterBuilder::default()
    }

    /// Starts the cluster; when a node could not bind one of its ports
    /// (reserved by the harness and released just before the JVM binds it,
    /// another process took it meanwhile: the ephemeral range is shared with
    /// every outgoing connection on the machine), starts it again on fresh
    /// ports, up to three times.
    async fn start(b: KafkaClusterBuilder) -> Result<KafkaCluster> {
        Self::validate(&b)?;
        let mut attempt = 1;
        loop {
            match Self::start_attempt(b.clone()).await {
                Ok(cluster) => return Ok(cluster),
                Err(StartFailure::PortTaken(e)) if attempt < 3 => {
                    tracing::warn!(attempt, error = %e, "a Kafka node's port was taken; starting the cluster again on fresh ports");
                    eprintln!(
                        "kafka-testcontainers: a node's port was taken ({e}); starting again on fresh ports"
                    );
                    attempt += 1;
                }
                Err(StartFailure::PortTaken(e) | StartFailure::Other(e)) => return Err(e),
            }
        }
    }

    fn validate(b: &KafkaClusterBuilder) -> Result<()> {
        if b.nodes == 0 {
            return Err(HarnessError::Config(
                "a cluster needs at least one node".into(),
            ));
        }
        if let Some(tv) = b.transaction_version {
            if !b.version.is_kafka4() && tv != 1 {
                return Err(HarnessError::Config(format!(
                    "Kafka {} supports transaction.version 1 only",
                    b.version
                )));
            }
            if !(0..=2).contains(&tv) {
                return Err(HarnessError::Config(format!(
                    "transaction.version {tv} is not 0, 1 or 2"
                )));
            }
        }
        if let Some(s) = &b.sasl
            && s.users.is_empty()
        {
            return Err(HarnessError::Config("SASL needs at least one user".into()));
        }
        Ok(())
    }

    async fn start_attempt(
        b: KafkaClusterBuilder,
    ) -> std::result::Result<KafkaCluster, StartFailure> {
        let started = Instant::now();
        let dist = ensure_distribution(&b.version).await?;
        let prefix = match b.sharing {
            Sharing::InProcess => crate::shared::IN_PROCESS_DIR_PREFIX,
            _ => PRIVATE_DIR_PREFIX,
        };
        let dir = crate::scratch::ScratchDir::new(prefix)
            .ctx(|| "creating the cluster directory".into())?;

        // Reserve every port by holding a listener until the JVMs start.
        let mut reservations = Vec::new();
        let mut reserve = || -> Result<u16> {
            let l = reserve_listener_port().ctx(|| "reserving a port".into())?;
            let port = l.local_addr().ctx(|| "reading a port".into())?.port();
            reservations.push(l);
            Ok(port)
        };
        let mut nodes = Vec::new();
        for i in 0..b.nodes {
            let node_dir = dir.path().join(format!("node-{}", i + 1));
            std::fs::create_dir_all(node_dir.join("data"))
                .ctx(|| format!("creating {}", node_dir.display()))?;
            nodes.push(Node {
                id: i as i32 + 1,
                client_port: reserve()?,
                internal_port: reserve()?,
                controller_port: reserve()?,
                config: node_dir.join("server.properties"),
                log: node_dir.join("kafka.log"),
                dir: node_dir,
                process: Mutex::new(None),
                writing_archive: Mutex::new(None),
                external_pid: None,
            });
        }
        let mut proxies = Vec::new();
        if b.proxies {
            for n in &nodes {
                let l = TcpListener::bind("127.0.0.1:0").ctx(|| "binding a proxy port".into())?;
                let upstream = SocketAddr::from(([127, 0, 0, 1], n.client_port));
                proxies.push(Proxy::from_listener(l, upstream)?);
            }
        }

        let tls = if b.tls {
            let tls_dir = dir.path().join("tls");
            std::fs::create_dir_all(&tls_dir).ctx(|| format!("creating {}", tls_dir.display()))?;
            Some(crate::tls::generate(&tls_dir)?)
        } else {
            None
        };
        let cluster_id = random_cluster_id()?;
        let cluster = KafkaCluster {
            builder: b,
            dist,
            cluster_id,
            nodes,
            proxies,
            tls,
            dir,
        };
        cluster.write_files()?;
        cluster.format_all().await?;
        drop(reservations);
        for i in 0..cluster.nodes.len() {
            cluster.spawn_node(i)?;
        }
        let deadline = Instant::now() + cluster.builder.startup_timeout;
        if let Err(e) = cluster.wait_ready(deadline).await {
            cluster.print_log_tails("cluster start failed", 60);
            let port_taken = (0..cluster.nodes.len()).any(|i| {
                let log = cluster.logs(i);
                log.contains("Address already in use") || log.contains("BindException")
            });
            return Err(if port_taken {
                StartFailure::PortTaken(e)
            } else {
                StartFailure::Other(e)
            });
        }
        tracing::info!(
            nodes = cluster.nodes.len(),
            version = %cluster.builder.version,
            elapsed = ?started.elapsed(),
            bootstrap = %cluster.bootstrap(),
            "Kafka cluster ready"
        );
        Ok(cluster)
    }

    fn log_config_path(&self) -> PathBuf {
        self.dir.path().join(if self.builder.version.is_kafka4() {
            "log4j2.properties"
        } else {
            "log4j.properties"
        })
    }

    fn tools_log_config_path(&self) -> PathBuf {
        self.dir.path().join(if self.builder.version.is_kafka4() {
            "tools-log4j2.properties"
        } else {
            "tools-log4j.properties"
        })
    }

    fn write_files(&self) -> Result<()> {
        let write = |path: PathBuf, text: String| {
            std::fs::write(&path, text).ctx(|| format!("writing {}", path.display()))
        };
        if self.builder.version.is_kafka4() {
            write(self.log_config_path(), log4j2_config("INFO", false))?;
            write(self.tools_log_config_path(), log4j2_config("WARN", true))?;
        } else {
            write(self.log_config_path(), log4j1_config("INFO", false))?;
            write(self.tools_log_config_path(), log4j1_config("WARN", true))?;
        }
        for i in 0..self.nodes.len() {
            write(self.nodes[i].config.clone(), self.server_properties(i))?;
        }
        Ok(())
    }

    fn server_properties(&self, i: usize) -> String {
        let n = &self.nodes[i];
        let b = &self.builder;
        let rf = if self.nodes.len() >= 3 { 3 } else { 1 };
        let min_isr = if rf >= 3 { 2 } else { 1 };
        let voters = self
            .nodes
            .iter()
            .map(|n| format!("{}@127.0.0.1:{}", n.id, n.controller_port))
            .collect::<Vec<_>>()
            .join(",");
        let advertised_client = match self.proxies.get(i) {
            Some(p) => p.listen_addr().port(),
            None => n.client_port,
        };
        let client_protocol = match (b.sasl.is_some(), self.tls.is_some()) {
            (false, false) => "PLAINTEXT",
            (true, false) => "SASL_PLAINTEXT",
            (false, true) => "SSL",
            (true, true) => "SASL_SSL",
        };
        let mut p = String::new();
        let mut kv = |k: &str, v: &str| {
            let _ = writeln!(p, "{k}={v}");
        };
        kv("process.roles", "broker,controller");
        kv("node.id", &n.id.to_string());
        kv("controller.quorum.voters", &voters);
        kv(
            "listeners",
            &format!(
                "CLIENT://127.0.0.1:{},INTERNAL://127.0.0.1:{},CONTROLLER://127.0.0.1:{}",
                n.client_port, n.internal_port, n.controller_port
            ),
        );
        kv(
            "advertised.listeners",
            &format!(
                "CLIENT://127.0.0.1:{advertised_client},INTERNAL://127.0.0.1:{}",
                n.internal_port
            ),
        );
        kv("controller.listener.names", "CONTROLLER");
        kv("inter.broker.listener.name", "INTERNAL");
        kv(
            "listener.security.protocol.map",
            &format!("CONTROLLER:PLAINTEXT,INTERNAL:PLAINTEXT,CLIENT:{client_protocol}"),
        );
        kv("log.dirs", &n.dir.join("data").display().to_string());
        kv("num.partitions", "1");
        kv("default.replication.factor", &rf.to_string());
        kv("min.insync.replicas", &min_isr.to_string());
        kv("offsets.topic.replication.factor", &rf.to_string());
        kv("offsets.topic.num.partitions", "4");
        kv("transaction.state.log.replication.factor", &rf.to_string());
        kv("transaction.state.log.min.isr", &min_isr.to_string());
        kv("transaction.state.log.num.partitions", "4");
        kv("group.initial.rebalance.delay.ms", "0");
        kv("num.network.threads", "2");
        kv("num.io.threads", "4");
        kv("num.recovery.threads.per.data.dir", "1");
        if b.quiet_idle {
            kv("metadata.max.idle.interval.ms", "5000");
            kv("replica.fetch.wait.max.ms", "5000");
        }
        if let Some(sasl) = &b.sasl {
            let mechs = sasl
                .mechanisms()
                .iter()
                .map(|m| m.name())
                .collect::<Vec<_>>()
                .join(",");
            kv("sasl.enabled.mechanisms", &mechs);
            let mut plain =
                String::from("org.apache.kafka.common.security.plain.PlainLoginModule required");
            for u in &sasl.users {
                let _ = write!(plain, " user_{}=\"{}\"", u.name, u.password);
            }
            plain.push(';');
            kv("listener.name.client.plain.sasl.jaas.config", &plain);
            let scram = "org.apache.kafka.common.security.scram.ScramLoginModule required;";
            kv("listener.name.client.scram-sha-256.sasl.jaas.config", scram);
            kv("listener.name.client.scram-sha-512.sasl.jaas.config", scram);
        }
        if let Some(tls) = &self.tls {
            let ks = tls.broker_keystore_path.display().to_string();
            kv("listener.name.client.ssl.keystore.location", &ks);
            kv("listener.name.client.ssl.keystore.type", "PKCS12");
            let pw = &tls.broker_keystore_password;
            kv("listener.name.client.ssl.keystore.password", pw);
            kv("listener.name.client.ssl.key.password", pw);
            let ca = tls.ca_pem_path.display().to_string();
            kv("listener.name.client.ssl.truststore.location", &ca);
            kv("listener.name.client.ssl.truststore.type", "PEM");
            let auth = if b.tls_client_auth {
                "required"
            } else {
                "none"
            };
            kv("listener.name.client.ssl.client.auth", auth);
        }
        for (k, v) in &b.broker_config {
            kv(k, v);
        }
        for (_, k, v) in b.node_config.iter().filter(|(node, ..)| *node == i) {
            kv(k, v);
        }
        p
    }

    /// The command running `main_class` of the cluster's distribution (or
    /// a `.java` source file, see [`crate::java_source`]), and its class
    /// archive (see [`ClassArchive`]; `write_archive`: which run of the
    /// program writes a missing one, if this one exits by itself or by
    /// SIGTERM).
    fn java_command(
        &self,
        main_class: &str,
        heap: &str,
        fast: bool,
        log_config: &Path,
        extra_jvm_args: &[String],
        write_archive: WhenToWrite,
    ) -> (Command, Option<ClassArchive>) {
        let java = crate::java::for_kafka();
        let archive =
            ClassArchive::for_program(self.dist.version.as_str(), &java, main_class, write_archive);
        let mut cmd = Command::new(&java.path);
        if let Some(a) = &archive {
            cmd.args(a.jvm_args());
        }
        cmd.arg(format!("-Xmx{heap}"))
            .arg("-XX:+UseSerialGC")
            .arg("-XX:-UsePerfData")
            .arg("-Djava.awt.headless=true")
            .arg("-Djava.net.preferIPv4Stack=true");
        if fast {
            cmd.arg("-XX:TieredStopAtLevel=1");
        }
        if self.builder.version.is_kafka4() {
            cmd.arg(format!(
                "-Dlog4j2.configurationFile={}",
                log_config.display()
            ));
        } else {
            cmd.arg(format!(
                "-Dlog4j.configuration=file:{}",
                log_config.display()
            ));
        }
        cmd.args(extra_jvm_args);
        let (class_path, main) = self.dist.class_path_and_main(&java, main_class);
        cmd.arg("-cp").arg(class_path).arg(main);
        cmd.env_remove("KAFKA_OPTS")
            .env_remove("JAVA_TOOL_OPTIONS")
            .env_remove("CLASSPATH")
            .stdin(Stdio::null());
        (cmd, archive)
    }

    /// The options of `StorageTool format` besides the cluster id and the
    /// node's configuration file: the features and the SCRAM credentials.
    fn format_options(&self) -> Vec<String> {
        let mut args = Vec::new();
        if let (true, Some(tv)) = (
            self.builder.version.is_kafka4(),
            self.builder.transaction_version,
        ) {
            args.push("--feature".into());
            args.push(format!("transaction.version={tv}"));
        }
        if let Some(sasl) = &self.builder.sasl {
            for u in &sasl.users {
                for m in ["SCRAM-SHA-256", "SCRAM-SHA-512"] {
                    args.push("--add-scram".into());
                    args.push(format!("{m}=[name={},password={}]", u.name, u.password));
                }
            }
        }
        args
    }

    /// Formats every node's storage: from the cached template of this kind
    /// of cluster when there is one ([`StorageTemplate`]), else with
    /// `StorageTool format` on every node (in parallel), keeping node 1's
    /// result as the template.
    async fn format_all(&self) -> Result<()> {
        let options = self.format_options();
        // What the bootstrap metadata depends on: the options (not the
        // cluster id, which only `meta.properties` holds), and any
        // configuration entry the format may read (feature and version
        // gates, the quorum, the metadata directory); the other entries only
        // change how a broker runs.
        let mut inputs = options.clone();
        let read_by_format = |k: &str| {
            ["version", "feature", "unstable"]
                .iter()
                .any(|w| k.contains(w))
                || ["controller.quorum", "metadata.", "process.roles", "log.dir"]
                    .iter()
                    .any(|p| k.starts_with(p))
        };
        for (k, v) in self
            .builder
            .broker_config
            .iter()
            .filter(|(k, _)| read_by_format(k))
        {
            inputs.push(format!("broker {k}={v}"));
        }
        for (node, k, v) in self
            .builder
            .node_config
            .iter()
            .filter(|(_, k, _)| read_by_format(k))
        {
            inputs.push(format!("node {node} {k}={v}"));
        }
        let template = StorageTemplate::for_format(&self.builder.version, &inputs);
        if let Some(t) = template.as_ref().filter(|t| t.exists()) {
            for n in &self.nodes {
                let directory_id = random_cluster_id()?;
                t.copy_into(&n.dir.join("data"), &self.cluster_id, n.id, &directory_id)
                    .ctx(|| format!("copying the formatted storage into node {}", n.id))?;
            }
            return Ok(());
        }
        let mut children = Vec::new();
        for n in &self.nodes {
            let (mut cmd, archive) = self.java_command(
                "kafka.tools.StorageTool",
                "256m",
                true,
                &self.tools_log_config_path(),
                &[],
                WhenToWrite::FirstRun,
            );
            cmd.arg("format")
                .arg("-t")
                .arg(&self.cluster_id)
                .arg("-c")
                .arg(&n.config)
                .args(&options);
            let out_path = n.dir.join("format.log");
            children.push((
                n.id,
                out_path.clone(),
                spawn_with_output(&format!("StorageTool format node {}", n.id), cmd, &out_path)?,
                archive,
            ));
        }
        for (id, out_path, mut child, archive) in children {
            let status = child.wait_timeout(Duration::from_secs(120)).await;
            let ok = status.map(|s| s.success()).unwrap_or(false);
            if let Some(a) = archive {
                a.finish(ok);
            }
            if !ok {
                let out = std::fs::read_to_string(&out_path).unwrap_or_default();
                return Err(HarnessError::Process {
                    what: format!("StorageTool format (node {id})"),
                    message: format!("{status:?}: {out}"),
                });
            }
        }
        if let (Some(t), Some(first)) = (template, self.nodes.first()) {
            t.save(&first.dir.join("data"));
        }
        Ok(())
    }

    fn spawn_node(&self, i: usize) -> Result<()> {
        let n = &self.nodes[i];
        // Only a single node writes a missing archive: it is stopped with
        // SIGTERM on drop, which a node of a larger cluster, whose quorum
        // goes away around it, may not survive in time (and a cluster
        // shared in-process is never dropped).
        let (mut cmd, archive) = self.java_command(
            "kafka.Kafka",
            &self.builder.heap,
            self.builder.fast_jvm,
            &self.log_config_path(),
            &self.builder.jvm_args,
            if self.nodes.len() == 1 && self.builder.sharing != Sharing::InProcess {
                WhenToWrite::FirstRun
            } else {
                WhenToWrite::Never
            },
        );
        cmd.arg(&n.config);
        cmd.env("LOG_DIR", &n.dir);
        cmd.current_dir(&n.dir);
        let child = spawn_with_output(&format!("Kafka node {}", n.id), cmd, &n.log)?;
        *n.process.lock().unwrap_or_else(|e| e.into_inner()) = Some(child);
        let previous = std::mem::replace(
            &mut *n.writing_archive.lock().unwrap_or_else(|e| e.into_inner()),
            archive.filter(ClassArchive::writes),
        );
        if let Some(a) = previous {
            a.finish(false);
        }
        Ok(())
    }

    /// What another process needs to attach to this cluster
    /// ([`KafkaCluster::attach`]): its id, directory and every node's ports
    /// and JVM pid, one `key=value` line each.
    pub(crate) fn description(&self) -> String {
        let mut d = String::new();
        let _ = writeln!(d, "version={}", self.builder.version);
        let _ = writeln!(d, "cluster_id={}", self.cluster_id);
        let _ = writeln!(d, "dir={}", self.dir.path().display());
        for (i, n) in self.nodes.iter().enumerate() {
            let pid = self.pid(i).unwrap_or(0);
            let _ = writeln!(
                d,
                "node={} {} {} {} {pid}",
                n.id, n.client_port, n.internal_port, n.controller_port
            );
        }
        d
    }

    /// Attaches to a cluster that another process started with `builder`'s
    /// settings and described with [`KafkaCluster::description`]; waits
    /// until it answers. The attached cluster's nodes cannot be stopped,
    /// and its files stay when it is dropped.
    pub(crate) async fn attach(
        builder: KafkaClusterBuilder,
        description: &str,
    ) -> Result<KafkaCluster> {
        let bad = |why: String| HarnessError::Config(format!("shared cluster description: {why}"));
        let mut cluster_id = None;
        let mut dir = None;
        let mut version = None;
        let mut nodes = Vec::new();
        for line in description.lines().filter(|l| !l.trim().is_empty()) {
            let (key, value) = line
                .split_once('=')
                .ok_or_else(|| bad(format!("line {line:?} is not key=value")))?;
            match key {
                "version" => version = Some(KafkaVersion::parse(value)),
                "cluster_id" => cluster_id = Some(value.to_string()),
                "dir" => dir = Some(PathBuf::from(value)),
                "node" => {
                    let fields: Vec<u32> = value
                        .split(' ')
                        .map(|f| f.parse::<u32>())
                        .collect::<std::result::Result<_, _>>()
                        .map_err(|e| bad(format!("node line {value:?}: {e}")))?;
                    let [id, client, internal, controller, pid] = fields[..] else {
                        return Err(bad(format!("node line {value:?} has not 5 numbers")));
                    };
                    let port = |p: u32| u16::try_from(p).map_err(|_| bad(format!("port {p}")));
                    nodes.push((
                        id as i32,
                        port(client)?,
                        port(internal)?,
                        port(controller)?,
                        pid,
                    ));
                }
                _ => return Err(bad(format!("unknown key {key:?}"))),
            }
        }
        let (Some(cluster_id), Some(dir)) = (cluster_id, dir) else {
            return Err(bad("no cluster_id or dir".into()));
        };
        if version.as_ref() != Some(&builder.version) || nodes.len() != builder.nodes {
            return Err(bad(format!(
                "Kafka {version:?} with {} node(s), expected Kafka {} with {}",
                nodes.len(),
                builder.version,
                builder.nodes
            )));
        }
        let dist = ensure_distribution(&builder.version).await?;
        let nodes = nodes
            .into_iter()
            .map(|(id, client_port, internal_port, controller_port, pid)| {
                let node_dir = dir.join(format!("node-{id}"));
                Node {
                    id,
                    client_port,
                    internal_port,
                    controller_port,
                    config: node_dir.join("server.properties"),
                    log: node_dir.join("kafka.log"),
                    dir: node_dir,
                    process: Mutex::new(None),
                    writing_archive: Mutex::new(None),
                    external_pid: Some(pid),
                }
            })
            .collect();
        let cluster = KafkaCluster {
            builder: builder.sharing(Sharing::Attached),
            dist,
            cluster_id,
            nodes,
            proxies: Vec::new(),
            tls: None,
            dir: crate::scratch::ScratchDir::borrowed(dir),
        };
        if let Some(i) = (0..cluster.nodes.len()).find(|&i| !cluster.is_running(i)) {
            return Err(HarnessError::Process {
                what: format!("shared Kafka node {}", cluster.nodes[i].id),
                message: "its process is gone".into(),
            });
        }
        cluster.wait_until_ready().await?;
        Ok(cluster)
    }

    /// Refuses `what` on a shared cluster: other tests are using it.
    fn check_private(&self, what: &str) -> Result<()> {
        if self.builder.sharing == Sharing::Private {
            Ok(())
        } else {
            Err(HarnessError::Config(format!(
                "cannot {what} of a shared cluster (other tests use it): start a cluster of the test's own"
            )))
        }
    }

    /// Whether tests share this cluster (see [`SharedKafka`](crate::SharedKafka)); its nodes
    /// cannot be killed, stopped or restarted.
    pub fn is_shared(&self) -> bool {
        self.builder.sharing != Sharing::Private
    }

    fn check_index(&self, node: usize) -> Result<&Node> {
        self.nodes.get(node).ok_or_else(|| {
            HarnessError::Config(format!(
                "node index {node} out of range (cluster has {} nodes)",
                self.nodes.len()
            ))
        })
    }

    /// Whether node `node`'s process is alive.
    pub fn is_running(&self, node: usize) -> bool {
        let Some(n) = self.nodes.get(node) else {
            return false;
        };
        if let Some(pid) = n.external_pid {
            return crate::process::process_exists(pid);
        }
        let mut guard = n.process.lock().unwrap_or_else(|e| e.into_inner());
        match guard.as_mut() {
            Some(child) => child.try_wait().is_none(),
            None => false,
        }
    }

    /// The JVM pid of node `node`, if running.
    pub fn pid(&self, node: usize) -> Option<u32> {
        let n = self.nodes.get(node)?;
        if n.external_pid.is_some() {
            return n.external_pid.filter(|_| self.is_running(node));
        }
        let guard = n.process.lock().unwrap_or_else(|e| e.into_inner());
        guard.as_ref().and_then(|c| c.pid())
    }

    async fn wait_ready(&self, deadline: Instant) -> Result<()> {
        let started = Instant::now();
        let running: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| self.is_running(i))
            .collect();
        let mut backoff = Duration::from_millis(50);
        loop {
            // Fail fast if a JVM died (bad config, port clash...).
            for &i in &running {
                if !self.is_running(i) {
                    return Err(HarnessError::Process {
                        what: format!("Kafka node {}", self.nodes[i].id),
                        message: format!(
                            "exited during startup; log tail:\n{}",
                            tail(&self.logs(i), 40)
                        ),
                    });
                }
            }
            let last = match self.check_ready(&running).await {
                Ok(()) => return Ok(()),
                Err(e) => e.to_string(),
            };
            if Instant::now() >= deadline {
                return Err(HarnessError::Timeout {
                    what: "Kafka cluster readiness".into(),
                    elapsed: started.elapsed(),
                    last,
                });
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_millis(500));
        }
    }

    async fn check_ready(&self, running: &[usize]) -> Result<()> {
        let expected: Vec<i32> = running.iter().map(|&i| self.nodes[i].id).collect();
        for &i in running {
            let n = &self.nodes[i];
            // Non-SASL: the CLIENT listener directly (not through the proxy,
            // which may hold an injected fault). SASL: the INTERNAL listener
            // for the metadata checks, plus a PLAIN exchange on CLIENT below.
            let tls = self.tls.is_some();
            let port = if self.builder.sasl.is_some() || tls {
                n.internal_port
            } else {
                n.client_port
            };
            let mut conn = KafkaConnection::connect(("127.0.0.1", port)).await?;
            conn.set_io_timeout(Duration::from_secs(5));
            let versions = conn.api_versions().await?;
            if let (true, Some(tv)) = (
                self.builder.version.is_kafka4(),
                self.builder.transaction_version,
            ) {
                let level = finalized_feature(&versions, "transaction.version").unwrap_or(0);
                if level != tv {
                    return Err(HarnessError::Protocol(format!(
                        "node {}: finalized transaction.version is {level}, expected {tv}",
                        n.id
                    )));
                }
            }
            let md = conn.metadata_brokers(&versions).await?;
            let mut seen: Vec<i32> = md.brokers.iter().map(|b| b.node_id).collect();
            seen.sort_unstable();
            if !expected.iter().all(|id| seen.contains(id)) {
                return Err(HarnessError::Protocol(format!(
                    "node {}: metadata lists brokers {seen:?}, expected {expected:?}",
                    n.id
                )));
            }
            conn.find_coordinator(&versions, 1, "kafka-eos-harness-readiness")
                .await?;
            if tls {
                // The CLIENT listener is bound and accepting.
                tokio::net::TcpStream::connect(("127.0.0.1", n.client_port))
                    .await
                    .ctx(|| format!("connecting to node {}'s TLS client listener", n.id))?;
            } else if let Some(sasl) = &self.builder.sasl {
                let u = &sasl.users[0];
                let mut c = KafkaConnection::connect(("127.0.0.1", n.client_port)).await?;
                c.set_io_timeout(Duration::from_secs(5));
                c.api_versions().await?;
                c.sasl_plain(&u.name, &u.password).await?;
            }
        }
        Ok(())
    }

    /// Waits (up to the startup timeout) until every running node passes the
    /// readiness round trip.
    pub async fn wait_until_ready(&self) -> Result<()> {
        self.wait_ready(Instant::now() + self.builder.startup_timeout)
            .await
    }

    /// Client bootstrap list, `127.0.0.1:p1,127.0.0.1:p2,...` (the proxies'
    /// addresses when proxies are enabled).
    pub fn bootstrap(&self) -> String {
        self.broker_addrs()
            .iter()
            .map(|a| a.to_string())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Client addresses, one per node (proxies' when enabled).
    pub fn broker_addrs(&self) -> Vec<SocketAddr> {
        self.nodes
            .iter()
            .enumerate()
            .map(|(i, n)| match self.proxies.get(i) {
                Some(p) => p.listen_addr(),
                None => SocketAddr::from(([127, 0, 0, 1], n.client_port)),
            })
            .collect()
    }

    /// Direct CLIENT listener addresses, bypassing any proxy.
    pub fn direct_broker_addrs(&self) -> Vec<SocketAddr> {
        self.nodes
            .iter()
            .map(|n| SocketAddr::from(([127, 0, 0, 1], n.client_port)))
            .collect()
    }

    /// Bootstrap list of the INTERNAL `PLAINTEXT` listeners (no SASL, no
    /// proxy); what the Java tools use.
    pub fn internal_bootstrap(&self) -> String {
        self.nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.internal_port))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The fault proxy in front of node `node`. Panics if the cluster was
    /// built without [`KafkaClusterBuilder::with_proxies`].
    pub fn proxy(&self, node: usize) -> &ProxyHandle {
        self.proxies
            .get(node)
            .map(|p| p.handle())
            .expect("cluster started without with_proxies(true), or node index out of range")
    }

    /// The fault proxies' handles, one per node (none without
    /// [`KafkaClusterBuilder::with_proxies`]).
    pub(crate) fn proxy_handles(&self) -> impl Iterator<Item = &ProxyHandle> {
        self.proxies.iter().map(|p| p.handle())
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Kafka node id of node index `node` (index + 1).
    pub fn node_id(&self, node: usize) -> i32 {
        node as i32 + 1
    }

    /// The Kafka version running.
    pub fn version(&self) -> &KafkaVersion {
        &self.builder.version
    }

    /// The distribution (jars) in use.
    pub fn distribution(&self) -> &Distribution {
        &self.dist
    }

    /// The KRaft cluster id.
    pub fn cluster_id(&self) -> &str {
        &self.cluster_id
    }

    /// The SASL settings, if SASL is on.
    pub fn sasl(&self) -> Option<&SaslConfig> {
        self.builder.sasl.as_ref()
    }

    /// The certificates of a TLS cluster ([`KafkaClusterBuilder::tls`]).
    pub fn tls_files(&self) -> Option<&TlsFiles> {
        self.tls.as_ref()
    }

    /// The PEM CA certificate a client must trust, on a TLS cluster.
    pub fn ca_pem(&self) -> Option<&[u8]> {
        self.tls.as_ref().map(|t| t.ca_pem.as_slice())
    }

    /// Path of [`Self::ca_pem`] (`ssl.truststore.location` with
    /// `ssl.truststore.type=PEM`).
    pub fn ca_pem_path(&self) -> Option<&Path> {
        self.tls.as_ref().map(|t| t.ca_pem_path.as_path())
    }

    /// Java client properties for the CLIENT listener (besides
    /// `bootstrap.servers`): `security.protocol`, the PEM trust store (and
    /// client key store with [`KafkaClusterBuilder::tls_client_auth`]) and
    /// SASL PLAIN credentials of the first user.
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// use kafka_testcontainers::{KafkaCluster, SaslConfig};
    /// let cluster = KafkaCluster::builder()
    ///     .tls(true)
    ///     .sasl(SaslConfig::default())
    ///     .start()
    ///     .await?;
    /// let props = cluster.client_properties();
    /// assert!(props.contains(&("security.protocol".into(), "SASL_SSL".into())));
    /// # Ok(()) }
    /// ```
    pub fn client_properties(&self) -> Vec<(String, String)> {
        let mut props = Vec::new();
        let mut put = |k: &str, v: String| props.push((k.to_string(), v));
        let protocol = match (self.builder.sasl.is_some(), self.tls.is_some()) {
            (false, false) => "PLAINTEXT",
            (true, false) => "SASL_PLAINTEXT",
            (false, true) => "SSL",
            (true, true) => "SASL_SSL",
        };
        put("security.protocol", protocol.into());
        if let Some(tls) = &self.tls {
            put("ssl.truststore.type", "PEM".into());
            put(
                "ssl.truststore.location",
                tls.ca_pem_path.display().to_string(),
            );
            if self.builder.tls_client_auth {
                // Java's PEM key store takes the key and chain inline.
                let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
                put("ssl.keystore.type", "PEM".into());
                put("ssl.keystore.key", text(&tls.client_key_pem));
                put("ssl.keystore.certificate.chain", text(&tls.client_cert_pem));
            }
        }
        if let Some(sasl) = &self.builder.sasl {
            let u = &sasl.users[0];
            put("sasl.mechanism", "PLAIN".into());
            put(
                "sasl.jaas.config",
                format!(
                    "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"{}\" password=\"{}\";",
                    u.name, u.password
                ),
            );
        }
        props
    }

    /// The `transaction.version` requested at format time, if any.
    pub fn requested_transaction_version(&self) -> Option<i16> {
        self.builder.transaction_version
    }

    /// The cluster's private directory (configs, data, logs); unique per
    /// cluster and part of every node's command line.
    pub fn data_dir(&self) -> &Path {
        self.dir.path()
    }

    /// ApiVersions from node `node` (over INTERNAL, so it also works with SASL).
    pub async fn api_versions(
        &self,
        node: usize,
    ) -> Result<kafka_proto::messages::ApiVersionsResponse> {
        self.internal_connection(node).await?.api_versions().await
    }

    /// A connection to node `node`'s internal (PLAINTEXT, unproxied)
    /// listener.
    pub(crate) async fn internal_connection(&self, node: usize) -> Result<KafkaConnection> {
        let n = self.check_index(node)?;
        KafkaConnection::connect(("127.0.0.1", n.internal_port)).await
    }

    /// Finalized level of feature `name` (e.g. "transaction.version") as
    /// reported by node `node`.
    pub async fn finalized_feature(&self, node: usize, name: &str) -> Result<Option<i16>> {
        Ok(finalized_feature(&self.api_versions(node).await?, name))
    }

    /// Kills node `node` with SIGKILL (no clean shutdown) and reaps it.
    pub fn kill(&self, node: usize) -> Result<()> {
        self.check_private("kill a node")?;
        let n = self.check_index(node)?;
        let child = n.process.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(mut child) = child {
            child.kill_now();
        }
        n.finish_archive(false);
        Ok(())
    }

    /// Stops node `node` with SIGTERM (controlled shutdown) and waits for it
    /// to exit (SIGKILL after 60 s).
    pub async fn stop(&self, node: usize) -> Result<()> {
        self.check_private("stop a node")?;
        let n = self.check_index(node)?;
        let child = n.process.lock().unwrap_or_else(|e| e.into_inner()).take();
        let mut exited = false;
        if let Some(mut child) = child {
            // Not an exit: SIGKILL after the grace period.
            exited = child
                .terminate(Duration::from_secs(60))
                .await
                .is_some_and(|s| std::os::unix::process::ExitStatusExt::signal(&s) != Some(9));
        }
        n.finish_archive(exited);
        Ok(())
    }

    /// Starts node `node` again (stopping it first if it is running) with its
    /// data intact, and waits until the cluster is ready.
    pub async fn restart(&self, node: usize) -> Result<()> {
        self.check_private("restart a node")?;
        self.check_index(node)?;
        if self.is_running(node) {
            self.stop(node).await?;
        }
        self.spawn_node(node)?;
        self.wait_until_ready().await
    }

    /// Starts node `node` again without waiting for readiness.
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// # let cluster = kafka_testcontainers::KafkaCluster::builder().start().await?;
    /// cluster.kill(0)?;
    /// cluster.start_node(0)?;
    /// cluster.wait_until_ready().await?;
    /// # Ok(()) }
    /// ```
    pub fn start_node(&self, node: usize) -> Result<()> {
        self.check_private("start a node")?;
        self.check_index(node)?;
        if self.is_running(node) {
            return Ok(());
        }
        self.spawn_node(node)
    }

    /// Node `node`'s combined stdout/stderr log so far (every start appended).
    pub fn logs(&self, node: usize) -> String {
        self.nodes
            .get(node)
            .and_then(|n| std::fs::read(&n.log).ok())
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    }

    /// Path of node `node`'s log file.
    pub fn log_path(&self, node: usize) -> Option<PathBuf> {
        self.nodes.get(node).map(|n| n.log.clone())
    }

    fn print_log_tails(&self, why: &str, lines: usize) {
        for i in 0..self.nodes.len() {
            // The cause is often far above the tail (a shutdown logs
            // hundreds of lines): the first errors come first.
            let log = self.logs(i);
            let errors: Vec<&str> = log
                .lines()
                .filter(|l| {
                    l.contains(" ERROR ") || l.contains(" FATAL ") || l.contains("Exception")
                })
                .take(20)
                .collect();
            if !errors.is_empty() {
                eprintln!(
                    "===== {why}: first errors in Kafka node {} log =====\n{}",
                    self.nodes[i].id,
                    errors.join("\n")
                );
            }
            eprintln!(
                "===== {why}: last {lines} lines of Kafka node {} log ({}) =====\n{}",
                self.nodes[i].id,
                self.nodes[i].log.display(),
                tail(&self.logs(i), lines)
            );
        }
    }

    /// Runs a Java main class from the cluster's distribution with the
    /// harness's JVM settings (quiet logging to stderr), waiting at most
    /// `timeout`. Output is captured in files, so large outputs are fine.
    ///
    /// ```no_run
    /// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
    /// # use std::time::Duration;
    /// # let cluster = kafka_testcontainers::KafkaCluster::builder().start().await?;
    /// let args = vec![
    ///     "--bootstrap-server".to_string(),
    ///     cluster.internal_bootstrap(),
    ///     "--list".into(),
    /// ];
    /// let out = cluster
    ///     .run_java(
    ///         "org.apache.kafka.tools.TopicCommand",
    ///         &args,
    ///         Duration::from_secs(60),
    ///     )
    ///     .await?;
    /// assert!(out.success, "{}", out.stderr);
    /// # Ok(()) }
    /// ```
    pub async fn run_java(
        &self,
        main_class: &str,
        args: &[String],
        timeout: Duration,
    ) -> Result<crate::tools::ToolOutput> {
        self.run_java_with(main_class, args, timeout, true, "512m")
            .await
    }

    pub(crate) async fn run_java_with(
        &self,
        main_class: &str,
        args: &[String],
        timeout: Duration,
        fast: bool,
        heap: &str,
    ) -> Result<crate::tools::ToolOutput> {
        let (mut cmd, archive) = self.java_command(
            main_class,
            heap,
            fast,
            &self.tools_log_config_path(),
            &[],
            WhenToWrite::SecondRun,
        );
        cmd.args(args);
        let work = crate::scratch::ScratchDir::new_in(self.dir.path(), "tool-")
            .ctx(|| "creating a tool directory".into())?;
        let out_path = work.path().join("stdout");
        let err_path = work.path().join("stderr");
        let stdout = std::fs::File::create(&out_path).ctx(|| "creating tool stdout".into())?;
        let stderr = std::fs::File::create(&err_path).ctx(|| "creating tool stderr".into())?;
        cmd.stdout(stdout).stderr(stderr).current_dir(work.path());
        let mut child = spawn_tied(main_class, cmd)?;
        let status = child.wait_timeout(timeout).await;
        let timed_out = status.is_none();
        if timed_out {
            child.kill_now();
        }
        if let Some(a) = archive {
            a.finish(!timed_out);
        }
        let out = crate::tools::ToolOutput {
            success: status.map(|s| s.success()).unwrap_or(false),
            exit_code: status.and_then(|s| s.code()),
            timed_out,
            stdout: std::fs::read(&out_path).unwrap_or_default(),
            stderr: String::from_utf8_lossy(&std::fs::read(&err_path).unwrap_or_default())
                .into_owned(),
        };
        Ok(out)
    }
}

impl Drop for KafkaCluster {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.print_log_tails("test panicked", 60);
        }
        for n in &self.nodes {
            let child = n.process.lock().unwrap_or_else(|e| e.into_inner()).take();
            let writing = n
                .writing_archive
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .is_some();
            let mut exited = false;
            if let Some(mut child) = child {
                if writing {
                    // A clean stop writes the class archive; a single node
                    // stops in a second or two.
                    exited = child.terminate_blocking(Duration::from_secs(15));
                }
                child.kill_now();
            }
            n.finish_archive(exited);
        }
    }
}

impl Node {
    /// Ends the class archive the node's last process wrote, if any:
    /// `exited` says whether that process exited (by SIGTERM), not killed.
    fn finish_archive(&self, exited: bool) {
        let archive = self
            .writing_archive
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(a) = archive {
            a.finish(exited);
        }
    }
}

/// A listener on a free port below the kernel's ephemeral range
/// (`net.ipv4.ip_local_port_range`): the port is released just before the
/// JVM binds it, and a port of the ephemeral range may meanwhile become the
/// local port of any outgoing connection on the machine (Kafka then fails
/// with "Address already in use"). Below the range only another explicit
/// bind can take it. Falls back to a kernel-chosen port.
pub(crate) fn reserve_listener_port() -> std::io::Result<TcpListener> {
    let ephemeral_low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| {
            s.split_whitespace()
                .next()
                .and_then(|v| v.parse::<u16>().ok())
        })
        .unwrap_or(32768);
    const LOWEST: u16 = 10_000;
    if ephemeral_low > LOWEST + 1_000 {
        let span = u64::from(ephemeral_low - LOWEST);
        for attempt in 0..100u64 {
            use std::hash::{BuildHasher, Hasher};
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u64(attempt);
            let port = LOWEST + (h.finish() % span) as u16;
            if let Ok(l) = TcpListener::bind(("127.0.0.1", port)) {
                return Ok(l);
            }
        }
    }
    TcpListener::bind("127.0.0.1:0")
}

/// Why one attempt to start a cluster failed.
enum StartFailure {
    /// A node could not bind a port the harness had reserved for it.
    PortTaken(HarnessError),
    Other(HarnessError),
}

impl From<HarnessError> for StartFailure {
    fn from(e: HarnessError) -> Self {
        StartFailure::Other(e)
    }
}

fn spawn_with_output(name: &str, mut cmd: Command, log: &Path) -> Result<ManagedChild> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .ctx(|| format!("opening {}", log.display()))?;
    let file2 = file.try_clone().ctx(|| "cloning a log handle".into())?;
    cmd.stdout(file).stderr(file2);
    spawn_tied(name, cmd)
}

/// The last `lines` lines of `text`.
pub(crate) fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// A random KRaft cluster id: 16 random bytes, URL-safe base64 without padding.
/// Like Kafka's `Uuid.randomUuid()`, never one that starts with '-': the storage
/// tool's argument parser would read it as an option (1 start in 64 failed so).
fn random_cluster_id() -> Result<String> {
    loop {
        let id = random_cluster_id_candidate()?;
        if !id.starts_with('-') {
            return Ok(id);
        }
    }
}

fn random_cluster_id_candidate() -> Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .ctx(|| "reading /dev/urandom".into())?;
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(22);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for b in bytes {
        acc = (acc << 8) | u32::from(b);
        bits += 8;
        while bits >= 6 {
            bits -= 6;
            out.push(ALPHABET[((acc >> bits) & 63) as usize] as char);
        }
    }
    if bits > 0 {
        out.push(ALPHABET[((acc << (6 - bits)) & 63) as usize] as char);
    }
    Ok(out)
}

fn log4j2_config(level: &str, to_stderr: bool) -> String {
    let target = if to_stderr {
        "SYSTEM_ERR"
    } else {
        "SYSTEM_OUT"
    };
    format!(
        "status = error\n\
         appender.out.type = Console\n\
         appender.out.name = OUT\n\
         appender.out.target = {target}\n\
         appender.out.layout.type = PatternLayout\n\
         appender.out.layout.pattern = [%d] %p %m (%c)%n\n\
         rootLogger.level = {level}\n\
         rootLogger.appenderRefs = out\n\
         rootLogger.appenderRef.out.ref = OUT\n\
         logger.statechange.name = state.change.logger\n\
         logger.statechange.level = WARN\n"
    )
}

fn log4j1_config(level: &str, to_stderr: bool) -> String {
    let target = if to_stderr {
        "System.err"
    } else {
        "System.out"
    };
    format!(
        "log4j.rootLogger={level}, out\n\
         log4j.appender.out=org.apache.log4j.ConsoleAppender\n\
         log4j.appender.out.Target={target}\n\
         log4j.appender.out.layout=org.apache.log4j.PatternLayout\n\
         log4j.appender.out.layout.ConversionPattern=[%d] %p %m (%c)%n\n\
         log4j.logger.state.change.logger=WARN\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_id_is_22_url_safe_chars() {
        let id = random_cluster_id().unwrap();
        assert_eq!(id.len(), 22);
        assert!(
            id.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        );
    }

    /// Invariant: no cluster id starts with '-' (kafka-storage would take it
    /// for an option). 2,000 draws make a missed check near-certain to show.
    #[test]
    fn cluster_id_never_starts_with_a_dash() {
        for _ in 0..2000 {
            assert!(!random_cluster_id().unwrap().starts_with('-'));
        }
    }

    #[test]
    fn tail_keeps_last_lines() {
        assert_eq!(tail("a\nb\nc", 2), "b\nc");
        assert_eq!(tail("a", 5), "a");
    }

    #[test]
    fn sasl_default_is_alice() {
        let sasl = SaslConfig::default();
        assert_eq!(
            sasl.users,
            [SaslUser {
                name: "alice".into(),
                password: "alice-secret".into()
            }]
        );
    }

    #[test]
    fn sasl_new_has_no_users_and_user_appends() {
        assert!(SaslConfig::new().users.is_empty());
        let sasl = SaslConfig::new().user("producer", "p").user("reader", "r");
        let names: Vec<_> = sasl.users.iter().map(|u| u.name.as_str()).collect();
        assert_eq!(names, ["producer", "reader"]);
    }

    #[test]
    fn sasl_enables_plain_and_both_scram_mechanisms() {
        let names = SaslConfig::default().mechanisms().map(SaslMechanism::name);
        assert_eq!(names, ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]);
    }
}
