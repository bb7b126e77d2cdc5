//! A small exactly-once pipeline process: a deterministic source of
//! `--records N` numbered records (its offset is checkpointed state) → the
//! Kafka sink (EXACTLY_ONCE) under the checkpoint driver, checkpointing every
//! `--interval-ms`. Killed at any point and restarted with the same
//! arguments, it resumes from the last complete checkpoint; the topic ends
//! up with every number exactly once. `tests/tests/sink_kafka_soak.rs`
//! SIGKILLs it repeatedly. (`examples/exactly_once_sink.rs` shows the same
//! pipeline, crash and recovery in one self-checking program.)
//!
//! ```text
//! cargo run -p kafka-eos-tests --bin sink_pipeline -- \
//!     --bootstrap 127.0.0.1:9092 --topic numbers --checkpoint-dir /tmp/cp \
//!     --records 3000 --interval-ms 100 --rate 500 --prefix numbers-job
//! ```
//!
//! Record `i` has key `i % 8` and value `i` (decimal); with
//! `SinkPartitioner::None` keys are hashed like the Java client, so each
//! partition's values must come out increasing. Exit status 0 after the
//! final checkpoint committed everything (prints `pipeline finished`).

use std::collections::HashMap;
use std::error::Error;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kafka_sink::RecordContext;
use kafka_sink::kafka::{KafkaSink, KafkaSinkConfig, KafkaSinkRecord, Semantic, SinkPartitioner};
use kafka_sink::{CheckpointCoordinator, CheckpointStorage, OperatorInfo, SourcePosition};
use tokio::sync::Mutex;

type BoxError = Box<dyn Error + Send + Sync>;

fn args() -> Result<HashMap<String, String>, BoxError> {
    let mut out = HashMap::new();
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let key = k
            .strip_prefix("--")
            .ok_or_else(|| format!("expected --key value, got {k:?}"))?;
        let v = it.next().ok_or_else(|| format!("--{key} needs a value"))?;
        out.insert(key.to_string(), v);
    }
    Ok(out)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), BoxError> {
    let a = args()?;
    let get = |k: &str, default: Option<&str>| -> Result<String, BoxError> {
        a.get(k)
            .cloned()
            .or(default.map(str::to_string))
            .ok_or_else(|| format!("missing --{k}").into())
    };
    let bootstrap = get("bootstrap", None)?;
    let topic = get("topic", None)?;
    let dir = get("checkpoint-dir", None)?;
    let total: u64 = get("records", Some("3000"))?.parse()?;
    let interval = Duration::from_millis(get("interval-ms", Some("100"))?.parse()?);
    let rate: u64 = get("rate", Some("0"))?.parse()?; // records/s, 0 = unthrottled
    let prefix = get("prefix", Some("sink-pipeline"))?;
    let started = Instant::now();

    let mut config = KafkaSinkConfig::from_properties(
        [
            ("bootstrap.servers", bootstrap.as_str()),
            ("linger.ms", "5"),
            ("max.block.ms", "30000"),
        ],
        &topic,
    )?;
    config.semantic = Semantic::ExactlyOnce;
    config.transactional_id_prefix = Some(prefix);
    config.transaction_timeout = Duration::from_secs(60);
    config.recovery_timeout = Duration::from_secs(30);
    config.set_partitioner(SinkPartitioner::None);
    let sink = KafkaSink::connect(config, |i: &u64| {
        KafkaSinkRecord::keyed((i % 8).to_string(), i.to_string())
    })
    .await?;
    let sink = Arc::new(Mutex::new(sink));
    let source = Arc::new(Mutex::new(SourcePosition::default()));

    let mut coordinator = CheckpointCoordinator::new(CheckpointStorage::open(&dir, 3)?);
    coordinator.register(OperatorInfo::new("source", 0, 1), source.clone())?;
    coordinator.register(OperatorInfo::new("sink", 0, 1), sink.clone())?;
    let restored = coordinator.restore().await?;
    let from = source.lock().await.next;
    eprintln!(
        "pipeline: restored checkpoint {restored:?}, resuming at record {from} ({:?})",
        started.elapsed()
    );

    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let checkpointer = tokio::spawn(async move {
        let r = coordinator
            .run_periodic(interval, async {
                let _ = stop_rx.await;
            })
            .await;
        r.map(|()| coordinator)
    });

    // Moves records under both operators' locks (registration order), so a
    // checkpoint never falls between reading a record and writing it.
    const BATCH: u64 = 10;
    let pause = (rate > 0).then(|| Duration::from_micros(BATCH * 1_000_000 / rate));
    loop {
        if checkpointer.is_finished() {
            break;
        }
        let finished = {
            let mut src = source.lock().await;
            let mut snk = sink.lock().await;
            let end = (src.next + BATCH).min(total);
            while src.next < end {
                snk.invoke(src.next, &RecordContext::default()).await?;
                src.next += 1;
            }
            src.next >= total
        };
        if finished {
            break;
        }
        if let Some(p) = pause {
            tokio::time::sleep(p).await;
        }
    }
    let _ = stop_tx.send(());
    let mut coordinator = checkpointer.await??;
    // A last checkpoint commits the tail.
    let last = coordinator.trigger_checkpoint().await?;
    sink.lock().await.close().await?;
    println!(
        "pipeline finished: {total} records, last checkpoint {last} ({:?})",
        started.elapsed()
    );
    Ok(())
}
