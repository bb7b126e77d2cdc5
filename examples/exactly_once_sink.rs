//! The exactly-once Kafka sink under the checkpoint driver, through a crash.
//!
//! A source of numbers (its state: the next number) feeds the Kafka sink in
//! EXACTLY_ONCE mode; a [`CheckpointCoordinator`] checkpoints both into a
//! directory. Each checkpoint pre-commits the sink's Kafka transaction and,
//! once the checkpoint file is durable, commits it. The first "process"
//! checkpoints three times, writes ten more numbers and then crashes
//! (everything is dropped without a checkpoint). The second "process"
//! restores the last checkpoint — the source rewinds, the sink aborts the
//! transaction the crash left open — and finishes the job. A read_committed
//! reader then sees every number exactly once.
//!
//! ```text
//! cargo run -p kafka-eos-examples --example exactly_once_sink -- --bootstrap 127.0.0.1:9092
//! ```
//!
//! The bootstrap defaults to `$KAFKA_EOS_BOOTSTRAP`, then `127.0.0.1:9092`.
//! Topic `example-sink` (1 partition, created when missing), transactional
//! ids `example-sink-*` (`--name-suffix S`: topic `example-sink-S`, ids
//! `example-sink-S-*`), checkpoints in a fresh temporary directory
//! (removed at the end). Exits with status 1 when anything fails or the
//! check does not hold.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use kafka_eos::client::{Cluster, ClusterConfig};
use kafka_eos::sink::RecordContext;
use kafka_eos::sink::kafka::{KafkaSink, KafkaSinkConfig, KafkaSinkRecord, Semantic};
use kafka_eos::sink::{CheckpointCoordinator, CheckpointStorage, OperatorInfo, SourcePosition};
use kafka_eos_examples::support::{self, BoxError};
use tokio::sync::Mutex;

const TOPIC: &str = "example-sink";
const PER_CHECKPOINT: u64 = 20;
const TOTAL: u64 = 100;

/// One "process": the source, the sink and the coordinator, restored from
/// the checkpoint directory.
struct Job {
    source: Arc<Mutex<SourcePosition>>,
    sink: Arc<Mutex<KafkaSink<u64>>>,
    coordinator: CheckpointCoordinator,
}

impl Job {
    async fn start(bootstrap: &str, topic: &str, dir: &Path) -> Result<Job, BoxError> {
        let mut config =
            KafkaSinkConfig::from_properties([("bootstrap.servers", bootstrap)], topic)?;
        config.semantic = Semantic::ExactlyOnce;
        config.transactional_id_prefix = Some(support::name("example-sink"));
        // Must not exceed the broker's transaction.max.timeout.ms (15 min by default).
        config.transaction_timeout = Duration::from_secs(60);
        let sink =
            KafkaSink::connect(config, |n: &u64| KafkaSinkRecord::value(n.to_string())).await?;

        let source = Arc::new(Mutex::new(SourcePosition::default()));
        let sink = Arc::new(Mutex::new(sink));
        let mut coordinator = CheckpointCoordinator::new(CheckpointStorage::open(dir, 3)?);
        // Registration order is the barrier order: source, then sink.
        coordinator.register(OperatorInfo::new("numbers", 0, 1), source.clone())?;
        coordinator.register(OperatorInfo::new("kafka-sink", 0, 1), sink.clone())?;
        let restored = coordinator.restore().await?;
        let next = source.lock().await.next;
        match restored {
            None => println!("fresh start at number {next}"),
            Some(id) => println!("restored checkpoint {id}: resuming at number {next}"),
        }
        Ok(Job {
            source,
            sink,
            coordinator,
        })
    }

    /// Moves `n` numbers from the source into the sink. Both locks are held
    /// for each record (in registration order), so no checkpoint falls
    /// between reading a number and writing it.
    async fn write(&self, n: u64) -> Result<u64, BoxError> {
        let mut source = self.source.lock().await;
        let mut sink = self.sink.lock().await;
        let end = (source.next + n).min(TOTAL);
        while source.next < end {
            sink.invoke(source.next, &RecordContext::default()).await?;
            source.next += 1;
        }
        Ok(source.next)
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    support::exit_code(run().await)
}

async fn run() -> Result<(), BoxError> {
    let bootstrap = support::bootstrap();
    let topic = support::name(TOPIC);
    let cluster = Cluster::connect(ClusterConfig::new(&bootstrap)).await?;
    let partitions = support::ensure_topic(&cluster, &topic, 1).await?;
    let start = support::end_offsets(&cluster, &topic, &partitions).await?;
    let dir = std::env::temp_dir().join(format!("kafka-eos-example-sink-{}", std::process::id()));
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }

    // The first process: three checkpoints, then a crash mid-transaction.
    let mut job = Job::start(&bootstrap, &topic, &dir).await?;
    for _ in 0..3 {
        let next = job.write(PER_CHECKPOINT).await?;
        let id = job.coordinator.trigger_checkpoint().await?;
        println!("checkpoint {id} complete: numbers below {next} committed");
    }
    let next = job.write(10).await?;
    println!("wrote up to {next} in the open transaction, then crash (no checkpoint, no close)");
    drop(job);

    // The second process: restore, finish, a last checkpoint, close.
    let mut job = Job::start(&bootstrap, &topic, &dir).await?;
    while job.write(PER_CHECKPOINT).await? < TOTAL {
        let id = job.coordinator.trigger_checkpoint().await?;
        println!("checkpoint {id} complete");
    }
    let id = job.coordinator.trigger_checkpoint().await?;
    println!("checkpoint {id} complete: all {TOTAL} numbers committed");
    job.sink.lock().await.close().await?;
    std::fs::remove_dir_all(&dir)?;

    // Check: every number exactly once, in order (one partition).
    let read = support::read_committed_from(&cluster, &topic, &start).await?;
    let numbers: Vec<u64> = read
        .iter()
        .map(|r| support::value(r).parse())
        .collect::<Result<_, _>>()?;
    println!("read_committed sees {} numbers of this run", numbers.len());
    support::check(
        numbers == (0..TOTAL).collect::<Vec<_>>(),
        format!("0..{TOTAL} exactly once and in order (saw {numbers:?})"),
    )?;
    println!("ok: the crashed transaction's records are gone, every number is there exactly once");
    Ok(())
}
