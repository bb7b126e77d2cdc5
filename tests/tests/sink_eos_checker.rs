//! A randomized exactly-once checker for the EXACTLY_ONCE Kafka sink against
//! real brokers (the harness's shared clusters, one test per variant): Kafka
//! 4.4 with transaction version 2, 4.4 formatted with transaction.version=1,
//! and 3.9. Every schedule writes to a topic and transactional ids of its own.
//!
//! A numbered source (record `i` has value `i`) feeds the sink under a
//! seeded schedule (printed; `EOS_SEED=<seed>` replays it,
//! `EOS_SCHEDULES=<n>` runs `n` per variant, 3 by default) of: invoke the
//! next record; invoke a record that fails (larger than
//! `max.request.size`; the source delivers it intact after a replay);
//! checkpoint (the sink's state and the source position are stored
//! together once the snapshot succeeded); notify the latest checkpoint;
//! crash (the sink is dropped without closing) and restore from the latest
//! checkpoint, which rewinds the source; fail over in-process (the same sink
//! instance restores the latest checkpoint, as after a failure elsewhere in
//! the pipeline). After a failed invoke, checkpoint or notification the
//! schedule picks a restart (new instance) or an in-process failover — with
//! tiny `buffer.memory` and `batch.size` and random `linger.ms`.
//!
//! Invariant, checked with a read_committed reader after the last
//! checkpoint is notified: the topic holds exactly records `0..n` of the
//! source position `n` of that checkpoint, each once, in order; nothing of
//! a failed, crashed or aborted transaction is visible.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::brokers::Brokers;
use crate::support::nemesis::{ScheduleSetup, Targets};
use kafka_client::{Cluster, ClusterConfig};
use kafka_consumer::{Reader, ReaderConfig};
use kafka_producer::ProducerConfig;
use kafka_sink::kafka::{KafkaSink, KafkaSinkConfig, Semantic, SimpleStringSchema, ValueOnly};
use kafka_sink::{CheckpointedOperator, RecordContext, RestoredState};
use kafka_testcontainers::{SeededRng as Rng, schedule_seeds};
use kafka_testcontainers::{SharedKafka, unique_name};

/// The checker's invariant (module documentation) on Kafka 4.4 with
/// transaction version 2 (KIP-890).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exactly_once_sink_checker_kafka_4_4_tv2() {
    run(SharedKafka::Kafka44Tv2).await;
}

/// The checker's invariant (module documentation) on Kafka 4.4 formatted
/// with transaction version 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exactly_once_sink_checker_kafka_4_4_tv1() {
    run(SharedKafka::Kafka44Tv1).await;
}

/// The checker's invariant (module documentation) on Kafka 3.9.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exactly_once_sink_checker_kafka_3_9() {
    run(SharedKafka::Kafka39).await;
}

/// Seed 76425911989 on Kafka 4.4 with transaction version 1, which once
/// failed: checkpoint 2's transaction was committed by its notification; a
/// restart restored checkpoint 2 and the new sink began a transaction
/// under the same id (one epoch on); an in-process failover aborted that
/// one, then restored checkpoint 2 again and found the id one epoch on and
/// aborting — which it took for a coordinator's timeout abort of the
/// committed transaction, 219 ms old, and reported it lost. The replay must
/// pass the checker's invariant.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restore_after_a_later_run_reused_and_aborted_the_id_kafka_4_4_tv1() {
    run_seeds(SharedKafka::Kafka44Tv1, &[76_425_911_989]).await;
}

async fn run(variant: SharedKafka) {
    let (seeds, _) = schedule_seeds(3);
    run_seeds(variant, &seeds).await;
}

async fn run_seeds(variant: SharedKafka, seeds: &[u64]) {
    let kafka = variant.cluster().await.expect("shared cluster");
    let cluster = Cluster::connect(ClusterConfig::new(&kafka.bootstrap()))
        .await
        .unwrap();
    let name = format!("Kafka {variant}");
    let (mut operations, mut records) = (0, 0);
    for seed in seeds {
        let t = Instant::now();
        let (ops, n) = schedule(kafka, &cluster, *seed, &ScheduleSetup::default()).await;
        operations += ops;
        records += n;
        eprintln!(
            "{name}: sink schedule seed={seed} passed in {:?}: {ops} operations, {n} records committed",
            t.elapsed()
        );
    }
    eprintln!(
        "{name}: totals: {} schedules, {operations} operations, {records} records, 0 violations",
        seeds.len()
    );
}

/// A completed checkpoint: the sink's state and the source position.
struct Stored {
    id: u64,
    position: u64,
    state: Vec<u8>,
}

fn restored_state(latest: Option<&Stored>) -> Option<RestoredState> {
    latest.map(|c| RestoredState {
        checkpoint_id: c.id,
        own: vec![c.state.clone()],
        union: vec![c.state.clone()],
        previous_parallelism: Some(1),
    })
}

