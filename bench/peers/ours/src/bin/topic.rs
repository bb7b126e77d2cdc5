//! Topics for `bench/compare.sh`, through kafka-producer's admin client:
//!
//! ```text
//! bench-topic BOOTSTRAP create TOPIC PARTITIONS
//! bench-topic BOOTSTRAP delete TOPIC
//! ```
//!
//! `create` returns once every partition has accepted a write (one record
//! `ready` per partition, acks=all): a partition can be in the metadata with
//! a leader while that broker still refuses produce requests for it
//! (NOT_LEADER_OR_FOLLOWER) for a moment, and a client that answers this with
//! a metadata refresh (franz-go waits at least `MetadataMinAge`, 5 s, between
//! refreshes) would pay for the topic's creation inside its timed run.

use kafka_eos::admin::{self, NewTopic};
use kafka_eos::client::{Cluster, ClusterConfig};
use kafka_eos::producer::{Producer, ProducerConfig, ProducerRecord};
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(60);

fn usage() -> ! {
    eprintln!(
        "usage: bench-topic BOOTSTRAP create TOPIC PARTITIONS | bench-topic BOOTSTRAP delete TOPIC"
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
            _ => usage(),
        }
        Ok::<_, Box<dyn std::error::Error>>(())
    };
    if let Err(e) = run.await {
        eprintln!("bench-topic: {topic}: {e}");
        std::process::exit(1);
    }
}
