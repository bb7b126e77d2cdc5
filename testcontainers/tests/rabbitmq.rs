//! A private RabbitMQ broker: start, AMQP connection, stop, restart, cleanup.

use crate::common;

use kafka_testcontainers::RabbitMq;
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rabbitmq_starts_stops_restarts_and_cleans_up() {
    let t = Instant::now();
    let mq = RabbitMq::start().await.expect("start RabbitMQ");
    eprintln!("RabbitMQ ready in {:?}", t.elapsed());
    assert!(mq.amqp_url().starts_with("amqp://"));
    mq.check_connection().await.expect("AMQP connection");
    assert!(mq.node_name().starts_with("eos-"));
    // The VM's command line carries the private HOME inside the data dir.
    let node = mq.data_dir().display().to_string();
    assert!(!common::pids_with_cmdline(&node).is_empty());

    mq.stop().await.unwrap();
    assert!(mq.check_connection().await.is_err());
    common::wait_for("no VM after stop", Duration::from_secs(30), || {
        common::pids_with_cmdline(&node).is_empty()
    })
    .await;

    let t = Instant::now();
    mq.restart().await.expect("restart RabbitMQ");
    eprintln!("RabbitMQ restart ready in {:?}", t.elapsed());
    mq.check_connection().await.unwrap();

    drop(mq);
    common::wait_for("no VM after drop", Duration::from_secs(30), || {
        common::pids_with_cmdline(&node).is_empty()
    })
    .await;
}
