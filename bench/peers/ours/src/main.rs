//! Our side of `bench/compare.sh`: the workload of `bench/peers/shared/args.rs`
//! through `kafka_eos::producer::Producer` (idempotent) or
//! `kafka_eos::producer::TransactionalProducer` (`--txn-ms`), one JSON result line
//! on stdout, exit 0 only when every record was acknowledged.
//!
//! The loop, the same in `bench/peers/rdkafka` and `bench/peers/franz-go`: a
//! FIFO of send futures, the oldest awaited once more than `--window` are
//! outstanding; with `--txn-ms`, after each send, a commit once the
//! transaction is that old, its latency being the duration of
//! `commit_transaction` (which flushes and waits for every outstanding
//! record). The send futures are kept unboxed (one `ProducerRecord` per
//! record, the value a clone of one shared `Bytes`).

#[path = "../../shared/args.rs"]
mod args;

use args::Workload;
use bytes::Bytes;
use kafka_eos::producer::{
    ProduceError, Producer, ProducerConfig, ProducerRecord, RecordMetadata, TransactionalProducer,
};
use std::collections::VecDeque;
use std::future::Future;
use std::time::{Duration, Instant};

type Error = Box<dyn std::error::Error>;

fn config(w: &Workload) -> Result<ProducerConfig, Error> {
    let mut props = vec![
        ("bootstrap.servers", w.bootstrap.as_str()),
        ("acks", "all"),
        ("enable.idempotence", "true"),
        ("linger.ms", "5"),
        ("batch.size", "16384"),
        ("compression.type", w.compression.as_str()),
    ];
    if w.txn_every.is_some() {
        props.push(("transactional.id", w.txn_id.as_str()));
    }
    Ok(ProducerConfig::from_properties(props)?)
}

fn record(w: &Workload, i: u64, value: &Bytes) -> ProducerRecord {
    let r = ProducerRecord::new(w.topic.as_str()).value(value.clone());
    if w.keyed { r.key(i.to_string()) } else { r }
}

/// The timed loop; `txn` is the producer to commit on and how often.
async fn timed<S, F>(
    w: &Workload,
    send: S,
    txn: Option<(&TransactionalProducer, Duration)>,
) -> Result<(f64, Vec<Duration>), Error>
where
    S: Fn(ProducerRecord) -> F,
    F: Future<Output = Result<RecordMetadata, ProduceError>>,
{
    let value = Bytes::from(w.value());
    let mut pending: VecDeque<F> = VecDeque::with_capacity(w.window + 1);
    let mut commits = Vec::new();
    let t0 = Instant::now();
    if let Some((p, _)) = txn {
        p.begin_transaction()?;
    }
    let mut txn_start = Instant::now();
    for i in 0..w.records {
        pending.push_back(send(record(w, i, &value)));
        if pending.len() > w.window {
            pending.pop_front().expect("non-empty").await?;
        }
        if let Some((p, every)) = txn
            && txn_start.elapsed() >= every
        {
            let c = Instant::now();
            p.commit_transaction().await?;
            commits.push(c.elapsed());
            for f in pending.drain(..) {
                f.await?;
            }
            p.begin_transaction()?;
            txn_start = Instant::now();
        }
    }
    if let Some((p, _)) = txn {
        let c = Instant::now();
        p.commit_transaction().await?;
        commits.push(c.elapsed());
    }
    for f in pending {
        f.await?;
    }
    Ok((t0.elapsed().as_secs_f64(), commits))
}

async fn run(w: &Workload) -> Result<(f64, Vec<Duration>), Error> {
    let c = config(w)?;
    let warm = || ProducerRecord::new(w.topic.as_str()).value(Bytes::from_static(b"w"));
    // Metadata and the producer id before the clock starts.
    match w.txn_every {
        None => {
            let p = Producer::connect(c).await?;
            p.send(warm()).await?;
            let r = timed(w, |r| p.send(r), None).await?;
            p.close(Duration::from_secs(60)).await?;
            Ok(r)
        }
        Some(every) => {
            let p = TransactionalProducer::connect(c).await?;
            p.init_transactions().await?;
            p.begin_transaction()?;
            p.send(warm()).await?;
            p.commit_transaction().await?;
            let r = timed(w, |r| p.send(r), Some((&p, every))).await?;
            p.close(Duration::from_secs(60)).await?;
            Ok(r)
        }
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let w = Workload::from_args();
    match run(&w).await {
        Ok((secs, commits)) => w.print_result("ours", secs, &commits),
        Err(e) => {
            eprintln!("bench-ours: {e}");
            std::process::exit(1);
        }
    }
}
