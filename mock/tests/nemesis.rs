//! kafka-mock's seeded nemesis: its choices follow from the seed alone, it
//! heals the cluster when stopped, and an idempotent producer running
//! through it delivers every acknowledged record exactly once, in order.

use kafka_client::{Cluster, ClusterConfig};
use kafka_consumer::{Reader, ReaderConfig};
use kafka_mock::{
    MockCluster, Nemesis, NemesisConfig, NemesisFault, NemesisReport, NemesisTargets,
};
use kafka_producer::{Producer, ProducerConfig, ProducerRecord};
use std::collections::BTreeMap;
use std::time::Duration;

use crate::common;

async fn cluster() -> MockCluster {
    let mock = common::cluster(3).await;
    mock.create_topic("t", 3).unwrap();
    mock
}

fn targets() -> NemesisTargets {
    NemesisTargets {
        topics: vec![("t".into(), 3)],
        transactional_ids: vec!["tx".into()],
        groups: vec!["g".into()],
    }
}

/// Runs a fast nemesis (faults every 1-3 ms, outages of 1-3 ms) on a fresh
/// cluster until it has drawn `draws` faults. No request takes the queued
/// faults, so every request fault drawn is queued (no bound per API): the
/// report shows every draw.
async fn run_until_drawn(seed: u64, draws: u64) -> (NemesisReport, MockCluster) {
    let mock = cluster().await;
    let nemesis = Nemesis::new(NemesisConfig {
        seed,
        pause: (Duration::from_millis(1), Duration::from_millis(3)),
        outage: (Duration::from_millis(1), Duration::from_millis(3)),
        request_timeout: Duration::from_millis(50),
        max_queued_per_api: usize::MAX,
        ..NemesisConfig::default()
    });
    nemesis.set_targets(targets());
    let stop = async {
        nemesis.drawn_at_least(draws).await;
        nemesis.stop();
    };
    let (report, ()) = tokio::join!(nemesis.run(&mock), stop);
    (report, mock)
}

/// Invariant: the faults follow from the seed alone: two runs with one
/// seed make the same choices in the same order (however many each ran
/// for); another seed makes others.
#[tokio::test]
async fn one_seed_makes_the_same_faults_in_the_same_order() {
    let (a, _) = run_until_drawn(1234, 150).await;
    let (b, _) = run_until_drawn(1234, 90).await;
    let (c, _) = run_until_drawn(99, 90).await;
    let n = a.log.len().min(b.log.len());
    assert!(n >= 20, "only {n} faults");
    assert_eq!(a.log[..n], b.log[..n]);
    let m = n.min(c.log.len());
    assert_ne!(a.log[..m], c.log[..m]);
    // Every kind is drawn.
    let kinds: Vec<NemesisFault> = a.counts.keys().copied().collect();
    assert_eq!(kinds, NemesisFault::ALL.to_vec(), "{:?}", a.counts);
}

/// Invariant: a stopped nemesis leaves a healthy cluster: no fault queued,
/// every broker up and reachable (a produce to every partition succeeds).
#[tokio::test]
async fn a_stopped_nemesis_heals_the_cluster() {
    let (report, mock) = run_until_drawn(7, 100).await;
    assert!(report.counts.values().sum::<u64>() > 0);
    assert_eq!(mock.pending_faults(), 0);
    let producer = Producer::connect(ProducerConfig::new(&mock.bootstrap()))
        .await
        .unwrap();
    for p in 0..3 {
        producer
            .send(ProducerRecord::new("t").partition(p).value("after"))
            .await
            .unwrap_or_else(|e| panic!("partition {p} after the nemesis: {e}"));
    }
}

