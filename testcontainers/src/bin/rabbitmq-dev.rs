//! Starts a private RabbitMQ broker for development and waits for Ctrl-C.
//!
//! ```text
//! cargo run -p kafka-testcontainers --bin rabbitmq-dev
//! ```
//!
//! Installs `rabbitmq-server` on first use (see `install-rabbitmq.sh`), then
//! prints `AMQP_URL=...` and `DATA_DIR=...` lines on stdout once the broker
//! accepts AMQP connections. `examples/ci-run.sh` uses it to run the bridge
//! example.

use kafka_testcontainers::RabbitMq;
use std::io::Write;

#[tokio::main]
async fn main() {
    if std::env::args().len() > 1 {
        eprintln!("usage: rabbitmq-dev   (no options; Ctrl-C stops the broker)");
        std::process::exit(2);
    }
    let started = std::time::Instant::now();
    let broker = match RabbitMq::start().await {
        Ok(b) => b,
        Err(e) => {
            eprintln!("rabbitmq-dev: cannot start RabbitMQ: {e}");
            std::process::exit(1);
        }
    };
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "AMQP_URL={}", broker.amqp_url());
    let _ = writeln!(out, "DATA_DIR={}", broker.data_dir().display());
    let _ = writeln!(out, "STARTED_IN_MS={}", started.elapsed().as_millis());
    let _ = out.flush();
    drop(out);
    eprintln!(
        "rabbitmq-dev: RabbitMQ ready at {} (Ctrl-C to stop)",
        broker.amqp_url()
    );
    let _ = tokio::signal::ctrl_c().await;
    eprintln!("rabbitmq-dev: stopping");
    let _ = broker.stop().await;
}