/// How many times a restore is tried before the schedule fails: once on
/// a healthy cluster; under broker faults a failed restore is a job
/// restart, tried again half a second later (a minute in all), as Flink's
/// fixed-delay restart strategy would.
fn restore_attempts(faulted: bool) -> usize {
    if faulted { 120 } else { 1 }
}

/// A new sink restored from `latest` (or fresh); returns it and the source
/// position to resume from.
async fn restore(
    config: &KafkaSinkConfig,
    latest: Option<&Stored>,
    faulted: bool,
) -> (KafkaSink<String>, u64) {
    let mut last_error = String::new();
    for attempt in 0..restore_attempts(faulted) {
        if attempt > 0 {
            // Flink's fixed-delay restart strategy: a job restart waits.
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        let mut s = match KafkaSink::connect(config.clone(), ValueOnly(SimpleStringSchema)).await {
            Ok(s) => s,
            Err(e) => {
                last_error = format!("connect: {e}");
                continue;
            }
        };
        match s.initialize_state(restored_state(latest)).await {
            Ok(()) => return (s, latest.map_or(0, |c| c.position)),
            Err(e) => last_error = format!("restore: {e}"),
        }
    }
    panic!("the sink could not be restored: {last_error}");
}

/// Recovers from a failure: in-process (the same instance restores `latest`)
/// or by a restart (the instance is dropped without closing, a new one
/// restores).
async fn recover(
    config: &KafkaSinkConfig,
    sink: KafkaSink<String>,
    latest: Option<&Stored>,
    in_process: bool,
    faulted: bool,
) -> (KafkaSink<String>, u64) {
    if in_process {
        let mut sink = sink;
        match sink.initialize_state(restored_state(latest)).await {
            Ok(()) => (sink, latest.map_or(0, |c| c.position)),
            Err(e) if faulted => {
                // The failover failed too: the job restarts.
                drop(sink);
                let _ = e;
                restore(config, latest, faulted).await
            }
            Err(e) => panic!("in-process failover: {e}"),
        }
    } else {
        drop(sink);
        restore(config, latest, faulted).await
    }
}

fn how(in_process: bool) -> &'static str {
    if in_process {
        "in-process failover"
    } else {
        "restart"
    }
}

