//! Kill -9 soak: the `sink_pipeline` program of this package
//! (`src/bin/sink_pipeline.rs`: a numbered source → the EXACTLY_ONCE Kafka
//! sink under the checkpoint driver) runs as a child process, is SIGKILLed
//! at random points at least [`MIN_KILLS`] times and
//! restarted with the same checkpoint directory until it finishes. The Java
//! console consumer (read_committed) then must see exactly the numbers
//! `0..N`, each once, increasing within each partition.
//!
//! The kill delays come from a seeded generator: the seed is printed, and
//! `SOAK_SEED=<seed>` reruns the same schedule.
//!
//! Only the pipeline process is killed, never the broker: the test runs on
//! the harness's shared Kafka 4.4 cluster, with a topic and a transactional
//! id prefix of its own.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use kafka_testcontainers::IsolationLevel;
use kafka_testcontainers::{SharedKafka, unique_name};

const RECORDS: u64 = 3000;
const MIN_KILLS: usize = 20;
const PARTITIONS: i32 = 3;

/// splitmix64: small, seedable, good enough for kill delays.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn between(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
}

/// The `sink_pipeline` program of this package (cargo builds a package's
/// binaries before its integration tests).
fn pipeline_binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_sink_pipeline"))
}

fn spawn(
    bin: &PathBuf,
    bootstrap: &str,
    topic: &str,
    prefix: &str,
    dir: &std::path::Path,
) -> Child {
    Command::new(bin)
        .args([
            "--bootstrap",
            bootstrap,
            "--topic",
            topic,
            "--checkpoint-dir",
            dir.to_str().unwrap(),
            "--records",
            &RECORDS.to_string(),
            "--interval-ms",
            "100",
            "--rate",
            "150",
            "--prefix",
            prefix,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn sink_pipeline")
}

/// Invariant (module documentation): after at least [`MIN_KILLS`]
/// SIGKILLs of the pipeline, read_committed holds `0..N`, each once,
/// increasing within each partition.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_dash_nine_soak_exactly_once() {
    let started = Instant::now();
    let seed = std::env::var("SOAK_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    eprintln!("soak seed: {seed} (rerun with SOAK_SEED={seed})");
    let mut rng = Rng(seed);

    let bin = pipeline_binary();
    let kafka = SharedKafka::Kafka44Tv2
        .cluster()
        .await
        .expect("shared Kafka 4.4");
    let (topic, prefix) = (unique_name("soak"), unique_name("soak-job"));
    kafka
        .create_topic(&topic, PARTITIONS, 1)
        .await
        .expect("create topic");
    let dir = tempfile::tempdir().unwrap();
    let bootstrap = kafka.bootstrap();
    eprintln!("cluster ready ({:.1?})", started.elapsed());

    let mut kills = 0usize;
    let mut crashes = 0usize;
    let mut runs = 0usize;
    loop {
        runs += 1;
        assert!(runs < 200, "the pipeline does not finish");
        let mut child = spawn(&bin, &bootstrap, &topic, &prefix, dir.path());
        let deadline = (kills < MIN_KILLS)
            .then(|| Instant::now() + Duration::from_millis(rng.between(200, 1500)));
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break Some(status);
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                child.kill().expect("SIGKILL"); // Child::kill is SIGKILL on Unix
                child.wait().unwrap();
                break None;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        };
        match status {
            None => kills += 1,
            Some(s) if s.success() => {
                let mut out = String::new();
                use std::io::Read;
                child
                    .stdout
                    .take()
                    .unwrap()
                    .read_to_string(&mut out)
                    .unwrap();
                eprintln!("run {runs}: {}", out.trim());
                break;
            }
            Some(s) => {
                crashes += 1;
                eprintln!("run {runs}: pipeline exited with {s} (restarting)");
            }
        }
    }
    eprintln!(
        "pipeline finished after {runs} runs, {kills} SIGKILLs, {crashes} crashes ({:.1?})",
        started.elapsed()
    );
    assert!(kills >= MIN_KILLS);

    let records = kafka
        .console_consume(
            &topic,
            IsolationLevel::ReadCommitted,
            RECORDS as usize + 100,
            Duration::from_secs(10),
        )
        .await
        .expect("console consumer");
    let mut by_partition: BTreeMap<i32, Vec<u64>> = BTreeMap::new();
    for r in &records {
        let v: u64 = String::from_utf8(r.value.clone().unwrap())
            .unwrap()
            .parse()
            .unwrap();
        let k: u64 = String::from_utf8(r.key.clone().unwrap())
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(k, v % 8, "key of {v}");
        by_partition.entry(r.partition).or_default().push(v);
    }
    let set: BTreeSet<u64> = records
        .iter()
        .map(|r| {
            String::from_utf8_lossy(r.value.as_deref().unwrap())
                .parse()
                .unwrap()
        })
        .collect();
    let counts: Vec<(i32, usize)> = by_partition.iter().map(|(p, v)| (*p, v.len())).collect();
    eprintln!(
        "read_committed (Java console consumer): {} records, {} distinct, per partition {counts:?} ({:.1?})",
        records.len(),
        set.len(),
        started.elapsed()
    );
    assert_eq!(records.len() as u64, RECORDS, "exactly N records");
    assert_eq!(
        set,
        (0..RECORDS).collect::<BTreeSet<u64>>(),
        "the exact set"
    );
    for (p, values) in &by_partition {
        assert!(
            values.windows(2).all(|w| w[0] < w[1]),
            "partition {p} out of order"
        );
    }
}
