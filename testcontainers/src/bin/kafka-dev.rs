//! Starts a Kafka cluster for development and waits for Ctrl-C.
//!
//! ```text
//! cargo run -p kafka-testcontainers --bin kafka-dev -- --version 4.4.0 --nodes 1
//! ```
//!
//! Options: `--version V` (4.4.0, 3.9.2, ...), `--nodes N` (1 or 3),
//! `--transaction-version N`, `--sasl` (user alice / alice-secret),
//! `--proxies`, `--config key=value` (repeatable), `--full-jit` (steady-state
//! JIT instead of the fast-start C1-only JVM, and Kafka's own idle
//! intervals instead of the harness's quieter ones, for benchmarks), `--heap SIZE`
//! (broker JVM heap, default 512m), `--latency-ms MS` (implies `--proxies`:
//! every proxy delays each chunk by MS in each direction, a round trip
//! 2 × MS longer, as a broker across a network; throughput is unchanged),
//! `--schema-registry` (also a schema registry, Apicurio with Confluent's
//! API, stopped with the cluster).
//!
//! `--shared VARIANT --describe PATH` starts the shared cluster of that
//! variant instead (`4.4-tv2`, `4.4-tv1` or `3.9`, with exactly the
//! settings of `kafka_testcontainers::SharedKafka`; the other options
//! are refused) and writes its description to PATH once it is ready: test
//! processes run with `KAFKA_EOS_SHARED_KAFKA` set to PATH's directory attach
//! to it instead of starting their own.
//!
//! `--schema-registry-only` starts a schema registry alone (no cluster);
//! `.ci/warm-class-archives.sh` stops it to have it write its class archive.
//!
//! `--shared registry --describe PATH` starts a schema registry for other
//! processes' tests instead of a cluster (`SchemaRegistry::shared` attaches
//! to it when `KAFKA_EOS_SHARED_REGISTRY` names PATH).
//!
//! Prints `BOOTSTRAP=...`, `INTERNAL_BOOTSTRAP=...` and `DATA_DIR=...` lines
//! (and `SCHEMA_REGISTRY_URL=...`) on stdout once the cluster is ready.

use kafka_testcontainers::{Direction, KafkaCluster, KafkaVersion, SaslConfig};
use kafka_testcontainers::{SchemaRegistry, SharedKafka};
use std::io::Write;

fn usage() -> ! {
    eprintln!(
        "usage: kafka-dev [--version 4.4.0|3.9.2] [--nodes 1|3] [--transaction-version N] \
         [--sasl] [--proxies] [--config key=value]... [--full-jit] [--heap SIZE] \
         [--latency-ms MS] [--schema-registry]\n       \
         kafka-dev --schema-registry-only\n       \
         kafka-dev --shared 4.4-tv2|4.4-tv1|3.9|registry --describe PATH"
    );
    std::process::exit(2)
}

