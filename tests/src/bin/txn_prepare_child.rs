//! A process that crashes after pre-commit (used by
//! `tests/tests/producer_txn_broker.rs`): it opens a transaction, writes
//! `count` records `<tag>-<i>` to `topic`, prepares the transaction, writes the
//! encoded [`PreparedTransaction`](kafka_producer::txn::PreparedTransaction) to
//! `out` (atomically, through a rename), prints `READY` and blocks until it
//! is killed. Another process then finishes the transaction with
//! `kafka_producer::txn::commit_prepared`.
//!
//! ```text
//! txn_prepare_child <bootstrap> <topic> <transactional.id> <out file> <count> <tag>
//! ```

use kafka_producer::{ProducerConfig, ProducerRecord, TransactionalProducer};
use std::io::Write;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [bootstrap, topic, txn_id, out, count, tag] = <[String; 6]>::try_from(args).map_err(
        |_| "usage: txn_prepare_child <bootstrap> <topic> <transactional.id> <out> <count> <tag>",
    )?;
    let count: usize = count.parse()?;
    let config = ProducerConfig::from_properties([
        ("bootstrap.servers", bootstrap.as_str()),
        ("transactional.id", txn_id.as_str()),
    ])?;
    let producer = TransactionalProducer::connect(config).await?;
    producer.init_transactions().await?;
    producer.begin_transaction()?;
    let pending: Vec<_> = (0..count)
        .map(|i| producer.send(ProducerRecord::new(topic.as_str()).value(format!("{tag}-{i}"))))
        .collect();
    for p in pending {
        p.await?;
    }
    let prepared = producer.prepare_transaction().await?;
    let tmp = format!("{out}.tmp");
    std::fs::write(&tmp, prepared.encode())?;
    std::fs::rename(&tmp, &out)?;
    let mut stdout = std::io::stdout();
    writeln!(stdout, "READY")?;
    stdout.flush()?;
    // Crash here: the test sends SIGKILL.
    std::future::pending::<()>().await;
    Ok(())
}
