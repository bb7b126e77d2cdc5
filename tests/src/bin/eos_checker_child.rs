//! A transactional producer that is killed by
//! `tests/tests/producer_eos_checker.rs`: it runs transactions forever on
//! `topic` and reports on stdout what it knows:
//!
//! - `T <txn> <records>` after sending the records of transaction `txn`
//!   (each with header `id` = `c:<txn>:<i>`), just before committing;
//! - `C <txn>` once `commit_transaction` returned `Ok`.
//!
//! The parent SIGKILLs it at a moment chosen by its seed and checks that
//! every reported commit is visible exactly once and every other
//! transaction is visible entirely or not at all.
//!
//! ```text
//! eos_checker_child <bootstrap> <topic> <partitions> <transactional.id> <seed>
//! ```

use kafka_producer::{ProducerConfig, ProducerRecord, TransactionalProducer};
use std::io::Write;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [bootstrap, topic, partitions, txn_id, seed] = <[String; 5]>::try_from(args).map_err(
        |_| "usage: eos_checker_child <bootstrap> <topic> <partitions> <transactional.id> <seed>",
    )?;
    let partitions: u64 = partitions.parse()?;
    let mut state: u64 = seed.parse()?;
    let mut next = move || {
        // SplitMix64.
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let config = ProducerConfig::from_properties([
        ("bootstrap.servers", bootstrap.as_str()),
        ("transactional.id", txn_id.as_str()),
        ("buffer.memory", "32768"),
        ("linger.ms", "2"),
        ("max.block.ms", "20000"),
    ])?;
    let producer = TransactionalProducer::connect(config).await?;
    producer.init_transactions().await?;
    let mut out = std::io::stdout();
    for txn in 0u64.. {
        producer.begin_transaction()?;
        let records = 1 + next() % 40;
        let mut pending = Vec::new();
        for i in 0..records {
            let size = (next() % 3000) as usize;
            let record = ProducerRecord::new(topic.as_str())
                .partition((next() % partitions) as i32)
                .header("id", Some(format!("c:{txn}:{i}")))
                .value(vec![b'c'; size]);
            pending.push(producer.send(record));
        }
        writeln!(out, "T {txn} {records}")?;
        out.flush()?;
        producer.commit_transaction().await?;
        writeln!(out, "C {txn}")?;
        out.flush()?;
        for p in pending {
            p.await?;
        }
    }
    Ok(())
}