#[tokio::main]
async fn main() {
    let mut builder = KafkaCluster::builder();
    let mut shared = None;
    let mut describe = None;
    let mut other_options = false;
    let mut latency = None;
    let mut with_registry = false;
    let mut registry_only = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| usage());
        other_options |= !matches!(a.as_str(), "--shared" | "--describe");
        match a.as_str() {
            "--shared" => shared = Some(value()),
            "--describe" => describe = Some(std::path::PathBuf::from(value())),
            "--version" => builder = builder.version(KafkaVersion::parse(&value())),
            "--nodes" => builder = builder.nodes(value().parse().unwrap_or_else(|_| usage())),
            "--transaction-version" => {
                builder = builder.transaction_version(value().parse().unwrap_or_else(|_| usage()))
            }
            "--sasl" => builder = builder.sasl(SaslConfig::default()),
            "--proxies" => builder = builder.with_proxies(true),
            "--full-jit" => builder = builder.fast_jvm(false).quiet_idle(false),
            "--heap" => builder = builder.heap(value()),
            "--latency-ms" => {
                let ms: u64 = value().parse().unwrap_or_else(|_| usage());
                latency = Some(std::time::Duration::from_millis(ms));
                builder = builder.with_proxies(true);
            }
            "--config" => {
                let kv = value();
                let (k, v) = kv.split_once('=').unwrap_or_else(|| usage());
                builder = builder.broker_config(k, v);
            }
            "--schema-registry" => with_registry = true,
            "--schema-registry-only" => registry_only = true,
            "-h" | "--help" => usage(),
            _ => usage(),
        }
    }
    let started = std::time::Instant::now();
    if registry_only {
        if shared.is_some() || describe.is_some() || std::env::args().count() != 2 {
            usage();
        }
        registry_alone().await;
        return;
    }
    if let (Some("registry"), Some(path)) = (shared.as_deref(), &describe) {
        if other_options {
            usage();
        }
        serve_registry(path).await;
        return;
    }
    let shared = shared.map(|name| SharedKafka::parse(&name).unwrap_or_else(|| usage()));
    let start = async {
        match (shared, &describe) {
            (Some(variant), Some(path)) if !other_options => variant.serve(path).await,
            (None, None) => builder.start().await,
            _ => usage(),
        }
    };
    let cluster = match start.await {
        Ok(c) => c,
        Err(e) => {
            eprintln!("kafka-dev: cannot start the cluster: {e}");
            std::process::exit(1);
        }
    };
    if let Some(latency) = latency {
        for node in 0..cluster.node_count() {
            let proxy = cluster.proxy(node);
            proxy.set_latency(Direction::ClientToServer, latency);
            proxy.set_latency(Direction::ServerToClient, latency);
        }
    }
    let registry = if with_registry {
        match SchemaRegistry::start().await {
            Ok(r) => Some(r),
            Err(e) => {
                eprintln!("kafka-dev: cannot start the schema registry: {e}");
                std::process::exit(1);
            }
        }
    } else {
        None
    };
    let mut out = std::io::stdout().lock();
    if let Some(r) = &registry {
        let _ = writeln!(out, "SCHEMA_REGISTRY_URL={}", r.url());
    }
    let _ = writeln!(out, "BOOTSTRAP={}", cluster.bootstrap());
    let _ = writeln!(out, "INTERNAL_BOOTSTRAP={}", cluster.internal_bootstrap());
    let _ = writeln!(out, "DATA_DIR={}", cluster.data_dir().display());
    let _ = writeln!(out, "STARTED_IN_MS={}", started.elapsed().as_millis());
    let _ = out.flush();
    drop(out);
    eprintln!(
        "kafka-dev: Kafka {} with {} node(s) ready at {} (Ctrl-C to stop)",
        cluster.version(),
        cluster.node_count(),
        cluster.bootstrap()
    );
    let _ = tokio::signal::ctrl_c().await;
    eprintln!("kafka-dev: stopping");
    drop(registry);
    // A cluster of one node of its own stops cleanly (SIGTERM, up to a
    // minute): a broker that is writing the JVM's class archive (the first
    // run without one) writes it as it exits. Dropping it would give it 15
    // seconds, which a loaded machine's broker does not make.
    if cluster.node_count() == 1 && !cluster.is_shared() {
        let _ = cluster.stop(0).await;
    }
    drop(cluster);
}

/// `--schema-registry-only`: a schema registry of its own until Ctrl-C;
/// dropped then, so that the first one writes its class archive.
async fn registry_alone() {
    let registry = match SchemaRegistry::start().await {
        Ok(r) => r,
        Err(e) => {
            eprintln!("kafka-dev: cannot start the schema registry: {e}");
            std::process::exit(1);
        }
    };
    println!("SCHEMA_REGISTRY_URL={}", registry.url());
    eprintln!(
        "kafka-dev: schema registry ready at {} (Ctrl-C to stop)",
        registry.url()
    );
    let _ = tokio::signal::ctrl_c().await;
    eprintln!("kafka-dev: stopping");
    drop(registry);
}

/// `--shared registry --describe PATH`: a schema registry for other
/// processes' tests, described at PATH once it answers, until Ctrl-C.
async fn serve_registry(path: &std::path::Path) {
    let registry = match SchemaRegistry::serve(path).await {
        Ok(r) => r,
        Err(e) => {
            eprintln!("kafka-dev: cannot start the shared schema registry: {e}");
            std::process::exit(1);
        }
    };
    eprintln!(
        "kafka-dev: shared schema registry ready at {} (Ctrl-C to stop)",
        registry.url()
    );
    let _ = tokio::signal::ctrl_c().await;
    drop(registry);
}
