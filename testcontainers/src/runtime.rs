//! A process-wide background tokio runtime for harness tasks (proxies) that
//! must outlive the per-test runtimes created by `#[tokio::test]`.

use std::sync::OnceLock;
use tokio::runtime::{Handle, Runtime};

static RUNTIME: OnceLock<Runtime> = OnceLock::new();

/// The background runtime's handle.
pub(crate) fn background() -> Handle {
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("kafka-harness-bg")
                .enable_all()
                .build()
                .expect("cannot build the harness background runtime")
        })
        .handle()
        .clone()
}
