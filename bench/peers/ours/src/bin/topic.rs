//! Topics for `bench/compare.sh`, through kafka-producer's admin client:
//!
//! ```text
//! bench-topic BOOTSTRAP create TOPIC PARTITIONS
//! bench-topic BOOTSTRAP delete TOPIC
//! bench-topic BOOTSTRAP fill TOPIC PARTITIONS RECORDS SIZE [TXN_RECORDS]
//! ```
//!
//! `create` returns once every partition has accepted a write (one record
//! `ready` per partition, acks=all): a partition can be in the metadata with
//! a leader while that broker still refuses produce requests for it
//! (NOT_LEADER_OR_FOLLOWER) for a moment, and a client that answers this with
//! a metadata refresh (franz-go waits at least `MetadataMinAge`, 5 s, between
//! refreshes) would pay for the topic's creation inside its timed run.
//!
//! `fill` creates the topic and writes the input of the consume and copy
//! workloads: RECORDS values of SIZE bytes (`a`..`z` repeated, the content
//! of `bench/peers/shared/args.rs`), record i to partition i mod PARTITIONS,
//! idempotent, acks=all. With TXN_RECORDS, in transactions of that many
//! records, every third one aborted: RECORDS committed records and half as
//! many aborted ones, whose values start with `x` (a consumer that delivers
//! one under read_committed fails its run). No `ready` records: every record
//! of the topic is a workload record. Prints `committed=N aborted=M`.

use kafka_eos::admin::{self, NewTopic};
use kafka_eos::client::{Cluster, ClusterConfig};
use kafka_eos::producer::{Producer, ProducerConfig, ProducerRecord, TransactionalProducer};
use std::collections::VecDeque;
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(60);

fn usage() -> ! {
    eprintln!(
        "usage: bench-topic BOOTSTRAP create TOPIC PARTITIONS | bench-topic BOOTSTRAP delete TOPIC\n\
         \x20      bench-topic BOOTSTRAP fill TOPIC PARTITIONS RECORDS SIZE [TXN_RECORDS]"
    );
    std::process::exit(2)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let (bootstrap, topic) = match a.as_slice() {
        [b, _, t, ..] => (b, t),
        _ => usage(),
    };
    let run = async {
        let cluster = Cluster::connect(ClusterConfig::new(bootstrap)).await?;
        match a.as_slice() {
            [_, cmd, _, partitions] if cmd == "create" => {
                let partitions: i32 = partitions.parse().unwrap_or_else(|_| usage());
                let t = NewTopic::new(topic.as_str()).with_partitions(partitions);
                admin::ensure_topic(&cluster, &t, TIMEOUT).await?;
                let c = ProducerConfig::from_properties([
                    ("bootstrap.servers", bootstrap.as_str()),
                    ("acks", "all"),
                ])?;
                let p = Producer::connect(c).await?;
                let sends: Vec<_> = (0..partitions)
                    .map(|i| {
                        p.send(
                            ProducerRecord::new(topic.as_str())
                                .partition(i)
                                .value("ready"),
                        )
                    })
                    .collect();
                for s in sends {
                    s.await?;
                }
                p.close(TIMEOUT).await?;
            }
            [_, cmd, _] if cmd == "delete" => {
                for r in admin::delete_topics(&cluster, &[topic.as_str()], TIMEOUT).await? {
                    r.outcome?;
                }
            }
            [_, cmd, _, partitions, records, size, rest @ ..]
                if cmd == "fill" && rest.len() <= 1 =>
            {
                let num = |s: &String| s.parse::<u64>().unwrap_or_else(|_| usage());
                let partitions = num(partitions) as i32;
                let t = NewTopic::new(topic.as_str()).with_partitions(partitions);
                admin::ensure_topic(&cluster, &t, TIMEOUT).await?;
                let fill = Fill {
                    bootstrap,
                    topic,
                    partitions,
                    records: num(records),
                    size: num(size) as usize,
                };
                let (committed, aborted) = match rest.first() {
                    None => (fill.plain().await?, 0),
                    Some(per_txn) => fill.transactional(num(per_txn).max(1)).await?,
                };
                println!("committed={committed} aborted={aborted}");
            }
            _ => usage(),
        }
        Ok::<_, Box<dyn std::error::Error>>(())
    };
    if let Err(e) = run.await {
        eprintln!("bench-topic: {topic}: {e}");
        std::process::exit(1);
    }
}

type Error = Box<dyn std::error::Error>;

/// Sends at most this many records ahead of their acknowledgements.
const WINDOW: usize = 100_000;

/// The input of a consume or copy workload.
struct Fill<'a> {
    bootstrap: &'a str,
    topic: &'a str,
    partitions: i32,
    records: u64,
    size: usize,
}

impl Fill<'_> {
    fn config(&self, txn_id: Option<&str>) -> Result<ProducerConfig, Error> {
        let mut props = vec![
            ("bootstrap.servers", self.bootstrap),
            ("acks", "all"),
            ("enable.idempotence", "true"),
            ("linger.ms", "5"),
        ];
        if let Some(id) = txn_id {
            props.push(("transactional.id", id));
        }
        Ok(ProducerConfig::from_properties(props)?)
    }

    fn value(&self, aborted: bool) -> bytes::Bytes {
        let mut v: Vec<u8> = (0..self.size).map(|i| b'a' + (i % 26) as u8).collect();
        if aborted {
            v[0] = b'x';
        }
        v.into()
    }

    fn record(&self, i: u64, value: &bytes::Bytes) -> ProducerRecord {
        ProducerRecord::new(self.topic)
            .partition((i % self.partitions as u64) as i32)
            .value(value.clone())
    }

    /// `records` records, idempotent; returns how many were acknowledged.
    async fn plain(&self) -> Result<u64, Error> {
        let p = Producer::connect(self.config(None)?).await?;
        let value = self.value(false);
        let mut pending = VecDeque::with_capacity(WINDOW + 1);
        for i in 0..self.records {
            pending.push_back(p.send(self.record(i, &value)));
            if pending.len() > WINDOW {
                pending.pop_front().expect("non-empty").await?;
            }
        }
        for f in pending {
            f.await?;
        }
        p.close(TIMEOUT).await?;
        Ok(self.records)
    }

    /// `records` committed records in transactions of `per_txn`, every
    /// third transaction aborted; returns (committed, aborted).
    async fn transactional(&self, per_txn: u64) -> Result<(u64, u64), Error> {
        let txn_id = format!("{}-fill", self.topic);
        let p = TransactionalProducer::connect(self.config(Some(&txn_id))?).await?;
        p.init_transactions().await?;
        let (good, bad) = (self.value(false), self.value(true));
        let (mut committed, mut aborted, mut i) = (0u64, 0u64, 0u64);
        for txn in 0u64.. {
            if committed >= self.records {
                break;
            }
            let abort = txn % 3 == 2;
            let n = if abort {
                per_txn
            } else {
                per_txn.min(self.records - committed)
            };
            p.begin_transaction()?;
            let value = if abort { &bad } else { &good };
            let sends: Vec<_> = (0..n).map(|k| p.send(self.record(i + k, value))).collect();
            i += n;
            if abort {
                // Written first (an abort drops the records not yet sent),
                // then aborted: the log holds them under an abort marker.
                for s in sends {
                    s.await?;
                }
                p.abort_transaction().await?;
                aborted += n;
            } else {
                p.commit_transaction().await?;
                for s in sends {
                    s.await?;
                }
                committed += n;
            }
        }
        p.close(TIMEOUT).await?;
        Ok((committed, aborted))
    }
}
