//! Modules shared by the integration tests of this package (the modules of
//! the `integration` test binary).

pub mod brokers;
pub mod group_consumer;
pub mod mock_nemesis;
pub mod nemesis;
pub mod registry;
pub mod shared;
pub mod system_ca;

/// With `RUST_LOG` set, sends the clients' tracing to stderr (a failing
/// test's client side: why a batch was refused, which schedule it was);
/// without it, nothing. Later calls change nothing.
pub fn trace_to_stderr_under_rust_log() {
    if std::env::var_os("RUST_LOG").is_some() {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_writer(std::io::stderr)
            .try_init();
    }
}
