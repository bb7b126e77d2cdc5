//! librdkafka's side of `bench/compare.sh`: the workload of
//! `bench/peers/shared/args.rs` through the `rdkafka` crate's
//! `FutureProducer`, one JSON result line on stdout, exit 0 only when every
//! record was acknowledged.
//!
//! The loop is the one of `bench/peers/ours`: a FIFO of delivery futures,
//! the oldest awaited once more than `--window` are outstanding; with
//! `--txn-ms`, after each send, a commit once the transaction is that old,
//! its latency being the duration of the commit call (librdkafka's
//! `commit_transaction` flushes and waits for every outstanding record).

#[path = "../../shared/args.rs"]
mod args;

use args::Workload;
use rdkafka::ClientConfig;
use rdkafka::producer::{DeliveryFuture, FutureProducer, FutureRecord, Producer};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

type Error = Box<dyn std::error::Error>;

const TIMEOUT: Duration = Duration::from_secs(60);

fn producer(w: &Workload) -> Result<FutureProducer, Error> {
    let mut c = ClientConfig::new();
    c.set("bootstrap.servers", &w.bootstrap)
        .set("acks", "all")
        .set("enable.idempotence", "true")
        .set("linger.ms", "5")
        .set("batch.size", "16384")
        .set("compression.type", &w.compression)
        // Java's key hash, as ours and franz-go use (librdkafka's default
        // hashes keys with CRC32); null keys stay sticky
        // (sticky.partitioning.linger.ms).
        .set("partitioner", "murmur2_random")
        // The default (100,000 messages) must not be what limits the window.
        .set(
            "queue.buffering.max.messages",
            (2 * w.window).max(100_000).to_string(),
        );
    if w.txn_every.is_some() {
        c.set("transactional.id", &w.txn_id);
    }
    Ok(c.create()?)
}

fn send(
    p: &FutureProducer,
    w: &Workload,
    key: Option<&str>,
    value: &[u8],
) -> Result<DeliveryFuture, Error> {
    let mut r = FutureRecord::<str, [u8]>::to(&w.topic).payload(value);
    if let Some(k) = key {
        r = r.key(k);
    }
    p.send_result(r)
        .map_err(|(e, _)| format!("send refused: {e}").into())
}

async fn acked(f: DeliveryFuture) -> Result<(), Error> {
    match f.await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err((e, _))) => Err(format!("record failed: {e}").into()),
        Err(_) => Err("delivery future cancelled".into()),
    }
}

async fn run(w: &Workload) -> Result<(f64, Vec<Duration>), Error> {
    let p = producer(w)?;
    let value = w.value();
    // Metadata and the producer id before the clock starts.
    if w.txn_every.is_some() {
        p.init_transactions(TIMEOUT)?;
        p.begin_transaction()?;
    }
    acked(send(&p, w, None, b"w")?).await?;
    if w.txn_every.is_some() {
        p.commit_transaction(TIMEOUT)?;
    }
    let mut pending: VecDeque<DeliveryFuture> = VecDeque::with_capacity(w.window + 1);
    let mut commits = Vec::new();
    let t0 = Instant::now();
    if w.txn_every.is_some() {
        p.begin_transaction()?;
    }
    let mut txn_start = Instant::now();
    for i in 0..w.records {
        let key = w.keyed.then(|| i.to_string());
        pending.push_back(send(&p, w, key.as_deref(), &value)?);
        if pending.len() > w.window {
            acked(pending.pop_front().expect("non-empty")).await?;
        }
        if let Some(every) = w.txn_every
            && txn_start.elapsed() >= every
        {
            let c = Instant::now();
            p.commit_transaction(TIMEOUT)?;
            commits.push(c.elapsed());
            for f in pending.drain(..) {
                acked(f).await?;
            }
            p.begin_transaction()?;
            txn_start = Instant::now();
        }
    }
    if w.txn_every.is_some() {
        let c = Instant::now();
        p.commit_transaction(TIMEOUT)?;
        commits.push(c.elapsed());
    }
    for f in pending {
        acked(f).await?;
    }
    let secs = t0.elapsed().as_secs_f64();
    p.flush(TIMEOUT)?;
    Ok((secs, commits))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let w = Workload::from_args();
    match run(&w).await {
        Ok((secs, commits)) => w.print_result("rdkafka", secs, &commits),
        Err(e) => {
            eprintln!("bench-rdkafka: {e}");
            std::process::exit(1);
        }
    }
}