/// Invariant: request faults do not pile up for an API nobody sends: at
/// most `max_queued_per_api` wait queued per API, the other draws are
/// skipped. (A soak's slow schedules met dozens of faults queued for
/// their next EndTxn or AddPartitionsToTxn, each a timeout and a retry,
/// and grew slower the longer they ran: past 300 s under load.)
#[tokio::test]
async fn request_faults_do_not_pile_up_for_an_api_nobody_sends() {
    use kafka_proto::ApiKey;
    for max in [1, 3] {
        let mock = cluster().await;
        let nemesis = Nemesis::new(NemesisConfig {
            seed: 5,
            kinds: vec![
                NemesisFault::Error,
                NemesisFault::LostAnswer,
                NemesisFault::DisconnectAfter,
                NemesisFault::DisconnectBefore,
                NemesisFault::Delay,
            ],
            apis: vec![ApiKey::EndTxn, ApiKey::AddPartitionsToTxn],
            pause: (Duration::from_millis(1), Duration::from_millis(3)),
            request_timeout: Duration::from_millis(50),
            max_queued_per_api: max,
            ..NemesisConfig::default()
        });
        let queued = async {
            // 100 faults drawn, with no request to hit them.
            nemesis.drawn_at_least(100).await;
            let queued = (
                mock.pending_faults_for(ApiKey::EndTxn),
                mock.pending_faults_for(ApiKey::AddPartitionsToTxn),
            );
            nemesis.stop();
            queued
        };
        let (report, queued) = tokio::join!(nemesis.run(&mock), queued);
        let seen = format!("{:?}, {} skipped", report.counts, report.skipped);
        assert_eq!(queued, (max, max), "{seen}");
        assert_eq!(report.log.len(), 2 * max, "{:?}", report.log);
        assert!(report.skipped >= 100 - 2 * max as u64, "{seen}");
    }
}

/// Invariant: with every kind of fault (lost answers, late requests,
/// moved leaders, stopped brokers), an idempotent producer's acknowledged
/// records are each in the log exactly once, in the order sent per
/// partition.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idempotent_producer_loses_and_duplicates_nothing_through_the_nemesis() {
    let mock = cluster().await;
    let nemesis = Nemesis::new(NemesisConfig {
        seed: 20261204,
        pause: (Duration::from_millis(5), Duration::from_millis(60)),
        request_timeout: Duration::from_millis(500),
        ..NemesisConfig::default()
    });
    nemesis.set_targets(targets());
    let work = async {
        let config =
            common::producer_config(&mock, &[("request.timeout.ms", "500"), ("linger.ms", "2")]);
        let producer = Producer::connect(config).await.unwrap();
        let mut sends = Vec::new();
        for i in 0..1500u32 {
            sends.push(
                producer.send(
                    ProducerRecord::new("t")
                        .partition((i % 3) as i32)
                        .value(i.to_string()),
                ),
            );
            if i % 50 == 49 {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        let mut acked = Vec::new();
        for (i, s) in sends.into_iter().enumerate() {
            if s.await.is_ok() {
                acked.push(i as u32);
            }
        }
        // However fast the sends went, the producer met at least the
        // first 60 draws of the seed (eight kinds or more among them).
        nemesis.drawn_at_least(60).await;
        nemesis.stop();
        acked
    };
    let (report, acked) = tokio::join!(nemesis.run(&mock), work);
    assert!(report.counts.len() >= 8, "{:?}", report.counts);
    let cluster = Cluster::connect(ClusterConfig::new(&mock.bootstrap()))
        .await
        .unwrap();
    let mut reader = Reader::new(cluster, ReaderConfig::default());
    let records = reader.read_to_end("t", &[0, 1, 2]).await.unwrap();
    let mut by_partition: BTreeMap<i32, Vec<u32>> = BTreeMap::new();
    for r in &records {
        let v = std::str::from_utf8(r.value.as_deref().unwrap())
            .unwrap()
            .parse()
            .unwrap();
        by_partition.entry(r.partition).or_default().push(v);
    }
    let mut seen: Vec<u32> = by_partition.values().flatten().copied().collect();
    seen.sort_unstable();
    let unique = seen.len();
    seen.dedup();
    assert_eq!(unique, seen.len(), "a record written twice");
    for i in &acked {
        assert!(seen.binary_search(i).is_ok(), "acknowledged {i} is missing");
    }
    for (p, values) in &by_partition {
        assert!(
            values.windows(2).all(|w| w[0] < w[1]),
            "partition {p} out of order: {values:?}"
        );
    }
    eprintln!(
        "{} of 1500 acknowledged, {} in the log, faults {:?}",
        acked.len(),
        records.len(),
        report.counts
    );
}