/// One seeded schedule (see the module docs); returns the operations run
/// and the records committed. `setup` is the faulted mode's (`eos_faults`)
/// or the default.
pub(crate) async fn schedule(
    kafka: &dyn Brokers,
    cluster: &Arc<Cluster>,
    seed: u64,
    setup: &ScheduleSetup,
) -> (usize, u64) {
    let faulted = setup.quiesce.is_some();
    let mut rng = Rng::new(seed);
    let topic = unique_name(&format!("eos-sink-{seed}"));
    kafka
        .create_topic(&topic, 1, setup.replication.max(1))
        .await;
    let buffer_memory = rng.pick(&[16_384u64, 32_768, 1_048_576]);
    let batch_size = rng.pick(&[512u64, 4_096, 16_384]).min(buffer_memory);
    let linger = rng.pick(&[0u64, 2, 20]);
    let batch_max = crate::producer_eos_checker::batch_max_size(seed, batch_size, 100_000);
    let mut props: Vec<(String, String)> = vec![
        ("bootstrap.servers".into(), kafka.bootstrap()),
        ("buffer.memory".into(), buffer_memory.to_string()),
        ("batch.size".into(), batch_size.to_string()),
        ("linger.ms".into(), linger.to_string()),
        ("max.request.size".into(), "100000".to_string()),
        ("batch.max.size".into(), batch_max.to_string()),
        ("max.block.ms".into(), "30000".to_string()),
    ];
    for (k, v) in &setup.producer_props {
        props.retain(|(key, _)| key != k);
        props.push((k.clone(), v.clone()));
    }
    eprintln!(
        "seed {seed}: buffer.memory={buffer_memory} batch.size={batch_size} \
         batch.max.size={batch_max} linger.ms={linger}"
    );
    let props = ProducerConfig::from_properties(props).unwrap();
    let mut config = KafkaSinkConfig::new(props, topic.as_str());
    config.semantic = Semantic::ExactlyOnce;
    let prefix = unique_name(&format!("eos-sink-{seed}"));
    config.transactional_id_prefix = Some(prefix.clone());
    if let Some(control) = &setup.targets {
        control.set_targets(Targets {
            topics: vec![(topic.clone(), 1)],
            transactional_id: format!("{prefix}-0"),
            group: None,
        });
    }
    config.transaction_timeout = Duration::from_secs(120);
    config.recovery_timeout = Duration::from_secs(30);
    let ctx = RecordContext::default();

    let mut checkpoints: Vec<Stored> = Vec::new();
    let mut next_id = 1u64;
    let (mut sink, mut position) = restore(&config, None, faulted).await;
    let operations = 30 + rng.below(80) as usize;
    let mut trace = Vec::new();
    let pause = setup.pause(operations);
    for _ in 0..operations {
        if !pause.is_zero() {
            tokio::time::sleep(pause).await;
        }
        match rng.below(100) {
            0..=64 => {
                let size = rng.pick(&[1usize, 100, 1_000, 5_000]);
                let value = format!("{position:08}{}", "p".repeat(size));
                match sink.invoke(value, &ctx).await {
                    Ok(()) => position += 1,
                    Err(e) => {
                        // An earlier send of the transaction failed.
                        let in_process = rng.below(2) == 0;
                        trace.push(format!(
                            "invoke at {position} failed ({e}); {}",
                            how(in_process)
                        ));
                        (sink, position) =
                            recover(&config, sink, checkpoints.last(), in_process, faulted).await;
                    }
                }
            }
            65..=67 => {
                // A record that fails to send; the replay after the restore
                // delivers the source's record instead.
                trace.push(format!("fault at {position}"));
                let _ = sink.invoke("x".repeat(200_000), &ctx).await;
            }
            68..=84 => {
                let id = next_id;
                next_id += 1;
                match sink.snapshot_state(id).await {
                    Ok(state) => {
                        trace.push(format!("checkpoint {id} at {position}"));
                        checkpoints.push(Stored {
                            id,
                            position,
                            state,
                        });
                    }
                    Err(e) => {
                        // The checkpoint failed: the pipeline restores.
                        let in_process = rng.below(2) == 0;
                        trace.push(format!("checkpoint {id} failed ({e}); {}", how(in_process)));
                        (sink, position) =
                            recover(&config, sink, checkpoints.last(), in_process, faulted).await;
                    }
                }
            }
            85..=94 => {
                if let Some(c) = checkpoints.last() {
                    trace.push(format!("notify {}", c.id));
                    if let Err(e) = sink.notify_checkpoint_complete(c.id).await {
                        let in_process = rng.below(2) == 0;
                        trace.push(format!("notify failed ({e}); {}", how(in_process)));
                        (sink, position) =
                            recover(&config, sink, checkpoints.last(), in_process, faulted).await;
                    }
                }
            }
            95..=97 => {
                trace.push(format!("crash at {position}; restore"));
                drop(sink);
                (sink, position) = restore(&config, checkpoints.last(), faulted).await;
            }
            _ => {
                trace.push(format!("in-process failover at {position}"));
                (sink, position) = recover(&config, sink, checkpoints.last(), true, faulted).await;
            }
        }
    }
    // Finish on a healed cluster: a checkpoint that succeeds, notified.
    if let Some(quiesce) = &setup.quiesce {
        quiesce().await;
    }
    let last = loop {
        let id = next_id;
        next_id += 1;
        match sink.snapshot_state(id).await {
            Ok(state) => {
                checkpoints.push(Stored {
                    id,
                    position,
                    state,
                });
                break checkpoints.last().unwrap();
            }
            Err(_) => {
                let in_process = rng.below(2) == 0;
                (sink, position) =
                    recover(&config, sink, checkpoints.last(), in_process, faulted).await;
            }
        }
    };
    let (final_id, n) = (last.id, last.position);
    sink.notify_checkpoint_complete(final_id)
        .await
        .expect("final notify");
    sink.close().await.unwrap();

    let expected: Vec<u64> = (0..n).collect();
    // The commit returned once the coordinator logged it; its markers (and
    // those of the transactions the restores aborted) come after.
    let mut r = Reader::new(cluster.clone(), ReaderConfig::default());
    r.wait_until_stable(&topic, &[0], Duration::from_secs(60))
        .await
        .unwrap_or_else(|e| {
            panic!(
                "seed {seed}: a transaction stays open on {topic} after the sink closed: {e}\ntrace:\n{}",
                trace.join("\n")
            )
        });
    let got: Vec<u64> = r
        .read_to_end(&topic, &[0])
        .await
        .unwrap()
        .iter()
        .map(|r| {
            let v = r.value.as_deref().unwrap_or_default();
            std::str::from_utf8(&v[..8.min(v.len())])
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(u64::MAX)
        })
        .collect();
    if got != expected {
        let first_bad = got
            .iter()
            .zip(&expected)
            .position(|(a, b)| a != b)
            .unwrap_or(got.len().min(expected.len()));
        panic!(
            "seed {seed} (buffer.memory={buffer_memory} batch.size={batch_size} batch.max.size={batch_max} linger.ms={linger}): \
             read_committed holds {} records, expected 0..{n}; first difference at index {first_bad}: \
             {:?} (replay: EOS_SEED={seed} cargo test -p kafka-eos-tests --all-features --test integration sink_eos_checker::)\ntrace:\n{}",
            got.len(),
            got.get(first_bad),
            trace.join("\n")
        );
    }
    (operations, n)
}
