//! Topics for `bench/compare.sh`, through kafka-producer's admin client:
//!
//! ```text
//! bench-topic BOOTSTRAP create TOPIC PARTITIONS   # returns once every partition has a leader
//! bench-topic BOOTSTRAP delete TOPIC
//! ```

use kafka_producer::admin::{self, NewTopic};
use kafka_producer::{Cluster, ClusterConfig};
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
