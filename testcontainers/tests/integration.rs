//! The tests of the harness, one module per subject, compiled as one test binary:
//! the library crates' generic code is instantiated and linked once
//! instead of once per file. `.ci/run-tests.py` runs each module as a job
//! of its own (`<package>::<module>`).

mod cluster_slot;
mod common;
mod kafka_single_node;
mod kafka_three_nodes;
mod orphans;
mod proxy_faults;
mod rabbitmq;
mod sasl;
mod schema_registry;
mod shared_clusters;
mod tls;
